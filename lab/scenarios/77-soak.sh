# A soak with faults (#37): for SOAK_SECONDS (default 150), random operations of three users
# and two sandboxed applications against one WLED behind WLED-AP and the agent: alice and bob
# on the host, carol through two flatpak-style sandboxes (org.example.AcmePlug and
# org.example.OtherApp, each with a profile of its own). Operations: pick (under a kiosk policy),
# join, leave, provision (alice may; the others are refused by polkit), rename, remove, an
# application's own network applied and removed (alice), and a pick interrupted with Ctrl-C.
# Faults: the agent killed (SIGKILL), NetworkManager restarted, the accessory's hotspot gone
# for a step, the Bluetooth controller reset, a client killed (SIGKILL) mid-join. After every
# step the invariants hold: each "Accessory …" profile is joined or an applied configuration;
# nothing joined means home back and no checkpoint; each principal lists exactly its own
# records (never another's); the agent's memory, descriptors and threads stay bounded; no
# secret in the journal. Seeded (SOAK_SEED, printed; the test command takes it from the commit,
# lab/run alone from the clock) and reproducible: the same seed runs the same steps.
# Replay: SOAK_SEED=N SOAK_SECONDS=S lab/run 77-soak.
seed=${SOAK_SEED:-$(($(date +%s) % 100000))}
duration=${SOAK_SECONDS:-150}
RANDOM=$seed
echo "soak: seed $seed, $duration s" >>"$CASE_LOG"

for user in alice bob carol; do
    id -u "$user" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin "$user"
done
cat >/etc/polkit-1/rules.d/50-accessory-lab.rules <<'RULES'
polkit.addRule(function (action, subject) {
    var granted = ["io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join"];
    if (["alice", "bob", "carol"].indexOf(subject.user) >= 0 && granted.indexOf(action.id) >= 0) {
        return polkit.Result.YES;
    }
    if (subject.user == "alice" && (action.id == "io.accessorysetup.provision" ||
            action.id == "io.accessorysetup.configure-hotspot")) {
        return polkit.Result.YES;
    }
});
RULES
systemctl restart polkit

for app in org.example.AcmePlug org.example.OtherApp; do app_wled_profile "$app"; done
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
chmod 600 /run/lab/home.pass

principals=(alice bob acme other)
declare -A profile_of=([alice]=ge.wled.softap [bob]=ge.wled.softap
    [acme]=org.example.acmeplug.wled [other]=org.example.otherapp.wled)
# as PRINCIPAL COMMAND...: COMMAND as alice or bob, or as carol inside an application's sandbox.
as() {
    local who=$1
    shift
    case $who in
    alice | bob) setpriv --reuid="$who" --regid="$who" --clear-groups "$@" ;;
    acme) in_sandbox carol org.example.AcmePlug "$@" ;;
    other) in_sandbox carol org.example.OtherApp "$@" ;;
    esac
}
alice=$(id -u alice) bob=$(id -u bob) carol=$(id -u carol)
check agent_started start_agent "{\"schemaVersion\": 1, \"policies\": [
  {\"profiles\": [\"ge.wled.softap\", \"org.example.acmeplug.wled\", \"org.example.otherapp.wled\"],
   \"users\": [$alice, $bob, $carol], \"choose\": \"firstMatch\"}]}"
# WLED's own hotspot network (4.3.2.1), as the shipped profile has it; put back at the end.
saved_acc1=${AP_SUBNET[acc1]}
AP_SUBNET[acc1]=4.3.2
# Once given the network it announces itself on the home network (as 57 has it), where the
# agent looks for it after every provision.
check home_mdns start_home_mdns
VENDOR_ON_JOIN="DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/lab/home-bus; export DBUS_SYSTEM_BUS_ADDRESS; \
avahi-publish -a -R wled-777777.local ${AP_SUBNET[home]}.43 & \
avahi-publish -s -H wled-777777.local WLED-777777 _wled._tcp 80 mac=a0b765777777 & wait" \
    check wled_ready start_vendor_accessory wled acc1 wled --mac A0:B7:65:77:77:77 <<<"$WLED_AP"
start_wpa2_ap appnet acc2 App-Net-7777 app-pass-7777
check bluetooth_ready start_bluetooth
check wled_visible wait_visible WLED-AP

# The model: each principal's record ids, who holds the join, whether the configuration is applied.
declare -A records=([alice]="" [bob]="" [acme]="" [other]="")
joined_by="" configured=no ap_down=0
steps=0 faults=0 violations=0 max_rss=0 max_fds=0 max_threads=0
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')

say() { echo "soak step $steps: $*" >>"$CASE_LOG"; }
violation() {
    violations=$((violations + 1))
    record "step_${steps}_$1" FAIL "$2 (seed $seed: SOAK_SEED=$seed SOAK_SECONDS=$duration lab/run 77-soak)"
}
# run PRINCIPAL COMMAND...: the command's output in $out and its status in $status, bounded.
run() {
    local who=$1
    shift
    out=$(as "$who" timeout 150 "$ACCESSORYCTL" "$@" 2>&1)
    status=$?
    say "$who: accessoryctl $* -> $status: $(head -c 300 <<<"$out" | tr '\n' ' ')"
}
# The principal's record ids as the agent lists them, sorted, one line.
listed() { as "$1" timeout 60 "$ACCESSORYCTL" list --json 2>/dev/null | jq -r '[.[].id] | sort | join(" ")'; }
sorted() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort | paste -sd ' ' -; }
on_accessory() { [[ $(station_connection) == Accessory* ]]; }
stray_profiles() {
    local active
    active=$(station_connection)
    nmcli -g NAME connection show | grep '^Accessory ' | grep -vxF -- "$active" |
        { if [[ $configured == yes ]]; then grep -v 'App-Net-7777'; else cat; fi; }
}
no_stray_profile() { [[ -z $(stray_profiles) ]]; }
no_checkpoint_left() { on_accessory || [[ $(checkpoints) == 0 ]]; }
# A join the model does not know of (the agent finished one whose client was killed): whoever
# holds it is found by leaving as each in turn; only the holder may.
leave_unknown_join() {
    local who
    for who in "${principals[@]}"; do
        run "$who" leave
        [[ $status == 0 ]] && return
    done
}

