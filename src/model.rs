//! The format-neutral tool model.
//!
//! A tool is a name, a description and an ordered list of arguments; each
//! argument is a JSON Schema node that keeps every keyword it came with, in
//! its original order.  Readers produce this model, writers consume it.

use std::borrow::Borrow;
use std::hash::Hash;

pub use crate::path::{At, Path};
use crate::value::{Map, Value};

/// Hash maps and sets of the names an import meets, hashed with foldhash:
/// the standard SipHash showed in profiles of large imports.  (Its state is
/// randomly initialised, as SipHash's is.)
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// A JSON Schema node (an object), key order kept.
pub type Schema = Map<String, Value>;

/// `get` of a JSON value's member, for a value that may not be an object.
pub trait Field {
    fn field(&self, key: &str) -> Option<&Value>;
    /// Whether the object has `key`.
    fn has(&self, key: &str) -> bool {
        self.field(key).is_some()
    }
}

impl Field for Map<String, Value> {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

impl Field for Value {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.field(key),
            _ => None,
        }
    }
}

/// One tool, in no particular format.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub args: Vec<Arg>,
    /// Keywords of the root parameters schema other than `type`,
    /// `properties` and `required` (e.g. `additionalProperties`, `$schema`).
    pub schema_extra: Schema,
    /// Tool-level fields outside the plist contract, by their JSON name
    /// (`title`, `annotations`, `outputSchema`, `strict`, ...).
    pub extra: Schema,
}

/// One top-level argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: String,
    pub optional: bool,
    /// The argument's schema without its name: `type`, `description`, ...
    pub schema: Schema,
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What kind of problem a [`Problem`] is: what code decides on (where
/// the problem is shown, whether it is left out), where its message is
/// for people.  Each has a stable name ([`Code::name`]), the symbol Lisp
/// gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    // A tool plist, as the validator reads it.
    /// A value that must be a plist is not one.
    NotPlist,
    /// A key given twice in a plist or a JSON object.
    DuplicateKey,
    /// A tool key gptel and llm do not use.
    UnknownToolKey,
    /// A key that must be there is missing (`:name`, an argument's `:description`).
    MissingKey,
    /// No `:description` for the tool.
    NoDescription,
    /// A value of the wrong kind (a string where a list belongs...).
    WrongKind,
    /// A tool name providers refuse.
    InvalidName,
    /// A tool name that is not snake_case.
    NameStyle,
    /// A flag that should be t or nil.
    NotBoolean,
    /// `:function` names a function not defined (yet).
    UndefinedFunction,
    /// `:function` is not callable.
    NotCallable,
    /// The function takes another number of arguments than the tool gives.
    Arity,
    /// Two arguments of one name.
    DuplicateArgument,
    /// Two properties of one name.
    DuplicateProperty,
    /// No `:type`: any value is accepted.
    NoType,
    /// A `:type` that is not written as a JSON type should be.
    BadType,
    /// A type name that is no JSON type.
    UnknownType,
    /// A non-standard type name read as a JSON type.
    TypeAlias,
    /// An array without `:items`.
    NoItems,
    /// An object without `:properties`.
    NoProperties,
    /// A keyword that only applies to another type.
    Misplaced,
    /// `required` names no property.
    UnknownRequired,
    /// A `pattern` that is not a regular expression the checker can use.
    BadPattern,
    /// A pattern past the import's budget, kept unchecked.
    PatternNotChecked,
    /// An empty enum.
    EmptyEnum,
    /// An enum whose values are not strings.
    EnumNotStrings,
    /// Enum values that do not match the type.
    EnumType,
    // Reading and repairing documents.
    /// A tool that cannot be read, left out of an import.
    ToolLeftOut,
    /// Two tools of one import named alike.
    DuplicateToolName,
    /// A key of a spec file that would choose what runs (ignored).
    ReservedKey,
    /// A value ignored, for its kind or its place.
    Ignored,
    /// A keyword or value dropped.
    Dropped,
    /// A value converted or moved to another place.
    Moved,
    /// A missing part assumed (a type, items).
    Assumed,
    /// A tool or argument given another name.
    Renamed,
    /// A `$ref` that cannot be followed as it is.
    Reference,
    /// A slip in JSON text repaired.
    Repaired,
    /// An integer beyond 64 bits, read as a float.
    BigInteger,
    /// A part defined but not used.
    Unused,
    /// A default value that is not one the schema allows.
    BadDefault,
    /// How many more problems of a kind were not listed.
    MoreNotListed,
    /// Something a format's reader or writer does not support, left out or changed.
    Unsupported,
    /// A part of a document skipped (an OpenAPI path item, operation, parameter).
    Skipped,
    /// A selection (tag, path) that matches no operation.
    NoMatch,
    // Arguments of a call.
    /// A required argument missing from a call.
    MissingArgument,
    /// An argument that does not match its schema, or arguments that are no object.
    InvalidArgument,
}

