//! Hostile sizes and shapes at every entry point that takes outside input:
//! absurd nesting, long `$ref` chains, oversized input, bytes that are not
//! UTF-8, NUL characters, integers beyond 64 bits, duplicate keys, huge
//! enums and wide objects.  None may panic, overflow the stack, hang or
//! allocate without bound: each gives a clear error or a faithful result.
//!
//! Every test runs on a thread with the 8 MiB stack of Emacs's main thread
//! (where the module runs) and of the command line's, and a deadline; in
//! a debug build, whose frames are several times larger, that is a wide
//! margin.

use std::time::{Duration, Instant};

use toolspec::args::ArgChecker;
use toolspec::check;
use toolspec::json;
use toolspec::openapi::{self, OpenApiOptions};
use toolspec::plist::{parse_sexp, print_tool, print_tools};
use toolspec::read::{read_bytes, read_str, Format, ReadOptions, FORMAT_NAMES};
use toolspec::template::{render, Limits};
use toolspec::value::Value;
use toolspec::write::{write_tools, Dialect, DIALECT_NAMES};
use toolspec::{elisp_to_json, tools_from_elisp, validate_elisp, ErrorKind, Tool};

#[path = "common/mod.rs"]
mod common;
use common::within;

// ------------------------------------------------------------------ helpers

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn opts(format: Format) -> ReadOptions<'static> {
    ReadOptions { format, default_name: Some("limits"), ..ReadOptions::default() }
}

fn read(text: &str) -> toolspec::Result<toolspec::Imported> {
    read_str(text, &opts(Format::Auto))
}

fn mcp(schema: Value) -> Value {
    json!({"name": "probe", "description": "Probe.", "inputSchema": schema})
}

fn printed(tools: &[Tool]) -> String {
    let mut s = String::new();
    print_tools(tools, &mut s);
    s
}

fn printed_one(tool: &Tool) -> String {
    let mut s = String::new();
    print_tool(tool, &mut s);
    s
}

/// Time of `f`, run once.
fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

const DEEP: usize = 100_000;

fn deep_arrays() -> String {
    "[".repeat(DEEP) + &"]".repeat(DEEP)
}

fn deep_objects() -> String {
    "{\"a\":".repeat(DEEP) + "1" + &"}".repeat(DEEP)
}

/// A tool whose argument's default is nested `DEEP` levels.
fn deep_in_a_tool() -> String {
    format!(
        "{{\"name\":\"t\",\"input_schema\":{{\"type\":\"object\",\"properties\":{{\"x\":{{\"type\":\"array\",\"default\":{}}}}}}}}}",
        deep_arrays()
    )
}

// ------------------------------------------------------------ nesting depth

