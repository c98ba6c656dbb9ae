# SPDX-License-Identifier: BSD-3-Clause
# check.sh - sourced by the shell tests (POSIX sh), after setting TESTS to the tests/ directory:
#   check NAME WANT GOT    passes when GOT equals WANT
#   ok / bad MESSAGE       a check passed / failed
#   skip KEY REASON        a check that cannot run here: skipped, or under CI=true a failure
#                          unless KEY is listed in the expected skips (tests/expected-skips.txt,
#                          or $NPL_EXPECTED_SKIPS) for this script (in=, when the line has one);
#                          a listed one logs "expected skip: REASON"
#   summary NAME           prints "NAME: N passed, M failed, S skipped" and returns the exit
#                          status: 0, 1 (a failure, or no check ran at all), 77 (all skipped)
pass=0 fail=0 skipped=0
check() { # name, expected, actual
    if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: got [$3] want [$2]"; fi
}
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skip() { # key, reason...
    _key=$1; shift
    _list=${NPL_EXPECTED_SKIPS:-${TESTS:-tests}/expected-skips.txt}
    _prog=${0##*/}; _prog=${_prog%.*}
    # "KEY [in=PROG,...] REASON": in=, the programs that may skip it (none: any)
    _listed=$(awk -v k="$_key" -v p="$_prog" '$1 != k { next }
        $2 ~ /^in=/ { n = split(substr($2, 4), a, ","); m = 0
                      for (i = 1; i <= n; i++) if (a[i] == p) m = 1
                      if (!m) next; $2 = "" }
        { $1 = ""; sub(/^ +/, ""); print; exit }' "$_list" 2>/dev/null)
    if [ -n "$_listed" ]; then
        skipped=$((skipped + 1)); echo "expected skip: $* [$_key: $_listed]"
    elif [ "${CI:-}" = true ]; then
        fail=$((fail + 1)); echo "FAIL: a skip under CI=true that $_list does not list for $_prog: $_key: $*"
    else
        skipped=$((skipped + 1)); echo "SKIP $_key: $*"
    fi
}
summary() { # name
    if [ $((pass + fail + skipped)) -eq 0 ]; then echo "FAIL $1: no check ran"; fail=1; fi
    echo "$1: $pass passed, $fail failed, $skipped skipped"
    [ "$fail" -eq 0 ] || return 1
    [ "$pass" -gt 0 ] || return 77
    return 0
}
need_interposer() { # what, summary name: sets P (test programs) and PRE (the interposer) beside
    # $N; without the interposer: the skip, the summary, and the script exits
    P=$(dirname "$N")/progs PRE=$(dirname "$N")/libnumaplace_preload.so
    [ -f "$PRE" ] && return 0
    skip_no_interposer "$1" "$PRE"; summary "$2"; exit
}
skip_no_interposer() { # what, path of the interposer: sanitizer builds have none (they own malloc)
    if [ -n "${NPL_SANITIZE:-}" ]; then skip sanitizer-no-interposer "$1: a sanitizer build has no interposer"
    else skip interposer "$1: $2 is missing"; fi
}
