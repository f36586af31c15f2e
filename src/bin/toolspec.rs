//! `toolspec`: convert and check LLM tool definitions from the command
//! line, with the same core as the Emacs module.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};

use toolspec::check::{self, one_line, Checked, Diagnostic, Input, Level};
use toolspec::gptel_form::{gptel_form, FormOptions};
use toolspec::read::{Format, ReadOptions, FORMAT_NAMES};
use toolspec::write::{self, Dialect, DIALECT_NAMES};
use toolspec::{plist, Error, ErrorKind, Tool};

mod serve; // src/bin/serve/mod.rs: a file in src/bin would be a program of its own

/// Largest file read, in bytes (--max-input-size), as in Emacs
/// (`toolspec-max-input-size`).
static MAX_INPUT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn max_input() -> usize {
    *MAX_INPUT.get().unwrap_or(&ReadOptions::default().max_size)
}

/// Show progress on stderr (when it is a terminal) from this many files.
const PROGRESS_FROM: usize = 20;

const ABOUT: &str = "Convert and check LLM tool definitions: JSON in the formats of OpenAI, Anthropic, MCP, \
Gemini, Bedrock, Ollama and JSON Schema, and gptel-make-tool / llm-make-tool forms in Emacs Lisp.";

const AFTER_HELP: &str = "\
Input formats (--from): auto (detected for each tool), elisp, and the JSON formats
  openai, ollama, openai-functions, openai-responses, anthropic, mcp, gemini,
  bedrock, json-schema.  A FILE ending in .el, or not starting with { or [, is
  read as Emacs Lisp.  `-' reads standard input.

Exit status: 0 clean, 1 problems (errors; with --strict also warnings),
  2 unusable input (a file that cannot be read, invalid JSON or Lisp, no tool
  definitions) or a usage error.

Examples:
  toolspec convert tools.json --to gemini
  toolspec convert tools.el --to mcp -o tools-mcp.json
  toolspec convert weather.json --to elisp --category weather >> my-tools.el
  toolspec check ~/tools/*.json ~/.emacs.d/my-tools.el
  toolspec check --format json tools.el | jq '.problems[]'
  curl -s https://example.invalid/tools | toolspec detect -";

#[derive(Parser)]
#[command(name = "toolspec", version, about = ABOUT, after_help = AFTER_HELP)]
struct Cli {
    /// Largest input accepted, in bytes; larger files are refused (exit status 2)
    #[arg(long, global = true, value_name = "BYTES", default_value_t = ReadOptions::default().max_size)]
    max_input_size: usize,
    /// Largest output of one import: its tools' schemas (every `$ref` written out), in bytes of memory
    #[arg(long, global = true, value_name = "BYTES", default_value_t = toolspec::budget::DEFAULT_MAX_IMPORT_SIZE)]
    max_import_size: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Convert tool definitions into a JSON dialect, or into (gptel-make-tool ...) forms
    #[command(after_help = convert_help())]
    Convert(ConvertArgs),
    /// Check tool definitions: JSON spec files and Emacs Lisp source files
    #[command(after_help = "Each problem is printed as FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE, PATH \
the place in the tool (args[1].type); Emacs's compilation-mode and next-error follow these lines.  \
SEVERITY is error, warning, or note: a note says what could not be checked because it is computed \
when the code runs.\n\nExit status: 0 when there are no errors (warnings and notes do not count \
unless --strict makes warnings count), 1 when there are, 2 when a FILE cannot be read as a whole \
(missing, not UTF-8, invalid JSON, unreadable Lisp, no tool definitions in any known format).")]
    Check(CheckArgs),
    /// Print which format each FILE is in: mcp, openai, ..., elisp, or mixed (A, B)
    Detect(DetectArgs),
    /// Render a Jinja template (an OpenAPI x-filter, x-output-modules or x-bootstrap-value) over JSON data
    #[command(after_help = RENDER_HELP)]
    Render(RenderArgs),
    /// Serve the tools Emacs exposes (toolspec-mcp-server-mode) to an MCP client, on stdio or HTTP
    #[command(after_help = serve::SERVE_HELP)]
    Serve(serve::ServeArgs),
}

const RENDER_HELP: &str = "\
The data's keys are the template's variables, and the whole data is also `response' and `data'
(unless it has keys of those names), as when Emacs renders an OpenAPI tool's response.  The
template runs as it does there: sandboxed (no include, import or extends, no environment), within
fixed bounds (fuel 2,000,000, 1 MB of output, recursion 200, 256 KB of source, 1,000 operators in
one tag), and in a process limited to --max-memory MiB (beyond the stack of its rendering thread)
and --max-cpu-seconds of CPU time.

Exit status: 0 rendered (the text is on standard output, as is); 1 the template failed: it does
not parse, fails while rendering, or goes beyond a bound; 2 unusable input: a file that cannot be
read, data that is not JSON, or a usage error.

With --request (how Emacs renders), standard input is one JSON object {\"template\": TEXT,
\"data\": JSON-TEXT}; the output is preceded by a line giving its length in bytes, and an error
is one JSON line on standard error: {\"error\": SYMBOL, \"message\": TEXT}, SYMBOL the Lisp
error toolspec signals (toolspec-template-error, toolspec-template-limit-error,
toolspec-json-error), with the \"line\" and \"column\" of invalid JSON data.

Examples:
  toolspec render filter.j2 response.json
  curl -s https://example.invalid/api/items | toolspec render filter.j2";

fn format_names() -> Vec<&'static str> {
    FORMAT_NAMES.iter().map(|(n, _)| *n).chain(["elisp"]).collect()
}

fn dialect_names() -> Vec<&'static str> {
    DIALECT_NAMES.iter().map(|(n, _)| *n).chain(["elisp"]).collect()
}

/// The help of `convert`, its list of dialects made from the registry.
fn convert_help() -> String {
    format!(
        "DIALECT is one of:\n{}  elisp{}  (gptel-make-tool ...) forms\n\n\
The tools of every FILE go into one document, in the shape the dialect's clients load.  A tool \
name the dialect refuses (OpenAI, Anthropic and Bedrock take ^[a-zA-Z0-9_-]{{1,64}}$) is written \
as a valid one, different from the other tools' (math.sum becomes math_sum), with a warning \
naming both; keywords a dialect refuses are rewritten or moved into the description, with a \
warning.  With --to elisp, each tool becomes a (gptel-make-tool ...) form with a placeholder \
:function to define, as M-x toolspec-insert-gptel-form writes it.\n\nIn Emacs Lisp input only \
literal data is read: a tool whose name, description or arguments are computed when the code runs \
is skipped with a warning (exit status 1).",
        toolspec::formats::summary(),
        " ".repeat(toolspec::formats::REGISTRY.iter().map(|p| p.name.len()).max().unwrap_or(5).saturating_sub(5)),
    )
}

#[derive(Args)]
struct ConvertArgs {
    /// Files to read; `-' is standard input
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// What to write: a JSON dialect, or `elisp' for (gptel-make-tool ...) forms
    #[arg(long, short, value_name = "DIALECT", value_parser = PossibleValuesParser::new(dialect_names()))]
    to: String,
    /// Format of the input
    #[arg(long, short, value_name = "FORMAT", default_value = "auto", value_parser = PossibleValuesParser::new(format_names()))]
    from: String,
    /// Write to FILE instead of standard output
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// JSON on one line instead of indented
    #[arg(long)]
    compact: bool,
    /// With --to elisp: name of each tool's placeholder :function, %s standing for the tool's name
    /// with hyphens for underscores
    #[arg(long, value_name = "FORMAT", default_value = "my-%s-function")]
    function: String,
    /// With --to elisp: the gptel :category of the tools
    #[arg(long, value_name = "NAME")]
    category: Option<String>,
    /// Do not report what reading changed to make the input fit
    #[arg(long, short)]
    quiet: bool,
    /// Write the output even when the tools have errors (the exit status is still 1)
    #[arg(long)]
    force: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE lines
    Text,
    /// one JSON document
    Json,
}

#[derive(Args)]
struct CheckArgs {
    /// Files to check: JSON tool specs or Emacs Lisp source; `-' is standard input
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// How to print the problems
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// Format of the input
    #[arg(long, short, value_name = "FORMAT", default_value = "auto", value_parser = PossibleValuesParser::new(format_names()))]
    from: String,
    /// Warnings count as problems for the exit status
    #[arg(long)]
    strict: bool,
    /// Leave out notes (what could not be checked without running the code)
    #[arg(long)]
    no_notes: bool,
    /// Show progress on stderr (by default only from 20 files, when stderr is a terminal)
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Never show progress
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args)]
struct RenderArgs {
    /// The template; `-' is standard input
    #[arg(value_name = "TEMPLATE-FILE", required_unless_present = "request")]
    template: Option<String>,
    /// The JSON data; standard input when absent or `-'
    #[arg(value_name = "DATA-FILE")]
    data: Option<String>,
    /// Read the template and the data as one JSON object on standard input; report errors as JSON
    #[arg(long, conflicts_with_all = ["template", "data"])]
    request: bool,
    /// Most memory the rendering process may use, in MiB, beyond its rendering thread's stack (0: no limit)
    #[arg(long, value_name = "MIB", default_value_t = 512)]
    max_memory: u64,
    /// Most CPU time the rendering process may use, in seconds (0: no limit)
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    max_cpu_seconds: u64,
    /// The limits are set: the program started itself again under them
    #[arg(long, hide = true)]
    limited: bool,
}

#[derive(Args)]
struct DetectArgs {
    /// Files to look at; `-' is standard input
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
}

/// How a run ends: the worst of its files.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Status {
    Clean = 0,
    Problems = 1,
    Unusable = 2,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _ = MAX_INPUT.set(cli.max_input_size);
    toolspec::budget::set_default_limit(cli.max_import_size);
    let status = match cli.command {
        Command::Convert(a) => convert(a),
        Command::Check(a) => check_files(a),
        Command::Detect(a) => detect(a),
        Command::Render(a) => render(a),
        Command::Serve(a) => return ExitCode::from(serve::serve(a)),
    };
    ExitCode::from(status as u8)
}

