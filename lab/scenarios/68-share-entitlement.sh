# Sharing a stored network's passphrase with an accessory follows NetworkManager's rule for
# reading that secret, under the real polkitd and the SHIPPED policy (the lab's rule grants
# carol open-session, authorize, join and provision, never a share-* action). carol, not an
# administrator, and dave, an administrator (group sudo, which Debian's polkit takes for
# admins: /usr/share/polkit-1/rules.d/50-default.rules), each have a password. carol picks her
# own ESP-IDF device (security 1, behind the open hotspot PROV_C4A1, under a copy of the shipped
# SoftAP profile that holds its proof of possession) and joins it; then she has
# the agent give it a network this machine stores (`ProvisionAccessory` without a passphrase):
#   - the machine's system profile HomeNet: share-system-network, auth_admin: a wrong password
#     is refused (NotAuthorized naming the action) and the device is sent nothing; dave's
#     password provisions it (the device reports it joined HomeNet);
#   - her own profile for the same SSID, restricted to her (connection.permissions user:carol):
#     share-network, auth_self: her own password provisions it, and a second share asks again
#     (never kept), each a polkit check of its own in the agent's journal.
# No secret reaches a screen or the journal.
#
# How polkit is answered: auth_self needs the caller in an active local session (polkit's
# allow_active; a process outside any session, as `setpriv` gives, gets allow_any, auth_admin).
# So carol gets a real logind session on seat0, VT 1 (the foreground VT): a transient unit with
# PAMName=login runs as her (pam_systemd registers the session from XDG_SEAT/XDG_VTNR and the
# TTY), and starts a tmux server there; every window of it is a process of that session, which
# polkit sees as active and local. In a window, share.sh registers a text authentication agent
# for its own process (`pkttyagent --process $$`, waiting on --notify-fd until registered), then
# execs busctl: exec keeps the pid and start time, so when the agent asks polkit about the
# caller (a system-bus-name subject, which polkit resolves to that process) polkit finds the
# text agent and asks on carol's terminal. The password is typed there with send-keys. polkitd
# logs each authentication with the caller's command line (and "ONE-SHOT": nothing kept), so
# no secret is ever an argument of busctl.
# They log in here: a shell and a home, also when another scenario of this VM made them first
# without either (77 and 87 make carol with nologin, whose tmux window then exited at once and
# took the tmux server with it).
for user in carol dave; do
    id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
    usermod --shell /bin/bash "$user"
    install -d -o "$user" -g "$user" -m 700 "$(getent passwd "$user" | cut -d: -f6)"
done
usermod -aG sudo dave
CAROL_PASSWORD=carol-lab-pw-5512 DAVE_PASSWORD=dave-lab-pw-7731
printf 'carol:%s\ndave:%s\n' "$CAROL_PASSWORD" "$DAVE_PASSWORD" | chpasswd
as_carol() { setpriv --reuid=carol --regid=carol --init-groups "$@"; }
cat >/etc/polkit-1/rules.d/50-accessory-lab.rules <<'RULES'
polkit.addRule(function (action, subject) {
    var granted = ["io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join",
                   "io.accessorysetup.provision"];
    if (subject.user == "carol" && granted.indexOf(action.id) >= 0) {
        return polkit.Result.YES;
    }
});
RULES
systemctl restart polkit
started=$(date +%s)

# carol's session, active on seat0.
{ cat /sys/class/tty/tty0/active; loginctl list-seats; } >>"$CASE_LOG" 2>&1
systemd-run --unit=lab-carol-seat --uid=carol -p PAMName=login -p TTYPath=/dev/tty1 \
    --setenv=XDG_SEAT=seat0 --setenv=XDG_VTNR=1 --setenv=XDG_SESSION_TYPE=tty --setenv=XDG_SESSION_CLASS=user \
    /bin/sh -c 'tmux -L carolseat new-session -d -s main -x 100 -y 30 "sleep infinity" && exec sleep infinity' \
    >>"$CASE_LOG" 2>&1
