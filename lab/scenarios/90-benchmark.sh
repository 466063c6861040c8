# The benchmark of issue #13, measured alternately in one boot against nmcli on the same radios.
# Never fails on speed: each figure is recorded as a passing check with its value, and the
# table is written to $OUT/benchmark.txt, which lab/run prints. BENCH_JOIN_ROUNDS rounds of the
# joins (default 5), BENCH_ROUNDS of the other slow figures (default 3), BENCH_START_ROUNDS of
# the start-ups (default 15).
JOIN_ROUNDS=${BENCH_JOIN_ROUNDS:-5}
ROUNDS=${BENCH_ROUNDS:-3}
START_ROUNDS=${BENCH_START_ROUNDS:-15}
BENCH=$OUT/benchmark.txt
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
}
median() {
    sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'
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
AGENT_PROFILES=/run/lab/bench-profiles check agent_started start_agent
picked=$("$ACCESSORYCTL" pick lab.bench --select Bench-AP --timeout 60 2>&1)
id=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "Bench-AP") | .id' | head -n 1)
expect_match bench_accessory_picked "$id" '^[0-9a-f-]{36}$'

# Join: alternately, each from the home network and back.
joins=("join accessoryctl direct" "join accessoryctl through the agent" "join nmcli device wifi connect"
    "join nmcli connection up (ready profile)")
for round in $(seq "$JOIN_ROUNDS"); do
    back_home
    timed_join "${joins[0]}" "$ACCESSORYCTL" join --ssid Bench-AP --passphrase-file /run/lab/bench.pass --once
    "$ACCESSORYCTL" leave >/dev/null 2>&1; back_home
    timed_join "${joins[1]}" "$ACCESSORYCTL" join "$id"
    "$ACCESSORYCTL" leave >/dev/null 2>&1; back_home
    forget_bench_ap
    timed_join "${joins[2]}" nmcli device wifi connect Bench-AP password bench-pass-9090 ifname "$STATION"
    forget_bench_ap; back_home; ready_profile
    timed_join "${joins[3]}" nmcli connection up bench-ready
    forget_bench_ap
done
back_home
for join in "${joins[@]:0:2}"; do
    report "$join" ms "${joins[2]}" "${joins[3]}"
done
report "${joins[2]}" ms
report "${joins[3]}" ms
for join in "${joins[@]}"; do
    for part in "to NetworkManager's request" "from NetworkManager's request"; do
        if [[ $join == "${joins[3]}" ]]; then
            report "$join, $part" ms
        else
            report "$join, $part" ms "${joins[3]}, $part"
        fi
    done
done
for join in "${joins[@]}"; do
    line="$join: wpa_supplicant scanned first in ${scanned[$join]:-0} of ${split_joins[$join]:-0} joins"
    echo "$line" | tee -a "$BENCH"
    record "$join, scans" PASS "$line"
done

# Start-up.
for round in $(seq "$START_ROUNDS"); do
    timed "start accessoryctl --version" "$ACCESSORYCTL" --version
    timed "start nmcli -v" nmcli -v
    timed "start accessoryctl wifi list" "$ACCESSORYCTL" wifi list
    timed "start nmcli device wifi list" nmcli device wifi list
done
report "start accessoryctl --version" ms "start nmcli -v"
report "start nmcli -v" ms
report "start accessoryctl wifi list" ms "start nmcli device wifi list"
report "start nmcli device wifi list" ms

