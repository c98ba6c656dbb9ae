#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/device/run.sh - one session on a many-core machine (assembled by prepare.sh): machine facts,
# profiling overhead (CG, XSBench; the hardware backend too where the machine has its events), the
# many-region program plain, pinned and under transparent next-touch, STREAM and XSBench plain,
# with OpenMP binding, and under `numaplace run` (pinning, THP, 2 MiB hugetlb), rounds interleaved.
# Parts whose programs prepare.sh left out are skipped. Log: $OUT/log.txt.
# env: QUICK=1, SKIP_CG, SKIP_NT, SKIP_APPLY, AR, XS_APPLY=ROUNDS, SKIP_XS, BASE (another build's numaplace, beside its preload: the configurations ntbase and profilebase), SKIP_STREAM, XS_OVERHEAD=PAIRS, ROUNDS, XR, NTR, NTN,
#      XS="XSBench args"
set -u
cd "$(dirname "$0")"; D=$PWD
export LD_LIBRARY_PATH=$D/bin:$D/lib
N=$D/bin/numaplace
O=${OUT:-/tmp/devout}; mkdir -p "$O"
Q=${QUICK:-0}
exec > >(tee "$O/log.txt") 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s]"; }
# medians TAG FIELD WHAT: the median of field FIELD of the log's "TAG A B ..." lines, per "A B"
medians() {
    awk -v tag="$1" -v f="$2" -v what="$3" '$1 == tag {k=$2" "$3; v[k]=v[k]" "$f}
      END{for(k in v){n=split(v[k],a," "); for(i=1;i<=n;i++)for(j=i+1;j<=n;j++)if(a[j]<a[i]){t=a[i];a[i]=a[j];a[j]=t}
      printf "%s %-15s median %s %.3f s (n=%d)\n", tag, k, what, (n%2?a[(n+1)/2]:(a[n/2]+a[n/2+1])/2), n}}' "$O/log.txt" | sort
}
echo "== machine"; uname -r; nproc; lscpu | grep -E "Model name|Socket|Core|Thread|NUMA|L3|Flags" | cut -c1-200
echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>&1)"; ls /sys/bus/event_source/devices/ 2>&1
ls /sys/bus/event_source/devices/cpu/events 2>&1 | tr '\n' ' ' | cut -c1-600; echo
echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled) balancing=$(cat /proc/sys/kernel/numa_balancing 2>&1)"
$N --version; $N topo
# 2048 hugetlb pages for the --huge 2M runs, given back at exit (a test suite run later on the
# same machine expects the pool as it was)
HP0=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
trap 'echo $HP0 > /proc/sys/vm/nr_hugepages 2>/dev/null' EXIT
echo 2048 > /proc/sys/vm/nr_hugepages 2>/dev/null; grep -E "HugePages_(Total|Free)" /proc/meminfo
$N profile --out /tmp/p0.json -- $D/bin/cg_plain --rows 20000 --iters 2 2>&1 | head -5; el
if [ -z "${SKIP_CG:-}" ]; then
echo "== profiling overhead (cg_plain, 16 threads)"
R=$([ $Q = 1 ] && echo 50000 || echo 2000000)
PAIRS=$([ $Q = 1 ] && echo 1 || echo 5) sh $D/profile_overhead.sh $N $D/bin/cg_plain --rows $R --scheme pi --iters 30 --measure 1; el
fi
if [ -z "${SKIP_CG:-}" ] && ls /sys/bus/event_source/devices/cpu/events/mem-loads* >/dev/null 2>&1; then
echo "== profiling overhead, hardware backend (cg_plain, 16 threads)"
PROFILE_ARGS="--backend perf" PAIRS=$([ $Q = 1 ] && echo 1 || echo 5) sh $D/profile_overhead.sh $N $D/bin/cg_plain --rows $R --scheme pi --iters 30 --measure 1; el
fi
if [ -z "${SKIP_NT:-}" ]; then
NTN=${NTN:-$([ $Q = 1 ] && echo 4000000 || echo 40000000)}
echo "== many-region program (omp_styles $NTN doubles an array: 11 region entries at 6 sites), seconds"
ms="plain pin nt"; [ -n "${BASE:-}" ] && ms="$ms ntbase"
for r in $(seq 1 "${NTR:-$([ $Q = 1 ] && echo 1 || echo 7)}"); do for c in gcc clang; do for m in $ms; do
  P=$D/bin/omp_styles_$c; s=$(date +%s.%N)
  case $m in plain) $P $NTN ;; pin) $N run --pin scatter -- $P $NTN ;;
    nt) $N run --next-touch --pin scatter --json -- $P $NTN 2>$O/nt.err ;;
    ntbase) $BASE/numaplace run --next-touch --pin scatter --json -- $P $NTN 2>$O/nt.err ;; esac >$O/nt.out
  e=$(date +%s.%N); echo "nt $c $m round $r seconds $(awk "BEGIN{print $e - $s}") $(cat $O/nt.out)"
  [ $m = nt ] || [ $m = ntbase ] && grep '"event": "next_touch"' $O/nt.err | sed "s/^/ntevent $m /"
