/* SPDX-License-Identifier: BSD-3-Clause */
/* classify_phases.c - PURE: which phases change owners, next-touch when they change again and
 * again, and the steady state a single placement is fitted on (docs/PROFILE.md §7, phases). */
#define _GNU_SOURCE
#include "profile/classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which significant phases show no owners, only a skew: several nodes (threads) use it (none
 * makes NPL_PROF_SERIAL of its accesses) and no placement, the phase's own explicit map
 * included, beats its top node's share by NPL_PROF_CHUNK_GAIN. Fault samples of data that
 * several threads use name the thread that touched a page first after it was armed
 * (classify_cost.c): one time window's skew towards a node is whoever ran then, and two such
 * windows skewed towards two nodes are no change of owners (a gather every worker makes was
 * cut at such windows, and one node's "steady state" put it on that node: 0.52 predicted,
 * 0.25 exact). */
static int skew_only_phases(struct work *w, const struct level *L, struct phase_view *v)
{
    /* one pass over the samples: each significant phase's accesses per node (sh[i * M + j]) */
    double *sh = calloc((size_t)v->ns * (size_t)L->M + 1, sizeof *sh);
    int *slot = malloc((size_t)w->NP * sizeof *slot); /* phase -> its index in v->sig, or -1 */
    if (!sh || !slot) {
        free(sh);
        free(slot);
        return npl__cls_oom(w);
    }
    for (int p = 0; p < w->NP; p++)
        slot[p] = -1;
    for (int i = 0; i < v->ns; i++)
        slot[v->sig[i]] = i;
    for (size_t k = 0; k < w->in->nsamples; k++) {
        int i = slot[phase_of(w, &w->in->samples[k])];
        if (i >= 0)
            sh[(size_t)i * L->M + L->tn[w->in->samples[k].thread]] += cnt(w, &w->in->samples[k]);
    }
    for (int i = 0; i < v->ns; i++) {
        int p = v->sig[i];
        double top = 0;
        for (int j = 0; j < L->M; j++)
            top = dmax(top, w->acc[p] > 0 ? sh[(size_t)i * L->M + j] / w->acc[p] : 0);
        v->skew_only[i] = top < NPL_PROF_SERIAL && v->best[i] < top + NPL_PROF_CHUNK_GAIN;
    }
    free(sh);
    free(slot);
    return 0;
}

/* The shapes fitted on each significant phase's own owners, where there are two phases or more
 * (on every sample together, halves in one phase and alternate pages in another fit neither's
 * period) */
static int phase_shapes(struct work *w, const struct phase_view *v)
{
    if (v->ns < 2)
        return 0;
    int *owner = malloc((w->ngroups + 1) * sizeof *owner);
    if (!owner)
        return npl__cls_oom(w);
    for (int i = 0; i < v->ns; i++) {
        struct fit f;
        if (npl__cls_phase_owners(w, v->sig[i], owner) < 0 ||
            npl__cls_fit_shapes(w, owner, &f) < 0 || npl__cls_fitted_shapes(w, &f) < 0 ||
            npl__cls_ordered_cycles(w, owner, &f) < 0) {
            free(owner);
            return -1;
        }
    }
    free(owner);
    return 0;
}

