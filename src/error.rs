//! Error type of the core: one kind per way input can be wrong, each with
//! the position or path that locates the problem.

use std::fmt;

/// What went wrong, which decides the Lisp error symbol the module signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not JSON (or not UTF-8): carries line and column.
    Json,
    /// Valid JSON, but not the shape of the format being read.
    Shape,
    /// No reader for this document, or an unknown format or dialect name.
    UnsupportedFormat,
    /// A `$ref` that cannot be inlined: cyclic, dangling or external.
    Ref,
    /// Input beyond a configured bound: size, nesting depth, expansion.
    Limit,
    /// A plist from Lisp that cannot be read or converted.
    Plist,
    /// A tool cannot be written in the requested dialect.
    Write,
    /// A Jinja template that does not parse or fails while rendering.
    Template,
    /// A template beyond its bounds: fuel (work), output size, recursion.
    TemplateLimit,
    /// A tool result envelope that does not match its schema.
    Envelope,
}

impl ErrorKind {
    /// The Lisp error symbol signalled for this kind.
    pub fn symbol(self) -> &'static str {
        match self {
            ErrorKind::Json => "toolspec-json-error",
            ErrorKind::Shape => "toolspec-format-error",
            ErrorKind::UnsupportedFormat => "toolspec-unsupported-format",
            ErrorKind::Ref => "toolspec-ref-error",
            ErrorKind::Limit => "toolspec-limit-error",
            ErrorKind::Plist => "toolspec-plist-error",
            ErrorKind::Write => "toolspec-write-error",
            ErrorKind::Template => "toolspec-template-error",
            ErrorKind::TemplateLimit => "toolspec-template-limit-error",
            ErrorKind::Envelope => "toolspec-envelope-error",
        }
    }
}

/// An error with its kind, a message saying what would be right, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    /// Path in the input document, e.g. `tools[2].inputSchema.properties.x`.
    pub path: Option<String>,
    /// 1-based line and column in the input text, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), path: None, line: None, column: None }
    }

    pub fn at(kind: ErrorKind, path: &str, message: impl Into<String>) -> Self {
        let mut e = Error::new(kind, message);
        if !path.is_empty() {
            e.path = Some(path.to_string());
        }
        e
    }

    pub fn shape(path: &str, message: impl Into<String>) -> Self {
        Error::at(ErrorKind::Shape, path, message)
    }

    /// The error of item `i` of a list: its path is put under `[i]`.
    pub fn in_item(mut self, i: usize) -> Self {
        self.path = Some(match self.path.take() {
            Some(p) => format!("[{i}].{p}"),
            None => format!("[{i}]"),
        });
        self
    }

    pub fn with_position(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Error from serde_json, keeping its line and column.
    pub fn from_json(err: &serde_json::Error) -> Self {
        let msg = err.to_string();
        // serde_json appends " at line L column C"; keep only the reason.
        let reason = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        let reason = if reason.contains("recursion limit exceeded") {
            "nesting deeper than 128 levels (recursion limit exceeded)".to_string()
        } else {
            reason
        };
        // serde_json counts a column of 0 for an error before the first
        // character of a line (empty input): places here start at 1.
        Error::new(ErrorKind::Json, reason).with_position(err.line().max(1), err.column().max(1))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, "line {l}, column {c}: ")?;
        }
        if let Some(p) = &self.path {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Byte offset -> 1-based (line, column) in `text`, column counted in characters.
pub fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// Check that `bytes` are UTF-8, with a positioned error if not.
pub fn check_utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_column(bytes, e.valid_up_to());
        Error::new(
            ErrorKind::Json,
            format!("invalid UTF-8 at byte {}: JSON text must be UTF-8 (re-save the file as UTF-8)", e.valid_up_to()),
        )
        .with_position(line, column)
    })
}
