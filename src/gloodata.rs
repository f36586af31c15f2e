//! Gloodata extensions: the extension info document (`{"ns", "title",
//! "tools": {ID: TOOL}}`), the extension info written back from tools,
//! and the results an extension returns, turned into text for a model.
//!
//! An extension is an HTTP endpoint: `{"action":"info"}` returns the info
//! document, `{"action":"request","opName":ID,"info":{ARG: VALUE}}` runs
//! a tool.  The HTTP side is elisp (`toolspec-seeds.el`).

use crate::error::{Error, ErrorKind, Result};
use crate::imported::Imported;
use crate::model::{index, join, Arg, Code, Field, Problem, Schema, Tool};
use crate::schema::{kind_of, Normalizer};
use crate::seeds_common::{executor_of, opt_obj, opt_str, opt_strings, provider_name};
use crate::sink::Sink;
use crate::value::{Map, Value};

/// Field types Gloodata supports.
const SCALARS: &[&str] = &["string", "integer", "number", "boolean"];
/// Field keywords Gloodata knows, written back on export.
const FIELD_KEYS: &[&str] = &["description", "default", "enum", "examples", "format"];

/// Whether a JSON object is an extension info document.
pub fn is_info(o: &Map<String, Value>) -> bool {
    o.field("ns").is_some_and(Value::is_string) && o.field("tools").is_some_and(Value::is_object)
}

/// The tool name for tool `id` of namespace `ns`: `NS_ID`, made valid for
/// providers (see [`provider_name`]).
pub fn tool_name(ns: &str, id: &str) -> String {
    provider_name(&format!("{ns}_{id}"))
}

/// Read an extension info document at `path`.
pub fn read(o: &Map<String, Value>, path: &str, out: &mut Imported) -> Result<()> {
    let ns = match o.get("ns") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => {
            return Err(Error::shape(
                &join(path, "ns"),
                "an extension info document needs an `ns` (a non-empty string)",
            ))
        }
    };
    let ext_title = opt_str(o, "title", path)?;
    let ext_description = opt_str(o, "description", path)?;
    let tpath = join(path, "tools");
    let tools = opt_obj(o, "tools", path)?.ok_or_else(|| Error::shape(&tpath, "`tools` must be an object"))?;
    if tools.is_empty() {
        return Err(Error::shape(&tpath, "the extension defines no tools"));
    }
    let doc = Value::Object(o.clone());
    // Tool name -> index in `out`, for names made equal by sanitizing.
    let mut named: std::collections::HashMap<String, usize> =
        out.tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
    for (id, t) in tools {
        let p = join(&tpath, id);
        let t =
            t.as_object().ok_or_else(|| Error::shape(&p, format!("a tool must be an object, found {}", kind_of(t))))?;
        let name = tool_name(ns, id);
        if name != format!("{ns}_{id}") {
            out.warnings.push(Problem::warning(Code::Renamed,
                p.clone(),
                format!("tool \"{id}\" of \"{ns}\" is named \"{name}\" (tool names allow letters, digits, _ and -, at most 64)"),
            ));
        }
        if let Some(&other) = named.get(&name) {
            return Err(Error::shape(
                &p,
                format!("two tools are named \"{name}\" (the other is {})", out.paths[other]),
            ));
        }
        named.insert(name.clone(), out.tools.len());
        let mut tool = read_tool(t, ns, id, &p, &doc, &mut out.warnings)?;
        tool.name = name;
        let exec = tool.extra.get_mut("executor").and_then(Value::as_object_mut).expect("set by read_tool");
        let mut ext = Map::new();
        if let Some(t) = ext_title {
            ext.insert("title".into(), Value::from(t));
        }
        if let Some(d) = ext_description {
            ext.insert("description".into(), Value::from(d));
        }
        if !ext.is_empty() {
            exec.insert("extension".into(), Value::Object(ext));
        }
        out.tools.push(tool);
        out.paths.push(p);
    }
    Ok(())
}

