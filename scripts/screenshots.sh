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
# The other store `.diff` compares Chinook with (chinook-diff*): a copy another build of an app
# might have written, a few objects changed, added and deleted.
cp "$chinook" "$tmp/after.sqlite"
python3 - "$tmp/after.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
UPDATE Album SET Title = 'Restless and Wild (Remastered)' WHERE AlbumId = 3;
UPDATE Track SET UnitPrice = 1.29, Composer = 'Angus Young' WHERE TrackId IN (1, 6);
INSERT INTO Genre (GenreId, Name) VALUES (26, 'Polka');
DELETE FROM PlaylistTrack WHERE PlaylistId = 18;
DELETE FROM Playlist WHERE PlaylistId = 18;
""")
db.commit()
PY
root=$PWD
for play in scripts/screens/*.play; do
  name=$(basename "$play" .play)
  case "$name" in
    sample-*) file="library.sqlite" ;;
    *) file="Chinook_Sqlite.sqlite" ;;
  esac
  for out in svg txt; do
    if [ "$name" = chinook-live ]; then
      # A fresh copy each time, and a writer that commits a second after the browser opened it.
      mkdir -p "$tmp/live"; cp "$chinook" "$tmp/live/Chinook_Sqlite.sqlite"; file="live/Chinook_Sqlite.sqlite"
      (sleep 1; python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("UPDATE Album SET Title = \x27Balls to the Wall (Live)\x27 WHERE AlbumId = 2; INSERT INTO Album VALUES (348, \x27Brand New Album\x27, 1)")
db.commit()' "$tmp/$file") &
    fi
    # Run beside the files, so that what a screen shows of a path is the file's name.
    (cd "$tmp" && "$root/$loupe" "$file" --play "$root/$play" --size 120x36 --output "$root/screenshots/$name.$out")
    wait
  done
  echo "screenshots/$name.svg"
done