#[test]
fn deep_json_is_an_error_in_every_reader() {
    within(secs(60), || {
        for text in [deep_arrays(), deep_objects(), deep_in_a_tool(), "[{\"a\":".repeat(DEEP / 2)] {
            for (name, format) in FORMAT_NAMES {
                let e = read_str(&text, &opts(*format)).unwrap_err();
                assert_eq!(e.kind, ErrorKind::Json, "{name}: {e}");
                assert!(e.message.contains("nesting deeper than 128 levels"), "{name}: {e}");
            }
            let e = read_bytes(text.as_bytes(), &opts(Format::Auto)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Json);
            let d = check::check_json(&text, &opts(Format::Auto));
            assert!(d.unusable && d.diagnostics.len() == 1, "{:?}", d.diagnostics);
            assert!(check::detect(Some("deep.json"), &text).is_err());
            // Tool results and template data from servers, arguments from the model.
            assert_eq!(toolspec::envelope::read_text(&text).unwrap_err().kind, ErrorKind::Envelope);
            let _ = toolspec::gloodata::render_result(&text);
            assert_eq!(render("{{ data }}", &text, &Limits::default()).unwrap_err().kind, ErrorKind::Json);
            let tool = &read(r#"{"name":"t","input_schema":{"type":"object"}}"#).unwrap().tools[0];
            assert_eq!(ArgChecker::new(tool).unwrap().check_text(&text).unwrap_err().kind, ErrorKind::Json);
        }
    });
}

#[test]
fn deep_openapi_documents_are_errors() {
    within(secs(60), || {
        let json = format!("{{\"openapi\":\"3.0.0\",\"x\":{}}}", deep_arrays());
        let flow = format!("openapi: 3.0.0\nx: {}\n", deep_arrays());
        let block: String = (0..DEEP).map(|i| format!("{}- \n", " ".repeat(i % 200))).collect();
        let block = format!("openapi: 3.0.0\nx:\n{block}");
        let dashes = format!("openapi: 3.0.0\nx:\n{}1\n", "- ".repeat(DEEP));
        for text in [json, flow, block, dashes] {
            let e = openapi::read_text(&text, &OpenApiOptions::default()).unwrap_err();
            assert!(matches!(e.kind, ErrorKind::Json | ErrorKind::Shape | ErrorKind::UnsupportedFormat), "{e}");
            assert!(openapi::operations_of_text(&text).is_err());
            assert!(read(&text).is_err());
        }
    });
}

#[test]
fn yaml_alias_bombs_are_bounded() {
    within(secs(30), || {
        let mut text = String::from("openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!("a{i}: &a{i} [{}]\n", [prev.as_str(); 10].join(", ")));
        }
        text.push_str("paths: {}\n");
        let e = openapi::read_text(&text, &OpenApiOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{e}");
        assert!(e.message.contains("repetition limit"), "{e}");
    });
}

/// SkyDeck files are repaired before parsing: the repair must stay linear
/// in time and memory however deep or broken the text.
#[test]
fn lenient_repair_of_deep_or_broken_text_is_bounded() {
    within(secs(30), || {
        let deep = format!("{{\"model_prompt\": \"x\", \"a\": {}", "[".repeat(1_000_000));
        let e = read(&deep).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{e}");
        let commas = format!("{{\"model_prompt\": \"x\", \"a\": [{}1]}}", ",".repeat(200_000));
        let imp = read(&commas).unwrap();
        assert!(imp.warnings.len() < 1000, "one warning per repair, capped: {}", imp.warnings.len());
        let (fixed, _) = toolspec::lenient::repair(&commas);
        assert!(fixed.len() <= commas.len());
        let slips = format!("{{\"model_prompt\": \"x\", \"v\": [{}]}}", "{\"a\": 1 \"b\": 2},".repeat(50_000));
        assert!(read(&slips).is_ok());
    });
}

#[test]
fn deep_elisp_source_is_an_error() {
    within(secs(60), || {
        for text in [
            "(".repeat(DEEP),
            format!("(gptel-make-tool :name \"x\" :args (list '{}))", "(".repeat(DEEP)),
            "[".repeat(DEEP),
            format!("(setq x {}a)", "'".repeat(DEEP)),
            format!("(setq x `{}a)", ",`".repeat(DEEP / 2)),
            format!("(setq x {}a)", "#'".repeat(DEEP / 2)),
            format!("(gptel-make-tool :name \"x\" :args (list {}))", "(list ".repeat(DEEP)),
        ] {
            let c = check::check_elisp(&text);
            assert!(c.unusable, "{:?}", c.diagnostics.first());
            assert!(c.diagnostics.iter().any(|d| d.message.contains("nested deeper")), "{:?}", c.diagnostics.first());
            assert_eq!(check::elisp_tools(&text).unwrap_err().kind, ErrorKind::Plist);
            assert!(check::detect(Some("deep.el"), &text).is_err());
        }
    });
}

/// Deep plists as Emacs prints them (Emacs itself refuses to print past
/// 200 levels; printed text may still come from elsewhere).
#[test]
fn deep_plists_are_limit_errors() {
    within(secs(60), || {
        let deep_list = "(".repeat(DEEP) + &")".repeat(DEEP);
        let deep_vector = "[".repeat(DEEP) + &"]".repeat(DEEP);
        let quotes = format!("{}x", "'".repeat(DEEP));
        let checker = ArgChecker::new(
            &read(r#"{"name":"t","input_schema":{"type":"object","properties":{"a":{}}}}"#).unwrap().tools[0],
        )
        .unwrap();
        for inner in [deep_list, deep_vector, quotes] {
            let tool = format!("(:name \"d\" :description \"d\" :args ((:name \"a\" :type array :default {inner})))");
            for text in [inner.clone(), tool.clone()] {
                assert_eq!(parse_sexp(&text).unwrap_err().kind, ErrorKind::Limit);
                assert_eq!(tools_from_elisp(&text).unwrap_err().kind, ErrorKind::Limit);
                assert_eq!(validate_elisp(&text).unwrap_err().kind, ErrorKind::Limit);
                assert_eq!(elisp_to_json(&text, Dialect::OpenAi, true, false).unwrap_err().kind, ErrorKind::Limit);
            }
            assert_eq!(checker.check_lisp(&format!("({inner})"), true).unwrap_err().kind, ErrorKind::Limit);
            assert_eq!(checker.check_lisp(&format!("(:a {inner})"), false).unwrap_err().kind, ErrorKind::Limit);
        }
    });
}

#[test]
fn deep_templates_are_bounded() {
    within(secs(60), || {
        let limits = Limits::default();
        for t in [
            format!("{{{{ {}1{} }}}}", "(".repeat(DEEP), ")".repeat(DEEP)),
            format!("{{{{ {}1{} }}}}", "[".repeat(DEEP), "]".repeat(DEEP)),
            format!("{{{{ {}x }}}}", "not ".repeat(DEEP / 4)),
            format!("{{{{ x{} }}}}", "|e".repeat(DEEP)),
            format!("{{{{ 1{} }}}}", "+1".repeat(DEEP)),
            "{% if x %}".repeat(DEEP / 10) + &"{% endif %}".repeat(DEEP / 10),
        ] {
            let e = render(&t, "{\"x\": 1}", &limits).unwrap_err();
            assert!(matches!(e.kind, ErrorKind::TemplateLimit | ErrorKind::Template), "{e}");
        }
        // Deep data within the JSON limit renders within the output cap.
        let data = format!("{{\"d\": {}1{}}}", "[".repeat(120), "]".repeat(120));
        assert!(render("{{ d }}{{ d | tojson }}", &data, &limits).is_ok());
    });
}

// ------------------------------------------------------------ $ref chains

/// `$defs` d0 -> d1 -> ... -> dN, each one a `$ref` to the next, the last a
/// string.
fn ref_chain(n: usize, defs_at: &str) -> toolspec::value::Map<String, Value> {
    let mut defs = toolspec::value::Map::new();
    for i in 0..n {
        defs.insert(format!("d{i}"), json!({"$ref": format!("{defs_at}/d{}", i + 1)}));
    }
    defs.insert(format!("d{n}"), json!({"type": "string"}));
    defs
}

#[test]
fn long_ref_chains_are_bounded() {
    within(secs(60), || {
        for n in [10_000, 100_000] {
            let doc = mcp(json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}},
                                  "$defs": ref_chain(n, "#/$defs")}));
            let e = read(&doc.to_string()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Limit, "{e}");
            // A chain of objects, each a property holding a `$ref` to the next.
            let mut defs = toolspec::value::Map::new();
            for i in 0..n {
                defs.insert(
                    format!("d{i}"),
                    json!({"type": "object", "properties": {"next": {"$ref": format!("#/$defs/d{}", i + 1)}}}),
                );
            }
            defs.insert(format!("d{n}"), json!({"type": "string"}));
            let doc = mcp(json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}));
            assert_eq!(read(&doc.to_string()).unwrap_err().kind, ErrorKind::Limit);
        }
    });
}

