//! JSON Schema nodes: walking them, normalising schemas from the wild on
//! the way in, and finishing them on the way out.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{At, Code, Field, Problem, Schema};
use crate::value::{Map, Value};

/// How a keyword's value relates to schemas.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Slot {
    Map,
    Single,
    List,
    Data,
}

/// How keyword `key`'s value relates to schemas: a map from names to
/// schemas, one schema (for `items`, possibly an array of them), an array
/// of schemas, or data.  A `match` rather than a search of lists: every
/// key of every schema read or checked comes through here.
#[inline]
pub fn slot(key: &str) -> Slot {
    match key {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => Slot::Map,
        "items"
        | "additionalProperties"
        | "additionalItems"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties" => Slot::Single,
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => Slot::List,
        _ => Slot::Data,
    }
}

/// The allowed `:type` values of the plist format.
pub const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object", "null"];

/// Map a type name to a JSON Schema type.  Returns the canonical name and
/// whether the input was already canonical.
pub fn canonical_type(name: &str) -> Option<(&'static str, bool)> {
    if let Some(t) = TYPES.iter().find(|t| **t == name) {
        return Some((t, true));
    }
    // Lowered on the stack: every non-standard name of a catalog comes
    // here, and the names matched are short.
    let name = name.trim();
    let mut buf = [0u8; 16];
    let lower = buf.get_mut(..name.len())?;
    lower.copy_from_slice(name.as_bytes());
    lower.make_ascii_lowercase();
    let t = match std::str::from_utf8(lower).unwrap_or("") {
        "string" | "str" | "text" | "char" | "character" | "varchar" | "uuid" | "date" | "datetime" | "date-time"
        | "time" | "uri" | "url" | "email" => "string",
        "integer" | "int" | "long" | "short" | "int8" | "int16" | "int32" | "int64" | "uint" | "uint32" | "uint64"
        | "bigint" | "i32" | "i64" | "u32" | "u64" | "usize" => "integer",
        "number" | "float" | "double" | "decimal" | "real" | "num" | "numeric" | "f32" | "f64" | "float32"
        | "float64" => "number",
        "boolean" | "bool" => "boolean",
        "array" | "list" | "tuple" | "set" | "vector" | "sequence" | "seq" => "array",
        "object" | "dict" | "dictionary" | "map" | "hash" | "hashmap" | "struct" | "record" | "obj" | "json"
        | "mapping" => "object",
        "null" | "none" | "nil" | "void" => "null",
        _ => return None,
    };
    Some((t, false))
}

