/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_rules.c - PURE: the rules that name a pattern and a policy from the scored
 * candidates, the guard, and the even split of a static schedule (docs/PROFILE.md §7, rules). */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double npl__cls_margin(double best)
{
    double m = NPL_PROF_MARGIN_REL * best;
    return m > NPL_PROF_MARGIN_ABS ? m : NPL_PROF_MARGIN_ABS;
}

/* An explicit map (scored leave-one-out: noise does not make it win) is worth more than a shape
 * when it predicts more than NPL_PROF_EXPLICIT_GAIN above it, or at least
 * NPL_PROF_EXPLICIT_MIN_GAIN above it and half of the shape's misses fewer: a shape of 0.98
 * whose blocks are equal shares of unequal rows (CG's matrix) leaves its boundary pages on the
 * neighbour's node, and a map can only gain 0.02 there. At another size the shape is applied. */
int npl__cls_map_beats(double map, double shape)
{
    double gain = map - shape;
    return gain > NPL_PROF_EXPLICIT_GAIN ||
           (gain >= NPL_PROF_EXPLICIT_MIN_GAIN && gain >= (1 - shape) / 2);
}

/* The slice of the array's byte x when its bytes are split evenly in k (the last one past its
 * end): a static schedule's thread, an equal slice */
static uint64_t slice_of(const struct work *w, double x, uint64_t k)
{
    uint64_t s = (uint64_t)(x * (double)k / (double)w->in->bytes);
    return s < k ? s : k - 1;
}

/* Equal slices: the sampled chunks' owners, in order, form K runs (K >= 2) and each sampled
 * chunk of run r lies in slice r of the array's bytes split evenly in K (a chunk across a
 * boundary: in either slice). Each pthreads worker or static-schedule thread owns such a
 * slice, wherever its own number puts it. The owner of each run: run[r]. Returns K, else 0. */
static uint64_t equal_slices(const struct work *w, const int *owner, int *run)
{
    uint64_t n = w->in->nchunks, K = 0, r = 0;
    double cb = (double)w->in->chunk_bytes, B = (double)w->in->bytes;
    if (B <= 0 || cb <= 0)
        return 0;
    for (uint64_t k = 0; k < n; k++)
        if (owner[k] >= 0 && (K == 0 || owner[k] != run[K - 1]))
            run[K++] = owner[k];
    if (K < 2)
        return 0;
    for (uint64_t k = 0, started = 0; k < n; k++) {
        if (owner[k] < 0)
            continue;
        r += started && owner[k] != run[r];
        started = 1;
        double lo = (double)k * cb, hi = dmin((double)(k + 1) * cb, B) - 1;
        if (slice_of(w, lo, K) > r || slice_of(w, dmax(lo, hi), K) < r)
            return 0;
    }
    return K;
}

/* The owner of every chunk of an explicit map from its sampled ones (owner[k] >= 0; -1 where
 * no sample reached it) into out. A chunk no sample reached is used all the same, most likely as
 * its neighbours are (left alone, the program's first touch would put it, serial init: all on
 * one node): where the sampled owners are equal slices (equal_slices), the slice's owner; else
 * the nearest sampled chunk's, the earlier one on a tie. Four workers' slices sampled in runs of
 * 16 pages (a profile of 438 samples over 215 of 320 chunks in the 4-node guest) put up to 12
 * chunks of a slice on its neighbour's node by the nearest: 0.825-0.97 local where the map
 * predicted 1.00. Returns the chunks placed by the nearest between sampled chunks of two owners
 * (a guess), 0 where slices fit. */
