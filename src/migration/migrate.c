/* SPDX-License-Identifier: BSD-3-Clause */
/* migrate.c - explicit migration of ranges (the array forms live in arrays/). The moving itself
 * is the placement engine's verify-and-move pass (place/place.c). */
#define _GNU_SOURCE
#include "migration/migration.h"

#include <errno.h>
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

int npl_migrate_range(void *addr, size_t len, int node, struct npl_migrate_result *result)
{
    npl_plan *p;
    if (npl__plan_bind(&p, npl_topo_self(), &node, 1) < 0) {
        if (result)
            memset(result, 0, sizeof *result);
        return -1;
    }
    int rc = npl_migrate_range_planned(addr, len, p, NULL, result);
    npl_plan_free(p);
    return rc;
}
