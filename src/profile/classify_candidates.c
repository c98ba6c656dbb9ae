/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_candidates.c - PURE: the placements a classifier evaluates, each scored against the
 * sampled matrix through the library's own pure map (npl_plan_map): first touch, bind_all, cyclic,
 * weighted, the thread-level shapes fitted on the owners, explicit per-chunk owners (scored
 * leave-one-out) (docs/PROFILE.md §7, "The classifier"). */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9 /* weighted counts compared as equal within this */

void npl__cls_fmt_list(const int *v, int n, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o + 1 < size; i++) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        int k;
        if (j >= i + 2)
            k = snprintf(buf + o, size - o, "%s%d-%d", i ? "," : "", v[i], v[j]);
        else {
            k = snprintf(buf + o, size - o, "%s%d", i ? "," : "", v[i]);
            j = i;
        }
        o += k > 0 ? (size_t)k : 0;
        i = j;
    }
}


static void dist_clear(struct level *L)
{
    for (int i = 0; i < L->ndt; i++)
        L->dist[L->dtouch[i]] = 0;
    L->ndt = 0;
}

static void dist_add(struct level *L, int j, double v)
{
    if (L->dist[j] == 0)
        L->dtouch[L->ndt++] = j;
    L->dist[j] += v;
}

static double dist_at(const struct level *L, int j, int uniform)
{
    return uniform ? 1.0 / L->M : L->dist[j];
}

int npl__cls_chunk_dist(struct work *w, struct level *L, const struct placement *pl,
                        uint64_t chunk)
{
    dist_clear(L);
    if (pl->family == FAM_FT) {
        int t = w->in->first_touch ? w->in->first_touch[chunk] : -1;
        if (t < 0 || t >= w->in->nthreads)
            return 1;
        dist_add(L, L->tn[t], 1);
        return 0;
    }
    if (pl->family == FAM_EXPLICIT) {
        int n = pl->chunk_node[chunk];
        if (n < 0)
            return 1;
        dist_add(L, n, 1);
        return 0;
    }
    uint64_t p0 = chunk * w->cp, p1 = p0 + w->cp < w->npages ? p0 + w->cp : w->npages;
    uint64_t n = p1 - p0, k = n <= PAGES_PER_CHUNK ? n : PAGES_PER_CHUNK;
    if (n <= PAGES_PER_CHUNK) {
        if (npl_plan_map(pl->plan, NULL, w->in->bytes, w->in->page_size, p0, n, w->mapbuf) < 0)
            return npl__prof_fail(w->err, sizeof w->err, errno, "classifier: %s", npl_last_error());
    } else {
        for (uint64_t i = 0; i < k; i++)
            if (npl_plan_map(pl->plan, NULL, w->in->bytes, w->in->page_size, p0 + i * n / k, 1,
                             w->mapbuf + i) < 0)
                return npl__prof_fail(w->err, sizeof w->err, errno, "classifier: %s",
                                      npl_last_error());
    }
    for (uint64_t i = 0; i < k; i++) {
        int v = w->mapbuf[i], j;
        if (pl->thread_level)
            j = v >= 0 && v < w->in->nthreads ? L->tn[v] : -1;
        else
            j = v >= 0 && v <= L->maxid ? L->idx_of[v] : -1;
        if (j >= 0)
            dist_add(L, j, 1.0 / (double)k);
    }
    return 0;
}

/* local accesses per phase under a placement */
int npl__cls_evaluate(struct work *w, struct level *L, const struct placement *pl, double *loc)
{
    for (int p = 0; p < w->NP; p++)
        loc[p] = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        int uni = npl__cls_chunk_dist(w, L, pl, group_chunk(w, g));
        if (uni < 0)
            return -1;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            loc[phase_of(w, s)] += cnt(w, s) * dist_at(L, L->tn[s->thread], uni);
        }
    }
    return 0;
}

double npl__cls_frac_over(const struct work *w, const double *loc, const unsigned char *set)
{
    double l = 0, a = 0;
    for (int p = 0; p < w->NP; p++)
        if (!set || set[p]) {
            l += loc[p];
            a += w->acc[p];
        }
    return a > 0 ? dmin(1, l / a) : 0; /* (weighted sums: a rounding past 1) */
}

double npl__cls_phase_frac(const struct work *w, const double *loc, int p)
{
    return w->acc[p] > 0 ? dmin(1, loc[p] / w->acc[p]) : 0;
}

