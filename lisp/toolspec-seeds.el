;;; toolspec-seeds.el --- What the seed formats' executors share -*- lexical-binding: t -*-

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

;; Gloodata extensions (toolspec-gloodata.el), Arcade tool definitions
;; (toolspec-arcade.el) and SkyDeck prompt tools (toolspec-skydeck.el)
;; say how a tool runs, not only what it takes.  Their readers are in
;; the module (`toolspec-read-file' detects the formats); each of those
;; files binds its executor through `toolspec-executor-makers'.  This
;; file holds what the executors share: their log, reading a tool's
;; executor metadata, arguments as JSON, and the tools they bound, which
;; the writers (`toolspec-gloodata-info', `toolspec-skydeck-document')
;; find again by name.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'toolspec)

;;;; Options

(defcustom toolspec-log-buffer "*toolspec-log*"
  "Buffer where toolspec logs what is for developers only.
Such as an envelope's developer_message, which never reaches the
model or the user."
  :type 'string
  :group 'toolspec-formats)

;;;; Helpers

(defun toolspec-log (format-string &rest args)
  "Append a line to `toolspec-log-buffer': FORMAT-STRING applied to ARGS."
  (with-current-buffer (get-buffer-create toolspec-log-buffer)
    (save-excursion
      (goto-char (point-max))
      (insert (format-time-string "%F %T ") (apply #'format format-string args) "\n"))))

(defun toolspec-seeds--nonnull (v)
  "Return V, or nil when V is JSON null or false (`:null', `:json-false')."
  (unless (memq v '(:null :json-false)) v))

(defun toolspec-seeds--executor-of (tool)
  "The executor plist of TOOL, a tool plist."
  (toolspec-seeds--nonnull (plist-get tool :executor)))

(defun toolspec-seeds--with-executor (tool key value)
  "A copy of TOOL whose executor has KEY set to VALUE."
  (let ((exec (copy-sequence (toolspec-seeds--executor-of tool))))
    (plist-put (copy-sequence tool) :executor (plist-put exec key value))))

(defun toolspec-seeds--arg-names (tool)
  "The argument names of TOOL, in order."
  (mapcar (lambda (a) (plist-get a :name)) (plist-get tool :args)))

(defun toolspec-seeds--json-args (tool args)
  "ARGS, values in the order of TOOL's arguments, as a JSON object alist.
Missing values are left out, except that a boolean argument
receives false for nil."
  (cl-loop for spec in (plist-get tool :args)
           for v in args
           for boolean = (member (format "%s" (plist-get spec :type)) '("boolean"))
           for value = (cond ((memq v '(nil :null)) (and boolean :json-false))
                             ((and (listp v) (not (keywordp (car-safe v))))
                              (vconcat v))
                             (t v))
           when value
           collect (cons (intern (plist-get spec :name)) value)))

(defun toolspec-seeds--text (v)
  "Argument value V as text in a prompt."
  (cond ((stringp v) v)
        ((vectorp v) (mapconcat #'toolspec-seeds--text v ", "))
        ((and (listp v) v (not (keywordp (car v)))) (mapconcat #'toolspec-seeds--text v ", "))
        ((eq v t) "true")
        ((eq v :json-false) "false")
        ((numberp v) (number-to-string v))
        ((null v) "")
        (t (format "%s" v))))

;;;; Bound tools

(defvar toolspec-seeds--tools (make-hash-table :test 'equal)
  "Tool plists bound by the seed formats' executors, by tool name.
Registered gptel tools do not keep what gptel has no slot for; the
exporters find it here.")

(defun toolspec-seeds--plist (tool)
  "TOOL as a plist with its executor metadata.
TOOL is a plist, a registered tool's name, or a gptel or llm struct
bound by one of those executors."
  (cond ((and (consp tool) (keywordp (car tool))) tool)
        ((stringp tool)
         (or (gethash tool toolspec-seeds--tools)
             (signal 'toolspec-plist-error
                     (list (format "No tool named %s was bound by toolspec's executors" tool) nil))))
        (t (let* ((plist (toolspec--plist tool))
                  (name (plist-get plist :name)))
             (or (gethash name toolspec-seeds--tools) plist)))))

(provide 'toolspec-seeds)
;;; toolspec-seeds.el ends here
