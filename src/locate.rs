//! Find where a path (`tools[2].inputSchema.properties.x`) is in JSON
//! text, so that a problem can be shown at its place in the file.

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
            // A key may hold brackets itself (`a]b`): only `[N]` is an index.
            if let Some(Ok(i)) = rest.get(1..end).map(str::parse) {
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

    /// Go to the value the first of `steps` names; how many of them were
    /// taken: more than one when a key holds dots (`"/v2.1"` is the steps
    /// `/v2` and `1` of the path `paths./v2.1.get`).  Of the keys that
    /// fit, the one taking most steps wins, the last of them if several
    /// (of a key given twice, the parser keeps the last value).
    fn step(&mut self, steps: &[Step]) -> Option<usize> {
        self.ws();
        match (steps.first()?, self.b.get(self.i)?) {
            (Step::Key(k), b'{') => {
                self.i += 1;
                // Only a path with more steps to come can be a key with dots.
                let dots = steps.len() > 1;
                let mut best: Option<(usize, usize)> = None;
                loop {
                    self.ws();
                    if self.b.get(self.i).is_none_or(|&c| c == b'}') {
                        break;
                    }
                    let Some(key) = self.string() else { break };
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        break;
                    }
                    self.i += 1;
                    self.ws();
                    let n = if key == *k {
                        Some(1)
                    } else if dots {
                        key_steps(&key, steps)
                    } else {
                        None
                    };
                    if let Some(n) = n {
                        // A key given twice: the parser keeps the last value.
                        if best.is_none_or(|(m, _)| n >= m) {
                            best = Some((n, self.i));
                        }
                    }
                    if self.skip().is_none() {
                        break;
                    }
                    self.ws();
                    if self.b.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
                let (n, at) = best?;
                self.i = at;
                Some(n)
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
                // No item there (an empty array, or a comma before `]`).
                if matches!(self.b.get(self.i), None | Some(b']')) {
                    return None;
                }
                Some(1)
            }
            _ => None,
        }
    }
}

/// How many of `steps` the object key `key` stands for, when it holds
/// dots (or brackets) and is the path of those steps.
fn key_steps(key: &str, steps: &[Step]) -> Option<usize> {
    if !key.contains(['.', '[']) {
        return None;
    }
    let of_key = self::steps(key);
    (of_key.len() > 1 && steps.starts_with(&of_key)).then_some(of_key.len())
}

/// 1-based (line, column) of the value at `path` in `text`, or of the
/// deepest part of the path that exists.
pub fn locate(text: &str, path: &str) -> (usize, usize) {
    let mut s = Scanner { b: text.as_bytes(), i: 0 };
    s.ws();
    let mut found = s.i;
    let steps = steps(path);
    let mut rest = &steps[..];
    while let Some(n) = s.step(rest) {
        rest = &rest[n..];
        found = s.i;
    }
    line_column(text.as_bytes(), found)
}

/// One step of a path, as a key of the trie [`locate_many`] builds.
#[derive(PartialEq, Eq, Hash)]
enum TrieStep {
    Key(String),
    Index(usize),
}

impl From<Step<'_>> for TrieStep {
    fn from(s: Step<'_>) -> TrieStep {
        match s {
            Step::Key(k) => TrieStep::Key(k.to_string()),
            Step::Index(i) => TrieStep::Index(i),
        }
    }
}

type Trie = std::collections::HashMap<(usize, TrieStep), usize>;

/// A value [`scan_values`] met at a node of the trie: where it starts,
/// and the entry of the object or array it is in.
struct Entry {
    node: usize,
    at: usize,
    parent: usize,
}

