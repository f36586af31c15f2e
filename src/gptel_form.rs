//! `(gptel-make-tool ...)` source text for a tool plist, laid out as a
//! person would write it and indented as Emacs's `indent-region` would
//! indent it, so that the text is stable in an Emacs Lisp buffer.  This
//! is the one generator behind `toolspec-gptel-form-text` (and
//! `toolspec-gptel-form`, which reads its text) and `toolspec convert
//! --to elisp`.
//!
//! Layout: one key per line in the call; `:args` as a `list` of quoted
//! argument plists, one per line.  A plist that fits within
//! [`WIDTH`] columns stays on one line; a longer one puts one key and
//! value per line, aligned under its first value as Emacs aligns the
//! arguments of a call.  Vectors that do not fit put one element per
//! line.

use lexpr::Value as Sexp;

use crate::error::{Error, ErrorKind, Result};
use crate::plist::{plist_pairs, print_keyword, print_string, print_symbol};
use crate::validate;

/// Lines are kept within this many columns where the values allow.
pub const WIDTH: usize = 79;

/// Tool keys written into the form besides `:name`, `:function`,
/// `:description` and `:args`, when the plist has them: the ones
/// `gptel-make-tool` takes.
const GPTEL_KEYS: &[&str] = &["category", "async", "confirm", "include"];

/// What goes into the form besides the tool plist.
#[derive(Debug, Clone, Default)]
pub struct FormOptions<'a> {
    /// Source text of the `:function` value, e.g. `#'my-weather-function`;
    /// empty for `#'ignore`.
    pub function: &'a str,
    /// `:category`, overriding the plist's.
    pub category: Option<&'a str>,
    /// Precede the form with comments listing the tool's problems.
    pub comments: bool,
    /// Precede the form with a comment saying to define the function
    /// (when `function` is `#'NAME`): it is a placeholder.
    pub define: bool,
}

/// The source text of a `gptel-make-tool` form for `tool`, a tool plist,
/// ending with a newline.
pub fn gptel_form(tool: &Sexp, opts: &FormOptions) -> Result<String> {
    let pairs = plist_pairs(tool).ok_or_else(|| {
        Error::new(ErrorKind::Plist, "a tool must be a plist (:name \"...\" :description \"...\" :args (...))")
    })?;
    let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let function = if opts.function.is_empty() { "#'ignore" } else { opts.function };
    let mut p = Printer::default();
    if opts.define {
        let name = get("name").map_or_else(|| "tool".into(), |n| n.as_str().map_or_else(|| flat(n), String::from));
        if let Some(f) = function.strip_prefix("#'").filter(|f| !f.contains(char::is_whitespace)) {
            let args: Vec<String> = get("args")
                .and_then(crate::plist::list_items)
                .unwrap_or_default()
                .iter()
                .filter_map(|a| plist_pairs(a)?.into_iter().find(|(k, _)| *k == "name").map(|(_, v)| v))
                .map(|v| v.as_str().map_or_else(|| flat(v), String::from))
                .collect();
            p.put(&format!(";; {name}: define `{f}', e.g.\n;;   (defun {f} ({})\n;;     ...)\n", args.join(" ")));
        }
    }
    if opts.comments {
        for problem in validate::validate(tool) {
            let text = if problem.path.is_empty() {
                format!("{}: {}", problem.severity.as_str(), problem.message)
            } else {
                format!("{}: {}: {}", problem.severity.as_str(), problem.path, problem.message)
            };
            for line in text.lines() {
                p.put(&format!(";; {line}\n"));
            }
        }
    }
    p.put("(gptel-make-tool");
    let key = |p: &mut Printer, k: &str| {
        p.newline(1);
        let mut s = String::new();
        print_keyword(k, &mut s);
        s.push(' ');
        p.put(&s);
    };
    if let Some(n) = get("name") {
        key(&mut p, "name");
        p.value(n);
    }
    key(&mut p, "function");
    p.put(function);
    if let Some(d) = get("description").filter(|d| !is_nil(d)) {
        key(&mut p, "description");
        p.value(d);
    }
    for k in GPTEL_KEYS {
        if *k == "category" {
            if let Some(c) = opts.category {
                key(&mut p, k);
                p.value(&Sexp::string(c));
                continue;
            }
        }
        if let Some(v) = get(k).filter(|v| !is_nil(v)) {
            key(&mut p, k);
            p.value(v);
        }
    }
    if let Some(args) = get("args").filter(|a| !is_nil(a)) {
        key(&mut p, "args");
        match crate::plist::list_items(args) {
            Some(items) => {
                p.put("(list ");
                let align = p.col;
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        p.newline(align);
                    }
                    p.put("'");
                    p.value(a);
                }
                p.put(")");
            }
            None => p.value(args),
        }
    }
    p.put(")\n");
    Ok(p.out)
}

