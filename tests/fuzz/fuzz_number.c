/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the one grammar of sizes and counts (src/base/number.c). The input, up to its
 * first NUL, is the text. An oracle that reads the grammar of base/number.h in 128-bit arithmetic
 * says what each call must answer, and:
 *   - a value that parses prints back ("%llu", and with its largest exact suffix) to the same value;
 *   - nothing wraps: an accepted value equals digits x 2^suffix exactly, and lies in [min, max];
 *   - an error is EINVAL exactly when the text is not of the grammar, else ERANGE, and *out is
 *     left alone;
 *   - the bounds are exact: [v, v] accepts v, [v + 1, max] and [0, v - 1] refuse it. */
#include "base/number.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
#define HUGE_VALUE ((u128)1 << 70) /* "more than 64 bits" (saturated; shifts stay in 128) */

/* The grammar, read independently: 1 and the exact value (saturated at HUGE_VALUE), or 0. */
static int oracle(const char *s, int size, u128 *value)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0)
        return 0;
    u128 v = 0;
    for (size_t i = 0; i < n; i++) {
        v = v * 10 + (u128)(s[i] - '0');
        if (v > HUGE_VALUE)
            v = HUGE_VALUE;
    }
    const char *rest = s + n;
    unsigned shift = 0;
    if (size && *rest) {
        const char *u = strchr("KkMmGg", *rest);
        if (!u)
            return 0;
        shift = (unsigned)(u - "KkMmGg") / 2 * 10 + 10;
        rest++;
        if (*rest == 'i')
            rest++;
        if (*rest == 'B')
            rest++;
    }
    if (*rest)
        return 0;
    *value = v >= HUGE_VALUE ? HUGE_VALUE : v << shift;
    return 1;
}

typedef int (*parse_fn)(const char *, uint64_t, uint64_t, uint64_t *);

/* one call against the oracle; returns 1 when it accepted (value in *got) */
static int check(parse_fn parse, int size, const char *s, uint64_t min, uint64_t max, uint64_t *got)
{
    u128 want;
    int valid = oracle(s, size, &want);
    const uint64_t untouched = 0x5a5a5a5a5a5a5a5aull;
    uint64_t v = untouched;
    errno = 0;
    int rc = parse(s, min, max, &v);
    int in_range = valid && want >= min && want <= max;
    if (rc == 0) {
        if (!in_range || v != (uint64_t)want)
            abort(); /* accepted something outside the grammar or the range, or a wrapped value */
        *got = v;
        return 1;
    }
    if (rc != -1 || v != untouched || in_range)
        abort(); /* refused a valid value, or wrote *out on error */
    if (errno != (valid ? ERANGE : EINVAL))
        abort();
    return 0;
}

/* the value printed back parses to itself */
static void round_trip(uint64_t v)
{
    char buf[64];
    uint64_t w;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    if (npl__parse_count(buf, 0, UINT64_MAX, &w) || w != v)
        abort();
    if (npl__parse_size(buf, 0, UINT64_MAX, &w) || w != v)
        abort();
    static const char *const suffix[] = {"", "K", "MiB", "GB"};
    int k = 0;
    while (k < 3 && v && !(v & ((1ull << (10 * (k + 1))) - 1)))
        k++;
    snprintf(buf, sizeof buf, "%llu%s", (unsigned long long)(v >> (10 * k)), suffix[k]);
    if (npl__parse_size(buf, 0, UINT64_MAX, &w) || w != v)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    for (int sz = 0; sz < 2; sz++) {
        parse_fn parse = sz ? npl__parse_size : npl__parse_count;
        uint64_t v = 0, w;
        check(parse, sz, s, 1, NPL__SIZE_MAX, &w);
        check(parse, sz, s, 0, 0, &w);
        if (!check(parse, sz, s, 0, UINT64_MAX, &v))
            continue;
        round_trip(v);
        if (!check(parse, sz, s, v, v, &w) || w != v)
            abort();
        if (v < UINT64_MAX && check(parse, sz, s, v + 1, UINT64_MAX, &w))
            abort();
        if (v > 0 && check(parse, sz, s, 0, v - 1, &w))
            abort();
    }
    if (npl__parse_count(NULL, 0, 1, &(uint64_t){0}) != -1 || errno != EINVAL)
        abort();
    free(s);
    return 0;
}
