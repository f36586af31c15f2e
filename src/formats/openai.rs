//! OpenAI function tools: Chat Completions (`openai`), Responses
//! (`openai-responses`) and strict Structured Outputs (`openai-strict`).
//!
//! Sources: OpenAI's function-calling guide and its Structured Outputs
//! guide, "Supported schemas" (every object `additionalProperties:
//! false` with every property in `required`, optional ones made
//! nullable; `default` is refused: "In context=('properties', 'x'),
//! 'default' is not permitted"; at most 10 levels of nesting, 5,000
//! properties, 1,000 values per enum, 120,000 characters of property
//! names, definition names and enum values, 15,000 for an enum of more
//! than 250 strings); the Agents SDK's `src/agents/strict_schema.py`
//! (`ensure_strict_json_schema`: closes objects, requires every
//! property, flattens a one-part `allOf`); pydantic-ai's
//! `profiles/openai.py` (`OpenAIJsonSchemaTransformer`: keywords strict
//! mode does not take are moved into the description, `oneOf` becomes
//! `anyOf`).

use super::{describe, note, Handling, Parts, Profile, ToolKeys, OPENAI_NAMES};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{At, Field, Problem, Schema, Tool};
use crate::schema::walk_mut;
use crate::value::{Map, Value};

pub const CHAT: Profile = Profile {
    name: "openai",
    about: "OpenAI Chat Completions tools: [{\"type\":\"function\",\"function\":{...}}]",
    names: OPENAI_NAMES,
    gptel_backend: true,
    tool_keys: ToolKeys::Only(&["strict"]),
    subset: "any JSON Schema (checked only in strict mode)",
    outside: &[],
    limits: "128 tools per request",
    strict: "openai-strict",
    document_key: None,
    write: write_chat,
};

pub const RESPONSES: Profile = Profile {
    name: "openai-responses",
    about: "OpenAI Responses tools: [{\"type\":\"function\",\"name\":...,\"strict\":false}]",
    names: OPENAI_NAMES,
    gptel_backend: true,
    tool_keys: ToolKeys::Only(&["strict"]),
    subset: "any JSON Schema; `strict` is written false unless the tool says otherwise (the API takes a missing one as true)",
    outside: &[],
    limits: "as openai",
    strict: "`strict: true` with an openai-strict schema",
    document_key: None,
    write: write_responses,
};

pub const STRICT: Profile = Profile {
    name: "openai-strict",
    about: "OpenAI Chat Completions tools with \"strict\": true (Structured Outputs rules)",
    names: OPENAI_NAMES,
    gptel_backend: false,
    tool_keys: ToolKeys::Only(&[]),
    subset: "Structured Outputs: type, properties, required, additionalProperties (false), items, enum, const, \
             anyOf, $ref, $defs, description, title, pattern, format, minimum, maximum, exclusiveMinimum, \
             exclusiveMaximum, multipleOf, minItems, maxItems",
    outside: STRICT_OUTSIDE,
    limits: "10 levels of nesting, 5,000 properties, 1,000 values per enum, 120,000 characters of names and \
             enum values (15,000 for an enum of more than 250 strings): beyond them, an error",
    strict: "this is the strict variant of openai",
    document_key: None,
    write: write_strict,
};

/// Keywords strict mode refuses, and what is done with them.
const STRICT_OUTSIDE: &[(&str, Handling)] = &[
    ("default", Handling::Described),
    ("minLength", Handling::Described),
    ("maxLength", Handling::Described),
    ("minProperties", Handling::Described),
    ("maxProperties", Handling::Described),
    ("uniqueItems", Handling::Described),
    ("contains", Handling::Described),
    ("minContains", Handling::Described),
    ("maxContains", Handling::Described),
    ("propertyNames", Handling::Described),
    ("patternProperties", Handling::Described),
    ("unevaluatedProperties", Handling::Described),
    ("unevaluatedItems", Handling::Described),
    ("dependentRequired", Handling::Described),
    ("dependentSchemas", Handling::Described),
    ("not", Handling::Described),
    ("if", Handling::Described),
    ("then", Handling::Described),
    ("else", Handling::Described),
    ("oneOf", Handling::Transformed("becomes anyOf")),
    ("allOf", Handling::Transformed("its parts are merged into the schema holding it")),
    ("additionalProperties", Handling::Transformed("always false; a schema or true is said in the description")),
    ("optional (nested, from plists)", Handling::Transformed("the property is required and nullable")),
];

