/* SPDX-License-Identifier: BSD-3-Clause */
/* profile/classify_internal.h - the advice layer's private state, shared by classify*.c:
 * classify.c (the entry and its steps), classify_candidates.c (placements and their scores),
 * classify_phases.c (phases, next-touch, the steady state), classify_rules.c (the rules and the
 * guard), classify_siblings.c (call-site siblings, scaled maps), classify_nexttouch.c (chunks). */
#ifndef NPL_CLASSIFY_INTERNAL_H
#define NPL_CLASSIFY_INTERNAL_H

#include "plan/plan.h"
#include "profile/profile.h"

#include <stdint.h>

#define MAX_SIG_PHASES 16   /* phases judged one by one (the largest ones) */
#define PAGES_PER_CHUNK 64  /* pages of a chunk the map is asked about (evenly spread) */

/* A candidate's family: the shape of its policy's kind (plan/policy_table.c's rows, read by
 * npl__cls_shape from the plan), or the explicit map, which is no policy */
enum family {
    FAM_FT = NPL__SHAPE_NONE,
    FAM_BIND_ALL = NPL__SHAPE_ONE_NODE,
    FAM_CYCLIC = NPL__SHAPE_SPREAD,
    FAM_WEIGHTED = NPL__SHAPE_WEIGHTED,
    FAM_BLOCK = NPL__SHAPE_THREAD_BLOCKS,
    FAM_THREAD_CYCLIC = NPL__SHAPE_THREAD_PERIODIC,
    FAM_CYCLIC_BLOCK = NPL__SHAPE_NODE_BLOCKS,
    FAM_EXPLICIT = NPL__SHAPE_COUNT,
};

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
    char eval[160]; /* a thread-level shape's plan on the one-node-per-thread topology, or "" */
    double busiest; /* the busiest node's share of the accesses it serves (fitted set) */
    double score;   /* frac less the busiest node's excess load (classify_cost.c) */
    double err;     /* the uncertainty of frac */
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
    int unsampled_nodes;        /* accessing nodes of threads that ran alongside unsampled */
    int unseen_threads;         /* threads that ran as long with no sample of any array */
    int unseen_nodes;           /* accessing nodes of those threads alone */
    int nsampled_threads;       /* threads with a sample of it in the fitted set */
    size_t *order;              /* sample indexes sorted by chunk */
    size_t ngroups, *gstart;    /* samples of one chunk: order[gstart[g]..gstart[g+1]) */
    double *acc;                /* accesses per phase */
    unsigned char *inF;         /* phase in the fitted set */
    double accF, S;
    uint64_t npages, cp;        /* pages of the array, pages per chunk */
    int *mapbuf;
    struct level node, thr;
    char err[256];
    char note[320];             /* next-touch weighed and not chosen: why (in the reason) */
    double *tw;                 /* each thread's exposure weight (npl__exposure_weights); NULL:
                                 * none (every weight 1) */
    int masked;                 /* readers the first toucher hid, boosted (npl__masked_readers) */
    double *sw;                 /* each sample's exposure weight, phase by phase
                                 * (npl__exposure_weights_by_phase); NULL: tw, or none */
    unsigned char *tmulti;      /* phase p had two threads' samples or more (only there do
                                 * threads compete for the armed pages: tw applies) */
    int *phase_thread;          /* the one thread of phase p's samples; -1 none, -2 several */
    int windows_only;           /* the profile has phases, every sampled one a time window (a
                                 * program without regions) */
    double map_guessed;         /* the chosen map's chunks placed by a guess: unsampled between
                                 * sampled chunks of two nodes, no slices fitting (a share) */
};

struct placement {
    int family;
    npl_plan *plan;          /* the shapes */
    int thread_level;        /* the plan's nodes are owner threads (planned on ctx->tt) */
    const int *chunk_node;   /* FAM_EXPLICIT: index per chunk, -1 unknown */
};

/* The fitted parameters of the thread-level shapes. */
struct fit {
    int tcand[3], nt;   /* thread counts */
    uint64_t kc[3];     /* periods in pages */
    int nk;
};

/* Which significant phases change owners (at the machine level). */
struct phase_view {
    int ns;                    /* significant phases, in order of first entry */
    int sig[MAX_SIG_PHASES];
    double best[MAX_SIG_PHASES];
    double *eloc[MAX_SIG_PHASES]; /* explicit owners fitted on each, per phase */
    int change[MAX_SIG_PHASES][MAX_SIG_PHASES];
    int skew_only[MAX_SIG_PHASES]; /* several users, no owners: a skew (first touchers) */
};

