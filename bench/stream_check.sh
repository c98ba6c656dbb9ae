#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# stream_check.sh - does `numaplace measure`'s local triad agree with the reference STREAM?
#   STREAM_C=/path/to/stream.c sh bench/stream_check.sh [build-dir]
# McCalpin's stream.c is not part of numaplace (its licence asks for unmodified, attributed
# copies, and the project vendors no third-party code): get it from
# https://www.cs.virginia.edu/stream/FTP/Code/stream.c (or github.com/jeffhammond/STREAM).
# Both are compiled by the same compiler with the project's flags (-O2 -g, OpenMP), run side by
# side on the same array size (measure's triad arrays), one thread pinned to CPU 0 and then all
# allowed CPUs; prints each Triad rate and the ratio measure/STREAM (the goal: within 10%).
# A benchmark, not a test: run it on real hardware (the guest's emulated times mean nothing).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N="$B/numaplace"
if [ -z "${STREAM_C:-}" ] || [ ! -r "$STREAM_C" ]; then
    echo "stream_check: not run: set STREAM_C to the reference stream.c (not vendored; see the header of $0)"
    exit 77
fi
[ -x "$N" ] || { echo "stream_check: $N not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "== numaplace measure --no-write"
"$N" measure --no-write > "$T/measure.out" 2>&1
kib=$(sed -n 's/.*triad arrays 3 x \([0-9]*\) KiB.*/\1/p' "$T/measure.out" | head -1)
n=$((kib * 1024 / 8))
# the one-thread row of "triad bandwidth against threads" (the per-pair figure uses every CPU)
one=$(sed -n 's/^ *1 thread(s) *\([0-9.]*\) MB\/s.*/\1/p' "$T/measure.out" | head -1)
ncpu=$(nproc)
all=$(sed -n "s/^ *$ncpu thread(s) *\([0-9.]*\) MB\/s.*/\1/p" "$T/measure.out" | tail -1)
[ -n "$all" ] || all=$(sed -n 's/^ *[0-9]* thread(s) *\([0-9.]*\) MB\/s.*/\1/p' "$T/measure.out" | tail -1)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$B/CMakeCache.txt")
echo "== $cc -O2 -g -fopenmp -DSTREAM_ARRAY_SIZE=$n -DNTIMES=10 stream.c"
"${cc:-gcc}" -O2 -g -fopenmp -DSTREAM_ARRAY_SIZE="$n" -DNTIMES=10 -mcmodel=medium "$STREAM_C" -o "$T/stream"
s1=$(OMP_NUM_THREADS=1 taskset -c 0 "$T/stream" | awk '/^Triad:/ {print $2}')
sall=$(OMP_NUM_THREADS=$ncpu OMP_PROC_BIND=close OMP_PLACES=cores "$T/stream" | awk '/^Triad:/ {print $2}')
echo "array: $n doubles x 3 ($kib KiB each)"
printf "%-22s %12s %12s %8s\n" "threads" "measure MB/s" "STREAM MB/s" "ratio"
awk -v a="$one" -v b="$s1" 'BEGIN { printf "%-22s %12.0f %12.0f %8.3f\n", "1 (CPU 0)", a, b, a / b }'
awk -v a="$all" -v b="$sall" -v t="$ncpu" 'BEGIN { printf "%-22s %12.0f %12.0f %8.3f\n", t " (all allowed)", a, b, a / b }'
