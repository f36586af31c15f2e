;;; conformance-emacs.el --- Tools for the MCP conformance suite's server scenarios -*- lexical-binding: t -*-

;;; Commentary:

;; Run in batch by scripts/mcp-server-conformance.sh: the tools the
;; suite's server scenarios call, made by real gptel, served by
;; `toolspec-mcp-server-mode' on the socket given in the environment.

;;; Code:

(require 'gptel)
(require 'toolspec-mcp-server)

(gptel-make-tool :name "test_simple_text" :category "conformance"
                 :description "Returns simple text."
                 :function (lambda () "This is a simple text response for testing."))
(gptel-make-tool :name "test_error_handling" :category "conformance"
                 :description "Always fails."
                 :function (lambda () (error "This tool intentionally returns an error for testing")))
(gptel-make-tool :name "json_schema_2020_12_tool" :category "conformance"
                 :description "Tool with JSON Schema 2020-12 features"
                 :args (list '(:name "name" :type string :optional t)
                             '(:name "address" :$ref "#/$defs/address" :optional t))
                 :function (lambda (name _address) (format "hello %s" name)))

(setq toolspec-mcp-server-tools '((:category "conformance"))
      toolspec-mcp-server-socket (getenv "TOOLSPEC_SOCKET")
      toolspec-mcp-server-tool-properties
      '(("json_schema_2020_12_tool"
         :schema-extra (:$schema "https://json-schema.org/draft/2020-12/schema"
                        :$defs (:address (:type "object"
                                          :properties (:street (:type "string")
                                                       :city (:type "string"))))
                        :additionalProperties :json-false))))
(toolspec-mcp-server-mode 1)
(message "READY")
(while t (accept-process-output nil 0.1))
;;; conformance-emacs.el ends here
