#!/usr/bin/env bash
# make bench: fetch the data, build the release module, run bench/bench.el
# in a batch Emacs (toolspec against its baselines, alternately, medians
# and ratios), write BENCHMARKS.md.  TOOLSPEC_BENCH_REPS (default 11) runs
# per variant; TOOLSPEC_BENCH_CASES to run some cases only (catalog
# openapi export arguments require memory).
set -euo pipefail
cd "$(dirname "$0")/.."
EMACS=${EMACS:-emacs}
start=$(date +%s)
bash scripts/fetch-bench-data.sh
make --no-print-directory module EMACS="$EMACS"
"$EMACS" --batch -Q -L lisp -L .deps/gptel -l bench/bench.el -f toolspec-bench-run-and-exit
echo "bench: done in $(( $(date +%s) - start )) s"
