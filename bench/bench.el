;;; bench.el --- toolspec against its baselines, in one Emacs -*- lexical-binding: t -*-

;; Copyright (C) 2026 The toolspec authors

;; This file is not part of GNU Emacs.

;; This program is free software: you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Run by `make bench' (scripts/bench.sh) in a batch Emacs with the
;; release module and gptel loaded:
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -l bench/bench.elc \
;;         -f toolspec-bench-run-and-exit
;;
;; Each case times toolspec and its baselines alternately, in the same
;; process, after a garbage collection each, and reports medians and
;; ratios.  The baselines are what a user would otherwise run:
;;
;;  - mcp.el's path from an MCP tools/list result to gptel tool plists:
;;    `json-parse-string' as mcp.el calls it, then per tool its
;;    destructuring and `mcp--parse-tool-args' (written again below,
;;    step for step, since mcp.el needs a running server);
;;  - gptel's own export of registered tools: `gptel--parse-tools' for
;;    an OpenAI backend, encoded as gptel encodes request bodies;
;;  - the mcp.el path, then `gptel-make-tool' of each tool, for a file
;;    imported and registered (`toolspec-import-file');
;;  - `json-parse-string' alone, the floor.
;;
;; Two more variants measure what Emacs itself needs, whatever a module
;; does: making the catalog's output plists (`json-parse-string' of
;; their own JSON), and handing the registered tools' data to a module
;; (`json-serialize').  They bound the ratios any design can reach.
;;
;; The figures go to stdout and to BENCHMARKS.md (or $TOOLSPEC_BENCH_OUT),
;; laid out by bench-report.el.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'gptel)
(require 'gptel-openai)
(require 'toolspec-mcp)
(require 'toolspec-mcp-server)
(require 'bench-report)

(defvar toolspec-bench-data
  (or (getenv "TOOLSPEC_BENCHDATA") (expand-file-name ".deps/bench"))
  "Directory of the catalogs (scripts/fetch-bench-data.sh).")

(defvar toolspec-bench-testdata
  (or (getenv "TOOLSPEC_TESTDATA") (expand-file-name ".deps/testdata"))
  "Directory of the OpenAPI documents (scripts/fetch-test-data.sh).")

(defvar toolspec-bench-reps
  (string-to-number (or (getenv "TOOLSPEC_BENCH_REPS") "21"))
  "How many times each variant of a case runs.")

(defvar toolspec-bench-out
  (or (getenv "TOOLSPEC_BENCH_OUT") (expand-file-name "BENCHMARKS.md"))
  "Where the report is written.")

(defvar toolspec-bench--rows nil
  "Rows of the report: (CASE TOOLSPEC BASELINE-NAME BASELINE RATIO TARGET MET).")

(defvar toolspec-bench--notes nil
  "Lines printed under the table.")

;;;; Timing

(defvar toolspec-bench--gc-seconds 0
  "Seconds of garbage collection in the last `toolspec-bench--time'.")

(defun toolspec-bench--time (thunk)
  "Seconds THUNK takes, after a garbage collection.
The part of them spent collecting garbage is left in
`toolspec-bench--gc-seconds'."
  (garbage-collect)
  (let ((t0 (float-time))
        (gc gc-elapsed))
    (funcall thunk)
    (prog1 (- (float-time) t0)
      (setq toolspec-bench--gc-seconds (- gc-elapsed gc)))))

(defun toolspec-bench--median (xs)
  "Median of the numbers XS."
  (let* ((s (sort (copy-sequence xs) #'<))
         (n (length s)))
    (if (cl-oddp n)
        (nth (/ n 2) s)
      (/ (+ (nth (1- (/ n 2)) s) (nth (/ n 2) s)) 2.0))))

(defvar toolspec-bench--outside-gc nil
  "Of the last `toolspec-bench--compare': (NAME . MEDIAN-SECONDS) of
each variant's time outside garbage collection.")

(defun toolspec-bench--compare (variants &optional reps)
  "Time VARIANTS, an alist (NAME . THUNK), alternately REPS times.
Each round runs every variant once, in turn.  Returns an alist
\(NAME . MEDIAN-SECONDS); `toolspec-bench--outside-gc' has the
medians of the time outside garbage collection."
  (let ((times (mapcar (lambda (v) (list (car v))) variants))
        (outside (mapcar (lambda (v) (list (car v))) variants)))
    ;; One round to warm up (loading, caches), not counted.
    (dolist (v variants) (funcall (cdr v)))
    (dotimes (_ (or reps toolspec-bench-reps))
      (dolist (v variants)
        (let ((s (toolspec-bench--time (cdr v))))
          (push s (cdr (assoc (car v) times)))
          (push (- s toolspec-bench--gc-seconds) (cdr (assoc (car v) outside))))))
    (setq toolspec-bench--outside-gc
          (mapcar (lambda (x) (cons (car x) (toolspec-bench--median (cdr x)))) outside))
    (mapcar (lambda (x) (cons (car x) (toolspec-bench--median (cdr x)))) times)))

(defun toolspec-bench--ms (s)
  "S seconds as milliseconds text."
  (format "%.1f ms" (* 1000 s)))

(defun toolspec-bench--row (case mine base-name base target-ratio &optional unit)
  "Record CASE: toolspec took MINE, baseline BASE-NAME took BASE.
TARGET-RATIO is the largest acceptable MINE / BASE, or nil.  UNIT
formats times (default milliseconds)."
  (let* ((fmt (or unit #'toolspec-bench--ms))
         (ratio (/ (float mine) base))
         (met (if target-ratio (if (<= ratio target-ratio) "yes" "**no**") "")))
    (push (list case (funcall fmt mine) base-name (funcall fmt base)
                (format "%.2fx" ratio)
                (if target-ratio (format "<= %sx" target-ratio) "")
                met)
          toolspec-bench--rows)
    (message "%-48s toolspec %10s  %-34s %10s  ratio %6.2fx %s"
             case (funcall fmt mine) base-name (funcall fmt base) ratio
             (if target-ratio (format "(target <= %s: %s)" target-ratio met) ""))))

(defun toolspec-bench--note (fmt &rest args)
  "Add a note under the table: FMT and ARGS as for `format'."
  (let ((s (apply #'format fmt args)))
    (message "  %s" s)
    (push s toolspec-bench--notes)))

;;;; Baselines

(defun toolspec-bench--mcp-parse-tool-args (properties required)
  "gptel args of PROPERTIES and REQUIRED as mcp.el makes them.
Each property becomes (:name NAME . ITS-SCHEMA-PLIST); required names
are paired with the properties in order, as `mcp--parse-tool-args'
does, and the unpaired ones get `:optional t'."
  (let ((missing (- (/ (length properties) 2) (length required))))
    (cl-mapcar (lambda (pair required-name)
                 (pcase-let ((`(,key ,value) pair))
                   `(:name ,(substring (symbol-name key) 1)
                           ,@value
                           ,@(unless required-name '(:optional t)))))
               (seq-partition properties 2)
               (append required (when (> missing 0) (make-list missing nil))))))

(defun toolspec-bench--mcp-tools (text)
  "gptel tool plists from TEXT, an MCP tools/list result, as mcp.el does.
The JSON is parsed as mcp.el's JSON-RPC layer parses it; each tool is
then destructured and its args made as in `mcp-make-text-tool'.  (mcp.el
finds each tool again by name in the server's list, which makes it
quadratic; that search is left out.)"
  (toolspec-bench--mcp-tools-of
   (plist-get (json-parse-string text :object-type 'plist :null-object nil
                                 :false-object :json-false)
              :tools)))

(defun toolspec-bench--mcp-tools-of (tools)
  "gptel tool plists of TOOLS, a vector of parsed tools, as mcp.el does."
  (cl-loop for tool across tools
           collect
           (cl-destructuring-bind (&key name description ((:inputSchema input-schema))
                                        &allow-other-keys)
               tool
             (cl-destructuring-bind (&key properties required &allow-other-keys) input-schema
               (list :function #'ignore
                     :name name
                     :async nil
                     :description description
                     :args (toolspec-bench--mcp-parse-tool-args properties (or required '())))))))

(defun toolspec-bench--json-floor (text)
  "Parse TEXT as clients do, and nothing more."
  (json-parse-string text :object-type 'plist :null-object nil :false-object :json-false))

(defun toolspec-bench--plists-json (plists)
  "The JSON of PLISTS, tool plists as `toolspec-parse-json' makes them.
Symbols are written as strings, `:args' as arrays: parsed back by
`json-parse-string', it makes the same objects but for strings in
place of symbols and vectors of `:args'."
  (cl-labels ((fix (x)
                (cond ((and (symbolp x) x (not (keywordp x)) (not (eq x t))) (symbol-name x))
                      ((vectorp x) (cl-map 'vector #'fix x))
                      ((and (consp x) (keywordp (car x)))
                       (cl-loop for (k v) on x by #'cddr
                                append (list k (if (eq k :args) (vconcat (mapcar #'fix v)) (fix v)))))
                      (t x))))
    (json-serialize (vconcat (mapcar #'fix plists)) :null-object :null :false-object :json-false)))

(defun toolspec-bench--plists-floor (json)
  "Make the objects of JSON, a `toolspec-bench--plists-json', in Emacs's C."
  (json-parse-string json :object-type 'plist :array-type 'array
                     :null-object :null :false-object :json-false))

(defun toolspec-bench--reports-json (warnings problems paths)
  "The JSON of an import's WARNINGS, PROBLEMS and PATHS.
As `toolspec-last-import-warnings', `toolspec-last-import-problems'
and `toolspec-last-import-paths' have them.  Parsed back by
`toolspec-bench--reports-floor', it makes the lists, path strings and
paths toolspec makes, with a symbol for each severity and each message
\(JSON false and null, which make no object): toolspec makes a message
once however many reports say it, so the floor leaves them out."
  (cl-labels ((report (p) (vector (if (eq (car p) 'error) :null :false) (nth 1 p) :false)))
    (json-serialize (vector (vconcat (mapcar #'report warnings))
                            (vconcat (mapcar (lambda (ps) (vconcat (mapcar #'report ps))) problems))
                            (vconcat paths))
                    :null-object :null :false-object :false)))

(defun toolspec-bench--reports-floor (json)
  "Make the objects of JSON, a `toolspec-bench--reports-json', in Emacs's C."
  (json-parse-string json :array-type 'list :null-object 'error :false-object 'warning))

(defun toolspec-bench--out-of-lisp (tools)
  "TOOLS' data handed out of Lisp as toolspec's export does first.
Each tool's key, made serialisable, then `json-serialize' of them all
\(`toolspec--serialize'): Emacs's C serialiser, the fastest way it has
to give a module the data of many Lisp objects."
  (or (toolspec--serialize tools) (error "The tools cannot be serialised")))

(defvar toolspec-bench--backend nil
  "The OpenAI gptel backend of the export baseline.")

(defun toolspec-bench--gptel-export (tools)
  "TOOLS (gptel tools) as OpenAI JSON, by gptel's own code.
Without toolspec's advice, which would have gptel send toolspec's
own JSON for the tools toolspec registered."
  (let ((toolspec-gptel-send-own-json nil))
    (gptel--json-encode (gptel--parse-tools toolspec-bench--backend tools))))

;;;; Cases

(defun toolspec-bench--file-text (file)
  "The text of FILE, decoded as UTF-8."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8))
      (insert-file-contents file))
    (buffer-string)))

(defun toolspec-bench--toolspec-import (text)
  "TEXT to validated gptel-ready plists by toolspec.
As `toolspec-import-file' takes them: a tool with errors is left out,
and a name providers refuse is no error (registration renames it)."
  (let ((tools (toolspec-parse-json text)))
    (cl-loop for tool in tools
             for problems in toolspec-last-import-problems
             unless (toolspec-gptel--stopped-p tool problems)
             collect tool)))

(defun toolspec-bench-catalog ()
  "Catalog import: JSON text to validated gptel-ready plists."
  (let ((results nil))
    (dolist (name '("catalog.json" "catalog-2x.json"))
      (let* ((file (expand-file-name name toolspec-bench-data))
             (text (toolspec-bench--file-text file))
             (plists (toolspec-parse-json text))
             (n (length plists))
             (out (toolspec-bench--plists-json plists))
             (reports (toolspec-bench--reports-json toolspec-last-import-warnings
                                                    toolspec-last-import-problems
                                                    toolspec-last-import-paths))
             (counts (list (length toolspec-last-import-warnings)
                           (apply #'+ (mapcar #'length toolspec-last-import-problems))))
             (r (toolspec-bench--compare
                 `(("toolspec" . ,(lambda () (toolspec-bench--toolspec-import text)))
                   ("mcp.el" . ,(lambda () (toolspec-bench--mcp-tools text)))
                   ("json-parse-string" . ,(lambda () (toolspec-bench--json-floor text)))
                   ("objects" . ,(lambda () (toolspec-bench--plists-floor out)))
                   ("reports" . ,(lambda () (toolspec-bench--reports-floor reports)))))))
        (cl-assert (= n (length (toolspec-bench--mcp-tools text))))
        (push (list name r toolspec-bench--outside-gc) results)
        (let ((case (format "catalog import, %d tools (%s, %.1f MB)" n name
                            (/ (string-bytes text) 1e6))))
          (toolspec-bench--row case (cdr (assoc "toolspec" r)) "mcp.el path"
                               (cdr (assoc "mcp.el" r)) (and (equal name "catalog.json") 0.5))
          (toolspec-bench--row case (cdr (assoc "toolspec" r)) "json-parse-string"
                               (cdr (assoc "json-parse-string" r)) (and (equal name "catalog.json") 3))
          (when (equal name "catalog.json")
            (let ((floor (cdr (assoc "objects" r)))
                  (mcp (cdr (assoc "mcp.el" r))))
              (toolspec-bench--row (format "floor: Emacs making the %d tools' plists (json-parse-string of their JSON, %.1f MB)"
                                           n (/ (string-bytes out) 1e6))
                                   floor "mcp.el path" mcp nil)
              (toolspec-bench--note
               "floor: making the catalog's plists alone takes %.2fx the mcp.el path; the 0.5x target leaves %.1f ms beside it to copy, parse, normalise and check %d tools"
               (/ floor mcp) (* 1000 (- (* 0.5 mcp) floor)) n)
              ;; What the mcp.el path does not make: the import's
              ;; warnings, each tool's problems and each tool's path.
              (toolspec-bench--row (format "floor: Emacs making the import's %d warnings, %d problems and %d paths (json-parse-string)"
                                           (nth 0 counts) (nth 1 counts) n)
                                   (cdr (assoc "reports" r)) "mcp.el path" mcp nil))))))
    ;; Linearity: the catalog twice over should take about twice as long.
    ;; Whether a garbage collection falls inside a run depends on how
    ;; much it conses against the heap's size: a run that made the
    ;; catalog's objects may leave its collection to the next one, made
    ;; before the next run and not timed, while the catalog twice over
    ;; collects inside its run.  So the time outside collection too.
    (let ((one (assoc "catalog.json" results))
          (two (assoc "catalog-2x.json" results)))
      (dolist (who '("toolspec" "mcp.el" "json-parse-string"))
        (toolspec-bench--note
         "linearity: %s takes %.2fx as long for the catalog twice over (%.2fx outside garbage collection)"
         who (/ (cdr (assoc who (nth 1 two))) (cdr (assoc who (nth 1 one))))
         (/ (cdr (assoc who (nth 2 two))) (cdr (assoc who (nth 2 one)))))))
    ;; Since Emacs 29, `--batch' sets `gc-cons-percentage' to 1.0; an
    ;; interactive Emacs has the default, 0.1, and collects garbage about
    ;; ten times as often.  The catalog again, with the default.
    (let* ((text (toolspec-bench--file-text (expand-file-name "catalog.json" toolspec-bench-data)))
           (r (let ((gc-cons-percentage 0.1))
                (toolspec-bench--compare
                 `(("toolspec" . ,(lambda () (toolspec-bench--toolspec-import text)))
                   ("mcp.el" . ,(lambda () (toolspec-bench--mcp-tools text))))
                 (max 5 (/ toolspec-bench-reps 2))))))
      (toolspec-bench--row (format "catalog import, %d tools, gc-cons-percentage 0.1 (interactive default)"
                                   (length (toolspec-parse-json text)))
                           (cdr (assoc "toolspec" r)) "mcp.el path" (cdr (assoc "mcp.el" r)) nil))))

(defun toolspec-bench-openapi ()
  "OpenAPI import: GitHub's description to tools, from the file."
  (let* ((file (expand-file-name "octokit-openapi/generated/api.github.com.json"
                                 toolspec-bench-testdata))
         (text (toolspec-bench--file-text file))
         (n (length (toolspec-read-openapi file)))
         (r (toolspec-bench--compare
             `(("toolspec" . ,(lambda () (toolspec-read-openapi file)))
               ("json-parse-string" . ,(lambda () (toolspec-bench--json-floor text)))
               ("read+parse" . ,(lambda () (toolspec-bench--json-floor
                                            (toolspec-bench--file-text file)))))
             (max 5 (/ toolspec-bench-reps 2))))
         (case (format "OpenAPI import, GitHub (%d tools, %.1f MB)" n (/ (string-bytes text) 1e6))))
    (toolspec-bench--row case (cdr (assoc "toolspec" r)) "json-parse-string (text in memory)"
                         (cdr (assoc "json-parse-string" r)) 2)
    (toolspec-bench--row case (cdr (assoc "toolspec" r)) "read the file + json-parse-string"
                         (cdr (assoc "read+parse" r)) nil)
    (toolspec-bench-openapi-first file)))

(defun toolspec-bench-openapi-first (file)
  "The first import of FILE in a fresh Emacs, as at startup.
Repeated in one Emacs, an import finds memory the last one used and
freed; at startup every page it touches is new to the process.  Each
run is its own `emacs -Q', alternating toolspec and `json-parse-string'
of the text already in memory."
  (let* ((form (lambda (body)
                 `(progn
                    (require 'toolspec)
                    (require 'toolspec-openapi)
                    (let ((text (with-temp-buffer
                                  (let ((coding-system-for-read 'utf-8))
                                    (insert-file-contents ,file))
                                  (buffer-string))))
                      (ignore text)
                      (garbage-collect)
                      (let ((t0 (float-time)))
                        ,body
                        (princ (format "\n%S\n" (- (float-time) t0))))))))
         mine theirs)
    (dotimes (_ (max 5 (/ toolspec-bench-reps 2)))
      (push (toolspec-bench--emacs (funcall form `(toolspec-read-openapi ,file))) mine)
      (push (toolspec-bench--emacs (funcall form '(json-parse-string text :object-type 'plist)))
            theirs))
    (toolspec-bench--row "OpenAPI import, GitHub, first in a fresh Emacs"
                         (toolspec-bench--median mine) "json-parse-string, first in a fresh Emacs"
                         (toolspec-bench--median theirs) nil)))

(defun toolspec-bench-export ()
  "Export: registered gptel tools to OpenAI JSON.
Twice: exported again, each tool's text comes from the last export
\(`toolspec--export-cache'); exported the first time, every tool is
written."
  (let* ((text (toolspec-bench--file-text (expand-file-name "catalog.json" toolspec-bench-data)))
         (gptel--known-tools nil)
         (tools (toolspec-register (toolspec-parse-json text) :category "bench"))
         (first (lambda ()
                  (when (boundp 'toolspec--export-cache)
                    (clrhash toolspec--export-cache))
                  (toolspec-tools-to-json tools 'openai)))
         (r (toolspec-bench--compare
             `(("toolspec" . ,(lambda () (toolspec-tools-to-json tools 'openai)))
               ("first" . ,first)
               ("gptel" . ,(lambda () (toolspec-bench--gptel-export tools)))
               ("out of Lisp" . ,(lambda () (toolspec-bench--out-of-lisp tools)))))))
    (toolspec-bench--row (format "export, %d registered tools -> OpenAI JSON, exported again" (length tools))
                         (cdr (assoc "toolspec" r)) "gptel--parse-tools + encode"
                         (cdr (assoc "gptel" r)) 0.5)
    (toolspec-bench--row (format "export, %d registered tools -> OpenAI JSON, first export" (length tools))
                         (cdr (assoc "first" r)) "gptel--parse-tools + encode"
                         (cdr (assoc "gptel" r)) 0.5)
    (let ((floor (cdr (assoc "out of Lisp" r)))
          (gptel (cdr (assoc "gptel" r))))
      (toolspec-bench--row (format "floor: the %d tools' data out of Lisp (their keys, json-serialize)" (length tools))
                           floor "gptel--parse-tools + encode" gptel nil)
      (toolspec-bench--note
       "floor: handing the tools' data to the module alone takes %.2fx gptel's export; the 0.5x target leaves %.1f ms beside it to read, convert and write %d tools"
       (/ floor gptel) (* 1000 (- (* 0.5 gptel) floor)) (length tools)))))

(defun toolspec-bench--allocated (thunk)
  "Bytes of the Lisp objects THUNK makes, by `memory-use-counts'."
  (garbage-collect)
  (let ((before (memory-use-counts)))
    (funcall thunk)
    ;; Conses, floats, vector cells, symbols, string bytes, intervals,
    ;; strings: the sizes `garbage-collect' gives on this machine.
    (cl-loop for n in (memory-use-counts) for m in before
             for size in '(16 8 8 48 1 56 32)
             sum (* size (- n m)))))

(defun toolspec-bench-register ()
  "Import and registration: a tool file to tools registered with gptel.
What an init file does with `toolspec-import-file'.  The baseline is
what a user of mcp.el runs: the mcp.el path, then `gptel-make-tool' of
each tool, as mcp.el's README registers the tools of its servers.  The
catalog twice over too: registering must cost in proportion to the
number of tools."
  (let ((times nil))
    (dolist (name '("catalog.json" "catalog-2x.json"))
      (let* ((file (expand-file-name name toolspec-bench-data))
             (n (length (toolspec-read-file file)))
             (variants
              `(("toolspec" . ,(lambda ()
                                 (let ((gptel--known-tools nil) (gptel-tools nil) (inhibit-message t)
                                       (toolspec-gptel--registered (make-hash-table :test #'equal)))
                                   (toolspec-import-file file))))
                ("mcp.el" . ,(lambda ()
                               (let ((gptel--known-tools nil) (gptel-tools nil))
                                 (mapcar (lambda (tool) (apply #'gptel-make-tool tool))
                                         (toolspec-bench--mcp-tools (toolspec-bench--file-text file))))))))
             (r (toolspec-bench--compare variants (max 5 (/ toolspec-bench-reps 2))))
             (outside toolspec-bench--outside-gc))
        (push r times)
        (toolspec-bench--row (format "import and register, %d tools (%s -> gptel)" n name)
                             (cdr (assoc "toolspec" r)) "mcp.el path + gptel-make-tool each"
                             (cdr (assoc "mcp.el" r)) nil)
        ;; Whether a run collects garbage depends on how much it
        ;; allocates against the size of the heap (in batch,
        ;; `gc-cons-percentage' is 1.0): both are said, and the times
        ;; without the collections.
        (toolspec-bench--note
         "import and register, %s: each run allocates %s (toolspec) and %s (mcp.el), the live heap is %s; outside garbage collection %s against %s, %.2fx"
         name
         (toolspec-bench--mb (toolspec-bench--allocated (cdr (assoc "toolspec" variants))))
         (toolspec-bench--mb (toolspec-bench--allocated (cdr (assoc "mcp.el" variants))))
         (toolspec-bench--mb (cdr (toolspec-bench--memory)))
         (toolspec-bench--ms (cdr (assoc "toolspec" outside))) (toolspec-bench--ms (cdr (assoc "mcp.el" outside)))
         (/ (cdr (assoc "toolspec" outside)) (cdr (assoc "mcp.el" outside))))))
    (let ((two (car times)) (one (cadr times)))
      (dolist (who '("toolspec" "mcp.el"))
        (toolspec-bench--note "linearity: registering, %s takes %.2fx as long for the catalog twice over"
                              who (/ (cdr (assoc who two)) (cdr (assoc who one))))))))

(defun toolspec-bench-arguments ()
  "Run-time argument check of a 5-argument tool, per call."
  (let* ((tool (car (toolspec-parse-json
                     (json-encode
                      '((name . "book_flight")
                        (description . "Book a flight.")
                        (parameters
                         (type . "object")
                         (properties
                          (from (type . "string") (description . "IATA code") (pattern . "^[A-Z]{3}$"))
                          (to (type . "string") (description . "IATA code") (pattern . "^[A-Z]{3}$"))
                          (date (type . "string") (description . "Day of departure") (format . "date"))
                          (seats (type . "integer") (description . "Seats") (minimum . 1) (maximum . 9))
                          (class (type . "string") (description . "Cabin") (enum . ["economy" "business" "first"])))
                         (required . ["from" "to" "date" "seats"])))))))
         (args '(:from "CDG" :to "JFK" :date "2026-12-24" :seats 2 :class "economy"))
         (n 2000)
         (per-call (lambda (f) (lambda () (dotimes (_ n) (funcall f)))))
         (r (toolspec-bench--compare
             `(("toolspec" . ,(funcall per-call (lambda () (toolspec-validate-arguments tool args))))
               ("json-serialize" . ,(funcall per-call (lambda () (json-serialize args))))))))
    (cl-assert (null (toolspec-validate-arguments tool args)))
    (cl-assert (toolspec-validate-arguments tool '(:from "CDG" :to "JFK" :date "2026-12-24" :seats 12)))
    (toolspec-bench--row "argument check, 5-arg tool, per call"
                         (/ (cdr (assoc "toolspec" r)) n) "json-serialize of the args"
                         (/ (cdr (assoc "json-serialize" r)) n) nil
                         (lambda (s) (format "%.1f us" (* 1e6 s))))
    (toolspec-bench--note "argument check: median %.1f us per call (target <= 20 us): %s"
                          (* 1e6 (/ (cdr (assoc "toolspec" r)) n))
                          (if (<= (/ (cdr (assoc "toolspec" r)) n) 20e-6) "met" "**missed**"))))

(defun toolspec-bench--emacs (form &optional dir)
  "Run FORM in a fresh `emacs -Q --batch' with DIR in `load-path'.
DIR defaults to the directory toolspec was loaded from, byte-compiled
as every case runs it.  Return what FORM prints last, read."
  (with-temp-buffer
    (let ((status (call-process (expand-file-name invocation-name invocation-directory)
                                nil t nil "-Q" "--batch"
                                "-L" (or dir (file-name-directory (locate-library "toolspec")))
                                "-L" (file-name-directory (locate-library "gptel"))
                                "--eval" (prin1-to-string form))))
      (unless (eq status 0)
        (error "Sub-Emacs failed (%s): %s" status (buffer-string)))
      (car (read-from-string (buffer-substring (line-beginning-position 0) (point-max)))))))

(defun toolspec-bench--installed-copy ()
  "A directory holding toolspec as a package install has it: byte-compiled."
  (let ((dir (make-temp-file "toolspec-bench" t)))
    (dolist (f (directory-files "lisp" t "\\(?:\\.el\\|\\.so\\|\\.dylib\\|\\.dll\\)\\'"))
      (copy-file f (expand-file-name (file-name-nondirectory f) dir)))
    (toolspec-bench--emacs
     `(progn (setq byte-compile-warnings nil)
             (dolist (f (directory-files ,dir t "\\.el\\'"))
               (byte-compile-file f))
             (princ "\nt\n"))
     dir)
    dir))

(defun toolspec-bench-require ()
  "(require \='toolspec) with the module, in a fresh emacs -Q."
  (let* ((dir (toolspec-bench--installed-copy))
         (form (lambda (feature)
                 `(let ((t0 (float-time)))
                    (require ',feature)
                    (princ (format "\n%S\n" (- (float-time) t0))))))
         (mine nil) (theirs nil))
    (unwind-protect
        (dotimes (_ (max 7 toolspec-bench-reps))
          (push (toolspec-bench--emacs (funcall form 'toolspec) dir) mine)
          (push (toolspec-bench--emacs (funcall form 'url) dir) theirs))
      (delete-directory dir t))
    (let ((m (toolspec-bench--median mine)))
      (toolspec-bench--row "(require 'toolspec) with the module, emacs -Q, byte-compiled"
                           m "(require 'url), built into Emacs" (toolspec-bench--median theirs) nil)
      (toolspec-bench--note "(require 'toolspec): median %.1f ms (target <= 20 ms): %s"
                            (* 1000 m) (if (<= m 0.02) "met" "**missed**")))))

(defun toolspec-bench-memory ()
  "Peak RSS growth while importing GitHub's description, in a fresh Emacs."
  (let* ((file (expand-file-name "octokit-openapi/generated/api.github.com.json"
                                 toolspec-bench-testdata))
         (size (file-attribute-size (file-attributes file)))
         (form (lambda (body)
                 `(let ((kb (lambda (field)
                              (with-temp-buffer
                                (insert-file-contents "/proc/self/status")
                                (re-search-forward (concat "^" field ":[ \t]*\\([0-9]+\\)"))
                                (string-to-number (match-string 1))))))
                    (require 'toolspec)
                    (require 'toolspec-openapi)
                    (garbage-collect)
                    (let ((before (funcall kb "VmRSS")))
                      ,body
                      (princ (format "\n%S\n" (* 1024 (- (funcall kb "VmHWM") before))))))))
         (mine (toolspec-bench--median
                (cl-loop repeat 3 collect
                         (toolspec-bench--emacs (funcall form `(toolspec-read-openapi ,file))))))
         (theirs (toolspec-bench--median
                  (cl-loop repeat 3 collect
                           (toolspec-bench--emacs
                            (funcall form `(json-parse-string
                                            (with-temp-buffer
                                              (let ((coding-system-for-read 'utf-8))
                                                (insert-file-contents ,file))
                                              (buffer-string))
                                            :object-type 'plist))))))
         (mb (lambda (b) (format "%.1f MB" (/ b 1e6)))))
    (toolspec-bench--row (format "memory: peak RSS growth, GitHub import (file %.1f MB)" (/ size 1e6))
                         mine "read + json-parse-string" theirs nil mb)
    (toolspec-bench--note "memory: peak RSS growth %.2fx the file size (target <= 3x): %s"
                          (/ mine (float size)) (if (<= mine (* 3 size)) "met" "**missed**"))))

;;;; MCP

(defvar toolspec-bench-python
  (or (getenv "TOOLSPEC_BENCH_PYTHON")
      (expand-file-name "pyenv/bin/python"
                        (or (getenv "TOOLSPEC_PROVIDERS") (expand-file-name ".deps/providers"))))
  "The Python with the MCP SDK (scripts/setup-providers.sh).")

(defvar toolspec-bench-program (expand-file-name "target/release/toolspec")
  "The toolspec program, for `toolspec serve'.")

(defun toolspec-bench--mcp-script (&rest args)
  "The command running bench/mcp_bench.py with ARGS."
  (unless (file-executable-p toolspec-bench-python)
    (error "%s is missing: run `bash scripts/setup-providers.sh' for the Python MCP SDK"
           toolspec-bench-python))
  `(,toolspec-bench-python ,(expand-file-name "bench/mcp_bench.py") ,@args))

(defun toolspec-bench--drive (command handler &optional env)
  "Run COMMAND to its end; call HANDLER with each line it prints and it.
HANDLER runs outside the process filter, so it may wait for other
processes.  ENV is added to the environment.  Signal if COMMAND fails."
  (let* ((lines nil)
         (partial "")
         (stderr (generate-new-buffer " *toolspec-bench-stderr*"))
         (process-environment (append env process-environment))
         (proc (make-process
                :name "toolspec-bench" :command command :connection-type 'pipe
                :noquery t :stderr stderr
                :filter (lambda (_ out)
                          (let ((parts (split-string (concat partial out) "\n")))
                            (setq partial (car (last parts)))
                            (setq lines (append lines (butlast parts))))))))
    (unwind-protect
        (progn
          (while (or lines (process-live-p proc))
            (if lines
                (funcall handler (pop lines) proc)
              (accept-process-output proc 0.05)))
          (accept-process-output nil 0.05)
          (unless (eq (process-exit-status proc) 0)
            (error "%s failed (%s): %s" (mapconcat #'identity command " ")
                   (process-exit-status proc)
                   (with-current-buffer stderr (buffer-string)))))
      (when (process-live-p proc) (delete-process proc))
      (kill-buffer stderr))))

(defun toolspec-bench--memory ()
  "After a garbage collection: (RSS-BYTES . LISP-BYTES) of this Emacs.
LISP-BYTES is what the live Lisp objects take, by `garbage-collect'."
  (let ((lisp (cl-loop for (_ size used) in (garbage-collect)
                       when (and (numberp size) (numberp used)) sum (* size used))))
    (cons (* 1024 (with-temp-buffer
                    (insert-file-contents "/proc/self/status")
                    (re-search-forward "^VmRSS:[ \t]*\\([0-9]+\\)")
                    (string-to-number (match-string 1))))
          lisp)))

(defun toolspec-bench--us (s)
  "S seconds as microseconds text."
  (format "%.0f us" (* 1e6 s)))

(defun toolspec-bench--mb (b)
  "B bytes as megabytes text."
  (format "%.1f MB" (/ b 1e6)))

(defun toolspec-bench-mcp-serve ()
  "MCP server: a trivial elisp tool called by the Python MCP SDK's client.
The client calls it through `toolspec serve', which forwards to this
Emacs over the socket of `toolspec-mcp-server-mode', and, alternately in
the same client process, the same tool on the Python MCP SDK's own
server (MCPServer), both on stdio and in the handshake era.  Then 1,000
calls in a row through toolspec, with this Emacs's memory before and
after."
  (let* ((dir (make-temp-file "toolspec-bench-mcp" t))
         (toolspec-mcp-server-socket (expand-file-name "mcp.sock" dir))
         (toolspec-mcp-server-tools '((:category "toolspec-bench")))
         (rounds (max 5 (/ toolspec-bench-reps 2)))
         (calls 100) (leak 1000)
         (times nil) (marks nil))
    (gptel-make-tool :name "echo" :category "toolspec-bench"
                     :description "Say the text back."
                     :args (list '(:name "text" :type string :description "what to say"))
                     :function #'identity)
    (unwind-protect
        (progn
          (toolspec-mcp-server-mode 1)
          (toolspec-bench--drive
           (toolspec-bench--mcp-script
            "client" (number-to-string rounds) (number-to-string calls) (number-to-string leak)
            (concat "toolspec=" (json-encode (vector toolspec-bench-program "serve" "--socket"
                                                     toolspec-mcp-server-socket)))
            (concat "python-sdk=" (json-encode (vconcat (toolspec-bench--mcp-script "sdk-server")))))
           (lambda (line proc)
             (pcase (split-string line)
               (`("ready" ,_) (process-send-string proc "go\n"))
               (`("time" ,who ,s) (push (string-to-number s) (alist-get who times nil nil #'equal)))
               (`("mark" ,_) (push (toolspec-bench--memory) marks) (process-send-string proc "go\n"))
               (_ (message "mcp-serve: %s" line))))))
      (toolspec-mcp-server-mode -1)
      (delete-directory dir t))
    (cl-assert (= (length marks) 2))
    (let ((mine (toolspec-bench--median (alist-get "toolspec" times nil nil #'equal)))
          (theirs (toolspec-bench--median (alist-get "python-sdk" times nil nil #'equal)))
          (before (cadr marks)) (after (car marks)))
      (toolspec-bench--row "MCP server: per call of a trivial elisp tool (SDK client -> toolspec serve -> Emacs)"
                           mine "SDK client -> Python SDK server" theirs nil #'toolspec-bench--us)
      (toolspec-bench--row (format "MCP server: Emacs's RSS after %d calls in a row" leak)
                           (car after) "its RSS before them" (car before) nil #'toolspec-bench--mb)
      (toolspec-bench--note
       "MCP server: %d rounds of %d calls, alternating in one client process; the Python SDK client's own cost is in both"
       rounds calls)
      (toolspec-bench--note
       "MCP server, %d calls in a row: RSS %+.0f kB (%.1f -> %.1f MB), live Lisp objects %+.0f kB (%.1f -> %.1f MB) after garbage collection"
       leak (/ (- (car after) (car before)) 1024.0) (/ (car before) 1e6) (/ (car after) 1e6)
       (/ (- (cdr after) (cdr before)) 1024.0) (/ (cdr before) 1e6) (/ (cdr after) 1e6)))))

(defun toolspec-bench--mcp-wait (pred what proc)
  "Wait until PRED holds, at most 60 s; signal WHAT if not.
Output is awaited from PROC, a process or a function returning one:
waiting for any process's output may sleep past the answer."
  (let ((end (+ (float-time) 60)))
    (while (not (funcall pred))
      (when (> (float-time) end) (error "Timed out waiting for %s" what))
      (accept-process-output (if (functionp proc) (funcall proc) proc) 0.01))))

(defun toolspec-bench--mcp-el-connect (command)
  "What mcp.el does to register a stdio server's tools, step for step.
Start COMMAND, send `initialize', `notifications/initialized' and
`tools/list' as newline-delimited JSON-RPC, parse the answer as mcp.el's
JSON-RPC layer does, then per tool its destructuring,
`mcp--parse-tool-args' and `gptel-make-tool'.  Return the process."
  (let* ((out nil) (lines 0)
         (proc (make-process :name "toolspec-bench-mcp.el" :command command
                             :connection-type 'pipe :noquery t
                             :coding 'utf-8-unix :stderr (get-buffer-create " *toolspec-bench-stderr*")
                             :filter (lambda (_ s)
                                       (push s out)
                                       (setq lines (+ lines (cl-count ?\n s)))))))
    (process-send-string
     proc (concat (json-serialize '(:jsonrpc "2.0" :id 1 :method "initialize"
                                             :params (:protocolVersion "2025-03-26" :capabilities #s(hash-table)
                                                                       :clientInfo (:name "mcp.el" :version "1"))))
                  "\n"))
    (toolspec-bench--mcp-wait (lambda () (>= lines 1)) "initialize" proc)
    (setq out nil lines 0)
    (process-send-string proc "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
    (process-send-string proc "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n")
    (toolspec-bench--mcp-wait (lambda () (>= lines 1)) "tools/list" proc)
    (let ((message (json-parse-string (apply #'concat (nreverse out))
                                      :object-type 'plist :null-object nil :false-object :json-false)))
      (mapc (lambda (tool) (apply #'gptel-make-tool tool))
            (toolspec-bench--mcp-tools-of (plist-get (plist-get message :result) :tools))))
    proc))

(defun toolspec-bench-mcp-client ()
  "MCP client: connecting and registering 1,000 tools; per-call overhead.
Connecting: `toolspec-mcp-connect' to a standard-library server listing
the catalog's first 1,000 tools, until they are registered in gptel;
against mcp.el's path on the same server (see
`toolspec-bench--mcp-el-connect').  Per call: a `tools/call' of a
trivial tool of the Python MCP SDK's server, through the gptel function
toolspec registered, against the Python MCP SDK's client calling its
own instance of the same server, alternately, in the same era."
  (let* ((n 1000)
         (catalog (expand-file-name "catalog.json" toolspec-bench-data))
         (catalog-server (toolspec-bench--mcp-script "catalog-server" catalog (number-to-string n)))
         (sdk-server (toolspec-bench--mcp-script "sdk-server"))
         (toolspec-mcp-servers `(("bench-catalog" :command ,(car catalog-server) :args ,(cdr catalog-server))
                                 ("bench-sdk" :command ,(car sdk-server) :args ,(cdr sdk-server))))
         (gptel--known-tools nil) (gptel-tools nil)
         ;; Connecting and disconnecting say so.
         (inhibit-message t)
         (toolspec-gptel--registered (make-hash-table :test #'equal))
         (reps (max 5 (/ toolspec-bench-reps 2)))
         (mine nil) (theirs nil))
    ;; Connecting and registering.
    (dotimes (i (1+ reps))
      (let* ((t0 (progn (garbage-collect) (float-time)))
             (server (toolspec-mcp-connect "bench-catalog")))
        (toolspec-bench--mcp-wait (lambda () (memq (toolspec-mcp--server-state server) '(ready failed)))
                                  "toolspec-mcp-connect"
                                  (lambda () (toolspec-mcp--server-process server)))
        (let ((s (- (float-time) t0)))
          (cl-assert (= n (length (toolspec-mcp--server-gptel-tools server))) nil
                     "toolspec registered %d tools" (length (toolspec-mcp--server-gptel-tools server)))
          (when (> i 0) (push s mine))))
      (toolspec-mcp-disconnect "bench-catalog")
      (let* ((gptel--known-tools nil)
             (t0 (progn (garbage-collect) (float-time)))
             (proc (toolspec-bench--mcp-el-connect catalog-server)))
        (let ((s (- (float-time) t0)))
          (cl-assert (= n (length (cdar gptel--known-tools))))
          (when (> i 0) (push s theirs)))
        (delete-process proc)))
    (let ((inhibit-message nil))
      (toolspec-bench--row (format "MCP client: connect to a server with %d tools and register them" n)
                           (toolspec-bench--median mine)
                           "mcp.el path + gptel-make-tool each" (toolspec-bench--median theirs) nil))
    ;; Per call.
    (let* ((server (toolspec-mcp-connect "bench-sdk"))
           (rounds (max 5 (/ toolspec-bench-reps 2)))
           (calls 100)
           (times nil))
      (unwind-protect
          (progn
            (toolspec-bench--mcp-wait (lambda () (memq (toolspec-mcp--server-state server) '(ready failed)))
                                      "toolspec-mcp-connect"
                                      (lambda () (toolspec-mcp--server-process server)))
            (let* ((tool (or (cl-find "echo" (toolspec-mcp--server-gptel-tools server)
                                      :key #'gptel-tool-name :test #'equal)
                             (error "No tool echo: %s" (toolspec-mcp--server-error server))))
                   (fn (gptel-tool-function tool))
                   (call (lambda (text)
                           (let ((answer nil))
                             (funcall fn (lambda (r) (setq answer r)) text)
                             (while (not answer)
                               ;; Waiting for any process's output may sleep
                               ;; past the answer; a user's Emacs does not.
                               (accept-process-output (toolspec-mcp--server-process server) 0.05))
                             answer))))
              (let ((answer (funcall call "warm")))
                ;; The SDK gives echo an outputSchema: toolspec passes
                ;; its structuredContent, {"result":"warm"}, on.
                (cl-assert (string-match-p "\\`\\(?:warm\\|{\"result\":\"warm\"}\\)\\'" answer)
                           nil "echo answered %S" answer))
              (toolspec-bench--drive
               (toolspec-bench--mcp-script "client" (number-to-string rounds) (number-to-string calls) "0"
                                           (concat "python-sdk=" (json-encode (vconcat sdk-server))))
               (lambda (line proc)
                 (pcase (split-string line)
                   (`("ready" ,_)
                    (garbage-collect)
                    (let ((t0 (float-time)))
                      (dotimes (j calls) (funcall call (format "hello %d" j)))
                      (push (/ (- (float-time) t0) calls) (alist-get "toolspec" times nil nil #'equal)))
                    (process-send-string proc "go\n"))
                   (`("time" ,who ,s) (push (string-to-number s) (alist-get who times nil nil #'equal)))
                   (_ (message "mcp-client: %s" line))))
               (and (eq (toolspec-mcp--server-era server) 'modern)
                    '("TOOLSPEC_BENCH_MCP_ERA=modern")))))
        (toolspec-mcp-disconnect "bench-sdk"))
      (setq inhibit-message nil)
      (toolspec-bench--row "MCP client: per tools/call of a trivial tool of the Python SDK's server"
                           (toolspec-bench--median (alist-get "toolspec" times nil nil #'equal))
                           "Python SDK client" (toolspec-bench--median (alist-get "python-sdk" times nil nil #'equal))
                           nil #'toolspec-bench--us)
      (toolspec-bench--note
       "MCP client: connecting, %d runs each, alternating, server started each time; toolspec probes server/discover first, then initialize; per call, %d rounds of %d calls, alternating, both clients in the %s era"
       reps rounds calls (if (eq (toolspec-mcp--server-era server) 'modern) "stateless (2026-07-28)" "handshake")))))

;;;; Report

(defun toolspec-bench--versions ()
  "Lines naming the machine, Emacs and the crates measured."
  (let* ((lock (with-temp-buffer
                 (insert-file-contents "Cargo.lock")
                 (buffer-string)))
         (crate (lambda (name)
                  (if (string-match (format "name = \"%s\"\nversion = \"\\([^\"]+\\)\"" name) lock)
                      (match-string 1 lock)
                    "?")))
         (cpu (with-temp-buffer
                (insert-file-contents "/proc/cpuinfo")
                (if (re-search-forward "^model name[ \t]*: \\(.*\\)$" nil t) (match-string 1) "?"))))
    (list (format "- machine: %s, %s, %d cores" (car (split-string system-configuration "-"))
                  cpu (num-processors))
          (format "- Emacs %s (native JSON: %s), gptel %s" emacs-version
                  (if (fboundp 'json-parse-string) "yes" "no")
                  (or (bound-and-true-p gptel-version) "?"))
          (format "- toolspec %s (release module); crates: emacs %s, serde_json %s, lexpr %s, jsonschema %s, mimalloc %s"
                  toolspec-version (funcall crate "emacs") (funcall crate "serde_json")
                  (funcall crate "lexpr") (funcall crate "jsonschema") (funcall crate "mimalloc"))
          (format "- %d runs of each variant per case, alternating, medians; garbage collected before each run; toolspec, gptel and this file byte-compiled"
                  toolspec-bench-reps))))

(defun toolspec-bench--write ()
  "Write the report to `toolspec-bench-out' (see bench-report.el)."
  (toolspec-bench-report-write toolspec-bench-out
                               (reverse toolspec-bench--rows)
                               (reverse toolspec-bench--notes)
                               (toolspec-bench--versions)
                               (format-time-string "%Y-%m-%d")))

(defun toolspec-bench-run-and-exit ()
  "Run every case, write the report, exit."
  (setq toolspec-bench--backend (gptel-make-openai "toolspec-bench" :key "none"))
  (let ((cases (if (getenv "TOOLSPEC_BENCH_CASES")
                   (mapcar #'intern (split-string (getenv "TOOLSPEC_BENCH_CASES")))
                 '(catalog openapi export register arguments require memory mcp-serve mcp-client))))
    (dolist (c cases)
      (message "== %s" c)
      (funcall (intern (format "toolspec-bench-%s" c))))
    (toolspec-bench--write)
    (kill-emacs 0)))

(provide 'bench)
;;; bench.el ends here
