//! OpenAPI documents as tools: one tool per operation.
//!
//! Reads OpenAPI 3.0 and 3.1 and Swagger 2.0, in JSON or YAML.  Each
//! operation becomes a tool whose arguments are its path, query, header
//! and cookie parameters and the top-level properties of its JSON request
//! body; `extra["executor"]` carries what an HTTP executor needs to make
//! the call (see the private `operation` module for its exact shape).  OpenPlugin's `x-`
//! extensions (helpers, examples, dependent parameters, bootstrap values,
//! response filters and output modules, lookups) go into descriptions and
//! the executor metadata.
//!
//! Large APIs have hundreds of operations: [`OpenApiOptions`] selects by
//! tag, path prefix or name.  An operation that cannot be made into a
//! tool (a broken `$ref`, a body toolspec cannot send) is skipped with a
//! warning, unless it was asked for by name; a recursive schema becomes,
//! at the point where it recurs, a placeholder saying so (a warning too).

mod describe;
mod fixup;
pub mod lazy;
mod operation;
mod yaml;

use std::collections::HashSet;

use serde::Deserialize;

use crate::error::{check_utf8, line_column, Error, ErrorKind, Result};
use crate::imported::Imported;
use crate::model::{join, Code, Field, Problem};
use crate::schema::{kind_of, resolve_pointer, Normalizer};
use crate::value::{Map, Value};

pub use yaml::{looks_like_yaml_openapi, parse_yaml};

/// Which operations to import, and where to send them.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct OpenApiOptions {
    /// Operations with any of these tags.
    pub tags: Vec<String>,
    /// Operations under any of these path prefixes (whole segments:
    /// `/pets` selects `/pets` and `/pets/{id}`, not `/petstore`).
    pub paths: Vec<String>,
    /// Operations by `operationId`, tool name or `"METHOD /path"`; added to
    /// what `tags` and `paths` select.
    pub operations: Vec<String>,
    /// Base URL used instead of the document's servers.
    pub server: Option<String>,
}

impl OpenApiOptions {
    /// Options from a JSON object such as `{"tags": ["pets"]}`.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::Shape,
                format!("bad OpenAPI selection options ({e}): expected tags, paths and operations (lists of strings) and server (a string)"),
            )
        })
    }
}

/// The version of an OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Swagger2,
    V30,
    V31,
}

/// Schema nodes one operation's arguments may take: past this, a `$ref`
/// becomes a placeholder (with a warning) instead of being expanded.
/// GitHub's largest request needs under 1000; a few APIs (Microsoft
/// Graph, DocuSign) would otherwise expand to megabytes per tool.
pub const MAX_OPERATION_NODES: usize = 2000;

/// HTTP methods of a path item, as OpenAPI names them.
pub const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Whether a document's root object is an OpenAPI (or Swagger) document.
pub fn is_openapi(o: &Map<String, Value>) -> bool {
    o.has("openapi") || o.has("swagger")
}

/// Parse an OpenAPI document, JSON or YAML.  Text that is empty, or
/// whose value is not an object, is an error at the place where the value
/// starts.
pub fn parse_document(text: &str) -> Result<Value> {
    parse_with(text, |t| serde_json::from_str(t).map_err(|e| Error::from_json(&e)))
}

/// [`parse_document`] with `json` parsing JSON text.
fn parse_with(text: &str, json: impl FnOnce(&str) -> Result<Value>) -> Result<Value> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let (line, column) = line_column(text.as_bytes(), text.len() - t.len());
    if t.is_empty() {
        return Err(Error::new(ErrorKind::Json, "the document is empty: expected an OpenAPI document (JSON or YAML)")
            .with_position(line, column));
    }
    let root = if t.starts_with('{') { json(text)? } else { parse_yaml(text)? };
    if !root.is_object() {
        return Err(Error::shape("", format!("an OpenAPI document is an object, found {}", kind_of(&root)))
            .with_position(line, column));
    }
    Ok(root)
}

/// Whether text is JSON (else YAML) for the reader.
fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
}

/// Read the operations `opts` selects from OpenAPI text (JSON or YAML).
///
/// JSON text is parsed as far as the import reaches ([`lazy`]); what
/// parsing dropped silently (duplicate keys, integers beyond 64 bits) is a
/// warning too, found by a scan of the text that runs on another thread
/// while the text is parsed, when it is large.
pub fn read_text(text: &str, opts: &OpenApiOptions) -> Result<Imported> {
    Document::of(text)?.read_then_free(opts)
}