/* a new candidate; NULL when it is already there (dup set) or out of memory (w->err set) */
struct cand *npl__cls_add_cand(struct work *w, struct level *L, const char *policy, int family,
                             int scalable, int *dup)
{
    *dup = 0;
    for (int i = 0; i < L->ncand; i++)
        if (!strcmp(L->cands[i].policy, policy)) {
            *dup = 1;
            return NULL;
        }
    if (L->ncand == L->capcand) {
        int cap = L->capcand ? L->capcand * 2 : 32;
        struct cand *g = realloc(L->cands, (size_t)cap * sizeof *g);
        if (!g) {
            npl__cls_oom(w);
            return NULL;
        }
        L->cands = g;
        L->capcand = cap;
    }
    struct cand *c = &L->cands[L->ncand];
    memset(c, 0, sizeof *c);
    snprintf(c->policy, sizeof c->policy, "%s", policy);
    c->family = family;
    c->scalable = scalable;
    if (!(c->loc = calloc((size_t)w->NP, sizeof *c->loc))) {
        npl__cls_oom(w);
        return NULL;
    }
    L->ncand++;
    return c;
}

/* A shape: the advised string `policy`, evaluated as itself on L->topo, or (eval != NULL) as
 * `eval` on the one-node-per-thread topology, whose nodes are the block owner threads. */
int npl__cls_plan(struct work *w, const char *spec, int thread_level, const struct level *L,
                  npl_plan **plan)
{
    npl_policy *pol = NULL;
    *plan = NULL;
    if (npl_policy_parse(&pol, spec) < 0)
        return npl__prof_fail(w->err, sizeof w->err, EINVAL, "classifier: policy %s: %s", spec,
                              npl_last_error());
    int rc = npl_plan_create(plan, pol, thread_level ? w->c->tt : L->topo, 0);
    npl_policy_free(pol);
    if (rc < 0)
        return npl__prof_fail(w->err, sizeof w->err, errno, "classifier: plan %s: %s", spec,
                              npl_last_error());
    return 0;
}

int npl__cls_shape(struct work *w, struct level *L, const char *policy, const char *eval,
                   uint64_t period, int threads)
{
    npl_plan *plan = NULL;
    if (npl__cls_plan(w, eval ? eval : policy, eval != NULL, L, &plan) < 0)
        return -1;
    int dup, family = (int)npl__plan_shape(plan);
    struct cand *c = npl__cls_add_cand(w, L, policy, family, 1, &dup);
    if (!c) {
        npl_plan_free(plan);
        return dup ? 0 : -1;
    }
    c->period = period;
    c->threads = threads;
    snprintf(c->eval, sizeof c->eval, "%s", eval ? eval : "");
    struct placement pl = {family, plan, eval != NULL, NULL};
    int rc = npl__cls_evaluate(w, L, &pl, c->loc);
    npl_plan_free(plan);
    return rc;
}

/* The time windows of the set (a pthreads program's phases are windows of
 * NPL_RAW_WINDOW_SECONDS): win[p] 1 for each, else 0. 0: fewer than two. Each chunk's samples
 * of those windows (one record per window and thread) are then dealt into two folds in time
 * order, the k-th to fold t(k) of the Thue-Morse sequence (the parity of k's bits: 0 1 1 0 1 0
 * 0 1 ...), balanced and periodic at no period: both folds of a chunk hold each stretch of the
 * run alike, and two threads that alternate in it are in both. Whole windows dealt into folds
 * left one fold with more of the first half's owners of a chunk than the other when owners
 * change once, and judging each fold by the other's owner then predicted 0.42-0.48 local for
 * an exact 0.50 (guest_advice's case e). */
static int set_windows(const struct work *w, const unsigned char *set, int *win)
{
    unsigned k = 0;
    for (int p = 0; p < w->NP; p++) {
        win[p] = set[p] && w->in->nphases && (uint32_t)p < w->in->nphases &&
                 w->in->phases[p].kind == NPL_PHASE_WINDOW;
        k += (unsigned)win[p];
    }
    return k >= 2;
}

/* the share of one access of node j in a chunk whose owner is fitted on counts c (M nodes): 1
 * for the sole top node, 1/n among n tied, else 0 */
static double fitted_share(const double *c, int M, int j)
{
    double top = 0;
    int n = 0;
    for (int k = 0; k < M; k++)
        top = dmax(top, c[k]);
    if (top <= EPS)
        return 1.0 / M;
    for (int k = 0; k < M; k++)
        n += c[k] >= top - EPS;
    return c[j] >= top - EPS ? 1.0 / n : 0;
}

/* The share of one access of node j left out of its chunk's counts (v1 at the top, held by n1
 * nodes; v2 the second, n2 nodes; u the access's weight: its thread's exposure weight) */
static double left_out_share(const struct level *L, int j, double v1, int n1, double v2, int n2,
                             double u)
{
    double rest = v1 - u;
    if (L->cn[j] < v1 || n1 >= 2) /* one access of j left out: j is not the owner */
        return 0;
    if (rest <= EPS && v2 <= EPS) /* nothing left: any node */
        return 1.0 / L->M;
    if (rest > v2 + EPS) /* j stays the owner alone */
        return 1;
    return rest >= v2 - EPS ? 1.0 / (n2 + 1) : 0; /* a tie with the nodes at v2, or below them */
}

