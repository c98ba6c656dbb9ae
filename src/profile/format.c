/* SPDX-License-Identifier: BSD-3-Clause */
/* format.c - the profile format v1 (docs/AUTO.md, docs/schema/profile.schema.json): its schema,
 * read strictly on json.c's lexer (the writer: format_write.c; an array's advice: format_advice.c).
 *
 * The reader is a pull parser that fills struct npl_profile directly (a sample row costs 32
 * bytes, not a tree of JSON nodes), in any member order. It accepts exactly the schema: unknown
 * members are errors (except inside "extra", skipped), so is every wrong type, missing member,
 * duplicate member, number that is not an integer where one is needed, value beyond the limits
 * of profile.h, invalid UTF-8, NUL in a string, nesting deeper than NPL_PROF_MAX_DEPTH, and any
 * cross reference that does not hold (a chunk past nchunks, an unknown phase or thread, a node the
 * machine lacks). Each message names the member ("arrays[2].samples[7][1]") and the byte offset.
 * Numbers are read and written without the C library's locale (a program's setlocale must not
 * turn "0.5" into "0,5"). */
#define _GNU_SOURCE
#include "profile/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hex_string(struct npl__jr *r, char **out)
{
    if (npl__jr_opt_string(r, out) < 0)
        return -1;
    if (!*out)
        return 0;
    size_t n = strlen(*out);
    if (n == 0 || n > 128 || n % 2)
        return npl__jr_fail(r, "a build-id is 2 to 128 hexadecimal digits, an even number");
    for (size_t i = 0; i < n; i++)
        if (!((*out)[i] >= '0' && (*out)[i] <= '9') && !((*out)[i] >= 'a' && (*out)[i] <= 'f'))
            return npl__jr_fail(r, "a build-id is lower-case hexadecimal");
    return 0;
}

static int site(struct npl__jr *r, struct npl_prof_site *s)
{
    static const char *const names[] = {"object", "build_id", "offset", "ordinal", "kind",
                                        "symbol", "where", "line_offset", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object (a site)") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        char *kind = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = npl__jr_string(r, &s->object);
                if (rc == 0 && !s->object[0])
                    rc = npl__jr_fail(r, "an empty object name");
                break;
            case 1: rc = hex_string(r, &s->build_id); break;
            case 2: rc = npl__jr_u64(r, UINT64_C(1) << 62, &s->offset); break;
            case 3: rc = npl__jr_u64(r, UINT64_C(1) << 40, &s->ordinal); break;
            case 4:
                rc = npl__jr_string(r, &kind);
                if (rc == 0) {
                    if (!strcmp(kind, "heap"))
                        s->kind = NPL_SITE_HEAP;
                    else if (!strcmp(kind, "static"))
                        s->kind = NPL_SITE_STATIC;
                    else
                        rc = npl__jr_fail(r, "\"%.32s\" is not heap or static", kind);
                }
                break;
            case 5: rc = npl__jr_opt_string(r, &s->symbol); break;
            case 6: rc = npl__jr_opt_string(r, &s->where); break;
            case 7:
                rc = npl__jr_u64(r, UINT64_C(1) << 32, &s->line_offset);
                s->has_line_offset = rc == 0;
                break;
            }
        }
        free(kind);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0)
        return -1;
    return npl__jr_require(r, &m, 0x1f); /* symbol, where and line_offset may be absent */
}

static int program(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"path", "build_id", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        if (rc == 0)
            rc = idx == 0 ? npl__jr_string(r, &p->program_path) : hex_string(r, &p->program_build_id);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, 0x3);
}

static int machine(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"nodes", "page_size", "migrate_pages_s", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        if (rc == 0 && idx == 0) {
            int64_t *v;
            uint64_t n;
            rc = npl__jr_int_list(r, 0, NPL_PROF_MAX_NODE_ID, NPL_PROF_MAX_NODES, &v, &n);
            if (rc == 0 && n == 0)
                rc = npl__jr_fail(r, "no node");
            for (uint64_t i = 1; rc == 0 && i < n; i++)
                if (v[i] <= v[i - 1])
                    rc = npl__jr_fail(r, "node ids must be distinct and ascending");
            if (rc == 0 && !(p->nodes = malloc((size_t)n * sizeof *p->nodes)))
                rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
            for (uint64_t i = 0; rc == 0 && i < n; i++)
                p->nodes[i] = (int)v[i];
            if (rc == 0)
                p->nnodes = (int)n;
            free(v);
        } else if (rc == 0 && idx == 2) {
            rc = npl__jr_real(r, 1, 1e12, &p->migrate_rate);
        } else if (rc == 0) {
            rc = npl__jr_u64(r, UINT64_C(1) << 30, &p->page_size);
            if (rc == 0 && (p->page_size < 4096 || (p->page_size & (p->page_size - 1))))
                rc = npl__jr_fail(r, "page size %llu is not a power of two of at least 4096",
                             (unsigned long long)p->page_size);
        }
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, 0x3);
}

