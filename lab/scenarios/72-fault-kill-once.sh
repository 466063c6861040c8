# accessoryctl join --once --restore-after 10 killed with SIGKILL mid-join: NetworkManager's
# checkpoint rollback brings the home network back and deletes the new profile within
# restore-after + 30 s (home was back 22 s after the kill in a whole run). While the join comes
# up it pushes the rollback restore-after out every third of it, so the slow join (no DHCP, a
# 90 s timeout) is not rolled back under the scenario's look at it; once the join is killed
# nothing pushes, and NetworkManager rolls back within restore-after.
start_ap plug acc1 <<CONF
ssid=Killed-Setup-7272
CONF
check visible wait_visible Killed-Setup-7272
stop_dhcp plug
start_join /run/lab/join.out --ssid Killed-Setup-7272 --once --restore-after 10 --timeout 90
check stalled stall_join_until_connecting Killed-Setup-7272
kill -KILL "$JOIN_PID"
finish_join 5
expect killed "$JOIN_STATUS" 137
end_checks 40
