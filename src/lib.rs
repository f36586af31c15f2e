//! toolspec: LLM tool definitions between JSON formats and the gptel/llm
//! plist format.
//!
//! Data flows one way: a reader turns input (JSON in some format, or a
//! plist printed by Emacs) into the format-neutral [`model::Tool`]; the
//! validator checks plists; a writer turns tools into a JSON dialect or
//! into elisp text.  [`module`] is the thin Emacs layer over this core.

pub mod args;
pub mod check;
pub mod elisp_source;
pub mod elisp_tools;
pub mod error;
pub mod gemini;
pub mod gptel_form;
pub mod locate;
pub mod model;
pub mod openapi;
pub mod plist;
pub mod read;
pub mod scan;
pub mod schema;
pub mod template;
pub mod validate;
pub mod write;

// Formats that say how a tool runs, and tool result envelopes.
pub mod arcade;
pub mod envelope;
pub mod gloodata;
pub mod lenient;
pub mod seeds;
pub mod skydeck;

mod module;
mod module_seeds;

pub use error::{Error, ErrorKind, Result};
pub use model::{Arg, Problem, Schema, Severity, Tool};
pub use read::{Format, Imported, ReadOptions};
pub use write::Dialect;

/// Version of the crate; the elisp package refuses a module whose version
/// differs from its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Read JSON text in `format` (or detected).
pub fn parse_json(text: &str, opts: &ReadOptions) -> Result<Imported> {
    read::read_str(text, opts)
}

/// Problems as elisp: `((SEVERITY "PATH" "MESSAGE") ...)`.
pub fn print_problems(problems: &[Problem], out: &mut String) {
    out.push('(');
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push('(');
        out.push_str(p.severity.as_str());
        out.push(' ');
        plist::print_string(&p.path, out);
        out.push(' ');
        plist::print_string(&p.message, out);
        out.push(')');
    }
    out.push(')');
}

/// An import as elisp text: `(TOOLS WARNINGS PATHS)`.
pub fn imported_to_elisp(imp: &Imported) -> String {
    let mut out = String::with_capacity(256 * imp.tools.len());
    out.push('(');
    plist::print_tools(&imp.tools, &mut out);
    out.push(' ');
    print_problems(&imp.warnings, &mut out);
    out.push_str(" (");
    for (i, p) in imp.paths.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        plist::print_string(p, &mut out);
    }
    out.push_str("))");
    out
}

/// Tools read from elisp text: one tool plist, or a list of them.
pub fn tools_from_elisp(text: &str) -> Result<Vec<Tool>> {
    let sexp = plist::parse_sexp(text)?;
    let result = (|| {
        if plist::plist_pairs(&sexp).is_some() {
            return Ok(vec![plist::tool_from_sexp(&sexp)?]);
        }
        let items = plist::list_items(&sexp).ok_or_else(|| {
            Error::new(ErrorKind::Plist, "expected a tool plist or a list of tool plists")
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, t)| {
                plist::tool_from_sexp(t).map_err(|mut e| {
                    e.path = Some(match e.path.take() {
                        Some(p) => format!("[{i}].{p}"),
                        None => format!("[{i}]"),
                    });
                    e
                })
            })
            .collect()
    })();
    plist::dispose(sexp);
    result
}

/// Convert elisp tool text to JSON in `dialect`: one tool gives one JSON
/// tool, a list gives the dialect's document of many.
pub fn elisp_to_json(text: &str, dialect: Dialect, many: bool, pretty: bool) -> Result<String> {
    let tools = tools_from_elisp(text)?;
    let v = if many || tools.len() != 1 {
        write::write_tools(&tools, dialect)?
    } else {
        write::write_tool(&tools[0], dialect)?
    };
    Ok(write::to_text(&v, pretty))
}

/// Validate one tool plist given as elisp text.
pub fn validate_elisp(text: &str) -> Result<Vec<Problem>> {
    let sexp = plist::parse_sexp(text)?;
    let problems = validate::validate(&sexp);
    plist::dispose(sexp);
    Ok(problems)
}
