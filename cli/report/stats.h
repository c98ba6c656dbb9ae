/* SPDX-License-Identifier: BSD-3-Clause */
/* stats.h - repeated measurements: every repetition kept, median / min / max, and the rule that
 * says whether two results differ or are within noise (their [min, max] intervals overlap). */
#ifndef NPL_CLI_STATS_H
#define NPL_CLI_STATS_H

#define STATS_MAX_REPS 20

struct stat3 {
    int n;                        /* repetitions kept (0: not measured) */
    double rep[STATS_MAX_REPS];   /* in the order measured */
    double med, min, max;         /* -1 when n == 0 */
};

/* Append one repetition (ignored when full or v < 0) and recompute med/min/max. */
void stat_add(struct stat3 *s, double v);
/* Empty: n = 0, med = min = max = -1. */
void stat_clear(struct stat3 *s);
/* (max - min) / med: the relative spread, 0 for fewer than 2 repetitions, -1 if not measured. */
double stat_spread(const struct stat3 *s);
/* 1 when the [min, max] intervals of a and b do not overlap (a real difference), else 0. */
int stat_separate(const struct stat3 *a, const struct stat3 *b);
#endif
