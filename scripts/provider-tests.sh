#!/usr/bin/env bash
# Provider acceptance: are the tools toolspec writes, and those real gptel
# sends for the tools toolspec registers, accepted by each provider's
# own validator?  Runs against an already built toolspec:
#   cargo build --lib --bin toolspec     (target/debug: program and module)
#   bash scripts/provider-tests.sh [writers|gptel|all]
#
#   writers  every tool of the corpus (17 real MCP servers' tools/list),
#            of the repo's fixtures and of the BFCL catalog, converted by
#            `toolspec convert --to DIALECT' into each dialect and judged
#            (test/providers/check.py); MCP -> MCP must be the identity
#   gptel    the corpus and the catalog imported into real gptel with
#            toolspec-import-file,
#            serialised by gptel's own gptel--parse-tools for its OpenAI,
#            OpenAI Responses, Anthropic and Gemini backends
#            (test/providers/gptel-dump.el), and judged the same way
#
# The corpus, validators and catalog are set up by
# scripts/setup-providers.sh (run here; a no-op once done).  Each mode
# prints a table per dialect, every refusal, and last
# "providers (MODE): N passed, M failed" (one test per dialect); the
# exit status is non-zero on any refusal.  TOOLSPEC and TOOLSPEC_MODULE
# name another program and module; the JSON report of each mode is left
# in $TOOLSPEC_PROVIDERS/report-MODE.json.
set -uo pipefail
cd "$(dirname "$0")/.."
EMACS=${EMACS:-emacs}
dest=${TOOLSPEC_PROVIDERS:-$PWD/.deps/providers}
program=${TOOLSPEC:-$PWD/target/debug/toolspec}
module=${TOOLSPEC_MODULE:-$PWD/target/debug/libtoolspec.so}
[ "$(uname)" = Darwin ] && [ -z "${TOOLSPEC_MODULE:-}" ] && module="$PWD/target/debug/libtoolspec.dylib"
mode=${1:-all}

case "$mode" in writers|gptel|all) ;; *) echo "usage: $0 [writers|gptel|all]" >&2; exit 2 ;; esac
for f in "$program" "$module"; do
  [ -e "$f" ] || { echo "provider-tests: $f is missing: build it first (cargo build --lib --bin toolspec)" >&2; exit 2; }
done
TOOLSPEC_PROVIDERS=$dest bash scripts/setup-providers.sh || { echo "provider-tests: the setup failed" >&2; exit 2; }
py=$dest/pyenv/bin/python
status=0

if [ "$mode" = writers ] || [ "$mode" = all ]; then
  printf '\n==> provider acceptance of toolspec convert --to DIALECT\n'
  # hostile.json's executor is dropped on purpose (a file cannot choose
  # what runs a tool): its MCP round trip is not the identity.
  "$py" test/providers/check.py writers --toolspec "$program" --corpus "$dest/corpus" \
    --report "$dest/report-writers.json" --no-identity hostile.json \
    test/fixtures/*.json examples/*.json \
    test/fixtures/elisp/clean-tools.el test/fixtures/elisp/collections.el \
    "$dest/bfcl/catalog.json" </dev/null || status=1
fi

if [ "$mode" = gptel ] || [ "$mode" = all ]; then
  printf '\n==> provider acceptance of what gptel sends (gptel--parse-tools)\n'
  gptel_sources=("$dest"/corpus/*.json "$dest/bfcl/catalog.json")
  dumps=$(mktemp -d)
  trap 'rm -rf "$dumps"' EXIT
  if "$EMACS" --batch -Q -L lisp -L .deps/gptel ${TOOLSPEC_EMACS_PRELOAD:-} \
       --eval "(setq toolspec-module-file \"$module\")" \
       -l test/providers/gptel-dump.el "$dumps" "${gptel_sources[@]}" </dev/null 2>"$dumps/.log"; then
    grep '^gptel-dump:' "$dumps/.log"
    "$py" test/providers/check.py gptel --dumps "$dumps" --report "$dest/report-gptel.json" \
      "${gptel_sources[@]}" </dev/null || status=1
  else
    cat "$dumps/.log"
    echo "providers (gptel): 0 passed, 1 failed"
    status=1
  fi
fi
exit $status
