/* SPDX-License-Identifier: BSD-3-Clause */
/* defaults.c - the ONE outer layer that reads the environment and the config file for the
 * library's defaults: the default policy of npl_alloc(bytes, NULL) (NUMAPLACE_POLICY, else the
 * config file's [policy] default, else first_touch) and the default thread count of block
 * policies (OMP_NUM_THREADS, else the allowed cores). They are read when a plan is made, and the
 * plan keeps them: nothing below this layer (plan/, place/, arrays/) reads them.
 *
 * The shorthands: every public function that takes a policy resolves it here, once, then calls
 * the function of its layer that takes the plan (topology -> plan -> place -> check). */
#define _GNU_SOURCE
#include "defaults/defaults.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int npl__default_policy(npl_policy **out)
{
    const char *e = getenv("NUMAPLACE_POLICY");
    if (e && *e) {
        if (npl_policy_parse(out, e) < 0)
            return npl__fail(errno, "NUMAPLACE_POLICY: %s", npl_last_error());
        return 0;
    }
    /* the config file's [policy] default; a config that cannot be loaded is not this call's
     * business (npl_config_self() and `numaplace run` report it): the kernel's first touch */
    int saved = errno;
    const npl_config *c = npl_config_self();
    const char *d = c ? npl_config_get(c, "policy", "default") : NULL;
    errno = saved;
    if (!c)
        npl__debug("platform config not used for the default policy");
    if (d && *d) {
        if (npl_policy_parse(out, d) < 0)
            return npl__fail(errno, "%s [policy] default: %s", npl_config_source(c),
                             npl_last_error());
        return 0;
    }
    return npl_policy_create(out, NPL_FIRST_TOUCH, NULL, 0);
}

int npl__default_threads(void)
{
    const char *e = getenv("OMP_NUM_THREADS");
    uint64_t v;
    if (e && *e) {
        char first[32];
        size_t k = strcspn(e, ",");
        if (k < sizeof first) {
            memcpy(first, e, k);
            first[k] = 0;
            if (npl__parse_count(first, 1, 1 << 20, &v) == 0)
                return (int)v;
        }
    }
    return 0; /* the plan's topology decides: its allowed cores */
}

int npl__plan_default(npl_plan **out, const npl_policy *pol)
{
    npl_policy *own = NULL;
    if (!pol) {
        if (npl__default_policy(&own) < 0)
            return -1;
        pol = own;
    }
    const npl_topo *t = npl_topo_self();
    int rc = t ? npl_plan_create(out, pol, t, npl__default_threads()) : -1;
    npl_policy_free(own);
    return rc;
}

/* a policy a function needs (NULL is EINVAL, not the default), as a plan */
static int plan_of(const npl_policy *pol, npl_plan **out)
{
    if (!pol)
        return npl__fail(EINVAL, "NULL policy");
    return npl__plan_default(out, pol);
}

/* run with the plan, free it, keep errno */
#define WITH_PLAN(plan, call)                                                                    \
    do {                                                                                         \
        int e_;                                                                                  \
        rc = (call);                                                                             \
        e_ = errno;                                                                              \
        npl_plan_free(plan);                                                                     \
        errno = e_;                                                                              \
    } while (0)

void *npl__alloc_array_at(const npl_shape *shape, const npl_policy *pol, unsigned flags,
                          const void *site)
{
    npl_plan *plan;
    size_t bytes;
    if (npl_shape_bytes(shape, &bytes) < 0 || npl__plan_default(&plan, pol) < 0)
        return NULL;
    void *p = npl_alloc_planned(shape, plan, flags);
    int e = errno;
    /* under `numaplace profile`, the array is profiled (an untouched one from its first touch) */
    if (p)
        npl__profile_notify(p, bytes, site,
                            npl_policy_get_kind(npl_plan_policy(plan)) == NPL_FIRST_TOUCH);
    npl_plan_free(plan);
    errno = e;
    return p;
}

void *npl_alloc_array(const npl_shape *shape, const npl_policy *pol, unsigned flags)
{
    return npl__alloc_array_at(shape, pol, flags, __builtin_return_address(0));
}

void *npl_alloc(size_t bytes, const npl_policy *pol)
{
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    return npl_alloc_array(&s, pol, 0);
}

int npl_apply(void *p, const npl_policy *pol, unsigned flags)
{
    npl_plan *plan;
    int rc;
    if (plan_of(pol, &plan) < 0)
        return -1;
    WITH_PLAN(plan, npl_apply_planned(p, plan, flags));
    return rc;
}

int npl_apply_part(void *p, size_t first_unit, size_t nunits, const npl_policy *pol,
                   unsigned flags)
{
    npl_plan *plan;
    int rc;
    if (NPL__CHECK_FLAGS(flags, "npl_apply_part") < 0 || plan_of(pol, &plan) < 0)
        return -1;
    WITH_PLAN(plan, npl__apply_part_planned(p, first_unit, nunits, plan, flags));
    return rc;
}

int npl_place_range(void *addr, size_t len, const npl_policy *pol, const npl_shape *shape,
                    unsigned flags)
{
    npl_plan *plan;
    int rc;
    if (npl__plan_default(&plan, pol) < 0)
        return -1;
    WITH_PLAN(plan, npl_place_range_planned(addr, len, plan, shape, flags));
    return rc;
}

int npl_migrate_range_policy(void *addr, size_t len, const npl_policy *pol, const npl_shape *shape,
                             struct npl_migrate_result *result)
{
    npl_plan *plan;
    int rc;
    if (!pol) {
        if (result)
            memset(result, 0, sizeof *result);
        return npl__fail(EINVAL, "NULL policy");
    }
    if (npl__plan_default(&plan, pol) < 0)
        return -1;
    WITH_PLAN(plan, npl_migrate_range_planned(addr, len, plan, shape, result));
    return rc;
}

int npl_policy_map(const npl_policy *p, const npl_topo *t, const npl_shape *shape, size_t bytes,
                   size_t page_size, size_t first, size_t count, int *nodes)
{
    npl_plan *pl;
    int rc;
    /* NULL topology: this process's, with the defaults of the environment */
    if ((t ? npl_plan_create(&pl, p, t, 0) : npl__plan_default(&pl, p)) < 0)
        return -1;
    WITH_PLAN(pl, npl_plan_map(pl, shape, bytes, page_size, first, count, nodes));
    return rc;
}
