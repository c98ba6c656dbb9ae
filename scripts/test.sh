#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite: unit tests (pure logic, synthetic topologies), host tests (syscall layer
# here), CLI tests, page-exact guest tests on 2, 3, 4 and 8 NUMA nodes (tools/numavm), then the
# reliability checks (ASan+UBSan, TSan, valgrind, libFuzzer: scripts/reliability.sh). The ABI
# (scripts/abi_check.sh) and API documentation (scripts/docs_check.sh) stages fail on a break or
# a doxygen warning. Every test program prints "NAME: N passed, M failed, S skipped"; the last
# lines sum them per stage and over the whole run (logs in build/test-logs/). Under CI=true a skip
# that tests/expected-skips.txt does not list is a failure.
# Quick modes (the default, CI): see tests/README.md for what NPL_FULL=1 adds. Each stage prints
# its duration, the summary every stage's and the total.
set -eu
cd "$(dirname "$0")/.."
T0=$(date +%s)
sh scripts/build.sh
echo "== build: $(( $(date +%s) - T0 )) s"
logs=build/test-logs
rm -rf "$logs" && mkdir -p "$logs"
rc=0
stages=""
# stage NAME COMMAND...: its output on the terminal and in $logs/N.log, its status in $logs/N.rc
stage() {
    n=$(( $(echo "$stages" | wc -w) + 1 )); name=$1; shift
    stages="$stages $n"
    echo "$name" >"$logs/$n.name"
    echo "== $name"
    t0=$(date +%s)
    { st=0; "$@" 2>&1 || st=$?; echo $st >"$logs/$n.rc"; } | tee "$logs/$n.log"
    echo $(( $(date +%s) - t0 )) >"$logs/$n.seconds"
    echo "== $name: $(cat "$logs/$n.seconds") s"
    case $(cat "$logs/$n.rc") in 0|77) ;; *) rc=1 ;; esac # 77: every check skipped (not under CI)
}
ctest_all() { # the test programs' own output is in ctest's LastTest.log: kept for the counts
    st=0
    (cd build && ctest --output-on-failure -j2) || st=1
    cp build/Testing/Temporary/LastTest.log "$logs/ctest-LastTest.log" 2>/dev/null || true
    return $st
}
reliability() { # (a failing ctest's output is in both logs: its failures count twice)
    st=0
    bash scripts/reliability.sh || st=1
    for b in asan tsan; do # their ctest runs' program output
        cp "build-$b/Testing/Temporary/LastTest.log" "$logs/reliability-$b-LastTest.log" 2>/dev/null || true
    done
    return $st
}
stage "unit, host and CLI tests (ctest)" ctest_all
stage "ABI: libnumaplace.so against abi/libnumaplace.abi (scripts/abi_check.sh), and its self-test" \
    sh -c 'sh scripts/abi_check.sh && sh scripts/abi_check.sh --selftest'
stage "API docs: doxygen on the public headers, warnings are errors (scripts/docs_check.sh)" \
    sh scripts/docs_check.sh
stage "guest tests (multi-node QEMU guests)" bash tests/guest/run.sh
stage "benchmark suite, quick mode: host part and a 4-node guest part, checks JSON, checksums and exact locality counts, never speeds (bench/run --quick)" \
    python3 bench/run --quick --no-plots --runs 3 --out build/bench-results
stage "reliability: sanitizers, valgrind, fuzzing (scripts/reliability.sh)" reliability

# the summary: per stage, its status and the sum of its programs' summary lines (ctest stages:
# from LastTest.log, whose lines are the programs' own output)
sums() { # files...: "passed failed skipped lines" of every "NAME: N passed, M failed, S skipped"
    cat "$@" 2>/dev/null | tr -d '\r' |
        awk 'match($0, /^[^ =][^:]*: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/) {
                 n = split($0, w, " "); p += w[n-5]; f += w[n-3]; s += w[n-1]; l++ }
             END { printf "%d %d %d %d\n", p, f, s, l }'
}
echo
echo "== test summary (logs: $logs/)"
tp=0 tf=0 ts=0
for n in $stages; do
    files="$logs/$n.log"
    case $(cat "$logs/$n.name") in
        unit*) files="$logs/ctest-LastTest.log" ;;
        reliability*) files="$files $logs/reliability-asan-LastTest.log $logs/reliability-tsan-LastTest.log" ;;
    esac
    # shellcheck disable=SC2086
    set -- $(sums $files)
    tp=$((tp + $1)) tf=$((tf + $2)) ts=$((ts + $3))
    case $(cat "$logs/$n.rc") in 0) st=ok ;; 77) st=skipped ;; *) st=FAILED ;; esac
    progs="$4 programs"; [ "$4" -gt 0 ] || progs="its status only"
    printf '  %-7s %5d s %6d passed, %4d failed, %4d skipped (%s)  %s\n' "$st" "$(cat "$logs/$n.seconds")" \
        "$1" "$2" "$3" "$progs" "$(cut -c1-60 "$logs/$n.name")"
    grep -h 'tests passed, .* tests failed out of' "$logs/$n.log" | sed 's/^/          ctest: /'
done
echo "== all stages: $tp passed, $tf failed, $ts skipped (checks of the test programs)"
echo "== the whole test command: $(( $(date +%s) - T0 )) s (budget: 35 minutes on an idle 2-core machine)"
[ $rc -eq 0 ] && echo "all test stages passed" || echo "some test stage FAILED"
exit $rc
