;;; gptel-dump.el --- What real gptel sends for the tools toolspec registers -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; Batch script for the provider-acceptance checks: for each FILE, a
;; real MCP server's tools/list, the tools are imported with
;; `toolspec-import-file' (read, checked and registered with the real
;; gptel, as a user's import does), and gptel's own
;; `gptel--parse-tools' serialises them for its OpenAI (chat
;; completions), OpenAI Responses, Anthropic and Gemini backends, with
;; gptel's own `gptel--json-encode'.  The JSON goes to
;; OUTDIR/BASE.BACKEND.json for test/providers/check.py (mode gptel)
;; to judge with the providers' validators.  An import or a
;; serialisation that fails writes OUTDIR/BASE.error instead: the
;; checker counts it as refused, never skipped.
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel \
;;     --eval '(setq toolspec-module-file "target/debug/libtoolspec.so")' \
;;     -l test/providers/gptel-dump.el OUTDIR FILE...
;;
;; Each backend gets its own fresh import: Gemini's `gptel--parse-tools'
;; edits the registered tools' nested arguments in place.  No network:
;; backends have dummy keys, and only `gptel--parse-tools' is called.

;;; Code:

(require 'toolspec)
(require 'toolspec-gptel)
(require 'gptel)
(require 'gptel-openai)
(require 'gptel-openai-responses)
(require 'gptel-anthropic)
(require 'gptel-gemini)

(defvar gptel-dump--backends
  ;; `gptel-make-openai' with its default host makes a Responses backend:
  ;; another host gives gptel's chat-completions serialisation.
  `(("openai" . ,(gptel-make-openai "toolspec-providers-openai"
                   :key "dummy" :host "openai-compatible.invalid"))
    ("openai-responses" . ,(gptel-make-openai-responses "toolspec-providers-responses"
                             :key "dummy"))
    ("anthropic" . ,(gptel-make-anthropic "toolspec-providers-anthropic" :key "dummy"))
    ("gemini" . ,(gptel-make-gemini "toolspec-providers-gemini" :key "dummy")))
  "The gptel backends whose tool serialisation is dumped, by name.")

(defun gptel-dump--write (file string)
  "Write STRING to FILE as UTF-8."
  (let ((coding-system-for-write 'utf-8-unix))
    (with-temp-file file (insert string))))

(defun gptel-dump--file (file outdir)
  "Dump gptel's serialisation of FILE's tools into OUTDIR; return the tool count."
  (let ((base (expand-file-name (file-name-base file) outdir))
        (count 0))
    (condition-case err
        (let (outputs)
          (dolist (backend gptel-dump--backends)
            (let ((tools (toolspec-import-file file :category "toolspec-providers")))
              (setq count (length tools))
              (push (cons (car backend)
                          (gptel--json-encode (gptel--parse-tools (cdr backend) tools)))
                    outputs))
            (toolspec-unregister (expand-file-name file)))
          (dolist (out outputs)
            (gptel-dump--write (format "%s.%s.json" base (car out)) (cdr out))))
      (error
       (gptel-dump--write (concat base ".error")
                          (format "%s: %s\n" (car err) (error-message-string err)))
       (setq count (format "error: %s" (error-message-string err)))))
    count))

(let ((outdir (car command-line-args-left))
      (files (cdr command-line-args-left)))
  (setq command-line-args-left nil)
  (unless (and outdir files)
    (error "Usage: gptel-dump.el OUTDIR FILE..."))
  (make-directory outdir t)
  (dolist (file files)
    (message "gptel-dump: %s: %s" (file-name-base file) (gptel-dump--file file outdir))))

;;; gptel-dump.el ends here
