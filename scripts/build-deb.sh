#!/usr/bin/env bash
# Builds the Debian packages from this checkout (installing the Debian packages the build
# needs): accessory-setup, and accessory-setup-picker with the graphical picker. It checks them:
# lintian (no error, and no warning that is not overridden with a reason), hardening-check on
# the four binaries, the Accessories window's desktop entry and metainfo (desktop-file-validate,
# appstreamcli validate), the maintainer scripts (installing starts no agent,
# removing stops the service, purging removes its state; the expiry timer is enabled, started,
# stopped and purged, its service never started but by it), `systemd-analyze security` on the
# agent's unit, printed, at or below its exposure of 2.0, and on the expiry service at or below
# 1.0, and `systemd-analyze verify` of the expiry units. The packages end up in .build/deb/.
#
#   scripts/build-deb.sh            build and check
#   scripts/build-deb.sh --quick    the same, compressing quickly (what scripts/test.sh runs)
#   scripts/build-deb.sh --no-build check the packages already in .build/deb/
set -euo pipefail
cd "$(dirname "$0")/.."
build=yes
case ${1-} in
--no-build) build=no ;;
--quick) export ACCESSORY_SETUP_QUICK_DEB=1 ;;
"") ;;
*) echo "usage: scripts/build-deb.sh [--quick | --no-build]" >&2; exit 64 ;;
esac

source scripts/setup.sh
install_packages debhelper dpkg-dev fakeroot lintian devscripts scdoc systemd appstream desktop-file-utils

out=.build/deb
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=$out/accessory-setup_${version}_${arch}.deb
picker_deb=$out/accessory-setup-picker_${version}_${arch}.deb
failures=()
fail() {
    echo "build-deb: $*" >&2
    failures+=("$1")
}

if [[ $build == yes ]]; then
    dpkg-checkbuilddeps
    rm -rf "$out"
    mkdir -p "$out"
    # dpkg-buildpackage writes next to the checkout; its files are moved into .build/deb/.
    start=$SECONDS
    dpkg-buildpackage -us -uc -b --post-clean
    echo "build-deb: dpkg-buildpackage took $((SECONDS - start)) s"
    for file in ../accessory-setup_"${version}"_* ../accessory-setup{,-picker}-dbgsym_"${version}"_* \
        ../accessory-setup-picker_"${version}"_*; do
        [[ -e $file ]] && mv "$file" "$out/"
    done
fi
for package in "$deb" "$picker_deb"; do
    [[ -f $package ]] || { echo "build-deb: no package at $package" >&2; exit 1; }
done
echo "build-deb: built $(ls "$out" | tr '\n' ' ')"
for package in "$deb" "$picker_deb"; do dpkg-deb --info "$package" | sed -n '/Package:/,$p'; done

echo "== lintian"
# Every warning left must be overridden in debian/accessory-setup.lintian-overrides with its
# reason; overridden tags are shown with that reason.
lintian --fail-on error,warning --info --show-overrides "$out"/accessory-setup_"${version}"_"${arch}".changes \
    || fail lintian "lintian reported an error or a warning that is not overridden (above)"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
dpkg-deb -x "$picker_deb" "$root"
dpkg-deb -e "$deb" "$root/DEBIAN"

echo "== hardening-check"
# --nofortify: the Swift code calls no fortifiable libc function through a header, and the C
# shim calls none (memcpy and the like come from the toolchain's static runtime, built
# without _FORTIFY_SOURCE). --nocfprotection: swiftc has no -fcf-protection, and the linker
# marks a binary IBT/SHSTK only when every object is, so the Swift objects and the static
# runtime keep it off; the C shim is built with -fcf-protection all the same.
for binary in usr/bin/accessoryctl usr/libexec/accessory-setup/accessory-agent usr/libexec/accessory-setup/accessory-picker \
    usr/libexec/accessory-setup/accessory-settings; do
    hardening-check --nofortify --nocfprotection "$root/$binary" || fail hardening "hardening-check failed for $binary"
    # No library of theirs is beside them: a search path would only make the loader look there.
    if readelf -d "$root/$binary" | grep -Eq '\((RPATH|RUNPATH)\)'; then
        fail hardening "$binary has a library search path: $(readelf -d "$root/$binary" | grep -E 'R(UN)?PATH')"
    fi
done

echo "== desktop entry and AppStream metainfo"
# The Accessories window's entry in the desktop's menus and settings, and its metainfo for
# software centres, as installed.
desktop-file-validate "$root/usr/share/applications/io.accessorysetup.Accessories.desktop" \
    || fail desktop "desktop-file-validate refused io.accessorysetup.Accessories.desktop (above)"
