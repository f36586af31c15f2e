//! Tests of the formats that say how a tool runs (Gloodata extension
//! info, Arcade tool definitions, SkyDeck prompt tools), the lenient JSON
//! pre-pass of SkyDeck files, and tool result envelopes.

use toolspec::envelope::{self, Outcome};
use toolspec::gloodata::{self, InfoOptions};
use toolspec::json;
use toolspec::plist::{parse_sexp, print_tool, print_tools, tool_from_sexp};
use toolspec::read::{read_str, Format, ReadOptions};
use toolspec::skydeck;
use toolspec::value::Value;
use toolspec::write::{write_tool, Dialect};
use toolspec::{imported_to_elisp, tools_from_elisp, validate_elisp, ErrorKind, Imported, Tool};

const GLOODATA: &str = include_str!("../examples/gloodata.json");
const ARCADE: &str = include_str!("../examples/arcade.json");
const SKYDECK: &str = include_str!("../examples/skydeck.json");

fn opts(format: Format) -> ReadOptions<'static> {
    ReadOptions { format, ..ReadOptions::default() }
}

fn read(text: &str) -> Imported {
    read_str(text, &opts(Format::Auto)).unwrap_or_else(|e| panic!("reading {text}: {e}"))
}

fn read_doc(doc: &Value) -> Imported {
    read(&doc.to_string())
}

fn warnings(imp: &Imported) -> Vec<String> {
    imp.warnings.iter().map(|w| format!("{}: {}", w.path, w.message)).collect()
}

fn executor(tool: &Tool) -> &toolspec::value::Map<String, Value> {
    tool.extra["executor"].as_object().expect("an executor object")
}

fn arg<'t>(tool: &'t Tool, name: &str) -> &'t toolspec::Arg {
    tool.args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no argument {name}"))
}

