//! Reading Emacs Lisp source files: every form with its place in the
//! text, nothing evaluated.
//!
//! [`crate::plist::parse_sexp`] reads what Emacs's `prin1` prints, through
//! lexpr and a small shim.  Source written by people needs more: `#'`,
//! `?\C-a` and `?\(`, symbols such as `1+` or `foo?`, `.5` and `1.`,
//! escapes anywhere in symbols, `#s(...)`, `#N=` labels, and the line and
//! column of every sub-form.  lexpr's positions (its `Datum` spans) are
//! byte columns, cost a scan from the start of the text for every datum
//! when reading from a string, and lexpr drops long lists recursively;
//! its elisp options also miss most of the syntax above.  So atoms are
//! read here by Emacs's own rules (lread.c), into a tree of [`Form`]s
//! that keeps byte offsets, and the data the validator needs is handed
//! over as lexpr values ([`Form::to_sexp`]), the model the rest of the
//! crate already uses.
//!
//! `#.FORM` (evaluate at read time) is read as a [`Prefix::ReadEval`]
//! node and never evaluated.

use lexpr::Value as Sexp;

use crate::error::{line_column, Error, ErrorKind, Result};

/// Deepest nesting of lists, vectors and prefixes accepted.
pub const MAX_DEPTH: usize = 400;

/// A reader prefix and what it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    /// `'X`, `(quote X)`
    Quote,
    /// `#'X`, `(function X)`
    Function,
    /// `` `X ``
    Backquote,
    /// `,X`
    Unquote,
    /// `,@X`
    Splice,
    /// `#.X`: evaluated by Emacs's reader; never by toolspec.
    ReadEval,
}

impl Prefix {
    /// The symbol Emacs reads the prefix as.
    pub fn symbol(self) -> &'static str {
        match self {
            Prefix::Quote => "quote",
            Prefix::Function => "function",
            Prefix::Backquote => "`",
            Prefix::Unquote => ",",
            Prefix::Splice => ",@",
            Prefix::ReadEval => "#.",
        }
    }

    /// How the prefix is written.
    pub fn text(self) -> &'static str {
        match self {
            Prefix::Quote => "'",
            Prefix::Function => "#'",
            Prefix::Backquote => "`",
            Prefix::Unquote => ",",
            Prefix::Splice => ",@",
            Prefix::ReadEval => "#.",
        }
    }
}

/// What a form is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Int(i64),
    /// An integer beyond 64 bits, kept as written.
    BigInt(String),
    Float(f64),
    Str(String),
    /// A symbol, `nil` and `t` included.
    Symbol(String),
    /// A keyword, without its colon.
    Keyword(String),
    /// A list; the second field is the tail of a dotted list.
    List(Vec<Form>, Option<Box<Form>>),
    Vector(Vec<Form>),
    Prefixed(Prefix, Box<Form>),
    /// An object read from syntax that holds no plain data for a tool
    /// (`#s(...)` records, `#[...]` byte-code, `#N#` references, bool
    /// vectors); the text says which.
    Opaque(&'static str),
}

