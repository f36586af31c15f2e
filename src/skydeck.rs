//! SkyDeck's "JSON Format for LLM Tools": a prompt packaged as a tool.
//!
//! `model_prompt` holds `{{variable}}` placeholders; `metadata.variables`
//! declares them (text, single-select, multi-select, with defaults);
//! running the tool fills the placeholders and sends the prompt to a
//! model with `metadata.parameters`.  The whole document is kept in the
//! executor metadata, so writing the tool back gives it unchanged.
//!
//! Real files are hand-written and carry small JSON slips (the sample in
//! SkyDeck's own documentation has trailing and missing commas): text
//! that looks like a SkyDeck document is repaired by [`crate::lenient`]
//! when strict parsing fails.

use crate::error::{Error, ErrorKind, Result};
use crate::imported::{Imported, ReadOptions};
use crate::model::{index, join, Arg, Code, Field, Problem, Schema, Tool};
use crate::schema::kind_of;
use crate::seeds_common::{executor_of, opt_obj, opt_str, property_name, snake_name};
use crate::value::{Map, Value};

/// Whether a JSON object is a SkyDeck document.
pub fn is_document(o: &Map<String, Value>) -> bool {
    o.has("model_prompt")
}

/// Whether JSON text (maybe not valid) looks like a SkyDeck document.
pub fn looks_like(text: &str) -> bool {
    text.contains("\"model_prompt\"")
}

/// The placeholders of `prompt`, in order of first appearance, trimmed:
/// `{{ name }}` gives `name`.
pub fn placeholders(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut rest = prompt;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let inner = after[..end].trim();
        if !inner.is_empty() && !inner.contains('{') && !inner.contains('}') && seen.insert(inner) {
            out.push(inner.to_string());
        }
        rest = &after[end + 2..];
    }
    out
}

/// A default value as the description states it.
fn show_default(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|x| x.as_str().map(String::from).unwrap_or_else(|| x.to_string()))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// Read one SkyDeck document at `path`.
pub fn read(o: &Map<String, Value>, path: &str, opts: &ReadOptions, out: &mut Imported) -> Result<()> {
    let prompt = match o.get("model_prompt") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(Error::shape(
                &join(path, "model_prompt"),
                format!("`model_prompt` must be a string, found {}", kind_of(other)),
            ))
        }
        None => return Err(Error::shape(path, "a SkyDeck prompt tool needs a `model_prompt` (a string)")),
    };
    let mpath = join(path, "metadata");
    let empty = Map::new();
    let meta = opt_obj(o, "metadata", path)?.unwrap_or(&empty);
    let prompt_name = opt_str(meta, "prompt_name", &mpath)?;

    let name = match prompt_name.map(snake_name).filter(|n| !n.is_empty()) {
        Some(n) => n,
        None => {
            let fallback =
                opts.default_name.map(snake_name).filter(|n| !n.is_empty()).unwrap_or_else(|| "prompt".into());
            out.warnings.push(Problem::warning(
                Code::Renamed,
                join(&mpath, "prompt_name"),
                format!("no usable `prompt_name`: the tool is named \"{fallback}\""),
            ));
            fallback
        }
    };

    let mut tool = Tool { name, ..Tool::default() };
    tool.description = Some(description(meta, &mpath, prompt_name)?);
    if let Some(title) = prompt_name {
        tool.extra.insert("title".into(), Value::from(title));
    }

    // Declared variables, in order.
    let mut map = Map::new(); // argument name -> placeholder
    let mut names = std::collections::HashSet::new(); // of the arguments
    let vpath = join(&mpath, "variables");
    match meta.get("variables") {
        None | Some(Value::Null) => {}
        Some(Value::Array(vars)) => {
            for (i, var) in vars.iter().enumerate() {
                let p = index(&vpath, i);
                if let Some((arg, placeholder)) = variable(var, &p, &mut out.warnings)? {
                    if !names.insert(arg.name.clone()) {
                        out.warnings.push(Problem::warning(
                            Code::Ignored,
                            join(&p, "name"),
                            format!("a second variable named \"{}\" ignored", arg.name),
                        ));
                        continue;
                    }
                    map.insert(arg.name.clone(), Value::from(placeholder));
                    tool.args.push(arg);
                }
            }
        }
        Some(other) => {
            return Err(Error::shape(&vpath, format!("`variables` must be an array, found {}", kind_of(other))))
        }
    }

    // Placeholders nobody declared are plain text arguments.
    let found = placeholders(&prompt);
    let in_prompt: std::collections::HashSet<&str> = found.iter().map(String::as_str).collect();
    let mut declared_placeholders: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (var_name, declared) in map.iter() {
        if let Some(ph) = declared.as_str() {
            declared_placeholders.insert(ph.to_string());
            if !in_prompt.contains(ph) {
                out.warnings.push(Problem::warning(
                    Code::Unused,
                    vpath.clone(),
                    format!("variable \"{ph}\" (argument {var_name}) does not appear in model_prompt as {{{{{ph}}}}}"),
                ));
            }
        }
    }
    for ph in found {
        if declared_placeholders.contains(&ph) {
            continue;
        }
        let arg_name = property_name(&ph);
        if !names.insert(arg_name.clone()) {
            out.warnings.push(Problem::warning(
                Code::Unsupported,
                join(path, "model_prompt"),
                format!("placeholder {{{{{ph}}}}} clashes with argument \"{arg_name}\": it is left unfilled"),
            ));
            continue;
        }
        let mut schema = Schema::new();
        schema.insert("type".into(), Value::from("string"));
        schema.insert("description".into(), Value::from(format!("Fills {{{{{ph}}}}} in the prompt.")));
        map.insert(arg_name.clone(), Value::from(ph));
        tool.args.push(Arg { name: arg_name, optional: false, schema });
    }

    let mut exec = Map::new();
    exec.insert("type".into(), Value::from("skydeck"));
    exec.insert("document".into(), Value::Object(o.clone()));
    exec.insert("placeholders".into(), Value::Object(map));
    tool.extra.insert("executor".into(), Value::Object(exec));
    out.tools.push(tool);
    out.paths.push(path.to_string());
    Ok(())
}

