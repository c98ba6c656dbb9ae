/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_arch - the architecture's promises, checked page by page INSIDE the multi-node guest:
 *
 *   1. an array keeps the plan it was placed with: changing OMP_NUM_THREADS after placement
 *      does not change npl_check's verdict (a plan made now would place differently);
 *   2. a restricted topology restricts placement (npl_plan_create) and pinning (npl_pin_thread);
 *   3. every NUMA system call goes through the counted layer: npl_get_stats() agrees with an
 *      independent count, strace -f -c, for one placement per policy (when strace is on PATH).
 *
 *   guest_arch --nodes N --cpus-per-node K          all checks ("N passed, M failed")
 *   guest_arch --syscalls POLICY                      one placement; prints the library's counts
 */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int N, K;
static long PSZ;

static size_t count_wrong(const void *a, size_t bytes, const int *want)
{
    size_t n = (bytes + PSZ - 1) / PSZ, bad = 0;
    int *have = malloc(n * sizeof *have);
    if (npl_query_pages(a, bytes, have, n) < 0) {
        free(have);
        return n;
    }
    for (size_t i = 0; i < n; i++)
        bad += have[i] != want[i];
    free(have);
    return bad;
}

/* 1. the plan is stored with the array */
static void test_plan_outlives_environment(void)
{
    if (N < 2) { /* tests/guest/run.sh runs this program in guests of 2 nodes and more */
        printf("INFO the plan outlives the environment: needs 2 nodes (%d here)\n", N);
        return;
    }
    setenv("OMP_NUM_THREADS", "2", 1);
    npl_policy *p;
    npl_policy_parse(&p, "cyclic_block"); /* blocks = the static schedule of T threads */
    size_t pages = 96, bytes = pages * PSZ;
    npl_shape s = {1, 2, {pages, PSZ, 0}, NPL_ROW_MAJOR}; /* one row per page */
    char *a = npl_alloc_array(&s, p, NPL_F_STRICT);
    CHECK(a != NULL, "cyclic_block array with OMP_NUM_THREADS=2: %s", npl_last_error());
    if (!a) {
        npl_policy_free(p);
        return;
    }
    int *want = malloc(pages * sizeof *want), *now = malloc(pages * sizeof *now);
    for (size_t i = 0; i < pages; i++) /* halves: thread 0's rows, thread 1's rows */
        want[i] = npl_topo_node_id(npl_topo_self(), i < pages / 2 ? 0 : 1);
    CHECK(count_wrong(a, bytes, want) == 0, "placed for 2 threads: halves on the first 2 nodes");
    setenv("OMP_NUM_THREADS", "3", 1);
    npl_policy_map(p, NULL, &s, bytes, PSZ, 0, pages, now); /* a plan made now: 3 blocks */
    size_t differ = 0;
    for (size_t i = 0; i < pages; i++)
        differ += now[i] != want[i];
    CHECK(differ > 0, "control: with OMP_NUM_THREADS=3 a new plan differs on %zu pages", differ);
    struct npl_check c;
    CHECK(npl_check(a, &c) == 0 && c.placed == pages && c.misplaced == 0,
          "npl_check after the change: %zu of %zu placed, %zu misplaced (the stored plan rules)",
          c.placed, pages, c.misplaced);
    npl_plan *pl = NULL;
    CHECK(npl_array_plan(a, &pl) == 0 && npl_plan_threads(pl) == 2,
          "the array's plan keeps 2 threads (has %d)", pl ? npl_plan_threads(pl) : -1);
    npl_plan_free(pl);
    unsetenv("OMP_NUM_THREADS");
    npl_free(a);
    npl_policy_free(p);
    free(want);
    free(now);
}

/* 2. a restricted topology restricts placement and pinning */
static void test_restricted_topology(void)
{
    if (N < 3) { /* run.sh also runs this program in the 3- and 4-node guests */
        printf("INFO a restricted topology: needs 3 nodes (%d here; the 3- and 4-node guests run "
               "it)\n", N);
        return;
    }
    npl_topo *t;
    if (npl_topo_load(&t) < 0) {
        CHECK(0, "npl_topo_load: %s", npl_last_error());
        return;
    }
    int last = npl_topo_node_id(t, N - 1), cpus[64];
    int nc = npl_topo_node_cpus(t, last, cpus, 64);
    char cpulist[512] = "", nodes[64];
    for (int i = 0; i < nc && i < 64; i++)
        snprintf(cpulist + strlen(cpulist), sizeof cpulist - strlen(cpulist), "%s%d", i ? "," : "",
                 cpus[i]);
    snprintf(nodes, sizeof nodes, "%d,%d", npl_topo_node_id(t, 0), last);
    CHECK(npl_topo_restrict(t, cpulist, nodes) == 0, "restrict to CPUs %s, nodes %s", cpulist,
          nodes);
    npl_policy *p;
    npl_policy_parse(&p, "cyclic");
    npl_plan *pl;
    CHECK(npl_plan_create(&pl, p, t, 0) == 0 && npl_plan_node_count(pl) == 2,
          "cyclic on the restricted topology spreads over 2 nodes (%d)", npl_plan_node_count(pl));
    size_t pages = 64, bytes = pages * PSZ;
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    char *a = npl_alloc_planned(&s, pl, NPL_F_STRICT);
    int want[64];
    for (size_t i = 0; i < pages; i++)
        want[i] = i % 2 ? last : npl_topo_node_id(t, 0);
    CHECK(a && count_wrong(a, bytes, want) == 0, "every page on node %d or %d alternately",
          npl_topo_node_id(t, 0), last);
    npl_free(a);
    npl_plan_free(pl);
    /* pinning on the restricted topology: only node `last`'s CPUs */
    int cpu = npl_pin_thread(t, "compact", 0), now = -1, node = -1;
    npl_where_am_i(&now, &node);
    CHECK(cpu == cpus[0] && now == cpu && node == last,
          "thread 0 pinned on the restricted topology: CPU %d (now on %d, node %d; want %d, %d)",
          cpu, now, node, cpus[0], last);
    cpu = npl_pin_thread(t, "compact", 1);
    CHECK(cpu == cpus[1 % nc], "thread 1 stays inside node %d's CPUs (%d)", last, cpu);
    CHECK(npl_pin_thread(t, "0", 0) < 0 && (errno == EXDEV || cpus[0] == 0),
          "CPU 0 outside the restricted set is refused");
    npl_policy_free(p);
    npl_topo_destroy(t);
}

