# The vendors' own setup APIs through the agent (#42), the two families scenario 59 leaves out,
# each simulated from its vendor's documentation and firmware (lab/accessories/vendor_setup_device.py)
# on its vendor's own network:
# - a Shelly Gen1 behind its open setup hotspot at 192.168.33.1 (GET /shelly for its MAC
#   address, then GET /settings/sta), picked and given the home network with
#   `accessoryctl pick --provision`. Its API says nothing of the network once it restarts, so
#   the command looks for it on the home network and finds it by the MAC address it reported
#   on its hotspot, in the instance name it announces there (_http._tcp, shelly1-<MAC>);
# - an ESPHome device behind its fallback hotspot (WPA2, the password of its configuration) at
#   192.168.4.1, as a person sets one up in steps: picked, its hotspot joined with that password
#   (`accessoryctl join --passphrase-file`), then given the home network through its captive
#   portal (GET /config.json, then /wifisave) by `accessoryctl provision ID`; found by the MAC
#   address in its _esphomelib._tcp announcement.
# Each time the home network comes back; the records go with every profile made for them, and
# neither passphrase reaches a screen or the journal.
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
printf 'fallback-ap-pass\n' >/run/lab/esphome-ap.pass
chmod 600 /run/lab/home.pass /run/lab/esphome-ap.pass
saved_acc1=${AP_SUBNET[acc1]}
check home_mdns start_home_mdns
check agent_owns_its_name start_agent
printed=""
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')
# announce HOST ADDRESS NAME TYPE TXT...: the shell command a simulated device runs once it has
# joined: its address and its service announced on the home network (avahi-publish in netns home).
announce() {
    local host=$1 address=$2 name=$3 type=$4
    shift 4
    echo "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R $host.local $address & avahi-publish -s -H $host.local $name $type 80 $* & wait"
}
# located ID ADDRESS: the record ID is located at ADDRESS.
located() {
    [[ $("$ACCESSORYCTL" show "$1" --json 2>/dev/null | jq -r '.location.addresses[0]?') == "$2" ]]
}

# Shelly Gen1 (Shelly 1): restarted onto the home network, it announces itself at .47.
AP_SUBNET[acc1]=192.168.33
VENDOR_ON_JOIN=$(announce shelly1-a4cf12f45678 "${AP_SUBNET[home]}.47" shelly1-A4CF12F45678 _http._tcp) \
    check shelly1_ready start_vendor_accessory shelly1 acc1 shelly-gen1 --leaves-hotspot --mac A4:CF:12:F4:56:78 \
    <<<"ssid=shelly1-A4CF12F45678"
check shelly1_visible wait_visible shelly1-A4CF12F45678
output=$("$ACCESSORYCTL" pick cloud.shelly.gen1 --select shelly1-A4CF12F45678 --timeout 60 --provision \
    --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass 2>&1; echo "exit=$?")
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match shelly1_looked_for "$output" "Looking for it on the home network"
expect_match shelly1_found "$output" "found there at ${AP_SUBNET[home]}\.47 \(shelly1-A4CF12F45678, _http\._tcp\)"
expect_match shelly1_left "$output" "Left shelly1-A4CF12F45678, back on '$HOME_SSID'"
expect_match shelly1_exit "$output" 'exit=0$'
expect shelly1_sent_once "$(grep -c "GOT ssid='$HOME_SSID' passphrase=matches" "$OUT/logs/vendor-shelly1.log")" 1
shelly1=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.profile == "cloud.shelly.gen1") | .id')
expect shelly1_mac_kept "$("$ACCESSORYCTL" show "$shelly1" --json | jq -r .network.macAddress)" A4:CF:12:F4:56:78
check shelly1_located located "$shelly1" "${AP_SUBNET[home]}.47"
stop_vendor_accessory shelly1
check back_home_after_shelly1 wait_home 30

# ESPHome: its fallback hotspot, at ESPHome's 192.168.4.1; once joined it announces itself at .46.
AP_SUBNET[acc1]=192.168.4
VENDOR_ON_JOIN=$(announce esphome-kitchen "${AP_SUBNET[home]}.46" esphome-kitchen _esphomelib._tcp \
    mac=a8032ab19876 version=2024.10.0) \
    check esphome_ready start_vendor_accessory esphome acc1 esphome --leaves-hotspot --mac A8:03:2A:B1:98:76 \
    <<<$'ssid=esphome-kitchen\nwpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\nwpa_passphrase=fallback-ap-pass'
check esphome_visible wait_visible esphome-kitchen
picked=$("$ACCESSORYCTL" pick io.esphome.captiveportal --select esphome-kitchen --timeout 60 --json 2>>"$CASE_LOG")
esphome=$(jq -r .id <<<"$picked")
check esphome_picked test -n "$esphome"
output=$("$ACCESSORYCTL" join "$esphome" --passphrase-file /run/lab/esphome-ap.pass 2>&1; echo "exit=$?")
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match esphome_joined "$output" 'exit=0$'
output=$("$ACCESSORYCTL" provision "$esphome" --ssid "$HOME_SSID" --passphrase-file /run/lab/home.pass 2>&1; echo "exit=$?")
printed+=$output
echo "$output" >>"$CASE_LOG"
expect_match esphome_found "$output" \
    "joined '$HOME_SSID': found there at ${AP_SUBNET[home]}\.46 \(esphome-kitchen, _esphomelib\._tcp\)\."
expect_match esphome_exit "$output" 'exit=0$'
expect esphome_sent_once "$(grep -c "GOT ssid='$HOME_SSID' passphrase=matches" "$OUT/logs/vendor-esphome.log")" 1
check esphome_located located "$esphome" "${AP_SUBNET[home]}.46"
stop_vendor_accessory esphome
unset VENDOR_ON_JOIN
AP_SUBNET[acc1]=$saved_acc1

check shelly1_record_removed "$ACCESSORYCTL" remove "$shelly1"
check esphome_record_removed "$ACCESSORYCTL" remove "$esphome"
end_checks 30
journalctl -u accessory-setup --since "$journal_mark" --no-pager >/run/lab/vendor-journal.txt 2>&1
check secrets_not_printed not grep -q -e "$HOME_PASSPHRASE" -e fallback-ap-pass <<<"$printed"
check secrets_not_journaled not grep -q -e "$HOME_PASSPHRASE" -e fallback-ap-pass /run/lab/vendor-journal.txt