/// The text of FILE, or of standard input for `-`.
fn read_input(file: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    let max = max_input();
    let limit = (max as u64).saturating_add(1);
    if file == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    } else {
        let f = std::fs::File::open(file).map_err(|e| e.to_string())?;
        f.take(limit).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    }
    if bytes.len() > max {
        return Err(format!("larger than the limit of {max} bytes (raise it with --max-input-size BYTES)"));
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let (l, c) = toolspec::error::line_column(e.as_bytes(), at);
        format!("not UTF-8 text (invalid byte at line {l}, column {c}): re-save it as UTF-8")
    })
}

/// How FILE is named in messages.
fn label(file: &str) -> &str {
    if file == "-" {
        "<stdin>"
    } else {
        file
    }
}

/// The kind of input: forced by --from, else by name and content.
fn input_kind(from: &str, file: &str, text: &str) -> Input {
    match from {
        "elisp" => Input::Elisp,
        "auto" => check::sniff(Some(file), text),
        _ => Input::Json,
    }
}

fn read_options<'a>(from: &str, file: &'a str) -> ReadOptions<'a> {
    let format = match from {
        "auto" | "elisp" => Format::Auto,
        f => Format::parse(f).unwrap_or(Format::Auto),
    };
    let default_name = (file != "-").then(|| Path::new(file).file_stem().and_then(|s| s.to_str())).flatten();
    ReadOptions { format, default_name, max_size: max_input(), ..ReadOptions::default() }
}

