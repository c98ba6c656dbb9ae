/* SPDX-License-Identifier: BSD-3-Clause */
/* place_lazy.c - lazy placement: the kernel's policy is set on a fresh, untouched range and no
 * page is touched, so each page lands on its node when the program first touches it and a
 * sparse allocation stays sparse (the engine populates every page of a block at once).
 *  - cyclic over M nodes whose order is a rotation of increasing ids: one mbind(MPOL_INTERLEAVE).
 *    The kernel gives the page of index x (its address / page size, for anonymous memory) the
 *    (x mod M)-th node of the mask, so the range must start at an index with the right residue:
 *    arrays/ picks such an address (npl__lazy_base_ok);
 *  - a map that is constant over long runs (bind_all, one node, bind_block, the block policies
 *    with large blocks): one mbind(MPOL_PREFERRED, node) per run. Each run after the first
 *    splits the mapping: at most NPL__LAZY_RUNS_MAX runs a range, and the mappings added by all
 *    live ranges stay under a quarter of vm.max_map_count (npl__lazy_maps_reserve);
 *  - any other map (skew_mapp, prime_mapp, random, small blocks, weights) needs its pages
 *    populated by the engine.
 * A full node spills softly under PREFERRED and INTERLEAVE, as under the engine's touch, and a
 * mapping with a policy of its own is not scanned by automatic NUMA balancing, as after the
 * engine's protecting mbind. */
#define _GNU_SOURCE
#include "place/place.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>
#include <unistd.h>

/* position of node in the sorted list of the plan's nodes */
static size_t rank_of(const npl_plan *pl, int node)
{
    size_t r = 0;
    for (int k = 0; k < pl->m; k++)
        r += pl->nodes[k] < node;
    return r;
}

/* The plan's node order is the mask's increasing order rotated by *rot: nodes[i] is the
 * ((i + rot) mod M)-th smallest. 0, or -1 when it is another order. */
static int rotation(const npl_plan *pl, size_t *rot)
{
    size_t M = (size_t)pl->m;
    *rot = rank_of(pl, pl->nodes[0]);
    for (size_t i = 1; i < M; i++)
        if (rank_of(pl, pl->nodes[i]) != (i + *rot) % M)
            return -1;
    return 0;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The end of the run of pages on page first's node: the first page after it on another node, or
 * npages. Not a page-by-page walk where the map allows better, since a block is reserved before
 * it is used (a sparse table of a terabyte): a constant map is one run, and a block policy's node
 * changes only where its block does (found by bisection: blocks never decrease). */
static size_t run_end(const struct npl_map *m, size_t first, size_t npages)
{
    const npl_plan *pl = m->plan;
    enum npl__kernel_form form = npl__policy_row(pl->kind)->kernel;
    if (form == NPL__KERNEL_DEFAULT || form == NPL__KERNEL_BIND || pl->m == 1)
        return npages; /* one run: the same node (or none) for every page */
    int node = npl__map_node(m, first);
    if (!npl__is_block_kind(pl->kind)) {
        size_t p = first + 1;
        while (p < npages && npl__map_node(m, p) == node)
            p++;
        return p;
    }
    size_t p = first;
    while (p < npages) {
        size_t b = npl__map_block(m, p), lo = p, hi = npages; /* last page of block b: in [lo, hi) */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (npl__map_block(m, mid) == b)
                lo = mid;
            else
                hi = mid;
        }
        p = lo + 1; /* the next block's first page */
        if (p < npages && npl__map_node(m, p) != node)
            break;
    }
    return p;
}

