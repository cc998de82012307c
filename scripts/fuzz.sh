#!/usr/bin/env bash
# Coverage-guided fuzzing of Loupe with libFuzzer (the Swift toolchain's), two targets:
#   statements  any bytes parsed, printed back and reparsed, evaluated, rendered (Fuzz/Sources/QueryFuzz)
#   files       any bytes opened, loaded and described as a store (Fuzz/Sources/FileFuzz)
#
#   scripts/fuzz.sh [SECONDS]            each target for SECONDS (default 60)
#   scripts/fuzz.sh --runs N [M]         N statements and M files (M defaults to N / 10);
#                                        the long run is --runs 1000000 100000
#   scripts/fuzz.sh --ci                 what .ci/run does: --runs 80000 1500 (the two targets at once,
#                                        a core each), seeded from the commit, so that a CI run is
#                                        repeated exactly by running this on the same commit
#   scripts/fuzz.sh --build-only         builds the two targets and stops (.ci/run builds them
#                                        while the tests run: the build is mostly one core's work)
#   SEED=S scripts/fuzz.sh …             libFuzzer's seed (otherwise a random one, printed)
#
# Swift's hashing is made deterministic (SWIFT_DETERMINISTIC_HASHING), so that a seed and a
# number of runs repeat a run input for input.
# The statement corpus starts from Fuzz/corpus/statements and a dictionary of the language; the
# file corpus from stores generated here (loupe sample, the seed-format fixtures in Tests/Fixtures,
# small SQLite files written with Python's sqlite3), never from blobs in the repository.
# Findings (inputs that crash or hang) are written to Fuzz/findings/, and printed (message,
# first frames, input in base64); the script exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
limit=(-max_total_time="${1:-60}")
file_limit=("${limit[@]}")
if [ "${1:-}" = "--runs" ]; then limit=(-runs="$2"); file_limit=(-runs="${3:-$(( $2 / 10 ))}"); fi
if [ "${1:-}" = "--ci" ]; then
  limit=(-runs=80000); file_limit=(-runs=1500)
  seed=${SEED:-$(( 16#$(git rev-parse --short=7 HEAD) + 1 ))}
fi
export SWIFT_DETERMINISTIC_HASHING=1

swift build --package-path Fuzz --sanitize fuzzer --product QueryFuzz >/dev/null
swift build --package-path Fuzz --sanitize fuzzer --product FileFuzz >/dev/null
if [ "${1:-}" = "--build-only" ]; then exit 0; fi
swift build --product loupe >/dev/null
bin=$(swift build --package-path Fuzz --sanitize fuzzer --show-bin-path)

work=$(mktemp -d "${TMPDIR:-/tmp}/loupe-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/statements" "$work/files" "$work/file-seeds" Fuzz/findings

# Seed stores: small, of every format and shape the readers know.
.build/debug/loupe sample "$work/file-seeds/sample.sqlite" --objects 60 --seed 3 >/dev/null
for f in Tests/Fixtures/fixtures/seed-formats/*.sqlite; do [ -f "$f" ] && cp "$f" "$work/file-seeds/"; done
python3 - "$work/file-seeds" <<'PY'
import sqlite3, sys, os
d = sys.argv[1]
def make(name, *sql):
    c = sqlite3.connect(os.path.join(d, name)); c.executescript(';'.join(sql)); c.commit(); c.close()
make('relational.sqlite', 'PRAGMA page_size=512',
     'CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT, at DATE, v REAL)',
     'CREATE TABLE b(id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id) ON DELETE CASCADE, note BLOB)',
     "INSERT INTO a VALUES (1,'x','2024-01-01',1.5),(2,'y',1700000000,NULL)", "INSERT INTO b VALUES (1,1,x'00ff'),(2,2,NULL),(3,9,'t')",
     'CREATE VIEW v AS SELECT a.name, b.note FROM a JOIN b ON b.a_id = a.id')
make('keys.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE p(a TEXT, b, PRIMARY KEY(a,b)) WITHOUT ROWID', "INSERT INTO p VALUES ('a','b|1'),('a|b',1)",
     'CREATE TABLE g(x INTEGER, y GENERATED ALWAYS AS (x*2) VIRTUAL)', 'INSERT INTO g(x) VALUES (1),(2)')
make('awkward-keys.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE m(k PRIMARY KEY, label TEXT)', "INSERT INTO m VALUES (5,'i'),('5','t'),(7,'s'),(2.0,'two')",
     'CREATE TABLE t(n INTEGER PRIMARY KEY, label TEXT)', "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'a')",
     'CREATE TABLE p(id INTEGER PRIMARY KEY, boss INTEGER REFERENCES p(id), m REFERENCES m(k), tag TEXT REFERENCES t(label))',
     "INSERT INTO p VALUES (1,NULL,5,'a'),(2,1,'5','b'),(3,1,'05','a'),(4,1,7.0,'z'),(5,9,'+7',NULL),(6,1,'x','a'),(7,1,2,'b')",
     'CREATE INDEX p_boss ON p(boss)', 'CREATE TABLE d(id INTEGER PRIMARY KEY DESC, p INTEGER REFERENCES p(id))', 'INSERT INTO d VALUES (100,1),(50,2),(7,1)')
make('views.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT, at DATE, v REAL)',
     'CREATE TABLE b(id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id), note BLOB)',
     "INSERT INTO a VALUES (1,'x','2024-01-01',1.5),(2,'y',1700000000,NULL),(3,'ab',NULL,3)", "INSERT INTO b VALUES (1,1,x'00ff'),(2,2,NULL),(3,1,'t')",
     'CREATE VIEW v AS SELECT a.name, b.note, a.v FROM a JOIN b ON b.a_id = a.id',
     'CREATE TABLE w(k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID', "INSERT INTO w VALUES ('b',2),('a',1),('c',3)")
make('undeclared.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE owner(id INTEGER PRIMARY KEY, name TEXT)', 'CREATE TABLE code(id TEXT PRIMARY KEY)',
     'CREATE TABLE pet(id INTEGER PRIMARY KEY, owner_id TEXT, CodeId INTEGER, ownerId DATE)', 'CREATE INDEX pet_owner ON pet(owner_id)',
     "INSERT INTO owner VALUES (1,'a'),(2,'b'),(3,'c')", "INSERT INTO code VALUES ('1'),('2'),('x')",
     "INSERT INTO pet VALUES (1,'1',1,1),(2,'02',2,2),(3,3,NULL,3),(4,NULL,1,NULL),(5,2.0,2,1)")
make('persist-small.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE by_type(id INTEGER PRIMARY KEY, type_name TEXT, json TEXT)',
     'CREATE TABLE relations(from_id INTEGER, to_id INTEGER, relation TEXT)',
     """INSERT INTO by_type VALUES (1,'A','{"n":1,"d":"2020-01-01 00:00:00 Z","x":[1,{"y":null}]}'),(2,'B','{"s":"a\\\\u0041"}'),(3,'A','not json')""",
     "INSERT INTO relations VALUES (1,2,'b'),(2,1,'a'),(1,99,'b')")
# The value kinds of hardening 3: text holding NUL, bytes that are not UTF-8 (a lone surrogate's
# encoding among them), decimals past a double's digits, UTF-16 files, virtual tables.
make('values.sqlite', 'PRAGMA page_size=512', 'CREATE TABLE v(id INTEGER PRIMARY KEY AUTOINCREMENT, s TEXT, u, n NUMERIC, d DATE)',
     "INSERT INTO v(s, u, n, d) VALUES ('x' || char(0) || 'y', CAST(x'eda080' AS TEXT), '123456789012345678901234567890.0123456789', '99999-01-01')",
     "INSERT INTO v(s, u, n, d) VALUES (char(0), CAST(x'c0af' AS TEXT), 1e308, 253402300800)", 'DELETE FROM v WHERE id = 2')
make('utf16.sqlite', 'PRAGMA encoding = "UTF-16le"', 'PRAGMA page_size=512', 'CREATE TABLE "Café"(id INTEGER PRIMARY KEY, "名前" TEXT)',
     "INSERT INTO \"Café\" VALUES (1, '東京'), (2, CAST(x'00d8' AS TEXT))", 'CREATE TABLE b(id INTEGER PRIMARY KEY, c INTEGER REFERENCES "Café"(id))',
     'INSERT INTO b VALUES (1, 1), (2, 2)')
make('virtual.sqlite', 'PRAGMA page_size=512', 'CREATE VIRTUAL TABLE docs USING fts5(title, body)', "INSERT INTO docs VALUES ('a', 'sea ship')",
     'CREATE VIRTUAL TABLE old USING fts4(t)', "INSERT INTO old VALUES ('x')", 'CREATE VIRTUAL TABLE box USING rtree(id, x0, x1)',
     'INSERT INTO box VALUES (1, 0, 1)', 'CREATE TABLE docs_notes(id INTEGER PRIMARY KEY, note TEXT)')
PY

# Framework layouts too (Core Data with and without a model cache, a Couchbase Lite database),
# rewritten with small pages so that they stay under the fuzzer's input size.
python3 scripts/fixtures/make_coredata_fixture.py "$work/file-seeds/coredata.sqlite" >/dev/null
python3 scripts/fixtures/make_coredata_fixture.py "$work/file-seeds/coredata-plain.sqlite" --no-model-cache >/dev/null
python3 scripts/fixtures/make_dali_fixture.py "$work/dali.cblite2" >/dev/null
cp "$work/dali.cblite2/db.sqlite3" "$work/file-seeds/couchbase.sqlite"
python3 - "$work/file-seeds" <<'PY'
import sqlite3, sys, os
for name in ('coredata.sqlite', 'coredata-plain.sqlite', 'couchbase.sqlite'):
    c = sqlite3.connect(os.path.join(sys.argv[1], name))
    c.create_collation('REVID', lambda a, b: (a > b) - (a < b))
    c.execute('PRAGMA page_size=512'); c.execute('VACUUM'); c.close()
PY

status=0
run() {   # name, binary, corpus, seeds, limit, extra options; returns 1 on a finding
  local name=$1 binary=$2 corpus=$3 seeds=$4 bound=$5 found=0; shift 5
  echo "fuzzing $name ($bound -seed=$seed)"
  # SWIFT_BACKTRACE=enable=no: libFuzzer, not Swift's crash reporter, must see a trap, to save the input.
  if ! SWIFT_BACKTRACE=enable=no "$binary" "$corpus" "$seeds" "$bound" -timeout=20 -rss_limit_mb=4096 -artifact_prefix="Fuzz/findings/$name-" \
       -seed="$seed" -print_final_stats=1 "$@" 2>"$work/$name.log"; then
    found=1
    # Enough to reproduce it from CI's log alone: the message, the first frames, and the input.
    echo "FINDING in $name:"
    grep -E "Fatal error|ERROR|SUMMARY|Test unit written|^ *#[0-9]+ 0x" "$work/$name.log" | head -40
    for unit in $(grep -o "Fuzz/findings/$name-[a-z]*-[0-9a-f]*" "$work/$name.log" | sort -u); do
      echo "  input $unit ($(wc -c <"$unit") bytes), base64:"; base64 -w 0 "$unit" | head -c 12000; echo
    done
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$name.log" | sed "s/^/  $name /"
  return $found
}
# The two targets at once, one a core (each is one process on one core); their reports after.
run statements "$bin/QueryFuzz" "$work/statements" Fuzz/corpus/statements "${limit[0]}" -dict=Fuzz/statements.dict -max_len=4096 >"$work/statements.out" &
statements=$!
run files "$bin/FileFuzz" "$work/files" "$work/file-seeds" "${file_limit[0]}" -max_len=65536 >"$work/files.out" &
files=$!
wait $statements || status=1
wait $files || status=1
cat "$work/statements.out" "$work/files.out"
exit $status
