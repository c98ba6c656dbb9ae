/* SPDX-License-Identifier: BSD-3-Clause */
/* auto_phase - the locality harness's "phase change" program (bench/auto/locality.h): a matrix
 * of rows of 512 doubles (a row is one page) updated in two parallel regions that alternate: in
 * the first thread t owns a block of rows (schedule(static)), in the second the rows are dealt
 * round-robin (schedule(static, 1)), so the owner of most pages changes at every region. No single
 * placement serves both; pages that follow their owner (next-touch at each region) would.
 *   auto_phase [MIB [ITERS]]      MIB of matrix (rounded to whole rows) */
#include "locality.h"

#define N 512 /* doubles per row: one 4 KiB page */

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4, rows = (mib << 20) / (N * sizeof(double));
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    double *m = aligned_alloc(BENCH_PAGE, rows * N * sizeof *m);
    if (!m || rows == 0 || iters < 1)
        return 2;
    struct auto_array *M = auto_track(m, rows * N * sizeof *m, "m", "row blocks, then rows round-robin");
    auto_region(0);
#pragma omp parallel
    {
        auto_my_node();
#pragma omp for schedule(static)
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < N; c++) {
                m[r * N + c] = (double)((r + c) % 7);
                auto_init_touch(M, &m[r * N + c]);
                auto_rw(M, &m[r * N + c], -1, 0, 1);
            }
    }
    auto_locate();
    for (int it = 0; it < iters; it++) {
        auto_region(1);
#pragma omp parallel
        { /* blocks of rows */
            int me = auto_my_node();
            unsigned long long l = 0, cnt = 0;
#pragma omp for schedule(static)
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < N; c++) {
                    m[r * N + c] = m[r * N + c] * 0.5 + 1.0;
                    l += auto_rw(M, &m[r * N + c], me, 1, 1);
                    cnt += 2;
                }
#pragma omp atomic
            M->local += l;
#pragma omp atomic
            M->accesses += cnt;
        }
        auto_region(2);
#pragma omp parallel
        { /* rows dealt round-robin */
            int me = auto_my_node();
            unsigned long long l = 0, cnt = 0;
#pragma omp for schedule(static, 1)
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < N; c++) {
                    m[r * N + c] = m[r * N + c] * 0.5 + 2.0;
                    l += auto_rw(M, &m[r * N + c], me, 1, 1);
                    cnt += 2;
                }
#pragma omp atomic
            M->local += l;
#pragma omp atomic
            M->accesses += cnt;
        }
    }
    auto_recheck();
    double sum = 0;
    for (size_t i = 0; i < rows * N; i++)
        sum += m[i];
    auto_report("auto_phase", iters, sum);
    return 0;
}
