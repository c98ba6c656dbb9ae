#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Hostile input to the numaplace command (round 3): every usage error exits 2 with exactly one
# line on stderr and nothing on stdout, fast (never a hang, never the usage text dumped on
# stderr). Cases that failed before: no command / unknown command / run's parse errors printed
# 17-21 lines; `map --synthetic` with a bad or huge machine exited 1 (huge: never finished);
# `demo --policy bind_all:<missing node>` exited 1; measure/report took contradicting or empty
# options (below).
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # pass/fail counts, summary
usage_error() { # name, command...: exit 2 (run and profile: 125, their own failure, as env(1)'s),
    # one line on stderr, empty stdout, within 30 s
    name=$1
    shift
    want=2
    case "${1:-}" in run | profile) want=125 ;; esac
    timeout 30 "$N" "$@" >"$T/out" 2>"$T/err"
    rc=$? lines=$(wc -l <"$T/err") out=$(wc -c <"$T/out")
    if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && [ "$out" = 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc (want $want), $lines stderr lines (want 1), $out stdout bytes"
        head -3 "$T/err"
    fi
}
MAXNODE=$("$N" topo --json | python3 -c 'import json,sys; print(max(n["os_id"] for n in json.load(sys.stdin)["nodes"]))' 2>/dev/null || echo 0)
MISSING=$((MAXNODE + 1))
LONG=$(printf '%010000d' 0 | tr 0 c)
usage_error "no command"
usage_error "unknown command" frobnicate
usage_error "empty command" ""
usage_error "run without program" run
usage_error "run unknown option" run --next-touch=bogus -- true
usage_error "run --policy cyclic@" run --policy "cyclic@" -- true
usage_error "run --policy bind_all:" run --policy "bind_all:" -- true
usage_error "run --policy @@" run --policy "@@" -- true
usage_error "run --policy 10k chars" run --policy "$LONG" -- true
usage_error "run --nodes missing" run --nodes "$MISSING" -- true
usage_error "run --pin S99:0" run --pin "S99:0" -- true
usage_error "run --threshold 1KKK" run --threshold 1KKK -- true
usage_error "map policy unicode" map --policy "cycl€c" --nodes 2 --pages 4
usage_error "map --pages 0" map --policy cyclic --nodes 2 --pages 0
usage_error "map --pages 2^64" map --policy cyclic --nodes 2 --pages 18446744073709551616
usage_error "map --synthetic bad" map --policy cyclic --synthetic "numa:2 bogus" --pages 4
usage_error "map --synthetic 10^15 PUs" map --policy cyclic --synthetic "pack:100000 numa:100000 pu:100000" --pages 4
usage_error "map --synthetic 2^64 arity" map --policy cyclic --synthetic "numa:18446744073709551616 pu:1" --pages 4
usage_error "demo missing node" demo --policy "bind_all:$MISSING" --mib 1
usage_error "demo subset missing node" demo --policy "cyclic@0,$MISSING" --mib 1
usage_error "demo bad policy" demo --policy "cyclic:" --mib 1
usage_error "where no pid" where
usage_error "where bad pid" where 99999999999999999999
usage_error "topo extra" topo extra
# measure/report: contradicting sizes, and an --out that is empty or too long (measure ran for
# minutes before failing on ""; report read past the end of its copy of ""; a long name was cut)
LONGPATH="/tmp/$(printf '%05000d' 0)"
usage_error "measure --quick --full" measure --quick --full
usage_error "measure --out empty" measure --quick --reps 1 --out ""
usage_error "measure --out too long" measure --quick --reps 1 --out "$LONGPATH"
usage_error "report --quick --full" report --quick --full
usage_error "report --out empty" report --quick --reps 1 --no-plots --out ""
usage_error "report --out too long" report --quick --reps 1 --no-plots --out "$LONGPATH"
# numbers: every numeric option reads one grammar (src/base/number.h): whole decimal digits (and
# K/M/G for sizes), in range, never wrapped. `run --first 18446744073709551615` once wrapped and
# placed 0 allocations; --threshold, the config and the interposer disagreed about 0 and 2^63.
U64_MAX=18446744073709551615 U64_PAST=18446744073709551616
for v in $U64_MAX $U64_PAST -1 0 1e3 0x10 " 1" "1 " +1 "" 18014398509481985K 17179869185G \
         8589934592G 1KK; do
    usage_error "run --first '$v'" run --policy cyclic --first "$v" -- true
    usage_error "run --threshold '$v'" run --policy cyclic --threshold "$v" -- true
    usage_error "map --nodes '$v'" map --policy cyclic --nodes "$v" --pages 4
    usage_error "map --pages '$v'" map --policy cyclic --nodes 2 --pages "$v"
    usage_error "map --cores-per-node '$v'" map --policy cyclic --nodes 2 --cores-per-node "$v" --pages 4
    usage_error "map --page-size '$v'" map --policy cyclic --nodes 2 --page-size "$v" --pages 4
    usage_error "map --rows '$v'" map --policy cyclic --nodes 2 --rows "$v" --pages 4
    usage_error "demo --mib '$v'" demo --mib "$v"
    usage_error "measure --reps '$v'" measure --quick --no-write --reps "$v"
    usage_error "report --reps '$v'" report --quick --no-plots --out "$T/report" --reps "$v"
    usage_error "where '$v'" where -- "$v"
