//! Imports and problems as elisp data, written through a [`Sink`]: as
//! text for `read` ([`crate::plist::Text`]) or, in the Emacs module, as
//! Lisp objects.  An import is `(TOOLS WARNINGS PATHS [PROBLEMS [KEPT]])`; a
//! large one is emitted as it is read ([`emit_streamed_import`]).

use crate::error::Result;
use crate::model::{Problem, Tool};
use crate::read::Imported;
use crate::sink::{Sink, Text};
use crate::{node, par, plist, validate};

/// What `emit` writes through a [`Text`] sink: elisp text for `read`.
pub fn elisp_text(emit: impl FnOnce(&mut Text<'_>)) -> String {
    let mut out = String::new();
    emit(&mut Text::new(&mut out));
    out
}

/// Problems as elisp: `((SEVERITY "PATH" "MESSAGE") ...)`, each message
/// carrying the name of the problem's code as its text property
/// `toolspec-code`.
pub fn print_problems(problems: &[Problem], out: &mut String) {
    emit_problems(problems, &mut plist::Text::new(out).with_codes());
}

/// Emit problems as a list of `(SEVERITY "PATH" "MESSAGE")`.
pub fn emit_problems<'a, S: Sink<'a>>(problems: &'a [Problem], s: &mut S) {
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
pub fn emit_imported<'a, S: Sink<'a>>(imp: &'a Imported, problems: Option<&'a [Vec<Problem>]>, s: &mut S) {
    s.open(false);
    emit_import_parts(imp, s);
    if let Some(problems) = problems {
        emit_tool_problems(problems, s);
    }
    s.close();
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
pub fn emit_streamed_import<S: for<'x> Sink<'x>>(
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
pub fn emit_streamed_import_until<S: for<'x> Sink<'x>>(
    make: impl FnOnce(&mut dyn FnMut(Tool, String), &mut dyn FnMut()) -> Result<Imported> + Send,
    check: bool,
    big: bool,
    s: &mut S,
    stop: &mut dyn FnMut() -> bool,
) -> Result<bool> {
    let mut paths = Vec::new();
    let mut problems = Vec::new();
    // The paths and problems of the tools, emitted to lists apart as each
    // tool is taken where the sink can (asked by switching to one and
    // back): Emacs's thread makes their objects while the reading thread
    // reads, instead of after it.
    let apart = s.side(PATHS) && s.side(PATHS);
    // The tools themselves, after their plists, when the sink keeps them
    // (see `Sink::keep_tool`), in a fifth list.
    let keep = apart && s.keeps_tools();
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
                if apart {
                    s.side(PATHS);
                    s.string(path);
                    s.side(PATHS);
                    if check {
                        s.side(PROBLEMS);
                        emit_problems(&p, s);
                        s.side(PROBLEMS);
                    }
                    if keep {
                        s.side(KEPT);
                        s.keep_tool(std::mem::take(tool));
                        s.side(KEPT);
                    }
                } else {
                    paths.push(std::mem::take(path));
                    problems.push(p);
                }
            }
            None => {
                s.clear_open();
                if apart {
                    for k in [PATHS, PROBLEMS, KEPT] {
                        s.side(k);
                        s.clear_open();
                        s.side(k);
                    }
                }
                paths.clear();
                problems.clear();
            }
        },
        stop,
    );
    let Ok(imp) = imp else { return Ok(false) };
    let imp = imp?;
    s.close();
    if apart {
        emit_problems(&imp.warnings, s);
        s.side_list(PATHS);
        s.side_list(PROBLEMS);
        if keep {
            s.side_list(KEPT);
        }
    } else {
        emit_warnings_and_paths(&imp.warnings, &paths, s);
        emit_tool_problems(if check { &problems } else { &[] }, s);
    }
    s.close();
    // Its warnings, each with its own path and message, freed on
    // another thread: 0.3 ms for BFCL's catalog's 4,713 (`make bench`).
    par::drop_later(big, imp);
    Ok(true)
}

/// The lists apart ([`Sink::side`]) of a streamed import.
const PATHS: usize = 0;
const PROBLEMS: usize = 1;
const KEPT: usize = 2;

/// The tools, warnings and paths of an import, one list each.
fn emit_import_parts<'a, S: Sink<'a>>(imp: &'a Imported, s: &mut S) {
    plist::emit_tools(&imp.tools, s);
    emit_warnings_and_paths(&imp.warnings, &imp.paths, s);
}

/// An import's warnings, and the path of each tool, one list each.
fn emit_warnings_and_paths<'a, S: Sink<'a>>(warnings: &'a [Problem], paths: &'a [String], s: &mut S) {
    emit_problems(warnings, s);
    s.open(false);
    for p in paths {
        s.string(p);
    }
    s.close();
}

/// The problems of each tool, a list of lists.
fn emit_tool_problems<'a, S: Sink<'a>>(problems: &'a [Vec<Problem>], s: &mut S) {
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
