# An accessory is joined only where it was picked (the record's hotspot BSSID pins the join),
# and an ESP-IDF device offering less security than its profile accepts is refused before it
# learns anything. Two access points broadcast the same open SSID, PROV_6B1D, which the shipped
# ESP-IDF SoftAP profile discovers by its prefix: A on acc1, weak, and later B on acc2, far
# stronger, the one NetworkManager would choose by signal (as 40's prefix join does). The
# accessory is picked through the agent while A alone is up; with B up too, `join ID` reaches
# A's BSSID (the station's link, the profile's 802-11-wireless.bssid) and B's hostapd sees no
# association. With A gone and B still there, the join fails at once, NotFound, naming the BSSID
# picked and the other one, and leaves nothing behind: a look-alike taking the accessory's name
# is not joined in its place. Then A comes back with an ESP-IDF device running security 0
# (everything in the clear) behind it: `ProvisionAccessory` under the shipped profile (whose
# minimumSecurity is 1 by default) is refused with ProvisioningSecurityBelowMinimum after the
# version exchange, and the device's log shows no session and no credentials.
SSID=PROV_6B1D
a_bssid=$(ip netns exec acc1 cat /sys/class/net/wlan1/address | tr a-f A-F)
b_bssid=$(ip netns exec acc2 cat /sys/class/net/wlan2/address | tr a-f A-F)
station_mac=$(tr a-f A-F </sys/class/net/$STATION/address)
echo "A $a_bssid, B $b_bssid, station $station_mac" >>"$CASE_LOG"

# The BSSIDs of SSID in NetworkManager's list after a rescan, upper case, one a line.
heard() {
    nmcli -t -f SSID,BSSID device wifi list ifname "$STATION" --rescan yes 2>>"$CASE_LOG" |
        sed 's/\\:/-/g' | awk -F: -v ssid="$SSID" '$1 == ssid { print $2 }' | tr - : | tr a-f A-F
}
hears() { heard | grep -qx "$1"; }
hears_not() { ! heard | grep -qx "$1"; }

start_ap pinA acc1 <<<"ssid=$SSID"
set_tx_power acc1 100
check agent_started start_agent
check a_visible eventually 60 hears "$a_bssid"
check b_not_up_yet hears_not "$b_bssid"

picked=$("$ACCESSORYCTL" pick com.espressif.provisioning.softap --select "$SSID" --timeout 90 --json 2>>"$CASE_LOG")
echo "$picked" >>"$CASE_LOG"
id=$("$ACCESSORYCTL" list --json | jq -r --arg ssid "$SSID" '.[] | select(.ssid == $ssid) | .id' | head -n 1)
expect_match picked "$id" '^[0-9a-f-]{36}$'
recorded=$(grep -rhoi '"hotspotBSSID" *: *"[^"]*"' /var/lib/accessory-setup 2>/dev/null | cut -d'"' -f4 | tr a-f A-F | sort -u)
expect record_holds_a "$recorded" "$a_bssid"

# B: the same SSID, far louder.
start_ap pinB acc2 <<<"ssid=$SSID"
set_tx_power acc2 2000
check b_visible eventually 60 hears "$b_bssid"
nmcli -f SSID,BSSID,SIGNAL device wifi list ifname "$STATION" >>"$CASE_LOG" 2>&1
signal_of() { nmcli -t -f BSSID,SIGNAL device wifi list ifname "$STATION" | sed 's/\\:/-/g' | awk -F: -v b="${1//:/-}" 'toupper($1) == b { print $2 }'; }
a_signal=$(signal_of "$a_bssid") b_signal=$(signal_of "$b_bssid")
check b_is_the_stronger test "${b_signal:-0}" -gt "${a_signal:-0}"

