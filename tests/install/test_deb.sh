#!/bin/bash
# The .deb (cpack -G DEB) installed into a clean root: a QEMU guest (tools/numavm) whose root is a
# busybox initramfs with no numaplace in it (--install-tree none). Why the guest: installing the
# package on this host would change the host (dpkg -i writes /usr and dpkg's database), and a
# `dpkg --root` or `dpkg-deb -x` tree would need a chroot with /proc and /sys of a NUMA machine to
# run numaplace; the guest is a real root with real NUMA nodes. Busybox's dpkg installs the
# package there (its dpkg database lists only the packages of the .deb's Depends, at this host's
# versions, whose libraries tools/numavm copied): first refused with an empty database (Depends
# is checked), then installed. Then /usr/bin/numaplace topo, run --policy cyclic -- true,
# run --next-touch -- numaplace --version (a dynamically linked program; no LLVM libomp in that
# root: none is needed), run --next-touch -- true (busybox, static: refused, status 2), and
# run --policy cyclic -- deb_probe: the interposer mapped from /usr/lib/numaplace/, and an 8 MiB
# malloc split page by page over the 2 nodes (1024 + 1024 pages, move_pages). On the host: Depends names the package of
# every library the package's programs need that it does not ship itself.
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
deb=$(ls "$tmp"/pkg/numaplace_*.deb 2>/dev/null | head -1)
[ -f "$deb" ] || { echo "FAIL: cpack made no numaplace_*.deb"; exit 1; }
echo "package: $(basename "$deb"); Depends: $(dpkg-deb -f "$deb" Depends)"

# ---- on the host: contents and Depends ----
dpkg-deb -x "$deb" "$tmp/x"
for f in usr/bin/numaplace usr/lib/libnumaplace.so.0 usr/lib/libnumaplace.a usr/include/numaplace.h \
         usr/lib/numaplace/libnumaplace_preload.so usr/lib/pkgconfig/numaplace.pc \
         usr/lib/cmake/numaplace/numaplaceConfig.cmake usr/share/man/man1/numaplace-run.1; do
    [ -e "$tmp/x/$f" ] && ok || bad "not in the package: /$f"
done
depends=",$(dpkg-deb -f "$deb" Depends | sed 's/ *([^)]*)//g; s/ //g'),"
for elf in "$tmp/x/usr/bin/numaplace" "$tmp/x/usr/lib/libnumaplace.so.0" "$tmp/x/usr/lib/numaplace/libnumaplace_preload.so"; do
    for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [ -e "$tmp/x/usr/lib/$lib" ] && continue   # shipped by the package itself
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')
        pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
        [ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
        [[ "$depends" == *",$pkg,"* ]] && ok || bad "$(basename "$elf") needs $lib (package '$pkg'), not in Depends $depends"
    done
done

# ---- in a clean guest ----
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
    skip qemu "the .deb in a clean guest: qemu-system-x86_64 is not installed (scripts/deps.sh)"
    summary test_deb; exit
fi
name=$(basename "$deb")
script='st=/var/lib/dpkg/status; cp $st /tmp/st
command -v numaplace || echo "no numaplace before dpkg -i"
: > $st; busybox dpkg -i /root/'$name' >/dev/null 2>&1 && echo "installed WITHOUT its Depends" || echo "refused without its Depends"
cp /tmp/st $st; busybox dpkg -i /root/'$name' >/dev/null 2>&1; echo "dpkg -i rc=$?"
echo "which: $(command -v numaplace)"
numaplace topo > /tmp/topo; echo "topo rc=$?"; head -1 /tmp/topo
numaplace run --policy cyclic -- true 2>/dev/null; echo "run rc=$?"
ls /usr/lib/llvm-*/lib/libomp.so* /usr/local/bin/libomp.so* >/dev/null 2>&1 && echo "libomp present"
numaplace run --next-touch -- numaplace --version >/dev/null; echo "run --next-touch rc=$?"
numaplace run --next-touch -- true 2>/dev/null; echo "static program, --next-touch rc=$?"
numaplace run --policy cyclic -- deb_probe'
cc -O1 -Wall -Wextra -Werror tests/install/deb_probe.c -o "$tmp/deb_probe" || { echo "FAIL: cannot build deb_probe"; exit 1; }
out=$(NUMAVM_CACHE=${NUMAVM_CACHE:-} tools/numavm --quiet --nodes 2 --cpus-per-node 1 --mem-per-node 256 \
      --install-tree none --deb "$deb" --add "$tmp/deb_probe" -- sh -c "$script" 2>&1)
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
static program, --next-touch rc=2
preload: /usr/lib/numaplace/libnumaplace_preload.so
pages per node: 1024 1024"
[ $rc = 0 ] && [ "$out" = "$want" ] && ok || bad "the guest's output (rc=$rc) is not what was expected:
$want"
summary test_deb
