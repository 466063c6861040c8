# Join-once profiles are gone after leaving; a stored one stays until forgotten (a second
# stored join of the hotspot replaces it), and the home network comes back either way.
start_ap plug acc1 <<CONF
ssid=Plug-Setup-6006
CONF
check plug_visible wait_visible Plug-Setup-6006
check join_once "$ACCESSORYCTL" join --ssid Plug-Setup-6006 --once
check profile_while_joined bash -c "nmcli -g NAME connection show | grep -qx 'Accessory Plug-Setup-6006'"
check leave_once "$ACCESSORYCTL" leave
check join_once_profile_gone bash -c "! nmcli -g NAME connection show | grep -q 'Accessory Plug-Setup-6006'"
check home_after_join_once wait_home 20
check join_stored "$ACCESSORYCTL" join --ssid Plug-Setup-6006 --lifetime-days 2
check leave_stored "$ACCESSORYCTL" leave
check home_after_stored wait_home 20
expect stored_profile_kept "$(our_profiles)" 1
first=$("$ACCESSORYCTL" configured --json | jq -r '.[0].connectionUUID')
expect_match stored_profile_listed "$first" '^[0-9a-f-]{36}$'
check join_stored_again "$ACCESSORYCTL" join --ssid Plug-Setup-6006
check leave_stored_again "$ACCESSORYCTL" leave
check home_after_stored_again wait_home 20
expect one_profile_per_hotspot "$(our_profiles)" 1
check older_profile_replaced not nmcli connection show "$first"
check forget "$ACCESSORYCTL" forget --ssid Plug-Setup-6006
expect forgotten "$(our_profiles)" 0
