# ESP-IDF unified provisioning over a SoftAP: an ESP32-style device (lab/accessories/
# esp_prov_device.py, protocomm over HTTP) behind "PROV_4F2A" on 192.168.4.1:80, checking
# what it is sent against the lab's home network. Joined with `join`, provisioned with
# `provision` over security 1 and 2, with the home network named or, with neither --ssid nor a
# passphrase, the one the station left with the passphrase NetworkManager stores; a wrong proof
# of possession and a wrong home passphrase each end with their own error; `leave` brings the
# home network back.
start_wpa2_ap prov acc1 PROV_4F2A prov-softap-key
printf 'abcd1234\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
printf 'not-the-home-passphrase\n' >/run/lab/wrong.pass
printf 'prov-softap-key\n' >/run/lab/softap.pass
chmod 600 /run/lab/*.pop /run/lab/*.pass

check esp_device_sec1 start_esp_device 1
output=$("$ACCESSORYCTL" join --ssid PROV_4F2A --passphrase-file /run/lab/softap.pass --once 2>&1)
expect_match join "$output" "^Joined PROV_4F2A on $STATION"

# Everything accessoryctl prints is kept in $printed, which must hold no secret.
printed=""
provision() {
    local output
    output=$("$ACCESSORYCTL" provision --ssid "$HOME_SSID" "$@" 2>/run/lab/provision.err)
    printed+="$output$(cat /run/lab/provision.err)"
    cat /run/lab/provision.err >>"$CASE_LOG"
    echo "$output"
}
report=$(provision --security 1 --pop-file /run/lab/prov.pop --passphrase-file /run/lab/home.pass --json)
echo "$report" >>"$CASE_LOG"
expect sec1_connected "$(jq -r .state <<<"$report")" connected
expect sec1_address "$(jq -r .address <<<"$report")" 192.168.4.1:80

# Without --ssid and a passphrase: the network the station was on before joining the
# accessory, with the passphrase NetworkManager stores for it.
report=$("$ACCESSORYCTL" provision --security 1 --pop-file /run/lab/prov.pop --json 2>/run/lab/provision.err)
printed+="$report$(cat /run/lab/provision.err)"
cat /run/lab/provision.err >>"$CASE_LOG"
echo "$report" >>"$CASE_LOG"
expect stored_home_connected "$(jq -r .state <<<"$report")" connected
expect stored_home_ssid "$(jq -r .ssid <<<"$report")" "$HOME_SSID"
expect_match stored_home_named "$(cat /run/lab/provision.err)" "Giving the device '$HOME_SSID' with the passphrase of NetworkManager's profile"

printf 'wrong-pop\n' >/run/lab/wrong.pop
output=$("$ACCESSORYCTL" provision --ssid "$HOME_SSID" --pop-file /run/lab/wrong.pop \
    --passphrase-file /run/lab/home.pass 2>&1; echo "exit=$?")
echo "$output" >>"$CASE_LOG"
printed+=$output
expect_match sec1_wrong_pop "$output" 'refused the proof of possession'
expect_match sec1_wrong_pop_exit "$output" 'exit=1$'

report=$(provision --pop-file /run/lab/prov.pop --passphrase-file /run/lab/wrong.pass --json)
expect sec1_wrong_passphrase "$(jq -r .reason <<<"$report")" authError

check esp_device_sec2 start_esp_device 2
report=$(provision --security 2 --pop-file /run/lab/prov.pop --passphrase-file /run/lab/home.pass --json)
echo "$report" >>"$CASE_LOG"
expect sec2_connected "$(jq -r .state <<<"$report")" connected
output=$("$ACCESSORYCTL" provision --ssid "$HOME_SSID" --security 2 --pop-file /run/lab/wrong.pop \
    --passphrase-file /run/lab/home.pass 2>&1)
printed+=$output
expect_match sec2_wrong_pop "$output" 'refused the username and proof of possession'
check secrets_not_printed not grep -q -e abcd1234 -e "$HOME_PASSPHRASE" <<<"$printed"

stop_esp_device
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20

# The same through the profile: `handoff` joins the setup hotspot (the lab's is WPA2, so a
# copy of the shipped profile says so), provisions the device with the network the station
# left and its stored passphrase, ends with the device's verdict, and leaves.
check esp_device_sec2_again start_esp_device 2
jq '.id = "lab.esp.softap" | .hotspot = {"security": "wpa2Personal", "passphrase": {"source": "prompt"}}
    | del(.items[].productImage)' \
    /usr/share/accessory-setup/profiles/esp-idf-provisioning-softap.json >/run/lab/esp-softap-wpa2.json
output=$("$ACCESSORYCTL" handoff PROV_4F2A --profile /run/lab/esp-softap-wpa2.json --passphrase-file /run/lab/softap.pass \
    --pop-file /run/lab/prov.pop 2>&1)
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match handoff_provisioned "$output" "The device joined '$HOME_SSID' \(address "
expect_match handoff_left "$output" "Left PROV_4F2A; back on '"
check handoff_back_home wait_home 20
check secrets_not_printed_by_handoff not grep -q -e abcd1234 -e "$HOME_PASSPHRASE" -e prov-softap-key <<<"$printed"
stop_esp_device
