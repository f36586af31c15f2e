;;; toolspec-generated-test.el --- ERT tests: generated Lisp is safe to load -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; The Lisp toolspec writes from a stranger's tool file (`toolspec
;; convert --to elisp', `toolspec-gptel-form-text' with comments,
;; M-x toolspec-insert-gptel-form) is loaded in a fresh batch Emacs
;; with the real gptel.  Tool names, argument names and property keys
;; carry forms after a newline, `)', `"', `;', `#'', a backslash, a NUL,
;; an ISO-2022 escape sequence, and descriptions a `Local Variables:'
;; list whose `coding: utf-7' would turn `+ACI-' into a quote.  Every
;; planted form would write a marker file: none may exist after loading,
;; and the tools must read back with the names they were given.
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "/path/to/libtoolspec.so")' \
;;     -l test/toolspec-generated-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'json)
(require 'gptel)
(require 'toolspec-ui)

(defun toolspec-generated-test--cases (marker)
  "Hostile cases: (WHAT NAME DESCRIPTION) planting forms that write MARKER.
NAME is used for the tool name, argument names and nested property
keys; DESCRIPTION for the tool's description and an argument's."
  (let ((form (format "(write-region \"\" nil %S)" marker)))
    `(("newline" ,(concat "nl\n" form "\n") "Tool.")
      ("paren" ,(concat "paren)" form "(") "Tool.")
      ("quote" ,(concat "quote\"" form "\"") "Tool.")
      ("semicolon" ,(concat "semi;\n" form) "Tool.")
      ("function quote" ,(concat "fn#'" form) "Tool.")
      ("backslash" ,(concat "bs\\\n" form) "Tool.")
      ("NUL" ,(concat "nul\0\n" form) "Tool.")
      ;; ISO-2022: after ESC $ B, bytes pair up, a backslash with the
      ;; quote it escapes, and a quote is left to end the string.
      ("ESC" ,(concat "esc\e$Ba\\\"\e(B" form "\"")
       ,(concat "Tool \e$Ba\\\"\e(B) " form " (\""))
      ;; A -*- line naming UTF-7, in which +AAo- is a newline.
      ("-*- line" ,(concat " -*- coding: utf-7 -*- +AAo-" form) "Tool.")
      ;; A local variables list naming UTF-7, in which +ACI- is a quote.
      ("local variables" "lv"
       ,(concat "Tool.\nLocal" " Variables:\ncoding: utf-7\nEnd:\n+ACI-) " form " (+ACI-")))))

(defun toolspec-generated-test--json (name description)
  "A JSON array of tools whose names are NAME, described by DESCRIPTION.
The first tool is named NAME, the second has a plain name: the
comment naming the function to define names its arguments."
  (json-encode
   (cl-loop for tool-name in (list (concat name "0") "plain")
            vconcat
            (list
             `((name . ,tool-name)
               (description . ,description)
               (parameters
                . ((type . "object")
                   (properties
                    . ((,name . ((type . "string") (description . ,description)))
                       ("obj" . ((type . "object") (description . "Nested keys.")
                                 (properties . ((,name . ((type . "string"))))))))))))))))

