# The benchmark of the agent itself (issue #13): at rest, with no session and with one; its
# exit when idle and its start by D-Bus activation against a call to the running agent; the
# binaries' sizes.
source /lab/guest/bench.sh
# With BENCH_IDLE_EXIT the unit's --idle-exit is replaced for this scenario (a drop-in under
# /run, removed at its end): the test command's short run does not wait the unit's 120 s.
exec_start=$(systemctl cat accessory-setup | grep '^ExecStart=')
idle_exit=$(sed -n 's/.*--idle-exit \([0-9]*\).*/\1/p' <<<"$exec_start")
if [[ -n $IDLE_EXIT ]]; then
    mkdir -p /run/systemd/system/accessory-setup.service.d
    printf '[Service]\nExecStart=\n%s\n' "${exec_start/--idle-exit $idle_exit/--idle-exit $IDLE_EXIT}" \
        >/run/systemd/system/accessory-setup.service.d/bench-idle-exit.conf
    systemctl daemon-reload
    trap 'rm -f /run/systemd/system/accessory-setup.service.d/bench-idle-exit.conf; systemctl daemon-reload' EXIT
    idle_exit=$IDLE_EXIT
fi
((REST_SECONDS + 5 < idle_exit)) ||
    record bench_settings FAIL "BENCH_REST_SECONDS ($REST_SECONDS) must end 5 s before the agent's idle exit ($idle_exit s)"
