//! Jinja templates over JSON data: the response filters, output modules
//! and bootstrap values of OpenAPI tools (OpenPlugin's `x-filter`,
//! `x-output-modules` and `x-bootstrap-value`), rendered with minijinja.
//!
//! The data is the parsed JSON.  When it is an object its keys are the
//! template's variables (`{% for product in products %}` over
//! `{"products": [...]}`, as OpenPlugin renders them); the whole value is
//! also `response` and `data`, unless the object has keys of those names,
//! which win.  Any other JSON value is only `response` and `data`.
//!
//! Templates are sandboxed: the environment has no loader (no `include`,
//! `import` or `extends` can reach a file), no access to the process
//! environment or the network, only the builtin filters, tests and the
//! globals `range`, `dict` and `namespace` (not `debug`).  Their work is bounded by fuel
//! (minijinja charges every instruction and every byte a template
//! produces, before allocating it), their output by a byte cap and their
//! recursion by a depth limit.  Going beyond a bound is a
//! [`ErrorKind::TemplateLimit`] error; any other failure is
//! [`ErrorKind::Template`].  Undefined values are chainable: a field
//! missing from a response renders as nothing instead of failing.
//!
//! minijinja recurses on its parser, and on values when it prints,
//! serializes, compares or frees them; its parser bounds only some
//! nesting.  So that no template can overflow the stack of the thread
//! that renders it:
//!
//! - a template is checked before it is parsed ([`check`]): at most
//!   [`MAX_OPERATORS`] operators in one tag, and a `namespace` is used
//!   only through its attributes (`ns.count`), which keeps a namespace
//!   from holding itself (a cycle that would recurse without end);
//! - rendering runs on its own thread, with a stack large enough for the
//!   deepest value the fuel lets a template build (a list nested in
//!   itself once per loop iteration).
//!
//! Not bounded here: work that minijinja does inside one operation
//! without charging fuel, on values that share parts.  `[a, a]` (or
//! `a + a`) assigned again and again describes an exponentially large
//! value in a few steps; printing it with `tojson`, `join` or `string`
//! then takes exponential time and memory, and comparing two of them
//! exponential time without allocating.  A thread cannot be stopped, so
//! templates from outside are rendered in a process of their own,
//! `toolspec render` (src/bin/toolspec.rs), limited in CPU time and
//! memory, which Emacs also kills after `toolspec-template-timeout`
//! seconds: see SECURITY.md.

use std::cell::Cell;
use std::io;
use std::rc::Rc;

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value};

use crate::error::{Error, ErrorKind, Result};

/// The bounds of one rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// minijinja fuel: one per instruction, one per 64 bytes produced.
    pub fuel: u64,
    /// Largest output, in bytes.
    pub max_output: usize,
    /// Largest template source, in bytes.
    pub max_template: usize,
    /// Recursion depth (loops and conditions count one, macro calls more).
    pub recursion: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { fuel: 2_000_000, max_output: 1 << 20, max_template: 256 << 10, recursion: 200 }
    }
}

/// Operators (and keywords such as `not`, `and`, `if`) allowed in one
/// `{{ ... }}` or `{% ... %}` tag: each may add a level to minijinja's
/// parser recursion.
pub const MAX_OPERATORS: usize = 1000;

/// Stack of the rendering thread, per unit of fuel: a value nested once
/// per loop iteration is at most a few hundred thousand levels deep under
/// the default fuel, and each level takes a few hundred bytes of stack to
/// free, print or compare (several times that in a debug build).
const STACK_PER_FUEL: usize = if cfg!(debug_assertions) { 1024 } else { 128 };

/// Where the expression of one tag is in a template.
struct Tag {
    start: usize,
    end: usize,
}

