/*
 * numaplace.h - put memory pages and threads where a parallel program needs them.
 *
 * One public header for the core library. Groups:
 *   - errors        every function returns -1 (or NULL) and sets errno; npl_last_error() adds text
 *   - topology      nodes, CPUs, memory, distances, what this process may use, capabilities
 *   - policies      MAi's memory policies as values, one string syntax, the pure page->node map
 *   - arrays        allocate 1D/2D/3D arrays or place raw ranges under a policy; re-place; free
 *   - queries       where pages really are; intended vs actual
 *   - threads       pin the n-th thread to the n-th allowed CPU of a strategy
 *   - statistics    what the library did (pages placed, system calls)
 *
 * errno conventions (as hwloc): EINVAL bad argument, ENOMEM no memory, ENOSYS the kernel or a
 * container denies the NUMA system calls, EXDEV the request names a node or CPU that exists but
 * that this process may not use (cpuset/cgroup/affinity mask) or that has no memory/CPUs,
 * ENOENT a pointer the library does not know, EOVERFLOW a size that overflows.
 *
 * The library never prints (except with NUMAPLACE_DEBUG=1, to stderr) and never exits.
 * All functions are thread-safe unless stated otherwise.
 */
#ifndef NUMAPLACE_H
#define NUMAPLACE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define NPL_VERSION_MAJOR 0
#define NPL_VERSION_MINOR 1
#define NPL_VERSION_PATCH 0
#define NPL_VERSION "0.1.0"

/** Version string of the library that is linked (may differ from NPL_VERSION at build time). */
const char *npl_version(void);

/* ------------------------------------------------------------------------------------------ */
/** @name Errors */

/** Text describing the calling thread's last failure in this library ("" if none).
 *  The pointer stays valid until the thread's next failing call. */
const char *npl_last_error(void);

/* ------------------------------------------------------------------------------------------ */
/** @name Topology */

typedef struct npl_topo npl_topo;

/** What this kernel/container lets the library do (probed once, by real system calls). */
struct npl_support {
    unsigned char get_mempolicy;  /**< get_mempolicy(2) works (else ENOSYS/EPERM) */
    unsigned char set_mempolicy;  /**< set_mempolicy(2) works */
    unsigned char mbind;          /**< mbind(2) works */
    unsigned char move_pages;     /**< move_pages(2) works (query and move) */
    unsigned char preferred_many; /**< MPOL_PREFERRED_MANY (Linux 5.15) */
    unsigned char populate_write; /**< MADV_POPULATE_WRITE (Linux 5.14) */
    unsigned char thp;            /**< transparent huge pages configured */
    unsigned char hugetlb_2m;     /**< 2 MiB hugetlb pages exist in the kernel */
};

/** Flags for npl_topo_load(). */
#define NPL_TOPO_ALL_NODES 0x1u /**< keep nodes/CPUs outside the allowed sets (marked, unused) */

/** Discover this machine with hwloc, restricted to what the process may use: its CPU affinity
 *  (sched_getaffinity, e.g. taskset) and its cpuset's memory nodes (Mems_allowed).
 *  On success *out is a new topology. */
int npl_topo_load(npl_topo **out);

/** A topology from an hwloc synthetic description, e.g. "pack:2 numa:2 core:4 pu:2" or
 *  "pack:2 numa:2(memory=1GB indexes=0,2,4,6) core:2 pu:1" (non-contiguous node ids).
 *  Every node and CPU is allowed; distances default to 10 local, 20 remote. No system call
 *  is made with it: it drives the pure functions (maps, pin orders) in tests and tools. */
int npl_topo_load_synthetic(npl_topo **out, const char *description);

/** Restrict the allowed CPUs and/or memory nodes of a topology, as a cpuset or taskset would.
 *  Lists use OS ids in "0-3,8" syntax; NULL leaves that side as it is. */
int npl_topo_restrict(npl_topo *topo, const char *cpu_list, const char *node_list);

/** Set the distance matrix (row-major, n*n, n = npl_topo_node_count(topo, 1)). */
int npl_topo_set_distances(npl_topo *topo, const int *matrix, int n);

void npl_topo_destroy(npl_topo *topo);

/** The shared topology of this process (loaded on first use; never destroy it). NULL+errno on
 *  failure. */
const npl_topo *npl_topo_self(void);

/** Number of nodes: all nodes the topology knows (all=1), or the usable ones (all=0: allowed
 *  and with memory). Node indexes below count in the same order as OS ids (ascending). */
