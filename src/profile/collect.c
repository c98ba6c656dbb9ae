/* SPDX-License-Identifier: BSD-3-Clause */
/* collect.c - the raw profile that the sampler filled (struct npl_raw, shared memory) becomes a
 * profile of format v1 (struct npl_profile): sites by object path and build-id, chunks, first
 * touches, sample rows per array, threads and their nodes, phases and their transitions. Pure
 * apart from malloc: `numaplace profile` runs it after the program has ended. */
#define _GNU_SOURCE
#include "profile/profile.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

static int fill_site(struct npl_prof_site *s, const struct npl_raw *r, uint32_t object,
                     uint64_t offset, uint64_t ordinal, int kind, const char *symbol)
{
    memset(s, 0, sizeof *s);
    const struct npl_raw_object *o = object < r->nobjects ? &r->objects[object] : NULL;
    s->object = strdup(o ? o->path : "?");
    s->build_id = o ? dup_or_null(o->build_id) : NULL;
    s->offset = offset;
    s->ordinal = ordinal;
    s->kind = kind;
    s->symbol = dup_or_null(symbol);
    return s->object && (!o || !o->build_id[0] || s->build_id) &&
                   (!symbol || !*symbol || s->symbol)
               ? 0
               : -1;
}

static int in_nodes(const struct npl_collect_info *in, int node)
{
    for (int i = 0; i < in->nnodes; i++)
        if (in->nodes[i] == node)
            return 1;
    return 0;
}

/* The phases (a one-time serial pass's own phase once: entered once) and the transitions; -1:
 * out of memory */
static int fill_phases(struct npl_profile *p, const struct npl_raw *r, uint32_t nph, uint32_t once)
{
    for (uint32_t i = 0; i < nph; i++) {
        struct npl_prof_phase *ph = &p->phases[i];
        const struct npl_raw_phase *rp = &r->phases[i];
        ph->id = i;
        ph->entries = rp->entries && i != once ? rp->entries : 1;
        ph->kind = rp->kind == NPL_RAW_PHASE_REGION ? NPL_PHASE_REGION : NPL_PHASE_WINDOW;
        /* its duration; a one-time serial pass's phase has none of its own (its time is in the
         * serial phase's: the stretches are not timed one by one) */
        ph->has_seconds = i < r->nphases && i != once;
        ph->seconds = ph->has_seconds ? (double)rp->ns / 1e9 : 0;
        ph->barriers = i < r->nphases && rp->kind == NPL_RAW_PHASE_WINDOW ? rp->barriers : 0;
        if (i < r->nphases && rp->kind == NPL_RAW_PHASE_REGION && rp->object != NPL_RAW_NONE) {
            if (!(ph->site = malloc(sizeof *ph->site)) ||
                fill_site(ph->site, r, rp->object, rp->offset, 0, NPL_SITE_HEAP, NULL) < 0)
                return -1;
        }
    }

    uint32_t ntr = 0;
    for (size_t i = 0; i < NPL_RAW_TRANS; i++)
        ntr += r->trans[i].key != 0;
    p->transitions = calloc(ntr ? ntr : 1, sizeof *p->transitions);
    if (!p->transitions)
        return -1;
    for (size_t i = 0; i < NPL_RAW_TRANS; i++) {
        uint64_t k = r->trans[i].key;
        if (!k)
            continue;
        uint32_t from = (uint32_t)((k - 1) >> 32), to = (uint32_t)(k - 1);
        if (from < nph && to < nph && r->trans[i].count)
            p->transitions[p->ntransitions++] =
                (struct npl_prof_transition){from, to, r->trans[i].count};
    }
    return 0;
}

/* The arrays and their sample rows (a one-time serial pass's samples in phase once); -1: out of
 * memory (what was filled is p's) */
