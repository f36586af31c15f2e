//! Reading values without running code: the definitions of the file
//! (variables, functions) and the forms that build values from them.

use std::collections::{HashMap, HashSet};

use lexpr::Value as Sexp;

use crate::elisp_source::{Form, Kind, Prefix};
use crate::path::Path;

use super::*;

/// How many tool definitions and loop iterations one analysis follows.
pub(super) const BUDGET: usize = 20_000;

/// How much matching of problems and run-time parts one tool may take
/// (their numbers multiplied): past it, a note instead.
pub(super) const MAX_MATCHING: usize = 10_000_000;

/// How many problems of one tool are reported at most.
pub(super) const MAX_TOOL_FINDINGS: usize = 1_000;

/// How many parts (atoms, lists, vectors) the values one analysis copies
/// may have in all: each use of a variable copies its value, and values
/// built from copies grow exponentially (`(setq b (append a a))`...), so
/// the bound is for the whole analysis, not for one value.
pub const MAX_COPIED: usize = 1_000_000;

#[derive(Default)]
pub(super) struct Analyzer<'s> {
    pub(super) assigns: HashMap<&'s str, Vec<Assign<'s>>>,
    pub(super) defuns: HashMap<&'s str, &'s Form>,
    pub(super) values: HashMap<&'s str, Node>,
    pub(super) evaluating: Vec<&'s str>,
    pub(super) found: Vec<Found>,
    pub(super) found_keys: HashSet<(usize, Vec<usize>)>,
    pub(super) findings: Vec<Finding>,
    pub(super) read_evals: HashSet<usize>,
    pub(super) spent: usize,
    pub(super) over_budget: bool,
    /// Parts of the values copied so far ([`MAX_COPIED`]).
    pub(super) copied: usize,
    /// Functions of the file whose bodies are being walked for a mapping.
    pub(super) inlining: Vec<&'s str>,
    /// Above 0 while the forms of a tool definition are evaluated.
    pub(super) in_tool: usize,
}

/// Whether `forms` mention `gptel-make-tool` or `llm-make-tool`: only then
/// is a loop's body walked once per element.
pub(super) fn mentions_maker(forms: &[Form]) -> bool {
    pub(super) fn walk(f: &Form, depth: usize) -> bool {
        if depth > crate::elisp_source::MAX_DEPTH {
            return false;
        }
        match &f.kind {
            Kind::Symbol(s) => s == "gptel-make-tool" || s == "llm-make-tool",
            Kind::List(items, tail) => {
                items.iter().any(|x| walk(x, depth + 1)) || tail.as_ref().is_some_and(|t| walk(t, depth + 1))
            }
            Kind::Vector(items) => items.iter().any(|x| walk(x, depth + 1)),
            Kind::Prefixed(_, x) => walk(x, depth + 1),
            _ => false,
        }
    }
    forms.iter().any(|f| walk(f, 0))
}

pub(super) fn is_maker(f: &Form) -> Option<&'static str> {
    let name = match f.prefixed() {
        Some((Prefix::Quote | Prefix::Function, x)) => x.symbol()?,
        _ => return None,
    };
    match name {
        "gptel-make-tool" => Some("gptel-make-tool"),
        "llm-make-tool" => Some("llm-make-tool"),
        _ => None,
    }
}

impl<'s> Analyzer<'s> {
    pub(super) fn finding(
        &mut self,
        level: Level,
        at: usize,
        path: &Path,
        message: impl Into<String>,
        tool: Option<&str>,
    ) {
        self.findings.push(Finding {
            level,
            at,
            path: path.clone(),
            message: message.into(),
            tool: tool.map(String::from),
        });
    }

    pub(super) fn spend(&mut self) -> bool {
        self.spent += 1;
        if self.spent > BUDGET {
            if !self.over_budget {
                self.over_budget = true;
                self.finding(
                    Level::Note,
                    0,
                    &Path::root(),
                    format!("not checked: the file makes more than {BUDGET} tool definitions or loop steps; the rest was skipped"),
                    None,
                );
            }
            return false;
        }
        true
    }

    /// A copy of `v`, a variable's value used at `at`, counted against
    /// [`MAX_COPIED`]: past it, a note that the rest is not checked, the
    /// walk stops, and what is used is left unknown.
    pub(super) fn copy(&mut self, v: &Node, at: usize) -> Node {
        let left = MAX_COPIED.saturating_sub(self.copied);
        let n = parts(v, left);
        if n > left {
            if self.copied <= MAX_COPIED {
                self.copied = MAX_COPIED + 1;
                self.over_budget = true;
                self.finding(
                    Level::Note,
                    at,
                    &Path::root(),
                    format!(
                        "not checked: too large: the values this file builds from its variables have more than \
                         {MAX_COPIED} parts in all; the rest was skipped"
                    ),
                    None,
                );
            }
            return Node { at, v: V::Unknown(None) };
        }
        self.copied += n;
        v.clone()
    }