int npl_topo_node_count(const npl_topo *topo, int all);
/** OS id of node index idx (0 <= idx < npl_topo_node_count(topo,1)); -1+EINVAL if out of range. */
int npl_topo_node_id(const npl_topo *topo, int idx);
/** Index of the node with OS id os_id, -1+EINVAL if there is no such node. */
int npl_topo_node_index(const npl_topo *topo, int os_id);

struct npl_node_info {
    int os_id;                 /**< kernel node number */
    int allowed;               /**< in this process's Mems_allowed */
    int ncpus;                 /**< local CPUs (all of them) */
    int ncpus_allowed;         /**< local CPUs this process may run on */
    uint64_t memory_bytes;     /**< total memory (0: memory-less node) */
    uint64_t free_bytes;       /**< free memory when the topology was loaded (0 if unknown) */
};
int npl_topo_node_info(const npl_topo *topo, int idx, struct npl_node_info *out);

/** Distance (SLIT, 10 = local) between node indexes a and b; -1+EINVAL if out of range. */
int npl_topo_distance(const npl_topo *topo, int a, int b);

/** Number of allowed CPUs (PUs) and of allowed cores. */
int npl_topo_cpu_count(const npl_topo *topo);
int npl_topo_core_count(const npl_topo *topo);
/** Node OS id of CPU cpu_os_id, -1+EINVAL if unknown. */
int npl_topo_cpu_node(const npl_topo *topo, int cpu_os_id);
/** Allowed CPUs of node index idx, written to cpus (up to max); returns their number. */
int npl_topo_node_cpus(const npl_topo *topo, int idx, int *cpus, int max);
/** Size of the level-`level` data/unified cache (1..5) above the first allowed CPU, from hwloc;
 *  topo NULL: this process's. Returns 0, or -1 with errno EINVAL (bad level/NULL bytes) or
 *  ENOENT (no such cache). */
int npl_topo_cache_size(const npl_topo *topo, int level, uint64_t *bytes);

/** Capabilities of the running kernel (probed once per process). Never NULL. */
const struct npl_support *npl_get_support(void);

/* ------------------------------------------------------------------------------------------ */
/** @name Policies (pure: no system call) */

typedef enum {
    NPL_FIRST_TOUCH = 0, /**< leave it to the kernel: the first thread that writes a page */
    NPL_BIND_ALL,        /**< all on the listed nodes, filling the first before the next */
    NPL_BIND_BLOCK,      /**< block k (static schedule of T threads) on the node of thread k */
    NPL_CYCLIC,          /**< page i on node i mod M */
    NPL_CYCLIC_BLOCK,    /**< block b on node b mod M */
    NPL_SKEW_MAPP,       /**< page i on node (i + floor(i/M) + 1) mod M */
    NPL_PRIME_MAPP,      /**< cyclic over P >= M virtual nodes, overflow re-cycled over M */
    NPL_RANDOM,          /**< page i on a uniform, seeded, reproducible node */
    NPL_RANDOM_BLOCK,    /**< block b on a uniform, seeded, reproducible node */
    NPL_WEIGHTED,        /**< interleave with per-node weights, e.g. 3:1 */
    NPL_POLICY_KIND_COUNT
} npl_policy_kind;

typedef struct npl_policy npl_policy;

/** Parse a policy string: NAME[:PARAM[,PARAM]...][@NODES]
 *    first_touch | bind_all[:NODES] | bind_block[:threads=T][,pin=compact|scatter] |
 *    cyclic | cyclic_block[:K|pages=K|units=K] | skew_mapp | prime_mapp[:P] |
 *    random[:seed=S] | random_block[:K][,seed=S] | weighted:NODE=W[,NODE=W]...
 *  Blocks of K pages, K units (rows/columns/planes, see npl_shape), or, when no size is
 *  given, derived from a static schedule of T threads (threads=T; default: OMP_NUM_THREADS,
 *  else the number of allowed cores). @NODES restricts the policy to a node subset ("0-3,6").
 *  Errors: -1, errno EINVAL, npl_last_error() names the bad part. */
int npl_policy_parse(npl_policy **out, const char *str);

/** A policy of the given kind over nodes (OS ids; nodes==NULL: all usable nodes). */
int npl_policy_create(npl_policy **out, npl_policy_kind kind, const int *nodes, int nnodes);
int npl_policy_set_block_pages(npl_policy *pol, size_t pages);
int npl_policy_set_block_units(npl_policy *pol, size_t units);
int npl_policy_set_threads(npl_policy *pol, int nthreads, const char *pin_strategy);
int npl_policy_set_seed(npl_policy *pol, uint64_t seed);
int npl_policy_set_prime(npl_policy *pol, int prime);
/** Weights for NPL_WEIGHTED: weights[i] pages on nodes[i] per round (all > 0). */
int npl_policy_set_weights(npl_policy *pol, const int *nodes, const int *weights, int n);

