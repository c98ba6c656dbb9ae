#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian 12 packages numaplace needs to build, test and run its guest (root or sudo).
# Quiet when everything is already there.
set -eu
PKGS="gcc make cmake pkg-config libhwloc-dev hwloc libnuma-dev numactl libomp-dev
      qemu-system-x86 busybox-static python3 python3-matplotlib python3-jsonschema time strace chromium likwid
      abigail-tools doxygen libcjson-dev clang-14 libdw-dev
      g++ gfortran openmpi-bin libopenmpi-dev
      libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev"
PKGS="$PKGS dpkg-dev" # cpack -G DEB: dpkg-shlibdeps computes the .deb's Depends
PKGS="$PKGS lintian lmod" # tests/install: lintian of the .debs; Lmod for EasyBuild (install.easybuild)
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 || {
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $missing
}
