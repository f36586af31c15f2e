//! Parsing an OpenAPI document in JSON for an import, making `Value`s of
//! only what the import can reach.
//!
//! Most of a large description is what tools never read: response schemas
//! and examples, webhooks.  GitHub's is 13 MB, of which an import reads the
//! paths and a few hundred components.  So the text is parsed once, with
//! the document's small keys made into `Value`s, while each path item,
//! each entry of the component maps (`components.schemas`...), of Swagger
//! 2's `definitions`, `parameters` and `responses`, and of the webhooks is
//! only checked and kept as its text.  Then every path item is parsed:
//! in a large document, on two threads, the one that scanned the text for
//! duplicate keys helping once its scan is done ([`parse_noted`]).  Then
//! the `$ref`s of what was made are followed: each entry they reach is
//! parsed in turn, and its own `$ref`s followed.  An entry that no `$ref`
//! reaches is null in the result.
//!
//! A response is followed only as far as the import reads it: its `$ref`,
//! not its content, unless the document has an `x-lookup` (lookups read
//! response schemas).  The examples of parameters and media types are not
//! followed either.
//!
//! For an import the result is the whole document: `test/openapi.rs`
//! imports every description of the test data both ways and compares.
//! Differences are in what the import never reads: an entry no `$ref`
//! reaches is checked as JSON but not decoded, so a lone surrogate escape
//! (`"\ud800"`) in it is no error, and its nesting depth is counted from
//! the entry, not from the document's root.

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{line_column, Error, Result};
use crate::model::{FastMap, Problem};
use crate::schema::{pointer_tokens, value_at};
use crate::value::{Map, Value};

use super::METHODS;

/// Sections of `components` whose entries are parsed when reached.
const LAZY_SECTIONS: &[&str] =
    &["schemas", "responses", "parameters", "examples", "requestBodies", "headers", "links", "callbacks", "pathItems"];

/// Keys of the document's root whose entries are parsed when reached.
const LAZY_ROOT: &[&str] = &["definitions", "parameters", "responses", "webhooks", "x-webhooks"];

/// A part of the document while it is being parsed.
enum Part<'t> {
    Value(Value),
    /// An entry not parsed yet: its text.
    Raw(&'t RawValue),
    /// An object some of whose members are not parsed yet, and the place
    /// of each key among them.
    Object(Vec<(String, Part<'t>)>, FastMap<String, usize>),
}

/// How a part of the text is parsed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Value,
    Raw,
    Root,
    Components,
    /// A map whose entries are raw.
    Entries,
}

impl Shape {
    fn child(self, key: &str) -> Shape {
        match self {
            Shape::Root if key == "components" => Shape::Components,
            // Every path item is read, but parsed after the rest, and on
            // two threads when the text is large ([`parse_noted`]).
            Shape::Root if key == "paths" || LAZY_ROOT.contains(&key) => Shape::Entries,
            Shape::Components if LAZY_SECTIONS.contains(&key) => Shape::Entries,
            Shape::Entries => Shape::Raw,
            _ => Shape::Value,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Shape {
    type Value = Part<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Part<'de>, D::Error> {
        match self {
            Shape::Value => Value::deserialize(d).map(Part::Value),
            Shape::Raw => <&'de RawValue>::deserialize(d).map(Part::Raw),
            _ => d.deserialize_any(self),
        }
    }
}

/// An object of a lazy shape; anything else is made a `Value` as the
/// parser would.
impl<'de> Visitor<'de> for Shape {
    type Value = Part<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Part<'de>, A::Error> {
        let mut members: Vec<(String, Part<'de>)> = Vec::new();
        // Where each key is: component maps have hundreds of entries.
        let mut places: FastMap<String, usize> = FastMap::default();
        while let Some(key) = map.next_key::<String>()? {
            let part = map.next_value_seed(self.child(&key))?;
            // A repeated key keeps its first place and its last value, as
            // `Map::insert` does.
            match places.get(&key) {
                Some(&i) => members[i].1 = part,
                None => {
                    places.insert(key.clone(), members.len());
                    members.push((key, part));
                }
            }
        }
        Ok(Part::Object(members, places))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Part<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Part::Value(Value::Array(items)))
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::String(v)))
    }

    fn visit_unit<E>(self) -> std::result::Result<Part<'de>, E> {
        Ok(Part::Value(Value::Null))
    }
}

