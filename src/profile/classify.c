/* SPDX-License-Identifier: BSD-3-Clause */
/* classify.c - PURE: one array's sampled accesses -> a pattern, a policy, a confidence, a reason
 * and predicted local fractions (docs/PROFILE.md §7, "The classifier").
 *
 * The pattern is judged on threads, the policy on the machine's nodes:
 *  - the pattern (serial, blocked, cyclic(k), irregular, shared) counts an access as "own" when
 *    the chunk's owner thread makes it: it describes the program, whatever machine the profile was
 *    taken on (a profile of a one-node laptop still says "blocked");
 *  - the policy is then decided on the profile's machine: every candidate placement (first touch as
 *    observed, bind_all per node, cyclic, weighted, bind_block with the fitted thread count,
 *    bind_block / cyclic_block with the fitted period, an explicit node per chunk) is evaluated
 *    against the sampled matrix through the library's own pure map (npl_plan_map), and the rule's
 *    policy is kept only when its predicted local fraction is within max(2 points, 5%) of the best
 *    candidate's and not further below first touch's; otherwise the best candidate that holds at
 *    another input size replaces it, and the reason says so.
 * Thresholds from the anchors (profile.h): exclusivity >= 0.8 is owned (kMAF), writes <= 5% is
 * read-mostly (Carrefour), next-touch only where owners change again and again (AutoNUMA acts on
 * what repeats).
 * An explicit per-chunk map fitted on the samples looks better than it is (a chunk sampled once
 * is "owned" by whoever touched it), so it is scored leave-one-out: each sampled access is
 * predicted by the owner the other samples choose. Shapes have a few global parameters and are
 * scored on all samples.
 * Thread-level shapes (bind_block) are evaluated with the profile's own thread->node map: the
 * block owner thread of each page comes from the library's map on a helper topology of one node
 * per thread (node b = thread b), then the thread's node from the profile. `run --profile` keeps
 * that promise by putting block k on the node of thread k as it pins them (preload/apply.c
 * follows the run's --pin, a CPU list too). Only public API here: the numaplace command compiles
 * this file too. */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npl__cls_oom(struct work *w)
{
    return npl__prof_fail(w->err, sizeof w->err, ENOMEM, "out of memory");
}

