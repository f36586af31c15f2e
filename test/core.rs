//! Integration tests of the toolspec core through its public API: readers,
//! writers, round trips (JSON and plist), normalisation, error paths and
//! the plist validator.

use std::time::{Duration, Instant};

use toolspec::json;
use toolspec::plist::{parse_sexp, print_tool, print_tools, tool_from_sexp};
use toolspec::read::{read_bytes, read_str, Format, ReadOptions};
use toolspec::validate::validate;
use toolspec::value::Value;
use toolspec::write::{parameters, write_tool, write_tools, Dialect};
use toolspec::{
    elisp_to_json, imported_to_elisp, tools_from_elisp, validate_elisp, Error, ErrorKind, Imported, Problem, Severity,
    Tool,
};
use Severity::{Error as E, Warning as W};

// ------------------------------------------------------------------ helpers

const DIALECTS: [Dialect; 9] = [
    Dialect::OpenAi,
    Dialect::OpenAiResponses,
    Dialect::OpenAiStrict,
    Dialect::Anthropic,
    Dialect::Gemini,
    Dialect::Ollama,
    Dialect::Bedrock,
    Dialect::Mcp,
    Dialect::JsonSchema,
];

/// Dialects whose schemas are JSON Schema (type unions allowed).
const JSON_SCHEMA_DIALECTS: [Dialect; 7] = [
    Dialect::OpenAi,
    Dialect::OpenAiResponses,
    Dialect::Anthropic,
    Dialect::Ollama,
    Dialect::Bedrock,
    Dialect::Mcp,
    Dialect::JsonSchema,
];

fn opts(format: Format) -> ReadOptions<'static> {
    ReadOptions { format, ..ReadOptions::default() }
}

fn import_as(doc: &Value, format: Format) -> Imported {
    read_str(&doc.to_string(), &opts(format)).unwrap_or_else(|e| panic!("reading {doc}: {e}"))
}

fn import(doc: &Value) -> Imported {
    import_as(doc, Format::Auto)
}

/// The single tool `doc` holds.
fn tool(doc: &Value) -> Tool {
    let mut imp = import(doc);
    assert_eq!(imp.tools.len(), 1, "expected one tool in {doc}");
    imp.tools.remove(0)
}

fn read_err_opts(text: &str, o: &ReadOptions) -> Error {
    match read_str(text, o) {
        Ok(imp) => panic!("expected an error, read {} tool(s)", imp.tools.len()),
        Err(e) => e,
    }
}

fn read_err(text: &str) -> Error {
    read_err_opts(text, &ReadOptions::default())
}

fn names(imp: &Imported) -> Vec<&str> {
    imp.tools.iter().map(|t| t.name.as_str()).collect()
}

fn write(t: &Tool, d: Dialect) -> Value {
    write_tool(t, d).unwrap_or_else(|e| panic!("writing {} as {d:?}: {e}", t.name))
}

fn params(t: &Tool, d: Dialect) -> Value {
    Value::Object(parameters(t, d))
}

/// Property `name` of the root parameters schema in dialect `d`.
fn prop(t: &Tool, d: Dialect, name: &str) -> Value {
    params(t, d)["properties"][name].clone()
}

fn example_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(file)
}

fn example(file: &str) -> Imported {
    let bytes = std::fs::read(example_path(file)).unwrap();
    let stem = file.trim_end_matches(".json");
    let o = ReadOptions { default_name: Some(stem), ..ReadOptions::default() };
    read_bytes(&bytes, &o).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn example_json(file: &str) -> Value {
    serde_json::from_slice(&std::fs::read(example_path(file)).unwrap()).unwrap()
}

fn plist_text(tools: &[Tool]) -> String {
    let mut out = String::new();
    print_tools(tools, &mut out);
    out
}

/// Tools through their printed plist and back.
fn via_plist(tools: &[Tool]) -> Vec<Tool> {
    let text = plist_text(tools);
    tools_from_elisp(&text).unwrap_or_else(|e| panic!("re-reading {text}: {e}"))
}

/// Every object anywhere in `v`, parents first.
fn objects(v: &Value) -> Vec<&toolspec::value::Map<String, Value>> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                out.push(m);
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out
}

fn assert_no_key(v: &Value, key: &str) {
    assert!(objects(v).iter().all(|m| !m.contains_key(key)), "\"{key}\" found in {v}");
}

/// Every schema node below and including `node`, with its path (schema
/// keywords only: property names and data values are not visited).
fn schema_nodes<'v>(node: &'v Value, path: &str, out: &mut Vec<(String, &'v toolspec::value::Map<String, Value>)>) {
    let Value::Object(m) = node else { return };
    out.push((path.to_string(), m));
    for (k, v) in m {
        let p = format!("{path}.{k}");
        match (k.as_str(), v) {
            ("properties" | "$defs" | "definitions", Value::Object(props)) => {
                for (name, sub) in props {
                    schema_nodes(sub, &format!("{p}.{name}"), out);
                }
            }
            ("items" | "additionalProperties" | "not", Value::Object(_)) => schema_nodes(v, &p, out),
            ("anyOf" | "oneOf" | "allOf" | "items" | "prefixItems", Value::Array(list)) => {
                for (i, sub) in list.iter().enumerate() {
                    schema_nodes(sub, &format!("{p}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
}

fn all_schema_nodes(root: &Value) -> Vec<(String, &toolspec::value::Map<String, Value>)> {
    let mut out = Vec::new();
    schema_nodes(root, "", &mut out);
    out
}

fn warning_at<'a>(imp: &'a Imported, path: &str) -> &'a Problem {
    imp.warnings
        .iter()
        .find(|w| w.path == path)
        .unwrap_or_else(|| panic!("no warning at {path}; warnings: {:?}", imp.warnings))
}

fn timed<T>(limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    assert!(start.elapsed() < limit, "took {:?}", start.elapsed());
    out
}

/// An MCP tool whose input schema is `schema`.
fn mcp(schema: Value) -> Value {
    json!({"name": "probe", "description": "Probe.", "inputSchema": schema})
}

/// An object schema with the given properties and nothing required.
fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

// ------------------------------------------------------------------ readers

#[test]
fn reads_openai_chat_tool() {
    let t = tool(&json!({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                       "required": ["city"]}, "strict": false}}));
    assert_eq!(t.name, "get_weather");
    assert_eq!(t.description.as_deref(), Some("Weather."));
    let args: Vec<(&str, bool)> = t.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(args, [("city", false), ("unit", true)]);
    assert_eq!(t.extra.get("strict"), Some(&json!(false)));
}

#[test]
fn reads_each_single_tool_format() {
    let schema = object(json!({"q": {"type": "string", "description": "Query."}}));
    let cases = [
        json!({"name": "legacy", "description": "d", "parameters": schema}),
        json!({"type": "function", "name": "responses", "description": "d", "parameters": schema}),
        json!({"name": "anthropic", "description": "d", "input_schema": schema}),
        json!({"name": "mcp", "description": "d", "inputSchema": schema}),
        json!({"name": "gemini", "description": "d", "parameters": {"type": "OBJECT", "properties": {"q": {"type": "STRING", "description": "Query."}}}}),
        json!({"name": "gemini_json", "description": "d", "parametersJsonSchema": schema}),
        json!({"toolSpec": {"name": "bedrock", "description": "d", "inputSchema": {"json": schema}}}),
        json!({"title": "json_schema", "description": "d", "type": "object", "properties": {"q": {"type": "string", "description": "Query."}}}),
    ];
    for doc in &cases {
        let imp = import(doc);
        let t = &imp.tools[0];
        assert_eq!(t.description.as_deref(), Some("d"), "{doc}");
        assert_eq!(t.args.len(), 1, "{doc}");
        assert_eq!(t.args[0].schema["type"], "string", "{doc}");
        assert_eq!(t.args[0].schema["description"], "Query.", "{doc}");
        assert!(imp.warnings.is_empty(), "{doc}: {:?}", imp.warnings);
    }
    let got: Vec<String> = cases.iter().map(|d| tool(d).name).collect();
    assert_eq!(got, ["legacy", "responses", "anthropic", "mcp", "gemini", "gemini_json", "bedrock", "json_schema"]);
}

#[test]
fn reads_wrappers_with_paths() {
    let oa = |n: &str| json!({"type": "function", "function": {"name": n, "parameters": object(json!({}))}});
    let gd = |n: &str| json!({"name": n, "parameters": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}});
    let bd = |n: &str| json!({"toolSpec": {"name": n, "inputSchema": {"json": object(json!({}))}}});
    let legacy = |n: &str| json!({"name": n, "parameters": object(json!({}))});
    let cases: Vec<(Value, Vec<&str>, Vec<&str>)> = vec![
        (json!([oa("a"), mcp(object(json!({})))]), vec!["a", "probe"], vec!["[0]", "[1]"]),
        (json!({"tools": [oa("a"), oa("b")]}), vec!["a", "b"], vec!["tools[0]", "tools[1]"]),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [mcp(object(json!({})))]}}),
            vec!["probe"],
            vec!["result.tools[0]"],
        ),
        (
            json!({"functionDeclarations": [gd("g1"), gd("g2")]}),
            vec!["g1", "g2"],
            vec!["functionDeclarations[0]", "functionDeclarations[1]"],
        ),
        (
            json!({"tools": [{"functionDeclarations": [gd("g1")]}, {"functionDeclarations": [gd("g2")]}]}),
            vec!["g1", "g2"],
            vec!["tools[0].functionDeclarations[0]", "tools[1].functionDeclarations[0]"],
        ),
        (json!({"tools": [bd("b1"), bd("b2")]}), vec!["b1", "b2"], vec!["tools[0]", "tools[1]"]),
        (json!({"toolConfig": {"tools": [bd("b1")]}}), vec!["b1"], vec!["toolConfig.tools[0]"]),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [oa("a")], "tool_choice": "auto"}),
            vec!["a"],
            vec!["tools[0]"],
        ),
        (json!({"functions": [legacy("f1"), legacy("f2")]}), vec!["f1", "f2"], vec!["functions[0]", "functions[1]"]),
    ];
    for (doc, want_names, want_paths) in &cases {
        let imp = import(doc);
        assert_eq!(names(&imp), *want_names, "{doc}");
        assert_eq!(imp.paths, *want_paths, "{doc}");
    }
}

