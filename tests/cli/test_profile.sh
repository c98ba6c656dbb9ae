#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace profile and run --profile on the host (one node: placement itself is checked in the
# guest, tests/guest/guest_profile.c). Exact checks:
#  - a profiled program's stdout and exit status are those of a plain run (128+N for signal N),
#    for every allocation style, OpenMP under libgomp and libomp, Fortran, fork, exec, system
#    calls into its arrays, its own SIGSEGV handler, exits and signals;
#  - the profile: one array per large allocation, the sites of C++ new[] in the program (not in
#    libstdc++), the same sites in two runs (address randomisation), the patterns of three known
#    arrays (blocked, cyclic, shared read-mostly), the hardware probe's one line;
#  - run --profile: the arrays matched again at another input size (the figure printed), a
#    truncated, foreign or other program's profile refused with status 125 before the program runs.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "numaplace profile and run --profile" profile
if [ ! -x "$P/profile_edge" ]; then
    skip prog-profile_edge "numaplace profile and run --profile: $P/profile_edge is not built"
    summary profile; exit
fi
T=$(mktemp -d /tmp/npl_test_profile.XXXXXX)
trap 'rm -rf "$T"' EXIT
# same OPTIONS PROG ARGS: status and stdout under profile OPTIONS equal those of PROG alone
same() {
    opts=$1
    shift
    "$@" >$T/ref 2>/dev/null
    r1=$?
    sh -c '"$@"; echo "status $?" >'"$T/st" sh $N profile --out $T/p.json $opts -- "$@" >$T/got 2>$T/err
    r2=$(cut -d' ' -f2 <$T/st)
    check "profile $opts -- $(basename "$1") ${2:-}: status, output" "$r1 $(cksum <$T/ref)" "$r2 $(cksum <$T/got)"
}
for prog in alloc_styles cxx_styles omp_styles_gcc omp_styles_clang fortran_omp; do
    [ -x "$P/$prog" ] || { skip "prog-$prog" "profile -- $prog: $P/$prog is not built (scripts/deps.sh)"; continue; }
    same "--threshold 64K" "$P/$prog"
done
for m in none thread abort segv nullwrite term mainexit quick clearenv unsetenv affinity; do
    same "--threshold 64K" "$P/exit_styles" $m
done
head -c 5000000 /dev/urandom >$T/in.bin
for m in touch fork exec static "exit 5" kill segv segv_early "io $T/in.bin"; do
    # shellcheck disable=SC2086
    same "" "$P/profile_edge" $m
