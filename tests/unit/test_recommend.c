/* SPDX-License-Identifier: BSD-3-Clause */
/* test_recommend - the report's recommendation rule (cli/report/recommend.c). */
#include "check.h"
#include "recommend.h"

int main(void)
{
    char why[256];
    struct rec_entry a[] = {{"first_touch", 2.0}, {"cyclic", 1.0}, {"skew_mapp", 1.2}};
    const char *r = recommend(a, 3, 4, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "cyclic"), "fastest wins: got %s", r ? r : "NULL");
    CHECK(strstr(why, "fastest") != NULL, "reason says fastest: %s", why);

    struct rec_entry b[] = {{"skew_mapp", 1.00}, {"cyclic", 1.04}, {"first_touch", 1.2}};
    r = recommend(b, 3, 4, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "cyclic"), "tie within 5%% goes to cyclic (earlier): got %s", r ? r : "NULL");
    CHECK(strstr(why, "skew_mapp") != NULL, "reason names the fastest: %s", why);

    struct rec_entry c[] = {{"cyclic", 1.00}, {"first_touch", 1.049}, {"bind_block", 1.01}};
    r = recommend(c, 3, 2, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "first_touch"), "first_touch within tolerance is preferred: got %s", r ? r : "NULL");

    struct rec_entry d[] = {{"cyclic", 1.00}, {"first_touch", 1.051}};
    r = recommend(d, 2, 2, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "cyclic"), "just outside tolerance: fastest: got %s", r ? r : "NULL");

    r = recommend(a, 3, 1, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "first_touch"), "one node: first_touch: got %s", r ? r : "NULL");
    CHECK(strstr(why, "one NUMA node") != NULL, "one-node reason: %s", why);

    struct rec_entry e[] = {{"cyclic", -1}, {"skew_mapp", 0}};
    CHECK(recommend(e, 2, 4, 0.05, why, sizeof why) == NULL, "nothing measured: NULL");

    struct rec_entry f[] = {{"weighted:0=3,1=1", 1.0}, {"random:seed=1", 1.01}, {"bind_all:0", 0.99}};
    r = recommend(f, 3, 2, 0.05, why, sizeof why);
    CHECK(r && !strcmp(r, "random:seed=1"), "parameters ignored for the order: got %s", r ? r : "NULL");
    struct rec_entry g[] = {{"prime_mapp", 3.0}, {"cyclic_block:4", 2.0}, {"bind_block", 2.2}};
    r = recommend(g, 3, 8, 0.0, why, sizeof why);
    CHECK(r && !strcmp(r, "cyclic_block:4"), "zero tolerance: strictly fastest: got %s", r ? r : "NULL");
    return check_summary("test_recommend");
}
