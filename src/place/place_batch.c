/* SPDX-License-Identifier: BSD-3-Clause */
/* place_batch.c - npl_place_pages: many page runs placed in one pass.
 *
 * One npl_place_range() per run (what column-wise layouts need: a few pages per row) costs a
 * read of /proc/self/maps, worker threads and a dozen system calls per run, and each run's own
 * mbind splits the mapping: one VMA per run, until vm.max_map_count (65530) makes mbind fail.
 * Here the range is checked once and goes through the placement engine (place.c) once, with an
 * explicit page -> node list: its workers touch and move the listed pages. A list that names a node
 * for every page gets one protecting policy over the nodes it uses; a list that leaves some pages
 * alone changes no policy and cuts no mapping per stretch (no mbind; one MADV_NOHUGEPAGE over the
 * whole list, so that khugepaged does not collapse the moved pages onto one node again). */
#define _GNU_SOURCE
#include "place/place.h"

#include <errno.h>
#include <unistd.h>

#define MAX_DISTINCT 1024 /* distinct nodes in one list: more is not a machine */

/* the distinct non-negative entries of nodes[0..n), in first-seen order */
static int distinct_nodes(const int *nodes, size_t n, int *out)
{
    int m = 0, last = -1;
    for (size_t i = 0; i < n; i++) {
        int v = nodes[i];
        if (v < 0 || v == last)
            continue;
        if (v > NPL__MAX_ID)
            return npl__fail(EINVAL, "page %zu: node %d is not a node id", i, v);
        last = v;
        if (npl__in_list(v, out, m))
            continue;
        if (m == MAX_DISTINCT)
            return npl__fail(EINVAL, "more than %d distinct nodes in one page list", MAX_DISTINCT);
        out[m++] = v;
    }
    return m;
}

/* bind_all over the nodes used, on this process's topology (validates them: EXDEV) */
static int union_plan(const int *nodes, int m, npl_plan **out)
{
    return npl__plan_bind(out, npl_topo_self(), nodes, m);
}

/* one engine pass over [first page with a node, last page with a node]; when some pages are
 * left alone, no mapping changes (a policy per stretch would cut the mapping in two per stretch:
 * vm.max_map_count): listed pages that fault in follow the range's policy, then move */
static int place_hull(char *addr, size_t npages, size_t psz, const int *nodes,
                      const npl_plan *plan, unsigned flags)
{
    size_t first = 0, end = npages;
    while (nodes[first] < 0)
        first++;
    while (nodes[end - 1] < 0)
        end--;
    if (first > 0 || end < npages) /* pages left alone: keep the mappings */
        flags |= NPL__F_KEEP_VMAS;
    for (size_t pg = first; pg < end && !(flags & NPL__F_KEEP_VMAS); pg++)
        if (nodes[pg] < 0)
            flags |= NPL__F_KEEP_VMAS;
    return npl__place_explicit(addr + first * psz, (end - first) * psz, plan, nodes + first,
                               flags | NPL__F_SPLIT_THP, NULL);
}

int npl_place_pages(void *addr, size_t len, const int *nodes, unsigned flags)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!nodes)
        return npl__fail(EINVAL, "NULL page list");
    if (flags & ~(NPL_F_STRICT | NPL_F_NO_PROTECT))
        return npl__fail(EINVAL, "flags %#x: only NPL_F_STRICT and NPL_F_NO_PROTECT apply", flags);
    if (!addr || len == 0 || (uintptr_t)addr % psz)
        return npl__fail(EINVAL, "range %p+%zu: empty or not page-aligned", addr, len);
    if ((uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    /* the caller's range: placing touches its pages (see npl_place_range_planned); checked
     * before the list is read, so a length far beyond the mapping fails without reading it */
    if (npl__range_check(addr, len, 1) < 0)
        return -1;
    size_t npages = len / psz + (len % psz != 0);
    int used[MAX_DISTINCT];
    int m = distinct_nodes(nodes, npages, used);
    if (m <= 0)
        return m; /* -1, or nothing to place */
    npl_plan *plan;
    if (union_plan(used, m, &plan) < 0)
        return -1;
    int rc = place_hull(addr, npages, psz, nodes, plan, flags);
    npl_plan_free(plan);
    return rc;
}