/* The samples of the chunks the set has no sample of (gown[g] -1: every sample of such a chunk
 * is outside the set), scored under the owner the map applied gives them (npl__cls_fill_map:
 * its slice's, or its nearest sampled chunk's); 1/M where no chunk has one. */
static int fill_from_neighbours(struct work *w, const struct level *L, const int *gown,
                                double *loc)
{
    uint64_t n = w->in->nchunks;
    int *own = malloc((size_t)(n ? n : 1) * sizeof *own);
    int *filled = malloc((size_t)(n ? n : 1) * sizeof *filled);
    if (!own || !filled) {
        free(own);
        free(filled);
        return npl__cls_oom(w);
    }
    for (uint64_t k = 0; k < n; k++)
        own[k] = -1;
    for (size_t g = 0; g < w->ngroups; g++)
        if (gown[g] >= 0)
            own[group_chunk(w, g)] = gown[g];
    npl__cls_fill_map(w, own, filled);
    for (size_t g = 0; g < w->ngroups; g++) {
        if (gown[g] >= 0)
            continue;
        int owner = filled[group_chunk(w, g)];
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            double share = owner < 0 ? 1.0 / L->M : L->tn[s->thread] == owner;
            loc[phase_of(w, s)] += cnt(w, s) * share;
        }
    }
    free(own);
    free(filled);
    return 0;
}

/* Explicit owners fitted on the phases of `set`: index per chunk (-1 where the set has no
 * sample) and local accesses per phase, as fitted outside the set (a chunk the set has no sample
 * of goes where npl__cls_fill_map puts it, as npl__cls_finish_explicit places it: scored 1/M
 * instead, an array of four workers' slices sampled 185 times in one time
 * window and 101 in the next looked like a change of owners, its second window predicted 0.58
 * under the first's map for an exact 1.00); inside it, held out:
 *  - where the set has two time windows or more, a sample of one fold (set_windows) is
 *    judged by the owner fitted on the other fold's samples of its chunk: a table every thread
 *    reads gets its sampled chance owner's share of the other fold (0.25 of 4 nodes), an array
 *    two threads share in turns the share of either (0.5), an owned array 1;
 *  - else (or where the other fold has no sample of the chunk) one access is left out: its own
 *    thread's weight taken from its node's count. */
int npl__cls_explicit_fit(struct work *w, struct level *L, const unsigned char *set,
                          int *chunk_node, double *loc)
{
    int M = L->M;
    int *win = malloc((size_t)w->NP * sizeof *win);
    double *fc = calloc(2 * (size_t)M, sizeof *fc);
    signed char *dealt = malloc(w->in->nsamples + 1); /* each sample's fold (by position) */
    if (!win || !fc || !dealt) {
        free(win);
        free(fc);
        free(dealt);
        return npl__cls_oom(w);
    }
    int folds = set_windows(w, set, win);
    int *gown = malloc((w->ngroups + 1) * sizeof *gown); /* each group's owner in the set, -1 */
    if (!gown) {
        free(win);
        free(fc);
        free(dealt);
        return npl__cls_oom(w);
    }
    for (uint64_t k = 0; chunk_node && k < w->in->nchunks; k++)
        chunk_node[k] = -1;
    for (int p = 0; p < w->NP; p++)
        loc[p] = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        int nl = 0;
        unsigned dealt_n = 0;
        double in_fold[2] = {0, 0};
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            int j = L->tn[s->thread], p = phase_of(w, s);
            dealt[i] = -1;
            if (!set[p])
                continue;
            if (L->cn[j] == 0)
                L->clist[nl++] = j;
            L->cn[j] += cnt(w, s);
            if (folds && win[p]) { /* in time order, the Thue-Morse parity of its rank */
                int f = __builtin_parity(dealt_n++);
                dealt[i] = (signed char)f;
                fc[f * M + j] += cnt(w, s);
                in_fold[f] += cnt(w, s);
            }
        }
        /* the top value v1 (n1 nodes hold it, the first is `first`) and the second v2 (n2) */
        double v1 = 0, v2 = 0;
        int n1 = 0, n2 = 0, first = -1;
        for (int q = 0; q < nl; q++) {
            int j = L->clist[q];
            double v = L->cn[j];
            if (v > v1) {
                v2 = v1;
                n2 = n1;
                v1 = v;
                n1 = 1;
                first = j;
            } else if (v == v1) {
                n1++;
                first = j < first ? j : first;
            } else if (v > v2) {
                v2 = v;
                n2 = 1;
            } else if (v == v2) {
                n2++;
            }
        }
        if (v2 == 0)
            n2 += M - nl; /* the nodes that never touched it */
        if (chunk_node && v1 > 0)
            chunk_node[group_chunk(w, g)] = first;
        gown[g] = v1 > 0 ? first : -1;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            int j = L->tn[s->thread], p = phase_of(w, s), f = dealt[i];
            double share;
            if (!set[p] && v1 <= 0) /* its neighbour's: filled in below */
                continue;
            if (!set[p]) /* as fitted */
                share = L->cn[j] == v1 ? 1.0 / n1 : 0;
            else if (f >= 0 && in_fold[1 - f] > 0) /* judged by the other fold's owner */
                share = fitted_share(fc + (size_t)(1 - f) * M, M, j);
            else
                share = left_out_share(L, j, v1, n1, v2, n2, sample_weight(w, s));
            loc[p] += cnt(w, s) * share;
        }
        for (int q = 0; q < nl; q++) {
            L->cn[L->clist[q]] = 0;
            fc[L->clist[q]] = fc[M + L->clist[q]] = 0;
        }
    }
    int rc = fill_from_neighbours(w, L, gown, loc);
    free(gown);
    free(win);
    free(fc);
    free(dealt);
    return rc;
}