/// A tool through the elisp printer and reader, as it goes to Emacs and back.
fn via_plist(tool: &Tool) -> Tool {
    let mut text = String::new();
    print_tool(tool, &mut text);
    tool_from_sexp(&parse_sexp(&text).unwrap()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

// ================================================================= Gloodata

#[test]
fn gloodata_seed_document() {
    let imp = read(GLOODATA);
    assert!(imp.warnings.is_empty(), "{:?}", warnings(&imp));
    assert_eq!(imp.paths, vec!["tools.helloWorld", "tools.showMapAtAddressAndZoom"]);
    let names: Vec<&str> = imp.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["mynamespace_helloWorld", "mynamespace_showMapAtAddressAndZoom"]);

    let hello = &imp.tools[0];
    assert!(hello.args.is_empty());
    assert_eq!(
        hello.description.as_deref(),
        Some("Hello World\nExample requests: \"Show Hello World\", \"Say hello\"")
    );

    let map = &imp.tools[1];
    assert_eq!(
        map.description.as_deref(),
        Some("Show Map at Address and Zoom\nExample requests: \"Show map of london\", \"Show map of cairo at zoom 12\", \"map of rio zoom 13\"")
    );
    assert_eq!(map.extra["title"], json!("Show Map at Address and Zoom"));
    let args: Vec<(&str, bool)> = map.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(args, vec![("address", false), ("zoom", false)]);
    assert_eq!(
        Value::Object(arg(map, "zoom").schema.clone()),
        json!({"type": "integer", "description": "the zoom level for the map, from 0 to 19, default to 12"})
    );
    assert_eq!(
        Value::Object(executor(map).clone()),
        json!({
            "type": "gloodata", "endpoint": null, "ns": "mynamespace", "tool": "showMapAtAddressAndZoom",
            "ui": {"prefix": "Show Map", "args": {"address": {"prefix": "Of"}, "zoom": {"prefix": "At Zoom Level"}}},
            "examples": ["Show map of london", "Show map of cairo at zoom 12", "map of rio zoom 13"],
            "extension": {"title": "My Extension Title", "description": "Maps and greetings"}
        })
    );
    // The forced format reads the same.
    let forced = read_str(GLOODATA, &opts(Format::Gloodata)).unwrap();
    assert_eq!(forced.tools, imp.tools);
}

#[test]
fn gloodata_arguments_in_ui_order_then_the_rest() {
    let imp = read_doc(&json!({
        "ns": "geo", "tools": {"t": {
            "title": "T",
            "schema": {"fields": {
                "a": {"type": "string", "description": "A"},
                "b": {"type": ["integer", "null"], "description": "B"},
                "c": {"type": "number", "default": 1.5, "description": "C"},
                "d": {"type": "boolean", "description": null, "default": null}
            }},
            "ui": {"prefix": "Do", "args": {"c": {"prefix": "with"}, "a": {"prefix": "on"}, "zz": {"prefix": "?"}, "d": {"prefix": "Flag D"}}}
        }}
    }));
    let t = &imp.tools[0];
    let order: Vec<(&str, bool)> = t.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(order, vec![("c", true), ("a", false), ("d", false), ("b", true)]);
    assert_eq!(
        Value::Object(arg(t, "b").schema.clone()),
        json!({"type": "integer", "nullable": true, "description": "B"})
    );
    // Null keywords say nothing; a missing description falls back on the UI label.
    assert_eq!(Value::Object(arg(t, "d").schema.clone()), json!({"type": "boolean", "description": "Flag D"}));
    assert_eq!(
        warnings(&imp),
        vec!["tools.t.ui.args.zz: ui.args names \"zz\", which is not among schema.fields: ignored"]
    );
}

/// An info document as extensions built with Gloodata's Python toolkit
/// write them: ids with spaces, null descriptions and defaults, a date
/// format, UI labels with data types, context actions, tag values.
#[test]
fn gloodata_toolkit_document() {
    let imp = read_doc(&json!({
        "ns": "gd-github-repo-explorer",
        "title": "GitHub Repository Explorer",
        "description": "Explore issues and releases for a GitHub repository",
        "tools": {"Show Issues": {
            "title": "Show Issues",
            "description": "Show issues in a table with filters",
            "schema": {"fields": {
                "start": {"type": "string", "default": null, "description": null, "format": "date"},
                "status": {"type": "string", "default": "", "description": null},
                "limit": {"type": "integer", "default": 0, "description": "How many"}
            }},
            "ui": {"prefix": "Show Issues", "args": {
                "start": {"prefix": "From"},
                "status": {"prefix": "Status", "dtypeName": "Status"},
                "limit": {"prefix": "Limit"}
            }},
            "contextActions": [{"target": {"name": "Status"}, "handler": "ContextActionHandler::x"}],
            "examples": ["Show issues for the last year"]
        }},
        "tagValues": {"Status": {"id": "Status", "name": "Status", "entries": [["open", "Open"]]}},
        "handlers": []
    }));
    assert_eq!(warnings(&imp).len(), 1, "only the renaming: {:?}", warnings(&imp));
    let t = &imp.tools[0];
    assert_eq!(t.name, "gd-github-repo-explorer_Show_Issues");
    assert_eq!(
        t.description.as_deref(),
        Some("Show Issues: Show issues in a table with filters\nExample requests: \"Show issues for the last year\"")
    );
    assert_eq!(
        Value::Object(arg(t, "start").schema.clone()),
        json!({"type": "string", "format": "date", "description": "From"})
    );
    assert!(!arg(t, "start").optional);
    assert_eq!(
        Value::Object(arg(t, "status").schema.clone()),
        json!({"type": "string", "default": "", "description": "Status"})
    );
    assert!(arg(t, "status").optional && arg(t, "limit").optional);
    assert_eq!(executor(t)["tool"], json!("Show Issues"));
}

#[test]
fn gloodata_names_made_valid() {
    let long_id = "x".repeat(80);
    let imp = read_doc(&json!({
        "ns": "gd-github-repo-explorer",
        "tools": {
            "Show Issues": {"title": "Show Issues", "description": "Show issues in a table with filters"},
            long_id.clone(): {"title": "Long"},
            (long_id.clone() + "y"): {"title": "Longer"}
        }
    }));
    assert_eq!(imp.tools[0].name, "gd-github-repo-explorer_Show_Issues");
    assert_eq!(imp.tools[0].description.as_deref(), Some("Show Issues: Show issues in a table with filters"));
    assert_eq!(executor(&imp.tools[0])["tool"], json!("Show Issues"));
    assert_eq!(imp.tools[1].name.len(), 64);
    assert_ne!(imp.tools[1].name, imp.tools[2].name);
    for t in &imp.tools {
        assert!(toolspec::validate::name_is_valid(&t.name), "{}", t.name);
    }
    let w = warnings(&imp);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[0].starts_with("tools.Show Issues: tool \"Show Issues\" of \"gd-github-repo-explorer\" is named \"gd-github-repo-explorer_Show_Issues\""));
}

#[test]
fn gloodata_non_scalar_fields_are_read_with_a_warning() {
    let imp = read_doc(&json!({"ns": "n", "tools": {"t": {"schema": {"fields": {
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags"}
    }}}}}));
    assert_eq!(imp.tools[0].args[0].schema["type"], json!("array"));
    assert_eq!(
        warnings(&imp),
        vec![
            "tools.t.schema.fields.tags.type: Gloodata fields are string, integer, number or boolean; found \"array\""
        ]
    );
}