__attribute__((format(printf, 3, 4))) void npl__cls_add_text(char *buf, size_t size,
                                                              const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

/* the sample factor of a confidence: sqrt(min(1, x)) by Newton's method */
double npl__cls_root01(double x)
{
    x = clamp01(x);
    double r = x > 0 ? (x + 1) / 2 : 0;
    for (int i = 0; i < 30 && r > 0; i++)
        r = (r + x / r) / 2;
    return r;
}

int npl__classify_ctx(struct npl_prof_ctx **out, const npl_topo *topo, int nthreads, char *err,
                      size_t errsz)
{
    if (!out || !topo || nthreads < 1 || nthreads > NPL_PROF_MAX_THREADS)
        return npl__prof_fail(err, errsz, EINVAL, "classifier: bad argument (threads %d)",
                              nthreads);
    *out = NULL;
    struct npl_prof_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
    c->topo = topo;
    c->T = nthreads;
    int all = npl_topo_node_count(topo, 1);
    c->maxid = npl_topo_max_node_id(topo);
    c->nodes = malloc((size_t)(all > 0 ? all : 1) * sizeof *c->nodes);
    c->idx_of = malloc((size_t)(c->maxid + 1) * sizeof *c->idx_of);
    c->ident = malloc((size_t)nthreads * sizeof *c->ident);
    if (!c->nodes || !c->idx_of || !c->ident) {
        npl__classify_ctx_free(c);
        return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
    }
    for (int t = 0; t < nthreads; t++)
        c->ident[t] = t;
    for (int i = 0; i <= c->maxid; i++)
        c->idx_of[i] = -1;
    for (int i = 0; i < all; i++) {
        int id = npl_topo_node_id(topo, i);
        struct npl_node_info ni;
        if (npl_topo_node_info(topo, id, &ni) == 0 && ni.allowed && ni.memory_bytes) {
            c->idx_of[id] = c->M;
            c->nodes[c->M++] = id;
        }
    }
    if (c->M == 0) {
        npl__classify_ctx_free(c);
        return npl__prof_fail(err, errsz, EINVAL, "classifier: the machine has no usable node");
    }
    char desc[64];
    snprintf(desc, sizeof desc, "numa:%d core:1 pu:1", nthreads);
    if (npl_topo_load_synthetic(&c->tt, desc) < 0) {
        int e = errno;
        npl__classify_ctx_free(c);
        return npl__prof_fail(err, errsz, e, "classifier: %s", npl_last_error());
    }
    *out = c;
    return 0;
}

void npl__classify_ctx_free(struct npl_prof_ctx *c)
{
    if (!c)
        return;
    free(c->nodes);
    free(c->idx_of);
    free(c->ident);
    npl_topo_destroy(c->tt);
    free(c);
}

static int by_chunk_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* chunk and phase, index */
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static int level_init(struct work *w, struct level *L, int M, const int *tn, const npl_topo *topo,
                      const int *idx_of, int maxid)
{
    L->M = M;
    L->tn = tn;
    L->topo = topo;
    L->idx_of = idx_of;
    L->maxid = maxid;
    L->dist = calloc((size_t)M, sizeof *L->dist);
    L->dtouch = malloc((size_t)M * sizeof *L->dtouch);
    L->cn = calloc((size_t)M, sizeof *L->cn);
    L->clist = malloc((size_t)M * sizeof *L->clist);
    return L->dist && L->dtouch && L->cn && L->clist ? 0 : npl__cls_oom(w);
}

static void level_free(struct level *L)
{
    free(L->dist);
    free(L->dtouch);
    free(L->cn);
    free(L->clist);
    for (int i = 0; i < L->ncand; i++)
        free(L->cands[i].loc);
    free(L->cands);
}

/* w->phase_thread: the one thread whose samples phase p holds (-1: none, -2: two threads or
 * more); w->tmulti: the phases of two threads or more */
static int phase_threads(struct work *w)
{
    const struct npl_prof_input *in = w->in;
    if (!(w->phase_thread = malloc((size_t)w->NP * sizeof *w->phase_thread)) ||
        !(w->tmulti = calloc((size_t)w->NP, 1)))
        return -1;
    for (int p = 0; p < w->NP; p++)
        w->phase_thread[p] = -1;
    for (size_t i = 0; i < in->nsamples; i++) {
        int p = phase_of(w, &in->samples[i]), t = (int)in->samples[i].thread, *o = &w->phase_thread[p];
        *o = *o == -1 || *o == t ? t : -2;
    }
    for (int p = 0; p < w->NP; p++)
        w->tmulti[p] = w->phase_thread[p] == -2;
    return 0;
}

/* The samples' weights (w->sw, or w->tw by thread; NULL: all 1): each thread's samples
 * normalised by its exposure, when the threads' exposures differ: phase by phase where the
 * profile has them, else over the whole run; where the threads took turns, by their samples of
 * every array in each phase (each weighed alike there: their CPU times say they ran, not how
 * much they did; the hidden readers' rule, which weighs a thread's rate against its CPU time,
 * does not apply) */
static int sample_weights(struct work *w)
{
    const struct npl_prof_input *in = w->in;
    const struct npl_prof_exposure *ex = in->turns ? in->turns : in->phase_exposure;
    size_t nex = in->turns ? in->nturns : in->nphase_exposure;
    if (ex && nex && (in->nphases || in->turns)) {
        if (!(w->sw = malloc((in->nsamples ? in->nsamples : 1) * sizeof *w->sw)))
            return -1;
        int k = npl__exposure_weights_by_phase(ex, nex, in->samples, in->nsamples, w->tmulti,
                                               w->sw);
        /* then the readers the first toucher hid (time windows; regions where idle threads
         * slept) */
        w->masked = k < 0 || in->turns ? 0 : npl__masked_readers(in, w->tmulti, w->sw);
        if (k < 0 || w->masked < 0)
            return -1;
        if (k == 0 && w->masked == 0) { /* every weight 1 */
            free(w->sw);
            w->sw = NULL;
        }
    } else if (in->thread_exposure) {
        if (!(w->tw = malloc((size_t)in->nthreads * sizeof *w->tw)))
            return -1;
        /* phases are indexes here only where the profile has phases (else all are phase 0) */
        if (!npl__exposure_weights(in->thread_exposure, in->nthreads, in->samples,
                                   in->nsamples, in->nphases ? w->tmulti : NULL, w->tw)) {
            free(w->tw);
            w->tw = NULL;
        }
    }
    return 0;
}

static int prepare(struct work *w)
{
    const struct npl_prof_input *in = w->in;
    struct npl_prof_ctx *c = w->c;
    w->NP = in->nphases ? (int)in->nphases : 1;
    w->tn = malloc((size_t)in->nthreads * sizeof *w->tn);
    w->acc = calloc((size_t)w->NP, sizeof *w->acc);
    w->inF = calloc((size_t)w->NP, 1);
    w->mapbuf = malloc(PAGES_PER_CHUNK * sizeof *w->mapbuf);
    uint64_t *keys = malloc((in->nsamples ? in->nsamples : 1) * 2 * sizeof *keys);
    w->order = malloc((in->nsamples ? in->nsamples : 1) * sizeof *w->order);
    w->gstart = malloc((in->nsamples + 1) * sizeof *w->gstart);
    if (!w->tn || !w->acc || !w->inF || !w->mapbuf || !keys || !w->order || !w->gstart) {
        free(keys);
        return npl__cls_oom(w);
    }
    for (int t = 0; t < in->nthreads; t++) {
        int id = in->thread_nodes[t];
        w->tn[t] = id >= 0 && id <= c->maxid ? c->idx_of[id] : -1;
        if (w->tn[t] < 0) {
            free(keys);
            return npl__prof_fail(w->err, sizeof w->err, EINVAL,
                                  "classifier: thread %d runs on node %d, not a usable node of the "
                                  "machine", t, id);
        }
    }
    for (size_t i = 0; i < in->nsamples; i++) {
        const struct npl_prof_sample *s = &in->samples[i];
        if (s->chunk >= in->nchunks || s->thread >= (uint32_t)in->nthreads ||
            (in->nphases && s->phase >= in->nphases) || s->reads > NPL_PROF_MAX_COUNT ||
            s->writes > NPL_PROF_MAX_COUNT) {
            free(keys);
            return npl__prof_fail(w->err, sizeof w->err, EINVAL,
                                  "classifier: sample %zu (chunk %u, thread %u, phase %u) is "
                                  "outside the array", i, s->chunk, s->thread, s->phase);
        }
        keys[2 * i] = (uint64_t)s->chunk << 32 | s->phase; /* a chunk's samples in time order */
        keys[2 * i + 1] = i;
    }
    if (phase_threads(w) < 0) {
        free(keys);
        return npl__cls_oom(w);
    }
    if (sample_weights(w) < 0) {
        free(keys);
        return npl__cls_oom(w);
    }
    for (size_t i = 0; i < in->nsamples; i++)
        w->acc[phase_of(w, &in->samples[i])] += cnt(w, &in->samples[i]);
    qsort(keys, in->nsamples, 2 * sizeof *keys, by_chunk_cmp);
    w->ngroups = 0;
    for (size_t i = 0; i < in->nsamples; i++) {
        w->order[i] = (size_t)keys[2 * i + 1];
        if (i == 0 || keys[2 * i] >> 32 != keys[2 * i - 2] >> 32)
            w->gstart[w->ngroups++] = i;
    }
    w->gstart[w->ngroups] = in->nsamples;
    free(keys);
    w->windows_only = in->nphases > 0; /* every sampled phase a time window: no region */
    for (int p = 0; p < w->NP; p++) {
        w->S += w->acc[p];
        w->windows_only &= (uint32_t)p >= in->nphases || in->phases[p].kind == NPL_PHASE_WINDOW ||
                           w->acc[p] <= 0;
    }
    w->npages = in->bytes / in->page_size + (in->bytes % in->page_size != 0);
    w->cp = in->chunk_bytes / in->page_size;
    if (level_init(w, &w->node, c->M, w->tn, c->topo, c->idx_of, c->maxid) < 0 ||
        level_init(w, &w->thr, in->nthreads, c->ident, c->tt, c->ident, in->nthreads - 1) < 0)
        return -1;
    return 0;
}

static void work_free(struct work *w)
{
    free(w->tn);
    free(w->acc);
    free(w->inF);
    free(w->mapbuf);
    free(w->order);
    free(w->gstart);
    free(w->tw);
    free(w->sw);
    free(w->tmulti);
    free(w->phase_thread);
    level_free(&w->node);
    level_free(&w->thr);
}

/* The fewest sampled accesses an array needs to be classified: NPL_PROF_MIN_SAMPLES, or on an
 * array of fewer than 8 chunks 8 a chunk (what 64 give an array of 8), at least 16. CG's row
 * pointers (6 pages) got 61 samples and were left to first touch: all on node 0 under serial
 * init, 0.30 local against 0.66 under their map. Under 64, a well-sampled array of the same call
 * site is still followed (npl__advice_siblings). */
double npl__cls_min_samples(const struct npl_prof_input *in)
{
    double per_chunk = 8.0 * (double)in->nchunks;
    return per_chunk >= NPL_PROF_MIN_SAMPLES ? NPL_PROF_MIN_SAMPLES
           : per_chunk < 16                 ? 16
                                            : per_chunk;
}

static int too_few(struct work *w, struct npl_prof_advice *out)
{
    struct placement pft = {FAM_FT, NULL, 0, NULL};
    double *loc = calloc((size_t)w->NP, sizeof *loc);
    if (!loc)
        return npl__cls_oom(w);
    if (npl__cls_evaluate(w, &w->node, &pft, loc) < 0) {
        free(loc);
        return -1;
    }
    double f = npl__cls_frac_over(w, loc, NULL);
    free(loc);
    out->pattern = NPL_PAT_TOO_FEW;
    npl__advice_set(out, NPL_ADVICE_FIRST_TOUCH, NULL);
    out->local_policy = out->local_run = w->S > 0 ? f : 0;
    out->local_best = out->local_policy;
    out->local_err = -1; /* too few samples to say */
    out->local_first_touch = w->S > 0 && npl__cls_ft_known(w, NULL) >= 0.5 * w->S ? f : -1;
    out->confidence = 0;
    snprintf(out->reason, sizeof out->reason,
             "too-few-samples: %.0f sampled accesses, fewer than %.0f: left to first touch", w->S,
             npl__cls_min_samples(w->in));
    return 0;
}

static int verdict_init(struct work *w, struct verdict *v)
{
    const struct npl_prof_input *in = w->in;
    int M = w->c->M;
    memset(v, 0, sizeof *v);
    v->fit = 1;
    v->steady_from = -1;
    v->steady_end = -1;
    v->owner = malloc((w->ngroups + 1) * sizeof *v->owner);
    v->xnode = malloc((size_t)in->nchunks * sizeof *v->xnode);
    v->xthr = malloc((size_t)in->nchunks * sizeof *v->xthr);
    v->xloc = calloc((size_t)w->NP, sizeof *v->xloc);
    v->tloc = calloc((size_t)w->NP, sizeof *v->tloc);
    v->share = malloc((size_t)M * sizeof *v->share);
    v->accessing = malloc((size_t)M * sizeof *v->accessing);
    if (!v->owner || !v->xnode || !v->xthr || !v->xloc || !v->tloc || !v->share || !v->accessing)
        return npl__cls_oom(w);
    return 0;
}

static void verdict_free(struct verdict *v)
{
    npl__cls_phases_free(&v->pv);
    npl__cls_phases_free(&v->tv);
    free(v->owner);
    free(v->xnode);
    free(v->xthr);
    free(v->xloc);
    free(v->tloc);
    free(v->share);
    free(v->accessing);
}

static void say_weights(const struct work *w, struct npl_prof_advice *out);

/* Shapes fitted on every sample, the machine's candidates, the phases; next-touch when owners
 * change again and again (1: chosen, out filled; 0: not; -1 failure). */
static int first_fit(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    struct level *N = &w->node, *TL = &w->thr;
    if (npl__cls_chunk_owners(w, w->inF, v->owner, &v->top_share, &v->top_thread) < 0 ||
        npl__cls_fit_shapes(w, v->owner, &v->f) < 0 || npl__cls_node_candidates(w, &v->f) < 0 ||
        npl__cls_ordered_cycles(w, v->owner, &v->f) < 0 ||
        npl__cls_thread_shapes(w, TL, &v->f, 0) < 0 || npl__cls_phases_view(w, N, &v->pv) < 0 ||
        npl__cls_phases_view(w, TL, &v->tv) < 0)
        return -1;
    if (npl__cls_explicit_fit(w, N, w->inF, v->xnode, v->xloc) < 0)
        return -1;
    double sbest = npl__cls_frac_over(w, v->xloc, NULL);
    for (int i = 0; i < N->ncand; i++)
        if (N->cands[i].family != FAM_FT)
            sbest = dmax(sbest, npl__cls_frac_over(w, N->cands[i].loc, NULL));
    int pc = npl__cls_try_phase_changing(w, &v->pv, sbest, out);
    if (pc > 0) {
        for (int i = 0; i < N->ncand; i++)
            N->cands[i].frac = npl__cls_frac_over(w, N->cands[i].loc, NULL);
        npl__cls_keep_candidates(w, out);
        if (w->in->turns)
            say_weights(w, out);
    }
    return pc;
}

/* A program without regions (its phases are time windows): a chunk the fitted stretch did not
 * sample takes its owner from the run's other windows of several threads (not a pass that one
 * thread made alone: a main thread's checkpoint, a straggler) before the nearest sampled
 * neighbour's (npl__cls_finish_explicit). On a loaded machine the workers'
 * stretch of guest_advice's case c held 43% of the run's samples, the neighbours carried the
 * chunks it missed, and the map was 0.922 local where placing by the workers gave 0.956. Not
 * where the owners changed once: there the rest's owners are the other side's (6 chunks of one
 * slice of guest_advice's case e took them). */
static int fill_from_run(struct work *w, struct verdict *v)
{
    if (!w->windows_only) /* regions: outside the steady state the owners differ */
        return 0;
    int narrower = 0;
    for (int p = 0; p < w->NP; p++)
        narrower |= !w->inF[p] && p != v->lone[0] && p != v->lone[1] && w->acc[p] > 0;
    if (v->recurring || !narrower || v->owners_changed) /* (the rest: the other owners') */
        return 0;
    unsigned char *run = malloc((size_t)w->NP);
    double *loc = malloc((size_t)w->NP * sizeof *loc);
    int *node = malloc((size_t)(w->in->nchunks ? w->in->nchunks : 1) * sizeof *node);
    int rc = run && loc && node ? 0 : npl__cls_oom(w);
    for (int p = 0; rc == 0 && p < w->NP; p++) /* windows of several threads: not a pass of one */
        run[p] = p != v->lone[0] && p != v->lone[1] && w->phase_thread[p] == -2;
    if (rc == 0)
        rc = npl__cls_explicit_fit(w, &w->node, run, node, loc);
    for (uint64_t k = 0; rc == 0 && k < w->in->nchunks; k++)
        v->xnode[k] = v->xnode[k] >= 0 ? v->xnode[k] : node[k];
    free(run);
    free(loc);
    free(node);
    return rc;
}

/* Every candidate scored on the fitted set; the explicit maps (nodes, threads); the thread
 * exclusivity, first touch, the best candidate, the accessing nodes, the write ratio, the nodes
 * that read it across its length. */
static int steady_scores(struct work *w, struct verdict *v)
{
    const struct npl_prof_input *in = w->in;
    struct level *N = &w->node, *TL = &w->thr;
    int dup;
    for (int i = 0; i < N->ncand; i++)
        N->cands[i].frac = npl__cls_frac_over(w, N->cands[i].loc, w->inF);
    if (npl__cls_explicit_fit(w, N, w->inF, v->xnode, v->xloc) < 0 || fill_from_run(w, v) < 0)
        return -1;
    if (!(v->xc = npl__cls_add_cand(w, N, npl__advice_kind_text(NPL_ADVICE_MAP), FAM_EXPLICIT, 0,
                                   &dup)))
        return -1;
    v->xc->frac = npl__cls_frac_over(w, v->xloc, w->inF);
    /* the pattern, machine-independent: a thread's own accesses */
    if (npl__cls_explicit_fit(w, TL, w->inF, v->xthr, v->tloc) < 0)
        return -1;
    for (int i = 0; i < TL->ncand; i++)
        TL->cands[i].frac = npl__cls_frac_over(w, TL->cands[i].loc, w->inF);
    v->tx = npl__cls_frac_over(w, v->tloc, w->inF);
    for (int i = 0; i < TL->ncand; i++)
        v->tx = dmax(v->tx, TL->cands[i].frac);
    const struct cand *ftc = npl__cls_find(N, "first_touch");
    v->ftf = npl__cls_ft_known(w, w->inF) >= 0.5 * w->accF ? ftc->frac : -1;
    v->bestc = npl__cls_best_of(N, -1);
    v->best = v->bestc->frac;
    v->nacc = npl__cls_node_shares(w, v->share, v->accessing);
    double reads = 0, writes = 0;
    for (size_t i = 0; i < in->nsamples; i++)
        if (w->inF[phase_of(w, &in->samples[i])]) {
            double k = sample_weight(w, &in->samples[i]);
            reads += (double)in->samples[i].reads * k;
            writes += (double)in->samples[i].writes * k;
        }
    v->wr = reads + writes > 0 ? writes / (reads + writes) : 0;
    return npl__cls_read_across(w, v);
}

/* half of Wilson's interval at two standard errors for a fraction p of n sampled accesses */
static double wilson_half(double p, double n)
{
    double z2 = 4.0; /* z = 2 */
    p = clamp01(p);
    double d = 1 + z2 / n, mid = (p + z2 / (2 * n)) / d;
    double half = 2 * npl__cls_root01(p * (1 - p) / n + z2 / (4 * n * n)) / d;
    return dmax(mid + half - p, p - (mid - half));
}

/* the raw sampled accesses of the fitted phases; *once (NULL: not asked), those of the chunks
 * sampled exactly once there */
static double fitted_accesses(const struct work *w, double *once)
{
    double n = 0, one = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        double k = 0;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++)
            if (w->inF[phase_of(w, sample(w, i))])
                k += (double)sample(w, i)->reads + (double)sample(w, i)->writes;
        n += k;
        one += k == 1;
    }
    if (once)
        *once = one;
    return n;
}

