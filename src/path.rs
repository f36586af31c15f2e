//! Where a problem is: a path of steps (`args[1].items.type` is the key
//! `args`, the index 1, the keys `items` and `type`), built step by step
//! and written out as text only to be shown.
//!
//! Code that decides something about a path (is it below another, which
//! key is its last) looks at its steps, never at its text.  A reader that
//! walks JSON text and names places as it goes keeps the place it was
//! given as one written-out step ([`Step::Text`]), below which it adds keys
//! and indices.

use std::fmt;

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// A key of an object or plist (without its colon).
    Key(String),
    /// An index into an array, list or vector.
    Index(usize),
    /// A part of a path already written out (by a reader walking JSON
    /// text), kept as it was written: never taken apart again.
    Text(String),
}

/// A path in a document or tool plist.  It keeps its text beside its
/// steps, written as [`crate::model::join`] and [`crate::model::index`]
/// write paths (`a.b[2].c`, a key at the root without a dot), so that it
/// is shown without being written out again.  Two paths are equal when
/// they are written alike.
#[derive(Clone, Default)]
pub struct Path {
    steps: Vec<Step>,
    text: String,
}

impl Path {
    /// The root: no step, written as the empty string.
    pub fn root() -> Path {
        Path::default()
    }

    /// A path written out by a reader of JSON text, kept as one step
    /// (the root when `text` is empty).
    pub fn written(text: impl Into<String>) -> Path {
        let text = text.into();
        if text.is_empty() {
            return Path::root();
        }
        Path { steps: vec![Step::Text(text.clone())], text }
    }

    /// This path and then the key `key`.
    pub fn key(mut self, key: impl Into<String>) -> Path {
        self.push(Step::Key(key.into()));
        self
    }

    /// This path and then item `i`.
    pub fn index(mut self, i: usize) -> Path {
        self.push(Step::Index(i));
        self
    }

    /// This path and then the steps of `below`.
    pub fn then(mut self, below: &Path) -> Path {
        for s in &below.steps {
            self.push(s.clone());
        }
        self
    }

