//! Run-time checking of the arguments a model sends, against the tool's
//! full JSON Schema, with a real validator (the `jsonschema` crate; no
//! remote or file references are ever fetched).

use jsonschema::paths::LocationSegment;
use jsonschema::Validator;
use lexpr::Value as Sexp;

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Code, Field, Problem, Schema, Tool};
use crate::plist::{dispose, is_nil, list_items, parse_sexp, plist_pairs, sexp_to_json};
use crate::value::{Map, Value};
use crate::write::{parameters, Dialect};

/// A compiled checker for one tool's arguments.
pub struct ArgChecker {
    validator: Validator,
    /// The parameters schema, to read Lisp values by their types.
    schema: Schema,
    /// Argument names, in the order functions receive them.
    names: Vec<String>,
}

impl ArgChecker {
    /// Compile the checker for `tool`'s parameters schema.
    pub fn new(tool: &Tool) -> Result<ArgChecker> {
        let schema = parameters(tool, Dialect::JsonSchema);
        let validator = jsonschema::validator_for(&Value::Object(schema.clone()).to_serde())
            .map_err(|e| Error::new(ErrorKind::Write, format!("the tool's schema is not a valid JSON Schema: {e}")))?;
        let names = tool.args.iter().map(|a| a.name.clone()).collect();
        Ok(ArgChecker { validator, schema, names })
    }

    /// Check an arguments object; every problem has the argument's path
    /// (`unit`, `opts.z`, `days[2]`; empty for the object itself).  A
    /// missing required argument is reported at its own name.
    pub fn check(&self, args: &Value) -> Vec<Problem> {
        self.check_serde(&args.to_serde())
    }

    /// [`ArgChecker::check`] of a value as the validator takes it.
    fn check_serde(&self, args: &serde_json::Value) -> Vec<Problem> {
        self.validator
            .iter_errors(args)
            .map(|e| {
                let mut path = String::new();
                for seg in e.instance_path() {
                    match seg {
                        LocationSegment::Property(p) => {
                            if !path.is_empty() {
                                path.push('.');
                            }
                            path.push_str(&p);
                        }
                        LocationSegment::Index(i) => path.push_str(&format!("[{i}]")),
                    }
                }
                if let jsonschema::error::ValidationErrorKind::Required { property } = e.kind() {
                    let name = property.as_str().map(String::from).unwrap_or_else(|| property.to_string());
                    let full = if path.is_empty() { name } else { format!("{path}.{name}") };
                    return Problem::error(Code::MissingArgument, full, "required argument missing");
                }
                Problem::error(Code::InvalidArgument, path, shorten(&e.to_string(), e.instance()))
            })
            .collect()
    }

    /// Check arguments given as JSON text.
    pub fn check_text(&self, text: &str) -> Result<Vec<Problem>> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        if !v.is_object() {
            return Ok(vec![Problem::error(
                Code::InvalidArgument,
                "",
                shorten(&format!("the arguments must be a JSON object, got {v}"), &v),
            )]);
        }
        Ok(self.check_serde(&v))
    }
    /// Check arguments given as Lisp values printed by Emacs: with
    /// `positional`, a list of values in argument order (as gptel and llm
    /// call tool functions, nil for a missing argument); otherwise one
    /// arguments object (a plist or alist).  Lisp values are read by the
    /// schema: nil is null where null is allowed, false for a boolean,
    /// `{}` for an object, `[]` for an array, and otherwise missing.
    pub fn check_lisp(&self, text: &str, positional: bool) -> Result<Vec<Problem>> {
        let sexp = parse_sexp(text)?;
        let args = if positional {
            let items =
                list_items(&sexp).ok_or_else(|| Error::new(ErrorKind::Plist, "the arguments must be a list"))?;
            let mut obj = Map::new();
            for (name, v) in self.names.iter().zip(items) {
                let sub = self.property(name);
                if let Some(j) = typed(v, sub, name)? {
                    obj.insert(name.clone(), j);
                }
            }
            Value::Object(obj)
        } else {
            typed(&sexp, Some(&self.schema), "")?.unwrap_or_else(|| Value::Object(Map::new()))
        };
        dispose(sexp);
        Ok(self.check(&args))
    }

    fn property(&self, name: &str) -> Option<&Schema> {
        self.schema.field("properties")?.get(name)?.as_object()
    }
}

/// The longest value an argument error quotes, in characters: a longer
/// one is cut, with a marker saying how long it was.
pub const QUOTED_MAX: usize = 200;

/// The longest argument error, in characters (its middle is cut beyond).
pub const MESSAGE_MAX: usize = 1000;

