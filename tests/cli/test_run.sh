#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# CLI tests on the host: run (interposer, pinning, exit codes), where, measure (report: test_report.sh),
# --help of every subcommand, the man pages, the JSON schema. One node here: placements are
# trivial but exact; tests/guest/guest_cli.c checks them page by page on several nodes.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
G=${GUEST_CLI:-}
SRC=${SRC:-$(dirname "$0")/../..}
T=$(mktemp -d /tmp/npl_test_run.XXXXXX)
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
PRE=$(dirname "$N")/libnumaplace_preload.so
# exit codes and messages
$N run --policy cyclik -- true 2>$T/err; check "unknown policy: 125" 125 $?
check "unknown policy named" 1 "$(grep -c cyclik $T/err)"
$N run --nodes 7 -- true 2>$T/err; check "node outside the allowed set: 125" 125 $?
check "node message" 1 "$(grep -c 'node 7 does not exist' $T/err)"
$N run -- /nonexistent/prog 2>$T/err; check "program not found: 127" 127 $?
$N run -- no_such_prog_npl 2>/dev/null; check "program not on PATH: 127" 127 $?
$N run -- /etc/hostname 2>/dev/null; check "not executable: 126" 126 $?
$N run -- sh -c 'exit 9'; check "the program's exit status" 9 $?
$N run --huge 1G -- true 2>/dev/null; check "bad --huge: 125" 125 $?
$N run --threshold lots -- true 2>/dev/null; check "bad --threshold: 125" 125 $?
$N run --bogus -- true 2>/dev/null; check "unknown option: 125" 125 $?
$N run 2>/dev/null; check "no program: 125" 125 $?
if [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; then
    $N run --policy skew_mapp -- /bin/busybox true 2>$T/err; check "static program + skew_mapp: 125" 125 $?
    check "static message" 1 "$(grep -c 'statically linked' $T/err)"
    $N run --policy cyclic -- /bin/busybox true; check "static program + cyclic (kernel policy): 0" 0 $?
else
    skip busybox-static "the static-program cases: no static /bin/busybox (scripts/deps.sh)"
fi
# the environment the interposer gets
if [ -f "$PRE" ]; then
check "preload in LD_PRELOAD" 1 "$($N run --policy skew_mapp -- sh -c 'echo $LD_PRELOAD' | grep -c libnumaplace_preload.so)"
check "policy passed" "skew_mapp" "$($N run --policy skew_mapp -- sh -c 'echo $NUMAPLACE_POLICY')"
check "--nodes restricts the policy" "cyclic@0" "$($N run --policy cyclic --nodes 0 -- sh -c 'echo $NUMAPLACE_POLICY')"
# numactl's node syntax (one node here: all and +0 are node 0; !0 leaves none, +1 is past the end)
check "--nodes all, +0: the allowed nodes" "bind_all:0 bind_all:0" "$($N run --nodes all -- sh -c 'echo $NUMAPLACE_POLICY') $($N run --nodes +0 -- sh -c 'echo $NUMAPLACE_POLICY')"
$N run --nodes '!0' -- true 2>$T/err
check "--nodes !0 on one node: status 125, none left" "125 1" "$? $(grep -c 'no allowed node with memory left' $T/err)"
$N run --nodes +1 -- true 2>$T/err
check "--nodes +1 on one node: status 125, past the end" "125 1" "$? $(grep -c 'position 1 is past' $T/err)"
# the short forms: -p policy, -c pin, -n nodes, -t threshold
check "short options: -p -n -t" "cyclic@0 64K" "$($N run -p cyclic -n 0 -t 64K -- sh -c 'echo $NUMAPLACE_POLICY $NUMAPLACE_THRESHOLD')"
check "short options: -c is --pin" "$($N run --pin compact -- sh -c 'echo $NUMAPLACE_PIN')" "$($N run -c compact -- sh -c 'echo $NUMAPLACE_PIN')"
check "--nodes alone: bind_all" "bind_all:0" "$($N run --nodes 0 -- sh -c 'echo $NUMAPLACE_POLICY')"
check "threshold/first/huge passed" "2M 3 thp" "$($N run --policy cyclic --threshold 2M --first 3 --huge thp -- sh -c 'echo $NUMAPLACE_THRESHOLD $NUMAPLACE_FIRST $NUMAPLACE_HUGE')"
check "--pin passed to the interposer" "scatter" "$($N run --pin scatter -- sh -c 'echo $NUMAPLACE_PIN')"
check "no --pin: threads left alone" "" "$($N run --policy cyclic -- sh -c 'echo $NUMAPLACE_PIN')"
check "cyclic is also the kernel policy (interleave)" 1 "$($N run --policy cyclic -- sh -c 'grep -c interleave /proc/self/numa_maps | head -1' | awk '{print ($1>0)}')"
# the platform config gives defaults
printf '[policy]\ndefault = prime_mapp\n[threads]\npin = scatter\n' > $T/c.conf
check "config default policy and pin" "prime_mapp scatter" "$(NUMAPLACE_CONFIG=$T/c.conf $N run -- sh -c 'echo $NUMAPLACE_POLICY $NUMAPLACE_PIN')"
printf '[policy]\ndefault = cyclik\n' > $T/bad.conf
printf '[machine]\ncpus = 0\n' > $T/cpu.conf
check "config [machine] cpus narrows the affinity" "0" "$(NUMAPLACE_CONFIG=$T/cpu.conf $N run -- sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2')"
printf '[machine]\ncpus = 900\n' > $T/cpu.conf
NUMAPLACE_CONFIG=$T/cpu.conf $N run -- true 2>/dev/null; check "config cpus none allowed: 125" 125 $?
NUMAPLACE_CONFIG=$T/bad.conf $N run -- true 2>$T/err; check "bad config file: 125" 125 $?
check "bad config names the line" 1 "$(grep -c 'bad.conf:2' $T/err)"
# --verbose / --json: the thread -> CPU -> node table, each placed allocation, oversubscription
NC=$(nproc)
OMP_NUM_THREADS=2 $N run --verbose --pin 1,0 -- true 2>$T/err
check "verbose table: thread 0 on CPU 1" 1 "$(grep -c '|      0 |      1 |      0 |' $T/err)"
check "verbose table: thread 1 on CPU 0" 1 "$(grep -c '|      1 |      0 |      0 |' $T/err)"
$N run -v --policy cyclic -- python3 -c 'b = bytearray(8 << 20)' 2>$T/err
check "verbose: the 8 MiB allocation is reported placed" 1 "$(grep -c '83886[0-9][0-9] bytes: placed under cyclic' $T/err | awk '{print ($1>0)}')"
OMP_NUM_THREADS=$((NC + 1)) $N run --pin compact -- true 2>$T/err; check "oversubscribed run: 0" 0 $?
check "oversubscription warning without --verbose" 1 "$(grep -c 'oversubscribed' $T/err)"
OMP_NUM_THREADS=$NC $N run --pin compact -- true 2>$T/err
check "no warning when threads fit" 0 "$(grep -c 'oversubscribed' $T/err)"
OMP_NUM_THREADS=2 $N run --json --pin compact -- true 2>$T/j.json
check "--json: threads and their CPUs" "[0, 1] [0, 0]" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([t["cpu_os_id"] for t in d["threads"]], [t["node_os_id"] for t in d["threads"]])' $T/j.json)"
$N run --json --policy skew_mapp -- python3 -c 'b = bytearray(8 << 20)' 2>$T/j.txt
check "--json: allocation events are JSON lines" 1 "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"event\"")]
print(int(any(e["placed"] and e["size_bytes"] >= 8 << 20 and e["policy"] == "skew_mapp" for e in ev)))' $T/j.txt)"
mkdir -p $T/root/sys/kernel/mm/transparent_hugepage
echo 'always [madvise] never' > $T/root/sys/kernel/mm/transparent_hugepage/enabled
NUMAPLACE_FSROOT=$T/root $N run -v --policy cyclic -- true 2>$T/err
check "THP madvise: no note" 0 "$(grep -c 'add --huge thp' $T/err)"
echo '[always] madvise never' > $T/root/sys/kernel/mm/transparent_hugepage/enabled
NUMAPLACE_FSROOT=$T/root $N run -v --policy cyclic -- true 2>$T/err
check "THP always: the note names --huge thp" 1 "$(grep -c 'add --huge thp' $T/err)"
# likwid-style pin domains, counted inside the cpuset
check "--pin M0:1 -> KMP proclist [1]" "granularity=fine,explicit,proclist=[1]" "$($N run --pin M0:1 -- sh -c 'echo $KMP_AFFINITY')"
check "--pin E:N:2 -> [0,1]" "granularity=fine,explicit,proclist=[0,1]" "$($N run --pin E:N:2 -- sh -c 'echo $KMP_AFFINITY')"
$N run --pin S0:$NC -- true 2>$T/err; check "--pin past the domain: 125" 125 $?
check "--pin past the domain: message" 1 "$(grep -c 'out of range' $T/err)"
$N run --pin Q0:1 -- true 2>/dev/null; check "--pin unknown domain: 125" 125 $?
check "--pin M0:0 under taskset -c 1 is CPU 1" "granularity=fine,explicit,proclist=[1]" "$(taskset -c 1 $N run --pin M0:0 -- sh -c 'echo $KMP_AFFINITY')"
else
    skip_no_interposer "the interposer environment cases" "$PRE"
