//! The Emacs module: a thin layer that moves text across and turns core
//! errors (and any panic) into `toolspec-error` signals.  What it returns
//! the core makes; this layer only marshals.
//!
//! Values from Lisp cross as text (plists printed by `prin1`, JSON).
//! Results go back one of three ways, each function keeping to one:
//!
//! - Lisp objects, built directly: the imports of `parse-json`,
//!   `read-file` and `openapi-read`, `(TOOLS WARNINGS PATHS PROBLEMS
//!   [KEPT])`, and the plist of a kept tool (`kept-plist`),
//!   through [`crate::module_lisp`], the same [`crate::sink::Sink`] walk
//!   that prints them as text; strings, numbers, conses, lists and
//!   vectors through the `emacs` crate (`version`, `last-import-size`,
//!   `serialized-to-texts`, `document-frame`, `dialect-names`, `locate`,
//!   `locate-many`, `kept-texts`, `safe-names-of`); user pointers
//!   (`compile-args`, and the tools an import kept, see
//!   [`crate::module_lisp::KeptTool`]).
//! - Printed elisp that the Lisp side `read`s, made by the core:
//!   `validate`, `check-args`, `lint-elisp`, `openapi-operations`, and
//!   (in [`crate::module_seeds`]) `gloodata-result` and `result-read`,
//!   which are emitted through a `Sink` as the imports are, so that each
//!   can become Lisp objects by passing the module's sink instead.
//! - JSON text, which the Lisp side sends on or parses: `to-json`,
//!   `serialized-to-json`, `safe-names`, and `gloodata-info`,
//!   `skydeck-document`, `result-envelope`.
//!
//! `gptel-form` returns Emacs Lisp source for a buffer, not data.

use std::panic::{catch_unwind, AssertUnwindSafe};

use emacs::{defun, Env, IntoLisp, Value};

use crate::args::ArgChecker;
use crate::error::{Error, ErrorKind};
use crate::imported::{Format, Imported, ReadOptions};
use crate::model::Tool;
use crate::module_lisp::{KeptTool, Lisp};
use crate::write::Dialect;

emacs::plugin_is_GPL_compatible!();

#[emacs::module(name = "toolspec-module", defun_prefix = "toolspec--mod", separator = "-", mod_in_name = false)]
fn init(_: &Env) -> emacs::Result<()> {
    // A panic is reported to Lisp as `toolspec-internal-error`; keep
    // stderr to one line instead of a backtrace.
    std::panic::set_hook(Box::new(|info| eprintln!("toolspec-module: {info}")));
    Ok(())
}

/// Run `f`, signalling core errors and panics as `toolspec-error` subtypes.
pub(crate) fn run<T, F>(env: &Env, f: F) -> emacs::Result<T>
where
    F: FnOnce() -> crate::Result<T>,
{
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => signal(env, &e),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            env.signal(
                env.intern("toolspec-internal-error")?,
                (format!("internal error in the toolspec module (please report): {msg}"),),
            )
        }
    }
}

/// [`run`], converting the result to a Lisp value.
pub(crate) fn guard<'e, T, F>(env: &'e Env, f: F) -> emacs::Result<Value<'e>>
where
    T: IntoLisp<'e>,
    F: FnOnce() -> crate::Result<T>,
{
    run(env, f)?.into_lisp(env)
}

fn signal<T>(env: &Env, e: &Error) -> emacs::Result<T> {
    let mut details: Vec<Value<'_>> = Vec::new();
    if let Some(p) = &e.path {
        details.push(env.intern(":path")?);
        details.push(p.clone().into_lisp(env)?);
    }
    if let (Some(l), Some(c)) = (e.line, e.column) {
        details.push(env.intern(":line")?);
        details.push((l as i64).into_lisp(env)?);
        details.push(env.intern(":column")?);
        details.push((c as i64).into_lisp(env)?);
    }
    // The message alone, for Lisp to show beside the place it shows
    // its own way: never taken apart from the whole text.
    details.push(env.intern(":message")?);
    details.push(e.message.as_str().into_lisp(env)?);
    let details = env.call("list", &details[..])?;
    env.signal(env.intern(e.kind.symbol())?, (e.to_string(), details))
}

