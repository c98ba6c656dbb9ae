/* SPDX-License-Identifier: BSD-3-Clause */
/* query.c - where pages really are (move_pages with a NULL node list, batched) and
 * histograms. */
#define _GNU_SOURCE
#include "query/query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUERY_BATCH 65536

/* A query walks only the mapped pieces of a range (/proc/self/maps through procfs.c): the cost
 * is proportional to the mapped pages, not to the size of the address range; holes are filled
 * in (-EFAULT) or counted, never queried one page at a time. */
struct qwalk {
    uintptr_t start;      /* page-aligned */
    size_t psz, npages;
    int *out;             /* npl_query_pages: one status per page; NULL for a histogram */
    const npl_topo *t;    /* histogram: the topology */
    int max_node;         /* histogram: counts has max_node + 1 entries, by node OS id */
    size_t *counts, miss; /* histogram */
    void **pages;
    int *status;          /* histogram: one batch */
    size_t batch;
    size_t done;          /* pages accounted for */
    int failed;           /* move_pages failed (errno kept) */
};

static void q_hole(struct qwalk *q, size_t upto)
{
    if (upto <= q->done)
        return;
    if (q->out)
        for (size_t i = q->done; i < upto; i++)
            q->out[i] = -EFAULT;
    else
        q->miss += upto - q->done;
    q->done = upto;
}

static int q_piece(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *arg)
{
    (void)m;
    struct qwalk *q = arg;
    size_t i0 = (s - q->start) / q->psz, i1 = (e - q->start - 1) / q->psz + 1;
    if (i1 > q->npages)
        i1 = q->npages;
    if (i0 < q->done)
        i0 = q->done;
    q_hole(q, i0);
    for (size_t off = i0; off < i1; off += q->batch) {
        size_t n = i1 - off < q->batch ? i1 - off : q->batch;
        for (size_t i = 0; i < n; i++)
            q->pages[i] = (void *)(q->start + (off + i) * q->psz);
        int *st = q->out ? q->out + off : q->status;
        if (npl__move_pages(NULL, n, q->pages, NULL, st, 0) < 0) {
            q->failed = 1;
            return -1;
        }
        if (!q->out)
            for (size_t i = 0; i < n; i++) {
                if (st[i] >= 0 && st[i] <= q->max_node) /* counts by node OS id */
                    q->counts[st[i]]++;
                else
                    q->miss++;
            }
        q->done = off + n;
    }
    return 0;
}

/* the page-aligned bounds of [addr, addr+len): 0 or -1 (error set) */
static int q_bounds(const void *addr, size_t len, size_t psz, uintptr_t *start, size_t *npages)
{
    if (!addr || len == 0)
        return npl__fail(EINVAL, "empty range");
    uintptr_t a = (uintptr_t)addr, end = a + len;
    if (end < a || end > UINTPTR_MAX - (psz - 1))
        return npl__fail(EOVERFLOW, "range wraps around the address space");
#if UINTPTR_MAX > 0xffffffffu
    /* no user address space reaches 2^56 (x86-64 with 5-level paging; arm64: 2^52) */
    if (end > ((uintptr_t)1 << 56))
        return npl__fail(EFAULT, "%p+%zu goes beyond the user address space", addr, len);
#endif
    *start = a & ~(uintptr_t)(psz - 1);
    *npages = (end - *start + psz - 1) / psz;
    return 0;
}

static int q_run(struct qwalk *q)
{
    q->batch = q->npages < QUERY_BATCH ? q->npages : QUERY_BATCH;
    q->pages = malloc(q->batch * sizeof *q->pages);
    q->status = q->out ? NULL : malloc(q->batch * sizeof *q->status);
    if (!q->pages || (!q->out && !q->status)) {
        free(q->pages);
        free(q->status);
        return npl__fail(ENOMEM, "out of memory");
    }
    uintptr_t hi = q->start + q->npages * q->psz;
    int rc = npl__maps_ranges(q->start, hi, q_piece, q);
    if (rc < 0 && !q->failed && q->done == 0)
        rc = q_piece(q->start, hi, NULL, q); /* maps unreadable (no /proc): the whole range */
    int e = errno;
    free(q->pages);
    free(q->status);
    if (rc != 0)
        return npl__fail(e, "move_pages(query) failed");
    q_hole(q, q->npages);
    return 0;
}

int npl_query_pages(const void *addr, size_t len, int *nodes, size_t max_pages)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!nodes)
        return npl__fail(EINVAL, "empty range or NULL output");
    struct qwalk q = {.psz = psz, .out = nodes};
    if (q_bounds(addr, len, psz, &q.start, &q.npages) < 0)
        return -1;
    if (q.npages > max_pages)
        return npl__fail(EINVAL, "range has %zu pages, output holds %zu", q.npages, max_pages);
    if (q.npages > INT32_MAX) /* the count is returned in an int */
        return npl__fail(EOVERFLOW, "range has %zu pages: more than an int can count (use "
                                    "several calls)", q.npages);
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    if (q_run(&q) < 0)
        return -1;
    return (int)q.npages;
}

int npl_histogram(const void *addr, size_t len, size_t *counts, size_t *absent)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    if (!counts)
        return npl__fail(EINVAL, "NULL counts");
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    struct qwalk q = {.psz = psz, .t = t};
    if (q_bounds(addr, len, psz, &q.start, &q.npages) < 0)
        return -1;
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    q.max_node = npl_topo_max_node_id(t);
    size_t *c = calloc((size_t)q.max_node + 1, sizeof *c);
    if (!c)
        return npl__fail(ENOMEM, "out of memory");
    q.counts = c;
    if (q_run(&q) < 0) {
        free(c);
        return -1;
    }
    memcpy(counts, c, ((size_t)q.max_node + 1) * sizeof *counts);
    if (absent)
        *absent = q.miss;
    free(c);
    return 0;
}