/// What a parsed part is to the import, which decides the `$ref`s followed.
#[derive(Clone, Copy)]
enum Role {
    /// Everything: every string that is a local reference.
    Any,
    Paths,
    PathItem,
    Operation,
    Parameters,
    Parameter,
    Body,
    /// A map of media types.
    Content,
    Response,
}

/// The role of an entry of the lazy map `section`.
fn entry_role(section: &str) -> Role {
    match section {
        "responses" => Role::Response,
        "parameters" | "headers" => Role::Parameter,
        "requestBodies" => Role::Body,
        "pathItems" => Role::PathItem,
        _ => Role::Any,
    }
}

/// Collects the local references a part holds, for its role.
struct Refs {
    /// Whether response content is read (the document has `x-lookup`).
    lookup: bool,
    found: Vec<String>,
}

impl Refs {
    fn walk(&mut self, v: &Value, role: Role) {
        match (role, v) {
            (Role::Any, Value::String(s)) if s.starts_with("#/") => self.found.push(s.clone()),
            (Role::Any, Value::Array(a)) => a.iter().for_each(|x| self.walk(x, Role::Any)),
            (Role::Any, Value::Object(o)) => o.values().for_each(|x| self.walk(x, Role::Any)),
            (Role::Response, v) if self.lookup => self.walk(v, Role::Any),
            (Role::Response, Value::Object(o)) => {
                if let Some(x) = o.get("$ref") {
                    self.walk(x, Role::Any);
                }
            }
            (Role::Parameters, Value::Array(a)) => a.iter().for_each(|x| self.walk(x, Role::Parameter)),
            (Role::Content, Value::Object(o)) => {
                for media in o.values() {
                    self.members(media, |k| if k == "examples" || k == "example" { None } else { Some(Role::Any) });
                }
            }
            (Role::Paths, _) => self.members(v, |k| Some(if k.starts_with("x-") { Role::Any } else { Role::PathItem })),
            (Role::PathItem, _) => self.members(v, |k| {
                Some(match k {
                    "parameters" => Role::Parameters,
                    k if METHODS.contains(&k) => Role::Operation,
                    _ => Role::Any,
                })
            }),
            (Role::Operation, _) => self.members(v, |k| {
                Some(match k {
                    "parameters" => Role::Parameters,
                    "requestBody" => Role::Body,
                    "responses" => return None,
                    _ => Role::Any,
                })
            }),
            (Role::Parameter, _) => self.members(v, |k| match k {
                "examples" | "example" => None,
                "content" => Some(Role::Content),
                _ => Some(Role::Any),
            }),
            (Role::Body, _) => self.members(v, |k| Some(if k == "content" { Role::Content } else { Role::Any })),
            (Role::Any, _) => {}
            // A part that is not the object or array its role expects.
            _ => self.walk(v, Role::Any),
        }
        if let (Role::Operation, Value::Object(o)) = (role, v) {
            if let Some(Value::Object(rs)) = o.get("responses") {
                rs.values().for_each(|r| self.walk(r, Role::Response));
            }
        }
    }

    /// The members of object `v`, each in the role `role_of` its key gives
    /// (none: skipped); anything else than an object in [`Role::Any`].
    fn members(&mut self, v: &Value, role_of: impl Fn(&str) -> Option<Role>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if let Some(role) = role_of(k) {
                        self.walk(x, role);
                    }
                }
            }
            _ => self.walk(v, Role::Any),
        }
    }
}

/// Parse the JSON text of an OpenAPI document into a `Value` holding what
/// an import can reach (see the module's documentation).  `lookup`: the
/// document has `x-lookup`.  Errors are the parser's, at their place in
/// `text`.
pub fn parse(text: &str, lookup: bool) -> Result<Value> {
    let root = first_pass(text)?;
    let items = Items::of(&root, lookup, true);
    let parsed = items.merge(items.work(), Vec::new());
    finish(root, parsed, text, lookup)
}

