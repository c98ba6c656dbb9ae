#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_numbers.sh - every numeric NUMAPLACE_* variable the interposer reads (preload/env.h) is
# honoured over its whole range or refused with one line (and its default kept); run's numeric
# flags the same, before the program starts (exit 125, one line); profile --rate too.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh"
need_interposer "the interposer's variables" numbers
T=$(mktemp -d /tmp/npl_test_numbers.XXXXXX)
trap 'rm -rf "$T"' EXIT
MAX63=9223372036854775807 PAST63=9223372036854775808
U64=18446744073709551615 PAST64=18446744073709551616
# var value lines: the program runs (status 0) and stderr has that many lines naming var
env_case() {
    env "$1=$2" NUMAPLACE_POLICY=cyclic LD_PRELOAD="$PRE" true 2>"$T/err"
    r=$?
    check "$1=$2: status 0, $3 line(s) naming it" "0 $3" "$r $(grep -c "$1" "$T/err")"
}
for v in NUMAPLACE_THRESHOLD NUMAPLACE_FIRST; do
    env_case $v 1 0
    env_case $v $MAX63 0
    for bad in 0 -1 $PAST63 $U64 $PAST64 1e3 " 5" 5x; do env_case $v "$bad" 1; done
done
env_case NUMAPLACE_THRESHOLD 8589934592G 1 # 2^63: one past
env_case NUMAPLACE_THRESHOLD 8589934591G 0
for good in 0 1 4096 $MAX63; do env_case NUMAPLACE_NEXT_TOUCH $good 0; done
for bad in -1 $PAST63 $U64 $PAST64 on; do env_case NUMAPLACE_NEXT_TOUCH "$bad" 1; done
# run's flags: one line, exit 125 (numaplace's own failure), nothing started
for bad in "--first 0" "--first $U64" "--first $PAST63" "--first -1" "--threshold 0" \
           "--threshold $PAST64" "--threshold 8589934592G" "--nodes $PAST64" "--nodes 0-$U64" \
           "--policy cyclic_block:$PAST64" "--policy bind_all:$PAST64"; do
    # shellcheck disable=SC2086
    $N run $bad -- sh -c 'echo started' >"$T/out" 2>"$T/err"
    check "run $bad: exit 125, one line, not started" "125 1 0" "$? $(grep -c . "$T/err") $(grep -c started "$T/out")"
done
# the largest --first places every large allocation, as no --first does
if [ -x "$P/alloc_styles" ]; then
    $N run -v --policy cyclic --threshold 64K -- "$P/alloc_styles" >/dev/null 2>"$T/all"
    $N run -v --policy cyclic --threshold 64K --first $MAX63 -- "$P/alloc_styles" >/dev/null 2>"$T/max"
    check "run --first 2^63-1 places as many as no --first" "$(grep -c 'placed under' "$T/all")" \
        "$(grep -c 'placed under' "$T/max")"
else
    bad "$P/alloc_styles is not built"
fi
# profile --rate: 1 to 1000000
for bad in 0 1000001 $U64 $PAST64 -5; do
    $N profile --rate "$bad" --out "$T/p.json" -- sh -c 'echo started' >"$T/out" 2>"$T/err"
    check "profile --rate $bad: exit 125, one line, not started" "125 1 0" "$? $(grep -c . "$T/err") $(grep -c started "$T/out")"
done
$N profile --rate 1000000 --out "$T/p.json" -- true >/dev/null 2>&1
check "profile --rate 1000000: accepted" 0 $?
summary numbers
