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

# An apt of our own in DIR, reading Debian's SUITE (main) with no root
# and no change to the system: its options are left in `apt_opts', its
# package lists updated.
private_apt() {
  local dir=$1 suite=$2
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/etc"
  cat > "$dir/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
SRC
  apt_opts=(-o "Dir::Etc::SourceList=$dir/etc/sources.list" -o "Dir::Etc::SourceParts=-"
            -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
            -o "Dir::State::Status=/dev/null" -o "APT::Get::List-Cleanup=0"
            -o "Debug::NoLocking=1" -o "Acquire::Languages=none")
  apt-get "${apt_opts[@]}" update -qq >/dev/null 2>&1 || apt-get "${apt_opts[@]}" update -qq
}

install_gptel() {
  if [ -f "$deps/gptel/gptel.el" ]; then return 0; fi
  log "fetching gptel (Debian elpa-gptel from the unstable suite) into .deps/"
  private_apt "$deps/apt" unstable
  (cd "$deps" && apt-get "${apt_opts[@]}" download -qq elpa-gptel >/dev/null)
  local deb; deb=$(ls "$deps"/elpa-gptel_*.deb | head -n1)
  rm -rf "$deps/gptel-unpacked"
  dpkg-deb -x "$deb" "$deps/gptel-unpacked"
  local dir; dir=$(dirname "$(find "$deps/gptel-unpacked" -name gptel.el | head -n1)")
  rm -rf "$deps/gptel"; cp -r "$dir" "$deps/gptel"
  rm -rf "$deps/gptel-unpacked" "$deb"
  log "gptel $(grep -m1 -i '^;; Version:' "$deps/gptel/gptel.el" | awk '{print $3}') in .deps/gptel"
}

# Emacs 28, the oldest toolspec supports, for a second run of the ERT
# suite: Debian bookworm's emacs-nox 28.2 and elpa-compat (what gptel needs
# on Emacs 28), unpacked into .deps/emacs-28 (no system change), run by
# the script .deps/emacs-28/emacs.  Fails when the packages cannot be had.
install_emacs28() {
  local dir="$deps/emacs-28"
  if [ -x "$dir/emacs" ] && [ -d "$dir/compat" ]; then
    # A script of before the dump file was passed is written again.
    grep -q -- --dump-file "$dir/emacs" || write_emacs28_script "$dir"
    return 0
  fi
  log "fetching Emacs 28 and compat (Debian bookworm) into .deps/emacs-28"
  local apt="$deps/apt-bookworm"
  private_apt "$apt" bookworm
  local version
  version=$(apt-cache "${apt_opts[@]}" madison emacs-nox | awk '$3 ~ /^1:28\./ { print $3; exit }')
  if [ -z "$version" ]; then
    log "no Emacs 28 in Debian bookworm's packages"; return 1
  fi
  rm -rf "$dir" "$apt/debs"; mkdir -p "$apt/debs" "$dir/root"
  (cd "$apt/debs" && apt-get "${apt_opts[@]}" download -qq "emacs-nox=$version" "emacs-common=$version" \
     "emacs-bin-common=$version" "emacs-el=$version" elpa-compat >/dev/null)
  for deb in "$apt/debs"/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  rm -rf "$apt/debs"
  local compat; compat=$(dirname "$(find "$dir/root" -name compat.el | head -n1)")
  mv "$compat" "$dir/compat"
  [ -d "$dir/root/usr/share/emacs/28.2/lisp" ] && [ -x "$dir/root/usr/bin/emacs-nox" ] || { log "the Emacs 28 packages did not unpack as expected"; return 1; }
  write_emacs28_script "$dir"
  log "$("$dir/emacs" --batch -Q --eval '(princ emacs-version)' 2>/dev/null) in .deps/emacs-28"
}

# The script that runs the Emacs 28 unpacked in $1: its Lisp, data and
# dump file found where they were unpacked (its own paths are /usr's).
# Without its dump file, Emacs would load all of its preloaded Lisp at
# each start, and could not start on a terminal.
write_emacs28_script() {
  local dir=$1
  local share="$dir/root/usr/share/emacs/28.2"
  local dump; dump=$(find "$dir/root" -name '*.pdmp' | head -n1)
  [ -n "$dump" ] || { log "no dump file in the Emacs 28 packages"; return 1; }
  cat > "$dir/emacs" <<RUN
#!/bin/sh
# Emacs 28 from .deps/emacs-28/root, with compat on its load path.
EMACSLOADPATH="\$(find "$share/lisp" -type d | tr '\\n' ':')$dir/compat"
EMACSDATA="$share/etc" EMACSDOC="$share/etc"
export EMACSLOADPATH EMACSDATA EMACSDOC
exec "$dir/root/usr/bin/emacs-nox" --dump-file="$dump" "\$@"
RUN
  chmod +x "$dir/emacs"
}

emacs_ok || install_emacs
emacs_ok || { log "Emacs >= 28.1 still not available"; exit 1; }
case "${1:-all}" in
  emacs) ;;
  emacs28) install_emacs28 ;;
  *) install_gptel ;;
esac