fn read_tool(
    t: &Map<String, Value>,
    ns: &str,
    id: &str,
    path: &str,
    doc: &Value,
    warnings: &mut Vec<Problem>,
) -> Result<Tool> {
    let title = opt_str(t, "title", path)?;
    let description = opt_str(t, "description", path)?;
    let examples = opt_strings(t, "examples", path, warnings)?;
    let spath = join(path, "schema");
    let fields_path = join(&spath, "fields");
    let empty = Map::new();
    let fields = match opt_obj(t, "schema", path)? {
        Some(s) => opt_obj(s, "fields", &spath)?.unwrap_or(&empty),
        None => &empty,
    };
    let ui = opt_obj(t, "ui", path)?;
    let upath = join(path, "ui");
    let ui_args = match ui {
        Some(u) => opt_obj(u, "args", &upath)?,
        None => None,
    };

    // Display order first, then the fields ui.args does not mention.
    let mut order: Vec<&String> = Vec::new();
    if let Some(ua) = ui_args {
        for key in ua.keys() {
            if fields.contains_key(key) {
                order.push(key);
            } else {
                warnings.push(Problem::warning(
                    Code::Ignored,
                    join(&join(&upath, "args"), key),
                    format!("ui.args names \"{key}\", which is not among schema.fields: ignored"),
                ));
            }
        }
    }
    let placed: std::collections::HashSet<&String> = order.iter().copied().collect();
    let rest: Vec<&String> = fields.keys().filter(|k| !placed.contains(k)).collect();
    order.extend(rest);

    let mut tool = Tool::default();
    for name in order {
        let fp = join(&fields_path, name);
        let field = &fields[name];
        let Some(fo) = field.as_object() else {
            return Err(Error::shape(&fp, format!("a field must be an object, found {}", kind_of(field))));
        };
        // Null keywords (a `description` or `default` left unset) say nothing.
        let cleaned: Map<String, Value> =
            fo.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
        let mut norm = Normalizer::new(vec![field, doc], false);
        let mut schema = norm.node(&Value::Object(cleaned), &fp, 0)?;
        warnings.append(&mut norm.warnings);
        match schema.get("type").and_then(Value::as_str) {
            Some(t) if SCALARS.contains(&t) => {}
            other => warnings.push(Problem::warning(
                Code::Unsupported,
                join(&fp, "type"),
                format!(
                    "Gloodata fields are string, integer, number or boolean; found {}",
                    other.map_or_else(|| "no single type".to_string(), |t| format!("\"{t}\""))
                ),
            )),
        }
        if !schema.contains_key("description") {
            // The argument's label in the UI is the best description left.
            if let Some(label) = ui_args.and_then(|u| u.get(name)).and_then(|a| a.get("prefix")).and_then(Value::as_str)
            {
                schema.insert("description".into(), Value::from(label));
            }
        }
        let optional = schema.contains_key("default") || schema.get("nullable") == Some(&Value::Bool(true));
        tool.args.push(Arg { name: name.clone(), optional, schema });
    }

    tool.description = Some(compose_description(id, title, description, examples.as_deref()));
    if let Some(t) = title {
        tool.extra.insert("title".into(), Value::from(t));
    }
    let mut exec = Map::new();
    exec.insert("type".into(), Value::from("gloodata"));
    exec.insert("endpoint".into(), Value::Null);
    exec.insert("ns".into(), Value::from(ns));
    exec.insert("tool".into(), Value::from(id));
    if let Some(u) = ui {
        exec.insert("ui".into(), Value::Object(u.clone()));
    }
    if let Some(d) = description {
        exec.insert("description".into(), Value::from(d));
    }
    if let Some(ex) = &examples {
        exec.insert("examples".into(), Value::Array(ex.iter().map(|s| Value::from(s.as_str())).collect()));
    }
    tool.extra.insert("executor".into(), Value::Object(exec));
    Ok(tool)
}

/// Title, description and the example requests, for the model.
fn compose_description(
    id: &str,
    title: Option<&str>,
    description: Option<&str>,
    examples: Option<&[String]>,
) -> String {
    let title = title.map(str::trim).filter(|s| !s.is_empty());
    let description = description.map(str::trim).filter(|s| !s.is_empty());
    let mut text = match (title, description) {
        (Some(t), Some(d)) if t.eq_ignore_ascii_case(d) => t.to_string(),
        (Some(t), Some(d)) => {
            let sep = if t.ends_with(['.', '!', '?', ':']) { " " } else { ": " };
            format!("{t}{sep}{d}")
        }
        (Some(t), None) => t.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => id.to_string(),
    };
    if let Some(ex) = examples.filter(|e| !e.is_empty()) {
        let quoted: Vec<String> = ex.iter().map(|e| format!("\"{e}\"")).collect();
        text.push_str(&format!("\nExample requests: {}", quoted.join(", ")));
    }
    text
}

