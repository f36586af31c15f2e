//! Arcade tool definitions (from Arcade's early wire schemas):
//! `{name, version, description, input: {parameters: [{name, required,
//! description, schema: {type, enum?}, inferrable}]}}`, types string,
//! integer, float, boolean and json.  The later `value_schema: {val_type,
//! inner_val_type, enum}` spelling is read too.  A tool runs by posting a
//! tool request to a worker, which answers with a result envelope (see
//! [`crate::envelope`]); the worker's URL is given when importing.

use crate::error::{Error, Result};
use crate::imported::Imported;
use crate::model::{index, join, Arg, Code, Field, Problem, Schema, Tool};
use crate::schema::{canonical_type, kind_of};
use crate::seeds_common::{opt_obj, opt_str, provider_name};
use crate::value::{Map, Value};

/// Whether a JSON object is an Arcade tool definition.
pub fn is_definition(o: &Map<String, Value>) -> bool {
    o.field("name").is_some_and(Value::is_string)
        && o.field("input").is_some_and(|i| i.field("parameters").is_some_and(Value::is_array))
}

/// An Arcade value type as a JSON Schema type.
fn schema_type(t: &str) -> Option<&'static str> {
    match t {
        "string" => Some("string"),
        "integer" => Some("integer"),
        "float" | "number" => Some("number"),
        "boolean" => Some("boolean"),
        "json" => Some("object"),
        "array" => Some("array"),
        _ => None,
    }
}

/// Read one Arcade tool definition at `path`.
pub fn read(o: &Map<String, Value>, path: &str, out: &mut Imported) -> Result<()> {
    let raw_name = match o.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => return Err(Error::shape(&join(path, "name"), "an Arcade tool needs a `name` (a non-empty string)")),
    };
    let name = provider_name(raw_name);
    if name != raw_name {
        out.warnings.push(Problem::warning(Code::Renamed,
            join(path, "name"),
            format!("tool \"{raw_name}\" is named \"{name}\" (tool names allow letters, digits, _ and -, at most 64); the worker still receives \"{raw_name}\""),
        ));
    }
    let version = match o.get("version") {
        None | Some(Value::Null) => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        Some(other) => {
            return Err(Error::shape(
                &join(path, "version"),
                format!("`version` must be a string, found {}", kind_of(other)),
            ))
        }
    };
    let mut tool = Tool { name, description: opt_str(o, "description", path)?.map(String::from), ..Tool::default() };
    let ipath = join(path, "input");
    let ppath = join(&ipath, "parameters");
    if let Some(input) = opt_obj(o, "input", path)? {
        match input.get("parameters") {
            None | Some(Value::Null) => {}
            Some(Value::Array(params)) => {
                let mut names = std::collections::HashSet::new();
                for (i, p) in params.iter().enumerate() {
                    let arg = parameter(p, &index(&ppath, i), &mut out.warnings)?;
                    if !names.insert(arg.name.clone()) {
                        return Err(Error::shape(
                            &index(&ppath, i),
                            format!("two parameters are named \"{}\"", arg.name),
                        ));
                    }
                    tool.args.push(arg);
                }
            }
            Some(other) => {
                return Err(Error::shape(&ppath, format!("`parameters` must be an array, found {}", kind_of(other))))
            }
        }
    }
    let mut id = Map::new();
    id.insert("name".into(), Value::from(raw_name));
    if let Some(v) = version {
        id.insert("version".into(), v);
    }
    let mut exec = Map::new();
    exec.insert("type".into(), Value::from("arcade"));
    exec.insert("tool".into(), Value::Object(id));
    tool.extra.insert("executor".into(), Value::Object(exec));
    out.tools.push(tool);
    out.paths.push(path.to_string());
    Ok(())
}

