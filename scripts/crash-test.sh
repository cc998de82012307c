#!/usr/bin/env bash
# kill -9 during commits, many times: builds Loupe and runs CrashTests with LOUPE_CRASH_RUNS=N
# (default 500). Each run copies a 20,000-row store, commits 20,201 writes from a child
# `loupe repl`, kills it at a random moment, and checks PRAGMA integrity_check and that the file
# holds all of the commit or none of it; then N/3 runs of the same on a Persist store (every
# book's document rewritten by one statement, and a deletion). CI runs 24 and 8.
#
#   scripts/crash-test.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
LOUPE_CRASH_RUNS="${1:-500}" swift test --filter CrashTests 2>&1 | grep -a -E "crash test:|error|Executed"