static int int_vector(struct npl__jr *r, int64_t min, uint64_t max, int **out, int *n)
{
    int64_t *v;
    uint64_t cnt;
    if (npl__jr_int_list(r, min, max, NPL_PROF_MAX_THREADS, &v, &cnt) < 0)
        return -1;
    *out = malloc((size_t)(cnt ? cnt : 1) * sizeof **out);
    if (!*out) {
        free(v);
        return npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
    }
    for (uint64_t i = 0; i < cnt; i++)
        (*out)[i] = (int)v[i];
    *n = (int)cnt;
    free(v);
    return 0;
}

static int binding(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"source", "detail", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        char *src = NULL;
        if (rc == 0 && idx == 0) {
            rc = npl__jr_string(r, &src);
            if (rc == 0) {
                if (!strcmp(src, "pin"))
                    p->binding = NPL_BIND_PIN;
                else if (!strcmp(src, "omp"))
                    p->binding = NPL_BIND_OMP;
                else if (!strcmp(src, "none"))
                    p->binding = NPL_BIND_NONE;
                else
                    rc = npl__jr_fail(r, "\"%.32s\" is not pin, omp or none", src);
            }
        } else if (rc == 0) {
            rc = npl__jr_opt_string(r, &p->binding_detail);
        }
        free(src);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, 0x1);
}

static int real_item(struct npl__jr *r, void *item, const void *ctx)
{
    (void)ctx;
    return npl__jr_real(r, 0, 1e9, item);
}

/* [phase id, thread, seconds]: the phase an id until check_refs makes it an index */
static int exposure_item(struct npl__jr *r, void *item, const void *ctx)
{
    (void)ctx;
    struct npl_prof_exposure *e = item;
    uint64_t v[2];
    int first = 1, k;
    if (npl__jr_enter(r, '[', "[phase, thread, seconds]") < 0)
        return -1;
    for (int j = 0; j < 3; j++) {
        if ((k = npl__jr_arr_next(r, &first)) != 1)
            return k < 0 ? -1 : npl__jr_fail(r, "%d values, not 3 ([phase, thread, seconds])", j);
        size_t o = npl__jr_push_index(r, (size_t)j);
        int rc = j < 2 ? npl__jr_u64(r, j ? NPL_PROF_MAX_THREADS - 1 : UINT32_MAX, &v[j])
                       : npl__jr_real(r, 0, 1e9, &e->seconds);
        npl__jr_pop(r, o);
        if (rc < 0)
            return -1;
    }
    if ((k = npl__jr_arr_next(r, &first)) != 0)
        return k < 0 ? -1 : npl__jr_fail(r, "more than 3 values ([phase, thread, seconds])");
    e->phase = (uint32_t)v[0];
    e->thread = (uint32_t)v[1];
    return 0;
}

