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
    return check_summary("test_pin");
}
