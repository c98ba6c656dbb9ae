/* SPDX-License-Identifier: BSD-3-Clause */
/* patterns3.c - three arrays of known access patterns, for `numaplace profile` tests:
 *   blk  blocked: thread t reads and writes its static share of the array
 *   cyc  cyclic(k): page p is touched by thread (p / K) mod T (K = 4 pages)
 *   shr  shared, read-mostly: written once by the main thread, read whole by every thread
 * usage: patterns3 [MIB_PER_ARRAY [ITERATIONS]]; prints one checksum line (the same for any
 * thread count, placement or profile), exit status 0. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define K 4 /* pages per cyclic block */

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    size_t n = mib << 20 >> 3, per_page = 4096 / sizeof(double);
    double *blk = malloc(n * sizeof *blk), *cyc = malloc(n * sizeof *cyc),
           *shr = malloc(n * sizeof *shr);
    if (!blk || !cyc || !shr)
        return 1;
    for (size_t i = 0; i < n; i++) /* the main thread initialises the shared one */
        shr[i] = (double)(i % 7);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++)
            blk[i] = 1.0;
        for (size_t i = 0; i < n; i++)
            if ((i / per_page / K) % (size_t)T == (size_t)t)
                cyc[i] = 2.0;
    }
    double sum = 0;
    for (int it = 0; it < iters; it++) {
#pragma omp parallel reduction(+ : sum)
        {
            int t = omp_get_thread_num(), T = omp_get_num_threads();
#pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++)
                blk[i] = blk[i] * 0.5 + shr[(i * 7) % n];
            for (size_t i = 0; i < n; i++)
                if ((i / per_page / K) % (size_t)T == (size_t)t)
                    cyc[i] += 1.0;
            double s = 0;
            for (size_t i = (size_t)t; i < n; i += 61)
                s += shr[i];
            sum += s / T;
        }
    }
    double cs = 0;
    for (size_t i = 0; i < n; i += 17)
        cs += blk[i] + cyc[i];
    printf("checksum %.6e %.6e\n", cs, sum);
    free(blk);
    free(cyc);
    free(shr);
    return 0;
}
