#!/bin/sh
# Self-test of scripts/abi_check.sh (run by `scripts/abi_check.sh --selftest`, part of
# scripts/test.sh): proves that the ABI check fails on a break. A copy of the source tree gets
#   - a member added at the start of a public struct (struct npl_stats in include/numaplace.h:
#     every later member moves: an incompatible layout change), and
#   - npl_version hidden by the version script (a removed function),
# its libnumaplace.so is built, and abidiff against the committed baseline abi/libnumaplace.abi
# (same flags as the check) must exit with the "incompatible" bit (8) and name both changes.
# The unmodified library must compare equal (scripts/abi_check.sh without arguments).
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BASELINE=$ROOT/abi/libnumaplace.abi
[ -f "$BASELINE" ] || { echo "test_abi_check: no baseline $BASELINE"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "test_abi_check: FAIL: $*"; [ -f "$TMP/report" ] && cat "$TMP/report"; exit 1; }

# the working tree as it is (tracked and untracked files, not build outputs)
git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} "$TMP/" 2>/dev/null ||
    tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$TMP" -xf -
T=$TMP
grep -q '^struct npl_stats {$' "$T/include/numaplace.h" || fail "struct npl_stats not found"
sed -i 's/^struct npl_stats {$/struct npl_stats {\n    uint64_t npl_abi_break_test; \/**< added by test_abi_check *\//' \
    "$T/include/numaplace.h"
sed -i 's/^  local:$/  local:\n    npl_version;/' "$T/src/libnumaplace.map"
grep -q npl_abi_break_test "$T/include/numaplace.h" || fail "header not modified"
grep -q '^    npl_version;' "$T/src/libnumaplace.map" || fail "version script not modified"

echo "test_abi_check: building a library with a deliberate ABI break in $T/build"
cmake -S "$T" -B "$T/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON >/dev/null
nice cmake --build "$T/build" -j2 --target numaplace >/dev/null
nm -D --defined-only "$T/build/libnumaplace.so" | grep -q ' npl_version@' && fail "npl_version still exported"

rc=0
# shellcheck disable=SC2086
(cd "$T" && abidiff ${ABIDIFF_FLAGS:---headers-dir2 include --drop-private-types} \
    "$BASELINE" build/libnumaplace.so) >"$TMP/report" 2>&1 || rc=$?
[ $((rc & 3)) -eq 0 ] || fail "abidiff error (status $rc)"
[ $((rc & 8)) -ne 0 ] || fail "abidiff did not report an incompatible change (status $rc)"
grep -q 'npl_abi_break_test' "$TMP/report" || fail "the added member of struct npl_stats is not reported"
grep -q 'npl_version' "$TMP/report" || fail "the removed function npl_version is not reported"
sed -n '1,40p' "$TMP/report"
echo "test_abi_check: PASS: abidiff status $rc (incompatible) names the added member and the removed function"
