#!/usr/bin/env bash
# Builds the named products in release mode as the Debian package ships them, in
# .build/package: debian/rules builds the package's binaries with it and scripts/test.sh the
# benchmark, so a test run compiles the release modules once. Usage:
#   scripts/release-build.sh PRODUCT...    prints nothing but errors; the binaries end up in
#                                          .build/package/release/
#
# The flags, and why:
# Hardening swiftc does not do by itself: BIND_NOW and RELRO for the link, and for the C shim
# the flags dpkg-buildflags would give a C program. Swift code has stack protection on by
# default; it has no _FORTIFY_SOURCE counterpart.
# lld from the toolchain links, for the packed relative relocations (DT_RELR, glibc 2.36):
# the Swift runtime linked in has some 77,000 of them, 1.8 MB of table the loader would read at
# every start.
# --disable-local-rpath: SwiftPM would give each binary a RUNPATH of $ORIGIN, where no library
# of theirs is, and the loader would look in /usr/bin (and its glibc-hwcaps subdirectories) for
# every library first.
# libstdc++ linked statically: the Swift runtime uses little of it, and the shared library cost
# every start 1,666 symbol bindings, its relocations and its initialisation (1.5 million of the
# 2.1 million instructions a Swift "hello" takes), and the agent 950 kB resident. The
# toolchain's link line names -lstdc++ itself, so a directory holding only the archive is
# searched first (swiftc's -L comes before GCC's own directory); the GCC Runtime Library
# Exception allows it. Like the Swift runtime already linked in, a fix to it reaches these
# binaries with a rebuild, not with Debian's libstdc++6. Its symbols stay hidden (the toolchain
# links with --exclude-libs ALL), so a C++ library GTK may load into the picker (Mesa's LLVM)
# keeps to the shared one; the picker's tests pass with the packaged binary.
set -euo pipefail
cd "$(dirname "$0")/.."
(($#)) || { echo "usage: scripts/release-build.sh PRODUCT..." >&2; exit 64; }

swift=$(command -v swift || echo /opt/swift/usr/bin/swift)
scratch=$PWD/.build/package
static_libstdcxx=$scratch/static-libstdc++
# The toolchain's clang (beside swift) or GCC: either tells where GCC's libstdc++.a is.
cc=$(dirname "$(realpath "$swift")")/clang
[[ -x $cc ]] || cc=$(command -v gcc)
archive=$("$cc" -print-file-name=libstdc++.a)
if [[ ! -f $archive ]]; then
    echo "release-build: no libstdc++.a (libstdc++-12-dev)" >&2
    exit 1
fi
mkdir -p "$static_libstdcxx"
ln -sf "$archive" "$static_libstdcxx/libstdc++.a"

flags=(-c release --static-swift-stdlib --disable-local-rpath --disable-sandbox --scratch-path "$scratch"
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
    -Xcc -fstack-protector-strong -Xcc -fstack-clash-protection -Xcc -fcf-protection
    -Xswiftc "-L$static_libstdcxx")
for product in "$@"; do
    "$swift" build "${flags[@]}" --product "$product"
done
