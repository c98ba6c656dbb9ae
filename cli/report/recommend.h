/* SPDX-License-Identifier: BSD-3-Clause */
/* recommend.h - the report's recommendation rule (pure; tests/unit/test_recommend.c).
 *
 * For one access pattern (operation x access x schedule), given the time of each policy:
 *   1. one usable node: "first_touch" (every placement is the same placement there);
 *   2. otherwise the fastest policy, except that any policy within `tolerance` (e.g. 0.05 = 5%)
 *      of the fastest counts as a tie, and ties go to the policy that comes first in the order
 *      first_touch, bind_block, cyclic, cyclic_block, skew_mapp, prime_mapp, random_block, random,
 *      bind_all,
 *      others (simplest and most local first: no placement is better than one that does not pay).
 *   Entries with seconds <= 0 (not measured) are ignored; none measured: NULL. */
#ifndef NPL_CLI_RECOMMEND_H
#define NPL_CLI_RECOMMEND_H
#include "stats.h"

#include <stddef.h>

struct rec_entry {
    const char *policy; /* policy name (the kind, e.g. "cyclic"; parameters allowed after ':') */
    double seconds;
};
/* Returns the recommended entry's policy (a pointer into e), writes a one-line reason. */
const char *recommend(const struct rec_entry *e, int n, int nnodes, double tolerance, char *why,
                      size_t whysize);

/* The rule with repetitions (the report's): for one access pattern, each policy's stat3 of
 * seconds. Ties are the policies whose [min, max] interval overlaps the fastest's, or whose
 * median is within `tolerance` of it; the tie goes to the first in the order above.
 *   measurable = 0: no policy is clearly slower than the pick ("no measurable difference");
 *                   when every measured policy ties with the fastest, the pick is first_touch
 *                   (when it was measured).
 *   margin: the pick against the fastest policy that does not tie with it (its median time
 *           over the pick's, minus 1: 0.25 = that policy takes 25% longer); -1 when none.
 * One node: placement cannot differ; the policies are first-touch variants there (serial or
 * parallel initialization), and the same rule says whether initialization mattered. */
struct rec_stat_entry {
    const char *policy;
    const struct stat3 *seconds;
};
struct rec_result {
    const char *policy;    /* NULL: nothing measured */
    const char *runner_up; /* the policy the margin is measured against (NULL: none) */
    double margin;
    int measurable;
};
void recommend_stats(const struct rec_stat_entry *e, int n, double tolerance,
                     struct rec_result *out);
#endif