static inline int phase_of(const struct work *w, const struct npl_prof_sample *s)
{
    return w->in->nphases ? (int)s->phase : 0;
}

/* a sample row's weight: its thread's exposure weight (w->tw) in a phase where threads competed
 * for the armed pages; 1 in a phase one thread had alone (a pthreads main thread's serial pass:
 * its small exposure, waiting in join, must not multiply that pass's samples) */
static inline double sample_weight(const struct work *w, const struct npl_prof_sample *s)
{
    if (w->sw)
        return w->sw[s - w->in->samples];
    return w->tw && w->tmulti[phase_of(w, s)] ? w->tw[s->thread] : 1;
}

/* a sample row's accesses, normalised by its thread's exposure */
static inline double cnt(const struct work *w, const struct npl_prof_sample *s)
{
    return ((double)s->reads + (double)s->writes) * sample_weight(w, s);
}

static inline const struct npl_prof_sample *sample(const struct work *w, size_t i)
{
    return &w->in->samples[w->order[i]];
}

static inline uint64_t group_chunk(const struct work *w, size_t g)
{
    return sample(w, w->gstart[g])->chunk;
}

static inline double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* small maths without libm (the library does not link it) */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

__attribute__((format(printf, 3, 4))) void npl__cls_add_text(char *buf, size_t size,
                                                              const char *fmt, ...);
double npl__cls_root01(double x);
double npl__cls_min_samples(const struct npl_prof_input *in);
void npl__cls_fmt_list(const int *v, int n, char *buf, size_t size);
int npl__cls_evaluate(struct work *w, struct level *L, const struct placement *pl, double *loc);
double npl__cls_frac_over(const struct work *w, const double *loc, const unsigned char *set);
double npl__cls_phase_frac(const struct work *w, const double *loc, int p);
struct cand *npl__cls_add_cand(struct work *w, struct level *L, const char *policy, int family,
                             int scalable, int *dup);
int npl__cls_shape(struct work *w, struct level *L, const char *policy, const char *eval,
                   uint64_t period, int threads);
int npl__cls_explicit_fit(struct work *w, struct level *L, const unsigned char *set,
                          int *chunk_node, double *loc);
int npl__cls_chunk_owners(struct work *w, const unsigned char *set, int *owner, double *top_share,
                          int *top_thread);
int npl__cls_fit_shapes(struct work *w, const int *owner, struct fit *f);
int npl__cls_thread_shapes(struct work *w, struct level *L, const struct fit *f, int on_machine);
int npl__cls_node_shares(struct work *w, double *share, int *accessing);
int npl__cls_node_candidates(struct work *w, const struct fit *f);
int npl__cls_steady_shapes(struct work *w, const int *owner);
/* the shapes of fit f (thread-level blocks and periods, node-level cyclic_block): the second half
 * of npl__cls_steady_shapes, for a caller that has the fit already */
int npl__cls_fitted_shapes(struct work *w, const struct fit *f);
/* Periodic shapes whose nodes follow the owners' own cycle (cyclic_block:K@ORDER, ORDER the node
 * most of the chunks at each position of the cycle belong to) for each period f fitted on owner,
 * where that order is not ascending (the candidates' lists are): alternate pages whose first is
 * the second node's were fitted by no shape, and a node map scored held-out fills a chunk with
 * no sample in the other fold from its neighbour, the other parity (0.74 for an exact period). */
int npl__cls_ordered_cycles(struct work *w, const int *owner, const struct fit *f);
/* owner (ngroups entries) of each chunk over phase p alone */
int npl__cls_phase_owners(struct work *w, int p, int *owner);
const struct cand *npl__cls_best_of(const struct level *L, int family);
const struct cand *npl__cls_find(const struct level *L, const char *policy);
const struct cand *npl__cls_twin(const struct level *L, const struct cand *t);
void npl__cls_keep_candidates(struct work *w, struct npl_prof_advice *out);
double npl__cls_ft_known(const struct work *w, const unsigned char *set);
int npl__cls_phases_view(struct work *w, struct level *L, struct phase_view *v);
void npl__cls_phases_free(struct phase_view *v);
uint64_t npl__cls_edge_count(const struct work *w, const struct phase_view *v, int i, int j);
int npl__cls_try_phase_changing(struct work *w, const struct phase_view *pv, double sbest,
                              struct npl_prof_advice *out);