/// FILE as named in a line of text: on one line (see [`check::one_line`]).
fn shown(file: &str) -> std::borrow::Cow<'_, str> {
    one_line(label(file))
}

fn line(file: &str, d: &Diagnostic) -> String {
    if d.path.is_empty() {
        format!("{}:{}:{}: {}: {}", shown(file), d.line, d.column, d.level.as_str(), one_line(&d.message))
    } else {
        format!(
            "{}:{}:{}: {}: {}: {}",
            shown(file),
            d.line,
            d.column,
            d.level.as_str(),
            one_line(&d.path),
            one_line(&d.message)
        )
    }
}

// ------------------------------------------------------------------ check

struct Progress {
    total: usize,
    on: bool,
}

impl Progress {
    fn new(total: usize, args: &CheckArgs) -> Progress {
        let on = !args.no_progress && (args.progress || (total >= PROGRESS_FROM && std::io::stderr().is_terminal()));
        Progress { total, on }
    }

    fn step(&self, i: usize) {
        if self.on {
            eprint!("\rtoolspec: checked {i}/{} files", self.total);
            let _ = std::io::stderr().flush();
        }
    }

    fn done(&self) {
        if self.on {
            eprintln!();
        }
    }
}

fn check_one(file: &str, from: &str) -> Result<Checked, String> {
    let text = read_input(file)?;
    Ok(match input_kind(from, file, &text) {
        Input::Elisp => check::check_elisp(&text),
        Input::Json => check::check_json(&text, &read_options(from, file)),
    })
}