invariants() {
    if ! eventually 30 no_stray_profile; then
        violation profiles "accessory profiles neither joined nor configured: $(stray_profiles | paste -sd ',' -)"
    fi
    if ! on_accessory && ! wait_home 60; then
        violation home "nothing joined and the home network not back: '$(station_connection)' $(station_ipv4)"
    fi
    if ! eventually 30 no_checkpoint_left; then
        violation checkpoint "nothing joined and $(checkpoints) checkpoint(s) left"
    fi
    if [[ -n $joined_by ]] && ! on_accessory; then
        say "the join of $joined_by ended (the hotspot went, NetworkManager restarted, or it was removed)"
        joined_by=""
    fi
    local who got
    for who in "${principals[@]}"; do
        got=$(listed "$who")
        [[ $got == "$(sorted "${records[$who]}")" ]] ||
            violation "records_$who" "$who lists [$got], expected [$(sorted "${records[$who]}")]"
    done
    local pid rss fds threads
    pid=$(systemctl show -p MainPID --value accessory-setup)
    if [[ -n $pid && $pid != 0 && -d /proc/$pid ]]; then
        rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$pid/status" 2>/dev/null || echo 0)
        threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
        fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
        ((rss > max_rss)) && max_rss=$rss
        ((fds > max_fds)) && max_fds=$fds
        ((threads > max_threads)) && max_threads=$threads
        ((rss <= 96)) || violation memory "the agent holds $rss MB"
        ((fds <= 128)) || violation descriptors "the agent holds $fds descriptors"
        ((threads <= 32)) || violation threads "the agent runs $threads threads"
    fi
    if journalctl --since "$journal_mark" --no-pager 2>/dev/null |
        grep -q -e "$HOME_PASSPHRASE" -e wled1234 -e app-pass-7777; then
        violation secret "a passphrase is in the journal"
    fi
}

# One random operation of one random principal.
operate() {
    local who=${principals[RANDOM % 4]} kind=$((RANDOM % 100)) id
    id=${records[$who]%% *}
    if [[ -z $id ]] || ((kind < 15)); then
        if [[ -n $id ]]; then
            # A pick interrupted by Ctrl-C while it looks: the session ends, no record is added.
            in_own_group as "$who" "$ACCESSORYCTL" pick "${profile_of[$who]}" --no-picker --timeout 60 >/dev/null 2>&1
            local pick=$!
            sleep $((1 + RANDOM % 3))
            kill -INT -- "-$pick" 2>/dev/null
            wait "$pick"
            say "$who: a pick interrupted -> $?"
            return
        fi
        run "$who" pick "${profile_of[$who]}" --no-picker --timeout 60 --json
        id=$(jq -r '.accessory.id? // .id? // empty' <<<"$out" 2>/dev/null | head -n 1)
        [[ $status == 0 && -n $id ]] && records[$who]=$id
    elif ((kind < 35)); then
        run "$who" join "$id"
        [[ $status == 0 ]] && joined_by=$who
    elif ((kind < 50)); then
        [[ -n $joined_by ]] && who=$joined_by
        run "$who" leave
        [[ $status == 0 && $who == "$joined_by" ]] && joined_by=""
    elif ((kind < 62)); then
        out=$(printf '%s\n' "$HOME_PASSPHRASE" | as "$who" timeout 150 "$ACCESSORYCTL" provision "$id" \
            --ssid "$HOME_SSID" --passphrase-stdin 2>&1)
        status=$?
        say "$who: provision $id -> $status: $(head -c 300 <<<"$out" | tr '\n' ' ')"
    elif ((kind < 74)); then
        run "$who" rename "$id" "Soak $steps"
    elif ((kind < 86)); then
        run "$who" remove "$id"
        if [[ $status == 0 ]]; then
            records[$who]=""
            [[ $joined_by == "$who" ]] && joined_by=""
        fi
    else
        local manager=(busctl call --timeout=120 io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1)
        if [[ $configured == no ]]; then
            out=$(as alice "${manager[@]}" ApplyConfiguration 'a{sv}a{sv}' 2 ssid s App-Net-7777 passphrase s \
                app-pass-7777 0 2>&1)
            status=$?
            say "alice: ApplyConfiguration -> $status: $out"
            [[ $status == 0 ]] && configured=yes joined_by=alice
        else
            out=$(as alice "${manager[@]}" RemoveConfiguration s App-Net-7777 2>&1)
            status=$?
            say "alice: RemoveConfiguration -> $status: $out"
            if [[ $status == 0 ]]; then
                configured=no
                [[ $joined_by == alice ]] && ! on_accessory && joined_by=""
            fi
        fi
    fi
}

