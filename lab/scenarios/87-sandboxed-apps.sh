# Two sandboxed applications of one user, each run as flatpak runs an app: bubblewrap with a
# root of its own, /usr and the system bus bound in, and a /.flatpak-info naming the app. Each
# has an installed profile naming it (`applications`). The kiosk policy picks for Acme Plug and
# it joins the plug's hotspot through the agent; the other app sees nothing of that accessory,
# is refused Acme Plug's profile as if it did not exist, and neither may be the picker itself
# (`pick --select` registers a picker agent). On the host, the same user lists the accessory
# with its application.
id -u carol >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin carol
carol=$(id -u carol)
as_carol() { setpriv --reuid=carol --regid=carol --clear-groups "$@"; }
cat >/etc/polkit-1/rules.d/50-accessory-lab.rules <<'RULES'
polkit.addRule(function (action, subject) {
    var granted = ["io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join"];
    if (subject.user == "carol" && granted.indexOf(action.id) >= 0) {
        return polkit.Result.YES;
    }
});
RULES
systemctl restart polkit

# The apps' profiles: the shipped WLED profile under ids of their own, each naming its app.
for app in org.example.AcmePlug org.example.OtherApp; do app_wled_profile "$app"; done
acme=org.example.acmeplug.wled other=org.example.otherapp.wled
# in_app APP COMMAND...: COMMAND as carol inside APP's sandbox.
in_app() { in_sandbox carol "$@"; }

check agent_started start_agent "{\"schemaVersion\": 1, \"policies\": [
  {\"profiles\": [\"$acme\", \"$other\"], \"users\": [$carol], \"choose\": \"strongestSignal\", \"settleSeconds\": 4}]}"
start_wpa2_ap wled acc1 WLED-AP wled1234
check sandbox_has_its_info in_app org.example.AcmePlug grep -qx 'name=org.example.AcmePlug' /.flatpak-info

picked=$(in_app org.example.AcmePlug "$ACCESSORYCTL" pick "$acme" --no-picker --join --timeout 90 --json 2>/run/lab/acme-pick.err)
cat /run/lab/acme-pick.err >>"$CASE_LOG"
echo "$picked" >>"$CASE_LOG"
id=$(jq -r '.accessory.id' <<<"$picked")
expect_match app_picked "$id" '^[0-9a-f-]{36}$'
expect app_joined "$(jq -r '.joined.ssid' <<<"$picked")" WLED-AP
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-wled
expect record_names_the_app "$(jq -r '.accessory.application' <<<"$picked")" org.example.AcmePlug
check agent_logged_the_app bash -c "journalctl -u accessory-setup --no-pager | grep -q 'org.example.AcmePlug'"

expect app_lists_its_own "$(in_app org.example.AcmePlug "$ACCESSORYCTL" list --json | jq -c '[.[].id]')" "[\"$id\"]"
expect other_app_sees_none "$(in_app org.example.OtherApp "$ACCESSORYCTL" list --json | jq length)" 0
for command in "show $id" "rename $id Mine" "remove $id" "join $id"; do
    # shellcheck disable=SC2086
    refused=$(in_app org.example.OtherApp "$ACCESSORYCTL" $command 2>&1)
    expect_match "other_app_cannot_${command%% *}" "$refused" 'you have no accessory with the id'
done
foreign=$(in_app org.example.OtherApp "$ACCESSORYCTL" pick "$acme" --no-picker --timeout 5 2>&1)
absent=$(in_app org.example.OtherApp "$ACCESSORYCTL" pick org.example.no-such-profile --no-picker --timeout 5 2>&1)
expect_match other_app_refused_the_profile "$foreign" "no installed profile has the id '$acme'"
expect foreign_profile_reads_as_absent "${foreign//$acme/PROFILE}" "${absent//org.example.no-such-profile/PROFILE}"
refused=$(in_app org.example.AcmePlug "$ACCESSORYCTL" pick "$acme" --select WLED-AP --timeout 5 2>&1)
expect_match app_cannot_be_its_own_picker "$refused" 'NotAuthorized|not allowed|sandbox'

host=$(as_carol "$ACCESSORYCTL" list --json)
expect host_lists_the_apps_accessory "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .application' <<<"$host")" \
    org.example.AcmePlug

left=$(in_app org.example.AcmePlug "$ACCESSORYCTL" leave 2>&1)
expect_match app_left "$left" 'through the agent'
check back_home wait_home 20
check agent_stops stop_agent
check passphrase_never_logged not grep -q wled1234 "$OUT/logs/agent.log"
rm -f /etc/polkit-1/rules.d/50-accessory-lab.rules /etc/accessory-setup/profiles/org.example.*.json
systemctl restart polkit
