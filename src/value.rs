//! JSON values, key order kept: what every reader makes and every writer
//! reads.
//!
//! The API is `serde_json`'s (`Value`, `Map`, `json!`), so that code reads
//! the same; the objects differ.  `serde_json` keeps key order with an
//! `IndexMap`: every object hashes each of its keys with SipHash and
//! makes two allocations, a vector of members and a hash table, though
//! most objects of a tool spec have fewer than ten keys.  Here an object
//! is its vector of members alone until it grows past [`INDEXED`] keys;
//! only then is a table of the members' places made, hashed with
//! foldhash.  Parsing the bench's catalog of 3,254 tools, or GitHub's
//! description, takes about 0.7 of the time it takes into
//! `serde_json::Value` (`bench/history.md`, round 16).
//!
//! Objects behave as `serde_json`'s ordered maps do: a key inserted again
//! keeps its place and takes the new value, equality ignores key order,
//! `shift_remove` keeps the order of the others.  `serde_json::Number` is
//! used as it is, so numbers are read and written exactly as before.
//! Where a crate needs `serde_json::Value` (the `jsonschema` validator),
//! [`Value::to_serde`] makes one.

use std::fmt;
use std::hash::BuildHasher;
use std::ops;
use std::sync::LazyLock;

use hashbrown::HashTable;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

pub use serde_json::Number;

/// Objects of more keys than this have a table of their keys' places;
/// smaller ones are searched key by key, which costs less than hashing.
pub const INDEXED: usize = 16;

/// The hasher of the tables: foldhash, seeded at random once per process.
static HASHER: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);

fn hash(key: &str) -> u64 {
    HASHER.hash_one(key)
}

/// Any JSON value.
#[derive(Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map<String, Value>),
}

/// A JSON object: its members in order, and past [`INDEXED`] members a
/// table of their places.  Only `Map<String, Value>` exists; the type
/// parameters are there so that code may name it as `serde_json`'s.
pub struct Map<K = String, V = Value> {
    entries: Vec<(K, V)>,
    /// The place of each member, by its key's hash; `None` while the
    /// object is small.  Always in step with `entries` otherwise.
    index: Option<Box<HashTable<u32>>>,
}

/// The members of an object, in order.
pub type Iter<'a> =
    std::iter::Map<std::slice::Iter<'a, (String, Value)>, fn(&'a (String, Value)) -> (&'a String, &'a Value)>;
