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
use crate::plist::{parse_sexp, plist_pairs, print_keyword, print_string, print_symbol};
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

/// [`gptel_form`] of the tool plist printed by Emacs as `text`.
pub fn gptel_form_of_text(text: &str, opts: &FormOptions) -> Result<String> {
    let sexp = parse_sexp(text)?;
    let r = gptel_form(&sexp, opts);
    crate::plist::dispose(sexp);
    r
}

/// The source text of a `gptel-make-tool` form for `tool`, a tool plist,
/// ending with a newline.
pub fn gptel_form(tool: &Sexp, opts: &FormOptions) -> Result<String> {
    let pairs = plist_pairs(tool).ok_or_else(|| {
        Error::new(ErrorKind::Plist, "a tool must be a plist (:name \"...\" :description \"...\" :args (...))")
    })?;
    let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let function = function_text(opts.function)?;
    let mut p = Printer::default();
    if opts.define {
        let name = get("name").map_or_else(|| "tool".into(), |n| n.as_str().map_or_else(|| flat(n), String::from));
        if let Some(f) = function.strip_prefix("#'").filter(|f| !f.contains(char::is_whitespace)) {
            let args: Vec<String> = get("args")
                .and_then(crate::plist::list_items)
                .unwrap_or_default()
                .iter()
                .filter_map(|a| plist_pairs(a)?.into_iter().find(|(k, _)| *k == "name").map(|(_, v)| v))
                .map(|v| match v.as_str() {
                    Some(s) => {
                        let mut out = String::new();
                        print_symbol(s, &mut out);
                        out
                    }
                    None => flat(v),
                })
                .collect();
            p.put(&format!(
                ";; {}: define `{}', e.g.\n;;   (defun {} ({})\n;;     ...)\n",
                comment_text(&name),
                comment_text(f),
                comment_text(f),
                comment_text(&args.join(" "))
            ));
        }
    }
    if opts.comments {
        for problem in validate::validate(tool) {
            let text = if problem.path.is_empty() {
                format!("{}: {}", problem.severity.as_str(), problem.message)
            } else {
                format!("{}: {}: {}", problem.severity.as_str(), problem.path, problem.message)
            };
            p.put(&format!(";; {}\n", comment_text(&text)));
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
    p.put(&function);
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
                    p.quoted(a);
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

/// `s` as the text of one comment line that says nothing to Emacs: line
/// breaks and other control characters escaped (`\n`, `\N{U+0}`), and
/// neither a `-*-` line nor a `Local Variables:` list (whose `coding:`
/// would have the file decoded otherwise, and comments end elsewhere).
pub fn comment_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\N{{U+{:X}}}", c as u32));
            }
            ':' if crate::plist::ends_with_local_variables(&out) => out.push_str("\\:"),
            _ => out.push(c),
        }
    }
    while out.contains("-*-") {
        out = out.replace("-*-", "-\\*-");
    }
    out
}

/// Where a value is printed: as the value of a key of the call (a list
/// there is quoted: it is data, not a call to run), as code given as
/// code (`:function`'s), or inside quoted or backquoted data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Code,
    Raw,
    Quoted,
    Backquoted,
}

/// A symbol name that cannot be written as it is: a control character
/// other than tab.  A NUL or an ESC would change how `load` decodes the
/// file; after a newline (escaped, `\` then the newline), `indent-region`
/// would indent the rest of the name into a symbol of its own.  Such a
/// symbol is written `(intern "NAME")`.
fn unwritable(name: &str) -> bool {
    name.chars().any(|c| c < ' ' && c != '\t')
}

/// Whether `v` holds a symbol [`unwritable`] as it is.
fn needs_intern(v: &Sexp) -> bool {
    match v {
        Sexp::Symbol(s) => unwritable(s),
        Sexp::Keyword(k) => unwritable(k),
        Sexp::Vector(items) => items.iter().any(needs_intern),
        Sexp::Cons(c) => {
            let (items, tail) = c.to_ref_vec();
            items.into_iter().any(needs_intern) || needs_intern(tail)
        }
        _ => false,
    }
}

