/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_cost.c - PURE: an objective that sees bandwidth, not only locality, and how sure the
 * samples make it (docs/PROFILE.md §7, the objective).
 *
 * A placement's cost is its remote accesses plus the load it puts on one node's memory: its
 * score is its local fraction less the busiest node's share of the accesses it serves beyond the
 * busiest accessing node's own share (Carrefour, ASPLOS'13: one controller serving every thread
 * costs more than remote latency). A table every thread reads, put on one node, scores its local
 * fraction less the load of the other nodes' threads on that node; spread, it scores its local
 * fraction. An owned array placed by its owners loads each node with what its threads use: no
 * excess.
 *
 * Fault samples of data that several nodes' threads read name the thread that touched a page
 * first after it was armed, not the one that reads it most: their node shares say which nodes use
 * it, not how much (a uniformly read table was sampled 0.04 / 0.35 / 0.54 / 0.07). So for a
 * shared array whose skew is global (no per-chunk owners: the explicit map gains less than
 * NPL_PROF_CHUNK_GAIN over the top node alone) and is not a static schedule's even split, every
 * candidate is also scored as if every accessing node used it alike, and keeps the worse of the
 * two scores: a placement that pays only if the skew is real is not chosen on it; so is every
 * candidate of a read-mostly array whose accessing nodes include those of threads that ran as
 * long with no sample of any array (a table one worker took every sample of). Each figure
 * gets an uncertainty (two standard errors of a sampled fraction, or the gap between the two
 * hypotheses); when the chosen placement's score is within the uncertainties of the spread's,
 * the spread is chosen and the reason says so.
 *
 * A thread that ran less while pages were armed has fewer samples at the same rate of accesses:
 * each thread's samples are normalised by its exposure (npl__exposure_weights) before owners and
 * shares are judged. */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STD_ERRORS 2.0 /* an uncertainty is this many standard errors */

/* The share of the accesses (fitted set) that each node's memory serves under candidate c. */
static int node_load(struct work *w, const struct cand *c, const int *xnode, double *load)
{
    struct level *L = &w->node;
    npl_plan *plan = NULL;
    int M = L->M, tl = c->eval[0] != 0;
    for (int j = 0; j < M; j++)
        load[j] = 0;
    if (c->family != FAM_FT && c->family != FAM_EXPLICIT &&
        npl__cls_plan(w, tl ? c->eval : c->policy, tl, L, &plan) < 0)
        return -1;
    struct placement pl = {c->family, plan, tl, xnode};
    double all = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        double a = 0;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++)
            if (w->inF[phase_of(w, sample(w, i))])
                a += cnt(w, sample(w, i));
        if (a == 0)
            continue;
        int uni = npl__cls_chunk_dist(w, L, &pl, group_chunk(w, g));
        if (uni < 0) {
            npl_plan_free(plan);
            return -1;
        }
        for (int j = 0; j < M; j++)
            load[j] += a * (uni ? 1.0 / M : L->dist[j]);
        all += a;
    }
    npl_plan_free(plan);
    for (int j = 0; j < M; j++)
        load[j] = all > 0 ? load[j] / all : 0;
    return 0;
}

/* v->read_across: how many nodes' threads have fault samples of a read-mostly array across its
 * length: in half or more of the parts (of NPL_PROF_SPAN_BINS equal ones) that its samples fell
 * in, fitted phases. Their shares say who reached each armed page first, not who reads it most
 * (in one boot of five, the two nodes of an MPI rank that read its table alike had 84% and 16%
 * of its samples); and a node's share can reach NPL_PROF_OWNED beside readers of a part only
 * where they read a quarter of it or less (at one rate): two parts of eight. The sampler arms
 * pages in batches, so even a whole table's samples can miss a part: hence the parts sampled. */
int npl__cls_read_across(struct work *w, struct verdict *v)
{
    const struct npl_prof_input *in = w->in;
    uint64_t bins = in->nchunks < NPL_PROF_SPAN_BINS ? in->nchunks : NPL_PROF_SPAN_BINS;
    v->read_across = 0;
    if (!in->fault_samples || !in->rw_known || v->wr > NPL_PROF_READ_MOSTLY || bins < 4 ||
        v->nacc < 2)
        return 0;
    unsigned *hit = calloc((size_t)w->c->M, sizeof *hit), all = 0; /* parts, a bit each */
    if (!hit)
        return npl__cls_oom(w);
    for (size_t i = 0; i < in->nsamples; i++) {
        const struct npl_prof_sample *s = &in->samples[i];
        if (w->inF[phase_of(w, s)] && s->chunk < in->nchunks && cnt(w, s) > 0)
            hit[w->tn[s->thread]] |= 1u << (s->chunk * bins / in->nchunks);
    }
    for (int j = 0; j < w->c->M; j++)
        all |= hit[j];
    int parts = __builtin_popcount(all);
    for (int j = 0; parts >= 4 && j < w->c->M; j++)
        v->read_across += __builtin_popcount(hit[j]) * 2 >= parts;
    free(hit);
    return 0;
}