impl Code {
    /// The stable name of the code, kebab-case: the symbol Lisp gets.
    pub fn name(self) -> &'static str {
        match self {
            Code::NotPlist => "not-plist",
            Code::DuplicateKey => "duplicate-key",
            Code::UnknownToolKey => "unknown-tool-key",
            Code::MissingKey => "missing-key",
            Code::NoDescription => "no-description",
            Code::WrongKind => "wrong-kind",
            Code::InvalidName => "invalid-name",
            Code::NameStyle => "name-style",
            Code::NotBoolean => "not-boolean",
            Code::UndefinedFunction => "undefined-function",
            Code::NotCallable => "not-callable",
            Code::Arity => "arity",
            Code::DuplicateArgument => "duplicate-argument",
            Code::DuplicateProperty => "duplicate-property",
            Code::NoType => "no-type",
            Code::BadType => "bad-type",
            Code::UnknownType => "unknown-type",
            Code::TypeAlias => "type-alias",
            Code::NoItems => "no-items",
            Code::NoProperties => "no-properties",
            Code::Misplaced => "misplaced",
            Code::UnknownRequired => "unknown-required",
            Code::BadPattern => "bad-pattern",
            Code::PatternNotChecked => "pattern-not-checked",
            Code::EmptyEnum => "empty-enum",
            Code::EnumNotStrings => "enum-not-strings",
            Code::EnumType => "enum-type",
            Code::ToolLeftOut => "tool-left-out",
            Code::DuplicateToolName => "duplicate-tool-name",
            Code::ReservedKey => "reserved-key",
            Code::Ignored => "ignored",
            Code::Dropped => "dropped",
            Code::Moved => "moved",
            Code::Assumed => "assumed",
            Code::Renamed => "renamed",
            Code::Reference => "reference",
            Code::Repaired => "repaired",
            Code::BigInteger => "big-integer",
            Code::Unused => "unused",
            Code::BadDefault => "bad-default",
            Code::MoreNotListed => "more-not-listed",
            Code::Unsupported => "unsupported",
            Code::Skipped => "skipped",
            Code::NoMatch => "no-match",
            Code::MissingArgument => "missing-argument",
            Code::InvalidArgument => "invalid-argument",
        }
    }
}

/// A problem found in a spec: severity, what kind it is, where, and a
/// message saying what would be right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub severity: Severity,
    pub code: Code,
    pub path: Path,
    pub message: String,
}

impl Problem {
    pub fn error(code: Code, path: impl Into<Path>, message: impl Into<String>) -> Self {
        Problem { severity: Severity::Error, code, path: path.into(), message: message.into() }
    }
    pub fn warning(code: Code, path: impl Into<Path>, message: impl Into<String>) -> Self {
        Problem { severity: Severity::Warning, code, path: path.into(), message: message.into() }
    }
}

impl Tool {
    /// The root parameters schema: `{"type":"object","properties":{..},"required":[..]}`
    /// followed by the preserved root keywords, in the order the tool
    /// was read in when it was another (see [`KEY_ORDER`]).  Nested
    /// `optional` markers are not resolved here: see
    /// [`crate::schema::finalize`].
    pub fn parameters(&self) -> Schema {
        parameters_of(self.args.clone(), self.schema_extra.clone())
    }
}

/// The root keyword of [`Tool::schema_extra`] under which a reader
/// records the order a tool's keys were written in, where it is not the
/// one the writers give by themselves: an object of up to three lists,
///
/// - `tool`: the keys of the tool object (`args` standing for its
///   parameters schema, whatever the dialect calls it), where `name`,
///   `title`, `description` and the parameters did not come first in that
///   order (Python MCP servers list them alphabetically);
/// - `schema`: the keys of the root parameters schema, where `type`,
///   `properties` and `required` did not come first in that order
///   (`$schema` first, or pydantic's `properties, required, type, title`);
/// - `required`: the root's `required` list, where it did not follow the
///   order of the properties.
///
/// Tools read in the writers' own order carry none (nothing is made for
/// them).  Writers apply it ([`put_in_order`]) and never write it; keys
/// it does not name (added since) keep their place after the key they
/// followed.  The plist carries it in `:schema-extra`, which gptel and
/// llm ignore.
pub const KEY_ORDER: &str = "x-toolspec-order";

