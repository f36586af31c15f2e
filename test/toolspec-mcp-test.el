;;; toolspec-mcp-test.el --- Real MCP servers' tools through real gptel -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests of toolspec-mcp.el against real MCP servers, installed by
;; scripts/setup-providers.sh from npm and PyPI into .deps/providers (or
;; $TOOLSPEC_PROVIDERS) and started on stdio: filesystem on a temporary
;; directory, memory on a temporary file, everything, git on a temporary
;; repository, time; and test/mcp-test-server.py, a small server of our
;; own for list changes, pagination, errors and protocol versions.
;; gptel is the real package; the model is test/toolspec-server.el, a
;; scripted OpenAI-compatible server on 127.0.0.1.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'url)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'toolspec-mcp)
(require 'gptel)
(require 'gptel-openai)
(require 'toolspec-server)

(defvar url-proxy-services)

(defconst toolspec-mcp-test--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "Directory of this file.")

(defconst toolspec-mcp-test--root
  (expand-file-name ".." toolspec-mcp-test--directory)
  "The top directory of the source tree.")

(defconst toolspec-mcp-test--timeout 30
  "Seconds a server or a conversation may take before the test fails.")

(defvar toolspec-mcp-test--setup-done nil
  "Non-nil once scripts/setup-providers.sh succeeded in this Emacs.")

(defun toolspec-mcp-test--providers ()
  "The directory of the installed MCP servers, set up if needed."
  (let ((dir (or (getenv "TOOLSPEC_PROVIDERS")
                 (expand-file-name ".deps/providers" toolspec-mcp-test--root))))
    (unless toolspec-mcp-test--setup-done
      (with-temp-buffer
        (let ((default-directory toolspec-mcp-test--root)
              (process-environment (cons (concat "TOOLSPEC_PROVIDERS=" dir) process-environment)))
          (unless (eq 0 (call-process "bash" nil t nil "scripts/setup-providers.sh"))
            (ert-fail (list "scripts/setup-providers.sh failed" (buffer-string))))))
      (setq toolspec-mcp-test--setup-done t))
    dir))

(defun toolspec-mcp-test--npm (server &rest args)
  "The config of npm MCP server SERVER (e.g. \"server-memory\") with ARGS."
  (list :command "node"
        :args (cons (expand-file-name (format "npm/node_modules/@modelcontextprotocol/%s/dist/index.js" server)
                                      (toolspec-mcp-test--providers))
                    args)))

(defun toolspec-mcp-test--pypi (program &rest args)
  "The config of PyPI MCP server PROGRAM with ARGS."
  (list :command (expand-file-name (concat "pyenv/bin/" program) (toolspec-mcp-test--providers))
        :args args))

(defun toolspec-mcp-test--own (log &rest args)
  "The config of test/mcp-test-server.py logging to LOG, with ARGS.
ARGS may start with \"--ask\", to list the tool `ask'."
  (let ((options (and (equal (car args) "--ask") (list (pop args)))))
    (list :command "python3"
          :args (append (list (expand-file-name "mcp-test-server.py" toolspec-mcp-test--directory))
                        options (list log) args))))

(defmacro toolspec-mcp-test--with (servers &rest body)
  "Run BODY with SERVERS as `toolspec-mcp-servers' and empty registries.
Every server connected is disconnected at the end."
  (declare (indent 1) (debug t))
  `(let ((toolspec-mcp-servers ,servers)
         (toolspec-mcp--connections (make-hash-table :test #'equal))
         (toolspec-mcp-trusted-servers nil)
         (gptel--known-tools nil)
         (gptel-tools nil)
         (toolspec-gptel--registered (make-hash-table :test 'equal)))
     (unwind-protect
         (progn ,@body)
       (let (names)
         (maphash (lambda (k _) (push k names)) toolspec-mcp--connections)
         (mapc #'toolspec-mcp-disconnect names)))))

(defun toolspec-mcp-test--wait (what pred &optional timeout)
  "Wait until PRED returns non-nil and return its value; fail naming WHAT.
WHAT may be a list whose functions are called to tell more."
  (let ((deadline (+ (float-time) (or timeout toolspec-mcp-test--timeout)))
        value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "Timed out waiting"
                              (if (consp what)
                                  (mapcar (lambda (w) (if (functionp w) (funcall w) w)) what)
                                what))))))

(defun toolspec-mcp-test--server (name)
  "The connection of server NAME."
  (gethash name toolspec-mcp--connections))

(defun toolspec-mcp-test--ready (name)
  "Connect server NAME and wait until its tools are registered."
  (toolspec-mcp-connect name)
  (toolspec-mcp-test--wait
   (format "server %s ready" name)
   (lambda ()
     (let ((server (toolspec-mcp-test--server name)))
       (when (memq (toolspec-mcp--server-state server) '(failed))
         (ert-fail (list "server failed" name (toolspec-mcp--server-error server)
                         (with-current-buffer (toolspec-mcp--log-buffer server) (buffer-string)))))
       (eq (toolspec-mcp--server-state server) 'ready)))))

(defun toolspec-mcp-test--tool (server tool)
  "The gptel tool TOOL of MCP server SERVER."
  (or (cdr (assoc tool (cdr (assoc (concat "mcp-" server) gptel--known-tools))))
      (ert-fail (list "No such tool" server tool))))

(defun toolspec-mcp-test--calls (name)
  "The tools/call requests server NAME was sent, oldest first: (TOOL . ARGS).
ARGS is the arguments object as sent, read back as an alist."
  (cl-loop for (dir method params) in (reverse (toolspec-mcp--server-trace (toolspec-mcp-test--server name)))
           when (and (eq dir 'out) (equal method "tools/call"))
           collect (cons (alist-get 'name params)
                         (json-parse-string (toolspec-mcp--json (alist-get 'arguments params))
                                            :object-type 'alist))))

(defun toolspec-mcp-test--chat (model prompt tools &optional during)
  "Send PROMPT with TOOLS through `gptel-request' to MODEL; wait for the end.
Tool calls run without confirmation.  DURING, if non-nil, is called
in the request's buffer once it is sent.  Return the final response."
  (plist-get (toolspec-server-chat model prompt tools during toolspec-mcp-test--timeout) :text))

(defun toolspec-mcp-test--tool-message (request id)
  "The content of the tool message answering call ID in REQUEST."
  (plist-get (cl-find-if (lambda (m) (and (equal (plist-get m :role) "tool")
                                          (equal (plist-get m :tool_call_id) id)))
                         (append (plist-get request :messages) nil))
             :content))

(defun toolspec-mcp-test--run (server tool &rest args)
  "Call TOOL of SERVER as gptel would, with ARGS; wait for and return its result."
  (let (result)
    (apply (gptel-tool-function (toolspec-mcp-test--tool server tool))
           (lambda (r) (setq result r)) args)
    (toolspec-mcp-test--wait (format "result of %s" tool) (lambda () result))))

(defun toolspec-mcp-test--log-lines (log)
  "The messages test/mcp-test-server.py logged in LOG, parsed."
  (when (file-exists-p log)
    (with-temp-buffer
      (insert-file-contents log)
      (mapcar (lambda (l) (json-parse-string l :object-type 'alist))
              (split-string (buffer-string) "\n" t)))))

;;;; Real servers through real gptel

(ert-deftest toolspec-mcp-filesystem ()
  "The filesystem server's tools: the model reads and writes through gptel."
  (let ((root (make-temp-file "toolspec-mcp-fs" t)))
    (unwind-protect
        (progn
          (setq root (file-truename root))
          (with-temp-file (expand-file-name "notes.txt" root) (insert "coffee with milk\n"))
          (toolspec-mcp-test--with `(("fs" ,@(toolspec-mcp-test--npm "server-filesystem" root)))
            (toolspec-mcp-test--ready "fs")
            (should (equal (gptel-tool-category (toolspec-mcp-test--tool "fs" "read_text_file")) "mcp-fs"))
            (let ((tools (list (toolspec-mcp-test--tool "fs" "read_text_file")
                               (toolspec-mcp-test--tool "fs" "write_file"))))
              (toolspec-server-with
                  (model (list (toolspec-server-tool-calls-response
                                `(("c1" "read_text_file" ,(json-serialize `((path . ,(expand-file-name "notes.txt" root)))))
                                  ("c2" "write_file" ,(json-serialize `((path . ,(expand-file-name "out.txt" root))
                                                                        (content . "written by the model"))))))
                               (toolspec-server-text-response "Done.")))
                (should (equal (toolspec-mcp-test--chat model "Go" tools) "Done."))
                (let ((second (nth 1 (toolspec-server-requests model))))
                  (should (string-match-p "coffee with milk" (toolspec-mcp-test--tool-message second "c1")))
                  (should (string-match-p "Successfully wrote" (toolspec-mcp-test--tool-message second "c2"))))))
            (should (equal (with-temp-buffer (insert-file-contents (expand-file-name "out.txt" root))
                                             (buffer-string))
                           "written by the model"))
            (should (equal (mapcar #'car (toolspec-mcp-test--calls "fs")) '("read_text_file" "write_file")))))
      (delete-directory root t))))

(ert-deftest toolspec-mcp-memory-bad-call ()
  "A bad call is answered with its problem and never reaches the memory server."
  (let ((file (make-temp-file "toolspec-mcp-memory" nil ".jsonl")))
    (delete-file file)
    (unwind-protect
        (toolspec-mcp-test--with `(("memory" ,@(toolspec-mcp-test--npm "server-memory")
                                    :env (("MEMORY_FILE_PATH" . ,file))))
          (toolspec-mcp-test--ready "memory")
          ;; The TypeScript SDK's servers speak the handshake revisions.
          (should (eq (toolspec-mcp--server-era (toolspec-mcp-test--server "memory")) 'legacy))
          (should (equal (toolspec-mcp--server-protocol (toolspec-mcp-test--server "memory")) "2025-11-25"))
          (toolspec-server-with
              (model (list (toolspec-server-tool-calls-response
                            '(("bad" "create_entities" "{\"entities\":\"Ada\"}")))
                           (toolspec-server-tool-calls-response
                            '(("good" "create_entities" "{\"entities\":[{\"name\":\"Ada\",\"entityType\":\"person\",\"observations\":[\"wrote programs\"]}]}")))
                           (toolspec-server-tool-calls-response
                            '(("read" "read_graph" "{}")))
                           (toolspec-server-text-response "Done.")))
            (toolspec-mcp-test--chat model "Go" (list (toolspec-mcp-test--tool "memory" "create_entities")
                                                      (toolspec-mcp-test--tool "memory" "read_graph")))
            (let ((requests (toolspec-server-requests model)))
              (should (string-match-p "invalid arguments for tool create_entities: entities"
                                      (toolspec-mcp-test--tool-message (nth 1 requests) "bad")))
              (should (string-match-p "wrote programs" (toolspec-mcp-test--tool-message (nth 3 requests) "read")))))
          ;; The bad call never reached the server; the good one did, as sent.
          (should (equal (toolspec-mcp-test--calls "memory")
                         '(("create_entities" (entities . [((name . "Ada") (entityType . "person")
                                                            (observations . ["wrote programs"]))]))
                           ("read_graph"))))
          (should (string-match-p "\"Ada\"" (with-temp-buffer (insert-file-contents file) (buffer-string)))))
      (when (file-exists-p file) (delete-file file)))))

(ert-deftest toolspec-mcp-everything ()
  "The everything server: text, structured content, media, links, confirmation."
  (toolspec-mcp-test--with `(("everything" ,@(toolspec-mcp-test--npm "server-everything")))
    (toolspec-mcp-test--ready "everything")
    (toolspec-server-with
        (model (list (toolspec-server-tool-calls-response
                      '(("e" "echo" "{\"message\":\"hello\"}")
                        ("s" "get-structured-content" "{\"location\":\"Chicago\"}")
                        ("i" "get-tiny-image" "{}")
                        ("l" "get-resource-links" "{\"count\":2}")))
                     (toolspec-server-text-response "Done.")))
      (toolspec-mcp-test--chat model "Go" (mapcar (lambda (n) (toolspec-mcp-test--tool "everything" n))
                                                  '("echo" "get-structured-content" "get-tiny-image" "get-resource-links")))
      (let ((second (nth 1 (toolspec-server-requests model))))
        (should (equal (toolspec-mcp-test--tool-message second "e") "Echo: hello"))
        (let ((structured (json-parse-string (toolspec-mcp-test--tool-message second "s") :object-type 'alist)))
          (should (numberp (alist-get 'temperature structured)))
          (should (stringp (alist-get 'conditions structured))))
        (should (string-match-p "\\[image: image/png, [0-9.]+k\\]" (toolspec-mcp-test--tool-message second "i")))
        (should (string-match-p "\\[resource link: demo://resource/dynamic/[a-z]+/1 "
                                (toolspec-mcp-test--tool-message second "l")))))
    ;; Progress notifications are shown, and logged.
    (should (string-match-p "Long running operation completed"
                            (toolspec-mcp-test--run "everything" "trigger-long-running-operation" 1 3)))
    (with-current-buffer (toolspec-mcp--log-buffer (toolspec-mcp-test--server "everything"))
      (should (string-match-p "progress of trigger-long-running-operation: 3/3" (buffer-string))))
    (should (= 0 (hash-table-count (toolspec-mcp--server-progress (toolspec-mcp-test--server "everything")))))
    ;; Text beyond ASCII, both ways (gptel's url.el path on Emacs 28
    ;; cannot send it to a model, so it is checked here).
    (should (equal (toolspec-mcp-test--run "everything" "echo" "café ☕") "Echo: café ☕"))
    ;; Untrusted: every tool asks.  Trusted: read-only tools run at once.
    (should (gptel-tool-confirm (toolspec-mcp-test--tool "everything" "echo")))
    (let ((toolspec-mcp-trusted-servers '("everything")))
      (toolspec-mcp-test--ready "everything")
      (should-not (gptel-tool-confirm (toolspec-mcp-test--tool "everything" "echo")))
      (should (gptel-tool-confirm (toolspec-mcp-test--tool "everything" "toggle-simulated-logging"))))))

(ert-deftest toolspec-mcp-git ()
  "The git server (PyPI) on a temporary repository."
  (let ((repo (file-truename (make-temp-file "toolspec-mcp-git" t))))
    (unwind-protect
        (progn
          (let ((default-directory (file-name-as-directory repo)))
            (should (eq 0 (call-process "git" nil nil nil "init" "-q")))
            (should (eq 0 (call-process "git" nil nil nil "-c" "user.email=t@example.invalid" "-c" "user.name=t"
                                        "commit" "-q" "--allow-empty" "-m" "the first commit"))))
          (toolspec-mcp-test--with `(("git" ,@(toolspec-mcp-test--pypi "mcp-server-git" "--repository" repo)))
            (toolspec-mcp-test--ready "git")
            (toolspec-server-with
                (model (list (toolspec-server-tool-calls-response
                              `(("log" "git_log" ,(json-serialize `((repo_path . ,repo) (max_count . 5))))))
                             (toolspec-server-text-response "Done.")))
              (toolspec-mcp-test--chat model "Go" (list (toolspec-mcp-test--tool "git" "git_log")))
              (should (string-match-p "the first commit"
                                      (toolspec-mcp-test--tool-message (nth 1 (toolspec-server-requests model)) "log"))))
            (should (equal (toolspec-mcp-test--calls "git")
                           `(("git_log" (repo_path . ,repo) (max_count . 5)))))
            ;; The Python SDK 2.3 speaks the stateless revision: no
            ;; initialize, the version and capabilities in each request.
            (let ((server (toolspec-mcp-test--server "git")))
              (should (eq (toolspec-mcp--server-era server) 'modern))
              (should (equal (toolspec-mcp--server-protocol server) "2026-07-28"))
              (let ((sent (cl-remove-if-not (lambda (m) (eq (car m) 'out))
                                            (reverse (toolspec-mcp--server-trace server)))))
                (should (equal (mapcar #'cadr sent) '("server/discover" "tools/list" "subscriptions/listen"
                                                      "tools/call")))
                (dolist (m sent)
                  (let ((meta (alist-get '_meta (nth 2 m))))
                    (should (equal (alist-get 'io.modelcontextprotocol/protocolVersion meta) "2026-07-28"))
                    (should (alist-get 'io.modelcontextprotocol/clientCapabilities meta))))))))
      (delete-directory repo t))))

(ert-deftest toolspec-mcp-time-crash ()
  "The time server: a call works, a crash answers \"down\", the restart works."
  (toolspec-mcp-test--with `(("time" ,@(toolspec-mcp-test--pypi "mcp-server-time" "--local-timezone" "UTC")))
    (let ((toolspec-mcp-restart-delays '(1 1)))
      (toolspec-mcp-test--ready "time")
      (toolspec-server-with
          (model (list (toolspec-server-tool-calls-response
                        '(("t" "get_current_time" "{\"timezone\":\"Europe/Paris\"}")))
                       (toolspec-server-text-response "Done.")))
        (toolspec-mcp-test--chat model "Go" (list (toolspec-mcp-test--tool "time" "get_current_time")))
        (should (string-match-p "\"timezone\": *\"Europe/Paris\""
                                (toolspec-mcp-test--tool-message (nth 1 (toolspec-server-requests model)) "t"))))
      (let* ((server (toolspec-mcp-test--server "time"))
             (proc (toolspec-mcp--server-process server)))
        (signal-process proc 'KILL)
        (toolspec-mcp-test--wait "the server down" (lambda () (eq (toolspec-mcp--server-state server) 'down)))
        (should (string-match-p "\\`Error: MCP server time is down"
                                (toolspec-mcp-test--run "time" "get_current_time" "UTC")))
        (toolspec-mcp-test--wait "the restart" (lambda () (eq (toolspec-mcp--server-state server) 'ready)))
        (should-not (eq proc (toolspec-mcp--server-process server)))
        (should (string-match-p "\"timezone\": *\"UTC\""
                                (toolspec-mcp-test--run "time" "get_current_time" "UTC")))))))

;;;; Streamable HTTP

(defun toolspec-mcp-test--free-port ()
  "A TCP port on 127.0.0.1 that nothing listens on now."
  (let* ((proc (make-network-process :name "toolspec-mcp-test-port" :server t :host 'local
                                     :family 'ipv4 :service t :noquery t))
         (port (aref (process-contact proc :local) 4)))
    (delete-process proc)
    port))

(defun toolspec-mcp-test--start-http-everything (port)
  "Start the everything server's streamable HTTP transport on PORT; return it."
  (let* ((buf (generate-new-buffer " *everything-http*"))
         (proc (let ((process-environment (cons (format "PORT=%d" port) process-environment)))
                 (make-process :name "everything-http" :buffer buf :noquery t
                               :command (append (list "node")
                                                (cdr (plist-get (toolspec-mcp-test--npm "server-everything") :args))
                                                (list (car (plist-get (toolspec-mcp-test--npm "server-everything") :args))
                                                      "streamableHttp"))))))
    (toolspec-mcp-test--wait "the HTTP server"
                             (lambda () (with-current-buffer buf
                                          (string-match-p "listening on port" (buffer-string)))))
    proc))

(defun toolspec-mcp-test--stop-http (proc)
  "Stop PROC, an HTTP server process, and its buffer."
  (let ((buf (process-buffer proc)))
    (delete-process proc)
    (when (buffer-live-p buf) (kill-buffer buf))))

(ert-deftest toolspec-mcp-http ()
  "The everything server over streamable HTTP: session, SSE answers, gptel calls."
  (let* ((port (toolspec-mcp-test--free-port))
         (http (toolspec-mcp-test--start-http-everything port))
         (url-proxy-services nil))
    (unwind-protect
        (toolspec-mcp-test--with `(("web" :url ,(format "http://127.0.0.1:%d/mcp" port)
                                    :headers (("X-Test" . "1"))))
          (toolspec-mcp-test--ready "web")
          (let ((server (toolspec-mcp-test--server "web")))
            (should (stringp (toolspec-mcp--server-session server)))
            (should (equal (toolspec-mcp--server-protocol server) "2025-11-25"))
            (should (member "get-sum" (toolspec-mcp--server-tools server)))
            ;; The standing GET stream is open, in the session.
            (toolspec-mcp-test--wait
             "the GET stream"
             (lambda () (cl-some (lambda (st) (and (eq (toolspec-mcp--stream-kind st) 'standing)
                                                   (eql (toolspec-mcp--stream-status st) 200)
                                                   (process-live-p (toolspec-mcp--stream-process st))))
                                 (toolspec-mcp--server-streams server)))))
          (should (equal (toolspec-mcp-test--run "web" "echo" "café ☕") "Echo: café ☕"))
          (toolspec-server-with
              (model (list (toolspec-server-tool-calls-response '(("sum" "get-sum" "{\"a\":2,\"b\":40}")
                                                                  ("bad" "get-sum" "{\"a\":2}")))
                           (toolspec-server-text-response "Done.")))
            (toolspec-mcp-test--chat model "Go" (list (toolspec-mcp-test--tool "web" "get-sum")))
            (let ((second (nth 1 (toolspec-server-requests model))))
              (should (string-match-p "\\b42\\b" (toolspec-mcp-test--tool-message second "sum")))
              (should (string-match-p "invalid arguments for tool get-sum: b"
                                      (toolspec-mcp-test--tool-message second "bad")))))
          (should (equal (toolspec-mcp-test--calls "web") '(("echo" (message . "café ☕"))
                                                            ("get-sum" (a . 2) (b . 40)))))
          ;; The server restarts and forgets the session: the next call
          ;; fails, the client starts a new session, the call after works.
          (let ((session (toolspec-mcp--server-session (toolspec-mcp-test--server "web"))))
            (toolspec-mcp-test--stop-http http)
            (setq http (toolspec-mcp-test--start-http-everything port))
            (should (string-match-p "\\`Error: .*HTTP 40[04]: .*session" (toolspec-mcp-test--run "web" "echo" "x")))
            (toolspec-mcp-test--wait "a new session"
                                     (lambda () (let ((s (toolspec-mcp-test--server "web")))
                                                  (and (eq (toolspec-mcp--server-state s) 'ready)
                                                       (toolspec-mcp--server-session s)
                                                       (not (equal (toolspec-mcp--server-session s) session))))))
            (should (equal (toolspec-mcp-test--run "web" "echo" "again") "Echo: again"))))
      (toolspec-mcp-test--stop-http http))))

(ert-deftest toolspec-mcp-sampling ()
  "The everything server's sampling request reaches gptel's model once the user says y."
  (toolspec-server-with
      (model (list (toolspec-server-text-response "Sampled: hello.")
                   (toolspec-server-text-response "Sampled: later.")))
    (toolspec-server-with-gptel model nil
      (toolspec-mcp-test--with `(("everything" ,@(toolspec-mcp-test--npm "server-everything")))
        (let ((toolspec-mcp-sampling 'ask))
          (toolspec-mcp-test--ready "everything")
          ;; y: the server's messages go to the model, its answer back.
          (setq unread-command-events (list ?y))
          (let ((result (toolspec-mcp-test--run "everything" "trigger-sampling-request" "Say hello" 50)))
            (should (string-match-p "Sampled: hello\\." result))
            (should (string-match-p "\"model\": \"test-model\"" result)))
          (should-not unread-command-events)
          (with-current-buffer "*toolspec-mcp sampling*"
            (should (string-match-p "^User: Resource trigger-sampling-request context: Say hello$"
                                    (buffer-string))))
          (let* ((request (car (toolspec-server-requests model)))
                 (messages (append (plist-get request :messages) nil)))
            (should (equal (mapcar (lambda (m) (list (plist-get m :role) (plist-get m :content))) messages)
                           '(("system" "You are a helpful test server.")
                             ("user" "Resource trigger-sampling-request context: Say hello"))))
            (should (equal (plist-get request :max_tokens) 50))
            (should (equal (plist-get request :temperature) 0.7))
            (should-not (plist-get request :tools)))
          ;; While another question is shown, the request waits its turn.
          (let ((toolspec-mcp--asking t) (result nil))
            (setq unread-command-events (list ?y))
            (funcall (gptel-tool-function (toolspec-mcp-test--tool "everything" "trigger-sampling-request"))
                     (lambda (r) (setq result r)) "Later" 50)
            (let ((until (+ (float-time) 1)))
              (while (< (float-time) until) (accept-process-output nil 0.05)))
            (should (equal unread-command-events (list ?y)))
            (should (= (length (toolspec-server-requests model)) 1))
            (setq toolspec-mcp--asking nil)
            (toolspec-mcp-test--wait "the waiting request" (lambda () result))
            (should (string-match-p "Sampled: later\\." result)))
          ;; n, then C-g: declined, the model never asked.
          (dolist (key (list ?n ?\C-g))
            (setq unread-command-events (list ?x key))
            (should (string-match-p "\\`Error: .*User rejected sampling request"
                                    (toolspec-mcp-test--run "everything" "trigger-sampling-request" "Again" 50))))
          (should (= (length (toolspec-server-requests model)) 2)))
        (toolspec-mcp-disconnect "everything")
        ;; Never: no sampling capability, so the server offers no such tool.
        (let ((toolspec-mcp-sampling 'never))
          (toolspec-mcp-test--ready "everything")
          (should (member "echo" (toolspec-mcp--server-tools (toolspec-mcp-test--server "everything"))))
          (should-not (member "trigger-sampling-request"
                              (toolspec-mcp--server-tools (toolspec-mcp-test--server "everything")))))))))

(ert-deftest toolspec-mcp-http-sampling ()
  "Over HTTP, a sampling request inside a tool call's event stream is answered.
The everything server sends it on the stream of the POST that
called the tool, and waits for the answer before it ends that
stream: the client must read the stream as it comes."
  (let* ((port (toolspec-mcp-test--free-port))
         (http (toolspec-mcp-test--start-http-everything port)))
    (unwind-protect
        (toolspec-server-with
            (model (list (toolspec-server-text-response "Sampled over HTTP.")))
          (toolspec-server-with-gptel model nil
            (toolspec-mcp-test--with `(("web" :url ,(format "http://127.0.0.1:%d/mcp" port)))
              (let ((toolspec-mcp-sampling 'ask)
                    (toolspec-mcp-call-timeout 20))
                (toolspec-mcp-test--ready "web")
                (setq unread-command-events (list ?y))
                (should (string-match-p "Sampled over HTTP\\."
                                        (toolspec-mcp-test--run "web" "trigger-sampling-request" "Hi" 20)))
                (should (= (length (toolspec-server-requests model)) 1))))))
      (toolspec-mcp-test--stop-http http))))

(ert-deftest toolspec-mcp-register-logs-each-warning ()
  "Registering a server's tools logs each import warning on a line of its own.
Each line has the time, then the problem as `toolspec-format-problem'
says it (its severity first, once).  The tools reach gptel with
string types, as gptel would make them."
  (toolspec-mcp-test--with nil
    (let* ((server (toolspec-mcp--server-make :name "warned" :state 'connecting))
           (tools (cl-loop for i below 3
                           collect `((name . ,(format "t%d" i))
                                     (inputSchema . ((type . "object")
                                                     (properties . ((x . ((type . "float")))
                                                                    (y . ((type . "dict")))))))))))
      (unwind-protect
          (progn
            (toolspec-mcp--register server tools)
            (should (= (length (toolspec-mcp--server-gptel-tools server)) 3))
            (should (equal (plist-get (car (gptel-tool-args (car (toolspec-mcp--server-gptel-tools server))))
                                      :type)
                           "number"))
            (with-current-buffer (toolspec-mcp--log-buffer server)
              (let ((lines (split-string (buffer-string) "\n" t)))
                (should (= 6 (cl-count-if (lambda (l) (string-match-p "\\`\\[[0-9:]+\\] warning: tools\\[[0-2]\\]\\.inputSchema\\.properties\\.[xy]\\.type: non-standard type name" l))
                                          lines)))
                (should-not (cl-some (lambda (l) (string-match-p "warning: warning" l)) lines)))))
        (kill-buffer (toolspec-mcp--log-buffer server))))))

(ert-deftest toolspec-mcp-sse-parse ()
  "Server-sent events: ids, retry, data lines, CR/LF/CRLF, an event cut short."
  (let ((parsed (toolspec-mcp--sse-parse
                 (concat ": comment\r\nid: e1\r\nretry: 500\r\ndata: \r\n\r\n"
                         "event: message\nid: e2\ndata: {\"a\":\ndata: 1}\n\n"
                         "id: e3\rretry: x\rdata:2\r\r"
                         "id: e4\ndata: cut\r"))))
    (should (equal (car parsed)
                   '((:data "" :id "e1" :retry 500)
                     (:data "{\"a\":\n1}" :id "e2" :retry nil)
                     (:data "2" :id "e3" :retry nil))))
    ;; The rest waits for more; a CR at the end may be half a CRLF.
    (should (equal (cdr parsed) "id: e4\ndata: cut\r"))
    (should (equal (car (toolspec-mcp--sse-parse (concat (cdr parsed) "\n\r\n")))
                   '((:data "cut" :id "e4" :retry nil))))))

;;;; Our own server: list changes, pages, errors, versions

(ert-deftest toolspec-mcp-abort-cancels ()
  "Stopping gptel's request cancels the tool call it waits for, on the server."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("own" ,@(toolspec-mcp-test--own log)))
          (toolspec-mcp-test--ready "own")
          (toolspec-server-with
              (model (list (toolspec-server-tool-calls-response '(("s" "sleep" "{}")))))
            (catch 'toolspec-mcp-test--stopped
              (toolspec-mcp-test--chat
               model "Go" (list (toolspec-mcp-test--tool "own" "sleep"))
               (lambda ()
                 (toolspec-mcp-test--wait
                  "the call on the server"
                  (lambda () (cl-find "tools/call" (toolspec-mcp-test--log-lines log)
                                      :key (lambda (m) (alist-get 'method m)) :test #'equal)))
                 (gptel-abort (current-buffer))
                 (throw 'toolspec-mcp-test--stopped t))))
            (let ((call (cl-find "tools/call" (toolspec-mcp-test--log-lines log)
                                 :key (lambda (m) (alist-get 'method m)) :test #'equal)))
              (toolspec-mcp-test--wait
               "the cancellation on the server"
               (lambda ()
                 (cl-find-if (lambda (m) (and (equal (alist-get 'method m) "notifications/cancelled")
                                              (equal (alist-get 'requestId (alist-get 'params m))
                                                     (alist-get 'id call))))
                             (toolspec-mcp-test--log-lines log)))))
            ;; The model is not asked again, and the call is forgotten.
            (accept-process-output nil 0.5)
            (should (= 1 (length (toolspec-server-requests model))))
            (should-not toolspec-mcp--calls)
            (should (= 0 (hash-table-count (toolspec-mcp--server-pending (toolspec-mcp-test--server "own")))))))
      (delete-file log))))

(ert-deftest toolspec-mcp-list-changed ()
  "Pages are all read; a list change re-registers, active tools stay active."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("own" ,@(toolspec-mcp-test--own log)))
          (toolspec-mcp-test--ready "own")
          (should (equal (toolspec-mcp--server-tools (toolspec-mcp-test--server "own"))
                         '("add" "grow" "fail" "big" "sleep" "crash" "mixed" "badshape")))
          (should (= 4 (cl-count "tools/list" (toolspec-mcp-test--log-lines log)
                                 :key (lambda (m) (alist-get 'method m)) :test #'equal)))
          (let ((old-add (toolspec-mcp-test--tool "own" "add")))
            (setq gptel-tools (list old-add))
            (toolspec-server-with
                (model (list (toolspec-server-tool-calls-response '(("g" "grow" "{}")))
                             (toolspec-server-text-response "Done.")))
              (toolspec-mcp-test--chat model "Go" (list (toolspec-mcp-test--tool "own" "grow"))))
            (toolspec-mcp-test--wait "the extra tool"
                                     (lambda () (assoc "extra" (cdr (assoc "mcp-own" gptel--known-tools)))))
            (let ((new-add (toolspec-mcp-test--tool "own" "add")))
              (should-not (eq new-add old-add))
              (should (equal gptel-tools (list new-add))))
            (should (equal (toolspec-mcp-test--run "own" "extra") "extra ran"))))
      (delete-file log))))

(ert-deftest toolspec-mcp-results ()
  "Errors, media, caps, output schemas, timeouts and cancellation."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("own" ,@(toolspec-mcp-test--own log)))
          (toolspec-mcp-test--ready "own")
          (should (equal (toolspec-mcp-test--run "own" "add" 2 3) "{\"sum\":5}"))
          (should (equal (toolspec-mcp-test--run "own" "fail") "Error: the disk is full"))
          (let ((toolspec-mcp-max-result-size 100))
            (should (equal (toolspec-mcp-test--run "own" "big" 5000)
                           (concat (make-string 100 ?x) "\n[result cut: 100 of 5000 characters shown]"))))
          ;; A message of 300,000 characters comes in many pieces, each
          ;; searched for the line's end once; then the next message.
          (let ((toolspec-mcp-max-result-size 400000))
            (should (equal (toolspec-mcp-test--run "own" "big" 300000) (make-string 300000 ?x)))
            (should (equal (toolspec-mcp-test--run "own" "add" 1 1) "{\"sum\":2}")))
          (should (equal (toolspec-mcp-test--run "own" "mixed")
                         (concat "[image: image/png, 768]\n[audio: audio/wav, 3]\n"
                                 "[resource link: file:///tmp/a.txt (a.txt), text/plain]\n"
                                 "[resource mem://note, text/plain]\nembedded note\n"
                                 "[resource mem://blob: application/octet-stream, 6]")))
          (should (string-match-p "\\`{\"total\":\"seven\"}\nWarning: this result does not match the tool's outputSchema: .*sum"
                                  (toolspec-mcp-test--run "own" "badshape")))
          ;; A bad call of a tool of our own server: its log shows no call.
          (should (string-match-p "invalid arguments for tool add: b"
                                  (toolspec-mcp-test--run "own" "add" 2 "three")))
          (should-not (cl-find "three" (toolspec-mcp-test--log-lines log)
                               :key (lambda (m) (alist-get 'b (alist-get 'arguments (alist-get 'params m))))
                               :test #'equal))
          ;; A call that takes too long is cancelled on the server.
          (let ((toolspec-mcp-call-timeout 0.5))
            (should (string-match-p "\\`Error: tool sleep of MCP server own failed: no answer within 0.5 seconds"
                                    (toolspec-mcp-test--run "own" "sleep"))))
          (toolspec-mcp-test--wait
           "the cancellation on the server"
           (lambda () (cl-find "notifications/cancelled" (toolspec-mcp-test--log-lines log)
                               :key (lambda (m) (alist-get 'method m)) :test #'equal)))
          ;; A crash while a call waits answers it at once.
          (let ((toolspec-mcp-restart-delays '(30)))
            (should (string-match-p "\\`Error: tool crash of MCP server own failed: MCP server own is down"
                                    (toolspec-mcp-test--run "own" "crash")))
            (should (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "own")) 'down))))
      (delete-file log))))

;;;; Elicitation

(defconst toolspec-mcp-test--ask-schema
  (json-serialize
   '((type . "object")
     (properties . ((name . ((type . "string") (title . "Name")))
                    (color . ((type . "string") (enum . ["red" "green" "blue"]) (default . "green")))
                    (count . ((type . "integer") (minimum . 1) (default . 3)))
                    (ok . ((type . "boolean")))
                    (note . ((type . "string")))))
     (required . ["name" "count"])))
  "The requestedSchema the tool `ask' of test/mcp-test-server.py is given.")

(defvar toolspec-mcp-test--ask-answer nil
  "What `toolspec-mcp-test-ask' got: the server's report, parsed.")

(defvar toolspec-mcp-test--ask-with nil
  "The schema `toolspec-mcp-test-ask' gives the tool `ask'.")

(defun toolspec-mcp-test-ask ()
  "Call the tool `ask' of server own and keep its report."
  (interactive)
  (setq toolspec-mcp-test--ask-answer
        (json-parse-string (toolspec-mcp-test--run "own" "ask" toolspec-mcp-test--ask-with)
                           :object-type 'alist :null-object nil :false-object :false)))

(defun toolspec-mcp-test--ask (schema &rest keys)
  "Call the tool `ask' with SCHEMA, typing KEYS into its prompts; return its report.
In batch Emacs, `y-or-n-p' reads a line: y or n is followed by RET."
  (setq toolspec-mcp-test--ask-answer nil
        toolspec-mcp-test--ask-with schema)
  (execute-kbd-macro (apply #'vconcat (kbd "M-x") "toolspec-mcp-test-ask" (kbd "RET") keys))
  toolspec-mcp-test--ask-answer)

(ert-deftest toolspec-mcp-elicitation ()
  "A server's elicitation/create is answered from prompts made from its schema."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("own" ,@(toolspec-mcp-test--own log "--ask")))
          (let ((toolspec-mcp-elicitation t))
            (toolspec-mcp-test--ready "own")
            ;; A required field left empty and numbers out of the schema
            ;; are asked again; the enum completes; an empty optional
            ;; field is left out.
            (let ((report (toolspec-mcp-test--ask
                           toolspec-mcp-test--ask-schema
                           "y" (kbd "RET") (kbd "RET") "Ada" (kbd "RET")
                           "bl" (kbd "TAB") (kbd "RET")
                           "0" (kbd "RET") "2.5" (kbd "RET") "abc" (kbd "RET") "5" (kbd "RET")
                           "y" (kbd "RET") (kbd "RET"))))
              (should (equal (alist-get 'capabilities report) '((form))))
              (should (equal (alist-get 'result report)
                             '((action . "accept")
                               (content . ((name . "Ada") (color . "blue") (count . 5) (ok . t)))))))
            ;; Defaults are offered: RET takes them.
            (should (equal (alist-get 'result (toolspec-mcp-test--ask
                                               toolspec-mcp-test--ask-schema
                                               "y" (kbd "RET") "Bob" (kbd "RET") (kbd "RET") (kbd "RET")
                                               "n" (kbd "RET") "hi" (kbd "RET")))
                           '((action . "accept")
                             (content . ((name . "Bob") (color . "green") (count . 3)
                                         (ok . :false) (note . "hi"))))))
            ;; n at the first question declines; C-g cancels.
            (should (equal (alist-get 'result (toolspec-mcp-test--ask toolspec-mcp-test--ask-schema "n" (kbd "RET")))
                           '((action . "decline"))))
            (should (equal (alist-get 'result (toolspec-mcp-test--ask toolspec-mcp-test--ask-schema
                                                                      "y" (kbd "RET") "Al" (kbd "C-g")))
                           '((action . "cancel")))))
          (toolspec-mcp-disconnect "own")
          ;; Unattended: the defaults, or decline when a required field has none.
          (let ((toolspec-mcp-elicitation 'defaults))
            (toolspec-mcp-test--ready "own")
            (should (equal (alist-get 'result (toolspec-mcp-test--ask toolspec-mcp-test--ask-schema))
                           '((action . "decline"))))
            (should (equal (alist-get 'result
                                      (toolspec-mcp-test--ask
                                       "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\",\"default\":95.5},\"s\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"],\"default\":\"b\"},\"v\":{\"type\":\"boolean\",\"default\":true},\"x\":{\"type\":\"string\"}}}"))
                           '((action . "accept") (content . ((n . 95.5) (s . "b") (v . t)))))))
          (toolspec-mcp-disconnect "own")
          ;; Off: no capability declared, every request declined.
          (let ((toolspec-mcp-elicitation nil))
            (toolspec-mcp-test--ready "own")
            (let ((report (toolspec-mcp-test--ask toolspec-mcp-test--ask-schema)))
              (should (equal report '((capabilities) (result (action . "decline")) (error)))))))
      (delete-file log))))

;;;; Multi round-trip requests (stateless era)

(defun toolspec-mcp-test--modern (&rest args)
  "The config of test/mcp-modern-server.py, on the Python MCP SDK, with ARGS."
  (list :command (expand-file-name "pyenv/bin/python" (toolspec-mcp-test--providers))
        :args (cons (expand-file-name "mcp-modern-server.py" toolspec-mcp-test--directory) args)))

(defvar toolspec-mcp-test--keyed-call nil
  "The call `toolspec-mcp-test-keyed' makes: (SERVER TOOL ARGS...).")

(defvar toolspec-mcp-test--keyed-result nil
  "What `toolspec-mcp-test-keyed' got.")

(defun toolspec-mcp-test-keyed ()
  "Make the call `toolspec-mcp-test--keyed-call' and keep its result."
  (interactive)
  (setq toolspec-mcp-test--keyed-result (apply #'toolspec-mcp-test--run toolspec-mcp-test--keyed-call)))

(defun toolspec-mcp-test--keyed (call &rest keys)
  "Make CALL, (SERVER TOOL ARGS...), typing KEYS into its prompts; return its result.
In batch Emacs, `y-or-n-p' reads a line: y or n is followed by RET;
the sampling question reads one key."
  (setq toolspec-mcp-test--keyed-result nil
        toolspec-mcp-test--keyed-call call)
  (execute-kbd-macro (apply #'vconcat (kbd "M-x") "toolspec-mcp-test-keyed" (kbd "RET") keys))
  toolspec-mcp-test--keyed-result)

(defun toolspec-mcp-test--modern-result (text)
  "The text result of a tool of test/mcp-modern-server.py, from TEXT.
The SDK gives it as structuredContent {\"result\": TEXT}."
  (alist-get 'result (json-parse-string text :object-type 'alist)))

(defun toolspec-mcp-test--rounds (name tool)
  "The params of the tools/call requests of TOOL sent to server NAME, oldest first."
  (cl-loop for (dir method params) in (reverse (toolspec-mcp--server-trace (toolspec-mcp-test--server name)))
           when (and (eq dir 'out) (equal method "tools/call") (equal (alist-get 'name params) tool))
           collect params))

(defun toolspec-mcp-test--input-required (name config)
  "Check the input rounds of test/mcp-modern-server.py, connected as NAME with CONFIG."
  (toolspec-server-with
      (model (list (toolspec-server-text-response "Old pond, a frog.")
                   (toolspec-server-text-response "Hello, Ada!")
                   (toolspec-server-tool-calls-response '(("h" "haiku" "{\"topic\":\"rain\"}")))
                   (toolspec-server-text-response "Soft rain.")
                   (toolspec-server-text-response "Done.")))
    (toolspec-server-with-gptel model nil
      (toolspec-mcp-test--with `((,name ,@config))
        (let ((toolspec-mcp-elicitation t)
              (toolspec-mcp-sampling 'ask))
          (toolspec-mcp-test--ready name)
          (should (eq (toolspec-mcp--server-era (toolspec-mcp-test--server name)) 'modern))
          (should-not (toolspec-mcp--server-session (toolspec-mcp-test--server name)))
          ;; Elicitation: the schema's prompts, a required field asked
          ;; again, the enum completed, a number out of range refused.
          (let ((result (toolspec-mcp-test--keyed
                         (list name "profile")
                         "y" (kbd "RET") (kbd "RET") "Ada" (kbd "RET")
                         "bl" (kbd "TAB") (kbd "RET")
                         "0" (kbd "RET") "5" (kbd "RET")
                         "y" (kbd "RET") (kbd "RET"))))
            (should (equal (json-parse-string (toolspec-mcp-test--modern-result result) :object-type 'alist)
                           '((action . "accept")
                             (data . ((name . "Ada") (color . "blue") (count . 5) (ok . t)))))))
          ;; The retry is a new request with the answers under the
          ;; server's key and its requestState as it was.
          (let* ((server (toolspec-mcp-test--server name))
                 (rounds (toolspec-mcp-test--rounds name "profile"))
                 (answers (alist-get 'inputResponses (nth 1 rounds))))
            (should (= (length rounds) 2))
            (should-not (assq 'inputResponses (nth 0 rounds)))
            (should (stringp (alist-get 'requestState (nth 1 rounds))))
            (should (equal (mapcar #'car answers) '(__main__:ask_profile)))
            (should (equal (alist-get 'action (cdar answers)) "accept"))
            (should (alist-get 'elicitation (alist-get 'io.modelcontextprotocol/clientCapabilities
                                                       (alist-get '_meta (nth 0 rounds)))))
            ;; Nothing waits but the subscription.
            (should (integerp (toolspec-mcp--server-listen server)))
            (should (= (hash-table-count (toolspec-mcp--server-pending server)) 1)))
          ;; Defaults are offered; n declines; C-g cancels.
          (should (equal (json-parse-string
                          (toolspec-mcp-test--modern-result
                           (toolspec-mcp-test--keyed (list name "profile")
                                                     "y" (kbd "RET") "Bob" (kbd "RET") (kbd "RET") (kbd "RET")
                                                     "n" (kbd "RET") "hi" (kbd "RET")))
                          :object-type 'alist)
                         '((action . "accept")
                           (data . ((name . "Bob") (color . "green") (count . 3) (ok . :false) (note . "hi"))))))
          (should (equal (toolspec-mcp-test--modern-result
                          (toolspec-mcp-test--keyed (list name "profile") "n" (kbd "RET")))
                         "{\"action\": \"decline\", \"data\": null}"))
          (should (equal (toolspec-mcp-test--modern-result
                          (toolspec-mcp-test--keyed (list name "profile") "y" (kbd "RET") "Al" (kbd "C-g")))
                         "{\"action\": \"cancel\", \"data\": null}"))
          ;; Sampling, approved with y: the server's messages reach the
          ;; model, the model's answer the server.
          (should (equal (toolspec-mcp-test--modern-result
                          (toolspec-mcp-test--keyed (list name "haiku" "frogs") "y"))
                         "haiku: Old pond, a frog. (model test-model)"))
          (let ((request (car (toolspec-server-requests model))))
            (should (equal (mapcar (lambda (m) (list (plist-get m :role) (plist-get m :content)))
                                   (append (plist-get request :messages) nil))
                           '(("system" "You are a poet.") ("user" "A haiku on frogs"))))
            (should (equal (plist-get request :max_tokens) 40))
            (should-not (plist-get request :tools)))
          ;; Two rounds: the user's name, then the model's greeting for it.
          (should (equal (toolspec-mcp-test--modern-result
                          (toolspec-mcp-test--keyed (list name "card")
                                                    "y" (kbd "RET") "Ada" (kbd "RET") (kbd "RET") (kbd "RET")
                                                    "n" (kbd "RET") (kbd "RET") "y"))
                         "card for Ada: Hello, Ada!"))
          (should (equal (plist-get (aref (plist-get (nth 1 (toolspec-server-requests model)) :messages) 0)
                                    :content)
                         "Greet Ada"))
          (should (= (length (toolspec-mcp-test--rounds name "card")) 3))
          ;; Sampling refused with n: the call fails, the model is not asked.
          (should (string-match-p "\\`Error: tool haiku of MCP server .* failed: User rejected sampling request"
                                  (toolspec-mcp-test--keyed (list name "haiku" "cats") "n")))
          (should (= (length (toolspec-server-requests model)) 2))
          ;; Through gptel: the model calls the tool, the user approves
          ;; the server's sampling, the haiku reaches the model.
          (setq unread-command-events (list ?y))
          (toolspec-server-chat model "Go" (list (toolspec-mcp-test--tool name "haiku")) nil
                                toolspec-mcp-test--timeout)
          (should (equal (toolspec-mcp-test--modern-result
                          (toolspec-mcp-test--tool-message (nth 4 (toolspec-server-requests model)) "h"))
                         "haiku: Soft rain. (model test-model)"))
          ;; Stopped by gptel while its question waits its turn: the
          ;; user is not asked, the call is not sent again.
          (let ((toolspec-mcp--asking t)
                (result nil)
                (sent (length (toolspec-mcp-test--rounds name "profile")))
                (log-buffer (toolspec-mcp--log-buffer (toolspec-mcp-test--server name))))
            (with-temp-buffer
              (funcall (gptel-tool-function (toolspec-mcp-test--tool name "profile"))
                       (lambda (r) (setq result r)))
              (toolspec-mcp-test--wait "the input round"
                                       (lambda () (and toolspec-mcp--calls (null (cddr (car toolspec-mcp--calls))))))
              (gptel-abort (current-buffer)))
            (should-not toolspec-mcp--calls)
            (let ((asked (with-current-buffer log-buffer (buffer-string))))
              (setq toolspec-mcp--asking nil)
              (accept-process-output nil 0.5)
              (let ((since (with-current-buffer log-buffer (substring (buffer-string) (length asked)))))
                (should (string-match-p "answered an elicitation: cancel" since))
                (should-not (string-match-p "could not ask" since))))
            (should-not result)
            (should (= (length (toolspec-mcp-test--rounds name "profile")) (1+ sent))))
          ;; A server that keeps asking is stopped after
          ;; `toolspec-mcp-max-input-rounds' rounds.
          (let ((toolspec-mcp-max-input-rounds 2))
            (should (string-match-p "\\`Error: tool card of MCP server .* failed: the server still asks for input after 2 rounds"
                                    (toolspec-mcp-test--keyed (list name "card")
                                                              "y" (kbd "RET") "Ada" (kbd "RET") (kbd "RET")
                                                              (kbd "RET") "n" (kbd "RET") (kbd "RET"))))))
        ;; No elicitation declared: the server asks for none.
        (let ((toolspec-mcp-elicitation nil))
          (should (string-match-p "\\`Error: tool profile of MCP server .* failed: .*elicitation"
                                  (toolspec-mcp-test--run name "profile")))
          (should (= (length (toolspec-mcp-test--rounds name "profile")) 10)))
        ;; No sampling declared: the server asks the model nothing.
        (let ((toolspec-mcp-sampling 'never)
              (asked (length (toolspec-server-requests model))))
          (should (string-match-p "\\`Error: tool haiku of MCP server .* failed: .*sampling"
                                  (toolspec-mcp-test--run name "haiku" "owls")))
          (should-not (alist-get 'sampling (alist-get 'io.modelcontextprotocol/clientCapabilities
                                                      (alist-get '_meta (car (last (toolspec-mcp-test--rounds name "haiku")))))))
          (should (= (length (toolspec-server-requests model)) asked)))))))

(defun toolspec-mcp-test--listen (name config)
  "Check that server NAME with CONFIG, test/mcp-modern-server.py, tells its tool changes."
  (toolspec-mcp-test--with `((,name ,@config))
    (toolspec-mcp-test--ready name)
    (let ((server (toolspec-mcp-test--server name))
          (old (toolspec-mcp-test--tool name "profile")))
      (toolspec-mcp-test--wait "the subscription"
                               (lambda () (cl-find-if (lambda (m) (and (eq (car m) 'in)
                                                                       (equal (cadr m) "notifications/subscriptions/acknowledged")))
                                                      (toolspec-mcp--server-trace server))))
      (should (integerp (toolspec-mcp--server-listen server)))
      (should-not (member "extra" (toolspec-mcp--server-tools server)))
      (setq gptel-tools (list old))
      (should (equal (toolspec-mcp-test--modern-result (toolspec-mcp-test--run name "grow")) "grown"))
      (toolspec-mcp-test--wait (list "the extra tool"
                                     (lambda () (with-current-buffer (toolspec-mcp--log-buffer server)
                                                  (buffer-string))))
                               (lambda () (assoc "extra" (cdr (assoc (concat "mcp-" name) gptel--known-tools)))))
      (let ((new (toolspec-mcp-test--tool name "profile")))
        (should-not (eq new old))
        (should (equal gptel-tools (list new))))
      (should (equal (toolspec-mcp-test--modern-result (toolspec-mcp-test--run name "extra")) "extra ran"))
      ;; One subscription, still open.
      (should (= 1 (cl-count "subscriptions/listen" (toolspec-mcp--server-trace server)
                             :key #'cadr :test #'equal)))
      (should (gethash (toolspec-mcp--server-listen server) (toolspec-mcp--server-pending server))))))

(ert-deftest toolspec-mcp-listen ()
  "A stateless-era server's tool changes come through subscriptions/listen."
  (toolspec-mcp-test--listen "modern" (toolspec-mcp-test--modern)))

(ert-deftest toolspec-mcp-input-required ()
  "A stateless-era server's input_required results are answered and the call retried."
  (toolspec-mcp-test--input-required "modern" (toolspec-mcp-test--modern)))

(ert-deftest toolspec-mcp-input-required-http ()
  "Input rounds and tool changes over the SDK's own streamable HTTP server."
  (let* ((port (toolspec-mcp-test--free-port))
         (buf (generate-new-buffer " *modern-http*"))
         (config (toolspec-mcp-test--modern "--http" (number-to-string port)))
         (http (make-process :name "modern-http" :buffer buf :noquery t
                             :command (cons (plist-get config :command) (plist-get config :args))))
         (url-proxy-services nil))
    (unwind-protect
        (progn
          (toolspec-mcp-test--wait "the HTTP server"
                                   (lambda () (with-current-buffer buf
                                                (string-match-p "running on" (buffer-string)))))
          (toolspec-mcp-test--input-required "web" `(:url ,(format "http://127.0.0.1:%d/mcp" port)))
          (toolspec-mcp-test--listen "web" `(:url ,(format "http://127.0.0.1:%d/mcp" port))))
      (toolspec-mcp-test--stop-http http))))

(ert-deftest toolspec-mcp-listen-again ()
  "When the subscription ends, the tools are listed again and the client listens again.
The SDK's HTTP server restarts: the subscription's stream breaks; the
new server has a tool more, found by the new listing, and tells its
changes on the new subscription."
  (let* ((port (toolspec-mcp-test--free-port))
         (config (toolspec-mcp-test--modern "--http" (number-to-string port)))
         (start (lambda ()
                  (let* ((buf (generate-new-buffer " *modern-http*"))
                         (proc (make-process :name "modern-http" :buffer buf :noquery t
                                             :command (cons (plist-get config :command)
                                                            (plist-get config :args)))))
                    (toolspec-mcp-test--wait "the HTTP server"
                                             (lambda () (with-current-buffer buf
                                                          (string-match-p "running on" (buffer-string)))))
                    proc)))
         (http (funcall start))
         (url-proxy-services nil)
         (toolspec-mcp--listen-pause 0.5))
    (unwind-protect
        (toolspec-mcp-test--with `(("web" :url ,(format "http://127.0.0.1:%d/mcp" port)))
          (toolspec-mcp-test--ready "web")
          (let ((server (toolspec-mcp-test--server "web"))
                (acks (lambda (server)
                        (cl-count-if (lambda (m) (and (eq (car m) 'in)
                                                      (equal (cadr m) "notifications/subscriptions/acknowledged")))
                                     (toolspec-mcp--server-trace server)))))
            (toolspec-mcp-test--wait "the subscription" (lambda () (= (funcall acks server) 1)))
            (toolspec-mcp-test--stop-http http)
            (setq http (funcall start))
            ;; A tool the new server has: found by listing again.
            (should (equal (toolspec-mcp-test--modern-result (toolspec-mcp-test--run "web" "grow")) "grown"))
            (toolspec-mcp-test--wait (list "the second subscription" (lambda () (with-current-buffer (toolspec-mcp--log-buffer server) (buffer-string)))) (lambda () (= (funcall acks server) 2)))
            (toolspec-mcp-test--wait "the extra tool"
                                     (lambda () (member "extra" (toolspec-mcp--server-tools server))))
            (should (string-match-p "subscriptions/listen ended"
                                    (with-current-buffer (toolspec-mcp--log-buffer server) (buffer-string))))))
      (toolspec-mcp-test--stop-http http))))

(ert-deftest toolspec-mcp-protocol-versions ()
  "An older revision the client speaks is accepted; an unknown one refused."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("old" ,@(toolspec-mcp-test--own log "2025-03-26"))
                                   ("odd" ,@(toolspec-mcp-test--own log "1999-01-01")))
          (toolspec-mcp-test--ready "old")
          (should (equal (toolspec-mcp--server-protocol (toolspec-mcp-test--server "old")) "2025-03-26"))
          (let ((messages (toolspec-mcp-test--log-lines log)))
            ;; The stateless probe first, refused, then the handshake.
            (should (equal (alist-get 'method (nth 0 messages)) "server/discover"))
            (should (equal (alist-get 'method (nth 1 messages)) "initialize"))
            (should (equal (alist-get 'protocolVersion (alist-get 'params (nth 1 messages))) "2025-11-25")))
          (toolspec-mcp-connect "odd")
          (toolspec-mcp-test--wait "the refusal" (lambda () (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "odd"))
                                                                'failed)))
          (should (string-match-p "speaks protocol \"1999-01-01\""
                                  (toolspec-mcp--server-error (toolspec-mcp-test--server "odd"))))
          (should-not (assoc "mcp-odd" gptel--known-tools)))
      (delete-file log))))

(ert-deftest toolspec-mcp-connect-does-not-block ()
  "Connecting returns before the server has answered; a missing program fails."
  (toolspec-mcp-test--with `(("slow" :command "sh" :args ("-c" "sleep 5"))
                             ("none" :command "/nonexistent/mcp-server"))
    (let ((start (float-time)))
      (toolspec-mcp-connect "slow")
      (should (< (- (float-time) start) 1))
      (should (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "slow")) 'connecting)))
    (toolspec-mcp-connect "none")
    (should (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "none")) 'failed))
    (should (string-match-p "cannot start /nonexistent/mcp-server"
                            (toolspec-mcp--server-error (toolspec-mcp-test--server "none"))))))

(ert-deftest toolspec-mcp-import-config ()
  "A Claude Desktop config becomes `toolspec-mcp-servers' entries."
  (let ((file (make-temp-file "toolspec-mcp-config" nil ".json"
                              (concat "{\"mcpServers\": {"
                                      "\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"],"
                                      " \"env\": {\"DEBUG\": \"1\"}},"
                                      "\"remote\": {\"type\": \"http\", \"url\": \"https://example.invalid/mcp\","
                                      " \"headers\": {\"Authorization\": \"Bearer x\"}}}}")))
        (bad (make-temp-file "toolspec-mcp-config" nil ".json" "{\"mcpServers\": {\"x\": {\"args\": []}}}")))
    (unwind-protect
        (let ((toolspec-mcp-servers '(("fs" :command "old") ("other" :command "other"))))
          (should (equal (toolspec-mcp-import-config file) '("fs" "remote")))
          (should (equal toolspec-mcp-servers
                         '(("fs" :command "npx" :args ("-y" "@modelcontextprotocol/server-filesystem" "/tmp")
                            :env (("DEBUG" . "1")))
                           ("remote" :url "https://example.invalid/mcp" :headers (("Authorization" . "Bearer x")))
                           ("other" :command "other"))))
          (should (equal (cadr (should-error (toolspec-mcp-import-config bad) :type 'user-error))
                         (format "%s: mcpServers.x has neither \"command\" nor \"url\"" bad))))
      (delete-file file)
      (delete-file bad))))

(ert-deftest toolspec-mcp-list-buffer ()
  "The server list shows each server's state, tools and error; keys act."
  (let ((log (make-temp-file "toolspec-mcp-log")))
    (unwind-protect
        (toolspec-mcp-test--with `(("own" ,@(toolspec-mcp-test--own log))
                                   ("none" :command "/nonexistent/mcp-server"))
          (toolspec-mcp-test--ready "own")
          (toolspec-mcp-connect "none")
          (toolspec-mcp-list)
          (with-current-buffer "*toolspec-mcp-servers*"
            (goto-char (point-min))
            (should (re-search-forward "^ own +ready +8 *$" nil t))
            (goto-char (point-min))
            (should (re-search-forward "^ none +failed +0 +cannot start /nonexistent/mcp-server" nil t))
            ;; d disconnects the server on the line.
            (goto-char (point-min))
            (re-search-forward "^ own ")
            (execute-kbd-macro (kbd "d"))
            (should (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "own")) 'disconnected))
            (should-not (assoc "mcp-own" gptel--known-tools))
            (goto-char (point-min))
            (should (re-search-forward "^ own +disconnected +0 *$" nil t))
            ;; c connects it again.
            (beginning-of-line)
            (execute-kbd-macro (kbd "c"))
            (toolspec-mcp-test--wait "the reconnection"
                                     (lambda () (eq (toolspec-mcp--server-state (toolspec-mcp-test--server "own")) 'ready)))
            (should (assoc "mcp-own" gptel--known-tools))))
      (when (get-buffer "*toolspec-mcp-servers*") (kill-buffer "*toolspec-mcp-servers*"))
      (delete-file log))))

(provide 'toolspec-mcp-test)
;;; toolspec-mcp-test.el ends here