fi
# the interposer in a real program (the guest test program's child roles; one node here)
if [ -n "$G" ] && [ -f "$PRE" ]; then
    export PATH="$(dirname "$N"):$PATH"
    for p in cyclic skew_mapp prime_mapp "weighted:0=1" "cyclic_block:3"; do
        $N run --policy "$p" -- "$G" --child-alloc "$p" 8 >$T/out 2>&1; rc=$?
        check "run --policy $p: array placed and where agrees" 0 $rc
        [ $rc -eq 0 ] || cat $T/out
    done
    $N run --pin scatter -- "$G" --child-pin scatter 5 >$T/out 2>&1; check "run --pin scatter: thread n on CPU n of scatter" 0 $?
    if [ "$(nproc)" -ge 2 ]; then
        taskset -c 1 $N run --pin compact -- "$G" --child-pin compact 3 1 >$T/out 2>&1
        check "taskset -c 1 is respected (all threads on CPU 1)" 0 $?
    else
        skip one-cpu "taskset -c 1 under --pin: this machine has one CPU"
    fi
    # malloc/free/realloc/calloc/posix_memalign survive a busy allocator (python, sort)
    check "python under the interposer" 4 "$($N run --policy cyclic --threshold 64K -- python3 -c 'b=[bytearray(1<<20) for i in range(8)]; b=b[4:]; print(len(b))')"
    check "sort under the interposer" 3 "$(printf 'c\na\nb\n' | $N run --policy skew_mapp --threshold 4K -- sort | wc -l)"
