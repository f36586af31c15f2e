//! Parsing an OpenAPI document in JSON for an import, making `Value`s of
//! only what the import can reach.
//!
//! Most of a large description is what tools never read: response schemas
//! and examples, webhooks.  GitHub's is 13 MB, of which an import reads the
//! paths and a few hundred components.  So the text is parsed once, with
//! `paths` and the document's other small keys made into `Value`s, while
//! each entry of the component maps (`components.schemas`...), of Swagger
//! 2's `definitions`, `parameters` and `responses`, and of the webhooks is
//! only checked and kept as its text.  Then the `$ref`s of what was made
//! are followed: each entry they reach is parsed in turn, and its own
//! `$ref`s followed.  An entry that no `$ref` reaches is null in the result.
//!
//! A response is followed only as far as the import reads it: its `$ref`,
//! not its content, unless the document has an `x-lookup` (lookups read
//! response schemas).  The examples of parameters and media types are not
//! followed either.
//!
//! For an import the result is the whole document: `test/openapi.rs`
//! imports every description of the test data both ways and compares.
//! Differences are in what the import never reads: an entry no `$ref`
//! reaches is checked as JSON but not decoded, so a lone surrogate escape
//! (`"\ud800"`) in it is no error, and its nesting depth is counted from
//! the entry, not from the document's root.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{line_column, Error, Result};
use crate::model::FastMap;
use crate::schema::{pointer_tokens, value_at};

use super::METHODS;

/// Sections of `components` whose entries are parsed when reached.
const LAZY_SECTIONS: &[&str] =
    &["schemas", "responses", "parameters", "examples", "requestBodies", "headers", "links", "callbacks", "pathItems"];

/// Keys of the document's root whose entries are parsed when reached.
const LAZY_ROOT: &[&str] = &["definitions", "parameters", "responses", "webhooks", "x-webhooks"];

/// A part of the document while it is being parsed.
enum Part<'t> {
    Value(Value),
    /// An entry not parsed yet: its text.
    Raw(&'t RawValue),
    /// An object some of whose members are not parsed yet, and the place
    /// of each key among them.
    Object(Vec<(String, Part<'t>)>, FastMap<String, usize>),
}

/// How a part of the text is parsed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Value,
    Raw,
    Root,
    Components,
    /// A map whose entries are raw.
    Entries,
}

impl Shape {
    fn child(self, key: &str) -> Shape {
        match self {
            Shape::Root if key == "components" => Shape::Components,
            Shape::Root if LAZY_ROOT.contains(&key) => Shape::Entries,
            Shape::Components if LAZY_SECTIONS.contains(&key) => Shape::Entries,
            Shape::Entries => Shape::Raw,
            _ => Shape::Value,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Shape {
    type Value = Part<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Part<'de>, D::Error> {
        match self {
            Shape::Value => Value::deserialize(d).map(Part::Value),
            Shape::Raw => <&'de RawValue>::deserialize(d).map(Part::Raw),
            _ => d.deserialize_any(self),
        }
    }
}

/// An object of a lazy shape; anything else is made a `Value` as the
/// parser would.
impl<'de> Visitor<'de> for Shape {
    type Value = Part<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Part<'de>, A::Error> {
        let mut members: Vec<(String, Part<'de>)> = Vec::new();
        // Where each key is: component maps have hundreds of entries.
        let mut places: FastMap<String, usize> = FastMap::default();
        while let Some(key) = map.next_key::<String>()? {
            let part = map.next_value_seed(self.child(&key))?;
            // A repeated key keeps its first place and its last value, as
            // `serde_json::Map` does.
            match places.get(&key) {
                Some(&i) => members[i].1 = part,
                None => {
                    places.insert(key.clone(), members.len());
                    members.push((key, part));
                }
            }
        }
        Ok(Part::Object(members, places))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Part<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Part::Value(Value::Array(items)))
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::String(v)))
    }

    fn visit_unit<E>(self) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::Null))
    }
}