fn check_files(args: CheckArgs) -> Status {
    let progress = Progress::new(args.files.len(), &args);
    let mut worst = Status::Clean;
    let mut problems: Vec<Value> = Vec::new();
    let mut files: Vec<Value> = Vec::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut errors, mut warnings, mut notes) = (0, 0, 0);
    for (i, file) in args.files.iter().enumerate() {
        let (status, counts) = match check_one(file, &args.from) {
            Err(e) => {
                if args.format == OutputFormat::Text {
                    let _ = out.flush();
                    eprintln!("toolspec: {}: cannot read: {}", shown(file), one_line(&e));
                }
                files.push(json!({"file": label(file), "status": Status::Unusable as u8, "error": format!("cannot read: {e}")}));
                (Status::Unusable, (0, 0, 0))
            }
            Ok(c) => {
                let counts = (c.count(Level::Error), c.count(Level::Warning), c.count(Level::Note));
                let status = if c.unusable {
                    Status::Unusable
                } else if counts.0 > 0 || (args.strict && counts.1 > 0) {
                    Status::Problems
                } else {
                    Status::Clean
                };
                for d in c.diagnostics.iter().filter(|d| !(args.no_notes && d.level == Level::Note)) {
                    match args.format {
                        OutputFormat::Text => {
                            let _ = writeln!(out, "{}", line(file, d));
                        }
                        OutputFormat::Json => problems.push(json!({
                            "file": label(file),
                            "line": d.line,
                            "column": d.column,
                            "severity": d.level.as_str(),
                            "path": d.path,
                            "message": d.message,
                            "tool": d.tool,
                        })),
                    }
                }
                files.push(json!({
                    "file": label(file),
                    "status": status as u8,
                    "errors": counts.0,
                    "warnings": counts.1,
                    "notes": counts.2,
                }));
                (status, counts)
            }
        };
        errors += counts.0;
        warnings += counts.1;
        notes += counts.2;
        worst = worst.max(status);
        progress.step(i + 1);
    }
    progress.done();
    if args.format == OutputFormat::Json {
        let doc = json!({
            "status": worst as u8,
            "errors": errors,
            "warnings": warnings,
            "notes": notes,
            "files": files,
            "problems": problems,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    }
    let _ = out.flush();
    if args.format == OutputFormat::Text && (progress.on || args.files.len() > 1) && std::io::stderr().is_terminal() {
        eprintln!(
            "toolspec: {} files: {errors} error{}, {warnings} warning{}, {notes} note{}",
            args.files.len(),
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" },
            if notes == 1 { "" } else { "s" },
        );
    }
    worst
}

// ---------------------------------------------------------------- convert

fn report_error(file: &str, text: &str, e: &Error) {
    let (l, c) = match (e.line, e.column, &e.path) {
        (Some(l), Some(c), _) => (l, c),
        (_, _, Some(p)) if text.trim_start().starts_with(['{', '[']) => toolspec::locate::locate(text, p),
        _ => (1, 1),
    };
    eprintln!("{}:{l}:{c}: error: {}", shown(file), one_line(&check::error_message(e)));
}

fn error_text(e: &Error) -> String {
    match &e.path {
        Some(p) => format!("{p}: {}", e.message),
        None => e.message.clone(),
    }
}

/// A tool to write, with what Emacs Lisp input gave besides: the source
/// text of its function, and its keys for Emacs (`:async`...).
struct Converted {
    tool: Tool,
    function: Option<String>,
    emacs: Vec<(String, lexpr::Value)>,
}

/// The tools of one file, warnings printed; Err with the status when the
/// file is unusable.
fn tools_of(file: &str, args: &ConvertArgs, status: &mut Status, errors: &mut usize) -> Result<Vec<Converted>, Status> {
    let text = read_input(file).map_err(|e| {
        eprintln!("toolspec: {}: cannot read: {}", shown(file), one_line(&e));
        Status::Unusable
    })?;
    let kind = input_kind(&args.from, file, &text);
    // The errors `check' finds: the output would carry them (or leave
    // out what they are about), so they are reported and stop the writing.
    let checked = match kind {
        Input::Elisp => check::check_elisp(&text),
        Input::Json => check::check_json(&text, &read_options(&args.from, file)),
    };
    if !checked.unusable {
        for d in checked.diagnostics.iter().filter(|d| d.level == Level::Error) {
            eprintln!("{}", line(file, d));
            *errors += 1;
        }
    }
    match kind {
        Input::Elisp => {
            let found = check::elisp_tools(&text).map_err(|e| {
                report_error(file, &text, &e);
                Status::Unusable
            })?;
            let mut tools = Vec::new();
            for (l, c, t) in found {
                match t.tool {
                    Ok(tool) => tools.push(Converted {
                        tool,
                        function: t.function.as_ref().and_then(|f| check::function_text(&text, f)),
                        emacs: t.emacs,
                    }),
                    Err(why) => {
                        let name = t.name.map(|n| format!(" \"{}\"", one_line(&n))).unwrap_or_default();
                        eprintln!("{}:{l}:{c}: warning: tool{name} skipped: {}", shown(file), one_line(&why));
                        *status = (*status).max(Status::Problems);
                    }
                }
            }
            Ok(tools)
        }
        Input::Json => {
            let imp = toolspec::parse_json(&text, &read_options(&args.from, file)).map_err(|e| {
                report_error(file, &text, &e);
                Status::Unusable
            })?;
            if !args.quiet {
                let paths: Vec<&str> = imp.warnings.iter().map(|w| w.path.as_str()).collect();
                for (w, (l, c)) in imp.warnings.iter().zip(toolspec::locate::locate_many(&text, &paths)) {
                    eprintln!(
                        "{}:{l}:{c}: {}: {}: {}",
                        shown(file),
                        w.severity.as_str(),
                        one_line(&w.path),
                        one_line(&w.message)
                    );
                }
            }
            Ok(imp.tools.into_iter().map(|tool| Converted { tool, function: None, emacs: Vec::new() }).collect())
        }
    }
}

/// The placeholder function of `tool` for --to elisp.
fn placeholder(format: &str, tool: &Tool) -> String {
    let name = tool.name.replace('_', "-");
    let mut f = String::from("#'");
    plist::print_symbol(&format.replace("%s", &name), &mut f);
    f
}

fn to_elisp(tools: &[Converted], args: &ConvertArgs) -> Result<String, Error> {
    let mut out = String::new();
    for (i, Converted { tool, function, emacs }) in tools.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut printed = String::new();
        plist::print_tool(tool, &mut printed);
        let mut sexp = plist::parse_sexp(&printed)?;
        if !emacs.is_empty() {
            let mut items = sexp.to_vec().unwrap_or_default();
            for (k, v) in emacs {
                items.push(lexpr::Value::keyword(k.as_str()));
                items.push(v.clone());
            }
            plist::dispose(sexp);
            sexp = lexpr::Value::list(items);
        }
        let define = function.is_none();
        let function = function.clone().unwrap_or_else(|| placeholder(&args.function, tool));
        let opts = FormOptions { function: &function, category: args.category.as_deref(), comments: true, define };
        let text = gptel_form(&sexp, &opts);
        plist::dispose(sexp);
        out.push_str(&text?);
    }
    Ok(out)
}

