#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs inside the guest: in_guest.sh "ARGS" PROGRAM... ; each PROGRAM gets ARGS (a word
# PROGRAM@A@B gives PROGRAM the extra arguments A B after ARGS). A program passes
# with exit 0, is skipped with exit 77 (every check skipped: tests/unit/check.h), and fails with
# any other status. CI and NPL_EXPECTED_SKIPS come from tests/guest/run.sh's environment.
# Each program's wall time is printed ("--- PROGRAM: exit R, S s"): CI boots every shape under
# one numavm timeout, and these lines say where it goes.
args=$1; shift
rc=0 passed=0 failed=0 skipped=0
for word in "$@"; do
    p=${word%%@*} extra=""
    [ "$p" = "$word" ] || extra=$(echo "${word#*@}" | tr @ ' ')
    echo "--- $p $args $extra"
    t0=$(cut -d' ' -f1 /proc/uptime)
    # shellcheck disable=SC2086
    "$p" $args $extra; r=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    echo "--- $p: exit $r, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
    case $r in
        0) passed=$((passed + 1)) ;;
        77) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)); rc=1 ;;
    esac
done
[ $# -gt 0 ] || { echo "in_guest.sh: no program to run"; rc=1; }
echo "== guest programs: $passed passed, $failed failed, $skipped skipped"
exit $rc
