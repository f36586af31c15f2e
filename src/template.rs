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
fn context(data: &serde_json::Value) -> Value {
    let whole = Value::from(Serde(data));
    let mut vars: Vec<(String, Value)> = Vec::new();
    if let serde_json::Value::Object(map) = data {
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
        K::WriteFailure if overflow => (
            ErrorKind::TemplateLimit,
            format!("the output is larger than {} bytes", limits.max_output),
        ),
        K::OutOfFuel => (
            ErrorKind::TemplateLimit,
            format!(
                "the template needs more work than allowed (fuel {}): does it loop forever or build huge values?",
                limits.fuel
            ),
        ),
        K::InvalidOperation if detail.contains("recursion limit") => (
            ErrorKind::TemplateLimit,
            format!("recursion deeper than {} levels", limits.recursion),
        ),
        K::SyntaxError if detail.contains("recursion limit") => {
            (ErrorKind::TemplateLimit, "the template is nested too deeply".to_string())
        }
        K::TemplateNotFound | K::BadInclude => (
            ErrorKind::Template,
            format!("{}: templates cannot include, import or extend other templates", e.kind()),
        ),
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
    let data: serde_json::Value = serde_json::from_str(json).map_err(|e| Error::from_json(&e))?;
    let mut env = Environment::new();
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // `debug()` prints the environment: of no use in a tool's output.
    env.remove_global("debug");
    let overflow = Rc::new(Cell::new(false));
    let tmpl = env.template_from_str(template).map_err(|e| convert(e, false, limits))?;
    let mut out = Capped { out: Vec::new(), max: limits.max_output, overflow: overflow.clone() };
    tmpl.render_captured_to(context(&data), &mut out)
        .map_err(|e| convert(e, overflow.get(), limits))?;
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
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v, serde_json::json!({"products": [{"name": "a"}, {"name": "b"}]}));
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
    fn oversized_template_and_bad_json() {
        let limits = Limits { max_template: 10, ..Limits::default() };
        assert_eq!(render("01234567890", "{}", &limits).unwrap_err().kind, ErrorKind::TemplateLimit);
        let e = r("{{ x }}", "{not json").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json);
        assert_eq!(e.line, Some(1));
    }
}
