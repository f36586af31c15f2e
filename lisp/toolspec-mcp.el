;;; toolspec-mcp.el --- MCP servers' tools as checked gptel tools -*- lexical-binding: t -*-

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

;; A Model Context Protocol client built on what Emacs ships: the tools
;; of an MCP server become gptel tools of category "mcp-NAME", read by
;; toolspec's reader and registered by `toolspec-register', so that the
;; arguments a model sends are checked against the tool's schema before
;; anything is sent to the server.
;;
;;   (setq toolspec-mcp-servers
;;         '(("fs" :command "npx"
;;            :args ("-y" "@modelcontextprotocol/server-filesystem" "~/notes"))))
;;   (toolspec-mcp-connect "fs")        ; returns at once; tools arrive later
;;
;; or M-x toolspec-mcp-import-config to read the `mcpServers' object of
;; a Claude Desktop or Claude Code configuration file, and
;; M-x toolspec-mcp-list to see the servers, their state and their log.
;;
;; Transports: stdio (newline-delimited JSON-RPC) and streamable HTTP
;; (POST, JSON or server-sent-event answers, Mcp-Session-Id; for the
;; handshake era also the server's GET stream, and streams resumed
;; with Last-Event-ID after the `retry' the server asked for).
;; Protocol: dual-era.  A `server/discover' probe finds servers of the
;; stateless revision 2026-07-28 (version, capabilities and client in
;; each request's `_meta'); the others get the handshake revisions
;; (initialize, offering 2025-11-25 and accepting 2025-06-18 and
;; 2025-03-26).  Elicitation and sampling are answered in both eras:
;; as requests of a handshake-era server, and as the input requests of
;; a stateless server's `input_required' result, after which the call
;; is sent again with the answers.  Tool list changes come as
;; notifications from a handshake-era server, and on the stream of a
;; `subscriptions/listen' request from a stateless one.
;;
;; Confirmation: a tool runs without asking only when the server
;; marks it `readOnlyHint' and the user lists the server in
;; `toolspec-mcp-trusted-servers'; a `destructiveHint' tool always asks.

;;; Code:

