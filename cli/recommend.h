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
#include <stddef.h>

struct rec_entry {
    const char *policy; /* policy name (the kind, e.g. "cyclic"; parameters allowed after ':') */
    double seconds;
};
/* Returns the recommended entry's policy (a pointer into e), writes a one-line reason. */
const char *recommend(const struct rec_entry *e, int n, int nnodes, double tolerance, char *why,
                      size_t whysize);
#endif
