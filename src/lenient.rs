//! A lenient pre-pass for hand-written JSON: the small slips real files
//! carry (trailing commas, missing commas between members or items,
//! comments, stray commas) are repaired, each with a warning that gives
//! its line, column and the JSON path of the object or array holding it.  Only the SkyDeck reader uses it: other
//! formats are machine-written and read strictly.

use crate::model::{index, join, Code, Problem};

/// One container being scanned.
struct Frame {
    /// Path of the container itself.
    path: String,
    object: bool,
    /// Key of the member being read (objects).
    key: Option<String>,
    /// Index of the item being read (arrays).
    item: usize,
}

/// What the last significant token was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    Start,
    Open,
    Comma,
    Colon,
    Key,
    Value,
}

/// Nesting deeper than this is not repaired: the strict parser refuses
/// it anyway (at 128 levels).
const MAX_DEPTH: usize = 128;

/// Repairs listed one by one; the rest are counted in one more warning.
pub const MAX_LISTED: usize = 50;

/// The text with its slips repaired, and a warning for each repair.
/// Text that has other errors comes back with what could be repaired;
/// the strict parser reports the rest.  Time and memory are linear in
/// the text: text nested deeper than JSON allows comes back unrepaired,
/// and past [`MAX_LISTED`] repairs are counted, not listed.
pub fn repair(text: &str) -> (String, Vec<Problem>) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut warnings = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut last = Last::Start;
    // Output offset of the last comma written, while it may still be a
    // trailing one, and where it was in the input.
    let mut pending_comma: Option<(usize, usize)> = None;
    let mut i = 0;
    // Where lines start, made on the first repair.
    let mut lines: Vec<usize> = Vec::new();
    let mut unlisted = 0usize;

    let mut warn = |warnings: &mut Vec<Problem>, stack: &[Frame], at: usize, msg: String| {
        if warnings.len() >= MAX_LISTED {
            unlisted += 1;
            return;
        }
        if lines.is_empty() {
            lines.push(0);
            lines.extend(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1));
        }
        let line = lines.partition_point(|&s| s <= at);
        let start = lines[line - 1];
        let column = text.get(start..at).map_or(at - start, |s| s.chars().count()) + 1;
        let path = stack.last().map(|f| f.path.clone()).unwrap_or_default();
        warnings.push(Problem::warning(Code::Repaired, path, format!("line {line}, column {column}: {msg}")));
    };

    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                out.push(b as char);
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') || bytes.get(i + 1) == Some(&b'*') => {
                let end = if bytes[i + 1] == b'/' {
                    bytes[i..].iter().position(|&c| c == b'\n').map_or(bytes.len(), |p| i + p)
                } else {
                    text[i + 2..].find("*/").map_or(bytes.len(), |p| i + 2 + p + 2)
                };
                warn(&mut warnings, &stack, i, "comment removed (JSON has no comments)".into());
                // Keep line structure so later positions stay meaningful.
                out.extend(text[i..end].chars().filter(|&c| c == '\n'));
                i = end;
            }
            b',' => {
                if matches!(last, Last::Comma | Last::Open | Last::Start) {
                    let what = if last == Last::Comma { "extra comma" } else { "comma before the first member" };
                    warn(&mut warnings, &stack, i, format!("{what} removed"));
                } else {
                    pending_comma = Some((out.len(), i));
                    out.push(',');
                    last = Last::Comma;
                    if let Some(f) = stack.last_mut() {
                        if f.object {
                            f.key = None;
                        } else {
                            f.item += 1;
                        }
                    }
                }
                i += 1;
            }
            b'}' | b']' => {
                if last == Last::Comma {
                    if let Some((at, orig)) = pending_comma.take() {
                        out.remove(at);
                        warn(&mut warnings, &stack, orig, format!("trailing comma before `{}` removed", b as char));
                    }
                }
                stack.pop();
                out.push(b as char);
                last = Last::Value;
                i += 1;
            }
            b':' => {
                out.push(':');
                last = Last::Colon;
                i += 1;
            }
            _ => {
                // A value (or a key) starts here.
                let end = token_end(bytes, i);
                let in_object = stack.last().is_some_and(|f| f.object);
                if last == Last::Value && !stack.is_empty() {
                    let token: String = text[i..end].chars().take(40).collect();
                    warn(&mut warnings, &stack, i, format!("missing comma inserted before {token}"));
                    out.push_str(", ");
                    if let Some(f) = stack.last_mut() {
                        if f.object {
                            f.key = None;
                        } else {
                            f.item += 1;
                        }
                    }
                    last = Last::Comma;
                }
                let is_key = in_object && matches!(last, Last::Open | Last::Comma) && b == b'"';
                if is_key {
                    let key =
                        serde_json::from_str::<String>(&text[i..end]).unwrap_or_else(|_| text[i..end].to_string());
                    if let Some(f) = stack.last_mut() {
                        f.key = Some(key);
                    }
                    out.push_str(&text[i..end]);
                    last = Last::Key;
                    i = end;
                } else if b == b'{' || b == b'[' {
                    if stack.len() >= MAX_DEPTH {
                        return (text.to_string(), Vec::new());
                    }
                    let path = stack.last().map(member_path).unwrap_or_default();
                    stack.push(Frame { path, object: b == b'{', key: None, item: 0 });
                    out.push(b as char);
                    last = Last::Open;
                    i += 1;
                } else {
                    out.push_str(&text[i..end]);
                    last = Last::Value;
                    i = end;
                }
                pending_comma = None;
            }
        }
    }
    if unlisted > 0 {
        warnings.push(Problem::warning(Code::MoreNotListed, "", format!("{unlisted} more repairs not listed")));
    }
    (out, warnings)
}