int npl__cls_phases_view(struct work *w, struct level *L, struct phase_view *v)
{
    if (w->NP < 2)
        return 0;
    int *cand = malloc((size_t)w->NP * sizeof *cand), nc = 0;
    unsigned char *one = calloc((size_t)w->NP, 1);
    if (!cand || !one) {
        free(cand);
        free(one);
        return npl__cls_oom(w);
    }
    for (int p = 0; p < w->NP; p++)
        if (w->acc[p] >= NPL_PROF_PHASE_MIN && w->acc[p] >= NPL_PROF_PHASE_SHARE * w->S)
            cand[nc++] = p;
    while (nc > MAX_SIG_PHASES) { /* keep the largest */
        int s = 0;
        for (int i = 1; i < nc; i++)
            if (w->acc[cand[i]] < w->acc[cand[s]])
                s = i;
        memmove(cand + s, cand + s + 1, (size_t)(nc - s - 1) * sizeof *cand);
        nc--;
    }
    v->ns = nc;
    memcpy(v->sig, cand, (size_t)nc * sizeof *cand);
    free(cand);
    if (L == &w->node && phase_shapes(w, v) < 0) {
        free(one);
        return -1;
    }
    for (int i = 0; i < v->ns; i++) {
        int p = v->sig[i];
        if (!(v->eloc[i] = calloc((size_t)w->NP, sizeof(double)))) {
            free(one);
            return npl__cls_oom(w);
        }
        memset(one, 0, (size_t)w->NP);
        one[p] = 1;
        if (npl__cls_explicit_fit(w, L, one, NULL, v->eloc[i]) < 0) {
            free(one);
            return -1;
        }
        double b = npl__cls_phase_frac(w, v->eloc[i], p);
        for (int c = 0; c < L->ncand; c++)
            if (L->cands[c].family != FAM_FT && npl__cls_phase_frac(w, L->cands[c].loc, p) > b)
                b = npl__cls_phase_frac(w, L->cands[c].loc, p);
        v->best[i] = b;
    }
    free(one);
    if (skew_only_phases(w, L, v) < 0)
        return -1;
    /* two phases change owners when no one placement serves both within NPL_PROF_PHASE_SERVE,
     * and one of them has owners at all */
    for (int i = 0; i < v->ns; i++)
        for (int j = 0; j < v->ns; j++) {
            int p = v->sig[i], q = v->sig[j], served = i == j;
            for (int c = 0; c < L->ncand && !served; c++)
                served = L->cands[c].family != FAM_FT &&
                         npl__cls_phase_frac(w, L->cands[c].loc, p) >= v->best[i] - NPL_PROF_PHASE_SERVE &&
                         npl__cls_phase_frac(w, L->cands[c].loc, q) >= v->best[j] - NPL_PROF_PHASE_SERVE;
            for (int e = 0; e < v->ns && !served; e++)
                served = (e == i || e == j) &&
                         npl__cls_phase_frac(w, v->eloc[e], p) >= v->best[i] - NPL_PROF_PHASE_SERVE &&
                         npl__cls_phase_frac(w, v->eloc[e], q) >= v->best[j] - NPL_PROF_PHASE_SERVE;
            v->change[i][j] = !served && !(v->skew_only[i] && v->skew_only[j]);
        }
    return 0;
}

void npl__cls_phases_free(struct phase_view *v)
{
    for (int i = 0; i < v->ns; i++)
        free(v->eloc[i]);
}

/* How often significant phase i is followed by j: the profile's transitions; without them,
 * consecutive phases (once), which alternate (both ways, "again and again") when both are entered
 * more than once. */
uint64_t npl__cls_edge_count(const struct work *w, const struct phase_view *v, int i, int j)
{
    const struct npl_prof_input *in = w->in;
    uint64_t n = 0;
    if (in->ntransitions) {
        for (uint32_t t = 0; t < in->ntransitions; t++)
            if ((int)in->transitions[t].from == v->sig[i] && (int)in->transitions[t].to == v->sig[j])
                n += in->transitions[t].count;
        return n;
    }
    uint64_t ei = in->phases ? in->phases[v->sig[i]].entries : 1;
    uint64_t ej = in->phases ? in->phases[v->sig[j]].entries : 1;
    if (j == i + 1)
        return ei >= 2 && ej >= 2 ? 2 : 1;
    return j == i - 1 && ei >= 2 && ej >= 2 ? 2 : 0; /* back again */
}

uint32_t npl__cls_phase_id(const struct work *w, int p)
{
    return w->in->phases ? w->in->phases[p].id : (uint32_t)p;
}

/* Pages next-touch moves when phase q follows phase p: the share of the chunks sampled in both
 * whose top node differs, of the array's pages. -1: out of memory. */
static double moved_pages(struct work *w, int p, int q)
{
    int M = w->c->M;
    double *np = calloc((size_t)M, sizeof *np), *nq = calloc((size_t)M, sizeof *nq);
    uint64_t both = 0, differ = 0;
    if (!np || !nq) {
        free(np);
        free(nq);
        return npl__cls_oom(w);
    }
    for (size_t g = 0; g < w->ngroups; g++) {
        int tp = -1, tq = -1;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            int ph = phase_of(w, s), j = w->tn[s->thread];
            if (ph == p && (np[j] += cnt(w, s)) > (tp < 0 ? 0 : np[tp]))
                tp = j;
            if (ph == q && (nq[j] += cnt(w, s)) > (tq < 0 ? 0 : nq[tq]))
                tq = j;
        }
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++)
            np[w->tn[sample(w, i)->thread]] = nq[w->tn[sample(w, i)->thread]] = 0;
        both += tp >= 0 && tq >= 0;
        differ += tp >= 0 && tq >= 0 && tp != tq;
    }
    free(np);
    free(nq);
    return both ? (double)differ / (double)both * (double)w->npages : 0;
}

