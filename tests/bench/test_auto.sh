#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench.auto (ctest): the locality harness's programs (bench/auto/) on this machine, under
# `numaplace run --pin compact` with 2 threads: every access of the compute phase counted (the
# exact number each program makes), all local where the machine has one node, the same checksum
# under every policy, and the exact profile each writes (AUTO_PROFILE) classified by
# `numaplace advise` into the pattern its program was written with. The multi-node figures come
# from bench/auto/run_auto in the 4-node guest (docs/RESULTS.md, "The locality harness").
# usage: test_auto.sh BUILD_DIR
set -u
build=$1
N=$build/numaplace
dir=$build/bench/auto
T=$(mktemp -d "${TMPDIR:-/tmp}/npl_auto.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
[ -x "$N" ] || { echo "FAIL: $N missing"; exit 1; }
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
# program: array accesses of 2 MiB arrays (262144 doubles) over 3 sweeps, and the pattern of each
# array, as written in its source
expect() {
    case $1 in
    auto_blocked_*|auto_cyclic_*|auto_serial_init_*) echo "a=1572864 b=786432" ;;
    auto_shared_*) echo "table=786432 out=393216" ;;
    auto_phase_*) echo "m=3145728" ;;
    auto_multi_f) echo "blk=1572864 sin=1572864" ;;
    auto_multi_*) echo "blk=1572864 cyc=1572864 tab=786432 sin=1572864" ;;
    esac
}
patterns() {
    case $1 in
    auto_blocked_*|auto_serial_init_*) echo "a:blocked:bind_block:threads=2 b:blocked:bind_block:threads=2" ;;
    auto_cyclic_*) echo "a:cyclic:bind_block:pages=4,threads=2 b:cyclic:bind_block:pages=4,threads=2" ;;
    auto_shared_*) echo "table:shared-read-mostly out:blocked:bind_block:threads=2" ;;
    auto_phase_*) echo "m:shared-written" ;; # one node: blocks then round-robin, nothing to migrate
    auto_multi_f) echo "blk:blocked:bind_block:threads=2 sin:blocked:bind_block:threads=2" ;;
    auto_multi_*) echo "blk:blocked:bind_block:threads=2 cyc:cyclic:bind_block:pages=4,threads=2 tab:shared-read-mostly sin:blocked:bind_block:threads=2" ;;
    esac
}
progs=$(ls "$dir" 2>/dev/null | grep '^auto_')
[ -n "$progs" ] || { echo "FAIL: no programs in $dir"; exit 1; }
for p in $progs; do
    sums=""
    for pol in first_touch cyclic bind_block; do
        prof=
        [ $pol = first_touch ] && prof=AUTO_PROFILE=$T/$p.json
        env $prof OMP_NUM_THREADS=2 "$N" run --pin compact --policy $pol -- "$dir/$p" 2 3 >"$T/out" 2>"$T/err"
        check "$p under $pol: exit 0" 0 $?
        got=$(python3 - "$T/out" "$nodes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [a["name"] for a in d["arrays"] if a["moved_pages"] or a["absent_pages"] or
       (int(sys.argv[2]) <= 1 and a["local"] != a["accesses"])]
print(" ".join("%s=%d" % (a["name"], a["accesses"]) for a in d["arrays"]), "|", d["checksum"],
      "|", "exact" if not bad else "not exact: " + ",".join(bad))
PY
)
        check "$p under $pol: accesses" "$(expect $p)" "${got%% |*}"
        check "$p under $pol: every access counted on pages that stayed" "exact" "${got##*| }"
        s=${got#*| }
        sums="$sums ${s%% |*}"
    done
    check "$p: one checksum under every policy" 1 "$(echo $sums | tr ' ' '\n' | sort -u | wc -l | tr -d ' ')"
    got=$("$N" advise --json "$T/$p.json" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["arrays"]:
    name = a["label"].split(":", 1)[1]
    print(name + ":" + a["pattern"] + (":" + a["policy"] if a["pattern"] not in ("shared-read-mostly", "shared-written") else ""))' | tr '\n' ' ' | sed 's/ $//')
    check "$p: the exact profile is classified as written" "$(patterns $p)" "$got"
done
summary test_auto
