# Ctrl-C (SIGINT) to accessoryctl join mid-join: exit status 130, and at once no profile, no
# checkpoint, home back (no waiting for --restore-after).
start_ap plug acc1 <<CONF
ssid=Interrupted-Setup-7505
CONF
check visible wait_visible Interrupted-Setup-7505
stop_dhcp plug
start_join /run/lab/join.out --ssid Interrupted-Setup-7505 --once --timeout 90
check stalled stall_join_until_connecting Interrupted-Setup-7505
kill -INT "$JOIN_PID"
finish_join 20
expect exit_status "$JOIN_STATUS" 130
end_checks 15