/* The uncertainty a profile reports for its chosen figure p (the decisions use chosen->err):
 * the sampling error, never 0 at p = 0 or 1 (Wilson's interval at two standard errors over the
 * raw sampled accesses of the fitted phases; and no less than chosen->err, which holds the gap
 * between the skewed and the even hypotheses), and *unseen, the share of the accesses that fell
 * in chunks no sample saw (Good-Turing: the chunks sampled exactly once over the samples), whose
 * locality under any placement is unknown: 0 to 1 of that share (unseen NULL: not asked, a
 * spread deals those chunks as the rest). */
static double reported_sampling_err(const struct work *w, const struct cand *chosen, double *unseen)
{
    double once, n = fitted_accesses(w, &once);
    if (unseen)
        *unseen = n > 0 ? once / n : 0;
    return n > 0 ? dmax(chosen->err, wilson_half(chosen->frac, n)) : chosen->err;
}

/* Shared data spread (or one reader's, spread for safety): no owner's pages to find, every
 * page's node dealt alike, the chunks no sample saw too: *spread, its prediction
 * (npl__cls_spread_prediction); -1 where the chosen placement is no spread of such data, or the
 * samples' own figure differs by more than four standard errors (readers that do follow the
 * spread's pages: a row-cyclic update of a table all threads also read). */
