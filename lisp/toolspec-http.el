;;; toolspec-http.el --- Run OpenAPI tools over HTTP -*- lexical-binding: t -*-

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

;; The executor of tools imported from OpenAPI documents: each tool is
;; one operation of an HTTP API, and calling it sends the request with
;; Emacs's url library.
;;
;; An importer puts `:executor' (:type "openapi" ...) in the tool plist
;; (the server, method, path, parameters, body, `x-plugin-auth',
;; templates...); `toolspec-resolve-executor' hands it to
;; `toolspec-http-make-executor', registered in
;; `toolspec-executor-makers' under "openapi".  The tool's function is
;; asynchronous and asks before running (`:confirm nil' when importing
;; says otherwise).
;;
;; What a call does:
;;
;; - It contacts only the server fixed when the tool was imported: the
;;   `:server' import option, else `toolspec-http-servers' (by API
;;   title or host), else the document's server when it is an absolute
;;   http(s) URL.  A relative server needs one of the first two.
;;   Redirects are followed only on that server (same scheme, host and
;;   port); a redirect elsewhere is refused.
;; - Path parameters are substituted and percent-encoded, the query
;;   string, headers and cookies are built following the parameters'
;;   `style' and `explode', and the JSON (or form) body from the args.
;; - Credentials come from auth-source for the server's host, never
;;   from the document, and only for a host the import approved (the
;;   `:credentials' option, `toolspec-http-approved-credentials', or
;;   the import preview's question).  They go in the Authorization
;;   header only (bootstrap values may also put them in parameters, as
;;   OpenPlugin's bootstrap operations need), and are never logged or
;;   shown: responses are scrubbed of them (raw, reversed, percent-
;;   encoded, JSON-escaped, base64) before lookups and templates read
;;   them, and so is every text a call returns; messages show the URL
;;   with a value made from a credential left out.  OAuth APIs without
;;   a stored token answer with where to authorize.
;; - A 2xx JSON response goes through the `x-lookup' lookups, then the
;;   `x-filter' and `x-output-modules' Jinja templates (sandboxed, each
;;   rendered in a `toolspec render' process limited in time and memory:
;;   `toolspec-render-template'), else it is returned as compact JSON; other
;;   statuses are an error naming the status, the request and the start
;;   of the body.  Results are capped at `toolspec-http-max-result-size'
;;   characters with a visible marker.
;;
;; `toolspec-openapi-bootstrap' runs an API's `x-bootstrap' operations
;; and returns (or inserts) their results, for the model's context.
;;
;; The transport (`toolspec-http--send', with its limits, credentials
;; and redirect rules) also carries the calls of Gloodata extensions and
;; Arcade workers (toolspec-gloodata.el, toolspec-arcade.el), through
;; `toolspec-http--post-json'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url)
(require 'url-http)
(require 'url-util)
(require 'auth-source)
(require 'toolspec)
(require 'toolspec-gptel)

(defvar url-http-end-of-headers)
(defvar url-http-codes)
(defvar url-registered-auth-schemes)

;;;; Options

(defgroup toolspec-http nil
  "Running tools imported from OpenAPI documents."
  :group 'toolspec
  :prefix "toolspec-http-")

(defcustom toolspec-http-servers nil
  "Alist (KEY . BASE-URL) of the servers OpenAPI tools run on.
KEY is an API's title (from its document's `info.title') or the host
of the server its document names.  BASE-URL, an absolute http or
https URL, replaces the document's server: the path of each
operation is appended to it.  An API whose document gives a
relative server (or none) needs an entry here, or the `:server'
import option.  The server is fixed when the tools are imported."
  :type '(alist :key-type (string :tag "API title or host")
                :value-type (string :tag "Base URL"))
  :group 'toolspec-http)

(defcustom toolspec-http-timeout 30
  "Seconds a tool waits for its HTTP response.
For every executor: OpenAPI operations, Gloodata extensions and
Arcade workers."
  :type 'number
  :group 'toolspec-http)

(defcustom toolspec-http-max-result-size 16384
  "Largest result, in characters, an OpenAPI tool returns to the model.
Longer results are cut and end with a line saying so."
  :type 'natnum
  :group 'toolspec-http)

(defcustom toolspec-http-max-response-size (* 8 1024 1024)
  "Largest HTTP response, in bytes, a tool reads.
A larger response is abandoned and the call fails.  Compressed
responses are not read at all: requests ask for none, and refuse
one that comes anyway, as nothing bounds its inflated size."
  :type 'natnum
  :group 'toolspec-http)

(defcustom toolspec-http-templates-timeout 10
  "Seconds all the templates of one OpenAPI call may take together.
The response filter and the output modules of a call, and those of
the calls its `x-lookup' fields make, share this time; each template
also stops after `toolspec-template-timeout'.  When it runs out, the
call returns the unprocessed response with a note saying so.  While
templates render, \\[keyboard-quit] stops them and the call."
  :type 'number
  :group 'toolspec-http)

(defcustom toolspec-http-max-lookups 10
  "Most `x-lookup' calls made for one response.
Values beyond are left as they are."
  :type 'natnum
  :group 'toolspec-http)

(defcustom toolspec-http-max-redirects 3
  "Most redirects an OpenAPI call follows on its own server."
  :type 'natnum
  :group 'toolspec-http)

(defcustom toolspec-http-approved-credentials nil
  "Alist (FILE . HOSTS): the credentials the tools of FILE may use.
FILE is an OpenAPI document imported without being asked about its
credentials (by `toolspec-load-tool-directories', or
`toolspec-import-file' from Lisp); HOSTS are the hosts whose
auth-source credentials its tools may send to their server.  The
`:credentials' import option approves hosts for one import, and the
import preview asks.  A tool whose server's host is not approved for
its import gets no credential: it answers that it needs one."
  :type '(alist :key-type (file :tag "OpenAPI document")
                :value-type (repeat (string :tag "Host")))
  :group 'toolspec-http)

(defconst toolspec-http--lookup-result-size 2000
  "Largest looked-up text, in characters, put into a response.")

;;;; Operations

(cl-defstruct (toolspec-http--op (:constructor toolspec-http--op-make)
                                 (:copier nil))
  "One imported OpenAPI operation.
NAME is the tool's name, TITLE the API's, TOOL the tool plist, EXEC
its executor plist, BASE the approved base URL (nil when there is
none) and PROBLEM why there is none.  CREDENTIAL is the host whose
auth-source credential the import approved for the operation, or
nil: no credential is looked up for any other."
  name title tool exec base problem credential)

(defvar gptel--tool-preview-alist)

(defvar toolspec-http--operations (make-hash-table :test 'equal)
  "Imported OpenAPI operations: (TITLE . NAME) -> `toolspec-http--op'.
Lookups and bootstrap find the operations of an API here.")

(defun toolspec-http--value (v)
  "V, with JSON null and false read as nil."
  (if (memq v '(:null :json-false :false)) nil v))

(defun toolspec-http--get (plist key)
  "KEY of PLIST, with JSON null and false read as nil."
  (toolspec-http--value (plist-get plist key)))

(defun toolspec-http--json (value)
  "VALUE as JSON text (a multibyte string), nil and false being false.
`json-serialize' returns UTF-8 bytes in Emacs 30 and text before."
  (let ((json (json-serialize value :null-object :null :false-object :false)))
    (if (multibyte-string-p json) json (decode-coding-string json 'utf-8))))

(defvar toolspec-http--hosts (make-hash-table :test #'equal)
  "The host of each URL `toolspec-http--host' was asked for, or nil.
The operations of one API share a few server URLs, and parsing one
makes and kills a buffer.")

(defun toolspec-http--host (url)
  "The host of URL, a string, parsed by `url-generic-parse-url'."
  (pcase (gethash url toolspec-http--hosts 'unknown)
    ('unknown
     (when (> (hash-table-count toolspec-http--hosts) 256)
       (clrhash toolspec-http--hosts))
     (puthash url (url-host (url-generic-parse-url url)) toolspec-http--hosts))
    (host host)))

(defun toolspec-http--absolute-p (url)
  "Non-nil when URL is an absolute http(s) URL with a host and no template."
  (and (stringp url)
       (string-match-p "\\`https?://[^/?#{}]+" url)
       (not (string-match-p "[{}[:space:]]" url))
       (let ((host (toolspec-http--host url)))
         (and host (not (string-empty-p host))))))

(defun toolspec-http--base (exec options)
  "The base URL of EXEC, an executor plist, under import OPTIONS.
Returns (BASE . PROBLEM): BASE nil when there is no usable server,
PROBLEM saying why."
  (let* ((server (toolspec-http--get exec :server))
         (title (toolspec-http--get exec :title))
         (host (and (toolspec-http--absolute-p server)
                    (toolspec-http--host server)))
         (override (or (plist-get options :server)
                       (and title (cdr (assoc title toolspec-http-servers)))
                       (and host (cdr (assoc host toolspec-http-servers))))))
    (cond
     (override
      (if (toolspec-http--absolute-p override)
          (cons (string-trim-right override "/+") nil)
        (cons nil (format "the server %S set for API %S is not an absolute http(s) URL"
                          override (or title "")))))
     ((toolspec-http--absolute-p server)
      (cons (string-trim-right server "/+") nil))
     (t
      (cons nil
            (format "API %S %s, so this Emacs does not know where to send the request: set the API's base URL with the :server import option or in `toolspec-http-servers' (key %S), then import it again"
                    (or title "")
                    (if (and (stringp server) (not (string-empty-p server)))
                        (format "gives no absolute server URL (%S)" server)
                      "gives no server URL")
                    (or title "the API title")))))))

(defun toolspec-http--needs-credential-p (exec)
  "Non-nil when EXEC, an executor plist, takes a credential from auth-source."
  (member (toolspec-http--get (toolspec-http--get exec :auth) :type)
          '("user_http" "service_http" "oauth")))

(defun toolspec-http--approved-hosts (options)
  "The hosts whose credentials import OPTIONS approve, in lower case.
They are OPTIONS's `:credentials' (a host or a list of hosts) and
the hosts `toolspec-http-approved-credentials' gives its `:source'."
  (let* ((given (plist-get options :credentials))
         (source (plist-get options :source))
         (file (and (stringp source) (expand-file-name source)))
         (listed (and file
                      (cl-loop for (f . hosts) in toolspec-http-approved-credentials
                               when (and (stringp f) (equal (expand-file-name f) file))
                               append (if (stringp hosts) (list hosts) hosts)))))
    (mapcar #'downcase
            (cl-remove-if-not #'stringp
                              (append (if (stringp given) (list given) (and (listp given) given))
                                      listed)))))

(defun toolspec-http-credential-hosts (tools options)
  "The credentials TOOLS would use if imported with OPTIONS.
TOOLS are tool plists; those with an OpenAPI executor whose API
authenticates take the auth-source credential of their server's
host.  Returns a list (HOST TITLE APPROVED): each host once, the
title of an API using it, and whether OPTIONS approve it (see
`toolspec-http-approved-credentials')."
  (let ((approved (toolspec-http--approved-hosts options))
        (found nil))
    (dolist (tool tools)
      (let ((exec (plist-get tool :executor)))
        (when (and (equal (format "%s" (plist-get exec :type)) "openapi")
                   (toolspec-http--needs-credential-p exec))
          (when-let* ((base (car (toolspec-http--base exec options)))
                      (host (toolspec-http--host base)))
            (unless (assoc host found)
              (push (list host (or (toolspec-http--get exec :title) "")
                          (and (member (downcase host) approved) t))
                    found))))))
    (nreverse found)))

(defun toolspec-http--make-op (tool options)
  "The `toolspec-http--op' of TOOL, an OpenAPI tool plist, under OPTIONS."
  (let* ((exec (plist-get tool :executor))
         (base (toolspec-http--base exec options))
         (host (and (car base) (toolspec-http--host (car base)))))
    (toolspec-http--op-make :name (plist-get tool :name)
                            :title (or (toolspec-http--get exec :title) "")
                            :tool tool :exec exec
                            :base (car base) :problem (cdr base)
                            :credential
                            (and host (toolspec-http--needs-credential-p exec)
                                 (member (downcase host) (toolspec-http--approved-hosts options))
                                 host))))

(defun toolspec-http--auth-text (op)
  "What credential OP sends, as text."
  (let* ((exec (toolspec-http--op-exec op))
         (auth (toolspec-http--get exec :auth))
         (type (or (toolspec-http--get auth :type) "none"))
         (host (and (toolspec-http--op-base op) (toolspec-http--host (toolspec-http--op-base op)))))
    (cond ((equal type "none") "none")
          ((not (toolspec-http--needs-credential-p exec)) (format "%s (not supported)" type))
          (t (format "%s credential of %s from auth-source (%s)"
                     (if (equal type "oauth") "OAuth token"
                       (downcase (or (toolspec-http--get auth :authorizationType) "bearer")))
                     (or host "the server")
                     (if (toolspec-http--op-credential op) "approved" "not approved: nothing is sent"))))))

(defun toolspec-http-describe (tool options)
  "Describe the HTTP request of TOOL, an OpenAPI tool plist, under OPTIONS.
Returns a plist of texts: `:method', `:url' (the server and the
path template), `:server' and `:auth' (which credential it sends)."
  (let* ((op (toolspec-http--make-op tool options))
         (exec (toolspec-http--op-exec op))
         (base (toolspec-http--op-base op)))
    (list :method (upcase (or (toolspec-http--get exec :method) "GET"))
          :url (concat (or base "?") (or (toolspec-http--get exec :path) "/"))
          :server (or base (format "none: %s" (toolspec-http--op-problem op)))
          :auth (toolspec-http--auth-text op))))

(defun toolspec-http--call-line (op args)
  "Return the request OP sends for ARGS as one line: METHOD HOST/PATH?QUERY.
The scheme is left out, a credential's value too (see
`toolspec-http--request-parts')."
  (let ((exec (toolspec-http--op-exec op)))
    (if (not (toolspec-http--op-base op))
        (format "%s %s (no server)" (upcase (or (toolspec-http--get exec :method) "GET"))
                (or (toolspec-http--get exec :path) "/"))
      (condition-case err
          (let ((req (toolspec-http--request-parts op args)))
            (format "%s %s" (plist-get req :method)
                    (replace-regexp-in-string "\\`https?://" "" (plist-get req :shown))))
        (error (format "%s %s%s (%s)" (upcase (or (toolspec-http--get exec :method) "GET"))
                       (replace-regexp-in-string "\\`https?://" "" (toolspec-http--op-base op))
                       (or (toolspec-http--get exec :path) "/")
                       (if (stringp (cadr err)) (cadr err) (error-message-string err))))))))

(defun toolspec-http--preview (op)
  "A gptel tool-call preview of OP: the request it would send."
  (lambda (arg-values _info)
    (insert (propertize (toolspec-http--call-line op arg-values)
                        'font-lock-face 'font-lock-keyword-face)
            (propertize (format "  (%s)" (toolspec-http--op-name op))
                        'font-lock-face 'font-lock-comment-face)
            "\n")
    nil))

(defun toolspec-http-make-executor (tool options)
  "Make the function running TOOL, an OpenAPI operation, under OPTIONS.
TOOL is a tool plist whose `:executor' is an OpenAPI executor (see
toolspec-http.el); OPTIONS are the import options, of which
`:server' sets the base URL.  Returns (:function F :async t
:confirm t): F takes a callback, then the tool's args in order.
The tool may use the auth-source credential of its server's host
only if OPTIONS approve that host: `:credentials' (a host or a list
of hosts), or `toolspec-http-approved-credentials' for its `:source'."
  (let* ((tool (copy-tree tool))
         (op (toolspec-http--make-op tool options)))
    (puthash (cons (toolspec-http--op-title op) (toolspec-http--op-name op))
             op toolspec-http--operations)
    ;; gptel's confirmation shows the request, not the values alone.
    (when (boundp 'gptel--tool-preview-alist)
      (setf (alist-get (toolspec-http--op-name op) gptel--tool-preview-alist nil nil #'equal)
            (list (toolspec-http--preview op))))
    (list :function (lambda (callback &rest args)
                      (toolspec-http--run op args callback))
          :async t
          :confirm t)))

;;;; Building requests

(defun toolspec-http--arg-spec (op name)
  "The arg plist of OP's tool named NAME, or nil."
  (cl-find name (plist-get (toolspec-http--op-tool op) :args)
           :key (lambda (a) (plist-get a :name)) :test #'equal))

(defun toolspec-http--type (schema)
  "The type of SCHEMA as a string, or nil."
  (let ((type (plist-get schema :type)))
    (and type (format "%s" type))))

(defun toolspec-http--arg-value (op args name)
  "The value of OP's arg NAME among ARGS (positional, in the tool's order).
A required boolean arg whose value is nil was sent as false: it is
returned as `:false'; other nil values are nil (absent)."
  (let* ((pos (cl-position name (plist-get (toolspec-http--op-tool op) :args)
                           :key (lambda (a) (plist-get a :name)) :test #'equal))
         (value (and pos (toolspec-http--value (nth pos args))))
         (spec (and pos (toolspec-http--arg-spec op name))))
    (if (and (null value) spec (not (plist-get spec :optional))
             (equal (toolspec-http--type spec) "boolean"))
        :false
      value)))

(defun toolspec-http--plist-p (v)
  "Non-nil when V is a plist with keyword keys."
  (and (consp v) (keywordp (car v))))

(defun toolspec-http--pairs (v)
  "The (KEY-STRING . VALUE) pairs of object V, a plist or an alist."
  (cond ((toolspec-http--plist-p v)
         (cl-loop for (k x) on v by #'cddr collect (cons (substring (symbol-name k) 1) x)))
        ((and (consp v) (consp (car v)))
         (mapcar (lambda (c) (cons (format "%s" (car c)) (cdr c))) v))))

(defun toolspec-http--members (v)
  "The (KEY-STRING . VALUE) pairs of object V whose value is not null."
  (cl-remove-if (lambda (c) (memq (cdr c) '(nil :null))) (toolspec-http--pairs v)))

(defun toolspec-http--object-p (v)
  "Non-nil when V is a JSON object as args carry them (plist or alist)."
  (or (toolspec-http--plist-p v) (and (consp v) (consp (car v)))))

(defun toolspec-http--scalar (v)
  "V, a scalar argument value, as text for a URL or header."
  (cond ((eq v t) "true")
        ((memq v '(:false :json-false)) "false")
        ((integerp v) (number-to-string v))
        ((floatp v) (if (and (= v (ffloor v)) (< (abs v) 1e15))
                        (format "%d" (truncate v))
                      (number-to-string v)))
        ((stringp v) v)
        ((symbolp v) (symbol-name v))
        (t (toolspec-http--json (toolspec-http--jsonify v nil)))))

(defun toolspec-http--items (v)
  "The items of V, an array value (vector or list), as a list."
  (append v nil))

(defun toolspec-http--array-p (v)
  "Non-nil when V is an array argument value."
  (or (vectorp v) (and (consp v) (not (toolspec-http--object-p v)))))

(defun toolspec-http--enc (s)
  "S percent-encoded for any part of a URL."
  (url-hexify-string s))

(defun toolspec-http--style (param default)
  "The style of PARAM (a string), DEFAULT when it has none."
  (or (toolspec-http--get param :style) default))

(defun toolspec-http--explode (param style)
  "Whether PARAM explodes, given its STYLE (OpenAPI's defaults)."
  (if (plist-member param :explode)
      (and (toolspec-http--get param :explode) t)
    (equal style "form")))

(defun toolspec-http--path-value (param value)
  "VALUE of path PARAM, encoded for the path."
  (let* ((style (toolspec-http--style param "simple"))
         (explode (toolspec-http--explode param style))
         (name (toolspec-http--get param :name))
         (enc (lambda (x)
                (let ((s (toolspec-http--enc (toolspec-http--scalar x))))
                  ;; "." and ".." would move in the path.
                  (if (string-match-p "\\`\\.+\\'" s)
                      (replace-regexp-in-string "\\." "%2E" s)
                    s))))
         (parts (cond ((toolspec-http--array-p value)
                       (mapcar enc (toolspec-http--items value)))
                      ((toolspec-http--object-p value)
                       (if explode
                           (mapcar (lambda (c) (concat (funcall enc (car c)) "=" (funcall enc (cdr c))))
                                   (toolspec-http--pairs value))
                         (cl-loop for (k . x) in (toolspec-http--pairs value)
                                  append (list (funcall enc k) (funcall enc x)))))
                      (t (list (funcall enc value))))))
    (pcase style
      ("label" (concat "." (mapconcat #'identity parts (if explode "." ","))))
      ("matrix" (if (and explode (toolspec-http--array-p value))
                    (mapconcat (lambda (p) (concat ";" name "=" p)) parts "")
                  (concat ";" name "=" (mapconcat #'identity parts ","))))
      (_ (mapconcat #'identity parts ",")))))

(defun toolspec-http--deep-parts (key value &optional enc)
  "The (NAME TEXT) pieces of VALUE under KEY in style deepObject.
An object's members are KEY[MEMBER], an array's items KEY[0], KEY[1]...,
nested as deep as VALUE goes, as most servers read forms and queries;
null members are left out.  Each MEMBER goes through ENC, a function
of a string (default: none); KEY is taken as it is."
  (cond ((memq value '(nil :null)) nil)
        ((toolspec-http--object-p value)
         (cl-loop for (name . x) in (toolspec-http--pairs value)
                  append (toolspec-http--deep-parts
                          (concat key "[" (if enc (funcall enc name) name) "]") x enc)))
        ((toolspec-http--array-p value)
         (cl-loop for x in (toolspec-http--items value)
                  for i from 0
                  append (toolspec-http--deep-parts (format "%s[%d]" key i) x enc)))
        (t (list (list key (toolspec-http--scalar value))))))

(defun toolspec-http--deep-pairs (key value)
  "The \"k=v\" pieces of VALUE under KEY (encoded) in style deepObject.
See `toolspec-http--deep-parts'; names and values are percent-encoded."
  (mapcar (lambda (part) (concat (car part) "=" (toolspec-http--enc (cadr part))))
          (toolspec-http--deep-parts key value #'toolspec-http--enc)))

(defun toolspec-http--query-pairs (param value)
  "The query string pieces (\"k=v\" strings) for query PARAM with VALUE.
An object's null members are left out."
  (let* ((name (toolspec-http--get param :name))
         (style (toolspec-http--style param "form"))
         (explode (toolspec-http--explode param style))
         (k (toolspec-http--enc name))
         (enc (lambda (x) (toolspec-http--enc (toolspec-http--scalar x)))))
    (cond
     ((and (equal style "deepObject") (toolspec-http--array-p value))
      (toolspec-http--deep-pairs k value))
     ((toolspec-http--array-p value)
      (let ((items (mapcar enc (toolspec-http--items value))))
        (pcase style
          ("spaceDelimited" (list (concat k "=" (mapconcat #'identity items "%20"))))
          ("pipeDelimited" (list (concat k "=" (mapconcat #'identity items "|"))))
          (_ (if explode
                 (mapcar (lambda (i) (concat k "=" i)) items)
               (list (concat k "=" (mapconcat #'identity items ","))))))))
     ((toolspec-http--object-p value)
      (let ((pairs (toolspec-http--members value)))
        (cond ((equal style "deepObject") (toolspec-http--deep-pairs k value))
              (explode
               (mapcar (lambda (c) (concat (toolspec-http--enc (car c)) "=" (funcall enc (cdr c))))
                       pairs))
              (t (list (concat k "="
                               (mapconcat (lambda (c) (concat (toolspec-http--enc (car c)) ","
                                                              (funcall enc (cdr c))))
                                          pairs ",")))))))
     (t (list (concat k "=" (funcall enc value)))))))

(defun toolspec-http--token-p (name)
  "Non-nil when NAME is an HTTP token, as header and cookie names must be."
  (and (stringp name)
       (string-match-p "\\`[!#$%&'*+.^_`|~0-9A-Za-z-]+\\'" name)))

(defun toolspec-http--checked-name (name kind)
  "NAME, the name of a KIND parameter (\"header\" or \"cookie\"), checked.
Signal `toolspec-http-error' when it is not an HTTP token: a line
break would add a header, a `=' or `;' another cookie."
  (unless (toolspec-http--token-p name)
    (signal 'toolspec-http-error
            (list (format "the %s parameter %s of the API document is not a valid %s name (only letters, digits and !#$%%&'*+-.^_`|~)"
                          kind
                          (let ((print-escape-newlines t) (print-escape-control-characters t))
                            (prin1-to-string name))
                          (if (equal kind "header") "HTTP header" kind)))))
  name)

(defun toolspec-http--header-text (name text)
  "TEXT checked as the value of header NAME: ASCII, no control characters.
A tab is allowed; a line break, NUL, escape or other control
character is not."
  (when (string-match-p "[\r\n]" text)
    (signal 'toolspec-http-error
            (list (format "the value of header %s holds a line break" name))))
  (when (string-match-p "[\0-\x08\x0b-\x1f\x7f]" text)
    (signal 'toolspec-http-error
            (list (format "the value of header %s holds a control character (only tabs are allowed)" name))))
  (unless (string-match-p "\\`[[:ascii:]]*\\'" text)
    (signal 'toolspec-http-error
            (list (format "the value of header %s is not ASCII text" name))))
  text)

(defun toolspec-http--header-value (param value)
  "VALUE of header PARAM as header text (style simple)."
  (let ((explode (toolspec-http--get param :explode)))
    (toolspec-http--header-text
     (toolspec-http--get param :name)
     (cond ((toolspec-http--array-p value)
            (mapconcat #'toolspec-http--scalar (toolspec-http--items value) ","))
           ((toolspec-http--object-p value)
            (mapconcat (lambda (c) (if explode
                                       (concat (car c) "=" (toolspec-http--scalar (cdr c)))
                                     (concat (car c) "," (toolspec-http--scalar (cdr c)))))
                       (toolspec-http--pairs value) ","))
           (t (toolspec-http--scalar value))))))

(defun toolspec-http--cookie-pieces (param value)
  "The \"name=value\" pieces of cookie PARAM with VALUE."
  (let* ((name (toolspec-http--checked-name (toolspec-http--get param :name) "cookie"))
         (explode (toolspec-http--explode param "form"))
         (enc (lambda (x) (toolspec-http--enc (toolspec-http--scalar x)))))
    (cond ((and (toolspec-http--array-p value) explode)
           (mapcar (lambda (x) (concat name "=" (funcall enc x))) (toolspec-http--items value)))
          ((toolspec-http--array-p value)
           (list (concat name "=" (mapconcat enc (toolspec-http--items value) ","))))
          ((toolspec-http--object-p value)
           (list (concat name "=" (mapconcat (lambda (c) (concat (toolspec-http--enc (car c)) ","
                                                                   (funcall enc (cdr c))))
                                              (toolspec-http--pairs value) ","))))
          (t (list (concat name "=" (funcall enc value)))))))

(defun toolspec-http--jsonify (value schema)
  "VALUE, an argument value, as `json-serialize' takes it, read by SCHEMA.
nil is false, [] or {} when SCHEMA says boolean, array or object,
and null otherwise."
  (let ((type (toolspec-http--type schema)))
    (cond
     ((memq value '(:false :json-false)) :false)
     ((eq value :null) :null)
     ((null value) (pcase type
                     ("boolean" :false)
                     ("array" [])
                     ("object" (make-hash-table :test 'equal))
                     (_ :null)))
     ((eq value t) t)
     ((or (numberp value) (stringp value)) value)
     ((toolspec-http--object-p value)
      (let ((props (plist-get schema :properties))
            (table (make-hash-table :test 'equal)))
        (pcase-dolist (`(,k . ,x) (toolspec-http--pairs value))
          (puthash k (toolspec-http--jsonify x (plist-get props (intern (concat ":" k)))) table))
        table))
     ((toolspec-http--array-p value)
      (vconcat (mapcar (lambda (x) (toolspec-http--jsonify x (plist-get schema :items)))
                       (toolspec-http--items value))))
     ((symbolp value) (symbol-name value))
     (t (format "%s" value)))))

(defun toolspec-http--form-p (ctype)
  "Non-nil when CTYPE, a media type, is a form's."
  (string-match-p "\\`[ \t]*application/x-www-form-urlencoded[ \t]*\\(?:;\\|\\'\\)"
                  (downcase ctype)))

(defun toolspec-http--multipart-p (ctype)
  "Non-nil when CTYPE, a media type, is multipart/form-data."
  (string-match-p "\\`[ \t]*multipart/form-data[ \t]*\\(?:;\\|\\'\\)" (downcase ctype)))

(defun toolspec-http--text-type-p (ctype)
  "Non-nil when CTYPE is a media type of text sent as it is.
That is text/..., but for JSON and XML, which describe structures."
  (let ((essence (downcase (string-trim (car (split-string ctype ";"))))))
    (and (string-match-p "\\`text/." essence)
         (not (member essence '("text/json" "text/xml")))
         (not (string-suffix-p "+xml" essence)))))

(defun toolspec-http--form-fields (op args body)
  "The fields of form BODY (OP's body spec) for ARGS: (NAME . VALUE)s.
With `:whole', the members of that argument's object; else the
arguments of `:args' that have a value.  `none' when the body is
one argument and it has no value."
  (let ((whole (toolspec-http--get body :whole)))
    (if whole
        (let ((v (toolspec-http--arg-value op args whole)))
          (cond ((null v) 'none)
                ((toolspec-http--object-p v) (toolspec-http--members v))
                (t (signal 'toolspec-http-error
                           (list "a form body must be an object")))))
      (cl-loop for pair in (append (toolspec-http--get body :args) nil)
               for v = (toolspec-http--arg-value op args (elt pair 0))
               when v collect (cons (elt pair 1) v)))))

(defun toolspec-http--field-encoding (body name)
  "The way form BODY's `:encoding' writes field NAME: a plist or nil."
  (let* ((encoding (toolspec-http--get body :encoding))
         (how (and (consp encoding) (plist-get encoding (intern (concat ":" name))))))
    (and (consp how) how)))

(defun toolspec-http--form-text (op args body)
  "The form BODY (OP's body spec) for ARGS, as urlencoded text, or nil.
Each field is written as a query parameter would be, with the style
and explode its `:encoding' gives (default form, exploded)."
  (let ((fields (toolspec-http--form-fields op args body)))
    (unless (eq fields 'none)
      (mapconcat
       #'identity
       (cl-loop for (name . v) in fields
                append (toolspec-http--query-pairs
                        (append (list :name name) (toolspec-http--field-encoding body name)) v))
       "&"))))

(defun toolspec-http--field-parts (name value how)
  "The parts of form field NAME with VALUE, as HOW (its encoding) wants.
Each part is (PART-NAME TEXT) or (PART-NAME JSON-TEXT json).  A
scalar is its text; an array of scalars a part per item (one part,
comma-separated, when HOW says explode false); an object, or an
array holding some, is JSON (OpenAPI's default for such fields);
style deepObject names a part per member, as forms do."
  (let ((scalar-p (lambda (x) (not (or (toolspec-http--object-p x) (toolspec-http--array-p x))))))
    (cond
     ((memq value '(nil :null)) nil)
     ((equal (toolspec-http--get how :style) "deepObject")
      (toolspec-http--deep-parts name value))
     ((and (toolspec-http--array-p value)
           (cl-every scalar-p (toolspec-http--items value)))
      (let ((texts (mapcar #'toolspec-http--scalar
                           (cl-remove-if (lambda (x) (memq x '(nil :null))) (toolspec-http--items value)))))
        (if (and (plist-member how :explode) (not (toolspec-http--get how :explode)))
            (list (list name (string-join texts ",")))
          (mapcar (lambda (text) (list name text)) texts))))
     ((funcall scalar-p value) (list (list name (toolspec-http--scalar value))))
     (t (list (list name (toolspec-http--json (toolspec-http--jsonify value nil)) 'json))))))

(defun toolspec-http--multipart-name (name)
  "NAME quoted for a Content-Disposition header, as browsers write it."
  (replace-regexp-in-string
   "[\"\r\n]" (lambda (c) (pcase c ("\"" "%22") ("\r" "%0D") (_ "%0A"))) name t t))

(defun toolspec-http--multipart (op args body)
  "The multipart/form-data BODY (OP's body spec) for ARGS, or nil.
Return (BOUNDARY . BYTES).  Each field is one part or more (see
`toolspec-http--field-parts'), its text in UTF-8."
  (let ((fields (toolspec-http--form-fields op args body)))
    (unless (eq fields 'none)
      (let* ((utf-8 (lambda (s) (encode-coding-string s 'utf-8)))
             (parts (cl-loop for (name . v) in fields
                             append (toolspec-http--field-parts
                                     name v (toolspec-http--field-encoding body name))))
             (encoded (mapcar (lambda (p)
                                (list (funcall utf-8 (toolspec-http--multipart-name (nth 0 p)))
                                      (funcall utf-8 (nth 1 p))
                                      (nth 2 p)))
                              parts))
             (boundary nil))
        ;; A boundary found in no part.
        (while (or (null boundary)
                   (cl-some (lambda (p) (or (string-search boundary (nth 0 p))
                                            (string-search boundary (nth 1 p))))
                            encoded))
          (setq boundary (funcall utf-8 (format "toolspec-%s" (md5 (format "%s %s %s" (random) (float-time) boundary))))))
        (cons boundary
              (apply #'concat
                     (append
                      (mapcar (lambda (p)
                                (concat "--" boundary "\r\n"
                                        "Content-Disposition: form-data; name=\"" (nth 0 p) "\"\r\n"
                                        (if (nth 2 p) "Content-Type: application/json\r\n" "")
                                        "\r\n" (nth 1 p) "\r\n"))
                              encoded)
                      (list "--" boundary "--\r\n"))))))))

(defun toolspec-http--text-body (op args body ctype)
  "The text BODY (OP's body spec, of type CTYPE) for ARGS, or nil.
Return (CONTENT-TYPE . BYTES): the argument's text in UTF-8, CTYPE
saying so when it names no charset."
  (let* ((whole (toolspec-http--get body :whole))
         (v (and whole (toolspec-http--arg-value op args whole))))
    (cond
     ((null v) nil)
     ((or (stringp v) (numberp v) (memq v '(t :false :json-false)))
      (cons (if (string-match-p ";[ \t]*charset=" (downcase ctype)) ctype (concat ctype "; charset=utf-8"))
            (encode-coding-string (toolspec-http--scalar v) 'utf-8)))
     (t (signal 'toolspec-http-error (list (format "a %s body must be text" ctype)))))))

(defun toolspec-http--json-value (op args body)
  "The value of BODY (OP's JSON body spec) for ARGS, for `json-serialize'.
nil when the body is one argument and it has no value."
  (let ((whole (toolspec-http--get body :whole)))
    (if whole
        (let ((v (toolspec-http--arg-value op args whole)))
          (and v (toolspec-http--jsonify v (toolspec-http--arg-spec op whole))))
      (let ((table (make-hash-table :test 'equal)))
        (seq-doseq (pair (or (toolspec-http--get body :args) []))
          (let* ((arg (elt pair 0))
                 (v (toolspec-http--arg-value op args arg)))
            (when v
              (puthash (elt pair 1) (toolspec-http--jsonify v (toolspec-http--arg-spec op arg))
                       table))))
        table))))

(defun toolspec-http--body (op args)
  "The request body of OP for ARGS: (CONTENT-TYPE . BYTES), or nil."
  (let* ((body (toolspec-http--get (toolspec-http--op-exec op) :body))
         (ctype (and body (or (toolspec-http--get body :contentType) "application/json"))))
    (cond
     ((null body) nil)
     ((toolspec-http--form-p ctype)
      (let ((text (toolspec-http--form-text op args body)))
        (and text (cons ctype (encode-coding-string text 'utf-8)))))
     ((toolspec-http--multipart-p ctype)
      (let ((parts (toolspec-http--multipart op args body)))
        (and parts (cons (concat "multipart/form-data; boundary=" (car parts)) (cdr parts)))))
     ((toolspec-http--text-type-p ctype) (toolspec-http--text-body op args body ctype))
     (t
      (let ((value (toolspec-http--json-value op args body)))
        (cond
         ((null value) nil)
         ((string-match-p "json" ctype)
          (cons ctype (encode-coding-string (toolspec-http--json value) 'utf-8)))
         (t (signal 'toolspec-http-error
                    (list (format "request bodies of type %s are not supported (only JSON, forms and text)"
                                  ctype))))))))))

(defun toolspec-http--request-parts (op args &optional fixed)
  "The request of OP for ARGS: (:method M :url U :shown S :headers H :data D).
FIXED is an alist of (NAME VALUE SECRET) giving the values of the
parameters no argument gives (the importer writes their `:arg' as
null): those of bootstrap operations, rendered from their
`x-bootstrap-value'.  SECRET non-nil says VALUE was made from a
credential: S, the URL to show in messages, has the parameter's
name in its place (\"{NAME}\" in the path, NAME=[redacted] in the
query), where U, the URL sent, has the value."
  (let* ((exec (toolspec-http--op-exec op))
         (method (upcase (or (toolspec-http--get exec :method) "GET")))
         (path (or (toolspec-http--get exec :path) "/"))
         (shown-path path)
         (query nil) (shown-query nil) (headers nil) (cookies nil))
    (seq-doseq (param (or (toolspec-http--get exec :parameters) []))
      (let* ((name (toolspec-http--get param :name))
             (where (toolspec-http--get param :in))
             (given (and (null (toolspec-http--get param :arg)) (assoc name fixed)))
             (hidden (nth 2 given))
             (value (if given
                        (toolspec-http--value (nth 1 given))
                      (toolspec-http--arg-value op args (or (toolspec-http--get param :arg) name)))))
        (pcase where
          ("path"
           (let ((hole (concat "{" name "}")))
             (when (string-search hole path)
               (unless value
                 (signal 'toolspec-http-error
                         (list (format "the path parameter %s has no value" name))))
               (let ((text (toolspec-http--path-value param value)))
                 ;; "" would send DELETE /items/ for DELETE /items/{id}.
                 (when (or (equal value "") (equal value []) (string-empty-p text))
                   (signal 'toolspec-http-error
                           (list (format "the path parameter %s is empty: %s %s needs a value for it"
                                         name method (toolspec-http--get exec :path)))))
                 (setq path (string-replace hole text path))
                 (unless hidden
                   (setq shown-path (string-replace hole text shown-path)))))))
          ((guard (null value)) nil)
          ("query"
           (let ((pairs (toolspec-http--query-pairs param value)))
             (setq query (append query pairs))
             (setq shown-query
                   (append shown-query
                           (if hidden
                               (list (concat (toolspec-http--enc name) "=[redacted]"))
                             pairs)))))
          ("header"
           (toolspec-http--checked-name name "header")
           (unless (member (downcase name) '("host" "content-length" "connection"
                                             "transfer-encoding" "authorization" "cookie"))
             (push (cons name (toolspec-http--header-value param value)) headers)))
          ("cookie" (setq cookies (append cookies (toolspec-http--cookie-pieces param value)))))))
    (when (string-match-p "{[^}]*}" path)
      (signal 'toolspec-http-error
              (list (format "the path %s has parameters the operation does not describe" path))))
    (unless (string-prefix-p "/" path) (setq path (concat "/" path)))
    (let ((body (toolspec-http--body op args)))
      (when cookies
        (push (cons "Cookie" (toolspec-http--header-text "Cookie" (string-join cookies "; "))) headers))
      (when body
        (push (cons "Content-Type" (car body)) headers))
      (list :method method
            :url (concat (toolspec-http--op-base op) path
                         (if query (concat "?" (string-join query "&")) ""))
            :shown (concat (toolspec-http--op-base op)
                           (if (string-prefix-p "/" shown-path) shown-path (concat "/" shown-path))
                           (if shown-query (concat "?" (string-join shown-query "&")) ""))
            :headers (nreverse headers)
            :data (cdr body)))))

;;;; Credentials

(defun toolspec-http--auth-entry (host)
  "The first auth-source entry for HOST, or nil."
  (car (auth-source-search :host host :max 1)))

(defun toolspec-http--no-credential (op host login)
  "Tell the user OP found no credential for HOST in auth-source.
LOGIN non-nil: the credential needs a user name.  auth-source's
memory of the miss is forgotten, so that the next call finds the
credential the user adds."
  (auth-source-forget (list :host host :max 1))
  (message "toolspec: %s (API %S) sent nothing: auth-source has no credential for %s; add the line \"machine %s%s password YOUR-SECRET\" to ~/.authinfo.gpg (see `auth-sources'), then ask again"
           (toolspec-http--op-name op) (toolspec-http--op-title op) host host
           (if login " login YOUR-USER-NAME" "")))

(defun toolspec-http--secret (entry)
  "The secret of auth-source ENTRY, a string or nil."
  (let ((s (plist-get entry :secret)))
    (when (functionp s) (setq s (funcall s)))
    (and (stringp s) (not (string-empty-p s)) s)))

(defun toolspec-http--auth-hint (host &optional login)
  "How to store a credential for HOST in auth-source; LOGIN in the example."
  (format "add it to an auth-source file (see `auth-sources'), e.g. the line \"machine %s%s password YOUR-SECRET\" in ~/.authinfo.gpg"
          host (if login " login YOUR-USER-NAME" "")))

(defun toolspec-http--approved-p (op host)
  "Non-nil when OP's import approved the credential of HOST."
  (let ((approved (toolspec-http--op-credential op)))
    (and (stringp approved) (stringp host)
         (eq t (compare-strings approved nil nil host nil nil t)))))

(defun toolspec-http--unapproved (op host)
  "The result of OP, whose import did not approve HOST's credential."
  (list :result
        (format "Error: API %S needs the credential auth-source holds for %s, and using it was not approved when the tool was imported, so nothing was sent. Tell the user: import the API's document again and approve %s when asked, or import it with the option :credentials '(\"%s\") (or list it in `toolspec-http-approved-credentials')."
                (toolspec-http--op-title op) host host host)))

(defun toolspec-http--auth (op)
  "The credentials of OP for its server.
Returns (:headers ALIST :secrets STRINGS), or (:result TEXT) when
the call cannot be made (the text says why and what to do).
auth-source is asked only for the host OP's import approved."
  (let* ((auth (toolspec-http--get (toolspec-http--op-exec op) :auth))
         (type (or (toolspec-http--get auth :type) "none"))
         (host (toolspec-http--host (toolspec-http--op-base op)))
         (title (toolspec-http--op-title op)))
    (pcase type
      ("none" (list :headers nil :secrets nil))
      ((and (or "user_http" "service_http" "oauth")
            (guard (not (toolspec-http--approved-p op host))))
       (toolspec-http--unapproved op host))
      ((or "user_http" "service_http")
       (let* ((kind (downcase (or (toolspec-http--get auth :authorizationType) "bearer")))
              (entry (toolspec-http--auth-entry host))
              (secret (and entry (toolspec-http--secret entry)))
              (user (plist-get entry :user)))
         (cond
          ((null secret)
           (toolspec-http--no-credential op host (equal kind "basic"))
           (list :result
                 (format "Error: API %S needs a %s credential for %s, and auth-source has none. Tell the user to %s."
                         title kind host (toolspec-http--auth-hint host (equal kind "basic")))))
          ((equal kind "bearer")
           (list :headers (list (cons "Authorization" (concat "Bearer " secret)))
                 :secrets (list secret)))
          ((equal kind "basic")
           (if (not (stringp user))
               (progn
                (toolspec-http--no-credential op host t)
                (list :result
                     (format "Error: API %S needs a user name and password for %s, and auth-source has no user name. Tell the user to %s."
                             title host (toolspec-http--auth-hint host t))))
             (let ((token (base64-encode-string
                           (encode-coding-string (concat user ":" secret) 'utf-8) t)))
               (list :headers (list (cons "Authorization" (concat "Basic " token)))
                     :secrets (list secret token)))))
          (t (list :result (format "Error: API %S uses authorization type %S, which toolspec does not support (only bearer and basic)."
                                   title kind))))))
      ("oauth"
       (let* ((entry (toolspec-http--auth-entry host))
              (token (and entry (toolspec-http--secret entry))))
         (if token
             (list :headers (list (cons "Authorization" (concat "Bearer " token)))
                   :secrets (list token))
           (toolspec-http--no-credential op host nil)
           (list :result
                 (concat
                  (format "Authorization required: API %S uses OAuth and no access token is stored for %s. Tell the user to authorize"
                          title host)
                  (let ((client (toolspec-http--get auth :clientUrl))
                        (token-url (toolspec-http--get auth :authorizationUrl))
                        (scope (toolspec-http--get auth :scope)))
                    (concat (if client (format " at %s" client) "")
                            (if token-url (format " (token endpoint %s)" token-url) "")
                            (if scope (format " with scope %s" scope) "")))
                  (format ", then store the access token: %s. Then call the tool again."
                          (toolspec-http--auth-hint host)))))))
      (_ (list :result (format "Error: API %S uses authentication type %S, which toolspec does not support."
                               title type))))))

(defun toolspec-http--redact (text secrets)
  "TEXT with every occurrence of SECRETS replaced, in any of their forms.
See `toolspec-http--redact-encodings'.  Every secret that is not
empty is replaced, whatever its length: a short one may take
unrelated text that holds the same characters with it, which is the
price of never showing it.  Longer secrets are replaced first, so
that one holding another goes whole."
  (dolist (s (toolspec-http--longest-first secrets) text)
    (when (and (stringp s) (> (length s) 0) (stringp text))
      (setq text (toolspec-http--redact-encodings s text)))))

(defun toolspec-http--longest-first (secrets)
  "SECRETS, strings, the longest first.
A secret may hold another (a basic credential's base64 holds the
password's): the longer goes first, whole."
  (sort (cl-remove-if-not #'stringp secrets) (lambda (a b) (> (length a) (length b)))))

(defun toolspec-http--char-forms (char)
  "Regexps for CHAR as URLs, forms, JSON and text may write it.
CHAR itself, its UTF-8 bytes percent-encoded, a JSON \\u escape,
`+' for a space (forms) and \\/ for a slash (JSON)."
  (let ((bytes (encode-coding-string (string char) 'utf-8)))
    (append (list (regexp-quote (string char))
                  (mapconcat (lambda (b) (format "%%%02X" b)) bytes ""))
            (and (< char #x10000) (list (format "\\\\u%04X" char)))
            (and (eq char ?\s) (list "\\+"))
            (and (eq char ?/) (list "\\\\/")))))

(defun toolspec-http--base64-cores (bytes)
  "The base64 text BYTES give wherever they stand in a longer string.
Base64 writes 3 bytes as 4 characters, so BYTES encode differently
after 0, 1 or 2 other bytes: for each, the characters that depend
on BYTES alone, in the standard and the URL-safe alphabets."
  (let ((n (length bytes)) (cores nil))
    (dotimes (k 3)
      (let* ((b64 (base64-encode-string (concat (make-string k 0) bytes) t))
             (from (/ (+ (* 8 k) 5) 6))
             (to (min (length b64) (/ (* 8 (+ k n)) 6))))
        (when (< from to)
          (let ((core (substring b64 from to)))
            (push core cores)
            (push (string-replace "+" "-" (string-replace "/" "_" core)) cores)))))
    cores))

(defun toolspec-http--secret-regexps (secret)
  "Regexps matching SECRET in the forms a result may hold it.
SECRET and SECRET reversed, each character as itself or encoded
\(see `toolspec-http--char-forms'), in any case; and their base64
text (see `toolspec-http--base64-cores').  Base64 text shorter than
SECRET is left out: it would match too much."
  (let ((res nil))
    (dolist (s (list secret (reverse secret)))
      (dolist (core (toolspec-http--base64-cores (encode-coding-string s 'utf-8)))
        (when (>= (length core) (length s))
          (push (regexp-quote core) res)))
      (push (mapconcat (lambda (c)
                         (concat "\\(?:" (mapconcat #'identity (toolspec-http--char-forms c) "\\|")
                                 "\\)"))
                       s "")
            res))
    (delete-dups res)))

(defun toolspec-http--secret-anchors (secret)
  "Return texts one of which is in each form of SECRET, or nil.
They are the longest run of ASCII letters and digits of SECRET and
of SECRET reversed (which percent-encoding and JSON leave as they
are), as it is, in lower and in upper case, and the base64 texts
`toolspec-http--secret-regexps' looks for.  nil when a run is
shorter than 4 characters: too common to tell."
  (let ((anchors nil) (ok t))
    (dolist (s (list secret (reverse secret)))
      (let ((run (car (sort (split-string s "[^a-zA-Z0-9]+" t)
                            (lambda (a b) (> (length a) (length b)))))))
        (if (and run (>= (length run) 4))
            (setq anchors (append (list run (downcase run) (upcase run)) anchors))
          (setq ok nil)))
      (dolist (core (toolspec-http--base64-cores (encode-coding-string s 'utf-8)))
        (when (>= (length core) (length s))
          (push core anchors))))
    (and ok (delete-dups anchors))))

(defun toolspec-http--redact-encodings (secret text)
  "TEXT with SECRET replaced in every form it may take on the way.
Raw, reversed, percent-encoded (any case, any mix), JSON-escaped,
base64 (standard or URL-safe, at any offset): a template over a
response that echoes it, or an error that quotes a URL built from
it, shows \"[redacted]\" instead."
  (let ((case-fold-search t)
        (anchors (toolspec-http--secret-anchors secret)))
    ;; TEXT may be a whole response: the regexp, slow on megabytes,
    ;; runs once, and only when a quick search finds a trace.
    (if (and anchors (not (cl-some (lambda (a) (string-search a text)) anchors)))
        text
      (replace-regexp-in-string
       (mapconcat #'identity (toolspec-http--secret-regexps secret) "\\|")
       "[redacted]" text t t))))

;;;; HTTP

(defun toolspec-http--origin (url)
  "The origin of URL: (SCHEME HOST PORT)."
  (let ((u (url-generic-parse-url url)))
    (list (downcase (or (url-type u) "")) (downcase (or (url-host u) "")) (url-port u))))

(defun toolspec-http--parse-response ()
  "The response in the current buffer: (:status N :reason R :headers H :body B)."
  (widen)
  (goto-char (point-min))
  (let (status reason headers body-start)
    (when (re-search-forward "\\`HTTP/[0-9.]+ +\\([0-9]+\\) *\\([^\r\n]*\\)" nil t)
      (setq status (string-to-number (match-string 1))
            reason (match-string 2))
      (forward-line 1)
      (while (looking-at "\\([^:\r\n]+\\):[ \t]*\\([^\r\n]*?\\)[ \t]*\r?$")
        (push (cons (downcase (match-string 1)) (match-string 2)) headers)
        (forward-line 1))
      (when (looking-at "\r?$") (forward-line 1))
      (setq body-start (point)))
    (when (and status (string-empty-p reason))
      (setq reason (or (nth 2 (assq status url-http-codes)) "")))
    (list :status status :reason reason :headers (nreverse headers)
          :body (and body-start (buffer-substring-no-properties body-start (point-max))))))

(defun toolspec-http--decode (bytes headers)
  "BYTES, a response body, as text, by the charset in HEADERS."
  (let* ((ctype (or (cdr (assoc "content-type" headers)) ""))
         (cs (and (string-match "charset=\"?\\([^\";[:space:]]+\\)" ctype)
                  (intern (downcase (match-string 1 ctype)))))
         (coding (if (and cs (coding-system-p cs)) cs 'utf-8)))
    (decode-coding-string (or bytes "") (coding-system-change-eol-conversion coding 'unix))))

(defun toolspec-http--encoding-check (start from)
  "Disarm a content coding in the response headers of the current buffer.
START is where the header block being read begins, FROM where text
was inserted last.  Returns (RESULT . START): RESULT nil while the
headers are incomplete (START then where to begin next time), t once
they are and name no coding (or identity), or the coding a
`Content-Encoding' header names: then that header is renamed in
place (same length), so that url.el does not inflate the body, whose
inflated size nothing bounds.  Interim (1xx) header blocks are
checked as well, and the block that follows them."
  (save-excursion
    (save-restriction
      (widen)
      (let ((case-fold-search t)
            (result nil))
        (goto-char (max start (- from 3)))
        (while (and (not (stringp result)) (not (eq result t))
                    (re-search-forward "\n\r?\n" nil t))
          (let ((end (point))
                (interim (progn (goto-char start)
                                (looking-at "HTTP/[0-9.]+ +1[0-9][0-9]\\b"))))
            (while (re-search-forward "^content-encoding[ \t]*:[ \t]*\\([^\r\n]*\\)" end t)
              (let ((coding (string-trim (match-string 1))))
                (unless (member (downcase coding) '("" "identity"))
                  (unless (stringp result) (setq result coding))
                  (goto-char (match-beginning 0))
                  (delete-char (length "content-encoding"))
                  (insert "Refused-Encoding"))))
            (goto-char end)
            (if interim
                ;; An interim response: the real headers follow.
                (setq start end)
              (unless result (setq result t)))))
        (cons result start)))))

(defun toolspec-http--header-problem (headers)
  "Why HEADERS, an alist of request headers, cannot be sent, or nil.
Names must be HTTP tokens and values free of control characters
\(tabs aside); the values are not quoted, as they may hold secrets."
  (cl-loop for (name . value) in headers
           unless (toolspec-http--token-p name)
           return (format "refused to send a header named %s: not a valid HTTP header name"
                          (let ((print-escape-newlines t) (print-escape-control-characters t))
                            (prin1-to-string name)))
           unless (and (stringp value) (not (string-match-p "[\0-\x08\x0a-\x1f\x7f]" value)))
           return (format "refused to send header %s: its value holds a control character" name)))

(defun toolspec-http--send (req callback &optional redirects)
  "Send REQ, a plist (:method M :url U :headers H :data BYTES); call CALLBACK.
This is the one HTTP transport of toolspec's executors (OpenAPI,
Gloodata, Arcade).  CALLBACK gets (:status N :reason R :headers H
:body TEXT :size BYTES :url URL), or (:error MESSAGE), once, from a
timer: never inside url.el's process filter, where quitting is
inhibited.  REDIRECTS counts the redirects followed so far; only
those on the server of REQ's URL are, at most
`toolspec-http-max-redirects'.  The request asks for no compression,
and a compressed response is refused uninflated; a response larger
than `toolspec-http-max-response-size' bytes, or none within
`toolspec-http-timeout' seconds, is an error.  url.el neither logs
the request, nor sends or stores cookies, nor prompts for
credentials."
  (let* ((url (plist-get req :url))
         (state (list :done nil :timer nil :buffer nil))
         (finish
          (lambda (result)
            (unless (plist-get state :done)
              (setq state (plist-put state :done t))
              (when (plist-get state :timer) (cancel-timer (plist-get state :timer)))
              (let ((buf (plist-get state :buffer)))
                (when (buffer-live-p buf)
                  (let ((proc (get-buffer-process buf)))
                    (when proc
                      ;; url.el's sentinel would parse what came (and
                      ;; inflate it, or fail on it): it is not asked.
                      (set-process-sentinel proc #'ignore)
                      (set-process-filter proc #'ignore)
                      (delete-process proc)))
                  (let ((kill-buffer-query-functions nil)) (kill-buffer buf))))
              ;; Out of the process filter (or the caller), in a timer.
              (run-at-time 0 nil callback result))))
         (on-response
          (lambda (_status)
            (unless (plist-get state :done)
              (let* ((resp (toolspec-http--parse-response))
                     (code (plist-get resp :status))
                     (headers (plist-get resp :headers)))
                (cond
                 ((plist-get state :refused)
                  (funcall finish (list :error (plist-get state :refused))))
                 ((> (buffer-size) toolspec-http-max-response-size)
                  (funcall finish (list :error (format "the response from %s is larger than %d bytes"
                                                       url toolspec-http-max-response-size))))
                 ((null code)
                  (funcall finish (list :error (format "no HTTP response from %s (connection failed or closed)"
                                                       (toolspec-http--host url)))))
                 ((and (<= 300 code 399) (assoc "location" headers))
                  (let* ((target (url-expand-file-name (cdr (assoc "location" headers)) url))
                         (n (or redirects 0)))
                    (cond
                     ((not (equal (toolspec-http--origin target) (toolspec-http--origin url)))
                      (funcall finish
                               (list :error
                                     (format "refused the redirect (HTTP %d) from %s %s to %s: it leaves the approved server %s"
                                             code (plist-get req :method) url target
                                             (apply #'format "%s://%s:%s" (toolspec-http--origin url))))))
                     ((>= n toolspec-http-max-redirects)
                      (funcall finish (list :error (format "more than %d redirects from %s %s"
                                                           toolspec-http-max-redirects
                                                           (plist-get req :method) url))))
                     (t
                      (let ((next (plist-put (copy-sequence req) :url target)))
                        ;; 303, and 301/302 after a POST, continue as GET.
                        (when (or (= code 303)
                                  (and (memq code '(301 302))
                                       (equal (plist-get req :method) "POST")))
                          (setq next (plist-put next :method "GET"))
                          (setq next (plist-put next :data nil))
                          (setq next (plist-put next :headers
                                                (cl-remove "Content-Type" (plist-get next :headers)
                                                           :key #'car :test #'equal))))
                        ;; Hand over without calling CALLBACK here.
                        (setq state (plist-put state :done t))
                        (when (plist-get state :timer) (cancel-timer (plist-get state :timer)))
                        (let ((buf (plist-get state :buffer)))
                          (when (buffer-live-p buf)
                            (let ((kill-buffer-query-functions nil)) (kill-buffer buf))))
                        (toolspec-http--send next callback (1+ n)))))))
                 (t
                  (funcall finish
                           (list :status code :reason (plist-get resp :reason)
                                 :headers headers :url url
                                 :size (length (plist-get resp :body))
                                 :body (toolspec-http--decode (plist-get resp :body) headers))))))))))
    (condition-case err
        (let* ((unibyte (lambda (s) (encode-coding-string s 'utf-8)))
               (problem (toolspec-http--header-problem (plist-get req :headers)))
               ;; url.el refuses a request mixing multibyte strings
               ;; with the bytes of a non-ASCII body: all parts unibyte.
               (url-request-method (funcall unibyte (plist-get req :method)))
               (url-request-extra-headers
                (mapcar (lambda (h) (cons (funcall unibyte (car h)) (funcall unibyte (cdr h))))
                        (plist-get req :headers)))
               (url-request-data (plist-get req :data))
               (url-max-redirections 0)
               (url-registered-auth-schemes nil)
               (url-debug nil)
               (url-automatic-caching nil)
               (url-mime-encoding-string "identity")
               (buf (if problem
                        (signal 'toolspec-http-error (list problem))
                      (url-retrieve url on-response nil t t))))
          (setq state (plist-put state :buffer buf))
          (when (buffer-live-p buf)
            (with-current-buffer buf
              ;; url.el reads these in this buffer when it connects and
              ;; when the answer comes: no redirects of its own (handled
              ;; above), no debug log of the request, no credentials of
              ;; its own, no prompting for them on 401/407, no
              ;; compressed answers.
              (setq-local url-max-redirections 0)
              (setq-local url-debug nil)
              (setq-local url-registered-auth-schemes nil)
              (setq-local url-mime-encoding-string "identity")
              (setq-local url-http-codes
                          (cl-remove-if (lambda (c) (memq (car c) '(305 401 402 407)))
                                        url-http-codes))
              (add-hook 'after-change-functions
                        (lambda (beg &rest _)
                          (unless (or (plist-get state :done) (plist-get state :refused))
                            ;; Before url.el parses the headers, which
                            ;; inflates a gzip body whatever its size.
                            (unless (plist-get state :encoding)
                              (let* ((check (toolspec-http--encoding-check
                                             (or (plist-get state :headers-start) (point-min)) beg))
                                     (coding (car check)))
                                (setq state (plist-put state :headers-start (cdr check)))
                                (when coding
                                  (setq state (plist-put state :encoding t))
                                  (when (stringp coding)
                                    (setq state (plist-put state :refused
                                                           (format "the response from %s is compressed (Content-Encoding: %s), though the request asked for no compression; toolspec does not inflate responses"
                                                                   url coding)))))))
                            (when (and (not (plist-get state :refused))
                                       (> (buffer-size) toolspec-http-max-response-size))
                              (setq state (plist-put state :refused
                                                     (format "the response from %s is larger than %d bytes"
                                                             url toolspec-http-max-response-size))))
                            (when (plist-get state :refused)
                              (run-at-time 0 nil finish (list :error (plist-get state :refused))))))
                        nil t))
            (when-let* ((proc (get-buffer-process buf)))
              (set-process-query-on-exit-flag proc nil)))
          (setq state (plist-put state :timer
                                 (run-at-time toolspec-http-timeout nil finish
                                              (list :error (format "no answer from %s within %s seconds"
                                                                   (toolspec-http--host url)
                                                                   toolspec-http-timeout))))))
      (error (funcall finish (list :error (format "cannot send the request to %s: %s"
                                                  (toolspec-http--host url)
                                                  (if (eq (car err) 'toolspec-http-error)
                                                      (cadr err)
                                                    (error-message-string err)))))))))

;;;; JSON posts (Gloodata extensions, Arcade workers)

(defun toolspec-http--post-json (url body callback &optional headers timeout)
  "POST BODY, a JSON string, to URL; call CALLBACK with the answer.
CALLBACK receives STATUS, TEXT and ERROR exactly once: the HTTP
status and the body, or nil, nil and a message when there is no
answer (a connection error, nothing within TIMEOUT seconds, default
`toolspec-http-timeout', or an answer the transport refuses).
HEADERS is an alist of extra request headers.  The request goes
through `toolspec-http--send', with the rules of every executor:
redirects only on URL's server, no credentials prompted for, no
compressed answers, `toolspec-http-max-response-size'."
  (let ((toolspec-http-timeout (or timeout toolspec-http-timeout)))
    (toolspec-http--send
     (list :method "POST" :url url
           :headers (append '(("Content-Type" . "application/json")
                              ("Accept" . "application/json"))
                            headers)
           :data (encode-coding-string body 'utf-8))
     (lambda (resp)
       (if (plist-get resp :error)
           (funcall callback nil nil (plist-get resp :error))
         (funcall callback (plist-get resp :status) (plist-get resp :body) nil))))))

(defun toolspec-http--post-json-sync (url body &optional timeout)
  "POST BODY, a JSON string, to URL and wait for the answer.
Return (STATUS . TEXT); signal `toolspec-fetch-error' when there
is no answer within TIMEOUT seconds (default `toolspec-http-timeout'),
the transport refuses it (see `toolspec-http--post-json'), or the status
is not 2xx."
  (let* ((timeout (or timeout toolspec-http-timeout))
         (answer nil)
         (deadline (+ (float-time) timeout 5)))
    (toolspec-http--post-json url body (lambda (status text err) (setq answer (list status text err)))
                         nil timeout)
    (while (and (null answer) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (pcase-let ((`(,status ,text ,err) answer))
      (cond
       ((null answer)
        (signal 'toolspec-fetch-error (list (format "%s: no answer" url) (list :url url))))
       (err
        (signal 'toolspec-fetch-error (list (format "%s: %s" url err) (list :url url))))
       ((not (<= 200 status 299))
        (signal 'toolspec-fetch-error
                (list (format "%s answered HTTP %s: %s" url status
                              (truncate-string-to-width (or text "") 200))
                      (list :url url :status status))))
       (t (cons status text))))))

;;;; Responses

(defun toolspec-http--cap (text &optional max)
  "TEXT cut to MAX characters (`toolspec-http-max-result-size'), marked."
  (let ((max (or max toolspec-http-max-result-size)))
    (if (<= (length text) max)
        text
      (concat (substring text 0 max)
              (format "\n[... truncated by toolspec: %d of %d characters shown]"
                      max (length text))))))

(defun toolspec-http--short (text)
  "The start of TEXT on one line, for error messages."
  (let ((one (string-trim (replace-regexp-in-string "[ \t\r\n]+" " " (or text "")))))
    (if (> (length one) 300) (concat (substring one 0 300) "...") one)))

(defun toolspec-http--json-p (resp)
  "Return non-nil when RESP, a response plist, is JSON."
  (let ((ctype (or (cdr (assoc "content-type" (plist-get resp :headers))) ""))
        (body (string-trim-left (or (plist-get resp :body) ""))))
    (or (string-match-p "json" ctype)
        (string-match-p "\\`[[{]" body))))

(defun toolspec-http--parse-json (text)
  "TEXT parsed as JSON (alists, vectors) in a list, or nil if it is not JSON.
The list tells a JSON null or false apart from no JSON."
  (condition-case nil
      (list (json-parse-string text :object-type 'alist :array-type 'array
                               :null-object :null :false-object :false))
    (error nil)))

(defun toolspec-http--compact (text)
  "JSON TEXT without insignificant whitespace (TEXT itself if it is not JSON)."
  (condition-case nil
      (toolspec-http--json (json-parse-string text :object-type 'hash-table :array-type 'array
                                              :null-object :null :false-object :false))
    (error text)))

(defvar toolspec-http--budget nil
  "The template time left to the call being handled, or nil.
A list (SECONDS): the calls an `x-lookup' makes while their caller's
response is handled share it.  See `toolspec-http-templates-timeout'.")

(defun toolspec-http--render (template json-text)
  "Render TEMPLATE over JSON-TEXT; signals on errors.
See `toolspec-render-template': it renders in a separate process,
limited in time and memory.  Within a call, the template gets no
more than what is left of `toolspec-http--budget', and what it
takes is subtracted from it."
  (let ((budget toolspec-http--budget))
    (if (null budget)
        (toolspec-render-template template json-text)
      (let ((left (car budget))
            (start (float-time))
            (over (lambda ()
                    (signal 'toolspec-template-limit-error
                            (list (format "the templates of one call took longer than %s seconds in all (`toolspec-http-templates-timeout')"
                                          toolspec-http-templates-timeout)
                                  nil)))))
        (when (<= left 0) (funcall over))
        (unwind-protect
            (condition-case err
                (let ((toolspec-template-timeout (min toolspec-template-timeout left)))
                  (toolspec-render-template template json-text))
              (toolspec-template-limit-error
               (if (and (< left toolspec-template-timeout)
                        (>= (- (float-time) start) left))
                   (funcall over)
                 (signal (car err) (cdr err)))))
          (setcar budget (- (car budget) (- (float-time) start))))))))

(defun toolspec-http--templates (op json-text)
  "The text of OP's result for JSON-TEXT: filter, output modules, or compact JSON."
  (let* ((exec (toolspec-http--op-exec op))
         (filter (toolspec-http--get exec :filter))
         (modules (cl-remove-if-not #'stringp (append (toolspec-http--get exec :outputModules) nil)))
         (stage "response filter"))
    (condition-case err
        (let ((json json-text) (text nil))
          (when (and (stringp filter) (not (string-empty-p filter)))
            (let ((out (toolspec-http--render filter json)))
              (if (toolspec-http--parse-json out)
                  (setq json out)
                ;; A filter whose output is not JSON gives the result.
                (setq text out))))
          (setq stage "output module")
          (cond (text text)
                (modules (mapconcat (lambda (m) (toolspec-http--render m json)) modules "\n"))
                (t (toolspec-http--compact json))))
      (toolspec-error
       (format "Note: the %s of %s failed (%s); the unprocessed response follows.\n%s"
               stage (toolspec-http--op-name op) (cadr err)
               (toolspec-http--compact json-text))))))

;;;; Lookups

(defun toolspec-http--path-steps (field)
  "Split FIELD, the importer's JSON pointer to a looked-up value, into keys.
FIELD is such as \"/trains/*/provider_id\", `*' standing for every
item of an array; each key is unescaped (~1 is /, ~0 is ~).  The
empty pointer (the whole response) gives no keys."
  (and (string-prefix-p "/" field)
       (mapcar (lambda (key) (string-replace "~0" "~" (string-replace "~1" "/" key)))
               (split-string (substring field 1) "/"))))

(defun toolspec-http--locate (value path)
  "Find where the keys PATH lead in VALUE (parsed JSON): ((ALIST . KEY) ...).
PATH is a list from `toolspec-http--path-steps'; its last key must
be a key of an object.  In an array, `*' is every item and a number
one item; another key is looked up in every item."
  (cond
   ((null path) nil)
   ((vectorp value)
    (let ((key (car path)))
      (cond ((equal key "*")
             (cl-loop for item across value append (toolspec-http--locate item (cdr path))))
            ((string-match-p "\\`[0-9]+\\'" key)
             (let ((i (string-to-number key)))
               (and (< i (length value)) (toolspec-http--locate (aref value i) (cdr path)))))
            (t (cl-loop for item across value append (toolspec-http--locate item path))))))
   ((and (consp value) (consp (car value)))
    (let ((cell (assq (intern (car path)) value)))
      (cond ((null cell) nil)
            ((null (cdr path)) (list (cons value (car cell))))
            (t (toolspec-http--locate (cdr cell) (cdr path))))))))

(defun toolspec-http--lookup-args (lop parameter value)
  "Positional args for LOP, a lookup operation, with PARAMETER set to VALUE.
Returns nil when LOP has no such parameter."
  (let* ((params (append (toolspec-http--get (toolspec-http--op-exec lop) :parameters) nil))
         (param (cl-find parameter params :key (lambda (p) (toolspec-http--get p :name)) :test #'equal))
         (arg (if param (or (toolspec-http--get param :arg) parameter) parameter))
         (names (mapcar (lambda (a) (plist-get a :name)) (plist-get (toolspec-http--op-tool lop) :args)))
         (pos (cl-position arg names :test #'equal)))
    (when pos
      (let ((args (make-list (length names) nil)))
        (setf (nth pos args) value)
        args))))

(defun toolspec-http--lookups (op json-text callback)
  "Resolve OP's `x-lookup' fields in JSON-TEXT, then call CALLBACK with the text.
Each looked-up value gets a sibling key KEY_lookup holding the
lookup's result (JSON when it is JSON, else text).  At most
`toolspec-http-max-lookups' calls are made; same values are looked
up once."
  (let* ((specs (append (toolspec-http--get (toolspec-http--op-exec op) :lookup) nil))
         (parsed (and specs (toolspec-http--parse-json json-text))))
    (if (not parsed)
        (funcall callback json-text)
      (let* ((root (car parsed))
             (jobs nil)                 ; ((LOP PARAMETER VALUE) . PLACES)
             (count 0))
        (dolist (spec specs)
          (let* ((field (toolspec-http--get spec :field))
                 (lop (gethash (cons (toolspec-http--op-title op) (toolspec-http--get spec :operation))
                               toolspec-http--operations))
                 ;; OpenPlugin writes it "$request.query.NAME".
                 (parameter (replace-regexp-in-string
                             "\\`\\$request\\.[a-z]+\\." ""
                             (format "%s" (toolspec-http--get spec :parameter)))))
            (when (and (stringp field) lop)
              (dolist (place (toolspec-http--locate root (toolspec-http--path-steps field)))
                (let* ((v (cdr (assq (cdr place) (car place))))
                       (key (list lop parameter v))
                       (job (assoc key jobs)))
                  (when (or (stringp v) (numberp v))
                    (cond (job (push place (cdr job)))
                          ((< count toolspec-http-max-lookups)
                           (cl-incf count)
                           (push (list key place) jobs)))))))))
        (if (null jobs)
            (funcall callback json-text)
          (let ((pending (length jobs)))
            (dolist (job jobs)
              (pcase-let* ((`((,lop ,parameter ,v) . ,places) job)
                           (args (toolspec-http--lookup-args lop parameter v)))
                (let ((deliver
                       (lambda (text)
                         (let ((value (or (car (toolspec-http--parse-json text))
                                          (toolspec-http--cap text toolspec-http--lookup-result-size))))
                           (dolist (place places)
                             (let* ((alist (car place))
                                    (lkey (intern (format "%s_lookup" (cdr place))))
                                    (cell (assq lkey alist)))
                               (if cell
                                   (setcdr cell value)
                                 ;; Insert after the looked-up key.
                                 (let ((at (memq (assq (cdr place) alist) alist)))
                                   (setcdr at (cons (cons lkey value) (cdr at))))))))
                         (when (zerop (cl-decf pending))
                           (funcall callback
                                    (condition-case nil
                                        (toolspec-http--json root)
                                      (error json-text)))))))
                  (if args
                      (toolspec-http--run lop args deliver t)
                    (funcall deliver (format "lookup failed: operation %s has no parameter %s"
                                             (toolspec-http--op-name lop) parameter))))))))))))

;;;; Running

(defun toolspec-http--result (op req resp secrets callback no-lookups budget)
  "Turn RESP, the response to REQ for OP, into the result; pass it to CALLBACK.
SECRETS are scrubbed from the body before the lookups and templates
read it, and from the result; the result names the request by its
shown URL, which holds no value made from a credential.  NO-LOOKUPS
non-nil skips the lookups.  BUDGET is the template time left to the
call (see `toolspec-http--budget')."
  (let* ((toolspec-http--budget budget)
         (shown (or (plist-get req :shown) (plist-get req :url)))
         (resp (if (not secrets)
                   resp
                 (let ((r (copy-sequence resp)))
                   (when (stringp (plist-get r :body))
                     (setq r (plist-put r :body (toolspec-http--redact (plist-get r :body) secrets))))
                   (when (stringp (plist-get r :error))
                     (setq r (plist-put r :error
                                        (toolspec-http--redact
                                         (string-replace (plist-get req :url) shown (plist-get r :error))
                                         secrets))))
                   r)))
         (code (plist-get resp :status))
         (done (lambda (text)
                 (funcall callback (toolspec-http--cap (toolspec-http--redact text secrets))))))
    (cond
     ((plist-get resp :error)
      (funcall done (format "Error: %s %s failed: %s"
                            (plist-get req :method) shown (plist-get resp :error))))
     ((not (<= 200 code 299))
      (funcall done (format "Error: HTTP %d %s from %s %s%s"
                            code (plist-get resp :reason) (plist-get req :method) shown
                            (let ((short (toolspec-http--short (plist-get resp :body))))
                              (if (string-empty-p short) "" (concat ": " short))))))
     ((string-empty-p (string-trim (or (plist-get resp :body) "")))
      (funcall done (format "Done: HTTP %d %s, no content." code (plist-get resp :reason))))
     ((and (toolspec-http--json-p resp) (toolspec-http--parse-json (plist-get resp :body)))
      (let ((finish
             (lambda (json)
               ;; Lookups may come back later, from another timer.
               (let ((toolspec-http--budget budget))
                 (funcall done
                          ;; Called from a timer, where quitting is
                          ;; inhibited: C-g stops the templates, and the
                          ;; call with them.
                          (condition-case nil
                              (let ((inhibit-quit nil))
                                (toolspec-http--templates op json))
                            (quit
                             (format "Error: %s was interrupted (C-g) while its response was processed."
                                     (toolspec-http--op-name op)))))))))
        (if no-lookups
            (funcall finish (plist-get resp :body))
          (toolspec-http--lookups op (plist-get resp :body) finish))))
     (t
      (let ((ctype (or (cdr (assoc "content-type" (plist-get resp :headers))) "")))
        (funcall done
                 (if (or (string-empty-p ctype)
                         (string-match-p "\\`text/\\|xml\\|json\\|javascript\\|yaml\\|csv" ctype))
                     (plist-get resp :body)
                   (format "Done: HTTP %d, a response of type %s (%d bytes), not shown."
                           code ctype (plist-get resp :size)))))))))

(defun toolspec-http--run (op args callback &optional no-lookups fixed)
  "Call OP, an OpenAPI operation, with ARGS; give CALLBACK the result text.
ARGS are the tool's args in order.  NO-LOOKUPS non-nil skips the
`x-lookup' calls.  FIXED, from `toolspec-http--bootstrap-args', is
\(VALUES . SECRETS): the values of the parameters no argument gives
\(see `toolspec-http--request-parts') and texts to scrub from the
result as the credential is.  CALLBACK is called once, with a
string."
  (let* ((called nil)
         (callback (lambda (text) (unless called (setq called t) (funcall callback text))))
         ;; The lookups of a response share its call's template time.
         (budget (or toolspec-http--budget (list toolspec-http-templates-timeout))))
    (condition-case err
        (progn
          (unless (toolspec-http--op-base op)
            (signal 'toolspec-http-error (list (toolspec-http--op-problem op))))
          (let ((auth (toolspec-http--auth op)))
            (if (plist-get auth :result)
                (funcall callback (plist-get auth :result))
              (let* ((secrets (append (plist-get auth :secrets) (cdr fixed)))
                     (req (toolspec-http--request-parts op args (car fixed))))
                (setq req (plist-put req :headers (append (plist-get auth :headers)
                                                          (plist-get req :headers))))
                (toolspec-http--send
                 req (lambda (resp)
                       (condition-case err
                           (toolspec-http--result op req resp secrets callback no-lookups budget)
                         (error
                          (funcall callback
                                   (toolspec-http--redact
                                    (format "Error: %s failed: %s" (toolspec-http--op-name op)
                                            (error-message-string err))
                                    secrets))))))))))
      (toolspec-http-error
       (funcall callback (toolspec-http--redact
                          (format "Error: cannot call %s: %s" (toolspec-http--op-name op) (cadr err))
                          (cdr fixed)))))))

;;;; Bootstrap

(defun toolspec-http--apis ()
  "Titles of the imported APIs that have bootstrap operations."
  (let (titles)
    (maphash (lambda (key op)
               (when (toolspec-http--get (toolspec-http--op-exec op) :bootstrap)
                 (cl-pushnew (car key) titles :test #'equal)))
             toolspec-http--operations)
    (sort titles #'string<)))

(defun toolspec-http--bootstrap-ops (api)
  "The bootstrap operations of API (a title), by name."
  (let (ops)
    (maphash (lambda (key op)
               (when (and (equal (car key) api)
                          (toolspec-http--get (toolspec-http--op-exec op) :bootstrap))
                 (push op ops)))
             toolspec-http--operations)
    (sort ops (lambda (a b) (string< (toolspec-http--op-name a) (toolspec-http--op-name b))))))

(defun toolspec-http--auth-json (token user)
  "The template context of bootstrap values, as JSON text.
{\"auth\": {\"token\": TOKEN, \"data\": {\"access_token\": TOKEN,
\"user_id\": USER}}}: the fields OpenPlugin defines, nothing else of
the auth-source entry (no other field of its line, such as an
`otp')."
  (let ((data (make-hash-table :test 'equal)))
    (when token (puthash "access_token" token data))
    (when (stringp user) (puthash "user_id" user data))
    (toolspec-http--json (list :auth (list :token (or token :null) :data data)))))

(defun toolspec-http--canary (secret)
  "A text as long as SECRET that differs from it at every character."
  (apply #'string (mapcar (lambda (c) (if (eq c ?x) ?y ?x)) secret)))

(defun toolspec-http--bootstrap-args (op)
  "OP's parameter values for bootstrapping, rendered from its bootstrap values.
Each `x-bootstrap-value' template is rendered over `auth.token' and
`auth.data' (see `toolspec-http--auth-json'), from the auth-source
entry of the host OP's import approved (none otherwise).  Returns
\(VALUES . SECRETS) for `toolspec-http--run': VALUES an alist (NAME
VALUE SECRET) for the parameters no argument gives; SECRETS the
credential and every value made from it, found by rendering the
template again over a stand-in credential: a value that changes
with the credential is scrubbed from results as the credential is,
in any of its forms, and left out of the URL messages show."
  (let* ((exec (toolspec-http--op-exec op))
         (values (toolspec-http--get exec :bootstrapValues))
         (host (and (toolspec-http--op-base op) (toolspec-http--host (toolspec-http--op-base op))))
         (entry (and (toolspec-http--approved-p op host) (toolspec-http--auth-entry host)))
         (secret (and entry (toolspec-http--secret entry)))
         (user (plist-get entry :user))
         (context (toolspec-http--auth-json secret user))
         (stand-in (and secret (toolspec-http--auth-json (toolspec-http--canary secret) user)))
         (secrets (and secret (list secret)))
         (fixed nil))
    (condition-case err
        (seq-doseq (param (or (toolspec-http--get exec :parameters) []))
          (let* ((name (toolspec-http--get param :name))
                 (template (plist-get values (intern (concat ":" name)))))
            (when (and (stringp template) (null (toolspec-http--get param :arg)))
              (let* ((value (toolspec-http--render template context))
                     (made-from (and secret
                                     (not (equal value (toolspec-http--render template stand-in))))))
                (when made-from (push value secrets))
                (push (list name value made-from) fixed)))))
      (toolspec-error
       (signal (car err) (list (toolspec-http--redact (format "%s" (cadr err)) secrets)))))
    (cons (nreverse fixed) secrets)))

(defun toolspec-openapi-bootstrap-async (api callback)
  "Run the bootstrap operations of API and call CALLBACK with their text.
API is the title of an imported OpenAPI document.  The text holds
each operation's result under a heading, for the model's context."
  (let* ((ops (toolspec-http--bootstrap-ops api))
         (results (make-vector (length ops) nil))
         (pending (length ops)))
    (if (null ops)
        (funcall callback (format "API %S has no imported bootstrap operations." api))
      (cl-loop
       for op in ops
       for i from 0
       do (let ((i i) (op op))
            (let ((deliver
                   (lambda (text)
                     (aset results i (format "## %s\n\n%s" (toolspec-http--op-name op) text))
                     (when (zerop (cl-decf pending))
                       (funcall callback
                                (concat (format "# Data from API %s (bootstrap)\n\n" api)
                                        (mapconcat #'identity results "\n\n")
                                        "\n"))))))
              (condition-case err
                  (toolspec-http--run op nil deliver nil (toolspec-http--bootstrap-args op))
                (toolspec-error
                 (funcall deliver (format "Error: the bootstrap values of %s failed: %s"
                                          (toolspec-http--op-name op) (cadr err)))))))))))

;;;###autoload
(defun toolspec-openapi-bootstrap (api)
  "Run the bootstrap operations of API and return their results as text.
API is the title of an imported OpenAPI document.  Its operations
marked `x-bootstrap' are called with their `x-bootstrap-value'
templates rendered over the credential auth-source holds for the
API's host, when its import approved it (`auth.token',
`auth.data.access_token', `auth.data.user_id': the entry's login).
The text is meant for the model's context: interactively, it is
inserted at point (in a gptel chat buffer, it goes with the next
request)."
  (interactive
   (let ((apis (toolspec-http--apis)))
     (unless apis (user-error "No imported OpenAPI tools have bootstrap operations"))
     (list (completing-read "Bootstrap API: " apis nil t nil nil (car apis)))))
  (let ((text nil)
        (deadline (+ (float-time) (* 2 toolspec-http-timeout)))
        (marker (and (called-interactively-p 'any) (point-marker))))
    (toolspec-openapi-bootstrap-async api (lambda (result) (setq text result)))
    (while (and (null text) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless text
      (setq text (format "Error: the bootstrap of API %S did not finish in time" api)))
    (when marker
      (if (buffer-local-value 'buffer-read-only (marker-buffer marker))
          (with-current-buffer (get-buffer-create "*toolspec-bootstrap*")
            (erase-buffer)
            (insert text)
            (display-buffer (current-buffer)))
        (with-current-buffer (marker-buffer marker)
          (save-excursion (goto-char marker) (insert text))))
      (message "toolspec: bootstrap of %s done" api))
    text))

(provide 'toolspec-http)
;;; toolspec-http.el ends here