done
if ls /sys/bus/event_source/devices/*/events/mem-loads /sys/bus/event_source/devices/ibs_op >/dev/null 2>&1; then
    check "the backend line: perf or why not, in one line" 1 "$(grep -c '^numaplace profile: \(sampling memory addresses with perf\|hardware sampling not used\)' $T/err)"
else
    check "the hardware probe says why it is not used, in one line" 1 "$(grep -c '^numaplace profile: hardware sampling not used (.*): sampling by protection faults' $T/err)"
fi
$N profile --out $T/fork.json -- "$P/profile_edge" fork >/dev/null 2>$T/err
check "fork: the child is said not to be profiled" 1 "$(grep -c '1 other process .* not profiled' $T/err)"

if ! command -v python3 >/dev/null; then
    skip python3 "the profile's contents (arrays, sites, patterns) and run --profile: no python3"
    summary profile; exit
fi
# the phases come from the one region hook (preload/regions.c): omp_styles enters 9 outermost
# regions at 5 sites (and 2 nested ones, not phases) under libgomp, libomp, and a gcc build on a
# preloaded libomp, whose regions enter through the GOMP wrappers and again through OMPT: each
# counted once, named as under libgomp
phases() { # profile -> "regions entries offsets"
    python3 - "$1" <<'PY'
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["phases"] if x["kind"] == "region"]
print(len(r), sum(x["entries"] for x in r),
      ",".join(str(x["site"]["offset"]) for x in sorted(r, key=lambda x: x["site"]["offset"])))
PY
}
LIBOMP=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1)
gcc_offsets=
for v in gcc clang gcc+libomp; do
    prog=$P/omp_styles_${v%+libomp}
    [ -x "$prog" ] || { skip "prog-omp_styles_${v%+libomp}" "the phases under $v: $prog is not built (scripts/deps.sh)"; continue; }
    if [ $v = gcc+libomp ]; then
        [ -n "$LIBOMP" ] || { skip libomp "the phases of a gcc build on a preloaded libomp: no /usr/lib/llvm-*/lib/libomp.so.5 (libomp-dev)"; continue; }
        OMP_NUM_THREADS=2 $N profile --threshold 64K --out $T/ph.json -- \
            sh -c 'LD_PRELOAD="$LD_PRELOAD $1" exec "$0" 20000' "$prog" "$LIBOMP" >/dev/null 2>&1
    else
        OMP_NUM_THREADS=2 $N profile --threshold 64K --out $T/ph.json -- "$prog" 20000 >/dev/null 2>&1
    fi
    got=$(phases $T/ph.json)
    check "profile omp_styles ($v): 5 region phases, 9 entries" "5 9" "${got% *}"
    [ $v = gcc ] && gcc_offsets=${got##* }
    [ $v = gcc+libomp ] && check "profile omp_styles: a gcc build's regions have the same names on libomp" \
        "$gcc_offsets" "${got##* }"
done
# the profile's arrays: python3 prints one line per array: kind object offset ordinal bytes pattern
arrays() {
    python3 - "$1" <<'PY'
import json, os, sys
p = json.load(open(sys.argv[1]))
for a in p["arrays"]:
    s = a["site"]
    adv = a.get("advice") or {}
    print(s["kind"], os.path.basename(s["object"]), s["offset"], s["ordinal"], a["bytes"],
          adv.get("pattern", "-"))
PY
}
if [ -x "$P/cxx_styles" ]; then
$N profile --out $T/cxx.json --threshold 64K -- "$P/cxx_styles" >/dev/null 2>&1
check "cxx_styles: every large block's site is in the program, not in libstdc++" "" "$(arrays $T/cxx.json | awk '$1 == "heap" && $2 != "cxx_styles"')"
check "cxx_styles: large blocks were profiled" 1 "$(arrays $T/cxx.json | awk 'END {print (NR >= 4)}')"
else
    skip prog-cxx_styles "the sites of C++ new[]: $P/cxx_styles is not built (no C++ compiler)"
fi
if [ ! -x "$P/patterns3" ]; then
    skip prog-patterns3 "the patterns and run --profile: $P/patterns3 is not built (no OpenMP)"
    summary profile; exit
fi
# the same identities in two runs (the program's address changes each time)
OMP_NUM_THREADS=2 $N profile --out $T/a.json -- "$P/patterns3" 8 4 >/dev/null 2>&1
ra=$?
OMP_NUM_THREADS=2 $N profile --out $T/b.json -- "$P/patterns3" 8 4 >/dev/null 2>&1
check "patterns3 under profile, twice: status 0 0" "0 0" "$ra $?"
arrays $T/a.json | cut -d' ' -f1-5 >$T/a.txt
arrays $T/b.json | cut -d' ' -f1-5 >$T/b.txt
check "patterns3: 3 arrays" 3 "$(wc -l <$T/a.txt)"
check "patterns3: the same sites in two runs" "$(cat $T/a.txt)" "$(cat $T/b.txt)"
# the patterns, sampled densely enough to be sure (two threads on one node); the program's status
# first: a run the sampler killed leaves a truncated profile, whose patterns are not the program's
OMP_NUM_THREADS=2 $N profile --rate 20000 --out $T/p3.json -- "$P/patterns3" 16 20 >/dev/null 2>$T/p3.err
check "patterns3 under profile --rate 20000: status 0" 0 $?
# both threads read the same sampled pages of shr at once, and pages are given back and sampled
# again: a retry of the sampler's own fault must never reach the program as a SIGSEGV (it did, in
# 1 run in 10 on an idle host and 5 in 6 on a loaded one, when a thread's earlier race on the
# same page made the next one look like the program's own fault)
st=""
for i in 1 2 3 4 5 6; do
    OMP_NUM_THREADS=2 $N profile --rate 20000 --out $T/race.json -- "$P/patterns3" 16 20 >/dev/null 2>&1
    st="$st$? "
done
check "patterns3 profiled 6 more times at 20000 pages/s: every status 0" "0 0 0 0 0 0 " "$st"
check "patterns3: blocked, cyclic, shared-read-mostly" "blocked cyclic shared-read-mostly" "$(arrays $T/p3.json | awk '{printf "%s%s", (NR > 1 ? " " : ""), $6}')"
# the measured locality: the last line; every sampled access is local, remote or unknown; the
# arrays add up to the total (the multi-node values: tests/guest/guest_profile_locality.c)
last=$(tail -n 1 $T/p3.err)
check "measured: profile's last line" 1 "$(printf '%s\n' "$last" | grep -c "^numaplace profile: sampled accesses on the accessing thread's node: [0-9.]*% ([0-9]* of [0-9]* samples; [0-9]* unknown)$")"
python3 - $T/p3.json "$last" >$T/meas <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))
m = p["sampling"]["measured"]
l, t, u = map(int, re.search(r"\((\d+) of (\d+) samples; (\d+) unknown\)", sys.argv[2]).groups())
arr = [a["measured"] for a in p["arrays"]]
print("line", l == m["local"] and t == m["local"] + m["remote"] and u == m["unknown"])
print("sum", all(sum(a[k] for a in arr) == m[k] for k in ("local", "remote", "unknown")))
print("all", m["local"] + m["remote"] + m["unknown"] == p["sampling"]["samples"])
print("known", t >= 100)
# each row counts its own local and remote accesses: over the rows, each array's measured (the
# tables never drop a row at this size)
rows = all(len(r) == 7 and r[5] + r[6] <= r[3] + r[4] for a in p["arrays"] for r in a["samples"])
print("rows", rows and all(sum(r[5] for r in a["samples"]) == a["measured"]["local"] and
                           sum(r[6] for r in a["samples"]) == a["measured"]["remote"]
                           for a in p["arrays"]))
