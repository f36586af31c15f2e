//! Checking whole texts: JSON tool specs and Emacs Lisp source, every
//! problem with its line and column.  The command line and the Emacs
//! module (Flymake in Lisp buffers) share this.

use crate::elisp_source::Source;
pub use crate::elisp_tools::Level;
use crate::elisp_tools::{analyze, FunctionSource, SourceTool};
use crate::error::{Error, ErrorKind, Result};
use crate::locate::{steps, Step as JsonStep};
use crate::model::{Field, Tool};
use crate::path::{Path, Step};
use crate::read::{self, Format, ReadOptions};
use crate::value::Value;

/// A problem at a line and column of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub level: Level,
    /// 1-based line, and column counted in characters from 1.
    pub line: usize,
    pub column: usize,
    /// Where in the tool plist (`args[1].type`), or in the JSON for what
    /// reading it changed; empty when there is nothing more precise.
    pub path: String,
    pub message: String,
    /// The tool the problem belongs to, when known.
    pub tool: Option<String>,
}

/// What checking one text found.
#[derive(Debug, Default)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    /// The text could not be read as a whole (not JSON, unreadable Lisp,
    /// no tool definitions in any known format): the diagnostics say why.
    pub unusable: bool,
}

impl Checked {
    pub fn count(&self, level: Level) -> usize {
        self.diagnostics.iter().filter(|d| d.level == level).count()
    }
}

/// The two kinds of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Json,
    Elisp,
}

/// Which kind `text` is: by the file name's extension when it has a known
/// one, else by its first character (`{` or `[` is JSON).
pub fn sniff(name: Option<&str>, text: &str) -> Input {
    let ext = name.and_then(|n| std::path::Path::new(n).extension()).and_then(|e| e.to_str());
    match ext {
        Some("el") => Input::Elisp,
        Some("json") => Input::Json,
        _ => match text.trim_start_matches('\u{feff}').trim_start().chars().next() {
            Some('{' | '[') => Input::Json,
            Some(_) => Input::Elisp,
            None => Input::Json,
        },
    }
}

/// `s` shown on one line of a diagnostic: control characters (line
/// breaks among them), the Unicode line and paragraph separators and the
/// bidirectional controls are written as escapes (`\n`, `\u{202e}`).
/// Names and messages come from the file checked: no text of it may start
/// a line of its own (a forged `FILE:LINE:COL: error:` line that
/// `next-error` would follow), drive a terminal, or reorder what is shown.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| {
        !(c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
    };
    if s.chars().all(shown) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if !shown(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

fn title(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Json => "invalid JSON: ",
        ErrorKind::Shape => "not a valid tool definition: ",
        ErrorKind::Ref => "cannot resolve $ref: ",
        ErrorKind::Plist => "cannot read the Lisp: ",
        _ => "",
    }
}

/// Whether an error while reading leaves nothing to check.
fn unusable(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::Json | ErrorKind::Limit | ErrorKind::UnsupportedFormat | ErrorKind::Plist)
}

/// The message of an error while reading, saying what kind it is
/// (`invalid JSON: ...`), with its path when it has one.
pub fn error_message(e: &Error) -> String {
    match &e.path {
        Some(p) => format!("{}{p}: {}", title(e.kind), e.message),
        None => format!("{}{}", title(e.kind), e.message),
    }
}

fn error_diagnostic(e: &Error, text: &str) -> Diagnostic {
    let (line, column) = match (e.line, e.column, &e.path) {
        (Some(l), Some(c), _) => (l, c),
        (_, _, Some(p)) => crate::locate::locate(text, p),
        _ => (1, 1),
    };
    Diagnostic {
        level: Level::Error,
        line,
        column,
        path: e.path.clone().unwrap_or_default(),
        message: format!("{}{}", title(e.kind), e.message),
        tool: None,
    }
}

