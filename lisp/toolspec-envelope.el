;;; toolspec-envelope.el --- Tool result envelopes -*- lexical-binding: t -*-

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

;; Tool result envelopes (Arcade's wire schema for the result of one
;; call): `toolspec-result-envelope' makes one, `toolspec-result-read'
;; validates one and returns its content, `toolspec-result-text' turns
;; one into what a model should see.  The module validates every
;; envelope against the published schema (src/envelope.rs).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'toolspec)
(require 'toolspec-seeds)

(declare-function toolspec--mod-result-envelope "toolspec-module")
(declare-function toolspec--mod-result-read "toolspec-module")

;;;; Options

(defcustom toolspec-authorization-function #'toolspec-show-authorization
  "Function called when a tool needs the user to authorize it.
It receives the message and the URL to open (a string or nil).
The model is only told that authorization is needed, never the URL."
  :type 'function
  :group 'toolspec-formats)

(defun toolspec-show-authorization (message url)
  "Show the user MESSAGE and URL, where a tool's authorization is given."
  (message "toolspec: %s%s" message (if url (format " Authorize at %s" url) "")))

;;;; Result envelopes

(defun toolspec-envelope--output (outcome)
  "The envelope `output' member of OUTCOME, as a plist in wire form."
  (let ((kinds (cl-remove-if-not (lambda (k) (plist-member outcome k))
                                 '(:value :error :requires-authorization :artifact))))
    (when (cdr kinds)
      (signal 'toolspec-envelope-error
              (list (format "An outcome holds one of :value, :error, :requires-authorization or :artifact, not %s"
                            (mapconcat #'symbol-name kinds " and "))
                    (list :path "output"))))
    (pcase (car kinds)
      ('nil nil)
      (:value (let ((v (plist-get outcome :value)))
                (and v (list :value v))))
      (:error
       (list :error (append (list :message (plist-get outcome :error))
                            (when-let* ((d (plist-get outcome :developer-message)))
                              (list :developer_message d)))))
      (:requires-authorization
       (list :requires_authorization
             (append (list :message (plist-get outcome :requires-authorization))
                     (when-let* ((url (plist-get outcome :url)))
                       (list :oauth2 (append (list :url url)
                                             (when-let* ((s (plist-get outcome :scope)))
                                               (list :scope s))))))))
      (:artifact
       (list :artifact (list :url (plist-get outcome :artifact)
                             :content_type (plist-get outcome :content-type)
                             :size (plist-get outcome :size)
                             :meta (list :description (plist-get outcome :description))))))))

(defun toolspec-result-envelope (outcome &rest keys)
  "Return the result envelope of a tool call that came to OUTCOME.
The envelope is a JSON string valid against the tool result
envelope schema.  OUTCOME is a plist with one of
  (:value V)  V a string, number, t or :json-false, or a plist object
  (:error MESSAGE :developer-message TEXT)
  (:requires-authorization MESSAGE :url URL :scope SCOPE)
  (:artifact URL :content-type TYPE :size BYTES :description TEXT)
or nil (or (:value nil)) for a call that returns nothing.  KEYS are
`:invocation-id' (default: a new id) and `:finished-at' (a Lisp time
or an RFC 3339 string; default: now).  An outcome the schema does
not allow signals `toolspec-envelope-error' with its `:path'."
  (toolspec--ensure-module)
  (let ((id (plist-get keys :invocation-id))
        (at (plist-get keys :finished-at)))
    (toolspec--mod-result-envelope
     (toolspec--print (toolspec-envelope--output outcome))
     id
     (cond ((null at) nil)
           ((stringp at) at)
           (t (format-time-string "%Y-%m-%dT%H:%M:%S.%3NZ" at t))))))

(defun toolspec-envelope--text (envelope)
  "ENVELOPE, a JSON string or a Lisp object, as JSON text."
  (if (stringp envelope)
      envelope
    (json-serialize envelope :null-object :null :false-object :json-false)))

(defun toolspec-result-read (envelope)
  "Validate ENVELOPE and return its content, as a plist.
ENVELOPE is a JSON string, or an object as `json-parse-string' gives
it.  The plist holds `:text' (what the model should see),
`:success', `:kind' (value, error, requires_authorization, artifact
or void), `:invocation-id', `:log' (the developer message, for the
log only), `:user' and `:url' (for the user only).  A malformed
envelope signals `toolspec-envelope-error' whose details carry the
`:path' of the problem."
  (toolspec--ensure-module)
  (toolspec--read (toolspec--mod-result-read (toolspec-envelope--text envelope))))

(defun toolspec-result-text (envelope)
  "Return what the model should see of ENVELOPE, a tool result envelope.
That is the value; the error message; the authorization message;
or an artifact's description, type, size and URL.  An error's
developer message goes to `toolspec-log-buffer' and nowhere else; an
authorization request is shown to the user, with its URL, through
`toolspec-authorization-function' (the model never sees the URL).
ENVELOPE is as in `toolspec-result-read'; a malformed one signals
`toolspec-envelope-error' with the path of the problem."
  (let ((r (toolspec-result-read envelope)))
    (when-let* ((log (plist-get r :log)))
      (toolspec-log "invocation %s: developer message: %s" (plist-get r :invocation-id) log))
    (when (eq (plist-get r :kind) 'requires_authorization)
      (toolspec-log "invocation %s: authorization required: %s" (plist-get r :invocation-id) (plist-get r :user))
      (funcall toolspec-authorization-function
               (string-remove-suffix (concat " Authorize at " (or (plist-get r :url) "")) (plist-get r :user))
               (plist-get r :url)))
    (plist-get r :text)))

(provide 'toolspec-envelope)
;;; toolspec-envelope.el ends here
