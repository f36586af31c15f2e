//! The `toolspec` command, run as a user runs it: on files, on standard
//! input, with every subcommand, checking output and exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use toolspec::value::Value;

const BIN: &str = env!("CARGO_BIN_EXE_toolspec");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> String {
    root().join("examples").join(name).to_string_lossy().into_owned()
}

fn elisp(name: &str) -> String {
    root().join("test/fixtures/elisp").join(name).to_string_lossy().into_owned()
}

/// The examples that import without any warning: those of the formats
/// that say how a tool runs carry names and slips that are reported.
fn clean_examples() -> Vec<String> {
    examples()
        .into_iter()
        .filter(|f| !["arcade.json", "gloodata.json", "skydeck.json", "openapi.json"].iter().any(|n| f.ends_with(n)))
        .collect()
}

fn examples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// Run `toolspec ARGS` in `dir`, with `stdin` as standard input.
fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolspec runs");
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn run(args: &[&str]) -> Output {
    run_in(&root(), args, None)
}

fn run_stdin(args: &[&str], stdin: &str) -> Output {
    run_in(&root(), args, Some(stdin))
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn lines(o: &Output) -> Vec<String> {
    stdout(o).lines().map(String::from).collect()
}

/// A temporary directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("toolspec-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const BAD_JSON_SPEC: &str = r#"{
  "tools": [
    {
      "name": "ok_tool",
      "description": "Fine.",
      "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "Query"}}, "required": ["q"]}
    },
    {
      "name": "bad tool",
      "description": "Has problems.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "count": {"type": "int", "description": "How many"},
          "tags": {"type": "array", "description": "Tags"},
          "mode": {"enum": [1, 2]},
          "opts": {"type": "object", "properties": {"r": {"type": "array"}}}
        },
        "required": ["count"]
      }
    }
  ]
}
"#;

const BAD_JSON_LINES: &[&str] = &[
    "bad.json:9:15: error: name: \"bad tool\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{1,64}$, e.g. \"bad_tool\"",
    "bad.json:14:29: warning: tools[1].inputSchema.properties.count.type: non-standard type name \"int\" read as \"integer\"",
    "bad.json:15:19: error: args[1].items: an array needs :items describing its elements, e.g. :items (:type string)",
    "bad.json:16:19: warning: args[2].description: missing :description: gptel and llm require one, and the model relies on it",
    "bad.json:16:19: warning: args[2].type: no :type: any value is accepted; llm needs one on an argument (`toolspec-make-llm-tools' gives it one); to constrain it add one of string, number, integer, boolean, array, object, null",
    "bad.json:16:29: warning: args[2].enum[0]: gptel and llm expect :enum to hold strings; the number 1 works with providers but not with every client",
    "bad.json:16:32: warning: args[2].enum[1]: gptel and llm expect :enum to hold strings; the number 2 works with providers but not with every client",
    "bad.json:17:19: warning: args[3].description: missing :description: gptel and llm require one, and the model relies on it",
    "bad.json:17:58: error: args[3].properties.r.items: an array needs :items describing its elements, e.g. :items (:type string)",
];

const MISTAKES_LINES: &[&str] = &[
    "mistakes.el:10:35: error: args[0].type: 'string inside an already quoted list reads as (quote string): write string without the quote",
    "mistakes.el:11:39: error: args[1].type: :type must be a symbol: write string, not the string \"string\" (llm rejects strings)",
    "mistakes.el:18:49: error: args[0].enum: :enum must be a vector such as [\"modus-operandi\" \"modus-vivendi\"], found a list",
    "mistakes.el:25:15: error: args[0].items: an array needs :items describing its elements, e.g. :items (:type string)",
    "mistakes.el:31:36: error: args[1].required[1]: \"until\" names no key of :properties (known keys: folder, since)",
    "mistakes.el:34:8: error: name: \"open url\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{1,64}$, e.g. \"open_url\"",
    "mistakes.el:37:14: error: (:name ...) is evaluated as a function call and fails: quote the plist, '(:name ...), or build it with (list :name ...)",
    "mistakes.el:40:37: error: function: #'my-list-buffers inside a quoted list is the list (function my-list-buffers), which cannot be called: write my-list-buffers without #' there, or build the spec with (list ... :function #'my-list-buffers)",
    "mistakes.el:47:12: error: function: the function takes 1 argument(s) but :args declares 2: gptel passes one value per arg, in order",
    "mistakes.el:48:15: warning: `#.' evaluates the form after it when the file is read; toolspec never evaluates it, so what it gives is not checked: write the value itself",
];

// ------------------------------------------------------------------ help

