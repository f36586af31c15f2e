//! MCP tools (`mcp`): a `tools/list` result, `{"tools": [{"name",
//! "title", "description", "inputSchema", "outputSchema", "annotations",
//! "execution", "icons", "_meta", ...}]}`.
//!
//! Source: the MCP schema, revision 2025-11-25 (`schema.ts`, `Tool`:
//! `name` 1 to 128 characters of `A-Z a-z 0-9 _ - .`; `inputSchema` an
//! object schema; the other fields optional).  The mcp SDKs' `Tool`
//! models allow extra fields, so every tool-level key read is written
//! back, unknown and future ones included, in the order read: MCP to MCP
//! keeps the tool's keys.  `name`, `title` and `description` come first
//! and `inputSchema` after them, as the SDKs write them.

use super::{Handling, NameRule, Parts, Profile, ToolKeys};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::{Map, Value};

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

pub const PROFILE: Profile = Profile {
    name: "mcp",
    about: "MCP tools/list result: {\"tools\":[{\"name\",\"description\",\"inputSchema\",...}]}, every tool key kept",
    names: NameRule { pattern: "^[A-Za-z0-9_.-]{1,128}$", max: 128, first: name_char, rest: name_char },
    gptel_backend: false,
    tool_keys: ToolKeys::Open,
    subset: "any JSON Schema whose root is an object (2020-12 by default)",
    outside: &[("every keyword", Handling::Kept)],
    limits: "none",
    strict: "none",
    document_key: Some("tools"),
    write,
};

pub fn write(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut body = Map::new();
    body.insert("name".into(), p.name.clone());
    if let Some(t) = p.extra.get("title") {
        body.insert("title".into(), t.clone());
    }
    p.put_description(&mut body);
    body.insert("inputSchema".into(), Value::Object(std::mem::take(&mut p.params)));
    p.put_extras(PROFILE.tool_keys, &mut body);
    p.put_in_order(&mut body, "inputSchema");
    Ok(Value::Object(body))
}
