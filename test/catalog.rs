//! Tool files from the wild, read as a whole: one tool that cannot be
//! read never sinks the others, and what a dialect says comes back when
//! it is written again (through the model and through the plist).

use toolspec::json;
use toolspec::plist::{print_tool, Text};
use toolspec::read::{read_bytes, read_str, read_str_each, Format, ReadOptions};
use toolspec::value::Value;
use toolspec::write::{to_text, write_tool, write_tools, Dialect};
use toolspec::{tools_from_elisp, ErrorKind, Imported, Severity, Tool};

const CATALOG: &str = include_str!("fixtures/odd-catalog.json");

/// The tools of the catalog that can be read, in its order.
const READABLE: [&str; 4] = ["lookup_records", "set_flag", "convert_units", "plan_trip"];

/// Each definition that cannot be read: where it goes wrong, and what
/// the message says.
const UNREADABLE: [(&str, &str); 6] = [
    ("[1]", "a tool needs a `name`"),
    ("[3]", "expected a tool definition (an object) or a list of them, found a number"),
    ("[5].parameters.properties", "`properties` must be an object, found an array"),
    ("[6]", "not a tool definition in any known format"),
    ("[8].input_schema.type", "the parameters schema must be of type \"object\", found \"string\""),
    ("[9].inputSchema.properties.node.properties.next.$ref", "recursive $ref cycle"),
];

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

/// The errors among an import's warnings, as (path, message).
fn errors(imp: &Imported) -> Vec<(&str, &str)> {
    imp.warnings
        .iter()
        .filter(|w| w.severity == Severity::Error)
        .map(|w| (w.path.as_str(), w.message.as_str()))
        .collect()
}

/// `imp` has the tools `readable` and exactly the problems `unreadable`,
/// each at its path, in order.
fn check_import(imp: &Imported, readable: &[&str], unreadable: &[(&str, &str)], what: &str) {
    assert_eq!(names(&imp.tools), readable, "{what}");
    let found = errors(imp);
    assert_eq!(found.len(), unreadable.len(), "{what}: {found:#?}");
    for ((path, message), (want_path, phrase)) in found.iter().zip(unreadable) {
        assert_eq!(path, want_path, "{what}");
        assert!(message.contains(phrase) && message.ends_with("is left out"), "{what}: {message}");
    }
}

