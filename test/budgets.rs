//! Budgets for a whole operation, not per item: what one file makes when
//! every tool `$ref`s one large schema, the values an Emacs Lisp file
//! builds by copying its variables, and the time spent compiling a
//! tool's `pattern`s.  Each of these once took gigabytes or a minute
//! from a file of a few kilobytes.
//!
//! The files as a user meets them run through the `toolspec` command
//! under a memory limit (`ulimit -v`), so that a regression fails the
//! test instead of taking the machine; the core is tried with small
//! budgets on an 8 MiB stack with a deadline.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use toolspec::budget;
use toolspec::check;
use toolspec::openapi::{self, OpenApiOptions};
use toolspec::read::{read_str, read_str_each, Format, ReadOptions};
use toolspec::ErrorKind;

#[path = "common/mod.rs"]
mod common;
use common::within;

const BIN: &str = env!("CARGO_BIN_EXE_toolspec");

fn opts() -> ReadOptions<'static> {
    ReadOptions { format: Format::Auto, default_name: Some("budgets"), ..ReadOptions::default() }
}

// ------------------------------------------------------------- hostile files

/// `tools` MCP tools, each with one argument that `$ref`s one object
/// schema of `props` properties.
pub fn fan_out_tools(tools: usize, props: usize) -> String {
    let props: Vec<String> = (0..props).map(|i| format!("\"p{i}\":{{\"type\":\"string\"}}")).collect();
    let tool_list: Vec<String> = (0..tools)
        .map(|i| {
            format!(
                "{{\"name\":\"t{i}\",\"description\":\"T.\",\"inputSchema\":{{\"type\":\"object\",\
                 \"properties\":{{\"x\":{{\"$ref\":\"#/$defs/big\"}}}}}}}}"
            )
        })
        .collect();
    format!(
        "{{\"tools\":[{}],\"$defs\":{{\"big\":{{\"type\":\"object\",\"properties\":{{{}}}}}}}}}",
        tool_list.join(","),
        props.join(",")
    )
}

/// An OpenAPI document of `ops` operations whose request bodies all
/// `$ref` one schema of `props` properties.
pub fn fan_out_openapi(ops: usize, props: usize) -> String {
    let props: Vec<String> = (0..props).map(|i| format!("\"p{i}\":{{\"type\":\"string\"}}")).collect();
    let paths: Vec<String> = (0..ops)
        .map(|i| {
            format!(
                "\"/x{i}\":{{\"post\":{{\"operationId\":\"op{i}\",\"requestBody\":{{\"content\":{{\"application/json\":\
                 {{\"schema\":{{\"$ref\":\"#/components/schemas/Big\"}}}}}}}},\"responses\":{{\"200\":{{\"description\":\"ok\"}}}}}}}}"
            )
        })
        .collect();
    format!(
        "{{\"openapi\":\"3.0.0\",\"info\":{{\"title\":\"t\",\"version\":\"1\"}},\"paths\":{{{}}},\
         \"components\":{{\"schemas\":{{\"Big\":{{\"type\":\"object\",\"properties\":{{{}}}}}}}}}}}",
        paths.join(","),
        props.join(",")
    )
}

/// Emacs Lisp that doubles a list `n` times through variables, in one
/// of three ways, and makes a tool of the result.
pub fn doubling_elisp(how: &str, n: usize) -> String {
    let mut s = String::from("(setq s0 (list '(:name \"a\" :type string :description \"A\")))\n");
    for i in 1..=n {
        let p = i - 1;
        s += &match how {
            "append" => format!("(setq s{i} (append s{p} s{p}))\n"),
            "list" => format!("(setq s{i} (list s{p} s{p} s{p} s{p}))\n"),
            _ => format!("(setq s{i} `(,@s{p} ,@s{p}))\n"),
        };
    }
    s + &format!("(gptel-make-tool :name \"boom\" :description \"Boom.\" :function #'ignore :args s{n})\n")
}

/// Emacs Lisp whose variables each hold a list of the one before, `n`
/// of them: values nested `n` deep, and a chain of `n` variables.
pub fn chained_elisp(n: usize) -> String {
    let mut s = String::from("(setq a0 (list '(:name \"a\" :type string :description \"A\")))\n");
    for i in 1..=n {
        s += &format!("(setq a{i} (list a{}))\n", i - 1);
    }
    s + &format!("(gptel-make-tool :name \"chain\" :description \"Chain.\" :function #'ignore :args a{n})\n")
}

/// One MCP tool with `n` arguments, each with a distinct `pattern` slow
/// to compile.
pub fn heavy_patterns(n: usize) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| format!("\"p{i}\":{{\"type\":\"string\",\"description\":\"P.\",\"pattern\":\"^(?:[a-z]{{1,40}}[0-9]{{1,40}}){{1,30}}x{i}$\"}}"))
        .collect();
    format!(
        "{{\"name\":\"patterns\",\"description\":\"Patterns.\",\"inputSchema\":{{\"type\":\"object\",\"properties\":{{{}}}}}}}",
        props.join(",")
    )
}