#[test]
fn long_ref_chains_in_openapi_are_bounded() {
    within(secs(60), || {
        let n = 10_000;
        let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "paths": {"/x": {"post": {"operationId": "make",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/d0"}}}},
                "responses": {"200": {"description": "ok"}}}}},
            "components": {"schemas": ref_chain(n, "#/components/schemas")}});
        let text = doc.to_string();
        // Skipped with a warning (or read with a placeholder), never a hang.
        match openapi::read_text(&text, &OpenApiOptions::default()) {
            Ok(imp) => assert!(!imp.warnings.is_empty()),
            Err(e) => assert!(matches!(e.kind, ErrorKind::Limit | ErrorKind::Ref), "{e}"),
        }
        let named = OpenApiOptions { operations: vec!["make".into()], ..OpenApiOptions::default() };
        if let Err(e) = openapi::read_text(&text, &named) {
            assert!(matches!(e.kind, ErrorKind::Limit | ErrorKind::Ref), "{e}");
        }
    });
}

// --------------------------------------------------------------- input size

#[test]
fn input_size_is_capped_with_a_clear_error() {
    let text = r#"{"name": "t", "input_schema": {"type": "object"}}"#;
    assert_eq!(ReadOptions::default().max_size, 64 << 20);
    let small = ReadOptions { max_size: 20, ..opts(Format::Auto) };
    for e in [
        read_str(text, &small).unwrap_err(),
        read_bytes(text.as_bytes(), &small).unwrap_err(),
        openapi::read_bytes(text.as_bytes().to_vec(), &OpenApiOptions::default(), 20).unwrap_err(),
    ] {
        assert_eq!(e.kind, ErrorKind::Limit);
        let size = text.len().to_string();
        assert!(e.message.contains(&size) && e.message.contains("limit of 20 bytes"), "{e}");
        assert!(e.message.contains("toolspec-max-input-size"), "{e}");
    }
    let fits = ReadOptions { max_size: text.len(), ..opts(Format::Auto) };
    assert!(read_str(text, &fits).is_ok());
    assert!(openapi::read_bytes(text.as_bytes().to_vec(), &OpenApiOptions::default(), 20).is_err());
}