/// [`read_text`] with the default options, if JSON `text` parses as an
/// OpenAPI document; None otherwise, and for text that does not parse (the
/// general reader then reports it).  With `each`, each tool is handed to
/// it as soon as it is read ([`Document::read_each`]), and the import
/// returned has the warnings only.
pub(crate) fn read_json_if_openapi(
    text: &str,
    each: Option<&mut (dyn FnMut(crate::Tool, String) + '_)>,
) -> Option<Result<Imported>> {
    if !is_json(text) {
        return None;
    }
    let doc = Document::of(text).ok()?;
    if doc.root.as_object().is_some_and(is_openapi) {
        let opts = OpenApiOptions::default();
        let imp = match each {
            Some(each) => doc.read_each(&opts, &mut crate::alloc::releasing(each)),
            None => doc.read(&opts),
        };
        doc.free_later();
        Some(imp)
    } else {
        doc.free_later();
        None
    }
}

/// A document parsed for reading ([`parse_bytes`]), with what its text
/// told, to be read (all at once, or tool by tool) and then freed:
/// freeing a large one (GitHub's paths are tens of megabytes of maps)
/// takes long enough to show (`make bench`, `toolspec-bench-openapi`),
/// which [`Document::free_later`] spends on another thread.
pub struct Document {
    root: Value,
    notes: Vec<Problem>,
    lookup: bool,
    /// Whether the text was large enough to be worth threads
    /// ([`crate::par::BIG`]).
    pub big: bool,
}

impl Document {
    fn of(text: &str) -> Result<Document> {
        let lookup = mentions_lookup(text);
        // JSON is scanned for what parsing drops (duplicate keys...).
        let mut notes = Vec::new();
        let root = parse_with(text, |t| {
            let (root, found) = lazy::parse_noted(t, lookup);
            notes = found;
            root
        });
        Ok(Document { root: root?, notes, lookup, big: text.len() >= crate::par::BIG })
    }

    /// [`read`], the selection `opts` makes.
    pub fn read(&self, opts: &OpenApiOptions) -> Result<Imported> {
        read_with(&self.root, opts, Some(self.lookup)).map(|imp| self.with_notes(imp))
    }

    /// [`Document::read`], handing each tool and its path to `each` as it
    /// is made: the import returned has the warnings only.
    pub fn read_each(&self, opts: &OpenApiOptions, each: &mut dyn FnMut(crate::Tool, String)) -> Result<Imported> {
        read_each(&self.root, opts, Some(self.lookup), each).map(|imp| self.with_notes(imp))
    }

    /// [`Document::read`], the document then freed (see
    /// [`Document::free_later`]).
    fn read_then_free(self, opts: &OpenApiOptions) -> Result<Imported> {
        let result = self.read(opts);
        self.free_later();
        result
    }

    /// What the text told (duplicate keys...) before the import's warnings.
    fn with_notes(&self, mut imp: Imported) -> Imported {
        imp.warnings.splice(0..0, self.notes.iter().cloned());
        imp
    }

    /// Free the document, on another thread when it is large: freeing
    /// GitHub's takes milliseconds the caller need not wait.
    pub fn free_later(self) {
        crate::par::drop_later(self.big, self);
    }
}

/// Whether `text` holds `x-lookup` anywhere: if not, no lookup is looked
/// for.  Searched with SIMD, as the text may be GitHub's 13 MB.
fn mentions_lookup(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"x-lookup").is_some()
}

/// [`read`] on a document parsed from `text`: the text tells cheaply
/// whether any `x-lookup` is to be looked for, and a large document is
/// freed on another thread.
pub fn read_document(root: Value, text: &str, opts: &OpenApiOptions) -> Result<Imported> {
    Document { root, notes: Vec::new(), lookup: mentions_lookup(text), big: text.len() >= crate::par::BIG }
        .read_then_free(opts)
}

/// [`operations`] of OpenAPI text (JSON or YAML).
pub fn operations_of_text(text: &str) -> Result<Vec<OperationInfo>> {
    // Only `paths` is read: of the components, what paths reach.
    let root = parse_with(text, |t| lazy::parse(t, false))?;
    let result = operations(&root);
    crate::par::drop_later(text.len() >= crate::par::BIG, root);
    result
}

