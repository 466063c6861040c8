# Through the installed, bus-activated agent: the kiosk policy picks the WLED accessory for root, `accessoryctl join ID`
# joins its hotspot with the profile's passphrase, the setup page answers, `leave` brings the
# home network back, and `accessoryctl monitor` saw the session's events in Apple's order; a
# second pick does not offer the accessory again.
check agent_owns_its_name start_agent '{
  "schemaVersion": 1,
  "policies": [
    { "profiles": ["ge.wled.softap"], "users": [0], "choose": "strongestSignal", "settleSeconds": 2 }
  ]
}'

start_wpa2_ap wled acc1 WLED-AP wled1234

"$ACCESSORYCTL" monitor --count 5 >/run/lab/monitor.out 2>>"$CASE_LOG" &
monitor=$!
sleep 3
picked=$("$ACCESSORYCTL" pick ge.wled.softap --timeout 90 2>&1)
expect_match pick_added "$picked" 'accessoryAdded WLED controller \(WLED-AP\) \(WLED-AP\) authorized'
id=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "WLED-AP") | .id' | head -n 1)
expect_match recorded "$id" '^[0-9a-f-]{36}$'

joined=$("$ACCESSORYCTL" join "$id" 2>&1)
expect_match join_through_agent "$joined" '^Joined WLED-AP on wlan3 through the agent'
check passphrase_not_printed not grep -q wled1234 <<<"$joined$(journalctl -u accessory-setup --no-pager)"
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-wled
left=$("$ACCESSORYCTL" leave 2>&1)
expect_match leave_through_agent "$left" 'through the agent'
check back_home wait_home 20

check monitor_ended bash -c "for _ in \$(seq 20); do kill -0 $monitor 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
events=$(awk '{ print $2 }' /run/lab/monitor.out | paste -sd' ')
expect events_in_apples_order "$events" "activated pickerDidPresent accessoryAdded pickerDidDismiss invalidated"

# As AccessorySetupKit's picker: the accessory added is not offered again. With its hotspot
# still in range (the control), the second pick ends by its timeout and adds no record.
expect_match hotspot_still_in_range "$("$ACCESSORYCTL" wifi list 2>&1)" 'WLED-AP'
again=$("$ACCESSORYCTL" pick ge.wled.softap --timeout 10 2>&1)
expect_match added_accessory_not_offered_again "$again" 'DiscoveryTimeout'
expect one_record_of_it "$("$ACCESSORYCTL" list --json | jq '[.[] | select(.ssid == "WLED-AP")] | length')" 1

check agent_stops_on_sigterm stop_agent
check agent_logged_the_pick grep -q 'accessoryAdded' "$OUT/logs/agent.log"