fn is_nil(v: &Sexp) -> bool {
    matches!(v, Sexp::Null | Sexp::Nil)
}

/// One value on one line, as `prin1` prints it (`'X` for `(quote X)`).
pub fn flat(v: &Sexp) -> String {
    let mut out = String::new();
    print_flat(v, &mut out);
    out
}

/// `(quote X)` and `(function X)`: the prefix and X.
fn quoted(v: &Sexp) -> Option<(&'static str, &Sexp)> {
    let items = crate::plist::list_items(v)?;
    match (items.first()?.as_symbol()?, items.len()) {
        ("quote", 2) => Some(("'", items[1])),
        ("function", 2) => Some(("#'", items[1])),
        _ => None,
    }
}

fn print_flat(v: &Sexp, out: &mut String) {
    match v {
        Sexp::Null | Sexp::Nil | Sexp::Bool(false) => out.push_str("nil"),
        Sexp::Bool(true) => out.push('t'),
        Sexp::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.is_nan() {
                    out.push_str("0.0e+NaN");
                } else if f.is_infinite() {
                    out.push_str(if f > 0.0 { "1.0e+INF" } else { "-1.0e+INF" });
                } else {
                    out.push_str(&format!("{f:?}"));
                }
            }
        }
        Sexp::Char(c) => out.push_str(&(*c as u32).to_string()),
        Sexp::String(s) => print_string(s, out),
        Sexp::Bytes(b) => print_string(&String::from_utf8_lossy(b), out),
        Sexp::Symbol(s) => print_symbol(s, out),
        Sexp::Keyword(k) => print_keyword(k, out),
        Sexp::Vector(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_flat(x, out);
            }
            out.push(']');
        }
        Sexp::Cons(c) => {
            if let Some((prefix, x)) = quoted(v) {
                out.push_str(prefix);
                print_flat(x, out);
                return;
            }
            let (items, tail) = c.to_ref_vec();
            out.push('(');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_flat(x, out);
            }
            if !is_nil(tail) {
                out.push_str(" . ");
                print_flat(tail, out);
            }
            out.push(')');
        }
    }
}

/// `v` is a list or vector that fits on one line from column `col`.
fn fits(v: &Sexp, col: usize) -> bool {
    let t = flat(v);
    matches!(v, Sexp::Cons(_) | Sexp::Vector(_)) && !t.contains('\n') && col + t.chars().count() <= WIDTH
}

#[derive(Default)]
struct Printer {
    out: String,
    /// Column of the end of `out`, in characters.
    col: usize,
}

impl Printer {
    fn put(&mut self, s: &str) {
        self.out.push_str(s);
        match s.rfind('\n') {
            Some(i) => self.col = s[i + 1..].chars().count(),
            None => self.col += s.chars().count(),
        }
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.col = indent;
    }

