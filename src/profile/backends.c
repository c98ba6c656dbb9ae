/* SPDX-License-Identifier: BSD-3-Clause */
/* backends.c - the sampling backends, one table (profile.h; Linux mm/damon's operations beside
 * vaddr.c and paddr.c): the fault sampler (backend_fault.c, sampling in sampler.c) and perf
 * (backend_perf.c). A new backend: its file, its row here, its name in the schema. */
#include "profile/profile.h"

#include <stdio.h>
#include <string.h>

extern const struct npl__sampling_backend npl__backend_fault, npl__backend_perf;

static const struct npl__sampling_backend *const backends[NPL_BACKEND_COUNT] = {
    [NPL_BACKEND_FAULT] = &npl__backend_fault,
    [NPL_BACKEND_PERF] = &npl__backend_perf,
};

const struct npl__sampling_backend *npl__sampling_backend_named(const char *name)
{
    for (int i = 0; i < NPL_BACKEND_COUNT; i++)
        if (!strcmp(backends[i]->name, name))
            return backends[i];
    return NULL;
}

const struct npl__sampling_backend *npl__sampling_backend_of(int id)
{
    return backends[id > 0 && id < NPL_BACKEND_COUNT ? id : 0];
}

const struct npl__sampling_backend *npl__sampling_backend_choose(int asked, char *what,
                                                                 size_t wsize, char *why,
                                                                 size_t size)
{
    for (int i = NPL_BACKEND_COUNT - 1; i > 0; i--) {
        if (asked >= 0 && asked != i)
            continue;
        if (backends[i]->probe(what, wsize, why, size) == 0)
            return backends[i];
        if (asked == i)
            return NULL;
    }
    backends[0]->probe(what, wsize, why, size); /* the fault sampler: always, why kept */
    return backends[0];
}

void npl__sampling_backend_names(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < NPL_BACKEND_COUNT && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s",
                              i == 0 ? "" : i == NPL_BACKEND_COUNT - 1 ? " or " : ", ",
                              backends[i]->name);
}