/// [`locate`] for many paths at once: one pass over `text` finds them
/// all (and one more counts lines and columns), however many there are.
/// The place of each path, in order.  Where a key with dots and a key
/// with children both fit a path (`a.b` and `a` holding `b`), the one
/// taking more steps is followed, as [`locate`] does, and of a key given
/// twice the last.
pub fn locate_many(text: &str, paths: &[&str]) -> Vec<(usize, usize)> {
    // The paths as a trie of steps, node 0 the whole document.
    let mut trie = Trie::new();
    let mut nodes = 1usize;
    for p in paths {
        let mut node = 0;
        for step in steps(p) {
            node = *trie.entry((node, step.into())).or_insert_with(|| {
                nodes += 1;
                nodes - 1
            });
        }
    }
    let entries = scan_values(&mut Scanner { b: text.as_bytes(), i: 0 }, &trie);
    // The member of each value at each node of the trie (the last, if a
    // key is given twice: the parser keeps the last value).
    let member: std::collections::HashMap<(usize, usize), usize> =
        entries.iter().enumerate().skip(1).map(|(i, e)| ((e.parent, e.node), i)).collect();
    // Each path: from the document down, at each value the member that
    // takes the most of the steps left, as far as the path goes.
    let offsets: Vec<usize> = paths
        .iter()
        .map(|p| {
            let mut along = Vec::new();
            let mut node = 0;
            for step in steps(p) {
                let Some(&n) = trie.get(&(node, step.into())) else { break };
                along.push(n);
                node = n;
            }
            let (mut at, mut done) = (0usize, 0usize);
            // A member at the node `k` steps on is `k` steps from its value.
            let next = |at: usize, done: usize| {
                (1..=along.len() - done).rev().find_map(|k| member.get(&(at, along[done + k - 1])).map(|&c| (k, c)))
            };
            while let Some((k, c)) = next(at, done) {
                at = c;
                done += k;
            }
            entries[at].at
        })
        .collect();
    line_columns(text, &offsets)
}

/// Walk the values of JSON text, without recursion, recording each value
/// met at a node of the trie ([`Entry`]); the first entry is the whole
/// document's.  Stops at text that is not JSON.
fn scan_values(s: &mut Scanner, trie: &Trie) -> Vec<Entry> {
    enum Frame {
        /// An object or array at a node of the trie, and its entry.
        Object(usize, usize),
        Array(usize, usize, usize),
    }
    s.ws();
    let mut entries = vec![Entry { node: 0, at: s.i, parent: 0 }];
    let mut stack: Vec<Frame> = Vec::new();
    // At the start of a value: its node (None: no path goes through it),
    // and the entry of its container; the document is entry 0.
    let mut node = Some(0usize);
    let mut parent = 0usize;
    loop {
        s.ws();
        let start = s.i;
        let entry = match node {
            Some(_) if stack.is_empty() => Some(0),
            Some(n) => {
                entries.push(Entry { node: n, at: start, parent });
                Some(entries.len() - 1)
            }
            None => None,
        };
        match (node.zip(entry), s.b.get(s.i)) {
            (_, None) => return entries,
            (Some((n, e)), Some(b'{')) => {
                s.i += 1;
                stack.push(Frame::Object(n, e));
            }
            (Some((n, e)), Some(b'[')) => {
                s.i += 1;
                stack.push(Frame::Array(n, e, 0));
            }
            _ => {
                if s.skip().is_none() || s.i == start {
                    return entries;
                }
            }
        }
        // To the start of the next value, closing containers on the way.
        loop {
            s.ws();
            let Some(top) = stack.last_mut() else { return entries };
            match s.b.get(s.i) {
                None => return entries,
                Some(b',') => {
                    s.i += 1;
                    continue;
                }
                Some(b'}' | b']') => {
                    s.i += 1;
                    stack.pop();
                    continue;
                }
                _ => {}
            }
            match top {
                Frame::Object(n, e) => {
                    let Some(key) = s.string() else { return entries };
                    s.ws();
                    if s.b.get(s.i) != Some(&b':') {
                        return entries;
                    }
                    s.i += 1;
                    node = key_node(trie, *n, key);
                    parent = *e;
                }
                Frame::Array(n, e, item) => {
                    node = trie.get(&(*n, TrieStep::Index(*item))).copied();
                    parent = *e;
                    *item += 1;
                }
            }
            break;
        }
    }
}

/// The node of the trie below `node` that the object key `key` leads to:
/// its child by `key`, or, for a key with dots or brackets, the node its
/// steps lead to (see [`key_steps`]).
fn key_node(trie: &Trie, node: usize, key: String) -> Option<usize> {
    if !key.contains(['.', '[']) {
        return trie.get(&(node, TrieStep::Key(key))).copied();
    }
    if let Some(&n) = trie.get(&(node, TrieStep::Key(key.clone()))) {
        return Some(n);
    }
    let of_key = steps(&key);
    if of_key.len() < 2 {
        return None;
    }
    of_key.into_iter().try_fold(node, |n, step| trie.get(&(n, step.into())).copied())
}