/// Symbol `name` (a keyword's with its colon when `keyword`) as `prin1`
/// prints it, or as `(intern "NAME")` (`,(intern ...)` in backquoted data)
/// when it is [`unwritable`].
fn print_name(name: &str, keyword: bool, ctx: Ctx, out: &mut String) {
    if !unwritable(name) {
        if keyword {
            print_keyword(name, out);
        } else {
            print_symbol(name, out);
        }
        return;
    }
    if ctx == Ctx::Backquoted {
        out.push(',');
    }
    out.push_str("(intern ");
    let full = if keyword { format!(":{name}") } else { name.to_string() };
    print_string(&full, out);
    out.push(')');
}

/// The text of `:function`: `#'ignore` for none.  Text that would not
/// load as it reads once indented (control characters but tab, a local
/// variables list) is printed again from what it reads as.
fn function_text(f: &str) -> Result<String> {
    if f.is_empty() {
        return Ok("#'ignore".into());
    }
    let lower = f.to_ascii_lowercase();
    if !f.chars().any(|c| c < ' ' && c != '\t') && !lower.contains("local variables:") {
        return Ok(f.into());
    }
    // `#'X` is X here: a symbol is made with `intern`, which Emacs calls
    // as it calls `#'X`.
    let function = f.strip_prefix("#'");
    let v = parse_sexp(function.unwrap_or(f))?;
    let mut out = String::new();
    match &v {
        Sexp::Symbol(s) if function.is_some() && !unwritable(s) => {
            out.push_str("#'");
            print_symbol(s, &mut out);
        }
        _ => print_flat(&v, &mut out, Ctx::Raw),
    }
    crate::plist::dispose(v);
    Ok(out)
}

