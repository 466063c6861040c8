# Improv Wi-Fi over real BlueZ: the accessory advertises, `ble list` finds it by its Improv
# service data, and `improv provision` hands it the home network; it reports what it got.
check bluetooth fresh_bluetooth
check accessory_advertising start_improv_accessory /run/lab/improv-received.txt
accessory=$(adapter_address hci0)
listed=$(ble_listing hci1 "$accessory" /run/lab/improv.pid 25)
echo "$listed" >>"$CASE_LOG"
# The device's entry in the JSON, found by its address, and one of its fields.
listed_field() {
    python3 -c '
import json, sys
def find(node):
    if isinstance(node, dict):
        if node.get("address") == sys.argv[1]:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            found = find(child)
            if found:
                return found
    return {}
print(json.dumps(find(json.load(sys.stdin)).get(sys.argv[2], {}), sort_keys=True))' "$accessory" "$1" <<<"$listed"
}
expect listed_with_improv_service_data "$(listed_field serviceData)" '{"00004677-0000-1000-8000-00805f9b34fb": "010100000000"}'
expect listed_with_manufacturer_data "$(listed_field manufacturerData)" '{"0xFFFF": "4c01"}'
expect listed_with_service_uuid "$(listed_field serviceUUIDs)" '["00467768-6228-2272-4663-277478268000"]'
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
output=$("$ACCESSORYCTL" improv provision "$accessory" --adapter hci1 --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass 2>&1)
echo "$output" >>"$CASE_LOG"
expect_match redirect_url "$output" 'http://192\.168\.4\.1/setup'
check passphrase_not_printed not grep -q "$HOME_PASSPHRASE" <<<"$output"
# What the accessory received, compared without printing the passphrase.
expect accessory_received_ssid "$(sed -n 's/^ssid=//p' /run/lab/improv-received.txt 2>/dev/null)" "$HOME_SSID"
check accessory_received_passphrase grep -qxF "passphrase=$HOME_PASSPHRASE" /run/lab/improv-received.txt
stop_improv_accessory
