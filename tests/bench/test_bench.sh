#!/bin/sh
# bench.quick (ctest): bench/run --quick on this machine (host part only; the 4-node guest part runs
# in scripts/test.sh's bench stage) must produce results.json that passes bench/run --check (JSON
# shape, checksums identical across modes/threads/programs, exact locality counts; never speeds),
# and --check must reject a results file whose checksums disagree.
# usage: test_bench.sh BUILD_DIR
set -eu
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$root/bench/run" --quick --no-guest --no-plots --runs 3 --build "$build" --out "$out" >"$out/log" 2>&1 ||
    { cat "$out/log"; echo "FAIL: bench/run --quick"; exit 1; }
grep -q "checks OK" "$out/log" || { cat "$out/log"; echo "FAIL: checks"; exit 1; }
python3 "$root/bench/run" --check "$out" || { echo "FAIL: --check of a good file"; exit 1; }
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
    cat "$out/check2"; echo "FAIL: --check accepted differing checksums"; exit 1
fi
grep -c "^FAIL:" "$out/check2" | grep -qx 2 || { cat "$out/check2"; echo "FAIL: expected 2 problems"; exit 1; }
echo "bench.quick: 3 passed, 0 failed, 0 skipped"
