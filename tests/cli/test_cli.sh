#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# CLI tests: `numaplace map` known answers (pure), topo, version, and error exits.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
words() { tr -s ' \n' ' ' | sed 's/ $//'; }
check "prime_mapp P=5 M=4" "0 1 2 3 0 0 1 2 3 1 0 1 2 3 2 0 1 2 3 3 0 1 2 3 0" \
    "$($N map --policy prime_mapp:5 --nodes 4 --pages 25 | words)"
check "skew_mapp M=4" "1 2 3 0 2 3 0 1" "$($N map --policy skew_mapp --nodes 4 --pages 8 | words)"
check "cyclic_block:2 M=3" "0 0 1 1 2 2 0" "$($N map --policy cyclic_block:2 --nodes 3 --pages 7 | words)"
check "weighted 3:1" "0 0 0 1 0 0 0 1" "$($N map --policy weighted:0=3,1=1 --nodes 2 --pages 8 | words)"
check "bind_block 4 threads, 2 nodes x 2 cores" "0 0 1 1" \
    "$($N map --policy bind_block:threads=4 --nodes 2 --cores-per-node 2 --pages 4 | words)"
check "subset" "1 3 1 3" "$($N map --policy cyclic@1,3 --nodes 4 --pages 4 | words)"
check "page count" "100" "$($N map --policy random:seed=9 --nodes 3 --pages 100 | words | wc -w | tr -d ' ')"
$N map --policy cyclik --nodes 2 --pages 2 >/dev/null 2>/tmp/npl_cli_err.$$; rc=$?
check "unknown policy exit code" 2 $rc
check "unknown policy message" 1 "$(grep -c cyclik /tmp/npl_cli_err.$$)"
$N map --policy bind_all:5 --nodes 2 --pages 2 >/dev/null 2>/tmp/npl_cli_err.$$; rc=$?
check "missing node exit code" 2 $rc
check "missing node message" 1 "$(grep -c 'node 5 does not exist' /tmp/npl_cli_err.$$)"
rm -f /tmp/npl_cli_err.$$
$N frobnicate >/dev/null 2>&1; check "unknown command exit code" 2 $?
# map at its documented limits finishes (about a second), beyond them it is a usage error
$N map --policy cyclic --nodes 1024 --cores-per-node 4 --pages 4 >/dev/null; check "map at the node limit (1024 x 4)" 0 $?
$N map --policy scatter_free_check --nodes 1 --pages 1 >/dev/null 2>&1; check "map unknown policy: 2" 2 $?
$N map --policy cyclic --nodes 64 --cores-per-node 64 --pages 4 >/dev/null; check "map at the CPU limit (64 x 64)" 0 $?
$N map --policy bind_block --nodes 2 --cores-per-node 1024 --pages 4 >/dev/null; check "map at the core limit (2 x 1024)" 0 $?
$N map --policy cyclic --nodes 1024 --cores-per-node 1024 --pages 4 >/dev/null 2>&1; check "map 1024 x 1024: usage error" 2 $?
$N map --policy cyclic --nodes 128 --cores-per-node 64 --pages 4 >/dev/null 2>&1; check "map over 4096 cores: usage error" 2 $?
$N map --policy cyclic --nodes 1025 --cores-per-node 1 --pages 4 >/dev/null 2>&1; check "map 1025 nodes: usage error" 2 $?
$N map --policy cyclic --nodes 2 --cores-per-node 1025 --pages 4 >/dev/null 2>&1; check "map 1025 cores per node: usage error" 2 $?
$N map --policy cyclic --nodes >/dev/null 2>&1; check "map option without value: 2" 2 $?
$N map --frob >/dev/null 2>&1; check "map unknown option: 2" 2 $?
$N map --help >/dev/null; check "map --help: 0" 0 $?
for c in topo demo where measure report; do
    $N $c --frob >/dev/null 2>&1; check "$c unknown option: 2" 2 $?
    $N $c --help >/dev/null; check "$c --help: 0" 0 $?
done
for c in topo map run report; do   # numaplace help CMD is CMD --help
    check "help $c = $c --help" "$($N $c --help 2>&1)" "$($N help $c 2>&1)"
