//! toolspec: LLM tool definitions between JSON formats and the gptel/llm
//! plist format.
//!
//! Data flows one way: a reader turns input (JSON in some format, or a
//! plist printed by Emacs) into the format-neutral [`model::Tool`]; the
//! validator checks plists; a writer turns tools into a JSON dialect or
//! into elisp text.  The `module` module (private) is the thin Emacs layer
//! over this core.

pub mod args;
pub mod budget;
pub mod check;
pub mod elisp_source;
pub mod elisp_tools;
pub mod error;
pub mod formats;
pub use formats::gemini;
pub mod gptel_form;
pub mod locate;
pub mod model;
pub mod node;
pub mod openapi;
pub mod par;
pub mod path;
pub mod plist;
pub mod read;
pub mod scan;
pub mod schema;
pub mod template;
pub mod validate;
pub mod value;
pub mod write;

// Formats that say how a tool runs, and tool result envelopes.
pub mod arcade;
pub mod envelope;
pub mod gloodata;
pub mod lenient;
pub mod seeds;
pub mod skydeck;

mod module;
mod module_lisp;
mod module_seeds;

pub use error::{Error, ErrorKind, Result};

#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::Allocator;

/// The allocator: mimalloc (or the system's, without the `mimalloc`
/// feature), with a hook for when memory runs out.
pub mod alloc {
    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::OnceLock;

    #[cfg(feature = "mimalloc")]
    use mimalloc::MiMalloc as Inner;
    #[cfg(not(feature = "mimalloc"))]
    use std::alloc::System as Inner;

    /// What to do when an allocation fails, instead of returning null
    /// (after which Rust aborts with a message of its own).
    static ON_FAILURE: OnceLock<fn(Layout)> = OnceLock::new();

    /// Call `hook` when an allocation fails; it should end the process
    /// (say, with `libc::_exit`) without allocating.  Set once: `toolspec
    /// render`, under a memory limit, reports reaching it this way.
    pub fn on_failure(hook: fn(Layout)) {
        let _ = ON_FAILURE.set(hook);
    }

    #[cold]
    fn failed(layout: Layout) {
        if let Some(hook) = ON_FAILURE.get() {
            hook(layout);
        }
    }

    /// mimalloc 3's `mi_option_arena_eager_commit` (mimalloc.h).
    #[cfg(all(feature = "mimalloc", target_os = "linux"))]
    const ARENA_EAGER_COMMIT: std::os::raw::c_int = 4;

    #[cfg(feature = "mimalloc")]
    extern "C" {
        fn mi_collect(force: bool);
    }

    /// Give the memory freed so far back to the system, now rather than
    /// after mimalloc's delay (a millisecond or two): called after freeing
    /// a large document, before more is made, it lowers the peak.
    pub fn release() {
        #[cfg(feature = "mimalloc")]
        // SAFETY: mimalloc's own collection of this thread's free memory.
        unsafe {
            mi_collect(true)
        }
    }