static int run(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"threads", "thread_nodes", "thread_cpus", "binding",
                                        "thread_exposure", "phase_exposure", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx, nn = -1, nc = -1;
    size_t ne = 0;
    int has_exposure = 0;
    int64_t threads = 0;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        if (rc == 0) {
            switch (idx) {
            case 0: rc = npl__jr_integer(r, 1, NPL_PROF_MAX_THREADS, &threads); break;
            case 1: rc = int_vector(r, 0, NPL_PROF_MAX_NODE_ID, &p->thread_nodes, &nn); break;
            case 2: {
                int nul = npl__jr_is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : int_vector(r, 0, 1 << 22, &p->thread_cpus, &nc);
                break;
            }
            case 3: rc = binding(r, p); break;
            case 4: {
                void *v = NULL;
                rc = npl__jr_list_of(r, &v, &ne, sizeof(double), NPL_PROF_MAX_THREADS,
                                     "thread_exposure", real_item, NULL);
                p->thread_exposure = v;
                has_exposure = 1;
                break;
            }
            case 5: {
                void *v = NULL;
                rc = npl__jr_list_of(r, &v, &p->nphase_exposure, sizeof *p->phase_exposure,
                                     (size_t)NPL_PROF_MAX_THREADS * 4096, "phase_exposure",
                                     exposure_item, NULL);
                p->phase_exposure = v;
                break;
            }
            }
        }
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || npl__jr_require(r, &m, 0xb) < 0)
        return -1;
    p->threads = (int)threads;
    if (nn != p->threads)
        return npl__jr_fail(r, "thread_nodes has %d entries for %d threads", nn, p->threads);
    if (p->thread_cpus && nc != p->threads)
        return npl__jr_fail(r, "thread_cpus has %d entries for %d threads", nc, p->threads);
    if (has_exposure && ne != (size_t)p->threads)
        return npl__jr_fail(r, "thread_exposure has %zu entries for %d threads", ne, p->threads);
    if (p->phase_exposure && !has_exposure)
        return npl__jr_fail(r, "phase_exposure without thread_exposure");
    for (size_t i = 0; i < p->nphase_exposure; i++)
        if (p->phase_exposure[i].thread >= (uint32_t)p->threads)
            return npl__jr_fail(r, "phase_exposure[%zu]: thread %u is not one of the run's %d",
                                i, p->phase_exposure[i].thread, p->threads);
    return 0;
}

/* An object of counts, each name of names (NULL-ended) required once: out[i] */
static int counts(struct npl__jr *r, const char *const *names, uint64_t *out)
{
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    unsigned all = 0;
    for (int i = 0; names[i]; i++)
        all |= 1u << i;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        if (rc == 0)
            rc = npl__jr_u64(r, UINT64_C(1) << 62, &out[idx]);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, all);
}

/* "measured": {"local": N, "remote": N, "unknown": N}, all three required */
static int measured(struct npl__jr *r, uint64_t out[3])
{
    static const char *const names[] = {"local", "remote", "unknown", NULL};
    return counts(r, names, out);
}

/* "concurrency": {"rounds": N, "together": M}, M <= N, both required */
static int concurrency(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"rounds", "together", NULL};
    uint64_t v[2] = {0, 0};
    if (counts(r, names, v) < 0)
        return -1;
    if (v[1] > v[0])
        return npl__jr_fail(r, "together (%llu) exceeds rounds (%llu)", (unsigned long long)v[1],
                            (unsigned long long)v[0]);
    p->rounds_crowded = v[0];
    p->rounds_together = v[1];
    p->has_concurrency = 1;
    return 0;
}

static int sampling(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"backend", "rate", "samples", "seconds", "rw_known",
                                        "measured", "concurrency", "omp_wait", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        char *b = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = npl__jr_string(r, &b);
                if (rc == 0) {
                    const struct npl__sampling_backend *be = npl__sampling_backend_named(b);
                    char names[128];
                    npl__sampling_backend_names(names, sizeof names);
                    if (be)
                        p->backend = be->id;
                    else
                        rc = npl__jr_fail(r, "\"%.32s\" is not %s", b, names);
                }
                break;
            case 1: rc = npl__jr_real(r, 0, 1e12, &p->rate); break;
            case 2: rc = npl__jr_u64(r, UINT64_C(1) << 62, &p->samples); break;
            case 3: rc = npl__jr_real(r, 0, 1e9, &p->seconds); break;
            case 4: rc = npl__jr_boolean(r, &p->rw_known); break;
            case 5:
                rc = measured(r, p->measured);
                p->has_measured = rc == 0;
                break;
            case 6: rc = concurrency(r, p); break;
            case 7: /* OMP_WAIT_POLICY as the program ran: "passive" (idle threads slept) */
                rc = npl__jr_string(r, &b);
                p->idle_sleep = rc == 0 && !strcmp(b, "passive");
                break;
            }
        }
        free(b);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, 0x1f);
}