/* Is even use by the accessing nodes as likely as the sampled skew? (see the top comment) Always
 * where threads that ran as long but no sample saw add nodes: whether they read it, the samples
 * cannot tell, nor, then, whether one node's threads dominate; and where two nodes' threads or
 * more read a read-mostly array across its length in fault samples, whatever their shares (a
 * dominance that such samples cannot support). */
static int even_plausible(struct work *w, struct verdict *v)
{
    if (w->unseen_nodes && v->nacc >= 2)
        return 1;
    int shared = v->top_share < NPL_PROF_SERIAL && v->tx < NPL_PROF_OWNED &&
                 !npl__cls_node_dominates(v);
    if (!shared || v->nacc < 2 || v->xc->frac - v->smax >= NPL_PROF_CHUNK_GAIN)
        return 0;
    int *map = malloc((size_t)(w->in->nchunks ? w->in->nchunks : 1) * sizeof *map), split = 0;
    if (!map)
        return npl__cls_oom(w);
    int even = npl__cls_even_split_map(w, v->xnode, 1, map, &split);
    free(map);
    return !even;
}

int npl__cls_costs(struct work *w, struct verdict *v)
{
    struct level *N = &w->node;
    int M = N->M;
    double n = w->accF > 1 ? w->accF : 1;
    v->smax = 0;
    for (int j = 0; j < M; j++)
        v->smax = dmax(v->smax, v->share[j]);
    int even = even_plausible(w, v);
    if (even < 0)
        return -1;
    v->even_plausible = even;
    double *load = malloc((size_t)M * sizeof *load);
    if (!load)
        return npl__cls_oom(w);
    for (int i = 0; i < N->ncand; i++) {
        struct cand *c = &N->cands[i];
        if (node_load(w, c, v->xnode, load) < 0) {
            free(load);
            return -1;
        }
        double busiest = 0, on_accessing = 0;
        for (int j = 0; j < M; j++)
            busiest = dmax(busiest, load[j]);
        for (int a = 0; a < v->nacc; a++) /* a node counted accessing unsampled too */
            on_accessing += load[w->c->idx_of[v->accessing[a]]];
        c->busiest = busiest;
        c->score = c->frac - dmax(0, busiest - v->smax);
        c->err = STD_ERRORS * npl__cls_root01(c->frac * (1 - c->frac) / n);
        if (even) {
            double local = on_accessing / v->nacc;
            c->score = dmin(c->score, local - dmax(0, busiest - 1.0 / v->nacc));
            c->err = dmax(c->err, dmax(c->frac - local, local - c->frac));
        }
    }
    free(load);
    return 0;
}

/* A spread's prediction for shared data: each accessing node's share of the accesses times the
 * share of the array's pages the spread puts there (up to SPREAD_PROBES chunks, evenly spaced).
 * Over pages dealt node by node, a reader of many pages is local on its node's share of them,
 * whichever pages it reads; scored on the samples' own pages instead, a table every worker read
 * was predicted 0.20-0.28 for an exact 0.25 in 40 guest profiles (one outside +/-0.05: which
 * pages 250 samples fell on). *pred: -1 without accesses. */
#define SPREAD_PROBES 4096
int npl__cls_spread_prediction(struct work *w, const struct verdict *v, const struct cand *c,
                               double *pred)
{
    struct level *L = &w->node;
    npl_plan *plan = NULL;
    *pred = -1;
    if (npl__cls_plan(w, c->policy, 0, L, &plan) < 0) /* planned before: out of memory */
        return -1;
    double *pages = calloc((size_t)L->M, sizeof *pages), all = 0, shares = 0, local = 0;
    if (!pages) {
        npl_plan_free(plan);
        return npl__cls_oom(w);
    }
    struct placement pl = {c->family, plan, 0, NULL};
    uint64_t n = w->in->nchunks, probes = n < SPREAD_PROBES ? n : SPREAD_PROBES;
    for (uint64_t i = 0; i < probes; i++) {
        uint64_t k = probes == n ? i : i * n / probes;
        int uni = npl__cls_chunk_dist(w, L, &pl, k);
        if (uni < 0) {
            free(pages);
            npl_plan_free(plan);
            return -1;
        }
        for (int j = 0; j < L->M; j++)
            pages[j] += uni ? 1.0 / L->M : L->dist[j];
        all += 1;
    }
    for (int j = 0; j < L->M; j++) {
        shares += v->share[j];
        local += v->share[j] * (all > 0 ? pages[j] / all : 0);
    }
    *pred = shares > 0 ? clamp01(local / shares) : -1;
    free(pages);
    npl_plan_free(plan);
    return 0;
}

