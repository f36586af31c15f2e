#!/usr/bin/env bash
# Run every fuzz target for a while (default 60 s each; FUZZ_SECONDS to
# change) with cargo-fuzz (libFuzzer), seeded from examples/.  Installs
# cargo-fuzz if missing.  Works on a stable toolchain (RUSTC_BOOTSTRAP lets
# it use the sanitizer flags).  A crash leaves its input in
# fuzz/artifacts/TARGET/ and fails the run: turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${FUZZ_SECONDS:-60}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz
targets=$(cargo fuzz list)
for t in $targets; do
  mkdir -p "corpus/$t"
  [ "$t" = read_json ] && cp ../examples/*.json "corpus/$t/"
done
cargo fuzz build -O
status=0
for t in $targets; do
  echo "==> fuzz $t (${seconds}s)"
  if ! cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
       2>&1 | grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|SUMMARY|panicked|ERROR' ; then :; fi
  if ls "artifacts/$t"/crash-* >/dev/null 2>&1 || ls "artifacts/$t"/timeout-* >/dev/null 2>&1 || ls "artifacts/$t"/oom-* >/dev/null 2>&1; then
    echo "FAILED: $t found crashes: $(ls artifacts/$t)"; status=1
  fi
done
exit $status
