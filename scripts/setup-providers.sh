#!/usr/bin/env bash
# Set up the provider-acceptance checks (scripts/provider-tests.sh), from
# the package registries only, into $TOOLSPEC_PROVIDERS (default
# .deps/providers); nothing outside it changes:
#   npm/      real MCP servers (@modelcontextprotocol/server-*), npm
#   pyenv/    a private Python venv: the providers' own validators
#             (google-genai, botocore, mcp, openai-agents, jsonschema)
#             and the MCP servers of PyPI (mcp-server-git, -fetch, -time)
#   pyenv-mcp1/  the PyPI servers written for mcp 1.x (sqlite, sentry)
#   corpus/SERVER.json  each server's tools/list, as the server sent it:
#             every server is started on stdio (a dummy token where it
#             wants one; listing its tools needs no network)
#   bfcl/catalog.json   every distinct function definition of the
#             Berkeley Function Calling Leaderboard data (bfcl-eval),
#             as it is: 3,420 functions in a JSON array
# Non-interactive and idempotent: nothing is done when the stamp of these
# versions is there.  A server that fails to install or to list its tools
# fails the setup, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=${TOOLSPEC_PROVIDERS:-$root/.deps/providers}

log() { printf 'setup-providers: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

NPM_SERVERS=(
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/server-memory@2026.8.31
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-sequential-thinking@2026.8.31
  @modelcontextprotocol/server-github@2025.4.8
  @modelcontextprotocol/server-gitlab@2025.4.25
  @modelcontextprotocol/server-slack@2025.4.25
  @modelcontextprotocol/server-brave-search@0.6.2
  @modelcontextprotocol/server-google-maps@0.6.2
  @modelcontextprotocol/server-postgres@0.6.2
  @modelcontextprotocol/server-everart@0.6.2
  @modelcontextprotocol/server-aws-kb-retrieval@0.6.2
)
PY_PACKAGES=(
  google-genai==3.3.0 botocore==1.44.5 mcp==2.3.0 openai-agents==0.24.0 jsonschema==4.26.0
  mcp-server-git==2026.10.19 mcp-server-fetch==2026.10.24 mcp-server-time==2026.10.19
)
PY_MCP1_PACKAGES=(mcp-server-sqlite==2025.4.25 mcp-server-sentry==2025.1.14 'mcp<2')
BFCL_VERSION=2026.3.23

sum=$(cat scripts/setup-providers.sh test/providers/list_tools.py test/providers/make_catalog.py | cksum | cut -d' ' -f1)
stamp="$dest/.complete-$sum"
if [ -e "$stamp" ]; then
  exit 0
fi
command -v node >/dev/null && command -v npm >/dev/null \
  || die "Node.js and npm are needed (apt-get install nodejs npm)"
command -v python3 >/dev/null || die "python3 is needed (apt-get install python3)"
command -v git >/dev/null || die "git is needed (apt-get install git)"

mkdir -p "$dest"
rm -f "$dest"/.complete-*

# A venv with its own pip; Debian ships venv apart (python3-venv).
make_venv() {
  local dir=$1
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
    return 0
  fi
  rm -rf "$dir"
  if ! python3 -m venv "$dir" 2>/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      log "installing python3-venv (Debian)"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null </dev/null
      rm -rf "$dir"
      python3 -m venv "$dir"
    else
      die "python3 -m venv failed: install python3-venv"
    fi
  fi
}
pip_install() {
  local dir=$1; shift
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$@" </dev/null \
    || die "pip could not install $* into $dir"
}

log "MCP servers from npm -> $dest/npm"
npm install --prefix "$dest/npm" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "${NPM_SERVERS[@]}" </dev/null >/dev/null || die "npm could not install the MCP servers"

log "validators and PyPI MCP servers -> $dest/pyenv"
make_venv "$dest/pyenv"
pip_install "$dest/pyenv" "${PY_PACKAGES[@]}"
make_venv "$dest/pyenv-mcp1"
pip_install "$dest/pyenv-mcp1" "${PY_MCP1_PACKAGES[@]}"

# Each server on stdio, in a scratch directory of its own (a temp
# filesystem root, git repository, memory file and database).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/fsroot" "$dest/corpus.new"
rm -rf "$dest/corpus.new"/*
git init -q "$scratch/repo"
git -C "$scratch/repo" -c user.email=test@example.invalid -c user.name=test \
  commit -q --allow-empty -m init
npmbin=$dest/npm/node_modules/@modelcontextprotocol
py=$dest/pyenv/bin
py1=$dest/pyenv-mcp1/bin
list() {
  local name=$1; shift
  python3 test/providers/list_tools.py "$dest/corpus.new/$name.json" "$@" \
    || { tail -n 20 "$dest/corpus.new/$name.json.stderr" >&2 || true
         die "MCP server $name did not list its tools"; }
}
list filesystem -- node "$npmbin/server-filesystem/dist/index.js" "$scratch/fsroot"
list memory --env MEMORY_FILE_PATH="$scratch/memory.jsonl" -- node "$npmbin/server-memory/dist/index.js"
list everything -- node "$npmbin/server-everything/dist/index.js"
list sequential-thinking -- node "$npmbin/server-sequential-thinking/dist/index.js"
list github --env GITHUB_PERSONAL_ACCESS_TOKEN=dummy -- node "$npmbin/server-github/dist/index.js"
list gitlab --env GITLAB_PERSONAL_ACCESS_TOKEN=dummy -- node "$npmbin/server-gitlab/dist/index.js"
list slack --env SLACK_BOT_TOKEN=xoxb-dummy --env SLACK_TEAM_ID=T0DUMMY -- node "$npmbin/server-slack/dist/index.js"
list brave-search --env BRAVE_API_KEY=dummy -- node "$npmbin/server-brave-search/dist/index.js"
list google-maps --env GOOGLE_MAPS_API_KEY=dummy -- node "$npmbin/server-google-maps/dist/index.js"
list postgres -- node "$npmbin/server-postgres/dist/index.js" postgresql://127.0.0.1:1/none
list everart --env EVERART_API_KEY=dummy -- node "$npmbin/server-everart/dist/index.js"
list aws-kb-retrieval --env AWS_ACCESS_KEY_ID=dummy --env AWS_SECRET_ACCESS_KEY=dummy \
  --env AWS_REGION=us-east-1 -- node "$npmbin/server-aws-kb-retrieval/dist/index.js"
list git -- "$py/mcp-server-git" --repository "$scratch/repo"
list fetch -- "$py/mcp-server-fetch"
list time -- "$py/mcp-server-time" --local-timezone UTC
list sqlite -- "$py1/mcp-server-sqlite" --db-path "$scratch/db.sqlite"
list sentry -- "$py1/mcp-server-sentry" --auth-token dummy
rm -f "$dest/corpus.new"/*.stderr
rm -rf "$dest/corpus"
mv "$dest/corpus.new" "$dest/corpus"

log "bfcl-eval==$BFCL_VERSION -> $dest/bfcl"
mkdir -p "$scratch/whl"
"$dest/pyenv/bin/python" -m pip download --quiet --no-deps --disable-pip-version-check --no-input \
  -d "$scratch/whl" "bfcl-eval==$BFCL_VERSION" </dev/null || die "pip could not download bfcl-eval"
rm -rf "$dest/bfcl"; mkdir -p "$dest/bfcl"
python3 test/providers/make_catalog.py "$scratch"/whl/bfcl_eval-*.whl "$dest/bfcl/catalog.json"

touch "$stamp"
log "done: $(ls "$dest/corpus" | wc -l) servers, $(python3 -c 'import json,sys,glob; print(sum(len(json.load(open(f))["tools"]) for f in glob.glob(sys.argv[1]+"/*.json")))' "$dest/corpus") tools"
