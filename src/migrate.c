/* migrate.c - explicit migration of ranges (the array forms live in array.c) and statistics.
 * The moving itself is the placement engine's verify-and-move pass (src/place.c). */
#define _GNU_SOURCE
#include "internal.h"
#include "numaplace/migrate.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

int npl_migrate_range_policy(void *addr, size_t len, const npl_policy *pol, const npl_shape *shape,
                             struct npl_migrate_result *result)
{
    struct npl_migrate_result local;
    if (!pol)
        return npl__fail(EINVAL, "NULL policy");
    return npl__migrate(addr, len, pol, shape, result ? result : &local);
}

/* bind_all:<node>, validated against the topology by the map */
int npl__node_policy(int node, npl_policy **out)
{
    if (node < 0)
        return npl__fail(EINVAL, "invalid node %d", node);
    return npl_policy_create(out, NPL_BIND_ALL, &node, 1);
}

int npl_migrate_range(void *addr, size_t len, int node, struct npl_migrate_result *result)
{
    npl_policy *p;
    if (npl__node_policy(node, &p) < 0)
        return -1;
    int rc = npl_migrate_range_policy(addr, len, p, NULL, result);
    npl_policy_free(p);
    return rc;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct npl_migrate_stats stats;

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
