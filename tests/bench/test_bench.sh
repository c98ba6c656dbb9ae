#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench.quick (ctest): bench/run --quick on this machine (host part only; the 4-node guest part runs
# in scripts/test.sh's bench stage) must produce results.json that passes bench/run --check (JSON
# shape, checksums identical across modes/threads/programs, exact locality counts; never speeds),
# and --check must reject a results file whose checksums disagree.
# usage: test_bench.sh BUILD_DIR
set -u
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
TESTS=$root/tests
. "$TESTS/check.sh" # ok, bad, summary
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# each step needs the one before it: the first failure ends the test
if ! python3 "$root/bench/run" --quick --no-guest --no-plots --runs 3 --build "$build" --out "$out" >"$out/log" 2>&1; then
    cat "$out/log"; bad "bench/run --quick"; summary bench.quick; exit
fi
if grep -q "checks OK" "$out/log"; then ok; else cat "$out/log"; bad "bench/run --quick: its checks"; summary bench.quick; exit; fi
if python3 "$root/bench/run" --check "$out"; then ok; else bad "--check of a good file"; summary bench.quick; exit; fi
# a broken checksum must be caught
python3 - "$out/results.json" <<'PY'
import json, sys
p = sys.argv[1]
r = json.load(open(p))
r["xs"]["modes"]["numag"][-1]["checksum"] = "0000000000000000"
r["cg_host"]["pi"]["checksum"] = "bad"
json.dump(r, open(p, "w"))
PY
if python3 "$root/bench/run" --check "$out" >"$out/check2" 2>&1; then
    cat "$out/check2"; bad "--check accepted differing checksums"
elif [ "$(grep -c "^FAIL:" "$out/check2")" = 2 ]; then ok
else cat "$out/check2"; bad "--check of differing checksums: expected 2 problems"; fi
summary bench.quick
