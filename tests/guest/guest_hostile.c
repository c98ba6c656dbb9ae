/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_hostile - the hostile suite's cases that need several nodes (every guest shape):
 *   guest_hostile --nodes N --cpus-per-node K [--iterations I]
 * (the host's cases: tests/host/test_hostile_api.c; khugepaged: guest_khugepaged.c)
 *   1. re-arming a next-touch array while 7 threads write to it finishes, and every write
 *      survives (tests/host/rearm_race.h): here each resolved chunk moves pages between nodes,
 *      which made the old protocol's arm wait forever;
 *   2. failures give back what they took: each kind of failure that needs nodes (a node's memory
 *      exhausted under NPL_F_STRICT, for an allocation, a re-placement and a replica set; empty
 *      hugetlb pools, STRICT or not) is repeated, and the process's mappings and open files must
 *      not grow after the first time (a one-time cost such as a library loaded on first use is
 *      not a leak; growth with each failure is). */
#define _GNU_SOURCE
#include "check.h"
#include "../host/rearm_race.h"
#include <dirent.h>
#include <errno.h>
#include <numaplace.h>
#include <numaplace/replicate.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
/* a race took 3-18 s in the 4-node TCG guest on a loaded host (the old protocol: 4 KiB chunks
 * never finished, 64 KiB ones took 40-91 s); the watchdog only turns a hang into a failure */
#define WATCHDOG 120
#define REPEAT 5
static int N;
static size_t PSZ;

/* ---- 1. re-arm while writing ---- */
static void test_rearm(int iterations)
{
    const size_t chunks[2] = {4096, 64 * 1024};
    for (int c = 0; c < 2; c++) {
        int ok = 0;
        for (int i = 0; i < iterations; i++) {
            int st = rearm_race(64, chunks[c], 7, 3, 10, 1000, WATCHDOG);
            ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                printf("  re-arm race %d: status %#x (%s)\n", i, st,
                       WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "hung: watchdog"
                                                                  : "failed");
        }
        CHECK(ok == iterations, "re-arm in a loop while 7 threads write, %zu-byte chunks: %d of "
              "%d races finished with every write kept", chunks[c], ok, iterations);
    }
}

/* ---- 2. failures give back what they took ---- */
static struct usage usage_now(void)
{
    struct npl_stats st = {0};
    npl_get_stats(&st);
    return (struct usage){count_maps(), count_fds(), st.arrays_live};
}

static void no_growth(const char *what, int (*fail)(void))
{
    struct usage u0 = usage_now();
    int ok = fail();
    struct usage u1 = usage_now();
    for (int i = 1; i < REPEAT; i++)
        ok &= fail();
    struct usage u2 = usage_now();
    printf("  %s: mappings %d -> %d -> %d, open files %d -> %d -> %d (before, after 1, after %d)\n",
           what, u0.maps, u1.maps, u2.maps, u0.fds, u1.fds, u2.fds, REPEAT);
    CHECK(ok, "%s: failed as documented, %d times (%s)", what, REPEAT, npl_last_error());
    CHECK(u2.maps <= u1.maps && u2.fds == u1.fds && u2.arrays == u0.arrays,
          "%s: nothing kept: mappings %d, %d after the first, %d after %d; open files %d, %d, %d; "
          "arrays %llu, %llu", what, u0.maps, u1.maps, u2.maps, REPEAT, u0.fds, u1.fds, u2.fds,
          (unsigned long long)u0.arrays, (unsigned long long)u2.arrays);
}

static int full_node;            /* filled by a hog array */
static npl_policy *on_full, *cyc;
static unsigned char *victim;    /* placed cyclic before the node was filled */
#define ATTEMPT (16 * MIB)

static int f_strict_alloc(void)
{
    npl_shape s = {1, 1, {ATTEMPT, 0, 0}, NPL_ROW_MAJOR};
    return npl_alloc_array(&s, on_full, NPL_F_STRICT) == NULL && errno == ENOMEM;
}
static int f_strict_apply(void)
{
    return npl_apply(victim, on_full, NPL_F_STRICT) == -1 && errno == ENOMEM;
}
static int f_strict_replicate(void) /* the copy on node 0 is made, the one on the full node fails */
{
    npl_replica *r = NULL;
    int nodes[2] = {0, full_node};
    return npl_replicate(&r, victim, ATTEMPT, nodes, 2, NPL_F_STRICT) == -1 && errno == ENOMEM &&
           r == NULL;
}
static int f_hugetlb_strict(void)
{
    npl_shape s = {1, 1, {(size_t)N * 2 * MIB, 0, 0}, NPL_ROW_MAJOR};
    return npl_alloc_array(&s, cyc, NPL_F_HUGETLB | NPL_F_STRICT) == NULL && errno == ENOMEM;
}
static int f_hugetlb_fallback(void)
{
    npl_shape s = {1, 1, {(size_t)N * 2 * MIB, 0, 0}, NPL_ROW_MAJOR};
    void *a = npl_alloc_array(&s, cyc, NPL_F_HUGETLB);
    struct npl_array_info info = {0};
    int ok = a && npl_array_info(a, &info) == 0 && info.hugetlb_fallback == 1;
    return npl_free(a) == 0 && ok;
}
static int f_masked_node(void) /* a node outside a restricted topology: EXDEV */
{
    npl_topo *t = NULL;
    npl_plan *pl = NULL;
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", 0);
    int ok = npl_topo_load(&t) == 0 && npl_topo_restrict(t, NULL, nodes) == 0 &&
             npl_plan_create(&pl, on_full, t, 0) == -1 && errno == EXDEV;
    npl_plan_free(pl);
    npl_topo_destroy(t);
    return ok;
}

static void test_failures(void)
{
    npl_topo *fresh;
    if (npl_topo_load(&fresh) < 0) {
        CHECK(0, "topology: %s", npl_last_error());
        return;
    }
    full_node = N - 1;
    struct npl_node_info ni;
    npl_topo_node_info(fresh, full_node, &ni);
    npl_topo_destroy(fresh);
    char str[32];
    snprintf(str, sizeof str, "bind_all:%d", full_node);
    on_full = pol(str);
    cyc = pol("cyclic");
    victim = npl_alloc(ATTEMPT, cyc);
    CHECK(victim != NULL, "victim array: %s", npl_last_error());
    if (!victim)
        return;
    memset(victim, 0x6b, ATTEMPT);
    /* fill the last node: an array as large as its free memory and 32 MiB more (the rest spills
     * to other nodes; nothing is refused without NPL_F_STRICT) */
    size_t hog_bytes = (size_t)(ni.free_bytes + 32 * MIB) & ~(PSZ - 1);
    unsigned char *hog = npl_alloc(hog_bytes, on_full);
    CHECK(hog != NULL, "node %d filled (%zu MiB): %s", full_node, hog_bytes >> 20,
          npl_last_error());
    if (hog) {
        no_growth("NPL_F_STRICT allocation on a full node (ENOMEM)", f_strict_alloc);
        no_growth("NPL_F_STRICT re-placement onto a full node (ENOMEM)", f_strict_apply);
        no_growth("npl_replicate failing at its second copy (ENOMEM)", f_strict_replicate);
        npl_free(hog);
    }
    char polstr[64] = "";
    size_t bad = 0;
    for (size_t i = 0; i < ATTEMPT; i++)
        bad += victim[i] != 0x6b;
    npl_array_policy(victim, polstr, sizeof polstr);
    CHECK(bad == 0 && strcmp(polstr, "cyclic") == 0,
          "the array of the failed re-placements keeps its data and policy (%zu bytes differ, %s)",
          bad, polstr);
    no_growth("a node outside a restricted topology (EXDEV)", f_masked_node);
    if (hugetlb_pool_empty()) {
        no_growth("NPL_F_HUGETLB | NPL_F_STRICT, empty pools (ENOMEM)", f_hugetlb_strict);
        no_growth("NPL_F_HUGETLB, empty pools: base pages, then freed", f_hugetlb_fallback);
    } else {
        SKIP("hugetlb-pool-free", "the empty hugetlb pool cases: this guest has free 2 MiB "
             "pages");
    }
    npl_free(victim);
    npl_policy_free(on_full);
    npl_policy_free(cyc);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int k = 0, iterations = 1;
    guest_args(argc, argv, &N, &k);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--iterations"))
            iterations = atoi(argv[++i]);
    if (N < 2 || !npl_topo_self() || npl_topo_node_count(npl_topo_self(), 0) != N) {
        printf("usage: guest_hostile --nodes N --cpus-per-node K (in a guest of N >= 2 nodes)\n");
        return 120;
    }
    numa_balancing_off();
    PSZ = (size_t)sysconf(_SC_PAGESIZE);
    printf("guest_hostile: %d nodes x %d CPUs\n", N, k);
    test_failures();
    test_rearm(iterations);
    return check_summary("guest_hostile");
}
