# A kiosk's batch (#30): `accessoryctl setup-all` sets up a shelf of three ESP-IDF devices, each
# behind its own open setup hotspot (SHELF_B001 on acc1, SHELF_B002 on acc2, SHELF_B003 on the
# spare radio, each device at 192.168.4.1 as ESP-IDF's SoftAP puts it), unattended under the
# kiosk policy: pick, join, provision, leave, record. SHELF_B002 has another proof of possession
# than the one the batch is given: it fails with the device's verdict, and the batch goes on.
# Only SHELF_B001 is switched on at first; once it is set up and the batch looks for the next
# one, the agent is killed, and the other two are switched on. The batch waits for the agent
# (D-Bus activation starts it again) and finishes the rest: two recorded and set up, one
# reported, and no device given the network twice.
printf 'shelf-pop-1234\n' >/run/lab/prov.pop
printf 'another-pop-99\n' >/run/lab/other.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/other.pop /run/lab/home.pass

mkdir -p /etc/accessory-setup/profiles
# Its own prefix: a hotspot of another scenario (PROV_…) that NetworkManager still lists from
# its last scan must not be taken for one of this shelf.
jq '.id = "lab.esp.shelf" | del(.items[].productImage) | .items[].descriptor.ssidPrefix = "SHELF_"' \
    /usr/share/accessory-setup/profiles/esp-idf-provisioning-softap.json >/etc/accessory-setup/profiles/lab.esp.shelf.json
check agent_owns_its_name start_agent \
    '{"schemaVersion": 1, "policies": [{"profiles": ["lab.esp.shelf"], "users": [0], "choose": "firstMatch"}]}'

# Each hotspot in its own namespace, with ESP-IDF's SoftAP subnet.
AP_SUBNET[acc2]=192.168.4
AP_SUBNET[spare]=192.168.4
start_ap shelf1 acc1 <<<"ssid=SHELF_B001"
check device1_ready start_esp_device 1 acc1
check visible_SHELF_B001 wait_visible SHELF_B001

# The batch, on a terminal (its progress bar), its results as JSON in a file.
pane_run sh -c "$ACCESSORYCTL setup-all lab.esp.shelf --ssid $HOME_SSID --passphrase-file /run/lab/home.pass \
--pop-file /run/lab/prov.pop --timeout 25 --json >/run/lab/batch.json"
check first_set_up pane_wait "[1] " 240
expect_match first_line_says_set_up "$(pane)" '\[1\] .*: set up, joined'
check back_home_after_first wait_home 60
# Looking for the next device (none in range yet), the agent dies.
looking() { [[ $(journalctl -u accessory-setup --no-pager -o cat | grep -c 'discovery started') -ge 2 ]]; }
check batch_looks_for_the_next eventually 60 looking
systemctl kill -s KILL accessory-setup
check device2_ready start_esp_accessory shelf2 acc2 SHELF_B002 /run/lab/other.pop
check device3_ready start_esp_accessory shelf3 spare SHELF_B003
check batch_ended pane_wait "[exit " 600
screen=$(pane)
echo "$screen" >>"$CASE_LOG"
cat /run/lab/batch.json >>"$CASE_LOG"
expect_match batch_exit_1 "$screen" '\[exit 1\]'
expect_match batch_saw_the_agent_go "$screen" 'The agent went away'
expect batch_results "$(jq -r '[.[] | .accessory.ssid + " " + .result] | sort | join(", ")' /run/lab/batch.json)" \
    "SHELF_B001 setUp, SHELF_B002 failed, SHELF_B003 setUp"
expect batch_wrong_pop "$(jq -r '.[] | select(.result == "failed") | .error.name' /run/lab/batch.json)" \
    io.accessorysetup.Error.ProvisioningWrongProofOfPossession
expect records_set_up "$("$ACCESSORYCTL" list --json | jq -r '[.[] | select(.network.ssid == "'"$HOME_SSID"'") | .ssid] | sort | join(", ")')" \
    "SHELF_B001, SHELF_B003"
expect no_record_of_the_failed "$("$ACCESSORYCTL" list --json | jq '[.[] | select(.ssid == "SHELF_B002")] | length')" 0
# No device was given the network twice; the one turned away never joined.
expect joined_once_B001 "$(grep -c 'verdict: connected' "$OUT/logs/esp-device-acc1-1.log")" 1
expect joined_once_B003 "$(grep -c 'verdict: connected' "$OUT/logs/esp-device-spare-1.log")" 1
expect failed_never_joined "$(grep -c 'verdict: connected' "$OUT/logs/esp-device-acc2-1.log")" 0
check back_home wait_home 60
stop_esp_device acc1
stop_esp_device acc2
stop_esp_device spare