carol_session() { loginctl list-sessions --no-legend | awk '$3 == "carol" { print $1 }' | head -n 1; }
has_session() { [[ -n $(carol_session) ]]; }
check carol_has_a_session eventually 30 has_session
session=$(carol_session)
loginctl session-status "$session" >>"$CASE_LOG" 2>&1
expect carol_session_active_on_seat0 "$(loginctl show-session "$session" -p Active -p Remote -p Seat 2>&1 | sort | paste -sd' ')" "Active=yes Remote=no Seat=seat0"

ct() { as_carol tmux -L carolseat "$@"; }
windows=0
# carol_run COMMAND: runs COMMAND (a shell line) in a new window of carol's tmux server.
carol_run() {
    WIN=w$((++windows))
    ct new-window -d -t main: -n "$WIN" "$1; echo \"[exit \$?]\"; sleep 600"
}
carol_pane() { ct capture-pane -p -J -t "main:$WIN"; }
carol_keys() { ct send-keys -t "main:$WIN" "$@"; }
carol_wait() {
    local deadline=$((SECONDS + ${2:-60}))
    while ((SECONDS < deadline)); do
        carol_pane | grep -qF -- "$1" && return 0
        sleep 0.3
    done
    { echo "carol's screen did not show '$1':"; carol_pane; } >>"$CASE_LOG"
    return 1
}
check carol_tmux_in_her_session eventually 20 ct has-session -t main
carol_run 'cat /proc/self/cgroup; id -un'
carol_wait "[exit " 20 >/dev/null
carol_pane >>"$CASE_LOG"
expect_match carol_window_in_the_session "$(carol_pane)" "session-$session\\.scope"

mkdir -p /run/lab/carol
printf 'lab-pop-c4a1\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/home.pass
# The device's proof of possession comes from the profile (an administrator's copy of the
# shipped one, the vendor's fixed code), not from busctl's command line: polkitd logs the
# caller's command line with each authentication.
mkdir -p /etc/accessory-setup/profiles
jq '.id = "lab.esp.c4a1" | .provisioning.proofOfPossession = {"source": "fixed", "value": "lab-pop-c4a1"}
    | del(.items[].productImage)' /usr/share/accessory-setup/profiles/esp-idf-provisioning-softap.json \
    >/etc/accessory-setup/profiles/lab.esp.c4a1.json
cat >/run/lab/carol/share.sh <<'SHARE'
#!/bin/sh
# share.sh OUTPUT ID [SSID]: the agent's ProvisionAccessory for record ID with a stored network
# (SSID's, else the one the machine returns to), with a text authentication agent for this
# very process: busctl, exec'd, keeps its pid and start time.
out=$1 id=$2
fifo=/run/lab/carol/registered.$$
mkfifo "$fifo"
pkttyagent --process $$ --notify-fd 3 3>"$fifo" </dev/tty >/dev/tty 2>&1 &
cat "$fifo" >/dev/null
rm -f "$fifo"
if [ -n "${3:-}" ]; then set -- 1 ssid s "$3"; else set -- 0; fi
exec busctl --allow-interactive-authorization=yes --timeout=180 --json=short call io.accessorysetup /io/accessorysetup \
    io.accessorysetup.Manager1 ProvisionAccessory 'sa{sv}' "$id" "$@" >"$out" 2>&1
SHARE
chmod 755 /run/lab/carol/share.sh
chown -R carol: /run/lab/carol

check agent_started start_agent
start_ap prov acc1 <<<"ssid=PROV_C4A1"
check esp_device_ready start_esp_device 1
device_log=$OUT/logs/esp-device-acc1-1.log
check prov_visible wait_visible PROV_C4A1
picked=$(as_carol "$ACCESSORYCTL" pick lab.esp.c4a1 --select PROV_C4A1 --timeout 90 2>&1)
echo "$picked" >>"$CASE_LOG"
id=$(as_carol "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_C4A1") | .id')
expect_match carol_picked "$id" '^[0-9a-f-]{36}$'
joined=$(as_carol "$ACCESSORYCTL" join "$id" 2>&1)
echo "$joined" >>"$CASE_LOG"
expect_match carol_joined "$joined" '^Joined PROV_C4A1 on wlan3 through the agent'

