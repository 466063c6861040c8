#!/usr/bin/env bash
# The project's test command. Sets up the machine, then runs the parts below, timing each and
# going on after a failed one; exits 1 naming the parts that failed.
#
#   scripts/test.sh                   the whole run: what the README's test command and CI run
#   scripts/test.sh --quick           build, format lint, then the unit and integration tests (development)
#   scripts/test.sh --only PART [ARG...]
#                                     one part, with its arguments: --only lab 80 85 runs those
#                                     lab scenarios, --only fuzz 30 each fuzzer for 30 s,
#                                     --only tests --filter Join a subset of the tests
#   scripts/test.sh --list            the parts, each with its usual time and what it runs
#
# The parts, in their order: build (failing on warnings in the project's own code; in the
# whole run the thread sanitizer's build, which that part's tests use), format
# (swift format lint of the Swift sources against .swift-format), package
# (scripts/build-deb.sh), benchmark (the matcher, built beside the package), radio lab (lab/run,
# testing that package), fuzz (fuzz/run), the tests under the thread and address sanitizers,
# then the plain tests. The whole run is every part but the plain tests, which are the same
# tests the two sanitizer parts run (the package itself is tested in the lab), and it runs the
# lab's benchmark scenarios short (bench/README.md): both would cost it minutes and find
# nothing new. Nothing runs beside the lab: more load makes its emulated station miss the
# access points' handshake timeouts (lab/README.md, "Timings and parallel VMs").
set -euo pipefail
cd "$(dirname "$0")/.."

# Each part: its key for --only, its title, and what it runs.
parts=(build format package benchmark lab fuzz tsan asan tests)
declare -A title=([build]=build [format]=format [package]=package [benchmark]=benchmark [lab]="radio lab" [fuzz]=fuzz
    [tsan]="tests (thread sanitizer)" [asan]="tests (address sanitizer)" [tests]=tests)
declare -A what=([build]="swift build --build-tests (in the whole run with the thread sanitizer, for its part)"
    [format]="swift format lint --strict of the Swift sources (.swift-format)"
    [package]="scripts/build-deb.sh --quick: both packages, lintian, hardening-check, systemd-analyze security"
    [benchmark]="accessory-bench, release, in the package's build folder"
    [lab]="lab/run [SCENARIO...], one VM per core, testing the package part's .deb (benchmarks short in the whole run)"
    [fuzz]="fuzz/run [SECONDS [TARGET...]] (60 s each in the whole run, one per core at a time)"
    [tsan]="swift test --sanitize=thread [ARG...]" [asan]="swift test --sanitize=address [ARG...]"
    [tests]="swift test --disable-xctest [ARG...] (--quick; not in the whole run)")
# Each part's time in a whole run from a fresh clone on the project's 2-core machine (lab
# image cached), in seconds: the yardstick for "the part that grew" when a run passes 60 minutes.
times_file=scripts/test-times.tsv

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit "${1:-64}"
}
mode=all
only_args=()
case ${1-} in
"") ;;
--quick) mode=quick; (($# == 1)) || usage >&2 ;;
--only)
    (($# >= 2)) || usage >&2
    [[ -n ${title[$2]+set} ]] || { echo "test: no part '$2'; the parts: ${parts[*]}" >&2; exit 64; }
    mode=only only_part=$2
    only_args=("${@:3}")
    ;;
--list)
    for key in "${parts[@]}"; do
        last=$(awk -F'\t' -v k="$key" '$1 == k { printf "%dm%02ds", $2 / 60, $2 % 60 }' "$times_file")
        printf '%-10s %-8s %s\n' "$key" "${last:-?}" "${what[$key]}"
    done
    exit 0
    ;;
-h | --help) usage 0 ;;
*) usage >&2 ;;
esac

source scripts/setup.sh

failed=()
declare -A took
# Runs a part, prints how long it took, and records it as failed instead of stopping.
part() {
    local key=$1 start=$SECONDS status=0
    shift
    echo "== ${title[$key]}"
    "$@" || status=$?
    took[$key]=$((SECONDS - start))
    echo "-- ${title[$key]}: $(minutes "${took[$key]}")$( ((status)) && echo ", FAILED (exit $status)")"
    if ((status)); then failed+=("${title[$key]}"); fi
    return 0
}
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

