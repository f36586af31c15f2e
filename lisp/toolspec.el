;;; toolspec.el --- LLM tool definitions between JSON formats and gptel/llm -*- lexical-binding: t -*-

;; Copyright (C) 2026 The toolspec authors

;; Author: The toolspec authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience, comm
;; URL: https://example.invalid/toolspec

;; This file is not part of GNU Emacs.

;; This program is free software: you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; toolspec moves LLM tool definitions between Emacs and the rest of the
;; world.  gptel and llm describe tools as plists (`gptel-make-tool',
;; `llm-make-tool'); every other client speaks JSON (OpenAI, Anthropic,
;; MCP, Gemini, Bedrock...).  toolspec converts both ways without losing
;; anything and validates specs, reporting every problem with its path.
;;
;; The work is done by a native module written in Rust
;; (toolspec-module), built with `toolspec-build-module' or `make'.
;;
;; Public API:
;;
;;   (toolspec-parse-json STRING &optional FORMAT)  -> list of tool plists
;;   (toolspec-read-file FILE &optional FORMAT)     -> list of tool plists
;;   (toolspec-to-json TOOL &optional DIALECT)      -> JSON string
;;   (toolspec-tools-to-json TOOLS &optional DIALECT PRETTY) -> JSON document
;;   (toolspec-validate TOOL)                       -> ((SEVERITY PATH MESSAGE) ...)
;;   (toolspec-check TOOL)                          -> TOOL, or signals
;;
;; Every error toolspec signals is a `toolspec-error'.

;;; Code:

(require 'cl-lib)
;; `when-let*', `if-let*' and `string-empty-p' are subr-x's on Emacs 28.
(eval-when-compile (require 'subr-x))
(when (< emacs-major-version 29) (require 'subr-x))

(defconst toolspec-version "0.1.0"
  "Version of the toolspec package; the module must have the same.")

(defgroup toolspec nil
  "LLM tool definitions between JSON formats and gptel/llm plists."
  :group 'tools
  :prefix "toolspec-")

;; Each file's options are in its own group under `toolspec':
;; `toolspec-core' here, `toolspec-gptel', `toolspec-ui', `toolspec-lint',
;; `toolspec-http', `toolspec-mcp' and `toolspec-mcp-server'; the files of
;; formats that say how their tools run have theirs under
;; `toolspec-formats' (`toolspec-openapi', `toolspec-arcade',
;; `toolspec-skydeck'), which holds the options they share.