#[test]
fn gemini_function_declarations_read_as_gemini() {
    let imp = import(&json!({"tools": [{"functionDeclarations": [{"name": "g",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer", "nullable": true}}}}]}]}));
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    assert_eq!(prop(&imp.tools[0], Dialect::Gemini, "n"), json!({"type": "integer", "nullable": true}));
}

#[test]
fn forced_format_overrides_detection() {
    let doc = json!({"name": "lookup", "description": "d",
        "parameters": {"type": "object", "properties": {"q": {"type": "STRING"}}}});
    // Detected as Gemini: its upper-case type names are no surprise.
    assert!(import(&doc).warnings.is_empty());
    // Forced as OpenAI legacy functions: the same name is non-standard.
    let forced = import_as(&doc, Format::OpenAiFunctions);
    assert_eq!(forced.tools[0].args[0].schema["type"], "string");
    let w = warning_at(&forced, "parameters.properties.q.type");
    assert!(w.message.contains("\"STRING\""), "{}", w.message);
    // Forcing a format the document is not in is a shape error.
    let oa = json!({"type": "function", "function": {"name": "x"}});
    let e = read_err_opts(&oa.to_string(), &opts(Format::Anthropic));
    assert_eq!(e.kind, ErrorKind::Shape);
    // A bare schema forced as JSON Schema, named by `default_name`.
    let o = ReadOptions { format: Format::JsonSchema, default_name: Some("from_file"), ..ReadOptions::default() };
    let imp = read_str(&object(json!({"name": {"type": "string"}})).to_string(), &o).unwrap();
    assert_eq!(names(&imp), ["from_file"]);
    assert_eq!(imp.tools[0].args[0].name, "name");
}

#[test]
fn format_names_parse() {
    assert_eq!(Format::parse("ollama").unwrap(), Format::OpenAi);
    assert_eq!(Format::parse("openai-responses").unwrap(), Format::OpenAiResponses);
    assert_eq!(Format::parse("bogus").unwrap_err().kind, ErrorKind::UnsupportedFormat);
    assert_eq!(Dialect::parse("openai-strict").unwrap(), Dialect::OpenAiStrict);
    assert_eq!(Dialect::parse("bogus").unwrap_err().kind, ErrorKind::UnsupportedFormat);
}

#[test]
fn bare_schema_without_title_needs_a_name() {
    let e = read_err(&object(json!({"a": {"type": "string"}})).to_string());
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("title"), "{}", e.message);
}

#[test]
fn reads_every_example_file() {
    let cases: [(&str, &[&str]); 7] = [
        ("anthropic.json", &["record_summary", "get_weather"]),
        ("bedrock.json", &["get_stock_quote", "convert_currency"]),
        ("gemini.json", &["find_restaurants", "book_table"]),
        ("json-schema.json", &["translate_text"]),
        ("mcp-tools-list.json", &["create_issue", "read_text_file"]),
        ("openai-chat.json", &["create_calendar_event", "list_unread_messages"]),
        ("openai-responses.json", &["search_documents", "fetch_document"]),
    ];
    for (file, want) in cases {
        let imp = example(file);
        assert_eq!(names(&imp), want, "{file}");
        assert!(imp.warnings.is_empty(), "{file}: {:?}", imp.warnings);
        assert!(imp.tools.iter().all(|t| t.description.is_some()), "{file}");
    }
}

#[test]
fn example_details_survive_reading() {
    let mcp = example("mcp-tools-list.json");
    // Written back as it was read (a `$ref`), inlined in the model.
    assert_eq!(
        prop(&mcp.tools[0], Dialect::Mcp, "repository"),
        json!({"$ref": "#/$defs/repo_ref", "description": "Repository the issue is filed in."})
    );
    let repo = Value::Object(mcp.tools[0].args[0].schema.clone());
    assert_eq!(repo["description"], "Repository the issue is filed in.");
    assert_eq!(repo["required"], json!(["owner", "name"]));
    assert_eq!(repo["additionalProperties"], json!(false));
    assert_eq!(mcp.tools[0].extra["title"], "Create Issue");
    assert_eq!(prop(&mcp.tools[1], Dialect::Mcp, "start_line")["type"], json!(["integer", "null"]));
    let js = example("json-schema.json");
    assert_eq!(js.tools[0].schema_extra.get("additionalProperties"), Some(&json!(false)));
    assert_eq!(js.tools[0].schema_extra["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let gem = example("gemini.json");
    assert_eq!(prop(&gem.tools[0], Dialect::Gemini, "near")["properties"]["lat"]["type"], "number");
    let oa = example("openai-chat.json");
    assert!(oa.tools[1].args.is_empty());
}

#[test]
fn examples_are_fixed_points_of_read_and_write() {
    let cases = [
        ("anthropic.json", Dialect::Anthropic),
        ("bedrock.json", Dialect::Bedrock),
        ("gemini.json", Dialect::Gemini),
        ("json-schema.json", Dialect::JsonSchema),
        ("mcp-tools-list.json", Dialect::Mcp),
        ("openai-chat.json", Dialect::OpenAi),
        ("openai-responses.json", Dialect::OpenAiResponses),
    ];
    for (file, d) in cases {
        let once = write_tools(&example(file).tools, d).unwrap();
        let again = write_tools(&import(&once).tools, d).unwrap();
        assert_eq!(once, again, "{file} as {d:?}");
    }
}

// ------------------------------------------------------------------ writers

fn small_tool() -> Tool {
    tool(&json!({"name": "get_weather", "description": "Get the weather.", "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City."},
                       "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"]}}))
}

#[test]
fn writes_small_tool_exactly_in_every_dialect() {
    let p = json!({"type": "object",
        "properties": {"city": {"type": "string", "description": "City."}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"]});
    let strict = json!({"type": "object",
        "properties": {"city": {"type": "string", "description": "City."},
                       "unit": {"type": ["string", "null"], "enum": ["c", "f", null]}},
        "required": ["city", "unit"], "additionalProperties": false});
    let chat = json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather.", "parameters": p}});
    let expected = [
        (Dialect::OpenAi, chat.clone()),
        (Dialect::Ollama, chat),
        (
            Dialect::OpenAiStrict,
            json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather.",
                "parameters": strict, "strict": true}}),
        ),
        (
            Dialect::OpenAiResponses,
            json!({"type": "function", "name": "get_weather", "description": "Get the weather.", "parameters": p, "strict": false}),
        ),
        (Dialect::Anthropic, json!({"name": "get_weather", "description": "Get the weather.", "input_schema": p})),
        (Dialect::Gemini, json!({"name": "get_weather", "description": "Get the weather.", "parameters": p})),
        (
            Dialect::Bedrock,
            json!({"toolSpec": {"name": "get_weather", "description": "Get the weather.", "inputSchema": {"json": p}}}),
        ),
        (Dialect::Mcp, json!({"name": "get_weather", "description": "Get the weather.", "inputSchema": p})),
        (
            Dialect::JsonSchema,
            json!({"title": "get_weather", "description": "Get the weather.", "type": "object",
                "properties": p["properties"], "required": ["city"]}),
        ),
    ];
    let t = small_tool();
    for (d, want) in expected {
        assert_eq!(write(&t, d), want, "{d:?}");
    }
}

#[test]
fn no_argument_tool_shape_per_dialect() {
    let t =
        tool(&json!({"name": "ping", "description": "Ping.", "input_schema": {"type": "object", "properties": {}}}));
    assert!(t.args.is_empty());
    let empty = json!({"type": "object", "properties": {}});
    for d in DIALECTS {
        let out = write(&t, d);
        let schema = match d {
            Dialect::OpenAi | Dialect::Ollama | Dialect::OpenAiStrict => &out["function"]["parameters"],
            Dialect::OpenAiResponses => &out["parameters"],
            Dialect::Anthropic => &out["input_schema"],
            Dialect::Mcp => &out["inputSchema"],
            Dialect::Bedrock => &out["toolSpec"]["inputSchema"]["json"],
            Dialect::JsonSchema => &out,
            Dialect::Gemini => {
                assert_eq!(out, json!({"name": "ping", "description": "Ping."}));
                continue;
            }
            other => panic!("no expectation for dialect {}", other.name()),
        };
        match d {
            Dialect::OpenAiStrict => {
                assert_eq!(
                    *schema,
                    json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
                )
            }
            Dialect::JsonSchema => {
                assert_eq!(
                    *schema,
                    json!({"title": "ping", "description": "Ping.", "type": "object", "properties": {}})
                )
            }
            _ => assert_eq!(*schema, empty, "{d:?}"),
        }
    }
}

#[test]
fn write_tools_document_shapes() {
    let tools = [small_tool(), small_tool()];
    for d in DIALECTS {
        let doc = write_tools(&tools, d).unwrap();
        let list = match d {
            Dialect::Mcp | Dialect::Bedrock => doc["tools"].as_array(),
            Dialect::Gemini => doc["functionDeclarations"].as_array(),
            _ => doc.as_array(),
        };
        let list = list.unwrap_or_else(|| panic!("{d:?}: {doc}"));
        assert_eq!(list.len(), 2, "{d:?}");
        assert_eq!(list[0], write(&tools[0], d), "{d:?}");
        if !doc.is_array() {
            assert_eq!(doc.as_object().unwrap().len(), 1, "{d:?}: {doc}");
        }
        // Every document reads back as the same two tools.
        assert_eq!(names(&import(&doc)), ["get_weather", "get_weather"], "{d:?}");
    }
}

#[test]
fn nameless_tool_cannot_be_written() {
    let e = write_tool(&Tool::default(), Dialect::OpenAi).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Write);
}

#[test]
fn elisp_to_json_one_or_many() {
    let one = "(:name \"a\" :description \"d\" :args ((:name \"x\" :type string :description \"x\")))";
    let v: Value = serde_json::from_str(&elisp_to_json(one, Dialect::Anthropic, false, false).unwrap()).unwrap();
    assert_eq!(v["input_schema"]["required"], json!(["x"]));
    let many: Value = serde_json::from_str(&elisp_to_json(one, Dialect::Mcp, true, true).unwrap()).unwrap();
    assert_eq!(many["tools"][0]["name"], "a");
    let two = format!("({one} {one})");
    let v: Value = serde_json::from_str(&elisp_to_json(&two, Dialect::OpenAi, false, false).unwrap()).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(2));
}

#[test]
fn serialised_tools_write_as_printed_ones_compact_and_indented() {
    // Enough tools to be written on several threads.
    let n = 300;
    let serialised = |i: usize, name: &str| {
        format!(
            r#"{{"name":"{name}","description":"D {i} é","args":[{{"name":"a","type":"string","description":"x\ny"}},{{"name":"n","type":"integer","optional":true}},{{"name":"e","type":"string","enum":["x","y"]}},{{"name":"o","type":"object","properties":{{"p":{{"type":"number"}}}},"required":["p"]}}]}}"#
        )
    };
    let printed = |i: usize, name: &str| {
        format!(
            r#"(:name "{name}" :description "D {i} é" :args ((:name "a" :type "string" :description "x
y") (:name "n" :type "integer" :optional t) (:name "e" :type "string" :enum ["x" "y"]) (:name "o" :type "object" :properties (:p (:type "number")) :required ["p"])))"#
        )
    };
    let both = |names: &dyn Fn(usize) -> String| {
        let s: Vec<String> = (0..n).map(|i| serialised(i, &names(i))).collect();
        let p: Vec<String> = (0..n).map(|i| printed(i, &names(i))).collect();
        (format!("[{}]", s.join(",")), format!("({})", p.join(" ")))
    };
    let (s, p) = both(&|i| format!("t{i}"));
    for &(_, d) in toolspec::write::DIALECT_NAMES {
        for pretty in [false, true] {
            assert_eq!(
                toolspec::serialized_plists_to_json(&s, d, pretty).unwrap(),
                elisp_to_json(&p, d, true, pretty).unwrap(),
                "{d:?} {pretty}"
            );
        }
    }
    // Errors are those of the printed tools, placed at the same item: a
    // tool without a name, and a tool whose name is not a string after it.
    let (s, p) = both(&|i| match i {
        150 => String::new(),
        250 => "BAD".into(),
        _ => format!("t{i}"),
    });
    let bad = (s.replace(r#""name":"BAD""#, r#""name":7"#), p.replace(r#":name "BAD""#, ":name 7"));
    let (s2, p2) = both(&|i| if i == 250 { "BAD".into() } else { format!("t{i}") });
    let bad_later = (s2.replace(r#""name":"BAD""#, r#""name":7"#), p2.replace(r#":name "BAD""#, ":name 7"));
    for ((s, p), at) in [(bad, "[150]"), (bad_later, "[250]")] {
        for pretty in [false, true] {
            let e = toolspec::serialized_plists_to_json(&s, Dialect::OpenAi, pretty).unwrap_err();
            let printed = elisp_to_json(&p, Dialect::OpenAi, true, pretty).unwrap_err();
            assert!(e.to_string().starts_with(at), "{e}");
            assert_eq!((e.kind, e.to_string()), (printed.kind, printed.to_string()), "{pretty}");
        }
    }
}

// -------------------------------------------------------------- round trips

/// The tool's schema-bearing JSON as written in its own dialect equals
/// the input.
fn assert_json_round_trip(input: &Value, d: Dialect, expected: &Value) {
    let imp = import(input);
    let out = write_tools(&imp.tools, d).unwrap();
    assert_eq!(&out, expected, "{d:?}");
}

#[test]
fn json_round_trips_per_dialect() {
    let schema = json!({"type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1, "description": "Query."},
            "limit": {"type": ["integer", "null"], "minimum": 1, "default": 10},
            "filters": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                        "required": ["tags"], "additionalProperties": false},
            "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "integer"}]}
        },
        "required": ["q"],
        "additionalProperties": false});
    let docs = [
        (
            Dialect::OpenAi,
            json!([{"type": "function", "function": {"name": "s", "description": "d", "parameters": schema, "strict": false}}]),
        ),
        (
            Dialect::OpenAiResponses,
            json!([{"type": "function", "name": "s", "description": "d", "parameters": schema, "strict": false}]),
        ),
        (Dialect::Anthropic, json!([{"name": "s", "description": "d", "input_schema": schema}])),
        (
            Dialect::Bedrock,
            json!({"tools": [{"toolSpec": {"name": "s", "description": "d", "inputSchema": {"json": schema}}}]}),
        ),
        (
            Dialect::Mcp,
            json!({"tools": [{"name": "s", "title": "Search", "description": "d", "inputSchema": schema,
                "outputSchema": {"type": "object", "properties": {"hits": {"type": "integer"}}, "required": ["hits"]},
                "annotations": {"readOnlyHint": true, "openWorldHint": false}}]}),
        ),
    ];
    for (d, doc) in &docs {
        assert_json_round_trip(doc, *d, doc);
    }
    let mut bare = schema.clone();
    bare["title"] = json!("s");
    bare["description"] = json!("d");
    bare["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    assert_json_round_trip(&bare, Dialect::JsonSchema, &json!([bare]));
}

#[test]
fn gemini_round_trip_lowercases_types() {
    let upper = json!({"functionDeclarations": [{"name": "g", "description": "d", "parameters": {
        "type": "OBJECT",
        "properties": {
            "n": {"type": "INTEGER", "nullable": true, "minimum": 1, "format": "int32"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING", "enum": ["a", "b"]}},
            "near": {"type": "OBJECT", "properties": {"lat": {"type": "NUMBER"}}, "required": ["lat"]}
        },
        "required": ["n"]}}]});
    let lower: Value = serde_json::from_str(
        &upper
            .to_string()
            .replace("\"OBJECT\"", "\"object\"")
            .replace("\"INTEGER\"", "\"integer\"")
            .replace("\"ARRAY\"", "\"array\"")
            .replace("\"STRING\"", "\"string\"")
            .replace("\"NUMBER\"", "\"number\""),
    )
    .unwrap();
    assert_json_round_trip(&upper, Dialect::Gemini, &lower);
    assert!(import(&upper).warnings.is_empty());
}

/// Properties whose names need escaping, or look like numbers, symbols
/// or syntax, in elisp.
fn odd_names() -> Value {
    let names = [
        "a:b", "#x", "a;b", "?q", "-1", "1.5", "1e5", "nil", "t", "a.b", ".", "'q", "\"", "\\", "", ":x", "a\u{a0}b",
        "x\ny",
    ];
    Value::Object(names.iter().map(|n| (n.to_string(), json!({"type": "string"}))).collect())
}

/// A schema with awkward names and values for the plist printer.
fn tricky_tool() -> Value {
    json!({"name": "tricky", "description": "Quotes \" backslash \\ newline\n tab\t unicode é ☃ 😀", "input_schema": {
        "type": "object",
        "properties": {
            "a b": {"type": "string", "description": "space"},
            "x(y)": {"type": "string", "description": "parens"},
            "12": {"type": "integer", "default": -7},
            "é": {"type": "string", "default": "ça \"va\" \\ ok\nnext\tline ☃ 😀"},
            "type": {"type": "string", "enum": ["a", "b"], "description": "named type"},
            "optional": {"type": "boolean", "default": false},
            "properties": {"type": "object", "properties": {"inner": {"type": "number", "default": 1.0}},
                           "required": ["inner"]},
            "numbers": {"type": "number", "minimum": -0.5, "maximum": 1e30, "default": 0.25,
                        "examples": [1.0, -3, 1e-7, 12345678901234567890u64]},
            "flags": {"type": "boolean", "default": true, "examples": [true, false]},
            "maybe": {"type": ["string", "null"], "default": null},
            "fixed": {"type": "string", "const": "only"},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}},
            "points": {"type": "array", "items": {"type": "object",
                "properties": {"lat": {"type": "number"}, "lng": {"type": "number"},
                               "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}},
                "required": ["lat"]}},
            "choice": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "enum": [1, 2]}]},
            "data": {"type": "object", "properties": {}, "default": {"k": [1, "two", null, false, {"n": {}}]}},
            "empty": {"type": "array", "items": {"type": "string"}, "default": []},
            "odd names": {"type": "object", "properties": odd_names()}
        },
        "required": ["a b", "12", "type", "points"],
        "additionalProperties": false}})
}

#[test]
fn plist_round_trip_keeps_every_dialect_output() {
    let tools = import(&json!([tricky_tool(), small_tool_json(), example_json("mcp-tools-list.json")])).tools;
    let back = via_plist(&tools);
    assert_eq!(back, tools);
    for d in DIALECTS {
        assert_eq!(write_tools(&back, d).unwrap(), write_tools(&tools, d).unwrap(), "{d:?}");
    }
}

fn small_tool_json() -> Value {
    write(&small_tool(), Dialect::Anthropic)
}

#[test]
fn plist_round_trip_of_every_example() {
    for file in [
        "anthropic.json",
        "bedrock.json",
        "gemini.json",
        "json-schema.json",
        "openai-chat.json",
        "openai-responses.json",
    ] {
        let tools = example(file).tools;
        assert_eq!(via_plist(&tools), tools, "{file}");
    }
}

#[test]
fn plist_keeps_root_additional_properties_false() {
    let t = &via_plist(&import(&tricky_tool()).tools)[0];
    assert_eq!(t.schema_extra.get("additionalProperties"), Some(&json!(false)));
    assert_eq!(params(t, Dialect::Anthropic)["additionalProperties"], json!(false));
    let text = plist_text(std::slice::from_ref(t));
    assert!(text.contains(":schema-extra (:additionalProperties :json-false)"), "{text}");
}

#[test]
fn plist_prints_the_format_rules() {
    let t = tool(&json!({"name": "w", "description": "d", "input_schema": {"type": "object",
        "properties": {"unit": {"type": "string", "enum": ["c", "f"]}, "n": {"type": ["integer", "null"]}}, "required": ["n"]}}));
    let mut out = String::new();
    print_tool(&t, &mut out);
    assert!(out.contains("(:name \"unit\" :type string :enum [\"c\" \"f\"] :optional t)"), "{out}");
    assert!(out.contains(":type integer :nullable t"), "{out}");
    let again = tool_from_sexp(&parse_sexp(&out).unwrap()).unwrap();
    assert_eq!(again, t);
}

/// The `:default` of an argument whose value is printed as `printed`.
fn default_of(printed: &str) -> toolspec::Result<Value> {
    let text = format!("(:name \"n\" :args ((:name \"x\" :type number :default {printed})))");
    Ok(tools_from_elisp(&text)?[0].args[0].schema["default"].clone())
}

#[test]
fn plist_reads_emacs_printed_numbers() {
    // As `prin1` prints them: exponents with a sign and at least two digits.
    for (printed, value) in [
        ("1e+30", json!(1e30)),
        ("1e-07", json!(1e-7)),
        ("-2.5e+16", json!(-2.5e16)),
        ("0.1", json!(0.1)),
        ("-1.5", json!(-1.5)),
        ("2.0", json!(2.0)),
        ("[1e5 7]", json!([1e5, 7])),
    ] {
        assert_eq!(default_of(printed).unwrap_or_else(|e| panic!("{printed}: {e}")), value, "{printed}");
    }
    // No JSON form: an error, never a panic or a null.
    for bad in ["1.0e+INF", "-1.0e+INF", "0.0e+NaN"] {
        assert_eq!(default_of(bad).unwrap_err().kind, ErrorKind::Plist, "{bad}");
    }
    // A bignum does not panic.
    let _ = default_of("123456789012345678901234567890");
    // Only numbers are rewritten: not symbols, keywords or strings.
    let text = r#"(:name "n" :args ((:name "x" :type string :enum ["1e5"] :a1e5 x1e5)))"#;
    let s = &tools_from_elisp(text).unwrap()[0].args[0].schema;
    assert_eq!((&s["enum"], &s["a1e5"]), (&json!(["1e5"]), &json!("x1e5")));
}

#[test]
fn plist_floats_are_exact() {
    let floats =
        [0.1, 0.2, 0.3, 1.1, 2.675, std::f64::consts::PI, 2.5e-8, 1e-7, 1e16, 1e30, f64::MAX, 5e-324, -0.5, -1e-300];
    let t = tool(&mcp(object(json!({"x": {"type": "number", "examples": floats}}))));
    let back = via_plist(std::slice::from_ref(&t));
    assert_eq!(back[0].args[0].schema["examples"], json!(floats));
}

#[test]
fn imported_to_elisp_reads_back() {
    let imp = import(&json!({"tools": [mcp(object(json!({"a": {"type": "str"}})))]}));
    let text = imported_to_elisp(&imp);
    let sexp = parse_sexp(&text).unwrap();
    let v = sexp.to_vec().expect("a list of three");
    assert_eq!(v.len(), 3);
    let tools = v[0].to_vec().expect("a list of tools");
    assert_eq!(tools.len(), 1);
    assert_eq!(tool_from_sexp(&tools[0]).unwrap(), imp.tools[0]);
    assert!(text.contains("(warning \"tools[0].inputSchema.properties.a.type\" "), "{text}");
    assert!(text.ends_with("(\"tools[0]\"))"), "{text}");
}

// ------------------------------------------------- normalisation, warnings

#[test]
fn non_standard_type_names_map_with_warnings() {
    let doc = json!([{"type": "function", "function": {"name": "t", "parameters": object(json!({
        "a": {"type": "str"}, "b": {"type": "int"}, "c": {"type": "float"}, "d": {"type": "bool"},
        "e": {"type": "dict", "properties": {"f": {"type": "list", "items": {"type": "String"}}}}}))}}]);
    let imp = import(&doc);
    let base = "[0].function.parameters.properties";
    let cases = [
        ("a", "str", "string"),
        ("b", "int", "integer"),
        ("c", "float", "number"),
        ("d", "bool", "boolean"),
        ("e", "dict", "object"),
        ("e.properties.f", "list", "array"),
        ("e.properties.f.items", "String", "string"),
    ];
    for (p, from, to) in cases {
        let w = warning_at(&imp, &format!("{base}.{p}.type"));
        assert_eq!(w.severity, Severity::Warning);
        assert!(w.message.contains(&format!("\"{from}\" read as \"{to}\"")), "{}", w.message);
    }
    assert_eq!(imp.warnings.len(), cases.len());
    let f = &prop(&imp.tools[0], Dialect::OpenAi, "e")["properties"]["f"];
    assert_eq!(*f, json!({"type": "array", "items": {"type": "string"}}));
}

#[test]
fn unknown_type_names_are_no_type_constraint() {
    // Names that are no JSON type (a catalog's `any`, an empty one, a
    // Java class) constrain nothing, with a warning at their path; the
    // Python- and Java-flavoured names of JSON types still map.
    let imp = import(&mcp(object(json!({
        "a": {"type": "any", "description": "A."},
        "b": {"type": ""},
        "c": {"type": "ArrayList"},
        "d": {"type": ["widget", "null"]},
        "e": {"type": "str"},
        "f": {"type": "array", "items": {"type": "Object[]"}}}))));
    let t = &imp.tools[0];
    for d in JSON_SCHEMA_DIALECTS {
        assert_eq!(prop(t, d, "a"), json!({"description": "A."}), "{d:?}");
        for name in ["b", "c", "d"] {
            assert_eq!(prop(t, d, name), json!({}), "{name} in {d:?}");
        }
        assert_eq!(prop(t, d, "e"), json!({"type": "string"}), "{d:?}");
        assert_eq!(prop(t, d, "f"), json!({"type": "array", "items": {}}), "{d:?}");
    }
    for (at, name) in [("a", "any"), ("b", ""), ("c", "ArrayList"), ("d.type[0]", "widget"), ("f.items", "Object[]")] {
        let path = format!("inputSchema.properties.{at}{}", if at.contains('.') { "" } else { ".type" });
        let path = if at == "f.items" { format!("inputSchema.properties.{at}.type") } else { path };
        let w = warning_at(&imp, &path);
        assert!(w.message.contains(&format!("unknown type \"{name}\": read as no type constraint")), "{}", w.message);
    }
    assert!(warning_at(&imp, "inputSchema.properties.e.type").message.contains("non-standard type name \"str\""));
    // A typo says what was probably meant; other names do not guess.
    let typos = import(&mcp(object(json!({"x": {"type": "strng"}, "y": {"type": "integr"}, "z": {"type": "Bool"}}))));
    for (at, hint) in [("x", "string"), ("y", "integer")] {
        let w = warning_at(&typos, &format!("inputSchema.properties.{at}.type"));
        assert!(
            w.message.contains(&format!("(did you mean \"{hint}\"?): read as no type constraint")),
            "{}",
            w.message
        );
    }
    assert!(!warning_at(&imp, "inputSchema.properties.f.items.type").message.contains("did you mean"));
    // The plist has no :type for them, and gives them back without one.
    let mut printed = String::new();
    print_tool(t, &mut printed);
    assert!(printed.contains("(:name \"a\" :description \"A.\" :optional t)"), "{printed}");
    assert!(printed.contains("(:name \"b\" :optional t)"), "{printed}");
    let back = &toolspec::tools_from_elisp(&printed).unwrap()[0];
    assert_eq!(write_tool(back, Dialect::Mcp).unwrap(), write_tool(t, Dialect::Mcp).unwrap());
}

#[test]
fn gemini_upper_case_types_read_without_warning() {
    let imp = example("gemini.json");
    assert!(imp.warnings.is_empty());
    assert_eq!(
        prop(&imp.tools[1], Dialect::Gemini, "dietary_needs"),
        json!({"type": "array", "items": {"type": "string"}, "description": "Allergies or diets the kitchen should know about."})
    );
}

#[test]
fn null_unions_become_nullable_and_back() {
    let t = tool(&mcp(object(json!({"n": {"type": ["integer", "null"]}, "s": {"type": ["null", "string"]}}))));
    assert_eq!(t.args[0].schema.get("nullable"), Some(&json!(true)));
    assert_eq!(t.args[0].schema["type"], "integer");
    for d in JSON_SCHEMA_DIALECTS {
        assert_eq!(prop(&t, d, "n")["type"], json!(["integer", "null"]), "{d:?}");
        assert_eq!(prop(&t, d, "s")["type"], json!(["string", "null"]), "{d:?}");
        assert!(prop(&t, d, "n").get("nullable").is_none(), "{d:?}");
    }
    assert_eq!(prop(&t, Dialect::Gemini, "n"), json!({"type": "integer", "nullable": true}));
    assert_eq!(prop(&t, Dialect::Gemini, "s"), json!({"type": "string", "nullable": true}));
}

#[test]
fn multi_type_unions_stay_unions() {
    let imp = import(&mcp(object(
        json!({"v": {"type": ["boolean", "string"]}, "w": {"type": ["string", "integer", "null"]}}),
    )));
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    let t = &imp.tools[0];
    for d in JSON_SCHEMA_DIALECTS {
        assert_eq!(prop(t, d, "v"), json!({"type": ["boolean", "string"]}), "{d:?}");
    }
    assert_eq!(prop(t, Dialect::Anthropic, "w"), json!({"type": ["string", "integer", "null"]}));
    // Gemini takes no type list: its writer makes it one.
    assert_eq!(
        prop(t, Dialect::Gemini, "w"),
        json!({"nullable": true, "anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    // The plist holds the union as strings, which gptel sends as they are.
    let mut printed = String::new();
    print_tool(t, &mut printed);
    assert!(printed.contains(":type [\"boolean\" \"string\"]"), "{printed}");
    assert_eq!(toolspec::validate_tool(t).iter().filter(|p| p.severity == E).count(), 0);
    let back = &toolspec::tools_from_elisp(&printed).unwrap()[0];
    assert_eq!(write_tool(back, Dialect::Mcp).unwrap(), write_tool(t, Dialect::Mcp).unwrap());
}

#[test]
fn missing_types_stay_missing() {
    let doc = mcp(json!({"properties": {
        "s": {"description": "x"},
        "o": {"properties": {"k": {"type": "string"}}},
        "a": {"items": {"type": "string"}},
        "i": {"enum": [1, 2]},
        "n": {"minimum": 0.5},
        "c": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}));
    let imp = import(&doc);
    let t = &imp.tools[0];
    for name in ["s", "o", "a", "i", "n", "c"] {
        assert_eq!(prop(t, Dialect::Mcp, name), doc["inputSchema"]["properties"][name], "{name}");
    }
    // A root without type is an object, silently.
    assert_eq!(params(t, Dialect::Mcp)["type"], "object");
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    // Nothing that a reader makes of it is an error for the validator.
    assert!(toolspec::validate_tool(t).iter().all(|p| p.severity == W), "{:?}", toolspec::validate_tool(t));
}

#[test]
fn refs_are_inlined_from_defs_definitions_and_components() {
    let pet = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let defs = mcp(json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/Pet", "description": "Mine."}},
        "$defs": {"Pet": pet}}));
    let definitions =
        mcp(json!({"type": "object", "properties": {"p": {"$ref": "#/definitions/Pet", "description": "Mine."}},
        "definitions": {"Pet": pet}}));
    let components = json!({"components": {"schemas": {"Pet": pet}}, "tools": [mcp(json!({"type": "object",
        "properties": {"p": {"$ref": "#/components/schemas/Pet", "description": "Mine."}}}))]});
    let mut want = pet.clone();
    want["description"] = json!("Mine.");
    for doc in [defs, definitions, components] {
        let t = tool(&doc);
        // The model's argument (the plist's) is self-contained.
        assert_eq!(Value::Object(t.args[0].schema.clone()), want, "{doc}");
        // Gemini has no `$ref`: it keeps the expansion.
        assert_eq!(prop(&t, Dialect::Gemini, "p"), want, "{doc}");
        let out = write(&t, Dialect::Gemini);
        for key in ["$ref", "$defs", "definitions"] {
            assert_no_key(&out, key);
        }
        // JSON Schema dialects get back the `$ref`s into the schema's own
        // definitions; one into the rest of the document stays inlined.
        let out = write(&t, Dialect::Mcp);
        if doc.get("components").is_some() {
            assert_eq!(prop(&t, Dialect::Mcp, "p"), want, "{doc}");
            assert_no_key(&out, "$ref");
        } else {
            assert_eq!(out["inputSchema"], doc["inputSchema"], "{doc}");
        }
    }
}

fn ref_error(doc: &Value) -> Error {
    timed(Duration::from_secs(60), || read_err(&doc.to_string()))
}

#[test]
fn ref_cycles_are_errors_naming_the_chain() {
    let self_ref = mcp(json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}}}));
    let e = ref_error(&self_ref);
    assert_eq!(e.kind, ErrorKind::Ref);
    assert!(e.message.contains("#/$defs/node -> #/$defs/node"), "{}", e.message);
    assert_eq!(e.path.as_deref(), Some("inputSchema.properties.tree.properties.child.$ref"));
    let two = mcp(json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/b"}}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}));
    let e = ref_error(&two);
    assert_eq!(e.kind, ErrorKind::Ref);
    assert!(e.message.contains("#/$defs/a -> #/$defs/b -> #/$defs/a"), "{}", e.message);
    let root = mcp(json!({"type": "object", "properties": {"again": {"$ref": "#"}}}));
    assert_eq!(ref_error(&root).kind, ErrorKind::Ref);
}

#[test]
fn dangling_and_external_refs_are_errors() {
    for (r, phrase) in
        [("#/$defs/missing", "points to nothing"), ("other.json#/x", "external"), ("https://x.org/s.json", "external")]
    {
        let e = ref_error(&mcp(object(json!({"x": {"$ref": r}}))));
        assert_eq!(e.kind, ErrorKind::Ref, "{r}");
        assert!(e.message.contains(phrase), "{r}: {}", e.message);
        assert_eq!(e.path.as_deref(), Some("inputSchema.properties.x.$ref"));
    }
}

#[test]
fn exponential_ref_fan_out_is_a_limit_error() {
    let mut defs = toolspec::value::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), object(json!({"l": next, "r": next})));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let doc = mcp(json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}));
    assert_eq!(ref_error(&doc).kind, ErrorKind::Limit);
}

