;;; toolspec-seeds-test.el --- Gloodata, Arcade and SkyDeck tools through the real gptel -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests of the seed formats (lisp/toolspec-envelope.el,
;; toolspec-gloodata.el, toolspec-arcade.el, toolspec-skydeck.el and the
;; toolspec-seeds.el they share): result envelopes, and the
;; executors of Gloodata extensions, Arcade workers and SkyDeck prompt
;; tools, each run end to end through the real gptel: `gptel-request'
;; sends the tools to a scripted model, the model calls one, the
;; executor runs it, and its result reaches the next request to the
;; model.
;;
;; Every server is test/toolspec-server.el on 127.0.0.1 (port chosen by
;; the OS), stopped when its test ends: the model is the
;; OpenAI-compatible one; Gloodata extensions and Arcade workers are the
;; same server answering other paths.  Nothing else is contacted.
;;
;; Run with
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "target/debug/libtoolspec.so")' \
;;     -l test/toolspec-seeds-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'url)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'toolspec-envelope)
(require 'toolspec-gloodata)
(require 'toolspec-arcade)
(require 'toolspec-skydeck)
(require 'gptel)
(require 'gptel-openai)
(require 'toolspec-server)

(defvar gptel--known-backends)
(defvar gptel--tool-preview-alist)
(defvar url-proxy-services)

(defconst toolspec-seeds-test--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "Directory of this file.")

(defconst toolspec-seeds-test--timeout 10
  "Seconds a conversation may take before the test fails.")

(defun toolspec-seeds-test--example (name)
  "Absolute file name of example NAME in examples/."
  (expand-file-name name (expand-file-name "../examples" toolspec-seeds-test--directory)))

(defmacro toolspec-seeds-test--with-registry (&rest body)
  "Run BODY with empty tool registries, preview list and log.
The global ones are left as they were."
  (declare (indent 0) (debug t))
  `(let ((gptel--known-tools nil)
         (gptel-tools nil)
         (gptel--tool-preview-alist nil)
         (toolspec-function-alist nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal))
         (toolspec-seeds--tools (make-hash-table :test 'equal))
         (toolspec-log-buffer " *toolspec-seeds-test-log*")
         (toolspec-http-timeout 5)
         (url-proxy-services nil))
     (when (get-buffer toolspec-log-buffer) (kill-buffer toolspec-log-buffer))
     ,@body))

(defun toolspec-seeds-test--log ()
  "The text of the test log buffer."
  (if (get-buffer toolspec-log-buffer)
      (with-current-buffer toolspec-log-buffer (buffer-string))
    ""))

(defun toolspec-seeds-test--url (server &optional path)
  "The URL of SERVER at PATH (default \"/\")."
  (format "http://127.0.0.1:%d%s" (toolspec-server-port server) (or path "/")))

