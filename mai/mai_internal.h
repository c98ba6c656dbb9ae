/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_internal.h - libnumaplace_mai's state, array registry and pure helpers (not installed). */
#ifndef MAI_INTERNAL_H
#define MAI_INTERNAL_H

#include <numaplace/mai.h>
#include <pthread.h>
#include <stddef.h>

/* A parsed config file (pure: mai__parse_config). */
struct mai_config {
    int nnodes;
    int nodes[MAXNODES];
    int nthreads; /* 0: none given */
    int cpus[MAXTHREADS];
};

/* One array from mai_alloc_*(). */
struct mai_array {
    char *base;        /* the mapping, what the user got */
    size_t map_bytes;  /* length of the mapping */
    char *data;        /* first element (page-aligned) */
    size_t data_bytes; /* nitems * item */
    int ndim;
    size_t dims[3];
    size_t item;
    int type;
    int policy;        /* MAi code, -1: none */
    int nnodes;        /* node list of the last policy (OS ids) */
    int nodes[MAXNODES + 1];
    int nodes1[MAXNODES + 1]; /* 1-based copy for mai_get_arraynodes, ended by -1 */
    size_t block_pages; /* mai_bytes() */
    int armed;          /* next-touch armed on data */
    struct mai_array *next;
};

/* The library's global state, behind mai__lock. */
struct mai_state {
    int inited;
    struct mai_config cfg;
    unsigned long node_masks[MAXNODES];
    unsigned long cpu_masks[MAXTHREADS];
    int own_nodes[MAXNODES]; /* mai_nodes(), OS ids */
    int nown;
    pid_t thread_ids[MAXTHREADS];
    int nthread_ids;
    struct mai_array *arrays;
    mai_stats alloc;
    unsigned long long moved_at_init; /* npl pages moved when mai_init ran */
    double time_pmig, time_tmig;
};

extern struct mai_state mai__st;
extern pthread_mutex_t mai__lock;

/* errors: record errno for mai_last_errno(); return -1 */
int mai__fail(int err);
void mai__ok(void);
/* End a call made under mai__lock: unlock, then record rc's outcome (errno kept on failure). */
void mai__finish(int rc);

/* Pure: parse MAi's config text. 0, or -1 + errno EINVAL. */
int mai__parse_config(const char *text, struct mai_config *out);
/* Pure: the layout of an array: bytes of the pointer area (page-rounded) and of the mapping.
 * 0, or -1 + errno EINVAL / EOVERFLOW. */
int mai__layout(int ndim, const long *dims, size_t item, int type, size_t page, size_t *ptr_bytes,
                size_t *map_bytes);
/* Pure: write the row pointers of a 2D/3D array whose mapping starts at base. */
void mai__fill_pointers(char *base, int ndim, const size_t *dims, size_t item, char *data);

/* Pure block rules: node index (into a list of m) of block b (prime: P of prime_mapp). */
enum mai_rule { MAI_RULE_CYCLIC, MAI_RULE_SKEW, MAI_RULE_PRIME };
size_t mai__rule_index(enum mai_rule rule, size_t b, size_t m, size_t prime);
/* The units blocks are made of: rows (innermost rows: ny elements of a 2D array, nz of a 3D
 * one, one element of a 1D one), columns (second index, within each row of a 2D array / plane
 * of a 3D one; elements of a 1D one), planes (first index of a 3D array). */
enum mai_unit { MAI_ROWS, MAI_COLUMNS, MAI_PLANES };
/* Pure: number of units of that kind (0: not defined for this array: planes of 1D/2D). */
size_t mai__unit_count(const struct mai_array *a, enum mai_unit unit);
/* Pure: the unit that holds the first byte of data page pg. */
size_t mai__page_unit(const struct mai_array *a, enum mai_unit unit, size_t pg, size_t page_size);

/* Registry (caller holds mai__lock). */
struct mai_array *mai__find(const void *p);        /* by base */
struct mai_array *mai__find_inside(const void *p); /* containing p */

/* mai_state.c: resolve the node list of a policy: explicit (_sn) or config (+ MAi's thread rule). */
int mai__node_list(int explicit_n, const int *explicit_nodes, int all, int *out);
size_t mai__page_size(void);

/* What one page goes to: a node, or -1 to leave it. */
struct mai_page_rule {
    enum mai_unit unit;
    size_t k;             /* units per block */
    enum mai_rule rule;
    size_t prime;
    const int *nodes;
    size_t m;
    int fixed_node;       /* >= 0: migrations: every selected page to this node */
    size_t lo, hi;        /* selected units [lo, hi) (migrations) */
    size_t lo2, hi2;      /* and columns [lo2, hi2) (mai_migrate) */
};

/* mai_place.c (caller holds mai__lock) */
int mai__place_run(struct mai_array *a, char *addr, size_t len, int node); /* disarms a */
void mai__disarm(struct mai_array *a); /* next-touch off, once a placement is sure to start */
int mai__place_pages(struct mai_array *a, const struct mai_page_rule *r);
void mai__record(struct mai_array *a, int code, const int *nodes, int m);
struct mai_array *mai__target(void *p);

#endif
