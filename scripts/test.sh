#!/bin/sh
# The whole test suite: unit tests (pure logic, synthetic topologies), host tests (syscall layer
# here), CLI tests, page-exact guest tests on 2, 3, 4 and 8 NUMA nodes (tools/numavm), then the
# reliability checks (ASan+UBSan, TSan, valgrind, libFuzzer: scripts/reliability.sh). The ABI
# (scripts/abi_check.sh) and API documentation (scripts/docs_check.sh) stages fail on a break or
# a doxygen warning.
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
echo "== unit, host and CLI tests (ctest)"
(cd build && ctest --output-on-failure -j2)
rc=0
echo "== ABI: libnumaplace.so against abi/libnumaplace.abi (scripts/abi_check.sh), and its self-test"
sh scripts/abi_check.sh || rc=1
sh scripts/abi_check.sh --selftest || rc=1
echo "== API docs: doxygen on the public headers, warnings are errors (scripts/docs_check.sh)"
sh scripts/docs_check.sh || rc=1
echo "== guest tests (multi-node QEMU guests)"
bash tests/guest/run.sh || rc=1
echo "== benchmark suite, quick mode: host part and a 4-node guest part, checks JSON, checksums and exact locality counts, never speeds (bench/run --quick)"
python3 bench/run --quick --no-plots --runs 3 --out build/bench-results || rc=1
echo "== reliability: sanitizers, valgrind, fuzzing (scripts/reliability.sh)"
bash scripts/reliability.sh || rc=1
[ $rc -eq 0 ] && echo "all test stages passed" || echo "some test stage FAILED"
exit $rc
