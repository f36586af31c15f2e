#!/usr/bin/env bash
# make bench-revisions OLD=REV [NEW=REV]: toolspec at two revisions, timed
# against each other in the same run, on the catalog each revision's
# bench/make-catalog.py makes (BFCL's functions, as that revision's bench
# imported them).
#
# `make bench' compares toolspec with baselines in one run; across runs
# its ratios move with the machine and with the catalog.  This compares
# toolspec with itself: each revision's release module and byte-compiled
# lisp/ in its own batch Emacs (bench/revisions.el), the two alternating,
# ROUNDS (default 6) processes each per catalog, each process printing
# the medians of its runs; and, once per round for each revision, the
# first import of GitHub's OpenAPI description in a fresh Emacs.
# Printed: the median over the processes of each case, and NEW / OLD, on
# each catalog and with each revision on its own.
#
# Usage: scripts/bench-revisions.sh OLD [NEW (default HEAD)] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/bench-revisions.sh OLD [NEW] [ROUNDS]}
new=${2:-HEAD}
rounds=${3:-6}
EMACS=${EMACS:-emacs}
CARGO=${CARGO:-cargo}
root=$PWD

bash scripts/fetch-bench-data.sh
work=$(mktemp -d)
cleanup() {
  for tag in old new; do
    git -C "$root" worktree remove --force "$work/$tag-src" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# Each revision: its module, its lisp/ and gptel byte-compiled, its
# catalog.  The two share one target directory, so that the crates they
# depend on are built once.
for tag in old new; do
  rev=$([ "$tag" = old ] && echo "$old" || echo "$new")
  git worktree add --quiet --detach "$work/$tag-src" "$rev"
  echo "bench-revisions: $tag = $(git log -1 --format='%h %s' "$rev")"
  (cd "$work/$tag-src" && CARGO_TARGET_DIR="$root/target/bench-revisions" "$CARGO" build --quiet --release --lib)
  cp "$root/target/bench-revisions/release/libtoolspec.so" "$work/$tag.so"
  mkdir -p "$work/$tag-lisp"
  cp "$work/$tag-src"/lisp/*.el "$work/$tag-lisp/"
  cp -r .deps/gptel "$work/$tag-gptel"
  rm -f "$work/$tag-gptel/gptel-rewrite.el"
  "$EMACS" --batch -Q -L "$work/$tag-lisp" -L "$work/$tag-gptel" \
    --eval '(setq byte-compile-warnings nil)' \
    --eval "(setq toolspec-module-file \"$work/$tag.so\")" \
    -f batch-byte-compile "$work/$tag-lisp"/*.el "$work/$tag-gptel"/*.el >/dev/null 2>&1 ||
    echo "bench-revisions: some of $tag's files did not byte-compile; they run interpreted" >&2
  python3 "$work/$tag-src/bench/make-catalog.py" .deps/bench/bfcl/bfcl_eval/data "$work/$tag-catalog.json" |
    sed "s|^|bench-revisions: $tag's |"
  python3 "$work/$tag-src/bench/make-catalog.py" .deps/bench/bfcl/bfcl_eval/data "$work/$tag-catalog-2x.json" 0 2 |
    sed "s|^|bench-revisions: $tag's |"
done

# The first import of GitHub's OpenAPI description in a fresh Emacs, as
# bench.el's case of that name: milliseconds, printed as "fresh MS".
github=$(bash scripts/fetch-test-data.sh >/dev/null 2>&1; echo "$root/.deps/testdata/octokit-openapi/generated/api.github.com.json")
fresh() {
  "$EMACS" --batch -Q -L "$work/$1-lisp" --eval "(setq toolspec-module-file \"$work/$1.so\")" --eval "
    (progn (require 'toolspec) (require 'toolspec-openapi)
      (let ((text (with-temp-buffer (let ((coding-system-for-read 'utf-8)) (insert-file-contents \"$github\"))
                                    (buffer-string))))
        (ignore text)
        (garbage-collect)
        (let ((t0 (float-time)))
          (toolspec-read-openapi \"$github\")
          (princ (format \"fresh %.2f\" (* 1000 (- (float-time) t0))))))))" 2>/dev/null | tail -n1
}

for ((r = 1; r <= rounds; r++)); do
  for catalog in old new; do
    for tag in old new; do
      line=$(TOOLSPEC_REV_CATALOG="$work/$catalog-catalog.json" \
        TOOLSPEC_REV_CATALOG_2X="$work/$catalog-catalog-2x.json" \
        "$EMACS" --batch -Q -L "$work/$tag-lisp" -L "$work/$tag-gptel" \
        --eval "(setq toolspec-module-file \"$work/$tag.so\")" \
        -l bench/revisions.el -f toolspec-rev-run-and-exit 2>/dev/null | tr '\n' ' ')
      echo "$tag $catalog $line" >>"$work/times"
    done
  done
  for tag in old new; do
    echo "$tag github $(fresh "$tag")" >>"$work/times"
  done
  echo "bench-revisions: round $r of $rounds" >&2
done

python3 - "$work/times" "$rounds" <<'PY'
import re, statistics, sys
times = {}
fails = {}
CASES = ("import", "import-gc", "register", "register-2x", "export")
for line in open(sys.argv[1]):
    tag, catalog, rest = (line.rstrip("\n") + " ").split(" ", 2)
    for case in (("fresh",) if catalog == "github" else CASES):
        m = re.search("(?:^| )" + case + r" ([0-9.]+)", rest)
        if m:
            times.setdefault((tag, catalog, case), []).append(float(m.group(1)))
        else:
            f = re.search("(?:^| )" + case + r" failed: (.*?)(?= (?:" + "|".join(CASES) + ") |$)", rest.strip())
            fails[(tag, catalog, case)] = f.group(1) if f else "no time printed"
print(f"\nMedians of {sys.argv[2]} processes each, ms (each process: the median of its runs)\n")
print(f"| catalog | case | old | new | new / old |")
print(f"| --- | --- | ---: | ---: | ---: |")
for catalog, cases in (("old", CASES), ("new", CASES), ("github", ("fresh",))):
    for case in cases:
        cells = []
        for tag in ("old", "new"):
            xs = times.get((tag, catalog, case))
            cells.append(statistics.median(xs) if xs else None)
        shown = [f"{c:.1f}" if c is not None else "fails" for c in cells]
        ratio = f"{cells[1] / cells[0]:.2f}x" if None not in cells else ""
        where = "GitHub's OpenAPI, first in a fresh Emacs" if catalog == "github" else f"{catalog}'s"
        print(f"| {where} | {case} | {shown[0]} | {shown[1]} | {ratio} |")
print("\nEach revision on its own catalog:\n")
print("| case | old on old's | new on new's | new / old |")
print("| --- | ---: | ---: | ---: |")
for case in CASES:
    a, b = times.get(("old", "old", case)), times.get(("new", "new", case))
    if a and b:
        a, b = statistics.median(a), statistics.median(b)
        print(f"| {case} | {a:.1f} | {b:.1f} | {b / a:.2f}x |")
for (tag, catalog, case), why in sorted(fails.items()):
    print(f"\n{tag} on {catalog}'s catalog, {case}: {why}")
PY
