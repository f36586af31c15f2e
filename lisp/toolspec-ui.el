;;; toolspec-ui.el --- Commands to import, inspect, check and export LLM tools -*- lexical-binding: t -*-

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

;; The interactive side of toolspec:
;;
;;   M-x toolspec-import-file     preview the tools of a JSON file, then
;;   M-x toolspec-import-buffer   register them with gptel (C-c C-c) or
;;   M-x toolspec-import-region   cancel (q); RET on a problem shows it
;;                                in the JSON
;;   M-x toolspec-describe-tool   a registered gptel tool: arguments,
;;                                problems, the JSON of every dialect
;;   M-x toolspec-validate-buffer problems of the JSON spec in the buffer,
;;                                in a compilation buffer (`next-error')
;;   M-x toolspec-export          registered tools -> JSON file or buffer
;;   M-x toolspec-insert-gptel-form  JSON at point -> (gptel-make-tool ...)
;;
;; `toolspec-flymake-setup' checks JSON spec buffers as you type.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'button)
(require 'help-mode)
(require 'compile)
(require 'toolspec)
(require 'toolspec-gptel)

(declare-function toolspec--mod-locate "toolspec-module")
(declare-function toolspec--mod-locate-many "toolspec-module")
(declare-function toolspec--mod-parse-json "toolspec-module")
(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-category "ext:gptel-request")
(declare-function gptel-tool-async "ext:gptel-request")
(declare-function gptel-tool-confirm "ext:gptel-request")
(declare-function gptel-tool-function "ext:gptel-request")
(declare-function gptel-tool-p "ext:gptel-request")
(declare-function json-pretty-print-buffer "json")
(declare-function toolspec-http-credential-hosts "toolspec-http")
(declare-function toolspec-http-describe "toolspec-http")
(declare-function flymake-make-diagnostic "flymake")
(declare-function custom-file "cus-edit")
(defvar gptel--known-tools)
(defvar flymake-diagnostic-functions)

;;;; Options

(defgroup toolspec-ui nil
  "Import previews, tool descriptions and checks of JSON buffers."
  :group 'toolspec)

(defcustom toolspec-preview-progress-threshold 50
  "Show a progress reporter when previewing more tools than this."
  :type 'natnum
  :group 'toolspec-ui)

(defcustom toolspec-placeholder-function-format "my-%s-function"
  "Name of the placeholder function `toolspec-insert-gptel-form' writes.
%s stands for the tool's name, its underscores turned into hyphens."
  :type 'string
  :group 'toolspec-ui)

(defface toolspec-tool-name
  '((t :inherit font-lock-function-name-face :weight bold))
  "Face of tool names in toolspec's buffers."
  :group 'toolspec-ui)

(defface toolspec-problem-error
  '((t :inherit error))
  "Face of errors in toolspec's buffers."
  :group 'toolspec-ui)

(defface toolspec-problem-warning
  '((t :inherit warning))
  "Face of warnings in toolspec's buffers."
  :group 'toolspec-ui)

(defface toolspec-heading
  '((t :inherit bold))
  "Face of headings in toolspec's buffers."
  :group 'toolspec-ui)

;;;; Where JSON comes from

(defconst toolspec-ui--json-syntax-table
  (let ((st (make-syntax-table)))
    (modify-syntax-entry ?\{ "(}" st)
    (modify-syntax-entry ?\} "){" st)
    (modify-syntax-entry ?\[ "(]" st)
    (modify-syntax-entry ?\] ")[" st)
    (modify-syntax-entry ?\( "." st)
    (modify-syntax-entry ?\) "." st)
    (modify-syntax-entry ?\" "\"" st)
    (modify-syntax-entry ?\\ "\\" st)
    (modify-syntax-entry ?' "." st)
    (modify-syntax-entry ?\; "." st)
    st)
  "Syntax table reading JSON: brackets and braces nest, strings use \".")

(cl-defstruct (toolspec-ui--source (:constructor toolspec-ui--source-create)
                                   (:copier nil))
  "Where JSON tool definitions come from: a file or part of a buffer."
  file buffer start end text spans)

(defun toolspec-ui--file-source (file)
  "A source for the JSON file FILE."
  (toolspec-ui--source-create :file (expand-file-name file)))

(defun toolspec-ui--buffer-source (buffer &optional start end)
  "A source for BUFFER's text between START and END.
START and END default to the accessible portion of BUFFER."
  (with-current-buffer buffer
    (let ((start (copy-marker (or start (point-min))))
          (end (copy-marker (or end (point-max)) t)))
      (toolspec-ui--source-create
       :buffer buffer :start start :end end
       :text (buffer-substring-no-properties start end)))))

(defun toolspec-ui--source-refresh (source)
  "Read SOURCE's text again, as it is now."
  (if (toolspec-ui--source-buffer source)
      (progn
        (unless (buffer-live-p (toolspec-ui--source-buffer source))
          (user-error "The buffer the tools came from has been killed"))
        (with-current-buffer (toolspec-ui--source-buffer source)
          (setf (toolspec-ui--source-text source)
                (buffer-substring-no-properties (toolspec-ui--source-start source)
                                                (toolspec-ui--source-end source)))))
    (setf (toolspec-ui--source-text source) nil))
  (setf (toolspec-ui--source-spans source) nil)
  source)

(defun toolspec-ui--source-id (source)
  "The name SOURCE is registered under: its file name or buffer name."
  (or (toolspec-ui--source-file source)
      (buffer-name (toolspec-ui--source-buffer source))))

(defun toolspec-ui--source-label (source)
  "A short name of SOURCE for messages."
  (if (toolspec-ui--source-file source)
      (abbreviate-file-name (toolspec-ui--source-file source))
    (buffer-name (toolspec-ui--source-buffer source))))

(defun toolspec-ui--source-string (source)
  "The JSON text of SOURCE, read once."
  (or (toolspec-ui--source-text source)
      (setf (toolspec-ui--source-text source)
            (with-temp-buffer
              (let ((coding-system-for-read 'utf-8))
                (insert-file-contents (toolspec-ui--source-file source)))
              (buffer-string)))))

(defun toolspec-ui--parse-text (text &optional format name strict)
  "Parse JSON TEXT in FORMAT; NAME names a bare JSON Schema without title.
STRICT non-nil refuses TEXT when one tool in it cannot be read."
  (toolspec--ensure-module)
  (toolspec--import
   (toolspec--mod-parse-json text (toolspec--name format nil) name toolspec-max-input-size t strict)))

(defun toolspec-ui--source-default-name (source)
  "The name of a bare JSON Schema in SOURCE that has no title, or nil."
  (let ((file (or (toolspec-ui--source-file source)
                  (buffer-file-name (toolspec-ui--source-buffer source)))))
    (and file (file-name-base file))))

(defun toolspec-ui--source-read (source &optional format options)
  "Read the tools of SOURCE in FORMAT: return (TOOLS WARNINGS PATHS PROBLEMS).
PROBLEMS has the problems of each tool, found as it was read.
OPTIONS are import options: their OpenAPI selection keys select the
operations of an OpenAPI file.  Signals a `toolspec-error' when
SOURCE holds no valid definitions."
  (let ((tools (if (toolspec-ui--source-file source)
                   (toolspec-openapi--read-file-for-import (toolspec-ui--source-file source)
                                                           (append (list :format format) options))
                 (toolspec-ui--parse-text (toolspec-ui--source-text source) format
                                          (toolspec-ui--source-default-name source)
                                          (plist-get options :strict)))))
    (list tools toolspec-last-import-warnings toolspec-last-import-paths
          toolspec-last-import-problems)))

;;;; Positions

(defun toolspec-ui--locate (source path)
  "Line and column, as (LINE . COLUMN), of JSON PATH in SOURCE's text."
  (toolspec--ensure-module)
  (toolspec--mod-locate (toolspec-ui--source-string source) path))

(defun toolspec-ui--source-position (source line column)
  "Where LINE and COLUMN of SOURCE's text are: (BUFFER . POSITION).
LINE and COLUMN count from 1; a file source is visited."
  (let ((buffer (or (toolspec-ui--source-buffer source)
                    (find-file-noselect (toolspec-ui--source-file source)))))
    (with-current-buffer buffer
      (save-restriction
        (widen)
        (save-excursion
          (goto-char (or (toolspec-ui--source-start source) (point-min)))
          ;; (forward-line 0) would leave a region's first line.
          (when (> line 1) (forward-line (1- line)))
          (forward-char (max 0 (min (1- column) (- (line-end-position) (point)))))
          (cons buffer (point)))))))

(defun toolspec-ui--goto (source line column)
  "Show LINE and COLUMN of SOURCE's text in a window and move there."
  (pcase-let ((`(,buffer . ,pos) (toolspec-ui--source-position source line column)))
    (pop-to-buffer buffer)
    (unless (<= (point-min) pos (point-max)) (widen))
    (unless (= (point) pos) (push-mark (point) t))
    (goto-char pos)))

(defun toolspec-ui--path-join (&rest step-list)
  "Return a JSON path: the non-empty strings of STEP-LIST joined by dots."
  (mapconcat #'identity (delete "" (delq nil step-list)) "."))

(defun toolspec-ui--path-parent (path)
  "PATH without its last step (a key or an index)."
  (if (string-match "\\`\\(.*\\)\\(?:\\.[^.]*\\|\\[[0-9]+\\]\\)\\'" path)
      (match-string 1 path)
    ""))

(defun toolspec-ui--path-found-p (text path)
  "Non-nil when JSON PATH exists in TEXT."
  (or (equal path "")
      (not (equal (toolspec--mod-locate text path)
                  (toolspec--mod-locate text (toolspec-ui--path-parent path))))))

(defun toolspec-ui--path-prefix-p (prefix path)
  "Non-nil when JSON path PREFIX is PATH or one of its ancestors."
  (or (equal prefix "")
      (equal prefix path)
      (and (string-prefix-p prefix path)
           (memq (aref path (length prefix)) '(?. ?\[)))))

(defconst toolspec-ui--schema-keys
  '("function.parameters" "parameters" "input_schema" "inputSchema"
    "toolSpec.inputSchema.json" "")
  "Where the formats keep a tool's parameter schema, relative to the tool.")

(defun toolspec-ui--problem-json-path (text tool tool-path path)
  "The JSON path in TEXT of problem PATH, a path in the plist TOOL.
TOOL was read from TOOL-PATH.  Best effort: an argument's problem
maps into its property in the parameter schema, a tool key to the
key; otherwise the tool itself."
  (toolspec--ensure-module)
  (or
   (when (string-match "\\`args\\(?:\\[\\([0-9]+\\)\\]\\)?\\.?" path)
     (let* ((index (and (match-beginning 1) (string-to-number (match-string 1 path))))
            (rest (substring path (match-end 0)))
            (name (and index (plist-get (nth index (plist-get tool :args)) :name))))
       (cl-loop for key in toolspec-ui--schema-keys
                for schema = (toolspec-ui--path-join tool-path key)
                for props = (toolspec-ui--path-join schema "properties")
                if (and index (stringp name)
                        (toolspec-ui--path-found-p text (toolspec-ui--path-join props name)))
                return (toolspec-ui--path-join props name rest)
                else if (and (null index) (toolspec-ui--path-found-p text props))
                return schema)))
   (when (string-match "\\`[^.[]+" path)
     (let ((key (match-string 0 path))
           (rest (substring path (match-end 0))))
       (cl-loop for prefix in '("" "function" "toolSpec")
                for found = (cl-loop for k in (if (equal key "name") '("name" "title") (list key))
                                     for p = (toolspec-ui--path-join tool-path prefix k)
                                     when (toolspec-ui--path-found-p text p) return p)
                when found return (concat found rest))))
   tool-path))

;;;; Problems of imported tools

(defun toolspec-ui--tool-problems (tools warnings paths &optional doing problems)
  "Problems of TOOLS, read with import WARNINGS from PATHS.
Return (ENTRIES . GENERAL): ENTRIES a list of plists (:tool :path
:problems), one per tool, GENERAL the import warnings of no tool.
A problem is (SEVERITY PATH MESSAGE JSON-P), PATH a JSON path when
JSON-P, else a path in the tool plist.  DOING, a verb such as
\"Previewing\", is shown in a progress report when there are more
tools than `toolspec-preview-progress-threshold'.  PROBLEMS, when
it has one element per tool, holds what `toolspec-validate' says of
each (the module finds them as it reads); otherwise each tool is
validated here."
  (let* ((count (length tools))
         (given (and (= (length problems) count) problems))
         (reporter (and doing (> count toolspec-preview-progress-threshold)
                        (make-progress-reporter (format "%s %d tools..." doing count) 0 count)))
         (entries (cl-loop for tool in tools
                           for path in (append paths (make-list (max 0 (- count (length paths))) ""))
                           for i from 1
                           collect (list :tool tool :path path
                                         :problems (mapcar (lambda (p) (append p (list nil)))
                                                           (if given (pop given) (toolspec-validate tool))))
                           do (when reporter (progress-reporter-update reporter i))))
         (by-path (make-hash-table :test 'equal))
         general)
    (when reporter (progress-reporter-done reporter))
    ;; The owner of a warning is the tool at the longest path that is the
    ;; warning's path or an ancestor of it: look each ancestor up.
    (dolist (e entries)
      (unless (gethash (plist-get e :path) by-path)
        (puthash (plist-get e :path) e by-path)))
    (dolist (w warnings)
      (let* ((path (nth 1 w))
             (owner (or (gethash path by-path)
                        (cl-loop for i downfrom (1- (length path)) to 1
                                 thereis (and (memq (aref path i) '(?. ?\[))
                                              (gethash (substring path 0 i) by-path)))
                        (gethash "" by-path))))
        (if owner
            (plist-put owner :problems (append (plist-get owner :problems) (list (append w (list t)))))
          (push (append w (list t)) general))))
    (cons entries (nreverse general))))

(defun toolspec-ui--text-position (line column)
  "Position of LINE and COLUMN (from 1) in the current buffer."
  (goto-char (point-min))
  (forward-line (1- line))
  (toolspec-ui--column-position column))

(defun toolspec-ui--column-position (column)
  "Position of COLUMN (from 1) on the current line, at most its end."
  (+ (point) (max 0 (min (1- column) (- (line-end-position) (point))))))

(defun toolspec-ui--text-positions (places)
  "Positions in the current buffer of PLACES, a vector of (LINE . COLUMN).
The lines are found in one pass down the buffer, whatever their
order in PLACES, not each from its beginning."
  (let ((out (make-vector (length places) nil))
        (line 1))
    (goto-char (point-min))
    (dolist (i (sort (number-sequence 0 (1- (length places)))
                     (lambda (a b) (< (car (aref places a)) (car (aref places b))))))
      (pcase-let ((`(,l . ,c) (aref places i)))
        (when (> l line)
          (setq line (- l (forward-line (- l line)))))
        (aset out i (toolspec-ui--column-position c))))
    out))

(defun toolspec-ui--newlines (from to)
  "The number of newlines in the current buffer between FROM and TO."
  (if (>= from to)
      0
    (- (count-lines from to)
       (if (save-excursion (goto-char to) (bolp)) 0 1))))

(defun toolspec-ui--span-at (start line)
  "The JSON value at START, on LINE, in the current buffer: (LINE COLUMN TEXT)."
  (save-excursion
    (goto-char start)
    (list line
          (1+ (- start (line-beginning-position)))
          (buffer-substring-no-properties
           start (or (ignore-errors (scan-sexps start 1)) (point-max))))))

(defun toolspec-ui--compute-spans (source paths)
  "Find the tools at JSON PATHS in SOURCE's text, for `toolspec-ui--tool-span'.
Every array or object holding them is found in one pass over the
text, and the tools in one array in one pass over it, so that a file
of thousands of tools is not scanned once per tool."
  (let ((text (toolspec-ui--source-string source))
        (table (or (toolspec-ui--source-spans source)
                   (setf (toolspec-ui--source-spans source) (make-hash-table :test 'equal))))
        (by-parent (make-hash-table :test 'equal))
        (groups nil))
    (dolist (path paths)
      (unless (gethash path table)
        (let ((parent path) (index nil))
          (when (string-match "\\`\\(.*\\)\\[\\([0-9]+\\)\\]\\'" path)
            (setq parent (match-string 1 path)
                  index (string-to-number (match-string 2 path))))
          (let ((group (or (gethash parent by-parent)
                           (car (push (puthash parent (list parent) by-parent) groups)))))
            (setcdr group (cons (cons index path) (cdr group)))))))
    (when groups
      (toolspec--ensure-module)
      (let ((places (toolspec--mod-locate-many text (vconcat (mapcar #'car groups)))))
        (with-temp-buffer
          (insert text)
          (set-syntax-table toolspec-ui--json-syntax-table)
          (cl-loop
           for (_parent . members) in groups
           for start across (toolspec-ui--text-positions places)
           for place across places
           do (let ((i 0)
                    ;; The last place found in the array, and its line.
                    (here start) (line (car place)))
                (goto-char start)
                (dolist (m (sort members (lambda (a b) (< (or (car a) -1) (or (car b) -1)))))
                  (pcase-let ((`(,index . ,path) m))
                    (puthash
                     path
                     (cond
                      ((null index) (toolspec-ui--span-at start line))
                      ((and (eq (char-after start) ?\[)
                            (ignore-errors
                              (when (= i 0) (goto-char (1+ start)))
                              (while (< i index)
                                (skip-chars-forward " \t\r\n")
                                (goto-char (scan-sexps (point) 1))
                                (skip-chars-forward " \t\r\n")
                                (if (eq (char-after) ?,) (forward-char 1) (error "No element %d" index))
                                (setq i (1+ i)))
                              (skip-chars-forward " \t\r\n")
                              (setq line (+ line (toolspec-ui--newlines here (point))) here (point))
                              (toolspec-ui--span-at (point) line))))
                      (t (save-excursion
                           (let ((lc (toolspec--mod-locate text path)))
                             (toolspec-ui--span-at (toolspec-ui--text-position (car lc) (cdr lc)) (car lc))))))
                     table))))))))))

(defun toolspec-ui--tool-span (source path)
  "Where the tool at JSON PATH is in SOURCE's text: (LINE COLUMN TEXT).
LINE and COLUMN are those of its start, TEXT its JSON."
  (or (and (toolspec-ui--source-spans source) (gethash path (toolspec-ui--source-spans source)))
      (progn (toolspec-ui--compute-spans source (list path))
             (gethash path (toolspec-ui--source-spans source)))))

(defun toolspec-ui--relative-path (prefix path)
  "JSON PATH relative to its ancestor PREFIX."
  (let ((rest (substring path (length prefix))))
    (if (string-prefix-p "." rest) (substring rest 1) rest)))

(defun toolspec-ui--problem-place (source entry problem)
  "The (LINE . COLUMN) in SOURCE's text of PROBLEM of ENTRY.
ENTRY is nil for a problem of no tool; PROBLEM nil means the tool."
  (toolspec--ensure-module)
  (if (null entry)
      (toolspec-ui--locate source (nth 1 problem))
    (pcase-let* ((tool-path (plist-get entry :path))
                 (`(,line ,column ,text) (toolspec-ui--tool-span source tool-path))
                 (path (cond ((null problem) "")
                             ((nth 3 problem) (toolspec-ui--relative-path tool-path (nth 1 problem)))
                             (t (toolspec-ui--problem-json-path text (plist-get entry :tool) "" (nth 1 problem)))))
                 (`(,l . ,c) (toolspec--mod-locate text path)))
      (if (= l 1)
          (cons line (+ column c -1))
        (cons (+ line l -1) c)))))

(defun toolspec-ui--error-position (source err)
  "The (LINE . COLUMN) in SOURCE of toolspec error ERR, or nil."
  (let ((details (toolspec-error-details err)))
    (cond ((and (plist-get details :line) (plist-get details :column))
           (cons (plist-get details :line) (plist-get details :column)))
          ((stringp (plist-get details :path))
           (ignore-errors (toolspec-ui--locate source (plist-get details :path)))))))

(defun toolspec-ui--report-read-error (source err)
  "Show where toolspec error ERR, from reading SOURCE, is, then signal it.
The place, if the error has one, is shown in the JSON; the error
becomes a `user-error' naming the place."
  (let ((pos (toolspec-ui--error-position source err))
        (title (or (get (car err) 'error-message) "toolspec error")))
    (if (not pos)
        (user-error "%s: %s: %s" title (toolspec-ui--source-label source) (toolspec--error-text err))
      (toolspec-ui--goto source (car pos) (cdr pos))
      (user-error "%s: %s" title
                  (toolspec-ui--located source (car pos) (cdr pos) (toolspec--error-text err))))))

(defun toolspec-ui--absolute-line-column (source line column)
  "LINE and COLUMN of SOURCE's text as (LINE . COLUMN) in its buffer or file."
  (if (toolspec-ui--source-buffer source)
      (pcase-let ((`(,buffer . ,pos) (toolspec-ui--source-position source line column)))
        (with-current-buffer buffer
          (save-restriction
            (widen)
            (save-excursion
              (goto-char pos)
              (cons (line-number-at-pos) (1+ (- pos (line-beginning-position))))))))
    (cons line column)))

(defun toolspec-ui--located (source line column message)
  "MESSAGE prefixed with SOURCE:LINE:COLUMN, the place in SOURCE's file or buffer."
  (pcase-let ((`(,l . ,c) (toolspec-ui--absolute-line-column source line column)))
    (format "%s:%d:%d: %s" (toolspec-ui--source-label source) l c message)))

(defun toolspec-ui--read-or-report (source &optional format options)
  "Read SOURCE in FORMAT with OPTIONS as `toolspec-ui--source-read' does.
A toolspec error is shown at its place and becomes a `user-error'."
  (condition-case err
      (toolspec-ui--source-read source format options)
    (toolspec-error (toolspec-ui--report-read-error source err))))

;;;; Import preview

(defvar-local toolspec-ui--preview nil
  "The import this buffer previews: a plist.
Keys: `:source', `:options', `:entries' and `:general' (see
`toolspec-ui--tool-problems'), `:category'.")

(defvar toolspec-import-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'toolspec-import-register)
    (define-key map "y" #'toolspec-import-register)
    (define-key map "a" #'toolspec-import-register-and-activate)
    (define-key map "b" #'toolspec-import-bind)
    (define-key map (kbd "C-c C-k") #'toolspec-import-cancel)
    (define-key map "q" #'toolspec-import-cancel)
    (define-key map (kbd "RET") #'toolspec-import-visit)
    (define-key map "n" #'toolspec-import-next-tool)
    (define-key map "p" #'toolspec-import-previous-tool)
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    map)
  "Keymap of `toolspec-import-mode'.")

(define-derived-mode toolspec-import-mode special-mode "toolspec-import"
  "Major mode of the buffer previewing an import of JSON tool definitions.
It lists each tool with its arguments, the function it would be
bound to, and its problems.  Nothing is registered until you say so.

\\{toolspec-import-mode-map}"
  (setq-local revert-buffer-function #'toolspec-ui--import-revert)
  (setq-local truncate-lines nil))

(define-button-type 'toolspec-problem
  'follow-link t
  'action #'toolspec-ui--problem-button-action
  'help-echo "mouse-2, RET: show this problem in the JSON")

(defun toolspec-ui--binding-text (tool options)
  "How TOOL would be bound under import OPTIONS, as text."
  (condition-case err
      (let* ((resolver nil)
             (toolspec-function-resolvers
              (mapcar (lambda (r)
                        (lambda (tool options)
                          (let ((found (funcall r tool options)))
                            (when (and found (not resolver)) (setq resolver r))
                            found)))
                      toolspec-function-resolvers))
             (binding (toolspec-gptel--resolve tool options)))
        (if (not (plist-get binding :bound))
            (format "unbound (returns an error to the model): %s binds it"
                    (toolspec-ui--keys 'toolspec-import-bind))
          (let ((f (plist-get binding :function)))
            (concat (cond ((and (symbolp f) f) (format "%s" f))
                          ((toolspec-ui--executor-text tool options))
                          (t "a function"))
                    (and (plist-get binding :async) ", async")
                    (and (plist-get binding :confirm) ", asks first")
                    (and resolver (format " (from %s)" (toolspec-ui--resolver-text resolver)))
                    (and (plist-get binding :unscoped)
                         ": its entry names no :source, so a tool of this name from any file gets it")))))
    (error (format "cannot be bound: %s" (error-message-string err)))))

(defun toolspec-ui--resolver-text (resolver)
  "Return the origin of the binding RESOLVER gave, as text."
  (pcase resolver
    ('toolspec-resolve-from-options "the :functions import option")
    ('toolspec-resolve-from-alist "`toolspec-function-alist'")
    ('toolspec-resolve-executor "the tool file")
    (_ (format "%s" resolver))))

(defun toolspec-ui--executor-text (tool options)
  "Return how TOOL is run, in one line, or nil when unknown.
OPTIONS are the import options."
  (when-let* ((exec (plist-get tool :executor)))
    (pcase (format "%s" (plist-get exec :type))
      ("openapi"
       (require 'toolspec-http)
       (let ((d (toolspec-http-describe tool options)))
         (format "HTTP %s %s, auth: %s" (plist-get d :method) (plist-get d :url) (plist-get d :auth))))
      ("arcade"
       (format "Arcade worker %s"
               (or (plist-get options :worker) (bound-and-true-p toolspec-arcade-worker) "(none set)")))
      ("gloodata"
       (format "Gloodata extension %s" (or (plist-get options :endpoint) (plist-get exec :endpoint) "(none)")))
      (type (format "%s tool" type)))))

(defun toolspec-ui--type-text (spec)
  "The type of argument or schema SPEC as short text."
  (let ((type (plist-get spec :type)))
    (cond ((and (member type '(array "array")) (plist-get (plist-get spec :items) :type))
           (format "array of %s" (toolspec-ui--type-text (plist-get spec :items))))
          ((vectorp type) (mapconcat (lambda (x) (format "%s" x)) type "|"))
          (type (format "%s%s" type (if (plist-get spec :nullable) "|null" "")))
          ((plist-get spec :anyOf) "anyOf")
          (t "?"))))

(defun toolspec-ui--args-text (tool)
  "TOOL's arguments as NAME:TYPE, optional ones marked."
  (if-let* ((args (plist-get tool :args)))
      (mapconcat (lambda (arg)
                   (format "%s:%s%s" (plist-get arg :name) (toolspec-ui--type-text arg)
                           (if (plist-get arg :optional) " (optional)" "")))
                 args ", ")
    "none"))

(defun toolspec-ui--first-line (text)
  "The first line of TEXT, shortened to fit a line."
  (if (stringp text)
      (truncate-string-to-width (car (split-string text "\n")) 100 nil nil "...")
    "(no description)"))

(defun toolspec-ui--insert-problem (entry problem)
  "Insert PROBLEM of ENTRY as a button leading to it in the JSON."
  (insert "  ")
  (insert-text-button
   (toolspec-format-problem (butlast problem))
   'type 'toolspec-problem
   'face (if (eq (car problem) 'error) 'toolspec-problem-error 'toolspec-problem-warning)
   'toolspec-entry entry
   'toolspec-problem problem)
  (insert "\n"))

(defun toolspec-ui--count-problems (preview severity)
  "How many problems of SEVERITY PREVIEW has."
  (+ (cl-count severity (plist-get preview :general) :key #'car)
     (cl-loop for e in (plist-get preview :entries)
              sum (cl-count severity (plist-get e :problems) :key #'car))))

(defun toolspec-ui--keys (command)
  "The keys of COMMAND in the preview, as text."
  (propertize (mapconcat #'key-description
                         (where-is-internal command toolspec-import-mode-map)
                         " or ")
              'face 'help-key-binding))

(defun toolspec-ui--render-preview ()
  "Fill the preview buffer from `toolspec-ui--preview'."
  (let* ((inhibit-read-only t)
         (preview toolspec-ui--preview)
         (entries (plist-get preview :entries))
         (source (plist-get preview :source)))
    (erase-buffer)
    (insert (propertize "Tools from " 'face 'toolspec-heading)
            (propertize (toolspec-ui--source-label source) 'face 'toolspec-heading)
            (format "  (gptel category \"%s\")\n" (plist-get preview :category)))
    (insert (format "%s, %s, %s\n"
                    (toolspec--plural (length entries) "tool")
                    (toolspec--plural (toolspec-ui--count-problems preview 'error) "error")
                    (toolspec--plural (toolspec-ui--count-problems preview 'warning) "warning")))
    ;; The errors of no tool are tool definitions that could not be read.
    (let ((left-out (cl-count 'error (plist-get preview :general) :key #'car)))
      (when (> left-out 0)
        (insert (format "%s could not be read and %s left out: the errors below say where\n"
                        (toolspec--plural left-out "tool definition")
                        (if (= left-out 1) "is" "are")))))
    (dolist (severity '(error warning))
      (when-let* ((kinds (toolspec--problem-kinds
                          (cons (plist-get preview :general)
                                (mapcar (lambda (e) (plist-get e :problems)) entries))
                          severity)))
        (insert (format "  %ss by kind: %s\n" severity kinds))))
    (insert (format "%s: register   %s: register and activate (add to `gptel-tools')   %s: bind the tool at point\n"
                    (toolspec-ui--keys 'toolspec-import-register)
                    (toolspec-ui--keys 'toolspec-import-register-and-activate)
                    (toolspec-ui--keys 'toolspec-import-bind)))
    (insert (format "%s: cancel   %s/%s: next/previous tool   %s: show in the JSON\n"
                    (toolspec-ui--keys 'toolspec-import-cancel)
                    (toolspec-ui--keys 'toolspec-import-next-tool)
                    (toolspec-ui--keys 'toolspec-import-previous-tool)
                    (toolspec-ui--keys 'toolspec-import-visit)))
    (dolist (c (plist-get preview :credentials))
      (pcase-let ((`(,host ,title ,approved) c))
        (insert (propertize "credential: " 'face 'toolspec-heading)
                (format "API %S would send the auth-source credential for %s%s\n"
                        title (propertize host 'face 'toolspec-tool-name)
                        (if approved
                            " (approved by the import options)"
                          (format ": you are asked when you register (%s)"
                                  (toolspec-ui--keys 'toolspec-import-register)))))))
    (dolist (p (plist-get preview :general))
      (toolspec-ui--insert-problem nil p))
    (dolist (entry entries)
      (let ((tool (plist-get entry :tool))
            (start (point)))
        (insert "\n")
        (insert (propertize (format "%s" (plist-get tool :name))
                            'face 'toolspec-tool-name 'toolspec-heading t)
                "\n")
        (insert "  " (toolspec-ui--first-line (plist-get tool :description)) "\n")
        (insert "  args:    " (toolspec-ui--args-text tool) "\n")
        (insert "  binding: " (plist-get entry :binding) "\n")
        (put-text-property start (point) 'toolspec-entry entry)
        (dolist (p (plist-get entry :problems))
          (toolspec-ui--insert-problem entry p))))
    (goto-char (point-min))
    (toolspec-import-next-tool 1 t)))

(defun toolspec-ui--preview-data (source options)
  "Read SOURCE and work out what importing it with OPTIONS would do.
Return the plist kept in `toolspec-ui--preview'."
  (pcase-let* ((`(,tools ,warnings ,paths ,problems)
                (toolspec-ui--read-or-report source (plist-get options :format) options))
               (`(,entries . ,general) (toolspec-ui--tool-problems tools warnings paths "Previewing" problems)))
    (dolist (e entries)
      ;; As `toolspec-import-file' takes them: a name providers refuse
      ;; is registered under a valid one.
      (plist-put e :problems (toolspec-gptel--unless-renamed (plist-get e :tool) (plist-get e :problems)))
      (plist-put e :binding (toolspec-ui--binding-text
                             (plist-get e :tool)
                             ;; As `toolspec-import-register' will bind it.
                             (append (list :source (toolspec-ui--source-id source)) options))))
    (list :source source :options options :entries entries :general general
          :credentials (toolspec-ui--preview-credentials source tools options)
          :category (or (plist-get options :category)
                        (toolspec-openapi-category tools)
                        (file-name-base (toolspec-ui--source-id source))))))

(defun toolspec-ui--preview-credentials (source tools options)
  "The credentials TOOLS of SOURCE would use, imported with OPTIONS.
See `toolspec-http-credential-hosts'."
  (when (cl-some (lambda (tool)
                   (equal (format "%s" (plist-get (plist-get tool :executor) :type)) "openapi"))
                 tools)
    (require 'toolspec-http)
    (toolspec-http-credential-hosts
     tools (append (list :source (toolspec-ui--source-id source)) options))))

(defun toolspec-ui--approve-credentials (preview)
  "The import options of PREVIEW, with the credentials the user approves.
Each credential the previewed tools would use, and the options do not
approve, is asked about; the hosts approved join `:credentials'."
  (let* ((options (plist-get preview :options))
         (given (plist-get options :credentials))
         (hosts (if (stringp given) (list given) given)))
    (dolist (c (plist-get preview :credentials))
      (pcase-let ((`(,host ,title ,approved) c))
        (when (and (not approved)
                   (y-or-n-p (format "Let the tools of API %S send your auth-source credential for %s? "
                                     title host)))
          (setq hosts (append hosts (list host))))))
    (if hosts
        (append (list :credentials hosts)
                (cl-loop for (k v) on options by #'cddr
                         unless (eq k :credentials) append (list k v)))
      options)))

(defun toolspec-ui--preview (source options)
  "Show the tools of SOURCE, to be imported with OPTIONS; return the buffer."
  (let ((data (toolspec-ui--preview-data source options))
        (buffer (get-buffer-create "*toolspec-import*")))
    (with-current-buffer buffer
      (toolspec-import-mode)
      (setq toolspec-ui--preview data)
      (toolspec-ui--render-preview))
    (pop-to-buffer buffer)
    (message "%s: %s registers them, %s cancels"
             (toolspec--plural (length (plist-get data :entries)) "tool")
             (toolspec-ui--keys 'toolspec-import-register)
             (toolspec-ui--keys 'toolspec-import-cancel))
    buffer))

(defun toolspec-ui--preview-file (file options)
  "Preview FILE's tools, to be registered with OPTIONS; return the buffer.
This is `toolspec-import-file' with `:preview'."
  (toolspec-ui--preview (toolspec-ui--file-source file)
                        (cl-loop for (k v) on options by #'cddr
                                 unless (eq k :preview) append (list k v))))

(defun toolspec-ui--import-revert (&rest _)
  "Read the previewed JSON again and show it afresh."
  (let ((data toolspec-ui--preview))
    (setq toolspec-ui--preview
          (toolspec-ui--preview-data (toolspec-ui--source-refresh (plist-get data :source))
                                     (plist-get data :options)))
    (toolspec-ui--render-preview)))

;;;###autoload
(defun toolspec-import-buffer (&optional buffer)
  "Preview the JSON tool definitions in BUFFER, then register them.
BUFFER defaults to the current buffer (its accessible portion).
The preview lists every tool with its problems; there,
\\<toolspec-import-mode-map>\\[toolspec-import-register] registers them with gptel under the buffer's name."
  (interactive)
  (toolspec-ui--preview (toolspec-ui--buffer-source (or buffer (current-buffer))) nil))

;;;###autoload
(defun toolspec-import-region (start end)
  "Preview the JSON tool definitions between START and END, then register them.
Interactively, the region.  See `toolspec-import-buffer'."
  (interactive "r")
  (toolspec-ui--preview (toolspec-ui--buffer-source (current-buffer) start end) nil))

(defun toolspec-import-register (&optional activate)
  "Register the previewed tools with gptel and close the preview.
Tools with errors are left out, after asking; with the import's
`:strict' option, or when every tool has errors, nothing is
registered: fix the JSON and reload the preview with
\\<toolspec-import-mode-map>\\[revert-buffer].  With ACTIVATE non-nil, or
`toolspec-activate-tools', the tools are made active too (see
`toolspec-import-register-and-activate')."
  (interactive nil toolspec-import-mode)
  (unless toolspec-ui--preview (user-error "Not in an import preview"))
  (let* ((preview toolspec-ui--preview)
         (source (plist-get preview :source))
         (entries (plist-get preview :entries))
         (good (cl-remove-if (lambda (e) (assq 'error (plist-get e :problems))) entries))
         (broken (- (length entries) (length good)))
         (category (plist-get preview :category))
         (reload (substitute-command-keys "\\<toolspec-import-mode-map>\\[revert-buffer]")))
    (when (> broken 0)
      (let ((have (if (= broken 1) "1 tool has" (format "%d tools have" broken))))
        (cond ((or (null good) (plist-get (plist-get preview :options) :strict))
               (user-error "Nothing registered: %s errors; fix the JSON, then reload with %s"
                           have reload))
              ((not (y-or-n-p (format "%s errors and will be left out; register the other %s? "
                                      have (toolspec--plural (length good) "tool"))))
               (user-error "Nothing registered: fix the JSON, then reload with %s" reload)))))
    (let* ((activate (or activate toolspec-activate-tools))
           (made (apply #'toolspec-register
                        (mapcar (lambda (e) (plist-get e :tool)) good)
                        :source (toolspec-ui--source-id source)
                        :category category
                        :activate activate
                        (toolspec-ui--approve-credentials preview))))
      (quit-window t)
      (message "%s registered in category %s%s%s" (toolspec--plural (length made) "tool") category
               (if (> broken 0) (format " (%d left out)" broken) "")
               (if activate
                   ", and active: gptel offers them to the model"
                 (substitute-command-keys
                  ", not active yet: pick them in `gptel-menu' (Tools), or register with \\<toolspec-import-mode-map>\\[toolspec-import-register-and-activate] next time")))
      made)))

(defun toolspec-import-register-and-activate ()
  "Register the previewed tools with gptel and make them active.
Active tools are in `gptel-tools': gptel offers them to the model in
every request, as if picked in `gptel-menu'.  The option
`toolspec-activate-tools' makes every registration do this."
  (interactive nil toolspec-import-mode)
  (toolspec-import-register t))

(defun toolspec-ui--function-candidates ()
  "Names of the functions of this Emacs, for completion."
  (let ((names nil))
    (mapatoms (lambda (s) (when (and (fboundp s) (not (keywordp s))) (push (symbol-name s) names))))
    names))

(defun toolspec-import-bind (function &optional save)
  "Bind the tool at point in the preview to FUNCTION.
FUNCTION gets the tool's arguments in order, checked against its
schema.  The binding is an entry (NAME FUNCTION :source SOURCE) of
`toolspec-function-alist', for this tool of this file only; SAVE
non-nil (interactively, asked) saves the option with
`customize-save-variable', so that it holds in later sessions."
  (interactive
   (let ((entry (get-text-property (point) 'toolspec-entry)))
     (unless entry (user-error "No tool here: move to a tool (%s) first"
                               (toolspec-ui--keys 'toolspec-import-next-tool)))
     (let* ((name (plist-get (plist-get entry :tool) :name))
            (fn (intern (completing-read (format "Function running tool %s: " name)
                                         (toolspec-ui--function-candidates) nil t))))
       (list fn (y-or-n-p (format "Save the binding of %s to %s for later sessions (in your custom file)? "
                                  name fn)))))
   toolspec-import-mode)
  (require 'cus-edit)
  (let* ((entry (or (get-text-property (point) 'toolspec-entry)
                    (user-error "No tool here")))
         (name (plist-get (plist-get entry :tool) :name))
         (source (toolspec-ui--source-id (plist-get toolspec-ui--preview :source)))
         (line (line-number-at-pos))
         (kept (cl-remove-if (lambda (e)
                               (and (consp e) (equal (car e) name) (consp (cdr e))
                                    (equal (plist-get (cddr e) :source) source)))
                             toolspec-function-alist))
         (value (append kept (list (list name function :source source)))))
    (if (and save (custom-file t))
        (customize-save-variable 'toolspec-function-alist value)
      (customize-set-variable 'toolspec-function-alist value))
    (toolspec-ui--import-revert)
    (goto-char (point-min))
    (forward-line (1- line))
    (message "Tool %s bound to %s%s" name function
             (cond ((not save) " for this session")
                   ((custom-file t) (format " (saved in %s)" (abbreviate-file-name (custom-file t))))
                   (t " for this session: Emacs started with -q has no custom file to save it in")))))

(defun toolspec-import-cancel ()
  "Close the import preview without registering anything.
When its tools could be registered, ask first."
  (interactive nil toolspec-import-mode)
  (let ((entries (plist-get toolspec-ui--preview :entries)))
    (when (and entries
               (not (cl-some (lambda (e) (assq 'error (plist-get e :problems))) entries))
               (not (y-or-n-p (format "Discard %s without registering %s? "
                                      (toolspec--plural (length entries) "tool")
                                      (if (cdr entries) "them" "it")))))
      (user-error "Nothing discarded: %s registers the tools"
                  (toolspec-ui--keys 'toolspec-import-register))))
  (quit-window t)
  (message "Import cancelled: nothing registered"))

(defun toolspec-import-next-tool (&optional n quiet)
  "Move to the N-th next tool in the preview (previous if N is negative).
QUIET non-nil means say nothing when there is none."
  (interactive "p" toolspec-import-mode)
  (let* ((n (or n 1))
         (step (if (< n 0) -1 1))
         (count (abs n))
         (target nil))
    (save-excursion
      (beginning-of-line)
      (while (and (> count 0) (zerop (forward-line step)))
        (when (get-text-property (point) 'toolspec-heading)
          (setq target (point) count (1- count)))))
    (cond (target (goto-char target))
          ((not quiet) (user-error "No %s tool" (if (> step 0) "next" "previous"))))))

(defun toolspec-import-previous-tool (&optional n)
  "Move back N tools in the preview."
  (interactive "p" toolspec-import-mode)
  (toolspec-import-next-tool (- (or n 1))))

(defun toolspec-ui--visit (entry problem)
  "Show PROBLEM of ENTRY, or ENTRY's tool when PROBLEM is nil, in the JSON."
  (let* ((source (plist-get toolspec-ui--preview :source))
         (pos (toolspec-ui--problem-place source entry problem)))
    (toolspec-ui--goto source (car pos) (cdr pos))))

(defun toolspec-ui--problem-button-action (button)
  "Show the problem of BUTTON in the JSON."
  (toolspec-ui--visit (button-get button 'toolspec-entry) (button-get button 'toolspec-problem)))

(defun toolspec-import-visit ()
  "Show the problem or the tool at point in the JSON it came from."
  (interactive nil toolspec-import-mode)
  (let ((problem (get-text-property (point) 'toolspec-problem))
        (entry (get-text-property (point) 'toolspec-entry)))
    (if (or problem entry)
        (toolspec-ui--visit entry problem)
      (user-error "No tool or problem here"))))

;;;; Describing a registered tool

(defun toolspec-ui--tool-candidates ()
  "Alist (\"CATEGORY/NAME\" . TOOL) of the tools gptel knows.
They come in the order they were registered in."
  (toolspec-gptel--require-gptel)
  (cl-loop for (category . tools) in (reverse gptel--known-tools)
           append (cl-loop for (name . tool) in (reverse tools)
                           collect (cons (format "%s/%s" category name) tool))))

(defun toolspec-ui--find-tool (tool)
  "TOOL, a gptel tool, \"CATEGORY/NAME\" or a tool name, as a gptel tool."
  (toolspec-gptel--require-gptel)
  (cond ((gptel-tool-p tool) tool)
        ((cdr (assoc tool (toolspec-ui--tool-candidates))))
        ((and (stringp tool) (ignore-errors (toolspec-gptel--as-tool tool))))
        (t (user-error "No gptel tool %s" tool))))

(defun toolspec-ui--read-tool (prompt)
  "Read a registered gptel tool with PROMPT; return \"CATEGORY/NAME\"."
  (let ((candidates (toolspec-ui--tool-candidates)))
    (unless candidates (user-error "No tools are registered with gptel yet"))
    (completing-read prompt candidates nil t)))

(defun toolspec-ui--arg-rows (args prefix required)
  "Rows (NAME TYPE REQUIRED DESCRIPTION) of ARGS, nested ones under PREFIX.
REQUIRED is a vector naming the required keys, or t when ARGS are
top-level arguments (required unless `:optional')."
  (cl-loop for arg in args
           for name = (concat prefix (format "%s" (plist-get arg :name)))
           for req = (if (eq required t)
                         (not (plist-get arg :optional))
                       (seq-contains-p required (plist-get arg :name)))
           for enum = (plist-get arg :enum)
           collect (list name (toolspec-ui--type-text arg) (if req "required" "optional")
                         (concat (or (plist-get arg :description) "")
                                 (if enum
                                     (format " (one of %s)"
                                             (mapconcat (lambda (v) (format "%S" v)) enum ", "))
                                   "")))
           append (when-let* ((props (plist-get arg :properties)))
                    (toolspec-ui--arg-rows
                     (cl-loop for (k v) on props by #'cddr
                              collect (append (list :name (substring (symbol-name k) 1)) v))
                     (concat name ".")
                     (or (plist-get arg :required) [])))))

(defun toolspec-ui--insert-table (header rows)
  "Insert ROWS, lists of strings, as a table under HEADER."
  (let* ((all (cons header rows))
         (widths (cl-loop for i below (1- (length header))
                          collect (apply #'max (mapcar (lambda (r) (string-width (nth i r))) all)))))
    (dolist (row all)
      (insert "  ")
      (cl-loop for cell in row
               for i from 0
               do (insert (if (nth i widths)
                              (concat cell (make-string (- (+ 2 (nth i widths)) (string-width cell)) ?\s))
                            cell)))
      (when (eq row header)
        (put-text-property (line-beginning-position) (point) 'face 'toolspec-heading))
      (insert "\n"))))

(defun toolspec-ui--pretty-json (json)
  "JSON text indented."
  (with-temp-buffer
    (insert json)
    (require 'json)
    (json-pretty-print-buffer)
    (buffer-string)))

(defun toolspec-ui--registered-source (tool)
  "The source toolspec registered TOOL, a gptel tool, from; nil if none."
  (let ((key (cons (gptel-tool-category tool) (gptel-tool-name tool))))
    (catch 'found
      (maphash (lambda (source entries)
                 (when (cl-some (lambda (e) (or (eq e tool) (equal e key))) entries)
                   (throw 'found source)))
               toolspec-gptel--registered)
      nil)))

;;;###autoload
(defun toolspec-describe-tool (tool)
  "Describe TOOL, a tool registered with gptel.
Show its description, arguments, problems and the JSON each
dialect in `toolspec-dialects' would receive.  TOOL is a
`gptel-tool', a \"CATEGORY/NAME\" string or a tool name;
interactively, ask for \"CATEGORY/NAME\"."
  (interactive (list (toolspec-ui--read-tool "Describe tool: ")))
  (let* ((struct (toolspec-ui--find-tool tool))
         (plist (toolspec--plist struct))
         (name (gptel-tool-name struct))
         (category (gptel-tool-category struct))
         (source (toolspec-ui--registered-source struct))
         (fn (gptel-tool-function struct))
         (binding (gethash struct toolspec-gptel--bindings))
         (bound (car binding))
         (problems (toolspec-validate struct)))
    (help-setup-xref (list #'toolspec-describe-tool (format "%s/%s" category name))
                     (called-interactively-p 'interactive))
    (with-help-window (help-buffer)
      (with-current-buffer standard-output
        (insert (propertize name 'face 'toolspec-tool-name)
                (format " is a gptel tool in category \"%s\"" category)
                (if source
                    (format ", registered by toolspec from %s.\n"
                            (if (file-name-absolute-p source) (abbreviate-file-name source) source))
                  ".\n"))
        (let ((original (toolspec-original-name struct)))
          (unless (equal original name)
            (insert (format "Its name in %s is %s: gptel sends %s, a name every backend takes.\n"
                            (if source "its file" "its source") original name))))
        (insert "\n")
        (insert (or (plist-get plist :description) "(no description)") "\n\n")
        (insert (propertize "Function:" 'face 'toolspec-heading) " "
                (cond ((and fn (symbolp fn)) (format "%s" fn))
                      ((and bound (symbolp bound))
                       (format "%s (its arguments checked by toolspec first)" bound))
                      ((and binding (toolspec-ui--executor-text (nth 1 binding) (nth 2 binding))))
                      (source "unbound: it answers the model that it has no implementation")
                      (t "an anonymous function"))
                (if (gptel-tool-async struct) ", async" "")
                (if (gptel-tool-confirm struct) ", asks before running" "")
                "\n\n")
        (when-let* ((tool (nth 1 binding))
                    (exec (plist-get tool :executor))
                    ((equal (format "%s" (plist-get exec :type)) "openapi")))
          (require 'toolspec-http)
          (let ((d (toolspec-http-describe tool (nth 2 binding))))
            (insert (propertize "HTTP:" 'face 'toolspec-heading) "\n")
            (dolist (k '(("Method" . :method) ("URL" . :url) ("Server" . :server) ("Auth" . :auth)))
              (insert (format "  %-7s %s\n" (car k) (plist-get d (cdr k)))))
            (insert "\n")))
        (insert (propertize "Arguments:" 'face 'toolspec-heading))
        (if (plist-get plist :args)
            (progn
              (insert "\n")
              (toolspec-ui--insert-table '("Name" "Type" "Required" "Description")
                                         (toolspec-ui--arg-rows (plist-get plist :args) "" t)))
          (insert " none\n"))
        (insert "\n" (propertize "Problems:" 'face 'toolspec-heading))
        (if problems
            (progn
              (insert "\n")
              (dolist (p problems)
                (insert "  " (propertize (toolspec-format-problem p)
                                         'face (if (eq (car p) 'error) 'toolspec-problem-error 'toolspec-problem-warning))
                        "\n")))
          (insert " none\n"))
        (insert "\n" (propertize "JSON by dialect" 'face 'toolspec-heading) "\n")
        (dolist (dialect (toolspec-dialects))
          (insert "\n" (propertize (format "%s:" dialect) 'face 'toolspec-heading) "\n")
          (insert (condition-case err
                      (toolspec-ui--pretty-json (toolspec-to-json struct dialect))
                    (toolspec-error (format "cannot be written: %s" (error-message-string err))))
                  "\n"))))))

;;;; Checking a JSON buffer

(defun toolspec-ui--source-diagnostics (source)
  "Problems of the JSON tool definitions in SOURCE.
Return a list of (SEVERITY LINE COLUMN PATH MESSAGE) sorted by
place, LINE and COLUMN in SOURCE's text, PATH nil when there is none."
  (condition-case err
      (pcase-let* ((`(,tools ,warnings ,paths ,problems) (toolspec-ui--source-read source))
                   (`(,entries . ,general) (toolspec-ui--tool-problems tools warnings paths "Checking" problems))
                   (out nil))
        (toolspec-ui--compute-spans source (mapcar (lambda (e) (plist-get e :path))
                                                   (cl-remove-if-not (lambda (e) (plist-get e :problems))
                                                                     entries)))
        ;; Problems of no tool: all found in one pass over the text.
        (when general
          (cl-loop for p in general
                   for (line . col) across (toolspec--mod-locate-many
                                            (toolspec-ui--source-string source)
                                            (vconcat (mapcar (lambda (p) (nth 1 p)) general)))
                   do (push (list (car p) line col (nth 1 p) (nth 2 p)) out)))
        (dolist (e entries)
          (dolist (p (plist-get e :problems))
            (pcase-let ((`(,line . ,col) (toolspec-ui--problem-place source e p)))
              (push (list (car p) line col (nth 1 p) (nth 2 p)) out))))
        (sort (nreverse out)
              (lambda (a b) (or (< (nth 1 a) (nth 1 b))
                                (and (= (nth 1 a) (nth 1 b)) (< (nth 2 a) (nth 2 b)))))))
    (toolspec-error
     (let* ((pos (or (toolspec-ui--error-position source err) '(1 . 1)))
            (path (plist-get (toolspec-error-details err) :path))
            (text (toolspec--error-text err)))
       ;; The path is shown before the message: not in it again.
       (when (and (stringp path) (not (string-empty-p path))
                  (string-prefix-p (concat path ": ") text))
         (setq text (substring text (+ 2 (length path)))))
       (list (list 'error (car pos) (cdr pos) path
                   (format "%s: %s" (or (get (car err) 'error-message) "toolspec error")
                           text)))))))

(defvar-local toolspec-ui--problems-source nil
  "The buffer whose problems this buffer lists.")

(defun toolspec-ui--problems-file (name)
  "The buffer or file a problem line's NAME stands for."
  (if (and (buffer-live-p toolspec-ui--problems-source)
           (equal name (with-current-buffer toolspec-ui--problems-source
                         (toolspec--one-line (toolspec-ui--problems-name)))))
      toolspec-ui--problems-source
    name))

(defun toolspec-ui--problems-name ()
  "How problem lines name the current buffer: its file or buffer name."
  (if buffer-file-name
      (file-name-nondirectory buffer-file-name)
    (buffer-name)))

(defconst toolspec-ui--problem-regexp
  "^\\([^\n]+?\\):\\([0-9]+\\):\\([0-9]+\\): \\(?:error\\|\\(warning\\)\\): "
  "Regexp matching a line of the problems buffer.")

(defvar toolspec-problems-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'toolspec-problems-recheck)
    map)
  "Keymap of `toolspec-problems-mode'.")

(define-derived-mode toolspec-problems-mode compilation-mode "toolspec-problems"
  "Major mode of the list of problems of a JSON tool spec.
Each line is FILE:LINE:COLUMN: error|warning: PATH: MESSAGE;
\\[compile-goto-error] or `next-error' shows the place.

\\{toolspec-problems-mode-map}"
  (setq-local compilation-error-regexp-alist '(toolspec))
  (setq-local compilation-error-regexp-alist-alist
              (cons (list 'toolspec toolspec-ui--problem-regexp 1 2 3 '(4))
                    compilation-error-regexp-alist-alist))
  (setq-local compilation-error-screen-columns nil)
  (setq-local compilation-first-column 1)
  (setq-local compilation-parse-errors-filename-function #'toolspec-ui--problems-file))

(defun toolspec-problems-recheck ()
  "Check the JSON spec of this problem list again."
  (interactive nil toolspec-problems-mode)
  (if (buffer-live-p toolspec-ui--problems-source)
      (toolspec-validate-buffer toolspec-ui--problems-source)
    (user-error "The checked buffer is gone")))

;;;###autoload
(defun toolspec-validate-buffer (&optional buffer)
  "Check the JSON tool definitions in BUFFER, the current buffer by default.
List the problems in buffer *toolspec-problems*, one line each as
FILE:LINE:COLUMN: SEVERITY: PATH: MESSAGE, so that `next-error'
visits them; a buffer without a file is named by its buffer name.
PATH is where in the tool plist the problem is, as
`toolspec-validate' says, or, for what reading the JSON had to
change, where in the JSON.
Say \"No problems\" when there are none.  Return the number of
problems."
  (interactive)
  (let* ((buffer (or buffer (current-buffer)))
         (source (with-current-buffer buffer
                   (save-restriction (widen) (toolspec-ui--buffer-source buffer))))
         (diags (toolspec-ui--source-diagnostics source))
         (name (with-current-buffer buffer (toolspec-ui--problems-name)))
         (dir (with-current-buffer buffer default-directory))
         (out (get-buffer-create "*toolspec-problems*")))
    (with-current-buffer out
      (let ((inhibit-read-only t))
        (toolspec-problems-mode)
        (setq default-directory dir)
        (setq toolspec-ui--problems-source buffer)
        (erase-buffer)
        (insert (format "toolspec: checking %s\n\n" name))
        (pcase-dolist (`(,severity ,line ,col ,path ,message) diags)
          (insert (format "%s:%d:%d: %s: %s%s\n" (toolspec--one-line name) line col severity
                          (if (member path '(nil "")) "" (concat (toolspec--one-line path) ": "))
                          (toolspec--one-line message))))
        (insert (if diags
                    (format "\n%s, %s\n"
                            (toolspec--plural (cl-count 'error diags :key #'car) "error")
                            (toolspec--plural (cl-count 'warning diags :key #'car) "warning"))
                  "No problems\n"))
        (goto-char (point-min))))
    (setq next-error-last-buffer out)
    (display-buffer out)
    (if diags
        (message "%s in %s" (toolspec--plural (length diags) "problem") name)
      (message "No problems"))
    (length diags)))

;;;; Flymake

(defun toolspec-flymake (report-fn &rest _args)
  "Flymake backend reporting the problems of the JSON tool spec in the buffer.
REPORT-FN is Flymake's callback."
  (require 'flymake)
  (condition-case err
      (save-restriction
        (widen)
        (let* ((source (toolspec-ui--buffer-source (current-buffer)))
               (diags (toolspec-ui--source-diagnostics source))
               ;; All found in one pass down the buffer.
               (starts (save-excursion
                         (toolspec-ui--text-positions
                          (vconcat (mapcar (lambda (d) (cons (nth 1 d) (nth 2 d))) diags))))))
          (funcall report-fn
                   (cl-loop
                    for (severity _line _col path message) in diags
                    for beg across starts
                    collect
                    (let ((end (save-excursion
                                 (goto-char beg)
                                 (min (line-end-position)
                                      (or (ignore-errors
                                            (with-syntax-table toolspec-ui--json-syntax-table
                                              (scan-sexps beg 1)))
                                          (line-end-position))))))
                      (flymake-make-diagnostic
                       (current-buffer) beg (max end (min (1+ beg) (point-max)))
                       (if (eq severity 'error) :error :warning)
                       (if (member path '(nil "")) message (format "%s: %s" path message))))))))
    (error (funcall report-fn :panic :explanation (error-message-string err)))))

;;;###autoload
(defun toolspec-flymake-setup ()
  "Check the JSON tool spec in this buffer with Flymake as you edit."
  (interactive)
  (add-hook 'flymake-diagnostic-functions #'toolspec-flymake nil t)
  (flymake-mode 1))

;;;; Exporting

(defun toolspec-ui--export-read-args ()
  "Ask for the arguments of `toolspec-export': (TOOLS DIALECT FILE)."
  (let* ((candidates (toolspec-ui--tool-candidates))
         (categories (delete-dups (mapcar (lambda (c) (concat (car (split-string (car c) "/")) "/*"))
                                          candidates)))
         (choices (progn
                    (unless candidates (user-error "No tools are registered with gptel yet"))
                    (completing-read-multiple "Export tools (CATEGORY/NAME or CATEGORY/*, comma-separated): "
                                              (append categories (mapcar #'car candidates)) nil t)))
         (tools (delete-dups
                 (cl-loop for choice in choices
                          append (if (string-suffix-p "/*" choice)
                                     (let ((prefix (substring choice 0 -1)))
                                       (cl-loop for (c . tool) in candidates
                                                when (string-prefix-p prefix c) collect tool))
                                   (list (cdr (assoc choice candidates)))))))
         (dialect (progn
                    (unless tools (user-error "No tools chosen"))
                    (intern (completing-read (format-prompt "Dialect" toolspec-default-dialect)
                                             (mapcar #'symbol-name (toolspec-dialects)) nil t nil nil
                                             (symbol-name toolspec-default-dialect)))))
         (file (let ((insert-default-directory nil))
                 (read-file-name "Write to file (leave empty for a buffer): " nil ""))))
    (setq file (and (not (string-empty-p file)) (expand-file-name file)))
    (when (and file (file-exists-p file)
               (not (y-or-n-p (format "%s exists; overwrite it? " (abbreviate-file-name file)))))
      (user-error "Nothing exported"))
    (list tools dialect file)))

(defun toolspec-ui--export-report (json dialect file count &optional twice)
  "Tell what `toolspec-export' did: COUNT tools as JSON in DIALECT.
With FILE, JSON was written there; otherwise show it in buffer
*toolspec-export*.  TWICE, the names more than one of the tools
has, is warned of: providers refuse such a list."
  (when twice
    (display-warning
     'toolspec
     (format "%s more than one of the exported tools: a provider refuses a list whose tools share a name; rename them or leave some out"
             (if (cdr twice)
                 (format "The names %s are each given to" (mapconcat (lambda (n) (format "\"%s\"" n)) twice ", "))
               (format "The name \"%s\" is given to" (car twice))))))
  (if file
      (message "%s written to %s (%s)" (toolspec--plural count "tool")
               (abbreviate-file-name file) dialect)
    (let ((buffer (get-buffer-create "*toolspec-export*")))
      (with-current-buffer buffer
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert json "\n"))
        (if (fboundp 'js-json-mode) (js-json-mode) (js-mode))
        (goto-char (point-min)))
      (pop-to-buffer buffer)
      (message "%s as %s JSON" (toolspec--plural count "tool") dialect))))

;;;; gptel forms

(defun toolspec-ui--json-candidates ()
  "JSON values around or after point: a list of (START . END), outermost first."
  (with-syntax-table toolspec-ui--json-syntax-table
    (save-excursion
      (save-restriction
        (widen)
        (let* ((state (parse-partial-sexp (point-min) (point)))
               (around (cl-loop for open in (nth 9 state)
                                for end = (ignore-errors (scan-sexps open 1))
                                when end collect (cons open end))))
          (or around
              (progn
                (when (nth 3 state) (goto-char (nth 8 state)))
                (and (re-search-forward "[[{]" nil t)
                     (let ((end (ignore-errors (scan-sexps (1- (point)) 1))))
                       (and end (list (cons (1- (point)) end))))))))))))

(defun toolspec-ui--placeholder-function (tool)
  "The placeholder function symbol of TOOL's `:function'."
  (intern (format toolspec-placeholder-function-format
                  (replace-regexp-in-string "_" "-" (format "%s" (plist-get tool :name))))))

(defun toolspec-ui--gptel-form-text (tool)
  "Source text of a `gptel-make-tool' form defining TOOL, with comments.
The comments name the placeholder function to define and list TOOL's
problems; `toolspec-gptel-form-text' writes it."
  (toolspec-gptel-form-text tool `(function ,(toolspec-ui--placeholder-function tool)) nil t))

(defun toolspec-ui--tools-near-point ()
  "Tools of the JSON around or after point, or nil when there is none.
Return (TOOLS START END)."
  (let ((candidates (toolspec-ui--json-candidates))
        (first-error nil))
    (or (cl-loop for (start . end) in candidates
                 for tools = (condition-case err
                                 (toolspec-ui--parse-text
                                  (buffer-substring-no-properties start end)
                                  nil (and buffer-file-name (file-name-base buffer-file-name)))
                               (toolspec-error (unless first-error (setq first-error err)) nil))
                 when tools return (list tools start end))
        (when first-error
          (toolspec-ui--report-read-error
           (toolspec-ui--buffer-source (current-buffer) (caar candidates) (cdar candidates))
           first-error)))))

;;;###autoload
(defun toolspec-insert-gptel-form (&optional file)
  "Insert `gptel-make-tool' forms for the JSON tool definitions at point.
The JSON is the region when it is active, else the JSON object or
array around or after point; when there is none, or when FILE is
given, the tools of FILE (interactively, a prefix argument asks
for FILE).  In an Emacs Lisp buffer the forms are inserted at
point (after the JSON, when point is inside it); otherwise they go
into buffer *toolspec-gptel-form*.  Each `:function' is a
placeholder, named by `toolspec-placeholder-function-format':
define it.  Return the forms' text."
  (interactive (list (and current-prefix-arg
                          (read-file-name "JSON tool file: " nil nil t))))
  (let* ((found (cond
                 (file nil)
                 ((use-region-p)
                  (let ((source (toolspec-ui--buffer-source (current-buffer) (region-beginning) (region-end))))
                    (list (car (toolspec-ui--read-or-report source)) (region-beginning) (region-end))))
                 (t (toolspec-ui--tools-near-point))))
         (file (and (not found)
                    (or file (read-file-name "No JSON at point; JSON tool file: " nil nil t))))
         (tools (if found (car found)
                  (car (toolspec-ui--read-or-report (toolspec-ui--file-source file)))))
         (text (mapconcat #'toolspec-ui--gptel-form-text tools "\n")))
    (if (derived-mode-p 'emacs-lisp-mode)
        (progn
          (when (and found (<= (nth 1 found) (point)) (< (point) (nth 2 found)))
            (goto-char (nth 2 found)))
          (deactivate-mark)
          (unless (bolp) (insert "\n"))
          (let ((start (point)))
            (insert text)
            (indent-region start (point))))
      (let ((buffer (get-buffer-create "*toolspec-gptel-form*")))
        (with-current-buffer buffer
          (erase-buffer)
          (emacs-lisp-mode)
          (setq-local indent-tabs-mode nil)
          (insert text)
          (indent-region (point-min) (point-max))
          (goto-char (point-min)))
        (pop-to-buffer buffer)))
    (message "%s: define the placeholder functions" (toolspec--plural (length tools) "form"))
    text))

(provide 'toolspec-ui)
;;; toolspec-ui.el ends here