#[test]
fn gloodata_shape_errors_carry_paths() {
    let err = |doc: Value, format: Format| read_str(&doc.to_string(), &opts(format)).unwrap_err();
    let e = err(json!({"ns": "n", "tools": {}}), Format::Auto);
    assert_eq!((e.kind, e.path.as_deref()), (ErrorKind::Shape, Some("tools")));
    let e = err(json!({"ns": "n", "tools": {"t": {"schema": {"fields": {"a": 3}}}}}), Format::Auto);
    assert_eq!(e.path.as_deref(), Some("tools.t.schema.fields.a"));
    assert!(e.message.contains("a field must be an object"), "{e}");
    // An unknown type is no type constraint, with a warning at its path.
    let imp = read(&json!({"ns": "n", "tools": {"t": {"schema": {"fields": {"a": {"type": "quux"}}}}}}).to_string());
    assert!(imp.tools[0].args[0].schema.get("type").is_none());
    assert!(imp
        .warnings
        .iter()
        .any(|w| w.path == "tools.t.schema.fields.a.type" && w.message.contains("unknown type \"quux\"")));
    let e = err(json!({"title": "no namespace", "tools": {"t": {}}}), Format::Gloodata);
    assert_eq!(e.path.as_deref(), Some("ns"));
    let e = err(json!({"ns": "n", "tools": {"t": {"examples": "Say hi"}}}), Format::Auto);
    assert_eq!(e.path.as_deref(), Some("tools.t.examples"));
    // Auto detection needs both `ns` and a `tools` object.
    let e = err(json!({"title": "no namespace", "tools": {"t": {}}}), Format::Auto);
    assert_eq!(e.kind, ErrorKind::UnsupportedFormat);
}

#[test]
fn gloodata_info_round_trip() {
    let imp = read(GLOODATA);
    // Through the elisp plist and back, as exporting from Emacs does.
    let tools: Vec<Tool> = imp.tools.iter().map(via_plist).collect();
    let info = gloodata::write_info(&tools, &InfoOptions::default()).unwrap();
    let original: Value = serde_json::from_str(GLOODATA).unwrap();
    let mut expected = original.clone();
    // A tool without arguments gets empty fields; no UI is made up for a
    // tool whose extension gave none.
    expected["tools"]["helloWorld"]["schema"] = json!({"fields": {}});
    let order = |v: &Value| v["tools"]["helloWorld"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(order(&info), vec!["title", "schema", "examples"]);
    for key in ["ns", "title", "description"] {
        assert_eq!(info[key], expected[key], "{key}");
    }
    for id in ["helloWorld", "showMapAtAddressAndZoom"] {
        assert_eq!(info["tools"][id], expected["tools"][id], "{id}");
    }
    // And it reads back to the same tools.
    let again = read_doc(&info);
    assert_eq!(again.tools, imp.tools);
}

#[test]
fn gloodata_info_from_plain_tools() {
    let imp = read_doc(&json!({"type": "function", "function": {
        "name": "get_weather", "description": "Current weather",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City"},
            "days": {"type": "integer", "description": "Days", "default": 1, "minimum": 1},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"},
            "note": {"type": ["string", "null"], "description": "Note"}
        }, "required": ["city", "unit"]}
    }}));
    let info = gloodata::write_info(
        &imp.tools,
        &InfoOptions { ns: Some("weather"), title: Some("Weather"), description: None },
    )
    .unwrap();
    assert_eq!(
        info,
        json!({
            "ns": "weather", "title": "Weather",
            "tools": {"get_weather": {
                "title": "Get Weather", "description": "Current weather",
                "schema": {"fields": {
                    "city": {"type": "string", "description": "City"},
                    "days": {"type": "integer", "description": "Days", "default": 1},
                    "unit": {"type": "string", "description": "Unit", "enum": ["c", "f"]},
                    "note": {"type": ["string", "null"], "description": "Note"}
                }},
                "ui": {"prefix": "Get Weather", "args": {"city": {"prefix": "City"}, "days": {"prefix": "Days"}, "unit": {"prefix": "Unit"}, "note": {"prefix": "Note"}}},
                "examples": ["Get Weather"]
            }}
        })
    );
    // Defaults: namespace "toolspec", titled by it.
    let info = gloodata::write_info(&imp.tools, &InfoOptions::default()).unwrap();
    assert_eq!((info["ns"].clone(), info["title"].clone()), (json!("toolspec"), json!("toolspec")));
}

#[test]
fn gloodata_info_refuses_non_scalar_arguments() {
    let imp = read_doc(&json!({"name": "t", "input_schema": {"type": "object", "properties": {
        "a": {"type": "string", "description": "A"},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags"},
        "u": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "U"}
    }}}));
    let e = gloodata::write_info(&imp.tools, &InfoOptions::default()).unwrap_err();
    assert_eq!((e.kind, e.path.as_deref()), (ErrorKind::Write, Some("args[1]")));
    assert_eq!(
        e.message,
        "argument \"tags\" is of type array: a Gloodata extension takes only string, integer, number and boolean arguments"
    );
    let mut only_u = imp.tools[0].clone();
    only_u.args.remove(1);
    let e = gloodata::write_info(&[imp.tools[0].clone(), only_u], &InfoOptions::default()).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("[0].args[1]"));
    let mut t = imp.tools[0].clone();
    t.args.retain(|a| a.name != "tags");
    t.name = "u".into();
    let e = gloodata::write_info(&[t], &InfoOptions::default()).unwrap_err();
    assert!(e.message.contains("\"u\" is a union of types"), "{e}");
    // Two tools with one id.
    let e = gloodata::write_info(
        &[read(GLOODATA).tools[0].clone(), read(GLOODATA).tools[0].clone()],
        &InfoOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("two tools have the Gloodata id \"helloWorld\""), "{e}");
}

