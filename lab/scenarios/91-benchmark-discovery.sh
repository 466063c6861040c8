# The benchmark of discovery (issue #13): from hostapd enabling a new access point to the
# accessory reaching the agent's picker, against nmcli rescanning in a loop; and the radio's
# scan period and duration, which bound both.
source /lab/guest/bench.sh
AGENT_PROFILES=/run/lab/bench-profiles check agent_started start_agent
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
    [[ $1 == "discovery to the picker" ]] && trace_discovery "$1" "$2" "$listed" "$4"
    return 0
}
# trace_discovery NAME SSID LISTED_MS SEEN_NS: the part from NetworkManager's listing to the
# client printing accessoryAdded, split at the agent's lines (its "discovery trace:" debug
# lines, then the record saved and the event sent), each sampled as "NAME, trace: STEP", by
# the journal's own times. The steps, in order, are kept in discovery_steps.
discovery_steps=("libnm to the agent" "matched and sent to the picker" "the picker's choice" "polkit"
    "record saved" "accessoryAdded sent" "the client printing it")
trace_discovery() {
    local times step index=0
    times=$(journalctl -u accessory-setup --since "@$(($3 / 1000 - 1))" -o short-unix --no-pager |
        awk -v ssid="$2" -v listed="$3" -v seen="$4" '
            { t = $1 * 1000000 }
            n == 0 && index($0, "discovery trace: " ssid " heard") { at[n++] = t; next }
            n == 1 && index($0, "entries sent to the picker") && index($0, ssid) { at[n++] = t; next }
            n == 2 && index($0, "the picker chose entry") { at[n++] = t; next }
            n == 3 && index($0, "polkit answered the pick") { at[n++] = t; next }
            n == 4 && / saved: authorized/ { at[n++] = t; next }
            n == 5 && / accessoryAdded / { at[n++] = t; next }
            END {
                if (n < 6) exit
                printf "%.1f\n", (at[0] - listed * 1000) / 1000
                for (i = 1; i < 6; i++) printf "%.1f\n", (at[i] - at[i - 1]) / 1000
                printf "%.1f\n", (seen / 1000 - at[5]) / 1000
            }')
    [[ -n $times ]] || return 0
    while IFS= read -r step; do
        sample "$1, trace: ${discovery_steps[index]}" "$step"
        index=$((index + 1))
    done <<<"$times"
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
# race NAME SSID FILE PID: 2 s after the contender PID started (it writes FILE when it has
# SSID), enables an open access point SSID, samples NAME, and stops both.
race() {
    sleep 2
    start_ap disc acc2 <<<"ssid=$2"
    discovered "$1" "$2" "$(now)" "$3"
    kill "$4" 2>/dev/null; wait "$4" 2>/dev/null
    stop_ap disc
}
for round in $(seq "$ROUNDS"); do
    stop_ap disc 2>/dev/null
    "$ACCESSORYCTL" pick lab.bench --select "Bench-New-$round" --timeout 120 2>/dev/null |
        while read -r line; do [[ $line == accessoryAdded* ]] && now >/run/lab/picked-at; done &
    race "discovery to the picker" "Bench-New-$round" /run/lab/picked-at $!
    (
        until nmcli -t -f SSID device wifi list ifname "$STATION" --rescan yes 2>/dev/null | grep -qx "Bench-Nmcli-$round"; do
            :
        done
        now >/run/lab/listed-at
    ) &
    race "discovery nmcli rescan loop" "Bench-Nmcli-$round" /run/lab/listed-at $!
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
for step in "${discovery_steps[@]}"; do
    report "discovery to the picker, trace: $step" ms "discovery nmcli rescan loop, from NetworkManager's listing"
done
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

check agent_stopped stop_agent
