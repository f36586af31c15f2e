;;; toolspec-openapi-test.el --- ERT tests of OpenAPI import -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; Tests of OpenAPI documents as tools from Lisp, against the built
;; module: reading JSON and YAML with and without a selection, the
;; `:executor' plist, errors, registering with the real gptel through
;; `toolspec-import-file', the interactive `toolspec-import-openapi', and
;; GitHub's REST API description (fetched into .deps/testdata by
;; scripts/fetch-test-data.sh).
;;
;;   emacs -Q --batch -L lisp -L .deps/gptel -l test/toolspec-openapi-test.el \
;;         -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'toolspec)
(require 'toolspec-openapi)
(require 'toolspec-gptel)
(require 'toolspec-ui)
(require 'gptel)
(require 'toolspec-test-helpers)

(defvar gptel--known-tools)
(defvar gptel-tools)

(defconst toolspec-openapi-test--root
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name)))
  "The project's root directory.")

(defconst toolspec-openapi-test--pets
  (expand-file-name "test/fixtures/openapi-pets.yaml" toolspec-openapi-test--root)
  "A small OpenAPI document in YAML.")

(defun toolspec-openapi-test--testdata (file)
  "FILE under the fetched test data; fails when the data is missing."
  (let* ((dir (or (getenv "TOOLSPEC_TESTDATA")
                  (expand-file-name ".deps/testdata" toolspec-openapi-test--root)))
         (path (expand-file-name file dir)))
    (unless (file-exists-p path)
      (ert-fail (format "%s is missing: run scripts/fetch-test-data.sh (make test does)" path)))
    path))

(defun toolspec-openapi-test--names (tools)
  "The names of TOOLS."
  (mapcar (lambda (tl) (plist-get tl :name)) tools))

(defun toolspec-openapi-test--tool (tools name)
  "The tool named NAME among TOOLS."
  (or (cl-find name tools :key (lambda (tl) (plist-get tl :name)) :test #'equal)
      (ert-fail (format "no tool %s in %S" name (toolspec-openapi-test--names tools)))))

(defun toolspec-openapi-test--arg (tool name)
  "The argument named NAME of TOOL."
  (cl-find name (plist-get tool :args) :key (lambda (a) (plist-get a :name)) :test #'equal))

(defmacro toolspec-openapi-test--with-temp-file (var suffix content &rest body)
  "Bind VAR to a temporary file named *SUFFIX holding CONTENT during BODY."
  (declare (indent 3))
  `(let ((,var (make-temp-file "toolspec-openapi" nil ,suffix ,content)))
     (unwind-protect (progn ,@body)
       (delete-file ,var))))

;;;; Reading

(ert-deftest toolspec-openapi-test-read-yaml-every-operation ()
  "A YAML document gives one plist per operation, with its executor."
  (let* ((tools (toolspec-read-openapi toolspec-openapi-test--pets))
         (list-pets (toolspec-openapi-test--tool tools "listPets"))
         (kind (toolspec-openapi-test--arg list-pets "kind"))
         (limit (toolspec-openapi-test--arg list-pets "limit"))
         (exec (plist-get list-pets :executor)))
    (should (equal (toolspec-openapi-test--names tools) '("listPets" "addPet" "showPet" "placeOrder")))
    (should (equal (plist-get list-pets :description)
                   "List pets\nExample: \"Show me three cats\" -> listPets(kind=\"cat\", limit=3)"))
    (should (eq (plist-get kind :type) 'string))
    (should (equal (plist-get kind :enum) ["cat" "dog"]))
    (should-not (plist-get kind :optional))
    (should (eq (plist-get limit :type) 'integer))
    (should (eq (plist-get limit :optional) t))
    (should (equal (plist-get limit :description) "How many to list"))
    (should (equal (plist-get exec :type) "openapi"))
    (should (equal (plist-get exec :server) "https://eu.shop.example/v1"))
    (should (equal (plist-get exec :method) "GET"))
    (should (equal (plist-get exec :path) "/pets"))
    (should (equal (plist-get exec :parameters)
                   [(:name "kind" :in "query" :arg "kind") (:name "limit" :in "query" :arg "limit")]))
    (should (eq (plist-get exec :body) :null))
    (should (equal (plist-get exec :auth) '(:type "user_http" :authorizationType "bearer")))
    (should (equal (plist-get exec :filter) "{% for p in pets %}{{ p.name }} {% endfor %}"))
    (should (equal (plist-get exec :title) "Pet shop"))
    (should (equal toolspec-last-import-paths
                   '("paths./pets.get" "paths./pets.post" "paths./pets/{petId}.get" "paths./orders.post")))))

(ert-deftest toolspec-openapi-test-bodies-and-extensions ()
  "Body properties are arguments; x-dependent and recursion are described."
  (let* ((tools (toolspec-read-openapi toolspec-openapi-test--pets))
         (add (toolspec-openapi-test--tool tools "addPet"))
         (order (toolspec-openapi-test--tool tools "placeOrder"))
         (show (toolspec-openapi-test--tool tools "showPet")))
    ;; `id' is readOnly; `parent' recurs into Pet and is not expanded.
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get add :args)) '("name" "parent")))
    (should (equal (plist-get (plist-get add :executor) :body)
                   '(:contentType "application/json" :args [["name" "name"] ["parent" "parent"]] :whole :null)))
    (should (string-match-p "recursive" (plist-get (toolspec-openapi-test--arg add "parent") :description)))
    (should (cl-some (lambda (w) (string-match-p "recursive \\$ref cycle" (nth 2 w))) toolspec-last-import-warnings))
    ;; A body that is an array is one argument.
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get order :args)) '("body")))
    (should (eq (plist-get (car (plist-get order :args)) :type) 'array))
    (should (equal (plist-get (toolspec-openapi-test--arg show "petId") :description)
                   "The pet's id. Get this value with the tool listPets."))))

(ert-deftest toolspec-openapi-test-selection ()
  "Tags, path prefixes and names select operations; :server replaces the server."
  (let ((names (lambda (&rest options)
                 (toolspec-openapi-test--names
                  (apply #'toolspec-read-openapi toolspec-openapi-test--pets options)))))
    (should (equal (funcall names :tags '("store")) '("placeOrder")))
    (should (equal (funcall names :tags "store") '("placeOrder")))
    (should (equal (funcall names :paths '("/pets/")) '("showPet")))
    (should (equal (funcall names :tags '("pets") :paths '("/pets")) '("listPets" "addPet" "showPet")))
    (should (equal (funcall names :operations '("showPet" "POST /orders")) '("showPet" "placeOrder")))
    (should (equal (funcall names :tags '("store") :operations '("listPets")) '("listPets" "placeOrder")))
    ;; Keys that are not about selection are ignored.
    (should (equal (funcall names :operations '("addPet") :category "x" :functions nil) '("addPet")))
    (let ((tool (car (toolspec-read-openapi toolspec-openapi-test--pets
                                            :operations '("listPets") :server "http://localhost:8000/"))))
      (should (equal (plist-get (plist-get tool :executor) :server) "http://localhost:8000")))))

(ert-deftest toolspec-openapi-test-generic-readers-detect-openapi ()
  "`toolspec-read-file' and `toolspec-parse-json' read OpenAPI documents."
  (should (equal (toolspec-openapi-test--names (toolspec-read-file toolspec-openapi-test--pets))
                 '("listPets" "addPet" "showPet" "placeOrder")))
  (let ((json "{\"swagger\": \"2.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"host\": \"h.example\",
                \"paths\": {\"/a/{id}\": {\"get\": {\"parameters\": [{\"name\": \"id\", \"in\": \"path\", \"type\": \"integer\"}],
                                                   \"responses\": {}}}}}"))
    (let ((tool (car (toolspec-parse-json json))))
      (should (equal (plist-get tool :name) "get_a_id"))
      (should (equal (plist-get (plist-get tool :executor) :server) "https://h.example"))
      (should (eq (plist-get (car (plist-get tool :args)) :type) 'integer)))
    (should (equal (toolspec-openapi-test--names (toolspec-parse-json json 'openapi)) '("get_a_id")))
    (should (equal (toolspec-openapi-test--names (toolspec-parse-openapi json :paths '("/a"))) '("get_a_id")))
    (toolspec-openapi-test--with-temp-file file ".json" json
      (should (equal (toolspec-openapi-test--names (toolspec-read-file file)) '("get_a_id"))))))

(ert-deftest toolspec-openapi-test-tools-are-valid-and-convert ()
  "Every imported tool passes `toolspec-check' and converts to JSON."
  (dolist (tool (toolspec-read-openapi toolspec-openapi-test--pets))
    (should (eq (toolspec-check tool) tool))
    (should-not (cl-remove-if-not (lambda (p) (eq (car p) 'error)) (toolspec-validate tool)))
    (let ((json (json-parse-string (toolspec-to-json tool 'openai) :object-type 'alist)))
      (should (equal (alist-get 'name (alist-get 'function json)) (plist-get tool :name)))
      (should-not (alist-get 'executor (alist-get 'function json))))))

(ert-deftest toolspec-openapi-test-operations ()
  "`toolspec-openapi-operations' lists what can be imported."
  (let ((ops (toolspec-openapi-operations toolspec-openapi-test--pets)))
    (should (= (length ops) 4))
    (should (equal (car ops) '(:name "listPets" :method "GET" :path "/pets" :tags ("pets")
                                     :operationId "listPets" :summary "List pets" :deprecated nil)))))

;;;; Errors

(ert-deftest toolspec-openapi-test-errors ()
  "Bad documents and options are `toolspec-error's naming the file and place."
  (let ((err (should-error (toolspec-read-openapi toolspec-openapi-test--pets :operations '("listPet"))
                           :type 'toolspec-format-error)))
    (should (string-match-p "openapi-pets\\.yaml: no operation \"listPet\".*did you mean listPets" (cadr err)))
    (should (equal (plist-get (toolspec-error-details err) :file) toolspec-openapi-test--pets)))
  (should-error (toolspec-read-openapi toolspec-openapi-test--pets :tags 3) :type 'toolspec-format-error)
  (should-error (toolspec-read-openapi toolspec-openapi-test--pets :server 'x) :type 'toolspec-format-error)
  (toolspec-openapi-test--with-temp-file file ".yaml" "openapi: 3.0.0\npaths:\n  /a: [1,\n"
    (let ((err (should-error (toolspec-read-openapi file) :type 'toolspec-json-error)))
      (should (string-match-p "invalid YAML" (cadr err)))
      (should (plist-get (toolspec-error-details err) :line)))
    (should-error (toolspec-read-file file) :type 'toolspec-json-error))
  (let ((err (should-error (toolspec-parse-openapi "{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {\"get\": {\"parameters\": {}}}}}")
                           :type 'toolspec-format-error)))
    (should (equal (plist-get (toolspec-error-details err) :path) "paths./a.get.parameters")))
  (should-error (toolspec-parse-openapi "{\"tools\": []}") :type 'toolspec-format-error)
  (should-error (toolspec-read-openapi "/nonexistent/api.yaml") :type 'toolspec-error))

;;;; gptel

(ert-deftest toolspec-openapi-test-import-file-selects-and-binds ()
  "`toolspec-import-file' passes the selection on; the executor resolver binds."
  (toolspec-test-helpers-with-clean-state
    (let* ((seen nil)
           (toolspec-executor-makers
            `(("openapi" . ,(lambda (tool options)
                              (push (list (plist-get tool :name) (plist-get (plist-get tool :executor) :path)
                                          (plist-get options :category))
                                    seen)
                              (list :function (lambda (&rest args) (format "called with %S" args))
                                    :confirm t)))))
           (made (toolspec-import-file toolspec-openapi-test--pets :tags '("pets") :category "shop")))
      (should (equal (mapcar #'gptel-tool-name made) '("listPets" "addPet" "showPet")))
      (should (equal (reverse seen) '(("listPets" "/pets" "shop") ("addPet" "/pets" "shop")
                                      ("showPet" "/pets/{petId}" "shop"))))
      (let ((tool (gptel-get-tool '("shop" "showPet"))))
        (should (gptel-tool-confirm tool))
        (should (equal (funcall (gptel-tool-function tool) 7) "called with (7)"))
        ;; Arguments are checked against the schema before the call.
        (should (string-match-p "invalid arguments" (funcall (gptel-tool-function tool) "seven")))))))

(ert-deftest toolspec-openapi-test-interactive-import ()
  "M-x toolspec-import-openapi: pick a tag and an operation, preview, register."
  (toolspec-test-helpers-with-clean-state
    (execute-kbd-macro
     (vconcat (kbd "M-x") "toolspec-import-openapi" (kbd "RET")
              toolspec-openapi-test--pets (kbd "RET")
              "tag: store (1 operation),GET /pets/{petId}  (pets) showPet" (kbd "RET")))
    (should (eq (window-buffer) (get-buffer "*toolspec-import*")))
    (let ((text (with-current-buffer "*toolspec-import*" (buffer-string))))
      (should (string-match-p "^showPet$" text))
      (should (string-match-p "^placeOrder$" text))
      (should-not (string-match-p "^listPets$" text))
      ;; The document's API authenticates: the preview names the host.
      (should (string-match-p "^credential: API \"Pet shop\" would send the auth-source credential for eu\\.shop\\.example: you are asked when you register" text)))
    ;; Registering asks about it; n registers without the credential.
    (execute-kbd-macro (vconcat (kbd "C-c C-c") "n"))
    (should (gptel-tool-p (gptel-get-tool '("pet-shop" "showPet"))))
    (should (gptel-tool-p (gptel-get-tool '("pet-shop" "placeOrder"))))
    (should-not (ignore-errors (gptel-get-tool '("pet-shop" "listPets"))))))

(ert-deftest toolspec-openapi-test-selection-candidates ()
  "Completion candidates name tags with their counts and operations."
  (let ((cands (toolspec-openapi--candidates (toolspec-openapi-operations toolspec-openapi-test--pets))))
    (should (equal (mapcar #'car cands)
                   '("tag: pets (3 operations)" "tag: store (1 operation)"
                     "GET /pets  (pets) listPets" "POST /pets  (pets) addPet"
                     "GET /pets/{petId}  (pets) showPet" "POST /orders  (store) placeOrder")))
    (should (equal (cdr (assoc "GET /pets  (pets) listPets" cands)) '(:operations "listPets" "List pets")))))

;;;; GitHub's REST API

(ert-deftest toolspec-openapi-test-github ()
  "GitHub's API description: every operation, a selection, valid plists."
  (let* ((file (toolspec-openapi-test--testdata "octokit-openapi/generated/api.github.com.json"))
         (all (toolspec-read-file file))
         (issues (toolspec-read-openapi file :tags '("issues")))
         (create (toolspec-openapi-test--tool issues "issues_create"))
         (exec (plist-get create :executor)))
    (should (> (length all) 1000))
    (should (= (length (delete-dups (toolspec-openapi-test--names all))) (length all)))
    (should (< 40 (length issues) 100))
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get create :args))
                   '("owner" "repo" "title" "body" "assignee" "milestone" "labels" "assignees"
                     "issue_field_values" "type")))
    (should (equal (plist-get exec :server) "https://api.github.com"))
    (should (equal (plist-get exec :path) "/repos/{owner}/{repo}/issues"))
    (should (equal (plist-get exec :method) "POST"))
    (dolist (tool issues)
      (should-not (cl-remove-if-not (lambda (p) (eq (car p) 'error)) (toolspec-validate tool))))))

(provide 'toolspec-openapi-test)
;;; toolspec-openapi-test.el ends here
