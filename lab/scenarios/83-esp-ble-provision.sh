# ESP-IDF unified provisioning over Bluetooth LE: an ESP32-style device
# (lab/accessories/esp_prov_ble_device.py, protocomm over GATT with its endpoints named by
# user descriptions) advertising "PROV_4F2B" on hci0, checking what it is sent against the
# lab's home network. `provision --bluetooth` with security 2 gets "connected"; a wrong proof
# of possession and a wrong home passphrase each end with their own error.
check bluetooth fresh_bluetooth
printf 'abcd1234\n' >/run/lab/prov.pop
printf 'wrong-pop\n' >/run/lab/wrong.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
printf 'not-the-home-passphrase\n' >/run/lab/wrong.pass
chmod 600 /run/lab/*.pop /run/lab/*.pass

# start_ble_device SECURITY: the device on hci0, its PoP abcd1234.
start_ble_device() {
    [[ -f /run/lab/esp-ble.pid ]] && kill "$(cat /run/lab/esp-ble.pid)" 2>/dev/null && sleep 1
    python3 -u /lab/accessories/esp_prov_ble_device.py --adapter hci0 --name PROV_4F2B --security "$1" \
        --pop-file /run/lab/prov.pop --home-ssid "$HOME_SSID" --home-passphrase-file /run/lab/home.pass \
        --connecting-polls 2 >"$OUT/logs/esp-ble-$1.log" 2>&1 &
    echo $! >/run/lab/esp-ble.pid
    for _ in $(seq 200); do grep -q READY "$OUT/logs/esp-ble-$1.log" && return 0; sleep 0.1; done
    return 1
}
device=$(adapter_address hci0)
printed=""
provision() {
    local output
    output=$("$ACCESSORYCTL" provision --bluetooth "$device" --adapter hci1 --ssid "$HOME_SSID" "$@" 2>/run/lab/provision.err)
    printed+="$output$(cat /run/lab/provision.err)"
    cat /run/lab/provision.err >>"$CASE_LOG"
    echo "$output" >>"$CASE_LOG"
    echo "$output"
}

check esp_ble_device_sec2 start_ble_device 2
# This scenario is about provisioning, so it waits until hci1 has heard the device (the
# emulated controllers' advertising report can be lost: hear_ble_device).
check device_heard hear_ble_device hci1 "$device" /run/lab/esp-ble.pid
report=$(provision --security 2 --pop-file /run/lab/prov.pop --passphrase-file /run/lab/home.pass --json)
expect sec2_connected "$(jq -r .state <<<"$report")" connected
expect sec2_address "$(jq -r .address <<<"$report")" "$device"
report=$(provision --security 2 --pop-file /run/lab/prov.pop --passphrase-file /run/lab/wrong.pass --json)
expect sec2_wrong_passphrase "$(jq -r .reason <<<"$report")" authError
provision --security 2 --pop-file /run/lab/wrong.pop --passphrase-file /run/lab/home.pass >/dev/null
expect_match sec2_wrong_pop "$(cat /run/lab/provision.err)" 'refused the username and proof of possession'

check esp_ble_device_sec1 start_ble_device 1
report=$(provision --security 1 --pop-file /run/lab/prov.pop --passphrase-file /run/lab/home.pass --json)
expect sec1_connected "$(jq -r .state <<<"$report")" connected
# Through the shipped profile: `handoff` provisions over Bluetooth with the network the
# station is on and the passphrase NetworkManager stores for it.
report=$("$ACCESSORYCTL" handoff "$device" --profile /usr/share/accessory-setup/profiles/esp-idf-provisioning-ble.json \
    --adapter hci1 --pop-file /run/lab/prov.pop --json 2>/run/lab/handoff.err)
printed+="$report$(cat /run/lab/handoff.err)"
cat /run/lab/handoff.err >>"$CASE_LOG"
echo "$report" >>"$CASE_LOG"
expect handoff_provisioned "$(jq -r .provisioned.state <<<"$report")" connected
expect handoff_home "$(jq -r .provisioned.ssid <<<"$report")" "$HOME_SSID"
check secrets_not_printed not grep -q -e abcd1234 -e "$HOME_PASSPHRASE" <<<"$printed"
kill "$(cat /run/lab/esp-ble.pid)" 2>/dev/null
rm -f /run/lab/esp-ble.pid