/// [`read_str_each`] of `text`, as the Emacs module imports: the tools
/// handed over (forgotten on a restart) and the import.
fn read_each(text: &str, opts: &ReadOptions) -> (Vec<Tool>, Vec<String>, Imported) {
    let handed = std::cell::RefCell::new((Vec::new(), Vec::new()));
    let imp = read_str_each(
        text,
        opts,
        &mut |tool, path| {
            let mut h = handed.borrow_mut();
            h.0.push(tool);
            h.1.push(path);
        },
        &mut || {
            let mut h = handed.borrow_mut();
            h.0.clear();
            h.1.clear();
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (tools, paths) = handed.into_inner();
    (tools, paths, imp)
}

/// `imp` with the tools handed over.
fn with_tools(mut imp: Imported, tools: Vec<Tool>) -> Imported {
    imp.tools = tools;
    imp
}

/// The catalog without its definition holding a `$ref` (a text that may
/// refer is read whole; one that does not, item by item as it is parsed).
fn catalog_without_refs() -> String {
    let items: Vec<Value> = serde_json::from_str::<Vec<Value>>(CATALOG).unwrap();
    let kept: Vec<&Value> = items.iter().filter(|t| t.get("name") != Some(&json!("cyclic"))).collect();
    serde_json::to_string(&kept).unwrap()
}

/// The catalog `copies` times over, as one list: past the size from which
/// reading and checking are spread over threads.
fn big_catalog(text: &str, copies: usize) -> String {
    let items: Vec<Value> = serde_json::from_str(text).unwrap();
    let all: Vec<&Value> = (0..copies).flat_map(|_| items.iter()).collect();
    serde_json::to_string(&all).unwrap()
}

#[test]
fn every_readable_tool_of_a_catalog_is_read_and_each_other_reported_at_its_path() {
    let opts = ReadOptions::default();
    // Read whole (the text has a `$ref`): on this thread, and each tool
    // handed over as it is read.
    let imp = read_str(CATALOG, &opts).unwrap();
    check_import(&imp, &READABLE, &UNREADABLE, "read_str");
    assert_eq!(imp.paths, ["[0]", "[2]", "[4]", "[7]"]);
    check_import(&read_bytes(CATALOG.as_bytes(), &opts).unwrap(), &READABLE, &UNREADABLE, "read_bytes");
    let (tools, paths, imp) = read_each(CATALOG, &opts);
    assert_eq!(names(&tools), READABLE);
    assert_eq!(paths, ["[0]", "[2]", "[4]", "[7]"]);
    check_import(&with_tools(imp, tools), &READABLE, &UNREADABLE, "read_str_each");
    // Without a `$ref`, the list is read item by item as it is parsed.
    let text = catalog_without_refs();
    let (tools, _, imp) = read_each(&text, &opts);
    check_import(&with_tools(imp, tools), &READABLE, &UNREADABLE[..5], "read item by item");
    // Many times over, read on several threads: the same, in order.
    for (text, unreadable) in
        [(big_catalog(CATALOG, 400), &UNREADABLE[..]), (big_catalog(&text, 400), &UNREADABLE[..5])]
    {
        assert!(text.len() >= toolspec::read::BIG, "{} bytes", text.len());
        let per = serde_json::from_str::<Vec<Value>>(CATALOG).unwrap().len() - usize::from(unreadable.len() == 5);
        let readable: Vec<&str> = (0..400).flat_map(|_| READABLE).collect();
        let shifted: Vec<(String, &str)> = (0..400)
            .flat_map(|copy| {
                unreadable.iter().map(move |(path, phrase)| {
                    let (i, rest) = path[1..].split_once(']').unwrap();
                    let i: usize = i.parse().unwrap();
                    // The cyclic definition comes after `not_an_object`:
                    // without it, the items keep their places.
                    (format!("[{}]{rest}", copy * per + i), *phrase)
                })
            })
            .collect();
        let shifted: Vec<(&str, &str)> = shifted.iter().map(|(p, m)| (p.as_str(), *m)).collect();
        check_import(&read_str(&text, &opts).unwrap(), &readable, &shifted, "read_str, big");
        let (tools, _, imp) = read_each(&text, &opts);
        check_import(&with_tools(imp, tools), &readable, &shifted, "read_str_each, big");
    }
}

#[test]
fn a_streamed_import_emits_every_readable_tool_and_the_errors_of_the_others() {
    // The path the Emacs module takes: read (on another thread for a big
    // input), checked and printed in turn.
    for text in [CATALOG.to_string(), big_catalog(CATALOG, 400), big_catalog(&catalog_without_refs(), 400)] {
        for big in [false, true] {
            let mut out = String::new();
            toolspec::emit_streamed_import(
                |each, restart| read_str_each(&text, &ReadOptions::default(), each, restart),
                true,
                big,
                &mut Text::new(&mut out),
            )
            .unwrap();
            let copies = if text.len() > CATALOG.len() * 2 { 400 } else { 1 };
            for name in READABLE {
                assert_eq!(
                    out.matches(&format!("(:name \"{name}\"")).count(),
                    copies,
                    "{name} in {} bytes",
                    text.len()
                );
            }
            assert_eq!(out.matches("is left out\")").count() % copies, 0);
            assert!(out.matches("is left out\")").count() >= 5 * copies, "{}", &out[out.len().saturating_sub(2000)..]);
            assert!(out.contains("(error \"[1]\" \"a tool needs a `name`"), "{}", &out[..2000.min(out.len())]);
        }
    }
}

#[test]
fn strict_refuses_the_whole_catalog_at_its_first_unreadable_tool() {
    let strict = ReadOptions { strict: true, ..ReadOptions::default() };
    for text in [CATALOG.to_string(), catalog_without_refs(), big_catalog(CATALOG, 400)] {
        let e = read_str(&text, &strict).unwrap_err();
        assert_eq!((e.kind, e.path.as_deref()), (ErrorKind::Shape, Some("[1]")), "{e}");
        let handed = std::cell::Cell::new(0);
        let e =
            read_str_each(&text, &strict, &mut |_, _| handed.set(handed.get() + 1), &mut || handed.set(0)).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("[1]"), "{e}");
    }
    // When nothing can be read, the first definition's error is the
    // import's, strict or not, of its kind.
    for opts in [ReadOptions::default(), strict] {
        let e = read_str(r#"[{"frobnicate": 1}, 42]"#, &opts).unwrap_err();
        assert_eq!((e.kind, e.path.as_deref()), (ErrorKind::UnsupportedFormat, Some("[0]")), "{e}");
        let e = read_str(r##"{"tools": [{"name": "c", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}}}]}"##, &opts)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Ref, "{e}");
    }
}

#[test]
fn unknown_types_of_a_catalog_constrain_nothing_and_known_ones_map() {
    let imp = read_str(CATALOG, &ReadOptions::default()).unwrap();
    let mcp = |t: &Tool| write_tool(t, Dialect::Mcp).unwrap()["inputSchema"]["properties"].clone();
    assert_eq!(
        mcp(&imp.tools[0]),
        json!({"query": {"description": "What to look for."}, "ids": {"description": "Record ids."},
               "limit": {"type": "integer", "description": "How many."},
               "fields": {"type": "array", "items": {}, "description": "Fields to return."}})
    );
    assert_eq!(
        mcp(&imp.tools[1]),
        json!({"value": {"type": ["boolean", "string"], "description": "The value."},
               "note": {"description": "Anything at all."}, "label": {"description": "A label."}})
    );
    for (path, name) in [
        ("[0].function.parameters.properties.query.type", "any"),
        ("[0].function.parameters.properties.ids.type", "ArrayList"),
        ("[0].function.parameters.properties.fields.items.type", "any"),
        ("[2].inputSchema.properties.label.type", ""),
    ] {
        let w = imp.warnings.iter().find(|w| w.path == path).unwrap_or_else(|| panic!("no warning at {path}"));
        assert_eq!(w.severity, Severity::Warning);
        assert!(w.message.contains(&format!("unknown type \"{name}\": read as no type constraint")), "{}", w.message);
    }
    // No tool read is an error for the validator (which the import runs).
    for t in &imp.tools {
        let problems = toolspec::validate_tool(t);
        assert!(problems.iter().all(|p| p.severity == Severity::Warning), "{}: {problems:#?}", t.name);
    }
}

// ------------------------------------------------------------- lossless

/// An MCP `tools/list` result as OpenAPI-generated servers and pydantic
/// write them: root `title`, `$defs` and `$ref`s, a type union, a
/// property with no type, keywords toolspec does not know.
fn mcp_doc() -> Value {
    json!({"tools": [
        {"name": "create_pet", "title": "Create a pet", "description": "Create a pet.",
         "inputSchema": {"type": "object",
            "properties": {
                "body": {"$ref": "#/$defs/Pet", "description": "The pet."},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}, "x-order": 2},
                "flag": {"type": ["boolean", "string"], "description": "Yes, no, or a word."},
                "anything": {"description": "Any value."},
                "maybe": {"type": ["integer", "null"], "default": null},
                "choice": {"anyOf": [{"$ref": "#/$defs/Tag"}, {"type": "integer", "minimum": 1}]}},
            "required": ["body"],
            "title": "create_petArguments",
            "$defs": {
                "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "tag": {"$ref": "#/$defs/Tag"}},
                        "required": ["name"], "title": "Pet"},
                "Tag": {"type": "string", "enum": ["a", "b"], "title": "Tag"}},
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#",
            "x-vendor": {"k": [1, true, null]}},
         "annotations": {"readOnlyHint": true}},
        {"name": "plain", "description": "No arguments.", "inputSchema": {"type": "object", "properties": {}}}
    ]})
}

