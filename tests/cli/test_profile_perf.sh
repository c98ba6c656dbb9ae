#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace profile's perf backend on the host, end to end, through the software page-fault event
# (NUMAPLACE_PERF_EVENT=page-faults, a test hook: no machine available had the hardware
# memory-address events). tests/progs/perf_touch writes every page of three arrays of PAGES pages
# from known threads (1, 2, then the main thread 0); each page faults once when written (not
# present) and once more when its first-touch trap is still armed, so the profile must hold, for
# array k: samples of its thread only (0 of any other), every one of its PAGES chunks sampled, and
# between PAGES and 2 x PAGES samples. Also: --backend perf without the event (exit 125, the program
# not run), --backend auto falling back in one line, --backend fault, a bad --backend value; and
# the program's status and output unchanged under the perf backend (exits, signals, fork, exec).
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "numaplace profile --backend perf" profile_perf
if ! command -v python3 >/dev/null; then
    skip python3 "numaplace profile --backend perf: the profile's contents need python3"
    summary profile_perf; exit
fi
T=$(mktemp -d /tmp/npl_test_profile_perf.XXXXXX)
trap 'rm -rf "$T"' EXIT
PAGES=512
ALL=$((3 * PAGES))

# the usage errors and the fallback first: they need no perf at all
$N profile --backend sometimes --out $T/x.json -- "$P/perf_touch" 8 >$T/out 2>$T/err
check "--backend sometimes: status 125, the program not run" "125 0" "$? $(wc -c <$T/out)"
NUMAPLACE_PERF_EVENT=bogus $N profile --backend perf --out $T/x.json -- "$P/perf_touch" 8 >$T/out 2>$T/err
check "an unknown stand-in event: status 125, the program not run" "125 0" "$? $(wc -c <$T/out)"
check "an unknown stand-in event: said in one line" 1 "$(grep -c 'NUMAPLACE_PERF_EVENT=bogus: the only stand-in event is page-faults' $T/err)"
if ls /sys/bus/event_source/devices/*/events/mem-loads /sys/bus/event_source/devices/ibs_op >/dev/null 2>&1; then
    skip perf-hardware-events "--backend perf without the stand-in: this machine has memory-address events (the refusal is checked where it has none)"
else
    $N profile --backend perf --out $T/x.json -- "$P/perf_touch" 8 >$T/out 2>$T/err
    check "--backend perf without a memory-address event: status 125, the program not run" "125 0" "$? $(wc -c <$T/out)"
    check "--backend perf without the event: why, in one line" 1 "$(grep -c '^numaplace profile: --backend perf: this machine has no memory-address sampling event' $T/err)"
    $N profile --out $T/a.json -- "$P/perf_touch" $PAGES >$T/out 2>$T/err
    check "--backend auto without the event: the program's output" "touched $ALL" "$(cat $T/out)"
    check "--backend auto without the event: one line says why, fault sampling" 1 "$(grep -c '^numaplace profile: hardware sampling not used (.*): sampling by protection faults' $T/err)"
    check "--backend auto without the event: the profile says fault" fault "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sampling"]["backend"])' $T/a.json)"
fi
$N profile --backend fault --out $T/f.json -- "$P/perf_touch" $PAGES >$T/out 2>$T/err
check "--backend fault: the program's output, one line" "touched $ALL 1" "$(cat $T/out) $(grep -c '^numaplace profile: sampling by protection faults at 2000 pages/s (--backend fault)' $T/err)"

# the stand-in event, end to end
NUMAPLACE_PERF_EVENT=page-faults $N profile --backend perf --out $T/p.json -- "$P/perf_touch" $PAGES >$T/out 2>$T/err
rc=$?
if [ $rc -eq 2 ] && grep -q '^numaplace profile: --backend perf: perf_event_open of page-faults' $T/err; then
    skip perf-refused "numaplace profile --backend perf: the kernel refuses even the software page-fault event here: $(grep -- '--backend perf' $T/err)"
    summary profile_perf; exit
fi
check "perf stand-in: status, the program's output" "0 touched $ALL" "$rc $(cat $T/out)"
check "perf stand-in: the backend line" 1 "$(grep -c '^numaplace profile: sampling memory addresses with perf: page-faults' $T/err)"
check "perf stand-in: no sample lost, none of an unnumbered thread" 1 "$(grep -c '^numaplace profile: perf: [0-9]* samples read, [0-9]* in no tracked array, 0 of threads numaplace did not number, 0 lost$' $T/err)"
# one line per array, in allocation order: thread, its samples, other threads' samples, chunks
# sampled, and the profile's sampling fields
python3 - $T/p.json >$T/got <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
s = p["sampling"]
print("sampling", s["backend"], s["rw_known"], p["run"]["threads"])
total = 0
for a in sorted(p["arrays"], key=lambda a: a["site"]["ordinal"]):
    per = {}
    chunks = set()
    for phase, chunk, thread, reads, writes, *where in a["samples"]:
        per[thread] = per.get(thread, 0) + reads + writes
        chunks.add(chunk)
    top = max(per, key=per.get) if per else -1
    other = sum(v for t, v in per.items() if t != top)
    total += sum(per.values())
    print("array", a["site"]["ordinal"], a["nchunks"], top, per.get(top, 0), other, len(chunks))
print("total", total, s["samples"])
# the rows' own local and remote counts add up to each array's measured
print("rows", all(len(r) == 7 for a in p["arrays"] for r in a["samples"]) and
      all(sum(r[5] for r in a["samples"]) == a["measured"]["local"] and
          sum(r[6] for r in a["samples"]) == a["measured"]["remote"] for a in p["arrays"]))
PY
check "perf stand-in: sampling fields (backend, rw_known, threads)" "sampling perf False 3" "$(sed -n 1p $T/got)"
check "perf stand-in: three arrays" 3 "$(grep -c '^array' $T/got)"
want_thread="1 2 0"
k=0
for t in $want_thread; do
    line=$(grep "^array $k " $T/got)
    set -- $line
    # array ORDINAL NCHUNKS THREAD SAMPLES OTHER CHUNKS
    check "perf stand-in: array $k: $PAGES chunks, all sampled, by thread $t only" "$PAGES $t 0 $PAGES" "${3:-} ${4:-} ${6:-} ${7:-}"
    n=${5:-0}
    if [ "$n" -ge $PAGES ] && [ "$n" -le $((2 * PAGES)) ]; then ok; else bad "perf stand-in: array $k: $n samples, want $PAGES to $((2 * PAGES)) (one or two faults a page)"; fi
    k=$((k + 1))
done
set -- $(grep '^total' $T/got)
check "perf stand-in: the rows add up to the profile's sample count" "$2" "$3"
check "perf stand-in: the rows' local and remote add up to each array's measured" "rows True" "$(grep '^rows' $T/got)"

# the program's status and output under the perf backend (the child waits at a gate for its
# events, then execs): exits, signals, threads, fork, exec, system calls into its arrays
same() { # PROG ARGS...: status and stdout under profile --backend perf equal those of PROG alone
    "$@" >$T/ref 2>/dev/null
    r1=$?
    NUMAPLACE_PERF_EVENT=page-faults sh -c '"$@"; echo "status $?" >'"$T/st" sh $N profile --backend perf --threshold 64K --out $T/s.json -- "$@" >$T/got 2>$T/err
    r2=$(cut -d' ' -f2 <$T/st)
    check "perf stand-in -- $(basename "$1") ${2:-}: status, output" "$r1 $(cksum <$T/ref)" "$r2 $(cksum <$T/got)"
}
for m in thread abort segv mainexit quick; do
    same "$P/exit_styles" $m
done
head -c 3000000 /dev/urandom >$T/in.bin
for m in fork exec kill segv "io $T/in.bin"; do
    [ -x "$P/profile_edge" ] || break
    # shellcheck disable=SC2086
    same "$P/profile_edge" $m
done
summary profile_perf
