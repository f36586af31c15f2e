;;; bench-report.el --- BENCHMARKS.md from the bench's figures -*- lexical-binding: t -*-

;; Copyright (C) 2026 The toolspec authors

;; This file is not part of GNU Emacs.

;; This program is free software: you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; The report `make bench' writes, apart from the measuring (bench.el),
;; so that it needs neither the module nor gptel:
;;
;;  - `toolspec-bench-report-write' formats a run's rows and notes: the
;;    targets missed first, then those met, the whole table, the notes,
;;    the baselines, and a link to bench/history.md (the figures before
;;    and after each design change, which is not copied here);
;;  - `toolspec-bench-report-rewrite' reads the table, notes, date and
;;    versions back from an existing BENCHMARKS.md and writes it again,
;;    for a change of layout without a new run:
;;
;;      emacs --batch -Q -l bench/bench-report.el \
;;            -f toolspec-bench-report-rewrite

;;; Code:

(require 'seq)
(require 'subr-x)

(defconst toolspec-bench-report-baselines
  (concat
   "- *mcp.el path*: `json-parse-string` as mcp.el's JSON-RPC layer calls it, then per tool "
   "mcp.el's destructuring and `mcp--parse-tool-args` (bench/bench.el, written step for step; "
   "its per-name lookup of each tool, which is quadratic, is left out).  toolspec's side also "
   "normalises every schema and validates every tool.\n"
   "- *gptel--parse-tools + encode*: gptel's own serialisation of registered tools for an "
   "OpenAI backend, `gptel--json-encode` of `gptel--parse-tools`.\n"
   "- *mcp.el path + gptel-make-tool each*: the mcp.el path from the file's text, then "
   "`gptel-make-tool` of each tool, as mcp.el's README registers its servers' tools; "
   "toolspec's side is `toolspec-import-file` (read, validate, register, argument checkers "
   "made at each tool's first call).\n"
   "- *SDK client -> Python SDK server*: the Python MCP SDK's client (PyPI `mcp`) calling a trivial "
   "tool, echo, on the SDK's own server (MCPServer) on stdio, alternately with the same client calling "
   "the same elisp tool through `toolspec serve` and `toolspec-mcp-server-mode` (bench/mcp_bench.py).  "
   "*Python SDK client* (MCP client case): that client calling that server, against `toolspec-mcp`'s "
   "client calling it through the gptel function it registered.  *mcp.el path + gptel-make-tool each* "
   "(MCP client case): a server listing the catalog's first 1,000 tools, started, `initialize` and "
   "`tools/list` on stdio, then the mcp.el path and `gptel-make-tool` of each; toolspec's side is "
   "`toolspec-mcp-connect` until the tools are registered.\n"
   "- The catalog: every function definition in the test data of the Berkeley Function "
   "Calling Leaderboard (PyPI `bfcl-eval`), deduplicated, as BFCL has them (type names such as "
   "`dict`, `any` or `ArrayList`, names such as `math.sum`), as one MCP tools/list result "
   "(bench/make-catalog.py); `catalog-2x.json` is the same twice over under other "
   "names.  GitHub's description: npm `@octokit/openapi`.\n"
   "- *floor* rows: what Emacs itself needs, whatever a module does.  For the catalog, "
   "`json-parse-string` of the JSON of toolspec's output plists makes the same objects "
   "(strings for the type symbols, a vector for `:args`) by Emacs's C parser, the fastest "
   "way Emacs has to make them; the import's reports (its warnings, each tool's problems "
   "and each tool's path, which the mcp.el path does not make) have a row of their own, "
   "made the same way (a symbol for each message, which toolspec makes once for all the "
   "reports saying it).  For the export, the tools' keys made serialisable and "
   "`json-serialize` of them: what toolspec's first export hands the module, by Emacs's C "
   "serialiser.  A case's ratio cannot go below its floor's ratio, however fast the module.\n")
  "The section on baselines and data, as markdown.")

(defun toolspec-bench-report--targets (rows notes)
  "The targets of ROWS and NOTES, as (MET TEXT) in their order.
A row has a target when its sixth column is not empty; a note when
it ends in \"(target ...): met\" or \"...: **missed**\"."
  (append
   (delq nil
         (mapcar
          (lambda (r)
            (pcase-let ((`(,case ,mine ,base-name ,base ,ratio ,target ,met) r))
              (unless (string-empty-p target)
                (list (equal met "yes")
                      (format "%s: %s, %s against %s for %s; target %s"
                              case ratio mine base base-name target)))))
          rows))
   (delq nil
         (mapcar
          (lambda (n)
            (when (string-match "\\`\\(.*\\) (target \\([^)]*\\)): \\(met\\|\\*\\*missed\\*\\*\\)\\'" n)
              (list (equal (match-string 3 n) "met")
                    (format "%s; target %s" (match-string 1 n) (match-string 2 n)))))
          notes))))

