#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hold_ratio.sh NUMAPLACE HOLD_BENCH [REPS] - the holds' cost on a read-heavy program: the
# median ns per read of bench/hold_bench.c plain, under `numaplace profile` (default rate) and
# under `run --next-touch` (NUMAPLACE_NEXT_TOUCH_FULL=1), and their ratios to plain. Not a test.
set -eu
N=$1 B=$2 REPS=${3:-5}
med() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
one() { "$@" 2>/dev/null | sed -n 's/.*: \([0-9.]*\) ns per read.*/\1/p'; }
T=$(mktemp -d /tmp/npl_hold_ratio.XXXXXX)
trap 'rm -rf "$T"' EXIT
for i in $(seq "$REPS"); do
    one "$B" >>"$T/plain"
    one "$N" profile --out "$T/p.json" -- "$B" >>"$T/profile"
    NUMAPLACE_NEXT_TOUCH_FULL=1 one "$N" run --next-touch -- "$B" >>"$T/nt"
done
p=$(med <"$T/plain") f=$(med <"$T/profile") n=$(med <"$T/nt")
printf "%-24s %10s %8s\n" mode "ns/read" ratio
printf "%-24s %10s %8s\n" plain "$p" 1.00
printf "%-24s %10s %8.2f\n" profile "$f" "$(echo "$f $p" | awk '{print $1 / $2}')"
printf "%-24s %10s %8.2f\n" "run --next-touch" "$n" "$(echo "$n $p" | awk '{print $1 / $2}')"
