;;; demo.el --- Show toolspec's conversions on the example specs  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by `make demo' as: emacs --batch -Q -L lisp -l scripts/demo.el
;; For every file in examples/: the tool plists toolspec reads, their
;; registration with gptel (when gptel is in .deps/), any problems, and
;; the JSON each provider would receive.

;;; Code:

(require 'toolspec)
(require 'pp)

(defvar demo--gptel
  (let ((dir (expand-file-name ".deps/gptel")))
    (when (file-exists-p (expand-file-name "gptel.el" dir))
      (add-to-list 'load-path dir)
      (require 'gptel)
      t))
  "Non-nil when the real gptel is loaded.")

(defun demo--rule (title)
  "Print a heading TITLE."
  (princ (format "\n%s\n%s\n" title (make-string (length title) ?-))))

(dolist (file (directory-files (expand-file-name "examples") t "\\.json\\'"))
  (princ (format "\n\n==== %s ====\n" (file-relative-name file)))
  (let ((tools (toolspec-read-file file)))
    (when toolspec-last-import-warnings
      (demo--rule "Import notes")
      (dolist (w toolspec-last-import-warnings)
        (princ (format "  %s\n" (toolspec-format-problem w)))))
    (dolist (tool tools)
      (demo--rule (format "Tool %s: plist for gptel-make-tool / llm-make-tool" (plist-get tool :name)))
      (princ (pp-to-string tool))
      (let ((problems (toolspec-validate tool)))
        (princ (if problems
                   (mapconcat (lambda (p) (concat "  " (toolspec-format-problem p))) problems "\n")
                 "  no problems"))
        (terpri))
      (demo--rule "Registration")
      (let ((form (toolspec-gptel-form (copy-tree tool) nil "toolspec-demo")))
        (princ (toolspec-gptel-form-text tool nil "toolspec-demo"))
        (if demo--gptel
            (let ((registered (eval form t)))
              (princ (format ";; registered with gptel %s: (gptel-get-tool %S) => %s\n"
                             gptel-version (plist-get tool :name)
                             (if (eq (gptel-get-tool (plist-get tool :name)) registered)
                                 "the tool" "MISSING"))))
          (princ ";; (gptel is not installed here: `make deps' fetches it)\n")))
      (demo--rule "JSON each provider receives")
      (dolist (dialect (toolspec-dialects))
        (princ (format "%-17s %s\n" dialect (toolspec-to-json tool dialect)))))))

(princ "\nDone: every example read, validated, registered and written in every dialect.\n")
;;; demo.el ends here
