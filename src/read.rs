//! Readers: JSON text in any supported format -> tools.
//!
//! Detection looks at the keys of each object, so arrays and wrappers
//! (`{"tools": [...]}`, `functionDeclarations`, JSON-RPC results) may mix
//! formats.  A format can also be forced.

use crate::error::{check_utf8, Error, ErrorKind, Result};
use crate::model::{index, join, Arg, FastMap, Field, Problem, Schema, Seen, Tool, KEY_ORDER};
use crate::schema::{kind_of, Normalizer};
use crate::value::{Map, Value};

/// Tool fields that belong to Emacs (gptel, llm, toolspec's executors):
/// never taken from a file.
const RESERVED_KEYS: &[&str] =
    &["function", "async", "confirm", "include", "category", "executor", "args", "schema-extra"];

pub use crate::imported::{Format, Imported, ReadOptions, FORMAT_NAMES};
pub use crate::par::BIG;

/// Leave out a tool definition, found at `at`, that failed with `e`: `e`
/// becomes an error among `out`'s warnings, at the path of what is wrong,
/// and the read goes on.  With [`ReadOptions::strict`], or for a limit
/// (limits are the whole import's), `e` is the read's error.
fn leave_out(e: Error, opts: &ReadOptions, at: &str, out: &mut Imported) -> Result<()> {
    if opts.strict || e.kind == ErrorKind::Limit {
        return Err(e);
    }
    let path = e.path.clone().unwrap_or_else(|| at.to_string());
    let what = if at.is_empty() { "the tool definition".to_string() } else { format!("the tool definition at {at}") };
    out.warnings.push(Problem::error(
        crate::model::Code::ToolLeftOut,
        path,
        format!("{}: {what} is left out", e.message),
    ));
    out.skipped.get_or_insert(e);
    Ok(())
}

/// The error of an import that read no tool: that of the first tool
/// definition left out, else that there are none.
fn none_read(out: &mut Imported) -> Error {
    out.skipped.take().unwrap_or_else(no_tools)
}

/// The names of an import's tools, in the order they are read, and a
/// warning for each tool named as an earlier one: gptel keeps one tool
/// of a name (the last registered), and MCP and the model providers
/// want the names of a list of tools unique.
#[derive(Default)]
struct Names {
    /// Each name, and the path of the first tool of that name.
    first: FastMap<String, String>,
    warnings: Vec<Problem>,
}

impl Names {
    /// Note a tool named `name`, read at `path`.
    fn note(&mut self, name: &str, path: &str) {
        match self.first.get(name) {
            Some(first) => self.warnings.push(Problem::warning(
                crate::model::Code::DuplicateToolName,
                path,
                format!(
                    "the tool name \"{name}\" is also the name of the tool at {}: gptel keeps only the last \
                     tool of a name, and MCP and the model providers want the tools of a list named apart; \
                     rename one of them",
                    if first.is_empty() { "the top" } else { first }
                ),
            )),
            None => {
                self.first.insert(name.to_string(), path.to_string());
            }
        }
    }

    /// Forget the tools noted (the reader starts again).
    fn clear(&mut self) {
        self.first.clear();
        self.warnings.clear();
    }
}

/// Read tools from JSON bytes.
pub fn read_bytes(bytes: &[u8], opts: &ReadOptions) -> Result<Imported> {
    read_str(checked_text(bytes, opts)?, opts)
}

/// [`read_bytes`], each tool handed over as [`read_str_each`] does.
pub fn read_bytes_each(
    bytes: &[u8],
    opts: &ReadOptions,
    each: &mut dyn FnMut(Tool, String),
    restart: &mut dyn FnMut(),
) -> Result<Imported> {
    read_str_each(checked_text(bytes, opts)?, opts, each, restart)
}

/// `bytes` as text, if within the size limit and UTF-8.
fn checked_text<'b>(bytes: &'b [u8], opts: &ReadOptions) -> Result<&'b str> {
    if bytes.len() > opts.max_size {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "input is {} bytes, more than the limit of {} bytes: raise `toolspec-max-input-size' to read it",
                bytes.len(),
                opts.max_size
            ),
        ));
    }
    check_utf8(bytes)
}

/// Whether JSON `text` has a key `"openapi"` or `"swagger"` somewhere: a
/// cheap guess that it is an OpenAPI document.
fn has_version_key(text: &str) -> bool {
    // memmem's SIMD search: `str::match_indices` over a large catalog
    // cost more than the rest of its detection (`make bench`,
    // `toolspec-bench-catalog`), before anything else was read.
    [&b"\"openapi\""[..], b"\"swagger\""].iter().any(|key| {
        memchr::memmem::find_iter(text.as_bytes(), key).any(|i| text[i + key.len()..].trim_start().starts_with(':'))
    })
}

/// Read tools from JSON text.
pub fn read_str(text: &str, opts: &ReadOptions) -> Result<Imported> {
    let mut imp = crate::budget::within(None, || read_str_by(text, opts, None))?;
    let mut names = Names::default();
    for (tool, path) in imp.tools.iter().zip(&imp.paths) {
        names.note(&tool.name, path);
    }
    imp.warnings.append(&mut names.warnings);
    Ok(imp)
}

