//! The Emacs Lisp source reader and the tool finder behind `toolspec
//! check foo.el`, `toolspec convert foo.el` and Flymake: every
//! diagnostic has a place, every tool found converts (to each dialect and
//! back to `gptel-make-tool` source), and reading the source never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::check;
use toolspec::gptel_form::{gptel_form, FormOptions};
use toolspec::write::{write_tools, DIALECT_NAMES};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let checked = check::check_elisp(text);
    let lines = text.split('\n').count();
    for d in &checked.diagnostics {
        assert!(d.line >= 1 && d.line <= lines && d.column >= 1, "diagnostic out of the text: {d:?}");
    }
    let _ = check::diagnostics_to_elisp(&checked.diagnostics);
    let _ = check::detect(Some("fuzz.el"), text);
    let Ok(found) = check::elisp_tools(text) else { return };
    let mut tools = Vec::new();
    for (_, _, t) in found {
        let function = t.function.as_ref().and_then(|f| check::function_text(text, f));
        let Ok(tool) = t.tool else { continue };
        // What `toolspec convert --to elisp` does with it.
        let mut printed = String::new();
        toolspec::plist::print_tool(&tool, &mut printed);
        // Source may nest data deeper (400 levels) than a plist may be
        // (100): that is the one reason a printed tool may not read back.
        let sexp = match toolspec::plist::parse_sexp(&printed) {
            Ok(sexp) => sexp,
            Err(e) => {
                assert_eq!(e.kind, toolspec::ErrorKind::Limit, "a printed tool reads back: {e}\n{printed}");
                continue;
            }
        };
        let f = function.unwrap_or_else(|| "#'ignore".into());
        let opts = FormOptions { function: &f, category: Some("fuzz"), comments: true, define: false };
        let _ = gptel_form(&sexp, &opts);
        toolspec::plist::dispose(sexp);
        tools.push(tool);
    }
    for (_, d) in DIALECT_NAMES {
        let _ = write_tools(&tools, *d);
    }
});