/* Phase p's recorded seconds (the input's phase_seconds, else the phase's own); < 0: none */
static double phase_secs(const struct npl_prof_input *in, int p)
{
    if (in->phase_seconds)
        return in->phase_seconds[p];
    return in->phases && in->phases[p].has_seconds ? in->phases[p].seconds : -1;
}

/* Does next-touch pay? The pages it moves at each change of owners (moved_pages, times the
 * changes) at the machine's migration rate, against the time its gain in locality saves:
 * gain x the phases' seconds x NPL_PROF_REMOTE_PENALTY. Without the phases' durations (profiles
 * written before they were recorded) only the gain rule decides. 1 pays, 0 not, -1 out of
 * memory; why: the figures. */
static int next_touch_pays(struct work *w, const struct phase_view *pv, double gain, char *why,
                           size_t size)
{
    const struct npl_prof_input *in = w->in;
    double rate = in->migrate_rate > 0 ? in->migrate_rate : NPL_PROF_MIGRATE_RATE;
    int known = 0;
    for (int p = 0; p < w->NP && !known; p++)
        known = phase_secs(in, p) >= 0;
    if (!known) {
        snprintf(why, size, "; the phases' durations are not recorded: the cost of moving pages "
                 "was not weighed");
        return 1;
    }
    double secs = 0, moved = 0;
    for (int p = 0; p < w->NP; p++)
        secs += phase_secs(in, p) > 0 ? phase_secs(in, p) : 0;
    for (int i = 0; i < pv->ns; i++)
        for (int j = 0; j < pv->ns; j++) {
            uint64_t n = i != j && pv->change[i][j] ? npl__cls_edge_count(w, pv, i, j) : 0;
            double m = n ? moved_pages(w, pv->sig[i], pv->sig[j]) : 0;
            if (m < 0)
                return -1;
            moved += (double)n * m;
        }
    double cost = moved / rate, saved = gain * secs * NPL_PROF_REMOTE_PENALTY;
    snprintf(why, size, "; next-touch moves about %.0f pages, %.3g s at %.0f pages/s%s, to save "
             "about %.3g s (%.2f of %.3g s of its phases x %.1f)", moved, cost, rate,
             in->migrate_rate > 0 ? " (the machine's, measured)" : " (the default figure: "
             "numaplace measure measures the machine's)", saved, gain, secs,
             NPL_PROF_REMOTE_PENALTY);
    return saved > cost;
}

/* Next-touch, when owners change again and again and that beats every single placement by
 * NPL_PROF_PHASE_GAIN and the time it saves outweighs the pages it moves. 1 if chosen, 0 if not
 * (w->note says why, when it was weighed), -1 on failure. */
