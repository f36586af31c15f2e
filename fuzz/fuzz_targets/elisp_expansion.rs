//! The Emacs Lisp analyser's budget for the whole analysis: files whose
//! variables are built from copies of each other (`append`, `list`,
//! `cons`, `` `(,@a ,@b) ``, `let`, `dolist`), which grow exponentially
//! when followed.  The bytes choose the forms; the analysis must end
//! within libFuzzer's time and memory limits, and a value past the
//! budget must be reported as "not checked: too large", never built.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::check;

/// The file the bytes describe: each pair of bytes a form setting the
/// next variable from earlier ones, then a tool made of one of them.
fn source(data: &[u8]) -> String {
    let mut s = String::from("(setq v0 (list '(:name \"a\" :type string :description \"A\")))\n");
    let mut n = 1;
    for pair in data.chunks(2).take(200) {
        let (op, pick) = (pair[0], pair.get(1).copied().unwrap_or(0) as usize);
        let a = pick % n;
        let b = (pick / 7) % n;
        let p = n - 1;
        let form = match op % 9 {
            0 => format!("(setq v{n} (append v{p} v{a}))"),
            1 => format!("(setq v{n} (list v{p} v{a} v{b} v{p}))"),
            2 => format!("(setq v{n} `(,@v{p} ,@v{a} ,@v{b}))"),
            3 => format!("(setq v{n} (cons v{a} v{p}))"),
            4 => format!("(defvar v{n} (vector v{p} v{p} v{b}))"),
            5 => format!("(setq v{n} (let ((x v{p}) (y v{a})) (append x y x)))"),
            6 => format!("(push v{a} v{p}) (setq v{n} (append v{p} v{p}))"),
            7 => format!("(dolist (spec v{p}) (apply #'gptel-make-tool :name \"l{n}\" :function #'ignore spec))\n(setq v{n} v{p})"),
            _ => format!("(setq v{n} `(:name \"t{n}\" :description \"T.\" :args ,v{p}))"),
        };
        s.push_str(&form);
        s.push('\n');
        n += 1;
    }
    let last = data.last().copied().unwrap_or(0) as usize % n;
    s + &format!("(gptel-make-tool :name \"t\" :description \"T.\" :function #'ignore :args v{last})\n")
}

fuzz_target!(|data: &[u8]| {
    let text = source(data);
    let checked = check::check_elisp(&text);
    let lines = text.split('\n').count();
    for d in &checked.diagnostics {
        assert!(d.line >= 1 && d.line <= lines && d.column >= 1, "diagnostic out of the text: {d:?}");
    }
    // What was found converts, whatever its size within the budget.
    if let Ok(found) = check::elisp_tools(&text) {
        let mut parts = 0usize;
        for (_, _, t) in found {
            if let Ok(tool) = t.tool {
                let mut printed = String::new();
                toolspec::plist::print_tool(&tool, &mut printed);
                parts += printed.len();
            }
        }
        // Each copied part prints in a few dozen bytes at most.
        assert!(parts < 64 * toolspec::elisp_tools::MAX_COPIED, "{parts} bytes of tools from {} bytes", text.len());
    }
});