#[test]
fn long_ref_chain_is_a_limit_error() {
    let mut defs = toolspec::value::Map::new();
    for i in 0..500 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d500".into(), json!({"type": "string"}));
    let doc = mcp(json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}));
    assert_eq!(ref_error(&doc).kind, ErrorKind::Limit);
}

#[test]
fn boolean_required_is_lifted_into_the_parent() {
    let imp = import(&mcp(object(json!({
        "a": {"type": "string", "required": true},
        "b": {"type": "string", "required": false},
        "o": {"type": "object", "properties": {"x": {"type": "string", "required": true}, "y": {"type": "string"}}}}))));
    let t = &imp.tools[0];
    let req: Vec<(&str, bool)> = t.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(req, [("a", false), ("b", true), ("o", true)]);
    assert_eq!(prop(t, Dialect::Mcp, "o")["required"], json!(["x"]));
    assert_eq!(prop(t, Dialect::Mcp, "a"), json!({"type": "string"}));
    for p in ["inputSchema.properties.a", "inputSchema.properties.b", "inputSchema.properties.o.properties.x"] {
        assert!(warning_at(&imp, p).message.contains("boolean `required`"));
    }
}

// ------------------------------------------------------- nested :optional

const NESTED_OPTIONAL: &str = r#"(:name "place" :description "d" :args
  ((:name "loc" :type object :description "Where."
    :properties (:lat (:type number :description "a")
                 :lng (:type number :optional t :description "b")
                 :alt (:type number :optional :json-false)))
   (:name "stops" :type array :description "Stops." :optional t
    :items (:type object :properties (:id (:type string) :note (:type string :optional t))
            :required ["id" "note"]))
   (:name "all_optional" :type object :description "Nothing required."
    :properties (:x (:type string :optional t)))
   (:name "alt" :description "Either." :anyOf [(:type object :properties (:k (:type string :optional t) :v (:type string)))])))"#;