fn compact(v: &Value) -> String {
    to_text(v, false)
}

/// `written` is `doc`, every key in its order but the root of each
/// parameters schema, whose `type`, `properties` and `required` come
/// first (a listed normalisation).
fn assert_same_mcp(written: &Value, doc: &Value, what: &str) {
    assert_eq!(written, doc, "{what}:\n{}\n{}", compact(written), compact(doc));
    for (w, d) in written["tools"].as_array().unwrap().iter().zip(doc["tools"].as_array().unwrap()) {
        let (ws, ds) = (&w["inputSchema"], &d["inputSchema"]);
        for (k, v) in ds.as_object().unwrap() {
            assert_eq!(compact(&ws[k.as_str()]), compact(v), "{what}: {k} in the same order");
        }
    }
}

#[test]
fn mcp_read_and_written_again_is_the_same_document() {
    let doc = mcp_doc();
    let imp = read_str(&compact(&doc), &ReadOptions { format: Format::Mcp, ..ReadOptions::default() }).unwrap();
    assert!(imp.warnings.is_empty(), "{:#?}", imp.warnings);
    assert_same_mcp(&write_tools(&imp.tools, Dialect::Mcp).unwrap(), &doc, "through the model");
    // Through the plist users hold (`toolspec-read-file' gives it,
    // `toolspec-to-json' takes it).
    let mut printed = String::new();
    for t in &imp.tools {
        print_tool(t, &mut printed);
    }
    let back = tools_from_elisp(&format!("({printed})")).unwrap();
    assert_same_mcp(&write_tools(&back, Dialect::Mcp).unwrap(), &doc, "through the plist");
    // The plist's arguments are self-contained (gptel sends them as they
    // are): the `$ref`s are inlined there.
    let body = &imp.tools[0].args[0].schema;
    assert_eq!(body["properties"]["tag"], json!({"type": "string", "enum": ["a", "b"], "title": "Tag"}));
    let args = &printed[..printed.find(":schema-extra").expect("the root keywords")];
    assert!(!args.contains("$ref"), "{args}");
}