    /// The bytes of the file at `path`.  The memory of a large file's
    /// bytes is advised for transparent huge pages while the file is read
    /// into it: faulting GitHub's description (13 MB) in 4 KiB at a time
    /// was most of the 7 ms its read took, in 2 MiB pages it takes about
    /// 3 ms.  The advice is withdrawn once the file is read, so that the
    /// memory, freed and reused for small allocations, is faulted in
    /// small pages again (see `configure`).
    pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut file = std::fs::File::open(path)?;
        let len = file.metadata().map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX));
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(len).map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        let huge = advise_huge_pages(&mut bytes);
        let read = file.read_to_end(&mut bytes);
        if let Some(range) = huge {
            advise_range(range, false);
        }
        read.map(|_| bytes)
    }

    /// Files from this size are read into memory advised for huge pages.
    const HUGE_FROM: usize = 4 << 20;

    /// Advise the whole pages of `bytes`'s spare capacity for huge pages,
    /// when that is at least [`HUGE_FROM`]; the range advised.
    fn advise_huge_pages(bytes: &mut Vec<u8>) -> Option<(usize, usize)> {
        let spare = bytes.spare_capacity_mut();
        if spare.len() < HUGE_FROM || !cfg!(target_os = "linux") {
            return None;
        }
        let page = 4096;
        let start = (spare.as_ptr() as usize).div_ceil(page) * page;
        let end = (spare.as_ptr() as usize + spare.len()) / page * page;
        advise_range((start, end), true).then_some((start, end))
    }

    /// `madvise` the pages from `range.0` to `range.1` (page-aligned) for
    /// transparent huge pages (`on`) or not; whether it was taken.  The
    /// advice changes how pages will be faulted in, never the contents.
    fn advise_range(range: (usize, usize), on: bool) -> bool {
        #[cfg(target_os = "linux")]
        {
            let advice = if on { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE };
            // SAFETY: the range is whole pages of memory this process has
            // mapped (the allocation's capacity); this advice does not
            // change their contents.  A kernel without huge pages refuses
            // it, and the file is then read as it would be without.
            unsafe { libc::madvise(range.0 as *mut libc::c_void, range.1 - range.0, advice) == 0 }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (range, on);
            false
        }
    }

    #[cfg(all(feature = "mimalloc", target_os = "linux"))]
    extern "C" {
        fn mi_option_set(option: std::os::raw::c_int, value: std::os::raw::c_long);
        #[cfg(test)]
        fn mi_option_get(option: std::os::raw::c_int) -> std::os::raw::c_long;
    }

    /// Have mimalloc commit its arenas' memory as it is used rather than
    /// up front (unless `MIMALLOC_ARENA_EAGER_COMMIT` says otherwise).
    /// Committed up front, an arena is marked for transparent huge pages,
    /// and each page touched makes 2 MiB resident: importing GitHub's
    /// description then peaked 11 MB higher, for no time saved
    /// (BENCHMARKS.md).  Run when the library is loaded, before it
    /// allocates: mimalloc reserves its first arena on the first
    /// allocation.
    #[cfg(all(feature = "mimalloc", target_os = "linux"))]
    extern "C" fn configure() {
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            // SAFETY: sets one of mimalloc's options, which it reads when
            // it reserves an arena.
            unsafe { mi_option_set(ARENA_EAGER_COMMIT, 0) }
        }
    }

    #[cfg(all(feature = "mimalloc", target_os = "linux"))]
    #[used]
    #[link_section = ".init_array"]
    static CONFIGURE: extern "C" fn() = configure;

    #[cfg(all(test, feature = "mimalloc", target_os = "linux"))]
    #[test]
    fn arenas_are_committed_as_used() {
        let want = std::env::var("MIMALLOC_ARENA_EAGER_COMMIT").map_or(0, |v| v.parse().unwrap_or(0));
        // SAFETY: reads one of mimalloc's options.
        assert_eq!(unsafe { mi_option_get(ARENA_EAGER_COMMIT) }, want);
    }

    #[cfg(test)]
    #[test]
    fn files_are_read_whole_at_any_size() {
        let dir = std::env::temp_dir().join(format!("toolspec-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0, 1, 4095, HUGE_FROM - 1, HUGE_FROM, HUGE_FROM + 4097, 3 * HUGE_FROM + 12345] {
            let path = dir.join(format!("f{len}"));
            let want: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
            std::fs::write(&path, &want).unwrap();
            let got = read_file(&path).unwrap();
            assert!(got == want, "a file of {len} bytes read as {} bytes, or other bytes", got.len());
        }
        assert_eq!(read_file(&dir.join("none")).unwrap_err().kind(), std::io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    pub struct Allocator;

    // SAFETY: every call is passed on to the inner allocator unchanged.
    unsafe impl GlobalAlloc for Allocator {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = Inner.alloc(layout);
            if p.is_null() {
                failed(layout);
            }
            p
        }

        #[inline]
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = Inner.alloc_zeroed(layout);
            if p.is_null() {
                failed(layout);
            }
            p
        }

        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            Inner.dealloc(ptr, layout)
        }

        #[inline]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = Inner.realloc(ptr, layout, new_size);
            if p.is_null() {
                // SAFETY: `realloc`'s contract makes this a valid layout.
                failed(Layout::from_size_align_unchecked(new_size, layout.align()));
            }
            p
        }
    }
}
pub use model::{Arg, Problem, Schema, Severity, Tool};
pub use read::{Format, Imported, ReadOptions};
pub use write::Dialect;

/// Version of the crate; the elisp package refuses a module whose version
/// differs from its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Read JSON text in `format` (or detected).
pub fn parse_json(text: &str, opts: &ReadOptions) -> Result<Imported> {
    read::read_str(text, opts)
}