joined=$("$ACCESSORYCTL" join "$id" 2>&1)
echo "$joined" >>"$CASE_LOG"
expect_match joined_through_agent "$joined" "^Joined $SSID on $STATION through the agent"
# The access point the station is associated with, upper case.
linked() { iw dev "$STATION" link 2>&1 | tee -a "$CASE_LOG" | awk '/^Connected to/ { print toupper($3) }'; }
expect station_at_a "$(linked)" "$a_bssid"
expect profile_pins_a "$(nmcli -g 802-11-wireless.bssid connection show "Accessory $SSID" 2>>"$CASE_LOG" | tr -d '\\' | tr a-f A-F)" "$a_bssid"
expect setup_page_of_a "$(setup_page 192.168.4.1)" setup-page-of-pinA
expect b_saw_no_association "$(grep -ci "$station_mac.*associated" "$OUT/logs/hostapd-pinB.log")" 0
expect b_has_no_station "$(hostapd_cli -p /run/lab/hostapd-pinB all_sta 2>>"$CASE_LOG" | grep -ci '^[0-9a-f:]\{17\}$')" 0
check leave "$ACCESSORYCTL" leave
check back_home wait_home 30

# A goes; B, with the accessory's name, stays. NetworkManager forgets A after a few scans.
stop_ap pinA
check a_gone eventually 120 hears_not "$a_bssid"
check b_still_there hears "$b_bssid"
refused=$("$ACCESSORYCTL" join "$id" 2>&1; echo "[exit $?]")
echo "$refused" >>"$CASE_LOG"
check join_fails not grep -qx '\[exit 0\]' <<<"$refused"
# (MAC addresses may be printed in either case.)
shopt -s nocasematch
expect_one_error join_names_the_picked_bssid "$refused" "the access point picked, $SSID at ${a_bssid}, is not in range; only other access points named $SSID are \\(${b_bssid}\\)"
# gdbus, unlike busctl, prints the D-Bus error's name.
error=$(gdbus call --system --timeout 120 --dest io.accessorysetup --object-path /io/accessorysetup \
    --method io.accessorysetup.Manager1.JoinAccessory "$id" '{}' 2>&1)
echo "$error" >>"$CASE_LOG"
expect_match join_error_is_notfound "$error" "io\.accessorysetup\.Error\.NotFound: .*access point picked, $SSID at $a_bssid"
shopt -u nocasematch
expect b_never_associated "$(grep -ci "$station_mac.*associated" "$OUT/logs/hostapd-pinB.log")" 0
check no_accessory_profile no_accessory_profile
expect no_profile_of_ours "$(our_profiles)" 0
check home_kept wait_home 30

# The security floor: A again, with an ESP-IDF device that runs security 0.
start_ap pinA acc1 <<<"ssid=$SSID"
set_tx_power acc1 100
printf 'lab-pop-6b1d\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/home.pass
check esp_device_sec0 start_esp_device 0
check a_back eventually 90 hears "$a_bssid"
joined=$("$ACCESSORYCTL" join "$id" 2>&1)
echo "$joined" >>"$CASE_LOG"
expect_match joined_a_again "$joined" "^Joined $SSID on $STATION through the agent"
expect station_at_a_again "$(linked)" "$a_bssid"
refused=$(gdbus call --system --timeout 120 --dest io.accessorysetup --object-path /io/accessorysetup \
    --method io.accessorysetup.Manager1.ProvisionAccessory "$id" \
    "{'ssid': <'$HOME_SSID'>, 'passphrase': <'$(cat /run/lab/home.pass)'>, 'proofOfPossession': <'$(cat /run/lab/prov.pop)'>}" 2>&1)
echo "$refused" >>"$CASE_LOG"
expect_match below_minimum "$refused" 'io\.accessorysetup\.Error\.ProvisioningSecurityBelowMinimum'
device_log=$OUT/logs/esp-device-acc1-0.log
cat "$device_log" >>"$CASE_LOG"
check device_was_asked_its_version grep -q 'version asked' "$device_log"
check device_opened_no_session not grep -q -e 'session established' -e 'asked, this device runs' "$device_log"
check device_received_no_credentials not grep -q -e 'received credentials' -e 'applying the configuration' "$device_log"
stop_esp_device
check leave_again "$ACCESSORYCTL" leave
check back_home_again wait_home 30
check no_accessory_profile_at_the_end no_accessory_profile
check passphrase_not_in_the_journal not grep -q -e "$HOME_PASSPHRASE" -e lab-pop-6b1d <<<"$(journalctl -u accessory-setup --no-pager)"
