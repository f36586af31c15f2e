//! The gptel/llm plist format: printing tools as elisp text for
//! `read`, and reading plists printed by Emacs (`prin1`) back, through
//! lexpr.
//!
//! Printed plists follow the format's rules: `:type` a symbol (absent for
//! a node without a type constraint; a union of several types a vector of
//! strings, which gptel sends as it is), `:enum` and
//! `:required` vectors, `:items` a plist, `:properties` a plist with
//! keyword keys in their original order, `:optional t` on top-level
//! arguments that are not required, false as `:json-false`, null as
//! `:null`, and every other keyword kept under its JSON name.

use lexpr::Value as Sexp;

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Arg, At, Schema, Tool};
use crate::node::Node;
use crate::schema::{slot, Slot};
pub use crate::sink::{ends_with_local_variables, print_keyword, print_string, print_symbol, Sink, Text};
use crate::value::{Map, Number, Value};

/// Tool keys that belong to gptel or llm and have no JSON form.
pub const EMACS_KEYS: &[&str] = &["function", "async", "category", "confirm", "include"];
/// Tool-level extras whose value is a schema.
const SCHEMA_EXTRAS: &[&str] = &["outputSchema"];
/// Keywords whose value is always an array (nil means `[]`, not `{}`).
const ARRAY_KEYWORDS: &[&str] = &["enum", "required", "examples", "anyOf", "oneOf", "allOf", "prefixItems", "type"];

// ---------------------------------------------------------------- printing
/// Emit `items` as a list or vector; an empty list is nil.
fn emit_seq<'a, T, S: Sink<'a>>(
    s: &mut S,
    vector: bool,
    items: impl ExactSizeIterator<Item = T>,
    mut each: impl FnMut(T, &mut S),
) {
    if items.len() == 0 && !vector {
        s.nil();
        return;
    }
    s.open(vector);
    for item in items {
        each(item, s);
    }
    s.close();
}

/// Emit a JSON object as a plist `(:key VALUE ...)`, nil when empty.
fn emit_plist<'a, S: Sink<'a>>(s: &mut S, m: &'a Map<String, Value>, each: fn(&'a Value, &mut S)) {
    emit_seq(s, false, m.iter(), |(k, v), s| {
        s.keyword(k);
        each(v, s);
    });
}

/// Print a list of tools as one elisp list.
pub fn print_tools(tools: &[Tool], out: &mut String) {
    emit_tools(tools, &mut Text::new(out));
}

/// Print one tool plist.
pub fn print_tool(tool: &Tool, out: &mut String) {
    emit_tool(tool, &mut Text::new(out));
}

/// A schema node as a plist.
pub fn print_schema(schema: &Schema, out: &mut String) {
    emit_schema(schema, &mut Text::new(out));
}

/// Any JSON value, as `json-parse-string` with `:object-type plist`,
/// `:false-object :json-false` and `:null-object :null` would give it.
pub fn print_data(v: &Value, out: &mut String) {
    emit_data(v, &mut Text::new(out));
}

/// Emit a list of tools as one list (nil when there are none).
pub fn emit_tools<'a, S: Sink<'a>>(tools: &'a [Tool], s: &mut S) {
    emit_seq(s, false, tools.iter(), emit_tool);
}

/// Emit one tool plist.
pub fn emit_tool<'a, S: Sink<'a>>(tool: &'a Tool, s: &mut S) {
    s.open(false);
    s.keyword("name");
    s.string(&tool.name);
    if let Some(d) = &tool.description {
        s.keyword("description");
        s.string(d);
    }
    s.keyword("args");
    emit_seq(s, false, tool.args.iter(), emit_arg);
    if !tool.schema_extra.is_empty() {
        s.keyword("schema-extra");
        emit_schema(&tool.schema_extra, s);
    }
    for (k, v) in &tool.extra {
        s.keyword(k);
        if SCHEMA_EXTRAS.contains(&k.as_str()) {
            emit_schema_value(v, s);
        } else {
            emit_data(v, s);
        }
    }
    s.close();
}

fn emit_arg<'a, S: Sink<'a>>(arg: &'a Arg, s: &mut S) {
    s.open(false);
    s.keyword("name");
    s.string(&arg.name);
    emit_schema_body(&arg.schema, s);
    if arg.optional {
        s.keyword("optional");
        s.t();
    }
    s.close();
}

