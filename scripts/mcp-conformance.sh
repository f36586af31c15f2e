#!/usr/bin/env bash
# The MCP conformance suite's client scenarios against toolspec-mcp.el.
# Installs the suite with scripts/setup-conformance.sh, then runs each scenario with
# test/conformance/client.el as the client and prints one line per scenario
# and "mcp conformance: N passed, M failed".
#   initialize, tools_call, sse-retry, elicitation-sep1034-client-defaults
#                                run (the last two need the GET stream:
#                                resumption with Last-Event-ID after the
#                                stream's retry time, and an elicitation
#                                the server sends on the standing GET)
#   auth/*                       left out: the client sends the headers of
#                                its configuration (e.g. a bearer token)
#                                and runs no OAuth authorization flow
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=${TOOLSPEC_CONFORMANCE:-$root/.deps/conformance}
EMACS=${EMACS:-emacs}
module=${TOOLSPEC_MODULE:-$root/target/debug/libtoolspec.so}

node_bin=$(TOOLSPEC_CONFORMANCE=$dest bash scripts/setup-conformance.sh) \
  || { echo "mcp conformance: the suite could not be installed"; exit 1; }
export PATH="$node_bin:$PATH"
export EMACS TOOLSPEC_MODULE=$module
client="bash $root/test/conformance/client.sh"
passed=0; failed=0
for scenario in initialize tools_call sse-retry elicitation-sep1034-client-defaults; do
  out=$(mktemp -d)
  if node "$dest/node_modules/@modelcontextprotocol/conformance/dist/index.js" client \
       --command "$client" --scenario "$scenario" -o "$out" >"$out/log" 2>&1; then
    echo "mcp conformance: $scenario: passed"; passed=$((passed + 1))
  else
    echo "mcp conformance: $scenario: FAILED"; tail -n 30 "$out/log"; failed=$((failed + 1))
  fi
  rm -rf "$out"
done
echo "mcp conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
