#!/usr/bin/env bash
# Installs what building and testing the project needs on Debian 12, as root.
# Idempotent: packages already present are not reinstalled and apt is not touched.
set -euo pipefail

# Debian packages: the Swift toolchain's own runtime needs, then the project's: libnm and
# GLib to build against; for the tests, NetworkManager itself, python-dbusmock, a D-Bus
# daemon, gdbus, iproute2 and unshare for the namespaces, openssl for test certificates, and
# tmux to drive the terminal picker.
packages=(
    binutils gcc git libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libsqlite3-0
    libstdc++-12-dev libxml2-dev libz3-dev pkgconf tzdata zlib1g-dev
    libglib2.0-dev libnm-dev
    network-manager python3-dbusmock python3-gi dbus libglib2.0-bin iproute2 util-linux openssl
    tmux
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ((${#missing[@]})); then
    if [[ $(id -u) != 0 ]]; then
        echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        if [[ -x $candidate/swift ]]; then export PATH="$candidate:$PATH"; break; fi
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    cat >&2 <<'MESSAGE'
setup: no Swift toolchain found. Install Swift 6 for Debian 12 (the tarball from swift.org,
unpacked so that /opt/swift/usr/bin/swift exists, or any swift on PATH) and run this again.
MESSAGE
    exit 1
fi
version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9]*\)\..*/\1/p' | head -n 1)
if [[ -z $version || $version -lt 6 ]]; then
    echo "setup: Swift 6 or later is needed; found: $(swift --version 2>&1 | head -n 1)" >&2
    exit 1
fi

# Runs `swift build` with the given arguments, printing its output only when it fails.
quiet_build() {
    local log status=0
    log=$(mktemp)
    swift build "$@" >"$log" 2>&1 || status=$?
    if ((status)); then cat "$log" >&2; fi
    rm -f "$log"
    return "$status"
}
