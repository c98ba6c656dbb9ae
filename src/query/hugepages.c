/* SPDX-License-Identifier: BSD-3-Clause */
/* hugepages.c - what a range really got: 2 MiB pages (hugetlb or transparent) or base pages,
 * per node.
 *
 * Nodes come from move_pages (npl_query_pages: any 4 KiB address inside a huge page gives the
 * huge page's node). Page sizes come from /proc/self/smaps (a hugetlb mapping says
 * "KernelPageSize: 2048 kB"; "AnonHugePages" counts a mapping's THP) and, for transparent huge
 * pages, from /proc/self/pagemap (the frame of a page) and /proc/kpageflags (KPF_THP), which need
 * CAP_SYS_ADMIN: without it the frames read as 0, THP cannot be located, and their base pages are
 * counted as base pages (the function then returns 1). */
#define _GNU_SOURCE
#include "query/query.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUGE_2M ((uintptr_t)2 << 20)

static const struct npl_smaps_vma *vma_of(const struct npl_smaps_vma *v, int n, uintptr_t a)
{
    for (int i = 0; i < n; i++)
        if (a >= v[i].start && a < v[i].end)
            return &v[i];
    return NULL;
}

/* Is the 2 MiB unit starting at page i0 one transparent huge page? Its first frame is a THP
 * (kpageflags) and the frames of all its base pages are contiguous and on one node. */
static int is_thp(int kfd, const uint64_t *pm, const int *node, size_t i0, size_t per_huge)
{
    uint64_t pfn = pm[i0] & NPL__PM_PFN_MASK;
    if (kfd < 0 || !(pm[i0] & NPL__PM_PRESENT) || !npl__kpage_is_thp(kfd, pfn))
        return 0;
    for (size_t k = 1; k < per_huge; k++) /* any break means it was split */
        if (!(pm[i0 + k] & NPL__PM_PRESENT) || (pm[i0 + k] & NPL__PM_PFN_MASK) != pfn + k ||
            node[i0 + k] != node[i0])
            return 0;
    return 1;
}

struct huge_scan {
    uintptr_t lo, hi;
    size_t psz, npages;
    int *node;       /* node of each base page (or -errno) */
    uint64_t *pm;    /* pagemap entries */
    char *done;      /* base pages counted inside a huge page */
    struct npl_smaps_vma *v;
    int nv, have_pfn, max_node;
};

/* 2 MiB units wholly inside the range: hugetlb pages and located THP count as huge. */
static void count_huge(struct huge_scan *h, size_t *huge)
{
    size_t per_huge = HUGE_2M / h->psz;
    int kfd = h->have_pfn ? npl__kpageflags_open() : -1;
    for (uintptr_t u = (h->lo + HUGE_2M - 1) & ~(HUGE_2M - 1); u + HUGE_2M <= h->hi; u += HUGE_2M) {
        size_t i0 = (u - h->lo) / h->psz;
        const struct npl_smaps_vma *m = vma_of(h->v, h->nv, u);
        if (!m || h->node[i0] < 0 || h->node[i0] > h->max_node)
            continue;
        if (!m->hugetlb && !(m->thp_kb > 0 && is_thp(kfd, h->pm, h->node, i0, per_huge)))
            continue;
        huge[h->node[i0]]++;
        memset(h->done + i0, 1, per_huge);
    }
    if (kfd >= 0)
        close(kfd);
}

static void count_base(const struct huge_scan *h, size_t *base, size_t *absent)
{
    for (size_t i = 0; i < h->npages; i++) {
        if (h->done[i])
            continue;
        if (h->node[i] < 0) {
            if (absent)
                ++*absent;
        } else if (h->node[i] <= h->max_node) {
            base[h->node[i]]++;
        }
    }
}

int npl_histogram_huge(const void *addr, size_t len, size_t *huge, size_t *base, size_t *absent)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    if (!addr || len == 0 || !huge || !base)
        return npl__fail(EINVAL, "empty range or NULL counts");
    struct huge_scan h = {.psz = (size_t)sysconf(_SC_PAGESIZE), .max_node = npl_topo_max_node_id(t)};
    h.lo = (uintptr_t)addr & ~(uintptr_t)(h.psz - 1);
    if ((uintptr_t)addr + len < (uintptr_t)addr || len / h.psz >= INT32_MAX)
        return npl__fail(EOVERFLOW, "range wraps around the address space or is too large");
    h.hi = ((uintptr_t)addr + len + h.psz - 1) & ~(uintptr_t)(h.psz - 1);
    h.npages = (h.hi - h.lo) / h.psz;
    memset(huge, 0, (size_t)(h.max_node + 1) * sizeof *huge);
    memset(base, 0, (size_t)(h.max_node + 1) * sizeof *base);
    if (absent)
        *absent = 0;
    h.node = malloc(h.npages * sizeof *h.node);
    h.pm = malloc(h.npages * sizeof *h.pm);
    h.done = calloc(h.npages, 1);
    int rc = -1;
    if (!h.node || !h.pm || !h.done)
        npl__fail(ENOMEM, "out of memory");
    else if (npl_query_pages((void *)h.lo, h.hi - h.lo, h.node, h.npages) >= 0 &&
             npl__smaps_read(h.lo, h.hi, &h.v, &h.nv) == 0) {
        h.have_pfn = npl__pagemap_read(h.lo, h.npages, h.pm);
        count_huge(&h, huge);
        count_base(&h, base, absent);
        rc = 0;
    }
    free(h.node);
    free(h.pm);
    free(h.done);
    free(h.v);
    return rc;
}
