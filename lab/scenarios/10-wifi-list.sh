# accessoryctl wifi list shows an accessory's setup hotspot with its security.
start_wpa2_ap plug acc1 Acme-Setup-7F3A accessory-pass
check visible wait_visible Acme-Setup-7F3A
json=$("$ACCESSORYCTL" wifi list --json)
entry() { jq -c --arg field "$1" '.accessPoints[] | select(.ssid == "Acme-Setup-7F3A") | .[$field]' <<<"$json"; }
expect json_security "$(entry security)" '["wpa-psk"]'
expect json_frequency "$(entry frequency)" 2437
table=$("$ACCESSORYCTL" wifi list)
expect_match table_row "$(grep Acme-Setup-7F3A <<<"$table")" '^Acme-Setup-7F3A +[0-9A-F:]{17} +[0-9]+% +2437 MHz +wpa-psk$'
