//! Writers: tools -> the JSON each provider accepts.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Field, Schema, Tool};
use crate::schema::{finalize, walk_mut};
use crate::value::{Map, Value};

/// A JSON dialect toolspec writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    OpenAiResponses,
    OpenAiStrict,
    Anthropic,
    Gemini,
    Ollama,
    Bedrock,
    Mcp,
    JsonSchema,
}

pub const DIALECT_NAMES: &[(&str, Dialect)] = &[
    ("openai", Dialect::OpenAi),
    ("openai-responses", Dialect::OpenAiResponses),
    ("openai-strict", Dialect::OpenAiStrict),
    ("anthropic", Dialect::Anthropic),
    ("gemini", Dialect::Gemini),
    ("ollama", Dialect::Ollama),
    ("bedrock", Dialect::Bedrock),
    ("mcp", Dialect::Mcp),
    ("json-schema", Dialect::JsonSchema),
];

impl Dialect {
    pub fn parse(name: &str) -> Result<Dialect> {
        DIALECT_NAMES.iter().find(|(n, _)| *n == name).map(|(_, d)| *d).ok_or_else(|| {
            let names: Vec<&str> = DIALECT_NAMES.iter().map(|(n, _)| *n).collect();
            Error::new(
                ErrorKind::UnsupportedFormat,
                format!("unknown dialect \"{name}\": expected one of {}", names.join(", ")),
            )
        })
    }

    pub fn name(self) -> &'static str {
        DIALECT_NAMES.iter().find(|(_, d)| *d == self).map(|(n, _)| *n).unwrap_or("openai")
    }

    /// Tool-level fields (from [`Tool::extra`]) this dialect carries.
    fn extras(self) -> &'static [&'static str] {
        match self {
            Dialect::OpenAi | Dialect::Ollama | Dialect::OpenAiResponses => &["strict"],
            Dialect::Anthropic => &["cache_control"],
            Dialect::Mcp => &["title", "annotations", "outputSchema", "_meta", "icons"],
            _ => &[],
        }
    }
}

/// The root parameters schema of `tool` as `dialect` wants it.
pub fn parameters(tool: &Tool, dialect: Dialect) -> Schema {
    for_dialect(tool.parameters(), dialect)
}

/// A root parameters schema made what `dialect` wants.
fn for_dialect(mut root: Schema, dialect: Dialect) -> Schema {
    match dialect {
        Dialect::Gemini => {
            finalize(&mut root, false);
            crate::gemini::sanitize(&mut root);
        }
        Dialect::OpenAiStrict => {
            finalize(&mut root, true);
            make_strict(&mut root);
        }
        _ => finalize(&mut root, true),
    }
    root
}

/// One tool in `dialect`.
pub fn write_tool(tool: &Tool, dialect: Dialect) -> Result<Value> {
    write_owned(tool.clone(), dialect)
}

/// [`write_tool`] of a tool no longer needed: its schemas are moved into
/// what is written, not copied.
pub fn write_owned(tool: Tool, dialect: Dialect) -> Result<Value> {
    if tool.name.is_empty() {
        return Err(Error::new(ErrorKind::Write, "the tool has no name"));
    }
    let Tool { name, description, args, schema_extra, extra } = tool;
    let mut body = Map::new();
    let no_args = args.is_empty();
    let name = Value::from(name);
    let desc = description.map(Value::from);
    let params = Value::Object(for_dialect(crate::model::parameters_of(args, schema_extra), dialect));
    let put_desc = |m: &mut Map<String, Value>| {
        if let Some(d) = &desc {
            m.insert("description".into(), d.clone());
        }
    };
    let put_extras = |m: &mut Map<String, Value>| {
        for key in dialect.extras() {
            if let Some(v) = extra.get(key) {
                m.insert((*key).into(), v.clone());
            }
        }
    };
    Ok(match dialect {
        Dialect::OpenAi | Dialect::Ollama | Dialect::OpenAiStrict => {
            let mut f = Map::new();
            f.insert("name".into(), name);
            put_desc(&mut f);
            f.insert("parameters".into(), params);
            if dialect == Dialect::OpenAiStrict {
                f.insert("strict".into(), Value::Bool(true));
            } else {
                put_extras(&mut f);
            }
            body.insert("type".into(), Value::from("function"));
            body.insert("function".into(), Value::Object(f));
            Value::Object(body)
        }
        Dialect::OpenAiResponses => {
            body.insert("type".into(), Value::from("function"));
            body.insert("name".into(), name);
            put_desc(&mut body);
            body.insert("parameters".into(), params);
            put_extras(&mut body);
            // The Responses API treats a missing `strict` as true, which
            // rejects ordinary schemas: say so explicitly.
            body.entry("strict").or_insert(Value::Bool(false));
            Value::Object(body)
        }
        Dialect::Anthropic => {
            body.insert("name".into(), name);
            put_desc(&mut body);
            body.insert("input_schema".into(), params);
            put_extras(&mut body);
            Value::Object(body)
        }
        Dialect::Mcp => {
            body.insert("name".into(), name);
            if let Some(t) = extra.field("title") {
                body.insert("title".into(), t.clone());
            }
            put_desc(&mut body);
            body.insert("inputSchema".into(), params);
            put_extras(&mut body);
            Value::Object(body)
        }
        Dialect::Gemini => {
            body.insert("name".into(), name);
            put_desc(&mut body);
            // Gemini wants no `parameters` at all for a tool without
            // arguments (an empty OBJECT is rejected).
            if !no_args {
                body.insert("parameters".into(), params);
            }
            Value::Object(body)
        }
        Dialect::Bedrock => {
            let mut spec = Map::new();
            spec.insert("name".into(), name);
            put_desc(&mut spec);
            let mut input = Map::new();
            input.insert("json".into(), params);
            spec.insert("inputSchema".into(), Value::Object(input));
            body.insert("toolSpec".into(), Value::Object(spec));
            Value::Object(body)
        }
        Dialect::JsonSchema => {
            let Value::Object(p) = params else { unreachable!() };
            if let Some(s) = p.field("$schema") {
                body.insert("$schema".into(), s.clone());
            }
            body.insert("title".into(), name);
            put_desc(&mut body);
            for (k, v) in p {
                body.entry(k).or_insert(v);
            }
            Value::Object(body)
        }
    })
}