/// The value at a JSON path.
fn value_at<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = doc;
    for step in steps(path) {
        cur = match step {
            JsonStep::Key(k) => cur.as_object()?.get(k)?,
            JsonStep::Index(i) => cur.as_array()?.get(i)?,
        };
    }
    Some(cur)
}

/// Where the formats keep a tool's parameter schema, relative to the tool.
const SCHEMA_KEYS: &[&str] = &[
    "function.parameters",
    "parameters",
    "parametersJsonSchema",
    "input_schema",
    "inputSchema",
    "toolSpec.inputSchema.json",
    "",
];

/// The steps `steps` below the JSON path `at`, written out for [`crate::locate`].
fn below(at: &Path, steps: &[Step]) -> String {
    let mut p = at.clone();
    for s in steps {
        p.push(s.clone());
    }
    p.to_string()
}

/// The JSON path of problem `path`, a path in the plist of `tool`, which
/// was read from `tool_path` of `doc`: an argument's problem maps into its
/// property of the parameter schema, a tool key to the key; otherwise the
/// tool itself.
pub fn problem_json_path(doc: &Value, tool: &Tool, tool_path: &str, path: &Path) -> String {
    let all = path.steps();
    match all.first() {
        Some(Step::Key(k)) if k == "args" => {
            let (index, rest) = match all.get(1) {
                Some(Step::Index(i)) => (Some(*i), &all[2..]),
                _ => (None, &all[1..]),
            };
            let name = index.and_then(|i| tool.args.get(i)).map(|a| a.name.as_str());
            for key in SCHEMA_KEYS {
                let schema = Path::written(tool_path).then(&Path::written(*key));
                let props = schema.clone().key("properties");
                match name {
                    Some(n) if value_at(doc, &props.clone().key(n)).is_some() => return below(&props.key(n), rest),
                    None if value_at(doc, &props).is_some() => return schema.to_string(),
                    _ => {}
                }
            }
        }
        Some(Step::Key(key)) => {
            let keys: &[&str] = if key == "name" { &["name", "title"] } else { &[key] };
            for prefix in ["", "function", "toolSpec"] {
                for k in keys {
                    let p = Path::written(tool_path).then(&Path::written(prefix)).key(*k);
                    if value_at(doc, &p).is_some() {
                        return below(&p, &all[1..]);
                    }
                }
            }
        }
        _ => {}
    }
    tool_path.to_string()
}

/// Check JSON tool definitions: the problems of every tool, and what
/// reading had to change, each at its place in `text`.
pub fn check_json(text: &str, opts: &ReadOptions) -> Checked {
    // Reading and checking the tools are one import, within one budget.
    crate::budget::within(None, || check_json_within(text, opts))
}

/// [`check_json`] within the import's budget.
fn check_json_within(text: &str, opts: &ReadOptions) -> Checked {
    let imp = match read::read_str(text, opts) {
        Ok(imp) => imp,
        Err(e) => {
            return Checked { diagnostics: vec![error_diagnostic(&e, text)], unusable: unusable(e.kind) };
        }
    };
    let doc: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    // Every problem is placed in the text at once (placing them one by
    // one would scan the text once per problem).
    let mut out = Vec::new();
    let mut places: Vec<String> = Vec::new();
    // The tool of a warning: the one at the longest path that is a whole
    // prefix of the warning's path (each prefix looked up, not each tool).
    let tool_at: std::collections::HashMap<&str, &Tool> =
        imp.paths.iter().map(String::as_str).zip(&imp.tools).rev().collect();
    for w in &imp.warnings {
        let p = w.path.as_str();
        let dots: Vec<usize> = p.match_indices('.').map(|(i, _)| i).collect();
        let tool = std::iter::once(p.len())
            .chain(dots.into_iter().rev())
            .chain(std::iter::once(0))
            .find_map(|end| tool_at.get(&p[..end]))
            .map(|t| t.name.clone());
        places.push(w.path.to_string());
        out.push(Diagnostic {
            level: w.severity.into(),
            line: 0,
            column: 0,
            path: w.path.to_string(),
            message: w.message.clone(),
            tool,
        });
    }
    for (tool, tool_path) in imp.tools.iter().zip(&imp.paths) {
        let mut printed = String::new();
        crate::plist::print_tool(tool, &mut printed);
        let problems = match crate::validate_elisp(&printed) {
            Ok(p) => p,
            Err(e) => {
                out.push(error_diagnostic(&e, text));
                places.push(String::new());
                continue;
            }
        };
        for p in problems {
            places.push(problem_json_path(&doc, tool, tool_path, &p.path));
            out.push(Diagnostic {
                level: p.severity.into(),
                line: 0,
                column: 0,
                path: p.path.to_string(),
                message: p.message,
                tool: Some(tool.name.clone()),
            });
        }
    }
    let paths: Vec<&str> = places.iter().map(String::as_str).collect();
    for (d, (line, column)) in out.iter_mut().zip(crate::locate::locate_many(text, &paths)) {
        if d.line == 0 {
            (d.line, d.column) = (line, column);
        }
    }
    out.sort_by_key(|d| (d.line, d.column));
    Checked { diagnostics: out, unusable: false }
}