/// Check `template` before minijinja parses it: see the module
/// documentation.  Errors name the template line.
pub fn check(template: &str) -> Result<()> {
    let tags = tags(template);
    let line_of = |at: usize| template[..at].matches('\n').count() + 1;
    // Identifier tokens of every tag, with what follows each.
    let mut namespaces: Vec<&str> = Vec::new();
    let mut tokens: Vec<(Vec<Token>, usize)> = Vec::new();
    for t in &tags {
        let toks = tokenize(&template[t.start..t.end]);
        let operators = toks.iter().filter(|k| k.operator).count();
        if operators > MAX_OPERATORS {
            return Err(Error::new(
                ErrorKind::TemplateLimit,
                format!(
                    "template line {}: more than {MAX_OPERATORS} operators in one tag: split the expression",
                    line_of(t.start)
                ),
            ));
        }
        // `set NAME = namespace(`
        if let [a, b, c, d, e, ..] = toks.as_slice() {
            if a.text == "set" && b.ident && c.text == "=" && d.text == "namespace" && e.text == "(" {
                namespaces.push(b.text);
            }
        }
        tokens.push((toks, t.start));
    }
    for (toks, start) in &tokens {
        let definition =
            matches!(toks.as_slice(), [a, _, c, d, ..] if a.text == "set" && c.text == "=" && d.text == "namespace");
        for (i, k) in toks.iter().enumerate() {
            if !k.ident || k.after_dot {
                continue;
            }
            let next = toks.get(i + 1).map(|n| n.text);
            if k.text == "namespace" && !(definition && i == 3) {
                return Err(Error::new(
                    ErrorKind::Template,
                    format!(
                        "template line {}: `namespace()` is allowed only as `{{% set NAME = namespace(...) %}}`",
                        line_of(*start)
                    ),
                ));
            }
            let is_namespace = namespaces.contains(&k.text);
            // `ns.x`, `ns['x']`, a keyword argument `ns=`, or the definition.
            let through_attribute = matches!(next, Some("." | "[" | "="));
            if is_namespace && !through_attribute && !(definition && i == 1) {
                return Err(Error::new(
                    ErrorKind::Template,
                    format!(
                        "template line {}: the namespace `{}` can be used only through its attributes, as in `{}.count`",
                        line_of(*start),
                        k.text,
                        k.text
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The expression tags (`{{ }}` and `{% %}`) of a template, without their
/// delimiters; comments and `raw` blocks are skipped.
fn tags(t: &str) -> Vec<Tag> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut raw = false;
    while i + 1 < b.len() {
        if b[i] != b'{' || !matches!(b[i + 1], b'{' | b'%' | b'#') {
            i += 1;
            continue;
        }
        let kind = b[i + 1];
        let start = i + 2;
        if kind == b'#' {
            i = t[start..].find("#}").map_or(b.len(), |e| start + e + 2);
            continue;
        }
        // The end: the closing delimiter outside strings and brackets.
        let close = if kind == b'{' { b'}' } else { b'%' };
        let (mut j, mut depth, mut quote) = (start, 0usize, None::<u8>);
        let end = loop {
            let Some(&c) = b.get(j) else { break b.len() };
            match (quote, c) {
                (Some(_), b'\\') => j += 1,
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'\'' | b'"') => quote = Some(c),
                (None, b'(' | b'[' | b'{') => depth += 1,
                (None, b')' | b']') => depth = depth.saturating_sub(1),
                (None, b'}') if depth > 0 => depth -= 1,
                (None, c) if c == close && depth == 0 && b.get(j + 1) == Some(&b'}') => break j,
                _ => {}
            }
            j += 1;
        };
        let body = t[start..end.min(b.len())].trim_matches(['-', '+', '~']);
        let body_start = start + t[start..end.min(b.len())].find(body).unwrap_or(0);
        let word = body.split_whitespace().next().unwrap_or("");
        if kind == b'%' && raw {
            if word == "endraw" {
                raw = false;
            }
        } else if kind == b'%' && word == "raw" {
            raw = true;
        } else if !raw {
            out.push(Tag { start: body_start, end: body_start + body.len() });
        }
        i = (end + 2).min(b.len());
    }
    out
}

/// A token of a tag, as far as [`check`] needs it.
struct Token<'a> {
    text: &'a str,
    ident: bool,
    operator: bool,
    /// An identifier right after a `.`: an attribute name.
    after_dot: bool,
}

fn tokenize(s: &str) -> Vec<Token<'_>> {
    let b = s.as_bytes();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(Token { text: &s[start..i], ident: false, operator: false, after_dot: false });
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            let text = &s[start..i];
            let after_dot = out.last().is_some_and(|t| t.text == ".");
            let keyword = matches!(text, "not" | "and" | "or" | "is" | "in" | "if" | "else");
            out.push(Token { text, ident: !keyword, operator: keyword, after_dot });
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            out.push(Token { text: &s[start..i], ident: false, operator: false, after_dot: false });
            continue;
        }
        i += 1;
        let operator = matches!(
            c,
            b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'|' | b'.' | b'(' | b'[' | b'<' | b'>' | b'!' | b'='
        );
        out.push(Token { text: &s[start..i], ident: false, operator, after_dot: false });
    }
    out
}

/// A writer that accepts at most `max` bytes and remembers when it refused.
struct Capped {
    out: Vec<u8>,
    max: usize,
    overflow: Rc<Cell<bool>>,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.out.len() + buf.len() > self.max {
            self.overflow.set(true);
            return Err(io::Error::other("template output limit reached"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The template context for JSON `data`: its keys when it is an object,
/// and the whole value as `response` and `data`.
fn context(data: &crate::value::Value) -> Value {
    let whole = Value::from(Serde(data));
    let mut vars: Vec<(String, Value)> = Vec::new();
    if let crate::value::Value::Object(map) = data {
        for key in map.keys() {
            vars.push((key.clone(), whole.get_attr(key).unwrap_or_default()));
        }
    }
    for name in ["response", "data"] {
        if !vars.iter().any(|(k, _)| k == name) {
            vars.push((name.to_string(), whole.clone()));
        }
    }
    Value::from_pairs(vars)
}

/// Where in the template, for messages.
fn at_line(e: &minijinja::Error) -> String {
    e.line().map(|l| format!("template line {l}: ")).unwrap_or_else(|| "template: ".into())
}

fn convert(e: minijinja::Error, overflow: bool, limits: &Limits) -> Error {
    use minijinja::ErrorKind as K;
    let detail = e.detail().unwrap_or_default().to_string();
    let (kind, message) = match e.kind() {
        K::WriteFailure if overflow => {
            (ErrorKind::TemplateLimit, format!("the output is larger than {} bytes", limits.max_output))
        }
        K::OutOfFuel => (
            ErrorKind::TemplateLimit,
            format!(
                "the template needs more work than allowed (fuel {}): does it loop forever or build huge values?",
                limits.fuel
            ),
        ),
        K::InvalidOperation if detail.contains("recursion limit") => {
            (ErrorKind::TemplateLimit, format!("recursion deeper than {} levels", limits.recursion))
        }
        K::SyntaxError if detail.contains("recursion limit") => {
            (ErrorKind::TemplateLimit, "the template is nested too deeply".to_string())
        }
        K::TemplateNotFound | K::BadInclude => {
            (ErrorKind::Template, format!("{}: templates cannot include, import or extend other templates", e.kind()))
        }
        kind if detail.is_empty() => (ErrorKind::Template, kind.to_string()),
        kind => (ErrorKind::Template, format!("{kind}: {detail}")),
    };
    Error::new(kind, format!("{}{message}", at_line(&e)))
}

/// Render `template` over the JSON document `json`, within `limits`.
pub fn render(template: &str, json: &str, limits: &Limits) -> Result<String> {
    if template.len() > limits.max_template {
        return Err(Error::new(
            ErrorKind::TemplateLimit,
            format!("the template is {} bytes, more than the limit of {}", template.len(), limits.max_template),
        ));
    }
    check(template)?;
    let stack = stack_size(limits);
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("toolspec-template".into())
            .stack_size(stack)
            .spawn_scoped(scope, || render_here(template, json, limits))
            .map_err(|e| Error::new(ErrorKind::Template, format!("cannot start the template thread: {e}")))?;
        worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The stack of the thread [`render`] starts, in bytes, for `limits`.
pub fn stack_size(limits: &Limits) -> usize {
    (limits.fuel as usize).saturating_mul(STACK_PER_FUEL).clamp(8 << 20, 2 << 30)
}

/// [`render`] on the current thread.
fn render_here(template: &str, json: &str, limits: &Limits) -> Result<String> {
    let data: crate::value::Value = serde_json::from_str(json).map_err(|e| Error::from_json(&e))?;
    let mut env = Environment::new();
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // `debug()` prints the environment: of no use in a tool's output.
    env.remove_global("debug");
    let overflow = Rc::new(Cell::new(false));
    let tmpl = env.template_from_str(template).map_err(|e| convert(e, false, limits))?;
    let mut out = Capped { out: Vec::new(), max: limits.max_output, overflow: overflow.clone() };
    tmpl.render_captured_to(context(&data), &mut out).map_err(|e| convert(e, overflow.get(), limits))?;
    String::from_utf8(out.out)
        .map_err(|_| Error::new(ErrorKind::Template, "the template produced text that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(t: &str, j: &str) -> Result<String> {
        render(t, j, &Limits::default())
    }

    #[test]
    fn root_keys_are_variables() {
        let products = r#"{"products":[{"name":"Pen","price":2,"url":"https://x/p"},{"name":"Ink","price":5,"url":"https://x/i"}]}"#;
        let t = "{% for product in products %}Name: {{ product['name'] }}\nPrice: {{ product.price }}\n{% endfor %}";
        assert_eq!(r(t, products).unwrap(), "Name: Pen\nPrice: 2\nName: Ink\nPrice: 5\n");
        assert_eq!(r("{{ response.products | length }}/{{ data.products[1].name }}", products).unwrap(), "2/Ink");
    }

    #[test]
    fn own_keys_win_over_response_and_data() {
        assert_eq!(r("{{ data }}|{{ response.data }}", r#"{"data":"mine"}"#).unwrap(), "mine|mine");
        assert_eq!(r("{{ response }}", r#"{"response":1}"#).unwrap(), "1");
    }

    #[test]
    fn non_object_roots() {
        assert_eq!(r("{{ data | join(',') }}", "[1,2,3]").unwrap(), "1,2,3");
        assert_eq!(r("{{ response }}", "\"hi\"").unwrap(), "hi");
        assert_eq!(r("{{ response is none }}", "null").unwrap(), "True");
    }

    #[test]
    fn seed_filter_renders_json() {
        let t = "{\n    \"products\": [\n        {% for product in products %}\n        {\n            \"name\": \"{{ product.name }}\"\n        }\n        {% if not loop.last %},{% endif %}\n        {% endfor %}\n    ]\n}";
        let out = r(t, r#"{"products":[{"name":"a"},{"name":"b"}],"noise":1}"#).unwrap();
        let v: crate::value::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v, crate::json!({"products": [{"name": "a"}, {"name": "b"}]}));
    }

    #[test]
    fn tojson_and_missing_fields() {
        assert_eq!(r("{{ a | tojson }}", r#"{"a":{"b":[1,"x"]}}"#).unwrap(), r#"{"b": [1, "x"]}"#);
        assert_eq!(r("[{{ missing.deeper.still }}]", "{}").unwrap(), "[]");
        assert_eq!(r("{{ q | urlencode }}", r#"{"q":"a b&c"}"#).unwrap(), "a%20b%26c");
    }

    #[test]
    fn auth_context_for_bootstrap_values() {
        let ctx = r#"{"auth":{"token":"t0k","data":{"access_token":"t0k","user_id":42}}}"#;
        assert_eq!(r("{{ auth.token }}/{{ auth.data.user_id }}", ctx).unwrap(), "t0k/42");
    }

    #[test]
    fn syntax_error_names_the_line() {
        let e = r("line one\n{% for x in %}", "{}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Template);
        assert!(e.message.starts_with("template line 2: syntax error"), "{}", e.message);
        let e = r("{{ 1 + }}", "{}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Template);
    }

    #[test]
    fn runtime_error_is_a_template_error() {
        let e = r("{{ x | nosuchfilter }}", r#"{"x":1}"#).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Template);
        assert!(e.message.contains("unknown filter"), "{}", e.message);
        let e = r("{{ 1 / 0 }}", "{}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Template);
    }

    #[test]
    fn no_files_or_environment() {
        for t in ["{% include '/etc/passwd' %}", "{% extends '/etc/passwd' %}", "{% import 'x' as y %}"] {
            let e = r(t, "{}").unwrap_err();
            assert_eq!(e.kind, ErrorKind::Template, "{t}: {}", e.message);
        }
        // No `env`, no `debug()`, no loader-backed globals.
        assert_eq!(r("[{{ env }}{{ environ }}]", "{}").unwrap(), "[]");
        assert_eq!(r("{{ debug() }}", "{}").unwrap_err().kind, ErrorKind::Template);
    }

    #[test]
    fn endless_work_runs_out_of_fuel() {
        let t = "{% for i in range(100000) %}{% for j in range(100000) %}{% if i == j %}{% endif %}{% endfor %}{% endfor %}";
        let e = r(t, "{}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::TemplateLimit);
        assert!(e.message.contains("fuel"), "{}", e.message);
    }

    #[test]
    fn doubling_values_run_out_of_fuel() {
        let t = "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}";
        assert_eq!(r(t, "{}").unwrap_err().kind, ErrorKind::TemplateLimit);
        assert_eq!(r("{{ 'x' * 100000000 }}", "{}").unwrap_err().kind, ErrorKind::TemplateLimit);
    }

    #[test]
    fn huge_output_is_capped() {
        let limits = Limits { max_output: 1000, ..Limits::default() };
        let e = render("{% for i in range(10000) %}xxxxxxxxxx{% endfor %}", "{}", &limits).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TemplateLimit);
        assert!(e.message.contains("larger than 1000 bytes"), "{}", e.message);
        assert_eq!(render("{% for i in range(10) %}x{% endfor %}", "{}", &limits).unwrap(), "x".repeat(10));
    }

    #[test]
    fn endless_recursion_is_bounded() {
        let t = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
        let e = r(t, "{}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::TemplateLimit, "{}", e.message);
        let t = "{% for x in items recursive %}{{ loop(items) }}{% endfor %}";
        assert_eq!(r(t, r#"{"items":[1]}"#).unwrap_err().kind, ErrorKind::TemplateLimit);
    }

    #[test]
    fn deep_template_nesting_is_bounded() {
        let t = "{% if true %}".repeat(2000) + &"{% endif %}".repeat(2000);
        assert_eq!(r(&t, "{}").unwrap_err().kind, ErrorKind::TemplateLimit);
    }

    #[test]
    fn namespaces_only_through_their_attributes() {
        let ok = "{% set ns = namespace(n=0, items=[]) %}{% for x in [1, 2] %}{% set ns.n = ns.n + x %}\
                  {% set ns.items = ns.items + [x] %}{% endfor %}{{ ns.n }}/{{ ns['items'] | join(',') }}\
                  {{ dict(ns=1).ns }}{{ x.namespace }}{% raw %}{{ ns }}{% endraw %}{# {{ ns }} #}{{ 'ns' }}";
        assert_eq!(r(ok, "{}").unwrap(), "3/1,21{{ ns }}ns");
        for bad in [
            "{% set ns = namespace() %}{% set ns.x = ns %}{{ ns }}",
            "{% set ns = namespace() %}{% set ns.x = [ns] %}",
            "{% set ns = namespace() %}{% set other = ns %}",
            "{% set ns = namespace() %}{% for n in [ns] %}{% endfor %}",
            "{% set a = namespace() %}{% set b = namespace(x=a) %}",
            "{% set ns = namespace(x=namespace()) %}",
            "{{ namespace() }}",
            "{% set l = [namespace()] %}",
        ] {
            let e = r(bad, "{}").unwrap_err();
            assert_eq!(e.kind, ErrorKind::Template, "{bad}: {e}");
            assert!(e.message.starts_with("template line 1: "), "{bad}: {e}");
            assert!(e.message.contains("namespace"), "{bad}: {e}");
        }
    }

    #[test]
    fn long_operator_chains_are_refused_before_parsing() {
        for t in [
            format!("{{{{ {}x }}}}", "-".repeat(100_000)),
            format!("{{{{ {}x }}}}", "not ".repeat(50_000)),
            format!("{{{{ x{} }}}}", "|e".repeat(50_000)),
            format!("{{{{ x{} }}}}", ".a".repeat(50_000)),
            format!("{{{{ 1{} }}}}", "+1".repeat(50_000)),
            format!("{{{{ range{} }}}}", "(1)".repeat(50_000)),
            format!("{{% set x = {}1 %}}", "1 if x else ".repeat(20_000)),
        ] {
            let e = r(&t, "{}").unwrap_err();
            assert_eq!(e.kind, ErrorKind::TemplateLimit, "{}", e.message);
            assert!(e.message.contains("operators in one tag"), "{}", e.message);
        }
        // Below the bound, such chains render.
        assert_eq!(r(&format!("{{{{ {}1 }}}}", "-".repeat(900)), "{}").unwrap(), "1");
        assert_eq!(r(&format!("{{{{ 'x'{} }}}}", "|upper".repeat(500)), "{}").unwrap(), "X");
    }

    #[test]
    fn values_nested_as_deep_as_the_fuel_allows_are_freed_and_printed() {
        // A list nested once per iteration until the fuel runs out, then
        // (with less fuel) printed, serialized and compared.
        let deep = "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% for j in range(1000) %}\
                    {% set ns.x = [ns.x] %}{% endfor %}{% endfor %}";
        let e = render(deep, "{}", &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TemplateLimit);
        let limits = Limits { fuel: 300_000, ..Limits::default() };
        let t =
            "{% set ns = namespace(x=[]) %}{% for i in range(30) %}{% for j in range(1000) %}{% set ns.x = [ns.x] %}\
                 {% endfor %}{% endfor %}{{ ns.x | tojson | length }} {{ ns.x == ns.x }} {{ ns.x | string | length }}";
        match render(t, "{}", &limits) {
            Ok(out) => assert_eq!(out, "60002 True 60002"),
            Err(e) => assert_eq!(e.kind, ErrorKind::TemplateLimit, "{e}"),
        }
    }

    #[test]
    fn oversized_template_and_bad_json() {
        let limits = Limits { max_template: 10, ..Limits::default() };
        assert_eq!(render("01234567890", "{}", &limits).unwrap_err().kind, ErrorKind::TemplateLimit);
        let e = r("{{ x }}", "{not json").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json);
        assert_eq!(e.line, Some(1));
    }
}
