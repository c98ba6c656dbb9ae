#!/bin/sh
# The main job: build, show this machine's topology, place arrays under every policy here,
# then the same demo inside a 4-node QEMU guest, where the policies really spread pages.
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
echo "== numaplace topo (this machine)"
build/numaplace topo
echo "== numaplace demo (this machine)"
build/numaplace demo --mib 64
echo "== numaplace demo in a 4-node guest (tools/numavm)"
tools/numavm --nodes 4 --cpus-per-node 1 --mem-per-node 256 -- sh -c 'numaplace topo && numaplace demo --mib 32'