/// Check the tool definitions in Emacs Lisp source.  A text that cannot
/// be read to its end is unusable; the forms before the error are still
/// checked.
pub fn check_elisp(text: &str) -> Checked {
    let src = Source::read(text);
    // The tools of a file are checked within one budget (patterns).
    let analysis = crate::budget::within(None, || analyze(&src.forms));
    let mut out: Vec<Diagnostic> = analysis
        .findings
        .iter()
        .map(|f| {
            let (line, column) = src.line_column(f.at);
            Diagnostic {
                level: f.level,
                line,
                column,
                path: f.path.to_string(),
                message: f.message.clone(),
                tool: f.tool.clone(),
            }
        })
        .collect();
    let unusable = src.error.is_some();
    if let Some(e) = &src.error {
        out.push(error_diagnostic(e, text));
    }
    out.sort_by_key(|d| (d.line, d.column));
    Checked { diagnostics: out, unusable }
}

/// The tool definitions of Emacs Lisp source, each read or with the reason
/// it cannot be; an error when the text cannot be read.
pub fn elisp_tools(text: &str) -> Result<Vec<(usize, usize, SourceTool)>> {
    let src = Source::read(text);
    if let Some(e) = src.error {
        return Err(e);
    }
    Ok(analyze(&src.forms)
        .tools
        .into_iter()
        .map(|t| {
            let (l, c) = src.line_column(t.at);
            (l, c, t)
        })
        .collect())
}

/// Source text for the `:function` of a tool read from `text`: `#'NAME`,
/// or the lambda as written when it takes one line.
pub fn function_text(text: &str, f: &FunctionSource) -> Option<String> {
    match f {
        FunctionSource::Named(n) => {
            let mut out = String::from("#'");
            crate::plist::print_symbol(n, &mut out);
            Some(out)
        }
        FunctionSource::Lambda(start, end) => text.get(*start..*end).filter(|t| !t.contains('\n')).map(String::from),
    }
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The format names, one for each format present, in order: `mcp`,
    /// `openai`..., or `elisp`.
    pub formats: Vec<String>,
    pub tools: usize,
}

impl Detected {
    /// `mcp`, or `mixed (openai, anthropic)`.
    pub fn describe(&self) -> String {
        match self.formats.as_slice() {
            [one] => one.clone(),
            many => format!("mixed ({})", many.join(", ")),
        }
    }
}