#[test]
fn nested_optional_becomes_required_and_never_leaks() {
    let t = &tools_from_elisp(NESTED_OPTIONAL).unwrap()[0];
    for d in DIALECTS {
        let out = write(t, d);
        assert_no_key(&out, "optional");
        if d == Dialect::OpenAiStrict {
            continue;
        }
        let p = params(t, d);
        assert_eq!(p["required"], json!(["loc", "all_optional", "alt"]), "{d:?}");
        assert_eq!(p["properties"]["loc"]["required"], json!(["lat", "alt"]), "{d:?}");
        assert_eq!(p["properties"]["stops"]["items"]["required"], json!(["id"]), "{d:?}");
        assert!(p["properties"]["all_optional"].get("required").is_none(), "{d:?}");
        assert_eq!(p["properties"]["alt"]["anyOf"][0]["required"], json!(["v"]), "{d:?}");
    }
}

#[test]
fn stray_optional_outside_properties_does_not_leak() {
    let text = r#"(:name "s" :args ((:name "l" :type array :description "d" :items (:type string :optional t))))"#;
    let t = &tools_from_elisp(text).unwrap()[0];
    for d in DIALECTS {
        assert_no_key(&write(t, d), "optional");
    }
}

// -------------------------------------------------------------- strict mode

#[test]
fn strict_closes_every_object_and_requires_everything() {
    let t = &tools_from_elisp(NESTED_OPTIONAL).unwrap()[0];
    let p = params(t, Dialect::OpenAiStrict);
    let mut objects_seen = 0;
    for (path, node) in all_schema_nodes(&p) {
        if node.get("type") != Some(&json!("object")) && !node.contains_key("properties") {
            continue;
        }
        objects_seen += 1;
        assert_eq!(node.get("additionalProperties"), Some(&json!(false)), "{path}");
        let keys: Vec<Value> = node["properties"].as_object().unwrap().keys().map(|k| json!(k)).collect();
        assert_eq!(node["required"], Value::Array(keys), "{path}");
    }
    assert_eq!(objects_seen, 5);
    let props = &p["properties"];
    assert_eq!(props["loc"]["type"], "object");
    assert_eq!(props["stops"]["type"], json!(["array", "null"]));
    assert_eq!(props["loc"]["properties"]["lng"]["type"], json!(["number", "null"]));
    assert_eq!(props["loc"]["properties"]["lat"]["type"], "number");
    assert_eq!(props["stops"]["items"]["properties"]["note"]["type"], json!(["string", "null"]));
    let out = write(t, Dialect::OpenAiStrict);
    assert_eq!(out["function"]["strict"], json!(true));
}

