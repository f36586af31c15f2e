;;; toolspec-ui-test.el --- ERT tests of toolspec's interactive commands -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; The commands of toolspec-ui.el driven as a user would drive them:
;; keys are fed with `execute-kbd-macro' (M-x, the minibuffer, the keys of
;; the preview buffer), and the tests look at what the user would see:
;; buffers, where point lands, what gptel has registered, what was
;; written.
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "/path/to/libtoolspec.so")' \
;;     -l test/toolspec-ui-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'gptel)
(require 'flymake)
(require 'toolspec-ui)
(require 'toolspec-test-helpers)

(defun toolspec-ui-test--place-of (text regexp &optional group)
  "Line and column (1-based), as (LINE . COLUMN), of REGEXP in TEXT.
The place is the start of GROUP (default the whole match)."
  (with-temp-buffer
    (insert text)
    (goto-char (point-min))
    (re-search-forward regexp)
    (goto-char (match-beginning (or group 0)))
    (cons (line-number-at-pos) (1+ (current-column)))))

(defun toolspec-ui-test--here ()
  "The selected window's buffer and place, as (BUFFER LINE . COLUMN)."
  (with-current-buffer (window-buffer)
    (save-excursion
      (goto-char (window-point))
      (cons (current-buffer) (cons (line-number-at-pos) (1+ (current-column)))))))

(defun toolspec-ui-test--visit-preview-line (regexp)
  "Select the preview and move to the start of the first REGEXP match."
  (pop-to-buffer "*toolspec-import*")
  (goto-char (point-min))
  (re-search-forward regexp)
  (goto-char (match-beginning 0)))

;;;; Importing

(ert-deftest toolspec-ui-import-file-previews-then-registers ()
  "M-x toolspec-import-file shows the tools; C-c C-c registers them."
  (toolspec-test-helpers-with-clean-state
    (let ((file (toolspec-test-helpers-example "mcp-tools-list.json")))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (should (eq (window-buffer) (get-buffer "*toolspec-import*")))
      (with-current-buffer "*toolspec-import*"
        (should (eq major-mode 'toolspec-import-mode))
        (should (derived-mode-p 'special-mode)))
      (let ((text (toolspec-test-helpers-preview-text)))
        (should (string-match-p "^Tools from .*mcp-tools-list\\.json .*category \"mcp-tools-list\"" text))
        (should (string-match-p "^2 tools, 0 errors, 0 warnings$" text))
        (should (string-match-p "^create_issue$" text))
        (should (string-match-p "^read_text_file$" text))
        (should (string-match-p
                 "args: +repository:object, title:string, body:string (optional), labels:array of string (optional)"
                 text))
        (should (= 2 (cl-count-if (lambda (l) (string-match-p "binding: unbound (returns an error to the model)" l))
                                  (split-string text "\n")))))
      ;; Nothing is registered before the user says so.
      (should-not gptel--known-tools)
      (toolspec-test-helpers-keys (kbd "C-c C-c"))
      (should (gptel-tool-p (gptel-get-tool '("mcp-tools-list" "create_issue"))))
      (should (gptel-tool-p (gptel-get-tool '("mcp-tools-list" "read_text_file"))))
      (should (= 2 (length (gethash file toolspec-gptel--registered))))
      (should (string-match-p "2 tools registered in category mcp-tools-list" (toolspec-test-helpers-messages)))
      (should-not (get-buffer "*toolspec-import*")))))

(defun toolspec-ui-test--create-issue (&rest args)
  "Stand-in function for the create_issue tool: return ARGS as text."
  (format "created %S" args))

(ert-deftest toolspec-ui-import-shows-binding-and-y-registers ()
  "The preview names the function a tool gets; y registers with it."
  (toolspec-test-helpers-with-clean-state
    (setq toolspec-function-alist `(("create_issue" toolspec-ui-test--create-issue
                                     :source ,(toolspec-test-helpers-example "mcp-tools-list.json"))))
    (toolspec-test-helpers-mx "toolspec-import-file" (toolspec-test-helpers-example "mcp-tools-list.json"))
    (let ((text (toolspec-test-helpers-preview-text)))
      (should (string-match-p
               "^create_issue\n.*\n.*\n  binding: toolspec-ui-test--create-issue (from `toolspec-function-alist')$"
               text))
      (should (string-match-p
               "^read_text_file\n.*\n.*\n  binding: unbound (returns an error to the model): b binds it$" text)))
    ;; The call below is about the binding, not about argument checks.
    (let ((toolspec-check-arguments nil))
      (toolspec-test-helpers-keys "y"))
    (let ((tool (gptel-get-tool '("mcp-tools-list" "create_issue"))))
      (should (equal (funcall (gptel-tool-function tool) '(:owner "o" :name "n") "Title" nil nil nil)
                     (format "created %S" '((:owner "o" :name "n") "Title" nil nil nil)))))))

(ert-deftest toolspec-ui-function-alist-scoped-to-sources ()
  "A `toolspec-function-alist' entry with :source binds only the tools of its sources.
A stranger's file naming the same tool gets no function; a directory
scopes the files in it.  An entry without :source still binds in
every file, but its tool asks before each call, even imported with
`:confirm nil', and the preview says why."
  (toolspec-test-helpers-with-clean-state
    (let* ((text (with-temp-buffer
                   (insert-file-contents (toolspec-test-helpers-example "mcp-tools-list.json"))
                   (buffer-string)))
           (mine (toolspec-test-helpers-temp-file text))
           (dir (make-temp-file "toolspec-ui-dir" t))
           (theirs (expand-file-name "tools.json" dir))
           (call (lambda (file)
                   (let ((toolspec-check-arguments nil)
                         (tool (gptel-get-tool (list (file-name-base file) "create_issue"))))
                     (list (funcall (gptel-tool-function tool) '(:owner "o" :name "n") "T" nil nil nil)
                           (gptel-tool-confirm tool))))))
      (push theirs toolspec-test-helpers-files)
      (unwind-protect
          (progn
            (write-region text nil theirs)
            (setq toolspec-function-alist
                  `(("create_issue" toolspec-ui-test--create-issue :source ,mine)))
            (toolspec-import-file mine :confirm nil)
            (toolspec-import-file theirs :confirm nil)
            (should (equal (funcall call mine)
                           (list (format "created %S" '((:owner "o" :name "n") "T" nil nil nil)) nil)))
            (should (string-match-p "create_issue has no implementation in this Emacs"
                                    (car (funcall call theirs))))
            ;; A directory: the files in it.
            (setq toolspec-function-alist
                  `(("create_issue" toolspec-ui-test--create-issue :source (,(file-name-as-directory dir)))))
            (toolspec-import-file mine :confirm nil)
            (toolspec-import-file theirs :confirm nil)
            (should (string-match-p "no implementation" (car (funcall call mine))))
            (should (string-prefix-p "created " (car (funcall call theirs))))
            ;; No :source: bound everywhere, and asks.
            (setq toolspec-function-alist '(("create_issue" . toolspec-ui-test--create-issue)))
            (toolspec-import-file theirs :confirm nil)
            (should (equal (funcall call theirs)
                           (list (format "created %S" '((:owner "o" :name "n") "T" nil nil nil)) t)))
            (toolspec-test-helpers-mx "toolspec-import-file" theirs)
            (should (string-match-p
                     "^  binding: toolspec-ui-test--create-issue, asks first (from `toolspec-function-alist'): its entry names no :source, so a tool of this name from any file gets it$"
                     (toolspec-test-helpers-preview-text))))
        (delete-directory dir t)))))

(ert-deftest toolspec-ui-import-problems-jump-to-the-json ()
  "Problems are listed per tool, and RET on one shows its place in the file."
  (toolspec-test-helpers-with-clean-state
    (let* ((file (toolspec-test-helpers-temp-file toolspec-test-helpers-bad-json))
           (json toolspec-test-helpers-bad-json))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (let ((text (toolspec-test-helpers-preview-text)))
        (should (string-match-p "^2 tools, 2 errors, 7 warnings$" text))
        ;; What kinds of problems there are, the most frequent first.
        (should (string-match-p "^2 tools, 2 errors, 7 warnings\n  errors by kind: 2 no-items\n" text))
        (should (string-match-p
                 "^  warnings by kind: 2 missing-key, 2 enum-not-strings, 1 invalid-name, 1 no-type, 1 type-alias$"
                 text))
        (should (string-match-p "^bad tool$" text))
        ;; A name providers refuse is registered under a valid one.
        (should (string-match-p "^  warning: name: \"bad tool\" is not a valid tool name.*gptel gets a name every backend takes" text))
        (should (string-match-p "^  error: args\\[1\\]\\.items: an array needs :items" text))
        (should (string-match-p "^  error: args\\[3\\]\\.properties\\.r\\.items: " text))
        (should (string-match-p "^  warning: args\\[2\\]\\.enum\\[0\\]: " text))
        (should (string-match-p
                 "^  warning: tools\\[1\\]\\.inputSchema\\.properties\\.count\\.type: non-standard type name \"int\""
                 text))
        ;; The import warnings are listed under the tool they are about.
        (should (< (string-match "^bad tool$" text)
                   (string-match "count\\.type: non-standard" text))))
      ;; RET on a problem: the file, at the value the problem is about.
      (dolist (case `(("warning: name:" "\"name\": \\(\"bad tool\"\\)")
                      ("error: args\\[1\\]\\.items" "\"tags\": \\({\\)")
                      ("error: args\\[3\\]\\.properties\\.r\\.items" "\"r\": \\({\\)")
                      ("warning: args\\[2\\]\\.enum\\[1\\]" "\\[1, \\(2\\)\\]")
                      ("count\\.type: non-standard" "\"type\": \\(\"int\"\\)")))
        (toolspec-ui-test--visit-preview-line (car case))
        ;; A button, so the mouse follows it too.
        (should (button-at (point)))
        (toolspec-test-helpers-keys (kbd "RET"))
        (let ((here (toolspec-ui-test--here)))
          (should (equal (buffer-file-name (car here)) file))
          (should (equal (cdr here) (toolspec-ui-test--place-of json (cadr case) 1)))))
      ;; A tool with errors is left out, after asking: n registers nothing.
      (pop-to-buffer "*toolspec-import*")
      (let ((err (should-error (toolspec-test-helpers-keys (kbd "C-c C-c") "n") :type 'user-error)))
        (should (string-match-p "Nothing registered: fix the JSON" (cadr err))))
      (should-not gptel--known-tools)
      (should (get-buffer "*toolspec-import*"))
      ;; With :strict, nothing is registered and nothing is asked.
      (toolspec-import-file file :preview t :strict t)
      (let ((err (should-error (toolspec-test-helpers-keys (kbd "C-c C-c")) :type 'user-error)))
        (should (string-match-p "Nothing registered: 1 tool has errors" (cadr err))))
      (should-not gptel--known-tools)
      ;; y registers the other tool alone.
      (toolspec-import-file file :preview t)
      (toolspec-test-helpers-keys (kbd "C-c C-c") "y")
      (should-not (get-buffer "*toolspec-import*"))
      (should (equal (mapcar (lambda (tool) (gptel-tool-name (cdr tool)))
                             (cdr (assoc (file-name-base file) gptel--known-tools)))
                     (list "ok_tool")))
      (toolspec-unregister file)
      (setq gptel--known-tools nil)
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      ;; Fix the file, g reads it again, and now it registers.
      (with-temp-file file
        (insert (replace-regexp-in-string
                 "\"bad tool\"" "\"bad_tool\""
                 (replace-regexp-in-string "\"type\": \"array\"" "\"type\": \"array\", \"items\": {\"type\": \"string\"}"
                                           json t t)
                 t t)))
      (pop-to-buffer "*toolspec-import*")
      (toolspec-test-helpers-keys "g")
      (should (string-match-p "^2 tools, 0 errors, 6 warnings$" (toolspec-test-helpers-preview-text)))
      (should (string-match-p "^bad_tool$" (toolspec-test-helpers-preview-text)))
      (toolspec-test-helpers-keys (kbd "C-c C-c"))
      (should (gptel-tool-p (gptel-get-tool (list (file-name-base file) "bad_tool")))))))

(ert-deftest toolspec-ui-problem-kinds-most-frequent-first ()
  "The summary of problem kinds: counts, order, the rest counted."
  (let* ((coded (lambda (code) (propertize "a message" 'toolspec-code code)))
         (problems (lambda (&rest spec)
                     ;; SPEC: CODE COUNT..., each a warning that many times.
                     (cl-loop for (code n) on spec by #'cddr
                              append (make-list n (list 'warning "x" (funcall coded code))))))
         (lists (list (list (list 'error "" "no code") (list 'warning "" (funcall coded 'seven)))
                      (funcall problems 'one 1 'two 2 'three 3 'four 4)
                      (funcall problems 'five 5 'six 6 'seven 6 'two 1))))
    (should (equal (toolspec--problem-kinds lists 'warning)
                   "7 seven, 6 six, 5 five, 4 four, 3 two, 3 three, and 1 other kind"))
    ;; A message without a code is of the kind `other'.
    (should (equal (toolspec--problem-kinds lists 'error) "1 other"))
    (should-not (toolspec--problem-kinds lists 'note))
    ;; Without a severity, every problem counts.
    (should (equal (toolspec--problem-kinds lists)
                   "7 seven, 6 six, 5 five, 4 four, 3 two, 3 three, and 2 other kinds"))))

(ert-deftest toolspec-ui-import-file-logs-the-kinds-of-its-warnings ()
  "An import from Lisp logs its first warnings, then the kinds of all."
  (toolspec-test-helpers-with-clean-state
    (let* ((tools (cl-loop for i below 25
                           collect (format "{\"name\": \"t%d\", \"inputSchema\": {\"type\": \"dict\", \"properties\": {\"x\": {\"type\": %s}}}}"
                                           i (if (< i 3) "\"any\"" "\"string\""))))
           (file (toolspec-test-helpers-temp-file
                  (format "{\"tools\": [%s]}" (mapconcat #'identity tools ", ")))))
      (toolspec-import-file file)
      ;; 25 type names read as "object", 3 unknown ones.
      (should (= 28 (length toolspec-last-import-warnings)))
      (let ((log (toolspec-test-helpers-messages)))
        (should (string-match-p "tools\\[0\\]\\.inputSchema\\.type: non-standard type name \"dict\"" log))
        (should (string-match-p
                 (concat "^toolspec: \\.\\.\\. and 8 more import warnings (all of them in .toolspec-last-import-warnings.); "
                         "all 28 by kind: 25 type-alias, 3 unknown-type$")
                 log))))))

(ert-deftest toolspec-ui-import-file-logs-errors-first ()
  "An import logs the definitions it left out before its other warnings.
The error of the last tool, which cannot be read, is the first line,
then the first warnings in order; the count is of all of them."
  (toolspec-test-helpers-with-clean-state
    (let* ((tools (append (cl-loop for i below 25
                                   collect (format "{\"name\": \"t%d\", \"inputSchema\": {\"type\": \"dict\"}}" i))
                          (list "{\"name\": \"bad\", \"inputSchema\": 7}")))
           (file (toolspec-test-helpers-temp-file
                  (format "{\"tools\": [%s]}" (mapconcat #'identity tools ", "))))
           (start (length (toolspec-test-helpers-messages)))
           ;; No line of *Messages* goes while the import logs.
           (message-log-max t))
      (toolspec-import-file file)
      (should (= 26 (length toolspec-last-import-warnings)))
      (should (eq (car (car (last toolspec-last-import-warnings))) 'error))
      ;; What this import logged.
      (let* ((log (substring (toolspec-test-helpers-messages) start))
             (lines (seq-filter (lambda (l) (string-match-p "^toolspec: .*tools\\[[0-9]+\\]" l))
                                (split-string log "\n"))))
        (should (string-match-p "^toolspec: .*: error: tools\\[25\\]" (car lines)))
        (should (string-match-p "tools\\[0\\]\\.inputSchema\\.type: non-standard type name" (cadr lines)))
        (should (string-match-p "tools\\[18\\]\\.inputSchema\\.type" (car (last lines))))
        (should (= (length lines) 20))
        (should (string-match-p "^toolspec: \\.\\.\\. and 6 more import warnings " log))))))

(ert-deftest toolspec-ui-import-navigation-and-cancel ()
  "n and p move between tools, RET on a tool shows it, q cancels."
  (toolspec-test-helpers-with-clean-state
    (let ((file (toolspec-test-helpers-example "openai-chat.json")))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (should (looking-at "create_calendar_event$"))
      (toolspec-test-helpers-keys "n")
      (should (looking-at "list_unread_messages$"))
      (should-error (toolspec-test-helpers-keys "n") :type 'user-error)
      (should (looking-at "list_unread_messages$"))
      (toolspec-test-helpers-keys "p")
      (should (looking-at "create_calendar_event$"))
      (toolspec-test-helpers-keys "n")
      (forward-line 2)
      (should (looking-at "  args: +none$"))
      (toolspec-test-helpers-keys (kbd "RET"))
      (let ((here (toolspec-ui-test--here))
            (json (with-temp-buffer (insert-file-contents file) (buffer-string))))
        (should (equal (buffer-file-name (car here)) file))
        ;; The second element of the top-level array.
        (should (equal (cdr here) (toolspec-ui-test--place-of json "^  },\n  \\({\\)" 1))))
      (pop-to-buffer "*toolspec-import*")
      ;; The tools could be registered: q asks first.
      (toolspec-test-helpers-keys "qy")
      (should-not (get-buffer "*toolspec-import*"))
      (should-not gptel--known-tools)
      (should (string-match-p "Import cancelled: nothing registered" (toolspec-test-helpers-messages))))))

(ert-deftest toolspec-ui-import-invalid-json-shows-the-place ()
  "Invalid JSON: a clear error naming the place, and point there."
  (toolspec-test-helpers-with-clean-state
    (let* ((file (toolspec-test-helpers-temp-file toolspec-test-helpers-broken-json))
           (err (should-error (toolspec-test-helpers-mx "toolspec-import-file" file) :type 'user-error)))
      (should (string-match-p (concat "\\`Invalid JSON: " (regexp-quote (abbreviate-file-name file))
                                      ":3:18: key must be a string\\'")
                              (cadr err)))
      (let ((here (toolspec-ui-test--here)))
        (should (equal (buffer-file-name (car here)) file))
        (should (equal (cdr here) '(3 . 18)))
        (with-current-buffer (car here)
          (should (looking-at ", \"description\""))))
      (should-not (get-buffer "*toolspec-import*")))))

(ert-deftest toolspec-ui-import-format-error-shows-the-place ()
  "JSON that is no tool: the preview lists it left out, at its place;
with :strict, the import's error names the JSON path's place."
  (toolspec-test-helpers-with-clean-state
    (let* ((json "{\"tools\": [\n  {\"name\": \"a\", \"inputSchema\": {}},\n  {\"name\": 42}\n]}\n")
           (file (toolspec-test-helpers-temp-file json)))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (should (string-match-p "^1 tool, 1 error, 1 warning\n1 tool definition could not be read and is left out"
                              (toolspec-test-helpers-preview-text)))
      (toolspec-ui-test--visit-preview-line "error: tools\\[1\\]\\.name: the tool name must be a string")
      (toolspec-test-helpers-keys (kbd "RET"))
      (should (equal (cdr (toolspec-ui-test--here)) '(3 . 12)))
      (let ((err (should-error (toolspec-import-file file :preview t :strict t) :type 'user-error)))
        (should (string-match-p ":3:12: tools\\[1\\]\\.name: the tool name must be a string" (cadr err)))
        (should (equal (cdr (toolspec-ui-test--here)) '(3 . 12)))))))

(ert-deftest toolspec-ui-import-buffer-registers-under-its-name ()
  "M-x toolspec-import-buffer previews a buffer's JSON and registers it."
  (toolspec-test-helpers-with-clean-state
    (with-current-buffer (get-buffer-create "my-tools")
      (insert-file-contents (toolspec-test-helpers-example "anthropic.json")))
    (switch-to-buffer "my-tools")
    (toolspec-test-helpers-mx "toolspec-import-buffer")
    (let ((text (toolspec-test-helpers-preview-text)))
      (should (string-match-p "^Tools from my-tools  (gptel category \"my-tools\")" text))
      (should (string-match-p "^get_weather$" text)))
    (toolspec-test-helpers-keys (kbd "C-c C-c"))
    (should (gptel-tool-p (gptel-get-tool '("my-tools" "get_weather"))))
    (should (= 2 (length (gethash "my-tools" toolspec-gptel--registered))))
    (should (string-match-p "2 tools registered in category my-tools" (toolspec-test-helpers-messages)))))

(ert-deftest toolspec-ui-import-region-places-are-in-the-buffer ()
  "Places found in a region are shown at the right place of the buffer."
  (toolspec-test-helpers-with-clean-state
    (let ((prefix "Notes about the tools.\nThe spec: "))
      (with-current-buffer (get-buffer-create "notes")
        (insert prefix toolspec-test-helpers-bad-json "\nThat's all.\n"))
      (switch-to-buffer "notes")
      (goto-char (1+ (length prefix)))
      (push-mark (+ (point) (length toolspec-test-helpers-bad-json)) t t)
      (toolspec-test-helpers-mx "toolspec-import-region")
      (should (string-match-p "^Tools from notes " (toolspec-test-helpers-preview-text)))
      (toolspec-ui-test--visit-preview-line "error: args\\[1\\]\\.items")
      (toolspec-test-helpers-keys (kbd "RET"))
      (let ((here (toolspec-ui-test--here))
            (text (with-current-buffer "notes" (buffer-string))))
        (should (eq (car here) (get-buffer "notes")))
        (should (equal (cdr here) (toolspec-ui-test--place-of text "\"tags\": \\({\\)" 1))))
      ;; On the first line of a region, columns count from the region's start.
      (with-current-buffer "notes"
        (erase-buffer)
        (insert "x = [{\"name\": \"t\", \"description\": \"T.\", \"input_schema\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"str\", \"description\": \"A.\"}}}}] # one line\n"))
      (switch-to-buffer "notes")
      (goto-char (point-min))
      (search-forward "[")
      (backward-char)
      (push-mark (save-excursion (search-forward "}}]") (point)) t t)
      (toolspec-test-helpers-mx "toolspec-import-region")
      (toolspec-ui-test--visit-preview-line "warning: \\[0\\]\\.input_schema\\.properties\\.a\\.type")
      (toolspec-test-helpers-keys (kbd "RET"))
      (should (equal (toolspec-ui-test--here)
                     (cons (get-buffer "notes")
                           (toolspec-ui-test--place-of (with-current-buffer "notes" (buffer-string))
                                                       "\"type\": \\(\"str\"\\)" 1)))))
    ;; Invalid JSON in a region: the error gives the buffer's line.
    (with-current-buffer (get-buffer-create "notes2")
      (insert "line one\nline two\n" toolspec-test-helpers-broken-json))
    (switch-to-buffer "notes2")
    (goto-char (point-min))
    (forward-line 2)
    (push-mark (point-max) t t)
    (let ((err (should-error (toolspec-test-helpers-mx "toolspec-import-region") :type 'user-error)))
      (should (string-match-p "\\`Invalid JSON: notes2:5:18: key must be a string" (cadr err))))
    (should (equal (toolspec-ui-test--here) (cons (get-buffer "notes2") (quote (5 . 18)))))))

(ert-deftest toolspec-ui-import-many-tools-reports-progress ()
  "More than 50 tools: all listed, progress reported, places still right."
  (toolspec-test-helpers-with-clean-state
    (let* ((json (concat "["
                         (mapconcat (lambda (i)
                                      (format "{\"name\": \"tool_%d\", \"description\": \"Tool %d.\", \"input_schema\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"%s\", \"description\": \"X [%d].\"}}}}"
                                              i i (if (= i 58) "str" "string") i))
                                    (number-sequence 1 60) ",\n")
                         "]\n"))
           (file (toolspec-test-helpers-temp-file json))
           (str-at (toolspec-ui-test--place-of json "\"type\": \\(\"str\"\\)" 1)))
      (toolspec-test-helpers-mx "toolspec-import-file" file)
      (with-current-buffer "*toolspec-import*"
        (should (string-match-p "^60 tools, 0 errors, 1 warning$" (buffer-string)))
        (let ((headings 0))
          (goto-char (point-min))
          (while (not (eobp))
            (when (get-text-property (point) 'toolspec-heading) (cl-incf headings))
            (forward-line 1))
          (should (= headings 60))))
      (should (string-match-p "Previewing 60 tools\\.\\.\\.done" (toolspec-test-helpers-messages)))
      ;; The 58th tool's problem is found in the 58th element.
      (toolspec-ui-test--visit-preview-line "warning: \\[57\\]\\.input_schema\\.properties\\.x\\.type: ")
      (toolspec-test-helpers-keys (kbd "RET"))
      (should (equal (cdr (toolspec-ui-test--here)) str-at))
      (switch-to-buffer (find-file-noselect file))
      (toolspec-test-helpers-mx "toolspec-validate-buffer")
      (should (equal (toolspec-test-helpers-problem-lines)
                     (list (format "%s:%d:%d: warning: [57].input_schema.properties.x.type: non-standard type name \"str\" read as \"string\""
                                   (file-name-nondirectory file) (car str-at) (cdr str-at)))))
      (should (string-match-p "Checking 60 tools\\.\\.\\.done" (toolspec-test-helpers-messages)))
      (pop-to-buffer "*toolspec-import*")
      (toolspec-test-helpers-keys (kbd "C-c C-c"))
      (should (= 60 (length (cdr (assoc (file-name-base file) gptel--known-tools))))))))

(ert-deftest toolspec-ui-import-file-without-preview-is-unchanged ()
  "Called from Lisp, toolspec-import-file registers at once, as before."
  (toolspec-test-helpers-with-clean-state
    (let ((tools (toolspec-import-file (toolspec-test-helpers-example "gemini.json"))))
      (should (= 2 (length tools)))
      (should (cl-every #'gptel-tool-p tools))
      (should-not (get-buffer "*toolspec-import*")))
    (let ((buffer (toolspec-import-file (toolspec-test-helpers-example "bedrock.json") :preview t)))
      (should (eq buffer (get-buffer "*toolspec-import*")))
      (should-not (assoc "bedrock" gptel--known-tools)))))

;;;; Describing

(ert-deftest toolspec-ui-describe-tool ()
  "M-x toolspec-describe-tool shows the tool, its args, problems and JSON."
  (toolspec-test-helpers-with-clean-state
    (toolspec-import-file (toolspec-test-helpers-example "openai-chat.json"))
    (toolspec-test-helpers-mx "toolspec-describe-tool" "openai-chat/create_calendar_event")
    (let ((text (with-current-buffer (help-buffer) (buffer-string))))
      (should (string-match-p "\\`create_calendar_event is a gptel tool in category \"openai-chat\", registered by toolspec from .*openai-chat\\.json\\." text))
      (should (string-match-p "^Create an event in the user's primary calendar" text))
      (should (string-match-p "^  Name +Type +Required +Description$" text))
      (should (string-match-p "^  title +string +required +Short title shown in the calendar\\.$" text))
      (should (string-match-p "^  visibility +string +optional +Who can see the event details\\. (one of \"default\", \"public\", \"private\")$" text))
      (should (string-match-p "^  location\\.name +string +required " text))
      (should (string-match-p "^  attendees +array of object +optional " text))
      (should (string-match-p "^Problems: none$" text))
      ;; The JSON of every dialect, indented, and parseable.
      (dolist (dialect (toolspec-dialects))
        (should (string-match (format "^%s:\n\\({\n\\(?:  .*\n\\)*}\\)$" dialect) text))
        (let ((json (json-parse-string (match-string 1 text) :object-type 'alist)))
          (should (member "create_calendar_event"
                          (list (alist-get 'name json)
                                (alist-get 'title json)
                                (alist-get 'name (alist-get 'function json))
                                (alist-get 'name (alist-get 'toolSpec json)))))))
      (should (string-match-p "^  \"input_schema\": {$" text))
      (should (string-match-p "^  \"toolSpec\": {$" text))))
  ;; A hand-made tool with problems.
  (toolspec-test-helpers-with-clean-state
    (gptel-make-tool :name "sloppy" :function #'ignore :description "Sloppy."
                     :category "hand" :args (list '(:name "x" :type string)))
    (toolspec-test-helpers-mx "toolspec-describe-tool" "hand/sloppy")
    (let ((text (with-current-buffer (help-buffer) (buffer-string))))
      (should (string-match-p "^Function: ignore$" text))
      (should (string-match-p "^Problems:\n  warning: args\\[0\\]\\.description: missing :description" text)))))

;;;; Checking a buffer

(ert-deftest toolspec-ui-validate-buffer-lists-problems-for-next-error ()
  "Problems of a file are listed as FILE:LINE:COL lines that `next-error' visits."
  (toolspec-test-helpers-with-clean-state
    (let* ((file (toolspec-test-helpers-temp-file toolspec-test-helpers-bad-json))
           (name (file-name-nondirectory file))
           (json toolspec-test-helpers-bad-json)
           (buffer (find-file-noselect file)))
      (switch-to-buffer buffer)
      (toolspec-test-helpers-mx "toolspec-validate-buffer")
      (with-current-buffer "*toolspec-problems*"
        (should (derived-mode-p 'compilation-mode))
        (should (string-match-p "^3 errors, 6 warnings$" (buffer-string))))
      (let ((lines (toolspec-test-helpers-problem-lines))
            (name-at (toolspec-ui-test--place-of json "\"name\": \\(\"bad tool\"\\)" 1))
            (int-at (toolspec-ui-test--place-of json "\"type\": \\(\"int\"\\)" 1))
            (tags-at (toolspec-ui-test--place-of json "\"tags\": \\({\\)" 1)))
        (should (= 9 (length lines)))
        (should (equal (nth 0 lines)
                       (format "%s:%d:%d: error: name: \"bad tool\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{1,64}$, e.g. \"bad_tool\""
                               name (car name-at) (cdr name-at))))
        (should (equal (nth 1 lines)
                       (format "%s:%d:%d: warning: tools[1].inputSchema.properties.count.type: non-standard type name \"int\" read as \"integer\""
                               name (car int-at) (cdr int-at))))
        (should (string-prefix-p (format "%s:%d:%d: error: args[1].items: " name (car tags-at) (cdr tags-at))
                                 (nth 2 lines)))
        ;; next-error from the JSON buffer visits them in turn.
        (with-current-buffer buffer
          (goto-char (point-min))
          (next-error)
          (should (equal (toolspec-ui-test--here) (cons buffer name-at)))
          (next-error)
          (should (equal (toolspec-ui-test--here) (cons buffer int-at)))
          (next-error)
          (should (equal (toolspec-ui-test--here) (cons buffer tags-at))))))))

(ert-deftest toolspec-ui-validate-buffer-without-file ()
  "A buffer without a file is named by its buffer name, and next-error works."
  (toolspec-test-helpers-with-clean-state
    (let ((buffer (get-buffer-create "scratch tools")))
      (with-current-buffer buffer (insert toolspec-test-helpers-bad-json))
      (switch-to-buffer buffer)
      (toolspec-test-helpers-mx "toolspec-validate-buffer")
      (let ((lines (toolspec-test-helpers-problem-lines))
            (tags-at (toolspec-ui-test--place-of toolspec-test-helpers-bad-json "\"tags\": \\({\\)" 1)))
        (should (= 9 (length lines)))
        (should (string-prefix-p "scratch tools:9:15: error: name: " (car lines)))
        (with-current-buffer "*toolspec-problems*"
          (goto-char (point-min))
          (search-forward "error: args[1].items")
          (compile-goto-error))
        (should (equal (toolspec-ui-test--here) (cons buffer tags-at)))))))

(ert-deftest toolspec-ui-validate-buffer-clean-and-invalid ()
  "A clean spec says No problems; invalid JSON is one positioned error."
  (toolspec-test-helpers-with-clean-state
    (switch-to-buffer (find-file-noselect (toolspec-test-helpers-example "gemini.json")))
    (should (= 0 (toolspec-validate-buffer)))
    (should (string-suffix-p "No problems\n" (toolspec-test-helpers-messages)))
    (with-current-buffer "*toolspec-problems*"
      (should (string-match-p "^No problems$" (buffer-string))))
    (should-not (toolspec-test-helpers-problem-lines))
    (let ((buffer (get-buffer-create "broken")))
      (with-current-buffer buffer (insert toolspec-test-helpers-broken-json))
      (switch-to-buffer buffer)
      (toolspec-test-helpers-mx "toolspec-validate-buffer")
      (should (equal (toolspec-test-helpers-problem-lines)
                     '("broken:3:18: error: Invalid JSON: key must be a string")))
      (with-current-buffer buffer
        (goto-char (point-min))
        (next-error))
      (should (equal (toolspec-ui-test--here) (cons buffer (quote (3 . 18))))))))

(ert-deftest toolspec-ui-flymake-backend ()
  "The Flymake backend reports every problem at its place."
  (toolspec-test-helpers-with-clean-state
    (with-current-buffer (get-buffer-create "flymake tools")
      (insert toolspec-test-helpers-bad-json)
      (let (reported)
        (toolspec-flymake (lambda (diags &rest _) (setq reported diags)))
        (should (= 9 (length reported)))
        (should (= 3 (cl-count :error reported :key #'flymake-diagnostic-type)))
        (should (= 6 (cl-count :warning reported :key #'flymake-diagnostic-type)))
        (let ((d (cl-find-if (lambda (d) (string-prefix-p "name: " (flymake-diagnostic-text d))) reported)))
          (should (equal (buffer-substring (flymake-diagnostic-beg d) (flymake-diagnostic-end d))
                         "\"bad tool\""))))
      (toolspec-flymake-setup)
      (should (memq #'toolspec-flymake flymake-diagnostic-functions))
      (should (bound-and-true-p flymake-mode)))))

;;;; Checking many tools

(defun toolspec-ui-test--openapi-text (n)
  "An OpenAPI document of N operations named in kebab case.
Its `info' key is given three times, its paths have dots in them (the
path of a tool is `paths./v1.0/items7.get'), and its operations are
written in reverse order of their names, so that the order of the
paths in the text is not the order of the tools.  Each operation has
an integer parameter whose `enum' is [1]: a warning, since gptel and
llm expect strings there."
  (concat "{\n  \"openapi\": \"3.0.0\",\n"
          "  \"info\": {\"title\": \"T\", \"version\": \"1\"},\n"
          "  \"info\": {\"title\": \"U\", \"version\": \"1\"},\n"
          "  \"paths\": {\n"
          (mapconcat (lambda (i)
                       (format (concat "    \"/v1.0/items%d\": {\n      \"parameters\": [],\n"
                                       "      \"get\": {\n        \"operationId\": \"Get-Item-%d\",\n"
                                       "        \"parameters\": [{\"name\": \"n\", \"in\": \"query\", \"description\": \"n\",\n"
                                       "                        \"schema\": {\"type\": \"integer\", \"enum\": [1]}}],\n"
                                       "        \"responses\": {\"200\": {\"description\": \"ok\"}}\n"
                                       "      }\n    }")
                               i i))
                     (number-sequence (1- n) 0 -1)
                     ",\n")
          "\n  },\n  \"info\": {\"title\": \"V\", \"version\": \"1\"}\n}\n"))

(ert-deftest toolspec-ui-text-positions-in-one-pass ()
  "Places in any order become the positions found one by one."
  (with-temp-buffer
    (insert "{\n  \"a\": 1,\n\n  \"bé\": [2, 3]\n}")
    (let* ((places [(4 . 9) (1 . 1) (2 . 3) (4 . 3) (2 . 99) (3 . 1) (9 . 2) (1 . 1)])
           (positions (toolspec-ui--text-positions places)))
      (should (equal positions
                     (cl-map 'vector (lambda (p) (toolspec-ui--text-position (car p) (cdr p))) places)))
      (should (equal (buffer-substring (aref positions 0) (1+ (aref positions 0))) "["))
      (should (equal (buffer-substring (aref positions 3) (+ 4 (aref positions 3))) "\"bé\"")))))

(ert-deftest toolspec-ui-many-tools-each-at-its-place ()
  "Each problem of a document of many operations is at its own operation.
The places of all of them are found in one pass over the text (a
check of GitHub's description, 1,223 operations, took 48 s when each
operation was looked for from the start of the text)."
  (toolspec-test-helpers-with-clean-state
    (let* ((n 400)
           (text (toolspec-ui-test--openapi-text n))
           (buffer (get-buffer-create "many operations"))
           (calls 0)
           (locate (symbol-function 'toolspec--mod-locate))
           diags)
      (with-current-buffer buffer
        (insert text)
        (cl-letf (((symbol-function 'toolspec--mod-locate)
                   (lambda (json path)
                     (when (> (length json) 10000) (cl-incf calls))
                     (funcall locate json path))))
          (setq diags (toolspec-ui--source-diagnostics (toolspec-ui--buffer-source buffer)))))
      ;; No look-up over the whole text for each problem.
      (should (= calls 0))
      (should (equal (toolspec--mod-locate-many "{\"a\": [1, {\"b\": 2}]}" ["a[1].b" "" "zz"])
                     [(1 . 17) (1 . 1) (1 . 1)]))
      (should-error (toolspec--mod-locate-many "{}" [1]) :type 'toolspec-format-error)
      (should-error (toolspec--mod-locate-many "{}" '("a")) :type 'toolspec-format-error)
      (should (= (+ n 2) (length diags)))
      ;; The problems of no tool: where the last `info' is, the value
      ;; the parser keeps (the text ends with it, so they come last).
      (let ((info (toolspec-ui-test--place-of text "\"info\": \\({\\)\"title\": \"V\"" 1))
            (message "duplicate key \"info\": the last value is used, the earlier ones are ignored"))
        (should (equal (last diags 2)
                       (list (list 'warning (car info) (cdr info) "info" message)
                             (list 'warning (car info) (cdr info) "info" message)))))
      (dotimes (i n)
        (let ((get (toolspec-ui-test--place-of
                    text (format "\"/v1\\.0/items%d\": {\n.*\n      \"get\": \\({\\)" i) 1)))
          (should (member (list 'warning (car get) (cdr get) "args[0].enum[0]"
                                (concat "gptel and llm expect :enum to hold strings; "
                                        "the number 1 works with providers but not with every client"))
                          diags)))))))

;;;; Exporting

(ert-deftest toolspec-ui-export-to-a-buffer ()
  "M-x toolspec-export with tools, whole categories and no file: a JSON buffer."
  (toolspec-test-helpers-with-clean-state
    (toolspec-import-file (toolspec-test-helpers-example "openai-chat.json"))
    (toolspec-import-file (toolspec-test-helpers-example "anthropic.json"))
    (toolspec-test-helpers-mx "toolspec-export" "openai-chat/*,anthropic/get_weather" "mcp" "")
    (should (eq (window-buffer) (get-buffer "*toolspec-export*")))
    (with-current-buffer "*toolspec-export*"
      (should (memq major-mode '(js-json-mode js-mode)))
      (let ((doc (json-parse-string (buffer-string) :object-type 'alist :array-type 'list)))
        (should (equal (mapcar (lambda (tool) (alist-get 'name tool)) (alist-get 'tools doc))
                       '("create_calendar_event" "list_unread_messages" "get_weather")))
        (should (alist-get 'inputSchema (car (alist-get 'tools doc))))))))

(ert-deftest toolspec-ui-export-to-a-file ()
  "M-x toolspec-export writes a file, asking before overwriting it."
  (toolspec-test-helpers-with-clean-state
    (toolspec-import-file (toolspec-test-helpers-example "gemini.json"))
    (let ((file (toolspec-test-helpers-temp-file "old")))
      (toolspec-test-helpers-mx "toolspec-export" "gemini/book_table" "anthropic" file "y")
      (let ((doc (json-parse-string (with-temp-buffer (insert-file-contents file) (buffer-string))
                                    :object-type 'alist :array-type 'list)))
        (should (equal (mapcar (lambda (tool) (alist-get 'name tool)) doc) '("book_table")))
        (should (alist-get 'input_schema (car doc))))
      (should (string-match-p "1 tool written to .* (anthropic)" (toolspec-test-helpers-messages)))
      (should-not (get-buffer "*toolspec-export*"))
      ;; Refusing to overwrite leaves the file alone.
      (let ((before (with-temp-buffer (insert-file-contents file) (buffer-string))))
        (should-error (toolspec-test-helpers-mx "toolspec-export" "gemini/*" "gemini" file "n")
                      :type 'user-error)
        (should (equal before (with-temp-buffer (insert-file-contents file) (buffer-string))))))
    ;; From Lisp, the document is returned as before.
    (let ((json (toolspec-export (list "find_restaurants") 'openai)))
      (should (stringp json))
      (should (string-match-p "\"find_restaurants\"" json))
      (should-not (get-buffer "*toolspec-export*")))))

(ert-deftest toolspec-ui-export-warns-of-names-given-twice ()
  "M-x toolspec-export of tools of two categories that share names warns of them."
  (toolspec-test-helpers-with-clean-state
    (let* ((file (toolspec-test-helpers-example "gemini.json"))
           (copy (toolspec-test-helpers-temp-file
                  (with-temp-buffer (insert-file-contents file) (buffer-string)))))
      (toolspec-import-file file :category "one")
      (toolspec-import-file copy :category "two")
      (toolspec-import-file (toolspec-test-helpers-example "anthropic.json"))
      (when (get-buffer "*Warnings*") (kill-buffer "*Warnings*"))
      ;; Names apart: no warning.
      (toolspec-test-helpers-mx "toolspec-export" "one/*,anthropic/*" "openai" "")
      (should-not (get-buffer "*Warnings*"))
      (toolspec-test-helpers-mx "toolspec-export" "one/*,two/book_table,anthropic/*" "openai" "")
      (with-current-buffer "*toolspec-export*"
        (should (equal (cl-count "book_table"
                                 (mapcar (lambda (tool) (alist-get 'name (alist-get 'function tool)))
                                         (json-parse-string (buffer-string) :object-type 'alist :array-type 'list))
                                 :test #'equal)
                       2)))
      (should (get-buffer "*Warnings*"))
      (with-current-buffer "*Warnings*"
        (should (string-match-p "The name \"book_table\" is given to more than one of the exported tools: a provider refuses"
                                (buffer-string))))
      (kill-buffer "*Warnings*")
      (toolspec-test-helpers-mx "toolspec-export" "one/*,two/*" "openai" "")
      (with-current-buffer "*Warnings*"
        (should (string-match-p "The names \"find_restaurants\", \"book_table\" are each given to"
                                (buffer-string)))))))

;;;; Quitting a long import

(defun toolspec-ui-test--big-openapi (file operations)
  "Write to FILE an OpenAPI document of OPERATIONS operations.
Each takes a body of one shared schema of 60 object properties, so
that every tool is large to read, check and make."
  (let ((paths (make-hash-table :test #'equal))
        (props (make-hash-table :test #'equal)))
    (dotimes (k 60)
      (puthash (format "field_%d" k)
               `((type . "object") (description . ,(format "Field %d." k))
                 (properties (a (type . "string") (description . "A."))
                             (b (type . "integer"))
                             (c (type . "array") (items (type . "string")))))
               props))
    (dotimes (i operations)
      (puthash (format "/items%d/{id}" i)
               `((post (operationId . ,(format "post_item_%d" i))
                       (summary . ,(format "Post item %d." i))
                       (parameters . [((name . "id") (in . "path") (required . t)
                                       (schema (type . "string")))])
                       (requestBody (required . t)
                                    (content (application/json
                                              (schema ($ref . "#/components/schemas/Big")))))
                       (responses (\200 (description . "ok")))))
               paths))
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (json-serialize
                     `((openapi . "3.0.0") (info (title . "Big") (version . "1"))
                       (servers . [((url . "http://127.0.0.1:1"))])
                       (paths . ,paths)
                       (components (schemas (Big (type . "object") (properties . ,props))))))
                    nil file nil 'silent))))

(ert-deftest toolspec-ui-quit-stops-a-long-import ()
  "C-g typed in a terminal Emacs during a long import stops it at once.
A real `emacs -nw' on a pseudo-terminal runs the import with M-x and
gets C-g as soon as it starts: the import quits, and it made a small
part of the Lisp objects a whole import makes (counted in cons cells,
against what each tool costs, measured first in the same Emacs)."
  (let* ((dir (make-temp-file "toolspec-quit" t))
         (big (expand-file-name "big.json" dir))
         (small (expand-file-name "small.json" dir))
         (setup (expand-file-name "setup.el" dir))
         (marker (lambda (name) (expand-file-name name dir)))
         (operations 10000)
         (process-environment (cons "TERM=xterm" process-environment))
         proc)
    (unwind-protect
        (progn
          (toolspec-ui-test--big-openapi big operations)
          (toolspec-ui-test--big-openapi small 200)
          (with-temp-file setup
            (prin1 `(progn
                      (setq toolspec-module-file ,toolspec-module-file)
                      (require 'toolspec)
                      (require 'toolspec-openapi)
                      ;; The whole document makes more than the default
                      ;; import budget allows: this is about quitting.
                      (setq toolspec-max-import-size most-positive-fixnum)
                      (defun toolspec-quit-test-import ()
                        (interactive)
                        ;; What one tool costs, from a small document.
                        (let ((before cons-cells-consed))
                          (toolspec-read-openapi ,small)
                          (let ((per-tool (/ (- cons-cells-consed before) 200.0))
                                (start cons-cells-consed)
                                (outcome nil))
                            (write-region "" nil ,(funcall marker "started") nil 'silent)
                            (setq outcome
                                  (condition-case nil
                                      (format "finished %d" (length (toolspec-read-openapi ,big)))
                                    (quit "quit")))
                            (write-region (format "%s %d %f" outcome (- cons-cells-consed start) per-tool)
                                          nil ,(funcall marker "done") nil 'silent))))
                      (write-region "" nil ,(funcall marker "ready") nil 'silent))
                   (current-buffer)))
          (setq proc (make-process :name "toolspec-quit-test" :buffer (generate-new-buffer " *toolspec-quit-test*")
                                   :connection-type 'pty
                                   :noquery t
                                   :command `(,(expand-file-name invocation-name invocation-directory)
                                              ;; This Emacs's dump file, which an Emacs
                                              ;; run from where it was unpacked needs.
                                              ,@(let ((dump (alist-get 'dump-file-name (pdumper-stats))))
                                                  (and dump (list (concat "--dump-file=" dump))))
                                              "-nw" "-Q" "-L" ,(file-name-directory (locate-library "toolspec"))
                                              "-l" ,setup)))
          (set-process-window-size proc 24 80)
          (let ((wait (lambda (name what)
                        (with-timeout (120 (ert-fail (format "the terminal Emacs never %s; its screen:\n%s" what
                                                             (with-current-buffer (process-buffer proc)
                                                               (buffer-string)))))
                          (while (not (file-exists-p (funcall marker name)))
                            (accept-process-output proc 0.05))))))
            (funcall wait "ready" "started")
            (accept-process-output proc 0.3)
            (process-send-string proc "\extoolspec-quit-test-import\r")
            (funcall wait "started" "began the import")
            (process-send-string proc "\C-g")
            (funcall wait "done" "finished or quit the import")
            (let* ((done (split-string (with-temp-buffer
                                         (insert-file-contents (funcall marker "done"))
                                         (buffer-string))))
                   (consed (string-to-number (nth 1 done)))
                   (per-tool (string-to-number (nth 2 done))))
              (message "The import: %s, %d cons cells made, %.0f per tool, %d tools"
                       (car done) consed per-tool operations)
              (should (equal (car done) "quit"))
              (should (> per-tool 100))
              ;; A whole import would make OPERATIONS tools' objects.
              (should (< consed (* 0.5 per-tool operations))))))
      (when proc
        (delete-process proc)
        (kill-buffer (process-buffer proc)))
      (delete-directory dir t))))

;;;; gptel forms

(defun toolspec-ui-test--read-forms (buffer)
  "All forms in BUFFER."
  (with-current-buffer buffer
    (save-excursion
      (goto-char (point-min))
      (let (forms)
        (condition-case nil
            (while t (push (read (current-buffer)) forms))
          (end-of-file nil))
        (nreverse forms)))))

(defun toolspec-ui-test--indented-p (buffer)
  "Non-nil when BUFFER's text is as `indent-region' leaves it."
  (let ((text (with-current-buffer buffer (buffer-string))))
    (with-temp-buffer
      (emacs-lisp-mode)
      (setq indent-tabs-mode (buffer-local-value 'indent-tabs-mode buffer))
      (insert text)
      (indent-region (point-min) (point-max))
      (equal (buffer-string) text))))

(ert-deftest toolspec-ui-insert-gptel-form-from-json-at-point ()
  "The JSON around point becomes readable gptel-make-tool forms that work."
  (toolspec-test-helpers-with-clean-state
    (let ((expected (toolspec-read-file (toolspec-test-helpers-example "openai-chat.json"))))
      (switch-to-buffer (find-file-noselect (toolspec-test-helpers-example "openai-chat.json")))
      (goto-char (point-min))
      (search-forward "\"role\"")
      (toolspec-test-helpers-mx "toolspec-insert-gptel-form")
      (should (eq (window-buffer) (get-buffer "*toolspec-gptel-form*")))
      (with-current-buffer "*toolspec-gptel-form*"
        (should (eq major-mode 'emacs-lisp-mode))
        (should (string-match-p "^;; create_calendar_event: define `my-create-calendar-event-function'"
                                (buffer-string)))
        (should (string-match-p "^(gptel-make-tool\n :name \"create_calendar_event\"\n :function #'my-create-calendar-event-function\n"
                                (buffer-string))))
      (should (toolspec-ui-test--indented-p (get-buffer "*toolspec-gptel-form*")))
      (let ((forms (toolspec-ui-test--read-forms "*toolspec-gptel-form*")))
        (should (equal (mapcar #'car forms) '(gptel-make-tool gptel-make-tool)))
        (mapc #'eval forms))
      (dolist (plist expected)
        (let ((tool (gptel-get-tool (plist-get plist :name))))
          (should (gptel-tool-p tool))
          (should (eq (gptel-tool-function tool)
                      (intern (format "my-%s-function"
                                      (replace-regexp-in-string "_" "-" (plist-get plist :name))))))
          (should (equal (plist-get (toolspec--plist tool) :args) (plist-get plist :args))))))))

(ert-deftest toolspec-ui-insert-gptel-form-in-elisp-buffer-from-file ()
  "In an Emacs Lisp buffer without JSON, ask for a file and insert at point."
  (toolspec-test-helpers-with-clean-state
    (let ((buffer (get-buffer-create "config.el")))
      (with-current-buffer buffer
        (emacs-lisp-mode)
        (insert ";;; My tools\n\n(setq x 1)\n"))
      (switch-to-buffer buffer)
      (goto-char (point-min))
      (forward-line 2)
      (toolspec-test-helpers-mx "toolspec-insert-gptel-form" (toolspec-test-helpers-example "json-schema.json"))
      (should-not (get-buffer "*toolspec-gptel-form*"))
      (with-current-buffer buffer
        (should (string-prefix-p ";;; My tools\n\n;; translate_text: define `my-translate-text-function'"
                                 (buffer-string)))
        (should (string-suffix-p "\n(setq x 1)\n" (buffer-string))))
      (should (toolspec-ui-test--indented-p buffer))
      (let ((forms (toolspec-ui-test--read-forms buffer)))
        (should (equal (mapcar #'car forms) '(gptel-make-tool setq)))
        (eval (car forms)))
      (should (equal (gptel-tool-name (gptel-get-tool "translate_text")) "translate_text")))))

(ert-deftest toolspec-ui-insert-gptel-form-from-region ()
  "With an active region in an Emacs Lisp buffer, the forms follow the region."
  (toolspec-test-helpers-with-clean-state
    (let ((buffer (get-buffer-create "pasted.el"))
          (json (with-temp-buffer
                  (insert-file-contents (toolspec-test-helpers-example "anthropic.json"))
                  (buffer-string))))
      (with-current-buffer buffer
        (emacs-lisp-mode)
        (insert "(setq before t)\n" json "(setq after t)\n"))
      (switch-to-buffer buffer)
      (let ((transient-mark-mode t))
        (goto-char (point-min))
        (forward-line 1)
        (push-mark (+ (point) (length json)) t t)
        (toolspec-test-helpers-mx "toolspec-insert-gptel-form"))
      (with-current-buffer buffer
        (should (string-prefix-p (concat "(setq before t)\n" json ";; record_summary: define")
                                 (buffer-string)))
        (should (string-suffix-p "\n(setq after t)\n" (buffer-string)))
        (should (= 2 (how-many "^(gptel-make-tool$" (point-min) (point-max))))))))

(ert-deftest toolspec-ui-insert-gptel-form-invalid-json ()
  "Invalid JSON at point gives a positioned error, and nothing is inserted."
  (toolspec-test-helpers-with-clean-state
    (let ((buffer (get-buffer-create "broken.json")))
      (with-current-buffer buffer (insert toolspec-test-helpers-broken-json))
      (switch-to-buffer buffer)
      (goto-char (point-min))
      (let ((err (should-error (toolspec-test-helpers-mx "toolspec-insert-gptel-form") :type 'user-error)))
        (should (string-match-p "\\`Invalid JSON: broken\\.json:3:18: " (cadr err))))
      (should-not (get-buffer "*toolspec-gptel-form*"))
      (should (equal (toolspec-ui-test--here) (cons buffer (quote (3 . 18))))))))

;;;; Paths

(ert-deftest toolspec-ui-problem-paths-map-into-every-format ()
  "Argument and tool-key problems map to their JSON place in every example format."
  (dolist (file (cl-remove-if (lambda (f) (member (file-name-nondirectory f)
                                                  '("gloodata.json" "arcade.json" "skydeck.json" "openapi.json")))
                              (directory-files toolspec-test-helpers-examples t "\\.json\\'")))
    (let* ((tools (toolspec-read-file file))
           (paths toolspec-last-import-paths)
           (text (with-temp-buffer (insert-file-contents file) (buffer-string))))
      (should (= (length tools) (length paths)))
      (cl-loop
       for tool in tools
       for path in paths
       do (let ((name-path (toolspec-ui--problem-json-path text tool path "name")))
            (should (toolspec-ui--path-found-p text name-path))
            (should (string-match-p "\\(?:\\`\\|\\.\\)\\(?:name\\|title\\)\\'" name-path)))
       do (cl-loop
           for arg in (plist-get tool :args)
           for i from 0
           for p = (toolspec-ui--problem-json-path text tool path (format "args[%d]" i))
           do (should (string-suffix-p (format "properties.%s" (plist-get arg :name)) p))
           do (should (toolspec-ui--path-found-p text p))
           do (should (equal (toolspec-ui--problem-json-path text tool path (format "args[%d].items.type" i))
                             (concat p ".items.type"))))))))

(ert-deftest toolspec-ui-warnings-go-to-the-tool-at-the-longest-path ()
  "A warning belongs to the tool whose path is its path or its nearest
ancestor's (tools[1] does not own tools[10].x); given problems are used
as they are, without validating again."
  (let* ((tools (cl-loop for i below 12 collect (list :name (format "t%d" i) :args nil)))
         (paths (cl-loop for i below 12 collect (format "tools[%d]" i)))
         (given (cl-loop for i below 12 collect (and (= i 3) '((error "name" "given")))))
         (warnings '((warning "tools[10].x" "w10") (warning "tools[1]" "w1")
                     (warning "tools[1].a[2]" "w1a") (warning "other" "none")))
         (result (cl-letf (((symbol-function 'toolspec-validate)
                            (lambda (_) (error "Validated again"))))
                   (toolspec-ui--tool-problems tools warnings paths nil given)))
         (messages (lambda (i) (mapcar (lambda (p) (nth 2 p))
                                       (plist-get (nth i (car result)) :problems)))))
    (should (equal (funcall messages 10) '("w10")))
    (should (equal (funcall messages 1) '("w1" "w1a")))
    (should (equal (funcall messages 3) '("given")))
    (should (equal (funcall messages 0) nil))
    (should (equal (cdr result) '((warning "other" "none" t))))))

(defconst toolspec-ui-test--catalog
  (expand-file-name "fixtures/odd-catalog.json"
                    (file-name-directory (or load-file-name buffer-file-name default-directory)))
  "A catalog of 10 definitions: 4 tools (with unknown type names), 6 unreadable.")

(defconst toolspec-ui-test--catalog-readable
  '("lookup_records" "set_flag" "convert_units" "plan_trip")
  "The tools of `toolspec-ui-test--catalog' that can be read.")

(defconst toolspec-ui-test--catalog-unreadable
  '(("[1]" . "a tool needs a `name`")
    ("[3]" . "found a number")
    ("[5].parameters.properties" . "`properties` must be an object")
    ("[6]" . "not a tool definition in any known format")
    ("[8].input_schema.type" . "must be of type \"object\"")
    ("[9].inputSchema.properties.node.properties.next.$ref" . "recursive $ref cycle"))
  "Where each unreadable definition of the catalog goes wrong, and why.")

(ert-deftest toolspec-ui-catalog-reads-every-readable-tool ()
  "Reading a catalog with unreadable tools gives the others, and an
error with its path for each one left out; STRICT refuses it."
  (let ((tools (toolspec-read-file toolspec-ui-test--catalog)))
    (should (equal (mapcar (lambda (tl) (plist-get tl :name)) tools) toolspec-ui-test--catalog-readable))
    (should (equal toolspec-last-import-paths '("[0]" "[2]" "[4]" "[7]")))
    (let ((errors (cl-remove-if-not (lambda (w) (eq (car w) 'error)) toolspec-last-import-warnings)))
      (should (equal (mapcar #'cadr errors) (mapcar #'car toolspec-ui-test--catalog-unreadable)))
      (cl-loop for (_ _ message) in errors
               for (_ . phrase) in toolspec-ui-test--catalog-unreadable
               do (should (string-match-p (regexp-quote phrase) message))
               do (should (string-suffix-p "is left out" message))))
    ;; Unknown type names are no type constraint: no :type in the plist.
    (let ((query (car (plist-get (car tools) :args))))
      (should (equal query '(:name "query" :description "What to look for."))))
    (should (equal (plist-get (car (plist-get (nth 1 tools) :args)) :type) ["boolean" "string"]))
    (should (assoc-default "[0].function.parameters.properties.query.type"
                           (mapcar #'cdr toolspec-last-import-warnings)))
    ;; No tool the reader made has an error for the validator.
    (should-not (cl-some (lambda (ps) (assq 'error ps)) toolspec-last-import-problems)))
  (let ((err (should-error (toolspec-read-file toolspec-ui-test--catalog nil t) :type 'toolspec-format-error)))
    (should (string-match-p "\\[1\\]: a tool needs a `name`" (cadr err)))
    (should (equal (plist-get (toolspec-error-details err) :path) "[1]")))
  (should-error (toolspec-parse-json "[42, {\"frobnicate\": 1}]") :type 'toolspec-format-error))

(ert-deftest toolspec-ui-catalog-import-registers-every-readable-tool ()
  "toolspec-import-file registers the readable tools of a catalog and
logs each one left out; with :strict it registers nothing."
  (toolspec-test-helpers-with-clean-state
    (let ((made (toolspec-import-file toolspec-ui-test--catalog)))
      (should (equal (mapcar #'gptel-tool-name made) toolspec-ui-test--catalog-readable))
      (dolist (name toolspec-ui-test--catalog-readable)
        (should (gptel-tool-p (gptel-get-tool (list "odd-catalog" name)))))
      (should (string-match-p "odd-catalog\\.json: error: \\[5\\]\\.parameters\\.properties: "
                              (toolspec-test-helpers-messages))))
    (toolspec-unregister toolspec-ui-test--catalog)
    (should-error (toolspec-import-file toolspec-ui-test--catalog :strict t) :type 'toolspec-format-error)
    (should-not (assoc "odd-catalog" gptel--known-tools))))

(ert-deftest toolspec-ui-catalog-preview-shows-what-is-left-out ()
  "The preview of a catalog lists its tools, says which definitions
are left out and where (RET goes there), and registers the others."
  (toolspec-test-helpers-with-clean-state
    (toolspec-test-helpers-mx "toolspec-import-file" toolspec-ui-test--catalog)
    (let ((text (toolspec-test-helpers-preview-text)))
      (should (string-match-p "^4 tools, 6 errors, [0-9]+ warnings$" text))
      (should (string-match-p "^6 tool definitions could not be read and are left out: the errors below say where$" text))
      (dolist (case toolspec-ui-test--catalog-unreadable)
        (should (string-match-p (concat "^  error: " (regexp-quote (car case)) ": .*"
                                        (regexp-quote (cdr case)))
                                text)))
      (dolist (name toolspec-ui-test--catalog-readable)
        (should (string-match-p (concat "^" name "$") text)))
      (should (string-match-p "args: +query:\\?, ids:\\? (optional), limit:integer (optional), fields:array (optional)" text))
      (should (string-match-p "args: +value:boolean|string (optional)" text)))
    ;; RET on a problem of a definition left out: its place in the file.
    (toolspec-ui-test--visit-preview-line "error: \\[5\\]\\.parameters\\.properties")
    (toolspec-test-helpers-keys (kbd "RET"))
    (let ((here (toolspec-ui-test--here))
          (json (with-temp-buffer (insert-file-contents toolspec-ui-test--catalog) (buffer-string))))
      (should (equal (buffer-file-name (car here)) toolspec-ui-test--catalog))
      (should (equal (cdr here) (toolspec-ui-test--place-of json "\"properties\": \\(\\[\\)\"a\", \"b\"\\]" 1))))
    (pop-to-buffer "*toolspec-import*")
    (toolspec-test-helpers-keys (kbd "C-c C-c"))
    (dolist (name toolspec-ui-test--catalog-readable)
      (should (gptel-tool-p (gptel-get-tool (list "odd-catalog" name)))))
    (should (string-match-p "4 tools registered in category odd-catalog" (toolspec-test-helpers-messages)))))

(ert-deftest toolspec-ui-catalog-with-names-and-errors-imports-the-rest ()
  "The catalog with a name providers refuse and a tool with errors:
the readable tools without errors are registered, under names every
backend takes, a call reaches the function bound to the original
name, and the tool with errors is left out with its problems."
  (toolspec-test-helpers-with-clean-state
    (let* ((catalog (with-temp-buffer
                      (insert-file-contents toolspec-ui-test--catalog)
                      (string-trim-right (buffer-string))))
           ;; Two definitions more, as the BFCL catalog writes them.
           (extra "{\"name\": \"math.sum\", \"description\": \"Add numbers.\",
                    \"parameters\": {\"type\": \"dict\", \"properties\": {
                      \"numbers\": {\"type\": \"array\", \"items\": {\"type\": \"float\"}, \"description\": \"Numbers.\"}},
                      \"required\": [\"numbers\"]}},
                   {\"name\": \"get_response\", \"description\": \"Topic news.\",
                    \"parameters\": {\"type\": \"dict\", \"properties\": {
                      \"topics\": {\"type\": \"array\", \"enum\": [\"Weather\", \"News\"], \"description\": \"Topics.\"}}}}")
           (file (toolspec-test-helpers-temp-file
                  (concat (substring catalog 0 -1) ",\n" extra "]\n")))
           (summed nil)
           (made (toolspec-import-file
                  file :confirm nil
                  :functions `(("math.sum" . ,(lambda (numbers) (setq summed numbers) "done"))))))
      (should (equal (mapcar #'toolspec-original-name made)
                     (append toolspec-ui-test--catalog-readable '("math.sum"))))
      (dolist (tool made)
        (should (string-match-p "\\`[a-zA-Z_][a-zA-Z0-9_-]\\{0,63\\}\\'" (gptel-tool-name tool))))
      (let ((sum (car (last made))))
        (should (equal (gptel-tool-name sum) "math_sum"))
        (should (equal (funcall (gptel-tool-function sum) [1 2.5]) "done"))
        (should (equal summed [1 2.5])))
      (should (equal (mapcar (lambda (e) (plist-get (cadr e) :tool)) toolspec-last-import-left-out)
                     '("get_response")))
      (should (string-match-p "topics\\|args\\[0\\]\\.enum" (car (car toolspec-last-import-left-out))))
      (let ((log (toolspec-test-helpers-messages)))
        (should (string-match-p "get_response.*(left out)" log))
        (should (string-match-p "\\[5\\]\\.parameters\\.properties: " log)))
      ;; :strict refuses the file at the tool with errors, or at the
      ;; first definition that cannot be read.
      (toolspec-unregister file)
      (should-error (toolspec-import-file file :strict t) :type 'toolspec-error)
      (should-not (assoc (file-name-base file) gptel--known-tools)))))

(provide 'toolspec-ui-test)
;;; toolspec-ui-test.el ends here