/* Top thread of each sampled chunk over the phases set marks (-1: none), and the thread that
 * makes most of the accesses with its share. */
int npl__cls_chunk_owners(struct work *w, const unsigned char *set, int *owner, double *top_share,
                          int *top_thread)
{
    int T = w->in->nthreads;
    double *ct = calloc((size_t)T, sizeof *ct), *tot = calloc((size_t)T, sizeof *tot);
    if (!ct || !tot) {
        free(ct);
        free(tot);
        return npl__cls_oom(w);
    }
    for (size_t g = 0; g < w->ngroups; g++) {
        int best = -1;
        double bv = 0;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            if (set[phase_of(w, s)]) {
                ct[s->thread] += cnt(w, s);
                tot[s->thread] += cnt(w, s);
            }
        }
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            int t = (int)sample(w, i)->thread;
            if (ct[t] > bv || (ct[t] == bv && bv > 0 && t < best)) {
                bv = ct[t];
                best = t;
            }
        }
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++)
            ct[sample(w, i)->thread] = 0;
        owner[g] = bv > 0 ? best : -1;
    }
    int tt = 0;
    double all = 0;
    for (int t = 0; t < T; t++) {
        all += tot[t];
        if (tot[t] > tot[tt])
            tt = t;
    }
    *top_thread = tt;
    *top_share = all > 0 ? tot[tt] / all : 0;
    free(ct);
    free(tot);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}


int npl__cls_fit_shapes(struct work *w, const int *owner, struct fit *f)
{
    int T = w->in->nthreads;
    memset(f, 0, sizeof *f);
    f->tcand[f->nt++] = T;
    unsigned char *seen = calloc((size_t)T, 1);
    uint64_t *runs = malloc((w->ngroups + 1) * sizeof *runs);
    if (!seen || !runs) {
        free(seen);
        free(runs);
        return npl__cls_oom(w);
    }
    int distinct = 0, maxo = -1;
    for (size_t g = 0; g < w->ngroups; g++)
        if (owner[g] >= 0) {
            distinct += !seen[owner[g]];
            seen[owner[g]] = 1;
            maxo = owner[g] > maxo ? owner[g] : maxo;
        }
    free(seen);
    if (distinct > 0 && distinct != T)
        f->tcand[f->nt++] = distinct;
    if (maxo + 1 > 0 && maxo + 1 != T && maxo + 1 != distinct)
        f->tcand[f->nt++] = maxo + 1;
    /* periods: the runs of one owner along the array (chunks without samples skipped) */
    uint64_t nr = 0, changes = 0, start = 0, lo = UINT64_MAX, hi = 0, kc[3];
    int cur = -2, nk = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        if (owner[g] < 0)
            continue;
        uint64_t ch = group_chunk(w, g);
        lo = ch < lo ? ch : lo;
        hi = ch > hi ? ch : hi;
        if (owner[g] != cur) {
            if (cur != -2 && ++changes >= 2) /* an interior run: between two changes */
                runs[nr++] = ch - start;
            cur = owner[g];
            start = ch;
        }
    }
    if (nr > 0) {
        qsort(runs, nr, sizeof *runs, cmp_u64);
        kc[nk++] = runs[nr / 2];
        kc[nk++] = runs[0];
    }
    if (changes > 0 && hi > lo)
        kc[nk++] = (hi - lo + 1 + changes / 2) / (changes + 1);
    free(runs);
    /* a period is one only when the owners' cycle (the period times the owners) fits the array
     * twice: blocked owners whose blocks are not equal shares (CG's rows of unequal lengths)
     * otherwise fit a "period" of one block that wraps around once, at the array's end */
    uint64_t cycle_owners = distinct > 1 ? (uint64_t)distinct : 1;
    for (int i = 0; i < nk; i++) {
        uint64_t k = kc[i] * w->cp;
        int dup = 0;
        for (int j = 0; j < f->nk; j++)
            dup |= f->kc[j] == k;
        if (kc[i] > 0 && k * 2 * cycle_owners <= w->npages && !dup)
            f->kc[f->nk++] = k;
    }
    return 0;
}