// ------------------------------------------------- UTF-8 and NUL characters

#[test]
fn invalid_utf8_is_a_clear_error() {
    for bytes in [&b"{\"name\": \"\xff\"}"[..], b"\xfe\xff", b"[\"\xed\xa0\x80\"]", b"{\"name\": \"a\xc3\"}"] {
        let e = read_bytes(bytes, &opts(Format::Auto)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json);
        assert!(e.message.contains("UTF-8") && e.line.is_some(), "{e}");
        let e = openapi::read_bytes(bytes.to_vec(), &OpenApiOptions::default(), 1 << 20).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{e}");
    }
    // Escapes that name no character (lone surrogates).
    for text in [r#"{"name": "\ud800", "parameters": {}}"#, r#"{"name": "x", "description": "\udfff"}"#] {
        let e = read(text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{e}");
    }
}

#[test]
fn nul_characters_are_kept_faithfully() {
    let doc = json!({"name": "a\u{0}b", "description": "before\u{0}after", "input_schema": {"type": "object",
        "properties": {"k\u{0}": {"type": "string", "enum": ["x\u{0}", "\u{0}"], "default": "\u{0}", "description": "\u{0}"}}}});
    let imp = read(&doc.to_string()).unwrap();
    let t = &imp.tools[0];
    assert_eq!(t.name, "a\u{0}b");
    assert_eq!(t.description.as_deref(), Some("before\u{0}after"));
    assert_eq!(t.args[0].name, "k\u{0}");
    // Through the plist text Emacs reads, and back, nothing changes.
    let text = printed(&imp.tools);
    let back = tools_from_elisp(&text).unwrap();
    assert_eq!(back, imp.tools);
    for (_, d) in DIALECT_NAMES {
        let out = write_tools(&back, *d).unwrap();
        assert_eq!(out, write_tools(&imp.tools, *d).unwrap());
        assert!(out.to_string().contains("before\\u0000after"), "{d:?}: {out}");
    }
    // A NUL in a name is reported, not accepted silently.
    let problems = validate_elisp(&printed_one(t)).unwrap();
    assert!(problems.iter().any(|p| p.path == "name" && p.message.contains("not a valid tool name")), "{problems:?}");
    // In Lisp source.
    let src = "(gptel-make-tool :name \"n\u{0}\" :description \"d\u{0}\" :args (list '(:name \"a\" :type string :description \"\u{0}\")))\u{0}";
    let c = check::check_elisp(src);
    assert!(c.diagnostics.iter().any(|d| d.path == "name"), "{:?}", c.diagnostics);
    let tools = check::elisp_tools(&src[..src.len() - 1]).unwrap();
    assert_eq!(tools[0].2.tool.as_ref().unwrap().description.as_deref(), Some("d\u{0}"));
}

// ------------------------------------------------- integers beyond 64 bits

#[test]
fn integers_beyond_64_bits_are_read_as_numbers_with_a_warning() {
    let text = r#"{"name": "n", "input_schema": {"type": "object", "properties": {"x": {"type": "integer",
        "minimum": -123456789012345678901234567890, "default": 123456789012345678901234567890,
        "enum": [1, 123456789012345678901234567890], "maximum": 18446744073709551615}}}}"#;
    let imp = read(text).unwrap();
    let s = &imp.tools[0].args[0].schema;
    assert_eq!(s["default"], json!(1.2345678901234568e29));
    assert_eq!(s["minimum"], json!(-1.2345678901234568e29));
    assert_eq!(s["maximum"], json!(18446744073709551615u64));
    let paths: Vec<&str> = imp.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        ["input_schema.properties.x.minimum", "input_schema.properties.x.default", "input_schema.properties.x.enum[1]"]
    );
    assert!(imp.warnings[1].message.contains("123456789012345678901234567890 is beyond 64 bits"), "{:?}", imp.warnings);
    // The plist round trip keeps the number read, and so does every writer.
    let back = tools_from_elisp(&printed(&imp.tools)).unwrap();
    assert_eq!(back, imp.tools);
    for (_, d) in DIALECT_NAMES {
        write_tools(&back, *d).unwrap();
    }
    // The same in an OpenAPI document.
    let doc = r#"{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/x": {"get": {"operationId": "x",
        "parameters": [{"name": "n", "in": "query", "schema": {"type": "integer", "maximum": 99999999999999999999}}],
        "responses": {"200": {"description": "ok"}}}}}}"#;
    let imp = openapi::read_text(doc, &OpenApiOptions::default()).unwrap();
    assert!(imp.warnings.iter().any(|w| w.path.ends_with("schema.maximum") && w.message.contains("beyond 64 bits")));
    // Numbers JSON cannot hold at all are JSON errors.
    let e = read(r#"{"name": "n", "input_schema": {"type": "object", "default": 1e400}}"#).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json, "{e}");
}