fn convert(args: ConvertArgs) -> Status {
    let mut status = Status::Clean;
    let mut tools = Vec::new();
    let mut errors = 0;
    for file in &args.files {
        match tools_of(file, &args, &mut status, &mut errors) {
            Ok(t) => tools.extend(t),
            Err(s) => status = status.max(s),
        }
    }
    if status == Status::Unusable {
        eprintln!("toolspec: nothing written");
        return status;
    }
    if errors > 0 {
        status = status.max(Status::Problems);
        if !args.force {
            eprintln!(
                "toolspec: {errors} error{}: nothing written (fix them, or write anyway with --force)",
                if errors == 1 { "" } else { "s" }
            );
            return status;
        }
    }
    if tools.is_empty() {
        eprintln!("toolspec: no tool definitions found: nothing written");
        return Status::Unusable;
    }
    let text = if args.to == "elisp" {
        to_elisp(&tools, &args)
    } else {
        let tools: Vec<Tool> = tools.into_iter().map(|c| c.tool).collect();
        Dialect::parse(&args.to).and_then(|d| write::write_tools_warn(&tools, d)).map(|(v, warnings)| {
            if !args.quiet {
                for w in &warnings {
                    eprintln!("toolspec: {}: {}: {}: {}", args.to, w.path, w.severity.as_str(), w.message);
                }
            }
            write::to_text(&v, !args.compact) + "\n"
        })
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => {
            eprintln!("toolspec: cannot write {}: {}", args.to, one_line(&error_text(&e)));
            return Status::Unusable;
        }
    };
    let written = match &args.output {
        Some(path) => std::fs::write(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| e.to_string())
        }
    };
    if let Err(e) = written {
        eprintln!("toolspec: cannot write the output: {}", one_line(&e));
        return Status::Unusable;
    }
    status
}