# One random fault.
inject() {
    faults=$((faults + 1))
    case $((RANDOM % 5)) in
    0)
        say "fault: the agent killed (SIGKILL)"
        systemctl kill --signal=KILL accessory-setup 2>/dev/null
        ;;
    1)
        say "fault: NetworkManager restarted"
        systemctl restart NetworkManager
        nm-online -s -q -t 60 || true
        ;;
    2)
        say "fault: the hotspot gone for a step"
        stop_ap wled
        ap_down=2
        ;;
    3)
        say "fault: the Bluetooth controller reset"
        btmgmt --index 1 power off >/dev/null 2>&1
        btmgmt --index 1 power on >/dev/null 2>&1
        ;;
    4)
        local holders=() who id
        for who in "${principals[@]}"; do [[ -n ${records[$who]} ]] && holders+=("$who"); done
        if ((${#holders[@]} == 0)); then
            say "fault: the agent killed (SIGKILL), as nobody has a record to join"
            systemctl kill --signal=KILL accessory-setup 2>/dev/null
            return
        fi
        who=${holders[RANDOM % ${#holders[@]}]}
        id=${records[$who]%% *}
        say "fault: $who's join killed (SIGKILL) mid-call"
        in_own_group as "$who" "$ACCESSORYCTL" join "$id" >/dev/null 2>&1
        local client=$!
        sleep $((1 + RANDOM % 4))
        kill -KILL -- "-$client" 2>/dev/null
        wait "$client" 2>/dev/null
        # The agent may finish the join after the client went (the join lasts until a leave):
        # the invariants find it.
        ;;
    esac
}

deadline=$((SECONDS + duration))
while ((SECONDS < deadline)); do
    steps=$((steps + 1))
    # A fault every fourth step or so, and at least one by the third.
    if ((RANDOM % 4 == 0 || (steps >= 3 && faults == 0))); then inject; else operate; fi
    if ((ap_down > 0)); then
        ap_down=$((ap_down - 1))
        if ((ap_down == 0)); then
            say "the hotspot back"
            vendor_hotspot wled acc1 <<<"$WLED_AP"
        fi
    fi
    invariants
    [[ -z $joined_by ]] && on_accessory && leave_unknown_join
done
((ap_down > 0)) && vendor_hotspot wled acc1 <<<"$WLED_AP"

# Whoever holds a join leaves it; every record goes; the configuration is removed.
if [[ -n $joined_by ]]; then run "$joined_by" leave; fi
on_accessory && leave_unknown_join
[[ $configured == yes ]] && as alice busctl call io.accessorysetup /io/accessorysetup io.accessorysetup.Manager1 \
    RemoveConfiguration s App-Net-7777 >>"$CASE_LOG" 2>&1
for who in "${principals[@]}"; do
    for id in ${records[$who]}; do check "removed_${who}" as "$who" "$ACCESSORYCTL" remove "$id"; done
done
echo "soak: seed $seed: $steps steps, $faults faults, $violations invariant violations; the agent at most $max_rss MB, $max_fds descriptors, $max_threads threads" >>"$CASE_LOG"
expect_match soak_ran "$steps steps, $faults faults" '^([2-9]|[1-9][0-9]+) steps, [1-9][0-9]* faults$'
expect soak_violations "$violations" 0
record soak_seed PASS "seed $seed, $steps steps, $faults faults; the agent at most $max_rss MB, $max_fds descriptors, $max_threads threads"
stop_vendor_accessory wled
stop_ap appnet
AP_SUBNET[acc1]=$saved_acc1
rm -f /etc/accessory-setup/profiles/org.example.*.wled.json /etc/polkit-1/rules.d/50-accessory-lab.rules
end_checks 60