/// [`read_str`], each tool handed to `each` with its path, in order,
/// instead of being returned: the tool definitions of a document are
/// read one after the other, each handed over as soon as it is read.
/// The import returned has the warnings.
///
/// A list of tool definitions is read as it is parsed, before the rest
/// of the text is known to be such a list.  If it turns out not to be
/// (a key after the list, a slip a repair may mend), `restart` is called:
/// the tools handed over so far are to be forgotten, and every tool is
/// handed over again, as the document is read another way.
pub fn read_str_each(
    text: &str,
    opts: &ReadOptions,
    each: &mut dyn FnMut(Tool, String),
    restart: &mut dyn FnMut(),
) -> Result<Imported> {
    let names = std::cell::RefCell::new(Names::default());
    let each = &mut |tool: Tool, path: String| {
        names.borrow_mut().note(&tool.name, &path);
        each(tool, path)
    };
    let restart = &mut || {
        names.borrow_mut().clear();
        restart()
    };
    let mut imp = crate::budget::within(None, || read_str_by(text, opts, Some((&mut *each, restart))))?;
    // What was read whole (an OpenAPI document, say) is handed over now.
    let tools = std::mem::take(&mut imp.tools);
    let paths = std::mem::take(&mut imp.paths);
    for (tool, path) in tools.into_iter().zip(paths) {
        each(tool, path);
    }
    imp.warnings.append(&mut names.borrow_mut().warnings);
    Ok(imp)
}

/// Where [`read_str_each`] hands its tools, and what it calls to start again.
type Handing<'h> = (&'h mut dyn FnMut(Tool, String), &'h mut dyn FnMut());

/// [`read_str`], the tools of a document of tool definitions handed to
/// `each` when there is one.
fn read_str_by(text: &str, opts: &ReadOptions, each: Option<Handing>) -> Result<Imported> {
    let (mut each, restart) = match each {
        Some((each, restart)) => (Some(each), Some(restart)),
        None => (None, None),
    };
    if text.len() > opts.max_size {
        return read_bytes(text.as_bytes(), opts);
    }
    // What parsing drops silently (duplicate keys, integers beyond 64
    // bits) comes first among the warnings, after any repairs.
    // The scan is only for text that parsed: it does not validate.
    let big = text.len() >= BIG;
    // A large OpenAPI document is parsed only as far as its import
    // reaches, and its operations handed over as they are read: tried
    // when the text has a version key.
    if big && matches!(opts.format, Format::Auto | Format::OpenApi) && has_version_key(text) {
        if let Some(imp) = crate::openapi::read_json_if_openapi(text, each.as_deref_mut()) {
            return imp;
        }
    }
    // A list of tool definitions is read as it is parsed.
    if let (Some(each), Some(restart)) = (each.as_deref_mut(), restart) {
        if let Some(imp) = read_listed(text, opts, each, restart) {
            return imp;
        }
    }
    let (parsed, notes) = crate::scan::parse_noting(text, |flag| crate::scan::from_str_noting(text, flag));
    let (doc, repairs) = match parsed {
        Ok(doc) => (doc, notes),
        // Not JSON: an OpenAPI document may be YAML.
        Err(_) if crate::openapi::looks_like_yaml_openapi(text) => (crate::openapi::parse_yaml(text)?, Vec::new()),
        Err(e) => lenient_parse(text, opts, &e)?,
    };
    let mut imp = if matches!(opts.format, Format::Auto | Format::OpenApi)
        && doc.as_object().is_some_and(crate::openapi::is_openapi)
    {
        crate::openapi::read_document(doc, text, &crate::openapi::OpenApiOptions::default())?
    } else {
        let imp = match each {
            Some(each) => read_value_each(&doc, opts, each)?,
            None => read_value(&doc, opts)?,
        };
        crate::par::drop_later(big, doc);
        imp
    };
    imp.warnings.splice(0..0, repairs);
    Ok(imp)
}