#[test]
fn strict_makes_optional_enums_and_alternatives_nullable() {
    let t = small_tool();
    assert_eq!(prop(&t, Dialect::OpenAiStrict, "unit")["enum"], json!(["c", "f", null]));
    let any = tool(&mcp(object(json!({"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}))));
    assert_eq!(
        prop(&any, Dialect::OpenAiStrict, "v")["anyOf"],
        json!([{"type": "string"}, {"type": "integer"}, {"type": "null"}])
    );
}

// ----------------------------------------------------------------- gemini

const GEMINI_FORBIDDEN: [&str; 9] =
    ["additionalProperties", "$ref", "$schema", "$defs", "const", "oneOf", "allOf", "exclusiveMinimum", "definitions"];

fn assert_gemini_clean(out: &Value) {
    for key in GEMINI_FORBIDDEN {
        assert_no_key(out, key);
    }
    let params = out.get("parameters").unwrap_or(out);
    for (path, node) in all_schema_nodes(params) {
        if let Some(t) = node.get("type") {
            assert!(t.is_string(), "{path}: type {t} in {out}");
        }
    }
}

#[test]
fn gemini_output_is_sanitised_from_json() {
    let doc = mcp(json!({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "additionalProperties": false,
    "$defs": {"Pt": {"type": "object", "additionalProperties": false, "properties": {"x": {"type": "number"}}}},
    "properties": {
        "p": {"$ref": "#/$defs/Pt"},
        "k": {"const": "fixed"},
        "n": {"const": 3},
        "u": {"type": ["string", "integer", "null"]},
        "o": {"oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}]},
        "a": {"allOf": [{"type": "number"}, {"exclusiveMinimum": 0}]},
        "e": {"type": "number", "exclusiveMinimum": 0, "description": "Positive."}
    }}));
    let t = tool(&doc);
    let out = write(&t, Dialect::Gemini);
    assert_gemini_clean(&out);
    let props = &out["parameters"]["properties"];
    assert_eq!(props["k"]["enum"], json!(["fixed"]));
    assert!(props["n"]["description"].as_str().unwrap().contains("const: 3"));
    assert!(props["e"]["description"].as_str().unwrap().contains("exclusiveMinimum: 0"));
    assert_eq!(props["u"]["nullable"], json!(true));
}

#[test]
fn gemini_output_is_sanitised_from_plists() {
    let text = r##"(:name "g" :description "d" :args
      ((:name "r" :type object :description "d" :$ref "#/$defs/x" :$defs (:x (:type string)) :additionalProperties :json-false
        :properties (:k (:type string :const "c")))
       (:name "u" :type [string null] :description "d")
       (:name "m" :type [string integer] :description "d" :exclusiveMinimum 1)
       (:name "o" :description "d" :oneOf [(:type string) (:type [integer null])])
       (:name "a" :description "d" :allOf [(:type [string null]) (:const 5 :exclusiveMinimum 2 :additionalProperties t)])
       (:name "i" :type array :description "d" :items (:type [number null] :const 1.5 :$schema "x")))
      :schema-extra (:$schema "https://json-schema.org/draft/2020-12/schema" :additionalProperties :json-false))"##;
    let t = &tools_from_elisp(text).unwrap()[0];
    let out = write(t, Dialect::Gemini);
    assert_gemini_clean(&out);
    assert_eq!(out["parameters"]["properties"]["u"], json!({"type": "string", "description": "d", "nullable": true}));
}

// ------------------------------------------------------------ error paths

#[test]
fn invalid_json_has_line_and_column() {
    let e = read_err("[\n  {\"name\": \"x\",,}\n]");
    assert_eq!(e.kind, ErrorKind::Json);
    assert_eq!((e.line, e.column), (Some(2), Some(16)));
    assert!(e.to_string().starts_with("line 2, column 16: "), "{e}");
}

#[test]
fn invalid_utf8_has_a_position() {
    let e = read_bytes(b"{\n  \"name\": \"caf\xe9\"}", &ReadOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json);
    assert_eq!((e.line, e.column), (Some(2), Some(15)));
    assert!(e.message.contains("UTF-8"), "{}", e.message);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for text in ["[".repeat(10_000), "{\"a\":".repeat(10_000), format!("{}{}", "[".repeat(10_000), "]".repeat(10_000))]
    {
        let e = read_err(&text);
        assert_eq!(e.kind, ErrorKind::Json);
        assert!(e.line.is_some());
    }
}

#[test]
fn deep_schema_is_a_limit_error() {
    let mut schema = json!({"type": "string"});
    for _ in 0..120 {
        schema = json!({"type": "array", "items": schema});
    }
    let e = read_err(&mcp(object(json!({"x": schema}))).to_string());
    assert_eq!(e.kind, ErrorKind::Limit);
}

#[test]
fn empty_input_is_a_json_error() {
    for text in ["", "   \n"] {
        assert_eq!(read_err(text).kind, ErrorKind::Json, "{text:?}");
    }
    for (text, kind) in
        [("[]", ErrorKind::Shape), ("{}", ErrorKind::UnsupportedFormat), ("{\"tools\": []}", ErrorKind::Shape)]
    {
        assert_eq!(read_err(text).kind, kind, "{text}");
    }
}

#[test]
fn non_objects_are_shape_errors_with_paths() {
    let e = read_err("42");
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("a number"), "{}", e.message);
    // The first (strict), or the only unreadable definition is the error.
    let strict = ReadOptions { strict: true, ..ReadOptions::default() };
    for (text, path) in [
        (format!("[{}, 42]", small_tool_json()), "[1]"),
        ("{\"tools\": [42]}".to_string(), "tools[0]"),
        ("{\"functionDeclarations\": [\"x\"]}".to_string(), "functionDeclarations[0]"),
        (mcp(json!({"type": "object", "properties": {"a": 5}})).to_string(), "inputSchema.properties.a"),
    ] {
        let e = read_err_opts(&text, &strict);
        assert_eq!(e.kind, ErrorKind::Shape, "{text}");
        assert_eq!(e.path.as_deref(), Some(path), "{text}");
    }
    // Not strict, a readable tool beside it is read, the other reported.
    let imp = read_str(&format!("[{}, 42]", small_tool_json()), &ReadOptions::default()).unwrap();
    assert_eq!(imp.tools.len(), 1);
    let p = imp.warnings.iter().find(|w| w.severity == E).expect("an error");
    assert_eq!(p.path, "[1]");
    assert!(p.message.contains("the tool definition at [1] is left out"), "{}", p.message);
}

#[test]
fn tool_names_must_be_present_strings() {
    let e = read_err(&json!({"tools": [{"type": "function", "function": {"description": "d"}}]}).to_string());
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("name"), "{}", e.message);
    let cases = [
        (json!({"tools": [{"type": "function", "function": {"name": 7}}]}), "tools[0].function.name"),
        (json!([{"name": ["x"], "input_schema": object(json!({}))}]), "[0].name"),
        (
            json!({"tools": [{"toolSpec": {"name": null, "inputSchema": {"json": object(json!({}))}}}]}),
            "tools[0].toolSpec.name",
        ),
        (
            json!({"tools": [{"type": "function", "function": {"name": "x", "description": 3}}]}),
            "tools[0].function.description",
        ),
    ];
    for (doc, path) in cases {
        let e = read_err(&doc.to_string());
        assert_eq!(e.kind, ErrorKind::Shape, "{doc}");
        assert_eq!(e.path.as_deref(), Some(path), "{doc}");
    }
}

#[test]
fn openapi_document_without_operations() {
    // OpenAPI documents are read by the OpenAPI reader (test/openapi.rs).
    let e = read_err(&json!({"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {}}).to_string());
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("OpenAPI document has no operations"), "{}", e.message);
}

#[test]
fn jsonrpc_error_is_a_shape_error() {
    let e = read_err(&json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}).to_string());
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("error"), "{}", e.message);
}

#[test]
fn oversized_input_is_a_limit_error() {
    let text = small_tool_json().to_string();
    let o = ReadOptions { max_size: 10, ..ReadOptions::default() };
    assert_eq!(read_err_opts(&text, &o).kind, ErrorKind::Limit);
    assert_eq!(read_bytes(text.as_bytes(), &o).unwrap_err().kind, ErrorKind::Limit);
    let fits = ReadOptions { max_size: text.len(), ..ReadOptions::default() };
    assert!(read_str(&text, &fits).is_ok());
}

#[test]
fn big_integers_and_duplicate_keys_do_not_panic() {
    let text = r#"{"name": "n", "name": "m", "input_schema": {"type": "object", "properties": {
        "x": {"type": "integer", "default": 123456789012345678901234567890, "maximum": 18446744073709551615,
              "minimum": -9223372036854775808}}}}"#;
    let t = &read_str(text, &ReadOptions::default()).unwrap().tools[0];
    assert_eq!(t.name, "m");
    for d in DIALECTS {
        write(t, d);
    }
    assert_eq!(via_plist(std::slice::from_ref(t)), std::slice::from_ref(t));
}

#[test]
fn huge_enum_works() {
    let values: Vec<String> = (0..100_000).map(|i| format!("v{i}")).collect();
    let t = tool(&mcp(object(json!({"e": {"type": "string", "enum": values}}))));
    let out = timed(Duration::from_secs(20), || {
        let back = via_plist(std::slice::from_ref(&t));
        write(&back[0], Dialect::Gemini)
    });
    assert_eq!(out["parameters"]["properties"]["e"]["enum"].as_array().map(Vec::len), Some(100_000));
}

#[test]
fn malformed_plists_are_plist_errors() {
    for text in [
        "(:name \"x\"",
        "(:name \"x\" :args ((:type string)))",
        "(:description \"d\")",
        "(1 2 3)",
        "(:name \"x\" :args ((:name \"a\" :default (1 . 2))))",
    ] {
        let e = tools_from_elisp(text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Plist, "{text}");
    }
    let e = tools_from_elisp("((:name \"a\") (:name \"b\" :args ((:type string))))").unwrap_err();
    assert_eq!(e.path.as_deref(), Some("[1].args[0].name"));
    let deep = format!("(:name \"x\" :default {}{})", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(tools_from_elisp(&deep).unwrap_err().kind, ErrorKind::Limit);
}

// ------------------------------------------------------------- validation

fn check(text: &str) -> Vec<Problem> {
    validate_elisp(text).unwrap_or_else(|e| panic!("cannot read {text}: {e}"))
}

/// A tool `(:name "t" :description "d" :args (ARGS) REST)`.
fn with_args(args: &str, rest: &str) -> String {
    format!("(:name \"t\" :description \"d\" :args ({args}){rest})")
}

const ARG: &str = r#"(:name "x" :type string :description "d")"#;

/// Validate `fire` and expect a problem of `severity` at `path` whose
/// message contains `phrase`; validate `quiet` and expect none at `path`.
fn rule(fire: &str, severity: Severity, path: &str, phrase: &str, quiet: &str) {
    let problems = check(fire);
    assert!(
        problems.iter().any(|p| p.severity == severity && p.path == path && p.message.contains(phrase)),
        "expected {severity:?} at {path:?} containing {phrase:?} for\n{fire}\ngot {problems:#?}"
    );
    let problems = check(quiet);
    assert!(problems.iter().all(|p| p.path != path), "expected nothing at {path:?} for\n{quiet}\ngot {problems:#?}");
}

/// Like [`rule`] for a problem inside `:args`: both texts are arg lists.
fn arg_rule(fire: &str, severity: Severity, path: &str, phrase: &str, quiet: &str) {
    rule(&with_args(fire, ""), severity, path, phrase, &with_args(quiet, ""));
}

#[test]
fn clean_tools_have_no_problems() {
    let clean = [
        with_args(ARG, ""),
        "(:name \"t\" :description \"d\" :args nil)".to_string(),
        "(:name \"t\" :description \"d\")".to_string(),
        with_args(ARG, " :function (toolspec-function t 1 1 \"f\") :category \"web\" :async nil"),
        with_args(
            r#"(:name "o" :type object :description "d" :properties (:a (:type string) :b (:type string :enum ["x"])) :required ["a"])"#,
            "",
        ),
    ];
    for text in &clean {
        assert_eq!(check(text), [], "{text}");
    }
}

#[test]
fn format_examples_validate_without_errors() {
    let record_summary = r#"(:name "record_summary"
  :description "Record summary of an image using well-structured JSON."
  :args ((:name "key_colors" :description "Key colors in the image. Limit to less than four." :type array
          :items (:type object
                  :properties (:r (:type number :description "red value [0.0, 1.0]")
                               :g (:type number :description "green value [0.0, 1.0]")
                               :b (:type number :description "blue value [0.0, 1.0]")
                               :name (:type string :description: "Human-readable color name in snake_case, e.g. \"olive_green\" or \"turquoise\""))
                  :required ["r" "g" "b" "name"]))
         (:name "description" :type string :description "Image description. One to two sentences max.")
         (:name "estimated_year" :type integer :optional t
          :description "Estimated year that the images was taken, if is it a photo. Only set this if the image appears to be non-fictional. Rough estimates are okay!")))"#;
    let get_weather = r#"(:function (toolspec-function t 2 2 "") :name "get_weather"
  :description "Get the current weather in a given location"
  :args ((:name "location" :type string :description "The city and state, e.g. San Francisco, CA")
         (:name "unit" :type string :enum ["celsius" "farenheit"]
          :description "The unit of temperature, either 'celsius' or 'fahrenheit'" :optional t)))"#;
    assert_eq!(check(record_summary), []);
    assert_eq!(check(get_weather), []);
    let t = &tools_from_elisp(record_summary).unwrap()[0];
    let p = params(t, Dialect::Anthropic);
    assert_eq!(p["required"], json!(["key_colors", "description"]));
    assert_eq!(p["properties"]["key_colors"]["items"]["required"], json!(["r", "g", "b", "name"]));
    let json = tool(&example_json("anthropic.json")[0]);
    let names = |s: &Value| s["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&p), names(&params(&json, Dialect::Anthropic)));
}

#[test]
fn validate_takes_a_parsed_sexp() {
    let sexp = parse_sexp(&with_args(ARG, "")).unwrap();
    assert_eq!(validate(&sexp), []);
    let problems = validate(&parse_sexp("\"just a string\"").unwrap());
    assert_eq!(problems.len(), 1);
    assert_eq!((problems[0].severity, problems[0].path.as_str()), (E, ""));
    assert!(problems[0].message.contains("a tool spec must be a plist"));
}

#[test]
fn rule_tool_name() {
    let quiet = "(:name \"get_weather\" :description \"d\")";
    rule("(:description \"d\")", E, "name", "missing :name", quiet);
    rule("(:name get_weather :description \"d\")", E, "name", ":name must be a string, found the symbol", quiet);
    rule("(:name \"get weather!\" :description \"d\")", E, "name", "not a valid tool name", quiet);
    rule("(:name \"get weather!\" :description \"d\")", E, "name", "e.g. \"get_weather_\"", quiet);
    rule(&format!("(:name \"{}\" :description \"d\")", "a".repeat(65)), E, "name", "not a valid tool name", quiet);
    rule("(:name \"getWeather\" :description \"d\")", W, "name", "not snake_case", quiet);
}

#[test]
fn rule_tool_description() {
    let quiet = "(:name \"t\" :description \"Does things.\")";
    rule("(:name \"t\")", W, "description", "no :description", quiet);
    rule(
        "(:name \"t\" :description 42)",
        E,
        "description",
        ":description must be a string, found the number 42",
        quiet,
    );
}

#[test]
fn rule_tool_keys() {
    let quiet = "(:name \"t\" :description \"d\" :category \"web\" :confirm t :include nil :strict t)";
    rule("(:name \"t\" :description \"d\" :argz nil)", W, "argz", "did you mean :args?", quiet);
    rule("(:name \"t\" :description \"d\" :colour 1)", W, "colour", ":colour is not a tool key", quiet);
    // A non-ASCII key must not break the hint.
    rule("(:name \"t\" :description \"d\" :ééé 1)", W, "ééé", "not a tool key", quiet);
    rule("(:name \"t\" :description \"d\" :name \"u\")", W, "name", "appears twice", quiet);
    rule(
        "(:name \"t\" :description \"d\" :async yes)",
        W,
        "async",
        ":async should be t or nil",
        "(:name \"t\" :description \"d\" :async t)",
    );
    rule("(:name \"t\" :description \"d\" :category web)", E, "category", ":category must be a string", quiet);
}

