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
}