/// One value on one line, as `prin1` prints it (`'X` for `(quote X)`).
pub fn flat(v: &Sexp) -> String {
    let mut out = String::new();
    print_flat(v, &mut out, Ctx::Quoted);
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

fn print_flat(v: &Sexp, out: &mut String, ctx: Ctx) {
    let code = matches!(ctx, Ctx::Code | Ctx::Raw);
    if code && matches!(v, Sexp::Cons(_) | Sexp::Vector(_)) && quoted(v).is_none() {
        if needs_intern(v) {
            out.push('`');
            print_flat(v, out, Ctx::Backquoted);
            return;
        }
        if ctx == Ctx::Code && matches!(v, Sexp::Cons(_)) {
            out.push('\'');
            print_flat(v, out, Ctx::Quoted);
            return;
        }
    }
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
        Sexp::Symbol(s) => print_name(s, false, ctx, out),
        Sexp::Keyword(k) => print_name(k, true, ctx, out),
        Sexp::Vector(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_flat(x, out, ctx);
            }
            out.push(']');
        }
        Sexp::Cons(c) => {
            if let Some((prefix, x)) = quoted(v) {
                match ctx {
                    // Code: what follows is data, backquoted when it
                    // holds a symbol written with `intern`.
                    Ctx::Code | Ctx::Raw if needs_intern(x) => {
                        if prefix == "'" && !matches!(x, Sexp::Symbol(_) | Sexp::Keyword(_)) {
                            out.push('`');
                            print_flat(x, out, Ctx::Backquoted);
                        } else {
                            print_flat(x, out, ctx);
                        }
                    }
                    Ctx::Code | Ctx::Raw => {
                        out.push_str(prefix);
                        print_flat(x, out, Ctx::Quoted);
                    }
                    _ => {
                        out.push_str(prefix);
                        print_flat(x, out, ctx);
                    }
                }
                return;
            }
            let (items, tail) = c.to_ref_vec();
            out.push('(');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_flat(x, out, ctx);
            }
            if !is_nil(tail) {
                out.push_str(" . ");
                print_flat(tail, out, ctx);
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

struct Printer {
    out: String,
    /// Column of the end of `out`, in characters.
    col: usize,
    /// Where the value being printed is.
    ctx: Ctx,
}

impl Default for Printer {
    fn default() -> Self {
        Printer { out: String::new(), col: 0, ctx: Ctx::Code }
    }
}

impl Printer {
    /// `v` as quoted data: `'V`, or `` `V `` when it holds a symbol
    /// written with `intern`.
    fn quoted(&mut self, v: &Sexp) {
        let ctx = self.ctx;
        if needs_intern(v) {
            self.put("`");
            self.ctx = Ctx::Backquoted;
        } else {
            self.put("'");
            self.ctx = Ctx::Quoted;
        }
        self.value(v);
        self.ctx = ctx;
    }

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
        let mut text = String::new();
        print_flat(v, &mut text, self.ctx);
        let one_line = !text.contains('\n') && self.col + text.chars().count() <= WIDTH;
        if one_line || (self.ctx == Ctx::Code && needs_intern(v)) {
            self.put(&text);
            return;
        }
        if self.ctx == Ctx::Code && matches!(v, Sexp::Cons(_)) && quoted(v).is_none() {
            // A list as a key's value is data: quoted, not a call.
            self.quoted(v);
            return;
        }
        if let Some((prefix, x)) = quoted(v) {
            self.put(prefix);
            let ctx = self.ctx;
            if ctx == Ctx::Code {
                self.ctx = Ctx::Quoted;
            }
            self.value(x);
            self.ctx = ctx;
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
                            print_name(k, true, self.ctx, &mut key);
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
        let text = form(
            r#"(:name "t" :description "line one
line two" :args ((:name "q" :type string :description "a
b" :optional t)))"#,
            &FormOptions::default(),
        );
        assert!(text.contains(" :args (list '(:name \"q\"\n                     :type string\n                     :description \"a\nb\"\n                     :optional t)))"), "{text}");
    }

    /// Names that would end a comment, or change how `load` decodes the
    /// file, are escaped in comments and written with `intern` in code;
    /// the text reads back to the same names.
    #[test]
    fn hostile_names_stay_in_their_comments_and_read_back() {
        let tool = Sexp::list(vec![
            Sexp::keyword("name"),
            Sexp::string("t\n(setq pwned t)\n-*- coding: utf-7 -*-"),
            Sexp::keyword("description"),
            Sexp::string("d\nLocal Variables:\ncoding: utf-7\r\u{1b}$B\0"),
            Sexp::keyword("args"),
            Sexp::list(vec![Sexp::list(vec![
                Sexp::keyword("name"),
                Sexp::string("a\n(setq pwned t)"),
                Sexp::keyword("type"),
                Sexp::symbol("object"),
                Sexp::keyword("description"),
                Sexp::string("A"),
                Sexp::keyword("properties"),
                Sexp::list(vec![
                    Sexp::keyword("k\0\u{1b}$B\"\n(setq pwned t)"),
                    Sexp::list(vec![Sexp::keyword("type"), Sexp::symbol("string")]),
                ]),
            ])]),
        ]);
        let text = gptel_form(
            &tool,
            &FormOptions { function: "#'my-fn", comments: true, define: true, ..FormOptions::default() },
        )
        .unwrap();
        assert!(!text.contains(['\0', '\u{1b}', '\r']), "{text}");
        assert!(!text.to_lowercase().contains("local variables:"), "{text}");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(";; t\\n(setq pwned t)\\n-\\*- coding: utf-7 -\\*-: define `my-fn', e.g."));
        assert_eq!(lines.next(), Some(";;   (defun my-fn (a\\\\n\\(setq\\ pwned\\ t\\))"));
        // Every line before the form is a comment.
        assert!(text.split("(gptel-make-tool").next().unwrap().lines().all(|l| l.starts_with(";;")), "{text}");
        assert!(
            text.contains(":properties (,(intern \":k\\N{U+0}\\e$B\\\"\n(setq pwned t)\") (:type string))"),
            "{text}"
        );
        assert!(text.contains("`(:name \"a\n(setq pwned t)\""), "{text}");
        // What lexpr reads, as Emacs reads it (less the quotes).
        let form = parse_sexp(&text.replace('`', "'").replace(",(intern ", "(intern ").replace("#'", "'")).unwrap();
        let printed = form.to_string();
        assert!(printed.contains("d\\nLocal Variables:\\ncoding: utf-7\\r\\x1B;$B\\x00;"), "{printed}");
    }

    /// A `:function` holding a control character is written again.
    #[test]
    fn functions_that_would_not_load_are_written_again() {
        assert_eq!(function_text("").unwrap(), "#'ignore");
        assert_eq!(function_text("#'my-fn").unwrap(), "#'my-fn");
        assert_eq!(function_text("#'my\\\u{1b}fn").unwrap(), "(intern \"my\\efn\")");
        assert_eq!(function_text("#'my\\\n\\(x\\)").unwrap(), "(intern \"my\n(x)\")");
        assert_eq!(
            function_text("(lambda (x) \"Local Variables:\" x)").unwrap(),
            "(lambda (x) \"Local Variables\\N{U+3A}\" x)"
        );
    }
}
