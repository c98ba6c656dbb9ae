#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_skip_scope.sh - tests/check.sh's skip is per program as skip.h's (test_skip_scope.c): a
# script named like a program the key's in= lists may skip it under CI=true, another fails.
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
for name in test_profile_perf test_profile; do
    printf '%s\n' "TESTS=$TESTS" ". \$TESTS/check.sh" 'skip perf-refused "a check"' 'summary x' >"$d/$name.sh"
done
out=$(CI=true sh "$d/test_profile_perf.sh"); rc=$?
check "perf-refused in test_profile_perf: an expected skip" "1 77" "$(echo "$out" | grep -c '^expected skip') $rc"
out=$(CI=true sh "$d/test_profile.sh"); rc=$?
check "perf-refused in test_profile: a failure under CI=true" "1 1" "$(echo "$out" | grep -c 'does not list for test_profile') $rc"
out=$(CI= sh "$d/test_profile.sh"); rc=$?
check "perf-refused in test_profile outside CI: a skip" "77" "$rc"
summary test_skip_scope_sh