/// Problems as elisp: `((SEVERITY "PATH" "MESSAGE") ...)`, each message
/// carrying the name of the problem's code as its text property
/// `toolspec-code`.
pub fn print_problems(problems: &[Problem], out: &mut String) {
    emit_problems(problems, &mut plist::Text::new(out).with_codes());
}

/// Emit problems as a list of `(SEVERITY "PATH" "MESSAGE")`.
pub fn emit_problems<'a, S: plist::Sink<'a>>(problems: &'a [Problem], s: &mut S) {
    s.open(false);
    for p in problems {
        s.open(false);
        s.symbol(p.severity.as_str());
        s.string(&p.path);
        s.coded_string(&p.message, p.code.name());
        s.close();
    }
    s.close();
}

/// An import as elisp text: `(TOOLS WARNINGS PATHS)`.
pub fn imported_to_elisp(imp: &Imported) -> String {
    let mut out = String::with_capacity(256 * imp.tools.len());
    emit_imported(imp, None, &mut plist::Text::new(&mut out));
    out
}

/// Emit an import as `(TOOLS WARNINGS PATHS)`, or with `problems` (one
/// list per tool, see [`validate_tools`]) `(TOOLS WARNINGS PATHS PROBLEMS)`.
pub fn emit_imported<'a, S: plist::Sink<'a>>(imp: &'a Imported, problems: Option<&'a [Vec<Problem>]>, s: &mut S) {
    s.open(false);
    emit_import_parts(imp, s);
    if let Some(problems) = problems {
        emit_tool_problems(problems, s);
    }
    s.close();
}

/// Tools made between two returns of the memory their making freed, in
/// [`releasing`]: without them, GitHub's import peaked 5-6 MB higher
/// (41 MB against 35 MB in a fresh Emacs), for no time measured.
const RELEASE_EVERY: usize = 256;

/// `each`, giving the memory freed so far back to the system
/// ([`alloc::release`]) every `RELEASE_EVERY` (256) tools.  For the OpenAPI
/// import, whose reading makes and frees much on the way.  Each return
/// walks the whole heap, which costs more as the import grows: other
/// imports do without (a catalog of 6,500 tools took 25% longer with).
pub fn releasing(each: &mut dyn FnMut(Tool, String)) -> impl FnMut(Tool, String) + '_ {
    let mut made = 0;
    move |tool, path| {
        made += 1;
        if made % RELEASE_EVERY == 0 {
            alloc::release();
        }
        each(tool, path)
    }
}

/// An import emitted as it is made, as [`emit_imported`] does: `make`
/// reads, handing each tool and its path to the first function it is
/// given (the second it calls to start again, forgetting the tools handed
/// over so far: see [`read::read_str_each`]), and returns the import's
/// warnings.  Each tool is checked ([`validate_tool`],
/// when `check`) and emitted in turn, reading and checking on other
/// threads while tools are emitted here when `big` (see
/// [`par::pipeline`]), and freed once emitted.  On an error of `make`,
/// what was emitted is to be thrown away.
pub fn emit_streamed_import<S: for<'x> plist::Sink<'x>>(
    make: impl FnOnce(&mut dyn FnMut(Tool, String), &mut dyn FnMut()) -> Result<Imported> + Send,
    check: bool,
    big: bool,
    s: &mut S,
) -> Result<()> {
    emit_streamed_import_until(make, check, big, s, &mut || false).map(|_| ())
}

/// [`emit_streamed_import`], asking `stop` now and then whether to stop
/// (see [`par::pipeline_until`]): false when it stopped, what was
/// emitted then to be thrown away.
pub fn emit_streamed_import_until<S: for<'x> plist::Sink<'x>>(
    make: impl FnOnce(&mut dyn FnMut(Tool, String), &mut dyn FnMut()) -> Result<Imported> + Send,
    check: bool,
    big: bool,
    s: &mut S,
    stop: &mut dyn FnMut() -> bool,
) -> Result<bool> {
    let mut paths = Vec::new();
    let mut problems = Vec::new();
    s.open(false);
    s.open(false);
    // Items are tools with their paths, or None when the reader starts
    // again (see `read::read_str_each`).
    let imp = par::pipeline_until(
        big,
        |each: &mut dyn FnMut(Option<(Tool, String)>)| {
            let each = std::cell::RefCell::new(each);
            make(&mut |tool, path| (each.borrow_mut())(Some((tool, path))), &mut || (each.borrow_mut())(None))
        },
        |item: &Option<(Tool, String)>| match item {
            Some((tool, _)) if check => validate_tool(tool),
            _ => Vec::new(),
        },
        |item, p| match item {
            Some((tool, path)) => {
                plist::emit_tool(tool, s);
                paths.push(std::mem::take(path));
                problems.push(p);
            }
            None => {
                s.clear_open();
                paths.clear();
                problems.clear();
            }
        },
        stop,
    );
    let Ok(imp) = imp else { return Ok(false) };
    let imp = imp?;
    s.close();
    emit_warnings_and_paths(&imp.warnings, &paths, s);
    emit_tool_problems(if check { &problems } else { &[] }, s);
    s.close();
    Ok(true)
}

