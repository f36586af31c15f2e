;;; lint.el --- Byte-compile and checkdoc toolspec's elisp  -*- lexical-binding: t -*-

;;; Commentary:

;; Run as: emacs --batch -Q -L lisp -l scripts/lint.el
;; Exits non-zero when byte-compilation warns or checkdoc complains.

;;; Code:

(require 'checkdoc)
(require 'cl-lib)
(require 'bytecomp)

(defvar lint--failures 0 "Number of problems found.")

(let ((files (cl-remove-if (lambda (f) (string-suffix-p "-autoloads.el" f))
                           (directory-files (expand-file-name "lisp") t "\\.el\\'"))))
  ;; Byte-compilation, warnings as errors.
  (let ((byte-compile-error-on-warn t))
    (dolist (f files)
      (unless (byte-compile-file f)
        (setq lint--failures (1+ lint--failures))
        (message "lint: byte-compilation of %s failed" f))
      (let ((elc (concat f "c")))
        (when (file-exists-p elc) (delete-file elc)))))
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