/// Options for writing an extension info document.
#[derive(Debug, Default, Clone)]
pub struct InfoOptions<'a> {
    /// Namespace; default: that of the first tool read from Gloodata, else "toolspec".
    pub ns: Option<&'a str>,
    /// Extension title; default: the one read with the first tool, else the namespace.
    pub title: Option<&'a str>,
    pub description: Option<&'a str>,
}

/// An extension info document holding `tools`.  Every argument must be
/// a scalar (string, integer, number, boolean): Gloodata fields are.
pub fn write_info(tools: &[Tool], opts: &InfoOptions) -> Result<Value> {
    let first = tools.iter().find_map(|t| executor_of(&t.extra, "gloodata"));
    let ns = opts
        .ns
        .map(String::from)
        .or_else(|| first.and_then(|e| e.get("ns")).and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| "toolspec".into());
    let ext = first.and_then(|e| e.get("extension")).and_then(Value::as_object);
    let title = opts
        .title
        .map(String::from)
        .or_else(|| ext.and_then(|x| x.get("title")).and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| ns.clone());
    let description = opts
        .description
        .map(String::from)
        .or_else(|| ext.and_then(|x| x.get("description")).and_then(Value::as_str).map(String::from));

    let mut out = Map::new();
    out.insert("ns".into(), Value::from(ns));
    out.insert("title".into(), Value::from(title));
    if let Some(d) = description {
        out.insert("description".into(), Value::from(d));
    }
    let mut entries = Map::new();
    for (i, tool) in tools.iter().enumerate() {
        let exec = executor_of(&tool.extra, "gloodata");
        let id = exec.and_then(|e| e.get("tool")).and_then(Value::as_str).unwrap_or(&tool.name).to_string();
        if entries.contains_key(&id) {
            return Err(Error::at(ErrorKind::Write, &index("", i), format!("two tools have the Gloodata id \"{id}\"")));
        }
        let entry = write_tool(tool, exec).map_err(|mut e| {
            let inner = e.path.take();
            e.path = Some(match inner {
                Some(p) if tools.len() > 1 => format!("[{i}].{p}"),
                Some(p) => p,
                None => format!("[{i}]"),
            });
            e
        })?;
        entries.insert(id, Value::Object(entry));
    }
    out.insert("tools".into(), Value::Object(entries));
    Ok(Value::Object(out))
}

fn write_tool(tool: &Tool, exec: Option<&Map<String, Value>>) -> Result<Map<String, Value>> {
    let title =
        tool.extra.get("title").and_then(Value::as_str).map(String::from).unwrap_or_else(|| humanize(&tool.name));
    let mut entry = Map::new();
    entry.insert("title".into(), Value::from(title.clone()));
    // A tool read from Gloodata has its own description apart from the
    // title and examples folded into the model's description.
    let description = match exec {
        Some(e) => e.get("description").and_then(Value::as_str).map(String::from),
        None => tool.description.clone(),
    };
    if let Some(d) = description {
        entry.insert("description".into(), Value::from(d));
    }
    let mut fields = Map::new();
    for (i, arg) in tool.args.iter().enumerate() {
        fields.insert(arg.name.clone(), Value::Object(field(arg, &index("args", i))?));
    }
    let mut schema = Map::new();
    schema.insert("fields".into(), Value::Object(fields));
    entry.insert("schema".into(), Value::Object(schema));
    // A tool read from Gloodata keeps its UI (or its lack of one); other
    // tools get a plain one: the title, then each argument's name.
    let ui = match exec {
        Some(e) => e.get("ui").filter(|u| u.is_object()).cloned(),
        None => Some(default_ui(tool, &title)),
    };
    if let Some(ui) = ui {
        entry.insert("ui".into(), ui);
    }
    let examples = exec
        .and_then(|e| e.get("examples"))
        .filter(|x| x.as_array().is_some_and(|a| !a.is_empty()))
        .cloned()
        .unwrap_or_else(|| Value::Array(vec![Value::from(title)]));
    entry.insert("examples".into(), examples);
    Ok(entry)
}

