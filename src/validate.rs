//! Validation of a gptel/llm tool plist against the rules of the shared gptel/llm tool format and
//! what gptel, llm and the providers accept.  Returns every problem, each
//! with its path (`args[2].items.properties.r.type`) and a message that
//! says what would be right.
//!
//! `:function` is described by the module layer, which alone can look at
//! a Lisp function: `(toolspec-function CALLABLE MIN-ARITY MAX-ARITY)`,
//! MAX-ARITY an integer or `many`.

use lexpr::Value as Sexp;

use crate::model::{At, Code, Path, Problem, Seen};
use crate::node::Node;
use crate::schema::{canonical_type, TYPES};

const TOOL_KEYS: &[&str] = &[
    "name",
    "function",
    "description",
    "args",
    "async",
    "category",
    "confirm",
    "include",
    // Carried by toolspec from JSON formats.
    "schema-extra",
    "title",
    "annotations",
    "outputSchema",
    "_meta",
    "icons",
    "strict",
    "cache_control",
    // How a tool runs, set by the readers of formats that say so (OpenAPI,
    // Gloodata, Arcade, SkyDeck).
    "executor",
];

/// Validate a tool plist.
pub fn validate(tool: &Sexp) -> Vec<Problem> {
    validate_node(&Node::of_sexp(tool))
}

/// Validate a tool plist seen as a [`Node`].
pub fn validate_node(tool: &Node<'_>) -> Vec<Problem> {
    let mut v = Validator { problems: Vec::new() };
    v.tool(tool);
    v.problems
}

struct Validator {
    problems: Vec<Problem>,
}