PY
check "measured: the line is the profile's total" "line True" "$(sed -n 1p $T/meas)"
check "measured: the arrays add up to the total" "sum True" "$(sed -n 2p $T/meas)"
check "measured: every sampled access counted once (local, remote or unknown)" "all True" "$(sed -n 3p $T/meas)"
check "measured: at least 100 samples of a known node" "known True" "$(sed -n 4p $T/meas)"
check "measured: the rows' local and remote add up to each array's" "rows True" "$(sed -n 5p $T/meas)"
if [ "$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)" = 1 ]; then
    check "measured: one node: every known sample local" 1 "$(printf '%s\n' "$last" | grep -c ': 100.0% (')"
fi
# profile under a policy: the kernel's forms (cyclic, bind_all) place while sampling, others are
# refused before the program starts
OMP_NUM_THREADS=2 $N profile --policy bind_all:0 --out $T/pb.json -- "$P/patterns3" 8 4 >/dev/null 2>$T/err
check "profile --policy bind_all:0: status 0, the measured line" "0 1" "$? $(grep -c "^numaplace profile: sampled accesses on the accessing thread's node" $T/err)"
# the OpenMP wait policy as the program ran: idle threads slept (passive: numaplace set it) or
# may have spun (the user's active), which decides whether CPU time in a region counts as work
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u KMP_BLOCKTIME OMP_NUM_THREADS=2 $N profile --out $T/pw.json -- "$P/patterns3" 8 4 >/dev/null 2>&1
w1="$? $(grep -c '"omp_wait": "passive"' $T/pw.json)"
env -u GOMP_SPINCOUNT -u KMP_BLOCKTIME OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 $N profile --out $T/pw.json -- "$P/patterns3" 8 4 >/dev/null 2>&1
check "profile: sampling.omp_wait passive where it set OMP_WAIT_POLICY=passive, absent under active" "0 1 0 0" "$w1 $? $(grep -c '"omp_wait"' $T/pw.json)"
$N profile --policy bind_block --out $T/pb.json -- "$P/patterns3" 8 4 >$T/out 2>$T/err
check "profile --policy bind_block: status 125, not started, one line" "125 0 1" "$? $(wc -c <$T/out) $(grep -c 'only cyclic and bind_all' $T/err)"
# an array's size is the one the program asked for (3 MiB + 1,000 bytes), its chunks whole pages
$N profile --out $T/odd.json -- "$P/profile_edge" odd >$T/out 2>$T/err
check "profile_edge odd: status 0, the program's output" "0 1" "$? $(grep -c '^odd ' $T/out)"
check "profile_edge odd: the array's size as asked for, 769 chunks of 4 KiB" "3146728 4096 769" "$(python3 -c '
import json, sys
for a in json.load(open(sys.argv[1]))["arrays"]:
    if a["site"]["kind"] == "heap" and a["bytes"] >= 1 << 20:
        print(a["bytes"], a["chunk_bytes"], a["nchunks"])' $T/odd.json)"
