#!/usr/bin/env bash
# Installs what Loupe needs on a fresh Debian machine, builds it, and opens the bundled sample.
# Usage: scripts/bootstrap.sh [FILE]   (FILE defaults to the bundled sample store)
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
need=()
dpkg -s libncurses-dev >/dev/null 2>&1 || need+=(libncurses-dev)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)
dpkg -s libpq-dev >/dev/null 2>&1 || need+=(libpq-dev)
dpkg -s postgresql >/dev/null 2>&1 || need+=(postgresql)   # a server for the PostgreSQL tests
if ((${#need[@]})); then
  $sudo apt-get update
  $sudo apt-get install -y "${need[@]}"
fi
swift build -c release --product loupe
# `loupe` by name from now on: a link in ~/.local/bin (on PATH in Debian's default profile once
# the folder exists; the message says so when this shell does not have it yet).
mkdir -p "$HOME/.local/bin"
ln -sf "$PWD/.build/release/loupe" "$HOME/.local/bin/loupe"
case ":$PATH:" in
  *":$HOME/.local/bin:"*) ;;
  *) echo "loupe is linked in ~/.local/bin; add it to PATH (export PATH=\"\$HOME/.local/bin:\$PATH\") to run it by name" >&2 ;;
esac
exec .build/release/loupe "$@"