log=$(mktemp)
# Each failed part may leave a few lines here naming what failed; they close the output, since
# a long output is often read from its end only.
digests=$(mktemp -d)
trap 'rm -rf "$log" "$digests"' EXIT
# The build: the debug one, or in the whole run the thread sanitizer's, which the tsan part
# then tests without building anything again (the whole run has no plain test run).
build() {
    local options=()
    [[ $mode == all ]] && options=(--sanitize=thread --scratch-path .build/tsan)
    swift build --build-tests ${options[@]+"${options[@]}"} 2>&1 | tee "$log" || return 1
    if grep -E "^$PWD/(Sources|Tests|bench)/.*: warning:" "$log"; then
        echo "test: the build has warnings in the project's own code (above)" >&2
        return 1
    fi
}

# swift format lint over every folder of Swift sources (and Package.swift), with the repository's
# .swift-format; --strict makes any finding fail the part. `swift format format --in-place
# --recursive --configuration .swift-format PATH...` fixes all but the lint-only rules' findings.
format_lint() {
    local paths=() path
    for path in Sources Tests bench Plugins fuzz examples Package.swift; do
        [[ -e $path ]] && paths+=("$path")
    done
    swift format lint --strict --parallel --recursive --configuration .swift-format "${paths[@]}" || {
        echo "test: swift format lint found the above (the configuration: .swift-format)" >&2
        return 1
    }
    # The standard library's Mutex waits on a futex the thread sanitizer does not follow, so
    # every access under it is reported as a race; AccessoryCore's Locked is the project's lock.
    if grep -rnE '\bMutex *[(<]' --include='*.swift' "${paths[@]}"; then
        echo "test: Synchronization's Mutex is used above; use AccessoryCore's Locked" >&2
        return 1
    fi
}

# The matcher's benchmark, built with the package's release flags in its build folder (after
# the package part, only the benchmark's own module is compiled).
benchmark() {
    scripts/release-build.sh accessory-bench >"$log" 2>&1 || { cat "$log"; return 1; }
    .build/package/release/accessory-bench
}

# The radio lab; in the whole run it tests the package the package part built and checked,
# with the benchmark scenarios short. The soak's seed (77-soak) comes from the commit, so a
# run of the same commit takes the same steps and another commit other ones; SOAK_SEED wins.
radio_lab() {
    local deb="" options=() commit
    if [[ $mode == all ]]; then
        [[ " ${failed[*]} " == *" package "* ]] || deb=$(ls .build/deb/accessory-setup_*.deb 2>/dev/null | head -n 1)
        options=(--short-benchmarks)
    fi
    commit=$(git rev-parse --short=5 HEAD 2>/dev/null || echo 0)
    SOAK_SEED=${SOAK_SEED:-$((16#$commit % 100000))} LAB_DEB=$deb lab/run ${options[@]+"${options[@]}"} "$@"
}

# The unit and integration tests built with a sanitizer in a build folder of its own. Reports
# go to files (also those of the accessoryctl processes the CLI tests start, whose standard
# error the tests capture); any report fails the part. The test output is kept in the folder.
sanitized_tests() {
    local sanitizer=$1 scratch=.build/${1:0:1}san
    shift
    local reports=$scratch/reports status=0
    rm -rf "$reports"
    mkdir -p "$reports"
    local options="log_path=$PWD/$reports/report"
    case $sanitizer in
    thread) export TSAN_OPTIONS="$options" ;;
    address)
        # ASan keeps up to 256 MiB of freed memory in quarantine by default, which alone is the
        # agent unit's MemoryMax; 32 MiB still catches use after free in the agent's short-lived
        # buffers and lets the limits tests measure what the agent holds, not what ASan holds.
        export ASAN_OPTIONS="$options:quarantine_size_mb=32:suppressions=$PWD/scripts/asan.supp"
        export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp print_suppressions=0"
        ;;
    esac
    swift test --disable-xctest --sanitize="$sanitizer" --scratch-path "$scratch" "$@" >"$scratch/test.log" 2>&1 \
        || status=$?
    unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS
    grep -E "^(✘|✔ Test run)" "$scratch/test.log" || tail -n 20 "$scratch/test.log"
    ((status == 0)) || failed_tests "$scratch/test.log" >"$digests/$sanitizer sanitizer"
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
    swift test --disable-xctest "$@" 2>&1 | tee "$log" || status=$?
    ((status == 0)) || failed_tests "$log" >"$digests/tests"
    return "$status"
}

# What a part's key runs, with the arguments --only gave it.
run() {
    local key=$1
    shift
    case $key in
    build) build ;;
    format) format_lint ;;
    package) scripts/build-deb.sh --quick ;;
    benchmark) benchmark ;;
    lab) radio_lab "$@" ;;
    fuzz) fuzz/run "${@:-60}" ;;
    tsan) sanitized_tests thread "$@" ;;
    asan) sanitized_tests address "$@" ;;
    tests) plain_tests "$@" ;;
    esac
}