/// Emit a schema node as a plist (nil when empty).
pub fn emit_schema<'a, S: Sink<'a>>(schema: &'a Schema, s: &mut S) {
    if schema.is_empty() {
        s.nil();
        return;
    }
    s.open(false);
    emit_schema_body(schema, s);
    s.close();
}

fn emit_schema_body<'a, S: Sink<'a>>(schema: &'a Schema, s: &mut S) {
    for (k, v) in schema {
        s.keyword(k);
        match (k.as_str(), slot(k), v) {
            // A union as a vector of strings: gptel serialises `:type`
            // as it is, and a vector of symbols has no JSON form.
            ("type", _, Value::Array(ts)) => emit_seq(s, true, ts.iter(), emit_data),
            ("type", _, t) => emit_type(t, s),
            (_, Slot::Map, Value::Object(m)) => emit_plist(s, m, emit_schema_value),
            (_, Slot::Single | Slot::List, _) => emit_schema_value(v, s),
            _ => emit_data(v, s),
        }
    }
}

/// A type name as a symbol (see [`Sink::type_name`]).
fn emit_type<'a, S: Sink<'a>>(t: &'a Value, s: &mut S) {
    match t {
        Value::String(t) => s.type_name(t),
        other => emit_data(other, s),
    }
}

fn emit_schema_value<'a, S: Sink<'a>>(v: &'a Value, s: &mut S) {
    match v {
        Value::Object(m) => emit_schema(m, s),
        Value::Array(list) => emit_seq(s, true, list.iter(), emit_schema_value),
        other => emit_data(other, s),
    }
}

/// Emit any JSON value as [`print_data`] prints it.
pub fn emit_data<'a, S: Sink<'a>>(v: &'a Value, s: &mut S) {
    match v {
        Value::Null => s.keyword("null"),
        Value::Bool(true) => s.t(),
        Value::Bool(false) => s.keyword("json-false"),
        Value::Number(n) => s.number(n),
        Value::String(x) => s.string(x),
        Value::Array(a) => emit_seq(s, true, a.iter(), emit_data),
        Value::Object(m) => emit_plist(s, m, emit_data),
    }
}

/// Emit a tool plist that `json-serialize` wrote as `v` (see
/// [`crate::serialized_plists_to_json`]): what [`emit_data`] makes of it,
/// but for `args`, which was a list made a vector for the serialiser.
pub fn emit_serialized_tool<'a, S: Sink<'a>>(v: &'a Value, s: &mut S) {
    match v {
        Value::Object(m) => emit_seq(s, false, m.iter(), |(k, x), s| {
            s.keyword(k);
            match x {
                Value::Array(args) if k == "args" => emit_seq(s, false, args.iter(), emit_data),
                _ => emit_data(x, s),
            }
        }),
        other => emit_data(other, s),
    }
}

/// The node [`emit_serialized_tool`] makes of the tool plist serialised
/// as `text`, parsed straight from the text with its strings borrowed
/// from it: for exporting many tools, making a `Value` of each first
/// took a third of the time.  None when something in `text` is not
/// there as it is to be read (an escaped string or key) or an object
/// gives a key twice (a `Value` keeps the last of them): such a text
/// goes through a `Value`.
pub fn serialized_tool_node(text: &str) -> Option<Node<'_>> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let node = Borrowed { args: false, top: true }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(node)
}