#[test]
fn a_key_given_again_is_reported_at_each_repeat_in_short_and_long_plists() {
    // Up to 16 keys are compared with those before them, more go through
    // a set: both report every repeat, in order, and nothing else.
    for filler in [0, 20] {
        let extra: String = (0..filler).map(|i| format!(" :x-{i} 1")).collect();
        let text = format!("(:name \"t\" :description \"d\"{extra} :name \"u\" :title \"a\" :name \"v\" :title \"b\")");
        let repeats: Vec<(String, String)> = check(&text)
            .into_iter()
            .filter(|p| p.message.contains("appears twice"))
            .map(|p| (p.path.to_string(), p.message))
            .collect();
        let want = [("name", ":name"), ("name", ":name"), ("title", ":title")]
            .map(|(path, key)| (path.to_string(), format!("{key} appears twice: only the first is used")));
        assert_eq!(repeats, want, "with {filler} more keys");
    }
}

#[test]
fn rule_args_shape() {
    let quiet = with_args(ARG, "");
    rule(&format!("(:name \"t\" :description \"d\" :args [{ARG}])"), E, "args", "a vector was given", &quiet);
    rule("(:name \"t\" :description \"d\" :args \"x\")", E, "args", ":args must be a list of argument plists", &quiet);
    arg_rule("\"x\"", E, "args[0]", "an argument must be a plist", ARG);
    arg_rule("(:name \"x\" :type)", E, "args[0]", "must be a plist of keywords and values", ARG);
}

#[test]
fn rule_arg_name_and_description() {
    arg_rule("(:type string :description \"d\")", E, "args[0].name", "missing :name", ARG);
    arg_rule("(:name x :type string :description \"d\")", E, "args[0].name", ":name must be a string", ARG);
    let y = r#"(:name "y" :type string :description "d")"#;
    arg_rule(&format!("{ARG} {ARG}"), E, "args[1].name", "duplicate argument name \"x\"", &format!("{ARG} {y}"));
    arg_rule("(:name \"x\" :type string)", W, "args[0].description", "missing :description", ARG);
    arg_rule(
        "(:name \"x\" :type string :description 1)",
        E,
        "args[0].description",
        ":description must be a string",
        ARG,
    );
    arg_rule(
        "(:name \"x\" :type string :description \"d\" :optional yes)",
        W,
        "args[0].optional",
        ":optional should be t or nil",
        "(:name \"x\" :type string :description \"d\" :optional t)",
    );
}

#[test]
fn rule_type() {
    let p = "args[0].type";
    let arg = |ty: &str| format!("(:name \"x\" :type {ty} :description \"d\")");
    // No :type is no type constraint, as in JSON Schema: gptel sends it
    // as it is; llm needs one on an argument.
    arg_rule("(:name \"x\" :description \"d\")", W, p, "no :type: any value is accepted; llm needs one", ARG);
    arg_rule(
        "(:name \"x\" :description \"d\" :anyOf [(:type string) (:type null)])",
        W,
        p,
        "no :type",
        "(:name \"x\" :type string :description \"d\" :anyOf [(:type string)])",
    );
    arg_rule(&arg("\"string\""), E, p, "write string, not the string \"string\"", ARG);
    arg_rule(&arg("\"str\""), E, p, "write string, not the string \"str\"", ARG);
    arg_rule(&arg("(quote string)"), E, p, "reads as (quote string)", ARG);
    arg_rule(&arg("'string"), E, p, "write string without the quote", ARG);
    arg_rule(&arg("str"), E, p, "did you mean `string'?", ARG);
    arg_rule(&arg("widget"), E, p, "`widget' is not a JSON type: use one of", ARG);
    // A union is a vector of type names as strings (gptel sends :type as
    // it is: a symbol in a vector has no JSON form).
    arg_rule(&arg("[string null]"), E, "args[0].type[0]", "write \"string\"", &arg("[\"string\" \"null\"]"));
    arg_rule(&arg("[\"str\" \"null\"]"), E, "args[0].type[0]", "write \"string\"", ARG);
    arg_rule(&arg("[]"), E, p, "an empty type union", ARG);
    arg_rule(&arg("5"), E, p, ":type must be a symbol such as string, found the number 5", ARG);
    for ty in ["string", "number", "integer", "boolean", "null"] {
        assert_eq!(check(&with_args(&arg(ty), "")), [], "{ty}");
    }
}

