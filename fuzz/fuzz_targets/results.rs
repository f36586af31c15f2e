//! What servers answer: Arcade tool result envelopes and Gloodata
//! extension results, read for the model.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(r) = toolspec::envelope::read_text(text) {
        assert!(!r.kind.is_empty());
    }
    let _ = toolspec::gloodata::render_result(text);
});