/// Strings from Lisp: a string that is not valid UTF-8 (raw bytes), or
/// no string at all, is a toolspec error, not a module error.
pub(crate) fn text(v: Value<'_>, what: &str) -> crate::Result<String> {
    string_bytes(v).and_then(|b| String::from_utf8(b).map_err(|_| ())).map_err(|_| {
        let string = v.env.call("stringp", [v]).is_ok_and(|p| p.is_not_nil());
        let message = if string {
            format!("{what} is not valid UTF-8 text (it holds raw bytes): decode it first")
        } else {
            let shown = v.env.call("prin1-to-string", [v]).and_then(|s| s.into_rust::<String>()).unwrap_or_default();
            let shown: String = shown.chars().take(60).collect();
            format!("{what} must be a string, not {shown}")
        };
        Error::new(ErrorKind::Json, message)
    })
}

/// The UTF-8 bytes of Lisp string `v`, copied once.  `into_rust`
/// asks Emacs for the length first, which encodes the whole string an
/// extra time (a whole catalog's text in `make bench`,
/// `toolspec-bench-catalog`); the length in Emacs's own encoding, the
/// same as UTF-8's for text, is had without that.
fn string_bytes(v: Value<'_>) -> Result<Vec<u8>, ()> {
    let len = v.env.call("string-bytes", [v]).and_then(|n| n.into_rust::<i64>()).map_err(|_| ())?;
    let mut bytes = vec![0u8; usize::try_from(len).map_err(|_| ())? + 1];
    match v.copy_string_contents(&mut bytes) {
        Ok(copied) => {
            let n = copied.len();
            bytes.truncate(n);
            Ok(bytes)
        }
        // Emacs's encoding is never shorter than the copy's (a raw byte
        // takes two bytes in it, one in the copy), so this is not
        // expected: the crate's way, asking for the length, then decides.
        Err(_) => v.clone_string_contents().map_err(|_| ()),
    }
}

/// The tools of printed plist `v` (one tool plist or a list of them).
pub(crate) fn printed_tools(v: Value<'_>) -> crate::Result<Vec<Tool>> {
    crate::tools_from_elisp(&text(v, "the printed plist")?)
}

pub(crate) fn opt_text(v: Value<'_>) -> Option<String> {
    if v.is_not_nil() {
        v.into_rust::<String>().ok()
    } else {
        None
    }
}

/// Version of the module, compared with the elisp package's.
#[defun]
fn version() -> emacs::Result<&'static str> {
    Ok(crate::VERSION)
}

/// The Lisp condition of every `ErrorKind`, a list of symbols: what
/// lisp/toolspec.el's `toolspec--module-errors` is tested against.
#[defun]
fn error_symbols(env: &Env) -> emacs::Result<Value<'_>> {
    use ErrorKind::*;
    // No wildcard: a new kind does not compile until it is listed here.
    let symbol = |kind: ErrorKind| match kind {
        Json | Shape | UnsupportedFormat | Ref | Limit | Plist | Write | Template | TemplateLimit | Envelope => {
            env.intern(kind.symbol())
        }
    };
    let kinds = [Json, Shape, UnsupportedFormat, Ref, Limit, Plist, Write, Template, TemplateLimit, Envelope];
    let symbols = kinds.into_iter().map(symbol).collect::<emacs::Result<Vec<_>>>()?;
    env.call("list", &symbols)
}

/// The input size limit passed from Lisp (`toolspec-max-input-size`).
fn max_size(max: Value<'_>) -> usize {
    max.into_rust::<i64>().unwrap_or(64 << 20).max(0) as usize
}

/// The value of Lisp variable `name`, when it is bound and not nil.  A
/// quit (or error) of the calls that read it is the caller's: passed on.
fn lisp_variable<'e>(env: &'e Env, name: &str) -> emacs::Result<Option<Value<'e>>> {
    let symbol = env.intern(name)?;
    if !env.call("boundp", [symbol])?.is_not_nil() {
        return Ok(None);
    }
    let v = env.call("symbol-value", [symbol])?;
    Ok(v.is_not_nil().then_some(v))
}