fn default_ui(tool: &Tool, title: &str) -> Value {
    let mut args = Map::new();
    for arg in &tool.args {
        let mut a = Map::new();
        a.insert("prefix".into(), Value::from(humanize(&arg.name)));
        args.insert(arg.name.clone(), Value::Object(a));
    }
    let mut u = Map::new();
    u.insert("prefix".into(), Value::from(title));
    u.insert("args".into(), Value::Object(args));
    Value::Object(u)
}

/// One argument as a Gloodata field, or an error naming it.
fn field(arg: &Arg, path: &str) -> Result<Schema> {
    let ty = match arg.schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(list)) => {
            let non_null: Vec<&str> = list.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            if non_null.len() == 1 {
                non_null[0]
            } else {
                ""
            }
        }
        _ => "",
    };
    if !SCALARS.contains(&ty) {
        let found = match arg.schema.get("type") {
            Some(Value::String(t)) => format!("is of type {t}"),
            Some(other) => format!("has type {other}"),
            None if arg.schema.contains_key("anyOf") || arg.schema.contains_key("oneOf") => {
                "is a union of types".to_string()
            }
            None => "has no type".to_string(),
        };
        return Err(Error::at(
            ErrorKind::Write,
            path,
            format!(
                "argument \"{}\" {found}: a Gloodata extension takes only string, integer, number and boolean arguments",
                arg.name
            ),
        ));
    }
    let nullable = arg.schema.get("nullable") == Some(&Value::Bool(true))
        || arg.schema.get("type").and_then(Value::as_array).is_some_and(|l| l.iter().any(|t| t == "null"));
    let mut f = Schema::new();
    if nullable || (arg.optional && !arg.schema.contains_key("default")) {
        f.insert("type".into(), Value::Array(vec![Value::from(ty), Value::from("null")]));
    } else {
        f.insert("type".into(), Value::from(ty));
    }
    for key in FIELD_KEYS {
        if let Some(v) = arg.schema.get(key) {
            f.insert((*key).into(), v.clone());
        }
    }
    Ok(f)
}

/// `show_map_at` -> `Show Map At`; `showMap` -> `Show Map`.
fn humanize(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f.to_uppercase().chain(cs).collect(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ------------------------------------------------------------------ results

/// A tool result as the model should see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// The extension answered `{"ok": false, ...}`.
    pub error: bool,
}

impl Rendered {
    /// The result as a plist: `(:text TEXT :error BOOL)`.
    pub fn emit<'a, S: Sink<'a>>(&'a self, s: &mut S) {
        s.open(false);
        s.keyword("text");
        s.string(&self.text);
        s.keyword("error");
        if self.error {
            s.t()
        } else {
            s.nil()
        }
        s.close();
    }
}

/// Turn the body of an extension's answer into text for the model:
/// strings pass as they are, `Table` and `InfoBox` results become
/// markdown tables, other results compact JSON, `{"ok": false}` an error.
pub fn render_result(body: &str) -> Rendered {
    let v: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return Rendered { text: body.trim().to_string(), error: false },
    };
    render_value(&v)
}

/// [`render_result`] for a parsed answer.
pub fn render_value(v: &Value) -> Rendered {
    let ok = |text: String| Rendered { text, error: false };
    match v {
        Value::String(s) => ok(s.clone()),
        Value::Object(o) if o.get("ok") == Some(&Value::Bool(false)) => {
            let reason = o.get("reason").and_then(Value::as_str).unwrap_or("the extension reported an error");
            let mut text = format!("Error: {reason}");
            if let Some(code) = o.get("code").filter(|c| !c.is_null()) {
                text.push_str(&format!(" ({})", code.as_str().map(String::from).unwrap_or_else(|| code.to_string())));
            }
            if let Some(info) = o.get("info").filter(|i| !i.is_null() && i != &&Value::Object(Map::new())) {
                text.push_str(&format!(": {info}"));
            }
            Rendered { text, error: true }
        }
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("Table") => ok(table(o)),
            Some("InfoBox") => ok(info_box(o)),
            _ => ok(v.to_string()),
        },
        other => ok(other.to_string()),
    }
}