/// The pairs of a plist, and a value by its key (the first, as for
/// `plist-get`).
type Pairs<'n, 'a> = Vec<(&'a str, &'n Node<'a>)>;

fn get<'n, 'a>(pairs: &Pairs<'n, 'a>, k: &str) -> Option<&'n Node<'a>> {
    pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
}

/// Whether the tool calls an OpenAPI operation (`:executor` of `:type`
/// "openapi"): its name is the operation's `operationId`, which belongs
/// to the API, not to whoever imports it, so its style is not theirs
/// to change.  An invalid name is still an error: providers refuse it.
fn names_an_operation(pairs: &Pairs<'_, '_>) -> bool {
    let Some(exec) = get(pairs, "executor").and_then(Node::plist_pairs) else { return false };
    matches!(get(&exec, "type"), Some(Node::Str("openapi") | Node::Sym("openapi")))
}

/// The path of a key of the tool.
fn key(k: &str) -> Path {
    Path::root().key(k)
}

fn describe(v: &Node<'_>) -> String {
    match v {
        Node::Str(s) => format!("the string \"{s}\""),
        Node::Sym(s) => format!("the symbol `{s}'"),
        Node::Kw(k) => format!("the keyword :{k}"),
        Node::Num(n) => match n.as_f64() {
            Some(f) if f.is_nan() => "0.0e+NaN, which has no JSON form".into(),
            Some(f) if f.is_infinite() => format!("{}1.0e+INF, which has no JSON form", if f < 0.0 { "-" } else { "" }),
            _ => format!("the number {n}"),
        },
        Node::Vector(_) => "a vector".into(),
        Node::Nil => "nil".into(),
        Node::List(_) if v.quoted().is_some() => "a quoted form".into(),
        Node::List(_) | Node::Other(Sexp::Cons(_)) => "a list".into(),
        Node::Other(_) => "a value of another type".into(),
    }
}

/// A valid provider tool name made from `name`.
pub fn sanitize_name(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    out.truncate(64);
    out
}

pub fn name_is_valid(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_snake_case(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Validator {
    fn error(&mut self, code: Code, path: impl Into<Path>, msg: impl Into<String>) {
        self.problems.push(Problem::error(code, path, msg));
    }
    fn warning(&mut self, code: Code, path: impl Into<Path>, msg: impl Into<String>) {
        self.problems.push(Problem::warning(code, path, msg));
    }

    fn pairs<'n, 'a>(&mut self, v: &'n Node<'a>, path: &At<'_>, what: &str) -> Option<Pairs<'n, 'a>> {
        match v.plist_pairs() {
            Some(p) => {
                // While few, keys are compared one by one, as `Seen` does,
                // but with those before them in the pairs: no copy of them
                // to allocate, for plists that mostly have a handful.
                let mut seen = (p.len() > Seen::<&str>::FEW).then(Seen::default);
                for (i, (k, _)) in p.iter().enumerate() {
                    let again = match &mut seen {
                        Some(seen) => !seen.insert(*k),
                        None => p[..i].iter().any(|(before, _)| before == k),
                    };
                    if again {
                        self.warning(
                            Code::DuplicateKey,
                            path.key(k),
                            format!(":{k} appears twice: only the first is used"),
                        );
                    }
                }
                Some(p)
            }
            None => {
                self.error(
                    Code::NotPlist,
                    path,
                    format!("{what} must be a plist of keywords and values, found {}", describe(v)),
                );
                None
            }
        }
    }

    fn tool(&mut self, tool: &Node<'_>) {
        let root = At::Root("");
        let Some(pairs) = self.pairs(tool, &root, "a tool spec") else { return };
        for (k, _) in &pairs {
            if !TOOL_KEYS.contains(k) {
                let hint = TOOL_KEYS
                    .iter()
                    .find(|known| known.starts_with(&k[..k.char_indices().nth(3).map_or(k.len(), |(i, _)| i)]))
                    .map(|known| format!(" (did you mean :{known}?)"))
                    .unwrap_or_default();
                self.warning(Code::UnknownToolKey, key(k), format!(":{k} is not a tool key gptel or llm uses{hint}"));
            }
        }
        match get(&pairs, "name") {
            None => self.error(
                Code::MissingKey,
                key("name"),
                "missing :name: every tool needs a name string such as \"get_weather\"",
            ),
            Some(Node::Str(n)) => {
                if !name_is_valid(n) {
                    self.error(
                        Code::InvalidName,
                        key("name"),
                        format!(
                            "\"{n}\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{{1,64}}$, e.g. \"{}\"",
                            sanitize_name(n)
                        ),
                    );
                } else if !is_snake_case(n) && !names_an_operation(&pairs) {
                    self.warning(
                        Code::NameStyle,
                        key("name"),
                        format!("\"{n}\" is not snake_case, which is recommended"),
                    );
                }
            }
            Some(other) => {
                self.error(Code::WrongKind, key("name"), format!(":name must be a string, found {}", describe(other)))
            }
        }
        match get(&pairs, "description") {
            None => self.warning(
                Code::NoDescription,
                key("description"),
                "no :description: the model chooses tools by their description",
            ),
            Some(Node::Str(_)) => {}
            Some(other) => self.error(
                Code::WrongKind,
                key("description"),
                format!(":description must be a string, found {}", describe(other)),
            ),
        }
        let async_ = match get(&pairs, "async") {
            None => false,
            Some(Node::Nil) => false,
            Some(Node::Sym("t")) => true,
            Some(other) => {
                self.warning(
                    Code::NotBoolean,
                    key("async"),
                    format!(":async should be t or nil, found {}", describe(other)),
                );
                true
            }
        };
        let nargs = match get(&pairs, "args") {
            None => 0,
            Some(args) => self.args(args),
        };
        if let Some(f) = get(&pairs, "function") {
            self.function(f, nargs, async_);
        }
        if let Some(c) = get(&pairs, "category") {
            if !matches!(c, Node::Str(_)) {
                self.error(
                    Code::WrongKind,
                    key("category"),
                    format!(":category must be a string, found {}", describe(c)),
                );
            }
        }
    }

    fn function(&mut self, f: &Node<'_>, nargs: usize, async_: bool) {
        let info = f.list_items().filter(|i| i.first().and_then(Node::as_symbol) == Some("toolspec-function"));
        let Some(info) = info else { return };
        let name = info.get(4).and_then(Node::as_str).filter(|s| !s.is_empty());
        match info.get(1) {
            Some(Node::Sym("unbound")) => {
                self.warning(
                    Code::UndefinedFunction,
                    key("function"),
                    format!("`{}' is not defined (yet): define it before the tool is called", name.unwrap_or("?")),
                );
                return;
            }
            Some(v) if !v.is_nil() => {}
            _ => {
                self.error(
                    Code::NotCallable,
                    key("function"),
                    ":function is not callable: give a function, e.g. #'my-tool-function or (lambda (x) ...)",
                );
                return;
            }
        }
        let min = info.get(2).and_then(Node::as_u64).unwrap_or(0) as usize;
        let max = info.get(3).and_then(Node::as_u64).map(|m| m as usize); // None: &rest
        let needed = if async_ { nargs + 1 } else { nargs };
        let fits = min <= needed && max.is_none_or(|m| needed <= m);
        if fits {
            return;
        }
        let takes = match max {
            Some(m) if m == min => format!("{min}"),
            Some(m) => format!("{min} to {m}"),
            None => format!("at least {min}"),
        };
        if async_ {
            self.error(
                Code::Arity,
                key("function"),
                format!(
                    "with :async t the function is called with a callback first, then {nargs} argument(s), \
                     so it must take {needed}; it takes {takes}"
                ),
            );
        } else {
            self.error(Code::Arity,
                key("function"),
                format!("the function takes {takes} argument(s) but :args declares {nargs}: gptel passes one value per arg, in order"),
            );
        }
    }

    /// Check `:args`; returns how many arguments there are.
    fn args(&mut self, args: &Node<'_>) -> usize {
        let Some(items) = args.list_items() else {
            let hint = if args.vector_items().is_some() { " (a vector was given: use a list)" } else { "" };
            self.error(Code::WrongKind, key("args"), format!(":args must be a list of argument plists{hint}, e.g. (list '(:name \"x\" :type string :description \"...\"))"));
            return args.vector_items().map_or(0, |s| s.len());
        };
        let root = At::Root("");
        let at_args = root.key("args");
        let mut names = Seen::default();
        for (i, arg) in items.iter().enumerate() {
            let path = at_args.index(i);
            let Some(pairs) = self.pairs(arg, &path, "an argument") else { continue };
            match get(&pairs, "name") {
                None => {
                    self.error(Code::MissingKey, path.key("name"), "missing :name: every argument needs a name string")
                }
                Some(Node::Str(n)) => {
                    if !names.insert(*n) {
                        self.error(
                            Code::DuplicateArgument,
                            path.key("name"),
                            format!("duplicate argument name \"{n}\": names must be unique"),
                        );
                    }
                }
                Some(other) => self.error(
                    Code::WrongKind,
                    path.key("name"),
                    format!(":name must be a string, found {}", describe(other)),
                ),
            }
            match get(&pairs, "description") {
                None => self.warning(
                    Code::MissingKey,
                    path.key("description"),
                    "missing :description: gptel and llm require one, and the model relies on it",
                ),
                Some(Node::Str(_)) => {}
                Some(other) => self.error(
                    Code::WrongKind,
                    path.key("description"),
                    format!(":description must be a string, found {}", describe(other)),
                ),
            }
            if let Some(o) = get(&pairs, "optional") {
                if !o.is_nil() && o.as_symbol() != Some("t") {
                    self.warning(
                        Code::NotBoolean,
                        path.key("optional"),
                        format!(":optional should be t or nil, found {}", describe(o)),
                    );
                }
            }
            self.node(&pairs, &path, true, true);
        }
        items.len()
    }

    /// Check one schema node given as plist pairs.  `read` when gptel and
    /// llm read it (an argument, its items and properties, their
    /// alternatives): such a node needs a `:type`.  Under the other
    /// keywords of a schema (`:not`, `:additionalProperties`, `:if`...),
    /// which only the argument checker reads, a node is checked for what
    /// the checker needs: known type names, patterns it compiles.
    fn node(&mut self, pairs: &Pairs<'_, '_>, path: &At<'_>, top: bool, read: bool) {
        let ty: Option<&str> = match get(pairs, "type") {
            None if !read => None,
            // No `:type` is no type constraint, as in JSON Schema (a tool
            // read from JSON keeps it so): gptel sends it as it is; llm
            // needs a symbol on a top-level argument, which
            // `toolspec-make-llm-tools' gives it.
            None => {
                let llm =
                    if top { "; llm needs one on an argument (`toolspec-make-llm-tools' gives it one)" } else { "" };
                self.warning(
                    Code::NoType,
                    path.key("type"),
                    format!(
                        "no :type: any value is accepted{llm}; to constrain it add one of string, number, integer, \
                         boolean, array, object, null"
                    ),
                );
                None
            }
            Some(t) => self.type_value(t, &path.key("type")),
        };
        if let Some(e) = get(pairs, "enum").filter(|_| read || ty.is_some()) {
            self.enum_value(e, ty, &path.key("enum"));
        }
        if let Some(p) = get(pairs, "pattern") {
            self.pattern(p, &path.key("pattern"));
        }
        // The keys of `:patternProperties` are regular expressions too.
        if let Some(pp) = get(pairs, "patternProperties").and_then(|v| v.plist_pairs()) {
            let ppath = path.key("patternProperties");
            for (regex, _) in &pp {
                self.pattern(&Node::Str(regex), &ppath.key(regex));
            }
        }
        if !top {
            if let Some(d) = get(pairs, "description") {
                if !matches!(d, Node::Str(_)) {
                    self.error(
                        Code::WrongKind,
                        path.key("description"),
                        format!(":description must be a string, found {}", describe(d)),
                    );
                }
            }
        }
        match (ty, get(pairs, "items")) {
            (Some("array"), None) if read => self.error(
                Code::NoItems,
                path.key("items"),
                "an array needs :items describing its elements, e.g. :items (:type string)",
            ),
            (_, Some(items)) => {
                let ipath = path.key("items");
                if ty.is_some() && ty != Some("array") {
                    self.warning(Code::Misplaced, ipath, ":items only applies to :type array");
                }
                if let Some(p) = self.pairs(items, &ipath, ":items") {
                    self.node(&p, &ipath, false, read);
                }
            }
            _ => {}
        }
        let mut props_seen = Seen::default();
        match (ty, get(pairs, "properties")) {
            (Some("object"), None) if !read => {}
            (Some("object"), None) if get(pairs, "additionalProperties").is_none() && get(pairs, "patternProperties").is_none() => self.warning(Code::NoProperties,
                path.key("properties"),
                "an object without :properties lets the model send anything: describe its keys, e.g. :properties (:key (:type string :description \"...\"))",
            ),
            (_, Some(props)) => {
                let ppath = path.key("properties");
                if ty.is_some() && ty != Some("object") {
                    self.warning(Code::Misplaced, ppath, ":properties only applies to :type object");
                }
                if props.is_nil() {
                    // An empty object: fine.
                } else if let Some(p) = props.plist_pairs() {
                    for (name, sub) in &p {
                        let spath = ppath.key(name);
                        if !props_seen.insert(*name) {
                            self.error(Code::DuplicateProperty, spath, format!("property :{name} is defined twice"));
                        }
                        if let Some(sp) = self.pairs(sub, &spath, "a property's schema") {
                            self.node(&sp, &spath, false, read);
                        }
                    }
                } else {
                    let hint = if props.list_items().is_some_and(|l| l.iter().all(|x| x.plist_pairs().is_some())) {
                        " (a list of arg-style plists was given: write (:key1 (:type ...) :key2 (:type ...)))"
                    } else {
                        ""
                    };
                    self.error(Code::NotPlist, ppath, format!(":properties must be a plist of :key SCHEMA pairs{hint}"));
                }
            }
            _ => {}
        }
        if let Some(req) = get(pairs, "required") {
            let rpath = path.key("required");
            if ty.is_some() && ty != Some("object") {
                self.warning(Code::Misplaced, rpath, ":required only applies to :type object");
            }
            match req {
                Node::Vector(items) => {
                    for (i, r) in items.iter().enumerate() {
                        match r {
                            Node::Str(s) => {
                                // Beside `:if` or `:then`, `:required` names
                                // keys described elsewhere.
                                if (read || !props_seen.names().is_empty()) && !props_seen.contains(*s) {
                                    let known = if props_seen.names().is_empty() {
                                        "there are no :properties".to_string()
                                    } else {
                                        format!("known keys: {}", crate::model::some_names(props_seen.names(), 10))
                                    };
                                    self.error(
                                        Code::UnknownRequired,
                                        rpath.index(i),
                                        format!("\"{s}\" names no key of :properties ({known})"),
                                    );
                                }
                            }
                            other => self.error(
                                Code::WrongKind,
                                rpath.index(i),
                                format!(":required holds strings, found {}{}", describe(other), name_hint(other)),
                            ),
                        }
                    }
                }
                Node::Nil => {}
                other => self.error(
                    Code::WrongKind,
                    rpath,
                    format!(":required must be a vector of strings such as [\"a\" \"b\"], found {}", describe(other)),
                ),
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(alts) = get(pairs, key) {
                let apath = path.key(key);
                match alts.vector_items() {
                    Some(items) => {
                        for (i, a) in items.iter().enumerate() {
                            let ipath = apath.index(i);
                            if let Some(p) = self.pairs(a, &ipath, "a schema") {
                                self.node(&p, &ipath, false, read);
                            }
                        }
                    }
                    None => self.error(Code::WrongKind, apath, format!(":{key} must be a vector of schema plists")),
                }
            }
        }
        self.checked_only(pairs, path);
    }

    /// The schemas under the keywords only the argument checker reads:
    /// each of them, when it is a plist (JSON Schema takes `t` and false
    /// for schemas too), is checked as [`Validator::node`] checks what
    /// gptel and llm do not read.
    fn checked_only(&mut self, pairs: &Pairs<'_, '_>, path: &At<'_>) {
        use crate::schema::{slot, Slot};
        for (key, v) in pairs {
            let slot = slot(key);
            // Data, what `node` checks, or what a reader inlines.
            if slot == Slot::Data
                || matches!(*key, "items" | "properties" | "anyOf" | "oneOf" | "allOf" | "$defs" | "definitions")
            {
                continue;
            }
            let kpath = path.key(key);
            match slot {
                Slot::Single => self.checked_only_node(v, &kpath),
                Slot::Map => {
                    for (name, s) in v.plist_pairs().unwrap_or_default() {
                        self.checked_only_node(s, &kpath.key(name));
                    }
                }
                Slot::List => {
                    for (i, s) in v.vector_items().unwrap_or_default().iter().enumerate() {
                        self.checked_only_node(s, &kpath.index(i));
                    }
                }
                Slot::Data => {}
            }
        }
    }

    /// [`Validator::checked_only`] of one schema, when it is a plist.
    fn checked_only_node(&mut self, v: &Node<'_>, path: &At<'_>) {
        if let Some(p) = v.plist_pairs() {
            self.node(&p, path, false, false);
        }
    }

    fn type_value<'a>(&mut self, t: &Node<'a>, path: &At<'_>) -> Option<&'a str> {
        match t {
            Node::Sym(s) => {
                if TYPES.contains(s) {
                    Some(s)
                } else {
                    let hint = canonical_type(s)
                        .map(|(c, _)| format!(": did you mean `{c}'?"))
                        .unwrap_or_else(|| ": use one of string, number, integer, boolean, array, object, null".into());
                    self.error(Code::UnknownType, path, format!("`{s}' is not a JSON type{hint}"));
                    canonical_type(s).map(|(c, _)| c)
                }
            }
            Node::Str(s) => {
                let sym = canonical_type(s).map_or(*s, |(c, _)| c);
                self.error(
                    Code::BadType,
                    path,
                    format!(":type must be a symbol: write {sym}, not the string \"{s}\" (llm rejects strings)"),
                );
                canonical_type(s).map(|(c, _)| c)
            }
            v if v.quoted().is_some() => {
                let inner = v.quoted().unwrap();
                let name = inner.as_symbol().unwrap_or("...");
                self.error(
                    Code::BadType,
                    path,
                    format!(
                        "'{name} inside an already quoted list reads as (quote {name}): write {name} without the quote"
                    ),
                );
                inner.as_symbol().filter(|s| TYPES.contains(s))
            }
            // A union, as a reader writes it: the type names as strings
            // (gptel sends `:type` as it is; a symbol in a vector has no
            // JSON form).
            Node::Vector(items) => {
                for (i, x) in items.iter().enumerate() {
                    match x {
                        Node::Str(s) if TYPES.contains(s) => {}
                        Node::Str(s) | Node::Sym(s) => {
                            let name = canonical_type(s).map_or(*s, |(c, _)| c);
                            self.error(
                                Code::BadType,
                                path.index(i),
                                format!(
                                    "the types of a union are strings naming JSON types: write \"{name}\" \
                                     (one of string, number, integer, boolean, array, object, null)"
                                ),
                            );
                        }
                        other => self.error(
                            Code::WrongKind,
                            path.index(i),
                            format!("a type name must be a string, found {}", describe(other)),
                        ),
                    }
                }
                if items.is_empty() {
                    self.error(
                        Code::BadType,
                        path,
                        "an empty type union allows no value: give one type, or no :type for any value",
                    );
                }
                None
            }
            other => {
                self.error(
                    Code::WrongKind,
                    path,
                    format!(":type must be a symbol such as string, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// A `:pattern` must be a regular expression the argument checker
    /// takes (ECMA-262, as JSON Schema says), or no call of the tool can
    /// be checked.
    fn pattern(&mut self, p: &Node<'_>, path: &At<'_>) {
        match p {
            Node::Str(s) => match crate::budget::pattern_compiles(s) {
                Some(true) => {}
                Some(false) => self.error(Code::BadPattern,
                    path,
                    format!("{s:?} is not a regular expression the arguments can be checked with (an ECMA-262 one, as JSON Schema says)"),
                ),
                // Past the import's pattern budget: not checked.
                None => {
                    if let Some(m) = crate::budget::pattern_not_checked() {
                        self.warning(Code::PatternNotChecked, path, m);
                    }
                }
            },
            other => self.error(Code::WrongKind, path, format!(":pattern must be a string (a regular expression), found {}", describe(other))),
        }
    }

    fn enum_value(&mut self, e: &Node<'_>, ty: Option<&str>, path: &At<'_>) {
        let items = match e {
            Node::Vector(items) => items,
            other => {
                let as_vec = other
                    .quoted()
                    .unwrap_or(other)
                    .list_items()
                    .map(|l| {
                        let mut s = String::from("[");
                        for (i, x) in l.iter().enumerate() {
                            if i > 0 {
                                s.push(' ');
                            }
                            s.push_str(&x.to_string());
                        }
                        s.push(']');
                        s
                    })
                    .unwrap_or_else(|| "[\"a\" \"b\"]".into());
                self.error(
                    Code::WrongKind,
                    path,
                    format!(":enum must be a vector such as {as_vec}, found {}", describe(other)),
                );
                return;
            }
        };
        if items.is_empty() {
            self.warning(Code::EmptyEnum, path, "an empty :enum allows no value at all");
        }
        for (i, x) in items.iter().enumerate() {
            let ok_for_type = match (x, ty) {
                (Node::Str(_), None | Some("string")) => continue,
                // Without a type (or with a union), any value.
                (_, None) => true,
                (Node::Num(n), Some("integer")) => n.is_i64() || n.is_u64(),
                (Node::Num(n), Some("number")) => n.as_f64().is_some_and(f64::is_finite),
                (Node::Kw("null"), _) => true,
                (Node::Sym("t"), Some("boolean")) => true,
                (Node::Kw("json-false"), Some("boolean")) => true,
                _ => false,
            };
            if ok_for_type {
                self.warning(
                    Code::EnumNotStrings,
                    path.index(i),
                    format!(
                        "gptel and llm expect :enum to hold strings; {} works with providers but not with every client",
                        describe(x)
                    ),
                );
            } else {
                self.error(
                    Code::EnumType,
                    path.index(i),
                    format!(":enum values must match :type {}: found {}", ty.unwrap_or("string"), describe(x)),
                );
            }
        }
    }
}

fn name_hint(v: &Node<'_>) -> String {
    match v {
        Node::Sym(s) => format!(" (write \"{s}\")"),
        Node::Kw(k) => format!(" (write \"{k}\")"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;

    fn problems(text: &str) -> Vec<(Severity, Code, String)> {
        let sexp = crate::plist::parse_sexp(text).unwrap();
        validate(&sexp).into_iter().map(|p| (p.severity, p.code, p.path.to_string())).collect()
    }

    #[test]
    fn problems_have_the_code_of_their_kind() {
        use Code::*;
        use Severity::{Error as E, Warning as W};
        let found = problems(
            "(:name \"getWeather\" :name \"x\" :colour 1 :function t \
             :args ((:type \"string\" :description \"a\") \
                    (:name \"b\" :type object :description \"b\" :properties (:c (:type string) :c (:type integer)) :required [\"c\" \"d\"])))",
        );
        for want in [
            (W, DuplicateKey, "name"),
            (W, UnknownToolKey, "colour"),
            (W, NameStyle, "name"),
            (W, NoDescription, "description"),
            (E, MissingKey, "args[0].name"),
            (E, BadType, "args[0].type"),
            (E, DuplicateProperty, "args[1].properties.c"),
            (E, UnknownRequired, "args[1].required[1]"),
        ] {
            assert!(found.contains(&(want.0, want.1, want.2.to_string())), "{want:?} not in {found:#?}");
        }
        // The name of a code is the symbol Lisp gets.
        assert_eq!(NameStyle.name(), "name-style");
        assert_eq!(UnknownRequired.name(), "unknown-required");
    }

    #[test]
    fn an_operation_s_name_draws_no_style_warning() {
        let style = |text: &str| problems(text).into_iter().filter(|p| p.1 == Code::NameStyle).count();
        let tool = "(:name \"listPets\" :description \"d\" :args nil";
        assert_eq!(style(&format!("{tool})")), 1);
        assert_eq!(style(&format!("{tool} :executor (:type \"openapi\" :method \"GET\"))")), 0);
        assert_eq!(style(&format!("{tool} :executor (:type openapi))")), 0);
        // Another executor's tool is the user's to name.
        assert_eq!(style(&format!("{tool} :executor (:type \"http\"))")), 1);
        // An invalid name stays an error, whoever gave it.
        let found = problems("(:name \"pets.list\" :description \"d\" :args nil :executor (:type \"openapi\"))");
        assert!(found.iter().any(|p| p.1 == Code::InvalidName), "{found:?}");
    }

    #[test]
    fn problem_paths_are_steps() {
        let sexp = crate::plist::parse_sexp(
            "(:name \"x\" :description \"d\" :args ((:name \"a\" :type array :description \"a\")))",
        )
        .unwrap();
        let p = validate(&sexp);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].code, Code::NoItems);
        assert_eq!(
            p[0].path.steps(),
            [
                crate::path::Step::Key("args".into()),
                crate::path::Step::Index(0),
                crate::path::Step::Key("items".into())
            ]
        );
        assert_eq!(p[0].path, "args[0].items");
    }
}
