/* SPDX-License-Identifier: BSD-3-Clause */
/* triad - STREAM triad a = b + s*c on arrays spread page by page over the nodes (cyclic), with
 * the OpenMP threads pinned (scatter: round-robin over the nodes). Prints the bandwidth and where
 * the pages went; exits 1 if the result is wrong.
 *
 *   triad [MiB per array (default 64)] [policy (default cyclic)]
 *
 * Build: cc -fopenmp triad.c -lnumaplace */
#include <numaplace.h>
#include <numaplace/omp.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    size_t n = (argc > 1 ? strtoul(argv[1], NULL, 10) : 64) << 20 >> 3;
    const char *policy = argc > 2 ? argv[2] : "cyclic";
    npl_policy *pol;
    if (n == 0 || npl_policy_parse(&pol, policy) < 0) {
        fprintf(stderr, "triad: bad size or policy '%s': %s\n", policy, npl_last_error());
        return 2;
    }
    if (npl_omp_pin_team("scatter") < 0) /* before the data is touched */
        fprintf(stderr, "triad: threads not pinned: %s\n", npl_last_error());
    npl_shape shape = {sizeof(double), 1, {n, 0, 0}, NPL_ROW_MAJOR};
    double *a = npl_alloc_array(&shape, pol, 0), *b = npl_alloc_array(&shape, pol, 0),
           *c = npl_alloc_array(&shape, pol, 0);
    if (!a || !b || !c) {
        fprintf(stderr, "triad: allocation: %s\n", npl_last_error());
        return 2;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        b[i] = (double)(i % 1024);
        c[i] = 2.0;
    }
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] + 3.0 * c[i];
        t = omp_get_wtime() - t;
        best = t < best ? t : best;
    }
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != (double)(i % 1024) + 6.0;
    int maxid = npl_topo_max_node_id(npl_topo_self());
    size_t *counts = calloc((size_t)maxid + 1, sizeof *counts), absent = 0;
    npl_histogram(a, n * sizeof(double), counts, &absent);
    printf("triad %s: %zu MiB x 3, %d threads: %.2f GB/s; pages of a per node:", policy,
           n * sizeof(double) >> 20, omp_get_max_threads(), 3.0 * n * sizeof(double) / best / 1e9);
    for (int node = 0; node <= maxid; node++)
        if (counts[node])
            printf(" %d:%zu", node, counts[node]);
    printf("%s\n", bad ? "  WRONG RESULT" : "");
    free(counts);
    npl_free(a);
    npl_free(b);
    npl_free(c);
    npl_policy_free(pol);
    return bad != 0;
}
