/* SPDX-License-Identifier: BSD-3-Clause */
/* lists.c - CPU/node list parsing and formatting, small maths. Pure: no system call here. */
#define _GNU_SOURCE
#include "base/base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int parse_int_prefix(const char **p, long *v)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || x > INT_MAX)
        return -1;
    *v = x;
    *p = end;
    return 0;
}

int npl__parse_list(const char *s, int max_value, const char *what, int **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return npl__fail(EINVAL, "empty %s list", what);
    int cap = 16, cnt = 0;
    int *v = malloc(cap * sizeof *v);
    if (!v)
        return npl__fail(ENOMEM, "out of memory");
    const char *p = s;
    while (*p) {
        long a, b;
        const char *item = p;
        if (parse_int_prefix(&p, &a) < 0)
            goto bad;
        b = a;
        if (*p == '-') {
            p++;
            if (parse_int_prefix(&p, &b) < 0 || b < a)
                goto bad;
        }
        if (*p == ',') {
            p++;
            if (!*p)
                goto bad;
        } else if (*p) {
            goto bad;
        }
        if (b > max_value) {
            free(v);
            return npl__fail(EINVAL, "%s %ld out of range (max %d) in \"%s\"", what, b, max_value,
                             s);
        }
        if (b - a + 1 > (long)max_value + 1 - cnt) { /* distinct ids: at most max_value + 1 */
            free(v);
            return npl__fail(EINVAL, "%s list \"%.64s\" names more than %ld ids: some twice",
                             what, s, (long)max_value + 1);
        }
        for (long x = a; x <= b; x++) {
            if (cnt == cap) {
                int *nv = realloc(v, (size_t)cap * 2 * sizeof *v);
                if (!nv) {
                    free(v);
                    return npl__fail(ENOMEM, "out of memory");
                }
                v = nv;
                cap *= 2;
            }
            v[cnt++] = (int)x;
        }
        (void)item;
        continue;
    bad:
        free(v);
        return npl__fail(EINVAL, "malformed %s list \"%s\" at \"%s\"", what, s, item);
    }
    /* duplicates: one bit per possible id (max_value <= NPL__MAX_ID: 8 KiB), linear */
    unsigned char *seen = calloc((size_t)max_value / 8 + 1, 1);
    if (!seen) {
        free(v);
        return npl__fail(ENOMEM, "out of memory");
    }
    for (int i = 0; i < cnt; i++) {
        unsigned bit = 1u << (v[i] % 8);
        if (seen[v[i] / 8] & bit) {
            int dup = v[i];
            free(seen);
            free(v);
            return npl__fail(EINVAL, "duplicate %s %d in \"%s\"", what, dup, s);
        }
        seen[v[i] / 8] |= (unsigned char)bit;
    }
    free(seen);
    *out = v;
    *n = cnt;
    return 0;
}

void npl__format_list(const int *v, int n, char *buf, size_t size)
{
    size_t off = 0;
    if (size)
        buf[0] = 0;
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (j < i + 2)
            j = i; /* runs of one or two are listed one by one */
        int w = (j > i) ? snprintf(buf + off, size - off, "%s%d-%d", i ? "," : "", v[i], v[j])
                        : snprintf(buf + off, size - off, "%s%d", i ? "," : "", v[i]);
        if (w < 0 || (size_t)w >= size - off)
            return; /* truncated */
        off += (size_t)w;
        i = j;
    }
}

int *npl__dup_ints(const int *v, int n)
{
    if (!v || n <= 0)
        return NULL;
    int *d = malloc((size_t)n * sizeof *d);
    if (d)
        memcpy(d, v, (size_t)n * sizeof *d);
    return d;
}

int npl__in_list(int v, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

int npl__is_prime(long n)
{
    if (n < 2)
        return 0;
    for (long d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

int npl__next_prime(long n)
{
    if (n < 2)
        n = 2;
    while (!npl__is_prime(n))
        n++;
    return (int)n;
}

double npl__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

size_t npl__page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

uint64_t npl__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void npl__span_widen(_Atomic uintptr_t *lo, _Atomic uintptr_t *hi, uintptr_t a, uintptr_t b)
{
    uintptr_t cur = atomic_load(lo);
    while (a < cur && !atomic_compare_exchange_weak(lo, &cur, a))
        ;
    cur = atomic_load(hi);
    while (b > cur && !atomic_compare_exchange_weak(hi, &cur, b))
        ;
}
