/* classify.c - PURE: one array's sampled accesses -> a pattern, a policy, a confidence, a reason
 * and predicted local fractions (docs/AUTO.md, "Classification").
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
#include "profile/profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIG_PHASES 16   /* phases judged one by one (the largest ones) */
#define PAGES_PER_CHUNK 64  /* pages of a chunk the map is asked about (evenly spread) */

enum family { FAM_FT, FAM_BIND_ALL, FAM_CYCLIC, FAM_WEIGHTED, FAM_BLOCK, FAM_THREAD_CYCLIC,
              FAM_CYCLIC_BLOCK, FAM_EXPLICIT };

struct npl_prof_ctx {
    const npl_topo *topo;
    int M;          /* usable nodes */
    int *nodes;     /* their OS ids, ascending */
    int *idx_of;    /* OS id -> index, -1 */
    int maxid;
    int T;          /* threads of the profile */
    npl_topo *tt;   /* one node per thread, node b = thread b (built when first needed) */
    int *ident;     /* 0..T-1 */
};

struct cand {
    char policy[160];
    int family;
    int scalable;
    double *loc;    /* local accesses per phase */
    double frac;    /* local fraction over the fitted set */
    uint64_t period;
    int threads;
};

/* One way to count an access local: on the node of its thread (the machine), or by its own
 * thread (the pattern, machine-independent: "nodes" are the threads). */
struct level {
    int M;
    const int *tn;          /* "node" index of each thread */
    const npl_topo *topo;   /* where node-level shapes are planned */
    const int *idx_of;      /* plan node id -> index */
    int maxid;
    struct cand *cands;
    int ncand, capcand;
    double *dist;           /* M, sparse: dtouch lists the entries set */
    int *dtouch, ndt;
    double *cn;             /* M, explicit fits */
    int *clist;
};

/* the array being classified */
struct work {
    struct npl_prof_ctx *c;
    const struct npl_prof_input *in;
    int NP;                     /* phases (>= 1) */
    int *tn;                    /* node index of each thread */
    size_t *order;              /* sample indexes sorted by chunk */
    size_t ngroups, *gstart;    /* samples of one chunk: order[gstart[g]..gstart[g+1]) */
    double *acc;                /* accesses per phase */
    unsigned char *inF;         /* phase in the fitted set */
    double accF, S;
    uint64_t npages, cp;        /* pages of the array, pages per chunk */
    int *mapbuf;
    struct level node, thr;
    char err[256];
};

static double cnt(const struct npl_prof_sample *s) { return (double)s->reads + (double)s->writes; }

static int phase_of(const struct work *w, const struct npl_prof_sample *s)
{
    return w->in->nphases ? (int)s->phase : 0;
}

static const struct npl_prof_sample *sample(const struct work *w, size_t i)
{
    return &w->in->samples[w->order[i]];
}

static uint64_t group_chunk(const struct work *w, size_t g) { return sample(w, w->gstart[g])->chunk; }

static int oom(struct work *w) { return npl__prof_fail(w->err, sizeof w->err, ENOMEM, "out of memory"); }

static void fmt_list(const int *v, int n, char *buf, size_t size)
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

int npl__classify_ctx(struct npl_prof_ctx **out, const npl_topo *topo, int nthreads, char *err,
                      size_t errsz)
{
    if (!out || !topo || nthreads < 1 || nthreads > NPL_PROF_MAX_THREADS)
        return npl__prof_fail(err, errsz, EINVAL, "classifier: bad argument (threads %d)", nthreads);
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

/* ---- placements: per chunk, the fraction of its pages on each "node" (L->dist) ---- */

struct placement {
    int family;
    npl_plan *plan;          /* the shapes */
    int thread_level;        /* the plan's nodes are owner threads (planned on ctx->tt) */
    const int *chunk_node;   /* FAM_EXPLICIT: index per chunk, -1 unknown */
};

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

/* Fill L->dist for a chunk; returns 1 when the chunk is "anywhere" (uniform), 0, or -1. */
static int chunk_dist(struct work *w, struct level *L, const struct placement *pl, uint64_t chunk)
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
static int evaluate(struct work *w, struct level *L, const struct placement *pl, double *loc)
{
    for (int p = 0; p < w->NP; p++)
        loc[p] = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        int uni = chunk_dist(w, L, pl, group_chunk(w, g));
        if (uni < 0)
            return -1;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            loc[phase_of(w, s)] += cnt(s) * dist_at(L, L->tn[s->thread], uni);
        }
    }
    return 0;
}

static double frac_over(const struct work *w, const double *loc, const unsigned char *set)
{
    double l = 0, a = 0;
    for (int p = 0; p < w->NP; p++)
        if (!set || set[p]) {
            l += loc[p];
            a += w->acc[p];
        }
    return a > 0 ? l / a : 0;
}

static double phase_frac(const struct work *w, const double *loc, int p)
{
    return w->acc[p] > 0 ? loc[p] / w->acc[p] : 0;
}

/* a new candidate; NULL when it is already there (dup set) or out of memory (w->err set) */
static struct cand *add_cand(struct work *w, struct level *L, const char *policy, int family,
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
            oom(w);
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
        oom(w);
        return NULL;
    }
    L->ncand++;
    return c;
}

/* A shape: the advised string `policy`, evaluated as itself on L->topo, or (eval != NULL) as
 * `eval` on the one-node-per-thread topology, whose nodes are the block owner threads. */
static int shape(struct work *w, struct level *L, const char *policy, const char *eval, int family,
                 uint64_t period, int threads)
{
    npl_policy *pol = NULL;
    npl_plan *plan = NULL;
    if (npl_policy_parse(&pol, eval ? eval : policy) < 0)
        return npl__prof_fail(w->err, sizeof w->err, EINVAL, "classifier: policy %s: %s", policy,
                              npl_last_error());
    int rc = npl_plan_create(&plan, pol, eval ? w->c->tt : L->topo, 0);
    npl_policy_free(pol);
    if (rc < 0)
        return npl__prof_fail(w->err, sizeof w->err, errno, "classifier: plan %s: %s", policy,
                              npl_last_error());
    int dup;
    struct cand *c = add_cand(w, L, policy, family, 1, &dup);
    if (!c) {
        npl_plan_free(plan);
        return dup ? 0 : -1;
    }
    c->period = period;
    c->threads = threads;
    struct placement pl = {family, plan, eval != NULL, NULL};
    rc = evaluate(w, L, &pl, c->loc);
    npl_plan_free(plan);
    return rc;
}

