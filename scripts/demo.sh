#!/usr/bin/env bash
# Sets up the machine, builds accessoryctl, checks the shipped profiles and matches them
# against a recorded scan of a room full of setup hotspots and Bluetooth accessories.
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
