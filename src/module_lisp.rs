//! Plists built as Lisp objects, for the module's results: the walk over
//! the model is [`crate::plist`]'s, this is only its [`Sink`] for Emacs.
//!
//! Building the objects through module calls (symbols interned once per
//! call, lists and vectors made by one call each) is faster than printing
//! elisp text for `read` and reading it back.

use std::cell::Cell;
use std::rc::Rc;

use emacs::{Env, IntoLisp, Transfer, Value};
use serde_json::Number;

use crate::model::{FastMap, Tool};
use crate::plist::Sink;

/// A tool an import kept (see [`Lisp::keep_tools`]), held by a user
/// pointer: Lisp gives it back to write the tool in a dialect, or to make
/// its plist again, without a plist of its own to copy and keep.
pub(crate) struct KeptTool(pub(crate) Tool);

impl Transfer for KeptTool {
    fn type_name() -> &'static str {
        "toolspec kept tool"
    }
}

/// Emacs frees a kept tool while it collects garbage: the tool is freed
/// on another thread ([`crate::par::free_later`]).
impl Drop for KeptTool {
    fn drop(&mut self) {
        crate::par::free_later(std::mem::take(&mut self.0));
    }
}

emacs::use_functions! {
    lisp_list => "list"
    lisp_vector => "vector"
    lisp_intern => "intern"
    lisp_string_to_number => "string-to-number"
    lisp_put_text_property => "put-text-property"
}

/// A list apart ([`Sink::side`]): its items, and its open lists as
/// [`Lisp`]'s `open` has them.
type Side<'e> = (Vec<Value<'e>>, Vec<(bool, usize)>);

/// How many coded strings [`Lisp`] keeps to make again by reference: more
/// than the few messages a file repeats, few enough that messages naming
/// each tool (said once each) cost little to look up.  When full it
/// starts again empty.
const CODED_KEPT: usize = 512;

/// The longest text, in bytes, that [`Lisp`] makes one string of for all
/// the places it is made for.  Short texts repeat: argument names
/// ("location" 411 times in BFCL's catalog), enum values, problems'
/// paths ("name" 1,933 times), the key names of the records of key order
/// (1,555 of that catalog's tools record theirs), type names.  Of the
/// 46,910 strings an import of that catalog made, 22,682 are of 16 bytes
/// or fewer, and 14,711 of those repeat one made before; shared, the
/// import makes that many fewer objects, and the collections after it
/// trace that many fewer (bench/history.md, round 25).  Longer texts
/// rarely repeat.
const SHORT: usize = 16;

/// The Lisp string of `s`: unibyte when it is ASCII, made without Emacs
/// decoding it (see [`Sink::string`] for `Lisp`).
pub(crate) fn lisp_text<'e>(env: &'e Env, s: &str) -> emacs::Result<Value<'e>> {
    if s.is_ascii() {
        s.as_bytes().into_lisp(env)
    } else {
        s.into_lisp(env)
    }
}

/// A text of at most [`SHORT`] bytes, as a key kept without allocating.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Short {
    len: u8,
    bytes: [u8; SHORT],
}

impl Short {
    fn of(s: &str) -> Option<Short> {
        let b = s.as_bytes();
        (b.len() <= SHORT).then(|| {
            let mut bytes = [0; SHORT];
            bytes[..b.len()].copy_from_slice(b);
            Short { len: b.len() as u8, bytes }
        })
    }
}

/// An empty list apart, open from the start: what is emitted to it never
/// reaches [`Lisp`]'s `done`.
fn new_side<'e>() -> Side<'e> {
    (Vec::new(), vec![(false, 0)])
}

