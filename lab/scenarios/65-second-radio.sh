# A second radio kept for home (#30): with a second Wi-Fi device lent to NetworkManager, an
# accessory is picked, joined and given the home network through the agent on the radio that
# does not carry the default route, which is printed; the home network stays up on the station
# throughout: a ping to the home gateway every 100 ms loses nothing. Leaving restores nothing on
# the second radio and leaves the station as it was.
check second_station_lent lend_second_station
printf 'lab-pop-9090\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/home.pass
check agent_owns_its_name start_agent

start_ap prov acc1 <<CONF
ssid=PROV_5E5E
CONF
check esp_device_ready start_esp_device 1
check prov_visible wait_visible PROV_5E5E

ping -n -I "$STATION" -i 0.1 10.9.0.1 >/run/lab/home-ping.txt 2>&1 &
pinger=$!
sleep 2
output=$("$ACCESSORYCTL" pick com.espressif.provisioning.softap --select PROV_5E5E --timeout 90 --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass --pop-file /run/lab/prov.pop 2>&1; echo "[exit $?]")
echo "$output" >>"$CASE_LOG"
sleep 2
kill -INT "$pinger"
wait "$pinger"
cat /run/lab/home-ping.txt >>"$CASE_LOG"
expect_match provisioned "$output" '\[exit 0\]'
expect_match joined_on_the_second_radio "$output" "Joined PROV_5E5E on $SECOND_STATION; $STATION stays on '$HOME_SSID'\."
expect_match device_joined_home "$output" "joined '$HOME_SSID' at "
expect_match left_the_second_radio "$output" 'Left PROV_5E5E\.'
summary=$(grep 'packets transmitted' /run/lab/home-ping.txt)
expect_match home_ping_lost_nothing "$summary" ' 0% packet loss'
# At least 4 s of pings (2 s before the pick and 2 s after it ended, besides the join itself).
expect_match home_ping_ran "$summary" '^([4-9][0-9]|[1-9][0-9]{2,}) packets transmitted'
expect station_still_home "$(station_connection)" "$HOME_SSID"
expect second_station_idle "$(nmcli -g GENERAL.STATE device show "$SECOND_STATION")" "30 (disconnected)"
stop_esp_device
check second_station_returned return_second_station
