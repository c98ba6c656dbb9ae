/* SPDX-License-Identifier: BSD-3-Clause */
/* auto_shared - the locality harness's "shared read" program (bench/auto/locality.h): a lookup
 * table initialised by the main thread is read at seeded random places by every thread (as
 * XSBench's grids); each thread writes its own static share of the output.
 *   auto_shared [MIB [ITERS]]     MIB of table (the output is a quarter of it) */
#include "locality.h"

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4, n = (mib << 20) / sizeof(double), m = n / 4;
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    double *tab = aligned_alloc(BENCH_PAGE, n * sizeof *tab), *out = aligned_alloc(BENCH_PAGE, m * sizeof *out);
    if (!tab || !out || m == 0 || iters < 1)
        return 2;
    struct auto_array *T = auto_track(tab, n * sizeof *tab, "table", "shared read");
    struct auto_array *O = auto_track(out, m * sizeof *out, "out", "blocked");
    auto_region(0);
    for (size_t i = 0; i < n; i++) {
        tab[i] = (double)(bench_mix(i) >> 40);
        auto_init_touch(T, &tab[i]);
        auto_rw(T, &tab[i], -1, 0, 1);
    }
#pragma omp parallel
    {
        auto_my_node();
#pragma omp for schedule(static)
        for (size_t i = 0; i < m; i++) {
            out[i] = 0;
            auto_init_touch(O, &out[i]);
            auto_rw(O, &out[i], -1, 0, 1);
        }
    }
    auto_locate();
    for (int it = 0; it < iters; it++) {
        auto_region(1);
#pragma omp parallel
        {
            int me = auto_my_node();
            unsigned long long lt = 0, lo = 0, cnt = 0;
#pragma omp for schedule(static)
            for (size_t i = 0; i < m; i++) {
                double s = 0;
                for (int k = 0; k < 4; k++) { /* four lookups per output element */
                    size_t j = bench_mix(((uint64_t)it << 40) ^ (i * 4 + (size_t)k)) % n;
                    s += tab[j];
                    lt += auto_rw(T, &tab[j], me, 1, 0);
                }
                out[i] += s;
                lo += auto_rw(O, &out[i], me, 1, 1);
                cnt++;
            }
#pragma omp atomic
            T->local += lt;
#pragma omp atomic
            T->accesses += 4 * cnt;
#pragma omp atomic
            O->local += lo;
#pragma omp atomic
            O->accesses += 2 * cnt;
        }
    }
    auto_recheck();
    double sum = 0;
    for (size_t i = 0; i < m; i++)
        sum += out[i];
    auto_report("auto_shared", iters, sum);
    return 0;
}
