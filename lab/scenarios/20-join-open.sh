# Joining an open setup hotspot: an address, the setup page, no default route through it,
# and leave brings the home network back.
start_ap plug acc1 <<CONF
ssid=Acme-Open-1001
CONF
check visible wait_visible Acme-Open-1001
check join "$ACCESSORYCTL" join --ssid Acme-Open-1001 --once
expect connection "$(station_connection)" "Accessory Acme-Open-1001"
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-plug
check no_default_route_via_accessory not default_route_via_accessory
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
expect profile_gone "$(our_profiles)" 0
