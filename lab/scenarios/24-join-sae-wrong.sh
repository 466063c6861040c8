# A WPA3-SAE hotspot that refuses the passphrase: said as such, not "not in range", and no
# profile left. (NetworkManager 1.42 fails it as ssid-not-found after the AP's auth-reject.)
start_ap sensor acc1 <<CONF
ssid=Sensor-SAE-2404
wpa=2
wpa_key_mgmt=SAE
rsn_pairwise=CCMP
ieee80211w=2
sae_password=the-right-sae-pass
sae_pwe=2
CONF
check visible wait_visible Sensor-SAE-2404
printf 'not-the-right-pass\n' >/run/lab/wrong.pass
output=$("$ACCESSORYCTL" join --ssid Sensor-SAE-2404 --security wpa3 --passphrase-file /run/lab/wrong.pass \
    --timeout 60 2>&1)
expect exit_status "$?" 1
expect_one_error error "$output" \
    'refused the passphrase|rejected the connection; the passphrase is most likely wrong'
check not_said_out_of_range not grep -q 'in range' <<<"$output"
end_checks 30
