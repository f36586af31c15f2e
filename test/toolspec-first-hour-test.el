;;; toolspec-first-hour-test.el --- ERT tests of a gptel user's first hour -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; What a new user meets first, driven by keys as in toolspec-ui-test.el:
;; registering and activating tools, binding them from the preview,
;; directories that import a file again, where an OpenAPI or Arcade
;; call goes, missing credentials, messages, Customize.
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "/path/to/libtoolspec.so")' \
;;     -l test/toolspec-first-hour-test.el \
;;     --eval '(ert-run-tests-batch-and-exit "toolspec-hour-")'

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'cus-edit)
(require 'gptel)
(require 'toolspec-ui)
(require 'toolspec-http)
(require 'toolspec-gloodata)
(require 'toolspec-arcade)
(require 'toolspec-skydeck)
(require 'auth-source)
(require 'toolspec-http-server)
(require 'toolspec-test-helpers)

(defvar gptel--tool-preview-alist)
(defvar url-proxy-services)

;;;; Helpers (the ones toolspec-ui-test.el has too are in toolspec-test-helpers.el)

(defconst toolspec-hour-test--secret
  (format "tsk-%s" (md5 (format "%s %s %s" (random) (float-time) (emacs-pid))))
  "The secret planted in the test authinfo file, made at run time.")

(defmacro toolspec-hour-test--with-env (&rest body)
  "Run BODY with clean registries, no proxy and an empty authinfo file `authinfo'."
  (declare (indent 0) (debug t))
  `(toolspec-test-helpers-with-http-env
     (toolspec-test-helpers-with-clean-state ,@body)))

(defun toolspec-hour-test--authinfo (file &rest lines)
  "Write LINES to the authinfo FILE."
  (with-temp-file file (insert (string-join lines "\n") "\n"))
  (auth-source-forget-all-cached))

(defun toolspec-hour-test--tool (name server auth)
  "An OpenAPI tool plist NAME, without arguments, calling SERVER with AUTH."
  (list :name name :description (format "The %s operation." name) :args nil
        :executor (list :type "openapi" :server server :method "GET" :path "/"
                        :parameters [] :body :null :auth auth :filter :null
                        :outputModules [] :bootstrap :json-false :bootstrapValues nil
                        :lookup [] :title "Pets API" :operationId name)))

(defun toolspec-hour-test--header (request name)
  "Header NAME (lower case) of REQUEST as the API server recorded it."
  (cdr (assoc name (plist-get request :headers))))

(defun toolspec-hour-test--create-issue (&rest args)
  "Stand-in function for the create_issue tool: return ARGS as text."
  (format "issue %S" args))

(defun toolspec-hour-test--call-create-issue (category)
  "Call the create_issue tool of CATEGORY as a model would; return its text."
  (let ((toolspec-check-arguments nil))
    (funcall (gptel-tool-function (gptel-get-tool (list category "create_issue")))
             '(:owner "o" :name "n") "T" nil nil nil)))

;;;; 1. Problems shown once

(ert-deftest toolspec-hour-validate-buffer-names-the-path-once ()
  "Every type typo of a file is reported in one pass, each naming its
JSON path once and the type probably meant, in the list and in Flymake."
  (toolspec-test-helpers-with-clean-state
    (let ((file (toolspec-test-helpers-temp-file
                 "{\"tools\": [{\"name\": \"a\", \"description\": \"A\", \"inputSchema\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"strng\", \"description\": \"X\"}, \"y\": {\"type\": \"integr\", \"description\": \"Y\"}}}}]}\n"))
          (paths '(("tools[0].inputSchema.properties.x.type" . "strng") ("tools[0].inputSchema.properties.y.type" . "integr")))
          (meant '("string" "integer")))
      (find-file file)
      (toolspec-test-helpers-mx "toolspec-validate-buffer")
      (let ((lines (cl-remove-if-not (lambda (l) (string-match-p "unknown type" l))
                                     (toolspec-test-helpers-problem-lines))))
        (should (= 2 (length lines)))
        (cl-loop for (path . typo) in paths
                 for want in meant
                 for line = (cl-find-if (lambda (l) (string-search path l)) lines)
                 do (should line)
                 do (should (string-match-p
                             (concat ":1:[0-9]+: "
                                     (regexp-quote (format "warning: %s: unknown type \"%s\" (did you mean \"%s\"?)"
                                                           path typo want)))
                             line))
                 ;; Once: the line splits in two at it.
                 do (should (= 2 (length (split-string line (regexp-quote path)))))))
      (let ((diags nil))
        (with-current-buffer (get-file-buffer file)
          (toolspec-flymake (lambda (d &rest _) (setq diags d))))
        (setq diags (cl-remove-if-not (lambda (d) (string-match-p "unknown type" (flymake-diagnostic-text d))) diags))
        (should (= 2 (length diags)))
        (should (equal (sort (mapcar #'flymake-diagnostic-text diags) #'string<)
                       (cl-loop for (path . typo) in paths
                                for want in meant
                                collect (format "%s: unknown type \"%s\" (did you mean \"%s\"?): read as no type constraint (any value); the JSON types are string, number, integer, boolean, array, object, null"
                                                path typo want))))))))

;;;; 2. Registered is not active

(ert-deftest toolspec-hour-activate-from-the-preview ()
  "a in the preview registers and activates; y registers only and says so.
`toolspec-activate-tools' makes y activate too."
  (toolspec-test-helpers-with-clean-state
    (let ((file (toolspec-test-helpers-example "mcp-tools-list.json")))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (should (string-match-p "a: register and activate (add to `gptel-tools')"
                              (toolspec-test-helpers-preview-text)))
      (toolspec-test-helpers-keys "y")
      (should (= 2 (length (gethash file toolspec-gptel--registered))))
      (should-not gptel-tools)
      (should (string-match-p "2 tools registered in category mcp-tools-list, not active yet: pick them in .gptel-menu. (Tools), or register with a next time"
                              (toolspec-test-helpers-messages)))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (toolspec-test-helpers-keys "a")
      (should (equal (sort (mapcar #'gptel-tool-name gptel-tools) #'string<)
                     '("create_issue" "read_text_file")))
      (should (cl-every (lambda (tool) (memq tool (gethash file toolspec-gptel--registered))) gptel-tools))
      (should (string-match-p "2 tools registered in category mcp-tools-list, and active" (toolspec-test-helpers-messages))))
    (setq gptel-tools nil)
    (let ((toolspec-activate-tools t))
      (toolspec-test-helpers-mx "toolspec-import-file" (toolspec-test-helpers-example "openai-chat.json"))
      (toolspec-test-helpers-keys "y")
      (should (= 2 (length gptel-tools)))
      ;; And from Lisp.
      (toolspec-import-file (toolspec-test-helpers-example "mcp-tools-list.json"))
      (should (= 4 (length gptel-tools))))))

;;;; 3. Binding from where you are

(ert-deftest toolspec-hour-bind-from-the-preview ()
  "b asks for a function and saves a scoped entry; describe names it."
  (toolspec-test-helpers-with-clean-state
    (let* ((file (toolspec-test-helpers-example "mcp-tools-list.json"))
           (custom-file (make-temp-file "toolspec-custom" nil ".el"))
           ;; As in an Emacs started without -Q, where Customize saves.
           (user-init-file custom-file))
      (push custom-file toolspec-test-helpers-files)
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (should (string-match-p "^create_issue\n.*\n.*\n  binding: unbound (returns an error to the model): b binds it$"
                              (toolspec-test-helpers-preview-text)))
      (should (looking-at "create_issue$"))
      (toolspec-test-helpers-keys "b" "toolspec-hour-test--create-issue" (kbd "RET") "y")
      (should (equal toolspec-function-alist
                     `(("create_issue" toolspec-hour-test--create-issue :source ,file))))
      ;; Saved, as Customize saves it.
      (should (equal (with-temp-buffer
                       (insert-file-contents custom-file)
                       (nth 1 (cadr (assq 'toolspec-function-alist
                                          (mapcar (lambda (x) (and (consp x) (cadr x)))
                                                  (cdr (read (current-buffer))))))))
                     `(("create_issue" toolspec-hour-test--create-issue :source ,file))))
      ;; The preview shows it: a function name, and where it comes from.
      (should (string-match-p "^create_issue\n.*\n.*\n  binding: toolspec-hour-test--create-issue (from `toolspec-function-alist')$"
                              (toolspec-test-helpers-preview-text)))
      (toolspec-test-helpers-keys "y")
      (should (equal (toolspec-hour-test--call-create-issue "mcp-tools-list")
                     (format "issue %S" '((:owner "o" :name "n") "T" nil nil nil))))
      (toolspec-test-helpers-mx "toolspec-describe-tool" "mcp-tools-list/create_issue")
      (let ((text (with-current-buffer (help-buffer) (buffer-string))))
        (should (string-match-p "^Function: toolspec-hour-test--create-issue (its arguments checked by toolspec first)$" text)))
      (toolspec-test-helpers-mx "toolspec-describe-tool" "mcp-tools-list/read_text_file")
      (should (string-match-p "^Function: unbound: it answers the model that it has no implementation$"
                              (with-current-buffer (help-buffer) (buffer-string)))))))

;;;; 4. Bindings lost in silence

(ert-deftest toolspec-hour-directories-keep-bindings ()
  "A file imported with :functions keeps them when its directory is loaded."
  (toolspec-test-helpers-with-clean-state
    (let* ((dir (make-temp-file "toolspec-dir" t))
           (file (expand-file-name "issues.json" dir)))
      (unwind-protect
          (progn
            (copy-file (toolspec-test-helpers-example "mcp-tools-list.json") file)
            (toolspec-import-file file :functions '(("create_issue" . toolspec-hour-test--create-issue)))
            (should (string-prefix-p "issue " (toolspec-hour-test--call-create-issue "issues")))
            (let ((toolspec-tool-directories (list dir)))
              (toolspec-test-helpers-mx "toolspec-load-tool-directories"))
            (should (string-match-p "toolspec: 2 tools registered" (toolspec-test-helpers-messages)))
            (should (= 2 (length (gethash file toolspec-gptel--registered))))
            (should (string-prefix-p "issue " (toolspec-hour-test--call-create-issue "issues"))))
        (delete-directory dir t)))))

;;;; 5. Where does this call go

(defconst toolspec-hour-test--pets-yaml
  "openapi: 3.0.0
info: {title: Pet shop, version: '1'}
servers: [{url: '%s'}]
x-plugin-auth: {type: service_http, authorizationType: bearer}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      parameters:
        - {name: kind, in: query, schema: {type: string}, description: Kind}
        - {name: limit, in: query, schema: {type: integer}, description: How many}
      responses:
        '200': {description: The pets}
"
  "An OpenAPI document with one operation; %s is the server URL.")

(ert-deftest toolspec-hour-openapi-shows-where-calls-go ()
  "The preview, describe and gptel's confirmation show method, URL, server and auth.
The category is the API's title; its operation's camelCase name
draws no style warning."
  (toolspec-test-helpers-with-clean-state
    (toolspec-http-server-with (api (lambda (_) '(:body (:pets []))))
      (let* ((gptel--tool-preview-alist nil)
             (server (toolspec-http-server-url api "/v1"))
             (host (replace-regexp-in-string "\\`http://" "" server))
             (file (make-temp-file "toolspec-pets" nil ".yaml"
                                   (format toolspec-hour-test--pets-yaml server))))
        (push file toolspec-test-helpers-files)
        (toolspec-test-helpers-mx "toolspec-import-openapi" file "")
        (let ((text (toolspec-test-helpers-preview-text)))
          (should (string-match-p "(gptel category \"pet-shop\")" text))
          (should (string-match-p "^1 tool, 0 errors, 0 warnings$" text))
          (should-not (string-match-p "snake_case" text))
          (should (string-match-p
                   (format "^  binding: HTTP GET %s/pets, auth: bearer credential of 127.0.0.1 from auth-source (not approved: nothing is sent), async, asks first (from the tool file)$"
                           (regexp-quote server))
                   text)))
        ;; Approve the credential when registering.
        (toolspec-test-helpers-keys "y" "y")
        (toolspec-test-helpers-mx "toolspec-describe-tool" "pet-shop/listPets")
        (let ((text (with-current-buffer (help-buffer) (buffer-string))))
          (should (string-match-p (format "^  Method  GET\n  URL     %s/pets\n  Server  %s\n  Auth    bearer credential of 127.0.0.1 from auth-source (approved)$"
                                          (regexp-quote server) (regexp-quote server))
                                  text)))
        ;; gptel's confirmation: the request, with the values in it.
        (let ((preview (cadr (assoc "listPets" gptel--tool-preview-alist))))
          (should preview)
          (should (equal (with-temp-buffer
                           (funcall (car (cdr (assoc "listPets" gptel--tool-preview-alist))) '("cat" 2) nil)
                           (buffer-string))
                         (format "GET %s/pets?kind=cat&limit=2  (listPets)\n" host))))))))

(ert-deftest toolspec-hour-arcade-shows-where-calls-go ()
  "An Arcade tool's confirmation names the worker and the values."
  (toolspec-test-helpers-with-clean-state
    (let* ((toolspec-seeds--tools (make-hash-table :test 'equal))
           (tools (toolspec-import-file (toolspec-test-helpers-example "arcade.json")
                                       :worker "http://127.0.0.1:9/worker/tools/invoke")))
      (should tools)
      (should (equal (with-temp-buffer
                       (funcall (car (cdr (assoc "Weather_GetForecast" gptel--tool-preview-alist)))
                                '("Paris" 3) nil)
                       (buffer-string))
                     "POST 127.0.0.1:9/worker/tools/invoke  Weather.GetForecast(city=Paris, days=3)  (Weather_GetForecast)\n")))))

;;;; 6. Credentials

(ert-deftest toolspec-hour-missing-credential-tells-the-user ()
  "No credential: the echo area names the host and the line to add.
Once the line is added, the next call finds it, with auth-source's
cache on."
  (toolspec-hour-test--with-env
    (let ((auth-source-do-cache t))
      (toolspec-http-server-with (api (lambda (_) '(:body (:ok t))))
        (let ((tool (car (toolspec-register
                          (list (toolspec-hour-test--tool "bearer_op" (toolspec-http-server-url api)
                                                          '(:type "service_http" :authorizationType "bearer")))
                          :source "pets-api" :credentials '("127.0.0.1"))))
              (start (with-current-buffer (messages-buffer) (point-max))))
          (should (string-match-p "auth-source has none" (toolspec-test-helpers-call tool)))
          (should (string-match-p
                   "toolspec: bearer_op (API \"Pets API\") sent nothing: auth-source has no credential for 127.0.0.1; add the line \"machine 127.0.0.1 password YOUR-SECRET\" to ~/.authinfo.gpg"
                   (with-current-buffer (messages-buffer) (buffer-substring start (point-max)))))
          ;; The user adds it; no `auth-source-forget-all-cached'.
          (with-temp-file authinfo (insert "machine 127.0.0.1 password " toolspec-hour-test--secret "\n"))
          (should (string-match-p "\"ok\"" (toolspec-test-helpers-call tool)))
          (should (equal (toolspec-hour-test--header (car (toolspec-http-server-requests api)) "authorization")
                         (concat "Bearer " toolspec-hour-test--secret))))))))

;;;; 8. OpenAPI names and counts

(ert-deftest toolspec-hour-openapi-counts-in-the-singular ()
  "A tag of one operation says \"1 operation\"."
  (let ((file (make-temp-file "toolspec-pets" nil ".yaml"
                              (format toolspec-hour-test--pets-yaml "http://127.0.0.1:9"))))
    (unwind-protect
        (let ((ops (toolspec-openapi-operations file)))
          (should (equal (mapcar #'car (toolspec-openapi--candidates
                                        (list (plist-put (copy-sequence (car ops)) :tags '("pets")))))
                         '("tag: pets (1 operation)" "GET /pets  (pets) listPets"))))
      (delete-file file))))

;;;; 9. Messages meant for people

(ert-deftest toolspec-hour-directory-warnings-are-one-line ()
  "A skipped file is one line: file, place and what is wrong, no raw data."
  (toolspec-test-helpers-with-clean-state
    (let* ((dir (make-temp-file "toolspec-dir" t))
           (bad (expand-file-name "bad.json" dir))
           (broken (expand-file-name "broken.json" dir)))
      (unwind-protect
          (progn
            (write-region toolspec-test-helpers-bad-json nil bad)
            (write-region toolspec-test-helpers-broken-json nil broken)
            (let* ((toolspec-tool-directories (list dir))
                   (start (with-current-buffer (messages-buffer) (point-max)))
                   (warnings
                    (progn
                      (toolspec-test-helpers-mx "toolspec-load-tool-directories")
                      ;; In batch, `display-warning' writes each as a message.
                      (sort (mapcar (lambda (l) (string-remove-prefix "Warning (toolspec): " l))
                                    (cl-remove-if-not
                                     (lambda (l) (string-prefix-p "Warning (toolspec): " l))
                                     (split-string (with-current-buffer (messages-buffer)
                                                     (buffer-substring start (point-max)))
                                                   "\n")))
                            #'string<))))
              (should (= 2 (length warnings)))
              ;; A tool with errors is left out; the file's other tool
              ;; is registered.
              (should (equal (nth 0 warnings)
                             (format "%s: 1 tool definition left out: tool \"bad tool\": error: args[1].items: an array needs :items describing its elements, e.g. :items (:type string)"
                                     (abbreviate-file-name bad))))
              (should (gptel-get-tool (list "bad" "ok_tool")))
              (should (string-prefix-p (format "Skipped %s:3:18: Invalid JSON: " (abbreviate-file-name broken))
                                       (nth 1 warnings)))
              (dolist (w warnings)
                (should-not (string-match-p "\n\\|:problems\\|:file\\|\\\\\"" w)))))
        (delete-directory dir t)))))

(ert-deftest toolspec-hour-unregister-interactively ()
  "M-x toolspec-unregister completes sources and tool names."
  (toolspec-test-helpers-with-clean-state
    (let ((file (toolspec-test-helpers-example "mcp-tools-list.json")))
      (toolspec-import-file file)
      (toolspec-import-file (toolspec-test-helpers-example "openai-chat.json"))
      (toolspec-test-helpers-mx "toolspec-unregister" "read_text_file")
      (should (equal (mapcar #'car (cdr (assoc "mcp-tools-list" gptel--known-tools)))
                     '("create_issue")))
      (should (string-match-p "toolspec: 1 tool unregistered: read_text_file" (toolspec-test-helpers-messages)))
      (toolspec-test-helpers-mx "toolspec-unregister" file)
      (should-not (assoc "mcp-tools-list" gptel--known-tools))
      (should (assoc "openai-chat" gptel--known-tools)))))

(ert-deftest toolspec-hour-quit-asks-before-discarding ()
  "q in a preview of tools that could be registered asks; n keeps it."
  (toolspec-test-helpers-with-clean-state
    (toolspec-test-helpers-mx "toolspec-import-file" (toolspec-test-helpers-example "mcp-tools-list.json"))
    (should-error (toolspec-test-helpers-keys "qn") :type 'user-error)
    (should (get-buffer "*toolspec-import*"))
    (toolspec-test-helpers-keys "qy")
    (should-not (get-buffer "*toolspec-import*"))
    ;; Tools with errors cannot be registered: q closes at once.
    (toolspec-test-helpers-mx "toolspec-import-file" (toolspec-test-helpers-temp-file toolspec-test-helpers-bad-json))
    (toolspec-test-helpers-keys "q")
    (should-not (get-buffer "*toolspec-import*"))))

;;;; 10. Customize

(ert-deftest toolspec-hour-customize-groups ()
  "Options are in a group per file, and the function alist names its field."
  (require 'toolspec-lint)
  (require 'toolspec-openapi)
  (dolist (g '(toolspec-core toolspec-gptel toolspec-ui toolspec-lint toolspec-formats toolspec-http))
    (should (assq g (get 'toolspec 'custom-group))))
  (dolist (g '(toolspec-openapi toolspec-arcade toolspec-skydeck))
    (should (assq g (get 'toolspec-formats 'custom-group))))
  (should-not (cl-find-if (lambda (m) (eq (nth 1 m) 'custom-variable)) (get 'toolspec 'custom-group)))
  (should (assq 'toolspec-function-alist (get 'toolspec-gptel 'custom-group)))
  (should (assq 'toolspec-placeholder-function-format (get 'toolspec-ui 'custom-group)))
  (should (assq 'toolspec-arcade-token (get 'toolspec-arcade 'custom-group)))
  (should (assq 'toolspec-skydeck-system-prompt (get 'toolspec-skydeck 'custom-group)))
  (should (assq 'toolspec-openapi-confirm-all (get 'toolspec-openapi 'custom-group)))
  (should (assq 'toolspec-log-buffer (get 'toolspec-formats 'custom-group)))
  (should (assq 'toolspec-max-input-size (get 'toolspec-core 'custom-group)))
  (let ((toolspec-function-alist '(("get_weather" . ignore))))
    (customize-variable 'toolspec-function-alist)
    (unwind-protect
        (let ((text (buffer-string)))
          (should (string-match-p "Tool name: get_weather" text))
          (should-not (string-match-p "String: get_weather" text)))
      (kill-buffer))))

(ert-deftest toolspec-hour-arcade-token-from-auth-source ()
  "`auth-source' sends the worker host's secret; a stored string warns how to move it."
  (toolspec-hour-test--with-env
    (let ((worker "http://127.0.0.1:9/worker")
          (toolspec-arcade--token-warned nil)
          (start (with-current-buffer (messages-buffer) (point-max))))
      (toolspec-hour-test--authinfo authinfo (concat "machine 127.0.0.1 password " toolspec-hour-test--secret))
      (let ((toolspec-arcade-token 'auth-source))
        (should (equal (toolspec-arcade--token '(:name "t") nil worker) toolspec-hour-test--secret)))
      (let ((toolspec-arcade-token "plain-token"))
        (should (equal (toolspec-arcade--token '(:name "t") nil worker) "plain-token"))
        (should (equal (toolspec-arcade--token '(:name "t") nil worker) "plain-token")))
      ;; In batch, `display-warning' writes each as a message: one here.
      (let ((warnings (cl-remove-if-not
                       (lambda (l) (string-prefix-p "Warning (toolspec): " l))
                       (split-string (with-current-buffer (messages-buffer)
                                       (buffer-substring start (point-max)))
                                     "\n"))))
      (should (= 1 (length warnings)))
      (should (string-match-p "Move it to auth-source: add the line \"machine 127.0.0.1 password YOUR-TOKEN\" to ~/.authinfo.gpg, then M-x customize-variable RET toolspec-arcade-token and choose \"From auth-source\""
                              (car warnings)))))))

(provide 'toolspec-first-hour-test)
;;; toolspec-first-hour-test.el ends here
