# The benchmark of joins and start-ups (issue #13): a join by accessoryctl directly and through
# the agent against `nmcli device wifi connect` and `nmcli connection up` of a ready profile,
# each from the home network, split where NetworkManager takes the request; then the start of
# accessoryctl against nmcli's.
source /lab/guest/bench.sh
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
# The agent's own part, step by step (its trace), beside NetworkManager's floor before the request.
traced="${joins[1]}, trace"
report "$traced: client, to the call's arrival" ms "${joins[3]}, to NetworkManager's request"
for step in "${trace_steps[@]}"; do
    report "$traced: ${step//_/ }" ms "${joins[3]}, to NetworkManager's request"
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
check agent_stopped stop_agent
forget_bench_ap
