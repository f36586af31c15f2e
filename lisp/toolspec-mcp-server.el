;;; toolspec-mcp-server.el --- Serve gptel tools over MCP -*- lexical-binding: t -*-

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

;; The gptel tools you choose, served to MCP clients (Claude Code,
;; Claude Desktop, Cursor, the MCP Inspector...) with their real JSON
;; Schemas:
;;
;;   (setq toolspec-mcp-server-tools '("read_buffer" (:category "notes")))
;;   (toolspec-mcp-server-mode 1)
;;
;; Emacs listens on a local socket in a directory only you can read;
;; the `toolspec serve' program speaks MCP on stdio (or HTTP on
;; loopback) to the client and forwards each message to that socket.
;; Messages are newline-delimited JSON-RPC, as on MCP's stdio
;; transport.  Both eras of the protocol are answered: the `initialize'
;; handshake (2025-11-25, 2025-06-18, 2025-03-26) and the stateless
;; 2026-07-28 revision (`server/discover', the protocol version in each
;; request's `_meta', `resultType').
;;
;; Nothing is exposed until named in `toolspec-mcp-server-tools'.  The
;; arguments of each call are checked against the tool's schema by
;; toolspec's checker before any elisp runs; no client input is ever
;; evaluated.  A tool made with :confirm asks you before it runs.

;;; Code:

(require 'cl-lib)
(eval-when-compile (require 'subr-x))
(when (< emacs-major-version 29) (require 'subr-x))
(require 'toolspec)
(require 'toolspec-gptel)
(require 'json)

(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-description "ext:gptel-request")
(declare-function gptel-tool-args "ext:gptel-request")
(declare-function gptel-tool-function "ext:gptel-request")
(declare-function gptel-tool-async "ext:gptel-request")
(declare-function gptel-tool-confirm "ext:gptel-request")
(declare-function gptel-tool-category "ext:gptel-request")
(defvar gptel--known-tools)

(defgroup toolspec-mcp-server nil
  "Serve gptel tools to MCP clients."
  :group 'toolspec
  :prefix "toolspec-mcp-server-")

(defun toolspec-mcp-server--set-tools (symbol value)
  "Set SYMBOL to VALUE and tell connected clients if the tool set changed."
  (set-default symbol value)
  (when (fboundp 'toolspec-mcp-server--check-changes)
    (toolspec-mcp-server--check-changes)))

(defcustom toolspec-mcp-server-tools nil
  "The gptel tools MCP clients may see and call.
nil exposes nothing.  Otherwise a list whose entries are tool names
\(strings) or (:category NAME), every tool of gptel category NAME;
or a predicate called with each gptel tool."
  :type '(choice (const :tag "None" nil)
                 (repeat (choice (string :tag "Tool name")
                                 (list :tag "Category" (const :category) string)))
                 (function :tag "Predicate"))
  :set #'toolspec-mcp-server--set-tools
  :group 'toolspec-mcp-server)

(defcustom toolspec-mcp-server-tool-properties nil
  "MCP fields of exposed tools that gptel does not keep, by tool name.
An alist (NAME . PLIST), PLIST among :title STRING, :annotations
PLIST (e.g. (:readOnlyHint t)), :outputSchema SCHEMA-PLIST and
:schema-extra PLIST, keywords of the root of the tool's input schema
other than its properties (`$defs', `$schema', `additionalProperties'),
which arguments are checked against too."
  :type '(alist :key-type string :value-type plist)
  :set #'toolspec-mcp-server--set-tools
  :group 'toolspec-mcp-server)

(defun toolspec-mcp-server-default-socket ()
  "The default socket: toolspec/mcp.sock under $XDG_RUNTIME_DIR.
Without XDG_RUNTIME_DIR, toolspec-UID/mcp.sock under the temporary
directory: a directory of the user's own, never a shared name."
  (let ((runtime (getenv "XDG_RUNTIME_DIR")))
    (if (and runtime (not (string-empty-p runtime)))
        (expand-file-name "toolspec/mcp.sock" runtime)
      (expand-file-name (format "toolspec-%d/mcp.sock" (user-uid))
                        (or (getenv "TMPDIR") "/tmp")))))

(defcustom toolspec-mcp-server-socket nil
  "The socket `toolspec-mcp-server-mode' listens on; nil for the default.
The default is `toolspec-mcp-server-default-socket', which is also
what `toolspec serve' connects to without --socket.  Its directory
is made readable by the user only."
  :type '(choice (const :tag "Default" nil) file)
  :group 'toolspec-mcp-server)

(defcustom toolspec-mcp-server-call-timeout 60
  "Seconds a tool call may take before the client gets a timeout error."
  :type 'number
  :group 'toolspec-mcp-server)

(defcustom toolspec-mcp-server-max-message-size (* 16 1024 1024)
  "The longest message a client may send, in characters.
A connection that sends a longer one is closed."
  :type 'integer
  :group 'toolspec-mcp-server)

(defcustom toolspec-mcp-server-poll-interval 2
  "Seconds between checks of whether the exposed tools changed."
  :type 'number
  :group 'toolspec-mcp-server)

(defcustom toolspec-mcp-server-confirm-function #'y-or-n-p
  "Function asking the user whether a tool with :confirm may run.
Called with a prompt; non-nil means run."
  :type 'function
  :group 'toolspec-mcp-server)

(defconst toolspec-mcp-server-modern-version "2026-07-28"
  "The stateless protocol revision this server answers.")

(defconst toolspec-mcp-server-handshake-versions '("2025-11-25" "2025-06-18" "2025-03-26")
  "The handshake-era revisions this server answers, newest first.")

(defconst toolspec-mcp-server--log-buffer "*toolspec-mcp-server-log*"
  "The buffer the server logs to.")

(defvar toolspec-mcp-server--process nil
  "The listening process, while the mode is on.")

(defvar toolspec-mcp-server--connections nil
  "The live client connections.")

(defvar toolspec-mcp-server-mode)

(defvar toolspec-mcp-server--timer nil
  "The timer that checks the exposed tools for changes.")

(defvar toolspec-mcp-server--signature nil
  "What the exposed tools were when last listed or checked.")

(defvar toolspec-mcp-server--stats (list :connections 0 :calls 0 :errors 0 :refused 0)
  "Counts since the mode was turned on.")

;;;; Logging

(defun toolspec-mcp-server--log (format-string &rest args)
  "Log FORMAT-STRING with ARGS in the server's log buffer."
  (with-current-buffer (get-buffer-create toolspec-mcp-server--log-buffer)
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (insert (format-time-string "%H:%M:%S ") (apply #'format format-string args) "\n")
      (when (> (buffer-size) (* 256 1024))
        (delete-region (point-min) (- (point-max) (* 128 1024)))))))

(defun toolspec-mcp-server--count (key)
  "Add one to the statistic KEY."
  (plist-put toolspec-mcp-server--stats key (1+ (plist-get toolspec-mcp-server--stats key))))

;;;; JSON

(defun toolspec-mcp-server--json (object)
  "OBJECT as JSON text (a multibyte string)."
  (let ((json (json-serialize object :null-object :null :false-object :json-false)))
    (if (multibyte-string-p json) json (decode-coding-string json 'utf-8 t))))

(defun toolspec-mcp-server--parse (text)
  "TEXT, one JSON message, as Lisp: objects are hash tables."
  (json-parse-string text :object-type 'hash-table :array-type 'array
                     :null-object :null :false-object :json-false))

(defun toolspec-mcp-server--object (&rest pairs)
  "A JSON object (a hash table) of PAIRS, KEY VALUE ..., KEY strings."
  (let ((h (make-hash-table :test #'equal)))
    (while pairs
      (puthash (pop pairs) (pop pairs) h))
    h))

;;;; The exposed tools

(defun toolspec-mcp-server--all-tools ()
  "Every gptel tool, as (CATEGORY . TOOL), in registry order."
  (and (boundp 'gptel--known-tools)
       (cl-loop for (category . tools) in gptel--known-tools
                append (cl-loop for (_ . tool) in tools collect (cons category tool)))))

(defun toolspec-mcp-server--chosen-p (tool category)
  "Non-nil when TOOL of CATEGORY is one the user exposes."
  (let ((choice toolspec-mcp-server-tools))
    (cond ((null choice) nil)
          ((functionp choice) (funcall choice tool))
          ((consp choice)
           (cl-some (lambda (entry)
                      (cond ((stringp entry) (equal entry (gptel-tool-name tool)))
                            ((and (consp entry) (eq (car entry) :category))
                             (equal (cadr entry) category))))
                    choice)))))

(defun toolspec-mcp-server-exposed-tools ()
  "The gptel tools MCP clients see, without two of one name.
Where categories share a name, the first tool registered wins."
  (let ((seen (make-hash-table :test #'equal)) out)
    (pcase-dolist (`(,category . ,tool) (toolspec-mcp-server--all-tools))
      (when (and (toolspec-mcp-server--chosen-p tool category)
                 (not (gethash (gptel-tool-name tool) seen)))
        (puthash (gptel-tool-name tool) t seen)
        (push tool out)))
    (nreverse out)))

(defun toolspec-mcp-server-tool-plist (tool)
  "The tool plist the MCP listing of gptel TOOL is written from.
Its name, description and arguments, then the MCP fields of
`toolspec-mcp-server-tool-properties'; a tool with :confirm is
annotated `destructiveHint' unless those fields say otherwise, and
its category goes in `_meta'."
  (let* ((props (cdr (assoc (gptel-tool-name tool) toolspec-mcp-server-tool-properties)))
         (annotations (copy-sequence (plist-get props :annotations))))
    (when (and (gptel-tool-confirm tool) (not (plist-member annotations :destructiveHint)))
      (setq annotations (append annotations (list :destructiveHint t))))
    (append (list :name (gptel-tool-name tool)
                  :description (or (gptel-tool-description tool) "")
                  :args (gptel-tool-args tool))
            (and (plist-get props :title) (list :title (plist-get props :title)))
            (and annotations (list :annotations annotations))
            (and (plist-get props :outputSchema) (list :outputSchema (plist-get props :outputSchema)))
            (and (plist-get props :schema-extra) (list :schema-extra (plist-get props :schema-extra)))
            (and (gptel-tool-category tool)
                 (list :_meta (list :toolspec/category (gptel-tool-category tool)))))))

(defun toolspec-mcp-server--signature ()
  "What clients see of the exposed tools, to notice a change."
  (mapcar (lambda (tool)
            (list (toolspec-mcp-server-tool-plist tool) (gptel-tool-async tool)))
          (toolspec-mcp-server-exposed-tools)))

(defun toolspec-mcp-server-tools-json ()
  "The `tools/list' result, {\"tools\": [...]}, as JSON text.
It is what `toolspec-export' writes in dialect `mcp' for the plists
of `toolspec-mcp-server-tool-plist', without the indentation."
  (toolspec-tools-to-json (mapcar #'toolspec-mcp-server-tool-plist
                                  (toolspec-mcp-server-exposed-tools))
                          'mcp))

(defun toolspec-mcp-server--check-changes ()
  "Tell connected clients when the exposed tools changed."
  (when (and toolspec-mcp-server--process toolspec-mcp-server--connections)
    (let ((now (condition-case nil (toolspec-mcp-server--signature) (error nil))))
      (unless (equal now toolspec-mcp-server--signature)
        (setq toolspec-mcp-server--signature now)
        (toolspec-mcp-server--log "the exposed tools changed: %d now" (length now))
        (dolist (conn toolspec-mcp-server--connections)
          (toolspec-mcp-server--notify-change conn))))))

(defun toolspec-mcp-server--notify-change (conn)
  "Send CONN a tool list change, if it asked for them."
  (let ((sub (process-get conn 'toolspec-subscription)))
    (cond (sub
           (toolspec-mcp-server--send
            conn (toolspec-mcp-server--object
                  "jsonrpc" "2.0" "method" "notifications/tools/list_changed"
                  "params" (toolspec-mcp-server--object
                            "_meta" (toolspec-mcp-server--object
                                     "io.modelcontextprotocol/subscriptionId" sub)))))
          ((process-get conn 'toolspec-initialized)
           (toolspec-mcp-server--send
            conn (toolspec-mcp-server--object
                  "jsonrpc" "2.0" "method" "notifications/tools/list_changed"))))))

;;;; Connections

(defun toolspec-mcp-server--send (conn message)
  "Send MESSAGE (a hash table, or JSON text) to CONN, if it is still open."
  (when (process-live-p conn)
    (condition-case err
        (process-send-string conn (concat (if (stringp message) message
                                            (toolspec-mcp-server--json message))
                                          "\n"))
      (error (toolspec-mcp-server--log "cannot send to %s: %s"
                                       (process-name conn) (error-message-string err))))))

(defun toolspec-mcp-server--accept (server conn _message)
  "Sentinel-time: SERVER accepted CONN."
  (ignore server)
  (set-process-coding-system conn 'utf-8-unix 'utf-8-unix)
  (process-put conn 'toolspec-input "")
  (set-process-filter conn #'toolspec-mcp-server--filter)
  (set-process-sentinel conn #'toolspec-mcp-server--sentinel)
  (push conn toolspec-mcp-server--connections)
  (toolspec-mcp-server--count :connections)
  (toolspec-mcp-server--log "client connected (%s)" (process-name conn)))

(defun toolspec-mcp-server--sentinel (conn event)
  "Forget CONN when it closes (EVENT)."
  (unless (process-live-p conn)
    (setq toolspec-mcp-server--connections (delq conn toolspec-mcp-server--connections))
    (toolspec-mcp-server--log "client disconnected (%s): %s" (process-name conn) (string-trim event))))

(defun toolspec-mcp-server--filter (conn string)
  "Handle STRING, output from CONN: each full line is a message."
  (let ((input (concat (process-get conn 'toolspec-input) string))
        (start 0) end)
    (while (setq end (string-search "\n" input start))
      (let ((line (substring input start end)))
        (setq start (1+ end))
        (unless (string-blank-p line)
          (toolspec-mcp-server--handle-line conn line))))
    (setq input (substring input start))
    (if (> (length input) toolspec-mcp-server-max-message-size)
        (progn
          (toolspec-mcp-server--log "closing %s: a message longer than %d characters"
                                    (process-name conn) toolspec-mcp-server-max-message-size)
          (delete-process conn))
      (process-put conn 'toolspec-input input))))

(defun toolspec-mcp-server--error (conn id code message &optional data)
  "Answer CONN's request ID with JSON-RPC error CODE, MESSAGE and DATA."
  (toolspec-mcp-server--send
   conn (toolspec-mcp-server--object
         "jsonrpc" "2.0" "id" id
         "error" (apply #'toolspec-mcp-server--object "code" code "message" message
                        (and data (list "data" data))))))

(defun toolspec-mcp-server--reply (conn id result modern)
  "Answer CONN's request ID with RESULT (a hash table or JSON object text).
MODERN non-nil adds `resultType' as the 2026-07-28 revision wants."
  (let ((text (if (stringp result) result (toolspec-mcp-server--json result))))
    (when modern
      (setq text (concat (substring text 0 -1)
                         (if (string-match-p "\\`{[ \t\n]*}\\'" text) "" ",")
                         "\"resultType\":\"complete\"}")))
    (toolspec-mcp-server--send
     conn (concat "{\"jsonrpc\":\"2.0\",\"id\":" (toolspec-mcp-server--json id)
                  ",\"result\":" text "}"))))

(defun toolspec-mcp-server--handle-line (conn line)
  "Handle LINE, one message CONN sent."
  (let ((message (condition-case err
                     (toolspec-mcp-server--parse line)
                   (error
                    (toolspec-mcp-server--error conn :null -32700
                                                (format "Parse error: %s" (error-message-string err)))
                    nil))))
    (cond
     ((null message))
     ((not (hash-table-p message))
      (toolspec-mcp-server--error conn :null -32600 "Invalid request: not a JSON object"))
     (t
      (let ((method (gethash "method" message))
            (id (gethash "id" message))
            (params (gethash "params" message)))
        (cond
         ((not (stringp method))
          ;; A response to us (we send no requests) or nonsense.
          (when id
            (unless (or (gethash "result" message) (gethash "error" message))
              (toolspec-mcp-server--error conn id -32600 "Invalid request: no method"))))
         ((null id) (toolspec-mcp-server--notification conn method params))
         ((not (or (stringp id) (numberp id)))
          (toolspec-mcp-server--error conn :null -32600 "Invalid request: id must be a string or a number"))
         ((and params (not (hash-table-p params)))
          (toolspec-mcp-server--error conn id -32602 "Invalid params: params must be an object"))
         (t (toolspec-mcp-server--request conn id method params))))))))

(defun toolspec-mcp-server--notification (conn method params)
  "Handle notification METHOD with PARAMS from CONN."
  (pcase method
    ("notifications/initialized" (process-put conn 'toolspec-initialized t))
    ("notifications/cancelled"
     (let ((id (and (hash-table-p params) (gethash "requestId" params))))
       (when id
         (push id (process-get conn 'toolspec-cancelled))
         (when (equal id (process-get conn 'toolspec-subscription))
           (process-put conn 'toolspec-subscription nil)))))
    (_ nil)))

(defun toolspec-mcp-server--meta-version (params)
  "The protocol version in PARAMS's `_meta', or nil."
  (let ((meta (and params (gethash "_meta" params))))
    (and (hash-table-p meta) (gethash "io.modelcontextprotocol/protocolVersion" meta))))

(defun toolspec-mcp-server--capabilities ()
  "The server's capabilities."
  (toolspec-mcp-server--object
   "tools" (toolspec-mcp-server--object "listChanged" t)
   "logging" (toolspec-mcp-server--object)))

(defun toolspec-mcp-server--server-info ()
  "The server's `Implementation' object."
  (toolspec-mcp-server--object "name" "toolspec-emacs" "title" "Emacs (toolspec)"
                               "version" toolspec-version))

(defun toolspec-mcp-server--request (conn id method params)
  "Answer request ID of METHOD with PARAMS from CONN."
  (let* ((version (toolspec-mcp-server--meta-version params))
         (modern (and version t)))
    (cond
     ((and version (not (equal version toolspec-mcp-server-modern-version)))
      (toolspec-mcp-server--error
       conn id -32022 (format "Unsupported protocol version: %s" version)
       (toolspec-mcp-server--object
        "supported" (vector toolspec-mcp-server-modern-version)
        "requested" version)))
     (t
      (pcase method
        ("initialize"
         (let* ((asked (and params (gethash "protocolVersion" params)))
                (agreed (if (member asked toolspec-mcp-server-handshake-versions)
                            asked
                          (car toolspec-mcp-server-handshake-versions))))
           (process-put conn 'toolspec-version agreed)
           (toolspec-mcp-server--reply
            conn id (toolspec-mcp-server--object
                     "protocolVersion" agreed
                     "capabilities" (toolspec-mcp-server--capabilities)
                     "serverInfo" (toolspec-mcp-server--server-info)
                     "instructions" "Tools of the user's Emacs, chosen by the user.")
            nil)))
        ("server/discover"
         (toolspec-mcp-server--reply
          conn id (toolspec-mcp-server--object
                   "supportedVersions" (vconcat (list toolspec-mcp-server-modern-version)
                                                toolspec-mcp-server-handshake-versions)
                   "capabilities" (toolspec-mcp-server--capabilities)
                   "instructions" "Tools of the user's Emacs, chosen by the user."
                   "ttlMs" 0 "cacheScope" "private"
                   "_meta" (toolspec-mcp-server--object
                            "io.modelcontextprotocol/serverInfo" (toolspec-mcp-server--server-info)))
          t))
        ("ping" (toolspec-mcp-server--reply conn id (toolspec-mcp-server--object) modern))
        ("logging/setLevel"
         (let ((level (and params (gethash "level" params))))
           (if (member level '("debug" "info" "notice" "warning" "error" "critical" "alert" "emergency"))
               (progn (process-put conn 'toolspec-log-level level)
                      (toolspec-mcp-server--reply conn id (toolspec-mcp-server--object) modern))
             (toolspec-mcp-server--error conn id -32602
                                         (format "Invalid params: unknown log level %S" level)))))
        ("subscriptions/listen"
         (let* ((filter (and params (gethash "notifications" params)))
                (tools (and (hash-table-p filter)
                            (eq (gethash "toolsListChanged" filter) t))))
           (process-put conn 'toolspec-subscription id)
           (toolspec-mcp-server--send
            conn (toolspec-mcp-server--object
                  "jsonrpc" "2.0" "method" "notifications/subscriptions/acknowledged"
                  "params" (toolspec-mcp-server--object
                            "_meta" (toolspec-mcp-server--object
                                     "io.modelcontextprotocol/subscriptionId" id)
                            "notifications" (if tools
                                                (toolspec-mcp-server--object "toolsListChanged" t)
                                              (toolspec-mcp-server--object)))))
           (unless tools (process-put conn 'toolspec-subscription nil))))
        ("tools/list"
         (setq toolspec-mcp-server--signature (toolspec-mcp-server--signature))
         (let ((json (condition-case err
                         (toolspec-mcp-server-tools-json)
                       (error (toolspec-mcp-server--error
                               conn id -32603 (format "Cannot write the tools: %s"
                                                      (error-message-string err)))
                              nil))))
           (when json
             (toolspec-mcp-server--reply
              conn id (if modern
                          (concat (substring json 0 -1) ",\"ttlMs\":0,\"cacheScope\":\"private\"}")
                        json)
              modern))))
        ("tools/call" (toolspec-mcp-server--call conn id params modern))
        ((or "resources/list" "prompts/list" "resources/templates/list")
         (toolspec-mcp-server--error conn id -32601 (format "Method not found: %s" method)))
        (_ (toolspec-mcp-server--error conn id -32601 (format "Method not found: %s" method))))))))

;;;; Calling tools

(defvar toolspec-mcp-server--checkers (make-hash-table :test #'eq :weakness 'key)
  "Tool plists for argument checking, by gptel tool.")

(defun toolspec-mcp-server--find (name)
  "The exposed tool called NAME, or nil."
  (cl-find name (toolspec-mcp-server-exposed-tools) :key #'gptel-tool-name :test #'equal))

(defun toolspec-mcp-server--problems (tool args-json)
  "Problems of ARGS-JSON, an arguments object text, under TOOL's schema."
  ;; The plist the listing is written from, so that the arguments are
  ;; checked against the schema the client was shown; kept while it
  ;; does not change.
  (let* ((now (toolspec-mcp-server-tool-plist tool))
         (kept (gethash tool toolspec-mcp-server--checkers))
         (plist (if (equal kept now) kept (puthash tool now toolspec-mcp-server--checkers))))
    (toolspec-gptel--check-call (toolspec-gptel--checker plist) args-json "json")))

(defun toolspec-mcp-server--values (tool args-json)
  "The positional values of TOOL's arguments in ARGS-JSON, as gptel gives them.
Objects are plists, arrays vectors, false `:json-false', null nil;
with `toolspec-normalize-arguments', false is nil too."
  (let* ((plist (json-parse-string args-json :object-type 'plist :array-type 'array
                                   :null-object nil :false-object :json-false))
         (values (mapcar (lambda (arg)
                           (plist-get plist (intern (concat ":" (plist-get arg :name)))))
                         (gptel-tool-args tool))))
    (if toolspec-normalize-arguments (mapcar #'toolspec-gptel--normalize-value values) values)))

(defun toolspec-mcp-server--result-text (value)
  "VALUE, what a tool returned, as the text the client gets."
  (cond ((stringp value) value)
        ((null value) "")
        (t (condition-case nil
               (toolspec-mcp-server--json value)
             (error (prin1-to-string value))))))

(defun toolspec-mcp-server--tool-result (tool text error)
  "A `tools/call' result of TOOL: TEXT, an error when ERROR is non-nil."
  (let ((result (toolspec-mcp-server--object
                 "content" (vector (toolspec-mcp-server--object "type" "text" "text" text)))))
    (if error
        (puthash "isError" t result)
      (when-let* ((props (cdr (assoc (gptel-tool-name tool) toolspec-mcp-server-tool-properties)))
                  ((plist-get props :outputSchema))
                  (structured (condition-case nil
                                  (toolspec-mcp-server--parse text)
                                (error nil)))
                  ((hash-table-p structured)))
        (puthash "structuredContent" structured result)))
    result))

(defun toolspec-mcp-server--call (conn id params modern)
  "Call the tool PARAMS name for CONN's request ID (MODERN: 2026-07-28)."
  (let* ((name (and params (gethash "name" params)))
         (arguments (if params (gethash "arguments" params) :null))
         (tool (and (stringp name) (toolspec-mcp-server--find name))))
    (cond
     ((not (stringp name))
      (toolspec-mcp-server--error conn id -32602 "Invalid params: tools/call needs a tool name"))
     ((not tool)
      (toolspec-mcp-server--error conn id -32602 (format "Unknown tool: %s" name)))
     ((not (or (hash-table-p arguments) (memq arguments '(nil :null))))
      (toolspec-mcp-server--error conn id -32602 "Invalid params: arguments must be an object"))
     (t
      (let* ((args-json (if (hash-table-p arguments) (toolspec-mcp-server--json arguments) "{}"))
             (problems (condition-case err
                           (toolspec-mcp-server--problems tool args-json)
                         (toolspec-error
                          (list (list 'error "" (format "the tool's schema cannot be checked: %s"
                                                        (error-message-string err))))))))
        (toolspec-mcp-server--count :calls)
        (toolspec-mcp-server--log "call %s %s" name args-json)
        (if problems
            (progn
              (toolspec-mcp-server--count :errors)
              (toolspec-mcp-server--reply
               conn id (toolspec-mcp-server--tool-result tool (toolspec-gptel--call-error name problems) t)
               modern))
          ;; Run from a timer: the filter returns at once, and a
          ;; confirmation is asked outside of it.
          (run-at-time 0 nil #'toolspec-mcp-server--run conn id tool args-json modern)))))))

(defun toolspec-mcp-server--run (conn id tool args-json modern)
  "Run TOOL on ARGS-JSON and answer CONN's request ID (MODERN: 2026-07-28)."
  (let* ((name (gptel-tool-name tool))
         (done nil)
         (timer nil)
         (answer
          (lambda (text error)
            (unless done
              (setq done t)
              (when timer (cancel-timer timer))
              (when error (toolspec-mcp-server--count :errors))
              (toolspec-mcp-server--log "%s %s: %s" (if error "failed" "answered") name
                                        (truncate-string-to-width text 200))
              (unless (member id (process-get conn 'toolspec-cancelled))
                (toolspec-mcp-server--reply
                 conn id (toolspec-mcp-server--tool-result tool text error) modern))))))
    (if (and (gptel-tool-confirm tool)
             (not (condition-case nil
                      (funcall toolspec-mcp-server-confirm-function
                               (format "An MCP client asks to run tool %s with %s.  Run it? "
                                       name args-json))
                    ((error quit) nil))))
        (progn
          (toolspec-mcp-server--count :refused)
          (funcall answer (format "Error: the user declined to run tool %s." name) t))
      (setq timer (run-at-time toolspec-mcp-server-call-timeout nil
                               (lambda ()
                                 (funcall answer (format "Error: tool %s gave no result within %s seconds."
                                                         name toolspec-mcp-server-call-timeout)
                                          t))))
      (condition-case err
          (let ((values (toolspec-mcp-server--values tool args-json))
                (fn (gptel-tool-function tool)))
            (if (gptel-tool-async tool)
                (apply fn (lambda (result)
                            (funcall answer (toolspec-mcp-server--result-text result) nil))
                       values)
              (let ((result (with-timeout (toolspec-mcp-server-call-timeout
                                           (funcall answer (format "Error: tool %s gave no result within %s seconds."
                                                                   name toolspec-mcp-server-call-timeout)
                                                    t)
                                           nil)
                              (apply fn values))))
                (funcall answer (toolspec-mcp-server--result-text result) nil))))
        ((error quit)
         (funcall answer (format "Error: tool %s failed: %s" name (error-message-string err)) t))))))

;;;; Status

;;;###autoload
(defun toolspec-mcp-server-status ()
  "Show the MCP server's socket, exposed tools, clients and call counts.
In the buffer, \\`l' shows the log and \\`g' updates."
  (interactive)
  (with-current-buffer (get-buffer-create "*toolspec-mcp-server*")
    (let ((inhibit-read-only t)
          (tools (condition-case nil (toolspec-mcp-server-exposed-tools) (error nil))))
      (erase-buffer)
      (insert (format "MCP server: %s\n" (if toolspec-mcp-server-mode "on" "off"))
              (format "Socket:     %s\n" (toolspec-mcp-server--socket))
              (format "Clients:    %d connected, %d since the mode was turned on\n"
                      (length toolspec-mcp-server--connections)
                      (plist-get toolspec-mcp-server--stats :connections))
              (format "Calls:      %d (%d errors, %d refused by you)\n"
                      (plist-get toolspec-mcp-server--stats :calls)
                      (plist-get toolspec-mcp-server--stats :errors)
                      (plist-get toolspec-mcp-server--stats :refused))
              (format "Tools:      %d exposed (`toolspec-mcp-server-tools')\n" (length tools)))
      (dolist (tool tools)
        (insert (format "  %-30s %s%s\n" (gptel-tool-name tool) (or (gptel-tool-category tool) "")
                        (if (gptel-tool-confirm tool) "  (asks you first)" ""))))
      (insert "\nl: the log    g: update    q: quit\n"))
    (toolspec-mcp-server-status-mode)
    (goto-char (point-min))
    (pop-to-buffer (current-buffer))))

;;;###autoload
(defun toolspec-mcp-server-show-log ()
  "Show the MCP server's log buffer."
  (interactive)
  (pop-to-buffer (get-buffer-create toolspec-mcp-server--log-buffer)))

(defvar toolspec-mcp-server-status-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "l" #'toolspec-mcp-server-show-log)
    (define-key map "g" #'toolspec-mcp-server-status)
    map)
  "Keymap of `toolspec-mcp-server-status-mode'.")

(define-derived-mode toolspec-mcp-server-status-mode special-mode "MCP server"
  "The buffer of `toolspec-mcp-server-status'.")

;;;; Installing in clients

(defun toolspec-mcp-server--client-files ()
  "The MCP client configuration files `toolspec-mcp-server-install' can write.
An alist (DESCRIPTION . FILE)."
  (list (cons "Claude Code (user, ~/.claude.json)" (expand-file-name "~/.claude.json"))
        (cons "Claude Desktop"
              (expand-file-name (if (eq system-type 'darwin)
                                    "~/Library/Application Support/Claude/claude_desktop_config.json"
                                  "Claude/claude_desktop_config.json")
                                (if (eq system-type 'darwin) "/"
                                  (or (getenv "XDG_CONFIG_HOME") "~/.config"))))
        (cons "This project's .mcp.json"
              (expand-file-name ".mcp.json"
                                (or (and (fboundp 'project-current) (project-current)
                                         (fboundp 'project-root) (project-root (project-current)))
                                    default-directory)))))

(defun toolspec-mcp-server--entry ()
  "The `mcpServers' entry running `toolspec serve' for this Emacs."
  (let ((program (or (ignore-errors (toolspec--program)) "toolspec")))
    `((command . ,program)
      (args . ,(vconcat (list "serve")
                        (and toolspec-mcp-server-socket
                             (list "--socket" (toolspec-mcp-server--socket))))))))

(defun toolspec-mcp-server-install-text (file &optional name)
  "The text of client configuration FILE with the entry NAME for this Emacs.
NAME defaults to \"emacs\".  The rest of FILE is kept as it is,
key order included; a missing FILE gives a new document."
  (let* ((name (intern (or name "emacs")))
         (config (if (file-exists-p file)
                     (with-temp-buffer
                       (insert-file-contents file)
                       (if (string-blank-p (buffer-string))
                           nil
                         (condition-case err
                             (json-parse-buffer :object-type 'alist :array-type 'array
                                                :null-object :null :false-object :json-false)
                           (error (user-error "%s is not JSON (%s): fix it first"
                                              file (error-message-string err))))))
                   nil)))
    (unless (listp config)
      (user-error "%s holds no JSON object" file))
    (let* ((servers (alist-get 'mcpServers config))
           (servers (if (assq name servers)
                        (mapcar (lambda (cell)
                                  (if (eq (car cell) name) (cons name (toolspec-mcp-server--entry)) cell))
                                servers)
                      (append servers (list (cons name (toolspec-mcp-server--entry)))))))
      (setq config (if (assq 'mcpServers config)
                       (mapcar (lambda (cell) (if (eq (car cell) 'mcpServers) (cons 'mcpServers servers) cell))
                               config)
                     (append config (list (cons 'mcpServers servers)))))
      (with-temp-buffer
        (insert (toolspec-mcp-server--json config))
        (json-pretty-print-buffer)
        (goto-char (point-max))
        (insert "\n")
        (buffer-string)))))

;;;###autoload
(defun toolspec-mcp-server-install (file)
  "Add this Emacs's MCP server to the client configuration FILE.
Interactively, choose Claude Code, Claude Desktop, the project's
.mcp.json or another file.  The change is shown as a diff and
written only if you agree."
  (interactive
   (let* ((files (append (toolspec-mcp-server--client-files) (list (list "Another file"))))
          (choice (completing-read "Install the Emacs MCP server for: " files nil t)))
     (list (or (cdr (assoc choice files))
               (read-file-name "MCP client configuration file: ")))))
  (let* ((new (toolspec-mcp-server-install-text file))
         (old (if (file-exists-p file)
                  (with-temp-buffer (insert-file-contents file) (buffer-string))
                "")))
    (if (equal new old)
        (message "%s already starts this Emacs's MCP server" file)
      (let ((diff (get-buffer-create "*toolspec-mcp-server-install*"))
            (old-file (make-temp-file "toolspec-mcp-old" nil ".json" old))
            (new-file (make-temp-file "toolspec-mcp-new" nil ".json" new)))
        (unwind-protect
            (with-current-buffer diff
              (let ((inhibit-read-only t))
                (erase-buffer)
                (call-process "diff" nil t nil "-u" "--label" file "--label" (concat file " (new)")
                              old-file new-file)
                (diff-mode)
                (goto-char (point-min))))
          (delete-file old-file)
          (delete-file new-file))
        (display-buffer diff)
        (if (y-or-n-p (format "Write %s? " file))
            (let ((coding-system-for-write 'utf-8-unix))
              (make-directory (file-name-directory file) t)
              (write-region new nil file)
              (message "Wrote %s: restart the client to see your Emacs's tools" file))
          (message "%s left as it was" file))
        (when-let* ((w (get-buffer-window diff))) (quit-window nil w))))))

;;;; The mode

(defun toolspec-mcp-server--socket ()
  "The socket file to listen on."
  (expand-file-name (or toolspec-mcp-server-socket (toolspec-mcp-server-default-socket))))

(defun toolspec-mcp-server--prepare-directory (dir)
  "Make DIR, readable by the user only; signal if it is not the user's."
  (unless (file-directory-p dir)
    (with-file-modes #o700 (make-directory dir t)))
  (let ((attrs (file-attributes dir 'integer)))
    (unless (eql (file-attribute-user-id attrs) (user-uid))
      (user-error "Socket directory %s belongs to another user: choose another `toolspec-mcp-server-socket'" dir))
    (unless (eql (logand (file-modes dir) #o077) 0)
      (set-file-modes dir #o700))))

(defun toolspec-mcp-server--start ()
  "Listen on the socket."
  (require 'gptel)
  (let* ((socket (toolspec-mcp-server--socket))
         (dir (file-name-directory socket)))
    (toolspec-mcp-server--prepare-directory dir)
    (when (file-exists-p socket)
      ;; A live server there is another Emacs; a dead one left a stale file.
      (if (condition-case nil
              (let ((p (make-network-process :name "toolspec-mcp-probe" :family 'local
                                             :service socket :noquery t)))
                (delete-process p)
                t)
            (error nil))
          (user-error "Another program already serves on %s" socket)
        (delete-file socket)))
    (setq toolspec-mcp-server--process
          (make-network-process :name "toolspec-mcp-server" :family 'local
                                :service socket :server t :noquery t
                                :coding 'utf-8-unix
                                :filter #'toolspec-mcp-server--filter
                                :sentinel #'toolspec-mcp-server--sentinel
                                :log #'toolspec-mcp-server--accept))
    (setq toolspec-mcp-server--stats (list :connections 0 :calls 0 :errors 0 :refused 0))
    (setq toolspec-mcp-server--signature (toolspec-mcp-server--signature))
    (setq toolspec-mcp-server--timer
          (run-at-time toolspec-mcp-server-poll-interval toolspec-mcp-server-poll-interval
                       #'toolspec-mcp-server--check-changes))
    (toolspec-mcp-server--log "listening on %s, %d tools exposed"
                              socket (length toolspec-mcp-server--signature))))

(defun toolspec-mcp-server--stop ()
  "Stop listening and close every connection."
  (when toolspec-mcp-server--timer (cancel-timer toolspec-mcp-server--timer))
  (setq toolspec-mcp-server--timer nil)
  (dolist (conn toolspec-mcp-server--connections) (delete-process conn))
  (setq toolspec-mcp-server--connections nil)
  (when toolspec-mcp-server--process
    (let ((socket (process-contact toolspec-mcp-server--process :service)))
      (delete-process toolspec-mcp-server--process)
      (when (and (stringp socket) (file-exists-p socket)) (delete-file socket))))
  (setq toolspec-mcp-server--process nil)
  (toolspec-mcp-server--log "stopped"))

;;;###autoload
(define-minor-mode toolspec-mcp-server-mode
  "Serve the gptel tools of `toolspec-mcp-server-tools' to MCP clients.
Emacs listens on `toolspec-mcp-server-socket'; MCP clients run
`toolspec serve', which forwards to it."
  :global t
  :group 'toolspec-mcp-server
  (toolspec-mcp-server--stop)
  (when toolspec-mcp-server-mode
    (condition-case err
        (toolspec-mcp-server--start)
      (error (setq toolspec-mcp-server-mode nil)
             (toolspec-mcp-server--stop)
             (signal (car err) (cdr err))))))

(provide 'toolspec-mcp-server)
;;; toolspec-mcp-server.el ends here