static int spread_figure(struct work *w, const struct verdict *v,
                         const struct npl_prof_advice *out, double *spread)
{
    const struct cand *c = v->chosen;
    *spread = -1;
    if ((c->family != FAM_CYCLIC && c->family != FAM_WEIGHTED) ||
        (out->pattern != NPL_PAT_SHARED_READ && out->pattern != NPL_PAT_SHARED_WRITTEN &&
         out->pattern != NPL_PAT_SERIAL))
        return 0;
    double n = fitted_accesses(w, NULL);
    if (npl__cls_spread_prediction(w, v, c, spread) < 0)
        return -1;
    double tol = n > 0 ? 2 * wilson_half(c->frac, n) : 1; /* four standard errors */
    if (*spread >= 0 && (*spread > c->frac + tol || *spread < c->frac - tol))
        *spread = -1;
    return 0;
}

/* Each time window's share of the program's pthread barrier rounds (wt[p]; the sampler ends
 * windows at rounds: sampler_phases.c). The windows after one a round ended in, to the next one a
 * round ends in, are one stretch of passes (the first pass, cut by the clock before any round was
 * seen, is several windows), and share its rounds by their samples (inside a pass, samples count
 * its time); rounds of windows without a sample of the array (passes too quick to be sampled)
 * go half to the stretch before them, half to the one after (which side they were, nothing
 * says: carried forward whole, five unsampled passes across guest_advice's case e's change of
 * owners all went to its second half, predicted 0.25 for an exact 0.50), none before its first
 * sample (other arrays' passes: a and d before e in one process gave e's first half 20 rounds
 * of 24, predicted 0.17), none after its last; windows after the last round weigh their seconds
 * at the run's rounds per second; the lone passes nothing. Under the fault sampler in a TCG
 * guest a pass of guest_advice's case e took 0.1 to 4.6 s (0.02 s without it), and the samples
 * gave its halves 0.08 to 0.71 of the run for half of its passes each. back: the share of
 * unsampled rounds given to the stretch before them (0.5; 0 and 1 bound the error of that
 * guess). 1: wt filled (two rounds or more); 0: weigh by samples. */
