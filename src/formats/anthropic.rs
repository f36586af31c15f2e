//! Anthropic Messages API tools (`anthropic`): `[{"name", "description",
//! "input_schema"}]`.
//!
//! Sources: Anthropic's tool-use reference (`input_schema` is a JSON
//! Schema object, draft 2020-12; names `^[a-zA-Z0-9_-]{1,64}$`); the
//! anthropic SDK's `lib/_parse/_transform.py` (its strict transform
//! forces `additionalProperties: false` and keeps `required` as given,
//! moving keywords it does not support into the description).

use super::{Handling, Parts, Profile, ToolKeys, OPENAI_NAMES};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::Value;

pub const PROFILE: Profile = Profile {
    name: "anthropic",
    about: "Anthropic tools: [{\"name\",\"description\",\"input_schema\"}]",
    names: OPENAI_NAMES,
    gptel_backend: true,
    // Custom tools: name, description, input_schema, cache_control.
    tool_keys: ToolKeys::Only(&["cache_control"]),
    subset: "any JSON Schema (draft 2020-12) whose root is an object",
    outside: &[("every keyword", Handling::Kept)],
    limits: "none beyond the request size",
    strict: "none written (the SDK's strict transform closes objects)",
    document_key: None,
    write,
};

pub fn write(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let params = Value::Object(std::mem::take(&mut p.params));
    Ok(Value::Object(p.object("input_schema", Some(params), PROFILE.tool_keys)))
}
