//! Gemini function declarations (`gemini`): `{"functionDeclarations":
//! [{"name", "description", "parameters"}]}`.
//!
//! `parameters` is google-genai's `types.Schema` (an OpenAPI 3.0 subset,
//! pydantic models that forbid extra fields): the keywords in [`KEEP`].
//! Keywords it refuses are rewritten into ones it accepts, or moved into
//! the description so the model still reads them (as pydantic-ai's
//! `profiles/google.py`, `GoogleJsonSchemaTransformer`, does), with a
//! warning.  A type list becomes one type and `nullable`.
//!
//! Decision: the writer uses `parameters`, not `parametersJsonSchema`
//! (google-genai's `FunctionDeclaration.parameters_json_schema`, full
//! JSON Schema, mutually exclusive with `parameters`).  `parameters` is
//! what every Gemini endpoint takes (the Gemini API and Vertex AI, old and
//! new model versions) and what gptel's Gemini backend sends; what it
//! cannot say is kept in the description.  A document read with
//! `parametersJsonSchema` is read as plain JSON Schema.
//!
//! Names (Gemini API reference, `FunctionDeclaration.name`): letters,
//! digits, `_ . : -`, at most 64 characters, starting with a letter or
//! `_`.

use super::{describe, note, Handling, NameRule, Parts, Profile, ToolKeys};
use crate::error::Result;
use crate::model::{Field, Problem, Schema, Tool};
use crate::schema::{slot, Slot};
use crate::value::{Map, Value};