/// The tool description: what the prompt is for, how to use it, and what
/// it answers.
fn description(meta: &Map<String, Value>, path: &str, prompt_name: Option<&str>) -> Result<String> {
    let mut parts: Vec<String> = Vec::new();
    match opt_str(meta, "description", path)? {
        Some(d) if !d.trim().is_empty() => parts.push(d.trim().to_string()),
        _ => parts.push(match prompt_name {
            Some(n) => format!("Runs the prompt \"{n}\" on a language model and returns its reply."),
            None => "Runs a prompt on a language model and returns its reply.".into(),
        }),
    }
    if let Some(notes) = opt_str(meta, "usage_notes", path)?.filter(|n| !n.trim().is_empty()) {
        parts.push(format!("Usage notes: {}", notes.trim()));
    }
    if let Some(exp) = opt_obj(meta, "expected_output", path)? {
        let epath = join(path, "expected_output");
        let kind = opt_str(exp, "type", &epath)?;
        let format = opt_str(exp, "format", &epath)?;
        let language = opt_str(exp, "language", &epath)?;
        let allowed: Vec<String> = exp
            .get("allowed_values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(|s| format!("\"{s}\"")).collect())
            .unwrap_or_default();
        let line = match kind {
            Some("limited") if !allowed.is_empty() => Some(format!("The reply is one of: {}.", allowed.join(", "))),
            Some("code") => Some(match language {
                Some(l) => format!("The reply is {l} code."),
                None => "The reply is code.".into(),
            }),
            _ => format.map(|f| format!("The reply is {f}.")),
        };
        if let Some(l) = line {
            parts.push(l);
        }
    }
    Ok(parts.join("\n"))
}