/// A document that is a list of tool definitions, as most large ones are
/// (a JSON array of them, or an object whose only key is `tools` holding
/// one, as an MCP `tools/list` result), read definition by definition as
/// it is parsed: each item is parsed, read, and its tools handed to
/// `each` before the next is parsed, so that the first tools are handed
/// over at once and the text is parsed only once.  Each item reads as it
/// does in the whole document; the first error in the document's order
/// is the error.  After an item that fails to read, the rest of the text
/// is only checked as JSON: text that is not JSON is the general reader's
/// to report (or to repair).
///
/// None, for the general reader to read, when the text is another kind
/// of document, or does not parse, or when it may hold a `$ref` (which
/// may point into the rest of the document), or for OpenAPI only.  If
/// tools were handed over before that was known, `restart` is called
/// first.
fn read_listed(
    text: &str,
    opts: &ReadOptions,
    each: &mut dyn FnMut(Tool, String),
    restart: &mut dyn FnMut(),
) -> Option<Result<Imported>> {
    if opts.format == Format::OpenApi || may_refer(text) {
        return None;
    }
    let (path, depth) = match text.trim_start().as_bytes().first()? {
        b'[' => ("", 1),
        b'{' => ("tools", 2),
        _ => return None,
    };
    let mut handed = false;
    let mut out = Imported::default();
    let (read, notes) = crate::scan::parse_noting(text, |flag| {
        let mut any = false;
        let mut failed = None;
        let mut item = |i: usize, item: Value| {
            let read = (|| {
                let (found, jobs) = find_jobs_at(&item, opts, &index(path, i), depth)?;
                out.warnings.extend(found.warnings);
                let each = &mut |tool, path| {
                    handed = true;
                    each(tool, path)
                };
                match &jobs[..] {
                    // The item is a tool definition: read from the item
                    // itself, given up (no `$ref` can point into it).
                    [Job { value, path: at, format: Some(format), failed: None }] if std::ptr::eq(*value, &item) => {
                        let (at, format) = (at.clone(), *format);
                        drop(jobs);
                        Ok(hand_part(read_owned(item, opts, &at, format)?, &mut out, each))
                    }
                    _ => hand_over(&item, opts, &jobs, &mut out, each),
                }
            })();
            // An item that cannot be read is left out, unless that
            // ends the read.
            match read.or_else(|e| leave_out(e, opts, &index(path, i), &mut out).map(|()| false)) {
                Ok(found) => {
                    any |= found;
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        };
        stream_items(text, flag, &mut item).map_err(drop)?;
        Ok::<_, ()>(match failed {
            Some(e) => Err(e),
            None if !any => Err(none_read(&mut out)),
            None => Ok(()),
        })
    });
    match read {
        Ok(read) => Some(read.map(|()| {
            out.warnings.splice(0..0, notes);
            out
        })),
        Err(()) => {
            if handed {
                restart();
            }
            None
        }
    }
}

/// Parse `text`, a list of tool definitions as [`read_listed`] takes it,
/// handing each item with its index to `item`, which returns whether to
/// go on; the items after one that stops it are only checked as JSON.
/// Items are parsed through [`crate::scan::Noting`] with `flag`.  An
/// error when the text is not JSON, or not such a list.
fn stream_items(
    text: &str,
    flag: &std::cell::Cell<bool>,
    item: &mut dyn FnMut(usize, Value) -> bool,
) -> serde_json::Result<()> {
    use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    /// The items of the list.
    struct Items<'f>(&'f mut dyn FnMut(usize, Value) -> bool, crate::scan::Noting<'f>);
    impl<'de> DeserializeSeed<'de> for Items<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for Items<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of tool definitions")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            let mut i = 0;
            while let Some(v) = seq.next_element_seed(self.1)? {
                if !(self.0)(i, v) {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    break;
                }
                i += 1;
            }
            Ok(())
        }
    }
    /// An object whose only key is `tools`, holding the list.
    struct Only<'f>(Items<'f>);
    impl<'de> Visitor<'de> for Only<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object whose only key is `tools`")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            let mut items = Some(self.0);
            while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                match (key.as_ref(), items.take()) {
                    ("tools", Some(items)) => map.next_value_seed(items)?,
                    _ => return Err(A::Error::custom("not a list of tool definitions")),
                }
            }
            match items {
                Some(_) => Err(A::Error::custom("not a list of tool definitions")),
                None => Ok(()),
            }
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    if text.trim_start().starts_with('[') {
        Items(item, crate::scan::Noting(flag)).deserialize(&mut de)?;
    } else {
        serde::Deserializer::deserialize_map(&mut de, Only(Items(item, crate::scan::Noting(flag))))?;
    }
    de.end()
}

/// Whether `text` may hold a `$ref`: the text `$ref`, or some of its
/// characters escaped (`\u0024ref`, `$\u0072ef`...).
fn may_refer(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find(b, b"\\u0024").is_some()
        || memchr::memchr_iter(b'$', b).any(|i| {
            let rest = &b[i + 1..];
            rest.starts_with(b"ref") || rest.starts_with(b"\\") || rest.starts_with(b"r\\") || rest.starts_with(b"re\\")
        })
}

/// Hand-written SkyDeck files carry small JSON slips: when strict parsing
/// fails on one, repair them (with a warning each) and try again.  Other
/// text, or text still broken, is the strict parser's error.
fn lenient_parse(text: &str, opts: &ReadOptions, strict: &serde_json::Error) -> Result<(Value, Vec<Problem>)> {
    let skydeck = match opts.format {
        Format::SkyDeck => true,
        Format::Auto => crate::skydeck::looks_like(text),
        _ => false,
    };
    if skydeck {
        let (fixed, mut repairs) = crate::lenient::repair(text);
        if let Ok(doc) = serde_json::from_str(&fixed) {
            repairs.extend(crate::scan::notes(&fixed));
            return Ok((doc, repairs));
        }
    }
    Err(Error::from_json(strict))
}