/// [`parse`], and, if the text parsed, its [`crate::scan::notes`].  A
/// large text is scanned on another thread while it is parsed, and that
/// thread, once done, parses path items beside this one: the scan takes
/// less time than the parse, and the path items are most of what the
/// parse makes.
pub fn parse_noted(text: &str, lookup: bool) -> (Result<Value>, Vec<Problem>) {
    let helped = text.len() >= crate::par::BIG && crate::par::threads_for(usize::MAX) > 1;
    if !helped {
        return crate::scan::parse_and_note(text, || parse(text, lookup));
    }
    // The path items, once the first pass has found them; the sender
    // dropped without sending says there are none to help with.
    let posted: OnceLock<Items> = OnceLock::new();
    let (post, wait) = std::sync::mpsc::sync_channel::<()>(1);
    std::thread::scope(|scope| {
        let posted = &posted;
        let helper = crate::par::spawn(scope, move || {
            let (notes, depth) = crate::scan::notes_and_depth(text);
            let done = match (wait.recv(), posted.get()) {
                (Ok(()), Some(items)) => items.work(),
                _ => Vec::new(),
            };
            (notes, depth, done)
        });
        let root = first_pass(text);
        // The scan gives the text's nesting: items need not be measured.
        let mine = root.as_ref().ok().map(|root| {
            let items = posted.get_or_init(|| Items::of(root, lookup, helper.is_none()));
            let _ = post.send(());
            items.work()
        });
        drop(post);
        let (notes, depth, theirs) = match helper {
            Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => (crate::scan::notes(text), 0, Vec::new()),
        };
        let parsed = match (root, mine, posted.get()) {
            (Ok(root), Some(mine), Some(items)) => {
                let mut all = items.merge(mine, theirs);
                // Somewhere the text nests deeper than the parser goes: in
                // a path item, that is the parser's error (elsewhere, in an
                // entry no `$ref` may reach, it is not yet).
                if depth > MAX_DEPTH {
                    all.iter_mut()
                        .filter(|item| item.as_ref().is_some_and(|(v, _)| too_deep(v)))
                        .for_each(|item| *item = None);
                }
                finish(root, all, text, lookup)
            }
            (Err(e), _, _) => Err(e),
            _ => unreachable!("a parsed document has its items posted"),
        };
        let notes = if parsed.is_ok() { notes } else { Vec::new() };
        (parsed, notes)
    })
}

/// The text parsed as far as a first pass goes: path items and the
/// entries of the lazy maps kept raw.
fn first_pass(text: &str) -> Result<Part<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    match Shape::Root.deserialize(&mut de).and_then(|p| de.end().map(|()| p)) {
        Ok(root) => Ok(root),
        // The error exactly as parsing it whole reports it.
        Err(_) => Err(whole_error(text)),
    }
}

/// The error of parsing `text` whole, as the first pass found there was
/// one (or, never, one naming the nesting of `paths`).
fn whole_error(text: &str) -> Error {
    match serde_json::from_str::<Value>(text) {
        Err(e) => Error::from_json(&e),
        Ok(_) => Error::new(crate::ErrorKind::Json, "recursion limit exceeded in `paths`"),
    }
}

/// A path item parsed, with the references it holds (as [`Role::Paths`]
/// collects them); None if it does not parse as it would in the whole
/// text.
type Item = Option<(Value, Vec<String>)>;

/// The raw path items of a document, taken one at a time by each thread
/// that parses them.
struct Items<'t> {
    /// Each item's text, and whether its key is an extension (`x-...`).
    raw: Vec<(&'t RawValue, bool)>,
    lookup: bool,
    /// Whether each item's nesting is to be measured.
    measure: bool,
    next: AtomicUsize,
}

impl<'t> Items<'t> {
    fn of(root: &Part<'t>, lookup: bool, measure: bool) -> Items<'t> {
        let mut raw = Vec::new();
        if let Part::Object(members, places) = root {
            if let Some(Part::Object(items, _)) = places.get("paths").map(|&i| &members[i].1) {
                for (key, part) in items {
                    if let Part::Raw(r) = part {
                        raw.push((*r, key.starts_with("x-")));
                    }
                }
            }
        }
        Items { raw, lookup, measure, next: AtomicUsize::new(0) }
    }

    /// Parse items until none is left; each with its place.
    fn work(&self) -> Vec<(usize, Item)> {
        let mut done = Vec::new();
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&(raw, extension)) = self.raw.get(i) else { return done };
            done.push((i, self.parse(raw, extension)));
        }
    }

    fn parse(&self, raw: &RawValue, extension: bool) -> Item {
        let v: Value = serde_json::from_str(raw.get()).ok()?;
        if self.measure && too_deep(&v) {
            return None;
        }
        let mut refs = Refs { lookup: self.lookup, found: Vec::new() };
        refs.walk(&v, if extension { Role::Any } else { Role::PathItem });
        Some((v, refs.found))
    }

    /// The items of two threads, in order.
    fn merge(&self, mine: Vec<(usize, Item)>, theirs: Vec<(usize, Item)>) -> Vec<Item> {
        let mut all: Vec<Item> = vec![None; self.raw.len()];
        for (i, item) in mine.into_iter().chain(theirs) {
            all[i] = item;
        }
        all
    }
}

