//! Gemini's schema dialect: an OpenAPI 3.0 subset.  Keywords Gemini
//! rejects are removed or rewritten into ones it accepts, and what cannot
//! be expressed is said in the description, so the model still sees it.

use crate::model::{Field, Schema};
use crate::schema::{slot, Slot};
use crate::value::{Map, Value};

/// Keywords Gemini's `Schema` accepts.
const KEEP: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Rewrite a schema (recursively) into what Gemini accepts.
pub fn sanitize(node: &mut Schema) {
    let mut notes: Vec<String> = Vec::new();

    // `allOf` parts merge into the node first, so what they bring is
    // rewritten below like the node's own keywords.
    if let Some(Value::Array(all)) = node.shift_remove("allOf") {
        for part in all {
            if let Value::Object(p) = part {
                for (k, v) in p {
                    node.entry(k).or_insert(v);
                }
            }
        }
    }
    // Type unions and null.
    if let Some(Value::Array(types)) = node.field("type").cloned() {
        let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if non_null.len() < types.len() {
            node.insert("nullable".into(), Value::Bool(true));
        }
        match non_null.len() {
            0 => {
                node.shift_remove("type");
            }
            1 => {
                node.insert("type".into(), non_null[0].clone());
            }
            _ => {
                node.shift_remove("type");
                let alts = non_null.iter().map(|t| {
                    let mut m = Map::new();
                    m.insert("type".into(), (*t).clone());
                    Value::Object(m)
                });
                node.insert("anyOf".into(), Value::Array(alts.collect()));
            }
        }
    }
    if node.field("type").is_some_and(|t| t == "null") {
        node.shift_remove("type");
        node.insert("nullable".into(), Value::Bool(true));
    }
    // Rewrites into accepted keywords.
    if let Some(c) = node.shift_remove("const") {
        if c.is_string() {
            node.insert("enum".into(), Value::Array(vec![c]));
        } else {
            notes.push(format!("must be {c}"));
        }
    }
    if let Some(Value::Array(ex)) = node.shift_remove("examples") {
        if let Some(first) = ex.into_iter().next() {
            node.entry("example").or_insert(first);
        }
    }
    if let Some(one) = node.shift_remove("oneOf") {
        node.entry("anyOf").or_insert(one);
    }
    // Enum values must be strings.
    if let Some(Value::Array(e)) = node.field("enum") {
        if e.iter().any(|v| !v.is_string() && !v.is_null()) {
            let shown: Vec<String> = e.iter().map(|v| v.to_string()).collect();
            notes.push(format!("one of {}", shown.join(", ")));
            node.shift_remove("enum");
        } else if e.iter().any(Value::is_null) {
            let kept: Vec<Value> = e.iter().filter(|v| !v.is_null()).cloned().collect();
            node.insert("enum".into(), Value::Array(kept));
            node.insert("nullable".into(), Value::Bool(true));
        }
    }
    // Formats: STRING takes only enum and date-time, NUMBER float and
    // double, INTEGER int32 and int64.
    if let Some(Value::String(f)) = node.field("format") {
        let ok = match node.field("type").and_then(Value::as_str) {
            Some("string") => matches!(f.as_str(), "enum" | "date-time"),
            Some("number") => matches!(f.as_str(), "float" | "double"),
            Some("integer") => matches!(f.as_str(), "int32" | "int64"),
            _ => false,
        };
        if !ok {
            notes.push(format!("format: {f}"));
            node.shift_remove("format");
        }
    }
    for key in ["exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"] {
        if let Some(v) = node.get(key) {
            if !v.is_boolean() {
                notes.push(format!("{key}: {v}"));
            } else if v == &Value::Bool(true) {
                notes.push(key.to_string());
            }
        }
    }
    node.retain(|k, _| KEEP.contains(&k.as_str()));
    // `required` may only name properties that exist.
    if let (Some(Value::Array(req)), Some(Value::Object(props))) = (node.field("required"), node.field("properties")) {
        let kept: Vec<Value> = req.iter().filter(|r| r.as_str().is_some_and(|n| props.contains_key(n))).cloned().collect();
        node.insert("required".into(), Value::Array(kept));
    }
    if node.field("required").is_some_and(|r| r.as_array().is_some_and(Vec::is_empty)) {
        node.shift_remove("required");
    }
    if !notes.is_empty() {
        let extra = notes.join("; ");
        let d = match node.field("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} ({extra})"),
            _ => format!("({extra})"),
        };
        node.insert("description".into(), Value::from(d));
    }
    // Recurse.
    for (key, value) in node.iter_mut() {
        match (slot(key), value) {
            (Slot::Map, Value::Object(map)) => {
                for sub in map.values_mut() {
                    if let Value::Object(s) = sub {
                        sanitize(s);
                    }
                }
            }
            (Slot::Single, Value::Object(s)) => sanitize(s),
            (Slot::List, Value::Array(list)) | (Slot::Single, Value::Array(list)) => {
                for sub in list.iter_mut() {
                    if let Value::Object(s) = sub {
                        sanitize(s);
                    }
                }
            }
            _ => {}
        }
    }
    // An array of tuples (draft-4 `items: [..]`) becomes its first type.
    if let Some(Value::Array(list)) = node.field("items").cloned() {
        match list.into_iter().next() {
            Some(first) => {
                node.insert("items".into(), first);
            }
            None => {
                node.shift_remove("items");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn run(v: Value) -> Value {
        let mut s = v.as_object().unwrap().clone();
        sanitize(&mut s);
        Value::Object(s)
    }

    #[test]
    fn strips_rejected_keywords() {
        let out = run(json!({"type": "object", "additionalProperties": false, "$schema": "x",
            "properties": {"u": {"type": ["string", "null"], "format": "uri", "description": "a link"}}}));
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"u": {"type": "string", "description": "a link (format: uri)", "nullable": true}}})
        );
    }

    #[test]
    fn integer_enum_goes_to_description() {
        let out = run(json!({"type": "integer", "enum": [1, 2]}));
        assert_eq!(out, json!({"type": "integer", "description": "(one of 1, 2)"}));
    }
}