/// What [`serialized_tool_node`] reads a value as: the top of a tool, its
/// `args` (a list, not a vector), or any other value.
#[derive(Clone, Copy)]
struct Borrowed {
    args: bool,
    top: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Borrowed {
    type Value = Node<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Node<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Borrowed {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON with nothing escaped")
    }
    fn visit_bool<E>(self, b: bool) -> std::result::Result<Node<'de>, E> {
        Ok(if b { Node::Sym("t") } else { Node::Kw("json-false") })
    }
    fn visit_unit<E>(self) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Kw("null"))
    }
    fn visit_i64<E>(self, n: i64) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Num(crate::node::number(&Number::from(n))))
    }
    fn visit_u64<E>(self, n: u64) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Num(crate::node::number(&Number::from(n))))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> std::result::Result<Node<'de>, E> {
        Number::from_f64(n).map(|n| Node::Num(crate::node::number(&n))).ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Str(s))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Node<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = seq.next_element_seed(Borrowed { args: false, top: false })? {
            items.push(x);
        }
        Ok(match (self.args, items.is_empty()) {
            (true, true) => Node::Nil,
            (true, false) => Node::List(items),
            (false, _) => Node::Vector(items),
        })
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Node<'de>, A::Error> {
        // Room for four members, what most objects of a tool have: grown
        // from nothing, the list was copied twice on the way.
        let mut items = Vec::with_capacity(8);
        let mut keys = crate::model::Seen::default();
        while let Some(k) = map.next_key::<&'de str>()? {
            if !keys.insert(k) {
                return Err(serde::de::Error::custom("a key given twice"));
            }
            items.push(Node::Kw(k));
            items.push(map.next_value_seed(Borrowed { args: self.top && k == "args", top: false })?);
        }
        Ok(if items.is_empty() { Node::Nil } else { Node::List(items) })
    }
}

// ----------------------------------------------------------------- reading

/// Escaped symbol characters are carried through lexpr (which has no
/// symbol escapes) as characters of this private-use block.
const ESCAPE_BASE: u32 = 0xF0000;
/// Precedes a character of this block (escapes, then U+F0080 of
/// [`SYMBOL_MARK`], then this one) that was in the text itself, so that
/// it is not taken for an escape or a mark.
const LITERAL: char = '\u{F0081}';

/// After [`SYMBOL_MARK`], makes the symbol stand for a float Emacs
/// prints but lexpr does not read: `INF`, `-INF` or `NaN` follows.
const NUMBER_MARK: char = '\u{F0082}';

/// Whether `c` is one of the characters the shim gives a meaning.
fn reserved(c: char) -> bool {
    (ESCAPE_BASE..=NUMBER_MARK as u32).contains(&(c as u32))
}
/// Deepest nesting of lists and vectors accepted from Lisp.
pub const MAX_PLIST_DEPTH: usize = 100;

/// Parse text printed by Emacs's `prin1` into an s-expression.
pub fn parse_sexp(text: &str) -> Result<Sexp> {
    let shimmed = shim_escapes(text)?;
    let opts = lexpr::parse::Options::elisp();
    let v = lexpr::from_str_custom(&shimmed, opts).map_err(|e| {
        let mut err = Error::new(
            ErrorKind::Plist,
            format!(
                "cannot read the plist ({e}): it must hold only data (strings, symbols, numbers, lists, vectors), \
                 not functions, buffers or other objects without a printed form"
            ),
        );
        if let Some(loc) = e.location() {
            err = err.with_position(loc.line(), loc.column());
        }
        err
    })?;
    Ok(unshim(v))
}