/// A form and where it is: `start..end` are byte offsets in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Form {
    pub fn symbol(&self) -> Option<&str> {
        match &self.kind {
            Kind::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub fn keyword(&self) -> Option<&str> {
        match &self.kind {
            Kind::Keyword(s) => Some(s),
            _ => None,
        }
    }

    /// `nil` or `()`.
    pub fn is_nil(&self) -> bool {
        match &self.kind {
            Kind::Symbol(s) => s == "nil",
            Kind::List(items, None) => items.is_empty(),
            _ => false,
        }
    }

    /// The elements of a proper list (nil is the empty list).
    pub fn list(&self) -> Option<&[Form]> {
        match &self.kind {
            Kind::List(items, None) => Some(items),
            Kind::Symbol(s) if s == "nil" => Some(&[]),
            _ => None,
        }
    }

    /// A list's head symbol and arguments: `(HEAD ARGS...)`.
    pub fn call(&self) -> Option<(&str, &[Form])> {
        let items = self.list()?;
        let head = items.first()?.symbol()?;
        Some((head, &items[1..]))
    }

    /// The form a prefix or its long form (`(quote X)`, `(function X)`)
    /// applies to.
    pub fn prefixed(&self) -> Option<(Prefix, &Form)> {
        match &self.kind {
            Kind::Prefixed(p, f) => Some((*p, f)),
            _ => match self.call() {
                Some(("quote", [x])) => Some((Prefix::Quote, x)),
                Some(("function", [x])) => Some((Prefix::Function, x)),
                _ => None,
            },
        }
    }

    /// The form as data, as `read` returns it: prefixes become lists
    /// such as `(quote X)`.  Opaque objects become the symbol naming them.
    pub fn to_sexp(&self) -> Sexp {
        match &self.kind {
            Kind::Int(i) => Sexp::from(*i),
            Kind::BigInt(s) => Sexp::from(s.parse::<f64>().unwrap_or(f64::NAN)),
            Kind::Float(f) => Sexp::from(*f),
            Kind::Str(s) => Sexp::string(s.as_str()),
            Kind::Symbol(s) if s == "nil" => Sexp::Null,
            Kind::Symbol(s) => Sexp::symbol(s.as_str()),
            Kind::Keyword(k) => Sexp::keyword(k.as_str()),
            Kind::List(items, tail) => {
                let items: Vec<Sexp> = items.iter().map(Form::to_sexp).collect();
                match tail {
                    None => Sexp::list(items),
                    Some(t) => Sexp::append(items, t.to_sexp()),
                }
            }
            Kind::Vector(items) => Sexp::vector(items.iter().map(Form::to_sexp).collect::<Vec<_>>()),
            Kind::Prefixed(p, f) => Sexp::list(vec![Sexp::symbol(p.symbol()), f.to_sexp()]),
            Kind::Opaque(what) => Sexp::symbol(*what),
        }
    }
}

/// Source text with its forms read, and line/column lookups.
#[derive(Debug)]
pub struct Source<'a> {
    pub text: &'a str,
    /// Every top-level form read, in order.
    pub forms: Vec<Form>,
    /// Why reading stopped early, if it did: the forms before it are in
    /// `forms`.
    pub error: Option<Error>,
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    /// Read every top-level form of `text`.
    pub fn read(text: &'a str) -> Source<'a> {
        let mut r = Reader { s: text, b: text.as_bytes(), i: 0, depth: 0 };
        let mut forms = Vec::new();
        let mut error = None;
        loop {
            match r.next_top() {
                Ok(Some(f)) => forms.push(f),
                Ok(None) => break,
                Err(e) => {
                    error = Some(e.into_error(text));
                    break;
                }
            }
        }
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        Source { text, forms, error, line_starts }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let column = self.text.get(start..offset).map_or(offset - start, |s| s.chars().count()) + 1;
        (line, column)
    }
}

/// Read exactly one form from `text` (trailing comments and blanks allowed).
pub fn read_one(text: &str) -> Result<Form> {
    let src = Source::read(text);
    if let Some(e) = src.error {
        return Err(e);
    }
    let mut forms = src.forms;
    match forms.len() {
        1 => Ok(forms.pop().expect("one form")),
        0 => Err(Error::new(ErrorKind::Plist, "no Lisp form in the text")),
        _ => {
            let (l, c) = line_column(text.as_bytes(), forms[1].start);
            Err(Error::new(ErrorKind::Plist, "more than one Lisp form in the text").with_position(l, c))
        }
    }
}

/// A reading error and the byte offset it is about.
struct ReadError {
    at: usize,
    message: String,
    /// A list open at the end of the text.
    unclosed_list: bool,
}

impl ReadError {
    fn into_error(self, text: &str) -> Error {
        let (l, c) = line_column(text.as_bytes(), self.at);
        Error::new(ErrorKind::Plist, self.message).with_position(l, c)
    }
}

type R<T> = std::result::Result<T, ReadError>;

fn err<T>(at: usize, message: impl Into<String>) -> R<T> {
    Err(ReadError { at, message: message.into(), unclosed_list: false })
}

struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    depth: usize,
}

