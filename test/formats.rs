//! The dialect registry and its writers: provider-safe names, the
//! tool-level keys each dialect keeps, OpenAI strict and Gemini output.

use toolspec::formats::{self, REGISTRY};
use toolspec::json;
use toolspec::plist::print_tools;
use toolspec::read::ReadOptions;
use toolspec::value::Value;
use toolspec::write::{write_tools, write_tools_warn, Dialect, DIALECT_NAMES};
use toolspec::{parse_json, serialized_plists_to_json, serialized_plists_to_texts, tools_from_elisp, Tool};

fn read(v: &Value) -> Vec<Tool> {
    parse_json(&v.to_string(), &ReadOptions::default()).unwrap().tools
}

/// The tools of `doc` after a trip through printed plists, as
/// `toolspec-read-file' hands them to users and `toolspec-to-json' takes
/// them back.
fn through_plists(tools: &[Tool]) -> Vec<Tool> {
    let mut printed = String::new();
    print_tools(tools, &mut printed);
    tools_from_elisp(&printed).unwrap()
}

/// The name of each tool in a written document of `dialect`.
fn names(doc: &Value, dialect: Dialect) -> Vec<String> {
    let list = match dialect.profile().document_key {
        Some(k) => doc[k].as_array().unwrap().clone(),
        None => doc.as_array().unwrap().clone(),
    };
    list.iter()
        .map(|t| {
            let t = if t.get("function").is_some() {
                &t["function"]
            } else if t.get("toolSpec").is_some() {
                &t["toolSpec"]
            } else {
                t
            };
            t.get("name").or(t.get("title")).and_then(Value::as_str).unwrap().to_string()
        })
        .collect()
}

#[test]
fn registry_gives_every_dialect_name_and_one_profile() {
    let names: Vec<&str> = DIALECT_NAMES.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, formats::names());
    for (n, d) in DIALECT_NAMES {
        assert_eq!(d.name(), *n);
        assert_eq!(Dialect::parse(n).unwrap(), *d);
        assert_eq!(d.profile().name, *n);
    }
    let mut names: Vec<&str> = REGISTRY.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), REGISTRY.len(), "two dialects share a name");
    assert!(REGISTRY.len() >= 9);
    assert!(formats::summary().lines().count() == REGISTRY.len());
}

#[test]
fn invalid_names_are_made_valid_and_distinct_per_dialect_with_warnings() {
    let doc = json!([
        {"name": "math.sum", "description": "Add.", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}},
        {"name": "math_sum", "description": "Also add.", "inputSchema": {"type": "object"}},
        {"name": "9lives", "description": "Cat.", "inputSchema": {"type": "object"}},
        {"name": "ok", "description": "Fine.", "inputSchema": {"type": "object"}}
    ]);
    let tools = read(&doc);
    for (_, d) in DIALECT_NAMES {
        let (out, warnings) = write_tools_warn(&tools, *d).unwrap();
        let written = names(&out, *d);
        let rule = &d.profile().names;
        for n in &written {
            assert!(rule.valid(n), "{} refuses {n}", d.name());
        }
        let mut uniq = written.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), written.len(), "{}: {written:?}", d.name());
        assert_eq!(written[1], "math_sum", "a valid name is kept: {}", d.name());
        assert_eq!(written[3], "ok");
        let renamed: Vec<&str> =
            warnings.iter().filter(|w| w.path.ends_with("].name")).map(|w| w.path.as_str()).collect();
        match d.name() {
            "mcp" | "json-schema" => {
                assert_eq!(written[0], "math.sum");
                assert!(renamed.is_empty(), "{renamed:?}");
            }
            "gemini" => {
                assert_eq!(written[0], "math.sum", "Gemini takes dots");
                assert_eq!(written[2], "_9lives", "Gemini names start with a letter or _");
                assert_eq!(renamed, ["[2].name"]);
            }
            _ => {
                assert!(written[0].starts_with("math_sum_"), "{written:?}");
                assert_eq!(written[2], "9lives");
                assert_eq!(renamed, ["[0].name"]);
                let w = warnings.iter().find(|w| w.path == "[0].name").unwrap();
                assert!(
                    w.message.contains("\"math.sum\"") && w.message.contains(&format!("\"{}\"", written[0])),
                    "{}",
                    w.message
                );
            }
        }
        // Deterministic.
        assert_eq!(write_tools(&tools, *d).unwrap(), out);
    }
}