/// [`read_text`] on bytes, refused beyond `max_size`.  The bytes are
/// freed once parsed, before the operations are read: a large document's
/// text is not kept alongside what is made of it.
pub fn read_bytes(bytes: Vec<u8>, opts: &OpenApiOptions, max_size: usize) -> Result<Imported> {
    parse_bytes(bytes, max_size)?.read_then_free(opts)
}

/// The document in `bytes` (JSON or YAML), refused beyond `max_size`,
/// parsed as far as an import reaches; the bytes are freed, and their
/// memory given back, before it is read.
pub fn parse_bytes(bytes: Vec<u8>, max_size: usize) -> Result<Document> {
    check_size(bytes.len(), max_size)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(check_utf8(e.as_bytes())
                .err()
                .unwrap_or_else(|| Error::new(ErrorKind::Json, "the text is not UTF-8")))
        }
    };
    let doc = Document::of(&text)?;
    drop(text);
    if doc.big {
        // The text's 13 MB (GitHub's), given back before the tools are made.
        crate::alloc::release();
    }
    Ok(doc)
}

pub(crate) fn check_size(len: usize, max: usize) -> Result<()> {
    if len > max {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "input is {len} bytes, more than the limit of {max} bytes: raise `toolspec-max-input-size' to read it"
            ),
        ));
    }
    Ok(())
}

/// Read the operations `opts` selects from a parsed OpenAPI document.
pub fn read(root: &Value, opts: &OpenApiOptions) -> Result<Imported> {
    read_with(root, opts, None)
}

fn read_with(root: &Value, opts: &OpenApiOptions, has_lookup: Option<bool>) -> Result<Imported> {
    let (mut tools, mut paths) = (Vec::new(), Vec::new());
    let mut imp = read_each(root, opts, has_lookup, &mut |tool, path| {
        tools.push(tool);
        paths.push(path);
    })?;
    imp.tools = tools;
    imp.paths = paths;
    Ok(imp)
}

/// [`read_with`], handing each tool and its path to `each` as it is made:
/// the import returned has the warnings only.  One budget
/// ([`crate::budget`]) for all the operations.
fn read_each(
    root: &Value,
    opts: &OpenApiOptions,
    has_lookup: Option<bool>,
    each: &mut dyn FnMut(crate::Tool, String),
) -> Result<Imported> {
    crate::budget::within(None, || read_each_within(root, opts, has_lookup, each))
}

/// [`read_each`] within the import's budget.
fn read_each_within(
    root: &Value,
    opts: &OpenApiOptions,
    has_lookup: Option<bool>,
    each: &mut dyn FnMut(crate::Tool, String),
) -> Result<Imported> {
    let mut doc = Doc::new(root)?;
    doc.has_lookup = has_lookup.unwrap_or_else(|| has_key(root, "x-lookup", 0));
    let mut out = Imported { warnings: doc.warnings.clone(), ..Imported::default() };
    let selected = doc.select(opts, &mut out.warnings)?;
    let mut norm = Normalizer::new(vec![root], false).with_ref_cache();
    norm.lenient_refs = true;
    norm.soft_nodes = MAX_OPERATION_NODES;
    let mut first_error: Option<(Error, &str)> = None;
    let tried = selected.len();
    let mut made = 0;
    for (i, explicit) in selected {
        let op = &doc.ops[i];
        norm.reset_budget();
        let built = operation::build(&doc, op, opts, &mut norm);
        out.warnings.append(&mut norm.warnings);
        match built {
            Ok((tool, mut warnings)) => {
                made += 1;
                each(tool, op.json_path.clone());
                out.warnings.append(&mut warnings);
            }
            // Past the import's budget, no operation is made any more.
            Err(e) if explicit || crate::budget::exhausted() => return Err(e),
            Err(e) => {
                out.warnings.push(Problem::warning(
                    Code::Skipped,
                    e.path.clone().unwrap_or_else(|| op.json_path.clone()),
                    format!("operation {} skipped: {}", op.name, e.message),
                ));
                first_error.get_or_insert((e, &op.name));
            }
        }
    }
    if made == 0 {
        return Err(match first_error {
            Some((e, name)) => none_imported(e, name, tried, doc.ops.len()),
            None => Error::shape("paths", doc.no_operations()),
        });
    }
    Ok(out)
}