/// Emacs prints bignums as digits: read as the nearest number, never a panic.
#[test]
fn lisp_bignums_read_as_numbers() {
    for (printed, value) in [
        ("123456789012345678901234567890", json!(1.2345678901234568e29)),
        ("-123456789012345678901234567890", json!(-1.2345678901234568e29)),
        ("18446744073709551615", json!(18446744073709551615u64)),
    ] {
        let text = format!("(:name \"n\" :args ((:name \"x\" :type integer :default {printed} :enum [{printed}])))");
        let t = &tools_from_elisp(&text).unwrap_or_else(|e| panic!("{printed}: {e}"))[0];
        assert_eq!(t.args[0].schema["default"], value, "{printed}");
        assert_eq!(t.args[0].schema["enum"][0], value, "{printed}");
        validate_elisp(&text).unwrap();
    }
}

// ----------------------------------------------------------- duplicate keys

/// JSON: the last value wins (as in JavaScript and Python), with a warning
/// at the key.  Plists: the first wins (as for `plist-get` and
/// `gptel-make-tool`), and the validator warns.
#[test]
fn duplicate_keys_last_wins_in_json_first_in_plists() {
    let text = r#"{"name": "first", "description": "d", "name": "last", "input_schema": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}, "a": {"type": "integer"}}}}"#;
    let imp = read(text).unwrap();
    let t = &imp.tools[0];
    assert_eq!(t.name, "last");
    let args: Vec<(&str, &Value)> = t.args.iter().map(|a| (a.name.as_str(), &a.schema["type"])).collect();
    assert_eq!(args, [("a", &json!("integer")), ("b", &json!("number"))], "last value, first place");
    let paths: Vec<&str> = imp.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["name", "input_schema.properties.a"]);
    assert!(imp.warnings[0].message.contains("duplicate key \"name\": the last value is used"), "{:?}", imp.warnings);
    let d = check::check_json(text, &opts(Format::Auto));
    assert!(
        d.diagnostics.iter().any(|d| d.path == "name" && d.line == 1 && d.message.contains("duplicate")),
        "{:?}",
        d.diagnostics
    );

    let plist = "(:name \"first\" :description \"d\" :name \"last\" :args ((:name \"a\" :type string :type number \
                 :description \"x\" :items (:type string) :properties (:p (:type string) :p (:type number)))))";
    let t = &tools_from_elisp(plist).unwrap()[0];
    assert_eq!(t.name, "first");
    assert_eq!(t.args[0].schema["type"], "string");
    assert_eq!(t.args[0].schema["properties"], json!({"p": {"type": "string"}}));
    let problems = validate_elisp(plist).unwrap();
    assert!(problems.iter().any(|p| p.path == "name" && p.message.contains("only the first is used")), "{problems:?}");
    assert!(
        problems.iter().any(|p| p.path == "args[0].type" && p.message.contains("only the first is used")),
        "{problems:?}"
    );
    // An alist object: the first entry wins, as for `alist-get`.
    let alist = "(:name \"n\" :args ((:name \"x\" :type object :default ((k . 1) (k . 2)))))";
    assert_eq!(tools_from_elisp(alist).unwrap()[0].args[0].schema["default"], json!({"k": 1}));
}