/// What a parsed part is to the import, which decides the `$ref`s followed.
#[derive(Clone, Copy)]
enum Role {
    /// Everything: every string that is a local reference.
    Any,
    Paths,
    PathItem,
    Operation,
    Parameters,
    Parameter,
    Body,
    /// A map of media types.
    Content,
    Response,
}

/// The role of an entry of the lazy map `section`.
fn entry_role(section: &str) -> Role {
    match section {
        "responses" => Role::Response,
        "parameters" | "headers" => Role::Parameter,
        "requestBodies" => Role::Body,
        "pathItems" => Role::PathItem,
        _ => Role::Any,
    }
}

/// Collects the local references a part holds, for its role.
struct Refs {
    /// Whether response content is read (the document has `x-lookup`).
    lookup: bool,
    found: Vec<String>,
}

impl Refs {
    fn walk(&mut self, v: &Value, role: Role) {
        match (role, v) {
            (Role::Any, Value::String(s)) if s.starts_with("#/") => self.found.push(s.clone()),
            (Role::Any, Value::Array(a)) => a.iter().for_each(|x| self.walk(x, Role::Any)),
            (Role::Any, Value::Object(o)) => o.values().for_each(|x| self.walk(x, Role::Any)),
            (Role::Response, v) if self.lookup => self.walk(v, Role::Any),
            (Role::Response, Value::Object(o)) => {
                if let Some(x) = o.get("$ref") {
                    self.walk(x, Role::Any);
                }
            }
            (Role::Parameters, Value::Array(a)) => a.iter().for_each(|x| self.walk(x, Role::Parameter)),
            (Role::Content, Value::Object(o)) => {
                for media in o.values() {
                    self.members(media, |k| if k == "examples" || k == "example" { None } else { Some(Role::Any) });
                }
            }
            (Role::Paths, _) => self.members(v, |k| Some(if k.starts_with("x-") { Role::Any } else { Role::PathItem })),
            (Role::PathItem, _) => self.members(v, |k| {
                Some(match k {
                    "parameters" => Role::Parameters,
                    k if METHODS.contains(&k) => Role::Operation,
                    _ => Role::Any,
                })
            }),
            (Role::Operation, _) => self.members(v, |k| {
                Some(match k {
                    "parameters" => Role::Parameters,
                    "requestBody" => Role::Body,
                    "responses" => return None,
                    _ => Role::Any,
                })
            }),
            (Role::Parameter, _) => self.members(v, |k| match k {
                "examples" | "example" => None,
                "content" => Some(Role::Content),
                _ => Some(Role::Any),
            }),
            (Role::Body, _) => self.members(v, |k| Some(if k == "content" { Role::Content } else { Role::Any })),
            (Role::Any, _) => {}
            // A part that is not the object or array its role expects.
            _ => self.walk(v, Role::Any),
        }
        if let (Role::Operation, Value::Object(o)) = (role, v) {
            if let Some(Value::Object(rs)) = o.get("responses") {
                rs.values().for_each(|r| self.walk(r, Role::Response));
            }
        }
    }

    /// The members of object `v`, each in the role `role_of` its key gives
    /// (none: skipped); anything else than an object in [`Role::Any`].
    fn members(&mut self, v: &Value, role_of: impl Fn(&str) -> Option<Role>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if let Some(role) = role_of(k) {
                        self.walk(x, role);
                    }
                }
            }
            _ => self.walk(v, Role::Any),
        }
    }
}

