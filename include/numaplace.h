/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace.h
 * @brief numaplace.h - put memory pages and threads where a parallel program needs them.
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
 *
 * Functions returning int return 0 (or the count/value they describe) on success and -1 with
 * errno set on failure; functions returning a pointer return NULL with errno set on failure.
 * The other public headers: numaplace/migrate.h (migration, next-touch),
 * numaplace/replicate.h (per-node replicas), numaplace/omp.h (OpenMP helpers),
 * numaplace/profile.h (per-array policies from a measured profile: npl_alloc_auto).
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

/** @defgroup npl_versioning Version
 *  The version of the headers (compile time) and of the linked library (run time). The shared
 *  library is libnumaplace.so.0 (SONAME), its symbols are at version nodes NUMAPLACE_0.2 and
 *  NUMAPLACE_0.3 (the functions added in 0.3: npl_fault_handle and the profile functions).
 *  @{ */
/* NPL_VERSION_MAJOR, _MINOR, _PATCH and NPL_VERSION ("MAJOR.MINOR.PATCH"), generated from
 * the project's version at configure time: #if NPL_VERSION_MINOR >= 3 selects the 0.3 API */
#include <numaplace/version.h>

/** Version string of the library that is linked (may differ from NPL_VERSION at build time).
 *  @return a static string such as "0.3.0"; never NULL, sets no errno. */