/// Characters that end a symbol or number (besides whitespace and
/// control characters), as in Emacs's reader.
fn ends_token(c: char) -> bool {
    (c as u32) <= 32 || c == '\u{a0}' || matches!(c, '"' | '\'' | ';' | '#' | '(' | ')' | '[' | ']' | '`' | ',')
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.i..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.s[self.i..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        Some(c)
    }

    fn skip_line(&mut self) {
        match self.b[self.i..].iter().position(|&b| b == b'\n') {
            Some(n) => self.i += n + 1,
            None => self.i = self.b.len(),
        }
    }

    /// Skip blanks and comments (`;` to the end of the line, and `#!`
    /// lines as Emacs does).
    fn skip_blank(&mut self) {
        while let Some(&b) = self.b.get(self.i) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => self.i += 1,
                b';' => self.skip_line(),
                b'#' if self.b.get(self.i + 1) == Some(&b'!') => self.skip_line(),
                _ if self.s[self.i..].starts_with('\u{a0}') => self.i += 2,
                _ => break,
            }
        }
    }

    fn next_top(&mut self) -> R<Option<Form>> {
        self.skip_blank();
        match self.peek() {
            None => Ok(None),
            Some(')') | Some(']') => err(self.i, "unmatched closing bracket"),
            Some(_) => {
                let start = self.i;
                self.form().map(Some).map_err(|mut e| {
                    // Everything after a form missing its `)' was read into
                    // it: the form to fix is this one, not the last list open.
                    if e.at != start && self.b[start] == b'(' && e.unclosed_list {
                        e.at = start;
                        e.message = "this form is never closed (end of file reached): a `)' is missing, \
                                     and what follows it was read as part of it"
                            .into();
                    }
                    e
                })
            }
        }
    }

    fn enter(&mut self, at: usize) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(at, format!("forms nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    /// Read one form; blanks before it are already skipped.
    fn form(&mut self) -> R<Form> {
        let start = self.i;
        let c = match self.peek() {
            Some(c) => c,
            None => return err(start, "end of file where a form was expected"),
        };
        let kind = match c {
            '(' => {
                self.i += 1;
                self.seq(start, ')')?
            }
            '[' => {
                self.i += 1;
                let Kind::List(items, _) = self.seq(start, ']')? else { unreachable!() };
                Kind::Vector(items)
            }
            ')' | ']' => return err(start, format!("unexpected `{c}'")),
            '"' => {
                self.i += 1;
                Kind::Str(self.string(start)?)
            }
            '\'' => {
                self.i += 1;
                self.prefixed(Prefix::Quote, start)?
            }
            '`' => {
                self.i += 1;
                self.prefixed(Prefix::Backquote, start)?
            }
            ',' => {
                self.i += 1;
                if self.peek() == Some('@') {
                    self.i += 1;
                    self.prefixed(Prefix::Splice, start)?
                } else {
                    self.prefixed(Prefix::Unquote, start)?
                }
            }
            '?' => {
                self.i += 1;
                Kind::Int(self.char_literal(start)?)
            }
            '#' => return self.hash(start),
            _ => self.atom(start)?,
        };
        Ok(Form { kind, start, end: self.i })
    }

    fn prefixed(&mut self, p: Prefix, start: usize) -> R<Kind> {
        self.enter(start)?;
        self.skip_blank();
        if self.peek().is_none() {
            return err(start, format!("`{}' at the end of the file", p.text()));
        }
        if matches!(self.peek(), Some(')' | ']')) {
            return err(start, format!("`{}' with nothing after it", p.text()));
        }
        let f = self.form()?;
        self.depth -= 1;
        Ok(Kind::Prefixed(p, Box::new(f)))
    }

    /// The elements of a list or vector up to `close`; `(a . b)` tails
    /// only in lists.
    fn seq(&mut self, start: usize, close: char) -> R<Kind> {
        self.enter(start)?;
        let mut items = Vec::new();
        let mut tail = None;
        loop {
            self.skip_blank();
            match self.peek() {
                None => {
                    let what = if close == ')' { "list" } else { "vector" };
                    let message = format!("this {what} is never closed (end of file reached): a `{close}' is missing");
                    return Err(ReadError { at: start, message, unclosed_list: close == ')' });
                }
                Some(c @ (')' | ']')) => {
                    if c != close {
                        return err(
                            self.i,
                            format!("`{c}' closes what `{}' opened", if close == ')' { '(' } else { '[' }),
                        );
                    }
                    self.i += 1;
                    break;
                }
                Some('.') if close == ')' && self.peek_at(1).is_none_or(ends_token) => {
                    let dot = self.i;
                    if items.is_empty() {
                        return err(dot, "a `.' must follow at least one element");
                    }
                    self.i += 1;
                    self.skip_blank();
                    if matches!(self.peek(), None | Some(')')) {
                        return err(dot, "nothing after the `.' of a dotted pair");
                    }
                    tail = Some(Box::new(self.form()?));
                    self.skip_blank();
                    if self.peek() != Some(')') {
                        return err(self.i, "a dotted pair takes one form after the `.'");
                    }
                    self.i += 1;
                    break;
                }
                Some(_) => items.push(self.form()?),
            }
        }
        self.depth -= 1;
        Ok(Kind::List(items, tail))
    }

    fn hex_digits(&mut self, max: usize) -> Option<u32> {
        let mut n: u32 = 0;
        let mut count = 0;
        while count < max {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    n = n.saturating_mul(16).saturating_add(d);
                    self.i += 1;
                    count += 1;
                }
                None => break,
            }
        }
        (count > 0).then_some(n)
    }

    /// After a backslash, in a string or a character literal.  None is an
    /// escape that stands for nothing (`\ ` and `\<newline>` in strings).
    fn escape(&mut self, in_string: bool, start: usize) -> R<Option<u32>> {
        let at = self.i;
        let Some(c) = self.bump() else {
            return err(start, "a backslash at the end of the file");
        };
        let code = match c {
            'a' => 7,
            'b' => 8,
            'd' => 127,
            'e' => 27,
            'f' => 12,
            'n' => 10,
            'r' => 13,
            't' => 9,
            'v' => 11,
            '\n' if in_string => return Ok(None),
            ' ' if in_string => return Ok(None),
            's' if self.peek() == Some('-') && !in_string => {
                self.i += 1;
                self.char_or_escape(in_string, start)? | 0x80_0000
            }
            's' => 32,
            'x' => match self.hex_digits(8) {
                Some(n) => n,
                None if in_string => return err(at - 1, "`\\x' without hexadecimal digits"),
                None => 'x' as u32,
            },
            'u' | 'U' => {
                let want = if c == 'u' { 4 } else { 8 };
                let before = self.i;
                match self.hex_digits(want) {
                    Some(n) if self.i - before == want => n,
                    _ => return err(at - 1, format!("`\\{c}' needs exactly {want} hexadecimal digits")),
                }
            }
            'N' if self.peek() == Some('{') => {
                self.i += 1;
                let close = match self.s[self.i..].find('}') {
                    Some(n) => self.i + n,
                    None => return err(at - 1, "`\\N{' without its `}'"),
                };
                let name = &self.s[self.i..close];
                self.i = close + 1;
                // Character names need Unicode's name table: only U+XXXX is decoded.
                name.strip_prefix("U+").and_then(|h| u32::from_str_radix(h, 16).ok()).unwrap_or(0xFFFD)
            }
            '0'..='7' => {
                let mut n = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            self.i += 1;
                        }
                        None => break,
                    }
                }
                n
            }
            'C' if self.peek() == Some('-') => {
                self.i += 1;
                control(self.char_or_escape(in_string, start)?)
            }
            '^' => control(self.char_or_escape(in_string, start)?),
            'M' | 'S' | 'H' | 'A' if self.peek() == Some('-') => {
                self.i += 1;
                let bit = match c {
                    'M' => 0x800_0000,
                    'S' => 0x200_0000,
                    'H' => 0x100_0000,
                    _ => 0x40_0000,
                };
                self.char_or_escape(in_string, start)? | bit
            }
            other => other as u32,
        };
        Ok(Some(code))
    }

    fn char_or_escape(&mut self, in_string: bool, start: usize) -> R<u32> {
        match self.bump() {
            None => err(start, "a character is missing at the end of the file"),
            Some('\\') => Ok(self.escape(in_string, start)?.unwrap_or(32)),
            Some(c) => Ok(c as u32),
        }
    }

    fn char_literal(&mut self, start: usize) -> R<i64> {
        Ok(self.char_or_escape(false, start)? as i64)
    }

    fn string(&mut self, start: usize) -> R<String> {
        let mut out = String::new();
        loop {
            let run = self.b[self.i..].iter().position(|&b| b == b'"' || b == b'\\');
            let Some(n) = run else {
                return err(start, "this string is never closed (end of file reached): a `\"' is missing");
            };
            out.push_str(&self.s[self.i..self.i + n]);
            self.i += n;
            if self.b[self.i] == b'"' {
                self.i += 1;
                return Ok(out);
            }
            self.i += 1;
            if let Some(code) = self.escape(true, start)? {
                // Modifier bits have no place in a string character: Emacs
                // keeps the base character (meta sets the 8th bit).
                let base = if code & 0x800_0000 != 0 { (code & 0x3F_FFFF) | 0x80 } else { code & 0x3F_FFFF };
                out.push(char::from_u32(base).unwrap_or('\u{FFFD}'));
            }
        }
    }

    /// A symbol, keyword or number: characters up to a delimiter, with
    /// backslash escapes.
    fn token(&mut self) -> (String, bool) {
        let mut name = String::new();
        let mut escaped = false;
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.i += 1;
                escaped = true;
                if let Some(n) = self.bump() {
                    name.push(n);
                }
            } else if ends_token(c) {
                break;
            } else {
                self.i += c.len_utf8();
                name.push(c);
            }
        }
        (name, escaped)
    }

    fn atom(&mut self, start: usize) -> R<Kind> {
        let (name, escaped) = self.token();
        if name.is_empty() && !escaped {
            let c = self.peek().unwrap_or(' ');
            return err(start, format!("unexpected character `{c}'"));
        }
        if !escaped {
            if let Some(n) = number(&name) {
                return Ok(n);
            }
            if name == "." {
                return err(start, "a `.' outside a list");
            }
        }
        Ok(match name.strip_prefix(':') {
            Some(k) => Kind::Keyword(k.to_string()),
            None => Kind::Symbol(name),
        })
    }

    /// `#` syntaxes.
    fn hash(&mut self, start: usize) -> R<Form> {
        self.i += 1;
        let c = self.peek();
        let kind = match c {
            Some('\'') => {
                self.i += 1;
                self.prefixed(Prefix::Function, start)?
            }
            Some('.') => {
                self.i += 1;
                self.prefixed(Prefix::ReadEval, start)?
            }
            Some('(') => {
                // A string with text properties: #("text" 0 4 (face bold)).
                let f = self.form()?;
                match f.list().and_then(|l| l.first()) {
                    Some(Form { kind: Kind::Str(s), .. }) => Kind::Str(s.clone()),
                    _ => return err(start, "`#(' must hold a string and its text properties"),
                }
            }
            Some('[') => {
                self.form()?;
                Kind::Opaque("byte-code-object")
            }
            Some('s') if self.peek_at(1) == Some('(') => {
                self.i += 1;
                self.form()?;
                Kind::Opaque("record")
            }
            Some('&') => {
                self.i += 1;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                if self.peek() != Some('"') {
                    return err(start, "`#&' must be followed by a length and a string");
                }
                self.i += 1;
                self.string(start)?;
                Kind::Opaque("bool-vector")
            }
            Some(':') | Some('_') => {
                self.i += 1;
                let (name, _) = self.token();
                Kind::Symbol(name)
            }
            Some('#') => {
                self.i += 1;
                Kind::Symbol(String::new())
            }
            Some('$') => {
                self.i += 1;
                Kind::Opaque("load-file-name")
            }
            Some('x' | 'X' | 'b' | 'B' | 'o' | 'O') => {
                let radix = match c {
                    Some('x' | 'X') => 16,
                    Some('b' | 'B') => 2,
                    _ => 8,
                };
                self.i += 1;
                self.radix_number(start, radix)?
            }
            Some(d) if d.is_ascii_digit() => {
                let digits_start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let n: u32 = self.s[digits_start..self.i].parse().unwrap_or(0);
                match self.bump() {
                    Some('r') if (2..=36).contains(&n) => self.radix_number(start, n)?,
                    Some('=') => {
                        // A label for circular structure: the labelled form.
                        self.skip_blank();
                        let mut f = self.form()?;
                        f.start = start;
                        return Ok(f);
                    }
                    Some('#') => Kind::Opaque("circular-reference"),
                    _ => return err(start, "invalid `#' syntax"),
                }
            }
            Some('<') => {
                return err(start, "`#<...>' is how Emacs prints an object it cannot read back, not source code")
            }
            Some('@') => return err(start, "`#@' (skip bytes) belongs in compiled files, not in source"),
            None => return err(start, "`#' at the end of the file"),
            Some(other) => return err(start, format!("invalid read syntax `#{other}'")),
        };
        Ok(Form { kind, start, end: self.i })
    }

    fn radix_number(&mut self, start: usize, radix: u32) -> R<Kind> {
        let (digits, _) = self.token();
        let (neg, body) = match digits.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, digits.strip_prefix('+').unwrap_or(&digits)),
        };
        match i64::from_str_radix(body, radix) {
            Ok(n) => Ok(Kind::Int(if neg { -n } else { n })),
            Err(_) if !body.is_empty() && body.chars().all(|c| c.is_digit(radix)) => {
                Ok(Kind::BigInt(format!("#{radix}r{digits}")))
            }
            Err(_) => err(start, format!("invalid number in base {radix}")),
        }
    }
}