# Discovery: from hostapd enabling a new access point to the accessory reaching the picker
# (the --select picker answers the moment the entry arrives; `pick` prints accessoryAdded),
# against nmcli rescanning in a loop until the SSID shows. Both start 2 s before the access
# point, so each meets it at the same point of NetworkManager's scan rhythm (one scan per 8 s
# at most while the station is connected): the picker's first scan, like the loop's first, is
# over or under way when the access point comes up.
# Each time is split where NetworkManager lists the access point ("wifi-ap: added" in its
# debug log of the WIFI_SCAN domain, on for these rounds only): the part the radio and
# NetworkManager's scans take, and the part that is the picker's (or nmcli's) own.
log_level=$(nmcli -g LEVEL general logging) log_domains=$(nmcli -g DOMAINS general logging)
nmcli general logging level "$log_level" domains "$log_domains,WIFI_SCAN:DEBUG"
# split_at_listing NAME SSID ENABLED_NS SEEN_NS: samples "NAME, NetworkManager listing it" and
# "NAME, from NetworkManager's listing", from the journal line of NetworkManager adding SSID.
split_at_listing() {
    local listed
    journalctl --sync
    listed=$(journalctl -u NetworkManager --since "@$(($3 / 1000000000 - 1))" -o short-unix --no-pager |
        awk -v ssid="\"$2\"" 'index($0, "wifi-ap: added") && index($0, ssid) { printf "%.0f\n", $1 * 1000; exit }')
    [[ $listed =~ ^[0-9]+$ ]] || return 0
    sample "$1, NetworkManager listing it" $((listed - $3 / 1000000))
    sample "$1, from NetworkManager's listing" $(($4 / 1000000 - listed))
}
# discovered NAME SSID ENABLED_NS FILE: waits up to 60 s for FILE, where the contender writes
# the time it had SSID (an access point enabled at ENABLED_NS), samples NAME and its split, and
# removes FILE.
discovered() {
    for _ in $(seq 240); do [[ -s $4 ]] && break; sleep 0.25; done
    if [[ -s $4 ]]; then
        sample "$1" $((($(cat "$4") - $3) / 1000000))
        split_at_listing "$1" "$2" "$3" "$(cat "$4")"
    fi
    rm -f "$4"
}
for round in $(seq "$ROUNDS"); do
    stop_ap disc 2>/dev/null
    "$ACCESSORYCTL" pick lab.bench --select "Bench-New-$round" --timeout 120 2>/dev/null |
        while read -r line; do [[ $line == accessoryAdded* ]] && now >/run/lab/picked-at; done &
    picker=$!
    sleep 2
    start_ap disc acc2 <<CONF
ssid=Bench-New-$round
CONF
    discovered "discovery to the picker" "Bench-New-$round" "$(now)" /run/lab/picked-at
    kill "$picker" 2>/dev/null; wait "$picker" 2>/dev/null
    stop_ap disc
    (
        until nmcli -t -f SSID device wifi list ifname "$STATION" --rescan yes 2>/dev/null | grep -qx "Bench-Nmcli-$round"; do
            :
        done
        now >/run/lab/listed-at
    ) &
    loop=$!
    sleep 2
    start_ap disc acc2 <<CONF
ssid=Bench-Nmcli-$round
CONF
    discovered "discovery nmcli rescan loop" "Bench-Nmcli-$round" "$(now)" /run/lab/listed-at
    kill "$loop" 2>/dev/null; wait "$loop" 2>/dev/null
    stop_ap disc
done
nmcli general logging level "$log_level" domains "$log_domains"
# The radio's scan period: how often scans end when they are asked for back to back. And one
# scan's duration while the station is connected: a rescan asked for when none has started for
# longer than NetworkManager's limit, so that it starts at once.
nmcli device wifi list ifname "$STATION" --rescan yes >/dev/null 2>&1
for round in $(seq "$ROUNDS"); do
    timed "scan period" nmcli device wifi list ifname "$STATION" --rescan yes
done
for round in $(seq "$ROUNDS"); do
    sleep 9
    timed "scan duration (connected)" nmcli device wifi list ifname "$STATION" --rescan yes
done
report "discovery to the picker" ms "discovery nmcli rescan loop" "scan period"
report "discovery to the picker, NetworkManager listing it" ms
report "discovery to the picker, from NetworkManager's listing" ms
report "discovery nmcli rescan loop" ms "scan period"
report "discovery nmcli rescan loop, NetworkManager listing it" ms
report "discovery nmcli rescan loop, from NetworkManager's listing" ms
report "scan period" ms
report "scan duration (connected)" ms
discovered=$(med "discovery to the picker") period=$(med "scan period")
if [[ $discovered =~ ^[0-9]+$ && $period =~ ^[0-9]+$ ]]; then
    line="discovery to the picker beyond one scan period: $((discovered - period)) ms"
    echo "$line" | tee -a "$BENCH"
    record "discovery beyond one scan period" PASS "$line"
fi