/// Several tools as one document, in the shape each client loads:
/// an array for OpenAI, Ollama and Anthropic, `{"tools": [...]}` for MCP
/// (a `tools/list` result) and Bedrock (a `toolConfig`), and
/// `{"functionDeclarations": [...]}` for Gemini.
pub fn write_tools(tools: &[Tool], dialect: Dialect) -> Result<Value> {
    let list = tools.iter().map(|t| write_tool(t, dialect)).collect::<Result<Vec<_>>>()?;
    Ok(document(list, dialect))
}

/// The document of tools already written in `dialect` (see [`write_tools`]).
pub fn document(list: Vec<Value>, dialect: Dialect) -> Value {
    match document_key(dialect) {
        Some(key) => {
            let mut m = Map::new();
            m.insert(key.into(), Value::Array(list));
            Value::Object(m)
        }
        None => Value::Array(list),
    }
}

/// The key a dialect's document of many tools keeps them under, if any.
fn document_key(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::Mcp | Dialect::Bedrock => Some("tools"),
        Dialect::Gemini => Some("functionDeclarations"),
        _ => None,
    }
}

/// What comes before and after the tools, each tool's compact text
/// separated from the next by a comma, in the compact document of many
/// tools: `[` and `]`, or `{"tools":[` and `]}`.
pub fn document_frame(dialect: Dialect) -> (String, &'static str) {
    match document_key(dialect) {
        Some(key) => (format!("{{\"{key}\":["), "]}"),
        None => ("[".to_string(), "]"),
    }
}

/// The document of many tools, as compact text, from each tool's compact
/// text: what `to_text(&write_tools(..), false)` gives, without building
/// the whole document as one value.
pub fn document_text(tools: &[String], dialect: Dialect) -> String {
    let (open, close) = document_frame(dialect);
    let mut out = String::with_capacity(tools.iter().map(|t| t.len() + 1).sum::<usize>() + 32);
    out.push_str(&open);
    for (i, t) in tools.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(t);
    }
    out.push_str(close);
    out
}

/// JSON text, compact or indented.
pub fn to_text(v: &Value, pretty: bool) -> String {
    let r = if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
    r.expect("a JSON value always serialises")
}

/// OpenAI strict mode: every object closed with `additionalProperties:
/// false`, every property required, the formerly optional ones nullable.
pub fn make_strict(root: &mut Schema) {
    let _ = walk_mut(root, &crate::model::At::Root(""), &mut |node, _| {
        let is_object = node.field("type").is_some_and(|t| t == "object" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "object")))
            || node.has("properties");
        if !is_object {
            return Ok(());
        }
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
        Ok(())
    });
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
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = s.get_mut(key) {
                    if !alts.iter().any(|a| a.field("type").is_some_and(|t| t == "null")) {
                        let mut n = Map::new();
                        n.insert("type".into(), Value::from("null"));
                        alts.push(Value::Object(n));
                    }
                    return;
                }
            }
        }
    }
    if let Some(Value::Array(e)) = s.get_mut("enum") {
        if !e.iter().any(Value::is_null) {
            e.push(Value::Null);
        }
    }
}