/// The members of an object, in order, values mutable.
pub type IterMut<'a> = std::iter::Map<
    std::slice::IterMut<'a, (String, Value)>,
    fn(&'a mut (String, Value)) -> (&'a String, &'a mut Value),
>;
/// The members of an object, in order, moved out.
pub type IntoIter = std::vec::IntoIter<(String, Value)>;

fn pair_ref((k, v): &(String, Value)) -> (&String, &Value) {
    (k, v)
}

fn pair_mut((k, v): &mut (String, Value)) -> (&String, &mut Value) {
    (k, v)
}

impl Map<String, Value> {
    pub fn new() -> Self {
        Map { entries: Vec::new(), index: None }
    }

    pub fn with_capacity(n: usize) -> Self {
        Map { entries: Vec::with_capacity(n), index: None }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }

    /// The place of `key` among the members.
    #[inline]
    fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            None => self.entries.iter().position(|(k, _)| k == key),
            Some(table) => {
                let entries = &self.entries;
                table.find(hash(key), |&i| entries[i as usize].0 == key).map(|&i| i as usize)
            }
        }
    }

    /// Make the table of places again, or drop it if the object is small.
    fn reindex(&mut self) {
        if self.entries.len() <= INDEXED {
            self.index = None;
            return;
        }
        let mut table = HashTable::with_capacity(self.entries.len());
        for (i, (k, _)) in self.entries.iter().enumerate() {
            let entries = &self.entries;
            table.insert_unique(hash(k), i as u32, |&j| hash(&entries[j as usize].0));
        }
        self.index = Some(Box::new(table));
    }

    /// Add a member known not to be there.
    fn push(&mut self, key: String, value: Value) -> usize {
        let i = self.entries.len();
        match &mut self.index {
            Some(table) => {
                let entries = &self.entries;
                table.insert_unique(hash(&key), i as u32, |&j| hash(&entries[j as usize].0));
                self.entries.push((key, value));
            }
            None => {
                self.entries.push((key, value));
                if self.entries.len() > INDEXED {
                    self.reindex();
                }
            }
        }
        i
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.find(key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.find(key).map(|i| &mut self.entries[i].1)
    }

    pub fn get_key_value(&self, key: &str) -> Option<(&String, &Value)> {
        self.find(key).map(|i| pair_ref(&self.entries[i]))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// Set `key` to `value`.  A key already there keeps its place and
    /// its old value is returned.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.find(&key) {
            Some(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            None => {
                self.push(key, value);
                None
            }
        }
    }

    /// Set `key` to `value` at place `at` (at most the length), moving
    /// the key there if it is already elsewhere; its old value is
    /// returned.
    pub fn shift_insert(&mut self, at: usize, key: String, value: Value) -> Option<Value> {
        let old = self.shift_remove(&key);
        self.entries.insert(at, (key, value));
        if self.index.is_some() || self.entries.len() > INDEXED {
            self.reindex();
        }
        old
    }

    /// Remove `key`, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        self.shift_remove_entry(key).map(|(_, v)| v)
    }

    /// Remove `key` and return it with its value, keeping the order of
    /// the others.
    pub fn shift_remove_entry(&mut self, key: &str) -> Option<(String, Value)> {
        let i = self.find(key)?;
        let pair = self.entries.remove(i);
        if self.index.is_some() {
            self.reindex();
        }
        Some(pair)
    }

    /// Keep the members for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        let before = self.entries.len();
        self.entries.retain_mut(|(k, v)| keep(k, v));
        if self.entries.len() != before && self.index.is_some() {
            self.reindex();
        }
    }

    /// The member of `key`, to fill in if it is not there.
    pub fn entry(&mut self, key: impl Into<String>) -> Entry<'_> {
        let key = key.into();
        match self.find(&key) {
            Some(i) => Entry::Occupied(OccupiedEntry { map: self, i }),
            None => Entry::Vacant(VacantEntry { map: self, key }),
        }
    }

    pub fn iter(&self) -> Iter<'_> {
        self.entries.iter().map(pair_ref as fn(&(String, Value)) -> (&String, &Value))
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        self.entries.iter_mut().map(pair_mut as fn(&mut (String, Value)) -> (&String, &mut Value))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    /// The first member, if any.
    pub fn first(&self) -> Option<(&String, &Value)> {
        self.entries.first().map(pair_ref)
    }

    /// Move every member of `other` in, emptying it.
    pub fn append(&mut self, other: &mut Map) {
        for (k, v) in std::mem::take(&mut other.entries) {
            self.insert(k, v);
        }
        other.index = None;
    }
}

/// A member of an object, there or not, from [`Map::entry`].
pub enum Entry<'a> {
    Occupied(OccupiedEntry<'a>),
    Vacant(VacantEntry<'a>),
}

pub struct OccupiedEntry<'a> {
    map: &'a mut Map,
    i: usize,
}

pub struct VacantEntry<'a> {
    map: &'a mut Map,
    key: String,
}

impl<'a> Entry<'a> {
    pub fn or_insert(self, default: Value) -> &'a mut Value {
        self.or_insert_with(|| default)
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> Value) -> &'a mut Value {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default()),
        }
    }

    pub fn or_default(self) -> &'a mut Value {
        self.or_insert_with(Value::default)
    }

    pub fn key(&self) -> &String {
        match self {
            Entry::Occupied(o) => &o.map.entries[o.i].0,
            Entry::Vacant(v) => &v.key,
        }
    }
}

impl<'a> OccupiedEntry<'a> {
    pub fn get(&self) -> &Value {
        &self.map.entries[self.i].1
    }
    pub fn get_mut(&mut self) -> &mut Value {
        &mut self.map.entries[self.i].1
    }
    pub fn into_mut(self) -> &'a mut Value {
        &mut self.map.entries[self.i].1
    }
    pub fn insert(&mut self, value: Value) -> Value {
        std::mem::replace(self.get_mut(), value)
    }
}

impl<'a> VacantEntry<'a> {
    pub fn insert(self, value: Value) -> &'a mut Value {
        let i = self.map.push(self.key, value);
        &mut self.map.entries[i].1
    }
}

impl Default for Map<String, Value> {
    fn default() -> Self {
        Map::new()
    }
}

impl Clone for Map<String, Value> {
    fn clone(&self) -> Self {
        Map { entries: self.entries.clone(), index: self.index.clone() }
    }
}

