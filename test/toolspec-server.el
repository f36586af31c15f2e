;;; toolspec-server.el --- Scripted OpenAI-compatible server on loopback for tests -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; A tiny HTTP/1.1 server, written in elisp, that speaks just enough of
;; the OpenAI Chat Completions API for integration tests: every request
;; body is parsed and recorded, and each request is answered with the
;; next response of a scripted queue.
;;
;;   (toolspec-server-with
;;       (server (list (toolspec-server-tool-calls-response
;;                      '(("call_1" "get_forecast" "{\"city\":\"Paris\"}")))
;;                     (toolspec-server-text-response "Sunny.")))
;;     (toolspec-server-port server)        ; the port the OS chose
;;     ...
;;     (toolspec-server-requests server))   ; bodies received, oldest first
;;
;; The server listens on 127.0.0.1 only, on a port chosen by the OS, and
;; `toolspec-server-with' deletes it (and every connection) when its body
;; exits, normally or not.  It understands Content-Length bodies (what
;; url.el and curl send), answers "Expect: 100-continue" (which curl may
;; send first), refuses chunked bodies, and closes each connection after
;; its response.  Responses are never streamed.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'seq)

(cl-defstruct (toolspec-server (:constructor toolspec-server--make)
                               (:copier nil))
  "A scripted chat-completions server.
PROCESS is the listening network process, PORT its port.
RESPONSES is the queue of responses still to send: each element is a
JSON object (a plist or an alist), a function called with the parsed
request body and returning one, or (:status CODE :body OBJECT) to
answer with another HTTP status.  RECEIVED holds the parsed request
bodies, newest first (see `toolspec-server-requests').  ERRORS
collects what went wrong on the server side (malformed requests, an
empty queue), newest first.  CONNECTIONS are the open client
connections.  PATHS are the request paths it answers, nil meaning
just \"/v1/chat/completions\"."
  process port responses received errors connections paths)

(defun toolspec-server-requests (server)
  "The request bodies SERVER received, oldest first.
Each is parsed as gptel parses JSON: objects are plists with keyword
keys, arrays vectors, false `:json-false' and null `:null'."
  (reverse (toolspec-server-received server)))

;;;; Responses

(defvar toolspec-server--counter 0
  "Counter for the ids of the responses the server makes.")

(defun toolspec-server--completion (message finish-reason)
  "A chat.completion object with one choice holding MESSAGE and FINISH-REASON."
  (list :id (format "chatcmpl-test-%d" (cl-incf toolspec-server--counter))
        :object "chat.completion"
        :created 1700000000
        :model "test-model"
        :choices (vector (list :index 0
                               :message message
                               :logprobs :null
                               :finish_reason finish-reason))
        :usage (list :prompt_tokens 10 :completion_tokens 5 :total_tokens 15)))

(defun toolspec-server-text-response (text)
  "A chat completion whose assistant message is TEXT."
  (toolspec-server--completion (list :role "assistant" :content text) "stop"))

(defun toolspec-server-tool-calls-response (calls)
  "Return a chat completion with a request to run tools.
CALLS gives them as a list of (ID NAME ARGUMENTS), ARGUMENTS the
arguments object as a JSON string, as the API sends it."
  (toolspec-server--completion
   (list :role "assistant"
         :content :null
         :tool_calls (vconcat
                      (mapcar (lambda (call)
                                (list :id (nth 0 call)
                                      :type "function"
                                      :function (list :name (nth 1 call)
                                                      :arguments (nth 2 call))))
                              calls)))
   "tool_calls"))

;;;; HTTP

(defconst toolspec-server--reasons
  '((100 . "Continue") (200 . "OK") (400 . "Bad Request") (404 . "Not Found")
    (411 . "Length Required") (500 . "Internal Server Error"))
  "Reason phrases of the HTTP statuses the server sends.")

