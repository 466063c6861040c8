# Fixtures for the radio lab's scenarios, sourced inside the VM. A scenario is a bash file
# in lab/scenarios/ that starts the access points it needs, drives accessoryctl, and
# records each check with `check`, `expect` or `expect_match` (a scenario that records none
# fails). Only these write the results; what a scenario prints goes to its log.
#
# The world (set up by runner.sh before the first scenario):
#   netns "home": wlan0, the home network "HomeNet" (WPA2, 10.9.0.1), which the station is
#                 connected to before each scenario
#   netns "acc1": wlan1, accessory radio 1 (192.168.4.1 when an AP runs on it)
#   netns "acc2": wlan2, accessory radio 2 (192.168.5.1)
#   wlan3: the station, the only radio NetworkManager manages
#   netns "spare": wlan4, a second station radio out of NetworkManager's sight until a
#                  scenario lends it (lend_second_station); the runner takes it back after;
#                  or a third accessory radio (192.168.6.1) for a scenario that runs an AP on it
#   netns "acc3": wlan5, accessory radio 4 (192.168.7.1), for four accessories at once
# Each accessory AP runs hostapd, a DHCP server and an HTTP "setup page" at http://<ip>/info.txt
# that answers with the AP's name.

STATION=wlan3
HOME_SSID=HomeNet
HOME_PASSPHRASE=home-network-pass
ACCESSORYCTL=/usr/bin/accessoryctl
OUT=${OUT:-/lab/out}

declare -A AP_IFACE=([home]=wlan0 [acc1]=wlan1 [acc2]=wlan2 [spare]=wlan4 [acc3]=wlan5)
declare -A AP_SUBNET=([home]=10.9.0 [acc1]=192.168.4 [acc2]=192.168.5 [spare]=192.168.6 [acc3]=192.168.7)

note() { echo "[lab ${SCENARIO:-}] $*"; }

# check NAME COMMAND...: passes when COMMAND exits 0.
check() {
    local name=$1 started=$SECONDS
    shift
    if "$@" >>"$CASE_LOG" 2>&1; then
        record "$name" PASS "($((SECONDS - started)) s)"
    else
        record "$name" FAIL "command failed after $((SECONDS - started)) s: $*"
    fi
}

# expect NAME ACTUAL EXPECTED: passes when the two strings are equal.
expect() {
    if [[ $2 == "$3" ]]; then
        record "$1" PASS "$2"
    else
        record "$1" FAIL "got '$2', expected '$3'"
    fi
}

# expect_match NAME ACTUAL REGEX
expect_match() {
    if [[ $2 =~ $3 ]]; then
        record "$1" PASS "$2"
    else
        record "$1" FAIL "got '$2', expected to match /$3/"
    fi
}

# in_own_group COMMAND...: COMMAND (a shell function too) in the background, in a process group
# of its own as a terminal's job is, whose id is its pid, in $!. Signal it as a group
# (kill -SIGNAL -- -PID): a function in the background runs in a subshell, whose children a
# signal to its pid alone never reaches, and a script's jobs ignore SIGINT.
in_own_group() {
    set -m
    "$@" &
    set +m
}

# not COMMAND...: succeeds when COMMAND fails.
not() { ! "$@"; }

# eventually SECONDS COMMAND...: runs the command every half second until it succeeds, for up
# to SECONDS.
eventually() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