#[test]
fn help_describes_commands_formats_and_exit_statuses() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    for word in ["convert", "check", "detect", "Exit status", "elisp", "mcp", "standard input", "Examples"] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    let check = stdout(&run(&["check", "--help"]));
    for word in ["--format", "--strict", "--no-notes", "FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE", "Exit status"] {
        assert!(check.contains(word), "check --help lacks {word}:\n{check}");
    }
    let convert = stdout(&run(&["convert", "--help"]));
    for word in ["--to", "--from", "openai-strict", "json-schema", "elisp", "--output", "--category"] {
        assert!(convert.contains(word), "convert --help lacks {word}:\n{convert}");
    }
    assert!(stdout(&run(&["--version"])).contains(toolspec::VERSION));
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["convert", &example("mcp-tools-list.json"), "--to", "klingon"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("klingon"));
    assert_eq!(code(&run(&["check"])), 2);
    assert_eq!(code(&run(&["frobnicate"])), 2);
}

// ----------------------------------------------------------------- check

#[test]
fn check_clean_files_exits_0_silently() {
    let mut args = vec!["check"];
    let files = clean_examples();
    args.extend(files.iter().map(String::as_str));
    let clean = elisp("clean-tools.el");
    let collections = elisp("collections.el");
    args.push(&clean);
    args.push(&collections);
    let o = run(&args);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "");
}

#[test]
fn check_json_problems_at_their_place() {
    let dir = TempDir::new("bad");
    dir.file("bad.json", BAD_JSON_SPEC);
    let o = run_in(&dir.0, &["check", "bad.json"], None);
    assert_eq!(code(&o), 1);
    assert_eq!(lines(&o), BAD_JSON_LINES);
}

#[test]
fn check_invalid_json_is_unusable() {
    let dir = TempDir::new("invalid");
    dir.file("broken.json", "{\n  \"tools\": [\n    {\"name\": \"x\",, \"description\": \"d\"}\n  ]\n}\n");
    dir.file("notools.json", "{\"openapi\": \"3.0.0\", \"paths\": {}}");
    let o = run_in(&dir.0, &["check", "broken.json"], None);
    assert_eq!(code(&o), 2);
    assert_eq!(lines(&o), ["broken.json:3:18: error: invalid JSON: key must be a string"].map(String::from).to_vec(),);
    // An OpenAPI document is read; having no operations is its problem.
    let o = run_in(&dir.0, &["check", "notools.json"], None);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).starts_with("notools.json:1:31: error: paths: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("has no operations"), "{}", stdout(&o));
    dir.file("unknown.json", "{\"swaggerish\": 1}");
    let o = run_in(&dir.0, &["check", "unknown.json"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stdout(&o).starts_with("unknown.json:1:1: error: not a tool definition in any known format"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn check_unreadable_and_mixed_files() {
    let dir = TempDir::new("mixed");
    dir.file("bad.json", BAD_JSON_SPEC);
    dir.file("latin1.json", "");
    std::fs::write(dir.0.join("latin1.json"), b"{\"name\": \"caf\xe9\"}").unwrap();
    let clean = example("anthropic.json");
    let o = run_in(&dir.0, &["check", &clean, "missing.json", "bad.json", "latin1.json"], None);
    assert_eq!(code(&o), 2, "the worst file decides");
    assert_eq!(lines(&o), BAD_JSON_LINES);
    let err = stderr(&o);
    assert!(err.contains("toolspec: missing.json: cannot read: No such file"), "{err}");
    assert!(
        err.contains("toolspec: latin1.json: cannot read: not UTF-8 text (invalid byte at line 1, column 14)"),
        "{err}"
    );
    // Without the unusable files, the problems decide.
    let o = run_in(&dir.0, &["check", &clean, "bad.json"], None);
    assert_eq!(code(&o), 1);
}

#[test]
fn check_reads_standard_input() {
    let o = run_stdin(&["check", "-"], BAD_JSON_SPEC);
    assert_eq!(code(&o), 1);
    let expected: Vec<String> = BAD_JSON_LINES.iter().map(|l| l.replacen("bad.json", "<stdin>", 1)).collect();
    assert_eq!(lines(&o), expected);
    // Lisp on standard input is recognised by its first character.
    let lisp = std::fs::read_to_string(elisp("mistakes.el")).unwrap();
    let o = run_stdin(&["check", "-"], &lisp);
    assert_eq!(code(&o), 1);
    assert_eq!(lines(&o).len(), MISTAKES_LINES.len());
    assert!(lines(&o)[0].starts_with("<stdin>:10:35: error: args[0].type: "));
    let o = run_stdin(&["check", "-"], "");
    assert_eq!(code(&o), 2);
}

#[test]
fn check_format_json_for_machines() {
    let dir = TempDir::new("json");
    dir.file("bad.json", BAD_JSON_SPEC);
    let runtime = elisp("runtime.el");
    let o = run_in(&dir.0, &["check", "--format", "json", "bad.json", "missing.json", &runtime], None);
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o), "", "with --format json everything goes into the document");
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["status"], 2);
    assert_eq!((doc["errors"].as_u64(), doc["warnings"].as_u64(), doc["notes"].as_u64()), (Some(3), Some(6), Some(4)));
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["status"], 1);
    assert_eq!(files[1]["status"], 2);
    assert!(files[1]["error"].as_str().unwrap().starts_with("cannot read"));
    assert_eq!(files[2]["status"], 0);
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), BAD_JSON_LINES.len() + 4);
    let first = &problems[0];
    assert_eq!(first["file"], "bad.json");
    assert_eq!((first["line"].as_u64(), first["column"].as_u64()), (Some(9), Some(15)));
    assert_eq!(first["severity"], "error");
    assert_eq!(first["path"], "name");
    assert_eq!(first["tool"], "bad tool");
    assert!(first["message"].as_str().unwrap().contains("not a valid tool name"));
    let note = problems.iter().find(|p| p["severity"] == "note").unwrap();
    assert_eq!(note["file"], runtime.as_str());
    assert_eq!((note["line"].as_u64(), note["column"].as_u64()), (Some(8), Some(10)));
}

