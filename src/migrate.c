/* migrate.c - explicit migration of ranges (the array forms live in array.c) and statistics.
 * The moving itself is the placement engine's verify-and-move pass (src/place.c). */
#define _GNU_SOURCE
#include "internal.h"
#include "numaplace/migrate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Partial work is an error: -1 with the errno of the first page that could not move (ENOMEM
 * node full, EBUSY page busy or pinned, ...), the result filled either way. */
int npl__migrate_verdict(const struct npl_migrate_result *r)
{
    if (!r->failed)
        return 0;
    int e = r->first_errno ? r->first_errno : EBUSY;
    return npl__fail(e, "%zu of %zu pages could not move (first at %p: %s)", r->failed, r->pages,
                     r->first_fail_addr, strerror(e));
}

int npl_migrate_range_planned(void *addr, size_t len, const npl_plan *plan,
                              const npl_shape *shape, struct npl_migrate_result *result)
{
    struct npl_migrate_result local;
    if (!result) {
        memset(&local, 0, sizeof local);
        result = &local;
    }
    if (!plan) {
        memset(result, 0, sizeof *result);
        return npl__fail(EINVAL, "NULL plan");
    }
    if (npl__migrate(addr, len, plan, shape, result) < 0)
        return -1;
    return npl__migrate_verdict(result);
}

int npl_migrate_range_policy(void *addr, size_t len, const npl_policy *pol, const npl_shape *shape,
                             struct npl_migrate_result *result)
{
    npl_plan *plan;
    if (!pol) {
        if (result)
            memset(result, 0, sizeof *result);
        return npl__fail(EINVAL, "NULL policy");
    }
    if (npl__plan_default(&plan, pol) < 0)
        return -1;
    int rc = npl_migrate_range_planned(addr, len, plan, shape, result);
    npl_plan_free(plan);
    return rc;
}

/* bind_all:<node> on this process's topology (validated there) */
int npl__node_plan(int node, npl_plan **out)
{
    npl_policy *p;
    if (node < 0)
        return npl__fail(EINVAL, "invalid node %d", node);
    if (npl_policy_create(&p, NPL_BIND_ALL, &node, 1) < 0)
        return -1;
    int rc = npl__plan_default(out, p);
    npl_policy_free(p);
    return rc;
}

int npl_migrate_range(void *addr, size_t len, int node, struct npl_migrate_result *result)
{
    npl_plan *p;
    if (npl__node_plan(node, &p) < 0) {
        if (result)
            memset(result, 0, sizeof *result);
        return -1;
    }
    int rc = npl_migrate_range_planned(addr, len, p, NULL, result);
    npl_plan_free(p);
    return rc;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct npl_migrate_stats stats;

/* fork: taken after the registry and statistics locks (src/array.c's handlers) */
void npl__migrate_fork_lock(int take)
{
    if (take)
        pthread_mutex_lock(&lock);
    else
        pthread_mutex_unlock(&lock);
}

void npl__migrate_stats_add(const struct npl_migrate_result *r, size_t page_size)
{
    pthread_mutex_lock(&lock);
    stats.calls++;
    stats.pages_moved += r->moved;
    stats.bytes_moved += (uint64_t)r->moved * page_size;
    stats.pages_failed += r->failed;
    stats.seconds += r->seconds;
    pthread_mutex_unlock(&lock);
}

int npl_get_migrate_stats(struct npl_migrate_stats *out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    pthread_mutex_lock(&lock);
    *out = stats;
    pthread_mutex_unlock(&lock);
    return 0;
}
