//! OpenAPI schemas made into tool argument schemas, after the
//! Normalizer has inlined their `$ref`s: what only describes responses or
//! documentation goes (`readOnly` properties, `xml`, `discriminator`,
//! `x-` keywords), `allOf` of compatible schemas is merged, and what
//! gptel, llm or a JSON Schema validator would reject is repaired (each
//! repair a warning).

use crate::model::{At, Code, Field, Problem, Schema};
use crate::schema::walk_mut;
use crate::value::{Map, Value};

/// Schema keywords that do not describe a value to send.
const DROPPED: &[&str] = &["xml", "externalDocs", "discriminator", "collectionFormat", "readOnly", "writeOnly"];

/// Keywords whose value must be a non-negative integer.
const COUNTS: &[&str] = &["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];
/// Keywords whose value must be a number.
const NUMBERS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/// Tidy one argument's (normalised) schema in place.
pub fn tidy(schema: &mut Schema, path: &str, warnings: &mut Vec<Problem>) {
    let _ = walk_mut(schema, &At::Root(path), &mut |node, p| {
        let keys = tidy_node(node, p, warnings);
        if keys & CHECKED != 0 {
            check_keywords(node, p, warnings);
        }
        Ok(())
    });
}

// The keywords tidying looks at, as bits: a node's keys are read once,
// and most nodes (a `type` and a `description`) need nothing more.
const ALL_OF: u32 = 1;
const X_NULLABLE: u32 = 1 << 1;
const NULLABLE: u32 = 1 << 2;
const GOES: u32 = 1 << 3; // an `x-` keyword or one of DROPPED
const PROPERTIES: u32 = 1 << 4;
const EXCLUSIVE: u32 = 1 << 5;
const TYPED: u32 = 1 << 6; // `type`, or a combinator or `const` that stands for it
const TYPE: u32 = 1 << 7;
const ITEMS: u32 = 1 << 8;
const ENUM: u32 = 1 << 9;
const REQUIRED: u32 = 1 << 10;
const ADDITIONAL: u32 = 1 << 11;
const CHECKED: u32 = 1 << 12; // COUNTS, NUMBERS, `pattern`, `format`

fn key_bit(k: &str) -> u32 {
    match k {
        "type" => TYPE | TYPED,
        // The commonest keys, answered before the tests below.
        "description" | "title" | "default" | "example" => 0,
        "properties" => PROPERTIES,
        "items" => ITEMS,
        "enum" => ENUM,
        "required" => REQUIRED,
        "allOf" => ALL_OF | TYPED,
        "anyOf" | "oneOf" | "const" => TYPED,
        "nullable" => NULLABLE,
        "additionalProperties" => ADDITIONAL,
        "exclusiveMinimum" | "exclusiveMaximum" => EXCLUSIVE | CHECKED,
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" | "minimum"
        | "maximum" | "multipleOf" | "pattern" | "format" => CHECKED,
        "x-nullable" => X_NULLABLE | GOES,
        k if k.starts_with("x-") || DROPPED.contains(&k) => GOES,
        _ => 0,
    }
}

fn keys_of(node: &Schema) -> u32 {
    node.keys().fold(0, |bits, k| bits | key_bit(k))
}

/// Keywords whose values a JSON Schema validator would refuse (the
/// argument checker compiles every tool's schema): converted when they
/// can be, else dropped.
fn check_keywords(node: &mut Schema, path: &At, warnings: &mut Vec<Problem>) {
    let mut drop: Vec<(&str, &str)> = Vec::new();
    for k in COUNTS {
        let Some(v) = node.get_mut(k) else { continue };
        let n = match &*v {
            Value::Number(n) if n.is_u64() => continue,
            Value::Number(n) => n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match n {
            Some(n) => *v = Value::from(n),
            None => drop.push((k, "must be a non-negative integer")),
        }
    }
    for k in NUMBERS {
        let Some(v) = node.get_mut(k) else { continue };
        let n = match &*v {
            Value::Number(_) => continue,
            Value::String(s) => s.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64),
            _ => None,
        };
        match n {
            Some(n) => *v = Value::Number(n),
            None => drop.push((k, "must be a number")),
        }
    }
    match node.field("pattern") {
        Some(Value::String(p)) => match crate::budget::pattern_compiles(p) {
            Some(true) => {}
            Some(false) => drop.push(("pattern", "is not a regular expression the argument checker can use")),
            // Past the import's pattern budget: kept, unchecked.
            None => warnings.extend(
                crate::budget::pattern_not_checked()
                    .map(|m| Problem::warning(Code::PatternNotChecked, path.key("pattern"), m)),
            ),
        },
        None => {}
        Some(_) => drop.push(("pattern", "must be a string")),
    }
    if node.field("format").is_some_and(|f| !f.is_string()) {
        drop.push(("format", "must be a string"));
    }
    for (k, why) in drop {
        node.shift_remove(k);
        warnings.push(Problem::warning(Code::Dropped, path.key(k), format!("`{k}` {why}: dropped")));
    }
}

/// Tidy one node; returns the bits of the keys it has after.
fn tidy_node(node: &mut Schema, path: &At, warnings: &mut Vec<Problem>) -> u32 {
    let mut keys = keys_of(node);
    if keys & ALL_OF != 0 {
        merge_all_of(node, 0);
        keys = keys_of(node);
    }
    // Swagger's `x-nullable`.
    if keys & X_NULLABLE != 0 && node.field("x-nullable") == Some(&Value::Bool(true)) {
        node.insert("nullable".into(), Value::Bool(true));
        keys |= NULLABLE;
    }
    if keys & GOES != 0 || (keys & NULLABLE != 0 && node.field("nullable") != Some(&Value::Bool(true))) {
        node.retain(|k, v| {
            !k.starts_with("x-") && !DROPPED.contains(&k.as_str()) && (k != "nullable" || v == &Value::Bool(true))
        });
        keys = keys_of(node);
    }
    if keys & PROPERTIES != 0 {
        drop_read_only(node);
    }
    if keys & EXCLUSIVE != 0 {
        for (bound, limit) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            // OpenAPI 3.0 and Swagger: a boolean beside `minimum`.
            if let Some(Value::Bool(b)) = node.get(bound) {
                let b = *b;
                node.shift_remove(bound);
                if b {
                    if let Some(n) = node.shift_remove(limit) {
                        node.insert(bound.into(), n);
                    }
                }
            }
        }
        keys = keys_of(node);
    }
    if keys & TYPED == 0 {
        ensure_type(node, keys, path, warnings);
        keys |= TYPE | TYPED;
    }
    if keys & TYPE != 0 && keys & ITEMS == 0 && node.field("type").and_then(Value::as_str) == Some("array") {
        let mut items = Map::new();
        items.insert("type".into(), Value::from("string"));
        node.insert("items".into(), Value::Object(items));
        warnings.push(Problem::warning(
            Code::Assumed,
            path,
            "an array without `items`: its items are taken to be strings",
        ));
    }
    if keys & ENUM != 0 {
        fix_enum(node, path, warnings);
    }
    if keys & REQUIRED != 0 {
        fix_required(node, path, warnings);
    }
    keys
}

