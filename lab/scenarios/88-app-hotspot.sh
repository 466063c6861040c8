# An application's own network, not an accessory's: alice, an unprivileged user granted only
# io.accessorysetup.configure-hotspot, applies a WPA2 configuration through the agent
# (Manager1.ApplyConfiguration, NEHotspotConfigurationManager.apply's counterpart) with
# busctl, and is on that network; GetConfiguredSSIDs lists it for her and not for bob, who can
# neither remove it nor apply one himself (polkit refuses him: userDenied); the agent restarts
# under the join and alice leaves it all the same; RemoveConfiguration deletes the profile. The
# passphrase reaches NetworkManager and no log.
for user in alice bob; do
    id -u "$user" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin "$user"
done
as() {
    local user=$1
    shift
    setpriv --reuid="$user" --regid="$user" --clear-groups "$@"
}
manager() {
    local user=$1
    shift
    # A join's answer may take longer than busctl's default 25 s under a loaded run (98 saw it).
    as "$user" busctl call --timeout=120 io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 "$@" 2>&1
}
allow_polkit alice io.accessorysetup.configure-hotspot
check agent_started start_agent
start_wpa2_ap app acc1 App-Net-3003 app-pass-3003
check app_network_visible wait_visible App-Net-3003

refused=$(manager bob ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-3003 passphrase s app-pass-3003 0)
expect_match bob_refused_by_polkit "$refused" 'not authorized by polkit for io\.accessorysetup\.configure-hotspot'
refused=$(manager alice ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-3003 passphrase s short 0)
expect_match short_passphrase_refused "$refused" 'configuration\.passphrase: has 5 characters'
check nothing_left_by_the_refusals no_accessory_profile

joined=$(manager alice ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-3003 passphrase s app-pass-3003 0)
expect_match alice_applied "$joined" '"ssid" s "App-Net-3003"'
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-app
profile=$(station_connection)
# nmcli's terse output escapes the colons; the owner tag is read from the stored keyfile.
expect profile_is_alices "$(nmcli -g connection.permissions connection show "$profile")" 'user\:alice'
expect profile_owner_tag "$(grep -rh '^accessory-setup.owner=' /etc/NetworkManager/system-connections/)" "accessory-setup.owner=$(id -u alice)"
expect psk_kept_by_networkmanager "$(nmcli -g 802-11-wireless-security.psk-flags connection show "$profile")" 0
check default_route_not_moved not default_route_via_accessory
# A package upgrade restarts the agent: NetworkManager keeps alice's join, and the next agent
# holds it again for her (the profile's permissions prove her its owner): bob cannot leave it,
# she can, and the home network comes back.
check agent_restarts systemctl restart accessory-setup
expect still_on_it_after_restart "$(station_connection)" "$profile"
expect_match bob_cannot_leave "$(manager bob Leave 'a{sv}' 0)" 'not connected to an accessory hotspot'
expect_match alice_leaves_after_restart "$(manager alice Leave 'a{sv}' 0)" '"restored" s "'
check back_home_after_leaving wait_home 30
joined=$(manager alice ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-3003 passphrase s app-pass-3003 0)
expect_match alice_applied_again "$joined" '"ssid" s "App-Net-3003"'

expect alice_lists_it "$(manager alice GetConfiguredSSIDs)" 'as 1 "App-Net-3003"'
expect bob_lists_none "$(manager bob GetConfiguredSSIDs)" 'as 0'
expect_match bob_cannot_remove "$(manager bob RemoveConfiguration s App-Net-3003)" 'no configuration of this caller is stored for App-Net-3003'
expect still_on_it "$(station_connection)" "$profile"

check alice_removes manager alice RemoveConfiguration s App-Net-3003
check back_home wait_home 30
expect alice_lists_none "$(manager alice GetConfiguredSSIDs)" 'as 0'
check no_profile_left no_accessory_profile
expect no_checkpoint "$(checkpoints)" 0
check agent_stops stop_agent
check passphrase_never_logged not grep -q app-pass-3003 "$OUT/logs/agent.log"
allow_polkit