/// Read tools from a parsed JSON document.
///
/// The document is walked first for its tool definitions; each is then
/// read on its own (spread over the cores when there are many), and the
/// results are put together in the document's order.
fn read_value(doc: &Value, opts: &ReadOptions) -> Result<Imported> {
    let (mut out, jobs) = find_jobs(doc, opts)?;
    let parts = crate::par::map(&jobs, |job| read_job(doc, opts, job));
    for (part, job) in parts.into_iter().zip(&jobs) {
        match part {
            Ok(part) => {
                out.tools.extend(part.tools);
                out.warnings.extend(part.warnings);
                out.paths.extend(part.paths);
            }
            Err(e) => leave_out(e, opts, &job.path, &mut out)?,
        }
    }
    if out.tools.is_empty() {
        return Err(none_read(&mut out));
    }
    Ok(out)
}

/// [`read_value`], each tool handed to `each` with its path as soon as
/// its definition is read, the definitions read in turn.  The import
/// returned has the warnings.
fn read_value_each(doc: &Value, opts: &ReadOptions, each: &mut dyn FnMut(Tool, String)) -> Result<Imported> {
    let (mut out, jobs) = find_jobs(doc, opts)?;
    if !hand_over(doc, opts, &jobs, &mut out, each)? {
        return Err(none_read(&mut out));
    }
    Ok(out)
}

/// Read the tool definitions `jobs` found in `doc` in turn, handing each
/// tool and its path to `each` and adding the warnings to `out`; whether
/// there was any tool.
fn hand_over(
    doc: &Value,
    opts: &ReadOptions,
    jobs: &[Job],
    out: &mut Imported,
    each: &mut dyn FnMut(Tool, String),
) -> Result<bool> {
    let mut any = false;
    for job in jobs {
        match read_job(doc, opts, job) {
            Ok(part) => any |= hand_part(part, out, each),
            Err(e) => leave_out(e, opts, &job.path, out)?,
        }
    }
    Ok(any)
}

/// Hand the tools of `part`, one definition's, to `each` and add its
/// warnings to `out`; whether it had any tool.
fn hand_part(part: Imported, out: &mut Imported, each: &mut dyn FnMut(Tool, String)) -> bool {
    out.warnings.extend(part.warnings);
    let any = !part.tools.is_empty();
    for (tool, path) in part.tools.into_iter().zip(part.paths) {
        each(tool, path);
    }
    any
}

fn no_tools() -> Error {
    Error::new(ErrorKind::Shape, "no tool definitions found in the input")
}

/// The tool definitions in `doc`, to be read, and what walking the
/// document to find them had to say.
fn find_jobs<'a>(doc: &'a Value, opts: &'a ReadOptions) -> Result<(Imported, Vec<Job<'a>>)> {
    find_jobs_at(doc, opts, "", 0)
}

/// [`find_jobs`] for a document found at `path`, `depth` levels down
/// (an item of a list read item by item).
fn find_jobs_at<'a>(
    doc: &'a Value,
    opts: &'a ReadOptions,
    path: &str,
    depth: usize,
) -> Result<(Imported, Vec<Job<'a>>)> {
    let mut r = Reader { doc, opts, out: Imported::default(), jobs: Vec::new() };
    r.any(doc, path, depth)?;
    Ok((r.out, r.jobs))
}

/// The tools of `def`, a tool definition of `format` at `path` that holds
/// no `$ref` and is given up: read as [`read_job`] reads it, its
/// parameters schema taken out and normalised in place.
fn read_owned(mut def: Value, opts: &ReadOptions, path: &str, format: Format) -> Result<Imported> {
    let params = match def.as_object().map(|o| parts(&def, o, path, format)) {
        Some(Ok(p)) if !p.bare && !crate::seeds::is_seed(format) => p.params.map(|v| v as *const Value),
        _ => None,
    };
    let owned = params.and_then(|at| take_at(&mut def, at, 3));
    let mut one = Reader { doc: &def, opts, out: Imported::default(), jobs: Vec::new() };
    one.tool_with(&def, owned, path, format).map(|()| one.out)
}

/// The value at address `at` within `v`, no more than `depth` objects
/// down, taken out (null left in its place).
fn take_at(v: &mut Value, at: *const Value, depth: usize) -> Option<Value> {
    if std::ptr::eq(v, at) {
        return Some(std::mem::take(v));
    }
    match v {
        Value::Object(o) if depth > 0 => o.values_mut().find_map(|x| take_at(x, at, depth - 1)),
        _ => None,
    }
}

/// The tools of one definition found in `doc`.
fn read_job(doc: &Value, opts: &ReadOptions, job: &Job) -> Result<Imported> {
    if let Some(e) = &job.failed {
        return Err(e.clone());
    }
    let mut one = Reader { doc, opts, out: Imported::default(), jobs: Vec::new() };
    one.run(job).map(|()| one.out)
}

struct Reader<'a> {
    doc: &'a Value,
    opts: &'a ReadOptions<'a>,
    out: Imported,
    /// The tool definitions found, to be read.
    jobs: Vec<Job<'a>>,
}

