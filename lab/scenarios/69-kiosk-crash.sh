# A kiosk's batch killed mid-provisioning (#37): `accessoryctl setup-all` of three ESP-IDF
# devices (CRASH_C001 on acc1, CRASH_C002 on acc2, CRASH_C003 on the spare radio, each at
# 192.168.4.1). The third is switched on once the first two are set up, and takes 40 s to join
# the home network; while it is between "apply" and its verdict, the batch and the agent are both
# killed (SIGKILL), leaving its hotspot joined. `setup-all` run again: the agent, started again
# by D-Bus activation, holds the join its predecessor left up and hands it back to the resumed
# batch, which finishes the device. One record for each device, each given the network once, the
# home network back, no accessory profile left.
printf 'shelf-pop-1234\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/home.pass

mkdir -p /etc/accessory-setup/profiles
# Its own prefix, as in 66: no other scenario's hotspot still listed by NetworkManager is taken.
jq '.id = "lab.esp.crash" | del(.items[].productImage) | .items[].descriptor.ssidPrefix = "CRASH_"' \
    /usr/share/accessory-setup/profiles/esp-idf-provisioning-softap.json >/etc/accessory-setup/profiles/lab.esp.crash.json
kiosk='{"schemaVersion": 1, "policies": [{"profiles": ["lab.esp.crash"], "users": [0], "choose": "firstMatch"}]}'
check agent_owns_its_name start_agent "$kiosk"

AP_SUBNET[acc2]=192.168.4
AP_SUBNET[spare]=192.168.4
start_ap crash1 acc1 <<<"ssid=CRASH_C001"
start_ap crash2 acc2 <<<"ssid=CRASH_C002"
check device1_ready start_esp_device 1 acc1
check device2_ready start_esp_device 1 acc2
check visible_CRASH_C001 wait_visible CRASH_C001
check visible_CRASH_C002 wait_visible CRASH_C002

batch() {
    pane_run sh -c "$ACCESSORYCTL setup-all lab.esp.crash --ssid $HOME_SSID --passphrase-file /run/lab/home.pass \
--pop-file /run/lab/prov.pop --timeout $1"
}
batch 60
check two_set_up pane_wait "[2] " 300
ESP_CONNECTING_SECONDS=40
check device3_ready start_esp_accessory crash3 spare CRASH_C003
unset ESP_CONNECTING_SECONDS
applied() { grep -q 'applying the configuration' "$OUT/logs/esp-device-spare-1.log"; }
check third_applies eventually 120 applied
pkill -KILL -x accessoryctl
systemctl kill -s KILL accessory-setup
echo "$(pane)" >>"$CASE_LOG"
expect hotspot_left_joined "$(nmcli -g GENERAL.CONNECTION device show wlan3 2>/dev/null)" "Accessory CRASH_C003"
check not_connected_yet not grep -q 'verdict: connected' "$OUT/logs/esp-device-spare-1.log"

batch 15
check second_run_ended pane_wait "[exit " 300
screen=$(pane)
echo "$screen" >>"$CASE_LOG"
expect_match second_run_exit_0 "$screen" '\[exit 0\]'
expect_match third_resumed "$screen" 'set up, joined .*\(resumed\)'
expect_match join_handed_back "$(journalctl -u accessory-setup --no-pager -o cat)" \
    'CRASH_C003 on wlan3 is already joined for record .*; handed back'
expect records_set_up "$("$ACCESSORYCTL" list --json | jq -r '[.[] | select(.network.ssid == "'"$HOME_SSID"'") | .ssid] | sort | join(", ")')" \
    "CRASH_C001, CRASH_C002, CRASH_C003"
expect one_record_each "$("$ACCESSORYCTL" list --json | jq 'length')" 3
expect joined_once_C003 "$(grep -c 'verdict: connected' "$OUT/logs/esp-device-spare-1.log")" 1
check back_home wait_home 60
expect no_accessory_profile_left "$(nmcli -g NAME,TYPE connection show | grep -c '^Accessory ')" 0
check secrets_not_in_the_journal not grep -q -e shelf-pop-1234 -e "$HOME_PASSPHRASE" \
    <<<"$(journalctl -u accessory-setup --no-pager 2>&1)"
stop_esp_device acc1
stop_esp_device acc2
stop_esp_device spare
