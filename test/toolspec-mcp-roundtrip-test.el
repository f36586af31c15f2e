;;; toolspec-mcp-roundtrip-test.el --- A gptel tool out through MCP and back -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; The round trip of MCP: a tool written with `gptel-make-tool' in one
;; Emacs (A, a child batch Emacs with `toolspec-mcp-server-mode' on a
;; temporary socket) is exposed by `toolspec serve', imported into this
;; Emacs (B) by toolspec's MCP client, and called here by real gptel
;; against a scripted OpenAI-compatible model on 127.0.0.1
;; (test/toolspec-server.el).  Same schema, same result; a call with
;; an argument of the wrong type is answered with its problem and never
;; reaches A, whose tool writes every call it gets to a file.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'url)
(require 'toolspec)
(require 'toolspec-mcp)
(require 'gptel)
(require 'gptel-openai)
(require 'toolspec-server)

(defvar url-proxy-services)

(defconst toolspec-mcprt-test--root
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name default-directory)))
  "The top directory of the source tree.")

(defconst toolspec-mcprt-test--timeout 30
  "Seconds a process or a conversation may take before the test fails.")

(defconst toolspec-mcprt-test--good-args
  "{\"word\":\"ho\",\"opts\":{\"times\":2,\"bang\":true},\"count\":3}"
  "The arguments the model sends in the good call.")

(defun toolspec-mcprt-test--server-program (dir)
  "The program Emacs A runs: its tool, its files in DIR, the server mode.
The tool appends each call's arguments to DIR/calls; A writes the
tool's MCP export to DIR/export.json and the result of calling the
tool's function directly, as gptel would with the good call's
arguments, to DIR/direct.txt, then says READY."
  `(progn
     (setq toolspec-module-file ,toolspec-module-file)
     (require 'gptel)
     (require 'toolspec-mcp-server)
     (let ((dir ,dir))
       (gptel-make-tool
        :name "roundtrip" :category "roundtrip"
        :description "Repeat a word, with options."
        :args (list '(:name "word" :type string :enum ["hi" "ho"] :description "the word")
                    '(:name "opts" :type object :description "how to say it"
                            :properties (:times (:type integer :minimum 1 :maximum 5)
                                         :bang (:type boolean))
                            :required ["times"])
                    '(:name "count" :type integer :description "a number to add"))
        :function (lambda (word opts count)
                    (write-region (format "%S\n" (list word opts count)) nil
                                  (expand-file-name "calls" dir) t 'silent)
                    (format "%s%s / %d"
                            (mapconcat #'upcase (make-list (plist-get opts :times) word) "-")
                            (if (eq (plist-get opts :bang) t) "!" "")
                            (+ count (length word)))))
       (let ((tool (gptel-get-tool '("roundtrip" "roundtrip"))))
         (toolspec-export (list tool) 'mcp (expand-file-name "export.json" dir))
         (write-region (funcall (gptel-tool-function tool) "ho" '(:times 2 :bang t) 3) nil
                       (expand-file-name "direct.txt" dir) nil 'silent)
         (delete-file (expand-file-name "calls" dir)))
       (setq toolspec-mcp-server-socket (expand-file-name "sock/mcp.sock" dir)
             toolspec-mcp-server-tools '("roundtrip"))
       (toolspec-mcp-server-mode 1)
       (message "READY")
       (while t (accept-process-output nil 0.1)))))

(defun toolspec-mcprt-test--wait (what pred)
  "Wait until PRED returns non-nil and return its value; fail naming WHAT."
  (let ((deadline (+ (float-time) toolspec-mcprt-test--timeout))
        value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "Timed out waiting" what)))))

(defun toolspec-mcprt-test--read (file)
  "The contents of FILE, or nil if it does not exist."
  (when (file-exists-p file)
    (with-temp-buffer (insert-file-contents file) (buffer-string))))

(defun toolspec-mcprt-test--input-schema (json)
  "The inputSchema of the one tool of MCP export JSON, parsed."
  (let ((tools (alist-get 'tools (json-parse-string json :object-type 'alist
                                                    :false-object :json-false))))
    (should (= (length tools) 1))
    (alist-get 'inputSchema (aref tools 0))))

(defun toolspec-mcprt-test--start-a (dir)
  "Start Emacs A with its files in DIR; return its process once ready."
  (let* ((program (expand-file-name "a.el" dir))
         (compat (locate-library "compat"))
         (proc nil))
    (with-temp-file program
      (insert ";;; -*- lexical-binding: t -*-\n"
              (prin1-to-string (toolspec-mcprt-test--server-program dir)) "\n"))
    (setq proc (make-process
                :name "toolspec-mcprt-emacs-a" :buffer (generate-new-buffer " *toolspec-mcprt-a*")
                :connection-type 'pipe :noquery t
                :command `(,(expand-file-name invocation-name invocation-directory)
                           "--batch" "-Q"
                           "-L" ,(expand-file-name "lisp" toolspec-mcprt-test--root)
                           "-L" ,(file-name-directory (locate-library "gptel"))
                           ,@(and compat (featurep 'compat)
                                  (list "-L" (file-name-directory compat) "-l" "compat"))
                           "-l" ,program)))
    (toolspec-mcprt-test--wait
     "Emacs A"
     (lambda ()
       (with-current-buffer (process-buffer proc)
         (or (string-match-p "^READY$" (buffer-string))
             (and (not (process-live-p proc))
                  (ert-fail (list "Emacs A failed" (buffer-string))))))))
    proc))

(defun toolspec-mcprt-test--chat (model tools)
  "Have real gptel send a prompt with TOOLS to MODEL; wait for the end.
Tool calls run without confirmation.  Return the final response."
  (plist-get (toolspec-server-chat model "Go" tools) :text))

(defun toolspec-mcprt-test--tool-message (request id)
  "The content of the tool message answering call ID in REQUEST."
  (plist-get (cl-find-if (lambda (m) (and (equal (plist-get m :role) "tool")
                                          (equal (plist-get m :tool_call_id) id)))
                         (append (plist-get request :messages) nil))
             :content))

(ert-deftest toolspec-mcp-roundtrip ()
  "A gptel tool served by one Emacs is called by gptel in another: same schema, same result."
  (let* ((dir (file-name-as-directory (make-temp-file "toolspec-mcprt" t)))
         (program (expand-file-name "target/debug/toolspec" toolspec-mcprt-test--root))
         (emacs-a nil))
    (unwind-protect
        (progn
          (should (file-executable-p program))
          (setq emacs-a (toolspec-mcprt-test--start-a dir))
          (let ((toolspec-mcp-servers
                 `(("emacs" :command ,program
                    :args ("serve" "--socket" ,(expand-file-name "sock/mcp.sock" dir)))))
                (toolspec-mcp--connections (make-hash-table :test #'equal))
                (toolspec-mcp-trusted-servers nil)
                (gptel--known-tools nil)
                (gptel-tools nil)
                (toolspec-gptel--registered (make-hash-table :test 'equal)))
            (unwind-protect
                (progn
                  (toolspec-mcp-connect "emacs")
                  (toolspec-mcprt-test--wait
                   "the tool registered in gptel"
                   (lambda ()
                     (let ((server (gethash "emacs" toolspec-mcp--connections)))
                       (when (eq (toolspec-mcp--server-state server) 'failed)
                         (ert-fail (list "server failed" (toolspec-mcp--server-error server))))
                       (assoc "roundtrip" (cdr (assoc "mcp-emacs" gptel--known-tools))))))
                  (let ((tool (cdr (assoc "roundtrip" (cdr (assoc "mcp-emacs" gptel--known-tools))))))
                    ;; Same schema: B's import exports as A's tool does.
                    (let ((here (toolspec-mcprt-test--input-schema (toolspec-export (list tool) 'mcp)))
                          (there (toolspec-mcprt-test--input-schema
                                  (toolspec-mcprt-test--read (expand-file-name "export.json" dir)))))
                      (should (equal (alist-get 'enum (alist-get 'word (alist-get 'properties there)))
                                     ["hi" "ho"]))
                      (should (equal (alist-get 'required (alist-get 'opts (alist-get 'properties there)))
                                     ["times"]))
                      (should (equal here there)))
                    ;; Same result: what the model receives is what A's
                    ;; function returns called directly; the bad call
                    ;; gets its problem.
                    (toolspec-server-with
                        (model (list (toolspec-server-tool-calls-response
                                      `(("good" "roundtrip" ,toolspec-mcprt-test--good-args)
                                        ("bad" "roundtrip" "{\"word\":\"ho\",\"opts\":{\"times\":\"two\"},\"count\":3}")))
                                     (toolspec-server-text-response "Done.")))
                      (should (equal (toolspec-mcprt-test--chat model (list tool)) "Done."))
                      (let ((second (nth 1 (toolspec-server-requests model)))
                            (direct (toolspec-mcprt-test--read (expand-file-name "direct.txt" dir))))
                        (should (equal direct "HO-HO! / 5"))
                        (should (equal (toolspec-mcprt-test--tool-message second "good") direct))
                        (should (string-match-p
                                 "invalid arguments for tool roundtrip: opts\\.times: .*integer"
                                 (toolspec-mcprt-test--tool-message second "bad")))))
                    ;; Only the good call left this Emacs, and A's
                    ;; function ran once, for it.
                    (should (equal (cl-loop for (dir method params)
                                            in (toolspec-mcp--server-trace (gethash "emacs" toolspec-mcp--connections))
                                            when (and (eq dir 'out) (equal method "tools/call"))
                                            collect (toolspec-mcp--json (alist-get 'arguments params)))
                                   (list toolspec-mcprt-test--good-args)))
                    (should (equal (toolspec-mcprt-test--read (expand-file-name "calls" dir))
                                   "(\"ho\" (:times 2 :bang t) 3)\n"))))
              (toolspec-mcp-disconnect "emacs"))))
      (when (and emacs-a (process-live-p emacs-a))
        (delete-process emacs-a))
      (when emacs-a (kill-buffer (process-buffer emacs-a)))
      (delete-directory dir t))))

(provide 'toolspec-mcp-roundtrip-test)
;;; toolspec-mcp-roundtrip-test.el ends here
