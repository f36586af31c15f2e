//! Find where a path (`tools[2].inputSchema.properties.x`) is in JSON
//! text, so that a problem can be shown at its place in the file.

use std::collections::{HashMap, HashSet};

use crate::error::line_column;

/// One step of a path.
#[derive(Debug, PartialEq)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The steps of a path: `args[1].items.properties.r`.
pub(crate) fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Step::Key(key));
        }
        while let Some(end) = rest.find(']') {
            if let Ok(i) = rest[1..end].parse() {
                out.push(Step::Index(i));
            }
            rest = &rest[end + 1..];
        }
    }
    out
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    /// Read a string at the cursor; returns its raw contents.
    fn string(&mut self) -> Option<String> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_slice(&self.b[start..self.i]).ok();
                }
                _ => self.i += 1,
            }
        }
        None
    }

    /// Skip one value; nesting is tracked with a counter, not recursion.
    fn skip(&mut self) -> Option<()> {
        self.ws();
        let mut depth = 0usize;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.i += 1;
                }
                b',' | b':' if depth > 0 => self.i += 1,
                c if c.is_ascii_whitespace() => self.i += 1,
                _ => {
                    while self.i < self.b.len() && !b",}] \t\r\n:".contains(&self.b[self.i]) {
                        self.i += 1;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    fn step(&mut self, step: &Step) -> Option<()> {
        self.ws();
        match (step, self.b.get(self.i)?) {
            (Step::Key(k), b'{') => {
                self.i += 1;
                loop {
                    self.ws();
                    if self.b.get(self.i)? == &b'}' {
                        return None;
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.b.get(self.i)? != &b':' {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    if key == *k {
                        return Some(());
                    }
                    self.skip()?;
                    self.ws();
                    if self.b.get(self.i)? == &b',' {
                        self.i += 1;
                    }
                }
            }
            (Step::Index(n), b'[') => {
                self.i += 1;
                for _ in 0..*n {
                    self.skip()?;
                    self.ws();
                    if self.b.get(self.i)? != &b',' {
                        return None;
                    }
                    self.i += 1;
                }
                self.ws();
                Some(())
            }
            _ => None,
        }
    }
}

/// The paths still sought below one place of the document: a trie of
/// their steps.
#[derive(Default)]
struct Node<'p> {
    /// Indices of the paths that end here.
    ends: Vec<usize>,
    /// Indices of every path at or below this node.
    all: Vec<usize>,
    keys: HashMap<&'p str, Node<'p>>,
    items: HashMap<usize, Node<'p>>,
}

impl<'p> Node<'p> {
    fn insert(&mut self, steps: &[Step<'p>], index: usize) {
        self.all.push(index);
        match steps.split_first() {
            None => self.ends.push(index),
            Some((Step::Key(k), rest)) => self.keys.entry(k).or_default().insert(rest, index),
            Some((Step::Index(n), rest)) => self.items.entry(*n).or_default().insert(rest, index),
        }
    }
}

impl Scanner<'_> {
    /// Walk the value at the cursor, recording in `found` the offset of
    /// every path of `node` (the deepest part that exists), and leave the
    /// cursor after the value.  Only the branches some path goes down are
    /// entered, each once, so a document is scanned once whatever the
    /// number of paths; the recursion is as deep as the longest path.
    fn walk(&mut self, node: &Node, found: &mut [usize]) -> Option<()> {
        self.ws();
        for &i in &node.all {
            found[i] = self.i;
        }
        match self.b.get(self.i)? {
            b'{' if !node.keys.is_empty() => {
                let mut seen = HashSet::new();
                self.i += 1;
                loop {
                    self.ws();
                    if self.b.get(self.i)? == &b'}' {
                        self.i += 1;
                        return Some(());
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.b.get(self.i)? != &b':' {
                        return None;
                    }
                    self.i += 1;
                    match node.keys.get_key_value(key.as_str()) {
                        // The first of duplicate keys, as `locate` finds.
                        Some((k, child)) if seen.insert(*k) => self.walk(child, found)?,
                        _ => self.skip()?,
                    }
                    self.ws();
                    if self.b.get(self.i)? == &b',' {
                        self.i += 1;
                    }
                }
            }
            b'[' if !node.items.is_empty() => {
                self.i += 1;
                let mut n = 0;
                loop {
                    self.ws();
                    if self.b.get(self.i)? == &b']' {
                        self.i += 1;
                        return Some(());
                    }
                    match node.items.get(&n) {
                        Some(child) => self.walk(child, found)?,
                        None => self.skip()?,
                    }
                    n += 1;
                    self.ws();
                    if self.b.get(self.i)? == &b',' {
                        self.i += 1;
                    }
                }
            }
            _ => self.skip(),
        }
    }
}

/// 1-based (line, column) of each of `paths` in `text`, as [`locate`]
/// finds them, in one scan of the text: checking a file of thousands of
/// tools with a problem each stays linear.
pub fn locate_many(text: &str, paths: &[&str]) -> Vec<(usize, usize)> {
    let all: Vec<Vec<Step>> = paths.iter().map(|p| steps(p)).collect();
    let mut root = Node::default();
    for (i, s) in all.iter().enumerate() {
        root.insert(s, i);
    }
    let mut found = vec![0; paths.len()];
    let mut s = Scanner { b: text.as_bytes(), i: 0 };
    let _ = s.walk(&root, &mut found);
    line_columns(text.as_bytes(), &found)
}

/// [`line_column`] of many offsets, in one pass over `text`.
pub fn line_columns(text: &[u8], offsets: &[usize]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut out = vec![(1, 1); offsets.len()];
    // `pos` moves forward only; the column is counted from the last
    // offset of the same line, so a long line is counted once too.
    let (mut pos, mut line, mut column) = (0usize, 1usize, 1usize);
    for i in order {
        let target = offsets[i].min(text.len());
        while pos < target {
            match text[pos] {
                b'\n' => {
                    line += 1;
                    column = 1;
                }
                // Characters are counted at their first byte.
                b if b & 0xC0 != 0x80 => column += 1,
                _ => {}
            }
            pos += 1;
        }
        out[i] = (line, column);
    }
    out
}

/// 1-based (line, column) of the value at `path` in `text`, or of the
/// deepest part of the path that exists.
pub fn locate(text: &str, path: &str) -> (usize, usize) {
    let mut s = Scanner { b: text.as_bytes(), i: 0 };
    s.ws();
    let mut found = s.i;
    for step in steps(path) {
        if s.step(&step).is_none() {
            break;
        }
        found = s.i;
    }
    line_column(text.as_bytes(), found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_values() {
        let text = "{\n \"tools\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\", \"x\": {\"y\": [1, {\"z\": 2}]}}\n ]\n}";
        assert_eq!(locate(text, "tools[1].name"), (4, 12));
        assert_eq!(locate(text, "tools[1].x.y[1].z"), (4, 38));
        // A missing key stops at the deepest part found.
        assert_eq!(locate(text, "tools[1].nope"), (4, 3));
    }

    #[test]
    fn many_paths_are_found_as_one_by_one() {
        let text = "{\n \"tools\": [\n  {\"name\": \"a\", \"name\": \"b\"},\n  {\"name\": \"b\", \"x\": {\"y\": [1, {\"z\": 2}]}}\n ],\n \"é\": [[], {\"k\": \"ü\"}]\n}";
        let paths = [
            "tools[1].x.y[1].z",
            "tools[1].name",
            "tools[0].name",
            "tools[1].nope",
            "tools[7]",
            "",
            "é[1].k",
            "tools[1].x.y[1].z",
            "tools[1].x.y[5].q",
        ];
        let many = locate_many(text, &paths);
        for (p, got) in paths.iter().zip(&many) {
            assert_eq!(*got, locate(text, p), "{p}");
        }
        assert_eq!(many[6], (6, 18));
    }
}