/// [`Tool::parameters`] of a tool's `args` and `schema_extra`, which are
/// moved into it.
pub fn parameters_of(args: Vec<Arg>, mut schema_extra: Schema) -> Schema {
    let order = take_order(&mut schema_extra);
    parameters_in_order(args, schema_extra, order.as_ref())
}

/// The [`KEY_ORDER`] record of `schema_extra`, taken out of it.
pub fn take_order(schema_extra: &mut Schema) -> Option<Value> {
    if schema_extra.is_empty() {
        return None;
    }
    schema_extra.shift_remove(KEY_ORDER)
}

/// [`parameters_of`], `schema_extra` without its [`KEY_ORDER`] record,
/// which is `order`.
pub fn parameters_in_order(args: Vec<Arg>, schema_extra: Schema, order: Option<&Value>) -> Schema {
    let mut root = Schema::new();
    root.insert("type".into(), Value::from("object"));
    let required: Vec<Value> = match order.and_then(|o| o.get("required")).and_then(Value::as_array) {
        Some(listed) => required_in_order(&args, listed),
        None => args.iter().filter(|a| !a.optional).map(|a| Value::from(a.name.clone())).collect(),
    };
    let mut props = Schema::with_capacity(args.len());
    for arg in args {
        props.insert(arg.name, Value::Object(arg.schema));
    }
    root.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    for (k, v) in schema_extra {
        root.insert(k, v);
    }
    if let Some(Value::Array(keys)) = order.and_then(|o| o.get("schema")) {
        put_in_order(&mut root, keys, |k| k);
    }
    root
}

/// The names of the required arguments of `args`: those `listed` in its
/// order, then any other in argument order.
fn required_in_order(args: &[Arg], listed: &[Value]) -> Vec<Value> {
    let mut wanted: Seen<&str> = Seen::default();
    for a in args.iter().filter(|a| !a.optional) {
        wanted.insert(a.name.as_str());
    }
    let mut out: Seen<&str> = Seen::default();
    for name in listed.iter().filter_map(Value::as_str) {
        if wanted.contains(name) {
            out.insert(name);
        }
    }
    for &name in wanted.names() {
        out.insert(name);
    }
    out.names().iter().map(|n| Value::from(*n)).collect()
}

/// Put the members of `map` in the order of `keys` (JSON strings), each
/// member's key seen through `alias` (a dialect's name for a key of the
/// order).  A member `keys` does not name stays after the member it
/// followed (first, if it came before every named one).
pub fn put_in_order(map: &mut Schema, keys: &[Value], alias: impl Fn(&str) -> &str) {
    let rank = |k: &str| keys.iter().position(|o| o.as_str() == Some(alias(k)));
    // Already in order: nothing to move, as for a tool written again in
    // the dialect it was read from, most of the time.
    let mut last = None;
    if map.keys().filter_map(|k| rank(k)).all(|r| last.replace(r).is_none_or(|l| l < r)) {
        return;
    }
    // Each member sorted by the rank of the last named member up to it
    // (0 before any), stably: a member not named stays after the one it
    // followed.
    let mut group = 0;
    let mut members: Vec<(usize, (String, Value))> = Vec::with_capacity(map.len());
    for (k, v) in std::mem::take(map) {
        if let Some(r) = rank(&k) {
            group = r + 1;
        }
        members.push((group, (k, v)));
    }
    members.sort_by_key(|(g, _)| *g);
    map.extend(members.into_iter().map(|(_, m)| m));
}

/// Join a path and a key: `a.b`, or `b` at the root.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        return key.to_string();
    }
    // Not `format!`: paths are joined for every node read, and the
    // formatting machinery showed in profiles.
    let mut s = String::with_capacity(path.len() + 1 + key.len());
    s.push_str(path);
    s.push('.');
    s.push_str(key);
    s
}

/// Join a path and an index: `a[3]`.
pub fn index(path: &str, i: usize) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(i);
    let mut s = String::with_capacity(path.len() + 2 + digits.len());
    s.push_str(path);
    s.push('[');
    s.push_str(digits);
    s.push(']');
    s
}

/// Names (keys of an object, properties...) seen so far, in their order:
/// looked through one by one while they are few, as most are, through a
/// hash set beyond, so that many names still cost linear time.
pub struct Seen<K> {
    names: Vec<K>,
    set: Option<FastSet<K>>,
}

impl<K> Default for Seen<K> {
    fn default() -> Self {
        Seen { names: Vec::new(), set: None }
    }
}

impl<K: Hash + Eq + Clone> Seen<K> {
    /// Names up to this many are looked through one by one.
    pub const FEW: usize = 16;