/// The error of an import where every selected operation was skipped:
/// the first one's error (its kind and path), saying that none was left.
fn none_imported(mut e: Error, name: &str, tried: usize, all: usize) -> Error {
    e.message = match (tried, all) {
        (1, 1) => format!("the document's only operation, {name}, cannot be made into a tool: {}", e.message),
        (1, _) => format!("the only operation selected, {name}, cannot be made into a tool: {}", e.message),
        (t, a) => format!(
            "none of the {} can be made into a tool; the first, {name}, was skipped because {}",
            if t == a { format!("document's {t} operations") } else { format!("{t} operations selected") },
            e.message
        ),
    };
    e
}

/// One operation of a document, for choosing what to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationInfo {
    /// The tool name it is imported as.
    pub name: String,
    /// Upper case: `GET`.
    pub method: String,
    pub path: String,
    pub tags: Vec<String>,
    pub operation_id: Option<String>,
    pub summary: Option<String>,
    pub deprecated: bool,
}

/// Every operation of a document, in document order.
pub fn operations(root: &Value) -> Result<Vec<OperationInfo>> {
    let doc = Doc::new(root)?;
    Ok(doc
        .ops
        .iter()
        .map(|op| OperationInfo {
            name: op.name.clone(),
            method: op.method.to_ascii_uppercase(),
            path: op.path.to_string(),
            tags: op.tags().map(String::from).collect(),
            operation_id: op.operation_id().map(String::from),
            summary: op.op.field("summary").and_then(Value::as_str).map(|s| s.trim().to_string()),
            deprecated: op.op.field("deprecated") == Some(&Value::Bool(true)),
        })
        .collect())
}

/// Operations as elisp text: a list of plists `(:name :method :path :tags
/// :operationId :summary :deprecated)`, `:tags` a list of strings.
pub fn operations_to_elisp(ops: &[OperationInfo]) -> String {
    use crate::plist::print_string;
    let mut out = String::with_capacity(128 * ops.len() + 2);
    out.push('(');
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str("(:name ");
        print_string(&op.name, &mut out);
        out.push_str(" :method ");
        print_string(&op.method, &mut out);
        out.push_str(" :path ");
        print_string(&op.path, &mut out);
        out.push_str(" :tags (");
        for (j, t) in op.tags.iter().enumerate() {
            if j > 0 {
                out.push(' ');
            }
            print_string(t, &mut out);
        }
        out.push_str(") :operationId ");
        match &op.operation_id {
            Some(id) => print_string(id, &mut out),
            None => out.push_str("nil"),
        }
        out.push_str(" :summary ");
        match &op.summary {
            Some(s) => print_string(s, &mut out),
            None => out.push_str("nil"),
        }
        out.push_str(if op.deprecated { " :deprecated t)" } else { " :deprecated nil)" });
    }
    out.push(')');
    out
}

// ------------------------------------------------------------ the document

/// A document and its operations, each with its tool name.
pub(crate) struct Doc<'a> {
    pub root: &'a Value,
    pub obj: &'a Map<String, Value>,
    pub version: Version,
    pub ops: Vec<Op<'a>>,
    /// Problems met while listing the operations.
    pub warnings: Vec<Problem>,
    /// Whether any `x-lookup` may be in the document (most have none:
    /// then response schemas are not searched).
    pub has_lookup: bool,
    /// What each `$ref` [`Doc::deref`] followed points to: operations
    /// share their parameters and responses.
    refs: std::cell::RefCell<crate::model::FastMap<&'a str, Option<&'a Value>>>,
}

/// One operation: a method of a path item.
pub(crate) struct Op<'a> {
    pub path: &'a str,
    /// As the document writes it: lower case.
    pub method: &'a str,
    pub item: &'a Map<String, Value>,
    /// `paths./pets`
    pub item_path: String,
    pub op: &'a Map<String, Value>,
    /// `paths./pets.get`
    pub json_path: String,
    pub name: String,
}

impl<'a> Op<'a> {
    pub fn tags(&self) -> impl Iterator<Item = &'a str> {
        self.op.field("tags").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    }

    pub fn operation_id(&self) -> Option<&'a str> {
        self.op.field("operationId").and_then(Value::as_str).filter(|s| !s.trim().is_empty())
    }
}

