/* SPDX-License-Identifier: BSD-3-Clause */
/* site_lines.c - two large arrays from two call sites, for the sites named by file:line and a
 * profile applied to a rebuilt binary (tests/cli/test_profile_sites.sh). Built twice: VARIANT 2
 * changes the code of another function (one line, the line numbers stay), so the build-id and
 * the call sites' offsets change while their function and file:line do not. */
#include <stdio.h>
#include <stdlib.h>
#if VARIANT == 2
__attribute__((noinline)) static long pad(long x) { return x * 3 + 1 + (x > 7 ? x / 5 : x % 3); }
#else
__attribute__((noinline)) static long pad(long x) { return x; }
#endif
__attribute__((noinline)) static double *make(size_t n)
{
    double *p = malloc(n * sizeof(double)); /* site 1: make */
    if (p) /* (no tail call: the allocation's return address is in make) */
        p[n - 1] = 0;
    return p;
}
int main(int argc, char **argv)
{
    size_t n = (size_t)1 << 20;
    double *a = make(n);
    double *b = malloc(n * sizeof *b); /* site 2: main */
    if (!a || !b)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)i, b[i] = 2.0 * (double)i;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] + b[i];
    printf("%.0f %ld\n", s, pad(argc) - pad(argc) + (argv != NULL));
    free(a);
    free(b);
    return 0;
}