/// How deep objects and arrays may nest in a text serde_json parses (a
/// path item is two levels down: in the document, in its `paths`).
const MAX_DEPTH: usize = 127;

/// Whether path item `v` nests deeper than the parser goes.
fn too_deep(v: &Value) -> bool {
    depth(v) > MAX_DEPTH - 2
}

/// How many containers `v` nests, itself counted.
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The document from its first pass and its parsed path items: the
/// references of what was made followed, what they reach parsed.
fn finish(mut root: Part<'_>, items: Vec<Item>, text: &str, lookup: bool) -> Result<Value> {
    let mut refs = Refs { lookup, found: Vec::new() };
    let mut items = items.into_iter();
    if let Part::Object(members, _) = &mut root {
        for (key, part) in members.iter_mut() {
            match part {
                Part::Value(v) => refs.walk(v, if key == "paths" { Role::Paths } else { Role::Any }),
                Part::Object(entries, _) if key == "paths" => {
                    for (_, entry) in entries.iter_mut() {
                        if !matches!(entry, Part::Raw(_)) {
                            continue;
                        }
                        let Some(Some((v, found))) = items.next() else { return Err(whole_error(text)) };
                        refs.found.extend(found);
                        *entry = Part::Value(v);
                    }
                }
                Part::Object(sections, _) => {
                    for (_, s) in sections {
                        if let Part::Value(v) = s {
                            refs.walk(v, Role::Any);
                        }
                    }
                }
                Part::Raw(_) => {}
            }
        }
    }
    let mut seen = HashSet::new();
    while let Some(r) = refs.found.pop() {
        if seen.insert(r.clone()) {
            follow(&mut root, &r, text, &mut refs)?;
        }
    }
    Ok(assemble(root))
}

/// Make `Value`s of what reference `r` reaches, and collect their own
/// references.
fn follow(root: &mut Part, r: &str, text: &str, refs: &mut Refs) -> Result<()> {
    let Some(tokens) = r.strip_prefix('#').and_then(pointer_tokens) else { return Ok(()) };
    // Through the lazy objects first: the members' places.
    let mut path = Vec::new();
    let mut at = &*root;
    for token in &tokens {
        let Part::Object(members, places) = at else { break };
        let Some(&i) = places.get(token) else { return Ok(()) };
        path.push(i);
        at = &members[i].1;
    }
    let mut part = root;
    for &i in &path {
        let Part::Object(members, _) = part else { return Ok(()) };
        part = &mut members[i].1;
    }
    let n = path.len();
    let key = if n >= 1 { tokens[n - 1].as_str() } else { "" };
    let parent = if n >= 2 { tokens[n - 2].as_str() } else { "" };
    let made = matches!(part, Part::Raw(_));
    make(part, key, parent, text, refs)?;
    // A reference into a part: what it points to is read as a whole.
    if let (Part::Value(v), true) = (&*part, n < tokens.len() || !made) {
        if let Some(target) = value_at(v, &tokens[n..]) {
            refs.walk(target, Role::Any);
        }
    }
    Ok(())
}

/// Parse every raw entry in `part` (the member `key` of the object
/// `parent`), collecting the references of each in its role.
fn make(part: &mut Part, key: &str, parent: &str, text: &str, refs: &mut Refs) -> Result<()> {
    match part {
        Part::Raw(raw) => {
            let v = parse_raw(raw, text)?;
            refs.walk(&v, entry_role(parent));
            *part = Part::Value(v);
        }
        // Walked when it was made.
        Part::Value(_) => {}
        Part::Object(members, _) => {
            for (k, p) in members.iter_mut() {
                make(p, k, key, text, refs)?;
            }
        }
    }
    Ok(())
}

