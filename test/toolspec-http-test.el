;;; toolspec-http-test.el --- OpenAPI tools over HTTP, end to end -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests of toolspec-http.el: OpenAPI tools (tool plists with an
;; `:executor' of type "openapi", built here as the importer makes
;; them) are registered with gptel and called, directly and through
;; `gptel-request'.  Two kinds of loopback servers stand in for the
;; world: the scripted OpenAI-compatible model of test/toolspec-server.el
;; and scripted HTTP APIs (test/toolspec-http-server.el) that record
;; every request.  Both listen on 127.0.0.1 only and are stopped by
;; each test.  Credentials come from a temporary authinfo file.
;;
;; Run with the other suites by scripts/run-tests.sh, or alone:
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "target/debug/libtoolspec.so")' \
;;     -l test/toolspec-http-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'auth-source)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'toolspec-http)
(require 'toolspec-http-server)
(require 'toolspec-server)
(require 'toolspec-test-helpers)
(require 'gptel-openai)
(require 'gptel)

(defvar url-proxy-services)
(defvar url-debug)
(defvar gptel--known-backends)

(defconst toolspec-ht--secret
  (format "tsk-%s" (md5 (format "%s %s %s" (random) (float-time) (emacs-pid))))
  "The secret planted in the test authinfo file.
Made at run time, so that no source text holds it.")

;;;; Helpers

(defmacro toolspec-ht--with-registry (&rest body)
  "Run BODY with empty gptel and toolspec tool registries."
  (declare (indent 0) (debug t))
  `(let ((gptel--known-tools nil)
         (gptel-tools nil)
         (toolspec-function-alist nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal)))
     ,@body))

(defun toolspec-ht--chat (server prompt tools)
  "Send PROMPT with TOOLS through `gptel-request' to SERVER; wait for the end.
SERVER is a `toolspec-server' (the scripted model).  Tool calls run
without confirmation.  Return (:text FINAL :events RESPONSES)."
  (let* ((gptel--known-backends nil)
         (backend (gptel-make-openai "toolspec-http-loopback"
                    :host (format "127.0.0.1:%d" (toolspec-server-port server))
                    :protocol "http" :endpoint "/v1/chat/completions"
                    :stream nil :key "test" :models '(test-model)))
         (gptel-backend backend)
         (gptel-model 'test-model)
         ;; url.el on Emacs 28 refuses gptel's requests holding text that
         ;; is not ASCII ("Multibyte text in HTTP request"): curl there.
         (gptel-use-curl (and (< emacs-major-version 29) (executable-find "curl") t))
         (gptel-stream nil)
         (gptel-use-tools t)
         (gptel-tools tools)
         (gptel-confirm-tool-calls nil)
         (gptel-use-context nil)
         (gptel-log-level nil)
         (events nil) (done nil) (final nil))
    (with-temp-buffer
      (gptel-request prompt
        :system "You are a test."
        :callback (lambda (response _info)
                    (push response events)
                    (when (or (stringp response) (null response) (eq response 'abort))
                      (setq done t final response))))
      (let ((deadline (+ (float-time) 20)))
        (while (and (not done) (< (float-time) deadline))
          (accept-process-output nil 0.02)))
      (unless done
        (ert-fail (list "No final answer from gptel" :events (reverse events)
                        :server-errors (toolspec-server-errors server)))))
    (list :text final :events (nreverse events))))

(defun toolspec-ht--model-calls (api tools prompt calls)
  "Have a scripted model make CALLS of TOOLS after PROMPT; return what API got.
CALLS are (ID NAME ARGUMENTS-JSON), made in one turn; the model says
\"Done.\" once their results are back.  API is a
`toolspec-http-server', which must receive one request per call."
  (toolspec-server-with
      (chat (list (toolspec-server-tool-calls-response calls)
                  (toolspec-server-text-response "Done.")))
    (let ((result (toolspec-ht--chat chat prompt tools))
          (received (toolspec-http-server-requests api)))
      (should-not (toolspec-server-errors chat))
      (should (equal (plist-get result :text) "Done."))
      (should (= (length received) (length calls)))
      received)))

(defun toolspec-ht--request-at (received path)
  "The request among RECEIVED (by the API server) whose path is PATH."
  (cl-find path received :key (lambda (r) (plist-get r :path)) :test #'equal))

(defun toolspec-ht--tool-message (request id)
  "The message with role \"tool\" answering tool call ID in REQUEST."
  (cl-find-if (lambda (m) (and (equal (plist-get m :role) "tool")
                               (equal (plist-get m :tool_call_id) id)))
              (append (plist-get request :messages) nil)))

(defun toolspec-ht--exec (&rest overrides)
  "An OpenAPI executor plist as the importer prints it, with OVERRIDES."
  (let ((exec (list :type "openapi" :server :null :method "GET" :path "/"
                    :parameters [] :body :null :auth :null :filter :null
                    :outputModules [] :bootstrap :json-false :bootstrapValues nil
                    :lookup [] :title "Pets API" :operationId "op")))
    (cl-loop for (k v) on overrides by #'cddr
             do (setq exec (plist-put exec k v)))
    exec))

(defun toolspec-ht--tool (name args &rest exec)
  "A tool plist NAME with ARGS and an OpenAPI executor made of EXEC."
  (list :name name
        :description (format "The %s operation." name)
        :args args
        :executor (apply #'toolspec-ht--exec :operationId name exec)))

(defun toolspec-ht--arg (name type &optional optional &rest more)
  "An arg plist NAME of TYPE, OPTIONAL or not, with MORE keys."
  (append (list :name name :type type :description (format "The %s." name))
          more
          (and optional (list :optional t))))

(defmacro toolspec-ht--with-env (&rest body)
  "Run BODY with empty registries, no proxy and a temporary authinfo.
The authinfo file holds nothing until `toolspec-ht--authinfo' writes it."
  (declare (indent 0) (debug t))
  `(toolspec-test-helpers-with-http-env
     (toolspec-ht--with-registry ,@body)))

(defun toolspec-ht--authinfo (file &rest lines)
  "Write LINES to the authinfo FILE."
  (with-temp-file file (insert (string-join lines "\n") "\n"))
  (auth-source-forget-all-cached))

(defun toolspec-ht--register (tools &rest options)
  "Register TOOLS (plists) with gptel under OPTIONS; return the gptel tools.
The credentials of the loopback host are approved (what the import
preview asks): `toolspec-http-credential-approval' tests the
approval itself."
  (apply #'toolspec-register tools :source "pets-api" (append options '(:credentials ("127.0.0.1")))))

(defun toolspec-ht--header (request name)
  "Header NAME (lower case) of REQUEST as the API server recorded it."
  (cdr (assoc name (plist-get request :headers))))

(defun toolspec-ht--paths (server)
  "The request targets SERVER received, oldest first."
  (mapcar (lambda (r) (plist-get r :target)) (toolspec-http-server-requests server)))

(defun toolspec-ht--pet-tool (api &rest exec)
  "A get_pet tool for server API (by its URL), with more EXEC keys."
  (toolspec-ht--tool
   "get_pet" (list (toolspec-ht--arg "petId" 'string))
   :server (toolspec-http-server-url api "/v1")
   :path "/pets/{petId}"
   :parameters [(:name "petId" :in "path" :arg "petId")]
   :outputModules (or (plist-get exec :outputModules) [])
   :auth (or (plist-get exec :auth) :null)
   :filter (or (plist-get exec :filter) :null)))

;;;; Rendering templates in the toolspec program

(defconst toolspec-ht--doubling-templates
  '(;; A string doubled with `~'.
    "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}"
    ;; `[a, a]' nested again and again, then printed as JSON.
    "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson | length }}"
    ;; Two of them built apart, then compared: no allocation at all.
    "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}")
  "Templates that double a value at each step, then walk it.
minijinja charges no fuel for the work inside one operation, so only
the limits of the process that renders them end them.")

(defun toolspec-ht--render-processes ()
  "The live processes rendering templates."
  (cl-remove-if-not (lambda (p) (and (process-live-p p)
                                     (string-prefix-p "toolspec-render" (process-name p))))
                    (process-list)))

(ert-deftest toolspec-http-render ()
  "Templates render over JSON; failures are `toolspec-template-error's."
  (should (equal (toolspec-http--render "{% for p in products %}{{ p.name }};{% endfor %}{{ data.n }}"
                                        "{\"products\":[{\"name\":\"é\"},{\"name\":\"b\"}],\"n\":2}")
                 "é;b;2"))
  (should (equal (toolspec-render-template "a\r\nb {{ x | tojson }}\n" "{\"x\":[1,\"✓\"]}")
                 "a\r\nb [1, \"✓\"]"))
  (let ((err (should-error (toolspec-http--render "{% for x in %}" "{}") :type 'toolspec-template-error)))
    (should (string-match-p "template line 1: syntax error" (cadr err))))
  ;; A template that never ends, one that renders too much, one that recurses.
  (dolist (template '("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
                      "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"
                      "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"))
    (let ((start (float-time))
          (err (should-error (toolspec-http--render template "{}") :type 'toolspec-template-limit-error)))
      (should (memq 'toolspec-template-error (get (car err) 'error-conditions)))
      (should (memq 'toolspec-limit-error (get (car err) 'error-conditions)))
      (should (memq 'toolspec-error (get (car err) 'error-conditions)))
      (should (string-match-p "fuel\\|larger than 1048576 bytes\\|recursion deeper" (cadr err)))
      (should (< (- (float-time) start) 10))))
  (should-error (toolspec-http--render "{% include '/etc/passwd' %}" "{}") :type 'toolspec-template-error)
  ;; Data that is not JSON, with its place.
  (let ((err (should-error (toolspec-render-template "{{ x }}" "{\n  \"x\": }") :type 'toolspec-json-error)))
    (should (equal (toolspec-error-details err) '(:line 2 :column 8))))
  (should-error (toolspec-render-template "{{ x }}" (string-to-multibyte "\"\377\""))
                :type 'toolspec-json-error)
  (should-not (toolspec-ht--render-processes)))

(ert-deftest toolspec-http-render-doubling-templates ()
  "Templates that double values end with a limit error, and Emacs goes on."
  (let ((toolspec-template-max-memory 32)
        (toolspec-template-timeout 4))
    (dolist (template toolspec-ht--doubling-templates)
      (let* ((start (float-time))
             (err (should-error (toolspec-http--render template "{}") :type 'toolspec-template-limit-error)))
        (should (memq 'toolspec-error (get (car err) 'error-conditions)))
        (should (string-match-p "\\`\\(?:template line 1: the template needs more work than allowed\\|the template needed more than \\(?:32 MiB of memory\\|5 seconds of CPU time\\)\\|the template took longer than 4 seconds\\)"
                                (cadr err)))
        (should (< (- (float-time) start) 10)))
      (should (equal (toolspec-http--render "{{ n + 1 }}" "{\"n\":1}") "2"))))
  (should-not (toolspec-ht--render-processes)))

(ert-deftest toolspec-http-render-timeout ()
  "A template still running after `toolspec-template-timeout' seconds is killed."
  (let ((toolspec-template-timeout 0.5)
        (start (float-time)))
    (let ((err (should-error (toolspec-http--render (nth 2 toolspec-ht--doubling-templates) "{}")
                             :type 'toolspec-template-limit-error)))
      (should (equal (cadr err) "the template took longer than 0.5 seconds")))
    (should (< (- (float-time) start) 5))
    (should-not (toolspec-ht--render-processes))
    (should (equal (toolspec-http--render "ok" "{}") "ok"))))

(ert-deftest toolspec-http-render-program ()
  "The program is found next to the module; a missing one is a clear error."
  (let ((beside (locate-file "toolspec" (list (file-name-directory (toolspec--module-file))) exec-suffixes)))
    (should beside)
    (should (equal (toolspec--program) beside)))
  (let* ((err (let ((toolspec-program "/nonexistent/toolspec"))
                (should-error (toolspec-http--render "x" "{}") :type 'toolspec-program-error))))
    (should (memq 'toolspec-error (get (car err) 'error-conditions)))
    (should (string-match-p "`toolspec-program' is \"/nonexistent/toolspec\", which is not an executable file" (cadr err))))
  ;; Nowhere to be found.
  (let* ((dir (make-temp-file "toolspec-noprogram" t))
         (err (unwind-protect
                  (let ((toolspec-program nil)
                        (toolspec--directory (file-name-as-directory dir))
                        (toolspec-module-file (expand-file-name "toolspec-module.so" dir))
                        (exec-path nil))
                    (should-error (toolspec-http--render "x" "{}") :type 'toolspec-program-error))
                (delete-directory dir t))))
    (should (string-match-p "The toolspec program, which renders templates, is missing: build it with M-x toolspec-build-module or `make'"
                            (cadr err))))
  ;; A program of another version, and one that fails without saying why.
  (let ((err (let ((toolspec-version "0.0.0"))
               (should-error (toolspec-http--render "x" "{}") :type 'toolspec-program-error))))
    (should (string-match-p "the toolspec program is version .* but toolspec.el is 0.0.0: rebuild it" (cadr err))))
  (let ((err (let ((toolspec-program (executable-find "false")))
               (should-error (toolspec-http--render "x" "{}") :type 'toolspec-template-error))))
    (should (equal (cadr err) "the toolspec program failed (exit status 1)")))
  (should-not (toolspec-ht--render-processes)))

;;;; Binding

(ert-deftest toolspec-http-binding ()
  "OpenAPI tools are bound to an async function that asks first, unless told not to."
  (toolspec-ht--with-env
    (should (equal (cdr (assoc "openapi" toolspec-executor-makers)) 'toolspec-http-make-executor))
    (let* ((plist (toolspec-ht--tool "list_pets" nil :server "https://api.example.invalid/v1"))
           (tool (car (toolspec-ht--register (list plist)))))
      (should (gptel-tool-async tool))
      (should (gptel-tool-confirm tool))
      (let ((quiet (car (toolspec-ht--register (list plist) :confirm nil))))
        (should (gptel-tool-async quiet))
        (should-not (gptel-tool-confirm quiet)))
      ;; The executor stays out of every exported dialect.
      (dolist (dialect (toolspec-dialects))
        (should-not (string-match-p "executor\\|api\\.example" (toolspec-to-json plist dialect)))))))

(ert-deftest toolspec-http-server-choice ()
  "The server is the import option, else `toolspec-http-servers', else the document's."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:body (:ok t))))
      (let* ((relative (toolspec-ht--tool "list_pets" nil :server "/api" :path "/pets"))
             (templated (toolspec-ht--tool "list_pets" nil :server "https://{region}.example.invalid"
                                           :path "/pets"))
             (empty (toolspec-ht--tool "list_pets" nil :path "/pets")))
        ;; Without an override: a clear error, and nothing is sent.
        (dolist (plist (list relative templated empty))
          (let ((result (toolspec-test-helpers-call (car (toolspec-ht--register (list plist))))))
            (should (string-match-p "\\`Error: cannot call list_pets: API \"Pets API\"" result))
            (should (string-match-p ":server import option" result))
            (should (string-match-p "toolspec-http-servers" result))))
        (should-not (toolspec-http-server-requests api))
        ;; The import option.
        (should (equal (toolspec-test-helpers-call (car (toolspec-ht--register
                                                (list relative) :server (toolspec-http-server-url api "/a/"))))
                       "{\"ok\":true}"))
        ;; The customizable alist, by title.
        (let ((toolspec-http-servers `(("Pets API" . ,(toolspec-http-server-url api "/b")))))
          (should (equal (toolspec-test-helpers-call (car (toolspec-ht--register (list relative))))
                         "{\"ok\":true}")))
        ;; By the host of the document's server.
        (let ((toolspec-http-servers `(("docs.example.invalid" . ,(toolspec-http-server-url api "/c")))))
          (should (equal (toolspec-test-helpers-call
                          (car (toolspec-ht--register
                                (list (toolspec-ht--tool "list_pets" nil
                                                         :server "https://docs.example.invalid/v1"
                                                         :path "/pets")))))
                         "{\"ok\":true}")))
        (should (equal (toolspec-ht--paths api) '("/a/pets" "/b/pets" "/c/pets")))
        ;; An override that is not an http(s) URL is refused.
        (let ((result (toolspec-test-helpers-call (car (toolspec-ht--register (list relative) :server "file:///etc")))))
          (should (string-match-p "not an absolute http(s) URL" result)))
        ;; The server is fixed at import: changing the alist later changes nothing.
        (let* ((toolspec-http-servers `(("Pets API" . ,(toolspec-http-server-url api "/d"))))
               (tool (car (toolspec-ht--register (list relative)))))
          (setq toolspec-http-servers '(("Pets API" . "http://127.0.0.1:1/never")))
          (toolspec-test-helpers-call tool)
          (should (equal (car (last (toolspec-ht--paths api))) "/d/pets")))))))

;;;; Building requests

(ert-deftest toolspec-http-request-building ()
  "Path, query, header, cookie and body are built from the args and encoded."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:status 201 :body (:id 99))))
      (let* ((plist (toolspec-ht--tool
                     "update_pet"
                     (list (toolspec-ht--arg "petId" 'string)
                           (toolspec-ht--arg "tags" 'array t :items '(:type string))
                           (toolspec-ht--arg "ids" 'array t :items '(:type integer))
                           (toolspec-ht--arg "colors" 'array t :items '(:type string))
                           (toolspec-ht--arg "filter" 'object t :properties '(:kind (:type string) :max (:type integer)))
                           (toolspec-ht--arg "dryRun" 'boolean)
                           (toolspec-ht--arg "notify" 'boolean t)
                           (toolspec-ht--arg "traceId" 'string t)
                           (toolspec-ht--arg "session" 'string t)
                           (toolspec-ht--arg "name" 'string)
                           (toolspec-ht--arg "weight" 'number t)
                           (toolspec-ht--arg "vaccinated" 'boolean t)
                           (toolspec-ht--arg "owner" 'object t
                                             :properties '(:name (:type string) :verified (:type boolean)))
                           (toolspec-ht--arg "nicknames" 'array t :items '(:type string)))
                     :server (toolspec-http-server-url api "/v1/")
                     :method "put"
                     :path "/pets/{petId}/profile"
                     :parameters [(:name "petId" :in "path" :arg "petId")
                                  (:name "tag" :in "query" :arg "tags")
                                  (:name "ids" :in "query" :arg "ids" :style "form" :explode :json-false)
                                  (:name "colors" :in "query" :arg "colors" :style "pipeDelimited")
                                  (:name "filter" :in "query" :arg "filter" :style "deepObject" :explode t)
                                  (:name "dry_run" :in "query" :arg "dryRun")
                                  (:name "notify" :in "query" :arg "notify")
                                  (:name "X-Trace-Id" :in "header" :arg "traceId")
                                  (:name "session" :in "cookie" :arg "session")]
                     :body '(:contentType "application/json"
                             :args [["name" "name"] ["weight" "weight"] ["vaccinated" "vaccinated"]
                                    ["owner" "owner"] ["nicknames" "nicknames"]]
                             :whole :null)))
             (tool (car (toolspec-ht--register (list plist)))))
        ;; Through toolspec's wrapper: positional args, as gptel passes them.
        (should (equal (toolspec-test-helpers-call tool "a b/../ü?#" ["x" "y z"] [1 2 3] ["red" "dark blue"]
                                          '(:kind "cat&dog" :max 3) :json-false :json-false
                                          "trace-1" "s=1; x" "Réx \"the\" dog" 4.5 :json-false
                                          '(:name "Ann" :verified :json-false) [])
                       "{\"id\":99}"))
        (let ((req (car (toolspec-http-server-requests api))))
          (should (equal (plist-get req :method) "PUT"))
          (should (equal (plist-get req :path) "/v1/pets/a%20b%2F..%2F%C3%BC%3F%23/profile"))
          (should (equal (plist-get req :query)
                         ;; url.el percent-encodes | [ and ] itself.
                         (concat "tag=x&tag=y%20z&ids=1,2,3&colors=red%7Cdark%20blue"
                                 "&filter%5Bkind%5D=cat%26dog&filter%5Bmax%5D=3&dry_run=false")))
          (should (equal (toolspec-ht--header req "x-trace-id") "trace-1"))
          (should (equal (toolspec-ht--header req "cookie") "session=s%3D1%3B%20x"))
          (should (equal (toolspec-ht--header req "content-type") "application/json"))
          (should-not (toolspec-ht--header req "authorization"))
          ;; Optional false and absent values are left out; a required
          ;; false, nested false and empty arrays are kept.
          (should (equal (json-parse-string (plist-get req :body) :object-type 'alist)
                         '((name . "Réx \"the\" dog") (weight . 4.5)
                           (owner . ((name . "Ann") (verified . :false))) (nicknames . [])))))
        ;; Only the required args: no optional parameters at all.
        (toolspec-test-helpers-call tool "." nil nil nil nil t nil nil nil "Rex" nil t nil nil)
        (let ((req (cadr (toolspec-http-server-requests api))))
          (should (equal (plist-get req :path) "/v1/pets/%2E/profile"))
          (should (equal (plist-get req :query) "dry_run=true"))
          (should-not (toolspec-ht--header req "cookie"))
          (should-not (toolspec-ht--header req "x-trace-id"))
          (should (equal (json-parse-string (plist-get req :body) :object-type 'alist)
                         '((name . "Rex") (vaccinated . t)))))
        ;; Invalid arguments never reach the server.
        (should (string-match-p "invalid arguments for tool update_pet"
                                (toolspec-test-helpers-call tool 7 nil nil nil nil t nil nil nil "Rex" nil nil nil nil)))
        ;; A line break in a header value is refused, nothing is sent.
        (should (string-match-p "Error: cannot call update_pet: the value of header X-Trace-Id holds a line break"
                                (toolspec-test-helpers-call tool "p" nil nil nil nil t nil "a\r\nInjected: 1" nil "Rex"
                                                   nil nil nil nil)))
        (should (= (length (toolspec-http-server-requests api)) 2))))))

(ert-deftest toolspec-http-parameter-styles ()
  "Path, query, header and cookie values by OpenAPI style and explode."
  (let ((arr ["a b" "c"])
        (obj '(:role "admin" :first "Al/x")))
    (pcase-dolist (`(,param ,value ,expected)
                   `(((:name "id" :in "path") ,arr "a%20b,c")
                     ((:name "id" :in "path" :style "label") ,arr ".a%20b,c")
                     ((:name "id" :in "path" :style "label" :explode t) ,arr ".a%20b.c")
                     ((:name "id" :in "path" :style "matrix") ,arr ";id=a%20b,c")
                     ((:name "id" :in "path" :style "matrix" :explode t) ,arr ";id=a%20b;id=c")
                     ((:name "id" :in "path") ,obj "role,admin,first,Al%2Fx")
                     ((:name "id" :in "path" :explode t) ,obj "role=admin,first=Al%2Fx")
                     ((:name "id" :in "path") 5 "5")
                     ((:name "id" :in "path") 2.0 "2")
                     ((:name "id" :in "path") 2.5 "2.5")))
      (should (equal (toolspec-http--path-value param value) expected)))
    (pcase-dolist (`(,param ,value ,expected)
                   `(((:name "q") ,arr ("q=a%20b" "q=c"))
                     ((:name "q" :explode :json-false) ,arr ("q=a%20b,c"))
                     ((:name "q" :style "spaceDelimited") ,arr ("q=a%20b%20c"))
                     ((:name "q") ,obj ("role=admin" "first=Al%2Fx"))
                     ((:name "q" :explode :json-false) ,obj ("q=role,admin,first,Al%2Fx"))
                     ((:name "q" :style "deepObject") ,obj ("q[role]=admin" "q[first]=Al%2Fx"))
                     ((:name "q") t ("q=true"))
                     ((:name "q") :false ("q=false"))))
      (should (equal (toolspec-http--query-pairs param value) expected)))
    (should (equal (toolspec-http--header-value '(:name "X") arr) "a b,c"))
    (should (equal (toolspec-http--header-value '(:name "X") obj) "role,admin,first,Al/x"))
    (should (equal (toolspec-http--header-value '(:name "X" :explode t) obj) "role=admin,first=Al/x"))
    (should-error (toolspec-http--header-value '(:name "X") "é") :type 'toolspec-http-error)
    (should (equal (toolspec-http--cookie-pieces '(:name "c") arr) '("c=a%20b" "c=c")))
    (should (equal (toolspec-http--cookie-pieces '(:name "c" :explode :json-false) arr) '("c=a%20b,c")))))

(ert-deftest toolspec-http-whole-body-and-forms ()
  "A body given as one argument, and form-encoded bodies."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:status 204)))
      (let* ((whole (toolspec-ht--tool
                     "create_pets" (list (toolspec-ht--arg "pets" 'array nil
                                                           :items '(:type object :properties (:name (:type string)))))
                     :server (toolspec-http-server-url api) :method "POST" :path "/pets"
                     :body '(:contentType "application/json" :args [] :whole "pets")))
             (form (toolspec-ht--tool
                    "login" (list (toolspec-ht--arg "user" 'string) (toolspec-ht--arg "remember" 'boolean t))
                    :server (toolspec-http-server-url api) :method "POST" :path "/login"
                    :body '(:contentType "application/x-www-form-urlencoded"
                            :args [["user" "user_name"] ["remember" "remember"]] :whole :null)))
             (xml (toolspec-ht--tool
                   "put_xml" (list (toolspec-ht--arg "doc" 'string))
                   :server (toolspec-http-server-url api) :method "POST" :path "/xml"
                   :body '(:contentType "application/xml" :args [["doc" "doc"]] :whole :null)))
             (tools (toolspec-ht--register (list whole form xml))))
        (should (equal (toolspec-test-helpers-call (nth 0 tools) [(:name "a") (:name "b")])
                       "Done: HTTP 204 No Content, no content."))
        (should (equal (toolspec-test-helpers-call (nth 1 tools) "ann & bob" t)
                       "Done: HTTP 204 No Content, no content."))
        (should (string-match-p "request bodies of type application/xml are not supported"
                                (toolspec-test-helpers-call (nth 2 tools) "<a/>")))
        (let ((reqs (toolspec-http-server-requests api)))
          (should (= (length reqs) 2))
          (should (equal (plist-get (nth 0 reqs) :body) "[{\"name\":\"a\"},{\"name\":\"b\"}]"))
          (should (equal (plist-get (nth 1 reqs) :body) "user_name=ann%20%26%20bob&remember=true"))
          (should (equal (toolspec-ht--header (nth 1 reqs) "content-type")
                         "application/x-www-form-urlencoded")))))))

;;;; Responses

(ert-deftest toolspec-http-errors-and-limits ()
  "Non-2xx statuses, oversized results, text, binary, timeouts, 401 without prompting."
  (toolspec-ht--with-env
    (let ((big (make-string 40000 ?x)))
      (toolspec-http-server-with
          (api (lambda (req)
                 (pcase (plist-get req :path)
                   ("/v1/pets/7" '(:status 404 :body (:error "no pet 7")))
                   ("/v1/pets/500" `(:status 500 :body ,(concat "boom " (make-string 1000 ?!))))
                   ("/v1/pets/401" '(:status 401 :headers (("WWW-Authenticate" . "Basic realm=\"pets\"")) :body "who?"))
                   ("/v1/pets/big" `(:body (:data ,big)))
                   ("/v1/pets/text" '(:body "plain\r\ntext é"))
                   ("/v1/pets/png" '(:headers (("Content-Type" . "image/png")) :body "\211PNG"))
                   ("/v1/pets/slow" 'hang)
                   (_ '(:body (:ok t))))))
        (let ((tool (car (toolspec-ht--register (list (toolspec-ht--pet-tool api))))))
          (should (equal (toolspec-test-helpers-call tool "7")
                         (format "Error: HTTP 404 Not Found from GET %s: {\"error\":\"no pet 7\"}"
                                 (toolspec-http-server-url api "/v1/pets/7"))))
          (let ((r (toolspec-test-helpers-call tool "500")))
            (should (string-prefix-p "Error: HTTP 500 Internal Server Error from GET " r))
            (should (string-suffix-p "!!!..." r))
            (should (< (length r) 500)))
          (let ((start (float-time))
                (r (toolspec-test-helpers-call tool "401")))
            (should (string-prefix-p "Error: HTTP 401 Unauthorized from GET " r))
            (should (string-suffix-p ": who?" r))
            (should (< (- (float-time) start) 5)))
          (let* ((toolspec-http-max-result-size 1000)
                 (r (toolspec-test-helpers-call tool "big")))
            (should (string-prefix-p "{\"data\":\"xxx" r))
            (should (string-suffix-p (format "\n[... truncated by toolspec: 1000 of %d characters shown]"
                                             (+ 40000 11))
                                     r)))
          (should (equal (toolspec-test-helpers-call tool "text") "plain\r\ntext é"))
          (should (equal (toolspec-test-helpers-call tool "png")
                         "Done: HTTP 200, a response of type image/png (4 bytes), not shown."))
          (let ((toolspec-http-max-response-size 10000))
            (should (string-match-p "is larger than 10000 bytes" (toolspec-test-helpers-call tool "big"))))
          (let ((toolspec-http-timeout 0.5))
            (should (equal (toolspec-test-helpers-call tool "slow")
                           (format "Error: GET %s failed: no answer from 127.0.0.1 within 0.5 seconds"
                                   (toolspec-http-server-url api "/v1/pets/slow"))))))))
    ;; Nothing listens: a clear error.
    (let* ((port (toolspec-http-server-with (dead '()) (toolspec-http-server-port dead)))
           (tool (car (toolspec-ht--register
                       (list (toolspec-ht--tool "get_pet" nil :server (format "http://127.0.0.1:%d" port)))))))
      (should (string-match-p "\\`Error: GET http://127.0.0.1:[0-9]+/ failed: "
                              (toolspec-test-helpers-call tool))))))

(ert-deftest toolspec-http-redirects ()
  "Redirects are followed on the approved server only."
  (toolspec-ht--with-env
    (toolspec-http-server-with (other (lambda (_) '(:body (:stolen t))))
      (toolspec-http-server-with
          (api (lambda (req)
                 (pcase (plist-get req :path)
                   ("/v1/pets/moved" '(:status 301 :headers (("Location" . "/v1/pets/here"))))
                   ("/v1/pets/post" '(:status 303 :headers (("Location" . "/v1/pets/here"))))
                   ("/v1/pets/away"
                    `(:status 302 :headers (("Location" . ,(toolspec-http-server-url other "/steal")))))
                   ("/v1/pets/byname"
                    `(:status 307 :headers (("Location" . ,(format "http://localhost:%s/v1/pets/here"
                                                                   (cadr (split-string (toolspec-ht--header req "host") ":")))))))
                   ("/v1/pets/loop" '(:status 302 :headers (("Location" . "/v1/pets/loop"))))
                   (_ `(:body (:at ,(plist-get req :path) :method ,(plist-get req :method)))))))
        (let ((tool (car (toolspec-ht--register (list (toolspec-ht--pet-tool api))))))
          (should (equal (toolspec-test-helpers-call tool "moved") "{\"at\":\"/v1/pets/here\",\"method\":\"GET\"}"))
          (should (equal (toolspec-test-helpers-call tool "post") "{\"at\":\"/v1/pets/here\",\"method\":\"GET\"}"))
          (let ((r (toolspec-test-helpers-call tool "away")))
            (should (string-match-p "refused the redirect (HTTP 302)" r))
            (should (string-match-p "it leaves the approved server http://127.0.0.1:" r)))
          ;; Same address, other host name: refused too.
          (should (string-match-p "refused the redirect (HTTP 307)" (toolspec-test-helpers-call tool "byname")))
          (should (string-match-p "more than 3 redirects" (toolspec-test-helpers-call tool "loop")))
          (should-not (toolspec-http-server-requests other))
          (should (equal (toolspec-ht--paths api)
                         '("/v1/pets/moved" "/v1/pets/here" "/v1/pets/post" "/v1/pets/here"
                           "/v1/pets/away" "/v1/pets/byname"
                           "/v1/pets/loop" "/v1/pets/loop" "/v1/pets/loop" "/v1/pets/loop"))))))))

(ert-deftest toolspec-http-templates ()
  "The filter and output modules shape JSON results; a failing template falls back."
  (toolspec-ht--with-env
    (toolspec-http-server-with
        (api (lambda (_)
               '(:body (:products [(:name "Pen" :price 2 :url "https://shop.invalid/pen" :stock 5)
                                   (:name "Ink" :price 5 :url "https://shop.invalid/ink" :stock 0)]
                        :cursor "abc"))))
      (let* ((filter (concat "{\n  \"products\": [\n{% for product in products %}"
                             "{\"name\": \"{{ product.name }}\", \"price\": \"{{ product.price }}\"}"
                             "{% if not loop.last %},{% endif %}\n{% endfor %}]\n}"))
             (module "{% for product in products %}Name: {{ product['name'] }}\nPrice: {{ product['price'] }}\n{% endfor %}")
             (tools (toolspec-ht--register
                     (list (toolspec-ht--tool "both" nil :server (toolspec-http-server-url api)
                                              :filter filter :outputModules (vector module))
                           (toolspec-ht--tool "filter_only" nil :server (toolspec-http-server-url api)
                                              :filter filter)
                           (toolspec-ht--tool "modules_only" nil :server (toolspec-http-server-url api)
                                              :outputModules ["{{ products | length }} products" "cursor {{ cursor }}"])
                           (toolspec-ht--tool "text_filter" nil :server (toolspec-http-server-url api)
                                              :filter "{% for p in products %}{{ p.name }} {% endfor %}"
                                              :outputModules ["never used"])
                           (toolspec-ht--tool "broken" nil :server (toolspec-http-server-url api)
                                              :outputModules ["{% for p in %}"])
                           (toolspec-ht--tool "endless" nil :server (toolspec-http-server-url api)
                                              :outputModules ["{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"])
                           (toolspec-ht--tool "doubling" nil :server (toolspec-http-server-url api)
                                              :filter (nth 1 toolspec-ht--doubling-templates))
                           (toolspec-ht--tool "comparing" nil :server (toolspec-http-server-url api)
                                              :filter (nth 2 toolspec-ht--doubling-templates))))))
        (should (equal (toolspec-test-helpers-call (nth 0 tools)) "Name: Pen\nPrice: 2\nName: Ink\nPrice: 5\n"))
        (should (equal (toolspec-test-helpers-call (nth 1 tools))
                       "{\"products\":[{\"name\":\"Pen\",\"price\":\"2\"},{\"name\":\"Ink\",\"price\":\"5\"}]}"))
        (should (equal (toolspec-test-helpers-call (nth 2 tools)) "2 products\ncursor abc"))
        (should (equal (toolspec-test-helpers-call (nth 3 tools)) "Pen Ink "))
        (let ((r (toolspec-test-helpers-call (nth 4 tools))))
          (should (string-prefix-p "Note: the output module of broken failed (template line 1: syntax error" r))
          (should (string-suffix-p "the unprocessed response follows.\n{\"products\":[{\"name\":\"Pen\",\"price\":2,\"url\":\"https://shop.invalid/pen\",\"stock\":5},{\"name\":\"Ink\",\"price\":5,\"url\":\"https://shop.invalid/ink\",\"stock\":0}],\"cursor\":\"abc\"}" r)))
        (should (string-match-p "needs more work than allowed" (toolspec-test-helpers-call (nth 5 tools))))
        ;; Hostile filters: the tool answers with the raw response.
        (let ((toolspec-template-max-memory 32)
              (toolspec-template-timeout 2))
          (dolist (tool (list (nth 6 tools) (nth 7 tools)))
            (let ((r (toolspec-test-helpers-call tool)))
              (should (string-match-p "\\`Note: the response filter of \\(doubling\\|comparing\\) failed (the template \\(needed more than 32 MiB of memory\\|took longer than 2 seconds\\)); the unprocessed response follows\\.\n{\"products\":" r)))))
        (should (equal (toolspec-test-helpers-call (nth 2 tools)) "2 products\ncursor abc"))
        (should-not (toolspec-ht--render-processes))))))

;;;; Credentials

(defun toolspec-ht--all-buffers-text ()
  "The text of every live buffer, hidden ones included."
  (mapconcat (lambda (b) (with-current-buffer b
                           (buffer-substring-no-properties (point-min) (point-max))))
             (buffer-list) "\n"))

(ert-deftest toolspec-http-secret-stays-in-the-header ()
  "Bearer and basic credentials come from auth-source and go nowhere but the Authorization header.
The model calls the tool through gptel; the API echoes the header in
its bodies (a 200 and a 404); every output is searched for the
secret, raw and base64-encoded."
  (toolspec-ht--with-env
    (toolspec-ht--authinfo authinfo (format "machine 127.0.0.1 login alice password %s" toolspec-ht--secret))
    (dolist (kind '("bearer" "basic"))
      (with-current-buffer (messages-buffer)
        (let ((inhibit-read-only t)) (erase-buffer)))
      (toolspec-http-server-with
          (api (lambda (req)
                 (list :status (if (equal (plist-get req :path) "/v1/pets/404") 404 200)
                       :body (list :pet "Rex" :echo (or (toolspec-ht--header req "authorization") "")))))
        (let* ((plist (toolspec-ht--pet-tool api :auth `(:type "user_http" :authorizationType ,kind)))
               (tools (toolspec-ht--register (list (copy-tree plist))))
               (basic (base64-encode-string (concat "alice:" toolspec-ht--secret) t))
               (needles (list toolspec-ht--secret basic)))
          (toolspec-server-with
              (chat (list (toolspec-server-tool-calls-response
                           '(("call_1" "get_pet" "{\"petId\":\"1\"}") ("call_2" "get_pet" "{\"petId\":\"404\"}")))
                          (toolspec-server-text-response "Rex it is.")))
            (let* ((result (let ((url-debug t)) ; url.el's log is searched too
                             (toolspec-ht--chat chat "Which pet?" tools)))
                   (second (nth 1 (toolspec-server-requests chat)))
                   (ok (plist-get (toolspec-ht--tool-message second "call_1") :content))
                   (missing (plist-get (toolspec-ht--tool-message second "call_2") :content))
                   (received (toolspec-http-server-requests api)))
              (should (equal (plist-get result :text) "Rex it is."))
              ;; The server got the credential, in the header.
              (should (= (length received) 2))
              (dolist (req received)
                (should (equal (toolspec-ht--header req "authorization")
                               (if (equal kind "bearer")
                                   (concat "Bearer " toolspec-ht--secret)
                                 (concat "Basic " basic)))))
              ;; The model got the results, scrubbed.
              (should (string-match-p "\\`{\"pet\":\"Rex\",\"echo\":\"\\(Bearer\\|Basic\\) \\[redacted\\]\"}\\'" ok))
              (should (string-prefix-p "Error: HTTP 404 Not Found from GET " missing))
              (should (string-match-p "\\[redacted\\]" missing))
              ;; Nowhere else: what the model received, the callback's
              ;; events, every buffer (*Messages*, url.el's), the tools
              ;; and their JSON in every dialect.
              (let ((haystacks
                     (list (prin1-to-string (toolspec-server-requests chat))
                           (prin1-to-string (plist-get result :events))
                           (toolspec-ht--all-buffers-text)
                           (prin1-to-string tools)
                           (prin1-to-string plist)
                           (prin1-to-string toolspec-http--operations))))
                (dolist (dialect (toolspec-dialects))
                  (push (toolspec-export tools dialect) haystacks)
                  (push (toolspec-to-json plist dialect) haystacks))
                (dolist (hay haystacks)
                  (dolist (needle needles)
                    (should-not (string-search needle hay))))))))))))

(ert-deftest toolspec-http-missing-credentials ()
  "Without credentials nothing is sent and the result says what to do."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:body (:ok t))))
      (let ((tools (toolspec-ht--register
                    (list (toolspec-ht--tool "bearer_op" nil :server (toolspec-http-server-url api)
                                             :auth '(:type "service_http" :authorizationType "bearer"))
                          (toolspec-ht--tool "basic_op" nil :server (toolspec-http-server-url api)
                                             :auth '(:type "user_http" :authorizationType "basic"))
                          (toolspec-ht--tool "odd_op" nil :server (toolspec-http-server-url api)
                                             :auth '(:type "magic"))))))
        (let ((r (toolspec-test-helpers-call (nth 0 tools))))
          (should (string-match-p "\\`Error: API \"Pets API\" needs a bearer credential for 127.0.0.1, and auth-source has none" r))
          (should (string-match-p "machine 127.0.0.1 password YOUR-SECRET" r)))
        (should (string-match-p "machine 127.0.0.1 login YOUR-USER-NAME password" (toolspec-test-helpers-call (nth 1 tools))))
        (should (string-match-p "authentication type \"magic\"" (toolspec-test-helpers-call (nth 2 tools))))
        ;; A password without a user name is not enough for basic.
        (toolspec-ht--authinfo authinfo "machine 127.0.0.1 password only-a-password")
        (should (string-match-p "has no user name" (toolspec-test-helpers-call (nth 1 tools))))
        (should-not (toolspec-http-server-requests api))))))

(ert-deftest toolspec-http-oauth ()
  "OAuth: without a token the model is told where to authorize; with one it is a bearer token."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (req) `(:body (:auth ,(toolspec-ht--header req "authorization")))))
      (let* ((auth '(:type "oauth" :clientUrl "https://accounts.example.invalid/o/oauth2/auth"
                     :authorizationUrl "https://oauth2.example.invalid/token"
                     :scope "pets.read" :authorizationContentType "application/x-www-form-urlencoded"))
             (tools (toolspec-ht--register (list (toolspec-ht--pet-tool api :auth auth)))))
        (toolspec-server-with
            (chat (list (toolspec-server-tool-calls-response '(("call_1" "get_pet" "{\"petId\":\"1\"}")))
                        (toolspec-server-text-response "Please authorize.")))
          (toolspec-ht--chat chat "Pet 1?" tools)
          (let ((content (plist-get (toolspec-ht--tool-message (nth 1 (toolspec-server-requests chat)) "call_1")
                                    :content)))
            (should (string-prefix-p "Authorization required: API \"Pets API\" uses OAuth" content))
            (should (string-match-p "authorize at https://accounts.example.invalid/o/oauth2/auth" content))
            (should (string-match-p "token endpoint https://oauth2.example.invalid/token" content))
            (should (string-match-p "scope pets.read" content))
            (should (string-match-p "machine 127.0.0.1 password" content))))
        (should-not (toolspec-http-server-requests api))
        (toolspec-ht--authinfo authinfo "machine 127.0.0.1 password oauth-token-123")
        (should (equal (toolspec-test-helpers-call (car tools) "1") "{\"auth\":\"Bearer [redacted]\"}"))
        (should (equal (toolspec-ht--header (car (toolspec-http-server-requests api)) "authorization")
                       "Bearer oauth-token-123"))))))

;;;; Through gptel

(ert-deftest toolspec-http-gptel-round-trip ()
  "The model calls OpenAPI tools; the requests are built from its arguments, the answers reach it."
  (toolspec-ht--with-env
    (toolspec-http-server-with
        (api (lambda (req)
               (if (equal (plist-get req :method) "POST")
                   `(:status 201 :body (:id 43 :created ,(plist-get req :body)))
                 `(:body (:id ,(string-to-number (file-name-nondirectory (plist-get req :path)))
                          :name "Rex" :status "available" :tags ["good" "boy"])))))
      (let* ((add-pet (toolspec-ht--tool
                       "add_pet"
                       (list (toolspec-ht--arg "name" 'string)
                             (toolspec-ht--arg "tags" 'array t :items '(:type string))
                             (toolspec-ht--arg "notify" 'array t :items '(:type string))
                             (toolspec-ht--arg "requestId" 'string t)
                             (toolspec-ht--arg "session" 'string t)
                             (toolspec-ht--arg "shelter" 'string))
                       :server (toolspec-http-server-url api "/v1") :method "POST"
                       :path "/shelters/{shelter}/pets"
                       :parameters [(:name "shelter" :in "path" :arg "shelter")
                                    (:name "notify" :in "query" :arg "notify")
                                    (:name "X-Request-Id" :in "header" :arg "requestId")
                                    (:name "sid" :in "cookie" :arg "session")]
                       :body '(:contentType "application/json" :args [["name" "name"] ["tags" "tags"]]
                               :whole :null)))
             (tools (toolspec-ht--register
                     (list (toolspec-ht--pet-tool
                            api :outputModules ["Pet {{ id }}: {{ name }} ({{ status }}), tags {{ tags | join(', ') }}"])
                           add-pet))))
        (toolspec-server-with
            (chat (list (toolspec-server-tool-calls-response
                         '(("call_p" "get_pet" "{\"petId\":\"42\"}")
                           ("call_a" "add_pet"
                            "{\"shelter\":\"north/east\",\"name\":\"Zoë\",\"tags\":[\"new\",\"small dog\"],\"notify\":[\"a@b.c\",\"d e\"],\"requestId\":\"r-1\",\"session\":\"x y;z\"}")))
                        (toolspec-server-text-response "Rex is available; Zoë was added.")))
          (let* ((result (toolspec-ht--chat chat "Is pet 42 available? Add Zoë." tools))
                 (requests (toolspec-server-requests chat))
                 (sent (mapcar (lambda (tl) (plist-get (plist-get tl :function) :name))
                               (plist-get (nth 0 requests) :tools)))
                 (received (toolspec-http-server-requests api))
                 (post (cl-find "POST" received :key (lambda (r) (plist-get r :method)) :test #'equal)))
            (should-not (toolspec-server-errors chat))
            (should (equal sent '("get_pet" "add_pet")))
            (should (equal (plist-get result :text) "Rex is available; Zoë was added."))
            (should (equal (plist-get (toolspec-ht--tool-message (nth 1 requests) "call_p") :content)
                           "Pet 42: Rex (available), tags good, boy"))
            (should (equal (plist-get (toolspec-ht--tool-message (nth 1 requests) "call_a") :content)
                           "{\"id\":43,\"created\":\"{\\\"name\\\":\\\"Zoë\\\",\\\"tags\\\":[\\\"new\\\",\\\"small dog\\\"]}\"}"))
            (should (= (length received) 2))
            (should (member "/v1/pets/42" (toolspec-ht--paths api)))
            (should (equal (plist-get post :path) "/v1/shelters/north%2Feast/pets"))
            (should (equal (plist-get post :query) "notify=a%40b.c&notify=d%20e"))
            (should (equal (toolspec-ht--header post "x-request-id") "r-1"))
            (should (equal (toolspec-ht--header post "cookie") "sid=x%20y%3Bz"))
            (should (equal (toolspec-ht--header post "content-type") "application/json"))
            (should (equal (plist-get post :body) "{\"name\":\"Zoë\",\"tags\":[\"new\",\"small dog\"]}"))))))))

;;;; Forms

(ert-deftest toolspec-http-form-fields ()
  "Form fields are written as the body's encoding says, nested ones as deep objects."
  (let* ((op (toolspec-http--op-make
              :tool (list :args (list (toolspec-ht--arg "email" 'string)
                                           (toolspec-ht--arg "meta" 'object t)
                                           (toolspec-ht--arg "items" 'array t)
                                           (toolspec-ht--arg "tags" 'array t)
                                           (toolspec-ht--arg "ids" 'array t)
                                           (toolspec-ht--arg "gone" 'string t)
                                           (toolspec-ht--arg "flag" 'boolean)))
                   :exec (list :body
                               '(:contentType "application/x-www-form-urlencoded; charset=utf-8"
                                 :args [["email" "e-mail"] ["meta" "metadata"] ["items" "items"]
                                        ["tags" "tags"] ["ids" "ids"] ["gone" "gone"] ["flag" "flag"]]
                                 :whole :null
                                 :encoding (:metadata (:style "deepObject" :explode t)
                                            :items (:style "deepObject")
                                            :tags (:style "pipeDelimited" :explode :json-false)
                                            :ids (:style "form" :explode :json-false))))))
         (args (list "a&b@c.d"
                     '(:order_id "6735" :note "x y" :skip nil :deep (:k ["v" 2]))
                     [(:price "p_1" :quantity 2) (:price "p/2" :quantity 1.0)]
                     ["x" "y z"] [1 2] nil nil))
         (body (toolspec-http--body op args)))
    (should (equal (car body) "application/x-www-form-urlencoded; charset=utf-8"))
    (should-not (multibyte-string-p (cdr body)))
    (should (equal (split-string (cdr body) "&")
                   '("e-mail=a%26b%40c.d"
                     "metadata[order_id]=6735" "metadata[note]=x%20y"
                     "metadata[deep][k][0]=v" "metadata[deep][k][1]=2"
                     "items[0][price]=p_1" "items[0][quantity]=2"
                     "items[1][price]=p%2F2" "items[1][quantity]=1"
                     "tags=x|y%20z" "ids=1,2" "flag=false")))
    ;; Without an encoding, a field is a form parameter, exploded.
    (let ((plain (toolspec-http--op-make :tool (toolspec-http--op-tool op)
                       :exec (list :body '(:contentType "application/x-www-form-urlencoded"
                                           :args [["tags" "tags"] ["meta" "m"]] :whole :null)))))
      (should (equal (cdr (toolspec-http--body plain args))
                     "tags=x&tags=y%20z&order_id=6735&note=x%20y&deep=%7B%22k%22%3A%5B%22v%22%2C2%5D%7D")))
    ;; A whole form: its members are the fields; no value, no body.
    (let ((whole (toolspec-http--op-make :tool (list :args (list (toolspec-ht--arg "body" 'object t)))
                       :exec (list :body '(:contentType "application/x-www-form-urlencoded"
                                           :args [] :whole "body"
                                           :encoding (:a (:style "deepObject")))))))
      (should (equal (toolspec-http--body whole '((:a (:b 1) :c "d" :e nil :f :null :g :json-false)))
                     '("application/x-www-form-urlencoded" . "a[b]=1&c=d&g=false")))
      (should-not (toolspec-http--body whole '(nil)))
      (should (equal (cadr (should-error (toolspec-http--body whole '("text"))
                                         :type 'toolspec-http-error))
                     "a form body must be an object")))))

(ert-deftest toolspec-http-form-round-trip ()
  "Operations with form bodies, OpenAPI 3 and Swagger 2, imported and called by the model."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:status 200 :body (:ok t))))
      (let* ((url (toolspec-http-server-url api))
             (doc3 (json-serialize
                    `(:openapi "3.0.0" :info (:title "Shop" :version "1")
                      :servers [(:url ,(concat url "/v1"))]
                      :paths
                      (:/customers
                       (:post
                        (:operationId "create_customer"
                         :requestBody
                         (:required t
                          :content
                          (:application/x-www-form-urlencoded
                           (:schema (:type "object" :required ["email"]
                                     :properties (:email (:type "string")
                                                  :metadata (:type "object" :additionalProperties (:type "string"))
                                                  :expand (:type "array" :items (:type "string"))))
                            :encoding (:metadata (:style "deepObject" :explode t)
                                       :expand (:style "deepObject" :explode t)))))
                         :responses (:200 (:description "ok"))))))))
             (doc2 (json-serialize
                    `(:swagger "2.0" :info (:title "Login" :version "1")
                      :host ,(replace-regexp-in-string "\\`http://" "" url) :schemes ["http"]
                      :paths
                      (:/login
                       (:post
                        (:operationId "log_in"
                         :parameters [(:name "user" :in "formData" :type "string" :required t)
                                      (:name "roles" :in "formData" :type "array" :items (:type "string")
                                       :collectionFormat "multi")]
                         :responses (:200 (:description "ok"))))))))
             (tools (toolspec-ht--register
                     (append (toolspec-parse-json (decode-coding-string doc3 'utf-8))
                             (toolspec-parse-json (decode-coding-string doc2 'utf-8))))))
        (should (equal (mapcar #'gptel-tool-name tools) '("create_customer" "log_in")))
        (should (equal (mapcar (lambda (a) (plist-get a :name)) (gptel-tool-args (car tools)))
                       '("email" "metadata" "expand")))
        (let ((received
               (toolspec-ht--model-calls
                api tools "Add Zoë, then log in as ann."
                '(("call_c" "create_customer"
                   "{\"email\":\"zoë@example.com\",\"metadata\":{\"plan\":\"gold & more\"},\"expand\":[\"tax\",\"sources\"]}")
                  ("call_l" "log_in" "{\"user\":\"ann\",\"roles\":[\"admin\",\"dev\"]}")))))
          (let ((c (toolspec-ht--request-at received "/v1/customers")))
            (should (equal (toolspec-ht--header c "content-type") "application/x-www-form-urlencoded"))
            (should (equal (plist-get c :body)
                           (concat "email=zo%C3%AB%40example.com&metadata[plan]=gold%20%26%20more"
                                   "&expand[0]=tax&expand[1]=sources"))))
          (let ((l (toolspec-ht--request-at received "/login")))
            (should (equal (plist-get l :method) "POST"))
            (should (equal (plist-get l :body) "user=ann&roles=admin&roles=dev"))))))))

;; Bodies that are neither JSON nor urlencoded forms: parts of a
;; multipart/form-data body (files aside), and text sent as it is.

(defun toolspec-ht--multipart-expected (boundary parts)
  "The multipart body of PARTS, each (NAME TEXT [json]), with BOUNDARY."
  (encode-coding-string
   (concat (mapconcat (lambda (p)
                        (concat "--" boundary "\r\n"
                                "Content-Disposition: form-data; name=\"" (nth 0 p) "\"\r\n"
                                (if (nth 2 p) "Content-Type: application/json\r\n" "")
                                "\r\n" (nth 1 p) "\r\n"))
                      parts "")
           "--" boundary "--\r\n")
   'utf-8))

(ert-deftest toolspec-http-multipart-and-text-bodies ()
  "Multipart fields are parts, as their encoding says; a text body is the argument's text."
  (let* ((op (toolspec-http--op-make
              :tool (list :args (list (toolspec-ht--arg "name" 'string)
                                      (toolspec-ht--arg "meta" 'object t)
                                      (toolspec-ht--arg "tags" 'array t)
                                      (toolspec-ht--arg "ids" 'array t)
                                      (toolspec-ht--arg "deep" 'object t)
                                      (toolspec-ht--arg "gone" 'string t)
                                      (toolspec-ht--arg "flag" 'boolean)))
              :exec (list :body
                          '(:contentType "multipart/form-data"
                            :args [["name" "full \"name\""] ["meta" "meta"] ["tags" "tags"] ["ids" "ids"]
                                   ["deep" "deep"] ["gone" "gone"] ["flag" "flag"]]
                            :whole :null
                            :encoding (:ids (:style "form" :explode :json-false)
                                       :deep (:style "deepObject" :explode t))))))
         (args (list "Zoë\r\nDoe" '(:plan "gold" :n 2 :off nil) ["a b" "c"] [1 2]
                     '(:k "v" :l ["x" "y"]) nil nil))
         (body (toolspec-http--body op args))
         (boundary (and (string-match "\\`multipart/form-data; boundary=\\([-a-z0-9]+\\)\\'" (car body))
                        (match-string 1 (car body)))))
    (should boundary)
    (should-not (multibyte-string-p (cdr body)))
    (should (equal (cdr body)
                   (toolspec-ht--multipart-expected
                    boundary
                    '(("full %22name%22" "Zoë\r\nDoe")
                      ("meta" "{\"plan\":\"gold\",\"n\":2,\"off\":null}" json)
                      ("tags" "a b") ("tags" "c")
                      ("ids" "1,2")
                      ("deep[k]" "v") ("deep[l][0]" "x") ("deep[l][1]" "y")
                      ("flag" "false")))))
    ;; The boundary is in no part: a value holding the one drawn makes
    ;; another be drawn.
    (let* ((tricky (toolspec-http--op-make
                    :tool (list :args (list (toolspec-ht--arg "s" 'string)))
                    :exec (list :body '(:contentType "multipart/form-data" :args [["s" "s"]] :whole :null))))
           (first (toolspec-http--body tricky '("x")))
           (b1 (substring (car first) (length "multipart/form-data; boundary=")))
           (again (cl-letf (((symbol-function 'md5)
                             (let ((n 0)) (lambda (&rest _) (format "%032d" (cl-incf n))))))
                    (toolspec-http--body tricky (list (format "a toolspec-%032d b" 1))))))
      (should (string-prefix-p "toolspec-" b1))
      (should (equal (car again) (format "multipart/form-data; boundary=toolspec-%032d" 2))))
    ;; A whole body: the members of the object; none without a value.
    (let ((whole (toolspec-http--op-make
                  :tool (list :args (list (toolspec-ht--arg "body" 'object t)))
                  :exec (list :body '(:contentType "multipart/form-data" :args [] :whole "body")))))
      (let* ((b (toolspec-http--body whole '((:a "1" :b nil))))
             (bd (substring (car b) (length "multipart/form-data; boundary="))))
        (should (equal (cdr b) (toolspec-ht--multipart-expected bd '(("a" "1"))))))
      (should-not (toolspec-http--body whole '(nil))))
    ;; Text: the argument's text in UTF-8, the charset said.
    (let ((text (toolspec-http--op-make
                 :tool (list :args (list (toolspec-ht--arg "body" 'string)))
                 :exec (list :body '(:contentType "text/x-markdown" :args [] :whole "body")))))
      (should (equal (toolspec-http--body text '("# Zoë"))
                     (cons "text/x-markdown; charset=utf-8" (encode-coding-string "# Zoë" 'utf-8))))
      (should-not (toolspec-http--body text '(nil)))
      (should (equal (cadr (should-error (toolspec-http--body text '((:a 1))) :type 'toolspec-http-error))
                     "a text/x-markdown body must be text")))
    (let ((latin (toolspec-http--op-make
                  :tool (list :args (list (toolspec-ht--arg "body" 'string)))
                  :exec (list :body '(:contentType "text/plain; charset=UTF-8" :args [] :whole "body")))))
      (should (equal (car (toolspec-http--body latin '("x"))) "text/plain; charset=UTF-8")))))

(ert-deftest toolspec-http-multipart-and-text-round-trip ()
  "Operations with multipart and text bodies, imported and called by the model."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api (lambda (_) '(:status 200 :body (:ok t))))
      (let* ((url (toolspec-http-server-url api))
             (doc (json-serialize
                   `(:openapi "3.1.0" :info (:title "Docs" :version "1")
                     :servers [(:url ,url)]
                     :paths
                     (:/profiles
                      (:post
                       (:operationId "create_profile"
                        :requestBody
                        (:required t
                         :content
                         (:multipart/form-data
                          (:schema (:type "object" :required ["name"]
                                    :properties (:name (:type "string")
                                                 :meta (:type "object" :properties (:plan (:type "string")))
                                                 :tags (:type "array" :items (:type "string"))
                                                 :avatar (:type "string" :format "binary"))))))
                        :responses (:200 (:description "ok"))))
                      :/markdown
                      (:post
                       (:operationId "render_markdown"
                        :requestBody (:required t :content (:text/plain (:schema (:type "string"))))
                        :responses (:200 (:description "ok"))))))))
             (tools (toolspec-ht--register (toolspec-parse-json (decode-coding-string doc 'utf-8)))))
        (should (equal (mapcar #'gptel-tool-name tools) '("create_profile" "render_markdown")))
        (should (equal (mapcar (lambda (a) (plist-get a :name)) (gptel-tool-args (car tools)))
                       '("name" "meta" "tags")))
        (should (cl-some (lambda (w) (string-match-p "file field \"avatar\" cannot be sent" (nth 2 w)))
                         toolspec-last-import-warnings))
        (let ((received
               (toolspec-ht--model-calls
                api tools "Make Zoë's profile, then render a title."
                '(("call_p" "create_profile"
                   "{\"name\":\"Zoë\",\"meta\":{\"plan\":\"gold\"},\"tags\":[\"a\",\"b\"]}")
                  ("call_m" "render_markdown" "{\"body\":\"# Hello, *Zoë*\"}")))))
          (let* ((p (toolspec-ht--request-at received "/profiles"))
                 (ctype (toolspec-ht--header p "content-type"))
                 (boundary (and (string-match "\\`multipart/form-data; boundary=\\(.+\\)\\'" ctype)
                                (match-string 1 ctype))))
            (should boundary)
            (should (equal (plist-get p :body)
                           (decode-coding-string
                            (toolspec-ht--multipart-expected
                             boundary '(("name" "Zoë") ("meta" "{\"plan\":\"gold\"}" json)
                                        ("tags" "a") ("tags" "b")))
                            'utf-8-unix))))
          (let ((m (toolspec-ht--request-at received "/markdown")))
            (should (equal (toolspec-ht--header m "content-type") "text/plain; charset=utf-8"))
            (should (equal (plist-get m :body) "# Hello, *Zoë*"))))))))

;;;; Lookups

(ert-deftest toolspec-http-lookups ()
  "Ids at lookup fields are resolved by the named operation, at most N calls per response."
  (toolspec-ht--with-env
    (toolspec-http-server-with
        (api (lambda (req)
               (let ((path (plist-get req :path)))
                 (cond
                  ((equal path "/trains")
                   '(:body (:trains [(:id 1 :provider_id "p1") (:id 2 :provider_id "p2")
                                     (:id 3 :provider_id "p1") (:id 4 :provider_id "p3")
                                     (:id 5 :provider_id "p4") (:id 6 :provider_id "p5")]
                            :operator (:provider_id "p2"))))
                  ((string-prefix-p "/providers/" path)
                   `(:body (:name ,(concat "Provider " (substring path 11)))))
                  (t '(:status 404 :body "no"))))))
      (let* ((search (toolspec-ht--tool
                      "search_trains" nil :server (toolspec-http-server-url api) :path "/trains"
                      :lookup [(:field "/trains/*/provider_id" :operation "get_provider" :parameter "provider_id")
                               (:field "/operator/provider_id" :operation "get_provider"
                                :parameter "$request.path.provider_id")]
                      :outputModules ["{% for t in trains %}{{ t.id }}:{{ t.provider_id_lookup.name or t.provider_id }};{% endfor %} op={{ operator.provider_id_lookup.name }}"]))
             (provider (toolspec-ht--tool
                        "get_provider" (list (toolspec-ht--arg "providerId" 'string))
                        :server (toolspec-http-server-url api) :path "/providers/{provider_id}"
                        :parameters [(:name "provider_id" :in "path" :arg "providerId")]
                        :outputModules ["{\"name\": \"{{ name }}\"}"]))
             (tools (toolspec-ht--register (list search provider)))
             (toolspec-http-max-lookups 3))
        (should (equal (toolspec-test-helpers-call (car tools))
                       "1:Provider p1;2:Provider p2;3:Provider p1;4:Provider p3;5:p4;6:p5; op=Provider p2"))
        (let ((paths (toolspec-ht--paths api)))
          (should (equal (car paths) "/trains"))
          (should (equal (sort (cdr paths) #'string<)
                         '("/providers/p1" "/providers/p2" "/providers/p3"))))
        ;; Without templates, the annotations are in the JSON.
        (let* ((plain (toolspec-ht--tool
                       "plain_trains" nil :server (toolspec-http-server-url api) :path "/trains"
                       :lookup [(:field "/trains/0/provider_id" :operation "get_provider" :parameter "provider_id")]))
               (tool (car (toolspec-ht--register (list plain provider) :source "plain"))))
          (should (string-prefix-p
                   "{\"trains\":[{\"id\":1,\"provider_id\":\"p1\",\"provider_id_lookup\":{\"name\":\"Provider p1\"}},{\"id\":2,\"provider_id\":\"p2\"}"
                   (toolspec-test-helpers-call tool))))
        ;; A lookup naming an operation that was not imported is skipped.
        (let* ((orphan (toolspec-ht--tool
                        "orphan" nil :server (toolspec-http-server-url api) :path "/trains"
                        :lookup [(:field "/trains/*/provider_id" :operation "nowhere" :parameter "x")]))
               (tool (car (toolspec-ht--register (list orphan) :source "orphan")))
               (before (length (toolspec-http-server-requests api))))
          (should (string-prefix-p "{\"trains\":[{\"id\":1,\"provider_id\":\"p1\"}" (toolspec-test-helpers-call tool)))
          (should (= (length (toolspec-http-server-requests api)) (1+ before))))))))

;;;; From the imported document to the server

(defun toolspec-ht--trains-doc (server &optional auth)
  "An OpenAPI document (YAML) of a trains API on SERVER, with OpenPlugin extensions.
AUTH is the `x-plugin-auth' type (none by default).  Its search
operation's response has an `x-lookup' on each train's provider id,
and a bootstrap operation takes the token and the user from the
credentials."
  (concat "openapi: 3.0.0\n"
          "info: {title: Trains API, version: '1'}\n"
          "servers:\n  - url: " server "\n"
          (if auth (format "x-plugin-auth: {type: %s, authorizationType: bearer}\n" auth) "")
          "paths:
  /trains:
    get:
      operationId: search_trains
      summary: Search trains
      parameters:
        - {name: to, in: query, required: true, schema: {type: string}}
      responses:
        '200':
          description: Trains
          content:
            application/json:
              schema:
                type: object
                properties:
                  trains:
                    type: array
                    items:
                      type: object
                      properties:
                        id: {type: integer}
                        provider_id:
                          type: string
                          x-lookup: {path: '/providers/{provider_id}', method: get, parameter: $request.path.provider_id}
  /providers/{provider_id}:
    get:
      operationId: get_provider
      summary: A train provider
      parameters:
        - {name: provider_id, in: path, required: true, schema: {type: string}}
      responses:
        '200': {description: The provider}
  /oauth/v1/access-tokens/{token}:
    get:
      operationId: get_token_info
      summary: Who the token is
      x-bootstrap: true
      parameters:
        - {name: token, in: path, required: true, schema: {type: string}, x-bootstrap-value: '{{ auth.token }}'}
        - {name: user, in: query, required: true, schema: {type: string}, x-bootstrap-value: '{{ auth.data.user_id }}'}
      responses:
        '200': {description: Token info}
"))

(defmacro toolspec-ht--with-doc (var text &rest body)
  "Run BODY with VAR bound to a temporary .yaml file holding TEXT."
  (declare (indent 2) (debug (symbolp form body)))
  `(let ((,var (make-temp-file "toolspec-api" nil ".yaml" ,text)))
     (unwind-protect (progn ,@body)
       (delete-file ,var))))

(defun toolspec-ht--trains-server (req)
  "The trains API's answer to REQ (under any /vN base path)."
  (let ((path (replace-regexp-in-string "\\`/v[0-9]+" "" (plist-get req :path))))
    (cond
     ((equal path "/trains")
      '(:body (:trains [(:id 1 :provider_id "p1") (:id 2 :provider_id "p2") (:id 3 :provider_id "p1")])))
     ((string-prefix-p "/providers/" path)
      `(:body (:name ,(concat "Provider " (substring path 11)))))
     ((string-prefix-p "/oauth/v1/access-tokens/" path)
      `(:body (:user_id 42 :query ,(plist-get req :query))))
     (t '(:status 404 :body "no")))))

(ert-deftest toolspec-http-imported-lookups ()
  "An `x-lookup' of an imported document resolves the ids its response holds.
The importer writes the field as a JSON pointer (/trains/*/provider_id);
the model calls the tool through gptel, and the lookup operation is
called once per distinct id."
  (toolspec-ht--with-env
    (toolspec-http-server-with (api #'toolspec-ht--trains-server)
      (toolspec-ht--with-doc doc (toolspec-ht--trains-doc (toolspec-http-server-url api "/v1"))
        (let ((tools (toolspec-import-file doc :confirm nil)))
          (toolspec-server-with
              (chat (list (toolspec-server-tool-calls-response
                           '(("call_1" "search_trains" "{\"to\":\"Lyon\"}")))
                          (toolspec-server-text-response "Done.")))
            (toolspec-ht--chat chat "Trains to Lyon?" tools)
            (should-not (toolspec-server-errors chat))
            (should (equal (plist-get (toolspec-ht--tool-message (nth 1 (toolspec-server-requests chat)) "call_1")
                                      :content)
                           (concat "{\"trains\":[{\"id\":1,\"provider_id\":\"p1\",\"provider_id_lookup\":{\"name\":\"Provider p1\"}},"
                                   "{\"id\":2,\"provider_id\":\"p2\",\"provider_id_lookup\":{\"name\":\"Provider p2\"}},"
                                   "{\"id\":3,\"provider_id\":\"p1\",\"provider_id_lookup\":{\"name\":\"Provider p1\"}}]}"))))
          (let ((paths (toolspec-ht--paths api)))
            (should (equal (car paths) "/v1/trains?to=Lyon"))
            (should (equal (sort (cdr paths) #'string<) '("/v1/providers/p1" "/v1/providers/p2")))))))))

(ert-deftest toolspec-http-imported-bootstrap ()
  "The `x-bootstrap-value's of an imported document are sent.
The importer gives bootstrap parameters no argument; their values are
rendered over `auth.token' and `auth.data.user_id' and reach the
server, in the path and the query; the text for the model is
scrubbed and its error messages show no value made from the secret."
  (toolspec-ht--with-env
    (toolspec-ht--authinfo authinfo (format "machine 127.0.0.1 login alice password %s" toolspec-ht--secret))
    (toolspec-http-server-with (api #'toolspec-ht--trains-server)
      (toolspec-ht--with-doc doc (toolspec-ht--trains-doc (toolspec-http-server-url api "/v1") "user_http")
        (toolspec-import-file doc :credentials "127.0.0.1")
        (let ((text (toolspec-openapi-bootstrap "Trains API"))
              (req (car (toolspec-http-server-requests api))))
          (should (equal text (concat "# Data from API Trains API (bootstrap)\n\n"
                                      "## get_token_info\n\n{\"user_id\":42,\"query\":\"user=alice\"}\n")))
          (should (= (length (toolspec-http-server-requests api)) 1))
          (should (equal (plist-get req :target)
                         (concat "/v1/oauth/v1/access-tokens/" toolspec-ht--secret "?user=alice")))
          (should (equal (toolspec-ht--header req "authorization") (concat "Bearer " toolspec-ht--secret))))
        ;; A failing bootstrap call names the request without the secret.
        (toolspec-http-server-with (down (lambda (req) (list :status 404 :body (plist-get req :target))))
          (toolspec-import-file doc :credentials "127.0.0.1" :server (toolspec-http-server-url down "/v2"))
          (let ((text (toolspec-openapi-bootstrap "Trains API")))
            (should (string-match-p
                     (regexp-quote (concat "Error: HTTP 404 Not Found from GET "
                                           (toolspec-http-server-url down "/v2/oauth/v1/access-tokens/{token}?user=alice")
                                           ": /v2/oauth/v1/access-tokens/[redacted]?user=alice"))
                     text))
            (should-not (string-search toolspec-ht--secret text))))))))

;;;; Credentials: approval and every encoding

(ert-deftest toolspec-http-credential-approval ()
  "A document's server gets the user's credential only when its import approved its host.
Imported from Lisp without approval, or with another host approved,
the tool sends nothing and says how to approve; the `:credentials'
option and `toolspec-http-approved-credentials' (for that file
only) approve.  The import preview, driven by keys, shows the host
and asks when registering."
  (toolspec-ht--with-env
    (toolspec-ht--authinfo authinfo (format "machine 127.0.0.1 login alice password %s" toolspec-ht--secret))
    (toolspec-http-server-with
        (api (lambda (req) `(:body (:auth ,(or (toolspec-ht--header req "authorization") "none")))))
      (toolspec-ht--with-doc doc (toolspec-ht--trains-doc (toolspec-http-server-url api "/v1") "service_http")
        (toolspec-ht--with-doc copy (toolspec-ht--trains-doc (toolspec-http-server-url api "/v1") "service_http")
          (let* ((call (lambda (file)
                         (toolspec-test-helpers-call (cl-find "search_trains" (gethash (expand-file-name file) toolspec-gptel--registered)
                                                             :key #'gptel-tool-name :test #'equal)
                                                    "Lyon")))
                 (refused (lambda (result)
                            (and (string-match-p "\\`Error: API \"Trains API\" needs the credential auth-source holds for 127\\.0\\.0\\.1, and using it was not approved when the tool was imported, so nothing was sent\\." result)
                                 (string-match-p ":credentials '(\"127\\.0\\.0\\.1\")" result)))))
            ;; Not approved: nothing is sent.
            (toolspec-import-file doc)
            (should (funcall refused (funcall call doc)))
            (should (equal (toolspec-http-credential-hosts (toolspec-read-file doc) nil)
                           '(("127.0.0.1" "Trains API" nil))))
            (should (equal (toolspec-http-credential-hosts (toolspec-read-file doc) '(:credentials "127.0.0.1"))
                           '(("127.0.0.1" "Trains API" t))))
            (toolspec-import-file doc :credentials '("localhost" "api.example.com"))
            (should (funcall refused (funcall call doc)))
            (should-not (toolspec-http-server-requests api))
            ;; Approved by the option, then by the customizable alist for this file only.
            (toolspec-import-file doc :credentials "127.0.0.1")
            (should (equal (funcall call doc) "{\"auth\":\"Bearer [redacted]\"}"))
            (let ((toolspec-http-approved-credentials (list (cons doc '("127.0.0.1")))))
              (toolspec-import-file doc)
              (toolspec-import-file copy)
              (should (equal (funcall call doc) "{\"auth\":\"Bearer [redacted]\"}"))
              (should (funcall refused (funcall call copy))))
            (should (equal (mapcar (lambda (r) (toolspec-ht--header r "authorization"))
                                   (toolspec-http-server-requests api))
                           (list (concat "Bearer " toolspec-ht--secret) (concat "Bearer " toolspec-ht--secret))))
            ;; The preview names the host and asks: n, then y.
            (save-window-excursion
              (switch-to-buffer "*scratch*")
              (dolist (answer '("n" "y"))
                (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-import-file" (kbd "RET") doc (kbd "RET")))
                (with-current-buffer "*toolspec-import*"
                  (should (string-match-p
                           "^credential: API \"Trains API\" would send the auth-source credential for 127\\.0\\.0\\.1: you are asked when you register"
                           (buffer-string))))
                (execute-kbd-macro (vconcat "y" answer))
                (should-not (get-buffer "*toolspec-import*"))
                (let ((result (funcall call doc)))
                  (if (equal answer "n")
                      (should (funcall refused result))
                    (should (equal result "{\"auth\":\"Bearer [redacted]\"}"))))))
            (should (= (length (toolspec-http-server-requests api)) 3))))))))

(defun toolspec-ht--encodings (s)
  "S as a leak could write it: raw, percent-encoded, base64, reversed."
  (let ((out nil))
    (dolist (x (list s (reverse s)))
      (let ((hex (url-hexify-string x))
            (b64 (base64-encode-string (encode-coding-string x 'utf-8) t)))
        (push x out)
        (push hex out)
        (push (downcase hex) out)
        (push (string-replace "%20" "+" hex) out)
        ;; minijinja's urlencode keeps / and encodes ~.
        (push (string-replace "~" "%7E" (string-replace "%2F" "/" hex)) out)
        (push (substring b64 0 (- (length b64) 4)) out)
        (push (string-replace "+" "-" (string-replace "/" "_" (substring b64 0 (- (length b64) 4)))) out)))
    (delete-dups out)))

(defconst toolspec-ht--echo-doc
  "openapi: 3.0.0
info: {title: Echo API, version: '1'}
servers:
  - url: %s
x-plugin-auth: {type: user_http, authorizationType: bearer}
paths:
  /boot/{token}:
    get:
      operationId: boot_path
      x-bootstrap: true
      parameters:
        - {name: token, in: path, required: true, schema: {type: string}, x-bootstrap-value: '{{ auth.token }}'}
      responses: {'200': {description: ok}}
  /rev:
    get:
      operationId: boot_reversed
      x-bootstrap: true
      parameters:
        - {name: t, in: query, required: true, schema: {type: string}, x-bootstrap-value: '{{ auth.token | reverse }}'}
      responses: {'200': {description: ok}}
  /data:
    get:
      operationId: boot_data
      x-bootstrap: true
      parameters:
        - {name: d, in: query, required: true, schema: {type: string}, x-bootstrap-value: '{{ auth.data | tojson }}'}
        - {name: o, in: query, required: true, schema: {type: string}, x-bootstrap-value: 'otp={{ auth.data.otp }}'}
      responses: {'200': {description: ok}}
  /echo:
    get:
      operationId: echo_headers
      summary: Echo the request headers
      parameters:
        - {name: status, in: query, required: true, schema: {type: string}}
      responses:
        '200':
          description: ok
          x-filter: '{\"rev\": \"{{ headers.authorization | reverse }}\", \"enc\": \"{{ headers.authorization | urlencode }}\"}'
"
  "An OpenAPI document (YAML, server left as %s) whose templates try to leak the credential.")

(ert-deftest toolspec-http-secret-in-no-encoding ()
  "The credential reaches no text the model or a buffer sees, in any encoding.
A secret with characters URLs encode (/ + = ~ space) and an `otp'
field are planted in auth-source.  An imported document renders the
secret into a bootstrap path (answered 404 quoting the path), the
secret reversed into a query (answered 500 quoting it), and
`auth.data' into a query echoed back; its response filter reverses
and URL-encodes an echoed Authorization header, called by the model
through gptel (200 and 404).  The bootstrap runs by keys in a chat
buffer.  Every buffer, message, tool result and error is searched for
the secret and the otp: raw, percent-encoded (three ways), base64,
reversed."
  (let* ((secret (format "tsk/%s+x=y ~z%s" (substring (md5 (format "%s" (random))) 0 12)
                         (substring (md5 (format "%s" (float-time))) 0 12)))
         (otp (format "otp%s" (md5 (format "%s %s" (random) (emacs-pid)))))
         (needles (cons otp (toolspec-ht--encodings secret))))
    (toolspec-ht--with-env
      (toolspec-ht--authinfo authinfo (format "machine 127.0.0.1 login alice password \"%s\" otp %s" secret otp))
      (with-current-buffer (messages-buffer)
        (let ((inhibit-read-only t)) (erase-buffer)))
      (toolspec-http-server-with
          (api (lambda (req)
                 (let ((path (plist-get req :path)))
                   (cond
                    ((string-prefix-p "/v1/boot/" path)
                     (list :status 404 :body (concat "no such token: " (plist-get req :target))))
                    ((equal path "/v1/rev") (list :status 500 :body (plist-get req :target)))
                    ((equal path "/v1/data") `(:body (:query ,(plist-get req :query))))
                    ((equal path "/v1/echo")
                     (list :status (if (equal (plist-get req :query) "status=404") 404 200)
                           :body `(:headers (:authorization ,(toolspec-ht--header req "authorization")))))))))
        (toolspec-ht--with-doc doc (format toolspec-ht--echo-doc (toolspec-http-server-url api "/v1"))
          (let* ((tools (toolspec-import-file doc :credentials "127.0.0.1" :confirm nil))
                 (chat-buffer (get-buffer-create "*chat with Echo API*"))
                 (result nil))
            ;; The bootstrap, by keys, inserted into the chat buffer.
            (save-window-excursion
              (switch-to-buffer chat-buffer)
              (insert "### ")
              (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-openapi-bootstrap" (kbd "RET")
                                          "Echo API" (kbd "RET"))))
            ;; The model calls the echo tool through gptel.
            (toolspec-server-with
                (chat (list (toolspec-server-tool-calls-response
                             '(("call_1" "echo_headers" "{\"status\":\"200\"}")
                               ("call_2" "echo_headers" "{\"status\":\"404\"}")))
                            (toolspec-server-text-response "Echoed.")))
              (setq result (toolspec-ht--chat chat "Echo?" tools))
              (let* ((text (with-current-buffer chat-buffer (buffer-string)))
                     (second (nth 1 (toolspec-server-requests chat)))
                     (ok (plist-get (toolspec-ht--tool-message second "call_1") :content))
                     (missing (plist-get (toolspec-ht--tool-message second "call_2") :content))
                     (received (toolspec-http-server-requests api))
                     (data (cl-find "/v1/data" received :key (lambda (r) (plist-get r :path)) :test #'equal)))
                ;; What the model got: the filter saw the echo scrubbed.
                (should (equal ok "{\"rev\":\"]detcader[ reraeB\",\"enc\":\"Bearer%20%5Bredacted%5D\"}"))
                (should (string-prefix-p "Error: HTTP 404 Not Found from GET " missing))
                (should (string-match-p "Bearer \\[redacted\\]" missing))
                ;; The server got what the templates made of the secret.
                (should (member (concat "/v1/boot/" (url-hexify-string secret)) (toolspec-ht--paths api)))
                (should (member (concat "/v1/rev?t=" (url-hexify-string (reverse secret))) (toolspec-ht--paths api)))
                ;; auth.data holds the fields OpenPlugin names, not the otp.
                (should (string-match "\\`d=\\([^&]*\\)&o=\\(.*\\)\\'" (plist-get data :query)))
                (let ((d (match-string 1 (plist-get data :query)))
                      (o (match-string 2 (plist-get data :query))))
                  (should (equal (json-parse-string (url-unhex-string d) :object-type 'alist)
                                 `((access_token . ,secret) (user_id . "alice"))))
                  (should (equal o "otp%3D")))
                (should (equal (toolspec-ht--header (car (last received)) "authorization") (concat "Bearer " secret)))
                ;; What the model and the chat buffer got.
                (should (string-match-p (regexp-quote (concat "## boot_path\n\nError: HTTP 404 Not Found from GET "
                                                              (toolspec-http-server-url api "/v1/boot/{token}")
                                                              ": no such token: /v1/boot/[redacted]"))
                                        text))
                (should (string-match-p (regexp-quote (concat "## boot_reversed\n\nError: HTTP 500 Internal Server Error from GET "
                                                              (toolspec-http-server-url api "/v1/rev?t=[redacted]")
                                                              ": /v1/rev?t=[redacted]"))
                                        text))
                                ;; The value made from the secret is scrubbed whole.
                (should (string-match-p (regexp-quote "## boot_data\n\n{\"query\":\"d=[redacted]&o=otp%3D\"}") text))
                (should (equal (plist-get result :text) "Echoed."))
                ;; Nowhere, in no encoding.
                (let ((haystacks (list text ok missing
                                       (prin1-to-string (toolspec-server-requests chat))
                                       (prin1-to-string (plist-get result :events))
                                       (toolspec-ht--all-buffers-text)
                                       (with-current-buffer (messages-buffer) (buffer-string))
                                       (prin1-to-string tools))))
                  (dolist (hay haystacks)
                    (dolist (needle needles)
                      (should-not (string-search needle hay))
                      (should-not (string-search (downcase needle) (downcase hay))))))))
            (kill-buffer chat-buffer)))))))

(provide 'toolspec-http-test)
;;; toolspec-http-test.el ends here