#[test]
fn kept_refs_are_put_back_only_in_json_schema_dialects_and_never_leak() {
    let doc = mcp_doc();
    let imp = read_str(&compact(&doc), &ReadOptions::default()).unwrap();
    let tool = &imp.tools[0];
    for d in [
        Dialect::OpenAi,
        Dialect::OpenAiResponses,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Bedrock,
        Dialect::Ollama,
        Dialect::JsonSchema,
        Dialect::Mcp,
        Dialect::Gemini,
    ] {
        let text = compact(&write_tool(tool, d).unwrap());
        assert!(!text.contains(toolspec::schema::INLINED_REFS), "{d:?}: {text}");
        // Gemini's schema has no `$ref`: it keeps the expansions.
        assert_eq!(text.contains("\"$ref\""), d != Dialect::Gemini, "{d:?}: {text}");
    }
    let anthropic = write_tool(tool, Dialect::Anthropic).unwrap();
    assert_eq!(anthropic["input_schema"]["properties"]["body"], doc["tools"][0]["inputSchema"]["properties"]["body"]);
    assert_eq!(anthropic["input_schema"]["$defs"], doc["tools"][0]["inputSchema"]["$defs"]);
    let gemini = write_tool(tool, Dialect::Gemini).unwrap();
    assert_eq!(gemini["parameters"]["properties"]["body"]["properties"]["name"], json!({"type": "string"}));
    // An argument changed in the plist since it was read is written as it
    // now is, not as the `$ref` it was read from.
    let mut changed = tool.clone();
    changed.args[0].schema.insert("description".into(), json!("Another pet."));
    let written = write_tool(&changed, Dialect::Mcp).unwrap();
    let body = &written["inputSchema"]["properties"]["body"];
    assert_eq!(body["description"], "Another pet.");
    assert_eq!(body["properties"]["name"], json!({"type": "string"}));
    assert_eq!(written["inputSchema"]["properties"]["tags"], doc["tools"][0]["inputSchema"]["properties"]["tags"]);
}

