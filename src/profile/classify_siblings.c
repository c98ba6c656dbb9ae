/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_siblings.c - PURE: an explicit map scaled to another size, and the advice of a
 * thinly sampled array followed from the best-sampled array of its call site (docs/PROFILE.md §7, rule 6). */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advice a small sibling can follow: a blocked or cyclic shape, or, for an array owned in no
 * such shape (an explicit per-chunk map, which holds at its own size only), the best evaluated
 * shape that holds at any size; NULL if none. */
static const char *followable(const struct npl_prof_advice *b)
{
    if ((b->pattern == NPL_PAT_BLOCKED || b->pattern == NPL_PAT_CYCLIC) &&
        b->kind != NPL_ADVICE_MAP)
        return b->policy;
    if (b->pattern != NPL_PAT_IRREGULAR)
        return NULL;
    for (int i = 0; i < b->ncand; i++) /* best first */
        if (b->cand[i].scalable)
            return strcmp(b->cand[i].policy, "first_touch") ? b->cand[i].policy : NULL;
    return NULL;
}

struct overlap { int node; double w; };
static int overlap_cmp(const void *x, const void *y)
{
    const struct overlap *a = x, *b = y;
    return (a->node > b->node) - (a->node < b->node);
}

/* An array's extent for scaling: its size and its chunk's, in bytes (in chunks where a size is
 * not known). */
struct extent { double bytes, chunk; };
static struct extent extent_of(const struct npl_prof_array *a, uint64_t nchunks)
{
    if (a->bytes && a->chunk_bytes && a->bytes <= nchunks * a->chunk_bytes)
        return (struct extent){(double)a->bytes, (double)a->chunk_bytes};
    return (struct extent){(double)nchunks, 1};
}

/* An explicit per-chunk map of `from` (nfrom chunks over extent f) scaled onto n chunks over
 * extent t: each chunk takes the node that holds the most of the same relative range of the
 * program's data in `from` (the lowest node on a tie; -1 where that range is left alone). The
 * ranges are relative to the sizes the program asked for, not to whole pages: a grid of 11.4
 * pages scaled from one of 76.8 keeps where each thread's planes start. NULL: out of memory. */
static int *scaled_map(const int *from, uint64_t nfrom, struct extent f, uint64_t n,
                       struct extent t)
{
    double ratio = f.bytes / t.bytes;
    /* chunks of `from` one chunk overlaps (never more than `from` has: a chunk larger than the
     * whole array, e.g. a page of a 100-byte array, overlaps at most all of them) */
    double most = t.chunk * ratio / f.chunk + 3;
    uint64_t span = most < (double)nfrom + 2 ? (uint64_t)most : nfrom + 2;
    int *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    struct overlap *ov = malloc((size_t)span * sizeof *ov);
    if (!map || !ov) {
        free(map);
        free(ov);
        return NULL;
    }
    for (uint64_t k = 0; k < n; k++) {
        /* chunk k's data, [k * chunk, min((k + 1) * chunk, size)), in the bytes of `from` */
        double a = (double)k * t.chunk * ratio;
        double b = dmin((double)(k + 1) * t.chunk, t.bytes) * ratio;
        size_t m = 0;
        uint64_t d = (uint64_t)(a / f.chunk);
        for (; d < nfrom && (double)d * f.chunk < b && m < span; d++) {
            double lo = dmax((double)d * f.chunk, a);
            double hi = dmin(dmin((double)(d + 1) * f.chunk, f.bytes), b);
            if (from[d] >= 0 && hi > lo)
                ov[m++] = (struct overlap){from[d], hi - lo};
        }
        qsort(ov, m, sizeof *ov, overlap_cmp);
        int best = -1;
        double best_w = 0;
        for (size_t x = 0; x < m;) {
            size_t y = x;
            double w = 0;
            for (; y < m && ov[y].node == ov[x].node; y++)
                w += ov[y].w;
            if (w > best_w * (1 + 1e-12)) /* ascending nodes: the lowest wins a tie */
                best = ov[x].node, best_w = w;
            x = y;
        }
        map[k] = best;
    }
    free(ov);
    return map;
}

int *npl__scaled_map(const struct npl_prof_array *from, const int *map, uint64_t nmap,
                     uint64_t bytes, uint64_t unit, uint64_t n)
{
    struct extent t = {(double)n, 1};
    if (bytes && unit && bytes <= n * unit)
        t = (struct extent){(double)bytes, (double)unit};
    return scaled_map(map, nmap, extent_of(from, nmap), n, t);
}

int *npl__explicit_pages(const struct npl_prof_array *a, uint64_t bytes, uint64_t page)
{
    uint64_t npages = (bytes + page - 1) / page, n = a->advice.nchunk_nodes;
    if (npages != (a->bytes + page - 1) / page)
        return npl__scaled_map(a, a->advice.chunk_nodes, n, bytes, page, npages);
    int *nodes = malloc((size_t)(npages ? npages : 1) * sizeof *nodes);
    for (uint64_t i = 0; nodes && i < npages; i++) {
        uint64_t c = i * page / a->chunk_bytes;
        nodes[i] = c < n ? a->advice.chunk_nodes[c] : -1;
    }
    return nodes;
}

