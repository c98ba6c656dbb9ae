/* SPDX-License-Identifier: BSD-3-Clause */
/* own_blocks - a program that calls numaplace's API between two large blocks of its own, made
 * at one site (make: ordinals 0 and 1). The calls allocate blocks of the library's own with
 * malloc (hwloc's topology, npl_check's and npl_histogram's page lists: 64 KiB for a 64 MiB
 * array), which are no arrays of the program: under `numaplace profile --threshold 64K` the
 * profile holds make's two blocks only, and under `numaplace run -v` two allocations are placed
 * (tests/cli/test_profile_own.sh). Prints a checksum of its blocks. */
#include <numaplace.h>
#include <stdio.h>
#include <stdlib.h>

static double *make(size_t n)
{
    double *p = malloc(n * sizeof *p);
    if (!p)
        exit(2);
    for (size_t i = 0; i < n; i++)
        p[i] = (double)(i % 1000);
    return p;
}

int main(void)
{
    double *a = make((size_t)1 << 20); /* 8 MiB */
    npl_policy *pol = NULL;
    if (!npl_topo_self() || npl_policy_parse(&pol, "cyclic") != 0)
        return 3;
    size_t bytes = (size_t)64 << 20, counts[1024], absent = 0;
    char *x = npl_alloc(bytes, pol); /* mmap'ed by the library: no malloc */
    struct npl_check c;
    if (!x || npl_check(x, &c) != 0 || npl_histogram(x, bytes, counts, &absent) != 0)
        return 4;
    npl_free(x);
    npl_policy_free(pol);
    double *b = make((size_t)1 << 19); /* 4 MiB, the same site */
    double sum = 0;
    for (size_t i = 0; i < (size_t)1 << 20; i++)
        sum += a[i] + (i < (size_t)1 << 19 ? b[i] : 0);
    printf("checksum %.0f\n", sum);
    free(a);
    free(b);
    return 0;
}
