#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/mg_model.py - MG's remote accesses under a profile's advice, on the host (no guest).

    OMP_NUM_THREADS=8 MG_BENCH_FAKE_NODES=4 MG_BENCH_USE=use.txt \\
        numaplace run --threshold 4K -- build/bench/progs/mg_plain --n 32 --iters 1 --measure 1
    python3 bench/mg_model.py use.txt PROFILE.json [PROFILE.json ...]

use.txt (mg_bench's MG_BENCH_USE) holds every page's accesses from each node, per grid, for one
iteration with thread t on node t mod N. For each profile (of mg_plain at the same --n, advised:
`numaplace advise --write`), each grid's pages get the advice's nodes and the accesses from other
nodes are counted remote. The grids are matched to the profile's arrays by call site: mg_bench
allocates every level of u at one site, of r at the next, and v at a third (site offsets in that
order), the finest level first (ordinal 0). Explicit maps and bind_all:N are modelled; a first
touch array is counted on node 0 (the serial initialisation); any other policy is named and
left out of the total (the line says so). The best static placement (each page on the node that
uses it most) is printed first.
"""
import json
import sys


def read_use(path):
    grids = {}
    for line in open(path):
        f = line.split()
        name, pages, nodes = f[0], int(f[2]), int(f[3])
        v = [int(x) for x in f[4:]]
        grids[name] = [v[i * nodes:(i + 1) * nodes] for i in range(pages)]
    return grids


def remote(rows, nodes):
    return sum(sum(r) - r[n] for r, n in zip(rows, nodes))


def best(rows):
    return [max(range(len(r)), key=lambda j: r[j]) for r in rows]


def grid_of(profile, grids):
    """{grid name: array} by call site (u, r, v in site order) and ordinal (finest first)."""
    arrays = [a for a in profile["arrays"] if a["site"]["kind"] == "heap"
              and "mg" in a["site"]["object"].rsplit("/", 1)[-1]]
    offsets = sorted({a["site"]["offset"] for a in arrays})
    levels = sorted({int(g[1:]) for g in grids}, reverse=True)
    out = {}
    for letter, off in zip("urv", offsets):
        for a in arrays:
            k = a["site"]["ordinal"]
            if a["site"]["offset"] == off and k < len(levels):
                name = "%s%d" % (letter, levels[k])
                if name in grids:
                    out[name] = a
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    grids = read_use(sys.argv[1])
    total = sum(sum(map(sum, rows)) for rows in grids.values())
    b = {g: remote(rows, best(rows)) for g, rows in grids.items()}
    print("best static: %.2f%% remote (%d of %d accesses)" % (100.0 * sum(b.values()) / total,
                                                             sum(b.values()), total))
    for path in sys.argv[2:]:
        by = grid_of(json.load(open(path)), grids)
        counted, left_out, per = 0, [], []
        for g, rows in grids.items():
            a = by.get(g)
            adv = a.get("advice") if a else None
            pol = adv["policy"] if adv else "first_touch"
            if adv and adv.get("chunk_nodes"):
                nodes = adv["chunk_nodes"][:len(rows)]
            elif pol.startswith("bind_all:"):
                nodes = [int(pol.split(":")[1])] * len(rows)
            elif pol == "first_touch":
                nodes = [0] * len(rows)
            else:
                left_out.append("%s (%s)" % (g, pol))
                continue
            r = remote(rows, nodes)
            counted += r
            per.append("%s %+d" % (g, r - b[g]))
        print("%s: %.2f%% remote (%d); above the best, per grid: %s%s" % (
            path, 100.0 * counted / total, counted, ", ".join(per),
            "; not modelled: " + ", ".join(left_out) if left_out else ""))


if __name__ == "__main__":
    main()
