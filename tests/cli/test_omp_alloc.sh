#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# OpenMP allocators with omp_atk_partition on the host (one node: every page is on node 0, so
# what is checked here is the mechanics; the placement page by page is tests/guest/
# guest_omp_alloc.c's): under numaplace run, the programs' own omp_* calls (libgomp, libomp,
# gfortran) and allocate clause are served with the contents kept (calloc zero, realloc's first
# half, alignments), status 0; numaplace/omp.h's capability probe names each allocator's
# partition (blocked 17, interleaved 18, nearest 16) and none for omp_default_mem_alloc (-1),
# OpenMP 6.0's part_size (key 14) 0 refused and alone taken for the default partition;
# under profile every omp_alloc array is at its caller's site in the program.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh"
need_interposer "OpenMP allocators under numaplace run" omp_alloc
T=$(mktemp -d /tmp/npl_test_omp_alloc.XXXXXX)
trap 'rm -rf "$T"' EXIT
for prog in omp_alloc_gcc omp_alloc_clang omp_alloc_f; do
    [ -x "$P/$prog" ] || { skip "prog-$prog" "OpenMP allocators: $P/$prog is not built (scripts/deps.sh)"; continue; }
    $N run -- "$P/$prog" >$T/out 2>$T/err
    r=$?
    check "run -- $prog: status 0, no case wrong" "0 1" "$r $(grep -c ': [0-9]* cases, 0 wrong$' $T/out)"
    check "run -- $prog: nothing on stderr" 0 "$(wc -c <$T/err)"
done
if [ -x "$P/omp_alloc_lib" ]; then
    "$P/omp_alloc_lib" >$T/out 2>&1
    check "omp_alloc_lib: status 0, no case wrong" "0 1" "$? $(grep -c ': [0-9]* cases, 0 wrong$' $T/out)"
    check "omp_alloc_lib: each allocator's partition; none for the default allocator" 1 \
        "$(grep -c '^omp_alloc: partitions 17 18 16, omp_default_mem_alloc -1$' $T/out)"
    check "omp_alloc_lib: OpenMP 6.0's part_size 0 refused (EINVAL); alone, the partition environment (15)" 1 \
        "$(grep -c '^omp_alloc: part_size 0 refused EINVAL, part_size alone partition 15$' $T/out)"
else
    skip prog-omp_alloc_lib "numaplace/omp.h's allocators: $P/omp_alloc_lib is not built"
fi
# profile: every omp_alloc array (the placing allocators', the allocate clause's, the default
# allocator's) at its caller's site in the program, none inside the runtime or numaplace
if [ -x "$P/omp_alloc_gcc" ] && command -v python3 >/dev/null; then
    $N profile --out $T/p.json -- "$P/omp_alloc_gcc" >/dev/null 2>$T/err
    check "profile omp_alloc_gcc: status 0; 11 arrays, every one at a site in the program" "0 11 11" "$? $(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["arrays"]
print(len(a), sum(x["site"]["object"].endswith("/omp_alloc_gcc") for x in a))' $T/p.json)"
fi
summary omp_alloc
