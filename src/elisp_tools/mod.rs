//! Tool definitions in Emacs Lisp source: `(gptel-make-tool ...)`,
//! `(llm-make-tool ...)` and the shapes people build on them, read
//! without evaluating anything and checked by [`crate::validate`], each
//! problem at the line and column of the form it is about.
//!
//! Only literal data is read: strings, numbers, keywords, quoted and
//! backquoted forms, vectors, and lists built with `list`, `vector`,
//! `cons` and `append`.  Variables defined in the file (`defvar`,
//! `defconst`, `defcustom`, `setq`, `push`, `add-to-list`) and the
//! variables of `let`, `dolist`, `mapcar`/`mapc` lambdas and `cl-loop ...
//! in` are followed, so that
//!
//! ```elisp
//! (defvar my-tool-specs (list '(:name "a" ...) '(:name "b" ...)))
//! (dolist (spec my-tool-specs) (apply #'gptel-make-tool spec))
//! ```
//!
//! checks both specs.  Anything else (a call to another function, a
//! function's argument, a variable set elsewhere) is known only when the
//! code runs: it is reported as "not checked" instead of being guessed.
//! `#.` read syntax, which Emacs evaluates while reading, is reported and
//! never evaluated.

use std::collections::HashSet;

use lexpr::Value as Sexp;

use crate::elisp_source::Form;
use crate::model::{Severity, Tool};
use crate::path::Path;

/// How serious a finding is: notes say what could not be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

impl From<Severity> for Level {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
        }
    }
}

/// A problem at byte offset `at` of the source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    pub level: Level,
    pub at: usize,
    /// Path in the tool plist, as the validator names it (`args[1].type`);
    /// the root for the tool itself or for what belongs to no tool.
    pub path: Path,
    pub message: String,
    /// Name of the tool, when it is known.
    pub tool: Option<String>,
}

/// A tool definition found in the source.
#[derive(Debug, Clone)]
pub struct SourceTool {
    /// Byte offset of the call that makes it.
    pub at: usize,
    /// `gptel-make-tool` or `llm-make-tool`.
    pub maker: &'static str,
    pub name: Option<String>,
    /// The tool, or why it cannot be read without running the code.
    pub tool: std::result::Result<Tool, String>,
    /// Its `:function`, when it is a named function or a lambda written
    /// in the source.
    pub function: Option<FunctionSource>,
    /// The keys for Emacs the tool model leaves out (`:async`,
    /// `:confirm`, `:include`, `:category`), when their values are literal.
    pub emacs: Vec<(String, Sexp)>,
}

/// A tool's function as the source gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionSource {
    Named(String),
    /// A lambda: byte offsets of its form.
    Lambda(usize, usize),
}

/// What [`analyze`] found.
#[derive(Debug, Default)]
pub struct Analysis {
    pub findings: Vec<Finding>,
    pub tools: Vec<SourceTool>,
}

/// Find, read and check the tool definitions among `forms`.
pub fn analyze(forms: &[Form]) -> Analysis {
    let mut a = Analyzer::default();
    for f in forms {
        a.collect(f, 0);
    }
    for f in forms {
        let mut scope = Vec::new();
        a.walk(f, &mut scope, 0);
    }
    let mut out = Analysis { findings: Vec::new(), tools: Vec::new() };
    let found = std::mem::take(&mut a.found);
    for t in &found {
        a.check(t, &mut out);
    }
    out.findings.extend(a.findings);
    let mut seen = HashSet::new();
    out.findings.retain(|f| seen.insert((f.at, f.level, f.path.clone(), f.message.clone())));
    out.findings.sort_by_key(|x| (x.at, x.level));
    out
}

mod checking;
mod convert;
mod eval;
mod place;
mod value;
mod walk;

use convert::*;
use eval::*;
use place::*;
use value::*;