done
for v in $U64_MAX $U64_PAST 4294967296 0x0 "0-" ",0" "0,0" "1-0" " 0"; do # hwloc alone: 2^32 -> node 0
    usage_error "run --nodes '$v'" run --nodes "$v" -- true
done
# the largest accepted values still run the program (nothing wraps to a smaller one)
ok_run() { # name, expected stdout, command...: exit 0 and that output
    name=$1 want=$2
    shift 2
    out=$(timeout 30 "$N" "$@" 2>"$T/err")
    rc=$?
    if [ "$rc" = 0 ] && [ "$out" = "$want" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc (want 0), stdout \"$out\" (want \"$want\")"
        head -3 "$T/err"
    fi
}
# run --policy on a dynamically linked program needs the interposer (sanitizer builds have none)
ok_run_policy() { # as ok_run
    if [ -n "${NPL_SANITIZE:-}" ]; then skip_no_interposer "$1" ""; else ok_run "$@"; fi
}
ok_run_policy "run --first 2^63-1" "9223372036854775807" run --policy cyclic --first 9223372036854775807 -- sh -c 'echo $NUMAPLACE_FIRST'
ok_run_policy "run --threshold 8589934591G" "8589934591G" run --policy cyclic --threshold 8589934591G -- sh -c 'echo $NUMAPLACE_THRESHOLD'
ok_run "map --page-size 4K" "0 1 0 1" map --policy cyclic --nodes 2 --page-size 4K --pages 4
# a config file that cannot exist is no config file: HOME of 5,000 characters (its first 4,095
# name a directory that exists), HOME below a regular file
LONGHOME=$(printf '/.%.0s' $(seq 2500))
HOME=$LONGHOME ok_run "run with a HOME of 5,000 characters" "ran" run -- sh -c 'echo ran'
: >"$T/file"
HOME=$T/file ok_run "run with HOME below a regular file" "ran" run -- sh -c 'echo ran'
# the config's threshold takes the same sizes: 2^64 - 1 refused (set-up failure: run's own, 125),
# 64K passed on
printf '[policy]\nthreshold = %s\n' $U64_MAX >"$T/big.conf"
NUMAPLACE_CONFIG=$T/big.conf timeout 30 "$N" run --policy cyclic -- true 2>"$T/err"
rc=$? lines=$(wc -l <"$T/err")
if [ "$rc" = 125 ] && [ "$lines" = 1 ] && grep -q threshold "$T/err"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL config threshold 2^64-1: exit $rc (want 125), $lines lines"; head -3 "$T/err"; fi
printf '[policy]\nthreshold = 64K\n' >"$T/k.conf"
NUMAPLACE_CONFIG=$T/k.conf ok_run_policy "config threshold 64K" "64K" run --policy cyclic -- sh -c 'echo $NUMAPLACE_THRESHOLD'
summary test_hostile_cli