done
$N help frob >/dev/null 2>&1; check "help of an unknown command: 2" 2 $?
$N demo --mib 0 >/dev/null 2>&1; check "demo --mib 0: 2" 2 $?
msg=$($N map --policy cyclic --nodes 2 --pages 6 --page-size 4611686018427387904 2>&1); rc=$?
check "map: pages x page size overflow is a usage error" 2 $rc
case "$msg" in *overflow*) check "map: the overflow is named" ok ok ;; *) check "map: the overflow is named ($msg)" ok bad ;; esac
check "version" "numaplace 0.3.0" "$($N --version)"
$N topo >/dev/null; check "topo runs" 0 $?
$N topo --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["nodes"] and d["cpus_allowed"]>0' ; check "topo --json parses" 0 $?
check "synthetic topo" "4" "$($N topo --json --synthetic 'numa:4 core:1 pu:1' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["nodes"]))')"
$N where $$ >/dev/null; check "where on a live process" 0 $?
check "where --json parses, with pages on node 0" 1 "$($N where --json $$ | python3 -c 'import json,sys; d=json.load(sys.stdin); print(int(d["total"]["0"]["base_pages"] > 0))')"
$N where 999999999 >/dev/null 2>&1; check "where on a gone PID: exit 1" 1 $?
$N where >/dev/null 2>&1; check "where without PID: exit 2" 2 $?
$N run -- /nonexistent/prog >/dev/null 2>&1; check "run: program not found: 127" 127 $?
if [ -f "$(dirname "$N")/libnumaplace_preload.so" ]; then # not in sanitizer builds
$N run --policy skew_mapp -- true >/dev/null 2>&1; check "run: skew_mapp through the interposer: 0" 0 $?
$N run --policy cyclik -- true >/dev/null 2>&1; check "run: unknown policy: 125" 125 $?
# the affinity the program runs with (its own /proc status), not the variable numaplace sets
check "run --pin 0: the interposer pins the program's main thread to CPU 0 (dynamic program)" "0" \
    "$($N run --pin 0 -- sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/$$/status')"
check "run without --pin: the program's affinity is untouched (the control)" \
    "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)" \
    "$($N run -- sh -c 'awk "/^Cpus_allowed_list/ {print \$2}" /proc/$$/status')"
else
    skip_no_interposer "run through the interposer" "$(dirname "$N")/libnumaplace_preload.so"
fi
# --json of every subcommand against its schema (docs/schema/*.schema.json: one vocabulary:
# node ids as "os_id" values, booleans true/false, units in key names)
SCHEMAS=$(cd "$(dirname "$0")/../../docs/schema" && pwd)
if python3 -c 'import jsonschema' 2>/dev/null; then
    jv() { # schema name, file
        python3 -c 'import json,sys,jsonschema; s=json.load(open(sys.argv[1])); jsonschema.Draft202012Validator.check_schema(s); jsonschema.Draft202012Validator(s).validate(json.load(open(sys.argv[2])))' "$SCHEMAS/$1.schema.json" "$2" 2>&1 | tail -1
    }
    J=/tmp/npl_cli_json.$$
    $N topo --json >$J; check "topo --json validates" "" "$(jv topo $J)"
    $N topo --json --synthetic 'numa:4 core:1 pu:1' >$J; check "synthetic topo --json validates" "" "$(jv topo $J)"
    check "topo --json: booleans and os_id" "True 0" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["support"]["mbind"] is True or d["support"]["mbind"] is False, d["nodes"][0]["os_id"])' $J)"
    $N map --policy cyclic --nodes 3 --pages 7 --json >$J; check "map --json validates" "" "$(jv map $J)"
    check "map --json: cyclic pages and counts" "[0, 1, 2, 0, 1, 2, 0] [3, 2, 2]" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["pages"], [n["pages"] for n in d["nodes"]])' $J)"
    $N demo --mib 2 --policy cyclic --json >$J; check "demo --json validates" "" "$(jv demo $J)"
    check "demo --json: every page placed" "512 512" "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["arrays"][0]; print(a["pages"], a["placed_pages"])' $J)"
    $N measure --quick --reps 2 --no-write --json >$J 2>/dev/null; check "measure --json validates" "" "$(jv measure $J)"
    $N where --json $$ >$J; check "where --json validates" "" "$(jv where $J)"
    check "where --json: nodes agree with total" 1 "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(all(d["total"][str(n["os_id"])]["base_pages"] == n["base_pages"] for n in d["nodes"]) and d["nodes"][0]["base_pages"] > 0))' $J)"
    rm -f $J
else
    skip jsonschema "--json schemas: python3-jsonschema is not installed (scripts/deps.sh)"
fi
$N demo --mib 1 --policy cyclic | grep -q '^policy .*time s.*syscalls.*placed/pages'; check "demo prints column headers" 0 $?
summary test_cli
