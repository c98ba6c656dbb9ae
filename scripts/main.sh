#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job: build, show this machine's topology, run the characterization report here
# (verdict, MLC-class factor matrix, the characterization run, report/index.html with plots,
# report/results.json), then a quick report in a 4-node QEMU guest, where the policies really
# spread pages: its report comes back to report/guest/, labelled "4-node guest, emulated timings"
# (its exact results are page locations; its times are emulated).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh --product # the libraries, the command and the interposer: what this job runs
echo "== numaplace topo (this machine)"
build/numaplace topo
echo "== numaplace report (this machine) -> report/"
build/numaplace report --out report
echo "== 4-node guest, emulated timings (tools/numavm): topo, demo, report --quick -> report/guest/"
rm -rf report/guest
tools/numavm --nodes 4 --cpus-per-node 1 --mem-per-node 256 --out report/guest -- \
    sh -c 'numaplace topo && numaplace demo --mib 32 && NUMAPLACE_PROGRESS=0 numaplace report --quick --reps 3 --no-plots --out /out'
if python3 tools/report_plot.py report/guest --title "4-node guest, emulated timings" >/dev/null; then
    echo "== guest report: report/guest/index.html (4-node guest, emulated timings)"
else
    echo "== guest report: report/guest/results.json (no plots: python3-matplotlib missing)"
fi
echo "== done: open report/index.html and report/guest/index.html"