(defun toolspec-generated-test--names (tools)
  "The names in TOOLS, plists: (NAME ((ARG KEYS) ...)) for each tool.
KEYS are the property keys of ARG's `:properties'."
  (mapcar (lambda (tool)
            (list (plist-get tool :name)
                  (mapcar (lambda (arg)
                            (list (plist-get arg :name)
                                  (cl-loop for (k _) on (plist-get arg :properties) by #'cddr collect k)))
                          (plist-get tool :args))))
          tools))

(defvar toolspec-generated-test--stderr nil
  "Where the loading Emacs's standard error goes: nil, or a file.")

(defun toolspec-generated-test--load (file names)
  "Load FILE in a fresh batch Emacs with gptel; return what it says.
NAMES are the tool names to look up once loaded: the result is
\(STATUS OUTPUT NAMES-READ), NAMES-READ as
`toolspec-generated-test--names' gives them for the tools registered."
  (with-temp-buffer
    (let* ((form
            `(progn
               (setq load-path ',load-path)
               (require 'gptel)
               (load ,file nil t)
               (princ "\nRESULT:")
               (let ((print-escape-newlines t) (print-escape-control-characters t)
                     (print-length nil) (print-level nil))
                 (prin1 (mapcar (lambda (name)
                                  (let ((tool (gptel-get-tool name)))
                                    (list (gptel-tool-name tool)
                                          (mapcar (lambda (arg)
                                                    (list (plist-get arg :name)
                                                          (cl-loop for (k _) on (plist-get arg :properties)
                                                                   by #'cddr collect k)))
                                                  (gptel-tool-args tool)))))
                                ',names)))
               (terpri)))
           (status (call-process (expand-file-name invocation-name invocation-directory)
                                 nil (list t toolspec-generated-test--stderr) nil "--batch" "-Q" "-l" "cl-lib"
                                 "--eval" (let ((print-escape-control-characters t)
                                                              (print-escape-newlines t))
                                                          (prin1-to-string form))))
           (out (buffer-string)))
      (list status out
            (and (string-match "^RESULT:" out)
                 (car (read-from-string out (match-end 0))))))))

(defmacro toolspec-generated-test--each-case (bindings &rest body)
  "Run BODY for each hostile case, in a fresh temporary directory.
BINDINGS is (DIR JSON MARKER): the directory, the case's JSON file
in it and the marker file its planted forms write.  Everything is
deleted afterwards."
  (declare (indent 1) (debug t))
  (pcase-let ((`(,dir ,json ,marker) bindings))
    (let ((case (make-symbol "case")))
      `(let* ((,dir (make-temp-file "toolspec-gen-" t))
              (,marker (expand-file-name "pwned" ,dir))
              (,json (expand-file-name "hostile.json" ,dir)))
         (unwind-protect
             (dolist (,case (toolspec-generated-test--cases ,marker))
               (ert-info ((car ,case) :prefix "Case: ")
                 (let ((coding-system-for-write 'utf-8-unix))
                   (write-region (apply #'toolspec-generated-test--json (cdr ,case)) nil ,json nil 'silent))
                 ,@body))
           (delete-directory ,dir t))))))

(defun toolspec-generated-test--check (text file marker)
  "Write TEXT to FILE, load it in a fresh Emacs, check nothing ran.
The tools must read back with the names of the tools of the JSON
file next to FILE, whose forms would write MARKER."
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region text nil file nil 'silent))
  (toolspec-generated-test--check-file file marker))

(defun toolspec-generated-test--check-file (file marker)
  "Load FILE in a fresh Emacs and check that nothing ran and names read back.
MARKER is the file a planted form would write."
  (let* ((expected (toolspec-generated-test--names
                    (toolspec-read-file (expand-file-name "hostile.json" (file-name-directory file)))))
         (r (toolspec-generated-test--load file (mapcar #'car expected))))
    (should-not (file-exists-p marker))
    (should (equal (car r) 0))
    (should (equal (nth 2 r) expected))
    ;; Every comment line is one line: what follows `;;' ends at the
    ;; newline.
    (with-temp-buffer
      (insert-file-contents file)
      (goto-char (point-min))
      (should-not (re-search-forward "[\0\e\r]" nil t))
      ;; No -*- line, neither first nor in any comment.
      (while (re-search-forward "^ *;.*$" nil t)
        (should-not (string-search "-*-" (match-string 0))))
      (goto-char (point-min))
      (should-not (let ((case-fold-search t)) (search-forward (concat "Local" " Variables:") nil t))))))

(ert-deftest toolspec-generated-convert-to-elisp-loads-safely ()
  "`toolspec convert --to elisp' of a hostile file loads without running a planted form."
  (toolspec-generated-test--each-case (dir json marker)
    (let ((out (expand-file-name "tools.el" dir)))
      ;; The placeholder functions are named after the tools, or not.
      (dolist (function '("my-%s-function" "my-tool-function"))
        ;; --force: a hostile name is an error `convert' reports, and
        ;; what it writes anyway must be safe too.
        (should (memq (call-process (toolspec--program) nil nil nil
                                    "convert" "--force" "--to" "elisp" json "--output" out
                                    "--function" function)
                      '(0 1)))
        (toolspec-generated-test--check-file out marker)))))

(ert-deftest toolspec-generated-gptel-form-text-loads-safely ()
  "`toolspec-gptel-form-text' with comments writes text that loads safely."
  (toolspec-generated-test--each-case (dir json marker)
    (dolist (function (list (lambda (tool) (intern (format "my-%s-function" (plist-get tool :name))))
                            (lambda (_) 'my-tool-function)))
      (let ((text (mapconcat (lambda (tool)
                               (toolspec-gptel-form-text tool `(function ,(funcall function tool)) "cat" t))
                             (toolspec-read-file json) "\n")))
        (toolspec-generated-test--check text (expand-file-name "tools.el" dir) marker)))))

(ert-deftest toolspec-generated-insert-gptel-form-loads-safely ()
  "M-x toolspec-insert-gptel-form, saved with C-x C-w, loads safely."
  (toolspec-generated-test--each-case (dir json marker)
    (let ((out (expand-file-name "tools.el" dir))
          (before (buffer-list)))
      (unwind-protect
          (save-window-excursion
            ;; The file is named at the prompt (a prefix argument asks
            ;; for it): visiting it would apply its own local variables.
            (when (file-exists-p out) (delete-file out))
            (switch-to-buffer (get-buffer-create "notes"))
            (fundamental-mode)
            (execute-kbd-macro (vconcat (kbd "C-u M-x") "toolspec-insert-gptel-form" (kbd "RET")
                                        json (kbd "RET")))
            (should (eq (window-buffer) (get-buffer "*toolspec-gptel-form*")))
            (execute-kbd-macro (vconcat (kbd "C-x C-w") out (kbd "RET")))
            (should (file-exists-p out))
            (toolspec-generated-test--check-file out marker))
        (dolist (b (buffer-list))
          (unless (or (memq b before) (string-prefix-p " " (buffer-name b)))
            (with-current-buffer b (set-buffer-modified-p nil))
            (kill-buffer b)))))))

(ert-deftest toolspec-generated-gptel-form-values-are-data ()
  "Lists as a tool plist's values are written quoted: evaluating the form runs none."
  (let* ((dir (make-temp-file "toolspec-gen-" t))
         (marker (expand-file-name "pwned" dir))
         (form `(write-region "" nil ,marker)))
    (unwind-protect
        (let* ((tool (list :name "t" :description form :async form :category form
                           :args (list (list :name "a" :type 'string :description form))))
               (text (toolspec-gptel-form-text tool nil nil t))
               (call (car (read-from-string text))))
          (should (eq (car call) 'gptel-make-tool))
          ;; The arguments are evaluated as the call would evaluate them.
          (let ((values (mapcar #'eval (cdr call))))
            (should-not (file-exists-p marker))
            (should (equal (plist-get values :description) form))
            (should (equal (plist-get values :async) form))))
      (delete-directory dir t))))

;;;; Lists of problems

(defun toolspec-generated-test--forged (n)
  "A name that would forge problem line N for /etc/passwd."
  (format "x\n/etc/passwd:%d:1: error: forged\r\e[2K\u202e" n))

(defun toolspec-generated-test--visits (list-buffer count)
  "Buffers `next-error' shows, typed COUNT times from the top of LIST-BUFFER."
  (with-current-buffer list-buffer (goto-char (point-min)))
  (setq next-error-last-buffer (get-buffer list-buffer))
  (cl-loop repeat count
           do (execute-kbd-macro (kbd "M-g n"))
           collect (window-buffer)))

(defun toolspec-generated-test--one-line-p (list-buffer name)
  "Whether every problem line of LIST-BUFFER names NAME and holds no control character."
  (with-current-buffer list-buffer
    (goto-char (point-min))
    (forward-line 2)
    (cl-loop until (looking-at-p "^$")
             always (and (looking-at-p (concat (regexp-quote name) ":[0-9]+:[0-9]+: "))
                         (not (re-search-forward "[\r\e\u202e]" (line-end-position) t)))
             do (forward-line 1))))

(ert-deftest toolspec-generated-problem-lines-cannot-be-forged ()
  "A newline in a property name does not forge a line `next-error' follows."
  (let ((before (buffer-list)))
    (unwind-protect
        (save-window-excursion
          (let ((json (json-encode
                       `((tools . [((name . "t") (description . "d")
                                    (inputSchema
                                     . ((type . "object")
                                        (properties
                                         . ((,(toolspec-generated-test--forged 1) . ((type . "int") (description . "d")))
                                            ("o" . ((type . "object") (description . "o")
                                                    (properties
                                                     . ((,(toolspec-generated-test--forged 2) . ((type . "array"))))))))))))])))))
            (switch-to-buffer (get-buffer-create "forge.json"))
            (insert json)
            (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-validate-buffer" (kbd "RET")))
            (should (toolspec-generated-test--one-line-p "*toolspec-problems*" "forge.json"))
            (should (with-current-buffer "*toolspec-problems*"
                      (string-search "\\n/etc/passwd:1:1: error: forged" (buffer-string))))
            (should (equal (toolspec-generated-test--visits "*toolspec-problems*" 2)
                           (list (get-buffer "forge.json") (get-buffer "forge.json"))))))
      (dolist (b (buffer-list))
        (unless (or (memq b before) (string-prefix-p " " (buffer-name b)))
          (with-current-buffer b (set-buffer-modified-p nil))
          (kill-buffer b))))))

(ert-deftest toolspec-generated-lint-lines-cannot-be-forged ()
  "A newline in a tool or argument name does not forge a `toolspec-lint' line."
  (let ((before (buffer-list))
        (file (make-temp-file "forge" nil ".el")))
    (unwind-protect
        (save-window-excursion
          (let ((coding-system-for-write 'utf-8-unix)
                (print-escape-control-characters t))
            (write-region
             (format "(gptel-make-tool :name %S :function #'ignore :description \"d\"\n  :args (list '(:name %S :type int :description \"d\")))\n"
                     (concat "t" (toolspec-generated-test--forged 3))
                     (concat "a" (toolspec-generated-test--forged 4)))
             nil file nil 'silent))
          (require 'toolspec-lint)
          (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-check-elisp-file" (kbd "RET")
                                      file (kbd "RET")))
          (let ((name (file-name-nondirectory file)))
            (should (toolspec-generated-test--one-line-p "*toolspec-lint*" name))
            (should (with-current-buffer "*toolspec-lint*"
                      (string-search "\\n/etc/passwd:3:1: error: forged" (buffer-string))))
            (should (cl-every (lambda (b) (equal (buffer-file-name b) file))
                              (toolspec-generated-test--visits "*toolspec-lint*" 2)))))
      (delete-file file)
      (dolist (b (buffer-list))
        (unless (or (memq b before) (string-prefix-p " " (buffer-name b)))
          (with-current-buffer b (set-buffer-modified-p nil))
          (kill-buffer b))))))

;;;; Values crossing to the module

(ert-deftest toolspec-generated-propertized-strings-are-strings ()
  "Strings with text properties reach the module as strings, not vectors."
  (let ((tool (list :name (propertize "get_it" 'face 'bold)
                    :description (propertize "Get it." 'face 'italic 'help-echo "x")
                    :args (list (list :name (propertize "q" 'face 'bold) :type 'string
                                      :description (propertize "Query" 'face 'bold))))))
    (should-not (toolspec-validate tool))
    (should (equal (plist-get (cdr (car (read-from-string (toolspec-gptel-form-text tool)))) :name) "get_it"))
    (should (string-match-p "\"name\":\"get_it\"" (toolspec-to-json tool 'openai)))
    ;; The tool is not changed.
    (should (get-text-property 0 'face (plist-get tool :name)))))

(ert-deftest toolspec-generated-infinities-nan-and-the-empty-symbol ()
  "1.0e+INF, NaN and the empty symbol cross to the module and are judged there."
  (let ((tool '(:name "t" :description "d" :args ((:name "a" :type number :description "A")))))
    (dolist (x (list 1.0e+INF -1.0e+INF 0.0e+NaN))
      (let ((err (should-error (toolspec-validate-arguments tool (list :a x)) :type 'toolspec-plist-error)))
        (should (string-match-p "\\`a: -?[01]\\.0e\\+\\(INF\\|NaN\\) has no JSON form" (cadr err)))
        (should (equal (plist-get (toolspec-error-details err) :path) "a"))
        (should (string-prefix-p (plist-get (toolspec-error-details err) :message)
                                 (substring (cadr err) 3))))))
  (should-not (toolspec-validate-arguments
               '(:name "t" :description "d" :args ((:name "a" :type string :description "A")))
               (list :a (intern ""))))
  (should (equal (toolspec-validate
                  (list :name "t" :description "d"
                        :args (list (list :name "a" :type 'number :description "A" :enum (vector 1.0e+INF)))))
                 '((error "args[0].enum[0]" ":enum values must match :type number: found 1.0e+INF, which has no JSON form"))))
  (let ((tool (list :name "t" :description "d"
                    :args (list (list :name "a" :type 'number :description "A" :maximum 1.0e+INF)))))
    (should (equal (car (read-from-string (toolspec-gptel-form-text tool)))
                   `(gptel-make-tool :name "t" :function #'ignore :description "d"
                                     :args (list '(:name "a" :type number :description "A" :maximum 1.0e+INF)))))
    (should (string-match-p "1\\.0e\\+INF has no JSON form"
                            (cadr (should-error (toolspec-to-json tool 'openai) :type 'toolspec-error))))))

(ert-deftest toolspec-generated-byte-order-mark ()
  "A UTF-8 byte order mark is read by the module as by the command line."
  (let ((file (make-temp-file "bom" nil ".json")))
    (unwind-protect
        (let ((json "[{\"name\":\"t\",\"description\":\"d\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}]"))
          (let ((coding-system-for-write 'utf-8-with-signature-unix))
            (write-region json nil file nil 'silent))
          (should (equal (mapcar (lambda (x) (plist-get x :name)) (toolspec-read-file file)) '("t")))
          (should (equal (mapcar (lambda (x) (plist-get x :name)) (toolspec-parse-json (concat (string #xfeff) json)))
                         '("t"))))
      (delete-file file))))

(ert-deftest toolspec-generated-struct-args-not-a-list ()
  "A gptel tool whose :args is not a list is a toolspec error, not `wrong-type-argument'."
  (let ((tool (gptel-make-tool :name "toolspec_gen_bad_args" :function #'ignore :description "d" :args 'notalist)))
    (unwind-protect
        (progn
          (should (string-match-p ":args must be a list"
                                  (cadr (should-error (toolspec-validate-arguments tool '(:a 1))
                                                      :type 'toolspec-plist-error))))
          (should (equal (car (toolspec-validate tool)) '(error "args" ":args must be a list of argument plists, e.g. (list '(:name \"x\" :type string :description \"...\"))"))))
      (setq gptel--known-tools (assoc-delete-all "misc" gptel--known-tools)))))

(ert-deftest toolspec-generated-argument-errors-are-short ()
  "An argument error quotes a long value cut, with a marker: not 1 MB for the model."
  (let* ((tool '(:name "t" :description "d" :args ((:name "a" :type integer :description "A"))))
         (big (make-string 1000000 ?x))
         (wrapped (toolspec-gptel--wrap tool (lambda (&rest _) "ran") nil)))
    (dolist (problems (list (toolspec-validate-arguments tool (list :a big))
                            (toolspec-validate-arguments tool (json-encode `((a . ,big))))
                            (toolspec-validate-arguments tool (json-encode (vector big)))))
      (should (= (length problems) 1))
      (should (< (length (nth 2 (car problems))) 1000))
      (should (string-match-p "xxx\\.\\.\\. \\[100000[24] characters in all\\]" (nth 2 (car problems)))))
    ;; What the model gets back when it sends such a call.
    (let ((text (funcall wrapped big)))
      (should (string-prefix-p "Error: invalid arguments for tool t: a: " text))
      (should (< (length text) 1000)))))

(ert-deftest toolspec-generated-short-secrets-are-redacted ()
  "Secrets of fewer than 4 characters are redacted too; longer ones first."
  (require 'toolspec-http)
  (should (equal (toolspec-http--redact "{\"auth\":\"Bearer k9\"}" '("k9")) "{\"auth\":\"Bearer [redacted]\"}"))
  (should (equal (toolspec-http--redact "token abc, user abcdef" '("abc" "abcdef" "" nil))
                 "token [redacted], user [redacted]")))

(ert-deftest toolspec-generated-circular-plists ()
  "A circular plist is a `toolspec-plist-error' at once, not a loop that allocates."
  ;; In a fresh Emacs with a time and memory bound: a loop fails the
  ;; test instead of the machine.
  (let* ((form `(progn
                  (setq load-path ',load-path toolspec-module-file ,toolspec-module-file)
                  (require 'toolspec)
                  (let ((p (list :name "t" :description "d")))
                    (setcdr (last p) p)
                    (princ (format "RESULT %S" (condition-case err (toolspec-validate p) (error (car err))))))
                  (let ((p (list :name (propertize "t" 'face 'bold) :description "d" :args nil)))
                    (setcar (last p) (list p))
                    (princ (format " %S" (condition-case err (toolspec-validate p) (error (car err))))))))
         (out (with-temp-buffer
                (call-process "sh" nil t nil "-c"
                              "ulimit -v 4000000; exec timeout 60 \"$0\" --batch -Q --eval \"$1\""
                              (expand-file-name invocation-name invocation-directory)
                              (prin1-to-string form))
                (buffer-string))))
    (should (string-match-p "RESULT toolspec-plist-error toolspec-plist-error" out))))

(provide 'toolspec-generated-test)
;;; toolspec-generated-test.el ends here
