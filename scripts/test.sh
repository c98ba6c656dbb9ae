#!/bin/sh
# The whole test suite: unit tests (pure logic, synthetic topologies), host tests (syscall layer
# here), CLI tests, page-exact guest tests on 2, 3, 4 and 8 NUMA nodes (tools/numavm), then the
# reliability checks (ASan+UBSan, TSan, valgrind, libFuzzer: scripts/reliability.sh).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
echo "== unit, host and CLI tests (ctest)"
(cd build && ctest --output-on-failure -j2)
echo "== guest tests (multi-node QEMU guests)"
rc=0
bash tests/guest/run.sh || rc=1
echo "== reliability: sanitizers, valgrind, fuzzing (scripts/reliability.sh)"
bash scripts/reliability.sh || rc=1
[ $rc -eq 0 ] && echo "all test stages passed" || echo "some test stage FAILED"
exit $rc
