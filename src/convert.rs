//! Conversions between elisp text and JSON that the Emacs module and the
//! command line share: tool plists printed (or serialised with
//! `json-serialize`) by Emacs to a JSON dialect, JSON text to an import,
//! and the check of a printed tool plist.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Problem, Tool};
use crate::read::{Imported, ReadOptions};
use crate::write::Dialect;
use crate::{node, par, plist, read, validate, write};

/// Version of the crate; the elisp package refuses a module whose version
/// differs from its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Read JSON text in `format` (or detected).
pub fn parse_json(text: &str, opts: &ReadOptions) -> Result<Imported> {
    read::read_str(text, opts)
}

/// Tools read from elisp text: one tool plist, or a list of them.
pub fn tools_from_elisp(text: &str) -> Result<Vec<Tool>> {
    let sexp = plist::parse_sexp(text)?;
    let result = (|| {
        if plist::plist_pairs(&sexp).is_some() {
            return Ok(vec![plist::tool_from_sexp(&sexp)?]);
        }
        let items = plist::list_items(&sexp)
            .ok_or_else(|| Error::new(ErrorKind::Plist, "expected a tool plist or a list of tool plists"))?;
        items.iter().enumerate().map(|(i, t)| plist::tool_from_sexp(t).map_err(|e| e.in_item(i))).collect()
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

/// Convert tool plists serialised by Emacs's `json-serialize` (a JSON
/// array of objects, each a tool plist with `:args` made a vector) to
/// JSON in `dialect`, as [`elisp_to_json`] converts their printed form.
/// Emacs's C serialiser is much faster than printing for `read`.
pub fn serialized_plists_to_json(text: &str, dialect: Dialect, pretty: bool) -> Result<String> {
    if pretty {
        let items = serialized_plists(text)?;
        // As for the printed form: the first tool that cannot be read,
        // placed at its item, else the first that cannot be written.
        let mut tools = par::map(&items, |item| serialized_tool(item))
            .into_iter()
            .enumerate()
            .map(in_item)
            .collect::<Result<Vec<Tool>>>()?;
        write::rename_for(&mut tools, dialect, &mut Vec::new());
        let list = par::map(&tools, |t| write::write_tool(t, dialect))
            .into_iter()
            .collect::<Result<Vec<crate::value::Value>>>()?;
        Ok(write::to_text(&write::document(list, dialect), true))
    } else {
        Ok(write::document_text(&serialized_plists_to_texts(text, dialect)?, dialect))
    }
}

/// The compact JSON text in `dialect` of each tool plist serialised by
/// `json-serialize` (see [`serialized_plists_to_json`]): the document of
/// them all is their texts in [`write::document_frame`].  Each tool is
/// parsed, read and written on its own, spread over the cores.
pub fn serialized_plists_to_texts(text: &str, dialect: Dialect) -> Result<Vec<String>> {
    serialized_plists_to_texts_beside(text, dialect, || ()).1
}

/// [`serialized_plists_to_texts`], with `beside` run on this thread while
/// the texts are written on others (and on this one, once it is done):
/// `beside`'s result and the texts.
pub fn serialized_plists_to_texts_beside<B>(
    text: &str,
    dialect: Dialect,
    beside: impl FnOnce() -> B,
) -> (B, Result<Vec<String>>) {
    let items = match serialized_plists(text) {
        Ok(items) => items,
        Err(e) => return (beside(), Err(e)),
    };
    let names = &dialect.profile().names;
    // A tool whose name the dialect refuses is not written here (`None`):
    // its new name depends on the other tools' names.
    let (b, texts) = par::join_map(beside, &items, |item| {
        serialized_tool(item).and_then(|t| match names.valid(&t.name) {
            true => write::write_owned(t, dialect).map(|v| Some(write::to_text(&v, false))),
            false => Ok(None),
        })
    });
    let texts: Result<Vec<Option<String>>> = texts.into_iter().enumerate().map(in_item).collect();
    let texts = match texts {
        Ok(texts) if texts.iter().any(Option::is_none) => renamed_texts(&items, texts, dialect),
        Ok(texts) => Ok(texts.into_iter().flatten().collect()),
        Err(e) => Err(e),
    };
    (b, texts)
}

/// The texts of [`serialized_plists_to_texts`] when some tools' names
/// must change: every tool's name made valid and unique in the document
/// ([`write::rename_for`]), the tools already written (`done`) kept.
fn renamed_texts(
    items: &[&serde_json::value::RawValue],
    done: Vec<Option<String>>,
    dialect: Dialect,
) -> Result<Vec<String>> {
    let mut tools = par::map(items, |item| serialized_tool(item))
        .into_iter()
        .enumerate()
        .map(in_item)
        .collect::<Result<Vec<Tool>>>()?;
    write::rename_for(&mut tools, dialect, &mut Vec::new());
    let todo: Vec<(usize, &Tool)> =
        done.iter().enumerate().filter(|(_, d)| d.is_none()).map(|(i, _)| (i, &tools[i])).collect();
    let mut written = par::map(&todo, |(i, t)| {
        write::write_tool(t, dialect).map(|v| write::to_text(&v, false)).map_err(|e| e.in_item(*i))
    })
    .into_iter();
    done.into_iter().map(|d| d.map(Ok).unwrap_or_else(|| written.next().unwrap_or_else(|| Ok(String::new())))).collect()
}

/// The items of `text`, a JSON array of serialised tool plists, each
/// still as its text.
fn serialized_plists(text: &str) -> Result<Vec<&serde_json::value::RawValue>> {
    serde_json::from_str(text).map_err(|_| match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(e) => Error::new(ErrorKind::Plist, format!("cannot read the serialised tools: {e}")),
        Ok(_) => Error::new(ErrorKind::Plist, "expected a list of tool plists"),
    })
}

/// The tool of one serialised plist.
fn serialized_tool(item: &serde_json::value::RawValue) -> Result<Tool> {
    if let Some(node) = plist::serialized_tool_node(item.get()) {
        return plist::tool_from_node(&node);
    }
    let item: crate::value::Value = serde_json::from_str(item.get())
        .map_err(|e| Error::new(ErrorKind::Plist, format!("cannot read the serialised tools: {e}")))?;
    let mut tree = node::Tree::default();
    plist::emit_serialized_tool(&item, &mut tree);
    plist::tool_from_node(&tree.finish().pop().unwrap_or(node::Node::Nil))
}

/// The result of item `i`, its error placed at the item.
fn in_item<T>((i, r): (usize, Result<T>)) -> Result<T> {
    r.map_err(|e| e.in_item(i))
}

/// Validate one tool plist given as elisp text.
pub fn validate_elisp(text: &str) -> Result<Vec<Problem>> {
    let sexp = plist::parse_sexp(text)?;
    let problems = validate::validate(&sexp);
    plist::dispose(sexp);
    Ok(problems)
}