# record NAME PASS|FAIL DETAIL: the one writer of $OUT/results.txt, which is all the runner
# counts: one line per check, "scenario/name<TAB>PASS or FAIL<TAB>detail". Tabs and line
# breaks in a field become spaces, so nothing a check quotes can add a line or a verdict.
record() {
    local name=${1//[$'\t\n\r']/ } detail=${3//[$'\t\n\r']/ } verdict=FAIL
    [[ $2 == PASS ]] && verdict=PASS
    printf '%s/%s\t%s\t%s\n' "$SCENARIO" "$name" "$verdict" "$detail" >>"$OUT/results.txt"
    [[ $verdict == PASS ]] || echo "$name: $detail" >>"$OUT/$SCENARIO.failed"
}

# results VERDICT [SCENARIO]: how many checks (of SCENARIO) have that verdict (PASS, FAIL, or
# "" for any).
results() {
    awk -F'\t' -v verdict="$1" -v scenario="${2:+$2/}" \
        '(verdict == "" || $2 == verdict) && index($1, scenario) == 1 { n++ } END { print n + 0 }' "$OUT/results.txt"
}

# start_ap NAME NETNS: starts hostapd on the netns's radio with the configuration on
# standard input (ssid=..., security lines), plus DHCP and the HTTP setup page.
start_ap() {
    local name=$1 netns=$2 iface=${AP_IFACE[$2]} subnet=${AP_SUBNET[$2]}
    local conf=/run/lab/hostapd-$name.conf channel=6
    [[ $netns == home ]] && channel=1
    mkdir -p /run/lab/www-$name
    echo "setup-page-of-$name" >/run/lab/www-$name/info.txt
    # The emulated CPU answers the 4-way handshake far slower than a real station: hostapd's
    # four tries of each EAPOL-Key message (100 ms, then 1 s apart) are sometimes all spent,
    # and the join then fails as a wrong passphrase would. Eight tries leave it time. And
    # message 3/4 is sent once, with a longer wait for 4/4 (hostapd's KRACK workaround): sent
    # again 100 ms later to a station still busy with the first, it crossed that station's
    # late 4/4, which hostapd then dropped, and the handshake started over until reason 15.
    {
        printf 'interface=%s\ndriver=nl80211\nctrl_interface=/run/lab/hostapd-%s\nhw_mode=g\nchannel=%s\n' \
            "$iface" "$name" "$channel"
        printf 'wpa_pairwise_update_count=8\nwpa_disable_eapol_key_retries=1\n'
        cat
    } >"$conf"
    ip netns exec "$netns" ip addr flush dev "$iface"
    ip netns exec "$netns" ip addr add "$subnet.1/24" dev "$iface"
    # hostapd runs ahead of the rest of the VM (nice -10): mac80211's station gives an
    # association 200 ms, and when the busy emulated CPU let hostapd answer later, the station
    # asked again; the late TX status of the first answer then arrived after the 4-way
    # handshake had completed, hostapd took it for a new association and started the
    # handshake over, and the join failed with reason 15 (docs/flakes.md, lab 76 and 93).
    ip netns exec "$netns" nice -n -10 hostapd -B -P "/run/lab/hostapd-$name.pid" -f "$OUT/logs/hostapd-$name.log" -d "$conf" \
        >/dev/null || return 1
    start_dhcp "$name" "$netns" || return 1
    ip netns exec "$netns" python3 -m http.server 80 --bind "$subnet.1" --directory "/run/lab/www-$name" \
        >/dev/null 2>&1 &
    echo $! >"/run/lab/http-$name.pid"
    echo "$name $netns" >>/run/lab/aps
}

# start_wpa2_ap NAME NETNS SSID PASSPHRASE: an access point with WPA2-Personal (CCMP).
start_wpa2_ap() {
    start_ap "$1" "$2" <<<"$(printf 'ssid=%s\nwpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\nwpa_passphrase=%s' "$3" "$4")"
}

stop_ap() {
    local name=$1 netns iface
    netns=$(awk -v n="$name" '$1 == n { print $2 }' /run/lab/aps)
    for kind in hostapd dnsmasq http; do
        [[ -f /run/lab/$kind-$name.pid ]] && kill "$(cat "/run/lab/$kind-$name.pid")" 2>/dev/null
        rm -f "/run/lab/$kind-$name.pid"
    done
    sed -i "/^$name /d" /run/lab/aps
    [[ -n $netns && -n ${AP_IFACE[$netns]:-} ]] && ip netns exec "$netns" ip addr flush dev "${AP_IFACE[$netns]}"
    sleep 0.3
}


# start_esp_device SECURITY [NETNS [POP_FILE]]: the ESP-IDF provisioning device
# (lab/accessories/esp_prov_device.py) on port 80 of the access point of NETNS (default acc1),
# in place of the setup page there, with the proof of possession in POP_FILE (default
# /run/lab/prov.pop) and the home network's passphrase in /run/lab/home.pass, which it checks
# what it is sent against; once joined it reports the address .42 of the home network and runs
# $ESP_ON_JOIN if set; with $ESP_CONNECTING_SECONDS it takes that long to join, from the first
# time it is told to. Its log is $OUT/logs/esp-device-NETNS-SECURITY.log. One started before in
# NETNS is stopped first.
start_esp_device() {
    local security=$1 netns=${2:-acc1} pop=${3:-/run/lab/prov.pop}
    local pidfile=/run/lab/esp-device-$netns.pid log=$OUT/logs/esp-device-$netns-$1.log
    [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
    # protocomm's HTTP server takes port 80, where start_ap put the setup page.
    local ap
    ap=$(awk -v n="$netns" '$2 == n { print $1 }' /run/lab/aps | tail -1)
    [[ -n $ap && -f /run/lab/http-$ap.pid ]] && kill "$(cat "/run/lab/http-$ap.pid")" 2>/dev/null
    ip netns exec "$netns" python3 -u /lab/accessories/esp_prov_device.py --address "${AP_SUBNET[$netns]}.1" \
        --port 80 --security "$security" --pop-file "$pop" --home-ssid "$HOME_SSID" \
        --home-passphrase-file /run/lab/home.pass --connecting-polls 2 --ip4-address "${AP_SUBNET[home]}.42" \
        ${ESP_ON_JOIN:+--on-join "$ESP_ON_JOIN"} ${ESP_CONNECTING_SECONDS:+--connecting-seconds "$ESP_CONNECTING_SECONDS"} \
        >"$log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 100); do grep -q READY "$log" && return 0; sleep 0.1; done
    return 1
}

# start_esp_accessory NAME NETNS SSID [POP_FILE]: an ESP-IDF device behind its own open setup
# hotspot SSID in NETNS, brought up as a real one comes up: its provisioning server answers
# first, then its hotspot beacons. A batch discovering meanwhile can then never find the hotspot
# before the device behind it answers (start_ap before start_esp_device left that window, and a
# loaded VM once took 8 s to start the device). The server's socket stays bound through
# start_ap's flush of the address.
start_esp_accessory() {
    local name=$1 netns=$2 ssid=$3 pop=${4:-/run/lab/prov.pop}
    ip netns exec "$netns" ip addr flush dev "${AP_IFACE[$netns]}"
    ip netns exec "$netns" ip addr add "${AP_SUBNET[$netns]}.1/24" dev "${AP_IFACE[$netns]}"
    start_esp_device 1 "$netns" "$pop" || return 1
    start_ap "$name" "$netns" <<<"ssid=$ssid"
}

# start_vendor_accessory NAME NETNS VENDOR [SIMULATOR OPTIONS...]: a device of VENDOR (shelly-gen1,
# shelly-gen2, tasmota, wled, esphome) behind its setup hotspot, whose hostapd lines come on
# standard input: the vendor's setup API (lab/accessories/vendor_setup_device.py) answers on
# port 80 of NETNS's access point first, then the hotspot beacons. It knows the home network's
# passphrase from /run/lab/home.pass and, once joined, says it is at .43 of the home network
# where its API does, and runs $VENDOR_ON_JOIN if set. Its log is
# $OUT/logs/vendor-NAME.log.
start_vendor_accessory() {
    local name=$1 netns=$2 vendor=$3
    shift 3
    local conf log=$OUT/logs/vendor-$name.log
    conf=$(cat)
    ip netns exec "$netns" ip addr flush dev "${AP_IFACE[$netns]}"
    ip netns exec "$netns" ip addr add "${AP_SUBNET[$netns]}.1/24" dev "${AP_IFACE[$netns]}"
    ip netns exec "$netns" python3 -u /lab/accessories/vendor_setup_device.py --vendor "$vendor" \
        --address "${AP_SUBNET[$netns]}.1" --port 80 --home-ssid "$HOME_SSID" \
        --home-passphrase-file /run/lab/home.pass --home-ip "${AP_SUBNET[home]}.43" \
        ${VENDOR_ON_JOIN:+--on-join "$VENDOR_ON_JOIN"} "$@" >"$log" 2>&1 &
    echo $! >"/run/lab/vendor-$name.pid"
    for _ in $(seq 100); do grep -q READY "$log" && break; sleep 0.1; done
    grep -q READY "$log" || return 1
    vendor_hotspot "$name" "$netns" <<<"$conf"
}

# vendor_hotspot NAME NETNS <<<HOSTAPD_LINES: the hotspot of the vendor device NAME beacons
# (again, after stop_ap NAME), in front of the device already listening on port 80.
vendor_hotspot() {
    start_ap "$1" "$2" || return 1
    # start_ap's setup page cannot take port 80 from the device; its pid goes with the device.
    [[ -f /run/lab/http-$1.pid ]] && kill "$(cat "/run/lab/http-$1.pid")" 2>/dev/null
    rm -f "/run/lab/http-$1.pid"
}

# The hostapd lines of a WLED's setup hotspot: WLED-AP, WPA2 with the published wled1234.
WLED_AP=$'ssid=WLED-AP\nwpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\nwpa_passphrase=wled1234'

# stop_vendor_accessory NAME: its setup API and its hotspot.
stop_vendor_accessory() {
    [[ -f /run/lab/vendor-$1.pid ]] && kill "$(cat "/run/lab/vendor-$1.pid")" 2>/dev/null
    rm -f "/run/lab/vendor-$1.pid"
    stop_ap "$1"
}

# app_wled_profile APP: the shipped WLED profile installed under APP's own id (APP lowercased,
# then ".wled"), naming APP (its product image, a path relative to the shipped profile, left
# out), and the /.flatpak-info of APP's sandbox (in_sandbox) in /run/lab.
app_wled_profile() {
    local app=$1 profile
    profile=$(tr '[:upper:]' '[:lower:]' <<<"$app").wled
    mkdir -p /etc/accessory-setup/profiles
    jq --arg id "$profile" --arg app "$app" '.id = $id | .applications = [$app] | .items |= map(del(.productImage))' \
        /usr/share/accessory-setup/profiles/wled.json >"/etc/accessory-setup/profiles/$profile.json"
    printf '[Application]\nname=%s\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n\n[Instance]\ninstance-id=%s\n' \
        "$app" "$BASHPID$SECONDS" >"/run/lab/$app.flatpak-info"
}

# in_sandbox USER APP COMMAND...: COMMAND as USER inside APP's sandbox, as flatpak runs an app:
# bubblewrap with a root of its own, /usr and the system bus bound in, and APP's
# /.flatpak-info (app_wled_profile).
in_sandbox() {
    local user=$1 app=$2
    shift 2
    setpriv --reuid="$user" --regid="$user" --clear-groups bwrap --unshare-user --unshare-pid --unshare-ipc \
        --die-with-parent --tmpfs / --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
        --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --ro-bind /etc /etc --proc /proc --dev /dev \
        --tmpfs /tmp --ro-bind /run/dbus /run/dbus --symlink ../run /var/run \
        --ro-bind "/run/lab/$app.flatpak-info" /.flatpak-info \
        --setenv DBUS_SYSTEM_BUS_ADDRESS unix:path=/run/dbus/system_bus_socket --setenv HOME /tmp --chdir /tmp "$@"
}

# remove_records PROFILE...: every record of these profiles removed, with whatever
# NetworkManager profiles were made for it (accessoryctl remove), each a check.
remove_records() {
    local removed=0 id
    for id in $("$ACCESSORYCTL" list --json | jq -r --args '.[] | select(.profile | IN($ARGS.positional[])) | .id' "$@"); do
        removed=$((removed + 1))
        check "record_removed_$removed" "$ACCESSORYCTL" remove "$id"
    done
}

# kiosk_picks_wled: the agent started with a kiosk policy that picks ge.wled.softap for root, a
# WLED's hotspot (WLED-AP, WPA2 with wled1234) on acc1, seen by the station, and picked (the
# checks agent_owns_its_name, wled_visible, pick_added); WLED_ID is then the record's id.
kiosk_picks_wled() {
    local picked
    check agent_owns_its_name start_agent '{
  "schemaVersion": 1,
  "policies": [
    { "profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch" }
  ]
}'
    start_wpa2_ap wled acc1 WLED-AP wled1234
    check wled_visible wait_visible WLED-AP
    picked=$("$ACCESSORYCTL" pick ge.wled.softap --timeout 60 2>&1)
    expect_match pick_added "$picked" 'accessoryAdded WLED controller'
    WLED_ID=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "WLED-AP") | .id' | head -n 1)
}