else
    if [ -z "$G" ]; then skip guest-cli "the interposer in a real program: GUEST_CLI is not set"
    else skip_no_interposer "the interposer in a real program" "$PRE"; fi
fi
# run: every bad value refused before the program starts (exit 125, the program never runs)
for bad in "--first 0" "--first 18446744073709551615" "--first -1" "--first 3x" \
           "--threshold 99999999999999999999999" "--threshold 1KKK" "--threshold 0" "--threshold 18446744073709551615K" \
           "--nodes 18446744073709551616" "--nodes 4294967296" "--nodes 0-" "--nodes ,0" "--nodes 0,,1" "--nodes x"; do
    $N run $bad -- sh -c 'echo ran' >$T/out 2>$T/err; rc=$?
    check "run $bad: refused with 125" "125 0" "$rc $(grep -c ran $T/out)"
done
$N run --nodes 18446744073709551616 -- true 2>$T/err
check "--nodes 2^64 is not a node list (the library's list parser)" 1 "$(grep -c -- '--nodes 18446744073709551616: expected a node list like 0-1,3' $T/err)"
$N run --nodes 4294967296 -- true 2>$T/err # hwloc's own parser reads node 0
check "--nodes 2^32 is not a node list (no wrap to node 0)" 1 "$(grep -c -- '--nodes 4294967296: expected a node list' $T/err)"
$N run --nodes 0 --policy bind_all:1 -- true 2>/dev/null; check "--nodes 0 + a policy on node 1: 125" 125 $?
check "no raw NUMA system call in run.c" 0 "$(grep -c -e 'SYS_' -e 'syscall(' $SRC/cli/run.c)"
if [ -f "$PRE" ]; then # these runs need the interposer (sanitizer builds have none)
    check "--nodes 0 binds the kernel policy to node 0" 1 "$($N run --nodes 0 -- sh -c 'grep -c -e "bind:0 " -e "prefer:0 " /proc/self/numa_maps' | awk '{print ($1>0)}')"
    check "NUMAPLACE_DEBUG: no error lines for a normal run" 0 "$(NUMAPLACE_DEBUG=1 $N run --policy cyclic -- true 2>&1 | grep -c 'error:')"
    # --pin replaces the OpenMP runtimes' own variables, with one note; without --pin they stay
    # (tests/cli/test_ompbind.sh: thread by thread, every form, both runtimes)
    check "--pin replaces OMP_PLACES" 1 "$(OMP_PLACES=cores $N run --pin compact -- sh -c 'echo ${OMP_PLACES:-unset}' 2>$T/err | grep -c unset)"
    check "--pin note names it" 1 "$(grep -c 'note: --pin compact replaces the program.s own OpenMP binding (OMP_PLACES=cores)' $T/err)"
    check "--pin sets KMP_AFFINITY (libomp)" 1 "$($N run --pin compact -- sh -c 'echo $KMP_AFFINITY' | grep -c 'explicit,proclist=\[')"
    check "no --pin: OMP_PLACES kept" "cores" "$(OMP_PLACES=cores $N run --policy cyclic -- sh -c 'echo $OMP_PLACES')"
