/* internal.h - shared declarations of the library's layers (not installed).
 *
 * Layers, data flowing one way:
 *   util.c      lists, errors, counters           (pure)
 *   topology.c  hwloc -> struct npl_topo          (reads the machine once)
 *   policy.c    policy + shape + topo -> page map (pure)
 *   threads.c   topo + strategy -> CPU order      (pure) ; pinning (syscalls)
 *   sys.c       the only file that makes NUMA system calls, counted
 *   place.c     page map -> few system calls      (the placement engine)
 *   array.c     registry of library arrays
 *   query.c     where pages are; intended vs actual
 */
#ifndef NPL_INTERNAL_H
#define NPL_INTERNAL_H

#include "numaplace.h"
#include <stdarg.h>
#include <stdatomic.h>

#define NPL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* number of policy kinds (not public: a public count would freeze the enum) */
#define NPL_POLICY_KIND_COUNT (NPL_WEIGHTED + 1)

/* ---- errors (util.c) ---- */
/* Set errno and the thread's message; always returns -1. */
int npl__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void npl__debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* As npl__fail for outcomes that are answers, not failures ("not set", "not armed"): errno and
 * the message are set, NUMAPLACE_DEBUG prints nothing. */
int npl__note(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- lists (util.c) ---- */
/* The largest CPU or node id a list may name: an input bound (a list like "0-4000000000" must
 * not allocate gigabytes), not a set size; Linux's ids are far smaller. Sets are hwloc bitmaps at
 * the API; ordered lists (policy nodes, pin orders) are int arrays from npl__parse_list. */
#define NPL__MAX_ID (1 << 22)
/* Parse "0-3,8,10-11" into a malloc'ed array of ints (order kept, ranges expanded).
 * Rejects negatives, values > max_value, duplicates, empty items. what names the list in errors. */
int npl__parse_list(const char *s, int max_value, const char *what, int **out, int *n);
/* Format an int list compactly ("0-3,8") into buf. */
void npl__format_list(const int *v, int n, char *buf, size_t size);
int npl__parse_u64(const char *s, uint64_t *out); /* full-string decimal, 0/-1 */
int npl__in_list(int v, const int *list, int n); /* 1 if v is one of list[0..n) */
int *npl__dup_ints(const int *v, int n);          /* malloc'ed copy; NULL for n <= 0 or no memory */
int npl__is_prime(long n);
int npl__next_prime(long n); /* smallest prime >= n */
double npl__now(void);

/* ---- topology (topology.c) ---- */
struct npl_cpu_entry {
    int os;       /* PU OS id */
    int core;     /* core logical index (machine-wide) */
    int smt;      /* rank of this PU inside its core (0 = first hyperthread) */
    int node;     /* node index of its local node, -1 if none */
    int package;  /* package (socket) logical index, 0 if hwloc shows none */
    int llc;      /* last-level cache logical index, the package's if hwloc shows no cache */
    int allowed;
};
struct npl_node_entry {
    int os;
    int allowed;
    uint64_t mem, free;
    int ncpus, ncpus_allowed;
};
struct npl_topo {
    int nnodes;
    struct npl_node_entry *nodes; /* ascending OS id */
    int *dist;                    /* nnodes*nnodes */
    int ncpus;
    struct npl_cpu_entry *cpus;   /* ascending OS id */
    int synthetic;
    /* data/unified cache sizes above the first allowed PU, [level] for levels 1..5 (0: none),
     * recorded from hwloc while building (npl_topo_cache_size) */
    uint64_t cache_bytes[6];
};
/* Usable node OS ids (allowed, with memory), ascending; returns count. */
int npl__topo_usable_nodes(const npl_topo *t, int *out, int max);
int npl__topo_node_usable(const npl_topo *t, int idx);
int npl__topo_cpu_index(const npl_topo *t, int os_cpu);
/* Create a thread that pins itself as thread n of strategy before start(arg) runs, through
 * real_create (pthread_create, or the next one in the interposer): the one trampoline of the
 * library and of preload/. Returns 0 or a pthread error number. */
typedef int (*npl__create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n);
/* CPU affinity snapshot taken when the library was loaded (before any pinning). */
int npl__initial_affinity(int *cpus, int max);

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
/* ---- plans (plan.c: pure) ---- */
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

/* ---- defaults (defaults.c: the one layer that reads the environment and the config) ---- */
int npl__default_policy(npl_policy **out); /* NUMAPLACE_POLICY, [policy] default, first_touch */
int npl__default_threads(void);            /* OMP_NUM_THREADS, or 0 (the topology's cores) */
/* pol (NULL: the default policy) resolved on this process's topology with those defaults */
int npl__plan_default(npl_plan **out, const npl_policy *pol);

/* ---- system calls (sys.c): raw, counted; return -1+errno ---- */
struct npl_counter { size_t syscalls; };
long npl__mbind(struct npl_counter *c, void *addr, size_t len, int mode, const int *nodes, int n,
                unsigned flags);
long npl__set_mempolicy(struct npl_counter *c, int mode, const int *nodes, int n);
long npl__get_mempolicy_node(struct npl_counter *c, const void *addr, int *node);
long npl__move_pages(struct npl_counter *c, unsigned long count, void **pages, const int *nodes,
                     int *status, int flags);
int npl__madvise(struct npl_counter *c, void *addr, size_t len, int advice);
/* Private anonymous read-write memory that never holds a transparent huge page (MAP_FAILED +
 * errno on failure). Mapped PROT_NONE, advised MADV_NOHUGEPAGE, then made read-write, so it never
 * merges with a read-write neighbour while it could take THPs: under THP "always" a neighbour's
 * first touch would fault a 2 MiB page straddling both, populating our pages on the toucher's
 * node, and a later migration of either side moves all 512 pages (docs/RELIABILITY.md). */
void *npl__map_nohuge(size_t len);
int npl__mems_allowed(int *nodes, int max); /* get_mempolicy(MPOL_F_MEMS_ALLOWED) */
int npl__can_locate_thp(void); /* pagemap frames and kpageflags readable (hugepages.c) */
long npl__migrate_pages(struct npl_counter *c, int pid, const int *from, int nfrom, const int *to,
                        int nto);
/* Every NUMA system call of the library is made by one of the functions above and counted here
 * by kind (npl_get_stats); the total also counts madvise. */
enum { NPL__SYS_MBIND, NPL__SYS_SET_MEMPOLICY, NPL__SYS_GET_MEMPOLICY, NPL__SYS_MOVE_PAGES,
       NPL__SYS_MIGRATE_PAGES, NPL__SYS_KINDS };
extern _Atomic uint64_t npl__total_syscalls;
extern _Atomic uint64_t npl__numa_syscalls[NPL__SYS_KINDS];

/* npl__place flag, internal: the range may hold transparent huge pages made before (a raw range,
 * an array that was NPL_F_THP). Page-granular placement splits them first: a base page of a THP
 * moves with all 512, so move_pages would report pages moved that the next move drags away. */
#define NPL__F_SPLIT_THP 0x80000000u
/* The flags a caller may pass: any other bit (NPL__F_SPLIT_THP included) is EINVAL at the public
 * entry points, never silently ignored or taken for an internal flag. */
#define NPL__F_PUBLIC (NPL_F_STRICT | NPL_F_NO_PROTECT | NPL_F_THP | NPL_F_HUGETLB)
#define NPL__CHECK_FLAGS(flags, fn)                                                              \
    ((flags) & ~NPL__F_PUBLIC ? npl__fail(EINVAL, "%s: unknown flag bits 0x%x", (fn),            \
                                          (flags) & ~NPL__F_PUBLIC)                              \
                              : 0)
/* npl__place flag, internal: change no mapping of the range (no madvise, no mbind): pages that
 * fault in follow the range's policy and then move (npl_place_pages with pages left alone
 * between listed ones: a policy per stretch would split the mapping twice per stretch) */
#define NPL__F_KEEP_VMAS 0x40000000u

/* ---- placement (place.c) ---- */
int npl__place(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
               unsigned flags, int fresh, struct npl_place_stats *st);
/* npl__place of a part of an array already in use (its map: npl__map_init_part) */
int npl__place_part(void *addr, size_t len, const npl_plan *plan, const struct npl_part *part,
                    unsigned flags, struct npl_place_stats *st);
void npl__stats_add(const struct npl_place_stats *st);
/* npl__place with the node of each base page given: nodes[i] in plan's node list, or < 0 to
 * leave page i alone (plan: bind_all over the nodes used, for the touch order and the protecting
 * policy, set per stretch of listed pages); base pages only, not fresh (src/place_batch.c) */
int npl__place_explicit(void *addr, size_t len, const npl_plan *plan, const int *nodes,
                        unsigned flags, struct npl_place_stats *st);
/* Move present pages of a range to the nodes of pol's map (no fault-in, no policy change). */
struct npl_migrate_result;
int npl__migrate(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
                 struct npl_migrate_result *res);
int npl__node_plan(int node, npl_plan **out); /* bind_all:<node> on this process's topology */
/* 0, or -1 with the first failure's errno when some pages could not move */
int npl__migrate_verdict(const struct npl_migrate_result *res);
void npl__migrate_stats_add(const struct npl_migrate_result *res, size_t page_size);
void npl__stats_arrays(long arrays, long bytes);
/* fork handlers (src/array.c): take (1) or release (0) the statistics locks */
void npl__stats_fork_lock(int lock);
void npl__migrate_fork_lock(int lock);


#endif
