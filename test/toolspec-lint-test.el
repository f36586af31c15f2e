;;; toolspec-lint-test.el --- ERT tests of toolspec-lint and the gptel form generator -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; `toolspec-flymake-mode' on Emacs Lisp buffers with the mistakes
;; people make in gptel-make-tool forms (positions and messages of the
;; diagnostics, as the user types), `toolspec-check-elisp-file' and its
;; compilation buffer, and the `gptel-make-tool' text the module
;; generates (stable under `indent-region', read back as the form
;; `toolspec-gptel-form' returns, registering working gptel tools).
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "/path/to/libtoolspec.so")' \
;;     -l test/toolspec-lint-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'flymake)
(require 'compile)
(require 'toolspec-lint)

(defconst toolspec-lint-test--root
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name default-directory)))
  "The project's root directory.")

(defun toolspec-lint-test--file (name)
  "Absolute name of NAME under the project's root."
  (expand-file-name name toolspec-lint-test--root))

(defconst toolspec-lint-test--source
  ";;; my-tools.el --- My gptel tools  -*- lexical-binding: t; -*-

(gptel-make-tool
 :name \"create_file\"
 :function (lambda (path content) (with-temp-file path (insert content)))
 :description \"Create a file\"
 :args (list '(:name \"path\" :type 'string :description \"Where\")
             '(:name \"content\" :type \"string\" :description \"What\")))

(defvar my-specs
  '((:name \"tag_notes\" :description \"Tag notes\"
     :args ((:name \"tags\" :type array :description \"Tags\")
            (:name \"mode\" :type string :enum (\"add\" \"remove\") :description \"Mode\")
            (:name \"filter\" :type object :description \"Which notes\"
             :properties (:folder (:type string :description \"Folder\"))
             :required [\"folder\" \"until\"])))))

(dolist (spec my-specs)
  (apply #'gptel-make-tool :function #'ignore spec))

(gptel-make-tool :name \"later\" :function #'ignore
                 :description (my-describe \"later\")
                 :args nil)
"
  "A tools file with five mistakes and one part computed at run time.")

(defconst toolspec-lint-test--expected
  '((:error 7 35 "'string" "args[0].type: 'string inside an already quoted list")
    (:error 8 38 "\"string\"" "args[1].type: :type must be a symbol: write string")
    (:error 12 13 "(:name \"tags\" :type array :description \"Tags\")" "args[0].items: an array needs :items")
    (:error 13 46 "(\"add\" \"remove\")" "args[1].enum: :enum must be a vector such as [\"add\" \"remove\"]")
    (:error 16 34 "\"until\"" "args[2].required[1]: \"until\" names no key of :properties")
    (:note 22 31 "(my-describe \"later\")" "description: not checked: the value of (my-describe ...)"))
  "What Flymake marks in `toolspec-lint-test--source'.
Each is (TYPE LINE COLUMN MARKED-TEXT MESSAGE-PREFIX).")

(defun toolspec-lint-test--diagnostics ()
  "The current buffer's Flymake diagnostics, as (TYPE LINE COLUMN TEXT MESSAGE)."
  (mapcar (lambda (d)
            (let ((beg (flymake-diagnostic-beg d)))
              (list (flymake-diagnostic-type d)
                    (line-number-at-pos beg)
                    (save-excursion (goto-char beg) (1+ (current-column)))
                    (buffer-substring-no-properties beg (flymake-diagnostic-end d))
                    (flymake-diagnostic-text d))))
          (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b))))))

(defun toolspec-lint-test--matches-p (expected actual)
  "Non-nil when diagnostics ACTUAL match EXPECTED, as in `toolspec-lint-test--expected'."
  (and (= (length expected) (length actual))
       (cl-every (pcase-lambda (`(,type ,line ,col ,text ,prefix) `(,atype ,aline ,acol ,atext ,amessage))
                   (and (eq type atype) (= line aline) (= col acol)
                        (equal text atext) (string-prefix-p prefix amessage)))
                 expected actual)))