else
    skip_no_interposer "the --nodes/--pin environment cases" "$PRE"
fi
P=$(dirname "$N")/progs
if [ -f "$PRE" ] && [ -x "$P/printer" ]; then
    # --next-touch: the one interposer and nothing else (the program keeps its own OpenMP
    # runtime); output and status kept
    check "--next-touch: LD_PRELOAD is the interposer alone" "libnumaplace_preload.so" \
        "$($N run --next-touch -- sh -c 'for f in $LD_PRELOAD; do basename $f; done' | tr '\n' ' ' | sed 's/ $//')"
    check "--next-touch: no OpenMP runtime path in run's code" 0 "$(cat $SRC/cli/run.c $SRC/preload/env.h | grep -c -e 'libomp\.so' -e 'llvm-')"
    $N run --next-touch -- "$P/printer" 0 >$T/f 2>$T/err; rc=$?
    check "--next-touch printer > file: status 0, output kept" "0 1" "$rc $(grep -c 'buffered line' $T/f)"
    check "--next-touch printer: no warning without NUMAPLACE_DEBUG" 0 "$(wc -c <$T/err)"
    $N run --next-touch -- sh -c 'echo hi; exit 3' >$T/f; rc=$?
    check "--next-touch sh -c 'echo hi; exit 3'" "3 hi" "$rc $(cat $T/f)"
    $N run --next-touch --policy cyclic -- "$P/printer" 7 >$T/f; rc=$?
    check "--next-touch --policy cyclic printer 7" "7 1" "$rc $(grep -c 'buffered line' $T/f)"
    $N run --next-touch --json -- "$P/printer" 0 >$T/f 2>$T/err
    check "--next-touch --json, no OpenMP: the exit line counts no region" 1 "$(grep -c '"event": "next_touch", "regions": 0, "distinct_regions": 0, "region_source": "none"' $T/err)"
    # the regions of each runtime are seen through the program's own runtime: omp_styles has 11
    # region entries (1 init, 3 x 2 sweeps, 1 reduction, 1 outer and 2 inner nested) at 6 sites
    for v in gcc clang; do
        [ -x "$P/omp_styles_$v" ] || { skip omp-styles "--next-touch region counts under $v: $P/omp_styles_$v is not built (clang-14, libomp-dev)"; continue; }
        src=libgomp; [ $v = clang ] && src=ompt
        OMP_NUM_THREADS=2 $N run --next-touch --json -- "$P/omp_styles_$v" 20000 >$T/f 2>$T/err; rc=$?
        check "--next-touch omp_styles_$v: status 0, the same sum as plain" "0 $(OMP_NUM_THREADS=2 "$P/omp_styles_$v" 20000)" "$rc $(cat $T/f)"
        check "--next-touch omp_styles_$v: 11 region entries at 6 sites, seen through $src" 1 \
            "$(grep -c "\"regions\": 11, \"distinct_regions\": 6, \"region_source\": \"$src\"" $T/err)"
        # one usable memory node: no page can move, so no range gets a full arm (a fault a chunk;
        # on 16 cores that doubled this program's time), only the 8-chunk samples
        if [ "$($N topo | head -n 1 | grep -c '(1 usable')" = 1 ]; then
            OMP_NUM_THREADS=2 $N run --next-touch --json -- "$P/omp_styles_$v" 1000000 >$T/f 2>$T/err
            check "--next-touch omp_styles_$v on one usable node: 0 full arms, 2 sample arms, 16 faults" 1 \
                "$(grep -c '"full_arms": 0, "sample_arms": 2, "backoffs": 0, "reenabled": 0, "faults": 16, "pages_moved": 0' $T/err)"
        else
            skip nt-one-node "--next-touch arms on one node: this machine has more than one usable node"
        fi
    done
    if [ -x "$P/omp_probe_gcc" ]; then
        OMP_NUM_THREADS=2 $N run --next-touch -- "$P/omp_probe_gcc" >$T/p 2>&1
        check "--next-touch: a gcc program stays on libgomp" 2 "$(grep -c 'runtime libgomp' $T/p)"
    fi
    if [ -x "$P/printer_omp" ]; then
        $N run --next-touch -- "$P/printer_omp" 5 >$T/f; rc=$?
        check "--next-touch OpenMP printer > file: status 5, output kept" "5 1" "$rc $(grep -c 'buffered line' $T/f)"
        $N run --pin compact -- "$P/printer_omp" 0 >$T/f; rc=$?
        check "--pin OpenMP printer > file" "0 1" "$rc $(grep -c 'buffered line' $T/f)"
    else
        skip openmp "--next-touch and --pin on an OpenMP printer: $P/printer_omp is not built (no OpenMP)"
    fi
    # pinning under libgomp, libomp (clang) and a gcc build on a preloaded libomp
    LIBOMP=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1)
    NC=$(nproc)
    for s in compact scatter; do
        want=$($N run --pin $s -- sh -c 'echo $KMP_AFFINITY' | sed 's/.*proclist=\[//; s/\]//' | cut -d, -f1-$NC)
        for v in gcc clang gcc+libomp; do
            prog=$P/omp_probe_${v%+libomp}
            [ -x "$prog" ] || { skip omp-probe "--pin $s under $v: $prog is not built (clang-14, libomp-dev)"; continue; }
            pre=""; [ "$v" = gcc+libomp ] && pre=$LIBOMP
            if [ "$v" = gcc+libomp ] && [ -z "$LIBOMP" ]; then
                skip libomp "--pin $s under gcc on a preloaded libomp: no /usr/lib/llvm-*/lib/libomp.so.5 (libomp-dev)"; continue
            fi
            LD_PRELOAD=$pre OMP_NUM_THREADS=$NC $N run --pin $s -- "$prog" >$T/p 2>&1
            got=$(awk '$4==$6 {printf "%s%s", (NR>1?",":""), $4} $4!=$6 {printf "%sX", (NR>1?",":"")}' $T/p)
            check "--pin $s under $v: thread n on the n-th CPU, bound alone" "$want" "$got"
            rt=libgomp; [ "$v" != gcc ] && rt=libomp
            check "--pin $s under $v: the runtime is $rt" "$NC" "$(grep -c "runtime $rt" $T/p)"
        done
    done
