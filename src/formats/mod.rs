//! The JSON dialects toolspec writes, one module each, behind one
//! registry.
//!
//! Each dialect's module holds its [`Profile`]: the rule its tool names
//! follow, the schema subset it accepts and what is done with each
//! keyword outside it, its limits, its strict variant, the tool-level
//! keys it carries, and its writer.  The CLI's help, the elisp lists of
//! dialects (through the module) and [`crate::write::DIALECT_NAMES`] are
//! all made from [`REGISTRY`]: adding a dialect is one file here and one
//! line in the `dialects!` list below.
//!
//! Reading dialects is still done in `read.rs`.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Code, Problem, Schema, Tool};
use crate::value::{Map, Value};

/// Declares each dialect's module and puts its profiles in [`REGISTRY`].
macro_rules! dialects {
    ($($module:ident: $($profile:ident),+;)+) => {
        $(pub mod $module;)+

        /// Every dialect toolspec writes, in the order they are listed to users.
        pub const REGISTRY: &[&Profile] = &[$($(&$module::$profile,)+)+];
    };
}

// The registry: a dialect is its module (a file here) and its line.
dialects! {
    openai: CHAT, RESPONSES, STRICT;
    anthropic: PROFILE;
    gemini: PROFILE;
    ollama: PROFILE;
    bedrock: PROFILE;
    mcp: PROFILE;
    json_schema: PROFILE;
}

/// What a dialect is and accepts.
pub struct Profile {
    /// The name users give (`--to NAME`, `toolspec-to-json`'s DIALECT).
    pub name: &'static str,
    /// One line for help texts.
    pub about: &'static str,
    /// The rule tool names must follow.
    pub names: NameRule,
    /// Whether gptel has a backend speaking this dialect: the names gptel
    /// registers must be valid for every such dialect ([`gptel_names`]).
    pub gptel_backend: bool,
    /// Tool-level keys of [`Tool::extra`] this dialect carries.
    pub tool_keys: ToolKeys,
    /// The schema subset accepted, in words.
    pub subset: &'static str,
    /// What is done with keywords outside the subset.
    pub outside: &'static [(&'static str, Handling)],
    /// Limits the provider enforces, in words.
    pub limits: &'static str,
    /// The strict variant, in words.
    pub strict: &'static str,
    /// The key a document of many tools keeps them under, if any (else
    /// the document is an array).
    pub document_key: Option<&'static str>,
    /// Write one tool (its name already valid for the dialect); warnings
    /// about what had to change go to the second argument.
    pub write: fn(Tool, &mut Vec<Problem>) -> Result<Value>,
}

/// What a dialect's writer does with a schema keyword it does not accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Written as it is.
    Kept,
    /// Left out, with a warning.
    Dropped,
    /// Left out of the schema and said in its `description`, so that the
    /// model still reads it (as pydantic-ai's transformers and Anthropic's
    /// SDK do), with a warning.
    Described,
    /// Rewritten into keywords the dialect accepts (how, in words).
    Transformed(&'static str),
}

/// Which tool-level keys (outside name, description and schema) a
/// dialect writes.
#[derive(Debug, Clone, Copy)]
pub enum ToolKeys {
    /// Only these, when the tool has them.
    Only(&'static [&'static str]),
    /// Every key the tool has, in its order, except the keys that only
    /// other dialects define (`strict` of OpenAI, `cache_control` of
    /// Anthropic...): the format's own object allows unknown keys.
    Open,
}

/// The names a dialect accepts: `first` then up to `max - 1` of `rest`.
pub struct NameRule {
    /// The rule as a regular expression, for messages and docs.
    pub pattern: &'static str,
    pub max: usize,
    pub first: fn(char) -> bool,
    pub rest: fn(char) -> bool,
}

impl NameRule {
    /// Whether `name` follows the rule.
    pub fn valid(&self, name: &str) -> bool {
        // One pass: checked and counted together.
        let mut n = 0;
        for c in name.chars() {
            let ok = if n == 0 { (self.first)(c) } else { (self.rest)(c) };
            n += 1;
            if !ok || n > self.max {
                return false;
            }
        }
        n > 0
    }

    /// `name` made valid: each character the rule refuses becomes `_`,
    /// a refused first character gets `_` before it when `_` may start
    /// a name, and the name is cut to `max` characters.
    pub fn fix(&self, name: &str) -> String {
        let mut out: String = name.chars().map(|c| if (self.rest)(c) { c } else { '_' }).collect();
        match out.chars().next() {
            None => out = "tool".into(),
            Some(c) if !(self.first)(c) => {
                if (self.first)('_') {
                    out.insert(0, '_');
                } else {
                    out.insert_str(0, "t_");
                }
            }
            _ => {}
        }
        cut(&out, self.max).to_string()
    }
}