/* the thread-level shapes of a fit, on level L (eval: thread-level plans for the machine) */
int npl__cls_thread_shapes(struct work *w, struct level *L, const struct fit *f, int on_machine)
{
    char pol[160], ev[160];
    const char *pin =
        on_machine && w->in->pin && !strcmp(w->in->pin, "scatter") ? ",pin=scatter" : "";
    for (int i = 0; i < f->nt; i++) {
        snprintf(pol, sizeof pol, "bind_block:threads=%d%s", f->tcand[i], pin);
        snprintf(ev, sizeof ev, "bind_block:threads=%d", f->tcand[i]);
        if (npl__cls_shape(w, L, pol, on_machine ? ev : NULL, 0, f->tcand[i]) < 0)
            return -1;
    }
    for (int k = 0; k < f->nk; k++)
        for (int i = 0; i < f->nt; i++) {
            snprintf(pol, sizeof pol, "bind_block:pages=%llu,threads=%d%s",
                     (unsigned long long)f->kc[k], f->tcand[i], pin);
            snprintf(ev, sizeof ev, "bind_block:pages=%llu,threads=%d", (unsigned long long)f->kc[k],
                     f->tcand[i]);
            if (npl__cls_shape(w, L, pol, on_machine ? ev : NULL, f->kc[k],
                               f->tcand[i]) < 0)
                return -1;
        }
    return 0;
}

/* Each thread's exposure in the fitted phases where the profile has exposures by phase (a
 * thread's time in phases this array was not used in says nothing of its readers), else over the
 * run; NULL without exposures (or out of memory: no reader is then added) */
static double *fitted_exposure(const struct work *w)
{
    const struct npl_prof_input *in = w->in;
    double *ex = in->thread_exposure ? malloc((size_t)in->nthreads * sizeof *ex) : NULL;
    if (!ex)
        return NULL;
    int by_phase = in->phase_exposure && in->nphase_exposure && in->nphases;
    for (int t = 0; t < in->nthreads; t++)
        ex[t] = by_phase ? 0 : in->thread_exposure[t];
    for (size_t i = 0; by_phase && i < in->nphase_exposure; i++) {
        const struct npl_prof_exposure *e = &in->phase_exposure[i];
        if (e->phase < (uint32_t)w->NP && w->inF[e->phase] && e->thread < (uint32_t)in->nthreads)
            ex[e->thread] += e->seconds;
    }
    return ex;
}

/* the most exposed sampled thread's exposure */
static double top_sampled(const struct work *w, const unsigned char *sampled, const double *ex)
{
    double top = 0;
    for (int t = 0; t < w->in->nthreads; t++)
        top = sampled[t] && ex[t] > top ? ex[t] : top;
    return top;
}

/* The threads that ran alongside the sampled ones: with no sample of a shared array but an
 * exposure (ex: fitted_exposure) at least half of the most exposed sampled thread's, when the
 * sampled threads are more than half of those. Fault samples name the first toucher, and a
 * thread that always reaches a shared page after another is never sampled there: in a profile
 * (243 samples) of guest_advice's table, one worker of 4 had none, and the table was spread over
 * the other 3 workers' nodes, predicted 0.33 local for an exact 0.25. Their nodes count as
 * accessing too (the spread then covers every reader). Sets on[j] for their nodes. */
static void running_alongside(const struct work *w, const unsigned char *sampled, int nsampled,
                              const double *ex, unsigned char *on)
{
    const struct npl_prof_input *in = w->in;
    double top = top_sampled(w, sampled, ex);
    if (nsampled < 2 || top <= 0)
        return;
    int running = 0, both = 0;
    for (int t = 0; t < in->nthreads; t++)
        if (ex[t] >= top / 2) {
            running++;
            both += sampled[t];
        }
    for (int t = 0; 2 * both > running && t < in->nthreads; t++)
        if (!sampled[t] && ex[t] >= top / 2 && w->tn[t] >= 0)
            on[w->tn[t]] = 1;
}

