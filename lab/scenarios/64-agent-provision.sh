# Provisioning through the agent by an unprivileged user (#30): alice, under the real polkitd
# with a rule granting what an active local session gets (open-session, authorize, join,
# provision; not share-network), sets up two accessories with `accessoryctl pick --provision`.
# An ESP-IDF device behind the open setup hotspot PROV_7A3C asks for the proof of possession
# printed on it: alice types it, unseen, in the terminal picker (tmux); the agent joins the
# hotspot, gives the device the home network (security 1) and leaves, and the device joins.
# Giving it the network this machine stores instead is refused her (share-network). An Improv
# device (a BlueZ peripheral on hci1) is picked under the item that has the application confirm
# it, given the network while the picker waits, and confirmed. Back home, each is found where an
# mDNS responder in the home network announces it (avahi-publish): the ESP-IDF device by the
# address it reported, the Improv one by the MAC address in its ESPHome TXT record. Neither
# secret reaches a screen or the agent's journal.
id -u alice >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin alice
as_alice() { setpriv --reuid=alice --regid=alice --clear-groups "$@"; }
cat >/etc/polkit-1/rules.d/50-accessory-lab.rules <<'RULES'
polkit.addRule(function (action, subject) {
    var granted = ["io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join",
                   "io.accessorysetup.provision"];
    if (subject.user == "alice" && granted.indexOf(action.id) >= 0) {
        return polkit.Result.YES;
    }
});
RULES
systemctl restart polkit
mkdir -p /run/lab/alice
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/alice/home.pass
chown -R alice: /run/lab/alice
chmod 700 /run/lab/alice
chmod 600 /run/lab/alice/home.pass
printf 'lab-pop-4421\n' >/run/lab/prov.pop
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/prov.pop /run/lab/home.pass

# The shipped SoftAP profile, saying that the proof of possession is printed on the device.
mkdir -p /etc/accessory-setup/profiles
jq '.id = "lab.esp.prov" | .provisioning.proofOfPossession = {"source": "prompt", "hint": "The code on the device'"'"'s label."}
    | del(.items[].productImage)' /usr/share/accessory-setup/profiles/esp-idf-provisioning-softap.json \
    >/etc/accessory-setup/profiles/lab.esp.prov.json
check bluetooth fresh_bluetooth
improv=$(adapter_address hci1)
check agent_owns_its_name start_agent

start_ap prov acc1 <<CONF
ssid=PROV_7A3C
CONF
# Once the device joins the home network, it announces its web server there over mDNS, as an
# ESP-IDF device with the mdns component does (avahi-publish in netns home).
check home_mdns start_home_mdns
ESP_ON_JOIN="DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R esp-prov-7a3c.local ${AP_SUBNET[home]}.42 & \
avahi-publish -s -H esp-prov-7a3c.local 'ESP provisioning device 7A3C' _http._tcp 80 path=/ & wait"
export ESP_ON_JOIN
# Another web server of the home network, which is not it.
publish_home "Home printer" _http._tcp 631 printer.local "${AP_SUBNET[home]}.7"
check esp_device_ready start_esp_device 1
check prov_visible wait_visible PROV_7A3C

pane_run setpriv --reuid=alice --regid=alice --clear-groups "$ACCESSORYCTL" pick lab.esp.prov --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/alice/home.pass --timeout 120
check esp_listed pane_wait "1 found" 90
keys Enter
check pop_asked pane_wait "Proof of possession:" 30
expect_match pop_hint_shown "$(pane)" "The code on the device's label."
keys -l lab-pop-4421
sleep 0.5
check pop_not_shown not grep -q lab-pop-4421 <<<"$(pane)"
keys Enter
check esp_pick_ended pane_wait "[exit " 180
screen=$(pane)
echo "$screen" >>"$CASE_LOG"
expect_match esp_exit_status "$screen" '\[exit 0\]'
expect_match esp_added_by_alice "$screen" 'accessoryAdded ESP32 provisioning device \(SoftAP\) \(PROV_7A3C\) authorized'
expect_match esp_session_established "$screen" 'Session established\.'
expect_match esp_device_joined_home "$screen" "joined '$HOME_SSID' at "
expect_match esp_hotspot_left "$screen" "Left PROV_7A3C, back on '"
check esp_back_home wait_home 30
expect esp_record_of_alice "$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_7A3C") | .state')" authorized
# The record says where the device now is, as it reported it.
expect esp_record_network "$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_7A3C") | .network.ssid + " " + .network.ipv4Address')" "$HOME_SSID ${AP_SUBNET[home]}.42"
# Back home, the agent finds it through Avahi where its mDNS responder announces it, and the
# record (alice's own `show`) says where it lives.
located() { as_alice "$ACCESSORYCTL" list --json | jq -e '.[] | select(.ssid == "PROV_7A3C") | .location' >/dev/null; }
check esp_located eventually 90 located
expect esp_record_location "$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_7A3C") | .location | .instance + " " + .hostname + " " + (.addresses | join(",")) + " " + (.port | tostring)')" "ESP provisioning device 7A3C esp-prov-7a3c.local ${AP_SUBNET[home]}.42 80"
esp_id=$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_7A3C") | .id')
shown=$(as_alice "$ACCESSORYCTL" show "$esp_id")
echo "$shown" >>"$CASE_LOG"
expect_match esp_show_location "$shown" "location.addresses: ${AP_SUBNET[home]}.42"
expect_match agent_logged_evidence "$(journalctl -u accessory-setup --no-pager -o cat)" 'by reportedAddress'

