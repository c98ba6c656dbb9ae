/* SPDX-License-Identifier: BSD-3-Clause */
/* test_recommend_stats - the report's rule with repetitions (recommend_stats in cli/report/recommend.c):
 * ties by overlapping [min, max] ranges or by the noise threshold, "no measurable difference",
 * the margin and the policy it is measured against. */
#include "check.h"
#include "recommend.h"

#include <string.h>

static struct stat3 st(double lo, double mid, double hi)
{
    struct stat3 s = {3, {lo, mid, hi}, mid, lo, hi};
    return s;
}

int main(void)
{
    struct rec_result r;
    struct stat3 ft = st(1.00, 1.10, 1.20), cy = st(1.05, 1.15, 1.25), sk = st(2.0, 2.2, 2.4);
    struct rec_stat_entry a[] = {{"first_touch", &ft}, {"cyclic", &cy}};
    recommend_stats(a, 2, 0.05, &r);
    CHECK(r.policy && !strcmp(r.policy, "first_touch") && !r.measurable && !r.runner_up,
          "overlapping ranges: first_touch, no measurable difference (got %s, %d)",
          r.policy ? r.policy : "NULL", r.measurable);

    struct stat3 fast = st(0.50, 0.52, 0.55);
    struct rec_stat_entry b[] = {{"first_touch", &ft}, {"cyclic", &fast}, {"skew_mapp", &sk}};
    recommend_stats(b, 3, 0.05, &r);
    CHECK(r.policy && !strcmp(r.policy, "cyclic") && r.measurable, "separate and faster: cyclic "
          "(got %s)", r.policy ? r.policy : "NULL");
    CHECK(r.runner_up && !strcmp(r.runner_up, "first_touch"), "margin against first_touch, the "
          "fastest clearly slower (got %s)", r.runner_up ? r.runner_up : "NULL");
    CHECK(r.margin > 1.1 / 0.52 - 1 - 1e-9 && r.margin < 1.1 / 0.52 - 1 + 1e-9, "margin %.3f",
          r.margin);

    /* separate ranges but medians 3% apart: a tie under a 5% threshold, not under 1% */
    struct stat3 x = st(1.000, 1.001, 1.002), y = st(1.030, 1.031, 1.032);
    struct rec_stat_entry c[] = {{"cyclic", &x}, {"first_touch", &y}};
    recommend_stats(c, 2, 0.05, &r);
    CHECK(r.policy && !strcmp(r.policy, "first_touch") && !r.measurable, "3%% apart, 5%% "
          "threshold: first_touch, no difference (got %s)", r.policy ? r.policy : "NULL");
    recommend_stats(c, 2, 0.01, &r);
    CHECK(r.policy && !strcmp(r.policy, "cyclic") && r.measurable, "3%% apart, 1%% threshold: "
          "cyclic (got %s)", r.policy ? r.policy : "NULL");
    /* a noisy run (threshold 0.7) still shows a 2x difference */
    recommend_stats(b, 3, 0.7, &r);
    CHECK(r.policy && !strcmp(r.policy, "cyclic"), "0.7 threshold: cyclic still fastest (got %s)",
          r.policy ? r.policy : "NULL");

    /* first_touch clearly fastest: kept, with its margin */
    struct rec_stat_entry d[] = {{"skew_mapp", &sk}, {"first_touch", &fast}};
    recommend_stats(d, 2, 0.05, &r);
    CHECK(r.policy && !strcmp(r.policy, "first_touch") && r.measurable && r.runner_up &&
          !strcmp(r.runner_up, "skew_mapp"), "first_touch clearly fastest (got %s)",
          r.policy ? r.policy : "NULL");

    struct stat3 none = {0, {0}, -1, -1, -1};
    struct rec_stat_entry e[] = {{"cyclic", &none}};
    recommend_stats(e, 1, 0.05, &r);
    CHECK(r.policy == NULL && !r.measurable, "nothing measured: NULL");
    return check_summary("test_recommend_stats");
}
