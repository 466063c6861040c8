#!/usr/bin/env bash
# Builds the radio lab's VM image from Debian packages: debootstrap of bookworm, the
# packages of packages.txt, the guest files of guest/. Writes vmlinuz, initrd.img and
# rootfs.img into the directory given as $1. Run as root.
#
# The Debian mirrors are the ones this machine's apt uses, so the lab needs no network
# beyond what apt-get already reaches.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
root=$out/rootfs
mkdir -p "$out"

# The archive and security mirrors, from the host's apt sources (deb822 or one-line format).
mirror_for() { # suite
    local suite=$1
    if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
        awk -v suite="$suite" '
            /^URIs:/ { uri = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = uri }
            /^$/ { uri = "" }
            END { if (found) print found }' /etc/apt/sources.list.d/*.sources | head -n 1
    fi
    if [[ -f /etc/apt/sources.list ]]; then
        awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }' /etc/apt/sources.list
    fi
}
archive=$(mirror_for bookworm | head -n 1)
security=$(mirror_for bookworm-security | head -n 1)
if [[ -z $archive ]]; then
    echo "lab: cannot find a bookworm mirror in this machine's apt sources" >&2
    exit 1
fi

packages=$(grep -v '^#' "$here/packages.txt" | tr -s ' \n' ' ')

echo "lab: debootstrap bookworm from $archive"
rm -rf "$root"
# debootstrap cannot resolve the virtual packages NetworkManager's polkit needs (logind), so
# it installs only the base; apt in the chroot installs the rest.
debootstrap --variant=minbase --include=systemd-sysv,dbus bookworm "$root" "$archive" >"$out/debootstrap.log" 2>&1 || {
    tail -n 30 "$out/debootstrap.log" >&2
    exit 1
}

{
    echo "deb $archive bookworm main"
    echo "deb $archive bookworm-updates main"
    [[ -n $security ]] && echo "deb $security bookworm-security main"
} >"$root/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
# A small initrd: only what mounts a virtio ext4 root.
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo 'MODULES=list' >"$root/etc/initramfs-tools/conf.d/lab.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >"$root/etc/initramfs-tools/modules"

for fs in proc sys dev; do mount --bind "/$fs" "$root/$fs"; done
trap 'for fs in dev sys proc; do umount -l "$root/$fs" 2>/dev/null || true; done' EXIT
echo "lab: installing the image's packages"
chroot "$root" apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends $packages >"$out/apt.log" 2>&1 || {
    tail -n 30 "$out/apt.log" >&2
    exit 1
}
chroot "$root" apt-get clean
for fs in dev sys proc; do umount -l "$root/$fs"; done
trap - EXIT
rm -f "$root/usr/sbin/policy-rc.d"

echo radiolab >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 radiolab\n' >"$root/etc/hosts"
echo '/dev/vda / ext4 rw,noatime 0 1' >"$root/etc/fstab"
chroot "$root" passwd -d root >/dev/null # for the serial console of an interactive run only
install -D -m 0644 "$here/guest/90-lab.conf" "$root/etc/NetworkManager/conf.d/90-lab.conf"
install -D -m 0755 "$here/guest/lab-boot" "$root/usr/local/sbin/lab-boot"
install -D -m 0644 "$here/guest/lab.service" "$root/etc/systemd/system/lab.service"
ln -sf /etc/systemd/system/lab.service "$root/etc/systemd/system/multi-user.target.wants/lab.service"
# What only slows the boot of a throw-away VM.
for unit in systemd-networkd-wait-online.service NetworkManager-wait-online.service apt-daily.timer \
    apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer dpkg-db-backup.timer \
    systemd-tmpfiles-clean.timer getty@tty1.service systemd-timesyncd.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
# Kernel modules a VM with a virtio disk, hwsim and vhci never loads.
for modules in "$root"/lib/modules/*/kernel; do
    rm -rf "$modules"/drivers/{gpu,media,infiniband,scsi,iio,staging,usb,hwmon,md,net/ethernet,isdn,mtd} "$modules"/sound
    find "$modules/drivers/net/wireless" -mindepth 1 -maxdepth 1 ! -name mac80211_hwsim.ko -exec rm -rf {} +
    chroot "$root" depmod -a "$(basename "$(dirname "$modules")")"
done
rm -rf "$root"/usr/share/{doc,man,locale}/* "$root"/var/lib/apt/lists/*_Packages

cp -L "$root/vmlinuz" "$out/vmlinuz"
cp -L "$root/initrd.img" "$out/initrd.img"
rm -f "$out/rootfs.img"
mkfs.ext4 -q -L labroot -d "$root" "$out/rootfs.img" 2G
rm -rf "$root"
echo "lab: image ready in $out"