const char *npl_version(void);
/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_errors Errors
 *  Every function reports failure by its return value (-1 or NULL) and errno; the calling
 *  thread's last failure is also described in words by npl_last_error().
 *  @{ */

/** Text describing the calling thread's last failure in this library ("" if none).
 *  The pointer stays valid until the thread's next failing call.
 *  @return the message; never NULL, sets no errno. */
const char *npl_last_error(void);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_topology Topology
 *  Nodes, CPUs, memory, distances, what this process may use, and the kernel's capabilities.
 *  Nodes are addressed by index (0..count-1, ascending OS ids) or by OS id, as each function
 *  says. A topology is not modified by the query functions, which may be called concurrently.
 *  @{ */

/** A machine's topology (opaque): from npl_topo_load(), npl_topo_load_synthetic() or
 *  npl_topo_self(). */
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
    unsigned char thp_locate;     /**< transparent huge pages can be located page by page
                                       (/proc/self/pagemap frames and /proc/kpageflags readable:
                                       CAP_SYS_ADMIN); without it npl_histogram_huge() counts
                                       them as base pages */
};

/** Flags for npl_topo_load(). */
#define NPL_TOPO_ALL_NODES 0x1u /**< keep nodes/CPUs outside the allowed sets (marked, unused) */

/** Discover this machine with hwloc, restricted to what the process may use: its CPU affinity
 *  (sched_getaffinity, e.g. taskset) and its cpuset's memory nodes (Mems_allowed).
 *  On success *out is a new topology (free it with npl_topo_destroy()).
 *  @return 0, or -1 with errno EINVAL (out is NULL, or the machine has no NUMA node), ENOMEM,
 *          or the errno of a failing hwloc call. */
int npl_topo_load(npl_topo **out);

/** A topology from an hwloc synthetic description, e.g. "pack:2 numa:2 core:4 pu:2" or
 *  "pack:2 numa:2(memory=1GB indexes=0,2,4,6) core:2 pu:1" (non-contiguous node ids).
 *  Every node and CPU is allowed; distances default to 10 local, 20 remote. No system call
 *  is made with it: it drives the pure functions (maps, pin orders) in tests and tools.
 *  At most 8192 PUs (the product of the level arities): hwloc's build of larger ones takes
 *  minutes.
 *  @return 0, or -1 with errno EINVAL (NULL argument, bad description, more than 8192 PUs),
 *          ENOMEM. */
int npl_topo_load_synthetic(npl_topo **out, const char *description);

/** Restrict the allowed CPUs and/or memory nodes of a topology, as a cpuset or taskset would.
 *  Lists use OS ids in "0-3,8" syntax; NULL leaves that side as it is.
 *  @return 0, or -1 with errno EINVAL (NULL topology, malformed list, a CPU or node that does
 *          not exist), ENOMEM. */
int npl_topo_restrict(npl_topo *topo, const char *cpu_list, const char *node_list);

/** Set the distance matrix (row-major, n*n, n = npl_topo_node_count(topo, 1); rows and columns
 *  in ascending node OS id order).
 *  @return 0, or -1 with errno EINVAL (n is not the node count, NULL matrix, a distance <= 0). */
int npl_topo_set_distances(npl_topo *topo, const int *matrix, int n);

/** Free a topology from npl_topo_load() or npl_topo_load_synthetic() (NULL: nothing). Never
 *  pass npl_topo_self()'s. */
void npl_topo_destroy(npl_topo *topo);

/** The shared topology of this process (loaded on first use; never destroy it).
 *  @return the topology, or NULL with the errno of npl_topo_load() (ENODEV if it gave none);
 *          a failure is remembered: later calls fail the same way. */
const npl_topo *npl_topo_self(void);

/** Number of nodes: all nodes the topology knows (all=1), or the usable ones (all=0: allowed
 *  and with memory). Every function of the API names nodes and CPUs by their OS ids (the
 *  kernel's and numactl's numbers); indexes 0..count-1 exist only to iterate, through
 *  npl_topo_node_id().
 *  @return the number of nodes, or -1 with errno EINVAL (NULL topology). */
int npl_topo_node_count(const npl_topo *topo, int all);
/** OS id of the idx-th node in ascending order (0 <= idx < npl_topo_node_count(topo,1)), to
 *  iterate.
 *  @return the OS id, or -1 with errno EINVAL (NULL topology, idx out of range). */
int npl_topo_node_id(const npl_topo *topo, int idx);
/** The largest node OS id of the topology: arrays indexed by node id need this + 1 entries.
 *  @return the id, or -1 with errno EINVAL (NULL topology). */
int npl_topo_max_node_id(const npl_topo *topo);
/** Index (iteration order) of the node with OS id os_id.
 *  @return the node index, or -1 with errno EINVAL (NULL topology, no such node). */
int npl_topo_node_index(const npl_topo *topo, int os_id);

/** One node of a topology (npl_topo_node_info()). */
struct npl_node_info {
    int os_id;                 /**< kernel node number */
    int allowed;               /**< in this process's Mems_allowed */
    int ncpus;                 /**< local CPUs (all of them) */
    int ncpus_allowed;         /**< local CPUs this process may run on */
    uint64_t memory_bytes;     /**< total memory (0: memory-less node) */
    uint64_t free_bytes;       /**< free memory when the topology was loaded (0 if unknown) */
};
/** Describe node `node` (OS id) in *out.
 *  @return 0, or -1 with errno EINVAL (NULL argument, no such node). */
int npl_topo_node_info(const npl_topo *topo, int node, struct npl_node_info *out);

/** Distance (SLIT, 10 = local) between nodes a and b (OS ids).
 *  @return the distance, or -1 with errno EINVAL (NULL topology, no such node). */
int npl_topo_distance(const npl_topo *topo, int a, int b);

/** Number of allowed CPUs (PUs).
 *  @return the count, or -1 with errno EINVAL (NULL topology). */
int npl_topo_cpu_count(const npl_topo *topo);
/** Number of allowed cores (cores with at least one allowed PU).
 *  @return the count, or -1 with errno EINVAL (NULL topology). */
int npl_topo_core_count(const npl_topo *topo);
/** hwloc's bitmap (hwloc_bitmap_t is `struct hwloc_bitmap_s *`): CPU and node sets are hwloc
 *  bitmaps, so they mix with hwloc calls and have no size limit. Include <hwloc.h> to make one. */
struct hwloc_bitmap_s;
/** The allowed CPUs (OS ids) of node `node`, or of the whole topology when node is -1, into
 *  `set` (an hwloc bitmap the caller allocated; it is overwritten).
 *  @return 0, or -1 with errno EINVAL (NULL argument, no such node) or ENOMEM. */
int npl_topo_cpuset(const npl_topo *topo, int node, struct hwloc_bitmap_s *set);
/** The usable nodes (OS ids: allowed and with memory) of the topology into `set` (overwritten).
 *  @return 0, or -1 with errno EINVAL (NULL argument) or ENOMEM. */
int npl_topo_nodeset(const npl_topo *topo, struct hwloc_bitmap_s *set);
/** Node OS id of CPU cpu_os_id.
 *  @return the node OS id, or -1 with errno EINVAL (NULL topology, unknown CPU, CPU without a
 *          node). */
int npl_topo_cpu_node(const npl_topo *topo, int cpu_os_id);
/** Allowed CPUs (OS ids) of node `node` (OS id), written to cpus (up to max).
 *  @return their number (may exceed max: only max are written), or -1 with errno EINVAL (NULL
 *          topology, no such node, cpus NULL with max > 0, max < 0). */
int npl_topo_node_cpus(const npl_topo *topo, int node, int *cpus, int max);
/** Size of the level-`level` data/unified cache (1..5) above the first allowed CPU, from hwloc
 *  (recorded when the topology was loaded; topo NULL: this process's).
 *  @return 0 and *bytes, or -1 with errno EINVAL (bad level, NULL bytes) or ENOENT (no such
 *          cache). */
int npl_topo_cache_size(const npl_topo *topo, int level, uint64_t *bytes);

/** Capabilities of the running kernel (probed once per process).
 *  @return the capabilities; never NULL, sets no errno. */
const struct npl_support *npl_get_support(void);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_policies Policies
 *  MAi's memory policies as values, one string syntax, and the pure page->node map (no system
 *  call in this group).
 *  @{ */

/** The memory policies (MAi's, plus weighted interleave). */
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
    NPL_WEIGHTED         /**< interleave with per-node weights, e.g. 3:1 */
} npl_policy_kind;

/** A memory policy (opaque): from npl_policy_parse() or npl_policy_create(); free it with
 *  npl_policy_free(). */
typedef struct npl_policy npl_policy;