/// Rewrite `\X` outside strings into a private-use character, and check
/// nesting depth before lexpr recurses.
fn shim_escapes(text: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut in_string = false;
    // Depth counts lists, vectors and quote prefixes (`'x` reads as
    // `(quote x)`): `prefixes` are those read since the last token,
    // `opened` those before each open list, `extra` their sum.
    let mut depth = 0usize;
    let mut prefixes = 0usize;
    let mut opened: Vec<usize> = Vec::new();
    let mut extra = 0usize;
    let too_deep = || Error::new(ErrorKind::Limit, format!("plist nested deeper than {MAX_PLIST_DEPTH} levels"));
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                prefixes = 0;
                out.push(c);
            }
            '@' => out.push(c),
            '{' | '}' | '|' => {
                // Symbol characters for Emacs (printed as they are) that
                // lexpr takes for delimiters or refuses.
                prefixes = 0;
                mark_symbol_start(&mut out);
                out.push(char::from_u32(ESCAPE_BASE + c as u32).unwrap_or(c));
            }
            '\\' => {
                prefixes = 0;
                mark_symbol_start(&mut out);
                match chars.next() {
                    Some(n) if (n as u32) < 0x80 => out.push(char::from_u32(ESCAPE_BASE + n as u32).unwrap_or(n)),
                    Some(n) => {
                        if reserved(n) {
                            out.push(LITERAL);
                        }
                        out.push(n);
                    }
                    None => {}
                }
            }
            '(' | '[' => {
                depth += 1;
                opened.push(prefixes);
                extra += prefixes;
                prefixes = 0;
                if depth + extra > MAX_PLIST_DEPTH {
                    return Err(too_deep());
                }
                out.push(c);
            }
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                extra -= opened.pop().unwrap_or(0);
                prefixes = 0;
                out.push(c);
            }
            '#' if chars.as_str().starts_with('#') => {
                // `##`, the symbol whose name is empty.
                chars.next();
                prefixes = 0;
                out.push_str(SYMBOL_MARK);
            }
            '#' if chars.as_str().starts_with(|n: char| n.is_ascii_digit()) => {
                return Err(Error::new(
                    ErrorKind::Plist,
                    "the plist is circular: it holds itself (Emacs printed the repeat as #N), which has no JSON form",
                ));
            }
            '-' | '0'..='9' if at_token_start(&out) && non_finite(c, chars.as_str()).is_some() => {
                let (len, name) = non_finite(c, chars.as_str()).unwrap_or_default();
                for _ in 0..len {
                    chars.next();
                }
                prefixes = 0;
                out.push_str(SYMBOL_MARK);
                out.push(NUMBER_MARK);
                out.push_str(name);
            }
            '\'' | '`' | ',' | '#' => {
                if c != '#' || chars.as_str().starts_with('\'') {
                    prefixes += 1;
                    if depth + extra + prefixes > MAX_PLIST_DEPTH {
                        return Err(too_deep());
                    }
                }
                out.push(c);
            }
            c if c.is_whitespace() => out.push(c),
            ':' if chars.as_str().strip_prefix('.').is_some_and(|r| r.chars().next().is_none_or(is_delimiter)) => {
                // The keyword `:.` (Emacs prints it so), which lexpr
                // rejects: read it as an escaped `.`.
                chars.next();
                out.push(':');
                out.push(char::from_u32(ESCAPE_BASE + '.' as u32).unwrap_or('.'));
            }
            'e' | 'E' if bare_exponent(&out, chars.as_str()) => {
                // lexpr reads a float such as `1e+30` (as Emacs prints large
                // ones) only with a decimal point: `1.0e+30`.
                out.push_str(".0");
                out.push(c);
            }
            ';' => {
                // A comment (only in hand-written text): skip to end of line.
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                out.push('\n');
            }
            _ => {
                prefixes = 0;
                if !c.is_ascii() {
                    mark_symbol_start(&mut out);
                }
                if reserved(c) {
                    out.push(LITERAL);
                }
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// Put before a symbol whose first character lexpr refuses (a letter
/// that is not ASCII, an escape): lexpr reads symbols that start with
/// `!`, and [`unshim`] takes the marker away.
const SYMBOL_MARK: &str = "!\u{F0080}";

/// Write [`SYMBOL_MARK`] when `out` is at the start of a token.  `@`
/// starts one only after `,` (`,@`): elsewhere it is part of a symbol
/// (`:@x`), and a mark there would stay in its name.
fn mark_symbol_start(out: &mut String) {
    let mut before = out.chars().rev();
    let at_start = match before.next() {
        None => true,
        Some('@') => before.next() == Some(','),
        Some(c) => c.is_whitespace() || "()[]'`,".contains(c),
    };
    if at_start {
        out.push_str(SYMBOL_MARK);
    }
}

/// Whether `out` ends where a token may start.
fn at_token_start(out: &str) -> bool {
    out.chars().next_back().is_none_or(|c| c.is_whitespace() || "()[]'`,".contains(c))
}

/// The float `c` and `rest` start with when it is one Emacs prints and
/// lexpr does not read (`1.0e+INF`, `-1.0e+INF`, `0.0e+NaN`...): how
/// many characters of `rest` it takes, and `INF`, `-INF` or `NaN`.
fn non_finite(c: char, rest: &str) -> Option<(usize, &'static str)> {
    let end = rest.find(is_delimiter).unwrap_or(rest.len());
    // `c` is the sign or the first digit; `tail` the rest of the token.
    let (negative, tail) = (c == '-', &rest[..end]);
    let (mantissa, kind) = if let Some(m) = tail.strip_suffix("e+INF") {
        (m, if negative { "-INF" } else { "INF" })
    } else if let Some(m) = tail.strip_suffix("e+NaN") {
        (m, "NaN")
    } else {
        return None;
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (digits(int) && (!negative || !int.is_empty()) && digits(frac)).then_some((end, kind))
}

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '"' | '\'' | '`' | ',' | ';')
}

