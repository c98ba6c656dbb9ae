/* SPDX-License-Identifier: BSD-3-Clause */
/* auto_multi - the locality harness's program with several arrays of different patterns
 * (bench/auto/locality.h), as the MAi NPB codes (cyclic for some arrays, blocks for others):
 *   blk  initialised and updated by each thread's static share          (blocked)
 *   cyc  initialised in static blocks, updated schedule(static, 4 pages) (cyclic(4 pages))
 *   tab  initialised by the main thread, read at random by every thread  (shared read)
 *   sin  initialised by the main thread, updated by static shares        (serial init)
 * One policy for the whole program cannot suit them all.
 *   auto_multi [MIB [ITERS]]      MIB per array */
#include "locality.h"

#define K (4 * BENCH_PAGE / sizeof(double))

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4, n = (mib << 20) / sizeof(double);
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    double *blk = aligned_alloc(BENCH_PAGE, n * 8), *cyc = aligned_alloc(BENCH_PAGE, n * 8);
    double *tab = aligned_alloc(BENCH_PAGE, n * 8), *sin_ = aligned_alloc(BENCH_PAGE, n * 8);
    if (!blk || !cyc || !tab || !sin_ || n == 0 || iters < 1)
        return 2;
    struct auto_array *B = auto_track(blk, n * 8, "blk", "blocked");
    struct auto_array *C = auto_track(cyc, n * 8, "cyc", "cyclic(4 pages)");
    struct auto_array *T = auto_track(tab, n * 8, "tab", "shared read");
    struct auto_array *S = auto_track(sin_, n * 8, "sin", "serial init, blocked compute");
    auto_region(0);
#pragma omp parallel
    {
        auto_my_node();
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) {
            blk[i] = 1.0, cyc[i] = 2.0;
            auto_init_touch(B, &blk[i]), auto_init_touch(C, &cyc[i]);
            auto_rw(B, &blk[i], -1, 0, 1), auto_rw(C, &cyc[i], -1, 0, 1);
        }
    }
    for (size_t i = 0; i < n; i++) {
        tab[i] = (double)(bench_mix(i) >> 40), sin_[i] = 3.0;
        auto_init_touch(T, &tab[i]), auto_init_touch(S, &sin_[i]);
        auto_rw(T, &tab[i], -1, 0, 1), auto_rw(S, &sin_[i], -1, 0, 1);
    }
    auto_locate();
    for (int it = 0; it < iters; it++) {
        auto_region(1);
#pragma omp parallel
        {
            int me = auto_my_node();
            unsigned long long lb = 0, lc = 0, lt = 0, ls = 0, cnt = 0, cc = 0;
#pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                size_t j = bench_mix(((uint64_t)it << 40) ^ i) % n;
                blk[i] = blk[i] * 0.5 + tab[j];
                sin_[i] = sin_[i] * 0.5 + 1.0;
                lb += auto_rw(B, &blk[i], me, 1, 1);
                lt += auto_rw(T, &tab[j], me, 1, 0);
                ls += auto_rw(S, &sin_[i], me, 1, 1);
                cnt++;
            }
#pragma omp for schedule(static, K)
            for (size_t i = 0; i < n; i++) {
                cyc[i] = cyc[i] * 0.5 + 1.0;
                lc += auto_rw(C, &cyc[i], me, 1, 1);
                cc++;
            }
#pragma omp atomic
            B->local += lb;
#pragma omp atomic
            B->accesses += 2 * cnt;
#pragma omp atomic
            T->local += lt;
#pragma omp atomic
            T->accesses += cnt;
#pragma omp atomic
            S->local += ls;
#pragma omp atomic
            S->accesses += 2 * cnt;
#pragma omp atomic
            C->local += lc;
#pragma omp atomic
            C->accesses += 2 * cc;
        }
    }
    auto_recheck();
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += blk[i] + cyc[i] + sin_[i];
    auto_report("auto_multi", iters, sum);
    return 0;
}
