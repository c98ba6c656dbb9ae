#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The .debs (cpack -G DEB: libnumaplace0, libnumaplace-mai0, libnumaplace-dev, numaplace; the
# guest installs the library and the tools) installed into a clean root: a QEMU guest (tools/numavm) whose root is a
# busybox initramfs with no numaplace in it (--install-tree none). Why the guest: installing the
# package on this host would change the host (dpkg -i writes /usr and dpkg's database), and a
# `dpkg --root` or `dpkg-deb -x` tree would need a chroot with /proc and /sys of a NUMA machine to
# run numaplace; the guest is a real root with real NUMA nodes. Busybox's dpkg installs the
# package there (its dpkg database lists only the packages of the .deb's Depends, at this host's
# versions, whose libraries tools/numavm copied): first refused with an empty database (Depends
# is checked), then installed. Then /usr/bin/numaplace topo, run --policy cyclic -- true,
# run --next-touch -- numaplace --version (a dynamically linked program; no LLVM libomp in that
# root: none is needed), run --next-touch -- true (busybox, static: refused, status 125), and
# run --policy cyclic -- deb_probe: the interposer mapped from /usr/lib/numaplace/, and an 8 MiB
# malloc split page by page over the 2 nodes (1024 + 1024 pages, move_pages). On the host: each
# file in its package; each package's Depends names the package of every library its ELF files
# need that it does not ship itself; lintian reports only the tags docs/INSTALL.md explains.
# env: BUILD (default build). Exit status: 0 passed, 1 failed.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npl-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
TESTS=$PWD/tests
. "$TESTS/check.sh" # ok, bad, skip, summary

[ -f "$BUILD/CPackConfig.cmake" ] || { echo "FAIL: no $BUILD/CPackConfig.cmake (configure first)"; exit 1; }
if ! nice cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1; then
    cat "$tmp/cpack.log"; echo "FAIL: cpack -G DEB"; exit 1
fi
# the packages as Debian splits them: library, MAi library, -dev, tools
for p in libnumaplace0 libnumaplace-mai0 libnumaplace-dev numaplace; do
    f=$(ls "$tmp"/pkg/${p}_*.deb 2>/dev/null | head -1)
    [ -f "$f" ] || { echo "FAIL: cpack made no ${p}_*.deb"; exit 1; }
    eval "deb_$(echo $p | tr -- - _)=\$f"
    echo "package: $(basename "$f"); Depends: $(dpkg-deb -f "$f" Depends)"
done
lib=$deb_libnumaplace0 tools=$deb_numaplace

# ---- on the host: contents (each file in its package, with its copyright file) and Depends ----
has() { # DEB FILE...: each FILE is in DEB
    d=$1; shift
    list=$(dpkg-deb -c "$d" | awk '{print $6}')
    for f in "$@"; do
        echo "$list" | grep -qx "\./$f" && ok || bad "not in $(basename "$d"): /$f"
    done
}
has "$lib" usr/lib/libnumaplace.so.0 usr/share/doc/libnumaplace0/copyright
has "$deb_libnumaplace_mai0" usr/lib/libnumaplace_mai.so.0 usr/share/doc/libnumaplace-mai0/copyright
has "$deb_libnumaplace_dev" usr/lib/libnumaplace.so usr/lib/libnumaplace.a usr/include/numaplace.h \
    usr/include/numaplace/version.h usr/lib/pkgconfig/numaplace.pc usr/lib/pkgconfig/numaplace-mai.pc \
    usr/lib/cmake/numaplace/numaplaceConfig.cmake usr/share/man/man3/npl_set_thread_policy.3.gz \
    usr/share/doc/libnumaplace-dev/copyright
has "$tools" usr/bin/numaplace usr/lib/numaplace/libnumaplace_preload.so \
    usr/share/man/man1/numaplace-run.1.gz usr/share/doc/numaplace/copyright
