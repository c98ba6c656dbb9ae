/* SPDX-License-Identifier: BSD-3-Clause */
/* Pin orders (pure) on synthetic machines: compact fills a node, one thread per core first;
 * scatter goes round-robin over nodes; lists must be allowed; wrap-around past the end. */
#include "check.h"
#include <errno.h>
#include <numaplace.h>

static void expect_order(npl_topo *t, const char *strategy, const char *expected)
{
    int v[64];
    char got[512];
    int n = npl_pin_order(t, strategy, v, 64);
    CHECK(n > 0 && vec_equals(v, (size_t)n, expected, got, sizeof got), "%s: got [%s] want [%s]",
          strategy, n > 0 ? got : npl_last_error(), expected);
}

int main(void)
{
    npl_topo *t;
    /* 2 nodes x 2 cores x 2 hyperthreads: PUs 0,1 = core 0; 2,3 = core 1; 4-7 on node 1 */
    npl_topo_load_synthetic(&t, "numa:2 core:2 pu:2");
    expect_order(t, "compact", "0 2 4 6 1 3 5 7");
    expect_order(t, "scatter", "0 4 2 6 1 5 3 7");
    expect_order(t, "5,1,7", "5 1 7");
    expect_order(t, "list:0-2", "0 1 2");
    CHECK(npl_pin_cpu(t, "compact", 1) == 2, "thread 1 compact -> CPU 2 (next core, same node)");
    CHECK(npl_pin_cpu(t, "scatter", 1) == 4, "thread 1 scatter -> CPU 4 (next node)");
    CHECK(npl_pin_cpu(t, "compact", 9) == 2, "thread 9 of 8 CPUs wraps to entry 1");
    CHECK(npl_pin_cpu(t, "compact", -1) == -1 && errno == EINVAL, "negative thread");
    CHECK(npl_pin_order(t, "diagonal", NULL, 0) == -1 && errno == EINVAL, "unknown strategy");
    CHECK(npl_pin_order(t, "0,0", NULL, 0) == -1 && errno == EINVAL, "duplicate CPU");
    CHECK(npl_pin_order(t, "12", NULL, 0) == -1 && errno == EINVAL, "CPU that does not exist");
    /* masked CPUs are never used */
    npl_topo_restrict(t, "1-6", NULL);
    expect_order(t, "compact", "1 2 4 6 3 5");
    expect_order(t, "scatter", "1 4 2 6 3 5");
    CHECK(npl_pin_order(t, "0", NULL, 0) == -1 && errno == EXDEV, "CPU 0 outside the mask: EXDEV");
    npl_topo_destroy(t);

    /* 3 nodes, uneven: scatter skips exhausted nodes */
    npl_topo_load_synthetic(&t, "numa:3 core:2 pu:1");
    npl_topo_restrict(t, "0-4", NULL);
    expect_order(t, "scatter", "0 2 4 1 3");
    expect_order(t, "compact", "0 1 2 3 4");
    npl_topo_destroy(t);
    /* likwid-style domains: 2 packages x 2 L3 (one node each) x 2 cores x 2 PUs. Inside a
     * domain the allowed CPUs count physical cores first (SMT rank 0 of every core, then 1). */
    npl_topo_load_synthetic(&t, "pack:2 l3:2 numa:1 core:2 pu:2");
    expect_order(t, "S1:0-3", "8 10 12 14");
    expect_order(t, "S1:4", "9");
    expect_order(t, "M1:0-3", "4 6 5 7");
    expect_order(t, "C3:0-1", "12 14");
    expect_order(t, "N:0-2", "0 2 4");
    expect_order(t, "N0:1", "2");
    expect_order(t, "E:N:4:1:2", "0 4 8 12");
    expect_order(t, "E:S0:4", "0 2 4 6");
    expect_order(t, "E:N:4:2:4", "0 2 8 10");
    expect_order(t, "S0:0-1@S1:0-1", "0 2 8 10");
    CHECK(npl_pin_cpu(t, "M2:0-1", 1) == 10, "thread 1 of M2:0-1 -> CPU 10");
    CHECK(npl_pin_order(t, "S2:0", NULL, 0) == -1 && errno == EINVAL, "S2 does not exist");
    CHECK(npl_pin_order(t, "S0:8", NULL, 0) == -1 && errno == EINVAL, "S0 has 8 CPUs: 0-7");
    CHECK(npl_pin_order(t, "X0:1", NULL, 0) == -1 && errno == EINVAL, "unknown domain letter");
    CHECK(npl_pin_order(t, "S0:0@S0:0", NULL, 0) == -1 && errno == EINVAL, "CPU named twice");
    CHECK(npl_pin_order(t, "E:N:17", NULL, 0) == -1 && errno == EINVAL, "17 of 16 CPUs");
    CHECK(npl_pin_order(t, "E:N:0", NULL, 0) == -1 && errno == EINVAL, "count 0");
    CHECK(npl_pin_order(t, "S0:", NULL, 0) == -1 && errno == EINVAL, "empty position list");
    CHECK(npl_pin_order(t, "S:0", NULL, 0) == -1 && errno == EINVAL, "S without a number");
    /* counted inside the allowed set: node 0's CPUs masked off, S0 starts at CPU 4 */
    npl_topo_restrict(t, "4-15", NULL);
    expect_order(t, "S0:0-1", "4 6");
    CHECK(npl_pin_order(t, "M0:0", NULL, 0) == -1 && errno == EXDEV, "M0 has no allowed CPU");
    npl_topo_destroy(t);

    /* linear orders: a large synthetic machine (64 nodes x 32 cores x 2 PUs) in one go */
    npl_topo_load_synthetic(&t, "numa:64 core:32 pu:2");
    static int big[4096];
    CHECK(npl_pin_order(t, "scatter", big, 4096) == 4096 && big[0] == 0 && big[1] == 64 &&
              big[64 * 32] == 1,
          "scatter on 4096 PUs: node after node, then the second hyperthreads");
    CHECK(npl_pin_order(t, "compact", big, 4096) == 4096 && big[1] == 2 && big[2048] == 1,
          "compact on 4096 PUs");
    CHECK(npl_topo_core_count(t) == 2048, "2048 cores");
    npl_topo_destroy(t);
    return check_summary("test_pin");
}