/// `out` ends in an integer token and `rest` holds the digits of an
/// exponent up to the token's end: a float without a decimal point.
fn bare_exponent(out: &str, rest: &str) -> bool {
    let token = out.rsplit(is_delimiter).next().unwrap_or("");
    let mantissa = token.strip_prefix(['-', '+']).unwrap_or(token);
    let exp = rest.strip_prefix(['-', '+']).unwrap_or(rest);
    let digits = exp.find(|c: char| !c.is_ascii_digit()).unwrap_or(exp.len());
    !mantissa.is_empty()
        && mantissa.bytes().all(|b| b.is_ascii_digit())
        && digits > 0
        && exp[digits..].chars().next().is_none_or(is_delimiter)
}

fn unescape_name(name: &str, symbol: bool) -> Option<String> {
    let marked = if symbol { name.strip_prefix(SYMBOL_MARK) } else { None };
    let name = marked.unwrap_or(name);
    if !name.chars().any(reserved) {
        return marked.map(String::from);
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        let u = c as u32;
        if c == LITERAL {
            out.extend(chars.next());
        } else if (ESCAPE_BASE..ESCAPE_BASE + 0x80).contains(&u) {
            out.push(char::from_u32(u - ESCAPE_BASE).unwrap_or(c));
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Undo [`shim_escapes`] in symbol and keyword names.  Lists are walked
/// along their cdr iteratively, so long lists cost no stack.
fn unshim(v: Sexp) -> Sexp {
    match v {
        Sexp::Symbol(s) if s.strip_prefix(SYMBOL_MARK).is_some_and(|r| r.starts_with(NUMBER_MARK)) => {
            let f = match &s[SYMBOL_MARK.len() + NUMBER_MARK.len_utf8()..] {
                "INF" => f64::INFINITY,
                "-INF" => f64::NEG_INFINITY,
                _ => f64::NAN,
            };
            Sexp::Number(f.into())
        }
        Sexp::Symbol(s) => match unescape_name(&s, true) {
            Some(n) => Sexp::Symbol(n.into()),
            None => Sexp::Symbol(s),
        },
        Sexp::Keyword(s) => match unescape_name(&s, false) {
            Some(n) => Sexp::Keyword(n.into()),
            None => Sexp::Keyword(s),
        },
        Sexp::Vector(items) => Sexp::Vector(items.into_vec().into_iter().map(unshim).collect()),
        Sexp::Cons(c) => {
            let (items, tail) = c.into_vec();
            let items: Vec<Sexp> = items.into_iter().map(unshim).collect();
            Sexp::append(items, unshim(tail))
        }
        other => other,
    }
}

/// Drop a parsed value without recursing along list tails.
pub fn dispose(v: Sexp) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Sexp::Cons(c) => {
                let (items, tail) = c.into_vec();
                stack.extend(items);
                stack.push(tail);
            }
            Sexp::Vector(items) => stack.extend(items.into_vec()),
            _ => {}
        }
    }
}

