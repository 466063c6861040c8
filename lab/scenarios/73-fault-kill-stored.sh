# accessoryctl join --restore-after 30 killed with SIGKILL mid-join: NetworkManager's
# checkpoint rollback brings the home network back and deletes the new profile within
# restore-after + 20 s. The restore-after (30 s) is NetworkManager's own rollback of the
# checkpoint, counted from the join's start: it must outlast the join's way to ip-config and
# the scenario's look at it, which on a loaded VM took 9 s (a 10 s restore-after once rolled
# back before the join could be killed).
start_ap plug acc1 <<CONF
ssid=Killed-Setup-7373
CONF
check visible wait_visible Killed-Setup-7373
stop_dhcp plug
start_join /run/lab/join.out --ssid Killed-Setup-7373 --restore-after 30 --timeout 90
check stalled stall_join_until_connecting Killed-Setup-7373
kill -KILL "$JOIN_PID"
finish_join 5
expect killed "$JOIN_STATUS" 137
end_checks 50
