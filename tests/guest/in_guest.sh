#!/bin/sh
# Runs inside the guest: in_guest.sh "ARGS" PROGRAM... ; each PROGRAM gets ARGS. A program passes
# with exit 0, is skipped with exit 77 (every check skipped: tests/unit/check.h), and fails with
# any other status. CI and NPL_EXPECTED_SKIPS come from tests/guest/run.sh's environment.
args=$1; shift
rc=0 passed=0 failed=0 skipped=0
for p in "$@"; do
    echo "--- $p $args"
    # shellcheck disable=SC2086
    "$p" $args; r=$?
    echo "--- $p: exit $r"
    case $r in
        0) passed=$((passed + 1)) ;;
        77) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)); rc=1 ;;
    esac
done
echo "== guest programs: $passed passed, $failed failed, $skipped skipped"
exit $rc
