# Joining a hidden setup hotspot: it is found by probing for its SSID.
start_ap hidden acc1 <<CONF
ssid=Quiet-Setup-4004
ignore_broadcast_ssid=1
CONF
check join "$ACCESSORYCTL" join --ssid Quiet-Setup-4004 --hidden --once
expect_match address "$(station_ipv4)" '^192\.168\.4\.'
expect setup_page "$(setup_page 192.168.4.1)" setup-page-of-hidden
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
