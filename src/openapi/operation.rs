//! One operation -> one tool, with its executor metadata.
//!
//! The tool's arguments are the operation's path, query, header and
//! cookie parameters, then the top-level properties of its request body,
//! JSON or a form (`application/x-www-form-urlencoded`, or Swagger 2's
//! `formData` fields); a body that is not an object with properties is one
//! argument, `body`.  Argument names are made safe for every provider
//! (`^[a-zA-Z0-9_.-]{1,64}$`) and unique: a body property named like a
//! parameter becomes `body_NAME`.
//!
//! `extra["executor"]` (the plist key `:executor`) says how to call the
//! operation:
//!
//! ```text
//! {"type": "openapi",
//!  "server": base URL, no trailing slash ("" when the document has none),
//!  "method": "GET", "path": "/pets/{petId}",
//!  "parameters": [{"name": "petId", "in": "path", "arg": "petId",
//!                  "style"?: "simple", "explode"?: false}, ...],
//!                 ("arg" is null for a parameter given by a bootstrap value)
//!  "body": null | {"contentType": "application/json",
//!                  "args": [[ARG, PROPERTY], ...], "whole": ARG | null,
//!                  "encoding"?: {PROPERTY: {"style"?: "deepObject",
//!                                           "explode"?: true}}},
//!                 ("encoding", for a form only: how a field is written,
//!                  as a query parameter of that style would be)
//!  "auth": x-plugin-auth | null,
//!  "filter": Jinja template | null, "outputModules": [template, ...],
//!  "bootstrap": bool, "bootstrapValues": {PARAMETER: template},
//!  "lookup": [{"field": "/items/*/provider_id", "operation": TOOL,
//!              "parameter": "$request.query.provider_id"}],
//!  "title": info.title | null, "operationId": ... | null,
//!  "security": [{"id": SCHEME, ...the security scheme object}]}
//! ```

use std::collections::HashSet;

use super::describe::{self, arg_description, truncate, MAX_ARG_DESCRIPTION};
use super::fixup::tidy;
use super::{resolve_ref, sanitize_arg_name, unique_name, Doc, Op, OpenApiOptions, Version};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{index, join, Arg, Code, Field, Path, Problem, Schema, Tool};
use crate::schema::{kind_of, Normalizer};
use crate::value::{Map, Value};

/// Follow `$ref`s (of parameters, request bodies, responses, path items)
/// inside the document, each resolved by `resolve` ([`Doc::deref`]).
pub(crate) fn deref<'v>(v: &'v Value, path: &str, resolve: impl Fn(&'v str) -> Option<&'v Value>) -> Result<&'v Value> {
    let mut cur = v;
    for _ in 0..32 {
        let Some(r) = cur.as_object().and_then(|o| o.field("$ref")) else { return Ok(cur) };
        // The path of the `$ref`, written out for an error only.
        let rp = || join(path, "$ref");
        let r = r.as_str().ok_or_else(|| Error::shape(&rp(), "`$ref` must be a string"))?;
        if !r.starts_with('#') {
            return Err(Error::at(
                ErrorKind::Ref,
                &rp(),
                format!(
                    "external reference \"{r}\" is not supported: only references inside the document can be resolved"
                ),
            ));
        }
        cur = resolve(r)
            .ok_or_else(|| Error::at(ErrorKind::Ref, &rp(), format!("\"{r}\" points to nothing in this document")))?;
    }
    Err(Error::at(ErrorKind::Ref, &join(path, "$ref"), "a cycle of $refs (or a chain of more than 32)"))
}

/// Parameter styles OpenAPI 3 allows, by location; the first is the default.
const STYLES: &[(&str, &[&str])] = &[
    ("path", &["simple", "label", "matrix"]),
    ("query", &["form", "spaceDelimited", "pipeDelimited", "deepObject"]),
    ("header", &["simple"]),
    ("cookie", &["form"]),
    ("form", &["form", "spaceDelimited", "pipeDelimited", "deepObject"]),
];

/// The media type of a form body.
const FORM: &str = "application/x-www-form-urlencoded";

/// The media type of a form of parts.
const MULTIPART: &str = "multipart/form-data";

/// The bodies toolspec sends, for messages.
const SENT: &str = "JSON, form (application/x-www-form-urlencoded and multipart/form-data, files aside) and text";

/// A form field of Swagger 2 (`in: formData`): its name, its argument,
/// and its style and explode.
type FormField = (String, String, Option<String>, Option<bool>);

/// Keys of a Swagger 2 non-body parameter that make its schema.
const SWAGGER_SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "x-nullable",
];

/// Build the tool of `op`; its warnings are returned beside it.
pub(super) fn build<'a>(
    doc: &Doc<'a>,
    op: &Op<'a>,
    opts: &OpenApiOptions,
    norm: &mut Normalizer<'a>,
) -> Result<(Tool, Vec<Problem>)> {
    let mut b = Builder {
        doc,
        op,
        norm,
        warnings: Vec::new(),
        args: Vec::new(),
        taken: HashSet::new(),
        params: Vec::new(),
        arg_of: Vec::new(),
        bootstrap: Map::new(),
    };
    let (params, body_param, form) = b.collect_params()?;
    for p in &params {
        b.param(p.0, &p.1, None)?;
    }
    b.undeclared_path_params();
    let body = match doc.version {
        Version::Swagger2 => b.swagger_body(body_param, &form)?,
        _ => b.request_body()?,
    };
    let fallback = format!("{} {}", op.method.to_ascii_uppercase(), op.path);
    let arg_of = |k: &str| b.arg_of.iter().find(|(n, _)| n == k).map_or_else(|| k.to_string(), |(_, a)| a.clone());
    let description = describe::tool_description(op.op, &fallback, &op.name, &arg_of);
    let executor = b.executor(opts, body);
    let mut extra = Schema::new();
    extra.insert("executor".into(), Value::Object(executor));
    let tool = Tool { name: op.name.clone(), description: Some(description), args: b.args, extra, ..Tool::default() };
    Ok((tool, b.warnings))
}