/// One tool definition (or OpenAPI document) found in the input, at `path`.
struct Job<'a> {
    value: &'a Value,
    path: String,
    /// `None` for an OpenAPI document.
    format: Option<Format>,
    /// Why what was found here is no tool definition: reading the job
    /// fails with it, in its place among the others.
    failed: Option<Error>,
}

/// Fields of one tool, picked out of its wrapper.
struct Parts<'v> {
    /// Path of the object holding `name` and `description`.
    base: String,
    name: Option<&'v Value>,
    description: Option<&'v Value>,
    params: Option<&'v Value>,
    params_path: String,
    extra: Schema,
    gemini: bool,
    /// Whole tool object is the schema (bare JSON Schema).
    bare: bool,
    /// The object holding `name`, `description` and the parameters, when
    /// it is not the schema itself.
    object: Option<&'v Map<String, Value>>,
    /// The parameters' key in `object`.
    params_key: &'static str,
}

impl<'a> Reader<'a> {
    fn run(&mut self, job: &Job) -> Result<()> {
        match job.format {
            Some(format) => self.tool(job.value, &job.path, format),
            None => self.openapi(job.value, &job.path),
        }
    }

    fn any(&mut self, v: &'a Value, path: &str, depth: usize) -> Result<()> {
        if depth > 8 {
            return Err(Error::shape(path, "tool definitions nested too deeply in wrappers"));
        }
        match v {
            // An item that is no tool definition is a job that fails, to
            // be left out in its place (see `leave_out`).
            Value::Array(list) => {
                for (i, item) in list.iter().enumerate() {
                    let at = index(path, i);
                    match self.any(item, &at, depth + 1) {
                        Err(e) if e.kind != ErrorKind::Limit => {
                            self.jobs.push(Job { value: item, path: at, format: None, failed: Some(e) })
                        }
                        other => other?,
                    }
                }
                Ok(())
            }
            Value::Object(o) => self.object(v, o, path, depth),
            other => Err(Error::shape(
                path,
                format!("expected a tool definition (an object) or a list of them, found {}", kind_of(other)),
            )),
        }
    }

    fn object(&mut self, v: &'a Value, o: &'a Map<String, Value>, path: &str, depth: usize) -> Result<()> {
        if matches!(self.opts.format, Format::Auto | Format::OpenApi) && crate::openapi::is_openapi(o) {
            self.jobs.push(Job { value: v, path: path.to_string(), format: None, failed: None });
            return Ok(());
        }
        if self.opts.format == Format::OpenApi {
            return Err(Error::shape(path, "not an OpenAPI document: it has no `openapi` or `swagger` key"));
        }
        // Wrappers, whatever the format.
        if o.has("jsonrpc") {
            if let Some(r) = o.field("result") {
                return self.any(r, &join(path, "result"), depth + 1);
            }
            if let Some(e) = o.field("error") {
                return Err(Error::shape(path, format!("the JSON-RPC response is an error: {e}")));
            }
        }
        for key in ["functionDeclarations", "function_declarations"] {
            if let Some(list) = o.field(key) {
                let list = list.as_array().ok_or_else(|| Error::shape(&join(path, key), "expected an array"))?;
                for (i, item) in list.iter().enumerate() {
                    self.jobs.push(Job {
                        value: item,
                        path: index(&join(path, key), i),
                        format: Some(Format::Gemini),
                        failed: None,
                    });
                }
                return Ok(());
            }
        }
        if !o.has("name") && !o.has("toolSpec") {
            for key in ["tools", "functions"] {
                if let Some(Value::Array(_)) = o.field(key) {
                    return self.any(&o[key], &join(path, key), depth + 1);
                }
            }
            if let Some(Value::Object(_)) = o.field("toolConfig") {
                return self.any(&o["toolConfig"], &join(path, "toolConfig"), depth + 1);
            }
        }
        let format = match self.opts.format {
            Format::Auto => crate::seeds::detect(o).or_else(|| detect(o)).ok_or_else(|| unrecognised(o, path))?,
            f => f,
        };
        self.jobs.push(Job { value: v, path: path.to_string(), format: Some(format), failed: None });
        Ok(())
    }

    /// Every operation of an OpenAPI document (select some with
    /// [`crate::openapi::read`]).
    fn openapi(&mut self, v: &Value, path: &str) -> Result<()> {
        let imp = crate::openapi::read(v, &crate::openapi::OpenApiOptions::default()).map_err(|mut e| {
            e.path = e.path.map(|p| join(path, &p)).or_else(|| (!path.is_empty()).then(|| path.to_string()));
            e
        })?;
        self.out.tools.extend(imp.tools);
        self.out.paths.extend(imp.paths.iter().map(|p| join(path, p)));
        self.out.warnings.extend(
            imp.warnings.into_iter().map(|w| Problem { path: crate::path::Path::written(path).then(&w.path), ..w }),
        );
        Ok(())
    }

    fn tool(&mut self, v: &Value, path: &str, format: Format) -> Result<()> {
        self.tool_with(v, None, path, format)
    }