/// `message`, which may quote `value` (the argument's JSON), with a long
/// quoted value cut to [`QUOTED_MAX`] characters and a marker, and the
/// whole kept within [`MESSAGE_MAX`]: the model gets what is wrong, not
/// its own megabyte back.
fn shorten(message: &str, value: &serde_json::Value) -> String {
    let quoted = value.to_string();
    let count = quoted.chars().count();
    let mut text = if count > QUOTED_MAX && message.contains(&quoted) {
        let cut: String = quoted.chars().take(QUOTED_MAX).collect();
        message.replacen(&quoted, &format!("{cut}... [{count} characters in all]"), 1)
    } else {
        message.to_string()
    };
    let len = text.chars().count();
    if len > MESSAGE_MAX {
        let head: String = text.chars().take(MESSAGE_MAX / 2).collect();
        let tail: String = text.chars().skip(len - MESSAGE_MAX / 2).collect();
        text = format!("{head} ... [{} characters cut] ... {tail}", len - MESSAGE_MAX);
    }
    text
}

/// The JSON types a schema allows (empty when it says nothing).
fn types_of(schema: Option<&Schema>) -> Vec<&str> {
    match schema.and_then(|s| s.field("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A Lisp value as JSON, read by `schema`; None for a missing value.
fn typed(v: &Sexp, schema: Option<&Schema>, path: &str) -> Result<Option<Value>> {
    let types = types_of(schema);
    if is_nil(v) {
        let nullable =
            types.contains(&"null") || schema.is_some_and(|s| s.field("nullable") == Some(&Value::Bool(true)));
        return Ok(if nullable {
            Some(Value::Null)
        } else if types.contains(&"boolean") {
            Some(Value::Bool(false))
        } else if types.contains(&"object") {
            Some(Value::Object(Map::new()))
        } else if types.contains(&"array") {
            Some(Value::Array(Vec::new()))
        } else {
            None
        });
    }
    let sub = |key: &str| schema.and_then(|s| s.get(key)).and_then(Value::as_object);
    // Objects: plists as gptel parses them, alists as llm does.
    if types.contains(&"object") || types.is_empty() {
        let pairs: Option<Vec<(String, &Sexp)>> =
            plist_pairs(v).map(|p| p.into_iter().map(|(k, x)| (k.to_string(), x)).collect()).or_else(|| {
                let items = list_items(v)?;
                items
                    .iter()
                    .map(|x| {
                        let c = x.as_cons()?;
                        let k = c.car().as_symbol().or_else(|| c.car().as_keyword()).or_else(|| c.car().as_str())?;
                        Some((k.to_string(), c.cdr()))
                    })
                    .collect()
            });
        if let Some(pairs) = pairs.filter(|p| !p.is_empty()) {
            let props = sub("properties");
            let mut m = Map::new();
            for (k, x) in pairs {
                let ps = props.and_then(|p| p.get(&k)).and_then(Value::as_object);
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                if let Some(j) = typed(x, ps, &p)? {
                    m.insert(k, j);
                }
            }
            return Ok(Some(Value::Object(m)));
        }
    }
    // Arrays: vectors, or lists.
    let items: Option<Vec<&Sexp>> =
        v.as_slice().map(|s| s.iter().collect()).or_else(
            || {
                if types.contains(&"array") {
                    list_items(v)
                } else {
                    None
                }
            },
        );
    if let Some(items) = items {
        let item_schema = sub("items");
        let mut out = Vec::with_capacity(items.len());
        for (i, x) in items.iter().enumerate() {
            let j = typed(x, item_schema, &format!("{path}[{i}]"))?;
            out.push(j.unwrap_or(Value::Null));
        }
        return Ok(Some(Value::Array(out)));
    }
    sexp_to_json(v, None, path, false).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long value is quoted cut, with a marker saying its length.
    #[test]
    fn long_values_are_quoted_cut() {
        let v = serde_json::Value::String("x".repeat(1 << 20));
        let m = shorten(&format!("{v} is not of type \"integer\""), &v);
        assert!(m.ends_with("... [1048578 characters in all] is not of type \"integer\""), "{}", &m[..300]);
        assert!(m.chars().count() < QUOTED_MAX + 100);
        let m = shorten(&format!("Additional properties are not allowed ('{}' was unexpected)", "k".repeat(5000)), &v);
        assert!(
            m.chars().count() < MESSAGE_MAX + 100 && m.contains("characters cut]") && m.ends_with("was unexpected)"),
            "{m}"
        );
        assert_eq!(
            shorten("\"x\" is not of type \"integer\"", &serde_json::json!("x")),
            "\"x\" is not of type \"integer\""
        );
    }
}
