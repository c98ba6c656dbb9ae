#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace profile and run --profile under another allocator (jemalloc, tcmalloc, mimalloc, whose
# malloc, aligned forms, operator new and operator delete are their own): the blocks are profiled
# where that allocator put them (the interposer adopts them), let go of before it frees them, and
# their sites are the program's. Before: `profile` saw no array at all ("no array of 65536 bytes
# or more was seen"); a block freed while units of it were still armed for their first touch,
# or freed by the allocator's own operator delete, stayed protected, the allocator reused it for
# small objects, and the program died of SIGSEGV (cxx_align_mimalloc, every run).
# (run --profile's in-place placement per ordinal: host.profile_apply_jemalloc and _mimalloc.)
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "profiles under another allocator" profile_foreign
T=$(mktemp -d /tmp/npl_test_foreign.XXXXXX)
trap 'rm -rf "$T"' EXIT
found=0
for a in jemalloc tcmalloc mimalloc; do
    for prog in align_styles_$a cxx_align_$a; do
        if [ ! -x "$P/$prog" ]; then
            skip "prog-$prog" "profile -- $prog: $P/$prog is not built (lib$a: scripts/deps.sh)"
            continue
        fi
        found=1
        "$P/$prog" >"$T/ref" 2>/dev/null
        echo "status $?" >>"$T/ref"
        $N profile --threshold 64K --out "$T/p.json" -- "$P/$prog" >"$T/got" 2>"$T/err"
        echo "status $?" >>"$T/got"
        check "profile -- $prog: status and output as a plain run's" "$(cksum <"$T/ref")" "$(cksum <"$T/got")"
        check "profile -- $prog: 30 arrays or more, every heap site in the program" "1 0" "$(python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
heap = [a for a in d["arrays"] if a["site"]["kind"] == "heap"]
print(int(len(heap) >= 30), sum(os.path.basename(a["site"]["object"]) != sys.argv[2] for a in heap))' "$T/p.json" "$prog" 2>&1)"
    done
done
[ $found = 1 ] || skip foreign-allocators "no program linked with jemalloc, tcmalloc or mimalloc is built (scripts/deps.sh)"
summary profile_foreign
