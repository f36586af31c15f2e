//! The plist reader and the validator on arbitrary text (as if printed by
//! Emacs), and conversion of whatever reads to every dialect.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::write::DIALECT_NAMES;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = toolspec::validate_elisp(text);
    for (_, d) in DIALECT_NAMES {
        let _ = toolspec::elisp_to_json(text, *d, true, false);
    }
});