/* 3a. one placement; the library's own count of its NUMA system calls, for the parent */
static int one_placement(const char *policy)
{
    npl_policy *p;
    if (npl_policy_parse(&p, policy) < 0)
        return 2;
    char *a = npl_alloc((size_t)4 << 20, p);
    struct npl_check c;
    int rc = a && npl_check(a, &c) == 0 ? 0 : 1;
    npl_free(a);
    npl_policy_free(p);
    struct npl_stats st;
    npl_get_stats(&st);
    printf("mbind=%llu set_mempolicy=%llu get_mempolicy=%llu move_pages=%llu migrate_pages=%llu\n",
           (unsigned long long)st.mbind, (unsigned long long)st.set_mempolicy,
           (unsigned long long)st.get_mempolicy, (unsigned long long)st.move_pages,
           (unsigned long long)st.migrate_pages);
    return rc;
}

/* calls per system call name from strace -c's table */
static long strace_calls(const char *file, const char *name)
{
    FILE *f = fopen(file, "r");
    char line[256];
    long calls = 0;
    while (f && fgets(line, sizeof line, f)) {
        double pct, secs;
        long usecs, n, errors = 0;
        char sys[64];
        if (sscanf(line, "%lf %lf %ld %ld %ld %63s", &pct, &secs, &usecs, &n, &errors, sys) == 6 ||
            sscanf(line, "%lf %lf %ld %ld %63s", &pct, &secs, &usecs, &n, sys) == 5)
            if (!strcmp(sys, name))
                calls = n;
    }
    if (f)
        fclose(f);
    return calls;
}

/* 3b. run `strace -f -c guest_arch --syscalls POLICY` and compare */
static void test_syscall_counts(const char *self)
{
    if (system("strace -V >/dev/null 2>&1") != 0) {
        SKIP("strace", "syscall counts against strace: strace is not in this guest "
             "(tests/guest/run.sh adds the host's)");
        return;
    }
    static const char *pols[] = {"first_touch", "bind_all", "cyclic", "cyclic_block:4", "skew_mapp",
                                 "prime_mapp", "random", "random_block:2", "bind_block",
                                 "weighted:0=2,1=1"};
    static const char *names[] = {"mbind", "set_mempolicy", "get_mempolicy", "move_pages",
                                  "migrate_pages"};
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        if (N < 2 && strchr(pols[i], '='))
            continue;
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "strace -f -c -o /tmp/strace.txt -e trace=mbind,set_mempolicy,get_mempolicy,"
                 "move_pages,migrate_pages %s --syscalls %s > /tmp/lib.txt", self, pols[i]);
        int rc = system(cmd);
        FILE *f = fopen("/tmp/lib.txt", "r");
        unsigned long long lib[5] = {0};
        int got = f ? fscanf(f, "mbind=%llu set_mempolicy=%llu get_mempolicy=%llu move_pages=%llu "
                                "migrate_pages=%llu", &lib[0], &lib[1], &lib[2], &lib[3], &lib[4])
                    : 0;
        if (f)
            fclose(f);
        CHECK(rc == 0 && got == 5, "%s under strace: exit %d, counts read %d", pols[i], rc, got);
        long total = 0;
        for (int k = 0; k < 5; k++) {
            long st = strace_calls("/tmp/strace.txt", names[k]);
            total += st;
            CHECK((long)lib[k] == st, "%s: %s: library counted %llu, strace saw %ld", pols[i],
                  names[k], lib[k], st);
        }
        printf("  %-18s %ld NUMA system calls, library and strace agree per call\n", pols[i],
               total);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--syscalls") && i + 1 < argc)
            return one_placement(argv[i + 1]);
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node") && i + 1 < argc)
            K = atoi(argv[++i]);
    }
    if (N < 1 || K < 1 || !npl_topo_self()) {
        printf("usage: guest_arch --nodes N --cpus-per-node K | --syscalls POLICY\n");
        return 120;
    }
    printf("guest_arch: %d nodes x %d CPUs\n", N, K);
    test_plan_outlives_environment();
    test_restricted_topology();
    test_syscall_counts(argv[0]);
    return check_summary("guest_arch");
}