/// The tools, warnings and paths of an import, one list each.
fn emit_import_parts<'a, S: plist::Sink<'a>>(imp: &'a Imported, s: &mut S) {
    plist::emit_tools(&imp.tools, s);
    emit_warnings_and_paths(&imp.warnings, &imp.paths, s);
}

/// An import's warnings, and the path of each tool, one list each.
fn emit_warnings_and_paths<'a, S: plist::Sink<'a>>(warnings: &'a [Problem], paths: &'a [String], s: &mut S) {
    emit_problems(warnings, s);
    s.open(false);
    for p in paths {
        s.string(p);
    }
    s.close();
}

/// The problems of each tool, a list of lists.
fn emit_tool_problems<'a, S: plist::Sink<'a>>(problems: &'a [Vec<Problem>], s: &mut S) {
    s.open(false);
    for p in problems {
        emit_problems(p, s);
    }
    s.close();
}

/// The problems of a tool the readers made, as `toolspec-validate` finds
/// them in its plist.
pub fn validate_tool(tool: &Tool) -> Vec<Problem> {
    let mut tree = node::Tree::with_capacity(64);
    plist::emit_tool(tool, &mut tree);
    tree.finish().pop().map_or_else(Vec::new, |plist| validate::validate_node(&plist))
}

/// [`validate_tool`] of each tool (spread over the cores when many).
pub fn validate_tools(tools: &[Tool]) -> Vec<Vec<Problem>> {
    par::map(tools, validate_tool)
}

/// Tools read from elisp text: one tool plist, or a list of them.
pub fn tools_from_elisp(text: &str) -> Result<Vec<Tool>> {
    let sexp = plist::parse_sexp(text)?;
    let result = (|| {
        if plist::plist_pairs(&sexp).is_some() {
            return Ok(vec![plist::tool_from_sexp(&sexp)?]);
        }
        let items = plist::list_items(&sexp).ok_or_else(|| {
            Error::new(ErrorKind::Plist, "expected a tool plist or a list of tool plists")
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, t)| {
                plist::tool_from_sexp(t).map_err(|e| e.in_item(i))
            })
            .collect()
    })();
    plist::dispose(sexp);
    result
}

/// Convert elisp tool text to JSON in `dialect`: one tool gives one JSON
/// tool, a list gives the dialect's document of many.
pub fn elisp_to_json(text: &str, dialect: Dialect, many: bool, pretty: bool) -> Result<String> {
    let tools = tools_from_elisp(text)?;
    let v = if many || tools.len() != 1 {
        write::write_tools(&tools, dialect)?
    } else {
        write::write_tool(&tools[0], dialect)?
    };
    Ok(write::to_text(&v, pretty))
}

/// Convert tool plists serialised by Emacs's `json-serialize` (a JSON
/// array of objects, each a tool plist with `:args` made a vector) to
/// JSON in `dialect`, as [`elisp_to_json`] converts their printed form.
/// Emacs's C serialiser is much faster than printing for `read`.
pub fn serialized_plists_to_json(text: &str, dialect: Dialect, pretty: bool) -> Result<String> {
    if pretty {
        let items = serialized_plists(text)?;
        // As for the printed form: the first tool that cannot be read,
        // placed at its item, else the first that cannot be written.
        let mut tools = par::map(&items, |item| serialized_tool(item)).into_iter().enumerate().map(in_item).collect::<Result<Vec<Tool>>>()?;
        write::rename_for(&mut tools, dialect, &mut Vec::new());
        let list = par::map(&tools, |t| write::write_tool(t, dialect)).into_iter().collect::<Result<Vec<crate::value::Value>>>()?;
        Ok(write::to_text(&write::document(list, dialect), true))
    } else {
        Ok(write::document_text(&serialized_plists_to_texts(text, dialect)?, dialect))
    }
}