#[test]
fn duplicate_keys_in_yaml_are_errors() {
    let doc = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get: {operationId: a, responses: {'200': {description: ok}}}\n    get: {operationId: b, responses: {'200': {description: ok}}}\n";
    let e = openapi::read_text(doc, &OpenApiOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json, "{e}");
    assert!(e.message.contains("duplicate"), "{e}");
    assert!(e.line.is_some());
}

// --------------------------------------------------- huge enums, wide objects

/// `n` enum values (or properties, or arguments) take about `n` times as
/// long as one: `4 * n` must take less than 10 times as long as `n`
/// (quadratic work would take 16 times as long).
fn assert_linear(what: &'static str, n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    within(secs(120), move || {
        f(n / 20); // warm up
        let small = time(|| f(n)).max(Duration::from_millis(50));
        let big = time(|| f(4 * n));
        assert!(big < small * 10, "{what}: {n} took {small:?}, {} took {big:?}", 4 * n);
    });
}

fn enum_tool_json(n: usize) -> String {
    let values: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    mcp(json!({"type": "object", "required": ["e"], "properties": {"e": {"type": "string", "description": "E", "enum": values}}})).to_string()
}

#[test]
fn huge_enums_take_linear_time() {
    assert_linear("enum", 50_000, |n| {
        let text = enum_tool_json(n);
        let imp = read(&text).unwrap();
        let plist = printed(&imp.tools);
        let back = tools_from_elisp(&plist).unwrap();
        assert_eq!(back[0].args[0].schema["enum"].as_array().map(Vec::len), Some(n));
        assert!(validate_elisp(&printed_one(&back[0])).unwrap().is_empty());
        for (_, d) in DIALECT_NAMES {
            // Strict mode's limits (1,000 enum values) are an error, found
            // after the whole schema was made strict.
            if let Err(e) = write_tools(&back, *d) {
                assert!(*d == Dialect::OpenAiStrict && n > 1000 && e.to_string().contains("at most 1000"), "{e}");
            }
        }
        let checker = ArgChecker::new(&back[0]).unwrap();
        assert!(checker.check_text(&format!("{{\"e\": \"v{}\"}}", n - 1)).unwrap().is_empty());
        assert_eq!(checker.check_text("{\"e\": \"nope\"}").unwrap().len(), 1);
        let c = check::check_json(&text, &opts(Format::Auto));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics.first());
        // In Lisp source, as `toolspec check tools.el` and Flymake read it.
        let values: Vec<String> = (0..n).map(|i| format!("\"v{i}\"")).collect();
        let src = format!(
            "(gptel-make-tool :name \"e\" :description \"E.\" :function #'ignore :args (list '(:name \"e\" :type string :description \"E\" :enum [{}])))",
            values.join(" ")
        );
        let c = check::check_elisp(&src);
        assert!(
            !c.unusable && c.diagnostics.iter().all(|d| d.level != check::Level::Error),
            "{:?}",
            c.diagnostics.first()
        );
    });
}