// ------------------------------------------------- the core, small budgets

#[test]
fn ref_fan_out_across_tools_is_bounded_for_the_whole_import() {
    within(Duration::from_secs(120), || {
        // 200 tools of 1,000 properties each: each tool is far within the
        // bounds of one schema, the import is not within 4 MiB.
        let text = fan_out_tools(200, 1_000);
        let e = budget::within(Some(4 << 20), || read_str(&text, &opts())).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        assert!(e.message.contains("more than 4 MiB") && e.message.contains("toolspec-max-import-size"), "{e}");
        assert!(e.message.contains("--max-import-size"), "{e}");
        assert!(e.path.as_deref().is_some_and(|p| p.starts_with("tools[")), "{e:?}");
        // As Emacs reads it: tools handed over one by one.
        let handed = std::cell::Cell::new(0);
        let e = budget::within(Some(4 << 20), || {
            read_str_each(&text, &opts(), &mut |_, _| handed.set(handed.get() + 1), &mut || handed.set(0))
        })
        .unwrap_err();
        assert!(handed.get() < 200, "{}", handed.get());
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        // The same import within a larger budget reads every tool.
        let imp = budget::within(Some(1 << 30), || read_str(&text, &opts())).unwrap();
        assert_eq!(imp.tools.len(), 200);
        // A few tools sharing the schema are within the default.
        assert_eq!(read_str(&fan_out_tools(8, 1_000), &opts()).unwrap().tools.len(), 8);
    });
}

#[test]
fn ref_fan_out_across_openapi_operations_is_bounded_for_the_whole_import() {
    within(Duration::from_secs(120), || {
        let text = fan_out_openapi(400, 300);
        for e in [
            budget::within(Some(4 << 20), || openapi::read_text(&text, &OpenApiOptions::default())).unwrap_err(),
            budget::within(Some(4 << 20), || read_str(&text, &opts())).unwrap_err(),
        ] {
            // An error for the import, not one operation skipped after
            // another.
            assert_eq!(e.kind, ErrorKind::Limit, "{e}");
            assert!(e.message.contains("toolspec-max-import-size"), "{e}");
        }
        let imp = budget::within(Some(1 << 30), || openapi::read_text(&text, &OpenApiOptions::default())).unwrap();
        assert_eq!(imp.tools.len(), 400);
        // The JSON checker (Flymake's for JSON buffers) reports it.
        let c = budget::within(Some(4 << 20), || check::check_json(&text, &opts()));
        assert!(c.unusable, "{:?}", c.diagnostics);
        assert!(c.diagnostics.iter().any(|d| d.message.contains("toolspec-max-import-size")), "{:?}", c.diagnostics);
    });
}

#[test]
fn elisp_values_copied_from_variables_are_bounded_for_the_whole_analysis() {
    for how in ["append", "list", "splice"] {
        let text = doubling_elisp(how, 40);
        let started = Instant::now();
        let c = within(Duration::from_secs(60), move || check::check_elisp(&text));
        assert!(started.elapsed() < Duration::from_secs(30), "{how}: {:?}", started.elapsed());
        assert!(
            c.diagnostics.iter().any(|d| d.level == check::Level::Note && d.message.contains("not checked: too large")),
            "{how}: {:?}",
            c.diagnostics
        );
    }
    // Below the budget, a doubled list is checked whole.
    let c = check::check_elisp(&doubling_elisp("append", 4));
    assert!(c.diagnostics.iter().all(|d| !d.message.contains("too large")), "{:?}", c.diagnostics);
    let tools = check::elisp_tools(&doubling_elisp("append", 4)).unwrap();
    assert_eq!(tools[0].2.tool.as_ref().unwrap().args.len(), 16);
}

/// A tool of 32,768 arguments within the copy budget, half of them with
/// a mistake, half known only at run time: matching each problem and
/// each such part against each other such part took minutes; now the
/// analysis ends at once, with about a thousand findings at most.
#[test]
fn elisp_tools_with_many_problems_and_run_time_parts_are_bounded() {
    // `s0` refers to itself: each copy holds a part unknown until run time.
    let mut text = String::from("(setq s0 (list '(:name \"a\" :type strin)))\n(push s0 s0)\n");
    for i in 1..=15 {
        text += &format!("(setq s{i} (append s{p} s{p}))\n", p = i - 1);
    }
    text += "(gptel-make-tool :name \"many\" :description \"Many.\" :function #'ignore :args s15)\n";
    let started = Instant::now();
    let c = within(Duration::from_secs(120), move || check::check_elisp(&text));
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    assert!(c.diagnostics.len() <= 1_010, "{}", c.diagnostics.len());
    assert!(c.diagnostics.iter().any(|d| d.message.contains("not checked: too large")), "{:?}", c.diagnostics.first());
}

