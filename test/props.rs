//! Property tests: nothing is lost between JSON and plists.
//!
//! Generated tools (names, descriptions, arguments with nested schemas
//! holding every kind of keyword and data value, odd property names) go
//! JSON -> model -> plist text -> model -> JSON in every dialect, and
//! plist -> JSON -> plist, and must come back the same.

use proptest::prelude::*;
use toolspec::json;
use toolspec::plist::print_tools;
use toolspec::read::{read_str, Format, ReadOptions};
use toolspec::value::{Map, Value};
use toolspec::write::{write_tool, write_tools, Dialect, DIALECT_NAMES};
use toolspec::{tools_from_elisp, Tool};

/// Property names, including ones that need escaping as keywords.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,8}",
        "[a-zA-Z0-9 ()\\[\\];#'`,.?\"\\\\é-]{1,8}",
        Just("type".to_string()),
        Just("optional".to_string()),
        Just("properties".to_string()),
        Just("12".to_string()),
    ]
}

/// JSON data values (defaults, examples, consts).
fn data() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e12f64..1.0e12).prop_map(|f| json!(f)),
        "[ -~é\n\t]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,5}", inner), 1..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A schema node of a JSON Schema dialect (no nullable: that is written
/// per dialect).
fn schema() -> impl Strategy<Value = Value> {
    let scalar = (
        prop_oneof![Just("string"), Just("integer"), Just("number"), Just("boolean")],
        proptest::option::of("[ -~]{0,20}"),
        proptest::option::of(data()),
        proptest::option::of(prop::collection::vec("[a-z]{1,6}", 1..4)),
    )
        .prop_map(|(t, desc, default, en)| {
            let mut m = Map::new();
            m.insert("type".into(), Value::from(t));
            if let Some(d) = desc {
                m.insert("description".into(), Value::from(d));
            }
            if let (Some(e), "string") = (en, t) {
                m.insert("enum".into(), json!(e));
            }
            if let Some(d) = default {
                m.insert("default".into(), d);
            }
            Value::Object(m)
        });
    scalar.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|items| json!({"type": "array", "items": items, "minItems": 1})),
            (prop::collection::vec((name(), inner), 1..4), any::<bool>()).prop_map(|(props, req)| {
                let mut p = Map::new();
                for (k, v) in props {
                    p.insert(k, v);
                }
                let mut m = Map::new();
                m.insert("type".into(), Value::from("object"));
                if req {
                    let first = p.keys().next().cloned().unwrap();
                    m.insert("required".into(), json!([first]));
                }
                m.insert("properties".into(), Value::Object(p));
                Value::Object(m)
            }),
        ]
    })
}

/// An Anthropic tool with generated arguments.
fn tool_json() -> impl Strategy<Value = Value> {
    ("[a-z][a-z0-9_]{0,20}", "[ -~]{0,30}", prop::collection::vec((name(), schema(), any::<bool>()), 0..5)).prop_map(
        |(n, d, args)| {
            let mut props = Map::new();
            let mut required = Vec::new();
            for (k, s, req) in args {
                if props.contains_key(&k) {
                    continue;
                }
                if req {
                    required.push(Value::from(k.clone()));
                }
                props.insert(k, s);
            }
            let mut schema = Map::new();
            schema.insert("type".into(), Value::from("object"));
            schema.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                schema.insert("required".into(), Value::Array(required));
            }
            json!({"name": n, "description": d, "input_schema": schema})
        },
    )
}

fn read(v: &Value) -> Vec<Tool> {
    let opts = ReadOptions { format: Format::Anthropic, ..ReadOptions::default() };
    read_str(&v.to_string(), &opts).expect("generated tools read").tools
}

fn through_plist(tools: &[Tool]) -> Vec<Tool> {
    let mut text = String::new();
    print_tools(tools, &mut text);
    tools_from_elisp(&text).expect("printed plists read back")
}

/// JSON text whose objects may give a key twice and have keys with dots
/// and brackets that read as paths of other keys (`a.b` beside `a`
/// holding `b`), as OpenAPI's paths do (`/v2` and `/v2.1`).
fn tangled_json() -> impl Strategy<Value = String> {
    let key = prop_oneof![Just("a"), Just("b"), Just("a.b"), Just("b.a"), Just("a[0]"), Just("a.b.a"), Just("a[1].b")];
    let leaf = prop_oneof![Just("1".to_string()), Just("\"x\"".to_string()), Just("null".to_string())];
    json_text(key, leaf)
}

