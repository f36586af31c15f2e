//! Tool definitions in Emacs Lisp source: `(gptel-make-tool ...)`,
//! `(llm-make-tool ...)` and the shapes people build on them, read
//! without evaluating anything and checked by [`crate::validate`], each
//! problem at the line and column of the form it is about.
//!
//! Only literal data is read: strings, numbers, keywords, quoted and
//! backquoted forms, vectors, and lists built with `list`, `vector`,
//! `cons` and `append`.  Variables defined in the file (`defvar`,
//! `defconst`, `defcustom`, `setq`, `push`, `add-to-list`) and the
//! variables of `let`, `dolist`, `mapcar`/`mapc` lambdas and `cl-loop ...
//! in` are followed, so that
//!
//! ```elisp
//! (defvar my-tool-specs (list '(:name "a" ...) '(:name "b" ...)))
//! (dolist (spec my-tool-specs) (apply #'gptel-make-tool spec))
//! ```
//!
//! checks both specs.  Anything else (a call to another function, a
//! function's argument, a variable set elsewhere) is known only when the
//! code runs: it is reported as "not checked" instead of being guessed.
//! `#.` read syntax, which Emacs evaluates while reading, is reported and
//! never evaluated.

use std::collections::{HashMap, HashSet};

use lexpr::Value as Sexp;

use crate::elisp_source::{Form, Kind, Prefix};
use crate::model::{Problem, Severity, Tool};
use crate::plist;
use crate::validate;

/// How serious a finding is: notes say what could not be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

impl From<Severity> for Level {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
        }
    }
}

/// A problem at byte offset `at` of the source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    pub level: Level,
    pub at: usize,
    /// Path in the tool plist, as the validator names it (`args[1].type`);
    /// empty for the tool itself or for what belongs to no tool.
    pub path: String,
    pub message: String,
    /// Name of the tool, when it is known.
    pub tool: Option<String>,
}

/// A tool definition found in the source.
#[derive(Debug, Clone)]
pub struct SourceTool {
    /// Byte offset of the call that makes it.
    pub at: usize,
    /// `gptel-make-tool` or `llm-make-tool`.
    pub maker: &'static str,
    pub name: Option<String>,
    /// The tool, or why it cannot be read without running the code.
    pub tool: std::result::Result<Tool, String>,
    /// Its `:function`, when it is a named function or a lambda written
    /// in the source.
    pub function: Option<FunctionSource>,
    /// The keys for Emacs the tool model leaves out (`:async`,
    /// `:confirm`, `:include`, `:category`), when their values are literal.
    pub emacs: Vec<(String, Sexp)>,
}

/// A tool's function as the source gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionSource {
    Named(String),
    /// A lambda: byte offsets of its form.
    Lambda(usize, usize),
}

/// What [`analyze`] found.
#[derive(Debug, Default)]
pub struct Analysis {
    pub findings: Vec<Finding>,
    pub tools: Vec<SourceTool>,
}

/// Find, read and check the tool definitions among `forms`.
pub fn analyze(forms: &[Form]) -> Analysis {
    let mut a = Analyzer::default();
    for f in forms {
        a.collect(f, 0);
    }
    for f in forms {
        let mut scope = Vec::new();
        a.walk(f, &mut scope, 0);
    }
    let mut out = Analysis { findings: Vec::new(), tools: Vec::new() };
    let found = std::mem::take(&mut a.found);
    for t in &found {
        a.check(t, &mut out);
    }
    out.findings.extend(a.findings);
    let mut seen = HashSet::new();
    out.findings.retain(|f| seen.insert((f.at, f.level, f.path.clone(), f.message.clone())));
    out.findings.sort_by_key(|x| (x.at, x.level));
    out
}

// ------------------------------------------------------------------ values

/// A function given as `:function`.
#[derive(Debug, Clone, PartialEq)]
enum Func {
    Named(String),
    /// A lambda, with its arity when its argument list is plain, and
    /// where its form starts and ends.
    Lambda(Option<Arity>, usize, usize),
}

/// Least and most arguments (None: any number).
type Arity = (usize, Option<usize>);

/// A value known without running anything, and where it comes from.
#[derive(Debug, Clone)]
struct Node {
    at: usize,
    v: V,
}

#[derive(Debug, Clone)]
enum V {
    /// A string, number, symbol, keyword or nil.
    Atom(Sexp),
    /// A list; `open` when a part known only at run time was spliced in.
    List { items: Vec<Node>, open: bool },
    Dotted(Vec<Node>, Box<Node>),
    Vector(Vec<Node>),
    Func(Func),
    /// Known only at run time: what it is, e.g. "the variable `x'"; None
    /// when a problem was already reported for it.
    Unknown(Option<String>),
}