/// The import budget Lisp sets (`toolspec-max-import-size`), if it does.
fn import_limit(env: &Env) -> emacs::Result<Option<usize>> {
    // Not an integer: the default budget.
    Ok(lisp_variable(env, "toolspec-max-import-size")?
        .and_then(|v| v.into_rust::<i64>().ok())
        .map(|n| n.max(0) as usize))
}

/// Whether Lisp asks for something of an import by binding `variable`
/// non-nil, as `toolspec-import-file` binds `toolspec--type-strings`
/// (type names as strings, see [`Lisp::type_strings`]) and
/// `toolspec--keep-tools` (the tools kept, see [`Lisp::keep_tools`]).
fn asked(env: &Env, variable: &str) -> emacs::Result<bool> {
    Ok(lisp_variable(env, variable)?.is_some())
}

/// How much of its budget (`toolspec-max-import-size`) the last import
/// used, in bytes; 0 when asked again before another import.
#[defun]
fn last_import_size() -> emacs::Result<i64> {
    Ok(i64::try_from(crate::budget::last_used()).unwrap_or(i64::MAX))
}

/// What Lisp passed to `parse-json` and `read-file` about the reading:
/// FORMAT (nil for auto), NAME, MAX, VALIDATE and STRICT (refuse the
/// input when one tool in it cannot be read).
struct ImportArgs {
    format: Option<String>,
    name: Option<String>,
    max: usize,
    validate: bool,
    strict: bool,
}

impl ImportArgs {
    fn new(format: Value<'_>, name: Value<'_>, max: Value<'_>, validate: Value<'_>, strict: Value<'_>) -> Self {
        let (validate, strict) = (validate.is_not_nil(), strict.is_not_nil());
        ImportArgs { format: opt_text(format), name: opt_text(name), max: max_size(max), validate, strict }
    }

    fn options(&self) -> crate::Result<ReadOptions<'_>> {
        let format = Format::parse(self.format.as_deref().unwrap_or("auto"))?;
        Ok(ReadOptions { format, default_name: self.name.as_deref(), max_size: self.max, strict: self.strict })
    }

    /// The import of an input of `len` bytes that `read` reads with these
    /// options, within the import budget, as [`streamed`] returns it.
    fn import<'e>(
        &self,
        env: &'e Env,
        len: usize,
        read: impl FnOnce(&ReadOptions, &mut dyn FnMut(Tool, String), &mut dyn FnMut()) -> crate::Result<Imported> + Send,
    ) -> emacs::Result<Value<'e>> {
        crate::budget::within(import_limit(env)?, || {
            streamed(env, self.validate, len >= crate::par::BIG, |each, restart| read(&self.options()?, each, restart))
        })
    }
}

/// Parse JSON TEXT in FORMAT (a string or nil); NAME names a bare schema.
/// Returns `(TOOLS WARNINGS PATHS PROBLEMS)`, PROBLEMS only when VALIDATE.
/// A tool that cannot be read is left out, an error among the WARNINGS,
/// unless STRICT.
#[defun]
fn parse_json<'e>(
    env: &'e Env,
    text: Value<'e>,
    format: Value<'e>,
    name: Value<'e>,
    max: Value<'e>,
    validate: Value<'e>,
    strict: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let args = ImportArgs::new(format, name, max, validate, strict);
    let text = run(env, || self::text(text, "the JSON text"))?;
    // A byte order mark is left out, as the command line reads it.
    let s = text.strip_prefix('\u{feff}').unwrap_or(&text);
    args.import(env, s.len(), |opts, each, restart| crate::read::read_str_each(s, opts, each, restart))
}