// ------------------------------------------------------- real servers

/// Tools as four MCP servers list them (`tools/list`, copied as they
/// are): the Python servers' (`git_status`, `get_current_time`) keys in
/// alphabetical order, pydantic's root `properties, required, type,
/// title`; the reference TypeScript server's `$schema` first (`echo`);
/// zod's `$ref`s to another property (`sequentialthinking`).
const SERVERS: &str = include_str!("fixtures/mcp-servers.json");

/// The MCP document of `tools`, as compact text (key order kept).
fn mcp_text(tools: &[Tool]) -> String {
    compact(&write_tools(tools, Dialect::Mcp).unwrap())
}

#[test]
fn real_servers_tools_come_back_from_mcp_key_for_key_in_their_order() {
    let doc: Value = serde_json::from_str(SERVERS).unwrap();
    let want = compact(&doc);
    let opts = ReadOptions { format: Format::Mcp, ..ReadOptions::default() };
    let imp = read_str(SERVERS, &opts).unwrap();
    assert!(imp.warnings.is_empty(), "{:#?}", imp.warnings);
    assert_eq!(mcp_text(&imp.tools), want, "through the model");
    // As the CLI and `toolspec-read-file' read it, tool by tool.
    let (each, _, _) = read_each(SERVERS, &opts);
    assert_eq!(mcp_text(&each), want, "read tool by tool");
    // Through the plists `toolspec-read-file' gives and `toolspec-to-json'
    // takes, printed and read back.
    let mut printed = String::new();
    for t in &imp.tools {
        print_tool(t, &mut printed);
    }
    let back = tools_from_elisp(&format!("({printed})")).unwrap();
    assert_eq!(mcp_text(&back), want, "through the plists");
    // A tool already in the writers' order carries no record of it.
    let canonical = r#"{"tools": [{"name": "n", "title": "N", "description": "d", "inputSchema": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"],
        "additionalProperties": false}, "annotations": {}}]}"#;
    let plain = read_str(canonical, &opts).unwrap();
    assert!(!plain.tools[0].schema_extra.contains_key(toolspec::model::KEY_ORDER), "{:?}", plain.tools[0].schema_extra);
    let v: Value = serde_json::from_str(canonical).unwrap();
    assert_eq!(mcp_text(&plain.tools), compact(&v));
}

#[test]
fn a_tool_edited_in_its_plist_keeps_the_order_it_was_read_in_around_the_change() {
    let imp = read_str(SERVERS, &ReadOptions { format: Format::Mcp, ..ReadOptions::default() }).unwrap();
    let mut git = imp.tools[0].clone();
    // A new optional argument, and a new tool-level key.
    git.args.push(toolspec::model::Arg { name: "verbose".into(), optional: true, schema: Default::default() });
    git.extra.insert("_meta".into(), json!({"x": 1}));
    let out = write_tool(&git, Dialect::Mcp).unwrap();
    let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["annotations", "_meta", "description", "inputSchema", "name"]);
    let root: Vec<&str> = out["inputSchema"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(root, ["properties", "required", "type", "title"]);
    assert_eq!(out["inputSchema"]["required"], json!(["repo_path"]));
    // Other dialects put their own keys in the same order.
    let anthropic = write_tool(&imp.tools[0], Dialect::Anthropic).unwrap();
    let keys: Vec<&str> = anthropic.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["description", "input_schema", "name"]);
}