uint64_t npl__cls_fill_map(const struct work *w, const int *owner, int *out)
{
    uint64_t n = w->in->nchunks, prev = UINT64_MAX, next = 0, guessed = 0;
    int *run = malloc((size_t)(n ? n : 1) * sizeof *run);
    uint64_t K = run ? equal_slices(w, owner, run) : 0; /* out of memory: the nearest */
    for (uint64_t k = 0; k < n; k++) {
        out[k] = owner[k];
        if (owner[k] >= 0) {
            prev = k;
            continue;
        }
        if (K) {
            out[k] = run[slice_of(w, ((double)k + 0.5) * (double)w->in->chunk_bytes, K)];
            continue;
        }
        if (next <= k) /* the next sampled chunk: moves forward only */
            for (next = k + 1; next < n && owner[next] < 0; next++)
                ;
        int from_prev = prev != UINT64_MAX && (next >= n || k - prev <= next - k);
        if (from_prev)
            out[k] = owner[prev];
        else if (next < n)
            out[k] = owner[next];
        guessed += prev != UINT64_MAX && next < n && owner[prev] != owner[next];
    }
    free(run);
    return guessed;
}

int npl__cls_finish_explicit(struct work *w, struct npl_prof_advice *out, const int *chunk_node)
{
    uint64_t n = w->in->nchunks;
    int *filled = malloc((size_t)(n ? n : 1) * sizeof *filled);
    out->chunk_nodes = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!out->chunk_nodes || !filled) {
        free(filled);
        return npl__cls_oom(w);
    }
    w->map_guessed = n ? (double)npl__cls_fill_map(w, chunk_node, filled) / (double)n : 0;
    for (uint64_t k = 0; k < n; k++)
        out->chunk_nodes[k] = filled[k] >= 0 ? w->c->nodes[filled[k]] : -1;
    out->nchunk_nodes = n;
    free(filled);
    return 0;
}

/* The static schedule's even split of the array's size (as the program asked for it) among T
 * threads: thread t's share is [t * B / T, (t + 1) * B / T). For chunk k: the thread whose share
 * holds most of it (*most, the lower on a tie) and the last one whose share reaches into it. */
static void even_split(const struct work *w, uint64_t k, int *most, int *last)
{
    int T = w->in->nthreads;
    double B = (double)w->in->bytes, cb = (double)w->in->chunk_bytes;
    double lo = (double)k * cb, hi = dmin((double)(k + 1) * cb, B), most_w = -1;
    int t0 = (int)slice_of(w, lo, (uint64_t)T), t1 = (int)slice_of(w, hi, (uint64_t)T);
    if (t1 > t0 && (double)t1 * B / T >= hi)
        t1--; /* the share that starts where the chunk ends does not reach into it */
    *most = t0;
    for (int t = t0; t <= t1; t++) {
        double ov = dmin(hi, (double)(t + 1) * B / T) - dmax(lo, (double)t * B / T);
        if (ov > most_w * (1 + 1e-12))
            most_w = ov, *most = t;
    }
    *last = t1;
}

/* Fault samples of an array split evenly among the threads (a static schedule) give each chunk
 * that two threads share to the later one: the sampler arms pages while the threads wait at a
 * barrier, and the next sweep touches the later thread's first elements at once, the earlier
 * thread's last ones only at its sweep's end (CG's vectors of 11.7 pages on 8 threads: sampled
 * 012230012233, their rows' byte owners 011233011233). When every sampled chunk's owner is the
 * last thread of the even split that reaches into it, and at least two such chunks are shared,
 * the map is the even split's: each chunk on the node of the thread that holds most of it.
 * owner: each chunk's top thread, or (by_node) its top node index, -1 where not sampled: a vector
 * that every thread reads but each writes its own share of (CG's p) has no top thread, but its
 * nodes' map shows the same bias (sampled 012230012233). Returns 1 and fills map (node index per
 * chunk), else 0. */