(defun toolspec-server--send (proc status object)
  "Send an HTTP response with STATUS and OBJECT as JSON body on PROC, then close."
  (let* ((body (encode-coding-string
                (json-serialize object :null-object :null :false-object :json-false)
                'utf-8))
         (head (format "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                       status (alist-get status toolspec-server--reasons "Unknown")
                       (length body))))
    (when (process-live-p proc)
      (process-send-string proc (concat head body))
      (process-send-eof proc))))

(defun toolspec-server--error (server proc status text)
  "Record TEXT as an error of SERVER and answer PROC with STATUS."
  (push text (toolspec-server-errors server))
  (toolspec-server--send proc status (list :error (list :message text :type "test_server_error"))))

(defun toolspec-server--headers (head)
  "Parse HEAD, the request line and headers, into (METHOD PATH HEADERS).
HEADERS is an alist with lower-case names."
  (let* ((lines (split-string head "\r\n"))
         (request-line (split-string (car lines) " ")))
    (list (nth 0 request-line)
          (nth 1 request-line)
          (delq nil
                (mapcar (lambda (line)
                          (when (string-match "\\`\\([^:]+\\):[ \t]*\\(.*?\\)[ \t]*\\'" line)
                            (cons (downcase (match-string 1 line)) (match-string 2 line))))
                        (cdr lines))))))

(defun toolspec-server--answer (server proc path body)
  "Record BODY, the raw request body, and answer PROC's request to PATH.
SERVER provides the next scripted response."
  (let ((parsed (condition-case err
                    (json-parse-string (decode-coding-string body 'utf-8)
                                       :object-type 'plist
                                       :null-object :null
                                       :false-object :json-false)
                  (error (list :toolspec-server-unparsable (error-message-string err)
                               :raw body)))))
    (push parsed (toolspec-server-received server))
    (cond
     ((plist-get parsed :toolspec-server-unparsable)
      (toolspec-server--error server proc 400
                              (format "request body is not JSON: %s"
                                      (plist-get parsed :toolspec-server-unparsable))))
     ((not (member path (or (toolspec-server-paths server) '("/v1/chat/completions"))))
      (toolspec-server--error server proc 404 (format "unexpected path %s" path)))
     ((null (toolspec-server-responses server))
      (toolspec-server--error server proc 500 "no scripted response left"))
     (t
      (let ((next (pop (toolspec-server-responses server))))
        (when (functionp next) (setq next (funcall next parsed)))
        (if (and (consp next) (plist-member next :status) (plist-member next :body))
            (toolspec-server--send proc (plist-get next :status) (plist-get next :body))
          (toolspec-server--send proc 200 next)))))))

(defun toolspec-server--filter (server)
  "The process filter of SERVER's connections.
Input accumulates in the connection's `toolspec-input' property until
the headers and Content-Length bytes of body have arrived."
  (lambda (proc string)
    (let ((input (concat (or (process-get proc 'toolspec-input) "") string)))
      (process-put proc 'toolspec-input input)
      (when-let* (((not (process-get proc 'toolspec-answered)))
                  (end (string-search "\r\n\r\n" input)))
        (pcase-let* ((`(,method ,path ,headers) (toolspec-server--headers (substring input 0 end)))
                     (length (cdr (assoc "content-length" headers)))
                     (body (substring input (+ end 4))))
          (cond
           ((not (equal method "POST"))
            (process-put proc 'toolspec-answered t)
            (toolspec-server--error server proc 400 (format "unexpected method %s" method)))
           ((assoc "transfer-encoding" headers)
            (process-put proc 'toolspec-answered t)
            (toolspec-server--error server proc 411 "chunked request bodies are not supported"))
           ((null length)
            (process-put proc 'toolspec-answered t)
            (toolspec-server--error server proc 411 "request without Content-Length"))
           ((>= (length body) (string-to-number length))
            (process-put proc 'toolspec-answered t)
            (toolspec-server--answer server proc path
                                     (substring body 0 (string-to-number length))))
           ((and (equal (downcase (or (cdr (assoc "expect" headers)) "")) "100-continue")
                 (not (process-get proc 'toolspec-continued)))
            (process-put proc 'toolspec-continued t)
            (process-send-string proc "HTTP/1.1 100 Continue\r\n\r\n"))))))))

(defun toolspec-server--sentinel (server)
  "The process sentinel of SERVER's connections: forget closed ones."
  (lambda (proc _event)
    (unless (process-live-p proc)
      (setf (toolspec-server-connections server)
            (delq proc (toolspec-server-connections server))))))

(defun toolspec-server-start (responses &optional paths)
  "Start a server on 127.0.0.1 answering with RESPONSES in turn; return it.
RESPONSES is as the `responses' slot of `toolspec-server'.  PATHS, a
list of request paths, makes it answer requests to those instead of
the chat completions path (any other JSON service can be scripted
so).  The port is chosen by the OS: see `toolspec-server-port'.  Stop
the server with `toolspec-server-stop', or use `toolspec-server-with'."
  (let* ((server (toolspec-server--make :responses (copy-sequence responses)
                                        :paths paths))
         (proc (make-network-process
                :name "toolspec-test-server"
                :server t
                :host 'local
                :family 'ipv4
                :service t
                :coding 'binary
                :noquery t
                :filter (toolspec-server--filter server)
                :sentinel (toolspec-server--sentinel server)
                :log (lambda (_server connection _message)
                       (set-process-query-on-exit-flag connection nil)
                       (push connection (toolspec-server-connections server))))))
    (setf (toolspec-server-process server) proc)
    (let ((address (process-contact proc :local)))
      (unless (and (vectorp address) (equal (seq-take address 4) [127 0 0 1]))
        (delete-process proc)
        (error "Test server is not on 127.0.0.1: %S" address))
      (setf (toolspec-server-port server) (aref address 4)))
    server))

(defun toolspec-server-stop (server)
  "Stop SERVER: delete its listening process and every open connection."
  (dolist (conn (toolspec-server-connections server))
    (when (process-live-p conn) (delete-process conn)))
  (setf (toolspec-server-connections server) nil)
  (when-let* ((proc (toolspec-server-process server)))
    (delete-process proc)))

(defmacro toolspec-server-with (spec &rest body)
  "Run BODY with a server answering with RESPONSES, then stop it.
SPEC is (VAR RESPONSES [PATHS]): VAR is bound to the server (see
`toolspec-server-start')."
  (declare (indent 1) (debug ((symbolp form &optional form) body)))
  `(let ((,(car spec) (toolspec-server-start ,(cadr spec) ,(nth 2 spec))))
     (unwind-protect
         (progn ,@body)
       (toolspec-server-stop ,(car spec)))))

(defvar gptel--known-backends)
(defvar url-proxy-services)
(declare-function gptel-make-openai "ext:gptel-openai")

(defmacro toolspec-server-with-gptel (server tools &rest body)
  "Run BODY with real gptel set to talk to SERVER, offering TOOLS.
SERVER is a `toolspec-server'.  gptel's backend is an OpenAI one at
SERVER's port on 127.0.0.1 with the model `test-model'; no
streaming, url.el rather than curl, tools on and run without
confirmation, no context, no log, no proxy.  gptel and gptel-openai
must be loaded."
  (declare (indent 2) (debug (form form body)))
  `(let* ((gptel--known-backends nil)
          (gptel-backend (gptel-make-openai "toolspec-loopback"
                           :host (format "127.0.0.1:%d" (toolspec-server-port ,server))
                           :protocol "http" :endpoint "/v1/chat/completions"
                           :stream nil :key "test" :models '(test-model)))
          (gptel-model 'test-model)
          (gptel-use-curl nil)
          (gptel-stream nil)
          (gptel-use-tools t)
          (gptel-tools ,tools)
          (gptel-confirm-tool-calls nil)
          (gptel-use-context nil)
          (gptel-log-level nil)
          (url-proxy-services nil))
     ,@body))

(declare-function gptel-request "ext:gptel-request")

(defun toolspec-server-chat (server prompt tools &optional during timeout)
  "Send PROMPT with TOOLS through real `gptel-request' to SERVER; wait.
As set up by `toolspec-server-with-gptel': tool calls run without
confirmation.  DURING, if non-nil, is called in the request's buffer
once it is sent.  Signal an error when the conversation takes more
than TIMEOUT seconds (default 30).  Return a plist:
  :text   the final response (a string, nil or `abort')
  :events every RESPONSE the callback received, in order
  :info   the INFO plist of the last callback call."
  (toolspec-server-with-gptel server tools
    (let ((events nil) (last-info nil) (done nil) (final nil)
          (deadline (+ (float-time) (or timeout 30))))
      (with-temp-buffer
        (gptel-request prompt
          :system "You are a test."
          :callback (lambda (response info)
                      (push response events)
                      (setq last-info info)
                      (when (or (stringp response) (null response) (eq response 'abort))
                        (setq done t final response))))
        (when during (funcall during))
        (while (and (not done) (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (unless done
        (error "No final answer from gptel within %s s: events %S, %d requests, server errors %S"
               (or timeout 30) (reverse events) (length (toolspec-server-requests server))
               (toolspec-server-errors server)))
      (list :text final :events (nreverse events) :info last-info))))

(provide 'toolspec-server)
;;; toolspec-server.el ends here
