//! Tool result envelopes (Arcade's early wire schema for the result of one
//! tool call): `{invocation_id, finished_at, success, output?}`, `output`
//! exactly one of `{value}`, `{error: {message, developer_message?}}`,
//! `{requires_authorization: {message, oauth2?: {url, scope?}}}` and
//! `{artifact: {url, content_type, size, meta: {description}}}`.
//!
//! The schema is embedded (`envelope-schema.json`, the published one with
//! its comments stripped) and every envelope made or read is validated
//! against it, formats (`date-time`, `uri`) included.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonschema::paths::LocationSegment;
use jsonschema::Validator;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Field;
use crate::plist;
use crate::schema::kind_of;
use crate::sink::Sink;
use crate::value::{Map, Value};

/// The envelope's JSON Schema (draft 2020-12).
pub const SCHEMA_TEXT: &str = include_str!("envelope-schema.json");

/// The output kinds, in the schema's `oneOf` order.
pub const OUTPUT_KINDS: [&str; 4] = ["value", "error", "requires_authorization", "artifact"];

/// The envelope's schema, parsed.
pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(SCHEMA_TEXT).expect("the embedded envelope schema is JSON"))
}

fn compile(schema: &Value) -> Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema.to_serde())
        .expect("the embedded envelope schema compiles")
}

fn validator() -> &'static Validator {
    static V: OnceLock<Validator> = OnceLock::new();
    V.get_or_init(|| compile(schema()))
}

/// A validator for each output kind's object (`output.KIND`), for
/// precise messages where the schema's `oneOf` only says "no match".
fn branch_validators() -> &'static [Validator] {
    static V: OnceLock<Vec<Validator>> = OnceLock::new();
    V.get_or_init(|| {
        OUTPUT_KINDS
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let sub = schema()
                    .pointer(&format!("/properties/output/oneOf/{i}/properties/{kind}"))
                    .expect("the envelope schema has a branch per output kind");
                compile(sub)
            })
            .collect()
    })
}

fn location(prefix: &str, path: &jsonschema::paths::Location) -> String {
    let mut out = prefix.to_string();
    for seg in path {
        match seg {
            LocationSegment::Property(p) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&p);
            }
            LocationSegment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Problems of `v` as an envelope: (path, message), empty when valid.
pub fn problems(v: &Value) -> Vec<(String, String)> {
    let Some(o) = v.as_object() else {
        return vec![(String::new(), format!("an envelope must be a JSON object, found {}", kind_of(v)))];
    };
    let mut out: Vec<(String, String)> = validator()
        .iter_errors(&v.to_serde())
        .map(|e| {
            let path = location("", e.instance_path());
            let msg = match e.kind() {
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    let name = property.as_str().map(String::from).unwrap_or_else(|| property.to_string());
                    return (
                        if path.is_empty() { name } else { format!("{path}.{name}") },
                        "required member missing".to_string(),
                    );
                }
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    format!(
                        "unexpected member{} {}",
                        if unexpected.len() > 1 { "s" } else { "" },
                        unexpected.join(", ")
                    )
                }
                _ => e.to_string(),
            };
            (path, msg)
        })
        .collect();
    // The `oneOf` over output kinds says only that nothing matched: say
    // what is wrong inside the kind the output has.
    if let Some(Value::Object(output)) = o.field("output") {
        if out.iter().any(|(p, _)| p == "output") {
            out.retain(|(p, _)| p != "output");
            let kinds: Vec<&str> = OUTPUT_KINDS.iter().copied().filter(|k| output.contains_key(k)).collect();
            let others: Vec<&str> = output.keys().map(String::as_str).filter(|k| !OUTPUT_KINDS.contains(k)).collect();
            if kinds.len() != 1 || !others.is_empty() {
                let found: Vec<&str> = output.keys().map(String::as_str).collect();
                out.insert(
                    0,
                    (
                        "output".into(),
                        format!(
                            "`output` must hold exactly one of value, error, requires_authorization or artifact; found {{{}}}",
                            found.join(", ")
                        ),
                    ),
                );
            } else {
                let kind = kinds[0];
                let i = OUTPUT_KINDS.iter().position(|k| *k == kind).expect("a known kind");
                let prefix = format!("output.{kind}");
                let inner: Vec<(String, String)> = branch_validators()[i]
                    .iter_errors(&output[kind].to_serde())
                    .map(|e| {
                        let path = location(&prefix, e.instance_path());
                        match e.kind() {
                            jsonschema::error::ValidationErrorKind::Required { property } => {
                                let name = property.as_str().map(String::from).unwrap_or_else(|| property.to_string());
                                (format!("{path}.{name}"), "required member missing".to_string())
                            }
                            _ if kind == "value" => (
                                path,
                                format!(
                                    "a value must be an object, a number, a string or a boolean, found {}",
                                    kind_of(&output[kind])
                                ),
                            ),
                            _ => (path, e.to_string()),
                        }
                    })
                    .collect();
                if inner.is_empty() {
                    out.insert(0, ("output".into(), "`output` does not match the envelope schema".into()));
                } else {
                    out.splice(0..0, inner);
                }
            }
        }
    }
    out
}