/// String formats strict mode takes.
const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

pub const MAX_DEPTH: usize = 10;
pub const MAX_PROPERTIES: usize = 5000;
pub const MAX_ENUM: usize = 1000;
pub const MAX_CHARS: usize = 120_000;
pub const MAX_BIG_ENUM_CHARS: usize = 15_000;

/// The Chat Completions function object around `params`.
fn function(p: &Parts, params: Schema, keys: ToolKeys) -> Map<String, Value> {
    p.object("parameters", Some(Value::Object(params)), keys)
}

fn wrap(f: Map<String, Value>) -> Value {
    let mut body = Map::new();
    body.insert("type".into(), Value::from("function"));
    body.insert("function".into(), Value::Object(f));
    Value::Object(body)
}

pub fn write_chat(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let params = std::mem::take(&mut p.params);
    Ok(wrap(function(&p, params, CHAT.tool_keys)))
}

pub fn write_responses(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut body = Map::new();
    body.insert("type".into(), Value::from("function"));
    body.insert("name".into(), p.name.clone());
    p.put_description(&mut body);
    body.insert("parameters".into(), Value::Object(std::mem::take(&mut p.params)));
    p.put_extras(RESPONSES.tool_keys, &mut body);
    // The Responses API treats a missing `strict` as true, which rejects
    // ordinary schemas: say so explicitly.
    body.entry("strict").or_insert(Value::Bool(false));
    p.put_in_order(&mut body, "parameters");
    Ok(Value::Object(body))
}

pub fn write_strict(tool: Tool, warnings: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut params = std::mem::take(&mut p.params);
    inline_sibling_refs(&mut params, warnings)?;
    make_strict(&mut params, warnings);
    check_limits(&params)?;
    let mut f = function(&p, params, STRICT.tool_keys);
    f.insert("strict".into(), Value::Bool(true));
    Ok(wrap(f))
}

/// Most schema nodes [`inline_sibling_refs`] may visit: a schema of
/// references to references otherwise grows exponentially.
pub const MAX_INLINED: usize = 100_000;

/// Inline each `$ref` that has sibling keywords (`{"$ref": ...,
/// "description": ...}`), as the Agents SDK's `ensure_strict_json_schema`
/// does ("we can't use `$ref`s if there are also other properties
/// defined ... so we unravel the ref"): the node keeps its own keywords
/// and takes those of the target it lacks, after them; a target that is
/// itself a `$ref` is followed.  Strict output is then left as it is by
/// the SDK.  A `$ref` alone stays (strict mode takes it).  A reference
/// back to a schema it is inside cannot be unravelled: its siblings stay
/// beside an `anyOf` of the reference alone, which means the same and
/// which the SDK leaves as it is.  A reference that does not resolve
/// stays, with a warning.  An error past [`MAX_INLINED`] nodes or
/// [`crate::schema::MAX_DEPTH`] levels.
pub fn inline_sibling_refs(root: &mut Schema, warnings: &mut Vec<Problem>) -> Result<()> {
    fn has_sibling_ref(node: &Schema) -> bool {
        (node.len() > 1 && node.contains_key("$ref"))
            || node.values().any(|v| match v {
                Value::Object(o) => has_sibling_ref(o),
                Value::Array(a) => a.iter().any(|x| x.as_object().is_some_and(has_sibling_ref)),
                _ => false,
            })
    }
    if !has_sibling_ref(root) {
        return Ok(());
    }
    let doc = Value::Object(root.clone());
    let mut budget = MAX_INLINED;
    unravel(root, &doc, &At::Root("parameters"), &mut Vec::new(), &mut budget, warnings)
}

