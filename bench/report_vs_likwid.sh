#!/bin/sh
# report_vs_likwid.sh - numaplace's bandwidth figures beside likwid-bench's, in one run, on the
# same cores (every CPU of the first NUMA node) and the same array size:
#   numaplace read-only  <-> likwid-bench -t load     (8 bytes per element)
#   numaplace 1:1 (copy) <-> likwid-bench -t copy     (16 bytes per element)
#   numaplace 2:1 (triad)<-> likwid-bench -t stream   (24 bytes per element)
# prints both rates in MB/s and the ratio numaplace/likwid (issue 14: within 10%).
#   sh bench/report_vs_likwid.sh [build-dir] [--quick]
# A benchmark, not a test: run it on real hardware (the guest's emulated times mean nothing).
# The reference STREAM comparison is bench/stream_check.sh (STREAM_C=stream.c).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
level=${2:-}
N="$B/numaplace"
command -v likwid-bench >/dev/null || { echo "SKIP: likwid-bench missing (apt-get install likwid)"; exit 0; }
[ -x "$N" ] || { echo "report_vs_likwid: $N not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$N" measure $level --no-write --json >"$T/m.json" 2>"$T/m.err"
python3 - "$T/m.json" >"$T/plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["factors"]
print(d["triad_array_bytes"] // 1024, d["bandwidth_node"])
for m in d["mixes"]:
    print(m["read_write"], round(m["mb_per_s"]["median"]), round(m["mb_per_s"]["min"]), round(m["mb_per_s"]["max"]))
PY
read -r kib node <"$T/plan"
ncpu=$(sed -n "s/^bandwidth mixes (node $node, all \([0-9]*\) CPUs).*/\1/p" "$T/m.err")
echo "numaplace measure $level: node $node, $ncpu CPUs, arrays of $kib KiB; likwid-bench on M$node with $ncpu threads"
printf '%-10s %-8s %14s %22s %14s %8s\n' mix likwid numaplace "[min-max]" likwid ratio
tail -n +2 "$T/plan" | while read -r mix med lo hi; do
    case $mix in read-only) k=load; n=1 ;; 1:1) k=copy; n=2 ;; *) k=stream; n=3 ;; esac
    size=$((kib * n))
    lk=$(likwid-bench -t $k -w M$node:${size}kB:$ncpu 2>/dev/null | sed -n 's/^MByte\/s:[[:space:]]*//p' | head -1)
    ratio=$(awk -v a="$med" -v b="${lk:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
    printf '%-10s %-8s %14s %22s %14s %8s\n' "$mix" "$k" "$med" "[$lo-$hi]" "${lk:--}" "$ratio"
done
