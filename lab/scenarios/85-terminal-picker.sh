# The terminal picker of `accessoryctl pick`, driven by keystrokes in tmux as a person would:
# two Tasmota plugs in range are listed live, Down then Enter sets up the second, and `--join`
# joins its hotspot through the bus-activated agent (its setup page answers); `leave` brings the
# home network back. On another run Esc cancels, and the client hears userCancelled.
check agent_owns_its_name start_agent

start_ap plug1 acc1 <<CONF
ssid=tasmota-1A2B
CONF
start_ap plug2 acc2 <<CONF
ssid=tasmota-3C4D
CONF
check plug1_visible wait_visible tasmota-1A2B
check plug2_visible wait_visible tasmota-3C4D

pane_run "$ACCESSORYCTL" pick com.tasmota.wifimanager --join --timeout 120
check both_listed_live pane_wait "2 found" 90
pane >>"$CASE_LOG"
keys Down
check selection_moved pane_wait "› 2"
chosen=$(pane | grep '^› 2 ' | grep -o 'tasmota-[0-9A-F]*' | head -n 1)
expect_match second_row_is_a_plug "$chosen" '^tasmota-(1A2B|3C4D)$'
keys Enter
check pick_ended pane_wait "[exit " 120
screen=$(pane)
echo "$screen" >>"$CASE_LOG"
expect_match exit_status "$screen" '\[exit 0\]'
expect_match second_added "$screen" "accessoryAdded Tasmota device \\(Wi-Fi manager\\) \\($chosen\\) authorized"
expect_match joined_the_chosen "$screen" "Joined $chosen on $STATION through the agent"
subnet=192.168.4 page=plug1
[[ $chosen == tasmota-3C4D ]] && subnet=192.168.5 page=plug2
expect setup_page "$(setup_page "$subnet.1")" "setup-page-of-$page"
left=$("$ACCESSORYCTL" leave 2>&1)
expect_match leave_through_agent "$left" 'through the agent'
check back_home wait_home 30

pane_run "$ACCESSORYCTL" pick com.tasmota.wifimanager --timeout 120
check listed_again pane_wait " found" 90
keys Escape
check cancel_ended pane_wait "[exit " 30
screen=$(pane)
echo "$screen" >>"$CASE_LOG"
expect_match cancel_exit_status "$screen" '\[exit 1\]'
expect_match client_heard_user_cancelled "$screen" 'pickerDidDismiss io\.accessorysetup\.Error\.UserCancelled'
check nothing_joined not default_route_via_accessory
tmux -L "$PANE" kill-server 2>/dev/null

check agent_stops_on_sigterm stop_agent