impl<'a> Doc<'a> {
    pub fn new(root: &'a Value) -> Result<Doc<'a>> {
        let obj = root
            .as_object()
            .ok_or_else(|| Error::shape("", format!("an OpenAPI document is an object, found {}", kind_of(root))))?;
        let version = version(obj)?;
        let mut doc = Doc {
            root,
            obj,
            version,
            ops: Vec::new(),
            warnings: Vec::new(),
            has_lookup: false,
            refs: Default::default(),
        };
        let paths = match obj.field("paths") {
            None | Some(Value::Null) => return Ok(doc),
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(Error::shape("paths", format!("`paths` must be an object, found {}", kind_of(other))))
            }
        };
        let mut taken: HashSet<String> = HashSet::with_capacity(paths.len() * 2);
        for (path, item) in paths {
            let item_path = join("paths", path);
            if path.starts_with("x-") {
                continue;
            }
            let item = match doc.deref(item, &item_path) {
                Ok(Value::Object(item)) => item,
                Ok(other) => {
                    doc.warnings.push(Problem::warning(
                        Code::Skipped,
                        &item_path,
                        format!("a path item must be an object, found {}: skipped", kind_of(other)),
                    ));
                    continue;
                }
                Err(e) => {
                    doc.warnings.push(Problem::warning(
                        Code::Skipped,
                        &item_path,
                        format!("path skipped: {}", e.message),
                    ));
                    continue;
                }
            };
            for (method, op) in item {
                if !METHODS.contains(&method.as_str()) {
                    continue;
                }
                let json_path = join(&item_path, method);
                let Value::Object(op) = op else {
                    doc.warnings.push(Problem::warning(
                        Code::Skipped,
                        &json_path,
                        format!("an operation must be an object, found {}: skipped", kind_of(op)),
                    ));
                    continue;
                };
                let base = match op.field("operationId").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
                    Some(id) => sanitize_name(id),
                    None => sanitize_name(&format!("{method}_{}", path.replace(['{', '}'], ""))),
                };
                let name = unique_name(&base, &mut taken, 64);
                doc.ops.push(Op { path, method, item, item_path: item_path.clone(), op, json_path, name });
            }
        }
        Ok(doc)
    }

    /// [`operation::deref`] in this document, each `$ref` resolved once.
    pub fn deref(&self, v: &'a Value, path: &str) -> Result<&'a Value> {
        operation::deref(v, path, |r| *self.refs.borrow_mut().entry(r).or_insert_with(|| resolve_ref(self.root, r)))
    }

    /// Title of the document (`info.title`).
    pub fn title(&self) -> Option<&'a str> {
        self.obj.field("info").and_then(|i| i.field("title")).and_then(Value::as_str)
    }

    /// The operation with `path` and `method` (any case).
    pub fn find(&self, path: &str, method: &str) -> Option<&Op<'a>> {
        self.ops.iter().find(|op| op.path == path && op.method.eq_ignore_ascii_case(method))
    }

    /// Indexes of the operations `opts` selects, each with whether it was
    /// named explicitly.
    fn select(&self, opts: &OpenApiOptions, warnings: &mut Vec<Problem>) -> Result<Vec<(usize, bool)>> {
        let mut explicit = vec![false; self.ops.len()];
        for wanted in &opts.operations {
            let found: Vec<usize> =
                self.ops.iter().enumerate().filter(|(_, op)| names_operation(op, wanted)).map(|(i, _)| i).collect();
            if found.is_empty() {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "no operation \"{wanted}\" in this OpenAPI document: give an operationId, a tool name or \"METHOD /path\"{}",
                        self.suggest(wanted)
                    ),
                ));
            }
            for i in found {
                explicit[i] = true;
            }
        }
        let filtering = !opts.tags.is_empty() || !opts.paths.is_empty();
        for tag in &opts.tags {
            if !self.ops.iter().any(|op| op.tags().any(|t| t == tag)) {
                warnings.push(Problem::warning(Code::NoMatch, "", format!("no operation has the tag \"{tag}\"")));
            }
        }
        for prefix in &opts.paths {
            if !self.ops.iter().any(|op| under_prefix(op.path, prefix)) {
                warnings.push(Problem::warning(
                    Code::NoMatch,
                    "",
                    format!("no operation is under the path \"{prefix}\""),
                ));
            }
        }
        let by_filter = |op: &Op| {
            (opts.tags.is_empty() || op.tags().any(|t| opts.tags.iter().any(|w| w == t)))
                && (opts.paths.is_empty() || opts.paths.iter().any(|p| under_prefix(op.path, p)))
        };
        let all = opts.operations.is_empty() && !filtering;
        let selected: Vec<(usize, bool)> = self
            .ops
            .iter()
            .enumerate()
            .filter(|(i, op)| all || explicit[*i] || (filtering && by_filter(op)))
            .map(|(i, _)| (i, explicit[i]))
            .collect();
        if selected.is_empty() {
            let msg = if self.ops.is_empty() {
                self.no_operations()
            } else {
                let mut what = Vec::new();
                if !opts.tags.is_empty() {
                    what.push(format!("tags {}", opts.tags.join(", ")));
                }
                if !opts.paths.is_empty() {
                    what.push(format!("paths {}", opts.paths.join(", ")));
                }
                format!(
                    "no operation matches the selection ({}) among the document's {}",
                    what.join("; "),
                    if self.ops.len() == 1 {
                        "1 operation".to_string()
                    } else {
                        format!("{} operations", self.ops.len())
                    }
                )
            };
            return Err(Error::shape("paths", msg));
        }
        Ok(selected)
    }

    /// Why a document without operations has none.
    fn no_operations(&self) -> String {
        let why = match self.obj.field("paths") {
            Some(Value::Object(p)) if p.keys().any(|k| !k.starts_with("x-")) => {
                format!(
                    "none of its {} paths has a {} operation",
                    p.keys().filter(|k| !k.starts_with("x-")).count(),
                    METHODS.join(", ")
                )
            }
            Some(Value::Object(_)) => "`paths` is empty".to_string(),
            _ => "it has no `paths`".to_string(),
        };
        let webhooks = ["webhooks", "x-webhooks"]
            .iter()
            .find_map(|k| Some((*k, self.obj.get(k)?.as_object().filter(|w| !w.is_empty())?.len())));
        match webhooks {
            Some((key, n)) => format!(
                "the OpenAPI document has no operations: {why}; its `{key}` ({n}) describe requests the API sends, not operations a tool can call"
            ),
            None => format!("the OpenAPI document has no operations: {why}"),
        }
    }

    /// ` (did you mean X?)` for a name close to `wanted`, or nothing.
    fn suggest(&self, wanted: &str) -> String {
        let w = wanted.to_ascii_lowercase();
        let close = self.ops.iter().find(|op| {
            let n = op.name.to_ascii_lowercase();
            n.contains(&w) || w.contains(&n) || op.operation_id().is_some_and(|id| id.eq_ignore_ascii_case(wanted))
        });
        close.map(|op| format!(" (did you mean {}?)", op.name)).unwrap_or_default()
    }
}

