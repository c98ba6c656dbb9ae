/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/mai.h
 * @brief numaplace/mai.h - MAi-compatible API (libnumaplace_mai): MAi-array's public interface
 * (include/mai.h of github.com/pousa/minas) over numaplace, so that a program written for MAi
 * compiles and runs unchanged (`#include <mai.h>`, link -lnumaplace_mai).
 *
 * Conventions kept from MAi: mai_init() reads MAi's whitespace-separated config file; node
 * numbers are OS ids (0-based) in the config file, mai_migrate_*() and the `_sn` node lists,
 * but 1-based in mai_nodes(), mai_irregularbind(), mai_bandwidth(), mai_numafactor(),
 * mai_nodebandwidth(), mai_get_arraynodes(), mai_get_cpusnode() and the CPU of
 * mai_bind_thread(), as in MAi. mai_get_nodes_id() and mai_get_cpus_id() return bit masks
 * (1 << id), as in MAi.
 *
 * Differences: errors never print or exit; a call that fails leaves the memory as it was,
 * sets errno and records it for mai_last_errno(); functions that return int or a pointer
 * return -1 or NULL. Calls that this library does not cover fail with errno ENOSYS.
 * Placement is exact and page by page (docs/MAI.md gives every policy's page->node rule).
 */
#ifndef NUMAPLACE_MAI_H
#define NUMAPLACE_MAI_H

/* the system headers MAi's mai.h brought in (programs written for MAi rely on them) */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef OMP
#include <omp.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** @defgroup mai_constants MAi constants
 *  MAi's element types (the `type` argument of mai_alloc_*()), limits and the policy codes
 *  that mai_get_mempol() returns.
 *  @{ */
#define CHAR 1   /**< elements of type char */
#define DOUBLE 2 /**< elements of type double */
#define FLOAT 3  /**< elements of type float */
#define INT 4    /**< elements of type int */
#define STRUCT 5 /**< elements of a struct type (size_item bytes) */

#define MAXNODES 256   /**< most nodes in a config file */
#define MAXTHREADS 512 /**< most threads (CPUs) in a config file */

#define CYCLIC 0     /**< policy code: cyclic (page interleave) */
#define CYCLIC_B 1   /**< policy code: cyclic over blocks (rows, columns, planes) */
#define SKEW 2       /**< policy code: skew_mapp */
#define SKEW_B 3     /**< policy code: skew_mapp over blocks */
#define PRIME 4      /**< policy code: prime_mapp */
#define PRIME_B 5    /**< policy code: prime_mapp over blocks */
#define BIND 6       /**< policy code: bind_all */
#define BIND_B 7     /**< policy code: bind blocks (bind_rows, bind_columns, bind_3D) */
#define RANDOM 8     /**< policy code: random (MAi reserved it; never set here) */
#define RANDOM_B 9   /**< policy code: random blocks (never set here) */
#define OWN 10       /**< policy code: mai_regularbind() / mai_irregularbind() */
#define NEXTOUCH 11  /**< policy code: migrate-on-next-touch */
#define NEXTOUCHN 12 /**< policy code: next-touch over neighbours (never set here) */

/** MAi's complex element (mai_alloc_3D() with STRUCT in MAi used its size). */
struct mytype {
    double r; /**< real part */
    double i; /**< imaginary part */
};
/** Allocation statistics (mai_allocinfo()). */
struct mai_malloc {
    size_t used_size; /**< bytes mapped by mai_alloc_*() and not freed */
    size_t nmmaps;    /**< arrays allocated and not freed */
    size_t block_h;   /**< bytes of the library's bookkeeping of those arrays */
    int npinfo;       /**< pages of those arrays */
};
/** MAi's name of struct mai_malloc. */
typedef struct mai_malloc mai_stats;
/** @} */

/** @defgroup mai_setup MAi setup and machine queries
 *  The config file (MAi's format): whitespace-separated integers: the node count N, N node
 *  OS ids, then optionally the thread count T and T CPU OS ids. With no file (NULL or ""),
 *  all allowed nodes are used and T is OMP_NUM_THREADS (0 when unset) with the first T CPUs
 *  of the compact order.
 *  @{ */

/** Initialise the library from a config file (see the group); replaces an earlier set-up.
 *  On failure the library stays uninitialised and every call fails with errno EPERM:
 *  mai_last_errno() says why (ENOENT unreadable file, EISDIR a directory, EINVAL bad content,
 *  a FIFO or device (never waited on), or a node/CPU this machine does not have or allow,
 *  ENOMEM). */
void mai_init(const char *filename);
/** Release everything: every array from mai_alloc_*() is unmapped; the library is
 *  uninitialised afterwards. */
void mai_final(void);
/** Read another config file, keeping the arrays (as mai_init() otherwise). */
void mai_change(const char *filename);
/** A barrier for the mai_get_num_threads() threads of the config (pthreads). */
void mai_barrier(void);
/** Whether NUMA system calls work here.
 *  @return 0 if they do, -1 with errno ENOSYS if not. */
int numa_check(void);
/** The errno of the calling thread's last failed MAi call (0: none since mai_init()).
 *  @return the errno value (extension: MAi has no error reporting). */
int mai_last_errno(void);

/** @return the number of nodes of the config, or -1 with errno EPERM (not initialised). */
int mai_get_num_nodes(void);
/** @return the thread count of the config (0: none given), or -1 with errno EPERM. */
int mai_get_num_threads(void);
/** @return the number of CPUs (PUs) this process may use, or -1 with errno EPERM. */
int mai_get_num_cpu(void);
/** Same as mai_get_num_cpu() (MAi's source spells it so).
 *  @return as mai_get_num_cpu(). */
int mai_get_num_cpus(void);
/** The config's nodes as masks (entry i is 1 << node id), mai_get_num_nodes() entries, valid
 *  until mai_change() or mai_final().
 *  @return the array, or NULL with errno EPERM. */
unsigned long *mai_get_nodes_id(void);
/** The config's CPUs as masks (entry i is 1 << CPU id), mai_get_num_threads() entries.
 *  @return the array (NULL when none: errno 0), or NULL with errno EPERM. */
unsigned long *mai_get_cpus_id(void);
/** Print the config's nodes (OS ids) on stdout. */
void mai_show_nodes(void);
/** Print the config's CPUs (OS ids) on stdout. */
void mai_show_cpus(void);
/** @return the number of nodes of the machine that this process may use. */
int mai_get_maxnodes(void);
/** @return the number of CPUs this process may use. */
int mai_get_maxcpus(void);
/** @return the CPUs of the first node that has any (MAi: CPUs per node), or -1 with errno. */
int mai_get_ncpusnode(void);
/** CPUs of node `nodeid` (OS id) as 1-based ids (MAi's numbering: OS id + 1), in a malloc'd
 *  array of mai_get_ncpusnode() entries, padded with 0 (free() it).
 *  @return the array, or NULL with errno EINVAL (no such node), ENOMEM. */
int *mai_get_cpusnode(int nodeid);
/** NUMA factor between nodes node1 and node2 (1-based, as MAi): SLIT distance(node1, node2) /
 *  distance(node1, node1).
 *  @return the factor, or -1 with errno EINVAL (no such node). */
float mai_numafactor(int node1, int node2);
/** Bandwidth (MB/s) from CPUs of node1 to memory of node2 (1-based), as measured by
 *  `numaplace measure` into the platform config file ([factors]).
 *  @return the bandwidth, or -1 with errno ENOENT (nothing measured for that pair), EINVAL. */
float mai_bandwidth(int node1, int node2);
/** mai_bandwidth(node, node).
 *  @return as mai_bandwidth(). */
float mai_nodebandwidth(int node);
/** @} */

/** @defgroup mai_alloc MAi arrays
 *  Arrays with MAi's layouts: mai_alloc_2D() returns nx row pointers (`T **`) and
 *  mai_alloc_3D() nx pointers to nx*ny row pointers (`T ***`), in the same mapping as the
 *  elements, which start on the first page boundary after the pointers and are contiguous in
 *  C order. Memory is zero-filled and not placed until a policy is applied (first touch).
 *  @{ */

/** A 1D array of nx elements of size_item bytes; type is one of CHAR..STRUCT.
 *  @return the array, or NULL with errno EPERM (not initialised), EINVAL (nx <= 0, size_item 0,
 *          unknown type), EOVERFLOW (size), ENOMEM. */
void *mai_alloc_1D(int nx, size_t size_item, int type);
/** A 2D array (nx rows of ny elements): use it as `T **a = mai_alloc_2D(...)`, a[i][j].
 *  @return as mai_alloc_1D(). */
void *mai_alloc_2D(int nx, int ny, size_t size_item, int type);
/** A 3D array: `T ***a`, a[i][j][k] with i < nx, j < ny, k < nz.
 *  @return as mai_alloc_1D(). */
void *mai_alloc_3D(int nx, int ny, int nz, size_t size_item, int type);
/** Release an array from mai_alloc_*() (NULL: nothing; errno ENOENT for an unknown pointer). */
void mai_free_array(void *p);
/** @return the allocation statistics. */
mai_stats mai_allocinfo(void);
/** Bytes of the elements of an array (nx*ny*nz*size_item).
 *  @return the size, or 0 with errno ENOENT (not a MAi array). */
size_t mai_getsize(void *ph);
/** The first element of an array (MAi's "real pointer": after the row pointers).
 *  @return it, or NULL with errno ENOENT. */
void *mai_get_realpointer(void *p);
/** p moved by bytes rounded up to whole pages.
 *  @return the address, or NULL with errno EINVAL (p NULL). */
void *mai_move_pointer(void *p, size_t bytes);
/** p (inside an array's elements) moved by `rows` rows, rounded down to whole pages.
 *  @return the address, or NULL with errno ENOENT (not in a MAi array). */
void *mai_mv_pointer_rows(void *p, int rows);
/** Not covered (MAi's column step is not defined for C-order arrays).
 *  @return NULL with errno ENOSYS. */
void *mai_mv_pointer_cols(void *p, int cols);
/** Not covered.
 *  @return NULL with errno ENOSYS. */
void *mai_mv_pointer_plans(void *p, int plans);
/** @} */

/** @defgroup mai_policies MAi memory policies
 *  Every policy places the elements of a MAi array (pages counted from its first element;
 *  the row pointers are left where their first touch put them); pages already touched move.
 *  M is the node list: the config's nodes, or its first T when 0 < T < N threads (MAi's rule),
 *  except mai_cyclic() (all config nodes) and the `_sn` forms (the given nodes, OS ids).
 *  Page rules: cyclic page i on node i mod M; skew_mapp (i + i/M + 1) mod M; prime_mapp
 *  cyclic over P virtual nodes, overflow (i/P)*(P-M) + (i mod P) - M re-cycled mod M; the
 *  `_rows`, `_columns`, `_3D` forms apply the same rule to blocks of nr rows / nc columns /
 *  n3d planes; bind_rows / bind_columns / bind_3D cut the rows / columns / planes into M
 *  contiguous blocks of ceil(n/M), block k on node k. A page belongs to the block that holds
 *  its first byte. Errors: errno EPERM (not initialised), ENOENT (not a MAi array), EINVAL
 *  (bad count or node list, columns of a 1D array), EXDEV (a node not allowed), ENOMEM.
 *  @{ */

void mai_cyclic(void *p);                 /**< cyclic over all config nodes */
void mai_cyclic_possible(void *p);        /**< cyclic over the nodes of the config's CPUs */
void mai_skew_mapp(void *p);              /**< skew_mapp over M */
void mai_prime_mapp(void *p, int prime);  /**< prime_mapp with P = prime (a prime >= M) */
void mai_cyclic_rows(void *p, int nr);    /**< blocks of nr rows, cyclic */
void mai_skew_mapp_rows(void *p, int nr); /**< blocks of nr rows, skew_mapp */
void mai_prime_mapp_rows(void *p, int prime, int nr); /**< blocks of nr rows, prime_mapp */
void mai_cyclic_columns(void *p, int nc);             /**< blocks of nc columns, cyclic */
void mai_skew_mapp_columns(void *p, int nc);          /**< blocks of nc columns, skew_mapp */
void mai_prime_mapp_columns(void *p, int prime, int nc); /**< blocks of nc columns, prime_mapp */
void mai_cyclic_3D(void *p, int n3d);                 /**< blocks of n3d planes, cyclic */
void mai_skew_mapp_3D(void *p, int n3d);              /**< blocks of n3d planes, skew_mapp */
void mai_prime_mapp_3D(void *p, int prime, int n3d);  /**< blocks of n3d planes, prime_mapp */

void mai_bind_all(void *p);            /**< all pages on the first node of M */
void mai_bind_all_mynode(void *p);     /**< all pages on the calling thread's node */
void mai_bind_rows(void *p);           /**< M contiguous blocks of rows, block k on node k */
void mai_bind_columns(void *p);        /**< M contiguous blocks of columns, block k on node k */
void mai_bind_3D(void *p);             /**< M contiguous blocks of planes, block k on node k */
/** Each thread's first touch brings the block of pages it touches (1/M of the array) to its
 *  node (numaplace's user-space next-touch). */
void mai_bind_rows_mynode(void *p);
/** As mai_bind_rows_mynode() (columns are not contiguous: blocks of pages). */
void mai_bind_columns_mynode(void *p);
void mai_ibind_rows(void *p, int nr);    /**< blocks of nr rows, cyclic (MAi's irregular bind) */
void mai_ibind_columns(void *p, int nc); /**< blocks of nc columns, cyclic */
void mai_ibind_3D(void *p, int n3d);     /**< blocks of n3d planes, cyclic */

/** Arm migrate-on-next-touch on the array: the next thread that touches a 64 KiB chunk
 *  brings it to its node (see numaplace/migrate.h). */
void mai_next_touch(void *p);
/** Not covered (MAi's internal SIGSEGV handler; next-touch has its own): sets errno ENOSYS. */
void mai_handler(int sig, siginfo_t *info, void *context);

void mai_cyclic_sn(void *p, int nnodes, int *nodes);            /**< mai_cyclic() on nodes */
void mai_skew_mapp_sn(void *p, int nnodes, int *nodes);         /**< mai_skew_mapp() on nodes */
void mai_prime_mapp_sn(void *p, int prime, int nnodes, int *nodes); /**< prime_mapp on nodes */
void mai_cyclic_rows_sn(void *p, int nr, int nnodes, int *nodes);   /**< cyclic rows on nodes */
void mai_skew_mapp_rows_sn(void *p, int nr, int nnodes, int *nodes); /**< skew rows on nodes */
/** prime_mapp over blocks of nr rows on nodes */
void mai_prime_mapp_rows_sn(void *p, int prime, int nr, int nnodes, int *nodes);
void mai_cyclic_columns_sn(void *p, int nc, int nnodes, int *nodes); /**< cyclic columns */
void mai_skew_mapp_columns_sn(void *p, int nc, int nnodes, int *nodes); /**< skew columns */
/** prime_mapp over blocks of nc columns on nodes */
void mai_prime_mapp_columns_sn(void *p, int prime, int nc, int nnodes, int *nodes);
void mai_cyclic_3D_sn(void *p, int n3d, int nnodes, int *nodes);    /**< cyclic planes */
void mai_skew_mapp_3D_sn(void *p, int n3d, int nnodes, int *nodes); /**< skew planes */
/** prime_mapp over blocks of n3d planes on nodes */
void mai_prime_mapp_3D_sn(void *p, int prime, int n3d, int nnodes, int *nodes);
void mai_bind_all_sn(void *p, int nnodes, int *nodes);     /**< all pages on nodes[0] */
void mai_bind_rows_sn(void *p, int nnodes, int *nodes);    /**< row blocks on nodes */
void mai_bind_columns_sn(void *p, int nnodes, int *nodes); /**< column blocks on nodes */
void mai_bind_3D_sn(void *p, int nnodes, int *nodes);      /**< plane blocks on nodes */
void mai_ibind_rows_sn(void *p, int nr, int nnodes, int *nodes);    /**< nr-row blocks, cyclic */
void mai_ibind_columns_sn(void *p, int nc, int nnodes, int *nodes); /**< nc-column blocks */
void mai_ibind_3D_sn(void *p, int n3d, int nnodes, int *nodes);     /**< n3d-plane blocks */
/** @} */

/** @defgroup mai_migration MAi migration
 *  Move parts of a MAi array (node: OS id). Present pages move (move_pages); pages never
 *  touched are faulted in on the node. Errors as the policies (EINVAL: rows/columns outside
 *  the array, bad node).
 *  @{ */
/** Rows [startr, startr+nr) x columns [startc, startc+nc) to node. */
void mai_migrate(void *p, unsigned long node, int nr, int startr, int nc, int startc);
/** Rows [start, start+nr) to node. */
void mai_migrate_rows(void *p, unsigned long node, int nr, int start);
/** Columns [start, start+nc) of every row to node. */
void mai_migrate_columns(void *p, unsigned long node, int nc, int start);
/** The whole array, cyclic over the nodes of a mask (bit i: node i). */
void mai_migrate_scatter(void *p, unsigned long nodes);
/** The whole array to node. */
void mai_migrate_gather(void *p, unsigned long node);
/** @} */

/** @defgroup mai_own MAi node sets and raw placement
 *  @{ */
/** The node set of mai_regularbind(): nnodes nodes, 1-based (MAi: node n is OS id n - 1). */
void mai_nodes(unsigned long nnodes, int *nodes);
/** The block size of mai_regularbind() for an array: bytes, rounded up to pages. */
void mai_bytes(void *p, size_t bytes);
/** Not covered (MAi's sub-array blocks): sets errno ENOSYS. */
void mai_subarray(void *p, int dim[]);
/** Blocks of mai_bytes() pages, from the first element, block b on mai_nodes() node b mod n
 *  (a last partial block too).
 *  @return 0, or -1 with errno EINVAL (no mai_bytes() or mai_nodes()), ENOENT, EXDEV, ENOMEM. */
int mai_regularbind(void *p);
/** Place [p, p + bytes rounded up to pages) on node (1-based); p page-aligned, inside a MAi
 *  array.
 *  @return 0, or -1 with errno EINVAL (unaligned p, bad node), ENOENT, EXDEV, ENOMEM. */
int mai_irregularbind(void *p, size_t bytes, int node);
/** @return the array's policy code (CYCLIC...), -1 when none was applied or with errno ENOENT. */
int mai_get_mempol(void *ph);
/** The array's nodes, 1-based, ended by -1; valid until the array changes or is freed.
 *  @return the list, or NULL with errno ENOENT. */
int *mai_get_arraynodes(void *ph);
/** Record nodes (OS ids) as the array's node list (bookkeeping only, as MAi). */
void mai_set_arraynodes(void *ph, int nnodes, int nodes[]);
/** Print the array's policy name on stdout. */
void mai_mempol(void *ph);
/** Print the array's nodes (OS ids) on stdout. */
void mai_arraynodes(void *ph);
/** @} */

/** @defgroup mai_threads MAi threads
 *  @{ */
/** Pin thread tid (0: the caller) to CPU `cpu`, 1-based (MAi: OS id cpu - 1). */
void mai_bind_thread(pid_t tid, int cpu);
/** Record the calling thread as the next thread of the config (thread k gets the k-th CPU). */
void mai_set_thread_id_posix(void);
/** Pin thread tid to the CPU of its rank among the recorded threads (else the next CPU). */
void mai_bind_thread_posix(pid_t tid);
/** Print the recorded thread ids on stdout. */
void mai_show_thread_ids(void);
/** Set the thread count used by the policies' node-list rule. */
void mai_set_number_threads(int nthreads);
/** Pin thread tid (0: the caller) to CPU `cpu` (OS id). */
void mai_migrate_thread(pid_t tid, unsigned long cpu);
/** @return the node where thread tid (0: the caller) last ran, or -1 with errno. */
int mai_get_threadnode(pid_t tid);
/** @return the CPU where thread tid (0: the caller) last ran, or -1 with errno. */
int mai_get_threadcpu(pid_t tid);
/** Print the recorded threads and their CPUs on stdout. */
void mai_print_threadcpus(void);
/** @} */

/** @defgroup mai_statistics MAi statistics
 *  @{ */
/** Print the node of each of `size` pages (addresses) on stdout. */
void mai_print_pagenodes(unsigned long *pageaddrs, int size);
/** Pages moved by MAi calls (policies over touched pages, migrations, next-touch) since
 *  mai_init(), counted over the whole process; pageaddrs/size are checked only (MAi declared
 *  this call but never implemented it).
 *  @return the count, or -1 with errno EINVAL (size < 0), EPERM. */
int mai_number_page_migration(unsigned long *pageaddrs, int size);
/** @return the wall time (seconds) of the last migration call (0 before any). */
double mai_get_time_pmigration(void);
/** Thread migrations are not tracked.
 *  @return -1 with errno ENOSYS. */
int mai_number_thread_migration(unsigned int *threads, int size);
/** @return the wall time of the last thread pinning by mai_bind_thread*() / mai_migrate_thread(). */
double mai_get_time_tmigration(void);
/** Not covered (MAi copied numa_maps and numactl output to files): sets errno ENOSYS. */
void mai_get_log(void);
/** @} */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
