#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# profile_overhead.sh - what `numaplace profile` costs a program: PAIRS interleaved runs of PROG
# plain and under `numaplace profile` (alternating which goes first), each timed by GNU time.
# Prints every pair and the medians of the ratios: wall time, CPU time (user + system, the
# sampler's thread included) and maximum resident memory (the program's and the shared sampling
# tables it touched).
#   bench/profile_overhead.sh NUMAPLACE PROG [ARGS...]     env: PAIRS (default 5), RATE, PROFILE_ARGS
# Both runs wait the same way: OMP_WAIT_POLICY=passive unless set (numaplace profile sets it when
# unset, and that alone speeds an OpenMP program up on a loaded machine: not the sampler's doing).
set -eu
: "${OMP_WAIT_POLICY:=passive}"
export OMP_WAIT_POLICY
N=$1
shift
PAIRS=${PAIRS:-5}
T=$(mktemp -d /tmp/npl_profile_overhead.XXXXXX)
trap 'rm -rf "$T"' EXIT
rate=${RATE:+--rate $RATE}
one() { # plain|profile PROG ARGS -> "wall cpu maxrss_kib"
    mode=$1
    shift
    if [ "$mode" = plain ]; then
        /usr/bin/time -f "%e %U %S %M" -o $T/t "$@" >/dev/null 2>&1 || true
    else
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %U %S %M" -o $T/t "$N" profile --out $T/p.json $rate ${PROFILE_ARGS:-} -- "$@" >/dev/null 2>&1 || true
    fi
    tail -n 1 $T/t | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'
}
: >$T/pairs
i=0
while [ $i -lt "$PAIRS" ]; do
    if [ $((i % 2)) -eq 0 ]; then
        p=$(one plain "$@"); q=$(one profile "$@")
    else
        q=$(one profile "$@"); p=$(one plain "$@")
    fi
    echo "$p $q" >>$T/pairs
    echo "pair $i: plain wall/cpu/rss $p | profile $q"
    i=$((i + 1))
done
awk '
function median(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{ n++; w[n] = $4 / $1; c[n] = $5 / ($2 > 0 ? $2 : 0.01); m[n] = $6 / $3 }
END { printf "median ratios over %d pairs: wall %.3f, cpu %.3f, max rss %.3f\n", n, median(w, n), median(c, n), median(m, n) }' $T/pairs