#[test]
fn gloodata_results_as_text() {
    let r = |v: Value| gloodata::render_value(&v);
    assert_eq!(r(json!("# Cairo\n\nA map")).text, "# Cairo\n\nA map");
    let table = r(json!({
        "type": "Table", "title": "Issues",
        "columns": [{"id": "number", "label": "#"}, {"id": "issue", "label": "Issue"}, {"id": "author", "label": "Author", "visible": false}, {"id": "n", "label": "Comments"}],
        "rows": [
            [1, {"type": "enum", "ns": "gh", "id": "Issue", "key": "9", "label": "Crash | on start"}, ["link", {"url": "https://example.invalid/u/ada", "label": "ada"}], 3],
            [2, "Two\nlines", null, true]
        ]
    }));
    assert!(!table.error);
    assert_eq!(
        table.text,
        "**Issues**\n\n| # | Issue | Author | Comments |\n| --- | --- | --- | --- |\n\
         | 1 | Crash \\| on start | [ada](https://example.invalid/u/ada) | 3 |\n| 2 | Two<br>lines |  | true |"
    );
    let by_id = r(json!({"type": "Table", "columns": ["a", "b"], "rows": [{"b": 2, "a": 1}]}));
    assert_eq!(by_id.text, "| a | b |\n| --- | --- |\n| 1 | 2 |");
    assert_eq!(r(json!({"type": "Table", "columns": ["a"], "rows": []})).text, "| a |\n| --- |\n\n(no rows)");
    let info = r(json!({
        "type": "InfoBox",
        "columns": [{"id": "name", "label": "Name"}, {"id": "followers", "label": "Followers"}],
        "row": ["Ada", 12]
    }));
    assert_eq!(info.text, "| Field | Value |\n| --- | --- |\n| Name | Ada |\n| Followers | 12 |");
    let other = r(json!({"type": "Mermaid", "text": "graph TD; A-->B"}));
    assert_eq!(other.text, r#"{"type":"Mermaid","text":"graph TD; A-->B"}"#);
    let err = r(json!({"ok": false, "code": "ToolNotFound", "reason": "Tool Not Found", "info": {"opName": "x"}}));
    assert!(err.error);
    assert_eq!(err.text, r#"Error: Tool Not Found (ToolNotFound): {"opName":"x"}"#);
    assert_eq!(r(json!({"ok": false, "code": "E", "reason": "Bad", "info": null})).text, "Error: Bad (E)");
    assert_eq!(r(json!(42)).text, "42");
    assert_eq!(gloodata::render_result("plain text, not JSON\n").text, "plain text, not JSON");
}

// =================================================================== Arcade

#[test]
fn arcade_definitions() {
    let imp = read(ARCADE);
    assert_eq!(imp.paths, vec!["[0]", "[1]"]);
    let forecast = &imp.tools[0];
    assert_eq!(forecast.name, "Weather_GetForecast");
    assert_eq!(forecast.description.as_deref(), Some("Weather forecast for a city, one entry per day."));
    assert_eq!(
        Value::Object(executor(forecast).clone()),
        json!({"type": "arcade", "tool": {"name": "Weather.GetForecast", "version": "1.2.0"}})
    );
    let args: Vec<(&str, bool)> = forecast.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(args, vec![("city", false), ("days", true), ("unit", true), ("min_confidence", true)]);
    assert_eq!(
        Value::Object(arg(forecast, "unit").schema.clone()),
        json!({"type": "string", "description": "Temperature unit", "enum": ["celsius", "fahrenheit"]})
    );
    assert_eq!(arg(forecast, "min_confidence").schema["type"], json!("number"));
    let event = &imp.tools[1];
    assert_eq!(
        arg(event, "start").schema["description"],
        json!("Start time, RFC 3339. Do not guess this value: ask the user for it.")
    );
    assert_eq!(
        Value::Object(arg(event, "extra").schema.clone()),
        json!({"type": "object", "description": "Provider-specific fields", "additionalProperties": true})
    );
    assert_eq!(
        warnings(&imp),
        vec![
            "[0].name: tool \"Weather.GetForecast\" is named \"Weather_GetForecast\" (tool names allow letters, digits, _ and -, at most 64); the worker still receives \"Weather.GetForecast\"",
            "[1].name: tool \"Calendar.CreateEvent\" is named \"Calendar_CreateEvent\" (tool names allow letters, digits, _ and -, at most 64); the worker still receives \"Calendar.CreateEvent\""
        ]
    );
}

#[test]
fn arcade_value_schema_spelling_and_wrappers() {
    let imp = read_doc(&json!({"tools": [{
        "name": "Tags", "description": "Tag things",
        "input": {"parameters": [
            {"name": "tags", "required": true, "description": "Tags", "value_schema": {"val_type": "array", "inner_val_type": "string", "enum": ["a", "b"]}},
            {"name": "n", "description": "N", "value_schema": {"val_type": "int"}}
        ]}
    }]}));
    let t = &imp.tools[0];
    assert_eq!(imp.paths, vec!["tools[0]"]);
    assert_eq!(executor(t)["tool"], json!({"name": "Tags"}));
    assert_eq!(
        Value::Object(arg(t, "tags").schema.clone()),
        json!({"type": "array", "description": "Tags", "items": {"type": "string", "enum": ["a", "b"]}})
    );
    assert_eq!(arg(t, "n").schema["type"], json!("integer"));
    assert!(arg(t, "n").optional);
    assert_eq!(
        warnings(&imp),
        vec![
            "tools[0].input.parameters[1].required: parameter \"n\" does not say whether it is required: read as optional",
            "tools[0].input.parameters[1].value_schema.val_type: non-standard Arcade type \"int\" read as \"integer\""
        ]
    );
}

#[test]
fn arcade_errors() {
    let e = read_str(
        &json!({"name": "T", "input": {"parameters": [{"name": "a", "required": true, "schema": {"type": "blob"}}]}})
            .to_string(),
        &opts(Format::Auto),
    )
    .unwrap_err();
    assert_eq!((e.kind, e.path.as_deref()), (ErrorKind::Shape, Some("input.parameters[0].schema.type")));
    assert!(e.message.contains("unknown Arcade type \"blob\""), "{e}");
    let e = read_str(
        &json!({"name": "T", "input": {"parameters": [{"name": "a", "required": true}, {"name": "a", "required": false}]}}).to_string(),
        &opts(Format::Auto),
    )
    .unwrap_err();
    assert_eq!(e.path.as_deref(), Some("input.parameters[1]"));
    let e = read_str(&json!({"name": 3, "input": {"parameters": []}}).to_string(), &opts(Format::Arcade)).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("name"));
}

// ================================================================== SkyDeck

#[test]
fn skydeck_example_with_a_trailing_comma() {
    // The example is not valid JSON, as real files often are not.
    assert!(serde_json::from_str::<Value>(SKYDECK).is_err());
    let imp = read(SKYDECK);
    assert_eq!(warnings(&imp), vec!["metadata.variables[3]: line 46, column 44: trailing comma before `}` removed"]);
    let t = &imp.tools[0];
    assert_eq!(t.name, "blog_post_writer");
    assert_eq!(t.extra["title"], json!("Blog Post Writer"));
    assert_eq!(
        t.description.as_deref(),
        Some("Drafts a blog post on a topic for a given audience.\nUsage notes: Give a precise topic; the post is a first draft to edit.\nThe reply is Markdown.")
    );
    let args: Vec<(&str, bool)> = t.args.iter().map(|a| (a.name.as_str(), a.optional)).collect();
    assert_eq!(args, vec![("topic", false), ("tone", true), ("aspects", true), ("length", true), ("audience", false)]);
    assert_eq!(
        Value::Object(arg(t, "tone").schema.clone()),
        json!({"type": "string", "description": "Tone of voice. Default: friendly.", "enum": ["friendly", "formal", "playful"], "default": "friendly"})
    );
    assert_eq!(
        Value::Object(arg(t, "aspects").schema.clone()),
        json!({"type": "array", "description": "Aspects to cover. Default: history, practice.",
               "items": {"type": "string", "enum": ["history", "practice", "tools", "pitfalls"]},
               "default": ["history", "practice"]})
    );
    assert_eq!(
        Value::Object(arg(t, "audience").schema.clone()),
        json!({"type": "string", "description": "Fills {{audience}} in the prompt."})
    );
    let exec = executor(t);
    assert_eq!(exec["type"], json!("skydeck"));
    assert_eq!(
        exec["placeholders"],
        json!({"topic": "topic", "tone": "tone", "aspects": "aspects", "length": "length", "audience": "audience"})
    );
    // The document is kept whole, and written back unchanged, also after
    // a trip through the elisp plist.
    let repaired: Value = serde_json::from_str(&SKYDECK.replace("\"long\"],", "\"long\"]")).unwrap();
    assert_eq!(exec["document"], repaired);
    assert_eq!(skydeck::write(t).unwrap(), repaired);
    assert_eq!(skydeck::write(&via_plist(t)).unwrap(), repaired);
}

/// The sample of SkyDeck's documentation, with its slips, made concrete.
const SEED_SAMPLE: &str = r#"{
  "version": 2,
  "model_prompt": "Use {{variable name 1}} with {{variable name 2}} and {{variable name 3}}; also {{extra}}.",
  "metadata": {
    "prompt_name": "Sample",
    "variables": [
      {
        "name": "variable name 1",
        "type": "text",
        "description": "string",
        "default": "string",
      },
      {
        "name": "variable name 2",
        "type": "single-select",
        "description": "string",
        "default": "value1",
        "allowed_values": ["value1", "value2", "value3"]
      },
      {
        "name": "variable name 3",
        "type": "multi-select",
        "description": "string",
        "default": ["value1", "value2"]
        "allowed_values": ["value1", "value2", "value3"]
      }
    ],
    "expected_output": {
      "type": "limited",
      "allowed_values": ["yes", "no"]
    }
  }
}"#;

