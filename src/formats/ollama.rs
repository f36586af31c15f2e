//! Ollama tools (`ollama`): the OpenAI Chat Completions shape, as
//! Ollama's `/api/chat` takes it (its API docs, "tools").  Names follow
//! OpenAI's rule, since the same tools are often sent to both.

use super::{Handling, Profile, ToolKeys, OPENAI_NAMES};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::Value;

pub const PROFILE: Profile = Profile {
    name: "ollama",
    about: "Ollama tools: the OpenAI Chat Completions shape",
    names: OPENAI_NAMES,
    gptel_backend: true,
    tool_keys: ToolKeys::Only(&["strict"]),
    subset: "any JSON Schema",
    outside: &[("every keyword", Handling::Kept)],
    limits: "those of the model",
    strict: "none",
    document_key: None,
    write,
};

/// The tool as OpenAI's Chat Completions write it (the same tool keys).
pub fn write(tool: Tool, warnings: &mut Vec<Problem>) -> Result<Value> {
    super::openai::write_chat(tool, warnings)
}
