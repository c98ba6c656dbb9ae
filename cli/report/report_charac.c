/* SPDX-License-Identifier: BSD-3-Clause */
/* report_charac.c - the characterization run of Ribeiro et al. (section 4.1): STREAM-style
 * kernels read / write / read-write x regular / irregular / random access x static / dynamic
 * OpenMP schedules, under first_touch and every policy, one array placed with the library;
 * every kernel repeated `reps` times, every repetition kept.
 *
 * Kernels (n doubles, T threads, pass p):
 *   regular    element i
 *   irregular  element (i + p*n/T + n/(2T)) mod n: each pass, each thread works on another
 *              thread's block (the paper's "data set may be different" between phases)
 *   random     element hash(i, p) scaled to [0, n), for n/4 values of i (a random pass costs
 *              a DRAM latency per element: a quarter of the array keeps it as long as the
 *              others): pages all over the array, shared by threads
 *   read: s += a[j]; write: a[j] = c; read-write: a[j] = a[j]*0.5 + 1
 * first_touch: the master thread initializes the array (the usual serial initialization); the
 * other policies are initialized by all threads (on one node they are parallel first touch). */
#define _GNU_SOURCE
#include "common.h"
#include "report_parts.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

const char *const report_ops[NOPS] = {"read", "write", "read-write"};
const char *const report_accesses[NACC] = {"regular", "irregular", "random"};
const char *const report_scheds[NSCH] = {"static", "dynamic"};
const char *const report_policies[NPOL] = {"first_touch", "bind_all", "bind_block", "cyclic",
                                           "cyclic_block", "skew_mapp", "prime_mapp", "random",
                                           "random_block"};

static volatile double sink;

size_t report_kernel_elements(int access, size_t n) { return access == 2 ? n / 4 : n; }

static inline size_t idx(int access, size_t i, size_t n, int pass, int nthreads)
{
    if (access == 0)
        return i;
    if (access == 1) {
        size_t j = i + ((size_t)pass * n / (size_t)nthreads + n / (2 * (size_t)nthreads)) % n;
        return j >= n ? j - n : j;
    }
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)pass * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    return (size_t)(((unsigned __int128)h * n) >> 64); /* in [0, n): no division per load */
}

/* one pass (number `pass`) of one kernel, its seconds added to st; the schedule (static, or
 * dynamic with 4096-element chunks) is set for the loop's schedule(runtime) */
static void kernel(double *a, size_t n, int op, int access, int dynamic, int pass, int nthreads,
                   struct stat3 *st)
{
#ifdef _OPENMP
    omp_set_schedule(dynamic ? omp_sched_dynamic : omp_sched_static, dynamic ? 4096 : 0);
#else
    (void)dynamic;
#endif
    double s = 0, t0 = npl__now();
    size_t iters = report_kernel_elements(access, n);
#pragma omp parallel for schedule(runtime) reduction(+ : s)
    for (size_t i = 0; i < iters; i++) {
        size_t j = idx(access, i, n, pass, nthreads);
        if (op == 0)
            s += a[j];
        else if (op == 1)
            a[j] = 1.5;
        else
            a[j] = a[j] * 0.5 + 1;
    }
    stat_add(st, npl__now() - t0);
    sink = s;
}

static void policy_string(int p, int threads, int node0, char *out, size_t size)
{
    const char *k = report_policies[p];
    if (!strcmp(k, "bind_block"))
        snprintf(out, size, "bind_block:threads=%d", threads);
    else if (!strcmp(k, "bind_all"))
        snprintf(out, size, "bind_all:%d", node0);
    else if (!strcmp(k, "random") || !strcmp(k, "random_block"))
        snprintf(out, size, "%s:seed=1", k);
    else
        snprintf(out, size, "%s", k);
}

static double *place_array(int p, struct charac *c)
{
    npl_policy *pol;
    double *a = NULL;
    if (npl_policy_parse(&pol, c->polstr[p]) == 0) {
        a = npl_alloc(c->n * sizeof(double), pol);
        npl_policy_free(pol);
    }
    if (!a)
        return NULL;
    if (p == 0) { /* first_touch: the master initializes */
        for (size_t i = 0; i < c->n; i++)
            a[i] = 1;
    } else {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < c->n; i++)
            a[i] = 1;
    }
    return a;
}

/* where the array's pages are, and which fraction of the accesses of each access pattern
 * goes to a remote node, from the threads' nodes (they are pinned) */
