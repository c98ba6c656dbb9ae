#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ABI check of libnumaplace.so against the committed baseline abi/libnumaplace.abi (libabigail).
#
#   scripts/abi_check.sh             compare; exit 0 only when the ABI is identical to the baseline
#   scripts/abi_check.sh --update    rewrite abi/libnumaplace.abi from the current build (commit it)
#   scripts/abi_check.sh --selftest  prove the check fails: tests/abi/test_abi_check.sh builds
#                                    changed copies (a member added to a public struct and a
#                                    function dropped; a function added) and expects this script
#                                    to fail on each, naming the changes
#   scripts/abi_check.sh --exports LIB  only check LIB's dynamic exports: every defined symbol is
#                                    npl_[a-z0-9]* at version NUMAPLACE_0.2 or 0.3, or one of the
#                                    npl__ internals listed in src/libnumaplace.map's node
#                                    NUMAPLACE_PRIVATE (the command's unstable face) at that
#                                    version (ctest abi.exports)
#   scripts/abi_check.sh --cli CLI   the numaplace command defines no npl__ symbol: it calls the
#                                    library's, compiled once (ctest arch.compiled_once)
#
# How: the library is built in build/ (RelWithDebInfo: -g; NPL_BUILD_DIR to use another build
# directory, which must have debug info). --update: `abidw --headers-dir include
# --drop-private-types` writes its ABI (types defined outside include/, e.g. the opaque
# struct npl_topo of src/topology/topology.h, stay declaration-only: their layout is not ABI; no paths of
# the checkout, short file names). Check: `abidiff --headers-dir2 include --drop-private-types
# abi/libnumaplace.abi build/libnumaplace.so` (the baseline side was filtered by abidw:
# --headers-dir1 on an abixml input makes abidiff 2.2 abort).
#
# Policy: ANY difference fails (abidiff exit status != 0), not only incompatible ones. abidiff's
# status is a bit mask: 1 tool error, 2 usage error, 4 ABI changed (e.g. functions added),
# 8 incompatible change (removed function, changed struct layout...). A compatible change (4, e.g.
# a new function) is still a change of the public ABI: it must be reviewed and the baseline
# regenerated with --update and committed in the same change. An incompatible change (8) also
# needs a SONAME bump (SOVERSION in CMakeLists.txt) and a new version node in
# src/libnumaplace.map. The report is printed on failure.
#
# Part of scripts/test.sh (the CI test command): the ABI stage fails CI on a break.
#
# After header changes are merged (new or changed npl_ functions/structs): build, review the
# report of scripts/abi_check.sh, then scripts/abi_check.sh --update && git add abi/ && commit.
set -eu
cd "$(dirname "$0")/.."
BASELINE=abi/libnumaplace.abi
BUILD=${NPL_BUILD_DIR:-build}
# abi/private.suppr: the command's unstable face (NUMAPLACE_PRIVATE) is no ABI
ABIDW_FLAGS="--headers-dir include --drop-private-types --no-corpus-path --no-comp-dir-path
             --short-locs --suppressions abi/private.suppr"
ABIDIFF_FLAGS="--headers-dir2 include --drop-private-types --suppressions abi/private.suppr"
export ABIDW_FLAGS ABIDIFF_FLAGS

need_tools() {
    command -v abidw >/dev/null 2>&1 && command -v abidiff >/dev/null 2>&1 && return 0
    sh scripts/deps.sh # installs abigail-tools
}

# has_debug LIB: abidw/abidiff need DWARF (without it only symbols would be compared)
has_debug() {
    readelf -S "$1" | grep -q '\.debug_info' ||
        { echo "abi_check: $1 has no debug info (build it with -g, e.g. RelWithDebInfo)" >&2; exit 2; }
}
# abi_of LIB OUT: the ABI of a built library as abixml
abi_of() {
    has_debug "$1"
    # shellcheck disable=SC2086
    abidw $ABIDW_FLAGS --out-file "$2" "$1"
}

# exports LIB: only npl_ symbols, each at NUMAPLACE_0.2 or (the functions added in 0.3) NUMAPLACE_0.3
exports() {
    syms=$(nm -D --defined-only "$1" | awk '$2 != "A" {print $3}')
    private=$(sed -n '/^NUMAPLACE_PRIVATE {/,/^}/s/^ *\(npl__[a-z0-9_]*\);$/\1@@NUMAPLACE_PRIVATE/p' \
              src/libnumaplace.map)
    bad=$(echo "$syms" | grep -v '^npl_[a-z0-9][A-Za-z0-9_]*@@NUMAPLACE_0\.[23]$' |
          grep -vxF "$private" || true)
    if [ -n "$bad" ]; then
        echo "abi_check: $1 exports symbols outside the npl_ API or without version NUMAPLACE_0.2/0.3"
        echo "(or npl__ internals not listed in NUMAPLACE_PRIVATE):"
        echo "$bad"
        return 1
    fi
    echo "abi_check: $1: $(echo "$syms" | grep -c '@@NUMAPLACE_0') npl_ symbols ($(echo "$syms" | grep -c '@@NUMAPLACE_0\.3$') at NUMAPLACE_0.3, the rest at 0.2), $(echo "$syms" | grep -c '@@NUMAPLACE_PRIVATE$') internals at NUMAPLACE_PRIVATE for the command, nothing else exported"
}

# cli CLI: the command defines no npl__ symbol (text, data or bss): compiled once, in the library
cli() {
    defs=$(nm "$1") || { echo "abi_check: nm $1 failed"; return 1; }
    own=$(echo "$defs" | grep ' [TtDdBbRr] npl__' || true)
    if [ -n "$own" ]; then
        echo "abi_check: $1 defines npl__ symbols (library code compiled into the command again):"
        echo "$own"
        return 1
    fi
    echo "abi_check: $1 defines no npl__ symbol; it calls $(echo "$defs" | grep -c ' U npl__') of the library's"
}

case "${1:-}" in
--exports) exports "$2"; exit $? ;;
--cli) cli "$2"; exit $? ;;
--selftest) need_tools; exec sh tests/abi/test_abi_check.sh ;;
--update | "") ;;
*) sed -n '2,/^set -eu/p' "$0" | sed '$d'; exit 2 ;;
esac

need_tools
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON >/dev/null
fi
nice cmake --build "$BUILD" -j2 --target numaplace >/dev/null
LIB=$BUILD/libnumaplace.so
exports "$LIB"

if [ "${1:-}" = "--update" ]; then
    mkdir -p abi
    abi_of "$LIB" "$BASELINE"
    echo "abi_check: baseline $BASELINE rewritten from $LIB; review and commit it"
    exit 0
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -f "$BASELINE" ] || { echo "abi_check: no baseline $BASELINE (run $0 --update)"; exit 1; }
has_debug "$LIB"
rc=0
# shellcheck disable=SC2086
abidiff $ABIDIFF_FLAGS "$BASELINE" "$LIB" >"$TMP/report" 2>&1 || rc=$?
if [ $rc -eq 0 ]; then
    echo "abi_check: ABI identical to $BASELINE"
    exit 0
fi
cat "$TMP/report"
what="changed (compatible: added functions/variables...)"
[ $((rc & 8)) -ne 0 ] && what="INCOMPATIBLE change"
[ $((rc & 3)) -ne 0 ] && what="abidiff error"
echo "abi_check: FAILED (abidiff status $rc: $what) against $BASELINE."
echo "  If the change is intended: scripts/abi_check.sh --update and commit $BASELINE"
echo "  (an incompatible change also needs a SOVERSION bump and a new node in src/libnumaplace.map)."
exit 1
