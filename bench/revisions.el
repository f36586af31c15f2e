;;; revisions.el --- One revision of toolspec timed on one catalog -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by scripts/bench-revisions.sh, in a batch Emacs whose `load-path'
;; has one revision's byte-compiled lisp/ and gptel, with
;; `toolspec-module-file' that revision's release module.  Times, on
;; the catalog named by TOOLSPEC_REV_CATALOG, the cases of
;; bench/bench.el whose figures the catalog moves: its import
;; (`toolspec-parse-json' of its text), the same with
;; `gc-cons-percentage' 0.1 as in an interactive Emacs (import-gc), its
;; import and registration (`toolspec-import-file'), the same for the
;; catalog twice over, TOOLSPEC_REV_CATALOG_2X (register-2x), and the
;; first export of its registered tools to OpenAI JSON.  Prints one
;; line, the medians in milliseconds:
;;
;;   import 12.3 import-gc 30.1 register 45.6 register-2x 90.2 export 17.8
;;
;; A case the revision cannot do (an older reader refusing the
;; catalog) prints `failed' with the reason instead of its time.

;;; Code:

(require 'cl-lib)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'gptel)

(defvar toolspec-rev-file (getenv "TOOLSPEC_REV_CATALOG")
  "The catalog timed.")

(defvar toolspec-rev-file-2x (getenv "TOOLSPEC_REV_CATALOG_2X")
  "The catalog twice over, under other names.")

(defun toolspec-rev--median (thunk n)
  "Return the median time of THUNK in seconds, timed N times.
Each call comes after a garbage collection; one call first is not
timed."
  (funcall thunk)
  (let (times)
    (dotimes (_ n)
      (garbage-collect)
      (let ((t0 (float-time)))
        (funcall thunk)
        (push (- (float-time) t0) times)))
    (nth (/ n 2) (sort times #'<))))

(defun toolspec-rev--case (name thunk n)
  "Return NAME and the median milliseconds of THUNK, or why it failed.
N is how many calls of THUNK are timed."
  (condition-case err
      (format "%s %.2f" name (* 1000 (toolspec-rev--median thunk n)))
    (error (format "%s failed: %s" name (error-message-string err)))))

(defun toolspec-rev--register (file)
  "A function importing and registering FILE as a first import does.
The registry of sources (named otherwise in older revisions) is bound
empty for each call."
  (lambda ()
    (let ((gptel--known-tools nil) (gptel-tools nil)
          (registries (cl-remove-if-not
                       #'boundp '(toolspec-gptel--registered toolspec--registered))))
      (cl-progv registries
          (mapcar (lambda (_) (make-hash-table :test #'equal)) registries)
        (toolspec-import-file file)))))

(defun toolspec-rev-run-and-exit ()
  "Time the cases on `toolspec-rev-file', print their line and exit."
  (toolspec--ensure-module)
  (let* ((inhibit-message t)
         (text (with-temp-buffer
                 (let ((coding-system-for-read 'utf-8))
                   (insert-file-contents toolspec-rev-file))
                 (buffer-string)))
         (import (toolspec-rev--case "import" (lambda () (toolspec-parse-json text)) 15))
         (import-gc (toolspec-rev--case
                     "import-gc"
                     (lambda () (let ((gc-cons-percentage 0.1)) (toolspec-parse-json text)))
                     15))
         (register (toolspec-rev--case "register" (toolspec-rev--register toolspec-rev-file) 11))
         (register-2x (toolspec-rev--case "register-2x" (toolspec-rev--register toolspec-rev-file-2x) 7))
         (export (condition-case err
                     (let* ((gptel--known-tools nil)
                            (tools (toolspec-register (toolspec-parse-json text) :category "bench")))
                       (toolspec-rev--case "export"
                                           (lambda ()
                                             (clrhash toolspec--export-cache)
                                             (toolspec-tools-to-json tools 'openai))
                                           15))
                   (error (format "export failed: %s" (error-message-string err))))))
    (princ (format "%s\n%s\n%s\n%s\n%s\n" import import-gc register register-2x export))
    (kill-emacs 0)))

(provide 'revisions)
;;; revisions.el ends here