/// One declared variable as an argument, with its placeholder name.
fn variable(var: &Value, path: &str, warnings: &mut Vec<Problem>) -> Result<Option<(Arg, String)>> {
    let v = var
        .as_object()
        .ok_or_else(|| Error::shape(path, format!("a variable must be an object, found {}", kind_of(var))))?;
    let Some(raw) = opt_str(v, "name", path)?.map(str::trim).filter(|n| !n.is_empty()) else {
        warnings.push(Problem::warning(Code::Ignored, path, "a variable without a `name` ignored"));
        return Ok(None);
    };
    let name = property_name(raw);
    if name != raw {
        warnings.push(Problem::warning(
            Code::Renamed,
            join(path, "name"),
            format!("variable \"{raw}\" is the argument \"{name}\" (argument names allow letters, digits, _ . -)"),
        ));
    }
    let kind = opt_str(v, "type", path)?.unwrap_or("text");
    let allowed: Option<Vec<Value>> = match v.get("allowed_values") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => {
            let strings: Vec<Value> = a.iter().filter(|x| x.is_string()).cloned().collect();
            if strings.len() != a.len() {
                warnings.push(Problem::warning(
                    Code::Ignored,
                    join(path, "allowed_values"),
                    "values that are not strings ignored",
                ));
            }
            Some(strings)
        }
        Some(other) => {
            return Err(Error::shape(
                &join(path, "allowed_values"),
                format!("`allowed_values` must be an array of strings, found {}", kind_of(other)),
            ))
        }
    };
    let mut schema = Schema::new();
    let string_enum = |allowed: &Option<Vec<Value>>| {
        let mut s = Schema::new();
        s.insert("type".into(), Value::from("string"));
        if let Some(a) = allowed.as_ref().filter(|a| !a.is_empty()) {
            s.insert("enum".into(), Value::Array(a.clone()));
        }
        s
    };
    match kind {
        "text" => {
            schema.insert("type".into(), Value::from("string"));
        }
        "single-select" | "multi-select" => {
            if allowed.as_ref().is_none_or(Vec::is_empty) {
                warnings.push(Problem::warning(
                    Code::Assumed,
                    join(path, "allowed_values"),
                    format!("a {kind} variable without `allowed_values`: any text is accepted"),
                ));
            }
            if kind == "single-select" {
                schema = string_enum(&allowed);
            } else {
                schema.insert("type".into(), Value::from("array"));
                schema.insert("items".into(), Value::Object(string_enum(&allowed)));
            }
        }
        other => {
            warnings.push(Problem::warning(
                Code::UnknownType,
                join(path, "type"),
                format!(
                    "unknown variable type \"{other}\" read as text (expected text, single-select or multi-select)"
                ),
            ));
            schema.insert("type".into(), Value::from("string"));
        }
    }
    let mut description = match opt_str(v, "description", path)?.map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => d.to_string(),
        None => format!("Fills {{{{{raw}}}}} in the prompt."),
    };
    let default = v.get("default").filter(|d| !d.is_null()).cloned();
    if let Some(d) = &default {
        let ok = match (kind, d) {
            ("multi-select", Value::Array(items)) => items.iter().all(Value::is_string),
            ("multi-select", _) => false,
            (_, Value::String(_)) => true,
            _ => false,
        };
        if !ok {
            warnings.push(Problem::warning(
                Code::BadDefault,
                join(path, "default"),
                format!(
                    "the default of a {kind} variable should be {}",
                    if kind == "multi-select" { "an array of strings" } else { "a string" }
                ),
            ));
        }
        if let (Some(allowed), true) = (&allowed, kind != "text") {
            let values: Vec<&Value> = match d {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            let allowed: std::collections::HashSet<&str> = allowed.iter().filter_map(Value::as_str).collect();
            for x in values {
                if !x.as_str().is_some_and(|s| allowed.contains(s)) {
                    warnings.push(Problem::warning(
                        Code::BadDefault,
                        join(path, "default"),
                        format!("default {x} is not among `allowed_values`"),
                    ));
                }
            }
        }
        if !description.ends_with('.') {
            description.push('.');
        }
        description.push_str(&format!(" Default: {}.", show_default(d)));
    }
    // `type`, `description`, then the rest, as people write them.
    let mut ordered = Schema::new();
    ordered.insert("type".into(), schema.shift_remove("type").unwrap_or(Value::Null));
    ordered.insert("description".into(), Value::from(description));
    ordered.extend(schema);
    if let Some(d) = &default {
        ordered.insert("default".into(), d.clone());
    }
    Ok(Some((Arg { name, optional: default.is_some(), schema: ordered }, raw.to_string())))
}

/// The SkyDeck document of a prompt tool (one imported from SkyDeck: its
/// document is kept whole in the executor metadata).
pub fn write(tool: &Tool) -> Result<Value> {
    let exec = executor_of(&tool.extra, "skydeck").ok_or_else(|| {
        Error::new(
            ErrorKind::Write,
            format!(
                "tool \"{}\" is not a prompt tool: only tools read from a SkyDeck document (with :executor (:type \"skydeck\" ...)) can be written as SkyDeck",
                tool.name
            ),
        )
    })?;
    match exec.get("document") {
        Some(Value::Object(doc)) if doc.get("model_prompt").is_some_and(Value::is_string) => {
            Ok(Value::Object(doc.clone()))
        }
        _ => Err(Error::at(
            ErrorKind::Write,
            "executor.document",
            format!("tool \"{}\" has no SkyDeck document with a `model_prompt` in its executor metadata", tool.name),
        )),
    }
}

/// Several prompt tools: one document, or an array of them.
pub fn write_many(tools: &[Tool]) -> Result<Value> {
    if tools.len() == 1 {
        return write(&tools[0]);
    }
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| write(t).map_err(|e| e.in_item(i)))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_scan() {
        assert_eq!(
            placeholders("Write {{ topic }} in {{tone}}; {{topic}} again, {{}} and {{a{b}} and {{unclosed"),
            vec!["topic", "tone"]
        );
    }
}
