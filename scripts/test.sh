#!/usr/bin/env bash
# Sets up the machine, builds everything with warnings treated as failures in the project's
# own code, runs the matching benchmark and the radio lab (lab/run), then every unit and
# integration test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== build"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$PWD/(Sources|Tests|bench)/.*: warning:" "$log"; then
    echo "test: the build has warnings in the project's own code (above)" >&2
    exit 1
fi

echo "== benchmark (release build)"
quiet_build -c release --product accessory-bench
"$(swift build -c release --show-bin-path)/accessory-bench"

echo "== radio lab"
# The lab prints its own "N passed, N failed"; the unit and integration tests run last so
# that their runner's summary closes the output.
lab_status=0
lab/run || lab_status=$?

echo "== tests"
swift test --disable-xctest
if ((lab_status)); then
    echo "test: the radio lab failed (above); its logs are in .lab-results/" >&2
    exit "$lab_status"
fi
