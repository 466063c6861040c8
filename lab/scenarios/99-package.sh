# The Debian package as installed by the runner: installing started no agent, the first call
# starts the agent by D-Bus activation, the unit's exposure is at most "OK", neither binary
# loads the shared libstdc++, NetworkManager runs the installed dispatcher hook when an
# accessory connection goes up and down and the agent records both, the expiry timer is
# enabled and its service runs, and remove then purge
# leave nothing running and, after purge, no state. Last of all: it removes the package.
# lab: last
expect installing_starts_nothing "$(cat /run/lab/state-after-install)" inactive
systemctl stop accessory-setup
expect stopped_before_the_call "$(systemctl is-active accessory-setup)" inactive
version=$(busctl get-property io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 Version)
expect_match call_answers "$version" '^s "[0-9.]+"'
expect started_by_dbus_activation "$(systemctl is-active accessory-setup)" active
exposure=$(systemd-analyze security accessory-setup --no-pager 2>&1 | tail -n 1)
echo "$exposure"
expect_match unit_exposure_ok "$exposure" 'Overall exposure level for accessory-setup.service: [0-9.]+ (OK|SAFE)'
check hook_installed test -x /usr/lib/NetworkManager/dispatcher.d/90-accessory-setup
# The expiry timer is enabled and running from the install on; its service, run now under its
# hardening (no capability, no network of its own), reaches NetworkManager and succeeds.
expect expiry_timer_enabled "$(systemctl is-enabled accessory-setup-expire.timer 2>&1)" enabled
expect expiry_timer_active "$(systemctl is-active accessory-setup-expire.timer 2>&1)" active
check expiry_service_runs systemctl start accessory-setup-expire.service
expect expiry_service_succeeded "$(systemctl show -p Result --value accessory-setup-expire.service)" success
# libstdc++ is linked in (debian/rules): neither binary loads the shared one.
expect ctl_without_shared_libstdcxx "$(LD_TRACE_LOADED_OBJECTS=1 /usr/bin/accessoryctl | grep -c 'libstdc++')" 0
expect agent_without_shared_libstdcxx \
    "$(LD_TRACE_LOADED_OBJECTS=1 /usr/libexec/accessory-setup/accessory-agent | grep -c 'libstdc++')" 0

start_wpa2_ap wled acc1 WLED-AP wled1234
picked=$("$ACCESSORYCTL" pick ge.wled.softap --select WLED-AP --timeout 90 2>&1)
expect_match picked "$picked" 'accessoryAdded WLED controller'
id=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "WLED-AP") | .id' | head -n 1)
since=$(date '+%Y-%m-%d %H:%M:%S')
check join_through_agent "$ACCESSORYCTL" join "$id"
check leave_through_agent "$ACCESSORYCTL" leave
check back_home wait_home 30
dispatcher_recorded() {
    local log
    for _ in $(seq 20); do
        log=$(journalctl -u accessory-setup --since "$since" --no-pager)
        grep -q "dispatcher: accessory connection 'Accessory WLED-AP' $1" <<<"$log" && return 0
        sleep 0.5
    done
    return 1
}
check dispatcher_up_recorded dispatcher_recorded up
check dispatcher_down_recorded dispatcher_recorded down
journalctl -u accessory-setup --no-pager -o short-precise >"$OUT/logs/agent.log" 2>&1

check remove apt-get remove -y accessory-setup
expect nothing_running_after_remove "$(systemctl is-active accessory-setup)" inactive
check no_expiry_timer_after_remove not systemctl is-active --quiet accessory-setup-expire.timer
check state_kept_after_remove test -d /var/lib/accessory-setup
check purge apt-get purge -y accessory-setup
check no_state_after_purge not test -e /var/lib/accessory-setup
check no_agent_process not pgrep -f /usr/libexec/accessory-setup/accessory-agent