/// `\C-X` and `\^X`.
fn control(c: u32) -> u32 {
    match c {
        0x3F => 127,
        0x40..=0x5F | 0x61..=0x7A => c & 0x1F,
        _ => c | 0x400_0000,
    }
}

/// A number by Emacs's rules (lread.c `string_to_number`): `1`, `+1`,
/// `1.` (an integer), `.5`, `1.5`, `1e5`, `1.e3`, `1.0e+INF`, `0.0e+NaN`.
/// Anything else (`1+`, `-`, `1.2.3`) is a symbol.
fn number(s: &str) -> Option<Kind> {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let lead_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let lead = i > lead_start;
    let mut dot = false;
    let mut trail = false;
    if i < b.len() && b[i] == b'.' {
        dot = true;
        i += 1;
        let t = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        trail = i > t;
    }
    let mut exp = false;
    let mut special = None;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') && (lead || trail) {
        let save = i;
        i += 1;
        let rest = &s[i..];
        if rest == "+INF" {
            special = Some(f64::INFINITY);
            i = b.len();
            exp = true;
        } else if rest == "+NaN" {
            special = Some(f64::NAN);
            i = b.len();
            exp = true;
        } else {
            if i < b.len() && matches!(b[i], b'+' | b'-') {
                i += 1;
            }
            let d = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i > d {
                exp = true;
            } else {
                i = save;
            }
        }
    }
    if i != b.len() {
        return None;
    }
    if lead && !trail && !exp {
        // An integer, possibly with a trailing dot.
        let digits = if dot { &s[..s.len() - 1] } else { s };
        return Some(match digits.parse::<i64>() {
            Ok(n) => Kind::Int(n),
            Err(_) => Kind::BigInt(digits.to_string()),
        });
    }
    if trail || (lead && exp) {
        if let Some(sp) = special {
            let neg = s.starts_with('-');
            return Some(Kind::Float(if neg { -sp } else { sp }));
        }
        let mut text = s.to_string();
        if text.ends_with('.') {
            text.push('0');
        }
        // Rust needs a digit around the point: ".5" and "1.e3".
        let text = text.replace(".e", ".0e").replace(".E", ".0E");
        return text.parse::<f64>().ok().map(Kind::Float);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Form {
        read_one(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn sexp(text: &str) -> String {
        one(text).to_sexp().to_string()
    }

    #[test]
    fn atoms_read_as_emacs_reads_them() {
        let cases: &[(&str, Kind)] = &[
            ("1.", Kind::Int(1)),
            ("+1", Kind::Int(1)),
            ("-12", Kind::Int(-12)),
            (".5", Kind::Float(0.5)),
            ("-.5", Kind::Float(-0.5)),
            ("1e5", Kind::Float(100000.0)),
            ("1.e3", Kind::Float(1000.0)),
            ("-1.5e3", Kind::Float(-1500.0)),
            ("1+", Kind::Symbol("1+".into())),
            ("-", Kind::Symbol("-".into())),
            ("foo?bar", Kind::Symbol("foo?bar".into())),
            ("a\\ b", Kind::Symbol("a b".into())),
            ("\\1", Kind::Symbol("1".into())),
            ("foo|bar", Kind::Symbol("foo|bar".into())),
            ("?a", Kind::Int(97)),
            ("?\\(", Kind::Int(40)),
            ("?\\C-a", Kind::Int(1)),
            ("?\\^M", Kind::Int(13)),
            ("?\\s", Kind::Int(32)),
            ("?\\s-a", Kind::Int(8388705)),
            ("?\\M-a", Kind::Int(134217825)),
            ("?\\x41", Kind::Int(65)),
            ("?\\101", Kind::Int(65)),
            ("?\\^?", Kind::Int(127)),
            ("?\\d", Kind::Int(127)),
            ("?é", Kind::Int(233)),
            ("#x10", Kind::Int(16)),
            ("#b101", Kind::Int(5)),
            ("#24r1k", Kind::Int(44)),
            ("##", Kind::Symbol(String::new())),
            ("#:foo", Kind::Symbol("foo".into())),
            ("#_foo", Kind::Symbol("foo".into())),
            (":name", Kind::Keyword("name".into())),
            ("\"\\x41\\ b\"", Kind::Str("Ab".into())),
            ("\"a\\\nb\"", Kind::Str("ab".into())),
            ("\"say \\\"hi\\\"\\n\"", Kind::Str("say \"hi\"\n".into())),
            ("\"\\u00e9\\N{U+41}\"", Kind::Str("éA".into())),
            ("#(\"text\" 0 4 (face bold))", Kind::Str("text".into())),
        ];
        for (text, kind) in cases {
            assert_eq!(&one(text).kind, kind, "{text}");
        }
        assert!(matches!(one("1.0e+INF").kind, Kind::Float(f) if f.is_infinite()));
        assert!(matches!(one("0.0e+NaN").kind, Kind::Float(f) if f.is_nan()));
    }

    #[test]
    fn symbols_end_where_emacs_ends_them() {
        let src = Source::read("foo'bar foo,bar foo#'bar");
        let names: Vec<String> = src.forms.iter().map(|f| f.to_sexp().to_string()).collect();
        assert_eq!(names, ["foo", "(quote bar)", "foo", "(, bar)", "foo", "(function bar)"]);
    }

    #[test]
    fn structure_prefixes_and_dotted_pairs() {
        assert_eq!(sexp("(a . b)"), "(a . b)");
        assert_eq!(sexp("(a .b)"), "(a .b)");
        assert_eq!(sexp("[a (b) \"c\" nil]"), "#(a (b) \"c\" ())");
        assert_eq!(sexp("`(a ,b ,@c)"), "(` (a (, b) (,@ c)))");
        assert_eq!(sexp("#'(lambda (x) x)"), "(function (lambda (x) x))");
        assert_eq!(sexp("'(:type 'string)"), "(quote (#:type (quote string)))");
        assert_eq!(sexp("#1=(a . #1#)"), "(a . circular-reference)");
        assert_eq!(sexp("#s(hash-table data (a 1))"), "record");
        assert!(matches!(one("#.(delete-file \"x\")").kind, Kind::Prefixed(Prefix::ReadEval, _)));
    }

    #[test]
    fn positions_of_sub_forms() {
        let text = ";; tools\n(gptel-make-tool\n :name \"é\" :args '((:type \"string\")))\n";
        let src = Source::read(text);
        assert!(src.error.is_none());
        let call = &src.forms[0];
        assert_eq!(src.line_column(call.start), (2, 1));
        let items = call.list().unwrap();
        assert_eq!(src.line_column(items[2].start), (3, 8));
        // Columns count characters: after "é" comes column 12.
        assert_eq!(src.line_column(items[3].start), (3, 12));
        let (_, quoted) = items[4].prefixed().unwrap();
        let ty = &quoted.list().unwrap()[0].list().unwrap()[1];
        assert_eq!(ty.kind, Kind::Str("string".into()));
        assert_eq!(src.line_column(ty.start), (3, 27));
        assert_eq!(&text[items[4].start..items[4].end], "'((:type \"string\"))");
    }

    #[test]
    fn errors_say_where() {
        let src = Source::read("(a)\n(b\n");
        assert_eq!(src.forms.len(), 1);
        let e = src.error.unwrap();
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        assert!(e.message.contains("never closed"), "{e}");
        for bad in ["(a]", ")", "\"abc", "#<buffer x>", "(a . )", "'"] {
            assert!(Source::read(bad).error.is_some(), "{bad}");
        }
        // A form missing its `)' swallows those after it: the error is at
        // its opening paren, not at the last list open at the end.
        let src = Source::read(
            "(a)\n\n(gptel-make-tool\n :name \"x\"\n :args (list 1)\n\n(defun f () (g 1)\n(defun h () 2)\n",
        );
        let e = src.error.unwrap();
        assert_eq!((e.line, e.column), (Some(3), Some(1)), "{e}");
        assert!(e.message.contains("this form is never closed"), "{e}");
        let deep = "(".repeat(MAX_DEPTH + 5);
        assert!(Source::read(&deep).error.unwrap().message.contains("deeper"));
    }
}