(defgroup toolspec-core nil
  "Reading, checking and writing tool definitions: limits, the module, templates."
  :group 'toolspec)

(defgroup toolspec-gptel nil
  "Importing tools into gptel: where they come from, how they are bound and run."
  :group 'toolspec)

(defgroup toolspec-formats nil
  "Tool formats that say how to run their tools: Gloodata, Arcade, SkyDeck, OpenAPI."
  :group 'toolspec)

(defcustom toolspec-default-dialect 'openai
  "JSON dialect `toolspec-to-json' writes when none is given.
One of `toolspec-dialects'."
  :type '(restricted-sexp :match-alternatives (toolspec--dialect-p)
                          :tag "Dialect (see `toolspec-dialects')")
  :group 'toolspec-core)

(defcustom toolspec-max-input-size (* 64 1024 1024)
  "Largest input, in bytes, toolspec reads.
It bounds JSON text and files (`toolspec-parse-json',
`toolspec-read-file', `toolspec-import-file') and OpenAPI
documents (`toolspec-read-openapi').  Larger input is refused
before it is parsed, with a `toolspec-limit-error' naming the
file, its size and this limit; raise the limit to read it."
  :type 'natnum
  :group 'toolspec-core)

(defcustom toolspec-max-import-size (* 256 1024 1024)
  "Largest output of one import: its tools' schemas, in bytes of memory.
A schema that many tools of a file (or many operations of an OpenAPI
document) refer to with `$ref' is written out in each of them, so
what an import makes can be far larger than its input.  An import
that would make more is stopped with a `toolspec-limit-error' naming
this option, before it takes Emacs's memory; raise it to read the
file.  It bounds `toolspec-read-file', `toolspec-import-file',
`toolspec-parse-json', `toolspec-read-openapi' and the JSON checker
of `toolspec-flymake-setup'."
  :type 'natnum
  :group 'toolspec-core)

(defvar toolspec--dialects nil
  "The dialects the module writes, once asked (see `toolspec-dialects').")

(declare-function toolspec--mod-dialect-names "toolspec-module")
(declare-function toolspec--mod-safe-names "toolspec-module")
(declare-function toolspec--mod-safe-names-of "toolspec-module")

(defun toolspec-dialects ()
  "The JSON dialects toolspec writes, a list of symbols.
The list comes from the module's registry of dialects, which also
makes the command line's list: it is never kept by hand."
  (or toolspec--dialects
      (progn (toolspec--ensure-module)
             (setq toolspec--dialects (mapcar #'intern (toolspec--mod-dialect-names))))))

(defun toolspec--dialect-p (x)
  "Non-nil if X is a symbol naming a dialect of `toolspec-dialects'."
  (and (symbolp x) (memq x (toolspec-dialects)) t))

(defun toolspec-safe-names (names rule)
  "NAMES, tool names, made valid under RULE and different from each other.
RULE is a dialect (a symbol or string among `toolspec-dialects') or
`gptel', for names every gptel backend takes.  NAMES are the names of
one document or registration.  Returns a list as long as NAMES: nil
for a name kept, else its new name, made from the old one
deterministically (\"math.sum\" becomes \"math_sum\")."
  (toolspec--ensure-module)
  (or (toolspec--mod-safe-names-of (vconcat names) (toolspec--name rule nil))
      (make-list (length names) nil)))

(defun toolspec--safe-names-of-json (json count rule)
  "`toolspec-safe-names' of the COUNT names JSON, a JSON array, under RULE."
  (toolspec--ensure-module)
  (let ((new (json-parse-string (toolspec--mod-safe-names json (toolspec--name rule nil))
                                :array-type 'array :null-object nil)))
    ;; null: every name is kept.
    (if new (append new nil) (make-list count nil))))

(defconst toolspec-formats
  '(auto openai openai-functions openai-responses anthropic mcp gemini bedrock openapi json-schema
         gloodata arcade skydeck)
  "Tool definition formats toolspec reads.")

;;;; Errors

;; Every error toolspec signals is a `toolspec-error'.  The module
;; signals one condition per `ErrorKind' of src/error.rs; the others
;; are signalled by the Lisp side only.  They are all defined here, and
;; a test holds the first table to the module's list of kinds.

(defconst toolspec--module-errors
  '((toolspec-json-error nil "Invalid JSON")
    (toolspec-format-error nil "Not a valid tool definition")
    (toolspec-unsupported-format nil "Unsupported format")
    (toolspec-ref-error nil "Cannot resolve $ref")
    (toolspec-limit-error nil "Input beyond toolspec's limits")
    (toolspec-plist-error nil "Not a valid tool plist")
    (toolspec-write-error nil "Cannot write tool")
    (toolspec-template-error nil "Jinja template error")
    (toolspec-template-limit-error (toolspec-template-error toolspec-limit-error)
                                   "Jinja template beyond its limits")
    (toolspec-envelope-error nil "Invalid tool result envelope"))
  "The conditions the module signals, one per kind of error of its core.
Each entry is (CONDITION PARENTS MESSAGE); PARENTS nil means
`toolspec-error'.")

(defconst toolspec--lisp-errors
  '((toolspec-invalid-spec nil "Invalid tool spec")
    (toolspec-module-error nil "toolspec module unavailable")
    (toolspec-program-error nil "toolspec program unavailable")
    (toolspec-internal-error nil "Internal error in toolspec")
    (toolspec-http-error nil "OpenAPI call failed")
    (toolspec-fetch-error nil "Cannot fetch"))
  "The conditions only the Lisp side signals, as in `toolspec--module-errors'.
`toolspec-internal-error' is also what the module signals when it fails.")

(define-error 'toolspec-error "toolspec error")
(dolist (e (append toolspec--module-errors toolspec--lisp-errors))
  (define-error (nth 0 e) (nth 2 e) (or (nth 1 e) 'toolspec-error)))

(defun toolspec-error-details (err)
  "Return the details plist of toolspec error ERR.
ERR is a condition as bound by `condition-case'.  The plist may hold
`:path' (where in the input), `:line' and `:column' (for JSON
errors), `:file', `:message' (what is wrong, without the file, the
position and the path) and `:problems' (for `toolspec-invalid-spec')."
  (let ((data (cdr err)))
    (and (consp data) (listp (cadr data)) (cadr data))))

(defun toolspec--error-text (err)
  "What is wrong, by toolspec error ERR: \"PATH: MESSAGE\", or MESSAGE.
Without the file and the line and column, which the caller shows its
own way.  Made from ERR's details; an error with no `:message' in
them gives its whole message."
  (let* ((details (toolspec-error-details err))
         (message (plist-get details :message))
         (path (plist-get details :path)))
    (cond ((not (stringp message))
           (if (stringp (cadr err)) (cadr err) (error-message-string err)))
          ((and (stringp path) (not (string-empty-p path)))
           (concat path ": " message))
          (t message))))

;;;; The module

(defconst toolspec--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "Directory toolspec.el was loaded from.")

(defvar toolspec-module-file nil
  "The module file to load; nil means toolspec-module next to toolspec.el.")

(defun toolspec--module-file ()
  "Where the compiled module is expected."
  (or toolspec-module-file
      (expand-file-name (concat "toolspec-module" module-file-suffix) toolspec--directory)))

(defun toolspec--source-directory ()
  "The directory holding the crate's Cargo.toml, or nil."
  (cl-find-if (lambda (d) (file-exists-p (expand-file-name "Cargo.toml" d)))
              (list toolspec--directory
                    (expand-file-name ".." toolspec--directory))))

(declare-function toolspec--mod-version "toolspec-module")
(declare-function toolspec--mod-parse-json "toolspec-module")
(declare-function toolspec--mod-read-file "toolspec-module")
(declare-function toolspec--mod-to-json "toolspec-module")
(declare-function toolspec--mod-serialized-to-json "toolspec-module")
(declare-function toolspec--mod-serialized-to-texts "toolspec-module")
(declare-function toolspec--mod-kept-texts "toolspec-module")
(declare-function toolspec--mod-kept-plist "toolspec-module")
(declare-function toolspec--mod-kept-to-json "toolspec-module")
(declare-function toolspec--mod-document-frame "toolspec-module")
(declare-function toolspec--mod-validate "toolspec-module")
(declare-function toolspec--mod-gptel-form "toolspec-module")

(defun toolspec--module-ready-p ()
  "Non-nil when the module is loaded and of the right version."
  (and (fboundp 'toolspec--mod-version)
       (equal (toolspec--mod-version) toolspec-version)))

;;;###autoload
(defun toolspec-build-module ()
  "Build the toolspec module and program with cargo, and load the module.
The module goes next to toolspec.el, and so does the `toolspec'
program, which renders Jinja templates (see `toolspec-program').
Needs a Rust toolchain: cargo must be on the variable `exec-path'."
  (interactive)
  (let ((src (toolspec--source-directory))
        (buf (get-buffer-create "*toolspec-build*")))
    (unless src
      (signal 'toolspec-module-error
              (list "Cannot find toolspec's Cargo.toml next to toolspec.el" nil)))
    (unless (executable-find "cargo")
      (signal 'toolspec-module-error
              (list "cargo not found: install Rust (https://rustup.rs) or your distribution's cargo package, then M-x toolspec-build-module" nil)))
    (with-current-buffer buf (erase-buffer))
    (message "Building the toolspec module (cargo build --release)...")
    (let* ((default-directory src)
           (status (call-process "cargo" nil buf t "build" "--release" "--lib" "--bin" "toolspec")))
      (unless (eq status 0)
        (display-buffer buf)
        (signal 'toolspec-module-error
                (list (format "cargo build failed (exit %s): see buffer %s" status (buffer-name buf)) nil)))
      (let ((built (expand-file-name
                    (concat "target/release/libtoolspec"
                            (if (eq system-type 'darwin) ".dylib" module-file-suffix))
                    src)))
        ;; Never write into a module file Emacs may have mapped: copy
        ;; beside it and rename over it, which replaces it atomically.
        (let ((tmp (make-temp-file (expand-file-name "toolspec-module-new" toolspec--directory)
                                   nil module-file-suffix)))
          (copy-file built tmp t)
          (rename-file tmp (toolspec--module-file) t))
        ;; The program, the same way: a render may be running it.
        (let ((program (locate-file "target/release/toolspec" (list src) exec-suffixes))
              (tmp (make-temp-file (expand-file-name "toolspec-new" toolspec--directory))))
          (copy-file program tmp t)
          (set-file-modes tmp #o755)
          (rename-file tmp (expand-file-name (file-name-nondirectory program)
                                             (file-name-directory (toolspec--module-file)))
                       t)))
      (if (fboundp 'toolspec--mod-version)
          (message "Building the toolspec module...done; restart Emacs to use the new module")
        (message "Building the toolspec module...done")
        (toolspec--load-module)))))

(defun toolspec--load-module ()
  "Load the module file and check its version."
  (unless (fboundp 'toolspec--mod-version)
    (module-load (toolspec--module-file)))
  (let ((v (toolspec--mod-version)))
    (unless (equal v toolspec-version)
      (signal 'toolspec-module-error
              (list (format "toolspec-module is version %s but toolspec.el is %s: rebuild it (M-x toolspec-build-module) and restart Emacs" v toolspec-version)
                    nil)))))

(defun toolspec--ensure-module ()
  "Make sure the module is loaded, offering to build it when missing."
  (unless (toolspec--module-ready-p)
    (cond
     ((not module-file-suffix)
      (signal 'toolspec-module-error
              (list "This Emacs was built without dynamic module support (needs --with-modules)" nil)))
     ((file-exists-p (toolspec--module-file))
      (toolspec--load-module))
     ((and (not noninteractive)
           (yes-or-no-p "The toolspec module is not built yet.  Build it now with cargo? "))
      (toolspec-build-module))
     (t
      (signal 'toolspec-module-error
              (list (format "%s is missing: build it with M-x toolspec-build-module or `make' in %s"
                            (toolspec--module-file) (or (toolspec--source-directory) toolspec--directory))
                    nil))))))

;;;; The program

(defcustom toolspec-program nil
  "The `toolspec' program, which renders Jinja templates.
The templates of OpenAPI tools (`x-filter', `x-output-modules',
`x-bootstrap-value') come from strangers: each renders in its own
`toolspec render' process, limited in time and memory (see
`toolspec-template-timeout' and `toolspec-template-max-memory').
nil means the first found of: `toolspec' next to the module file
\(where `toolspec-build-module' and `make' put it), target/release in
the source tree, `toolspec' on the variable `exec-path'."
  :type '(choice (const :tag "Find it" nil) (file :tag "Program"))
  :group 'toolspec-core)

(defcustom toolspec-template-timeout 5
  "Seconds a Jinja template may take to render.
The rendering process is killed after this long, and the template
fails with a `toolspec-template-limit-error'.  Its CPU time is
limited too, to a second more, in case Emacs is not there to kill it."
  :type 'number
  :group 'toolspec-core)

(defcustom toolspec-template-max-memory 512
  "Memory, in MiB, a Jinja template may use to render.
The rendering process cannot allocate more (its thread's stack aside);
a template that needs more fails with a `toolspec-template-limit-error'.
0 means no limit."
  :type 'natnum
  :group 'toolspec-core)

(defun toolspec--find-program (directory)
  "The toolspec program in DIRECTORY, or nil."
  (locate-file "toolspec" (list directory) exec-suffixes
               (lambda (f) (and (file-executable-p f) (not (file-directory-p f))))))

(defun toolspec--program ()
  "The toolspec program to run: `toolspec-program', or the first found.
Signal `toolspec-program-error' when there is none."
  (if toolspec-program
      (let ((program (if (file-name-directory toolspec-program)
                         (expand-file-name toolspec-program)
                       (executable-find toolspec-program))))
        (if (and program (file-executable-p program) (not (file-directory-p program)))
            program
          (signal 'toolspec-program-error
                  (list (format "`toolspec-program' is %S, which is not an executable file" toolspec-program)
                        nil))))
    (let ((src (toolspec--source-directory)))
      (or (toolspec--find-program (file-name-directory (toolspec--module-file)))
          (and src (toolspec--find-program (expand-file-name "target/release" src)))
          (executable-find "toolspec")
          (signal 'toolspec-program-error
                  (list (format "The toolspec program, which renders templates, is missing: build it with M-x toolspec-build-module or `make' in %s, or set `toolspec-program'"
                                (or src toolspec--directory))
                        nil))))))

(defun toolspec--render-request (template json-text)
  "The request for `toolspec render --request': TEMPLATE over JSON-TEXT, as bytes."
  (let ((request (condition-case nil
                     (json-serialize (list (cons 'template template) (cons 'data json-text)
                                           (cons 'version toolspec-version)))
                   (error (signal 'toolspec-json-error
                                  (list "The template or its data is not text (it holds raw bytes, or is not a string): decode it first"
                                        nil))))))
    (if (multibyte-string-p request) (encode-coding-string request 'utf-8-unix t) request)))

(defun toolspec--render-failure (status code errors)
  "Signal the error of a `toolspec render' that ended with STATUS and CODE.
STATUS is `exit' or `signal', CODE the exit status or the signal
\(0 when its output was incomplete).
ERRORS is its standard error: its last JSON line, {\"error\": SYMBOL,
\"message\": TEXT}, names the `toolspec-error' to signal, and may
give the `path', `line' and `column' of its details."
  (let* ((report (cl-some (lambda (line)
                            (let ((v (ignore-errors (json-parse-string line :object-type 'alist))))
                              (and (consp v) (stringp (alist-get 'error v)) (stringp (alist-get 'message v)) v)))
                          (reverse (split-string errors "\n" t))))
         (symbol (and report (intern-soft (alist-get 'error report)))))
    (if (and symbol (memq 'toolspec-error (get symbol 'error-conditions)))
        (signal symbol (list (alist-get 'message report)
                             (cl-loop for key in '(path line column)
                                      for value = (alist-get key report)
                                      when value
                                      append (list (intern (format ":%s" key)) value))))
      (signal 'toolspec-template-error
              (list (format "the toolspec program %s%s"
                            (cond ((eq status 'signal) (format "was killed by signal %s" code))
                                  ((eq code 0) "ended without giving all its output (an older build? M-x toolspec-build-module)")
                                  (t (format "failed (exit status %s)" code)))
                            (let ((text (string-trim errors)))
                              (if (string-empty-p text) "" (concat ": " text))))
                    nil)))))

(defun toolspec--render-output (buffer)
  "The text `toolspec render --request' wrote into BUFFER, or nil.
BUFFER is unibyte; the text is preceded by its length in bytes on a
line of its own.  nil means it has not all arrived yet."
  (with-current-buffer buffer
    (save-excursion
      (goto-char (point-min))
      (when (looking-at "\\([0-9]+\\)\n")
        (let ((start (match-end 0))
              (length (string-to-number (match-string 1))))
          (when (= (- (point-max) start) length)
            (decode-coding-string (buffer-substring-no-properties start (point-max)) 'utf-8-unix t)))))))

(defun toolspec-render-template (template json-text)
  "Render the Jinja TEMPLATE over JSON-TEXT; return the text.
The keys of the JSON object are the template's variables, and the
whole value is also `response' and `data'.  The template renders
sandboxed (no files, environment or network) and within fixed
bounds, in a `toolspec render' process (see `toolspec-program')
killed after `toolspec-template-timeout' seconds and limited to
`toolspec-template-max-memory' MiB.  A template that does not
parse or fails signals `toolspec-template-error'; one beyond a
bound, `toolspec-template-limit-error'."
  (let* ((program (toolspec--program))
         (request (toolspec--render-request template json-text))
         (timeout toolspec-template-timeout)
         (out (generate-new-buffer " *toolspec-render*" t))
         (err (generate-new-buffer " *toolspec-render-errors*" t))
         (errors nil)
         (proc nil)
         (text nil))
    (with-current-buffer out (set-buffer-multibyte nil))
    (unwind-protect
        (progn
          (setq errors (make-pipe-process :name "toolspec-render-errors" :buffer err :noquery t
                                          :coding 'utf-8-unix :sentinel #'ignore))
          (setq proc (condition-case e
                         (make-process
                          :name "toolspec-render" :buffer out :stderr errors
                          :command (list program "render" "--request"
                                         "--max-memory" (number-to-string toolspec-template-max-memory)
                                         "--max-cpu-seconds" (number-to-string (1+ (ceiling timeout))))
                          :connection-type 'pipe :noquery t
                          :coding 'binary :sentinel #'ignore)
                       (file-error
                        (signal 'toolspec-program-error
                                (list (format "Cannot run %s: %s" program (error-message-string e)) nil)))))
          ;; A program that ends before reading it says why on stderr.
          (ignore-errors
            (process-send-string proc request)
            (process-send-eof proc))
          ;; Wait for all the output, or for the process to fail and its
          ;; stderr to end.  Not for sentinels: called from a process
          ;; filter (a response being handled), Emacs may not run them.
          ;; Only this process is read, and no timer runs meanwhile.
          (let ((deadline (+ (float-time) timeout))
                (drained nil))
            (while (and (not (setq text (toolspec--render-output out)))
                        (not drained)
                        (< (float-time) deadline))
              ;; The process may end, its output still in the pipe, between
              ;; a read and the next test: so whether both had ended is
              ;; known before reading, and only a read after that which
              ;; finds nothing says that all the output is in.
              (let ((ended (not (or (process-live-p proc) (process-live-p errors)))))
                (unless (accept-process-output proc 0.02 nil 0)
                  (setq drained ended))
                (accept-process-output errors 0 nil 0)))
            ;; Past the deadline, a process that has ended may still have
            ;; output in the pipe.
            (unless (or text (process-live-p proc))
              (accept-process-output proc 0 nil 0)
              (accept-process-output errors 0 nil 0)
              (setq text (toolspec--render-output out))))
          (cond
           (text text)
           ((process-live-p proc)
            (signal 'toolspec-template-limit-error
                    (list (format "the template took longer than %s second%s" timeout (if (equal timeout 1) "" "s"))
                          nil)))
           (t
            (toolspec--render-failure (process-status proc) (process-exit-status proc)
                                      (with-current-buffer err (buffer-string))))))
      ;; Killed if still running, and gone from `process-list' either way.
      (dolist (p (list proc errors))
        (when p (delete-process p)))
      (kill-buffer out)
      (kill-buffer err))))

;;;; Moving values across

(defvar toolspec-last-import-warnings nil
  "Warnings from the last JSON import: a list of (SEVERITY PATH MESSAGE).
A warning says what was changed to make the input fit: non-standard
type names, unknown ones read as no type constraint.  An error
\(SEVERITY `error') is a tool definition that could not be read: it
was left out, and PATH says where in the input it goes wrong.  With
STRICT, the import signals the first such error instead.  Messages
of the same text may be one string, here and in
`toolspec-last-import-problems': copy one before changing it in place.")

(defvar toolspec-last-import-paths nil
  "Where each tool of the last JSON import is in its input.
A list of JSON paths, one per tool and in the order of the tools,
such as \"tools[1]\" or \"functionDeclarations[0]\"; \"\" is the
whole document (a bare JSON Schema).  Paths are relative to the
document read, like those of `toolspec-last-import-warnings'.")

(defvar toolspec-last-import-problems nil
  "Problems of each tool of the last JSON import, in the order of the tools.
Each element is what `toolspec-validate' returns for that tool: nil
for a tool without problems.")

(defvar toolspec--type-strings nil
  "Non-nil: the module makes the `:type' of the tools it reads strings.
One string for each name (\"string\"), as `gptel-make-tool' turns
the symbols into, in place, walking every tool's args.
`toolspec-import-file' binds it around reading the tools it
registers, and registers them without that walk.")

(defvar toolspec--keep-tools nil
  "Non-nil: the module keeps the tools it reads, for registration.
Bound to t around a read, it is set, in that binding, to the list of
the tools kept, one for each plist read: what `toolspec-register'
keeps as each gptel tool's source (see `toolspec--gptel-sources')
instead of a copy of its plist.  A kept tool is held by the module,
outside the Lisp heap, and exports write it without reading a plist
again.  `toolspec-import-file' and the MCP client bind it.")

(defun toolspec--read (text)
  "Read the elisp TEXT the module printed."
  (car (read-from-string text)))

(defun toolspec--name (x default)
  "X as a string for the module (a symbol or string), or DEFAULT."
  (cond ((null x) default)
        ((symbolp x) (symbol-name x))
        ((stringp x) x)
        (t (signal 'toolspec-unsupported-format (list (format "Expected a symbol, found %S" x) nil)))))

(defmacro toolspec--import (call)
  "The tools of CALL, a module call returning (TOOLS WARNINGS PATHS PROBLEMS).
The rest is kept in `toolspec-last-import-warnings',
`toolspec-last-import-paths' and `toolspec-last-import-problems'.
CALL runs without garbage collection: every object the
module makes is part of its result, so a collection in the middle of
a large import would free nothing and trace the whole heap, once per
collection.  The collection the allocation calls for comes after
CALL, once, as after `json-parse-string', whose C code never
collects while it parses."
  (declare (debug t))
  `(toolspec--unpack (let ((gc-cons-threshold most-positive-fixnum)) ,call)))

(defun toolspec--unpack (result)
  "Unpack RESULT, the module's (TOOLS WARNINGS PATHS PROBLEMS [KEPT]).
KEPT, the tools the module kept, goes to `toolspec--keep-tools' when
it is bound to ask for them."
  (setq toolspec-last-import-warnings (nth 1 result)
        toolspec-last-import-paths (nth 2 result)
        toolspec-last-import-problems (nth 3 result))
  (when toolspec--keep-tools
    (setq toolspec--keep-tools (nth 4 result)))
  (car result))

(defun toolspec--function-info (f)
  "Describe function F for the validator: (toolspec-function CALLABLE MIN MAX)."
  (let ((callable (cond ((and (symbolp f) f (not (fboundp f))) 'unbound)
                        ((functionp f) t)))
        (arity (and (functionp f)
                    (condition-case nil (func-arity f) (error '(0 . many))))))
    (list 'toolspec-function callable
          (if arity (car arity) 0)
          (if arity (cdr arity) 'many)
          (if (symbolp f) (symbol-name f) ""))))

(declare-function gptel-tool-p "ext:gptel")
(declare-function llm-tool-p "ext:llm")

(defvar toolspec--original-names (make-hash-table :test #'eq :weakness 'key)
  "The name each gptel tool registered by toolspec was given in its file.
Registration gives a tool a name every gptel backend takes (see
`toolspec-register'); exports and dispatch use the original.")

(defun toolspec--struct-plist (tool)
  "Plist of a `gptel-tool' or `llm-tool' struct TOOL, or nil."
  (cond
   ((and (fboundp 'gptel-tool-p) (gptel-tool-p tool))
    (cl-loop for slot in '(name description args function async category confirm include)
             for accessor = (intern (format "gptel-tool-%s" slot))
             when (fboundp accessor)
             append (let ((v (funcall accessor tool)))
                      (list (intern (format ":%s" slot))
                            (pcase slot
                              ('args (if (proper-list-p v) (mapcar #'toolspec--symbol-types v) v))
                              ;; The name in its source, not the one made
                              ;; valid for every gptel backend.
                              ('name (gethash tool toolspec--original-names v))
                              (_ v))))))
   ((and (fboundp 'llm-tool-p) (llm-tool-p tool))
    (cl-loop for slot in '(name description args function async)
             for accessor = (intern (format "llm-tool-%s" slot))
             when (fboundp accessor)
             append (list (intern (format ":%s" slot)) (funcall accessor tool))))))

(defun toolspec--symbol-types (spec)
  "Copy of arg SPEC with string `:type' values turned back into symbols.
`gptel-make-tool' turns the symbols of its args into strings in place;
this undoes it so a registered tool reads as it was written."
  (cond
   ((and (consp spec) (keywordp (car spec)))
    (cl-loop for (k v) on spec by #'cddr
             append (list k (cond ((and (eq k :type) (stringp v)) (intern v))
                                  ((and (eq k :type) (vectorp v))
                                   (vconcat (mapcar (lambda (x) (if (stringp x) (intern x) x)) v)))
                                  ((eq k :properties)
                                   (cl-loop for (pk pv) on v by #'cddr
                                            append (list pk (toolspec--symbol-types pv))))
                                  ((memq k '(:items :additionalProperties :not))
                                   (toolspec--symbol-types v))
                                  ((memq k '(:anyOf :oneOf :allOf))
                                   (if (vectorp v) (vconcat (mapcar #'toolspec--symbol-types v)) v))
                                  (t v)))))
   (t spec)))

(defun toolspec--plist (tool)
  "TOOL as a plist: TOOL itself, or the plist of a gptel or llm struct.
A gptel tool toolspec registered gives the plist it was made from,
under its original name."
  (cond ((and (consp tool) (keywordp (car tool))) tool)
        ((when-let* ((source (toolspec--source-plist tool)))
           ;; gptel made its :type symbols strings, in place.
           (toolspec--with-args source (lambda (args) (mapcar #'toolspec--symbol-types args)))))
        ((toolspec--struct-plist tool))
        (t (signal 'toolspec-plist-error
                   (list (format "Expected a tool plist, a gptel-tool or an llm-tool, found %S"
                                 (if (recordp tool) (type-of tool) tool))
                         nil)))))

(defun toolspec--printable (plist)
  "PLIST with values that have no printed form replaced for the module.
`:function' becomes a description of the function; `:confirm' and
`:include' (possibly functions, and of no use in JSON) are left out.
A PLIST that is circular or dotted is a `toolspec-plist-error'."
  (unless (proper-list-p plist)
    (signal 'toolspec-plist-error
            (list "The tool plist is circular or dotted: a tool is a list (:name \"...\" :description \"...\" :args (...))"
                  nil)))
  (cl-loop for (k v) on plist by #'cddr
           unless (memq k '(:confirm :include))
           append (list k (if (eq k :function) (toolspec--function-info v) v))))

(defun toolspec--one-line (string)
  "STRING shown on one line of a list of problems.
Control characters (line breaks among them), the Unicode line and
paragraph separators and the bidirectional controls are written as
escapes (\\n, \\u{202e}): names and messages come from the file
checked, and none may start a line that `next-error' would follow,
or reorder what is shown."
  (replace-regexp-in-string
   (rx (any (0 . 31) 127 (#x80 . #x9f) #x2028 #x2029 (#x202a . #x202e) (#x2066 . #x2069)))
   (lambda (c)
     (pcase (aref c 0)
       (?\n "\\n") (?\r "\\r") (?\t "\\t")
       (ch (format "\\u{%x}" ch))))
   string t t))

(defun toolspec--without-properties (obj budget)
  "OBJ with the strings in it, at any depth, copied without text properties.
Lists and vectors holding such strings are copied; OBJ is not changed.
BUDGET is a cons whose car is how many more objects may be visited:
past it (OBJ is circular), signal `toolspec-plist-error'."
  (when (< (setcar budget (1- (car budget))) 0)
    (signal 'toolspec-plist-error
            (list "The spec is circular: it holds itself, which has no JSON form" nil)))
  (cond ((stringp obj) (substring-no-properties obj))
        ((consp obj)
         (let ((items nil))
           (while (consp obj)
             (push (toolspec--without-properties (car obj) budget) items)
             (setq obj (cdr obj)))
           (let ((copy (nreverse items)))
             (setcdr (last copy) (toolspec--without-properties obj budget))
             copy)))
        ((vectorp obj) (vconcat (mapcar (lambda (x) (toolspec--without-properties x budget)) obj)))
        (t obj)))

(defun toolspec--print (obj)
  "Print OBJ readably for the module.
Strings with text properties (printed #(\"...\" 0 3 (face bold)), which
the module would take for vectors) are printed without them."
  (let ((print-length nil) (print-level nil) (print-circle nil)
        (print-escape-newlines nil) (print-escape-nonascii nil)
        (print-escape-multibyte nil) (print-escape-control-characters nil)
        (print-quoted t) (float-output-format nil)
        (print-integers-as-characters nil))
    (condition-case err
        (let ((text (prin1-to-string obj)))
          ;; #(" starts a string with properties, and is rare otherwise
          ;; (a string ending in #( before its closing quote).
          (if (string-search "#(\"" text)
              ;; Each object printed takes a character at least.
              (prin1-to-string (toolspec--without-properties obj (list (length text))))
            text))
      (toolspec-error (signal (car err) (cdr err)))
      (error
       (signal 'toolspec-limit-error
               (list (format "Cannot pass the spec to toolspec: %s (is it circular or nested too deeply?)"
                             (error-message-string err))
                     nil))))))

;;;; Public API

(defun toolspec-parse-json (string &optional format strict)
  "Parse STRING, JSON tool definitions, into a list of tool plists.
FORMAT is a symbol among `toolspec-formats'; nil or `auto' detects
it (per tool, so arrays and wrappers such as {\"tools\": [...]} may
mix formats).  An OpenAPI document (JSON, or YAML) gives one tool
per operation; `toolspec-read-openapi' selects operations.  The
plists follow the gptel/llm rules and carry no `:function'.  What
was changed to make the input fit is left in
`toolspec-last-import-warnings'.  A tool definition that cannot be
read is left out, with an error among those warnings; when no tool
can be read, or with STRICT non-nil when one cannot, that error is
signalled.  Strings of the same short text (names, enum values,
paths) may be one string: copy one before changing it in place."
  (toolspec--ensure-module)
  (toolspec--import
   (toolspec--mod-parse-json string (toolspec--name format nil) nil toolspec-max-input-size t strict)))

(defun toolspec-read-file (file &optional format strict)
  "Read FILE, JSON tool definitions, into a list of tool plists.
FORMAT and STRICT are as in `toolspec-parse-json', and so are the
strings.  A bare JSON Schema without `title' is named after FILE.
Errors carry `:file' in their details."
  (toolspec--ensure-module)
  (let ((file (expand-file-name file)))
    (condition-case err
        (toolspec--import
         (toolspec--mod-read-file file (toolspec--name format nil)
                                  (file-name-base file) toolspec-max-input-size t strict))
      (toolspec-error
       (let ((details (toolspec-error-details err)))
         (signal (car err)
                 (list (format "%s: %s" (abbreviate-file-name file) (cadr err))
                       (append (list :file file)
                               (and (not (plist-member details :message))
                                    (stringp (cadr err))
                                    (list :message (cadr err)))
                               details))))))))

(defun toolspec-to-json (tool &optional dialect)
  "Return TOOL as a JSON string in DIALECT.
TOOL is a tool plist, a `gptel-tool' or an `llm-tool'.  DIALECT is
a symbol among `toolspec-dialects', default `toolspec-default-dialect'."
  (toolspec--ensure-module)
  (toolspec--mod-to-json (toolspec--print (toolspec--printable (toolspec--plist tool)))
                         (toolspec--name dialect (symbol-name toolspec-default-dialect))
                         nil nil))

(defun toolspec-tools-to-json (tools &optional dialect pretty)
  "Return TOOLS as one JSON document in DIALECT.
TOOLS is a list of plists or structs.  The document is what clients
load: an array for OpenAI and Anthropic, {\"tools\": [...]} for MCP and
Bedrock, {\"functionDeclarations\": [...]} for Gemini.  PRETTY
non-nil indents it.  The compact text of each tool is kept for the
next export, for as long as the tool lives and is `equal' to what it
was (see `toolspec--export-cache')."
  (toolspec--ensure-module)
  (let ((dialect (toolspec--name dialect (symbol-name toolspec-default-dialect))))
    (let* ((names (mapcar #'toolspec--export-name tools))
           (renames (toolspec--export-renames tools dialect names))
           ;; A renamed tool's text is kept under its new name: a name
           ;; made valid in another document may differ.
           (texts (and (not pretty) (toolspec--tool-texts tools dialect renames names)))
           ;; Indented, tools the module kept are written from what it
           ;; holds, when all are (see `toolspec--keep-tools').
           (kept (and pretty (toolspec--kept-sources tools)))
           ;; `json-serialize' failed on the tools already: not tried again.
           (serialized (and (not kept) (not (eq texts 'unserializable)) (not (consp texts))
                            (toolspec--serialize tools))))
      (cond
       ((consp texts)
        ;; The texts copied once into the document, not twice (a
        ;; `mapconcat' inside a `concat'): a large export is megabytes.
        (let ((frame (toolspec--mod-document-frame dialect)))
          (apply #'concat (car frame)
                 (nconc (cl-loop for (text . more) on texts
                                 collect text when more collect ",")
                        (list (cdr frame))))))
       (kept (toolspec--mod-kept-to-json
              kept (vconcat (cl-mapcar (lambda (name new) (or new name))
                                       names (or renames (make-list (length names) nil))))
              dialect pretty))
       (serialized (toolspec--mod-serialized-to-json serialized dialect pretty))
       (t (toolspec--mod-to-json
           (toolspec--print (mapcar (lambda (tool) (toolspec--printable (toolspec--plist tool))) tools))
           dialect t pretty))))))

(defvar toolspec--export-cache (make-hash-table :test #'eq :weakness 'key)
  "The compact JSON of tools exported before, for the next export.
Each TOOL maps to (KEY . ((SLOT . TEXT) ...)).  SLOT is the dialect,
or (DIALECT . NAME) for a text written under NAME instead of the
tool's own name.  For a gptel tool toolspec registered, KEY is
\(SOURCE . NAME): the plist it was registered from, which never
changes (see `toolspec--gptel-sources'), and a copy of the name it
was exported under; a TEXT is used while the tool has that source
and is exported under a name `equal' to NAME.  For any other tool,
KEY is a copy of its `toolspec--export-key' when TEXT was written,
strings included, and a TEXT is used only while the tool's key is
still `equal' to KEY, so any change to the tool, in place or not,
makes it written again.  Keys are weak: a tool no longer referenced
elsewhere leaves the table at the next garbage collection.  The
entry under `toolspec--export-renames' is the last export's names:
\(DIALECT NAMES-JSON . NEW-NAMES), see `toolspec--export-renames'.")

(defun toolspec--export-renames (tools dialect &optional names)
  "Warn of the names of TOOLS that DIALECT refuses; return the new names.
NAMES are the names TOOLS are exported under, when known.
The writer gives them new names, made valid and different from the
other tools' (see `toolspec-safe-names').  Return nil when every
name is kept, else a list as long as TOOLS: nil for a name kept,
else its new name.  The new names depend on DIALECT and the names
alone: those of the last export are kept in `toolspec--export-cache'
and used again while the names are the same as that export's."
  (let* ((names (or names (mapcar #'toolspec--export-name tools)))
         ;; The names as the module takes them, also what they are
         ;; compared by: a name changed in place is a new name.
         (json (and (cl-every #'stringp names) (json-serialize (vconcat names))))
         (kept (gethash 'toolspec--export-renames toolspec--export-cache))
         (new (cond ((null json) nil)
                    ((and kept (equal (car kept) dialect) (string= (cadr kept) json))
                     (cddr kept))
                    (t (let ((new (toolspec--safe-names-of-json json (length names) dialect)))
                         (puthash 'toolspec--export-renames (cons dialect (cons json new))
                                  toolspec--export-cache)
                         new))))
         (count (cl-count-if #'identity new)))
    (when (> count 0)
      (display-warning 'toolspec
                       (format "%d tool name%s %s refuses %s written as valid ones: %s"
                               count (if (= count 1) "" "s") dialect (if (= count 1) "was" "were")
                               (toolspec--renamed-pairs names new "%s -> %s" count))
                       :warning)
      new)))

(defun toolspec--renamed-pairs (names new pair count)
  "The first ten of NAMES that NEW renames, and how many more, as text.
NEW is as `toolspec-safe-names' returns it for NAMES, renaming COUNT
of them; PAIR formats an old name and its new one.  Only ten: a
catalog may rename thousands."
  (concat (mapconcat #'identity
                     (cl-loop for old in names for n in new
                              when n collect (format pair old n)
                              and count t into shown
                              until (>= shown 10))
                     ", ")
          (if (> count 10) (format " and %d more" (- count 10)) "")))

(declare-function gptel-tool-name "ext:gptel")
(declare-function gptel-tool-description "ext:gptel")
(declare-function gptel-tool-args "ext:gptel")
(declare-function llm-tool-name "ext:llm")
(declare-function llm-tool-description "ext:llm")
(declare-function llm-tool-args "ext:llm")

(defvar toolspec--gptel-sources (make-hash-table :test #'eq :weakness 'key)
  "The plist each gptel tool toolspec registered was made from.
Its `:name' is the registered name.  For a tool the module kept
as it read it (see `toolspec--keep-tools'), that tool instead:
the module writes it, and makes its plist again when asked.
Exports write the tool from it,
with the original name, so that what gptel's struct has no slot for
\(root schema keywords, tool-level keys) is not lost; what gptel sends
for the tool is written from it too (see `toolspec-gptel-send-own-json').
Nothing changes it once registered, and nothing outside toolspec holds
it or a list or vector in it (gptel's struct has its own lists and
vectors of the args; the strings are shared, and neither toolspec nor
gptel changes a string in place): so the text an export wrote from it
stays right for as long as it is the tool's source, and the next
export finds it without comparing the plist (see
`toolspec--export-cache').")

(defun toolspec--kept-sources (tools)
  "The tools the module kept that TOOLS were registered from, or nil.
A vector, when TOOLS are gptel tools each registered from one (see
`toolspec--gptel-sources'), else nil."
  (let ((kept (make-vector (length tools) nil)))
    (and tools
         (cl-loop for tool in tools
                  for i from 0
                  for source = (and (recordp tool) (gethash tool toolspec--gptel-sources))
                  always (user-ptrp source)
                  do (aset kept i source))
         kept)))

(defun toolspec--export-name (tool)
  "The name TOOL (a plist or struct) is exported under: its original name."
  (cond
   ((and (consp tool) (keywordp (car tool))) (plist-get tool :name))
   ((gethash tool toolspec--original-names))
   ((and (fboundp 'gptel-tool-p) (gptel-tool-p tool)) (gptel-tool-name tool))
   ((and (fboundp 'llm-tool-p) (llm-tool-p tool)) (llm-tool-name tool))))

(defun toolspec--source-plist (tool)
  "The plist gptel tool TOOL was registered from, under its original name.
Nil if toolspec did not register TOOL."
  (when-let* ((source (and (recordp tool) (gethash tool toolspec--gptel-sources))))
    (plist-put (if (user-ptrp source)
                   (toolspec--mod-kept-plist source)
                 (copy-sequence source))
               :name (toolspec--export-name tool))))

(defun toolspec--export-key (tool)
  "What of TOOL its JSON is written from, as a plist.
That is its plist without the keys that have no JSON form.  Signal
`wrong-type-argument' if TOOL is not a tool."
  (cond
   ((when-let* ((source (toolspec--source-plist tool)))
      (toolspec--export-key source)))
   ((and (fboundp 'gptel-tool-p) (gptel-tool-p tool))
    (list :name (toolspec--export-name tool) :description (gptel-tool-description tool)
          :args (gptel-tool-args tool)))
   ((and (fboundp 'llm-tool-p) (llm-tool-p tool))
    (list :name (llm-tool-name tool) :description (llm-tool-description tool)
          :args (llm-tool-args tool)))
   ((and (consp tool) (keywordp (car tool)))
    (cl-loop for (k v) on tool by #'cddr
             unless (memq k '(:function :async :category :confirm :include))
             append (list k v)))
   (t (signal 'wrong-type-argument (list 'toolspec-tool-p tool)))))

(defun toolspec--serial-item (key)
  "KEY, a `toolspec--export-key', as `json-serialize' is to take it.
`:args' becomes a vector: the list of arg plists would read as an
object."
  (toolspec--with-args key #'vconcat))

(defun toolspec--with-args (plist f)
  "A copy of PLIST (its top level) whose `:args' value is F of it."
  (let* ((copy (copy-sequence plist))
         (cell (plist-member copy :args)))
    (when cell
      (setcar (cdr cell) (funcall f (cadr cell))))
    copy))

(defun toolspec--json-serialize (items)
  "The JSON text of ITEMS, a vector of `toolspec--serial-item's.
Signal if one of them has no JSON form."
  (json-serialize items :null-object :null :false-object :json-false))

(defun toolspec--serialize (tools)
  "TOOLS as JSON text by `json-serialize', for the module; nil if they can't be.
Each tool becomes its `toolspec--serial-item'.  Registered gptel tools
have string types, which `json-serialize' takes; a plist with symbols
in it (`:type string') cannot be serialised, and nil tells the caller
to print it instead."
  (and (fboundp 'json-serialize)
       (condition-case nil
           (toolspec--json-serialize
            (vconcat (mapcar (lambda (tool) (toolspec--serial-item (toolspec--export-key tool))) tools)))
         (error nil))))

(defun toolspec--registered-item (source name)
  "The `toolspec--serial-item' of SOURCE, a registered tool's plist, named NAME.
As that of its `toolspec--export-key' under NAME, made in one pass."
  (let ((item nil) (named nil))
    (while source
      (let ((k (car source)))
        (cond ((eq k :name) (setq named t item (cons name (cons k item))))
              ((eq k :args) (setq item (cons (vconcat (cadr source)) (cons k item))))
              ((memq k '(:function :async :category :confirm :include)))
              (t (setq item (cons (cadr source) (cons k item))))))
      (setq source (cddr source)))
    (if named (nreverse item) (nreverse (cons name (cons :name item))))))

(defun toolspec--kept-text (texts dialect name)
  "The text in TEXTS, a cache entry's alist, for DIALECT and NAME.
NAME is the name the tool is written under instead of its own, or
nil for its own."
  (if name
      (cl-loop for (slot . text) in texts
               when (and (consp slot) (equal (car slot) dialect) (equal (cdr slot) name))
               return text)
    (cdr (assoc dialect texts))))

(defconst toolspec--texts-part 512
  "Fewest tools in a part of those `toolspec--tool-texts' has written.")

(defun toolspec--texts-parts (items)
  "ITEMS, a list, in parts of `toolspec--texts-part' or more, in order.
As many parts of equal size as fit, four at most.  The module writes
the texts of a part while Emacs serialises the next one: on more than
one core, the serialisation costs no time."
  (let* ((n (length items))
         (k (max 1 (min 4 (/ n toolspec--texts-part)))))
    (if (= k 1)
        (list items)
      (let ((size (/ (+ n k -1) k))
            (parts nil))
        (while items
          (let ((part nil))
            (dotimes (_ size)
              (when items (push (pop items) part)))
            (push (nreverse part) parts)))
        (nreverse parts)))))

(defun toolspec--tool-texts (tools dialect &optional new-names names)
  "The compact JSON text of each of TOOLS in DIALECT (a string), as a list.
NEW-NAMES, nil or a list as long as TOOLS, gives the name a tool is
written under instead of its own (nil: its own); such a text is kept
for that name.  NAMES, when given, are the names TOOLS are exported
under (`toolspec--export-name').  Texts come from
`toolspec--export-cache' where they can, the module writes the
others and they are kept there.  Return
`unserializable' when `json-serialize' can't take a tool (a symbol
in it, say), nil when TOOLS are not tools or the module fails on
one: the caller takes the way that reports it."
  (when (fboundp 'json-serialize)
    (catch 'toolspec--tool-texts
      (condition-case nil
          (let* ((tools (vconcat tools))
                 (n (length tools))
                 (new (and new-names (vconcat new-names)))
                 (names (if names (vconcat names) (cl-map 'vector #'toolspec--export-name tools)))
                 ;; Registered tools' source plists (see
                 ;; `toolspec--export-cache'); the others' keys, made
                 ;; only for them, and for the tools written.
                 (marks (make-vector n nil))
                 (keys (make-vector n nil))
                 (texts (make-vector n nil))
                 (misses nil))
            (dotimes (i n)
              (let* ((tool (aref tools i))
                     (mark (and (recordp tool) (gethash tool toolspec--gptel-sources)))
                     (entry (gethash tool toolspec--export-cache))
                     (text (and entry
                                (if mark
                                    (let ((key (car entry)))
                                      (and (eq (car-safe key) mark)
                                           (equal (cdr key) (aref names i))))
                                  (equal (car entry) (aset keys i (toolspec--export-key tool))))
                                (toolspec--kept-text (cdr entry) dialect (and new (aref new i))))))
                (aset marks i mark)
                (if text (aset texts i text) (push i misses))))
            (setq misses (nreverse misses))
            ;; The tools the module kept (see `toolspec--keep-tools'),
            ;; written from what it holds.
            (when-let* ((kept (cl-remove-if-not (lambda (i) (user-ptrp (aref marks i))) misses)))
              (setq misses (cl-remove-if (lambda (i) (user-ptrp (aref marks i))) misses))
              (cl-loop for i in kept
                       for text in (toolspec--mod-kept-texts
                                    (cl-map 'vector (lambda (i) (aref marks i)) kept)
                                    (cl-map 'vector (lambda (i) (or (and new (aref new i)) (aref names i))) kept)
                                    dialect)
                       do (aset texts i (string-to-multibyte text))
                       (toolspec--keep-text (aref tools i) (cons (aref marks i) (copy-sequence (aref names i)))
                                            (if (and new (aref new i)) (cons dialect (aref new i)) dialect)
                                            (aref texts i))))
            (when misses
              (let* ((serialize
                      (lambda (part)
                        (condition-case nil
                            (toolspec--json-serialize
                             (vconcat
                              (mapcar (lambda (i)
                                        (let ((mark (aref marks i))
                                              (name (and new (aref new i))))
                                          (if mark
                                              (toolspec--registered-item mark (or name (aref names i)))
                                            (let ((item (toolspec--serial-item
                                                         (or (aref keys i)
                                                             (aset keys i (toolspec--export-key (aref tools i)))))))
                                              (if name (plist-put item :name name) item)))))
                                      part)))
                          (error 'unserializable))))
                     ;; Every tool written is a registered one: no copies
                     ;; of keys are needed, and the texts are written part
                     ;; by part (see `toolspec--texts-parts').
                     (registered (cl-every (lambda (i) (aref marks i)) misses))
                     (parts (if registered (toolspec--texts-parts misses) (list misses)))
                     (json (funcall serialize (car parts)))
                     (written nil)
                     (copies nil))
                (while parts
                  (when (eq json 'unserializable)
                    (throw 'toolspec--tool-texts 'unserializable))
                  (let* ((next (cadr parts))
                         (next-json nil)
                         (out (toolspec--mod-serialized-to-texts
                               json dialect
                               (cond
                                ;; The next part serialised while the
                                ;; module writes this one.
                                (next (lambda () (setq next-json (funcall serialize next))))
                                (registered #'ignore)
                                ;; While the module writes the texts:
                                ;; fresh copies of the keys, strings and
                                ;; all, from the text they were
                                ;; serialised to.
                                (t (let ((json json))
                                     (lambda ()
                                       (json-parse-string json :object-type 'plist :array-type 'array
                                                          :null-object :null :false-object :json-false))))))))
                    (push (car out) written)
                    (setq copies (cdr out)
                          json next-json
                          parts (cdr parts))))
                (setq written (apply #'nconc (nreverse written)))
                (cl-loop for i in misses
                         for k from 0
                         ;; An ASCII text comes unibyte (see
                         ;; `toolspec--mod-serialized-to-texts').
                         for text = (string-to-multibyte (pop written))
                         for mark = (aref marks i)
                         for slot = (if (and new (aref new i)) (cons dialect (aref new i)) dialect)
                         for key = (if mark
                                       (cons mark (copy-sequence (aref names i)))
                                     (let* ((copy (aref copies k))
                                            (args (plist-member copy :args)))
                                       (when args
                                         (setcar (cdr args) (append (cadr args) nil)))
                                       (if (and new (aref new i))
                                           (plist-put copy :name (plist-get (aref keys i) :name))
                                         copy)))
                         do (aset texts i text)
                         ;; A copy serialises as its key did, so its text
                         ;; is the text of any key `equal' to it.  A key
                         ;; whose copy differs from it (an alist read back
                         ;; as a plist, say) is not found again, and is
                         ;; written again at each export.
                         (toolspec--keep-text (aref tools i) key slot text))))
            (append texts nil))
        (error nil)))))

(defun toolspec--keep-text (tool key slot text)
  "Keep TEXT, TOOL's JSON, in `toolspec--export-cache' under KEY and SLOT.
An entry of TOOL under another key is replaced."
  (let ((entry (gethash tool toolspec--export-cache)))
    (if (and entry (equal (car entry) key))
        (unless (assoc slot (cdr entry))
          (setcdr entry (cons (cons slot text) (cdr entry))))
      (puthash tool (list key (cons slot text)) toolspec--export-cache))))

(defun toolspec-validate (tool)
  "Check TOOL and return its problems, nil when there are none.
TOOL is a plist, a `gptel-tool' or an `llm-tool'.  Each problem is
\(SEVERITY PATH MESSAGE): SEVERITY `error' or `warning', PATH where
in the spec (e.g. \"args[2].items.properties.r\"), MESSAGE what is
wrong and what would be right."
  (toolspec--ensure-module)
  (toolspec--read (toolspec--mod-validate (toolspec--print (toolspec--printable (toolspec--plist tool))))))

(defun toolspec-format-problem (problem)
  "Format PROBLEM, as returned by `toolspec-validate', for display."
  (pcase-let ((`(,severity ,path ,message) problem))
    (if (equal path "")
        (format "%s: %s" severity message)
      (format "%s: %s: %s" severity path message))))

(defun toolspec--plural (n word)
  "N and WORD, in the plural unless N is 1."
  (format "%d %s%s" n word (if (= n 1) "" "s")))

(defun toolspec--problem-kinds (lists &optional severity)
  "How many problems of each kind LISTS have, as text; nil if none.
LISTS is a list of problem lists, each as `toolspec-validate' returns
it.  Only problems of SEVERITY count, or every one when SEVERITY is
nil.  A problem's kind is the `toolspec-code' of its message, `other'
when it has none.  The six most frequent kinds come first, then how
many other kinds there are: a file of thousands of tools may have
thousands of problems of a few kinds, and this says which."
  (let ((counts (make-hash-table :test #'eq))
        (kinds nil))
    (dolist (problems lists)
      (dolist (p problems)
        (when (or (null severity) (eq (car p) severity))
          (let* ((message (nth 2 p))
                 (code (or (and (stringp message) (> (length message) 0)
                                (get-text-property 0 'toolspec-code message))
                           'other)))
            (unless (gethash code counts) (push code kinds))
            (puthash code (1+ (gethash code counts 0)) counts)))))
    (when kinds
      ;; Most frequent first; among equals, in the order first met
      ;; (`sort' is stable).
      (setq kinds (sort (nreverse kinds) (lambda (a b) (> (gethash a counts) (gethash b counts)))))
      (let ((rest (- (length kinds) 6)))
        (concat (mapconcat (lambda (k) (format "%d %s" (gethash k counts) k)) (seq-take kinds 6) ", ")
                (if (> rest 0) (concat ", and " (toolspec--plural rest "other kind")) ""))))))

(defun toolspec-check (tool)
  "Return TOOL if it has no errors, else signal `toolspec-invalid-spec'.
The error's details hold all problems under `:problems'; warnings
do not make TOOL invalid."
  (toolspec--check-problems tool (toolspec-validate tool)))

(defun toolspec--check-problems (tool problems)
  "Return TOOL, whose PROBLEMS are given, as `toolspec-check' does."
  ;; Most tools of a large import have no error: found without a call
  ;; per problem.
  (when (assq 'error problems)
    (let* ((errors (cl-remove-if-not (lambda (p) (eq (car p) 'error)) problems))
           (plist (ignore-errors (toolspec--plist tool)))
           (name (and (consp plist) (plist-get plist :name))))
      (signal 'toolspec-invalid-spec
              (list (concat (if (stringp name) (format "tool \"%s\": " name) "")
                            (mapconcat #'toolspec-format-problem errors "; "))
                    (list :problems problems :tool name)))))
  tool)

(defun toolspec-gptel-form-text (tool &optional function category comments)
  "Return the source text of a `gptel-make-tool' form defining TOOL.
TOOL is a plist, a `gptel-tool' or an `llm-tool'.  FUNCTION is the
form for `:function' (default `#\='ignore'), CATEGORY an optional
category string.  With COMMENTS non-nil, comments before the form
name the function to define (when FUNCTION is `#\='NAME') and list
TOOL's problems.  The form reads as a person would write it:
`:args' as a `list' of quoted arg plists, one per line, a plist
too long for a line with one key per line.  It is indented as
`indent-region' indents Emacs Lisp, and ends with a newline.  Keys
gptel has no use for are left out.  The command line's `toolspec
convert --to elisp' writes the same text."
  (toolspec--ensure-module)
  (toolspec--mod-gptel-form (toolspec--print (toolspec--printable (toolspec--plist tool)))
                            (if function (toolspec--print function) "")
                            category (and comments t)))

(defun toolspec-gptel-form (tool &optional function category)
  "Return a `gptel-make-tool' form to define TOOL, a plist.
FUNCTION is the form for `:function' (default `#\='ignore'), CATEGORY
an optional category string.  The form is the one
`toolspec-gptel-form-text' writes, read: it evaluates to the gptel
tool, with `:args' as a `list' of quoted arg plists.  Keys gptel has
no use for are left out."
  (car (read-from-string (toolspec-gptel-form-text tool function category))))

;; Load the module now if it is there; otherwise the first call offers to
;; build it.
(when (and module-file-suffix (file-exists-p (toolspec--module-file)))
  (toolspec--load-module))

(provide 'toolspec)
;;; toolspec.el ends here