npl_policy *npl_policy_dup(const npl_policy *pol);
void npl_policy_free(npl_policy *pol);
npl_policy_kind npl_policy_get_kind(const npl_policy *pol);
const char *npl_policy_kind_name(npl_policy_kind kind);
/** Canonical string of the policy (parseable again). Returns the length it needs, like
 *  snprintf, or -1. */
int npl_policy_format(const npl_policy *pol, char *buf, size_t size);
/** MAi's default: 1 if threads should be pinned for this policy (bind_all, bind_block),
 *  0 if they are best left to the OS scheduler (cyclic and random families). */
int npl_policy_wants_pinning(const npl_policy *pol);

/** How an array is laid out: element size, 1 to 3 dimensions and the storage order. The
 *  distribution unit (a "row") is the contiguous slab of the outermost dimension: a row of a
 *  row-major (C) 2D array, a column of a column-major (Fortran) one, a plane of a 3D array. */
typedef enum { NPL_ROW_MAJOR = 0, NPL_COL_MAJOR = 1 } npl_order;
typedef struct npl_shape {
    size_t elem_size; /**< bytes per element (>= 1) */
    int ndims;        /**< 1, 2 or 3 */
    size_t dims[3];   /**< extents, dims[0] is the first index (rows for 2D) */
    npl_order order;
} npl_shape;

/** Total bytes of a shape; -1 with errno EOVERFLOW when the product overflows, EINVAL when a
 *  dimension or the element size is 0 or ndims is outside 1..3. */
int npl_shape_bytes(const npl_shape *shape, size_t *bytes);

#define NPL_NODE_ANY (-1) /**< "the kernel decides" (first_touch) */

/** The pure page->node map: node OS ids of pages first..first+count-1 of an array of `bytes`
 *  bytes laid out as `shape` (NULL: bytes of 1-byte elements), with page_size-byte pages,
 *  under `pol` on topology `topo` (NULL: npl_topo_self()). Page indexes count from the start
 *  of the array. Writes NPL_NODE_ANY for first_touch. */
int npl_policy_map(const npl_policy *pol, const npl_topo *topo, const npl_shape *shape,
                   size_t bytes, size_t page_size, size_t first, size_t count, int *nodes);

/* ------------------------------------------------------------------------------------------ */
/** @name Arrays and placement */

/** Placement flags. */
#define NPL_F_STRICT      0x1u /**< fail (ENOMEM) instead of leaving pages on other nodes */
#define NPL_F_NO_PROTECT  0x2u /**< let automatic NUMA balancing move the pages later */
#define NPL_F_THP         0x4u /**< allow transparent huge pages (blocks become 2 MiB units) */
#define NPL_F_HUGETLB     0x8u /**< explicit 2 MiB hugetlb pages from each node's pool (npl_alloc_array:
                                    falls back to base pages when no pool can serve the array, unless
                                    NPL_F_STRICT; npl_array_info says what was obtained) */

/** Allocate `bytes` bytes placed under `pol` (NULL: NUMAPLACE_POLICY from the environment, else
 *  the config file's [policy] default, else first_touch). The memory is zero-filled, page-aligned and registered as a library
 *  array. NULL+errno on failure. */
void *npl_alloc(size_t bytes, const npl_policy *pol);
/** Allocate an array of the given shape placed under `pol`. */
void *npl_alloc_array(const npl_shape *shape, const npl_policy *pol, unsigned flags);
/** Release a library array. -1+ENOENT for a pointer the library does not know. */
int npl_free(void *array);

/** Re-place a whole library array under a new policy: pages already touched move, data kept. */
int npl_apply(void *array, const npl_policy *pol, unsigned flags);
/** Re-place units [first_unit, first_unit+nunits) of an array (composed policies). The map of
 *  that part counts its pages from the part's first page. Unit boundaries are rounded to
 *  pages: a page belongs to the part holding its first byte. */
int npl_apply_part(void *array, size_t first_unit, size_t nunits, const npl_policy *pol,
                   unsigned flags);

/** Place a raw page-aligned range (not registered): memory already written moves, memory not
 *  yet touched is faulted in on its node. shape may be NULL (bytes). pol NULL: as npl_alloc. -1+EFAULT if part of the range is not mapped, EACCES if not writable
 *  (nothing is touched then). */
