# The same camera picked through the installed agent: `accessoryctl pick com.gopro.camera
# --select ADDRESS --join` has the agent pair with it and run its hotspot handoff as the pick's
# bridging step (pickerSetupBridging), record the hotspot it revealed, and join it with the
# revealed passphrase; the setup page answers; `leave` through the agent brings the home
# network back and has the agent switch the camera's hotspot off.
check bluetooth fresh_bluetooth
# The agent listens on the first adapter, hci0, so the camera takes hci1 here.
camera=$(adapter_address hci1)
check camera_advertising start_gopro_camera hci1
check agent_owns_its_name start_agent

"$ACCESSORYCTL" monitor --count 6 >/run/lab/monitor.out 2>>"$CASE_LOG" &
monitor=$!
sleep 3
advertise_until_heard hci0 "$camera" /run/lab/gopro.pid
picked=$("$ACCESSORYCTL" pick com.gopro.camera --select "$camera" --join --timeout 120 2>&1)
kill "$(cat /run/lab/advertiser.pid)" 2>/dev/null
echo "$picked" >>"$CASE_LOG"
expect_match pick_added "$picked" "accessoryAdded GoPro camera"
expect_match joined_through_agent "$picked" 'Joined GP24501234 on wlan3 through the agent'
check camera_paired gopro_reported paired=true
check camera_hotspot_on gopro_reported hotspot=on
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-gopro
expect recorded_hotspot "$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.profile == "com.gopro.camera") | .ssid' | head -n 1)" GP24501234

left=$("$ACCESSORYCTL" leave 2>&1)
expect_match leave_through_agent "$left" 'through the agent'
check back_home wait_home 20
check agent_switched_the_hotspot_off gopro_reported hotspot=off
check hostapd_stopped not test -f /run/lab/hostapd-gopro.pid

check monitor_ended bash -c "for _ in \$(seq 20); do kill -0 $monitor 2>/dev/null || exit 0; sleep 0.5; done; exit 1"
events=$(awk '{ print $2 }' /run/lab/monitor.out | paste -sd' ')
expect events_in_apples_order "$events" "activated pickerDidPresent pickerSetupBridging accessoryAdded pickerDidDismiss invalidated"
check agent_stops_on_sigterm stop_agent
check passphrase_not_printed not grep -q "$GOPRO_PASSPHRASE" <<<"$picked$left$(cat "$OUT/logs/agent.log")"
stop_gopro_camera