/// 1-based (line, column) of each byte offset, in one pass over `text`.
pub fn line_columns(text: &str, offsets: &[usize]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut out = vec![(1, 1); offsets.len()];
    let (mut line, mut column) = (1usize, 1usize);
    let mut chars = text.char_indices().peekable();
    for i in order {
        let target = offsets[i].min(text.len());
        while let Some(&(at, c)) = chars.peek() {
            if at >= target {
                break;
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
            chars.next();
        }
        out[i] = (line, column);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_values() {
        let text =
            "{\n \"tools\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\", \"x\": {\"y\": [1, {\"z\": 2}]}}\n ]\n}";
        assert_eq!(locate(text, "tools[1].name"), (4, 12));
        assert_eq!(locate(text, "tools[1].x.y[1].z"), (4, 38));
        // A missing key stops at the deepest part found.
        assert_eq!(locate(text, "tools[1].nope"), (4, 3));
    }

    #[test]
    fn the_value_the_parser_keeps() {
        // A key with dots takes more steps than a key holding the rest,
        // whichever comes first.
        for text in ["{\"a\": {\"b\": 1},\n\"a.b\": 2}", "{\"a.b\": 2,\n\"a\": {\"b\": 1}}"] {
            let at = if text.starts_with("{\"a.b") { (1, 9) } else { (2, 8) };
            assert_eq!(locate(text, "a.b"), at, "{text}");
            assert_eq!(locate_many(text, &["a.b", "a"]), [at, locate(text, "a")], "{text}");
        }
        // Of a key given twice, the last value.
        let text = "{\"a\": 1,\n\"a\": [1]}";
        assert_eq!(locate(text, "a[0]"), (2, 7));
        assert_eq!(locate_many(text, &["a[0]", "a"]), [(2, 7), (2, 6)]);
        // No item in an empty array: the array.
        assert_eq!(locate("{\"a\": []}", "a[0]"), (1, 7));
        assert_eq!(locate_many("{\"a\": []}", &["a[0]"]), [(1, 7)]);
    }

    #[test]
    fn many_paths_at_once_as_one_by_one() {
        let text = "{\n \"tools\": [\n  {\"name\": \"a\", \"k\": \"x\", \"k\": 2},\n  {\"name\": \"b\", \"x\": {\"y\": [1, {\"z\": 2}]}}\n ],\n \"é\": [[], {}, \"ü\"]}";
        let paths = [
            "tools[1].name",
            "tools[1].x.y[1].z",
            "tools[1].nope",
            "",
            "tools[0].k",
            "tools[5]",
            "é[2]",
            "é[1].x",
            "tools[1].x.y[1].z",
        ];
        let one_by_one: Vec<(usize, usize)> = paths.iter().map(|p| locate(text, p)).collect();
        assert_eq!(locate_many(text, &paths), one_by_one);
        // Keys with dots, as OpenAPI paths have them (`/v2.1`).
        let text = "{\"paths\": {\"/v2\": {\"x\": 0}, \"/v2.1\": {\"get\": {\"a[0]\": [5], \"b\": 1}},\n \"/v2.1/c.d\": {\"put\": 2}}}";
        let paths = [
            "paths./v2.1.get.b",
            "paths./v2.1.get",
            "paths./v2.1/c.d.put",
            "paths./v2.1.get.a[0][0]",
            "paths./v2.x",
            "paths./v2.1.nope",
            "paths./v3.1",
        ];
        let one_by_one: Vec<(usize, usize)> = paths.iter().map(|p| locate(text, p)).collect();
        assert_eq!(one_by_one, [(1, 65), (1, 46), (2, 23), (1, 56), (1, 25), (1, 38), (1, 11)]);
        assert_eq!(locate_many(text, &paths), one_by_one);
        for broken in ["{\"a\": [1, {\"b\" 2}]}", "[:", "{\"a\": [1,, 2]", "\"x", "{\"a\" /* c */ : 1}"] {
            let paths = ["a[1].b", "a[0]", "[0]", "a"];
            let many = locate_many(broken, &paths);
            assert_eq!(many.len(), 4, "{broken}");
        }
    }
}
