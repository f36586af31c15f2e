//! Where plists are written, and how elisp data is printed: the [`Sink`]
//! trait the plist emitters of [`crate::plist`] write through, [`Text`]
//! (elisp text for `read`), and the printers of strings, symbols,
//! keywords and numbers that [`crate::node`] and the generated source use
//! too.

use crate::model::Tool;
use crate::value::Number;

/// Where plists are written: elisp text for `read` ([`Text`]), or, in the
/// Emacs module, Lisp objects built directly.  The walk over the model
/// (which keys, which values are symbols, lists or vectors) is written
/// once, over this trait.
///
/// `'a` is how long what is emitted lives: a sink may keep the strings
/// it is given for that long ([`crate::node::Tree`] does).
pub trait Sink<'a> {
    /// Begin a list, or a vector when `vector`.
    fn open(&mut self, vector: bool);
    /// End the innermost list or vector.
    fn close(&mut self);
    fn string(&mut self, s: &'a str);
    /// A string carrying `code` as its text property `toolspec-code`: a
    /// problem's message, which Lisp tells apart from others by its code,
    /// never by its text.  A sink that makes no Lisp strings keeps the text.
    fn coded_string(&mut self, s: &'a str, code: &'a str) {
        let _ = code;
        self.string(s);
    }
    /// A keyword, `name` without its colon.
    fn keyword(&mut self, name: &'a str);
    fn symbol(&mut self, name: &'a str);
    /// A schema's type name (`:type string`): a symbol, as gptel and llm
    /// document it, unless the sink makes them strings (see
    /// [`crate::module_lisp`]).
    fn type_name(&mut self, name: &'a str) {
        self.symbol(name);
    }
    fn number(&mut self, n: &'a Number);
    fn nil(&mut self);
    fn t(&mut self);
    /// Forget what was emitted in the innermost open list or vector, which
    /// stays open, empty.
    fn clear_open(&mut self);
    /// Switch to list apart number `k`, or back from it: what is emitted
    /// between two calls goes to that list, which [`Sink::side_list`]
    /// emits whole later, as one item where the sink then is.  False, and
    /// nothing switched, when the sink cannot: [`Text`] writes as it goes.
    /// An import emits the paths and problems of its tools so, as each
    /// tool is taken, instead of after the last one.
    fn side(&mut self, k: usize) -> bool {
        let _ = k;
        false
    }
    /// Emit list apart number `k` (see [`Sink::side`]), and forget it.
    fn side_list(&mut self, k: usize) {
        let _ = k;
    }
    /// Whether the sink keeps the tools it emitted ([`Sink::keep_tool`]).
    fn keeps_tools(&self) -> bool {
        false
    }
    /// Keep `tool`, whose plist was just emitted, as an item: in the Emacs
    /// module, a handle Lisp gives back to write the tool from it without
    /// reading its plist again.  A sink that keeps none drops it.
    fn keep_tool(&mut self, tool: Tool) {
        drop(tool);
    }
}

/// A [`Sink`] writing elisp text that `read` turns back into the plist.
pub struct Text<'a> {
    out: &'a mut String,
    /// For each open sequence: whether nothing was written in it yet, the
    /// character that closes it, and where its items begin in `out`.
    open: Vec<(bool, char, usize)>,
    /// Whether coded strings are printed with their code ([`Text::with_codes`]).
    codes: bool,
}

impl<'a> Text<'a> {
    pub fn new(out: &'a mut String) -> Self {
        Text { out, open: Vec::new(), codes: false }
    }

    /// A sink that prints each coded string with its `toolspec-code`
    /// property (`#("TEXT" 0 LENGTH (toolspec-code CODE))`), for Lisp to
    /// read; without, coded strings print as plain strings.
    pub fn with_codes(mut self) -> Self {
        self.codes = true;
        self
    }

    fn sep(&mut self) {
        if let Some((first, _, _)) = self.open.last_mut() {
            if *first {
                *first = false;
            } else {
                self.out.push(' ');
            }
        }
    }
}

impl<'a> Sink<'a> for Text<'_> {
    fn open(&mut self, vector: bool) {
        self.sep();
        self.out.push(if vector { '[' } else { '(' });
        self.open.push((true, if vector { ']' } else { ')' }, self.out.len()));
    }
    fn close(&mut self) {
        let (_, closer, _) = self.open.pop().unwrap_or((false, ')', 0));
        self.out.push(closer);
    }
    fn clear_open(&mut self) {
        if let Some((first, _, start)) = self.open.last_mut() {
            self.out.truncate(*start);
            *first = true;
        }
    }
    fn string(&mut self, s: &str) {
        self.sep();
        print_string(s, self.out);
    }
    fn coded_string(&mut self, s: &str, code: &str) {
        if s.is_empty() || !self.codes {
            return self.string(s);
        }
        self.sep();
        // `#("TEXT" 0 LENGTH (toolspec-code CODE))`, LENGTH in characters.
        self.out.push_str("#(");
        print_string(s, self.out);
        self.out.push_str(" 0 ");
        self.out.push_str(itoa::Buffer::new().format(s.chars().count()));
        self.out.push_str(" (toolspec-code ");
        print_symbol(code, self.out);
        self.out.push_str("))");
    }
    fn keyword(&mut self, name: &str) {
        self.sep();
        print_keyword(name, self.out);
    }
    fn symbol(&mut self, name: &str) {
        self.sep();
        print_symbol(name, self.out);
    }
    fn number(&mut self, n: &Number) {
        self.sep();
        print_number(n, self.out);
    }
    fn nil(&mut self) {
        self.sep();
        self.out.push_str("nil");
    }
    fn t(&mut self) {
        self.sep();
        self.out.push('t');
    }
}

fn print_number(n: &Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else {
        let f = n.as_f64().unwrap_or(0.0);
        // Debug keeps a fraction or an exponent, so Emacs reads a float.
        out.push_str(&format!("{f:?}"));
    }
}

/// An elisp string literal, read back by Emacs (`read`, or `load` of a
/// file holding it) as `s`.  Newlines and tabs stay as they are; other
/// control characters are escaped (`\r`, `\e`, `\N{U+0}`): a NUL in a
/// file makes `load` decode it as raw bytes, an ESC sequence makes it
/// decode it as ISO-2022, where quotes and backslashes no longer pair as
/// printed.  The colon of `Local Variables:` is escaped too, so that no
/// string starts a local variables list whose `coding:` would decode the
/// file otherwise.
pub fn print_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if c < ' ' => out.push_str(&format!("\\N{{U+{:X}}}", c as u32)),
            ':' if ends_with_local_variables(out) => out.push_str("\\N{U+3A}"),
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `out` ends with `Local Variables` in any case: what Emacs
/// looks for, followed by a colon, to find a file's local variables.
pub fn ends_with_local_variables(out: &str) -> bool {
    const WORDS: &str = "local variables";
    out.len() >= WORDS.len()
        && out.is_char_boundary(out.len() - WORDS.len())
        && out[out.len() - WORDS.len()..].eq_ignore_ascii_case(WORDS)
}

fn symbol_char_needs_escape(c: char, first: bool) -> bool {
    matches!(c, '"' | '\\' | '\'' | ';' | '#' | '(' | ')' | ',' | '`' | '[' | ']' | '.' | '?')
        && (first || !matches!(c, '?' | '.'))
        || c <= ' '
        || c == '\u{a0}'
}

fn print_symbol_name(name: &str, out: &mut String) {
    for (i, c) in name.chars().enumerate() {
        if symbol_char_needs_escape(c, i == 0) {
            out.push('\\');
        }
        out.push(c);
    }
}

/// An elisp symbol; a name that would read as a number is escaped.
pub fn print_symbol(name: &str, out: &mut String) {
    if name.is_empty() {
        out.push_str("##");
        return;
    }
    if name.parse::<f64>().is_ok()
        || name.starts_with(['-', '+']) && name[1..].parse::<f64>().is_ok()
        || name.ends_with("e+INF")
        || name.ends_with("e+NaN")
    {
        // Read as a number, or (`1.0e+INF`, `0.0e+NaN`) as a float.
        out.push('\\');
    }
    print_symbol_name(name, out);
}

/// A keyword `:name`.
pub fn print_keyword(name: &str, out: &mut String) {
    out.push(':');
    for c in name.chars() {
        if symbol_char_needs_escape(c, false) || c == '?' {
            out.push('\\');
        }
        out.push(c);
    }
}
