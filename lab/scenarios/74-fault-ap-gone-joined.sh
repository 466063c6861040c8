# The hotspot disappears while joined; once NetworkManager has noticed, `leave` says the
# accessory connection had already ended and cleans up: no profile, no checkpoint, home back.
start_ap plug acc1 <<CONF
ssid=Lost-Setup-7404
CONF
check visible wait_visible Lost-Setup-7404
check join "$ACCESSORYCTL" join --ssid Lost-Setup-7404 --once
expect connection "$(station_connection)" "Accessory Lost-Setup-7404"
stop_ap plug
noticed() {
    local deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)); do
        [[ $(station_connection) != "Accessory Lost-Setup-7404" ]] && return 0
        sleep 0.5
    done
    return 1
}
check networkmanager_noticed noticed
output=$("$ACCESSORYCTL" leave 2>&1)
expect exit_status "$?" 0
expect_match already_ended "$output" 'already ended'
end_checks 30
