;;; toolspec-budget-test.el --- Whole-operation budgets, as a user meets them  -*- lexical-binding: t; -*-

;;; Commentary:

;; Files that once crashed Emacs, opened the way a user opens them, in
;; a fresh batch Emacs under a memory limit (`ulimit -v'), so that a
;; regression fails the test instead of taking the machine:
;;
;; - an Emacs Lisp file that doubles a list forty times through its
;;   variables, visited with `toolspec-flymake-mode' on
;;   `emacs-lisp-mode-hook' (as the README recommends): Flymake shows
;;   a "not checked: too large" note;
;; - a JSON file of 1,000 tools each `$ref'-ing one 50,000-property
;;   schema, and an OpenAPI document of 6,000 operations sharing one
;;   1,900-property schema, read with `toolspec-read-file',
;;   `toolspec-import-file', `toolspec-read-openapi',
;;   `toolspec-load-tool-directories' and the JSON Flymake checker:
;;   each ends with a `toolspec-limit-error' naming
;;   `toolspec-max-import-size'.
;;
;; Each time, the child Emacs must go on afterwards and say so.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defconst toolspec-budget-test--root
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name default-directory)))
  "The project's root directory.")

(defvar toolspec-module-file)
(defvar toolspec-tool-directories)
(defvar toolspec-max-import-size)
(declare-function toolspec-read-file "toolspec")
(declare-function toolspec-load-tool-directories "toolspec-gptel")
(declare-function toolspec--mod-last-import-size "toolspec-module")

(defconst toolspec-budget-test--memory (* 1536 1024)
  "The child Emacs's memory limit for a Lisp file, in KiB (`ulimit -v').")

(defconst toolspec-budget-test--import-memory (* 3 1024 1024)
  "The child Emacs's memory limit for the fan-out files, in KiB (`ulimit -v').
Its address space, not what it uses: Emacs with the module and its
threads reserves 1.4 GiB before the first import, and an import within
the default budget (256 MiB) peaks at 0.8 GiB resident.  Without the
budget, the same files took 3 to 10 GiB.")

(defun toolspec-budget-test--emacs (kib &rest forms)
  "Run FORMS in a fresh batch Emacs limited to KIB KiB of memory.
Return (STATUS . OUTPUT)."
  (with-temp-buffer
    (let ((status
           (apply #'call-process "sh" nil t nil "-c" (format "ulimit -v %d && exec \"$0\" \"$@\"" kib)
                  (expand-file-name invocation-name invocation-directory)
                  "--batch" "-Q"
                  "-L" (expand-file-name "lisp" toolspec-budget-test--root)
                  "-L" (expand-file-name ".deps/gptel" toolspec-budget-test--root)
                  "--eval" (prin1-to-string `(setq toolspec-module-file ,toolspec-module-file))
                  (cl-loop for f in forms append (list "--eval" (prin1-to-string f))))))
      (cons status (buffer-string)))))

(defun toolspec-budget-test--write (dir name text)
  "Write TEXT to file NAME in DIR; return its absolute name."
  (let ((file (expand-file-name name dir)))
    (with-temp-file file (insert text))
    file))

(defun toolspec-budget-test--doubling (how n)
  "Emacs Lisp doubling a list N times through variables.
HOW is how: append, list or splice."
  (concat
   ";;; tools.el --- Tools  -*- lexical-binding: t; -*-\n"
   "(setq s0 (list '(:name \"a\" :type string :description \"A\")))\n"
   (mapconcat (lambda (i)
                (let ((p (1- i)))
                  (pcase how
                    ('append (format "(setq s%d (append s%d s%d))\n" i p p))
                    ('list (format "(setq s%d (list s%d s%d s%d s%d))\n" i p p p p))
                    (_ (format "(setq s%d `(,@s%d ,@s%d))\n" i p p)))))
              (number-sequence 1 n) "")
   (format "(gptel-make-tool :name \"boom\" :description \"Boom.\" :function #'ignore :args s%d)\n" n)))

(defun toolspec-budget-test--fan-out-tools (tools props)
  "JSON of TOOLS MCP tools, each `$ref'-ing one schema of PROPS properties."
  (concat "{\"tools\":["
          (mapconcat (lambda (i)
                       (format "{\"name\":\"t%d\",\"description\":\"T.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":\"#/$defs/big\"}}}}" i))
                     (number-sequence 0 (1- tools)) ",")
          "],\"$defs\":{\"big\":{\"type\":\"object\",\"properties\":{"
          (mapconcat (lambda (i) (format "\"p%d\":{\"type\":\"string\"}" i)) (number-sequence 0 (1- props)) ",")
          "}}}}"))

(defun toolspec-budget-test--fan-out-openapi (ops props)
  "An OpenAPI document of OPS operations sharing a schema of PROPS properties."
  (concat "{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"t\",\"version\":\"1\"},\"paths\":{"
          (mapconcat (lambda (i)
                       (format "\"/x%d\":{\"post\":{\"operationId\":\"op%d\",\"requestBody\":{\"content\":{\"application/json\":{\"schema\":{\"$ref\":\"#/components/schemas/Big\"}}}},\"responses\":{\"200\":{\"description\":\"ok\"}}}}" i i))
                     (number-sequence 0 (1- ops)) ",")
          "},\"components\":{\"schemas\":{\"Big\":{\"type\":\"object\",\"properties\":{"
          (mapconcat (lambda (i) (format "\"p%d\":{\"type\":\"string\"}" i)) (number-sequence 0 (1- props)) ",")
          "}}}}}"))

(defmacro toolspec-budget-test--in-dir (dir &rest body)
  "Run BODY with DIR bound to a new temporary directory, deleted afterwards."
  (declare (indent 1))
  `(let ((,dir (make-temp-file "toolspec-budget" t)))
     (unwind-protect (progn ,@body)
       (delete-directory ,dir t))))

(ert-deftest toolspec-budget-flymake-on-a-doubling-lisp-file ()
  "Visiting a Lisp file that doubles a list 40 times: a note, and Emacs goes on."
  (toolspec-budget-test--in-dir dir
    (dolist (how '(append list splice))
      (let* ((file (toolspec-budget-test--write dir (format "%s-tools.el" how)
                                                (toolspec-budget-test--doubling how 40)))
             (r (toolspec-budget-test--emacs
                 toolspec-budget-test--memory
                 '(require 'toolspec-lint)
                 '(add-hook 'emacs-lisp-mode-hook
                            (lambda ()
                              ;; Toolspec's backend alone: no byte-compiling process.
                              (setq-local flymake-diagnostic-functions nil)
                              (toolspec-flymake-mode 1)))
                 `(with-current-buffer (find-file-noselect ,file)
                    (flymake-start)
                    (dolist (d (flymake-diagnostics))
                      (princ (format "DIAG %s %s\n" (flymake-diagnostic-type d) (flymake-diagnostic-text d)))))
                 '(princ "ALIVE\n"))))
        (should (equal (car r) 0))
        (should (string-match-p "DIAG :note not checked: too large" (cdr r)))
        (should (string-match-p "^ALIVE$" (cdr r)))))))

(ert-deftest toolspec-budget-ref-fan-out-files ()
  "Fan-out files end with `toolspec-limit-error' on every way in; Emacs goes on."
  (toolspec-budget-test--in-dir dir
    (let* ((tools (toolspec-budget-test--write dir "fan.json" (toolspec-budget-test--fan-out-tools 1000 50000)))
           (small (toolspec-budget-test--write
                   (progn (make-directory (expand-file-name "small" dir)) (expand-file-name "small" dir))
                   "small.json"
                   (toolspec-budget-test--fan-out-tools 20 2000)))
           (api-dir (expand-file-name "api" dir))
           (api (progn (make-directory api-dir)
                       (toolspec-budget-test--write api-dir "fan-openapi.json"
                                                    (toolspec-budget-test--fan-out-openapi 6000 1900))))
           (r (toolspec-budget-test--emacs
               toolspec-budget-test--import-memory
               '(require 'toolspec-gptel)
               '(require 'toolspec-openapi)
               '(require 'toolspec-ui)
               '(defun try (what f)
                  (condition-case err
                      (progn (funcall f) (princ (format "%s READ\n" what)))
                    (toolspec-limit-error
                     (princ (format "%s LIMIT %s\n" what (error-message-string err))))
                    (error (princ (format "%s OTHER %S\n" what err)))))
               `(try "read-file" (lambda () (toolspec-read-file ,tools)))
               `(try "import-file" (lambda () (toolspec-import-file ,tools)))
               `(try "read-file-openapi" (lambda () (toolspec-read-file ,api)))
               `(try "read-openapi" (lambda () (toolspec-read-openapi ,api)))
               `(try "import-openapi" (lambda () (toolspec-import-file ,api :confirm t)))
               ;; The option is the budget: a smaller file is read
               ;; within the default, not within 1 MiB.
               `(try "small" (lambda () (toolspec-read-file ,small)))
               `(try "lowered" (lambda () (let ((toolspec-max-import-size (* 1024 1024)))
                                            (toolspec-read-file ,small))))
               `(progn
                  (setq toolspec-tool-directories (list ,dir ,api-dir))
                  (let ((warnings nil))
                    (cl-letf (((symbol-function 'display-warning)
                               (lambda (_ msg &rest _) (push msg warnings))))
                      (princ (format "DIRS %s\n" (toolspec-load-tool-directories))))
                    (dolist (w warnings) (princ (format "WARNED %s\n" w)))))
               `(with-current-buffer (find-file-noselect ,tools)
                  (let ((diags nil))
                    (toolspec-flymake (lambda (ds &rest _) (setq diags ds)))
                    (dolist (d (if (listp diags) diags nil))
                      (princ (format "JSONDIAG %s\n" (flymake-diagnostic-text d))))))
               '(princ "ALIVE\n"))))
      (should (equal (car r) 0))
      (dolist (what '("read-file" "import-file" "read-file-openapi" "read-openapi" "import-openapi"))
        (should (string-match-p (format "^%s LIMIT .*toolspec-max-import-size" what) (cdr r))))
      (should (string-match-p "^small READ$" (cdr r)))
      (should (string-match-p "^lowered LIMIT .*more than 1 MiB .*toolspec-max-import-size" (cdr r)))
      (should (string-match-p "^DIRS 0$" (cdr r)))
      (should (= 2 (cl-count-if (lambda (l) (string-match-p "^WARNED Skipped .*toolspec-max-import-size" l))
                                (split-string (cdr r) "\n"))))
      (should (string-match-p "^JSONDIAG .*toolspec-max-import-size" (cdr r)))
      (should (string-match-p "^ALIVE$" (cdr r))))))

(ert-deftest toolspec-budget-tool-directories-share-one-budget ()
  "`toolspec-load-tool-directories' imports its files within one budget."
  (require 'toolspec-gptel)
  (toolspec-budget-test--in-dir dir
    (let* ((text (toolspec-budget-test--fan-out-tools 4 500))
           (a (toolspec-budget-test--write dir "a.json" text))
           (_ (toolspec-budget-test--write dir "b.json" text))
           (one (progn (toolspec-read-file a) (toolspec--mod-last-import-size)))
           (toolspec-tool-directories (list dir))
           (warnings nil))
      (should (> one 100000))
      ;; Asked again, nothing more was used.
      (should (= 0 (toolspec--mod-last-import-size)))
      (cl-letf (((symbol-function 'display-warning) (lambda (_ msg &rest _) (push msg warnings))))
        ;; Room for one file and a half: the second file is skipped.
        (let ((toolspec-max-import-size (/ (* 3 one) 2)))
          (should (= 4 (toolspec-load-tool-directories))))
        (should (= 1 (length warnings)))
        (should (string-match-p "Skipped .*b\\.json: .*toolspec-max-import-size" (car warnings)))
        ;; Room for both.
        (setq warnings nil)
        (let ((toolspec-max-import-size (* 3 one)))
          (should (= 8 (toolspec-load-tool-directories))))
        (should-not warnings)))))

(provide 'toolspec-budget-test)
;;; toolspec-budget-test.el ends here
