# NetworkManager restarts mid-join (stalled while getting an address). A clear error naming
# NetworkManager; no profile, no checkpoint, home back.
start_ap plug acc1 <<CONF
ssid=Restart-Setup-7101
CONF
check visible wait_visible Restart-Setup-7101
stop_dhcp plug
start_join /run/lab/join.out --ssid Restart-Setup-7101 --once --timeout 90
check stalled stall_join_until_connecting Restart-Setup-7101
systemctl restart NetworkManager
finish_join 100
output=$(cat /run/lab/join.out)
expect exit_status "$JOIN_STATUS" 1
expect_one_error error "$output" 'NetworkManager'
end_checks 30
