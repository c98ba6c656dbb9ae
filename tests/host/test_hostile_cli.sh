#!/bin/sh
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
pass=0 fail=0
usage_error() { # name, command...: exit 2, one line on stderr, empty stdout, within 30 s
    name=$1
    shift
    timeout 30 "$N" "$@" >"$T/out" 2>"$T/err"
    rc=$? lines=$(wc -l <"$T/err") out=$(wc -c <"$T/out")
    if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ "$out" = 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc (want 2), $lines stderr lines (want 1), $out stdout bytes"
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
echo "test_hostile_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