int npl_place_range(void *addr, size_t len, const npl_policy *pol, const npl_shape *shape,
                    unsigned flags);

/** What one placement did. */
struct npl_place_stats {
    size_t pages;       /**< pages in the range */
    size_t placed;      /**< pages on the node the map says */
    size_t misplaced;   /**< pages elsewhere (node full, or not present) after placement */
    size_t moved;       /**< pages moved by move_pages */
    size_t syscalls;    /**< NUMA/memory system calls made */
    double seconds;     /**< wall time */
};

struct npl_array_info {
    void *base;
    size_t bytes;
    size_t page_size;
    npl_shape shape;
    char policy[128];               /**< canonical string of the last whole-array policy */
    struct npl_place_stats last;    /**< the last placement */
    int hugetlb;                    /**< 1: backed by 2 MiB hugetlb pages, 0: base (or THP) pages */
    int hugetlb_fallback;           /**< 1: NPL_F_HUGETLB was asked but no pool could serve it */
    /* migrations of this array (numaplace/migrate.h and re-placements by npl_apply) */
    uint64_t migrate_calls;
    uint64_t pages_migrated;        /**< moved by npl_migrate_* and npl_apply/npl_apply_part */
    uint64_t bytes_migrated;
    uint64_t migrate_failures;      /**< pages that could not move */
    double migrate_seconds;
};
int npl_array_info(const void *array, struct npl_array_info *out);

/** Set the calling thread's kernel memory policy from a policy that has a kernel equivalent:
 *  cyclic (MPOL_INTERLEAVE over its nodes), bind_all (one node: MPOL_PREFERRED, several:
 *  MPOL_BIND), first_touch (MPOL_DEFAULT). Later page faults of this thread follow it, threads it
 *  creates inherit it, and it survives exec (what `numaplace run` uses for static programs).
 *  t: the topology the policy's nodes are checked against (NULL: this process's).
 *  Returns 0, or -1 with errno EINVAL (other policy kinds, bad nodes), EXDEV (a node outside the
 *  allowed set or without memory), ENOSYS/EPERM (set_mempolicy denied). */
int npl_set_thread_policy(const npl_topo *t, const npl_policy *pol);

/* ------------------------------------------------------------------------------------------ */
/** @name Queries */

/** Node OS id of each page overlapping [addr, addr+len), or a negative errno for pages that
 *  are not present (-ENOENT; kernels before 6.x may say -EFAULT for a page never touched) or
 *  not mapped (-EFAULT). Batched move_pages(2). Returns the number of pages. */
int npl_query_pages(const void *addr, size_t len, int *nodes, size_t max_pages);
/** Per-node page counts of a range: counts[i] for node index i of npl_topo_self(), plus
 *  *absent pages not present. counts has npl_topo_node_count(npl_topo_self(), 1) entries. */
int npl_histogram(const void *addr, size_t len, size_t *counts, size_t *absent);
/** What a range really got, per node index of npl_topo_self(): huge[i] 2 MiB pages (hugetlb, or
 *  transparent huge pages) on node i, base[i] base pages on node i outside them, *absent (may be
 *  NULL) base pages not present. Only 2 MiB units wholly inside the range count as huge. THP are
 *  located through /proc/self/pagemap and /proc/kpageflags (CAP_SYS_ADMIN): without them the
 *  function returns 1 and counts THP as base pages; otherwise 0. -1+errno on failure. */
int npl_histogram_huge(const void *addr, size_t len, size_t *huge, size_t *base, size_t *absent);

struct npl_check {
    size_t pages;     /**< pages of the array */
    size_t placed;    /**< on the intended node */
    size_t misplaced; /**< present on another node */
    size_t absent;    /**< not present (never touched, or swapped out) */
};
/** Intended vs actual for a library array: compares every page with the policy's map. */
int npl_check(const void *array, struct npl_check *out);

/* ------------------------------------------------------------------------------------------ */
/** @name Threads */

/** Pin strategies: "compact" (fill a node, one thread per core first), "scatter"
 *  (round-robin over nodes), or an explicit CPU list "0,4,8-11". Only allowed CPUs are used.
 *  Thread n gets entry n of the order; when there are more threads than entries it wraps
 *  around (entry n mod count). */
/** Write the CPU order of a strategy on a topology (NULL: npl_topo_self()): returns the number
 *  of entries (<= max written). Pure. */
