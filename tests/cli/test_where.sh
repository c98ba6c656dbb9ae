#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace where: JSON escaping of mapping names (round trip through python's json), 4,000
# mappings in one linear pass, a process that exits mid-scan (partial, exit 1), mappings that
# change mid-scan, a zombie (exit 1).
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
W=${WHERE_TARGET:?set WHERE_TARGET to the where_target binary}
T=$(mktemp -d /tmp/npl_where.XXXXXX)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
wait_ready() { # file: wait until the target said "ready" (10 s at most)
    i=0
    while ! grep -q ready "$1" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

# 1. names that need escaping: quote, backslash, tab, non-ASCII, 200 characters, space, '='
long=$(printf 'n%.0s' $(seq 1 200))
tab=$(printf 'a\tb')
"$W" names "$T" 'q"uote' 'back\slash' "$tab" 'nön-ÄSCII-日本' "$long" 'sp ace=eq' >"$T/names.out" &
p=$!; pids="$pids $p"
wait_ready "$T/names.out"
"$N" where "$p" --json >"$T/names.json"; check "where --json on odd names: exit 0" 0 $?
python3 - "$T" "$T/names.json" "$long" <<'PY'; check "names round-trip through JSON" 0 $?
import json, sys
d, path, long = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(path, encoding="utf-8"))
whats = {m["what"] for m in doc["mappings"]}
want = ['q"uote', 'back\\slash', 'a\tb', 'nön-ÄSCII-日本', long, 'sp ace=eq']
missing = [w for w in want if d + "/" + w not in whats]
if missing:
    print("missing:", [repr(w) for w in missing], "have:", [w for w in whats if w.startswith(d)])
    sys.exit(1)
PY
"$N" where "$p" >/dev/null; check "where (text) on odd names: exit 0" 0 $?
kill $p

# 2. 4,000 mappings: one linear pass (asserts the counts; it used to take 100 s)
"$W" many 4000 >"$T/many.out" &
p=$!; pids="$pids $p"
wait_ready "$T/many.out"
"$N" where "$p" --json >"$T/many.json" 2>"$T/many.err"; check "where on 4000 mappings: exit 0" 0 $?
python3 - "$T/many.json" <<'PY'; check "4000 one-page anonymous mappings counted" 0 $?
import json, sys
d = json.load(open(sys.argv[1]))
one = [m for m in d["mappings"] if sum(m["pages"].values()) == 1 and m["what"] == "anon"]
total = sum(v["base_pages"] for v in d["total"].values())
ok = len(d["mappings"]) >= 4000 and len(one) >= 4000 and total >= 4000 and not d["partial"]
if not ok:
    print(len(d["mappings"]), len(one), total, d["partial"])
sys.exit(0 if ok else 1)
PY
check "no 'changed' warning on a quiet process" 0 "$(grep -c 'changed' "$T/many.err")"
kill $p

# The cases below change the target between where's numa_maps and smaps reads: where stops itself
# there (NUMAPLACE_WHERE_TEST_STOP=1), the test waits for that state, makes the change, waits
# until the change is visible, and only then lets where go on (SIGCONT). No race with a sleep.
# Each wait polls a condition; its bound (60 s) only ends a hung test, it is never a verdict.
until_true() { # command...: poll every 0.05 s until it succeeds; 1 after 60 s
    i=0
    while ! "$@"; do [ $i -ge 1200 ] && return 1; sleep 0.05; i=$((i + 1)); done
}
is_stopped() { [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ]; }
starts() { awk -F- '{print $1}' "/proc/$1/maps" 2>/dev/null; }
starts_changed() { [ "$(starts "$1")" != "$(cat "$2")" ]; }

# 3. a process that exits mid-scan: the target is killed and reaped while where is stopped
"$W" many 2000 >"$T/exit.out" &
p=$!; pids="$pids $p"
wait_ready "$T/exit.out"
NUMAPLACE_WHERE_TEST_STOP=1 "$N" where "$p" --json >"$T/exit.json" 2>"$T/exit.err" &
w=$!; pids="$pids $w"
until_true is_stopped $w; check "exit mid-scan: where stopped between its reads" 0 $?
kill $p; wait $p 2>/dev/null
check "exit mid-scan: the target is gone before where goes on" no "$([ -e /proc/$p ] && echo yes || echo no)"
kill -CONT $w; wait $w
check "exit mid-scan: exit 1" 1 $?
check "exit mid-scan: says partial" 1 "$(grep -c 'partial result' "$T/exit.err")"
check "exit mid-scan: \"partial\": true" True "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["partial"])' <"$T/exit.json")"

# 4. mappings that change between the numa_maps and smaps reads: said, still exit 0, and every
# address range counted once (no two counted mappings overlap)
"$W" churn >"$T/churn.out" &
p=$!; pids="$pids $p"
wait_ready "$T/churn.out"
NUMAPLACE_WHERE_TEST_STOP=1 "$N" where "$p" --json --all >"$T/churn.json" 2>"$T/churn.err" &
w=$!; pids="$pids $w"
until_true is_stopped $w; check "mappings changed: where stopped between its reads" 0 $?
starts $p >"$T/starts"
until_true starts_changed $p "$T/starts"; check "mappings changed: the target mapped more meanwhile" 0 $?
kill -CONT $w; wait $w
check "mappings changed: exit 0" 0 $?
check "mappings changed: said on stderr" 1 "$(grep -c 'mappings changed during the scan' "$T/churn.err")"
python3 - "$T/churn.json" <<'PY'; check "mappings changed: flagged, no range counted twice" 0 $?
import json, sys
d = json.load(open(sys.argv[1]))
r = sorted((int(m["start"], 16), int(m.get("end", m["start"]), 16)) for m in d["mappings"])
overlap = any(b[0] < a[1] for a, b in zip(r, r[1:]))
sys.exit(0 if d["mappings_changed"] and not overlap and not d["partial"] else 1)
PY
kill $p

# 5. a zombie
"$W" zombie >"$T/zombie.out" &
p=$!; pids="$pids $p"
wait_ready "$T/zombie.out"
z=$(awk '{print $2}' "$T/zombie.out")
"$N" where "$z" 2>"$T/zombie.err"; check "zombie: exit 1" 1 $?
check "zombie: message" 1 "$(grep -c "process $z is a zombie (exited, not reaped)" "$T/zombie.err")"
kill $p

summary test_where