int npl__advice_elsewhere(const struct npl_prof_array *a, npl_policy **pol, int *scale)
{
    *pol = NULL;
    *scale = a->advice.fallback_kind == NPL_ADVICE_MAP;
    if (a->advice.fallback_kind != NPL_ADVICE_POLICY)
        return 0;
    return npl_policy_parse(pol, a->advice.fallback);
}

/* A map's fallback at another size: its best evaluated placement that holds at any size (best
 * first; first touch where that is first touch or there is none). */
void npl__cls_fallback(struct npl_prof_advice *out)
{
    out->fallback_kind = NPL_ADVICE_FIRST_TOUCH;
    out->has_fallback = 1;
    for (int i = 0; i < out->ncand; i++) {
        if (!out->cand[i].scalable)
            continue;
        if (strcmp(out->cand[i].policy, "first_touch")) {
            out->fallback_kind = NPL_ADVICE_POLICY;
            snprintf(out->fallback, sizeof out->fallback, "%s", out->cand[i].policy);
        }
        break;
    }
}

/* an array following its call site's advice drops what its own samples gave it besides the
 * map (next-touch phases, replicas): they were the small array's own guess */
static void drop_own(struct npl_prof_advice *a)
{
    free(a->next_touch);
    a->next_touch = NULL;
    a->nnext_touch = 0;
    a->replicate = 0;
}

/* array i's advice a takes the explicit map b of array `from`, scaled onto its chunks (-1:
 * out of memory, a unchanged) */
static int follow_map(const struct npl_profile *p, const struct npl_prof_advice *b, uint32_t from,
                      uint32_t i, struct npl_prof_advice *a)
{
    const struct npl_prof_array *ai = &p->arrays[i];
    int *map = npl__scaled_map(&p->arrays[from], b->chunk_nodes, b->nchunk_nodes, ai->bytes,
                               ai->chunk_bytes, ai->nchunks);
    if (!map)
        return -1;
    free(a->chunk_nodes);
    a->chunk_nodes = map;
    a->nchunk_nodes = ai->nchunks;
    a->pattern = b->pattern;
    a->local_policy = b->local_policy;
    return 0;
}

static int has_map(const struct npl_prof_advice *b)
{
    return b && b->kind == NPL_ADVICE_MAP && b->chunk_nodes && b->nchunk_nodes > 0;
}

/* An array of fewer than two chunks per thread with its own explicit map: every chunk is a
 * boundary between threads' ranges, where a fault sample names the thread that touches the
 * page first after it is armed, not the one that uses it most (the sampler arms while the
 * threads wait at a barrier: the next sweep's first planes are touched at once, the previous
 * thread's last planes only at its sweep's end). MG's 12-page grid levels got maps one page off
 * (0.81-0.84 of their own samples, 0.61-0.67 for the best static placement's map). */
static int all_boundaries(const struct npl_profile *p, const struct npl_prof_array *a,
                          const struct npl_prof_advice *x)
{
    return has_map(x) && x->pattern != NPL_PAT_TOO_FEW && p->threads > 1 &&
           a->nchunks < 2 * (uint64_t)p->threads;
}

/* The best-sampled array of array i's call site whose advice i can follow (-1: none);
 * boundaries: i is boundary-only (all_boundaries) */
static int sibling_source(const struct npl_profile *p, struct npl_prof_advice *const *adv,
                          uint32_t i, int boundaries)
{
    const struct npl_prof_site *si = &p->arrays[i].site;
    const struct npl_prof_advice *a = adv[i];
    int from = -1;
    for (uint32_t j = 0; j < p->narrays; j++) {
        const struct npl_prof_advice *b = adv[j];
        const struct npl_prof_site *sj = &p->arrays[j].site;
        if (j == i || !b || b->samples < NPL_PROF_MIN_SAMPLES ||
            (!followable(b) && !has_map(b)) || sj->kind != NPL_SITE_HEAP ||
            sj->offset != si->offset || !si->object || !sj->object ||
            strcmp(si->object, sj->object) != 0)
            continue;
        /* a boundary-only array follows a map of a sibling of >= 4 times its chunks, itself
         * not boundary-only, and sampled more */
        if (boundaries && (!has_map(b) || all_boundaries(p, &p->arrays[j], b) ||
                           p->arrays[j].nchunks < 4 * p->arrays[i].nchunks ||
                           b->samples < a->samples))
            continue;
        if (from < 0 || b->samples > adv[from]->samples)
            from = (int)j;
    }
    return from;
}