/// Visit every schema node below and including `node`, parents first.
pub fn walk_mut(node: &mut Schema, path: &At, f: &mut dyn FnMut(&mut Schema, &At) -> Result<()>) -> Result<()> {
    f(node, path)?;
    for (key, value) in node.iter_mut() {
        match (slot(key), value) {
            (Slot::Map, Value::Object(map)) => {
                let p = path.key(key);
                for (name, sub) in map.iter_mut() {
                    if let Value::Object(s) = sub {
                        walk_mut(s, &p.key(name), f)?;
                    }
                }
            }
            (Slot::Single, Value::Object(s)) => walk_mut(s, &path.key(key), f)?,
            (Slot::Single, Value::Array(list)) | (Slot::List, Value::Array(list)) => {
                let p = path.key(key);
                for (i, sub) in list.iter_mut().enumerate() {
                    if let Value::Object(s) = sub {
                        walk_mut(s, &p.index(i), f)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Bounds on schema normalisation.
pub const MAX_DEPTH: usize = 100;
pub const MAX_NODES: usize = 200_000;

/// Normalises schemas read from JSON: inlines `$ref`, maps type names,
/// turns unions with null into `nullable`, infers missing types.  Every
/// change that alters meaning is reported as a warning with its path.
pub struct Normalizer<'a> {
    /// Roots `$ref` pointers are resolved against, tried in order.
    pub roots: Vec<&'a Value>,
    pub warnings: Vec<Problem>,
    /// Gemini's schema dialect: upper-case types are its convention.
    pub gemini: bool,
    /// A `$ref` cycle, or a dangling or external reference, becomes a
    /// placeholder schema (with a warning) instead of an error: for large
    /// documents (OpenAPI) where recursive types are common.
    pub lenient_refs: bool,
    nodes: usize,
    ref_stack: Vec<String>,
    /// With [`Normalizer::lenient_refs`]: past this many nodes (counted
    /// since [`Normalizer::reset_budget`]), a `$ref` is not expanded but
    /// becomes a placeholder.
    pub soft_nodes: usize,
    /// Expansions of sibling-free `$ref`s already made, when enabled.
    cache: Option<crate::model::FastMap<String, CachedRef>>,
    /// The lowest `ref_stack` index a placeholder made so far depends on
    /// (a cycle back to it, or a limit reached below it): an expansion
    /// that depends on nothing above itself can be reused anywhere.
    depends_on: usize,
    /// Deepest `depth` reached, to know the height of an expansion.
    deepest: usize,
    /// Set by [`Normalizer::root`]: the root node is an object schema.
    object_root: bool,
    /// The size of what is made, counted against the import's budget.
    meter: crate::budget::Meter,
    /// Keep the root's `$defs` (and `definitions`) as they are, and note
    /// in [`Normalizer::kept_refs`] each `$ref` into the schema (into
    /// them, or to another of its nodes) that is inlined in the
    /// schema's own nodes: for a tool's parameters schema, whose writers
    /// put them back (see [`INLINED_REFS`]).
    pub keep_refs: bool,
    /// With [`Normalizer::keep_refs`]: where each such `$ref` was (a JSON
    /// pointer below the root), and its node as it was.
    pub kept_refs: Vec<(String, Value)>,
}

/// The root keyword under which a tool's parameters schema keeps the
/// `$ref`s the reader inlined (see [`Normalizer::keep_refs`]): a map from
/// the JSON pointer of each to its node as written.  It never leaves
/// toolspec: [`finalize`] puts them back in JSON Schema output, or drops
/// it.  The plist carries it in `:schema-extra`, which gptel and llm
/// ignore: their arguments are self-contained.
pub const INLINED_REFS: &str = "x-toolspec-inlined-refs";

/// One cached `$ref` expansion: the schema, how many nodes making it
/// took, and its height (levels below the ref).
struct CachedRef {
    schema: Schema,
    nodes: usize,
    height: usize,
    /// Its size ([`schema_weight`]).
    weight: usize,
}

impl<'a> Normalizer<'a> {
    pub fn new(roots: Vec<&'a Value>, gemini: bool) -> Self {
        Normalizer {
            roots,
            warnings: Vec::new(),
            gemini,
            lenient_refs: false,
            soft_nodes: usize::MAX,
            nodes: 0,
            ref_stack: Vec::new(),
            cache: None,
            depends_on: usize::MAX,
            deepest: 0,
            object_root: false,
            meter: crate::budget::Meter::here(),
            keep_refs: false,
            kept_refs: Vec::new(),
        }
    }

    /// Reuse the expansion of each `$ref` (without sibling keywords) once
    /// made, for normalising many schemas of one document.  Warnings are
    /// then given once, where a reference is first expanded.
    pub fn with_ref_cache(mut self) -> Self {
        self.cache = Some(crate::model::FastMap::default());
        self
    }

    /// Start a new node budget ([`MAX_NODES`]), e.g. for the next tool.
    pub fn reset_budget(&mut self) {
        self.nodes = 0;
    }

    /// Normalise one schema node found at `path`, returning the new node.
    pub fn node(&mut self, value: &Value, path: &str, depth: usize) -> Result<Schema> {
        self.node_at(value, &At::Root(path), depth)
    }

    /// Normalise the parameters schema of a tool: as [`Normalizer::node`],
    /// but a root without `type` is an object schema, whatever else it
    /// has, and takes `"type": "object"` first without a warning.
    pub fn root(&mut self, value: &Value, path: &str) -> Result<Schema> {
        let Value::Object(o) = value else { return self.node(value, path, 0) };
        if o.has("type") {
            return self.node(value, path, 0);
        }
        if o.has("$ref") {
            // `type` then overrides the target's, as a sibling of `$ref`.
            let mut typed = Map::with_capacity(o.len() + 1);
            typed.insert("type".into(), Value::from("object"));
            typed.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            return self.node(&Value::Object(typed), path, 0);
        }
        self.object_root = true;
        let out = self.node(value, path, 0);
        self.object_root = false;
        out
    }

    /// [`Normalizer::root`] of a schema the caller gives up: the same
    /// schema, made in place where it can be (see [`Normalizer::node_owned`]).
    pub fn root_owned(&mut self, value: Value, path: &str) -> Result<Schema> {
        let Value::Object(o) = &value else { return self.node_owned(value, &At::Root(path), 0) };
        if o.has("type") {
            return self.node_owned(value, &At::Root(path), 0);
        }
        if o.has("$ref") {
            return self.root(&value, path);
        }
        self.object_root = true;
        let out = self.node_owned(value, &At::Root(path), 0);
        self.object_root = false;
        out
    }

    /// [`Normalizer::node_at`] of a node the caller gives up: the same
    /// schema, but made of the node itself, its members changed in place
    /// rather than copied into a new map (which hashes every key again).
    /// A node with a `$ref`, or with a `type` that is not a single name,
    /// is normalised as `node_at` does.
    pub fn node_owned(&mut self, value: Value, path: &At, depth: usize) -> Result<Schema> {
        self.enter(path, depth)?;
        let mut obj = match value {
            Value::Object(o) if o.has("$ref") || o.field("type").is_some_and(|t| !t.is_string()) => {
                return self.node_body(&o, path, depth)
            }
            Value::Object(o) => o,
            other => return self.not_object(&other, path),
        };
        // Inlined where used; at the root, kept too when asked.
        if !(depth == 0 && self.keep_refs) {
            obj.retain(|k, _| k != "$defs" && k != "definitions");
        }
        let mut untyped = false;
        for (key, v) in obj.iter_mut() {
            let p = path.key(key);
            if key == "type" {
                if let Value::String(s) = v {
                    match self.type_name(s, &p)? {
                        Some(t) if s != t => *v = Value::from(t),
                        Some(_) => {}
                        None => untyped = true,
                    }
                }
                continue;
            }
            match (slot(key), v) {
                (Slot::Map, Value::Object(_)) if depth == 0 && matches!(key.as_str(), "$defs" | "definitions") => {}
                (Slot::Map, Value::Object(map)) => {
                    for (name, sub) in map.iter_mut() {
                        *sub = Value::Object(self.node_owned(std::mem::take(sub), &p.key(name), depth + 1)?);
                    }
                }
                (Slot::Single, v @ Value::Object(_)) => {
                    *v = Value::Object(self.node_owned(std::mem::take(v), &p, depth + 1)?);
                }
                (Slot::Single | Slot::List, Value::Array(list)) => {
                    for (i, sub) in list.iter_mut().enumerate() {
                        if sub.is_object() {
                            *sub = Value::Object(self.node_owned(std::mem::take(sub), &p.index(i), depth + 1)?);
                        }
                    }
                }
                _ => {}
            }
        }
        if untyped {
            obj.shift_remove("type");
        }
        self.finish_node(obj, path, depth)
    }

    /// [`Normalizer::node`], with the path written out only if needed.
    pub fn node_at(&mut self, value: &Value, path: &At, depth: usize) -> Result<Schema> {
        self.enter(path, depth)?;
        match value {
            Value::Object(o) => self.node_body(o, path, depth),
            other => self.not_object(other, path),
        }
    }

    /// Count a node entered at `path`, `depth` levels down: an error past
    /// the bounds.
    fn enter(&mut self, path: &At, depth: usize) -> Result<()> {
        self.nodes += 1;
        self.deepest = self.deepest.max(depth);
        if self.nodes > MAX_NODES {
            return Err(Error::at(
                ErrorKind::Limit,
                &path.to_string(),
                format!("schema expands to more than {MAX_NODES} nodes (too much $ref fan-out)"),
            ));
        }
        if depth > MAX_DEPTH {
            return Err(Error::at(
                ErrorKind::Limit,
                &path.to_string(),
                format!("schema nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// A node that is not an object: `true` is the empty schema, anything
    /// else an error.
    fn not_object(&mut self, value: &Value, path: &At) -> Result<Schema> {
        match value {
            Value::Bool(true) => Ok(Schema::new()),
            other => {
                Err(Error::shape(&path.to_string(), format!("expected a schema object, found {}", kind_of(other))))
            }
        }
    }

    /// [`Normalizer::node_at`] of an object node, once entered.
    fn node_body(&mut self, obj: &Map<String, Value>, path: &At, depth: usize) -> Result<Schema> {
        if let Some(r) = obj.field("$ref") {
            return self.inline_ref(obj, r, path, depth);
        }
        // Sized for the input: a map grown from empty has room for up to
        // twice its entries, and the tools of a large import are made of
        // thousands of small schemas.
        let mut out = Schema::with_capacity(obj.len());
        for (key, v) in obj {
            let p = path.key(key);
            match key.as_str() {
                // Kept as written at the root when asked (see `keep_refs`).
                "$defs" | "definitions" if depth == 0 && self.keep_refs => {
                    out.insert(key.clone(), v.clone());
                    continue;
                }
                "$defs" | "definitions" => continue, // inlined where used
                "type" => {
                    self.type_keyword(v, &p, &mut out)?;
                    continue;
                }
                _ => {}
            }
            let nv = match (slot(key), v) {
                (Slot::Map, Value::Object(map)) => {
                    let mut m = Map::with_capacity(map.len());
                    for (name, sub) in map {
                        m.insert(name.clone(), Value::Object(self.node_at(sub, &p.key(name), depth + 1)?));
                    }
                    Value::Object(m)
                }
                (Slot::Single, Value::Object(_)) => Value::Object(self.node_at(v, &p, depth + 1)?),
                (Slot::Single, Value::Array(list)) | (Slot::List, Value::Array(list)) => {
                    let mut l = Vec::with_capacity(list.len());
                    for (i, sub) in list.iter().enumerate() {
                        l.push(match sub {
                            Value::Object(_) => Value::Object(self.node_at(sub, &p.index(i), depth + 1)?),
                            other => other.clone(),
                        });
                    }
                    Value::Array(l)
                }
                _ => v.clone(),
            };
            out.insert(key.clone(), nv);
        }
        self.finish_node(out, path, depth)
    }

    /// The last steps of normalising a node, its members done.
    fn finish_node(&mut self, mut out: Schema, path: &At, depth: usize) -> Result<Schema> {
        self.meter.charge(own_weight(&out), || path.to_string())?;
        self.lift_boolean_required(&mut out, path);
        // A node without `type` is left without: it constrains no type
        // (inferring one changed the schema).  The root of a parameters
        // schema is an object schema.
        if depth == 0 && self.object_root && !out.has("type") {
            let rest = std::mem::take(&mut out);
            out.insert("type".into(), Value::from("object"));
            out.extend(rest);
        }
        Ok(out)
    }

    fn type_keyword(&mut self, v: &Value, path: &At, out: &mut Schema) -> Result<()> {
        match v {
            Value::String(s) => {
                if let Some(t) = self.type_name(s, path)? {
                    out.insert("type".into(), Value::from(t));
                }
            }
            Value::Array(list) => {
                let mut types = Vec::with_capacity(list.len());
                let mut any = false;
                for (i, item) in list.iter().enumerate() {
                    let s = item
                        .as_str()
                        .ok_or_else(|| Error::shape(&path.index(i).to_string(), "type names must be strings"))?;
                    match self.type_name(s, &path.index(i))? {
                        Some(t) if !types.contains(&t) => types.push(t),
                        Some(_) => {}
                        // A union with any type is any type.
                        None => any = true,
                    }
                }
                let non_null: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
                match non_null.len() {
                    _ if any => {}
                    0 => {
                        out.insert("type".into(), Value::from("null"));
                    }
                    // `[T, "null"]`: T, nullable (one type for gptel and
                    // llm; written back as the union).
                    1 => {
                        out.insert("type".into(), Value::from(non_null[0]));
                        if types.len() > 1 {
                            out.insert("nullable".into(), Value::Bool(true));
                        }
                    }
                    // A union of several types stays one: an `anyOf` of
                    // single types is not what the schema said.
                    _ => {
                        out.insert("type".into(), Value::Array(types.into_iter().map(Value::from).collect()));
                    }
                }
            }
            other => {
                return Err(Error::shape(
                    &path.to_string(),
                    format!("`type` must be a string or an array of strings, found {}", kind_of(other)),
                ))
            }
        }
        Ok(())
    }

    /// The JSON Schema type `s` names, None (with a warning) for a name
    /// that is none (`any`, `""`, `ArrayList`...): no type constraint.
    fn type_name(&mut self, s: &str, path: &At) -> Result<Option<&'static str>> {
        match canonical_type(s) {
            Some((t, true)) => Ok(Some(t)),
            Some((t, false)) => {
                let gemini_style = self.gemini && s.eq_ignore_ascii_case(t);
                if !gemini_style {
                    // Written without `format!`: a catalog may have
                    // thousands (BFCL's, `make bench`).
                    let mut message = String::with_capacity(40 + s.len() + t.len());
                    for part in ["non-standard type name \"", s, "\" read as \"", t, "\""] {
                        message.push_str(part);
                    }
                    self.warnings.push(Problem::warning(Code::TypeAlias, path, message));
                }
                Ok(Some(t))
            }
            None => {
                self.warnings.push(Problem::warning(
                    Code::UnknownType,
                    path,
                    format!(
                        "unknown type \"{s}\"{}: read as no type constraint (any value); the JSON types are \
                         string, number, integer, boolean, array, object, null",
                        type_hint(s)
                    ),
                ));
                Ok(None)
            }
        }
    }

    /// `{"properties": {"x": {"required": true}}}` (Swagger 2 habit) becomes
    /// the parent's `required` list.
    fn lift_boolean_required(&mut self, node: &mut Schema, path: &At) {
        let mut lifted = Vec::new();
        if let Some(Value::Object(props)) = node.get_mut("properties") {
            for (name, sub) in props.iter_mut() {
                if let Value::Object(s) = sub {
                    if let Some(Value::Bool(b)) = s.field("required") {
                        let b = *b;
                        s.shift_remove("required");
                        self.warnings.push(Problem::warning(
                            Code::Moved,
                            path.key("properties").key(name),
                            "boolean `required` moved into the parent's `required` list",
                        ));
                        if b {
                            lifted.push(name.clone());
                        }
                    }
                }
            }
        }
        if lifted.is_empty() {
            return;
        }
        let req = node.entry("required").or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = req {
            let mut listed: std::collections::HashSet<String> =
                list.iter().filter_map(|v| v.as_str().map(String::from)).collect();
            for name in lifted {
                if listed.insert(name.clone()) {
                    list.push(Value::from(name));
                }
            }
        }
    }

    /// What the in-document reference `r` ("#/...") points to, in the
    /// first of the documents it resolves in.
    fn target(&self, r: &str) -> Option<&'a Value> {
        self.roots.iter().find_map(|&root| resolve_pointer(root, &r[1..]))
    }

    fn inline_ref(&mut self, obj: &Map<String, Value>, r: &Value, path: &At, depth: usize) -> Result<Schema> {
        let r = r.as_str().ok_or_else(|| Error::shape(&path.key("$ref").to_string(), "`$ref` must be a string"))?;
        if !r.starts_with('#') {
            let msg = format!("external reference \"{r}\" is not supported: only references inside the document (\"#/$defs/...\") can be inlined");
            return self.unresolved(obj, None, r, path, msg);
        }
        // A `$ref` of the schema's own nodes into the schema: its root's
        // definitions, or another of its nodes (`#/properties/x`, as
        // zod-to-json-schema writes a property typed as another).
        if self.keep_refs
            && depth > 0
            && self.ref_stack.is_empty()
            && r.starts_with("#/")
            && self.roots.first().is_some_and(|root| resolve_pointer(root, &r[1..]).is_some())
        {
            self.kept_refs.push((path.pointer(), Value::Object(obj.clone())));
        }
        if let Some(at) = self.ref_stack.iter().position(|s| s == r) {
            let mut chain = self.ref_stack[at..].to_vec();
            chain.push(r.to_string());
            let msg =
                format!("recursive $ref cycle {} cannot be inlined: tool schemas must be finite", chain.join(" -> "));
            let target = self.target(r);
            self.depends_on = self.depends_on.min(at);
            return self.unresolved(obj, target, r, path, msg);
        }
        let plain = obj.len() == 1;
        let level = self.ref_stack.len();
        let cached = if plain { self.cache.as_ref().and_then(|c| c.get(r)) } else { None };
        // A cached expansion that would go past the limits is made again.
        let cached = cached.filter(|c| depth + c.height <= MAX_DEPTH);
        let ahead = cached.map_or(0, |c| c.nodes);
        // Only a reference that resolved was expanded and cached: its
        // target is looked up again only if needed.
        let target = if cached.is_some() { None } else { self.target(r) };
        let dangling = |r: &str| format!("\"{r}\" points to nothing in this document");
        if cached.is_none() && target.is_none() {
            return self.unresolved(obj, None, r, path, dangling(r));
        }
        if self.lenient_refs && self.nodes + ahead > self.soft_nodes {
            let target = target.or_else(|| self.target(r));
            // Depends on everything above: never cached.
            self.depends_on = 0;
            let msg = format!("the schema is larger than {} nodes here: \"{r}\" is not expanded", self.soft_nodes);
            return self.unresolved(obj, target, r, path, msg).map(|mut s| {
                if let Some(Value::String(d)) = s.get_mut("description") {
                    *d = d.replace("recursive, not expanded again", "not expanded");
                }
                s
            });
        }
        if let Some(c) = cached {
            self.nodes += c.nodes;
            if self.nodes > MAX_NODES {
                return Err(Error::at(
                    ErrorKind::Limit,
                    &path.to_string(),
                    format!("schema expands to more than {MAX_NODES} nodes (too much $ref fan-out)"),
                ));
            }
            self.deepest = self.deepest.max(depth + c.height);
            self.meter.charge(c.weight, || path.to_string())?;
            return Ok(c.schema.clone());
        }
        let Some(target) = target else { return self.unresolved(obj, None, r, path, dangling(r)) };
        // Sibling keywords of `$ref` override the target's.
        let merged;
        let source: &Value = if plain {
            target
        } else {
            let mut m = match target {
                Value::Object(t) => t.clone(),
                _ => Map::new(),
            };
            for (k, v) in obj {
                if k != "$ref" {
                    m.insert(k.clone(), v.clone());
                }
            }
            merged = Value::Object(m);
            &merged
        };
        let (nodes_before, depends_before, deepest_before) = (self.nodes, self.depends_on, self.deepest);
        let weight_before = self.meter.total;
        self.deepest = depth;
        self.depends_on = usize::MAX;
        self.ref_stack.push(r.to_string());
        let out = self.node_at(source, path, depth + 1);
        self.ref_stack.pop();
        let height = self.deepest - depth;
        self.deepest = self.deepest.max(deepest_before);
        let self_contained = self.depends_on >= level;
        self.depends_on = self.depends_on.min(depends_before);
        let out = out?;
        if plain && self_contained {
            if let Some(cache) = self.cache.as_mut() {
                let weight = self.meter.total - weight_before;
                let cached = CachedRef { schema: out.clone(), nodes: self.nodes - nodes_before, height, weight };
                cache.insert(r.to_string(), cached);
            }
        }
        Ok(out)
    }

    /// A `$ref` that cannot be inlined: an error, or with
    /// [`Normalizer::lenient_refs`] a placeholder of the target's type
    /// (object when unknown) whose description says what is missing.
    /// `path` is the schema holding the `$ref`.
    fn unresolved(
        &mut self,
        obj: &Map<String, Value>,
        target: Option<&Value>,
        r: &str,
        path: &At,
        message: String,
    ) -> Result<Schema> {
        let rp = path.key("$ref").to_string();
        if !self.lenient_refs {
            return Err(Error::at(ErrorKind::Ref, &rp, message));
        }
        let name = r.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or(r);
        let field = |k: &str| obj.get(k).or_else(|| target.and_then(|t| t.get(k)));
        let ty = field("type").and_then(Value::as_str).and_then(canonical_type).map_or("object", |(t, _)| t);
        let recursive = target.is_some();
        let what = if recursive { "recursive, not expanded again" } else { "unresolved reference" };
        let description = match field("description").and_then(Value::as_str) {
            Some(d) => format!("{d} ({name}: {what})"),
            None => format!("{name} ({what})"),
        };
        let mut out = Schema::new();
        out.insert("type".into(), Value::from(ty));
        out.insert("description".into(), Value::from(description));
        let fix = if recursive { "replaced by an unexpanded schema" } else { "replaced by a placeholder schema" };
        self.warnings.push(Problem::warning(Code::Reference, path, format!("{message}: {fix}")));
        Ok(out)
    }
}

/// ` (did you mean "string"?)` for a type name one or two edits from a
/// JSON type's (`strng`, `integr`), or nothing: a typo reads as no type
/// constraint, and the warning should say what was probably meant.
fn type_hint(name: &str) -> String {
    const JSON_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "array", "object", "null"];
    // A typo, not a name from another language (`Object[]`, `ArrayList`).
    if name.len() < 3 || !name.bytes().all(|b| b.is_ascii_alphabetic()) {
        return String::new();
    }
    let lower = name.to_ascii_lowercase();
    JSON_TYPES
        .iter()
        .map(|t| (strsim::damerau_levenshtein(&lower, t), *t))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, t)| format!(" (did you mean \"{t}\"?)"))
        .unwrap_or_default()
}

/// Weights of what a schema is made of, in about the bytes of memory it
/// takes (here and as Lisp objects in Emacs): an object (a map), one of
/// its entries, an array, a string (beside its text).
const OBJECT_WEIGHT: usize = 128;
const ENTRY_WEIGHT: usize = 48;
const ARRAY_WEIGHT: usize = 32;
const STRING_WEIGHT: usize = 8;

/// The size of a schema node made, without its subschemas (counted
/// where they are made), in about the bytes of memory it takes.
fn own_weight(node: &Schema) -> usize {
    let mut w = OBJECT_WEIGHT;
    for (k, v) in node {
        w += ENTRY_WEIGHT + k.len();
        w += match (slot(k), v) {
            (Slot::Map, Value::Object(m)) => OBJECT_WEIGHT + m.keys().map(|n| ENTRY_WEIGHT + n.len()).sum::<usize>(),
            (Slot::Single, Value::Object(_)) => 0,
            (Slot::Single | Slot::List, Value::Array(a)) => {
                ARRAY_WEIGHT + a.iter().map(|x| if x.is_object() { 0 } else { data_weight(x) }).sum::<usize>()
            }
            _ => data_weight(v),
        };
    }
    w
}

/// The size of the data `v` (beside the place that holds it), in about
/// the bytes of memory it takes.
pub(crate) fn data_weight(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(s) => STRING_WEIGHT + s.len(),
        Value::Array(a) => ARRAY_WEIGHT + a.iter().map(|x| ENTRY_WEIGHT / 2 + data_weight(x)).sum::<usize>(),
        Value::Object(o) => {
            OBJECT_WEIGHT + o.iter().map(|(k, x)| ENTRY_WEIGHT + k.len() + data_weight(x)).sum::<usize>()
        }
    }
}

/// Resolve a JSON pointer fragment (without the `#`) in `root`.
pub fn resolve_pointer<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.contains(['%', '~']) {
        return value_at(root, &pointer_tokens(pointer)?);
    }
    // Nothing to decode or unescape, as in most documents: the tokens are
    // walked as they are, without making them.
    if pointer.is_empty() {
        return Some(root);
    }
    pointer.strip_prefix('/')?.split('/').try_fold(root, step)
}

/// The reference tokens of a JSON pointer fragment (without the `#`),
/// percent-decoded and unescaped (`~1` is `/`, `~0` is `~`); none for the
/// whole document, None for what is not a pointer.
pub(crate) fn pointer_tokens(pointer: &str) -> Option<Vec<String>> {
    let pointer = percent_decode(pointer);
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

/// The value `tokens` lead to from `v`: member names, or indexes in arrays.
pub(crate) fn value_at<'v>(v: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    tokens.iter().try_fold(v, |cur, t| step(cur, t))
}

/// The member `t` of an object, or item `t` of an array.
fn step<'v>(cur: &'v Value, t: &str) -> Option<&'v Value> {
    match cur {
        Value::Object(m) => m.get(t),
        Value::Array(a) => a.get(t.parse::<usize>().ok()?),
        _ => None,
    }
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A word for the JSON type of `v`, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Finish a schema for output: a nested `optional` marker (from plists)
/// becomes the parent's `required`, and no `optional` key is left.  With
/// `unions` (JSON Schema output), `nullable: true` becomes a JSON Schema
/// type union, and the `$ref`s the reader inlined are put back (see
/// [`INLINED_REFS`]); without (Gemini's OpenAPI subset, which has no
/// `$ref`), they stay inlined.
pub fn finalize(node: &mut Schema, unions: bool) {
    restore_refs(node, unions);
    let _ = walk_mut(node, &At::Root(""), &mut |n, _| {
        resolve_optional(n);
        // Parents are visited first, so what is left is a marker outside
        // `properties` (on `items`, an `anyOf` alternative...): meaningless.
        n.shift_remove("optional");
        if unions {
            nullable_to_union(n);
        }
        Ok(())
    });
}

/// Take [`INLINED_REFS`] out of `root`, and when `put_back`, put each
/// `$ref` it notes back in the place of its expansion.  Only over the
/// expansion the reader made: a node changed since (in a plist, say) is
/// left as it is.  Tools with no `$ref` pay one lookup.
fn restore_refs(root: &mut Schema, put_back: bool) {
    let Some(Value::Object(kept)) = root.shift_remove(INLINED_REFS) else { return };
    if !put_back || kept.is_empty() {
        return;
    }
    let snapshot = Value::Object(root.clone());
    let mut places = Vec::with_capacity(kept.len());
    for (pointer, original) in kept {
        // Written by `At::pointer`: escaped, never percent-encoded.
        let Value::Object(original) = original else { continue };
        let tokens: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
        let mut n = Normalizer::new(vec![&snapshot], false);
        let expected = n.node_at(&Value::Object(original.clone()), &At::Root(""), 1);
        let here = value_at(&snapshot, &tokens).and_then(Value::as_object);
        if !tokens.is_empty() && expected.is_ok_and(|e| Some(&e) == here) {
            places.push((tokens, original));
        }
    }
    for (tokens, original) in places {
        if let Some(Value::Object(node)) = value_at_mut(root, &tokens) {
            *node = original;
        }
    }
}

/// [`value_at`] of a schema, for changing it.
fn value_at_mut<'v>(root: &'v mut Schema, tokens: &[String]) -> Option<&'v mut Value> {
    let (first, rest) = tokens.split_first()?;
    rest.iter().try_fold(root.get_mut(first.as_str())?, |cur, t| match cur {
        Value::Object(m) => m.get_mut(t.as_str()),
        Value::Array(a) => a.get_mut(t.parse::<usize>().ok()?),
        _ => None,
    })
}