static int fill_arrays(struct npl_profile *p, const struct npl_raw *r, uint32_t narr, uint32_t nph,
                       uint32_t nthreads, uint32_t serial, uint32_t once,
                       const unsigned char *one_time)
{
    /* sample rows per array: count, then fill */
    size_t *count = calloc(narr ? narr : 1, sizeof *count);
    if (!count)
        return -1;
    size_t nrows = r->rows_used < NPL_RAW_ROWS ? (size_t)r->rows_used : NPL_RAW_ROWS;
    for (size_t i = 0; i < nrows; i++) {
        uint64_t k = r->rows[i].key;
        if (k && NPL_RAW_KEY_ARRAY(k) < narr && r->rows[i].reads + r->rows[i].writes)
            count[NPL_RAW_KEY_ARRAY(k)]++;
    }
    p->has_measured = 1;
    for (uint32_t i = 0; i < narr; i++) {
        const struct npl_raw_array *ra = &r->arrays[i];
        struct npl_prof_array *a = &p->arrays[p->narrays];
        if (ra->state != NPL_RAW_LIVE && ra->state != NPL_RAW_GONE)
            continue;
        if (fill_site(&a->site, r, ra->object, ra->offset, ra->ordinal,
                      ra->kind == NPL_RAW_KIND_STATIC ? NPL_SITE_STATIC : NPL_SITE_HEAP,
                      ra->kind == NPL_RAW_KIND_STATIC ? ra->symbol : NULL) < 0) {
            free(count);
            return -1;
        }
        a->bytes = ra->asked ? ra->asked : ra->bytes; /* the program's size */
        a->chunk_bytes = ra->chunk_bytes;
        a->nchunks = ra->nchunks;
        a->first_touch = malloc((size_t)(ra->nchunks ? ra->nchunks : 1) * sizeof(int32_t));
        a->samples = calloc(count[i] ? count[i] : 1, sizeof *a->samples);
        p->narrays++;
        if (!a->first_touch || !a->samples) {
            free(count);
            return -1;
        }
        for (uint64_t c = 0; c < ra->nchunks; c++) {
            int32_t t = ra->ft != UINT64_MAX && ra->ft + c < NPL_RAW_FT ? r->ft[ra->ft + c] : -1;
            a->first_touch[c] = t >= 0 && (uint32_t)t < nthreads ? t : -1;
        }
        /* the measured locality (every backend asks; an array of none: all zero) */
        a->has_measured = 1;
        a->measured[NPL_MEASURED_LOCAL] = ra->local;
        a->measured[NPL_MEASURED_REMOTE] = ra->remote;
        a->measured[NPL_MEASURED_UNKNOWN] = ra->unknown;
        p->has_measured = 1;
        for (int m = 0; m < 3; m++)
            p->measured[m] += a->measured[m];
        count[i] = p->narrays; /* from here: 1 + its index in p->arrays */
    }
    for (size_t i = 0; i < nrows; i++) {
        uint64_t k = r->rows[i].key;
        uint32_t ai = k ? NPL_RAW_KEY_ARRAY(k) : 0;
        if (!k || ai >= narr || !count[ai] || r->rows[i].reads + r->rows[i].writes == 0)
            continue;
        struct npl_prof_array *a = &p->arrays[count[ai] - 1];
        uint32_t ph = NPL_RAW_KEY_PHASE(k), c = NPL_RAW_KEY_CHUNK(k), t = NPL_RAW_KEY_THREAD(k);
        if (ph >= nph || c >= a->nchunks || t >= nthreads)
            continue;
        if (ph == serial && one_time[ai] && once != NPL_RAW_NONE)
            ph = once;
        a->samples[a->nsamples++] = (struct npl_prof_sample){
            ph, c, t, r->rows[i].reads, r->rows[i].writes, r->rows[i].local, r->rows[i].remote};
        p->samples += r->rows[i].reads + r->rows[i].writes;
    }
    free(count);
    return 0;
}

/* Each thread's exposure by phase, sorted; none when the table overflowed (a part would weigh
 * some phases and not others: the whole-run exposures weigh then) */
