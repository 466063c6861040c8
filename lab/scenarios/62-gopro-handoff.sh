# The Bluetooth-to-Wi-Fi handoff with a GoPro-style camera (lab/guest/gopro_peripheral.py,
# written to the Open GoPro BLE documentation) on hci0. It is found over Bluetooth LE,
# `accessoryctl handoff` pairs with it, has it switch its hotspot on (a real hostapd
# "GP24501234" on acc1, started only then) and joins it with the passphrase it reveals. Its
# setup page answers; `leave` brings the home network back; `--switch-off` stops the hotspot.
check bluetooth fresh_bluetooth
camera=$(adapter_address hci0)
check camera_advertising start_gopro_camera
profile=/usr/share/accessory-setup/profiles/gopro.json

# What `ble list` heard of the camera.
heard_camera() {
    local listed
    listed=$(ble_listing hci1 "$camera" /run/lab/gopro.pid 20)
    echo "$listed" >>"$CASE_LOG"
    jq -c --arg a "$camera" '[.devices[] | select(.address == $a)
        | {gopro_service: (.serviceUUIDs | index("0000fea6-0000-1000-8000-00805f9b34fb") != null),
           gopro_company: ((.manufacturerData // {}) | has("0x02F2"))}] | first' <<<"$listed"
}
heard=$(heard_camera)
expect found_over_ble "$heard" '{"gopro_service":true,"gopro_company":true}'
check hotspot_off_before not test -f /run/lab/hostapd-gopro.pid

printed=""
report=$("$ACCESSORYCTL" handoff "$camera" --profile "$profile" --adapter hci1 --timeout 60 --json 2>/run/lab/handoff.err)
printed+="$report$(cat /run/lab/handoff.err)"
cat /run/lab/handoff.err "$OUT/logs/gopro-peripheral.log" >>"$CASE_LOG"
echo "$report" >>"$CASE_LOG"
expect handoff_joined "$(jq -r '.joined.ssid' <<<"$report")" GP24501234
expect handoff_device "$(jq -r '.joined.device' <<<"$report")" "$STATION"
check camera_paired grep -qx paired=true /run/lab/gopro-report.txt
check camera_hotspot_on grep -qx hotspot=on /run/lab/gopro-report.txt
check passphrase_read grep -qx passphrase-read /run/lab/gopro-report.txt
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-gopro
expect station_on_camera "$(station_connection)" "Accessory GP24501234"

check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
output=$("$ACCESSORYCTL" handoff "$camera" --profile "$profile" --adapter hci1 --switch-off 2>&1)
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match switched_off "$output" "Switched the hotspot of $camera off\.$"
check camera_hotspot_off gopro_reported hotspot=off
check hostapd_stopped not test -f /run/lab/hostapd-gopro.pid
check secrets_not_printed not grep -q "$GOPRO_PASSPHRASE" <<<"$printed"
stop_gopro_camera
