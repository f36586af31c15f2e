;;; client.el --- toolspec-mcp as the client of the MCP conformance suite -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; The client command of `conformance client' (npm
;; @modelcontextprotocol/conformance), run by
;; scripts/mcp-conformance.sh:
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -l test/conformance/client.el URL
;;
;; It connects to the scenario's server at URL over streamable HTTP,
;; registers its tools in gptel and, for the tools_call scenario, calls
;; each tool through its gptel function (the argument checker
;; included), numbers as 2 and 3, strings as "test"; so it does for
;; sse-retry, whose server closes the call's event stream before the
;; answer (the client resumes it with a GET and Last-Event-ID after the
;; stream's retry time), and for elicitation-sep1034-client-defaults,
;; whose tool asks the client for input on the standing GET stream.  It runs with no terminal, so it sets
;; `toolspec-mcp-elicitation' to `defaults': an elicitation is
;; accepted with the defaults of its schema, unasked.  It exits 0 when
;; the server was reached and every call answered, 1 otherwise.

;;; Code:

(require 'toolspec-mcp)
(require 'gptel)

(defvar url-proxy-services)

(defun toolspec-conformance--wait (pred seconds)
  "Wait up to SECONDS for PRED; return its value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun toolspec-conformance--value (spec n)
  "A value for the arg SPEC, the N-th number sent."
  (pcase (format "%s" (plist-get spec :type))
    ((or "number" "integer") (+ 2 n))
    ("boolean" nil)
    ("array" [])
    ("object" nil)
    (_ "test")))

(let* ((url (or (car (last command-line-args-left)) (error "No server URL given")))
       (scenario (or (getenv "MCP_CONFORMANCE_SCENARIO") "initialize"))
       (url-proxy-services nil)
       (toolspec-mcp-elicitation 'defaults)
       (toolspec-mcp-servers `(("conformance" :url ,url)))
       (ok t))
  (setq command-line-args-left nil)
  (toolspec-mcp-connect "conformance")
  (let ((server (gethash "conformance" toolspec-mcp--connections)))
    (unless (toolspec-conformance--wait
             (lambda () (memq (toolspec-mcp--server-state server) '(ready failed)))
             20)
      (setq ok nil))
    (message "conformance: %s: state %s, protocol %s, tools %S, error %s"
             scenario (toolspec-mcp--server-state server) (toolspec-mcp--server-protocol server)
             (toolspec-mcp--server-tools server) (toolspec-mcp--server-error server))
    (unless (eq (toolspec-mcp--server-state server) 'ready) (setq ok nil))
    (when (and ok (member scenario '("tools_call" "sse-retry" "elicitation-sep1034-client-defaults")))
      (dolist (name (toolspec-mcp--server-tools server))
        (let* ((tool (gptel-get-tool (list "mcp-conformance" name)))
               (n -1)
               (args (mapcar (lambda (spec) (toolspec-conformance--value spec (cl-incf n)))
                             (gptel-tool-args tool)))
               (result nil))
          (apply (gptel-tool-function tool) (lambda (r) (setq result r)) args)
          (toolspec-conformance--wait (lambda () result) 20)
          (message "conformance: %s%S -> %s" name args result)
          (when (or (null result) (string-prefix-p "Error" result)) (setq ok nil)))))
    (toolspec-mcp-disconnect "conformance")
    (toolspec-conformance--wait (lambda () nil) 0.3)
    (kill-emacs (if ok 0 1))))

;;; client.el ends here