#[test]
fn skydeck_seed_sample_repaired() {
    let imp = read(SEED_SAMPLE);
    let w = warnings(&imp);
    assert_eq!(
        w[..2],
        [
            "metadata.variables[0]: line 11, column 28: trailing comma before `}` removed",
            "metadata.variables[2]: line 25, column 9: missing comma inserted before \"allowed_values\"",
        ]
    );
    assert_eq!(
        w[2..],
        [
            "metadata.variables[0].name: variable \"variable name 1\" is the argument \"variable_name_1\" (argument names allow letters, digits, _ . -)",
            "metadata.variables[1].name: variable \"variable name 2\" is the argument \"variable_name_2\" (argument names allow letters, digits, _ . -)",
            "metadata.variables[2].name: variable \"variable name 3\" is the argument \"variable_name_3\" (argument names allow letters, digits, _ . -)",
        ]
    );
    let t = &imp.tools[0];
    assert_eq!(t.name, "sample");
    assert!(
        t.description.as_deref().unwrap().ends_with("The reply is one of: \"yes\", \"no\"."),
        "{:?}",
        t.description
    );
    let names: Vec<&str> = t.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["variable_name_1", "variable_name_2", "variable_name_3", "extra"]);
    assert_eq!(
        executor(t)["placeholders"],
        json!({"variable_name_1": "variable name 1", "variable_name_2": "variable name 2", "variable_name_3": "variable name 3", "extra": "extra"})
    );
    // Forced format, same result.
    let forced = read_str(SEED_SAMPLE, &opts(Format::SkyDeck)).unwrap();
    assert_eq!(forced.tools, imp.tools);
}

