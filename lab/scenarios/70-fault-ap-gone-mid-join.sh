# The hotspot disappears during the join: with its DHCP server stopped the join stalls while
# getting an address, then hostapd stops. A clear error; no profile, no checkpoint, home back.
start_ap plug acc1 <<CONF
ssid=Gone-Setup-7001
CONF
check visible wait_visible Gone-Setup-7001
stop_dhcp plug
start_join /run/lab/join.out --ssid Gone-Setup-7001 --once --timeout 90
check stalled stall_join_until_connecting Gone-Setup-7001
stop_ap plug
finish_join 100
output=$(cat /run/lab/join.out)
expect exit_status "$JOIN_STATUS" 1
expect_one_error error "$output" '.'
end_checks 30