/// Validate `v` as an envelope; the error carries the path of the first
/// problem and lists them all.
pub fn validate(v: &Value) -> Result<()> {
    let found = problems(v);
    let Some((path, first)) = found.first() else { return Ok(()) };
    // The first problem's path is the error's (shown before the message).
    let mut message = format!("not a valid tool result envelope: {first}");
    for (p, m) in &found[1..] {
        message.push_str(&if p.is_empty() { format!("; {m}") } else { format!("; {p}: {m}") });
    }
    Err(Error::at(ErrorKind::Envelope, path, message))
}

// ------------------------------------------------------------------ making

/// What a tool call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A function that returns nothing.
    Void,
    /// An object, number, string or boolean.
    Value(Value),
    Error {
        message: String,
        developer_message: Option<String>,
    },
    Authorization {
        message: String,
        url: Option<String>,
        scope: Option<String>,
    },
    Artifact {
        url: String,
        content_type: String,
        size: u64,
        description: String,
    },
}

impl Outcome {
    /// The envelope's `output` member (None for a void result).
    pub fn output(&self) -> Option<Value> {
        let mut out = Map::new();
        let mut obj = Map::new();
        let (key, inner) = match self {
            Outcome::Void => return None,
            Outcome::Value(v) => ("value", v.clone()),
            Outcome::Error { message, developer_message } => {
                obj.insert("message".into(), Value::from(message.as_str()));
                if let Some(d) = developer_message {
                    obj.insert("developer_message".into(), Value::from(d.as_str()));
                }
                ("error", Value::Object(obj))
            }
            Outcome::Authorization { message, url, scope } => {
                obj.insert("message".into(), Value::from(message.as_str()));
                if let Some(u) = url {
                    let mut o = Map::new();
                    o.insert("url".into(), Value::from(u.as_str()));
                    if let Some(s) = scope {
                        o.insert("scope".into(), Value::from(s.as_str()));
                    }
                    obj.insert("oauth2".into(), Value::Object(o));
                }
                ("requires_authorization", Value::Object(obj))
            }
            Outcome::Artifact { url, content_type, size, description } => {
                obj.insert("url".into(), Value::from(url.as_str()));
                obj.insert("content_type".into(), Value::from(content_type.as_str()));
                obj.insert("size".into(), Value::from(*size));
                let mut meta = Map::new();
                meta.insert("description".into(), Value::from(description.as_str()));
                obj.insert("meta".into(), Value::Object(meta));
                ("artifact", Value::Object(obj))
            }
        };
        out.insert(key.into(), inner);
        Some(Value::Object(out))
    }
}

/// The envelope of `outcome`.
pub fn make(outcome: &Outcome, invocation_id: Option<&str>, finished_at: Option<&str>) -> Result<Value> {
    make_from_output(outcome.output(), invocation_id, finished_at)
}

/// The envelope of an `output` member already in wire form (None: void).
/// `success` is true for a value, an artifact or nothing, false for an
/// error or a request for authorization.  The invocation id and the time
/// default to a new random id and now.
/// [`make_from_output`] of the output printed by Emacs as a plist
/// (`printed`; nil for a void result), its keys the output's members.
pub fn make_from_printed(printed: &str, invocation_id: Option<&str>, finished_at: Option<&str>) -> Result<Value> {
    let sexp = plist::parse_sexp(printed)?;
    let output = (|| {
        if plist::is_nil(&sexp) {
            return Ok(None);
        }
        let pairs =
            plist::plist_pairs(&sexp).ok_or_else(|| Error::new(ErrorKind::Plist, "the outcome must be a plist"))?;
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert(k.to_string(), plist::sexp_to_json(v, Some(k), k, false)?);
        }
        Ok(Some(Value::Object(m)))
    })();
    plist::dispose(sexp);
    make_from_output(output?, invocation_id, finished_at)
}

pub fn make_from_output(
    output: Option<Value>,
    invocation_id: Option<&str>,
    finished_at: Option<&str>,
) -> Result<Value> {
    let success = match &output {
        None => true,
        Some(Value::Object(o)) => !(o.has("error") || o.has("requires_authorization")),
        Some(_) => true,
    };
    let mut env = Map::new();
    env.insert("invocation_id".into(), Value::from(invocation_id.map(String::from).unwrap_or_else(new_id)));
    env.insert("finished_at".into(), Value::from(finished_at.map(String::from).unwrap_or_else(now_rfc3339)));
    env.insert("success".into(), Value::Bool(success));
    if let Some(o) = output {
        env.insert("output".into(), o);
    }
    let env = Value::Object(env);
    validate(&env)?;
    Ok(env)
}