    /// Add a step at the end.
    pub fn push(&mut self, step: Step) {
        match &step {
            Step::Key(k) | Step::Text(k) => {
                if !self.text.is_empty() {
                    self.text.push('.');
                }
                self.text.push_str(k);
            }
            Step::Index(i) => {
                self.text.push('[');
                self.text.push_str(itoa::Buffer::new().format(*i));
                self.text.push(']');
            }
        }
        self.steps.push(step);
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn is_root(&self) -> bool {
        self.steps.is_empty()
    }

    /// The last step, None at the root.
    pub fn last(&self) -> Option<&Step> {
        self.steps.last()
    }

    /// The key this path ends with, if it ends with a key.
    pub fn last_key(&self) -> Option<&str> {
        match self.steps.last() {
            Some(Step::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// The first step, when it is a key.
    pub fn first_key(&self) -> Option<&str> {
        match self.steps.first() {
            Some(Step::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// This path without its last step (the root stays the root).
    pub fn parent(&self) -> Path {
        let mut p = Path::root();
        for s in self.steps.iter().take(self.steps.len().saturating_sub(1)) {
            p.push(s.clone());
        }
        p
    }

    /// Whether this path is `prefix` or below it.
    pub fn is_under(&self, prefix: &Path) -> bool {
        self.steps.starts_with(&prefix.steps)
    }

    /// The path as it is shown: `args[1].items.type`.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::ops::Deref for Path {
    type Target = str;

    /// The path as it is shown (see [`Path::as_str`]).
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        self.text == other.text
    }
}

impl Eq for Path {}

impl std::hash::Hash for Path {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl PartialEq<str> for Path {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for Path {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<String> for Path {
    fn eq(&self, other: &String) -> bool {
        &self.text == other
    }
}

/// A path written out (see [`Path::written`]).
impl From<String> for Path {
    fn from(text: String) -> Path {
        Path::written(text)
    }
}

/// A path written out (see [`Path::written`]).
impl From<&str> for Path {
    fn from(text: &str) -> Path {
        Path::written(text)
    }
}

/// A path written out (see [`Path::written`]).
impl From<&String> for Path {
    fn from(text: &String) -> Path {
        Path::written(text.as_str())
    }
}

impl From<&At<'_>> for Path {
    /// The path made at once: its text and its steps each allocated to
    /// their size, where adding one step after another reallocates both
    /// as they grow.  An import's problems are made so, each with its
    /// own path: the 4,519 non-standard type names of BFCL's catalog
    /// (`make bench`, `toolspec-bench-catalog`).
    fn from(at: &At<'_>) -> Path {
        let mut below = Vec::with_capacity(8);
        let mut len = 0;
        let mut node = at;
        let root = loop {
            match node {
                At::Root(s) => break *s,
                At::Key(parent, key) => {
                    len += key.len() + 1;
                    below.push(node);
                    node = parent;
                }
                At::Index(parent, _) => {
                    len += 22;
                    below.push(node);
                    node = parent;
                }
            }
        };
        let mut path = Path {
            steps: Vec::with_capacity(below.len() + usize::from(!root.is_empty())),
            text: String::with_capacity(root.len() + len),
        };
        if !root.is_empty() {
            path.text.push_str(root);
            path.steps.push(Step::Text(root.to_string()));
        }
        for node in below.iter().rev() {
            match node {
                At::Key(_, key) => path.push(Step::Key((*key).to_string())),
                At::Index(_, i) => path.push(Step::Index(*i)),
                At::Root(_) => {}
            }
        }
        path
    }
}

impl From<At<'_>> for Path {
    fn from(at: At<'_>) -> Path {
        Path::from(&at)
    }
}

/// A path in a document as a walk descends it, made into a [`Path`] (or
/// written out, as [`crate::model::join`] and [`crate::model::index`] write it) only when a problem
/// needs it: formatting the path of every node made up a tenth of
/// reading a large catalog.
#[derive(Debug, Clone, Copy)]
pub enum At<'a> {
    /// A path already written out (`""` at the root).
    Root(&'a str),
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl<'a> At<'a> {
    /// The path of `key` below this one.
    pub fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At::Key(self, key)
    }

    /// The path of item `i` below this one.
    pub fn index(&self, i: usize) -> At<'_> {
        At::Index(self, i)
    }

    fn is_root(&self) -> bool {
        matches!(self, At::Root(s) if s.is_empty())
    }

    /// This path below its root (the path written out at the top), as a
    /// JSON pointer: `/properties/a~1b/items`.
    pub fn pointer(&self) -> String {
        match self {
            At::Root(_) => String::new(),
            At::Key(parent, key) => format!("{}/{}", parent.pointer(), key.replace('~', "~0").replace('/', "~1")),
            At::Index(parent, i) => format!("{}/{i}", parent.pointer()),
        }
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Root(s) => f.write_str(s),
            At::Key(parent, key) if parent.is_root() => f.write_str(key),
            At::Key(parent, key) => write!(f, "{parent}.{key}"),
            At::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{index, join};

    #[test]
    fn paths_are_shown_as_join_and_index_write_them() {
        let p = Path::root().key("args").index(1).key("items").key("type");
        assert_eq!(p, "args[1].items.type");
        assert_eq!(
            p.steps(),
            [Step::Key("args".into()), Step::Index(1), Step::Key("items".into()), Step::Key("type".into())]
        );
        assert_eq!(Path::root().index(0).key("b"), "[0].b");
        assert_eq!(Path::written("tools[2].x").key("a.b").index(3), index(&join("tools[2].x", "a.b"), 3));
        assert_eq!(Path::written(""), Path::root());
        assert!(Path::written("").is_root());
        let root = At::Root("");
        let at = root.key("properties");
        let at = at.key("x");
        assert_eq!(Path::from(at.index(2)), at.index(2).to_string().as_str());
        assert_eq!(Path::from(at.index(2)).steps().len(), 3);
        // Below a path written out, the same steps as added one by one.
        let root = At::Root("tools[3].inputSchema");
        let props = root.key("properties");
        let x = props.key("x");
        let items = x.key("items");
        let made = Path::from(items.index(12).key("type"));
        let added = Path::written("tools[3].inputSchema").key("properties").key("x").key("items").index(12).key("type");
        assert_eq!(made, "tools[3].inputSchema.properties.x.items[12].type");
        assert_eq!(made.steps(), added.steps());
        assert_eq!(Path::from(&At::Root("tools[0]")).steps(), Path::written("tools[0]").steps());
    }

    #[test]
    fn a_key_with_dots_is_one_step() {
        // Written out, `paths./v2.1.get` could be read as four keys; as
        // steps it is three, and its parent is `paths./v2.1`.
        let p = Path::root().key("paths").key("/v2.1").key("get");
        assert_eq!(p.steps().len(), 3);
        assert_eq!(p.parent(), "paths./v2.1");
        assert_eq!(p.parent().last_key(), Some("/v2.1"));
        assert!(p.is_under(&Path::root().key("paths").key("/v2.1")));
        assert!(!p.is_under(&Path::root().key("paths").key("/v2")));
        assert!(!Path::root().key("args1").is_under(&Path::root().key("args")));
        assert!(Path::root().key("args").index(1).is_under(&Path::root().key("args")));
        assert!(p.is_under(&Path::root()));
    }
}
