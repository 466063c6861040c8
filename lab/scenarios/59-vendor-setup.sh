# The vendors' own setup APIs through the agent (#42): a Shelly Gen2 behind its open setup
# hotspot (JSON-RPC: Shelly.GetDeviceInfo, WiFi.SetConfig, confirmed by WiFi.GetStatus), a
# Tasmota behind its Wi-Fi manager (GET /wi, confirmed by its next page with its new address,
# then it restarts), and
# two WLEDs sharing WLED-AP (WPA2 with the published wled1234; JSON configuration, then they
# restart) — each simulated from the vendor's documentation and firmware
# (lab/accessories/vendor_setup_device.py) and picked, given the home network and left with
# `accessoryctl pick --provision` or `setup-all`. Once on the home network each announces
# itself over mDNS (avahi-publish in netns home): the Shelly is found at the address it
# reported, each WLED by the MAC address it reported on its hotspot (the WLEDs' batch
# interrupted after the first, and run again once the second is on). The home network comes
# back, no accessory profile is left, and the passphrase reaches no screen or journal.
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/home.pass
# The shipped profiles as they are: each hotspot has its vendor's own network (Shelly
# 192.168.33.1, WLED 4.3.2.1, Tasmota 192.168.4.1), put back at the end.
saved_acc1=${AP_SUBNET[acc1]} saved_acc2=${AP_SUBNET[acc2]}
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
# located PROFILE ADDRESS...: the records of PROFILE are located at these addresses, one each.
located() {
    local profile=$1
    shift
    "$ACCESSORYCTL" list --json 2>/dev/null | jq -e --arg profile "$profile" --args \
        '[.[] | select(.profile == $profile) | .location.addresses[0]?] | sort == ($ARGS.positional | sort)' \
        "$@" >/dev/null
}
check shelly_found_where_it_said eventually 90 located cloud.shelly.gen2 "${AP_SUBNET[home]}.43"
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
check tasmota_found_where_it_said eventually 90 located com.tasmota.wifimanager "${AP_SUBNET[home]}.48"
unset VENDOR_ON_JOIN
stop_vendor_accessory tasmota
check back_home_after_tasmota wait_home 30

# Two WLEDs, one SSID: setup-all under a kiosk policy sets up each once, told apart by BSSID.
# Each, restarted onto the home network, announces _wled._tcp with its MAC address in TXT. The
# batch sets up the first, is interrupted (SIGINT, as Ctrl-C) while it looks for the next, and
# the second is switched on: run again, it sets up only the second, though both beacon WLED-AP.
cat >/etc/accessory-setup/kiosk.json <<'KIOSK'
{"schemaVersion": 1, "policies": [{"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch"}]}
KIOSK
check agent_reads_kiosk start_agent "$(cat /etc/accessory-setup/kiosk.json)"
wled_on_join() {
    echo "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R wled-$1.local ${AP_SUBNET[home]}.$2 & \
avahi-publish -s -H wled-$1.local WLED-$1 _wled._tcp 80 mac=a0b765$1 & wait"
}
# wleds_set_up N: N records of the profile have the home network.
wleds_set_up() {
    [[ $("$ACCESSORYCTL" list --json 2>/dev/null | jq '[.[] | select(.profile == "ge.wled.softap" and .network != null)] | length') == "$1" ]]
}
# Every WLED is at 4.3.2.1 of its own hotspot.
AP_SUBNET[acc1]=4.3.2 AP_SUBNET[acc2]=4.3.2
VENDOR_ON_JOIN=$(wled_on_join a1b2c3 44) check wled1_ready start_vendor_accessory wled1 acc1 wled --leaves-hotspot --mac A0:B7:65:A1:B2:C3 <<<"$WLED_AP"
check wled_visible wait_visible WLED-AP
"$ACCESSORYCTL" setup-all ge.wled.softap --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass \
    --timeout 300 --json >/run/lab/setup-all-1.json 2>/run/lab/setup-all-1.err &
batch=$!
check wled1_set_up eventually 180 wleds_set_up 1
sleep 2
kill -INT "$batch"
wait "$batch"
expect wled_batch_interrupted "$?" 130
printed+=$(cat /run/lab/setup-all-1.err /run/lab/setup-all-1.json)
cat /run/lab/setup-all-1.err /run/lab/setup-all-1.json >>"$CASE_LOG"
check back_home_after_interruption wait_home 30
VENDOR_ON_JOIN=$(wled_on_join d4e5f6 45) check wled2_ready start_vendor_accessory wled2 acc2 wled --leaves-hotspot --mac A0:B7:65:D4:E5:F6 <<<"$WLED_AP"
output=$("$ACCESSORYCTL" setup-all ge.wled.softap --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass \
    --timeout 60 --json 2>/run/lab/setup-all.err; echo "exit=$?")
printed+="$output$(cat /run/lab/setup-all.err)"
cat /run/lab/setup-all.err >>"$CASE_LOG"
echo "$output" >>"$CASE_LOG"
expect_match wled_batch_exit "$output" 'exit=0$'
expect wled_resumed_batch_sets_up_the_second \
    "$(sed '$d' <<<"$output" | jq -r '[.[] | select(.result == "setUp" and .resumed == false)] | length')" 1
records=$("$ACCESSORYCTL" list --json | jq '[.[] | select(.profile == "ge.wled.softap")]')
echo "$records" >>"$CASE_LOG"
expect wled_two_records "$(jq length <<<"$records")" 2
expect wled_two_units "$(jq '[.[].hotspotBSSID] | unique | length' <<<"$records")" 2
expect wled_each_given_once "$(cat "$OUT"/logs/vendor-wled*.log | grep -c "GOT ssid='$HOME_SSID' passphrase=matches")" 2
expect wled2_given "$(grep -c "GOT ssid='$HOME_SSID' passphrase=matches" "$OUT/logs/vendor-wled2.log")" 1
check wleds_found_by_their_mac eventually 90 located ge.wled.softap "${AP_SUBNET[home]}.44" "${AP_SUBNET[home]}.45"
stop_vendor_accessory wled1
stop_vendor_accessory wled2
AP_SUBNET[acc1]=$saved_acc1 AP_SUBNET[acc2]=$saved_acc2
rm -f /etc/accessory-setup/kiosk.json

# The records go, with whatever NetworkManager profiles were made for them.
removed=0
for id in $("$ACCESSORYCTL" list --json | jq -r '.[] | select(.profile == "cloud.shelly.gen2" or
        .profile == "com.tasmota.wifimanager" or .profile == "ge.wled.softap") | .id'); do
    removed=$((removed + 1))
    check "record_removed_$removed" "$ACCESSORYCTL" remove "$id"
done
end_checks 30
journalctl -u accessory-setup --since "$journal_mark" --no-pager >/run/lab/vendor-journal.txt 2>&1
check secrets_not_printed not grep -q -e "$HOME_PASSPHRASE" <<<"$printed"
check secrets_not_journaled not grep -q -e "$HOME_PASSPHRASE" /run/lab/vendor-journal.txt