/* the spread over the accessing nodes (cyclic, or cyclic@nodes), NULL if not a candidate */
static const struct cand *spread_of(struct work *w, const struct verdict *v)
{
    char pol[160], list[2048];
    npl__cls_fmt_list(v->accessing, v->nacc, list, sizeof list);
    if (v->nacc <= 1 || v->nacc == w->c->M || strlen(list) >= 120)
        snprintf(pol, sizeof pol, "cyclic");
    else
        snprintf(pol, sizeof pol, "cyclic@%.120s", list);
    return npl__cls_find(&w->node, pol);
}

void npl__cls_safe_spread(struct work *w, struct verdict *v, struct npl_prof_advice *out)
{
    const struct cand *c = v->chosen, *sp = spread_of(w, v);
    if (!sp || c == sp || c->family == FAM_CYCLIC || v->nacc < 2 ||
        c->score - sp->score > c->err + sp->err)
        return;
    npl__cls_add_text(v->guard, sizeof v->guard, "; the samples cannot tell %.60s (%.2f, load "
                      "%.2f on the busiest node, +/- %.2f) from %.60s (%.2f, load %.2f, +/- %.2f):"
                      " %.60s, the safe spread", c->policy, c->frac, c->busiest, c->err,
                      sp->policy, sp->frac, sp->busiest, sp->err, sp->policy);
    v->chosen = sp;
    npl__advice_set(out, NPL_ADVICE_POLICY, sp->policy);
    out->local_policy = sp->frac;
}

int npl__exposure_weights(const double *exposure, int nthreads,
                          const struct npl_prof_sample *samples, size_t nsamples,
                          const unsigned char *phase_weighed, double *weight)
{
    double mean = 0, raw = 0, weighted = 0;
    int n = 0, differ = 0;
    for (int t = 0; t < nthreads; t++) {
        weight[t] = 1;
        if (exposure && exposure[t] > 0) {
            mean += exposure[t];
            n++;
        }
    }
    if (n < 2)
        return 0;
    mean /= n;
    for (int t = 0; t < nthreads; t++)
        if (exposure[t] > 0)
            weight[t] = dmax(1 / NPL_PROF_EXPOSURE_CAP, dmin(NPL_PROF_EXPOSURE_CAP,
                                                           mean / exposure[t]));
    for (size_t i = 0; i < nsamples; i++) {
        if (phase_weighed && !phase_weighed[samples[i].phase])
            continue; /* a phase one thread had alone keeps its counts */
        double a = (double)samples[i].reads + (double)samples[i].writes;
        raw += a;
        weighted += a * weight[samples[i].thread];
    }
    for (int t = 0; t < nthreads; t++) {
        weight[t] = weighted > 0 ? weight[t] * raw / weighted : 1;
        differ |= weight[t] < 1 - 1e-9 || weight[t] > 1 + 1e-9;
    }
    if (!differ)
        for (int t = 0; t < nthreads; t++)
            weight[t] = 1;
    return differ;
}