/// A [`Sink`] making Lisp objects in `env`.  The first failing module
/// call is kept and reported by [`Lisp::finish`]; nil stands for what
/// could not be made.
pub(crate) struct Lisp<'e> {
    env: &'e Env,
    /// The items of every open list or vector, innermost last, in one
    /// stack (no allocation per list)...
    items: Vec<Value<'e>>,
    /// ...and where each open one begins in it, and whether it is a vector.
    open: Vec<(bool, usize)>,
    done: Vec<Value<'e>>,
    /// Symbols made so far, and keywords by their name without colon.
    symbols: FastMap<String, Value<'e>>,
    keywords: FastMap<String, Value<'e>>,
    /// The short strings made so far (see [`SHORT`]).
    short: FastMap<Short, Value<'e>>,
    /// Whether type names are made strings (see [`Lisp::type_strings`]).
    type_strings: bool,
    /// Whether the tools emitted are kept (see [`Lisp::keep_tools`]).
    keep_tools: bool,
    /// Coded strings made so far, by code, then by text: a catalog's
    /// thousands of warnings say the same few things ("non-standard type
    /// name \"dict\" read as \"object\"" 4,519 times in BFCL's), and
    /// one string serves them all.  At most [`CODED_KEPT`] are kept;
    /// `coded_count` says how many.
    coded: FastMap<String, FastMap<String, Value<'e>>>,
    coded_count: usize,
    /// The lists apart ([`Sink::side`]): each one's items and open lists,
    /// swapped with `items` and `open` while it is the one emitted to.
    sides: Vec<Side<'e>>,
    nil: Value<'e>,
    t: Value<'e>,
    error: Option<emacs::Error>,
    /// Set with `error`, for whoever makes the items to stop: a `C-g`
    /// quits the first Lisp call after it (`list`, say), and is kept as
    /// that call's error.
    failed: Rc<Cell<bool>>,
}

impl<'e> Lisp<'e> {
    pub(crate) fn new(env: &'e Env) -> emacs::Result<Self> {
        Ok(Lisp {
            env,
            items: Vec::new(),
            open: Vec::new(),
            done: Vec::new(),
            symbols: FastMap::default(),
            keywords: FastMap::default(),
            short: FastMap::default(),
            type_strings: false,
            keep_tools: false,
            coded: FastMap::default(),
            coded_count: 0,
            sides: Vec::new(),
            nil: env.intern("nil")?,
            t: env.intern("t")?,
            error: None,
            failed: Rc::default(),
        })
    }

    /// Make type names strings (`:type "string"`), one string for each
    /// name, instead of symbols: what `gptel-make-tool' turns the symbols
    /// into, in place, walking every tool's args.  Tools read to be
    /// registered are made so, and gptel's walk is left out (`make
    /// bench`, `toolspec-bench-register`; bench/history.md, round 25).
    pub(crate) fn type_strings(&mut self) {
        self.type_strings = true;
    }

    /// Keep each tool emitted, a [`KeptTool`]: an import then ends with
    /// a fifth list, of them (see [`crate::emit_streamed_import`]).
    pub(crate) fn keep_tools(&mut self) {
        self.keep_tools = true;
    }

    /// Whether a module call has failed (see [`Lisp::finish`]), as a flag
    /// that stays true once it is.
    pub(crate) fn failed(&self) -> Rc<Cell<bool>> {
        self.failed.clone()
    }

    fn push(&mut self, v: emacs::Result<Value<'e>>) {
        let v = v.unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            self.failed.set(true);
            self.nil
        });
        if self.open.is_empty() {
            self.done.push(v);
        } else {
            self.items.push(v);
        }
    }

    /// The symbol named `name`, from `cache` or interned and kept there.
    fn intern(
        env: &'e Env,
        cache: &mut FastMap<String, Value<'e>>,
        key: &str,
        name: impl FnOnce() -> String,
    ) -> emacs::Result<Value<'e>> {
        if let Some(v) = cache.get(key) {
            return Ok(*v);
        }
        let name = name();
        // The module's `intern` takes a C string: other names (NUL,
        // non-ASCII) go through Lisp's `intern`.
        let v = if name.is_ascii() && !name.contains('\0') {
            env.intern(&name)?
        } else {
            lisp_intern.call(env, (name.as_str(),))?
        };
        cache.insert(key.to_string(), v);
        Ok(v)
    }

    /// The value emitted last at the top level.
    pub(crate) fn finish(mut self) -> emacs::Result<Value<'e>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        Ok(self.done.pop().unwrap_or(self.nil))
    }
}