#[test]
fn rule_pattern() {
    // A pattern the argument checker cannot compile would make every
    // call of the tool fail: it is an error where the spec is checked.
    let quiet = r#"(:name "x" :type string :pattern "^[A-Z]{3}$" :description "d")"#;
    let p = "args[0].pattern";
    for bad in ["(", "[a-", "a{2,1}"] {
        let fire = format!("(:name \"x\" :type string :pattern \"{bad}\" :description \"d\")");
        arg_rule(&fire, E, p, &format!("{bad:?} is not a regular expression the arguments can be checked with"), quiet);
    }
    arg_rule(r#"(:name "x" :type string :pattern 3 :description "d")"#, E, p, ":pattern must be a string", quiet);
    // In nested schemas too.
    arg_rule(
        r#"(:name "x" :type array :items (:type string :pattern "(") :description "d")"#,
        E,
        "args[0].items.pattern",
        "not a regular expression",
        r#"(:name "x" :type array :items (:type string :pattern "\\d+") :description "d")"#,
    );
    // The keys of :patternProperties are patterns too.
    arg_rule(
        r#"(:name "x" :type object :patternProperties (:\( (:type string)) :description "d")"#,
        E,
        "args[0].patternProperties.(",
        "not a regular expression",
        r#"(:name "x" :type object :patternProperties (:^a (:type string)) :description "d")"#,
    );
    // And in the schemas under them, and under every keyword the
    // argument checker reads: what it cannot compile is found here, not
    // at the tool's first call.
    for (keyword, value) in [
        ("patternProperties", "(:^a (:type string :pattern \"(\"))"),
        ("additionalProperties", "(:type string :pattern \"(\")"),
        ("propertyNames", "(:pattern \"(\")"),
        ("not", "(:anyOf [(:pattern \"(\")])"),
        ("dependentSchemas", "(:a (:properties (:b (:pattern \"(\"))))"),
        ("contains", "(:properties (:a (:items (:pattern \"(\"))))"),
    ] {
        let fire = with_args(&format!("(:name \"x\" :type object :{keyword} {value} :description \"d\")"), "");
        let problems = check(&fire);
        assert!(
            problems.iter().any(|p| p.severity == E
                && p.path.starts_with(&format!("args[0].{keyword}."))
                && p.path.ends_with("pattern")
                && p.message.contains("not a regular expression")),
            "{fire}: {problems:#?}"
        );
        let tool = &tools_from_elisp(&fire).unwrap()[0];
        assert!(toolspec::args::ArgChecker::new(tool).is_err(), "{fire}");
    }
    arg_rule(
        r#"(:name "x" :type array :prefixItems [(:type string) (:type integr)] :items (:type string) :description "d")"#,
        E,
        "args[0].prefixItems[1].type",
        "`integr' is not a JSON type",
        r#"(:name "x" :type array :prefixItems [(:type string) (:type integer)] :items (:type string) :description "d")"#,
    );
    // Those schemas need no :type, nor :properties for :required (gptel
    // and llm do not read them): a schema as JSON Schema writes it is
    // quiet.
    let conditional = with_args(
        r#"(:name "x" :type object :description "d" :properties (:a (:type string) :b (:type string)) :if (:properties (:a (:const "y")) :required ["a"]) :then (:required ["b"]) :else (:not (:required ["b"])) :additionalProperties (:enum ["z" 1]) :propertyNames (:maxLength 3) :patternProperties (:^x (:minimum 0)))"#,
        "",
    );
    assert_eq!(check(&conditional), [], "{conditional}");
    assert!(toolspec::args::ArgChecker::new(&tools_from_elisp(&conditional).unwrap()[0]).is_ok());
    // What passes is what the checker compiles.
    for good in [r"^\\p{L}+$", r"\\d{4}-\\d{2}", "^(a|b)*$", ""] {
        let text = with_args(&format!("(:name \"x\" :type string :pattern \"{good}\" :description \"d\")"), "");
        assert_eq!(check(&text), [], "{good}");
        let tool = &tools_from_elisp(&text).unwrap()[0];
        assert!(toolspec::args::ArgChecker::new(tool).is_ok(), "{good}");
    }
}

#[test]
fn rule_enum() {
    let quiet = r#"(:name "x" :type string :enum ["a" "b"] :description "d")"#;
    let p = "args[0].enum";
    arg_rule(
        r#"(:name "x" :type string :enum ("a" "b") :description "d")"#,
        E,
        p,
        ":enum must be a vector such as [\"a\" \"b\"], found a list",
        quiet,
    );
    arg_rule(r#"(:name "x" :type string :enum '("a" "b") :description "d")"#, E, p, "found a quoted form", quiet);
    // Without a :type, any value of the enum is fine.
    let untyped = r#"(:name "x" :enum ["a" 1 :null] :description "d")"#;
    assert!(check(&with_args(untyped, "")).iter().all(|q| q.severity == W), "{untyped}");
    arg_rule(r#"(:name "x" :type string :enum [] :description "d")"#, W, p, "empty :enum", quiet);
    let mismatch = r#"(:name "x" :type string :enum [1 2] :description "d")"#;
    arg_rule(mismatch, E, "args[0].enum[0]", ":enum values must match :type string: found the number 1", quiet);
    let ints = r#"(:name "x" :type integer :enum [1 2] :description "d")"#;
    arg_rule(ints, W, "args[0].enum[1]", "expect :enum to hold strings; the number 2 works", quiet);
    arg_rule(
        r#"(:name "x" :type integer :enum ["a"] :description "d")"#,
        E,
        "args[0].enum[0]",
        "must match :type integer",
        quiet,
    );
    for non_strings in [
        ints,
        r#"(:name "x" :type boolean :enum [t :json-false] :description "d")"#,
        r#"(:name "x" :type string :enum ["a" :null] :description "d")"#,
    ] {
        assert!(check(&with_args(non_strings, "")).iter().all(|p| p.severity == W), "{non_strings}");
    }
}

#[test]
fn rule_items() {
    let quiet = r#"(:name "x" :type array :items (:type string) :description "d")"#;
    arg_rule(r#"(:name "x" :type array :description "d")"#, E, "args[0].items", "an array needs :items", quiet);
    arg_rule(
        r#"(:name "x" :type array :items (:description "e") :description "d")"#,
        W,
        "args[0].items.type",
        "no :type: any value is accepted; to constrain",
        quiet,
    );
    arg_rule(
        r#"(:name "x" :type array :items string :description "d")"#,
        E,
        "args[0].items",
        ":items must be a plist",
        quiet,
    );
    arg_rule(
        r#"(:name "x" :type string :items (:type string) :description "d")"#,
        W,
        "args[0].items",
        ":items only applies to :type array",
        quiet,
    );
}

#[test]
fn rule_properties() {
    let quiet = r#"(:name "o" :type object :properties (:a (:type string)) :description "d")"#;
    let p = "args[0].properties";
    arg_rule(r#"(:name "o" :type object :description "d")"#, W, p, "object without :properties", quiet);
    arg_rule(
        r#"(:name "o" :type object :properties [1] :description "d")"#,
        E,
        p,
        "must be a plist of :key SCHEMA pairs",
        quiet,
    );
    arg_rule(
        r#"(:name "o" :type object :properties ((:name "a" :type string)) :description "d")"#,
        E,
        p,
        "a list of arg-style plists was given",
        quiet,
    );
    arg_rule(
        r#"(:name "o" :type string :properties (:a (:type string)) :description "d")"#,
        W,
        p,
        "only applies to :type object",
        quiet,
    );
    arg_rule(
        r#"(:name "o" :type object :properties (:a (:type string) :a (:type integer)) :description "d")"#,
        E,
        "args[0].properties.a",
        "defined twice",
        quiet,
    );
    arg_rule(
        r#"(:name "o" :type object :properties (:a string) :description "d")"#,
        E,
        "args[0].properties.a",
        "a property's schema must be a plist",
        quiet,
    );
    arg_rule(
        r#"(:name "o" :type object :properties (:a (:type string :description 3)) :description "d")"#,
        E,
        "args[0].properties.a.description",
        ":description must be a string",
        quiet,
    );
    for quiet in [
        r#"(:name "o" :type object :properties nil :description "d")"#,
        r#"(:name "o" :type object :additionalProperties (:type string) :description "d")"#,
    ] {
        assert_eq!(check(&with_args(quiet, "")), [], "{quiet}");
    }
}

#[test]
fn rule_required() {
    let obj = |req: &str| {
        format!("(:name \"o\" :type object :properties (:a (:type string) :b (:type string)) :required {req} :description \"d\")")
    };
    let quiet = obj("[\"a\" \"b\"]");
    arg_rule(&obj("(\"a\")"), E, "args[0].required", ":required must be a vector of strings", &quiet);
    arg_rule(
        &obj("[\"a\" \"c\"]"),
        E,
        "args[0].required[1]",
        "\"c\" names no key of :properties (known keys: a, b)",
        &quiet,
    );
    arg_rule(
        &obj("[a]"),
        E,
        "args[0].required[0]",
        ":required holds strings, found the symbol `a' (write \"a\")",
        &quiet,
    );
    arg_rule(&obj("[:a]"), E, "args[0].required[0]", "(write \"a\")", &quiet);
    arg_rule(
        r#"(:name "o" :type string :required ["a"] :description "d")"#,
        W,
        "args[0].required",
        "only applies to :type object",
        &quiet,
    );
    arg_rule(
        r#"(:name "o" :type object :required ["a"] :description "d")"#,
        E,
        "args[0].required[0]",
        "there are no :properties",
        &quiet,
    );
}

#[test]
fn rule_combinators() {
    let quiet = r#"(:name "x" :type string :anyOf [(:type string) (:type integer)] :description "d")"#;
    arg_rule(
        r#"(:name "x" :type string :anyOf ((:type string)) :description "d")"#,
        E,
        "args[0].anyOf",
        ":anyOf must be a vector of schema plists",
        quiet,
    );
    arg_rule(
        r#"(:name "x" :type string :oneOf [(:type str)] :description "d")"#,
        E,
        "args[0].oneOf[0].type",
        "did you mean `string'?",
        quiet,
    );
    arg_rule(
        r#"(:name "x" :type string :allOf [string] :description "d")"#,
        E,
        "args[0].allOf[0]",
        "a schema must be a plist",
        quiet,
    );
}

#[test]
fn rule_deep_paths() {
    let color = |r_type: &str| {
        format!(
            r#"(:name "a" :type string :description "d") (:name "b" :type string :description "d")
               (:name "key_colors" :type array :description "d"
                :items (:type object :properties (:r (:type {r_type}) :g (:type number)) :required ["r" "g"]))"#
        )
    };
    arg_rule(&color("\"number\""), E, "args[2].items.properties.r.type", "write number", &color("number"));
    arg_rule(&color("float"), E, "args[2].items.properties.r.type", "did you mean `number'?", &color("number"));
    let deep = r#"(:name "x" :type object :description "d" :properties (:l (:type array :items (:type object :properties (:m (:type array))))))"#;
    let quiet = r#"(:name "x" :type object :description "d" :properties (:l (:type array :items (:type object :properties (:m (:type array :items (:type string)))))))"#;
    arg_rule(deep, E, "args[0].properties.l.items.properties.m.items", "an array needs :items", quiet);
}

#[test]
fn rule_function() {
    let two = r#"(:name "a" :type string :description "d") (:name "b" :type string :description "d")"#;
    let tool = |f: &str, extra: &str| with_args(two, &format!(" :function {f}{extra}"));
    let quiet = tool("(toolspec-function t 2 2 \"f\")", "");
    rule(&tool("(toolspec-function nil 0 0 \"\")", ""), E, "function", ":function is not callable", &quiet);
    rule(
        &tool("(toolspec-function t 1 1 \"f\")", ""),
        E,
        "function",
        "takes 1 argument(s) but :args declares 2",
        &quiet,
    );
    rule(&tool("(toolspec-function t 3 4 \"f\")", ""), E, "function", "takes 3 to 4 argument(s)", &quiet);
    rule(
        &tool("(toolspec-function t 3 many \"f\")", ""),
        E,
        "function",
        "takes at least 3",
        &tool("(toolspec-function t 0 many \"f\")", ""),
    );
    rule(
        &tool("(toolspec-function t 2 2 \"f\")", " :async t"),
        E,
        "function",
        "so it must take 3; it takes 2",
        &tool("(toolspec-function t 3 3 \"f\")", " :async t"),
    );
    rule(&tool("(toolspec-function unbound 0 0 \"later\")", ""), W, "function", "`later' is not defined (yet)", &quiet);
    // A function described some other way is not judged.
    assert_eq!(check(&tool("my-function", "")), []);
}

// ------------------------------------------------ regressions found by fuzzing

/// A schema keyword called `name` beside an argument's own `:name` in the
/// plist: the first `:name` is the argument's, the keyword survives.
#[test]
fn fuzz_regression_schema_keyword_called_name() {
    let doc = json!({"name": "t", "input_schema": {"type": "object", "properties": {
        "arg": {"type": "string", "name": "other", "description": "d"}}}});
    let tools = import_as(&doc, Format::Anthropic).tools;
    let back = via_plist(&tools);
    assert_eq!(back[0].args[0].name, "arg");
    for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp] {
        assert_eq!(write_tools(&tools, d).unwrap(), write_tools(&back, d).unwrap());
    }
    assert_eq!(prop(&back[0], Dialect::Anthropic, "arg")["name"], "other");
}

/// An `optional` marker on a top-level property in JSON settles `required`
/// when read, so it cannot clash with the plist's own `:optional`.
#[test]
fn fuzz_regression_optional_keyword_on_top_level_property() {
    let doc = json!({"name": "t", "input_schema": {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "optional": true}}}});
    let tools = import_as(&doc, Format::Anthropic).tools;
    assert!(!tools[0].args[0].optional);
    assert!(tools[0].args[1].optional);
    let back = via_plist(&tools);
    assert_eq!(write_tools(&tools, Dialect::Anthropic).unwrap(), write_tools(&back, Dialect::Anthropic).unwrap());
    assert_no_key(&write(&back[0], Dialect::Anthropic), "optional");
}

/// Empty input: serde_json places the error at column 0; places count
/// from 1 (`toolspec check` printed `file:1:0:`).
#[test]
fn fuzz_regression_empty_input_has_a_place() {
    for text in ["", "\n", "{\n"] {
        let e = read_err(text);
        assert!(e.line >= Some(1) && e.column >= Some(1), "{text:?}: {e:?}");
    }
    let c = toolspec::check::check_json("", &ReadOptions::default());
    assert_eq!((c.diagnostics[0].line, c.diagnostics[0].column), (1, 1));
}

/// Invalid JSON ending inside a string, read in no forced format: the
/// scan for duplicate keys, which assumes JSON that parsed, ran on it
/// and sliced past the end of a string (a panic in Emacs, a
/// `toolspec-internal-error`).  The scan runs only after parsing again.
#[test]
fn fuzz_regression_scan_only_after_parsing() {
    let text = "{\n\u{7f} \"unfcarations\":isine[EC$[\n    {\n      \"name\": \"fdisine[ECT\",\"";
    let e = read_err(text);
    assert_eq!(e.kind, toolspec::ErrorKind::Json, "{e:?}");
    for text in ["\"", "{\"", "[\"a", "{\"a\":\"", "{\"\\"] {
        assert_eq!(read_err(text).kind, toolspec::ErrorKind::Json, "{text:?}");
    }
}

/// A keyword starting with `@` followed by an escaped character
/// (`:@\ \ properties`, from a JSON key "@  properties") read back with
/// the reader's internal symbol mark inside its name: the shim took `@`
/// for the start of a token, as in `,@`.
#[test]
fn fuzz_regression_keywords_starting_with_at_read_back() {
    let doc = json!({"name": "t", "parameters": {"type": "object", "@     properties": {"a": 1}, "@\\y": 2, "@(z)": 3,
                     "properties": {"@ x": {"type": "string", "description": "d", "@ k": true}}}});
    let imp = read_str(&doc.to_string(), &ReadOptions::default()).unwrap();
    let text = plist_text(&imp.tools);
    let back = tools_from_elisp(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(back, imp.tools, "{text}");
    // `,@` still reads as splicing.
    let v = parse_sexp("(a ,@\\b)").unwrap();
    assert!(format!("{v}").contains("unquote-splicing"), "{v}");
}

/// A path whose keys hold brackets (`input_[schema`, `a]b`, `x]]`):
/// placing it in the text sliced an empty index backwards (a panic in
/// `toolspec check` and in the import preview).
#[test]
fn fuzz_regression_paths_with_brackets_in_keys() {
    let text = r#"{"a]b": {"x]]": [1, {"input_[schema": 2}]}}"#;
    for path in ["a]b", "a]b.x]]", "a]b.x]][1]", "a]b.x]][1].input_[schema", "]", "[]", "[", "]]]", "x[1]]]"] {
        let (line, column) = toolspec::locate::locate(text, path);
        assert!(line >= 1 && column >= 1, "{path}");
    }
    let many = toolspec::locate::locate_many(text, &["]", "a]b.x]][1]", "[0]]"]);
    assert_eq!(many.len(), 3);
}

/// A symbol starting with `{`, `}` or `|`, which Emacs reads and prints
/// as it is (`:type '{tring` in Lisp source), did not read back: the
/// s-expression reader refused it, so `toolspec convert --to elisp` and
/// every module call with such a plist failed.
#[test]
fn fuzz_regression_symbols_with_braces_read_back() {
    let text = "(:name \"t\" :args ((:name \"a\" :type {tring :description \"d\" :x |y :y }z :z a{b)))";
    let tools = tools_from_elisp(text).unwrap_or_else(|e| panic!("{e}"));
    let s = &tools[0].args[0].schema;
    assert_eq!((&s["type"], &s["x"], &s["y"], &s["z"]), (&json!("{tring"), &json!("|y"), &json!("}z"), &json!("a{b")));
    assert_eq!(via_plist(&tools), tools);
    let src =
        "(gptel-make-tool :name \"t\" :description \"d\" :args (list '(:name \"a\" :type {tring :description \"d\")))";
    let found = toolspec::check::elisp_tools(src).unwrap();
    let tool = found[0].2.tool.as_ref().unwrap();
    let mut printed = String::new();
    print_tool(tool, &mut printed);
    assert_eq!(&tool_from_sexp(&parse_sexp(&printed).unwrap()).unwrap(), tool);
}

/// Symbols whose first character lexpr refuses but Emacs prints as it
/// is: letters that are not ASCII, escapes (`\12`, a symbol named like
/// a number), `|` anywhere.
#[test]
fn symbols_emacs_prints_read_back() {
    let text = "(:name \"t\" :args ((:name \"a\" :type string :description \"d\" :x été :y \\12 :z a|b :w (λ \\, [\\(x]) :v :é)))";
    let s = &tools_from_elisp(text).unwrap_or_else(|e| panic!("{e}"))[0].args[0].schema;
    assert_eq!((&s["x"], &s["y"], &s["z"]), (&json!("été"), &json!("12"), &json!("a|b")));
    assert_eq!((&s["w"], &s["v"]), (&json!(["λ", ",", ["(x"]]), &json!(":é")));
    let mut out = String::new();
    toolspec::plist::print_symbol("12", &mut out);
    assert_eq!(parse_sexp(&out).unwrap().as_symbol(), Some("12"));
}

/// Names holding the characters the plist reader uses internally (found
/// by fuzzing: a JSON key `!\u{F0080}nlyHint` lost its first characters
/// through the plist round trip).
#[test]
fn fuzz_regression_reserved_characters_in_names() {
    let names = ["!\u{F0080}nlyHint", "\u{F0041}", "a\u{F0081}b", "\u{F0080}", "x\u{F007F}"];
    let props: toolspec::value::Map<String, Value> =
        names.iter().map(|n| (n.to_string(), json!({"type": "string", "description": "d"}))).collect();
    let doc = mcp(json!({"type": "object", "properties": {"o": {"type": "object", "properties": props}}}));
    let mut doc = doc;
    doc["annotations"] = json!({"!\u{F0080}nlyHint": true});
    let tools = import(&doc).tools;
    let back = via_plist(&tools);
    assert_eq!(back, tools);
    assert_eq!(write(&back[0], Dialect::Mcp)["annotations"], json!({"!\u{F0080}nlyHint": true}));
    let text = "(:name \"t\" :args ((:name \"a\" :type string :description \"d\" :default !\u{F0080}x)))";
    assert_eq!(tools_from_elisp(text).unwrap()[0].args[0].schema["default"], json!("!\u{F0080}x"));
}

/// What the module makes of an import (as elisp text): read whole and
/// emitted with the problems of each tool, or streamed.
fn emitted(text: &str, format: Format, streamed: bool) -> String {
    let opts = ReadOptions { format, default_name: Some("bare"), max_size: 64 << 20, ..ReadOptions::default() };
    let mut out = String::new();
    let mut sink = toolspec::plist::Text::new(&mut out);
    if streamed {
        if let Err(e) = toolspec::emit_streamed_import(
            |each, restart| toolspec::read::read_str_each(text, &opts, each, restart),
            true,
            true,
            &mut sink,
        ) {
            return format!("error: {e}");
        }
    } else {
        match toolspec::parse_json(text, &opts) {
            Ok(imp) => toolspec::emit_imported(&imp, Some(&toolspec::validate_tools(&imp.tools)), &mut sink),
            Err(e) => return format!("error: {e}"),
        }
    }
    out
}

#[test]
fn streamed_import_gives_what_reading_whole_gives() {
    // Tools read and checked on other threads, handed over one by one,
    // against the whole import then checked: the same tools, warnings,
    // paths and problems.  Some tools have problems (a name clients
    // refuse, an empty description), some a warning from reading (a type
    // made JSON Schema's), and a large catalog is scanned for duplicate
    // keys while it is parsed.
    for n in [1, 3, 64, 300, 2000] {
        let tools: Vec<Value> = (0..n)
            .map(|i| {
                let name = if i % 7 == 0 { format!("bad name {i}") } else { format!("tool_{i}") };
                let description =
                    if i % 5 == 0 { String::new() } else { format!("Tool number {i}, {}.", "x".repeat(i % 200)) };
                let kind = if i % 11 == 0 { "int" } else { "integer" };
                json!({"name": name, "description": description,
                       "inputSchema": {"type": "object", "properties": {"x": {"type": kind}}, "required": ["x"]}})
            })
            .collect();
        let mut text = serde_json::to_string(&json!({"tools": tools})).unwrap();
        // A duplicate key, and in the last tool an integer beyond 64
        // bits: the text is parsed noting them, and scanned for them.
        text = text.replacen("{\"name\":\"tool_1\"", "{\"name\":\"tool_1\",\"name\":\"tool_1\"", 1);
        let last = text.rfind("{\"type\":\"int").unwrap();
        text.insert_str(last + 1, "\"maximum\":123456789012345678901234567890,");
        let whole = emitted(&text, Format::Auto, false);
        assert!(!whole.starts_with("error"), "{n} tools: {whole}");
        assert_eq!(whole.matches("beyond 64 bits").count(), 1, "{n} tools: {whole}");
        assert_eq!(whole.matches("duplicate key").count(), usize::from(n > 1), "{n} tools: {whole}");
        assert!(whole.contains("(error "), "{n} tools: no problems to compare");
        assert_eq!(emitted(&text, Format::Auto, true), whole, "{n} tools");
    }
    // Every example and fixture, in every format it names, errors included.
    let mut files: Vec<_> = ["examples", "test/fixtures"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() > 15, "{} files", files.len());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for format in [Format::Auto, Format::Mcp, Format::OpenAi, Format::Gemini] {
            assert_eq!(emitted(&text, format, true), emitted(&text, format, false), "{} as {format:?}", file.display());
        }
    }
    // Lists read item by item, and documents read whole: a `$ref` from
    // one item into another (spelled plainly or escaped), lists in lists,
    // a list beside another key.
    let x = r##"{"name": "a", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/1/parameters/properties/y"}}}}"##;
    let y = r#"{"name": "b", "parameters": {"type": "object", "properties": {"y": {"type": "integer", "description": "Y."}}}}"#;
    for text in [
        format!("[{x}, {y}]"),
        format!("[{}, {y}]", x.replace("$ref", "\\u0024ref")),
        format!("[{}, {y}]", x.replace("$ref", "$r\\u0065f")),
        format!("[[{y}], [[{y}]]]"),
        format!("{{\"tools\": [{y}], \"nextCursor\": \"2\"}}"),
        format!("{{\"tools\": [{y}, {y}]}}"),
        format!("  \n[{y}]"),
        // Known not to be a list only after tools were handed over: the
        // reader starts again, and they are not handed over twice.
        format!("{{\"tools\": [{y}, {}], \"nextCursor\": \"2\"}}", y.replace("\"b\"", "\"c\"")),
        format!("{{\"tools\": [{y}], \"tools\": [{}]}}", y.replace("\"b\"", "\"c\"")),
        format!("{{\"tool\\u0073\": [{y}]}}"),
    ] {
        let whole = emitted(&text, Format::Auto, false);
        assert!(!whole.starts_with("error"), "{text}: {whole}");
        assert_eq!(emitted(&text, Format::Auto, true), whole, "{text}");
    }
    // A slip a repair mends, found after tools were handed over.
    let skydeck = std::fs::read_to_string("examples/skydeck.json").unwrap();
    let slipped = format!("{},\n}}", skydeck.trim_end().trim_end_matches('}').trim_end());
    let text = format!("[{skydeck}, {slipped}]");
    let whole = emitted(&text, Format::Auto, false);
    assert!(whole.contains("trailing comma") && !whole.starts_with("error"), "{whole}");
    assert_eq!(emitted(&text, Format::Auto, true), whole);
    // Errors: not JSON, no tools, a tool that can't be read, a number
    // beyond a double's range, a list nested too deeply.
    for text in [
        "{".to_string(),
        "{\"tools\": []}".to_string(),
        "[{\"name\": \"a\", \"parameters\": 3}]".to_string(),
        format!("[{y}, {}]", y.replace("\"Y.\"}", "\"Y.\", \"maximum\": 1e999}")),
        format!("{}{y}{}", "[".repeat(9), "]".repeat(9)),
        // A tool that can't be read, then text that is not JSON: the
        // text's error, as when read whole.
        format!("[{y}, {{\"name\": \"a\", \"parameters\": 3}}, {y}, {{"),
        format!("[{y}, {{\"name\": \"a\", \"parameters\": 3}}, {y}] x"),
        format!("{{\"tools\": [{y}, {{\"name\": \"a\", \"parameters\": 3}}]"),
    ] {
        let whole = emitted(&text, Format::Auto, false);
        assert!(whole.starts_with("error"), "{text}: {whole}");
        assert_eq!(emitted(&text, Format::Auto, true), whole, "{text}");
    }
}

#[test]
fn a_list_is_read_again_only_when_it_turns_out_not_to_be_one() {
    // The tools handed over, and how often the reader started again.
    let read = |text: &str| {
        let (mut names, mut restarts) = (Vec::new(), 0);
        let r =
            toolspec::read::read_str_each(text, &ReadOptions::default(), &mut |t, _| names.push(t.name), &mut || {
                restarts += 1
            });
        r.map(|_| (names, restarts))
    };
    let tool = |n: &str| format!(r#"{{"name": "{n}", "parameters": {{"type": "object", "properties": {{}}}}}}"#);
    let (a, b) = (tool("a"), tool("b"));
    assert_eq!(read(&format!("[{a}, {b}]")).unwrap(), (vec!["a".to_string(), "b".into()], 0));
    assert_eq!(read(&format!("{{\"tools\": [{a}, {b}]}}")).unwrap(), (vec!["a".to_string(), "b".into()], 0));
    // The key after the list is found once both tools were handed over.
    assert_eq!(
        read(&format!("{{\"tools\": [{a}, {b}], \"nextCursor\": \"2\"}}")).unwrap(),
        (vec!["a".to_string(), "b".into(), "a".into(), "b".into()], 1)
    );
    // Before the list: nothing was handed over, nothing to forget.
    assert_eq!(read(&format!("{{\"nextCursor\": \"2\", \"tools\": [{a}]}}")).unwrap(), (vec!["a".to_string()], 0));
    // Not JSON after a tool: the text's error, found by the general reader.
    let e = read(&format!("[{a}, {b}, ")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json, "{e}");
}

#[test]
fn tools_of_one_import_named_alike_are_warned_of() {
    let tool = |n: &str| {
        format!(r#"{{"name": "{n}", "description": "d", "parameters": {{"type": "object", "properties": {{}}}}}}"#)
    };
    let (a, b) = (tool("a"), tool("b"));
    let twice = |w: &[Problem]| -> Vec<(String, String)> {
        w.iter()
            .filter(|p| p.message.contains("is also the name of the tool at"))
            .map(|p| (p.path.to_string(), p.message.clone()))
            .collect()
    };
    // Read whole, and streamed; a list, and the same list behind a key
    // found after it (the streamed reader starts again: the names it had
    // noted are forgotten, not warned of twice).
    for (text, at) in [
        (format!("[{a}, {b}, {a}, {a}]"), ["[2]", "[3]", "[0]"]),
        (format!("{{\"tools\": [{a}, {b}, {a}, {a}]}}"), ["tools[2]", "tools[3]", "tools[0]"]),
        (format!("{{\"tools\": [{a}, {b}, {a}, {a}], \"nextCursor\": \"2\"}}"), ["tools[2]", "tools[3]", "tools[0]"]),
    ] {
        let whole = read_str(&text, &ReadOptions::default()).unwrap();
        let handed = std::cell::RefCell::new(Vec::new());
        let streamed = toolspec::read::read_str_each(
            &text,
            &ReadOptions::default(),
            &mut |t, p| handed.borrow_mut().push((t.name, p)),
            &mut || handed.borrow_mut().clear(),
        )
        .unwrap();
        assert_eq!(handed.borrow().len(), 4, "{text}");
        for w in [twice(&whole.warnings), twice(&streamed.warnings)] {
            assert_eq!(w.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), at[..2], "{text}");
            for (_, m) in &w {
                assert!(
                    m.starts_with(&format!("the tool name \"a\" is also the name of the tool at {}:", at[2])),
                    "{m}"
                );
                assert!(m.contains("rename one of them"), "{m}");
            }
        }
    }
    // Names apart, and the same name in another case: no warning.
    for text in [format!("[{a}, {b}]"), format!("[{a}, {}]", tool("A"))] {
        assert!(twice(&read_str(&text, &ReadOptions::default()).unwrap().warnings).is_empty(), "{text}");
    }
}

#[test]
fn checking_a_tool_of_the_model_is_checking_its_printed_plist() {
    // `validate_tool` sees the model's tool without printing it; what it
    // finds must be what `toolspec-validate` finds in the printed plist.
    let mut tools: Vec<Tool> = Vec::new();
    let mut files: Vec<_> = ["examples", "test/fixtures"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for file in &files {
        if let Ok(imp) = read_str(&std::fs::read_to_string(file).unwrap(), &ReadOptions::default()) {
            tools.extend(imp.tools);
        }
    }
    assert!(tools.len() > 20, "{} tools", tools.len());
    // Schemas the readers would mend, made by hand: every kind of problem.
    let schemas = [
        json!({"type": "str", "description": "a type that is not JSON's"}),
        json!({"type": 3}),
        json!({"type": ["string", "null"]}),
        json!({"type": "array"}),
        json!({"type": "string", "items": {"type": "string"}, "properties": {}, "required": ["x"]}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2.5, "x", null, true]}},
               "required": ["a", "b", 3]}),
        json!({"type": "object", "properties": {"a": {"description": 4}, "b": {"anyOf": [{"type": "integer"}, 5]}}}),
        json!({"enum": "no vector", "oneOf": 3, "description": "x"}),
        json!({"type": "boolean", "enum": [true, false, null, {}]}),
        json!({"type": "object", "required": {}, "properties": {"a": 1}}),
        json!({"type": "object", "properties": (0..40).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect::<toolspec::value::Map<_, _>>(),
               "required": ["p3", "p39", "p40"]}),
    ];
    for (i, schema) in schemas.iter().enumerate() {
        tools.push(Tool {
            name: if i % 3 == 0 { format!("Bad Name {i}") } else { format!("tool{i}") },
            description: (i % 2 == 0).then(|| format!("Tool {i}.")),
            args: vec![
                toolspec::model::Arg {
                    name: "a".into(),
                    optional: i % 2 == 1,
                    schema: schema.as_object().unwrap().clone(),
                },
                toolspec::model::Arg {
                    name: if i % 4 == 0 { "a".into() } else { "b".into() },
                    optional: false,
                    schema: Default::default(),
                },
            ],
            ..Default::default()
        });
    }
    let mut with_problems = 0;
    for tool in &tools {
        let mut printed = String::new();
        print_tool(tool, &mut printed);
        let expected = validate(&parse_sexp(&printed).unwrap());
        with_problems += usize::from(expected.iter().any(|p| p.severity == E));
        assert_eq!(toolspec::validate_tool(tool), expected, "{printed}");
    }
    assert!(with_problems >= 10, "{with_problems} tools with errors");
}