# profile_located PROFILE ADDRESS...: the records of PROFILE are located at these addresses
# (accessoryctl list --json), one each.
profile_located() {
    local profile=$1
    shift
    "$ACCESSORYCTL" list --json 2>/dev/null | jq -e --arg profile "$profile" --args \
        '[.[] | select(.profile == $profile) | .location.addresses[0]?] | sort == ($ARGS.positional | sort)' \
        "$@" >/dev/null
}

# start_home_mdns: an mDNS responder on the home network, as a device there would run: Avahi
# in netns home on its access point's interface, on a D-Bus bus of its own (the socket
# /run/lab/home-bus), so that avahi-publish (publish_home) announces what lives there.
start_home_mdns() {
    [[ -f /run/lab/home-avahi.pid ]] && return 0
    mkdir -p /run/lab/home-mdns
    cat >/run/lab/home-mdns/bus.conf <<'BUS'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=/run/lab/home-bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
<allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
BUS
    cat >/run/lab/home-mdns/avahi-daemon.conf <<CONF
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=${AP_IFACE[home]}
enable-dbus=yes
[publish]
publish-hinfo=no
publish-workstation=no
CONF
    mkdir -p /run/avahi-daemon
    dbus-daemon --config-file=/run/lab/home-mdns/bus.conf --fork --print-pid >/run/lab/home-bus.pid || return 1
    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus ip netns exec home unshare --mount --propagation private \
        sh -c 'mount -t tmpfs tmpfs /run/avahi-daemon && exec avahi-daemon -f /run/lab/home-mdns/avahi-daemon.conf \
            --no-drop-root --no-chroot --no-rlimits' >"$OUT/logs/home-avahi.log" 2>&1 &
    echo $! >/run/lab/home-avahi.pid
    for _ in $(seq 100); do grep -q "Server startup complete" "$OUT/logs/home-avahi.log" && return 0; sleep 0.1; done
    return 1
}