/// A column's id (for object rows) and header.
fn column(c: &Value) -> (Option<String>, String) {
    match c {
        Value::String(s) => (Some(s.clone()), s.clone()),
        Value::Object(o) => {
            let id = o
                .get("id")
                .or_else(|| o.get("key"))
                .or_else(|| o.get("name"))
                .and_then(Value::as_str)
                .map(String::from);
            let label = ["label", "title", "name", "id"]
                .iter()
                .find_map(|k| o.get(k).and_then(Value::as_str))
                .map(String::from)
                .unwrap_or_default();
            (id, label)
        }
        Value::Array(a) if a.len() == 2 => {
            (a[0].as_str().map(String::from), a[1].as_str().unwrap_or_default().to_string())
        }
        other => (None, other.to_string()),
    }
}

/// A cell as markdown table text.
fn cell(v: &Value) -> String {
    let text = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        // Data tags: ["link", {"url", "label"}], ["date", ...], enum values.
        Value::Array(a) if a.len() == 2 && a[0].is_string() && a[1].is_object() => {
            tag(&a[1]).unwrap_or_else(|| v.to_string())
        }
        Value::Object(_) => tag(v).unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    };
    text.replace('|', "\\|").replace("\r\n", "<br>").replace('\n', "<br>")
}

fn tag(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    let label = ["label", "name", "title", "value"].iter().find_map(|k| o.get(k)).map(|l| match l {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    match (label, o.get("url").and_then(Value::as_str)) {
        (Some(l), Some(u)) => Some(format!("[{l}]({u})")),
        (Some(l), None) => Some(l),
        (None, Some(u)) => Some(u.to_string()),
        (None, None) => None,
    }
}

fn heading(o: &Map<String, Value>) -> String {
    match o.get("title").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        Some(t) => format!("**{}**\n\n", t.trim()),
        None => String::new(),
    }
}

fn table(o: &Map<String, Value>) -> String {
    let cols: Vec<(Option<String>, String)> =
        o.get("columns").and_then(Value::as_array).map(|c| c.iter().map(column).collect()).unwrap_or_default();
    let rows: &[Value] = o.get("rows").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let width = cols.len().max(rows.iter().filter_map(Value::as_array).map(Vec::len).max().unwrap_or(0));
    if width == 0 {
        return format!("{}(empty table)", heading(o));
    }
    let mut out = heading(o);
    let headers: Vec<String> =
        (0..width).map(|i| cols.get(i).map(|(_, l)| cell(&Value::from(l.as_str()))).unwrap_or_default()).collect();
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(width)));
    for row in rows {
        let cells: Vec<String> = match row {
            Value::Array(a) => (0..width).map(|i| a.get(i).map(cell).unwrap_or_default()).collect(),
            Value::Object(r) => (0..width)
                .map(|i| {
                    cols.get(i).and_then(|(id, _)| id.as_ref()).and_then(|id| r.get(id)).map(cell).unwrap_or_default()
                })
                .collect(),
            other => {
                let mut v = vec![cell(other)];
                v.resize(width, String::new());
                v
            }
        };
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if rows.is_empty() {
        out.push_str("\n(no rows)\n");
    }
    out.trim_end().to_string()
}

fn info_box(o: &Map<String, Value>) -> String {
    let cols: Vec<(Option<String>, String)> =
        o.get("columns").and_then(Value::as_array).map(|c| c.iter().map(column).collect()).unwrap_or_default();
    let row = o.get("row").cloned().unwrap_or(Value::Null);
    let mut out = heading(o);
    out.push_str("| Field | Value |\n| --- | --- |\n");
    let n = cols.len().max(row.as_array().map_or(0, Vec::len));
    for i in 0..n {
        let (id, label) = cols.get(i).cloned().unwrap_or((None, String::new()));
        let value = match &row {
            Value::Array(a) => a.get(i).map(cell).unwrap_or_default(),
            Value::Object(r) => id.as_ref().and_then(|k| r.get(k)).map(cell).unwrap_or_default(),
            _ => String::new(),
        };
        out.push_str(&format!("| {} | {} |\n", cell(&Value::from(label)), value));
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanized_names() {
        assert_eq!(humanize("show_map_at"), "Show Map At");
        assert_eq!(humanize("showMapAtAddress"), "Show Map At Address");
        assert_eq!(humanize("zoom"), "Zoom");
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            compose_description("x", Some("Hello World"), None, Some(&["Say hello".into()])),
            "Hello World\nExample requests: \"Say hello\""
        );
        assert_eq!(
            compose_description("x", Some("Show Issues"), Some("Show issues in a table"), None),
            "Show Issues: Show issues in a table"
        );
        assert_eq!(compose_description("x", None, None, None), "x");
    }
}
