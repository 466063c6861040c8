# A wrong passphrase is our typed error, and leaves no profile behind.
start_wpa2_ap cam acc1 Cam-Setup-5005 the-right-pass
printf 'not-the-right-pass\n' >/run/lab/wrong.pass
output=$("$ACCESSORYCTL" join --ssid Cam-Setup-5005 --passphrase-file /run/lab/wrong.pass --timeout 60 2>&1)
status=$?
expect exit_status "$status" 1
expect error "$output" "accessoryctl: error: Cam-Setup-5005 refused the passphrase; check it and try again"
expect no_profile_of_ours "$(our_profiles)" 0
check no_profile_in_networkmanager bash -c "! nmcli -g NAME connection show | grep -q 'Accessory Cam-Setup-5005'"
check back_home wait_home 30