/// JSON text of arrays and objects nested up to four deep, each member
/// on a line of its own: keys drawn from `key` (written as they are, escapes
/// included), values from `leaf`.
fn json_text(
    key: impl Strategy<Value = &'static str> + Clone + 'static,
    leaf: impl Strategy<Value = String> + 'static,
) -> impl Strategy<Value = String> {
    leaf.prop_recursive(4, 40, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|items| format!("[{}]", items.join(", "))),
            prop::collection::vec((key.clone(), inner), 0..4).prop_map(|members| {
                let members: Vec<String> = members.into_iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!("{{\n{}}}", members.join(",\n"))
            }),
        ]
    })
}

/// JSON text with what parsing drops silently, or almost: keys given
/// twice (one spelled with an escape), integers beyond 64 bits, and
/// numbers near them that are not (integers that fit, `1e19`, `-0.0`).
fn noted_json() -> impl Strategy<Value = String> {
    let key = prop_oneof![Just("a"), Just("b"), Just("\\u0061"), Just("c")];
    let leaf = prop_oneof![
        Just("1".to_string()),
        Just("\"x\"".to_string()),
        Just("null".to_string()),
        Just("18446744073709551615".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("123456789012345678901234567890".to_string()),
        Just("1e19".to_string()),
        Just("-1.5e300".to_string()),
        Just("-0.0".to_string()),
        Just("9223372036854775807.0".to_string()),
    ];
    json_text(key, leaf)
}

/// Paths over the keys of [`tangled_json`].
fn tangled_path() -> impl Strategy<Value = String> {
    let step = prop_oneof![Just(".a"), Just(".b"), Just("[0]"), Just("[1]")];
    prop::collection::vec(step, 0..5).prop_map(|steps| steps.concat().trim_start_matches('.').to_string())
}

/// A schema as people write them: type names in other spellings or
/// missing, unions, `$defs`, boolean `required`, `true` and other values
/// where a schema goes, `$ref`s that lead nowhere.
fn wild_schema() -> impl Strategy<Value = Value> {
    let type_name = prop_oneof![
        Just(json!("string")),
        Just(json!("int")),
        Just(json!("INTEGER")),
        Just(json!("Number")),
        Just(json!("object")),
        Just(json!("array")),
        Just(json!("bogus")),
        Just(json!(["string", "null"])),
        Just(json!(["integer", "string"])),
        Just(json!(3)),
    ];
    let leaf = prop_oneof![
        4 => (proptest::option::of(type_name.clone()), proptest::option::of(data()), any::<u8>()).prop_map(|(t, d, k)| {
            let mut m = Map::new();
            if k % 5 == 0 {
                m.insert("description".into(), json!("first"));
            }
            if let Some(t) = t {
                m.insert("type".into(), t);
            }
            match k % 7 {
                0 => { m.insert("enum".into(), json!([null, "a", 1])); }
                1 => { m.insert("minimum".into(), json!(0)); }
                2 => { m.insert("required".into(), json!(k % 2 == 0)); }
                3 => { m.insert("$defs".into(), json!({"x": {"type": "int"}})); }
                4 => { m.insert("$ref".into(), json!("#/nowhere")); }
                5 => { m.insert("format".into(), json!("date")); }
                _ => {}
            }
            if let Some(d) = d {
                m.insert("default".into(), d);
            }
            Value::Object(m)
        }),
        1 => Just(json!(true)),
        1 => Just(json!(false)),
        1 => Just(json!(7)),
    ];
    leaf.prop_recursive(4, 40, 4, move |inner| {
        (
            proptest::option::of(type_name.clone()),
            prop::collection::vec((name(), inner.clone()), 0..4),
            proptest::option::of(inner.clone()),
            prop::collection::vec(inner, 0..3),
            any::<u8>(),
        )
            .prop_map(|(t, props, items, alts, k)| {
                let mut m = Map::new();
                if k % 3 == 0 {
                    m.insert("title".into(), json!("T"));
                }
                if let Some(t) = t {
                    m.insert("type".into(), t);
                }
                if !props.is_empty() || k % 4 == 1 {
                    let p: Map<String, Value> = props.into_iter().collect();
                    m.insert("properties".into(), if k % 11 == 0 { json!(5) } else { Value::Object(p) });
                }
                if let Some(i) = items {
                    m.insert("items".into(), if k % 2 == 0 { i } else { json!([i, 1]) });
                }
                if !alts.is_empty() {
                    m.insert(["anyOf", "oneOf", "allOf"][usize::from(k) % 3].into(), Value::Array(alts));
                }
                if k % 5 == 2 {
                    m.insert("definitions".into(), json!({"d": {"type": "bogus"}}));
                }
                Value::Object(m)
            })
    })
}

/// One change to a JSON object, for [`objects_behave_as_serde_json_maps`].
#[derive(Debug, Clone)]
enum Edit {
    Insert(String, i64),
    ShiftRemove(String),
    /// Keep the members whose value is not divisible by this.
    Retain(i64),
    /// `entry(key).or_insert(value)`.
    OrInsert(String, i64),
    ShiftInsert(usize, String, i64),
}

/// Keys of objects that grow past `value::INDEXED` members and repeat.
fn many_keys() -> impl Strategy<Value = String> {
    (0..40u8).prop_map(|i| format!("k{i}"))
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (many_keys(), 0..100i64).prop_map(|(k, v)| Edit::Insert(k, v)),
        2 => many_keys().prop_map(Edit::ShiftRemove),
        1 => (2..6i64).prop_map(Edit::Retain),
        2 => (many_keys(), 0..100i64).prop_map(|(k, v)| Edit::OrInsert(k, v)),
        1 => (0..50usize, many_keys(), 0..100i64).prop_map(|(at, k, v)| Edit::ShiftInsert(at, k, v)),
    ]
}