// ----------------------------------------------------------------- detect

fn detect(args: DetectArgs) -> Status {
    let mut status = Status::Clean;
    let several = args.files.len() > 1;
    for file in &args.files {
        let prefix = if several { format!("{}: ", shown(file)) } else { String::new() };
        let result = read_input(file).and_then(|text| {
            check::detect(Some(file), &text).map_err(|e| match e.kind {
                ErrorKind::Json => format!("not JSON: {e}"),
                _ => format!("no tool definitions recognised: {}", error_text(&e)),
            })
        });
        match result {
            Ok(d) => println!("{prefix}{}", d.describe()),
            Err(e) => {
                eprintln!("toolspec: {}: {}", shown(file), one_line(&e));
                if several {
                    println!("{prefix}unknown");
                }
                status = Status::Unusable;
            }
        }
    }
    status
}

// ----------------------------------------------------------------- render

/// How `render` reports a failure: as a line for people, or (--request)
/// as one JSON line for Emacs.
struct Reporter {
    request: bool,
    /// How the template is named in messages for people.
    label: String,
}

impl Reporter {
    /// The line reporting `message`, signalled in Lisp as `symbol`.
    fn line(&self, symbol: &str, message: &str) -> String {
        self.error_line(&json!({"error": symbol, "message": message}))
    }

    /// The line reporting `report`, an object {"error", "message", ...}.
    fn error_line(&self, report: &Value) -> String {
        if self.request {
            report.to_string() + "\n"
        } else {
            format!(
                "toolspec: {}: {}\n",
                one_line(&self.label),
                one_line(report["message"].as_str().unwrap_or_default())
            )
        }
    }

    fn write(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
    }

    fn report(&self, symbol: &str, message: &str) {
        self.write(&self.line(symbol, message));
    }

    /// Report `e`, with its place: `path`, `line` and `column` in JSON.
    fn report_error(&self, e: &Error) {
        let mut report = json!({"error": e.kind.symbol(), "message": e.to_string()});
        if let Some(p) = &e.path {
            report["path"] = json!(p);
        }
        if let (Some(l), Some(c)) = (e.line, e.column) {
            report["line"] = json!(l);
            report["column"] = json!(c);
        }
        self.write(&self.error_line(&report));
    }
}

