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
    let items = match split_items(text) {
        Some(items) => items,
        None => match serialized_plists(text) {
            Ok(items) => items,
            Err(e) => return (beside(), Err(e)),
        },
    };
    let names = &dialect.profile().names;
    // A tool whose name the dialect refuses is not written here (`None`):
    // its new name depends on the other tools' names.
    let (b, texts) = par::join_map(beside, &items, |item| {
        serialized_tool(item).and_then(|t| match names.valid(&t.name) {
            // The text is about as long as the item (a tool's JSON
            // either way): room for a quarter more.
            true => write::write_named(t, dialect).map(|v| Some(v.to_compact_string_in(item.len() + item.len() / 4))),
            false => Ok(None),
        })
    });
    let texts: Result<Vec<Option<String>>> = texts.into_iter().enumerate().map(in_item).collect();
    let texts = match texts {
        Ok(texts) if texts.iter().any(Option::is_none) => renamed_texts(&items, texts, dialect),
        Ok(texts) => Ok(texts.into_iter().flatten().collect()),
        Err(e) => Err(e),
    };
    // Items split by the scan are read only now: a text that is not
    // JSON is reported as the parse of the whole text reports it.
    if texts.is_err() {
        if let Err(e) = serialized_plists(text) {
            return (b, Err(e));
        }
    }
    (b, texts)
}

/// The compact JSON text in `dialect` of each tool, written under the
/// name beside it (its registered or exported name, which may differ
/// from the one it was read with), spread over the cores.  A name the
/// dialect refuses is made valid, as [`write::write_owned`] makes it.
/// An import's kept tools are written so (see [`crate::Sink::keep_tool`]):
/// no plist is serialised and read again.
pub fn named_tools_to_texts(tools: &[(&Tool, &str)], dialect: Dialect) -> Result<Vec<String>> {
    par::map(tools, |(tool, name)| write::write_owned(named(tool, name), dialect).map(|v| v.to_compact_string()))
        .into_iter()
        .enumerate()
        .map(in_item)
        .collect()
}

/// The JSON document in `dialect` of the tools, each written under the
/// name beside it, as [`named_tools_to_texts`] writes them one by one;
/// indented when `pretty`.
pub fn named_tools_to_json(tools: &[(&Tool, &str)], dialect: Dialect, pretty: bool) -> Result<String> {
    let list = par::map(tools, |(tool, name)| write::write_owned(named(tool, name), dialect))
        .into_iter()
        .enumerate()
        .map(in_item)
        .collect::<Result<Vec<crate::value::Value>>>()?;
    Ok(write::to_text(&write::document(list, dialect), pretty))
}

/// A copy of `tool` named `name`.
fn named(tool: &Tool, name: &str) -> Tool {
    let mut tool = tool.clone();
    name.clone_into(&mut tool.name);
    tool
}

/// Nesting (objects and arrays in an item) past which [`split_items`]
/// leaves the text to the parser, whose limit is 128 levels.
const SPLIT_DEPTH: usize = 100;

/// The items of `text`, a JSON array, as [`serialized_plists`] finds
/// them, found by a scan for where each ends (strings skipped, brackets
/// counted) instead of a parse: the items are parsed one by one after,
/// and a parse of the whole array first read all of the text once more.
/// `None` when the text is not an array as this scan knows one (nor
/// perhaps JSON), or nests deeper than [`SPLIT_DEPTH`]: the parse of the
/// whole text decides then.  The items' own syntax is not checked here.
/// Written for the first export of the bench's catalog (`make bench`,
/// `toolspec-bench-export`), whose 2.3 MB the parse read twice.
fn split_items(text: &str) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let skip_space = |mut i: usize| {
        while b.get(i).is_some_and(|&c| space(c)) {
            i += 1;
        }
        i
    };
    let mut i = skip_space(0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = skip_space(i + 1);
    let mut items = Vec::new();
    if b.get(i) == Some(&b']') {
        i += 1;
    } else {
        loop {
            let start = i;
            let mut depth = 0usize;
            let end = loop {
                match *b.get(i)? {
                    b'"' => {
                        i = crate::scan::string_end(b, i)?.0;
                        continue;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        if depth > SPLIT_DEPTH {
                            return None;
                        }
                    }
                    b'}' | b']' if depth > 0 => depth -= 1,
                    b',' | b']' if depth == 0 => break i,
                    b'}' => return None,
                    _ => {}
                }
                i += 1;
            };
            let item = text[start..end].trim_end_matches([' ', '\t', '\n', '\r']);
            if item.is_empty() {
                return None;
            }
            items.push(item);
            i = end + 1;
            if b[end] == b']' {
                break;
            }
            i = skip_space(i);
        }
    }
    (skip_space(i) == b.len()).then_some(items)
}

