/* SPDX-License-Identifier: BSD-3-Clause */
/* counters.c - every number the library counts, in one place: system calls by kind (atomics, so
 * a signal handler may count), placements, live arrays and migrations (one lock). Read by
 * npl_get_stats and npl_get_migrate_stats. */
#define _GNU_SOURCE
#include "sys/sys.h"
#include "numaplace/migrate.h"

#include <errno.h>
#include <pthread.h>

static _Atomic uint64_t total_syscalls;
static _Atomic uint64_t numa_syscalls[NPL__SYS_KINDS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct npl_stats stats;                 /* the placement and array parts */
static struct npl_migrate_stats migrate_stats;

void npl__count_syscall(int kind)
{
    atomic_fetch_add_explicit(&total_syscalls, 1, memory_order_relaxed);
    if (kind >= 0 && kind < NPL__SYS_KINDS)
        atomic_fetch_add_explicit(&numa_syscalls[kind], 1, memory_order_relaxed);
}

/* fork: taken after the registry lock (arrays/array.c's handlers), in the order the code nests
 * them */
void npl__counters_fork_lock(int take)
{
    if (take)
        pthread_mutex_lock(&lock);
    else
        pthread_mutex_unlock(&lock);
}

void npl__stats_add(const struct npl_place_stats *st)
{
    pthread_mutex_lock(&lock);
    stats.placements++;
    stats.pages_placed += st->placed;
    stats.pages_moved += st->moved;
    stats.pages_misplaced += st->misplaced;
    stats.seconds += st->seconds;
    pthread_mutex_unlock(&lock);
}

void npl__stats_arrays(long arrays, long bytes)
{
    pthread_mutex_lock(&lock);
    stats.arrays_live += (uint64_t)arrays;
    stats.bytes_live += (uint64_t)bytes;
    pthread_mutex_unlock(&lock);
}

void npl__migrate_stats_add(const struct npl_migrate_result *r, size_t page_size)
{
    pthread_mutex_lock(&lock);
    migrate_stats.calls++;
    migrate_stats.pages_moved += r->moved;
    migrate_stats.bytes_moved += (uint64_t)r->moved * page_size;
    migrate_stats.pages_failed += r->failed;
    migrate_stats.seconds += r->seconds;
    pthread_mutex_unlock(&lock);
}

int npl_get_stats(struct npl_stats *out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    pthread_mutex_lock(&lock);
    *out = stats;
    pthread_mutex_unlock(&lock);
    out->syscalls = atomic_load(&total_syscalls);
    out->mbind = atomic_load(&numa_syscalls[NPL__SYS_MBIND]);
    out->set_mempolicy = atomic_load(&numa_syscalls[NPL__SYS_SET_MEMPOLICY]);
    out->get_mempolicy = atomic_load(&numa_syscalls[NPL__SYS_GET_MEMPOLICY]);
    out->move_pages = atomic_load(&numa_syscalls[NPL__SYS_MOVE_PAGES]);
    out->migrate_pages = atomic_load(&numa_syscalls[NPL__SYS_MIGRATE_PAGES]);
    return 0;
}

int npl_get_migrate_stats(struct npl_migrate_stats *out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    pthread_mutex_lock(&lock);
    *out = migrate_stats;
    pthread_mutex_unlock(&lock);
    return 0;
}