/// If any property of `node` carries `optional` (gptel's nested marker),
/// settle `required` with it: an explicit `required` list loses the
/// properties marked optional; without one, every property not marked
/// optional is required.
pub fn resolve_optional(node: &mut Schema) {
    let Some(Value::Object(props)) = node.get_mut("properties") else { return };
    if !props.values().any(|p| p.field("optional").is_some()) {
        return;
    }
    let mut optional = std::collections::HashSet::new();
    let mut names = Vec::new();
    for (name, p) in props.iter_mut() {
        names.push(name.clone());
        if let Value::Object(s) = p {
            if let Some(v) = s.shift_remove("optional") {
                if truthy(&v) {
                    optional.insert(name.clone());
                }
            }
        }
    }
    let listed: Option<Vec<String>> = node
        .field("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect());
    let required: Vec<Value> = match listed {
        Some(listed) => listed.into_iter().filter(|n| !optional.contains(n)).map(Value::from).collect(),
        None => names.into_iter().filter(|n| !optional.contains(n)).map(Value::from).collect(),
    };
    if required.is_empty() {
        node.shift_remove("required");
    } else {
        node.insert("required".into(), Value::Array(required));
    }
}

/// A plist-ish truth value: anything but false, null and `{}`/nil.
pub fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Bool(false) | Value::Null) && v != &Value::Object(Map::new())
}

