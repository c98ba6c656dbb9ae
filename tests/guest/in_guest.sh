#!/bin/sh
# Runs inside the guest: in_guest.sh "ARGS" PROGRAM... ; each PROGRAM gets ARGS.
args=$1; shift
rc=0 passed=0 failed=0
for p in "$@"; do
    echo "--- $p $args"
    # shellcheck disable=SC2086
    "$p" $args; r=$?
    echo "--- $p: exit $r"
    if [ $r -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); rc=1; fi
done
echo "guest programs: $passed passed, $failed failed"
exit $rc