int npl__cls_even_split_map(const struct work *w, const int *owner, int by_node, int *map,
                          int *shared)
{
    int T = w->in->nthreads;
    uint64_t sampled = 0, agree = 0;
    *shared = 0;
    if (T < 2 || !w->in->bytes || !w->in->chunk_bytes ||
        w->in->nchunks * w->in->chunk_bytes < w->in->bytes)
        return 0;
    for (uint64_t k = 0; k < w->in->nchunks; k++) {
        int most, last;
        if (owner[k] < 0)
            continue;
        even_split(w, k, &most, &last);
        int is_last = owner[k] == (by_node ? w->tn[last] : last);
        sampled++;
        agree += is_last;
        *shared += most != last && is_last && w->tn[most] != w->tn[last];
    }
    if (!sampled || agree != sampled || *shared < 2)
        return 0;
    for (uint64_t k = 0; k < w->in->nchunks; k++) {
        int most, last;
        even_split(w, k, &most, &last);
        map[k] = w->tn[most];
    }
    return 1;
}

/* serial: one thread makes most of the accesses: its node */
static void rule_serial(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    char pol[64];
    snprintf(pol, sizeof pol, "bind_all:%d", w->in->thread_nodes[v->top_thread]);
    v->rule = npl__cls_find(&w->node, pol);
    out->pattern = NPL_PAT_SERIAL;
    v->fit = v->top_share;
    snprintf(v->facts, sizeof v->facts, "thread %d makes %.0f%% of the sampled accesses",
             v->top_thread, 100 * v->top_share);
}

/* owned by threads (or, where threads of one node share, by nodes): which shape */
static void rule_owned(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    struct level *N = &w->node, *TL = &w->thr;
    int by_thread = v->tx >= NPL_PROF_OWNED;
    double x = by_thread ? v->tx : v->best;
    const struct cand *blk = npl__cls_best_of(by_thread ? TL : N, FAM_BLOCK);
    const struct cand *cyc = npl__cls_best_of(by_thread ? TL : N, FAM_THREAD_CYCLIC);
    const struct cand *ncb = npl__cls_best_of(N, FAM_CYCLIC_BLOCK), *xc = v->xc;
    const char *who = by_thread ? "thread" : "node";
    if (!by_thread && ncb && (!cyc || ncb->frac > cyc->frac))
        cyc = ncb;
    int shaped = 1;
    if (blk && blk->frac >= x - npl__cls_margin(x)) {
        v->rule = by_thread ? npl__cls_twin(N, blk) : blk;
        out->pattern = NPL_PAT_BLOCKED;
        out->block_threads = blk->threads;
        v->fit = blk->frac;
        snprintf(v->facts, sizeof v->facts, "each chunk is used by the %s of its static share of "
                 "%d threads (%s exclusivity %.2f)", who, blk->threads, who, x);
    } else if (cyc && cyc->frac >= x - npl__cls_margin(x)) {
        v->rule = by_thread ? npl__cls_twin(N, cyc) : cyc;
        out->pattern = NPL_PAT_CYCLIC;
        out->period_pages = cyc->period;
        out->block_threads = cyc->threads;
        v->fit = cyc->frac;
        snprintf(v->facts, sizeof v->facts, "the owners repeat every %llu page%s over %d %s (%s "
                 "exclusivity %.2f)", (unsigned long long)cyc->period, cyc->period > 1 ? "s" : "",
                 cyc->threads ? cyc->threads : w->c->M, cyc->threads ? "threads" : "nodes", who, x);
        /* periodic by nodes too? then the node-level shape needs no thread map */
        if (ncb && v->rule && ncb->period == cyc->period && ncb->frac >= v->rule->frac - 1e-9)
            v->rule = ncb;
    } else {
        shaped = 0;
    }
    /* the shape's blocks split the array in whole pages where the owners do not (a grid's
     * ghost planes shift every thread's block; planes straddle pages): the explicit map,
     * scored leave-one-out, when it beats the shape (map_beats) */
    if (shaped && v->rule && v->rule->family != FAM_EXPLICIT &&
        npl__cls_map_beats(xc->frac, v->rule->frac)) {
        npl__cls_add_text(v->facts, sizeof v->facts, "; the explicit map predicts %.2f against "
                          "%.2f for %.60s", xc->frac, v->rule->frac, v->rule->policy);
        v->rule = xc;
    }
    if (!shaped) {
        /* no shape of its own: the explicit map, unless a shape serves it as well */
        const struct cand *sc = NULL;
        for (int i = 0; i < N->ncand; i++)
            if (N->cands[i].scalable && N->cands[i].family != FAM_FT &&
                (!sc || N->cands[i].frac > sc->frac))
                sc = &N->cands[i];
        v->rule = sc && sc->frac >= v->best - npl__cls_margin(v->best) &&
                  !npl__cls_map_beats(xc->frac, sc->frac) ? sc : xc;
        out->pattern = NPL_PAT_IRREGULAR;
        v->fit = x;
        snprintf(v->facts, sizeof v->facts, "owned (%s exclusivity %.2f) in no block or cyclic "
                 "shape", who, x);
    }
}