(require 'cl-lib)
(eval-when-compile (require 'subr-x))
(when (< emacs-major-version 29) (require 'subr-x))
(require 'tabulated-list)
(require 'url)
(require 'toolspec)
(require 'toolspec-gptel)

(defvar gptel-tools)
(defvar gptel--known-tools)
(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-confirm "ext:gptel-request")

;;;; Options

(defgroup toolspec-mcp nil
  "MCP servers' tools as gptel tools."
  :group 'toolspec
  :prefix "toolspec-mcp-")

(defcustom toolspec-mcp-servers nil
  "The MCP servers `toolspec-mcp-connect' knows, by name.
Each element is (NAME :command STRING :args LIST :env ALIST) for a
server started as a process and spoken to on its standard input and
output, or (NAME :url STRING :headers ALIST) for a server reached
over HTTP.  NAME is a string; ENV and HEADERS map strings to
strings.  This is the `mcpServers' object of Claude Desktop's and
Claude Code's configuration files: `toolspec-mcp-import-config'
reads one."
  :type '(alist :key-type (string :tag "Name")
                :value-type (plist :tag "Server"
                                   :options ((:command string)
                                             (:args (repeat string))
                                             (:env (alist :key-type string :value-type string))
                                             (:url string)
                                             (:headers (alist :key-type string :value-type string)))))
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-trusted-servers nil
  "Names of the MCP servers whose read-only tools run without asking.
A tool of such a server that the server marks `readOnlyHint' (and
not `destructiveHint') runs when the model calls it; every other
MCP tool asks first (gptel's `gptel-confirm-tool-calls' decides
how).  The hints are the server's word: trust a server only if you
trust its authors."
  :type '(repeat string)
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-connect-timeout 60
  "Seconds a server may take to answer `initialize' and list its tools."
  :type 'number
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-call-timeout 120
  "Seconds a tool call may take.
After that the call is cancelled on the server and the model is told
it timed out."
  :type 'number
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-max-result-size 16384
  "Most characters of a tool result given to the model.
A longer result is cut and marked as cut."
  :type 'natnum
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-max-message-size (* 64 1024 1024)
  "Most bytes of one message from a server.
A server that sends a longer one is stopped: it is broken or hostile."
  :type 'natnum
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-max-tools 10000
  "Most tools read from one server, over all pages of its list."
  :type 'natnum
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-restart-delays '(1 2 4 8 16 32 60)
  "Seconds to wait before each restart of a server that died.
A server that dies again is restarted after the next delay; after the
last one, it is left down.  A server that ran for
`toolspec-mcp-stable-time' seconds starts over at the first delay."
  :type '(repeat number)
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-stable-time 60
  "Seconds a server must run for its restarts to be forgotten."
  :type 'number
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-log-max-size (* 256 1024)
  "Most characters kept in a server's log buffer; older text goes."
  :type 'natnum
  :group 'toolspec-mcp)

(defvar toolspec-mcp-tools-changed-functions nil
  "Functions called with a server's name when its tools are registered anew.")

(defconst toolspec-mcp-protocol-versions '("2025-11-25" "2025-06-18" "2025-03-26")
  "Handshake-era protocol revisions this client speaks, the one it offers first.")

(defconst toolspec-mcp-modern-version "2026-07-28"
  "The stateless protocol revision this client speaks.")

(defcustom toolspec-mcp-probe-timeout 5
  "Seconds a server may take to answer the `server/discover' probe.
A server of the handshake era may not answer it at all; after this
long, the client falls back to `initialize'."
  :type 'number
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-elicitation t
  "How the client answers a server's `elicitation/create' (form mode).
A server may ask the user for input while it runs a tool, with a
message and a flat schema of the values it wants: in the handshake
era as a request of its own, in the stateless era in an
`input_required' result.
t: ask in the minibuffer, one prompt per property in the schema's
order (enums with completion, defaults offered, numbers checked by
the schema); the user may decline (n at the first question) or
cancel (\[keyboard-quit]).
`defaults': accept at once with each property's default, declining
when a required property has none (for unattended use).
nil: declare no elicitation and decline every request."
  :type '(choice (const :tag "Ask in the minibuffer" t)
                 (const :tag "Accept the defaults, unasked" defaults)
                 (const :tag "Decline" nil))
  :group 'toolspec-mcp)

(defcustom toolspec-mcp-sampling 'ask
  "How the client answers a server's `sampling/createMessage'.
A server may ask the client's model to answer messages of its own:
in the handshake era as a request, in the stateless era in an
`input_required' result.
`ask': show the messages and ask the user, with a y or n key, whether
to send them to the current gptel backend and model; the model's
answer goes back to the server, nothing is sent when the user says
no (or \[keyboard-quit]).
`never': declare no sampling capability and refuse every request."
  :type '(choice (const :tag "Ask before each request" ask)
                 (const :tag "Never" never))
  :group 'toolspec-mcp)

;;;; Servers

(cl-defstruct (toolspec-mcp--server (:constructor toolspec-mcp--server-make)
                                    (:copier nil))
  "A connection to an MCP server.
STATE is `connecting', `ready', `down' (died, to be restarted),
`failed' or `disconnected'."
  name config process input state error (next-id 0) (pending (make-hash-table))
  protocol info tools gptel-tools restarts restart-timer started trace
  log (generation 0) listing relist session era (progress (make-hash-table :test #'equal))
  streams listen)

(defvar toolspec-mcp--connections (make-hash-table :test #'equal)
  "Servers connected or being connected, by name.")

(defun toolspec-mcp--config (name)
  "The configuration of server NAME in `toolspec-mcp-servers', or signal."
  (or (cdr (assoc name toolspec-mcp-servers))
      (user-error "No MCP server named %s in `toolspec-mcp-servers'" name)))

(defun toolspec-mcp--category (name)
  "The gptel category of server NAME's tools."
  (concat "mcp-" name))

(defun toolspec-mcp--log-buffer (server)
  "SERVER's log buffer, made when missing."
  (let ((buf (toolspec-mcp--server-log server)))
    (unless (buffer-live-p buf)
      (setq buf (get-buffer-create (format "*toolspec-mcp %s*" (toolspec-mcp--server-name server))))
      (with-current-buffer buf
        (setq buffer-undo-list t))
      (setf (toolspec-mcp--server-log server) buf))
    buf))

(defun toolspec-mcp--log-insert (server text)
  "Append TEXT to SERVER's log, keeping it under `toolspec-mcp-log-max-size'."
  (with-current-buffer (toolspec-mcp--log-buffer server)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (insert text)
        (when (> (buffer-size) (* 2 toolspec-mcp-log-max-size))
          (delete-region (point-min) (- (point-max) toolspec-mcp-log-max-size)))))))

(defun toolspec-mcp--log (server format-string &rest args)
  "Log FORMAT-STRING with ARGS in SERVER's log, as an event of the client."
  (toolspec-mcp--log-insert server (concat (format-time-string "[%T] ")
                                           (apply #'format format-string args) "\n")))

(defun toolspec-mcp--set-error (server text)
  "Record TEXT as SERVER's last error, and log it."
  (setf (toolspec-mcp--server-error server) text)
  (toolspec-mcp--log server "error: %s" text)
  (toolspec-mcp--refresh-list))

;;;; JSON-RPC over stdio
;;
;; MCP's stdio transport sends each JSON-RPC message as one line of
;; UTF-8 JSON, ended by a newline, with no header.  jsonrpc.el, which
;; Emacs ships, frames each message with LSP's "Content-Length: N\r\n\r\n"
;; header, which an MCP server neither sends nor accepts: it would
;; take the header for a broken message.  So the framing is done here,
;; on a plain pipe process.

(defun toolspec-mcp--json (object)
  "OBJECT as JSON text (a multibyte string)."
  ;; Emacs 30's `json-serialize' returns UTF-8 bytes, Emacs 28's text.
  (let ((json (json-serialize object :null-object :null :false-object :json-false)))
    (if (multibyte-string-p json) json (decode-coding-string json 'utf-8 t))))

(defun toolspec-mcp--parse (text)
  "TEXT, one JSON message, as Lisp: objects are alists."
  (json-parse-string text :object-type 'alist :array-type 'array
                     :null-object :null :false-object :json-false))

(defun toolspec-mcp--http-p (server)
  "Non-nil when SERVER is reached over HTTP."
  (plist-get (toolspec-mcp--server-config server) :url))

(defun toolspec-mcp--live-p (server)
  "Non-nil when SERVER can take a message."
  (if (toolspec-mcp--http-p server)
      (memq (toolspec-mcp--server-state server) '(connecting ready))
    (process-live-p (toolspec-mcp--server-process server))))

(defun toolspec-mcp--send (server message)
  "Send MESSAGE, an alist, to SERVER."
  (unless (toolspec-mcp--live-p server)
    (error "MCP server %s is not running" (toolspec-mcp--server-name server)))
  (toolspec-mcp--trace server 'out message)
  (if (toolspec-mcp--http-p server)
      (toolspec-mcp--http-post server message)
    (process-send-string (toolspec-mcp--server-process server)
                         (concat (toolspec-mcp--json message) "\n"))))

(defun toolspec-mcp--trace (server direction message)
  "Keep MESSAGE, sent or received (DIRECTION `out' or `in'), in SERVER's trace.
The trace holds the method and params of the last 100 messages."
  (let ((method (alist-get 'method message)))
    (when method
      (push (list direction method (alist-get 'params message))
            (toolspec-mcp--server-trace server))
      (let ((tail (nthcdr 99 (toolspec-mcp--server-trace server))))
        (when tail (setcdr tail nil))))))

(defun toolspec-mcp--request (server method params callback &optional timeout)
  "Send request METHOD with PARAMS to SERVER; return its id.
CALLBACK is called with the result alist, or with (:error MESSAGE)
when the server answers with an error, dies, or takes more than
TIMEOUT seconds (then the request is cancelled on the server)."
  (let* ((id (cl-incf (toolspec-mcp--server-next-id server)))
         (params (if (memq (toolspec-mcp--server-era server) '(modern probing))
                     (cons (cons '_meta (append (alist-get '_meta params) (toolspec-mcp--meta server)))
                           (assq-delete-all '_meta (copy-sequence params)))
                   params))
         (timer (and timeout
                     (run-at-time timeout nil #'toolspec-mcp--timeout server id timeout))))
    (puthash id (cons callback timer) (toolspec-mcp--server-pending server))
    (condition-case err
        (toolspec-mcp--send server `((jsonrpc . "2.0") (id . ,id) (method . ,method)
                                     ,@(and params `((params . ,params)))))
      (error
       (remhash id (toolspec-mcp--server-pending server))
       (when timer (cancel-timer timer))
       (funcall callback (list :error (error-message-string err)))))
    id))

(defun toolspec-mcp--capabilities ()
  "The capabilities this client declares: elicitation and sampling, if on."
  (or (append (and toolspec-mcp-elicitation
                   (list (cons 'elicitation (list (cons 'form (make-hash-table))))))
              (and (eq toolspec-mcp-sampling 'ask)
                   (list (cons 'sampling (make-hash-table)))))
      (make-hash-table)))

(defun toolspec-mcp--meta (server)
  "The `_meta' of SERVER's requests in the stateless era.
It carries what `initialize' used to: the protocol version, the
client's capabilities and the client."
  `((io.modelcontextprotocol/protocolVersion . ,(toolspec-mcp--server-protocol server))
    (io.modelcontextprotocol/clientCapabilities . ,(toolspec-mcp--capabilities))
    (io.modelcontextprotocol/clientInfo . ((name . "toolspec") (version . ,toolspec-version)))))

(defun toolspec-mcp--notify (server method &optional params)
  "Send notification METHOD with PARAMS to SERVER."
  (toolspec-mcp--send server `((jsonrpc . "2.0") (method . ,method)
                               ,@(and params `((params . ,params))))))

(defun toolspec-mcp--finish (server id answer)
  "Hand ANSWER to the callback of SERVER's request ID, if it still waits."
  (when-let* ((entry (gethash id (toolspec-mcp--server-pending server))))
    (remhash id (toolspec-mcp--server-pending server))
    (when (cdr entry) (cancel-timer (cdr entry)))
    (funcall (car entry) answer)))

(defun toolspec-mcp--cancel (server id reason &optional silent)
  "Cancel SERVER's request ID for REASON: tell the server, answer the caller.
With SILENT non-nil, the caller is not answered: it was stopped."
  (when-let* ((entry (gethash id (toolspec-mcp--server-pending server))))
    (ignore-errors
      (toolspec-mcp--notify server "notifications/cancelled"
                            `((requestId . ,id) (reason . ,reason))))
    (if (not silent)
        (toolspec-mcp--finish server id (list :error reason))
      (remhash id (toolspec-mcp--server-pending server))
      (when (cdr entry) (cancel-timer (cdr entry))))))

(defun toolspec-mcp--timeout (server id seconds)
  "SERVER's request ID took SECONDS: cancel it."
  (toolspec-mcp--cancel server id (format "no answer within %s seconds" seconds)))

(defun toolspec-mcp--fail-pending (server reason)
  "Answer every request SERVER has not answered with REASON."
  (let (ids)
    (maphash (lambda (id _) (push id ids)) (toolspec-mcp--server-pending server))
    (dolist (id (sort ids #'<))
      (toolspec-mcp--finish server id (list :error reason)))))

(defun toolspec-mcp--filter (server)
  "The process filter of SERVER: split its output into lines, handle each."
  (lambda (_proc string)
    (let ((buf (toolspec-mcp--server-input server))
          lines)
      (with-current-buffer buf
        (goto-char (point-max))
        ;; Only STRING is searched: what came before it holds no
        ;; newline.  Searching from the start each time took time that
        ;; grew with the square of a message's size: a tools/list of
        ;; 1,000 tools comes in some 170 pieces.
        (let ((from (point)))
          (insert string)
          (goto-char from))
        (while (search-forward "\n" nil t)
          (push (buffer-substring-no-properties (point-min) (1- (point))) lines)
          (delete-region (point-min) (point)))
        (when (> (buffer-size) toolspec-mcp-max-message-size)
          (erase-buffer)
          (setq lines (cons 'too-long lines))))
      (dolist (line (nreverse lines))
        (if (eq line 'too-long)
            (toolspec-mcp--abandon server (format "it sent a message longer than %d bytes (`toolspec-mcp-max-message-size')"
                                                  toolspec-mcp-max-message-size))
          (unless (string-blank-p line)
            (toolspec-mcp--dispatch server line)))))))

(defun toolspec-mcp--dispatch (server line)
  "Handle LINE, one message from SERVER."
  (let ((message (condition-case err
                     (toolspec-mcp--parse line)
                   (error
                    (toolspec-mcp--log server "not JSON, ignored (%s): %s"
                                       (error-message-string err) (truncate-string-to-width line 200))
                    nil))))
    (when (consp message)
      (toolspec-mcp--trace server 'in message)
      (let ((id (alist-get 'id message))
            (method (alist-get 'method message)))
        (cond
         ((and method id) (toolspec-mcp--answer-request server id method (alist-get 'params message)))
         (method (toolspec-mcp--notification server method (alist-get 'params message)))
         ((assq 'error message)
          (let ((err (alist-get 'error message)))
            (toolspec-mcp--finish server id
                                  (list :error (format "%s (code %s)"
                                                       (if (consp err) (alist-get 'message err) err)
                                                       (if (consp err) (alist-get 'code err) "?"))
                                        :code (and (consp err) (alist-get 'code err))
                                        :data (and (consp err) (alist-get 'data err))))))
         ((assq 'result message)
          (toolspec-mcp--finish server id (alist-get 'result message))))))))

(defun toolspec-mcp--answer-request (server id method params)
  "Answer SERVER's request ID for METHOD with PARAMS.
`ping', `elicitation/create' and `sampling/createMessage' are
served; other methods are not
found, as this client declares no capability that would allow them."
  (pcase method
    ("ping" (toolspec-mcp--reply server id (make-hash-table)))
    ("elicitation/create" (toolspec-mcp--elicit server id params))
    ("sampling/createMessage" (toolspec-mcp--sample server id params))
    (_ (toolspec-mcp--reply-error server id -32601 (format "Method not found: %s" method)))))

(defun toolspec-mcp--reply (server id result)
  "Answer SERVER's request ID with RESULT (not when SERVER has stopped)."
  (condition-case nil
      (toolspec-mcp--send server `((jsonrpc . "2.0") (id . ,id) (result . ,result)))
    (error nil)))

(defun toolspec-mcp--reply-error (server id code text)
  "Answer SERVER's request ID with the error CODE and TEXT."
  (condition-case nil
      (toolspec-mcp--send server `((jsonrpc . "2.0") (id . ,id)
                                   (error . ((code . ,code) (message . ,text)))))
    (error nil)))

;;;; Asking the user
;;
;; A server's questions (elicitation, sampling) are put to the user
;; from a timer, not from the process filter that received them, and
;; one at a time: a question waits while another is shown, so that
;; the user never answers one while the text of another is on screen.

(defvar toolspec-mcp--asking nil
  "Non-nil while a server's question is put to the user.")

(defun toolspec-mcp--ask-in-turn (ask)
  "Call ASK, which puts a question to the user, when no other question is shown."
  (run-at-time (if toolspec-mcp--asking 0.2 0) nil
               (lambda ()
                 (if toolspec-mcp--asking
                     (toolspec-mcp--ask-in-turn ask)
                   (setq toolspec-mcp--asking t)
                   (unwind-protect (funcall ask)
                     (setq toolspec-mcp--asking nil))))))

;;;; Elicitation
;;
;; A server of the handshake era may send `elicitation/create' while
;; it runs a tool: a message for the user and `requestedSchema', a
;; flat object of strings, numbers, integers, booleans and enums.  The
;; answer is `accept' with the values, `decline' or `cancel'.  Prompts
;; run from a timer, not from the process filter or url.el's callback
;; that received the request, and with quitting allowed, so that
;; \[keyboard-quit] cancels.

(defun toolspec-mcp--answer-with (server id)
  "A function answering SERVER's request ID with its argument.
The argument is a result alist, or (:error CODE TEXT)."
  (lambda (answer)
    (if (eq (car answer) :error)
        (toolspec-mcp--reply-error server id (nth 1 answer) (nth 2 answer))
      (toolspec-mcp--reply server id answer))))

(defun toolspec-mcp--elicit (server id params)
  "Answer SERVER's `elicitation/create' request ID with PARAMS."
  (toolspec-mcp--elicit-answer server params (toolspec-mcp--answer-with server id)))

(defun toolspec-mcp--elicit-answer (server params then &optional wanted)
  "Answer SERVER's elicitation PARAMS: call THEN with the answer.
The answer is the result (accept, decline or cancel), or (:error
CODE TEXT) for a request this client cannot answer.  The user is
asked later, from a timer; THEN may be called at once.  WANTED, if
non-nil, is called before the user is asked: when it returns nil,
the user is not asked and the answer is cancel."
  (let ((mode (or (alist-get 'mode params) "form"))
        (schema (alist-get 'requestedSchema params)))
    (cond
     ((not (equal mode "form"))
      (funcall then (list :error -32602
                          (format "Elicitation mode %s is not supported; this client supports form" mode))))
     ((not (consp schema))
      (funcall then (list :error -32602 "Elicitation without a requestedSchema object")))
     ((null toolspec-mcp-elicitation)
      (toolspec-mcp--log server "declined an elicitation (`toolspec-mcp-elicitation' is nil)")
      (funcall then '((action . "decline"))))
     ((eq toolspec-mcp-elicitation 'defaults)
      (funcall then (toolspec-mcp--elicit-defaults schema)))
     (t
      (toolspec-mcp--ask-in-turn
       (lambda ()
         (let ((answer (condition-case err
                           (if (and wanted (not (funcall wanted)))
                               '((action . "cancel"))
                             (toolspec-mcp--elicit-prompt
                              (toolspec-mcp--server-name server)
                              (alist-get 'message params) schema))
                         ;; A prompt that cannot be shown (the
                         ;; minibuffer is busy) still answers.
                         (error
                          (toolspec-mcp--log server "could not ask the user: %s"
                                             (error-message-string err))
                          '((action . "cancel"))))))
           (toolspec-mcp--log server "answered an elicitation: %s"
                              (alist-get 'action answer))
           (funcall then answer))))))))

(defun toolspec-mcp--elicit-properties (schema)
  "SCHEMA's properties as (NAME-STRING SPEC REQUIRED-P) each, in order."
  (let ((required (mapcar (lambda (r) (format "%s" r)) (alist-get 'required schema))))
    (mapcar (lambda (p)
              (let ((name (format "%s" (car p))))
                (list name (cdr p) (and (member name required) t))))
            (let ((props (alist-get 'properties schema))) (and (consp props) props)))))

(defun toolspec-mcp--elicit-defaults (schema)
  "The answer to an elicitation of SCHEMA made of its defaults alone."
  (let ((content nil) (missing nil))
    (dolist (p (toolspec-mcp--elicit-properties schema))
      (let ((default (assq 'default (nth 1 p))))
        (cond (default (push (cons (intern (car p)) (cdr default)) content))
              ((nth 2 p) (push (car p) missing)))))
    (if missing
        '((action . "decline"))
      `((action . "accept") (content . ,(or (nreverse content) (make-hash-table)))))))

(defun toolspec-mcp--elicit-checker (name spec)
  "A tool plist checking the property NAME of SPEC, as required."
  (ignore-errors
    (car (toolspec-parse-json
          (toolspec-mcp--json
           `((name . "elicitation")
             (inputSchema . ((type . "object")
                             (properties . ((,(intern name) . ,spec)))
                             (required . [,name])))))
          'mcp))))

(defun toolspec-mcp--elicit-problem (name spec value)
  "Why VALUE is no value for property NAME of SPEC, or nil when it is."
  (let ((checker (toolspec-mcp--elicit-checker name spec)))
    (and checker
         (let ((problems (condition-case err
                             (toolspec-validate-arguments
                              checker (toolspec-mcp--json `((,(intern name) . ,value))))
                           (toolspec-error (list (list 'error "" (error-message-string err)))))))
           (and problems
                (mapconcat (lambda (p) (nth 2 p)) problems "; "))))))

(defun toolspec-mcp--elicit-choices (spec)
  "SPEC's choices as (LABEL . VALUE) each, or nil when it has none."
  (let ((enum (alist-get 'enum spec))
        (names (alist-get 'enumNames spec))
        (one-of (or (alist-get 'oneOf spec) (alist-get 'anyOf spec))))
    (cond
     ((and (vectorp enum) (> (length enum) 0))
      (cl-loop for v across enum
               for i from 0
               collect (cons (if (and (vectorp names) (< i (length names)))
                                 (format "%s" (aref names i))
                               (format "%s" v))
                             v)))
     ((and (vectorp one-of) (> (length one-of) 0)
           (cl-every (lambda (o) (and (consp o) (assq 'const o))) one-of))
      (cl-loop for o across one-of
               collect (cons (format "%s" (or (alist-get 'title o) (alist-get 'const o)))
                             (alist-get 'const o)))))))

(defun toolspec-mcp--elicit-read (name spec required)
  "Read property NAME of SPEC from the user; REQUIRED insists on a value.
Return (VALUE) or nil when the user gives none."
  (let* ((type (format "%s" (alist-get 'type spec)))
         (default (assq 'default spec))
         (label (format "%s%s%s"
                        (or (alist-get 'title spec) name)
                        (if-let* ((d (alist-get 'description spec)))
                            (format " (%s)" d) "")
                        (if required "" ", optional")))
         (choices (toolspec-mcp--elicit-choices spec))
         (answer nil) (done nil) (problem nil))
    (while (not done)
      (let* ((label (if problem (format "%s.  %s" problem label) label))
             (value
              (cond
               ((equal type "boolean")
                (list (if (y-or-n-p (format "%s%s? " label
                                            (if default
                                                (format " [default %s]"
                                                        (if (eq (cdr default) t) "yes" "no"))
                                              "")))
                          t :json-false)))
               (choices
                (let* ((d (and default (car (rassoc (cdr default) choices))))
                       (text (completing-read (format "%s%s: " label (if d (format " [%s]" d) ""))
                                              (mapcar #'car choices) nil t nil nil d)))
                  (and (not (string-empty-p text)) (list (cdr (assoc text choices))))))
               (t
                (let* ((d (and default (format "%s" (cdr default))))
                       (text (read-string (format "%s%s: " label (if d (format " [%s]" d) ""))
                                          nil nil d)))
                  (cond
                   ((string-empty-p text) nil)
                   ((member type '("number" "integer"))
                    (let ((n (ignore-errors (toolspec-mcp--parse text))))
                      (list (if (numberp n) n text))))
                   (t (list text))))))))
        (cond
         ((and (null value) required)
          (setq problem (format "%s is required" (or (alist-get 'title spec) name))))
         ((null value) (setq done t))
         ((setq problem (toolspec-mcp--elicit-problem name spec (car value)))
          (setq problem (format "%s: %s" (or (alist-get 'title spec) name) problem)))
         (t (setq answer value done t)))))
    answer))

(defun toolspec-mcp--elicit-prompt (server-name text schema)
  "Ask the user for SCHEMA's values for SERVER-NAME, showing its TEXT.
Return the answer: accept with the values, decline, or cancel when
the user quits."
  (let ((inhibit-quit nil))
    (condition-case nil
        (if (not (y-or-n-p (format "MCP server %s asks: %s  Answer? "
                                   server-name (if (stringp text) text "(no message)"))))
            '((action . "decline"))
          (let ((content nil))
            (dolist (p (toolspec-mcp--elicit-properties schema))
              (when-let* ((value (toolspec-mcp--elicit-read (nth 0 p) (nth 1 p) (nth 2 p))))
                (push (cons (intern (nth 0 p)) (car value)) content)))
            `((action . "accept") (content . ,(or (nreverse content) (make-hash-table))))))
      (quit '((action . "cancel"))))))

;;;; Sampling
;;
;; A server of the handshake era may send `sampling/createMessage': a
;; conversation (user and assistant messages), a system prompt and a
;; token limit, for the client's model to answer.  The user sees the
;; messages and the model they would go to, and answers y or n with
;; one key; only then does `gptel-request' send them, to the current
;; backend and model, without tools or context.  Declining answers the
;; server with the error the spec names for it (code -1).

(defvar gptel-backend)
(defvar gptel-model)
(defvar gptel-max-tokens)
(defvar gptel-temperature)
(defvar gptel-use-tools)
(defvar gptel-use-context)
(declare-function gptel-request "ext:gptel-request")
(declare-function gptel-backend-name "ext:gptel-request")

(defun toolspec-mcp--sample-text (content)
  "The text of CONTENT, a sampling message's content (a block or an array)."
  (mapconcat (lambda (block)
               (if (equal (alist-get 'type block) "text")
                   (format "%s" (alist-get 'text block))
                 (toolspec-mcp--block-text block)))
             (if (vectorp content) (append content nil) (list content))
             "\n"))

(defun toolspec-mcp--sample-prompt (messages)
  "MESSAGES of a sampling request as gptel's prompt list.
Return ((prompt . TEXT) (response . TEXT) ...), or signal when a
message is neither the user's nor the assistant's."
  (mapcar (lambda (m)
            (let ((role (alist-get 'role m)))
              (unless (member role '("user" "assistant"))
                (error "A message has role %S; a sampling message is the user's or the assistant's" role))
              (cons (if (equal role "user") 'prompt 'response)
                    (toolspec-mcp--sample-text (alist-get 'content m)))))
          (append messages nil)))

(defun toolspec-mcp--sample-model ()
  "The current gptel backend and model, as text."
  (format "%s:%s" (if (and (boundp 'gptel-backend) gptel-backend)
                      (gptel-backend-name gptel-backend) "?")
          (if (boundp 'gptel-model) gptel-model "?")))

(defun toolspec-mcp--sample-approve (server-name prompt system)
  "Show PROMPT and SYSTEM, asked by SERVER-NAME, and ask for y or n.
Return non-nil for y; \\[keyboard-quit] counts as n."
  (let ((buffer (get-buffer-create "*toolspec-mcp sampling*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "MCP server %s asks %s to answer:\n\n" server-name (toolspec-mcp--sample-model)))
        (when (stringp system) (insert "System: " system "\n\n"))
        (dolist (m prompt)
          (insert (if (eq (car m) 'prompt) "User: " "Assistant: ") (cdr m) "\n\n")))
      (goto-char (point-min))
      (special-mode))
    (display-buffer buffer)
    (let ((inhibit-quit nil)
          (question (format "MCP server %s asks %s to answer the messages shown; send them? (y or n) "
                            server-name (toolspec-mcp--sample-model)))
          key)
      (condition-case nil
          (progn
            (while (not (memq (setq key (read-key question)) '(?y ?n ?Y ?N ?\C-g)))
              (setq question (concat "Please answer y or n.  " question)))
            (memq key '(?y ?Y)))
        (quit nil)))))

(defun toolspec-mcp--sample (server id params)
  "Answer SERVER's `sampling/createMessage' request ID with PARAMS."
  (toolspec-mcp--sample-answer server params (toolspec-mcp--answer-with server id)))

(defun toolspec-mcp--sample-answer (server params then &optional wanted)
  "Answer SERVER's sampling PARAMS: call THEN with the answer.
The answer is the model's message, or (:error CODE TEXT) when the
user declines, sampling is off, or the model does not answer.
WANTED is as in `toolspec-mcp--elicit-answer': when it returns nil,
the user is not asked and the answer is an error."
  (let* ((name (toolspec-mcp--server-name server))
         (prompt (condition-case err
                     (toolspec-mcp--sample-prompt (alist-get 'messages params))
                   (error (funcall then (list :error -32602 (error-message-string err)))
                          'invalid)))
         (system (alist-get 'systemPrompt params)))
    (cond
     ((eq prompt 'invalid))
     ((not (eq toolspec-mcp-sampling 'ask))
      (toolspec-mcp--log server "refused a sampling request (`toolspec-mcp-sampling' is %s)" toolspec-mcp-sampling)
      (funcall then (list :error -1 "Sampling is turned off in this client")))
     ((not (and (require 'gptel nil t) (boundp 'gptel-backend) gptel-backend))
      (funcall then (list :error -1 "This client has no model to sample from")))
     (t
      (toolspec-mcp--ask-in-turn
       (lambda ()
         (cond
          ((and wanted (not (funcall wanted)))
           (funcall then (list :error -1 "The request was stopped")))
          ((not (toolspec-mcp--sample-approve name prompt system))
           (toolspec-mcp--log server "sampling declined by the user")
           (funcall then (list :error -1 "User rejected sampling request")))
          (t
           (toolspec-mcp--log server "sampling approved: sent to %s" (toolspec-mcp--sample-model))
           (let* ((max-tokens (alist-get 'maxTokens params))
                  (temperature (alist-get 'temperature params))
                  (gptel-max-tokens (if (natnump max-tokens) max-tokens gptel-max-tokens))
                  (gptel-temperature (if (numberp temperature) temperature gptel-temperature))
                  (gptel-use-tools nil)
                  (gptel-use-context nil)
                  (model (format "%s" gptel-model))
                  (buffer (generate-new-buffer " *toolspec-mcp sampling request*")))
             (with-current-buffer buffer
               (gptel-request prompt
                 :buffer buffer :stream nil
                 :system (if (stringp system) system nil)
                 :callback
                 (lambda (response info)
                   (cond
                    ((stringp response)
                     (funcall then
                              `((role . "assistant")
                                (content . ((type . "text") (text . ,response)))
                                (model . ,model)
                                (stopReason . ,(if (equal (plist-get info :stop-reason) "length")
                                                   "maxTokens" "endTurn")))))
                    ((or (null response) (eq response 'abort))
                     (funcall then
                              (list :error -32603
                                    (format "The model did not answer: %s"
                                            (or (plist-get info :status) response "no answer"))))))
                   (when (or (stringp response) (null response) (eq response 'abort))
                     (when (buffer-live-p buffer)
                       (let ((kill-buffer-query-functions nil)) (kill-buffer buffer))))))))))))))))

(defun toolspec-mcp--notification (server method params)
  "Handle notification METHOD with PARAMS from SERVER."
  (pcase method
    ("notifications/tools/list_changed"
     (when (eq (toolspec-mcp--server-state server) 'ready)
       (toolspec-mcp--log server "its tools changed: listing them again")
       (toolspec-mcp--list-tools server)))
    ("notifications/subscriptions/acknowledged"
     (toolspec-mcp--log server "listening for changes of its tools"))
    ("notifications/progress"
     (when-let* ((entry (gethash (alist-get 'progressToken params) (toolspec-mcp--server-progress server))))
       (let ((text (format "%s%s%s"
                           (alist-get 'progress params)
                           (if (numberp (alist-get 'total params)) (format "/%s" (alist-get 'total params)) "")
                           (if (stringp (alist-get 'message params)) (concat " " (alist-get 'message params)) ""))))
         (toolspec-mcp--log server "progress of %s: %s" (car entry) text)
         (unless (cdr entry)
           (setcdr entry (make-progress-reporter
                          (format "MCP %s: %s... " (toolspec-mcp--server-name server) (car entry)))))
         (progress-reporter-update (cdr entry) nil text))))
    ("notifications/message"
     (toolspec-mcp--log server "%s: %s" (alist-get 'level params)
                        (let ((data (alist-get 'data params)))
                          (if (stringp data) data (toolspec-mcp--json data)))))
    (_ nil)))

;;;; Streamable HTTP
;;
;; Each message is POSTed to the server's URL; a request's answer comes
;; back as one JSON body or as a stream of server-sent events whose
;; `data' lines hold messages (the server's own requests, such as
;; `elicitation/create' or `sampling/createMessage', and
;; notifications), the answer last.  The session the server gives
;; with `initialize' (the Mcp-Session-Id header) goes with every later
;; message, and so does the protocol version agreed on.
;;
;; A server of the handshake era may also send its own messages on a
;; standing GET of its URL, and may close a POST's event stream before
;; the answer, for the client to resume it with a GET carrying the
;; Last-Event-ID of the last event it got, after the `retry'
;; milliseconds the stream asked for.
;;
;; url.el hands over a body only when it is complete, which an event
;; stream may not be before the client answers a request in it (a
;; server that asks the user for input waits for the answer), and a
;; standing GET never is.  So every exchange runs on a network process
;; of its own, opened without waiting (:nowait), whose filter reads
;; the head, then each event as it comes: nothing here waits, so
;; Emacs never blocks on a server.  (url.el's proxies do not apply.)

(defun toolspec-mcp--http-headers (server &optional message)
  "The HTTP headers of SERVER's MESSAGE, an alist of strings."
  (let ((session (toolspec-mcp--server-session server))
        (protocol (toolspec-mcp--server-protocol server))
        (method (alist-get 'method message))
        (name (alist-get 'name (alist-get 'params message))))
    (append '(("Content-Type" . "application/json")
              ("Accept" . "application/json, text/event-stream"))
            (and session `(("Mcp-Session-Id" . ,session)))
            (and protocol `(("MCP-Protocol-Version" . ,protocol)))
            ;; The stateless era mirrors the method and the tool
            ;; into headers (a name beyond ASCII is left out).
            (and (memq (toolspec-mcp--server-era server) '(modern probing)) method
                 `(("Mcp-Method" . ,method)))
            (and (memq (toolspec-mcp--server-era server) '(modern probing))
                 (equal method "tools/call") (stringp name)
                 (string-match-p "\\`[!-~]+\\'" name)
                 `(("Mcp-Name" . ,name)))
            (plist-get (toolspec-mcp--server-config server) :headers))))

(defun toolspec-mcp--http-post (server message &optional then)
  "POST MESSAGE to SERVER; dispatch what it answers, then call THEN."
  (toolspec-mcp--exchange-open server "POST" (list (alist-get 'id message))
                               (encode-coding-string (toolspec-mcp--json message) 'utf-8)
                               (toolspec-mcp--http-headers server message) then))

(defun toolspec-mcp--http-answer (server id code head body)
  "Handle SERVER's answer to its message ID (nil for a notification).
CODE is the HTTP status (nil when there was no answer), HEAD the
status line and headers, BODY the text of a body that is no event
stream, or why there was no answer."
  (cond
   ((or (not (integerp code)) (>= code 300))
    (let ((why (if (integerp code)
                   (format "HTTP %d%s" code
                           (if (and body (not (string-blank-p body)))
                               (concat ": " (truncate-string-to-width (string-trim body) 200))
                             ""))
                 (format "no answer (%s)" body))))
      (toolspec-mcp--log server "POST failed: %s" why)
      ;; A JSON-RPC error in the body says more than the status.
      (when (and id body (integerp code) (string-match-p "\\`[ \t\r\n]*{" body))
        (let ((answer (ignore-errors (toolspec-mcp--parse body))))
          (when (and (consp answer) (equal (alist-get 'id answer) id) (assq 'error answer))
            (toolspec-mcp--dispatch server body))))
      ;; The spec says 404; the TypeScript SDK's servers say 400
      ;; "No valid session ID provided".
      (when (and (or (eql code 404)
                     (and (eql code 400) body (string-match-p "session" body)))
                 (toolspec-mcp--server-session server)
                 (eq (toolspec-mcp--server-state server) 'ready))
        ;; The session has ended on the server: a new one is needed.
        (toolspec-mcp--log server "session expired: connecting again")
        (cl-incf (toolspec-mcp--server-generation server))
        (toolspec-mcp--fail-pending server (format "the server's session ended (%s)" why))
        (toolspec-mcp--start server))
      (when id (toolspec-mcp--finish server id (list :error why)))))
   ((and body (not (string-blank-p body)))
    (toolspec-mcp--dispatch server body)))
  ;; An answer that did not answer the request.
  (when (and id (gethash id (toolspec-mcp--server-pending server)))
    (toolspec-mcp--finish server id (list :error (format "HTTP %s without an answer to the request"
                                                         (or code head))))))

;; A server-sent event stream is parsed by `toolspec-mcp--sse-parse':
;; events end at a blank line; `data' lines make the message, `id' the
;; event's id (sent back as Last-Event-ID to resume the stream) and
;; `retry' the milliseconds to wait before reconnecting.

(defun toolspec-mcp--sse-parse (text)
  "The complete events of TEXT, server-sent events, and what is left.
Return (EVENTS . REST): EVENTS are plists (:data STRING-OR-NIL :id
STRING-OR-NIL :retry MILLISECONDS-OR-NIL) in order, REST the start of
an event not yet ended.  Lines may end in CR, LF or CRLF."
  (let* ((held (and (string-suffix-p "\r" text) "\r"))
         (text (replace-regexp-in-string "\r\n?" "\n" (if held (substring text 0 -1) text) t t))
         (last (let ((i 0) last)
                 (while (setq i (string-search "\n\n" text i))
                   (setq last (+ i 2) i (1+ i)))
                 last))
         events)
    (when last
      (dolist (block (split-string (substring text 0 last) "\n\n+" t))
        (let (data id retry)
          (dolist (line (split-string block "\n"))
            (when (string-match "\\`\\([^:]+\\)\\(?::[ ]?\\(.*\\)\\)?\\'" line)
              (let ((field (match-string 1 line))
                    (value (or (match-string 2 line) "")))
                (pcase field
                  ("data" (push value data))
                  ("id" (unless (string-search "\0" value) (setq id value)))
                  ("retry" (when (string-match-p "\\`[0-9]+\\'" value)
                             (setq retry (string-to-number value))))))))
          (push (list :data (and data (string-join (nreverse data) "\n")) :id id :retry retry)
                events))))
    (cons (nreverse events) (concat (if last (substring text last) text) held))))

;;;; HTTP exchanges

(cl-defstruct (toolspec-mcp--stream (:constructor toolspec-mcp--stream-make)
                                    (:copier nil))
  "One HTTP exchange with SERVER on a network process of its own.
METHOD is \"POST\" (PAYLOAD, the message, with HEADERS) or \"GET\".
KIND is `post', `standing' (a GET for the server's own messages,
reopened when it ends) or `resume' (a GET for the rest of a POST's
stream, kept while the requests IDS wait).  LAST-ID and RETRY are
the last event id and retry time seen; FAILURES counts ends without
an event.  THEN, if non-nil, is called once when the head of the
answer is in (for a GET) or the exchange has ended."
  server method kind ids payload headers last-id retry process (input "") head status
  chunked length sse (body "") (failures 0) timer (got nil) then)

(defconst toolspec-mcp--stream-max-failures 6
  "Ends without a single event after which a GET stream is not reopened.")

(defun toolspec-mcp--exchange-open (server method ids payload headers &optional then)
  "Start an exchange METHOD with SERVER: PAYLOAD and HEADERS, for requests IDS.
THEN, if non-nil, is called when it has ended."
  (let ((stream (toolspec-mcp--stream-make :server server :method method :kind 'post
                                           :ids (delq nil ids) :payload payload
                                           :headers headers :then then)))
    (push stream (toolspec-mcp--server-streams server))
    (toolspec-mcp--stream-connect stream)
    stream))

(defun toolspec-mcp--stream-open (server kind last-id ids retry &optional delay then)
  "Open a GET stream of KIND on SERVER after DELAY milliseconds.
LAST-ID, if non-nil, resumes the stream that had it; IDS are the
requests a `resume' stream answers; RETRY the server's retry time.
THEN, if non-nil, is called once the server answered the GET (or
failed to), or after `toolspec-mcp-probe-timeout' seconds."
  (let ((stream (toolspec-mcp--stream-make :server server :method "GET" :kind kind
                                           :last-id last-id :ids ids :retry retry :then then)))
    (push stream (toolspec-mcp--server-streams server))
    (toolspec-mcp--stream-schedule stream (or delay 0))
    (when then
      (run-at-time toolspec-mcp-probe-timeout nil #'toolspec-mcp--stream-go-on stream))
    stream))

(defun toolspec-mcp--stream-go-on (stream)
  "Call STREAM's THEN function, once."
  (when-let* ((then (toolspec-mcp--stream-then stream)))
    (setf (toolspec-mcp--stream-then stream) nil)
    (funcall then)))

(defun toolspec-mcp--stream-schedule (stream delay)
  "Connect STREAM after DELAY milliseconds."
  (let ((generation (toolspec-mcp--server-generation (toolspec-mcp--stream-server stream))))
    (setf (toolspec-mcp--stream-timer stream)
          (run-at-time (/ delay 1000.0) nil
                       (lambda ()
                         (setf (toolspec-mcp--stream-timer stream) nil)
                         (when (= generation (toolspec-mcp--server-generation
                                              (toolspec-mcp--stream-server stream)))
                           (toolspec-mcp--stream-connect stream)))))))

(defun toolspec-mcp--stream-drop (stream)
  "Close STREAM for good."
  (let ((server (toolspec-mcp--stream-server stream)))
    (setf (toolspec-mcp--server-streams server) (delq stream (toolspec-mcp--server-streams server)))
    (when (toolspec-mcp--stream-timer stream)
      (cancel-timer (toolspec-mcp--stream-timer stream))
      (setf (toolspec-mcp--stream-timer stream) nil))
    (let ((proc (toolspec-mcp--stream-process stream)))
      (setf (toolspec-mcp--stream-process stream) nil)
      (when (processp proc) (delete-process proc)))))

(defun toolspec-mcp--streams-close (server)
  "Close all of SERVER's exchanges and GET streams."
  (mapc #'toolspec-mcp--stream-drop (toolspec-mcp--server-streams server)))

(defun toolspec-mcp--header-value (value)
  "VALUE as bytes for an HTTP header: UTF-8, line breaks removed."
  (encode-coding-string (replace-regexp-in-string "[\r\n]" "" (format "%s" value) t t) 'utf-8))

(defun toolspec-mcp--stream-connect (stream)
  "Open STREAM's connection without waiting; its sentinel sends the request."
  (let* ((server (toolspec-mcp--stream-server stream))
         (url (url-generic-parse-url (plist-get (toolspec-mcp--server-config server) :url)))
         (tls (equal (url-type url) "https"))
         (host (url-host url))
         (port (or (url-portspec url) (if tls 443 80))))
    (setf (toolspec-mcp--stream-input stream) ""
          (toolspec-mcp--stream-body stream) ""
          (toolspec-mcp--stream-head stream) nil
          (toolspec-mcp--stream-status stream) nil
          (toolspec-mcp--stream-chunked stream) nil
          (toolspec-mcp--stream-length stream) nil
          (toolspec-mcp--stream-sse stream) nil
          (toolspec-mcp--stream-got stream) nil)
    (condition-case err
        (let ((proc (open-network-stream
                     (format "toolspec-mcp %s %s" (toolspec-mcp--server-name server)
                             (toolspec-mcp--stream-method stream))
                     nil host port :type (if tls 'tls 'plain) :nowait t
                     :coding 'binary)))
          (set-process-query-on-exit-flag proc nil)
          (setf (toolspec-mcp--stream-process stream) proc)
          (set-process-filter proc (lambda (_proc string) (toolspec-mcp--stream-take stream string)))
          (set-process-sentinel proc (lambda (proc event) (toolspec-mcp--stream-sentinel stream proc event)))
          ;; A connection made at once sends no "open" event.
          (if (eq (process-status proc) 'open)
              (toolspec-mcp--stream-request stream)
            (toolspec-mcp--stream-watch stream proc)))
      (error (toolspec-mcp--stream-ended stream (error-message-string err))))))

(defun toolspec-mcp--stream-watch (stream proc)
  "Watch PROC, STREAM's connection being made, every second.
A host name that cannot be looked up fails PROC without calling its
sentinel (Emacs 28 to 30): that failure ends STREAM here."
  (run-at-time 1 nil
               (lambda ()
                 (when (eq proc (toolspec-mcp--stream-process stream))
                   (if (eq (process-status proc) 'connect)
                       (toolspec-mcp--stream-watch stream proc)
                     (unless (memq (process-status proc) '(open run))
                       (setf (toolspec-mcp--stream-process stream) nil)
                       (delete-process proc)
                       (toolspec-mcp--stream-ended stream "the connection failed")))))))

(defun toolspec-mcp--stream-request (stream)
  "Send STREAM's request."
  (let* ((server (toolspec-mcp--stream-server stream))
         (url (url-generic-parse-url (plist-get (toolspec-mcp--server-config server) :url)))
         (path (let ((f (url-filename url))) (if (string-empty-p f) "/" f)))
         (host `(("Host" . ,(if (url-portspec url)
                                (format "%s:%s" (url-host url) (url-portspec url))
                              (url-host url)))))
         (payload (toolspec-mcp--stream-payload stream))
         (headers
          (if (equal (toolspec-mcp--stream-method stream) "POST")
              (append host (toolspec-mcp--stream-headers stream)
                      `(("Content-Length" . ,(length payload))))
            (let ((session (toolspec-mcp--server-session server))
                  (protocol (toolspec-mcp--server-protocol server))
                  (last-id (toolspec-mcp--stream-last-id stream)))
              (toolspec-mcp--log server "GET stream %s%s" (toolspec-mcp--stream-kind stream)
                                 (if last-id (format " from event %s" last-id) ""))
              (append host
                      '(("Accept" . "text/event-stream") ("Cache-Control" . "no-cache"))
                      (and session `(("Mcp-Session-Id" . ,session)))
                      (and protocol `(("MCP-Protocol-Version" . ,protocol)))
                      (and last-id `(("Last-Event-ID" . ,last-id)))
                      (plist-get (toolspec-mcp--server-config server) :headers))))))
    (process-send-string
     (toolspec-mcp--stream-process stream)
     (concat (encode-coding-string
              (format "%s %s HTTP/1.1\r\n" (toolspec-mcp--stream-method stream) path) 'utf-8)
             (mapconcat (lambda (h) (concat (toolspec-mcp--header-value (car h)) ": "
                                            (toolspec-mcp--header-value (cdr h)) "\r\n"))
                        headers "")
             "Connection: close\r\n\r\n"
             payload))))

(defun toolspec-mcp--stream-sentinel (stream proc event)
  "The sentinel of STREAM's process PROC, told EVENT."
  (cond
   ((not (eq proc (toolspec-mcp--stream-process stream))))
   ((string-prefix-p "open" event)
    (condition-case err (toolspec-mcp--stream-request stream)
      (error (setf (toolspec-mcp--stream-process stream) nil)
             (delete-process proc)
             (toolspec-mcp--stream-ended stream (error-message-string err)))))
   ((not (process-live-p proc))
    (setf (toolspec-mcp--stream-process stream) nil)
    (toolspec-mcp--stream-ended stream (string-trim event)))))

(defun toolspec-mcp--chunk-at (input start)
  "The chunk of chunked transfer coding at START of INPUT, if its line is there.
Return (SIZE . DATA-START)."
  (let ((window (substring input start (min (length input) (+ start 1024)))))
    (and (string-match "\\`\\([0-9a-fA-F]+\\)[^\r\n]*\r\n" window)
         (cons (string-to-number (match-string 1 window) 16)
               (+ start (match-end 0))))))

(defun toolspec-mcp--stream-read-head (stream)
  "Read STREAM's status line and headers, once they are all in."
  (let* ((input (toolspec-mcp--stream-input stream))
         (end (string-search "\r\n\r\n" input)))
    (when end
      (let* ((head (substring input 0 end))
             (case-fold-search t)
             (header (lambda (name)
                       (and (string-match (format "^%s:[ \t]*\\([^\r\n]*\\)" name) head)
                            (string-trim (match-string 1 head)))))
             (status (and (string-match "\\`HTTP/[0-9.]+ \\([0-9]+\\)" head)
                          (string-to-number (match-string 1 head))))
             (length (funcall header "content-length")))
        (setf (toolspec-mcp--stream-head stream) head
              (toolspec-mcp--stream-status stream) status
              (toolspec-mcp--stream-chunked stream)
              (string-match-p "chunked" (or (funcall header "transfer-encoding") ""))
              (toolspec-mcp--stream-length stream)
              (and length (string-match-p "\\`[0-9]+\\'" length) (string-to-number length))
              (toolspec-mcp--stream-sse stream)
              (and (eql status 200)
                   (string-prefix-p "text/event-stream" (or (funcall header "content-type") "")))
              (toolspec-mcp--stream-input stream) (substring input (+ end 4)))
        (when-let* (((equal (toolspec-mcp--stream-method stream) "POST"))
                    (session (funcall header "mcp-session-id")))
          (setf (toolspec-mcp--server-session (toolspec-mcp--stream-server stream)) session))))))

(defun toolspec-mcp--stream-take (stream string)
  "Take STRING, bytes STREAM's server sent: the head, then the body."
  (let ((server (toolspec-mcp--stream-server stream))
        (complete nil))
    (setf (toolspec-mcp--stream-input stream) (concat (toolspec-mcp--stream-input stream) string))
    (unless (toolspec-mcp--stream-head stream)
      (toolspec-mcp--stream-read-head stream)
      (when (and (toolspec-mcp--stream-head stream)
                 (equal (toolspec-mcp--stream-method stream) "GET"))
        (if (toolspec-mcp--stream-sse stream)
            (toolspec-mcp--stream-go-on stream)
          ;; Not a stream: a server without one says 405.
          (toolspec-mcp--stream-stop-process stream))))
    (when (and (toolspec-mcp--stream-head stream) (toolspec-mcp--stream-process stream))
      ;; The body, its chunks decoded.
      (if (not (toolspec-mcp--stream-chunked stream))
          (setf (toolspec-mcp--stream-body stream)
                (concat (toolspec-mcp--stream-body stream) (toolspec-mcp--stream-input stream))
                (toolspec-mcp--stream-input stream) ""
                complete (let ((n (toolspec-mcp--stream-length stream)))
                           (and n (>= (length (toolspec-mcp--stream-body stream)) n))))
        (let ((input (toolspec-mcp--stream-input stream)) (start 0) (done nil))
          (while (and (not done) (toolspec-mcp--chunk-at input start))
            (let* ((chunk (toolspec-mcp--chunk-at input start))
                   (size (car chunk))
                   (data-start (cdr chunk)))
              (cond
               ((= size 0) (setq done 'end start (length input)))
               ((<= (+ data-start size 2) (length input))
                (setf (toolspec-mcp--stream-body stream)
                      (concat (toolspec-mcp--stream-body stream) (substring input data-start (+ data-start size))))
                (setq start (+ data-start size 2)))
               (t (setq done t)))))
          (setf (toolspec-mcp--stream-input stream) (substring input start))
          (setq complete (eq done 'end))))
      (cond
       ((> (+ (length (toolspec-mcp--stream-body stream)) (length (toolspec-mcp--stream-input stream)))
           toolspec-mcp-max-message-size)
        (let ((why (format "a message longer than %d bytes (`toolspec-mcp-max-message-size')"
                           toolspec-mcp-max-message-size)))
          (toolspec-mcp--log server "%s %s: %s; closed" (toolspec-mcp--stream-method stream)
                             (toolspec-mcp--stream-kind stream) why)
          (toolspec-mcp--stream-drop stream)
          (dolist (id (toolspec-mcp--stream-ids stream))
            (toolspec-mcp--finish server id (list :error (concat "answer with " why))))))
       ((toolspec-mcp--stream-sse stream)
        (toolspec-mcp--stream-events stream)
        (when (and complete (toolspec-mcp--stream-process stream))
          (toolspec-mcp--stream-stop-process stream)))
       (complete
        (toolspec-mcp--stream-stop-process stream))))))

(defun toolspec-mcp--stream-events (stream)
  "Dispatch the complete events in STREAM's body."
  (let ((server (toolspec-mcp--stream-server stream))
        (parsed (toolspec-mcp--sse-parse (toolspec-mcp--stream-body stream))))
    (setf (toolspec-mcp--stream-body stream) (cdr parsed))
    (dolist (event (car parsed))
      (setf (toolspec-mcp--stream-got stream) t)
      (when (plist-get event :id) (setf (toolspec-mcp--stream-last-id stream) (plist-get event :id)))
      (when (plist-get event :retry) (setf (toolspec-mcp--stream-retry stream) (plist-get event :retry)))
      (let ((data (plist-get event :data)))
        (when (and data (not (string-blank-p data)))
          (toolspec-mcp--dispatch server (decode-coding-string data 'utf-8)))))
    ;; A resumed stream is done when its requests are answered.
    (when (and (eq (toolspec-mcp--stream-kind stream) 'resume)
               (toolspec-mcp--stream-process stream)
               (not (toolspec-mcp--stream-waiting-p stream)))
      (toolspec-mcp--stream-drop stream))))

(defun toolspec-mcp--stream-waiting-p (stream)
  "Non-nil when a request of STREAM still waits for its answer."
  (let ((pending (toolspec-mcp--server-pending (toolspec-mcp--stream-server stream))))
    (cl-some (lambda (id) (gethash id pending)) (toolspec-mcp--stream-ids stream))))

(defun toolspec-mcp--stream-stop-process (stream)
  "Close STREAM's connection, its answer read; decide what follows."
  (let ((proc (toolspec-mcp--stream-process stream)))
    (setf (toolspec-mcp--stream-process stream) nil)
    (when (processp proc) (delete-process proc))
    (toolspec-mcp--stream-ended stream "closed")))

(defun toolspec-mcp--stream-ended (stream why)
  "STREAM's connection ended (WHY): answer, reopen, or let it go."
  (let ((server (toolspec-mcp--stream-server stream)))
    (when (memq stream (toolspec-mcp--server-streams server))
      (if (equal (toolspec-mcp--stream-method stream) "POST")
          (toolspec-mcp--post-ended stream why)
        (toolspec-mcp--get-ended stream why))
      (toolspec-mcp--stream-go-on stream))))

(defun toolspec-mcp--post-ended (stream why)
  "STREAM, a POST, ended (WHY): hand over its answer."
  (let* ((server (toolspec-mcp--stream-server stream))
         (id (car (toolspec-mcp--stream-ids stream)))
         (status (toolspec-mcp--stream-status stream)))
    (toolspec-mcp--stream-drop stream)
    (cond
     ((not (toolspec-mcp--stream-head stream))
      (toolspec-mcp--http-answer server id nil nil why))
     ((not (toolspec-mcp--stream-sse stream))
      (toolspec-mcp--http-answer server id status (toolspec-mcp--stream-head stream)
                                 (decode-coding-string
                                  (concat (toolspec-mcp--stream-body stream)
                                          (toolspec-mcp--stream-input stream))
                                  'utf-8)))
     ((not (and id (gethash id (toolspec-mcp--server-pending server)))))
     ((toolspec-mcp--stream-last-id stream)
      ;; The stream closed before the answer, with event ids: resume
      ;; it with a GET after the time it asked for.
      (let ((retry (or (toolspec-mcp--stream-retry stream) 1000)))
        (toolspec-mcp--log server "the answer's stream closed at event %s: resuming in %d ms"
                           (toolspec-mcp--stream-last-id stream) retry)
        (toolspec-mcp--stream-open server 'resume (toolspec-mcp--stream-last-id stream)
                                   (list id) retry retry)))
     (t (toolspec-mcp--finish server id (list :error "HTTP 200 without an answer to the request"))))))

(defun toolspec-mcp--get-ended (stream why)
  "STREAM, a GET, ended (WHY): reopen it, or let it go."
  (let* ((server (toolspec-mcp--stream-server stream))
         (status (toolspec-mcp--stream-status stream))
         (kind (toolspec-mcp--stream-kind stream)))
    (cond
     ((not (memq (toolspec-mcp--server-state server) '(connecting ready)))
      (toolspec-mcp--stream-drop stream))
     ((and status (/= status 200))
      ;; 405: the server has no GET stream.  Others: the POSTs will
      ;; find out what is wrong with the session.
      (toolspec-mcp--log server "GET stream %s: HTTP %d%s" kind status
                         (if (eql status 405) " (the server offers none)" ""))
      (toolspec-mcp--stream-drop stream))
     ((and (eq kind 'resume) (not (toolspec-mcp--stream-waiting-p stream)))
      (toolspec-mcp--stream-drop stream))
     (t
      (if (toolspec-mcp--stream-got stream)
          (setf (toolspec-mcp--stream-failures stream) 0)
        (cl-incf (toolspec-mcp--stream-failures stream)))
      (if (> (toolspec-mcp--stream-failures stream) toolspec-mcp--stream-max-failures)
          (progn (toolspec-mcp--log server "GET stream %s: given up after %d failures (%s)"
                                    kind toolspec-mcp--stream-max-failures why)
                 (toolspec-mcp--stream-drop stream))
        ;; As the stream asked (`retry'), else a second; doubled for
        ;; each end without an event.
        (let ((delay (* (or (toolspec-mcp--stream-retry stream) 1000)
                        (expt 2 (toolspec-mcp--stream-failures stream)))))
          (toolspec-mcp--log server "GET stream %s ended (%s): again in %d ms" kind why delay)
          (toolspec-mcp--stream-schedule stream delay)))))))

;;;; Starting and stopping

(defun toolspec-mcp--stderr-filter (server)
  "The filter of SERVER's standard error: into its log."
  (lambda (_proc string) (toolspec-mcp--log-insert server string)))

(defun toolspec-mcp--start (server)
  "Start SERVER's process and its handshake; return at once."
  (let* ((name (toolspec-mcp--server-name server))
         (config (toolspec-mcp--server-config server))
         (command (plist-get config :command))
         (generation (cl-incf (toolspec-mcp--server-generation server))))
    (setf (toolspec-mcp--server-state server) 'connecting
          (toolspec-mcp--server-error server) nil
          (toolspec-mcp--server-started server) (float-time))
    (toolspec-mcp--refresh-list)
    (cond
     ((plist-get config :url)
      (toolspec-mcp--streams-close server)
      (setf (toolspec-mcp--server-session server) nil)
      (toolspec-mcp--log server "connecting to %s" (plist-get config :url))
      (toolspec-mcp--open server))
     ((not (stringp command))
      (toolspec-mcp--give-up server "its configuration has neither :command nor :url"))
     ;; Emacs 28 reports a missing program only when the process ends.
     ((not (if (file-name-directory command)
               (file-executable-p (expand-file-name command "~/"))
             (executable-find command)))
      (toolspec-mcp--give-up server (format "cannot start %s: no such program%s" command
                                            (if (file-name-directory command) "" " on `exec-path'"))))
     (t
      (let ((input (generate-new-buffer (format " *toolspec-mcp-input %s*" name))))
        (with-current-buffer input (set-buffer-multibyte t) (setq buffer-undo-list t))
        (setf (toolspec-mcp--server-input server) input))
      (condition-case err
          (let* ((default-directory (expand-file-name "~/")) ; never a remote directory
                 (process-environment
                  (append (mapcar (lambda (kv) (format "%s=%s" (car kv) (cdr kv)))
                                  (plist-get config :env))
                          process-environment))
                 (stderr (make-pipe-process :name (format "toolspec-mcp %s stderr" name)
                                            :noquery t :coding 'utf-8
                                            :filter (toolspec-mcp--stderr-filter server)
                                            :sentinel #'ignore))
                 (proc (make-process :name (format "toolspec-mcp %s" name)
                                     :command (cons command (plist-get config :args))
                                     :connection-type 'pipe
                                     :coding 'utf-8-unix
                                     :noquery t
                                     :stderr stderr
                                     :filter (toolspec-mcp--filter server)
                                     :sentinel (toolspec-mcp--sentinel server generation))))
            (process-put proc 'toolspec-mcp-stderr stderr)
            (setf (toolspec-mcp--server-process server) proc)
            (toolspec-mcp--log server "started: %s" (mapconcat #'shell-quote-argument
                                                               (cons command (plist-get config :args)) " "))
            (toolspec-mcp--open server))
        (error
         (toolspec-mcp--give-up server (format "cannot start %s: %s" command (error-message-string err)))))))))

(defun toolspec-mcp--give-up (server reason)
  "SERVER cannot be used, for REASON: mark it failed."
  (setf (toolspec-mcp--server-state server) 'failed)
  (toolspec-mcp--set-error server reason)
  (message "toolspec-mcp: server %s: %s" (toolspec-mcp--server-name server) reason))

(defun toolspec-mcp--abandon (server reason)
  "Stop SERVER's process because of REASON; it is restarted as if it died."
  (toolspec-mcp--set-error server reason)
  (when (process-live-p (toolspec-mcp--server-process server))
    (delete-process (toolspec-mcp--server-process server))))

(defun toolspec-mcp--cleanup-process (server)
  "Forget SERVER's process and its buffers."
  (let ((proc (toolspec-mcp--server-process server)))
    (when (processp proc)
      (let ((stderr (process-get proc 'toolspec-mcp-stderr)))
        (when (process-live-p stderr) (delete-process stderr)))
      (when (process-live-p proc) (delete-process proc))))
  (when (buffer-live-p (toolspec-mcp--server-input server))
    (kill-buffer (toolspec-mcp--server-input server)))
  (setf (toolspec-mcp--server-process server) nil))

(defun toolspec-mcp--sentinel (server generation)
  "The sentinel of SERVER's process started as GENERATION."
  (lambda (proc event)
    (unless (process-live-p proc)
      (let ((stderr (process-get proc 'toolspec-mcp-stderr)))
        (when (process-live-p stderr)
          (accept-process-output stderr 0)
          (delete-process stderr)))
      (when (= generation (toolspec-mcp--server-generation server))
        (let ((why (format "the process ended: %s" (string-trim event))))
          (toolspec-mcp--log server "%s" why)
          (toolspec-mcp--fail-pending server (format "MCP server %s is down (%s)"
                                                     (toolspec-mcp--server-name server) why))
          (when (buffer-live-p (toolspec-mcp--server-input server))
            (kill-buffer (toolspec-mcp--server-input server)))
          (setf (toolspec-mcp--server-process server) nil)
          ;; A server that died of the probe is of the handshake era.
          (when (eq (toolspec-mcp--server-era server) 'probing)
            (setf (toolspec-mcp--server-era server) 'legacy
                  (toolspec-mcp--server-protocol server) nil))
          (unless (memq (toolspec-mcp--server-state server) '(disconnected failed))
            (unless (toolspec-mcp--server-error server)
              (setf (toolspec-mcp--server-error server) why))
            (toolspec-mcp--schedule-restart server)))))))

(defun toolspec-mcp--schedule-restart (server)
  "SERVER died: restart it after the next of `toolspec-mcp-restart-delays'."
  (when (and (toolspec-mcp--server-started server)
             (> (- (float-time) (toolspec-mcp--server-started server)) toolspec-mcp-stable-time))
    (setf (toolspec-mcp--server-restarts server) 0))
  (let* ((n (or (toolspec-mcp--server-restarts server) 0))
         (delay (nth n toolspec-mcp-restart-delays)))
    (if (null delay)
        (toolspec-mcp--give-up server (format "it died %d times in a row; not restarted (%s)"
                                              n (toolspec-mcp--server-error server)))
      (setf (toolspec-mcp--server-state server) 'down
            (toolspec-mcp--server-restarts server) (1+ n))
      (toolspec-mcp--log server "restarting in %s s" delay)
      (setf (toolspec-mcp--server-restart-timer server)
            (run-at-time delay nil #'toolspec-mcp--restart-now server))
      (toolspec-mcp--refresh-list))))

(defun toolspec-mcp--restart-now (server)
  "Start SERVER again, if it is still down."
  (setf (toolspec-mcp--server-restart-timer server) nil)
  (when (eq (toolspec-mcp--server-state server) 'down)
    (toolspec-mcp--start server)))

;;;; Handshake and tools

(defun toolspec-mcp--open (server)
  "Find SERVER's protocol era, then list its tools.
As the spec's versioning page describes for dual-era clients: probe
with `server/discover' in the stateless revision; a result naming it,
or a modern error, means the stateless era; any other answer, or
none within `toolspec-mcp-probe-timeout', means the handshake era and
`initialize'.  The era found is kept for the server's restarts."
  (pcase (toolspec-mcp--server-era server)
    ('modern (toolspec-mcp--list-tools server))
    ('legacy (toolspec-mcp--initialize server))
    (_
     (setf (toolspec-mcp--server-era server) 'probing
           (toolspec-mcp--server-protocol server) toolspec-mcp-modern-version)
     (toolspec-mcp--request
      server "server/discover" nil
      (lambda (result)
        (let ((versions (append (if (plist-get result :error)
                                    (and (eql (plist-get result :code) -32022)
                                         (alist-get 'supported (plist-get result :data)))
                                  (alist-get 'supportedVersions result))
                                nil)))
          (if (member toolspec-mcp-modern-version versions)
              (progn
                (setf (toolspec-mcp--server-era server) 'modern
                      (toolspec-mcp--server-info server) result)
                (toolspec-mcp--log server "stateless protocol %s: %s %s" toolspec-mcp-modern-version
                                   (alist-get 'name (alist-get 'io.modelcontextprotocol/serverInfo
                                                               (alist-get '_meta result)))
                                   (alist-get 'version (alist-get 'io.modelcontextprotocol/serverInfo
                                                                  (alist-get '_meta result))))
                (toolspec-mcp--list-tools server))
            (when (toolspec-mcp--live-p server)
              (toolspec-mcp--log server "server/discover: %s; falling back to initialize"
                                 (or (plist-get result :error) "no stateless version"))
              (setf (toolspec-mcp--server-era server) 'legacy
                    (toolspec-mcp--server-protocol server) nil)
              (toolspec-mcp--initialize server)))))
      toolspec-mcp-probe-timeout))))

(defun toolspec-mcp--initialize (server)
  "Send `initialize' to SERVER; list its tools when it answers."
  (toolspec-mcp--request
   server "initialize"
   `((protocolVersion . ,(car toolspec-mcp-protocol-versions))
     (capabilities . ,(toolspec-mcp--capabilities))
     (clientInfo . ((name . "toolspec") (version . ,toolspec-version))))
   (lambda (result)
     (cond
      ((plist-get result :error)
       (if (toolspec-mcp--http-p server)
           (progn (toolspec-mcp--set-error server (format "initialize failed: %s" (plist-get result :error)))
                  (toolspec-mcp--schedule-restart server))
         (toolspec-mcp--abandon server (format "initialize failed: %s" (plist-get result :error)))))
      ((not (member (alist-get 'protocolVersion result) toolspec-mcp-protocol-versions))
       (toolspec-mcp--give-up server (format "it speaks protocol %S; this client speaks %s"
                                             (alist-get 'protocolVersion result)
                                             (string-join toolspec-mcp-protocol-versions ", ")))
       (toolspec-mcp--cleanup-process server))
      (t
       (setf (toolspec-mcp--server-protocol server) (alist-get 'protocolVersion result)
             (toolspec-mcp--server-info server) result)
       (toolspec-mcp--log server "initialized: %s %s, protocol %s"
                          (alist-get 'name (alist-get 'serverInfo result))
                          (alist-get 'version (alist-get 'serverInfo result))
                          (alist-get 'protocolVersion result))
       (if (not (toolspec-mcp--http-p server))
           (progn (ignore-errors (toolspec-mcp--notify server "notifications/initialized"))
                  (toolspec-mcp--list-tools server))
         ;; Over HTTP each message has a connection of its own: the
         ;; server is told it is initialized before anything else is
         ;; sent, and its GET stream, where its own messages come, is
         ;; open before the tools are listed.
         (let ((message '((jsonrpc . "2.0") (method . "notifications/initialized")))
               (generation (toolspec-mcp--server-generation server)))
           (toolspec-mcp--trace server 'out message)
           (toolspec-mcp--http-post
            server message
            (lambda ()
              (when (= generation (toolspec-mcp--server-generation server))
                (toolspec-mcp--stream-open
                 server 'standing nil nil nil 0
                 (lambda ()
                   (when (= generation (toolspec-mcp--server-generation server))
                     (toolspec-mcp--list-tools server))))))))))))
   toolspec-mcp-connect-timeout))

(defun toolspec-mcp--list-tools (server)
  "List SERVER's tools, every page, then register them.
A listing asked for while one runs starts again when it ends."
  (if (toolspec-mcp--server-listing server)
      (setf (toolspec-mcp--server-relist server) t)
    (setf (toolspec-mcp--server-listing server) t
          (toolspec-mcp--server-relist server) nil)
    (toolspec-mcp--list-page server nil nil)))

(defun toolspec-mcp--list-page (server cursor tools)
  "Ask SERVER for the page of its tools at CURSOR; TOOLS are those so far."
  (toolspec-mcp--request
   server "tools/list" (and cursor `((cursor . ,cursor)))
   (lambda (result)
     (if (plist-get result :error)
         (progn (setf (toolspec-mcp--server-listing server) nil)
                (toolspec-mcp--abandon server (format "tools/list failed: %s" (plist-get result :error))))
       (let ((tools (append (reverse (append (alist-get 'tools result) nil)) tools))
             (next (alist-get 'nextCursor result)))
         (cond
          ((> (length tools) toolspec-mcp-max-tools)
           (setf (toolspec-mcp--server-listing server) nil)
           (toolspec-mcp--abandon server (format "it lists more than %d tools (`toolspec-mcp-max-tools')"
                                                 toolspec-mcp-max-tools)))
          ((and (stringp next) (not (equal next cursor)))
           (toolspec-mcp--list-page server next tools))
          (t
           (setf (toolspec-mcp--server-listing server) nil)
           (toolspec-mcp--register server (nreverse tools))
           (when (toolspec-mcp--server-relist server)
             (toolspec-mcp--list-tools server)))))))
   toolspec-mcp-connect-timeout))

(defun toolspec-mcp--confirm-p (server plist)
  "Return non-nil if the tool of PLIST, of SERVER, needs confirmation."
  (let* ((annotations (plist-get plist :annotations))
         (flag (lambda (key) (let ((v (plist-get annotations key)))
                               (and v (not (memq v '(:json-false :null)))))))
         (trusted (member (toolspec-mcp--server-name server) toolspec-mcp-trusted-servers)))
    (or (funcall flag :destructiveHint)
        (not (and trusted (funcall flag :readOnlyHint))))))

(defun toolspec-mcp--register (server tools)
  "Register TOOLS, SERVER's tools/list entries (alists), with gptel."
  (let* ((name (toolspec-mcp--server-name server))
         (category (toolspec-mcp--category name))
         (kept nil)
         (plists (and tools
                      (condition-case err
                          ;; Types as gptel makes them (see
                          ;; `toolspec--type-strings'), and the tools kept
                          ;; to register (`toolspec--keep-tools').
                          (let ((toolspec--type-strings t)
                                (toolspec--keep-tools t))
                            (prog1 (toolspec-parse-json (toolspec-mcp--json `((tools . ,(vconcat tools)))) 'mcp)
                              (setq kept toolspec--keep-tools)))
                        (toolspec-error
                         (toolspec-mcp--set-error server (format "its tools cannot be read: %s"
                                                                 (error-message-string err)))
                         nil))))
         (bindings (make-hash-table :test #'equal)))
    ;; One insertion for them all, under one time: a catalog of 1,000
    ;; tools may have 1,500 warnings, and a line each took 5 ms.  Each
    ;; line starts with its severity, as `toolspec-format-problem' puts it.
    (when toolspec-last-import-warnings
      (let ((stamp (format-time-string "[%T] ")))
        (toolspec-mcp--log-insert
         server (mapconcat (lambda (w) (concat stamp (toolspec-format-problem w) "\n"))
                           toolspec-last-import-warnings ""))))
    (dolist (plist plists)
      (let ((original (plist-get plist :name))
            (output (plist-get plist :outputSchema)))
        (puthash original
                 (list :function (toolspec-mcp--tool-function
                                  name original (copy-tree (plist-get plist :args))
                                  (and output (cl-find original tools
                                                       :key (lambda (tl) (alist-get 'name tl))
                                                       :test #'equal)))
                       :async t
                       :confirm (toolspec-mcp--confirm-p server plist))
                 bindings)))
    (let ((made (condition-case err
                    (toolspec-register plists :category category :source category
                                       :toolspec--fresh t :toolspec--type-strings t :toolspec--kept kept
                                       :functions (lambda (tool-name) (gethash tool-name bindings)))
                  (error
                   (toolspec-mcp--set-error server (format "its tools cannot be registered: %s"
                                                           (error-message-string err)))
                   nil))))
      (setf (toolspec-mcp--server-tools server) (mapcar (lambda (p) (plist-get p :name)) plists)
            (toolspec-mcp--server-gptel-tools server) made
            (toolspec-mcp--server-state server) 'ready)
      (toolspec-mcp--log server "%d tools registered in gptel category %s" (length made) category)
      (toolspec-mcp--refresh-list)
      (run-hook-with-args 'toolspec-mcp-tools-changed-functions name)
      (toolspec-mcp--listen server))))

(defvar toolspec-mcp--listen-pause 5
  "Seconds before listening again after a subscription that lasted less.")

(defun toolspec-mcp--listen (server)
  "Subscribe to SERVER's tool list, when SERVER is of the stateless era.
There `subscriptions/listen' replaces the server's own notifications:
the request stays open and its notifications come while it lasts.
When it ends while SERVER is ready, the tools are listed again (a
change may have been missed) and the client listens again, after
`toolspec-mcp--listen-pause' seconds when it lasted less than that:
a server that cannot be reached is asked that often.
A server that does not serve it is not asked again."
  (when (and (eq (toolspec-mcp--server-era server) 'modern)
             (eq (toolspec-mcp--server-state server) 'ready)
             (not (toolspec-mcp--server-listen server)))
    (let ((generation (toolspec-mcp--server-generation server))
          (started (float-time)))
      (setf (toolspec-mcp--server-listen server) 'starting)
      (let ((id (toolspec-mcp--request
                 server "subscriptions/listen" '((notifications . ((toolsListChanged . t))))
                 (lambda (result)
                   (setf (toolspec-mcp--server-listen server)
                         (and (plist-get result :error) (eql (plist-get result :code) -32601) 'unsupported))
                   (cond
                    ((eq (toolspec-mcp--server-listen server) 'unsupported)
                     (toolspec-mcp--log server "it does not serve subscriptions/listen: its tool changes are not seen"))
                    ((and (= generation (toolspec-mcp--server-generation server))
                          (eq (toolspec-mcp--server-state server) 'ready))
                     (toolspec-mcp--log server "subscriptions/listen ended (%s); listening again"
                                        (or (plist-get result :error) "closed by the server"))
                     (run-at-time (if (< (- (float-time) started) toolspec-mcp--listen-pause)
                                      toolspec-mcp--listen-pause 0)
                                  nil
                                  (lambda ()
                                    (when (and (= generation (toolspec-mcp--server-generation server))
                                               (eq (toolspec-mcp--server-state server) 'ready))
                                      (toolspec-mcp--list-tools server)
                                      (toolspec-mcp--listen server))))))))))
        (when (eq (toolspec-mcp--server-listen server) 'starting)
          (setf (toolspec-mcp--server-listen server) id))))))

;;;; Calling tools

(defvar toolspec-mcp--progress-counter 0
  "The number of the last progress token made.")

(defvar toolspec-mcp--calls nil
  "Tool calls waiting for their server: (BUFFER SERVER-NAME . ID) each.")

(defun toolspec-mcp--json-value (value spec top)
  "VALUE, an argument as a tool function receives it, as JSON wants it.
SPEC is its arg plist.  When `toolspec-normalize-arguments' turned
false and null into nil, nil is false where SPEC's type is boolean,
and otherwise null, or missing at TOP level and in objects (return
`toolspec-mcp--missing' then)."
  (let ((type (plist-get spec :type)))
    (cond
     ((null value)
      (cond ((or (member (format "%s" type) '("boolean"))
                 (and (vectorp type) (cl-some (lambda (x) (equal (format "%s" x) "boolean")) type)))
             :json-false)
            (top 'toolspec-mcp--missing)
            (t :null)))
     ((vectorp value)
      (let ((items (plist-get spec :items)))
        (cl-map 'vector (lambda (x) (toolspec-mcp--json-value x items nil)) value)))
     ((and (consp value) (keywordp (car value)))
      (let ((props (plist-get spec :properties)))
        (or (cl-loop for (k v) on value by #'cddr
                     for j = (toolspec-mcp--json-value v (plist-get props k) t)
                     unless (eq j 'toolspec-mcp--missing) append (list k j))
            (make-hash-table))))
     (t value))))

(defun toolspec-mcp--arguments (specs values)
  "The arguments object (an alist) of VALUES, a tool function's arguments.
SPECS are the tool's arg plists, in order."
  (let ((object (cl-loop for spec in specs
                         for value in values
                         for j = (if toolspec-normalize-arguments
                                     (toolspec-mcp--json-value value spec t)
                                   (if (null value) 'toolspec-mcp--missing value))
                         unless (eq j 'toolspec-mcp--missing)
                         collect (cons (intern (plist-get spec :name)) j))))
    (or object (make-hash-table))))

(defun toolspec-mcp--tool-function (server-name tool specs raw)
  "The async gptel function of TOOL, of server SERVER-NAME.
SPECS are its arg plists; RAW is its tools/list entry when it has an
`outputSchema' (nil otherwise)."
  (let ((checker nil))
    (lambda (callback &rest values)
      (let ((server (gethash server-name toolspec-mcp--connections))
            (buffer (current-buffer)))
        (if (not (and server (eq (toolspec-mcp--server-state server) 'ready)
                      (toolspec-mcp--live-p server)))
            (funcall callback
                     (format "Error: MCP server %s is down%s, so tool %s did not run. Tell the user; it may work again in a moment."
                             server-name
                             (if (and server (toolspec-mcp--server-error server))
                                 (format " (%s)" (toolspec-mcp--server-error server))
                               "")
                             tool))
          (toolspec-mcp--ensure-abort-advice)
          (let* ((token (format "toolspec-%d" (cl-incf toolspec-mcp--progress-counter)))
                 ;; (BUFFER SERVER-NAME . ID): ID is the request that
                 ;; runs now, nil while the user is asked for input.
                 (call (cons buffer (cons server-name nil)))
                 (finish
                  (lambda (result)
                    (when-let* ((entry (gethash token (toolspec-mcp--server-progress server))))
                      (remhash token (toolspec-mcp--server-progress server))
                      (when (cdr entry) (progress-reporter-done (cdr entry))))
                    (setq toolspec-mcp--calls (delq call toolspec-mcp--calls))
                    (unless (eq result 'stopped)
                      (funcall callback
                               (if (plist-get result :error)
                                   (format "Error: tool %s of MCP server %s failed: %s"
                                           tool server-name (plist-get result :error))
                                 (toolspec-mcp--result-text
                                  result raw
                                  (lambda () (or checker (setq checker (toolspec-mcp--output-checker raw)))))))))))
            (puthash token (list tool) (toolspec-mcp--server-progress server))
            (push call toolspec-mcp--calls)
            (toolspec-mcp--call-round server call
                                      `((name . ,tool) (arguments . ,(toolspec-mcp--arguments specs values))
                                        (_meta . ((progressToken . ,token))))
                                      1 finish)))))))

;;;; Multi round-trip requests
;;
;; A server of the stateless era does not send requests of its own
;; while it runs a tool: it answers `tools/call' with an
;; `input_required' result, whose `inputRequests' (elicitation and
;; sampling requests, by key) the client answers, as it answers them
;; for a server of the handshake era, before it sends the call again,
;; as a new request, with the answers (`inputResponses', same keys)
;; and the server's `requestState' as it was.  The user's time to
;; answer does not count against `toolspec-mcp-call-timeout'.

(defcustom toolspec-mcp-max-input-rounds 10
  "How many times a tool call may be answered with `input_required'.
After that many rounds of questions, the call fails."
  :type 'natnum
  :group 'toolspec-mcp)

(defun toolspec-mcp--call-round (server call params round finish)
  "Send `tools/call' with PARAMS to SERVER: round ROUND of CALL.
FINISH is called with the final result, or (:error TEXT)."
  (let ((id (toolspec-mcp--request
             server "tools/call" params
             (lambda (result)
               (if (and (not (plist-get result :error))
                        (equal (alist-get 'resultType result) "input_required"))
                   (toolspec-mcp--input-required server call params round result finish)
                 (funcall finish result)))
             toolspec-mcp-call-timeout)))
    (when (memq call toolspec-mcp--calls)
      (setcdr (cdr call) id))))

(defun toolspec-mcp--input-required (server call params round result finish)
  "Answer RESULT, SERVER's `input_required' answer to round ROUND of CALL.
PARAMS are the call's; FINISH is as in `toolspec-mcp--call-round'."
  (let ((requests (alist-get 'inputRequests result))
        (state (assq 'requestState result)))
    (setcdr (cdr call) nil)
    (cond
     ((>= round toolspec-mcp-max-input-rounds)
      (funcall finish (list :error (format "the server still asks for input after %d rounds (`toolspec-mcp-max-input-rounds')"
                                           round))))
     ((and state (not (stringp (cdr state))))
      (funcall finish (list :error "the server's requestState is not a string")))
     ((not (or (consp requests) state))
      (funcall finish (list :error "the server asks for input but names none")))
     (t
      (toolspec-mcp--log server "%s asks for input (round %d): %s"
                         (alist-get 'name params) round
                         (if (consp requests)
                             (mapconcat (lambda (r) (format "%s" (alist-get 'method (cdr r)))) requests ", ")
                           "none, state only"))
      (toolspec-mcp--answer-inputs
       server (and (consp requests) requests) nil
       (lambda () (memq call toolspec-mcp--calls))
       (lambda (responses)
         (cond
          ((not (memq call toolspec-mcp--calls)) (funcall finish 'stopped))
          ((eq (car responses) :error) (funcall finish (list :error (nth 2 responses))))
          (t
           (toolspec-mcp--call-round
            server call
            (append (cl-remove-if (lambda (p) (memq (car p) '(inputResponses requestState))) params)
                    (and responses `((inputResponses . ,responses)))
                    (and state (list state)))
            (1+ round) finish)))))))))

(defun toolspec-mcp--answer-inputs (server requests responses wanted then)
  "Answer REQUESTS, SERVER's input requests, one at a time.
RESPONSES are the answers so far, newest first.  Call THEN with the
answers, an alist in the order of REQUESTS, or with (:error CODE
TEXT) at the first request refused; with no request at all, after a
short pause.  WANTED says whether the answers are still wanted: the
user is not asked once it returns nil."
  (if (null requests)
      (if responses
          (funcall then (nreverse responses))
        (run-at-time 0.1 nil then nil))
    (let* ((key (car (car requests)))
           (request (cdr (car requests)))
           (method (alist-get 'method request))
           (params (alist-get 'params request))
           (next (lambda (answer)
                   (if (eq (car answer) :error)
                       (funcall then answer)
                     (toolspec-mcp--answer-inputs server (cdr requests)
                                                  (cons (cons key answer) responses) wanted then)))))
      (pcase method
        ("elicitation/create" (toolspec-mcp--elicit-answer server params next wanted))
        ("sampling/createMessage" (toolspec-mcp--sample-answer server params next wanted))
        (_ (funcall then (list :error -32601
                               (format "the server asks for %s, which this client does not offer" method))))))))

;;;; Results

(defun toolspec-mcp--output-checker (raw)
  "A tool plist whose arguments schema is RAW's `outputSchema', or nil."
  (ignore-errors
    (car (toolspec-parse-json
          (toolspec-mcp--json `((name . "output") (inputSchema . ,(alist-get 'outputSchema raw))))
          'mcp))))

(defun toolspec-mcp--size (base64)
  "The size in bytes of the data BASE64 encodes, as text."
  (let* ((n (length base64))
         (pad (cond ((string-suffix-p "==" base64) 2) ((string-suffix-p "=" base64) 1) (t 0))))
    (file-size-human-readable (max 0 (- (/ (* n 3) 4) pad)))))

(defun toolspec-mcp--block-text (block)
  "A content BLOCK of a tool result as text for the model."
  (let ((type (alist-get 'type block)))
    (pcase type
      ("text" (alist-get 'text block))
      ((or "image" "audio")
       (format "[%s: %s, %s]" type (alist-get 'mimeType block)
               (toolspec-mcp--size (or (alist-get 'data block) ""))))
      ("resource_link"
       (format "[resource link: %s%s%s]" (alist-get 'uri block)
               (if-let* ((n (alist-get 'name block))) (format " (%s)" n) "")
               (if-let* ((m (alist-get 'mimeType block))) (format ", %s" m) "")))
      ("resource"
       (let* ((r (alist-get 'resource block))
              (text (alist-get 'text r)))
         (if (stringp text)
             (format "[resource %s%s]\n%s" (alist-get 'uri r)
                     (if-let* ((m (alist-get 'mimeType r))) (format ", %s" m) "")
                     text)
           (format "[resource %s: %s, %s]" (alist-get 'uri r) (alist-get 'mimeType r)
                   (toolspec-mcp--size (or (alist-get 'blob r) ""))))))
      (_ (format "[content of type %s]" type)))))

(defun toolspec-mcp--cap (text)
  "TEXT cut to `toolspec-mcp-max-result-size' characters, marked if cut."
  (if (> (length text) toolspec-mcp-max-result-size)
      (format "%s\n[result cut: %d of %d characters shown]"
              (substring text 0 toolspec-mcp-max-result-size)
              toolspec-mcp-max-result-size (length text))
    text))

(defun toolspec-mcp--result-text (result raw checker)
  "The text the model gets for RESULT, a complete tools/call result.
RAW is the tool's tools/list entry when it has an `outputSchema';
CHECKER returns the tool plist that checks structured content."
  (let* ((blocks (append (alist-get 'content result) nil))
         (structured (assq 'structuredContent result))
         (error-p (eq (alist-get 'isError result) t))
         (text
          (if (and structured (not error-p))
              (let* ((json (toolspec-mcp--json (cdr structured)))
                     (problems (and raw (funcall checker)
                                    (condition-case err
                                        (toolspec-validate-arguments (funcall checker) json)
                                      (toolspec-error (list (list 'error "" (error-message-string err))))))))
                (concat json
                        (mapconcat (lambda (b) (concat "\n" (toolspec-mcp--block-text b)))
                                   (cl-remove-if (lambda (b) (equal (alist-get 'type b) "text")) blocks)
                                   "")
                        (if problems
                            (format "\nWarning: this result does not match the tool's outputSchema: %s"
                                    (mapconcat (lambda (p) (if (equal (nth 1 p) "") (nth 2 p)
                                                             (format "%s: %s" (nth 1 p) (nth 2 p))))
                                               problems "; "))
                          "")))
            (mapconcat #'toolspec-mcp--block-text blocks "\n"))))
    (toolspec-mcp--cap (if error-p (concat "Error: " text) text))))

;;;; Cancelling with gptel

(defun toolspec-mcp--after-abort (&optional buffer)
  "Cancel the tools' requests to MCP servers for gptel's request in BUFFER.
Runs after `gptel-abort'.  The tools do not answer gptel: while tools
run, gptel has no request left to stop, and an answer would send the
conversation on to the model."
  (let ((buffer (or buffer (current-buffer))))
    (dolist (call (cl-remove-if-not (lambda (c) (eq (car c) buffer)) toolspec-mcp--calls))
      (setq toolspec-mcp--calls (delq call toolspec-mcp--calls))
      (when-let* ((server (gethash (cadr call) toolspec-mcp--connections)))
        (toolspec-mcp--cancel server (cddr call) "the user stopped the request" t)))))

(defun toolspec-mcp--ensure-abort-advice ()
  "Make `gptel-abort' cancel the MCP requests of the tools it stops."
  (when (fboundp 'gptel-abort)
    (advice-add 'gptel-abort :after #'toolspec-mcp--after-abort)))

;;;; Commands

(defun toolspec-mcp--read-server (prompt &optional connected)
  "Read a server name with PROMPT; only CONNECTED ones when non-nil."
  (completing-read prompt
                   (if connected
                       (let (names) (maphash (lambda (k _) (push k names)) toolspec-mcp--connections)
                            (sort names #'string<))
                     (mapcar #'car toolspec-mcp-servers))
                   nil t))

;;;###autoload
(defun toolspec-mcp-connect (name)
  "Connect to MCP server NAME of `toolspec-mcp-servers'; return at once.
The server starts in the background; its tools are registered in
gptel, category \"mcp-NAME\", when it has listed them.  Connecting a
connected server starts it again."
  (interactive (list (toolspec-mcp--read-server "Connect to MCP server: ")))
  (toolspec-mcp--require-gptel)
  (let ((config (toolspec-mcp--config name))
        (old (gethash name toolspec-mcp--connections)))
    (when old (toolspec-mcp--stop old 'disconnected))
    (let ((server (toolspec-mcp--server-make :name name :config config
                                             :gptel-tools (and old (toolspec-mcp--server-gptel-tools old))
                                             :log (and old (toolspec-mcp--server-log old)))))
      (puthash name server toolspec-mcp--connections)
      (toolspec-mcp--start server)
      server)))

(defun toolspec-mcp--require-gptel ()
  "Load gptel or signal."
  (unless (require 'gptel nil t)
    (user-error "Package gptel is not installed: MCP tools are registered in it")))

(defun toolspec-mcp--stop (server state)
  "Stop SERVER and leave it in STATE."
  (when-let* (((toolspec-mcp--http-p server))
              (session (toolspec-mcp--server-session server)))
    ;; End the session on the server; its answer does not matter.
    (let ((url-request-method "DELETE")
          (url-request-extra-headers (mapcar (lambda (h) (cons (toolspec-mcp--header-value (car h))
                                                               (toolspec-mcp--header-value (cdr h))))
                                             (toolspec-mcp--http-headers server)))
          (url-request-noninteractive t))
      (ignore-errors
        (url-retrieve (plist-get (toolspec-mcp--server-config server) :url)
                      (lambda (_) (let ((kill-buffer-query-functions nil))
                                    (kill-buffer (current-buffer))))
                      nil t t)))
    (setf (toolspec-mcp--server-session server) nil))
  (setf (toolspec-mcp--server-state server) state)
  (cl-incf (toolspec-mcp--server-generation server))
  (when (toolspec-mcp--server-restart-timer server)
    (cancel-timer (toolspec-mcp--server-restart-timer server))
    (setf (toolspec-mcp--server-restart-timer server) nil))
  (toolspec-mcp--fail-pending server (format "MCP server %s was disconnected" (toolspec-mcp--server-name server)))
  (toolspec-mcp--streams-close server)
  (toolspec-mcp--cleanup-process server)
  (toolspec-mcp--log server "stopped"))

;;;###autoload
(defun toolspec-mcp-disconnect (name)
  "Disconnect MCP server NAME and remove its tools from gptel."
  (interactive (list (toolspec-mcp--read-server "Disconnect MCP server: " t)))
  (when-let* ((server (gethash name toolspec-mcp--connections)))
    (toolspec-mcp--stop server 'disconnected)
    (when (featurep 'gptel)
      (toolspec-unregister (toolspec-mcp--category name)))
    (setf (toolspec-mcp--server-tools server) nil
          (toolspec-mcp--server-gptel-tools server) nil)
    (toolspec-mcp--refresh-list)))

;;;###autoload
(defun toolspec-mcp-restart (name)
  "Start MCP server NAME again, its tools staying registered meanwhile."
  (interactive (list (toolspec-mcp--read-server "Restart MCP server: ")))
  (toolspec-mcp-connect name))

(defun toolspec-mcp--read-config (file)
  "The servers of FILE's `mcpServers' object, as `toolspec-mcp-servers' entries."
  (let* ((json (condition-case err
                   (with-temp-buffer
                     (let ((coding-system-for-read 'utf-8))
                       (insert-file-contents file))
                     (json-parse-buffer :object-type 'alist :array-type 'list
                                        :null-object nil :false-object nil))
                 (file-error (user-error "Cannot read %s: %s" file (error-message-string err)))
                 (json-error (user-error "%s is not JSON: %s" file (error-message-string err)))))
         (servers (and (consp json) (alist-get 'mcpServers json))))
    (unless (consp servers)
      (user-error "%s has no \"mcpServers\" object" file))
    (cl-loop for (key . spec) in servers
             for name = (symbol-name key)
             collect
             (let ((strings (lambda (what alist)
                              (mapcar (lambda (kv)
                                        (unless (stringp (cdr kv))
                                          (user-error "%s: mcpServers.%s.%s.%s is not a string" file name what (car kv)))
                                        (cons (symbol-name (car kv)) (cdr kv)))
                                      alist))))
               (cond
                ((stringp (alist-get 'command spec))
                 (let ((args (alist-get 'args spec)))
                   (unless (and (listp args) (cl-every #'stringp args))
                     (user-error "%s: mcpServers.%s.args is not an array of strings" file name))
                   (append (list name :command (alist-get 'command spec))
                           (and args (list :args args))
                           (and (alist-get 'env spec)
                                (list :env (funcall strings "env" (alist-get 'env spec)))))))
                ((stringp (alist-get 'url spec))
                 (append (list name :url (alist-get 'url spec))
                         (and (alist-get 'headers spec)
                              (list :headers (funcall strings "headers" (alist-get 'headers spec))))))
                (t (user-error "%s: mcpServers.%s has neither \"command\" nor \"url\"" file name)))))))

;;;###autoload
(defun toolspec-mcp-import-config (file &optional save)
  "Add the MCP servers of FILE to `toolspec-mcp-servers'.
FILE is a Claude Desktop or Claude Code configuration file: it holds
an \"mcpServers\" object.  A server of the same name is
replaced.  With SAVE non-nil (interactively, a prefix argument), the
option is saved for future sessions too.  Returns the names added."
  (interactive (list (read-file-name "MCP configuration file: " nil nil t) current-prefix-arg))
  (let ((servers (toolspec-mcp--read-config (expand-file-name file))))
    (let ((value (append servers
                         (cl-remove-if (lambda (e) (assoc (car e) servers)) toolspec-mcp-servers))))
      (if save
          (customize-save-variable 'toolspec-mcp-servers value)
        (customize-set-variable 'toolspec-mcp-servers value)))
    (when (called-interactively-p 'any)
      (message "toolspec-mcp: %d servers added: %s; M-x toolspec-mcp-connect to use one"
               (length servers) (mapconcat #'car servers ", ")))
    (mapcar #'car servers)))

;;;; The server list

(defvar toolspec-mcp-list-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map tabulated-list-mode-map)
    (define-key map "c" #'toolspec-mcp-list-connect)
    (define-key map "r" #'toolspec-mcp-list-connect)
    (define-key map "d" #'toolspec-mcp-list-disconnect)
    (define-key map "l" #'toolspec-mcp-list-log)
    (define-key map (kbd "RET") #'toolspec-mcp-list-log)
    map)
  "Keymap of `toolspec-mcp-list-mode'.")

(define-derived-mode toolspec-mcp-list-mode tabulated-list-mode "MCP servers"
  "The MCP servers, their state, tools and last error.
\\{toolspec-mcp-list-mode-map}"
  (setq tabulated-list-format [("Server" 16 t) ("State" 12 t) ("Tools" 6 nil :right-align t)
                               ("Last error" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'toolspec-mcp--list-entries nil t)
  (tabulated-list-init-header))

(defun toolspec-mcp--list-entries ()
  "Fill `tabulated-list-entries' with the servers."
  (setq tabulated-list-entries
        (mapcar (lambda (name)
                  (let ((server (gethash name toolspec-mcp--connections)))
                    (list name
                          (vector name
                                  (if server (symbol-name (toolspec-mcp--server-state server)) "-")
                                  (if server (number-to-string (length (toolspec-mcp--server-tools server))) "")
                                  (or (and server (toolspec-mcp--server-error server)) "")))))
                (delete-dups (append (mapcar #'car toolspec-mcp-servers)
                                     (let (names) (maphash (lambda (k _) (push k names)) toolspec-mcp--connections)
                                          (sort names #'string<)))))))

(defun toolspec-mcp--refresh-list ()
  "Redisplay the server list, if shown."
  (when-let* ((buf (get-buffer "*toolspec-mcp-servers*")))
    (with-current-buffer buf
      (toolspec-mcp--list-entries)
      (tabulated-list-print t))))

;;;###autoload
(defun toolspec-mcp-list ()
  "Show the MCP servers: state, tools and last error.
Keys: c connect (r restarts), d disconnect, l or RET its log."
  (interactive)
  (let ((buf (get-buffer-create "*toolspec-mcp-servers*")))
    (with-current-buffer buf
      (toolspec-mcp-list-mode)
      (toolspec-mcp--list-entries)
      (tabulated-list-print))
    (pop-to-buffer buf)))

(defun toolspec-mcp--list-name ()
  "The server on the current line, or signal."
  (or (tabulated-list-get-id) (user-error "No server on this line")))

(defun toolspec-mcp-list-connect ()
  "Connect (or restart) the server on this line."
  (interactive)
  (toolspec-mcp-connect (toolspec-mcp--list-name)))

(defun toolspec-mcp-list-disconnect ()
  "Disconnect the server on this line."
  (interactive)
  (toolspec-mcp-disconnect (toolspec-mcp--list-name)))

(defun toolspec-mcp-list-log ()
  "Show the log of the server on this line."
  (interactive)
  (let ((server (gethash (toolspec-mcp--list-name) toolspec-mcp--connections)))
    (unless server (user-error "Server %s was never connected" (toolspec-mcp--list-name)))
    (display-buffer (toolspec-mcp--log-buffer server))))

(provide 'toolspec-mcp)
;;; toolspec-mcp.el ends here
