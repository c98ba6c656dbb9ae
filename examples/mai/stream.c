/* SPDX-License-Identifier: BSD-3-Clause */
/* stream.c - MAi-style STREAM variant: copy, scale, add and triad over three 1D arrays placed
 * with a MAi policy given on the command line (cyclic, skew, bind_columns: contiguous blocks of
 * elements, one per node). Uses only the MAi API, libc and OpenMP. Checks: exact results and
 * every page on the node the policy says (move_pages). Prints MB/s, never asserts timings.
 * Usage: stream [--nodes N] [--elems E] [--policy cyclic|skew|blocks] */
#include "mai_check.h"

#include <omp.h>

#define REPS 2

static int nnodes;
static long page_elems, elems_per_node;

static int cyclic_rule(long p, void *c) { (void)c; return (int)(p % nnodes); }
static int skew_rule(long p, void *c) { (void)c; return (int)((p + p / nnodes + 1) % nnodes); }
static int blocks_rule(long p, void *c) { (void)c; return (int)(p * page_elems / elems_per_node); }

int main(int argc, char **argv)
{
    long n = 1L << 16;
    const char *policy = "cyclic";
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--elems"))
            n = atol(argv[i + 1]);
        if (!strcmp(argv[i], "--policy"))
            policy = argv[i + 1];
    }
    nnodes = ex_init(argc, argv);
    if (nnodes < 1 || n < 1 || n > 1L << 28)
        return 1;
    double *a = mai_alloc_1D((int)n, sizeof(double), DOUBLE);
    double *b = mai_alloc_1D((int)n, sizeof(double), DOUBLE);
    double *c = mai_alloc_1D((int)n, sizeof(double), DOUBLE);
    double *arrays[3] = {a, b, c};
    ex_rule rule = cyclic_rule;
    page_elems = sysconf(_SC_PAGESIZE) / (long)sizeof(double);
    elems_per_node = (n + nnodes - 1) / nnodes;
    for (int k = 0; k < 3; k++) {
        if (!strcmp(policy, "skew")) {
            mai_skew_mapp(arrays[k]);
            rule = skew_rule;
        } else if (!strcmp(policy, "blocks")) {
            mai_bind_columns(arrays[k]); /* a 1D array: elements cut into one block per node */
            rule = blocks_rule;
        } else {
            mai_cyclic(arrays[k]);
        }
        ex_check_pages(policy, arrays[k], (size_t)n * sizeof(double), rule, NULL);
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    double t0 = omp_get_wtime(), q = 3.0;
    for (int rep = 0; rep < REPS; rep++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) b[i] = q * c[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + q * c[i];
    }
    double secs = omp_get_wtime() - t0;
    /* exact: the same kernels on one scalar triple (every element takes the same values) */
    double sa = 1.0, sb = 2.0, sc = 0.0;
    for (int rep = 0; rep < REPS; rep++) {
        sc = sa;
        sb = q * sc;
        sc = sa + sb;
        sa = sb + q * sc;
    }
    int exact = 1;
    for (long i = 0; i < n; i++)
        exact = exact && a[i] == sa && b[i] == sb && c[i] == sc;
    ex_expect(exact, "stream results exact");
    for (int k = 0; k < 3; k++)
        ex_check_pages("pages stay put while computing", arrays[k], (size_t)n * sizeof(double),
                       rule, NULL);
    printf("stream %s: %ld doubles x 3, %d nodes, %d threads, %.0f MB/s\n", policy, n, nnodes,
           omp_get_max_threads(), REPS * 10.0 * n * sizeof(double) / secs / 1e6);
    mai_final();
    return ex_summary("mai_stream");
}
