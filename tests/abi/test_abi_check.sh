#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Self-test of scripts/abi_check.sh (run by `scripts/abi_check.sh --selftest`, part of
# scripts/test.sh): proves that the ABI check fails on a change. Two copies of the source tree
# (with the committed baseline abi/libnumaplace.abi) are changed and built, and each copy's own
# scripts/abi_check.sh must fail:
#   1. incompatible: a member added at the start of a public struct (struct npl_stats in
#      include/numaplace.h: size and every offset change) and npl_version hidden by the version
#      script (a removed function). abidiff's status must have bit 8 (incompatible) and the
#      report must name both changes.
#   2. compatible: a new public function npl_abi_added_test. abidiff's status is 4 (changed, not
#      incompatible): the check must still fail (the baseline must be updated and committed).
# The unmodified library comparing equal is the ABI stage itself (scripts/abi_check.sh).
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BASELINE=$ROOT/abi/libnumaplace.abi
[ -f "$BASELINE" ] || { echo "test_abi_check: no baseline $BASELINE"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TESTS=$ROOT/tests
. "$TESTS/check.sh" # ok, bad, summary
# each part stops at its first failure, and so does the test (set -e)
fail() { [ -f "$TMP/report" ] && cat "$TMP/report"; bad "test_abi_check: $*"; summary test_abi_check; exit 1; }

# copy DIR: the working tree as it is (tracked and untracked files, not build outputs)
copy() {
    mkdir -p "$1"
    if git rev-parse --git-dir >/dev/null 2>&1; then
        git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$1"
    else
        tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$1" -xf -
    fi
}
# run_check DIR: run DIR's own abi_check.sh (DIR/build, DIR/include, the baseline); its status
run_check() {
    st=0
    NPL_BUILD_DIR=build sh "$1/scripts/abi_check.sh" >"$TMP/report" 2>&1 || st=$?
    return 0
}

# ---- 1. incompatible change
T=$TMP/break
copy "$T"
grep -q '^struct npl_stats {$' "$T/include/numaplace.h" || fail "struct npl_stats not found"
sed -i 's/^struct npl_stats {$/struct npl_stats {\n    uint64_t npl_abi_break_test; \/**< added by test_abi_check *\//' \
    "$T/include/numaplace.h"
sed -i 's/^  local:$/  local:\n    npl_version;/' "$T/src/libnumaplace.map"
grep -q npl_abi_break_test "$T/include/numaplace.h" || fail "header not modified"
grep -q '^    npl_version;' "$T/src/libnumaplace.map" || fail "version script not modified"
echo "test_abi_check: 1. building a library with an incompatible change in $T/build"
cmake -S "$T" -B "$T/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON >/dev/null
nice cmake --build "$T/build" -j2 --target numaplace >/dev/null
nm -D --defined-only "$T/build/libnumaplace.so" | grep -q ' npl_version@' && fail "npl_version still exported"
run_check "$T"
[ $st -ne 0 ] || fail "abi_check.sh passed an incompatible change"
grep -q 'abidiff status [0-9]*: INCOMPATIBLE' "$TMP/report" || fail "not reported as incompatible"
grep -q 'npl_abi_break_test' "$TMP/report" || fail "the added member of struct npl_stats is not reported"
grep -q "function const char\* npl_version()" "$TMP/report" || fail "the removed function npl_version is not reported"
sed -n '/Removed function/,/data member changes/p' "$TMP/report"
grep 'abi_check: FAILED' "$TMP/report"
echo "test_abi_check: 1. PASS: the check fails and names the added member and the removed function"
ok

# ---- 2. compatible change (a function added): still a failure until the baseline is updated
T=$TMP/add
copy "$T"
sed -i 's|^const char \*npl_version(void);$|&\n/** added by test_abi_check */\nint npl_abi_added_test(void);|' \
    "$T/include/numaplace.h"
# beside npl_version, in a source file the library is built from (wherever the tree keeps it)
src=$(grep -l '^const char \*npl_version(void)' "$T"/src/*.c "$T"/src/*/*.c 2>/dev/null | head -1)
[ -n "$src" ] || fail "the source file defining npl_version not found"
printf '\nint npl_abi_added_test(void) { return 42; }\n' >>"$src"
grep -q npl_abi_added_test "$T/include/numaplace.h" || fail "header not modified"
echo "test_abi_check: 2. building a library with an added function in $T/build"
cmake -S "$T" -B "$T/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON >/dev/null
nice cmake --build "$T/build" -j2 --target numaplace >/dev/null
run_check "$T"
[ $st -ne 0 ] || fail "abi_check.sh passed an added function"
grep -q 'abidiff status 4: changed' "$TMP/report" || fail "not reported as a compatible change (status 4)"
grep -q 'npl_abi_added_test' "$TMP/report" || fail "the added function is not reported"
grep 'abi_check: FAILED' "$TMP/report"
echo "test_abi_check: 2. PASS: the check fails on an added function (abidiff status 4)"
ok
summary test_abi_check
