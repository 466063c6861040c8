# Two accessories share a prefix: a prefix join picks the stronger one. hwsim turns a
# radio's transmit power into the signal the station receives.
start_ap weak acc1 <<CONF
ssid=Acme-Setup-1111
CONF
start_ap strong acc2 <<CONF
ssid=Acme-Setup-2222
CONF
set_tx_power acc1 100
set_tx_power acc2 2000
check weak_visible wait_visible Acme-Setup-1111
check strong_visible wait_visible Acme-Setup-2222
"$ACCESSORYCTL" wifi list >>"$CASE_LOG"
output=$("$ACCESSORYCTL" join --ssid-prefix Acme-Setup- --once --json)
expect joined_the_stronger "$(jq -r .ssid <<<"$output")" Acme-Setup-2222
expect setup_page "$(setup_page 192.168.5.1)" setup-page-of-strong
check leave "$ACCESSORYCTL" leave
check back_home wait_home 20
