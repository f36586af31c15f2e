//! Descriptions of tools and arguments, from OpenAPI's summaries and
//! descriptions and OpenPlugin's `x-helpers`, `x-human-usage-examples`,
//! `x-few-shot-examples` and `x-dependent`; kept within bounds.

use crate::model::Field;
use crate::value::{Map, Value};

/// Longest tool description, in characters.
pub const MAX_TOOL_DESCRIPTION: usize = 1024;
/// Longest argument description, in characters.
pub const MAX_ARG_DESCRIPTION: usize = 512;
/// Room kept for helpers and examples in a tool description.
const MAX_HINTS: usize = 512;
/// Longest single helper or example line.
const MAX_LINE: usize = 200;

/// `s` cut to at most `max` characters, at a word boundary when one is
/// near, with `…` at the end when cut.
pub fn truncate(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    let at = match cut.rfind(char::is_whitespace) {
        Some(i) if i > cut.len() * 3 / 4 => i,
        _ => cut.len(),
    };
    format!("{}…", cut[..at].trim_end())
}

/// The strings of an `x-` extension that is a string or a list of them.
pub fn strings(v: Option<&Value>) -> Vec<&str> {
    match v {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .map(str::trim)
    .filter(|s| !s.is_empty())
    .collect()
}

/// A call as an example: `name(a=1, b="x")`, values as JSON.
pub fn example_call(tool: &str, mapping: Option<&Map<String, Value>>, arg_of: &dyn Fn(&str) -> String) -> String {
    let mut out = format!("{tool}(");
    if let Some(m) = mapping {
        for (i, (k, v)) in m.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&arg_of(k));
            out.push('=');
            out.push_str(&v.to_string());
        }
    }
    out.push(')');
    out
}

/// The description of an operation's tool.
pub fn tool_description(
    op: &Map<String, Value>,
    fallback: &str,
    tool: &str,
    arg_of: &dyn Fn(&str) -> String,
) -> String {
    let text = |k: &str| op.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let mut head = String::new();
    if op.field("deprecated") == Some(&Value::Bool(true)) {
        head.push_str("Deprecated. ");
    }
    match (text("summary"), text("description")) {
        (Some(s), Some(d)) if d.starts_with(s.trim_end_matches('.')) => head.push_str(d),
        (Some(s), Some(d)) => {
            head.push_str(s);
            if !s.ends_with(['.', '!', '?', ':']) {
                head.push('.');
            }
            head.push('\n');
            head.push_str(d);
        }
        (Some(s), None) => head.push_str(s),
        (None, Some(d)) => head.push_str(d),
        (None, None) => head.push_str(fallback),
    }
    let mut hints: Vec<String> = Vec::new();
    for h in strings(op.field("x-helpers")) {
        hints.push(truncate(h, MAX_LINE));
    }
    for u in strings(op.field("x-human-usage-examples")) {
        hints.push(format!("Example request: \"{}\"", truncate(u, MAX_LINE)));
    }
    if let Some(Value::Array(shots)) = op.field("x-few-shot-examples") {
        for shot in shots {
            let Some(prompt) = shot.field("prompt").and_then(Value::as_str) else { continue };
            let call = example_call(tool, shot.field("parameter_mapping").and_then(Value::as_object), arg_of);
            hints.push(format!("Example: \"{}\" -> {}", truncate(prompt, MAX_LINE), truncate(&call, MAX_LINE)));
        }
    }
    let mut tail = String::new();
    for h in hints {
        if tail.chars().count() + h.chars().count() + 1 > MAX_HINTS {
            break;
        }
        tail.push('\n');
        tail.push_str(&h);
    }
    let room = MAX_TOOL_DESCRIPTION - tail.chars().count();
    let mut out = truncate(&head, room);
    out.push_str(&tail);
    out
}

/// An argument's description: its own text, then `x-helpers` and where a
/// dependent value comes from.
pub fn arg_description(
    base: Option<&str>,
    deprecated: bool,
    helpers: &[&str],
    dependent: Option<&str>,
) -> Option<String> {
    let mut out = String::new();
    if deprecated {
        out.push_str("Deprecated. ");
    }
    if let Some(b) = base.map(str::trim).filter(|b| !b.is_empty()) {
        out.push_str(b);
    }
    let mut tail = String::new();
    for h in helpers {
        tail.push(' ');
        tail.push_str(&truncate(h, MAX_LINE));
    }
    if let Some(d) = dependent {
        tail.push(' ');
        tail.push_str(d);
    }
    if out.is_empty() && tail.is_empty() {
        return None;
    }
    let room = MAX_ARG_DESCRIPTION.saturating_sub(tail.chars().count()).max(MAX_ARG_DESCRIPTION / 4);
    let mut desc = truncate(&out, room);
    if !desc.is_empty() && !tail.is_empty() && !desc.ends_with(['.', '!', '?', ':', '…']) {
        desc.push('.');
    }
    desc.push_str(&tail);
    Some(truncate(&desc, MAX_ARG_DESCRIPTION))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    #[test]
    fn truncates_at_words() {
        assert_eq!(truncate("short", 10), "short");
        let t = truncate("one two three four five six seven", 20);
        assert!(t.chars().count() <= 20, "{t}");
        assert!(t.ends_with('…'));
        assert_eq!(t, "one two three four…");
        assert_eq!(truncate("ééééé", 3).chars().count(), 3);
    }

    #[test]
    fn tool_description_parts() {
        let op = json!({"summary": "Find a city", "description": "Looks a city up.",
                        "x-helpers": ["Use the English name."],
                        "x-human-usage-examples": ["Where is Austin?"],
                        "x-few-shot-examples": [{"prompt": "Find Austin", "parameter_mapping": {"city": "Austin", "n": 2}}]});
        let d = tool_description(op.as_object().unwrap(), "GET /x", "find_city", &|k| k.to_string());
        assert_eq!(
            d,
            "Find a city.\nLooks a city up.\nUse the English name.\nExample request: \"Where is Austin?\"\n\
             Example: \"Find Austin\" -> find_city(city=\"Austin\", n=2)"
        );
    }

    #[test]
    fn long_descriptions_keep_their_hints() {
        let op = json!({"description": "word ".repeat(1000), "x-helpers": ["Helper."]});
        let d = tool_description(op.as_object().unwrap(), "", "t", &|k| k.to_string());
        assert!(d.chars().count() <= MAX_TOOL_DESCRIPTION);
        assert!(d.ends_with("…\nHelper."), "{d}");
    }
}