static void locality(const double *a, const struct charac *c, const struct measure_result *m,
                     struct locality *l)
{
    const npl_topo *t = npl_topo_self();
    size_t bytes = c->n * sizeof(double), psz = 4096, np = (bytes + psz - 1) / psz;
    int *pn = malloc(np * sizeof *pn), tn[MEASURE_MAX_CPUS];
    int nt = c->nthreads < MEASURE_MAX_CPUS ? c->nthreads : MEASURE_MAX_CPUS;
    memset(l, 0, sizeof *l);
#pragma omp parallel
    {
        int me = 0;
#ifdef _OPENMP
        me = omp_get_thread_num();
#endif
        if (me < nt)
            tn[me] = npl_topo_cpu_node(t, sched_getcpu());
    }
    if (!pn || npl_query_pages(a, bytes, pn, np) < 0) {
        free(pn);
        return;
    }
    size_t remote_static = 0, remote_shared = 0, chunk = (np + (size_t)nt - 1) / (size_t)nt;
    for (size_t i = 0; i < np; i++) {
        for (int k = 0; k < m->n; k++)
            l->pages[k] += pn[i] == m->nodes[k];
        remote_static += pn[i] != tn[i / chunk < (size_t)nt ? i / chunk : (size_t)nt - 1];
        for (int th = 0; th < nt; th++)
            remote_shared += pn[i] != tn[th];
    }
    l->remote_static = (double)remote_static / (double)np;
    l->remote_shared = (double)remote_shared / ((double)np * nt);
    l->ok = 1;
    free(pn);
}

/* the array: 2x (default) or 4x (--full) the last-level cache, within bounds, and all NPOL
 * arrays (they live at the same time) within half of the free memory of the usable nodes */
static size_t array_doubles(int level, const struct measure_result *m)
{
    const size_t M = (size_t)1 << 20;
    size_t llc = m->llc_bytes, free_bytes = 0;
    size_t bytes = level == 0 ? 4 * M : level == 1 ? 2 * llc : 4 * llc;
    size_t lo = level == 0 ? 4 * M : level == 1 ? 64 * M : 256 * M;
    size_t hi = level == 0 ? 4 * M : level == 1 ? 128 * M : 1024 * M;
    bytes = bytes < lo ? lo : bytes > hi ? hi : bytes;
    for (int i = 0; i < m->n; i++) {
        struct npl_node_info info;
        if (npl_topo_node_info(npl_topo_self(), m->nodes[i], &info) == 0)
            free_bytes += (size_t)info.free_bytes;
    }
    if (free_bytes && bytes > free_bytes / (2 * NPOL))
        bytes = free_bytes / (2 * NPOL) > 4 * M ? free_bytes / (2 * NPOL) : 4 * M;
    return bytes / sizeof(double);
}

/* Every policy's array is placed first; then the repetitions go round all policies and
 * patterns, so that a change of machine load over time touches every policy alike (measuring one
 * policy after the other turned load drift into policy differences). */
int report_characterize(int level, int reps, const struct measure_result *m, struct charac *c)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#pragma omp parallel /* pin the OpenMP threads compactly (MAi's default, reproducible) */
    npl_pin_self("compact", omp_get_thread_num());
#else
    npl_pin_self("compact", 0);
#endif
    c->nthreads = threads;
    c->n = array_doubles(level, m);
    c->reps = reps;
    double *arr[NPOL];
    for (int p = 0; p < NPOL; p++) {
        policy_string(p, threads, m->nodes[0], c->polstr[p], sizeof c->polstr[p]);
        for (int k = 0; k < NPAT; k++)
            stat_clear(&c->sec[p][k / (NACC * NSCH)][k / NSCH % NACC][k % NSCH]);
        arr[p] = place_array(p, c);
        if (!arr[p]) {
            fprintf(stderr, "numaplace report: %s: %s (skipped)\n", c->polstr[p],
                    npl_last_error());
            continue;
        }
        c->placed_ok[p] = 1;
        locality(arr[p], c, m, &c->loc[p]);
    }
    for (int r = 0; r < reps; r++)
        for (int p = 0; p < NPOL; p++) {
            report_progress("characterization", (r + (double)p / NPOL) / reps);
            for (int k = 0; arr[p] && k < NPAT; k++) {
                int o = k / (NACC * NSCH), x = k / NSCH % NACC, s = k % NSCH;
                kernel(arr[p], c->n, o, x, s, r, threads, &c->sec[p][o][x][s]);
            }
        }
    for (int p = 0; p < NPOL; p++)
        npl_free(arr[p]);
    return 0;
}