# publish_home NAME TYPE PORT HOST ADDRESS [TXT...]: announces HOST at ADDRESS and service NAME
# of TYPE on it in the home network, in the background, for the rest of the run.
publish_home() {
    local name=$1 type=$2 port=$3 host=$4 address=$5
    shift 5
    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus avahi-publish -a -R "$host" "$address" \
        >>"$OUT/logs/home-publish.log" 2>&1 &
    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus avahi-publish -s -H "$host" "$name" "$type" "$port" "$@" \
        >>"$OUT/logs/home-publish.log" 2>&1 &
}

# stop_esp_device [NETNS]: stops the device start_esp_device started in NETNS (default acc1).
stop_esp_device() {
    local pidfile=/run/lab/esp-device-${1:-acc1}.pid
    [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
    rm -f "$pidfile"
}

# pane_run COMMAND...: runs the command on a 100x30 terminal of a tmux server of its own (a
# new one each time: one just killed may still hold its socket), then prints "[exit N]".
panes=0
pane_run() {
    [[ -n ${PANE:-} ]] && tmux -L "$PANE" kill-server 2>/dev/null
    PANE=lab$((++panes))
    tmux -L "$PANE" -u new-session -d -x 100 -y 30 \
        "env LANG=C.UTF-8 $(printf '%q ' "$@"); echo \"[exit \$?]\"; sleep 600"
}
pane() { tmux -L "$PANE" capture-pane -p -J; }
keys() { tmux -L "$PANE" send-keys "$@"; }
# pane_wait TEXT [SECONDS]: until the screen shows TEXT; the screen goes to the case's log.
pane_wait() {
    local deadline=$((SECONDS + ${2:-60}))
    while ((SECONDS < deadline)); do
        pane | grep -qF -- "$1" && return 0
        sleep 0.2
    done
    { echo "the screen did not show '$1':"; pane; } >>"$CASE_LOG"
    return 1
}

SECOND_STATION=wlan4

# lend_second_station: moves wlan4 from netns "spare" into NetworkManager's, and waits until
# NetworkManager has it disconnected and ready.
lend_second_station() {
    local phy
    phy=$(ip netns exec spare cat "/sys/class/net/$SECOND_STATION/phy80211/name") || return 1
    ip netns exec spare iw phy "$phy" set netns 1 || return 1
    for _ in $(seq 300); do
        [[ $(nmcli -g GENERAL.STATE device show "$SECOND_STATION" 2>/dev/null) == 30* ]] && return 0
        sleep 0.1
    done
    return 1
}

# return_second_station: takes wlan4 back into netns "spare", if NetworkManager has it.
return_second_station() {
    [[ -e /sys/class/net/$SECOND_STATION ]] || return 0
    iw phy "$(cat "/sys/class/net/$SECOND_STATION/phy80211/name")" set netns name spare
}

# Sets a radio's transmit power (mBm), which hwsim turns into the signal others receive.
set_tx_power() {
    ip netns exec "$1" iw dev "${AP_IFACE[$1]}" set txpower fixed "$2"
}

# The profile NetworkManager has active on the station, or nothing.
station_connection() { nmcli -g GENERAL.CONNECTION device show "$STATION" 2>/dev/null; }

station_ipv4() { ip -4 -o addr show dev "$STATION" | awk '{ print $4 }' | cut -d/ -f1; }

# Waits up to $1 seconds (default 20) until the station is on the home network with an address.
#
# When the VM stalls (TCG, two VMs on two cores), the home access point can give up on a 4-way
# handshake whose last message came late: the station is "disconnected during association",
# NetworkManager, with no secret agent to ask, fails the home network for "no-secrets" and
# never tries it again by itself. That is the emulated radio's hiccup after the home network
# was brought back, not a restore that did not happen: then the home network is activated
# again (twice at most), and the case log says so. A failure up to 30 s before the wait counts:
# after `systemctl restart NetworkManager` and `nm-online -s` (the soak, 77), NetworkManager's
# startup, and with it the wait, ends only once its autoconnect of the home network failed.
wait_home() {
    local deadline=$((SECONDS + ${1:-20})) since retried=0
    since=$(($(date +%s) - 30))
    while ((SECONDS < deadline)); do
        [[ $(station_connection) == "$HOME_SSID" && $(station_ipv4) == 10.9.0.* ]] && return 0
        # Twice at most, as the product's own restore tries again (a loaded CI run once lost
        # the handshake of the activation after a restart as well).
        if ((retried < 2)) && home_handshake_failed "$since"; then
            retried=$((retried + 1))
            # What failed before this activation is in the journal up to this second.
            since=$(($(date +%s) + 2))
            echo "wait_home: the home network's 4-way handshake failed in the emulated radio; activating it again ($retried of 2)" >>"$CASE_LOG"
            nmcli --wait 0 connection up "$HOME_SSID" >/dev/null 2>&1
        fi
        sleep 0.2
    done
    return 1
}

# home_handshake_failed SINCE: whether, since SINCE (seconds since 1970), NetworkManager
# brought the home network up but lost it in its handshake and failed it for want of secrets.
home_handshake_failed() {
    local log
    log=$(journalctl -u NetworkManager --no-pager -o cat --since "@$(($1 - 1))" 2>/dev/null)
    grep -q "disconnected during association" <<<"$log" &&
        grep -q "Activation: failed for connection '$HOME_SSID'" <<<"$log"
}

# Waits until a scan by NetworkManager lists the SSID (accessoryctl wifi list --rescan).
wait_visible() {
    local ssid=$1 deadline=$((SECONDS + ${2:-30}))
    while ((SECONDS < deadline)); do
        "$ACCESSORYCTL" wifi list --rescan --json 2>>"$CASE_LOG" |
            jq -e --arg ssid "$ssid" 'any(.accessPoints[]; .ssid == $ssid)' >/dev/null && return 0
        sleep 0.5
    done
    return 1
}

# The setup page of the accessory at $1 (its IP), as the station fetches it.
setup_page() { curl -s --max-time 5 "http://$1/info.txt"; }

# How many profiles accessoryctl made are stored.
our_profiles() { "$ACCESSORYCTL" configured --json | jq length; }

# Whether NetworkManager holds no profile named like ours ("Accessory …"), whoever made it.
no_accessory_profile() { ! nmcli -g NAME connection show | grep -q '^Accessory '; }

# How many checkpoints NetworkManager holds (its Checkpoints property; nothing if it is down).
checkpoints() {
    busctl get-property org.freedesktop.NetworkManager /org/freedesktop/NetworkManager \
        org.freedesktop.NetworkManager Checkpoints 2>/dev/null | awk '{ print $2 }'
}

# The end of every fault scenario: within $1 seconds (default 20) the station is back on the
# home network, and neither an accessory profile nor a checkpoint is left.
end_checks() {
    check back_home wait_home "${1:-20}"
    expect no_profile_of_ours "$(our_profiles)" 0
    check no_accessory_profile_in_networkmanager no_accessory_profile
    expect no_checkpoint "$(checkpoints)" 0
}

# expect_one_error NAME OUTPUT REGEX: OUTPUT has exactly one "accessoryctl: error: " line and
# it matches REGEX.
expect_one_error() {
    local errors
    errors=$(grep '^accessoryctl: error: ' <<<"$2")
    if [[ $(grep -c '^accessoryctl: error: ' <<<"$2") != 1 ]]; then
        record "$1" FAIL "expected one error line, got: $2"
    else
        expect_match "$1" "$errors" "$3"
    fi
}

# start_dhcp NAME NETNS: the DHCP server of access point NAME (again, after stop_dhcp).
start_dhcp() {
    local name=$1 netns=$2 iface=${AP_IFACE[$2]} subnet=${AP_SUBNET[$2]}
    ip netns exec "$netns" dnsmasq --conf-file=/dev/null --user=root --interface="$iface" --bind-interfaces \
        --except-interface=lo --port=0 --no-ping --dhcp-range="$subnet.10,$subnet.100,255.255.255.0,1h" \
        --dhcp-authoritative --dhcp-leasefile="/run/lab/dnsmasq-$name.leases" --pid-file="/run/lab/dnsmasq-$name.pid" \
        --log-dhcp --log-facility="$OUT/logs/dnsmasq-$name.log"
}

# stops the DHCP server of access point $1, so a join to it stalls while getting an address.
stop_dhcp() {
    [[ -f /run/lab/dnsmasq-$1.pid ]] && kill "$(cat "/run/lab/dnsmasq-$1.pid")" 2>/dev/null
    rm -f "/run/lab/dnsmasq-$1.pid"
}

# start_join OUTPUT ARGS...: accessoryctl join ARGS in the background, its output in OUTPUT and
# its pid in $JOIN_PID. SIGINT keeps its default action, as for a command typed in a terminal.
start_join() {
    local output=$1
    shift
    env --default-signal=INT "$ACCESSORYCTL" join "$@" >"$output" 2>&1 &
    JOIN_PID=$!
}

# finish_join SECONDS: waits up to SECONDS for the background join to end and sets
# $JOIN_STATUS to its exit status (255 when it did not end in time; it is then killed).
finish_join() {
    local deadline=$((SECONDS + $1))
    while kill -0 "$JOIN_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$JOIN_PID" 2>/dev/null; then
        kill -KILL "$JOIN_PID"
        wait "$JOIN_PID"
        JOIN_STATUS=255
    else
        wait "$JOIN_PID"
        JOIN_STATUS=$?
    fi
}

# stall_join_until_connecting SSID [SECONDS]: waits (default 60 s) until NetworkManager shows
# the station getting an address on "Accessory SSID" (state 70, ip-config). With the access
# point's DHCP server stopped (stop_dhcp), a join stays there until something else happens.
stall_join_until_connecting() {
    local deadline=$((SECONDS + ${2:-60}))
    while ((SECONDS < deadline)); do
        if [[ $(station_connection) == "Accessory $1" &&
            $(nmcli -g GENERAL.STATE device show "$STATION" 2>/dev/null) == 70* ]]; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# Whether the default route goes through the accessory (it must never).
default_route_via_accessory() { ip route show default | grep -q '192\.168\.[45]\.1'; }

# Two virtual Bluetooth LE controllers under one bluetoothd: hci0 for the accessory
# (peripheral), hci1 for accessoryctl (central).
start_bluetooth() {
    adapter_address hci0 >/dev/null 2>&1 && adapter_address hci1 >/dev/null 2>&1 && return 0
    modprobe hci_vhci || return 1
    # Every HCI command and event of the lab's controllers, from their creation on: a failed
    # scenario's logs then say what each controller was told and what it sent (runner.sh
    # decodes it). fresh_bluetooth stops it, so each capture is of one scenario.
    if ! { [[ -f /run/lab/btmon.pid ]] && kill -0 "$(cat /run/lab/btmon.pid)" 2>/dev/null; }; then
        btmon -w "$OUT/logs/btmon.snoop" >/dev/null 2>&1 &
        echo $! >/run/lab/btmon.pid
    fi
    systemctl start bluetooth.service
    # Under a loaded TCG host an emulated controller now and then misses its HCI Reset timeout
    # ("Opcode 0x0c03 failed: -110") and never registers; a new btvirt then gets two new ones.
    local attempt
    for attempt in 1 2 3; do
        btvirt -L -l2 >>"$OUT/logs/btvirt.log" 2>&1 &
        echo $! >/run/lab/btvirt.pid
        # Both adapters registered with bluetoothd (introspecting a path succeeds before that).
        for _ in $(seq 150); do
            adapter_address hci0 >/dev/null 2>&1 && adapter_address hci1 >/dev/null 2>&1 && return 0
            sleep 0.1
        done
        echo "btvirt attempt $attempt: the adapters did not come up" >>"$OUT/logs/btvirt.log"
        kill "$(cat /run/lab/btvirt.pid)" 2>/dev/null
        sleep 2
    done
    return 1
}

# advertise_until_heard ADAPTER ADDRESS PIDFILE: in the background, until ADAPTER has heard
# the BLE peripheral at ADDRESS (the process in PIDFILE, one of lab/guest/bluez_gatt.py's), the
# peripheral advertises again every 2 s while ADAPTER is discovering, as a real device's
# advertisements repeat: btvirt's emulated controllers send one report per switch-on, which the
# kernel may drop while its discovery starts (bluez_gatt.py says where). Never once heard: a
# scanner connecting then finds it advertising. Ends by itself after 120 s; its pid in
# /run/lab/advertiser.pid.
advertise_until_heard() {
    local adapter=$1 device peripheral
    device=/org/bluez/$adapter/dev_${2//:/_}
    peripheral=$(cat "$3") || return 1
    (
        for _ in $(seq 60); do
            busctl --system get-property org.bluez "$device" org.bluez.Device1 RSSI >/dev/null 2>&1 && exit 0
            [[ $(busctl --system get-property org.bluez "/org/bluez/$adapter" org.bluez.Adapter1 Discovering 2>/dev/null) == "b true" ]] &&
                { kill -USR1 "$peripheral" 2>/dev/null || exit 0; }
            sleep 2
        done
    ) &
    echo $! >/run/lab/advertiser.pid
}

# ble_listing ADAPTER ADDRESS PIDFILE SECONDS: `accessoryctl ble list --json` of a scan of
# SECONDS on ADAPTER, with the peripheral at ADDRESS (PIDFILE) advertising until heard.
ble_listing() {
    advertise_until_heard "$1" "$2" "$3"
    "$ACCESSORYCTL" ble list --adapter "$1" --timeout "$4" --json
    kill "$(cat /run/lab/advertiser.pid)" 2>/dev/null
}

# hear_ble_device ADAPTER ADDRESS PIDFILE: whether ADAPTER hears that peripheral in 10 s.
hear_ble_device() {
    ble_listing "$1" "$2" "$3" 10 2>>"$CASE_LOG" | grep -q "\"$2\""
}

# The Bluetooth address of a controller.
adapter_address() {
    local reply
    reply=$(busctl --system get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Address) || return 1
    cut -d'"' -f2 <<<"$reply"
}

# start_improv_accessory REPORT [ADAPTER [URL]]: the Improv peripheral on ADAPTER (hci0), writing
# what it receives to REPORT, and reporting URL once provisioned (its own default otherwise).
start_improv_accessory() {
    python3 -u /lab/guest/improv_peripheral.py --adapter "${2:-hci0}" --report "$1" ${3:+--redirect "$3"} \
        >"$OUT/logs/improv-peripheral.log" 2>&1 &
    echo $! >/run/lab/improv.pid
    for _ in $(seq 200); do grep -q READY "$OUT/logs/improv-peripheral.log" && return 0; sleep 0.1; done
    return 1
}

stop_improv_accessory() { [[ -f /run/lab/improv.pid ]] && kill "$(cat /run/lab/improv.pid)" 2>/dev/null; rm -f /run/lab/improv.pid; }

# allow_polkit USER ACTION: polkit gives USER the ACTION without asking (a rule in
# 50-accessory-lab.rules, polkitd restarted to read it); `allow_polkit` alone removes the rule.
allow_polkit() {
    local rules=/etc/polkit-1/rules.d/50-accessory-lab.rules
    if (($# == 0)); then
        rm -f "$rules"
    else
        printf 'polkit.addRule(function (action, subject) {\n    if (subject.user == "%s" && action.id == "%s") {\n        return polkit.Result.YES;\n    }\n});\n' \
            "$1" "$2" >"$rules"
    fi
    systemctl restart polkit
}

# start_agent [KIOSK_JSON]: the installed agent, with the kiosk policy given (or none) and the
# profiles of $AGENT_PROFILES added to the administrator's directory, started the way clients
# start it: by D-Bus activation. AGENT_PID is its pid; its log is the unit's journal.
start_agent() {
    if [[ -n ${1:-} ]]; then printf '%s\n' "$1" >/etc/accessory-setup/kiosk.json; else rm -f /etc/accessory-setup/kiosk.json; fi
    if [[ -n ${AGENT_PROFILES:-} ]]; then mkdir -p /etc/accessory-setup/profiles && cp "$AGENT_PROFILES"/*.json /etc/accessory-setup/profiles/; fi
    systemctl stop accessory-setup 2>/dev/null
    busctl get-property io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 Version >/dev/null || return 1
    AGENT_PID=$(systemctl show -p MainPID --value accessory-setup)
    [[ -n $AGENT_PID && $AGENT_PID != 0 ]]
}

# stop_agent: stops the unit (SIGTERM), fails unless it ends cleanly, and keeps its journal in
# $OUT/logs/agent.log.
stop_agent() {
    systemctl stop accessory-setup || return 1
    journalctl -u accessory-setup --no-pager -o short-precise >"$OUT/logs/agent.log" 2>&1
    [[ $(systemctl show -p Result --value accessory-setup) == success ]]
}

# start_gopro_camera [ADAPTER]: the GoPro-style camera (lab/guest/gopro_peripheral.py) on
# ADAPTER (hci0), "GoPro 1234", its hotspot GP24501234 on acc1 started and stopped when it is
# told to (passphrase gopro-ap-pass-4242, never printed); what it does goes to
# /run/lab/gopro-report.txt.
GOPRO_PASSPHRASE=gopro-ap-pass-4242
start_gopro_camera() {
    local adapter=${1:-hci0}
    printf '%s\n' "$GOPRO_PASSPHRASE" >/run/lab/gopro.pass
    chmod 600 /run/lab/gopro.pass
    rm -f /run/lab/gopro-report.txt
    python3 -u /lab/guest/gopro_peripheral.py --adapter "$adapter" --name "GoPro 1234" --ssid GP24501234 \
        --passphrase-file /run/lab/gopro.pass --report /run/lab/gopro-report.txt --pairing-agent \
        --on-command 'source /lab/guest/lib.sh && start_wpa2_ap gopro acc1 "$GOPRO_SSID" "$(cat "$GOPRO_PASSPHRASE_FILE")"' \
        --off-command 'source /lab/guest/lib.sh && stop_ap gopro' >"$OUT/logs/gopro-peripheral.log" 2>&1 &
    echo $! >/run/lab/gopro.pid
    for _ in $(seq 200); do grep -q READY "$OUT/logs/gopro-peripheral.log" && return 0; sleep 0.1; done
    return 1
}

stop_gopro_camera() { [[ -f /run/lab/gopro.pid ]] && kill "$(cat /run/lab/gopro.pid)" 2>/dev/null; rm -f /run/lab/gopro.pid; }

# gopro_reported LINE: the camera's report has LINE within 10 s (it reports a switch once done).
gopro_reported() {
    for _ in $(seq 100); do grep -qx "$1" /run/lab/gopro-report.txt 2>/dev/null && return 0; sleep 0.1; done
    return 1
}

# fresh_bluetooth: new virtual controllers under a bluetoothd with nothing remembered, which
# every Bluetooth scenario starts with, so that none depends on which ran before it. Earlier
# scenarios' accessories used the same addresses, and BlueZ keeps what it learnt of them (their
# resolved services, which then hide what a new accessory advertises: 60 after 83 listed the
# ESP device's services for the Improv light; bonds, which it would not let Just Works
# replace), some of it even after RemoveDevice.
fresh_bluetooth() {
    [[ -f /run/lab/btvirt.pid ]] && kill "$(cat /run/lab/btvirt.pid)" 2>/dev/null
    [[ -f /run/lab/btmon.pid ]] && kill "$(cat /run/lab/btmon.pid)" 2>/dev/null
    systemctl stop bluetooth.service
    # Every old controller gone first: one left behind would keep its name (hci1, say) while
    # the new btvirt's took others, and a scenario would listen on a controller about to vanish.
    for _ in $(seq 100); do compgen -G '/sys/class/bluetooth/hci*' >/dev/null || break; sleep 0.1; done
    rm -rf /var/lib/bluetooth/*
    start_bluetooth
}