# pthreads, the main thread alone after the joins (a final pass): its samples in a phase of their
# own, entered once, which no other thread's samples share (there the exposure weights would
# multiply them by its small exposure: guest_advice's case a). Its samples exist: 0.3 s of passes.
$N profile --out $T/fin.json -- "$P/profile_edge" final >$T/out 2>$T/err
check "profile_edge final: status 0, the program's output" "0 1" "$? $(grep -c '^final 1$' $T/out)"
check "profile_edge final: thread 0's samples in one phase of its own, entered once" "main 1 alone 1 entered 1 workers 2" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
a = [a for a in p["arrays"] if a["bytes"] == 8 << 20][0]
by = {}
for r in a["samples"]:
    by.setdefault(r[0], set()).add(r[2])
main = [ph for ph, ts in by.items() if 0 in ts]
entries = {x["id"]: x["entries"] for x in p["phases"]}
workers = set().union(*[ts for ts in by.values() if 0 not in ts]) if len(by) > len(main) else set()
print("main", len(main), "alone", sum(by[ph] == {0} for ph in main),
      "entered", entries.get(main[0]) if main else None, "workers", len(workers))' $T/fin.json)"
# pthread barriers: each time window of the passes ends at a round (never inside a pass of 150 ms,
# longer than a window) and counts its rounds, all 8 of them, one a window (the quick fourth pass
# too: passes are slower than a window on average); after the last round, the clock cuts the 0.8 s
# without a barrier into windows again
$N profile --out $T/bar.json -- "$P/profile_edge" barriers >$T/out 2>$T/err
check "profile_edge barriers: status 0, the program's 8 rounds" "0 1" "$? $(grep -c '^barriers 8$' $T/out)"
check "profile_edge barriers: rounds 8 in all, at most 1 a window, no window without one between two with, clock windows after" "8 1 0 1" "$(python3 -c '
import json, sys
ph = json.load(open(sys.argv[1]))["phases"]
r = [x.get("barriers", 0) for x in ph]
w = [i for i, n in enumerate(r) if n]
gap = sum(1 for i in range(w[0], w[-1]) if not r[i]) if w else -1
after = sum(1 for x in ph[w[-1] + 1:] if x["seconds"] >= 0.09) if w else 0
print(sum(r), max(r), gap, int(after >= 3))' $T/bar.json)"
# threads that ran while pages were armed with no sample of any array, numbered after the last
# sampled one, are in the profile with their exposures (they were left out: a table one worker
# took every sample of then had no other reader at all), and the table's advice says so
$N profile --out $T/uns.json -- "$P/profile_edge" unsampled >$T/out 2>$T/err
check "profile_edge unsampled: status 0, the program's output" "0 1" "$? $(grep -c '^unsampled 1$' $T/out)"
check "profile_edge unsampled: 5 threads, the 3 spinners exposed, the table sampled by thread 1 (and main's initialisation at most), said" "5 1 1 1" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
r = p["run"]
a = [a for a in p["arrays"] if a["bytes"] == 8 << 20][0]
ex = r.get("thread_exposure") or [0] * r["threads"]
print(r["threads"], int(len(ex) == 5 and min(ex[2:]) > 0), int({1} <= {s[2] for s in a["samples"]} <= {0, 1}),
      int("ran as long in its time windows with no sample of any array" in a["advice"]["reason"]))' $T/uns.json)"