/// The first `max` characters of `s`.
fn cut(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `[A-Za-z0-9_-]`: OpenAI's, Anthropic's and Bedrock's tool names.
pub fn word_or_dash(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Any character.
pub fn any_char(_: char) -> bool {
    true
}

/// `^[a-zA-Z0-9_-]{1,64}$`, the rule of OpenAI (chat completions,
/// Responses: "must be a-z, A-Z, 0-9, or contain underscores and dashes,
/// with a maximum length of 64"), Anthropic (`^[a-zA-Z0-9_-]{1,64}$` in
/// its Messages API reference) and Bedrock (botocore's
/// `bedrock-runtime` service model: `ToolName`, pattern
/// `^[a-zA-Z0-9_-]+$`, 1 to 64 characters).
pub const OPENAI_NAMES: NameRule =
    NameRule { pattern: "^[a-zA-Z0-9_-]{1,64}$", max: 64, first: word_or_dash, rest: word_or_dash };

/// The profile named `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    REGISTRY.iter().copied().find(|p| p.name == name)
}

/// The profile named `name`, or an error listing the names.
pub fn lookup(name: &str) -> Result<&'static Profile> {
    find(name).ok_or_else(|| {
        Error::new(
            ErrorKind::UnsupportedFormat,
            format!("unknown dialect \"{name}\": expected one of {}", names().join(", ")),
        )
    })
}

/// The names of every dialect, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name).collect()
}

/// One line per dialect, `NAME  ABOUT`, for help texts.
pub fn summary() -> String {
    let width = REGISTRY.iter().map(|p| p.name.len()).max().unwrap_or(0);
    REGISTRY.iter().map(|p| format!("  {:width$}  {}\n", p.name, p.about)).collect()
}

/// Whether every gptel backend's dialect takes `c` first in a name
/// (`first`) or after it.
fn gptel_takes(c: char, first: bool) -> bool {
    REGISTRY.iter().filter(|p| p.gptel_backend).all(|p| if first { (p.names.first)(c) } else { (p.names.rest)(c) })
}

/// [`gptel_takes`] of each ASCII character, asked of the registry once:
/// asked for each character of each name, it took an eighth of the
/// module's renaming of BFCL's 3,258 names (bench/history.md, round 25).
static GPTEL_ASCII: std::sync::LazyLock<[[bool; 128]; 2]> = std::sync::LazyLock::new(|| {
    let mut table = [[false; 128]; 2];
    for (i, first) in [(0, true), (1, false)] {
        for (b, slot) in table[i].iter_mut().enumerate() {
            *slot = gptel_takes(char::from(b as u8), first);
        }
    }
    table
});

fn gptel_first(c: char) -> bool {
    if c.is_ascii() {
        GPTEL_ASCII[0][c as usize]
    } else {
        gptel_takes(c, true)
    }
}

fn gptel_rest(c: char) -> bool {
    if c.is_ascii() {
        GPTEL_ASCII[1][c as usize]
    } else {
        gptel_takes(c, false)
    }
}

/// The rule of the names gptel registers: valid for every dialect a
/// gptel backend speaks (gptel sends a tool's registered name to all of
/// them), i.e. `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
pub fn gptel_names() -> NameRule {
    let max = REGISTRY.iter().filter(|p| p.gptel_backend).map(|p| p.names.max).min().unwrap_or(64);
    NameRule { pattern: "^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$", max, first: gptel_first, rest: gptel_rest }
}

/// The name rule called `name`: a dialect's, or `gptel` for
/// [`gptel_names`].
pub fn name_rule(name: &str) -> Result<NameRule> {
    if name == "gptel" {
        return Ok(gptel_names());
    }
    let p = lookup(name)?;
    Ok(NameRule { ..p.names })
}

impl Clone for NameRule {
    fn clone(&self) -> Self {
        NameRule { ..*self }
    }
}

