#!/usr/bin/env bash
# Install what toolspec's build, demo and tests need on a Debian machine:
#   - Emacs 30 (emacs-nox from bookworm-backports) when no Emacs >= 28.1 is present
#   - gptel, unpacked from Debian's elpa-gptel package into .deps/ (no system change)
# Idempotent; non-interactive; safe to run on every `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
deps="$here/.deps"
mkdir -p "$deps"

log() { printf 'setup-deps: %s\n' "$*" >&2; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      SUDO=sudo
    else
      log "installing $1 needs root: run 'sudo apt-get install $1' (Debian) and retry"
      exit 1
    fi
  else
    SUDO=
  fi
}

emacs_ok() {
  command -v "${EMACS:-emacs}" >/dev/null 2>&1 || return 1
  "${EMACS:-emacs}" --batch -Q --eval \
    '(kill-emacs (if (version<= "28.1" emacs-version) 0 1))' >/dev/null 2>&1
}

codename() { . /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}"; }

install_emacs() {
  if ! command -v apt-get >/dev/null 2>&1; then
    log "no Emacs >= 28.1 found and this is not a Debian system: install Emacs 30 and set EMACS"
    exit 1
  fi
  need_root emacs-nox
  local cn; cn=$(codename)
  export DEBIAN_FRONTEND=noninteractive
  if [ "$cn" = bookworm ]; then
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding bookworm-backports to apt sources"
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        | $SUDO tee /etc/apt/sources.list.d/toolspec-backports.sources >/dev/null
    fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq -t bookworm-backports emacs-nox >/dev/null
  else
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq emacs-nox >/dev/null
  fi
}

install_gptel() {
  if [ -f "$deps/gptel/gptel.el" ]; then return 0; fi
  log "fetching gptel (Debian elpa-gptel from the unstable suite) into .deps/"
  local apt="$deps/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc"
  cat > "$apt/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian unstable main
SRC
  local opts=(-o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=-"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
              -o "Dir::State::Status=/dev/null" -o "APT::Get::List-Cleanup=0"
              -o "Debug::NoLocking=1" -o "Acquire::Languages=none")
  apt-get "${opts[@]}" update -qq >/dev/null 2>&1 || apt-get "${opts[@]}" update -qq
  (cd "$deps" && apt-get "${opts[@]}" download -qq elpa-gptel >/dev/null)
  local deb; deb=$(ls "$deps"/elpa-gptel_*.deb | head -n1)
  rm -rf "$deps/gptel-unpacked"
  dpkg-deb -x "$deb" "$deps/gptel-unpacked"
  local dir; dir=$(dirname "$(find "$deps/gptel-unpacked" -name gptel.el | head -n1)")
  rm -rf "$deps/gptel"; cp -r "$dir" "$deps/gptel"
  rm -rf "$deps/gptel-unpacked" "$deb"
  log "gptel $(grep -m1 -i '^;; Version:' "$deps/gptel/gptel.el" | awk '{print $3}') in .deps/gptel"
}

emacs_ok || install_emacs
emacs_ok || { log "Emacs >= 28.1 still not available"; exit 1; }
case "${1:-all}" in
  emacs) ;;
  *) install_gptel ;;
esac
