;;; toolspec-seeds.el --- Gloodata, Arcade and SkyDeck tools; result envelopes -*- lexical-binding: t -*-

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

;; Formats that say how a tool runs, not only what it takes, and the
;; executors that run their tools from gptel (or llm):
;;
;; - Gloodata extensions: an HTTP endpoint describing its tools
;;   (`toolspec-gloodata-import' fetches the description and registers
;;   them); a call posts the arguments to the endpoint, and tables in the
;;   answer reach the model as markdown.  Before a call runs, gptel shows
;;   it the way the extension would: Show Map Of "Cairo" At Zoom Level 12.
;; - Arcade tool definitions: a call posts a tool request to a worker
;;   (the `:worker' import option) and reads back its result envelope.
;; - SkyDeck prompt tools: a call fills the prompt's placeholders and
;;   sends it to the current gptel backend; the reply is the result.
;;
;; And tool result envelopes (Arcade's wire schema for the result of one
;; call): `toolspec-result-envelope' makes one, `toolspec-result-text'
;; turns one into what a model should see.
;;
;; The readers are in the module (`toolspec-read-file' detects the
;; formats); this file binds the executors through
;; `toolspec-executor-makers'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'toolspec)
(require 'toolspec-http)

(declare-function toolspec--mod-gloodata-info "toolspec-module")
(declare-function toolspec--mod-gloodata-result "toolspec-module")
(declare-function toolspec--mod-skydeck-document "toolspec-module")
(declare-function toolspec--mod-result-envelope "toolspec-module")
(declare-function toolspec--mod-result-read "toolspec-module")
(declare-function toolspec-register "toolspec-gptel")
(declare-function gptel-request "ext:gptel-request")
(declare-function gptel-backend-models "ext:gptel-request")
(declare-function gptel-backend-name "ext:gptel-request")
(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-p "ext:gptel-request")
(declare-function gptel-openai-p "ext:gptel-openai")
(defvar gptel-backend)
(defvar gptel-model)
(defvar gptel-temperature)
(defvar gptel-max-tokens)
(defvar gptel-use-tools)
(defvar gptel-tools)
(defvar gptel-use-context)
(defvar gptel-stream)
(defvar gptel--request-params)
(defvar gptel-prompt-transform-functions)
(defvar gptel--tool-preview-alist)

;;;; Options

(defcustom toolspec-log-buffer "*toolspec-log*"
  "Buffer where toolspec logs what is for developers only.
Such as an envelope's developer_message, which never reaches the
model or the user."
  :type 'string
  :group 'toolspec-formats)

(defcustom toolspec-authorization-function #'toolspec-show-authorization
  "Function called when a tool needs the user to authorize it.
It receives the message and the URL to open (a string or nil).
The model is only told that authorization is needed, never the URL."
  :type 'function
  :group 'toolspec-formats)

(defcustom toolspec-arcade-worker nil
  "URL of the Arcade worker for tools imported without `:worker'."
  :type '(choice (const :tag "None" nil) string)
  :group 'toolspec-formats)

(defcustom toolspec-arcade-token nil
  "Token an Arcade worker receives as context.authorization.token.
nil sends none.  `auth-source' sends the secret auth-source holds
for the worker's host: add a line \"machine HOST password TOKEN\"
to ~/.authinfo.gpg (see `auth-sources').  A function is called
with the tool plist and returns the token.  A string is the token
itself, kept in plain text in your `custom-file': it still works,
but each session warns, once, how to move it to auth-source.  The
`:token' import option overrides this."
  :type '(choice (const :tag "None" nil)
                 (const :tag "From auth-source (the worker's host)" auth-source)
                 (function :tag "Function of the tool")
                 (string :tag "The token (plain text: use auth-source)"))
  :group 'toolspec-formats)

(defcustom toolspec-skydeck-system-prompt nil
  "System message of the requests a SkyDeck prompt tool sends, or nil."
  :type '(choice (const :tag "None" nil) string)
  :group 'toolspec-formats)

(defcustom toolspec-skydeck-use-model-version t
  "When non-nil, a prompt tool uses a model its `model_version' names.
That is the first of them the current gptel backend offers;
otherwise, or when none is offered, the current `gptel-model'."
  :type 'boolean
  :group 'toolspec-formats)

(defcustom toolspec-skydeck-extra-parameters 'openai
  "When to send a prompt tool's top_p and penalties to the backend.
Temperature and max_tokens are always sent (gptel knows them for
every backend).  top_p, frequency_penalty and presence_penalty are
OpenAI request parameters: `openai' sends them to OpenAI-compatible
backends only, t to every backend, nil never."
  :type '(choice (const openai) (const :tag "Always" t) (const :tag "Never" nil))
  :group 'toolspec-formats)

;;;; Helpers

(defun toolspec-log (format-string &rest args)
  "Append a line to `toolspec-log-buffer': FORMAT-STRING applied to ARGS."
  (with-current-buffer (get-buffer-create toolspec-log-buffer)
    (save-excursion
      (goto-char (point-max))
      (insert (format-time-string "%F %T ") (apply #'format format-string args) "\n"))))

(defun toolspec-show-authorization (message url)
  "Show the user MESSAGE and URL, where a tool's authorization is given."
  (message "toolspec: %s%s" message (if url (format " Authorize at %s" url) "")))

(defun toolspec--nonnull (v)
  "Return V, or nil when V is JSON null or false (`:null', `:json-false')."
  (unless (memq v '(:null :json-false)) v))

(defun toolspec--executor-of (tool)
  "The executor plist of TOOL, a tool plist."
  (toolspec--nonnull (plist-get tool :executor)))

(defun toolspec--with-executor (tool key value)
  "A copy of TOOL whose executor has KEY set to VALUE."
  (let ((exec (copy-sequence (toolspec--executor-of tool))))
    (plist-put (copy-sequence tool) :executor (plist-put exec key value))))

(defun toolspec--arg-names (tool)
  "The argument names of TOOL, in order."
  (mapcar (lambda (a) (plist-get a :name)) (plist-get tool :args)))

(defun toolspec--new-id ()
  "A random id in UUID version 4 form."
  (format "%04x%04x-%04x-4%03x-%x%03x-%04x%04x%04x"
          (random 65536) (random 65536) (random 65536) (random 4096)
          (+ 8 (random 4)) (random 4096) (random 65536) (random 65536) (random 65536)))

(defun toolspec--now ()
  "The current time in RFC 3339, UTC."
  (format-time-string "%Y-%m-%dT%H:%M:%S.%3NZ" nil t))

(defun toolspec--json-args (tool args)
  "ARGS, values in the order of TOOL's arguments, as a JSON object alist.
Missing values are left out, except that a boolean argument
receives false for nil."
  (cl-loop for spec in (plist-get tool :args)
           for v in args
           for boolean = (member (format "%s" (plist-get spec :type)) '("boolean"))
           for value = (cond ((memq v '(nil :null)) (and boolean :json-false))
                             ((and (listp v) (not (keywordp (car-safe v))))
                              (vconcat v))
                             (t v))
           when value
           collect (cons (intern (plist-get spec :name)) value)))

;;;; Bound tools

(defvar toolspec--seed-tools (make-hash-table :test 'equal)
  "Tool plists bound to an executor of this file, by tool name.
Registered gptel tools do not keep what gptel has no slot for; the
exporters find it here.")

(defun toolspec--seed-plist (tool)
  "TOOL as a plist with its executor metadata.
TOOL is a plist, a registered tool's name, or a gptel or llm struct
bound by an executor of this file."
  (cond ((and (consp tool) (keywordp (car tool))) tool)
        ((stringp tool)
         (or (gethash tool toolspec--seed-tools)
             (signal 'toolspec-plist-error
                     (list (format "No tool named %s was bound by toolspec's executors" tool) nil))))
        (t (let* ((plist (toolspec--plist tool))
                  (name (plist-get plist :name)))
             (or (gethash name toolspec--seed-tools) plist)))))

;;;; HTTP

(defun toolspec--http-post (url body callback &optional headers timeout)
  "POST BODY, a JSON string, to URL; call CALLBACK with the answer.
CALLBACK receives STATUS, TEXT and ERROR exactly once: the HTTP
status and the body, or nil, nil and a message when there is no
answer (a connection error, nothing within TIMEOUT seconds, default
`toolspec-http-timeout', or an answer the transport refuses).
HEADERS is an alist of extra request headers.  The request goes
through `toolspec-http--send', with the rules of every executor:
redirects only on URL's server, no credentials prompted for, no
compressed answers, `toolspec-http-max-response-size'."
  (let ((toolspec-http-timeout (or timeout toolspec-http-timeout)))
    (toolspec-http--send
     (list :method "POST" :url url
           :headers (append '(("Content-Type" . "application/json")
                              ("Accept" . "application/json"))
                            headers)
           :data (encode-coding-string body 'utf-8))
     (lambda (resp)
       (if (plist-get resp :error)
           (funcall callback nil nil (plist-get resp :error))
         (funcall callback (plist-get resp :status) (plist-get resp :body) nil))))))

(defun toolspec--http-post-sync (url body &optional timeout)
  "POST BODY, a JSON string, to URL and wait for the answer.
Return (STATUS . TEXT); signal `toolspec-fetch-error' when there
is no answer within TIMEOUT seconds (default `toolspec-http-timeout'),
the transport refuses it (see `toolspec--http-post'), or the status
is not 2xx."
  (let* ((timeout (or timeout toolspec-http-timeout))
         (answer nil)
         (deadline (+ (float-time) timeout 5)))
    (toolspec--http-post url body (lambda (status text err) (setq answer (list status text err)))
                         nil timeout)
    (while (and (null answer) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (pcase-let ((`(,status ,text ,err) answer))
      (cond
       ((null answer)
        (signal 'toolspec-fetch-error (list (format "%s: no answer" url) (list :url url))))
       (err
        (signal 'toolspec-fetch-error (list (format "%s: %s" url err) (list :url url))))
       ((not (<= 200 status 299))
        (signal 'toolspec-fetch-error
                (list (format "%s answered HTTP %s: %s" url status
                              (truncate-string-to-width (or text "") 200))
                      (list :url url :status status))))
       (t (cons status text))))))

;;;; Result envelopes

(defun toolspec--envelope-output (outcome)
  "The envelope `output' member of OUTCOME, as a plist in wire form."
  (let ((kinds (cl-remove-if-not (lambda (k) (plist-member outcome k))
                                 '(:value :error :requires-authorization :artifact))))
    (when (cdr kinds)
      (signal 'toolspec-envelope-error
              (list (format "An outcome holds one of :value, :error, :requires-authorization or :artifact, not %s"
                            (mapconcat #'symbol-name kinds " and "))
                    (list :path "output"))))
    (pcase (car kinds)
      ('nil nil)
      (:value (let ((v (plist-get outcome :value)))
                (and v (list :value v))))
      (:error
       (list :error (append (list :message (plist-get outcome :error))
                            (when-let* ((d (plist-get outcome :developer-message)))
                              (list :developer_message d)))))
      (:requires-authorization
       (list :requires_authorization
             (append (list :message (plist-get outcome :requires-authorization))
                     (when-let* ((url (plist-get outcome :url)))
                       (list :oauth2 (append (list :url url)
                                             (when-let* ((s (plist-get outcome :scope)))
                                               (list :scope s))))))))
      (:artifact
       (list :artifact (list :url (plist-get outcome :artifact)
                             :content_type (plist-get outcome :content-type)
                             :size (plist-get outcome :size)
                             :meta (list :description (plist-get outcome :description))))))))

;;;###autoload
(defun toolspec-result-envelope (outcome &rest keys)
  "Return the result envelope of a tool call that came to OUTCOME.
The envelope is a JSON string valid against the tool result
envelope schema.  OUTCOME is a plist with one of
  (:value V)  V a string, number, t or :json-false, or a plist object
  (:error MESSAGE :developer-message TEXT)
  (:requires-authorization MESSAGE :url URL :scope SCOPE)
  (:artifact URL :content-type TYPE :size BYTES :description TEXT)
or nil (or (:value nil)) for a call that returns nothing.  KEYS are
`:invocation-id' (default: a new id) and `:finished-at' (a Lisp time
or an RFC 3339 string; default: now).  An outcome the schema does
not allow signals `toolspec-envelope-error' with its `:path'."
  (toolspec--ensure-module)
  (let ((id (plist-get keys :invocation-id))
        (at (plist-get keys :finished-at)))
    (toolspec--mod-result-envelope
     (toolspec--print (toolspec--envelope-output outcome))
     id
     (cond ((null at) nil)
           ((stringp at) at)
           (t (format-time-string "%Y-%m-%dT%H:%M:%S.%3NZ" at t))))))

(defun toolspec--envelope-text (envelope)
  "ENVELOPE, a JSON string or a Lisp object, as JSON text."
  (if (stringp envelope)
      envelope
    (json-serialize envelope :null-object :null :false-object :json-false)))

;;;###autoload
(defun toolspec-result-read (envelope)
  "Validate ENVELOPE and return its content, as a plist.
ENVELOPE is a JSON string, or an object as `json-parse-string' gives
it.  The plist holds `:text' (what the model should see),
`:success', `:kind' (value, error, requires_authorization, artifact
or void), `:invocation-id', `:log' (the developer message, for the
log only), `:user' and `:url' (for the user only).  A malformed
envelope signals `toolspec-envelope-error' whose details carry the
`:path' of the problem."
  (toolspec--ensure-module)
  (toolspec--read (toolspec--mod-result-read (toolspec--envelope-text envelope))))

;;;###autoload
(defun toolspec-result-text (envelope)
  "Return what the model should see of ENVELOPE, a tool result envelope.
That is the value; the error message; the authorization message;
or an artifact's description, type, size and URL.  An error's
developer message goes to `toolspec-log-buffer' and nowhere else; an
authorization request is shown to the user, with its URL, through
`toolspec-authorization-function' (the model never sees the URL).
ENVELOPE is as in `toolspec-result-read'; a malformed one signals
`toolspec-envelope-error' with the path of the problem."
  (let ((r (toolspec-result-read envelope)))
    (when-let* ((log (plist-get r :log)))
      (toolspec-log "invocation %s: developer message: %s" (plist-get r :invocation-id) log))
    (when (eq (plist-get r :kind) 'requires_authorization)
      (toolspec-log "invocation %s: authorization required: %s" (plist-get r :invocation-id) (plist-get r :user))
      (funcall toolspec-authorization-function
               (string-remove-suffix (concat " Authorize at " (or (plist-get r :url) "")) (plist-get r :user))
               (plist-get r :url)))
    (plist-get r :text)))

;;;; Gloodata

(defun toolspec-gloodata--show (v)
  "Return value V as text, the way a Gloodata tile would."
  (cond ((stringp v) (format "\"%s\"" v))
        ((eq v t) "true")
        ((eq v :json-false) "false")
        ((numberp v) (number-to-string v))
        ((vectorp v) (mapconcat #'toolspec-gloodata--show v ", "))
        (t (format "%s" v))))

;;;###autoload
(defun toolspec-gloodata-render-call (tool args)
  "Return the text of a call of Gloodata TOOL with ARGS, as in its tile.
TOOL is a tool plist read from a Gloodata extension; ARGS the values
in the order of its arguments, as gptel passes them.  The tool's UI
prefix comes first, then each given argument in the order of the
UI's args (then the others) with its prefix and suffix, then the
tool's suffix: Show Map Of \"Cairo\" At Zoom Level 12."
  (let* ((exec (toolspec--executor-of tool))
         (ui (toolspec--nonnull (plist-get exec :ui)))
         (ui-args (toolspec--nonnull (plist-get ui :args)))
         (names (toolspec--arg-names tool))
         (values (cl-mapcar #'cons names args))
         (ui-order (cl-loop for (k _) on ui-args by #'cddr
                            for n = (substring (symbol-name k) 1)
                            when (member n names) collect n))
         (order (append ui-order (cl-remove-if (lambda (n) (member n ui-order)) names)))
         (parts (list (or (toolspec--nonnull (plist-get ui :prefix))
                          (toolspec--nonnull (plist-get tool :title))
                          (plist-get exec :tool)
                          (plist-get tool :name)))))
    (dolist (name order)
      (let ((v (cdr (assoc name values)))
            (a (toolspec--nonnull (plist-get ui-args (intern (concat ":" name))))))
        (unless (memq v '(nil :null))
          (push (if (plist-member a :prefix) (toolspec--nonnull (plist-get a :prefix)) name) parts)
          (push (toolspec-gloodata--show v) parts)
          (push (toolspec--nonnull (plist-get a :suffix)) parts))))
    (push (toolspec--nonnull (plist-get ui :suffix)) parts)
    (string-join (cl-remove-if (lambda (p) (or (not (stringp p)) (string-empty-p p)))
                               (nreverse parts))
                 " ")))

(defun toolspec-gloodata--answer (name endpoint status text err)
  "Text for the model from the answer of ENDPOINT to a call of tool NAME.
STATUS, TEXT and ERR are as `toolspec--http-post' gives them."
  (cond
   (err
    (toolspec-log "%s: cannot reach %s: %s" name endpoint err)
    (format "Error: the Gloodata extension at %s did not answer: %s" endpoint err))
   (t
    (let ((r (toolspec--read (toolspec--mod-gloodata-result (or text "")))))
      (cond
       ((plist-get r :error)
        (toolspec-log "%s: %s answered %s" name endpoint (toolspec-http--cap text 2000))
        (plist-get r :text))
       ((<= 200 status 299) (plist-get r :text))
       (t
        (toolspec-log "%s: %s answered HTTP %s: %s" name endpoint status (toolspec-http--cap (or text "") 2000))
        (format "Error: the Gloodata extension at %s answered HTTP %s: %s"
                endpoint status (truncate-string-to-width (string-trim (or text "")) 300))))))))

(defun toolspec-gloodata--preview (tool)
  "Return a gptel tool-call preview of TOOL, in its extension's words."
  (lambda (arg-values _info)
    (insert (propertize (toolspec-gloodata-render-call tool arg-values)
                        'font-lock-face 'font-lock-keyword-face)
            (propertize (format "  (%s)" (plist-get tool :name))
                        'font-lock-face 'font-lock-comment-face)
            "\n")
    nil))

(defun toolspec-gloodata-executor (tool options)
  "Bind TOOL, read from a Gloodata extension, to its endpoint.
The endpoint is OPTIONS's `:endpoint', else the one TOOL was fetched
from.  A call posts {\"action\":\"request\",\"opName\":ID,\"info\":ARGS}
to it.  Before a call runs gptel asks, showing the call as the
extension would (see `toolspec-gloodata-render-call'): in the chat
buffer's confirmation, and in the echo area."
  (let* ((tool (copy-tree tool))      ; gptel changes the :args it is given
         (exec (toolspec--executor-of tool))
         (name (plist-get tool :name))
         (id (plist-get exec :tool))
         (endpoint (or (plist-get options :endpoint) (toolspec--nonnull (plist-get exec :endpoint)))))
    (puthash name tool toolspec--seed-tools)
    (if (not endpoint)
        (lambda (&rest _)
          (format "Error: the Gloodata tool %s has no endpoint here. Tell the user: import it with `toolspec-gloodata-import' from the extension's URL, or with :endpoint." name))
      (when (boundp 'gptel--tool-preview-alist)
        (setf (alist-get name gptel--tool-preview-alist nil nil #'equal)
              (list (toolspec-gloodata--preview tool))))
      (list :function
            (lambda (callback &rest args)
              (toolspec--http-post
               endpoint
               (json-serialize (list (cons 'action "request")
                                     (cons 'opName id)
                                     (cons 'info (toolspec--json-args tool args)))
                               :null-object :null :false-object :json-false)
               (lambda (status text err)
                 (funcall callback (toolspec-http--cap (toolspec-gloodata--answer name endpoint status text err))))))
            :async t
            :confirm (lambda (&rest args)
                       (message "toolspec: run %s? %s" name (toolspec-gloodata-render-call tool args))
                       t)))))

;;;###autoload
(defun toolspec-gloodata-fetch-info (url)
  "Fetch the extension info document of the Gloodata extension at URL.
Return it as JSON text; signal `toolspec-fetch-error' when the
extension does not answer with a 2xx status."
  (cdr (toolspec--http-post-sync url "{\"action\":\"info\"}")))

;;;###autoload
(defun toolspec-gloodata-read (url)
  "Return the tool plists of the Gloodata extension at URL.
Their executors post calls to URL."
  (mapcar (lambda (tool) (toolspec--with-executor tool :endpoint url))
          (toolspec-parse-json (toolspec-gloodata-fetch-info url) 'gloodata)))

;;;###autoload
(defun toolspec-gloodata-import (url &rest options)
  "Register the tools of the Gloodata extension at URL with gptel.
OPTIONS are those of `toolspec-register'; the category defaults to
the extension's namespace.  Importing URL again replaces its tools.
Returns the gptel tools."
  (require 'toolspec-gptel)
  (let* ((tools (toolspec-gloodata-read url))
         (warnings toolspec-last-import-warnings)
         (ns (plist-get (toolspec--executor-of (car tools)) :ns)))
    (mapc #'toolspec-check tools)
    (dolist (w warnings)
      (message "toolspec: %s: %s" url (toolspec-format-problem w)))
    (apply #'toolspec-register tools :source url
           (append options (list :category (or (plist-get options :category) ns))))))

;;;###autoload
(defun toolspec-gloodata-info (tools &rest keys)
  "Return TOOLS as one Gloodata extension info document (JSON).
TOOLS is a list of tool plists, registered tool names or gptel
tools.  Every argument must be a string, integer, number or
boolean; another signals `toolspec-write-error' naming it.  KEYS
are `:ns', `:title' and `:description' of the extension (default:
those the tools were read with, else \"toolspec\"), and `:pretty'."
  (toolspec--ensure-module)
  (toolspec--mod-gloodata-info
   (toolspec--print (mapcar (lambda (tool) (toolspec--printable (toolspec--seed-plist tool))) tools))
   (plist-get keys :ns) (plist-get keys :title) (plist-get keys :description)
   (plist-get keys :pretty)))

;;;; Arcade

(defvar toolspec-arcade--run-id nil
  "The run id this Emacs sends with its Arcade tool requests.")

(defvar toolspec-arcade--token-warned nil
  "Non-nil once a plain-text `toolspec-arcade-token' was warned about.")

(defun toolspec-arcade--auth-source-token (worker)
  "Return the secret auth-source has for the host of WORKER, or nil.
When there is none, say so and forget auth-source's memory of the
miss, so that a token added next is found."
  (require 'auth-source)
  (let* ((host (url-host (url-generic-parse-url worker)))
         (entry (car (auth-source-search :host host :max 1)))
         (secret (plist-get entry :secret)))
    (when (functionp secret) (setq secret (funcall secret)))
    (if (and (stringp secret) (not (string-empty-p secret)))
        secret
      (auth-source-forget (list :host host :max 1))
      (message "toolspec: no Arcade token for %s in auth-source: add the line \"machine %s password YOUR-TOKEN\" to ~/.authinfo.gpg (see `auth-sources')"
               host host)
      nil)))

(defun toolspec-arcade--token (tool options &optional worker)
  "The authorization token for TOOL under OPTIONS, sent to WORKER, or nil."
  (let* ((given (plist-member options :token))
         (token (if given (plist-get options :token) toolspec-arcade-token)))
    (cond ((eq token 'auth-source) (and worker (toolspec-arcade--auth-source-token worker)))
          ((functionp token) (funcall token tool))
          ((and (stringp token) (not given))
           (unless toolspec-arcade--token-warned
             (setq toolspec-arcade--token-warned t)
             (display-warning
              'toolspec
              (format "`toolspec-arcade-token' holds your Arcade token in plain text (in your custom file). Move it to auth-source: add the line \"machine %s password YOUR-TOKEN\" to ~/.authinfo.gpg, then M-x customize-variable RET toolspec-arcade-token and choose \"From auth-source\" (the token leaves your custom file when you save)."
                      (or (and worker (url-host (url-generic-parse-url worker))) "WORKER-HOST"))))
           token)
          (t token))))

(defun toolspec-arcade--call-line (tool worker args)
  "The Arcade call of TOOL on WORKER with ARGS, as one line."
  (let ((spec (plist-get (toolspec--executor-of tool) :tool)))
    (format "POST %s  %s(%s)"
            (replace-regexp-in-string "\\`https?://" "" worker)
            (or (plist-get spec :name) (plist-get tool :name))
            (mapconcat (lambda (pair) (format "%s=%s" (car pair) (toolspec-skydeck--text (cdr pair))))
                       (cl-loop for a in (plist-get tool :args)
                                for v in args
                                unless (memq v '(nil :null))
                                collect (cons (plist-get a :name) v))
                       ", "))))

(defun toolspec-arcade-request (tool args &optional token)
  "The Arcade tool request (a JSON string) calling TOOL with ARGS.
ARGS are the values in the order of TOOL's arguments.  TOKEN, when
non-nil, is sent as context.authorization.token.  Return a cons
\(INVOCATION-ID . JSON)."
  (let* ((exec (toolspec--executor-of tool))
         (spec (plist-get exec :tool))
         (version (toolspec--nonnull (plist-get spec :version)))
         (invocation (toolspec--new-id)))
    (cons invocation
          (json-serialize
           `((run_id . ,(or toolspec-arcade--run-id (setq toolspec-arcade--run-id (toolspec--new-id))))
             (invocation_id . ,invocation)
             (created_at . ,(toolspec--now))
             (tool . ((name . ,(plist-get spec :name)) ,@(and version `((version . ,version)))))
             (input . ,(toolspec--json-args tool args))
             (context . ((user . ((id . ,(user-login-name))
                                  ,@(and (not (string-empty-p (user-full-name)))
                                         `((name . ,(user-full-name))))))
                         ,@(and token `((authorization . ((token . ,token))))))))
           :null-object :null :false-object :json-false))))

(defun toolspec-arcade--answer (name worker invocation status text err)
  "Text for the model from WORKER's answer to INVOCATION of tool NAME.
STATUS, TEXT and ERR are as `toolspec--http-post' gives them."
  (if err
      (progn (toolspec-log "%s: cannot reach %s: %s" name worker err)
             (format "Error: the Arcade worker at %s did not answer: %s" worker err))
    (condition-case e
        (let ((r (toolspec-result-read text)))
          (unless (equal (plist-get r :invocation-id) invocation)
            (toolspec-log "%s: %s answered invocation %s to invocation %s"
                          name worker (plist-get r :invocation-id) invocation))
          (toolspec-result-text text))
      (toolspec-error
       (toolspec-log "%s: %s answered HTTP %s with an invalid result: %s; body: %s"
                     name worker status (error-message-string e) (toolspec-http--cap (or text "") 2000))
       (if (and status (<= 200 status 299))
           (format "Error: the Arcade worker at %s answered with an invalid result: %s"
                   worker (cadr e))
         (format "Error: the Arcade worker at %s answered HTTP %s" worker status))))))

(defun toolspec-arcade-executor (tool options)
  "Bind TOOL, an Arcade tool definition, to a worker.
The worker is OPTIONS's `:worker', else `toolspec-arcade-worker'.
A call posts a tool request there and gives the model what the
result envelope says (see `toolspec-result-text').  OPTIONS's
`:token' is the authorization token sent (see
`toolspec-arcade-token')."
  (let* ((tool (copy-tree tool))      ; gptel changes the :args it is given
         (name (plist-get tool :name))
         (worker (or (plist-get options :worker) toolspec-arcade-worker)))
    (puthash name tool toolspec--seed-tools)
    (if (not worker)
        (lambda (&rest _)
          (format "Error: the Arcade tool %s has no worker here. Tell the user: import it with :worker URL, or set `toolspec-arcade-worker'." name))
      ;; gptel's confirmation shows where the call goes.
      (when (boundp 'gptel--tool-preview-alist)
        (setf (alist-get name gptel--tool-preview-alist nil nil #'equal)
              (list (lambda (arg-values _info)
                      (insert (propertize (toolspec-arcade--call-line tool worker arg-values)
                                          'font-lock-face 'font-lock-keyword-face)
                              (propertize (format "  (%s)" name) 'font-lock-face 'font-lock-comment-face)
                              "\n")
                      nil))))
      (list :function
            (lambda (callback &rest args)
              (pcase-let ((`(,invocation . ,body)
                           (toolspec-arcade-request tool args (toolspec-arcade--token tool options worker))))
                (toolspec--http-post
                 worker body
                 (lambda (status text err)
                   (funcall callback (toolspec-http--cap
                                      (toolspec-arcade--answer name worker invocation status text err)))))))
            :async t
            :confirm t))))

;;;; SkyDeck

(defun toolspec-skydeck--text (v)
  "Argument value V as text in a prompt."
  (cond ((stringp v) v)
        ((vectorp v) (mapconcat #'toolspec-skydeck--text v ", "))
        ((and (listp v) v (not (keywordp (car v)))) (mapconcat #'toolspec-skydeck--text v ", "))
        ((eq v t) "true")
        ((eq v :json-false) "false")
        ((numberp v) (number-to-string v))
        ((null v) "")
        (t (format "%s" v))))

;;;###autoload
(defun toolspec-skydeck-fill (tool args)
  "Return the prompt of SkyDeck TOOL with its placeholders filled from ARGS.
ARGS are the values in the order of TOOL's arguments; a missing one
takes the argument's default.  Multi-select values are joined with
\", \"."
  (let* ((exec (toolspec--executor-of tool))
         (doc (plist-get exec :document))
         (placeholders (plist-get exec :placeholders))
         (prompt (plist-get doc :model_prompt)))
    (cl-loop for spec in (plist-get tool :args)
             for v in (append args (make-list (length (plist-get tool :args)) nil))
             for name = (plist-get spec :name)
             for ph = (or (plist-get placeholders (intern (concat ":" name))) name)
             for value = (if (memq v '(nil :null)) (plist-get spec :default) v)
             do (setq prompt (replace-regexp-in-string
                              (concat "{{[[:space:]]*" (regexp-quote ph) "[[:space:]]*}}")
                              (toolspec-skydeck--text value) prompt t t)))
    prompt))

;;;###autoload
(defun toolspec-skydeck-check-reply (tool reply)
  "Return REPLY of SkyDeck TOOL, or an error text if it is not allowed.
When the tool's expected output is `limited', the reply (trimmed,
without quotes or a final period, in any case) must be one of its
allowed values, which is then returned as written there."
  (let* ((meta (plist-get (plist-get (toolspec--executor-of tool) :document) :metadata))
         (expected (toolspec--nonnull (plist-get meta :expected_output)))
         (allowed (append (toolspec--nonnull (plist-get expected :allowed_values)) nil)))
    (if (not (and (equal (plist-get expected :type) "limited") allowed))
        reply
      (let* ((bare (string-trim (string-trim reply) "[\"'`*]+" "[\"'`*.]+")))
        (or (cl-find bare allowed :test (lambda (a b) (eq t (compare-strings a nil nil b nil nil t))))
            (format "Error: the prompt tool %s answered %S, which is not one of the allowed values: %s."
                    (plist-get tool :name) (string-trim reply) (string-join allowed ", ")))))))

(defun toolspec-skydeck--model (meta backend)
  "The model for a prompt with metadata META on BACKEND."
  (or (and toolspec-skydeck-use-model-version backend
           (let ((offered (ignore-errors (gptel-backend-models backend))))
             (cl-loop for v across (or (toolspec--nonnull (plist-get meta :model_version)) [])
                      for m = (and (stringp v) (intern v))
                      when (memq m offered) return m)))
      gptel-model))

(defun toolspec-skydeck--extra-parameters (params backend)
  "The request parameters of PARAMS other than temperature and max_tokens.
Sent to BACKEND as `toolspec-skydeck-extra-parameters' says."
  (when (pcase toolspec-skydeck-extra-parameters
          ('openai (and backend (fboundp 'gptel-openai-p) (gptel-openai-p backend)))
          (v v))
    (cl-loop for key in '(:top_p :frequency_penalty :presence_penalty)
             for v = (toolspec--nonnull (plist-get params key))
             when (numberp v) append (list key v))))

(defun toolspec-skydeck-run (tool args callback)
  "Run SkyDeck prompt TOOL with ARGS; call CALLBACK with the result text.
The filled prompt is sent with `gptel-request' to the current
backend, with the tool's temperature and max tokens, no tools and
no context; the reply (checked by `toolspec-skydeck-check-reply')
or an error text reaches CALLBACK once."
  (let* ((exec (toolspec--executor-of tool))
         (meta (plist-get (plist-get exec :document) :metadata))
         (params (toolspec--nonnull (plist-get meta :parameters)))
         (name (plist-get tool :name))
         (backend gptel-backend)
         (model (toolspec-skydeck--model meta backend))
         (prompt (toolspec-skydeck-fill tool args))
         (buffer (generate-new-buffer " *toolspec-prompt*"))
         (done nil)
         (finish (lambda (text)
                   (unless done
                     (setq done t)
                     ;; gptel may still use the buffer after the callback.
                     (run-at-time 0 nil (lambda () (when (buffer-live-p buffer) (kill-buffer buffer))))
                     (funcall callback text)))))
    (toolspec-log "%s: prompt sent to %s: %s" name model prompt)
    (condition-case err
        (with-current-buffer buffer
          (let ((gptel-backend backend)
                (gptel-model model)
                (gptel-temperature (or (toolspec--nonnull (plist-get params :temperature)) gptel-temperature))
                (gptel-max-tokens (or (toolspec--nonnull (plist-get params :max_tokens)) gptel-max-tokens))
                (gptel--request-params (append (toolspec-skydeck--extra-parameters params backend)
                                               (bound-and-true-p gptel--request-params)))
                (gptel-use-tools nil)
                (gptel-tools nil)
                (gptel-use-context nil)
                (gptel-stream nil)
                (gptel-prompt-transform-functions nil))
            (gptel-request prompt
              :buffer buffer
              :system toolspec-skydeck-system-prompt
              :callback
              (lambda (response info)
                (cond
                 ((stringp response)
                  (funcall finish (toolspec-skydeck-check-reply tool response)))
                 ((memq response '(nil abort))
                  (toolspec-log "%s: the prompt request failed: %s %s" name
                                (plist-get info :status) (plist-get info :error))
                  (funcall finish (format "Error: the prompt tool %s got no reply: %s" name
                                          (or (plist-get info :status) "aborted")))))))))
      (error
       (funcall finish (format "Error: the prompt tool %s could not send its prompt: %s"
                               name (error-message-string err)))))))

(defun toolspec-skydeck-executor (tool _options)
  "Bind TOOL, a SkyDeck prompt tool, to `toolspec-skydeck-run'."
  (let ((tool (copy-tree tool)))        ; gptel changes the :args it is given
    (puthash (plist-get tool :name) tool toolspec--seed-tools)
    (list :function (lambda (callback &rest args) (toolspec-skydeck-run tool args callback))
          :async t)))

;;;###autoload
(defun toolspec-skydeck-document (tool &optional pretty)
  "Return prompt TOOL as a SkyDeck document (JSON).
TOOL is a plist read from a SkyDeck document, or a registered prompt
tool (a name or gptel tool); the document comes back as it was read,
metadata and all.  PRETTY non-nil indents it.  Any other tool
signals `toolspec-write-error'."
  (toolspec--ensure-module)
  (toolspec--mod-skydeck-document
   (toolspec--print (toolspec--printable (toolspec--seed-plist tool))) pretty))

(provide 'toolspec-seeds)
;;; toolspec-seeds.el ends here
