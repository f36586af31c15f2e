;;; toolspec-integration-test.el --- toolspec tools through the real gptel, end to end -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests that import JSON tool files with `toolspec-import-file' and
;; use them the way a user does: `gptel-request' sends them to a model,
;; the model calls them, gptel runs them and sends the results back.
;; The model is test/toolspec-server.el, a scripted OpenAI-compatible
;; server on 127.0.0.1 (port chosen by the OS); nothing else is
;; contacted.  gptel talks to it with url.el (`gptel-use-curl' nil),
;; without streaming.
;;
;; The llm package is represented by test/fixtures/llm.el, a stand-in
;; for llm's documented tool contract (see that file), put on
;; `load-path' only while the llm tests run.
;;
;; Run with
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "target/debug/libtoolspec.so")' \
;;     -l test/toolspec-integration-test.el -f ert-run-tests-batch-and-exit
;;
;; (from the top directory; `make test' runs it with the other suites).

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'url)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'gptel)
(require 'gptel-openai)
(require 'toolspec-server)

(declare-function llm-tool-p "ext:llm")
(declare-function llm-tool-name "ext:llm")
(declare-function llm-tool-args "ext:llm")
(declare-function llm-tool-function "ext:llm")
(declare-function llm-tool-async "ext:llm")
(declare-function llm-make-tool "ext:llm")
(defvar url-proxy-services)

(defconst toolspec-it--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "Directory of this file.")

(defconst toolspec-it--timeout 10
  "Seconds a conversation may take before the test fails.")

(defun toolspec-it--fixture (name)
  "Absolute file name of fixture NAME."
  (expand-file-name name (expand-file-name "fixtures" toolspec-it--directory)))

(defun toolspec-it--example (name)
  "Absolute file name of example NAME in examples/."
  (expand-file-name name (expand-file-name "../examples" toolspec-it--directory)))

(defmacro toolspec-it--with-registry (&rest body)
  "Run BODY with empty gptel and toolspec tool registries.
The global registries are left as they were."
  (declare (indent 0) (debug t))
  `(let ((gptel--known-tools nil)
         (gptel-tools nil)
         (toolspec-function-alist nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal)))
     ,@body))

;;;; Talking to the scripted model