/// A short, stable hash of `s` (FNV-1a, 32 bits) as 8 hex digits: the
/// same name gets the same suffix on every run and machine.
fn stable_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// [`safe_names`] of the JSON array of strings `names` under `rule`, as
/// JSON text: an array as long as `names`, null for a name kept, else
/// its new name; or `null` when every name is kept.
pub fn safe_names_json(names: &str, rule: &NameRule) -> Result<String> {
    let names: Vec<String> = serde_json::from_str(names)
        .map_err(|e| Error::new(ErrorKind::Plist, format!("the tool names must be a JSON array of strings: {e}")))?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let safe = safe_names(&refs, rule);
    if safe.iter().all(Option::is_none) {
        return Ok("null".to_string());
    }
    Ok(serde_json::to_string(&safe).expect("names serialise"))
}

/// For each of `names` (of the tools of one document or registration),
/// the name to write when it is not valid under `rule`, else `None`.
/// Valid names keep theirs; an invalid one takes [`NameRule::fix`] of
/// it, or, when that is taken by another tool, that plus `_` and a hash
/// of the original (then a counter, should even that be taken).  The
/// result depends only on `names`, in their order.
pub fn safe_names(names: &[&str], rule: &NameRule) -> Vec<Option<String>> {
    // Each name checked once.
    let valid: Vec<bool> = names.iter().map(|n| rule.valid(n)).collect();
    if valid.iter().all(|&v| v) {
        return vec![None; names.len()];
    }
    let mut taken: crate::model::FastSet<String> =
        names.iter().zip(&valid).filter(|(_, &v)| v).map(|(n, _)| n.to_string()).collect();
    names
        .iter()
        .zip(&valid)
        .map(|(name, &valid)| {
            if valid {
                return None;
            }
            let fixed = rule.fix(name);
            let mut candidate = fixed.clone();
            if taken.contains(&candidate) {
                let suffix = format!("_{}", stable_hash(name));
                let base = cut(&fixed, rule.max.saturating_sub(suffix.len()));
                candidate = format!("{base}{suffix}");
                let mut n = 2;
                while taken.contains(&candidate) {
                    let more = format!("{suffix}_{n}");
                    candidate = format!("{}{more}", cut(&fixed, rule.max.saturating_sub(more.len())));
                    n += 1;
                }
            }
            taken.insert(candidate.clone());
            Some(candidate)
        })
        .collect()
}

/// The warning for a tool renamed for `dialect`.
pub fn rename_warning(path: &str, from: &str, to: &str, dialect: &str, rule: &NameRule) -> Problem {
    Problem::warning(
        Code::Renamed,
        path,
        format!(
            "tool name \"{from}\" is not valid for {dialect} (names must match {}): written as \"{to}\"",
            rule.pattern
        ),
    )
}

/// The parts of a tool every writer starts from: its name, description,
/// root parameters schema (optional markers resolved, type unions kept
/// or not as `unions` says) and tool-level keys.
pub struct Parts {
    pub name: Value,
    pub description: Option<Value>,
    pub params: Schema,
    pub no_args: bool,
    pub extra: Schema,
    /// The order the tool's keys were read in, when it was not the
    /// writers' own (see [`crate::model::KEY_ORDER`]); already applied
    /// to `params`.
    pub order: Option<Value>,
}

impl Parts {
    pub fn of(tool: Tool, unions: bool) -> Parts {
        let Tool { name, description, args, mut schema_extra, extra } = tool;
        let no_args = args.is_empty();
        let order = crate::model::take_order(&mut schema_extra);
        let mut params = crate::model::parameters_in_order(args, schema_extra, order.as_ref());
        crate::schema::finalize(&mut params, unions);
        Parts { name: Value::from(name), description: description.map(Value::from), params, no_args, extra, order }
    }

    /// Put the members of `m`, the object holding the tool's name,
    /// description and parameters (called `params_key` in the dialect),
    /// in the order the tool was read in, if that was another.
    pub fn put_in_order(&self, m: &mut Map<String, Value>, params_key: &str) {
        if let Some(Value::Array(keys)) = self.order.as_ref().and_then(|o| o.get("tool")) {
            crate::model::put_in_order(m, keys, |k| if k == params_key { "args" } else { k });
        }
    }

    /// Put the members of `m`, a parameters schema with the tool's name
    /// and description (a bare JSON Schema), in the order its root was
    /// read in, if that was another.
    pub fn put_in_schema_order(&self, m: &mut Map<String, Value>) {
        if let Some(Value::Array(keys)) = self.order.as_ref().and_then(|o| o.get("schema")) {
            crate::model::put_in_order(m, keys, |k| k);
        }
    }