static int window_rounds(const struct work *w, const struct verdict *v, double *wt, double back)
{
    const struct npl_prof_phase *ph = w->in->phases;
    double rounds = 0, secs = 0, grounds = 0, gsecs = 0, gacc = 0, pend = 0, psecs = 0, last = 0;
    int from = 0, last_from = -1, last_to = -1;
    for (int p = 0; ph && p < w->NP; p++) {
        wt[p] = 0;
        if (p == v->lone[0] || p == v->lone[1])
            continue;
        gacc += w->acc[p];
        gsecs += ph[p].has_seconds ? ph[p].seconds : 0;
        grounds += (double)ph[p].barriers;
        if (!ph[p].barriers)
            continue;
        if (gacc <= 0) { /* rounds without a sample: half to each side; before the first, none */
            if (last_from >= 0)
                pend += grounds, psecs += gsecs;
            grounds = gsecs = 0;
            from = p + 1;
            continue;
        }
        if (pend > 0) {
            for (int q = last_from; q <= last_to; q++)
                wt[q] *= (last + back * pend) / last;
            rounds += back * pend, secs += back * psecs;
            grounds += (1 - back) * pend, gsecs += (1 - back) * psecs;
            pend = psecs = 0;
        }
        for (int q = from; q <= p; q++)
            if (q != v->lone[0] && q != v->lone[1])
                wt[q] = grounds * w->acc[q] / gacc;
        rounds += grounds;
        secs += gsecs;
        last = grounds, last_from = from, last_to = p;
        grounds = gacc = gsecs = 0;
        from = p + 1;
    }
    if (!ph || rounds < 2 || (gacc > 0 && (secs <= 0 || gsecs <= 0)))
        return 0;
    for (int q = from; gacc > 0 && q < w->NP; q++) /* after the last round */
        if (q != v->lone[0] && q != v->lone[1])
            wt[q] = gsecs * rounds / secs * w->acc[q] / gacc;
    return 1;
}

/* loc's local fraction over set: each window weighing wt[p] where given, else its samples */
static double weighed_frac(const struct work *w, const double *loc, const unsigned char *set,
                           const double *wt)
{
    double l = 0, n = 0;
    for (int p = 0; wt && p < w->NP; p++)
        if (set[p] && w->acc[p] > 0) {
            l += wt[p] * loc[p] / w->acc[p];
            n += wt[p];
        }
    return n > 0 ? l / n : npl__cls_frac_over(w, loc, set);
}

/* A program without regions (its phases are time windows, cut by the clock or at its barriers'
 * rounds, not by its structure): the stretch the placement was fitted on may leave out a part of
 * the run that is no one-time pass, e.g. the second half of an array whose owners change once,
 * which the placement serves as it serves it. Its prediction is then over the whole run but the
 * lone one-time passes (a main thread's serial initialisation or final pass): an explicit map
 * fitted on one half of such an array was predicted 0.64 and 0.88 for an exact 0.50 over the
 * run. Where the program has barriers (two rounds at least), the windows weigh the rounds they
 * held, else their samples, which count time (and the sampler's own cost); where the two differ,
 * a tenth of the difference goes into the +/-. (With regions, a region entered once before the
 * steady state is the program's own initialisation: the steady state is predicted.) Said in the
 * reason. */