struct Builder<'d, 'a, 'n> {
    doc: &'d Doc<'a>,
    op: &'d Op<'a>,
    norm: &'n mut Normalizer<'a>,
    warnings: Vec<Problem>,
    args: Vec<Arg>,
    taken: HashSet<String>,
    /// The executor's `parameters`.
    params: Vec<Value>,
    /// Parameter or property name -> argument name.
    arg_of: Vec<(String, String)>,
    bootstrap: Map<String, Value>,
}

type Param<'a> = (&'a Map<String, Value>, String);

impl<'a> Builder<'_, 'a, '_> {
    fn warn(&mut self, code: Code, path: impl Into<Path>, message: impl Into<String>) {
        self.warnings.push(Problem::warning(code, path, message));
    }

    /// The parameters of the path item and the operation (the operation's
    /// win by name and location), Swagger's body parameter, and Swagger's
    /// form fields.
    #[allow(clippy::type_complexity)]
    fn collect_params(&mut self) -> Result<(Vec<Param<'a>>, Option<Param<'a>>, Vec<Param<'a>>)> {
        let mut list: Vec<Param<'a>> = Vec::new();
        // The `name` and `in` of each parameter of `list`, looked up once.
        let mut keys: Vec<(Option<&Value>, Option<&Value>)> = Vec::new();
        let mut body = None;
        let mut form = Vec::new();
        for (holder, holder_path) in [(self.op.item, &self.op.item_path), (self.op.op, &self.op.json_path)] {
            let Some(ps) = holder.field("parameters") else { continue };
            let pp = join(holder_path, "parameters");
            let ps = match ps {
                Value::Array(ps) => ps,
                Value::Null => continue,
                other => {
                    return Err(Error::shape(&pp, format!("`parameters` must be an array, found {}", kind_of(other))))
                }
            };
            for (i, p) in ps.iter().enumerate() {
                let path = index(&pp, i);
                let p = match self.doc.deref(p, &path)? {
                    Value::Object(p) => p,
                    other => {
                        return Err(Error::shape(
                            &path,
                            format!("a parameter must be an object, found {}", kind_of(other)),
                        ))
                    }
                };
                let key = (p.field("name"), p.field("in"));
                match key.1.and_then(Value::as_str) {
                    Some("body") => {
                        body = Some((p, path));
                        continue;
                    }
                    Some("formData") => {
                        form.retain(|(q, _): &Param| q.field("name") != key.0);
                        form.push((p, path));
                        continue;
                    }
                    _ => {}
                }
                match keys.iter().position(|k| *k == key) {
                    Some(at) => list[at] = (p, path),
                    None => {
                        list.push((p, path));
                        keys.push(key);
                    }
                }
            }
        }
        Ok((list, body, form))
    }

    /// A new argument name for `name` (a parameter's or property's), made
    /// safe and unique; `alt()` is tried before numbering on a clash.
    fn new_arg_name(&mut self, name: &str, alt: impl FnOnce() -> String) -> String {
        let base = sanitize_arg_name(name);
        if self.taken.contains(&base) {
            let alt = sanitize_arg_name(&alt());
            unique_name(&alt, &mut self.taken, 64)
        } else {
            unique_name(&base, &mut self.taken, 64)
        }
    }