/// The `Value` of an entry's text; an error at its place in `text`.
fn parse_raw(raw: &RawValue, text: &str) -> Result<Value> {
    let s = raw.get();
    serde_json::from_str(s).map_err(|e| {
        let err = Error::from_json(&e);
        let offset = (s.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        let (line, column) = line_column(text.as_bytes(), offset);
        let (l, c) = (err.line.unwrap_or(1), err.column.unwrap_or(1));
        if l == 1 {
            err.with_position(line, column + c - 1)
        } else {
            err.with_position(line + l - 1, c)
        }
    })
}

/// The document as a `Value`: entries never reached are null.
fn assemble(part: Part) -> Value {
    match part {
        Part::Value(v) => v,
        Part::Raw(_) => Value::Null,
        Part::Object(members, _) => {
            let mut m = Map::with_capacity(members.len());
            for (k, p) in members {
                m.insert(k, assemble(p));
            }
            Value::Object(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn doc() -> String {
        json!({
            "openapi": "3.0.0",
            "paths": {"/a": {"get": {
                "parameters": [{"$ref": "#/components/parameters/P"}],
                "responses": {"200": {"$ref": "#/components/responses/R"}}
            }}},
            "components": {
                "parameters": {"P": {"name": "p", "in": "query", "schema": {"$ref": "#/components/schemas/S"},
                                     "examples": {"e": {"$ref": "#/components/examples/E"}}}},
                "responses": {"R": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Out"}}}}},
                "schemas": {"S": {"type": "string"}, "Out": {"type": "object"}, "Unused": {"type": "integer"}},
                "examples": {"E": {"value": 1}},
                "securitySchemes": {"k": {"type": "apiKey"}}
            },
            "x-webhooks": {"w": {"post": {}}}
        })
        .to_string()
    }

    #[test]
    fn only_what_the_import_reaches_is_made() {
        let v = parse(&doc(), false).unwrap();
        let c = &v["components"];
        assert_eq!(c["parameters"]["P"]["name"], "p");
        assert_eq!(c["schemas"]["S"], json!({"type": "string"}));
        assert_eq!(c["responses"]["R"]["description"], "ok");
        assert_eq!(c["schemas"]["Out"], Value::Null, "response content is not followed");
        assert_eq!(c["schemas"]["Unused"], Value::Null);
        assert_eq!(c["examples"]["E"], Value::Null, "parameter examples are not followed");
        assert_eq!(c["securitySchemes"]["k"]["type"], "apiKey");
        assert_eq!(v["x-webhooks"], json!({"w": null}), "the keys stay, in order");
        let keys: Vec<_> = c["schemas"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["S", "Out", "Unused"]);
    }

    #[test]
    fn lookups_read_response_content() {
        let v = parse(&doc(), true).unwrap();
        assert_eq!(v["components"]["schemas"]["Out"], json!({"type": "object"}));
    }

    #[test]
    fn references_into_made_parts_and_whole_sections() {
        let text = json!({
            "paths": {"/a": {"post": {"requestBody": {"$ref": "#/components/requestBodies"}}}},
            "components": {"requestBodies": {"B": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}},
                           "schemas": {"A": {"$ref": "#/paths/~1a/post"}}}
        })
        .to_string();
        let v = parse(&text, false).unwrap();
        assert_eq!(v["components"]["schemas"]["A"], json!({"$ref": "#/paths/~1a/post"}));
        assert!(v["components"]["requestBodies"]["B"].is_object());
    }

    #[test]
    fn errors_are_placed_in_the_whole_text() {
        let text = "{\"paths\": {},\n \"components\": {\"schemas\": {\n  \"A\": {\"x\": \"\\ud800\"}},\n \"parameters\": {}},\n \"paths\": {\"/a\": {\"get\": {\"parameters\": [{\"$ref\": \"#/components/schemas/A\"}]}}}}";
        let e = parse(text, false).unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(21)), "{e}");
        assert_eq!(e, Error::from_json(&serde_json::from_str::<Value>(text).unwrap_err()));
        // Unreached, the same entry is no error.
        let text = text.replace("schemas/A", "schemas/B");
        assert!(parse(&text, false).is_ok());
        // Broken text is reported as the parser reports the whole.
        let e = parse("{\"paths\": {\"a\": [1,}}", false).unwrap_err();
        let whole = Error::from_json(&serde_json::from_str::<Value>("{\"paths\": {\"a\": [1,}}").unwrap_err());
        assert_eq!(e, whole);
    }

    /// A document of `n` path items (each over 1 KB, so that 300 make a
    /// large text), with `item` as the path item of `/odd`.
    fn many_paths(n: usize, item: &str) -> String {
        let mut paths: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r##""/p{i}": {{"get": {{"description": "{}", "parameters": [{{"$ref": "#/components/parameters/P{}"}}]}}}}"##,
                    "d".repeat(1000),
                    i % 3
                )
            })
            .collect();
        paths.insert(n / 2, format!("\"/odd\": {item}"));
        paths.push(r##""x-ext": {"$ref": "#/components/schemas/X"}"##.to_string());
        let params: Vec<String> = (0..3)
            .map(|i| format!(r#""P{i}": {{"name": "p{i}", "in": "query", "schema": {{"type": "string"}}}}"#))
            .collect();
        format!(
            r#"{{"openapi": "3.0.0", "paths": {{{}}}, "components": {{"parameters": {{{}}}, "schemas": {{"X": {{"type": "integer"}}, "Unused": {{}}}}}}}}"#,
            paths.join(", "),
            params.join(", ")
        )
    }

    #[test]
    fn path_items_parsed_on_two_threads_come_in_order() {
        let small = many_paths(3, r#"{"get": {"k": 1, "k": 2}}"#);
        let big = many_paths(300, r#"{"get": {"k": 1, "k": 2}}"#);
        assert!(small.len() < crate::par::BIG && big.len() >= crate::par::BIG);
        for text in [&small, &big] {
            let (v, notes) = parse_noted(text, false);
            let v = v.unwrap();
            let whole: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v["paths"], whole["paths"], "every path item, in order");
            let keys: Vec<_> = v["paths"].as_object().unwrap().keys().collect();
            let whole_keys: Vec<_> = whole["paths"].as_object().unwrap().keys().collect();
            assert_eq!(keys, whole_keys);
            assert_eq!(v["components"]["parameters"], whole["components"]["parameters"], "reached from path items");
            assert_eq!(
                v["components"]["schemas"]["X"], whole["components"]["schemas"]["X"],
                "reached from an extension"
            );
            assert_eq!(v["components"]["schemas"]["Unused"], Value::Null);
            assert_eq!(notes, crate::scan::notes(text));
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert_eq!(parse(text, false).unwrap(), v);
        }
    }

    #[test]
    fn items_of_two_threads_merge_by_their_places() {
        let text = many_paths(3, "{}");
        let root = first_pass(&text).unwrap();
        let items = Items::of(&root, false, true);
        assert_eq!(items.raw.len(), 5);
        let item = |n: u64| Some((Value::from(n), vec![format!("#/{n}")]));
        let merged = items.merge(vec![(0, item(0)), (3, item(3)), (4, item(4))], vec![(1, item(1)), (2, item(2))]);
        assert_eq!(merged, (0..5).map(item).collect::<Vec<_>>());
    }

    #[test]
    fn path_items_fail_where_the_whole_text_does() {
        // Nested as deep as the parser goes, then one more; a lone
        // surrogate escape.
        let nested = |n: usize| format!("{{\"get\": {{\"x\": {}1{}}}}}", "[".repeat(n), "]".repeat(n));
        for item in
            [nested(122), nested(123), nested(124), nested(200), r#"{"get": {"description": "\ud800"}}"#.to_string()]
        {
            for n in [3, 300] {
                let text = many_paths(n, &item);
                let whole = serde_json::from_str::<Value>(&text).map_err(|e| Error::from_json(&e));
                let (lazy, notes) = parse_noted(&text, false);
                match whole {
                    Ok(_) => assert!(lazy.is_ok(), "{item:.40}: {lazy:?}"),
                    Err(e) => {
                        assert_eq!(lazy.unwrap_err(), e, "{item:.40}");
                        assert!(notes.is_empty());
                        assert_eq!(parse(&text, false).unwrap_err(), e);
                    }
                }
            }
        }
        // The limit is where it is said to be.
        assert!(serde_json::from_str::<Value>(&many_paths(3, &nested(123))).is_ok());
        assert!(serde_json::from_str::<Value>(&many_paths(3, &nested(124))).is_err());
        // Nested too deep in an entry no `$ref` reaches: no error, in a
        // small text as in a large one.
        for n in [3, 300] {
            let text = many_paths(n, "{}")
                .replace(r#""Unused": {}"#, &format!(r#""Unused": {}1{}"#, "[".repeat(200), "]".repeat(200)));
            assert!(serde_json::from_str::<Value>(&text).is_err());
            let (v, notes) = parse_noted(&text, false);
            assert_eq!(v.unwrap()["components"]["schemas"]["Unused"], Value::Null);
            assert!(notes.is_empty(), "{notes:?}");
        }
    }

    #[test]
    fn repeated_keys_keep_the_first_place_and_last_value() {
        let text = r##"{"components": {"schemas": {"A": 1, "B": 2, "A": 3}}, "paths": {"/x": {"get": {"parameters": [{"$ref": "#/components/schemas/A"}]}}}}"##;
        let lazy = parse(text, false).unwrap();
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(lazy["components"]["schemas"]["A"], whole["components"]["schemas"]["A"]);
        let keys: Vec<_> = lazy["components"]["schemas"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["A", "B"]);
    }
}
