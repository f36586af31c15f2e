//! The OpenAPI importer: JSON and YAML documents, with a selection of
//! operations (tags, path prefixes, names) taken from the document itself;
//! then every writer and the plist round trip.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::openapi::{self, OpenApiOptions};
use toolspec::write::{write_tools, DIALECT_NAMES};

fuzz_target!(|data: &[u8]| {
    let pick = data.last().copied().unwrap_or(0);
    let Ok(text) = std::str::from_utf8(data) else {
        let _ = openapi::read_bytes(data.to_vec(), &OpenApiOptions::default(), 1 << 20);
        return;
    };
    let ops = openapi::operations_of_text(text);
    let mut opts = OpenApiOptions::default();
    if let Ok(ops) = &ops {
        let _ = openapi::operations_to_elisp(ops);
        if let Some(op) = ops.get(pick as usize % ops.len().max(1)) {
            match pick % 4 {
                1 => opts.tags = op.tags.clone(),
                2 => opts.paths = vec![op.path.rsplit_once('/').map_or("/", |(p, _)| p).to_string()],
                3 => opts.operations = vec![op.name.clone(), format!("{} {}", op.method, op.path)],
                _ => {}
            }
        }
        if pick & 0x10 != 0 {
            opts.server = Some("https://example.invalid/v1".into());
        }
    }
    let Ok(imp) = openapi::read_bytes(data.to_vec(), &opts, 1 << 20) else { return };
    assert!(!imp.tools.is_empty());
    assert_eq!(imp.tools.len(), imp.paths.len());
    let mut printed = String::new();
    toolspec::plist::print_tools(&imp.tools, &mut printed);
    let back = toolspec::tools_from_elisp(&printed).expect("printed plists read back");
    for (_, d) in DIALECT_NAMES {
        assert_eq!(write_tools(&imp.tools, *d).ok(), write_tools(&back, *d).ok(), "plist round trip differs in {d:?}");
    }
    for w in &imp.warnings {
        let _ = toolspec::locate::locate(text, &w.path);
    }
});
