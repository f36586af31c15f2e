;;; toolspec-lint.el --- Check gptel-make-tool and llm-make-tool forms in Emacs Lisp -*- lexical-binding: t -*-

;; Copyright (C) 2026 The toolspec authors

;; This file is not part of GNU Emacs.

;; This program is free software: you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; Checks the tool definitions written in Emacs Lisp: `gptel-make-tool'
;; and `llm-make-tool' calls, and the shapes built on them (specs kept in
;; a variable and applied with `apply' in `dolist' or `mapc', `:args'
;; built with `list', quoted or backquoted).  Nothing is evaluated: only
;; literal data is read, and what is computed when the code runs is
;; reported as not checked.  The work is done by the module, in the
;; process: no subprocess, no byte-compilation.
;;
;;   `toolspec-flymake-mode'      marks the problems as you type; enable
;;                                it in every Emacs Lisp buffer with
;;     (add-hook 'emacs-lisp-mode-hook #'toolspec-flymake-mode)
;;   M-x toolspec-check-elisp-file  the problems of a whole file, in a
;;                                compilation buffer for `next-error'
;;
;; The command line's `toolspec check FILE.el' prints the same lines.

;;; Code:

(require 'cl-lib)
(require 'compile)
(require 'toolspec)

(declare-function toolspec--mod-lint-elisp "toolspec-module")
(declare-function flymake-make-diagnostic "flymake")
(declare-function flymake-start "flymake")
(defvar flymake-diagnostic-functions)
(defvar flymake-mode)

(defgroup toolspec-lint nil
  "Checking `gptel-make-tool' forms in Emacs Lisp buffers."
  :group 'toolspec
  :prefix "toolspec-lint-")

(defcustom toolspec-lint-show-notes t
  "Non-nil means show notes: what toolspec could not check.
A note marks a part of a tool definition computed when the code
runs (a variable, a call to a function), which toolspec does not
evaluate and so cannot check."
  :type 'boolean
  :group 'toolspec-lint)

(defun toolspec-lint-string (text)
  "Check the tool definitions in TEXT, Emacs Lisp source.
Return a list of (SEVERITY LINE COLUMN PATH MESSAGE) sorted by
place: SEVERITY is `error', `warning' or `note', LINE and COLUMN
count from 1 (COLUMN in characters), PATH is where in the tool
plist (e.g. \"args[1].type\"), \"\" for the tool itself.  Text
that cannot be read (unbalanced parentheses, `#<...>') is an error
at its place; the forms before it are still checked."
  (toolspec--ensure-module)
  (toolspec--read (toolspec--mod-lint-elisp text)))

(defun toolspec-lint-buffer-problems (&optional buffer)
  "Check the tool definitions in BUFFER, the current buffer by default.
The whole buffer is checked, whatever its narrowing.  Return what
`toolspec-lint-string' returns."
  (with-current-buffer (or buffer (current-buffer))
    (save-restriction
      (widen)
      (toolspec-lint-string (buffer-substring-no-properties (point-min) (point-max))))))

(defun toolspec-lint--shown-p (problem)
  "Non-nil when PROBLEM is to be shown.
Notes are shown when `toolspec-lint-show-notes' is non-nil."
  (or toolspec-lint-show-notes (not (eq (car problem) 'note))))

(defun toolspec-lint--position (line column)
  "Position of LINE and COLUMN (from 1) in the current buffer, widened."
  (save-restriction
    (widen)
    (save-excursion
      (goto-char (point-min))
      (forward-line (1- line))
      (forward-char (max 0 (min (1- column) (- (line-end-position) (point)))))
      (point))))

(defun toolspec-lint--region (line column)
  "The region (BEG . END) to mark for a problem at LINE and COLUMN.
It covers the form there, up to the end of its first line."
  (let ((beg (toolspec-lint--position line column)))
    (save-restriction
      (widen)
      (save-excursion
        (goto-char beg)
        (let ((end (or (ignore-errors
                         (with-syntax-table emacs-lisp-mode-syntax-table
                           (scan-sexps beg 1)))
                       (line-end-position))))
          (cons beg (max (min end (line-end-position))
                         (min (1+ beg) (point-max)))))))))

(defun toolspec-lint--text (problem)
  "The message of PROBLEM as shown: PATH: MESSAGE, or MESSAGE."
  (pcase-let ((`(,_ ,_ ,_ ,path ,message) problem))
    (if (equal path "") message (format "%s: %s" path message))))

;;;; Flymake

(defun toolspec-lint-flymake (report-fn &rest _args)
  "Flymake backend for the tool definitions in an Emacs Lisp buffer.
Report to REPORT-FN, Flymake's callback, the problems of every
`gptel-make-tool' and `llm-make-tool' definition in the buffer.
The check runs in the module, synchronously: it takes
milliseconds."
  (require 'flymake)
  (condition-case err
      (if (not (or (toolspec--module-ready-p) (file-exists-p (toolspec--module-file))))
          ;; Never ask to build the module from a Flymake backend.
          (funcall report-fn :panic
                   :explanation "The toolspec module is not built: M-x toolspec-build-module")
        (funcall report-fn
               (cl-loop
                for problem in (toolspec-lint-buffer-problems)
                when (toolspec-lint--shown-p problem)
                collect (pcase-let* ((`(,severity ,line ,column . ,_) problem)
                                     (`(,beg . ,end) (toolspec-lint--region line column)))
                          (flymake-make-diagnostic
                           (current-buffer) beg end
                           (pcase severity ('error :error) ('warning :warning) (_ :note))
                           (toolspec-lint--text problem))))))
    (error (funcall report-fn :panic :explanation (error-message-string err)))))

(defvar-local toolspec-lint--started-flymake nil
  "Non-nil when `toolspec-flymake-mode' turned Flymake on in this buffer.")

;;;###autoload
(define-minor-mode toolspec-flymake-mode
  "Check the gptel and llm tool definitions of this buffer as you type.
Flymake marks every problem of the `gptel-make-tool' and
`llm-make-tool' forms, and of the specs they are made from: a
quoted \\='string inside an already quoted list, `:enum' written as
a list, `:type \"string\"', an array without `:items', `:required'
naming no property, a function taking the wrong number of
arguments...  Parts computed when the code runs are marked as not
checked (see `toolspec-lint-show-notes').  Nothing is evaluated.

Turning the mode on turns `flymake-mode' on, with the buffer's
other Flymake backends.  To check every Emacs Lisp buffer:

  (add-hook \\='emacs-lisp-mode-hook #\\='toolspec-flymake-mode)"
  :lighter nil
  :group 'toolspec-lint
  (require 'flymake)
  (cond
   (toolspec-flymake-mode
    (add-hook 'flymake-diagnostic-functions #'toolspec-lint-flymake nil t)
    (if flymake-mode
        (flymake-start)
      (setq toolspec-lint--started-flymake t)
      (flymake-mode 1)))
   (t
    (remove-hook 'flymake-diagnostic-functions #'toolspec-lint-flymake t)
    (when flymake-mode
      (if toolspec-lint--started-flymake
          (flymake-mode -1)
        (flymake-start)))
    (setq toolspec-lint--started-flymake nil))))

;;;; Checking a file

(defconst toolspec-lint--line-regexp
  "^\\([^\n]+?\\):\\([0-9]+\\):\\([0-9]+\\): \\(?:error\\|\\(warning\\)\\|\\(note\\)\\): "
  "Regexp matching a problem line of the results buffer.")

(defvar-local toolspec-lint--file nil
  "The file whose problems the results buffer lists.")

(defvar toolspec-lint-results-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'toolspec-lint-recheck)
    map)
  "Keymap of `toolspec-lint-results-mode'.")

(define-derived-mode toolspec-lint-results-mode compilation-mode "toolspec-lint"
  "Major mode of the problems of the tool definitions in an Emacs Lisp file.
Each line is FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE, as the
command line's `toolspec check' prints it; \\[compile-goto-error]
or `next-error' shows the place.

\\{toolspec-lint-results-mode-map}"
  (setq-local compilation-error-regexp-alist '(toolspec-lint))
  (setq-local compilation-error-regexp-alist-alist
              (cons (list 'toolspec-lint toolspec-lint--line-regexp 1 2 3 '(4 . 5))
                    compilation-error-regexp-alist-alist))
  (setq-local compilation-error-screen-columns nil)
  (setq-local compilation-first-column 1))

(defun toolspec-lint-recheck ()
  "Check the file of this list of problems again."
  (interactive nil toolspec-lint-results-mode)
  (if toolspec-lint--file
      (toolspec-check-elisp-file toolspec-lint--file)
    (user-error "No file to check")))

(defun toolspec-lint--file-text (file)
  "The text of FILE: the buffer visiting it, or the file's contents."
  (let ((buffer (find-buffer-visiting file)))
    (if buffer
        (with-current-buffer buffer
          (save-restriction
            (widen)
            (buffer-substring-no-properties (point-min) (point-max))))
      (with-temp-buffer
        (insert-file-contents file)
        (buffer-string)))))

;;;###autoload
(defun toolspec-check-elisp-file (file)
  "Check the gptel and llm tool definitions in FILE, an Emacs Lisp file.
List the problems in buffer *toolspec-lint*, one line each as
FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE, the lines `toolspec
check FILE' prints, so that `next-error' visits them.  SEVERITY is
error, warning or note (what could not be checked, shown as
`toolspec-lint-show-notes' says).  When a buffer visits FILE, its
text is checked, saved or not.  Return the number of errors and
warnings."
  (interactive
   (list (read-file-name "Check tool definitions in file: " nil nil t
                         (and buffer-file-name (file-name-nondirectory buffer-file-name)))))
  (let* ((file (expand-file-name file))
         (problems (cl-remove-if-not #'toolspec-lint--shown-p
                                     (toolspec-lint-string (toolspec-lint--file-text file))))
         (name (file-name-nondirectory file))
         (count (lambda (severity) (cl-count severity problems :key #'car)))
         (out (get-buffer-create "*toolspec-lint*")))
    (with-current-buffer out
      (let ((inhibit-read-only t))
        (toolspec-lint-results-mode)
        (setq default-directory (file-name-directory file))
        (setq toolspec-lint--file file)
        (erase-buffer)
        (insert (format "toolspec: checking %s\n\n" (abbreviate-file-name file)))
        (dolist (problem problems)
          (pcase-let ((`(,severity ,line ,column . ,_) problem))
            (insert (format "%s:%d:%d: %s: %s\n" (toolspec--one-line name) line column severity
                            (toolspec--one-line (toolspec-lint--text problem))))))
        (insert (if problems
                    (format "\n%s, %s, %s\n"
                            (toolspec--plural (funcall count 'error) "error")
                            (toolspec--plural (funcall count 'warning) "warning")
                            (toolspec--plural (funcall count 'note) "note"))
                  "No problems\n"))
        (goto-char (point-min))))
    (setq next-error-last-buffer out)
    (display-buffer out)
    (let ((n (+ (funcall count 'error) (funcall count 'warning))))
      (message "%s in %s" (if (zerop n) "No problems"
                            (toolspec--plural n "problem"))
               name)
      n)))

(provide 'toolspec-lint)
;;; toolspec-lint.el ends here
