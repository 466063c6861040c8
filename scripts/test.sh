#!/usr/bin/env bash
# Sets up the machine, builds everything with warnings treated as failures in the project's
# own code, runs the matching benchmark, builds and checks the Debian package
# (scripts/build-deb.sh), the radio lab (lab/run), the fuzzers (fuzz/run), the
# unit and integration tests under the thread and address sanitizers, then every unit and
# integration test. Each part is timed; the script fails if any part failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

failed=()
times=()
# Runs a part, prints how long it took, and records it as failed instead of stopping.
part() {
    local name=$1 start=$SECONDS status=0
    shift
    echo "== $name"
    "$@" || status=$?
    local elapsed=$((SECONDS - start))
    times+=("$name $((elapsed / 60))m$((elapsed % 60))s")
    echo "-- $name: $((elapsed / 60))m$((elapsed % 60))s$( ((status)) && echo ", FAILED (exit $status)")"
    if ((status)); then failed+=("$name"); fi
    return 0
}

log=$(mktemp)
# Each failed part may leave a few lines here naming what failed; they close the output, since
# a long output is often read from its end only.
digests=$(mktemp -d)
trap 'rm -rf "$log" "$digests"' EXIT
build() {
    swift build --build-tests 2>&1 | tee "$log" || return 1
    if grep -E "^$PWD/(Sources|Tests|bench)/.*: warning:" "$log"; then
        echo "test: the build has warnings in the project's own code (above)" >&2
        return 1
    fi
}

benchmark() {
    quiet_build -c release --product accessory-bench || return 1
    "$(swift build -c release --show-bin-path)/accessory-bench"
}

# The unit and integration tests built with a sanitizer in a build folder of its own. Reports
# go to files (also those of the accessoryctl processes the CLI tests start, whose standard
# error the tests capture); any report fails the part. The test output is kept in the folder.
sanitized_tests() {
    local sanitizer=$1 scratch=.build/${1:0:1}san
    local reports=$scratch/reports status=0
    rm -rf "$reports"
    mkdir -p "$reports"
    local options="log_path=$PWD/$reports/report"
    case $sanitizer in
    thread) export TSAN_OPTIONS="$options" ;;
    address)
        export ASAN_OPTIONS="$options"
        export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp print_suppressions=0"
        ;;
    esac
    swift test --disable-xctest --sanitize="$sanitizer" --scratch-path "$scratch" >"$scratch/test.log" 2>&1 \
        || status=$?
    unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS
    grep -E "^(✘|✔ Test run)" "$scratch/test.log" || tail -n 20 "$scratch/test.log"
    failed_tests "$scratch/test.log" >"$digests/$sanitizer sanitizer"
    if compgen -G "$reports/report.*" >/dev/null; then
        for report in "$reports"/report.*; do
            head -n 60 "$report"
            echo "(the whole report: $report)"
            # The report's headline, its summary and the project's own frames.
            {
                echo "$report:"
                grep -m1 -E "^(WARNING|ERROR): .*Sanitizer" "$report" || true
                grep -m1 "^SUMMARY:" "$report" || true
                grep -m6 -E "$PWD/(Sources|Tests)/" "$report" || true
            } | cut -c1-200 >>"$digests/$sanitizer sanitizer"
        done
        echo "test: the $sanitizer sanitizer reported the faults above (all output: $scratch/test.log)" >&2
        return 1
    fi
    if ((status)); then
        echo "test: the tests under the $sanitizer sanitizer failed (output: $scratch/test.log)" >&2
    fi
    return "$status"
}

# The failing tests of a test log and the first lines of what each failure said.
failed_tests() {
    grep -E "^(✘|[[:space:]]*↳|.*Test run with)" "$1" | grep -v "^✔" | head -n 30 | cut -c1-200 || true
    grep -q "Test run with" "$1" || { echo "the test run did not finish; its last lines:"; tail -n 8 "$1" | cut -c1-200; }
}

plain_tests() {
    local status=0
    swift test --disable-xctest 2>&1 | tee "$log" || status=$?
    ((status == 0)) || failed_tests "$log" >"$digests/tests"
    return "$status"
}

part build build
if ((${#failed[@]})); then exit 1; fi
part benchmark benchmark
part package scripts/build-deb.sh --quick
# The lab prints its own "N passed, N failed"; the unit and integration tests run last so
# that their runner's summary closes the output.
part "radio lab" lab/run
part fuzz fuzz/run 60
part "tests (thread sanitizer)" sanitized_tests thread
part "tests (address sanitizer)" sanitized_tests address
part tests plain_tests

echo "test: times: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"
if ((${#failed[@]})); then
    echo "test: these parts failed (above): $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" >&2
    # Repeated here, since a long output is often read from its end only.
    lab_results=.lab-results/share/out/results.txt
    if [[ " ${failed[*]} " == *" radio lab "* && -f $lab_results ]]; then
        echo "test: the lab cases that failed:" >&2
        awk -F'\t' '$2 != "PASS" { print "  " $1 " " $2 " " substr($3, 1, 160) }' "$lab_results" >&2
    elif [[ " ${failed[*]} " == *" radio lab "* ]]; then
        echo "test: the lab's VM did not finish its scenarios (.lab-results/console.log)" >&2
    fi
    for digest in "$digests"/*; do
        [[ -s $digest ]] || continue
        echo "test: what failed in the tests ($(basename "$digest")):" >&2
        sed 's/^/  /' "$digest" >&2
    done
    echo "test: the lab's logs are in .lab-results/, the fuzzers' in .fuzz-results/" >&2
    exit 1
fi
