//! Argument checking: a tool read from the first part of the input, the
//! arguments (JSON text and printed Lisp values) from the rest.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::args::ArgChecker;
use toolspec::read::{read_str, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (spec, args) = text.split_once('\u{0}').unwrap_or((text, "{}"));
    let Ok(imp) = read_str(spec, &ReadOptions::default()) else { return };
    let Ok(checker) = ArgChecker::new(&imp.tools[0]) else { return };
    let _ = checker.check_text(args);
    let _ = checker.check_lisp(args, true);
    let _ = checker.check_lisp(args, false);
});
