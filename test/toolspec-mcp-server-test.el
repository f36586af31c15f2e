;;; toolspec-mcp-server-test.el --- Tests of the MCP server -*- lexical-binding: t -*-

;;; Commentary:

;; The server of toolspec-mcp-server.el, listening on a real local
;; socket in a temporary directory, talked to by a client process of
;; this Emacs line by line, as `toolspec serve' does.  The tools are
;; made by real gptel (`gptel-make-tool').  The full chain (the Python
;; MCP SDK's client -> `toolspec serve' -> Emacs) is in test/mcp_serve.rs.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'gptel)
(require 'toolspec-mcp-server)

(defvar toolspec-mcps-test--category "toolspec-mcps-test"
  "The gptel category of the tools made here.")

(defun toolspec-mcps-test--make-tools ()
  "Make the test tools in gptel."
  (gptel-make-tool :name "add" :category toolspec-mcps-test--category
                   :description "Add two integers."
                   :args (list '(:name "a" :type integer :description "first")
                               '(:name "b" :type integer :description "second"))
                   :function (lambda (a b) (number-to-string (+ a b))))
  (gptel-make-tool :name "later" :category toolspec-mcps-test--category :async t
                   :description "Answer later."
                   :args (list '(:name "word" :type string :enum ["hi" "ho"]))
                   :function (lambda (callback word)
                               (run-at-time 0.05 nil callback (concat word "!"))))
  (gptel-make-tool :name "boom" :category toolspec-mcps-test--category
                   :description "Fails."
                   :args (list '(:name "flag" :type boolean :optional t))
                   :function (lambda (flag) (error "Boom with flag %S" flag)))
  (gptel-make-tool :name "hidden" :category "toolspec-mcps-other"
                   :description "Never exposed."
                   :function (lambda () "secret")))

(defmacro toolspec-mcps-test--with-server (&rest body)
  "Run BODY with the server on a temporary socket and the tools made."
  (declare (indent 0) (debug t))
  `(let* ((dir (make-temp-file "toolspec-mcps" t))
          (toolspec-mcp-server-socket (expand-file-name "sock/mcp.sock" dir))
          (toolspec-mcp-server-tools (list (list :category toolspec-mcps-test--category)))
          (toolspec-mcp-server-poll-interval 0.1)
          (gptel--known-tools nil))
     (toolspec-mcps-test--make-tools)
     (unwind-protect
         (progn (toolspec-mcp-server-mode 1) ,@body)
       (toolspec-mcp-server-mode -1)
       (delete-directory dir t))))

(defun toolspec-mcps-test--connect ()
  "A client connection to the server: a process whose lines are kept."
  (let ((proc (make-network-process :name "toolspec-mcps-client" :family 'local
                                    :service toolspec-mcp-server-socket :noquery t
                                    :coding 'utf-8-unix)))
    (process-put proc 'lines nil)
    (process-put proc 'partial "")
    (set-process-filter proc (lambda (p s)
                               (let ((all (concat (process-get p 'partial) s)))
                                 (while (string-match "\n" all)
                                   (process-put p 'lines (append (process-get p 'lines)
                                                                 (list (substring all 0 (match-beginning 0)))))
                                   (setq all (substring all (match-end 0))))
                                 (process-put p 'partial all))))
    proc))

(defun toolspec-mcps-test--next (proc &optional timeout)
  "The next line PROC received, parsed as an alist, within TIMEOUT seconds."
  (let ((end (+ (float-time) (or timeout 5))))
    (while (and (null (process-get proc 'lines)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (let ((line (pop (process-get proc 'lines))))
      (process-put proc 'lines (cdr (process-get proc 'lines)))
      (should line)
      (cons line (json-parse-string line :object-type 'alist :null-object :null
                                    :false-object :json-false)))))

(defun toolspec-mcps-test--ask (proc message)
  "Send MESSAGE (JSON text) to PROC and return the answer as (TEXT . ALIST)."
  (process-send-string proc (concat message "\n"))
  (toolspec-mcps-test--next proc))

(defun toolspec-mcps-test--call-text (answer)
  "The text and error flag of the `tools/call' ANSWER, as (TEXT . ERROR)."
  (let ((result (alist-get 'result (cdr answer))))
    (cons (alist-get 'text (aref (alist-get 'content result) 0))
          (eq (alist-get 'isError result) t))))

(ert-deftest toolspec-mcps-handshake-list-and-calls ()
  "Handshake era: initialize, tools/list as toolspec-export writes, calls."
  (toolspec-mcps-test--with-server
    (should (equal (logand (file-modes (file-name-directory toolspec-mcp-server-socket)) #o777) #o700))
    (let ((c (toolspec-mcps-test--connect)))
      (let ((init (cdr (toolspec-mcps-test--ask
                        c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"))))
        (should (equal (alist-get 'protocolVersion (alist-get 'result init)) "2025-06-18"))
        (should (eq (alist-get 'listChanged (alist-get 'tools (alist-get 'capabilities (alist-get 'result init)))) t)))
      ;; An unknown version gets the newest this server speaks.
      (should (equal (alist-get 'protocolVersion
                                (alist-get 'result (cdr (toolspec-mcps-test--ask
                                                         c "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}"))))
                     "2025-11-25"))
      (process-send-string c "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
      (should (equal (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"))
                     '((jsonrpc . "2.0") (id . 2) (result))))
      ;; tools/list: byte for byte the tools of `toolspec-export' in dialect mcp.
      (let* ((answer (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"))
             (export (toolspec-export (mapcar #'toolspec-mcp-server-tool-plist
                                              (toolspec-mcp-server-exposed-tools))
                                      'mcp)))
        (should (equal (car answer)
                       (concat "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"
                               (toolspec-mcp-server--json (json-parse-string export)) "}")))
        (should (equal (mapcar (lambda (tool) (alist-get 'name tool))
                               (alist-get 'tools (alist-get 'result (cdr answer))))
                       '("boom" "later" "add")))
        ;; The schema of a plain gptel tool is what `toolspec-export' writes for it.
        ;; (Its category follows, in `_meta'.)
        (let ((listed (aref (alist-get 'tools (alist-get 'result (cdr answer))) 2)))
          (should (equal (cl-subseq listed 0 3)
                         (append (aref (alist-get 'tools (json-parse-string
                                                          (toolspec-export (list (gptel-get-tool (list toolspec-mcps-test--category "add"))) 'mcp)
                                                          :object-type 'alist))
                                       0)
                                 nil)))
          (should (equal (nth 3 listed) '(_meta (toolspec/category . "toolspec-mcps-test"))))))
      ;; A sync call.
      (should (equal (toolspec-mcps-test--call-text
                      (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":40}}}"))
                     '("42" . nil)))
      ;; An async call.
      (should (equal (toolspec-mcps-test--call-text
                      (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"later\",\"arguments\":{\"word\":\"ho\"}}}"))
                     '("ho!" . nil)))
      ;; A failing tool: its error message, as an error result; false reaches it as nil.
      (should (equal (toolspec-mcps-test--call-text
                      (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"boom\",\"arguments\":{\"flag\":false}}}"))
                     '("Error: tool boom failed: Boom with flag nil" . t)))
      ;; Bad arguments never reach the function: the checker's problem.
      (let ((answer (toolspec-mcps-test--call-text
                     (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"later\",\"arguments\":{\"word\":\"(delete-file \\\"x\\\")\"}}}"))))
        (should (cdr answer))
        (should (string-match-p "\\`Error: invalid arguments for tool later: word: " (car answer))))
      (let ((answer (toolspec-mcps-test--call-text
                     (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"2\"}}}"))))
        (should (cdr answer))
        (should (string-match-p "a: .*integer" (car answer)))
        (should (string-match-p "b" (car answer))))
      ;; A tool not exposed is unknown.
      (should (equal (alist-get 'code (alist-get 'error (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"hidden\",\"arguments\":{}}}"))))
                     -32602))
      ;; Not JSON, unknown methods.
      (should (equal (alist-get 'code (alist-get 'error (cdr (toolspec-mcps-test--ask c "{nope"))))
                     -32700))
      (should (equal (alist-get 'code (alist-get 'error (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"eval\",\"params\":{}}"))))
                     -32601))
      (should (equal (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}"))
                     '((jsonrpc . "2.0") (id . 11) (result))))
      ;; A change of the exposed set reaches the client.
      (gptel-make-tool :name "new" :category toolspec-mcps-test--category
                       :description "New." :function (lambda () "new"))
      (should (equal (alist-get 'method (cdr (toolspec-mcps-test--next c 3)))
                     "notifications/tools/list_changed"))
      (delete-process c))))

(ert-deftest toolspec-mcps-modern-era ()
  "2026-07-28: server/discover, _meta versions, resultType, subscriptions."
  (toolspec-mcps-test--with-server
    (let ((c (toolspec-mcps-test--connect))
          (meta "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"))
      (let ((r (alist-get 'result (cdr (toolspec-mcps-test--ask
                                        c (format "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{%s}}" meta))))))
        (should (equal (alist-get 'supportedVersions r) ["2026-07-28" "2025-11-25" "2025-06-18" "2025-03-26"]))
        (should (equal (alist-get 'resultType r) "complete")))
      (let ((r (alist-get 'result (cdr (toolspec-mcps-test--ask
                                        c (format "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{%s}}" meta))))))
        (should (equal (length (alist-get 'tools r)) 3))
        (should (equal (alist-get 'resultType r) "complete")))
      (let ((r (alist-get 'result (cdr (toolspec-mcps-test--ask
                                        c (format "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":1},%s}}" meta))))))
        (should (equal (alist-get 'resultType r) "complete"))
        (should (equal (alist-get 'text (aref (alist-get 'content r) 0)) "2")))
      ;; An unsupported version: -32022 with the supported ones.
      (let ((e (alist-get 'error (cdr (toolspec-mcps-test--ask
                                       c "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\"}}}")))))
        (should (equal (alist-get 'code e) -32022))
        (should (equal (alist-get 'supported (alist-get 'data e)) ["2026-07-28"])))
      ;; subscriptions/listen: acknowledged, then list changes on it.
      (let ((ack (cdr (toolspec-mcps-test--ask
                       c (format "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{\"toolsListChanged\":true},%s}}" meta)))))
        (should (equal (alist-get 'method ack) "notifications/subscriptions/acknowledged"))
        (should (equal (alist-get 'io.modelcontextprotocol/subscriptionId (alist-get '_meta (alist-get 'params ack))) "s1")))
      (setq toolspec-mcp-server-tools '("add"))
      (let ((n (cdr (toolspec-mcps-test--next c 3))))
        (should (equal (alist-get 'method n) "notifications/tools/list_changed"))
        (should (equal (alist-get 'io.modelcontextprotocol/subscriptionId (alist-get '_meta (alist-get 'params n))) "s1")))
      (delete-process c))))

(ert-deftest toolspec-mcps-nothing-by-default ()
  "With `toolspec-mcp-server-tools' nil, no tool is listed or callable."
  (toolspec-mcps-test--with-server
    (setq toolspec-mcp-server-tools nil)
    (let ((c (toolspec-mcps-test--connect)))
      (should (equal (car (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"))
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}"))
      (should (equal (alist-get 'code (alist-get 'error (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}"))))
                     -32602))
      (delete-process c))))

(ert-deftest toolspec-mcps-confirm ()
  "A :confirm tool asks; a refusal reaches the client as an error result."
  (toolspec-mcps-test--with-server
    (gptel-make-tool :name "rm" :category toolspec-mcps-test--category :confirm t
                     :description "Remove." :args (list '(:name "path" :type string))
                     :function (lambda (path) (concat "removed " path)))
    (let ((c (toolspec-mcps-test--connect))
          (asked nil))
      (dolist (answer '("n" "y"))
        ;; The user's answer (the real `y-or-n-p', reading the answer
        ;; from Emacs's standard input, is in test/mcp_serve.rs).
        (let ((toolspec-mcp-server-confirm-function
               (lambda (prompt) (push prompt asked) (equal answer "y"))))
          (let ((r (toolspec-mcps-test--call-text
                    (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\",\"arguments\":{\"path\":\"/tmp/x\"}}}"))))
            (should (equal r (if (equal answer "y")
                                 '("removed /tmp/x" . nil)
                               '("Error: the user declined to run tool rm." . t)))))))
      (should (equal (length asked) 2))
      (should (string-match-p "run tool rm with {\"path\":\"/tmp/x\"}" (car asked)))
      (delete-process c))))

(ert-deftest toolspec-mcps-status ()
  "M-x toolspec-mcp-server-status counts clients and calls; l shows the log."
  (toolspec-mcps-test--with-server
    (let ((c (toolspec-mcps-test--connect)))
      (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}")
      (save-window-excursion
        (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-mcp-server-status" (kbd "RET")))
        (with-current-buffer "*toolspec-mcp-server*"
          (should (string-match-p "^MCP server: on$" (buffer-string)))
          (should (string-match-p "^Clients: +1 connected" (buffer-string)))
          (should (string-match-p "^Calls: +1 (0 errors, 0 refused by you)" (buffer-string)))
          (should (string-match-p "^Tools: +3 exposed" (buffer-string)))
          (should (string-match-p "^  add +toolspec-mcps-test$" (buffer-string))))
        (set-buffer "*toolspec-mcp-server*")
        (execute-kbd-macro "l")
        (should (equal (buffer-name (window-buffer (selected-window))) "*toolspec-mcp-server-log*"))
        (with-current-buffer "*toolspec-mcp-server-log*"
          (should (string-match-p "call add {\"a\":1,\"b\":2}" (buffer-string)))))
      (delete-process c))))

(ert-deftest toolspec-mcps-install ()
  "M-x toolspec-mcp-server-install shows the diff, writes only on y, keeps the rest."
  (let* ((dir (file-name-as-directory (make-temp-file "toolspec-mcps-install" t)))
         (file (expand-file-name ".mcp.json" dir))
         (before "{\"mcpServers\":{\"fs\":{\"command\":\"npx\",\"args\":[\"-y\",\"x\"]}},\"other\":false}\n")
         (toolspec-mcp-server-socket nil))
    (unwind-protect
        (progn
          (write-region before nil file)
          (save-window-excursion
            (dolist (answer '("n" "y"))
              (execute-kbd-macro (vconcat (kbd "M-x") "toolspec-mcp-server-install" (kbd "RET")
                                          "Another file" (kbd "RET")
                                          (kbd "C-a C-k") file (kbd "RET") answer))
              (with-current-buffer "*toolspec-mcp-server-install*"
                (should (string-match-p "^\\+ *\"emacs\": {" (buffer-string)))
                (should (string-match-p "^\\+ *\"serve\"" (buffer-string))))
              (when (equal answer "n")
                (should (equal (with-temp-buffer (insert-file-contents file) (buffer-string)) before)))))
          (let ((config (json-parse-string (with-temp-buffer (insert-file-contents file) (buffer-string))
                                           :object-type 'alist :false-object :json-false)))
            (should (equal (mapcar #'car (alist-get 'mcpServers config)) '(fs emacs)))
            (should (equal (alist-get 'args (alist-get 'fs (alist-get 'mcpServers config))) ["-y" "x"]))
            (should (equal (alist-get 'args (alist-get 'emacs (alist-get 'mcpServers config))) ["serve"]))
            (should (eq (alist-get 'other config) :json-false))
            (should (equal (alist-get 'command (alist-get 'emacs (alist-get 'mcpServers config)))
                           (toolspec--program))))
          ;; Again: nothing to change.
          (should (equal (toolspec-mcp-server-install-text file)
                         (with-temp-buffer (insert-file-contents file) (buffer-string)))))
      (delete-directory dir t))))

(ert-deftest toolspec-mcps-schema-extra ()
  "Root `$defs' of `toolspec-mcp-server-tool-properties' are listed and checked."
  (toolspec-mcps-test--with-server
    (gptel-make-tool :name "where" :category toolspec-mcps-test--category
                     :description "Where." :args (list '(:name "address" :$ref "#/$defs/address"))
                     :function (lambda (address) (plist-get address :city)))
    (let ((toolspec-mcp-server-tool-properties
           '(("where" :schema-extra (:$defs (:address (:type "object" :properties (:city (:type "string"))
                                                           :required ["city"]))
                                     :additionalProperties :json-false))))
          (c (toolspec-mcps-test--connect)))
      (let* ((tools (alist-get 'tools (alist-get 'result (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}")))))
             (schema (alist-get 'inputSchema (aref tools 0))))
        (should (equal (alist-get 'required (alist-get 'address (alist-get '$defs schema))) ["city"]))
        (should (eq (alist-get 'additionalProperties schema) :json-false)))
      (should (equal (toolspec-mcps-test--call-text
                      (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"where\",\"arguments\":{\"address\":{\"city\":\"Oslo\"}}}}"))
                     '("Oslo" . nil)))
      (let ((r (toolspec-mcps-test--call-text
                (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"where\",\"arguments\":{\"address\":{}}}}"))))
        (should (cdr r))
        (should (string-match-p "address\\.city: required argument missing" (car r))))
      (delete-process c))))

(ert-deftest toolspec-mcps-output-schema ()
  "A declared `outputSchema' is listed; a JSON object result is structuredContent too."
  (toolspec-mcps-test--with-server
    (gptel-make-tool :name "stats" :category toolspec-mcps-test--category
                     :description "Stats." :function (lambda () "{\"count\":3}"))
    (let ((toolspec-mcp-server-tool-properties
           '(("stats" :title "Statistics"
              :outputSchema (:type "object" :properties (:count (:type "integer"))))))
          (c (toolspec-mcps-test--connect)))
      (let ((tool (aref (alist-get 'tools (alist-get 'result (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}")))) 0)))
        (should (equal (alist-get 'title tool) "Statistics"))
        (should (equal (alist-get 'outputSchema tool) '((type . "object") (properties (count (type . "integer")))))))
      (let ((result (alist-get 'result (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"stats\",\"arguments\":{}}}")))))
        (should (equal (alist-get 'structuredContent result) '((count . 3))))
        (should (equal (alist-get 'text (aref (alist-get 'content result) 0)) "{\"count\":3}")))
      ;; Without a declared outputSchema, text only.
      (let* ((toolspec-mcp-server-tool-properties nil)
             (result (alist-get 'result (cdr (toolspec-mcps-test--ask c "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"stats\",\"arguments\":{}}}")))))
        (should-not (assq 'structuredContent result)))
      (delete-process c))))

(provide 'toolspec-mcp-server-test)
;;; toolspec-mcp-server-test.el ends here