/// A new random id in UUID version 4 form.
pub fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        h.finish()
    };
    let (a, b) = (word(1), word(2));
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000; // variant 10
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000; // version 4
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// The current time in RFC 3339, UTC, with milliseconds:
/// `2026-11-22T14:13:36.123Z`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    rfc3339(d.as_secs() as i64, d.subsec_millis())
}

/// `secs` since the Unix epoch, and milliseconds, in RFC 3339 (UTC).
pub fn rfc3339(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

// ------------------------------------------------------------------ reading

/// An envelope read for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// What the model should see.
    pub text: String,
    pub success: bool,
    /// `value`, `error`, `requires_authorization`, `artifact` or `void`.
    pub kind: &'static str,
    pub invocation_id: String,
    /// For the log only, never for the model or the user
    /// (`developer_message`).
    pub log: Option<String>,
    /// For the user only (an authorization request with its URL).
    pub user: Option<String>,
    /// The URL the user should open to authorize.
    pub url: Option<String>,
}

impl Reading {
    /// The reading as a plist: `(:text TEXT :success BOOL :kind KIND
    /// :invocation-id ID :log DEV :user MSG :url URL)`, the last three nil
    /// when absent.
    pub fn emit<'a, S: Sink<'a>>(&'a self, s: &mut S) {
        s.open(false);
        s.keyword("text");
        s.string(&self.text);
        s.keyword("success");
        if self.success {
            s.t()
        } else {
            s.nil()
        }
        s.keyword("kind");
        s.symbol(self.kind);
        s.keyword("invocation-id");
        s.string(&self.invocation_id);
        for (key, v) in [("log", &self.log), ("user", &self.user), ("url", &self.url)] {
            s.keyword(key);
            match v {
                Some(v) => s.string(v),
                None => s.nil(),
            }
        }
        s.close();
    }
}

/// Parse, validate and read envelope JSON text.
pub fn read_text(text: &str) -> Result<Reading> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        let mut err = Error::from_json(&e);
        err.kind = ErrorKind::Envelope;
        err.message = format!("the tool result is not JSON: {}", err.message);
        err
    })?;
    read(&v)
}

/// Validate an envelope and turn it into what the model should see.
pub fn read(v: &Value) -> Result<Reading> {
    validate(v)?;
    let o = v.as_object().expect("validated");
    let success = o.field("success") == Some(&Value::Bool(true));
    let invocation_id = o.field("invocation_id").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut r = Reading { text: String::new(), success, kind: "void", invocation_id, log: None, user: None, url: None };
    let output = o.field("output").and_then(Value::as_object);
    let str_of = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).map(String::from);
    match output.and_then(|out| OUTPUT_KINDS.iter().find(|k| out.contains_key(k)).map(|k| (*k, &out[*k]))) {
        None => {
            r.text = if success {
                "The tool ran successfully and returned no value.".into()
            } else {
                "Error: the tool call failed without saying why.".into()
            };
        }
        Some(("value", v)) => {
            r.kind = "value";
            r.text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
        }
        Some(("error", Value::Object(e))) => {
            r.kind = "error";
            r.text = format!("Error: {}", str_of(e, "message").unwrap_or_default());
            r.log = str_of(e, "developer_message");
        }
        Some(("requires_authorization", Value::Object(a))) => {
            r.kind = "requires_authorization";
            let message = str_of(a, "message").unwrap_or_default();
            r.url = a.field("oauth2").and_then(|o| o.field("url")).and_then(Value::as_str).map(String::from);
            r.text = format!("Authorization required: {message}");
            if r.url.is_some() {
                r.text.push_str(" The user has been shown where to authorize; call the tool again once they have.");
            }
            r.user = Some(match &r.url {
                Some(u) => format!("{message} Authorize at {u}"),
                None => message,
            });
        }
        Some(("artifact", Value::Object(a))) => {
            r.kind = "artifact";
            let desc = a.field("meta").and_then(|m| m.field("description")).and_then(Value::as_str).unwrap_or_default();
            r.text = format!(
                "Artifact: {desc} ({}, {} bytes) at {}",
                str_of(a, "content_type").unwrap_or_default(),
                a.field("size").map(Value::to_string).unwrap_or_default(),
                str_of(a, "url").unwrap_or_default()
            );
        }
        Some(_) => unreachable!("validated"),
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_795_357_216, 123), "2026-11-22T14:20:16.123Z");
        assert_eq!(rfc3339(-1, 0), "1969-12-31T23:59:59.000Z");
    }

    #[test]
    fn ids() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }
}