/* shared: spread it (replicas where the program can make them, for read-mostly data) */
static void rule_shared(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    const struct npl_prof_input *in = w->in;
    struct level *N = &w->node;
    int M = w->c->M, nacc = v->nacc;
    char pol[160], list[2048];
    npl__cls_fmt_list(v->accessing, nacc, list, sizeof list);
    if (nacc <= 1 || nacc == M || strlen(list) >= 120)
        snprintf(pol, sizeof pol, "cyclic");
    else
        snprintf(pol, sizeof pol, "cyclic@%.120s", list);
    double spread = nacc > 1 ? 1.0 / nacc : 1.0 / (M > 1 ? M : 2);
    double clarity = clamp01((NPL_PROF_OWNED - v->tx) / (NPL_PROF_OWNED - spread));
    if (in->rw_known && v->wr <= NPL_PROF_READ_MOSTLY) {
        out->pattern = NPL_PAT_SHARED_READ;
        out->replicate = 1;
        v->fit = dmin(clarity, clamp01((NPL_PROF_READ_MOSTLY - v->wr) / NPL_PROF_READ_MOSTLY + 0.5));
        snprintf(v->facts, sizeof v->facts, "shared (thread exclusivity %.2f < %.2f), writes "
                 "%.1f%% <= %.0f%%: replicate it where the program can (npl_replicate; the "
                 "interposer cannot copy a malloc'd block), else spread it", v->tx,
                 NPL_PROF_OWNED, 100 * v->wr, 100 * NPL_PROF_READ_MOSTLY);
    } else {
        out->pattern = NPL_PAT_SHARED_WRITTEN;
        v->fit = in->rw_known ? dmin(clarity, clamp01((v->wr - NPL_PROF_READ_MOSTLY) /
                                                      NPL_PROF_READ_MOSTLY + 0.5)) : clarity;
        double mx = 0, mn = 1;
        for (int j = 0; j < M; j++)
            if (v->share[j] > 0) {
                mx = dmax(mx, v->share[j]);
                mn = dmin(mn, v->share[j]);
            }
        const struct cand *wt = npl__cls_best_of(N, FAM_WEIGHTED);
        if (nacc > 1 && mx >= 1.5 * mn && wt)
            snprintf(pol, sizeof pol, "%s", wt->policy);
        if (in->rw_known)
            snprintf(v->facts, sizeof v->facts, "shared (thread exclusivity %.2f < %.2f), writes "
                     "%.0f%%: spread it for bandwidth", v->tx, NPL_PROF_OWNED, 100 * v->wr);
        else
            snprintf(v->facts, sizeof v->facts, "shared (thread exclusivity %.2f < %.2f; reads "
                     "and writes not told apart): spread it", v->tx, NPL_PROF_OWNED);
    }
    if (nacc == 1)
        npl__cls_add_text(v->facts, sizeof v->facts, " (only node %d's threads use it)",
                          v->accessing[0]);
    v->rule = npl__cls_find(N, pol);
    if (!v->rule)
        v->rule = npl__cls_best_of(N, FAM_CYCLIC);
}