/* sample indexes in (phase, thread) order */
struct by_pt {
    const struct npl_prof_sample *s;
    size_t i;
};
static int by_pt_cmp(const void *x, const void *y)
{
    const struct by_pt *a = x, *b = y;
    if (a->s->phase != b->s->phase)
        return a->s->phase < b->s->phase ? -1 : 1;
    if (a->s->thread != b->s->thread)
        return a->s->thread < b->s->thread ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* one phase's samples, o[lo..hi) (sorted by thread): their weights */
static int weigh_phase(const struct npl_prof_exposure *ex, size_t nex, const struct by_pt *o,
                       size_t lo, size_t hi, double *weight)
{
    double mean = 0, raw = 0, weighted = 0;
    int nthreads = 0, differ = 0;
    for (size_t i = lo; i < hi; i++) /* every sampled thread's exposure, or no weighing */
        if (i == lo || o[i].s->thread != o[i - 1].s->thread) {
            struct npl_prof_exposure key = {o[i].s->phase, o[i].s->thread, 0};
            const struct npl_prof_exposure *e =
                bsearch(&key, ex, nex, sizeof *ex, npl__prof_exposure_cmp);
            if (!e || !(e->seconds > 0))
                return 0;
            mean += e->seconds;
            nthreads++;
        }
    if (nthreads < 2)
        return 0;
    mean /= nthreads;
    const struct npl_prof_exposure *e = NULL;
    for (size_t i = lo; i < hi; i++) {
        if (i == lo || o[i].s->thread != o[i - 1].s->thread) {
            struct npl_prof_exposure key = {o[i].s->phase, o[i].s->thread, 0};
            e = bsearch(&key, ex, nex, sizeof *ex, npl__prof_exposure_cmp);
        }
        double a = (double)o[i].s->reads + (double)o[i].s->writes;
        weight[o[i].i] = dmax(1 / NPL_PROF_EXPOSURE_CAP, dmin(NPL_PROF_EXPOSURE_CAP,
                                                              mean / e->seconds));
        raw += a;
        weighted += a * weight[o[i].i];
    }
    for (size_t i = lo; i < hi; i++) {
        weight[o[i].i] = weighted > 0 ? weight[o[i].i] * raw / weighted : 1;
        differ |= weight[o[i].i] < 1 - 1e-9 || weight[o[i].i] > 1 + 1e-9;
    }
    return differ;
}

int npl__exposure_weights_by_phase(const struct npl_prof_exposure *exposure, size_t nexposure,
                                   const struct npl_prof_sample *samples, size_t nsamples,
                                   const unsigned char *phase_weighed, double *weight)
{
    for (size_t i = 0; i < nsamples; i++)
        weight[i] = 1;
    if (!exposure || !nexposure || !nsamples)
        return 0;
    struct by_pt *o = malloc(nsamples * sizeof *o);
    struct npl_prof_exposure *ex = malloc(nexposure * sizeof *ex);
    if (!o || !ex) {
        free(o);
        free(ex);
        return -1;
    }
    memcpy(ex, exposure, nexposure * sizeof *ex);
    qsort(ex, nexposure, sizeof *ex, npl__prof_exposure_cmp);
    for (size_t i = 0; i < nsamples; i++)
        o[i] = (struct by_pt){&samples[i], i};
    qsort(o, nsamples, sizeof *o, by_pt_cmp);
    int differ = 0;
    for (size_t lo = 0, hi; lo < nsamples; lo = hi) {
        for (hi = lo + 1; hi < nsamples && o[hi].s->phase == o[lo].s->phase; hi++)
            ;
        if (!phase_weighed || phase_weighed[o[lo].s->phase])
            differ |= weigh_phase(ex, nexposure, o, lo, hi, weight);
    }
    free(o);
    free(ex);
    return differ;
}

/* thread t's exposure and every array's sampled accesses in phase p (0: none recorded) */
static void seen_in(const struct npl_prof_input *in, uint32_t p, uint32_t t, double *exposure,
                    double *accesses)
{
    struct npl_prof_exposure ek = {p, t, 0};
    struct npl_prof_tally tk = {p, t, 0};
    const struct npl_prof_exposure *e = bsearch(&ek, in->phase_exposure, in->nphase_exposure,
                                                sizeof ek, npl__prof_exposure_cmp);
    const struct npl_prof_tally *k =
        bsearch(&tk, in->phase_tally, in->nphase_tally, sizeof tk, npl__prof_tally_cmp);
    *exposure = e ? e->seconds : 0;
    *accesses = k ? k->accesses : 0;
}

/* one window's samples o[lo..hi) (sorted by thread): its hidden readers boosted; how many */
static int boost_window(const struct npl_prof_input *in, const struct by_pt *o, size_t lo,
                        size_t hi, double *weight)
{
    double top = 0, writes = 0, all = 0, before = 0, after = 0, e0, a0;
    uint32_t t0 = o[lo].s->thread, ph = o[lo].s->phase;
    for (size_t i = lo, j; i < hi; i = j) { /* the top thread by weighted accesses */
        double acc = 0;
        for (j = i; j < hi && o[j].s->thread == o[i].s->thread; j++) {
            double a = (double)o[j].s->reads + (double)o[j].s->writes;
            acc += a * weight[o[j].i];
            writes += (double)o[j].s->writes;
            all += a;
        }
        before += acc;
        if (acc > top) {
            top = acc;
            t0 = o[i].s->thread;
        }
    }
    seen_in(in, ph, t0, &e0, &a0);
    if (writes > NPL_PROF_READ_MOSTLY * all || !(e0 > 0) || !(a0 > 0))
        return 0;
    int boosted = 0;
    for (size_t i = lo, j; i < hi; i = j) {
        uint32_t t = o[i].s->thread;
        double e, a, m = 1;
        for (j = i; j < hi && o[j].s->thread == t; j++)
            ;
        seen_in(in, ph, t, &e, &a);
        if (t != t0 && e >= e0 / 2 && a > 0 && a / e * NPL_PROF_MASKED < a0 / e0) {
            m = dmin(NPL_PROF_EXPOSURE_CAP, (a0 / e0) / (a / e));
            boosted++;
        }
        for (size_t k = i; k < j; k++) {
            weight[o[k].i] *= m;
            after += ((double)o[k].s->reads + (double)o[k].s->writes) * weight[o[k].i];
        }
    }
    for (size_t k = lo; boosted && after > 0 && k < hi; k++)
        weight[o[k].i] *= before / after;
    return boosted;
}

int npl__masked_readers(const struct npl_prof_input *in, const unsigned char *phase_weighed,
                        double *weight)
{
    if (!in->phase_exposure || !in->phase_tally || !in->nphases || !in->nsamples)
        return 0;
    struct by_pt *o = malloc(in->nsamples * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = 0; i < in->nsamples; i++)
        o[i] = (struct by_pt){&in->samples[i], i};
    qsort(o, in->nsamples, sizeof *o, by_pt_cmp);
    int boosted = 0;
    for (size_t lo = 0, hi; lo < in->nsamples; lo = hi) {
        uint32_t ph = o[lo].s->phase;
        for (hi = lo + 1; hi < in->nsamples && o[hi].s->phase == ph; hi++)
            ;
        if (ph < in->nphases && (in->phases[ph].kind == NPL_PHASE_WINDOW || in->idle_sleep) &&
            (!phase_weighed || phase_weighed[ph]))
            boosted += boost_window(in, o, lo, hi, weight);
    }
    free(o);
    return boosted;
}

int npl__profile_took_turns(const struct npl_profile *p)
{
    return p->has_concurrency && p->rounds_crowded >= NPL_PROF_CROWDED_MIN &&
           2 * p->rounds_together < p->rounds_crowded;
}

int npl__profile_run_warning(const struct npl_profile *p, char *buf, size_t size)
{
    if (npl__profile_took_turns(p)) {
        snprintf(buf, size, "the threads did not run together: in %llu of %llu sampler rounds in "
                 "which two threads or more ran, they took turns on fewer CPUs (an "
                 "oversubscribed machine or a guest's virtual CPUs): their samples weigh their "
                 "turns, not their accesses, and each thread that ran in a phase was weighed "
                 "alike there",
                 (unsigned long long)(p->rounds_crowded - p->rounds_together),
                 (unsigned long long)p->rounds_crowded);
        return 1;
    }
    /* the exposures of the sampled threads but the main thread (it runs the serial parts and
     * may wait in a join meanwhile): beyond the weights' cap, not corrected */
    double lo = 0, hi = 0;
    int tlo = -1, thi = -1;
    for (int t = 1; p->thread_exposure && t < p->threads; t++) {
        int sampled = 0;
        for (uint32_t i = 0; i < p->narrays && !sampled; i++)
            for (size_t k = 0; k < p->arrays[i].nsamples && !sampled; k++)
                sampled = p->arrays[i].samples[k].thread == (uint32_t)t;
        if (!sampled)
            continue;
        double e = p->thread_exposure[t];
        if (tlo < 0 || e < lo) {
            lo = e;
            tlo = t;
        }
        if (thi < 0 || e > hi) {
            hi = e;
            thi = t;
        }
    }
    if (tlo >= 0 && hi > NPL_PROF_EXPOSURE_CAP * lo) {
        snprintf(buf, size, "the threads did not run together: thread %d ran %.3g s while pages "
                 "were armed, thread %d %.3g s, more than %.0fx apart: the samples cannot be "
                 "normalised that far", thi, hi, tlo, lo, NPL_PROF_EXPOSURE_CAP);
        return 1;
    }
    return 0;
}
