//! What parsing JSON text loses without a word, found in one linear pass
//! over the text: duplicate keys (the parser keeps the last value) and
//! integers beyond 64 bits (the parser reads them as the nearest double).
//! Each becomes a warning with its JSON path, like the readers' other
//! warnings.
//!
//! The scan does not validate: its result means something only for text
//! that parsed as JSON.  On other text it stops early or finds nonsense,
//! but never panics, so it may run while the text is being parsed.
//!
//! Most texts have neither.  Parsed through [`Noting`], a text says
//! whether it may have one, and is scanned only then ([`parse_noting`]).

use std::borrow::Cow;
use std::cell::Cell;

use serde::de::DeserializeSeed;

use crate::model::{index, join, Code, Problem, Seen};
pub use crate::value::Noting;
use crate::value::{has_byte, Value};

/// Warnings of each kind reported before the rest are counted only.
pub const MAX_NOTES: usize = 50;

/// An object or array being scanned.
enum Frame<'t> {
    Object {
        /// Key of the member being read; None while a key is expected.
        key: Option<Cow<'t, str>>,
        /// Keys seen so far.
        seen: Seen<Cow<'t, str>>,
    },
    Array {
        item: usize,
    },
}

/// `parse()` of JSON `text`, and, if it parsed, the [`notes`] of the
/// text.  A text of [`crate::par::BIG`] or more is scanned on another
/// thread while it is parsed (the scan is thrown away if it did not).
pub fn parse_and_note<T, E>(text: &str, parse: impl FnOnce() -> Result<T, E>) -> (Result<T, E>, Vec<Problem>) {
    if text.len() >= crate::par::BIG {
        let (parsed, notes) = crate::par::join(parse, || notes(text));
        let notes = if parsed.is_ok() { notes } else { Vec::new() };
        (parsed, notes)
    } else {
        let parsed = parse();
        let notes = if parsed.is_ok() { notes(text) } else { Vec::new() };
        (parsed, notes)
    }
}

/// `parse()` of JSON `text` through [`Noting`] seeds, which set the flag
/// `parse` is given, and, if it parsed and the flag was set, the
/// [`notes`] of the text.  `parse` must read every object and number of
/// the text through [`Noting`] (or give an error).
pub fn parse_noting<T, E>(text: &str, parse: impl FnOnce(&Cell<bool>) -> Result<T, E>) -> (Result<T, E>, Vec<Problem>) {
    let suspect = Cell::new(false);
    let parsed = parse(&suspect);
    let notes = if parsed.is_ok() && suspect.get() { notes(text) } else { Vec::new() };
    (parsed, notes)
}

/// JSON `text`, all of it, as one value parsed through [`Noting`] with
/// `flag` (as `serde_json::from_str` parses a `Value`).
pub fn from_str_noting(text: &str, flag: &Cell<bool>) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Noting(flag).deserialize(&mut de)?;
    de.end().map(|()| value)
}

/// The warnings for `text` (valid JSON): duplicate keys and integers
/// beyond 64 bits, at most [`MAX_NOTES`] of each, then one counting the rest.
pub fn notes(text: &str) -> Vec<Problem> {
    notes_and_depth(text).0
}