# share N SSID: carol asks the agent to give the device a stored network (SSID's, or the one
# the machine returns to) in a window of her session; waits for the password prompt.
shares=0
share() {
    SHARE_OUT=/run/lab/carol/share-$((++shares)).txt
    # (/run is mounted noexec: sh runs the script.)
    carol_run "sh /run/lab/carol/share.sh $SHARE_OUT $id ${1:-}"
    carol_wait "Password:" 90
}
# answer PASSWORD: types it, only at pkttyagent's prompt (never into a shell that would echo
# it), and waits for busctl's end.
answer() {
    SCREEN=$(carol_pane)
    if ! grep -q 'Password:' <<<"$SCREEN" || grep -qF '[exit ' <<<"$SCREEN"; then
        echo "$SCREEN" >>"$CASE_LOG"
        return 1
    fi
    carol_keys -l "$1"
    carol_keys Enter
    carol_wait "[exit " 150
    SCREEN=$(carol_pane)
    echo "$SCREEN" >>"$CASE_LOG"
    cat "$SHARE_OUT" >>"$CASE_LOG"
}
polkit_lines() { journalctl -u accessory-setup --since "@$started" --no-pager -o cat | grep -c "polkit: $1"; }

# 1. The system network, a wrong password: refused, nothing sent.
check system_share_asks share "$HOME_SSID"
screen=$(carol_pane)
echo "$screen" >>"$CASE_LOG"
expect_match system_share_action "$(grep -m1 AUTHENTICATING <<<"$screen")" '==== AUTHENTICATING FOR io\.accessorysetup\.share-system-network ===='
expect_match system_share_names_accessory_and_network "$(grep -m1 'Authentication is required' <<<"$screen")" "ESP32 provisioning device \\(SoftAP\\).*$HOME_SSID"
expect_match system_share_asks_the_administrator "$(grep -m1 'Authenticating as' <<<"$screen")" 'Authenticating as: .*dave'
answer wrong-password-0000
expect_match wrong_password_failed "$(grep -m1 'AUTHENTICATION' <<<"$SCREEN")" 'AUTHENTICATION FAILED'
expect_match wrong_password_busctl_failed "$(grep -m1 '\[exit' <<<"$SCREEN")" '\[exit [1-9]'
expect_match wrong_password_refused "$(cat "$SHARE_OUT")" 'io\.accessorysetup\.share-system-network'
expect system_refused_logged "$(polkit_lines 'io.accessorysetup.share-system-network refused')" 1
check nothing_sent_to_device not grep -q -e 'version asked' -e 'session established' -e 'received credentials' "$device_log"

# 2. The same, dave's password: provisioned.
check system_share_asks_again share "$HOME_SSID"
answer "$DAVE_PASSWORD"
expect_match admin_password_accepted "$(grep -m1 'AUTHENTICATION' <<<"$SCREEN")" 'AUTHENTICATION COMPLETE'
expect_match admin_share_exit "$(grep -m1 '\[exit' <<<"$SCREEN")" '\[exit 0\]'
expect admin_share_provisioned "$(jq -r '.data[0].ssid.data + " " + .data[0].ipv4Address.data' "$SHARE_OUT" 2>&1)" "$HOME_SSID ${AP_SUBNET[home]}.42"
expect device_joined_home "$(grep -c 'verdict: connected' "$device_log")" 1
expect system_allowed_logged "$(polkit_lines 'io.accessorysetup.share-system-network allowed')" 1
check carol_leaves as_carol "$ACCESSORYCTL" leave
check back_home wait_home 30

