#!/bin/sh
# The main job: build, show this machine's topology, run the characterization report here
# (factor matrix, STREAM-style kernels under every policy, recommendations: report/index.html with
# matplotlib plots, report/results.json), then the same in a 4-node QEMU guest, where the policies
# really spread pages (quick sizes: emulated timings only show the shape of the results).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
echo "== numaplace topo (this machine)"
build/numaplace topo
echo "== numaplace report (this machine) -> report/"
build/numaplace report --out report
echo "== in a 4-node guest (tools/numavm): topo, demo, report --quick"
tools/numavm --nodes 4 --cpus-per-node 1 --mem-per-node 256 -- \
    sh -c 'numaplace topo && numaplace demo --mib 32 && numaplace report --quick --no-plots --out /tmp/report'
echo "== done: open report/index.html"
