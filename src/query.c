/* query.c - where pages really are (move_pages with a NULL node list, batched), histograms,
 * and process-wide statistics. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUERY_BATCH 65536

int npl_query_pages(const void *addr, size_t len, int *nodes, size_t max_pages)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!addr || len == 0 || !nodes)
        return npl__fail(EINVAL, "empty range or NULL output");
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(psz - 1);
    if ((uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    size_t npages = ((uintptr_t)addr + len - start + psz - 1) / psz;
    if (npages > max_pages)
        return npl__fail(EINVAL, "range has %zu pages, output holds %zu", npages, max_pages);
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    size_t batch = npages < QUERY_BATCH ? npages : QUERY_BATCH;
    void **pages = malloc(batch * sizeof *pages);
    if (!pages)
        return npl__fail(ENOMEM, "out of memory");
    for (size_t off = 0; off < npages; off += batch) {
        size_t n = npages - off < batch ? npages - off : batch;
        for (size_t i = 0; i < n; i++)
            pages[i] = (void *)(start + (off + i) * psz);
        if (npl__move_pages(NULL, n, pages, NULL, nodes + off, 0) < 0) {
            int e = errno;
            free(pages);
            return npl__fail(e, "move_pages(query) failed");
        }
    }
    free(pages);
    return (int)(npages > INT32_MAX ? INT32_MAX : npages);
}

int npl_histogram(const void *addr, size_t len, size_t *counts, size_t *absent)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    if (!counts)
        return npl__fail(EINVAL, "NULL counts");
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (len / psz >= INT32_MAX) /* npl_query_pages counts pages in an int */
        return npl__fail(EOVERFLOW, "range of %zu bytes is too large to query", len);
    size_t npages = len / psz + 2;
    int *nodes = malloc(npages * sizeof *nodes);
    if (!nodes)
        return npl__fail(ENOMEM, "out of memory");
    int n = npl_query_pages(addr, len, nodes, npages);
    if (n < 0) {
        free(nodes);
        return -1;
    }
    memset(counts, 0, (size_t)t->nnodes * sizeof *counts);
    size_t miss = 0;
    for (int i = 0; i < n; i++) {
        int idx = nodes[i] >= 0 ? npl_topo_node_index(t, nodes[i]) : -1;
        if (idx >= 0)
            counts[idx]++;
        else
            miss++;
    }
    if (absent)
        *absent = miss;
    free(nodes);
    return 0;
}

/* ---- process-wide statistics ---- */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npl_stats stats;

void npl__stats_add(const struct npl_place_stats *st)
{
    pthread_mutex_lock(&stats_lock);
    stats.placements++;
    stats.pages_placed += st->placed;
    stats.pages_moved += st->moved;
    stats.pages_misplaced += st->misplaced;
    stats.seconds += st->seconds;
    pthread_mutex_unlock(&stats_lock);
}

void npl__stats_arrays(long arrays, long bytes)
{
    pthread_mutex_lock(&stats_lock);
    stats.arrays_live += (uint64_t)arrays;
    stats.bytes_live += (uint64_t)bytes;
    pthread_mutex_unlock(&stats_lock);
}

int npl_get_stats(struct npl_stats *out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    pthread_mutex_lock(&stats_lock);
    *out = stats;
    pthread_mutex_unlock(&stats_lock);
    out->syscalls = atomic_load(&npl__total_syscalls);
    out->mbind = atomic_load(&npl__numa_syscalls[NPL__SYS_MBIND]);
    out->set_mempolicy = atomic_load(&npl__numa_syscalls[NPL__SYS_SET_MEMPOLICY]);
    out->get_mempolicy = atomic_load(&npl__numa_syscalls[NPL__SYS_GET_MEMPOLICY]);
    out->move_pages = atomic_load(&npl__numa_syscalls[NPL__SYS_MOVE_PAGES]);
    out->migrate_pages = atomic_load(&npl__numa_syscalls[NPL__SYS_MIGRATE_PAGES]);
    return 0;
}