(defun toolspec-seeds-test--wait (what predicate)
  "Wait until PREDICATE returns non-nil; fail naming WHAT after the timeout."
  (let ((deadline (+ (float-time) toolspec-seeds-test--timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall predicate)
        (ert-fail (format "Timed out waiting for %s" what)))))

(defun toolspec-seeds-test--call (tool &rest args)
  "Call registered gptel TOOL (async) with ARGS; wait for and return the result."
  (let ((result :none))
    (apply (gptel-tool-function tool) (lambda (r) (setq result r)) args)
    (toolspec-seeds-test--wait (format "the result of %s" (gptel-tool-name tool))
                               (lambda () (not (eq result :none))))
    result))

(defun toolspec-seeds-test--json (text)
  "TEXT parsed as JSON into plists."
  (json-parse-string text :object-type 'plist :null-object :null :false-object :json-false))

;;;; Talking to the scripted model

(defun toolspec-seeds-test--backend (server &optional models)
  "A gptel OpenAI-compatible backend for SERVER offering MODELS."
  (let ((gptel--known-backends nil))
    (gptel-make-openai "toolspec-seeds-loopback"
      :host (format "127.0.0.1:%d" (toolspec-server-port server))
      :protocol "http"
      :endpoint "/v1/chat/completions"
      :stream nil
      :key "test"
      :models (or models '(test-model)))))

(defun toolspec-seeds-test--chat (prompt)
  "Send PROMPT with `gptel-request' and wait for the final text.
gptel's settings are the caller's.  Return (TEXT . EVENTS), EVENTS
every response the callback received, in order."
  (let ((events nil) (done nil) (final nil))
    (with-temp-buffer
      (gptel-request prompt
        :system "You are a test."
        :callback (lambda (response _info)
                    (push response events)
                    (when (or (stringp response) (null response) (eq response 'abort))
                      (setq done t final response))))
      (toolspec-seeds-test--wait "the final answer" (lambda () done)))
    (cons final (nreverse events))))

(defun toolspec-seeds-test--tool-message (request id)
  "The content of the tool message answering call ID in REQUEST."
  (plist-get (cl-find-if (lambda (m) (and (equal (plist-get m :role) "tool")
                                          (equal (plist-get m :tool_call_id) id)))
                         (append (plist-get request :messages) nil))
             :content))

(defun toolspec-seeds-test--user-message (request)
  "The content of the last user message of REQUEST."
  (plist-get (car (last (cl-remove-if-not (lambda (m) (equal (plist-get m :role) "user"))
                                          (append (plist-get request :messages) nil))))
             :content))

;;;; Result envelopes

(ert-deftest toolspec-seeds-envelope-made ()
  "Envelopes of every outcome are valid, with an id and an RFC 3339 time."
  (let* ((value (toolspec-seeds-test--json (toolspec-result-envelope '(:value (:temp 21.5 :sunny t))))))
    (should (string-match-p "\\`[0-9a-f]\\{8\\}-[0-9a-f]\\{4\\}-4" (plist-get value :invocation_id)))
    (should (string-match-p "\\`[0-9]\\{4\\}-[0-9]\\{2\\}-[0-9]\\{2\\}T[0-9:.]+Z\\'" (plist-get value :finished_at)))
    (should (eq (plist-get value :success) t))
    (should (equal (plist-get value :output) '(:value (:temp 21.5 :sunny t)))))
  (let ((void (toolspec-seeds-test--json
               (toolspec-result-envelope nil :invocation-id "call-7"
                                         :finished-at (encode-time '(5 4 3 2 1 2026 nil nil t))))))
    (should (equal void '(:invocation_id "call-7" :finished_at "2026-01-02T03:04:05.000Z" :success t))))
  (let ((err (toolspec-seeds-test--json
              (toolspec-result-envelope '(:error "Not found" :developer-message "GET /x: 404")))))
    (should (eq (plist-get err :success) :json-false))
    (should (equal (plist-get err :output)
                   '(:error (:message "Not found" :developer_message "GET /x: 404")))))
  (should (equal (plist-get (toolspec-seeds-test--json
                             (toolspec-result-envelope '(:requires-authorization "Sign in" :url "https://auth.example.invalid/a" :scope "cal")))
                            :output)
                 '(:requires_authorization (:message "Sign in" :oauth2 (:url "https://auth.example.invalid/a" :scope "cal")))))
  (should (equal (plist-get (toolspec-seeds-test--json
                             (toolspec-result-envelope '(:artifact "https://f.example.invalid/r.csv" :content-type "text/csv"
                                                                   :size 10 :description "Report")))
                            :output)
                 '(:artifact (:url "https://f.example.invalid/r.csv" :content_type "text/csv" :size 10
                              :meta (:description "Report")))))
  (should (equal (plist-get (toolspec-seeds-test--json (toolspec-result-envelope '(:value :json-false))) :output)
                 '(:value :json-false))))

(ert-deftest toolspec-seeds-envelope-refused ()
  "An outcome the schema does not allow is a `toolspec-envelope-error' with its path."
  (let ((err (should-error (toolspec-result-envelope '(:value ["a" "b"])) :type 'toolspec-envelope-error)))
    (should (equal (plist-get (toolspec-error-details err) :path) "output.value"))
    (should (string-match-p "a value must be an object, a number, a string or a boolean" (cadr err))))
  (let ((err (should-error (toolspec-result-envelope '(:artifact "https://f.example.invalid/r" :size 1))
                           :type 'toolspec-envelope-error)))
    (should (string-prefix-p "output.artifact" (plist-get (toolspec-error-details err) :path))))
  (let ((err (should-error (toolspec-result-envelope '(:value 1 :error "x")) :type 'toolspec-envelope-error)))
    (should (equal (plist-get (toolspec-error-details err) :path) "output")))
  (let ((err (should-error (toolspec-result-envelope '(:value 1) :finished-at "yesterday")
                           :type 'toolspec-envelope-error)))
    (should (equal (plist-get (toolspec-error-details err) :path) "finished_at")))
  ;; All are toolspec errors.
  (should-error (toolspec-result-envelope '(:value [1])) :type 'toolspec-error))

(ert-deftest toolspec-seeds-envelope-text ()
  "What the model sees of each outcome; what goes to the log and to the user."
  (toolspec-seeds-test--with-registry
    (let* ((shown nil)
           (toolspec-authorization-function (lambda (msg url) (push (list msg url) shown))))
      (should (equal (toolspec-result-text (toolspec-result-envelope '(:value "Sunny"))) "Sunny"))
      (should (equal (toolspec-result-text (toolspec-result-envelope '(:value 42))) "42"))
      (should (equal (toolspec-result-text (toolspec-result-envelope '(:value (:a [1 2]))))
                     "{\"a\":[1,2]}"))
      ;; The developer message goes to the log only.
      (let ((text (toolspec-result-text
                   (toolspec-result-envelope '(:error "Calendar unavailable" :developer-message "upstream 503 at /v2/cal")
                                             :invocation-id "inv-1"))))
        (should (equal text "Error: Calendar unavailable"))
        (should (string-match-p "invocation inv-1: developer message: upstream 503 at /v2/cal"
                                (toolspec-seeds-test--log))))
      ;; The URL goes to the user only.
      (let ((text (toolspec-result-text
                   (toolspec-result-envelope '(:requires-authorization "Sign in to your calendar."
                                               :url "https://auth.example.invalid/oauth?x=1")))))
        (should (string-prefix-p "Authorization required: Sign in to your calendar." text))
        (should-not (string-match-p "https://" text))
        (should (equal shown '(("Sign in to your calendar." "https://auth.example.invalid/oauth?x=1")))))
      (should (equal (toolspec-result-text
                      (toolspec-result-envelope '(:artifact "https://f.example.invalid/r.csv" :content-type "text/csv"
                                                            :size 2048 :description "Monthly report")))
                     "Artifact: Monthly report (text/csv, 2048 bytes) at https://f.example.invalid/r.csv"))
      (should (equal (toolspec-result-text (toolspec-result-envelope nil))
                     "The tool ran successfully and returned no value."))
      ;; Lisp objects as `json-parse-string' gives them are read too.
      (should (equal (toolspec-result-text (toolspec-seeds-test--json (toolspec-result-envelope '(:value "x"))))
                     "x"))
      (should (eq (plist-get (toolspec-result-read (toolspec-result-envelope '(:value 1))) :kind) 'value)))))

(ert-deftest toolspec-seeds-envelope-malformed ()
  "A malformed envelope is a clear `toolspec-envelope-error' with the path."
  (let ((err (should-error (toolspec-result-text "{\"invocation_id\":\"i\",\"finished_at\":\"2026-01-01T00:00:00Z\",\"success\":true,\"output\":{\"error\":{\"developer_message\":\"x\"}}}")
                           :type 'toolspec-envelope-error)))
    (should (equal (plist-get (toolspec-error-details err) :path) "output.error.message"))
    (should (string-match-p "required member missing" (cadr err))))
  (let ((err (should-error (toolspec-result-text "{\"success\": true}") :type 'toolspec-envelope-error)))
    (should (member (plist-get (toolspec-error-details err) :path) '("invocation_id" "finished_at"))))
  (let ((err (should-error (toolspec-result-text "{\"invocation_id\":\n oops}") :type 'toolspec-envelope-error)))
    (should (equal (plist-get (toolspec-error-details err) :line) 2))))

;;;; Gloodata

(defconst toolspec-seeds-test--map-tool-name "mynamespace_showMapAtAddressAndZoom"
  "The map tool of examples/gloodata.json.")

(defun toolspec-seeds-test--gloodata-info ()
  "The info document of examples/gloodata.json, parsed."
  (json-parse-string (with-temp-buffer
                       (insert-file-contents (toolspec-seeds-test--example "gloodata.json"))
                       (buffer-string))
                     :object-type 'plist))

(defun toolspec-seeds-test--extension (results)
  "Scripted answers of a Gloodata extension: the info, then RESULTS.
Each of RESULTS is an answer to an {\"action\":\"request\"} body, or
a function of the parsed body returning one."
  (cons (lambda (body)
          (if (equal (plist-get body :action) "info")
              (toolspec-seeds-test--gloodata-info)
            (list :status 400 :body (list :ok :json-false :code "UnexpectedAction" :reason "expected info"))))
        results))

(ert-deftest toolspec-seeds-gloodata-render-call ()
  "Calls render as the extension's tile shows them."
  (let* ((tools (toolspec-read-file (toolspec-seeds-test--example "gloodata.json")))
         (map (cadr tools)))
    (should (equal (toolspec-gloodata-render-call map '("Cairo" 12))
                   "Show Map Of \"Cairo\" At Zoom Level 12"))
    ;; Missing arguments are left out with their prefix.
    (should (equal (toolspec-gloodata-render-call map '("Rio" nil)) "Show Map Of \"Rio\""))
    (should (equal (toolspec-gloodata-render-call (car tools) nil) "Hello World")))
  (let ((tool (car (toolspec-parse-json
                    "{\"ns\":\"n\",\"tools\":{\"t\":{\"title\":\"Search\",\"schema\":{\"fields\":{
                       \"q\":{\"type\":\"string\",\"description\":\"Query\"},
                       \"exact\":{\"type\":\"boolean\",\"description\":\"Exact\",\"default\":false},
                       \"limit\":{\"type\":\"integer\",\"description\":\"Limit\",\"default\":10}}},
                      \"ui\":{\"prefix\":\"Find\",\"suffix\":\"now\",
                              \"args\":{\"limit\":{\"prefix\":\"Top\",\"suffix\":\"results for\"},\"q\":{\"prefix\":\"\"}}}}}}"))))
    ;; ui.args order, an empty prefix, suffixes, an argument outside ui.args.
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get tool :args)) '("limit" "q" "exact")))
    (should (equal (toolspec-gloodata-render-call tool '(5 "emacs" t))
                   "Find Top 5 results for \"emacs\" exact true now"))))

(ert-deftest toolspec-seeds-gloodata-fetch-and-import ()
  "The info document is fetched from the extension and its tools registered."
  (toolspec-seeds-test--with-registry
    (toolspec-server-with (ext (toolspec-seeds-test--extension nil) '("/"))
      (let* ((url (toolspec-seeds-test--url ext))
             (made (toolspec-gloodata-import url)))
        (should (equal (toolspec-server-requests ext) '((:action "info"))))
        (should (equal (mapcar #'gptel-tool-name made)
                       (list "mynamespace_helloWorld" toolspec-seeds-test--map-tool-name)))
        (should (equal (mapcar #'gptel-tool-category made) '("mynamespace" "mynamespace")))
        (should (cl-every #'gptel-tool-async made))
        (should (functionp (gptel-tool-confirm (cadr made))))
        ;; The endpoint is the URL fetched; the preview is installed.
        (should (equal (plist-get (plist-get (gethash toolspec-seeds-test--map-tool-name toolspec-seeds--tools) :executor)
                                  :endpoint)
                       url))
        (should (assoc toolspec-seeds-test--map-tool-name gptel--tool-preview-alist))
        ;; No extension there: a clear error.
        (let ((err (should-error (toolspec-gloodata-import (toolspec-seeds-test--url ext "/nope"))
                                 :type 'toolspec-fetch-error)))
          (should (string-match-p "answered HTTP 404" (cadr err))))))))

(defun toolspec-seeds-test--map-answer (body)
  "The scripted extension's answer to request BODY: an InfoBox of the arguments."
  (if (equal (plist-get body :opName) "showMapAtAddressAndZoom")
      (list :type "InfoBox"
            :columns (vector (list :id "address" :label "Address")
                             (list :id "zoom" :label "Zoom"))
            :row (vector (plist-get (plist-get body :info) :address)
                         (plist-get (plist-get body :info) :zoom)))
    (list :ok :json-false :code "ToolNotFound" :reason "Tool Not Found")))

(defun toolspec-seeds-test--confirmation (buffer)
  "The overlay of gptel's pending tool call confirmation in BUFFER, or nil."
  (with-current-buffer buffer
    (cl-find-if (lambda (o) (overlay-get o 'gptel-tool))
                (overlays-in (point-min) (point-max)))))

(ert-deftest toolspec-seeds-gloodata-end-to-end-with-confirmation ()
  "gptel shows the call as the extension would, runs it on the user's word, and the table reaches the model."
  (toolspec-seeds-test--with-registry
    (toolspec-server-with (ext (toolspec-seeds-test--extension (list #'toolspec-seeds-test--map-answer)) '("/"))
      (toolspec-server-with
          (model (list (toolspec-server-tool-calls-response
                        `(("call_map" ,toolspec-seeds-test--map-tool-name "{\"address\":\"Cairo\",\"zoom\":12}")))
                       (toolspec-server-text-response "Here is Cairo.")))
        (let ((tools (toolspec-gloodata-import (toolspec-seeds-test--url ext)))
              (buffer (generate-new-buffer " *toolspec-seeds-chat*"))
              (rendered "Show Map Of \"Cairo\" At Zoom Level 12"))
          (unwind-protect
              (toolspec-server-with-gptel model tools
                (let ((gptel-confirm-tool-calls 'auto)
                      (messages-start (with-current-buffer "*Messages*" (point-max))))
                  ;; No :callback: gptel's own, which asks in the buffer.
                  (with-current-buffer buffer
                    (insert "Show me Cairo\n")
                    (gptel-request "Show me Cairo" :position (point-max-marker)))
                  (let ((ov (toolspec-seeds-test--wait
                             "gptel's confirmation"
                             (lambda () (toolspec-seeds-test--confirmation buffer)))))
                    ;; The call as the extension shows it, instead of gptel's (NAME ARGS...).
                    (with-current-buffer buffer
                      (should (string-match-p (regexp-quote rendered) (buffer-string)))
                      (should-not (string-match-p (regexp-quote (format "(%s \"Cairo\"" toolspec-seeds-test--map-tool-name))
                                                  (buffer-string))))
                    ;; And in the echo area, for gptel's minibuffer confirmation.
                    (should (string-match-p
                             (regexp-quote (format "toolspec: run %s? %s" toolspec-seeds-test--map-tool-name rendered))
                             (with-current-buffer "*Messages*"
                               (buffer-substring messages-start (point-max)))))
                    ;; Nothing ran before the user said yes.
                    (should (= (length (toolspec-server-requests ext)) 1))
                    (with-current-buffer buffer
                      (gptel--accept-tool-calls (overlay-get ov 'gptel-tool) ov)))
                  (toolspec-seeds-test--wait
                   "the final answer in the buffer"
                   (lambda () (with-current-buffer buffer
                                (string-match-p "Here is Cairo\\." (buffer-string)))))
                  (with-current-buffer buffer
                    (should-not (string-match-p (regexp-quote rendered) (buffer-string))))
                  (should (equal (nth 1 (toolspec-server-requests ext))
                                 '(:action "request" :opName "showMapAtAddressAndZoom"
                                   :info (:address "Cairo" :zoom 12))))
                  (should (= (length (toolspec-server-requests model)) 2))
                  (should (equal (toolspec-seeds-test--tool-message (nth 1 (toolspec-server-requests model)) "call_map")
                                 "| Field | Value |\n| --- | --- |\n| Address | Cairo |\n| Zoom | 12 |"))
                  (should-not (toolspec-server-errors model))
                  (should-not (toolspec-server-errors ext))))
            (kill-buffer buffer)))))))

(ert-deftest toolspec-seeds-gloodata-results ()
  "Strings, tables, typed results and errors as the model receives them."
  (toolspec-seeds-test--with-registry
    (toolspec-server-with
        (ext (toolspec-seeds-test--extension
              (list "# Hello\nWörld ☀"
                    (list :type "Table" :columns ["city" "pop"] :rows [["Cairo" 10] ["Rio|de" 6]])
                    (list :type "Mermaid" :text "graph TD; A-->B")
                    (list :ok :json-false :code "ToolNotFound" :reason "Tool Not Found" :info (list :opName "x"))
                    (list :status 500 :body (list :detail "boom"))))
             '("/"))
      (let* ((tools (toolspec-gloodata-import (toolspec-seeds-test--url ext) :confirm nil))
             (hello (car tools)))
        (should-not (gptel-tool-confirm hello))
        (should (equal (toolspec-seeds-test--call hello) "# Hello\nWörld ☀"))
        (should (equal (toolspec-seeds-test--call hello)
                       "| city | pop |\n| --- | --- |\n| Cairo | 10 |\n| Rio\\|de | 6 |"))
        (should (equal (toolspec-seeds-test--call hello) "{\"type\":\"Mermaid\",\"text\":\"graph TD; A-->B\"}"))
        (should (equal (toolspec-seeds-test--call hello)
                       "Error: Tool Not Found (ToolNotFound): {\"opName\":\"x\"}"))
        (should (string-match-p "\\`Error: the Gloodata extension at http://127\\.0\\.0\\.1:[0-9]+/ answered HTTP 500: "
                                (toolspec-seeds-test--call hello)))
        (should (equal (mapcar (lambda (r) (plist-get r :opName)) (cdr (toolspec-server-requests ext)))
                       (make-list 5 "helloWorld")))
        (should (string-match-p "answered HTTP 500" (toolspec-seeds-test--log)))))))

(ert-deftest toolspec-seeds-gloodata-no-answer ()
  "An extension that is gone, or silent, gives the model an error, in bounded time."
  (toolspec-seeds-test--with-registry
    (let* ((tools (toolspec-parse-json (with-temp-buffer
                                         (insert-file-contents (toolspec-seeds-test--example "gloodata.json"))
                                         (buffer-string))))
           (silent (make-network-process :name "toolspec-seeds-silent" :server t :host 'local
                                         :family 'ipv4 :service t :noquery t
                                         :filter #'ignore))
           (port (aref (process-contact silent :local) 4))
           (toolspec-http-timeout 1))
      (unwind-protect
          (let* ((made (toolspec-register tools :endpoint (format "http://127.0.0.1:%d/" port) :confirm nil))
                 (start (float-time)))
            (should (equal (toolspec-seeds-test--call (car made))
                           (format "Error: the Gloodata extension at http://127.0.0.1:%d/ did not answer: no answer from 127.0.0.1 within 1 seconds" port)))
            (should (< (- (float-time) start) 5)))
        (delete-process silent))
      ;; A port nobody listens on.
      (let* ((closed (make-network-process :name "toolspec-seeds-closed" :server t :host 'local
                                           :family 'ipv4 :service t :noquery t))
             (port (aref (process-contact closed :local) 4)))
        (delete-process closed)
        (let ((made (toolspec-register tools :endpoint (format "http://127.0.0.1:%d/" port) :confirm nil)))
          (should (string-prefix-p (format "Error: the Gloodata extension at http://127.0.0.1:%d/ did not answer: " port)
                                   (toolspec-seeds-test--call (car made)))))))))

(ert-deftest toolspec-seeds-gloodata-without-endpoint ()
  "A Gloodata file imported without an endpoint tells the model and the user how to fix it."
  (toolspec-seeds-test--with-registry
    (let ((made (toolspec-import-file (toolspec-seeds-test--example "gloodata.json"))))
      (should (string-match-p "has no endpoint here" (funcall (gptel-tool-function (car made)))))
      (should-not (gptel-tool-async (car made))))))

(ert-deftest toolspec-seeds-gloodata-info-export ()
  "Tools are exported as an extension info document; other arguments are refused by name."
  (toolspec-seeds-test--with-registry
    (let* ((tools (toolspec-read-file (toolspec-seeds-test--example "gloodata.json")))
           (info (json-parse-string (toolspec-gloodata-info tools) :object-type 'plist))
           (original (toolspec-seeds-test--gloodata-info)))
      (should (equal (plist-get info :ns) "mynamespace"))
      (should (equal (plist-get info :title) "My Extension Title"))
      (should (equal (plist-get (plist-get info :tools) :showMapAtAddressAndZoom)
                     (plist-get (plist-get original :tools) :showMapAtAddressAndZoom)))
      ;; A registered tool is exported by name, with what gptel does not keep.
      (toolspec-register tools :endpoint "http://127.0.0.1:9/" :confirm nil)
      (should (equal (json-parse-string (toolspec-gloodata-info (list toolspec-seeds-test--map-tool-name)
                                                                :ns "other" :pretty t)
                                        :object-type 'plist)
                     (list :ns "other" :title "My Extension Title" :description "Maps and greetings"
                           :tools (list :showMapAtAddressAndZoom
                                        (plist-get (plist-get original :tools) :showMapAtAddressAndZoom))))))
    (let ((err (should-error (toolspec-gloodata-info
                              '((:name "t" :description "d"
                                 :args ((:name "q" :type string :description "Q")
                                        (:name "tags" :type array :items (:type string) :description "Tags")))))
                             :type 'toolspec-write-error)))
      (should (string-match-p "argument \"tags\" is of type array" (cadr err)))
      (should (equal (plist-get (toolspec-error-details err) :path) "args[1]")))))

;;;; Arcade

(defun toolspec-seeds-test--worker (answer)
  "A scripted Arcade worker answer: ANSWER called with the request, as an envelope.
ANSWER returns an outcome for `toolspec-result-envelope', whose
invocation id is the request's."
  (lambda (request)
    (toolspec-seeds-test--json
     (toolspec-result-envelope (funcall answer request)
                               :invocation-id (plist-get request :invocation_id)))))

(ert-deftest toolspec-seeds-arcade-end-to-end ()
  "An Arcade tool posts a tool request to its worker; the envelope's value reaches the model."
  (toolspec-seeds-test--with-registry
    (toolspec-server-with
        (worker (list (toolspec-seeds-test--worker
                       (lambda (request)
                         (let ((input (plist-get request :input)))
                           (list :value (format "%s: sunny for %d days" (plist-get input :city) (plist-get input :days)))))))
                '("/worker/tools/invoke"))
      (toolspec-server-with
          (model (list (toolspec-server-tool-calls-response
                        '(("call_w" "Weather_GetForecast" "{\"city\":\"Paris\",\"days\":3}")))
                       (toolspec-server-text-response "Sunny in Paris.")))
        (let* ((url (toolspec-seeds-test--url worker "/worker/tools/invoke"))
               (tools (toolspec-import-file (toolspec-seeds-test--example "arcade.json")
                                            :worker url :token "tok-123")))
          (should (equal (mapcar #'gptel-tool-name tools) '("Weather_GetForecast" "Calendar_CreateEvent")))
          ;; A network executor asks first, unless told otherwise.
          (should (eq (gptel-tool-confirm (car tools)) t))
          (toolspec-server-with-gptel model tools
            (let ((result (toolspec-seeds-test--chat "Weather in Paris?")))
              (should (equal (car result) "Sunny in Paris."))))
          (let ((request (car (toolspec-server-requests worker))))
            (should (equal (plist-get request :tool) '(:name "Weather.GetForecast" :version "1.2.0")))
            (should (equal (plist-get request :input) '(:city "Paris" :days 3)))
            (should (string-match-p "\\`[0-9a-f-]\\{36\\}\\'" (plist-get request :invocation_id)))
            (should (string-match-p "\\`[0-9a-f-]\\{36\\}\\'" (plist-get request :run_id)))
            (should (string-match-p "\\`[0-9]\\{4\\}-[0-9]\\{2\\}-[0-9]\\{2\\}T[0-9:.]+Z\\'" (plist-get request :created_at)))
            (should (equal (plist-get (plist-get (plist-get request :context) :user) :id) (user-login-name)))
            (should (equal (plist-get request :context)
                           (append (list :user (plist-get (plist-get request :context) :user))
                                   '(:authorization (:token "tok-123"))))))
          (should (equal (toolspec-seeds-test--tool-message (nth 1 (toolspec-server-requests model)) "call_w")
                         "Paris: sunny for 3 days"))
          (should-not (toolspec-server-errors model))
          (should-not (toolspec-server-errors worker)))))))

(ert-deftest toolspec-seeds-arcade-outcomes ()
  "Errors, authorization requests, bad envelopes and HTTP errors from a worker."
  (toolspec-seeds-test--with-registry
    (let* ((shown nil)
           (toolspec-authorization-function (lambda (msg url) (push (list msg url) shown))))
      (toolspec-server-with
          (worker (list (toolspec-seeds-test--worker
                         (lambda (_) '(:error "Calendar unavailable" :developer-message "upstream 503")))
                        (toolspec-seeds-test--worker
                         (lambda (_) '(:requires-authorization "Sign in to the calendar."
                                       :url "https://auth.example.invalid/o?client=1")))
                        (lambda (request)
                          (list :invocation_id (plist-get request :invocation_id)
                                :finished_at "2026-01-01T00:00:00Z" :success t
                                :output (list :value ["not" "allowed"])))
                        (list :status 500 :body (list :detail "worker crashed"))
                        (toolspec-seeds-test--worker (lambda (request) (list :value (plist-get request :input)))))
                  '("/invoke"))
        (let* ((url (toolspec-seeds-test--url worker "/invoke"))
               (event (cadr (toolspec-import-file (toolspec-seeds-test--example "arcade.json")
                                                  :worker url :confirm nil))))
          (should (equal (toolspec-seeds-test--call event "Standup" "2026-01-05T09:00:00Z" nil nil)
                         "Error: Calendar unavailable"))
          (should (string-match-p "developer message: upstream 503" (toolspec-seeds-test--log)))
          (let ((text (toolspec-seeds-test--call event "Standup" "2026-01-05T09:00:00Z" nil nil)))
            (should (string-prefix-p "Authorization required: Sign in to the calendar." text))
            (should-not (string-match-p "auth\\.example" text))
            (should (equal shown '(("Sign in to the calendar." "https://auth.example.invalid/o?client=1")))))
          (should (equal (toolspec-seeds-test--call event "Standup" "2026-01-05T09:00:00Z" nil nil)
                         (format "Error: the Arcade worker at %s answered with an invalid result: output.value: not a valid tool result envelope: a value must be an object, a number, a string or a boolean, found an array" url)))
          (should (equal (toolspec-seeds-test--call event "Standup" "2026-01-05T09:00:00Z" nil nil)
                         (format "Error: the Arcade worker at %s answered HTTP 500" url)))
          ;; Booleans the model left false are sent as false; missing values are left out.
          (should (equal (toolspec-seeds-test--call event "Standup" "2026-01-05T09:00:00Z" :json-false
                                                    '(:room "B"))
                         "{\"title\":\"Standup\",\"start\":\"2026-01-05T09:00:00Z\",\"all_day\":false,\"extra\":{\"room\":\"B\"}}"))
          (should-not (plist-member (plist-get (car (toolspec-server-requests worker)) :context) :authorization)))))
    ;; Without a worker, the model is told.
    (let ((made (toolspec-import-file (toolspec-seeds-test--example "arcade.json"))))
      (should (string-match-p "has no worker here" (funcall (gptel-tool-function (car made)) "Paris"))))))

;;;; SkyDeck

(ert-deftest toolspec-seeds-skydeck-fill ()
  "Placeholders are filled from the arguments and the defaults."
  (let ((tool (car (toolspec-read-file (toolspec-seeds-test--example "skydeck.json")))))
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get tool :args))
                   '("topic" "tone" "aspects" "length" "audience")))
    (should (equal (toolspec-skydeck-fill tool '("Emacs" nil ["history" "tools"] nil "hackers"))
                   "Write a short blog post about Emacs for hackers, in a friendly tone. Cover these aspects: history, tools."))
    (should (equal (toolspec-skydeck-fill tool '("Emacs" "formal" nil "long" "managers"))
                   "Write a long blog post about Emacs for managers, in a formal tone. Cover these aspects: history, practice.")))
  (let ((tool (car (toolspec-parse-json
                    "{\"model_prompt\":\"A {{ variable name 1 }} and {{x}}.\",\"metadata\":{\"prompt_name\":\"P\",
                      \"variables\":[{\"name\":\"variable name 1\",\"type\":\"text\",\"description\":\"V\"}]}}"))))
    (should (equal (toolspec-skydeck-fill tool '("one" "two")) "A one and two."))))

(ert-deftest toolspec-seeds-skydeck-end-to-end ()
  "A prompt tool sends its filled prompt as a nested request; the reply reaches the calling model."
  (toolspec-seeds-test--with-registry
    (toolspec-server-with
        (model (list (toolspec-server-tool-calls-response
                      '(("call_blog" "blog_post_writer"
                         "{\"topic\":\"Emacs\",\"audience\":\"hackers\",\"aspects\":[\"history\",\"tools\"]}")))
                     (toolspec-server-text-response "# Emacs\n\nA draft.")
                     (toolspec-server-text-response "Here is your draft.")))
      (let ((tools (toolspec-import-file (toolspec-seeds-test--example "skydeck.json"))))
        (should (gptel-tool-async (car tools)))
        (should-not (gptel-tool-confirm (car tools)))
        (toolspec-server-with-gptel model tools
          (should (equal (car (toolspec-seeds-test--chat "Draft a post")) "Here is your draft.")))
        (pcase-let ((`(,outer ,nested ,last) (toolspec-server-requests model)))
          (should (plist-get outer :tools))
          ;; The nested request: the filled prompt, the tool's parameters, no tools.
          (should (equal (toolspec-seeds-test--user-message nested)
                         "Write a short blog post about Emacs for hackers, in a friendly tone. Cover these aspects: history, tools."))
          (should-not (cl-find "system" (append (plist-get nested :messages) nil)
                               :key (lambda (m) (plist-get m :role)) :test #'equal))
          (should (equal (plist-get nested :temperature) 0.7))
          (should (equal (plist-get nested :max_tokens) 800))
          (should (equal (plist-get nested :top_p) 1.0))
          (should (equal (plist-get nested :frequency_penalty) 0.0))
          (should (equal (plist-get nested :model) "test-model"))
          (should-not (plist-member nested :tools))
          (should (equal (toolspec-seeds-test--tool-message last "call_blog") "# Emacs\n\nA draft.")))
        (should-not (toolspec-server-errors model))))))

(defconst toolspec-seeds-test--classifier
  "{\"version\": 1,
    \"model_prompt\": \"Is this a question? {{text}}\",
    \"metadata\": {\"prompt_name\": \"Question Classifier\",
                 \"model_version\": [\"big-model\", \"small-model\"],
                 \"parameters\": {\"temperature\": 0, \"max_tokens\": 5}
                 \"expected_output\": {\"type\": \"limited\", \"allowed_values\": [\"yes\", \"no\"]},}}"
  "A prompt tool with a limited output, with a missing and a trailing comma.")

(ert-deftest toolspec-seeds-skydeck-limited-output ()
  "A limited output must be one of the allowed values; the model version is chosen when offered."
  (toolspec-seeds-test--with-registry
    (let ((tool (car (toolspec-parse-json toolspec-seeds-test--classifier))))
      (should (equal (mapcar #'car toolspec-last-import-warnings) '(warning warning)))
      (should (equal (plist-get tool :name) "question_classifier"))
      (should (string-match-p "The reply is one of: \"yes\", \"no\"\\." (plist-get tool :description)))
      (toolspec-server-with
          (model (list (toolspec-server-text-response " Yes.")
                       (toolspec-server-text-response "Maybe")
                       (list :status 500 :body (list :error (list :message "overloaded")))))
        (let* ((made (toolspec-register (list tool)))
               (gptel--known-backends nil)
               (gptel-backend (toolspec-seeds-test--backend model '(test-model small-model)))
               (gptel-model 'test-model)
               (gptel-use-curl nil))
          (should (equal (toolspec-seeds-test--call (car made) "Is it?") "yes"))
          (should (equal (toolspec-seeds-test--call (car made) "Go.")
                         "Error: the prompt tool question_classifier answered \"Maybe\", which is not one of the allowed values: yes, no."))
          (should (string-match-p "\\`Error: the prompt tool question_classifier got no reply: "
                                  (toolspec-seeds-test--call (car made) "Hm?")))
          (let ((first (car (toolspec-server-requests model))))
            (should (equal (plist-get first :model) "small-model"))
            (should (equal (plist-get first :temperature) 0))
            (should (equal (plist-get first :max_tokens) 5))
            (should (equal (toolspec-seeds-test--user-message first) "Is this a question? Is it?"))))))))

(ert-deftest toolspec-seeds-skydeck-export ()
  "A prompt tool is written back as its SkyDeck document, metadata and all."
  (toolspec-seeds-test--with-registry
    (let* ((file (toolspec-seeds-test--example "skydeck.json"))
           (original (json-parse-string
                      (replace-regexp-in-string
                       "\"long\"\\],"  "\"long\"]"
                       (with-temp-buffer (insert-file-contents file) (buffer-string)))
                      :object-type 'alist))
           (tool (car (toolspec-read-file file))))
      (should (equal (json-parse-string (toolspec-skydeck-document tool) :object-type 'alist) original))
      ;; A registered tool, by name or struct.
      (let ((made (toolspec-import-file file)))
        (should (equal (json-parse-string (toolspec-skydeck-document "blog_post_writer" t) :object-type 'alist)
                       original))
        (should (equal (json-parse-string (toolspec-skydeck-document (car made)) :object-type 'alist)
                       original)))
      (let ((err (should-error (toolspec-skydeck-document '(:name "t" :description "d" :args nil))
                               :type 'toolspec-write-error)))
        (should (string-match-p "not a prompt tool" (cadr err)))))))

(provide 'toolspec-seeds-test)
;;; toolspec-seeds-test.el ends here
