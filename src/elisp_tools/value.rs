//! The values the analysis knows without running anything: data, functions,
//! and what is known only at run time.

use lexpr::Value as Sexp;

use crate::elisp_source::Form;

/// A function given as `:function`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Func {
    Named(String),
    /// A lambda, with its arity when its argument list is plain, and
    /// where its form starts and ends.
    Lambda(Option<Arity>, usize, usize),
}

/// Least and most arguments (None: any number).
pub(super) type Arity = (usize, Option<usize>);

/// A value known without running anything, and where it comes from.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) at: usize,
    pub(super) v: V,
}

#[derive(Debug, Clone)]
pub(super) enum V {
    /// A string, number, symbol, keyword or nil.
    Atom(Sexp),
    /// A list; `open` when a part known only at run time was spliced in.
    List {
        items: Vec<Node>,
        open: bool,
    },
    Dotted(Vec<Node>, Box<Node>),
    Vector(Vec<Node>),
    Func(Func),
    /// Known only at run time: what it is, e.g. "the variable `x'"; None
    /// when a problem was already reported for it.
    Unknown(Option<String>),
}

impl Node {
    pub(super) fn atom(at: usize, s: Sexp) -> Node {
        Node { at, v: V::Atom(s) }
    }
    pub(super) fn unknown(at: usize, what: impl Into<String>) -> Node {
        Node { at, v: V::Unknown(Some(what.into())) }
    }
    pub(super) fn keyword(&self) -> Option<&str> {
        match &self.v {
            V::Atom(s) => s.as_keyword(),
            _ => None,
        }
    }
    pub(super) fn string(&self) -> Option<&str> {
        match &self.v {
            V::Atom(s) => s.as_str(),
            _ => None,
        }
    }
    /// The items when this is a plist: keywords at even places.
    pub(super) fn plist_items(&self) -> Option<&[Node]> {
        match &self.v {
            V::List { items, .. } if items.len() % 2 == 0 && items.iter().step_by(2).all(|k| k.keyword().is_some()) => {
                Some(items)
            }
            _ => None,
        }
    }
}

/// How a variable of the file gets its value, in the order of the text.
#[derive(Debug, Clone, Copy)]
pub(super) enum Assign<'s> {
    /// `defvar`, `defcustom`: only when the variable has no value yet.
    Default(&'s Form),
    /// `setq`, `defconst`, `setopt`...
    Set(&'s Form),
    /// `push`, `cl-pushnew`, `add-to-list`.
    Push(&'s Form),
    /// `add-to-list` with APPEND.
    Append(&'s Form),
}

pub(super) type Scope = Vec<(String, Node)>;

/// A tool definition found by the walk.
pub(super) struct Found {
    pub(super) at: usize,
    pub(super) maker: &'static str,
    pub(super) node: Node,
    /// The whole spec is known only at run time: why.
    pub(super) unknown: Option<Option<String>>,
}

/// The arity of a plain argument list; None with `&key` and the like.
pub(super) fn arity<'a>(params: impl IntoIterator<Item = Option<&'a str>>) -> Option<Arity> {
    let mut min = 0;
    let mut max = 0;
    let mut optional = false;
    for p in params {
        match p? {
            "&optional" => optional = true,
            "&rest" | "&body" => return Some((min, None)),
            s if s.starts_with('&') => return None,
            _ => {
                max += 1;
                if !optional {
                    min += 1;
                }
            }
        }
    }
    Some((min, Some(max)))
}

pub(super) fn form_arity(arglist: &Form) -> Option<Arity> {
    arity(arglist.list()?.iter().map(Form::symbol))
}

/// The parameters a lambda list binds.
pub(super) fn params(arglist: &Form) -> Vec<&str> {
    arglist.list().unwrap_or(&[]).iter().filter_map(Form::symbol).filter(|s| !s.starts_with('&')).collect()
}

/// How many parts (atoms, lists, vectors, functions) `n` has, counted
/// up to `limit`: more than `limit` when it has more.
pub(super) fn parts(n: &Node, limit: usize) -> usize {
    let mut count = 0;
    let mut todo = vec![n];
    while let Some(n) = todo.pop() {
        count += 1;
        if count > limit {
            break;
        }
        match &n.v {
            V::List { items, .. } | V::Vector(items) => todo.extend(items),
            V::Dotted(items, tail) => {
                todo.extend(items);
                todo.push(tail);
            }
            V::Atom(_) | V::Func(_) | V::Unknown(_) => {}
        }
    }
    count
}

pub(super) fn short(f: &Form) -> String {
    match f.call() {
        Some((head, _)) => format!("({head} ...)"),
        None => f.to_sexp().to_string(),
    }
}