/// `allOf` whose members agree on the type becomes one schema: properties
/// merged, `required` joined, other keywords taken where not set yet.
fn merge_all_of(node: &mut Schema, depth: usize) {
    if depth > 32 {
        return;
    }
    let Some(Value::Array(members)) = node.get_mut("allOf") else { return };
    for m in members.iter_mut() {
        if let Value::Object(m) = m {
            if m.has("allOf") {
                merge_all_of(m, depth + 1);
            }
        }
    }
    let mut ty = node.field("type").cloned();
    let Some(Value::Array(members)) = node.field("allOf") else { return };
    for m in members {
        let Value::Object(m) = m else { return };
        match (m.field("type"), &ty) {
            (Some(t), Some(u)) if t != u => return,
            (Some(t), None) => ty = Some(t.clone()),
            _ => {}
        }
        if m.has("allOf") {
            return; // a member that could not be merged itself
        }
    }
    let Some(Value::Array(members)) = node.shift_remove("allOf") else { return };
    for m in members {
        let Value::Object(m) = m else { continue };
        for (k, v) in m {
            match (k.as_str(), v) {
                ("properties", Value::Object(props)) => {
                    let Value::Object(mine) = node.entry("properties").or_insert_with(|| Value::Object(Map::new()))
                    else {
                        continue;
                    };
                    for (name, p) in props {
                        match (mine.get_mut(&name), p) {
                            (Some(Value::Object(have)), Value::Object(more)) => {
                                for (pk, pv) in more {
                                    have.entry(pk).or_insert(pv);
                                }
                            }
                            (Some(_), _) => {}
                            (None, p) => {
                                mine.insert(name, p);
                            }
                        }
                    }
                }
                ("required", Value::Array(names)) => {
                    let Value::Array(mine) = node.entry("required").or_insert_with(|| Value::Array(Vec::new())) else {
                        continue;
                    };
                    let mut have: std::collections::HashSet<String> = mine.iter().map(Value::to_string).collect();
                    for n in names {
                        if have.insert(n.to_string()) {
                            mine.push(n);
                        }
                    }
                }
                (_, v) => {
                    node.entry(k).or_insert(v);
                }
            }
        }
    }
    // `type` first, as people write it.
    if let Some(t) = node.shift_remove("type") {
        let rest = std::mem::take(node);
        node.insert("type".into(), t);
        node.extend(rest);
    }
}