/// [`inline_sibling_refs`] of `node`, at `path`, inside the expansions
/// of the references `stack`.
fn unravel(
    node: &mut Schema,
    doc: &Value,
    path: &At,
    stack: &mut Vec<String>,
    budget: &mut usize,
    warnings: &mut Vec<Problem>,
) -> Result<()> {
    if *budget == 0 || stack.len() > crate::schema::MAX_DEPTH {
        return Err(Error::at(
            ErrorKind::Write,
            "parameters",
            format!(
                "inlining the $refs that have sibling keywords, as OpenAI strict mode needs, would make more than \
                 {MAX_INLINED} schema nodes or nest them more than {} levels deep",
                crate::schema::MAX_DEPTH
            ),
        ));
    }
    *budget -= 1;
    let depth = stack.len();
    while node.len() > 1 {
        let Some(Value::String(r)) = node.get("$ref") else { break };
        let r = r.clone();
        let at = path.key("$ref").to_string();
        if stack.contains(&r) {
            if node.contains_key("anyOf") {
                warnings.push(Problem::warning(at, format!("recursive reference {r} beside other keywords and an anyOf: left as it is")));
            } else {
                node.shift_remove("$ref");
                let mut alone = Map::new();
                alone.insert("$ref".into(), Value::from(r));
                node.insert("anyOf".into(), Value::Array(vec![Value::Object(alone)]));
            }
            break;
        }
        match r.strip_prefix('#').and_then(|p| crate::schema::resolve_pointer(doc, p)) {
            Some(Value::Object(target)) => {
                node.shift_remove("$ref");
                for (k, v) in target {
                    if !node.contains_key(k) {
                        node.insert(k.clone(), v.clone());
                    }
                }
                stack.push(r);
            }
            _ => {
                warnings.push(Problem::warning(at, format!("reference {r} does not resolve here: left as it is")));
                break;
            }
        }
    }
    for (key, value) in node.iter_mut() {
        let here = path.key(key);
        match (crate::schema::slot(key), value) {
            (crate::schema::Slot::Map, Value::Object(map)) => {
                for (name, sub) in map.iter_mut() {
                    if let Value::Object(s) = sub {
                        unravel(s, doc, &here.key(name), stack, budget, warnings)?;
                    }
                }
            }
            (crate::schema::Slot::Single, Value::Object(s)) => unravel(s, doc, &here, stack, budget, warnings)?,
            (crate::schema::Slot::List | crate::schema::Slot::Single, Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    if let Value::Object(s) = sub {
                        unravel(s, doc, &here.index(i), stack, budget, warnings)?;
                    }
                }
            }
            _ => {}
        }
    }
    stack.truncate(depth);
    Ok(())
}

/// Whether `node` is an object schema.
fn is_object(node: &Schema) -> bool {
    node.field("type").is_some_and(|t| t == "object" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "object")))
        || node.has("properties")
}

/// Strict mode's schema: every object closed with `additionalProperties:
/// false`, every property required, the formerly optional ones nullable;
/// keywords strict mode refuses moved into the description (warned).
pub fn make_strict(root: &mut Schema, warnings: &mut Vec<Problem>) {
    let _ = walk_mut(root, &At::Root("parameters"), &mut |node, at| {
        // `allOf` parts merge into the node first, so what they bring is
        // handled below like the node's own keywords.
        if let Some(Value::Array(all)) = node.shift_remove("allOf") {
            for part in all {
                if let Value::Object(part) = part {
                    merge_into(node, part);
                }
            }
        }
        if let Some(one) = node.shift_remove("oneOf") {
            match node.get_mut("anyOf") {
                None => {
                    node.insert("anyOf".into(), one);
                }
                Some(_) => describe(node, &[note("oneOf", &one)]),
            }
        }
        let mut notes = Vec::new();
        for (key, how) in STRICT_OUTSIDE {
            if *how != Handling::Described {
                continue;
            }
            if let Some(v) = node.shift_remove(key) {
                warnings.push(Problem::warning(
                    crate::model::join(&at.to_string(), key),
                    format!("\"{key}\" is not permitted by OpenAI strict mode: moved into the description"),
                ));
                notes.push(note(key, &v));
            }
        }
        if let Some(Value::String(f)) = node.field("format") {
            if !STRICT_FORMATS.contains(&f.as_str()) {
                let v = node.shift_remove("format").unwrap_or(Value::Null);
                warnings.push(Problem::warning(
                    crate::model::join(&at.to_string(), "format"),
                    format!("format {v} is not one OpenAI strict mode takes: moved into the description"),
                ));
                notes.push(note("format", &v));
            }
        }
        if is_object(node) {
            match node.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(other) => {
                    notes.push(note("additionalProperties", other));
                    warnings.push(Problem::warning(
                        crate::model::join(&at.to_string(), "additionalProperties"),
                        "OpenAI strict mode needs \"additionalProperties\": false: the value given is moved into the description",
                    ));
                }
            }
            close(node);
        }
        describe(node, &notes);
        Ok(())
    });
}

