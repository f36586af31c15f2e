//! Writers: tools -> the JSON each provider accepts.

use crate::error::{Error, ErrorKind, Result};
use crate::formats::{self, Profile};
use crate::model::{index, join, Problem, Schema, Tool};
use crate::schema::finalize;
use crate::value::{Map, Value};

/// A JSON dialect toolspec writes: a name in [`formats::REGISTRY`].
///
/// The associated constants name the dialects toolspec has always
/// written; any other registered dialect is had from [`Dialect::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dialect(&'static str);

#[allow(non_upper_case_globals)]
impl Dialect {
    pub const OpenAi: Dialect = Dialect("openai");
    pub const OpenAiResponses: Dialect = Dialect("openai-responses");
    pub const OpenAiStrict: Dialect = Dialect("openai-strict");
    pub const Anthropic: Dialect = Dialect("anthropic");
    pub const Gemini: Dialect = Dialect("gemini");
    pub const Ollama: Dialect = Dialect("ollama");
    pub const Bedrock: Dialect = Dialect("bedrock");
    pub const Mcp: Dialect = Dialect("mcp");
    pub const JsonSchema: Dialect = Dialect("json-schema");
}

const N: usize = formats::REGISTRY.len();

/// Every dialect by its name, in registry order.
pub const DIALECT_NAMES: &[(&str, Dialect)] = &{
    let mut out = [("", Dialect("")); N];
    let mut i = 0;
    while i < N {
        out[i] = (formats::REGISTRY[i].name, Dialect(formats::REGISTRY[i].name));
        i += 1;
    }
    out
};

impl Dialect {
    pub fn parse(name: &str) -> Result<Dialect> {
        formats::lookup(name).map(|p| Dialect(p.name))
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    /// The dialect's profile: its rules and writer.
    pub fn profile(self) -> &'static Profile {
        formats::find(self.0).expect("a Dialect is made from a registered name")
    }
}

/// The root parameters schema of `tool` as `dialect` wants it (as
/// [`write_tool`] writes it).
pub fn parameters(tool: &Tool, dialect: Dialect) -> Schema {
    let mut root = tool.parameters();
    match dialect {
        Dialect::Gemini => {
            finalize(&mut root, false);
            // Past the inlining budget the references stay, and go.
            let _ = formats::gemini::inline_refs(&mut root, &mut Vec::new());
            formats::gemini::sanitize(&mut root);
        }
        Dialect::OpenAiStrict => {
            finalize(&mut root, true);
            // Past the inlining budget the references stay.
            let _ = formats::openai::inline_sibling_refs(&mut root, &mut Vec::new());
            formats::openai::make_strict(&mut root, &mut Vec::new());
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
/// what is written, not copied.  A name `dialect` refuses is made valid
/// (see [`write_owned_warn`] for the warnings).
pub fn write_owned(tool: Tool, dialect: Dialect) -> Result<Value> {
    write_owned_warn(tool, dialect, &mut Vec::new())
}

/// [`write_owned`], with warnings of what had to change (a name made
/// valid, keywords moved into a description) added to `warnings`, their
/// paths relative to the tool.
pub fn write_owned_warn(mut tool: Tool, dialect: Dialect, warnings: &mut Vec<Problem>) -> Result<Value> {
    if tool.name.is_empty() {
        return Err(Error::new(ErrorKind::Write, "the tool has no name"));
    }
    let profile = dialect.profile();
    if !profile.names.valid(&tool.name) {
        let fixed = profile.names.fix(&tool.name);
        warnings.push(formats::rename_warning("name", &tool.name, &fixed, profile.name, &profile.names));
        tool.name = fixed;
    }
    (profile.write)(tool, warnings)
}

/// [`write_owned`] of a tool whose name `dialect` takes (checked by the
/// caller): nothing to rename, nothing to warn of.
pub fn write_named(tool: Tool, dialect: Dialect) -> Result<Value> {
    (dialect.profile().write)(tool, &mut Vec::new())
}

/// Give the tools of one document names valid in `dialect`, different
/// from each other's (see [`formats::safe_names`]); a warning, at
/// `[i].name`, for each one renamed.
pub fn rename_for(tools: &mut [Tool], dialect: Dialect, warnings: &mut Vec<Problem>) {
    let profile = dialect.profile();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let fixed = formats::safe_names(&names, &profile.names);
    for (i, (tool, new)) in tools.iter_mut().zip(fixed).enumerate() {
        if let Some(new) = new {
            if tool.name.is_empty() {
                continue;
            }
            warnings.push(formats::rename_warning(
                &join(&index("", i), "name"),
                &tool.name,
                &new,
                profile.name,
                &profile.names,
            ));
            tool.name = new;
        }
    }
}

/// Several tools as one document (see [`write_tools`]), with the
/// warnings of what had to change, each at its tool (`[i]...`).
pub fn write_tools_warn(tools: &[Tool], dialect: Dialect) -> Result<(Value, Vec<Problem>)> {
    let mut tools = tools.to_vec();
    let mut warnings = Vec::new();
    rename_for(&mut tools, dialect, &mut warnings);
    let mut list = Vec::with_capacity(tools.len());
    for (i, t) in tools.into_iter().enumerate() {
        let mut w = Vec::new();
        list.push(write_owned_warn(t, dialect, &mut w)?);
        warnings.extend(w.into_iter().map(|p| Problem { path: crate::path::Path::root().index(i).then(&p.path), ..p }));
    }
    Ok((document(list, dialect), warnings))
}

/// Several tools as one document, in the shape each client loads:
/// an array for OpenAI, Ollama and Anthropic, `{"tools": [...]}` for MCP
/// (a `tools/list` result) and Bedrock (a `toolConfig`), and
/// `{"functionDeclarations": [...]}` for Gemini.
/// Names `dialect` refuses are made valid, and different from the other
/// tools' (see [`write_tools_warn`] for the warnings).
pub fn write_tools(tools: &[Tool], dialect: Dialect) -> Result<Value> {
    write_tools_warn(tools, dialect).map(|(v, _)| v)
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
    dialect.profile().document_key
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

/// JSON text, compact ([`Value::to_compact_string`], what
/// `serde_json::to_string` writes) or indented.
pub fn to_text(v: &Value, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(v).expect("a JSON value always serialises")
    } else {
        v.to_compact_string()
    }
}

/// OpenAI strict mode: every object closed with `additionalProperties:
/// false`, every property required, the formerly optional ones nullable
/// (see [`formats::openai::make_strict`]).
pub fn make_strict(root: &mut Schema) {
    formats::openai::make_strict(root, &mut Vec::new());
}