impl<'a> Sink<'a> for Lisp<'_> {
    fn open(&mut self, vector: bool) {
        self.open.push((vector, self.items.len()));
    }
    fn close(&mut self) {
        if let Some((is_vector, start)) = self.open.pop() {
            let items = &self.items[start..];
            let v = if is_vector {
                lisp_vector.call(self.env, items)
            } else if items.is_empty() {
                // The empty list is nil: no call (a tool without problems).
                Ok(self.nil)
            } else {
                lisp_list.call(self.env, items)
            };
            self.items.truncate(start);
            self.push(v);
        }
    }
    fn string(&mut self, s: &str) {
        // Emacs makes a string from UTF-8 (`make_string`) by making a
        // unibyte string of the bytes, then decoding it into a second:
        // twice the allocation, and for an import of thousands of tools,
        // a garbage collection that would not have come.  Text of ASCII
        // only is made unibyte at once, as the Lisp reader makes ASCII
        // string literals: `equal', `string=' and every use take it as
        // the same text.
        //
        // A short text is made once and shared: see [`SHORT`].
        let v = match Short::of(s) {
            Some(key) => match self.short.get(&key) {
                Some(v) => Ok(*v),
                None => {
                    let v = lisp_text(self.env, s);
                    if let Ok(v) = v {
                        self.short.insert(key, v);
                    }
                    v
                }
            },
            None => lisp_text(self.env, s),
        };
        self.push(v);
    }
    fn coded_string(&mut self, s: &str, code: &str) {
        if s.is_empty() {
            return self.string(s);
        }
        if let Some(v) = self.coded.get(code).and_then(|texts| texts.get(s)) {
            let v = Ok(*v);
            return self.push(v);
        }
        let text = lisp_text(self.env, s);
        let key = Self::intern(self.env, &mut self.symbols, "toolspec-code", || "toolspec-code".to_string());
        let code_symbol = Self::intern(self.env, &mut self.symbols, code, || code.to_string());
        // The property put on the string just made: `propertize` would
        // copy it first, for each of an import's thousands of problems.
        let v = (|| {
            let text = text?;
            lisp_put_text_property.call(self.env, (0, s.chars().count(), key?, code_symbol?, text))?;
            Ok(text)
        })();
        if let Ok(v) = &v {
            if self.coded_count == CODED_KEPT {
                self.coded.clear();
                self.coded_count = 0;
            }
            match self.coded.get_mut(code) {
                Some(texts) => {
                    texts.insert(s.to_string(), *v);
                }
                None => {
                    let mut texts = FastMap::default();
                    texts.insert(s.to_string(), *v);
                    self.coded.insert(code.to_string(), texts);
                }
            }
            self.coded_count += 1;
        }
        self.push(v);
    }
    fn keyword(&mut self, name: &str) {
        // Keywords repeat in every plist: found by name, the `:name`
        // string is made only the first time.
        let v = Self::intern(self.env, &mut self.keywords, name, || format!(":{name}"));
        self.push(v);
    }
    fn symbol(&mut self, name: &str) {
        let v = Self::intern(self.env, &mut self.symbols, name, || name.to_string());
        self.push(v);
    }
    fn type_name(&mut self, name: &str) {
        // One string for each name, as a short text.
        if self.type_strings {
            self.string(name)
        } else {
            self.symbol(name)
        }
    }
    fn number(&mut self, n: &Number) {
        let v = if let Some(i) = n.as_i64() {
            i.into_lisp(self.env)
        } else if n.is_u64() {
            // Beyond a fixnum: Emacs makes the bignum.
            lisp_string_to_number.call(self.env, (n.to_string(),))
        } else {
            n.as_f64().unwrap_or(0.0).into_lisp(self.env)
        };
        self.push(v);
    }
    fn nil(&mut self) {
        let v = Ok(self.nil);
        self.push(v);
    }
    fn t(&mut self) {
        let v = Ok(self.t);
        self.push(v);
    }
    fn clear_open(&mut self) {
        if let Some((_, start)) = self.open.last() {
            self.items.truncate(*start);
        }
    }
    fn side(&mut self, k: usize) -> bool {
        if self.sides.len() <= k {
            self.sides.resize_with(k + 1, new_side);
        }
        let (items, open) = &mut self.sides[k];
        std::mem::swap(&mut self.items, items);
        std::mem::swap(&mut self.open, open);
        true
    }
    fn keeps_tools(&self) -> bool {
        self.keep_tools
    }
    fn keep_tool(&mut self, tool: Tool) {
        let v = Box::new(KeptTool(tool)).into_lisp(self.env);
        self.push(v);
    }
    fn side_list(&mut self, k: usize) {
        // Emitted and forgotten: the list apart starts again empty.
        let Some((items, _)) = self.sides.get_mut(k).map(|side| std::mem::replace(side, new_side())) else {
            return self.nil();
        };
        let v = if items.is_empty() { Ok(self.nil) } else { lisp_list.call(self.env, &items[..]) };
        self.push(v);
    }
}