/** Parse a policy string: NAME[:PARAM[,PARAM]...][\@NODES]
 *    first_touch | bind_all[:NODES] | bind_block[:threads=T][,pin=compact|scatter] |
 *    cyclic | cyclic_block[:K|pages=K|units=K] | skew_mapp | prime_mapp[:P] |
 *    random[:seed=S] | random_block[:K][,seed=S] | weighted:NODE=W[,NODE=W]...
 *  Blocks of K pages, K units (rows/columns/planes, see npl_shape), or, when no size is
 *  given, derived from a static schedule of T threads (threads=T; default: OMP_NUM_THREADS,
 *  else the number of allowed cores). \@NODES restricts the policy to a node subset ("0-3,6");
 *  \@local to the nodes that hold a CPU this process may use (an MPI rank's nodes), resolved
 *  when a plan is made (EXDEV there if none has memory).
 *  On success *out is a new policy.
 *  @return 0, or -1 with errno EINVAL (NULL argument, bad syntax or value; npl_last_error()
 *          names the bad part), ENOMEM. */
int npl_policy_parse(npl_policy **out, const char *str);

/** A policy of the given kind over nodes (OS ids; nodes==NULL: all usable nodes).
 *  The nodes are checked when the policy is used (npl_policy_map(), placement), not here.
 *  @return 0 with a new policy in *out, or -1 with errno EINVAL (out NULL, bad kind, nnodes < 0,
 *          nodes NULL with nnodes > 0, an invalid node list), ENOMEM. */
int npl_policy_create(npl_policy **out, npl_policy_kind kind, const int *nodes, int nnodes);
/** Blocks of `pages` pages (block policies: bind_block, cyclic_block, random_block); replaces a
 *  block size in units.
 *  @return 0, or -1 with errno EINVAL (NULL policy, not a block policy, pages == 0 or over 2^40,
 *          the most a policy string can say). */
int npl_policy_set_block_pages(npl_policy *pol, size_t pages);
/** Blocks of `units` units (rows/columns/planes of the shape, see npl_shape; block policies);
 *  replaces a block size in pages.
 *  @return 0, or -1 with errno EINVAL (NULL policy, not a block policy, units == 0 or over
 *          2^40). */
int npl_policy_set_block_units(npl_policy *pol, size_t units);
/** The static schedule of a block policy's blocks when no block size is set: nthreads threads
 *  (0: the default, OMP_NUM_THREADS or the number of allowed cores) pinned with pin_strategy
 *  ("compact" or "scatter"; NULL or "": the default).
 *  @return 0, or -1 with errno EINVAL (NULL or not a block policy, nthreads < 0 or > 2^20, another
 *          strategy). */
int npl_policy_set_threads(npl_policy *pol, int nthreads, const char *pin_strategy);
/** The seed of random and random_block (same seed, same map).
 *  @return 0, or -1 with errno EINVAL (NULL policy, another kind). */
int npl_policy_set_seed(npl_policy *pol, uint64_t seed);
/** The number P of virtual nodes of prime_mapp: a prime, at least the node count when the
 *  policy is mapped (else EINVAL then); not set: the smallest prime above the node count.
 *  @return 0, or -1 with errno EINVAL (NULL policy, another kind, prime not a prime or over
 *          2^20, the most a policy string can say). */
int npl_policy_set_prime(npl_policy *pol, int prime);
/** Weights for NPL_WEIGHTED: weights[i] pages on nodes[i] per round (all > 0).
 *  @return 0, or -1 with errno EINVAL (NULL policy or argument, not weighted, n <= 0, a weight
 *          outside 1..65536, a negative or duplicate node), ENOMEM. */
int npl_policy_set_weights(npl_policy *pol, const int *nodes, const int *weights, int n);

/** A copy of a policy (free it with npl_policy_free()).
 *  @return the copy, or NULL with errno EINVAL (pol NULL), ENOMEM. */
npl_policy *npl_policy_dup(const npl_policy *pol);
/** Free a policy (NULL: nothing). */
void npl_policy_free(npl_policy *pol);
/** The kind of a policy.
 *  @return the kind; NPL_FIRST_TOUCH for NULL (no errno). */
npl_policy_kind npl_policy_get_kind(const npl_policy *pol);
/** Whether the kernel applies a policy to a whole process by itself, one set_mempolicy for
 *  every later page (npl_set_thread_policy(), `numactl`, a statically linked program under
 *  `numaplace run`): first_touch (MPOL_DEFAULT), bind_all (MPOL_PREFERRED or MPOL_BIND) and
 *  cyclic (MPOL_INTERLEAVE) do; the others are placed by numaplace, page by page or block by
 *  block (npl_alloc(), npl_apply(), `numaplace run`'s interposer).
 *  @return 1 or 0; -1 with errno EINVAL for NULL. */
int npl_policy_process_wide(const npl_policy *pol);
/** The name of a kind as in policy strings ("cyclic_block"...).
 *  @return a static string; "invalid" for a value outside the enum (no errno). */
const char *npl_policy_kind_name(npl_policy_kind kind);
/** Canonical string of the policy (parseable again), written to buf (size bytes, truncated and
 *  NUL-terminated like snprintf).
 *  @return the length it needs, like snprintf, or -1 with errno EINVAL (NULL policy, buf NULL
 *          with size > 0). */
int npl_policy_format(const npl_policy *pol, char *buf, size_t size);
/** MAi's default: 1 if threads should be pinned for this policy (bind_all, bind_block),
 *  0 if they are best left to the OS scheduler (cyclic and random families).
 *  @return 1 or 0 (0 for NULL; no errno). */
