#!/usr/bin/env bash
# Installs what building and testing the project needs on Debian 12, as root.
# Idempotent: packages already present are not reinstalled and apt is not touched.
set -euo pipefail

# Debian packages: the Swift toolchain's own runtime needs, then the project's: libnm and
# GLib to build against; for the tests, NetworkManager itself, python-dbusmock, a D-Bus
# daemon, gdbus, iproute2 and unshare for the namespaces, openssl for test certificates, and
# scdoc for the man pages; for ESP-IDF provisioning, libcrypto to build against, and protoc,
# Python's protobuf, cryptography and srp for the provisioning device simulator and the test
# vectors; tmux to drive the terminal picker, and in it zsh and fish to complete commands; GTK 4
# and libadwaita for the graphical picker
# (SVG product images need librsvg's pixbuf loader), and to test it headless Xvfb, the AT-SPI
# bus, pyatspi and ImageMagick's import; bubblewrap, to run test clients in Flatpak-like
# sandboxes as sandboxed applications; avahi-daemon and avahi-publish, to find provisioned
# accessories on the home network.
packages=(
    binutils gcc git libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libsqlite3-0
    libstdc++-12-dev libxml2-dev libz3-dev pkgconf tzdata zlib1g-dev
    libglib2.0-dev libnm-dev
    network-manager python3-dbusmock python3-gi dbus libglib2.0-bin iproute2 util-linux openssl scdoc
    libssl-dev protobuf-compiler python3-protobuf python3-cryptography python3-srp python3-venv tmux
    libgtk-4-dev libadwaita-1-dev librsvg2-common adwaita-icon-theme fonts-dejavu-core
    xvfb xauth at-spi2-core python3-pyatspi imagemagick
    zsh fish bubblewrap
    avahi-daemon avahi-utils
)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Installs the Debian packages named that are not installed yet; other scripts (build-deb.sh)
# call it for what only they need.
install_packages() {
    local missing=() package
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    ((${#missing[@]})) || return 0
    if [[ $(id -u) != 0 ]]; then
        echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}"
    "$root/scripts/apt-get.sh" update -qq
    "$root/scripts/apt-get.sh" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
install_packages "${packages[@]}"

# Python peers from PyPI that the tests run against our own code, in a venv of the project's
# (Debian's python3 refuses pip installs outside one): esp-protocomm, an independent ESP-IDF
# provisioning client (security 1) that cross-checks the device simulator.
peers=$root/.build/python-peers
if ! "$peers/bin/python3" -c 'import esp_protocomm' >/dev/null 2>&1; then
    echo "setup: installing esp-protocomm into $peers"
    mkdir -p "$root/.build"
    /usr/bin/python3 -m venv "$peers"
    "$peers/bin/pip" install --quiet --disable-pip-version-check 'esp-protocomm==0.1.0'
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

# Runs `swift build` with the given arguments, printing its output only when it fails. A build
# that SwiftPM itself crashed in (killed by a signal: it has died in libdispatch's event loop
# now and then) runs once more; a build error is not retried.
quiet_build() {
    local log status=0
    log=$(mktemp)
    swift build "$@" >"$log" 2>&1 || status=$?
    if ((status > 128)); then
        echo "setup: swift build crashed (status $status); running it once more" >&2
        status=0
        swift build "$@" >"$log" 2>&1 || status=$?
    fi
    if ((status)); then cat "$log" >&2; fi
    rm -f "$log"
    return "$status"
}
