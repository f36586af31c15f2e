;;; toolspec-gptel-test.el --- Test toolspec against the real gptel -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests that feed the tool plists toolspec reads from examples/*.json to
;; the real gptel (0.9.9.6), and check what gptel would send to each provider
;; against the schema written in the example file.
;;
;; No network is used: backends are created with dummy keys and only
;; `gptel--parse-tools' (the function that builds the "tools" part of a
;; request) is called.
;;
;; Run with toolspec and gptel on `load-path', e.g.
;;
;;   emacs -Q --batch -L lisp -L .deps/gptel -l test/toolspec-gptel-test.el \
;;         -f ert-run-tests-batch-and-exit
;;
;; What gptel 0.9.9.6 changes on the way out, i.e. the differences that
;; `toolspec-gptel-test--gptel-view' applies to the input schema before
;; comparing (found by reading gptel's `gptel--parse-tools' methods and
;; running them):
;;
;; All backends
;;   G1. gptel rebuilds the root object itself from the args: it has only
;;       `type', `properties' and `required'.  Root keywords of the input
;;       (`$schema', `title', `description', `additionalProperties', ...)
;;       are not sent (toolspec keeps them in :schema-extra, which gptel
;;       ignores).
;;   G2. The root `required' lists the non-optional args in argument order,
;;       not in the order of the input's `required'; it is present (maybe
;;       empty) whenever the tool has arguments.
;;   G3. A top-level argument of type object without `required' gets
;;       `"required": []'.  Nested objects are left alone.
;;   G4. A tool without arguments is sent as
;;         OpenAI chat/Responses, Ollama, Bedrock: {"type":"object","properties":{}}
;;         Anthropic: {"type":"object","properties":{},"required":[]}
;;         Gemini:    "parameters": null
;; OpenAI chat, OpenAI Responses, Ollama, Bedrock
;;   G5. `"additionalProperties": false' at the root and on every top-level
;;       argument of type object, replacing whatever value was there (even a
;;       schema); nothing deeper.
;; Gemini
;;   G6. `additionalProperties' is deleted from every object reachable
;;       through object values and `anyOf'/`allOf' arrays (not through
;;       `oneOf', `prefixItems' or other arrays).
;;   G7. `format' is deleted from top-level arguments of type string only.
;;       Type names stay lower case; `nullable' is passed through.
;; Anthropic
;;   Nothing beyond G1-G4.
;;
;; Traps for anyone comparing naively (all handled below):
;; - `gptel-make-openai' with the default host api.openai.com builds an
;;   OpenAI *Responses* backend (flat {"type","name","parameters"} tools);
;;   a chat-completions backend needs another :host.
;; - `gptel-make-tool' destructively turns every symbol :type in :args
;;   into a string, in the very list it was given: keep a deep copy of a
;;   plist before registering it if it is needed afterwards.
;; - Gemini's `gptel--parse-tools' destructively deletes nested
;;   `additionalProperties' from the registered tool's :args (only the top
;;   level is copied), so serialising the same struct for another backend
;;   afterwards gives a different result.  Every comparison here starts
;;   from a freshly read and freshly registered tool.
;; - gptel's JSON needs `gptel--json-encode' (:json-false, :null);
;;   a bare `json-serialize' signals on them.
;; - gptel copies a nested :optional into the JSON as "optional": true.

;;; Code:

(require 'ert)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'gptel)

(require 'cl-lib)
(require 'subr-x)
(require 'url-util)
(require 'gptel-openai)
(require 'gptel-openai-responses)
(require 'gptel-anthropic)
(require 'gptel-gemini)
(require 'gptel-ollama)
(require 'gptel-bedrock)

(declare-function toolspec-parse-json "toolspec" (string &optional format))
(declare-function toolspec-read-file "toolspec" (file &optional format))
(declare-function toolspec-to-json "toolspec" (tool &optional dialect))
(declare-function toolspec-validate "toolspec" (tool))
(declare-function toolspec-check "toolspec" (tool))

;;;; Fixtures

(defconst toolspec-gptel-test--examples-dir
  (expand-file-name "../examples"
                    (file-name-directory
                     (or load-file-name buffer-file-name default-directory)))
  "Directory holding the example tool files, next to test/.")

(defconst toolspec-gptel-test--expected-files
  '("openai-chat.json" "openai-responses.json" "anthropic.json"
    "mcp-tools-list.json" "gemini.json" "bedrock.json" "json-schema.json")
  "Example files that must exist: one per input format.")

(defconst toolspec-gptel-test--category "toolspec-test"
  "The gptel tool category under which tests register tools.")

(defconst toolspec-gptel-test--backend-names
  '(openai openai-responses anthropic gemini ollama bedrock)
  "The gptel backends whose tool serialisation is checked.")

(defconst toolspec-gptel-test--openai-like
  '(openai openai-responses ollama bedrock)
  "Backends using gptel's generic (OpenAI) tool schema.")

(defvar toolspec-gptel-test--backends nil
  "Alist of backend symbol to gptel backend object, filled on demand.")

(defun toolspec-gptel-test--backend (which)
  "Return a gptel backend of kind WHICH, with dummy credentials.
WHICH is one of `toolspec-gptel-test--backend-names'."
  (or (alist-get which toolspec-gptel-test--backends)
      (setf (alist-get which toolspec-gptel-test--backends)
            (pcase-exhaustive which
              ;; The default host would give a Responses backend.
              ('openai (gptel-make-openai "toolspec-test-openai"
                         :key "dummy" :host "openai-compatible.invalid"))
              ('openai-responses (gptel-make-openai-responses
                                  "toolspec-test-responses" :key "dummy"))
              ('anthropic (gptel-make-anthropic "toolspec-test-anthropic"
                            :key "dummy"))
              ('gemini (gptel-make-gemini "toolspec-test-gemini"
                         :key "dummy"))
              ('ollama (gptel-make-ollama "toolspec-test-ollama"))
              ;; A bearer token skips the curl version check.
              ('bedrock (gptel-make-bedrock "toolspec-test-bedrock"
                          :region "us-east-1" :aws-bearer-token "dummy"))))))

(defconst toolspec-gptel-test--runnable-files
  '("gloodata.json" "arcade.json" "skydeck.json" "openapi.json")
  "Examples of formats that say how a tool runs, not tool schemas.
They are tested in toolspec-seeds-test.el.")

(defun toolspec-gptel-test--files ()
  "Return the absolute names of the JSON tool schema files in examples/."
  (cl-remove-if (lambda (f) (member (file-name-nondirectory f) toolspec-gptel-test--runnable-files))
                (directory-files toolspec-gptel-test--examples-dir t "\\.json\\'")))

(defmacro toolspec-gptel-test--with-registry (&rest body)
  "Run BODY, then unregister all tools in the test category from gptel."
  (declare (indent 0) (debug t))
  `(unwind-protect (progn ,@body)
     (setq gptel--known-tools
           (assoc-delete-all toolspec-gptel-test--category
                             gptel--known-tools))))

(defun toolspec-gptel-test--register (plist)
  "Register tool PLIST with gptel and return the struct gptel stored.
PLIST's :args are modified by gptel (symbol types become strings)."
  (apply #'gptel-make-tool :function #'ignore
         :category toolspec-gptel-test--category plist)
  (gptel-get-tool (list toolspec-gptel-test--category
                        (plist-get plist :name))))

;;;; JSON helpers

(defun toolspec-gptel-test--json-read (string)
  "Parse JSON STRING into alists, vectors, :null and :json-false."
  (json-parse-string string :object-type 'alist :array-type 'array
                     :null-object :null :false-object :json-false))

(defun toolspec-gptel-test--json-read-file (file)
  "Parse the JSON in FILE like `toolspec-gptel-test--json-read'."
  (with-temp-buffer
    (insert-file-contents file)
    (toolspec-gptel-test--json-read (buffer-string))))

(defun toolspec-gptel-test--object-p (value)
  "Non-nil if VALUE is a parsed JSON object (an alist; nil is {})."
  (and (listp value)
       (cl-every (lambda (cell) (and (consp cell) (symbolp (car cell))))
                 value)))

(defun toolspec-gptel-test--sorted (value)
  "VALUE with the keys of every JSON object sorted, for comparison."
  (cond
   ((vectorp value) (vconcat (mapcar #'toolspec-gptel-test--sorted value)))
   ((and value (toolspec-gptel-test--object-p value))
    (sort (mapcar (lambda (cell)
                    (cons (car cell) (toolspec-gptel-test--sorted (cdr cell))))
                  value)
          (lambda (a b) (string< (car a) (car b)))))
   (t value)))

;;;; What the example files say (independent of toolspec)

(defun toolspec-gptel-test--file-tools (doc)
  "Return ((NAME DESCRIPTION SCHEMA) ...) for the tools in parsed DOC.
DOC is any example file's content; SCHEMA is the parameters schema as
written in the file (nil when the file has none)."
  (let ((entries (cond ((vectorp doc) (append doc nil))
                       ((assq 'tools doc) (append (alist-get 'tools doc) nil))
                       ((assq 'functionDeclarations doc)
                        (append (alist-get 'functionDeclarations doc) nil))
                       (t (list doc)))))
    (mapcar
     (lambda (entry)
       (let* ((tool (or (alist-get 'function entry)
                        (alist-get 'toolSpec entry)
                        entry))
              (schema
               (cond ((assq 'parameters tool) (alist-get 'parameters tool))
                     ((assq 'input_schema tool) (alist-get 'input_schema tool))
                     ((assq 'inputSchema tool)
                      (let ((s (alist-get 'inputSchema tool)))
                        (if (assq 'json s) (alist-get 'json s) s)))
                     ;; A bare JSON Schema: the tool is the schema.
                     (t tool))))
         (list (or (alist-get 'name tool) (alist-get 'title tool))
               (alist-get 'description tool)
               schema)))
     entries)))

(defconst toolspec-gptel-test--schema-maps
  '(properties patternProperties dependentSchemas)
  "Keywords whose value maps names to schemas.")

(defconst toolspec-gptel-test--schema-single
  '(items additionalProperties additionalItems not if then else contains
          propertyNames unevaluatedItems unevaluatedProperties)
  "Keywords whose value is a schema.")

(defconst toolspec-gptel-test--schema-lists
  '(anyOf oneOf allOf prefixItems)
  "Keywords whose value is an array of schemas.")

(defun toolspec-gptel-test--resolve (ref roots)
  "Return what the local JSON pointer REF (\"#/...\") points to in ROOTS.
ROOTS are parsed documents, tried in order."
  (let ((tokens (mapcar (lambda (token)
                          (string-replace
                           "~0" "~" (string-replace
                                     "~1" "/" (url-unhex-string token))))
                        (cdr (split-string (substring ref 1) "/")))))
    (or (cl-some
         (lambda (root)
           (catch 'missing
             (let ((node root))
               (dolist (token tokens node)
                 (setq node
                       (cond ((vectorp node)
                              (let ((i (string-to-number token)))
                                (if (< i (length node)) (aref node i)
                                  (throw 'missing nil))))
                             ((toolspec-gptel-test--object-p node)
                              (let ((cell (assq (intern token) node)))
                                (if cell (cdr cell) (throw 'missing nil))))
                             (t (throw 'missing nil))))))))
         roots)
        (error "Unresolvable $ref %s" ref))))

(defun toolspec-gptel-test--canonical-type (type)
  "Return the alist toolspec's rules make of the JSON `type' value TYPE.
Type names are lower-cased (Gemini writes them upper case); a union
with \"null\" becomes the other type plus `nullable'."
  (if (stringp type)
      `((type . ,(downcase type)))
    (let* ((names (delete-dups (mapcar #'downcase (append type nil))))
           (nullable (member "null" names))
           (types (delete "null" names)))
      (append (cond ((null types) '((type . "null")))
                    ((null (cdr types)) `((type . ,(car types))))
                    (t `((anyOf . ,(vconcat (mapcar (lambda (ty) `((type . ,ty)))
                                                    types))))))
              (and nullable types '((nullable . t)))))))

(defun toolspec-gptel-test--canonical (node roots &optional seen)
  "Return schema NODE as toolspec must hand it over in a plist.
`$ref' is inlined (sibling keywords override the target's), `$defs' and
`definitions' are dropped, `type' is canonicalised with
`toolspec-gptel-test--canonical-type'.  ROOTS are the documents `$ref'
resolves in; SEEN the references being expanded (to stop cycles)."
  (let ((ref (alist-get '$ref node)))
    (if ref
        (progn
          (when (member ref seen) (error "Recursive $ref %s" ref))
          (let ((merged (copy-alist (toolspec-gptel-test--resolve ref roots))))
            (dolist (cell node)
              (unless (eq (car cell) '$ref)
                (setf (alist-get (car cell) merged) (cdr cell))))
            (toolspec-gptel-test--canonical merged roots (cons ref seen))))
      (let ((sub (lambda (schema)
                   (if (toolspec-gptel-test--object-p schema)
                       (toolspec-gptel-test--canonical schema roots seen)
                     schema)))
            out)
        (pcase-dolist (`(,key . ,value) node)
          (cond
           ((memq key '($defs definitions)))
           ((eq key 'type)
            (setq out (append (reverse (toolspec-gptel-test--canonical-type value))
                              out)))
           ((and (memq key toolspec-gptel-test--schema-maps)
                 (toolspec-gptel-test--object-p value))
            (push (cons key (mapcar (lambda (cell)
                                      (cons (car cell) (funcall sub (cdr cell))))
                                    value))
                  out))
           ((and (memq key (append toolspec-gptel-test--schema-single
                                   toolspec-gptel-test--schema-lists))
                 (vectorp value))
            (push (cons key (vconcat (mapcar sub value))) out))
           ((memq key toolspec-gptel-test--schema-single)
            (push (cons key (funcall sub value)) out))
           (t (push (cons key value) out))))
        (nreverse out)))))

;;;; What gptel is known to do to a schema (see Commentary, G1-G7)

(defun toolspec-gptel-test--gemini-strip (node)
  "NODE without `additionalProperties', the way Gemini's gptel filter does.
Recurses through object values and `anyOf'/`allOf' arrays only (G6)."
  (if (not (toolspec-gptel-test--object-p node))
      node
    (mapcar (lambda (cell)
              (let ((value (cdr cell)))
                (cons (car cell)
                      (cond ((and (memq (car cell) '(anyOf allOf)) (vectorp value))
                             (vconcat (mapcar #'toolspec-gptel-test--gemini-strip
                                              value)))
                            ((toolspec-gptel-test--object-p value)
                             (toolspec-gptel-test--gemini-strip value))
                            (t value)))))
            (assq-delete-all 'additionalProperties (copy-alist node)))))

(defun toolspec-gptel-test--gptel-arg (schema backend)
  "Return top-level argument SCHEMA as gptel sends it to BACKEND (G3, G5-G7)."
  (let ((arg (copy-tree schema t))
        (type (alist-get 'type schema)))
    (when (equal type "object")
      (unless (assq 'required arg)
        (setq arg (append arg (list (cons 'required [])))))
      (when (memq backend toolspec-gptel-test--openai-like)
        (setf (alist-get 'additionalProperties arg) :json-false)))
    (when (eq backend 'gemini)
      (when (equal type "string")
        (setq arg (assq-delete-all 'format arg)))
      (setq arg (toolspec-gptel-test--gemini-strip arg)))
    arg))

(defun toolspec-gptel-test--gptel-view (schema backend)
  "Return canonical root SCHEMA as gptel 0.9.9.6 sends it to BACKEND.
This is the minimal normalisation documented in the Commentary (G1-G7)."
  (let ((props (alist-get 'properties schema))
        (required (append (alist-get 'required schema) nil)))
    (if (null props)
        (pcase backend                                            ;G4
          ('gemini :null)
          ('anthropic '((type . "object") (properties) (required . [])))
          (_ '((type . "object") (properties))))
      (append
       `((type . "object")                                        ;G1
         (properties
          . ,(mapcar (lambda (cell)
                       (cons (car cell)
                             (toolspec-gptel-test--gptel-arg (cdr cell) backend)))
                     props))
         (required                                                ;G2
          . ,(vconcat (cl-loop for (name . _) in props
                               when (member (symbol-name name) required)
                               collect (symbol-name name)))))
       (and (memq backend toolspec-gptel-test--openai-like)       ;G5
            '((additionalProperties . :json-false)))))))

;;;; What gptel actually sends

(defun toolspec-gptel-test--sent (tool backend)
  "Return gptel's serialisation of gptel-tool TOOL for BACKEND, parsed.
The value is (NAME DESCRIPTION SCHEMA), SCHEMA being the parameters
object (or :null) in gptel's JSON."
  (let* ((json (toolspec-gptel-test--json-read
                (gptel--json-encode
                 (gptel--parse-tools (toolspec-gptel-test--backend backend)
                                     (list tool)))))
         (_ (unless (and (vectorp json) (= (length json) 1))
              (error "Unexpected gptel output for one tool: %S" json)))
         (top (aref json 0))
         (decl
          (pcase backend
            ((or 'openai 'ollama)
             (unless (equal (alist-get 'type top) "function")
               (error "Not a chat-completions tool: %S" top))
             (alist-get 'function top))
            ('openai-responses
             (unless (and (equal (alist-get 'type top) "function")
                          (not (assq 'function top)))
               (error "Not a Responses tool: %S" top))
             top)
            ('anthropic top)
            ('gemini
             (let ((decls (alist-get 'functionDeclarations top)))
               (unless (and (vectorp decls) (= (length decls) 1))
                 (error "Not one functionDeclaration: %S" top))
               (aref decls 0)))
            ('bedrock (alist-get 'toolSpec top)))))
    (list (alist-get 'name decl)
          (alist-get 'description decl)
          (pcase backend
            ('anthropic (alist-get 'input_schema decl))
            ('bedrock (alist-get 'json (alist-get 'inputSchema decl)))
            (_ (alist-get 'parameters decl))))))

(defun toolspec-gptel-test--schema-keys (schema)
  "Return every keyword used in SCHEMA's schema objects, at any depth.
Property names and data values (`enum', `const', `default', `examples')
are not keywords and are skipped."
  (let (keys)
    (cl-labels
        ((walk (node)
           (cond
            ((vectorp node) (mapc #'walk node))
            ((and node (toolspec-gptel-test--object-p node))
             (pcase-dolist (`(,key . ,value) node)
               (push key keys)
               (cond
                ((memq key '(enum const default examples)))
                ((and (memq key (cons '$defs toolspec-gptel-test--schema-maps))
                      (toolspec-gptel-test--object-p value))
                 (dolist (cell value) (walk (cdr cell))))
                (t (walk value))))))))
      (walk schema))
    keys))

;;;; Plist helpers

(defun toolspec-gptel-test--plist-p (value)
  "Return non-nil if VALUE is a plist with keyword keys."
  (and (consp value) (keywordp (car value)) (proper-list-p value)
       (cl-evenp (length value))))

(defun toolspec-gptel-test--sorted-plist (value)
  "VALUE with plists turned into key-sorted alists, recursively.
An `:optional' key with value nil is dropped: it means the same as none."
  (cond
   ((vectorp value) (vconcat (mapcar #'toolspec-gptel-test--sorted-plist value)))
   ((toolspec-gptel-test--plist-p value)
    (sort (cl-loop for (key val) on value by #'cddr
                   unless (and (eq key :optional) (null val))
                   collect (cons key (toolspec-gptel-test--sorted-plist val)))
          (lambda (a b) (string< (car a) (car b)))))
   ((consp value) (mapcar #'toolspec-gptel-test--sorted-plist value))
   (t value)))

(defun toolspec-gptel-test--find (name plists)
  "Return the tool plist called NAME in PLISTS."
  (cl-find name plists :key (lambda (p) (plist-get p :name)) :test #'equal))

;;;; Tests

(ert-deftest toolspec-gptel-test-examples-present ()
  "Every input format has its example file, and it is a tool file."
  (dolist (name toolspec-gptel-test--expected-files)
    (let ((file (expand-file-name name toolspec-gptel-test--examples-dir)))
      (should (file-readable-p file))
      (let ((tools (toolspec-gptel-test--file-tools
                    (toolspec-gptel-test--json-read-file file))))
        (should tools)
        (dolist (tool tools)
          (should (string-match-p "\\`[a-zA-Z0-9_-]\\{1,64\\}\\'" (car tool)))
          (should (stringp (nth 1 tool))))))))

(ert-deftest toolspec-gptel-test-parse-examples ()
  "Every example is read by toolspec into plists gptel and llm accept."
  (dolist (file (toolspec-gptel-test--files))
    (let ((expected (toolspec-gptel-test--file-tools
                     (toolspec-gptel-test--json-read-file file)))
          (plists (toolspec-read-file file)))
      ;; Same tools, same order, same names and descriptions.
      (should (equal (list file (mapcar #'car expected))
                     (list file (mapcar (lambda (p) (plist-get p :name)) plists))))
      (should (equal (mapcar (lambda (e) (nth 1 e)) expected)
                     (mapcar (lambda (p) (plist-get p :description)) plists)))
      ;; Reading the file and parsing its text agree.
      (should (equal plists
                     (toolspec-parse-json
                      (with-temp-buffer
                        (insert-file-contents file)
                        (buffer-string)))))
      (dolist (plist plists)
        (should-not (plist-member plist :function))
        (dolist (arg (plist-get plist :args))
          (should (stringp (plist-get arg :name)))
          (should (stringp (plist-get arg :description)))
          (should (and (symbolp (plist-get arg :type))
                       (plist-get arg :type)))
          (should (memq (plist-get arg :optional) '(nil t)))))
      ;; The args are the top-level properties, in the file's order.
      (cl-loop for (_name _desc schema) in expected
               for plist in plists
               do (should (equal (mapcar (lambda (cell) (symbol-name (car cell)))
                                         (alist-get 'properties schema))
                                 (mapcar (lambda (arg) (plist-get arg :name))
                                         (plist-get plist :args))))))))

(ert-deftest toolspec-gptel-test-seed-record-summary ()
  "The seed's record_summary JSON gives the plist the seed describes."
  (let* ((plists (toolspec-read-file
                  (expand-file-name "anthropic.json"
                                    toolspec-gptel-test--examples-dir)))
         (tool (toolspec-gptel-test--find "record_summary" plists))
         (want-args
          '((:name "key_colors" :type array
             :items (:type object
                     :properties (:r (:type number :description "red value [0.0, 1.0]")
                                  :g (:type number :description "green value [0.0, 1.0]")
                                  :b (:type number :description "blue value [0.0, 1.0]")
                                  :name (:type string :description "human-readable color name in snake_case, e.g. \"olive_green\" or \"turquoise\""))
                     :required ["r" "g" "b" "name"])
             :description "key colors in the image. limit to less then four.")
            (:name "description" :type string
             :description "image description. one to two sentences max.")
            (:name "estimated_year" :type integer
             :description "estimated year that the images was taken, if is it a photo. only set this if the image appears to be non-fictional. rough estimates are okay!"
             :optional t))))
    (should tool)
    (should (equal (plist-get tool :description)
                   "record summary of an image using well-structured json."))
    (should (equal (toolspec-gptel-test--sorted-plist (plist-get tool :args))
                   (toolspec-gptel-test--sorted-plist want-args)))
    ;; :properties keeps the order of the JSON object.
    (let ((props (plist-get (plist-get (car (plist-get tool :args)) :items)
                            :properties)))
      (should (equal (cl-loop for (key _) on props by #'cddr collect key)
                     '(:r :g :b :name))))))

(ert-deftest toolspec-gptel-test-contract-details ()
  "$ref is inlined, unions become :nullable, Gemini types are lower case."
  (let* ((mcp (toolspec-read-file
               (expand-file-name "mcp-tools-list.json"
                                 toolspec-gptel-test--examples-dir)))
         (issue (toolspec-gptel-test--find "create_issue" mcp))
         (repo (car (plist-get issue :args)))
         (read (toolspec-gptel-test--find "read_text_file" mcp))
         (gemini (toolspec-read-file
                  (expand-file-name "gemini.json"
                                    toolspec-gptel-test--examples-dir)))
         (find (toolspec-gptel-test--find "find_restaurants" gemini))
         (bedrock (toolspec-read-file
                   (expand-file-name "bedrock.json"
                                     toolspec-gptel-test--examples-dir))))
    (should (equal (plist-get repo :name) "repository"))
    (should (eq (plist-get repo :type) 'object))
    (should (equal (plist-get repo :description) "Repository the issue is filed in."))
    (should (equal (cl-loop for (key _) on (plist-get repo :properties) by #'cddr
                            collect key)
                   '(:owner :name)))
    (should (equal (plist-get repo :required) ["owner" "name"]))
    (should (eq (plist-get repo :additionalProperties) :json-false))
    (should-not (plist-member repo :$ref))
    (should (equal (plist-get issue :title) "Create Issue"))
    (let ((start (cadr (plist-get read :args))))
      (should (equal (plist-get start :name) "start_line"))
      (should (eq (plist-get start :type) 'integer))
      (should (eq (plist-get start :nullable) t))
      (should (eq (plist-get start :optional) t)))
    (dolist (arg (plist-get find :args))
      (should (memq (plist-get arg :type)
                    '(string number integer boolean array object))))
    (should (equal (plist-get (nth 1 (plist-get find :args)) :enum)
                   ["french" "italian" "japanese" "vegetarian" "any"]))
    (should (eq (plist-get (nth 2 (plist-get (car bedrock) :args)) :default)
                :json-false))))

(ert-deftest toolspec-gptel-test-register ()
  "Every example tool registers with gptel and is found again."
  (toolspec-gptel-test--with-registry
    (dolist (file (toolspec-gptel-test--files))
      (dolist (plist (toolspec-read-file file))
        (let* ((name (plist-get plist :name))
               (nargs (length (plist-get plist :args)))
               (tool (toolspec-gptel-test--register plist)))
          (should (gptel-tool-p tool))
          (should (eq tool (gptel-get-tool name)))
          (should (equal (gptel-tool-name tool) name))
          (should (equal (gptel-tool-description tool)
                         (plist-get plist :description)))
          (should (equal (gptel-tool-category tool)
                         toolspec-gptel-test--category))
          (should (= (length (gptel-tool-args tool)) nargs)))))))

(ert-deftest toolspec-gptel-test-openai-backend-kind ()
  "The OpenAI backend used here is chat completions, not Responses."
  (should (cl-typep (toolspec-gptel-test--backend 'openai) 'gptel-openai))
  (should (cl-typep (toolspec-gptel-test--backend 'openai-responses)
                    'gptel-openai-responses)))

(defun toolspec-gptel-test--check-backend (backend)
  "Compare gptel's tool JSON for BACKEND with every example file."
  (toolspec-gptel-test--with-registry
    (dolist (file (toolspec-gptel-test--files))
      (let* ((doc (toolspec-gptel-test--json-read-file file))
             ;; A fresh read: earlier registrations mutated their plists.
             (plists (toolspec-read-file file)))
        (should (= (length plists)
                   (length (toolspec-gptel-test--file-tools doc))))
        (cl-loop
         for (name description schema) in (toolspec-gptel-test--file-tools doc)
         for plist in plists
         do
         (let* ((canonical (toolspec-gptel-test--canonical schema (list schema doc)))
                (want (toolspec-gptel-test--gptel-view canonical backend))
                (tool (toolspec-gptel-test--register plist))
                (sent (toolspec-gptel-test--sent tool backend))
                (got (nth 2 sent))
                (where (list (file-name-nondirectory file) name backend)))
           (should (equal (cons where (butlast sent))
                          (list where name description)))
           (should (equal (cons where (toolspec-gptel-test--sorted got))
                          (cons where (toolspec-gptel-test--sorted want))))
           ;; Property order survives the trip.
           (unless (eq got :null)
             (should (equal (cons where (mapcar #'car (alist-get 'properties got)))
                            (cons where (mapcar #'car (alist-get 'properties canonical))))))))))))

(ert-deftest toolspec-gptel-test-schema-openai ()
  "Tools gptel sends to OpenAI chat carry the example schemas (modulo G1-G5)."
  (toolspec-gptel-test--check-backend 'openai))

(ert-deftest toolspec-gptel-test-schema-openai-responses ()
  "Tools gptel sends to OpenAI Responses carry the example schemas (modulo G1-G5)."
  (toolspec-gptel-test--check-backend 'openai-responses))

(ert-deftest toolspec-gptel-test-schema-anthropic ()
  "Tools gptel sends to Anthropic carry the example schemas (modulo G1-G4)."
  (toolspec-gptel-test--check-backend 'anthropic))

(ert-deftest toolspec-gptel-test-schema-gemini ()
  "Tools gptel sends to Gemini carry the example schemas (modulo G1-G4, G6, G7)."
  (toolspec-gptel-test--check-backend 'gemini))

(ert-deftest toolspec-gptel-test-schema-ollama ()
  "Tools gptel sends to Ollama carry the example schemas (modulo G1-G5)."
  (toolspec-gptel-test--check-backend 'ollama))

(ert-deftest toolspec-gptel-test-schema-bedrock ()
  "Tools gptel sends to Bedrock carry the example schemas (modulo G1-G5)."
  (toolspec-gptel-test--check-backend 'bedrock))

(ert-deftest toolspec-gptel-test-no-optional-key ()
  "No schema gptel sends for a toolspec plist has an \"optional\" key."
  (toolspec-gptel-test--with-registry
    (dolist (backend toolspec-gptel-test--backend-names)
      (dolist (file (toolspec-gptel-test--files))
        (dolist (plist (toolspec-read-file file))
          (let* ((tool (toolspec-gptel-test--register plist))
                 (keys (toolspec-gptel-test--schema-keys
                        (nth 2 (toolspec-gptel-test--sent tool backend)))))
            (should (equal (list (plist-get plist :name) backend nil)
                           (list (plist-get plist :name) backend
                                 (memq 'optional keys))))
            ;; Nor a key that is still an Emacs keyword.
            (should-not (cl-find-if (lambda (k) (string-prefix-p ":" (symbol-name k)))
                                    keys))))))))

(ert-deftest toolspec-gptel-test-optional-leak-detected ()
  "The \"optional\" check above does catch gptel's nested :optional leak."
  (toolspec-gptel-test--with-registry
    (let* ((tool (toolspec-gptel-test--register
                  (list :name "leaky" :description "Hand-written nested :optional."
                        :args (list (list :name "opts" :type 'object
                                          :description "Options."
                                          :properties
                                          (list :depth (list :type 'integer
                                                             :description "Depth."
                                                             :optional t)))))))
           (keys (toolspec-gptel-test--schema-keys
                  (nth 2 (toolspec-gptel-test--sent tool 'openai)))))
      (should (memq 'optional keys)))))

(ert-deftest toolspec-gptel-test-to-json-struct-equals-plist ()
  "`toolspec-to-json' gives the same JSON for a plist and gptel's struct.
The struct has been through `gptel-make-tool', which turned its symbol
types into strings.  A gptel-tool struct has no slot for :title,
:annotations, :schema-extra or :strict, so the plist compared is cut down
to :name, :description and :args."
  (toolspec-gptel-test--with-registry
    (dolist (file (toolspec-gptel-test--files))
      (dolist (plist (toolspec-read-file file))
        (let* ((name (plist-get plist :name))
               (original (list :name name
                               :description (plist-get plist :description)
                               :args (copy-tree (plist-get plist :args) t)))
               (tool (toolspec-gptel-test--register plist))
               (snapshot (copy-tree (gptel-tool-args tool) t)))
          (when (gptel-tool-args tool)
            ;; gptel did mutate the args, or this test proves nothing.
            (should (stringp (plist-get (car (gptel-tool-args tool)) :type))))
          (dolist (dialect '(openai anthropic gemini))
            (should (equal (list name dialect (toolspec-to-json tool dialect))
                           (list name dialect (toolspec-to-json original dialect)))))
          ;; toolspec must not modify what it serialises.
          (should (equal snapshot (gptel-tool-args tool))))))))

(ert-deftest toolspec-gptel-test-export-serialized-equals-printed ()
  "Exporting registered tools through `json-serialize' gives the JSON
printing them gives, in every dialect.
Registered gptel tools (string types) take the fast path; plists with
symbol types cannot be serialised and are printed instead."
  (toolspec-gptel-test--with-registry
    (let* ((plists (cl-loop for file in (toolspec-gptel-test--files)
                            append (toolspec-read-file file)))
           (tools (mapcar (lambda (p) (toolspec-gptel-test--register (copy-tree p t))) plists)))
      ;; The fast path is taken for the structs, not for the plists.
      (should (stringp (toolspec--serialize tools)))
      (should-not (toolspec--serialize plists))
      (dolist (dialect (toolspec-dialects))
        (let ((fast (toolspec-tools-to-json tools dialect))
              (printed (toolspec-gptel-test--printed-json tools dialect)))
          (should (equal (list dialect fast) (list dialect printed)))
          ;; Indented, the tools written on several threads.
          (should (equal (list dialect (toolspec-tools-to-json tools dialect t))
                         (list dialect (toolspec-gptel-test--printed-json tools dialect t))))
          ;; Again, from the texts kept by the first export.
          (should (equal (list dialect (toolspec-tools-to-json tools dialect))
                         (list dialect printed)))
          ;; And what the plists give, cut to what a struct holds.
          (should (equal (list dialect fast)
                         (list dialect
                               (toolspec-tools-to-json
                                (mapcar (lambda (p) (list :name (plist-get p :name)
                                                          :description (plist-get p :description)
                                                          :args (plist-get p :args)))
                                        plists)
                                dialect)))))))))

;;;; Export: the texts kept for the next export

(defun toolspec-gptel-test--printed-json (tools dialect &optional pretty)
  "TOOLS as one JSON document in DIALECT by printing them for the module.
Neither `json-serialize' nor the texts kept from earlier exports are
used.  PRETTY as for `toolspec-tools-to-json'."
  (cl-letf (((symbol-function 'toolspec--serialize) #'ignore)
            ((symbol-function 'toolspec--tool-texts) #'ignore))
    (toolspec-tools-to-json tools dialect pretty)))

(defun toolspec-gptel-test--cached-json (tools dialect)
  "TOOLS as JSON in DIALECT, every tool's text from an earlier export.
Fails if the module would have to write one of them."
  (let ((written (lambda (&rest _) (error "A tool was written again"))))
    (cl-letf (((symbol-function 'toolspec--mod-serialized-to-texts) written)
              ((symbol-function 'toolspec--mod-kept-texts) written)
              ((symbol-function 'toolspec--mod-serialized-to-json) written)
              ((symbol-function 'toolspec--mod-to-json) written))
      (toolspec-tools-to-json tools dialect))))

(ert-deftest toolspec-gptel-test-export-kept-texts-follow-changes ()
  "A tool's JSON is kept for the next export only while the tool is unchanged.
Each change, in place (a character of a string, a value in an arg
plist, an element of an enum vector) or not (a new args list, a new
name), makes the next export write the tool again, and the document
is the one printing the changed tool gives."
  (toolspec-gptel-test--with-registry
    (let* ((tool (toolspec-gptel-test--register
                  (list :name "pick_colour"
                        :description "Pick a colour."
                        :args (list (list :name "colour" :type 'string :description "The colour."
                                          :enum (vector "red" "green"))
                                    (list :name "shades" :type 'array :description "Shades."
                                          :items (list :type 'number)
                                          :optional t)))))
           (other (toolspec-gptel-test--register
                   (list :name "other" :description "Other."
                         :args (list (list :name "x" :type 'integer :description "X.")))))
           (tools (list tool other))
           (changes
            (list (lambda () (aset (gptel-tool-description tool) 0 ?Z))
                  (lambda () (setcar (cdr (plist-member (car (gptel-tool-args tool)) :description))
                                     "The colour, by name."))
                  (lambda () (aset (plist-get (car (gptel-tool-args tool)) :enum) 1 "blue"))
                  (lambda () (setcar (cdr (plist-member (plist-get (cadr (gptel-tool-args tool)) :items)
                                                        :type))
                                     "integer"))
                  (lambda () (setf (gptel-tool-args tool) (list (car (gptel-tool-args tool)))))
                  (lambda () (setf (gptel-tool-name tool) "choose_colour")))))
      (clrhash toolspec--export-cache)
      (dolist (dialect '(openai mcp gemini))
        (let ((json (toolspec-tools-to-json tools dialect)))
          (should (equal json (toolspec-gptel-test--printed-json tools dialect)))
          (should (equal json (toolspec-gptel-test--cached-json tools dialect)))))
      (should (gethash tool toolspec--export-cache))
      (dolist (change changes)
        (let ((before (toolspec-gptel-test--cached-json tools 'openai)))
          (funcall change)
          ;; The changed tool is not served from what was kept...
          (should-error (toolspec-gptel-test--cached-json tools 'openai))
          (let ((after (toolspec-tools-to-json tools 'openai)))
            (should-not (equal after before))
            (should (equal after (toolspec-gptel-test--printed-json tools 'openai)))
            ;; ...until it has been written again.
            (should (equal after (toolspec-gptel-test--cached-json tools 'openai)))))))))

;; Registered tools' texts are kept by their source plist, never
;; compared deeply: each check below fails if a kept text is served
;; once the tool it was written for is no longer what exports write.
(ert-deftest toolspec-gptel-test-export-registered-kept-texts-follow-registration ()
  "A registered tool's kept JSON is served only while it is still right.
Exports of a tool toolspec registered are written from the plist it
was registered from.  Changes to gptel's struct, to its lists and
vectors in place (an arg's description, an enum value, an item
type) or not (a new description, new args), leave that plist as it
was: the export is still what printing the tool gives.  A new name,
in place or not, and registering the
source again with a changed tool make the tool written again; a
name refused by the dialect is written under the same new name."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((source "colours")
           (plists (lambda (description)
                     (list (list :name "pick_colour" :description description
                                 :args (list (list :name "colour" :type 'string :description "The colour."
                                                   :enum (vector "red" "green"))
                                             (list :name "shades" :type 'array :description "Shades."
                                                   :items (list :type 'number) :optional t)))
                           (list :name "math.sum" :description "Add."
                                 :args (list (list :name "x" :type 'number :description "X."))))))
           (tools (let ((inhibit-message t))
                    (toolspec-register (funcall plists "Pick a colour.") :source source
                                       :category toolspec-gptel-test--category)))
           (tool (car tools))
           (right (lambda (tools)
                    ;; The export is what printing the tools gives, and
                    ;; the next one is served from the kept texts.
                    (let ((json (toolspec-tools-to-json tools 'openai)))
                      (should (equal json (toolspec-gptel-test--printed-json tools 'openai)))
                      (should (equal json (toolspec-gptel-test--cached-json tools 'openai)))
                      json))))
      (clrhash toolspec--export-cache)
      (let ((first (funcall right tools)))
        (should (string-match-p "\"name\":\"math_sum\"" first))
        (should (string-match-p "Pick a colour\\." first))
        ;; gptel's struct changed: the plist exported from is not.
        (setf (gptel-tool-description tool) "Zick a colour.")
        (setcar (cdr (plist-member (car (gptel-tool-args tool)) :description)) "Zhe colour.")
        (aset (plist-get (car (gptel-tool-args tool)) :enum) 1 "blue")
        (setcar (cdr (plist-member (plist-get (cadr (gptel-tool-args tool)) :items) :type)) "integer")
        (setf (gptel-tool-args tool) (list (car (gptel-tool-args tool))))
        (should (equal (funcall right tools) first))
        (should-not (string-match-p "Zick\\|Zhe colour\\|blue\\|integer" first)))
      ;; A new name, in place, then not.
      (aset (gptel-tool-name tool) 0 ?k)
      (should (string-match-p "\"kick_colour\"" (funcall right tools)))
      (setf (gptel-tool-name tool) "choose_colour")
      (should (string-match-p "\"choose_colour\"" (funcall right tools)))
      ;; Registered again, changed: the new tools are written.
      (let* ((again (let ((inhibit-message t))
                      (toolspec-register (funcall plists "Choose a colour.") :source source
                                         :category toolspec-gptel-test--category)))
             (json (funcall right again)))
        (should (string-match-p "Choose a colour\\." json))
        (should-not (string-match-p "Pick a colour" json))
        (should (string-match-p "\"name\":\"math_sum\"" json))))))

(ert-deftest toolspec-gptel-test-export-many-registered-in-parts ()
  "Many registered tools are written in parts, the document unchanged.
Exporting 1,100 tools toolspec registered, the module writes them in
parts (each serialised while the last is written): the document is
what printing the tools gives, names refused by the dialect made
valid and distinct across parts, texts beyond ASCII intact, and the
next export is served from the kept texts, which are multibyte."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((plists (cl-loop for i below 1100
                            collect (list :name (if (cl-evenp i) (format "math.op%d" i) (format "tool_%d" i))
                                          :description (if (zerop (% i 7)) (format "Tool %d, 20 °C." i) "A tool.")
                                          :args (list (list :name "x" :type 'string :description "X.")))))
           (tools (let ((inhibit-message t))
                    (toolspec-register plists :category toolspec-gptel-test--category)))
           (calls 0)
           (count (lambda (&rest _) (setq calls (1+ calls)))))
      (clrhash toolspec--export-cache)
      (advice-add 'toolspec--mod-serialized-to-texts :before count)
      (let ((json (unwind-protect (let ((inhibit-message t)) (toolspec-tools-to-json tools 'openai))
                    (advice-remove 'toolspec--mod-serialized-to-texts count))))
        (should (= calls 2))
        (should (equal json (let ((inhibit-message t))
                              (toolspec-gptel-test--printed-json tools 'openai))))
        (should (string-match-p "\"name\":\"math_op0\"" json))
        (should (string-match-p "Tool 1099, 20 °C\\." json))
        (should (equal json (let ((inhibit-message t))
                              (toolspec-gptel-test--cached-json tools 'openai))))
        ;; Each kept under the dialect, or under it and a new name.
        (dolist (tool tools)
          (let ((texts (cdr (gethash tool toolspec--export-cache))))
            (should (= (length texts) 1))
            (should (multibyte-string-p (cdar texts)))))))))

;; Documents joined from the kept texts: `concat' copies a unibyte string
;; into a multibyte result byte by byte.
(ert-deftest toolspec-gptel-test-export-kept-texts-are-multibyte ()
  "The texts kept for the next export are multibyte, ASCII ones too.
So one tool with text beyond ASCII does not make the others' texts be
converted at each export; the document is the same either way."
  (let ((tools (list (list :name "plain" :description "Plain."
                           :args (list (list :name "x" :type "string" :description "X.")))
                     (list :name "accented" :description "Café, 20 °C.")
                     (list :name "other" :description "Other."))))
    (clrhash toolspec--export-cache)
    (let ((json (toolspec-tools-to-json tools 'openai)))
      (should (equal json (toolspec-gptel-test--printed-json tools 'openai)))
      (should (string-match-p "Café, 20 °C" json))
      (dolist (tool tools)
        (let ((text (cdr (assoc "openai" (cdr (gethash tool toolspec--export-cache))))))
          (should (stringp text))
          (should (multibyte-string-p text))
          (should (string-match-p (regexp-quote (plist-get tool :description)) text))))
      (should (equal (toolspec-tools-to-json tools 'openai) json)))))

(ert-deftest toolspec-gptel-test-export-kept-texts-plists-and-errors ()
  "Plists are kept like structs; an error names the tool in the whole list.
A plist whose JSON form reads back as another plist (an object given
as an alist) is written every time, and still correctly."
  (let* ((plist (list :name "p" :description "P." :function #'ignore
                      :args (list (list :name "x" :type "string" :description "X."))))
         (alist-tool (list :name "q" :description "Q."
                           :args (list (list :name "y" :type "object" :description "Y."
                                             :properties '((z . (:type "string"))))))))
    (clrhash toolspec--export-cache)
    (let ((json (toolspec-tools-to-json (list plist alist-tool) 'anthropic)))
      (should (equal json (toolspec-gptel-test--printed-json (list plist alist-tool) 'anthropic)))
      (should (equal json (toolspec-tools-to-json (list plist alist-tool) 'anthropic))))
    (should (gethash plist toolspec--export-cache))
    ;; What was kept for the alist tool is a plist: never served for it.
    (should-error (toolspec-gptel-test--cached-json (list alist-tool) 'anthropic))
    (should (equal (toolspec-tools-to-json (list alist-tool) 'anthropic)
                   (toolspec-gptel-test--printed-json (list alist-tool) 'anthropic)))
    (should (toolspec-gptel-test--cached-json (list plist) 'anthropic))
    (setcar (cdr (plist-member (car (plist-get plist :args)) :name)) "renamed")
    (should (string-match-p "\"renamed\"" (toolspec-tools-to-json (list plist) 'anthropic)))
    ;; A bad tool after a kept one: the error is the one printing gives,
    ;; naming the tool by its place in the list exported.
    (let* ((bad (list :name "bad" :description "Bad." :args (list (list :name 7 :type "string"))))
           (err (should-error (toolspec-tools-to-json (list plist bad) 'openai) :type 'toolspec-error))
           (printed (should-error (toolspec-gptel-test--printed-json (list plist bad) 'openai)
                                  :type 'toolspec-error)))
      (should (equal err printed))
      (should (string-match-p "1" (cadr err))))))

(defun toolspec-gptel-test--errors (tool)
  "Return the error-severity problems `toolspec-validate' finds in TOOL."
  (cl-remove-if-not (lambda (problem) (eq (car problem) 'error))
                    (toolspec-validate tool)))

(ert-deftest toolspec-gptel-test-validate-examples ()
  "The plists toolspec reads from the examples are valid."
  (dolist (file (toolspec-gptel-test--files))
    (dolist (plist (toolspec-read-file file))
      (let ((name (plist-get plist :name)))
        (should (equal (list name nil)
                       (list name (toolspec-gptel-test--errors plist))))
        (should (equal plist (toolspec-check plist)))))))

(ert-deftest toolspec-gptel-test-validate-registered-struct ()
  "A tool gptel has registered is still valid for toolspec.
`gptel-make-tool' always rewrites symbol :type values as strings, so a
registered gptel-tool struct can never have symbol types: reporting that
as an error would make every registered tool invalid."
  (toolspec-gptel-test--with-registry
    (dolist (file (toolspec-gptel-test--files))
      (dolist (plist (toolspec-read-file file))
        (let ((name (plist-get plist :name))
              (tool (toolspec-gptel-test--register plist)))
          (should (equal (list name nil)
                         (list name (toolspec-gptel-test--errors tool))))
          (should (equal tool (toolspec-check tool))))))))

(defun toolspec-gptel-test--own-function (city)
  "The function a Lisp caller gives a tool plist: a report for CITY."
  (format "sunny in %s" city))

(ert-deftest toolspec-gptel-test-register-honours-own-function ()
  "A :function the caller put in a tool plist is the tool's function."
  (require 'toolspec-gptel)
  (let ((gptel--known-tools nil)
        (toolspec-gptel--registered (make-hash-table :test 'equal))
        (toolspec-function-alist nil)
        (plist '(:name "own_weather" :description "Weather."
                 :args ((:name "city" :type string :description "City.")))))
    (dolist (f (list #'toolspec-gptel-test--own-function
                     (lambda (city) (format "sunny in %s" city))))
      (let ((tool (car (toolspec-register (list (append plist (list :function f)))
                                          :category toolspec-gptel-test--category))))
        (should (eq tool (gptel-get-tool (list toolspec-gptel-test--category "own_weather"))))
        (should (equal (funcall (gptel-tool-function tool) "Paris") "sunny in Paris"))))
    ;; Async, with the callback first, as gptel calls it.
    (let* ((tool (car (toolspec-register
                       (list (append plist (list :async t :function (lambda (cb city) (funcall cb (upcase city)))))))))
           (got nil))
      (funcall (gptel-tool-function tool) (lambda (r) (setq got r)) "oslo")
      (should (equal got "OSLO")))
    ;; What is not a function is said, not dropped.
    (let ((err (should-error (toolspec-register (list (append plist (list :function "not a function"))))
                             :type 'toolspec-invalid-spec)))
      (should (string-match-p "own_weather: :function must be a function" (cadr err))))))

(ert-deftest toolspec-gptel-test-llm-args-carry-a-type-symbol ()
  "llm needs a :type symbol on each argument: untyped ones get one."
  (require 'toolspec-gptel)
  (should (equal (toolspec-gptel--llm-args
                  '((:name "a" :description "Any.")
                    (:name "b" :type ["boolean" "string"])
                    (:name "c" :type ["null" "integer"])
                    (:name "d" :items (:type string))
                    (:name "e" :properties (:k (:type string)))
                    (:name "f" :type "number")
                    (:name "g" :type integer)))
                 '((:name "a" :description "Any." :type string)
                   (:name "b" :type boolean)
                   (:name "c" :type integer)
                   (:name "d" :items (:type string) :type array)
                   (:name "e" :properties (:k (:type string)) :type object)
                   (:name "f" :type number)
                   (:name "g" :type integer)))))

(ert-deftest toolspec-gptel-test-untyped-args-reach-gptel-untyped ()
  "gptel sends an argument without a type constraint as it is."
  (toolspec-gptel-test--with-registry
    (let* ((plist (car (toolspec-parse-json
                        "{\"name\": \"t\", \"description\": \"T.\", \"inputSchema\": {\"type\": \"object\",
                          \"properties\": {\"a\": {\"type\": \"any\", \"description\": \"A.\"},
                                         \"b\": {\"type\": [\"boolean\", \"string\"], \"description\": \"B.\"}}}}")))
           (tool (toolspec-gptel-test--register plist))
           (sent (gptel--json-encode (gptel--parse-tools (toolspec-gptel-test--backend 'anthropic) (list tool))))
           (schema (plist-get (aref (json-parse-string sent :object-type 'plist) 0) :input_schema)))
      (should (equal (plist-get (plist-get schema :properties) :a) '(:description "A.")))
      (should (equal (plist-get (plist-get schema :properties) :b) '(:type ["boolean" "string"] :description "B."))))))

(ert-deftest toolspec-gptel-test-mcp-refs-survive-the-plist ()
  "An MCP tool with $defs and $refs, read into a plist and written
back, is the same; the plist's arguments are self-contained."
  (let* ((json "{\"name\":\"create_pet\",\"description\":\"Create.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"body\":{\"$ref\":\"#/$defs/Pet\",\"description\":\"The pet.\"},\"flag\":{\"type\":[\"boolean\",\"string\"]},\"any\":{\"description\":\"Anything.\"}},\"required\":[\"body\"],\"title\":\"create_petArguments\",\"$defs\":{\"Pet\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}},\"x-vendor\":1}}")
         (plist (car (toolspec-parse-json json 'mcp))))
    (should (equal (plist-get (car (plist-get plist :args)) :properties) '(:name (:type string))))
    ;; Compared as alists: every key, in its order.
    (should (equal (json-parse-string (toolspec-to-json plist 'mcp) :object-type 'alist)
                   (json-parse-string json :object-type 'alist)))
    (should (equal (json-parse-string (toolspec-tools-to-json (list plist) 'mcp) :object-type 'alist)
                   (json-parse-string (concat "{\"tools\":[" json "]}") :object-type 'alist)))))

;;;; What gptel sends for the tools toolspec registers

(defconst toolspec-gptel-test--refused-json
  "{\"tools\": [
     {\"name\": \"math.sum\", \"description\": \"Add two numbers.\",
      \"inputSchema\": {\"$schema\": \"https://json-schema.org/draft/2020-12/schema\",
        \"type\": \"object\",
        \"properties\": {
          \"a\": {\"type\": \"number\", \"description\": \"First.\", \"exclusiveMinimum\": 0},
          \"b\": {\"type\": [\"number\", \"null\"], \"description\": \"Second.\"},
          \"mode\": {\"const\": 1, \"description\": \"Mode.\"}},
        \"required\": [\"a\"]}},
     {\"name\": \"math_sum\", \"description\": \"Another adder.\",
      \"inputSchema\": {\"type\": \"object\", \"properties\": {}}}]}"
  "Tools whose plists gptel's own serialisation sends as backends refuse them.
`math.sum' is refused by OpenAI, Anthropic and Bedrock; Gemini
refuses `exclusiveMinimum', `const', a type list and `$schema'.")

(defconst toolspec-gptel-test--gemini-schema-keys
  '(type format title description nullable enum items properties required
         minItems maxItems minLength maxLength minimum maximum pattern
         minProperties maxProperties anyOf default example propertyOrdering)
  "The fields of google-genai's `types.Schema', as the Gemini API names them.")

(defun toolspec-gptel-test--gemini-clean-p (schema)
  "Non-nil if every key of SCHEMA, a parsed alist, is a `types.Schema' field.
A type must be one string; recurses through properties, items, anyOf."
  (cl-every (lambda (cell)
              (and (memq (car cell) toolspec-gptel-test--gemini-schema-keys)
                   (pcase (car cell)
                     ('type (stringp (cdr cell)))
                     ('properties (cl-every (lambda (p) (toolspec-gptel-test--gemini-clean-p (cdr p)))
                                            (cdr cell)))
                     ('items (toolspec-gptel-test--gemini-clean-p (cdr cell)))
                     ('anyOf (cl-every #'toolspec-gptel-test--gemini-clean-p (cdr cell)))
                     (_ t))))
            schema))

(defmacro toolspec-gptel-test--with-toolspec-registry (&rest body)
  "Run BODY with empty gptel and toolspec registries."
  (declare (indent 0) (debug t))
  `(let ((gptel--known-tools nil)
         (gptel-tools nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal)))
     ,@body))

(defun toolspec-gptel-test--sent-all (tools backend)
  "What real gptel sends BACKEND for TOOLS, as parsed JSON (alists)."
  (toolspec-gptel-test--json-read
   (gptel--json-encode (gptel--parse-tools (toolspec-gptel-test--backend backend) tools))))

(ert-deftest toolspec-gptel-test-registered-names-valid-everywhere ()
  "Registered tools get names every gptel backend takes, the original kept."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((tools (toolspec-register (toolspec-parse-json toolspec-gptel-test--refused-json)
                                     :category toolspec-gptel-test--category :source "refused"))
           (names (mapcar #'gptel-tool-name tools)))
      (should (= (length tools) 2))
      (should (equal (nth 1 names) "math_sum"))
      (should (string-match-p "\\`math_sum_[0-9a-f]\\{8\\}\\'" (nth 0 names)))
      (dolist (name names)
        (should (string-match-p "\\`[a-zA-Z_][a-zA-Z0-9_-]\\{0,63\\}\\'" name)))
      (should (equal (toolspec-original-name (nth 0 tools)) "math.sum"))
      (should (equal (toolspec-original-name (nth 1 tools)) "math_sum"))
      ;; Found, exported and unregistered under the original name.
      (should (eq (toolspec-gptel--as-tool "math.sum") (nth 0 tools)))
      (should (string-match-p "\"name\":\"math.sum\"" (toolspec-to-json (nth 0 tools) 'mcp)))
      ;; Exported from the plist it was read as: root keywords kept.
      (should (string-match-p "\\$schema" (toolspec-to-json (nth 0 tools) 'mcp)))
      (should (string-match-p "\"name\":\"math_sum_[0-9a-f]+\""
                              (toolspec-tools-to-json tools 'openai)))
      ;; Described under either name, the original shown.
      (require 'toolspec-ui)
      (save-window-excursion
        (toolspec-describe-tool "math.sum")
        (with-current-buffer (help-buffer)
          (should (string-match-p (format "\\`%s is a gptel tool" (regexp-quote (nth 0 names))) (buffer-string)))
          (should (string-match-p "Its name in its file is math\\.sum" (buffer-string)))))
      (should (= (toolspec-unregister '("math.sum")) 1))
      (should-error (gptel-get-tool (list toolspec-gptel-test--category (nth 0 names)))))))

(ert-deftest toolspec-gptel-test-import-keeps-what-renaming-fixes ()
  "A name gptel's backends refuse does not leave its tool out of an import.
A tool with another error is left out, and the reason given names
both: the name as a warning, the other error as the cause."
  (toolspec-gptel-test--with-toolspec-registry
    (let ((file (make-temp-file "toolspec-renamed" nil ".json"
                                (json-encode
                                 '((tools . [((name . "math.sum") (description . "Sum.")
                                              (inputSchema . ((type . "object"))))
                                             ((name . "bad.enum") (description . "Bad.")
                                              (inputSchema
                                               . ((type . "object")
                                                  (properties . ((n . ((type . "integer")
                                                                       (enum . ["one"]))))))))
                                             ((name . "plain") (description . "Plain.")
                                              (inputSchema . ((type . "object"))))])))))
          (inhibit-message t))
      (unwind-protect
          (let ((tools (toolspec-import-file file :category toolspec-gptel-test--category)))
            (should (equal (mapcar #'gptel-tool-name tools) '("math_sum" "plain")))
            (should (equal (mapcar #'toolspec-original-name tools) '("math.sum" "plain")))
            (should (= (length toolspec-last-import-left-out) 1))
            (let* ((left (car toolspec-last-import-left-out))
                   (problems (plist-get (cadr left) :problems)))
              (should (equal (plist-get (cadr left) :tool) "bad.enum"))
              (should (string-match-p "enum" (car left)))
              (should-not (string-match-p "not a valid tool name" (car left)))
              (let ((name (cl-find "name" problems :key #'cadr :test #'equal)))
                (should (eq (car name) 'warning))
                (should (string-match-p "gptel gets a name every backend takes" (nth 2 name))))
              (should (equal (mapcar #'car (cl-remove-if-not (lambda (p) (eq (car p) 'error)) problems))
                             '(error)))))
        (delete-file file)))))

(ert-deftest toolspec-gptel-test-import-keeps-tools-exported-as-read ()
  "An imported file's tools are registered with the tools the module kept.
Each gptel tool's source is a tool the module holds (see
`toolspec--keep-tools'), not a copy of its plist.  Written from it,
in every dialect, a registered tool is what its plist as
`toolspec-read-file' returns it gives: its export, its plist (see
`toolspec--plist'), and what gptel sends, under its registered
name.  The texts are kept for the next export.  Each gptel tool is
what gptel's constructor makes of its slots.  Every fixture and
example file is imported."
  (let ((files (append (directory-files (expand-file-name "../test/fixtures" toolspec-gptel-test--examples-dir)
                                        t "\\.json\\'")
                       (directory-files toolspec-gptel-test--examples-dir t "\\.json\\'")))
        (checked 0))
    (should (> (length files) 10))
    (dolist (file files)
      (toolspec-gptel-test--with-toolspec-registry
        (let* ((inhibit-message t)
               (made (toolspec-import-file file :category toolspec-gptel-test--category))
               (read (let ((toolspec--type-strings t)) (toolspec-read-file file)))
               ;; The plists of the tools registered, by original name.
               (plists (mapcar (lambda (tool)
                                 (cl-find (toolspec-original-name tool) read
                                          :key (lambda (p) (plist-get p :name)) :test #'equal))
                               made)))
          (ert-info ((format "%s" file))
            (should made)
            (dolist (tool made)
              (should (user-ptrp (gethash tool toolspec--gptel-sources)))
              ;; Made as gptel's constructor makes it (see
              ;; `toolspec-gptel--maker'): every other slot its default.
              (should (equal tool (gptel--make-tool-internal
                                   :name (gptel-tool-name tool) :description (gptel-tool-description tool)
                                   :args (gptel-tool-args tool) :function (gptel-tool-function tool)
                                   :async (gptel-tool-async tool)
                                   :category toolspec-gptel-test--category
                                   :confirm (gptel-tool-confirm tool))))
              (should (gptel-tool-include tool)))
            ;; As `toolspec--plist' gives a registered tool's: the plist
            ;; read with type names strings, as registered, those of the
            ;; args made symbols again.
            (should (equal (mapcar #'toolspec--plist made)
                           (mapcar (lambda (plist)
                                     (toolspec--with-args
                                      plist (lambda (args) (mapcar #'toolspec--symbol-types args))))
                                   plists)))
            (dolist (dialect (toolspec-dialects))
              (clrhash toolspec--export-cache)
              (let ((json (toolspec-tools-to-json made dialect)))
                (should (equal json (toolspec-tools-to-json plists dialect)))
                (should (equal json (toolspec-gptel-test--cached-json made dialect))))
              (should (equal (toolspec-tools-to-json made dialect t) (toolspec-tools-to-json plists dialect t))))
            (dolist (dialect '("openai" "openai-responses" "anthropic" "gemini" "bedrock" "ollama"))
              (cl-loop for tool in made
                       for plist in plists
                       do (should (equal (toolspec-gptel--own tool dialect)
                                         (json-parse-string
                                          (toolspec-to-json (plist-put (copy-sequence plist) :name (gptel-tool-name tool))
                                                            (intern dialect))
                                          :object-type 'plist :array-type 'array
                                          :null-object :null :false-object :json-false)))))
            (cl-incf checked (length made))))))
    (should (> checked 20))))

(ert-deftest toolspec-gptel-test-import-gives-gptel-string-types ()
  "An import registers args whose types are strings, as gptel makes them.
The module makes them strings as it reads (see
`toolspec--type-strings'), and gptel's own walk over the args is left
out: every arg is what `gptel--make-tool' makes from the plists
`toolspec-read-file' returns, except a value in the data that looks
like a schema, which gptel's walk would change (true to \"t\")."
  (toolspec-gptel-test--with-toolspec-registry
    (let ((file (make-temp-file
                 "toolspec-types" nil ".json"
                 (json-encode
                  '((tools . [((name . "place") (description . "Place.")
                               (inputSchema
                                . ((type . "object")
                                   (properties
                                    . ((where . ((type . "object")
                                                 (properties . ((lat . ((type . "number")))
                                                                (tags . ((type . "array")
                                                                         (items . ((type . "string")))))))))
                                       (when . ((type . ["string" "null"])))
                                       (how . ((anyOf . [((type . "integer")) ((type . "boolean"))])))
                                       (raw . ((type . "object") (default . ((type . t)))))))
                                   (required . ["where"]))))])))))
          (inhibit-message t))
      (unwind-protect
          (let* ((read (toolspec-read-file file))
                 (symbol (plist-get (car (plist-get (car read) :args)) :type))
                 (made (gptel--make-tool :name "place" :function #'ignore :description "Place."
                                         :args (copy-tree (plist-get (car read) :args) t)))
                 (tool (car (toolspec-import-file file :category toolspec-gptel-test--category)))
                 (args (gptel-tool-args tool))
                 (raw (cl-find "raw" args :key (lambda (a) (plist-get a :name)) :test #'equal)))
            ;; `toolspec-read-file' still gives symbols.
            (should (eq symbol 'object))
            (should (equal (plist-get (car args) :type) "object"))
            (should (equal (plist-get (plist-get (plist-get (car args) :properties) :lat) :type) "number"))
            ;; gptel's walk turned the default's true into "t"; the
            ;; import keeps it.
            (should (equal (plist-get (plist-get raw :default) :type) t))
            (should (equal (cl-subst t "t" args :test #'equal)
                           (cl-subst t "t" (gptel-tool-args made) :test #'equal))))
        (delete-file file)))))

(ert-deftest toolspec-gptel-test-unbound-tool-answers-the-model ()
  "A tool nothing binds answers each call that it has no implementation.
Its arguments are checked first; an async one answers through the
callback gptel gives it."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((toolspec-function-alist nil)
           (inhibit-message t)
           (args '((:name "city" :type string :description "City.")))
           (sync (car (toolspec-register (list (list :name "nowhere" :description "N." :args args))
                                         :category toolspec-gptel-test--category)))
           (async (car (toolspec-register (list (list :name "nowhere_async" :description "N."
                                                      :async t :args args))
                                          :category toolspec-gptel-test--category)))
           (got nil))
      (should-not (toolspec-bound-function sync))
      (should (string-match-p "\\`Error: tool nowhere has no implementation in this Emacs"
                              (funcall (gptel-tool-function sync) "Oslo")))
      (should (string-match-p "\\`Error: invalid arguments for tool nowhere"
                              (funcall (gptel-tool-function sync) 42)))
      (should (gptel-tool-async async))
      (funcall (gptel-tool-function async) (lambda (r) (setq got r)) "Oslo")
      (should (string-match-p "\\`Error: tool nowhere_async has no implementation" got))
      (setq got nil)
      (funcall (gptel-tool-function async) (lambda (r) (setq got r)) 42)
      (should (string-match-p "\\`Error: invalid arguments for tool nowhere_async" got)))))

(ert-deftest toolspec-gptel-test-rename-warnings-name-ten ()
  "Registering and exporting renamed tools warns once, naming ten of them.
Twelve names refused by gptel's backends and by OpenAI: each warning
counts them, gives the first ten pairs in order and how many more."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((plists (cl-loop for i from 1 to 12
                            collect (list :name (format "math.f%d" i) :description "F." :args nil)))
           (warnings nil)
           (pairs (lambda (sep n)
                    (mapconcat (lambda (i) (format "math.f%d%smath_f%d" i sep i))
                               (number-sequence 1 n) ", "))))
      (cl-letf (((symbol-function 'display-warning)
                 (lambda (_type message &rest _) (push message warnings))))
        (let ((tools (toolspec-register plists :category toolspec-gptel-test--category)))
          (should (equal warnings
                         (list (concat "12 tool names are not valid for every gptel backend, "
                                       "registered under valid ones: "
                                       (funcall pairs " as " 10) " and 2 more"))))
          (setq warnings nil)
          (clrhash toolspec--export-cache)
          (toolspec-tools-to-json tools 'openai)
          (should (equal warnings
                         (list (concat "12 tool names openai refuses were written as valid ones: "
                                       (funcall pairs " -> " 10) " and 2 more")))))))))

(ert-deftest toolspec-gptel-test-export-names-distinct-across-kept-texts ()
  "A name made valid in one export does not collide in the next.
The text kept from exporting math.sum alone names it math_sum; exported
with a tool named math_sum, it must get another name."
  (let* ((dot (list :name "math.sum" :description "A." :args nil))
         (underscore (list :name "math_sum" :description "B." :args nil))
         (names (lambda (json) (mapcar (lambda (tool) (alist-get 'name (alist-get 'function tool)))
                                       (toolspec-gptel-test--json-read json)))))
    (should (equal (funcall names (toolspec-tools-to-json (list dot) 'openai)) '("math_sum")))
    (let ((both (funcall names (toolspec-tools-to-json (list dot underscore) 'openai))))
      (should (equal (nth 1 both) "math_sum"))
      (should (string-match-p "\\`math_sum_[0-9a-f]\\{8\\}\\'" (nth 0 both))))
    ;; Valid for MCP: kept.
    (should (equal (mapcar (lambda (tool) (alist-get 'name tool))
                           (alist-get 'tools (toolspec-gptel-test--json-read
                                              (toolspec-tools-to-json (list dot underscore) 'mcp))))
                   '("math.sum" "math_sum")))))

(ert-deftest toolspec-gptel-test-export-renames-follow-names ()
  "The new names of an export are those of its own names.
Those of the last export are used again only for the same names in
the same order: other names, or the same changed in place, get their
own, as printing the tools gives them."
  (let* ((a (list :name "math.sum" :description "A."))
         (b (list :name "ok" :description "B."))
         (names (lambda (tools)
                  (let ((json (toolspec-tools-to-json tools 'openai)))
                    (should (equal json (toolspec-gptel-test--printed-json tools 'openai)))
                    (mapcar (lambda (tool) (alist-get 'name (alist-get 'function tool)))
                            (toolspec-gptel-test--json-read json))))))
    (clrhash toolspec--export-cache)
    (should (equal (funcall names (list a b)) '("math_sum" "ok")))
    (should (equal (funcall names (list a b)) '("math_sum" "ok")))
    (should (equal (funcall names (list b a)) '("ok" "math_sum")))
    (should (equal (funcall names (list a b)) '("math_sum" "ok")))
    (aset (plist-get b :name) 1 ?.)
    (should (equal (funcall names (list a b)) '("math_sum" "o_")))
    (aset (plist-get a :name) 4 ?_)
    (should (equal (funcall names (list a b)) '("math_sum" "o_")))
    (aset (plist-get b :name) 1 ?k)
    (should (equal (funcall names (list a b)) '("math_sum" "ok")))
    ;; A name changed in place to the new name of another: that one
    ;; gets another new name, though its text under the first is kept.
    (let ((c (list :name "math_sux" :description "C."))
          (d (list :name "math.sum" :description "D.")))
      (should (equal (funcall names (list d c)) '("math_sum" "math_sux")))
      (aset (plist-get c :name) 7 ?m)
      (let ((both (funcall names (list d c))))
        (should (string-match-p "\\`math_sum_[0-9a-f]\\{8\\}\\'" (nth 0 both)))
        (should (equal (nth 1 both) "math_sum"))))))

(ert-deftest toolspec-gptel-test-gptel-sends-its-own-when-toolspec-cannot ()
  "A tool toolspec cannot write for the backend is sent as gptel makes it.
Its references double at each of 40 levels: inlining them for Gemini
passes toolspec's budget, and the request is still built."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((defs (cl-loop for i from 1 below 40
                          for ref = (list :$ref (format "#/$defs/L%d" (1- i)))
                          append (list (intern (format ":L%d" i))
                                       (list :type "array" :items (list :anyOf (vector ref ref))))))
           (plist (list :name "bomb" :description "B."
                        :args (list (list :name "a" :description "A." :$ref "#/$defs/L39"))
                        :schema-extra (list :$defs (append (list :L0 (list :type "string")) defs))))
           (tool (car (toolspec-register (list plist) :category toolspec-gptel-test--category)))
           (sent (toolspec-gptel-test--sent-all (list tool) 'gemini))
           (decl (aref (alist-get 'functionDeclarations (aref sent 0)) 0)))
      (should (equal (alist-get 'name decl) "bomb"))
      ;; gptel's own: the argument as the plist has it.
      (should (equal (alist-get '$ref (alist-get 'a (alist-get 'properties (alist-get 'parameters decl))))
                     "#/$defs/L39")))))

(ert-deftest toolspec-gptel-test-gptel-sends-toolspec-json ()
  "Real gptel's `gptel--parse-tools' sends what the providers accept.
For the tools toolspec registered, gptel sends toolspec's own JSON for
the backend's dialect: valid names, and for Gemini a `parameters' of
`types.Schema' fields only.  With `toolspec-gptel-send-own-json' off,
gptel's own serialisation passes `exclusiveMinimum' and the rest on."
  (toolspec-gptel-test--with-toolspec-registry
    (let* ((plists (toolspec-parse-json toolspec-gptel-test--refused-json))
           (tools (toolspec-register plists :category toolspec-gptel-test--category))
           (plain (let ((gptel--known-tools nil))
                    (gptel-make-tool :name "plain_tool" :description "Not toolspec's."
                                     :function #'ignore
                                     :args (list '(:name "x" :type string :description "X."))
                                     :category "other"))))
      (pcase-dolist (`(,backend . ,dialect) '((openai . openai) (openai-responses . openai-responses)
                                              (anthropic . anthropic) (gemini . gemini)
                                              (ollama . ollama) (bedrock . bedrock)))
        (let* ((sent (toolspec-gptel-test--sent-all (append tools (list plain)) backend))
               ;; toolspec's JSON of each plist read, under its registered name.
               (own (cl-mapcar (lambda (plist tool)
                                 (toolspec-gptel-test--json-read
                                  (toolspec-to-json (plist-put (copy-sequence plist) :name (gptel-tool-name tool))
                                                    dialect)))
                               plists tools))
               (decls (pcase backend
                        ('gemini (append (alist-get 'functionDeclarations (aref sent 0)) nil))
                        (_ (append sent nil)))))
          (should (= (length decls) 3))
          ;; toolspec's tools: exactly toolspec's JSON for the dialect.
          (should (equal (seq-take decls 2) own))
          ;; The other tool: as gptel makes it.
          (should (equal (toolspec-gptel-test--sent (nth 2 (append tools (list plain))) backend)
                         (toolspec-gptel-test--sent plain backend)))
          (when (eq backend 'gemini)
            (let ((params (alist-get 'parameters (nth 0 decls))))
              (should (toolspec-gptel-test--gemini-clean-p params))
              (should (string-match-p "exclusiveMinimum: 0"
                                      (alist-get 'description (alist-get 'a (alist-get 'properties params)))))))))
      ;; Switched off: gptel's own serialisation, which Gemini refuses.
      (let* ((toolspec-gptel-send-own-json nil)
             (sent (toolspec-gptel-test--sent-all tools 'gemini))
             (params (alist-get 'parameters (aref (alist-get 'functionDeclarations (aref sent 0)) 0))))
        (should-not (toolspec-gptel-test--gemini-clean-p params))
        (should (alist-get 'exclusiveMinimum (alist-get 'a (alist-get 'properties params))))))))

(provide 'toolspec-gptel-test)

;;; toolspec-gptel-test.el ends here
