#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace's own blocks are no arrays of the program (src/profile/site.c npl__site_attribute):
# tests/progs/own_blocks.c makes two blocks at one site and calls npl_* between them, whose
# page lists and hwloc topology are malloc'd blocks of 64 KiB and more. Under `numaplace
# profile --threshold 64K` the profile holds the program's arrays only: make's two (one site,
# ordinals 0 and 1, 8 and 4 MiB) and the one it asked npl_alloc for; under `numaplace run -v
# --threshold 64K --policy cyclic` two allocations are placed. Before the fix the library's
# blocks were tracked at main's call sites (6 arrays: page lists of 64 and 128 KiB, hwloc's
# 71 KiB), the sampler protected them and npl_check failed (the program exited 4); run placed 7.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "numaplace's own blocks" profile_own
[ -x "$P/own_blocks" ] || { bad "$P/own_blocks is not built"; summary profile_own; exit 1; }
T=$(mktemp -d /tmp/npl_test_own.XXXXXX)
trap 'rm -rf "$T"' EXIT
want=$("$P/own_blocks")
check "own_blocks alone: its checksum" "checksum 785420928" "$want"
$N profile --threshold 64K --out "$T/p.json" -- "$P/own_blocks" >"$T/out" 2>"$T/err"
check "profile: status and the program's output" "0 $want" "$? $(cat "$T/out")"
if command -v python3 >/dev/null; then
    check "the profile holds the program's arrays only: make's two (one site, ordinals 0 and 1), npl_alloc's" \
        "3 arrays, 2 sites: 4194304 ordinal 1, 8388608 ordinal 0, 67108864 ordinal 0" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
a = sorted((x["bytes"], x["site"]["ordinal"]) for x in d["arrays"])
sites = {(x["site"]["object"], x["site"]["offset"]) for x in d["arrays"]}
print("%d arrays, %d sites: %s" % (len(a), len(sites), ", ".join("%d ordinal %d" % t for t in a)))' "$T/p.json")"
else
    skip python3 "the profile's arrays: python3 is missing"
fi
$N run -v --threshold 64K --policy cyclic -- "$P/own_blocks" >"$T/out" 2>"$T/err"
check "run -v: status and output" "0 $want" "$? $(cat "$T/out")"
check "run -v: two allocations placed (the program's)" 2 "$(grep -c '^numaplace run: allocation' "$T/err")"
[ "$(grep -c '^numaplace run: allocation' "$T/err")" = 2 ] || sed 's/^/  | /' "$T/err" | head -20
summary profile_own