/// What to write when the process reaches its CPU time or memory limit:
/// formatted before rendering starts, since nothing may be allocated
/// then.
#[cfg(unix)]
static CPU_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
#[cfg(unix)]
static MEMORY_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// Write `message` to standard error and end the process with status 1,
/// calling only what is safe in a signal handler.
#[cfg(unix)]
fn die_with(message: &std::sync::OnceLock<Vec<u8>>) -> ! {
    if let Some(m) = message.get() {
        // SAFETY: writes a buffer that lives as long as the process.
        unsafe { libc::write(2, m.as_ptr().cast(), m.len()) };
    }
    // SAFETY: ends the process at once, running nothing else.
    unsafe { libc::_exit(Status::Problems as i32) }
}

#[cfg(unix)]
extern "C" fn on_cpu_limit(_: libc::c_int) {
    die_with(&CPU_MESSAGE)
}

#[cfg(unix)]
fn on_memory_limit(_: std::alloc::Layout) {
    die_with(&MEMORY_MESSAGE)
}

/// The type of a resource for `setrlimit`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
type Resource = libc::c_int;

/// Set `resource` to `soft` (and `hard`), within the hard limit already
/// set.
#[cfg(unix)]
fn set_limit(resource: Resource, soft: u64, hard: u64) -> Result<(), String> {
    let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `now` is a valid rlimit to fill.
    if unsafe { libc::getrlimit(resource, &mut now) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let max = now.rlim_max;
    let limit = libc::rlimit { rlim_cur: soft.min(max), rlim_max: hard.min(max) };
    // SAFETY: `limit` is a valid rlimit.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// Limit this process to `args.max_cpu_seconds` of CPU time and
/// `args.max_memory` MiB of memory beyond the `stack` of the rendering
/// thread, then start the program again in it (`exec`, with
/// `--limited`), so that the memory limit holds from its first
/// allocation.  Returns only on failure.
///
/// The memory limit is RLIMIT_DATA: the memory mapped for writing (the
/// heap, thread stacks), whether touched yet or not.  RLIMIT_AS would
/// count the program's code and libraries too, and reservations that
/// are not writable.  mimalloc reserves arenas for writing (1 GiB on its
/// first allocation, before `main`, then at least 64 MiB at a time),
/// each counted whole: with a limit set after its first arena, the
/// rendering thread's stack would not fit; with arenas, a few MiB used
/// would use up the limit.  So the program starts again with the limit
/// set and without arenas (`MIMALLOC_ARENA_RESERVE=0`): mimalloc then
/// maps each page it needs, and unmaps it when freed.
#[cfg(unix)]
fn restart_limited(args: &RenderArgs, stack: usize) -> String {
    use std::os::unix::process::CommandExt;
    let limit = || -> Result<(), String> {
        if args.max_cpu_seconds > 0 {
            // SIGXCPU at the limit (reported by `on_cpu_limit`), SIGKILL a second later.
            set_limit(libc::RLIMIT_CPU, args.max_cpu_seconds, args.max_cpu_seconds.saturating_add(1))?;
        }
        if args.max_memory > 0 {
            let bytes = args.max_memory.saturating_mul(1 << 20).saturating_add(stack as u64);
            set_limit(libc::RLIMIT_DATA, bytes, bytes)?;
        }
        Ok(())
    };
    if let Err(e) = limit() {
        return format!("cannot limit the rendering process: {e}");
    }
    // /proc/self/exe is this program even if its file was replaced since.
    let program = if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        match std::env::current_exe() {
            Ok(p) => p,
            Err(e) => return format!("cannot find the toolspec program to restart it under its limits: {e}"),
        }
    };
    // The same arguments, `--limited` right after the subcommand (before
    // any `--`).
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let at = argv.iter().position(|a| a == "render").map_or(argv.len(), |i| i + 1);
    argv.insert(at, "--limited".into());
    let e =
        std::process::Command::new(program).arg0(&argv[0]).args(&argv[1..]).env("MIMALLOC_ARENA_RESERVE", "0").exec();
    format!("cannot restart the toolspec program under its limits: {e}")
}

/// In the process [`restart_limited`] started: report reaching the CPU
/// time or memory limit through `reporter`, instead of being killed.
#[cfg(unix)]
fn report_limits(args: &RenderArgs, reporter: &Reporter) -> Result<(), String> {
    if args.max_cpu_seconds > 0 {
        let seconds = args.max_cpu_seconds;
        let message = format!(
            "the template needed more than {seconds} second{} of CPU time",
            if seconds == 1 { "" } else { "s" }
        );
        let _ = CPU_MESSAGE.set(reporter.line(ErrorKind::TemplateLimit.symbol(), &message).into_bytes());
        let handler = on_cpu_limit as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only writes a prepared buffer and exits.
        if unsafe { libc::signal(libc::SIGXCPU, handler) } == libc::SIG_ERR {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    if args.max_memory > 0 {
        let message = format!("the template needed more than {} MiB of memory", args.max_memory);
        let _ = MEMORY_MESSAGE.set(reporter.line(ErrorKind::TemplateLimit.symbol(), &message).into_bytes());
        toolspec::alloc::on_failure(on_memory_limit);
    }
    Ok(())
}

/// A request from Emacs: the template, and the data as JSON text.
#[derive(serde::Deserialize)]
struct Request {
    template: String,
    data: String,
    /// The version of the elisp package sending it, which must be ours.
    version: Option<String>,
}

/// The template and the data text `args` name, or the failure to report
/// (its Lisp error symbol and message).
fn render_input(args: &RenderArgs) -> Result<(String, String), (&'static str, String)> {
    let unreadable =
        |file: &str, e: String| (ErrorKind::Template.symbol(), format!("{}: cannot read: {e}", label(file)));
    if args.request {
        let text = read_input("-").map_err(|e| unreadable("-", e))?;
        let req: Request = serde_json::from_str(&text).map_err(|e| {
            ("toolspec-json-error", format!("the render request is not a JSON object {{\"template\", \"data\"}}: {e}"))
        })?;
        if let Some(v) = req.version.filter(|v| v != toolspec::VERSION) {
            return Err((
                "toolspec-program-error",
                format!(
                    "the toolspec program is version {} but toolspec.el is {v}: rebuild it (M-x toolspec-build-module, or make)",
                    toolspec::VERSION
                ),
            ));
        }
        return Ok((req.template, req.data));
    }
    let template = args.template.as_deref().unwrap_or("-");
    let data = args.data.as_deref().unwrap_or("-");
    if template == "-" && data == "-" {
        return Err((
            ErrorKind::Template.symbol(),
            "the template and the data cannot both be standard input: name a DATA-FILE".into(),
        ));
    }
    let t = read_input(template).map_err(|e| unreadable(template, e))?;
    let d = read_input(data).map_err(|e| unreadable(data, e))?;
    Ok((t, d))
}

fn render(args: RenderArgs) -> Status {
    let reporter =
        Reporter { request: args.request, label: label(args.template.as_deref().unwrap_or("-")).to_string() };
    let limits = toolspec::template::Limits::default();
    #[cfg(unix)]
    if args.max_cpu_seconds > 0 || args.max_memory > 0 {
        let failed = if args.limited {
            report_limits(&args, &reporter).err()
        } else {
            Some(restart_limited(&args, toolspec::template::stack_size(&limits)))
        };
        if let Some(e) = failed {
            reporter.report(ErrorKind::Template.symbol(), &e);
            return Status::Unusable;
        }
    }
    let (template, data) = match render_input(&args) {
        Ok(input) => input,
        Err((symbol, message)) => {
            reporter.report(symbol, &message);
            return Status::Unusable;
        }
    };
    match toolspec::template::render(&template, &data, &limits) {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            // For Emacs, the length first: it tells when all is read.
            let length = if args.request { format!("{}\n", text.len()) } else { String::new() };
            match out
                .write_all(length.as_bytes())
                .and_then(|_| out.write_all(text.as_bytes()))
                .and_then(|_| out.flush())
            {
                Ok(()) => Status::Clean,
                Err(e) => {
                    reporter.report(ErrorKind::Template.symbol(), &format!("cannot write the output: {e}"));
                    Status::Unusable
                }
            }
        }
        Err(e) => {
            reporter.report_error(&e);
            if e.kind == ErrorKind::Json {
                Status::Unusable
            } else {
                Status::Problems
            }
        }
    }
}
