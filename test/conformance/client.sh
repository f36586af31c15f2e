#!/usr/bin/env bash
# The client command of scripts/mcp-conformance.sh: test/conformance/client.el
# in batch Emacs, with the server URL the suite appends.
root=$(cd "$(dirname "$0")/../.." && pwd)
exec "${EMACS:-emacs}" --batch -Q -L "$root/lisp" -L "$root/.deps/gptel" \
  --eval "(setq toolspec-module-file \"${TOOLSPEC_MODULE:-$root/target/debug/libtoolspec.so}\")" \
  -l "$root/test/conformance/client.el" "$@"
