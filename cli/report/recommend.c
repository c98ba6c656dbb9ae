/* SPDX-License-Identifier: BSD-3-Clause */
/* recommend.c - the report's recommendation rule: see recommend.h. Pure. */
#include "recommend.h"

#include <stdio.h>
#include <string.h>

static int rank(const char *policy)
{
    static const char *order[] = {"first_touch", "bind_block", "cyclic", "cyclic_block",
                                  "skew_mapp", "prime_mapp", "random_block", "random", "bind_all"};
    size_t len = strcspn(policy, ":@");
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (strlen(order[i]) == len && !strncmp(order[i], policy, len))
            return (int)i;
    return (int)(sizeof order / sizeof order[0]);
}

const char *recommend(const struct rec_entry *e, int n, int nnodes, double tolerance, char *why,
                      size_t whysize)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (e[i].seconds > 0 && (best < 0 || e[i].seconds < e[best].seconds))
            best = i;
    if (best < 0) {
        snprintf(why, whysize, "nothing was measured");
        return NULL;
    }
    if (nnodes <= 1) {
        snprintf(why, whysize, "one NUMA node: every placement is the same (fastest measured: %s)",
                 e[best].policy);
        return "first_touch";
    }
    int pick = best;
    for (int i = 0; i < n; i++)
        if (e[i].seconds > 0 && e[i].seconds <= e[best].seconds * (1 + tolerance) &&
            rank(e[i].policy) < rank(e[pick].policy))
            pick = i;
    if (pick == best)
        snprintf(why, whysize, "fastest (%.3g s)", e[best].seconds);
    else
        snprintf(why, whysize, "within %.0f%% of the fastest (%s, %.3g s) and simpler/more local",
                 tolerance * 100, e[best].policy, e[best].seconds);
    return e[pick].policy;
}

static int ties(const struct stat3 *a, const struct stat3 *b, double tolerance)
{
    int separate = a->max < b->min || b->max < a->min; /* as stat_separate() (pure here) */
    return !separate || (a->med <= b->med * (1 + tolerance) &&
                                    b->med <= a->med * (1 + tolerance));
}

void recommend_stats(const struct rec_stat_entry *e, int n, double tolerance,
                     struct rec_result *out)
{
    *out = (struct rec_result){NULL, NULL, -1, 0};
    int best = -1, ft = -1;
    for (int i = 0; i < n; i++) {
        if (e[i].seconds->n == 0)
            continue;
        if (best < 0 || e[i].seconds->med < e[best].seconds->med)
            best = i;
        if (rank(e[i].policy) == 0)
            ft = i;
    }
    if (best < 0)
        return;
    int pick = best, all_tie = 1;
    for (int i = 0; i < n; i++) {
        if (e[i].seconds->n == 0)
            continue;
        if (!ties(e[i].seconds, e[best].seconds, tolerance))
            all_tie = 0;
        else if (rank(e[i].policy) < rank(e[pick].policy))
            pick = i;
    }
    if (all_tie && ft >= 0)
        pick = ft;
    int other = -1; /* the fastest policy that does not tie with the pick */
    for (int i = 0; i < n; i++)
        if (e[i].seconds->n && !ties(e[i].seconds, e[pick].seconds, tolerance) &&
            e[i].seconds->med > e[pick].seconds->med &&
            (other < 0 || e[i].seconds->med < e[other].seconds->med))
            other = i;
    out->policy = e[pick].policy;
    out->measurable = other >= 0; /* some policy is clearly slower than the pick */
    if (other >= 0) {
        out->runner_up = e[other].policy;
        out->margin = e[other].seconds->med / e[pick].seconds->med - 1;
    }
}