    // ------------------------------------------------------- definitions

    /// Record how the file's variables get values and which functions it
    /// defines, anywhere outside quoted data.
    pub(super) fn collect(&mut self, f: &'s Form, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH {
            return;
        }
        let Some(items) = f.list() else {
            if let Kind::Prefixed(Prefix::Function | Prefix::Backquote | Prefix::Unquote | Prefix::Splice, x) = &f.kind
            {
                self.collect(x, depth + 1);
            }
            return;
        };
        if let Some((head, args)) = f.call() {
            match head {
                "quote" => return,
                "defvar" | "defcustom" | "defvar-local" if args.len() >= 2 => {
                    if let Some(name) = args[0].symbol() {
                        self.assigns.entry(name).or_default().push(Assign::Default(&args[1]));
                    }
                }
                "defconst" if args.len() >= 2 => {
                    if let Some(name) = args[0].symbol() {
                        self.assigns.entry(name).or_default().push(Assign::Set(&args[1]));
                    }
                }
                "setq" | "setq-default" | "setopt" | "setf" => {
                    for pair in args.chunks(2) {
                        if let (Some(name), Some(v)) = (pair[0].symbol(), pair.get(1)) {
                            self.assigns.entry(name).or_default().push(Assign::Set(v));
                        }
                    }
                }
                "push" | "cl-pushnew" if args.len() >= 2 => {
                    if let Some(name) = args[1].symbol() {
                        self.assigns.entry(name).or_default().push(Assign::Push(&args[0]));
                    }
                }
                "add-to-list" if args.len() >= 2 => {
                    if let Some((Prefix::Quote, var)) = args[0].prefixed() {
                        if let Some(name) = var.symbol() {
                            let append = args.get(2).is_some_and(|a| !a.is_nil());
                            let a = if append { Assign::Append(&args[1]) } else { Assign::Push(&args[1]) };
                            self.assigns.entry(name).or_default().push(a);
                        }
                    }
                }
                "defun" | "defsubst" | "cl-defun" | "cl-defsubst" | "define-inline" if args.len() >= 2 => {
                    if let Some(name) = args[0].symbol() {
                        self.defuns.insert(name, f);
                    }
                }
                _ => {}
            }
        }
        for item in items {
            self.collect(item, depth + 1);
        }
    }

    /// The value of the file's variable `name`, if the file gives it one
    /// that can be read.
    /// `depth`: how deep the use is, for the value's forms to be
    /// evaluated below it (a chain of variables is nested as deep as its
    /// length).
    pub(super) fn global(&mut self, name: &'s str, at: usize, depth: usize) -> Node {
        if let Some(v) = self.values.remove(name) {
            let copy = self.copy(&v, at);
            self.values.insert(name, v);
            return copy;
        }
        let Some(assigns) = self.assigns.get(name).cloned() else {
            return Node::unknown(at, format!("the variable `{name}'"));
        };
        if self.evaluating.contains(&name) {
            return Node::unknown(at, format!("the variable `{name}' (its value refers to itself)"));
        }
        self.evaluating.push(name);
        let empty: Scope = Vec::new();
        let mut value: Option<Node> = None;
        for a in assigns {
            match a {
                Assign::Default(f) => {
                    if value.is_none() {
                        value = Some(self.eval(f, &empty, depth + 1));
                    }
                }
                Assign::Set(f) => value = Some(self.eval(f, &empty, depth + 1)),
                Assign::Push(f) | Assign::Append(f) => {
                    let item = self.eval(f, &empty, depth + 1);
                    let cur = value.take().unwrap_or(Node::atom(f.start, Sexp::Null));
                    value = Some(match cur.v {
                        V::List { mut items, open } => {
                            if matches!(a, Assign::Push(_)) {
                                items.insert(0, item);
                            } else {
                                items.push(item);
                            }
                            Node { at: cur.at, v: V::List { items, open } }
                        }
                        V::Atom(Sexp::Null) => Node { at: cur.at, v: V::List { items: vec![item], open: false } },
                        _ => Node::unknown(f.start, format!("the variable `{name}'")),
                    });
                }
            }
        }
        self.evaluating.pop();
        let value = value.unwrap_or_else(|| Node::unknown(at, format!("the variable `{name}'")));
        let copy = self.copy(&value, at);
        self.values.insert(name, value);
        copy
    }

    // --------------------------------------------------------- evaluation

    pub(super) fn read_eval(&mut self, f: &Form) -> Node {
        if self.read_evals.insert(f.start) {
            self.finding(
                Level::Warning,
                f.start,
                &Path::root(),
                "`#.' evaluates the form after it when the file is read; toolspec never evaluates it, \
                 so what it gives is not checked: write the value itself",
                None,
            );
        }
        Node { at: f.start, v: V::Unknown(None) }
    }

    /// Quoted data.
    pub(super) fn data(&mut self, f: &Form, depth: usize) -> Node {
        let at = f.start;
        if depth > crate::elisp_source::MAX_DEPTH {
            return Node::unknown(at, "data nested too deeply");
        }
        match &f.kind {
            Kind::List(items, tail) => {
                let items: Vec<Node> = items.iter().map(|x| self.data(x, depth + 1)).collect();
                match tail {
                    None => Node { at, v: V::List { items, open: false } },
                    Some(t) => Node { at, v: V::Dotted(items, Box::new(self.data(t, depth + 1))) },
                }
            }
            Kind::Vector(items) => Node { at, v: V::Vector(items.iter().map(|x| self.data(x, depth + 1)).collect()) },
            Kind::Prefixed(Prefix::ReadEval, _) => self.read_eval(f),
            Kind::Prefixed(p, x) => Node {
                at,
                v: V::List {
                    items: vec![Node::atom(at, Sexp::symbol(p.symbol())), self.data(x, depth + 1)],
                    open: false,
                },
            },
            Kind::Opaque(what) => Node::unknown(at, format!("a {what} object")),
            _ => Node::atom(at, f.to_sexp()),
        }
    }

    pub(super) fn func(&mut self, f: &Form) -> Node {
        match &f.kind {
            Kind::Symbol(s) => Node { at: f.start, v: V::Func(Func::Named(s.clone())) },
            _ => match f.call() {
                Some(("lambda", [args, ..])) => {
                    Node { at: f.start, v: V::Func(Func::Lambda(form_arity(args), f.start, f.end)) }
                }
                _ => Node::unknown(f.start, format!("the function {}", short(f))),
            },
        }
    }

    pub(super) fn eval(&mut self, f: &'s Form, scope: &Scope, depth: usize) -> Node {
        let at = f.start;
        if depth > crate::elisp_source::MAX_DEPTH {
            return Node::unknown(at, "a form nested too deeply");
        }
        match &f.kind {
            Kind::Symbol(s) if s == "nil" => Node::atom(at, Sexp::Null),
            Kind::Symbol(s) if s == "t" => Node::atom(at, Sexp::symbol("t")),
            Kind::Symbol(s) => {
                let v = match scope.iter().rev().find(|(n, _)| n == s) {
                    Some((_, v)) => self.copy(v, at),
                    None => self.global(s, at, depth),
                };
                // What is known only at run time is shown where it is used.
                match v.v {
                    V::Unknown(_) => Node { at, ..v },
                    _ => v,
                }
            }
            Kind::Vector(_) => self.data(f, depth),
            Kind::Prefixed(Prefix::Quote, x) => self.data(x, depth + 1),
            Kind::Prefixed(Prefix::Function, x) => self.func(x),
            Kind::Prefixed(Prefix::Backquote, x) => self.backquote(x, scope, depth + 1),
            Kind::Prefixed(Prefix::ReadEval, _) => self.read_eval(f),
            Kind::Prefixed(p, _) => Node::unknown(at, format!("`{}' outside a backquote", p.text())),
            Kind::Opaque(what) => Node::unknown(at, format!("a {what} object")),
            Kind::List(items, None) if items.is_empty() => Node::atom(at, Sexp::Null),
            Kind::List(items, None) => self.eval_call(f, items, scope, depth),
            Kind::List(_, Some(_)) => Node::unknown(at, "a dotted list evaluated as code"),
            _ => Node::atom(at, f.to_sexp()),
        }
    }

    pub(super) fn eval_call(&mut self, f: &'s Form, items: &'s [Form], scope: &Scope, depth: usize) -> Node {
        let at = f.start;
        let args = &items[1..];
        if let Some(k) = items[0].keyword() {
            if self.in_tool == 0 {
                // Outside a tool definition this may be a macro's business.
                return Node::unknown(at, format!("the value of (:{k} ...)"));
            }
            self.finding(
                Level::Error,
                at,
                &Path::root(),
                format!(
                    "(:{k} ...) is evaluated as a function call and fails: quote the plist, '(:{k} ...), or build it with (list :{k} ...)"
                ),
                None,
            );
            return Node { at, v: V::Unknown(None) };
        }
        let Some(head) = items[0].symbol() else {
            return Node::unknown(at, format!("the value of {}", short(f)));
        };
        match (head, args) {
            ("quote", [x]) => self.data(x, depth + 1),
            ("function", [x]) => self.func(x),
            ("lambda", [arglist, ..]) => Node { at, v: V::Func(Func::Lambda(form_arity(arglist), f.start, f.end)) },
            ("list", _) => {
                let items = args.iter().map(|a| self.eval(a, scope, depth + 1)).collect();
                Node { at, v: V::List { items, open: false } }
            }
            ("vector", _) => Node { at, v: V::Vector(args.iter().map(|a| self.eval(a, scope, depth + 1)).collect()) },
            ("cons", [a, b]) => {
                let head = self.eval(a, scope, depth + 1);
                match self.eval(b, scope, depth + 1) {
                    Node { v: V::List { mut items, open }, .. } => {
                        items.insert(0, head);
                        Node { at, v: V::List { items, open } }
                    }
                    Node { v: V::Atom(Sexp::Null), .. } => Node { at, v: V::List { items: vec![head], open: false } },
                    _ => Node::unknown(at, format!("the value of {}", short(f))),
                }
            }
            ("append", _) => {
                let mut out = Vec::new();
                let mut open = false;
                for a in args {
                    match self.eval(a, scope, depth + 1) {
                        Node { v: V::List { items, open: o }, .. } => {
                            out.extend(items);
                            open |= o;
                        }
                        Node { v: V::Atom(Sexp::Null), .. } => {}
                        Node { v: V::Vector(items), .. } => out.extend(items),
                        _ => open = true,
                    }
                }
                if open && out.is_empty() {
                    return Node::unknown(at, format!("the value of {}", short(f)));
                }
                Node { at, v: V::List { items: out, open } }
            }
            ("purecopy" | "identity", [x]) => self.eval(x, scope, depth + 1),
            _ => Node::unknown(at, format!("the value of {}", short(f))),
        }
    }

    /// A backquoted form: data, except for `,X` and `,@X`.
    pub(super) fn backquote(&mut self, f: &'s Form, scope: &Scope, depth: usize) -> Node {
        let at = f.start;
        if depth > crate::elisp_source::MAX_DEPTH {
            return Node::unknown(at, "data nested too deeply");
        }
        match &f.kind {
            Kind::Prefixed(Prefix::Unquote, x) => self.eval(x, scope, depth + 1),
            Kind::Prefixed(Prefix::Splice, x) => {
                // Outside a list: as Emacs does, the value itself.
                self.eval(x, scope, depth + 1)
            }
            Kind::Prefixed(Prefix::Backquote, _) => self.data(f, depth),
            Kind::Prefixed(Prefix::ReadEval, _) => self.read_eval(f),
            Kind::Prefixed(p, x) => Node {
                at,
                v: V::List {
                    items: vec![Node::atom(at, Sexp::symbol(p.symbol())), self.backquote(x, scope, depth + 1)],
                    open: false,
                },
            },
            Kind::List(items, tail) => {
                let (out, open) = self.backquote_items(items, scope, depth);
                match tail {
                    Some(t) => Node { at, v: V::Dotted(out, Box::new(self.backquote(t, scope, depth + 1))) },
                    None => Node { at, v: V::List { items: out, open } },
                }
            }
            Kind::Vector(items) => {
                let (out, open) = self.backquote_items(items, scope, depth);
                if open {
                    return Node::unknown(at, "a vector with a part spliced in at run time");
                }
                Node { at, v: V::Vector(out) }
            }
            _ => self.data(f, depth),
        }
    }

    /// The elements of a backquoted list or vector, `,@` spliced in;
    /// true when a spliced part is known only at run time.
    pub(super) fn backquote_items(&mut self, items: &'s [Form], scope: &Scope, depth: usize) -> (Vec<Node>, bool) {
        let mut out = Vec::new();
        let mut open = false;
        for x in items {
            if let Kind::Prefixed(Prefix::Splice, y) = &x.kind {
                match self.eval(y, scope, depth + 1) {
                    Node { v: V::List { items, open: o }, .. } => {
                        out.extend(items);
                        open |= o;
                    }
                    Node { v: V::Atom(Sexp::Null), .. } => {}
                    _ => open = true,
                }
            } else {
                out.push(self.backquote(x, scope, depth + 1));
            }
        }
        (out, open)
    }
}