/// The items of a proper list (nil is the empty list).
pub fn list_items(v: &Sexp) -> Option<Vec<&Sexp>> {
    match v {
        Sexp::Null | Sexp::Nil => Some(Vec::new()),
        Sexp::Cons(c) => {
            let (items, tail) = c.to_ref_vec();
            if matches!(tail, Sexp::Null | Sexp::Nil) {
                Some(items)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The pairs of a plist with keyword keys, or None if `v` is not one.
pub fn plist_pairs(v: &Sexp) -> Option<Vec<(&str, &Sexp)>> {
    let items = list_items(v)?;
    if items.len() % 2 != 0 {
        return None;
    }
    items.chunks(2).map(|kv| kv[0].as_keyword().map(|k| (k, kv[1]))).collect()
}

pub fn is_nil(v: &Sexp) -> bool {
    matches!(v, Sexp::Null | Sexp::Nil)
}

/// Convert a plist value to JSON the way gptel's encoder would, but with
/// knowledge of which keywords hold schemas and which hold arrays.
pub fn sexp_to_json(v: &Sexp, key: Option<&str>, path: &str, schema: bool) -> Result<Value> {
    node_to_json(&Node::of_sexp(v), key, &At::Root(path), schema)
}

/// [`sexp_to_json`] of a plist value seen as a [`Node`].
fn node_to_json(v: &Node<'_>, key: Option<&str>, path: &At<'_>, schema: bool) -> Result<Value> {
    let array_slot = key.is_some_and(|k| ARRAY_KEYWORDS.contains(&k));
    Ok(match v {
        Node::Nil => {
            if array_slot {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        }
        Node::Other(Sexp::Bool(b)) => Value::Bool(*b),
        Node::Num(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Value::Number(Number::from_f64(f).ok_or_else(|| {
                    let shown = if f.is_nan() {
                        "0.0e+NaN"
                    } else if f > 0.0 {
                        "1.0e+INF"
                    } else {
                        "-1.0e+INF"
                    };
                    Error::at(
                        ErrorKind::Plist,
                        &path.to_string(),
                        format!("{shown} has no JSON form: JSON numbers are finite"),
                    )
                })?)
            }
        }
        Node::Other(Sexp::Char(c)) => Value::from(*c as u32),
        Node::Str(s) => Value::from(*s),
        Node::Sym("t") => Value::Bool(true),
        Node::Sym(other) => Value::from(*other),
        Node::Kw("json-false" | "false") => Value::Bool(false),
        Node::Kw("null") => Value::Null,
        Node::Kw(other) => Value::from(format!(":{other}")),
        Node::Vector(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                out.push(node_to_json(x, None, &path.index(i), schema)?);
            }
            Value::Array(out)
        }
        Node::Other(Sexp::Bytes(b)) => Value::from(String::from_utf8_lossy(b).into_owned()),
        Node::List(items) => {
            if let Some(inner) = v.quoted() {
                // `'string` inside a quoted list: the validator reports it.
                return node_to_json(inner, key, path, schema);
            }
            if let Some(pairs) = v.plist_pairs() {
                if schema && key.is_some_and(|k| slot(k) == Slot::Map) {
                    let mut m = Map::new();
                    for (name, sub) in pairs {
                        if !m.contains_key(name) {
                            m.insert(name.to_string(), node_to_json(sub, None, &path.key(name), true)?);
                        }
                    }
                    return Ok(Value::Object(m));
                }
                return Ok(Value::Object(plist_to_map(&pairs, path, schema)?));
            }
            // An alist ((key . value) ...) is an object, as for json-serialize.
            if !array_slot && items.iter().all(|x| alist_key(x).is_some()) {
                let mut m = Map::new();
                for x in items {
                    let k = alist_key(x).expect("checked above");
                    // The first entry of a key counts, as for `alist-get'.
                    if !m.contains_key(k) {
                        let value = match x {
                            Node::List(entry) if entry.len() == 1 => Node::Nil,
                            Node::List(entry) => Node::List(entry[1..].to_vec()),
                            Node::Other(Sexp::Cons(c)) => Node::of_sexp(c.cdr()),
                            _ => unreachable!("an alist entry"),
                        };
                        m.insert(k.to_string(), node_to_json(&value, None, &path.key(k), false)?);
                    }
                }
                return Ok(Value::Object(m));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                out.push(node_to_json(x, None, &path.index(i), schema)?);
            }
            Value::Array(out)
        }
        Node::Other(Sexp::Cons(_)) => {
            return Err(Error::at(ErrorKind::Plist, &path.to_string(), "a dotted pair has no JSON form"))
        }
        // Every kind of value the reader makes is handled above; one it
        // may make in a later version is refused, not written as null.
        Node::Other(other) => {
            return Err(Error::at(
                ErrorKind::Plist,
                &path.to_string(),
                format!("{} has no JSON form", Node::Other(other)),
            ))
        }
    })
}

/// The key of an alist entry `(KEY . VALUE)`, KEY a symbol or a string.
fn alist_key<'a>(entry: &Node<'a>) -> Option<&'a str> {
    match entry {
        Node::List(items) => match items[0] {
            Node::Sym(k) | Node::Str(k) => Some(k),
            _ => None,
        },
        Node::Other(Sexp::Cons(c)) => c.car().as_symbol().or_else(|| c.car().as_str()),
        _ => None,
    }
}

/// A plist's pairs as a JSON object.  In a schema node, keywords that
/// hold schemas are read as schemas.
fn plist_to_map(pairs: &[(&str, &Node<'_>)], path: &At<'_>, schema: bool) -> Result<Map<String, Value>> {
    let mut m = Map::new();
    for (k, sub) in pairs {
        // The first of a key given twice counts, as for `plist-get'.
        if m.contains_key(k) {
            continue;
        }
        let sub_schema = schema && slot(k) != Slot::Data;
        m.insert(k.to_string(), node_to_json(sub, Some(k), &path.key(k), sub_schema)?);
    }
    Ok(m)
}

/// Read a tool plist (as printed by Emacs) into the model.
pub fn tool_from_sexp(v: &Sexp) -> Result<Tool> {
    tool_from_node(&Node::of_sexp(v))
}

/// Read a tool plist seen as a [`Node`] into the model.
pub fn tool_from_node(v: &Node<'_>) -> Result<Tool> {
    let pairs = v.plist_pairs().ok_or_else(|| {
        Error::new(ErrorKind::Plist, "a tool must be a plist (:name \"...\" :description \"...\" :args (...))")
    })?;
    let mut tool = Tool::default();
    let root = At::Root("");
    // A key given twice: the first value counts, as for `plist-get' and
    // `gptel-make-tool' (the validator warns).
    let mut seen = crate::model::Seen::default();
    for (k, val) in &pairs {
        if !seen.insert(*k) {
            continue;
        }
        match *k {
            "name" => {
                tool.name = name_of(val)
                    .ok_or_else(|| Error::at(ErrorKind::Plist, "name", "the tool's :name must be a string"))?
            }
            "description" => {
                tool.description = match val {
                    Node::Str(s) => Some(s.to_string()),
                    Node::Nil => None,
                    _ => {
                        return Err(Error::at(
                            ErrorKind::Plist,
                            "description",
                            "the tool's :description must be a string",
                        ))
                    }
                }
            }
            "args" => {
                let items = val
                    .list_items()
                    .or_else(|| val.vector_items())
                    .ok_or_else(|| Error::at(ErrorKind::Plist, "args", ":args must be a list of argument plists"))?;
                let at_args = root.key("args");
                for (i, a) in items.iter().enumerate() {
                    tool.args.push(arg_from_node(a, &at_args.index(i))?);
                }
            }
            "schema-extra" => {
                let p = val
                    .plist_pairs()
                    .ok_or_else(|| Error::at(ErrorKind::Plist, "schema-extra", ":schema-extra must be a plist"))?;
                tool.schema_extra = plist_to_map(&p, &root.key("schema-extra"), true)?;
            }
            k if EMACS_KEYS.contains(&k) => {}
            k => {
                let j = node_to_json(val, Some(k), &root.key(k), SCHEMA_EXTRAS.contains(&k))?;
                tool.extra.insert(k.to_string(), j);
            }
        }
    }
    if tool.name.is_empty() {
        return Err(Error::at(ErrorKind::Plist, "name", "the tool has no :name"));
    }
    Ok(tool)
}

fn name_of(v: &Node<'_>) -> Option<String> {
    match v {
        Node::Str(s) | Node::Sym(s) => Some(s.to_string()),
        _ => None,
    }
}

fn arg_from_node(v: &Node<'_>, path: &At<'_>) -> Result<Arg> {
    let pairs = v.plist_pairs().ok_or_else(|| {
        Error::at(
            ErrorKind::Plist,
            &path.to_string(),
            "an argument must be a plist like (:name \"x\" :type string :description \"...\")",
        )
    })?;
    let mut name = None;
    let mut optional = None;
    let mut rest = Vec::with_capacity(pairs.len());
    for (k, val) in pairs {
        match k {
            // The first :name is the argument's (as for `plist-get`); a
            // later one is a schema keyword called "name".
            "name" if name.is_none() => name = name_of(val),
            "optional" => {
                optional.get_or_insert(!val.is_nil() && val.as_keyword() != Some("json-false"));
            }
            _ => rest.push((k, val)),
        }
    }
    let name = name.ok_or_else(|| {
        Error::at(ErrorKind::Plist, &path.key("name").to_string(), "the argument has no :name string")
    })?;
    Ok(Arg { name, optional: optional.unwrap_or(false), schema: plist_to_map(&rest, path, true)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_with_odd_characters_round_trip() {
        let mut out = String::new();
        print_keyword("a b(c)", &mut out);
        assert_eq!(out, ":a\\ b\\(c\\)");
        let v = parse_sexp(&format!("({out} 1)")).unwrap();
        assert_eq!(plist_pairs(&v).unwrap()[0].0, "a b(c)");
    }

    #[test]
    fn numeric_symbol_is_escaped() {
        let mut out = String::new();
        print_symbol("12", &mut out);
        assert_eq!(out, "\\12");
    }

    #[test]
    fn deep_plist_is_a_limit_error() {
        let text = "(".repeat(500) + &")".repeat(500);
        assert_eq!(parse_sexp(&text).unwrap_err().kind, ErrorKind::Limit);
    }

    /// What [`emit_serialized_tool`] makes of `text` through a `Value`.
    fn through_value(text: &str) -> Node<'static> {
        let v: &'static Value = Box::leak(Box::new(serde_json::from_str(text).unwrap()));
        let mut tree = crate::node::Tree::default();
        emit_serialized_tool(v, &mut tree);
        tree.finish().pop().unwrap()
    }

    #[test]
    fn a_serialised_tool_parsed_straight_is_what_its_value_gives() {
        let texts = [
            r#"{"name":"t","description":"D é ✓","args":[{"name":"a","type":"string","enum":["x","y"],"optional":true}]}"#,
            r#"{"name":"t","args":[]}"#,
            r#"{"name":"t","args":{},"x":[],"y":{},"z":[[],{}]}"#,
            r#"{"args":[{"items":{"args":[1,2]},"args":[3]}],"n":[0,-1,18446744073709551615,-9223372036854775808,1.5,-0.0,1e300,123456789012345678901234]}"#,
            r#"{"b":[true,false,null],"nested":{"args":[{"a":1}]}}"#,
            r#"[{"name":"t"},1,"s",null]"#,
            r#""s""#,
            " \n{\"name\" : \"t\" ,\n \"args\" : [ ] }\n",
        ];
        for text in texts {
            assert_eq!(serialized_tool_node(text).as_ref(), Some(&through_value(text)), "{text}");
        }
        let many: String = (0..40).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(",");
        let text = format!("{{\"name\":\"t\",{many}}}");
        assert_eq!(serialized_tool_node(&text), Some(through_value(&text)));
        // Escapes and keys given twice go through a `Value`.
        for text in [
            r#"{"name":"a\"b"}"#,
            r#"{"na\u006de":"t"}"#,
            r#"{"name":"t","name":"u"}"#,
            &format!("{{{many},\"k39\":0}}"),
            r#"{"name":"t"} x"#,
        ] {
            assert_eq!(serialized_tool_node(text), None, "{text}");
        }
    }

    #[test]
    fn long_list_drops_without_recursion() {
        let text = format!("({})", "1 ".repeat(500_000));
        let v = parse_sexp(&text).unwrap();
        dispose(v);
    }

    /// What Emacs prints for infinities, NaN, the empty symbol and a
    /// circular list.
    #[test]
    fn non_finite_floats_empty_symbols_and_circular_lists() {
        let v = parse_sexp("(1.0e+INF -1.0e+INF 0.0e+NaN -0.0e+NaN ## :a 1.5 a1.0e+INF)").unwrap();
        let items = list_items(&v).unwrap();
        assert_eq!(items[0].as_f64(), Some(f64::INFINITY));
        assert_eq!(items[1].as_f64(), Some(f64::NEG_INFINITY));
        assert!(items[2].as_f64().unwrap().is_nan() && items[3].as_f64().unwrap().is_nan());
        assert_eq!(items[4].as_symbol(), Some(""));
        assert_eq!(items[6].as_f64(), Some(1.5));
        assert_eq!(items[7].as_symbol(), Some("a1.0e+INF"));
        // A symbol that would read as these is printed escaped.
        let mut out = String::new();
        print_symbol("1.0e+INF", &mut out);
        assert_eq!(parse_sexp(&out).unwrap().as_symbol(), Some("1.0e+INF"));
        let e = parse_sexp("(1 2 1 2 . #2)").unwrap_err();
        assert!(e.message.contains("circular"), "{e}");
    }
}
