;;; toolspec-transport-test.el --- Hostile servers and documents against the HTTP executors -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; ERT tests of the one HTTP transport every executor uses (OpenAPI,
;; Gloodata, Arcade), driven as a user meets them: an OpenAPI document
;; written to a file and imported with `toolspec-import-file', or the
;; example Gloodata and Arcade files imported with their endpoint, then
;; a call run against a loopback server (test/toolspec-http-server.el)
;; that answers with the hostile behaviour: a gzip bomb, a redirect to
;; another origin, a 401 asking for Basic credentials, slow templates.
;; One test runs a real `emacs -nw' on a pseudo-terminal and types C-g
;; while a response's templates render.
;;
;;   emacs --batch -Q -L lisp -L .deps/gptel -L test \
;;     --eval '(setq toolspec-module-file "target/debug/libtoolspec.so")' \
;;     -l test/toolspec-transport-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'auth-source)
(require 'toolspec)
(require 'toolspec-gptel)
(require 'toolspec-http)
(require 'toolspec-gloodata)
(require 'toolspec-arcade)
(require 'toolspec-http-server)
(require 'gptel)

(defvar url-proxy-services)
(defvar gptel--tool-preview-alist)

(defconst toolspec-tt--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "Directory of this file.")

;;;; Helpers

(defmacro toolspec-tt--with-env (&rest body)
  "Run BODY with empty registries, no proxy and an empty authinfo file."
  (declare (indent 0) (debug t))
  `(let* ((authinfo (make-temp-file "toolspec-authinfo"))
          (auth-sources (list authinfo))
          (auth-source-do-cache nil)
          (url-proxy-services nil)
          (gptel--known-tools nil)
          (gptel-tools nil)
          (gptel--tool-preview-alist nil)
          (toolspec-function-alist nil)
          (toolspec-gptel--registered (make-hash-table :test 'equal))
          (toolspec-seeds--tools (make-hash-table :test 'equal))
          (toolspec-http--operations (make-hash-table :test 'equal))
          (toolspec-http-servers nil)
          (toolspec-http-timeout 10)
          (toolspec-log-buffer " *toolspec-transport-test-log*"))
     (auth-source-forget-all-cached)
     (unwind-protect
         (progn ,@body)
       (delete-file authinfo)
       (auth-source-forget-all-cached))))

(defun toolspec-tt--json (value)
  "VALUE as JSON text."
  (let ((json (json-serialize value)))
    (if (multibyte-string-p json) json (decode-coding-string json 'utf-8))))

(defun toolspec-tt--import (api paths &rest options)
  "Import an OpenAPI document whose server is API and whose paths are PATHS.
PATHS is the text of the document's `paths' object.  The document is
written to a file and imported with `toolspec-import-file' under
OPTIONS; returns the gptel tools."
  (let ((file (make-temp-file "toolspec-hostile-api" nil ".json")))
    (unwind-protect
        (progn
          (with-temp-file file
            (insert (format "{\"openapi\": \"3.0.0\", \"info\": {\"title\": \"Hostile API\", \"version\": \"1\"}, \"servers\": [{\"url\": %s}], \"paths\": %s}"
                            (toolspec-tt--json (toolspec-http-server-url api "/v1"))
                            paths)))
          (apply #'toolspec-import-file file :confirm nil options))
      (delete-file file))))

(defun toolspec-tt--call (tool &rest args)
  "Call gptel TOOL, an async tool, with ARGS; wait for and return its result.
Return (RESULT . SECONDS)."
  (let ((result nil) (got nil)
        (start (float-time))
        (deadline (+ (float-time) 60)))
    (apply (gptel-tool-function tool) (lambda (r) (setq result r got (float-time))) args)
    (while (and (not got) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (unless got (ert-fail "The tool did not call back"))
    (cons result (- got start))))

(defun toolspec-tt--example (name)
  "Absolute file name of example NAME in examples/."
  (expand-file-name name (expand-file-name "../examples" toolspec-tt--directory)))

(defun toolspec-tt--gzip-bomb (megabytes)
  "A gzip stream (bytes) of a JSON object holding MEGABYTES MiB of zeros.
Made by the gzip program, so that the test never holds the whole."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (let ((status (call-process "sh" nil t nil "-c"
                                (format "{ printf '{\"a\":\"'; head -c %d /dev/zero | tr '\\000' 0; printf '\"}'; } | gzip -9 -c"
                                        (* megabytes 1024 1024)))))
      (unless (eq status 0) (error "gzip failed: %s" (buffer-string))))
    (buffer-string)))

(defun toolspec-tt--render-processes ()
  "The live processes rendering templates."
  (cl-remove-if-not (lambda (p) (and (process-live-p p)
                                     (string-prefix-p "toolspec-render" (process-name p))))
                    (process-list)))

;;;; Compressed answers (decompression bombs)

(ert-deftest toolspec-transport-openapi-gzip-bomb ()
  "An OpenAPI call asks for no compression and refuses a gzip body uninflated.
The server sends 64 KiB of gzip that inflates to 64 MiB, whatever the
request said: the call fails saying so, and what it holds in memory
is the compressed body, never the inflated one."
  (toolspec-tt--with-env
    (let ((bomb (toolspec-tt--gzip-bomb 64)))
      (should (< (length bomb) (* 256 1024)))
      (toolspec-http-server-with
          (api (lambda (req)
                 (if (equal (plist-get req :path) "/v1/plain")
                     '(:body (:ok t))
                   `(:headers (("Content-Type" . "application/json") ("Content-Encoding" . "gzip"))
                     :body ,bomb))))
        (let* ((tools (toolspec-tt--import
                       api "{\"/bomb\": {\"get\": {\"operationId\": \"get_bomb\", \"summary\": \"A bomb.\", \"responses\": {\"200\": {\"description\": \"ok\"}}}},
                             \"/plain\": {\"get\": {\"operationId\": \"get_plain\", \"summary\": \"Plain.\", \"responses\": {\"200\": {\"description\": \"ok\"}}}}}"))
               (bomb-tool (cl-find "get_bomb" tools :key #'gptel-tool-name :test #'equal))
               (plain-tool (cl-find "get_plain" tools :key #'gptel-tool-name :test #'equal))
               (result (car (toolspec-tt--call bomb-tool))))
          (should (string-match-p "\\`Error: GET http://127\\.0\\.0\\.1:[0-9]+/v1/bomb failed: the response from .* is compressed (Content-Encoding: gzip)" result))
          (should-not (string-match-p "larger than" result))
          ;; The request asked for the identity coding only.
          (should (equal (cdr (assoc "accept-encoding" (plist-get (car (toolspec-http-server-requests api)) :headers)))
                         "identity"))
          ;; An answer that is not compressed goes through as before.
          (should (equal (car (toolspec-tt--call plain-tool)) "{\"ok\":true}")))))))

;; A server writing its answer in pieces, as a hostile one may.
(defun toolspec-tt--dribbling-server (pieces)
  "Start a loopback server answering every request with PIECES, 0.05 s apart.
PIECES are strings of bytes.  Returns the server process; its port
is the 5th element of its local address."
  (make-network-process
   :name "toolspec-tt-dribble" :server t :host 'local :family 'ipv4 :service t
   :coding 'binary :noquery t
   :filter (lambda (proc input)
             (process-put proc 'input (concat (process-get proc 'input) input))
             (when (and (not (process-get proc 'answered))
                        (string-search "\r\n\r\n" (process-get proc 'input)))
               (process-put proc 'answered t)
               (cl-loop for piece in pieces
                        for i from 0
                        do (run-at-time (* 0.05 i) nil
                                        (lambda (piece)
                                          (when (process-live-p proc)
                                            (process-send-string proc piece)))
                                        piece))
               (run-at-time (* 0.05 (length pieces)) nil
                            (lambda () (when (process-live-p proc) (delete-process proc))))))))

(ert-deftest toolspec-transport-gzip-in-pieces ()
  "A Content-Encoding split across packets, or after an interim 100 response, is refused too."
  (toolspec-tt--with-env
    (let ((bomb (toolspec-tt--gzip-bomb 16)))
      (dolist (pieces
               (list
                ;; The header name cut in two, the blank line too.
                (list "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Enc"
                      (format "oding: gzip\r\nContent-Length: %d\r\n\r" (length bomb))
                      (concat "\n" bomb))
                ;; An interim response first, whose own headers name gzip.
                (list "HTTP/1.1 100 Continue\r\nContent-Encoding: gzip\r\n\r\n"
                      (format "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-encoding:  GZIP \r\nContent-Length: %d\r\n\r\n"
                              (length bomb))
                      bomb)))
        (let* ((server (toolspec-tt--dribbling-server pieces))
               (port (aref (process-contact server :local) 4)))
          (unwind-protect
              (let* ((tool (car (toolspec-register
                                 (list (list :name "get_bomb" :description "A bomb." :args nil
                                             :executor (list :type "openapi" :server (format "http://127.0.0.1:%d" port)
                                                             :method "GET" :path "/bomb" :parameters [] :body :null
                                                             :auth :null :filter :null :outputModules [] :lookup []
                                                             :title "Bomb" :operationId "get_bomb")))
                                 :source "bomb" :confirm nil)))
                     (result (car (toolspec-tt--call tool))))
                (should (string-match-p "is compressed (Content-Encoding: \\(gzip\\|GZIP\\))" result)))
            (delete-process server)))))))

;;;; Gloodata and Arcade go through the same transport

(defun toolspec-tt--arcade (worker &rest options)
  "The Weather_GetForecast tool of examples/arcade.json, bound to WORKER.
OPTIONS are more import options."
  (car (apply #'toolspec-import-file (toolspec-tt--example "arcade.json")
              :worker worker :confirm nil options)))

(ert-deftest toolspec-transport-arcade-redirect-elsewhere ()
  "An Arcade worker redirecting with 307 to another origin does not get the token re-posted there."
  (toolspec-tt--with-env
    (toolspec-http-server-with (other (lambda (_) '(:body (:stolen t))))
      (toolspec-http-server-with
          (worker (lambda (req)
                    (if (equal (plist-get req :path) "/here")
                        '(:status 500 :body "same origin reached")
                      `(:status 307 :headers (("Location" . ,(toolspec-http-server-url other "/steal")))))))
        (let* ((url (toolspec-http-server-url worker "/invoke"))
               (tool (toolspec-tt--arcade url :token "tok-secret-123"))
               (result (car (toolspec-tt--call tool "Paris"))))
          (should (string-match-p (format "\\`Error: the Arcade worker at %s did not answer: refused the redirect (HTTP 307)"
                                          (regexp-quote url))
                                  result))
          (should (string-match-p "it leaves the approved server" result))
          (should-not (toolspec-http-server-requests other))
          ;; The token went to the worker, once.
          (should (= (length (toolspec-http-server-requests worker)) 1))
          (should (string-match-p "tok-secret-123" (plist-get (car (toolspec-http-server-requests worker)) :body))))))))

(ert-deftest toolspec-transport-arcade-basic-auth-not-prompted ()
  "A 401 asking for Basic credentials is an answer for the model: nothing is prompted or sent."
  (toolspec-tt--with-env
    (let ((prompts nil))
      (cl-letf (((symbol-function 'read-string)
                 (lambda (prompt &rest _) (push prompt prompts) "mallory"))
                ((symbol-function 'read-passwd)
                 (lambda (prompt &rest _) (push prompt prompts) "hunter2")))
        (toolspec-http-server-with
            (worker (lambda (_)
                      '(:status 401 :headers (("WWW-Authenticate" . "Basic realm=\"Type your Emacs password\""))
                        :body "who are you?")))
          (let* ((url (toolspec-http-server-url worker "/invoke"))
                 (tool (toolspec-tt--arcade url))
                 (call (toolspec-tt--call tool "Paris")))
            (should (equal (car call) (format "Error: the Arcade worker at %s answered HTTP 401" url)))
            (should (< (cdr call) 5))
            (should-not prompts)
            (should (= (length (toolspec-http-server-requests worker)) 1))
            (should-not (assoc "authorization" (plist-get (car (toolspec-http-server-requests worker)) :headers)))))))))

(ert-deftest toolspec-transport-gloodata-bomb-and-size ()
  "A Gloodata extension's gzip bomb is refused, and its long answers are capped for the model."
  (toolspec-tt--with-env
    (let ((bomb (toolspec-tt--gzip-bomb 64))
          (long (make-string 100000 ?y)))
      (toolspec-http-server-with
          (ext (lambda (req)
                 (if (string-match-p "bomb" (plist-get req :body))
                     `(:headers (("Content-Type" . "text/plain") ("Content-Encoding" . "gzip")) :body ,bomb)
                   `(:body ,long))))
        (let* ((url (toolspec-http-server-url ext "/"))
               (tools (toolspec-import-file (toolspec-tt--example "gloodata.json") :endpoint url :confirm nil))
               (map (cadr tools))
               (bombed (car (toolspec-tt--call map "bomb" 1)))
               (capped (car (toolspec-tt--call map "Cairo" 12))))
          (should (string-match-p (format "\\`Error: the Gloodata extension at %s did not answer: the response from .* is compressed (Content-Encoding: gzip)"
                                          (regexp-quote url))
                                  bombed))
          (should (equal (cdr (assoc "accept-encoding" (plist-get (car (toolspec-http-server-requests ext)) :headers)))
                         "identity"))
          (should (= (length capped)
                     (+ toolspec-http-max-result-size
                        (length (format "\n[... truncated by toolspec: %d of 100000 characters shown]"
                                        toolspec-http-max-result-size)))))
          (should (string-suffix-p "characters shown]" capped))
          ;; Fetching an extension's info follows the same rules.
          (toolspec-http-server-with (other (lambda (_) '(:body "{}")))
            (toolspec-http-server-with
                (away (lambda (_) `(:status 307 :headers (("Location" . ,(toolspec-http-server-url other "/"))))))
              (let ((err (should-error (toolspec-gloodata-import (toolspec-http-server-url away "/"))
                                       :type 'toolspec-fetch-error)))
                (should (string-match-p "refused the redirect (HTTP 307)" (cadr err))))
              (should-not (toolspec-http-server-requests other)))))))))

;;;; Template time

(defun toolspec-tt--slow-template ()
  "A template that renders, slowly: for 0.2 s at least, here.
The comparison of two values doubled N times, with N found by
trying, as the program's speed depends on its build and the load."
  (let ((n 8) (found nil))
    (while (and (not found) (< n 30))
      (let ((template (format "{%% set ns = namespace(a=[1], b=[1]) %%}{%% for i in range(%d) %%}{%% set ns.a = [ns.a, ns.a] %%}{%% set ns.b = [ns.b, ns.b] %%}{%% endfor %%}{{ ns.a == ns.b }}" n))
            (start (float-time)))
        (should (equal (toolspec-render-template template "{}") "True"))
        (if (>= (- (float-time) start) 0.2)
            (setq found template)
          (setq n (1+ n)))))
    (or found (ert-fail "No template took 0.2 s"))))

(defun toolspec-tt--modules-paths (template count)
  "The `paths' of a document whose one operation has COUNT output modules TEMPLATE."
  (format "{\"/items\": {\"get\": {\"operationId\": \"list_items\", \"summary\": \"List items.\", \"x-output-modules\": %s, \"responses\": {\"200\": {\"description\": \"ok\"}}}}}"
          (toolspec-tt--json (make-vector count template))))

(ert-deftest toolspec-transport-templates-share-one-budget ()
  "All the output modules of one call share `toolspec-http-templates-timeout'.
Thirty modules that each render in time would take many seconds in
all; the call ends at the budget with the unprocessed response."
  (toolspec-tt--with-env
    (let ((template (toolspec-tt--slow-template)))
      (toolspec-http-server-with (api (lambda (_) '(:body (:items [1 2 3]))))
        (let* ((tool (car (toolspec-tt--import api (toolspec-tt--modules-paths template 30))))
               (toolspec-http-templates-timeout 1.5)
               (call (toolspec-tt--call tool)))
          (message "30 output modules, budget 1.5 s: the call took %.2f s" (cdr call))
          (should (string-prefix-p "Note: the output module of list_items failed (the templates of one call took longer than 1.5 seconds in all" (car call)))
          (should (string-suffix-p "the unprocessed response follows.\n{\"items\":[1,2,3]}" (car call)))
          (should (< (cdr call) 4))
          (should-not (toolspec-tt--render-processes))
          ;; Within the budget, every module renders.
          (let ((toolspec-http-templates-timeout 600))
            (let ((fast (car (toolspec-tt--import api (toolspec-tt--modules-paths "{{ items | length }}" 30)))))
              (should (equal (car (toolspec-tt--call fast)) (mapconcat #'identity (make-list 30 "3") "\n"))))))))))

(ert-deftest toolspec-transport-quit-stops-templates ()
  "C-g typed in a terminal Emacs while a response's templates render stops them at once.
A real `emacs -nw' on a pseudo-terminal imports a document whose
operation has thirty slow output modules and calls it; C-g comes once
the server has answered.  The tool gets its answer soon after, saying
it was interrupted, instead of after every module has rendered."
  (let* ((dir (make-temp-file "toolspec-quit-templates" t))
         (setup (expand-file-name "setup.el" dir))
         (marker (lambda (name) (expand-file-name name dir)))
         (template (toolspec-tt--slow-template))
         (process-environment (cons "TERM=xterm" process-environment))
         proc)
    (unwind-protect
        (progn
          (with-temp-file setup
            (prin1 `(progn
                      (setq toolspec-module-file ,toolspec-module-file)
                      (setq url-proxy-services nil auth-sources nil)
                      (require 'toolspec)
                      (require 'toolspec-gptel)
                      (require 'toolspec-http)
                      (require 'toolspec-http-server)
                      (setq toolspec-http-templates-timeout 600)
                      (defvar toolspec-quit-test-api
                        (toolspec-http-server-start
                         (lambda (_)
                           (write-region "" nil ,(funcall marker "answered") nil 'silent)
                           '(:body (:items [1 2 3])))))
                      (defun toolspec-quit-test-call ()
                        (interactive)
                        (let* ((file ,(expand-file-name "api.json" dir))
                               (start nil))
                          (with-temp-file file
                            (insert (format "{\"openapi\": \"3.0.0\", \"info\": {\"title\": \"Slow\", \"version\": \"1\"}, \"servers\": [{\"url\": \"%s\"}], \"paths\": %s}"
                                            (toolspec-http-server-url toolspec-quit-test-api "/v1")
                                            ,(toolspec-tt--modules-paths template 30))))
                          (let ((tool (car (toolspec-import-file file :confirm nil))))
                            (setq start (float-time))
                            (funcall (gptel-tool-function tool)
                                     (lambda (text)
                                       (write-region (format "%f\n%s" (float-time) text)
                                                     nil ,(funcall marker "done") nil 'silent))))))
                      (write-region "" nil ,(funcall marker "ready") nil 'silent))
                   (current-buffer)))
          (setq proc (make-process :name "toolspec-quit-templates" :buffer (generate-new-buffer " *toolspec-quit-templates*")
                                   :connection-type 'pty
                                   :noquery t
                                   :command `(,(expand-file-name invocation-name invocation-directory)
                                              ,@(let ((dump (alist-get 'dump-file-name (pdumper-stats))))
                                                  (and dump (list (concat "--dump-file=" dump))))
                                              "-nw" "-Q"
                                              "-L" ,(file-name-directory (locate-library "toolspec"))
                                              "-L" ,(file-name-directory (locate-library "gptel"))
                                              "-L" ,toolspec-tt--directory
                                              "-l" ,setup)))
          (set-process-window-size proc 24 80)
          (let ((wait (lambda (name what seconds)
                        (with-timeout (seconds (ert-fail (format "the terminal Emacs never %s; its screen:\n%s" what
                                                                 (with-current-buffer (process-buffer proc)
                                                                   (buffer-string)))))
                          (while (not (file-exists-p (funcall marker name)))
                            (accept-process-output proc 0.05))))))
            (funcall wait "ready" "started" 60)
            (accept-process-output proc 0.3)
            (process-send-string proc "\extoolspec-quit-test-call\r")
            (funcall wait "answered" "got the server's answer" 30)
            ;; Two or three modules in.
            (accept-process-output proc 0.6)
            (let ((quit-at (float-time)))
              (process-send-string proc "\C-g")
              (funcall wait "done" "called the tool back" 120)
              (let* ((done (with-temp-buffer
                             (insert-file-contents (funcall marker "done"))
                             (buffer-string)))
                     (at (string-to-number (car (split-string done "\n"))))
                     (text (substring done (1+ (string-search "\n" done)))))
                (message "The tool answered %.2f s after C-g: %s" (- at quit-at) text)
                (should (string-match-p "\\`Error: list_items was interrupted (C-g) while its response was processed" text))
                (should (< (- at quit-at) 2))))))
      (when proc
        (delete-process proc)
        (kill-buffer (process-buffer proc)))
      (delete-directory dir t))))

;;;; Names and values from the document and the model

(ert-deftest toolspec-transport-header-and-cookie-names ()
  "Header and cookie names that are not HTTP tokens are refused; so are control characters in values."
  (toolspec-tt--with-env
    (toolspec-http-server-with (api (lambda (_) '(:body (:ok t))))
      (let* ((tools (toolspec-tt--import
                     api "{\"/a\": {\"get\": {\"operationId\": \"split_header\", \"summary\": \"A.\",
                              \"parameters\": [{\"name\": \"X-A\\r\\nHost: evil.invalid\", \"in\": \"header\", \"schema\": {\"type\": \"string\"}}],
                              \"responses\": {\"200\": {\"description\": \"ok\"}}}},
                          \"/b\": {\"get\": {\"operationId\": \"forced_cookie\", \"summary\": \"B.\",
                              \"parameters\": [{\"name\": \"sid=forced; other\", \"in\": \"cookie\", \"schema\": {\"type\": \"string\"}}],
                              \"responses\": {\"200\": {\"description\": \"ok\"}}}},
                          \"/c\": {\"get\": {\"operationId\": \"plain_header\", \"summary\": \"C.\",
                              \"parameters\": [{\"name\": \"X-Trace\", \"in\": \"header\", \"schema\": {\"type\": \"string\"}},
                                             {\"name\": \"sid\", \"in\": \"cookie\", \"schema\": {\"type\": \"string\"}}],
                              \"responses\": {\"200\": {\"description\": \"ok\"}}}}}"))
             (tool (lambda (name) (cl-find name tools :key #'gptel-tool-name :test #'equal))))
        (should (equal (car (toolspec-tt--call (funcall tool "split_header") "v"))
                       "Error: cannot call split_header: the header parameter \"X-A\\15\\nHost: evil.invalid\" of the API document is not a valid HTTP header name (only letters, digits and !#$%&'*+-.^_`|~)"))
        (should (equal (car (toolspec-tt--call (funcall tool "forced_cookie") "v"))
                       "Error: cannot call forced_cookie: the cookie parameter \"sid=forced; other\" of the API document is not a valid cookie name (only letters, digits and !#$%&'*+-.^_`|~)"))
        (dolist (bad '("a\0b" "a\vb" "a\eb" "a\C-?b"))
          (should (string-match-p "\\`Error: cannot call plain_header: the value of header X-Trace holds a control character"
                                  (car (toolspec-tt--call (funcall tool "plain_header") bad "s")))))
        (should-not (toolspec-http-server-requests api))
        ;; Good names and values go through.
        (should (equal (car (toolspec-tt--call (funcall tool "plain_header") "a\tb c" "s 1")) "{\"ok\":true}"))
        (let ((req (car (toolspec-http-server-requests api))))
          (should (equal (cdr (assoc "x-trace" (plist-get req :headers))) "a\tb c"))
          (should (equal (cdr (assoc "cookie" (plist-get req :headers))) "sid=s%201")))))))

(ert-deftest toolspec-transport-empty-path-parameter ()
  "An empty path parameter is refused: DELETE /items/{id} never becomes DELETE /items/."
  (toolspec-tt--with-env
    (toolspec-http-server-with (api (lambda (_) '(:status 204)))
      (let ((tool (car (toolspec-tt--import
                        api "{\"/items/{id}\": {\"delete\": {\"operationId\": \"delete_item\", \"summary\": \"Delete an item.\",
                                 \"parameters\": [{\"name\": \"id\", \"in\": \"path\", \"required\": true, \"schema\": {\"type\": \"string\"}}],
                                 \"responses\": {\"204\": {\"description\": \"gone\"}}}}}"))))
        (should (equal (car (toolspec-tt--call tool ""))
                       "Error: cannot call delete_item: the path parameter id is empty: DELETE /items/{id} needs a value for it"))
        (should-not (toolspec-http-server-requests api))
        (should (equal (car (toolspec-tt--call tool "7")) "Done: HTTP 204 No Content, no content."))
        (should (equal (mapcar (lambda (r) (list (plist-get r :method) (plist-get r :path)))
                               (toolspec-http-server-requests api))
                       '(("DELETE" "/v1/items/7"))))))))

(provide 'toolspec-transport-test)
;;; toolspec-transport-test.el ends here