#[test]
fn skydeck_leniency_is_for_skydeck_only() {
    // The same slip in another format is a JSON error with its position.
    let text = "{\"name\": \"t\", \"input_schema\": {\"type\": \"object\",}}";
    let e = read_str(text, &opts(Format::Auto)).unwrap_err();
    assert_eq!((e.kind, e.line, e.column), (ErrorKind::Json, Some(1), Some(49)));
    let e = read_str(text, &opts(Format::Anthropic)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json);
    // SkyDeck text broken beyond repair reports the strict error.
    let e =
        read_str("{\"model_prompt\": \"x\",\n \"metadata\": {\"prompt_name\": }}", &opts(Format::Auto)).unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::Json, Some(2)));
}

#[test]
fn skydeck_variables_checked() {
    let imp = read_doc(&json!({
        "model_prompt": "{{a}} {{b}} {{c}}",
        "metadata": {"variables": [
            {"name": "a", "type": "dropdown", "description": "A"},
            {"name": "b", "type": "single-select", "description": "B"},
            {"name": "c", "type": "single-select", "description": "C", "allowed_values": ["x"], "default": "y"},
            {"name": "d", "type": "text", "description": "D"},
            {"type": "text"},
            {"name": "a", "type": "text"}
        ]}
    }));
    let t = &imp.tools[0];
    assert_eq!(t.name, "prompt");
    assert_eq!(arg(t, "a").schema["type"], json!("string"));
    assert_eq!(Value::Object(arg(t, "b").schema.clone()), json!({"type": "string", "description": "B"}));
    assert_eq!(
        warnings(&imp),
        vec![
            "metadata.prompt_name: no usable `prompt_name`: the tool is named \"prompt\"",
            "metadata.variables[0].type: unknown variable type \"dropdown\" read as text (expected text, single-select or multi-select)",
            "metadata.variables[1].allowed_values: a single-select variable without `allowed_values`: any text is accepted",
            "metadata.variables[2].default: default \"y\" is not among `allowed_values`",
            "metadata.variables[4]: a variable without a `name` ignored",
            "metadata.variables[5].name: a second variable named \"a\" ignored",
            "metadata.variables: variable \"d\" (argument d) does not appear in model_prompt as {{d}}",
        ]
    );
    // A file name names a tool without prompt_name.
    let named = read_str(
        &json!({"model_prompt": "hi"}).to_string(),
        &ReadOptions { default_name: Some("My Prompt"), ..ReadOptions::default() },
    )
    .unwrap();
    assert_eq!(named.tools[0].name, "my_prompt");
    assert_eq!(named.tools[0].description.as_deref(), Some("Runs a prompt on a language model and returns its reply."));
    let e = read_str(&json!({"model_prompt": ["a"]}).to_string(), &opts(Format::Auto)).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("model_prompt"));
}

