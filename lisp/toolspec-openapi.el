;;; toolspec-openapi.el --- OpenAPI documents as LLM tools -*- lexical-binding: t -*-

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

;; An OpenAPI document (3.0 or 3.1, or Swagger 2.0; JSON or YAML)
;; describes an HTTP API; toolspec makes one tool per operation:
;;
;;   (toolspec-read-openapi "~/apis/petstore.yaml" :tags '("pets"))
;;   (toolspec-import-file "~/apis/github.json"
;;                         :operations '("issues/create" "issues/list-for-repo"))
;;   M-x toolspec-import-openapi     ; pick operations or tags, then preview
;;
;; Each tool plist carries `:executor' (:type "openapi" ...): the server,
;; method, path and how arguments map to parameters and the body, for an
;; HTTP executor registered in `toolspec-executor-makers'.
;; `toolspec-read-file' and `toolspec-parse-json' read OpenAPI documents
;; too (every operation); these functions select.

;;; Code:

(require 'cl-lib)
(require 'toolspec)

(declare-function toolspec--mod-openapi-read "toolspec-module")
(declare-function toolspec--mod-openapi-operations "toolspec-module")
(declare-function toolspec-import-file "toolspec-gptel")

(defconst toolspec-openapi-selection-keys '(:tags :paths :operations :server)
  "Option keys that select the operations of an OpenAPI document.")

(defgroup toolspec-openapi nil
  "Importing the operations of OpenAPI documents as tools."
  :group 'toolspec-formats
  :prefix "toolspec-openapi-")

(defcustom toolspec-openapi-confirm-all 50
  "Ask before importing every operation of a document with more than this many.
Used by `toolspec-import-openapi' when nothing is selected; nil never asks."
  :type '(choice natnum (const :tag "Never ask" nil))
  :group 'toolspec-openapi)

(defun toolspec-openapi-selection (options)
  "The OpenAPI selection in OPTIONS, a plist: its selection keys, or nil.
The keys are those of `toolspec-openapi-selection-keys'."
  (cl-loop for key in toolspec-openapi-selection-keys
           for value = (plist-get options key)
           when value append (list key value)))

(defun toolspec-openapi--strings (key value)
  "VALUE of option KEY as a vector of strings; a string is a list of one."
  (cond ((stringp value) (vector value))
        ((and (or (listp value) (vectorp value)) (cl-every #'stringp value)) (vconcat value))
        (t (signal 'toolspec-format-error
                   (list (format "%s must be a string or a list of strings, found %S" key value) nil)))))

(defun toolspec-openapi--options-json (options)
  "The selection in OPTIONS as JSON text for the module, or nil."
  (let ((selection (toolspec-openapi-selection options)))
    (when selection
      (let ((server (plist-get selection :server)))
        (unless (or (null server) (stringp server))
          (signal 'toolspec-format-error (list (format ":server must be a URL string, found %S" server) nil)))
        (json-serialize
         (append (cl-loop for (key . name) in '((:tags . tags) (:paths . paths) (:operations . operations))
                          for value = (plist-get selection key)
                          when value collect (cons name (toolspec-openapi--strings key value)))
                 (and server (list (cons 'server server)))))))))

(defun toolspec-openapi--call (file fn)
  "Call FN with FILE expanded; its toolspec errors name FILE."
  (toolspec--ensure-module)
  (let ((file (expand-file-name file)))
    (condition-case err
        (funcall fn file)
      (toolspec-error
       (signal (car err)
               (list (format "%s: %s" (abbreviate-file-name file) (cadr err))
                     (append (list :file file) (toolspec-error-details err))))))))

(defun toolspec-read-openapi (file &rest options)
  "Read the OpenAPI document FILE into tool plists, one per operation.
FILE is OpenAPI 3.0 or 3.1, or Swagger 2.0, in JSON or YAML.  OPTIONS
select the operations (all of them by default):
  :tags        operations with any of these tags (a list of strings)
  :paths       operations under any of these path prefixes, by whole
               segments (\"/pets\" selects /pets and /pets/{id})
  :operations  operations by operationId, tool name or \"METHOD /path\",
               added to what :tags and :paths select
  :server      base URL to call instead of the document's servers
With both :tags and :paths, an operation must match both.  Other keys
are ignored, so import options can be passed as they are.

Each plist has `:executor' (:type \"openapi\" ...) saying how to call
the operation.  An operation that cannot be made into a tool is
skipped with a warning, unless named in :operations; the warnings are
in `toolspec-last-import-warnings'."
  (let ((json (toolspec-openapi--options-json options)))
    (toolspec-openapi--call
     file (lambda (file)
            (toolspec--import (toolspec--mod-openapi-read file t json toolspec-max-input-size t))))))

(defun toolspec-openapi-category (tools)
  "The gptel category of TOOLS read from an OpenAPI document, or nil.
It is made of the title of their API (`info.title'), when they have
one: in lower case, a hyphen for each run of other characters than
letters and digits (\"Pet shop\" gives \"pet-shop\"), so that it
completes as one word in the minibuffer."
  (when-let* ((exec (plist-get (car tools) :executor))
              ((equal (format "%s" (plist-get exec :type)) "openapi"))
              (title (plist-get exec :title))
              ((stringp title))
              (name (string-trim (replace-regexp-in-string "[^[:alnum:]]+" "-" (downcase title)) "-+" "-+"))
              ((not (string-empty-p name))))
    name))

(defun toolspec-parse-openapi (string &rest options)
  "Parse STRING, an OpenAPI document, into tool plists.
OPTIONS select operations as in `toolspec-read-openapi'."
  (toolspec--ensure-module)
  (toolspec--import (toolspec--mod-openapi-read string nil (toolspec-openapi--options-json options)
                                                toolspec-max-input-size t)))

(defun toolspec-openapi-operations (file)
  "The operations of the OpenAPI document FILE, in document order.
Each is a plist (:name TOOL-NAME :method \"GET\" :path \"/pets\"
:tags (TAG...) :operationId ID :summary TEXT :deprecated BOOL)."
  (toolspec-openapi--call
   file (lambda (file)
          (toolspec--read (toolspec--mod-openapi-operations file t toolspec-max-input-size)))))

(defun toolspec-openapi--read-file-for-import (file options)
  "The tool plists of FILE, read for importing with OPTIONS.
With OpenAPI selection keys in OPTIONS (see `toolspec-read-openapi'),
FILE is read as an OpenAPI document; otherwise by `toolspec-read-file'
in OPTIONS's `:format', refusing the file when one tool cannot be
read if OPTIONS's `:strict' is non-nil."
  (if (toolspec-openapi-selection options)
      (apply #'toolspec-read-openapi file options)
    (toolspec-read-file file (plist-get options :format) (plist-get options :strict))))

;;;; Choosing operations

(defun toolspec-openapi--clean (s)
  "S without the commas that would split it in `completing-read-multiple'."
  (replace-regexp-in-string "[ \t]*,[ \t]*" "; " s))

(defun toolspec-openapi--candidates (ops)
  "Completion candidates for choosing among OPS.
An alist (CANDIDATE . (KEY VALUE SUMMARY)): KEY `:tags' for a tag,
`:operations' for an operation."
  (let ((tags nil))
    (dolist (op ops)
      (dolist (tag (plist-get op :tags))
        (unless (member tag tags) (push tag tags))))
    (append
     (mapcar (lambda (tag)
               (cons (toolspec-openapi--clean
                      (let ((n (cl-count-if (lambda (op) (member tag (plist-get op :tags))) ops)))
                        (format "tag: %s (%d operation%s)" tag n (if (= n 1) "" "s"))))
                     (list :tags tag nil)))
             (nreverse tags))
     (mapcar (lambda (op)
               (cons (toolspec-openapi--clean
                      (format "%s %s  (%s) %s" (plist-get op :method) (plist-get op :path)
                              (mapconcat #'identity (plist-get op :tags) " ")
                              (plist-get op :name)))
                     (list :operations (plist-get op :name) (plist-get op :summary))))
             ops))))

(defun toolspec-openapi--read-selection (file)
  "Ask which operations of the OpenAPI document FILE to import.
Returns import options: `:tags' and `:operations', or nil for all."
  (let* ((ops (toolspec-openapi-operations file))
         (candidates (toolspec-openapi--candidates ops))
         (completion-extra-properties
          (list :annotation-function
                (lambda (c)
                  (let ((summary (nth 3 (assoc c candidates))))
                    (if summary (concat "  " (truncate-string-to-width summary 60 nil nil "…")) "")))))
         (chosen (completing-read-multiple
                  (format "Operations or tags of %s, comma-separated (empty for %s): "
                          (file-name-nondirectory file)
                          (if (= (length ops) 1) "its one operation" (format "all %d" (length ops))))
                  candidates nil t))
         (tags nil)
         (names nil))
    (dolist (c chosen)
      (pcase (cdr (assoc c candidates))
        (`(:tags ,tag . ,_) (push tag tags))
        (`(:operations ,name . ,_) (push name names))))
    (when (and (null chosen) toolspec-openapi-confirm-all
               (> (length ops) toolspec-openapi-confirm-all)
               (not (yes-or-no-p (format "Import all %d operations? " (length ops)))))
      (user-error "Nothing imported"))
    (append (and tags (list :tags (nreverse tags)))
            (and names (list :operations (nreverse names))))))

;;;###autoload
(defun toolspec-import-openapi (file &rest options)
  "Import operations of the OpenAPI document FILE as gptel tools.
Interactively, ask for FILE, then for what to import: operations
\(\"METHOD /path  (tags) name\") and tags (\"tag: NAME\"), several
separated by commas, nothing for every operation; then show the
import preview, where \\<toolspec-import-mode-map>\\[toolspec-import-register] registers them.

From Lisp, OPTIONS are those of `toolspec-import-file' and the
selection keys of `toolspec-read-openapi'."
  (interactive (let ((file (read-file-name "Import operations of OpenAPI document: " nil nil t)))
                 (cons file (append (toolspec-openapi--read-selection file) (list :preview t)))))
  (require 'toolspec-gptel)
  (apply #'toolspec-import-file file options))

(provide 'toolspec-openapi)
;;; toolspec-openapi.el ends here
