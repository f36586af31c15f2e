//! Jinja templates (OpenAPI x-filter, x-output-modules, bootstrap values):
//! an arbitrary template over arbitrary JSON, within the default bounds.
//! The output must respect the output cap; libFuzzer's timeout and RSS
//! limit catch work or memory the fuel should have bounded.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::template::{render, Limits};

/// Data for templates whose JSON part does not parse.
const DATA: &str = r#"{"products": [{"name": "Pen", "price": 2.5, "tags": ["a", "b"]}, {"name": "Ink", "price": 5}],
  "auth": {"token": "t", "data": {"access_token": "t", "user": "u"}}, "n": 3, "s": "text", "ok": true, "none": null}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (template, json) = text.split_once('\u{0}').unwrap_or((text, DATA));
    let json = if serde_json::from_str::<serde_json::Value>(json).is_ok() { json } else { DATA };
    let limits = Limits::default();
    match render(template, json, &limits) {
        Ok(out) => assert!(out.len() <= limits.max_output, "output of {} bytes", out.len()),
        Err(e) => assert!(!e.message.is_empty()),
    }
});