/// Path of the member or item being read in `f`.
fn member_path(f: &Frame) -> String {
    if f.object {
        match &f.key {
            Some(k) => join(&f.path, k),
            None => f.path.clone(),
        }
    } else {
        index(&f.path, f.item)
    }
}

/// End (exclusive) of the token starting at `i`: a string with its
/// escapes, a bracket, or a run of literal characters.
fn token_end(bytes: &[u8], i: usize) -> usize {
    match bytes[i] {
        b'"' => {
            let mut j = i + 1;
            while j < bytes.len() {
                match bytes[j] {
                    b'\\' => j += 2,
                    b'"' => return j + 1,
                    _ => j += 1,
                }
            }
            bytes.len()
        }
        b'{' | b'[' => i + 1,
        _ => {
            let mut j = i;
            while j < bytes.len()
                && !matches!(bytes[j], b' ' | b'\t' | b'\r' | b'\n' | b',' | b':' | b'}' | b']' | b'{' | b'[' | b'"')
            {
                j += 1;
            }
            j.max(i + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn fixed(text: &str) -> (Value, Vec<String>) {
        let (out, w) = repair(text);
        let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
        (v, w.into_iter().map(|p| format!("{}|{}", p.path, p.message)).collect())
    }

    #[test]
    fn valid_json_is_untouched() {
        let text = r#"{"a": [1, 2, {"b": "x,}"}], "c": null}"#;
        let (out, w) = repair(text);
        assert_eq!(out, text);
        assert!(w.is_empty());
    }

    #[test]
    fn trailing_commas() {
        let (v, w) = fixed("{\"a\": [1, 2,],\n \"b\": {\"c\": 1,},\n}");
        assert_eq!(v, crate::json!({"a": [1, 2], "b": {"c": 1}}));
        assert_eq!(
            w,
            vec![
                "a|line 1, column 12: trailing comma before `]` removed",
                "b|line 2, column 14: trailing comma before `}` removed",
                "|line 2, column 16: trailing comma before `}` removed",
            ]
        );
    }

    #[test]
    fn missing_commas() {
        let (v, w) = fixed("{\"v\": [{\"d\": [\"x\"]\n \"e\": 1} {\"f\": true}]\n \"g\": \"h\"}");
        assert_eq!(v, crate::json!({"v": [{"d": ["x"], "e": 1}, {"f": true}], "g": "h"}));
        assert_eq!(
            w,
            vec![
                "v[0]|line 2, column 2: missing comma inserted before \"e\"",
                "v|line 2, column 10: missing comma inserted before {",
                "|line 3, column 2: missing comma inserted before \"g\"",
            ]
        );
    }

    #[test]
    fn never_panics_on_broken_text() {
        let text = "{\"a\": [1, \"é\\\"x\", {\"b\": tru /* c */ }], // ü\n \"d\": \"ß\",}";
        for end in 0..=text.len() {
            if text.is_char_boundary(end) {
                let _ = repair(&text[..end]);
                let _ = repair(&text[end..]);
            }
        }
    }

    #[test]
    fn comments_and_extra_commas() {
        let (v, w) = fixed("{// note\n\"a\": [,1,,2], /* x */ \"b\": 2}");
        assert_eq!(v, crate::json!({"a": [1, 2], "b": 2}));
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].contains("line 1, column 2: comment removed"));
    }
}