(defmacro toolspec-lint-test--with-buffer (text &rest body)
  "Run BODY in an Emacs Lisp buffer holding TEXT, checked by toolspec's backend only."
  (declare (indent 1))
  `(with-temp-buffer
     (emacs-lisp-mode)
     (setq-local flymake-diagnostic-functions nil)
     (insert ,text)
     (unwind-protect
         (progn
           (toolspec-flymake-mode 1)
           (flymake-start)
           ,@body)
       (toolspec-flymake-mode -1))))

;;;; Flymake

(ert-deftest toolspec-lint-flymake-marks-the-usual-mistakes ()
  "Every mistake is marked on its form, with the validator's message."
  (toolspec-lint-test--with-buffer toolspec-lint-test--source
    (should (memq #'toolspec-lint-flymake flymake-diagnostic-functions))
    (should flymake-mode)
    (let ((found (toolspec-lint-test--diagnostics)))
      (should (toolspec-lint-test--matches-p toolspec-lint-test--expected found)))))

(ert-deftest toolspec-lint-flymake-follows-edits ()
  "Fixing a mistake removes its diagnostic; a new one appears where it is typed."
  (toolspec-lint-test--with-buffer toolspec-lint-test--source
    (goto-char (point-min))
    (search-forward ":type \"string\"")
    (replace-match ":type string")
    (flymake-start)
    (let ((found (toolspec-lint-test--diagnostics)))
      (should (= (length found) 5))
      (should-not (cl-find "args[1].type" found :key #'last :test
                           (lambda (p m) (string-prefix-p p (car m))))))
    ;; Typing a typo in a property's type.
    (goto-char (point-min))
    (search-forward "(:folder (:type string")
    (replace-match "(:folder (:type str")
    (flymake-start)
    (let ((typo (cl-find-if (lambda (d) (string-prefix-p "args[2].properties.folder.type" (nth 4 d)))
                            (toolspec-lint-test--diagnostics))))
      (should typo)
      (should (equal (cl-subseq typo 0 4) '(:error 15 42 "str")))
      (should (string-match-p "did you mean `string'" (nth 4 typo))))))

(ert-deftest toolspec-lint-flymake-unbalanced-buffer ()
  "An unclosed form is an error at its start; the forms before it are still checked."
  (toolspec-lint-test--with-buffer
      "(gptel-make-tool :name \"a\" :function #'ignore :description \"A\"\n :args (list '(:name \"x\" :type \"string\" :description \"X\")))\n\n(gptel-make-tool :name \"b\"\n"
    (let ((found (toolspec-lint-test--diagnostics)))
      (should (= (length found) 2))
      (should (equal (cl-subseq (nth 0 found) 0 4) '(:error 2 32 "\"string\"")))
      (should (equal (cl-subseq (nth 1 found) 0 3) '(:error 4 1)))
      (should (string-match-p "never closed" (nth 4 (nth 1 found)))))))

(ert-deftest toolspec-lint-flymake-notes-option ()
  "With `toolspec-lint-show-notes' nil, what could not be checked is not marked."
  (let ((toolspec-lint-show-notes nil))
    (toolspec-lint-test--with-buffer toolspec-lint-test--source
      (let ((found (toolspec-lint-test--diagnostics)))
        (should (= (length found) 5))
        (should-not (assq :note found))))))

(ert-deftest toolspec-lint-flymake-quiet-without-tools ()
  "A buffer without tool definitions, or a narrowed one, gets only what is there."
  (toolspec-lint-test--with-buffer "(defun my-add (a b)\n  \"Add A and B.\"\n  (+ a b ?\\C-a 1+))\n"
    (should-not (flymake-diagnostics)))
  (toolspec-lint-test--with-buffer toolspec-lint-test--source
    (goto-char (point-min))
    (search-forward "(defvar")
    (narrow-to-region (match-beginning 0) (point-max))
    (flymake-start)
    (should (= (length (flymake-diagnostics)) 6))))

(ert-deftest toolspec-lint-flymake-mode-from-the-hook ()
  "The mode is enabled from `emacs-lisp-mode-hook' and undoes what it did."
  (let ((emacs-lisp-mode-hook (list #'toolspec-flymake-mode)))
    (with-temp-buffer
      (emacs-lisp-mode)
      (should toolspec-flymake-mode)
      (should flymake-mode)
      (should (memq #'toolspec-lint-flymake flymake-diagnostic-functions))
      (toolspec-flymake-mode -1)
      (should-not (memq #'toolspec-lint-flymake flymake-diagnostic-functions))
      (should-not flymake-mode)))
  ;; Flymake already on stays on.
  (with-temp-buffer
    (emacs-lisp-mode)
    (setq-local flymake-diagnostic-functions nil)
    (flymake-mode 1)
    (toolspec-flymake-mode 1)
    (toolspec-flymake-mode -1)
    (should flymake-mode)
    (flymake-mode -1)))

(ert-deftest toolspec-lint-string-api ()
  "`toolspec-lint-string' returns (SEVERITY LINE COLUMN PATH MESSAGE)."
  (let ((problems (toolspec-lint-string toolspec-lint-test--source)))
    (should (equal (mapcar (lambda (p) (cl-subseq p 0 4)) problems)
                   '((error 7 35 "args[0].type") (error 8 38 "args[1].type")
                     (error 12 13 "args[0].items") (error 13 46 "args[1].enum")
                     (error 16 34 "args[2].required[1]") (note 22 31 "description"))))
    (should (equal (toolspec-lint-string "") nil))
    (should (eq (car (car (toolspec-lint-string "#.(delete-file \"x\")"))) 'warning))))

(ert-deftest toolspec-lint-flymake-never-asks-to-build ()
  "Without a module, the backend tells Flymake so instead of asking to build one."
  (let ((reports nil))
    (cl-letf (((symbol-function 'toolspec--module-ready-p) #'ignore)
              ((symbol-function 'yes-or-no-p) (lambda (&rest _) (error "Asked"))))
      (let ((toolspec-module-file "/nonexistent/toolspec-module.so"))
        (with-temp-buffer
          (insert toolspec-lint-test--source)
          (toolspec-lint-flymake (lambda (&rest args) (push args reports))))))
    (should (equal (car reports)
                   '(:panic :explanation "The toolspec module is not built: M-x toolspec-build-module")))))

;;;; Checking a file

(defconst toolspec-lint-test--mistakes-lines
  '("mistakes.el:10:35: error: args[0].type: 'string inside an already quoted list reads as (quote string): write string without the quote"
    "mistakes.el:11:39: error: args[1].type: :type must be a symbol: write string, not the string \"string\" (llm rejects strings)"
    "mistakes.el:18:49: error: args[0].enum: :enum must be a vector such as [\"modus-operandi\" \"modus-vivendi\"], found a list"
    "mistakes.el:25:15: error: args[0].items: an array needs :items describing its elements, e.g. :items (:type string)"
    "mistakes.el:31:36: error: args[1].required[1]: \"until\" names no key of :properties (known keys: folder, since)"
    "mistakes.el:34:8: error: name: \"open url\" is not a valid tool name: providers accept ^[a-zA-Z0-9_-]{1,64}$, e.g. \"open_url\""
    "mistakes.el:37:14: error: (:name ...) is evaluated as a function call and fails: quote the plist, '(:name ...), or build it with (list :name ...)"
    "mistakes.el:40:37: error: function: #'my-list-buffers inside a quoted list is the list (function my-list-buffers), which cannot be called: write my-list-buffers without #' there, or build the spec with (list ... :function #'my-list-buffers)"
    "mistakes.el:47:12: error: function: the function takes 1 argument(s) but :args declares 2: gptel passes one value per arg, in order"
    "mistakes.el:48:15: warning: `#.' evaluates the form after it when the file is read; toolspec never evaluates it, so what it gives is not checked: write the value itself")
  "The lines `toolspec-check-elisp-file' lists for test/fixtures/elisp/mistakes.el.")

(defun toolspec-lint-test--result-lines ()
  "The problem lines of buffer *toolspec-lint*."
  (with-current-buffer "*toolspec-lint*"
    (cl-remove-if-not (lambda (l) (string-match-p "\\`[^ :]+:[0-9]+:[0-9]+: " l))
                      (split-string (buffer-string) "\n"))))

(ert-deftest toolspec-lint-check-elisp-file-lines ()
  "The file's problems are listed as compilation lines, in order, and visited."
  (let ((file (toolspec-lint-test--file "test/fixtures/elisp/mistakes.el")))
    (should (= (toolspec-check-elisp-file file) 10))
    (should (equal (toolspec-lint-test--result-lines) toolspec-lint-test--mistakes-lines))
    (with-current-buffer "*toolspec-lint*"
      (should (eq major-mode 'toolspec-lint-results-mode))
      (should (string-prefix-p "toolspec: checking " (buffer-string)))
      (should (string-suffix-p "\n9 errors, 1 warning, 0 notes\n" (buffer-string)))
      ;; RET on the second line shows the place in the file.
      (goto-char (point-min))
      (search-forward "mistakes.el:11:39:")
      (compile-goto-error))
    (with-current-buffer (find-buffer-visiting file)
      (should (= (line-number-at-pos) 11))
      (should (= (current-column) 38))
      (should (looking-at-p "\"string\" :description \"The name of the file"))
      (kill-buffer (current-buffer)))))

(ert-deftest toolspec-lint-check-elisp-file-notes-and-recheck ()
  "Notes are listed as such; `g' checks the file again, as it is now."
  (let ((file (make-temp-file "toolspec-lint-" nil ".el" "(gptel-make-tool :name \"x\" :description (concat \"a\" \"b\") :function #'ignore)\n")))
    (unwind-protect
        (progn
          (should (= (toolspec-check-elisp-file file) 0))
          (should (equal (toolspec-lint-test--result-lines)
                         (list (format "%s:1:41: note: description: not checked: the value of (concat ...) is known only when the code runs"
                                       (file-name-nondirectory file)))))
          (with-current-buffer "*toolspec-lint*"
            (should (string-suffix-p "\n0 errors, 0 warnings, 1 note\n" (buffer-string))))
          (with-temp-file file (insert "(gptel-make-tool :name \"x\" :description \"d\" :function #'ignore)\n"))
          (with-current-buffer "*toolspec-lint*" (toolspec-lint-recheck))
          (should-not (toolspec-lint-test--result-lines))
          (with-current-buffer "*toolspec-lint*"
            (should (string-suffix-p "\nNo problems\n" (buffer-string)))))
      (delete-file file))))

(ert-deftest toolspec-lint-check-elisp-file-same-as-command-line ()
  "`toolspec check' prints the lines `toolspec-check-elisp-file' lists."
  (let ((binary (toolspec-lint-test--file "target/debug/toolspec")))
    (skip-unless (file-executable-p binary))
    (dolist (name '("mistakes.el" "collections.el" "runtime.el" "clean-tools.el"))
      (let ((default-directory (toolspec-lint-test--file "test/fixtures/elisp/")))
        (toolspec-check-elisp-file name)
        (should (equal (toolspec-lint-test--result-lines)
                       (split-string (with-output-to-string
                                       (call-process binary nil standard-output nil "check" name))
                                     "\n" t)))))))

;;;; The gptel-make-tool text

(defun toolspec-lint-test--indented-p (text)
  "Non-nil when TEXT is as `indent-region' leaves Emacs Lisp."
  (with-temp-buffer
    (emacs-lisp-mode)
    (setq indent-tabs-mode nil)
    (insert text)
    (indent-region (point-min) (point-max))
    (equal (buffer-string) text)))

(defconst toolspec-lint-test--awkward-tool
  `(:name "plan_trip"
    :description "Plan a trip.\nSay where and when; the planner does the rest."
    :args ((:name "destinations" :type array
            :items (:type object
                    :properties (:city (:type string :description "City, with its country if ambiguous")
                                 :nights (:type integer :minimum 1 :maximum 30 :description "Nights there")
                                 :tags (:type array :items (:type string :enum ["museums" "food" "hiking" "beaches" "nightlife" "shopping" "architecture"])))
                    :required ["city" "nights"])
            :description "Stops in order")
           (:name "budget" :type number :description "Total budget in euros" :optional t)
           (:name "mode" :type string
            :enum ["train" "plane" "car" "bus" "ferry" "bicycle" "on foot" "rideshare" "motorbike" "sailboat"]
            :description "How to travel, \"train\" preferred" :optional t)))
  "A tool whose form needs every kind of line break.")

(ert-deftest toolspec-lint-gptel-form-text-layout ()
  "The text puts one key per line and is stable under `indent-region'."
  (let ((text (toolspec-gptel-form-text toolspec-lint-test--awkward-tool '#'my-plan-trip "travel")))
    (should (string-prefix-p "(gptel-make-tool\n :name \"plan_trip\"\n :function #'my-plan-trip\n :description \"Plan a trip.\nSay where"
                             text))
    (should (string-match-p "^ :category \"travel\"\n :args (list '(:name \"destinations\"\n" text))
    (should (string-match-p "^             '(:name \"budget\"\n                     :type number\n" text))
    (should (string-match-p (concat "^                     :enum \\[\"train\" \"plane\" \"car\" \"bus\" \"ferry\" \"bicycle\"\n"
                                    "                            \"on foot\" \"rideshare\" \"motorbike\" \"sailboat\"\\]$")
                            text))
    (should (toolspec-lint-test--indented-p text))
    (let ((form (car (read-from-string text))))
      (should (equal form (toolspec-gptel-form toolspec-lint-test--awkward-tool '#'my-plan-trip "travel")))
      (should (equal (cadr (plist-get (cdr form) :args)) (list 'quote (car (plist-get toolspec-lint-test--awkward-tool :args))))))))

(ert-deftest toolspec-lint-gptel-form-text-of-every-example ()
  "Every example tool's text is stable, reads back, and makes the same gptel tool."
  (require 'gptel)
  (let ((gptel--known-tools nil))
    (dolist (file (directory-files (toolspec-lint-test--file "examples") t "\\.json\\'"))
      (dolist (tool (toolspec-read-file file))
        (let* ((text (toolspec-gptel-form-text tool '#'ignore nil t))
               (forms (with-temp-buffer
                        (insert text)
                        (goto-char (point-min))
                        (let (forms)
                          (condition-case nil (while t (push (read (current-buffer)) forms))
                            (end-of-file nil))
                          forms))))
          (should (toolspec-lint-test--indented-p text))
          (should (= (length forms) 1))
          (let ((made (eval (car forms) t)))
            (should (equal (toolspec--plist made)
                           (toolspec--plist (apply #'gptel-make-tool :function #'ignore tool))))))))))

(ert-deftest toolspec-lint-gptel-form-comments ()
  "With comments, the text says what to define and lists the problems."
  (let ((text (toolspec-gptel-form-text '(:name "t" :description "T" :args ((:name "q" :type "string" :description "Q")))
                                        '#'my-t nil t)))
    (should (string-prefix-p ";; t: define `my-t', e.g.\n;;   (defun my-t (q)\n;;     ...)\n;; error: args[0].type: :type must be a symbol" text))
    (should (toolspec-lint-test--indented-p text))))

(provide 'toolspec-lint-test)
;;; toolspec-lint-test.el ends here