/// Which format `text` is in.
pub fn detect(name: Option<&str>, text: &str) -> Result<Detected> {
    if sniff(name, text) == Input::Elisp {
        let tools = elisp_tools(text)?;
        if tools.is_empty() {
            return Err(Error::new(
                ErrorKind::UnsupportedFormat,
                "Emacs Lisp without gptel-make-tool or llm-make-tool definitions",
            ));
        }
        return Ok(Detected { formats: vec!["elisp".into()], tools: tools.len() });
    }
    let imp = read::read_str(text, &ReadOptions { default_name: Some("tool"), ..ReadOptions::default() })?;
    // The reader may have repaired the text (SkyDeck's slips): then only the
    // tools themselves say where they came from.
    let doc: Option<Value> = serde_json::from_str(text).ok();
    let mut formats: Vec<String> = Vec::new();
    for (tool, p) in imp.tools.iter().zip(&imp.paths) {
        // Readers of formats that say how a tool runs name them in its executor.
        let runs = tool.extra.field("executor").and_then(|e| e.field("type")).and_then(Value::as_str);
        let name = if let Some(t) = runs {
            t.to_string()
        } else if steps(p).iter().any(|s| matches!(s, JsonStep::Key("functionDeclarations" | "function_declarations")))
        {
            Format::Gemini.name().to_string()
        } else {
            let f = doc.as_ref().and_then(|d| value_at(d, p)).and_then(Value::as_object).and_then(read::detect);
            f.map_or("unknown", Format::name).to_string()
        };
        if !formats.contains(&name) {
            formats.push(name);
        }
    }
    Ok(Detected { formats, tools: imp.tools.len() })
}

/// Diagnostics as elisp text for the module:
/// `((SEVERITY LINE COLUMN "PATH" "MESSAGE") ...)`.
pub fn diagnostics_to_elisp(ds: &[Diagnostic]) -> String {
    let mut out = String::from("(");
    for (i, d) in ds.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push('(');
        out.push_str(d.level.as_str());
        out.push_str(&format!(" {} {} ", d.line, d.column));
        crate::plist::print_string(&d.path, &mut out);
        out.push(' ');
        crate::plist::print_string(&d.message, &mut out);
        out.push(')');
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(Some("a.el"), "{"), Input::Elisp);
        assert_eq!(sniff(Some("a.json"), "(x)"), Input::Json);
        assert_eq!(sniff(None, "  [1]"), Input::Json);
        assert_eq!(sniff(Some("-"), ";; tools\n(gptel-make-tool)"), Input::Elisp);
    }

    #[test]
    fn json_problems_at_their_place() {
        let text = "{\"tools\": [\n {\"name\": \"a\", \"description\": \"d\",\n  \"inputSchema\": {\"type\": \"object\",\n   \"properties\": {\"q\": {\"type\": \"array\", \"description\": \"Q\"}}}}]}";
        let c = check_json(text, &ReadOptions::default());
        assert!(!c.unusable);
        assert_eq!(c.diagnostics.len(), 1, "{:?}", c.diagnostics);
        let d = &c.diagnostics[0];
        assert_eq!((d.line, d.column, d.path.as_str()), (4, 24, "args[0].items"));
        let bad = check_json("{\"tools\": [,]}", &ReadOptions::default());
        assert!(bad.unusable);
        assert_eq!((bad.diagnostics[0].line, bad.diagnostics[0].column), (1, 12));
    }

    #[test]
    fn detects_formats() {
        let d = detect(
            None,
            "[{\"name\": \"a\", \"input_schema\": {}}, {\"type\": \"function\", \"function\": {\"name\": \"b\"}}]",
        )
        .unwrap();
        assert_eq!(d.describe(), "mixed (anthropic, openai)");
        let g = detect(None, "{\"functionDeclarations\": [{\"name\": \"a\"}]}").unwrap();
        assert_eq!(g.describe(), "gemini");
        let o = detect(None, "{\"openapi\": \"3.0.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {\"/a\": {\"get\": {\"operationId\": \"a\", \"responses\": {}}}}}").unwrap();
        assert_eq!(o.describe(), "openapi");
        let e = detect(Some("t.el"), "(gptel-make-tool :name \"a\")").unwrap();
        assert_eq!((e.describe(), e.tools), ("elisp".to_string(), 1));
    }
}
