# An upgrade from the previous release (#37). Its package (lab/previous-release; lab/run builds
# it) is installed afresh and used as a person would: an accessory picked, renamed, and joined
# through the agent, which holds the join; alice's application's network applied
# (ApplyConfiguration) and left, so that it is stored. Then this package is installed over it
# (dpkg -i, as apt's upgrade runs it): the version rises; the old package's prerm stops the agent
# and the next call starts the new one; the expiry timer is enabled and active; no unit failed;
# the records are kept as they were; alice still has her network; no NetworkManager profile is
# doubled. 0.1.0's agent ended its join as it stopped; from this release on the join stays up
# through an upgrade (this package installed over itself) and the next agent holds it: leaving
# through it brings the home network back. Then a purge leaves no state, no agent and no profile
# the agent made. This package is installed again for the scenarios after this one.
# lab: needs the previous release
previous=/lab/accessory-setup-previous.deb current=/lab/accessory-setup.deb
for user in alice; do
    id -u "$user" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin "$user"
done
# A join answers when NetworkManager has activated the network, which under a loaded whole run
# took longer than busctl's default 25 s (the call timed out, the join went on, and the Leave
# that followed found nothing to leave): the call waits as long as an application would.
alice() { setpriv --reuid=alice --regid=alice --clear-groups busctl call --timeout=120 io.accessorysetup \
    /io/accessorysetup io.accessorysetup.Manager1 "$@" 2>&1; }
allow_polkit alice io.accessorysetup.configure-hotspot
version() { dpkg-query -W -f '${Version}' accessory-setup 2>/dev/null; }
# What NetworkManager holds: each profile's name and UUID, one a line, sorted.
profiles() { nmcli -g NAME,UUID connection show | sort; }

systemctl stop accessory-setup
check purge_current apt-get purge -y accessory-setup
check install_previous dpkg -i "$previous"
old_version=$(version)
echo "previous release: $old_version" >>"$CASE_LOG"

# alice's application's network, stored and left.
start_wpa2_ap app acc2 App-Net-9898 app-pass-9898
check app_network_visible wait_visible App-Net-9898
expect_match alice_applied "$(alice ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-9898 passphrase s app-pass-9898 0)" \
    '"ssid" s "App-Net-9898"'
expect_match alice_left "$(alice Leave 'a{sv}' 0)" '"restored" s "'
check back_home_before_the_upgrade wait_home 30
expect alice_has_it_before "$(alice GetConfiguredSSIDs)" 'as 1 "App-Net-9898"'

# An accessory picked, renamed and joined; the agent holds the join.
start_wpa2_ap wled acc1 WLED-AP wled1234
check wled_visible wait_visible WLED-AP
picked=$("$ACCESSORYCTL" pick ge.wled.softap --select WLED-AP --timeout 90 --json 2>>"$CASE_LOG")
id=$(jq -r .id <<<"$picked")
check picked_with_the_previous_release test -n "$id"
check renamed "$ACCESSORYCTL" rename "$id" "Kitchen lights"
check joined_with_the_previous_release "$ACCESSORYCTL" join "$id"
joined_profile=$(station_connection)
expect_match on_the_accessory "$joined_profile" '^Accessory WLED-AP'
records_before=$("$ACCESSORYCTL" list --json | jq -S '[.[] | {id, displayName, profile, ssid, hotspotBSSID}]')
profiles_before=$(profiles)
echo "$records_before" >>"$CASE_LOG"
echo "$profiles_before" >>"$CASE_LOG"
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')

# The upgrade.
check upgrade dpkg -i "$current"
new_version=$(version)
echo "upgraded to: $new_version" >>"$CASE_LOG"
check version_rises dpkg --compare-versions "$new_version" gt "$old_version"
expect agent_stopped_by_the_upgrade "$(systemctl is-active accessory-setup)" inactive
expect no_unit_failed "$(systemctl list-units --failed --no-legend 'accessory-setup*' | wc -l)" 0
expect expiry_timer_enabled "$(systemctl is-enabled accessory-setup-expire.timer 2>&1)" enabled
expect expiry_timer_active "$(systemctl is-active accessory-setup-expire.timer 2>&1)" active
expect_match the_new_agent_answers \
    "$(busctl get-property io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 Version)" "^s \"$new_version\"$"
expect records_kept "$("$ACCESSORYCTL" list --json | jq -S '[.[] | {id, displayName, profile, ssid, hotspotBSSID}]')" \
    "$records_before"
expect alice_has_it_after "$(alice GetConfiguredSSIDs)" 'as 1 "App-Net-9898"'
# 0.1.0's prerm stopped its agent, which ended its join as it stopped (0.1.0 knew no better):
# the home network is back and the join's profile gone, nothing else changed.
check home_after_the_upgrade_from_0_1_0 wait_home 30
expect no_profile_doubled_nor_left "$(profiles)" "$(grep -v '^Accessory WLED-AP:' <<<"$profiles_before")"

# From this release on, an upgrade keeps the join up and the next agent holds it: this package
# installed over itself runs its own prerm as an upgrade's.
check joined_before_the_reinstall "$ACCESSORYCTL" join "$id"
expect_match on_the_accessory_again "$(station_connection)" '^Accessory WLED-AP'
joined_profile=$(station_connection)
profiles_before=$(profiles)
check upgrade_over_itself dpkg -i "$current"
expect still_on_the_accessory "$(station_connection)" "$joined_profile"
expect no_profile_doubled "$(profiles)" "$profiles_before"
expect records_kept_again "$("$ACCESSORYCTL" list --json | jq -S '[.[] | {id, displayName, profile, ssid, hotspotBSSID}]')" \
    "$records_before"
output=$("$ACCESSORYCTL" leave 2>&1; echo "exit=$?")
echo "$output" >>"$CASE_LOG"
expect_match the_new_agent_holds_the_join "$output" "Left WLED-AP on $STATION through the agent; back on '$HOME_SSID'"
expect_match left_after_the_upgrade "$output" 'exit=0$'
check back_home_after_the_upgrade wait_home 30
journalctl -u accessory-setup --since "$journal_mark" --no-pager >"$OUT/logs/upgrade-agent.log" 2>&1
check passphrases_never_logged not grep -q -e app-pass-9898 -e wled1234 "$OUT/logs/upgrade-agent.log"
stop_ap wled
stop_ap app

# A purge leaves nothing: no state, no agent, no profile the agent made (alice's network too).
check purge apt-get purge -y accessory-setup
check no_state_after_purge not test -e /var/lib/accessory-setup
check no_agent_after_purge not pgrep -f /usr/libexec/accessory-setup/accessory-agent
check no_accessory_profile_after_purge no_accessory_profile
check reinstalled dpkg -i "$current"
allow_polkit
