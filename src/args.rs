//! Run-time checking of the arguments a model sends, against the tool's
//! full JSON Schema, with a real validator (the `jsonschema` crate; no
//! remote or file references are ever fetched).

use jsonschema::paths::LocationSegment;
use jsonschema::Validator;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Problem, Tool};
use crate::write::{parameters, Dialect};

/// A compiled checker for one tool's arguments.
pub struct ArgChecker {
    validator: Validator,
}

impl ArgChecker {
    /// Compile the checker for `tool`'s parameters schema.
    pub fn new(tool: &Tool) -> Result<ArgChecker> {
        let schema = Value::Object(parameters(tool, Dialect::JsonSchema));
        let validator = jsonschema::validator_for(&schema).map_err(|e| {
            Error::new(ErrorKind::Write, format!("the tool's schema is not a valid JSON Schema: {e}"))
        })?;
        Ok(ArgChecker { validator })
    }

    /// Check an arguments object; every problem has the argument's path
    /// (`unit`, `opts.z`, `days[2]`; empty for the object itself).  A
    /// missing required argument is reported at its own name.
    pub fn check(&self, args: &Value) -> Vec<Problem> {
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
                    return Problem::error(full, "required argument missing");
                }
                Problem::error(path, e.to_string())
            })
            .collect()
    }

    /// Check arguments given as JSON text.
    pub fn check_text(&self, text: &str) -> Result<Vec<Problem>> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        if !v.is_object() {
            return Ok(vec![Problem::error("", format!("the arguments must be a JSON object, got {v}"))]);
        }
        Ok(self.check(&v))
    }
}