int npl_policy_wants_pinning(const npl_policy *pol);

/** How an array is laid out: element size, 1 to 3 dimensions and the storage order. The
 *  distribution unit (a "row") is the contiguous slab of the outermost dimension: a row of a
 *  row-major (C) 2D array, a column of a column-major (Fortran) one, a plane of a 3D array. */
typedef enum { NPL_ROW_MAJOR = 0, NPL_COL_MAJOR = 1 } npl_order;
/** @var NPL_ROW_MAJOR
 *  C order: the first index is the outermost (a 2D array is dims[0] rows of dims[1] elements).
 *  @var NPL_COL_MAJOR
 *  Fortran order: the first index is the innermost (a 2D array is dims[1] columns). */
/** An array's shape (see npl_order for the distribution unit). */
typedef struct npl_shape {
    size_t elem_size; /**< bytes per element (>= 1) */
    int ndims;        /**< 1, 2 or 3 */
    size_t dims[3];   /**< extents, dims[0] is the first index (rows for 2D) */
    /** storage order: NPL_ROW_MAJOR (C) or NPL_COL_MAJOR (Fortran) */
    npl_order order;
} npl_shape;

/** Total bytes of a shape; -1 with errno EOVERFLOW when the product overflows, EINVAL when a
 *  dimension or the element size is 0 or ndims is outside 1..3.
 *  @return 0 with the size in *bytes, or -1 with errno EINVAL, EOVERFLOW. */
int npl_shape_bytes(const npl_shape *shape, size_t *bytes);

#define NPL_NODE_ANY (-1) /**< "the kernel decides" (first_touch) */

/** The pure page->node map: node OS ids of pages first..first+count-1 of an array of `bytes`
 *  bytes laid out as `shape` (NULL: bytes of 1-byte elements), with page_size-byte pages,
 *  under `pol` on topology `topo` (NULL: npl_topo_self()). Page indexes count from the start
 *  of the array. Writes NPL_NODE_ANY for first_touch.
 *  @return 0 with count node ids in nodes, or -1 with errno EINVAL (NULL argument, a bad shape,
 *          pages outside the array, a policy node this topology does not have), EXDEV (a policy
 *          node that is not allowed or has no memory), EOVERFLOW, ENOMEM. */