    /// [`Reader::tool`]; `owned`, when given, is the tool's parameters
    /// schema, taken out of `v` by the caller (where `v` now holds null).
    fn tool_with(&mut self, v: &Value, owned: Option<Value>, path: &str, format: Format) -> Result<()> {
        if crate::seeds::is_seed(format) {
            return crate::seeds::read(format, v, path, self.opts, &mut self.out);
        }
        let o = v
            .as_object()
            .ok_or_else(|| Error::shape(path, format!("expected a tool definition object, found {}", kind_of(v))))?;
        let mut p = parts(v, o, path, format)?;
        for key in RESERVED_KEYS {
            if p.extra.shift_remove(key).is_some() {
                self.out.warnings.push(Problem::warning(
                    crate::model::Code::ReservedKey,
                    join(path, key),
                    format!("\"{key}\" ignored: a spec file cannot choose what runs a tool or how Emacs calls it"),
                ));
            }
        }
        let name = match p.name {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(Error::shape(
                    &join(&p.base, if p.bare { "title" } else { "name" }),
                    format!("the tool name must be a string, found {}", kind_of(other)),
                ))
            }
            None if p.bare => self.opts.default_name.map(String::from).ok_or_else(|| {
                Error::shape(path, "a bare JSON Schema needs a `title` to name the tool (or read it from a file)")
            })?,
            None => return Err(Error::shape(path, "a tool needs a `name` (a string)")),
        };
        let description = match p.description {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(Error::shape(
                    &join(&p.base, "description"),
                    format!("the description must be a string, found {}", kind_of(other)),
                ))
            }
        };
        let mut tool = Tool { name, description, extra: p.extra, ..Tool::default() };
        // The order of the tool's keys, if not the writers' (`name`,
        // `title`, `description` and the parameters first): recorded.
        let tool_order = p.object.and_then(|o| {
            let keys = tool_keys(o, &tool, p.params_key);
            (!in_order(keys.clone(), &["name", "title", "description", "args"]))
                .then(|| keys.map(Value::from).collect::<Vec<Value>>())
        });
        if let Some(params) = p.params {
            let mut norm = Normalizer::new(vec![params, self.doc], p.gemini);
            norm.keep_refs = true;
            self.fill_args(&mut tool, params, owned, &p.params_path, &mut norm, p.bare)?;
            self.out.warnings.append(&mut norm.warnings);
            // Where the root's definitions were used, for the writers to
            // put the `$ref`s back.
            if !norm.kept_refs.is_empty() {
                let kept = std::mem::take(&mut norm.kept_refs).into_iter().collect();
                tool.schema_extra.insert(crate::schema::INLINED_REFS.into(), Value::Object(kept));
            }
        }
        if let Some(keys) = tool_order {
            match tool.schema_extra.get_mut(KEY_ORDER) {
                Some(Value::Object(order)) => order.shift_insert(0, "tool".into(), Value::Array(keys)),
                _ => {
                    let mut order = Map::new();
                    order.insert("tool".into(), Value::Array(keys));
                    tool.schema_extra.insert(KEY_ORDER.into(), Value::Object(order))
                }
            };
        }
        self.out.tools.push(tool);
        self.out.paths.push(path.to_string());
        Ok(())
    }

    /// The arguments of `tool` from its parameters schema, given up by the
    /// caller when `owned` (normalised in place, see
    /// [`Normalizer::node_owned`]), else `params`.  The root's `title`
    /// and `description` are kept with its other keywords, but in a bare
    /// JSON Schema (`bare`), where they are the tool's name and description.
    fn fill_args(
        &mut self,
        tool: &mut Tool,
        params: &Value,
        owned: Option<Value>,
        path: &str,
        norm: &mut Normalizer,
        bare: bool,
    ) -> Result<()> {
        let mut root = match owned {
            Some(Value::Null) => return Ok(()),
            Some(owned) => norm.root_owned(owned, path)?,
            None if params.is_null() => return Ok(()),
            None => norm.root(params, path)?,
        };
        // An `optional` marker on a property (gptel's, leaked into JSON)
        // settles `required` here, so it never clashes with the plist's
        // own `:optional`.
        crate::schema::resolve_optional(&mut root);
        match root.field("type").and_then(Value::as_str) {
            Some("object") | None => {}
            Some(t) => {
                return Err(Error::shape(
                    &join(path, "type"),
                    format!("the parameters schema must be of type \"object\", found \"{t}\""),
                ))
            }
        }
        // The order of the root's keys, if not the writers' (`type`,
        // `properties` and, when written, `required` first): recorded.
        let taken = |k: &str| bare && matches!(k, "title" | "description");
        let keys = || root.keys().map(String::as_str).filter(|k| !taken(k));
        let canonical_with = in_order(keys(), &["type", "properties", "required"]);
        let canonical_without = in_order(keys().filter(|k| *k != "required"), &["type", "properties"]);
        let root_keys: Option<Vec<Value>> = (!(canonical_with && canonical_without))
            .then(|| root.keys().filter(|k| k.as_str() != KEY_ORDER).map(|k| Value::from(k.as_str())).collect());
        let mut required_order = None;
        // The normalised schema is this tool's own: its parts move into
        // the model rather than being copied.
        let props = root.shift_remove("properties");
        // Sets of names that are looked through one by one while few, as
        // in most tools: hashing them cost more than the comparisons.
        let mut required: Seen<&str> = Seen::default();
        match root.field("required") {
            None => {}
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).for_each(|r| {
                required.insert(r);
            }),
            Some(other) => {
                return Err(Error::shape(
                    &join(path, "required"),
                    format!("`required` must be an array of property names, found {}", kind_of(other)),
                ))
            }
        }
        match props {
            None | Some(Value::Null) => {}
            Some(Value::Object(props)) => {
                tool.args.reserve(props.len());
                for (name, schema) in props {
                    let schema = match schema {
                        Value::Object(s) => s,
                        _ => Schema::new(),
                    };
                    let optional = !required.contains(name.as_str());
                    tool.args.push(Arg { name, optional, schema });
                }
            }
            Some(other) => {
                return Err(Error::shape(
                    &join(path, "properties"),
                    format!("`properties` must be an object, found {}", kind_of(&other)),
                ))
            }
        }
        if !required.names().is_empty() {
            let mut names: Seen<&str> = Seen::default();
            for a in &tool.args {
                names.insert(a.name.as_str());
            }
            // In the document's order, for stable warnings; each name once.
            for &r in required.names() {
                if !names.contains(r) {
                    self.out.warnings.push(Problem::warning(
                        crate::model::Code::UnknownRequired,
                        join(path, "required"),
                        format!("\"{r}\" is required but not among the properties: dropped"),
                    ));
                }
            }
            // The list's own order, if not the properties'.
            let listed = || required.names().iter().copied().filter(|r| names.contains(r));
            if !listed().eq(tool.args.iter().filter(|a| !a.optional).map(|a| a.name.as_str())) {
                required_order = Some(listed().map(Value::from).collect::<Vec<Value>>());
            }
        }
        drop(required);
        let written = if tool.args.iter().any(|a| !a.optional) { canonical_with } else { canonical_without };
        for (k, v) in root {
            let taken = match k.as_str() {
                "type" | "properties" | "required" | KEY_ORDER => true,
                "title" | "description" => bare,
                _ => false,
            };
            if !taken {
                tool.schema_extra.insert(k, v);
            }
        }
        let mut order = Map::new();
        if let Some(keys) = root_keys.filter(|_| !written) {
            order.insert("schema".into(), Value::Array(keys));
        }
        if let Some(listed) = required_order {
            order.insert("required".into(), Value::Array(listed));
        }
        if !order.is_empty() {
            tool.schema_extra.insert(KEY_ORDER.into(), Value::Object(order));
        }
        Ok(())
    }
}