# 3. carol's own profile for the home SSID, restricted to her, the network the station is on
# when she joins the device: share-network, her own password.
check carol_profile_added nmcli connection add type wifi con-name "HomeNet (carol)" ifname "$STATION" ssid "$HOME_SSID" \
    wifi-sec.key-mgmt wpa-psk wifi-sec.psk "$HOME_PASSPHRASE" wifi-sec.psk-flags 0 \
    connection.permissions user:carol connection.autoconnect no
check carol_profile_up nmcli --wait 60 connection up "HomeNet (carol)"
on_carols_profile() { [[ $(station_connection) == "HomeNet (carol)" && $(station_ipv4) == 10.9.0.* ]]; }
check on_carols_profile eventually 30 on_carols_profile
joined=$(as_carol "$ACCESSORYCTL" join "$id" 2>&1)
echo "$joined" >>"$CASE_LOG"
expect_match carol_joined_again "$joined" '^Joined PROV_C4A1 on wlan3 through the agent'
check own_share_asks share
screen=$(carol_pane)
echo "$screen" >>"$CASE_LOG"
expect_match own_share_action "$(grep -m1 AUTHENTICATING <<<"$screen")" '==== AUTHENTICATING FOR io\.accessorysetup\.share-network ===='
expect_match own_share_asks_carol "$(grep -m1 'Authenticating as' <<<"$screen")" 'Authenticating as: .*carol'
answer "$CAROL_PASSWORD"
expect_match own_password_accepted "$(grep -m1 'AUTHENTICATION' <<<"$SCREEN")" 'AUTHENTICATION COMPLETE'
expect own_share_provisioned "$(jq -r '.data[0].ssid.data' "$SHARE_OUT" 2>&1)" "$HOME_SSID"

# 4. Again: asked again, never kept.
check own_share_asks_again share
expect_match own_share_again_action "$(carol_pane | grep -m1 AUTHENTICATING)" 'AUTHENTICATING FOR io\.accessorysetup\.share-network'
answer "$CAROL_PASSWORD"
expect own_share_again_provisioned "$(jq -r '.data[0].ssid.data' "$SHARE_OUT" 2>&1)" "$HOME_SSID"
expect device_joined_three_times "$(grep -c 'verdict: connected' "$device_log")" 3
expect own_allowed_logged_twice "$(polkit_lines 'io.accessorysetup.share-network allowed')" 2
journalctl -u accessory-setup --since "@$started" --no-pager -o cat | grep -e 'polkit: io.accessorysetup.share' -e 'stored network' >>"$CASE_LOG"
expect_match own_profile_named "$(journalctl -u accessory-setup --since "@$started" --no-pager -o cat | grep 'stored network' | tail -n 1)" "profile 'HomeNet \\(carol\\)', io\\.accessorysetup\\.share-network"

check carol_leaves_again as_carol "$ACCESSORYCTL" leave
stop_esp_device
check carol_profile_deleted nmcli connection delete "HomeNet (carol)"
nmcli --wait 60 connection up "$HOME_SSID" >>"$CASE_LOG" 2>&1
check back_home_at_the_end wait_home 30
check no_accessory_profile no_accessory_profile

journal=$(journalctl -u accessory-setup -u polkit --since "@$started" --no-pager 2>&1)
check secrets_not_in_the_journal not grep -q -e "$HOME_PASSPHRASE" -e "$CAROL_PASSWORD" -e "$DAVE_PASSWORD" -e lab-pop-c4a1 <<<"$journal"
screens=$(for ((w = 1; w <= windows; w++)); do ct capture-pane -p -J -t "main:w$w" 2>/dev/null; done)
check secrets_not_on_screen not grep -q -e "$HOME_PASSPHRASE" -e "$CAROL_PASSWORD" -e "$DAVE_PASSWORD" -e lab-pop-c4a1 <<<"$screens"

ct kill-server 2>/dev/null
systemctl stop lab-carol-seat 2>/dev/null
loginctl terminate-user carol 2>/dev/null
gpasswd -d dave sudo >/dev/null 2>&1
rm -f /etc/polkit-1/rules.d/50-accessory-lab.rules
systemctl restart polkit
