# The benchmark's common part, sourced by the benchmark scenarios (9x-benchmark-*), each of
# which measures alternately against nmcli on the same radios. Never fails on speed: each
# figure is recorded as a passing check with its value, and each scenario's table is written
# to $OUT/benchmark-SCENARIO.txt, which lab/run prints. BENCH_JOIN_ROUNDS rounds of the joins
# (default 5), BENCH_ROUNDS of the other slow figures (default 3), BENCH_START_ROUNDS of the
# start-ups (default 15); BENCH_REST_SECONDS of each spell at rest (default 60) and
# BENCH_IDLE_EXIT, the agent's idle exit in seconds (default: the unit's own). Starts the
# access point Bench-AP (acc1) and writes the profile lab.bench into /run/lab/bench-profiles
# for start_agent.
JOIN_ROUNDS=${BENCH_JOIN_ROUNDS:-5}
ROUNDS=${BENCH_ROUNDS:-3}
START_ROUNDS=${BENCH_START_ROUNDS:-15}
REST_SECONDS=${BENCH_REST_SECONDS:-60}
IDLE_EXIT=${BENCH_IDLE_EXIT:-}
BENCH=$OUT/benchmark-$SCENARIO.txt
: >"$BENCH"
# The time in ns, from bash's own clock: no process is started to read it.
now() { echo "${EPOCHREALTIME//[!0-9]/}000"; }
elapsed_ms() { echo $((($(now) - $1) / 1000000)); }
# timed NAME COMMAND...: runs COMMAND, its output discarded, and when it succeeds samples its
# wall time in ms, read from bash's own clock: no process is started inside the interval.
timed() {
    local name=$1 start
    shift
    start=${EPOCHREALTIME//[!0-9]/}
    "$@" >/dev/null 2>&1 || return
    sample "$name" $(((${EPOCHREALTIME//[!0-9]/} - start) / 1000))
}
# timed_join NAME COMMAND...: `timed`, and the join split where NetworkManager takes its
# activation request (its audit line, "connection-activate" or "connection-add-activate"): the
# command's own part before it (the process's start, its NetworkManager client or the agent's
# work, a checkpoint) and the part after it (NetworkManager's activation, the command's end).
# Also counts the joins in which wpa_supplicant scanned after the request (with its last
# results older than 5 s it scans every channel first, which takes seconds): the spread of the
# joins' times is mostly whether it did.
declare -A scanned split_joins
timed_join() {
    local name=$1 start end split
    shift
    start=${EPOCHREALTIME//[!0-9]/}
    "$@" >/dev/null 2>&1 || return
    end=${EPOCHREALTIME//[!0-9]/}
    sample "$name" $(((end - start) / 1000))
    journalctl --sync
    split=$(journalctl -u NetworkManager --since "@$((start / 1000000 - 1))" -o short-unix --no-pager |
        awk -v s="$start" -v e="$end" '{ t = $1 * 1000000 } t < s || t > e { next }
            !r && /audit: op="connection-(add-)?activate"/ { r = t }
            r && /supplicant interface state: [a-z_0-9]+ -> scanning/ { sc = 1 }
            END { if (r) printf "%d %d %d", (r - s) / 1000, (e - r) / 1000, sc }')
    [[ $split =~ ^([0-9]+)\ ([0-9]+)\ ([01])$ ]] || return 0
    sample "$name, to NetworkManager's request" "${BASH_REMATCH[1]}"
    sample "$name, from NetworkManager's request" "${BASH_REMATCH[2]}"
    scanned[$name]=$((${scanned[$name]:-0} + BASH_REMATCH[3])) split_joins[$name]=$((${split_joins[$name]:-0} + 1))
    trace_join "$name" "$start" "$end"
}
# trace_join NAME START END: the agent's trace of a join it made between START and END (µs
# since 1970; its debug line "join trace: arrived T us; STEP MS ms, ...; total MS ms; joined"),
# each step sampled as "NAME, trace: STEP", and the client's own part before the agent took
# the call as "NAME, trace: client, to the call's arrival". Nothing for a join not through the
# agent. The steps, in order, are kept in trace_steps.
trace_steps=()
trace_join() {
    local name=$1 start=$2 end=$3 line arrived step
    line=$(journalctl -u accessory-setup --since "@$((start / 1000000 - 1))" -o cat --no-pager 2>/dev/null |
        grep -m1 "^join trace: arrived .*; joined$") || return 0
    [[ $line =~ ^join\ trace:\ arrived\ ([0-9]+)\ us\;\ (.*)\;\ total ]] || return 0
    arrived=${BASH_REMATCH[1]}
    ((arrived >= start && arrived <= end)) || return 0
    sample "$name, trace: client, to the call's arrival" $(((arrived - start) / 1000))
    sample_trace_steps "$name, trace" "${BASH_REMATCH[2]}" trace_steps
}
# sample_trace_steps NAME STEPS ARRAY: each "STEP MS ms" of a trace line's STEPS (", " between
# them) sampled as "NAME: STEP", and each step's name, spaces as "_", added to the array named
# ARRAY unless it holds it already.
sample_trace_steps() {
    local -n names=$3
    local step
    while IFS= read -r step; do
        [[ $step =~ ^(.+)\ ([0-9]+\.[0-9])\ ms$ ]] || continue
        sample "$1: ${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
        [[ " ${names[*]} " == *" ${BASH_REMATCH[1]// /_} "* ]] || names+=("${BASH_REMATCH[1]// /_}")
    done < <(sed 's/, /\n/g' <<<"$2")
}
median() {
    sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]
        else { x = a[NR / 2]; y = a[NR / 2 + 1]
            if (x == int(x) && y == int(y)) print int((x + y) / 2); else printf "%.1f\n", (x + y) / 2 } }'
}
declare -A samples
sample() { samples[$1]+="$2 "; }
med() { tr ' ' '\n' <<<"${samples[$1]:-}" | grep . | median; }
# report NAME UNIT [BASELINE...]: the median of NAME, and its ratio to each baseline's median.
report() {
    local name=$1 unit=$2 value line base
    shift 2
    value=$(med "$name")
    line="$name: $value $unit"
    for base in "$@"; do
        line+=", $(awk -v a="$value" -v b="$(med "$base")" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else printf "-" }')x $base"
    done
    echo "$line" | tee -a "$BENCH"
    record "$name" PASS "$line"
}
back_home() { nmcli connection up "$HOME_SSID" >/dev/null 2>&1; wait_home 30; }

start_wpa2_ap bench acc1 Bench-AP bench-pass-9090
printf 'bench-pass-9090\n' >/run/lab/bench.pass
chmod 600 /run/lab/bench.pass
mkdir -p /run/lab/bench-profiles
cat >/run/lab/bench-profiles/lab.bench.json <<'JSON'
{
  "schemaVersion": 1, "id": "lab.bench", "vendor": "Radio lab", "supports": ["wifi"],
  "hotspot": { "security": "wpa2Personal", "passphrase": { "source": "fixed", "value": "bench-pass-9090" } },
  "handoff": "joinHotspot",
  "items": [ { "name": "Bench accessory", "descriptor": { "ssidPrefix": "Bench-" } } ]
}
JSON
# forget_bench_ap: deletes every profile of Bench-AP, so that `nmcli device wifi connect` makes
# one of its own, as on a machine that never joined it (with one there, nmcli updates and
# activates that one instead: a `connection up` under another name).
forget_bench_ap() {
    local uuid
    for uuid in $(nmcli -g UUID,TYPE connection show | awk -F: '$2 == "802-11-wireless" { print $1 }'); do
        [[ $(nmcli -g 802-11-wireless.ssid connection show "$uuid" 2>/dev/null) == Bench-AP ]] &&
            nmcli connection delete "$uuid" >/dev/null 2>&1
    done
    return 0
}
# ready_profile: NetworkManager's floor, a profile of Bench-AP made before the clock starts.
ready_profile() {
    nmcli connection add type wifi ifname "$STATION" con-name bench-ready ssid Bench-AP autoconnect no \
        wifi-sec.key-mgmt wpa-psk wifi-sec.psk bench-pass-9090 ipv4.never-default yes >/dev/null
}