appstreamcli validate --no-net --explain "$root/usr/share/metainfo/io.accessorysetup.Accessories.metainfo.xml" \
    || fail appstream "appstreamcli refused io.accessorysetup.Accessories.metainfo.xml (above)"
[[ -f $root/usr/share/icons/hicolor/scalable/apps/io.accessorysetup.Accessories.svg ]] \
    || fail desktop "the Accessories window's icon is not installed"

echo "== maintainer scripts"
unit=accessory-setup.service
if grep -Eq "deb-systemd-invoke (start|restart)[^|]*$unit" "$root/DEBIAN/postinst" 2>/dev/null; then
    fail maintscripts "postinst starts or restarts $unit; installing must start nothing"
fi
grep -Eq "deb-systemd-invoke stop[^|]*$unit" "$root/DEBIAN/prerm" \
    || fail maintscripts "prerm does not stop $unit on removal"
grep -Eq 'rm -rf /var/lib/accessory-setup$' "$root/DEBIAN/postrm" \
    || fail maintscripts "postrm does not remove /var/lib/accessory-setup on purge"
# The expiry timer is the one unit installing enables and starts (dh_installsystemd's snippets
# also stop it on removal and forget it on purge); its service only the timer starts.
timer=accessory-setup-expire.timer
grep -Eq "deb-systemd-helper enable '$timer'" "$root/DEBIAN/postinst" \
    || fail maintscripts "postinst does not enable $timer"
grep -Eq "deb-systemd-invoke \\\$_dh_action '$timer'|deb-systemd-invoke (start|restart) '$timer'" "$root/DEBIAN/postinst" \
    || fail maintscripts "postinst does not start $timer"
grep -Eq "deb-systemd-invoke stop '$timer'" "$root/DEBIAN/prerm" \
    || fail maintscripts "prerm does not stop $timer on removal"
grep -Eq "deb-systemd-helper purge '$timer'" "$root/DEBIAN/postrm" \
    || fail maintscripts "postrm does not forget $timer on purge"
if grep -Eq "deb-systemd-(helper enable|invoke [a-z\\\$_]+) '?accessory-setup-expire.service" "$root/DEBIAN/postinst"; then
    fail maintscripts "postinst enables or starts accessory-setup-expire.service; only its timer may"
fi
for script in postinst prerm postrm; do
    echo "$script: $(grep -Eo "deb-systemd-(invoke|helper) [a-z-]+[^\"]*|rm -rf /var/lib/accessory-setup" \
        "$root/DEBIAN/$script" 2>/dev/null | sort -u | paste -sd ';' -)"
done
[[ $(stat -c %a "$root/usr/lib/NetworkManager/dispatcher.d/90-accessory-setup") == 755 ]] \
    || fail maintscripts "the dispatcher hook is not mode 755 (NetworkManager runs no group- or world-writable hook)"

echo "== systemd-analyze security"
# No worse than the unit's 2.0 ("OK" ends at 4.9); --threshold counts in tenths. It was 1.4
# with no capability at all; telling sandboxed applications apart (their /.flatpak-info under
# another user's /proc/PID/root) costs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH without a user
# namespace of the unit's own (packaging/systemd/accessory-setup.service says why).
systemd-analyze security --offline=true --threshold=20 "$root/lib/systemd/system/$unit" \
    || fail security "the unit's exposure is above 2.0, what it was before"

# The expiry units as installed, in a root of their own (the package's units and binaries, the
# host's targets they refer to), and the service's exposure: no capability, no network.
verify_root=$(mktemp -d)
trap 'rm -rf "$root" "$verify_root"' EXIT
mkdir -p "$verify_root/lib/systemd/system" "$verify_root/usr/bin"
cp /lib/systemd/system/*.target "$root"/lib/systemd/system/accessory-setup-expire.* "$verify_root/lib/systemd/system/"
cp "$root/usr/bin/accessoryctl" "$verify_root/usr/bin/"
systemd-analyze verify --man=no --root="$verify_root" "/lib/systemd/system/$timer" \
    /lib/systemd/system/accessory-setup-expire.service || fail verify "systemd-analyze verify refused the expiry units"
systemd-analyze security --offline=true --threshold=10 "$root/lib/systemd/system/accessory-setup-expire.service" \
    | tail -n 1 || fail security "the expiry service's exposure is above 1.0"

if ((${#failures[@]})); then
    echo "build-deb: failed: ${failures[*]}" >&2
    exit 1
fi
echo "build-deb: $deb and $picker_deb passed lintian, hardening-check, desktop-file-validate, appstreamcli validate, the maintainer-script checks, systemd-analyze security and verify"
