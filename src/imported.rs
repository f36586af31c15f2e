//! What a read is asked for and what it makes: the [`Format`] of the
//! input, the [`ReadOptions`], and the [`Imported`] tools with their
//! warnings and paths.  The readers of every format share these, below
//! [`crate::read`], which dispatches to them.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Problem, Tool};

/// A tool definition format that can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Auto,
    OpenAi,
    OpenAiFunctions,
    OpenAiResponses,
    Anthropic,
    Mcp,
    Gemini,
    Bedrock,
    /// An OpenAPI (or Swagger) document: one tool per operation.
    OpenApi,
    JsonSchema,
    /// Gloodata extension info (`ns` + `tools` object).
    Gloodata,
    /// Arcade tool definitions (`name` + `input.parameters`).
    Arcade,
    /// SkyDeck prompt tools (`model_prompt`).
    SkyDeck,
}

pub const FORMAT_NAMES: &[(&str, Format)] = &[
    ("auto", Format::Auto),
    ("openai", Format::OpenAi),
    ("ollama", Format::OpenAi),
    ("openai-functions", Format::OpenAiFunctions),
    ("openai-responses", Format::OpenAiResponses),
    ("anthropic", Format::Anthropic),
    ("mcp", Format::Mcp),
    ("gemini", Format::Gemini),
    ("bedrock", Format::Bedrock),
    ("openapi", Format::OpenApi),
    ("json-schema", Format::JsonSchema),
    ("gloodata", Format::Gloodata),
    ("arcade", Format::Arcade),
    ("skydeck", Format::SkyDeck),
];

impl Format {
    pub fn parse(name: &str) -> Result<Format> {
        FORMAT_NAMES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f).ok_or_else(|| {
            let names: Vec<&str> = FORMAT_NAMES.iter().map(|(n, _)| *n).collect();
            Error::new(
                ErrorKind::UnsupportedFormat,
                format!("unknown format \"{name}\": expected one of {}", names.join(", ")),
            )
        })
    }

    pub fn name(self) -> &'static str {
        FORMAT_NAMES.iter().find(|(_, f)| *f == self).map(|(n, _)| *n).unwrap_or("auto")
    }
}

/// What a read produced: the tools, and warnings about what was changed
/// to make them fit (each with its path in the input).  A tool definition
/// that cannot be read is left out, and said among the warnings as an
/// error at its path (unless [`ReadOptions::strict`]).
#[derive(Debug, Default)]
pub struct Imported {
    pub tools: Vec<Tool>,
    pub warnings: Vec<Problem>,
    /// For each tool, its path in the input document.
    pub paths: Vec<String>,
    /// The error of the first tool definition left out: the import's
    /// error if no tool could be read.
    pub(crate) skipped: Option<Error>,
}

/// Options for reading.
#[derive(Debug, Clone)]
pub struct ReadOptions<'a> {
    pub format: Format,
    /// Name for a bare JSON Schema without `title` (e.g. the file's name).
    pub default_name: Option<&'a str>,
    /// Largest input accepted, in bytes.
    pub max_size: usize,
    /// Refuse the whole input when one tool definition in it cannot be
    /// read, rather than leaving that one out with an error among the
    /// warnings.
    pub strict: bool,
}

impl Default for ReadOptions<'_> {
    fn default() -> Self {
        ReadOptions { format: Format::Auto, default_name: None, max_size: 64 << 20, strict: false }
    }
}