/// An import as the list `(TOOLS WARNINGS PATHS PROBLEMS)` (PROBLEMS
/// has the problems of each tool, see `toolspec-validate`, when
/// `validate`, else it is nil), from `read`, which hands each tool and its
/// path over as it is read.  For a `big` input, tools are read and
/// checked on other threads while the Lisp objects of those read so far
/// are made here; `C-g` then stops the import at once and quits.
fn streamed<'e>(
    env: &'e Env,
    validate: bool,
    big: bool,
    read: impl FnOnce(&mut dyn FnMut(Tool, String), &mut dyn FnMut()) -> crate::Result<Imported> + Send,
) -> emacs::Result<Value<'e>> {
    let mut sink = Lisp::new(env)?;
    if asked(env, "toolspec--type-strings")? {
        sink.type_strings();
    }
    if asked(env, "toolspec--keep-tools")? {
        sink.keep_tools();
    }
    // Stopped by a `C-g` seen while waiting for tools, or by the first
    // Lisp call that failed (a `C-g` seen by that call is its error).
    let failed = sink.failed();
    let quit = std::cell::Cell::new(false);
    let mut stop = || {
        quit.set(quit.get() || quit_asked(env));
        quit.get() || failed.get()
    };
    let made = run(env, || Ok(crate::emit_streamed_import_until(read, validate, big, &mut sink, &mut stop)))?;
    if quit.get() {
        let nothing: [Value<'_>; 0] = [];
        return env.signal(env.intern("quit")?, nothing);
    }
    run(env, || made)?;
    sink.finish()
}

/// Whether the user asked to quit (`C-g`) since Emacs last looked: its
/// pending input is processed (`process_input`, Emacs 27 and later).
/// When it is, the quit Emacs left pending is cleared, so that the
/// module can stop its threads before the caller signals `quit'.
fn quit_asked(env: &Env) -> bool {
    // emacs-module.h: `emacs_process_input_quit'.
    const QUIT: u32 = 1;
    let raw = env.raw();
    // SAFETY: `raw` is the environment Emacs gave this call, valid for
    // its whole length, on this (Emacs's) thread; the module is built
    // for Emacs 28's environment, which has both functions.
    unsafe {
        match ((*raw).process_input, (*raw).non_local_exit_clear) {
            (Some(process_input), Some(clear)) if process_input(raw) == QUIT => {
                clear(raw);
                true
            }
            _ => false,
        }
    }
}

/// Read FILE and parse it like `parse-json`.
#[defun]
fn read_file<'e>(
    env: &'e Env,
    file: Value<'e>,
    format: Value<'e>,
    name: Value<'e>,
    max: Value<'e>,
    validate: Value<'e>,
    strict: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let args = ImportArgs::new(format, name, max, validate, strict);
    let bytes = run(env, || source_bytes(file, true, args.max))?;
    args.import(env, bytes.len(), |opts, each, restart| crate::read::read_bytes_each(&bytes, opts, each, restart))
}

/// Convert printed tool plist(s) TEXT to JSON in DIALECT.  MANY non-nil
/// writes a document of many tools; PRETTY indents.
#[defun]
fn to_json<'e>(
    env: &'e Env,
    text: Value<'e>,
    dialect: Value<'e>,
    many: Value<'e>,
    pretty: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let many = many.is_not_nil();
    let pretty = pretty.is_not_nil();
    guard(env, || {
        let dialect = self::text(dialect, "the dialect name")?;
        let s = self::text(text, "the printed plist")?;
        crate::elisp_to_json(&s, Dialect::parse(&dialect)?, many, pretty)
    })
}

/// Convert TEXT, tool plists serialised by `json-serialize` (see
/// `serialized_plists_to_json`), to a JSON document in DIALECT.
#[defun]
fn serialized_to_json<'e>(
    env: &'e Env,
    text: Value<'e>,
    dialect: Value<'e>,
    pretty: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let pretty = pretty.is_not_nil();
    guard(env, || {
        let dialect = self::text(dialect, "the dialect name")?;
        let s = self::text(text, "the serialised plists")?;
        crate::serialized_plists_to_json(&s, Dialect::parse(&dialect)?, pretty)
    })
}

