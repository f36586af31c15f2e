//! A plain JSON Schema per tool (`json-schema`): the parameters schema
//! with the tool's name as `title` and its description.  No name rule:
//! `title` is any string.

use super::{any_char, Handling, NameRule, Parts, Profile, ToolKeys};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::{Map, Value};

pub const PROFILE: Profile = Profile {
    name: "json-schema",
    about: "one JSON Schema per tool, the tool's name as its title",
    names: NameRule { pattern: ".+", max: usize::MAX, first: any_char, rest: any_char },
    gptel_backend: false,
    tool_keys: ToolKeys::Only(&[]),
    subset: "any JSON Schema",
    outside: &[("every keyword", Handling::Kept)],
    limits: "none",
    strict: "none",
    document_key: None,
    write,
};

pub fn write(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut body = Map::new();
    if let Some(s) = p.params.get("$schema") {
        body.insert("$schema".into(), s.clone());
    }
    body.insert("title".into(), p.name.clone());
    p.put_description(&mut body);
    for (k, v) in std::mem::take(&mut p.params) {
        body.entry(k).or_insert(v);
    }
    p.put_in_schema_order(&mut body);
    Ok(Value::Object(body))
}