fn name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn name_rest(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

pub const PROFILE: Profile = Profile {
    name: "gemini",
    about: "Gemini function declarations: {\"functionDeclarations\":[...]}, schemas in its OpenAPI subset",
    names: NameRule { pattern: "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$", max: 64, first: name_first, rest: name_rest },
    gptel_backend: true,
    // google-genai `FunctionDeclaration`: behavior and
    // responseJsonSchema besides name, description and parameters.
    tool_keys: ToolKeys::Only(&["behavior", "responseJsonSchema"]),
    subset: "google-genai types.Schema: type, format, title, description, nullable, enum, items, properties, \
             required, minItems, maxItems, minLength, maxLength, minimum, maximum, pattern, minProperties, \
             maxProperties, anyOf, default, example, propertyOrdering",
    outside: OUTSIDE,
    limits: "formats: date-time and enum for strings, float and double for numbers, int32 and int64 for integers; \
             enum values are strings",
    strict: "none",
    document_key: Some("functionDeclarations"),
    write,
};

const OUTSIDE: &[(&str, Handling)] = &[
    ("type list", Handling::Transformed("one type and nullable; several types become anyOf")),
    ("type null", Handling::Transformed("nullable")),
    ("allOf", Handling::Transformed("its parts are merged into the schema holding it")),
    ("oneOf", Handling::Transformed("becomes anyOf")),
    ("const", Handling::Transformed("a string becomes a one-value enum; any other value is described")),
    ("examples", Handling::Transformed("the first becomes example")),
    ("enum of non-strings", Handling::Described),
    ("format (other than the ones allowed)", Handling::Described),
    ("exclusiveMinimum", Handling::Described),
    ("exclusiveMaximum", Handling::Described),
    ("multipleOf", Handling::Described),
    ("uniqueItems", Handling::Described),
    ("$ref", Handling::Transformed("local references are inlined; a recursive one is described")),
    ("$schema, $id, $comment, additionalProperties, $defs, definitions", Handling::Dropped),
    ("any other keyword", Handling::Dropped),
];

/// Keywords google-genai's `types.Schema` accepts (and the Gemini API
/// with it) that this writer keeps.  `additionalProperties`, `ref` and
/// `defs` are `types.Schema` fields too, but not every Gemini endpoint
/// takes them, and gptel's Gemini backend strips `additionalProperties`.
pub const KEEP: &[&str] = &[
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

/// Dropped without a warning: they say nothing the model needs.
const QUIET: &[&str] = &["$schema", "$id", "$comment", "additionalProperties", "$defs", "definitions"];

pub fn write(tool: Tool, warnings: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, false);
    let mut params = std::mem::take(&mut p.params);
    inline_refs(&mut params, warnings)?;
    sanitize_at(&mut params, "parameters", warnings);
    // Gemini wants no `parameters` at all for a tool without arguments
    // (an empty OBJECT is rejected).
    let params = (!p.no_args).then_some(Value::Object(params));
    Ok(Value::Object(p.object("parameters", params, PROFILE.tool_keys)))
}

/// Most schema nodes inlining the `$ref`s of one tool may visit: a
/// schema of references to references otherwise grows exponentially.
pub const MAX_INLINED: usize = 100_000;

/// Inline the local `$ref`s of `root`, a parameters schema, into the
/// schemas holding them (their own keywords win), and drop the
/// definitions: Gemini's `parameters` take no `$ref`.  A recursive
/// reference cannot be inlined: it is said in the description, with a
/// warning, as is a reference that does not resolve.
pub fn inline_refs(root: &mut Schema, warnings: &mut Vec<Problem>) -> Result<()> {
    if !has_ref(root) {
        return Ok(());
    }
    let doc = Value::Object(root.clone());
    let mut budget = MAX_INLINED;
    inline(root, &doc, "parameters", &mut Vec::new(), &mut budget, warnings)?;
    root.shift_remove("$defs");
    root.shift_remove("definitions");
    Ok(())
}

fn has_ref(node: &Schema) -> bool {
    node.contains_key("$ref")
        || node.values().any(|v| match v {
            Value::Object(o) => has_ref(o),
            Value::Array(a) => a.iter().any(|x| x.as_object().is_some_and(has_ref)),
            _ => false,
        })
}

fn inline(
    node: &mut Schema,
    doc: &Value,
    path: &str,
    stack: &mut Vec<String>,
    budget: &mut usize,
    warnings: &mut Vec<Problem>,
) -> Result<()> {
    if *budget == 0 {
        // Placed at the parameters: the path reached is as long as the
        // expansion is deep.
        return Err(crate::error::Error::at(
            crate::error::ErrorKind::Write,
            "parameters",
            format!("inlining its $refs for Gemini would make more than {MAX_INLINED} schema nodes (references to references)"),
        ));
    }
    *budget -= 1;
    let depth = stack.len();
    // A reference to a reference is followed until a schema.
    while let Some(Value::String(r)) = node.shift_remove("$ref") {
        let at = crate::model::join(path, "$ref");
        if stack.contains(&r) {
            warnings.push(Problem::warning(at, format!("recursive reference {r}: Gemini cannot say it; moved into the description")));
            describe(node, &[format!("same shape as {r}")]);
            break;
        }
        match r.strip_prefix('#').and_then(|p| crate::schema::resolve_pointer(doc, p)) {
            Some(Value::Object(target)) => {
                for (k, v) in target {
                    if k != "$defs" && k != "definitions" && !node.contains_key(k) {
                        node.insert(k.clone(), v.clone());
                    }
                }
                stack.push(r);
            }
            _ => {
                warnings.push(Problem::warning(at, format!("reference {r} does not resolve here: left out")));
                break;
            }
        }
    }
    for (key, value) in node.iter_mut() {
        if key == "$defs" || key == "definitions" {
            continue;
        }
        let here = crate::model::join(path, key);
        match (slot(key), value) {
            (Slot::Map, Value::Object(map)) => {
                for (name, sub) in map.iter_mut() {
                    if let Value::Object(s) = sub {
                        inline(s, doc, &crate::model::join(&here, name), stack, budget, warnings)?;
                    }
                }
            }
            (Slot::Single, Value::Object(s)) => inline(s, doc, &here, stack, budget, warnings)?,
            (Slot::List, Value::Array(list)) | (Slot::Single, Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    if let Value::Object(s) = sub {
                        inline(s, doc, &crate::model::index(&here, i), stack, budget, warnings)?;
                    }
                }
            }
            _ => {}
        }
    }
    stack.truncate(depth);
    Ok(())
}

/// Rewrite a schema (recursively) into what Gemini accepts.
pub fn sanitize(node: &mut Schema) {
    sanitize_at(node, "", &mut Vec::new());
}

