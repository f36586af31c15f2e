//! YAML OpenAPI documents, read into the same `Value` as
//! JSON ones (key order kept).

use crate::error::{Error, ErrorKind, Result};
use crate::value::{Map, Value};

/// Parse YAML text into a JSON value.  Keys that YAML reads as numbers
/// (response codes such as `200:`) become strings; merge keys (`<<`) are
/// applied.
pub fn parse_yaml(text: &str) -> Result<Value> {
    check_flow_depth(text)?;
    let mut v: Value = match serde_yaml_ng::from_str::<Unique>(text) {
        Ok(u) => u.0,
        // Said of any error after the first document too (an unclosed
        // `[` in a second one), and of an empty one after a last `---`.
        Err(e) if e.to_string().contains("more than one document") => documents(text)?,
        Err(e) => return Err(yaml_error(&e)),
    };
    merge_keys(&mut v, 0);
    Ok(v)
}

/// The error `e` of the YAML reader, at its place.
fn yaml_error(e: &serde_yaml_ng::Error) -> Error {
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
}

/// The first document of YAML `text`, which holds several: an error in
/// any of them is reported at its place; documents after the first must
/// be empty.
fn documents(text: &str) -> Result<Value> {
    use serde::Deserialize;
    let mut first = None;
    for (i, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let v = Unique::deserialize(doc).map_err(|e| yaml_error(&e))?.0;
        if i == 0 {
            first = Some(v);
        } else if v != Value::Null {
            let n = i + 1;
            return Err(Error::new(
                ErrorKind::Json,
                format!("invalid YAML: the text holds more than one document (document {n}, after a `---` line): an OpenAPI document is one"),
            ));
        }
    }
    Ok(first.unwrap_or(Value::Null))
}

/// A JSON value read from YAML, refusing a mapping that has a key twice
/// (YAML requires keys to be unique; which value would win differs
/// between readers).
struct Unique(Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Unique, D::Error> {
        d.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_i128<E>(self, v: i128) -> std::result::Result<Value, E> {
        Ok(i64::try_from(v).map(Value::from).unwrap_or_else(|_| Value::from(v as f64)))
    }
    fn visit_u128<E>(self, v: u128) -> std::result::Result<Value, E> {
        Ok(u64::try_from(v).map(Value::from).unwrap_or_else(|_| Value::from(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        // YAML's .inf and .nan have no JSON form: null, as serde_json reads them.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Unique(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(v) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key \"{key}\" (YAML keys must be unique)")));
            }
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Deepest nesting of flow collections (`[...]`, `{...}`) accepted, as
/// for JSON.  The YAML parser's time grows with the square of the depth,
/// so deeper text is refused before it is parsed.
pub const MAX_FLOW_DEPTH: usize = 128;

/// Refuse flow collections nested deeper than [`MAX_FLOW_DEPTH`]: a scan
/// for brackets that open a collection (outside quoted scalars and
/// comments; in block context only where a node starts).
fn check_flow_depth(text: &str) -> Result<()> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // Whether a node may start here: at the start of a line (after its
    // indentation), after `- `, `: `, `? `, and in flow context after
    // `[`, `{` and `,`.
    let mut node_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => node_start = true,
            b' ' | b'\t' | b'\r' => {}
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'[' | b'{' if node_start || depth > 0 => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    let (line, column) = crate::error::line_column(b, i);
                    return Err(Error::new(
                        ErrorKind::Json,
                        format!("invalid YAML: collections nested deeper than {MAX_FLOW_DEPTH} levels"),
                    )
                    .with_position(line, column));
                }
                node_start = true;
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                node_start = false;
            }
            b',' if depth > 0 => node_start = true,
            b'"' | b'\'' if node_start => {
                // A quoted scalar: to its closing quote.
                i += 1;
                while i < b.len() {
                    match (c, b[i]) {
                        (b'"', b'\\') => i += 1,
                        (b'"', b'"') => break,
                        (b'\'', b'\'') if b.get(i + 1) == Some(&b'\'') => i += 1,
                        (b'\'', b'\'') => break,
                        _ => {}
                    }
                    i += 1;
                }
                node_start = false;
            }
            b'-' | b':' | b'?' if b.get(i + 1).is_none_or(|n| matches!(n, b' ' | b'\t' | b'\n' | b'\r')) => {
                node_start = true
            }
            b':' if depth > 0 => node_start = true,
            _ => node_start = false,
        }
        i += 1;
    }
    Ok(())
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
                key.strip_prefix(k)
                    .is_some_and(|rest| rest.trim_start_matches(['"', '\'']).trim_start().starts_with(':'))
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
    use crate::json;

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
    fn deep_flow_collections_are_refused_before_parsing() {
        let deep = format!("openapi: 3.0.0\nx: {}\n", "[".repeat(200));
        let e = parse_yaml(&deep).unwrap_err();
        assert!(e.message.contains("nested deeper than 128"), "{e}");
        assert_eq!((e.line, e.column), (Some(2), Some(132)));
        // Brackets in plain scalars, quoted scalars and comments do not count.
        let text = format!(
            "a: x{0}\nb: \"{0}\"\nc: '{0}'\nd: [a, '{0}', \"]{0}\"] # {0}\ne: {{k: [1, {{m: [2]}}]}}\n",
            "[".repeat(300)
        );
        let v = parse_yaml(&text).unwrap();
        assert_eq!(v["e"]["k"][1]["m"][0], 2);
    }

    #[test]
    fn detects_yaml_openapi() {
        assert!(looks_like_yaml_openapi("# c\nopenapi: 3.0.0\ninfo: {}"));
        assert!(looks_like_yaml_openapi("\"swagger\": \"2.0\""));
        assert!(!looks_like_yaml_openapi("info:\n  openapi: 3"));
        assert!(!looks_like_yaml_openapi("{\"openapi\": 1,"));
        assert!(!looks_like_yaml_openapi("{\n\"openapi\": \"3.0.0\",\n oops"));
    }

    /// "More than one document" was said of any error after the first
    /// document and of an empty one after a last `---`.
    #[test]
    fn documents_after_the_first() {
        let doc = "openapi: 3.0.0\npaths: {}\n";
        assert_eq!(parse_yaml(&format!("{doc}---\n")).unwrap(), parse_yaml(doc).unwrap());
        let e = parse_yaml(&format!("{doc}---\nfoo: [\n")).unwrap_err();
        assert!(!e.message.contains("more than one document"), "{e}");
        assert_eq!(e.line, Some(5), "{e}");
        let e = parse_yaml(&format!("{doc}---\nopenapi: 3.0.0\n")).unwrap_err();
        assert!(e.message.contains("more than one document (document 2"), "{e}");
    }
}
