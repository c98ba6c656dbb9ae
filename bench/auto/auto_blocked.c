/* SPDX-License-Identifier: BSD-3-Clause */
/* auto_blocked - the locality harness's "blocked" program (bench/auto/locality.h): each thread
 * initialises and then updates its own static share of two arrays (a STREAM-like triad).
 *   auto_blocked [MIB [ITERS]]     MIB per array (default 4), ITERS compute sweeps (default 3) */
#include "locality.h"

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4, n = (mib << 20) / sizeof(double);
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    double *a = aligned_alloc(BENCH_PAGE, n * sizeof *a), *b = aligned_alloc(BENCH_PAGE, n * sizeof *b);
    if (!a || !b || n == 0 || iters < 1)
        return 2;
    struct auto_array *A = auto_track(a, n * sizeof *a, "a", "blocked");
    struct auto_array *B = auto_track(b, n * sizeof *b, "b", "blocked");
    auto_region(0); /* initialisation */
#pragma omp parallel
    {
        auto_my_node();
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) {
            a[i] = 1.0;
            b[i] = (double)(i % 1000) * 0.5;
            auto_init_touch(A, &a[i]), auto_init_touch(B, &b[i]);
            auto_rw(A, &a[i], -1, 0, 1), auto_rw(B, &b[i], -1, 0, 1);
        }
    }
    auto_locate();
    for (int it = 0; it < iters; it++) {
        auto_region(1);
#pragma omp parallel
        {
            int me = auto_my_node();
            unsigned long long la = 0, lb = 0, cnt = 0;
#pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                a[i] = a[i] * 0.5 + b[i]; /* a: read and written, b: read */
                la += auto_rw(A, &a[i], me, 1, 1);
                lb += auto_rw(B, &b[i], me, 1, 0);
                cnt++;
            }
#pragma omp atomic
            A->local += la;
#pragma omp atomic
            A->accesses += 2 * cnt;
#pragma omp atomic
            B->local += lb;
#pragma omp atomic
            B->accesses += cnt;
        }
    }
    auto_recheck();
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += a[i];
    auto_report("auto_blocked", iters, sum);
    return 0;
}
