;;; toolspec-test.el --- ERT tests of toolspec's core API -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; Tests of the public API against the built module, in batch Emacs:
;; reading every format, the plists produced, writing every dialect,
;; round trips, validation of hand-written plists (including the checks
;; on `:function' only Emacs can make), and every error path, which must
;; end in a `toolspec-error', never in `rust-panic' or a dead Emacs.
;;
;;   emacs -Q --batch -L lisp -l test/toolspec-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'json)
(require 'toolspec)

(defconst toolspec-test--root
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name)))
  "The project's root directory.")

(defun toolspec-test--example (name)
  "Path of example file NAME."
  (expand-file-name (concat "examples/" name) toolspec-test--root))

(defun toolspec-test--json (string)
  "Parse STRING into alists with sorted keys, for order-free comparison."
  (toolspec-test--canon (json-parse-string string :object-type 'alist
                                           :false-object :false :null-object :null)))

(defun toolspec-test--canon (v)
  "V with every alist's keys sorted."
  (cond ((and (consp v) (consp (car v)) (symbolp (caar v)))
         (sort (mapcar (lambda (kv) (cons (car kv) (toolspec-test--canon (cdr kv)))) v)
               (lambda (a b) (string< (car a) (car b)))))
        ((vectorp v) (vconcat (mapcar #'toolspec-test--canon v)))
        (t v)))

(defmacro toolspec-test--with-temp-file (var content &rest body)
  "Bind VAR to a temporary file holding CONTENT (a string) during BODY."
  (declare (indent 2))
  `(let ((,var (make-temp-file "toolspec-test" nil ".json")))
     (unwind-protect
         (progn (let ((coding-system-for-write 'no-conversion))
                  (write-region ,content nil ,var nil 'silent))
                ,@body)
       (delete-file ,var))))

(defun toolspec-test--walk (v fn)
  "Call FN on every plist or alist key found in V."
  (cond ((and (consp v) (keywordp (car v)))
         (cl-loop for (k x) on v by #'cddr do (funcall fn k) (toolspec-test--walk x fn)))
        ((consp v) (dolist (x v) (toolspec-test--walk x fn)))
        ((vectorp v) (mapc (lambda (x) (toolspec-test--walk x fn)) v))))

;;;; Reading

(ert-deftest toolspec-test-kept-tools-refuse-other-values ()
  "The module's functions on kept tools refuse what is not one, clearly.
A kept tool comes from an import asked to keep its tools (see
`toolspec--keep-tools'); anything else, another user pointer
included, is a `toolspec-error' saying what was expected."
  (let* ((kept (let ((toolspec--keep-tools t))
                 (toolspec-parse-json "{\"tools\": [{\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}}]}")
                 toolspec--keep-tools))
         (tool (car kept))
         (checker (toolspec--mod-compile-args "(:name \"a\" :args nil)"))
         (refused (lambda (form message)
                    (let ((err (should-error (funcall form) :type 'toolspec-error)))
                      (should (string-match-p message (cadr err)))))))
    (should (= (length kept) 1))
    (should (user-ptrp tool))
    ;; Written under the name given, as its plist is.
    (should (equal (toolspec--mod-kept-texts (vector tool) ["b"] "mcp")
                   (list (toolspec-to-json (list :name "b" :args nil) 'mcp))))
    (should (equal (plist-get (toolspec--mod-kept-plist tool) :name) "a"))
    (funcall refused (lambda () (toolspec--mod-kept-texts (vector checker) ["a"] "mcp"))
             "expected a tool an import kept")
    (funcall refused (lambda () (toolspec--mod-kept-texts [1] ["a"] "mcp")) "expected a tool an import kept")
    (funcall refused (lambda () (toolspec--mod-kept-texts (list tool) ["a"] "mcp"))
             "expected a vector of kept tools")
    (funcall refused (lambda () (toolspec--mod-kept-texts (vector tool) [] "mcp"))
             "expected as many names as kept tools")
    (funcall refused (lambda () (toolspec--mod-kept-to-json (vector tool) [a] "mcp" t))
             "item 0 of the names must be a string")
    (funcall refused (lambda () (toolspec--mod-kept-to-json (vector tool) '("a") "mcp" t))
             "the names must be a vector of strings")
    (funcall refused (lambda () (toolspec--mod-kept-plist "a")) "expected a tool an import kept")))

(ert-deftest toolspec-test-safe-names ()
  "Names made valid and different, nil for those kept, a clear error else."
  (should (equal (toolspec-safe-names '("math.sum" "math_sum" "ok" "é.x") 'openai)
                 '("math_sum_5d0c57e6" nil nil "__x")))
  (should (equal (toolspec-safe-names '("a" "b") 'gptel) '(nil nil)))
  (should (equal (toolspec-safe-names nil 'gptel) nil))
  ;; As many as given, in order, each made from its own name.
  (let* ((names (cl-loop for i below 3000 collect (format "n.%d" i)))
         (new (toolspec-safe-names names 'anthropic)))
    (should (equal new (mapcar (lambda (n) (string-replace "." "_" n)) names))))
  (let ((err (should-error (toolspec-safe-names '("x" a) 'openai) :type 'toolspec-error)))
    (should (string-match-p "item 1 of the tool names must be a string" (cadr err)))))

(ert-deftest toolspec-test-parse-openai-chat ()
  "OpenAI chat tools become plists following the seed-003 rules."
  (let* ((tools (toolspec-parse-json
                 "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",
                    \"description\":\"Weather now\",
                    \"parameters\":{\"type\":\"object\",
                      \"properties\":{\"location\":{\"type\":\"string\",\"description\":\"City\"},
                                      \"unit\":{\"type\":\"string\",\"enum\":[\"c\",\"f\"],\"description\":\"Unit\",\"default\":\"c\"},
                                      \"days\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"description\":\"Days\"},
                                      \"opts\":{\"type\":\"object\",\"description\":\"More\",
                                                \"properties\":{\"z\":{\"type\":\"boolean\",\"default\":false},
                                                                \"a\":{\"type\":\"string\",\"default\":null}},
                                                \"required\":[\"z\"]}},
                      \"required\":[\"location\"]}}}]"))
         (tool (car tools))
         (args (plist-get tool :args)))
    (should (= (length tools) 1))
    (should (equal (plist-get tool :name) "get_weather"))
    (should (equal (plist-get tool :description) "Weather now"))
    (should (listp args))
    (should (equal (mapcar (lambda (a) (plist-get a :name)) args) '("location" "unit" "days" "opts")))
    (should (equal (car args) '(:name "location" :type string :description "City")))
    (should (equal (nth 1 args)
                   '(:name "unit" :type string :enum ["c" "f"] :description "Unit" :default "c" :optional t)))
    (should (equal (plist-get (nth 2 args) :items) '(:type integer)))
    (let ((opts (nth 3 args)))
      (should (eq (plist-get opts :type) 'object))
      (should (equal (plist-get opts :properties)
                     '(:z (:type boolean :default :json-false) :a (:type string :default :null))))
      (should (equal (plist-get opts :required) ["z"]))
      (should-not (plist-member (plist-get (plist-get opts :properties) :z) :optional)))
    (should-not (plist-get tool :function))))

(ert-deftest toolspec-test-parse-every-example ()
  "Every example file reads into tools whose plists validate without errors."
  (dolist (file (directory-files (expand-file-name "examples" toolspec-test--root) t "\\.json\\'"))
    (let ((tools (toolspec-read-file file)))
      (should (consp tools))
      (dolist (tool tools)
        (should (stringp (plist-get tool :name)))
        (should-not (cl-remove-if-not (lambda (p) (eq (car p) 'error)) (toolspec-validate tool)))
        ;; The arguments are self-contained (`$defs' stay in :schema-extra).
        (toolspec-test--walk (plist-get tool :args)
                             (lambda (k) (should-not (memq k '(:$ref :$defs :definitions)))))))))

(ert-deftest toolspec-test-parse-formats-detected ()
  "Each format is detected, also inside wrappers, and forced formats work."
  (let ((schema "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\",\"description\":\"d\"}},\"required\":[\"q\"]}"))
    (dolist (text (list (format "{\"type\":\"function\",\"function\":{\"name\":\"t\",\"parameters\":%s}}" schema)
                        (format "{\"type\":\"function\",\"name\":\"t\",\"parameters\":%s}" schema)
                        (format "{\"name\":\"t\",\"parameters\":%s}" schema)
                        (format "{\"name\":\"t\",\"input_schema\":%s}" schema)
                        (format "{\"tools\":[{\"name\":\"t\",\"inputSchema\":%s}]}" schema)
                        (format "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":%s}]}}" schema)
                        "{\"functionDeclarations\":[{\"name\":\"T\",\"parameters\":{\"type\":\"OBJECT\",\"properties\":{\"q\":{\"type\":\"STRING\",\"nullable\":true}}}}]}"
                        (format "{\"toolSpec\":{\"name\":\"t\",\"inputSchema\":{\"json\":%s}}}" schema)
                        (format "{\"title\":\"t\",\"type\":\"object\",\"properties\":%s}"
                                "{\"q\":{\"type\":\"string\",\"description\":\"d\"}}")))
      (let ((tool (car (toolspec-parse-json text))))
        (should (equal (downcase (plist-get tool :name)) "t"))
        (should (equal (plist-get (car (plist-get tool :args)) :type) 'string))))
    (should (equal (plist-get (car (toolspec-parse-json (format "{\"name\":\"t\",\"input_schema\":%s}" schema) 'anthropic)) :name)
                   "t"))))

(ert-deftest toolspec-test-read-file-bare-schema-named-after-file ()
  "A bare JSON Schema without title is named after its file."
  (toolspec-test--with-temp-file f "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"description\":\"n\"}}}"
    (should (equal (plist-get (car (toolspec-read-file f)) :name) (file-name-base f)))))

(ert-deftest toolspec-test-wild-schemas-import-with-warnings ()
  "Non-standard types import, with warnings; missing types stay missing."
  (let ((tool (car (toolspec-parse-json
                    "{\"name\":\"w\",\"parameters\":{\"properties\":{
                      \"a\":{\"type\":\"str\"},\"b\":{\"description\":\"no type\"},
                      \"c\":{\"type\":[\"integer\",\"null\"],\"description\":\"n\"}}}}"))))
    (should (equal (plist-get (car (plist-get tool :args)) :type) 'string))
    (should (equal (nth 1 (plist-get tool :args)) '(:name "b" :description "no type" :optional t)))
    (should (equal (nth 2 (plist-get tool :args))
                   '(:name "c" :type integer :nullable t :description "n" :optional t)))
    (should (assoc-default "parameters.properties.a.type"
                           (mapcar #'cdr toolspec-last-import-warnings)))
    (should-not (cl-some (lambda (w) (equal (nth 1 w) "parameters.properties.b")) toolspec-last-import-warnings))))

(ert-deftest toolspec-test-ref-inlined ()
  "`$ref' into `$defs' is inlined, with sibling keywords kept."
  (let* ((tool (car (toolspec-read-file (toolspec-test--example "mcp-tools-list.json"))))
         (repo (car (plist-get tool :args))))
    (should (equal (plist-get repo :name) "repository"))
    (should (eq (plist-get repo :type) 'object))
    (should (equal (plist-get repo :description) "Repository the issue is filed in."))
    (should (equal (plist-get repo :required) ["owner" "name"]))))

;;;; Writing

(defconst toolspec-test--weather
  '(:name "get_weather" :description "Get the current weather in a given location"
    :args ((:name "location" :type string :description "The city and state, e.g. San Francisco, CA")
           (:name "unit" :type string :enum ["celsius" "farenheit"]
                  :description "The unit of temperature" :optional t)))
  "The seed-003 get_weather example.")

(ert-deftest toolspec-test-to-json-dialects ()
  "Each dialect has its provider's shape."
  (let ((w toolspec-test--weather)
        (params '((properties (location (description . "The city and state, e.g. San Francisco, CA")
                                        (type . "string"))
                              (unit (description . "The unit of temperature")
                                    (enum . ["celsius" "farenheit"]) (type . "string")))
                  (required . ["location"]) (type . "object"))))
    (should (equal (toolspec-test--json (toolspec-to-json w 'openai))
                   `((function (description . "Get the current weather in a given location")
                               (name . "get_weather") (parameters ,@params))
                     (type . "function"))))
    (should (equal (toolspec-test--json (toolspec-to-json w 'anthropic))
                   `((description . "Get the current weather in a given location")
                     (input_schema ,@params) (name . "get_weather"))))
    (should (equal (alist-get 'inputSchema (toolspec-test--json (toolspec-to-json w 'mcp))) params))
    (should (equal (alist-get 'json (alist-get 'inputSchema (alist-get 'toolSpec (toolspec-test--json (toolspec-to-json w 'bedrock)))))
                   params))
    (should (equal (alist-get 'parameters (toolspec-test--json (toolspec-to-json w 'gemini))) params))
    (should (equal (alist-get 'strict (toolspec-test--json (toolspec-to-json w 'openai-responses))) :false))
    (should (equal (alist-get 'title (toolspec-test--json (toolspec-to-json w 'json-schema))) "get_weather"))
    (let ((strict (alist-get 'parameters (alist-get 'function (toolspec-test--json (toolspec-to-json w 'openai-strict))))))
      (should (equal (alist-get 'required strict) ["location" "unit"]))
      (should (eq (alist-get 'additionalProperties strict) :false))
      (should (equal (alist-get 'enum (alist-get 'unit (alist-get 'properties strict)))
                     ["celsius" "farenheit" :null])))))

(ert-deftest toolspec-test-to-json-default-dialect ()
  "Without DIALECT, `toolspec-default-dialect' is used."
  (let ((toolspec-default-dialect 'anthropic))
    (should (alist-get 'input_schema (toolspec-test--json (toolspec-to-json toolspec-test--weather))))))

(ert-deftest toolspec-test-no-arg-tool ()
  "A tool without arguments gets each provider's shape."
  (let ((tool '(:name "now" :description "Current time" :args nil)))
    (should (equal (alist-get 'input_schema (toolspec-test--json (toolspec-to-json tool 'anthropic)))
                   '((properties) (type . "object"))))
    (should-not (assq 'parameters (toolspec-test--json (toolspec-to-json tool 'gemini))))))

(ert-deftest toolspec-test-nested-optional-becomes-required ()
  "A nested `:optional t' becomes the nested `required'; no \"optional\" key in JSON."
  (let* ((tool '(:name "n" :description "d"
                 :args ((:name "o" :type object :description "obj"
                         :properties (:a (:type string) :b (:type string :optional t))))))
         (json (toolspec-to-json tool 'openai)))
    (should-not (string-match-p "optional" json))
    (should (equal (alist-get 'required (alist-get 'o (alist-get 'properties (alist-get 'parameters (alist-get 'function (toolspec-test--json json))))))
                   ["a"]))))

(ert-deftest toolspec-test-round-trip-examples ()
  "JSON -> plist -> JSON in the same dialect gives back the input schema."
  (dolist (case '(("anthropic.json" anthropic input_schema)
                  ("openai-responses.json" openai-responses parameters)))
    (pcase-let* ((`(,file ,dialect ,key) case)
                 (input (json-parse-string (with-temp-buffer
                                             (insert-file-contents (toolspec-test--example file))
                                             (buffer-string))
                                           :object-type 'alist :false-object :false :null-object :null)))
      (cl-loop for tool in (toolspec-read-file (toolspec-test--example file))
               for original across input
               do (should (equal (toolspec-test--canon (alist-get key (toolspec-test--json (toolspec-to-json tool dialect))))
                                 (toolspec-test--canon (alist-get key original))))))))

(ert-deftest toolspec-test-tools-to-json-document ()
  "Several tools make one document in each dialect's shape."
  (let ((two (list toolspec-test--weather '(:name "now" :description "t" :args nil))))
    (should (= (length (json-parse-string (toolspec-tools-to-json two 'openai))) 2))
    (should (= (length (gethash "tools" (json-parse-string (toolspec-tools-to-json two 'mcp)))) 2))
    (should (= (length (gethash "functionDeclarations" (json-parse-string (toolspec-tools-to-json two 'gemini)))) 2))
    (should (string-match-p "\n  " (toolspec-tools-to-json two 'anthropic t)))))

(ert-deftest toolspec-test-tools-to-json-symbol-types-serialised-once ()
  "Plists `json-serialize' refuses (symbol types) are printed after one try.
The export is what printing gives, and the serialiser is not tried a
second time on the same tools."
  (let* ((two (list toolspec-test--weather '(:name "now" :description "t" :args nil)))
         (tries 0)
         (count (lambda (&rest _) (cl-incf tries)))
         (printed (toolspec--mod-to-json
                   (toolspec--print (mapcar (lambda (tool) (toolspec--printable (toolspec--plist tool))) two))
                   "openai" t nil)))
    (should (eq (plist-get (car (plist-get toolspec-test--weather :args)) :type) 'string))
    (advice-add 'toolspec--json-serialize :before count)
    (unwind-protect
        (should (equal (toolspec-tools-to-json two 'openai) printed))
      (advice-remove 'toolspec--json-serialize count))
    (should (= tries 1))))

;; Emacs's module `make_string' makes a unibyte string, then decodes it
;; into a second: for the thousands of strings of a large import, twice
;; the allocation, and a garbage collection that need not come.
(defun toolspec-test--strings-in (x &optional pred)
  "How many strings X holds, in its lists and vectors.
With PRED, only the strings for which it is non-nil."
  (cond ((stringp x) (if (or (null pred) (funcall pred x)) 1 0))
        ((consp x) (let ((n 0))
                     (while (consp x)
                       (setq n (+ n (toolspec-test--strings-in (car x) pred)) x (cdr x)))
                     (+ n (toolspec-test--strings-in x pred))))
        ((vectorp x) (apply #'+ (mapcar (lambda (y) (toolspec-test--strings-in y pred)) x)))
        (t 0)))

(ert-deftest toolspec-test-import-makes-each-string-once ()
  "An import allocates each ASCII string it returns once, unibyte.
The strings read like any other: `equal' to the literal, with text
beyond ASCII kept multibyte (made through UTF-8, twice)."
  (toolspec--ensure-module)
  (let* ((tools (mapconcat (lambda (i)
                             (format "{\"name\": \"t%d\", \"description\": \"Tool %d, caf\u00e9.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"description\": \"An a.\", \"enum\": [\"x\", \"y\"]}}}}"
                                     i i))
                           (number-sequence 1 200) ","))
         (json (concat "[" tools "]"))
         (before strings-consed)
         (result (toolspec--mod-parse-json json nil nil toolspec-max-input-size t nil))
         (made (- strings-consed before))
         (tool (car (nth 0 result)))
         (arg (car (plist-get tool :args))))
    (should (= (length (nth 0 result)) 200))
    (should (> (toolspec-test--strings-in result) 1000))
    (should (= (toolspec-test--strings-in result #'multibyte-string-p) 200))
    (should (<= made (+ (toolspec-test--strings-in result)
                        (toolspec-test--strings-in result #'multibyte-string-p)
                        10)))
    (should (equal (plist-get tool :name) "t1"))
    (should-not (multibyte-string-p (plist-get tool :name)))
    (should (equal (plist-get tool :description) "Tool 1, café."))
    (should (multibyte-string-p (plist-get tool :description)))
    (should (equal (plist-get arg :enum) ["x" "y"]))
    (should (equal (toolspec-test--json (toolspec-to-json tool 'openai))
                   (toolspec-test--json (toolspec-to-json (car (read-from-string (prin1-to-string tool))) 'openai))))))

(ert-deftest toolspec-test-odd-property-names-round-trip ()
  "Property names that need escaping as keywords survive the trip."
  (let* ((json "{\"name\":\"o\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"a b\":{\"type\":\"string\"},\"x(y)\":{\"type\":\"string\"},\"12\":{\"type\":\"integer\"},\"é;#\":{\"type\":\"string\",\"description\":\"q\\\"\\\\\\n\"}}}}")
         (tool (car (toolspec-parse-json json))))
    (should (equal (mapcar (lambda (a) (plist-get a :name)) (plist-get tool :args)) '("a b" "x(y)" "12" "é;#")))
    (should (equal (toolspec-test--json (toolspec-to-json tool 'anthropic))
                   (toolspec-test--json json)))))

;;;; Validation

(defun toolspec-test--problem (tool path)
  "The problem `toolspec-validate' reports for TOOL at PATH, or nil."
  (cl-find path (toolspec-validate tool) :key #'cadr :test #'equal))

(ert-deftest toolspec-test-validate-seed-examples-clean ()
  "The seed-003 examples have no errors."
  (should-not (toolspec-validate toolspec-test--weather))
  (should-not (toolspec-validate (append toolspec-test--weather (list :function (lambda (_l _u) "sunny"))))))

(ert-deftest toolspec-test-validate-hand-written-mistakes ()
  "The mistakes users make are reported with their path."
  (let ((tool '(:name "bad" :description "d"
                :args ((:name "a" :type "string" :description "x")
                       (:name "b" :type 'string :description "x")
                       (:name "c" :type string :enum ("x" "y") :description "x")
                       (:name "d" :type array :description "x")
                       (:name "e" :type object :description "x"
                        :properties (:k (:type string)) :required ["nope"])))))
    (should (eq (car (toolspec-test--problem tool "args[0].type")) 'error))
    (should (string-match-p "symbol" (nth 2 (toolspec-test--problem tool "args[0].type"))))
    (should (string-match-p "quote" (nth 2 (toolspec-test--problem tool "args[1].type"))))
    (should (string-match-p "vector" (nth 2 (toolspec-test--problem tool "args[2].enum"))))
    (should (string-match-p ":items" (nth 2 (toolspec-test--problem tool "args[3].items"))))
    (should (string-match-p "nope" (nth 2 (toolspec-test--problem tool "args[4].required[0]"))))))

(ert-deftest toolspec-test-validate-function ()
  "`:function' must be callable and take the args (and the callback if async)."
  (let ((base '(:name "f" :description "d" :args ((:name "x" :type string :description "x")))))
    (should-not (toolspec-test--problem (append base (list :function (lambda (_x) nil))) "function"))
    (should (string-match-p "takes 0"
                            (nth 2 (toolspec-test--problem (append base (list :function (lambda () nil))) "function"))))
    (should (string-match-p "not callable"
                            (nth 2 (toolspec-test--problem (append base (list :function 42)) "function"))))
    (should (string-match-p "callback"
                            (nth 2 (toolspec-test--problem (append base (list :async t :function (lambda (_x) nil)))
                                                           "function"))))
    (should-not (toolspec-test--problem (append base (list :async t :function (lambda (_cb _x) nil))) "function"))
    (should-not (toolspec-test--problem (append base (list :function #'list)) "function"))
    (should (eq 'warning (car (toolspec-test--problem (append base (list :function 'toolspec-test-not-yet-defined))
                                                      "function"))))))

(ert-deftest toolspec-test-check ()
  "`toolspec-check' returns a valid tool and signals with all problems otherwise."
  (should (eq (toolspec-check toolspec-test--weather) toolspec-test--weather))
  (let ((err (should-error (toolspec-check '(:name "bad name" :args ((:name "a" :type "string"))))
                           :type 'toolspec-invalid-spec)))
    (should (string-match-p "bad name" (cadr err)))
    (should (>= (length (plist-get (toolspec-error-details err) :problems)) 2)))
  ;; Warnings alone do not make a tool invalid; an error after them does.
  (let ((warned '(:name "warned" :colour 1 :args ((:name "a" :type string)))))
    (should (eq (car (car (toolspec-validate warned))) 'warning))
    (should-not (assq 'error (toolspec-validate warned)))
    (should (eq (toolspec-check warned) warned))
    (let ((err (should-error (toolspec-check (append warned '(:category 7)))
                             :type 'toolspec-invalid-spec)))
      (should (string-match-p ":category must be a string" (cadr err)))
      (should-not (string-match-p "colour" (cadr err))))))

;;;; Errors

(ert-deftest toolspec-test-json-error-position ()
  "Invalid JSON signals `toolspec-json-error' with line and column."
  (let ((err (should-error (toolspec-parse-json "{\n  \"name\": \"x\",\n  oops}") :type 'toolspec-json-error)))
    (should (equal (plist-get (toolspec-error-details err) :line) 3))
    (should (equal (plist-get (toolspec-error-details err) :column) 3))))

(ert-deftest toolspec-test-error-message-apart-from-place ()
  "An error's details hold what is wrong apart from where: the message
without the file, the line and column or the path, which callers show
their own way, never by taking the whole message apart."
  (let* ((text "{\n  \"name\": \"x\",\n  oops}")
         (err (should-error (toolspec-parse-json text) :type 'toolspec-json-error))
         (message (plist-get (toolspec-error-details err) :message)))
    (should (stringp message))
    (should-not (string-match-p "line 3" message))
    (should (string-suffix-p message (cadr err)))
    (should (equal (toolspec--error-text err) message))
    (toolspec-test--with-temp-file f text
      (let ((err (should-error (toolspec-read-file f) :type 'toolspec-json-error)))
        (should (string-prefix-p (abbreviate-file-name f) (cadr err)))
        (should (equal (plist-get (toolspec-error-details err) :message) message))
        (should (equal (toolspec--error-text err) message)))))
  ;; A shape error: PATH, then the message, and nothing else.
  (let ((err (should-error (toolspec-parse-json "{\"name\": 5, \"parameters\": {}}")
                           :type 'toolspec-error)))
    (let ((details (toolspec-error-details err)))
      (should (equal (toolspec--error-text err)
                     (if (plist-get details :path)
                         (concat (plist-get details :path) ": " (plist-get details :message))
                       (plist-get details :message))))
      (should-not (string-match-p "line [0-9]+, column" (toolspec--error-text err))))))

(ert-deftest toolspec-test-error-kinds ()
  "Each kind of bad input gets its own `toolspec-error' subtype."
  (should-error (toolspec-parse-json "[1]") :type 'toolspec-format-error)
  ;; An OpenAPI document is read (test/toolspec-openapi-test.el); this one
  ;; has no operations.
  (should-error (toolspec-parse-json "{\"openapi\":\"3.1.0\"}") :type 'toolspec-format-error)
  (should-error (toolspec-parse-json "{\"openapi\":\"1.0\"}") :type 'toolspec-unsupported-format)
  (should-error (toolspec-parse-json "{}" 'nonsense) :type 'toolspec-unsupported-format)
  (should-error (toolspec-to-json toolspec-test--weather 'nonsense) :type 'toolspec-unsupported-format)
  (should-error (toolspec-to-json "not a tool") :type 'toolspec-plist-error)
  (should-error (toolspec-parse-json
                 "{\"name\":\"c\",\"parameters\":{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"properties\":{\"x\":{\"$ref\":\"#/$defs/a\"}}}}")
                :type 'toolspec-ref-error)
  (let ((toolspec-max-input-size 10))
    (should-error (toolspec-parse-json "[{\"name\":\"abcdefgh\"}]") :type 'toolspec-limit-error))
  (let ((err (should-error (toolspec-read-file "/nonexistent/tools.json") :type 'toolspec-error)))
    (should (string-match-p "nonexistent" (cadr err)))))

;; The test below compares the module's kinds of error with the conditions
;; toolspec.el defines for them; the module function it asks is declared
;; here, as it is for no file of lisp/.
(declare-function toolspec--mod-error-symbols "toolspec-module")

(ert-deftest toolspec-test-error-conditions-are-error-kinds ()
  "The conditions of lisp/toolspec.el are the module's kinds of error.
`toolspec--module-errors' holds one condition per `ErrorKind' of
src/error.rs, which the module lists: a kind either side gains and
the other lacks fails here.  And every `toolspec-error' condition
any file of lisp/ defines is in toolspec.el's two tables."
  (toolspec--ensure-module)
  (let ((kinds (toolspec--mod-error-symbols))
        (names (lambda (symbols) (sort (mapcar #'symbol-name symbols) #'string<))))
    (should (> (length kinds) 1))
    (should (equal (funcall names kinds) (funcall names (mapcar #'car toolspec--module-errors))))
    (dolist (kind kinds)
      (should (memq 'toolspec-error (get kind 'error-conditions))))
    (dolist (file (directory-files (expand-file-name "lisp" toolspec-test--root) nil
                                   "\\`toolspec.*\\.el\\'"))
      (unless (string-suffix-p "-autoloads.el" file)
        (require (intern (file-name-sans-extension file)))))
    (let ((defined nil))
      (mapatoms (lambda (s)
                  (when (and (not (eq s 'toolspec-error))
                             (memq 'toolspec-error (get s 'error-conditions)))
                    (push s defined))))
      (should (equal (funcall names defined)
                     (funcall names (mapcar #'car (append toolspec--module-errors
                                                          toolspec--lisp-errors))))))))

(ert-deftest toolspec-test-absurd-nesting ()
  "Absurdly deep JSON and plists are clear errors; Emacs goes on."
  (should-error (toolspec-parse-json (concat (make-string 100000 ?\[) (make-string 100000 ?\])))
                :type 'toolspec-json-error)
  (let ((deep '(:type string)))
    (dotimes (_ 300) (setq deep (list :type 'array :items deep)))
    (should-error (toolspec-to-json (list :name "d" :description "d" :args (list (append '(:name "x") deep))))
                  :type 'toolspec-error))
  (should (equal (plist-get (car (toolspec-parse-json "{\"name\":\"ok\",\"parameters\":{}}")) :name) "ok")))

(ert-deftest toolspec-test-invalid-utf8 ()
  "Invalid UTF-8, in a file or a string, is a `toolspec-json-error'."
  (toolspec-test--with-temp-file f (unibyte-string ?\[ ?\" #xff #xfe ?\" ?\])
    (let ((err (should-error (toolspec-read-file f) :type 'toolspec-json-error)))
      (should (string-match-p "UTF-8" (cadr err)))))
  (should-error (toolspec-parse-json (string-to-multibyte (unibyte-string ?\" #xff ?\")))
                :type 'toolspec-json-error)
  ;; A raw byte among multibyte text, and the same text without it.
  (let ((text (concat "{\"name\":\"t\",\"description\":\"é 😀 "
                      (make-string 5000 ?x) "\",\"parameters\":{}}")))
    (should (equal (plist-get (car (toolspec-parse-json text)) :description)
                   (concat "é 😀 " (make-string 5000 ?x))))
    (should-error (toolspec-parse-json (concat text (string-to-multibyte (unibyte-string #xff))))
                  :type 'toolspec-json-error)
    ;; Unibyte text with bytes past ASCII is raw bytes too.
    (should-error (toolspec-parse-json (unibyte-string ?\" #xc3 #xa9 #xff ?\"))
                  :type 'toolspec-json-error)))

(ert-deftest toolspec-test-circular-plist ()
  "A circular plist is an error, not a hang."
  (let ((args (list (list :name "a" :type 'string :description "d"))))
    (setcdr args args)
    (should-error (toolspec-to-json (list :name "c" :description "d" :args args)) :type 'toolspec-error)))

(ert-deftest toolspec-test-panic-is-a-toolspec-error ()
  "A panic in the module reaches Lisp as `toolspec-internal-error'."
  (should (fboundp (quote toolspec--mod-debug-panic)))
  (should-error (funcall 'toolspec--mod-debug-panic) :type 'toolspec-internal-error)
  (should (toolspec-to-json toolspec-test--weather)))

(ert-deftest toolspec-test-version-mismatch ()
  "A module of another version is refused with a clear message."
  (let* ((toolspec-version "0.0.0-other")
         (err (should-error (toolspec--load-module) :type 'toolspec-module-error)))
    (should (string-match-p "rebuild" (cadr err)))))

;;;; Limits: hostile sizes and shapes from Lisp

(defun toolspec-test--deep (n wrap &optional leaf)
  "LEAF (default \"x\") wrapped N times by WRAP, a function of one value."
  (let ((v (or leaf "x")))
    (dotimes (_ n) (setq v (funcall wrap v)))
    v))

(defun toolspec-test--tool-with-default (default)
  "A tool plist whose one argument has DEFAULT as its :default."
  (list :name "deep" :description "Deep."
        :args (list (list :name "x" :type 'array :items '(:type string)
                          :description "X." :default default))))

(ert-deftest toolspec-test-deep-lisp-values-are-toolspec-errors ()
  "100,000-deep lists, vectors and plists from Lisp signal a `toolspec-error'.
Every module entry point that takes a plist refuses them (Emacs's
printer stops at 200 levels; the module reads at most 100), and
Emacs goes on."
  (require 'toolspec-gptel)
  (let* ((n 100000)
         (values (list (toolspec-test--deep n #'list)
                       (toolspec-test--deep n #'vector)
                       (toolspec-test--deep n (lambda (v) (list :a v)))
                       (toolspec-test--deep n (lambda (v) (list 'quote v)))))
         (deep-items (toolspec-test--deep n (lambda (v) (list :type 'array :items v)) '(:type string)))
         (tools (cons (list :name "items" :description "Items."
                            :args (list (append '(:name "x" :description "X.") deep-items)))
                      (mapcar #'toolspec-test--tool-with-default values))))
    (dolist (tool tools)
      (should-error (toolspec-to-json tool) :type 'toolspec-error)
      (should-error (toolspec-tools-to-json (list tool) 'mcp) :type 'toolspec-error)
      (should-error (toolspec-validate tool) :type 'toolspec-error)
      (should-error (toolspec-check tool) :type 'toolspec-error)
      (should-error (toolspec-gptel-form-text tool) :type 'toolspec-error)
      (should-error (toolspec-validate-arguments tool "{}") :type 'toolspec-error))
    ;; Deep arguments, as a plist and as JSON text.
    (let ((tool (toolspec-test--tool-with-default nil)))
      (dolist (v values)
        (should-error (toolspec-validate-arguments tool (list :x v)) :type 'toolspec-error))
      (should-error (toolspec-validate-arguments
                     tool (concat "{\"x\":" (make-string n ?\[) (make-string n ?\]) "}"))
                    :type 'toolspec-error))
    ;; Deep JSON objects, as text and in a file.
    (let ((text (concat (apply #'concat (make-list n "{\"a\":")) "1" (make-string n ?}))))
      (should-error (toolspec-parse-json text) :type 'toolspec-json-error)
      (toolspec-test--with-temp-file f text
        (should-error (toolspec-read-file f) :type 'toolspec-json-error)))
    ;; Emacs goes on.
    (should (equal (plist-get (car (toolspec-parse-json "{\"name\":\"ok\",\"parameters\":{}}")) :name) "ok"))))

(ert-deftest toolspec-test-input-size-limit ()
  "Input beyond `toolspec-max-input-size' is refused before parsing.
The error names the file, its size, the limit and how to raise it."
  (require 'toolspec-openapi)
  (should (= (default-value 'toolspec-max-input-size) (* 64 1024 1024)))
  (should (eq (get 'toolspec-max-input-size 'custom-type) 'natnum))
  (should (assq 'toolspec-max-input-size (get 'toolspec-core 'custom-group)))
  (let ((text "{\"name\": \"small\", \"parameters\": {}}")
        (openapi "{\"openapi\": \"3.0.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {\"/x\": {\"get\": {\"operationId\": \"x\", \"responses\": {\"200\": {\"description\": \"ok\"}}}}}}"))
    (toolspec-test--with-temp-file f text
      (let ((toolspec-max-input-size 20))
        (let ((err (should-error (toolspec-read-file f) :type 'toolspec-limit-error)))
          (should (string-match-p (regexp-quote (file-name-nondirectory f)) (cadr err)))
          (should (string-match-p (format "the file is %d bytes, more than the limit of 20 bytes" (length text))
                                  (cadr err)))
          (should (string-match-p "raise `toolspec-max-input-size'" (cadr err)))
          (should (equal (plist-get (toolspec-error-details err) :file) f)))
        (should-error (toolspec-parse-json text) :type 'toolspec-limit-error))
      (let ((toolspec-max-input-size (length text)))
        (should (toolspec-read-file f))))
    (toolspec-test--with-temp-file f openapi
      (let* ((toolspec-max-input-size 20)
             (err (should-error (toolspec-read-openapi f) :type 'toolspec-limit-error)))
        (should (string-match-p (regexp-quote (file-name-nondirectory f)) (cadr err)))
        (should (string-match-p "more than the limit of 20 bytes" (cadr err)))
        (should-error (toolspec-openapi-operations f) :type 'toolspec-limit-error)
        (should-error (toolspec-parse-openapi openapi) :type 'toolspec-limit-error))
      (should (toolspec-read-openapi f)))))

(ert-deftest toolspec-test-serialized-tools-errors ()
  "What the export's serialised path cannot read is a `toolspec-error'
naming what is wrong and, for a bad tool, which one."
  (toolspec--ensure-module)
  (let ((err (should-error (toolspec--mod-serialized-to-json "[{\"name\": " "openai" nil)
                           :type 'toolspec-plist-error)))
    (should (string-match-p "cannot read the serialised tools" (cadr err))))
  (let ((err (should-error (toolspec--mod-serialized-to-json "{}" "openai" nil)
                           :type 'toolspec-plist-error)))
    (should (string-match-p "expected a list of tool plists" (cadr err))))
  (let ((err (should-error (toolspec--mod-serialized-to-json
                            "[{\"name\": \"ok\", \"args\": []}, {\"args\": []}]" "openai" nil)
                           :type 'toolspec-error)))
    (should (string-prefix-p "[1]" (plist-get (toolspec-error-details err) :path))))
  (should-error (toolspec--mod-serialized-to-json "[]" 'openai nil) :type 'toolspec-error)
  (should (equal (toolspec--mod-serialized-to-json "[]" "openai" nil) "[]")))

(ert-deftest toolspec-test-serialized-tools-texts ()
  "Each tool's text, and the value of the function called beside.
An error of either is signalled: the module's as a `toolspec-error'
naming the tool, the function's as it is."
  (toolspec--ensure-module)
  (let* ((json "[{\"name\": \"a\", \"description\": \"A.\", \"args\": []}, {\"name\": \"b\", \"args\": []}]")
         (calls 0)
         (out (toolspec--mod-serialized-to-texts json "mcp" (lambda () (cl-incf calls) 'beside))))
    (should (= calls 1))
    (should (eq (cdr out) 'beside))
    (should (equal (mapcar (lambda (text) (gethash "name" (json-parse-string text))) (car out))
                   '("a" "b")))
    (let ((frame (toolspec--mod-document-frame "mcp")))
      (should (equal (concat (car frame) (mapconcat #'identity (car out) ",") (cdr frame))
                     (toolspec--mod-serialized-to-json json "mcp" nil)))))
  (should (equal (toolspec--mod-document-frame "openai") '("[" . "]")))
  (should (equal (toolspec--mod-document-frame "gemini") '("{\"functionDeclarations\":[" . "]}")))
  (let ((err (should-error (toolspec--mod-serialized-to-texts
                            "[{\"name\": \"ok\", \"args\": []}, {\"args\": []}]" "openai" #'ignore)
                           :type 'toolspec-error)))
    (should (string-prefix-p "[1]" (plist-get (toolspec-error-details err) :path))))
  (should-error (toolspec--mod-serialized-to-texts "[{\"name\": " "openai" #'ignore)
                :type 'toolspec-plist-error)
  (should (equal (should-error (toolspec--mod-serialized-to-texts "[]" "openai" (lambda () (error "Beside"))))
                 '(error "Beside"))))

(ert-deftest toolspec-test-bad-text-is-a-toolspec-error ()
  "Bytes that are not UTF-8, in files, strings and file names, are `toolspec-error's."
  (require 'toolspec-openapi)
  (toolspec-test--with-temp-file f (unibyte-string ?{ ?\" ?o ?p ?e ?n ?a ?p ?i ?\" ?: ?\" #xff ?\" ?})
    (should-error (toolspec-read-openapi f) :type 'toolspec-json-error)
    (should-error (toolspec-read-file f) :type 'toolspec-json-error))
  ;; A file name that is not text.
  (should-error (toolspec--mod-read-file (unibyte-string ?/ ?t ?m ?p ?/ #xff) nil nil 100 t nil) :type 'toolspec-error)
  ;; Raw bytes inside a plist.
  (should-error (toolspec-to-json (list :name "t" :description (unibyte-string #xff #xfe)))
                :type 'toolspec-error)
  ;; No text at all, passed to the module: said so, not called raw bytes.
  (let ((err (should-error (toolspec--mod-parse-json 42 nil nil 100 t nil) :type 'toolspec-error)))
    (should (equal (cadr err) "the JSON text must be a string, not 42"))))

(ert-deftest toolspec-test-nul-characters-are-kept ()
  "NUL characters survive JSON -> plist -> JSON; a NUL in a name is reported."
  (let* ((tool (car (toolspec-parse-json
                     "{\"name\":\"t\",\"description\":\"a\\u0000b\",\"parameters\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\",\"description\":\"d\",\"enum\":[\"x\\u0000\"]}}}}")))
         (json (toolspec-to-json tool 'mcp)))
    (should (equal (plist-get tool :description) "a\0b"))
    (should (equal (plist-get (car (plist-get tool :args)) :enum) ["x\0"]))
    (should (string-match-p (regexp-quote "a\\u0000b") json))
    (should (equal (plist-get (car (toolspec-parse-json json)) :description) "a\0b"))
    (should (assoc "name" (mapcar #'cdr (toolspec-validate (plist-put (copy-sequence tool) :name "a\0b")))))))

(ert-deftest toolspec-test-integers-beyond-64-bits ()
  "Integers beyond 64 bits are read as the nearest number, with a warning.
Emacs bignums in a plist are written as that number; round trips are stable."
  (let* ((tool (car (toolspec-parse-json
                     "{\"name\":\"n\",\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\",\"description\":\"X.\",\"minimum\":123456789012345678901234567890,\"enum\":[1,99999999999999999999]}}}}")))
         (arg (car (plist-get tool :args))))
    (should (= (plist-get arg :minimum) 1.2345678901234568e+29))
    (should (equal (plist-get arg :enum) [1 1e+20]))
    (should (cl-some (lambda (w) (and (equal (nth 1 w) "parameters.properties.x.minimum")
                                      (string-match-p "beyond 64 bits" (nth 2 w))))
                     toolspec-last-import-warnings))
    (should (equal (car (toolspec-parse-json (toolspec-to-json tool))) tool)))
  (let* ((big (read "123456789012345678901234567890"))
         (tool (list :name "b" :description "B."
                     :args (list (list :name "x" :type 'integer :description "X." :default big)))))
    (should (bignump big))
    (let ((back (car (toolspec-parse-json (toolspec-to-json tool)))))
      (should (= (plist-get (car (plist-get back :args)) :default) 1.2345678901234568e+29)))))

(ert-deftest toolspec-test-duplicate-keys ()
  "JSON: the last value of a key given twice wins, with a warning.
Plists: the first wins, as for `plist-get', and the validator warns."
  (let ((tool (car (toolspec-parse-json "{\"name\":\"first\",\"name\":\"last\",\"parameters\":{}}"))))
    (should (equal (plist-get tool :name) "last"))
    (should (equal (mapcar #'cadr toolspec-last-import-warnings) '("name"))))
  (let ((tool '(:name "first" :description "D." :name "last")))
    (should (string-match-p "\"first\"" (toolspec-to-json tool)))
    (should (cl-some (lambda (p) (string-match-p "appears twice" (nth 2 p))) (toolspec-validate tool)))))

(ert-deftest toolspec-test-key-order-kept-with-one-string-per-name ()
  "The order of a schema's keys is recorded, its names one string each.
Tools whose root schema lists `required' before `properties' come
back from MCP in that order; the record of each names the keys with
the same strings as the others', small imports and large alike.  So
does any short text: the tools' argument name \"x\" is one string."
  (dolist (n '(2 3000))
    (let* ((tool (lambda (i)
                   (format "{\"name\":\"t%d\",\"inputSchema\":{\"type\":\"object\",\"required\":[\"x\"],\"properties\":{\"x\":{\"type\":\"string\"}}}}"
                           i)))
           (tools (toolspec-parse-json
                   (format "{\"tools\":[%s]}" (mapconcat tool (number-sequence 1 n) ","))))
           (order (lambda (tool)
                    (plist-get (plist-get (plist-get tool :schema-extra) :x-toolspec-order) :schema))))
      (should (equal (funcall order (car tools)) ["type" "required" "properties"]))
      (should (cl-every #'eq (funcall order (car tools)) (funcall order (car (last tools)))))
      (should (eq (plist-get (car (plist-get (car tools) :args)) :name)
                  (plist-get (car (plist-get (car (last tools)) :args)) :name)))
      (should (string-match-p "\\`{\"name\":\"t1\",\"inputSchema\":{\"type\":\"object\",\"required\":\\[\"x\"\\],\"properties\""
                              (toolspec-to-json (car tools) 'mcp))))))

(ert-deftest toolspec-test-list-read-again ()
  "A tools list found not to be one once tools were made gives each once.
The list is read as it is parsed; a key after it means the document is
read again another way, and the tools made so far are forgotten, with
their paths and problems.  Small and large (read on other threads)
alike."
  (dolist (n '(3 3000))
    (let* ((tool (lambda (i)
                   (format "{\"name\":\"t%d\",\"description\":\"T %d.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"description\":\"X.\"}}}}"
                           i i)))
           (items (mapconcat tool (number-sequence 1 n) ","))
           (plain (toolspec-parse-json (format "{\"tools\":[%s]}" items)))
           (paged (toolspec-parse-json (format "{\"tools\":[%s],\"nextCursor\":\"2\"}" items))))
      (should (= (length paged) n))
      (should (equal paged plain))
      ;; Each tool's path and problems once, in the tools' order.
      (should (= (length toolspec-last-import-problems) n))
      (should (equal toolspec-last-import-paths
                     (mapcar (lambda (i) (format "tools[%d]" i)) (number-sequence 0 (1- n)))))
      (should (equal (plist-get (car (last paged)) :name) (format "t%d" n))))))

(ert-deftest toolspec-test-huge-enum ()
  "A 200,000-value enum goes through JSON, plists and argument checks."
  (require 'toolspec-gptel)
  (let* ((n 200000)
         (values (let (l) (dotimes (i n) (push (format "\"v%d\"" i) l)) (nreverse l)))
         (json (concat "{\"name\":\"e\",\"description\":\"E.\",\"parameters\":{\"type\":\"object\",\"required\":[\"e\"],\"properties\":{\"e\":{\"type\":\"string\",\"description\":\"E.\",\"enum\":["
                       (mapconcat #'identity values ",") "]}}}}"))
         (start (float-time))
         (tool (car (toolspec-parse-json json)))
         (enum (plist-get (car (plist-get tool :args)) :enum)))
    (should (= (length enum) n))
    (should (equal (aref enum (1- n)) (format "v%d" (1- n))))
    (should (null (toolspec-validate tool)))
    (should (= (length (plist-get (car (plist-get (car (toolspec-parse-json (toolspec-to-json tool 'gemini))) :args))
                                  :enum))
               n))
    (should (null (toolspec-validate-arguments tool (list :e (format "v%d" (1- n))))))
    (should (toolspec-validate-arguments tool "{\"e\": \"nope\"}"))
    (should (< (- (float-time) start) 120))))

;;;; Finding and building the module

(defun toolspec-test--sub-emacs (&rest forms)
  "Run FORMS in a fresh batch Emacs with lisp/ on the path; return (STATUS . OUTPUT)."
  (with-temp-buffer
    (let ((status (apply #'call-process (expand-file-name invocation-name invocation-directory)
                         nil t nil "--batch" "-Q" "-L" (expand-file-name "lisp" toolspec-test--root)
                         (cl-loop for f in forms append (list "--eval" (prin1-to-string f))))))
      (cons status (buffer-string)))))

(ert-deftest toolspec-test-missing-module-is-explained ()
  "Without its module, toolspec loads and the first call says how to build it."
  (let ((r (toolspec-test--sub-emacs
            '(setq toolspec-module-file "/nonexistent/toolspec-module.so")
            '(require 'toolspec)
            '(condition-case err (toolspec-parse-json "[]")
               (toolspec-module-error (princ (format "SIGNALLED %s" (cadr err))))))))
    (should (eq (car r) 0))
    (should (string-match-p "SIGNALLED .*missing: build it with M-x toolspec-build-module" (cdr r)))))

(ert-deftest toolspec-test-build-module ()
  "`toolspec-build-module' builds the module with cargo, installs and loads it."
  (let* ((installed (expand-file-name (concat "lisp/toolspec-module" module-file-suffix) toolspec-test--root))
         (_ (when (file-exists-p installed) (delete-file installed)))
         (r (toolspec-test--sub-emacs
             '(require 'toolspec)
             '(toolspec-build-module)
             '(princ (format "VERSION %s %s" (toolspec--mod-version)
                             (plist-get (car (toolspec-parse-json "{\"name\":\"x\",\"parameters\":{}}")) :name))))))
    (should (eq (car r) 0))
    (should (string-match-p (format "VERSION %s x" (regexp-quote toolspec-version)) (cdr r)))
    (should (file-exists-p installed))))

(ert-deftest toolspec-test-executors-load-on-first-use ()
  "Loading toolspec-gptel loads no executor; binding a tool loads its own.
A Gloodata tool's executor loads the HTTP transport with it."
  (let ((r (toolspec-test--sub-emacs
            `(setq toolspec-module-file ,toolspec-module-file)
            '(require 'toolspec-gptel)
            '(princ (format "BEFORE %s %s " (featurep 'toolspec-gloodata) (featurep 'toolspec-http)))
            `(let ((tool (car (toolspec-read-file ,(toolspec-test--example "gloodata.json")))))
               (princ (format "BOUND %s AFTER %s %s"
                              (plist-get (toolspec-gptel--resolve tool nil) :bound)
                              (featurep 'toolspec-gloodata) (featurep 'toolspec-http)))))))
    (should (eq (car r) 0))
    (should (string-match-p "BEFORE nil nil BOUND t AFTER t t" (cdr r)))))

(ert-deftest toolspec-test-problems-carry-their-code ()
  "Each problem's message carries the name of its code as its text
property `toolspec-code', whether the module prints the problems
\(`toolspec-validate') or makes them as Lisp objects (an import), so
that Lisp tells problems apart without reading their text."
  (let ((code (lambda (problems path)
                (let ((p (seq-find (lambda (p) (equal (nth 1 p) path)) problems)))
                  (should p)
                  (get-text-property 0 'toolspec-code (nth 2 p)))))
        (problems (toolspec-validate '(:name "getWeather" :description "W"
                                       :args ((:name "a" :type array :description "A")
                                              (:name "b" :type object :description "B"
                                               :properties (:é (:type string) :é (:type string))))))))
    (should (eq (funcall code problems "name") 'name-style))
    (should (eq (funcall code problems "args[0].items") 'no-items))
    (should (eq (funcall code problems "args[1].properties.é") 'duplicate-property))
    ;; The property covers the whole message, counted in characters.
    (let ((m (nth 2 (seq-find (lambda (p) (equal (nth 1 p) "args[1].properties.é")) problems))))
      (should (string-match-p "é" m))
      (should (eq (get-text-property (1- (length m)) 'toolspec-code m) 'duplicate-property)))
    (toolspec-parse-json "{\"name\": \"getWeather\", \"description\": \"é\", \"parameters\": {\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"array\", \"description\": \"Q\"}}}}")
    (should (eq (funcall code (car toolspec-last-import-problems) "name") 'name-style))
    (should (eq (funcall code (car toolspec-last-import-problems) "args[0].items") 'no-items))))

(ert-deftest toolspec-test-problems-same-text-one-string ()
  "An import's problems that say the same thing share one message string.
A catalog's thousands of warnings say a few things over and over: each
distinct message is made once (while the module keeps it: 512 at a
time), with its code, and every problem keeps its own path."
  (let* ((n 700)
         (json (json-encode
                `((tools . ,(vconcat
                             (cl-loop for i below n
                                      collect `((name . ,(format "t.%d" i))
                                                (inputSchema . ((type . "dict")
                                                                (properties . ((x . ((type . "float"))))))))))))))
         (tools (toolspec-parse-json json))
         (warnings toolspec-last-import-warnings)
         (names (mapcar (lambda (ps) (cl-find "name" ps :key #'cadr :test #'equal))
                        toolspec-last-import-problems)))
    (should (= (length tools) n))
    ;; Each tool's own name error: its own text, with its code.
    (cl-loop for p in names for i from 0
             do (should (string-prefix-p (format "\"t.%d\" is not a valid tool name" i) (nth 2 p)))
             do (should (eq (get-text-property 0 'toolspec-code (nth 2 p)) 'invalid-name)))
    ;; Between them, the same warning for each: one string while the
    ;; module keeps it, another when it has started again.
    (let ((same (make-hash-table :test #'eq)))
      (dolist (ps toolspec-last-import-problems)
        (let ((p (cl-find "description" ps :key #'cadr :test #'equal)))
          (should (string-prefix-p "no :description: the model chooses" (nth 2 p)))
          (should (eq (get-text-property 0 'toolspec-code (nth 2 p)) 'no-description))
          (puthash (nth 2 p) t same)))
      (should (<= 2 (hash-table-count same) 3)))
    ;; Two warnings per tool, "dict" and "float": two strings in all,
    ;; though 700 other messages came between.
    (should (= (length warnings) (* 2 n)))
    (should (equal (delete-dups (mapcar #'cadr warnings))
                   (cl-loop for i below n
                            append (list (format "tools[%d].inputSchema.type" i)
                                         (format "tools[%d].inputSchema.properties.x.type" i)))))
    (let ((texts (delete-dups (mapcar (lambda (w) (nth 2 w)) warnings))))
      (should (equal texts '("non-standard type name \"dict\" read as \"object\""
                             "non-standard type name \"float\" read as \"number\"")))
      (dolist (w warnings)
        (should (memq (nth 2 w) texts))
        (should (eq (get-text-property 0 'toolspec-code (nth 2 w)) 'type-alias))))))

(provide 'toolspec-test)
;;; toolspec-test.el ends here