(defun toolspec-bench-report-write (file rows notes versions date)
  "Write the report to FILE.
ROWS are lists (CASE TOOLSPEC BASELINE-NAME BASELINE RATIO TARGET
MET) of strings, NOTES the lines under the table, VERSIONS the lines
naming the machine and versions, DATE the day of the run
\(YYYY-MM-DD), all in their order."
  (let* ((targets (toolspec-bench-report--targets rows notes))
         (missed (seq-remove #'car targets))
         (met (seq-filter #'car targets)))
    (with-temp-file file
      (insert "# Benchmarks\n\n"
              "Written by `make bench` (bench/bench.el, bench/bench-report.el); do not edit by hand.  "
              "Each case runs toolspec and its baseline alternately in one batch Emacs; "
              "times are medians, the ratio is toolspec / baseline (below 1: toolspec is faster).  "
              "The figures before and after each design change are in "
              "[bench/history.md](bench/history.md).\n\n")
      (insert (format "Run on %s.\n\n" date))
      (dolist (l versions) (insert l "\n"))
      (insert (format "\n## Targets not met (%d of %d)\n\n" (length missed) (length targets)))
      (if missed
          (dolist (m missed) (insert "- " (cadr m) "\n"))
        (insert "None.\n"))
      (insert (format "\n## Targets met (%d of %d)\n\n" (length met) (length targets)))
      (if met
          (dolist (m met) (insert "- " (cadr m) "\n"))
        (insert "None.\n"))
      (insert "\n## Every case\n\n"
              "| case | toolspec | baseline | baseline time | ratio | target | met |\n"
              "| --- | ---: | --- | ---: | ---: | ---: | :---: |\n")
      (dolist (r rows)
        (insert "| " (mapconcat #'identity r " | ") " |\n"))
      (insert "\n")
      (dolist (n notes)
        (insert "- " n "\n"))
      (insert "\n## Baselines and data\n\n" toolspec-bench-report-baselines)
      (insert "\n## History\n\n"
              "What each design change did to these figures, round by round, with the "
              "measurements behind it: [bench/history.md](bench/history.md).\n"))
    (message "Wrote %s" file)))

(defun toolspec-bench-report--read (file)
  "The rows, notes, versions and date of the report FILE.
Returns (ROWS NOTES VERSIONS DATE), as `toolspec-bench-report-write'
takes them.  FILE may be in this layout or the one before it."
  (with-temp-buffer
    (insert-file-contents file)
    (goto-char (point-min))
    (let (rows notes versions date)
      (unless (re-search-forward "^Run on \\([0-9-]+\\)\\.$" nil t)
        (error "%s: no \"Run on\" line" file))
      (setq date (match-string 1))
      (forward-line 1)
      (while (and (not (eobp)) (looking-at "^$")) (forward-line 1))
      (while (looking-at "^- \\(.*\\)$")
        (push (match-string 0) versions)
        (forward-line 1))
      (unless (re-search-forward "^| case | toolspec |" nil t)
        (error "%s: no table" file))
      (forward-line 2)
      (while (looking-at "^| \\(.*\\) |$")
        (let ((cells (split-string (match-string 1) " | ")))
          (unless (= (length cells) 7)
            (error "%s: a row without 7 cells: %s" file (match-string 0)))
          (push cells rows))
        (forward-line 1))
      (while (looking-at "^$") (forward-line 1))
      (while (looking-at "^- \\(.*\\)$")
        (push (match-string 1) notes)
        (forward-line 1))
      (list (nreverse rows) (nreverse notes) (nreverse versions) date))))

(defun toolspec-bench-report-rewrite ()
  "Write BENCHMARKS.md (or $TOOLSPEC_BENCH_OUT) again from its own figures."
  (let ((file (or (getenv "TOOLSPEC_BENCH_OUT") (expand-file-name "BENCHMARKS.md"))))
    (apply #'toolspec-bench-report-write file (toolspec-bench-report--read file))))

(provide 'bench-report)
;;; bench-report.el ends here