    /// `v` starting at the current column, broken over lines when it does
    /// not fit, indented as Emacs indents.
    fn value(&mut self, v: &Sexp) {
        let text = flat(v);
        if !text.contains('\n') && self.col + text.chars().count() <= WIDTH {
            self.put(&text);
            return;
        }
        if let Some((prefix, x)) = quoted(v) {
            self.put(prefix);
            self.value(x);
            return;
        }
        match v {
            Sexp::Vector(items) if !items.is_empty() => {
                // Elements fill lines, aligned under the first.
                self.put("[");
                let align = self.col;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        let t = flat(x);
                        if !t.contains('\n') && self.col + 1 + t.chars().count() < WIDTH {
                            self.put(" ");
                        } else {
                            self.newline(align);
                        }
                    }
                    self.value(x);
                }
                self.put("]");
            }
            Sexp::Cons(c) => {
                let (items, tail) = c.to_ref_vec();
                if !is_nil(tail) {
                    self.put(&text);
                    return;
                }
                self.put("(");
                let start = self.col;
                match plist_pairs(v) {
                    Some(pairs) => {
                        // Emacs aligns the lines of a list whose head is a
                        // symbol (a keyword here) under its second element.
                        let mut align = 0;
                        for (i, (k, x)) in pairs.iter().enumerate() {
                            if i > 0 {
                                self.newline(align);
                            }
                            let mut key = String::new();
                            print_keyword(k, &mut key);
                            key.push(' ');
                            self.put(&key);
                            if i == 0 {
                                align = self.col;
                            } else if self.col + flat(x).chars().count() > WIDTH && fits(x, align) {
                                // A list too long after its key but not on a
                                // line of its own: there, under the key.
                                self.newline(align);
                            }
                            self.value(x);
                        }
                    }
                    None if items.first().is_some_and(|h| h.as_symbol().is_some()) && items.len() > 1 => {
                        // A call-like list: head and first element on the
                        // first line, the rest under the first element.
                        self.put(&flat(items[0]));
                        self.put(" ");
                        let align = self.col;
                        for (i, x) in items[1..].iter().enumerate() {
                            if i > 0 {
                                self.newline(align);
                            }
                            self.value(x);
                        }
                    }
                    None => {
                        for (i, x) in items.iter().enumerate() {
                            if i > 0 {
                                self.newline(start);
                            }
                            self.value(x);
                        }
                    }
                }
                self.put(")");
            }
            _ => self.put(&text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plist::parse_sexp;

    fn form(plist: &str, opts: &FormOptions) -> String {
        gptel_form(&parse_sexp(plist).unwrap(), opts).unwrap()
    }

    #[test]
    fn short_arguments_stay_on_one_line() {
        let text = form(
            r#"(:name "get_weather" :description "Weather" :args ((:name "city" :type string :description "City")) :schema-extra (:additionalProperties :json-false))"#,
            &FormOptions { function: "#'my-weather", ..FormOptions::default() },
        );
        assert_eq!(
            text,
            "(gptel-make-tool\n :name \"get_weather\"\n :function #'my-weather\n :description \"Weather\"\n \
             :args (list '(:name \"city\" :type string :description \"City\")))\n"
        );
    }

    #[test]
    fn long_plists_and_vectors_break_as_emacs_indents() {
        let long = "x".repeat(70);
        let text = form(
            &format!(
                r#"(:name "t" :async t :args ((:name "a" :type string :enum ["{long}" "b"] :description "A" :optional t) (:name "b" :type 'string)))"#
            ),
            &FormOptions::default(),
        );
        let expected = format!(
            "(gptel-make-tool\n :name \"t\"\n :function #'ignore\n :async t\n :args (list '(:name \"a\"\n                     :type string\n                     :enum [\"{long}\"\n                            \"b\"]\n                     :description \"A\"\n                     :optional t)\n             '(:name \"b\" :type 'string)))\n"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn comments_name_the_function_and_the_problems() {
        let text = form(
            r#"(:name "t" :description "D" :args ((:name "q" :type "string" :description "Q") (:name "r" :type integer :description "R")))"#,
            &FormOptions { function: "#'my-t", category: Some("cat"), comments: true, define: true },
        );
        assert!(text.starts_with(
            ";; t: define `my-t', e.g.\n;;   (defun my-t (q r)\n;;     ...)\n;; error: args[0].type: :type must be a symbol"
        ), "{text}");
        assert!(text.contains("\n :category \"cat\"\n"), "{text}");
        assert!(text.ends_with(")))\n"));
    }

    #[test]
    fn multi_line_strings_end_their_line() {
        let text = form(r#"(:name "t" :description "line one
line two" :args ((:name "q" :type string :description "a
b" :optional t)))"#, &FormOptions::default());
        assert!(text.contains(" :args (list '(:name \"q\"\n                     :type string\n                     :description \"a\nb\"\n                     :optional t)))"), "{text}");
    }
}
