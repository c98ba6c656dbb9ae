#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_contract.sh - numaplace keeps the program's contract with the kernel (issue 36): the
# calls of tests/progs/contract_calls.c (fortified read/pread/recv/fread, preadv2/pwritev2,
# recvmmsg/sendmmsg, poll/select in a loop and asleep, getrandom, the stat family, getdents64,
# vmsplice, a guard page, dirty tracking, a read-only file mapped MAP_FIXED) print the same lines
# plain, under `numaplace profile` at a high rate, under `run --next-touch` with full arms
# (NUMAPLACE_NEXT_TOUCH_FULL=1: one node here) and under `run --profile` of its own profile.
# Each line is one check, in each build (gcc -D_FORTIFY_SOURCE=2, =3, clang).
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh"
need_interposer "the contract cases (programs under numaplace)" contract
T=$(mktemp -d /tmp/npl_test_contract.XXXXXX)
trap 'rm -rf "$T"' EXIT
# same MODE PROG: each line of PROG under MODE (the rest of the arguments) equals the plain one
same() {
    mode=$1 prog=$2
    shift 2
    "$@" >"$T/got" 2>"$T/err"
    echo "status $?" >>"$T/got"
    while IFS= read -r want; do
        key=$(echo "$want" | cut -c1-22 | sed 's/ *$//')
        got=$(awk -v k="$key" '{n = substr($0, 1, 22); sub(/ +$/, "", n); if (n == k) {print; exit}}' "$T/got")
        check "$mode $prog: $key" "$want" "$got"
    done <"$T/ref"
    extra=$(grep -c . "$T/got")
    check "$mode $prog: as many lines" "$(grep -c . "$T/ref")" "$extra"
}
found=0
for prog in contract_calls_f2 contract_calls_f3 contract_calls_clang; do
    if [ ! -x "$P/$prog" ]; then
        [ $prog = contract_calls_clang ] && skip prog-contract_calls_clang "$prog: not built (no clang)" && continue
        bad "$P/$prog is not built"
        continue
    fi
    found=1
    "$P/$prog" >"$T/ref" 2>/dev/null
    echo "status $?" >>"$T/ref"
    NUMAPLACE_PROFILE_RATE=50000 same profile $prog $N profile --rate 50000 --out "$T/p.json" -- "$P/$prog"
    NUMAPLACE_NEXT_TOUCH_FULL=1 same next-touch $prog $N run --next-touch -- "$P/$prog"
    if [ -s "$T/p.json" ]; then
        NUMAPLACE_NEXT_TOUCH_FULL=1 same run-profile $prog $N run --profile "$T/p.json" -- "$P/$prog"
    else
        bad "$prog: numaplace profile wrote no profile"
    fi
done
[ $found = 1 ] || bad "no contract_calls build"
summary contract
