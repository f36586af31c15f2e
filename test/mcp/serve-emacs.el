;;; serve-emacs.el --- An Emacs serving gptel tools over MCP, for test/mcp_serve.rs -*- lexical-binding: t -*-

;;; Commentary:

;; Run in batch by test/mcp/serve_client.py with the socket and an
;; output directory in the environment.  Tools are made by real gptel;
;; the mode is turned on; the tools' exports are written for the client
;; to compare with what it lists.  Confirmation questions are asked by
;; the real `y-or-n-p', which in batch reads the answer from standard
;; input, where the client types it.

;;; Code:

(require 'gptel)
(require 'toolspec-mcp-server)

(defvar serve-emacs--out (getenv "TOOLSPEC_TEST_OUT"))

(gptel-make-tool :name "add" :category "mcptest"
                 :description "Add two integers."
                 :args (list '(:name "a" :type integer :description "first addend")
                             '(:name "b" :type integer :description "second addend"))
                 :function (lambda (a b) (number-to-string (+ a b))))
(gptel-make-tool :name "shout" :category "mcptest" :async t
                 :description "Say a word louder, later."
                 :args (list '(:name "word" :type string :enum ["hi" "ho"])
                             '(:name "opts" :type object :optional t
                                     :properties (:times (:type integer :minimum 1 :maximum 3)
                                                  :bang (:type boolean))
                                     :required ["times"]))
                 :function (lambda (callback word opts)
                             (run-at-time 0.1 nil callback
                                          (let ((times (or (plist-get opts :times) 1)))
                                            (concat (mapconcat #'identity (make-list times (upcase word)) " ")
                                                    (if (plist-get opts :bang) "!" ""))))))
(gptel-make-tool :name "fail" :category "mcptest"
                 :description "Always fails."
                 :args (list '(:name "why" :type string))
                 :function (lambda (why) (error "Failed because %s" why)))
(gptel-make-tool :name "erase" :category "mcptest" :confirm t
                 :description "Erase a note (asks first)."
                 :args (list '(:name "note" :type string))
                 :function (lambda (note) (format "erased %s" note)))
(gptel-make-tool :name "grow" :category "mcptest"
                 :description "Make one more tool, \"grown\"."
                 :function (lambda ()
                             (gptel-make-tool :name "grown" :category "mcptest"
                                              :description "Made by grow."
                                              :function (lambda () "grown here"))
                             "made"))
(gptel-make-tool :name "bounce" :category "mcptest"
                 :description "Turn the server off, and on again 1.5 s later."
                 :function (lambda ()
                             (run-at-time 0.1 nil #'toolspec-mcp-server-mode -1)
                             (run-at-time 1.5 nil #'toolspec-mcp-server-mode 1)
                             "bouncing"))
(gptel-make-tool :name "private" :category "elsewhere"
                 :description "Not exposed." :function (lambda () "secret"))

(setq toolspec-mcp-server-tools '((:category "mcptest"))
      toolspec-mcp-server-tool-properties
      '(("add" :title "Add numbers" :annotations (:readOnlyHint t)
         :outputSchema nil))
      toolspec-mcp-server-poll-interval 0.2)
(toolspec-mcp-server-mode 1)
(toolspec-export (mapcar #'toolspec-mcp-server-tool-plist (toolspec-mcp-server-exposed-tools))
                 'mcp (expand-file-name "export-plists.json" serve-emacs--out))
(toolspec-export (toolspec-mcp-server-exposed-tools)
                 'mcp (expand-file-name "export-gptel.json" serve-emacs--out))
(message "READY")
(while t (accept-process-output nil 0.1))
;;; serve-emacs.el ends here