/// The compact JSON text in DIALECT of each tool plist serialised in
/// TEXT (see `serialized-to-json`), as a list of strings, and the value
/// of BESIDE: `(TEXTS . VALUE)`.  BESIDE, a function of no arguments, is
/// called on Emacs's thread while the texts are written on others; once
/// it returns, Emacs's thread writes texts too, until none are left.
///
/// A text beyond ASCII is a multibyte string; an ASCII one is a unibyte
/// string, made without Emacs decoding it as UTF-8, for the caller to
/// make multibyte with `string-to-multibyte', a copy that costs about
/// two thirds of the decoding (`make bench`, `toolspec-bench-export`).
/// The texts are kept multibyte to be joined into documents: `concat'
/// copies a unibyte string into a multibyte result (one text not ASCII
/// makes it so) byte by byte, far slower than it copies a multibyte one.
#[defun]
fn serialized_to_texts<'e>(
    env: &'e Env,
    text: Value<'e>,
    dialect: Value<'e>,
    beside: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let (s, dialect) = run(env, || {
        let dialect = Dialect::parse(&self::text(dialect, "the dialect name")?)?;
        Ok((self::text(text, "the serialised plists")?, dialect))
    })?;
    let (value, texts) = run(env, || Ok(crate::serialized_plists_to_texts_beside(&s, dialect, || beside.call([]))))?;
    let value = value?;
    let texts = run(env, || texts)?;
    env.cons(lisp_texts(env, &texts)?, value)
}

/// The compact JSON text in DIALECT of each tool of KEPT, a vector of
/// tools an import kept (see `streamed`), written under the name at the
/// same place in NAMES, a vector of strings: a list of strings, made as
/// `serialized-to-texts` makes them.
#[defun]
fn kept_texts<'e>(env: &'e Env, kept: Value<'e>, names: Value<'e>, dialect: Value<'e>) -> emacs::Result<Value<'e>> {
    let texts = run(env, || {
        let dialect = Dialect::parse(&self::text(dialect, "the dialect name")?)?;
        kept_named(kept, names, |pairs| crate::named_tools_to_texts(pairs, dialect))
    })?;
    lisp_texts(env, &texts)
}

/// The JSON document in DIALECT of the tools of KEPT, each written under
/// the name at its place in NAMES (see `kept-texts`); indented when
/// PRETTY.
#[defun]
fn kept_to_json<'e>(
    env: &'e Env,
    kept: Value<'e>,
    names: Value<'e>,
    dialect: Value<'e>,
    pretty: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let pretty = pretty.is_not_nil();
    guard(env, || {
        let dialect = Dialect::parse(&self::text(dialect, "the dialect name")?)?;
        kept_named(kept, names, |pairs| crate::named_tools_to_json(pairs, dialect, pretty))
    })
}

/// The plist of KEPT, a tool an import kept (see `streamed`), as that
/// import made it: its type names strings, which `json-serialize` takes.
#[defun]
fn kept_plist<'e>(env: &'e Env, kept: Value<'e>) -> emacs::Result<Value<'e>> {
    let kept = run(env, || kept_tool(kept))?;
    let mut sink = Lisp::new(env)?;
    sink.type_strings();
    crate::plist::emit_tool(&kept.0, &mut sink);
    sink.finish()
}

/// `f` of the kept tools of vector KEPT, each with the name at its
/// place in vector NAMES.
fn kept_named<T>(
    kept: Value<'_>,
    names: Value<'_>,
    f: impl FnOnce(&[(&Tool, &str)]) -> crate::Result<T>,
) -> crate::Result<T> {
    let (kept, names) = (kept_tools(kept)?, texts_of(names, "the names")?);
    if kept.len() != names.len() {
        return Err(Error::new(ErrorKind::Plist, "expected as many names as kept tools"));
    }
    f(&kept.iter().zip(&names).map(|(k, n)| (&k.0, n.as_str())).collect::<Vec<_>>())
}

/// The kept tool `v` holds, or an error saying it is none.
fn kept_tool(v: Value<'_>) -> crate::Result<&KeptTool> {
    v.into_rust::<&KeptTool>().map_err(|_| Error::new(ErrorKind::Plist, "expected a tool an import kept"))
}

/// The kept tools of vector `v` (see [`kept_tool`]).
fn kept_tools(v: Value<'_>) -> crate::Result<Vec<&KeptTool>> {
    vector_items(v, || "expected a vector of kept tools".into(), |_, item| kept_tool(item))
}