done; done; done
medians nt 7 time; el
fi
if [ -z "${SKIP_APPLY:-}" ]; then
# what applying a profile costs where every placement is local (one node): the placement itself
echo "== run --profile against plain and run --pin (16 threads; wall, init and iteration seconds)"
AR=${AR:-$([ $Q = 1 ] && echo 1 || echo 5)}
for prog in cg mg; do
  case $prog in cg) A="--rows $([ $Q = 1 ] && echo 50000 || echo 2000000) --scheme pi --iters 30 --measure 1" ;;
                mg) A="--n $([ $Q = 1 ] && echo 32 || echo 256) --scheme pi --iters 10 --measure 1" ;; esac
  P=$D/bin/${prog}_plain
  $N profile --pin scatter --out $O/$prog.json -- $P $A >/dev/null 2>$O/prof.err || { echo "profile of $prog failed"; tail -3 $O/prof.err; }
  grep -c '^' $O/$prog.json >/dev/null 2>&1 && $N advise $O/$prog.json | cut -c1-110
  ms="plain pin profile"; [ -n "${BASE:-}" ] && ms="$ms profilebase"
  for r in $(seq 1 "$AR"); do for m in $ms; do
    s=$(date +%s.%N)
    case $m in plain) $P $A ;; pin) $N run --pin scatter -- $P $A ;;
      profile) $N run --pin scatter --profile $O/$prog.json -- $P $A ;;
      profilebase) $BASE/numaplace run --pin scatter --profile $O/$prog.json -- $P $A ;; esac >$O/a.out 2>$O/a.err
    e=$(date +%s.%N)
    echo "apply $prog $m round $r wall $(awk "BEGIN{print $e - $s}") $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("init", d["init_seconds"], "iters", round(sum(d["iter_seconds"]), 6), "checksum", d.get("checksum"))' $O/a.out 2>/dev/null || tr '\n' ' ' <$O/a.out | grep -o '"init_seconds": [0-9.]*')"
  done; done
done
medians apply 7 wall; medians apply 9 init; el
fi
if [ -n "${XS_APPLY:-}" ] && [ -x $D/bin/XSBench ]; then
# XS_APPLY=ROUNDS: upstream XSBench plain, pinned and under a profile of itself (lookups/s)
echo "== XSBench ${XS:=-s large -G nuclide -p 100000} under run --profile (lookups/s, verification)"
$N profile --pin compact --out $O/xs.json -- $D/bin/XSBench $XS >/dev/null 2>$O/prof.err || tail -3 $O/prof.err
$N advise $O/xs.json | cut -c1-110
ms="plain pin profile"; [ -n "${BASE:-}" ] && ms="$ms profilebase"
for r in $(seq 1 "$XS_APPLY"); do for m in $ms; do
  case $m in plain) $D/bin/XSBench $XS ;; pin) $N run --pin compact -- $D/bin/XSBench $XS ;;
    profile) $N run --pin compact --profile $O/xs.json -- $D/bin/XSBench $XS ;;
    profilebase) $BASE/numaplace run --pin compact --profile $O/xs.json -- $D/bin/XSBench $XS ;;
  esac >$O/x.out 2>&1
  echo "xsapply $m round $r lookups/s $(awk '/^Lookups\/s:/{gsub(",","",$2); print $2}' $O/x.out) $(grep -i 'checksum' $O/x.out | head -1)"
done; done
awk '/^xsapply /{s[$2]+=$6; n[$2]++} END{for(k in s) printf "xsapply %-12s mean %.0f lookups/s (n=%d)\n",k,s[k]/n[k],n[k]}' "$O/log.txt" | sort; el
fi
if [ -n "${XS_OVERHEAD:-}" ] && [ -x $D/bin/XSBench ]; then echo "== profiling overhead (XSBench)"; PAIRS=$XS_OVERHEAD sh $D/profile_overhead.sh $N $D/bin/XSBench -s large -G nuclide -p 100000; el; fi
if [ -z "${SKIP_STREAM:-}" ] && [ -x $D/bin/stream ]; then
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
[ -x $D/bin/XSBench ] || { echo "== XSBench not prepared: skipped"; exit 0; }
[ -z "${SKIP_XS:-}" ] || exit 0
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
