#!/bin/bash
# Runs inside a lab VM: sets up the world (hwsim radios, the home network), then each
# scenario the host's queue hands it (or, without one, each named in /lab/selected, or all of
# /lab/scenarios), each after putting the station back on the home network, and gathers the
# logs of any scenario with a failure. Prints RESULT lines and a final LAB-SUMMARY line for
# the console; the host counts from out/results.txt (written only by lib.sh's `record`) and
# trusts it only once out/finished exists. Each scenario's seconds, its clean-up included, go
# to out/timings.tsv.
set -u
export OUT=/lab/out
mkdir -p "$OUT/logs" /run/lab
: >"$OUT/results.txt"
: >/run/lab/aps
source /lab/guest/lib.sh

setup_world() {
    modprobe mac80211_hwsim radios=6 regtest=5 || return 1
    for _ in $(seq 100); do [[ -e /sys/class/net/${AP_IFACE[acc3]} ]] && break; sleep 0.1; done
    # The second station radio waits out of NetworkManager's sight (lend_second_station).
    ip netns add spare
    iw phy "$(cat "/sys/class/net/$SECOND_STATION/phy80211/name")" set netns name spare
    for netns in home acc1 acc2 acc3; do
        local iface=${AP_IFACE[$netns]}
        ip netns add "$netns"
        iw phy "$(cat "/sys/class/net/$iface/phy80211/name")" set netns name "$netns"
        ip netns exec "$netns" ip link set lo up
        ip netns exec "$netns" ip link set "$iface" up
    done
    for _ in $(seq 300); do
        [[ $(nmcli -g GENERAL.STATE device show "$STATION" 2>/dev/null) == 30* ]] && break
        sleep 0.1
    done
    start_wpa2_ap home home "$HOME_SSID" "$HOME_PASSPHRASE" || return 1
    for _ in $(seq 60); do
        nmcli -t -f SSID device wifi list ifname "$STATION" --rescan yes 2>/dev/null | grep -qx "$HOME_SSID" && break
        sleep 0.5
    done
    # Under TCG the 4-way handshake may time out: the station, slow to answer, re-associates
    # while hostapd is at message 3, and hostapd starts over (seen with two VMs sharing two
    # cores and more load beside them). The station tries again, as a person would.
    for _ in 1 2 3 4 5; do
        if nmcli -g NAME connection show | grep -qx "$HOME_SSID"; then
            nmcli --wait 60 connection up "$HOME_SSID" >/dev/null
        else
            nmcli --wait 60 device wifi connect "$HOME_SSID" password "$HOME_PASSPHRASE" ifname "$STATION" >/dev/null
        fi && wait_home 30 && return 0
        sleep 2
    done
    return 1
}

# The package under test, installed as a person would; installing must start nothing.
install_package() {
    dpkg -i /lab/accessory-setup.deb || return 1
    systemctl is-active accessory-setup >/run/lab/state-after-install 2>&1
    return 0
}

SCENARIO=world
CASE_LOG=$OUT/logs/world.log
vm=$(cat /lab/name 2>/dev/null || echo vm)
: >"$OUT/timings.tsv"
if install_package >>"$CASE_LOG" 2>&1 && setup_world >>"$CASE_LOG" 2>&1; then
    record "ready ($vm)" PASS "home network up, station on it"
else
    record "ready ($vm)" FAIL "the package could not be installed or the world set up (see logs/world.log)"
    journalctl -b --no-pager >"$OUT/logs/journal.txt" 2>&1
    echo "LAB-SUMMARY passed=0 failed=1"
    touch "$OUT/finished"
    exit 1
fi

# Settings passed from the host's environment by lab/run: names and numbers only.
if [[ -s /lab/settings ]]; then
    set -a
    source /lab/settings
    set +a
fi

# next_scenario: sets SCENARIO to the next scenario to run, or to nothing when none is left.
# With /lab/queue the host's lab/run serves them one at a time: the runner asks with
# out/ask-N and reads the answer from /lab/answer-N, so a VM whose scenarios ended early takes
# more. Otherwise those named in /lab/selected, or all of /lab/scenarios, in that order.
if [[ ! -e /lab/queue ]]; then
    if [[ -s /lab/selected ]]; then
        mapfile -t listed </lab/selected
    else
        mapfile -t listed < <(cd /lab/scenarios && ls -- *.sh | sed 's/\.sh$//' | sort)
    fi
fi
asked=0
next_scenario() {
    SCENARIO=""
    asked=$((asked + 1))
    if [[ ! -e /lab/queue ]]; then
        SCENARIO=${listed[asked - 1]:-}
        return
    fi
    : >"$OUT/ask-$asked"
    # The host answers within a second; after a minute it is taken to be gone.
    for _ in $(seq 600); do
        if [[ -e /lab/answer-$asked ]]; then
            SCENARIO=$(cat "/lab/answer-$asked")
            return
        fi
        sleep 0.1
    done
    echo "== no answer from the host's queue for a minute: no more scenarios"
}