/* Explicit owners fitted on the phases of `set`: index per chunk (-1 where the set has no
 * sample) and local accesses per phase: leave-one-out inside the set, as fitted outside it. */
static int explicit_fit(struct work *w, struct level *L, const unsigned char *set, int *chunk_node,
                        double *loc)
{
    int M = L->M;
    for (uint64_t k = 0; chunk_node && k < w->in->nchunks; k++)
        chunk_node[k] = -1;
    for (int p = 0; p < w->NP; p++)
        loc[p] = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        int nl = 0;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            int j = L->tn[s->thread];
            if (!set[phase_of(w, s)])
                continue;
            if (L->cn[j] == 0)
                L->clist[nl++] = j;
            L->cn[j] += cnt(s);
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
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            int j = L->tn[s->thread], p = phase_of(w, s);
            double share;
            if (!set[p]) /* as fitted */
                share = v1 <= 0 ? 1.0 / M : L->cn[j] == v1 ? 1.0 / n1 : 0;
            else if (L->cn[j] < v1 || n1 >= 2) /* one access of j left out: j is not the owner */
                share = 0;
            else if (v1 - 1 > v2) /* j stays the owner alone */
                share = 1;
            else /* a tie with the nodes at v2 (all of them when v1 - 1 is 0) */
                share = v1 - 1 <= 0 && v2 <= 0 ? 1.0 / M : 1.0 / (n2 + 1);
            loc[p] += cnt(s) * share;
        }
        for (int q = 0; q < nl; q++)
            L->cn[L->clist[q]] = 0;
    }
    return 0;
}

static int by_chunk_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* chunk, index */
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
    return L->dist && L->dtouch && L->cn && L->clist ? 0 : oom(w);
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
        return oom(w);
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
        keys[2 * i] = s->chunk;
        keys[2 * i + 1] = i;
        w->acc[phase_of(w, s)] += cnt(s);
    }
    qsort(keys, in->nsamples, 2 * sizeof *keys, by_chunk_cmp);
    w->ngroups = 0;
    for (size_t i = 0; i < in->nsamples; i++) {
        w->order[i] = (size_t)keys[2 * i + 1];
        if (i == 0 || keys[2 * i] != keys[2 * i - 2])
            w->gstart[w->ngroups++] = i;
    }
    w->gstart[w->ngroups] = in->nsamples;
    free(keys);
    for (int p = 0; p < w->NP; p++)
        w->S += w->acc[p];
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
    level_free(&w->node);
    level_free(&w->thr);
}

static double margin(double best)
{
    double m = NPL_PROF_MARGIN_REL * best;
    return m > NPL_PROF_MARGIN_ABS ? m : NPL_PROF_MARGIN_ABS;
}

/* An explicit map (scored leave-one-out: noise does not make it win) is worth more than a shape
 * when it predicts more than NPL_PROF_EXPLICIT_GAIN above it, or at least
 * NPL_PROF_EXPLICIT_MIN_GAIN above it and half of the shape's misses fewer: a shape of 0.98
 * whose blocks are equal shares of unequal rows (CG's matrix) leaves its boundary pages on the
 * neighbour's node, and a map can only gain 0.02 there. At another size the shape is applied. */
static int map_beats(double map, double shape)
{
    double gain = map - shape;
    return gain > NPL_PROF_EXPLICIT_GAIN ||
           (gain >= NPL_PROF_EXPLICIT_MIN_GAIN && gain >= (1 - shape) / 2);
}

/* Top thread of each sampled chunk over the fitted set (-1: none), and the thread that makes
 * most of the accesses with its share. */