for d in "$tmp"/pkg/*.deb; do
    x=$tmp/x/$(dpkg-deb -f "$d" Package); mkdir -p "$x" && dpkg-deb -x "$d" "$x"
done
[ -e "$tmp/x/numaplace/usr/lib/libnumaplace.so.0" ] && bad "the tools package ships the library" || ok
for d in "$tmp"/pkg/*.deb; do
    pkg=$(dpkg-deb -f "$d" Package)
    depends=",$(dpkg-deb -f "$d" Depends | sed 's/ *([^)]*)//g; s/ //g'),"
    for elf in $(find "$tmp/x/$pkg" -type f \( -name '*.so*' -o -path '*/bin/*' \)); do
        for need in $(readelf -d "$elf" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [ -e "$tmp/x/$pkg/usr/lib/$need" ] && continue   # shipped by the package itself
            owner=$(cd "$tmp/x" && ls -d */usr/lib/"$need" 2>/dev/null | head -1 | cut -d/ -f1)
            if [ -z "$owner" ]; then   # a system library: its Debian package
                path=$(ldconfig -p | awk -v l="$need" '$1 == l && /x86-64/ { print $NF; exit }')
                owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
                [ -n "$owner" ] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
            fi
            [[ "$depends" == *",$owner,"* ]] && ok || bad "$pkg: $(basename "$elf") needs $need (package '$owner'), not in Depends $depends"
        done
    done
done
# lintian: nothing but the tags docs/INSTALL.md explains
if command -v lintian >/dev/null 2>&1; then
    explained=bogus-mail-host,bogus-mail-host-in-debian-changelog,maintscript-calls-ldconfig,pkg-config-unavailable-for-cross-compilation,groff-message,bad-whatis-entry
    out=$(lintian --suppress-tags "$explained" "$tmp"/pkg/*.deb 2>&1 | grep '^[EW]:')
    [ -z "$out" ] && ok || bad "lintian tags docs/INSTALL.md does not explain:
$out"
else
    skip lintian "lintian of the packages: lintian is not installed (scripts/deps.sh)"
fi

# ---- in a clean guest ----
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
    skip qemu "the .deb in a clean guest: qemu-system-x86_64 is not installed (scripts/deps.sh)"
    summary test_deb; exit
fi
script='st=/var/lib/dpkg/status; cp $st /tmp/st
command -v numaplace || echo "no numaplace before dpkg -i"
: > $st; busybox dpkg -i /root/'$(basename "$tools")' >/dev/null 2>&1 && echo "installed WITHOUT its Depends" || echo "refused without its Depends"
cp /tmp/st $st; busybox dpkg -i /root/'$(basename "$lib")' >/dev/null 2>&1 && busybox dpkg -i /root/'$(basename "$tools")' >/dev/null 2>&1; echo "dpkg -i rc=$?"
echo "which: $(command -v numaplace)"
numaplace topo > /tmp/topo; echo "topo rc=$?"; head -1 /tmp/topo
numaplace run --policy cyclic -- true 2>/dev/null; echo "run rc=$?"
ls /usr/lib/llvm-*/lib/libomp.so* /usr/local/bin/libomp.so* >/dev/null 2>&1 && echo "libomp present"
numaplace run --next-touch -- numaplace --version >/dev/null; echo "run --next-touch rc=$?"
numaplace run --next-touch -- true 2>/dev/null; echo "static program, --next-touch rc=$?"
numaplace run --policy cyclic -- deb_probe'
cc -O1 -Wall -Wextra -Werror tests/install/deb_probe.c -o "$tmp/deb_probe" || { echo "FAIL: cannot build deb_probe"; exit 1; }
out=$(NUMAVM_CACHE=${NUMAVM_CACHE:-} tools/numavm --quiet --nodes 2 --cpus-per-node 1 --mem-per-node 256 \
      --install-tree none --deb "$lib" --deb "$tools" --add "$tmp/deb_probe" -- sh -c "$script" 2>&1)
rc=$?
echo "$out" | sed 's/^/  guest| /'
want="no numaplace before dpkg -i
refused without its Depends
dpkg -i rc=0
which: /usr/bin/numaplace
topo rc=0
2 NUMA nodes (2 usable by this process), 2 CPUs and 2 cores allowed
run rc=0
run --next-touch rc=0
static program, --next-touch rc=125
preload: /usr/lib/numaplace/libnumaplace_preload.so
pages per node: 1024 1024"
[ $rc = 0 ] && [ "$out" = "$want" ] && ok || bad "the guest's output (rc=$rc) is not what was expected:
$want"
summary test_deb