/// The strings of vector `v`, `what` in an error.
fn texts_of(v: Value<'_>, what: &str) -> crate::Result<Vec<String>> {
    vector_items(
        v,
        || format!("{what} must be a vector of strings"),
        // The item named only when it is wrong.
        |i, s| self::text(s, what).or_else(|_| self::text(s, &format!("item {i} of {what}"))),
    )
}

/// `f` of each item of Lisp vector `v`, with its index; `wrong` says
/// what `v` should have been, when it is not a vector.
fn vector_items<'e, T>(
    v: Value<'e>,
    wrong: impl Fn() -> String,
    mut f: impl FnMut(usize, Value<'e>) -> crate::Result<T>,
) -> crate::Result<Vec<T>> {
    let not_vector = || Error::new(ErrorKind::Plist, wrong());
    let v = v.into_rust::<emacs::Vector>().map_err(|_| not_vector())?;
    (0..v.len()).map(|i| v.get::<Value<'e>>(i).map_err(|_| not_vector()).and_then(|item| f(i, item))).collect()
}

/// TEXTS as a Lisp list of strings, each made by
/// [`crate::module_lisp::lisp_text`] (see `serialized-to-texts`).
fn lisp_texts<'e>(env: &'e Env, texts: &[String]) -> emacs::Result<Value<'e>> {
    let texts = texts.iter().map(|t| crate::module_lisp::lisp_text(env, t)).collect::<emacs::Result<Vec<_>>>()?;
    env.call("list", &texts[..])
}

/// What comes before and after the tools in the compact JSON document of
/// DIALECT: `(OPEN . CLOSE)`, the tools' texts between them separated by
/// commas.
#[defun]
fn document_frame<'e>(env: &'e Env, dialect: Value<'e>) -> emacs::Result<Value<'e>> {
    let (open, close) =
        run(env, || Ok(crate::write::document_frame(Dialect::parse(&self::text(dialect, "the dialect name")?)?)))?;
    env.cons(open, close)
}

/// The names of the JSON dialects toolspec writes, a list of strings in
/// the registry's order (see `crate::formats`).
#[defun]
fn dialect_names(env: &Env) -> emacs::Result<Value<'_>> {
    let names = crate::formats::names().into_iter().map(|n| n.into_lisp(env)).collect::<emacs::Result<Vec<_>>>()?;
    env.call("list", &names[..])
}

/// NAMES, a JSON array of tool names (of one document or registration),
/// made valid under RULE (a dialect name, or "gptel" for names every
/// gptel backend takes) and different from each other: a JSON array as
/// long as NAMES, null for a name kept, else its new name; or null when
/// every name is kept.
#[defun]
fn safe_names<'e>(env: &'e Env, names: Value<'e>, rule: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let rule = crate::formats::name_rule(&self::text(rule, "the name rule")?)?;
        crate::formats::safe_names_json(&self::text(names, "the tool names")?, &rule)
    })
}

/// NAMES, a vector of tool names (strings), made valid under RULE and
/// different from each other (see `crate::formats::safe_names`): a list
/// as long as NAMES, nil for a name kept, else its new name; nil when
/// every name is kept.  As `safe-names`, without the JSON both ways: for
/// a registration of thousands of tools, that text was a third of what
/// the renaming allocated (bench/history.md, round 26).
#[defun]
fn safe_names_of<'e>(env: &'e Env, names: Value<'e>, rule: Value<'e>) -> emacs::Result<Value<'e>> {
    let safe = run(env, || {
        let rule = crate::formats::name_rule(&self::text(rule, "the name rule")?)?;
        let names = texts_of(names, "the tool names")?;
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(crate::formats::safe_names(&refs, &rule))
    })?;
    if safe.iter().all(Option::is_none) {
        return ().into_lisp(env);
    }
    let nil = ().into_lisp(env)?;
    let items = safe
        .iter()
        .map(|n| n.as_deref().map_or(Ok(nil), |n| crate::module_lisp::lisp_text(env, n)))
        .collect::<emacs::Result<Vec<_>>>()?;
    env.call("list", &items[..])
}

/// Validate a printed tool plist; returns elisp text of the problems.
#[defun]
fn validate<'e>(env: &'e Env, text: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let s = self::text(text, "the printed plist")?;
        let problems = crate::validate_elisp(&s)?;
        let mut out = String::new();
        crate::print_problems(&problems, &mut out);
        Ok(out)
    })
}