/* Threads no sample saw at all: in the fitted time windows of a read-mostly array (or its
 * OpenMP regions where idle threads slept: in->idle_sleep, else a spinning thread would look
 * busy), the threads that ran at least half as long as its most exposed sampled thread with no
 * sample of it nor of any other array (the profile's tally). Whether they read it is not known:
 * a table that every worker reads had every one of its 256 samples taken by one worker (the
 * first to reach each armed page) in a clean-clone run in the 4-node guest, and was advised
 * bind_all on its node. Their nodes count as accessing, as unseen[j] (each placement is then
 * also scored as if they read it alike: npl__cls_costs): one node only when their own node is
 * the sampled one. Returns how many. */
static int unseen_threads(const struct work *w, const unsigned char *sampled, const double *ex,
                          unsigned char *unseen)
{
    const struct npl_prof_input *in = w->in;
    double top = top_sampled(w, sampled, ex), writes = 0, all = 0;
    if (!(w->windows_only || in->idle_sleep) || !in->phase_tally || !in->phase_exposure ||
        top <= 0)
        return 0;
    for (size_t i = 0; i < in->nsamples; i++)
        if (w->inF[phase_of(w, &in->samples[i])]) {
            writes += (double)in->samples[i].writes;
            all += (double)in->samples[i].reads + (double)in->samples[i].writes;
        }
    double *seen = writes <= NPL_PROF_READ_MOSTLY * all
                       ? calloc((size_t)in->nthreads, sizeof *seen) : NULL;
    if (!seen)
        return 0; /* written, or out of memory: nothing said */
    for (size_t k = 0; k < in->nphase_tally; k++) /* every array's, in the fitted phases */
        if (in->phase_tally[k].thread < (uint32_t)in->nthreads &&
            in->phase_tally[k].phase < (uint32_t)w->NP && w->inF[in->phase_tally[k].phase])
            seen[in->phase_tally[k].thread] += in->phase_tally[k].accesses;
    int n = 0;
    for (int t = 0; t < in->nthreads; t++)
        if (!sampled[t] && ex[t] >= top / 2 && seen[t] <= 0) {
            n++;
            if (w->tn[t] >= 0)
                unseen[w->tn[t]] = 1;
        }
    free(seen);
    return n;
}

/* Node shares of the accesses over the fitted set; the accessing nodes (OS ids): those of the
 * sampled threads, of the threads that ran alongside them unsampled (running_alongside) and of
 * the threads no sample saw at all (unseen_threads). */
int npl__cls_node_shares(struct work *w, double *share, int *accessing)
{
    int M = w->c->M, n = 0, nsampled = 0;
    unsigned char *sampled = calloc((size_t)w->in->nthreads + 1, 1), *on = calloc((size_t)M, 1);
    unsigned char *unseen = calloc((size_t)M, 1);
    for (int j = 0; j < M; j++)
        share[j] = 0;
    for (size_t i = 0; i < w->in->nsamples; i++)
        if (w->inF[phase_of(w, &w->in->samples[i])]) {
            uint32_t t = w->in->samples[i].thread;
            share[w->tn[t]] += cnt(w, &w->in->samples[i]);
            if (sampled && !sampled[t] && cnt(w, &w->in->samples[i]) > 0) {
                sampled[t] = 1;
                nsampled++;
            }
        }
    double *ex = sampled && on && unseen ? fitted_exposure(w) : NULL;
    if (ex)
        running_alongside(w, sampled, nsampled, ex, on);
    w->unseen_threads = ex ? unseen_threads(w, sampled, ex, unseen) : 0;
    w->nsampled_threads = nsampled;
    free(ex);
    w->unsampled_nodes = w->unseen_nodes = 0;
    for (int j = 0; j < M; j++) {
        share[j] = w->accF > 0 ? share[j] / w->accF : 0;
        int alongside = share[j] <= 0 && on && on[j];
        int only_unseen = share[j] <= 0 && !alongside && unseen && unseen[j];
        if (share[j] > 0 || alongside || only_unseen)
            accessing[n++] = w->c->nodes[j];
        w->unsampled_nodes += alongside;
        w->unseen_nodes += only_unseen;
    }
    free(sampled);
    free(on);
    free(unseen);
    return n;
}