/// Equal when both have the same keys with equal values, in any order
/// (as `serde_json`'s ordered maps compare).
impl PartialEq for Map<String, Value> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (self.entries.iter().zip(&other.entries).all(|(a, b)| a == b)
                || self.iter().all(|(k, v)| other.get(k) == Some(v)))
    }
}

impl fmt::Debug for Map<String, Value> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl ops::Index<&str> for Map<String, Value> {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or_else(|| panic!("no member {key:?} in the object"))
    }
}

impl<'a> IntoIterator for &'a Map<String, Value> {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map<String, Value> {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;
    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl IntoIterator for Map<String, Value> {
    type Item = (String, Value);
    type IntoIter = IntoIter;
    fn into_iter(self) -> IntoIter {
        self.entries.into_iter()
    }
}

impl Extend<(String, Value)> for Map<String, Value> {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, Value)> for Map<String, Value> {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut m = Map::with_capacity(iter.size_hint().0);
        m.extend(iter);
        m
    }
}

// ---------------------------------------------------------------- Value

static NULL: Value = Value::Null;

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
    pub fn is_u64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_u64())
    }
    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }
    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }
    pub fn as_null(&self) -> Option<()> {
        self.is_null().then_some(())
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The member or item `index` names, if there is one.
    pub fn get<I: Index>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }

    pub fn get_mut<I: Index>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }

    /// The value a JSON Pointer (RFC 6901) names: `""` is the value
    /// itself, `/a/0` item 0 of member `a`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |v, token| {
            let token = token.replace("~1", "/").replace("~0", "~");
            match v {
                Value::Object(o) => o.get(&token),
                Value::Array(a) => parse_index(&token).and_then(|i| a.get(i)),
                _ => None,
            }
        })
    }

    /// Take the value, leaving null.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// The same value as a `serde_json::Value`, for crates that take one.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Value::to_serde).collect()),
            Value::Object(o) => serde_json::Value::Object(o.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect()),
        }
    }
}

/// An array index in a JSON Pointer: digits, no sign, no leading zero.
fn parse_index(s: &str) -> Option<usize> {
    if s.starts_with('+') || (s.starts_with('0') && s.len() != 1) {
        return None;
    }
    s.parse().ok()
}

/// What indexes a value: a key of an object, an index of an array.
pub trait Index {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// For `value[key] = ..`: null becomes an object, a missing key null.
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

impl Index for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array().and_then(|a| a.get(*self))
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut().and_then(|a| a.get_mut(*self))
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        match v {
            Value::Array(a) => {
                let len = a.len();
                a.get_mut(*self).unwrap_or_else(|| panic!("index {self} out of range for an array of length {len}"))
            }
            _ => panic!("cannot index a JSON {} with {self}", kind(v)),
        }
    }
}

impl Index for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object().and_then(|o| o.get(self))
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut().and_then(|o| o.get_mut(self))
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        match v {
            Value::Object(o) => o.entry(self).or_insert(Value::Null),
            _ => panic!("cannot index a JSON {} with {self:?}", kind(v)),
        }
    }
}

impl Index for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `value[key]`: null when there is no such member or item.
impl<I: Index> ops::Index<I> for Value {
    type Output = Value;
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

impl<I: Index> ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Number(n) => write!(f, "Number({n})"),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Array(a) => {
                f.write_str("Array ")?;
                f.debug_list().entries(a).finish()
            }
            Value::Object(o) => {
                f.write_str("Object ")?;
                fmt::Debug::fmt(o, f)
            }
        }
    }
}

/// The value as JSON text; `{:#}` indents it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let text = if f.alternate() { serde_json::to_string_pretty(self) } else { serde_json::to_string(self) };
        f.write_str(&text.map_err(|_| fmt::Error)?)
    }
}

impl std::str::FromStr for Value {
    type Err = serde_json::Error;
    fn from_str(s: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str(s)
    }
}

// ---------------------------------------------------------- conversions

macro_rules! from_integer {
    ($as:ident, $wide:ty: $($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from(n))
            }
        }
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.$as() == Some(*other as $wide)
            }
        }
    )*};
}
from_integer!(as_i64, i64: i8 i16 i32 i64 isize);
from_integer!(as_u64, u64: u8 u16 u32 u64 usize);

impl From<f64> for Value {
    /// A finite number; NaN and the infinities are null, as JSON has no form for them.
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::from(f as f64)
    }
}

impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<std::borrow::Cow<'_, str>> for Value {
    fn from(s: std::borrow::Cow<'_, str>) -> Value {
        Value::String(s.into_owned())
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<Value> for str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<Value> for &str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<Value> for String {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(items: &[T]) -> Value {
        Value::Array(items.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::Null
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Value {
        Value::Array(iter.into_iter().map(Into::into).collect())
    }
}

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n),
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(a) => Value::Array(a.into_iter().map(Value::from).collect()),
            serde_json::Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, Value::from(v))).collect()),
        }
    }
}

/// A [`Value`] written as JSON, as `serde_json::json!` writes one: the
/// expressions interpolated may be of any type that serialises.
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        $crate::value::Value::from(::serde_json::json!($($json)+))
    };
}

// ---------------------------------------------------------- compact text

impl Value {
    /// The compact JSON text of the value: byte for byte what
    /// `serde_json::to_string` writes, made without its serializer's
    /// calls per value and with the runs of a string that need no escape
    /// copied whole, found eight bytes at a time (a tool's compact text
    /// is mostly its descriptions).  Exporting the bench's catalog
    /// writes 2.3 MB of them (`make bench`, `toolspec-bench-export`).
    pub fn to_compact_string(&self) -> String {
        self.to_compact_string_in(256)
    }

    /// [`Value::to_compact_string`] into a string made with room for
    /// `capacity` bytes: a text about that long is written without
    /// growing its string.
    pub fn to_compact_string_in(&self, capacity: usize) -> String {
        let mut out = String::with_capacity(capacity);
        write_compact(self, &mut out);
        out
    }
}

fn write_compact(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // Numbers as serde_json writes them (integers, shortest floats).
        Value::Number(n) => out.push_str(&serde_json::to_string(n).expect("a number always serialises")),
        Value::String(s) => write_escaped(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_escaped(k, out);
                out.push(':');
                write_compact(x, out);
            }
            out.push('}');
        }
    }
}

/// A one in each byte of a word, and the high bit of each byte.
const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGHS: u64 = ONES << 7;

/// Whether one of the eight bytes of `x` is a control character, `"` or
/// `\\` (exactly whether; not which).
fn escapes_in(x: u64) -> bool {
    (x.wrapping_sub(ONES * 0x20) & !x & HIGHS != 0) || has_byte(x, b'"') | has_byte(x, b'\\') != 0
}

/// The high bit of each byte of `word` that is `byte`, and maybe of
/// bytes after one that is: the lowest bit set marks the first.
pub(crate) fn has_byte(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The escape serde_json writes for each byte, 0 for none: `"`, `\\`,
/// the short escapes of five control characters, `u` for the others.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether a byte of `bytes` needs an escape, eight bytes at a time.
fn needs_escape(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if escapes_in(u64::from_le_bytes(chunk.try_into().expect("eight bytes"))) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| ESCAPE[usize::from(b)] != 0)
}

/// `s` as a JSON string, escaped as serde_json escapes it.
fn write_escaped(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Most strings need no escape: copied whole.
    if !needs_escape(s.as_bytes()) {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let e = ESCAPE[usize::from(b)];
        if e == 0 {
            continue;
        }
        // `i` is at an ASCII byte: a character boundary.
        out.push_str(&s[start..i]);
        out.push('\\');
        out.push(char::from(e));
        if e == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

// ---------------------------------------------------------------- serde

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(t) => s.serialize_str(t),
            Value::Array(a) => a.serialize(s),
            Value::Object(o) => o.serialize(s),
        }
    }
}

impl Serialize for Map<String, Value> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Through the visitor that also notes what the scan of a text may find
/// ([`Noting`]), its note dropped: one way to build a value.
impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Noting(&std::cell::Cell::new(false)))
    }
}

/// How a JSON value is deserialised (`Value`'s `Deserialize` is this,
/// with a flag it drops), setting its flag where [`crate::scan::notes`] may find
/// something: an object giving a key twice, or a number read as a double
/// that may be an integer beyond 64 bits (an integral double of at least
/// 2^63 in magnitude; `1e19` is one too, and the scan then finds nothing).
#[derive(Clone, Copy)]
pub struct Noting<'f>(pub &'f std::cell::Cell<bool>);

