//! Validation of a gptel/llm tool plist against the rules of the shared gptel/llm tool format and
//! what gptel, llm and the providers accept.  Returns every problem, each
//! with its path (`args[2].items.properties.r.type`) and a message that
//! says what would be right.
//!
//! `:function` is described by the module layer, which alone can look at
//! a Lisp function: `(toolspec-function CALLABLE MIN-ARITY MAX-ARITY)`,
//! MAX-ARITY an integer or `many`.

use std::collections::HashSet;

use lexpr::Value as Sexp;

use crate::model::{index, join, Problem};
use crate::plist::{is_nil, list_items, plist_pairs, quoted};
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
    let mut v = Validator { problems: Vec::new() };
    v.tool(tool);
    v.problems
}

struct Validator {
    problems: Vec<Problem>,
}

fn describe(v: &Sexp) -> String {
    match v {
        Sexp::String(s) => format!("the string \"{s}\""),
        Sexp::Symbol(s) => format!("the symbol `{s}'"),
        Sexp::Keyword(k) => format!("the keyword :{k}"),
        Sexp::Number(n) => format!("the number {n}"),
        Sexp::Vector(_) => "a vector".into(),
        Sexp::Null | Sexp::Nil => "nil".into(),
        Sexp::Cons(_) if quoted(v).is_some() => "a quoted form".into(),
        Sexp::Cons(_) => "a list".into(),
        _ => "a value of another type".into(),
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
    fn error(&mut self, path: impl Into<String>, msg: impl Into<String>) {
        self.problems.push(Problem::error(path, msg));
    }
    fn warning(&mut self, path: impl Into<String>, msg: impl Into<String>) {
        self.problems.push(Problem::warning(path, msg));
    }

    fn pairs<'v>(&mut self, v: &'v Sexp, path: &str, what: &str) -> Option<Vec<(&'v str, &'v Sexp)>> {
        match plist_pairs(v) {
            Some(p) => {
                let mut seen: HashSet<&str> = HashSet::new();
                for (k, _) in &p {
                    if !seen.insert(*k) {
                        self.warning(join(path, k), format!(":{k} appears twice: only the first is used"));
                    }
                }
                Some(p)
            }
            None => {
                self.error(
                    path,
                    format!("{what} must be a plist of keywords and values, found {}", describe(v)),
                );
                None
            }
        }
    }

    fn tool(&mut self, tool: &Sexp) {
        let Some(pairs) = self.pairs(tool, "", "a tool spec") else { return };
        let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        for (k, _) in &pairs {
            if !TOOL_KEYS.contains(k) {
                let hint = TOOL_KEYS
                    .iter()
                    .find(|known| known.starts_with(&k[..k.char_indices().nth(3).map_or(k.len(), |(i, _)| i)]))
                    .map(|known| format!(" (did you mean :{known}?)"))
                    .unwrap_or_default();
                self.warning(*k, format!(":{k} is not a tool key gptel or llm uses{hint}"));
            }
        }
        match get("name") {
            None => self.error("name", "missing :name: every tool needs a name string such as \"get_weather\""),
            Some(Sexp::String(n)) => {
                if !name_is_valid(n) {
                    self.error(
                        "name",
                        format!(
                            "\"{n}\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{{1,64}}$, e.g. \"{}\"",
                            sanitize_name(n)
                        ),
                    );
                } else if !is_snake_case(n) {
                    self.warning("name", format!("\"{n}\" is not snake_case, which is recommended"));
                }
            }
            Some(other) => self.error("name", format!(":name must be a string, found {}", describe(other))),
        }
        match get("description") {
            None => self.warning("description", "no :description: the model chooses tools by their description"),
            Some(Sexp::String(_)) => {}
            Some(other) => self.error("description", format!(":description must be a string, found {}", describe(other))),
        }
        let async_ = match get("async") {
            None => false,
            Some(v) if is_nil(v) => false,
            Some(Sexp::Symbol(s)) if &**s == "t" => true,
            Some(other) => {
                self.warning("async", format!(":async should be t or nil, found {}", describe(other)));
                true
            }
        };
        let nargs = match get("args") {
            None => 0,
            Some(args) => self.args(args),
        };
        if let Some(f) = get("function") {
            self.function(f, nargs, async_);
        }
        if let Some(c) = get("category") {
            if !matches!(c, Sexp::String(_)) {
                self.error("category", format!(":category must be a string, found {}", describe(c)));
            }
        }
    }

    fn function(&mut self, f: &Sexp, nargs: usize, async_: bool) {
        let info = list_items(f).filter(|i| i.first().and_then(|s| s.as_symbol()) == Some("toolspec-function"));
        let Some(info) = info else { return };
        let name = info.get(4).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
        match info.get(1) {
            Some(Sexp::Symbol(s)) if &**s == "unbound" => {
                self.warning(
                    "function",
                    format!("`{}' is not defined (yet): define it before the tool is called", name.unwrap_or("?")),
                );
                return;
            }
            Some(v) if !is_nil(v) => {}
            _ => {
                self.error("function", ":function is not callable: give a function, e.g. #'my-tool-function or (lambda (x) ...)");
                return;
            }
        }
        let min = info.get(2).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        let max = info.get(3).and_then(|v| v.as_u64()).map(|m| m as usize); // None: &rest
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
                "function",
                format!(
                    "with :async t the function is called with a callback first, then {nargs} argument(s), \
                     so it must take {needed}; it takes {takes}"
                ),
            );
        } else {
            self.error(
                "function",
                format!("the function takes {takes} argument(s) but :args declares {nargs}: gptel passes one value per arg, in order"),
            );
        }
    }

    /// Check `:args`; returns how many arguments there are.
    fn args(&mut self, args: &Sexp) -> usize {
        let Some(items) = list_items(args) else {
            let hint = if args.is_vector() { " (a vector was given: use a list)" } else { "" };
            self.error("args", format!(":args must be a list of argument plists{hint}, e.g. (list '(:name \"x\" :type string :description \"...\"))"));
            return args.as_slice().map_or(0, |s| s.len());
        };
        let mut names: HashSet<String> = HashSet::new();
        for (i, arg) in items.iter().enumerate() {
            let path = index("args", i);
            let Some(pairs) = self.pairs(arg, &path, "an argument") else { continue };
            let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
            match get("name") {
                None => self.error(join(&path, "name"), "missing :name: every argument needs a name string"),
                Some(Sexp::String(n)) => {
                    if !names.insert(n.to_string()) {
                        self.error(join(&path, "name"), format!("duplicate argument name \"{n}\": names must be unique"));
                    }
                }
                Some(other) => self.error(join(&path, "name"), format!(":name must be a string, found {}", describe(other))),
            }
            match get("description") {
                None => self.warning(
                    join(&path, "description"),
                    "missing :description: gptel and llm require one, and the model relies on it",
                ),
                Some(Sexp::String(_)) => {}
                Some(other) => {
                    self.error(join(&path, "description"), format!(":description must be a string, found {}", describe(other)))
                }
            }
            if let Some(o) = get("optional") {
                if !is_nil(o) && o.as_symbol() != Some("t") {
                    self.warning(join(&path, "optional"), format!(":optional should be t or nil, found {}", describe(o)));
                }
            }
            self.node(&pairs, &path, true);
        }
        items.len()
    }

    /// Check one schema node given as plist pairs.
    fn node(&mut self, pairs: &[(&str, &Sexp)], path: &str, top: bool) {
        let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let ty: Option<&str> = match get("type") {
            None => {
                let combinator = ["anyOf", "oneOf", "allOf", "$ref", "const"].iter().any(|k| get(k).is_some());
                let msg = "missing :type: add one of string, number, integer, boolean, array, object, null";
                if combinator {
                    self.warning(join(path, "type"), format!("{msg} (gptel and llm need a :type even beside :anyOf)"));
                } else {
                    self.error(join(path, "type"), msg);
                }
                None
            }
            Some(t) => self.type_value(t, &join(path, "type")),
        };
        if let Some(e) = get("enum") {
            self.enum_value(e, ty, &join(path, "enum"));
        }
        if !top {
            if let Some(d) = get("description") {
                if !matches!(d, Sexp::String(_)) {
                    self.error(join(path, "description"), format!(":description must be a string, found {}", describe(d)));
                }
            }
        }
        match (ty, get("items")) {
            (Some("array"), None) => {
                self.error(join(path, "items"), "an array needs :items describing its elements, e.g. :items (:type string)")
            }
            (_, Some(items)) => {
                if ty.is_some() && ty != Some("array") {
                    self.warning(join(path, "items"), ":items only applies to :type array");
                }
                if let Some(p) = self.pairs(items, &join(path, "items"), ":items") {
                    self.node(&p, &join(path, "items"), false);
                }
            }
            _ => {}
        }
        let mut prop_names: Vec<&str> = Vec::new();
        let mut prop_set: HashSet<&str> = HashSet::new();
        match (ty, get("properties")) {
            (Some("object"), None) if get("additionalProperties").is_none() && get("patternProperties").is_none() => self.warning(
                join(path, "properties"),
                "an object without :properties lets the model send anything: describe its keys, e.g. :properties (:key (:type string :description \"...\"))",
            ),
            (_, Some(props)) => {
                let ppath = join(path, "properties");
                if ty.is_some() && ty != Some("object") {
                    self.warning(&ppath, ":properties only applies to :type object");
                }
                if is_nil(props) {
                    // An empty object: fine.
                } else if let Some(p) = plist_pairs(props) {
                    for (name, sub) in &p {
                        let spath = join(&ppath, name);
                        if prop_set.insert(name) {
                            prop_names.push(name);
                        } else {
                            self.error(&spath, format!("property :{name} is defined twice"));
                        }
                        if let Some(sp) = self.pairs(sub, &spath, "a property's schema") {
                            self.node(&sp, &spath, false);
                        }
                    }
                } else {
                    let hint = if list_items(props).is_some_and(|l| l.iter().all(|x| plist_pairs(x).is_some())) {
                        " (a list of arg-style plists was given: write (:key1 (:type ...) :key2 (:type ...)))"
                    } else {
                        ""
                    };
                    self.error(&ppath, format!(":properties must be a plist of :key SCHEMA pairs{hint}"));
                }
            }
            _ => {}
        }
        if let Some(req) = get("required") {
            let rpath = join(path, "required");
            if ty.is_some() && ty != Some("object") {
                self.warning(&rpath, ":required only applies to :type object");
            }
            match req {
                Sexp::Vector(items) => {
                    for (i, r) in items.iter().enumerate() {
                        match r {
                            Sexp::String(s) => {
                                if !prop_set.contains(&**s) {
                                    let known = if prop_names.is_empty() {
                                        "there are no :properties".to_string()
                                    } else {
                                        format!("known keys: {}", crate::model::some_names(&prop_names, 10))
                                    };
                                    self.error(index(&rpath, i), format!("\"{s}\" names no key of :properties ({known})"));
                                }
                            }
                            other => self.error(
                                index(&rpath, i),
                                format!(":required holds strings, found {}{}", describe(other), name_hint(other)),
                            ),
                        }
                    }
                }
                v if is_nil(v) => {}
                other => self.error(
                    &rpath,
                    format!(":required must be a vector of strings such as [\"a\" \"b\"], found {}", describe(other)),
                ),
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(alts) = get(key) {
                let apath = join(path, key);
                match alts.as_slice() {
                    Some(items) => {
                        for (i, a) in items.iter().enumerate() {
                            if let Some(p) = self.pairs(a, &index(&apath, i), "a schema") {
                                self.node(&p, &index(&apath, i), false);
                            }
                        }
                    }
                    None => self.error(&apath, format!(":{key} must be a vector of schema plists")),
                }
            }
        }
    }

    fn type_value<'v>(&mut self, t: &'v Sexp, path: &str) -> Option<&'v str> {
        match t {
            Sexp::Symbol(s) => {
                if TYPES.contains(&&**s) {
                    Some(s)
                } else {
                    let hint = canonical_type(s).map(|(c, _)| format!(": did you mean `{c}'?")).unwrap_or_else(|| {
                        ": use one of string, number, integer, boolean, array, object, null".into()
                    });
                    self.error(path, format!("`{s}' is not a JSON type{hint}"));
                    canonical_type(s).map(|(c, _)| c)
                }
            }
            Sexp::String(s) => {
                let sym = canonical_type(s).map_or(s.as_ref(), |(c, _)| c);
                self.error(
                    path,
                    format!(":type must be a symbol: write {sym}, not the string \"{s}\" (llm rejects strings)"),
                );
                canonical_type(s).map(|(c, _)| c)
            }
            v if quoted(v).is_some() => {
                let inner = quoted(v).unwrap();
                let name = inner.as_symbol().unwrap_or("...");
                self.error(
                    path,
                    format!("'{name} inside an already quoted list reads as (quote {name}): write {name} without the quote"),
                );
                inner.as_symbol().filter(|s| TYPES.contains(s))
            }
            Sexp::Vector(_) => {
                self.error(path, "a type union cannot be a :type: use one symbol, with :nullable t for null, or :anyOf");
                None
            }
            other => {
                self.error(path, format!(":type must be a symbol such as string, found {}", describe(other)));
                None
            }
        }
    }

    fn enum_value(&mut self, e: &Sexp, ty: Option<&str>, path: &str) {
        if ty.is_none() {
            self.error(path, ":enum needs a :type beside it (e.g. :type string)");
        }
        let items = match e {
            Sexp::Vector(items) => items,
            other => {
                let as_vec = list_items(quoted(other).unwrap_or(other))
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
                self.error(path, format!(":enum must be a vector such as {as_vec}, found {}", describe(other)));
                return;
            }
        };
        if items.is_empty() {
            self.warning(path, "an empty :enum allows no value at all");
        }
        for (i, x) in items.iter().enumerate() {
            let ok_for_type = match (x, ty) {
                (Sexp::String(_), None | Some("string")) => continue,
                (Sexp::Number(n), Some("integer")) => n.is_i64() || n.is_u64(),
                (Sexp::Number(_), Some("number")) => true,
                (Sexp::Keyword(k), _) if &**k == "null" => true,
                (Sexp::Symbol(s), Some("boolean")) if &**s == "t" => true,
                (Sexp::Keyword(k), Some("boolean")) if &**k == "json-false" => true,
                _ => false,
            };
            if ok_for_type {
                self.warning(
                    index(path, i),
                    format!("gptel and llm expect :enum to hold strings; {} works with providers but not with every client", describe(x)),
                );
            } else {
                self.error(
                    index(path, i),
                    format!(":enum values must match :type {}: found {}", ty.unwrap_or("string"), describe(x)),
                );
            }
        }
    }
}

fn name_hint(v: &Sexp) -> String {
    match v {
        Sexp::Symbol(s) => format!(" (write \"{s}\")"),
        Sexp::Keyword(k) => format!(" (write \"{k}\")"),
        _ => String::new(),
    }
}
