#!/bin/sh
# vectorscan-prefix.sh DIR: Debian's Vectorscan (libvectorscan-dev,
# libvectorscan5) unpacked into DIR, for a build beside the system's
# Hyperscan. The two packages conflict (both ship libhs.so.5 and
# libhs.pc), so installing one removes the other; unpacked here, neither
# is installed and nothing else on the machine changes.
#
# Prints the pkg-config directory to give meson:
#   meson setup build-vectorscan -Dmatcher=vectorscan -Dpkg_config_path=$(sh tools/vectorscan-prefix.sh DIR)
# Programs in the build directory find DIR's libhs through the rpath meson
# gives them; an installed program needs DIR's library directory on
# LD_LIBRARY_PATH (or a real install of libvectorscan5).
#
# Does nothing but print the directory when DIR already holds the
# packages. Needs apt-get (with package lists: apt-get update) and dpkg.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
pcdir="$dir/usr/lib/$multiarch/pkgconfig"
if [ ! -f "$pcdir/libhs.pc" ]; then
    debs=$(mktemp -d)
    trap 'rm -rf "$debs"' EXIT
    # apt-get download writes into the current directory, as the invoking
    # user; the packages are not installed.
    if ! (cd "$debs" && apt-get download -q libvectorscan-dev libvectorscan5 >&2); then
        # a fresh machine has no package lists yet
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        $SUDO apt-get update -qq >&2
        (cd "$debs" && apt-get download -q libvectorscan-dev libvectorscan5 >&2)
    fi
    for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
    # The .pc file says prefix=/usr: make it point here.
    sed -i -e "s|^prefix=/usr\$|prefix=$dir/usr|" \
        -e "s|^exec_prefix=/usr\$|exec_prefix=\${prefix}|" \
        -e "s|^libdir=/usr/|libdir=\${prefix}/|" \
        -e "s|^includedir=/usr/|includedir=\${prefix}/|" "$pcdir/libhs.pc"
fi
echo "$pcdir"