#[test]
fn wide_objects_take_linear_time() {
    assert_linear("properties", 10_000, |n| {
        let props: toolspec::value::Map<String, Value> =
            (0..n).map(|i| (format!("p{i}"), json!({"type": "string", "description": "P"}))).collect();
        let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        let nested = mcp(json!({"type": "object", "properties": {"o": {"type": "object", "description": "O",
            "properties": props, "required": required}}}));
        let imp = read(&nested.to_string()).unwrap();
        let plist = printed(&imp.tools);
        let problems = validate_elisp(&printed_one(&imp.tools[0])).unwrap();
        assert!(problems.iter().all(|p| p.severity != toolspec::Severity::Error), "{:?}", problems.first());
        let back = tools_from_elisp(&plist).unwrap();
        for d in [Dialect::OpenAiStrict, Dialect::Gemini, Dialect::Mcp] {
            // Beyond strict mode's 5,000 properties, an error (after the
            // whole schema was made strict).
            if let Err(e) = write_tools(&back, d) {
                assert!(d == Dialect::OpenAiStrict && n > 5000 && e.to_string().contains("at most 5000"), "{e}");
            }
        }
        let checker = ArgChecker::new(&back[0]).unwrap();
        assert_eq!(checker.check_text("{\"o\": {}}").unwrap().len(), n);
    });
    assert_linear("arguments", 10_000, |n| {
        let props: toolspec::value::Map<String, Value> =
            (0..n).map(|i| (format!("a{i}"), json!({"type": "integer", "description": "A"}))).collect();
        let required: Vec<String> = (0..n).step_by(2).map(|i| format!("a{i}")).collect();
        let doc = mcp(json!({"type": "object", "properties": props, "required": required}));
        let text = doc.to_string();
        let imp = read(&text).unwrap();
        assert_eq!(imp.tools[0].args.len(), n);
        let plist = printed(&imp.tools);
        assert!(validate_elisp(&printed_one(&imp.tools[0]))
            .unwrap()
            .iter()
            .all(|p| p.severity != toolspec::Severity::Error));
        let back = tools_from_elisp(&plist).unwrap();
        for d in [Dialect::OpenAiStrict, Dialect::Gemini, Dialect::Mcp] {
            if let Err(e) = write_tools(&back, d) {
                assert!(d == Dialect::OpenAiStrict && n > 5000 && e.to_string().contains("at most 5000"), "{e}");
            }
        }
        let c = check::check_json(&text, &opts(Format::Auto));
        assert!(c.diagnostics.iter().all(|d| d.level != check::Level::Error), "{:?}", c.diagnostics.first());
    });
}

/// Many warnings, each placed in the text: placing them must not scan the
/// text once per warning.
#[test]
fn many_warnings_are_placed_in_linear_time() {
    assert_linear("warnings", 40_000, |n| {
        // Arguments without a description: a warning each.
        let props: toolspec::value::Map<String, Value> =
            (0..n).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let text = mcp(json!({"type": "object", "properties": props})).to_string();
        let c = check::check_json(&text, &opts(Format::Auto));
        assert!(c.diagnostics.len() >= n, "{}", c.diagnostics.len());
        assert!(c.diagnostics.windows(2).all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column)));
        let last = c.diagnostics.last().unwrap();
        let key = format!("\"p{}\":", n - 1);
        assert_eq!((last.line, last.column), (1, text.find(&key).unwrap() + key.len() + 1), "{last:?}");
    });
}