/* An array with too few samples (a coarse grid level, a small vector) allocated at the same call
 * site as a well-sampled array is most likely used the same way: it follows that array's advice,
 * said in its reason, rather than being left to first touch (under serial init: all on one
 * node). A shape that holds at any size is followed as it is. An explicit per-chunk map (owners
 * in no shape: e.g. a grid whose ghost planes shift the threads' blocks) is scaled to the small
 * array's chunks: each takes the node of the same relative range. A small array's pages hold
 * few threads' blocks each, so a shape split in whole pages misses its owners by up to a page;
 * the scaled map keeps where the big array's owners start and end. Advice marked final (stored
 * in the profile: these rules ran before it was written) is a source only, never changed. */
void npl__advice_siblings(const struct npl_profile *p, struct npl_prof_advice *const *adv,
                          const int *final)
{
    for (uint32_t i = 0; i < p->narrays; i++) {
        struct npl_prof_advice *a = final && final[i] ? NULL : adv[i];
        const struct npl_prof_site *si = &p->arrays[i].site;
        /* fewer samples than NPL_PROF_MIN_SAMPLES: a small array may be classified on its own
         * (min_samples), but a well-sampled sibling of its call site knows its use better */
        int thin = a && a->samples < NPL_PROF_MIN_SAMPLES;
        int boundaries = a && !thin && all_boundaries(p, &p->arrays[i], a);
        if (!a || (!thin && !boundaries) || si->kind != NPL_SITE_HEAP)
            continue;
        int from = sibling_source(p, adv, i, boundaries);
        if (from < 0)
            continue;
        const struct npl_prof_advice *b = adv[from];
        char site[256], policy[sizeof a->policy];
        npl__site_label(&p->arrays[from].site, site, sizeof site);
        uint64_t few = a->samples;
        if (boundaries) {
            char was[sizeof a->reason];
            snprintf(was, sizeof was, "%s", a->reason);
            if (follow_map(p, b, (uint32_t)from, i, a) < 0)
                continue;
            snprintf(a->reason, sizeof a->reason,
                     "%s (same call site): %llu chunks for %d threads, each a boundary between "
                     "threads, where a fault sample names the first toucher after a barrier, not "
                     "the main user: it follows %s (%s, %llu samples): its explicit map of %llu "
                     "chunks, scaled to %llu", npl__pattern_name(b->pattern),
                     (unsigned long long)p->arrays[i].nchunks, p->threads, site,
                     npl__pattern_name(b->pattern), (unsigned long long)b->samples,
                     (unsigned long long)b->nchunk_nodes, (unsigned long long)p->arrays[i].nchunks);
            npl__cls_add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
            continue;
        }
        /* what its own samples said, when they said more than too few (min_samples) */
        char was[sizeof a->reason] = "";
        if (a->pattern != NPL_PAT_TOO_FEW)
            snprintf(was, sizeof was, "%s", a->reason);
        if (has_map(b)) {
            if (follow_map(p, b, (uint32_t)from, i, a) == 0) {
                drop_own(a);
                npl__advice_set(a, NPL_ADVICE_MAP, NULL);
                if (!a->has_fallback || a->fallback_kind == NPL_ADVICE_FIRST_TOUCH)
                    a->fallback_kind = NPL_ADVICE_MAP; /* no shape of its own: scaled */
                a->has_fallback = 1;
                a->period_pages = 0;
                a->block_threads = 0;
                a->confidence = b->confidence / 2;
                a->local_best = b->local_best;
                snprintf(a->reason, sizeof a->reason,
                         "%s (same call site): %llu sampled accesses, fewer than %d, so it follows "
                         "%s (%s, %llu samples): its explicit map of %llu chunks, scaled to %llu",
                         npl__pattern_name(a->pattern), (unsigned long long)few,
                         NPL_PROF_MIN_SAMPLES, site, npl__pattern_name(b->pattern),
                         (unsigned long long)b->samples, (unsigned long long)b->nchunk_nodes,
                         (unsigned long long)p->arrays[i].nchunks);
                if (*was)
                    npl__cls_add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
                continue;
            }
        }
        const char *pol = followable(b);
        if (!pol)
            continue;
        drop_own(a);
        free(a->chunk_nodes);
        a->chunk_nodes = NULL;
        a->nchunk_nodes = 0;
        snprintf(policy, sizeof policy, "%s", pol);
        a->pattern = b->pattern;
        npl__advice_set(a, NPL_ADVICE_POLICY, policy);
        a->period_pages = b->period_pages;
        a->block_threads = b->block_threads;
        a->confidence = b->confidence / 2;
        a->local_policy = b->local_policy;
        a->local_best = b->local_best;
        a->local_err = b->local_err;
        snprintf(a->reason, sizeof a->reason,
                 "%s (same call site): %llu sampled accesses, fewer than %d, so it follows %s "
                 "(%s, %llu samples): %s", npl__pattern_name(a->pattern),
                 (unsigned long long)few, NPL_PROF_MIN_SAMPLES, site, npl__pattern_name(b->pattern),
                 (unsigned long long)b->samples, policy);
        if (*was)
            npl__cls_add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
    }
}