/// Properties the server sets (`readOnly`) are not sent.
fn drop_read_only(node: &mut Schema) {
    let Some(Value::Object(props)) = node.get_mut("properties") else { return };
    let gone: std::collections::HashSet<String> =
        props.iter().filter(|(_, p)| p.field("readOnly") == Some(&Value::Bool(true))).map(|(k, _)| k.clone()).collect();
    if gone.is_empty() {
        return;
    }
    props.retain(|k, _| !gone.contains(k));
    if let Some(Value::Array(req)) = node.get_mut("required") {
        req.retain(|r| !r.as_str().is_some_and(|r| gone.contains(r)));
    }
}

/// A node without `type` (left so by a combinator the Normalizer kept,
/// or after merging `allOf`) that the plist format cannot do without.
/// `keys` are the node's key bits.
fn ensure_type(node: &mut Schema, keys: u32, path: &At, warnings: &mut Vec<Problem>) {
    let t = if keys & (PROPERTIES | ADDITIONAL) != 0 {
        "object"
    } else if keys & ITEMS != 0 {
        "array"
    } else {
        "string"
    };
    warnings.push(Problem::warning(Code::Assumed, path, format!("no `type`: assumed \"{t}\"")));
    let rest = std::mem::take(node);
    node.insert("type".into(), Value::from(t));
    node.extend(rest);
}

/// `enum` values of another type than `type`: converted when they can be
/// (`1` for a string is `"1"`), else the `enum` is dropped.
fn fix_enum(node: &mut Schema, path: &At, warnings: &mut Vec<Problem>) {
    let Some(ty) = node.field("type").and_then(Value::as_str).map(String::from) else { return };
    let Some(Value::Array(values)) = node.get_mut("enum") else {
        node.shift_remove("enum");
        warnings.push(Problem::warning(Code::Dropped, path.key("enum"), "`enum` must be an array: dropped"));
        return;
    };
    let mut converted = false;
    let mut bad = false;
    for v in values.iter_mut() {
        let fixed = match (ty.as_str(), &*v) {
            (_, Value::Null) => continue,
            ("string", Value::String(_)) => continue,
            ("string", Value::Number(_) | Value::Bool(_)) => Some(Value::from(v.to_string())),
            ("integer", Value::Number(n)) if n.is_i64() || n.is_u64() => continue,
            ("integer", Value::Number(n)) => {
                n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9e15).map(|f| Value::from(f as i64))
            }
            ("number", Value::Number(_)) => continue,
            ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
            ("number", Value::String(s)) => {
                s.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            ("boolean", Value::Bool(_)) => continue,
            ("boolean", Value::String(s)) => match s.as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            _ => None,
        };
        match fixed {
            Some(f) => {
                *v = f;
                converted = true;
            }
            None => bad = true,
        }
    }
    if bad {
        node.shift_remove("enum");
        warnings.push(Problem::warning(
            Code::Dropped,
            path.key("enum"),
            format!("`enum` values do not match type \"{ty}\": enum dropped"),
        ));
    } else if converted {
        warnings.push(Problem::warning(
            Code::Moved,
            path.key("enum"),
            format!("`enum` values converted to type \"{ty}\""),
        ));
    }
}

