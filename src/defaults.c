/* defaults.c - the ONE outer layer that reads the environment and the config file for the
 * library's defaults: the default policy of npl_alloc(bytes, NULL) (NUMAPLACE_POLICY, else the
 * config file's [policy] default, else first_touch) and the default thread count of block
 * policies (OMP_NUM_THREADS, else the allowed cores). They are read when a plan is made, and the
 * plan keeps them: nothing below this layer (plan.c, place.c, the array registry) reads them. */
#define _GNU_SOURCE
#include "internal.h"

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
            if (npl__parse_u64(first, &v) == 0 && v >= 1 && v <= 1 << 20)
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
