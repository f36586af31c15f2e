;;; lint.el --- Byte-compile and checkdoc toolspec's elisp  -*- lexical-binding: t -*-

;;; Commentary:

;; Run as: emacs --batch -Q -L lisp -l scripts/lint.el
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
  ;; Byte-compilation, warnings as errors, into a temporary directory.
  (let ((byte-compile-error-on-warn t)
        (byte-compile-dest-file-function
         (lambda (f) (expand-file-name (concat (file-name-nondirectory f) "c") lint--elc-directory))))
    (dolist (f files)
      (unless (byte-compile-file f)
        (setq lint--failures (1+ lint--failures))
        (message "lint: byte-compilation of %s failed" f))))
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
