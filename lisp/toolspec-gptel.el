;;; toolspec-gptel.el --- Register JSON tool specs with gptel and llm -*- lexical-binding: t -*-

;; Copyright (C) 2026 The toolspec authors

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

;; Import JSON tool files as working gptel tools, and export registered
;; tools for other clients.
;;
;;   (toolspec-import-file "~/tools/weather.json"
;;                         :functions '(("get_weather" . my-weather)))
;;
;; JSON carries no code: each imported tool gets its function from
;; `toolspec-function-resolvers'.  Binding by name to an elisp function
;; is never implicit: without a binding the tool answers the model that
;; it has no implementation here.  Every tool registered through
;; toolspec checks the arguments the model sends against its JSON
;; Schema before its function runs, and hands the function nil, not
;; `:json-false' or `:null', for false and null.
;;
;; gptel sends a tool's registered name to whichever backend is in
;; use, so a name some backend refuses ("math.sum") is registered as
;; one every backend takes ("math_sum"), with a warning; the tool keeps
;; its original name for binding, dispatch, describing and export
;; (`toolspec-original-name').  And gptel sends, for the tools toolspec
;; registered, toolspec's own JSON for the backend's dialect instead of
;; its own serialisation (`toolspec-gptel-send-own-json').

;;; Code:

(require 'cl-lib)
;; `when-let*', `if-let*' and `string-empty-p' are subr-x's on Emacs 28.
(eval-when-compile (require 'subr-x))
(when (< emacs-major-version 29) (require 'subr-x))
(require 'toolspec)
(require 'toolspec-openapi)

(declare-function gptel-make-tool "ext:gptel-request")
(declare-function gptel--make-tool "ext:gptel-request")
(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-category "ext:gptel-request")
(declare-function gptel-tool-p "ext:gptel-request")
(declare-function gptel-get-tool "ext:gptel-request")
(declare-function llm-make-tool "ext:llm")
(declare-function mcp-make-text-tool "ext:mcp-hub")
(declare-function toolspec-ui--preview-file "toolspec-ui")
(declare-function toolspec-ui--export-read-args "toolspec-ui")
(declare-function toolspec-ui--export-report "toolspec-ui")
(defvar gptel--known-tools)
(defvar gptel-tools)

;;;; Options

(defcustom toolspec-tool-directories nil
  "Directories whose JSON tool files `toolspec-load-tool-directories' imports."
  :type '(repeat directory)
  :group 'toolspec-gptel)

(defcustom toolspec-tool-file-regexp "\\.json\\'"
  "Regexp matching the tool spec files in `toolspec-tool-directories'."
  :type 'regexp
  :group 'toolspec-gptel)

(defcustom toolspec-function-alist nil
  "Alist mapping tool names (strings) to the elisp functions that run them.
This is how a tool imported from JSON gets its function: name it
here, or pass `:functions' when importing.  A JSON file can never
bind a tool to a function by itself.

An entry (NAME FUNCTION :source SOURCES) binds the tool NAME to
FUNCTION only in the tools registered from SOURCES: a file name, a
directory (for the files in it), another `:source' given to
`toolspec-register' (such as a buffer's), or a list of these.

An entry (NAME . FUNCTION) binds NAME in every import, so any file
naming a tool NAME would get FUNCTION, under its own description:
a tool bound by such an entry asks before each call, whatever the
`:confirm' import option says (and `toolspec-make-llm-tools', whose
tools cannot ask, leaves it unbound).  Give the entry `:source' to
have it bound without the question."
  :type '(repeat (choice (cons :tag "Any source" (string :tag "Tool name") function)
                         (list :tag "Some sources" (string :tag "Tool name") function
                               (const :source)
                               (choice (string :tag "File or directory")
                                       (repeat (string :tag "File or directory"))))))
  :group 'toolspec-gptel)

(defcustom toolspec-activate-tools nil
  "When non-nil, tools toolspec registers are also made active.
Active tools are those in `gptel-tools': gptel offers them to the
model in every request.  With nil, the default, tools are only
registered: pick them in `gptel-menu' (its Tools), or press a in
the import preview (`toolspec-import-register-and-activate').  The
`:activate' option of `toolspec-register' overrides this for one
import."
  :type 'boolean
  :group 'toolspec-gptel)

(defcustom toolspec-function-resolvers
  '(toolspec-resolve-from-options
    toolspec-resolve-from-alist
    toolspec-resolve-executor
    toolspec-resolve-mcp)
  "Functions tried in order to find what runs an imported tool.
Each is called with the tool plist and the import options (a plist)
and returns nil, a function, or a plist (:function F [:async BOOL]
\[:confirm BOOL]).  The first non-nil answer wins; when none
answers, the tool tells the model it has no implementation."
  :type '(repeat function)
  :group 'toolspec-gptel)

(defcustom toolspec-check-arguments t
  "When non-nil, check tool call arguments against the tool's schema.
A call whose arguments do not match is not run: the model receives
a short error saying which argument is wrong and what was expected."
  :type 'boolean
  :group 'toolspec-gptel)

(defcustom toolspec-normalize-arguments t
  "When non-nil, JSON false and null reach tool functions as nil.
Otherwise they arrive as gptel parses them (`:json-false', `:null')."
  :type 'boolean
  :group 'toolspec-gptel)

(defcustom toolspec-gptel-send-own-json t
  "Whether gptel sends toolspec's JSON for the tools toolspec registered.
gptel builds each request's tools from the registered plists by its
own rules, per backend, and some of what it sends a backend refuses
\(its Gemini backend passes `exclusiveMinimum', `const' and type lists
through, which Gemini rejects).  When non-nil, the tools toolspec
registered are sent as toolspec writes them for the backend's
dialect (see `toolspec-to-json'): `gemini', `anthropic', `bedrock',
`openai-responses', `ollama', or `openai' for every other
OpenAI-compatible backend.  Other tools are sent as gptel makes them.
This is advice around `gptel--parse-tools'."
  :type 'boolean
  :group 'toolspec-gptel)

(autoload 'toolspec-http-make-executor "toolspec-http")
(autoload 'toolspec-gloodata-executor "toolspec-gloodata")
(autoload 'toolspec-arcade-executor "toolspec-arcade")
(autoload 'toolspec-skydeck-executor "toolspec-skydeck")

(defvar toolspec-executor-makers
  '(("openapi" . toolspec-http-make-executor)
    ("gloodata" . toolspec-gloodata-executor)
    ("arcade" . toolspec-arcade-executor)
    ("skydeck" . toolspec-skydeck-executor))
  "Alist (TYPE . MAKER) of the executors tool formats can carry.
TYPE is a string.  A tool plist with `:executor' (:type TYPE ...) is
bound by calling MAKER with the tool plist and the import options;
it returns what a resolver returns (a function, or a plist with
`:function', `:async' and `:confirm').  \"openapi\" runs HTTP API
operations (toolspec-http.el); the others are in toolspec-gloodata.el,
toolspec-arcade.el and toolspec-skydeck.el.
Each file is loaded when a tool of its kind is first bound.")

;;;; Arguments

(defun toolspec-gptel--normalize-value (v)
  "V with `:json-false' and `:null' turned into nil, recursively."
  (cond ((memq v '(:json-false :null)) nil)
        ((and (consp v) (keywordp (car v)))
         (cl-loop for (k x) on v by #'cddr append (list k (toolspec-gptel--normalize-value x))))
        ((vectorp v) (vconcat (mapcar #'toolspec-gptel--normalize-value v)))
        (t v)))

(defvar toolspec-gptel--checkers (make-hash-table :test 'eq :weakness 'key)
  "Compiled argument checkers, by tool plist.")

(declare-function toolspec--mod-compile-args "toolspec-module")
(declare-function toolspec--mod-last-import-size "toolspec-module")
(declare-function toolspec--mod-check-args "toolspec-module")
(declare-function toolspec--mod-kept-texts "toolspec-module")

(defun toolspec-gptel--checker (tool)
  "The compiled argument checker of TOOL (a plist or struct), cached."
  (or (gethash tool toolspec-gptel--checkers)
      (progn
        (toolspec--ensure-module)
        (puthash tool (toolspec--mod-compile-args
                       (toolspec--print (toolspec--printable (toolspec--plist tool))))
                 toolspec-gptel--checkers))))

(defun toolspec-gptel--check-call (checker args kind)
  "Problems of ARGS under CHECKER.
KIND is \"positional\" (ARGS the list of values a tool function
receives), \"object\" (ARGS one plist or alist) or \"json\" (ARGS a
JSON object text).  Lisp values are read by the schema: nil is null
where null is allowed, false for a boolean, and otherwise missing."
  (toolspec--read (toolspec--mod-check-args
                   checker (if (equal kind "json") args (toolspec--print args)) kind)))

(defun toolspec-validate-arguments (tool args)
  "Check ARGS, the arguments a model sent, against TOOL's schema.
TOOL is a tool plist or a registered gptel tool (a struct or its
name).  ARGS is the arguments object as the model sent it: a JSON
string, or a plist as gptel parses it.  Returns nil when ARGS are
valid, else a list of (error PATH MESSAGE), PATH the argument path
such as \"unit\" or \"opts.days[2]\" (empty for the object itself)."
  (let ((tool (toolspec-gptel--as-tool tool)))
    (toolspec-gptel--check-call (toolspec-gptel--checker tool) args (if (stringp args) "json" "object"))))

(defun toolspec-gptel--call-error (name problems)
  "The text the model receives when its call of tool NAME has PROBLEMS."
  (format "Error: invalid arguments for tool %s: %s. Call it again with arguments that match its schema."
          name
          (mapconcat (lambda (p)
                       (if (equal (nth 1 p) "")
                           (nth 2 p)
                         (format "%s: %s" (nth 1 p) (nth 2 p))))
                     problems "; ")))

(defvar toolspec-gptel--unchecked (make-hash-table :test 'eq :weakness 'key)
  "Tool plists whose argument checker could not be compiled, once warned of.")

(defun toolspec-gptel--refusal (tool args)
  "The text the model gets instead of TOOL's result for ARGS, or nil.
Nil when ARGS are valid for TOOL's schema, or are not checked (see
`toolspec-check-arguments').  A schema the checker cannot compile
refuses each call with the reason, and warns at the first."
  (and toolspec-check-arguments
       (condition-case err
           (when-let* ((p (toolspec-gptel--check-call (toolspec-gptel--checker tool) args "positional")))
             (toolspec-gptel--call-error (plist-get tool :name) p))
         (toolspec-error
          (let ((why (error-message-string err))
                (name (plist-get tool :name)))
            (unless (gethash tool toolspec-gptel--unchecked)
              (puthash tool t toolspec-gptel--unchecked)
              (display-warning 'toolspec (format "Tool %s cannot check its arguments: %s" name why)))
            (format "Error: tool %s cannot check its arguments, so it was not run: %s" name why))))))

(defun toolspec-gptel--normal-args (args)
  "ARGS, a tool function's arguments, normalised.
See `toolspec-normalize-arguments'."
  (if toolspec-normalize-arguments (mapcar #'toolspec-gptel--normalize-value args) args))

(defun toolspec-gptel--wrap (tool fn async)
  "FN wrapped to check and normalise the arguments of TOOL.
ASYNC non-nil means FN takes a callback first.  FN nil means TOOL has
no function here: the model is told so (see
`toolspec-gptel--unbound-call').  TOOL's argument checker is compiled
at the tool's first call, not here: registering a file of thousands
of tools compiles none of them, and most are never called in a
session.  A schema the checker cannot compile
answers each call with the reason, FN does not run, and the first
such call warns.  One closure per tool: registering thousands of
tools makes thousands of them."
  (cond
   ((and (null fn) async)
    (lambda (callback &rest args)
      (funcall callback (or (toolspec-gptel--refusal tool args)
                            (toolspec-gptel--unbound-call (plist-get tool :name))))))
   ((null fn)
    (lambda (&rest args)
      (or (toolspec-gptel--refusal tool args)
          (toolspec-gptel--unbound-call (plist-get tool :name)))))
   (async
    (lambda (callback &rest args)
      (if-let* ((r (toolspec-gptel--refusal tool args)))
          (funcall callback r)
        (apply fn callback (toolspec-gptel--normal-args args)))))
   (t
    (lambda (&rest args)
      (or (toolspec-gptel--refusal tool args)
          (apply fn (toolspec-gptel--normal-args args)))))))

;;;; Binding functions

(defun toolspec-resolve-from-options (tool options)
  "Resolver: the function OPTIONS map TOOL's name to.
OPTIONS's `:functions' is an alist (NAME . FUNCTION) or a function
called with the name."
  (let ((fns (plist-get options :functions))
        (name (plist-get tool :name)))
    (cond ((functionp fns) (funcall fns name))
          ((consp fns) (cdr (assoc name fns))))))

(defun toolspec-gptel--source-matches-p (sources source)
  "Non-nil when SOURCE, an import's `:source', is one of SOURCES.
SOURCES is a string or a list of strings: a file, a directory
holding SOURCE, or a source given by name."
  (and (stringp source)
       (cl-some (lambda (s)
                  (and (stringp s)
                       (or (equal s source)
                           (let ((file (expand-file-name source))
                                 (s (expand-file-name s)))
                             (or (equal s file)
                                 (and (or (directory-name-p s) (file-directory-p s))
                                      (equal (file-name-as-directory s)
                                             (file-name-directory file))))))))
                (if (stringp sources) (list sources) sources))))

(defun toolspec-resolve-from-alist (tool options)
  "Resolver: the function `toolspec-function-alist' binds TOOL's name to.
An entry with `:source' binds only for the sources it names (OPTIONS's
`:source'); the first that matches wins.  Without one, an entry
\(NAME . FUNCTION) binds for any source, and asks: it gives
\(:function FUNCTION :confirm t :unscoped t)."
  (let ((name (plist-get tool :name))
        (source (plist-get options :source))
        (any nil))
    (or (cl-loop for entry in toolspec-function-alist
                 when (and (consp entry) (equal (car entry) name))
                 do (let ((rest (cdr entry)))
                      (if (or (symbolp rest) (functionp rest))
                          (unless any (setq any rest))
                        (when (and (consp rest)
                                   (toolspec-gptel--source-matches-p (plist-get (cdr rest) :source) source))
                          (cl-return (car rest))))))
        (and (functionp any) (list :function any :confirm t :unscoped t)))))

(defun toolspec-resolve-executor (tool options)
  "Resolver: the executor TOOL's format carries, if its type is known.
Importers of formats that describe how to run a tool (an HTTP API, a
prompt) put `:executor' (:type TYPE ...) in the tool plist; a plain
JSON tool file cannot.  The maker for TYPE in
`toolspec-executor-makers' is called with TOOL and OPTIONS."
  (when-let* ((exec (plist-get tool :executor))
              (type (plist-get exec :type))
              (maker (cdr (assoc (format "%s" type) toolspec-executor-makers))))
    (funcall maker tool options)))

(defun toolspec-resolve-mcp (tool options)
  "Resolver: bind TOOL to the MCP server named by OPTIONS's `:mcp-server'.
Needs the mcp package (mcp.el) and a running server."
  (when-let* ((server (plist-get options :mcp-server)))
    (unless (and (require 'mcp-hub nil t) (fboundp 'mcp-make-text-tool))
      (signal 'toolspec-module-error
              (list (format "Tool %s names MCP server %s, but the mcp package is not installed"
                            (plist-get tool :name) server)
                    nil)))
    (list :function (plist-get (mcp-make-text-tool server (plist-get tool :name) t) :function)
          :async t :confirm t)))

(defun toolspec-gptel--unbound-call (name)
  "Log a call of tool NAME, which has no implementation here, and answer it."
  (message "toolspec: the model called %s, which has no function: bind one in `toolspec-function-alist'" name)
  (format "Error: tool %s has no implementation in this Emacs. Tell the user; they can bind it by adding (\"%s\" FUNCTION :source \"THE-TOOL-FILE\") to `toolspec-function-alist' and importing the tool again."
          name name))

(defun toolspec-gptel--unbound-function (name)
  "A function for tool NAME, which has no implementation here."
  (lambda (&rest _) (toolspec-gptel--unbound-call name)))

(defconst toolspec-gptel--unbound '(:function nil :bound nil)
  "The binding `toolspec-gptel--resolve' gives a tool nothing binds.")

(defun toolspec-gptel--resolve (tool options)
  "The binding of TOOL under OPTIONS.
A plist (:function F :async A :confirm C :bound B), F nil when nothing
binds TOOL.  A `:function' in TOOL itself (a plist written in Lisp:
the readers of JSON never put one there) is its binding; otherwise
the first of `toolspec-function-resolvers' that finds one gives it."
  (let* ((own (plist-get tool :function))
         (found (or own
                    (cl-loop for r in toolspec-function-resolvers
                             thereis (funcall r tool options)))))
    (when (and own (not (or (functionp own) (and (symbolp own) (not (booleanp own))))))
      (signal 'toolspec-invalid-spec
              (list (format "Tool %s: :function must be a function or a function's name, found %S"
                            (plist-get tool :name) own)
                    nil)))
    (cond ((or (functionp found) (and own (symbolp found))) (list :function found :bound t))
          ((and (consp found) (plist-get found :function)) (append found (list :bound t)))
          ;; No function: `toolspec-gptel--wrap' makes the one that
          ;; tells the model so (one closure per tool, not two).  One
          ;; list for every such tool, which its callers only read:
          ;; most tools of a catalog have none.
          (t toolspec-gptel--unbound))))

;;;; Registering

(defvar toolspec-gptel--registered (make-hash-table :test 'equal)
  "Tools registered through toolspec, by source: SOURCE -> list of gptel tools.")

(defun toolspec-gptel--names (tools)
  "For each of TOOLS (plists), nil or the name to register it under.
gptel sends a tool's registered name to whichever backend is in use:
a name some backend refuses (\"math.sum\": OpenAI, Anthropic and
Bedrock take `^[a-zA-Z0-9_-]{1,64}$', Gemini no leading digit) gets
one every backend takes, different from the other TOOLS' names (see
`toolspec-safe-names'), with one warning naming each renamed tool.
The tool keeps its original name for binding, dispatch, describing
and export."
  (let* ((names (mapcar (lambda (tool) (plist-get tool :name)) tools))
         (new (and (cl-every #'stringp names) (toolspec-safe-names names 'gptel)))
         (count (cl-count-if #'identity new)))
    (when (> count 0)
      (display-warning
       'toolspec
       (format "%d tool name%s not valid for every gptel backend, registered under valid ones: %s"
               count (if (> count 1) "s are" " is")
               (toolspec--renamed-pairs names new "%s as %s" count))
       :warning))
    (or new (make-list (length tools) nil))))

(defun toolspec-gptel--renamed-p (tool problem)
  "Whether PROBLEM of TOOL is the error of a name providers refuse.
Registration gives such a tool a valid name and warns (see
`toolspec-gptel--names'), so the name no longer stops the import.
The other name errors (no name, not a string) stay errors."
  (and (eq (car problem) 'error) (equal (nth 1 problem) "name")
       (stringp (plist-get tool :name)) (not (string-empty-p (plist-get tool :name)))))

(defun toolspec-gptel--stopped-p (tool problems)
  "Whether PROBLEMS of TOOL stop it being registered.
That is, whether one of them is an error registration does not fix
\(see `toolspec-gptel--renamed-p')."
  (cl-loop for p in problems
           thereis (and (eq (car p) 'error) (not (toolspec-gptel--renamed-p tool p)))))

(defun toolspec-gptel--unless-renamed (tool problems)
  "PROBLEMS of TOOL with the error of a name providers refuse made a warning.
See `toolspec-gptel--renamed-p'."
  (if (cl-loop for p in problems thereis (toolspec-gptel--renamed-p tool p))
      (mapcar (lambda (p)
                (if (toolspec-gptel--renamed-p tool p)
                    (append (list 'warning "name"
                                  (concat (nth 2 p) "; gptel gets a name every backend takes,"
                                          " calls reach the tool under this one"))
                            (nthcdr 3 p))
                  p))
              problems)
    problems))

(defun toolspec-gptel--source-plist (tool new)
  "A copy of TOOL, a tool plist, to export and send it from.
NEW is its registered name, when it is not TOOL's own.  The lists and
vectors of the copy's args are its own: the gptel tool made from TOOL
has TOOL's, and a change to them in place does not reach the copy.
The strings are shared: neither toolspec nor gptel changes a string
in place, and copying them made registering a file of thousands of
tools take a fifth longer (bench/history.md, round 21)."
  (let ((copy (copy-sequence tool)))
    (when (plist-get copy :args)
      (setq copy (plist-put copy :args (copy-tree (plist-get copy :args) t))))
    (if new (plist-put copy :name new) copy)))

(defun toolspec-original-name (tool)
  "The name TOOL, a gptel tool toolspec registered, has in its source.
That is the name its function is bound and dispatched under; gptel
knows it by `gptel-tool-name', a name every backend takes."
  (or (gethash tool toolspec--original-names) (gptel-tool-name tool)))

(defvar toolspec-gptel--import-options (make-hash-table :test 'equal)
  "The options each source was last registered with: SOURCE -> plist.
`toolspec-load-tool-directories' imports a file again with them, so
that the `:functions' it was imported with stay its bindings.")

(defvar toolspec-gptel--bindings (make-hash-table :test 'eq :weakness 'key)
  "What toolspec bound each gptel tool to: TOOL -> (FUNCTION PLIST OPTIONS).
FUNCTION is the function found for it (before the argument checks),
PLIST the tool plist and OPTIONS the import options.")

(defun toolspec-bound-function (tool)
  "The function toolspec bound TOOL, a gptel tool, to; nil if none.
It is what runs the tool once its arguments are checked: a symbol
when a function was named for it."
  (car (gethash tool toolspec-gptel--bindings)))

(defun toolspec-gptel--require-gptel ()
  "Load gptel or signal a clear error."
  (unless (require 'gptel nil t)
    (signal 'toolspec-module-error (list "gptel is not installed: install it to register tools" nil))))

(defun toolspec-gptel--make (category slots &optional strings)
  "A gptel tool of CATEGORY made from SLOTS, unregistered.
See `toolspec-gptel--add' for why it is registered apart.  It is made
by `gptel--make-tool', the function `gptel-make-tool' makes its tool
with before registering it: calling `gptel-make-tool' with an empty
registry bound, as when gptel lacks that function, made each tool's
slots twice over and an entry to throw away (bench/history.md, round
22).  STRINGS non-nil says the `:type' values of the args are strings
already (see `toolspec--type-strings'): the struct is made without
`gptel--make-tool' walking the args to turn symbols into strings, a
fifth of registering a catalog (bench/history.md, round 25)."
  (cond ((and strings (fboundp 'gptel--make-tool-internal))
         (apply #'gptel--make-tool-internal :category category slots))
        ((fboundp 'gptel--make-tool)
         (apply #'gptel--make-tool :category category slots))
        (t (let ((gptel--known-tools nil))
             (apply #'gptel-make-tool :category category slots)))))

(defun toolspec-gptel--add (category tools)
  "Register TOOLS, gptel tools of CATEGORY, in gptel's registry.
The registry ends as it would after `gptel-make-tool' made each of
TOOLS in turn: a name already in CATEGORY keeps its place and takes
its new tool, a new one comes first.  `gptel-make-tool' finds a name
by walking CATEGORY's list, so that a file of thousands of tools took
a time that grew with the square of their number; here each name is
looked up in a table made once."
  (when tools
    (let* ((cat (or (assoc category gptel--known-tools)
                    (car (push (list category) gptel--known-tools))))
           (cells (make-hash-table :test #'equal :size (+ (length tools) (length (cdr cat))))))
      (dolist (cell (cdr cat))
        (unless (gethash (car cell) cells)
          (puthash (car cell) cell cells)))
      (dolist (tool tools)
        (let* ((name (gptel-tool-name tool))
               (cell (gethash name cells)))
          (if cell
              (setcdr cell tool)
            (setq cell (cons name tool))
            (puthash name cell cells)
            (setcdr cat (cons cell (cdr cat)))))))))

(defun toolspec-gptel--remove (tools)
  "Remove TOOLS, gptel tools, from gptel's registry and active tools.
A registry entry goes only if it is still one of TOOLS: a tool
another source registered since under the same name stays."
  (let ((gone (make-hash-table :test #'eq :size (length tools))))
    (dolist (tool tools)
      (puthash tool t gone))
    (dolist (category (delete-dups (mapcar #'gptel-tool-category tools)))
      (when-let* ((cat (assoc category gptel--known-tools)))
        (setcdr cat (cl-delete-if (lambda (entry) (gethash (cdr entry) gone)) (cdr cat)))
        (unless (cdr cat)
          (setq gptel--known-tools (delq cat gptel--known-tools)))))
    (setq gptel-tools (cl-delete-if (lambda (tool) (gethash tool gone)) gptel-tools))))

;;;###autoload
(defun toolspec-unregister (what)
  "Remove tools registered through toolspec from gptel.
WHAT is a source (a file name or the `:source' given when
registering), a tool name, or a list of tool names.  Returns how
many tools were removed.  Interactively, ask for a source or a
tool name, with completion."
  (interactive
   (progn
     (toolspec-gptel--require-gptel)
     (let ((candidates nil))
       (maphash (lambda (source tools)
                  (when tools
                    (push source candidates)
                    (dolist (tool tools) (push (gptel-tool-name tool) candidates))))
                toolspec-gptel--registered)
       (unless candidates (user-error "No tools are registered through toolspec"))
       (list (completing-read "Unregister the tools of a file, or a tool: "
                              (delete-dups (nreverse candidates)) nil t)))))
  (toolspec-gptel--require-gptel)
  (let ((removed 0)
        (names (cond ((and (stringp what) (gethash what toolspec-gptel--registered)) nil)
                     ((listp what) what)
                     (t (list what)))))
    (maphash (lambda (source tools)
               (let ((gone (if names
                               (cl-remove-if-not (lambda (tl) (or (member (gptel-tool-name tl) names)
                                                                  (member (gethash tl toolspec--original-names) names)))
                                                 tools)
                             (and (equal source what) tools))))
                 (when gone
                   (toolspec-gptel--remove gone)
                   (cl-incf removed (length gone))
                   (puthash source (and names (cl-set-difference tools gone :test #'eq))
                            toolspec-gptel--registered))))
             toolspec-gptel--registered)
    (when (and (stringp what) (null (gethash what toolspec-gptel--registered)))
      (remhash what toolspec-gptel--registered)
      (remhash what toolspec-gptel--import-options))
    (when (called-interactively-p 'any)
      (message "toolspec: %d tool%s unregistered: %s" removed (if (= removed 1) "" "s") what))
    removed))

(defun toolspec-gptel--flag (v)
  "V as a boolean: nil, `:json-false' and `:null' are false."
  (and v (not (memq v '(:json-false :null))) v))

(defun toolspec-gptel--slot-values (tool options binding name f)
  "Call F with the slots of the gptel tool for TOOL (a plist).
BINDING is what `toolspec-gptel--resolve' gives for TOOL under
OPTIONS; the function is wrapped to check and normalise the
arguments.  NAME, when non-nil, is the name gptel gets instead of
TOOL's own.  F takes NAME DESCRIPTION ARGS FUNCTION ASYNC CONFIRM
INCLUDE, the last three nil when not set."
  (let* (;; JSON readers never produce :async, :confirm or :include (a
         ;; file cannot set them); a plist written in elisp may.
         (async (toolspec-gptel--flag (or (plist-get binding :async) (plist-get tool :async))))
         (confirm (toolspec-gptel--flag
                   (cond ((plist-get binding :unscoped) t)
                         ((plist-member options :confirm) (plist-get options :confirm))
                         ((plist-member binding :confirm) (plist-get binding :confirm))
                         (t (plist-get tool :confirm)))))
         (include (toolspec-gptel--flag (plist-get tool :include))))
    (funcall f
             (or name (plist-get tool :name))
             (or (plist-get tool :description) "")
             (plist-get tool :args)
             (toolspec-gptel--wrap tool (plist-get binding :function) async)
             (and async t) confirm include)))

(defun toolspec-gptel--slots (tool options binding &optional name)
  "The slots of `gptel-make-tool' for TOOL (a plist), bound by BINDING.
See `toolspec-gptel--slot-values' for TOOL, OPTIONS, BINDING and NAME."
  (toolspec-gptel--slot-values
   tool options binding name
   (lambda (name description args function async confirm include)
     `(:name ,name :description ,description :args ,args :function ,function
       ,@(and async (list :async t))
       ,@(and confirm (list :confirm confirm))
       ,@(and include (list :include include))))))

(defun toolspec-gptel--maker (category)
  "A function making gptel tools of CATEGORY from their slots, or nil.
It takes the arguments `toolspec-gptel--slot-values' gives its
function, and makes each tool as a copy of one that gptel's
constructor made, its slots set: neither a list of the slots nor the
constructor's list of keyword arguments is made for each tool, 1 MB
of the 8.4 MB that importing and registering BFCL's catalog allocated
\(bench/history.md, round 26).  Nil when gptel's struct is not as
this expects."
  (when (fboundp 'gptel--make-tool-internal)
    (condition-case nil
        (let ((template (gptel--make-tool-internal :category category))
              (at (mapcar (lambda (slot) (cl-struct-slot-offset 'gptel-tool slot))
                          '(name description args function async confirm include))))
          (when (and (recordp template) (equal (gptel-tool-category template) category))
            (pcase-let ((`(,n ,d ,a ,f ,as ,c ,i) at))
              (lambda (name description args function async confirm include)
                (let ((tool (copy-sequence template)))
                  (aset tool n name)
                  (aset tool d description)
                  (aset tool a args)
                  (aset tool f function)
                  (when async (aset tool as async))
                  (when confirm (aset tool c confirm))
                  (when include (aset tool i include))
                  tool)))))
      (error nil))))

(defun toolspec-gptel--bind (tool options)
  "TOOL (a plist) with its checked, normalising `:function' bound per OPTIONS.
The slots of `gptel-make-tool', then `:toolspec-bound' (whether a
function was found), `:toolspec-unscoped' (found by a binding that
names no source) and `:toolspec-function' (the function found)."
  (let ((binding (toolspec-gptel--resolve tool options)))
    (nconc (toolspec-gptel--slots tool options binding)
           (list :toolspec-bound (plist-get binding :bound)
                 :toolspec-unscoped (plist-get binding :unscoped)
                 :toolspec-function (and (plist-get binding :bound) (plist-get binding :function))))))

(defun toolspec-register (tools &rest options)
  "Register TOOLS, tool plists, with gptel; return the gptel tools.
TOOLS is what `toolspec-read-file' or `toolspec-parse-json' return.
OPTIONS is a plist:
  :category  gptel category (default: the `:source' name, else \"toolspec\")
  :source    what the tools came from, for re-import and `toolspec-unregister'
  :functions alist (NAME . FUNCTION), or a function of the name, binding tools
  :confirm   override whether gptel asks before running the tools
  :mcp-server name of the MCP server the tools run on (needs mcp.el)
  :credentials host or list of hosts whose auth-source credentials
             the tools may send to their server (OpenAPI tools, see
             `toolspec-http-approved-credentials'); none by default
  :activate  non-nil: also add the tools to `gptel-tools', so that
             gptel offers them to the model (default
             `toolspec-activate-tools')
A `:function' a tool plist carries itself (one written in Lisp)
binds that tool, before any of OPTIONS.  Registering a source again
replaces its tools."
  (toolspec-gptel--require-gptel)
  (let* ((source (plist-get options :source))
         (category (or (plist-get options :category)
                       (and source (file-name-base source))
                       "toolspec"))
         ;; `gptel-make-tool' turns the :type symbols of the :args it is
         ;; given into strings, in place: each plist is copied first,
         ;; unless the caller made TOOLS for this call alone.
         (copy (if (plist-get options :toolspec--fresh) #'identity (lambda (tool) (copy-tree tool t))))
         ;; The module made the types strings (`toolspec--type-strings').
         (strings (plist-get options :toolspec--type-strings))
         ;; With string types, gptel's constructor makes the tools as
         ;; they are: copies of one it made serve (`toolspec-gptel--maker').
         (maker (and strings (toolspec-gptel--maker category)))
         ;; The tools it kept, one for each of TOOLS, to register as
         ;; their sources instead of copies (`toolspec--keep-tools').
         (kept (let ((kept (plist-get options :toolspec--kept)))
                 (and (proper-list-p kept) (= (length kept) (length tools))
                      (cl-every #'user-ptrp kept)
                      kept))))
    ;; Tools of the source that were active stay active under their new
    ;; definition.
    (let* ((old (and source (gethash source toolspec-gptel--registered)))
           (active (and old gptel-tools
                        (let ((was (make-hash-table :test #'eq :size (length old)))
                              (names (make-hash-table :test #'equal)))
                          (dolist (tool old) (puthash tool t was))
                          (dolist (tool gptel-tools)
                            (when (gethash tool was) (puthash (gptel-tool-name tool) t names)))
                          names))))
      (when old (toolspec-unregister source))
      (let* ((names (toolspec-gptel--names tools))
             (made (cl-mapcar
                    (lambda (tool new)
                      (let* ((tool (funcall copy tool))
                             ;; Bound, and so dispatched, under its
                             ;; original name.
                             (binding (toolspec-gptel--resolve tool options))
                             (made (if maker
                                       (toolspec-gptel--slot-values tool options binding new maker)
                                     (toolspec-gptel--make
                                      category (toolspec-gptel--slots tool options binding new) strings))))
                        (when new
                          (puthash made (plist-get tool :name) toolspec--original-names))
                        ;; The plist it is exported and sent from, whose
                        ;; texts are kept (see `toolspec--gptel-sources').
                        (puthash made (or (pop kept) (toolspec-gptel--source-plist tool new))
                                 toolspec--gptel-sources)
                        (puthash made (list (and (plist-get binding :bound) (plist-get binding :function))
                                            tool options)
                                 toolspec-gptel--bindings)
                        made))
                    tools names)))
        (toolspec-gptel--add category made)
        (when (if (plist-member options :activate) (plist-get options :activate) toolspec-activate-tools)
          (setq gptel-tools (append gptel-tools
                                    (cl-remove-if (lambda (tool) (memq tool gptel-tools)) made))))
        (when (and active (> (hash-table-count active) 0))
          (setq gptel-tools
                (append gptel-tools
                        (cl-remove-if-not (lambda (tool) (gethash (gptel-tool-name tool) active)) made))))
        (when source
          (puthash source made toolspec-gptel--registered)
          (puthash source (cl-loop for (k v) on options by #'cddr
                                   unless (memq k '(:source :toolspec--fresh :toolspec--type-strings :toolspec--kept
                                                   :preview :activate))
                                   append (list k v))
                   toolspec-gptel--import-options))
        made))))

(defun toolspec-gptel--llm-args (args)
  "ARGS, argument plists, each with the `:type' symbol llm needs.
llm writes `(symbol-name TYPE)' of each argument's `:type', and
keeps only its `:type', `:description', `:enum', `:items' and
`:properties'.  An argument without a type constraint (no
`:type', as read from a JSON schema without one) is given `object'
when it has `:properties', `array' when it has `:items', else
`string'; a union of types (a vector) is given its first type other
than null; a type name given as a string, its symbol."
  (mapcar
   (lambda (arg)
     (let ((type (plist-get arg :type)))
       (if (and type (symbolp type))
           arg
         (let ((name (cond ((stringp type) type)
                           ((vectorp type)
                            (cl-loop for x across type
                                     for s = (format "%s" x)
                                     unless (equal s "null") return s))
                           ((plist-get arg :properties) "object")
                           ((plist-get arg :items) "array"))))
           (plist-put (copy-sequence arg) :type (intern (or name "string")))))))
   args))

(defun toolspec-make-llm-tools (tools &rest options)
  "Return `llm-tool' structs for TOOLS (plists), bound per OPTIONS.
OPTIONS are those of `toolspec-register'.  A name some provider
refuses is replaced as `toolspec-register' replaces it.  Needs the
llm package."
  (unless (require 'llm nil t)
    (signal 'toolspec-module-error (list "llm is not installed" nil)))
  (cl-mapcar (lambda (tool new)
               (let ((bound (toolspec-gptel--bind (copy-tree tool) options)))
                 ;; An llm tool cannot ask before it runs.
                 (when (plist-get bound :toolspec-unscoped)
                   (setq bound (plist-put bound :function
                                          (toolspec-gptel--unbound-function (plist-get bound :name))))
                   (setq bound (plist-put bound :async nil))
                   (display-warning
                    'toolspec
                    (format "Tool %s is not bound: its `toolspec-function-alist' entry names no :source, and llm tools cannot ask before running"
                            (plist-get bound :name))))
                 ;; llm, like gptel, sends the name to every provider;
                 ;; the function stays bound under the original.
                 (llm-make-tool :name (or new (plist-get bound :name))
                                :description (plist-get bound :description)
                                :args (toolspec-gptel--llm-args (plist-get bound :args))
                                :function (plist-get bound :function)
                                :async (plist-get bound :async))))
             tools (toolspec-gptel--names tools)))

(defconst toolspec-gptel--log-limit 20
  "How many lines of one kind an import logs to *Messages*.
A catalog read from the wild may have thousands of warnings: logging
each took longer than the import itself, and buried the errors.")

(defun toolspec-gptel--log-some (items format-item what variable &optional kinds count)
  "Log the first `toolspec-gptel--log-limit' of ITEMS, then how many more.
FORMAT-ITEM makes an item's line; WHAT names the kind of items,
VARIABLE where all of them are kept.  KINDS, a function of no
arguments, gives the text saying what kinds of items they all are,
logged after how many more there are.  COUNT, when given, is how
many items there are in all, ITEMS being the first of them."
  (cl-loop for item in items
           for i from 1 to toolspec-gptel--log-limit
           do (message "toolspec: %s" (funcall format-item item)))
  (let ((n (or count (length items))))
    (when (> n toolspec-gptel--log-limit)
      (message "toolspec: ... and %d more %s (all of them in `%s')%s"
               (- n toolspec-gptel--log-limit) what variable
               (if-let* ((text (and kinds (funcall kinds))))
                   (format "; all %d by kind: %s" n text)
                 "")))))

(defun toolspec-gptel--errors-first (problems n)
  "The first N of PROBLEMS, their errors before the rest, else in order.
Only those N are made into a list: a catalog's import has thousands
of warnings, and this log shows a few."
  (let ((out nil) (k 0))
    (dolist (errors '(t nil))
      (cl-loop for p in problems
               while (< k n)
               when (eq (eq (car p) 'error) errors)
               do (push p out) (cl-incf k)))
    (nreverse out)))

(defvar toolspec-last-import-left-out nil
  "The tools the last `toolspec-import-file' left out for their errors.
A list of (MESSAGE DETAILS), DETAILS a plist with `:file', `:tool'
and `:problems', as in a `toolspec-invalid-spec' error.")

;;;###autoload
(defun toolspec-import-file (file &rest options)
  "Read FILE, check its tools and register them with gptel.
OPTIONS are those of `toolspec-register' plus `:format', and for an
OpenAPI document the selection keys `:tags', `:paths', `:operations'
and `:server' (see `toolspec-read-openapi'); the category defaults
to FILE's base name.  Importing FILE again
replaces its tools.  A tool with errors, and a tool definition that
cannot be read, is left out: its problems are logged to *Messages*
with the warnings, and those of the tools with errors are kept in
`toolspec-last-import-left-out'.  With `:strict' non-nil, either
refuses the whole file (`toolspec-invalid-spec', or the reader's
error); so does a file whose every tool has errors.  Returns the
gptel tools.

With `:preview' non-nil, as interactively, nothing is registered
yet: the tools and their problems are shown in a preview buffer,
where \\<toolspec-import-mode-map>\\[toolspec-import-register] registers them; returns that buffer."
  (interactive (list (read-file-name "Import tools from JSON file: " nil nil t) :preview t))
  (setq toolspec-last-import-left-out nil)
  (if (plist-get options :preview)
      (progn (require 'toolspec-ui)
             (toolspec-ui--preview-file file options))
    (let* ((file (expand-file-name file))
           ;; Said once: `abbreviate-file-name' takes 5 us, and a
           ;; catalog may leave out a hundred tools.
           (shown (abbreviate-file-name file))
           (sources nil)
           (tools (let ((toolspec--type-strings t)
                        (toolspec--keep-tools t))
                    (prog1 (toolspec-openapi--read-file-for-import file options)
                      (setq sources toolspec--keep-tools))))
           (problems toolspec-last-import-problems)
           (kept nil)
           (kept-sources nil)
           (refused nil))
      ;; The module validated the tools as it read them.  A tool with
      ;; errors is left out, as a definition that cannot be read is;
      ;; with :strict it refuses the file.
      (unless (and (consp sources) (= (length sources) (length tools)))
        (setq sources nil))
      (cl-loop for tool in tools
               for p = (pop problems)
               for source = (pop sources)
               do (condition-case err
                      (progn
                        ;; The problems are looked at again only to say
                        ;; why a tool is left out.
                        (when (toolspec-gptel--stopped-p tool p)
                          (toolspec--check-problems tool (toolspec-gptel--unless-renamed tool p)))
                        (push tool kept)
                        (push source kept-sources))
                    (toolspec-invalid-spec
                     (let ((err (list 'toolspec-invalid-spec
                                      (format "%s: %s" shown (cadr err))
                                      (append (list :file file) (toolspec-error-details err)))))
                       (when (plist-get options :strict)
                         (signal (car err) (cdr err)))
                       (push err refused)))))
      (setq refused (nreverse refused))
      (when (and refused (null kept))
        (signal (car (car refused)) (cdr (car refused))))
      (toolspec-gptel--log-some refused (lambda (err) (format "%s (left out)" (cadr err)))
                          "tools left out" "toolspec-last-import-left-out")
      ;; The definitions left out first: they are errors.
      (toolspec-gptel--log-some (toolspec-gptel--errors-first toolspec-last-import-warnings
                                                              toolspec-gptel--log-limit)
                          (lambda (w) (format "%s: %s" shown
                                              (toolspec-format-problem w)))
                          "import warnings" "toolspec-last-import-warnings"
                          (lambda () (toolspec--problem-kinds (list toolspec-last-import-warnings)))
                          (length toolspec-last-import-warnings))
      (setq toolspec-last-import-left-out (mapcar #'cdr refused))
      ;; The plists were read for this call alone: not copied again.
      (apply #'toolspec-register (nreverse kept) :source file :toolspec--fresh t :toolspec--type-strings t
             :toolspec--kept (nreverse kept-sources)
             (append options (list :category (or (plist-get options :category)
                                                 (toolspec-openapi-category tools)
                                                 (file-name-base file))))))))

(defun toolspec-gptel--skipped-text (file err)
  "One line saying FILE was skipped for toolspec error ERR.
FILE:LINE:COLUMN when ERR says where, then what is wrong: the
first problem of a tool with errors and how many others there are."
  (let* ((details (toolspec-error-details err))
         (line (plist-get details :line))
         (column (plist-get details :column))
         (problems (cl-remove-if-not (lambda (p) (eq (car-safe p) 'error))
                                     (plist-get details :problems)))
         (what (or (get (car err) 'error-message) "error"))
         ;; What is wrong, from the details: the file and the place are
         ;; shown here, before it.
         (message (if (stringp (cadr err)) (toolspec--error-text err) (format "%S" (cdr err))))
         (shown (abbreviate-file-name file)))
    (when problems
      (setq message (concat (toolspec-format-problem (car problems))
                            (if (cdr problems)
                                (format " (and %d more: M-x toolspec-import-file shows them all)"
                                        (length (cdr problems)))
                              ""))))
    (format "Skipped %s%s: %s: %s"
            shown (if (and line column) (format ":%s:%s" line column) "")
            what (replace-regexp-in-string "\s-*
\s-*" " " message))))

(defun toolspec-gptel--left-out-text (file)
  "One line saying what the last import of FILE left out, or nil.
The definitions that could not be read and the tools with errors:
how many, the first one's problem, and where to see them all."
  (let* ((unreadable (cl-remove-if-not (lambda (w) (eq (car w) 'error))
                                       toolspec-last-import-warnings))
         (n (+ (length unreadable) (length toolspec-last-import-left-out))))
    (when (> n 0)
      (format "%s: %d tool definition%s left out: %s%s"
              (abbreviate-file-name file) n (if (= n 1) "" "s")
              (if unreadable
                  (toolspec-format-problem (car unreadable))
                (let ((details (cadr (car toolspec-last-import-left-out))))
                  (format "tool \"%s\": %s" (plist-get details :tool)
                          (toolspec-format-problem
                           (assq 'error (plist-get details :problems))))))
              (if (> n 1)
                  (format " (and %d more: M-x toolspec-import-file shows them all)" (1- n))
                "")))))

;;;###autoload
(defun toolspec-load-tool-directories ()
  "Import every tool file in `toolspec-tool-directories'.
A file that fails to import is reported and skipped; returns the
number of tools registered.  The files share one budget,
`toolspec-max-import-size': once their imports have used it, the
files left are skipped with a `toolspec-limit-error' each."
  (interactive)
  (let* ((count 0)
         (left toolspec-max-import-size)
         (files (cl-loop for dir in toolspec-tool-directories
                         when (file-directory-p dir)
                         append (directory-files dir t toolspec-tool-file-regexp)))
         (progress (and (> (length files) 10)
                        (make-progress-reporter "toolspec: importing tool files..." 0 (length files)))))
    (cl-loop for file in files
             for i from 1
             do (condition-case err
                    ;; A file imported before, with `:functions' say, keeps
                    ;; the options it was imported with; the files share one
                    ;; import budget.
                    (let ((toolspec-max-import-size left))
                      (unwind-protect
                          (progn
                            (cl-incf count (length (apply #'toolspec-import-file file
                                                          (gethash (expand-file-name file)
                                                                   toolspec-gptel--import-options))))
                            (let ((left-out (toolspec-gptel--left-out-text file)))
                              (when left-out (display-warning 'toolspec left-out))))
                        (setq left (max 0 (- left (toolspec--mod-last-import-size))))))
                  (toolspec-error
                   (display-warning 'toolspec (toolspec-gptel--skipped-text file err))))
             (when progress (progress-reporter-update progress i)))
    (when progress (progress-reporter-done progress))
    (when (called-interactively-p 'any)
      (message "toolspec: %d tools registered" count))
    count))

;;;; Exporting

(defun toolspec-gptel--as-tool (x)
  "X, a tool plist, a gptel tool or a registered tool's name, as a tool.
The name may be the one gptel knows or the original name of a tool
toolspec registered under another."
  (if (stringp x)
      (progn (toolspec-gptel--require-gptel)
             (or (toolspec-gptel--by-original-name x) (gptel-get-tool x)))
    x))

(defun toolspec-gptel--by-original-name (name)
  "The gptel tool toolspec registered whose original name is NAME, or nil."
  (cl-loop for (_category . entries) in gptel--known-tools
           thereis (cl-loop for (_name . tool) in entries
                            when (equal (gethash tool toolspec--original-names) name)
                            return tool)))

;;;###autoload
(defun toolspec-export (tools dialect &optional file)
  "Write TOOLS as one JSON document in DIALECT.
TOOLS is a list of tool plists, gptel tools or registered tool names.
With FILE, write the document there; otherwise return it as a string.
Interactively, ask for the tools, the dialect and the file; without
a file, show the document in buffer *toolspec-export*."
  (interactive (progn (require 'toolspec-ui) (toolspec-ui--export-read-args)))
  (let* ((tools (mapcar #'toolspec-gptel--as-tool tools))
         (json (toolspec-tools-to-json tools dialect t)))
    (when file
      (let ((coding-system-for-write 'utf-8-unix))
        (write-region (concat json "\n") nil file)))
    (when (called-interactively-p 'any)
      (toolspec-ui--export-report json dialect file (length tools) (toolspec-gptel--names-given-twice tools)))
    (or file json)))

(defun toolspec-gptel--names-given-twice (tools)
  "The names more than one of TOOLS has, in the order they come twice.
Tools of different categories may share a name in gptel, but not in
one request: providers refuse a list whose tools share a name."
  (let ((seen (make-hash-table :test #'equal))
        (twice nil))
    (dolist (tool tools)
      (let ((name (toolspec--export-name tool)))
        (when (and (gethash name seen) (not (member name twice)))
          (push name twice))
        (puthash name t seen)))
    (nreverse twice)))

;;;; What gptel sends

(declare-function gptel--parse-tools "ext:gptel-request")

(defconst toolspec-gptel--backend-dialects
  '((gptel--gh . nil)                   ; dispatches to a Responses or chat backend itself
    (gptel-openai-responses . "openai-responses")
    (gptel-openai . "openai")
    (gptel-gemini . "gemini")
    (gptel-anthropic . "anthropic")
    (gptel-bedrock . "bedrock")
    (gptel-ollama . "ollama"))
  "Types of gptel backends, most specific first, and their dialects.
A backend whose type is none of these (or includes none) is left to
gptel.")

(defun toolspec-gptel--dialect (backend)
  "The dialect toolspec writes for gptel BACKEND, a backend struct, or nil."
  (cl-loop for (type . dialect) in toolspec-gptel--backend-dialects
           for pred = (intern (format "%s-p" type))
           when (and (fboundp pred) (funcall pred backend))
           return dialect))

(defvar toolspec-gptel--json (make-hash-table :test #'eq :weakness 'key)
  "The JSON toolspec wrote for gptel tools it registered.
Each TOOL maps to ((DIALECT . TEXT) ...).")

(defun toolspec-gptel--own (tool dialect)
  "What toolspec writes for TOOL, a gptel tool it registered, in DIALECT.
A plist as `json-parse-string' makes it, fresh for gptel to use; nil
when TOOL is not one toolspec registered, or toolspec cannot write it
in DIALECT (a warning says why, once)."
  (when-let* ((plist (gethash tool toolspec--gptel-sources)))
    (let* ((cached (assoc dialect (gethash tool toolspec-gptel--json)))
           (text (or (cdr cached)
                     (let ((text (condition-case err
                                     (if (user-ptrp plist)
                                         ;; A tool the module kept (see
                                         ;; `toolspec--keep-tools').
                                         (car (toolspec--mod-kept-texts
                                               (vector plist) (vector (gptel-tool-name tool)) dialect))
                                       (toolspec-to-json plist dialect))
                                   ;; gptel's own serialisation, then.
                                   (toolspec-error
                                    (display-warning 'toolspec
                                                     (format "Tool %s is sent as gptel writes it: %s"
                                                             (gptel-tool-name tool) (error-message-string err)))
                                    :gptel))))
                       (push (cons dialect text) (gethash tool toolspec-gptel--json))
                       text))))
      (and (stringp text)
           (json-parse-string text :object-type 'plist :array-type 'array
                              :null-object :null :false-object :json-false)))))

(defun toolspec-gptel--parse-tools-advice (parse backend tools)
  "Around advice for `gptel--parse-tools' (PARSE) on BACKEND and TOOLS.
With `toolspec-gptel-send-own-json', each tool toolspec registered
is sent as toolspec writes it for BACKEND's dialect instead of as
gptel makes it; gptel makes the others.  gptel's own serialisation
is not run on toolspec's tools: its Gemini backend changes their
arguments in place."
  (let* ((dialect (and toolspec-gptel-send-own-json (toolspec-gptel--dialect backend)))
         (tools (ensure-list tools))
         (own (and dialect (mapcar (lambda (tool) (toolspec-gptel--own tool dialect)) tools))))
    (if (not (cl-some #'identity own))
        (funcall parse backend tools)
      (let* ((others (cl-loop for tool in tools for mine in own unless mine collect tool))
             (theirs (and others (funcall parse backend others)))
             (theirs (append (if (equal dialect "gemini")
                                 (and theirs (plist-get (aref theirs 0) :functionDeclarations))
                               theirs)
                             nil))
             (merged (vconcat (mapcar (lambda (mine) (or mine (pop theirs))) own))))
        (if (equal dialect "gemini")
            (vector (list :functionDeclarations merged))
          merged)))))

(with-eval-after-load 'gptel-request
  (advice-add 'gptel--parse-tools :around #'toolspec-gptel--parse-tools-advice))

(provide 'toolspec-gptel)
;;; toolspec-gptel.el ends here