int npl__cls_try_phase_changing(struct work *w, const struct phase_view *pv, double sbest,
                              struct npl_prof_advice *out)
{
    struct level *L = &w->node;
    int ntargets = 0, targets[MAX_SIG_PHASES], recurring = 0;
    for (int j = 0; j < pv->ns; j++) {
        int is_target = 0;
        for (int i = 0; i < pv->ns; i++) {
            uint64_t n = i != j ? npl__cls_edge_count(w, pv, i, j) : 0;
            if (n && pv->change[i][j]) {
                is_target = 1;
                recurring |= n >= 2;
            }
        }
        if (is_target)
            targets[ntargets++] = pv->sig[j];
    }
    if (!recurring || pv->ns < 2)
        return 0;
    /* the first phase's best shape places it; each significant phase then gets its best */
    const struct cand *first = NULL;
    int p0 = pv->sig[0];
    for (int i = 0; i < L->ncand; i++)
        if (L->cands[i].family != FAM_FT &&
            (!first || npl__cls_phase_frac(w, L->cands[i].loc, p0) >
                           npl__cls_phase_frac(w, first->loc, p0) + 1e-12))
            first = &L->cands[i];
    if (!first)
        return 0;
    double nt = 0;
    for (int p = 0; p < w->NP; p++) {
        int s = -1;
        for (int i = 0; i < pv->ns; i++)
            s = pv->sig[i] == p ? i : s;
        nt += s >= 0 ? pv->best[s] * w->acc[p] : first->loc[p];
    }
    nt = w->S > 0 ? dmin(1, nt / w->S) : 0;
    if (nt - sbest < NPL_PROF_PHASE_GAIN)
        return 0;
    char cost[240];
    int pays = next_touch_pays(w, pv, nt - sbest, cost, sizeof cost);
    if (pays <= 0) {
        if (pays == 0)
            snprintf(w->note, sizeof w->note, "; next-touch (%.2f local against %.2f) would not "
                     "pay%s", nt, sbest, cost);
        return pays;
    }
    out->pattern = NPL_PAT_PHASE_CHANGING;
    npl__advice_set(out, NPL_ADVICE_POLICY, first->policy);
    if (!(out->next_touch = malloc((size_t)ntargets * sizeof *out->next_touch)))
        return npl__cls_oom(w);
    char ids[200] = "";
    for (int i = 0; i < ntargets; i++) {
        out->next_touch[i] = npl__cls_phase_id(w, targets[i]);
        npl__cls_add_text(ids, sizeof ids, "%s%u", i ? "," : "", out->next_touch[i]);
    }
    out->nnext_touch = (uint32_t)ntargets;
    out->local_policy = out->local_run = nt;
    out->local_best = nt > sbest ? nt : sbest;
    out->local_err = -1; /* next-touch's phases: not estimated */
    const struct cand *ftc = npl__cls_find(L, "first_touch");
    out->local_first_touch =
        npl__cls_ft_known(w, NULL) >= 0.5 * w->S ? npl__cls_frac_over(w, ftc->loc, NULL) : -1;
    out->confidence = npl__cls_root01(w->S / (8.0 * NPL_PROF_MIN_SAMPLES)) *
                      clamp01((nt - sbest) / (2 * NPL_PROF_PHASE_GAIN));
    int n = snprintf(out->reason, sizeof out->reason,
                     "phase-changing: owners change at phase%s %s, again and again; %s first, "
                     "next-touch re-armed there predicts %.2f local against %.2f for the best "
                     "single placement (%.0f samples)%s", ntargets > 1 ? "s" : "", ids,
                     first->policy, nt, sbest, w->S, cost);
    return n >= 0 ? 1 : -1; /* a reason longer than its buffer is cut, never overrun */
}

/* The steady state a single placement is fitted on: the stretch of phases, between one-time
 * changes of owners (on nodes or on threads: the pattern is the threads'), that holds the most
 * accesses (the later on a tie). An initialisation entered once before the first phase entered
 * again and again ends a stretch too. A one-time serial pass at the start or at the end (a
 * pthreads program's main thread reading the whole array after its workers' passes) is then
 * left out whatever the run's length, where the last stretch alone would be that pass. Returns
 * the first phase of the stretch (0: the first) and sets *end past its last, and v->lone to
 * those lone passes; a stretch of less than NPL_PROF_STEADY_MIN of the accesses
 * (NPL_PROF_STEADY_MIN_WINDOWS where the phases are time windows alone) is none (every phase
 * then). */
/* Phase p entered again and again: a region (or the serial stretch between regions) entered
 * more than once. A time window is the sampler's clock, entered once; the one window phase
 * entered again is the main thread alone after its threads ended, whose stretches the profile
 * does not tell apart (a final pass of one array, serial work on another between two fork-joins):
 * to each array it is a pass of its own. Counted as recurring, it made a program that ran three
 * parallel sections, each followed by the main thread's pass, keep that pass as the steady
 * state of every array: `serial` in 27 of 40 arrays of 20 profiles (the advice's stability). */
static int again(const struct npl_prof_input *in, int p)
{
    return in->phases && in->phases[p].entries >= 2 && in->phases[p].kind != NPL_PHASE_WINDOW;
}

static int once(const struct npl_prof_input *in, int p)
{
    return !again(in, p);
}