static int whole_run_prediction(struct work *w, const struct verdict *v, const double *loc,
                                struct npl_prof_advice *out)
{
    if (v->recurring || !w->in->nphases || out->pattern == NPL_PAT_PHASE_CHANGING ||
        !w->windows_only)
        return 0;
    unsigned char *run = malloc((size_t)w->NP);
    double *wt = malloc((size_t)w->NP * sizeof *wt);
    if (!run || !wt) {
        free(run);
        free(wt);
        return npl__cls_oom(w);
    }
    int narrower = 0;
    for (int p = 0; p < w->NP; p++) {
        run[p] = p != v->lone[0] && p != v->lone[1]; /* the whole run but its lone passes */
        narrower |= run[p] && !w->inF[p] && w->acc[p] > 0;
    }
    for (int p = 0; !narrower && p < w->NP; p++) /* it is the stretch: the stretch's windows */
        run[p] &= w->inF[p];
    int paced = window_rounds(w, v, wt, 0.5);
    const double *by = paced ? wt : NULL; /* by rounds, else by samples */
    double f = narrower || paced ? weighed_frac(w, loc, run, by) : out->local_policy, split = 0;
    for (int back = 0; paced && back <= 1; back++) { /* unsampled rounds all on one side */
        double *alt = malloc((size_t)w->NP * sizeof *alt);
        if (!alt)
            break; /* the figure stands; only its +/- would widen */
        window_rounds(w, v, alt, back);
        double g = weighed_frac(w, loc, run, alt);
        split = dmax(split, g > f ? g - f : f - g);
        free(alt);
    }
    if (f > out->local_policy + 0.005 || f < out->local_policy - 0.005) {
        double best = dmax(f, weighed_frac(w, v->xloc, run, by)); /* over the same accesses */
        for (int i = 0; i < w->node.ncand; i++)
            best = dmax(best, weighed_frac(w, w->node.cands[i].loc, run, by));
        double by_samples = npl__cls_frac_over(w, loc, run), err = split;
        /* the rounds against the samples: unequal passes, or the sampler's own cost */
        err += NPL_PROF_PART_SHARE_ERR * (f > by_samples ? f - by_samples : by_samples - f);
        char how[160], unsampled[64] = "";
        if (split > 0.005)
            snprintf(unsampled, sizeof unsampled, "; rounds no sample saw on either side: %.2f",
                     split);
        if (paced)
            snprintf(how, sizeof how, "the barrier rounds each window held (by samples %.2f%s)",
                     by_samples, unsampled);
        else
            snprintf(how, sizeof how, "their samples");
        if (narrower) {
            for (int p = 0; p < w->NP; p++) /* the rest: the run's parts outside the stretch */
                run[p] = run[p] && !w->inF[p];
            double rest = weighed_frac(w, loc, run, by);
            err += NPL_PROF_PART_SHARE_ERR * (out->local_policy > rest ? out->local_policy - rest
                                                                       : rest - out->local_policy);
            npl__cls_add_text(out->reason, sizeof out->reason, "; predicted over the whole run "
                              "but its one-time passes %.2f (the stretch alone: %.2f, the rest "
                              "%.2f, weighed by %s: %.2f more in the +/-)", f, out->local_policy,
                              rest, how, err);
        } else {
            npl__cls_add_text(out->reason, sizeof out->reason, "; predicted %.2f, weighed by %s: "
                              "%.2f more in the +/-", f, how, err);
        }
        out->local_err = dmin(1, out->local_err + err);
        out->local_policy = f;
        out->local_best = best;
    } else if (split > 0.005) {
        npl__cls_add_text(out->reason, sizeof out->reason, "; barrier rounds no sample saw, on "
                          "either side: %.2f more in the +/-", split);
        out->local_err = dmin(1, out->local_err + split);
    }
    free(run);
    free(wt);
    return 0;
}

/* the exposure weights' range in the reason, where it matters (5%) */
static void say_weights(const struct work *w, struct npl_prof_advice *out)
{
    double lo = w->tw ? w->tw[0] : 1, hi = lo;
    for (int t = 1; w->tw && t < w->in->nthreads; t++) {
        lo = dmin(lo, w->tw[t]);
        hi = dmax(hi, w->tw[t]);
    }
    for (size_t i = 0; w->sw && i < w->in->nsamples; i++) {
        lo = dmin(lo, w->sw[i]);
        hi = dmax(hi, w->sw[i]);
    }
    if (lo >= 0.95 && hi <= 1.05)
        return;
    if (w->in->turns)
        npl__cls_add_text(out->reason, sizeof out->reason, "; the threads took turns, and their "
                          "samples weigh their turns: each thread that ran in a phase weighed "
                          "alike there (weights %.2f to %.2f)", lo, hi);
    else
        npl__cls_add_text(out->reason, sizeof out->reason, "; each thread's samples normalised "
                          "by its exposure (weights %.2f to %.2f)", lo, hi);
}

/* A map's chunks no sample reached between two nodes' chunks (npl__cls_fill_map): where the
 * array is swept whole each is used, and the nearest sampled chunk puts the boundary at the
 * gap's middle: a quarter of them on the wrong node where it lies anywhere in the gap (counted
 * remote), up to half (the +/-: 44-50% in 5 guest profiles of four workers' slices) */
static void guessed_chunks(const struct work *w, struct npl_prof_advice *out)
{
    if (w->map_guessed < 0.01)
        return;
    out->local_policy *= 1 - w->map_guessed / 4;
    out->local_run *= 1 - w->map_guessed / 4;
    out->local_err = dmin(1, out->local_err + w->map_guessed / 2);
    npl__cls_add_text(out->reason, sizeof out->reason, "; %.0f%% of its chunks, unsampled, lie "
                      "between two nodes' chunks (no equal slices fit): placed as the nearest "
                      "sampled chunk, a quarter of them counted remote, half in the +/-",
                      100 * w->map_guessed);
}

