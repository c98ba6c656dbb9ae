/* SPDX-License-Identifier: BSD-3-Clause */
/* triad_bench - the variability study of Porterfield et al.: N runs of a STREAM triad
 * (a[i] = b[i] + s * c[i]) with T OpenMP threads. Each run allocates its three arrays afresh,
 * initializes them in parallel (static schedule, so first touch places each thread's block) and
 * times R triads; the run's figure is its best triad bandwidth. With --pin (numaplace variant)
 * the team is pinned by numaplace BEFORE the first initialization and stays pinned; with
 * --pin none (and in the plain variant, which OMP_PROC_BIND/OMP_PLACES may pin from outside) the
 * threads are free. The checksum (sum of a after the last triad of the last run) does not depend
 * on threads or placement: every element is computed alone, summed in a fixed order.
 *
 *   triad_bench [--mib M] [--runs N] [--reps R] [--pin compact|scatter|none]
 * Prints one JSON object: per-run GB/s and min / mean / max / standard deviation / coefficient of
 * variation. */
#include "bench_common.h"

#include <getopt.h>
#include <math.h>
#include <omp.h>
#ifdef BENCH_NPL
#include <numaplace/omp.h>
#endif

#define MAX_RUNS 1000

static double one_run(size_t n, int reps, double *check)
{
    size_t bytes = n * sizeof(double);
    double *a = bench_alloc(bytes), *b = bench_alloc(bytes), *c = bench_alloc(bytes), best = 0.0;
    if (!a || !b || !c)
        return -1.0;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = 0.0, b[i] = (double)(i % 1000), c[i] = 0.5;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] + 3.0 * c[i];
        double t = bench_now() - t0, gbs = 3.0 * (double)bytes / t * 1e-9;
        best = gbs > best ? gbs : best;
    }
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    *check = s;
    bench_free(a, bytes), bench_free(b, bytes), bench_free(c, bytes);
    return best;
}

static int parse(int argc, char **argv, size_t *mib, int *runs, int *reps, const char **pin)
{
    static const struct option longopts[] = {
        {"mib", 1, 0, 'm'}, {"runs", 1, 0, 'n'}, {"reps", 1, 0, 'r'}, {"pin", 1, 0, 'p'}, {0, 0, 0, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (ch == 'm')
            *mib = strtoul(optarg, NULL, 10);
        else if (ch == 'n')
            *runs = atoi(optarg);
        else if (ch == 'r')
            *reps = atoi(optarg);
        else if (ch == 'p')
            *pin = optarg;
        else
            return -1;
    }
    return *mib >= 1 && *runs >= 1 && *runs <= MAX_RUNS && *reps >= 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    size_t mib = 64;
    int runs = 25, reps = 5;
    const char *pin = "none";
    static double gbs[MAX_RUNS];
    if (parse(argc, argv, &mib, &runs, &reps, &pin) < 0) {
        fprintf(stderr, "usage: triad_bench [--mib M] [--runs N<=1000] [--reps R] [--pin S]\n");
        return 2;
    }
#ifdef BENCH_NPL
    if (strcmp(pin, "none") != 0 && npl_omp_pin_team(pin) < 0) {
        fprintf(stderr, "triad_bench: pin %s: %s\n", pin, strerror(errno));
        return 1;
    }
#else
    pin = getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "none";
#endif
    size_t n = mib * 1024 * 1024 / sizeof(double);
    double check = 0.0, sum = 0.0, sq = 0.0, lo = 1e300, hi = 0.0;
    for (int r = 0; r < runs; r++) {
        if ((gbs[r] = one_run(n, reps, &check)) < 0) {
            fprintf(stderr, "triad_bench: out of memory\n");
            return 1;
        }
        sum += gbs[r], lo = gbs[r] < lo ? gbs[r] : lo, hi = gbs[r] > hi ? gbs[r] : hi;
    }
    double mean = sum / runs;
    for (int r = 0; r < runs; r++)
        sq += (gbs[r] - mean) * (gbs[r] - mean);
    double sd = runs > 1 ? sqrt(sq / (runs - 1)) : 0.0;
    printf("{\"program\": \"triad\", \"variant\": \"%s\", \"pin\": \"%s\", \"threads\": %d, "
           "\"mib_per_array\": %zu, \"runs\": %d, \"reps\": %d, \"checksum\": %.1f, \"gbs\": [",
#ifdef BENCH_NPL
           "api",
#else
           "plain",
#endif
           pin, omp_get_max_threads(), mib, runs, reps, check);
    for (int r = 0; r < runs; r++)
        printf("%s%.4f", r ? ", " : "", gbs[r]);
    printf("], \"min\": %.4f, \"mean\": %.4f, \"max\": %.4f, \"sd\": %.4f, \"cv\": %.6f}\n", lo, mean,
           hi, sd, mean > 0 ? sd / mean : 0.0);
    return 0;
}
