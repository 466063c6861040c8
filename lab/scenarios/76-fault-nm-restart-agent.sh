# NetworkManager restarts under a join the agent holds (found by the soak, 77, seed 777): the
# restart takes the connection and its checkpoint but keeps the join-once profile (in /run),
# and the agent, told by the dispatcher hook that the connection went down while NetworkManager
# was off the bus, once found no device to leave it on and left the profile behind. Now it
# waits for NetworkManager to come back and cleans up: home back, no accessory profile, no
# checkpoint, and the record kept.
kiosk_picks_wled
id=$WLED_ID
joined=$("$ACCESSORYCTL" join "$id" 2>&1)
expect_match joined "$joined" '^Joined WLED-AP on wlan3 through the agent'

check networkmanager_restarted systemctl restart NetworkManager
# The agent's clean-up of the profile, not the end of the scenario's, is what is checked.
check profile_gone eventually 60 no_accessory_profile
check back_home_after_restart wait_home 60
expect record_kept "$("$ACCESSORYCTL" list --json | jq -r '.[].id')" "$id"
check agent_said_it bash -c "journalctl -u accessory-setup --no-pager | grep -q 'leave: WLED-AP on wlan3 ended because the accessory connection went down'"
check record_removed "$ACCESSORYCTL" remove "$id"
end_checks 30
