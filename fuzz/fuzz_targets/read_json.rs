//! Every JSON reader, through auto-detection and each forced format; then
//! every writer, and the plist round trip: what the printer writes must
//! read back to the same tools.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::plist::print_tools;
use toolspec::read::{read_bytes, Format, ReadOptions, FORMAT_NAMES};
use toolspec::write::{write_tools, DIALECT_NAMES};

fuzz_target!(|data: &[u8]| {
    let pick = data.first().copied().unwrap_or(0) as usize;
    let format = if pick % 3 == 0 { Format::Auto } else { FORMAT_NAMES[pick % FORMAT_NAMES.len()].1 };
    let opts = ReadOptions { format, default_name: Some("fuzz"), max_size: 1 << 20 };
    let Ok(imp) = read_bytes(data, &opts) else { return };
    let mut text = String::new();
    print_tools(&imp.tools, &mut text);
    let back = toolspec::tools_from_elisp(&text).expect("printed plists read back");
    for (_, d) in DIALECT_NAMES {
        let direct = write_tools(&imp.tools, *d);
        let via_plist = write_tools(&back, *d);
        assert_eq!(direct.ok(), via_plist.ok(), "plist round trip differs in {d:?}");
    }
});