    /// The object most dialects write for a tool: its name, description
    /// and parameters (`params`, under `params_key`; left out when None),
    /// then the tool-level keys `keys` allows, in the order the tool was
    /// read in.
    pub fn object(&self, params_key: &str, params: Option<Value>, keys: ToolKeys) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone());
        self.put_description(&mut m);
        if let Some(params) = params {
            m.insert(params_key.into(), params);
        }
        self.put_extras(keys, &mut m);
        self.put_in_order(&mut m, params_key);
        m
    }

    /// Put the description into `m`, if there is one.
    pub fn put_description(&self, m: &mut Map<String, Value>) {
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone());
        }
    }

    /// Put the tool-level keys `keys` allows into `m`, in the tool's
    /// order, without replacing what `m` has.
    pub fn put_extras(&self, keys: ToolKeys, m: &mut Map<String, Value>) {
        for (k, v) in &self.extra {
            let wanted = match keys {
                ToolKeys::Only(list) => list.contains(&k.as_str()),
                ToolKeys::Open => !only_elsewhere(k) && !EMACS_KEYS.contains(&k.as_str()),
            };
            if wanted && !m.contains_key(k) {
                m.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Tool-level keys that belong to Emacs (gptel, llm, toolspec's
/// executors, as the readers' reserved keys): never written to JSON.
const EMACS_KEYS: &[&str] =
    &["function", "async", "confirm", "include", "category", "executor", "args", "schema-extra"];

/// Whether `key` is a tool-level key some closed dialect defines and no
/// open one does: it means nothing outside that dialect.
fn only_elsewhere(key: &str) -> bool {
    REGISTRY.iter().any(|p| matches!(p.tool_keys, ToolKeys::Only(list) if list.contains(&key)))
}

/// Put `notes` at the end of `node`'s description, in parentheses.
pub fn describe(node: &mut Schema, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let extra = notes.join("; ");
    let d = match node.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} ({extra})"),
        _ => format!("({extra})"),
    };
    node.insert("description".into(), Value::from(d));
}

/// A keyword's value as a note for a description: `key: value`, the
/// value as compact JSON.
pub fn note(key: &str, v: &Value) -> String {
    format!("{key}: {v}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_valid_without_collisions() {
        let rule = OPENAI_NAMES;
        let out = safe_names(&["math.sum", "math_sum", "ok-name", "math sum", ""], &rule);
        assert_ne!(out[0].as_deref(), Some("math_sum"), "math_sum is taken by the second tool");
        assert!(out[0].as_deref().unwrap().starts_with("math_sum_"));
        assert_eq!(out[1], None);
        assert_eq!(out[2], None);
        let third = out[3].as_deref().unwrap();
        assert!(third.starts_with("math_sum_") && third != out[0].as_deref().unwrap(), "{out:?}");
        assert_eq!(out[4].as_deref(), Some("tool"));
        for n in out.iter().flatten() {
            assert!(rule.valid(n), "{n}");
        }
        // Deterministic.
        assert_eq!(out, safe_names(&["math.sum", "math_sum", "ok-name", "math sum", ""], &rule));
        // Alone, the plain fix.
        assert_eq!(safe_names(&["math.sum"], &rule), vec![Some("math_sum".to_string())]);
        let long = "x".repeat(100);
        let cut = safe_names(&[&long], &rule);
        assert_eq!(cut[0].as_deref().map(str::len), Some(64));
    }

    #[test]
    fn gptel_table_is_what_the_registry_says() {
        let g = gptel_names();
        for c in (0..0x3000).filter_map(char::from_u32) {
            assert_eq!((g.first)(c), gptel_takes(c, true), "{c:?} first");
            assert_eq!((g.rest)(c), gptel_takes(c, false), "{c:?} after the first");
        }
        assert!((g.first)('_') && !(g.first)('7') && (g.rest)('7') && !(g.rest)('.'));
    }

    #[test]
    fn gptel_names_are_valid_for_every_gptel_backend() {
        let g = gptel_names();
        for name in ["9lives", "a.b", "-x", "é", "ok_name-2"] {
            let fixed = if g.valid(name) { name.to_string() } else { g.fix(name) };
            for p in REGISTRY.iter().filter(|p| p.gptel_backend) {
                assert!(p.names.valid(&fixed), "{fixed} for {}", p.name);
            }
        }
        assert!(!g.valid("9lives") && g.valid("_9lives"));
        assert_eq!(g.fix("math.sum"), "math_sum");
    }

    #[test]
    fn every_dialect_is_found_by_its_name() {
        for p in REGISTRY {
            assert_eq!(find(p.name).map(|f| f.name), Some(p.name));
        }
        assert!(lookup("nope").err().map(|e| e.to_string()).unwrap_or_default().contains("openai-strict"));
    }
}
