#!/bin/bash
# bench/device/run.sh - one session on a many-core machine (assembled by prepare.sh): machine facts,
# profiling overhead (CG, XSBench), STREAM and XSBench plain, with OpenMP binding, and under
# `numaplace run` (pinning, THP, 2 MiB hugetlb), rounds interleaved. Log: $OUT/log.txt.
# env: QUICK=1, SKIP_CG, SKIP_STREAM, XS_OVERHEAD=PAIRS, ROUNDS, XR, XS="XSBench args"
set -u
cd "$(dirname "$0")"; D=$PWD
export LD_LIBRARY_PATH=$D/bin:$D/lib
N=$D/bin/numaplace
O=${OUT:-/tmp/devout}; mkdir -p "$O"
Q=${QUICK:-0}
exec > >(tee "$O/log.txt") 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s]"; }
echo "== machine"; uname -r; nproc; lscpu | grep -E "Model name|Socket|Core|Thread|NUMA|L3|Flags" | cut -c1-200
echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>&1)"; ls /sys/bus/event_source/devices/ 2>&1
ls /sys/bus/event_source/devices/cpu/events 2>&1 | tr '\n' ' ' | cut -c1-600; echo
echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled) balancing=$(cat /proc/sys/kernel/numa_balancing 2>&1)"
$N --version; $N topo
echo 2048 > /proc/sys/vm/nr_hugepages 2>/dev/null; grep -E "HugePages_(Total|Free)" /proc/meminfo
$N profile --out /tmp/p0.json -- $D/bin/cg_plain --rows 20000 --iters 2 2>&1 | head -5; el
if [ -z "${SKIP_CG:-}" ]; then
echo "== profiling overhead (cg_plain, 16 threads)"
R=$([ $Q = 1 ] && echo 50000 || echo 2000000)
PAIRS=$([ $Q = 1 ] && echo 1 || echo 5) sh $D/profile_overhead.sh $N $D/bin/cg_plain --rows $R --scheme pi --iters 30 --measure 1; el
fi
if [ -n "${XS_OVERHEAD:-}" ]; then echo "== profiling overhead (XSBench)"; PAIRS=$XS_OVERHEAD sh $D/profile_overhead.sh $N $D/bin/XSBench -s large -G nuclide -p 100000; el; fi
if [ -z "${SKIP_STREAM:-}" ]; then
echo "== STREAM (80M doubles a array, 20 times, best rates MB/s), rounds interleaved"
S=$D/bin/stream
cfgs=("plain" "bind_spread" "run_scatter" "run_compact" "run_scatter_thp" "run_scatter_2M")
run_cfg() { case $1 in
  plain) $S ;; bind_spread) OMP_PROC_BIND=spread OMP_PLACES=cores $S ;;
  run_scatter) $N run --pin scatter -- $S ;; run_compact) $N run --pin compact -- $S ;;
  run_scatter_thp) $N run --pin scatter --huge thp --threshold 64M -- $S ;;
  run_scatter_2M) $N run --pin scatter --huge 2M --threshold 64M -- $S ;; esac; }
ROUNDS=${ROUNDS:-$([ $Q = 1 ] && echo 1 || echo 4)}
for r in $(seq 1 $ROUNDS); do for c in "${cfgs[@]}"; do
  v=$(run_cfg $c 2>&1 | awk '/^Triad:/{print $2}'); echo "stream $c round $r triad $v"; done; done
fi
el
XS=${XS:-"-s large -G nuclide -p 100000"}
echo "== XSBench $XS (lookups/s)"
X="$D/bin/XSBench $XS"
xcfgs=("plain" "bind_close" "run_compact" "run_compact_thp" "run_compact_2M")
xrun() { case $1 in
  plain) $X ;; bind_close) OMP_PROC_BIND=close OMP_PLACES=cores $X ;;
  run_compact) $N run --pin compact -- $X ;; run_compact_thp) $N run --pin compact --huge thp -- $X ;;
  run_compact_2M) $N run --pin compact --huge 2M -- $X ;; esac; }
XR=${XR:-$([ $Q = 1 ] && echo 1 || echo 2)}
for r in $(seq 1 $XR); do for c in "${xcfgs[@]}"; do
  v=$(timeout 120 bash -c "$(declare -f xrun); X='$X'; N='$N'; xrun $c" 2>&1 | awk '/^Lookups\/s:/{gsub(",","",$2); print $2}'); echo "xs $c round $r lookups/s $v"; done; done
el
echo "== summary"
awk '/^stream /{s[$2]+=$6; n[$2]++; q[$2]+=$6*$6} END{for(k in s){m=s[k]/n[k]; v=q[k]/n[k]-m*m; printf "stream %-16s mean %.0f MB/s cv %.2f%% (n=%d)\n",k,m,(v>0?sqrt(v):0)/m*100,n[k]}}' "$O/log.txt"
awk '/^xs /{s[$2]+=$6; n[$2]++} END{for(k in s) printf "xs %-16s mean %.0f lookups/s (n=%d)\n",k,s[k]/n[k],n[k]}' "$O/log.txt"
el