int npl_pin_order(const npl_topo *topo, const char *strategy, int *cpus, int max);
/** The CPU thread n of nthreads gets under a strategy (pure). */
int npl_pin_cpu(const npl_topo *topo, const char *strategy, int n);
/** Pin the calling thread as thread n: returns the CPU it is now bound to, or -1+errno. */
int npl_pin_self(const char *strategy, int n);
/** The CPU and node the calling thread runs on now (either pointer may be NULL). */
int npl_where_am_i(int *cpu, int *node);

/** pthread equivalent of the OpenMP helper: create a thread that pins itself before it runs
 *  start(arg). Threads are numbered in creation order from 1 (the main thread is 0; pin it
 *  with npl_pin_self(strategy, 0)). npl_pthread_reset() restarts the numbering. */
int npl_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                       void *arg, const char *strategy);
void npl_pthread_reset(void);

/* ------------------------------------------------------------------------------------------ */
/** @name Statistics */

struct npl_stats {
    uint64_t arrays_live;      /**< library arrays allocated and not freed */
    uint64_t bytes_live;
    uint64_t placements;       /**< placement operations */
    uint64_t pages_placed;     /**< pages placed (faulted in on their node, or moved) */
    uint64_t pages_moved;      /**< of which moved by move_pages */
    uint64_t pages_misplaced;  /**< left elsewhere (node full...) */
    uint64_t syscalls;         /**< NUMA/memory system calls made by the library */
    double seconds;            /**< wall time spent placing */
};
/** Process-wide statistics. */
int npl_get_stats(struct npl_stats *out);

/* ------------------------------------------------------------------------------------------ */
/** @name Platform config file (one format for the project: docs/CONFIG.md)
 *  "key = value" lines in [machine] (nodes, cpus), [threads] (pin = compact|scatter|LIST|auto|
 *  none), [policy] (default = POLICY STRING, threshold = BYTES) and [factors] (nodes, latency_ns.N,
 *  bandwidth_mbs.N, measured: written by `numaplace measure`). Errors: -1, errno EINVAL (EFBIG for
 *  files over 1 MiB), npl_last_error() names the file and line. */

typedef struct npl_config npl_config;

/** An empty config. */
int npl_config_new(npl_config **out);
/** Parse config text (len bytes; name is used in messages). Unknown sections or keys, bad values,
 *  duplicate keys, binary data, truncated matrix rows and contradictions between sections are
 *  errors. */
int npl_config_parse(npl_config **out, const char *text, size_t len, const char *name);
/** Load a file; path NULL: $NUMAPLACE_CONFIG, else ~/.config/numaplace/config, else
 *  /etc/numaplace.conf, else an empty config (npl_config_source() == ""). A file that exists but
 *  cannot be read is an error naming it: its open(2) errno (EACCES...), EISDIR for a directory,
 *  EINVAL for a FIFO, device or socket (never waited on), EFBIG over 1 MiB. */
int npl_config_load(npl_config **out, const char *path);
/** This process's config, loaded once at first use as npl_config_load(NULL); NULL+errno if that
 *  file is bad. Never free it. */
const npl_config *npl_config_self(void);
void npl_config_free(npl_config *c);
/** The file it came from ("" if none). */
const char *npl_config_source(const npl_config *c);
/** The value of [section] key, NULL+ENOENT if not set. */
const char *npl_config_get(const npl_config *c, const char *section, const char *key);
/** Set [section] key = value (validated as when parsed). */
int npl_config_set(npl_config *c, const char *section, const char *key, const char *value);
/** The config as text (parseable again), like snprintf: returns the length it needs. */
int npl_config_format(const npl_config *c, char *buf, size_t size);
/** An int list value ("0-3,8"): the number of entries (those beyond max not written), 0 if not
 *  set, -1 on error. */
int npl_config_list(const npl_config *c, const char *section, const char *key, int *out, int max);
/** The measured factors: n nodes (written to nodes), latency and bandwidth n*n row-major (row =
 *  CPU node, column = memory node; -1 where a row is missing). Returns n (0: none measured). */
int npl_config_factors(const npl_config *c, int *nodes, double *latency, double *bandwidth,
                       int max);
/** Whether threads should be pinned for a policy, and how: [threads] pin (default auto = MAi's
 *  rule: compact pinning for bind policies, none for spreading ones; none = never). Returns 1 and
 *  writes the strategy, or 0. */
int npl_config_pin_for(const npl_config *c, const npl_policy *pol, char *strategy, size_t size);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* NUMAPLACE_H */