/// The compact JSON text in `dialect` of each tool plist serialised by
/// `json-serialize` (see [`serialized_plists_to_json`]): the document of
/// them all is their texts in [`write::document_frame`].  Each tool is
/// parsed, read and written on its own, spread over the cores.
pub fn serialized_plists_to_texts(text: &str, dialect: Dialect) -> Result<Vec<String>> {
    serialized_plists_to_texts_beside(text, dialect, || ()).1
}

/// [`serialized_plists_to_texts`], with `beside` run on this thread while
/// the texts are written on others (and on this one, once it is done):
/// `beside`'s result and the texts.
pub fn serialized_plists_to_texts_beside<B>(text: &str, dialect: Dialect, beside: impl FnOnce() -> B) -> (B, Result<Vec<String>>) {
    let items = match serialized_plists(text) {
        Ok(items) => items,
        Err(e) => return (beside(), Err(e)),
    };
    let names = &dialect.profile().names;
    // A tool whose name the dialect refuses is not written here (`None`):
    // its new name depends on the other tools' names.
    let (b, texts) = par::join_map(beside, &items, |item| {
        serialized_tool(item).and_then(|t| match names.valid(&t.name) {
            true => write::write_owned(t, dialect).map(|v| Some(write::to_text(&v, false))),
            false => Ok(None),
        })
    });
    let texts: Result<Vec<Option<String>>> = texts.into_iter().enumerate().map(in_item).collect();
    let texts = match texts {
        Ok(texts) if texts.iter().any(Option::is_none) => renamed_texts(&items, texts, dialect),
        Ok(texts) => Ok(texts.into_iter().flatten().collect()),
        Err(e) => Err(e),
    };
    (b, texts)
}

/// The texts of [`serialized_plists_to_texts`] when some tools' names
/// must change: every tool's name made valid and unique in the document
/// ([`write::rename_for`]), the tools already written (`done`) kept.
fn renamed_texts(items: &[&serde_json::value::RawValue], done: Vec<Option<String>>, dialect: Dialect) -> Result<Vec<String>> {
    let mut tools = par::map(items, |item| serialized_tool(item)).into_iter().enumerate().map(in_item).collect::<Result<Vec<Tool>>>()?;
    write::rename_for(&mut tools, dialect, &mut Vec::new());
    let todo: Vec<(usize, &Tool)> = done.iter().enumerate().filter(|(_, d)| d.is_none()).map(|(i, _)| (i, &tools[i])).collect();
    let mut written = par::map(&todo, |(i, t)| write::write_tool(t, dialect).map(|v| write::to_text(&v, false)).map_err(|e| e.in_item(*i)))
        .into_iter();
    done.into_iter().map(|d| d.map(Ok).unwrap_or_else(|| written.next().unwrap_or_else(|| Ok(String::new())))).collect()
}

/// The items of `text`, a JSON array of serialised tool plists, each
/// still as its text.
fn serialized_plists(text: &str) -> Result<Vec<&serde_json::value::RawValue>> {
    serde_json::from_str(text).map_err(|_| match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(e) => Error::new(ErrorKind::Plist, format!("cannot read the serialised tools: {e}")),
        Ok(_) => Error::new(ErrorKind::Plist, "expected a list of tool plists"),
    })
}

/// The tool of one serialised plist.
fn serialized_tool(item: &serde_json::value::RawValue) -> Result<Tool> {
    if let Some(node) = plist::serialized_tool_node(item.get()) {
        return plist::tool_from_node(&node);
    }
    let item: crate::value::Value = serde_json::from_str(item.get())
        .map_err(|e| Error::new(ErrorKind::Plist, format!("cannot read the serialised tools: {e}")))?;
    let mut tree = node::Tree::default();
    plist::emit_serialized_tool(&item, &mut tree);
    plist::tool_from_node(&tree.finish().pop().unwrap_or(node::Node::Nil))
}

/// The result of item `i`, its error placed at the item.
fn in_item<T>((i, r): (usize, Result<T>)) -> Result<T> {
    r.map_err(|e| e.in_item(i))
}

/// Validate one tool plist given as elisp text.
pub fn validate_elisp(text: &str) -> Result<Vec<Problem>> {
    let sexp = plist::parse_sexp(text)?;
    let problems = validate::validate(&sexp);
    plist::dispose(sexp);
    Ok(problems)
}
