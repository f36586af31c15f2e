//! YAML OpenAPI documents, read into the same `serde_json::Value` as
//! JSON ones (key order kept).

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};

/// Parse YAML text into a JSON value.  Keys that YAML reads as numbers
/// (response codes such as `200:`) become strings; merge keys (`<<`) are
/// applied.
pub fn parse_yaml(text: &str) -> Result<Value> {
    let mut v: Value = serde_yaml_ng::from_str(text).map_err(|e| {
        let msg = e.to_string();
        // The message ends in " at line L column C": the position is
        // given separately.
        let reason = match msg.find(" at line ") {
            Some(i) => &msg[..i],
            None => &msg,
        };
        let err = Error::new(ErrorKind::Json, format!("invalid YAML: {reason}"));
        match e.location() {
            Some(l) => err.with_position(l.line(), l.column()),
            None => err,
        }
    })?;
    merge_keys(&mut v, 0);
    Ok(v)
}

/// Whether text that is not JSON looks like a YAML OpenAPI document: a
/// top-level `openapi:` or `swagger:` key, and not the start of a JSON
/// object or array (broken JSON is reported as JSON).
pub fn looks_like_yaml_openapi(text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim_start().starts_with(['{', '[']) {
        return false;
    }
    text.lines().any(|line| {
        let key = line.trim_start_matches(['"', '\'']);
        line.len() == line.trim_start().len()
            && ["openapi", "swagger"].iter().any(|k| {
                key.strip_prefix(k).is_some_and(|rest| rest.trim_start_matches(['"', '\'']).trim_start().starts_with(':'))
            })
    })
}

/// Apply YAML merge keys: `<<: *base` (or a list of them) adds the keys
/// the mapping does not have itself.
fn merge_keys(v: &mut Value, depth: usize) {
    if depth > 256 {
        return;
    }
    match v {
        Value::Object(o) => {
            if let Some(merge) = o.shift_remove("<<") {
                let sources: Vec<Map<String, Value>> = match merge {
                    Value::Object(m) => vec![m],
                    Value::Array(list) => list
                        .into_iter()
                        .filter_map(|x| match x {
                            Value::Object(m) => Some(m),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                for source in sources {
                    for (k, x) in source {
                        o.entry(k).or_insert(x);
                    }
                }
            }
            for x in o.values_mut() {
                merge_keys(x, depth + 1);
            }
        }
        Value::Array(a) => {
            for x in a {
                merge_keys(x, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numeric_keys_become_strings_and_merges_apply() {
        let v = parse_yaml("base: &b {type: string, description: d}\nx:\n  <<: *b\n  description: mine\nr:\n  200: {description: ok}\n")
            .unwrap();
        assert_eq!(v["x"], json!({"description": "mine", "type": "string"}));
        assert_eq!(v["r"]["200"]["description"], "ok");
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_yaml("a: [1,\nb: c").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json);
        assert!(e.message.starts_with("invalid YAML"), "{}", e.message);
        assert!(e.line.is_some());
    }

    #[test]
    fn detects_yaml_openapi() {
        assert!(looks_like_yaml_openapi("# c\nopenapi: 3.0.0\ninfo: {}"));
        assert!(looks_like_yaml_openapi("\"swagger\": \"2.0\""));
        assert!(!looks_like_yaml_openapi("info:\n  openapi: 3"));
        assert!(!looks_like_yaml_openapi("{\"openapi\": 1,"));
        assert!(!looks_like_yaml_openapi("{\n\"openapi\": \"3.0.0\",\n oops"));
    }
}
