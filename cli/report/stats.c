/* SPDX-License-Identifier: BSD-3-Clause */
/* stats.c - repeated measurements (stats.h). Pure. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void stat_clear(struct stat3 *s)
{
    memset(s, 0, sizeof *s);
    s->med = s->min = s->max = -1;
}

void stat_add(struct stat3 *s, double v)
{
    if (s->n >= STATS_MAX_REPS || !(v >= 0))
        return;
    s->rep[s->n++] = v;
    double sorted[STATS_MAX_REPS];
    memcpy(sorted, s->rep, sizeof(double) * (size_t)s->n);
    qsort(sorted, (size_t)s->n, sizeof(double), cmp_double);
    s->min = sorted[0];
    s->max = sorted[s->n - 1];
    s->med = s->n % 2 ? sorted[s->n / 2] : (sorted[s->n / 2 - 1] + sorted[s->n / 2]) / 2;
}

double stat_spread(const struct stat3 *s)
{
    if (s->n == 0 || s->med <= 0)
        return -1;
    return s->n < 2 ? 0 : (s->max - s->min) / s->med;
}

int stat_separate(const struct stat3 *a, const struct stat3 *b)
{
    if (a->n == 0 || b->n == 0)
        return 0;
    return a->max < b->min || b->max < a->min;
}