impl<'de> DeserializeSeed<'de> for Noting<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Noting<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        // Integers of 19 digits or more that fit in no 64-bit integer,
        // and only they among integer literals, are read as doubles of
        // at least 2^63 in magnitude.
        if n.fract() == 0.0 && n.abs() >= 2f64.powi(63) {
            self.0.set(true);
        }
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            if members.insert(key, value).is_some() {
                self.0.set(true);
            }
        }
        Ok(Value::Object(members))
    }
}

impl<'de> Deserialize<'de> for Map<String, Value> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(o) => Ok(o),
            other => Err(de::Error::invalid_type(unexpected(&other), &"a JSON object")),
        }
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => de::Unexpected::Unsigned(u),
            (_, Some(i), _) => de::Unexpected::Signed(i),
            (_, _, Some(f)) => de::Unexpected::Float(f),
            _ => de::Unexpected::Other("number"),
        },
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: &Map) -> Vec<&str> {
        m.keys().map(String::as_str).collect()
    }

    #[test]
    fn members_keep_their_order_and_a_repeated_key_its_first_place() {
        for n in [3, INDEXED, INDEXED + 1, 5 * INDEXED] {
            let text = format!(
                "{{{}, \"k1\": \"again\"}}",
                (0..n).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", ")
            );
            let v: Value = serde_json::from_str(&text).unwrap();
            let o = v.as_object().unwrap();
            assert_eq!(o.len(), n, "{n} keys");
            assert_eq!(keys(o), (0..n).map(|i| format!("k{i}")).collect::<Vec<_>>(), "{n} keys");
            assert_eq!(o.get("k1"), Some(&Value::from("again")));
            assert_eq!(o.get(&format!("k{}", n - 1)), Some(&Value::from(n - 1)));
            assert_eq!(o.get("absent"), None);
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                text.replace("\"k1\": 1, ", "\"k1\": \"again\", ")
                    .replace(", \"k1\": \"again\"}", "}")
                    .replace(": ", ":")
                    .replace(", ", ",")
            );
        }
    }

    #[test]
    fn removing_and_retaining_keep_the_order_and_the_lookups_right() {
        for n in [4, INDEXED + 3, 4 * INDEXED] {
            let mut m: Map = (0..n).map(|i| (format!("k{i}"), Value::from(i))).collect();
            assert_eq!(m.shift_remove("k2"), Some(Value::from(2)));
            assert_eq!(m.shift_remove("k2"), None);
            m.retain(|k, _| k != "k0");
            let want: Vec<String> = (1..n).filter(|&i| i != 2).map(|i| format!("k{i}")).collect();
            assert_eq!(keys(&m), want);
            for (i, k) in want.iter().enumerate() {
                assert_eq!(m.get(k), Some(&Value::from(if i == 0 { 1 } else { i + 2 })), "{k} of {n}");
            }
            *m.entry("k1").or_insert(Value::Null) = Value::from("one");
            m.entry("new").or_insert(Value::Bool(true));
            assert_eq!(m["k1"], "one");
            assert_eq!(keys(&m).last(), Some(&"new"));
            assert!(m.contains_key("new") && !m.contains_key("k0"));
        }
    }

    #[test]
    fn objects_are_equal_whatever_their_key_order() {
        let a: Value = serde_json::from_str(r#"{"a": 1, "b": [true, null], "c": {"x": "y"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"c": {"x": "y"}, "a": 1, "b": [true, null]}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"c": {"x": "z"}, "a": 1, "b": [true, null]}"#).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.to_serde(), b.to_serde());
        assert_eq!(Value::from(a.to_serde()), a);
    }

    #[test]
    fn text_numbers_and_pointers_read_and_write_as_serde_json_does() {
        let text = r#"{"n":-3,"u":18446744073709551615,"f":1.5e300,"s":"a\"\u00e9","e":[],"o":{"/":{"~":[0,1]}}}"#;
        let ours: Value = serde_json::from_str(text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours.to_string(), theirs.to_string());
        assert_eq!(format!("{ours:#}"), format!("{theirs:#}"));
        assert_eq!(ours.pointer("/o/~1/~0/1"), Some(&Value::from(1)));
        assert_eq!(ours.pointer("/o/~1/~0/01"), None);
        assert_eq!(ours["n"], -3);
        assert_eq!(ours["missing"], Value::Null);
        assert_eq!(
            json!({"a": [1, "b", null], "c": ours["o"]}).to_string(),
            r#"{"a":[1,"b",null],"c":{"/":{"~":[0,1]}}}"#
        );
    }
}