static int chunk_owners(struct work *w, int *owner, double *top_share, int *top_thread)
{
    int T = w->in->nthreads;
    double *ct = calloc((size_t)T, sizeof *ct), *tot = calloc((size_t)T, sizeof *tot);
    if (!ct || !tot) {
        free(ct);
        free(tot);
        return oom(w);
    }
    for (size_t g = 0; g < w->ngroups; g++) {
        int best = -1;
        double bv = 0;
        for (size_t i = w->gstart[g]; i < w->gstart[g + 1]; i++) {
            const struct npl_prof_sample *s = sample(w, i);
            if (w->inF[phase_of(w, s)]) {
                ct[s->thread] += cnt(s);
                tot[s->thread] += cnt(s);
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

/* The fitted parameters of the thread-level shapes. */
struct fit {
    int tcand[3], nt;   /* thread counts */
    uint64_t kc[3];     /* periods in pages */
    int nk;
};

static int fit_shapes(struct work *w, const int *owner, struct fit *f)
{
    int T = w->in->nthreads;
    memset(f, 0, sizeof *f);
    f->tcand[f->nt++] = T;
    unsigned char *seen = calloc((size_t)T, 1);
    uint64_t *runs = malloc((w->ngroups + 1) * sizeof *runs);
    if (!seen || !runs) {
        free(seen);
        free(runs);
        return oom(w);
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
static int thread_shapes(struct work *w, struct level *L, const struct fit *f, int on_machine)
{
    char pol[160], ev[160];
    const char *pin = on_machine && w->in->pin && !strcmp(w->in->pin, "scatter") ? ",pin=scatter" : "";
    for (int i = 0; i < f->nt; i++) {
        snprintf(pol, sizeof pol, "bind_block:threads=%d%s", f->tcand[i], pin);
        snprintf(ev, sizeof ev, "bind_block:threads=%d", f->tcand[i]);
        if (shape(w, L, pol, on_machine ? ev : NULL, FAM_BLOCK, 0, f->tcand[i]) < 0)
            return -1;
    }
    for (int k = 0; k < f->nk; k++)
        for (int i = 0; i < f->nt; i++) {
            snprintf(pol, sizeof pol, "bind_block:pages=%llu,threads=%d%s",
                     (unsigned long long)f->kc[k], f->tcand[i], pin);
            snprintf(ev, sizeof ev, "bind_block:pages=%llu,threads=%d", (unsigned long long)f->kc[k],
                     f->tcand[i]);
            if (shape(w, L, pol, on_machine ? ev : NULL, FAM_THREAD_CYCLIC, f->kc[k], f->tcand[i]) < 0)
                return -1;
        }
    return 0;
}

/* Node shares of the accesses over the fitted set; the accessing nodes (OS ids). */
static int node_shares(struct work *w, double *share, int *accessing)
{
    int M = w->c->M, n = 0;
    for (int j = 0; j < M; j++)
        share[j] = 0;
    for (size_t i = 0; i < w->in->nsamples; i++)
        if (w->inF[phase_of(w, &w->in->samples[i])])
            share[w->tn[w->in->samples[i].thread]] += cnt(&w->in->samples[i]);
    for (int j = 0; j < M; j++) {
        share[j] = w->accF > 0 ? share[j] / w->accF : 0;
        if (share[j] > 0)
            accessing[n++] = w->c->nodes[j];
    }
    return n;
}

/* The machine's candidates. */
static int node_candidates(struct work *w, const struct fit *f)
{
    struct npl_prof_ctx *c = w->c;
    struct level *L = &w->node;
    int M = c->M, dup;
    char pol[160], list[2048];
    struct cand *ft = add_cand(w, L, "first_touch", FAM_FT, 1, &dup);
    struct placement pft = {FAM_FT, NULL, 0, NULL};
    double *share = malloc((size_t)M * sizeof *share);
    int *accessing = malloc((size_t)M * sizeof *accessing), rc = -1;
    if (!ft || !share || !accessing) {
        if (!w->err[0])
            oom(w);
        goto out;
    }
    if (evaluate(w, L, &pft, ft->loc) < 0)
        goto out;
    int nacc = node_shares(w, share, accessing);
    /* bind_all on the (at most 4) nodes that access it most */
    unsigned char *taken = calloc((size_t)M, 1);
    if (!taken) {
        oom(w);
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
        if (shape(w, L, pol, NULL, FAM_BIND_ALL, 0, 0) < 0) {
            free(taken);
            goto out;
        }
    }
    free(taken);
    /* spreading: over every node, and over the nodes that access it */
    fmt_list(accessing, nacc, list, sizeof list);
    if (M > 1 && shape(w, L, "cyclic", NULL, FAM_CYCLIC, 0, 0) < 0)
        goto out;
    if (nacc > 1 && nacc < M && strlen(list) < 120) {
        snprintf(pol, sizeof pol, "cyclic@%.120s", list);
        if (shape(w, L, pol, NULL, FAM_CYCLIC, 0, 0) < 0)
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
        if (ok && shape(w, L, pol, NULL, FAM_WEIGHTED, 0, 0) < 0)
            goto out;
    }
    if (thread_shapes(w, L, f, 1) < 0)
        goto out;
    /* node-level periodic blocks */
    for (int k = 0; M > 1 && k < f->nk; k++) {
        snprintf(pol, sizeof pol, "cyclic_block:%llu", (unsigned long long)f->kc[k]);
        if (shape(w, L, pol, NULL, FAM_CYCLIC_BLOCK, f->kc[k], 0) < 0)
            goto out;
        if (nacc > 1 && nacc < M && strlen(list) < 120) {
            snprintf(pol, sizeof pol, "cyclic_block:%llu@%.120s", (unsigned long long)f->kc[k], list);
            if (shape(w, L, pol, NULL, FAM_CYCLIC_BLOCK, f->kc[k], 0) < 0)
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
static int steady_shapes(struct work *w, const int *owner)
{
    struct fit f;
    char pol[64];
    if (fit_shapes(w, owner, &f) < 0 || thread_shapes(w, &w->node, &f, 1) < 0 ||
        thread_shapes(w, &w->thr, &f, 0) < 0)
        return -1;
    for (int k = 0; w->c->M > 1 && k < f.nk; k++) {
        snprintf(pol, sizeof pol, "cyclic_block:%llu", (unsigned long long)f.kc[k]);
        if (shape(w, &w->node, pol, NULL, FAM_CYCLIC_BLOCK, f.kc[k], 0) < 0)
            return -1;
    }
    return 0;
}

static const struct cand *best_of(const struct level *L, int family)
{
    const struct cand *b = NULL;
    for (int i = 0; i < L->ncand; i++) {
        const struct cand *c = &L->cands[i];
        if ((family < 0 ? c->family != FAM_FT : c->family == family) && (!b || c->frac > b->frac))
            b = c;
    }
    return b;
}

static const struct cand *find(const struct level *L, const char *policy)
{
    for (int i = 0; i < L->ncand; i++)
        if (!strcmp(L->cands[i].policy, policy))
            return &L->cands[i];
    return NULL;
}

/* the machine's twin of a thread-level shape (same family, period and threads) */
static const struct cand *twin(const struct level *L, const struct cand *t)
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

/* Which significant phases change owners (at the machine level). */
struct phase_view {
    int ns;                    /* significant phases, in order of first entry */
    int sig[MAX_SIG_PHASES];
    double best[MAX_SIG_PHASES];
    double *eloc[MAX_SIG_PHASES]; /* explicit owners fitted on each, per phase */
    int change[MAX_SIG_PHASES][MAX_SIG_PHASES];
};

static int phases_view(struct work *w, struct level *L, struct phase_view *v)
{
    if (w->NP < 2)
        return 0;
    int *cand = malloc((size_t)w->NP * sizeof *cand), nc = 0;
    unsigned char *one = calloc((size_t)w->NP, 1);
    if (!cand || !one) {
        free(cand);
        free(one);
        return oom(w);
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
    for (int i = 0; i < v->ns; i++) {
        int p = v->sig[i];
        if (!(v->eloc[i] = calloc((size_t)w->NP, sizeof(double)))) {
            free(one);
            return oom(w);
        }
        memset(one, 0, (size_t)w->NP);
        one[p] = 1;
        if (explicit_fit(w, L, one, NULL, v->eloc[i]) < 0) {
            free(one);
            return -1;
        }
        double b = phase_frac(w, v->eloc[i], p);
        for (int c = 0; c < L->ncand; c++)
            if (L->cands[c].family != FAM_FT && phase_frac(w, L->cands[c].loc, p) > b)
                b = phase_frac(w, L->cands[c].loc, p);
        v->best[i] = b;
    }
    free(one);
    /* two phases change owners when no one placement serves both within NPL_PROF_PHASE_SERVE */
    for (int i = 0; i < v->ns; i++)
        for (int j = 0; j < v->ns; j++) {
            int p = v->sig[i], q = v->sig[j], served = i == j;
            for (int c = 0; c < L->ncand && !served; c++)
                served = L->cands[c].family != FAM_FT &&
                         phase_frac(w, L->cands[c].loc, p) >= v->best[i] - NPL_PROF_PHASE_SERVE &&
                         phase_frac(w, L->cands[c].loc, q) >= v->best[j] - NPL_PROF_PHASE_SERVE;
            for (int e = 0; e < v->ns && !served; e++)
                served = (e == i || e == j) &&
                         phase_frac(w, v->eloc[e], p) >= v->best[i] - NPL_PROF_PHASE_SERVE &&
                         phase_frac(w, v->eloc[e], q) >= v->best[j] - NPL_PROF_PHASE_SERVE;
            v->change[i][j] = !served;
        }
    return 0;
}

static void phases_free(struct phase_view *v)
{
    for (int i = 0; i < v->ns; i++)
        free(v->eloc[i]);
}

/* How often significant phase i is followed by j: the profile's transitions; without them,
 * consecutive phases (once), which alternate (both ways, "again and again") when both are entered
 * more than once. */
static uint64_t edge_count(const struct work *w, const struct phase_view *v, int i, int j)
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

__attribute__((format(printf, 3, 4))) static void add_text(char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* small maths without libm (the library does not link it) */
static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }
/* the sample factor of a confidence: sqrt(min(1, x)) by Newton's method */
static double root01(double x)
{
    x = clamp01(x);
    double r = x > 0 ? (x + 1) / 2 : 0;
    for (int i = 0; i < 30 && r > 0; i++)
        r = (r + x / r) / 2;
    return r;
}

static int finish_explicit(struct work *w, struct npl_prof_advice *out, const int *chunk_node)
{
    out->chunk_nodes = malloc((size_t)(w->in->nchunks ? w->in->nchunks : 1) * sizeof(int));
    if (!out->chunk_nodes)
        return oom(w);
    uint64_t n = w->in->nchunks, prev = UINT64_MAX;
    for (uint64_t k = 0; k < n; k++)
        out->chunk_nodes[k] = chunk_node[k] >= 0 ? w->c->nodes[chunk_node[k]] : -1;
    /* A chunk no sample reached is used all the same, most likely as its neighbours are (left
     * alone, the program's first touch would put it, serial init: all on one node): it goes
     * with the nearest sampled chunk, the earlier one on a tie. */
    for (uint64_t k = 0; k < n; k++) {
        if (chunk_node[k] >= 0) {
            prev = k;
            continue;
        }
        uint64_t next = k + 1;
        while (next < n && chunk_node[next] < 0)
            next++;
        int from_prev = prev != UINT64_MAX && (next >= n || k - prev <= next - k);
        if (from_prev)
            out->chunk_nodes[k] = out->chunk_nodes[prev];
        else if (next < n)
            out->chunk_nodes[k] = w->c->nodes[chunk_node[next]];
    }
    out->nchunk_nodes = n;
    return 0;
}

static uint32_t phase_id(const struct work *w, int p)
{
    return w->in->phases ? w->in->phases[p].id : (uint32_t)p;
}

/* Accesses to chunks whose first toucher is known, over the phases of set. */
static double ft_known(const struct work *w, const unsigned char *set)
{
    double k = 0;
    for (size_t i = 0; w->in->first_touch && i < w->in->nsamples; i++) {
        const struct npl_prof_sample *s = &w->in->samples[i];
        if ((!set || set[phase_of(w, s)]) && w->in->first_touch[s->chunk] >= 0)
            k += cnt(s);
    }
    return k;
}

static void keep_candidates(struct work *w, struct npl_prof_advice *out)
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

/* The fewest sampled accesses an array needs to be classified: NPL_PROF_MIN_SAMPLES, or on an
 * array of fewer than 8 chunks 8 a chunk (what 64 give an array of 8), at least 16. CG's row
 * pointers (6 pages) got 61 samples and were left to first touch: all on node 0 under serial
 * init, 0.30 local against 0.66 under their map. Under 64, a well-sampled array of the same call
 * site is still followed (npl__advice_siblings). */
static double min_samples(const struct npl_prof_input *in)
{
    double per_chunk = 8.0 * (double)in->nchunks;
    return per_chunk >= NPL_PROF_MIN_SAMPLES ? NPL_PROF_MIN_SAMPLES : per_chunk < 16 ? 16 : per_chunk;
}

static int too_few(struct work *w, struct npl_prof_advice *out)
{
    struct placement pft = {FAM_FT, NULL, 0, NULL};
    double *loc = calloc((size_t)w->NP, sizeof *loc);
    if (!loc)
        return oom(w);
    if (evaluate(w, &w->node, &pft, loc) < 0) {
        free(loc);
        return -1;
    }
    double f = frac_over(w, loc, NULL);
    free(loc);
    out->pattern = NPL_PAT_TOO_FEW;
    snprintf(out->policy, sizeof out->policy, "first_touch");
    out->local_policy = w->S > 0 ? f : 0;
    out->local_best = out->local_policy;
    out->local_first_touch = w->S > 0 && ft_known(w, NULL) >= 0.5 * w->S ? f : -1;
    out->confidence = 0;
    snprintf(out->reason, sizeof out->reason,
             "too-few-samples: %.0f sampled accesses, fewer than %.0f: left to first touch", w->S,
             min_samples(w->in));
    return 0;
}

/* Next-touch, when owners change again and again and that beats every single placement. 1 if
 * chosen, 0 if not, -1 on failure. */
static int try_phase_changing(struct work *w, const struct phase_view *pv, double sbest,
                              struct npl_prof_advice *out)
{
    struct level *L = &w->node;
    int ntargets = 0, targets[MAX_SIG_PHASES], recurring = 0;
    for (int j = 0; j < pv->ns; j++) {
        int is_target = 0;
        for (int i = 0; i < pv->ns; i++) {
            uint64_t n = i != j ? edge_count(w, pv, i, j) : 0;
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
            (!first || phase_frac(w, L->cands[i].loc, p0) > phase_frac(w, first->loc, p0) + 1e-12))
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
    nt = w->S > 0 ? nt / w->S : 0;
    if (nt - sbest < NPL_PROF_PHASE_GAIN)
        return 0;
    out->pattern = NPL_PAT_PHASE_CHANGING;
    snprintf(out->policy, sizeof out->policy, "%s", first->policy);
    if (!(out->next_touch = malloc((size_t)ntargets * sizeof *out->next_touch)))
        return oom(w);
    char ids[200] = "";
    for (int i = 0; i < ntargets; i++) {
        out->next_touch[i] = phase_id(w, targets[i]);
        add_text(ids, sizeof ids, "%s%u", i ? "," : "", out->next_touch[i]);
    }
    out->nnext_touch = (uint32_t)ntargets;
    out->local_policy = nt;
    out->local_best = nt > sbest ? nt : sbest;
    const struct cand *ftc = find(L, "first_touch");
    out->local_first_touch = ft_known(w, NULL) >= 0.5 * w->S ? frac_over(w, ftc->loc, NULL) : -1;
    out->confidence = root01(w->S / (8.0 * NPL_PROF_MIN_SAMPLES)) *
                      clamp01((nt - sbest) / (2 * NPL_PROF_PHASE_GAIN));
    snprintf(out->reason, sizeof out->reason,
             "phase-changing: owners change at phase%s %s, again and again; %s first, next-touch "
             "re-armed there predicts %.2f local against %.2f for the best single placement "
             "(%.0f samples)", ntargets > 1 ? "s" : "", ids, first->policy, nt, sbest, w->S);
    return 1;
}

/* The static schedule's even split of the array's size (as the program asked for it) among T
 * threads: thread t's share is [t * B / T, (t + 1) * B / T). For chunk k: the thread whose share
 * holds most of it (*most, the lower on a tie) and the last one whose share reaches into it. */
static void even_split(const struct work *w, uint64_t k, int *most, int *last)
{
    int T = w->in->nthreads;
    double B = (double)w->in->bytes, cb = (double)w->in->chunk_bytes;
    double lo = (double)k * cb, hi = dmin((double)(k + 1) * cb, B), most_w = -1;
    int t0 = (int)(lo * T / B), t1 = (int)(hi * T / B);
    if (t1 > 0 && (double)t1 * B / T >= hi)
        t1--; /* the share that starts where the chunk ends does not reach into it */
    t0 = t0 < 0 ? 0 : t0 > T - 1 ? T - 1 : t0;
    t1 = t1 < t0 ? t0 : t1 > T - 1 ? T - 1 : t1;
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
static int even_split_map(const struct work *w, const int *owner, int by_node, int *map,
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

static int classify(struct work *w, struct npl_prof_advice *out)
{
    const struct npl_prof_input *in = w->in;
    struct npl_prof_ctx *c = w->c;
    struct level *N = &w->node, *TL = &w->thr;
    int M = c->M, rc = -1, top_thread = 0, dup;
    int *owner = NULL, *xnode = NULL, *xthr = NULL, *accessing = NULL;
    double *xloc = NULL, *tloc = NULL, *share = NULL, top_share = 0;
    struct phase_view pv, tv; /* owner changes between phases: on nodes, on threads */
    struct fit f;
    memset(&pv, 0, sizeof pv);
    memset(&tv, 0, sizeof tv);
    char facts[360] = "", guard[480] = "";
    out->samples = (uint64_t)(w->S + 0.5);
    out->local_first_touch = -1;
    memset(w->inF, 1, (size_t)w->NP);
    w->accF = w->S;
    if (w->S < min_samples(in))
        return too_few(w, out);

    owner = malloc((w->ngroups + 1) * sizeof *owner);
    xnode = malloc((size_t)in->nchunks * sizeof *xnode);
    xthr = malloc((size_t)in->nchunks * sizeof *xthr);
    xloc = calloc((size_t)w->NP, sizeof *xloc);
    tloc = calloc((size_t)w->NP, sizeof *tloc);
    share = malloc((size_t)M * sizeof *share);
    accessing = malloc((size_t)M * sizeof *accessing);
    if (!owner || !xnode || !xthr || !xloc || !tloc || !share || !accessing) {
        oom(w);
        goto out;
    }
    /* shapes fitted on every sample; the machine's candidates; the phases */
    if (chunk_owners(w, owner, &top_share, &top_thread) < 0 || fit_shapes(w, owner, &f) < 0 ||
        node_candidates(w, &f) < 0 || thread_shapes(w, TL, &f, 0) < 0 ||
        phases_view(w, N, &pv) < 0 || phases_view(w, TL, &tv) < 0)
        goto out;
    if (explicit_fit(w, N, w->inF, xnode, xloc) < 0)
        goto out;
    double sbest = frac_over(w, xloc, NULL);
    for (int i = 0; i < N->ncand; i++)
        if (N->cands[i].family != FAM_FT)
            sbest = dmax(sbest, frac_over(w, N->cands[i].loc, NULL));
    int pc = try_phase_changing(w, &pv, sbest, out);
    if (pc < 0)
        goto out;
    if (pc > 0) {
        rc = 0;
        for (int i = 0; i < N->ncand; i++)
            N->cands[i].frac = frac_over(w, N->cands[i].loc, NULL);
        keep_candidates(w, out);
        goto out;
    }

    /* ---- one placement, fitted on the steady state: after the last one-time change of
     * owners, on nodes or on threads (the pattern is the threads': a profile of one node sees
     * a serial initialisation too) ---- */
    int steady_from = -1;
    /* phases entered once before the first one entered again and again (an initialisation) */
    for (int p = 0; in->phases && p < w->NP; p++)
        if (in->phases[p].entries >= 2 && w->acc[p] > 0) {
            int once_before = 0;
            for (int q = 0; q < p; q++)
                once_before |= w->acc[q] > 0;
            if (once_before)
                steady_from = p;
            break;
        }
    for (int v = 0; v < 2; v++) {
        const struct phase_view *ph = v ? &tv : &pv;
        for (int j = 0; j < ph->ns; j++)
            for (int i = 0; i < ph->ns; i++)
                if (i != j && ph->change[i][j] && edge_count(w, ph, i, j) == 1 &&
                    ph->sig[j] > steady_from)
                    steady_from = ph->sig[j];
    }
    /* where phases are entered again and again, a phase entered once after the steady state
     * began (a serial pass before exit, a checkpoint) is left out of it too */
    int recurring = 0, once_after = 0;
    for (int p = 0; in->phases && p < w->NP; p++)
        recurring |= in->phases[p].entries >= 2 && w->acc[p] > 0;
    for (int p = steady_from > 0 ? steady_from : 0; recurring && p < w->NP; p++)
        once_after |= in->phases[p].entries < 2 && w->acc[p] > 0;
    double before = 0, left_out = 0;
    if (steady_from > 0 || once_after) {
        double kept = 0;
        for (int p = 0; p < w->NP; p++) {
            int early = p < steady_from, once = recurring && in->phases[p].entries < 2;
            *(early ? &before : once ? &left_out : &kept) += w->acc[p];
        }
        if (kept >= min_samples(in)) {
            for (int p = 0; p < w->NP; p++)
                w->inF[p] = p >= steady_from && !(recurring && in->phases[p].entries < 2);
            w->accF = kept;
            if (chunk_owners(w, owner, &top_share, &top_thread) < 0 || steady_shapes(w, owner) < 0)
                goto out;
        } else {
            steady_from = -1;
            once_after = 0;
        }
    }
    for (int i = 0; i < N->ncand; i++)
        N->cands[i].frac = frac_over(w, N->cands[i].loc, w->inF);
    if (explicit_fit(w, N, w->inF, xnode, xloc) < 0)
        goto out;
    struct cand *xc = add_cand(w, N, "explicit", FAM_EXPLICIT, 0, &dup);
    if (!xc)
        goto out;
    xc->frac = frac_over(w, xloc, w->inF);
    /* the pattern, machine-independent: a thread's own accesses */
    if (explicit_fit(w, TL, w->inF, xthr, tloc) < 0)
        goto out;
    for (int i = 0; i < TL->ncand; i++)
        TL->cands[i].frac = frac_over(w, TL->cands[i].loc, w->inF);
    double tx = frac_over(w, tloc, w->inF);
    for (int i = 0; i < TL->ncand; i++)
        tx = dmax(tx, TL->cands[i].frac);
    const struct cand *ftc = find(N, "first_touch");
    double ftf = ft_known(w, w->inF) >= 0.5 * w->accF ? ftc->frac : -1;
    const struct cand *bestc = best_of(N, -1);
    double best = bestc->frac;
    int nacc = node_shares(w, share, accessing);
    double reads = 0, writes = 0;
    for (size_t i = 0; i < in->nsamples; i++)
        if (w->inF[phase_of(w, &in->samples[i])]) {
            reads += (double)in->samples[i].reads;
            writes += (double)in->samples[i].writes;
        }
    double wr = reads + writes > 0 ? writes / (reads + writes) : 0;

    /* ---- the rules ---- */
    const struct cand *rule = NULL;
    double fit = 1;
    const struct cand *tb = best_of(TL, FAM_BLOCK), *tc = best_of(TL, FAM_THREAD_CYCLIC);
    const struct cand *nb = best_of(N, FAM_BLOCK), *ntc = best_of(N, FAM_THREAD_CYCLIC);
    const struct cand *ncb = best_of(N, FAM_CYCLIC_BLOCK);
    if (top_share >= NPL_PROF_SERIAL) {
        char pol[64];
        snprintf(pol, sizeof pol, "bind_all:%d", in->thread_nodes[top_thread]);
        rule = find(N, pol);
        out->pattern = NPL_PAT_SERIAL;
        fit = top_share;
        snprintf(facts, sizeof facts, "thread %d makes %.0f%% of the sampled accesses", top_thread,
                 100 * top_share);
    } else if (tx >= NPL_PROF_OWNED || (nacc > 1 && best >= NPL_PROF_OWNED)) {
        /* owned by threads (or, where threads of one node share, by nodes): which shape */
        int by_thread = tx >= NPL_PROF_OWNED;
        double x = by_thread ? tx : best;
        const struct cand *blk = by_thread ? tb : nb;
        const struct cand *cyc = by_thread ? tc : ntc;
        if (!by_thread && ncb && (!cyc || ncb->frac > cyc->frac))
            cyc = ncb;
        int shaped = 1;
        if (blk && blk->frac >= x - margin(x)) {
            rule = by_thread ? twin(N, blk) : blk;
            out->pattern = NPL_PAT_BLOCKED;
            out->block_threads = blk->threads;
            fit = blk->frac;
            snprintf(facts, sizeof facts, "each chunk is used by the %s of its static share of %d "
                     "threads (%s exclusivity %.2f)", by_thread ? "thread" : "node", blk->threads,
                     by_thread ? "thread" : "node", x);
        } else if (cyc && cyc->frac >= x - margin(x)) {
            rule = by_thread ? twin(N, cyc) : cyc;
            out->pattern = NPL_PAT_CYCLIC;
            out->period_pages = cyc->period;
            out->block_threads = cyc->threads;
            fit = cyc->frac;
            snprintf(facts, sizeof facts, "the owners repeat every %llu page%s over %d %s (%s "
                     "exclusivity %.2f)", (unsigned long long)cyc->period, cyc->period > 1 ? "s" : "",
                     cyc->threads ? cyc->threads : M, cyc->threads ? "threads" : "nodes",
                     by_thread ? "thread" : "node", x);
            /* periodic by nodes too? then the node-level shape needs no thread map */
            if (ncb && rule && ncb->period == cyc->period && ncb->frac >= rule->frac - 1e-9)
                rule = ncb;
        } else {
            shaped = 0;
        }
        /* the shape's blocks split the array in whole pages where the owners do not (a grid's
         * ghost planes shift every thread's block; planes straddle pages): the explicit map,
         * scored leave-one-out, when it beats the shape (map_beats) */
        if (shaped && rule && rule->family != FAM_EXPLICIT && map_beats(xc->frac, rule->frac)) {
            add_text(facts, sizeof facts, "; the explicit map predicts %.2f against %.2f for %.60s",
                     xc->frac, rule->frac, rule->policy);
            rule = xc;
        }
        if (!shaped) {
            /* no shape of its own: the explicit map, unless a shape serves it as well */
            const struct cand *sc = NULL;
            for (int i = 0; i < N->ncand; i++)
                if (N->cands[i].scalable && N->cands[i].family != FAM_FT &&
                    (!sc || N->cands[i].frac > sc->frac))
                    sc = &N->cands[i];
            rule = sc && sc->frac >= best - margin(best) && !map_beats(xc->frac, sc->frac) ? sc : xc;
            out->pattern = NPL_PAT_IRREGULAR;
            fit = x;
            snprintf(facts, sizeof facts, "owned (%s exclusivity %.2f) in no block or cyclic shape",
                     by_thread ? "thread" : "node", x);
        }
    } else {
        char pol[160], list[2048];
        fmt_list(accessing, nacc, list, sizeof list);
        if (nacc <= 1 || nacc == M || strlen(list) >= 120)
            snprintf(pol, sizeof pol, "cyclic");
        else
            snprintf(pol, sizeof pol, "cyclic@%.120s", list);
        double spread = nacc > 1 ? 1.0 / nacc : 1.0 / (M > 1 ? M : 2);
        double clarity = clamp01((NPL_PROF_OWNED - tx) / (NPL_PROF_OWNED - spread));
        if (in->rw_known && wr <= NPL_PROF_READ_MOSTLY) {
            out->pattern = NPL_PAT_SHARED_READ;
            out->replicate = 1;
            fit = dmin(clarity, clamp01((NPL_PROF_READ_MOSTLY - wr) / NPL_PROF_READ_MOSTLY + 0.5));
            snprintf(facts, sizeof facts, "shared (thread exclusivity %.2f < %.2f), writes %.1f%% "
                     "<= %.0f%%: replicate it where the program can (npl_replicate; the "
                     "interposer cannot copy a malloc'd block), else spread it", tx,
                     NPL_PROF_OWNED, 100 * wr, 100 * NPL_PROF_READ_MOSTLY);
        } else {
            out->pattern = NPL_PAT_SHARED_WRITTEN;
            fit = in->rw_known ? dmin(clarity, clamp01((wr - NPL_PROF_READ_MOSTLY) /
                                                       NPL_PROF_READ_MOSTLY + 0.5)) : clarity;
            double mx = 0, mn = 1;
            for (int j = 0; j < M; j++)
                if (share[j] > 0) {
                    mx = dmax(mx, share[j]);
                    mn = dmin(mn, share[j]);
                }
            const struct cand *wt = best_of(N, FAM_WEIGHTED);
            if (nacc > 1 && mx >= 1.5 * mn && wt)
                snprintf(pol, sizeof pol, "%s", wt->policy);
            snprintf(facts, sizeof facts, "shared (thread exclusivity %.2f < %.2f), %s: spread it "
                     "for bandwidth", tx, NPL_PROF_OWNED, "");
            if (in->rw_known)
                snprintf(facts, sizeof facts, "shared (thread exclusivity %.2f < %.2f), writes "
                         "%.0f%%: spread it for bandwidth", tx, NPL_PROF_OWNED, 100 * wr);
            else
                snprintf(facts, sizeof facts, "shared (thread exclusivity %.2f < %.2f; reads and "
                         "writes not told apart): spread it", tx, NPL_PROF_OWNED);
        }
        if (nacc == 1)
            add_text(facts, sizeof facts, " (only node %d's threads use it)", accessing[0]);
        rule = find(N, pol);
        if (!rule)
            rule = best_of(N, FAM_CYCLIC);
    }

    /* ---- the guard: never far below the best candidate, nor below first touch ---- */
    double m = margin(best);
    const struct cand *chosen = rule;
    int ok = chosen && chosen->frac >= best - m && (ftf < 0 || chosen->frac >= ftf - m);
    if (!ok) {
        const struct cand *alt = NULL;
        for (int pass = 0; pass < 2 && !alt; pass++) /* a shape first; the explicit map last */
            for (int i = 0; i < N->ncand; i++) {
                const struct cand *k = &N->cands[i];
                if ((!k->scalable && pass == 0) || k->frac < best - m || (ftf >= 0 && k->frac < ftf - m))
                    continue;
                if (!alt || k->frac > alt->frac + 1e-9 ||
                    (k->frac > alt->frac - 1e-9 && alt->family == FAM_FT))
                    alt = k;
            }
        if (!alt)
            alt = bestc;
        int below_ft = ftf >= 0 && chosen && chosen->frac < ftf - m;
        if (!chosen)
            snprintf(guard, sizeof guard, "; one node only: nothing to spread over: %.60s",
                     alt->policy);
        else
            snprintf(guard, sizeof guard, "; %.60s would give %.2f, more than %.2f below %.60s "
                     "(%.2f): %.60s instead", chosen->policy, chosen->frac, m,
                     below_ft ? "first touch" : bestc->policy, below_ft ? ftf : best, alt->policy);
        chosen = alt;
    }
    snprintf(out->policy, sizeof out->policy, "%s", chosen->policy);
    out->local_policy = chosen->frac;
    out->local_best = best;
    out->local_first_touch = ftf;
    /* owned by threads, placed by their blocks or by a map (or shared, placed by its own map:
     * judged on nodes): the even split's byte owners where the samples are those of an even
     * split seen through the first-toucher bias */
    int shared_chunks = 0, owned = tx >= NPL_PROF_OWNED;
    if (out->pattern != NPL_PAT_SERIAL &&
        (owned ? chosen->family == FAM_EXPLICIT || chosen->family == FAM_BLOCK
               : chosen->family == FAM_EXPLICIT) &&
        even_split_map(w, owned ? xthr : xnode, !owned, xnode, &shared_chunks)) {
        add_text(guard, sizeof guard, "; each of the %d chunks two threads' even shares hold "
                 "was sampled %s the later thread (the first toucher after a barrier): each "
                 "chunk goes to the thread holding most of it (predicted as %.60s)",
                 shared_chunks, owned ? "by" : "on the node of", chosen->policy);
        snprintf(out->policy, sizeof out->policy, "explicit");
        chosen = xc;
    }
    if (chosen->family == FAM_EXPLICIT && finish_explicit(w, out, xnode) < 0)
        goto out;
    out->confidence = root01(w->accF / (8.0 * NPL_PROF_MIN_SAMPLES)) * clamp01(fit);
    snprintf(out->reason, sizeof out->reason, "%s: %s; %s predicts %.2f local, first touch ",
             npl__pattern_name(out->pattern), facts, chosen->policy, chosen->frac);
    if (ftf >= 0)
        add_text(out->reason, sizeof out->reason, "%.2f", ftf);
    else
        add_text(out->reason, sizeof out->reason, "unknown");
    add_text(out->reason, sizeof out->reason, " (%.0f samples)%s", w->accF, guard);
    if (steady_from > 0)
        add_text(out->reason, sizeof out->reason, "; fitted on the phases from %u on, after a "
                 "one-time phase or change of owners (%.0f%% of the samples before it)",
                 phase_id(w, steady_from), 100 * before / w->S);
    if (once_after)
        add_text(out->reason, sizeof out->reason, "; a phase entered once after the steady state "
                 "began left out (%.0f%% of the samples: a one-time pass)", 100 * left_out / w->S);
    keep_candidates(w, out);
    rc = 0;
out:
    phases_free(&pv);
    phases_free(&tv);
    free(owner);
    free(xnode);
    free(xthr);
    free(xloc);
    free(tloc);
    free(share);
    free(accessing);
    return rc;
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
    in->first_touch = a->first_touch;
    in->samples = a->samples;
    in->nsamples = a->nsamples;
    in->nthreads = p->threads;
    in->thread_nodes = p->thread_nodes;
    in->rw_known = p->rw_known;
    in->pin = p->binding == NPL_BIND_PIN ? p->binding_detail : NULL;
    in->phases = p->phases;
    in->nphases = p->nphases;
    in->transitions = p->transitions;
    in->ntransitions = p->ntransitions;
}

/* The advice a small sibling can follow: a blocked or cyclic shape, or, for an array owned in no
 * such shape (an explicit per-chunk map, which holds at its own size only), the best evaluated
 * shape that holds at any size; NULL if none. */
static const char *followable(const struct npl_prof_advice *b)
{
    if ((b->pattern == NPL_PAT_BLOCKED || b->pattern == NPL_PAT_CYCLIC) &&
        strcmp(b->policy, "explicit") != 0)
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

npl_policy *npl__scalable_choice(struct npl_prof_ctx *ctx, const struct npl_profile *p,
                                 const struct npl_prof_array *a)
{
    char err[256];
    struct npl_prof_input in;
    struct npl_prof_advice adv;
    memset(&adv, 0, sizeof adv);
    npl_policy *pol = NULL;
    npl__profile_input(p, a, &in);
    if (!ctx || npl__classify(ctx, &in, &adv, err, sizeof err) < 0)
        return NULL;
    for (int i = 0; i < adv.ncand; i++) { /* best first */
        if (!adv.cand[i].scalable)
            continue;
        if (!strcmp(adv.cand[i].policy, "first_touch") ||
            npl_policy_parse(&pol, adv.cand[i].policy) == 0)
            break;
        pol = NULL;
    }
    npl__advice_clear(&adv);
    return pol;
}

int npl__explicit_scales(const struct npl_prof_array *a, const npl_policy *scaled)
{
    return !scaled && a->advice.samples < NPL_PROF_MIN_SAMPLES;
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
    return b && !strcmp(b->policy, "explicit") && b->chunk_nodes && b->nchunk_nodes > 0;
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
            add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
            continue;
        }
        /* what its own samples said, when they said more than too few (min_samples) */
        char was[sizeof a->reason] = "";
        if (a->pattern != NPL_PAT_TOO_FEW)
            snprintf(was, sizeof was, "%s", a->reason);
        if (has_map(b)) {
            if (follow_map(p, b, (uint32_t)from, i, a) == 0) {
                drop_own(a);
                snprintf(a->policy, sizeof a->policy, "explicit");
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
                    add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
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
        snprintf(a->policy, sizeof a->policy, "%s", policy);
        a->period_pages = b->period_pages;
        a->block_threads = b->block_threads;
        a->confidence = b->confidence / 2;
        a->local_policy = b->local_policy;
        a->local_best = b->local_best;
        snprintf(a->reason, sizeof a->reason,
                 "%s (same call site): %llu sampled accesses, fewer than %d, so it follows %s "
                 "(%s, %llu samples): %s", npl__pattern_name(a->pattern),
                 (unsigned long long)few, NPL_PROF_MIN_SAMPLES, site, npl__pattern_name(b->pattern),
                 (unsigned long long)b->samples, policy);
        if (*was)
            add_text(a->reason, sizeof a->reason, "; its own samples said: %s", was);
    }
}

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
