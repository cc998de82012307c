#!/usr/bin/env bash
# Regenerates screenshots/*.svg from real runs: each scripts/screens/NAME.play is replayed by the
# real binary (`loupe FILE --play … --output NAME.svg`), which renders its screen buffer to SVG.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product loupe
loupe=.build/debug/loupe
chinook=Tests/Fixtures/realdata/chinook/Chinook_Sqlite.sqlite
sample=sample-data/library.sqlite
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp "$chinook" "$tmp/Chinook_Sqlite.sqlite"; cp "$sample" "$tmp/library.sqlite"
for play in scripts/screens/*.play; do
  name=$(basename "$play" .play)
  case "$name" in
    sample-*) file="$tmp/library.sqlite" ;;
    *) file="$tmp/Chinook_Sqlite.sqlite" ;;
  esac
  "$loupe" "$file" --play "$play" --size 120x36 --output "screenshots/$name.svg"
  "$loupe" "$file" --play "$play" --size 120x36 --output "screenshots/$name.txt"
  echo "screenshots/$name.svg"
done