/// Compile a checker for the arguments of the tool in printed plist TEXT.
#[defun(user_ptr)]
fn compile_args(env: &Env, text: Value<'_>) -> emacs::Result<ArgChecker> {
    run(env, || {
        let tools = printed_tools(text)?;
        let tool = tools.first().ok_or_else(|| Error::new(ErrorKind::Plist, "no tool given"))?;
        ArgChecker::new(tool)
    })
}

/// Check ARGS with CHECKER; returns elisp text of the problems (each path
/// an argument path).  ARGS is a JSON object text when KIND is `json`,
/// printed Lisp values otherwise: the list of positional values when KIND
/// is `positional`, one object (plist or alist) when it is `object`.
#[defun]
fn check_args<'e>(env: &'e Env, checker: &ArgChecker, args: Value<'e>, kind: Value<'e>) -> emacs::Result<Value<'e>> {
    let kind = kind.into_rust::<String>().unwrap_or_default();
    guard(env, || {
        let s = self::text(args, "the arguments")?;
        let problems = match kind.as_str() {
            "json" => checker.check_text(&s)?,
            "positional" => checker.check_lisp(&s, true)?,
            _ => checker.check_lisp(&s, false)?,
        };
        let mut out = String::new();
        crate::print_problems(&problems, &mut out);
        Ok(out)
    })
}

/// Line and column of PATH in JSON TEXT, as a cons.
#[defun]
fn locate<'e>(env: &'e Env, text: Value<'e>, path: Value<'e>) -> emacs::Result<Value<'e>> {
    let s = self::text(text, "the JSON text").unwrap_or_default();
    let path = self::text(path, "the path").unwrap_or_default();
    let (line, column) = crate::locate::locate(&s, &path);
    env.cons(line as i64, column as i64)
}

/// Line and column of each path of the vector PATHS in JSON TEXT, as a
/// vector of conses: one pass over TEXT finds them all.
#[defun]
fn locate_many<'e>(env: &'e Env, text: Value<'e>, paths: Value<'e>) -> emacs::Result<Value<'e>> {
    let s = self::text(text, "the JSON text").unwrap_or_default();
    let paths = run(env, || {
        let not_strings = || Error::new(ErrorKind::Shape, "the paths to locate must be a vector of strings");
        let v: emacs::Vector = paths.into_rust().map_err(|_| not_strings())?;
        (0..v.len())
            .map(|i| {
                let p: Value = v.get(i).map_err(|_| not_strings())?;
                match p.env.call("stringp", [p]) {
                    Ok(s) if s.is_not_nil() => self::text(p, "a path"),
                    _ => Err(not_strings()),
                }
            })
            .collect::<crate::Result<Vec<String>>>()
    })?;
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let places = crate::locate::locate_many(&s, &refs);
    let out = env.make_vector(places.len(), ())?;
    for (i, (line, column)) in places.into_iter().enumerate() {
        out.set(i, env.cons(line as i64, column as i64)?)?;
    }
    Ok(out.value())
}

/// Check the tool definitions in Emacs Lisp source TEXT; returns elisp
/// text `((SEVERITY LINE COLUMN PATH MESSAGE) ...)`, SEVERITY `error',
/// `warning' or `note', an unreadable TEXT an error at its place.
#[defun]
fn lint_elisp<'e>(env: &'e Env, text: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let s = self::text(text, "the Lisp text")?;
        Ok(crate::check::diagnostics_to_elisp(&crate::check::check_elisp(&s).diagnostics))
    })
}

/// Source text of a `gptel-make-tool' form for the tool in printed plist
/// TEXT: FUNCTION is the text of its `:function' ("" for `#'ignore'),
/// CATEGORY a string or nil, COMMENTS non-nil to precede it with comments.
#[defun]
fn gptel_form<'e>(
    env: &'e Env,
    text: Value<'e>,
    function: Value<'e>,
    category: Value<'e>,
    comments: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let function = opt_text(function).unwrap_or_default();
    let category = opt_text(category);
    let comments = comments.is_not_nil();
    guard(env, || {
        let opts = crate::gptel_form::FormOptions {
            function: &function,
            category: category.as_deref(),
            comments,
            define: comments,
        };
        crate::gptel_form::gptel_form_of_text(&self::text(text, "the printed plist")?, &opts)
    })
}

