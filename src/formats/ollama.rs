//! Ollama tools (`ollama`): the OpenAI Chat Completions shape, as
//! Ollama's `/api/chat` takes it (its API docs, "tools").  Names follow
//! OpenAI's rule, since the same tools are often sent to both.

use super::{Handling, Parts, Profile, ToolKeys, OPENAI_NAMES};
use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::value::{Map, Value};

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

pub fn write(tool: Tool, _: &mut Vec<Problem>) -> Result<Value> {
    let mut p = Parts::of(tool, true);
    let mut f = Map::new();
    f.insert("name".into(), p.name.clone());
    p.put_description(&mut f);
    f.insert("parameters".into(), Value::Object(std::mem::take(&mut p.params)));
    p.put_extras(PROFILE.tool_keys, &mut f);
    p.put_in_order(&mut f, "parameters");
    let mut body = Map::new();
    body.insert("type".into(), Value::from("function"));
    body.insert("function".into(), Value::Object(f));
    Ok(Value::Object(body))
}