/// Whether `keys`, in their order, have those of `firsts` they have in
/// its order, before every other key.
fn in_order<'k>(keys: impl Iterator<Item = &'k str>, firsts: &[&str]) -> bool {
    let mut last = 0;
    let mut other = false;
    for k in keys {
        match firsts.iter().position(|f| *f == k) {
            Some(i) if other || i < last => return false,
            Some(i) => last = i + 1,
            None => other = true,
        }
    }
    true
}

/// The keys of a tool object `o`, read as `tool` with its parameters
/// under `params_key`, as [`KEY_ORDER`] names them: `name`,
/// `description`, `args` for the parameters, and the keys kept among
/// `tool.extra`; None for the others (a dialect's own, such as the
/// Responses API's `type`, or a key left out).
fn tool_keys<'k>(
    o: &'k Map<String, Value>,
    tool: &'k Tool,
    params_key: &'k str,
) -> impl Iterator<Item = &'k str> + Clone {
    o.keys().map(String::as_str).filter_map(move |k| match k {
        k if k == params_key => Some("args"),
        "name" => Some("name"),
        "description" => tool.description.is_some().then_some("description"),
        k if tool.extra.contains_key(k) => Some(k),
        _ => None,
    })
}

/// Guess the format of one tool object from its keys.
pub fn detect(o: &Map<String, Value>) -> Option<Format> {
    let has = |k: &str| o.has(k);
    let is_function = o.field("type").and_then(Value::as_str) == Some("function");
    if has("toolSpec") {
        Some(Format::Bedrock)
    } else if is_function && o.field("function").is_some_and(Value::is_object) {
        Some(Format::OpenAi)
    } else if is_function && has("name") {
        Some(Format::OpenAiResponses)
    } else if has("input_schema") {
        Some(Format::Anthropic)
    } else if has("inputSchema") {
        Some(Format::Mcp)
    } else if has("name") && (has("parameters") || has("parametersJsonSchema")) {
        if has("parametersJsonSchema") || o.field("parameters").is_some_and(looks_gemini) {
            Some(Format::Gemini)
        } else {
            Some(Format::OpenAiFunctions)
        }
    } else if has("$schema") || has("properties") || o.field("type").and_then(Value::as_str) == Some("object") {
        Some(Format::JsonSchema)
    } else if has("name") && o.keys().all(|k| matches!(k.as_str(), "name" | "description" | "strict")) {
        Some(Format::OpenAiFunctions)
    } else {
        None
    }
}