pub use eval::MAX_COPIED;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elisp_source::Source;

    type Listed = Vec<(String, (usize, usize), String, String)>;

    fn lint(text: &str) -> (Listed, Analysis) {
        let src = Source::read(text);
        assert!(src.error.is_none(), "{:?}", src.error);
        let a = analyze(&src.forms);
        let list = a
            .findings
            .iter()
            .map(|f| (f.level.as_str().to_string(), src.line_column(f.at), f.path.to_string(), f.message.clone()))
            .collect();
        (list, a)
    }

    #[test]
    fn direct_call_with_the_usual_mistakes() {
        let text = r#"(gptel-make-tool
 :name "get_weather"
 :function (lambda (location unit) (list location unit))
 :description "Get the weather"
 :args (list '(:name "location" :type 'string :description "City")
             '(:name "unit" :type "string" :enum ("c" "f") :description "Unit")))
"#;
        let (found, a) = lint(text);
        let short: Vec<_> = found.iter().map(|(l, pos, p, _)| (l.as_str(), *pos, p.as_str())).collect();
        assert_eq!(
            short,
            [
                ("error", (5, 39), "args[0].type"),
                ("error", (6, 35), "args[1].type"),
                ("error", (6, 50), "args[1].enum"),
            ],
            "{found:#?}"
        );
        assert!(found[0].3.contains("'string inside an already quoted list"), "{}", found[0].3);
        assert_eq!(a.tools.len(), 1);
        let tool = a.tools[0].tool.as_ref().unwrap();
        assert_eq!(tool.name, "get_weather");
        assert_eq!(tool.args.len(), 2);
    }

    #[test]
    fn lambda_arity_is_checked() {
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :function (lambda (a) a)\n :args (list '(:name \"a\" :type string :description \"a\") '(:name \"b\" :type string :description \"b\")))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].2, "function");
        assert!(found[0].3.contains("takes 1"));
    }

    #[test]
    fn specs_in_a_variable_applied_in_a_loop() {
        let text = r#"(defvar my-tools
  (list '(:name "one" :description "One" :args ((:name "q" :type strin :description "Q")))
        (list :name "two" :description "Two" :args (list (list :name "n" :type 'integer :description "N")))))
(dolist (spec my-tools)
  (apply #'gptel-make-tool :function #'ignore spec))
"#;
        let (found, a) = lint(text);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].1, (2, 66));
        assert_eq!(found[0].2, "args[0].type");
        let names: Vec<_> = a.tools.iter().map(|t| t.name.clone().unwrap()).collect();
        assert_eq!(names, ["one", "two"]);
        assert_eq!(a.tools[1].tool.as_ref().unwrap().args[0].schema["type"], "integer");
    }

    #[test]
    fn run_time_values_are_not_checked() {
        let text = r#"(defun my-register (name doc)
  (gptel-make-tool :name name :description (format "Do %s" doc) :function #'ignore
                   :args (list '(:name "x" :type string :description "X"))))
(mapc (lambda (s) (apply #'gptel-make-tool s)) (my-specs))
"#;
        let (found, a) = lint(text);
        let notes: Vec<_> = found.iter().filter(|f| f.0 == "note").map(|f| (f.1, f.2.as_str())).collect();
        assert_eq!(notes, [((2, 26), "name"), ((2, 44), "description"), ((4, 44), "")], "{found:#?}");
        assert!(found.iter().all(|f| f.0 == "note"), "{found:#?}");
        assert!(a.tools.iter().all(|t| t.tool.is_err()));
    }

    #[test]
    fn keyword_with_a_stray_colon() {
        // From the documentation of gptel-make-tool's argument format.
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :args (list '(:name \"c\" :type object :description \"C\"\n :properties (:name (:type string :description: \"Human-readable\")))))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].1, found[0].2.as_str()), ((2, 35), "args[0].properties.name.description:"));
        assert!(found[0].3.contains("write :description"), "{}", found[0].3);
    }

    #[test]
    fn unquoted_plist_in_a_spec_list_and_macros_left_alone() {
        let (found, _) = lint(
            "(defvar specs (list (:name \"a\" :description \"A\")))\n(dolist (s specs) (apply #'gptel-make-tool s))\n\
             (define-overloadable-function f () (let ((x (:override (foo)))) x))",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].1, (1, 21));
        assert!(found[0].3.contains("quote the plist"));
    }

    #[test]
    fn partly_known_specs() {
        let (found, a) = lint(
            "(apply #'gptel-make-tool :name \"x\" :description (format \"%s\" 1) (my-more-keys))\n\
             (gptel-make-tool :name \"y\" :description \"Y\" :args `((:name \"a\" :type string :description \"A\") ,@(my-args)))",
        );
        let short: Vec<_> = found.iter().map(|(l, pos, p, m)| (l.as_str(), *pos, p.as_str(), m.as_str())).collect();
        assert_eq!(
            short,
            [
                ("note", (1, 1), "", "not checked: part of the tool spec is known only when the code runs"),
                (
                    "note",
                    (1, 49),
                    "description",
                    "not checked: the value of (format ...) is known only when the code runs"
                ),
                ("note", (2, 52), "args", "not checked: part of this list is known only when the code runs"),
            ],
            "{found:#?}"
        );
        assert!(a.tools.iter().all(|t| t.tool.is_err()));
    }

    #[test]
    fn read_eval_is_reported_not_run() {
        let (found, _) = lint("(gptel-make-tool :name #.(shell-command-to-string \"id\") :description \"d\")");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].0, "warning");
        assert!(found[0].3.contains("never evaluates"));
    }

    #[test]
    fn unquoted_plist_and_function_in_quoted_list() {
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :description \"d\" :args (list (:name \"a\" :type string :description \"a\")))\n\
             (defvar s '(:name \"y\" :description \"d\" :function #'foo))\n(apply #'gptel-make-tool s)",
        );
        let msgs: Vec<_> = found.iter().map(|f| (f.1, f.3.split(':').next().unwrap_or_default().to_string())).collect();
        assert_eq!(msgs.len(), 2, "{found:#?}");
        assert_eq!(found[0].1, (1, 57));
        assert!(found[0].3.contains("quote the plist"));
        assert_eq!(found[1].1, (2, 50));
        assert!(found[1].3.contains("(function foo)"));
    }

    #[test]
    fn problems_about_a_key_are_at_the_key_and_a_repeat_at_the_second() {
        let (found, _) = lint(
            "(gptel-make-tool :name \"x\" :colour 1 :description \"d\" :name \"y\"\n :args (list (quote (:name \"o\" :type object :description \"O\" :properties (:a (:type string) :a (:type integer))))))",
        );
        let short: Vec<_> = found.iter().map(|(l, pos, p, _)| (l.as_str(), *pos, p.as_str())).collect();
        assert_eq!(
            short,
            [("warning", (1, 28), "colour"), ("warning", (1, 55), "name"), ("error", (2, 93), "args[0].properties.a")],
            "{found:#?}"
        );
    }

    #[test]
    fn backquote_and_missing_items_and_required() {
        let text = r#"(let ((kind 'string))
  (llm-make-tool :name "t" :description "d" :function #'ignore
                 :args `((:name "tags" :type array :description "Tags")
                         (:name "o" :type object :description "O"
                          :properties (:a (:type ,kind)) :required ["a" "b"]))))
"#;
        let (found, a) = lint(text);
        let short: Vec<_> = found.iter().map(|(l, pos, p, _)| (l.as_str(), *pos, p.as_str())).collect();
        assert!(short.contains(&("error", (3, 26), "args[0].items")), "{found:#?}");
        assert!(short.contains(&("error", (5, 73), "args[1].required[1]")), "{found:#?}");
        assert_eq!(a.tools[0].maker, "llm-make-tool");
        assert!(a.tools[0].tool.is_ok());
    }
}
