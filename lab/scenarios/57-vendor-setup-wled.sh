# A vendor's own setup API through the agent's batch (#42): two WLEDs sharing WLED-AP (WPA2
# with the published wled1234; JSON configuration at /json/cfg, then they restart), simulated
# from WLED's firmware (lab/accessories/vendor_setup_device.py), given the home network by
# `accessoryctl setup-all` under a kiosk policy. Once on the home network each announces
# _wled._tcp over mDNS (avahi-publish in netns home) and is found by the MAC address it reported
# on its hotspot. The home network comes back, no accessory profile is left, and the passphrase
# reaches no screen or journal.
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/home.pass
# WLED's own hotspot network (4.3.2.1), as the shipped profile has it; put back at the end.
saved_acc1=${AP_SUBNET[acc1]} saved_acc2=${AP_SUBNET[acc2]}
check home_mdns start_home_mdns
printed=""
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')

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
check wleds_found_by_their_mac eventually 90 profile_located ge.wled.softap "${AP_SUBNET[home]}.44" "${AP_SUBNET[home]}.45"
stop_vendor_accessory wled1
stop_vendor_accessory wled2
AP_SUBNET[acc1]=$saved_acc1 AP_SUBNET[acc2]=$saved_acc2
rm -f /etc/accessory-setup/kiosk.json

remove_records ge.wled.softap
end_checks 30
journalctl -u accessory-setup --since "$journal_mark" --no-pager >/run/lab/vendor-journal.txt 2>&1
check secrets_not_printed not grep -q -e "$HOME_PASSPHRASE" <<<"$printed"
check secrets_not_journaled not grep -q -e "$HOME_PASSPHRASE" /run/lab/vendor-journal.txt