/* the chosen placement into out: its map, confidence and reason */
static int conclude(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    const struct cand *chosen = v->chosen;
    if (chosen->family == FAM_EXPLICIT && npl__cls_finish_explicit(w, out, v->xnode) < 0)
        return -1;
    out->confidence = npl__cls_root01(w->accF / (8.0 * NPL_PROF_MIN_SAMPLES)) * clamp01(v->fit);
    snprintf(out->reason, sizeof out->reason, "%s: %s; %s predicts %.2f local, first touch ",
             npl__pattern_name(out->pattern), v->facts, chosen->policy, chosen->frac);
    if (v->ftf >= 0)
        npl__cls_add_text(out->reason, sizeof out->reason, "%.2f", v->ftf);
    else
        npl__cls_add_text(out->reason, sizeof out->reason, "unknown");
    npl__cls_add_text(out->reason, sizeof out->reason, " (%.0f samples)%s", w->accF, v->guard);
    if (v->steady_from > 0 || (v->steady_end > 0 && v->steady_end < w->NP)) {
        npl__cls_add_text(out->reason, sizeof out->reason, "; fitted on the phases from %u",
                          npl__cls_phase_id(w, v->steady_from));
        if (v->steady_end > 0 && v->steady_end < w->NP)
            npl__cls_add_text(out->reason, sizeof out->reason, " to %u",
                              npl__cls_phase_id(w, v->steady_end - 1));
        else
            npl__cls_add_text(out->reason, sizeof out->reason, " on");
        npl__cls_add_text(out->reason, sizeof out->reason, ": the stretch with the most samples, "
                          "each one-time phase or change of owners a boundary (%.0f%% of the "
                          "samples outside it)", 100 * v->before / w->S);
        if (v->owners_changed)
            npl__cls_add_text(out->reason, sizeof out->reason, ", where threads own their "
                              "chunks as they do outside it: the owners changed once, and one "
                              "placement serves one side");
    }
    if (v->once_after)
        npl__cls_add_text(out->reason, sizeof out->reason, "; a phase entered once after the "
                          "steady state began left out (%.0f%% of the samples: a one-time pass)",
                          100 * v->left_out / w->S);
    /* where the threads' CPU time was weighed: windows, or regions where idle threads slept */
    const char *where = w->windows_only ? "time windows" : "parallel regions (idle threads slept)";
    if (w->masked)
        npl__cls_add_text(out->reason, sizeof out->reason, "; %d thread(s) that ran as long in its "
                          "%s but were seen far less over every array weighed up to the sampling "
                          "rate of its top reader (fault samples name the first toucher)",
                          w->masked, where);
    if (w->unsampled_nodes && v->nacc > 1)
        npl__cls_add_text(out->reason, sizeof out->reason, "; %d node(s) whose threads ran "
                          "alongside without a sample of it counted as its readers (fault samples "
                          "name the first toucher)", w->unsampled_nodes);
    if (v->even_plausible && !w->unseen_nodes) /* else said with the unseen threads below */
        npl__cls_add_text(out->reason, sizeof out->reason, "; its node shares (top %.2f) are "
                          "those of fault samples of shared data, which name the first toucher: "
                          "each placement was also scored as if every accessing node used it "
                          "alike", v->smax);
    if (v->even_plausible && !w->unseen_nodes && v->read_across >= 2 && v->best >= NPL_PROF_OWNED)
        npl__cls_add_text(out->reason, sizeof out->reason, " (%d nodes' threads read it across "
                          "its length: a dominance such samples cannot support)", v->read_across);
    say_weights(w, out);
    npl__cls_add_text(out->reason, sizeof out->reason, "%s", w->note);
    double spread;
    if (spread_figure(w, v, out, &spread) < 0)
        return -1;
    double unseen = 0, sampling = reported_sampling_err(w, chosen, spread < 0 ? &unseen : NULL);
    out->local_err = dmin(1, sampling + unseen);
    if (w->unseen_threads && w->nsampled_threads) {
        /* threads no sample saw: were they readers on other nodes, that share of the accesses
         * would not be local (where they add nodes, chosen->err holds it: the even scoring) */
        double seen = (double)w->nsampled_threads / (w->nsampled_threads + w->unseen_threads);
        out->confidence *= seen;
        if (!w->unseen_nodes)
            out->local_err = dmax(out->local_err, dmin(1, chosen->frac * (1 - seen)));
        npl__cls_add_text(out->reason, sizeof out->reason, "; %d thread(s) ran as long in its "
                          "%s with no sample of any array: whether they read it is not known "
                          "(fault samples name the first toucher)", w->unseen_threads, where);
        if (w->unseen_nodes)
            npl__cls_add_text(out->reason, sizeof out->reason, ": their %d node(s) counted "
                              "among its accessing nodes, each placement also scored as if every "
                              "accessing node used it alike", w->unseen_nodes);
        npl__cls_add_text(out->reason, sizeof out->reason, "; confidence x %.2f", seen);
    }
    const double *loc = chosen->family == FAM_EXPLICIT ? v->xloc : chosen->loc;
    if (whole_run_prediction(w, v, loc, out) < 0)
        return -1;
    if (spread >= 0 && (spread > out->local_policy + 0.005 || spread < out->local_policy - 0.005)) {
        npl__cls_add_text(out->reason, sizeof out->reason, "; predicted %.2f as each accessing "
                          "node's share of the accesses x its share of the pages (on the sampled "
                          "pages themselves: %.2f)", spread, out->local_policy);
        out->local_policy = spread;
        out->local_best = dmax(out->local_best, spread);
    }
    out->local_run = spread >= 0 ? spread : npl__cls_frac_over(w, loc, NULL);
    if (chosen->family == FAM_EXPLICIT)
        guessed_chunks(w, out);
    if (w->accF < w->S)
        npl__cls_add_text(out->reason, sizeof out->reason, "; over every sampled access (the "
                          "phases left out too) %.2f", out->local_run);
    npl__cls_add_text(out->reason, sizeof out->reason, "; predicted +/- %.2f", out->local_err);
    if (unseen >= 0.005)
        npl__cls_add_text(out->reason, sizeof out->reason, " (sampling %.2f; the accesses of "
                          "chunks no sample saw, estimated by the chunks sampled once: %.2f)",
                          sampling, unseen);
    npl__cls_keep_candidates(w, out);
    npl__cls_fallback(out);
    return 0;
}

/* The steps: the first fit (next-touch there and done), the steady state, its scores, the
 * rules, the costs (bandwidth and uncertainty), the guard, the safe spread, the even split's
 * correction, the advice written. */
static int classify(struct work *w, struct npl_prof_advice *out)
{
    struct verdict v;
    out->samples = (uint64_t)(w->S + 0.5);
    out->local_first_touch = -1;
    memset(w->inF, 1, (size_t)w->NP);
    w->accF = w->S;
    if (w->S < npl__cls_min_samples(w->in))
        return too_few(w, out);
    int rc = verdict_init(w, &v), pc = 0;
    if (rc == 0)
        rc = pc = first_fit(w, &v, out);
    if (pc == 0 && (rc = npl__cls_steady_state(w, &v)) == 0 && (rc = steady_scores(w, &v)) == 0) {
        npl__cls_rules(w, &v, out);
        if ((rc = npl__cls_costs(w, &v)) == 0) {
            npl__cls_guard(w, &v, out);
            npl__cls_safe_spread(w, &v, out);
            npl__cls_even_split_fix(w, &v, out);
            rc = conclude(w, &v, out);
        }
    }
    verdict_free(&v);
    return rc < 0 ? -1 : 0;
}

