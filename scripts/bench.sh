#!/usr/bin/env bash
# make bench: fetch the data, build the release module, run bench/bench.el
# in a batch Emacs (toolspec against its baselines, alternately, medians
# and ratios), write BENCHMARKS.md (laid out by bench/bench-report.el:
# targets missed first, the table, a link to bench/history.md).
# TOOLSPEC_BENCH_REPS (default 21) runs per variant;
# TOOLSPEC_BENCH_CASES to run some cases only (catalog
# openapi export register arguments require memory mcp-serve mcp-client;
# the mcp cases need the Python MCP SDK of scripts/setup-providers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
EMACS=${EMACS:-emacs}
start=$(date +%s)
bash scripts/fetch-bench-data.sh
make --no-print-directory module EMACS="$EMACS"
# Everything runs byte-compiled, as installed packages do: toolspec, gptel
# and the baselines in bench.el alike (interpreted elisp is several times
# slower, and would favour whichever side does less of its work in Lisp).
compiled=$(mktemp -d)
trap 'rm -rf "$compiled"' EXIT
cp -r lisp "$compiled/lisp"
cp -r .deps/gptel "$compiled/gptel"
cp bench/bench.el bench/bench-report.el "$compiled/"
# gptel-rewrite.el gives its transient prefix an `:environment', a slot the
# transient of Emacs 30.1 does not have, so it does not byte-compile; the
# bench does not load it.
rm -f "$compiled/gptel/gptel-rewrite.el"
"$EMACS" --batch -Q -L "$compiled/lisp" -L "$compiled/gptel" -L "$compiled" \
  --eval '(setq byte-compile-warnings nil)' \
  -f batch-byte-compile "$compiled"/lisp/*.el "$compiled"/gptel/*.el "$compiled/bench-report.el" "$compiled/bench.el" \
  >"$compiled/compile.log" 2>&1 || echo "bench: some files did not byte-compile (see the log below); they run interpreted" >&2
grep -i "error" "$compiled/compile.log" >&2 || true
"$EMACS" --batch -Q -L "$compiled/lisp" -L "$compiled/gptel" -L "$compiled" -l "$compiled/bench.elc" \
  -f toolspec-bench-run-and-exit
echo "bench: done in $(( $(date +%s) - start )) s"