# NUMAPLACE_DEBUG: a fault that kills the program is said, where it was taken (not without it)
NUMAPLACE_DEBUG=1 $N profile --out $T/nw.json -- "$P/exit_styles" nullwrite >/dev/null 2>$T/err
check "NUMAPLACE_DEBUG: the killing fault said, status 139" "139 1" \
    "$? $(grep -c '^numaplace: SIGSEGV (code 1) at 0x8, instruction 0x[0-9a-f]* in .*exit_styles+0x' $T/err)"
$N profile --out $T/nw.json -- "$P/exit_styles" nullwrite >/dev/null 2>$T/err
check "without NUMAPLACE_DEBUG: not said" "139 0" "$? $(grep -c '^numaplace: SIGSEGV' $T/err)"
# the short forms: -o is --out, run's -p/-c/-n/-t pass through
$N profile -o $T/short.json -n 0 -t 64K -- "$P/profile_edge" touch >/dev/null 2>$T/err
check "profile -o FILE -n 0 -t 64K: status 0, the profile written there" "0 1" "$? $(grep -c '"format": "numaplace-profile"' $T/short.json 2>/dev/null)"
# the machine's migration rate: its platform config's [factors] migrate_pages_s (numaplace measure
# writes it) recorded in the profile (the advice weighs next-touch by it); without it, absent
printf '[factors]\nmigrate_pages_s = 12345\n' >$T/mig.conf
: >$T/none.conf
NUMAPLACE_CONFIG=$T/mig.conf $N profile -o $T/mig.json -n 0 -t 64K -- "$P/profile_edge" touch >/dev/null 2>&1
r1=$?
NUMAPLACE_CONFIG=$T/none.conf $N profile -o $T/nomig.json -n 0 -t 64K -- "$P/profile_edge" touch >/dev/null 2>&1
check "profile: the config's migrate_pages_s recorded, absent without it" "0 0 12345 absent" \
    "$r1 $? $(python3 -c '
import json, sys
print(*(json.load(open(f))["machine"].get("migrate_pages_s", "absent") for f in sys.argv[1:]))' \
    $T/mig.json $T/nomig.json | sed 's/12345.0/12345/')"
# a bad argument or a missing program: its one line, nothing about sampling said before it
env -u OMP_WAIT_POLICY $N profile --backend fault --pin bogus --out $T/pb.json -- "$P/patterns3" 8 4 >$T/out 2>$T/err
check "profile --pin bogus: status 125, one line, no sampling line" "125 0 1 0" "$? $(wc -c <$T/out) $(wc -l <$T/err) $(grep -c 'sampling\|OMP_WAIT_POLICY' $T/err)"
env -u OMP_WAIT_POLICY $N profile --backend fault --out $T/pb.json -- $T/no-such-program >$T/out 2>$T/err
check "profile of a missing program: status 127, one line, no sampling line" "127 1 0" "$? $(wc -l <$T/err) $(grep -c 'sampling\|OMP_WAIT_POLICY' $T/err)"
# profile --profile: the advice applied while sampling (every array matched, placed, tracked)
OMP_NUM_THREADS=2 $N profile -v --rate 20000 --profile $T/p3.json --out $T/pp.json -- "$P/patterns3" 16 20 >$T/out 2>$T/err
check "profile --profile: status 0, 3 of 3 arrays matched, the measured line" "0 1 1" "$? $(grep -c ': 3 of 3 arrays matched again (100.0% of the profiled bytes)' $T/err) $(grep -c "^numaplace profile: sampled accesses on the accessing thread's node" $T/err)"
check "profile --profile: the same patterns again" "blocked cyclic shared-read-mostly" "$(arrays $T/pp.json | awk '{printf "%s%s", (NR > 1 ? " " : ""), $6}')"