AGENT_PROFILES=/run/lab/bench-profiles check agent_started start_agent
# The agent at rest: resident memory and context switches over BENCH_REST_SECONDS (a minute),
# with no session and with one open session (a client holding it open). Every thread's
# switches count: a thread started during the spell with all of its own, one that ended with
# none. Wake-ups are given per minute.
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
    # starts now. The spell starts 2 s later, once the agent has seen the command leave the
    # bus, and must end within the idle time.
    "$ACCESSORYCTL" list >/dev/null 2>&1
    sleep 2
    local pid before after
    pid=$(systemctl show -p MainPID --value accessory-setup)
    before=$(switches "$pid")
    sleep "$REST_SECONDS"
    if [[ ! -r /proc/$pid/status ]]; then
        record "agent at rest $1" FAIL "the agent ($pid) ended during its $REST_SECONDS s at rest"
        return
    fi
    after=$(switches "$pid")
    local deltas
    deltas=$(LC_ALL=C join -a 2 -e 0 -o 2.3,1.2,2.2 <(echo "$before") <(echo "$after"))
    sample "agent at rest $1: wake-ups per minute" "$(awk -v s="$REST_SECONDS" '{ n += $3 - $2 } END { printf "%d", n * 60 / s }' <<<"$deltas")"
    woken[$1]=$(awk '$3 > $2 { printf "%s%s %d", sep, $1, $3 - $2; sep = ", " } END { if (!sep) printf "none" }' <<<"$deltas")
    sample "agent at rest $1: resident kB" "$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")"
    sample "agent at rest $1: of which anonymous kB" "$(awk '/RssAnon/ { print $2 }' "/proc/$pid/status")"
}
rest "with no session"
python3 - "$((REST_SECONDS + 15))" <<'PY' &
import dbus, sys, time
bus = dbus.SystemBus()
manager = dbus.Interface(bus.get_object("io.accessorysetup", "/io/accessorysetup"), "io.accessorysetup.Manager1")
session = manager.OpenSession("lab.bench", dbus.Dictionary({}, signature="sv"))
dbus.Interface(bus.get_object("io.accessorysetup", session), "io.accessorysetup.Session1").Activate()
time.sleep(int(sys.argv[1]))
PY
holder=$!
sleep 3
rest "with one session"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# trace_start START END: where the time of a call that started the agent went (µs since 1970):
# the client's part to dbus-daemon's activation request, systemd's to the unit's start, the
# unit's way to the agent's process (systemd's fork of it), the process's way to the agent's
# main (the unit's sandbox set up in it, the exec, the libraries' loading: `--version` outside
# the unit, sampled apart, is the last two), the agent's own steps to its bus name (its debug
# line "start trace: began T us; STEP MS ms, ...; total MS ms; serving"), and from there to the
# reply. Each sampled as "NAME, trace: STEP".
started=()
trace_start() {
    local start=$1 end=$2 name="accessoryctl list, starting the agent, trace" marks line began forked
    forked=$(process_started "$(systemctl show -p MainPID --value accessory-setup)")
    journalctl --sync
    marks=$(journalctl --since "@$((start / 1000000 - 1))" -o short-unix --no-pager |
        awk -v s="$start" -v e="$end" '{ t = $1 * 1000000 } t < s || t > e { next }
            !a && /Activating via systemd: service name=.io\.accessorysetup/ { a = t }
            !u && /Starting (accessory-setup\.service|Accessory setup agent)/ { u = t }
            END { if (a && u) printf "%d %d", (a - s) / 1000, (u - s) / 1000 }')
    line=$(journalctl -u accessory-setup --since "@$((start / 1000000 - 1))" -o cat --no-pager |
        grep -m1 "^start trace: began .*; serving$")
    [[ $marks =~ ^[0-9]+\ [0-9]+$ ]] || return 0
    [[ $line =~ ^start\ trace:\ began\ ([0-9]+)\ us\;\ (.*)\;\ total\ ([0-9]+)\.[0-9]\ ms ]] || return 0
    began=$(((BASH_REMATCH[1] - start) / 1000))
    local steps=${BASH_REMATCH[2]} total=${BASH_REMATCH[3]}
    sample "$name: client, to the activation request" "${marks% *}"
    sample "$name: systemd, to the unit's start" $((${marks#* } - ${marks% *}))
    started=("client,_to_the_activation_request" "systemd,_to_the_unit's_start")
    if [[ $forked =~ ^[0-9]+$ ]]; then
        forked=$(((forked - start) / 1000))
        sample "$name: the unit's start to its process" $((forked - ${marks#* }))
        sample "$name: the process's start to the agent's main" $((began - forked))
        started+=("the_unit's_start_to_its_process" "the_process's_start_to_the_agent's_main")
    else
        sample "$name: the unit's start to the agent's main" $((began - ${marks#* }))
        started+=("the_unit's_start_to_the_agent's_main")
    fi
    sample_trace_steps "$name" "$steps" started
    sample "$name: the name owned to the reply" $(((end - start) / 1000 - began - total))
    started+=(the_name_owned_to_the_reply)
}

# process_started PID: when the process started (its fork), in µs since 1970, from its start
# time in /proc (clock ticks since boot, 10 ms apart) and the time since boot read with the clock.
process_started() {
    local stat uptime now ticks
    [[ $1 =~ ^[1-9][0-9]*$ && -r /proc/$1/stat ]] || return 0
    stat=$(</proc/"$1"/stat)
    now=${EPOCHREALTIME//[!0-9]/}
    uptime=$(</proc/uptime)
    ticks=$(getconf CLK_TCK)
    read -ra stat <<<"${stat##*) }"
    # Field 22 of the line, the 20th after the command's name.
    awk -v now="$now" -v up="${uptime%% *}" -v st="${stat[19]}" -v hz="$ticks" \
        'BEGIN { printf "%.0f", now - (up - st / hz) * 1000000 }'
}

# Then nothing at all: the agent's --idle-exit ends it, and the next call brings it back by
# D-Bus activation. Timed: the exit after the last session ended, and a call that activates
# the agent against a call to the running one; the first traced step by step.
left=$(now)
for _ in $(seq "$((idle_exit + 80))"); do [[ $(systemctl show -p MainPID --value accessory-setup) == 0 ]] && break; sleep 1; done
if [[ $(systemctl show -p MainPID --value accessory-setup) == 0 ]]; then
    sample "agent idle: exited after the last session ended" "$(elapsed_ms "$left")"
    cold=${EPOCHREALTIME//[!0-9]/}
    timed "accessoryctl list, starting the agent" "$ACCESSORYCTL" list
    trace_start "$cold" "${EPOCHREALTIME//[!0-9]/}"
    timed "accessoryctl list, agent running" "$ACCESSORYCTL" list
    for _ in $(seq "$START_ROUNDS"); do
        timed "accessory-agent --version, outside the unit" /usr/libexec/accessory-setup/accessory-agent --version
    done
else
    record agent_idle_exit FAIL "the agent was still running $((idle_exit + 80)) s after its last session ended (--idle-exit $idle_exit)"
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
for step in "${started[@]}"; do report "accessoryctl list, starting the agent, trace: ${step//_/ }" ms; done
report "accessoryctl list, agent running" ms
report "accessory-agent --version, outside the unit" ms
# On demand (BENCH_SANDBOX=1): what each of the unit's sandbox settings costs a start. The
# agent's --version run in a transient unit with none of them, with all of them, and with each
# one alone (a setting named twice, both lines), BENCH_ROUNDS times; each against none.
if ((${BENCH_SANDBOX:-0})); then
    unit_file=$(systemctl show -p FragmentPath --value accessory-setup)
    # systemd-run (252) takes no "localhost" or "link-local" in IPAddressAllow=, unit files do:
    # their prefixes instead.
    mapfile -t sandbox < <(sed -n '/^CapabilityBoundingSet=/,/^SystemCallErrorNumber=/p' "$unit_file" |
        grep -E '^[A-Za-z]+=' | sed -E '/^IPAddress/{s#localhost#127.0.0.0/8 ::1/128#; s#link-local#169.254.0.0/16 fe80::/64#}')
    mapfile -t sandbox_keys < <(printf '%s\n' "${sandbox[@]}" | cut -d= -f1 | awk '!seen[$0]++')
    # A setting systemd-run refuses for a transient unit is named with systemd-run's words.
    in_unit() {
        systemd-run --wait --quiet --collect "$@" /usr/libexec/accessory-setup/accessory-agent --version \
            2>/run/lab/sandbox.err && return
        echo "sandbox: ${*: -1}: refused: $(tr '\n' ' ' </run/lab/sandbox.err)" | tee -a "$BENCH"
        return 1
    }
    settings_of() {
        local setting
        for setting in "${sandbox[@]}"; do [[ -z $1 || ${setting%%=*} == "$1" ]] && printf -- '-p\n%s\n' "$setting"; done
    }
    in_unit >/dev/null 2>&1 # the first transient unit's own costs, unmeasured
    for _ in $(seq "${BENCH_ROUNDS:-3}"); do
        timed "sandbox: none" in_unit
        mapfile -t properties < <(settings_of "")
        timed "sandbox: the unit's" in_unit "${properties[@]}"
        for key in "${sandbox_keys[@]}"; do
            mapfile -t properties < <(settings_of "$key")
            timed "sandbox: $key" in_unit "${properties[@]}"
        done
    done
    report "sandbox: none" ms
    report "sandbox: the unit's" ms "sandbox: none"
    for key in "${sandbox_keys[@]}"; do report "sandbox: $key" ms "sandbox: none"; done
fi
ls -l /usr/bin/accessoryctl /usr/libexec/accessory-setup/accessory-agent | awk '{ print "binary " $9 ": " $5 " bytes" }' | tee -a "$BENCH"
check agent_stopped stop_agent
forget_bench_ap