#[test]
fn skydeck_writer_needs_a_prompt_tool() {
    let plain =
        read_doc(&json!({"name": "t", "description": "T", "input_schema": {"type": "object", "properties": {}}}));
    let e = skydeck::write(&plain.tools[0]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Write);
    assert!(e.message.starts_with("tool \"t\" is not a prompt tool"), "{e}");
    let prompt = read(SKYDECK).tools.remove(0);
    let e = skydeck::write_many(&[prompt.clone(), plain.tools[0].clone()]).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("[1]"));
    let both = skydeck::write_many(&[prompt.clone(), prompt]).unwrap();
    assert_eq!(both.as_array().map(Vec::len), Some(2));
}

// ============================================================ All of them

#[test]
fn seed_tools_cross_to_emacs_and_every_dialect() {
    for text in [GLOODATA, ARCADE, SKYDECK] {
        let imp = read(text);
        // Printed for Emacs and read back unchanged.
        assert!(imported_to_elisp(&imp).starts_with("(((:name "));
        let mut list = String::new();
        print_tools(&imp.tools, &mut list);
        let back = tools_from_elisp(&list).unwrap_or_else(|e| panic!("{list}: {e}"));
        assert_eq!(back, imp.tools);
        for tool in &imp.tools {
            let mut text = String::new();
            print_tool(tool, &mut text);
            let problems = validate_elisp(&text).unwrap();
            assert!(problems.iter().all(|p| p.severity != toolspec::Severity::Error), "{problems:?}");
            assert!(!problems.iter().any(|p| p.path == "executor" || p.path == "title"), "{problems:?}");
            for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini, Dialect::Mcp, Dialect::Bedrock] {
                let json = write_tool(tool, d).unwrap().to_string();
                assert!(!json.contains("executor") && !json.contains("model_prompt"), "{d:?}: {json}");
            }
        }
    }
}

#[test]
fn format_names() {
    for (name, f) in [("gloodata", Format::Gloodata), ("arcade", Format::Arcade), ("skydeck", Format::SkyDeck)] {
        assert_eq!(Format::parse(name).unwrap(), f);
        assert_eq!(f.name(), name);
    }
}

// ================================================================ Envelopes

const T: &str = "2026-01-02T03:04:05.678Z";

fn make(o: Outcome) -> Value {
    envelope::make(&o, Some("call-1"), Some(T)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn envelopes_made() {
    assert_eq!(
        make(Outcome::Value(json!(42))),
        json!({"invocation_id": "call-1", "finished_at": T, "success": true, "output": {"value": 42}})
    );
    assert_eq!(make(Outcome::Void), json!({"invocation_id": "call-1", "finished_at": T, "success": true}));
    assert_eq!(
        make(Outcome::Error { message: "Not found".into(), developer_message: Some("GET /x: 404".into()) })["output"],
        json!({"error": {"message": "Not found", "developer_message": "GET /x: 404"}})
    );
    assert_eq!(make(Outcome::Error { message: "E".into(), developer_message: None })["success"], json!(false));
    let auth = make(Outcome::Authorization {
        message: "Sign in".into(),
        url: Some("https://auth.example.invalid/o?x=1".into()),
        scope: Some("repo".into()),
    });
    assert_eq!(auth["success"], json!(false));
    assert_eq!(
        auth["output"],
        json!({"requires_authorization": {"message": "Sign in", "oauth2": {"url": "https://auth.example.invalid/o?x=1", "scope": "repo"}}})
    );
    let art = make(Outcome::Artifact {
        url: "https://files.example.invalid/r.csv".into(),
        content_type: "text/csv".into(),
        size: 1024,
        description: "Monthly report".into(),
    });
    assert_eq!(
        art["output"],
        json!({"artifact": {"url": "https://files.example.invalid/r.csv", "content_type": "text/csv", "size": 1024, "meta": {"description": "Monthly report"}}})
    );
    // Defaults: a new id and now, both valid.
    let e = envelope::make(&Outcome::Value(json!({"a": [1]})), None, None).unwrap();
    assert_eq!(e["invocation_id"].as_str().map(str::len), Some(36));
    assert!(e["finished_at"].as_str().unwrap().ends_with('Z'));
    assert!(envelope::problems(&e).is_empty());
}

fn problem_of(v: Value) -> (String, String) {
    let e = envelope::validate(&v).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Envelope);
    (e.path.unwrap_or_default(), e.message)
}

#[test]
fn envelopes_refused_with_paths() {
    let base = |output: Value| json!({"invocation_id": "i", "finished_at": T, "success": true, "output": output});
    let e = envelope::make_from_output(Some(json!({"value": [1, 2]})), None, None).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("output.value"));
    assert!(e.message.contains("a value must be an object, a number, a string or a boolean, found an array"), "{e}");
    let (p, m) = problem_of(base(json!({"error": {"developer_message": "x"}})));
    assert_eq!(p, "output.error.message");
    assert!(m.contains("required member missing"), "{m}");
    let (p, _) = problem_of(base(
        json!({"artifact": {"url": "https://x.invalid/a", "content_type": "t", "size": "big", "meta": {"description": "d"}}}),
    ));
    assert_eq!(p, "output.artifact.size");
    let (p, _) = problem_of(base(
        json!({"artifact": {"url": "not a uri", "content_type": "t", "size": 1, "meta": {"description": "d"}}}),
    ));
    assert_eq!(p, "output.artifact.url");
    let (p, m) = problem_of(base(json!({"value": 1, "error": {"message": "m"}})));
    assert_eq!(p, "output");
    assert!(m.contains("exactly one of value, error, requires_authorization or artifact; found {value, error}"), "{m}");
    let (p, m) = problem_of(json!({"invocation_id": "i", "finished_at": "yesterday", "success": true}));
    assert_eq!(p, "finished_at");
    assert!(m.contains("date-time"), "{m}");
    let (p, m) = problem_of(json!({"invocation_id": "i", "finished_at": T, "success": true, "extra": 1}));
    assert_eq!((p.as_str(), m.as_str()), ("", "not a valid tool result envelope: unexpected member extra"));
    let (p, _) = problem_of(json!({"finished_at": T, "success": true}));
    assert_eq!(p, "invocation_id");
    let (p, m) = problem_of(json!([1]));
    assert_eq!(
        (p.as_str(), m.as_str()),
        ("", "not a valid tool result envelope: an envelope must be a JSON object, found an array")
    );
}

