# The vendors' own setup APIs through the agent (#42): a Shelly Gen2 behind its open setup
# hotspot (JSON-RPC: Shelly.GetDeviceInfo, WiFi.SetConfig, confirmed by WiFi.GetStatus) and a
# Tasmota behind its Wi-Fi manager (GET /wi, confirmed by its next page with its new address,
# then it restarts), each simulated from the vendor's documentation and firmware
# (lab/accessories/vendor_setup_device.py), picked, given the home network and left with
# `accessoryctl pick --provision`. Once on the home network each announces itself over mDNS
# (avahi-publish in netns home) and is found at the address it reported. The home network comes
# back, no accessory profile is left, and the passphrase reaches no screen or journal. The two
# WLEDs of the same family are 57-vendor-setup-wled.
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/home.pass
# The shipped profiles as they are: each hotspot has its vendor's own network (Shelly
# 192.168.33.1, Tasmota 192.168.4.1), put back at the end.
saved_acc1=${AP_SUBNET[acc1]}
check home_mdns start_home_mdns
check agent_owns_its_name start_agent
printed=""
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')

# The Shelly: once it joins, it announces _shelly._tcp at .43, where WiFi.GetStatus said it is.
VENDOR_ON_JOIN="DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R shellyplus1-a8032ab12345.local ${AP_SUBNET[home]}.43 & \
avahi-publish -s -H shellyplus1-a8032ab12345.local shellyplus1-a8032ab12345 _shelly._tcp 80 gen=2 app=Plus1 & wait"
export VENDOR_ON_JOIN
AP_SUBNET[acc1]=192.168.33
check shelly_ready start_vendor_accessory shelly acc1 shelly-gen2 --mac A8:03:2A:B1:23:45 <<<"ssid=ShellyPlus1-A8032AB12345"
check shelly_visible wait_visible ShellyPlus1-A8032AB12345
output=$("$ACCESSORYCTL" pick cloud.shelly.gen2 --select ShellyPlus1-A8032AB12345 --timeout 60 --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass 2>&1; echo "exit=$?")
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match shelly_provisioned "$output" "joined '$HOME_SSID' at ${AP_SUBNET[home]}\.43\."
expect_match shelly_confirmed "$output" "Waiting for the device to say it joined"
expect_match shelly_left "$output" "Left ShellyPlus1-A8032AB12345, back on '$HOME_SSID'"
expect_match shelly_exit "$output" 'exit=0$'
check shelly_found_where_it_said eventually 90 profile_located cloud.shelly.gen2 "${AP_SUBNET[home]}.43"
stop_vendor_accessory shelly
check back_home_after_shelly wait_home 30

# Tasmota: its Wi-Fi manager tests the network, its next page says so with a link to its new
# address (.48), then it restarts; with mDNS on (SetOption55 1) it announces its web server there.
VENDOR_ON_JOIN="DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R tasmota-a1b2c3-1234.local ${AP_SUBNET[home]}.48 & \
avahi-publish -s -H tasmota-a1b2c3-1234.local tasmota-A1B2C3-1234 _http._tcp 80 & wait"
AP_SUBNET[acc1]=$saved_acc1
check tasmota_ready start_vendor_accessory tasmota acc1 tasmota --leaves-hotspot --home-ip "${AP_SUBNET[home]}.48" \
    <<<"ssid=tasmota-A1B2C3-1234"
check tasmota_visible wait_visible tasmota-A1B2C3-1234
output=$("$ACCESSORYCTL" pick com.tasmota.wifimanager --select tasmota-A1B2C3-1234 --timeout 60 --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass 2>&1; echo "exit=$?")
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match tasmota_provisioned "$output" "joined '$HOME_SSID' at ${AP_SUBNET[home]}\.48\."
expect_match tasmota_exit "$output" 'exit=0$'
check tasmota_found_where_it_said eventually 90 profile_located com.tasmota.wifimanager "${AP_SUBNET[home]}.48"
unset VENDOR_ON_JOIN
stop_vendor_accessory tasmota
check back_home_after_tasmota wait_home 30

remove_records cloud.shelly.gen2 com.tasmota.wifimanager
end_checks 30
journalctl -u accessory-setup --since "$journal_mark" --no-pager >/run/lab/vendor-journal.txt 2>&1
check secrets_not_printed not grep -q -e "$HOME_PASSPHRASE" <<<"$printed"
check secrets_not_journaled not grep -q -e "$HOME_PASSPHRASE" /run/lab/vendor-journal.txt