case $mode in
all) selected=(build format package benchmark lab fuzz tsan asan) ;;
quick) selected=(build format tests) ;;
only) selected=("$only_part") ;;
esac
run_start=$SECONDS
for key in "${selected[@]}"; do
    part "$key" run "$key" ${only_args[@]+"${only_args[@]}"}
    # Nothing else can run without the build.
    if [[ $key == build ]] && ((${#failed[@]})); then break; fi
done
total=$((SECONDS - run_start))

summary=()
for key in "${selected[@]}"; do
    [[ -n ${took[$key]+set} ]] || continue
    summary+=("${title[$key]} $(minutes "${took[$key]}")")
done
echo "test: times: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g'); the whole run $(minutes "$total")"
# The lab's five slowest scenarios, and its wall time against one VM's.
if [[ -n ${took[lab]+set} && -s .lab-results/summary.txt ]]; then
    sed 's/^lab: /test: the radio lab: /' .lab-results/summary.txt
fi
# Over an hour of CI's 90 minutes: which parts grew most against their times in
# scripts/test-times.tsv, so the one to look at is named.
if [[ $mode == all ]] && ((total > 3600)); then
    grown=$(for key in "${selected[@]}"; do
        [[ -n ${took[$key]+set} ]] || continue
        awk -F'\t' -v k="$key" -v t="${took[$key]}" -v name="${title[$key]}" \
            '$1 == k { printf "%d\t%s: %d s against %d s\n", t - $2, name, t, $2 }' "$times_file"
    done | sort -t$'\t' -k1,1nr | head -n 2 | cut -f2)
    echo "test: WARNING: the whole run took $(minutes "$total"), over 60 minutes of CI's 90;" \
        "grown most ($times_file): $(echo "$grown" | paste -sd ';' - | sed 's/;/; /g')" >&2
fi

# What each scenario that failed a first run left in .lab-results/failed/ (at most four): the
# checks it failed, NetworkManager's last device state changes and DHCP lines, and the end of
# its own log. CI keeps only the end of this output, not .lab-results/, so a scenario that
# passed on its second run (flaky) is told here too, and its cause can be looked for.
lab_failure_digest() {
    local directory name
    for directory in $(ls -d .lab-results/failed/*/ 2>/dev/null | head -n 4); do
        name=$(basename "$directory")
        echo "test: what $name failed on its first run:" >&2
        cut -c1-240 "$directory/$name.failed" 2>/dev/null | head -n 6 | sed 's/^/    /' >&2
        if [[ -s $directory/NetworkManager.log ]]; then
            echo "  NetworkManager's last state changes and DHCP lines:" >&2
            grep -E 'state change|dhcp|DHCP|supplicant.*(state|reason)' "$directory/NetworkManager.log" |
                tail -n 10 | cut -c1-200 | sed 's/^/    /' >&2
        fi
        echo "  the end of its log:" >&2
        grep -v -e '^(Reading database' -e '^$' "$directory/$name.log" 2>/dev/null | tail -n 8 | cut -c1-200 |
            sed 's/^/    /' >&2
    done
}

# A passing run names its flaky scenarios (lab/run's summary, above); their causes too.
if [[ -n ${took[lab]+set} && " ${failed[*]} " != *" radio lab "* ]] && ls -d .lab-results/failed/*/ >/dev/null 2>&1; then
    lab_failure_digest
fi

if ((${#failed[@]})); then
    echo "test: these parts failed (above): $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" >&2
    # Repeated here, since a long output is often read from its end only.
    lab_results=.lab-results/results.txt
    if [[ " ${failed[*]} " == *" radio lab "* && -s $lab_results ]]; then
        echo "test: the lab cases that failed:" >&2
        awk -F'\t' '$2 != "PASS" { print "  " $1 " " $2 " " substr($3, 1, 160) }' "$lab_results" >&2
        lab_failure_digest
    elif [[ " ${failed[*]} " == *" radio lab "* ]]; then
        echo "test: the lab did not get to its scenarios (above)" >&2
    fi
    for digest in "$digests"/*; do
        [[ -s $digest ]] || continue
        echo "test: what failed in the tests ($(basename "$digest")):" >&2
        sed 's/^/  /' "$digest" >&2
    done
    echo "test: the lab's logs are in .lab-results/, the fuzzers' in .fuzz-results/" >&2
    exit 1
fi