/// [`notes`], and how deep objects and arrays nest in `text` (the most
/// open at once).
pub fn notes_and_depth(text: &str) -> (Vec<Problem>, usize) {
    let mut deepest = 0;
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    // The key sets of objects scanned, kept for the next ones: a large
    // document has hundreds of thousands of objects.
    let mut spare: Vec<Seen<Cow<str>>> = Vec::new();
    let mut out = Vec::new();
    let (mut dups, mut bigs) = (0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                stack.push(Frame::Object { key: None, seen: spare.pop().unwrap_or_default() });
                deepest = deepest.max(stack.len());
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array { item: 0 });
                deepest = deepest.max(stack.len());
                i += 1;
            }
            b'}' | b']' => {
                if let Some(Frame::Object { mut seen, .. }) = stack.pop() {
                    seen.clear();
                    spare.push(seen);
                }
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object { key, .. }) => *key = None,
                    Some(Frame::Array { item }) => *item += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let Some((end, escaped)) = string_end(b, i) else { break };
                let expecting_key = matches!(stack.last(), Some(Frame::Object { key: None, .. }));
                if expecting_key {
                    let raw = &text[i + 1..end - 1];
                    let k: Cow<str> = if escaped {
                        Cow::Owned(serde_json::from_str::<String>(&text[i..end]).unwrap_or_else(|_| raw.to_string()))
                    } else {
                        Cow::Borrowed(raw)
                    };
                    let duplicate = match stack.last_mut() {
                        Some(Frame::Object { key, seen }) => {
                            let dup = !seen.insert(k.clone());
                            *key = Some(k);
                            dup
                        }
                        _ => false,
                    };
                    if duplicate {
                        dups += 1;
                        if dups <= MAX_NOTES {
                            let path = path_of(&stack);
                            let k = path_key(&stack);
                            out.push(Problem::warning(
                                Code::DuplicateKey,
                                path,
                                format!("duplicate key \"{k}\": the last value is used, the earlier ones are ignored"),
                            ));
                        }
                    }
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                let mut integer = true;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    integer &= !matches!(b[i], b'.' | b'e' | b'E');
                    i += 1;
                }
                let literal = &text[start..i];
                // Every integer of up to 18 digits fits in 64 bits.
                if integer && literal.len() > 18 && literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err() {
                    bigs += 1;
                    if bigs <= MAX_NOTES {
                        let read = literal
                            .parse::<f64>()
                            .ok()
                            .and_then(serde_json::Number::from_f64)
                            .map_or_else(|| "?".to_string(), |n| n.to_string());
                        out.push(Problem::warning(Code::BigInteger,
                            path_of(&stack),
                            format!(
                                "the integer {} is beyond 64 bits: read as the number {read}, which may differ in its last digits",
                                shorten(literal)
                            ),
                        ));
                    }
                }
            }
            // Whitespace, most of a pretty-printed text, skipped in one
            // tight loop; `:` too.
            _ => {
                i += 1;
                // Indentation eight spaces at a time.
                while let Some(chunk) = b.get(i..i + 8) {
                    if chunk != b"        " {
                        break;
                    }
                    i += 8;
                }
                while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
                    i += 1;
                }
            }
        }
    }
    for (n, what) in [(dups, "duplicate keys"), (bigs, "integers beyond 64 bits")] {
        if n > MAX_NOTES {
            out.push(Problem::warning(Code::MoreNotListed, "", format!("{} more {what} not listed", n - MAX_NOTES)));
        }
    }
    (out, deepest)
}

/// End (exclusive) of the string starting at `i`, and whether it holds
/// an escape; None if it never ends.
pub(crate) fn string_end(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    // Most strings are short keys, ended before `memchr` would have set
    // up: their first 16 bytes are searched eight at a time.
    for _ in 0..2 {
        let Some(word) = b.get(j..j + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) else { break };
        let word = u64::from_le_bytes(word);
        let found = has_byte(word, b'"') | has_byte(word, b'\\');
        if found != 0 {
            j += found.trailing_zeros() as usize / 8;
            if b[j] == b'"' {
                return Some((j + 1, false));
            }
            break;
        }
        j += 8;
    }
    let mut escaped = false;
    while j < b.len() {
        j += memchr::memchr2(b'"', b'\\', &b[j..])?;
        match b[j] {
            b'\\' => {
                escaped = true;
                j += 2;
            }
            _ => return Some((j + 1, escaped)),
        }
    }
    None
}

/// Path of the value being read: each frame's member key or item index.
fn path_of(stack: &[Frame]) -> String {
    let mut path = String::new();
    for f in stack {
        path = match f {
            Frame::Object { key: Some(k), .. } => join(&path, k),
            Frame::Object { key: None, .. } => path,
            Frame::Array { item } => index(&path, *item),
        };
    }
    path
}

/// The key of the member being read in the innermost object.
fn path_key<'a>(stack: &'a [Frame]) -> &'a str {
    match stack.last() {
        Some(Frame::Object { key: Some(k), .. }) => k,
        _ => "",
    }
}