/// Merge an `allOf` part into `node`: properties and `required` are
/// united, other keywords the node lacks are taken.
fn merge_into(node: &mut Schema, part: Schema) {
    for (k, v) in part {
        match (k.as_str(), node.get_mut(&k), v) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (pk, pv) in theirs {
                    mine.entry(pk).or_insert(pv);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for r in theirs {
                    if !mine.contains(&r) {
                        mine.push(r);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, v) => {
                node.insert(k, v);
            }
        }
    }
}

/// Close an object schema: every property required, the ones that were
/// not made nullable, `additionalProperties: false`.
fn close(node: &mut Schema) {
    let required: std::collections::HashSet<String> = match node.field("required") {
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(String::from)).collect(),
        _ => Default::default(),
    };
    let props = node.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    let mut all = Vec::new();
    if let Value::Object(props) = props {
        for (name, p) in props.iter_mut() {
            all.push(Value::from(name.clone()));
            if !required.contains(name) {
                if let Value::Object(s) = p {
                    add_null(s);
                }
            }
        }
    }
    node.insert("required".into(), Value::Array(all));
    node.insert("additionalProperties".into(), Value::Bool(false));
}

/// Let a schema also accept null.
fn add_null(s: &mut Schema) {
    match s.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            s.insert("type".into(), Value::Array(vec![Value::from(t), Value::from("null")]));
        }
        Some(Value::Array(list)) => {
            if !list.iter().any(|v| v == "null") {
                list.push(Value::from("null"));
            }
        }
        Some(_) => {}
        None => {
            if let Some(Value::Array(alts)) = s.get_mut("anyOf") {
                if !alts.iter().any(|a| a.field("type").is_some_and(|t| t == "null")) {
                    alts.push(null_schema());
                }
                return;
            }
            if s.has("$ref") {
                // A reference cannot take siblings in strict mode: the
                // union goes around it.
                let inner = std::mem::take(s);
                s.insert("anyOf".into(), Value::Array(vec![Value::Object(inner), null_schema()]));
            }
        }
    }
    if let Some(Value::Array(e)) = s.get_mut("enum") {
        if !e.iter().any(Value::is_null) {
            e.push(Value::Null);
        }
    }
}

fn null_schema() -> Value {
    let mut n = Map::new();
    n.insert("type".into(), Value::from("null"));
    Value::Object(n)
}