# The agent at rest: resident memory and context switches over a minute, with no session and
# with one open session (a client holding it open). Every thread's switches count: a thread
# started during the minute with all of its own, one that ended with none.
# switches PID: "TID SWITCHES NAME" for each thread of PID, sorted by TID (for join).
switches() {
    local status tid
    for status in /proc/"$1"/task/*/status; do
        tid=${status%/status}
        awk -v tid="${tid##*/}" '/^Name:/ { name = $2 } /ctxt_switches/ { n += $2 } END { print tid, n, name }' \
            "$status" 2>/dev/null
    done | LC_ALL=C sort -k1,1
}
# Which threads woke during each minute at rest, printed after the figures.
declare -A woken
rest() {
    # A method call (a property read is not one): the agent is running, and its idle time
    # (--idle-exit 120) starts now, so the minute fits in it. The minute starts 2 s later,
    # once the agent has seen the command leave the bus.
    "$ACCESSORYCTL" list >/dev/null 2>&1
    sleep 2
    local pid before after
    pid=$(systemctl show -p MainPID --value accessory-setup)
    before=$(switches "$pid")
    sleep 60
    if [[ ! -r /proc/$pid/status ]]; then
        record "agent at rest $1" FAIL "the agent ($pid) ended during the minute"
        return
    fi
    after=$(switches "$pid")
    local deltas
    deltas=$(LC_ALL=C join -a 2 -e 0 -o 2.3,1.2,2.2 <(echo "$before") <(echo "$after"))
    sample "agent at rest $1: wake-ups per minute" "$(awk '{ n += $3 - $2 } END { print n + 0 }' <<<"$deltas")"
    woken[$1]=$(awk '$3 > $2 { printf "%s%s %d", sep, $1, $3 - $2; sep = ", " } END { if (!sep) printf "none" }' <<<"$deltas")
    sample "agent at rest $1: resident kB" "$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")"
    sample "agent at rest $1: of which anonymous kB" "$(awk '/RssAnon/ { print $2 }' "/proc/$pid/status")"
}
rest "with no session"
python3 - <<'PY' &
import dbus, time
bus = dbus.SystemBus()
manager = dbus.Interface(bus.get_object("io.accessorysetup", "/io/accessorysetup"), "io.accessorysetup.Manager1")
session = manager.OpenSession("lab.bench", dbus.Dictionary({}, signature="sv"))
dbus.Interface(bus.get_object("io.accessorysetup", session), "io.accessorysetup.Session1").Activate()
time.sleep(75)
PY
holder=$!
sleep 3
rest "with one session"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# Then nothing at all: the unit's --idle-exit (120 s) ends the agent, and the next call brings
# it back by D-Bus activation. Timed: the exit after the last session ended, and a call that
# activates the agent against a call to the running one.
left=$(now)
for _ in $(seq 200); do [[ $(systemctl show -p MainPID --value accessory-setup) == 0 ]] && break; sleep 1; done
if [[ $(systemctl show -p MainPID --value accessory-setup) == 0 ]]; then
    sample "agent idle: exited after the last session ended" "$(elapsed_ms "$left")"
    timed "accessoryctl list, starting the agent" "$ACCESSORYCTL" list
    timed "accessoryctl list, agent running" "$ACCESSORYCTL" list
else
    record agent_idle_exit FAIL "the agent was still running 200 s after its last session ended"
fi
ROUNDS=1
report "agent at rest with no session: resident kB" kB
report "agent at rest with no session: of which anonymous kB" kB
report "agent at rest with no session: wake-ups per minute" ""
report "agent at rest with one session: resident kB" kB
report "agent at rest with one session: of which anonymous kB" kB
report "agent at rest with one session: wake-ups per minute" ""
for state in "with no session" "with one session"; do
    echo "agent at rest $state: threads woken: ${woken[$state]:-not measured}" | tee -a "$BENCH"
done
report "agent idle: exited after the last session ended" ms
report "accessoryctl list, starting the agent" ms "accessoryctl list, agent running"
report "accessoryctl list, agent running" ms
ls -l /usr/bin/accessoryctl /usr/libexec/accessory-setup/accessory-agent | awk '{ print "binary " $9 ": " $5 " bytes" }' | tee -a "$BENCH"
check agent_stopped stop_agent
forget_bench_ap
