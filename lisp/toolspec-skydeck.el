;;; toolspec-skydeck.el --- SkyDeck prompt tools -*- lexical-binding: t -*-

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

;; SkyDeck prompt tools: a call fills the prompt's placeholders and
;; sends it to the current gptel backend; the reply is the result.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'toolspec)
(require 'toolspec-seeds)

(declare-function toolspec--mod-skydeck-document "toolspec-module")
(declare-function gptel-request "ext:gptel-request")
(declare-function gptel-backend-models "ext:gptel-request")
(declare-function gptel-openai-p "ext:gptel-openai")
(defvar gptel-backend)
(defvar gptel-model)
(defvar gptel-temperature)
(defvar gptel-max-tokens)
(defvar gptel-use-tools)
(defvar gptel-tools)
(defvar gptel-use-context)
(defvar gptel-stream)
(defvar gptel--request-params)
(defvar gptel-prompt-transform-functions)

;;;; Options

(defgroup toolspec-skydeck nil
  "Running SkyDeck prompt tools through gptel."
  :group 'toolspec-formats
  :prefix "toolspec-skydeck-")

(defcustom toolspec-skydeck-system-prompt nil
  "System message of the requests a SkyDeck prompt tool sends, or nil."
  :type '(choice (const :tag "None" nil) string)
  :group 'toolspec-skydeck)

(defcustom toolspec-skydeck-use-model-version t
  "When non-nil, a prompt tool uses a model its `model_version' names.
That is the first of them the current gptel backend offers;
otherwise, or when none is offered, the current `gptel-model'."
  :type 'boolean
  :group 'toolspec-skydeck)

(defcustom toolspec-skydeck-extra-parameters 'openai
  "When to send a prompt tool's top_p and penalties to the backend.
Temperature and max_tokens are always sent (gptel knows them for
every backend).  top_p, frequency_penalty and presence_penalty are
OpenAI request parameters: `openai' sends them to OpenAI-compatible
backends only, t to every backend, nil never."
  :type '(choice (const openai) (const :tag "Always" t) (const :tag "Never" nil))
  :group 'toolspec-skydeck)

;;;; Prompts

(defun toolspec-skydeck-fill (tool args)
  "Return the prompt of SkyDeck TOOL with its placeholders filled from ARGS.
ARGS are the values in the order of TOOL's arguments; a missing one
takes the argument's default.  Multi-select values are joined with
\", \"."
  (let* ((exec (toolspec-seeds--executor-of tool))
         (doc (plist-get exec :document))
         (placeholders (plist-get exec :placeholders))
         (prompt (plist-get doc :model_prompt)))
    (cl-loop for spec in (plist-get tool :args)
             for v in (append args (make-list (length (plist-get tool :args)) nil))
             for name = (plist-get spec :name)
             for ph = (or (plist-get placeholders (intern (concat ":" name))) name)
             for value = (if (memq v '(nil :null)) (plist-get spec :default) v)
             do (setq prompt (replace-regexp-in-string
                              (concat "{{[[:space:]]*" (regexp-quote ph) "[[:space:]]*}}")
                              (toolspec-seeds--text value) prompt t t)))
    prompt))

(defun toolspec-skydeck-check-reply (tool reply)
  "Return REPLY of SkyDeck TOOL, or an error text if it is not allowed.
When the tool's expected output is `limited', the reply (trimmed,
without quotes or a final period, in any case) must be one of its
allowed values, which is then returned as written there."
  (let* ((meta (plist-get (plist-get (toolspec-seeds--executor-of tool) :document) :metadata))
         (expected (toolspec-seeds--nonnull (plist-get meta :expected_output)))
         (allowed (append (toolspec-seeds--nonnull (plist-get expected :allowed_values)) nil)))
    (if (not (and (equal (plist-get expected :type) "limited") allowed))
        reply
      (let* ((bare (string-trim (string-trim reply) "[\"'`*]+" "[\"'`*.]+")))
        (or (cl-find bare allowed :test (lambda (a b) (eq t (compare-strings a nil nil b nil nil t))))
            (format "Error: the prompt tool %s answered %S, which is not one of the allowed values: %s."
                    (plist-get tool :name) (string-trim reply) (string-join allowed ", ")))))))

(defun toolspec-skydeck--model (meta backend)
  "The model for a prompt with metadata META on BACKEND."
  (or (and toolspec-skydeck-use-model-version backend
           (let ((offered (ignore-errors (gptel-backend-models backend))))
             (cl-loop for v across (or (toolspec-seeds--nonnull (plist-get meta :model_version)) [])
                      for m = (and (stringp v) (intern v))
                      when (memq m offered) return m)))
      gptel-model))

(defun toolspec-skydeck--extra-parameters (params backend)
  "The request parameters of PARAMS other than temperature and max_tokens.
Sent to BACKEND as `toolspec-skydeck-extra-parameters' says."
  (when (pcase toolspec-skydeck-extra-parameters
          ('openai (and backend (fboundp 'gptel-openai-p) (gptel-openai-p backend)))
          (v v))
    (cl-loop for key in '(:top_p :frequency_penalty :presence_penalty)
             for v = (toolspec-seeds--nonnull (plist-get params key))
             when (numberp v) append (list key v))))

(defun toolspec-skydeck-run (tool args callback)
  "Run SkyDeck prompt TOOL with ARGS; call CALLBACK with the result text.
The filled prompt is sent with `gptel-request' to the current
backend, with the tool's temperature and max tokens, no tools and
no context; the reply (checked by `toolspec-skydeck-check-reply')
or an error text reaches CALLBACK once."
  (let* ((exec (toolspec-seeds--executor-of tool))
         (meta (plist-get (plist-get exec :document) :metadata))
         (params (toolspec-seeds--nonnull (plist-get meta :parameters)))
         (name (plist-get tool :name))
         (backend gptel-backend)
         (model (toolspec-skydeck--model meta backend))
         (prompt (toolspec-skydeck-fill tool args))
         (buffer (generate-new-buffer " *toolspec-prompt*"))
         (done nil)
         (finish (lambda (text)
                   (unless done
                     (setq done t)
                     ;; gptel may still use the buffer after the callback.
                     (run-at-time 0 nil (lambda () (when (buffer-live-p buffer) (kill-buffer buffer))))
                     (funcall callback text)))))
    (toolspec-log "%s: prompt sent to %s: %s" name model prompt)
    (condition-case err
        (with-current-buffer buffer
          (let ((gptel-backend backend)
                (gptel-model model)
                (gptel-temperature (or (toolspec-seeds--nonnull (plist-get params :temperature)) gptel-temperature))
                (gptel-max-tokens (or (toolspec-seeds--nonnull (plist-get params :max_tokens)) gptel-max-tokens))
                (gptel--request-params (append (toolspec-skydeck--extra-parameters params backend)
                                               (bound-and-true-p gptel--request-params)))
                (gptel-use-tools nil)
                (gptel-tools nil)
                (gptel-use-context nil)
                (gptel-stream nil)
                (gptel-prompt-transform-functions nil))
            (gptel-request prompt
              :buffer buffer
              :system toolspec-skydeck-system-prompt
              :callback
              (lambda (response info)
                (cond
                 ((stringp response)
                  (funcall finish (toolspec-skydeck-check-reply tool response)))
                 ((memq response '(nil abort))
                  (toolspec-log "%s: the prompt request failed: %s %s" name
                                (plist-get info :status) (plist-get info :error))
                  (funcall finish (format "Error: the prompt tool %s got no reply: %s" name
                                          (or (plist-get info :status) "aborted")))))))))
      (error
       (funcall finish (format "Error: the prompt tool %s could not send its prompt: %s"
                               name (error-message-string err)))))))

(defun toolspec-skydeck-executor (tool _options)
  "Bind TOOL, a SkyDeck prompt tool, to `toolspec-skydeck-run'."
  (let ((tool (copy-tree tool)))        ; gptel changes the :args it is given
    (puthash (plist-get tool :name) tool toolspec-seeds--tools)
    (list :function (lambda (callback &rest args) (toolspec-skydeck-run tool args callback))
          :async t)))

(defun toolspec-skydeck-document (tool &optional pretty)
  "Return prompt TOOL as a SkyDeck document (JSON).
TOOL is a plist read from a SkyDeck document, or a registered prompt
tool (a name or gptel tool); the document comes back as it was read,
metadata and all.  PRETTY non-nil indents it.  Any other tool
signals `toolspec-write-error'."
  (toolspec--ensure-module)
  (toolspec--mod-skydeck-document
   (toolspec--print (toolspec--printable (toolspec-seeds--plist tool))) pretty))

(provide 'toolspec-skydeck)
;;; toolspec-skydeck.el ends here
