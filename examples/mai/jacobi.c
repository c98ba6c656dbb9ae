/* SPDX-License-Identifier: BSD-3-Clause */
/* jacobi.c - MAi-style example: a Jacobi relaxation on two 2D grids placed with
 * mai_bind_rows (each node holds a contiguous block of rows, as OpenMP's static schedule reads
 * them), then re-placed with mai_cyclic half way. Uses only the MAi API, libc and OpenMP.
 * Checks: the result equals a serial run on plain memory exactly, and every page of both grids
 * is on the node MAi's policy says (move_pages). Usage: jacobi [--nodes N] [--size S] */
#include "mai_check.h"

#include <omp.h>

static int rows_per_node, nnodes;

static int bind_rows_rule(long page, void *ctx)
{
    long row_bytes = *(long *)ctx;
    return (int)(page * sysconf(_SC_PAGESIZE) / row_bytes / rows_per_node);
}

static int cyclic_rule(long page, void *ctx)
{
    (void)ctx;
    return (int)(page % nnodes);
}

static void sweep(double **src, double **dst, int n)
{
#pragma omp parallel for schedule(static)
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            dst[i][j] = 0.25 * (src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
}

static void serial(double *a, double *b, int n, int iters)
{
    for (int t = 0; t < iters; t++) {
        double *s = t % 2 ? b : a, *d = t % 2 ? a : b;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                d[i * n + j] = 0.25 * (s[(i - 1) * n + j] + s[(i + 1) * n + j] + s[i * n + j - 1] +
                                       s[i * n + j + 1]);
    }
}

int main(int argc, char **argv)
{
    int n = 160, iters = 8;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--size"))
            n = atoi(argv[i + 1]);
    nnodes = ex_init(argc, argv);
    if (nnodes < 1) {
        printf("jacobi: mai_init failed (errno %d)\n", mai_last_errno());
        return 1;
    }
    double **g1 = mai_alloc_2D(n, n, sizeof(double), DOUBLE);
    double **g2 = mai_alloc_2D(n, n, sizeof(double), DOUBLE);
    double *r1 = calloc((size_t)n * n, sizeof(double)), *r2 = calloc((size_t)n * n, sizeof(double));
    if (!g1 || !g2 || !r1 || !r2)
        return 1;
    mai_bind_rows(g1);
    mai_bind_rows(g2);
    long row_bytes = n * (long)sizeof(double);
    rows_per_node = (n + nnodes - 1) / nnodes;
    ex_check_pages("bind_rows g1", g1[0], (size_t)n * n * sizeof(double), bind_rows_rule, &row_bytes);
    for (int i = 0; i < n; i++) /* boundary: 1 on the top row */
        g1[0][i] = g2[0][i] = r1[i] = r2[i] = 1.0;
    for (int t = 0; t < iters; t++) {
        if (t == iters / 2) {
            mai_cyclic(g1);
            mai_cyclic(g2);
        }
        sweep(t % 2 ? g2 : g1, t % 2 ? g1 : g2, n);
    }
    ex_check_pages("cyclic g2", g2[0], (size_t)n * n * sizeof(double), cyclic_rule, NULL);
    serial(r1, r2, n, iters);
    double *res = iters % 2 ? r2 : r1, **g = iters % 2 ? g2 : g1, sum = 0;
    int same = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            same = same && g[i][j] == res[i * n + j];
            sum += g[i][j];
        }
    ex_expect(same, "jacobi result equals the serial reference");
    printf("jacobi %dx%d, %d iterations, %d nodes, %d threads: sum %.6f\n", n, n, iters, nnodes,
           omp_get_max_threads(), sum);
    mai_final();
    return ex_summary("mai_jacobi");
}