/// The texts of [`serialized_plists_to_texts`] when some tools' names
/// must change: every tool's name made valid and unique in the document
/// ([`write::rename_for`]), the tools already written (`done`) kept.
fn renamed_texts(items: &[&str], done: Vec<Option<String>>, dialect: Dialect) -> Result<Vec<String>> {
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
fn serialized_plists(text: &str) -> Result<Vec<&str>> {
    serde_json::from_str::<Vec<&serde_json::value::RawValue>>(text)
        .map(|items| items.into_iter().map(serde_json::value::RawValue::get).collect())
        .map_err(|_| match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Err(e) => Error::new(ErrorKind::Plist, format!("cannot read the serialised tools: {e}")),
            Ok(_) => Error::new(ErrorKind::Plist, "expected a list of tool plists"),
        })
}

/// The tool of one serialised plist.
fn serialized_tool(item: &str) -> Result<Tool> {
    if let Some(node) = plist::serialized_tool_node(item) {
        return plist::tool_from_node(&node);
    }
    let item: crate::value::Value = serde_json::from_str(item)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_splits_as_the_parse_does() {
        let texts = [
            "[]",
            " [ ] ",
            "[{}]",
            r#"[{"name":"a","args":[]},{"name":"b","description":"x, [y] {z}","args":[{"name":"c"}]}]"#,
            "[ {\"a\" : [1, {\"b\": \"]\"}] } ,\n\t{\"c\":\"\\\"}, ]\\\\\"} , 1 , \"s\" , null , [ ] ]\n",
            r#"[{"d":"\u005d\"\\","e":"é ✓ 𝄞"},"\\",true]"#,
            "[{\"long\":\"a string longer than sixteen bytes, with \\\" and \\\\ in it\"}]",
        ];
        for text in texts {
            assert_eq!(split_items(text), Some(serialized_plists(text).unwrap()), "{text}");
        }
    }

    #[test]
    fn the_scan_leaves_what_it_does_not_know_to_the_parse() {
        let deep = format!("[{}{}]", "[".repeat(SPLIT_DEPTH + 1), "]".repeat(SPLIT_DEPTH + 1));
        for text in ["", "{}", "[", "[1,]", "[,1]", "[1 2]x", "[{}}]", "[{\"a\":\"]", "[\"\\", "[1]]", "[1] x", &deep] {
            assert_eq!(split_items(text), None, "{text}");
        }
        // Items the scan finds but that are not JSON: the parse of the
        // whole text reports them, as without the scan.
        for text in ["[{\"a\":[1}]]", "[{\"a\" 1}]", "[{} {}]", "[tru]"] {
            let (_, texts) = serialized_plists_to_texts_beside(text, Dialect::OpenAi, || ());
            assert_eq!(
                Some(texts.unwrap_err().to_string()),
                serialized_plists(text).err().map(|e| e.to_string()),
                "{text}"
            );
        }
    }

    #[test]
    fn named_tools_are_written_as_their_plists_are() {
        let doc = r#"{"tools": [
            {"name": "math.sum", "description": "Add.", "inputSchema": {"type": "object",
             "properties": {"x": {"type": ["number", "null"], "default": 1}}, "required": ["x"], "title": "T"},
             "annotations": {"readOnlyHint": true}},
            {"name": "échos", "inputSchema": {"type": "object", "properties": {"s": {"type": "string"}}}}]}"#;
        let tools = parse_json(doc, &ReadOptions::default()).unwrap().tools;
        for dialect in [Dialect::OpenAi, Dialect::Mcp, Dialect::Gemini, Dialect::Bedrock] {
            let names = ["math_sum", "math.sum", "échos"];
            let pairs = [(&tools[0], names[0]), (&tools[0], names[1]), (&tools[1], names[2])];
            let texts = named_tools_to_texts(&pairs, dialect).unwrap();
            for ((tool, name), text) in pairs.iter().zip(&texts) {
                let printed = crate::emit::elisp_text(|s| plist::emit_tool(&named(tool, name), s));
                assert_eq!(text, &elisp_to_json(&printed, dialect, false, false).unwrap(), "{dialect:?} {name}");
            }
        }
        // The document of them all, as the texts are joined.
        for pretty in [false, true] {
            let pairs = [(&tools[0], "math_sum"), (&tools[1], "échos")];
            let tools: Vec<Tool> = pairs.iter().map(|(t, n)| named(t, n)).collect();
            let printed = crate::emit::elisp_text(|s| plist::emit_tools(&tools, s));
            assert_eq!(
                named_tools_to_json(&pairs, Dialect::Mcp, pretty).unwrap(),
                elisp_to_json(&printed, Dialect::Mcp, true, pretty).unwrap()
            );
        }
        // A name no dialect takes is refused, at its item.
        let err = named_tools_to_texts(&[(&tools[1], "")], Dialect::OpenAi).unwrap_err();
        assert!(err.to_string().contains("no name"), "{err}");
    }
}