/// [`sanitize`], warning of what is moved into the description or
/// dropped; `path` is where `node` is.
pub fn sanitize_at(node: &mut Schema, path: &str, warnings: &mut Vec<Problem>) {
    let mut notes: Vec<String> = Vec::new();
    let at = |key: &str| crate::model::join(path, key);

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
            warnings.push(Problem::warning(at("const"), "Gemini takes no \"const\" but a string one: moved into the description"));
            notes.push(note("const", &c));
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
            warnings.push(Problem::warning(at("enum"), "Gemini takes enums of strings only: moved into the description"));
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
            warnings.push(Problem::warning(at("format"), format!("Gemini does not take format \"{f}\" here: moved into the description")));
            notes.push(format!("format: {f}"));
            node.shift_remove("format");
        }
    }
    for key in ["exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"] {
        if let Some(v) = node.get(key) {
            warnings.push(Problem::warning(at(key), format!("Gemini does not take \"{key}\": moved into the description")));
            if !v.is_boolean() {
                notes.push(note(key, v));
            } else if v == &Value::Bool(true) {
                notes.push(key.to_string());
            }
        }
    }
    for key in node.keys() {
        if !KEEP.contains(&key.as_str())
            && !QUIET.contains(&key.as_str())
            && !matches!(key.as_str(), "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" | "uniqueItems")
        {
            warnings.push(Problem::warning(at(key), format!("Gemini does not take \"{key}\": left out")));
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
    describe(node, &notes);
    // Recurse.
    for (key, value) in node.iter_mut() {
        let here = crate::model::join(path, key);
        match (slot(key), value) {
            (Slot::Map, Value::Object(map)) => {
                for (name, sub) in map.iter_mut() {
                    if let Value::Object(s) = sub {
                        sanitize_at(s, &crate::model::join(&here, name), warnings);
                    }
                }
            }
            (Slot::Single, Value::Object(s)) => sanitize_at(s, &here, warnings),
            (Slot::List, Value::Array(list)) | (Slot::Single, Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    if let Value::Object(s) = sub {
                        sanitize_at(s, &crate::model::index(&here, i), warnings);
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

    #[test]
    fn refs_are_inlined_and_recursion_described() {
        let mut s = json!({"type": "object", "$defs": {
                "Pt": {"type": "object", "properties": {"x": {"type": "number"}}},
                "Alias": {"$ref": "#/$defs/Pt"},
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "properties": {"p": {"$ref": "#/$defs/Alias", "description": "A point."},
                           "n": {"$ref": "#/$defs/Node"},
                           "bad": {"$ref": "#/$defs/Missing"}}})
        .as_object()
        .unwrap()
        .clone();
        let mut w = Vec::new();
        inline_refs(&mut s, &mut w).unwrap();
        let out = Value::Object(s);
        assert_eq!(out["properties"]["p"], json!({"description": "A point.", "type": "object", "properties": {"x": {"type": "number"}}}));
        assert_eq!(out["properties"]["n"]["properties"]["next"], json!({"description": "(same shape as #/$defs/Node)"}));
        assert!(out.get("$defs").is_none());
        let paths: Vec<&str> = w.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["parameters.properties.n.properties.next.$ref", "parameters.properties.bad.$ref"]);
    }

    #[test]
    fn reference_bombs_are_bounded() {
        // Each level refers to the one below twice: 2^40 nodes inlined.
        let mut defs = Map::new();
        defs.insert("L0".to_string(), json!({"type": "string"}));
        for i in 1..40 {
            defs.insert(format!("L{i}"), json!({"type": "array", "items": {"anyOf": [
                {"$ref": format!("#/$defs/L{}", i - 1)}, {"$ref": format!("#/$defs/L{}", i - 1)}]}}));
        }
        let mut s = json!({"type": "object", "$defs": Value::Object(defs), "properties": {"a": {"$ref": "#/$defs/L39"}}})
            .as_object()
            .unwrap()
            .clone();
        let err = inline_refs(&mut s, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("more than 100000"), "{err}");
    }

    #[test]
    fn refused_keywords_are_described_and_warned_with_their_path() {
        let mut s = json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0, "const": 3},
                           "t": {"type": ["boolean", "null"], "x-extra": 1}}})
        .as_object()
        .unwrap()
        .clone();
        let mut w = Vec::new();
        sanitize_at(&mut s, "parameters", &mut w);
        assert_eq!(
            Value::Object(s),
            json!({"type": "object", "properties": {
                "n": {"type": "integer", "description": "(const: 3; exclusiveMinimum: 0)"},
                "t": {"type": "boolean", "nullable": true}}})
        );
        let paths: Vec<&str> = w.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["parameters.properties.n.const", "parameters.properties.n.exclusiveMinimum", "parameters.properties.t.x-extra"]);
    }
}