/// A schema in Gemini's dialect: upper-case type names or `nullable`.
fn looks_gemini(v: &Value) -> bool {
    fn walk(v: &Value, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        match v {
            Value::Object(o) => {
                o.field("type").and_then(Value::as_str).is_some_and(|t| t.chars().all(|c| c.is_ascii_uppercase()))
                    || o.has("nullable")
                    || o.values().any(|x| walk(x, depth + 1))
            }
            Value::Array(a) => a.iter().any(|x| walk(x, depth + 1)),
            _ => false,
        }
    }
    walk(v, 0)
}

fn unrecognised(o: &Map<String, Value>, path: &str) -> Error {
    let keys: Vec<&str> = o.keys().map(String::as_str).take(8).collect();
    Error::at(
        ErrorKind::UnsupportedFormat,
        path,
        format!(
            "not a tool definition in any known format: found keys {{{}}}; expected OpenAI (`type`+`function`), \
             Anthropic (`input_schema`), MCP (`inputSchema`), Gemini (`functionDeclarations`), Bedrock (`toolSpec`), \
             an OpenAPI document (`openapi` or `swagger`) or a JSON Schema",
            keys.join(", ")
        ),
    )
}

fn take_extra(o: &Map<String, Value>, consumed: &[&str]) -> Schema {
    o.iter().filter(|(k, _)| !consumed.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn parts<'v>(v: &'v Value, o: &'v Map<String, Value>, path: &str, format: Format) -> Result<Parts<'v>> {
    let simple = |params_key: &'static str, consumed: &[&str], gemini: bool| Parts {
        base: path.to_string(),
        name: o.field("name"),
        description: o.field("description"),
        params: o.get(params_key),
        params_path: join(path, params_key),
        extra: take_extra(o, consumed),
        gemini,
        bare: false,
        object: Some(o),
        params_key,
    };
    Ok(match format {
        Format::OpenAi => {
            let f = o
                .field("function")
                .and_then(Value::as_object)
                .ok_or_else(|| Error::shape(path, "an OpenAI tool needs a `function` object"))?;
            let fp = join(path, "function");
            Parts {
                base: fp.clone(),
                name: f.field("name"),
                description: f.field("description"),
                params: f.field("parameters"),
                params_path: join(&fp, "parameters"),
                extra: take_extra(f, &["name", "description", "parameters"]),
                gemini: false,
                bare: false,
                object: Some(f),
                params_key: "parameters",
            }
        }
        Format::OpenAiResponses => simple("parameters", &["type", "name", "description", "parameters"], false),
        Format::OpenAiFunctions => simple("parameters", &["name", "description", "parameters"], false),
        Format::Anthropic => simple("input_schema", &["name", "description", "input_schema"], false),
        Format::Mcp => simple("inputSchema", &["name", "description", "inputSchema"], false),
        Format::Gemini => {
            if o.has("parametersJsonSchema") {
                simple("parametersJsonSchema", &["name", "description", "parametersJsonSchema"], false)
            } else {
                simple("parameters", &["name", "description", "parameters"], true)
            }
        }
        Format::Bedrock => {
            let spec = o.field("toolSpec").unwrap_or(&Value::Null);
            let spec = spec.as_object().map(|s| s as &Map<String, Value>).unwrap_or(o);
            let sp = if o.has("toolSpec") { join(path, "toolSpec") } else { path.to_string() };
            let schema = spec.field("inputSchema").and_then(|s| s.field("json"));
            if spec.has("inputSchema") && schema.is_none() {
                return Err(Error::shape(&join(&sp, "inputSchema"), "a Bedrock `inputSchema` needs a `json` schema"));
            }
            Parts {
                base: sp.clone(),
                name: spec.field("name"),
                description: spec.field("description"),
                params: schema,
                params_path: join(&join(&sp, "inputSchema"), "json"),
                extra: take_extra(spec, &["name", "description", "inputSchema"]),
                gemini: false,
                bare: false,
                object: Some(spec),
                params_key: "inputSchema",
            }
        }
        // OpenAPI documents are read in `Reader::object`.
        Format::JsonSchema | Format::Auto | Format::Gloodata | Format::Arcade | Format::SkyDeck | Format::OpenApi => {
            Parts {
                base: path.to_string(),
                name: o.field("title"),
                description: o.field("description"),
                params: Some(v),
                params_path: path.to_string(),
                extra: Schema::new(),
                gemini: false,
                bare: true,
                object: None,
                params_key: "",
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_keys_are_told_from_values() {
        assert!(has_version_key(r#"{"info": {}, "openapi" : "3.1.0"}"#));
        assert!(has_version_key("{\"swagger\":\n \"2.0\"}"));
        assert!(!has_version_key(r#"{"enum": ["openapi", "swagger"], "x": "openapi"}"#));
    }
}