static int phase_exposures(struct npl_profile *p, const struct npl_raw *r, uint32_t nph,
                           uint32_t nthreads)
{
    size_t n = 0;
    if (r->exposures_dropped)
        return 0;
    for (size_t k = 0; k < NPL_RAW_EXPOSURES; k++) {
        uint64_t key = r->exposures[k].key;
        n += key && ((key - 1) >> 32) < nph && ((key - 1) & 0xffffffffu) < nthreads &&
             r->exposures[k].count;
    }
    if (!n)
        return 0;
    if (!(p->phase_exposure = malloc(n * sizeof *p->phase_exposure)))
        return -1;
    for (size_t k = 0; k < NPL_RAW_EXPOSURES; k++) {
        uint64_t key = r->exposures[k].key;
        uint32_t ph = (uint32_t)((key - 1) >> 32), t = (uint32_t)((key - 1) & 0xffffffffu);
        if (key && ph < nph && t < nthreads && r->exposures[k].count)
            p->phase_exposure[p->nphase_exposure++] =
                (struct npl_prof_exposure){ph, t, (double)r->exposures[k].count / 1e9};
    }
    qsort(p->phase_exposure, p->nphase_exposure, sizeof *p->phase_exposure,
          npl__prof_exposure_cmp);
    return 0;
}

/* each thread on the node where most of its samples were taken; one with none, on the node of
 * the CPU the sampler last saw it on; else where thread 0 is */
static void thread_nodes(struct npl_profile *p, const struct npl_raw *r,
                         const struct npl_collect_info *in, uint32_t nthreads)
{
    for (uint32_t t = 0; t < nthreads; t++) {
        int best = -1;
        uint32_t most = 0;
        for (int k = 0; k < in->nnodes; k++) {
            int node = in->nodes[k];
            if (node >= 0 && node < NPL_RAW_NODES && r->thread_node[t][node] > most) {
                most = r->thread_node[t][node];
                best = node;
            }
        }
        int32_t cpu = r->thread_cpu[t] - 1;
        if (best < 0 && cpu >= 0 && in->cpu_node && cpu < in->ncpu && in->cpu_node[cpu] >= 0)
            best = in->cpu_node[cpu];
        p->thread_nodes[t] = best >= 0 ? best : t > 0 ? p->thread_nodes[0] : in->nodes[0];
    }
}

int npl__profile_from_raw(const struct npl_raw *r, const struct npl_collect_info *in,
                          struct npl_profile **out, char *err, size_t errsz)
{
    struct npl_profile *p = calloc(1, sizeof *p);
    unsigned char *one_time = NULL;
    if (!p)
        return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
    int owned = r->owner_pid != 0;
    p->program_path = strdup(owned && r->program[0] ? r->program : in->program);
    p->program_build_id = dup_or_null(owned ? r->program_build_id : in->program_build_id);
    p->nnodes = in->nnodes;
    p->nodes = malloc((size_t)(in->nnodes ? in->nnodes : 1) * sizeof *p->nodes);
    p->page_size = r->page_size ? r->page_size : in->page_size;
    p->binding = in->binding;
    p->binding_detail = dup_or_null(in->binding_detail);
    p->backend = npl__sampling_backend_of(r->backend)->id;
    p->rate = r->rate > 0 ? r->rate : in->rate;
    p->seconds = in->seconds;
    p->rw_known = r->rw_known;
    /* the threads sampled, and those that ran at least half as long as the most exposed of them
     * while pages were armed with no sample (numbered after the last sampled one, they used to
     * be left out: nothing then said they ran; a runtime's helper that ran a moment is not) */
    uint32_t nthreads = r->nthreads ? r->nthreads : 1;
    uint64_t top = 0;
    for (uint32_t t = 0; t < nthreads && t < NPL_RAW_THREADS; t++)
        top = r->exposure_ns[t] > top ? r->exposure_ns[t] : top;
    for (uint32_t t = nthreads; top && t < NPL_RAW_THREADS; t++)
        if (r->exposure_ns[t] >= top / 2)
            nthreads = t + 1;
    if (nthreads > NPL_RAW_THREADS)
        nthreads = NPL_RAW_THREADS;
    p->threads = (int)nthreads;
    p->thread_nodes = malloc(nthreads * sizeof *p->thread_nodes);
    uint32_t nph = r->nphases ? r->nphases : 1;
    if (nph > NPL_RAW_PHASES)
        nph = NPL_RAW_PHASES;
    uint32_t narr = r->narrays < NPL_RAW_ARRAYS ? r->narrays : NPL_RAW_ARRAYS;
    /* The serial stretches of a program with regions share one phase, entered again and again.
     * An array sampled there in one stretch only, or only in the first (after the first region)
     * and the last (before exit), had a one-time serial pass (an initialisation, a checksum): its
     * samples of that phase go to a phase of their own entered once, which the classifier leaves
     * out of the steady state like any one-time phase. */
    uint32_t serial = NPL_RAW_NONE, once = NPL_RAW_NONE;
    for (uint32_t i = 0; i < nph && i < r->nphases; i++)
        if (r->phases[i].kind == NPL_RAW_PHASE_SERIAL && r->phases[i].entries >= 2)
            serial = i;
    one_time = calloc(narr ? narr : 1, 1);
    if (!one_time)
        goto oom;
    for (uint32_t i = 0; serial != NPL_RAW_NONE && i < narr; i++) {
        const struct npl_raw_array *ra = &r->arrays[i];
        uint64_t n = ra->serial_stretches, last = r->phases[serial].entries;
        one_time[i] = n == 1 || (n == 2 && ra->serial_first == 1 && ra->serial_last == last);
        if (one_time[i] && once == NPL_RAW_NONE && nph < NPL_RAW_PHASES)
            once = nph++;
    }
    p->phases = calloc(nph, sizeof *p->phases);
    p->nphases = nph;
    p->arrays = calloc(narr ? narr : 1, sizeof *p->arrays);
    if (!p->program_path || !p->nodes || !p->thread_nodes || !p->phases || !p->arrays ||
        (in->binding_detail && *in->binding_detail && !p->binding_detail))
        goto oom;
    memcpy(p->nodes, in->nodes, (size_t)in->nnodes * sizeof *p->nodes);

