;;; toolspec-http-server.el --- Scripted HTTP API server on loopback for tests -*- lexical-binding: t; -*-

;; This file is part of toolspec.
;; SPDX-License-Identifier: GPL-3.0-or-later

;;; Commentary:

;; A tiny HTTP/1.1 server in elisp standing in for the APIs OpenAPI
;; tools call.  It records every request (method, path, query,
;; headers, body) and answers each with a scripted response:
;;
;;   (toolspec-http-server-with
;;       (api (lambda (request)
;;              (list :status 200 :body '(:id 7 :name "Rex"))))
;;     (toolspec-http-server-url api "/pets")   ; http://127.0.0.1:PORT/pets
;;     ...
;;     (toolspec-http-server-requests api))      ; oldest first
;;
;; The handler is a function of the request plist, or a list of
;; responses answered in turn.  A response is a plist:
;;   :status  HTTP status (default 200)
;;   :reason  reason phrase (default from the status)
;;   :headers alist of extra headers, e.g. (("Location" . "/x"))
;;   :body    a string (sent as UTF-8, text/plain unless a Content-Type
;;            header says otherwise) or an object for `json-serialize'
;;            (sent as application/json)
;; or the symbol `hang': never answer (for timeouts).
;;
;; It listens on 127.0.0.1 only, on a port the OS chooses; requests
;; need Content-Length bodies (what url.el sends); each connection is
;; closed after its response.  `toolspec-http-server-with' deletes the
;; server and its connections when its body exits.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'seq)

(cl-defstruct (toolspec-http-server (:constructor toolspec-http-server--make)
                                    (:copier nil))
  "A scripted HTTP server.
PROCESS is the listening process and PORT its port.  HANDLER makes
the responses (see the Commentary).  RECEIVED holds the requests,
newest first; ERRORS what went wrong on the server side, newest
first; CONNECTIONS the open connections."
  process port handler received errors connections)

(defun toolspec-http-server-requests (server)
  "The requests SERVER received, oldest first.
Each is a plist (:method M :target T :path P :query Q :headers H
:body B): TARGET the request target as sent, PATH before the `?',
QUERY after it (nil without one), HEADERS an alist with lower-case
names in the order received, BODY the body decoded as UTF-8."
  (reverse (toolspec-http-server-received server)))

(defun toolspec-http-server-url (server &optional path)
  "The URL of PATH (default \"\") on SERVER."
  (format "http://127.0.0.1:%d%s" (toolspec-http-server-port server) (or path "")))

(defconst toolspec-http-server--reasons
  '((200 . "OK") (201 . "Created") (204 . "No Content") (301 . "Moved Permanently")
    (302 . "Found") (303 . "See Other") (307 . "Temporary Redirect") (308 . "Permanent Redirect")
    (400 . "Bad Request") (401 . "Unauthorized") (403 . "Forbidden") (404 . "Not Found")
    (411 . "Length Required") (500 . "Internal Server Error"))
  "Reason phrases of the statuses the server sends.")

(defun toolspec-http-server--respond (proc response)
  "Send RESPONSE (see the Commentary) on PROC and close it."
  (unless (eq response 'hang)
    (let* ((status (or (plist-get response :status) 200))
           (headers (plist-get response :headers))
           (body (plist-get response :body))
           (json (and body (not (stringp body))))
           (text (cond ((null body) "")
                       (json (json-serialize body :null-object :null :false-object :json-false))
                       (t body)))
           ;; `json-serialize' gives UTF-8 bytes (Emacs 30), strings are text.
           (bytes (if (multibyte-string-p text) (encode-coding-string text 'utf-8) text))
           (ctype (cond ((assoc-string "content-type" headers t) nil)
                        (json "application/json")
                        (body "text/plain; charset=utf-8")))
           (head (concat (format "HTTP/1.1 %d %s\r\n" status
                                 (or (plist-get response :reason)
                                     (alist-get status toolspec-http-server--reasons "Unknown")))
                         (if ctype (format "Content-Type: %s\r\n" ctype) "")
                         (mapconcat (lambda (h) (format "%s: %s\r\n" (car h) (cdr h))) headers "")
                         (format "Content-Length: %d\r\nConnection: close\r\n\r\n" (length bytes)))))
      (when (process-live-p proc)
        (process-send-string proc (concat (encode-coding-string head 'utf-8) bytes))
        (process-send-eof proc)))))

(defun toolspec-http-server--request (head body)
  "The request plist of HEAD (request line and headers) and BODY (bytes)."
  (let* ((lines (split-string head "\r\n"))
         (request-line (split-string (car lines) " "))
         (target (nth 1 request-line))
         (q (string-search "?" target)))
    (list :method (nth 0 request-line)
          :target target
          :path (if q (substring target 0 q) target)
          :query (and q (substring target (1+ q)))
          :headers (delq nil
                         (mapcar (lambda (line)
                                   (when (string-match "\\`\\([^:]+\\):[ \t]*\\(.*?\\)[ \t]*\\'" line)
                                     (cons (downcase (match-string 1 line)) (match-string 2 line))))
                                 (cdr lines)))
          :body (decode-coding-string body 'utf-8-unix))))

(defun toolspec-http-server--answer (server proc request)
  "Record REQUEST and answer it on PROC with SERVER's next response."
  (push request (toolspec-http-server-received server))
  (let* ((handler (toolspec-http-server-handler server))
         (response
          (cond ((functionp handler)
                 (condition-case err
                     (funcall handler request)
                   (error (push (format "handler failed: %S" err) (toolspec-http-server-errors server))
                          (list :status 500 :body "handler failed"))))
                (handler (pop (toolspec-http-server-handler server)))
                (t (push "no scripted response left" (toolspec-http-server-errors server))
                   (list :status 500 :body "no scripted response left")))))
    (toolspec-http-server--respond proc response)))

(defun toolspec-http-server--filter (server)
  "The process filter of SERVER's connections."
  (lambda (proc string)
    (let ((input (concat (or (process-get proc 'input) "") string)))
      (process-put proc 'input input)
      (when-let* (((not (process-get proc 'answered)))
                  (end (string-search "\r\n\r\n" input)))
        (let* ((head (substring input 0 end))
               (body (substring input (+ end 4)))
               (length-header (and (string-match "^content-length:[ \t]*\\([0-9]+\\)" (downcase head))
                                   (string-to-number (match-string 1 (downcase head))))))
          (cond
           ((string-match-p "^transfer-encoding:" (downcase head))
            (process-put proc 'answered t)
            (push "chunked request body" (toolspec-http-server-errors server))
            (toolspec-http-server--respond proc '(:status 411 :body "chunked bodies are not supported")))
           ((>= (length body) (or length-header 0))
            (process-put proc 'answered t)
            (toolspec-http-server--answer
             server proc (toolspec-http-server--request
                          (decode-coding-string head 'utf-8-unix)
                          (substring body 0 (or length-header 0)))))))))))

(defun toolspec-http-server-start (handler)
  "Start a server on 127.0.0.1 answering with HANDLER; return it."
  (let* ((server (toolspec-http-server--make :handler (if (functionp handler) handler
                                                         (copy-sequence handler))))
         (proc (make-network-process
                :name "toolspec-http-test-server"
                :server t :host 'local :family 'ipv4 :service t
                :coding 'binary :noquery t
                :filter (toolspec-http-server--filter server)
                :sentinel (lambda (proc _event)
                            (unless (process-live-p proc)
                              (setf (toolspec-http-server-connections server)
                                    (delq proc (toolspec-http-server-connections server)))))
                :log (lambda (_server connection _message)
                       (set-process-query-on-exit-flag connection nil)
                       (push connection (toolspec-http-server-connections server))))))
    (setf (toolspec-http-server-process server) proc)
    (let ((address (process-contact proc :local)))
      (unless (and (vectorp address) (equal (seq-take address 4) [127 0 0 1]))
        (delete-process proc)
        (error "Test server is not on 127.0.0.1: %S" address))
      (setf (toolspec-http-server-port server) (aref address 4)))
    server))

(defun toolspec-http-server-stop (server)
  "Stop SERVER and close its connections."
  (dolist (conn (toolspec-http-server-connections server))
    (when (process-live-p conn) (delete-process conn)))
  (setf (toolspec-http-server-connections server) nil)
  (when-let* ((proc (toolspec-http-server-process server)))
    (delete-process proc)))

(defmacro toolspec-http-server-with (spec &rest body)
  "Run BODY with a server, then stop it.
SPEC is (VAR HANDLER): VAR is bound to a server answering with
HANDLER (see `toolspec-http-server-start')."
  (declare (indent 1) (debug ((symbolp form) body)))
  `(let ((,(car spec) (toolspec-http-server-start ,(cadr spec))))
     (unwind-protect
         (progn ,@body)
       (toolspec-http-server-stop ,(car spec)))))

(provide 'toolspec-http-server)
;;; toolspec-http-server.el ends here