#[test]
fn a_required_list_keeps_its_order_and_the_root_its_keys_order() {
    // A function of the BFCL catalog, as it is there: `required` before
    // `properties`, and in another order than the properties.
    let look = r#"[{"name": "look", "description": "Adjust the viewing angle of the camera to a specific orientation defined by yaw and pitch values in radians.", "parameters": {"type": "dict", "required": ["yaw", "pitch"], "properties": {"pitch": {"type": "float", "description": "The angle in radians to point up or down. 0 radians means straight forward. Positive values up to pi/2 radians mean pointing upwards, and negative values down to -pi/2 radians mean pointing downwards."}, "yaw": {"type": "float", "description": "The angle in radians for rotation around the vertical axis, starting from due east and rotating counter-clockwise."}}}}]"#;
    let imp = read_str(look, &ReadOptions::default()).unwrap();
    let mut printed = String::new();
    print_tool(&imp.tools[0], &mut printed);
    let back = tools_from_elisp(&format!("({printed})")).unwrap();
    for tools in [&imp.tools, &back] {
        for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp] {
            let params = &toolspec::write::parameters(&tools[0], d);
            let keys: Vec<&str> = params.keys().map(String::as_str).collect();
            assert_eq!(keys, ["type", "required", "properties"], "{d:?}");
            assert_eq!(params["required"], json!(["yaw", "pitch"]), "{d:?}");
            let text = compact(&write_tool(&tools[0], d).unwrap());
            assert!(!text.contains(toolspec::model::KEY_ORDER), "{d:?}: {text}");
        }
    }
    // An argument made optional in the plist leaves the list; the others
    // keep their order.
    let mut changed = imp.tools[0].clone();
    changed.args[1].optional = true;
    assert_eq!(toolspec::write::parameters(&changed, Dialect::Mcp)["required"], json!(["pitch"]));
}

#[test]
fn refs_to_other_properties_are_put_back_and_strict_output_is_unravelled() {
    let imp = read_str(SERVERS, &ReadOptions::default()).unwrap();
    let thinking = imp.tools.iter().find(|t| t.name == "sequentialthinking").unwrap();
    let doc: Value = serde_json::from_str(SERVERS).unwrap();
    let mcp = write_tool(thinking, Dialect::Mcp).unwrap();
    assert_eq!(compact(&mcp), compact(&doc["tools"][3]));
    // The plist's arguments are self-contained.
    let revision = &thinking.args.iter().find(|a| a.name == "isRevision").unwrap().schema;
    assert_eq!(revision.get("$ref"), None);
    assert_eq!(revision["type"], json!(["boolean", "string"]));
    // OpenAI strict: no `$ref` beside other keywords, which the Agents
    // SDK's ensure_strict_json_schema would unravel.
    fn no_sibling_ref(v: &Value, path: &str) {
        match v {
            Value::Object(o) => {
                assert!(!(o.contains_key("$ref") && o.len() > 1), "{path}: {}", compact(v));
                o.iter().for_each(|(k, x)| no_sibling_ref(x, &format!("{path}/{k}")));
            }
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| no_sibling_ref(x, &format!("{path}/{i}"))),
            _ => {}
        }
    }
    let strict = write_tool(thinking, Dialect::OpenAiStrict).unwrap();
    no_sibling_ref(&strict, "");
    let props = &strict["function"]["parameters"]["properties"];
    assert_eq!(props["needsMoreThoughts"]["description"], "If more thoughts are needed");
    assert_eq!(props["needsMoreThoughts"]["type"], json!(["boolean", "string", "null"]));
    // The same for a `$ref` into `$defs` with a description beside it.
    let tool = &read_str(&compact(&mcp_doc()), &ReadOptions::default()).unwrap().tools[0];
    let strict = write_tool(tool, Dialect::OpenAiStrict).unwrap();
    no_sibling_ref(&strict, "");
    assert_eq!(strict["function"]["parameters"]["properties"]["body"]["description"], "The pet.");
    assert_eq!(strict["function"]["parameters"]["properties"]["body"]["additionalProperties"], json!(false));
}