# The network this machine stores is a system secret: not alice's to give away.
id=$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "PROV_7A3C") | .id')
check alice_joins_again as_alice "$ACCESSORYCTL" join "$id"
refused=$(as_alice busctl call io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 ProvisionAccessory \
    'sa{sv}' "$id" 0 2>&1)
echo "$refused" >>"$CASE_LOG"
expect_match stored_network_refused "$refused" 'io.accessorysetup.share-system-network'
check alice_leaves as_alice "$ACCESSORYCTL" leave
check back_home_again wait_home 30
stop_esp_device

# The Improv device, on hci1 (the agent listens on hci0): its advertisement asks for
# authorization, so the item that has the application confirm it is picked; it is provisioned
# while the picker waits (its button "pressed" 3 s after it started), then confirmed.
# Once on the home network it reports its address there, as ESPHome's Improv does: the agent
# locates it by that address alone.
improv_url="http://${AP_SUBNET[home]}.43/"
check improv_advertising start_improv_accessory /run/lab/improv-received.txt hci1 "$improv_url"
advertise_until_heard hci0 "$improv" /run/lab/improv.pid
output=$(as_alice "$ACCESSORYCTL" pick com.improv-wifi.ble --select "$improv" --timeout 90 --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/alice/home.pass 2>&1; echo "[exit $?]")
kill "$(cat /run/lab/advertiser.pid)" 2>/dev/null
echo "$output" >>"$CASE_LOG"
expect_match improv_exit_status "$output" '\[exit 0\]'
expect_match improv_connected "$output" 'Connecting over Bluetooth LE'
expect_match improv_redirect_url "$output" "joined '$HOME_SSID'; it goes on at ${improv_url//./\\.}\."
expect improv_received_ssid "$(sed -n 's/^ssid=//p' /run/lab/improv-received.txt 2>/dev/null)" "$HOME_SSID"
check improv_received_passphrase grep -qxF "passphrase=$HOME_PASSPHRASE" /run/lab/improv-received.txt
expect improv_confirmed "$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.profile == "com.improv-wifi.ble") | .state')" authorized
# On the home network the device announces its ESPHome API with its station's MAC address in
# the TXT record, as ESPHome does (the ESP32's Bluetooth address, $improv, is that base plus 2),
# at the address it reported.
station_mac=$(printf '%012x' $((0x${improv//:/} - 2)))
publish_home improv-kitchen _esphomelib._tcp 6053 improv-kitchen.local "${AP_SUBNET[home]}.43" "mac=$station_mac"
improv_located() {
    as_alice "$ACCESSORYCTL" list --json | jq -e '.[] | select(.profile == "com.improv-wifi.ble") | .location' >/dev/null
}
check improv_located eventually 90 improv_located
expect improv_record_location "$(as_alice "$ACCESSORYCTL" list --json | jq -r '.[] | select(.profile == "com.improv-wifi.ble") | .location | .instance + " " + (.addresses | join(",")) + " " + (.port | tostring)')" "improv-kitchen ${AP_SUBNET[home]}.43 6053"
expect_match improv_located_by_reported_address "$(journalctl -u accessory-setup --no-pager -o cat)" 'improv-kitchen \(_esphomelib\._tcp\).* by reportedAddress'
stop_improv_accessory

journal=$(journalctl -u accessory-setup --no-pager 2>&1)
check secrets_not_in_the_journal not grep -q -e lab-pop-4421 -e "$HOME_PASSPHRASE" <<<"$journal"
check secrets_not_printed not grep -q -e lab-pop-4421 -e "$HOME_PASSPHRASE" <<<"$screen$output"
rm -f /etc/polkit-1/rules.d/50-accessory-lab.rules
systemctl restart polkit