#[test]
fn check_strict_counts_warnings() {
    let warned = root().join("test/fixtures/hostile-keys.json").to_string_lossy().into_owned();
    let o = run(&["check", &warned]);
    assert_eq!(code(&o), 0);
    assert!(lines(&o).iter().all(|l| l.contains(": warning: ")), "{}", stdout(&o));
    assert!(!lines(&o).is_empty());
    assert_eq!(code(&run(&["check", "--strict", &warned])), 1);
}

#[test]
fn check_elisp_sources() {
    let dir = root().join("test/fixtures/elisp");
    let o = run_in(&dir, &["check", "mistakes.el"], None);
    assert_eq!(code(&o), 1);
    assert_eq!(lines(&o), MISTAKES_LINES);
    let o = run_in(&dir, &["check", "runtime.el"], None);
    assert_eq!(code(&o), 0, "notes do not count");
    assert_eq!(
        lines(&o),
        [
            "runtime.el:8:10: note: name: not checked: the value of (format ...) is known only when the code runs",
            "runtime.el:10:17: note: description: not checked: the value of (concat ...) is known only when the code runs",
            "runtime.el:14:28: note: not checked: the tool spec is an element of the value of (my-load-tool-specs ...), known only when the code runs",
            "runtime.el:20:8: note: args: not checked: the variable `my-summarize-args' is known only when the code runs",
        ]
    );
    let o = run_in(&dir, &["check", "--no-notes", "runtime.el"], None);
    assert_eq!((code(&o), stdout(&o)), (0, String::new()));
    let o = run_in(&dir, &["check", "broken.el"], None);
    assert_eq!(code(&o), 2);
    assert_eq!(
        lines(&o),
        [
            "broken.el:7:32: error: args[0].type: :type must be a symbol: write string, not the string \"string\" (llm rejects strings)",
            "broken.el:9:1: error: cannot read the Lisp: this list is never closed (end of file reached): a `)' is missing",
        ]
    );
    // The stand-in llm package defines llm-make-tool: nothing to say.
    let o = run(&["check", "test/fixtures/llm.el"]);
    assert_eq!((code(&o), stdout(&o)), (0, String::new()));
    // --from elisp reads any file name as Lisp.
    let t = TempDir::new("from");
    let f = t.file(
        "tools.txt",
        "(gptel-make-tool :name \"x\" :description \"d\" :args (list '(:name \"a\" :type strin :description \"A\")))",
    );
    let o = run(&["check", "--from", "elisp", &f]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains(":1:75: error: args[0].type: `strin' is not a JSON type"), "{}", stdout(&o));
}

#[test]
fn check_progress_on_request() {
    let mut args = vec!["check", "--progress"];
    let files = examples();
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert_eq!(code(&o), 0);
    let err = stderr(&o);
    assert!(err.contains(&format!("checked 1/{} files", files.len())), "{err}");
    assert!(err.contains(&format!("checked {0}/{0} files", files.len())), "{err}");
    // Not a terminal: no progress unless asked.
    let mut args = vec!["check"];
    let many: Vec<String> = (0..30).map(|_| example("gemini.json")).collect();
    args.extend(many.iter().map(String::as_str));
    assert_eq!(stderr(&run(&args)), "");
}

// ---------------------------------------------------------------- detect