/// `{"type":"string","nullable":true}` -> `{"type":["string","null"]}`.
pub fn nullable_to_union(node: &mut Schema) {
    match node.field("nullable") {
        Some(Value::Bool(true)) => {}
        Some(_) => {
            node.shift_remove("nullable");
            return;
        }
        None => return,
    }
    match node.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            node.insert("type".into(), Value::Array(vec![Value::from(t), Value::from("null")]));
        }
        Some(Value::Array(list)) if !list.iter().any(|v| v == "null") => list.push(Value::from("null")),
        // A multi-type union read as `anyOf` + `nullable`: null is one more
        // alternative.
        None => {
            if let Some(Value::Array(alts)) = node.get_mut("anyOf") {
                if !alts.iter().any(|a| a.field("type").is_some_and(|t| t == "null")) {
                    let mut n = Map::new();
                    n.insert("type".into(), Value::from("null"));
                    alts.push(Value::Object(n));
                }
            }
        }
        _ => {}
    }
    node.shift_remove("nullable");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn norm(v: Value) -> (Schema, Vec<Problem>) {
        let root = v.clone();
        let mut n = Normalizer::new(vec![&root], false);
        let s = n.node(&v, "", 0).unwrap();
        (s, n.warnings)
    }

    #[test]
    fn maps_type_names_with_warning() {
        let (s, w) = norm(json!({"type": "str"}));
        assert_eq!(s["type"], "string");
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("\"str\""));
    }

    #[test]
    fn union_with_null_becomes_nullable() {
        let (s, w) = norm(json!({"type": ["integer", "null"]}));
        assert_eq!(Value::Object(s), json!({"type": "integer", "nullable": true}));
        assert!(w.is_empty());
    }

    #[test]
    fn pointers_resolve_with_and_without_escapes() {
        let doc = json!({"a": [{"b": 1}, {"c/d": 2, "e~f": 3, "g h": 4}], "": {"": 5}});
        let at = |p: &str| resolve_pointer(&doc, p).cloned();
        assert_eq!(at(""), Some(doc.clone()));
        assert_eq!(at("/a/0/b"), Some(json!(1)));
        assert_eq!(at("/a/1/c~1d"), Some(json!(2)));
        assert_eq!(at("/a/1/e~0f"), Some(json!(3)));
        assert_eq!(at("/a/1/g%20h"), Some(json!(4)));
        // Decoded first, `%2F` is a `/` between two tokens.
        assert_eq!(at("/a/1/c%2Fd"), None);
        assert_eq!(at("/"), Some(json!({"": 5})));
        assert_eq!(at("//"), Some(json!(5)));
        for missing in ["a", "/a/2", "/a/x", "/a/0/b/c", "/z", "/a/-1"] {
            assert_eq!(at(missing), None, "{missing}");
        }
    }

    #[test]
    fn ref_cycle_is_an_error() {
        let doc = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                         "properties": {"x": {"$ref": "#/$defs/a"}}});
        let mut n = Normalizer::new(vec![&doc], false);
        let e = n.node(&doc, "", 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Ref);
        assert!(e.message.contains("#/$defs/a -> #/$defs/b -> #/$defs/a"), "{}", e.message);
    }

    #[test]
    fn lenient_refs_degrade_cycles_and_dangling_refs() {
        let doc = json!({"$defs": {"node": {"type": "object", "description": "A node",
                                            "properties": {"next": {"$ref": "#/$defs/node"}}}},
                         "type": "object",
                         "properties": {"x": {"$ref": "#/$defs/node"}, "y": {"$ref": "#/$defs/gone"},
                                        "z": {"$ref": "other.json#/a"}}});
        let mut n = Normalizer::new(vec![&doc], false);
        n.lenient_refs = true;
        let s = n.node(&doc, "", 0).unwrap();
        assert_eq!(
            s["properties"]["x"]["properties"]["next"],
            json!({"type": "object", "description": "A node (node: recursive, not expanded again)"})
        );
        assert_eq!(s["properties"]["y"], json!({"type": "object", "description": "gone (unresolved reference)"}));
        assert_eq!(s["properties"]["z"]["type"], "object");
        let paths: Vec<&str> = n.warnings.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["properties.x.properties.next", "properties.y", "properties.z"]);
        assert!(n.warnings[0].message.contains("#/$defs/node -> #/$defs/node"), "{}", n.warnings[0].message);
    }

    #[test]
    fn cached_refs_give_the_same_schemas() {
        let doc = json!({"$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                                   "b": {"type": "str"},
                                   "r": {"type": "object", "properties": {"self": {"$ref": "#/$defs/r"},
                                                                          "a": {"$ref": "#/$defs/a"}}}},
                         "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/$defs/a"},
                                        "r1": {"$ref": "#/$defs/r"}, "r2": {"$ref": "#/$defs/r"}}});
        let plain = {
            let mut n = Normalizer::new(vec![&doc], false);
            n.lenient_refs = true;
            n.node(&doc, "", 0).unwrap()
        };
        let mut n = Normalizer::new(vec![&doc], false).with_ref_cache();
        n.lenient_refs = true;
        let cached = n.node(&doc, "", 0).unwrap();
        assert_eq!(plain, cached);
        assert_eq!(cached["properties"]["x"], cached["properties"]["y"]);
        assert_eq!(cached["properties"]["r1"], cached["properties"]["r2"]);
        // The warning about "str" is given once, where `b` is first expanded.
        assert_eq!(n.warnings.iter().filter(|w| w.message.contains("\"str\"")).count(), 1);
    }

    #[test]
    fn soft_budget_stops_expanding() {
        let doc = json!({"$defs": {"big": {"type": "object", "properties": {
                             "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}}}},
                         "properties": {"x": {"$ref": "#/$defs/big"}, "y": {"$ref": "#/$defs/big"}}});
        let mut n = Normalizer::new(vec![&doc], false).with_ref_cache();
        n.lenient_refs = true;
        n.soft_nodes = 7;
        let s = n.node(&doc, "", 0).unwrap();
        assert_eq!(s["properties"]["x"]["properties"]["c"]["type"], "string");
        assert_eq!(s["properties"]["y"], json!({"type": "object", "description": "big (not expanded)"}));
        assert!(n.warnings[0].message.contains("larger than 7 nodes"), "{:?}", n.warnings);
        n.reset_budget();
        let again = n.node(&doc["properties"]["y"], "y", 0).unwrap();
        assert_eq!(again["properties"]["a"]["type"], "string");
    }

    #[test]
    fn ref_with_siblings_overrides() {
        let doc = json!({"$defs": {"c": {"type": "string", "description": "d"}},
                         "properties": {"x": {"$ref": "#/$defs/c", "description": "mine"}}});
        let mut n = Normalizer::new(vec![&doc], false);
        let s = n.node(&doc, "", 0).unwrap();
        assert_eq!(s["properties"]["x"], json!({"type": "string", "description": "mine"}));
        assert!(s.field("$defs").is_none());
    }

    #[test]
    fn resolve_optional_builds_required() {
        let mut s = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "string", "optional": true}}})
        .as_object()
        .unwrap()
        .clone();
        finalize(&mut s, true);
        assert_eq!(s["required"], json!(["a"]));
        assert!(s["properties"]["b"].field("optional").is_none());
    }
}
