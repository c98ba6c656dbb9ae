/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_nexttouch.c - PURE: the next-touch chunk fitted to each phase's owners. */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the next-touch chunk of a phase-changing array ---- */
struct nt_row {
    uint32_t phase;
    uint64_t chunk, acc;
    int node; /* an index into the profile's nodes */
};

static int nt_row_cmp(const void *x, const void *y)
{
    const struct nt_row *a = x, *b = y;
    if (a->phase != b->phase)
        return a->phase < b->phase ? -1 : 1;
    return a->chunk < b->chunk ? -1 : a->chunk > b->chunk;
}

/* the accesses each group of g chunks keeps on its top node (rows sorted by phase, chunk) */
static uint64_t nt_kept(const struct nt_row *r, size_t n, uint64_t g, uint64_t *count, int nnodes)
{
    uint64_t kept = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || r[i].phase != r[i - 1].phase || r[i].chunk / g != r[i - 1].chunk / g) {
            kept += top;
            top = 0;
            memset(count, 0, (size_t)nnodes * sizeof *count);
        }
        count[r[i].node] += r[i].acc;
        top = count[r[i].node] > top ? count[r[i].node] : top;
    }
    return kept + top;
}

uint64_t npl__next_touch_chunk(const struct npl_profile *p, const struct npl_prof_array *a,
                               uint32_t phase, uint64_t max_bytes)
{
    uint64_t cb = a->chunk_bytes;
    if (!a->has_advice || !a->advice.nnext_touch || !cb || cb >= max_bytes || p->nnodes <= 0 ||
        !p->thread_nodes)
        return 0;
    struct nt_row *rows = malloc((a->nsamples ? a->nsamples : 1) * sizeof *rows);
    uint64_t *count = calloc((size_t)p->nnodes, sizeof *count);
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; rows && count && i < a->nsamples; i++) {
        const struct npl_prof_sample *x = &a->samples[i];
        int listed = 0, node = -1;
        for (uint32_t m = 0; m < a->advice.nnext_touch && !listed; m++)
            listed = x->phase < p->nphases && p->phases[x->phase].id == a->advice.next_touch[m] &&
                     (phase == NPL_RAW_NONE || phase == a->advice.next_touch[m]);
        for (int k = 0; listed && x->thread < (uint32_t)p->threads && k < p->nnodes; k++)
            node = p->nodes[k] == p->thread_nodes[x->thread] ? k : node;
        if (node < 0)
            continue;
        rows[n++] = (struct nt_row){x->phase, x->chunk, x->reads + x->writes, node};
        total += x->reads + x->writes;
    }
    uint64_t best = 0;
    if (rows && count && n) {
        qsort(rows, n, sizeof *rows, nt_row_cmp);
        uint64_t one = nt_kept(rows, n, 1, count, p->nnodes);
        best = 1;
        for (uint64_t g = 2; g * cb <= max_bytes; g *= 2)
            if (nt_kept(rows, n, g, count, p->nnodes) * 50 + total >= one * 50)
                best = g;
    }
    free(rows);
    free(count);
    return best ? best * cb : 0;
}
