#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: `swift test` with the tests spread over every
# core (each test in a process of its own; tmux, crash and PostgreSQL tests keep servers, sockets
# and folders of their own), then one count line computed from the results, `N passed, N failed`
# (XCTest prints none of its own when tests run in parallel), after the eight slowest tests (the
# CI budget is 12 minutes: keep an eye on them). Extra arguments go to `swift test`
# (`scripts/test.sh --filter EditingTests`). Exits as `swift test` does.
set -uo pipefail
cd "$(dirname "$0")/.."
results=$(mktemp -d "${TMPDIR:-/tmp}/loupe-tests-XXXXXX")
trap 'rm -rf "$results"' EXIT
# Half as many workers again as cores: a tenth of the tests' time waits (on servers, terminals,
# processes they start), which another worker fills.
swift test --parallel --num-workers "$(( $(nproc) * 3 / 2 > 1 ? $(nproc) * 3 / 2 : 1 ))" --disable-swift-testing --xunit-output "$results/xunit.xml" "$@"
status=$?
if [ -f "$results/xunit.xml" ]; then
  python3 - "$results/xunit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.iter("testcase")
passed = failed = skipped = 0
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None: failed += 1
    elif case.find("skipped") is not None: skipped += 1
    else: passed += 1
slowest = sorted(root.iter("testcase"), key=lambda c: -float(c.get("time") or 0))[:8]
print("slowest: " + ", ".join(f"{c.get('classname').split('.')[-1]}.{c.get('name')} {float(c.get('time') or 0):.0f} s" for c in slowest))
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        print("failed:", case.get("classname"), case.get("name"))
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
fi
exit $status