/// `required` makes arguments required, a name given twice once; a name
/// among no properties is dropped with one warning, in the order given,
/// for few properties and for many.
#[test]
fn required_names_that_are_no_property_are_dropped_once() {
    for n in [2usize, 40] {
        let props: toolspec::value::Map<String, Value> =
            (0..n).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let mut required: Vec<String> = (0..n).filter(|i| i % 2 == 0).map(|i| format!("p{i}")).collect();
        required.insert(1, "zz".into());
        required.push("zz".into());
        required.push("p0".into());
        required.push("aa".into());
        let imp =
            import(&json!({"name": "t", "inputSchema": {"type": "object", "properties": props, "required": required}}));
        let optional: Vec<bool> = imp.tools[0].args.iter().map(|a| a.optional).collect();
        assert_eq!(optional, (0..n).map(|i| i % 2 == 1).collect::<Vec<_>>(), "{n} properties");
        let warnings: Vec<(&str, &str)> = imp.warnings.iter().map(|w| (w.path.as_str(), w.message.as_str())).collect();
        assert_eq!(
            warnings,
            [
                ("inputSchema.required", "\"zz\" is required but not among the properties: dropped"),
                ("inputSchema.required", "\"aa\" is required but not among the properties: dropped"),
            ],
            "{n} properties"
        );
        let back = write_tool(&imp.tools[0], Dialect::Mcp).unwrap();
        let listed: Vec<String> = (0..n).filter(|i| i % 2 == 0).map(|i| format!("p{i}")).collect();
        assert_eq!(back["inputSchema"]["required"], json!(listed), "{n} properties");
    }
}
