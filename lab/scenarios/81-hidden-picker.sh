# A hidden setup hotspot (hostapd's ignore_broadcast_ssid) in the agent's picker: a broadcast
# scan lists it without an SSID, so nothing matches it; a profile whose hotspot is `hidden`
# makes the agent's discovery probe for its item's exact SSID, the hotspot answers with its
# name, and the terminal picker (`pick --select`) picks it. `wifi list --probe` finds a second
# hidden hotspot by its name. The agent joins the picked one as a hidden network: its setup
# page answers, and `leave` brings the home network back.
mkdir -p /run/lab/hidden-profiles
cat >/run/lab/hidden-profiles/org.example.quiet.json <<'JSON'
{
  "schemaVersion": 1,
  "id": "org.example.quiet",
  "vendor": "Example",
  "supports": ["wifi"],
  "hotspot": { "security": "open", "passphrase": { "source": "none" }, "hidden": true },
  "handoff": "joinHotspot",
  "items": [ { "name": "Quiet plug", "descriptor": { "ssid": "Quiet-Setup-4004" } } ]
}
JSON
AGENT_PROFILES=/run/lab/hidden-profiles check agent_owns_its_name start_agent

start_ap hidden acc1 <<CONF
ssid=Quiet-Setup-4004
ignore_broadcast_ssid=1
CONF
start_ap other acc2 <<CONF
ssid=Quiet-Other-5005
ignore_broadcast_ssid=1
CONF
# named SSID JSON: how many access points the `wifi list --json` output lists under SSID.
named() { jq --arg ssid "$1" '[.accessPoints[] | select(.ssid == $ssid)] | length' <<<"$2"; }
# The control: a scan that does not probe for them hears them without their names.
broadcast=$("$ACCESSORYCTL" wifi list --rescan --json)
expect not_named_by_a_broadcast_scan "$(named Quiet-Setup-4004 "$broadcast")$(named Quiet-Other-5005 "$broadcast")" 00
# The other one (the picker's stays unprobed until the agent probes for it).
probed=$("$ACCESSORYCTL" wifi list --probe Quiet-Other-5005 --json)
expect named_when_probed_for "$(named Quiet-Other-5005 "$probed")" 1

picked=$("$ACCESSORYCTL" pick org.example.quiet --select Quiet-Setup-4004 --timeout 90 2>&1)
expect_match picked_in_the_picker "$picked" 'accessoryAdded Quiet plug'
check agent_probed_for_it grep -q 'probing for 1 hidden SSIDs' <(journalctl -u accessory-setup --no-pager)
id=$("$ACCESSORYCTL" list --json | jq -r '.[] | select(.ssid == "Quiet-Setup-4004") | .id' | head -n 1)
expect_match recorded "$id" '^[0-9a-f-]{36}$'

joined=$("$ACCESSORYCTL" join "$id" 2>&1)
expect_match join_through_agent "$joined" '^Joined Quiet-Setup-4004 on wlan3 through the agent'
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-hidden
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
check agent_stops_on_sigterm stop_agent