(defun toolspec-it--chat (server prompt tools)
  "Send PROMPT with TOOLS through `gptel-request' to SERVER; wait for the end.
Tool calls are run without confirmation.  Return a plist:
  :text   the final text the callback received (nil on error)
  :events every RESPONSE the callback received, in order
  :info   the INFO plist of the last callback call.
Fail the test when the conversation takes longer than
`toolspec-it--timeout' seconds."
  (toolspec-server-chat server prompt tools nil toolspec-it--timeout))

(defun toolspec-it--messages (request)
  "The messages of REQUEST, a request body, as a list."
  (append (plist-get request :messages) nil))

(defun toolspec-it--tool-message (request id)
  "The message with role \"tool\" answering tool call ID in REQUEST."
  (cl-find-if (lambda (m) (and (equal (plist-get m :role) "tool")
                               (equal (plist-get m :tool_call_id) id)))
              (toolspec-it--messages request)))

(defun toolspec-it--tool-result-events (events)
  "The (TOOL ARGS RESULT) entries of the tool-result EVENTS, in order."
  (cl-loop for e in events
           when (and (consp e) (eq (car e) 'tool-result))
           append (reverse (cdr e))))

(defun toolspec-it--keys (plist)
  "The keys of PLIST, in order."
  (cl-loop for (k _) on plist by #'cddr collect k))

(defun toolspec-it--contains (tree atoms)
  "Return non-nil when one of ATOMS is in TREE (lists and vectors)."
  (cond ((memq tree atoms) t)
        ((consp tree) (or (toolspec-it--contains (car tree) atoms)
                          (toolspec-it--contains (cdr tree) atoms)))
        ((vectorp tree) (cl-some (lambda (x) (toolspec-it--contains x atoms)) tree))))

(defun toolspec-it--forecast-args ()
  "The arguments of a correct call of get_forecast, as the model sends them.
Keys in another order than the tool's args, false and null values."
  (concat "{\"note\":null,\"options\":{\"detail\":false,\"fields\":[\"wind\",\"rain\"]},"
          "\"include_hourly\":false,\"unit\":\"celsius\",\"days\":3,\"city\":\"Paris\"}"))

;;;; The test server itself

(defun toolspec-it--post (port body)
  "POST BODY to the test server on PORT; return (STATUS . PARSED-JSON)."
  (let* ((url-request-method "POST")
         (url-request-data (encode-coding-string body 'utf-8))
         (url-request-extra-headers '(("Content-Type" . "application/json")))
         (url-proxy-services nil)
         (buf (url-retrieve-synchronously
               (format "http://127.0.0.1:%d/v1/chat/completions" port)
               t nil toolspec-it--timeout)))
    (unless buf (ert-fail "No answer from the test server"))
    (unwind-protect
        (with-current-buffer buf
          (goto-char (point-min))
          (re-search-forward "\\`HTTP/1\\.1 \\([0-9]+\\)")
          (let ((status (string-to-number (match-string 1))))
            (re-search-forward "\r?\n\r?\n")
            (cons status (json-parse-string
                          (decode-coding-string (buffer-substring-no-properties (point) (point-max)) 'utf-8)
                          :object-type 'plist))))
      (let ((kill-buffer-query-functions nil)) (kill-buffer buf)))))

(define-error 'toolspec-it--leave "Leaving the server's body on purpose")

(ert-deftest toolspec-it-server ()
  "The test server listens on 127.0.0.1 only, answers in turn, and stops."
  (let (kept left)
    (condition-case nil
        (toolspec-server-with (server (list (toolspec-server-text-response "één")))
          (setq kept server)
          (should (integerp (toolspec-server-port server)))
          (should (equal (process-contact (toolspec-server-process server) :local)
                         (vector 127 0 0 1 (toolspec-server-port server))))
          (let ((answer (toolspec-it--post (toolspec-server-port server) "{\"a\":\"ü\",\"b\":false,\"c\":null}")))
            (should (= (car answer) 200))
            (should (equal (plist-get (plist-get (aref (plist-get (cdr answer) :choices) 0) :message) :content)
                           "één")))
          ;; The queue is empty now.
          (should (= (car (toolspec-it--post (toolspec-server-port server) "{}")) 500))
          (should (equal (toolspec-server-requests server) '((:a "ü" :b :json-false :c :null) nil)))
          (should (equal (toolspec-server-errors server) '("no scripted response left")))
          (signal 'toolspec-it--leave nil))
      (toolspec-it--leave (setq left t)))
    ;; Stopped even though the body signalled.
    (should left)
    (should kept)
    (should-not (process-live-p (toolspec-server-process kept)))
    (should-not (toolspec-server-connections kept))))

;;;; 1. A full round trip

(ert-deftest toolspec-it-round-trip ()
  "An imported tool is sent, called with its arguments, and its result returned."
  (toolspec-it--with-registry
    (let* ((calls nil)
           (fn (lambda (city days unit hourly options note)
                 (push (list city days unit hourly options note) calls)
                 (format "Forecast for %s, %d days: sunny" city days)))
           (tools (toolspec-import-file (toolspec-it--fixture "forecast.json")
                                        :functions `(("get_forecast" . ,fn)))))
      (should (= (length tools) 1))
      (toolspec-server-with
          (server (list (toolspec-server-tool-calls-response
                         `(("call_fc_1" "get_forecast" ,(toolspec-it--forecast-args))))
                        (toolspec-server-text-response "Sunny in Paris for three days.")))
        (let* ((result (toolspec-it--chat server "Weather in Paris?" tools))
               (requests (toolspec-server-requests server))
               (first (nth 0 requests))
               (second (nth 1 requests)))
          (should-not (toolspec-server-errors server))
          (should (= (length requests) 2))
          ;; The first request carries the tool's schema.
          (should (equal (plist-get first :model) "test-model"))
          (should (= (length (plist-get first :tools)) 1))
          (let* ((sent (aref (plist-get first :tools) 0))
                 (function (plist-get sent :function))
                 (params (plist-get function :parameters))
                 (props (plist-get params :properties)))
            (should (equal (plist-get sent :type) "function"))
            (should (equal (plist-get function :name) "get_forecast"))
            (should (equal (plist-get function :description)
                           "Weather forecast for a city, one entry per day."))
            (should (equal (plist-get params :type) "object"))
            (should (equal (toolspec-it--keys props)
                           '(:city :days :unit :include_hourly :options :note)))
            (should (equal (plist-get params :required) ["city" "days"]))
            (should (equal (plist-get (plist-get props :city) :type) "string"))
            (should (equal (plist-get (plist-get props :days) :type) "integer"))
            (should (equal (plist-get (plist-get props :days) :minimum) 1))
            (should (equal (plist-get (plist-get props :days) :maximum) 16))
            (should (equal (plist-get (plist-get props :unit) :enum) ["celsius" "fahrenheit"]))
            (should (equal (plist-get (plist-get props :include_hourly) :type) "boolean"))
            (should (equal (toolspec-it--keys (plist-get (plist-get props :options) :properties))
                           '(:detail :fields))))
          (should-not (toolspec-it--tool-message first "call_fc_1"))
          ;; The function ran once, with positional, normalised arguments.
          (should (equal calls '(("Paris" 3 "celsius" nil (:detail nil :fields ["wind" "rain"]) nil))))
          (should-not (toolspec-it--contains calls '(:json-false :null)))
          ;; The second request holds the call and its result.
          (let* ((messages (toolspec-it--messages second))
                 (call-msg (cl-position-if (lambda (m) (plist-get m :tool_calls)) messages))
                 (result-msg (cl-position-if (lambda (m) (equal (plist-get m :role) "tool")) messages)))
            (should call-msg)
            (should result-msg)
            (should (< call-msg result-msg))
            (should (equal (plist-get (aref (plist-get (nth call-msg messages) :tool_calls) 0) :id)
                           "call_fc_1")))
          (let ((tool-msg (toolspec-it--tool-message second "call_fc_1")))
            (should tool-msg)
            (should (equal (plist-get tool-msg :content) "Forecast for Paris, 3 days: sunny")))
          ;; The callback saw the tool result, then the final text.
          (let ((results (toolspec-it--tool-result-events (plist-get result :events))))
            (should (= (length results) 1))
            (should (equal (gptel-tool-name (nth 0 (car results))) "get_forecast"))
            (should (equal (nth 2 (car results)) "Forecast for Paris, 3 days: sunny")))
          (should (equal (plist-get result :text) "Sunny in Paris for three days."))
          (should (equal (car (last (plist-get result :events))) "Sunny in Paris for three days.")))))))

;;;; A renamed tool

(ert-deftest toolspec-it-renamed-tool-reaches-its-function ()
  "A tool whose name backends refuse is sent renamed and runs under its own.
`math.sum' is registered as a name every gptel backend takes; the
model calls that name, gptel finds the tool, and the function bound
to \"math.sum\" runs; a tool already named math_sum keeps its name
and its own function."
  (toolspec-it--with-registry
    (let* ((file (make-temp-file "toolspec-renamed" nil ".json"
                                 (concat "{\"tools\": ["
                                         "{\"name\": \"math.sum\", \"description\": \"Add.\", \"inputSchema\": {\"type\": \"object\","
                                         " \"properties\": {\"a\": {\"type\": \"number\", \"description\": \"A.\", \"exclusiveMinimum\": 0},"
                                         " \"b\": {\"type\": \"number\", \"description\": \"B.\"}}, \"required\": [\"a\", \"b\"]}},"
                                         "{\"name\": \"math_sum\", \"description\": \"Other.\", \"inputSchema\": {\"type\": \"object\", \"properties\": {}}}]}")))
           (calls nil)
           (tools (unwind-protect
                      (toolspec-import-file file :functions
                                            `(("math.sum" . ,(lambda (a b) (push (list 'dot a b) calls) (format "%s" (+ a b))))
                                              ("math_sum" . ,(lambda () (push 'underscore calls) "other"))))
                    (delete-file file)))
           (renamed (gptel-tool-name (car tools))))
      (should (string-match-p "\\`math_sum_[0-9a-f]\\{8\\}\\'" renamed))
      (should (equal (gptel-tool-name (cadr tools)) "math_sum"))
      (toolspec-server-with
          (server (list (toolspec-server-tool-calls-response
                         `(("call_1" ,renamed "{\"a\": 2, \"b\": 3}")))
                        (toolspec-server-text-response "5.")))
        (let* ((result (toolspec-it--chat server "Add 2 and 3." tools))
               (requests (toolspec-server-requests server))
               (sent (mapcar (lambda (tool) (plist-get (plist-get tool :function) :name))
                             (plist-get (car requests) :tools))))
          (should-not (toolspec-server-errors server))
          ;; The names sent are the registered ones.
          (should (equal sent (list renamed "math_sum")))
          ;; The call reached the function bound to the original name.
          (should (equal calls '((dot 2 3))))
          (should (equal (plist-get (toolspec-it--tool-message (nth 1 requests) "call_1") :content) "5"))
          (should (equal (plist-get result :text) "5.")))))))

;;;; 2. Invalid arguments from the model

(ert-deftest toolspec-it-invalid-arguments ()
  "Calls with invalid arguments are answered with toolspec's error, not run."
  (toolspec-it--with-registry
    (let* ((calls nil)
           (fn (lambda (&rest args) (push args calls) "ran"))
           (tools (toolspec-import-file (toolspec-it--fixture "forecast.json")
                                        :functions `(("get_forecast" . ,fn)))))
      (toolspec-server-with
          (server (list (toolspec-server-tool-calls-response
                         '(("call_bad_days" "get_forecast" "{\"city\":\"Paris\",\"days\":\"three\"}")
                           ("call_bad_unit" "get_forecast" "{\"city\":\"Paris\",\"days\":2,\"unit\":\"kelvin\"}")
                           ("call_no_city" "get_forecast" "{\"days\":2}")))
                        (toolspec-server-tool-calls-response
                         '(("call_good" "get_forecast" "{\"city\":\"Oslo\",\"days\":2}")))
                        (toolspec-server-text-response "Done.")))
        (let* ((result (toolspec-it--chat server "Weather?" tools))
               (requests (toolspec-server-requests server)))
          (should-not (toolspec-server-errors server))
          (should (= (length requests) 3))
          ;; Only the valid call ran.
          (should (equal calls '(("Oslo" 2 nil nil nil nil))))
          (pcase-dolist (`(,id ,pattern)
                         '(("call_bad_days" "days: .*integer")
                           ("call_bad_unit" "unit: .*celsius")
                           ("call_no_city" "city: .*required")))
            (let ((content (plist-get (toolspec-it--tool-message (nth 1 requests) id) :content)))
              (should (stringp content))
              (should (string-match-p "invalid arguments for tool get_forecast" content))
              (should (string-match-p pattern content))))
          ;; Each error names only its own argument.
          (should-not (string-match-p
                       "unit\\|city"
                       (plist-get (toolspec-it--tool-message (nth 1 requests) "call_bad_days") :content)))
          (should (equal (plist-get (toolspec-it--tool-message (nth 2 requests) "call_good") :content)
                         "ran"))
          (should (equal (plist-get result :text) "Done.")))))))

;;;; 3. A tool without a function

(ert-deftest toolspec-it-unbound-tool ()
  "A tool imported without a function tells the model it has none."
  (toolspec-it--with-registry
    (let ((tools (toolspec-import-file (toolspec-it--fixture "forecast.json"))))
      (toolspec-server-with
          (server (list (toolspec-server-tool-calls-response
                         '(("call_1" "get_forecast" "{\"city\":\"Paris\",\"days\":1}")))
                        (toolspec-server-text-response "I cannot check the weather.")))
        (let* ((result (toolspec-it--chat server "Weather?" tools))
               (content (plist-get (toolspec-it--tool-message
                                    (nth 1 (toolspec-server-requests server)) "call_1")
                                   :content)))
          (should-not (toolspec-server-errors server))
          (should (stringp content))
          (should (string-match-p "get_forecast has no implementation in this Emacs" content))
          (should (string-match-p "toolspec-function-alist" content))
          (should (equal (plist-get result :text) "I cannot check the weather.")))))))

;;;; 4. Re-import and unregister

(ert-deftest toolspec-it-reimport-and-unregister ()
  "Importing a file again replaces its tools; unregistering removes them."
  (toolspec-it--with-registry
    (let* ((file (toolspec-it--fixture "notes.json"))
           (old-calls 0)
           (new-calls 0)
           (other (gptel-make-tool :name "other_tool" :function #'ignore
                                   :description "Not from toolspec." :args nil
                                   :category "misc"))
           (first (toolspec-import-file
                   file :functions `(("add_note" . ,(lambda (_text _tags) (cl-incf old-calls) "old"))))))
      (should (= (length first) 2))
      (should (= (length (cdr (assoc "notes" gptel--known-tools))) 2))
      (setq gptel-tools (append first (list other)))
      (let ((second (toolspec-import-file
                     file :functions `(("add_note" . ,(lambda (_text _tags) (cl-incf new-calls) "new"))))))
        (should (= (length second) 2))
        (should (= (cl-count "notes" gptel--known-tools :key #'car :test #'equal) 1))
        (should (= (length (cdr (assoc "notes" gptel--known-tools))) 2))
        (let ((add (gptel-get-tool '("notes" "add_note"))))
          (should (memq add second))
          (should-not (memq add first))
          (should (equal (funcall (gptel-tool-function add) "buy milk" nil) "new")))
        (should (= new-calls 1))
        (should (= old-calls 0))
        ;; The replaced structs are no longer active, their replacements
        ;; are; other tools are kept.
        (should-not (cl-intersection gptel-tools first))
        (should (cl-every (lambda (tl) (memq tl gptel-tools)) second))
        (should (memq other gptel-tools))
        ;; Unregistering the file removes its tools everywhere.
        (setq gptel-tools (append second (list other)))
        (should (= (toolspec-unregister file) 2))
        (should-not (assoc "notes" gptel--known-tools))
        (should (equal gptel-tools (list other)))
        (should (gptel-get-tool '("misc" "other_tool")))
        (should (= (toolspec-unregister file) 0))
        ;; By tool name.
        (toolspec-import-file file)
        (should (= (toolspec-unregister "list_notes") 1))
        (should (equal (mapcar #'car (cdr (assoc "notes" gptel--known-tools))) '("add_note")))
        (should (= (toolspec-unregister file) 1))
        (should-not (assoc "notes" gptel--known-tools))))))

;; Registering thousands of tools at once, or registering a file again,
;; is done in one pass over gptel's registry (see
;; `toolspec-gptel--add'): what that pass leaves must be what
;; `gptel-make-tool', one tool at a time, would leave.
(ert-deftest toolspec-it-register-leaves-what-gptel-make-tool-would ()
  "Tools registered at once are in gptel's registry as `gptel-make-tool' puts them one by one."
  (let* ((plists (mapcar (lambda (n) (list :name n :description (concat "Tool " n ".") :args nil))
                         '("b" "c" "d" "c")))
         (before (lambda ()
                   (dolist (spec '(("a" . "cat") ("b" . "cat") ("z" . "misc")))
                     (gptel-make-tool :name (car spec) :function #'ignore :description "Before."
                                      :args nil :category (cdr spec)))))
         (shape (lambda ()
                  (mapcar (lambda (cat) (cons (car cat) (mapcar #'car (cdr cat)))) gptel--known-tools)))
         expected)
    (toolspec-it--with-registry
      (funcall before)
      (dolist (p plists)
        (apply #'gptel-make-tool :function #'ignore :category "cat" p))
      (apply #'gptel-make-tool :function #'ignore :category "new" (car plists))
      (setq expected (funcall shape)))
    ;; The names in place, in order, in each category, in order.
    (should (equal expected '(("new" "b") ("misc" "z") ("cat" "d" "c" "b" "a"))))
    (toolspec-it--with-registry
      (funcall before)
      (let ((made (toolspec-register plists :category "cat")))
        (should (= (length made) 4))
        (toolspec-register (list (car plists)) :category "new")
        (should (equal (funcall shape) expected))
        ;; Each name holds the last tool registered under it.
        (should (eq (gptel-get-tool '("cat" "b")) (nth 0 made)))
        (should (eq (gptel-get-tool '("cat" "c")) (nth 3 made)))
        (should (eq (gptel-get-tool '("cat" "d")) (nth 2 made)))
        ;; No tools: no category is made.
        (toolspec-register nil :category "empty")
        (should-not (assoc "empty" gptel--known-tools))))))

;; Two tools of a file named alike: gptel keeps the last, and the
;; providers refuse such a list.  The import says so.
(ert-deftest toolspec-it-import-file-tells-of-tools-named-alike ()
  "A file whose tools share a name is imported with a warning naming both."
  (let ((file (make-temp-file "toolspec-twice" nil ".json"
                              (concat "{\"tools\": ["
                                      "{\"name\": \"a\", \"description\": \"First.\", \"inputSchema\": {\"type\": \"object\"}},"
                                      "{\"name\": \"b\", \"description\": \"B.\", \"inputSchema\": {\"type\": \"object\"}},"
                                      "{\"name\": \"a\", \"description\": \"Second.\", \"inputSchema\": {\"type\": \"object\"}}]}")))
        (start (with-current-buffer (messages-buffer) (point-max))))
    (unwind-protect
        (toolspec-it--with-registry
          (let ((made (toolspec-import-file file :category "twice")))
            (should (equal (mapcar #'gptel-tool-name made) '("a" "b" "a")))
            (should (equal (gptel-tool-description (gptel-get-tool '("twice" "a"))) "Second."))
            (should (equal (mapcar #'cadr toolspec-last-import-warnings) '("tools[2]")))
            (should (string-match-p
                     (regexp-quote (format "toolspec: %s: warning: tools[2]: the tool name \"a\" is also the name of the tool at tools[0]"
                                           (abbreviate-file-name file)))
                     (with-current-buffer (messages-buffer) (buffer-substring start (point-max)))))))
      (delete-file file))))

(ert-deftest toolspec-it-register-many-again ()
  "A source of many tools registered again replaces them all; its active tools stay active."
  (toolspec-it--with-registry
    (let* ((plists (cl-loop for i below 400
                            collect (list :name (format "tool_%03d" i) :description "Many." :args nil)))
           (other (gptel-make-tool :name "tool_000" :function #'ignore :description "Other."
                                   :args nil :category "misc"))
           (first (toolspec-register plists :source "many")))
      (setq gptel-tools (append (list other) (cl-subseq first 10 20)))
      (let ((second (toolspec-register plists :source "many")))
        (should (= (length (cdr (assoc "many" gptel--known-tools))) 400))
        (should (cl-every (lambda (tl) (eq (gptel-get-tool (list "many" (gptel-tool-name tl))) tl)) second))
        ;; The ten that were active are, as their new tools, after the others.
        (should (equal gptel-tools (cons other (cl-subseq second 10 20))))
        (should (eq (gptel-get-tool '("misc" "tool_000")) other))
        (should (= (toolspec-unregister "many") 400))
        (should-not (assoc "many" gptel--known-tools))
        (should (equal gptel-tools (list other)))))))

(ert-deftest toolspec-it-register-leaves-the-callers-plists ()
  "`gptel-make-tool' changes the args it is given; `toolspec-register' gives it copies.
`toolspec-import-file', whose plists are its own, registers the same tools."
  (toolspec-it--with-registry
    (let* ((args (list (list :name "n" :type 'integer :description "N."
                             :items nil :properties nil)
                       (list :name "o" :type 'object :description "O."
                             :properties (list :k (list :type 'string :description "K.")))))
           (plist (list :name "copied" :description "Copied." :args args))
           (before (copy-tree plist))
           (tool (car (toolspec-register (list plist) :category "copies"))))
      ;; gptel made strings of the types it was given...
      (should (equal (plist-get (car (gptel-tool-args tool)) :type) "integer"))
      ;; ...in its own copy: the caller's plist, nested ones included, is as it was.
      (should (equal plist before))
      (should (eq (plist-get (car args) :type) 'integer))
      (should (eq (plist-get (plist-get (plist-get (cadr args) :properties) :k) :type) 'string))))
  (let ((file (make-temp-file "toolspec-fresh" nil ".json"
                              (concat "[{\"name\": \"f\", \"description\": \"F.\", \"parameters\": "
                                      "{\"type\": \"object\", \"properties\": {\"x\": "
                                      "{\"type\": \"object\", \"description\": \"X.\", \"properties\": "
                                      "{\"y\": {\"type\": \"integer\", \"description\": \"Y.\"}}}}}}]"))))
    (unwind-protect
        (toolspec-it--with-registry
          (let* ((read (car (toolspec-read-file file)))
                 (tool (car (toolspec-import-file file))))
            (should (equal (gptel-tool-name tool) "f"))
            (should (equal (gptel-tool-args tool)
                           (gptel-tool-args (car (toolspec-register (list read) :category "again")))))
            (should (equal (plist-get (plist-get (plist-get (car (gptel-tool-args tool)) :properties) :y) :type)
                           "integer"))))
      (delete-file file))))

(ert-deftest toolspec-it-checker-compiled-at-first-call ()
  "Registering compiles no argument checker: the first call does.
A tool whose schema cannot be compiled refuses its calls and says why."
  (toolspec-it--with-registry
    (let* ((toolspec-gptel--checkers (make-hash-table :test 'eq :weakness 'key))
           (calls 0)
           (fn (lambda (&rest _) (cl-incf calls) "ran"))
           (arg (lambda (&rest more) (append (list :name "x" :type 'string :description "X.") more)))
           (tools (toolspec-register
                   (list (list :name "good" :description "Good." :args (list (funcall arg)))
                         (list :name "bad" :description "Bad." :args (list (funcall arg :pattern "("))))
                   :functions (lambda (_) fn)))
           (good (gptel-tool-function (car tools)))
           (bad (gptel-tool-function (cadr tools))))
      (should (= (hash-table-count toolspec-gptel--checkers) 0))
      (should (equal (funcall good "ok") "ran"))
      (should (= (hash-table-count toolspec-gptel--checkers) 1))
      (should (string-match-p "invalid arguments for tool good" (funcall good 3)))
      (when (get-buffer "*Warnings*") (kill-buffer "*Warnings*"))
      (let ((answer (funcall bad "ok")))
        (should (string-match-p "tool bad cannot check its arguments, so it was not run" answer))
        (should (string-match-p "not a valid JSON Schema" answer)))
      (should (string-match-p "so it was not run" (funcall bad "again")))
      (should (= calls 1))
      ;; One warning, not one per call.
      (with-current-buffer "*Warnings*"
        (should (= (how-many "Tool bad cannot check its arguments" (point-min) (point-max)) 1)))
      ;; The spec check finds it before: such a file is not imported.
      (should (equal (mapcar #'cadr (toolspec-validate (list :name "bad" :description "Bad."
                                                              :args (list (funcall arg :pattern "(")))))
                     '("args[0].pattern"))))))

(ert-deftest toolspec-it-same-file-name-in-two-directories ()
  "Unregistering one file leaves the tools another file of the same name registered since."
  (toolspec-it--with-registry
    (let* ((dir-a (make-temp-file "toolspec-a" t))
           (dir-b (make-temp-file "toolspec-b" t))
           (a (expand-file-name "tools.json" dir-a))
           (b (expand-file-name "tools.json" dir-b)))
      (unwind-protect
          (progn
            (copy-file (toolspec-it--fixture "notes.json") a)
            (copy-file (toolspec-it--fixture "notes.json") b)
            (toolspec-import-file a)
            (let ((from-b (toolspec-import-file b)))
              (should (= (toolspec-unregister a) 2))
              ;; b's tools, same category and names, are still registered.
              (dolist (tool from-b)
                (should (eq (gptel-get-tool (list "tools" (gptel-tool-name tool))) tool)))
              (should (= (toolspec-unregister b) 2))
              (should-not (assoc "tools" gptel--known-tools))))
        (delete-directory dir-a t)
        (delete-directory dir-b t)))))

(ert-deftest toolspec-it-load-tool-directories ()
  "Every spec file of `toolspec-tool-directories' is imported; a bad one is skipped with a warning."
  (toolspec-it--with-registry
    (let ((dir (make-temp-file "toolspec-dir" t)))
      (unwind-protect
          (let ((toolspec-tool-directories (list dir "/nonexistent/toolspec-dir")))
            (copy-file (toolspec-it--fixture "notes.json") (expand-file-name "notes.json" dir))
            (copy-file (toolspec-it--fixture "forecast.json") (expand-file-name "forecast.json" dir))
            (with-temp-file (expand-file-name "broken.json" dir) (insert "{\"name\": "))
            (when (get-buffer "*Warnings*") (kill-buffer "*Warnings*"))
            (let ((expected (+ (length (toolspec-read-file (toolspec-it--fixture "notes.json")))
                               (length (toolspec-read-file (toolspec-it--fixture "forecast.json"))))))
              (should (= (toolspec-load-tool-directories) expected)))
            (should (assoc "notes" gptel--known-tools))
            (should (assoc "forecast" gptel--known-tools))
            (should-not (assoc "broken" gptel--known-tools))
            (with-current-buffer "*Warnings*"
              (should (string-match-p "Skipped .*broken\\.json" (buffer-string)))))
        (delete-directory dir t)))))

;;;; 5. Checking arguments by hand

(defun toolspec-it--gptel-parse (json)
  "Parse JSON as gptel does with tool call arguments."
  (json-parse-string json :object-type 'plist :null-object nil :false-object :json-false))

(ert-deftest toolspec-it-validate-arguments ()
  "`toolspec-validate-arguments' takes JSON text or gptel's plists."
  (toolspec-it--with-registry
    (let ((tool (car (toolspec-read-file (toolspec-it--fixture "planner.json"))))
          (bad "{\"destination\":\"Rome\",\"opts\":{\"days\":[3,\"x\",0],\"flexible\":false,\"pace\":\"run\"}}"))
      ;; Valid, as text and as gptel's plist (nested object, array, :json-false).
      (should-not (toolspec-validate-arguments
                   tool "{\"destination\":\"Rome\",\"opts\":{\"days\":[3,4],\"flexible\":false,\"budget\":1.5}}"))
      (should-not (toolspec-validate-arguments
                   tool '(:destination "Rome" :opts (:days [3 4] :flexible :json-false :budget 1.5))))
      ;; Invalid, as text.
      (let ((problems (toolspec-validate-arguments tool bad)))
        (should (equal (mapcar #'car problems) '(error error error)))
        (should (equal (mapcar #'cadr problems) '("opts.days[1]" "opts.days[2]" "opts.pace")))
        (should (string-match-p "integer" (nth 2 (nth 0 problems))))
        (should (string-match-p "minimum" (nth 2 (nth 1 problems))))
        (should (string-match-p "slow" (nth 2 (nth 2 problems))))
        ;; The same from gptel's parse of the text.
        (should (equal (toolspec-validate-arguments tool (toolspec-it--gptel-parse bad)) problems)))
      ;; Invalid plists.
      (should (equal (mapcar #'cadr (toolspec-validate-arguments
                                     tool '(:destination 5 :opts (:days [3 "4"] :flexible :json-false :budget -1))))
                     '("destination" "opts.days[1]" "opts.budget")))
      (let ((problems (toolspec-validate-arguments tool '(:opts (:flexible t)))))
        (should (equal (mapcar #'cadr problems) '("destination" "opts.days")))
        (should (cl-every (lambda (p) (string-match-p "required" (nth 2 p))) problems)))
      (should (equal (mapcar #'cadr (toolspec-validate-arguments tool nil)) '("destination" "opts")))
      ;; A registered tool, by struct and by name (gptel turned its types into strings).
      (let ((registered (car (toolspec-register (list tool) :category "planner"))))
        (should-not (toolspec-validate-arguments registered '(:destination "Rome" :opts (:days [1]))))
        (should (equal (mapcar #'cadr (toolspec-validate-arguments "plan_trip" bad))
                       '("opts.days[1]" "opts.days[2]" "opts.pace")))))))

;;;; 6. Hostile files

(defconst toolspec-it--forbidden
  '(shell-command shell-command-to-string async-shell-command
                  delete-file delete-directory call-process make-process)
  "Functions a tool file must never get called.")

(defvar native-comp-enable-subr-trampolines)
(defvar comp-enable-subr-trampolines)

(defun toolspec-it--advise-forbidden (advice add)
  "Add (ADD non-nil) or remove ADVICE, an alist (FUNCTION . ADVICE-FUNCTION).
No native trampolines are made for primitives: making one would call
the very functions being disabled.  The advice thus sees every call
made from Lisp and byte code, which is how toolspec and gptel run in
these tests.  (Emacs 28 names the variable `comp-enable-subr-trampolines'.)"
  (let ((native-comp-enable-subr-trampolines nil)
        (comp-enable-subr-trampolines nil))
    (pcase-dolist (`(,f . ,a) advice)
      (if add (advice-add f :around a) (advice-remove f a)))))

(defmacro toolspec-it--watching-forbidden (var &rest body)
  "Run BODY with the `toolspec-it--forbidden' functions disabled.
Calls to them are not run but recorded in VAR, a list of (FUNCTION
. ARGS), newest first.  BODY runs in a fresh temporary directory,
deleted afterwards."
  (declare (indent 1) (debug (symbolp body)))
  (let ((advice (make-symbol "advice"))
        (dir (make-symbol "dir")))
    `(let* ((,var nil)
            (,dir (make-temp-file "toolspec-hostile" t))
            (default-directory (file-name-as-directory ,dir))
            (,advice (mapcar (lambda (f)
                               (cons f (lambda (_orig &rest args) (push (cons f args) ,var) nil)))
                             toolspec-it--forbidden)))
       (unwind-protect
           (progn
             (toolspec-it--advise-forbidden ,advice t)
             ,@body)
         (toolspec-it--advise-forbidden ,advice nil)
         (delete-directory ,dir t)))))

(ert-deftest toolspec-it-hostile-file ()
  "Tools named after dangerous functions, with elisp in strings, bind nothing."
  (toolspec-it--with-registry
    (toolspec-it--watching-forbidden forbidden
      (let* ((file (toolspec-it--fixture "hostile.json"))
             (json (with-temp-buffer
                     (insert-file-contents file)
                     (json-parse-buffer :object-type 'plist)))
             (plists (toolspec-read-file file))
             (tools (toolspec-import-file file)))
        (should (= (length tools) 2))
        ;; Strings and names arrive exactly as written, nothing injected.
        (let ((spec (aref (plist-get json :tools) 0))
              (plist (car plists)))
          (should (equal (plist-get plist :name) "shell-command"))
          (should (equal (plist-get plist :description) (plist-get spec :description)))
          (should-not (plist-member plist :function))
          (should-not (plist-member plist :async))
          (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get plist :args))
                         '("command" "\" :function shell-command :x \"")))
          (should (equal (toolspec-it--keys (plist-get (nth 1 (plist-get plist :args)) :properties))
                         (list (intern ":) :function delete-file (")))))
        (should (equal (mapcar #'gptel-tool-name tools) '("shell-command" "delete-file")))
        (dolist (tool tools)
          (should-not (memq (gptel-tool-function tool) toolspec-it--forbidden))
          (should-not (gptel-tool-async tool))
          (should (string-match-p "has no implementation in this Emacs"
                                  (funcall (gptel-tool-function tool)
                                           "toolspec-hostile-sentinel" nil))))
        ;; And through gptel, as the model would call them.
        (toolspec-server-with
            (server (list (toolspec-server-tool-calls-response
                           '(("call_sh" "shell-command" "{\"command\":\"touch toolspec-hostile-sentinel\"}")
                             ("call_rm" "delete-file" "{\"filename\":\"toolspec-hostile-sentinel\"}")))
                          (toolspec-server-text-response "Nothing happened.")))
          (let* ((result (toolspec-it--chat server "Do it." tools))
                 (second (nth 1 (toolspec-server-requests server))))
            (should (equal (plist-get result :text) "Nothing happened."))
            (dolist (id '("call_sh" "call_rm"))
              (should (string-match-p "has no implementation in this Emacs"
                                      (plist-get (toolspec-it--tool-message second id) :content))))))
        (should-not forbidden)
        (should-not (file-exists-p "toolspec-hostile-sentinel"))))))

(defun toolspec-it--call-as-gptel (tool &rest args)
  "Call TOOL's function with ARGS as gptel does; return its result.
An async tool's callback result is returned if it was called at once."
  (if (gptel-tool-async tool)
      (let ((result nil))
        (apply (gptel-tool-function tool) (lambda (r) (setq result r)) args)
        result)
    (apply (gptel-tool-function tool) args)))

(ert-deftest toolspec-it-hostile-function-field-binds-nothing ()
  "A \"function\": \"shell-command\" field in JSON never binds that function.
Importing the file may fail or give unbound tools; either way no
forbidden function runs."
  (toolspec-it--with-registry
    (toolspec-it--watching-forbidden forbidden
      (let* ((file (toolspec-it--fixture "hostile-keys.json"))
             (tools (condition-case nil
                        (toolspec-import-file file)
                      (toolspec-error :signalled))))
        (if (eq tools :signalled)
            (should-not (assoc "hostile-keys" gptel--known-tools))
          (should (= (length tools) 2))
          (dolist (tool tools)
            (should-not (memq (gptel-tool-function tool) toolspec-it--forbidden))
            (let ((result (toolspec-it--call-as-gptel tool "toolspec-hostile-sentinel")))
              (should (and (stringp result)
                           (string-match-p "has no implementation in this Emacs" result))))))
        (should-not forbidden)
        (should-not (file-exists-p "toolspec-hostile-sentinel"))))))

(ert-deftest toolspec-it-json-emacs-keys-ignored ()
  "JSON fields named like gptel's slots (function, async, confirm) are ignored.
Known bug: the readers keep every unknown tool-level JSON field as a
plist key, so \"function\": \"shell-command\" becomes `:function'
\"shell-command\" (`toolspec-check' then rejects the file), and
\"async\": true / \"confirm\": false become `:async' t / `:confirm'
`:json-false', which `toolspec-gptel--bind' obeys: a bound synchronous
function is called with a callback first, an unbound tool never
answers, and gptel asks for confirmation because `:json-false' is
non-nil."
  (toolspec-it--with-registry
    (let* ((calls nil)
           (tools (toolspec-import-file (toolspec-it--fixture "json-async.json")
                                        :functions `(("get_time" . ,(lambda (zone) (push zone calls) "12:00"))))))
      (should-not (gptel-tool-async (car tools)))
      (should-not (gptel-tool-confirm (car tools)))
      (should (equal (funcall (gptel-tool-function (car tools)) "Europe/Paris") "12:00"))
      (should (equal calls '("Europe/Paris"))))
    (let ((tools (toolspec-import-file (toolspec-it--fixture "hostile-keys.json"))))
      (should (= (length tools) 2))
      (dolist (tool tools)
        (should-not (gptel-tool-async tool))
        (should (string-match-p "has no implementation in this Emacs"
                                (funcall (gptel-tool-function tool) "x")))))))

;;;; Null and false arguments

(ert-deftest toolspec-it-null-arguments ()
  "JSON null in a nullable argument is accepted and reaches the function as nil.
Known bug: gptel parses tool call arguments with null as nil, and
`toolspec-gptel--wrap' (via `toolspec--args-object') treats a nil
top-level value as a missing argument and serialises a nested nil as
{}: a required nullable argument sent as null is rejected as
missing, a nested null as \"{} is not of type string\".  The same
happens in `toolspec-validate-arguments' with gptel's plists.  OpenAI
strict mode makes every optional argument required and nullable, so
models send null often."
  (toolspec-it--with-registry
    (let* ((calls nil)
           (fn (lambda (text due repeat urgent)
                 (push (list text due repeat urgent) calls)
                 "reminder set"))
           (tools (toolspec-import-file (toolspec-it--fixture "reminder.json")
                                        :functions `(("set_reminder" . ,fn))))
           (args "{\"text\":\"Call mom\",\"due\":null,\"repeat\":{\"every\":\"week\",\"until\":null},\"urgent\":false}"))
      (should-not (toolspec-validate-arguments (car tools) args))
      (should-not (toolspec-validate-arguments (car tools) (toolspec-it--gptel-parse args)))
      (toolspec-server-with
          (server (list (toolspec-server-tool-calls-response `(("call_r" "set_reminder" ,args)))
                        (toolspec-server-text-response "Reminder set.")))
        (let ((result (toolspec-it--chat server "Remind me." tools)))
          (should (equal (plist-get result :text) "Reminder set."))
          (should (equal (plist-get (toolspec-it--tool-message
                                     (nth 1 (toolspec-server-requests server)) "call_r")
                                    :content)
                         "reminder set"))
          (should (equal calls '(("Call mom" nil (:every "week" :until nil) nil)))))))))

;;;; 7. llm

(defmacro toolspec-it--with-llm (&rest body)
  "Run BODY with the llm stand-in of test/fixtures loadable, unloaded after."
  (declare (indent 0) (debug t))
  `(let ((load-path (cons (expand-file-name "fixtures" toolspec-it--directory) load-path))
         (had-llm (featurep 'llm)))
     (unwind-protect
         (progn ,@body)
       (when (and (not had-llm) (featurep 'llm))
         (unload-feature 'llm t)))))

(defun toolspec-it--llm-normalize (value)
  "VALUE with JSON false turned into nil, as llm does before calling tools."
  (cond ((memq value '(:json-false :false)) nil)
        ((consp value) (cons (toolspec-it--llm-normalize (car value))
                             (toolspec-it--llm-normalize (cdr value))))
        ((vectorp value) (vconcat (mapcar #'toolspec-it--llm-normalize value)))
        (t value)))

(defun toolspec-it--llm-call (tool json &optional callback)
  "Call llm-tool TOOL with JSON arguments as llm does; return its result.
This follows llm-provider-utils (llm 0.31.1): the arguments are
parsed with objects as alists (false :false, null :null), false is
turned into nil, then the function gets one value per arg of the
tool, in order (nil for a missing one); an async tool gets CALLBACK
first."
  (let* ((arguments (toolspec-it--llm-normalize (json-parse-string json :object-type 'alist)))
         (call-args (mapcar (lambda (arg) (cdr (assq (intern (plist-get arg :name)) arguments)))
                            (llm-tool-args tool))))
    (if (llm-tool-async tool)
        (apply (llm-tool-function tool) callback call-args)
      (apply (llm-tool-function tool) call-args))))

(ert-deftest toolspec-it-llm-tools ()
  "`toolspec-make-llm-tools' makes llm tools that check and normalise arguments."
  (toolspec-it--with-llm
    ;; The stand-in enforces llm's rule on :type.
    (should-error (progn (require 'llm)
                         (llm-make-tool :name "t" :description "d"
                                        :args '((:name "a" :type "string" :description "d"))
                                        :function #'ignore))
                  :type 'wrong-type-argument)
    ;; Every example file makes tools llm accepts.
    (dolist (example '("openai-chat.json" "anthropic.json" "mcp-tools-list.json" "gemini.json"
                       "bedrock.json" "openai-responses.json" "json-schema.json"))
      (let* ((plists (toolspec-read-file (toolspec-it--example example)))
             (tools (toolspec-make-llm-tools plists)))
        (should (= (length tools) (length plists)))
        (cl-loop for tool in tools for plist in plists
                 do (should (llm-tool-p tool))
                 (should (equal (llm-tool-name tool) (plist-get plist :name)))
                 (should (equal (llm-tool-args tool) (plist-get plist :args)))
                 ;; Unbound: called with no values, it answers the model
                 ;; about the first problem it meets.
                 (should (string-match-p
                          (if (cl-some (lambda (a) (not (plist-get a :optional)))
                                       (plist-get plist :args))
                              "invalid arguments.*required argument missing"
                            "has no implementation in this Emacs")
                          (apply (llm-tool-function tool)
                                 (make-list (length (plist-get plist :args)) nil)))))))
    ;; A name providers refuse: a valid one, the function bound to the original.
    (let* ((ran nil)
           (tool (car (toolspec-make-llm-tools
                       (toolspec-parse-json "{\"name\": \"math.sum\", \"description\": \"Add.\", \"inputSchema\": {\"type\": \"object\", \"properties\": {}}}")
                       :functions `(("math.sum" . ,(lambda () (setq ran t) "added")))))))
      (should (equal (llm-tool-name tool) "math_sum"))
      (should (equal (funcall (llm-tool-function tool)) "added"))
      (should ran))
    ;; A bound tool: positional, normalised arguments; invalid ones refused.
    (let* ((calls nil)
           (tool (car (toolspec-make-llm-tools
                       (toolspec-read-file (toolspec-it--fixture "forecast.json"))
                       :functions `(("get_forecast" . ,(lambda (&rest args) (push args calls) "sunny")))))))
      (should (llm-tool-p tool))
      (should-not (llm-tool-async tool))
      (should (equal (toolspec-it--llm-call
                      tool "{\"unit\":\"celsius\",\"include_hourly\":false,\"days\":3,\"city\":\"Paris\",\"note\":null}")
                     "sunny"))
      (should (equal calls '(("Paris" 3 "celsius" nil nil nil))))
      (let ((err (toolspec-it--llm-call tool "{\"city\":\"Paris\",\"days\":\"three\",\"unit\":\"kelvin\"}")))
        (should (string-match-p "invalid arguments for tool get_forecast" err))
        (should (string-match-p "days: " err))
        (should (string-match-p "unit: " err)))
      (should (= (length calls) 1))
      ;; toolspec reads the llm struct back.
      (let ((json (json-parse-string (toolspec-to-json tool 'openai) :object-type 'plist)))
        (should (equal (plist-get (plist-get json :function) :name) "get_forecast"))
        (should (equal (plist-get (plist-get (plist-get json :function) :parameters) :required)
                       ["city" "days"]))))
    ;; An async binding: the callback comes first.
    (let* ((tool (car (toolspec-make-llm-tools
                       (toolspec-read-file (toolspec-it--fixture "forecast.json"))
                       :functions `(("get_forecast"
                                     :function ,(lambda (cb city days &rest _)
                                                  (funcall cb (format "%s/%s" city days)))
                                     :async t)))))
           (got nil))
      (should (llm-tool-async tool))
      (toolspec-it--llm-call tool "{\"city\":\"Oslo\",\"days\":2}" (lambda (r) (setq got r)))
      (should (equal got "Oslo/2"))
      (toolspec-it--llm-call tool "{\"city\":\"Oslo\"}" (lambda (r) (setq got r)))
      (should (string-match-p "days: .*required" got)))))

(ert-deftest toolspec-it-llm-false-and-nested-values ()
  "The llm forms of false (nil) and nested objects (alists) pass the check.
Known bug: llm turns JSON false into nil and passes nested objects as
alists with false as nil before calling the tool's function.
`toolspec--args-object' drops a nil top-level value (a required
boolean sent as false is reported missing) and serialises a nil
inside an alist as {} (\"options.detail: {} is not of type
boolean\")."
  (toolspec-it--with-llm
    (let* ((calls nil)
           (tool (car (toolspec-make-llm-tools
                       (toolspec-read-file (toolspec-it--fixture "reminder.json"))
                       :functions `(("set_reminder" . ,(lambda (&rest args) (push args calls) "ok"))))))
           (forecast (car (toolspec-make-llm-tools
                           (toolspec-read-file (toolspec-it--fixture "forecast.json"))
                           :functions `(("get_forecast" . ,(lambda (&rest args) (push args calls) "ok")))))))
      (should (equal (toolspec-it--llm-call
                      forecast "{\"city\":\"Paris\",\"days\":3,\"options\":{\"detail\":false,\"fields\":[\"wind\"]}}")
                     "ok"))
      (should (equal (toolspec-it--llm-call
                      tool "{\"text\":\"x\",\"due\":\"2030-01-01T00:00:00Z\",\"repeat\":{\"every\":\"day\",\"until\":\"2030-02-01\"},\"urgent\":false}")
                     "ok"))
      (should (= (length calls) 2)))))

(provide 'toolspec-integration-test)
;;; toolspec-integration-test.el ends here
