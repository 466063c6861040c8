# Joining a WPA3-SAE setup hotspot. SAE's exchange is slow on the emulated CPU: a loaded CI
# run once used the join's whole default minute, so it gets two.
start_ap sensor acc1 <<CONF
ssid=Sensor-SAE-3003
wpa=2
wpa_key_mgmt=SAE
rsn_pairwise=CCMP
ieee80211w=2
sae_password=sensor-pass-3003
sae_pwe=2
CONF
check visible wait_visible Sensor-SAE-3003
check join bash -c "printf 'sensor-pass-3003\n' | $ACCESSORYCTL join --ssid Sensor-SAE-3003 --security wpa3 --passphrase-stdin --once --timeout 120"
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-sensor
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