#[test]
fn envelopes_read_for_the_model() {
    let read = |o: Outcome| envelope::read(&make(o)).unwrap();
    let r = read(Outcome::Value(json!("Sunny")));
    assert_eq!((r.text.as_str(), r.kind, r.success, r.invocation_id.as_str()), ("Sunny", "value", true, "call-1"));
    assert_eq!(read(Outcome::Value(json!({"t": 21.5}))).text, r#"{"t":21.5}"#);
    assert_eq!(read(Outcome::Value(json!(false))).text, "false");
    let r = read(Outcome::Error { message: "Not found".into(), developer_message: Some("stack trace".into()) });
    assert_eq!((r.text.as_str(), r.log.as_deref(), r.success), ("Error: Not found", Some("stack trace"), false));
    assert!(!r.text.contains("stack trace"));
    let r = read(Outcome::Authorization {
        message: "Sign in to the calendar.".into(),
        url: Some("https://auth.example.invalid/x".into()),
        scope: None,
    });
    assert_eq!(r.kind, "requires_authorization");
    assert!(r.text.starts_with("Authorization required: Sign in to the calendar."), "{}", r.text);
    assert!(!r.text.contains("https://"), "the URL is for the user: {}", r.text);
    assert_eq!(r.url.as_deref(), Some("https://auth.example.invalid/x"));
    assert_eq!(r.user.as_deref(), Some("Sign in to the calendar. Authorize at https://auth.example.invalid/x"));
    let r = read(Outcome::Artifact {
        url: "https://f.example.invalid/r.csv".into(),
        content_type: "text/csv".into(),
        size: 2048,
        description: "Report".into(),
    });
    assert_eq!(r.text, "Artifact: Report (text/csv, 2048 bytes) at https://f.example.invalid/r.csv");
    assert_eq!(read(Outcome::Void).text, "The tool ran successfully and returned no value.");
    let failed = envelope::read(&json!({"invocation_id": "i", "finished_at": T, "success": false})).unwrap();
    assert_eq!(failed.text, "Error: the tool call failed without saying why.");
    let e = envelope::read_text("{\"invocation_id\": \n nope}").unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::Envelope, Some(2)));
    assert!(e.message.starts_with("the tool result is not JSON"), "{e}");
}

#[test]
fn envelope_schema_is_the_published_one() {
    let s = envelope::schema();
    assert_eq!(s["$schema"], json!("https://json-schema.org/draft/2020-12/schema"));
    assert_eq!(s["required"], json!(["invocation_id", "finished_at", "success"]));
    assert_eq!(s["additionalProperties"], json!(false));
    let kinds: Vec<String> = s["properties"]["output"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["required"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, envelope::OUTPUT_KINDS);
    // Comments stripped: strict JSON.
    assert!(serde_json::from_str::<Value>(envelope::SCHEMA_TEXT).is_ok());
    assert!(!envelope::SCHEMA_TEXT.lines().any(|l| l.trim_start().starts_with("//")));
}