void npl__lazy_of_map(const struct npl_map *m, size_t align, unsigned flags, struct npl_lazy *lz)
{
    const npl_plan *pl = m->plan;
    memset(lz, 0, sizeof *lz);
    if (flags & (NPL_F_THP | NPL_F_HUGETLB | NPL_F_STRICT))
        return; /* 2 MiB units, a pool to fill, or a verdict to give: the engine */
    enum npl__kernel_form form = npl__policy_row(pl->kind)->kernel;
    if (form == NPL__KERNEL_DEFAULT) {
        lz->kind = NPL__LAZY_RUNS; /* nothing to set */
        return;
    }
    size_t M = (size_t)pl->m, psz = m->page_size;
    if (form == NPL__KERNEL_INTERLEAVE && M > 1) {
        size_t rot, A = align > psz ? align / psz : 1;
        int bits = npl__interleave_index_bits();
        if (rotation(pl, &rot) < 0 || (!bits && (M & (M - 1))) || rot % gcd(A, M))
            return;
        lz->kind = NPL__LAZY_INTERLEAVE;
        lz->rot = rot;
        lz->runs = 1;
        return;
    }
    size_t runs = 0;
    for (size_t i = 0; i < m->npages; i = run_end(m, i, m->npages))
        if (++runs > NPL__LAZY_RUNS_MAX)
            return;
    lz->kind = NPL__LAZY_RUNS;
    lz->runs = runs;
}

int npl__lazy_kind(const npl_plan *plan, const npl_shape *shape, size_t len, size_t align,
                   unsigned flags, struct npl_lazy *lz)
{
    struct npl_map m;
    memset(lz, 0, sizeof *lz);
    if (npl__map_init(&m, plan, shape, len, (size_t)sysconf(_SC_PAGESIZE)) < 0)
        return -1;
    npl__lazy_of_map(&m, align, flags, lz);
    return 0;
}

int npl__lazy_base_ok(const npl_plan *pl, const struct npl_lazy *lz, uintptr_t base, size_t len)
{
    if (lz->kind != NPL__LAZY_INTERLEAVE)
        return 1;
    size_t psz = (size_t)sysconf(_SC_PAGESIZE), M = (size_t)pl->m;
    uint64_t x = base / psz, npages = len / psz + (len % psz != 0);
    if ((M & (M - 1)) == 0 || npl__interleave_index_bits() == 64)
        return x % M == lz->rot;
    uint64_t low = (uint32_t)x; /* before 6.7: the index cut to 32 bits, which must not wrap */
    return low + npages <= ((uint64_t)1 << 32) && low % M == lz->rot;
}

int npl__lazy_apply(char *addr, size_t npages, size_t psz, const struct npl_map *m,
                    const struct npl_lazy *lz, struct npl_counter *cnt)
{
    const npl_plan *pl = m->plan;
    if (lz->kind == NPL__LAZY_INTERLEAVE) {
        if (npl__mbind(cnt, addr, npages * psz, MPOL_INTERLEAVE, pl->nodes, pl->m, 0) < 0)
            return npl__fail(errno, "mbind(MPOL_INTERLEAVE) on %p+%zu failed: %s", (void *)addr,
                             npages * psz, strerror(errno));
        return 0;
    }
    if (lz->kind != NPL__LAZY_RUNS)
        return npl__fail(EOPNOTSUPP, "this map needs its pages populated");
    if (pl->kind == NPL_FIRST_TOUCH)
        return 0;
    for (size_t first = 0; first < npages;) {
        int node = npl__map_node(m, first);
        size_t end = run_end(m, first, npages);
        if (npl__mbind(cnt, addr + first * psz, (end - first) * psz, MPOL_PREFERRED, &node, 1,
                       0) < 0)
            return npl__fail(errno, "mbind(MPOL_PREFERRED, %d) on %p+%zu failed: %s", node,
                             (void *)(addr + first * psz), (end - first) * psz, strerror(errno));
        first = end;
    }
    return 0;
}

static long lazy_maps; /* mappings added by the runs of live lazy ranges */

int npl__lazy_maps_reserve(size_t n)
{
    long bound = npl__max_map_count() / 4;
    long cur = __atomic_load_n(&lazy_maps, __ATOMIC_RELAXED);
    do {
        if ((long)n > bound - cur)
            return 0;
    } while (!__atomic_compare_exchange_n(&lazy_maps, &cur, cur + (long)n, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return 1;
}

void npl__lazy_maps_release(size_t n) { __atomic_sub_fetch(&lazy_maps, (long)n, __ATOMIC_RELAXED); }
