# Custom filtering through the installed agent (filterDiscoveryResults, Apple's
# updatePicker(showing:)): two Tasmota plugs match the profile; the example client
# examples/pick.py hears both as AccessoryDiscovered with their access points' fields, admits
# the one whose BSSID it was told, and the kiosk policy picks among what the client showed:
# that one alone is recorded.
check agent_owns_its_name start_agent '{
  "schemaVersion": 1,
  "policies": [
    { "profiles": ["com.tasmota.wifimanager"], "users": [0], "choose": "firstMatch" }
  ]
}'
start_ap first acc1 <<CONF
ssid=tasmota-1A2B3C-0001
CONF
start_ap second acc2 <<CONF
ssid=tasmota-4D5E6F-0002
CONF
check first_visible wait_visible tasmota-1A2B3C-0001
check second_visible wait_visible tasmota-4D5E6F-0002
admitted=$(ip netns exec acc2 cat /sys/class/net/wlan2/address)
other=$(ip netns exec acc1 cat /sys/class/net/wlan1/address)

output=$(python3 /lab/examples/pick.py com.tasmota.wifimanager --timeout 60 --discovery-timeout unbounded \
    --admit "bssid=$admitted" 2>&1)
status=$?
echo "$output" >>"$CASE_LOG"
expect client_added_one "$status" 0
expect_match heard_the_admitted_one "$output" "AccessoryDiscovered: .*ssid tasmota-4D5E6F-0002, bssid ${admitted^^}, .*frequency 24[0-9][0-9], security open: admitted"
expect_match heard_the_other_one "$output" "AccessoryDiscovered: .*ssid tasmota-1A2B3C-0001, bssid ${other^^}, .*: not admitted"
expect_match added_the_admitted_one "$output" 'added: .* ssid tasmota-4D5E6F-0002'
expect records "$("$ACCESSORYCTL" list --json | jq -r '[.[].ssid] | sort | join(" ")')" tasmota-4D5E6F-0002
check agent_stops_on_sigterm stop_agent
