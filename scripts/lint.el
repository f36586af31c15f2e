;;; lint.el --- Byte-compile and checkdoc toolspec's elisp  -*- lexical-binding: t -*-

;;; Commentary:

;; Run as: emacs --batch -Q -L lisp -l scripts/lint.el
;; (with --eval '(setq lint-emacs "PROGRAM")' first when this Emacs is
;; started by a script: each file is compiled by PROGRAM, alone)
;; Exits non-zero when byte-compilation warns or checkdoc complains, or
;; when two forms of lisp/ define the same option, variable, function,
;; face or group.  The byte code goes to a temporary directory: the
;; .elc `make' wrote beside the sources are left alone, and never
;; loaded when older than their source.

;;; Code:

(require 'checkdoc)
(require 'cl-lib)
(require 'bytecomp)

(defvar lint--failures 0 "Number of problems found.")

(setq load-prefer-newer t)

(defvar lint--elc-directory (make-temp-file "toolspec-lint" t)
  "Where byte-compilation writes, deleted at the end.")

(defconst lint--definers
  '((defcustom . variable) (defvar . variable) (defvar-local . variable)
    (defconst . variable) (define-minor-mode . function) (defun . function)
    (defmacro . function) (cl-defun . function) (cl-defmacro . function)
    (cl-defgeneric . function) (defalias . function) (defsubst . function)
    (defface . face) (defgroup . group))
  "Forms that define a name, and the namespace they define it in.
A `defvar' without a value only declares: it does not count.")

(defun lint--definitions (file)
  "The definitions of FILE's top-level forms: a list of (NAMESPACE NAME LINE)."
  (with-temp-buffer
    (insert-file-contents file)
    (goto-char (point-min))
    (let ((found nil))
      (condition-case nil
          (while t
            (let* ((start (progn (forward-comment (buffer-size)) (point)))
                   (form (read (current-buffer)))
                   (space (cdr (assq (car-safe form) lint--definers)))
                   (name (nth 1 form)))
              (when (eq (car-safe name) 'quote) (setq name (nth 1 name)))
              (when (and space (symbolp name)
                         (not (and (eq (car form) 'defvar) (< (length form) 3))))
                (push (list space name (line-number-at-pos start)) found))))
        (end-of-file nil))
      (nreverse found))))

(defvar lint-emacs (expand-file-name invocation-name invocation-directory)
  "The Emacs that compiles each file: by default, this one's program.
Set it to the command this Emacs was started with when that is a
script around the program (the Emacs 28 of scripts/run-tests.sh).")

(defun lint--compile-alone (file)
  "Byte-compile FILE, warnings as errors, in a new batch Emacs; non-nil if clean.
The new Emacs is `lint-emacs', with this one's `load-path',
`compat' when this one loaded it (Emacs 28), and the module file
this one was given.  Its output is shown when it fails."
  (let* ((setup `(progn (setq load-path ',load-path load-prefer-newer t
                               byte-compile-error-on-warn t
                               byte-compile-dest-file-function
                               (lambda (f) (expand-file-name (concat (file-name-nondirectory f) "c")
                                                             ,lint--elc-directory)))
                        ,@(and (boundp 'toolspec-module-file)
                               `((setq toolspec-module-file ,toolspec-module-file)))))
         (args (append (list "--batch" "-Q" "--eval" (prin1-to-string setup))
                       (and (featurep 'compat) (list "-l" "compat"))
                       (list "-f" "batch-byte-compile" file))))
    (with-temp-buffer
      (let ((status (apply #'call-process lint-emacs nil t nil args)))
        (or (eql status 0)
            (progn (message "%s" (string-trim-right (buffer-string))) nil))))))

(let ((files (cl-remove-if (lambda (f) (string-suffix-p "-autoloads.el" f))
                           (directory-files (expand-file-name "lisp") t "\\.el\\'"))))
  ;; One definition per name and namespace, in all of lisp/.
  (let ((seen (make-hash-table :test 'equal)))
    (dolist (f files)
      (pcase-dolist (`(,space ,name ,line) (lint--definitions f))
        (let ((here (format "%s:%d" (file-name-nondirectory f) line)))
          (if-let* ((first (gethash (cons space name) seen)))
              (progn (setq lint--failures (1+ lint--failures))
                     (message "lint: %s: %s %s is defined again (first at %s)" here space name first))
            (puthash (cons space name) here seen))))))
  ;; Byte-compilation, warnings as errors, into a temporary directory:
  ;; each file in an Emacs of its own, as a package manager may compile
  ;; it.  Compiled one after the other in this Emacs, a file is compiled
  ;; with what the files before it loaded, which hides a variable used
  ;; before the file defines it.
  (dolist (f files)
    (unless (lint--compile-alone f)
      (setq lint--failures (1+ lint--failures))
      (message "lint: byte-compilation of %s failed" f)))
  (delete-directory lint--elc-directory t)
  ;; checkdoc, collecting its diagnostics.
  (dolist (f files)
    (with-current-buffer (find-file-noselect f)
      (let ((checkdoc-autofix-flag 'never)
            (checkdoc-diagnostic-buffer "*lint-checkdoc*"))
        (checkdoc-current-buffer t))))
  (when (get-buffer "*lint-checkdoc*")
    (with-current-buffer "*lint-checkdoc*"
      (goto-char (point-min))
      (while (re-search-forward "^.*\\.el:[0-9]+: .*$" nil t)
        (setq lint--failures (1+ lint--failures))
        (message "checkdoc: %s" (match-string 0))))))

(kill-emacs (if (> lint--failures 0) 1 0))
;;; lint.el ends here