/* The machine's candidates. */
int npl__cls_node_candidates(struct work *w, const struct fit *f)
{
    struct npl_prof_ctx *c = w->c;
    struct level *L = &w->node;
    int M = c->M, dup;
    char pol[160], list[2048];
    struct cand *ft = npl__cls_add_cand(w, L, "first_touch", FAM_FT, 1, &dup);
    struct placement pft = {FAM_FT, NULL, 0, NULL};
    double *share = malloc((size_t)M * sizeof *share);
    int *accessing = malloc((size_t)M * sizeof *accessing), rc = -1;
    if (!ft || !share || !accessing) {
        if (!w->err[0])
            npl__cls_oom(w);
        goto out;
    }
    if (npl__cls_evaluate(w, L, &pft, ft->loc) < 0)
        goto out;
    int nacc = npl__cls_node_shares(w, share, accessing);
    /* bind_all on the (at most 4) nodes that access it most */
    unsigned char *taken = calloc((size_t)M, 1);
    if (!taken) {
        npl__cls_oom(w);
        goto out;
    }
    for (int r = 0; r < 4; r++) {
        int b = -1;
        for (int j = 0; j < M; j++)
            if (!taken[j] && (b < 0 || share[j] > share[b]))
                b = j;
        if (b < 0 || (r > 0 && share[b] == 0))
            break;
        taken[b] = 1;
        snprintf(pol, sizeof pol, "bind_all:%d", c->nodes[b]);
        if (npl__cls_shape(w, L, pol, NULL, 0, 0) < 0) {
            free(taken);
            goto out;
        }
    }
    free(taken);
    /* spreading: over every node, and over the nodes that access it */
    npl__cls_fmt_list(accessing, nacc, list, sizeof list);
    if (M > 1 && npl__cls_shape(w, L, "cyclic", NULL, 0, 0) < 0)
        goto out;
    if (nacc > 1 && nacc < M && strlen(list) < 120) {
        snprintf(pol, sizeof pol, "cyclic@%.120s", list);
        if (npl__cls_shape(w, L, pol, NULL, 0, 0) < 0)
            goto out;
    }
    /* weighted by the nodes' shares, when they differ */
    double mx = 0, mn = 1;
    for (int j = 0; j < M; j++)
        if (share[j] > 0) {
            mx = share[j] > mx ? share[j] : mx;
            mn = share[j] < mn ? share[j] : mn;
        }
    if (nacc > 1 && mx >= 1.25 * mn) {
        size_t o = (size_t)snprintf(pol, sizeof pol, "weighted:");
        int ok = 1, first = 1;
        for (int j = 0; j < M && ok; j++)
            if (share[j] > 0) {
                long wt = (long)(16.0 * share[j] / mx + 0.5);
                int k = snprintf(pol + o, sizeof pol - o, "%s%d=%ld", first ? "" : ",", c->nodes[j],
                                 wt < 1 ? 1 : wt);
                ok = k > 0 && o + (size_t)k < sizeof pol - 1;
                o += ok ? (size_t)k : 0;
                first = 0;
            }
        if (ok && npl__cls_shape(w, L, pol, NULL, 0, 0) < 0)
            goto out;
    }
    if (npl__cls_thread_shapes(w, L, f, 1) < 0)
        goto out;
    /* node-level periodic blocks */
    for (int k = 0; M > 1 && k < f->nk; k++) {
        snprintf(pol, sizeof pol, "cyclic_block:%llu", (unsigned long long)f->kc[k]);
        if (npl__cls_shape(w, L, pol, NULL, f->kc[k], 0) < 0)
            goto out;
        if (nacc > 1 && nacc < M && strlen(list) < 120) {
            snprintf(pol, sizeof pol, "cyclic_block:%llu@%.120s", (unsigned long long)f->kc[k], list);
            if (npl__cls_shape(w, L, pol, NULL, f->kc[k], 0) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    free(share);
    free(accessing);
    return rc;
}

/* The shapes fitted again on the steady state's owners: a one-time phase (a serial pass over
 * the whole array) gives chunks sampled little in the steady state another owner, which can hide
 * the period from the fit on every sample. Shapes already there are kept. */
int npl__cls_ordered_cycles(struct work *w, const int *owner, const struct fit *f)
{
    int M = w->c->M;
    double *count = NULL;
    int *order = malloc((size_t)M * sizeof *order), *node = malloc((size_t)M * sizeof *node);
    unsigned char *used = calloc((size_t)M, 1);
    int rc = -1, m = 0;
    if (!order || !node || !used)
        goto out;
    for (size_t g = 0; g < w->ngroups; g++) /* the owners' nodes */
        if (owner[g] >= 0 && !used[w->tn[owner[g]]]) {
            used[w->tn[owner[g]]] = 1;
            m++;
        }
    if (!(count = calloc((size_t)M * (size_t)(m ? m : 1), sizeof *count)))
        goto out;
    for (int k = 0; m >= 2 && k < f->nk; k++) {
        /* block b = page / K of each owned chunk: its owner's node counts for residue b mod m */
        memset(count, 0, (size_t)M * (size_t)m * sizeof *count);
        for (size_t g = 0; g < w->ngroups; g++)
            if (owner[g] >= 0)
                count[(group_chunk(w, g) * w->cp / f->kc[k]) % (uint64_t)m * (uint64_t)M +
                      (uint64_t)w->tn[owner[g]]] += 1;
        int ascending = 1, distinct = 1;
        memset(used, 0, (size_t)M);
        for (int r = 0; r < m && distinct; r++) {
            int b = -1;
            for (int j = 0; j < M; j++)
                if (count[(size_t)r * M + j] > 0 && (b < 0 || count[(size_t)r * M + j] >
                                                              count[(size_t)r * M + b]))
                    b = j;
            distinct = b >= 0 && !used[b];
            if (distinct) {
                used[b] = 1;
                order[r] = b;
                node[r] = w->c->nodes[b];
                ascending &= r == 0 || order[r] > order[r - 1];
            }
        }
        if (!distinct || ascending) /* no cycle, or one the ascending candidates have */
            continue;
        char list[160], pol[200];
        npl__cls_fmt_list(node, m, list, sizeof list);
        if (f->kc[k] == 1)
            snprintf(pol, sizeof pol, "cyclic@%s", list);
        else
            snprintf(pol, sizeof pol, "cyclic_block:%llu@%s", (unsigned long long)f->kc[k], list);
        if (strlen(list) < 120 && npl__cls_shape(w, &w->node, pol, NULL, f->kc[k], 0) < 0)
            goto out;
    }
    rc = 0;
out:
    if (rc < 0 && (!order || !node || !used || !count))
        npl__cls_oom(w);
    free(count);
    free(order);
    free(node);
    free(used);
    return rc;
}

int npl__cls_phase_owners(struct work *w, int p, int *owner)
{
    unsigned char *one = calloc((size_t)w->NP, 1);
    double top_share;
    int top_thread;
    if (!one)
        return npl__cls_oom(w);
    one[p] = 1;
    int rc = npl__cls_chunk_owners(w, one, owner, &top_share, &top_thread);
    free(one);
    return rc;
}

int npl__cls_fitted_shapes(struct work *w, const struct fit *f)
{
    char pol[64];
    if (npl__cls_thread_shapes(w, &w->node, f, 1) < 0 ||
        npl__cls_thread_shapes(w, &w->thr, f, 0) < 0)
        return -1;
    for (int k = 0; w->c->M > 1 && k < f->nk; k++) {
        snprintf(pol, sizeof pol, "cyclic_block:%llu", (unsigned long long)f->kc[k]);
        if (npl__cls_shape(w, &w->node, pol, NULL, f->kc[k], 0) < 0)
            return -1;
    }
    return 0;
}

int npl__cls_steady_shapes(struct work *w, const int *owner)
{
    struct fit f;
    return npl__cls_fit_shapes(w, owner, &f) < 0 ? -1 : npl__cls_fitted_shapes(w, &f);
}

const struct cand *npl__cls_best_of(const struct level *L, int family)
{
    const struct cand *b = NULL;
    for (int i = 0; i < L->ncand; i++) {
        const struct cand *c = &L->cands[i];
        if ((family < 0 ? c->family != FAM_FT : c->family == family) && (!b || c->frac > b->frac))
            b = c;
    }
    return b;
}

const struct cand *npl__cls_find(const struct level *L, const char *policy)
{
    for (int i = 0; i < L->ncand; i++)
        if (!strcmp(L->cands[i].policy, policy))
            return &L->cands[i];
    return NULL;
}

/* the machine's twin of a thread-level shape (same family, period and threads) */
const struct cand *npl__cls_twin(const struct level *L, const struct cand *t)
{
    for (int i = 0; t && i < L->ncand; i++)
        if (L->cands[i].family == t->family && L->cands[i].period == t->period &&
            L->cands[i].threads == t->threads)
            return &L->cands[i];
    return NULL;
}

static int cand_order(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return x->frac > y->frac ? -1 : x->frac < y->frac;
}

/* Accesses to chunks whose first toucher is known, over the phases of set. */
double npl__cls_ft_known(const struct work *w, const unsigned char *set)
{
    double k = 0;
    for (size_t i = 0; w->in->first_touch && i < w->in->nsamples; i++) {
        const struct npl_prof_sample *s = &w->in->samples[i];
        if ((!set || set[phase_of(w, s)]) && w->in->first_touch[s->chunk] >= 0)
            k += cnt(w, s);
    }
    return k;
}

void npl__cls_keep_candidates(struct work *w, struct npl_prof_advice *out)
{
    struct level *L = &w->node;
    qsort(L->cands, (size_t)L->ncand, sizeof *L->cands, cand_order);
    out->ncand = 0;
    for (int i = 0; i < L->ncand && out->ncand < NPL_PROF_MAX_CANDIDATES; i++) {
        struct npl_prof_candidate *o = &out->cand[out->ncand++];
        snprintf(o->policy, sizeof o->policy, "%s", L->cands[i].policy);
        o->local = L->cands[i].frac;
        o->scalable = L->cands[i].scalable;
    }
}
