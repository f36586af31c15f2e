//! What the readers of the seed formats ([`crate::gloodata`],
//! [`crate::arcade`], [`crate::skydeck`]) share: optional members read
//! with their errors, and names made valid for providers.  Below
//! [`crate::seeds`], which dispatches to those readers.

use crate::error::{Error, Result};
use crate::model::{join, Code, Problem};
use crate::schema::kind_of;
use crate::value::{Map, Value};

/// An optional string member: absent and null are None.
pub(crate) fn opt_str<'v>(o: &'v Map<String, Value>, key: &str, path: &str) -> Result<Option<&'v str>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => {
            Err(Error::shape(&join(path, key), format!("`{key}` must be a string, found {}", kind_of(other))))
        }
    }
}

/// An optional object member: absent and null are None.
pub(crate) fn opt_obj<'v>(o: &'v Map<String, Value>, key: &str, path: &str) -> Result<Option<&'v Map<String, Value>>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => {
            Err(Error::shape(&join(path, key), format!("`{key}` must be an object, found {}", kind_of(other))))
        }
    }
}

/// The strings of an optional array member; other items are dropped
/// with a warning.
pub(crate) fn opt_strings(
    o: &Map<String, Value>,
    key: &str,
    path: &str,
    warnings: &mut Vec<Problem>,
) -> Result<Option<Vec<String>>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    other => warnings.push(Problem::warning(
                        Code::Ignored,
                        format!("{}[{i}]", join(path, key)),
                        format!("{} ignored: `{key}` holds strings", kind_of(other)),
                    )),
                }
            }
            Ok(Some(out))
        }
        Some(other) => Err(Error::shape(
            &join(path, key),
            format!("`{key}` must be an array of strings, found {}", kind_of(other)),
        )),
    }
}

/// A provider-valid name (`^[a-zA-Z0-9_-]{1,64}$`) made from `raw`:
/// other characters become `_`; a name longer than 64 characters keeps
/// its first 55 and gets `_` and 8 hex digits of a hash of the whole, so
/// long names that differ only at the end stay distinct.
pub fn provider_name(raw: &str) -> String {
    let mut out: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    if out.len() > 64 {
        out.truncate(55);
        out.push_str(&format!("_{:08x}", fnv1a(raw.as_bytes()) as u32));
    }
    out
}

/// A snake_case name made from a human title: `"Blog Post Writer"` ->
/// `blog_post_writer`; empty when `raw` has no ASCII letter or digit.
pub fn snake_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut gap = false;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    if out.len() > 64 {
        provider_name(&out)
    } else {
        out
    }
}

/// A property name providers accept (`^[a-zA-Z0-9_.-]{1,64}$`).
pub fn property_name(raw: &str) -> String {
    let mut out: String = raw
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
        .collect();
    if out.is_empty() {
        out.push_str("value");
    }
    if out.len() > 64 {
        out = provider_name(&out);
    }
    out
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The executor metadata of `tool` when it is of `kind`.
pub fn executor_of<'t>(extra: &'t Map<String, Value>, kind: &str) -> Option<&'t Map<String, Value>> {
    extra.get("executor").and_then(Value::as_object).filter(|e| e.get("type").and_then(Value::as_str) == Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(provider_name("mynamespace_showMapAtAddressAndZoom"), "mynamespace_showMapAtAddressAndZoom");
        assert_eq!(provider_name("gd-github_Show Issues"), "gd-github_Show_Issues");
        let long = "x".repeat(70);
        let a = provider_name(&long);
        let b = provider_name(&(long.clone() + "y"));
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(crate::validate::name_is_valid(&a));
        assert_eq!(snake_name("Blog Post  Writer!"), "blog_post_writer");
        assert_eq!(snake_name("  "), "");
        assert_eq!(property_name("variable name 1"), "variable_name_1");
        assert_eq!(property_name("a.b-c"), "a.b-c");
    }
}
