#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_contract.sh - numaplace keeps the program's contract with the kernel (issue 36): the
# calls of tests/progs/contract_calls.c (fortified read/pread/recv/fread, preadv2/pwritev2,
# recvmmsg/sendmmsg, poll/select in a loop and asleep, getrandom, the stat family, getdents64,
# vmsplice, a guard page, dirty tracking, a read-only file mapped MAP_FIXED) print the same lines
# plain, under `numaplace profile` at a high rate, under `run --next-touch` with full arms
# (NUMAPLACE_NEXT_TOUCH_FULL=1: one node here) and under `run --profile` of its own profile.
# Each line is one check, in each build (gcc -D_FORTIFY_SOURCE=2, =3, clang; gcc with ASan+UBSan
# and with TSan, under the normal build's interposer: a sanitizer's report changes the status).
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
for prog in contract_calls_f2 contract_calls_f3 contract_calls_clang contract_calls_asan contract_calls_tsan; do
    if [ ! -x "$P/$prog" ]; then
        [ $prog = contract_calls_clang ] && skip prog-contract_calls_clang "$prog: not built (no clang)" && continue
        bad "$P/$prog is not built"
        continue
    fi
    found=1
    # the sanitizers' runs: a report ends the program with another status (the lines compared);
    # no leak check (the program leaves a block mapped over by a file, on purpose); the
    # interposer is loaded before the ASan runtime, which ASan would refuse by default
    unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
    rate=50000
    case $prog in
        *_asan) export ASAN_OPTIONS=detect_leaks=0:allow_user_segv_handler=1:verify_asan_link_order=0:exitcode=86
                export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ;;
        *_tsan) export TSAN_OPTIONS=halt_on_error=1:exitcode=86 ;;
    esac
    "$P/$prog" >"$T/ref" 2>/dev/null
    echo "status $?" >>"$T/ref"
    check "plain $prog: status 0" "status 0" "$(tail -1 "$T/ref")"
    NUMAPLACE_PROFILE_RATE=$rate same profile $prog $N profile --rate $rate --out "$T/p.json" -- "$P/$prog"
    # a runtime's static data is its own: TSan's 42 MiB context, profiled, had its pages armed
    # under TSan's background thread, which died of the fault (1 run in 4 at this rate)
    if [ -s "$T/p.json" ] && command -v python3 >/dev/null; then
        check "profile $prog: no array in a runtime's (libc, a sanitizer's) static data" 0 "$(python3 -c '
import json, re, sys
a = json.load(open(sys.argv[1]))["arrays"]
print(sum(bool(re.search(r"/lib(c|tsan|asan|ubsan|gomp|stdc\+\+)\.so", x["site"].get("object", ""))) for x in a))' "$T/p.json")"
    fi
    NUMAPLACE_NEXT_TOUCH_FULL=1 same next-touch $prog $N run --next-touch -- "$P/$prog"
    if [ -s "$T/p.json" ]; then
        NUMAPLACE_NEXT_TOUCH_FULL=1 same run-profile $prog $N run --profile "$T/p.json" -- "$P/$prog"
    else
        bad "$prog: numaplace profile wrote no profile"
    fi
done
[ $found = 1 ] || bad "no contract_calls build"
summary contract