    pub fn contains<Q: Hash + Eq + ?Sized>(&self, name: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        match &self.set {
            Some(set) => set.contains(name),
            None => self.names.iter().any(|n| n.borrow() == name),
        }
    }

    /// Add `name`; false if it was seen before.
    pub fn insert(&mut self, name: K) -> bool {
        if self.contains(&name) {
            return false;
        }
        match &mut self.set {
            Some(set) => {
                set.insert(name.clone());
            }
            None if self.names.len() >= Self::FEW => {
                self.set = Some(self.names.iter().cloned().chain([name.clone()]).collect())
            }
            None => {}
        }
        self.names.push(name);
        true
    }

    /// Forget every name, keeping the room made for them.
    pub fn clear(&mut self) {
        self.names.clear();
        self.set = None;
    }

    /// The names seen, in their order.
    pub fn names(&self) -> &[K] {
        &self.names
    }
}

/// Names for a message, comma-separated: the first `max` of them, then
/// how many more (a message about 100,000 names stays short).
pub fn some_names<S: AsRef<str>>(names: &[S], max: usize) -> String {
    let mut out: Vec<&str> = names.iter().take(max).map(AsRef::as_ref).collect();
    let more = names.len().saturating_sub(max);
    let tail = format!("and {more} more");
    if more > 0 {
        out.push(&tail);
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_small_and_large_objects_are_found_as_by_get() {
        for size in [0, 1, 2, crate::value::INDEXED, crate::value::INDEXED + 1, 40] {
            let mut o = Map::new();
            for i in 0..size {
                o.insert(format!("k{i}"), Value::from(i));
            }
            for i in 0..size + 2 {
                let key = format!("k{i}");
                assert_eq!(o.field(&key), (i < size).then(|| Value::from(i)).as_ref(), "size {size}, {key}");
                assert_eq!(o.has(&key), i < size, "size {size}, {key}");
            }
            // A key that is a prefix or extension of a present one.
            assert_eq!(o.field("k"), None);
            assert_eq!(o.field("k00"), None);
            let v = Value::Object(o);
            assert_eq!(v.field("k0"), v.get("k0"));
        }
        assert_eq!(Value::from("k0").field("k0"), None);
        assert_eq!(crate::json!([1]).field("0"), None);
    }

    #[test]
    fn members_are_put_in_a_recorded_order_the_others_after_their_predecessor() {
        let order = |keys: &[&str]| keys.iter().map(|k| Value::from(*k)).collect::<Vec<Value>>();
        let keys = |m: &Schema| m.keys().cloned().collect::<Vec<String>>();
        let mut m = Map::new();
        for k in ["type", "name", "extra", "params", "description"] {
            m.insert(k.into(), Value::from(k));
        }
        put_in_order(&mut m, &order(&["description", "args", "name"]), |k| if k == "params" { "args" } else { k });
        assert_eq!(keys(&m), ["type", "description", "params", "name", "extra"]);
        assert_eq!(m["params"], "params");
        let before = m.clone();
        put_in_order(&mut m, &order(&["description", "params"]), |k| k);
        assert_eq!(keys(&m), keys(&before));
    }

    #[test]
    fn seen_names_are_found_before_and_after_the_set_takes_over() {
        for n in [3, Seen::<String>::FEW, Seen::<String>::FEW + 1, 100] {
            let mut seen = Seen::default();
            for i in 0..n {
                assert!(seen.insert(format!("k{i}")), "{i} of {n}");
            }
            for i in 0..n {
                assert!(seen.contains(format!("k{i}").as_str()), "{i} of {n}");
                assert!(!seen.insert(format!("k{i}")), "{i} of {n}");
            }
            assert!(!seen.contains("k-1"));
            assert_eq!(seen.names().len(), n);
            assert_eq!(seen.names().last(), Some(&format!("k{}", n - 1)));
        }
    }

    #[test]
    fn paths_are_written_as_join_and_index_write_them() {
        let root = At::Root("");
        assert_eq!(root.key("a").to_string(), join("", "a"));
        assert_eq!(root.index(2).to_string(), index("", 2));
        let base = At::Root("tools[0].inputSchema");
        let props = base.key("properties");
        let x = props.key("x");
        let item = x.key("anyOf");
        assert_eq!(
            item.index(1).key("type").to_string(),
            join(&index(&join(&join(&join("tools[0].inputSchema", "properties"), "x"), "anyOf"), 1), "type")
        );
        assert_eq!(root.index(0).key("b").to_string(), "[0].b");
        for i in [0, 9, 10, 1234567, usize::MAX] {
            assert_eq!(index("a.b", i), format!("a.b[{i}]"));
        }
        assert_eq!(join("a[1]", "é"), "a[1].é");
    }
}