    thread_nodes(p, r, in, nthreads);

    /* each thread's exposure: recorded when some thread ran while pages were armed */
    uint64_t exposed = 0;
    for (uint32_t t = 0; t < nthreads; t++)
        exposed |= r->exposure_ns[t];
    p->has_concurrency = exposed != 0;
    p->idle_sleep = in->idle_sleep;
    p->rounds_crowded = r->rounds_crowded;
    p->rounds_together = r->rounds_together;
    if (exposed) {
        if (!(p->thread_exposure = malloc(nthreads * sizeof *p->thread_exposure)))
            goto oom;
        for (uint32_t t = 0; t < nthreads; t++)
            p->thread_exposure[t] = (double)r->exposure_ns[t] / 1e9;
        if (phase_exposures(p, r, nph, nthreads) < 0)
            goto oom;
    }
    if (fill_phases(p, r, nph, once) < 0)
        goto oom;
    if (fill_arrays(p, r, narr, nph, nthreads, serial, once, one_time) < 0)
        goto oom;
    free(one_time);
    for (uint32_t t = 0; t < nthreads; t++)
        if (!in_nodes(in, p->thread_nodes[t]))
            p->thread_nodes[t] = in->nodes[0];
    *out = p;
    return 0;
oom:
    free(one_time);
    npl__profile_free(p);
    return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
}

/* ---- a profile applied: whose it is, which array a site is ---- */
int npl__profile_same_program(const struct npl_profile *p, const char *path, const char *build_id)
{
    if (p->program_build_id && *p->program_build_id && build_id && *build_id)
        return !strcmp(p->program_build_id, build_id);
    if (!p->program_path || !path)
        return 0;
    if (!strcmp(p->program_path, path))
        return 1;
    char a[PATH_MAX], b[PATH_MAX];
    return realpath(p->program_path, a) && realpath(path, b) && !strcmp(a, b);
}

const struct npl_prof_array *npl__profile_match(const struct npl_profile *p, uint64_t object_hash,
                                                uint64_t offset, uint64_t ordinal, int kind)
{
    const struct npl_prof_array *last = NULL;
    for (uint32_t i = 0; p && i < p->narrays; i++) {
        const struct npl_prof_array *a = &p->arrays[i];
        if (a->site.kind != kind || a->site.offset != offset ||
            npl__site_hash_object(a->site.object, a->site.build_id) != object_hash)
            continue;
        if (a->site.ordinal == ordinal)
            return a;
        if (a->site.ordinal < ordinal && (!last || a->site.ordinal > last->site.ordinal))
            last = a;
    }
    return last;
}