while next_scenario && [[ -n $SCENARIO ]]; do
    file=/lab/scenarios/$SCENARIO.sh
    CASE_LOG=$OUT/logs/$SCENARIO.log
    export SCENARIO CASE_LOG
    echo "== $SCENARIO"
    started=$SECONDS
    if ! wait_home 5; then
        nmcli --wait 30 connection up "$HOME_SSID" >>"$CASE_LOG" 2>&1
        wait_home 20
    fi
    cursor=$(journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
    touch /run/lab/scenario-started
    # The benchmark (9x) measures for minutes, and for more than 15 of them on a machine that
    # runs slow (as the development machine once did); it never fails on speed, so it gets 30.
    # The others get three times their expected time (lab/timings.tsv), at least 300 s: CI's
    # machine has run scenarios 1.6 times slower than these times.
    expected=$(awk -F'\t' -v name="$SCENARIO" '$1 == name { print $2 }' /lab/timings.tsv 2>/dev/null)
    limit=$((3 * ${expected:-0}))
    ((limit >= 300)) || limit=300
    [[ $SCENARIO == 9* ]] && limit=1800
    # The soak runs as long as it is told (SOAK_SECONDS), then cleans up.
    [[ $SCENARIO == *-soak && -n ${SOAK_SECONDS:-} ]] && limit=$((SOAK_SECONDS + 600))
    timeout "$limit" bash -c "source /lab/guest/lib.sh; set -u; source '$file'" >>"$CASE_LOG" 2>&1
    status=$?
    if (($(results "" "$SCENARIO") == 0)); then
        record "(scenario)" FAIL "the scenario recorded no check"
    fi
    if ((status != 0)); then
        record "(scenario)" FAIL "the scenario exited $status (124: it ran over $limit s)"
    fi
    # Whatever the scenario left: an accessory join, its access points, profiles accessoryctl
    # made ("Accessory …"), NetworkManager checkpoints (which would refuse the next join), the
    # agent's records (a device added here is not offered again to its owner in a later
    # scenario). Each accessoryctl start costs seconds under TCG, so only when needed.
    [[ $(station_connection) == Accessory* ]] && "$ACCESSORYCTL" leave >>"$CASE_LOG" 2>&1
    if [[ -e /sys/class/net/$SECOND_STATION ]]; then
        "$ACCESSORYCTL" leave --device "$SECOND_STATION" >>"$CASE_LOG" 2>&1
        return_second_station >>"$CASE_LOG" 2>&1
    fi
    systemctl stop accessory-setup 2>/dev/null
    find /var/lib/accessory-setup -mindepth 1 -delete 2>/dev/null
    rm -rf /etc/accessory-setup/kiosk.json /etc/accessory-setup/profiles
    busctl get-property org.freedesktop.NetworkManager /org/freedesktop/NetworkManager \
        org.freedesktop.NetworkManager Checkpoints 2>/dev/null | grep -o '"[^"]*"' | tr -d '"' | while read -r path; do
        busctl call org.freedesktop.NetworkManager /org/freedesktop/NetworkManager \
            org.freedesktop.NetworkManager CheckpointDestroy o "$path" >>"$CASE_LOG" 2>&1
    done
    while read -r name _; do [[ -n $name && $name != home ]] && stop_ap "$name"; done </run/lab/aps
    nmcli -g UUID,NAME connection show | awk -F: '$2 ~ /^Accessory / { print $1 }' | while read -r uuid; do
        nmcli connection delete uuid "$uuid" >>"$CASE_LOG" 2>&1
    done
    awk -F'\t' -v scenario="$SCENARIO/" 'index($1, scenario) == 1 { print "RESULT " $1 " " $2 " " $3 }' \
        "$OUT/results.txt"
    echo "== $SCENARIO took $((SECONDS - started)) s"
    printf '%s\t%s\n' "$SCENARIO" "$((SECONDS - started))" >>"$OUT/timings.tsv"
    if [[ -e $OUT/$SCENARIO.failed ]]; then
        mkdir -p "$OUT/failed/$SCENARIO"
        cp "$CASE_LOG" "$OUT/$SCENARIO.failed" "$OUT/failed/$SCENARIO/"
        journalctl --after-cursor="$cursor" --no-pager -u NetworkManager >"$OUT/failed/$SCENARIO/NetworkManager.log" 2>&1
        journalctl --after-cursor="$cursor" --no-pager _COMM=wpa_supplicant >"$OUT/failed/$SCENARIO/wpa_supplicant.log" 2>&1
        journalctl --after-cursor="$cursor" --no-pager -u bluetooth >"$OUT/failed/$SCENARIO/bluetoothd.log" 2>&1
        # Every log written while it ran: access points', accessories', the HCI capture.
        find "$OUT/logs" -maxdepth 1 -type f -newer /run/lab/scenario-started ! -name "$SCENARIO.log" \
            ! -name btmon.snoop -exec cp {} "$OUT/failed/$SCENARIO/" \;
        if [[ $OUT/logs/btmon.snoop -nt /run/lab/scenario-started ]]; then
            btmon -r "$OUT/logs/btmon.snoop" >"$OUT/failed/$SCENARIO/btmon.txt" 2>&1
        fi
    fi
done

journalctl -b --no-pager >"$OUT/logs/journal.txt" 2>&1
echo "LAB-SUMMARY passed=$(results PASS) failed=$(results FAIL)"
touch "$OUT/finished"