# run --profile at another input size: every profiled array matched again
OMP_NUM_THREADS=2 $N run --profile $T/p3.json --verbose -- "$P/patterns3" 24 2 >$T/out 2>$T/err
r=$?
check "run --profile, another size: status 0" 0 $r
check "run --profile, another size: 100% of the profiled bytes matched" 1 "$(grep -c ': 3 of 3 arrays matched again (100.0% of the profiled bytes)' $T/err)"
grep 'matched again' $T/err
# run --json --profile: stderr is JSON only (the run's object, then one JSON line per event; the
# profile's lines as {"event": "message"}), the three arrays' lines and the matched line among them
OMP_NUM_THREADS=2 $N run --json --profile $T/p3.json -- "$P/patterns3" 8 2 >/dev/null 2>$T/err
check "run --json --profile: status 0; stderr all JSON: values, messages, arrays' lines, matched" "0 True 4 3 1" "$? $(python3 -c '
import json, sys
t = open(sys.argv[1]).read(); d = json.JSONDecoder(); i = 0; vals = []; ok = True
while i < len(t):
    while i < len(t) and t[i].isspace(): i += 1
    if i >= len(t): break
    try:
        v, i = d.raw_decode(t, i); vals.append(v)
    except ValueError:
        ok = False; break
m = [v["text"] for v in vals if isinstance(v, dict) and v.get("event") == "message"]
print(ok, len(m), sum(": profile: 8388608 bytes from " in x for x in m), sum("3 of 3 arrays matched again" in x for x in m))' $T/err)"
# a profile in which no allocation reached the threshold: said so, no percentage of nothing
OMP_NUM_THREADS=2 $N profile --threshold 1G --out $T/none.json -- "$P/patterns3" 8 2 >/dev/null 2>$T/err
check "profile --threshold 1G: status 0, no array in it" "0 0" "$? $(arrays $T/none.json | wc -l)"
OMP_NUM_THREADS=2 $N run --profile $T/none.json --verbose -- "$P/patterns3" 8 2 >$T/out 2>$T/err
check "run --profile of a profile with no array: status 0, said so" "0 1" "$? $(grep -c ': 0 of 0 arrays matched again (the profile has no array); ' $T/err)"
# refused before the program starts: truncated, foreign, another program's
head -c 2000 $T/p3.json >$T/trunc.json
echo '{"format": "something-else", "version": 1}' >$T/foreign.json
for f in trunc foreign; do
    $N run --profile $T/$f.json -- "$P/profile_edge" touch >$T/out 2>$T/err
    check "run --profile $f: status 125, the program not started, one line" "125 0 1" "$? $(wc -c <$T/out) $(wc -l <$T/err)"
done
$N run --profile $T/p3.json -- "$P/profile_edge" touch >$T/out 2>$T/err
check "run --profile of another program: status 125, not started" "125 0" "$? $(wc -c <$T/out)"
check "run --profile of another program: says whose it is" 1 "$(grep -c 'is a profile of .*patterns3.*, not of .*profile_edge' $T/err)"
$N run --profile $T/p3.json --pin compact -- "$P/patterns3" 1 1 >/dev/null 2>$T/err
check "run --profile with another pinning: a warning" 1 "$(grep -c 'warning: the profile was taken without pinning, this run pins with --pin compact' $T/err)"
check "run --profile, every array advised: no warning about advice" 0 "$(grep -c 'no stored advice' $T/err)"
# an explicit map naming a node this machine lacks (63): the block is left under the default, said
# once without --verbose, and the program runs as it does alone
python3 - $T/p3.json $T/x63.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["machine"]["nodes"] = sorted(set(d["machine"]["nodes"]) | {63})
a = d["arrays"][0]
a["advice"].update(policy="explicit", chunk_nodes=[63] * a["nchunks"], block_threads=None,
                   period_pages=None)