#[test]
fn serialized_plists_are_renamed_as_the_document_is() {
    // What `toolspec-tools-to-json' sends the module (`json-serialize'd
    // plists), compact and pretty.
    let text = r#"[{"name":"math.sum","description":"A.","args":[]},{"name":"math_sum","description":"B.","args":[]}]"#;
    let texts = serialized_plists_to_texts(text, Dialect::OpenAi).unwrap();
    let doc: Vec<Value> = texts.iter().map(|t| serde_json::from_str(t).unwrap()).collect();
    let written: Vec<&str> = doc.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(written[0].starts_with("math_sum_") && written[1] == "math_sum", "{written:?}");
    let pretty: Value = serde_json::from_str(&serialized_plists_to_json(text, Dialect::OpenAi, true).unwrap()).unwrap();
    assert_eq!(names(&pretty, Dialect::OpenAi), written);
    let alone = serialized_plists_to_texts(r#"[{"name":"math.sum","description":"A.","args":[]}]"#, Dialect::Anthropic)
        .unwrap();
    assert!(alone[0].contains(r#""name":"math_sum""#), "{}", alone[0]);
}

#[test]
fn mcp_to_mcp_keeps_every_tool_level_key_in_order() {
    let tool = json!({
        "name": "fetch.page",
        "title": "Fetch a page",
        "description": "Fetch a URL.",
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string", "description": "The URL."}}, "required": ["url"]},
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"title": "Fetch", "readOnlyHint": true, "openWorldHint": true},
        "execution": {"taskSupport": "optional"},
        "icons": [{"src": "https://example.invalid/i.png", "mimeType": "image/png"}],
        "_meta": {"io.example/x": 1},
        "futureField": {"anything": [1, 2]}
    });
    let doc = json!({"tools": [tool]});
    let tools = read(&doc);
    assert_eq!(write_tools(&tools, Dialect::Mcp).unwrap(), doc);
    let out = write_tools(&tools, Dialect::Mcp).unwrap();
    let keys: Vec<&String> = out["tools"][0].as_object().unwrap().keys().collect();
    let want: Vec<&String> = tool.as_object().unwrap().keys().collect();
    assert_eq!(keys, want);
    // Through the plists users hold.
    assert_eq!(write_tools(&through_plists(&tools), Dialect::Mcp).unwrap(), doc);
    // Keys only MCP has do not go to closed dialects.
    for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini, Dialect::Bedrock, Dialect::OpenAiResponses] {
        let text = write_tools(&tools, d).unwrap().to_string();
        for key in ["execution", "_meta", "icons", "futureField", "annotations", "outputSchema"] {
            assert!(!text.contains(&format!("\"{key}\"")), "{} got {key}: {text}", d.name());
        }
    }
}

#[test]
fn dialects_keep_their_own_tool_level_keys() {
    let openai = json!([{"type": "function", "function": {"name": "f", "description": "F.",
        "parameters": {"type": "object", "properties": {}}, "strict": false}}]);
    assert_eq!(write_tools(&read(&openai), Dialect::OpenAi).unwrap(), openai);
    let anthropic = json!([{"name": "f", "description": "F.", "input_schema": {"type": "object", "properties": {}},
        "cache_control": {"type": "ephemeral"}}]);
    assert_eq!(write_tools(&read(&anthropic), Dialect::Anthropic).unwrap(), anthropic);
    // `strict` and `cache_control` mean nothing to MCP.
    let mcp = write_tools(&read(&anthropic), Dialect::Mcp).unwrap();
    assert!(mcp["tools"][0].get("cache_control").is_none(), "{mcp}");
}

#[test]
fn openai_strict_output_follows_structured_outputs_rules() {
    let doc = json!({"tools": [{"name": "search", "description": "Search.", "inputSchema": {"type": "object",
        "properties": {
            "q": {"type": "string", "description": "Query."},
            "limit": {"type": "integer", "default": 10, "minimum": 1},
            "opts": {"type": "object", "properties": {"lang": {"type": "string", "default": "en"}}}
        }, "required": ["q"]}}]});
    let (out, warnings) = write_tools_warn(&read(&doc), Dialect::OpenAiStrict).unwrap();
    let f = &out[0]["function"];
    assert_eq!(f["strict"], json!(true));
    let p = &f["parameters"];
    assert!(!out.to_string().contains("\"default\""), "{out}");
    assert_eq!(p["additionalProperties"], json!(false));
    assert_eq!(p["required"], json!(["q", "limit", "opts"]));
    assert_eq!(p["properties"]["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(p["properties"]["limit"]["description"], json!("(default: 10)"));
    assert_eq!(p["properties"]["opts"]["additionalProperties"], json!(false));
    assert_eq!(p["properties"]["opts"]["required"], json!(["lang"]));
    assert_eq!(p["properties"]["opts"]["properties"]["lang"]["description"], json!("(default: \"en\")"));
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        ["[0].parameters.properties.limit.default", "[0].parameters.properties.opts.properties.lang.default"]
    );
}

#[test]
fn gemini_parameters_hold_only_types_schema_keywords() {
    // google-genai `types.Schema` fields (camelCase, as the API takes them).
    const SCHEMA: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "pattern",
        "minProperties",
        "maxProperties",
        "anyOf",
        "default",
        "example",
        "propertyOrdering",
    ];
    fn check(node: &Value, path: &str) {
        let Some(o) = node.as_object() else { return };
        for (k, v) in o {
            assert!(SCHEMA.contains(&k.as_str()), "{path}.{k} is not a types.Schema field");
            match k.as_str() {
                "properties" => {
                    v.as_object().unwrap().iter().for_each(|(n, s)| check(s, &format!("{path}.properties.{n}")))
                }
                "items" => check(v, &format!("{path}.items")),
                "anyOf" => v.as_array().unwrap().iter().for_each(|s| check(s, &format!("{path}.anyOf"))),
                "type" => assert!(v.is_string(), "{path}.type is a list"),
                _ => {}
            }
        }
    }
    let doc = json!({"tools": [{"name": "t", "description": "T.", "inputSchema": {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": false,
    "properties": {
        "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2},
        "k": {"const": "x"},
        "u": {"type": ["string", "null"], "format": "uri"},
        "l": {"type": "array", "items": {"type": "object", "properties": {"z": {"type": "number", "exclusiveMaximum": 5}}}}
    }}}]});
    let (out, warnings) = write_tools_warn(&read(&doc), Dialect::Gemini).unwrap();
    let decl = &out["functionDeclarations"][0];
    check(&decl["parameters"], "parameters");
    assert_eq!(decl["parameters"]["properties"]["u"]["nullable"], json!(true));
    assert!(decl["parameters"]["properties"]["n"]["description"].as_str().unwrap().contains("exclusiveMinimum: 0"));
    assert!(
        warnings.iter().any(|w| w.path == "[0].parameters.properties.l.items.properties.z.exclusiveMaximum"),
        "{warnings:?}"
    );
}