static int steady_stretch(struct work *w, struct verdict *v, int *end)
{
    const struct npl_prof_input *in = w->in;
    unsigned char *cut = calloc((size_t)w->NP + 1, 1);
    if (!cut)
        return npl__cls_oom(w);
    /* phases entered once before the first one entered again and again (an initialisation) */
    for (int p = 0; in->phases && p < w->NP; p++)
        if (again(in, p) && w->acc[p] > 0) {
            int once_before = 0;
            for (int q = 0; q < p; q++)
                once_before |= w->acc[q] > 0;
            cut[p] |= once_before;
            break;
        }
    /* a change into j that happens once; or from the significant phase before it when both are
     * entered once (time windows: the phases between them too small to be judged) */
    for (int k = 0; k < 2; k++) {
        const struct phase_view *ph = k ? &v->tv : &v->pv;
        for (int j = 0; j < ph->ns; j++)
            for (int i = 0; i < ph->ns; i++)
                if (i != j && ph->change[i][j] &&
                    (npl__cls_edge_count(w, ph, i, j) == 1 ||
                     (i == j - 1 && once(in, ph->sig[i]) && once(in, ph->sig[j]))))
                    cut[ph->sig[j]] = 1;
    }
    /* without phases entered again and again (time windows), a one-time pass of one thread
     * alone at the start or at the end (a pthreads main thread's initialisation or final pass,
     * in a phase of its own: the sampler's) is never the steady state, whatever its share of
     * the samples, when other threads made the rest: a stretch of its own that weighs nothing */
    const int *only = w->phase_thread; /* -1: no sample; -2: two threads or more; the thread */
    int first = -1, last = -1, lone[2] = {-1, -1};
    for (int p = 0; p < w->NP; p++)
        if (only[p] != -1) {
            first = first < 0 ? p : first;
            last = p;
        }
    /* recurring: regions entered again and again, where one-time passes are left out so */
    for (int k = 0; !v->recurring && first >= 0 && first < last && k < 2; k++) {
        int p = k ? last : first;
        if (only[p] >= 0 && once(in, p)) {
            lone[k] = p;
            cut[p] = 1;
            cut[p + 1] = 1;
        }
    }
    int from = 0, best_from = 0, best_end = w->NP;
    double mass = 0, best = -1;
    for (int p = 0; p <= w->NP; p++) {
        if (p == w->NP || (cut[p] && p > from)) {
            if (mass >= best) {
                best = mass;
                best_from = from;
                best_end = p;
            }
            from = p;
            mass = 0;
        }
        if (p < w->NP && p != lone[0] && p != lone[1])
            mass += w->acc[p];
    }
    free(cut);
    v->lone[0] = lone[0];
    v->lone[1] = lone[1];
    /* a steady state is what the program does most of the time: a stretch of less than half of
     * the accesses (but such lone passes) is none (time windows cut at every straggler's window,
     * where one thread ran alone while the others waited at a barrier, made a minority its
     * steady state). Cut by the clock, not by the program's regions, it must hold two-thirds:
     * a gather every worker makes, cut at a straggler's windows into halves, had one half
     * sampled 85% from one node, and that half put the whole array there (0.52 predicted,
     * 0.25 exact); fitted on the whole run, a one-time change of owners keeps, chunk by chunk,
     * the owner of the longer part */
    double all = w->S, need = w->windows_only ? NPL_PROF_STEADY_MIN_WINDOWS : NPL_PROF_STEADY_MIN;
    for (int k = 0; k < 2; k++)
        all -= lone[k] >= 0 && (k == 0 || lone[1] != lone[0]) ? w->acc[lone[k]] : 0;
    if (best < need * all) { /* every phase, but the lone passes */
        v->split_from = best_from;
        v->split_end = best_end;
        *end = lone[1] >= 0 ? lone[1] : w->NP;
        return lone[0] >= 0 ? lone[0] + 1 : 0;
    }
    *end = best_end;
    return best_from;
}

/* The threads' own share of a set of phases' accesses (the thread-level explicit map, held
 * out: NPL_PROF_OWNED and above is owned) and how many threads own 5% of its sampled chunks or
 * more (*owners). */
static int set_owned(struct work *w, const unsigned char *set, double *excl, int *owners)
{
    uint64_t n = w->in->nchunks, sampled = 0;
    int T = w->in->nthreads;
    int *own = malloc((size_t)(n ? n : 1) * sizeof *own);
    double *loc = malloc((size_t)w->NP * sizeof *loc);
    uint64_t *per = calloc((size_t)T + 1, sizeof *per);
    int rc = own && loc && per ? npl__cls_explicit_fit(w, &w->thr, set, own, loc) : npl__cls_oom(w);
    if (rc == 0) {
        *excl = npl__cls_frac_over(w, loc, set);
        for (uint64_t k = 0; k < n; k++)
            if (own[k] >= 0 && own[k] < T) {
                per[own[k]]++;
                sampled++;
            }
        *owners = 0;
        for (int t = 0; t < T; t++)
            *owners += sampled && 20 * per[t] >= sampled;
    }
    free(own);
    free(loc);
    free(per);
    return rc;
}