/// A long literal cut to its first and last digits.
fn shorten(s: &str) -> Cow<'_, str> {
    if s.len() <= 40 {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("{}...{} ({} digits)", &s[..16], &s[s.len() - 8..], s.trim_start_matches('-').len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes_of(text: &str) -> Vec<String> {
        serde_json::from_str::<crate::value::Value>(text).expect("test text is JSON");
        notes(text).into_iter().map(|p| format!("{}|{}", p.path, p.message)).collect()
    }

    #[test]
    fn clean_text_has_no_notes() {
        let text =
            r#"{"a": [1, -2, 3.5e300, 18446744073709551615, -9223372036854775808], "b": {"a": "x\"y", "c": {}}}"#;
        assert!(notes_of(text).is_empty());
    }

    #[test]
    fn duplicate_keys_with_paths() {
        let n = notes_of(r#"{"tools": [{"name": "a", "x": {"k": 1, "k": 2}, "name": "b"}], "tools": []}"#);
        assert_eq!(n.len(), 3, "{n:?}");
        assert!(n[0].starts_with("tools[0].x.k|duplicate key \"k\""), "{n:?}");
        assert!(n[1].starts_with("tools[0].name|duplicate key \"name\""), "{n:?}");
        assert!(n[2].starts_with("tools|"), "{n:?}");
        // The same key spelled with an escape, and in a large object.
        assert_eq!(notes_of(r#"{"ab": 1, "a\u0062": 2}"#).len(), 1);
        let mut wide: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        wide.push("\"k7\": 0".into());
        assert_eq!(
            notes_of(&format!("{{{}}}", wide.join(","))),
            vec!["k7|duplicate key \"k7\": the last value is used, the earlier ones are ignored"]
        );
    }

    #[test]
    fn big_integers_with_paths() {
        let n = notes_of(
            r#"{"p": {"x": {"minimum": 123456789012345678901234567890, "enum": [1, -99999999999999999999]}}}"#,
        );
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n[0].starts_with("p.x.minimum|the integer 123456789012345678901234567890 is beyond 64 bits: read as the number 1.2345678901234568e+29, which"), "{n:?}");
        assert!(n[1].starts_with("p.x.enum[1]|the integer -99999999999999999999"), "{n:?}");
    }

    #[test]
    fn objects_after_others_start_with_no_keys() {
        // Key sets are reused from one object to the next: siblings and
        // nested objects with the same keys are no duplicates.
        let text = "[\n  {\"a\": 1, \"b\": {\"a\": 2, \"b\": 3}},\n  {\"a\": 4, \"b\": {\"a\": {}, \"b\": []}}\n]";
        assert!(notes_of(text).is_empty(), "{:?}", notes_of(text));
        let n = notes_of("{\n\t\"x\" :\r\n {\"k\": 1},\n \"y\": {\"k\": 1, \"k\" : 2}}");
        assert_eq!(n, vec!["y.k|duplicate key \"k\": the last value is used, the earlier ones are ignored"]);
    }

    #[test]
    fn strings_end_at_their_unescaped_quote() {
        // A key after strings ending in escaped quotes and backslashes.
        let n = notes_of(r#"{"a\\": "\"{", "b": "\\\"}\\", "a\\": 0, "c\"": [], "c\"": 1}"#);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n[0].starts_with(r#"a\|duplicate key"#) && n[1].starts_with(r#"c"|duplicate key"#), "{n:?}");
    }

    #[test]
    fn strings_and_indentation_of_any_length() {
        // Keys and values ending, or escaping, on either side of the 16
        // bytes looked at before `memchr`, in text indented by up to 20
        // spaces: each object's second key repeats its first.
        for (n, letter) in (0..40).flat_map(|n| [(n, "k"), (n, "\u{e9}"), (n, "\u{1F600}")]) {
            for escape in [None, Some(0), Some(n / 2), Some(n)] {
                let mut key = letter.repeat(n);
                if let Some(at) = escape {
                    let at = key.char_indices().nth(at).map_or(key.len(), |(i, _)| i);
                    key.insert_str(at, "\\\"");
                }
                let pad = " ".repeat(n % 21);
                let text = format!(
                    "{{\n{pad}\"{key}\": \"{key}\",\n{pad}\"{key}\": [\"{key}\"],\n{pad}\"z\": {{\"{key}\": 1}}}}"
                );
                let decoded: String = serde_json::from_str(&format!("\"{key}\"")).unwrap();
                assert_eq!(
                    notes_of(&text),
                    vec![format!(
                        "{decoded}|duplicate key \"{decoded}\": the last value is used, the earlier ones are ignored"
                    )],
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn integers_at_the_edges_of_64_bits() {
        let fits = "[999999999999999999, -999999999999999999, 9223372036854775807, -9223372036854775808, 18446744073709551615]";
        assert!(notes_of(fits).is_empty());
        let n = notes_of("[18446744073709551616, -9223372036854775809, 1000000000000000000000]");
        assert_eq!(n.len(), 3, "{n:?}");
    }

    #[test]
    fn text_that_is_not_json_never_panics() {
        for text in [
            "\"",
            "{\"",
            "{\"\u{e9}",
            "{\"a\\",
            "{\"a\\\u{e9}",
            "}}]]",
            "{\"a\": 1, \"a\"",
            "[1e99999999999999999999",
            "{\"\u{1F600}\\\"",
        ] {
            let _ = notes(text);
        }
    }

    #[test]
    fn notes_are_capped() {
        let text = format!("[{}]", vec!["123456789012345678901234567890"; 500].join(","));
        let n = notes_of(&text);
        assert_eq!(n.len(), MAX_NOTES + 1);
        assert_eq!(n[MAX_NOTES], "|450 more integers beyond 64 bits not listed");
    }
}
