/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the profile format v1 reader (npl__profile_parse, src/profile/format.c) and the
 * classifier behind it. Any bytes: no crash, no sanitizer report, no hang; a rejection is EINVAL
 * (ENOMEM) with a one-line message; an accepted profile writes text that parses again to the same
 * text, and every array of a small one classifies into a policy string that parses. */
#include "profile/profile.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct npl_profile *p = NULL;
    char err[1024] = "";
    if (npl__profile_parse((const char *)data, size, &p, err, sizeof err) < 0) {
        if (errno != EINVAL && errno != ENOMEM)
            abort(); /* an undocumented errno */
        if (!err[0] || strchr(err, '\n') || strncmp(err, "profile", 7))
            abort(); /* one line, naming what it is about */
        return 0;
    }
    size_t n1, n2;
    char *t1 = npl__profile_format(p, &n1);
    struct npl_profile *q = NULL;
    if (!t1 || npl__profile_parse(t1, n1, &q, err, sizeof err) < 0)
        abort(); /* what is written must read again */
    char *t2 = npl__profile_format(q, &n2);
    if (!t2 || n1 != n2 || memcmp(t1, t2, n1))
        abort(); /* and be stable */
    free(t1);
    free(t2);
    npl__profile_free(q);
    /* classify small profiles (a synthetic machine per profile is built by hwloc: keep it small) */
    uint64_t work = 0;
    for (uint32_t i = 0; i < p->narrays; i++)
        work += p->arrays[i].nsamples + p->arrays[i].nchunks;
    npl_topo *topo = NULL;
    struct npl_prof_ctx *ctx = NULL;
    if (p->nnodes <= 8 && p->threads <= 16 && work <= 100000 &&
        npl__profile_topo(p, &topo, err, sizeof err) == 0 &&
        npl__classify_ctx(&ctx, topo, p->threads, err, sizeof err) == 0) {
        for (uint32_t i = 0; i < p->narrays; i++) {
            struct npl_prof_input in;
            struct npl_prof_advice a;
            npl__profile_input(p, &p->arrays[i], &in);
            if (npl__classify(ctx, &in, &a, err, sizeof err) < 0)
                abort(); /* a profile that reads is classifiable */
            npl_policy *pol = NULL;
            if (strcmp(a.policy, "explicit") && npl_policy_parse(&pol, a.policy) < 0)
                abort();
            npl_policy_free(pol);
            if (!(a.confidence >= 0 && a.confidence <= 1 && a.local_policy >= 0 &&
                  a.local_policy <= 1.000001 && a.reason[0]))
                abort();
            npl__advice_clear(&a);
        }
    }
    npl__classify_ctx_free(ctx);
    npl_topo_destroy(topo);
    npl__profile_free(p);
    return 0;
}