/// Strict mode's limits, as an error naming the one passed.
pub fn check_limits(root: &Schema) -> Result<()> {
    #[derive(Default)]
    struct Count {
        properties: usize,
        chars: usize,
        depth: usize,
    }
    fn walk(node: &Schema, level: usize, c: &mut Count, path: &str) -> Result<()> {
        let object = is_object(node);
        let level = if object { level + 1 } else { level };
        c.depth = c.depth.max(level);
        if let Some(Value::Object(props)) = node.get("properties") {
            c.properties += props.len();
            c.chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = node.get(key) {
                c.chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
            }
        }
        if let Some(Value::Array(e)) = node.get("enum") {
            let path = crate::model::join(path, "enum");
            if e.len() > MAX_ENUM {
                return Err(limit(&path, format!("an enum of {} values: OpenAI strict mode takes at most {MAX_ENUM}", e.len())));
            }
            let chars: usize = e.iter().filter_map(Value::as_str).map(|s| s.chars().count()).sum();
            if e.len() > 250 && chars > MAX_BIG_ENUM_CHARS {
                return Err(limit(
                    &path,
                    format!("an enum of {} strings totalling {chars} characters: OpenAI strict mode takes at most {MAX_BIG_ENUM_CHARS} for more than 250 values", e.len()),
                ));
            }
            c.chars += chars;
        }
        if let Some(Value::String(s)) = node.get("const") {
            c.chars += s.chars().count();
        }
        for (key, value) in node {
            match (crate::schema::slot(key), value) {
                (crate::schema::Slot::Map, Value::Object(m)) => {
                    for (k, v) in m {
                        if let Value::Object(s) = v {
                            walk(s, level, c, &crate::model::join(&crate::model::join(path, key), k))?;
                        }
                    }
                }
                (crate::schema::Slot::Single, Value::Object(s)) => walk(s, level, c, &crate::model::join(path, key))?,
                (crate::schema::Slot::List, Value::Array(list)) => {
                    for (i, v) in list.iter().enumerate() {
                        if let Value::Object(s) = v {
                            walk(s, level, c, &crate::model::index(&crate::model::join(path, key), i))?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
    fn limit(path: &str, msg: String) -> Error {
        Error::at(ErrorKind::Write, path, msg)
    }
    let mut c = Count::default();
    walk(root, 0, &mut c, "parameters")?;
    if c.depth > MAX_DEPTH {
        return Err(limit("parameters", format!("objects nested {} levels deep: OpenAI strict mode takes at most {MAX_DEPTH}", c.depth)));
    }
    if c.properties > MAX_PROPERTIES {
        return Err(limit("parameters", format!("{} properties: OpenAI strict mode takes at most {MAX_PROPERTIES}", c.properties)));
    }
    if c.chars > MAX_CHARS {
        return Err(limit(
            "parameters",
            format!("{} characters of property names, definition names and enum values: OpenAI strict mode takes at most {MAX_CHARS}", c.chars),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn strict(v: Value) -> (Value, Vec<Problem>) {
        let mut s = v.as_object().unwrap().clone();
        let mut w = Vec::new();
        make_strict(&mut s, &mut w);
        (Value::Object(s), w)
    }

    #[test]
    fn default_moves_into_the_description_with_a_warning() {
        let (out, w) = strict(json!({"type": "object", "properties": {
            "n": {"type": "integer", "description": "How many", "default": 3}}}));
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"n": {"type": ["integer", "null"], "description": "How many (default: 3)"}},
                   "required": ["n"], "additionalProperties": false})
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].path, "parameters.properties.n.default");
        assert!(w[0].message.contains("not permitted"), "{:?}", w);
    }

    #[test]
    fn nested_objects_are_closed_and_refs_made_nullable() {
        let (out, _) = strict(json!({"type": "object", "properties": {
            "o": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "additionalProperties": true},
            "one": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
            "required": ["o", "one"], "$defs": {"A": {"type": "string"}}}));
        assert_eq!(out["properties"]["o"]["additionalProperties"], json!(false));
        assert_eq!(out["properties"]["o"]["required"], json!(["a"]));
        assert_eq!(out["properties"]["o"]["properties"]["a"], json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}));
        assert_eq!(out["properties"]["o"]["description"], json!("(additionalProperties: true)"));
        assert_eq!(out["properties"]["one"], json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}));
    }

    #[test]
    fn limits_are_errors_naming_the_limit() {
        let values: Vec<Value> = (0..1001).map(|i| Value::from(format!("v{i}"))).collect();
        let root = json!({"type": "object", "properties": {"e": {"type": "string", "enum": values}}});
        let err = check_limits(root.as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("at most 1000"), "{err}");
        assert_eq!(err.path.as_deref(), Some("parameters.properties.e.enum"));
        let mut deep = json!({"type": "string"});
        for _ in 0..11 {
            deep = json!({"type": "object", "properties": {"d": deep}});
        }
        let err = check_limits(deep.as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("11 levels"), "{err}");
        let ok = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(check_limits(ok.as_object().unwrap()).is_ok());
    }
}
