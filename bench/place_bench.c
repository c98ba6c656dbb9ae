/* SPDX-License-Identifier: BSD-3-Clause */
/* place_bench - placement cost of an array under each policy, side by side in one run, against
 * (a) a parallel first-touch memset of the same size (OpenMP static schedule) and
 * (b) libnuma's numa_alloc_interleaved + the same parallel memset.
 * Prints ratios (policy time / first-touch time), system calls and mappings added per array.
 *   place_bench [MiB] [repetitions]      (default 1024 MiB, 3 repetitions; median reported) */
#define _GNU_SOURCE
#include <numa.h>
#include <numaplace.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

static void par_memset(char *a, size_t bytes)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < bytes; i += 4096)
        memset(a + i, 0, bytes - i < 4096 ? bytes - i : 4096);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static double first_touch(size_t bytes)
{
    double t0 = now();
    char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(a, bytes, MADV_NOHUGEPAGE); /* same page size as the policies */
    par_memset(a, bytes);
    double t = now() - t0;
    munmap(a, bytes);
    return t;
}

static double libnuma_interleaved(size_t bytes)
{
    if (numa_available() < 0)
        return -1;
    double t0 = now();
    char *a = numa_alloc_interleaved(bytes);
    if (!a)
        return -1;
    madvise(a, bytes, MADV_NOHUGEPAGE);
    par_memset(a, bytes);
    double t = now() - t0;
    numa_free(a, bytes);
    return t;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (mib == 0 || reps < 1 || reps > 50) {
        fprintf(stderr, "usage: place_bench [MiB] [repetitions]\n");
        return 2;
    }
    size_t bytes = mib << 20;
    const npl_topo *t = npl_topo_self();
    printf("place_bench: %zu MiB, %d usable nodes, %d threads, median of %d\n", mib,
           npl_topo_node_count(t, 0), omp_get_max_threads(), reps);
    const char *policies[] = {"first_touch(npl)", "bind_all", "bind_block", "cyclic",
                              "cyclic_block:16", "skew_mapp", "prime_mapp", "random:seed=1",
                              "random_block:8,seed=1", NULL};
    double ft[50], ln[50];
    /* warm-up: first use of fresh memory and of the worker threads */
    first_touch(bytes);
    npl_policy *w;
    npl_policy_parse(&w, "cyclic");
    npl_free(npl_alloc(64 << 20, w));
    npl_policy_free(w);
    for (int r = 0; r < reps; r++) {
        ft[r] = first_touch(bytes);
        ln[r] = libnuma_interleaved(bytes);
    }
    double base = median(ft, reps), lnm = median(ln, reps);
    printf("%-24s %9s %9s %10s %9s %6s %10s\n", "method", "seconds", "vs_ft", "vs_libnuma",
           "syscalls", "maps+", "misplaced");
    printf("%-24s %9.4f %9.2f %10s %9s %6s %10s\n", "first-touch memset", base, 1.0, "-", "0", "0",
           "-");
    if (lnm > 0)
        printf("%-24s %9.4f %9.2f %10.2f %9s %6s %10s\n", "numa_alloc_interleaved", lnm, lnm / base,
               1.0, "1", "0", "-");
    for (int i = 0; policies[i]; i++) {
        const char *name = policies[i];
        npl_policy *p;
        npl_policy_parse(&p, strncmp(name, "first_touch", 11) ? name : "first_touch");
        double v[50];
        size_t sys = 0, misplaced = 0;
        int maps = 0;
        for (int r = 0; r < reps; r++) {
            int m0 = count_maps();
            double t0 = now();
            char *a = npl_alloc(bytes, p);
            if (!a) {
                fprintf(stderr, "%s: %s\n", name, npl_last_error());
                return 1;
            }
            if (npl_policy_get_kind(p) == NPL_FIRST_TOUCH)
                par_memset(a, bytes);
            v[r] = now() - t0;
            maps = count_maps() - m0;
            struct npl_array_info info;
            npl_array_info(a, &info);
            sys = info.last.syscalls;
            misplaced = info.last.misplaced; /* > 0: a node was full (spilled pages) */
            npl_free(a);
        }
        double m = median(v, reps);
        printf("%-24s %9.4f %9.2f %10.2f %9zu %6d %10zu\n", name, m, m / base,
               lnm > 0 ? m / lnm : 0.0, sys, maps, misplaced);
        npl_policy_free(p);
    }
    return 0;
}
