;;; compile.el --- Byte- and native-compile toolspec's elisp  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by `make' as: emacs --batch -Q -L lisp -l scripts/compile.el
;; Byte-compiles every lisp/*.el (but the autoloads) next to its source,
;; then, where this Emacs can (`native-comp-available-p'), compiles each
;; to native code in the user's eln-cache, where Emacs looks for it when
;; it loads the .elc.  Exits non-zero when byte-compilation fails; a
;; file native compilation cannot compile is reported and left to the
;; byte code.
;;
;; With the argument "clean" (emacs ... -l scripts/compile.el clean) it
;; deletes instead the native code it made for this checkout's files,
;; every version of it; `make clean' deletes the .elc.

;;; Code:

(require 'bytecomp)
(require 'cl-lib)

;; gptel from .deps/ (`make deps') or from the user's packages.
(let ((deps (expand-file-name ".deps/gptel")))
  (when (file-directory-p deps) (add-to-list 'load-path deps)))
(when (and (not (locate-library "gptel")) (require 'package nil t))
  (package-initialize))
;; Never load a byte-compiled file older than its source.
(setq load-prefer-newer t)

(defvar compile--files
  (cl-remove-if (lambda (f) (string-suffix-p "-autoloads.el" f))
                (directory-files (expand-file-name "lisp") t "\\`toolspec.*\\.el\\'"))
  "The files of lisp/ to compile.")

(defun compile--native-p ()
  "Non-nil when this Emacs can compile to native code."
  (and (fboundp 'native-comp-available-p) (native-comp-available-p)))

(defun compile--eln-pattern (file)
  "A regexp matching the names of every native compilation of FILE.
Their names are FILE's base name, a hash of its absolute name and
one of its contents (see `comp-el-to-eln-rel-filename')."
  (let ((name (file-name-nondirectory (comp-el-to-eln-filename file))))
    (concat "\\`" (regexp-quote (replace-regexp-in-string "-[0-9a-f]+\\.eln\\'" "" name))
            "-[0-9a-f]+\\.eln\\'")))

(defun compile--clean ()
  "Delete the native code compiled from `compile--files', every version."
  (when (compile--native-p)
    (dolist (file compile--files)
      (let ((dir (file-name-directory (comp-el-to-eln-filename file))))
        (when (file-directory-p dir)
          (dolist (eln (directory-files dir t (compile--eln-pattern file)))
            (delete-file eln)
            (message "Deleted %s" eln)))))))

(defun compile--all ()
  "Byte-compile `compile--files', then compile them to native code.
Return the number of files byte-compilation failed on."
  (let ((failures 0))
    (dolist (file compile--files)
      (unless (byte-compile-file file)
        (setq failures (1+ failures))
        (message "compile: byte-compilation of %s failed" file)))
    (if (not (compile--native-p))
        (message "compile: this Emacs has no native compilation; byte code only")
      ;; The previous versions' native code goes first.
      (compile--clean)
      (dolist (file compile--files)
        (condition-case err
            (native-compile file)
          (error (message "compile: %s stays byte code: %s"
                          (file-name-nondirectory file) (error-message-string err))))))
    failures))

(kill-emacs
 (if (equal (car command-line-args-left) "clean")
     (progn (compile--clean) 0)
   (if (> (compile--all) 0) 1 0)))

;;; compile.el ends here
