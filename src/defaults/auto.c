/* SPDX-License-Identifier: BSD-3-Clause */
/* auto.c - the library's "auto" policy (include/numaplace/profile.h): npl_alloc_auto() takes the
 * policy that a profile advises for the array its calling site allocates. */
#define _GNU_SOURCE
#include "defaults/defaults.h"
#include "plan/plan.h"
#include "profile/profile.h"

#include "numaplace/profile.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int npl_profile_load(npl_profile **out, const char *path)
{
    if (!out || !path)
        return npl__fail(EINVAL, "NULL argument");
    *out = NULL;
    struct npl_profile *p;
    if (npl__profile_load(path, &p, NULL, 0) < 0)
        return -1; /* npl__prof_fail has set the message */
    struct npl_site_object me;
    if (npl__site_main_object(&me) == 0 && !npl__profile_same_program(p, me.path, me.build_id)) {
        int rc = npl__fail(EINVAL, "%s is a profile of %s%s%s, not of this program (%s%s%s)",
                           path, p->program_path ? p->program_path : "?",
                           p->program_build_id ? ", build-id " : "",
                           p->program_build_id ? p->program_build_id : "", me.path,
                           *me.build_id ? ", build-id " : "", me.build_id);
        npl__profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void npl_profile_free(npl_profile *p)
{
    if (p)
        npl__profile_free(p);
}

/* the profile of `numaplace run --profile FILE`, loaded at the first npl_alloc_auto(NULL, ...) */
static npl_profile *run_profile;
static pthread_once_t run_once = PTHREAD_ONCE_INIT;
static void load_run_profile(void)
{
    const char *f = getenv("NUMAPLACE_PROFILE_APPLY");
    if (f && *f && npl_profile_load(&run_profile, f) < 0)
        npl__debug("NUMAPLACE_PROFILE_APPLY=%s not used: %s", f, npl_last_error());
}

static const struct npl_prof_array *advice_for(const npl_profile *p, const void *site,
                                               uint64_t ordinal)
{
    struct npl_site_key k;
    if (!p || npl__site_resolve(site, &k, NULL) < 0)
        return NULL;
    return npl__profile_match(p, k.object_hash, k.offset, ordinal, NPL_SITE_HEAP);
}

void *npl_alloc_auto(const npl_profile *p, const npl_shape *shape, unsigned flags)
{
    return npl__alloc_auto_at(p, shape, flags, __builtin_return_address(0));
}

void *npl__alloc_auto_at(const npl_profile *p, const npl_shape *shape, unsigned flags,
                         const void *site)
{
    size_t bytes;
    if (npl_shape_bytes(shape, &bytes) < 0)
        return NULL;
    if (!p) {
        pthread_once(&run_once, load_run_profile);
        p = run_profile;
    }
    struct npl_site_key k;
    uint32_t ord = npl__site_resolve(site, &k, NULL) == 0 ? npl__site_next_ordinal(&k) : 0;
    const struct npl_prof_array *a = advice_for(p, site, ord);
    npl_policy *pol = NULL;
    int explicit_map = 0;
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    if (a && a->has_advice) {
        if (a->advice.kind == NPL_ADVICE_MAP) {
            explicit_map = a->advice.chunk_nodes && a->advice.nchunk_nodes;
            /* another number of pages: the stored fallback (a shape that holds at any size, or,
             * for an array that followed its call site's map, the map scaled), as numaplace run
             * --profile does */
            if (explicit_map && (bytes + ps - 1) / ps != (a->bytes + ps - 1) / ps &&
                npl__advice_elsewhere(a, &pol, &explicit_map) < 0)
                return NULL;
        } else if (npl_policy_parse(&pol, a->advice.policy) < 0) {
            return NULL;
        }
        /* thread blocks on the nodes of the threads as `numaplace run --pin` pins them (any
         * strategy, a CPU list too): the thread->node map the advice was predicted with */
        if (pol && npl__policy_follow_pin(pol, getenv("NUMAPLACE_PIN")) < 0)
            npl__debug("npl_alloc_auto: NUMAPLACE_PIN not followed: %s", npl_last_error());
    }
    npl_policy *ft = NULL;
    if (explicit_map && npl_policy_create(&ft, NPL_FIRST_TOUCH, NULL, 0) < 0) {
        npl_policy_free(pol);
        return NULL;
    }
    void *r = npl__alloc_array_at(shape, explicit_map ? ft : pol, flags, site);
    npl_policy_free(ft);
    if (r && explicit_map) { /* a node per page: the map, or the map scaled */
        int *nodes = npl__explicit_pages(a, bytes, ps);
        if (!nodes || npl_place_pages(r, (bytes + ps - 1) / ps * ps, nodes, 0) < 0) {
            /* a map this machine cannot take (a node it lacks: EINVAL), as a policy it cannot */
            int e = nodes ? errno : ENOMEM;
            free(nodes);
            npl_free(r);
            npl_policy_free(pol);
            errno = e;
            return NULL;
        }
        free(nodes);
    }
    if (r && a && a->has_advice && a->advice.nnext_touch &&
        npl_next_touch_register(r, bytes,
                                npl__next_touch_chunk(p, a, NPL_RAW_NONE,
                                                      NPL_NEXT_TOUCH_DEFAULT_CHUNK)) < 0)
        npl__debug("npl_alloc_auto: not registered for next-touch: %s", npl_last_error());
    npl_policy_free(pol);
    return r;
}

int npl_profile_advice(const npl_profile *p, const void *site, unsigned long ordinal,
                       char *policy, size_t policy_size, char *pattern, size_t pattern_size)
{
    if (!p)
        return npl__fail(EINVAL, "NULL profile");
    const struct npl_prof_array *a = advice_for(p, site, ordinal);
    if (!a)
        return npl__note(ENOENT, "the profile has no array allocated at %p", site);
    const char *pol = a->has_advice ? a->advice.policy : "first_touch";
    const char *pat = a->has_advice ? npl__pattern_name(a->advice.pattern) : "too-few-samples";
    if (policy && policy_size)
        snprintf(policy, policy_size, "%s", pol);
    if (pattern && pattern_size)
        snprintf(pattern, pattern_size, "%s", pat ? pat : "?");
    return 0;
}

int npl_profile_replicate(const npl_profile *p, const void *site, unsigned long ordinal)
{
    if (!p)
        return npl__fail(EINVAL, "NULL profile");
    const struct npl_prof_array *a = advice_for(p, site, ordinal);
    if (!a)
        return npl__note(ENOENT, "the profile has no array allocated at %p", site);
    return a->has_advice && a->advice.replicate;
}