/// Parse the JSON text of an OpenAPI document into a `Value` holding what
/// an import can reach (see the module's documentation).  `lookup`: the
/// document has `x-lookup`.  Errors are the parser's, at their place in
/// `text`.
pub fn parse(text: &str, lookup: bool) -> Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = match Shape::Root.deserialize(&mut de).and_then(|p| de.end().map(|()| p)) {
        Ok(root) => root,
        // The error exactly as parsing it whole reports it.
        Err(_) => return serde_json::from_str(text).map_err(|e| Error::from_json(&e)),
    };
    let mut root = root;
    let mut refs = Refs { lookup, found: Vec::new() };
    if let Part::Object(members, _) = &root {
        for (key, part) in members {
            match part {
                Part::Value(v) => refs.walk(v, if key == "paths" { Role::Paths } else { Role::Any }),
                Part::Object(sections, _) => {
                    for (_, s) in sections {
                        if let Part::Value(v) = s {
                            refs.walk(v, Role::Any);
                        }
                    }
                }
                Part::Raw(_) => {}
            }
        }
    }
    let mut seen = HashSet::new();
    while let Some(r) = refs.found.pop() {
        if seen.insert(r.clone()) {
            follow(&mut root, &r, text, &mut refs)?;
        }
    }
    Ok(assemble(root))
}

/// Make `Value`s of what reference `r` reaches, and collect their own
/// references.
fn follow(root: &mut Part, r: &str, text: &str, refs: &mut Refs) -> Result<()> {
    let Some(tokens) = r.strip_prefix('#').and_then(pointer_tokens) else { return Ok(()) };
    // Through the lazy objects first: the members' places.
    let mut path = Vec::new();
    let mut at = &*root;
    for token in &tokens {
        let Part::Object(members, places) = at else { break };
        let Some(&i) = places.get(token) else { return Ok(()) };
        path.push(i);
        at = &members[i].1;
    }
    let mut part = root;
    for &i in &path {
        let Part::Object(members, _) = part else { return Ok(()) };
        part = &mut members[i].1;
    }
    let n = path.len();
    let key = if n >= 1 { tokens[n - 1].as_str() } else { "" };
    let parent = if n >= 2 { tokens[n - 2].as_str() } else { "" };
    let made = matches!(part, Part::Raw(_));
    make(part, key, parent, text, refs)?;
    // A reference into a part: what it points to is read as a whole.
    if let (Part::Value(v), true) = (&*part, n < tokens.len() || !made) {
        if let Some(target) = value_at(v, &tokens[n..]) {
            refs.walk(target, Role::Any);
        }
    }
    Ok(())
}

/// Parse every raw entry in `part` (the member `key` of the object
/// `parent`), collecting the references of each in its role.
fn make(part: &mut Part, key: &str, parent: &str, text: &str, refs: &mut Refs) -> Result<()> {
    match part {
        Part::Raw(raw) => {
            let v = parse_raw(raw, text)?;
            refs.walk(&v, entry_role(parent));
            *part = Part::Value(v);
        }
        // Walked when it was made.
        Part::Value(_) => {}
        Part::Object(members, _) => {
            for (k, p) in members.iter_mut() {
                make(p, k, key, text, refs)?;
            }
        }
    }
    Ok(())
}

