# Improv provisioning of an accessory BlueZ has not heard yet, without `ble list` first:
# `improv provision` starts while the accessory is still starting up, and must keep
# discovering until it is heard (btvirt reports an advertiser only when a scan or an
# advertisement starts, so a discovery stopped early never hears it).
check bluetooth fresh_bluetooth
accessory=$(adapter_address hci0)
cached=/org/bluez/hci1/dev_${accessory//:/_}
check not_cached not busctl get-property org.bluez "$cached" org.bluez.Device1 Address
printf '%s\n' "$HOME_PASSPHRASE" >/run/lab/home.pass
"$ACCESSORYCTL" improv provision "$accessory" --adapter hci1 --ssid "$HOME_SSID" \
    --passphrase-file /run/lab/home.pass >/run/lab/provision.out 2>&1 &
provision=$!
check accessory_advertising start_improv_accessory /run/lab/improv-uncached-received.txt
deadline=$((SECONDS + 90))
while kill -0 "$provision" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
kill -0 "$provision" 2>/dev/null && kill "$provision"
wait "$provision"
expect exit_status "$?" 0
output=$(cat /run/lab/provision.out)
echo "$output" >>"$CASE_LOG"
expect_match redirect_url "$output" 'http://192\.168\.4\.1/setup'
expect accessory_received_ssid "$(sed -n 's/^ssid=//p' /run/lab/improv-uncached-received.txt 2>/dev/null)" "$HOME_SSID"
expect not_discovering "$(busctl get-property org.bluez /org/bluez/hci1 org.bluez.Adapter1 Discovering)" 'b false'
stop_improv_accessory
