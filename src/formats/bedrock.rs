//! Amazon Bedrock Converse tools (`bedrock`): `{"tools": [{"toolSpec":
//! {"name", "description", "inputSchema": {"json": SCHEMA}}}]}`, the
//! `toolConfig` of a Converse request.
//!
//! Source: botocore's service model `bedrock-runtime` (`Converse`
//! request, shapes `ToolConfiguration`, `Tool`, `ToolSpecification`:
//! name, description, inputSchema; `ToolName`: 1 to 64 characters of
//! `[a-zA-Z0-9_-]`; `ToolInputSchema.json` is a document, any JSON).

use super::{Handling, Parts, Profile, ToolKeys, OPENAI_NAMES};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::{Map, Value};

pub const PROFILE: Profile = Profile {
    name: "bedrock",
    about: "Bedrock Converse toolConfig: {\"tools\":[{\"toolSpec\":{...,\"inputSchema\":{\"json\":...}}}]}",
    names: OPENAI_NAMES,
    gptel_backend: true,
    tool_keys: ToolKeys::Only(&[]),
    subset: "any JSON Schema (a document the model provider receives as it is)",
    outside: &[("every keyword", Handling::Kept)],
    limits: "those of the model behind it",
    strict: "none",
    document_key: Some("tools"),
    write,
};

pub fn write(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut input = Map::new();
    input.insert("json".into(), Value::Object(std::mem::take(&mut p.params)));
    let spec = p.object("inputSchema", Some(Value::Object(input)), PROFILE.tool_keys);
    let mut body = Map::new();
    body.insert("toolSpec".into(), Value::Object(spec));
    Ok(Value::Object(body))
}