    /// The argument of parameter `p`, and its entry in the executor's
    /// `parameters`; a Swagger 2 form field's goes to `form` instead.
    fn param(&mut self, p: &'a Map<String, Value>, path: &str, form: Option<&mut Vec<FormField>>) -> Result<()> {
        let name = match p.field("name") {
            Some(Value::String(n)) if !n.is_empty() => n.as_str(),
            _ => return Err(Error::shape(path, "a parameter needs a `name` (a non-empty string)")),
        };
        let loc = match p.field("in").and_then(Value::as_str) {
            Some("formData") if form.is_some() => "form",
            Some(l @ ("path" | "query" | "header" | "cookie")) => l,
            Some(other) => {
                self.warn(
                    Code::Unsupported,
                    path,
                    format!("parameters in \"{other}\" are not supported: \"{name}\" skipped"),
                );
                return Ok(());
            }
            None => {
                return Err(Error::shape(
                    path,
                    format!("parameter \"{name}\" needs `in` (path, query, header or cookie)"),
                ))
            }
        };
        if loc == "header" && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
        {
            self.warn(
                Code::Skipped,
                path,
                format!("header \"{name}\" is set by the HTTP client, not by the model: skipped"),
            );
            return Ok(());
        }
        let (style, explode) = match self.doc.version {
            Version::Swagger2 => (None, None), // settled below, from the schema's type
            _ => self.style(p, loc, path),
        };
        if let (Some(value), None) = (p.field("x-bootstrap-value"), &form) {
            self.bootstrap.insert(name.to_string(), value.clone());
            self.params.push(param_entry(name, loc, None, style, explode));
            return Ok(());
        }
        let owned;
        let (raw, schema_path): (&Value, String) = match self.doc.version {
            Version::Swagger2 => {
                if p.field("type").and_then(Value::as_str) == Some("file") {
                    // A required file makes the form unsendable (`swagger_body`).
                    self.warn(Code::Unsupported, path, format!("file parameter \"{name}\" is not supported: skipped"));
                    return Ok(());
                }
                owned = Value::Object(
                    p.iter()
                        .filter(|(k, _)| SWAGGER_SCHEMA_KEYS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                );
                (&owned, path.to_string())
            }
            _ => match (p.field("schema"), p.field("content")) {
                (Some(s), _) => (s, join(path, "schema")),
                (None, Some(Value::Object(content))) if !content.is_empty() => {
                    let (mt, media) = content.iter().next().expect("not empty");
                    let cp = join(&join(path, "content"), mt);
                    self.warn(
                        Code::Unsupported,
                        &cp,
                        format!("parameter \"{name}\" is described by `content` ({mt}): its value is sent as given"),
                    );
                    match media.field("schema") {
                        Some(s) => (s, join(&cp, "schema")),
                        None => {
                            owned = crate::json!({"type": "string"});
                            (&owned, cp)
                        }
                    }
                }
                _ => {
                    self.warn(Code::Assumed, path, format!("parameter \"{name}\" has no schema: taken to be a string"));
                    owned = crate::json!({"type": "string"});
                    (&owned, path.to_string())
                }
            },
        };
        let mut schema = self.norm.node(raw, &schema_path, 0)?;
        tidy(&mut schema, &schema_path, &mut self.warnings);
        let (style, explode) = match self.doc.version {
            Version::Swagger2 => self.collection_format(p, loc, &schema, path),
            _ => (style, explode),
        };
        let own = p.field("description").and_then(Value::as_str).map(String::from);
        let base = own.or_else(|| schema.field("description").and_then(Value::as_str).map(String::from));
        let helpers = describe::strings(p.field("x-helpers"));
        let dependent = p.field("x-dependent").map(|d| self.dependent_note(d, &join(path, "x-dependent")));
        let deprecated = p.field("deprecated") == Some(&Value::Bool(true));
        let base = base.unwrap_or_else(|| match loc {
            "form" => format!("The {name} field of the form."),
            _ => format!("The {name} {loc} parameter."),
        });
        if let Some(d) = arg_description(Some(&base), deprecated, &helpers, dependent.as_deref()) {
            set_description(&mut schema, d);
        }
        let required = loc == "path" || p.field("required") == Some(&Value::Bool(true));
        let arg = self.new_arg_name(name, || format!("{loc}_{name}"));
        match form {
            Some(form) => form.push((name.to_string(), arg.clone(), style, explode)),
            None => self.params.push(param_entry(name, loc, Some(&arg), style, explode)),
        }
        self.arg_of.push((name.to_string(), arg.clone()));
        self.args.push(Arg { name: arg, optional: !required, schema });
        Ok(())
    }

    /// OpenAPI 3 `style` and `explode`, as the document gives them.
    fn style(&mut self, p: &Map<String, Value>, loc: &str, path: &str) -> (Option<String>, Option<bool>) {
        let allowed = STYLES.iter().find(|(l, _)| *l == loc).map_or(&[][..], |(_, s)| *s);
        let style = match p.field("style") {
            None => None,
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => Some(s.clone()),
            Some(other) => {
                let shown = other.as_str().map_or_else(|| other.to_string(), String::from);
                let what = params_in(loc);
                self.warn(
                    Code::Unsupported,
                    join(path, "style"),
                    format!("style \"{shown}\" is not supported for {what}: the default ({}) is used", allowed[0]),
                );
                None
            }
        };
        let explode = match p.field("explode") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.warn(
                    Code::Ignored,
                    join(path, "explode"),
                    format!("`explode` must be a boolean, found {}: ignored", kind_of(other)),
                );
                None
            }
        };
        (style, explode)
    }

    /// Swagger 2's `collectionFormat` of an array parameter, as an
    /// OpenAPI 3 style (Swagger's default, csv, is not OpenAPI 3's).
    fn collection_format(
        &mut self,
        p: &Map<String, Value>,
        loc: &str,
        schema: &Schema,
        path: &str,
    ) -> (Option<String>, Option<bool>) {
        if schema.field("type").and_then(Value::as_str) != Some("array") {
            return (None, None);
        }
        let csv = || {
            (Some(if matches!(loc, "query" | "cookie" | "form") { "form" } else { "simple" }.to_string()), Some(false))
        };
        match (p.field("collectionFormat").and_then(Value::as_str).unwrap_or("csv"), loc) {
            ("csv", _) => csv(),
            ("multi", "query" | "form") => (Some("form".into()), Some(true)),
            ("ssv", "query" | "form") => (Some("spaceDelimited".into()), Some(false)),
            ("pipes", "query" | "form") => (Some("pipeDelimited".into()), Some(false)),
            (other, _) => {
                let what = params_in(loc);
                self.warn(
                    Code::Unsupported,
                    join(path, "collectionFormat"),
                    format!("collectionFormat \"{other}\" is not supported for {what}: csv is used"),
                );
                csv()
            }
        }
    }

    /// Where a dependent parameter's value comes from, for its description.
    fn dependent_note(&mut self, d: &Value, path: &str) -> String {
        let p = d.field("path").and_then(Value::as_str).unwrap_or("");
        let m = d.field("method").and_then(Value::as_str).unwrap_or("get");
        match self.doc.find(p, m) {
            Some(op) => format!("Get this value with the tool {}.", op.name),
            None => {
                self.warn(
                    Code::Reference,
                    path,
                    format!("x-dependent names no operation of this document ({} {p})", m.to_ascii_uppercase()),
                );
                format!("Get this value from {} {p}.", m.to_ascii_uppercase())
            }
        }
    }

    /// Path template variables no parameter declares become string arguments.
    fn undeclared_path_params(&mut self) {
        let mut rest = self.op.path;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            let name = &rest[open + 1..open + close];
            rest = &rest[open + close + 1..];
            let declared = self.params.iter().any(|p| {
                p.field("in").and_then(Value::as_str) == Some("path")
                    && p.field("name").and_then(Value::as_str) == Some(name)
            });
            if name.is_empty() || declared {
                continue;
            }
            self.warn(
                Code::Assumed,
                join(&self.op.json_path, "parameters"),
                format!("path parameter \"{name}\" is not declared: added as a required string argument"),
            );
            let arg = self.new_arg_name(name, || format!("path_{name}"));
            let mut schema = Schema::new();
            schema.insert("type".into(), Value::from("string"));
            schema
                .insert("description".into(), Value::from(format!("The {{{name}}} part of the path {}", self.op.path)));
            self.params.push(param_entry(name, "path", Some(&arg), None, None));
            self.arg_of.push((name.to_string(), arg.clone()));
            self.args.push(Arg { name: arg, optional: false, schema });
        }
    }

    /// OpenAPI 3's `requestBody`.
    fn request_body(&mut self) -> Result<Option<Value>> {
        let Some(rb) = self.op.op.field("requestBody") else { return Ok(None) };
        let path = join(&self.op.json_path, "requestBody");
        let rb = match self.doc.deref(rb, &path)? {
            Value::Object(rb) => rb,
            other => {
                return Err(Error::shape(&path, format!("`requestBody` must be an object, found {}", kind_of(other))))
            }
        };
        let required = rb.field("required") == Some(&Value::Bool(true));
        let content = match rb.field("content") {
            Some(Value::Object(c)) if !c.is_empty() => c,
            _ => {
                self.warn(Code::Ignored, &path, "a request body without `content`: the tool sends no body");
                return Ok(None);
            }
        };
        let cp = join(&path, "content");
        let desc = rb.field("description").and_then(Value::as_str);
        if let Some((mt, media)) = pick_json(content.iter().map(|(k, v)| (k.as_str(), v))) {
            let ct = if mt.contains('*') { "application/json" } else { mt };
            return self.body(media.field("schema"), &join(&join(&cp, mt), "schema"), required, ct, desc).map(Some);
        }
        // A form: urlencoded, else of parts.
        let form = content.iter().find(|(t, _)| is_form(t)).or_else(|| content.iter().find(|(t, _)| is_multipart(t)));
        let Some((mt, media)) = form else {
            if let Some((mt, media)) = pick_text(content.iter().map(|(t, m)| (t.as_str(), m))) {
                let sp = join(&join(&cp, mt), "schema");
                return self.text_body(media.field("schema"), &sp, required, mt, desc).map(Some);
            }
            return self.unsendable(required, &cp, &media_types(content.keys().map(String::as_str)));
        };
        let mp = join(&cp, mt);
        let sp = join(&mp, "schema");
        let mut body = if is_multipart(mt) {
            self.multipart_body(media.field("schema"), &sp, required, mt, desc)?
        } else {
            Some(self.body(media.field("schema"), &sp, required, mt, desc)?)
        };
        // OpenAPI 3.1 lets a multipart field have a style too (Stripe
        // writes nested fields as deep objects).
        let encoding = self.form_encoding(media.field("encoding"), &join(&mp, "encoding"));
        if let (Some(Value::Object(b)), false) = (&mut body, encoding.is_empty()) {
            b.insert("encoding".into(), Value::Object(encoding));
        }
        Ok(body)
    }

    /// The style and explode of each field of a form, from its media
    /// type's `encoding` (fields without either are left out).
    fn form_encoding(&mut self, encoding: Option<&Value>, path: &str) -> Map<String, Value> {
        let mut out = Map::new();
        let fields = match encoding {
            None => return out,
            Some(Value::Object(fields)) => fields,
            Some(other) => {
                self.warn(
                    Code::Ignored,
                    path,
                    format!("`encoding` must be an object, found {}: ignored", kind_of(other)),
                );
                return out;
            }
        };
        for (field, e) in fields {
            let Value::Object(e) = e else {
                self.warn(
                    Code::Ignored,
                    join(path, field),
                    format!("an encoding must be an object, found {}: ignored", kind_of(e)),
                );
                continue;
            };
            let (style, explode) = self.style(e, "form", &join(path, field));
            if let Some(how) = field_encoding(style, explode) {
                out.insert(field.clone(), how);
            }
        }
        out
    }

    /// Swagger 2's body parameter, or its form fields.
    fn swagger_body(&mut self, body: Option<Param<'a>>, form: &[Param<'a>]) -> Result<Option<Value>> {
        let consumes = self.op.op.field("consumes").or_else(|| self.doc.obj.field("consumes"));
        let consumes: Vec<&str> =
            consumes.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if !form.is_empty() {
            // Form fields are sent as a form when it may be one, and there
            // is no body parameter (Swagger allows only one of the two).
            let ct = if consumes.is_empty() {
                Some(FORM)
            } else {
                consumes
                    .iter()
                    .copied()
                    .find(|c| is_form(c))
                    .or_else(|| consumes.iter().copied().find(|c| is_multipart(c)))
            };
            // A file is sent by no form toolspec writes: a form that needs
            // one cannot be sent, one that may have one is sent without.
            let file = form.iter().find(|(p, _)| is_file_field(p) && p.field("required") == Some(&Value::Bool(true)));
            if let (Some(ct), None, None) = (ct, file, &body) {
                return self.swagger_form(form, ct).map(Some);
            }
            let required = form.iter().any(|(p, _)| p.field("required") == Some(&Value::Bool(true)));
            let what = if let Some((p, _)) = file {
                let name = p.field("name").and_then(Value::as_str).unwrap_or("");
                format!("multipart/form-data (it has the file field \"{name}\")")
            } else if ct.is_none() {
                media_types(consumes.iter().copied())
            } else {
                "form fields (formData) beside a body parameter".to_string()
            };
            let path = file.unwrap_or(&form[0]).1.clone();
            self.unsendable(required, &path, &what)?;
        }
        let Some((p, path)) = body else { return Ok(None) };
        let required = p.field("required") == Some(&Value::Bool(true));
        let desc = p.field("description").and_then(Value::as_str);
        let sp = join(&path, "schema");
        let ct = if consumes.is_empty() {
            "application/json"
        } else {
            match pick_json(consumes.iter().map(|c| (*c, &Value::Null))) {
                Some((c, _)) if !c.contains('*') => c,
                Some(_) => "application/json",
                None => {
                    return match pick_text(consumes.iter().map(|c| (*c, ()))) {
                        Some((c, ())) => self.text_body(p.field("schema"), &sp, required, c, desc).map(Some),
                        None => self.unsendable(required, &path, &media_types(consumes.iter().copied())),
                    };
                }
            }
        };
        self.body(p.field("schema"), &sp, required, ct, desc).map(Some)
    }

    /// Swagger 2's form fields, sent as a form of type `ct`.
    fn swagger_form(&mut self, form: &[Param<'a>], ct: &str) -> Result<Value> {
        let mut fields = Vec::with_capacity(form.len());
        for (p, path) in form {
            self.param(p, path, Some(&mut fields))?;
        }
        let mut args = Vec::with_capacity(fields.len());
        let mut encoding = Map::new();
        for (name, arg, style, explode) in fields {
            if let Some(how) = field_encoding(style, explode) {
                encoding.insert(name.clone(), how);
            }
            args.push(Value::Array(vec![Value::from(arg), Value::from(name)]));
        }
        let mut body = Map::with_capacity(4);
        body.insert("contentType".into(), Value::from(ct));
        body.insert("args".into(), Value::Array(args));
        body.insert("whole".into(), Value::Null);
        if !encoding.is_empty() {
            body.insert("encoding".into(), Value::Object(encoding));
        }
        Ok(Value::Object(body))
    }

    /// A body toolspec cannot send: the operation is skipped when it is
    /// required, else the tool sends none.
    fn unsendable(&mut self, required: bool, path: &str, types: &str) -> Result<Option<Value>> {
        if required {
            return Err(Error::shape(
                path,
                format!("the request body can only be {types}, and toolspec sends {SENT} bodies only"),
            ));
        }
        self.warn(
            Code::Unsupported,
            path,
            format!("request body ({types}) not supported ({SENT} only): the tool sends no body"),
        );
        Ok(None)
    }

    /// The schema of a body, normalised and tidied; an object when there
    /// is none.
    fn body_schema(&mut self, raw: Option<&'a Value>, path: &str) -> Result<Schema> {
        let mut schema = match raw {
            Some(r) => self.norm.node(r, path, 0)?,
            None => {
                let mut s = Schema::new();
                s.insert("type".into(), Value::from("object"));
                s
            }
        };
        tidy(&mut schema, path, &mut self.warnings);
        Ok(schema)
    }

    /// The arguments of a body (JSON, or a form of type `ct`); returns the
    /// executor's `body`.
    fn body(
        &mut self,
        raw: Option<&'a Value>,
        path: &str,
        required: bool,
        ct: &str,
        desc: Option<&str>,
    ) -> Result<Value> {
        let schema = self.body_schema(raw, path)?;
        Ok(self.body_of(schema, required, ct, desc))
    }

    /// A `multipart/form-data` body (`ct`): its fields are arguments, as a
    /// form's are, but for files, which toolspec does not send.  A file
    /// field that is required makes the body one toolspec cannot send; an
    /// optional one is left out.
    fn multipart_body(
        &mut self,
        raw: Option<&'a Value>,
        path: &str,
        required: bool,
        ct: &str,
        desc: Option<&str>,
    ) -> Result<Option<Value>> {
        let mut schema = self.body_schema(raw, path)?;
        if is_file(&schema) {
            return self.unsendable(required, path, &format!("{ct} holding one file"));
        }
        let needed: Vec<String> = match schema.field("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).map(String::from).collect(),
            _ => Vec::new(),
        };
        let files: Vec<String> = match schema.field("properties") {
            Some(Value::Object(props)) => props.iter().filter(|(_, p)| is_file(*p)).map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        };
        if let Some(f) = files.iter().find(|f| needed.contains(f)) {
            return self.unsendable(
                required,
                &join(&join(path, "properties"), f),
                &format!("{ct} with the file field \"{f}\""),
            );
        }
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            for f in &files {
                props.shift_remove(f);
            }
        }
        for f in &files {
            let at = join(&join(path, "properties"), f);
            self.warn(
                Code::Unsupported,
                &at,
                format!("the file field \"{f}\" cannot be sent (toolspec sends no files): left out"),
            );
        }
        Ok(Some(self.body_of(schema, required, ct, desc)))
    }

    /// A text body (`ct`, such as `text/plain`): one string argument, sent
    /// as it is.
    fn text_body(
        &mut self,
        raw: Option<&'a Value>,
        path: &str,
        required: bool,
        ct: &str,
        desc: Option<&str>,
    ) -> Result<Value> {
        let mut schema = match raw {
            Some(_) => self.body_schema(raw, path)?,
            None => Schema::new(),
        };
        if schema.field("type").and_then(Value::as_str) != Some("string") {
            if raw.is_some() {
                self.warn(Code::Assumed, path, format!("a {ct} body is text: its argument is a string"));
            }
            let description = schema.shift_remove("description");
            schema = Schema::new();
            schema.insert("type".into(), Value::from("string"));
            if let Some(d) = description {
                schema.insert("description".into(), d);
            }
        }
        Ok(self.body_of(schema, required, ct, desc))
    }

    /// The executor's `body` for a body of `schema` sent as `ct`: an
    /// object with properties is an argument per property, anything else
    /// one argument.
    fn body_of(&mut self, mut schema: Schema, required: bool, ct: &str, desc: Option<&str>) -> Value {
        let mut body = Map::with_capacity(3);
        body.insert("contentType".into(), Value::from(ct));
        let flatten = schema.field("type").and_then(Value::as_str) == Some("object")
            && schema.field("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
        if flatten {
            let Some(Value::Object(props)) = schema.shift_remove("properties") else { unreachable!() };
            let required: std::collections::HashSet<&str> = match schema.field("required") {
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                _ => Default::default(),
            };
            let mut pairs = Vec::with_capacity(props.len());
            for (prop, s) in props {
                let arg = self.new_arg_name(&prop, || format!("body_{prop}"));
                let mut s = match s {
                    Value::Object(s) => s,
                    _ => Schema::new(),
                };
                match s.get_mut("description") {
                    Some(Value::String(d)) => {
                        if d.chars().count() > MAX_ARG_DESCRIPTION {
                            *d = truncate(d, MAX_ARG_DESCRIPTION);
                        }
                    }
                    _ => set_description(&mut s, format!("The {prop} field of the request body.")),
                }
                let optional = !required.contains(prop.as_str());
                pairs.push(Value::Array(vec![Value::from(arg.clone()), Value::from(prop.clone())]));
                self.arg_of.push((prop, arg.clone()));
                self.args.push(Arg { name: arg, optional, schema: s });
            }
            body.insert("args".into(), Value::Array(pairs));
            body.insert("whole".into(), Value::Null);
        } else {
            if !schema.field("description").is_some_and(Value::is_string) {
                set_description(&mut schema, truncate(desc.unwrap_or("The request body."), MAX_ARG_DESCRIPTION));
            }
            let arg = self.new_arg_name("body", || "request_body".to_string());
            body.insert("args".into(), Value::Array(Vec::new()));
            body.insert("whole".into(), Value::from(arg.clone()));
            self.args.push(Arg { name: arg, optional: !required, schema });
        }
        Value::Object(body)
    }

    /// The successful responses, best first: 200, other 2xx, 2XX, default.
    fn responses(&mut self) -> Vec<(&'a Map<String, Value>, String)> {
        let Some(Value::Object(rs)) = self.op.op.field("responses") else { return Vec::new() };
        let rp = join(&self.op.json_path, "responses");
        let rank = |code: &str| match code {
            "200" => Some(0),
            c if c.len() == 3 && c.starts_with('2') && c.bytes().all(|b| b.is_ascii_digit()) => Some(1),
            "2XX" | "2xx" => Some(2),
            "default" => Some(3),
            _ => None,
        };
        let mut found: Vec<(usize, &String, &'a Value)> =
            rs.iter().filter_map(|(code, r)| rank(code).map(|k| (k, code, r))).collect();
        found.sort_by_key(|(k, _, _)| *k);
        let mut out = Vec::with_capacity(found.len());
        for (_, code, r) in found {
            let path = join(&rp, code);
            match self.doc.deref(r, &path) {
                Ok(Value::Object(r)) => out.push((r, path)),
                Ok(_) => {}
                Err(e) => self.warn(Code::Ignored, &path, format!("response ignored: {}", e.message)),
            }
        }
        out
    }

    /// The executor metadata.
    fn executor(&mut self, opts: &OpenApiOptions, body: Option<Value>) -> Map<String, Value> {
        let responses = self.responses();
        let mut holders: Vec<(&'a Map<String, Value>, String)> = vec![(self.op.op, self.op.json_path.clone())];
        holders.extend(responses.iter().cloned());
        let filter = holders.iter().find_map(|(h, p)| h.field("x-filter").map(|f| (f, join(p, "x-filter"))));
        let filter = match filter {
            Some((f, p)) => self.template(f, &p).map_or(Value::Null, Value::from),
            None => Value::Null,
        };
        let modules =
            holders.iter().find_map(|(h, p)| h.field("x-output-modules").map(|m| (m, join(p, "x-output-modules"))));
        let mut output_modules = Vec::new();
        match modules {
            Some((Value::Array(list), p)) => {
                for (i, m) in list.iter().enumerate() {
                    if let Some(t) = self.template(m, &index(&p, i)) {
                        output_modules.push(Value::from(t));
                    }
                }
            }
            Some((m, p)) => output_modules.extend(self.template(m, &p).map(Value::from)),
            None => {}
        }
        let mut lookup = Vec::new();
        if self.doc.has_lookup {
            if let Some((schema, path)) = responses.iter().find_map(|(r, p)| self.response_schema(r, p)) {
                let mut stack = Vec::new();
                self.lookups(schema, &path, "", &mut lookup, &mut stack, 0);
            }
        }
        let op = self.op.op;
        // Sized once for its members.
        let mut e = Map::with_capacity(16);
        e.insert("type".into(), Value::from("openapi"));
        e.insert("server".into(), Value::from(self.server(opts)));
        e.insert("method".into(), Value::from(self.op.method.to_ascii_uppercase()));
        e.insert("path".into(), Value::from(self.op.path));
        e.insert("parameters".into(), Value::Array(std::mem::take(&mut self.params)));
        e.insert("body".into(), body.unwrap_or(Value::Null));
        e.insert("auth".into(), self.doc.obj.field("x-plugin-auth").cloned().unwrap_or(Value::Null));
        e.insert("filter".into(), filter);
        e.insert("outputModules".into(), Value::Array(output_modules));
        e.insert("bootstrap".into(), Value::Bool(op.field("x-bootstrap") == Some(&Value::Bool(true))));
        e.insert("bootstrapValues".into(), Value::Object(std::mem::take(&mut self.bootstrap)));
        e.insert("lookup".into(), Value::Array(lookup));
        e.insert("title".into(), self.doc.title().map_or(Value::Null, Value::from));
        e.insert("operationId".into(), self.op.operation_id().map_or(Value::Null, Value::from));
        e.insert("security".into(), Value::Array(self.security()));
        e
    }

    /// The base URL: the option, else the operation's, path item's or
    /// document's first server (variables at their defaults); Swagger 2:
    /// scheme://host + basePath.
    fn server(&mut self, opts: &OpenApiOptions) -> String {
        if let Some(s) = &opts.server {
            return s.trim_end_matches('/').to_string();
        }
        let obj = self.doc.obj;
        let url = match self.doc.version {
            Version::Swagger2 => {
                let base = obj.field("basePath").and_then(Value::as_str).unwrap_or("");
                match obj.field("host").and_then(Value::as_str) {
                    Some(host) => {
                        let schemes = self.op.op.field("schemes").or_else(|| obj.field("schemes"));
                        let schemes: Vec<&str> =
                            schemes.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
                        let scheme =
                            if schemes.is_empty() || schemes.contains(&"https") { "https" } else { schemes[0] };
                        format!("{scheme}://{host}{base}")
                    }
                    None => base.to_string(),
                }
            }
            _ => {
                let candidates = [(self.op.op, &self.op.json_path), (self.op.item, &self.op.item_path)];
                let found = candidates
                    .iter()
                    .find_map(|(h, p)| first_server(h).map(|s| (s, join(p, "servers[0]"))))
                    .or_else(|| first_server(obj).map(|s| (s, "servers[0]".to_string())));
                match found {
                    Some((server, path)) => self.server_url(server, &path),
                    None => String::new(),
                }
            }
        };
        url.trim_end_matches('/').to_string()
    }

    fn server_url(&mut self, server: &Map<String, Value>, path: &str) -> String {
        let url = server.field("url").and_then(Value::as_str).unwrap_or("");
        let vars = server.field("variables").and_then(Value::as_object);
        let mut out = String::with_capacity(url.len());
        let mut rest = url;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            let name = &rest[open + 1..open + close];
            out.push_str(&rest[..open]);
            match vars.and_then(|v| v.get(name)).and_then(|v| v.field("default")).and_then(Value::as_str) {
                Some(d) => out.push_str(d),
                None => {
                    self.warn(
                        Code::Unsupported,
                        join(path, "url"),
                        format!("server variable \"{name}\" has no default: left as is"),
                    );
                    out.push_str(&rest[open..=open + close]);
                }
            }
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// The Jinja template of an `x-filter` or output module: its
    /// `template_engine_with_jinja` processor's `metadata.template` (or
    /// the value itself, when it is a string).
    fn template(&mut self, flow: &Value, path: &str) -> Option<String> {
        if let Value::String(s) = flow {
            return Some(s.clone());
        }
        let processors = flow.field("processors").and_then(Value::as_array);
        let found = processors.into_iter().flatten().find_map(|p| {
            (p.field("processor_implementation_type").and_then(Value::as_str) == Some("template_engine_with_jinja"))
                .then(|| p.field("metadata").and_then(|m| m.field("template")).and_then(Value::as_str))
                .flatten()
        });
        if found.is_none() {
            self.warn(Code::Ignored, path, "no template_engine_with_jinja processor with a metadata.template: ignored");
        }
        found.map(String::from)
    }

    /// The JSON schema of a response, and its path.
    fn response_schema(&self, r: &'a Map<String, Value>, path: &str) -> Option<(&'a Value, String)> {
        match self.doc.version {
            Version::Swagger2 => r.field("schema").map(|s| (s, join(path, "schema"))),
            _ => {
                let content = r.field("content")?.as_object()?;
                let (mt, media) = pick_json(content.iter().map(|(k, v)| (k.as_str(), v)))?;
                media.field("schema").map(|s| (s, join(&join(&join(path, "content"), mt), "schema")))
            }
        }
    }

    /// Every `x-lookup` in a response schema, with the place of its field
    /// in the response (a JSON pointer; `*` stands for any array item).
    fn lookups(
        &mut self,
        schema: &'a Value,
        path: &str,
        field: &str,
        out: &mut Vec<Value>,
        stack: &mut Vec<&'a str>,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        let mut node = schema;
        let mut pushed = 0;
        while let Some(r) = node.field("$ref").and_then(Value::as_str) {
            if stack.contains(&r) || pushed > 32 {
                stack.truncate(stack.len() - pushed);
                return;
            }
            let Some(target) = resolve_ref(self.doc.root, r) else { break };
            stack.push(r);
            pushed += 1;
            node = target;
        }
        if let Some(l) = node.field("x-lookup") {
            let lp = join(path, "x-lookup");
            let p = l.field("path").and_then(Value::as_str).unwrap_or("");
            let m = l.field("method").and_then(Value::as_str).unwrap_or("get");
            match self.doc.find(p, m) {
                Some(op) => {
                    let mut entry = Map::new();
                    entry.insert("field".into(), Value::from(field));
                    entry.insert("operation".into(), Value::from(op.name.clone()));
                    entry.insert("parameter".into(), l.field("parameter").cloned().unwrap_or(Value::Null));
                    out.push(Value::Object(entry));
                }
                None => self.warn(
                    Code::Reference,
                    lp,
                    format!("x-lookup names no operation of this document ({} {p}): ignored", m.to_ascii_uppercase()),
                ),
            }
        }
        if let Some(Value::Object(props)) = node.field("properties") {
            for (k, s) in props {
                let f = format!("{field}/{}", k.replace('~', "~0").replace('/', "~1"));
                self.lookups(s, &join(&join(path, "properties"), k), &f, out, stack, depth + 1);
            }
        }
        if let Some(items @ Value::Object(_)) = node.field("items") {
            self.lookups(items, &join(path, "items"), &format!("{field}/*"), out, stack, depth + 1);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = node.get(key) {
                for (i, s) in alts.iter().enumerate() {
                    self.lookups(s, &index(&join(path, key), i), field, out, stack, depth + 1);
                }
            }
        }
        stack.truncate(stack.len() - pushed);
    }

    /// The security schemes of the operation's first security requirement
    /// (the operation's, else the document's), each with its name as `id`.
    fn security(&self) -> Vec<Value> {
        let obj = self.doc.obj;
        let reqs = self.op.op.field("security").or_else(|| obj.field("security")).and_then(Value::as_array);
        let Some(first) = reqs.and_then(|r| r.first()).and_then(Value::as_object) else { return Vec::new() };
        let schemes = match self.doc.version {
            Version::Swagger2 => obj.field("securityDefinitions"),
            _ => obj.field("components").and_then(|c| c.field("securitySchemes")),
        };
        first
            .keys()
            .filter_map(|id| {
                let scheme = self.doc.deref(schemes?.get(id)?, "").ok()?.as_object()?;
                let mut m = Map::new();
                m.insert("id".into(), Value::from(id.clone()));
                for (k, v) in scheme {
                    if k != "id" && !k.starts_with("x-") {
                        m.insert(k.clone(), v.clone());
                    }
                }
                Some(Value::Object(m))
            })
            .collect()
    }
}

/// One entry of the executor's `parameters`.
fn param_entry(name: &str, loc: &str, arg: Option<&str>, style: Option<String>, explode: Option<bool>) -> Value {
    let mut m = Map::with_capacity(5);
    m.insert("name".into(), Value::from(name));
    m.insert("in".into(), Value::from(loc));
    m.insert("arg".into(), arg.map_or(Value::Null, Value::from));
    if let Some(Value::Object(how)) = field_encoding(style, explode) {
        m.extend(how);
    }
    Value::Object(m)
}

/// How a parameter or form field is written: `{"style": ...,
/// "explode": ...}`, with what is given of the two; None for neither.
fn field_encoding(style: Option<String>, explode: Option<bool>) -> Option<Value> {
    let mut m = Map::new();
    if let Some(s) = style {
        m.insert("style".into(), Value::from(s));
    }
    if let Some(x) = explode {
        m.insert("explode".into(), Value::Bool(x));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// The parameters of `loc` ("query"...), or form fields, in a message.
fn params_in(loc: &str) -> String {
    if loc == "form" {
        "form fields".to_string()
    } else {
        format!("{loc} parameters")
    }
}

/// The first entry of a `servers` list, when there is one.
fn first_server(holder: &Map<String, Value>) -> Option<&Map<String, Value>> {
    holder.field("servers")?.as_array()?.first()?.as_object()
}

/// Media types for a message: `a, b`, an empty one shown as `""` (no
/// media type) so that the message still says what is there.
fn media_types<'m>(types: impl Iterator<Item = &'m str>) -> String {
    let shown: Vec<&str> = types.map(|t| if t.trim().is_empty() { "\"\" (an empty media type)" } else { t }).collect();
    shown.join(", ")
}

/// Media type `t` without its parameters, in lower case.
fn essence(t: &str) -> String {
    t.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether media type `t` is a form's ([`FORM`], with any parameters).
fn is_form(t: &str) -> bool {
    essence(t) == FORM
}

/// Whether media type `t` is [`MULTIPART`] (with any parameters).
fn is_multipart(t: &str) -> bool {
    essence(t) == MULTIPART
}

/// The text media type among `types` (`text/...`, JSON and XML aside):
/// `text/plain` first.
fn pick_text<'m, V>(types: impl Iterator<Item = (&'m str, V)> + Clone) -> Option<(&'m str, V)> {
    // Not JSON nor XML, which describe structures: text the model writes.
    let is_text = |t: &str| {
        let e = essence(t);
        e.starts_with("text/")
            && e.len() > "text/".len()
            && !["text/json", "text/xml"].contains(&e.as_str())
            && !e.ends_with("+xml")
    };
    let mut types = types;
    types.clone().find(|(t, _)| essence(t) == "text/plain").or_else(|| types.find(|(t, _)| is_text(t)))
}

/// Whether a (normalised) schema is a file's: a string of `format`
/// `binary`, or, as OpenAPI 3.1 writes it, with a `contentMediaType`
/// and no `contentEncoding` (base64 text is text); or an array of them.
fn is_file(schema: &impl Field) -> bool {
    if let Some(items) = schema.field("items") {
        return schema.field("type").and_then(Value::as_str) == Some("array") && is_file(items);
    }
    schema.field("type").and_then(Value::as_str).is_none_or(|t| t == "string")
        && (schema.field("format").and_then(Value::as_str) == Some("binary")
            || (schema.has("contentMediaType") && !schema.has("contentEncoding")))
}

/// Whether a Swagger 2 form field is a file (`type: file`).
fn is_file_field(p: &Map<String, Value>) -> bool {
    p.field("type").and_then(Value::as_str) == Some("file")
}

/// The JSON media type among `types`: `application/json`, else another
/// JSON type (`...+json`, `text/json`), else a wildcard.
fn pick_json<'m, V>(types: impl Iterator<Item = (&'m str, V)> + Clone) -> Option<(&'m str, V)> {
    let mut types = types;
    if let Some(found) = types.clone().find(|(t, _)| essence(t) == "application/json") {
        return Some(found);
    }
    if let Some(found) = types.clone().find(|(t, _)| {
        let e = essence(t);
        e.ends_with("+json") || e == "text/json" || e == "application/x-json"
    }) {
        return Some(found);
    }
    types.find(|(t, _)| matches!(essence(t).as_str(), "*/*" | "application/*"))
}

/// Set a schema's description, placed after `type`.
fn set_description(schema: &mut Schema, d: String) {
    if let Some(v) = schema.get_mut("description") {
        *v = Value::from(d);
    } else {
        let at = usize::from(schema.has("type"));
        schema.shift_insert(at, "description".into(), Value::from(d));
    }
}