#[test]
fn detect_names_formats() {
    let expected = [
        ("anthropic.json", "anthropic"),
        ("bedrock.json", "bedrock"),
        ("gemini.json", "gemini"),
        ("json-schema.json", "json-schema"),
        ("mcp-tools-list.json", "mcp"),
        ("openai-chat.json", "openai"),
        ("openai-responses.json", "openai-responses"),
    ];
    for (file, format) in expected {
        let o = run(&["detect", &example(file)]);
        assert_eq!(code(&o), 0);
        assert_eq!(stdout(&o), format!("{format}\n"), "{file}");
    }
    let o = run(&["detect", &elisp("collections.el")]);
    assert_eq!(stdout(&o), "elisp\n");
    let mixed = r#"[{"name": "a", "input_schema": {}}, {"type": "function", "function": {"name": "b"}}]"#;
    let o = run_stdin(&["detect", "-"], mixed);
    assert_eq!((code(&o), stdout(&o)), (0, "mixed (anthropic, openai)\n".to_string()));
    let o = run(&["detect", &example("bedrock.json"), &elisp("runtime.el"), "nope.json"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        lines(&o),
        [
            format!("{}: bedrock", example("bedrock.json")),
            format!("{}: elisp", elisp("runtime.el")),
            "nope.json: unknown".into()
        ]
    );
    let o = run_stdin(&["detect", "-"], "{\"hello\": 1}");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no tool definitions recognised"), "{}", stderr(&o));
}

// --------------------------------------------------------------- convert

/// The tools of a document in `dialect`, as the core reads them back.
fn read_back(text: &str, dialect: &str) -> Vec<toolspec::Tool> {
    let format = match dialect {
        "openai-strict" | "ollama" => "openai",
        d => d,
    };
    let opts = toolspec::ReadOptions {
        format: toolspec::Format::parse(format).unwrap(),
        default_name: Some("tool"),
        ..toolspec::ReadOptions::default()
    };
    toolspec::parse_json(text, &opts).unwrap_or_else(|e| panic!("{dialect}: {e}\n{text}")).tools
}

#[test]
fn convert_everything_to_every_dialect() {
    let mut inputs = examples();
    inputs.push(elisp("collections.el"));
    inputs.push(elisp("clean-tools.el"));
    let names: Vec<String> = inputs
        .iter()
        .flat_map(|f| {
            let o = run(&["convert", f, "--to", "openai", "--compact"]);
            assert_eq!(code(&o), 0, "{f}: {}", stderr(&o));
            let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
            doc.as_array()
                .unwrap()
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    for (dialect, _) in toolspec::write::DIALECT_NAMES {
        let mut args = vec!["convert", "--to", dialect];
        args.extend(inputs.iter().map(String::as_str));
        let o = run(&args);
        assert_eq!(code(&o), 0, "{dialect}: {}", stderr(&o));
        let text = stdout(&o);
        let doc: Value = serde_json::from_str(&text).unwrap();
        let list = match *dialect {
            "mcp" | "bedrock" => doc["tools"].as_array().unwrap(),
            "gemini" => doc["functionDeclarations"].as_array().unwrap(),
            _ => doc.as_array().unwrap(),
        };
        assert_eq!(list.len(), names.len(), "{dialect}");
        if *dialect != "json-schema" {
            let back: Vec<String> = read_back(&text, dialect).into_iter().map(|t| t.name).collect();
            assert_eq!(back, names, "{dialect}");
        }
    }
}

#[test]
fn convert_from_a_forced_format_and_stdin_to_a_file() {
    let dir = TempDir::new("convert");
    let out = dir.0.join("out.json").to_string_lossy().into_owned();
    let json = std::fs::read_to_string(example("anthropic.json")).unwrap();
    let o = run_stdin(&["convert", "-", "--from", "anthropic", "--to", "mcp", "-o", &out], &json);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["tools"][0]["name"], "record_summary");
    // Compact output is one line.
    let o = run(&["convert", &example("gemini.json"), "--to", "anthropic", "--compact"]);
    assert_eq!(stdout(&o).lines().count(), 1);
    // What reading changed is reported on stderr, unless --quiet.
    let dir2 = TempDir::new("convert-warn");
    dir2.file("bad.json", BAD_JSON_SPEC);
    let o = run_in(&dir2.0, &["convert", "--force", "bad.json", "--to", "openai"], None);
    assert!(stderr(&o)
        .contains("bad.json:14:29: warning: tools[1].inputSchema.properties.count.type: non-standard type name"));
    let o = run_in(&dir2.0, &["convert", "-q", "--force", "bad.json", "--to", "openai"], None);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn convert_reports_errors_and_writes_only_with_force() {
    let dir = TempDir::new("convert-errors");
    dir.file("bad.json", BAD_JSON_SPEC);
    let out = dir.0.join("out.json");
    // The errors `check' finds are reported where they are; nothing is written.
    let o = run_in(&dir.0, &["convert", "bad.json", "--to", "openai", "-o", "out.json"], None);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    for l in BAD_JSON_LINES.iter().filter(|l| l.contains(": error: ")) {
        assert!(err.contains(l), "{l} missing from:\n{err}");
    }
    assert!(err.contains("toolspec: 3 errors: nothing written (fix them, or write anyway with --force)"), "{err}");
    assert!(!out.exists());
    let o = run_in(&dir.0, &["convert", "bad.json", "--to", "openai"], None);
    assert_eq!(stdout(&o), "");
    // --force writes, and the status still says there were errors.
    let o = run_in(&dir.0, &["convert", "--force", "bad.json", "--to", "openai", "-o", "out.json"], None);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(BAD_JSON_LINES[0]));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 2);
    // Elisp with errors: the same.
    let o = run(&["convert", &elisp("mistakes.el"), "--to", "mcp"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("mistakes.el:") && stderr(&o).contains(": error: "), "{}", stderr(&o));
    // A clean file converts as before, silently.
    let o = run(&["convert", &example("mcp-tools-list.json"), "--to", "openai"]);
    assert_eq!(code(&o), 0);
    assert_eq!(stderr(&o), "");
}

#[test]
fn convert_refuses_unusable_input() {
    let dir = TempDir::new("unusable");
    dir.file("broken.json", "[{\"name\": ");
    let o = run_in(&dir.0, &["convert", "broken.json", &example("mcp-tools-list.json"), "--to", "openai"], None);
    assert_eq!(code(&o), 2);
    assert_eq!(stdout(&o), "", "nothing is written when an input is unusable");
    assert!(stderr(&o).contains("broken.json:1:10: error: invalid JSON: EOF while parsing a value"), "{}", stderr(&o));
    let o = run(&["convert", &elisp("broken.el"), "--to", "openai"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("broken.el:9:1: error: cannot read the Lisp: this list is never closed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn convert_elisp_skips_what_runs_only_at_run_time() {
    let o = run(&["convert", &elisp("runtime.el"), &elisp("clean-tools.el"), "--to", "mcp"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "runtime.el:7:3: warning: tool skipped: the value of (format ...) is known only when the code runs"
        ),
        "{err}"
    );
    assert!(err.contains("runtime.el:16:1: warning: tool \"summarize\" skipped: the variable `my-summarize-args' is known only when the code runs"), "{err}");
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = doc["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["get_weather", "read_buffer", "record_summary", "search_notes"]);
    // Only run-time tools: nothing to write.
    let o = run(&["convert", &elisp("runtime.el"), "--to", "mcp"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no tool definitions found"));
}

#[test]
fn convert_to_elisp_reads_back_and_checks_clean() {
    let mut args = vec!["convert", "--to", "elisp", "--category", "demo"];
    let files = clean_examples();
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with(";; record_summary: define `my-record-summary-function', e.g.\n"), "{text}");
    assert!(
        text.contains("\n(gptel-make-tool\n :name \"record_summary\"\n :function #'my-record-summary-function\n"),
        "{text}"
    );
    assert!(text.contains("\n :category \"demo\"\n"));
    // The forms check clean...
    let o = run_stdin(&["check", "--from", "elisp", "-"], &text);
    assert_eq!((code(&o), stdout(&o)), (0, String::new()));
    // ...and read back, with the core's reader, as the tools they came from.
    let from_elisp = toolspec::check::elisp_tools(&text).unwrap();
    let mut originals = Vec::new();
    for f in &files {
        let json = std::fs::read_to_string(f).unwrap();
        let opts = toolspec::ReadOptions {
            default_name: Path::new(f).file_stem().and_then(|s| s.to_str()),
            ..Default::default()
        };
        originals.extend(toolspec::parse_json(&json, &opts).unwrap().tools);
    }
    assert_eq!(from_elisp.len(), originals.len());
    for ((_, _, found), original) in from_elisp.iter().zip(&originals) {
        let tool = found.tool.as_ref().unwrap();
        assert_eq!(tool.name, original.name);
        assert_eq!(tool.description, original.description);
        assert_eq!(tool.args, original.args, "{}", tool.name);
        assert_eq!(found.emacs, vec![("category".to_string(), lexpr::Value::string("demo"))]);
    }
    // The placeholder name is configurable.
    let o = run(&["convert", "--to", "elisp", "--function", "tools-%s", &example("gemini.json")]);
    assert!(stdout(&o).contains(":function #'tools-find-restaurants\n"));
}

#[test]
fn convert_elisp_to_elisp_keeps_functions() {
    let o = run(&["convert", "--to", "elisp", &elisp("clean-tools.el")]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    assert!(text.starts_with("(gptel-make-tool\n :name \"get_weather\"\n :function #'my-get-weather\n"), "{text}");
    assert!(
        text.contains(" :function (lambda (callback query) (funcall callback (format \"results for %s\" query)))\n"),
        "{text}"
    );
    assert!(text.contains(" :async t\n"));
    // A lambda over several lines becomes a placeholder to define.
    assert!(text.contains(";; read_buffer: define `my-read-buffer-function', e.g.\n"), "{text}");
}

#[test]
fn detect_names_the_format_of_every_example() {
    let expected = [
        ("anthropic.json", "anthropic"),
        ("arcade.json", "arcade"),
        ("bedrock.json", "bedrock"),
        ("gemini.json", "gemini"),
        ("gloodata.json", "gloodata"),
        ("json-schema.json", "json-schema"),
        ("mcp-tools-list.json", "mcp"),
        ("openai-chat.json", "openai"),
        ("openai-responses.json", "openai-responses"),
        ("openapi.json", "openapi"),
        ("skydeck.json", "skydeck"),
    ];
    let files = examples();
    assert_eq!(files.len(), expected.len(), "every example has its expected format here");
    for (file, format) in expected {
        let path = files.iter().find(|f| f.ends_with(file)).unwrap_or_else(|| panic!("no example {file}"));
        let o = run(&["detect", path]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stdout(&o).trim_end().ends_with(format), "{file}: {}", stdout(&o));
    }
}

#[test]
fn input_size_limit_and_bytes_that_are_not_text() {
    let dir = TempDir::new("limits");
    let spec = std::fs::read_to_string(example("anthropic.json")).unwrap();
    let f = dir.file("tools.json", &spec);
    let small = (spec.len() - 1).to_string();
    for cmd in ["check", "convert", "detect"] {
        let mut args = vec![cmd, "--max-input-size", &small, &f];
        if cmd == "convert" {
            args.extend(["--to", "mcp"]);
        }
        let o = run_in(&dir.0, &args, None);
        assert_eq!(code(&o), 2, "{cmd}: {}", stderr(&o));
        let expected = format!("larger than the limit of {small} bytes (raise it with --max-input-size BYTES)");
        assert!(stderr(&o).contains(&expected), "{cmd}: {}", stderr(&o));
    }
    let o = run_in(&dir.0, &["check", "--max-input-size", &small, "-"], Some(&spec));
    assert_eq!(code(&o), 2);
    assert_eq!(code(&run_in(&dir.0, &["check", "--max-input-size", &spec.len().to_string(), &f], None)), 0);
    // Bytes that are not UTF-8, NUL characters, in JSON and in Lisp: a
    // clear report, never a crash.
    std::fs::write(dir.0.join("bytes.el"), b"(gptel-make-tool :name \"\xff\")").unwrap();
    let o = run_in(&dir.0, &["check", "bytes.el"], None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not UTF-8 text (invalid byte at line 1, column 25)"), "{}", stderr(&o));
    dir.file("nul.json", "{\"name\": \"a\u{0}b\", \"input_schema\": {\"type\": \"object\"}}");
    let o = run_in(&dir.0, &["check", "nul.json"], None);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).starts_with("nul.json:1:12: error: invalid JSON: control character"), "{}", stdout(&o));
    dir.file(
        "escaped.json",
        "{\"name\": \"a\\u0000b\", \"description\": \"d\\u0000\", \"input_schema\": {\"type\": \"object\"}}",
    );
    let o = run_in(&dir.0, &["check", "escaped.json"], None);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    // The NUL is shown escaped: a diagnostic line holds no control character.
    assert!(stdout(&o).contains("error: name: \"a\\u{0}b\" is not a valid tool name"), "{}", stdout(&o));
    let o = run_in(&dir.0, &["convert", "--force", "escaped.json", "--to", "mcp"], None);
    assert!(stdout(&o).contains("\"description\": \"d\\u0000\""), "{}", stdout(&o));
    dir.file("nul.el", "(gptel-make-tool :name \"n\" :description \"d\u{0}\" :function #'ignore)\n");
    let o = run_in(&dir.0, &["convert", "nul.el", "--to", "openai"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"description\": \"d\\u0000\""), "{}", stdout(&o));
}

// ----------------------------------------------------------------- render

const PRODUCTS: &str = r#"{"products": [{"name": "Pen", "price": 2}, {"name": "Ink", "price": 5}], "n": 2}"#;
const PRODUCTS_TEMPLATE: &str = "{% for p in products %}{{ p.name }}: {{ p.price }}\n{% endfor %}{{ data.n }} items";

/// Templates that double a value at each step, then make minijinja walk
/// the result inside one operation, which charges no fuel: `[a, a]`
/// printed as JSON, a list concatenated with itself and joined, and two
/// such lists built apart and compared (which allocates nothing).
const DOUBLING_TO_JSON: &str =
    "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson | length }}";
const DOUBLING_JOINED: &str =
    "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | join(',') | length }}";
const DOUBLING_COMPARED: &str =
    "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}\
                                 {% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}";

/// The JSON error line of a `render --request` that failed.
fn request_error(o: &Output) -> Value {
    let err = stderr(o);
    let last = err.lines().last().unwrap_or_else(|| panic!("no error line; stdout: {}", stdout(o)));
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not a JSON line ({e}): {err}"))
}

fn request(template: &str, data: &str) -> String {
    toolspec::json!({"template": template, "data": data, "version": toolspec::VERSION}).to_string()
}

#[test]
fn render_prints_the_template_over_the_data() {
    let dir = TempDir::new("render");
    let t = dir.file("filter.j2", PRODUCTS_TEMPLATE);
    let d = dir.file("response.json", PRODUCTS);
    let expected = "Pen: 2\nInk: 5\n2 items";
    for o in [
        run_in(&dir.0, &["render", &t, &d], None),
        run_in(&dir.0, &["render", &t], Some(PRODUCTS)),
        run_in(&dir.0, &["render", &t, "-"], Some(PRODUCTS)),
        run_in(&dir.0, &["render", "-", &d], Some(PRODUCTS_TEMPLATE)),
        // Small limits still leave room for a small template.
        run_in(&dir.0, &["render", "--max-memory", "16", "--max-cpu-seconds", "1", &t, &d], None),
        run_in(&dir.0, &["render", "--max-memory", "0", "--max-cpu-seconds", "0", &t, &d], None),
        run_in(&dir.0, &["render", "--", &t, &d], None),
    ] {
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(stdout(&o), expected);
        assert_eq!(stderr(&o), "");
    }
    // Non-ASCII text, and output that is not JSON, come out as they are.
    let o = run_stdin(&["render", "--request"], &request("{{ name }} ✓ {{ response | tojson }}", r#"{"name":"é"}"#));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // For Emacs, the length in bytes comes first.
    assert_eq!(stdout(&o), "21\né ✓ {\"name\": \"é\"}");
}

#[test]
fn render_help_describes_it() {
    let help = stdout(&run(&["render", "--help"]));
    for word in
        ["TEMPLATE-FILE", "DATA-FILE", "--request", "--max-memory", "--max-cpu-seconds", "Exit status", "x-filter"]
    {
        assert!(help.contains(word), "render --help lacks {word}:\n{help}");
    }
    assert!(!help.contains("--limited"), "{help}");
    assert!(stdout(&run(&["--help"])).contains("render"));
}

#[test]
fn render_reports_what_fails() {
    let dir = TempDir::new("render-errors");
    let bad = dir.file("bad.j2", "line one\n{% for x in %}");
    let d = dir.file("data.json", "{}");
    let o = run_in(&dir.0, &["render", "bad.j2", "data.json"], None);
    assert_eq!(code(&o), 1);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).starts_with("toolspec: bad.j2: template line 2: syntax error"), "{}", stderr(&o));
    // Beyond the template's bounds: exit status 1 too.
    let endless =
        dir.file("endless.j2", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
    let o = run_in(&dir.0, &["render", &endless, &d], None);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("needs more work than allowed (fuel 2000000)"), "{}", stderr(&o));
    // Unusable input: exit status 2.
    let o = run_in(&dir.0, &["render", &bad], Some("{not json"));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("line 1, column 2: key must be a string"), "{}", stderr(&o));
    let o = run_in(&dir.0, &["render", "missing.j2", &d], None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).starts_with("toolspec: missing.j2: missing.j2: cannot read:"), "{}", stderr(&o));
    let o = run_in(&dir.0, &["render", "-"], Some("{}"));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot both be standard input"), "{}", stderr(&o));
    assert_eq!(code(&run(&["render"])), 2);
    assert_eq!(code(&run(&["render", "--request", &bad])), 2);
}

#[test]
fn render_requests_report_errors_as_json() {
    let o = run_stdin(&["render", "--request"], &request(PRODUCTS_TEMPLATE, PRODUCTS));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "21\nPen: 2\nInk: 5\n2 items");
    let cases = [
        (request("{{ 1 + }}", "{}"), 1, "toolspec-template-error", "template line 1: syntax error"),
        (request("{% include '/etc/passwd' %}", "{}"), 1, "toolspec-template-error", "unknown statement include"),
        (
            request("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "{}"),
            1,
            "toolspec-template-limit-error",
            "recursion deeper than 200 levels",
        ),
        (
            request("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "{}"),
            1,
            "toolspec-template-limit-error",
            "larger than 1048576 bytes",
        ),
        (request("{{ x }}", "[1,"), 2, "toolspec-json-error", "line 1, column 3: EOF while parsing"),
        ("{\"template\": 1}".to_string(), 2, "toolspec-json-error", "the render request is not a JSON object"),
        (
            toolspec::json!({"template": "", "data": "{}", "version": "0.0.1"}).to_string(),
            2,
            "toolspec-program-error",
            "the toolspec program is version",
        ),
    ];
    for (req, status, symbol, message) in cases {
        let o = run_stdin(&["render", "--request"], &req);
        assert_eq!(code(&o), status, "{req}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{req}");
        let e = request_error(&o);
        assert_eq!(e["error"], symbol, "{req}: {e}");
        assert!(e["message"].as_str().unwrap().contains(message), "{req}: {e}");
    }
    // The place of a JSON error, for the error's details in Lisp.
    let e = request_error(&run_stdin(&["render", "--request"], &request("{{ x }}", "{\n  \"a\": }")));
    assert_eq!((e["line"].as_u64(), e["column"].as_u64()), (Some(2), Some(8)), "{e}");
}

#[test]
fn render_ends_doubling_templates_at_the_memory_limit() {
    for template in [DOUBLING_TO_JSON, DOUBLING_JOINED] {
        // Enough CPU time to reach the memory limit in a debug build.
        let o = run_stdin(
            &["render", "--request", "--max-memory", "64", "--max-cpu-seconds", "60"],
            &request(template, "{}"),
        );
        assert_eq!(code(&o), 1, "{template}: {}", stderr(&o));
        assert_eq!(stdout(&o), "");
        let e = request_error(&o);
        assert_eq!(e["error"], "toolspec-template-limit-error", "{template}: {e}");
        assert_eq!(e["message"], "the template needed more than 64 MiB of memory", "{template}: {e}");
    }
    // For people: the same message, on one line.
    let dir = TempDir::new("render-memory");
    dir.file("doubling.j2", DOUBLING_JOINED);
    let o =
        run_in(&dir.0, &["render", "--max-memory", "64", "--max-cpu-seconds", "60", "doubling.j2", "-"], Some("{}"));
    assert_eq!(code(&o), 1);
    assert_eq!(stderr(&o), "toolspec: doubling.j2: the template needed more than 64 MiB of memory\n");
}

#[test]
fn render_ends_work_that_allocates_nothing_at_the_cpu_limit() {
    let o = run_stdin(&["render", "--request", "--max-cpu-seconds", "1"], &request(DOUBLING_COMPARED, "{}"));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let e = request_error(&o);
    assert_eq!(e["error"], "toolspec-template-limit-error", "{e}");
    assert_eq!(e["message"], "the template needed more than 1 second of CPU time", "{e}");
    let dir = TempDir::new("render-cpu");
    dir.file("compare.j2", DOUBLING_COMPARED);
    let o = run_in(&dir.0, &["render", "--max-cpu-seconds", "2", "compare.j2", "-"], Some("{}"));
    assert_eq!(code(&o), 1);
    assert_eq!(stderr(&o), "toolspec: compare.j2: the template needed more than 2 seconds of CPU time\n");
}

/// Names and messages from a file are printed on one line: a newline in a
/// property or tool name, or an escape sequence, cannot start a line of
/// its own that `next-error` would follow (`/etc/passwd:1:1: error:`).
#[test]
fn diagnostics_escape_names_that_would_forge_lines() {
    let dir = TempDir::new("forge");
    let forged = |n: u32| format!("\n/etc/passwd:{n}:1: error: forged\r\u{1b}[2K\u{202e}");
    let json = toolspec::json!({"tools": [{"name": "t", "description": "d", "inputSchema": {
        "type": "object",
        "properties": {
            forged(1): {"type": "int", "description": "d"},
            "o": {"type": "object", "description": "o", "properties": {forged(2): {"type": "array"}}}
        }
    }}]});
    std::fs::write(dir.0.join("forge.json"), json.to_string()).unwrap();
    let lisp = format!(
        "(gptel-make-tool :name {} :function #'ignore :description \"d\"\n  :args (list '(:name {} :type int :description \"d\")))\n",
        toolspec::json!(format!("t{}", forged(3))),
        toolspec::json!(format!("a{}", forged(4))),
    );
    std::fs::write(dir.0.join("forge.el"), lisp).unwrap();
    let one_line = |text: &str, file: &str| {
        let lines: Vec<&str> = text.lines().collect();
        assert!(!lines.is_empty(), "{text}");
        for l in &lines {
            assert!(l.starts_with(&format!("{file}:")), "{l:?} in {text:?}");
            assert!(!l.contains(['\r', '\u{1b}', '\u{202e}']), "{l:?}");
        }
        assert!(text.contains("\\n/etc/passwd:"), "{text}");
    };
    for file in ["forge.json", "forge.el"] {
        let o = run_in(&dir.0, &["check", file], None);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        one_line(&stdout(&o), file);
    }
    // The problems of a conversion written anyway, on standard error.
    let o = run_in(&dir.0, &["convert", "--force", "forge.json", "--to", "openai"], None);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    one_line(&stderr(&o), "forge.json");
    // A template's failure, under a file name of the same kind.
    let name = "t\nforged.j2:5:1: error: x\r\u{1b}[2K\u{202e}.j2";
    std::fs::write(dir.0.join(name), "{{ 1 + }}").unwrap();
    let o = run_in(&dir.0, &["render", name, "-"], Some("{}"));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("toolspec: t\\nforged.j2:5:1: error: x\\r\\u{1b}[2K\\u{202e}.j2: template line 1"),
        "{}",
        stderr(&o)
    );
}