/// Values whose strings hold any characters: control characters,
/// quotes, backslashes and text beyond ASCII, in runs longer and shorter
/// than the eight bytes the compact writer looks at at once.
fn any_text_data() -> impl Strategy<Value = Value> {
    let text = prop::collection::vec(
        prop_oneof![any::<char>(), Just('"'), Just('\\'), Just('\n'), Just('\u{1f}'), Just('\u{7f}'), Just('a')],
        0..40,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>());
    let leaf = prop_oneof![
        data(),
        text.clone().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text.clone(), inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The compact text of a value is byte for byte serde_json's.
    #[test]
    fn compact_text_is_serde_jsons(v in any_text_data()) {
        prop_assert_eq!(v.to_compact_string(), serde_json::to_string(&v).unwrap());
        prop_assert_eq!(v.to_compact_string_in(0), serde_json::to_string(&v).unwrap());
    }

    /// `toolspec::value` reads, writes and edits objects as serde_json's
    /// ordered maps do, small ones and ones past `INDEXED` members alike.
    #[test]
    fn objects_behave_as_serde_json_maps(
        members in prop::collection::vec((many_keys(), -5..5i64), 0..60),
        edits in prop::collection::vec(edit(), 0..40),
    ) {
        let text = format!(
            "{{{}}}",
            members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect::<Vec<_>>().join(", ")
        );
        let ours: Value = serde_json::from_str(&text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(ours.to_string(), theirs.to_string());
        let (Value::Object(mut ours), serde_json::Value::Object(mut theirs)) = (ours, theirs) else { unreachable!() };
        for e in edits {
            match e {
                Edit::Insert(k, v) => {
                    let old = ours.insert(k.clone(), Value::from(v));
                    prop_assert_eq!(old.map(|o| o.to_string()), theirs.insert(k, v.into()).map(|o| o.to_string()));
                }
                Edit::ShiftRemove(k) => {
                    prop_assert_eq!(ours.shift_remove(&k).map(|o| o.to_string()), theirs.shift_remove(&k).map(|o| o.to_string()));
                }
                Edit::Retain(d) => {
                    ours.retain(|_, v| v.as_i64().is_none_or(|n| n % d != 0));
                    theirs.retain(|_, v| v.as_i64().is_none_or(|n| n % d != 0));
                }
                Edit::OrInsert(k, v) => {
                    *ours.entry(k.clone()).or_insert(Value::from(v)) = Value::from(v + 1000);
                    *theirs.entry(k).or_insert(v.into()) = (v + 1000).into();
                }
                Edit::ShiftInsert(at, k, v) => {
                    let at = at.min(ours.len().saturating_sub(usize::from(ours.contains_key(&k))));
                    ours.shift_insert(at, k.clone(), Value::from(v));
                    theirs.shift_insert(at, k, v.into());
                }
            }
            prop_assert_eq!(Value::Object(ours.clone()).to_string(), serde_json::Value::Object(theirs.clone()).to_string());
        }
        for k in (0..40).map(|i| format!("k{i}")) {
            prop_assert_eq!(ours.get(&k).map(|v| v.to_string()), theirs.get(&k).map(|v| v.to_string()), "{}", k);
        }
    }

    /// A schema given up and normalised in place gives the schema, the
    /// warnings and the error that normalising a copy gives.
    #[test]
    fn normalising_in_place_is_normalising_a_copy(v in wild_schema(), gemini in any::<bool>(), root in any::<bool>()) {
        use toolspec::{model::At, schema::Normalizer};
        let mut copy = Normalizer::new(vec![], gemini);
        let mut owned = Normalizer::new(vec![], gemini);
        let (a, b) = if root {
            (copy.root(&v, "p"), owned.root_owned(v.clone(), "p"))
        } else {
            (copy.node_at(&v, &At::Root("p"), 0), owned.node_owned(v.clone(), &At::Root("p"), 0))
        };
        prop_assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
        prop_assert_eq!(copy.warnings, owned.warnings);
    }

    /// Many paths located at once are where each is located alone, keys
    /// with dots, keys given twice and paths that go nowhere included.
    #[test]
    fn locate_many_agrees_with_locate(text in tangled_json(), paths in prop::collection::vec(tangled_path(), 1..8)) {
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let alone: Vec<(usize, usize)> = paths.iter().map(|p| toolspec::locate::locate(&text, p)).collect();
        prop_assert_eq!(toolspec::locate::locate_many(&text, &paths), alone);
    }

    /// A text parsed through `Noting` gives serde_json's value, and is
    /// flagged wherever the scan finds something in it: the scan may be
    /// left out for a text not flagged.
    #[test]
    fn noting_flags_every_text_the_scan_finds_something_in(text in noted_json()) {
        let flag = std::cell::Cell::new(false);
        let noted = toolspec::scan::from_str_noting(&text, &flag);
        let plain = serde_json::from_str::<Value>(&text);
        prop_assert_eq!(noted.as_ref().ok(), plain.as_ref().ok());
        prop_assert_eq!(noted.is_err(), plain.is_err());
        if noted.is_ok() && !toolspec::scan::notes(&text).is_empty() {
            prop_assert!(flag.get(), "not flagged: {}", text);
        }
        let (parsed, notes) = toolspec::scan::parse_noting(&text, |flag| toolspec::scan::from_str_noting(&text, flag));
        prop_assert_eq!(notes, if parsed.is_ok() { toolspec::scan::notes(&text) } else { Vec::new() });
    }

    /// The scan for what parsing drops runs while the text is parsed, so
    /// on any text, JSON or broken JSON, it returns without a panic.
    #[test]
    fn scan_never_panics(text in "[{}\\[\\]\",:\\\\0-9a-z\u{e9}\u{1F600} -]{0,60}", tool in tool_json()) {
        let _ = toolspec::scan::notes(&text);
        let json = tool.to_string();
        for cut in (0..json.len()).filter(|&i| json.is_char_boundary(i)) {
            let _ = toolspec::scan::notes(&json[..cut]);
        }
    }

    /// JSON -> plist -> JSON in the same dialect gives back the input.
    #[test]
    fn json_plist_json_identity(tool in tool_json()) {
        let tools = read(&tool);
        let back = through_plist(&tools);
        let out = write_tool(&back[0], Dialect::Anthropic).unwrap();
        prop_assert_eq!(&out, &tool);
    }

    /// Every dialect writes the same JSON from the model and from its plist.
    #[test]
    fn plist_round_trip_in_every_dialect(tool in tool_json()) {
        let tools = read(&tool);
        let back = through_plist(&tools);
        for (_, d) in DIALECT_NAMES {
            prop_assert_eq!(write_tools(&tools, *d).unwrap(), write_tools(&back, *d).unwrap());
        }
    }

    /// plist -> JSON -> plist: printing what the JSON reads back gives the same text.
    #[test]
    fn plist_json_plist_identity(tool in tool_json()) {
        let tools = read(&tool);
        let mut first = String::new();
        print_tools(&tools, &mut first);
        let json = write_tools(&tools_from_elisp(&first).unwrap(), Dialect::Anthropic).unwrap();
        let again = read(&json);
        let mut second = String::new();
        print_tools(&again, &mut second);
        prop_assert_eq!(first, second);
    }

    /// Each dialect's own output reads back to the same tools.
    #[test]
    fn dialect_output_reads_back(tool in tool_json()) {
        let tools = read(&tool);
        for d in [Dialect::OpenAi, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::Mcp, Dialect::Bedrock] {
            let out = write_tool(&tools[0], d).unwrap();
            let again = read_str(&out.to_string(), &ReadOptions::default()).unwrap().tools;
            prop_assert_eq!(write_tool(&again[0], d).unwrap(), out);
        }
    }
}