void npl__cls_rules(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    if (v->top_share >= NPL_PROF_SERIAL)
        rule_serial(w, v, out);
    else if (v->tx >= NPL_PROF_OWNED || npl__cls_node_dominates(v))
        rule_owned(w, v, out);
    else
        rule_shared(w, v, out);
}

/* The guard: never far below the best candidate, nor below first touch. */
void npl__cls_guard(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    struct level *N = &w->node;
    double best = v->best, ftf = v->ftf, m = npl__cls_margin(best), top = -1, fts = -1;
    for (int i = 0; i < N->ncand; i++)
        if (N->cands[i].family != FAM_FT)
            top = dmax(top, N->cands[i].score);
        else if (ftf >= 0)
            fts = N->cands[i].score;
    const struct cand *chosen = v->rule;
    int ok = chosen && chosen->score >= top - m && (ftf < 0 || chosen->score >= fts - m);
    if (!ok) {
        const struct cand *alt = NULL;
        for (int pass = 0; pass < 2 && !alt; pass++) /* a shape first; the explicit map last */
            for (int i = 0; i < N->ncand; i++) {
                const struct cand *k = &N->cands[i];
                if ((!k->scalable && pass == 0) || k->score < top - m ||
                    (ftf >= 0 && k->score < fts - m))
                    continue;
                if (!alt || k->score > alt->score + 1e-9 ||
                    (k->score > alt->score - 1e-9 && alt->family == FAM_FT))
                    alt = k;
            }
        if (!alt)
            alt = v->bestc;
        int below_ft = ftf >= 0 && chosen && chosen->score < fts - m;
        if (!chosen)
            snprintf(v->guard, sizeof v->guard, "; one node only: nothing to spread over: %.60s",
                     alt->policy);
        else
            snprintf(v->guard, sizeof v->guard, "; %.60s would give %.2f (score %.2f: the local "
                     "fraction less its busiest node's excess load), more than %.2f below %.60s "
                     "(%.2f): %.60s instead", chosen->policy, chosen->frac, chosen->score, m,
                     below_ft ? "first touch" : "the best candidate", below_ft ? fts : top,
                     alt->policy);
        chosen = alt;
    }
    npl__advice_set(out, chosen->family == FAM_FT         ? NPL_ADVICE_FIRST_TOUCH
                         : chosen->family == FAM_EXPLICIT ? NPL_ADVICE_MAP
                                                          : NPL_ADVICE_POLICY, chosen->policy);
    out->local_policy = chosen->frac;
    out->local_best = best;
    out->local_first_touch = ftf;
    v->chosen = chosen;
}

/* Owned by threads, placed by their blocks or by a map (or shared, placed by its own map:
 * judged on nodes): the even split's byte owners where the samples are those of an even split
 * seen through the first-toucher bias. */
void npl__cls_even_split_fix(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    const struct cand *chosen = v->chosen;
    int shared_chunks = 0, owned = v->tx >= NPL_PROF_OWNED;
    if (out->pattern != NPL_PAT_SERIAL &&
        (owned ? chosen->family == FAM_EXPLICIT || chosen->family == FAM_BLOCK
               : chosen->family == FAM_EXPLICIT) &&
        npl__cls_even_split_map(w, owned ? v->xthr : v->xnode, !owned, v->xnode, &shared_chunks)) {
        npl__cls_add_text(v->guard, sizeof v->guard, "; each of the %d chunks two threads' even "
                          "shares hold was sampled %s the later thread (the first toucher after "
                          "a barrier): each chunk goes to the thread holding most of it "
                          "(predicted as %.60s)", shared_chunks,
                          owned ? "by" : "on the node of", chosen->policy);
        npl__advice_set(out, NPL_ADVICE_MAP, NULL);
        v->chosen = v->xc;
    }
}
