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
command -v dot >/dev/null 2>&1 || need+=(graphviz)   # to draw `loupe schema --format dot`
if ((${#need[@]})); then
  $sudo apt-get update
  $sudo apt-get install -y "${need[@]}"
fi
echo "Building Loupe (release; a first build takes 4-7 minutes on 2 cores)…" >&2
swift build -c release --product loupe
# Installed like a Unix tool, under the user's prefix (PREFIX, default ~/.local): the binary, the
# bundled sample (found from any folder), a man page from the command definitions, and bash, zsh
# and fish completions.
prefix=${PREFIX:-$HOME/.local}
data=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$prefix/bin" "$prefix/share/man/man1" "$data/loupe" "$data/bash-completion/completions" "$data/zsh/site-functions" \
         "${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions"
install -m 755 .build/release/loupe "$prefix/bin/loupe"
install -m 644 sample-data/library.sqlite "$data/loupe/library.sqlite"
man=$(mktemp -d)
if swift package --allow-writing-to-directory "$man" generate-manual --output-directory "$man" >/dev/null 2>&1; then
  install -m 644 "$man/loupe.1" "$prefix/share/man/man1/loupe.1"
fi
rm -rf "$man"
"$prefix/bin/loupe" --generate-completion-script bash >"$data/bash-completion/completions/loupe"
"$prefix/bin/loupe" --generate-completion-script zsh >"$data/zsh/site-functions/_loupe"
"$prefix/bin/loupe" --generate-completion-script fish >"${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions/loupe.fish"
echo "installed: $prefix/bin/loupe, its man page (man loupe) and shell completions" >&2
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "to run it by name, put $prefix/bin on your PATH:  export PATH=\"$prefix/bin:\$PATH\"  (add that line to ~/.profile to keep it)" >&2 ;;
esac
case ":${MANPATH:-}:" in
  *":$prefix/share/man:"*|"::") ;;
  *) echo "for man loupe, add $prefix/share/man to MANPATH" >&2 ;;
esac
if [ -t 0 ] && [ -t 1 ]; then exec "$prefix/bin/loupe" "$@"; fi
echo "(not on a terminal: run loupe there to open the sample)" >&2