uint32_t npl__cls_phase_id(const struct work *w, int p);
double npl__cls_margin(double best);
int npl__cls_map_beats(double map, double shape);
int npl__cls_finish_explicit(struct work *w, struct npl_prof_advice *out, const int *chunk_node);
uint64_t npl__cls_fill_map(const struct work *w, const int *owner, int *out);
int npl__cls_even_split_map(const struct work *w, const int *owner, int by_node, int *map,
                          int *shared);

int npl__cls_oom(struct work *w); /* w->err "out of memory": -1 */
void npl__cls_fallback(struct npl_prof_advice *out); /* a map's fallback at another size */
/* the plan of `spec` on the machine, or (thread_level) on the one-node-per-thread topology */
int npl__cls_plan(struct work *w, const char *spec, int thread_level, const struct level *L,
                  npl_plan **plan);
/* Fill L->dist for a chunk; returns 1 when the chunk is "anywhere" (uniform), 0, or -1. */
int npl__cls_chunk_dist(struct work *w, struct level *L, const struct placement *pl,
                        uint64_t chunk);

/* What one classification gathers, step by step (classify.c calls the steps in order). */
struct verdict {
    int *owner;                  /* top thread of each sampled chunk (group), -1 */
    int *xnode, *xthr;           /* explicit owners per chunk: node index, thread */
    double *xloc, *tloc;         /* their local accesses per phase */
    double *share;               /* node shares of the accesses (fitted set) */
    int *accessing, nacc;        /* the nodes that access it (OS ids) */
    double top_share;            /* the top thread's share of the accesses */
    int top_thread;
    struct phase_view pv, tv;    /* owner changes between phases: on nodes, on threads */
    struct fit f;
    struct cand *xc;             /* the explicit map's candidate */
    double tx;                   /* thread exclusivity: the best a thread-level placement gets */
    double ftf;                  /* first touch over the fitted set; < 0 unknown */
    const struct cand *bestc;    /* the best node-level candidate */
    double best;
    double wr;                   /* write ratio */
    const struct cand *rule;     /* the rule's placement (NULL: none) */
    const struct cand *chosen;   /* after the guard */
    double fit;                  /* how well the pattern fits: confidence's second factor */
    int steady_from, steady_end; /* the steady state: its first phase, past its last */
    int recurring;               /* some phase was entered again and again (OpenMP regions) */
    int lone[2];                 /* the one-time lone passes at the start and the end, -1 */
    int split_from, split_end;   /* time windows: the stretch with the most samples when it held
                                  * too few to be the steady state alone; -1 */
    int owners_changed;          /* the steady state is that stretch: its threads and the rest's
                                  * own their chunks, the owners changed once */
    int once_after;              /* a one-time phase inside it left out */
    double before, left_out;     /* accesses outside it, left out inside it */
    double smax;                 /* the top node's share of the accesses */
    int even_plausible;          /* shared, no node dominates: even use is not ruled out */
    int read_across;             /* nodes whose fault samples read it across its length (read-
                                  * mostly only: npl__cls_read_across) */
    char facts[360], guard[480];
};

/* One node's threads dominate it (its best node-level placement reaches NPL_PROF_OWNED) by a
 * margin the samples can support: not where two nodes' threads or more read it across its
 * length in fault samples (those name the first toucher of each armed page). */
static inline int npl__cls_node_dominates(const struct verdict *v)
{
    return v->nacc > 1 && v->best >= NPL_PROF_OWNED && v->read_across < 2;
}

/* steps of classify(), each on the fitted set w->inF */
int npl__cls_read_across(struct work *w, struct verdict *v);
int npl__cls_steady_state(struct work *w, struct verdict *v);
void npl__cls_rules(struct work *w, struct verdict *v, struct npl_prof_advice *out);
void npl__cls_guard(struct work *w, struct verdict *v, struct npl_prof_advice *out);
int npl__cls_costs(struct work *w, struct verdict *v);
/* a spread's local fraction for shared data: each accessing node's share of the accesses x its
 * share of the pages (*pred -1: none) */
int npl__cls_spread_prediction(struct work *w, const struct verdict *v, const struct cand *c,
                               double *pred);
void npl__cls_safe_spread(struct work *w, struct verdict *v, struct npl_prof_advice *out);
void npl__cls_even_split_fix(struct work *w, struct verdict *v, struct npl_prof_advice *out);
#endif