#[test]
fn elisp_chains_of_variables_do_not_overflow_the_stack() {
    let text = chained_elisp(100_000);
    let c = within(Duration::from_secs(60), move || check::check_elisp(&text));
    assert!(c.diagnostics.iter().any(|d| d.message.contains("nested too deeply")), "{:?}", c.diagnostics.first());
}

#[test]
fn pattern_compilation_is_bounded_for_the_whole_import() {
    // 20,000 patterns of about a millisecond each in a release build
    // (several in a debug one): far more than the budget's 2 s.
    let text = heavy_patterns(20_000);
    let started = Instant::now();
    let (imp, problems) = within(Duration::from_secs(60), move || {
        budget::within(None, || {
            let imp = read_str(&text, &opts()).unwrap();
            let problems = toolspec::validate_tool(&imp.tools[0]);
            (imp, problems)
        })
    });
    let took = started.elapsed();
    assert_eq!(imp.tools[0].args.len(), 20_000);
    let unchecked: Vec<_> =
        problems.iter().filter(|p| p.message.contains("not checked: this import spent more than")).collect();
    assert_eq!(unchecked.len(), 1, "{:?}", problems.iter().take(3).collect::<Vec<_>>());
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// `toolspec check` on that tool: the check is within the import's
/// pattern budget too (90 s in a debug build before).
#[test]
fn checking_a_file_of_heavy_patterns_is_bounded() {
    let dir = scratch("patterns");
    let file = write(&dir, "patterns.json", &heavy_patterns(20_000));
    let (code, out, took) = limited(1 << 20, &["check", &file]);
    assert!(code.is_some(), "{out}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(out.contains("not checked: this import spent more than 2 s compiling"), "{}", &out[..out.len().min(2000)]);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------ the command, memory-limited

/// Run `toolspec ARGS` under a memory limit of `kib` KiB (`ulimit -v`);
/// its status, standard error and output, and the time it took.
fn limited(kib: usize, args: &[&str]) -> (Option<i32>, String, Duration) {
    let script = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
    let started = Instant::now();
    let out = Command::new("sh").arg("-c").arg(script).arg(BIN).args(args).output().expect("sh runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.code(), text, started.elapsed())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolspec-budgets-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The files of the security review at their full size: 1,000 tools
/// each `$ref`-ing a 50,000-property schema (1.6 MB), 6,000 OpenAPI
/// operations sharing a 1,900-property schema (1.2 MB).  Without the
/// import's budget each took gigabytes; within 1.5 GiB of address space
/// each now ends with the budget's error.
#[test]
fn fan_out_files_end_with_the_import_budget_error_within_a_memory_limit() {
    let dir = scratch("fan");
    let tools = write(&dir, "fan.json", &fan_out_tools(1_000, 50_000));
    let ops = write(&dir, "fan-openapi.json", &fan_out_openapi(6_000, 1_900));
    for file in [&tools, &ops] {
        for args in [vec!["convert", "--to", "mcp", file.as_str()], vec!["check", file.as_str()]] {
            let (code, err, took) = limited(1536 << 10, &args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(err.contains("toolspec-max-import-size") && err.contains("--max-import-size"), "{args:?}: {err}");
            assert!(took < Duration::from_secs(120), "{args:?}: {took:?}");
        }
    }
    // Raised, the budget lets a smaller file through.
    let few = write(&dir, "few.json", &fan_out_tools(20, 50_000));
    let (code, err, _) = limited(1536 << 10, &["--max-import-size", "1000000000", "convert", "--to", "mcp", &few]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err, _) = limited(1536 << 10, &["--max-import-size", "1000000", "convert", "--to", "mcp", &few]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("more than 976.6 KiB"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `toolspec check` on the 1.2 KB Lisp files that doubled a list forty
/// times (24 GB before): a note, within 512 MiB.
#[test]
fn doubling_elisp_files_get_a_note_within_a_memory_limit() {
    let dir = scratch("elisp");
    for how in ["append", "list", "splice"] {
        let file = write(&dir, &format!("{how}.el"), &doubling_elisp(how, 40));
        let (code, out, took) = limited(512 << 10, &["check", &file]);
        assert!(code.is_some(), "{how}: killed by a signal: {out}");
        assert!(took < Duration::from_secs(60), "{how}: {took:?}");
        assert!(out.contains("note: not checked: too large"), "{how}: {out}");
    }
    let file = write(&dir, "chain.el", &chained_elisp(100_000));
    let (code, err, _) = limited(512 << 10, &["check", &file]);
    assert!(code.is_some(), "chain: killed by a signal: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}
