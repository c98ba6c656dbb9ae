/* SPDX-License-Identifier: BSD-3-Clause */
/* plan/plan.h - PURE (not installed): the policy value and its string syntax (policy.c); a
 * policy resolved against an explicit topology into an immutable plan, and a plan laid over an
 * array's geometry as a page->node map (plan.c). No system call, no environment: everything is
 * an argument, so it is unit tested on synthetic topologies. Below it: topology/, base/. */
#ifndef NPL_PLAN_H
#define NPL_PLAN_H

#include "base/base.h"
#include "topology/topology.h"

/* number of policy kinds (not public: a public count would freeze the enum) */
#define NPL_POLICY_KIND_COUNT (NPL_WEIGHTED + 1)

/* ---- policy (policy.c) ---- */
struct npl_policy {
    npl_policy_kind kind;
    int *nodes;   int nnodes;   /* explicit list (bind_all args / weighted nodes), OS ids */
    int *weights;               /* NPL_WEIGHTED, one per nodes[] */
    int *subset;  int nsubset;  /* "@..." restriction, OS ids */
    int local;                  /* "@local": the nodes of the CPUs this process may use */
    size_t block_pages, block_units;
    int threads;                /* 0: default */
    char pin[64];               /* pin strategy for bind_block ("" = compact) */
    uint64_t seed;
    int prime;                  /* 0: default (smallest prime > M) */
};
/* ---- the policy table (policy_table.c): one row per kind, what every layer asks of it ---- */
enum npl__policy_flag {
    NPL__POL_BLOCKS = 1u << 0,           /* cuts the array into blocks: pages=, units= (rows=,
                                            cols=, planes=), threads=, pin= */
    NPL__POL_POSITIONAL_PAGES = 1u << 1, /* cyclic_block:4 is pages=4 */
    NPL__POL_THREAD_NODES = 1u << 2,     /* block k on thread k's node (the plan pins threads) */
    NPL__POL_PINS = 1u << 3,             /* runs best with pinned threads */
    NPL__POL_NODE_LIST = 1u << 4,        /* kind:0,2 lists its nodes, in fill order */
    NPL__POL_WEIGHTS = 1u << 5,          /* kind:0=3,1=1 weighs its nodes */
    NPL__POL_SEED = 1u << 6,             /* seed= */
    NPL__POL_PRIME = 1u << 7,            /* p= (or positional): a prime above the node count */
};
/* The kernel's own form of a kind, one system call over a whole range (thread policies, lazy
 * placement, a map that is one run), or none: page by page */
enum npl__kernel_form {
    NPL__KERNEL_NONE,       /* page by page */
    NPL__KERNEL_DEFAULT,    /* MPOL_DEFAULT: first touch */
    NPL__KERNEL_BIND,       /* MPOL_PREFERRED (one node) or MPOL_BIND: the same nodes for every page */
    NPL__KERNEL_INTERLEAVE, /* MPOL_INTERLEAVE */
};
/* The shape a kind's map has, as the classifier proposes it (its candidate families) */
enum npl__shape {
    NPL__SHAPE_NONE,            /* first touch: no map */
    NPL__SHAPE_ONE_NODE,        /* every page on one node (or a fill order) */
    NPL__SHAPE_SPREAD,          /* page after page over the nodes */
    NPL__SHAPE_WEIGHTED,        /* spread by weights */
    NPL__SHAPE_THREAD_BLOCKS,   /* each thread's static share on its node */
    NPL__SHAPE_THREAD_PERIODIC, /* blocks of a given size dealt to the threads (npl__plan_shape) */
    NPL__SHAPE_NODE_BLOCKS,     /* blocks of a given size dealt to the nodes */
    NPL__SHAPE_SPREAD_OTHER,    /* spread by another rule (skewed, prime, hashed): not proposed */
    NPL__SHAPE_COUNT
};
struct npl_map;
struct npl__policy_row {
    const char *name;
    unsigned flags; /* enum npl__policy_flag */
    enum npl__kernel_form kernel;
    enum npl__shape shape;
    int (*node_of)(const struct npl_map *m, size_t page); /* the page -> node map */
};
const struct npl__policy_row *npl__policy_row(npl_policy_kind k); /* NULL: no such kind */
int npl__policy_kind_of(const char *name);                        /* -1: no such name */
/* the kinds that cut the array into blocks (block size, thread count, pin order apply) */
int npl__is_block_kind(npl_policy_kind k);
/* A bind_block of an explicit thread count (block k with thread k) follows `strategy`, any pin
 * strategy of npl_pin_order (a CPU list too, which the policy syntax cannot carry): 1 done, 0 not
 * such a policy (unchanged), -1 EINVAL (a strategy too long to hold) */
int npl__policy_follow_pin(npl_policy *p, const char *strategy);

/* ---- plans (plan.c) ---- */
/* A policy resolved once against a topology (immutable, reference counted). */
struct npl_plan {
    _Atomic int refs;
    npl_policy *pol;            /* the policy it was resolved from */
    npl_policy_kind kind;
    int m;  int *nodes;         /* nodes spread over, OS ids, policy order (validated) */
    int nthreads;               /* block policies: threads of the static schedule */
    int *thread_node;           /* bind_block: node of each thread */
    int *wprefix;  int wtotal;  /* weighted */
    size_t block_pages, block_units;
    uint64_t seed;
    int prime;
    int usable_nodes;           /* usable nodes of the topology (<= 1: placement is trivial) */
};
npl_plan *npl__plan_ref(const npl_plan *pl); /* one more reference; npl_plan_free drops it */
/* bind_all over nodes[0..n) on topology t: the plan of migrations and explicit node lists, which
 * need no thread count (validated: EINVAL/EXDEV as for any policy) */
int npl__plan_bind(npl_plan **out, const npl_topo *t, const int *nodes, int n);
/* the plan's shape: its kind's, bind_block with a block size periodic */
enum npl__shape npl__plan_shape(const npl_plan *pl);

/* A plan laid over an array's geometry: any page's node in O(1). */
struct npl_map {
    const struct npl_plan *plan;
    size_t page_size, npages, unit_bytes, nunits;
    size_t origin; /* bytes from the start of unit 0 to the start of page 0 (a part: < a page) */
};
int npl__map_init(struct npl_map *m, const npl_plan *pl, const npl_shape *shape, size_t bytes,
                  size_t page_size);
/* A part of an array (npl_apply_part): units [first, first+nunits) of unit_bytes bytes each, its
 * pages starting `origin` bytes after the part's first unit. Its map counts pages from the part's
 * first page and units (rows/columns/planes: block sizes, thread schedules) from its first unit. */
struct npl_part {
    size_t unit_bytes, nunits, origin;
};
int npl__map_init_part(struct npl_map *m, const npl_plan *pl, const struct npl_part *part,
                       size_t bytes, size_t page_size);
int npl__map_node(const struct npl_map *m, size_t page);
/* The block of a page under a block policy (npl__is_block_kind): non-decreasing in page, and the
 * node is the same for every page of a block */
size_t npl__map_block(const struct npl_map *m, size_t page);

#endif
