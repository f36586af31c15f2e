//! A plist as the validator sees it, borrowed from where it came from.
//!
//! A tool reaches the validator as the lexpr value of a plist Emacs
//! printed, or as a tool of the model that readers made.  Both are seen
//! as a [`Node`]: a tree of the plist's values whose strings are borrowed,
//! so that checking a tool the readers made costs no copy of its strings
//! (building a lexpr value of it made up half of checking a catalog).
//! A model's tool becomes a [`Node`] through [`crate::plist::emit_tool`]
//! into a [`Tree`], as it becomes Lisp objects or elisp text.

use lexpr::{Number as SexpNumber, Value as Sexp};
use serde_json::Number;

use crate::sink::{print_keyword, print_string, print_symbol, Sink};

/// One value of a plist.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// nil, the empty list.
    Nil,
    Str(&'a str),
    Sym(&'a str),
    /// A keyword, without its colon.
    Kw(&'a str),
    Num(SexpNumber),
    Vector(Vec<Node<'a>>),
    /// A proper list of at least one item.
    List(Vec<Node<'a>>),
    /// A lexpr value of no other kind: a dotted list, a character, ...
    Other(&'a Sexp),
}

impl<'a> Node<'a> {
    /// `v` as a node.
    pub fn of_sexp(v: &'a Sexp) -> Node<'a> {
        match v {
            Sexp::Null | Sexp::Nil => Node::Nil,
            Sexp::String(s) => Node::Str(s),
            Sexp::Symbol(s) => Node::Sym(s),
            Sexp::Keyword(k) => Node::Kw(k),
            Sexp::Number(n) => Node::Num(n.clone()),
            Sexp::Vector(items) => Node::Vector(items.iter().map(Node::of_sexp).collect()),
            Sexp::Cons(c) => {
                let (items, tail) = c.to_ref_vec();
                if matches!(tail, Sexp::Null | Sexp::Nil) {
                    Node::List(items.into_iter().map(Node::of_sexp).collect())
                } else {
                    Node::Other(v)
                }
            }
            _ => Node::Other(v),
        }
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Node::Nil)
    }

    /// The items of a proper list (nil is the empty list).
    pub fn list_items(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Nil => Some(&[]),
            Node::List(items) => Some(items),
            _ => None,
        }
    }

    /// The items of a vector.
    pub fn vector_items(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Vector(items) => Some(items),
            _ => None,
        }
    }

    /// The pairs of a plist with keyword keys, or None if this is not one.
    pub fn plist_pairs(&self) -> Option<Vec<(&'a str, &Node<'a>)>> {
        let items = self.list_items()?;
        if items.len() % 2 != 0 {
            return None;
        }
        items
            .chunks(2)
            .map(|kv| match kv[0] {
                Node::Kw(k) => Some((k, &kv[1])),
                _ => None,
            })
            .collect()
    }

    /// The value `(quote X)` wraps, if this is one.
    pub fn quoted(&self) -> Option<&Node<'a>> {
        match self {
            Node::List(items) if items.len() == 2 && items[0] == Node::Sym("quote") => Some(&items[1]),
            _ => None,
        }
    }

    pub fn as_symbol(&self) -> Option<&'a str> {
        match self {
            Node::Sym(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_keyword(&self) -> Option<&'a str> {
        match self {
            Node::Kw(k) => Some(k),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Node::Num(n) => n.as_u64(),
            _ => None,
        }
    }
}

/// Written as elisp prints it, for messages.
impl std::fmt::Display for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seq = |f: &mut std::fmt::Formatter<'_>, open: &str, items: &[Node<'_>], close: &str| {
            f.write_str(open)?;
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str(close)
        };
        match self {
            Node::Nil => f.write_str("nil"),
            Node::Str(_) | Node::Sym(_) | Node::Kw(_) => {
                let mut out = String::new();
                match self {
                    Node::Str(s) => print_string(s, &mut out),
                    Node::Sym(s) => print_symbol(s, &mut out),
                    Node::Kw(k) => print_keyword(k, &mut out),
                    _ => unreachable!("matched above"),
                }
                f.write_str(&out)
            }
            Node::Num(n) => write!(f, "{n}"),
            Node::Vector(items) => seq(f, "[", items, "]"),
            Node::List(items) => seq(f, "(", items, ")"),
            Node::Other(v) => write!(f, "{v}"),
        }
    }
}

/// A number of the model as a plist holds it.
pub fn number(n: &Number) -> SexpNumber {
    if let Some(i) = n.as_i64() {
        SexpNumber::from(i)
    } else if let Some(u) = n.as_u64() {
        SexpNumber::from(u)
    } else {
        SexpNumber::from(n.as_f64().unwrap_or(0.0))
    }
}

/// A [`Sink`] building the [`Node`] of what is emitted, its strings
/// borrowed from what is emitted.
#[derive(Default)]
pub struct Tree<'a> {
    /// The items of all open sequences, one after the other.
    items: Vec<Node<'a>>,
    /// For each open sequence: whether it is a vector, and where its
    /// items begin in `items`.
    open: Vec<(bool, usize)>,
}

impl<'a> Tree<'a> {
    /// A tree with room for a plist of `items` values (nested ones
    /// included) before it grows.
    pub fn with_capacity(items: usize) -> Self {
        Tree { items: Vec::with_capacity(items), open: Vec::with_capacity(8) }
    }

    /// The values emitted at the top level.
    pub fn finish(self) -> Vec<Node<'a>> {
        self.items
    }
}

impl<'a> Sink<'a> for Tree<'a> {
    fn open(&mut self, vector: bool) {
        self.open.push((vector, self.items.len()));
    }
    fn close(&mut self) {
        if let Some((vector, start)) = self.open.pop() {
            let items: Vec<Node<'a>> = self.items.drain(start..).collect();
            self.items.push(if vector {
                Node::Vector(items)
            } else if items.is_empty() {
                Node::Nil
            } else {
                Node::List(items)
            });
        }
    }
    fn string(&mut self, s: &'a str) {
        self.items.push(Node::Str(s));
    }
    fn keyword(&mut self, name: &'a str) {
        self.items.push(Node::Kw(name));
    }
    fn symbol(&mut self, name: &'a str) {
        self.items.push(Node::Sym(name));
    }
    fn number(&mut self, n: &'a Number) {
        self.items.push(Node::Num(number(n)));
    }
    fn nil(&mut self) {
        self.items.push(Node::Nil);
    }
    fn t(&mut self) {
        self.items.push(Node::Sym("t"));
    }
    fn clear_open(&mut self) {
        if let Some((_, start)) = self.open.last() {
            self.items.truncate(*start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plist::parse_sexp;

    #[test]
    fn a_node_is_what_the_plist_holds() {
        let v = parse_sexp("(:name \"x\" :type string :enum [1 2.5] :q 'a :d (a . b) :n nil)").unwrap();
        let n = Node::of_sexp(&v);
        let pairs = n.plist_pairs().unwrap();
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["name", "type", "enum", "q", "d", "n"]);
        assert_eq!(pairs[0].1, &Node::Str("x"));
        assert_eq!(pairs[1].1, &Node::Sym("string"));
        assert_eq!(pairs[2].1.vector_items().unwrap().len(), 2);
        assert_eq!(pairs[3].1.quoted(), Some(&Node::Sym("a")));
        assert!(matches!(pairs[4].1, Node::Other(_)));
        assert!(pairs[5].1.is_nil());
        assert_eq!(n.to_string(), "(:name \"x\" :type string :enum [1 2.5] :q (quote a) :d (a . b) :n nil)");
    }
}
