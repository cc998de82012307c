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
if ((${#need[@]})); then
  $sudo apt-get update
  $sudo apt-get install -y "${need[@]}"
fi
swift build -c release --product loupe
exec .build/release/loupe "$@"
