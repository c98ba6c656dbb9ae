/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_styles - an OpenMP stencil (first-touch init, 3 sweeps, a reduction) and a nested region
 * (2 x 2). Built by gcc (libgomp) and clang (libomp) as omp_styles_gcc / omp_styles_clang; prints
 * "sum S nested 4", which numaplace run must not change (tests/cli/test_run_progs.sh). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4000000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = i % 1000; b[i] = 0; }
    for (int it = 0; it < 3; it++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i];
    }
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (long i = 0; i < n; i++) s += a[i];
    int nested = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp atomic
    nested++;
    printf("sum %.3f nested %d\n", s, nested);
    free(a); free(b);
    return 0;
}
