#!/usr/bin/env bash
# Run every fuzz target for a while (default 60 s each; FUZZ_SECONDS to
# change; FUZZ_TARGETS="a b" to run only some) with cargo-fuzz
# (libFuzzer).  Corpora are seeded from examples/, test/fixtures/,
# fuzz/seeds/ and, when present, the small real OpenAPI documents of
# .deps/testdata.  Installs cargo-fuzz if missing.  Works on a stable
# toolchain (RUSTC_BOOTSTRAP lets it use the sanitizer flags).  A crash,
# a timeout (a unit taking over FUZZ_TIMEOUT seconds, default 10) or an
# out-of-memory (over 2 GB) leaves its input in fuzz/artifacts/TARGET/
# and fails the run: turn it into a regression test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"
seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-10}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz
targets=${FUZZ_TARGETS:-$(cargo fuzz list)}

# Seed each corpus (copies are cheap; libFuzzer skips duplicates).
seed() { # seed TARGET FILE...
  local t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "corpus/$t/"; done
  return 0
}
testdata=${TOOLSPEC_TESTDATA:-$root/.deps/testdata}
for t in $targets; do
  mkdir -p "corpus/$t"
  [ -d "seeds/$t" ] && seed "$t" seeds/"$t"/*
  case $t in
    read_json) seed "$t" "$root"/examples/*.json "$root"/test/fixtures/*.json ;;
    openapi)
      seed "$t" "$root"/examples/openapi.json "$root"/test/fixtures/*.yaml
      if [ -d "$testdata" ]; then
        find "$testdata" -name '*.json' -size -24k -path '*api*' | while read -r f; do
          cp "$f" "corpus/$t/$(echo "${f#"$testdata"/}" | tr / _)"
        done
      fi ;;
    elisp) seed "$t" "$root"/test/fixtures/elisp/*.el "$root"/test/fixtures/*.el ;;
  esac
done

cargo fuzz build -O
status=0
for t in $targets; do
  echo "==> fuzz $t (${seconds}s)"
  cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$seconds" -timeout="$timeout" \
        -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
    | grep -E '^#[0-9]+[[:space:]]+DONE|^Done [0-9]+ runs|^stat::number_of_executed_units|^stat::peak_rss_mb|SUMMARY|panicked|ERROR|Test unit written' || :
  found=$(find "artifacts/$t" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null || :)
  if [ -n "$found" ]; then
    echo "FAILED: $t left" $found; status=1
  fi
done
exit $status