elif [ -f "$PRE" ]; then
    skip printer "--next-touch and the OpenMP pinning cases: $P/printer is not built"
else
    skip_no_interposer "--next-touch and the OpenMP pinning cases" "$PRE"
fi
# where
$N where 999999999 2>$T/err; check "where on a gone PID: 1" 1 $?
check "where message" 1 "$(grep -c 'no such process' $T/err)"
sleep 30 & sp=$!
check "where --json totals" 1 "$($N where --json $sp | python3 -c 'import json,sys; d=json.load(sys.stdin); print(int(sum(v["base_pages"] for v in d["total"].values()) > 0))')"
check "where --json: not partial, mappings unchanged" "False False" "$($N where --json $sp | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["partial"], d["mappings_changed"])')"
kill $sp
# measure
$N measure --quick --out $T/m.conf >$T/out 2>&1; check "measure --quick: 0" 0 $?
check "measure wrote factors" 1 "$(grep -c '^latency_ns.0 = ' $T/m.conf)"
printf '[threads]\npin = compact\n' > $T/keep.conf
$N measure --quick --out $T/keep.conf >/dev/null 2>&1
check "measure keeps the other sections" 2 "$(grep -c -e '^pin = compact' -e '^nodes = ' $T/keep.conf)"
printf 'garbage\n' > $T/garbage.conf
$N measure --quick --out $T/garbage.conf >/dev/null 2>&1; check "measure refuses to overwrite a bad config: 1" 1 $?
$N measure --frob 2>/dev/null; check "measure bad option: 2" 2 $?
# report: tests/cli/test_report.sh (one report --quick run for all its checks)
# --help and man pages
for c in topo map demo run where measure report; do
    $N $c --help >/dev/null 2>&1; check "$c --help: 0" 0 $?
done
for m in numaplace numaplace-run numaplace-topo numaplace-map numaplace-demo numaplace-where numaplace-measure numaplace-report; do
    f=$SRC/docs/man/$m.1
    check "man page $m.1 exists" 1 "$( [ -f $f ] && echo 1 || echo 0)"
    if ! command -v groff >/dev/null 2>&1; then
        skip groff "man page $m.1 rendering: groff is not installed"
    elif [ -f $f ]; then
        check "man page $m.1 renders without warnings" "" "$(groff -man -Tutf8 -ww -z $f 2>&1)"
    fi
done
check "run man page documents 127" 1 "$(grep -c '^\.B 127' $SRC/docs/man/numaplace-run.1)"
summary test_run
