;;; toolspec-gloodata.el --- Gloodata extensions' tools -*- lexical-binding: t -*-

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

;; Gloodata extensions: an HTTP endpoint describing its tools
;; (`toolspec-gloodata-import' fetches the description and registers
;; them); a call posts the arguments to the endpoint, and tables in the
;; answer reach the model as markdown.  Before a call runs, gptel shows
;; it the way the extension would: Show Map Of "Cairo" At Zoom Level 12.
;; Calls go through the HTTP transport of toolspec-http.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'toolspec)
(require 'toolspec-http)
(require 'toolspec-seeds)

(declare-function toolspec--mod-gloodata-info "toolspec-module")
(declare-function toolspec--mod-gloodata-result "toolspec-module")
(declare-function toolspec-register "toolspec-gptel")
(defvar gptel--tool-preview-alist)

(defun toolspec-gloodata--show (v)
  "Return value V as text, the way a Gloodata tile would."
  (cond ((stringp v) (format "\"%s\"" v))
        ((eq v t) "true")
        ((eq v :json-false) "false")
        ((numberp v) (number-to-string v))
        ((vectorp v) (mapconcat #'toolspec-gloodata--show v ", "))
        (t (format "%s" v))))

(defun toolspec-gloodata-render-call (tool args)
  "Return the text of a call of Gloodata TOOL with ARGS, as in its tile.
TOOL is a tool plist read from a Gloodata extension; ARGS the values
in the order of its arguments, as gptel passes them.  The tool's UI
prefix comes first, then each given argument in the order of the
UI's args (then the others) with its prefix and suffix, then the
tool's suffix: Show Map Of \"Cairo\" At Zoom Level 12."
  (let* ((exec (toolspec-seeds--executor-of tool))
         (ui (toolspec-seeds--nonnull (plist-get exec :ui)))
         (ui-args (toolspec-seeds--nonnull (plist-get ui :args)))
         (names (toolspec-seeds--arg-names tool))
         (values (cl-mapcar #'cons names args))
         (ui-order (cl-loop for (k _) on ui-args by #'cddr
                            for n = (substring (symbol-name k) 1)
                            when (member n names) collect n))
         (order (append ui-order (cl-remove-if (lambda (n) (member n ui-order)) names)))
         (parts (list (or (toolspec-seeds--nonnull (plist-get ui :prefix))
                          (toolspec-seeds--nonnull (plist-get tool :title))
                          (plist-get exec :tool)
                          (plist-get tool :name)))))
    (dolist (name order)
      (let ((v (cdr (assoc name values)))
            (a (toolspec-seeds--nonnull (plist-get ui-args (intern (concat ":" name))))))
        (unless (memq v '(nil :null))
          (push (if (plist-member a :prefix) (toolspec-seeds--nonnull (plist-get a :prefix)) name) parts)
          (push (toolspec-gloodata--show v) parts)
          (push (toolspec-seeds--nonnull (plist-get a :suffix)) parts))))
    (push (toolspec-seeds--nonnull (plist-get ui :suffix)) parts)
    (string-join (cl-remove-if (lambda (p) (or (not (stringp p)) (string-empty-p p)))
                               (nreverse parts))
                 " ")))

(defun toolspec-gloodata--answer (name endpoint status text err)
  "Text for the model from the answer of ENDPOINT to a call of tool NAME.
STATUS, TEXT and ERR are as `toolspec-http--post-json' gives them."
  (cond
   (err
    (toolspec-log "%s: cannot reach %s: %s" name endpoint err)
    (format "Error: the Gloodata extension at %s did not answer: %s" endpoint err))
   (t
    (let ((r (toolspec--read (toolspec--mod-gloodata-result (or text "")))))
      (cond
       ((plist-get r :error)
        (toolspec-log "%s: %s answered %s" name endpoint (toolspec-http--cap text 2000))
        (plist-get r :text))
       ((<= 200 status 299) (plist-get r :text))
       (t
        (toolspec-log "%s: %s answered HTTP %s: %s" name endpoint status (toolspec-http--cap (or text "") 2000))
        (format "Error: the Gloodata extension at %s answered HTTP %s: %s"
                endpoint status (truncate-string-to-width (string-trim (or text "")) 300))))))))