/// `required` naming properties the object does not have (common beside
/// `allOf`): those names go.
fn fix_required(node: &mut Schema, path: &At, warnings: &mut Vec<Problem>) {
    let props = node.field("properties").and_then(Value::as_object);
    let unknown: Vec<String> = match node.field("required") {
        Some(Value::Array(req)) => req
            .iter()
            .filter(|r| !r.as_str().is_some_and(|r| props.is_some_and(|p| p.contains_key(r))))
            .map(|r| r.as_str().map_or_else(|| r.to_string(), String::from))
            .collect(),
        Some(_) => {
            node.shift_remove("required");
            warnings.push(Problem::warning(
                Code::Dropped,
                path.key("required"),
                "`required` must be an array of names: dropped",
            ));
            return;
        }
        None => return,
    };
    if unknown.is_empty() {
        return;
    }
    let gone: std::collections::HashSet<&str> = unknown.iter().map(String::as_str).collect();
    if let Some(Value::Array(req)) = node.get_mut("required") {
        req.retain(|r| r.as_str().is_some_and(|r| !gone.contains(r)));
        if req.is_empty() {
            node.shift_remove("required");
        }
    }
    warnings.push(Problem::warning(
        Code::UnknownRequired,
        path.key("required"),
        format!("required {} not among the properties: dropped", crate::model::some_names(&unknown, 10)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn tidied(v: Value) -> (Value, Vec<Problem>) {
        let mut s = v.as_object().unwrap().clone();
        let mut w = Vec::new();
        tidy(&mut s, "p", &mut w);
        (Value::Object(s), w)
    }

    #[test]
    fn merges_all_of_and_drops_read_only() {
        let (s, w) = tidied(json!({"allOf": [
            {"type": "object", "properties": {"id": {"type": "integer", "readOnly": true}, "a": {"type": "string"}},
             "required": ["id", "a"]},
            {"type": "object", "properties": {"b": {"type": "string", "xml": {"name": "b"}}}, "required": ["b"]}],
            "description": "d"}));
        assert_eq!(
            s,
            json!({"type": "object", "description": "d",
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]})
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn merges_nested_all_of() {
        let (s, _) = tidied(json!({"allOf": [{"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]},
                                              {"properties": {"b": {"type": "string"}}}]}));
        assert_eq!(s, json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}));
    }

    #[test]
    fn keywords_a_validator_refuses() {
        let (s, w) = tidied(json!({"type": "string", "pattern": "\\p{XDigit}{8}", "minLength": "2", "maxLength": -1,
                                   "format": 3, "minimum": "1.5"}));
        assert_eq!(s, json!({"type": "string", "minLength": 2, "minimum": 1.5}));
        let paths: Vec<&str> = w.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.maxLength", "p.pattern", "p.format"]);
        let (s, w) = tidied(json!({"type": "string", "pattern": "^[a-z]+$"}));
        assert_eq!(s["pattern"], "^[a-z]+$");
        assert!(w.is_empty());
    }

    #[test]
    fn keeps_all_of_of_different_types() {
        let (s, _) = tidied(json!({"allOf": [{"type": "string"}, {"type": "integer"}]}));
        assert!(s.field("allOf").is_some());
    }

    #[test]
    fn repairs() {
        let (s, w) = tidied(json!({"type": "object", "properties": {
            "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
            "e": {"type": "string", "enum": [1, "b", true, null]},
            "i": {"type": "integer", "enum": ["1", 2.0]},
            "x": {"type": "integer", "enum": ["one"]},
            "l": {"type": "array"},
            "z": {"type": "string", "nullable": false, "x-internal": 1}},
            "required": ["n", "ghost"]}));
        assert_eq!(s["properties"]["n"], json!({"type": "number", "exclusiveMinimum": 0}));
        assert_eq!(s["properties"]["e"]["enum"], json!(["1", "b", "true", null]));
        assert_eq!(s["properties"]["i"]["enum"], json!([1, 2]));
        assert!(s["properties"]["x"].field("enum").is_none());
        assert_eq!(s["properties"]["l"]["items"], json!({"type": "string"}));
        assert_eq!(s["properties"]["z"], json!({"type": "string"}));
        assert_eq!(s["required"], json!(["n"]));
        let msgs: Vec<&str> = w.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            msgs,
            ["p.required", "p.properties.e.enum", "p.properties.i.enum", "p.properties.x.enum", "p.properties.l"]
        );
    }

    #[test]
    fn each_repair_sees_the_keys_the_ones_before_left() {
        // `x-nullable` becomes `nullable` and goes; a false exclusive bound
        // goes; the node then has no `type`, and `items` makes it an array.
        let (s, w) = tidied(json!({"x-nullable": true, "exclusiveMaximum": false, "maximum": 3,
                                   "items": {"type": "string", "x-nullable": false}}));
        assert_eq!(s, json!({"type": "array", "maximum": 3, "items": {"type": "string"}, "nullable": true}));
        assert_eq!(s.as_object().unwrap().keys().next().map(String::as_str), Some("type"));
        let paths: Vec<&str> = w.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p"]);
        assert!(w[0].message.contains("assumed \"array\""), "{w:?}");
        // Merging `allOf` leaves properties without a type: an object.
        let (s, w) = tidied(json!({"allOf": [{"properties": {"a": {"type": "string", "minLength": "1"}}}], "x-id": 1}));
        assert_eq!(s, json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}));
        assert!(w.len() == 1 && w[0].message.contains("assumed \"object\""), "{w:?}");
        // A key like a checked keyword, but not one, is left alone.
        let (s, w) = tidied(json!({"type": "string", "patterns": 3, "formats": [1]}));
        assert_eq!(s, json!({"type": "string", "patterns": 3, "formats": [1]}));
        assert!(w.is_empty(), "{w:?}");
    }
}
