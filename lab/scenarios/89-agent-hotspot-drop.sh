# The accessory switches its hotspot off under a client joined through the agent: NetworkManager's
# dispatcher hook reports the connection down, the agent brings the home network back at once
# (long before the join's restore deadline), and the owner hears it with NetworkManager's reason:
# `accessoryctl monitor` prints accessoryChanged with the hotspot connection up, then down.
kiosk_picks_wled
id=$WLED_ID

"$ACCESSORYCTL" monitor >/run/lab/monitor.out 2>>"$CASE_LOG" &
monitor=$!
sleep 2
joined=$("$ACCESSORYCTL" join "$id" 2>&1)
expect_match joined "$joined" '^Joined WLED-AP on wlan3 through the agent'
check up_reported bash -c "for _ in \$(seq 40); do grep -q 'hotspot connection up on wlan3' /run/lab/monitor.out && exit 0; sleep 0.5; done; exit 1"

stop_ap wled
dropped=$SECONDS
check back_home wait_home 60
expect_match back_long_before_the_deadline "$((SECONDS - dropped))" '^([0-9]|[1-5][0-9])$'
check down_reported bash -c "for _ in \$(seq 40); do grep -q 'hotspot connection down on wlan3' /run/lab/monitor.out && exit 0; sleep 0.5; done; exit 1"
kill "$monitor" 2>/dev/null
cat /run/lab/monitor.out >>"$CASE_LOG"
down=$(grep 'hotspot connection down' /run/lab/monitor.out | tail -n 1)
expect_match down_names_the_accessory "$down" "^/io/accessorysetup accessoryChanged WLED controller \\(WLED-AP\\) \\(WLED-AP\\) authorized $id: hotspot connection down on wlan3"
expect_match down_says_why "$down" 'down on wlan3: .+'
check agent_ended_the_join grep -q 'ended because the accessory connection went down' <(journalctl -u accessory-setup --no-pager)
check agent_stops_on_sigterm stop_agent
