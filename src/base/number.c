/* SPDX-License-Identifier: BSD-3-Clause */
/* number.c - sizes and counts (base/number.h). */
#include "base/number.h"

#include <errno.h>

/* Leading digits of *p into *v (saturating at UINT64_MAX), *p after them. Returns -1 if there is
 * no digit, 1 if the digits do not fit in 64 bits, else 0. */
static int digits(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    int big = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (big || x > (UINT64_MAX - d) / 10)
            big = 1;
        else
            x = x * 10 + d;
    }
    *p = s;
    *v = big ? UINT64_MAX : x;
    return big;
}

static int fail(int err)
{
    errno = err;
    return -1;
}

/* the whole string read, v << shift (big: past 64 bits) checked against [min, max] */
static int take(uint64_t v, int big, unsigned shift, uint64_t min, uint64_t max, uint64_t *out)
{
    if (big || min > max || v > (max >> shift) || (v << shift) < min)
        return fail(ERANGE);
    *out = v << shift;
    return 0;
}

int npl__parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    int big = s ? digits(&s, &v) : -1;
    if (big < 0 || *s)
        return fail(EINVAL);
    return take(v, big, 0, min, max, out);
}

int npl__parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    int big = s ? digits(&s, &v) : -1;
    if (big < 0)
        return fail(EINVAL);
    unsigned shift = 0;
    switch (*s) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: break;
    }
    if (shift) {
        s++;
        s += *s == 'i';
        s += *s == 'B';
    }
    if (*s)
        return fail(EINVAL);
    return take(v, big, shift, min, max, out);
}