/// The `Value` of an entry's text; an error at its place in `text`.
fn parse_raw(raw: &RawValue, text: &str) -> Result<Value> {
    let s = raw.get();
    serde_json::from_str(s).map_err(|e| {
        let err = Error::from_json(&e);
        let offset = (s.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        let (line, column) = line_column(text.as_bytes(), offset);
        let (l, c) = (err.line.unwrap_or(1), err.column.unwrap_or(1));
        if l == 1 {
            err.with_position(line, column + c - 1)
        } else {
            err.with_position(line + l - 1, c)
        }
    })
}

/// The document as a `Value`: entries never reached are null.
fn assemble(part: Part) -> Value {
    match part {
        Part::Value(v) => v,
        Part::Raw(_) => Value::Null,
        Part::Object(members, _) => {
            let mut m = Map::with_capacity(members.len());
            for (k, p) in members {
                m.insert(k, assemble(p));
            }
            Value::Object(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> String {
        json!({
            "openapi": "3.0.0",
            "paths": {"/a": {"get": {
                "parameters": [{"$ref": "#/components/parameters/P"}],
                "responses": {"200": {"$ref": "#/components/responses/R"}}
            }}},
            "components": {
                "parameters": {"P": {"name": "p", "in": "query", "schema": {"$ref": "#/components/schemas/S"},
                                     "examples": {"e": {"$ref": "#/components/examples/E"}}}},
                "responses": {"R": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Out"}}}}},
                "schemas": {"S": {"type": "string"}, "Out": {"type": "object"}, "Unused": {"type": "integer"}},
                "examples": {"E": {"value": 1}},
                "securitySchemes": {"k": {"type": "apiKey"}}
            },
            "x-webhooks": {"w": {"post": {}}}
        })
        .to_string()
    }

    #[test]
    fn only_what_the_import_reaches_is_made() {
        let v = parse(&doc(), false).unwrap();
        let c = &v["components"];
        assert_eq!(c["parameters"]["P"]["name"], "p");
        assert_eq!(c["schemas"]["S"], json!({"type": "string"}));
        assert_eq!(c["responses"]["R"]["description"], "ok");
        assert_eq!(c["schemas"]["Out"], Value::Null, "response content is not followed");
        assert_eq!(c["schemas"]["Unused"], Value::Null);
        assert_eq!(c["examples"]["E"], Value::Null, "parameter examples are not followed");
        assert_eq!(c["securitySchemes"]["k"]["type"], "apiKey");
        assert_eq!(v["x-webhooks"], json!({"w": null}), "the keys stay, in order");
        let keys: Vec<_> = c["schemas"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["S", "Out", "Unused"]);
    }

    #[test]
    fn lookups_read_response_content() {
        let v = parse(&doc(), true).unwrap();
        assert_eq!(v["components"]["schemas"]["Out"], json!({"type": "object"}));
    }

    #[test]
    fn references_into_made_parts_and_whole_sections() {
        let text = json!({
            "paths": {"/a": {"post": {"requestBody": {"$ref": "#/components/requestBodies"}}}},
            "components": {"requestBodies": {"B": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}},
                           "schemas": {"A": {"$ref": "#/paths/~1a/post"}}}
        })
        .to_string();
        let v = parse(&text, false).unwrap();
        assert_eq!(v["components"]["schemas"]["A"], json!({"$ref": "#/paths/~1a/post"}));
        assert!(v["components"]["requestBodies"]["B"].is_object());
    }

    #[test]
    fn errors_are_placed_in_the_whole_text() {
        let text = "{\"paths\": {},\n \"components\": {\"schemas\": {\n  \"A\": {\"x\": \"\\ud800\"}},\n \"parameters\": {}},\n \"paths\": {\"/a\": {\"get\": {\"parameters\": [{\"$ref\": \"#/components/schemas/A\"}]}}}}";
        let e = parse(text, false).unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(21)), "{e}");
        assert_eq!(e, Error::from_json(&serde_json::from_str::<Value>(text).unwrap_err()));
        // Unreached, the same entry is no error.
        let text = text.replace("schemas/A", "schemas/B");
        assert!(parse(&text, false).is_ok());
        // Broken text is reported as the parser reports the whole.
        let e = parse("{\"paths\": {\"a\": [1,}}", false).unwrap_err();
        let whole = Error::from_json(&serde_json::from_str::<Value>("{\"paths\": {\"a\": [1,}}").unwrap_err());
        assert_eq!(e, whole);
    }

    #[test]
    fn repeated_keys_keep_the_first_place_and_last_value() {
        let text = r##"{"components": {"schemas": {"A": 1, "B": 2, "A": 3}}, "paths": {"/x": {"get": {"parameters": [{"$ref": "#/components/schemas/A"}]}}}}"##;
        let lazy = parse(text, false).unwrap();
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(lazy["components"]["schemas"]["A"], whole["components"]["schemas"]["A"]);
        let keys: Vec<_> = lazy["components"]["schemas"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["A", "B"]);
    }
}