json.dump(d, open(sys.argv[2], "w"))
PY
OMP_NUM_THREADS=2 $N run --profile $T/x63.json -- "$P/patterns3" 16 2 >$T/out 2>$T/err
r=$?
OMP_NUM_THREADS=2 "$P/patterns3" 16 2 >$T/ref 2>/dev/null
check "run --profile, a map to a missing node: status 0, the plain output, said once" "0 $(cksum <$T/ref) 1" "$r $(cksum <$T/out) $(grep -c 'its explicit map is not applied here (.*node 63.*): the default applies' $T/err)"
# an advised policy the kernel holds on an untouched range (bind_all here) is set lazily: a
# 256 MiB block of which one byte a MiB is written stays sparse (it was populated whole)
$N profile --out $T/sp.json -- "$P/profile_edge" sparse >/dev/null 2>&1
python3 - $T/sp.json $T/sp0.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arrays"]:
    if a["site"]["kind"] == "heap":
        a["advice"].update(policy="bind_all:0", pattern="serial", chunk_nodes=None)
json.dump(d, open(sys.argv[2], "w"))
PY
$N run -v --profile $T/sp0.json -- "$P/profile_edge" sparse >$T/out 2>$T/err
r=$?
check "run --profile, bind_all on a sparse block: status 0, placed lazily" "0 1" "$r $(grep -c 'profile: 268435456 bytes from profile_edge[.+][^ ]*: bind_all:0 (serial), lazily' $T/err)"
check "run --profile, bind_all on a sparse block: under 16 MiB resident before the touch, the plain sum" \
    "1 $("$P/profile_edge" sparse | awk '{print $7}')" "$(awk '{print ($3 < 16384), $7}' $T/out)"
# with 100 MiB available (a fake /proc/meminfo, NUMAPLACE_FSROOT): the 256 MiB block is still
# placed lazily (nothing populated), and an explicit map (every page populated) is not placed, said
mkdir -p $T/root/proc
ln -s /sys $T/root/sys
ln -s /proc/self $T/root/proc/self
printf 'MemTotal: 1000000 kB\nMemFree: 100000 kB\nMemAvailable: 100000 kB\n' >$T/root/proc/meminfo
NUMAPLACE_FSROOT=$T/root $N run -v --profile $T/sp0.json -- "$P/profile_edge" sparse >$T/out 2>$T/err
check "run --profile, 100 MiB available: the 256 MiB bind_all block placed lazily, the plain sum" \
    "0 1 $("$P/profile_edge" sparse | awk '{print $7}')" "$? $(grep -c 'bind_all:0 (serial), lazily' $T/err) $(awk '{print $7}' $T/out)"
python3 - $T/sp0.json $T/spx.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arrays"]:
    if a["site"]["kind"] == "heap":
        a["advice"].update(policy="explicit", chunk_nodes=[0] * a["nchunks"])
json.dump(d, open(sys.argv[2], "w"))
PY
NUMAPLACE_FSROOT=$T/root $N run -v --profile $T/spx.json -- "$P/profile_edge" sparse >$T/out 2>$T/err
check "run --profile, 100 MiB available: a 256 MiB explicit map not placed, said; the plain sum" \
    "0 1 $("$P/profile_edge" sparse | awk '{print $7}')" "$? $(grep -c 'profile: 268435456 bytes not placed: larger than the memory available to this process now (MemAvailable leaves' $T/err) $(awk '{print $7}' $T/out)"
# a profile whose advice was taken out (a hand-edited one): its arrays are left to first touch,
# said without --verbose; advise --write stores the advice again
python3 - $T/p3.json $T/bare.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arrays"][:2]:
    a.pop("advice", None)
json.dump(d, open(sys.argv[2], "w"))
PY
OMP_NUM_THREADS=2 $N run --profile $T/bare.json -- "$P/patterns3" 1 1 >/dev/null 2>$T/err
check "run --profile without stored advice: status 0, a warning naming 2 of 3 arrays" "0 1" "$? $(grep -c 'warning: 2 of the 3 arrays of --profile .*bare.json have no stored advice and are left to first touch (numaplace advise --write ' $T/err)"
$N advise --write $T/bare.json $T/bare.json >/dev/null 2>&1
OMP_NUM_THREADS=2 $N run --profile $T/bare.json -- "$P/patterns3" 1 1 >/dev/null 2>$T/err
check "run --profile after advise --write: status 0, no warning" "0 0" "$? $(grep -c 'no stored advice' $T/err)"
summary profile
