# Joining a WPA2 setup hotspot with the passphrase from a file.
start_wpa2_ap cam acc1 Cam-Setup-2002 camera-pass-2002
printf 'camera-pass-2002\n' >/run/lab/cam.pass
chmod 600 /run/lab/cam.pass
output=$("$ACCESSORYCTL" join --ssid Cam-Setup-2002 --passphrase-file /run/lab/cam.pass --once 2>&1)
expect_match join "$output" "^Joined Cam-Setup-2002 on $STATION"
check passphrase_not_printed not grep -q camera-pass-2002 <<<"$output"
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-cam
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
