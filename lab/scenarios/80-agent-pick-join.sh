# Through the agent: the kiosk policy picks the WLED accessory for root, `accessoryctl join ID`
# joins its hotspot with the profile's passphrase, the setup page answers, `leave` brings the
# home network back, and `accessoryctl monitor` saw the session's events in Apple's order.
AGENT=/lab/bin/accessory-agent
mkdir -p /run/lab/agent-state /run/lab/agent-etc
# Until the Debian package installs it: the system bus lets root own the name and anyone call it.
cat >/etc/dbus-1/system.d/io.accessorysetup.conf <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root"><allow own="io.accessorysetup"/></policy>
  <policy context="default"><allow send_destination="io.accessorysetup"/></policy>
</busconfig>
CONF
busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
cat >/run/lab/agent-etc/kiosk.json <<'CONF'
{
  "schemaVersion": 1,
  "policies": [
    { "profiles": ["ge.wled.softap"], "users": [0], "choose": "strongestSignal", "settleSeconds": 2 }
  ]
}
CONF
"$AGENT" --state-directory /run/lab/agent-state --profiles /lab/profiles \
    --kiosk-policy /run/lab/agent-etc/kiosk.json >"$OUT/logs/agent.log" 2>&1 &
agent=$!
check agent_owns_its_name bash -c 'for _ in $(seq 60); do busctl status io.accessorysetup >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1'

start_ap wled acc1 <<CONF
ssid=WLED-AP
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=wled1234
CONF

"$ACCESSORYCTL" monitor --count 5 >/run/lab/monitor.out 2>>"$CASE_LOG" &
monitor=$!
sleep 3
picked=$("$ACCESSORYCTL" pick ge.wled.softap --timeout 90 2>&1)
expect_match pick_added "$picked" 'accessoryAdded WLED controller \(WLED-AP\) \(WLED-AP\) authorized'
id=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "WLED-AP") | .id' | head -n 1)
expect_match recorded "$id" '^[0-9a-f-]{36}$'

joined=$("$ACCESSORYCTL" join "$id" 2>&1)
expect_match join_through_agent "$joined" '^Joined WLED-AP on wlan3 through the agent'
check passphrase_not_printed not grep -q wled1234 <<<"$joined$(cat "$OUT/logs/agent.log")"
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-wled
left=$("$ACCESSORYCTL" leave 2>&1)
expect_match leave_through_agent "$left" 'through the agent'
check back_home wait_home 20

check monitor_ended bash -c "for _ in \$(seq 20); do kill -0 $monitor 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
events=$(awk '{ print $2 }' /run/lab/monitor.out | paste -sd' ')
expect events_in_apples_order "$events" "activated pickerDidPresent accessoryAdded pickerDidDismiss invalidated"

kill -TERM "$agent"
check agent_stops_on_sigterm bash -c "for _ in \$(seq 20); do kill -0 $agent 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
check agent_logged_the_pick grep -q 'accessoryAdded' "$OUT/logs/agent.log"
rm -f /etc/dbus-1/system.d/io.accessorysetup.conf
