//! Every JSON reader, through auto-detection and a forced format picked
//! from the input; the lenient (SkyDeck) repair on its own; what
//! `toolspec check` and `toolspec detect` do with the text; then every
//! writer, and the plist round trip: what the printer writes must read
//! back to the same tools.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::plist::print_tools;
use toolspec::read::{read_bytes, Format, ReadOptions, FORMAT_NAMES};
use toolspec::write::{write_tools, DIALECT_NAMES};

fn round_trip(imp: &toolspec::Imported) {
    let mut text = String::new();
    print_tools(&imp.tools, &mut text);
    let back = toolspec::tools_from_elisp(&text).expect("printed plists read back");
    for (_, d) in DIALECT_NAMES {
        let direct = write_tools(&imp.tools, *d);
        let via_plist = write_tools(&back, *d);
        assert_eq!(direct.ok(), via_plist.ok(), "plist round trip differs in {d:?}");
    }
    // The writers of the formats that say how a tool runs.
    let _ = toolspec::skydeck::write_many(&imp.tools);
    let _ = toolspec::gloodata::write_info(&imp.tools, &toolspec::gloodata::InfoOptions::default());
    let _ = toolspec::imported_to_elisp(imp);
}

fuzz_target!(|data: &[u8]| {
    // A forced format chosen by a hash of the whole input, so that every
    // format (Gloodata, Arcade, SkyDeck included) meets valid JSON.
    let hash = data.iter().fold(data.len(), |h, &b| h.wrapping_mul(31).wrapping_add(b as usize));
    let forced = FORMAT_NAMES[hash % FORMAT_NAMES.len()].1;
    for format in [Format::Auto, forced] {
        let opts = ReadOptions { format, default_name: Some("fuzz"), max_size: 1 << 20, ..ReadOptions::default() };
        if let Ok(imp) = read_bytes(data, &opts) {
            round_trip(&imp);
        }
        if format == forced {
            break;
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (fixed, repairs) = toolspec::lenient::repair(text);
    for w in &repairs {
        let _ = toolspec::locate::locate(text, &w.path);
    }
    drop(fixed);
    let opts = ReadOptions { default_name: Some("fuzz"), max_size: 1 << 20, ..ReadOptions::default() };
    let checked = toolspec::check::check_json(text, &opts);
    for d in &checked.diagnostics {
        assert!(d.line >= 1 && d.column >= 1, "diagnostic without a place: {d:?}");
    }
    let _ = toolspec::check::detect(Some("fuzz.json"), text);
});