int npl__classify(struct npl_prof_ctx *c, const struct npl_prof_input *in,
                  struct npl_prof_advice *out, char *err, size_t errsz)
{
    if (!c || !in || !out)
        return npl__prof_fail(err, errsz, EINVAL, "classifier: NULL argument");
    memset(out, 0, sizeof *out);
    if (in->nthreads != c->T || !in->thread_nodes || (in->nsamples && !in->samples) ||
        in->page_size == 0 || (in->page_size & (in->page_size - 1)) || in->chunk_bytes == 0 ||
        in->chunk_bytes % in->page_size || in->bytes == 0 || in->bytes > NPL_PROF_MAX_BYTES ||
        in->nchunks > NPL_PROF_MAX_CHUNKS ||
        in->nchunks != in->bytes / in->chunk_bytes + (in->bytes % in->chunk_bytes != 0))
        return npl__prof_fail(err, errsz, EINVAL, "classifier: inconsistent array description "
                              "(threads %d for a context of %d, %llu chunks)", in->nthreads, c->T,
                              (unsigned long long)in->nchunks);
    struct work w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.in = in;
    errno = 0;
    int rc = prepare(&w);
    if (rc == 0)
        rc = classify(&w, out);
    if (rc < 0) {
        int e = errno ? errno : EINVAL;
        npl__advice_clear(out);
        npl__prof_fail(err, errsz, e, "%s", w.err[0] ? w.err : "classifier failed");
    }
    work_free(&w);
    return rc;
}

void npl__profile_input(const struct npl_profile *p, const struct npl_prof_array *a,
                        struct npl_prof_input *in)
{
    memset(in, 0, sizeof *in);
    in->bytes = a->bytes;
    in->chunk_bytes = a->chunk_bytes;
    in->page_size = p->page_size;
    in->nchunks = a->nchunks;
    in->idle_sleep = p->idle_sleep;
    in->first_touch = a->first_touch;
    in->samples = a->samples;
    in->nsamples = a->nsamples;
    in->nthreads = p->threads;
    in->thread_nodes = p->thread_nodes;
    in->rw_known = p->rw_known;
    in->fault_samples = p->backend == NPL_BACKEND_FAULT;
    in->migrate_rate = p->migrate_rate;
    in->pin = p->binding == NPL_BIND_PIN ? p->binding_detail : NULL;
    in->phases = p->phases;
    in->nphases = p->nphases;
    in->transitions = p->transitions;
    in->ntransitions = p->ntransitions;
    in->thread_exposure = p->thread_exposure;
    in->phase_exposure = p->phase_exposure;
    in->nphase_exposure = p->nphase_exposure;
}

struct npl_prof_tally *npl__profile_tally(const struct npl_profile *p, size_t *n)
{
    size_t rows = 0, k = 0;
    *n = 0;
    for (uint32_t i = 0; i < p->narrays; i++)
        rows += p->arrays[i].nsamples;
    struct npl_prof_tally *t = rows ? malloc(rows * sizeof *t) : NULL;
    if (!t)
        return NULL;
    for (uint32_t i = 0; i < p->narrays; i++)
        for (size_t j = 0; j < p->arrays[i].nsamples; j++) {
            const struct npl_prof_sample *x = &p->arrays[i].samples[j];
            t[k++] = (struct npl_prof_tally){x->phase, x->thread,
                                             (double)x->reads + (double)x->writes};
        }
    qsort(t, rows, sizeof *t, npl__prof_tally_cmp);
    for (size_t j = 0; j < rows; j++) /* one entry a (phase, thread) */
        if (*n && !npl__prof_tally_cmp(&t[*n - 1], &t[j]))
            t[*n - 1].accesses += t[j].accesses;
        else
            t[(*n)++] = t[j];
    return t;
}

int npl__advise_profile(const struct npl_profile *p, struct npl_prof_advice *const *adv,
                        const int *stored, char *err, size_t errsz)
{
    npl_topo *topo = NULL;
    struct npl_prof_ctx *ctx = NULL;
    int rc = 0;
    size_t ntally = 0;
    struct npl_prof_tally *tally = npl__profile_tally(p, &ntally);
    if (npl__profile_topo(p, &topo, err, errsz) < 0 ||
        npl__classify_ctx(&ctx, topo, p->threads, err, errsz) < 0)
        rc = -1;
    /* threads that took turns: each one's samples in a phase weigh its turns there, not its
     * accesses; its "exposure" is then its samples of every array in the phase, and the
     * weights make each thread that ran there count alike (a static schedule's share) */
    struct npl_prof_exposure *turns = NULL;
    if (tally && ntally && npl__profile_took_turns(p) &&
        (turns = malloc(ntally * sizeof *turns)) != NULL)
        for (size_t k = 0; k < ntally; k++) /* the same order: by phase, then thread */
            turns[k] = (struct npl_prof_exposure){tally[k].phase, tally[k].thread,
                                                  tally[k].accesses};
    for (uint32_t i = 0; rc == 0 && i < p->narrays; i++) {
        struct npl_prof_input in;
        char why[512];
        if (stored && stored[i])
            continue;
        npl__profile_input(p, &p->arrays[i], &in);
        in.phase_tally = tally;
        in.nphase_tally = ntally;
        in.turns = turns;
        in.nturns = turns ? ntally : 0;
        if (npl__classify(ctx, &in, adv[i], why, sizeof why) < 0)
            rc = npl__prof_fail(err, errsz, errno, "array %u: %s", i, why);
    }
    if (rc == 0)
        npl__advice_siblings(p, adv, stored);
    npl__classify_ctx_free(ctx);
    npl_topo_destroy(topo);
    free(turns);
    free(tally);
    return rc;
}
