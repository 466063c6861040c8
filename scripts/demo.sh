#!/usr/bin/env bash
# Sets up the machine, builds accessoryctl, checks the shipped profiles and matches them
# against a recorded scan of a room full of setup hotspots and Bluetooth accessories; then
# runs the same tool against simulated radios in the radio lab: the agent picking an
# accessory (kiosk policy), joining its setup hotspot and coming back home, and
# provisioning an Improv accessory over Bluetooth LE.
# DEMO_LAB=0 skips the lab part (which builds a VM image the first time, about 2 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== building accessoryctl"
quiet_build --product accessoryctl
accessoryctl="$(swift build --show-bin-path)/accessoryctl"

profiles=(profiles/*.json)
profile_options=()
for profile in "${profiles[@]}"; do profile_options+=(--profile "$profile"); done

echo "== accessoryctl profile validate profiles/*.json"
"$accessoryctl" profile validate "${profiles[@]}"
echo
echo "== accessoryctl match --profile ... --scan examples/scans/demo.json"
"$accessoryctl" match "${profile_options[@]}" --scan examples/scans/demo.json

if [[ ${DEMO_LAB:-1} != 0 ]]; then
    echo
    echo "== the radio lab: pick, join and leave an accessory through the agent, and provision an Improv accessory"
    lab/run 80-agent-pick-join 60-improv-provision
fi
