#!/usr/bin/env bash
# apt-get, noninteractive, waiting for another package manager to finish instead of failing:
# on a fresh machine apt-daily or unattended-upgrades often holds the locks for its first
# minutes, and two of the project's scripts may install at once. dpkg's lock is waited for by
# apt itself (DPkg::Lock::Timeout); the package lists' lock of `apt-get update` is not, so that
# is tried again while another process holds it.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
for attempt in $(seq 120); do
    apt-get -o DPkg::Lock::Timeout=600 "$@" 2>"$errors"
    status=$?
    if ((status == 0)) || ! grep -q "Could not get lock" "$errors"; then
        cat "$errors" >&2
        exit "$status"
    fi
    ((attempt == 1)) && echo "apt-get: another package manager holds its lock; waiting" >&2
    sleep 5
done
cat "$errors" >&2
exit "$status"