/// A file of `len` bytes is refused beyond `max`.  The caller names the
/// file (the Lisp wrappers put its name first).
fn file_size_fits(len: u64, max: usize) -> crate::Result<()> {
    if len > max as u64 {
        return Err(Error::new(
            ErrorKind::Limit,
            format!("the file is {len} bytes, more than the limit of {max} bytes: raise `toolspec-max-input-size' to read it"),
        ));
    }
    Ok(())
}

/// The bytes of SOURCE: the (OpenAPI) text itself, or the file it names
/// when FILE-P; refused beyond MAX bytes.  A leading byte order mark is
/// left out.
fn source_bytes(source: Value<'_>, file_p: bool, max: usize) -> crate::Result<Vec<u8>> {
    if !file_p {
        let s = self::text(source, "the OpenAPI text")?;
        crate::openapi::check_size(s.len(), max)?;
        return Ok(without_bom(s.into_bytes()));
    }
    let file = self::text(source, "the file name")?;
    let meta =
        std::fs::metadata(&file).map_err(|e| Error::new(ErrorKind::Shape, format!("cannot read {file}: {e}")))?;
    file_size_fits(meta.len(), max)?;
    let bytes = crate::alloc::read_file(file.as_ref())
        .map_err(|e| Error::new(ErrorKind::Shape, format!("cannot read {file}: {e}")))?;
    Ok(without_bom(bytes))
}

/// BYTES without a leading UTF-8 byte order mark, as the command line
/// reads them.
fn without_bom(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    bytes
}

/// Import operations of the OpenAPI document SOURCE (JSON or YAML text,
/// or a file name when FILE-P) as tools.  OPTIONS is nil or a JSON object
/// text `{"tags", "paths", "operations", "server"}` selecting them.
/// Returns `(TOOLS WARNINGS PATHS PROBLEMS)` as `parse-json` does.
#[defun]
fn openapi_read<'e>(
    env: &'e Env,
    source: Value<'e>,
    file_p: Value<'e>,
    options: Value<'e>,
    max: Value<'e>,
    validate: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let file_p = file_p.is_not_nil();
    let options = opt_text(options);
    let max = max_size(max);
    let (doc, opts) = run(env, || {
        let opts = match options.as_deref() {
            Some(o) => crate::openapi::OpenApiOptions::from_json(o)?,
            None => crate::openapi::OpenApiOptions::default(),
        };
        let bytes = source_bytes(source, file_p, max)?;
        Ok((crate::openapi::parse_bytes(bytes, max)?, opts))
    })?;
    // The operations are read and checked on other threads while the
    // Lisp objects of the tools read so far are made here.
    let out = crate::budget::within(import_limit(env)?, || {
        streamed(env, validate.is_not_nil(), doc.big, |each, _| {
            doc.read_each(&opts, &mut crate::alloc::releasing(each))
        })
    });
    doc.free_later();
    out
}

/// The operations of the OpenAPI document SOURCE (as for `openapi-read`),
/// as elisp text: a list of plists (:name :method :path :tags
/// :operationId :summary :deprecated).
#[defun]
fn openapi_operations<'e>(
    env: &'e Env,
    source: Value<'e>,
    file_p: Value<'e>,
    max: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let file_p = file_p.is_not_nil();
    let max = max_size(max);
    guard(env, || {
        let bytes = source_bytes(source, file_p, max)?;
        let text = crate::error::check_utf8(&bytes)?;
        crate::openapi::operations_of_text(text).map(|ops| crate::openapi::operations_to_elisp(&ops))
    })
}

/// Panic on purpose (debug builds only), to test that a panic reaches
/// Lisp as a `toolspec-error` and Emacs goes on.
#[cfg(debug_assertions)]
#[defun]
fn debug_panic(env: &Env) -> emacs::Result<Value<'_>> {
    guard(env, || -> crate::Result<()> { panic!("deliberate panic for testing") })
}