fn parameter(p: &Value, path: &str, warnings: &mut Vec<Problem>) -> Result<Arg> {
    let o = p
        .as_object()
        .ok_or_else(|| Error::shape(path, format!("a parameter must be an object, found {}", kind_of(p))))?;
    let name = match o.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::shape(&join(path, "name"), "a parameter needs a `name` (a non-empty string)")),
    };
    let required = match o.get("required") {
        Some(Value::Bool(b)) => *b,
        None | Some(Value::Null) => {
            warnings.push(Problem::warning(
                Code::Assumed,
                join(path, "required"),
                format!("parameter \"{name}\" does not say whether it is required: read as optional"),
            ));
            false
        }
        Some(other) => {
            return Err(Error::shape(
                &join(path, "required"),
                format!("`required` must be true or false, found {}", kind_of(other)),
            ))
        }
    };
    // `schema: {type, enum}` or, later, `value_schema: {val_type, inner_val_type, enum}`.
    let (spath, vs, type_key) = if o.contains_key("schema") {
        (join(path, "schema"), opt_obj(o, "schema", path)?, "type")
    } else {
        (join(path, "value_schema"), opt_obj(o, "value_schema", path)?, "val_type")
    };
    let empty = Map::new();
    let vs = vs.unwrap_or(&empty);
    let raw_type = opt_str(vs, type_key, &spath)?;
    let ty = type_of(raw_type, &join(&spath, type_key), &name, warnings)?;
    let mut schema = Schema::new();
    schema.insert("type".into(), Value::from(ty));
    if ty == "array" {
        let inner = opt_str(vs, "inner_val_type", &spath)?;
        let it = type_of(inner, &join(&spath, "inner_val_type"), &name, warnings)?;
        let mut items = Schema::new();
        items.insert("type".into(), Value::from(it));
        if let Some(e) = vs.get("enum").filter(|e| e.is_array()) {
            items.insert("enum".into(), e.clone());
        }
        schema.insert("items".into(), Value::Object(items));
    } else if let Some(e) = vs.get("enum") {
        match e {
            Value::Null => {}
            Value::Array(_) => {
                schema.insert("enum".into(), e.clone());
            }
            other => {
                return Err(Error::shape(
                    &join(&spath, "enum"),
                    format!("`enum` must be an array, found {}", kind_of(other)),
                ))
            }
        }
    }
    if ty == "object" {
        // `json`: any object.
        schema.insert("additionalProperties".into(), Value::Bool(true));
    }
    let mut description = opt_str(o, "description", path)?.map(|d| d.trim().to_string()).unwrap_or_default();
    if o.get("inferrable") == Some(&Value::Bool(false)) {
        if !description.is_empty() && !description.ends_with('.') {
            description.push('.');
        }
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str("Do not guess this value: ask the user for it.");
    }
    if !description.is_empty() {
        // Put the description first, as people write it.
        let mut s = Schema::new();
        s.insert("type".into(), schema.shift_remove("type").unwrap_or(Value::Null));
        s.insert("description".into(), Value::from(description));
        s.extend(schema);
        schema = s;
    }
    Ok(Arg { name, optional: !required, schema })
}

fn type_of(raw: Option<&str>, path: &str, name: &str, warnings: &mut Vec<Problem>) -> Result<&'static str> {
    let Some(raw) = raw else {
        warnings.push(Problem::warning(
            Code::Assumed,
            path,
            format!("parameter \"{name}\" has no type: read as string"),
        ));
        return Ok("string");
    };
    if let Some(t) = schema_type(raw) {
        return Ok(t);
    }
    match canonical_type(raw) {
        Some((t, _)) if t != "null" => {
            warnings.push(Problem::warning(
                Code::TypeAlias,
                path,
                format!("non-standard Arcade type \"{raw}\" read as \"{t}\""),
            ));
            Ok(t)
        }
        _ => Err(Error::shape(
            path,
            format!("unknown Arcade type \"{raw}\": expected string, integer, float, boolean or json"),
        )),
    }
}
