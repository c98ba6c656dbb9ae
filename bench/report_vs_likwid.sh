#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# report_vs_likwid.sh - numaplace's bandwidth figures beside likwid-bench's, in one run, on the
# same cores (every CPU of the first NUMA node) and the same array size:
#   numaplace read-only  <-> likwid-bench -t load_sse    (8 bytes per element)
#   numaplace 1:1 (copy) <-> likwid-bench -t copy_sse    (16 bytes per element)
#   numaplace 2:1 (triad)<-> likwid-bench -t stream_sse  (24 bytes per element)
#                        and likwid-bench -t stream      (the same triad, scalar code)
# numaplace's kernels are compiled for the baseline x86-64 ISA (SSE2, no -march), so the _sse
# kernels are the same instructions; likwid's plain kernels are scalar, which in cache is slower.
# Both count bytes the same way (no write-allocate traffic). The two tools run in alternating
# rounds (--rounds R, default 3; 1 with --quick), so that a drift of the machine hits both; each
# side is the median [min-max] of all its runs (numaplace: --reps 5 per round), and the ratio is
# numaplace's median over likwid-bench's (the goal: within 10%).
#   sh bench/report_vs_likwid.sh [build-dir] [--quick|--full] [--rounds R]
# A benchmark, not a test: run it on quiet, real hardware (emulated times mean nothing).
# The reference STREAM comparison is bench/stream_check.sh (STREAM_C=stream.c).
set -eu
cd "$(dirname "$0")/.."
B=build
level=
rounds=
while [ $# -gt 0 ]; do
    case $1 in
    --quick | --full) level=$1 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift ;;
    -*) echo "usage: report_vs_likwid.sh [build-dir] [--quick|--full] [--rounds R]" >&2; exit 2 ;;
    *) B=$1 ;;
    esac
    shift
done
[ -n "$rounds" ] || { [ "$level" = --quick ] && rounds=1 || rounds=3; }
N="$B/numaplace"
command -v likwid-bench >/dev/null || { echo "report_vs_likwid: not run: likwid-bench is missing (apt-get install likwid)"; exit 77; }
[ -x "$N" ] || { echo "report_vs_likwid: $N not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
    "$N" measure $level --no-write --json >"$T/m$r.json" 2>"$T/m.err"
    python3 - "$T/m$r.json" >"$T/plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["factors"]
print(d["triad_array_bytes"] // 1024, d["bandwidth_node"])
PY
    read -r kib node <"$T/plan"
    ncpu=$(sed -n "s/^bandwidth mixes (node $node, all \([0-9]*\) CPUs).*/\1/p" "$T/m.err")
    for k in load_sse:1 copy_sse:2 stream_sse:3 stream:3; do
        likwid-bench -t "${k%:*}" -w "M$node:$((kib * 1024 * ${k#*:}))B:$ncpu" 2>/dev/null |
            sed -n "s/^MByte\/s:[[:space:]]*/${k%:*} /p" | head -1 >>"$T/likwid"
    done
    r=$((r + 1))
done
echo "numaplace measure $level: node $node, $ncpu CPUs, arrays of $kib KiB; likwid-bench on M$node with $ncpu threads; $rounds round(s)"
python3 - "$T" "$rounds" <<'PY'
import json, statistics, sys
t, rounds = sys.argv[1], int(sys.argv[2])
ours = {}
for r in range(1, rounds + 1):
    for m in json.load(open(f"{t}/m{r}.json"))["factors"]["mixes"]:
        ours.setdefault(m["read_write"], []).extend(m["mb_per_s"]["reps"])
theirs = {}
for line in open(f"{t}/likwid"):
    k, v = line.split()
    theirs.setdefault(k, []).append(float(v))
fmt = "{:<10} {:<10} {:>10} {:>17} {:>10} {:>17} {:>7}"
print(fmt.format("mix", "likwid", "numaplace", "[min-max]", "likwid", "[min-max]", "ratio"))
for mix, k in (("read-only", "load_sse"), ("1:1", "copy_sse"), ("2:1", "stream_sse"),
               ("2:1", "stream")):
    a, b = ours.get(mix, []), theirs.get(k, [])
    rng = lambda v: f"[{min(v):.0f}-{max(v):.0f}]" if v else "-"
    ma = statistics.median(a) if a else 0
    mb = statistics.median(b) if b else 0
    print(fmt.format(mix, k, f"{ma:.0f}", rng(a), f"{mb:.0f}", rng(b),
                     f"{ma / mb:.3f}" if ma and mb else "-"))
PY