(defun toolspec-gloodata--preview (tool)
  "Return a gptel tool-call preview of TOOL, in its extension's words."
  (lambda (arg-values _info)
    (insert (propertize (toolspec-gloodata-render-call tool arg-values)
                        'font-lock-face 'font-lock-keyword-face)
            (propertize (format "  (%s)" (plist-get tool :name))
                        'font-lock-face 'font-lock-comment-face)
            "\n")
    nil))

(defun toolspec-gloodata-executor (tool options)
  "Bind TOOL, read from a Gloodata extension, to its endpoint.
The endpoint is OPTIONS's `:endpoint', else the one TOOL was fetched
from.  A call posts {\"action\":\"request\",\"opName\":ID,\"info\":ARGS}
to it.  Before a call runs gptel asks, showing the call as the
extension would (see `toolspec-gloodata-render-call'): in the chat
buffer's confirmation, and in the echo area."
  (let* ((tool (copy-tree tool))      ; gptel changes the :args it is given
         (exec (toolspec-seeds--executor-of tool))
         (name (plist-get tool :name))
         (id (plist-get exec :tool))
         (endpoint (or (plist-get options :endpoint) (toolspec-seeds--nonnull (plist-get exec :endpoint)))))
    (puthash name tool toolspec-seeds--tools)
    (if (not endpoint)
        (lambda (&rest _)
          (format "Error: the Gloodata tool %s has no endpoint here. Tell the user: import it with `toolspec-gloodata-import' from the extension's URL, or with :endpoint." name))
      (when (boundp 'gptel--tool-preview-alist)
        (setf (alist-get name gptel--tool-preview-alist nil nil #'equal)
              (list (toolspec-gloodata--preview tool))))
      (list :function
            (lambda (callback &rest args)
              (toolspec-http--post-json
               endpoint
               (json-serialize (list (cons 'action "request")
                                     (cons 'opName id)
                                     (cons 'info (toolspec-seeds--json-args tool args)))
                               :null-object :null :false-object :json-false)
               (lambda (status text err)
                 (funcall callback (toolspec-http--cap (toolspec-gloodata--answer name endpoint status text err))))))
            :async t
            :confirm (lambda (&rest args)
                       (message "toolspec: run %s? %s" name (toolspec-gloodata-render-call tool args))
                       t)))))

(defun toolspec-gloodata-fetch-info (url)
  "Fetch the extension info document of the Gloodata extension at URL.
Return it as JSON text; signal `toolspec-fetch-error' when the
extension does not answer with a 2xx status."
  (cdr (toolspec-http--post-json-sync url "{\"action\":\"info\"}")))

(defun toolspec-gloodata-read (url)
  "Return the tool plists of the Gloodata extension at URL.
Their executors post calls to URL."
  (mapcar (lambda (tool) (toolspec-seeds--with-executor tool :endpoint url))
          (toolspec-parse-json (toolspec-gloodata-fetch-info url) 'gloodata)))

(defun toolspec-gloodata-import (url &rest options)
  "Register the tools of the Gloodata extension at URL with gptel.
OPTIONS are those of `toolspec-register'; the category defaults to
the extension's namespace.  Importing URL again replaces its tools.
Returns the gptel tools."
  (require 'toolspec-gptel)
  (let* ((tools (toolspec-gloodata-read url))
         (warnings toolspec-last-import-warnings)
         (ns (plist-get (toolspec-seeds--executor-of (car tools)) :ns)))
    (mapc #'toolspec-check tools)
    (dolist (w warnings)
      (message "toolspec: %s: %s" url (toolspec-format-problem w)))
    (apply #'toolspec-register tools :source url
           (append options (list :category (or (plist-get options :category) ns))))))

(defun toolspec-gloodata-info (tools &rest keys)
  "Return TOOLS as one Gloodata extension info document (JSON).
TOOLS is a list of tool plists, registered tool names or gptel
tools.  Every argument must be a string, integer, number or
boolean; another signals `toolspec-write-error' naming it.  KEYS
are `:ns', `:title' and `:description' of the extension (default:
those the tools were read with, else \"toolspec\"), and `:pretty'."
  (toolspec--ensure-module)
  (toolspec--mod-gloodata-info
   (toolspec--print (mapcar (lambda (tool) (toolspec--printable (toolspec-seeds--plist tool))) tools))
   (plist-get keys :ns) (plist-get keys :title) (plist-get keys :description)
   (plist-get keys :pretty)))

(provide 'toolspec-gloodata)
;;; toolspec-gloodata.el ends here