static int phase(struct npl__jr *r, struct npl_prof_phase *ph)
{
    static const char *const names[] = {"id", "kind", "site", "entries", "seconds", "barriers",
                                        NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_enter(r, '{', "an object (a phase)") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        char *kind = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0: {
                uint64_t id = 0;
                rc = npl__jr_u64(r, UINT32_MAX, &id);
                ph->id = (uint32_t)id;
                break;
            }
            case 1:
                rc = npl__jr_string(r, &kind);
                if (rc == 0) {
                    if (!strcmp(kind, "region"))
                        ph->kind = NPL_PHASE_REGION;
                    else if (!strcmp(kind, "window"))
                        ph->kind = NPL_PHASE_WINDOW;
                    else
                        rc = npl__jr_fail(r, "\"%.32s\" is not region or window", kind);
                }
                break;
            case 2: {
                int nul = npl__jr_is_null(r);
                if (nul)
                    rc = nul < 0 ? -1 : 0;
                else if (!(ph->site = calloc(1, sizeof *ph->site)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                else
                    rc = site(r, ph->site);
                break;
            }
            case 3: rc = npl__jr_u64(r, UINT64_C(1) << 62, &ph->entries); break;
            case 4:
                rc = npl__jr_real(r, 0, 1e9, &ph->seconds);
                ph->has_seconds = rc == 0;
                break;
            case 5: rc = npl__jr_u64(r, UINT64_C(1) << 62, &ph->barriers); break;
            }
        }
        free(kind);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : npl__jr_require(r, &m, 0xf);
}

static int phase_item(struct npl__jr *r, void *item, const void *ctx)
{
    (void)ctx;
    return phase(r, item);
}

/* list_of into a record array (itemsp: the address of its pointer) counted in a uint32_t */
static int list_u32(struct npl__jr *r, void *itemsp, uint32_t *count, size_t size, size_t max,
                    const char *what, npl__jr_item_fn one)
{
    void *items;
    memcpy(&items, itemsp, sizeof items);
    size_t n = *count;
    int k = npl__jr_list_of(r, &items, &n, size, max, what, one, NULL);
    memcpy(itemsp, &items, sizeof items);
    *count = (uint32_t)n;
    return k;
}

static int phases(struct npl__jr *r, struct npl_profile *p)
{
    return list_u32(r, &p->phases, &p->nphases, sizeof *p->phases, NPL_PROF_MAX_PHASES, "phases",
                    phase_item);
}

/* Rows of n integers: [[a, b, ...], ...], each value <= max[j]. */
static int rows_(struct npl__jr *r, int nmin, int n, const uint64_t *max, size_t maxrows,
                 uint64_t **out, size_t *nrows, int *width);
/* rows of n integers each (row i at (*out)[i * n]), or all of nmin (<= n; the rest 0): *width */
static int rows(struct npl__jr *r, int nmin, int n, const uint64_t *max, size_t maxrows, uint64_t **out,
                size_t *nrows, int *width)
{
    int rc = rows_(r, nmin, n, max, maxrows, out, nrows, width);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* one row: up to n integers, each <= max[j], the rest 0; the first row sets the width (nmin or
 * n), every later row must have it */
struct row_shape {
    int nmin, n;
    const uint64_t *max;
    int *width;
    const size_t *nrows; /* rows counted so far, this one included */
};
static int row_item(struct npl__jr *r, void *item, const void *ctx)
{
    const struct row_shape *g = ctx;
    uint64_t *row = item;
    if (npl__jr_enter(r, '[', "an array of integers") < 0)
        return -1;
    int f2 = 1, j = 0, k2;
    while ((k2 = npl__jr_arr_next(r, &f2)) == 1) {
        if (j >= g->n)
            return npl__jr_fail(r, "more than %d values in a row", g->n);
        size_t o2 = npl__jr_push_index(r, (size_t)j);
        int rc = npl__jr_u64(r, g->max[j], &row[j]);
        npl__jr_pop(r, o2);
        if (rc < 0)
            return -1;
        j++;
    }
    if (k2 < 0)
        return -1;
    int first_row = *g->nrows == 1;
    if (first_row && j == g->nmin)
        *g->width = g->nmin;
    if (j != *g->width)
        return g->nmin < g->n && first_row
                   ? npl__jr_fail(r, "%d values in a row, not %d or %d", j, g->nmin, g->n)
                   : npl__jr_fail(r, "%d values in a row, not %d (as in the first row)", j, *g->width);
    return 0;
}

static int rows_(struct npl__jr *r, int nmin, int n, const uint64_t *max, size_t maxrows,
                 uint64_t **out, size_t *nrows, int *width)
{
    *out = NULL;
    *nrows = 0;
    *width = n;
    void *items = NULL;
    struct row_shape g = {nmin, n, max, width, nrows};
    int k = npl__jr_list_of(r, &items, nrows, (size_t)n * sizeof **out, maxrows, "rows", row_item, &g);
    *out = items;
    return k;
}

/* what an array's members say of each other */
static int array_check(struct npl__jr *r, const struct npl_prof_array *a, uint64_t nft, int has_cn,
                       int row_width)
{
    if (a->bytes == 0)
        return npl__jr_fail(r, "bytes is 0");
    if (a->chunk_bytes == 0)
        return npl__jr_fail(r, "chunk_bytes is 0");
    uint64_t want = a->bytes / a->chunk_bytes + (a->bytes % a->chunk_bytes != 0);
    if (a->nchunks != want)
        return npl__jr_fail(r, "nchunks is %llu; %llu bytes in chunks of %llu make %llu",
                       (unsigned long long)a->nchunks, (unsigned long long)a->bytes,
                       (unsigned long long)a->chunk_bytes, (unsigned long long)want);
    if (nft != a->nchunks)
        return npl__jr_fail(r, "first_touch has %llu entries for %llu chunks", (unsigned long long)nft,
                       (unsigned long long)a->nchunks);
    if (has_cn && a->advice.nchunk_nodes != a->nchunks)
        return npl__jr_fail(r, "advice.chunk_nodes has %llu entries for %llu chunks",
                       (unsigned long long)a->advice.nchunk_nodes, (unsigned long long)a->nchunks);
    /* a row's local and remote: some of its accesses; over the rows, some of the array's (a
     * sample whose row was dropped is counted in the array's total only) */
    uint64_t sum[2] = {0, 0};
    for (size_t s = 0; s < a->nsamples; s++) {
        const struct npl_prof_sample *x = &a->samples[s];
        if (x->local + x->remote > x->reads + x->writes)
            return npl__jr_fail(r, "samples[%zu]: local + remote (%llu) exceed its accesses (%llu)", s,
                           (unsigned long long)(x->local + x->remote),
                           (unsigned long long)(x->reads + x->writes));
        sum[0] += x->local;
        sum[1] += x->remote;
    }
    if (row_width == 7 && !a->has_measured)
        return npl__jr_fail(r, "samples count local and remote accesses, but measured is missing");
    if (a->has_measured && (sum[0] > a->measured[NPL_MEASURED_LOCAL] ||
                            sum[1] > a->measured[NPL_MEASURED_REMOTE]))
        return npl__jr_fail(r, "the samples count %llu local and %llu remote accesses, more than "
                          "measured (%llu, %llu)", (unsigned long long)sum[0],
                       (unsigned long long)sum[1],
                       (unsigned long long)a->measured[NPL_MEASURED_LOCAL],
                       (unsigned long long)a->measured[NPL_MEASURED_REMOTE]);
    return 0;
}

static int array(struct npl__jr *r, struct npl_prof_array *a)
{
    static const char *const names[] = {"site", "bytes", "chunk_bytes", "nchunks", "first_touch",
                                        "samples", "advice", "measured", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx, has_cn = 0, row_width = 5;
    uint64_t nft = 0;
    if (npl__jr_enter(r, '{', "an object (an array)") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        if (rc == 0) {
            switch (idx) {
            case 0: rc = site(r, &a->site); break;
            case 1: rc = npl__jr_u64(r, NPL_PROF_MAX_BYTES, &a->bytes); break;
            case 2: rc = npl__jr_u64(r, NPL_PROF_MAX_BYTES, &a->chunk_bytes); break;
            case 3: rc = npl__jr_u64(r, NPL_PROF_MAX_CHUNKS, &a->nchunks); break;
            case 4: {
                int64_t *v;
                rc = npl__jr_int_list(r, -1, NPL_PROF_MAX_THREADS - 1, NPL_PROF_MAX_CHUNKS, &v, &nft);
                if (rc == 0 && !(a->first_touch = malloc((size_t)(nft ? nft : 1) * sizeof(int32_t))))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (uint64_t i = 0; rc == 0 && i < nft; i++)
                    a->first_touch[i] = (int32_t)v[i];
                free(v);
                break;
            }
            case 5: { /* [phase, chunk, thread, reads, writes] or [..., local, remote] */
                static const uint64_t max[7] = {UINT32_MAX, NPL_PROF_MAX_CHUNKS - 1,
                                                NPL_PROF_MAX_THREADS - 1, NPL_PROF_MAX_COUNT,
                                                NPL_PROF_MAX_COUNT, NPL_PROF_MAX_COUNT,
                                                NPL_PROF_MAX_COUNT};
                uint64_t *v;
                size_t n;
                rc = rows(r, 5, 7, max, NPL_PROF_MAX_SAMPLES, &v, &n, &row_width);
                if (rc == 0 && !(a->samples = malloc((n ? n : 1) * sizeof *a->samples)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (size_t i = 0; rc == 0 && i < n; i++) {
                    const uint64_t *x = &v[7 * i];
                    a->samples[i] = (struct npl_prof_sample){(uint32_t)x[0], (uint32_t)x[1],
                                                             (uint32_t)x[2], x[3], x[4], x[5], x[6]};
                }
                if (rc == 0)
                    a->nsamples = n;
                free(v);
                break;
            }
            case 6:
                rc = npl__advice_read(r, &a->advice, &has_cn);
                a->has_advice = rc == 0;
                break;
            case 7:
                rc = measured(r, a->measured);
                a->has_measured = rc == 0;
                break;
            }
        }
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || npl__jr_require(r, &m, 0x3f) < 0)
        return -1;
    return array_check(r, a, nft, has_cn, row_width);
}

static int array_item(struct npl__jr *r, void *item, const void *ctx)
{
    (void)ctx;
    return array(r, item);
}

static int arrays(struct npl__jr *r, struct npl_profile *p)
{
    return list_u32(r, &p->arrays, &p->narrays, sizeof *p->arrays, NPL_PROF_MAX_ARRAYS, "arrays",
                    array_item);
}

static int node_known(const struct npl_profile *p, int node)
{
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i] == node)
            return 1;
    return 0;
}

static int phase_index(const struct npl_profile *p, uint32_t id)
{
    for (uint32_t i = 0; i < p->nphases; i++)
        if (p->phases[i].id == id)
            return (int)i;
    return -1;
}

/* run.phase_exposure, read as ids: indexes, each (phase, thread) once */
static int exposure_refs(struct npl__jr *r, struct npl_profile *p)
{
    for (size_t i = 0; i < p->nphase_exposure; i++) {
        struct npl_prof_exposure *e = &p->phase_exposure[i];
        int ph = phase_index(p, e->phase);
        if (ph < 0) {
            size_t o = npl__jr_push_key(r, "run.phase_exposure");
            npl__jr_push_index(r, i);
            npl__jr_fail(r, "phase %u is not in phases", e->phase);
            npl__jr_pop(r, o);
            return -1;
        }
        e->phase = (uint32_t)ph;
    }
    if (p->nphase_exposure) {
        qsort(p->phase_exposure, p->nphase_exposure, sizeof *p->phase_exposure,
              npl__prof_exposure_cmp);
        for (size_t i = 1; i < p->nphase_exposure; i++)
            if (!npl__prof_exposure_cmp(&p->phase_exposure[i - 1], &p->phase_exposure[i])) {
                size_t o = npl__jr_push_key(r, "run.phase_exposure");
                npl__jr_fail(r, "phase %u, thread %u given twice",
                             p->phases[p->phase_exposure[i].phase].id,
                             p->phase_exposure[i].thread);
                npl__jr_pop(r, o);
                return -1;
            }
    }
    return 0;
}

/* Cross references, once every member is read (members come in any order). */
static int check_refs(struct npl__jr *r, struct npl_profile *p)
{
    r->whole = 1;
    for (int t = 0; t < p->threads; t++)
        if (!node_known(p, p->thread_nodes[t])) {
            size_t o = npl__jr_push_key(r, "run.thread_nodes");
            npl__jr_push_index(r, (size_t)t);
            npl__jr_fail(r, "node %d is not one of machine.nodes", p->thread_nodes[t]);
            npl__jr_pop(r, o);
            return -1;
        }
    for (uint32_t i = 0; i < p->nphases; i++)
        for (uint32_t j = 0; j < i; j++)
            if (p->phases[i].id == p->phases[j].id) {
                size_t o = npl__jr_push_key(r, "phases");
                npl__jr_push_index(r, i);
                npl__jr_fail(r, "phase id %u given twice", p->phases[i].id);
                npl__jr_pop(r, o);
                return -1;
            }
    for (uint32_t i = 0; i < p->ntransitions; i++) {
        /* transitions were read as ids: turn them into indexes */
        int f = phase_index(p, p->transitions[i].from), t = phase_index(p, p->transitions[i].to);
        if (f < 0 || t < 0) {
            size_t o = npl__jr_push_key(r, "transitions");
            npl__jr_push_index(r, i);
            npl__jr_fail(r, "phase %u is not in phases", f < 0 ? p->transitions[i].from : p->transitions[i].to);
            npl__jr_pop(r, o);
            return -1;
        }
        p->transitions[i].from = (uint32_t)f;
        p->transitions[i].to = (uint32_t)t;
    }
    if (exposure_refs(r, p) < 0)
        return -1;
    for (uint32_t ai = 0; ai < p->narrays; ai++) {
        struct npl_prof_array *a = &p->arrays[ai];
        size_t o = npl__jr_push_key(r, "arrays");
        npl__jr_push_index(r, ai);
        int rc = 0;
        if (a->chunk_bytes % p->page_size)
            rc = npl__jr_fail(r, "chunk_bytes %llu is not a multiple of the page size %llu",
                         (unsigned long long)a->chunk_bytes, (unsigned long long)p->page_size);
        for (uint64_t c = 0; rc == 0 && c < a->nchunks; c++)
            if (a->first_touch[c] >= p->threads) {
                npl__jr_push_key(r, "first_touch");
                npl__jr_push_index(r, c);
                rc = npl__jr_fail(r, "thread %d is not one of the run's %d threads", a->first_touch[c],
                             p->threads);
            }
        for (size_t s = 0; rc == 0 && s < a->nsamples; s++) {
            struct npl_prof_sample *x = &a->samples[s];
            int ph = phase_index(p, x->phase);
            const char *bad = ph < 0 ? "its phase is not in phases"
                              : x->chunk >= a->nchunks ? "its chunk is past nchunks"
                              : x->thread >= (uint32_t)p->threads ? "its thread is not one of the run's"
                              : x->reads + x->writes == 0 ? "it counts no access" : NULL;
            if (bad) {
                npl__jr_push_key(r, "samples");
                npl__jr_push_index(r, s);
                rc = npl__jr_fail(r, "%s", bad);
            }
            x->phase = (uint32_t)ph;
        }
        if (rc == 0 && a->has_advice) {
            npl__jr_push_key(r, "advice");
            for (uint32_t i = 0; rc == 0 && i < a->advice.nnext_touch; i++)
                if (phase_index(p, a->advice.next_touch[i]) < 0)
                    rc = npl__jr_fail(r, "next_touch_phases: phase %u is not in phases",
                                 a->advice.next_touch[i]);
            for (uint64_t c = 0; rc == 0 && c < a->advice.nchunk_nodes; c++)
                if (a->advice.chunk_nodes[c] >= 0 && !node_known(p, a->advice.chunk_nodes[c]))
                    rc = npl__jr_fail(r, "chunk_nodes: node %d is not one of machine.nodes",
                                 a->advice.chunk_nodes[c]);
        }
        npl__jr_pop(r, o);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int top(struct npl__jr *r, struct npl_profile *p)
{
    static const char *const names[] = {"format", "version", "program", "machine", "run",
                                        "sampling", "phases", "transitions", "arrays", "extra",
                                        NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (npl__jr_peek(r) != '{')
        return npl__jr_fail(r, "not a numaplace profile: expected a JSON object, found %s",
                       npl__jr_what_next(r));
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = 0;
        for (idx = 0; names[idx] && strcmp(names[idx], key); idx++)
            ;
        if (!names[idx]) {
            npl__jr_pop(r, old);
            return npl__jr_fail(r, "not a numaplace profile: unknown member \"%.64s\"", key);
        }
        rc = npl__jr_member(r, &m, key, &idx);
        char *s = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = npl__jr_string(r, &s);
                if (rc == 0 && strcmp(s, "numaplace-profile")) {
                    npl__jr_pop(r, old);
                    rc = npl__jr_fail(r, "not a numaplace profile: format \"%.64s\"", s);
                }
                break;
            case 1: {
                int64_t v;
                rc = npl__jr_integer(r, 0, 1u << 30, &v);
                if (rc == 0 && v != 1)
                    rc = npl__jr_fail(r, "profile version %lld is not supported (this numaplace reads "
                                    "version 1)", (long long)v);
                break;
            }
            case 2: rc = program(r, p); break;
            case 3: rc = machine(r, p); break;
            case 4: rc = run(r, p); break;
            case 5: rc = sampling(r, p); break;
            case 6: rc = phases(r, p); break;
            case 7: {
                static const uint64_t max[3] = {UINT32_MAX, UINT32_MAX, UINT64_C(1) << 62};
                uint64_t *v;
                size_t n;
                int width;
                rc = rows(r, 3, 3, max, NPL_PROF_MAX_TRANSITIONS, &v, &n, &width);
                if (rc == 0 && !(p->transitions = malloc((n ? n : 1) * sizeof *p->transitions)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (size_t i = 0; rc == 0 && i < n; i++)
                    p->transitions[i] = (struct npl_prof_transition){(uint32_t)v[3 * i],
                                                                     (uint32_t)v[3 * i + 1], v[3 * i + 2]};
                if (rc == 0)
                    p->ntransitions = (uint32_t)n;
                free(v);
                break;
            }
            case 8: rc = arrays(r, p); break;
            case 9:
                if (npl__jr_peek(r) != '{')
                    rc = npl__jr_fail(r, "expected an object, found %s", npl__jr_what_next(r));
                else
                    rc = npl__jr_skip_value(r);
                break;
            }
        }
        free(s);
        if (r->plen > old)
            npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || npl__jr_require(r, &m, 0x17f) < 0)
        return -1;
    if (npl__jr_peek(r) != -1)
        return npl__jr_fail(r, "text after the profile's object");
    return check_refs(r, p);
}

int npl__profile_parse(const char *text, size_t len, struct npl_profile **out, char *err,
                       size_t errsz)
{
    if (!out || (!text && len))
        return npl__prof_fail(err, errsz, EINVAL, "profile: NULL argument");
    *out = NULL;
    if (len > NPL_PROF_MAX_TEXT)
        return npl__prof_fail(err, errsz, EINVAL, "profile: %zu bytes, more than the %zu MiB a "
                              "profile may have", len, NPL_PROF_MAX_TEXT >> 20);
    struct npl_profile *p = calloc(1, sizeof *p);
    if (!p)
        return npl__prof_fail(err, errsz, ENOMEM, "profile: out of memory");
    struct npl__jr r = {.s = text ? text : "", .n = len, .err = err, .errsz = errsz};
    if (len == 0) {
        free(p);
        return npl__prof_fail(err, errsz, EINVAL, "profile: empty");
    }
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        r.i = 3; /* a UTF-8 byte order mark */
    if (top(&r, p) < 0) {
        int e = errno;
        npl__profile_free(p);
        errno = e;
        return -1;
    }
    *out = p;
    return 0;
}

int npl__profile_load(const char *path, struct npl_profile **out, char *err, size_t errsz)
{
    if (!path || !out)
        return npl__prof_fail(err, errsz, EINVAL, "profile: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return npl__prof_fail(err, errsz, errno, "profile %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        close(fd);
        return npl__prof_fail(err, errsz, e, "profile %s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > NPL_PROF_MAX_TEXT) {
        close(fd);
        return npl__prof_fail(err, errsz, EFBIG, "profile %s: %lld bytes, more than %zu MiB", path,
                              (long long)st.st_size, NPL_PROF_MAX_TEXT >> 20);
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return npl__prof_fail(err, errsz, ENOMEM, "profile %s: out of memory", path);
    }
    for (;;) {
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return npl__prof_fail(err, errsz, e, "profile %s: %s", path, strerror(e));
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (n == cap) { /* the file grew */
            free(buf);
            close(fd);
            return npl__prof_fail(err, errsz, EINVAL, "profile %s: changed while read", path);
        }
    }
    close(fd);
    char msg[640];
    int rc = npl__profile_parse(buf, n, out, msg, sizeof msg);
    int e = errno;
    free(buf);
    if (rc < 0)
        return npl__prof_fail(err, errsz, e, "%s: %s", path, msg);
    return 0;
}
