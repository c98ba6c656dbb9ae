/* SPDX-License-Identifier: BSD-3-Clause */
/* check.c - intended against actual: the verdict of npl_check, from an intended node per page
 * (arrays/ computes it from the plans an array was placed with) and one query of the kernel. */
#define _GNU_SOURCE
#include "query/query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int npl__check_pages(const void *base, size_t bytes, const int *want, struct npl_check *out)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE), npages = (bytes + psz - 1) / psz;
    int *have = malloc(npages * sizeof *have);
    if (!have)
        return npl__fail(ENOMEM, "out of memory");
    if (npl_query_pages(base, bytes, have, npages) < 0) {
        free(have);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->pages = npages;
    for (size_t i = 0; i < npages; i++) {
        if (have[i] < 0)
            out->absent++;
        else if (want[i] == NPL_NODE_ANY || want[i] == have[i])
            out->placed++;
        else
            out->misplaced++;
    }
    free(have);
    return 0;
}