fn version(obj: &Map<String, Value>) -> Result<Version> {
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        other => kind_of(other).to_string(),
    };
    if let Some(v) = obj.field("openapi") {
        let s = text(v);
        return if s.starts_with("3.0") || s == "3" {
            Ok(Version::V30)
        } else if s.starts_with("3.") {
            Ok(Version::V31)
        } else {
            Err(Error::at(
                ErrorKind::UnsupportedFormat,
                "openapi",
                format!("OpenAPI version \"{s}\" is not supported: toolspec reads OpenAPI 3.0, 3.1 and Swagger 2.0"),
            ))
        };
    }
    let Some(s) = obj.field("swagger").map(text) else {
        return Err(Error::shape("", "not an OpenAPI document: it has no `openapi` or `swagger` key"));
    };
    if s == "2.0" || s == "2" {
        Ok(Version::Swagger2)
    } else {
        Err(Error::at(
            ErrorKind::UnsupportedFormat,
            "swagger",
            format!("Swagger version \"{s}\" is not supported: toolspec reads Swagger 2.0 and OpenAPI 3.0 and 3.1"),
        ))
    }
}

/// Whether `wanted` names `op`: its operationId, its tool name, or
/// `METHOD /path`.
fn names_operation(op: &Op, wanted: &str) -> bool {
    let wanted = wanted.trim();
    if op.name == wanted || op.operation_id() == Some(wanted) {
        return true;
    }
    match wanted.split_once(char::is_whitespace) {
        Some((m, p)) => m.eq_ignore_ascii_case(op.method) && p.trim() == op.path,
        None => false,
    }
}