int npl_policy_map(const npl_policy *pol, const npl_topo *topo, const npl_shape *shape,
                   size_t bytes, size_t page_size, size_t first, size_t count, int *nodes);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_plans Plans: a policy resolved once against a topology
 *  A plan fixes everything a policy leaves open: the nodes it spreads over (validated against the
 *  topology: they exist, are allowed and have memory), the thread count of block schedules, the
 *  node of each thread of bind_block (from the pin order), the prime of prime_mapp. It is
 *  immutable. An array keeps the plans it was placed with: npl_check(), migration and the CLI
 *  read them, so a later change of OMP_NUM_THREADS, NUMAPLACE_POLICY or the config file changes
 *  nothing for it. Functions taking a policy instead resolve it on npl_topo_self() with the
 *  process's defaults (OMP_NUM_THREADS, read at that moment).
 *  @{ */

/** A resolved policy (opaque, immutable). */
typedef struct npl_plan npl_plan;

/** Resolve `pol` on topology `topo` (required: pass npl_topo_self() for this machine, or a
 *  synthetic or restricted topology). threads: the thread count of block policies that do not
 *  give one (threads=T); 0 means the topology's allowed cores. Pure: no system call, no
 *  environment.
 *  @return 0 and *out, or -1 with errno EINVAL (NULL argument, a node that does not exist, prime
 *          smaller than the nodes, threads < 0), EXDEV (a node outside the allowed set or
 *          without memory, no allowed CPU for bind_block), ENOMEM. */
int npl_plan_create(npl_plan **out, const npl_policy *pol, const npl_topo *topo, int threads);
/** Release a plan (arrays placed with it keep their own reference). NULL is ignored. */
void npl_plan_free(npl_plan *plan);
/** The policy the plan was resolved from.
 *  @return the policy (owned by the plan), or NULL for a NULL plan. */
const npl_policy *npl_plan_policy(const npl_plan *plan);
/** Number of nodes the plan spreads over.
 *  @return the count (0 for first_touch), or -1 with errno EINVAL (NULL plan). */
int npl_plan_node_count(const npl_plan *plan);
/** OS id of the plan's node i (policy order).
 *  @return the id, or -1 with errno EINVAL (NULL plan, i out of range). */
int npl_plan_node(const npl_plan *plan, int i);
/** Thread count of a block policy's static schedule.
 *  @return the count (0 for other policies), or -1 with errno EINVAL (NULL plan). */
int npl_plan_threads(const npl_plan *plan);
/** The nodes the plan spreads over into `set` (an hwloc bitmap, overwritten; empty for
 *  first_touch).
 *  @return 0, or -1 with errno EINVAL (NULL argument) or ENOMEM. */
int npl_plan_nodeset(const npl_plan *plan, struct hwloc_bitmap_s *set);
/** The plan as text, "POLICY nodes=LIST[ threads=T]", like snprintf.
 *  @return the length it needs, or -1 with errno EINVAL (NULL plan, buf NULL with size > 0). */
int npl_plan_format(const npl_plan *plan, char *buf, size_t size);
/** The plan's page->node map, as npl_policy_map(). Pure.
 *  @return 0, or -1 with errno EINVAL (a range outside the array, a bad shape, NULL nodes) or
 *          EOVERFLOW (a shape that overflows). */
int npl_plan_map(const npl_plan *plan, const npl_shape *shape, size_t bytes, size_t page_size,
                 size_t first, size_t count, int *nodes);
/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_arrays Arrays and placement
 *  Allocate 1D/2D/3D arrays or place raw ranges under a policy; re-place; free.
 *  @{ */

/* Placement flags (the flags argument of npl_alloc_array(), npl_apply(), npl_place_range()). */
#define NPL_F_STRICT      0x1u /**< fail (ENOMEM) instead of leaving pages on other nodes */
#define NPL_F_NO_PROTECT  0x2u /**< let automatic NUMA balancing move the pages later */
#define NPL_F_THP         0x4u /**< allow transparent huge pages (blocks become 2 MiB units) */
#define NPL_F_HUGETLB     0x8u /**< explicit 2 MiB hugetlb pages from each node's pool (npl_alloc_array:
                                    falls back to base pages when no pool can serve the array, unless
                                    NPL_F_STRICT; npl_array_info says what was obtained) */

/** Allocate `bytes` bytes placed under `pol` (NULL: NUMAPLACE_POLICY from the environment, else
 *  the config file's [policy] default, else first_touch). The memory is zero-filled,
 *  page-aligned and registered as a library array (release it with npl_free()). Same as
 *  npl_alloc_array() with a 1D shape of 1-byte elements and no flags.
 *  @return the array, or NULL with errno as npl_alloc_array(). */
void *npl_alloc(size_t bytes, const npl_policy *pol);
/** Allocate an array of the given shape placed under `pol` (NULL: as npl_alloc()) with
 *  NPL_F_* flags. The memory is zero-filled, page-aligned and registered as a library array
 *  (release it with npl_free()).
 *  @return the array, or NULL with errno EINVAL (bad shape or policy, policy from the
 *          environment or config file that does not parse), EOVERFLOW (size overflows), ENOMEM
 *          (no memory; with NPL_F_STRICT also: a node cannot hold its pages, or no hugetlb pool
 *          can serve NPL_F_HUGETLB), ENOSYS (NUMA system calls denied; NPL_F_HUGETLB|NPL_F_STRICT
 *          where hugetlb is not supported), EXDEV (a policy node outside the allowed set or
 *          without memory). */
void *npl_alloc_array(const npl_shape *shape, const npl_policy *pol, unsigned flags);
/** Release a library array (from npl_alloc() or npl_alloc_array()).
 *  @return 0 (also for NULL, which does nothing), or -1 with errno ENOENT for a pointer the
 *          library does not know. */
int npl_free(void *array);

/** Re-place a whole library array under a new policy: pages already touched move, data kept.
 *  The array keeps its page size: NPL_F_HUGETLB is implied for a hugetlb array and ignored for
 *  a base-page one.
 *  @return 0, or -1 with errno EINVAL (NULL policy, bad policy for this array), ENOENT (not a
 *          library array), EXDEV, ENOMEM, ENOSYS, EOVERFLOW as npl_alloc_array(). */
int npl_apply(void *array, const npl_policy *pol, unsigned flags);
/** Re-place units [first_unit, first_unit+nunits) of an array (composed policies). The map of
 *  that part counts its pages from the part's first page, and its units (block sizes in units,
 *  the static schedule of block policies) from first_unit: units are the array's rows, columns
 *  or planes. Unit boundaries are rounded to the array's pages (2 MiB for a hugetlb array): a
 *  page belongs to the part holding its first byte; a part holding no page start (units smaller
 *  than a page) has nothing to place and returns 0.
 *  @return 0, or -1 with errno EINVAL (NULL policy, units outside the array), ENOENT (not a
 *          library array), and the errors of npl_apply(). */
int npl_apply_part(void *array, size_t first_unit, size_t nunits, const npl_policy *pol,
                   unsigned flags);

/** Place a raw page-aligned range (not registered): memory already written moves, memory not
 *  yet touched is faulted in on its node. shape may be NULL (bytes). pol NULL: as npl_alloc.
 *  -1+EFAULT if part of the range is not mapped, EACCES if not writable (nothing is touched
 *  then).
 *  @return 0, or -1 with errno EFAULT, EACCES (above), EINVAL (range empty or not page-aligned,
 *          bad shape or policy), EXDEV, ENOMEM, ENOSYS, EOVERFLOW as npl_alloc_array(). */
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

/** What a library array is and what was done to it (npl_array_info()). */
struct npl_array_info {
    /** start of the array (the pointer npl_alloc*() returned) */
    void *base;
    /** bytes asked for */
    size_t bytes;
    /** bytes per page of its mapping (base page or 2 MiB hugetlb page) */
    size_t page_size;
    /** its shape (1D bytes for npl_alloc()) */
    npl_shape shape;
    struct npl_place_stats last;    /**< the last placement */
    int hugetlb;                    /**< 1: backed by 2 MiB hugetlb pages, 0: base (or THP) pages */
    int hugetlb_fallback;           /**< 1: NPL_F_HUGETLB was asked but no pool could serve it */
    /* migrations of this array (numaplace/migrate.h and re-placements by npl_apply) */
    /** migration calls on this array */
    uint64_t migrate_calls;
    uint64_t pages_migrated;        /**< moved by npl_migrate_* and npl_apply/npl_apply_part */
    /** bytes of the pages migrated */
    uint64_t bytes_migrated;
    uint64_t migrate_failures;      /**< pages that could not move */
    /** wall time spent migrating it */
    double migrate_seconds;
};
/** Describe a library array.
 *  @return 0, or -1 with errno EINVAL (out NULL), ENOENT (not a library array). */
int npl_array_info(const void *array, struct npl_array_info *out);
/** Canonical string of the policy of the array's last whole-array placement, like snprintf
 *  (at most size bytes are written).
 *  @return the length it needs, or -1 with errno ENOENT (not a library array) or EINVAL (buf
 *          NULL with size > 0). */
int npl_array_policy(const void *array, char *buf, size_t size);

/** Allocate an array of the given shape placed under `plan` (on the plan's topology).
 *  @return the array, or NULL with errno as npl_alloc_array(). */
void *npl_alloc_planned(const npl_shape *shape, const npl_plan *plan, unsigned flags);
/** Re-place a library array under `plan`, as npl_apply().
 *  @return 0, or -1 with errno as npl_apply(). */
int npl_apply_planned(void *array, const npl_plan *plan, unsigned flags);
/** Place a raw range under `plan`, as npl_place_range().
 *  @return 0, or -1 with errno as npl_place_range(). */
int npl_place_range_planned(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
                            unsigned flags);
/** Place a raw page-aligned range page by page: page i of [addr, addr+len) goes to node
 *  `nodes[i]` (OS id), or is left as it is (not touched, not moved) when `nodes[i]` is negative
 *  (NPL_NODE_ANY). One pass for the whole list (the range is checked once), however many runs
 *  of pages on one node it has (column-wise or irregular layouts). Pages already written move,
 *  the others are faulted in and moved. When every entry names a node, the range gets one kernel
 *  policy over the nodes the list uses, as npl_place_range() (automatic NUMA balancing leaves it
 *  alone); when some pages are left alone, no mapping of the range is changed (no madvise, no
 *  mbind: a policy per run would split the mapping per run), as npl_migrate_range().
 *  `nodes` has ceil(len / page size) entries. flags: NPL_F_STRICT, NPL_F_NO_PROTECT.
 *  @return 0 (also when every entry is negative), or -1 with errno EFAULT, EACCES (as
 *          npl_place_range()), EINVAL (nodes NULL, range empty or not page-aligned, a node that
 *          does not exist, other flags), EXDEV (a node outside the allowed set or
 *          without memory), ENOMEM, ENOSYS, EOVERFLOW as npl_place_range(). */
int npl_place_pages(void *addr, size_t len, const int *nodes, unsigned flags);
/** A new reference to the plan of a library array's last whole-array placement (release it
 *  with npl_plan_free()).
 *  @return 0 and *out, or -1 with errno EINVAL (out NULL), ENOENT (not a library array). */
int npl_array_plan(const void *array, npl_plan **out);

/** Set the calling thread's kernel memory policy from a policy that has a kernel equivalent:
 *  cyclic (MPOL_INTERLEAVE over its nodes), bind_all (one node: MPOL_PREFERRED, several:
 *  MPOL_BIND), first_touch (MPOL_DEFAULT). Later page faults of this thread follow it, threads it
 *  creates inherit it, and it survives exec (what `numaplace run` uses for static programs).
 *  t: the topology the policy's nodes are checked against (NULL: this process's).
 *  @return 0, or -1 with errno EINVAL (other policy kinds, bad nodes), EXDEV (a node outside the
 *          allowed set or without memory), ENOSYS/EPERM (set_mempolicy denied). */
int npl_set_thread_policy(const npl_topo *t, const npl_policy *pol);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_queries Queries
 *  Where pages really are; intended vs actual placement.
 *  @{ */

/** Node OS id of each page overlapping [addr, addr+len), or a negative errno for pages that
 *  are not present (-ENOENT; kernels before 6.x may say -EFAULT for a page never touched) or
 *  not mapped (-EFAULT). Batched move_pages(2).
 *  @return the number of pages, or -1 with errno EINVAL (empty range, NULL nodes, more pages than
 *          max_pages), EOVERFLOW (range wraps around), ENOSYS (move_pages(2) denied), ENOMEM, or
 *          the errno of a failing move_pages(2) (EPERM...). */
int npl_query_pages(const void *addr, size_t len, int *nodes, size_t max_pages);
/** Per-node page counts of a range: counts[n] pages on the node with OS id n, plus *absent (may
 *  be NULL) pages not present or not mapped. counts has npl_topo_max_node_id(npl_topo_self()) + 1
 *  entries. Costs follow the mapped pages, not the length of the range.
 *  @return 0, or -1 with errno as npl_query_pages(). */
int npl_histogram(const void *addr, size_t len, size_t *counts, size_t *absent);
/** What a range really got, per node (arrays indexed by node OS id, with
 *  npl_topo_max_node_id(npl_topo_self()) + 1 entries): huge[n] 2 MiB pages (hugetlb, or
 *  transparent huge pages) on node n, base[n] base pages on node n outside them, *absent (may be
 *  NULL) base pages not present. Only 2 MiB units wholly inside the range count as huge. THP are
 *  located through /proc/self/pagemap and /proc/kpageflags: where npl_get_support()->thp_locate
 *  is 0 they are counted as base pages.
 *  @return 0, or -1 with errno EINVAL (empty range, NULL huge or base), EOVERFLOW (a range that
 *          wraps or is too large), ENOMEM, and the errors of npl_query_pages(). */
int npl_histogram_huge(const void *addr, size_t len, size_t *huge, size_t *base, size_t *absent);

/** Intended vs actual placement of a library array (npl_check()). */
struct npl_check {
    size_t pages;     /**< pages of the array */
    size_t placed;    /**< on the intended node */
    size_t misplaced; /**< present on another node */
    size_t absent;    /**< not present (never touched, or swapped out) */
};
/** Intended vs actual for a library array: compares every page with the policy's map.
 *  @return 0, or -1 with errno EINVAL (out NULL), ENOENT (not a library array), ENOMEM, and the
 *          errors of npl_query_pages(). */
int npl_check(const void *array, struct npl_check *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_threads Threads
 *  Pin the n-th thread to the n-th allowed CPU of a strategy. Pin strategies: "compact" (fill a
 *  node, one thread per core first), "scatter" (round-robin over nodes), an explicit CPU list
 *  "0,4,8-11", or likwid-style affinity domains joined with '@': "S<k>:LIST" (package k),
 *  "M<k>:LIST" (NUMA node with OS id k), "C<k>:LIST" (last-level cache k), "N:LIST" (the
 *  machine), "E:DOMAIN:COUNT[:CHUNK:STRIDE]" (COUNT CPUs, CHUNK in a row every STRIDE
 *  positions); LIST counts positions among the domain's allowed CPUs, physical cores first.
 *  Only allowed CPUs are used. Thread n gets entry n of the order; when there are more threads
 *  than entries it wraps around (entry n mod count).
 *  @{ */

/** Write the CPU order of a strategy on a topology (NULL: npl_topo_self()): returns the number
 *  of entries (<= max written). Pure.
 *  @return the number of entries, or -1 with errno EINVAL (unknown strategy or domain, bad CPU
 *          list, a domain position past its end, a CPU named twice, max < 0 or cpus NULL with
 *          max > 0), EXDEV (a listed CPU, or a whole domain, this process may not use), ENOMEM,
 *          or npl_topo_self()'s errno. */
int npl_pin_order(const npl_topo *topo, const char *strategy, int *cpus, int max);
/** The CPU thread n gets under a strategy (pure; entry n mod count of npl_pin_order()).
 *  @return the CPU's OS id, or -1 with errno EINVAL (n < 0, or as npl_pin_order()), EXDEV,
 *          ENOMEM. */
int npl_pin_cpu(const npl_topo *topo, const char *strategy, int n);
/** Pin the calling thread as thread n of the strategy on this process's topology.
 *  @return the CPU it is now bound to, or -1 with errno as npl_pin_thread(). */
int npl_pin_self(const char *strategy, int n);
/** Pin the calling thread as thread n of the strategy on topology `topo` (NULL: this process's;
 *  a restricted topology restricts the CPUs used).
 *  @return the CPU it is now bound to, or -1 with errno EINVAL (bad strategy, n < 0, a synthetic
 *          topology), EXDEV (no allowed CPU, or a listed CPU outside the allowed set), ENOMEM,
 *          or sched_setaffinity(2)'s errno. */
int npl_pin_thread(const npl_topo *topo, const char *strategy, int n);
/** The CPU and node the calling thread runs on now (either pointer may be NULL).
 *  @return 0, or -1 with getcpu(2)'s errno. */
int npl_where_am_i(int *cpu, int *node);

/** pthread equivalent of the OpenMP helper: create a thread that pins itself before it runs
 *  start(arg). Threads are numbered in creation order from 1 (the main thread is 0; pin it
 *  with npl_pin_self(strategy, 0)). npl_pthread_reset() restarts the numbering.
 *  @return 0, or -1 with errno EINVAL (NULL thread or start, bad strategy), EXDEV, ENOMEM, the
 *          errno of npl_topo_self(), or pthread_create(3)'s error number (EAGAIN...). */
int npl_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                       void *arg, const char *strategy);
/** Restart npl_pthread_create()'s thread numbering at 1. */
void npl_pthread_reset(void);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_statistics Statistics
 *  What the library did in this process (pages placed, system calls).
 *  @{ */

/** Process-wide statistics of the library (npl_get_stats()). */
struct npl_stats {
    uint64_t arrays_live;      /**< library arrays allocated and not freed */
    /** bytes of the live library arrays */
    uint64_t bytes_live;
    uint64_t placements;       /**< placement operations */
    uint64_t pages_placed;     /**< pages placed (faulted in on their node, or moved) */
    uint64_t pages_moved;      /**< of which moved by move_pages */
    uint64_t pages_misplaced;  /**< left elsewhere (node full...) */
    uint64_t syscalls;         /**< NUMA/memory system calls made by the library */
    double seconds;            /**< wall time spent placing */
    uint64_t mbind;            /**< of those: mbind(2) calls */
    uint64_t set_mempolicy;    /**< set_mempolicy(2) calls */
    uint64_t get_mempolicy;    /**< get_mempolicy(2) calls */
    uint64_t move_pages;       /**< move_pages(2) calls (queries and moves) */
    uint64_t migrate_pages;    /**< migrate_pages(2) calls */
};
/** Process-wide statistics.
 *  @return 0, or -1 with errno EINVAL (out NULL). */
int npl_get_stats(struct npl_stats *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/** @defgroup npl_config_file Platform config file
 *  One format for the project: docs/CONFIG.md.
 *  "key = value" lines in [machine] (nodes, cpus), [threads] (pin = compact|scatter|LIST|auto|
 *  none), [policy] (default = POLICY STRING, threshold = BYTES) and [factors] (nodes, latency_ns.N,
 *  bandwidth_mbs.N, measured: written by `numaplace measure`). Errors: -1, errno EINVAL (EFBIG for
 *  files over 1 MiB), npl_last_error() names the file and line.
 *  @{ */

/** A parsed platform config (opaque): from npl_config_new(), npl_config_parse(),
 *  npl_config_load() or npl_config_self(). */
typedef struct npl_config npl_config;

/** An empty config (free it with npl_config_free()).
 *  @return 0 with it in *out, or -1 with errno EINVAL (out NULL), ENOMEM. */
int npl_config_new(npl_config **out);
/** Parse config text (len bytes; name is used in messages). Unknown sections or keys, bad values,
 *  duplicate keys, binary data, truncated matrix rows and contradictions between sections are
 *  errors.
 *  @return 0 with a new config in *out, or -1 with errno EINVAL (NULL argument, any of these
 *          errors; npl_last_error() names the line), EFBIG (over 1 MiB), ENOMEM. */
int npl_config_parse(npl_config **out, const char *text, size_t len, const char *name);
/** Load a file; path NULL: $NUMAPLACE_CONFIG, else ~/.config/numaplace/config, else
 *  /etc/numaplace.conf, else an empty config (npl_config_source() == ""). A file that exists but
 *  cannot be read is an error naming it: its open(2) errno (EACCES...), EISDIR for a directory,
 *  EINVAL for a FIFO, device or socket (never waited on), EFBIG over 1 MiB.
 *  @return 0 with a new config in *out, or -1 with errno as above, EIO (read error), or as
 *          npl_config_parse(). */
int npl_config_load(npl_config **out, const char *path);
/** This process's config, loaded once at first use as npl_config_load(NULL); NULL+errno if that
 *  file is bad. Never free it.
 *  @return the config, or NULL with the errno of that load (EINVAL if none); a failure is
 *          remembered. */
const npl_config *npl_config_self(void);
/** Free a config (NULL: nothing). Never pass npl_config_self()'s. */
void npl_config_free(npl_config *c);
/** The file it came from ("" if none).
 *  @return the path, or ""; never NULL (also for a NULL config), sets no errno. */
const char *npl_config_source(const npl_config *c);
/** The value of [section] key.
 *  @return the value (valid until the config changes or is freed), or NULL with errno EINVAL
 *          (NULL argument), ENOENT (not set). */
const char *npl_config_get(const npl_config *c, const char *section, const char *key);
/** Set [section] key = value (validated as when parsed).
 *  @return 0, or -1 with errno EINVAL (NULL argument, unknown section or key, bad value, newline
 *          or '#' in the value), ENOMEM. */
int npl_config_set(npl_config *c, const char *section, const char *key, const char *value);
/** The config as text (parseable again), written to buf like snprintf.
 *  @return the length it needs, or -1 with errno EINVAL (NULL config). */
int npl_config_format(const npl_config *c, char *buf, size_t size);
/** An int list value ("0-3,8"): the number of entries (those beyond max not written), 0 if not
 *  set.
 *  @return the number of entries, 0 if not set, or -1 with errno EINVAL (NULL argument,
 *          malformed list), ENOMEM. */
int npl_config_list(const npl_config *c, const char *section, const char *key, int *out, int max);
/** The measured factors: n nodes (written to nodes), latency and bandwidth n*n row-major (row =
 *  CPU node, column = memory node; -1 where a row is missing). max: the entries of nodes (the
 *  matrices have max*max).
 *  @return n (0: none measured), or -1 with errno EINVAL (NULL config), EOVERFLOW (more than
 *          max nodes). */
int npl_config_factors(const npl_config *c, int *nodes, double *latency, double *bandwidth,
                       int max);
/** Whether threads should be pinned for a policy, and how: [threads] pin (default auto = MAi's
 *  rule: compact pinning for bind policies, none for spreading ones; none = never). Returns 1 and
 *  writes the strategy, or 0.
 *  @return 1 (pin; strategy written to strategy, size bytes, when not NULL) or 0 (do not pin);
 *          sets no errno. */
int npl_config_pin_for(const npl_config *c, const npl_policy *pol, char *strategy, size_t size);
/** @} */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* NUMAPLACE_H */