impl Node {
    fn atom(at: usize, s: Sexp) -> Node {
        Node { at, v: V::Atom(s) }
    }
    fn unknown(at: usize, what: impl Into<String>) -> Node {
        Node { at, v: V::Unknown(Some(what.into())) }
    }
    fn keyword(&self) -> Option<&str> {
        match &self.v {
            V::Atom(s) => s.as_keyword(),
            _ => None,
        }
    }
    fn string(&self) -> Option<&str> {
        match &self.v {
            V::Atom(s) => s.as_str(),
            _ => None,
        }
    }
    /// The items when this is a plist: keywords at even places.
    fn plist_items(&self) -> Option<&[Node]> {
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
enum Assign<'s> {
    /// `defvar`, `defcustom`: only when the variable has no value yet.
    Default(&'s Form),
    /// `setq`, `defconst`, `setopt`...
    Set(&'s Form),
    /// `push`, `cl-pushnew`, `add-to-list`.
    Push(&'s Form),
    /// `add-to-list` with APPEND.
    Append(&'s Form),
}

type Scope = Vec<(String, Node)>;

/// A tool definition found by the walk.
struct Found {
    at: usize,
    maker: &'static str,
    node: Node,
    /// The whole spec is known only at run time: why.
    unknown: Option<Option<String>>,
}

/// How many tool definitions and loop iterations one analysis follows.
const BUDGET: usize = 20_000;

/// How much matching of problems and run-time parts one tool may take
/// (their numbers multiplied): past it, a note instead.
const MAX_MATCHING: usize = 10_000_000;

/// How many problems of one tool are reported at most.
const MAX_TOOL_FINDINGS: usize = 1_000;

/// How many parts (atoms, lists, vectors) the values one analysis copies
/// may have in all: each use of a variable copies its value, and values
/// built from copies grow exponentially (`(setq b (append a a))`...), so
/// the bound is for the whole analysis, not for one value.
pub const MAX_COPIED: usize = 1_000_000;

#[derive(Default)]
struct Analyzer<'s> {
    assigns: HashMap<&'s str, Vec<Assign<'s>>>,
    defuns: HashMap<&'s str, &'s Form>,
    values: HashMap<&'s str, Node>,
    evaluating: Vec<&'s str>,
    found: Vec<Found>,
    found_keys: HashSet<(usize, Vec<usize>)>,
    findings: Vec<Finding>,
    read_evals: HashSet<usize>,
    spent: usize,
    over_budget: bool,
    /// Parts of the values copied so far ([`MAX_COPIED`]).
    copied: usize,
    /// Functions of the file whose bodies are being walked for a mapping.
    inlining: Vec<&'s str>,
    /// Above 0 while the forms of a tool definition are evaluated.
    in_tool: usize,
}

/// Whether `forms` mention `gptel-make-tool` or `llm-make-tool`: only then
/// is a loop's body walked once per element.
fn mentions_maker(forms: &[Form]) -> bool {
    fn walk(f: &Form, depth: usize) -> bool {
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

fn is_maker(f: &Form) -> Option<&'static str> {
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

/// The arity of a plain argument list; None with `&key` and the like.
fn arity<'a>(params: impl IntoIterator<Item = Option<&'a str>>) -> Option<Arity> {
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

fn form_arity(arglist: &Form) -> Option<Arity> {
    arity(arglist.list()?.iter().map(Form::symbol))
}

/// The parameters a lambda list binds.
fn params(arglist: &Form) -> Vec<&str> {
    arglist.list().unwrap_or(&[]).iter().filter_map(Form::symbol).filter(|s| !s.starts_with('&')).collect()
}

/// How many parts (atoms, lists, vectors, functions) `n` has, counted
/// up to `limit`: more than `limit` when it has more.
fn parts(n: &Node, limit: usize) -> usize {
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

fn short(f: &Form) -> String {
    match f.call() {
        Some((head, _)) => format!("({head} ...)"),
        None => f.to_sexp().to_string(),
    }
}

impl<'s> Analyzer<'s> {
    fn finding(&mut self, level: Level, at: usize, path: &str, message: impl Into<String>, tool: Option<&str>) {
        self.findings.push(Finding {
            level,
            at,
            path: path.to_string(),
            message: message.into(),
            tool: tool.map(String::from),
        });
    }

    fn spend(&mut self) -> bool {
        self.spent += 1;
        if self.spent > BUDGET {
            if !self.over_budget {
                self.over_budget = true;
                self.finding(
                    Level::Note,
                    0,
                    "",
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
    fn copy(&mut self, v: &Node, at: usize) -> Node {
        let left = MAX_COPIED.saturating_sub(self.copied);
        let n = parts(v, left);
        if n > left {
            if self.copied <= MAX_COPIED {
                self.copied = MAX_COPIED + 1;
                self.over_budget = true;
                self.finding(
                    Level::Note,
                    at,
                    "",
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
    fn collect(&mut self, f: &'s Form, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH {
            return;
        }
        let Some(items) = f.list() else {
            if let Kind::Prefixed(Prefix::Function | Prefix::Backquote | Prefix::Unquote | Prefix::Splice, x) = &f.kind {
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
    fn global(&mut self, name: &'s str, at: usize, depth: usize) -> Node {
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

    fn read_eval(&mut self, f: &Form) -> Node {
        if self.read_evals.insert(f.start) {
            self.finding(
                Level::Warning,
                f.start,
                "",
                "`#.' evaluates the form after it when the file is read; toolspec never evaluates it, \
                 so what it gives is not checked: write the value itself",
                None,
            );
        }
        Node { at: f.start, v: V::Unknown(None) }
    }

    /// Quoted data.
    fn data(&mut self, f: &Form, depth: usize) -> Node {
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
                v: V::List { items: vec![Node::atom(at, Sexp::symbol(p.symbol())), self.data(x, depth + 1)], open: false },
            },
            Kind::Opaque(what) => Node::unknown(at, format!("a {what} object")),
            _ => Node::atom(at, f.to_sexp()),
        }
    }

    fn func(&mut self, f: &Form) -> Node {
        match &f.kind {
            Kind::Symbol(s) => Node { at: f.start, v: V::Func(Func::Named(s.clone())) },
            _ => match f.call() {
                Some(("lambda", [args, ..])) => Node { at: f.start, v: V::Func(Func::Lambda(form_arity(args), f.start, f.end)) },
                _ => Node::unknown(f.start, format!("the function {}", short(f))),
            },
        }
    }

    fn eval(&mut self, f: &'s Form, scope: &Scope, depth: usize) -> Node {
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

    fn eval_call(&mut self, f: &'s Form, items: &'s [Form], scope: &Scope, depth: usize) -> Node {
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
                "",
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
    fn backquote(&mut self, f: &'s Form, scope: &Scope, depth: usize) -> Node {
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
    fn backquote_items(&mut self, items: &'s [Form], scope: &Scope, depth: usize) -> (Vec<Node>, bool) {
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

    // ----------------------------------------------------------- the walk

    /// Look for `#.` in quoted data.
    fn scan_read_eval(&mut self, f: &Form, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH {
            return;
        }
        match &f.kind {
            Kind::Prefixed(Prefix::ReadEval, _) => {
                self.read_eval(f);
            }
            Kind::Prefixed(_, x) => self.scan_read_eval(x, depth + 1),
            Kind::List(items, tail) => {
                for x in items {
                    self.scan_read_eval(x, depth + 1);
                }
                if let Some(t) = tail {
                    self.scan_read_eval(t, depth + 1);
                }
            }
            Kind::Vector(items) => {
                for x in items {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn walk(&mut self, f: &'s Form, scope: &mut Scope, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH || self.over_budget {
            return;
        }
        match &f.kind {
            Kind::Prefixed(Prefix::ReadEval, _) => {
                self.read_eval(f);
            }
            Kind::Prefixed(Prefix::Quote | Prefix::Function, x) => {
                if let Some(("lambda", [arglist, body @ ..])) = x.call() {
                    self.walk_body(arglist, body, None, scope, depth);
                } else {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            Kind::Prefixed(_, x) => self.walk(x, scope, depth + 1),
            Kind::Vector(_) => self.scan_read_eval(f, depth),
            Kind::List(items, _) if !items.is_empty() => self.walk_call(f, items, scope, depth),
            _ => {}
        }
    }

    fn walk_all(&mut self, forms: &'s [Form], scope: &mut Scope, depth: usize) {
        for x in forms {
            self.walk(x, scope, depth + 1);
        }
    }

    /// Walk a function body, its parameters bound to what is known of
    /// them: `first` for the first one (a loop's element), else nothing.
    fn walk_body(&mut self, arglist: &'s Form, body: &'s [Form], first: Option<Node>, scope: &mut Scope, depth: usize) {
        let names = params(arglist);
        let mark = scope.len();
        let mut first = first;
        for (i, p) in names.iter().enumerate() {
            let v = match (first.take(), i) {
                (Some(v), 0) => v,
                _ => Node::unknown(arglist.start, format!("the argument `{p}'")),
            };
            scope.push((p.to_string(), v));
        }
        self.walk_all(body, scope, depth);
        scope.truncate(mark);
    }

    /// Walk `body` once per element of `seq`, `var` bound to it.
    fn walk_loop(&mut self, var: &str, seq: &'s Form, body: &'s [Form], scope: &mut Scope, depth: usize) {
        self.walk(seq, scope, depth + 1);
        if !mentions_maker(body) {
            scope.push((var.to_string(), Node::unknown(seq.start, format!("an element of {}", short(seq)))));
            self.walk_all(body, scope, depth);
            scope.pop();
            return;
        }
        // The elements become tool specs: evaluated as a tool's parts.
        self.in_tool += 1;
        let value = self.eval(seq, scope, depth + 1);
        self.in_tool -= 1;
        let elements = match value.v {
            V::List { items, open: false } | V::Vector(items) => Ok(items),
            V::Atom(Sexp::Null) => Ok(Vec::new()),
            V::Unknown(Some(w)) => Err(format!("an element of {w}")),
            _ => Err(format!("an element of {}", short(seq))),
        };
        match elements {
            Ok(items) => {
                for item in items {
                    if !self.spend() {
                        return;
                    }
                    scope.push((var.to_string(), item));
                    self.walk_all(body, scope, depth);
                    scope.pop();
                }
            }
            Err(what) => {
                scope.push((var.to_string(), Node { at: seq.start, v: V::Unknown(Some(what)) }));
                self.walk_all(body, scope, depth);
                scope.pop();
            }
        }
    }

    /// The variable and body of the function a mapping function calls:
    /// `(lambda (VAR) BODY...)`, `#'(lambda ...)` or `#'FN` defined in the
    /// file.
    /// The function's name is returned for a function of the file (whose
    /// body is walked anyway as a `defun`), None for a lambda.
    fn mapped(&self, fun: &'s Form) -> Option<(&'s Form, &'s [Form], Option<&'s str>)> {
        let lambda = match fun.prefixed() {
            Some((Prefix::Function | Prefix::Quote, x)) => x,
            _ => fun,
        };
        if let Some(("lambda", [arglist, body @ ..])) = lambda.call() {
            return Some((arglist, body, None));
        }
        let name = lambda.symbol()?;
        let def = self.defuns.get(name)?;
        match def.call()? {
            (_, [_, arglist, body @ ..]) => Some((arglist, body, Some(name))),
            _ => None,
        }
    }

    fn walk_call(&mut self, f: &'s Form, items: &'s [Form], scope: &mut Scope, depth: usize) {
        let Some(head) = items[0].symbol() else {
            self.walk_all(items, scope, depth);
            return;
        };
        let args = &items[1..];
        match head {
            "gptel-make-tool" | "llm-make-tool" => {
                let maker = if head == "gptel-make-tool" { "gptel-make-tool" } else { "llm-make-tool" };
                self.tool_call(f, maker, args, scope, depth);
            }
            "apply" if args.len() >= 2 && is_maker(&args[0]).is_some() => {
                self.tool_apply(f, is_maker(&args[0]).unwrap_or("gptel-make-tool"), &args[1..], scope, depth);
            }
            "funcall" if !args.is_empty() && is_maker(&args[0]).is_some() => {
                self.tool_call(f, is_maker(&args[0]).unwrap_or("gptel-make-tool"), &args[1..], scope, depth);
            }
            "quote" => {
                if let Some(x) = args.first() {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            "dolist" | "cl-dolist" | "seq-doseq" | "dolist-with-progress-reporter" if !args.is_empty() => {
                match args[0].list() {
                    Some([var, seq, ..]) if var.symbol().is_some() => {
                        let body = if head == "dolist-with-progress-reporter" { args.get(2..).unwrap_or(&[]) } else { &args[1..] };
                        let var = var.symbol().unwrap_or_default();
                        self.walk_loop(var, seq, body, scope, depth);
                    }
                    _ => self.walk_all(args, scope, depth),
                }
            }
            "mapc" | "mapcar" | "mapcan" | "mapconcat" | "seq-do" | "seq-map" | "seq-each" | "cl-mapc" | "cl-mapcar"
            | "-map" | "-each" | "mapcar*"
                if args.len() >= 2 =>
            {
                let (fun, seq) = if head == "-each" { (&args[1], &args[0]) } else { (&args[0], &args[1]) };
                if let Some(("apply-partially", [a, m, ..])) = fun.call() {
                    if a.prefixed().and_then(|(_, x)| x.symbol()) == Some("apply") && is_maker(m).is_some() {
                        // (mapcar (apply-partially #'apply #'gptel-make-tool) specs)
                        self.walk(seq, scope, depth + 1);
                        self.in_tool += 1;
                        let value = self.eval(seq, scope, depth + 1);
                        self.in_tool -= 1;
                        let maker = is_maker(m).unwrap_or("gptel-make-tool");
                        match value.v {
                            V::List { items, open: false } => {
                                for item in items {
                                    if !self.spend() {
                                        return;
                                    }
                                    self.apply_spec(f, maker, Vec::new(), item);
                                }
                            }
                            _ => self.apply_spec(f, maker, Vec::new(), value),
                        }
                        return;
                    }
                }
                match self.mapped(fun) {
                    Some((arglist, body, named)) => {
                        let var = params(arglist).first().map(|s| s.to_string());
                        match (var, named) {
                            (Some(var), None) => self.walk_loop(&var, seq, body, scope, depth),
                            // A function of the file: its body says more
                            // than its own walk only for elements known
                            // here, and it is not walked into itself.
                            (Some(var), Some(name)) if !self.inlining.contains(&name) && mentions_maker(body) => {
                                self.walk(seq, scope, depth + 1);
                                self.in_tool += 1;
                                let value = self.eval(seq, scope, depth + 1);
                                self.in_tool -= 1;
                                if let V::List { items, open: false } = value.v {
                                    self.inlining.push(name);
                                    let mut inner: Scope = Vec::new();
                                    for item in items {
                                        if !self.spend() {
                                            break;
                                        }
                                        inner.push((var.clone(), item));
                                        self.walk_all(body, &mut inner, depth);
                                        inner.pop();
                                    }
                                    self.inlining.pop();
                                }
                            }
                            _ => self.walk_all(args, scope, depth),
                        }
                    }
                    None => self.walk_all(args, scope, depth),
                }
            }
            "cl-loop" | "loop" => {
                // (cl-loop for VAR in SEQ do BODY...)
                if let ([f, var, i, seq, ..], Some(d)) = (args, args.iter().position(|a| a.symbol() == Some("do"))) {
                    if let (Some("for"), Some(var), Some("in")) = (f.symbol(), var.symbol(), i.symbol()) {
                        self.walk_loop(var, seq, &args[d + 1..], scope, depth);
                        return;
                    }
                }
                self.walk_all(args, scope, depth);
            }
            "let" | "let*" if !args.is_empty() => {
                let mark = scope.len();
                let mut bound: Vec<(String, Node)> = Vec::new();
                for b in args[0].list().unwrap_or(&[]) {
                    let (name, value) = match (b.symbol(), b.list()) {
                        (Some(n), _) => (n, Node::atom(b.start, Sexp::Null)),
                        (None, Some([n, v, ..])) if n.symbol().is_some() => {
                            self.walk(v, scope, depth + 1);
                            (n.symbol().unwrap_or_default(), self.eval(v, scope, depth + 1))
                        }
                        (None, Some([n])) if n.symbol().is_some() => (n.symbol().unwrap_or_default(), Node::atom(b.start, Sexp::Null)),
                        _ => continue,
                    };
                    if head == "let*" {
                        scope.push((name.to_string(), value));
                    } else {
                        bound.push((name.to_string(), value));
                    }
                }
                scope.extend(bound);
                self.walk_all(&args[1..], scope, depth);
                scope.truncate(mark);
            }
            "defun" | "defmacro" | "defsubst" | "cl-defun" | "cl-defmacro" | "cl-defsubst" | "define-inline" if args.len() >= 2 => {
                self.walk_body(&args[1], &args[2..], None, scope, depth);
            }
            "cl-defmethod" if args.len() >= 2 => {
                let i = args.iter().skip(1).position(|a| a.list().is_some()).map_or(1, |p| p + 1);
                self.walk_body(&args[i], args.get(i + 1..).unwrap_or(&[]), None, scope, depth);
            }
            "lambda" if !args.is_empty() => self.walk_body(&args[0], &args[1..], None, scope, depth),
            _ => self.walk_all(args, scope, depth),
        }
    }

    // ------------------------------------------------------ tool definitions

    fn add_found(&mut self, at: usize, maker: &'static str, node: Node, unknown: Option<Option<String>>) {
        let mut key = vec![node.at];
        if let V::List { items, .. } = &node.v {
            key.extend(items.iter().map(|n| n.at));
        }
        if self.found_keys.insert((at, key)) && self.spend() {
            self.found.push(Found { at, maker, node, unknown });
        }
    }

    /// `(gptel-make-tool :key VALUE ...)`.
    fn tool_call(&mut self, f: &'s Form, maker: &'static str, args: &'s [Form], scope: &mut Scope, depth: usize) {
        self.in_tool += 1;
        let mut items = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let key = &args[i];
            if let Some(k) = key.keyword() {
                items.push(Node::atom(key.start, Sexp::keyword(k)));
                if let Some(v) = args.get(i + 1) {
                    self.walk(v, scope, depth + 1);
                    items.push(self.eval(v, scope, depth + 1));
                }
                i += 2;
            } else {
                items.push(self.eval(key, scope, depth + 1));
                i += 1;
            }
        }
        self.in_tool -= 1;
        self.add_found(f.start, maker, Node { at: f.start, v: V::List { items, open: false } }, None);
    }

    /// `(apply #'gptel-make-tool [:key VALUE...] SPEC)`.
    fn tool_apply(&mut self, f: &'s Form, maker: &'static str, args: &'s [Form], scope: &mut Scope, depth: usize) {
        let (last, leading) = args.split_last().expect("apply has arguments");
        self.in_tool += 1;
        let lead: Vec<Node> = leading
            .iter()
            .map(|a| {
                self.walk(a, scope, depth + 1);
                self.eval(a, scope, depth + 1)
            })
            .collect();
        self.walk(last, scope, depth + 1);
        let spec = self.eval(last, scope, depth + 1);
        self.in_tool -= 1;
        self.apply_spec(f, maker, lead, spec);
    }

    fn apply_spec(&mut self, f: &Form, maker: &'static str, lead: Vec<Node>, spec: Node) {
        let at = if lead.is_empty() { spec.at } else { f.start };
        let mut items = lead;
        let mut open = false;
        match spec.v {
            V::List { items: s, open: o } => {
                items.extend(s);
                open = o;
            }
            V::Atom(Sexp::Null) => {}
            V::Unknown(why) if items.is_empty() => {
                self.add_found(f.start, maker, Node { at: spec.at, v: V::List { items: Vec::new(), open: true } }, Some(why));
                return;
            }
            _ => open = true,
        }
        self.add_found(f.start, maker, Node { at, v: V::List { items, open } }, None);
    }

    // ----------------------------------------------------------- checking

    fn check(&mut self, t: &Found, out: &mut Analysis) {
        let name = t.node.plist_items().and_then(|items| {
            items.chunks(2).find(|kv| kv[0].keyword() == Some("name")).and_then(|kv| kv[1].string().map(String::from))
        });
        let tool_name = name.as_deref();
        if let Some(why) = &t.unknown {
            if let Some(why) = why {
                self.finding(
                    Level::Note,
                    t.node.at,
                    "",
                    format!("not checked: the tool spec is {why}, known only when the code runs"),
                    tool_name,
                );
            }
            out.tools.push(SourceTool {
                at: t.at,
                maker: t.maker,
                function: None,
                emacs: Vec::new(),
                name: None,
                tool: Err(format!("the tool spec is {}, known only when the code runs", why.as_deref().unwrap_or("computed"))),
            });
            return;
        }
        let mut conv = Convert { unknowns: Vec::new(), defuns: &self.defuns, findings: Vec::new() };
        let sexp = conv.tool(&t.node, tool_name);
        let unknowns = conv.unknowns;
        for f in &mut conv.findings {
            if f.tool.is_none() {
                f.tool = name.clone();
            }
        }
        self.findings.append(&mut conv.findings);
        let problems = validate::validate(&sexp);
        // Each problem is matched against each unknown part, and each
        // unknown part against the others: past a bound, one note.
        let work = problems.len().max(unknowns.len()).saturating_mul(unknowns.len().max(1));
        if work > MAX_MATCHING {
            self.finding(
                Level::Note,
                t.node.at,
                "",
                format!(
                    "not checked: too large: the tool spec has {} problems and {} parts known only when the code runs, \
                     too many to sort out; fix the first ones, or write the spec out",
                    problems.len(),
                    unknowns.len()
                ),
                tool_name,
            );
        }
        let mut shown = 0;
        for p in problems.iter().take_while(|_| work <= MAX_MATCHING) {
            if suppressed(p, &unknowns) {
                continue;
            }
            shown += 1;
            if shown > MAX_TOOL_FINDINGS {
                let more = problems.len() - MAX_TOOL_FINDINGS;
                let message = format!("{more} more problems of this tool (or fewer, some may be run-time parts) not shown");
                self.finding(Level::Note, t.node.at, "", message, tool_name);
                break;
            }
            let at = place(&t.node, p);
            self.finding(p.severity.into(), at, &p.path, p.message.clone(), tool_name);
        }
        drop(problems);
        for u in unknowns.iter().take_while(|_| work <= MAX_MATCHING).take(MAX_TOOL_FINDINGS) {
            if let (Some(what), false) = (&u.what, u.splice) {
                if u.path != "function" && !unknowns.iter().any(|o| !o.splice && o.path != u.path && under(&u.path, &o.path)) {
                    self.finding(Level::Note, u.at, &u.path, format!("not checked: {what} is known only when the code runs"), tool_name);
                }
            } else if let (Some(_), true) = (&u.what, u.splice) {
                self.finding(
                    Level::Note,
                    u.at,
                    &u.path,
                    if u.path.is_empty() {
                        "not checked: part of the tool spec is known only when the code runs"
                    } else {
                        "not checked: part of this list is known only when the code runs"
                    },
                    tool_name,
                );
            }
        }
        let blocking = unknowns.iter().find(|u| {
            !matches!(u.path.as_str(), "function" | "category" | "confirm" | "include" | "async")
        });
        let tool = match blocking {
            Some(u) => Err(match &u.what {
                Some(w) if !w.is_empty() => format!("{w} is known only when the code runs"),
                _ => format!(
                    "{} cannot be read without running the code",
                    if u.path.is_empty() { "the spec".into() } else { format!(":{}", u.path) }
                ),
            }),
            None => {
                let data = strip_function(&sexp);
                let r = plist::tool_from_sexp(&data).map_err(|e| e.to_string());
                plist::dispose(data);
                r
            }
        };
        plist::dispose(sexp);
        let function = t.node.plist_items().and_then(|items| {
            let v = &items.chunks(2).find(|kv| kv[0].keyword() == Some("function"))?[1];
            match &v.v {
                V::Func(Func::Named(n)) => Some(FunctionSource::Named(n.clone())),
                V::Func(Func::Lambda(_, start, end)) => Some(FunctionSource::Lambda(*start, *end)),
                V::Atom(s) => s.as_symbol().filter(|n| *n != "t").map(|n| FunctionSource::Named(n.to_string())),
                _ => None,
            }
        });
        let emacs = t
            .node
            .plist_items()
            .map(|items| {
                items
                    .chunks(2)
                    .filter_map(|kv| match (kv[0].keyword(), &kv[1].v) {
                        (Some(k @ ("async" | "confirm" | "include" | "category")), V::Atom(v)) => Some((k.to_string(), v.clone())),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.tools.push(SourceTool { at: t.at, maker: t.maker, name, tool, function, emacs });
    }
}

/// The tool plist without `:function` (its description for the validator).
fn strip_function(tool: &Sexp) -> Sexp {
    match plist::plist_pairs(tool) {
        Some(pairs) => Sexp::list(
            pairs
                .into_iter()
                .filter(|(k, _)| *k != "function")
                .flat_map(|(k, v)| [Sexp::keyword(k), v.clone()])
                .collect::<Vec<_>>(),
        ),
        None => tool.clone(),
    }
}

/// A part known only at run time, at `path` of the tool plist.
struct Unknown {
    path: String,
    at: usize,
    what: Option<String>,
    /// A list with an unknown part spliced in (the path is the list's).
    splice: bool,
}

/// Turns a tool [`Node`] into the plist the validator reads.
struct Convert<'a, 's> {
    unknowns: Vec<Unknown>,
    defuns: &'a HashMap<&'s str, &'s Form>,
    findings: Vec<Finding>,
}

const NOT_CHECKED: &str = "toolspec--not-checked";

impl Convert<'_, '_> {
    fn tool(&mut self, node: &Node, name: Option<&str>) -> Sexp {
        let V::List { items, open } = &node.v else {
            return self.value(node, "");
        };
        if *open {
            self.unknowns.push(Unknown { path: String::new(), at: node.at, what: Some(String::new()), splice: true });
        }
        let mut out = Vec::with_capacity(items.len());
        let mut i = 0;
        while i < items.len() {
            let k = &items[i];
            match (k.keyword(), items.get(i + 1)) {
                (Some("function"), Some(v)) => {
                    if let Some(f) = self.function(v, name) {
                        out.push(Sexp::keyword("function"));
                        out.push(f);
                    }
                    i += 2;
                }
                (Some(key), Some(v)) => {
                    out.push(Sexp::keyword(key));
                    out.push(self.value(v, key));
                    i += 2;
                }
                _ => {
                    out.push(self.value(k, &crate::model::index("", i)));
                    i += 1;
                }
            }
        }
        Sexp::list(out)
    }

    /// `:function` described for the validator: `(toolspec-function
    /// CALLABLE MIN MAX NAME)`, or None when nothing can be said.
    fn function(&mut self, v: &Node, tool: Option<&str>) -> Option<Sexp> {
        let info = |min: usize, max: Option<usize>, name: &str| {
            Sexp::list(vec![
                Sexp::symbol("toolspec-function"),
                Sexp::symbol("t"),
                Sexp::from(min as u64),
                max.map_or(Sexp::symbol("many"), |m| Sexp::from(m as u64)),
                Sexp::string(name),
            ])
        };
        let named = |n: &str| {
            let def = self.defuns.get(n)?;
            let (_, args) = def.call()?;
            let (min, max) = form_arity(args.get(1)?)?;
            Some(info(min, max, n))
        };
        match &v.v {
            V::Func(Func::Lambda(Some((min, max)), ..)) => Some(info(*min, *max, "")),
            V::Func(Func::Named(n)) => named(n),
            V::Atom(s) if s.is_null() => None,
            V::Atom(s) => match s.as_symbol() {
                Some(n) if n != "t" => named(n),
                _ => Some(Sexp::list(vec![
                    Sexp::symbol("toolspec-function"),
                    Sexp::Null,
                    Sexp::from(0u64),
                    Sexp::from(0u64),
                    Sexp::string(""),
                ])),
            },
            V::List { items, .. } => match items.first().and_then(|h| match &h.v {
                V::Atom(s) => s.as_symbol(),
                _ => None,
            }) {
                Some("lambda") => {
                    let ar = items.get(1).and_then(|a| match &a.v {
                        V::List { items, .. } => arity(items.iter().map(|p| match &p.v {
                            V::Atom(s) => s.as_symbol(),
                            _ => None,
                        })),
                        V::Atom(s) if s.is_null() => Some((0, Some(0))),
                        _ => None,
                    });
                    ar.map(|(min, max)| info(min, max, ""))
                }
                Some("function") => {
                    let f = items.get(1).map_or(String::from("..."), |x| match &x.v {
                        V::Atom(s) => s.to_string(),
                        _ => "(lambda ...)".into(),
                    });
                    self.findings.push(Finding {
                        level: Level::Error,
                        at: v.at,
                        path: "function".into(),
                        message: format!(
                            "#'{f} inside a quoted list is the list (function {f}), which cannot be called: \
                             write {f} without #' there, or build the spec with (list ... :function #'{f})"
                        ),
                        tool: tool.map(String::from),
                    });
                    None
                }
                _ => None,
            },
            V::Unknown(what) => {
                self.unknowns.push(Unknown { path: "function".into(), at: v.at, what: what.clone(), splice: false });
                None
            }
            _ => None,
        }
    }

    /// `:description:` (as in gptel's own documentation of the argument
    /// format) is not `:description`: its value is ignored.
    fn stray_colon(&mut self, key: &Node, path: &str) {
        let Some(k) = key.keyword() else { return };
        if let Some(base) = k.strip_suffix(':').filter(|b| !b.is_empty() && !b.ends_with(':')) {
            self.findings.push(Finding {
                level: Level::Warning,
                at: key.at,
                path: crate::model::join(path, k),
                message: format!(":{k} ends with a colon, so it is not :{base} and is ignored: write :{base}"),
                tool: None,
            });
        }
    }

    fn value(&mut self, n: &Node, path: &str) -> Sexp {
        match &n.v {
            V::Atom(s) => s.clone(),
            V::Func(Func::Named(name)) => Sexp::list(vec![Sexp::symbol("function"), Sexp::symbol(name.as_str())]),
            V::Func(Func::Lambda(..)) => Sexp::list(vec![Sexp::symbol("lambda")]),
            V::Unknown(what) => {
                self.unknowns.push(Unknown { path: path.to_string(), at: n.at, what: what.clone(), splice: false });
                Sexp::symbol(NOT_CHECKED)
            }
            V::Vector(items) => Sexp::vector(
                items.iter().enumerate().map(|(i, x)| self.value(x, &crate::model::index(path, i))).collect::<Vec<_>>(),
            ),
            V::Dotted(items, tail) => {
                let items: Vec<Sexp> =
                    items.iter().enumerate().map(|(i, x)| self.value(x, &crate::model::index(path, i))).collect();
                let tail = self.value(tail, path);
                Sexp::append(items, tail)
            }
            V::List { items, open } => {
                if *open {
                    self.unknowns.push(Unknown { path: path.to_string(), at: n.at, what: Some(String::new()), splice: true });
                }
                let plist = n.plist_items().is_some();
                let mut out = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    let p = if plist {
                        if i % 2 == 0 {
                            self.stray_colon(x, path);
                            out.push(self.value(x, path));
                            continue;
                        }
                        crate::model::join(path, items[i - 1].keyword().unwrap_or_default())
                    } else {
                        crate::model::index(path, i)
                    };
                    out.push(self.value(x, &p));
                }
                Sexp::list(out)
            }
        }
    }
}

/// `path` is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

fn parent(path: &str) -> (&str, &str) {
    match path.rfind(['.', '[']) {
        Some(i) if path.as_bytes()[i] == b'.' => (&path[..i], &path[i + 1..]),
        Some(i) => (&path[..i], &path[i..]),
        None => ("", path),
    }
}

/// A problem the validator found only because part of the spec is known
/// only at run time.
fn suppressed(p: &Problem, unknowns: &[Unknown]) -> bool {
    unknowns.iter().any(|u| {
        if u.splice {
            let (pp, _) = parent(&p.path);
            return (pp == u.path || (u.path.is_empty() && !p.path.contains(['.', '['])))
                && (p.message.starts_with("missing")
                    || p.message.contains("names no key")
                    || p.message.contains("needs a :type")
                    || p.message.contains("must be a plist"))
                || p.path == u.path;
        }
        if !u.path.is_empty() && under(&p.path, &u.path) {
            return true;
        }
        let (up, key) = parent(&u.path);
        match key {
            "type" => ["enum", "items", "properties", "required"].iter().any(|k| under(&p.path, &crate::model::join(up, k))),
            "properties" => under(&p.path, &crate::model::join(up, "required")),
            "async" => p.path == "function",
            _ => (u.path.starts_with("args") && p.path == "function") || u.path.is_empty(),
        }
    })
}

/// Steps of a validator path: `args[1].items.properties.r`, a key as
/// `Ok`, an index as `Err`.
pub(crate) fn steps(path: &str) -> Vec<Result<&str, usize>> {
    crate::locate::steps(path)
        .into_iter()
        .map(|s| match s {
            crate::locate::Step::Key(k) => Ok(k),
            crate::locate::Step::Index(i) => Err(i),
        })
        .collect()
}

/// Where problem `p` of the tool `root` is: the form at its path, the
/// keyword for problems about a key, or the deepest part of the path that
/// exists.
fn place(root: &Node, p: &Problem) -> usize {
    let about_key = p.message.contains("is not a tool key")
        || p.message.contains("appears twice")
        || p.message.contains("is defined twice");
    let second = p.message.contains("appears twice") || p.message.contains("is defined twice");
    let all = steps(&p.path);
    let mut cur = root;
    let mut at = root.at;
    for (n, step) in all.iter().enumerate() {
        let last = n + 1 == all.len();
        let next = match (step, &cur.v) {
            (Ok(k), V::List { items, .. }) => {
                let mut hits = items.chunks(2).filter(|kv| kv.len() == 2 && kv[0].keyword() == Some(k));
                let hit = if last && second { hits.nth(1) } else { hits.next() };
                hit.map(|kv| if last && about_key { (&kv[0], kv[0].at) } else { (&kv[1], kv[1].at) })
            }
            (Err(i), V::List { items, .. } | V::Vector(items) | V::Dotted(items, _)) => items.get(*i).map(|x| (x, x.at)),
            _ => None,
        };
        match next {
            Some((node, a)) => {
                cur = node;
                at = a;
            }
            None => break,
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elisp_source::Source;

    type Listed = Vec<(String, (usize, usize), String, String)>;

    fn lint(text: &str) -> (Listed, Analysis) {
        let src = Source::read(text);
        assert!(src.error.is_none(), "{:?}", src.error);
        let a = analyze(&src.forms);
        let list = a
            .findings
            .iter()
            .map(|f| (f.level.as_str().to_string(), src.line_column(f.at), f.path.clone(), f.message.clone()))
            .collect();
        (list, a)
    }

    #[test]
    fn direct_call_with_the_usual_mistakes() {
        let text = r#"(gptel-make-tool
 :name "get_weather"
 :function (lambda (location unit) (list location unit))
 :description "Get the weather"
 :args (list '(:name "location" :type 'string :description "City")
             '(:name "unit" :type "string" :enum ("c" "f") :description "Unit")))
"#;
        let (found, a) = lint(text);
        let short: Vec<_> = found.iter().map(|(l, pos, p, _)| (l.as_str(), *pos, p.as_str())).collect();
        assert_eq!(
            short,
            [
                ("error", (5, 39), "args[0].type"),
                ("error", (6, 35), "args[1].type"),
                ("error", (6, 50), "args[1].enum"),
            ],
            "{found:#?}"
        );
        assert!(found[0].3.contains("'string inside an already quoted list"), "{}", found[0].3);
        assert_eq!(a.tools.len(), 1);
        let tool = a.tools[0].tool.as_ref().unwrap();
        assert_eq!(tool.name, "get_weather");
        assert_eq!(tool.args.len(), 2);
    }

    #[test]
    fn lambda_arity_is_checked() {
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :function (lambda (a) a)\n :args (list '(:name \"a\" :type string :description \"a\") '(:name \"b\" :type string :description \"b\")))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].2, "function");
        assert!(found[0].3.contains("takes 1"));
    }

    #[test]
    fn specs_in_a_variable_applied_in_a_loop() {
        let text = r#"(defvar my-tools
  (list '(:name "one" :description "One" :args ((:name "q" :type strin :description "Q")))
        (list :name "two" :description "Two" :args (list (list :name "n" :type 'integer :description "N")))))
(dolist (spec my-tools)
  (apply #'gptel-make-tool :function #'ignore spec))
"#;
        let (found, a) = lint(text);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].1, (2, 66));
        assert_eq!(found[0].2, "args[0].type");
        let names: Vec<_> = a.tools.iter().map(|t| t.name.clone().unwrap()).collect();
        assert_eq!(names, ["one", "two"]);
        assert_eq!(a.tools[1].tool.as_ref().unwrap().args[0].schema["type"], "integer");
    }

    #[test]
    fn run_time_values_are_not_checked() {
        let text = r#"(defun my-register (name doc)
  (gptel-make-tool :name name :description (format "Do %s" doc) :function #'ignore
                   :args (list '(:name "x" :type string :description "X"))))
(mapc (lambda (s) (apply #'gptel-make-tool s)) (my-specs))
"#;
        let (found, a) = lint(text);
        let notes: Vec<_> = found.iter().filter(|f| f.0 == "note").map(|f| (f.1, f.2.as_str())).collect();
        assert_eq!(notes, [((2, 26), "name"), ((2, 44), "description"), ((4, 44), "")], "{found:#?}");
        assert!(found.iter().all(|f| f.0 == "note"), "{found:#?}");
        assert!(a.tools.iter().all(|t| t.tool.is_err()));
    }

    #[test]
    fn keyword_with_a_stray_colon() {
        // From the documentation of gptel-make-tool's argument format.
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :args (list '(:name \"c\" :type object :description \"C\"\n :properties (:name (:type string :description: \"Human-readable\")))))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].1, found[0].2.as_str()), ((2, 35), "args[0].properties.name.description:"));
        assert!(found[0].3.contains("write :description"), "{}", found[0].3);
    }

    #[test]
    fn unquoted_plist_in_a_spec_list_and_macros_left_alone() {
        let (found, _) = lint(
            "(defvar specs (list (:name \"a\" :description \"A\")))\n(dolist (s specs) (apply #'gptel-make-tool s))\n\
             (define-overloadable-function f () (let ((x (:override (foo)))) x))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].1, (1, 21));
        assert!(found[0].3.contains("quote the plist"));
    }

    #[test]
    fn partly_known_specs() {
        let (found, a) = lint(
            "(apply #'gptel-make-tool :name \"x\" :description (format \"%s\" 1) (my-more-keys))\n\
             (gptel-make-tool :name \"y\" :description \"Y\" :args `((:name \"a\" :type string :description \"A\") ,@(my-args)))",
        );
        let short: Vec<_> = found.iter().map(|(l, pos, p, m)| (l.as_str(), *pos, p.as_str(), m.as_str())).collect();
        assert_eq!(
            short,
            [
                ("note", (1, 1), "", "not checked: part of the tool spec is known only when the code runs"),
                ("note", (1, 49), "description", "not checked: the value of (format ...) is known only when the code runs"),
                ("note", (2, 52), "args", "not checked: part of this list is known only when the code runs"),
            ],
            "{found:#?}"
        );
        assert!(a.tools.iter().all(|t| t.tool.is_err()));
    }

    #[test]
    fn read_eval_is_reported_not_run() {
        let (found, _) = lint("(gptel-make-tool :name #.(shell-command-to-string \"id\") :description \"d\")");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].0, "warning");
        assert!(found[0].3.contains("never evaluates"));
    }

    #[test]
    fn unquoted_plist_and_function_in_quoted_list() {
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :args (list (:name \"a\" :type string :description \"a\")))\n\
             (defvar s '(:name \"y\" :description \"d\" :function #'foo))\n(apply #'gptel-make-tool s)",
        );
        let msgs: Vec<_> = found.iter().map(|f| (f.1, f.3.split(':').next().unwrap_or_default().to_string())).collect();
        assert_eq!(msgs.len(), 2, "{found:#?}");
        assert_eq!(found[0].1, (1, 57));
        assert!(found[0].3.contains("quote the plist"));
        assert_eq!(found[1].1, (2, 50));
        assert!(found[1].3.contains("(function foo)"));
    }

    #[test]
    fn backquote_and_missing_items_and_required() {
        let text = r#"(let ((kind 'string))
  (llm-make-tool :name "t" :description "d" :function #'ignore
                 :args `((:name "tags" :type array :description "Tags")
                         (:name "o" :type object :description "O"
                          :properties (:a (:type ,kind)) :required ["a" "b"]))))
"#;
        let (found, a) = lint(text);
        let short: Vec<_> = found.iter().map(|(l, pos, p, _)| (l.as_str(), *pos, p.as_str())).collect();
        assert!(short.contains(&("error", (3, 26), "args[0].items")), "{found:#?}");
        assert!(short.contains(&("error", (5, 73), "args[1].required[1]")), "{found:#?}");
        assert_eq!(a.tools[0].maker, "llm-make-tool");
        assert!(a.tools[0].tool.is_ok());
    }
}
