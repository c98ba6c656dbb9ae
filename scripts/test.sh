#!/bin/sh
# The whole test suite: unit tests (pure logic, synthetic topologies), host tests (syscall layer
# here), CLI tests, then page-exact guest tests on 2, 3, 4 and 8 NUMA nodes (tools/numavm).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
echo "== unit, host and CLI tests (ctest)"
(cd build && ctest --output-on-failure -j2)
echo "== guest tests (multi-node QEMU guests)"
bash tests/guest/run.sh