/// `path` is `prefix` or below it, by whole segments.
fn under_prefix(path: &str, prefix: &str) -> bool {
    match path.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/'),
        None => false,
    }
}

/// Whether `key` is a key of some object in `v`.
fn has_key(v: &Value, key: &str, depth: usize) -> bool {
    if depth > 256 {
        return false;
    }
    match v {
        Value::Object(o) => o.contains_key(key) || o.values().any(|x| has_key(x, key, depth + 1)),
        Value::Array(a) => a.iter().any(|x| has_key(x, key, depth + 1)),
        _ => false,
    }
}

/// A tool name from any text: `^[a-zA-Z0-9_-]{1,64}$`, other characters
/// replaced by `_`, runs of `_` collapsed, none at the ends.
pub fn sanitize_name(s: &str) -> String {
    sanitize(s, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-', "operation", 64)
}

/// An argument name (property key) providers accept everywhere:
/// `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn sanitize_arg_name(s: &str) -> String {
    sanitize(s, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.', "arg", 64)
}

fn sanitize(s: &str, ok: impl Fn(char) -> bool, empty: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for c in s.chars() {
        let c = if ok(c) { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str(empty);
    }
    // ASCII only by now: bytes are characters.
    out.truncate(max);
    out
}

/// `base`, or `base_2`, `base_3`... (shortened to stay within `max`),
/// whichever is not in `taken`; the result is added to `taken`.
pub(crate) fn unique_name(base: &str, taken: &mut HashSet<String>, max: usize) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let keep = base.len().min(max - suffix.len());
        name = format!("{}{suffix}", &base[..keep]);
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// A `$ref` resolved inside the document: used for parameters, request
/// bodies, responses and path items (schemas go through the Normalizer).
pub(crate) fn resolve_ref<'v>(root: &'v Value, r: &str) -> Option<&'v Value> {
    r.strip_prefix('#').and_then(|p| resolve_pointer(root, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised() {
        assert_eq!(sanitize_name("get-/oauth/v1/access-tokens/{token}_get"), "get-_oauth_v1_access-tokens_token_get");
        assert_eq!(sanitize_name("repos/list-for-org"), "repos_list-for-org");
        assert_eq!(sanitize_name("///"), "operation");
        assert_eq!(sanitize_name(&"a".repeat(80)).len(), 64);
        assert_eq!(sanitize_arg_name("filter[name]"), "filter_name");
        assert_eq!(sanitize_arg_name("$top"), "top");
        assert_eq!(sanitize_arg_name("X-Request-Id"), "X-Request-Id");
        assert_eq!(sanitize_arg_name("a.b"), "a.b");
    }

    #[test]
    fn unique_names_get_suffixes_within_the_limit() {
        let mut taken = HashSet::new();
        assert_eq!(unique_name("a", &mut taken, 64), "a");
        assert_eq!(unique_name("a", &mut taken, 64), "a_2");
        assert_eq!(unique_name("a", &mut taken, 64), "a_3");
        let long = "b".repeat(64);
        assert_eq!(unique_name(&long, &mut taken, 64), long);
        let second = unique_name(&long, &mut taken, 64);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("_2"));
    }

    #[test]
    fn prefixes_match_whole_segments() {
        assert!(under_prefix("/pets", "/pets"));
        assert!(under_prefix("/pets/{id}", "/pets"));
        assert!(under_prefix("/pets/{id}", "/pets/"));
        assert!(!under_prefix("/petstore", "/pets"));
        assert!(under_prefix("/anything", "/"));
    }

    #[test]
    fn options_from_json() {
        let o = OpenApiOptions::from_json(r#"{"tags":["a"],"server":"http://x"}"#).unwrap();
        assert_eq!(o.tags, vec!["a".to_string()]);
        assert_eq!(o.server.as_deref(), Some("http://x"));
        assert!(OpenApiOptions::from_json(r#"{"tag":["a"]}"#).is_err());
        assert_eq!(OpenApiOptions::from_json("{}").unwrap(), OpenApiOptions::default());
    }
}
