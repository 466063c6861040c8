# Two unprivileged users, alice and bob, under the real polkitd, with a rule that grants them
# what an active local session gets (open-session, authorize, join) and nothing more. While
# alice's pick runs, bob can neither read her session (busctl get-property, GetAll, a method)
# nor hear its signals (gdbus monitor); afterwards he can neither show, rename, remove nor join
# her accessory. Alice cannot rename its hotspot to an SSID her profile does not discover. A
# picker killed while it asks, and a client killed mid-join (the join then completing), leave
# no record and no connection behind.
for user in alice bob; do
    id -u "$user" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin "$user"
done
alice=$(id -u alice) bob=$(id -u bob)
as() {
    local user=$1
    shift
    setpriv --reuid="$user" --regid="$user" --clear-groups "$@"
}
cat >/etc/polkit-1/rules.d/50-accessory-lab.rules <<'RULES'
polkit.addRule(function (action, subject) {
    var granted = ["io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join"];
    if ((subject.user == "alice" || subject.user == "bob") && granted.indexOf(action.id) >= 0) {
        return polkit.Result.YES;
    }
});
RULES
systemctl restart polkit
check agent_started start_agent "{\"schemaVersion\": 1, \"policies\": [
  {\"profiles\": [\"ge.wled.softap\"], \"users\": [$alice], \"choose\": \"strongestSignal\", \"settleSeconds\": 8}]}"
start_wpa2_ap wled acc1 WLED-AP wled1234

in_own_group as bob stdbuf -oL gdbus monitor --system --dest io.accessorysetup >/run/lab/bob-monitor.txt 2>&1
monitor=$!
for _ in $(seq 100); do grep -q 'is owned by' /run/lab/bob-monitor.txt && break; sleep 0.1; done
check bob_monitor_watches grep 'is owned by' /run/lab/bob-monitor.txt
as alice "$ACCESSORYCTL" pick ge.wled.softap --timeout 90 >/run/lab/alice-pick.txt 2>&1 &
pick=$!
session=
for _ in $(seq 100); do
    session=$(busctl --list tree io.accessorysetup 2>/dev/null | grep -m1 '/session/') && break
    sleep 0.1
done
expect_match alice_has_a_session "$session" '^/io/accessorysetup/session/[0-9]+$'
for probe in "get-property io.accessorysetup $session io.accessorysetup.Session1 Accessories" \
    "get-property io.accessorysetup $session io.accessorysetup.Session1 State" \
    "call io.accessorysetup $session org.freedesktop.DBus.Properties GetAll s io.accessorysetup.Session1" \
    "call io.accessorysetup $session io.accessorysetup.Session1 Invalidate"; do
    # shellcheck disable=SC2086
    denied=$(as bob busctl $probe 2>&1)
    expect_match "bob_denied_${probe%% *}_$(awk '{ print $NF }' <<<"$probe")" "$denied" 'Access denied|belongs to another client'
done
wait "$pick"
expect_match alice_picked "$(cat /run/lab/alice-pick.txt)" 'accessoryAdded WLED controller \(WLED-AP\)'
id=$(as alice "$ACCESSORYCTL" list --json | jq -r '.[0].id')
expect_match alice_has_the_record "$id" '^[0-9a-f-]{36}$'

for command in "show $id" "rename $id Mine" "remove $id" "join $id"; do
    # shellcheck disable=SC2086
    refused=$(as bob "$ACCESSORYCTL" $command 2>&1)
    expect_match "bob_cannot_${command%% *}" "$refused" 'you have no accessory with the id'
done
expect bob_sees_none "$(as bob "$ACCESSORYCTL" list --json | jq length)" 0
refused=$(as alice "$ACCESSORYCTL" rename "$id" HomeNet-Open --ssid 2>&1)
expect_match rename_to_a_foreign_ssid_refused "$refused" 'is not a hotspot profile ge.wled.softap lets this client discover'
expect ssid_unchanged "$(as alice "$ACCESSORYCTL" list --json | jq -r '.[0].ssid')" WLED-AP

# A change every user may hear (the kiosk policy goes): bob's monitor was listening all along.
rm /etc/accessory-setup/kiosk.json
busctl call io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 Reload >/dev/null
for _ in $(seq 50); do grep -q KioskPolicy /run/lab/bob-monitor.txt && break; sleep 0.1; done
check bob_monitor_still_runs kill -0 "$monitor"
kill -- "-$monitor"
cp /run/lab/bob-monitor.txt "$OUT/logs/bob-monitor.txt"
check bob_monitor_listened grep KioskPolicy /run/lab/bob-monitor.txt
check bob_heard_nothing_of_alices_session not grep -q -e "$session" -e WLED -e "$id" /run/lab/bob-monitor.txt

# A picker killed while the agent waits for its choice: nothing is recorded or joined.
in_own_group as alice python3 /lab/guest/session_client.py picker ge.wled.softap \
    '[{"name": "WLED", "descriptor": {"ssid": "WLED-AP"}}]' >/run/lab/picker.txt 2>&1
killed=$!
for _ in $(seq 100); do grep -q requestChoice /run/lab/picker.txt && break; sleep 0.1; done
check picker_was_asked grep -q requestChoice /run/lab/picker.txt
kill -KILL -- "-$killed"
wait "$killed" 2>/dev/null
expect one_record_still "$(as alice "$ACCESSORYCTL" list --json | jq length)" 1
check no_connection_after_the_killed_picker no_accessory_profile

# A client killed mid-join (no address yet), the join completing once DHCP answers: the agent
# undoes it, as nothing would ever end it.
stop_dhcp wled
in_own_group as alice python3 /lab/guest/session_client.py join ge.wled.softap "$id" >/run/lab/join.txt 2>&1
joining=$!
check join_stalled stall_join_until_connecting WLED-AP
kill -KILL -- "-$joining"
wait "$joining" 2>/dev/null
start_dhcp wled acc1
end_checks 60
check agent_undid_the_join bash -c "journalctl -u accessory-setup --no-pager | grep -q 'WLED-AP on wlan3 ended because its session ended'"
check agent_stops stop_agent
check passphrase_never_logged not grep -q wled1234 "$OUT/logs/agent.log"
rm -f /etc/polkit-1/rules.d/50-accessory-lab.rules
