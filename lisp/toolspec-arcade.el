;;; toolspec-arcade.el --- Arcade tool definitions' tools -*- lexical-binding: t -*-

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

;; Arcade tool definitions: a call posts a tool request to a worker
;; (the `:worker' import option, else `toolspec-arcade-worker') through
;; the HTTP transport of toolspec-http.el, and reads back its result
;; envelope (toolspec-envelope.el).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url-parse)
(require 'toolspec)
(require 'toolspec-http)
(require 'toolspec-seeds)
(require 'toolspec-envelope)

(defvar gptel--tool-preview-alist)

;;;; Options

(defgroup toolspec-arcade nil
  "Running Arcade tools on a worker."
  :group 'toolspec-formats
  :prefix "toolspec-arcade-")

(defcustom toolspec-arcade-worker nil
  "URL of the Arcade worker for tools imported without `:worker'."
  :type '(choice (const :tag "None" nil) string)
  :group 'toolspec-arcade)

(defcustom toolspec-arcade-token nil
  "Token an Arcade worker receives as context.authorization.token.
nil sends none.  `auth-source' sends the secret auth-source holds
for the worker's host: add a line \"machine HOST password TOKEN\"
to ~/.authinfo.gpg (see `auth-sources').  A function is called
with the tool plist and returns the token.  A string is the token
itself, kept in plain text in your `custom-file': it still works,
but each session warns, once, how to move it to auth-source.  The
`:token' import option overrides this."
  :type '(choice (const :tag "None" nil)
                 (const :tag "From auth-source (the worker's host)" auth-source)
                 (function :tag "Function of the tool")
                 (string :tag "The token (plain text: use auth-source)"))
  :group 'toolspec-arcade)

;;;; Requests

(defun toolspec-arcade--new-id ()
  "A random id in UUID version 4 form."
  (format "%04x%04x-%04x-4%03x-%x%03x-%04x%04x%04x"
          (random 65536) (random 65536) (random 65536) (random 4096)
          (+ 8 (random 4)) (random 4096) (random 65536) (random 65536) (random 65536)))

(defun toolspec-arcade--now ()
  "The current time in RFC 3339, UTC."
  (format-time-string "%Y-%m-%dT%H:%M:%S.%3NZ" nil t))

(defvar toolspec-arcade--run-id nil
  "The run id this Emacs sends with its Arcade tool requests.")

(defvar toolspec-arcade--token-warned nil
  "Non-nil once a plain-text `toolspec-arcade-token' was warned about.")

(defun toolspec-arcade--auth-source-token (worker)
  "Return the secret auth-source has for the host of WORKER, or nil.
When there is none, say so and forget auth-source's memory of the
miss, so that a token added next is found."
  (require 'auth-source)
  (let* ((host (url-host (url-generic-parse-url worker)))
         (entry (car (auth-source-search :host host :max 1)))
         (secret (plist-get entry :secret)))
    (when (functionp secret) (setq secret (funcall secret)))
    (if (and (stringp secret) (not (string-empty-p secret)))
        secret
      (auth-source-forget (list :host host :max 1))
      (message "toolspec: no Arcade token for %s in auth-source: add the line \"machine %s password YOUR-TOKEN\" to ~/.authinfo.gpg (see `auth-sources')"
               host host)
      nil)))

(defun toolspec-arcade--token (tool options &optional worker)
  "The authorization token for TOOL under OPTIONS, sent to WORKER, or nil."
  (let* ((given (plist-member options :token))
         (token (if given (plist-get options :token) toolspec-arcade-token)))
    (cond ((eq token 'auth-source) (and worker (toolspec-arcade--auth-source-token worker)))
          ((functionp token) (funcall token tool))
          ((and (stringp token) (not given))
           (unless toolspec-arcade--token-warned
             (setq toolspec-arcade--token-warned t)
             (display-warning
              'toolspec
              (format "`toolspec-arcade-token' holds your Arcade token in plain text (in your custom file). Move it to auth-source: add the line \"machine %s password YOUR-TOKEN\" to ~/.authinfo.gpg, then M-x customize-variable RET toolspec-arcade-token and choose \"From auth-source\" (the token leaves your custom file when you save)."
                      (or (and worker (url-host (url-generic-parse-url worker))) "WORKER-HOST"))))
           token)
          (t token))))

(defun toolspec-arcade--call-line (tool worker args)
  "The Arcade call of TOOL on WORKER with ARGS, as one line."
  (let ((spec (plist-get (toolspec-seeds--executor-of tool) :tool)))
    (format "POST %s  %s(%s)"
            (replace-regexp-in-string "\\`https?://" "" worker)
            (or (plist-get spec :name) (plist-get tool :name))
            (mapconcat (lambda (pair) (format "%s=%s" (car pair) (toolspec-seeds--text (cdr pair))))
                       (cl-loop for a in (plist-get tool :args)
                                for v in args
                                unless (memq v '(nil :null))
                                collect (cons (plist-get a :name) v))
                       ", "))))

(defun toolspec-arcade-request (tool args &optional token)
  "The Arcade tool request (a JSON string) calling TOOL with ARGS.
ARGS are the values in the order of TOOL's arguments.  TOKEN, when
non-nil, is sent as context.authorization.token.  Return a cons
\(INVOCATION-ID . JSON)."
  (let* ((exec (toolspec-seeds--executor-of tool))
         (spec (plist-get exec :tool))
         (version (toolspec-seeds--nonnull (plist-get spec :version)))
         (invocation (toolspec-arcade--new-id)))
    (cons invocation
          (json-serialize
           `((run_id . ,(or toolspec-arcade--run-id (setq toolspec-arcade--run-id (toolspec-arcade--new-id))))
             (invocation_id . ,invocation)
             (created_at . ,(toolspec-arcade--now))
             (tool . ((name . ,(plist-get spec :name)) ,@(and version `((version . ,version)))))
             (input . ,(toolspec-seeds--json-args tool args))
             (context . ((user . ((id . ,(user-login-name))
                                  ,@(and (not (string-empty-p (user-full-name)))
                                         `((name . ,(user-full-name))))))
                         ,@(and token `((authorization . ((token . ,token))))))))
           :null-object :null :false-object :json-false))))

(defun toolspec-arcade--answer (name worker invocation status text err)
  "Text for the model from WORKER's answer to INVOCATION of tool NAME.
STATUS, TEXT and ERR are as `toolspec-http--post-json' gives them."
  (if err
      (progn (toolspec-log "%s: cannot reach %s: %s" name worker err)
             (format "Error: the Arcade worker at %s did not answer: %s" worker err))
    (condition-case e
        (let ((r (toolspec-result-read text)))
          (unless (equal (plist-get r :invocation-id) invocation)
            (toolspec-log "%s: %s answered invocation %s to invocation %s"
                          name worker (plist-get r :invocation-id) invocation))
          (toolspec-result-text text))
      (toolspec-error
       (toolspec-log "%s: %s answered HTTP %s with an invalid result: %s; body: %s"
                     name worker status (error-message-string e) (toolspec-http--cap (or text "") 2000))
       (if (and status (<= 200 status 299))
           (format "Error: the Arcade worker at %s answered with an invalid result: %s"
                   worker (cadr e))
         (format "Error: the Arcade worker at %s answered HTTP %s" worker status))))))

(defun toolspec-arcade-executor (tool options)
  "Bind TOOL, an Arcade tool definition, to a worker.
The worker is OPTIONS's `:worker', else `toolspec-arcade-worker'.
A call posts a tool request there and gives the model what the
result envelope says (see `toolspec-result-text').  OPTIONS's
`:token' is the authorization token sent (see
`toolspec-arcade-token')."
  (let* ((tool (copy-tree tool))      ; gptel changes the :args it is given
         (name (plist-get tool :name))
         (worker (or (plist-get options :worker) toolspec-arcade-worker)))
    (puthash name tool toolspec-seeds--tools)
    (if (not worker)
        (lambda (&rest _)
          (format "Error: the Arcade tool %s has no worker here. Tell the user: import it with :worker URL, or set `toolspec-arcade-worker'." name))
      ;; gptel's confirmation shows where the call goes.
      (when (boundp 'gptel--tool-preview-alist)
        (setf (alist-get name gptel--tool-preview-alist nil nil #'equal)
              (list (lambda (arg-values _info)
                      (insert (propertize (toolspec-arcade--call-line tool worker arg-values)
                                          'font-lock-face 'font-lock-keyword-face)
                              (propertize (format "  (%s)" name) 'font-lock-face 'font-lock-comment-face)
                              "\n")
                      nil))))
      (list :function
            (lambda (callback &rest args)
              (pcase-let ((`(,invocation . ,body)
                           (toolspec-arcade-request tool args (toolspec-arcade--token tool options worker))))
                (toolspec-http--post-json
                 worker body
                 (lambda (status text err)
                   (funcall callback (toolspec-http--cap
                                      (toolspec-arcade--answer name worker invocation status text err)))))))
            :async t
            :confirm t))))

(provide 'toolspec-arcade)
;;; toolspec-arcade.el ends here
