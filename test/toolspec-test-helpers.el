;;; toolspec-test-helpers.el --- What several ERT suites of toolspec share -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; Helpers of the suites that drive toolspec as a user would
;; (toolspec-ui-test.el, toolspec-first-hour-test.el) and of those that
;; run tools over HTTP (toolspec-http-test.el): example files, sample
;; documents, clean registries, keys typed into the selected window, and
;; an environment with no proxy and a temporary authinfo file.  Not a
;; suite itself: the suites `require' it.

;;; Code:

(require 'cl-lib)
(require 'ert)
(require 'auth-source)
(require 'url-vars)
(require 'gptel)
(require 'toolspec-gptel)
(require 'toolspec-http)

(defvar gptel--known-tools)
(defvar gptel--tool-preview-alist)

(defconst toolspec-test-helpers-examples
  (expand-file-name "../examples"
                    (file-name-directory (or load-file-name buffer-file-name default-directory)))
  "Directory of the example tool files.")

(defun toolspec-test-helpers-example (name)
  "Absolute name of example file NAME."
  (expand-file-name name toolspec-test-helpers-examples))

(defconst toolspec-test-helpers-bad-json
  "{
  \"tools\": [
    {
      \"name\": \"ok_tool\",
      \"description\": \"Fine.\",
      \"inputSchema\": {\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\", \"description\": \"Query\"}}, \"required\": [\"q\"]}
    },
    {
      \"name\": \"bad tool\",
      \"description\": \"Has problems.\",
      \"inputSchema\": {
        \"type\": \"object\",
        \"properties\": {
          \"count\": {\"type\": \"int\", \"description\": \"How many\"},
          \"tags\": {\"type\": \"array\", \"description\": \"Tags\"},
          \"mode\": {\"enum\": [1, 2]},
          \"opts\": {\"type\": \"object\", \"properties\": {\"r\": {\"type\": \"array\"}}}
        },
        \"required\": [\"count\"]
      }
    }
  ]
}
"
  "MCP tools with 3 errors and 6 warnings (2 of them from the import).
The error of the name \"bad tool\" is a warning when it is imported
into gptel, which registers it under a valid name.")

(defconst toolspec-test-helpers-broken-json
  "{
  \"tools\": [
    {\"name\": \"x\",, \"description\": \"d\"}
  ]
}
"
  "Not JSON: a doubled comma at line 3, column 18.")

(defvar toolspec-test-helpers-files nil
  "Temporary files made by the running test.")

(defun toolspec-test-helpers-temp-file (text)
  "A new temporary .json file holding TEXT; deleted after the test."
  (let ((file (make-temp-file "toolspec-test-" nil ".json" text)))
    (push file toolspec-test-helpers-files)
    file))

(defmacro toolspec-test-helpers-with-clean-state (&rest body)
  "Run BODY with empty gptel and toolspec registries, then clean up.
Buffers made meanwhile and the temporary files are removed."
  (declare (indent 0) (debug t))
  `(let ((gptel--known-tools nil)
         (gptel-tools nil)
         (gptel--tool-preview-alist nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal))
         (toolspec-gptel--import-options (make-hash-table :test 'equal))
         (toolspec-function-alist nil)
         (toolspec-test-helpers-files nil)
         (before (buffer-list)))
     (unwind-protect
         (save-window-excursion
           (switch-to-buffer "*scratch*")
           (delete-other-windows)
           ,@body)
       (dolist (b (buffer-list))
         (unless (or (memq b before) (string-prefix-p " " (buffer-name b)))
           (with-current-buffer b (set-buffer-modified-p nil))
           (kill-buffer b)))
       (dolist (f toolspec-test-helpers-files)
         (when (file-exists-p f) (delete-file f))))))

(defun toolspec-test-helpers-keys (&rest keys)
  "Type KEYS in the selected window: strings as text, vectors as keys."
  (execute-kbd-macro (apply #'vconcat keys)))

(defun toolspec-test-helpers-mx (command &rest inputs)
  "Run COMMAND with M-x, answering its prompts with INPUTS.
Each input is typed, then RET; a vector input is typed as keys."
  (apply #'toolspec-test-helpers-keys
         (kbd "M-x") command (kbd "RET")
         (mapcan (lambda (i) (if (vectorp i) (list i) (list i (kbd "RET")))) inputs)))

(defun toolspec-test-helpers-messages ()
  "Text of the *Messages* buffer."
  (with-current-buffer (messages-buffer) (buffer-string)))

(defun toolspec-test-helpers-preview-text ()
  "Text of the import preview buffer."
  (with-current-buffer "*toolspec-import*" (buffer-string)))

(defun toolspec-test-helpers-problem-lines ()
  "The problem lines of *toolspec-problems*."
  (with-current-buffer "*toolspec-problems*"
    (cl-remove-if-not (lambda (l) (string-match-p ":[0-9]+:[0-9]+: " l))
                      (split-string (buffer-string) "\n"))))

(defun toolspec-test-helpers-call (tool &rest args)
  "Call gptel TOOL, an async tool, with ARGS; wait for and return its result."
  (let ((result nil) (got nil)
        (deadline (+ (float-time) 15)))
    (apply (gptel-tool-function tool) (lambda (r) (setq result r got t)) args)
    (while (and (not got) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (unless got (ert-fail "The tool did not call back"))
    result))

(defmacro toolspec-test-helpers-with-http-env (&rest body)
  "Run BODY with no OpenAPI operation or server, no proxy, a 10 s timeout.
BODY sees `authinfo', a temporary authinfo file, empty, which is the
only auth source; it is deleted afterwards."
  (declare (indent 0) (debug t))
  `(let* ((authinfo (make-temp-file "toolspec-authinfo"))
          (auth-sources (list authinfo))
          (auth-source-do-cache nil)
          (url-proxy-services nil)
          (toolspec-http--operations (make-hash-table :test 'equal))
          (toolspec-http-servers nil)
          (toolspec-http-timeout 10))
     (ignore authinfo)
     (auth-source-forget-all-cached)
     (unwind-protect
         (progn ,@body)
       (delete-file authinfo)
       (auth-source-forget-all-cached))))

(provide 'toolspec-test-helpers)
;;; toolspec-test-helpers.el ends here