/* Time windows alone, and the stretch with the most samples (v->split_from..split_end) held too
 * few of them to be the steady state by itself: where it and the rest of the run (but the lone
 * passes) are each owned by two threads or more, the owners changed once (an array whose
 * workers' slices are mirrored half-way): fitted on every phase, each chunk has two owners, and
 * it looked shared and was spread (cyclic: 0.25 for the 0.50 of either half's owners, 1 of 10
 * profiles at 8 passes; cyclic_block:27 in another). The placement is then fitted on that stretch,
 * and predicted over the whole run (whole_run_prediction). A skew that only looks like a change
 * (a gather every worker makes, cut at a straggler's windows) is not owned on either side.
 * Returns 1 when the stretch is kept. */
static int owners_changed_once(struct work *w, struct verdict *v)
{
    if (!w->windows_only || v->recurring || v->split_from < 0 ||
        (v->split_from == 0 && v->split_end >= w->NP))
        return 0;
    unsigned char *set = calloc((size_t)w->NP * 2, 1);
    if (!set)
        return npl__cls_oom(w);
    unsigned char *rest = set + w->NP;
    double ex[2] = {0, 0}, acc[2] = {0, 0};
    int own[2] = {0, 0}, rc = 0;
    for (int p = 0; p < w->NP; p++) {
        /* the windows either side of the stretch are left out of the rest: the change of owners
         * falls inside one of them (a window of 26 samples of the first owners, 228 of the
         * second was the last of the first side) */
        if (p == v->lone[0] || p == v->lone[1] || w->acc[p] <= 0 || p == v->split_from - 1 ||
            p == v->split_end)
            continue;
        int in = p >= v->split_from && p < v->split_end;
        (in ? set : rest)[p] = 1;
        acc[!in] += w->acc[p];
    }
    double min = npl__cls_min_samples(w->in);
    if (acc[0] >= min && acc[1] >= min)
        rc = set_owned(w, set, &ex[0], &own[0]) < 0 || set_owned(w, rest, &ex[1], &own[1]) < 0
                 ? -1
                 : ex[0] >= NPL_PROF_OWNED && ex[1] >= NPL_PROF_OWNED && own[0] >= 2 && own[1] >= 2;
    free(set);
    return rc;
}

/* One placement is fitted on the steady state (steady_stretch); where phases are entered again
 * and again, a phase entered once inside it (a serial pass before exit, a checkpoint) is left
 * out too. Sets w->inF / w->accF and refits the owners and shapes on it. */
int npl__cls_steady_state(struct work *w, struct verdict *v)
{
    const struct npl_prof_input *in = w->in;
    int recurring = 0, once_after = 0;
    for (int p = 0; in->phases && p < w->NP; p++)
        recurring |= again(in, p) && w->acc[p] > 0;
    v->recurring = recurring;
    v->lone[0] = v->lone[1] = -1;
    v->split_from = v->split_end = -1;
    v->owners_changed = 0;
    int end = w->NP, steady_from = steady_stretch(w, v, &end);
    if (steady_from < 0)
        return -1;
    int changed = owners_changed_once(w, v);
    if (changed < 0)
        return -1;
    if (changed) {
        v->owners_changed = 1;
        steady_from = v->split_from;
        end = v->split_end;
    }
    for (int p = steady_from; recurring && p < end; p++)
        once_after |= once(in, p) && w->acc[p] > 0;
    if (steady_from <= 0 && end >= w->NP && !once_after)
        return 0;
    double kept = 0;
    for (int p = 0; p < w->NP; p++) {
        int out = p < steady_from || p >= end, one_time = recurring && once(in, p);
        *(out ? &v->before : one_time ? &v->left_out : &kept) += w->acc[p];
    }
    if (kept < npl__cls_min_samples(in)) {
        v->before = v->left_out = 0;
        return 0;
    }
    for (int p = 0; p < w->NP; p++)
        w->inF[p] = p >= steady_from && p < end && !(recurring && once(in, p));
    w->accF = kept;
    v->steady_from = steady_from;
    v->steady_end = end;
    v->once_after = once_after;
    if (npl__cls_chunk_owners(w, w->inF, v->owner, &v->top_share, &v->top_thread) < 0 ||
        npl__cls_steady_shapes(w, v->owner) < 0)
        return -1;
    return 0;
}
