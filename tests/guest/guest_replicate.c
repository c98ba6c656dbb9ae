/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_replicate - per-node replicas and huge pages, inside the multi-node guest:
 *   guest_replicate --nodes N --cpus-per-node K
 * Replicas: each thread's local copy sits on its own node (move_pages), values equal the master
 * after sync. Huge pages: per-node 2 MiB pools reserved here (the program runs as root in the
 * guest); cyclic and bind_block arrays get hugetlb pages on the expected nodes; an empty node
 * pool spills (reported); no pool at all falls back to base pages (reported), STRICT fails. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int N, K;
static long PSZ;

static void set_pool(int node, int pages)
{
    char path[128], v[16];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages",
             node);
    FILE *f = fopen(path, "w");
    if (f) {
        snprintf(v, sizeof v, "%d", pages);
        fputs(v, f);
        fclose(f);
    }
}

static int pool_free(int node)
{
    char path[128];
    snprintf(path, sizeof path,
             "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/free_hugepages", node);
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

struct rjob {
    const npl_replica *r;
    int t, node_of_copy, node_of_thread, equal;
    const unsigned char *master;
    size_t bytes;
};
static void *reader(void *arg)
{
    struct rjob *j = arg;
    npl_pin_self("scatter", j->t);
    const unsigned char *c = npl_replica_local(j->r);
    npl_where_am_i(NULL, &j->node_of_thread);
    int st = -1;
    void *pg = (void *)c;
    npl_query_pages(pg, 1, &st, 1);
    j->node_of_copy = st;
    j->equal = memcmp(c, j->master, j->bytes) == 0;
    return NULL;
}

static void test_replicas(void)
{
    size_t bytes = 4 << 20;
    unsigned char *master = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        master[i] = (unsigned char)(i * 7 + 3);
    npl_replica *r;
    CHECK(npl_replicate(&r, master, bytes, NULL, 0, 0) == 0, "replicate 4 MiB: %s", npl_last_error());
    struct npl_replica_info info;
    npl_replica_info(r, &info);
    CHECK(info.ncopies == N && info.total_bytes == bytes * (size_t)N, "%d copies, %zu bytes in all",
          info.ncopies, info.total_bytes);
    /* every page of copy i on node i */
    size_t n = bytes / PSZ, bad = 0;
    int *v = malloc(n * sizeof *v);
    for (int node = 0; node < N; node++) {
        const void *c = npl_replica_on(r, node);
        npl_query_pages(c, bytes, v, n);
        for (size_t i = 0; i < n; i++)
            bad += v[i] != node;
    }
    CHECK(bad == 0, "every page of each copy on its node (%zu wrong)", bad);
    /* numag's per-node master: copy i filled from a CPU of node i (a CPU-less node: a CPU of
     * the nearest node with CPUs) */
    const npl_topo *topo = npl_topo_self();
    int masters_ok = 1;
    for (int i = 0; i < info.ncopies; i++) {
        int node = npl_replica_node(r, i), c0 = -1;
        int fnode = npl_topo_cpu_node(topo, npl_replica_filler_cpu(r, i));
        if (npl_topo_node_cpus(topo, node, &c0, 1) >= 1)
            masters_ok &= npl_replica_filler_cpu(r, i) == c0 && npl_node_master_cpu(node) == c0;
        else /* nearest: no node with CPUs is closer */
            for (int j = 0; j < npl_topo_node_count(topo, 1); j++) {
                int nj = npl_topo_node_id(topo, j);
                masters_ok &= npl_topo_node_cpus(topo, nj, &c0, 1) < 1 ||
                               npl_topo_distance(topo, node, nj) >= npl_topo_distance(topo, node, fnode);
            }
    }
    CHECK(masters_ok, "each copy filled by its node's master CPU (or the nearest node's)");
    int T = N * K > 32 ? 32 : N * K;
    for (int round = 0; round < 2; round++) {
        pthread_t th[32];
        struct rjob j[32];
        for (int t = 0; t < T; t++) {
            j[t] = (struct rjob){r, t, -1, -1, 0, master, bytes};
            pthread_create(&th[t], NULL, reader, &j[t]);
        }
        int wrong = 0, diff = 0;
        for (int t = 0; t < T; t++) {
            pthread_join(th[t], NULL);
            wrong += j[t].node_of_copy != j[t].node_of_thread;
            diff += !j[t].equal;
        }
        CHECK(wrong == 0, "round %d: each of %d threads reads a copy on its own node (%d not)", round,
              T, wrong);
        CHECK(diff == 0, "round %d: every copy equals the master (%d differ)", round, diff);
        /* the master changes: sync, then read again */
        for (size_t i = 0; i < bytes; i += 3)
            master[i] ^= 0x5a;
        CHECK(npl_replica_sync(r) == 0, "sync after the master changed");
    }
    npl_replica_free(r);
    int one = N - 1;
    CHECK(npl_replicate(&r, master, bytes, &one, 1, 0) == 0, "one-node replica set");
    CHECK(npl_replica_local(r) == npl_replica_on(r, one), "every thread gets the only copy");
    npl_replica_free(r);
    int bad_node = 99;
    CHECK(npl_replicate(&r, master, bytes, &bad_node, 1, 0) == -1 && errno == EINVAL,
          "replica on a node that does not exist: EINVAL");
    free(v);
    free(master);
}

static void test_hugetlb(void)
{
    for (int node = 0; node < N; node++)
        set_pool(node, 4);
    int before[64];
    for (int node = 0; node < N; node++)
        before[node] = pool_free(node);
    CHECK(before[0] == 4, "4 huge pages reserved on node 0 (%d)", before[0]);
    size_t bytes = (size_t)N * (2 << 20);
    npl_policy *p;
    npl_policy_parse(&p, "cyclic");
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    char *a = npl_alloc_array(&s, p, NPL_F_HUGETLB);
    struct npl_array_info info;
    CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 1, "cyclic array on hugetlb pages: %s",
          npl_last_error());
    size_t bad = 0;
    for (int k = 0; a && k < N; k++) { /* huge page k on node k: every 4 KiB inside too */
        int v[512];
        npl_query_pages(a + (size_t)k * (2 << 20), 2 << 20, v, 512);
        for (int i = 0; i < 512; i++)
            bad += v[i] != k;
    }
    CHECK(a && bad == 0, "cyclic over 2 MiB pages: huge page k on node k (%zu wrong)", bad);
    size_t hh[64], hb[64], habs = 0;
    int hrc = a ? npl_histogram_huge(a, bytes, hh, hb, &habs) : -1;
    int per_node_ok = hrc == 0 && habs == 0;
    for (int k = 0; k < N; k++)
        per_node_ok &= hh[k] == 1 && hb[k] == 0;
    CHECK(per_node_ok, "npl_histogram_huge: one hugetlb page per node, no base page (rc %d)", hrc);
    int used_ok = 1;
    for (int node = 0; node < N; node++)
        used_ok &= pool_free(node) == before[node] - 1;
    CHECK(used_ok, "each node's pool gave exactly one huge page");
    struct npl_check c;
    CHECK(a && npl_check(a, &c) == 0 && c.misplaced == 0 && c.absent == 0 && c.placed == c.pages,
          "npl_check agrees, every page placed (%zu of %zu, %zu absent)", c.placed, c.pages,
          c.absent);
    npl_free(a);
    npl_policy_free(p);

    /* bind_block, 2 threads per node x 2 MiB blocks */
    char str[64];
    snprintf(str, sizeof str, "bind_block:threads=%d", N);
    npl_policy_parse(&p, str);
    a = npl_alloc_array(&s, p, NPL_F_HUGETLB);
    bad = 0;
    for (int k = 0; a && k < N; k++) {
        int v[1], want = npl_topo_cpu_node(npl_topo_self(), npl_pin_cpu(NULL, "compact", k));
        npl_query_pages(a + (size_t)k * (2 << 20), 4096, v, 1);
        bad += v[0] != want;
    }
    CHECK(a && bad == 0, "bind_block over hugetlb: block k on thread k's node");
    npl_free(a);
    npl_policy_free(p);

    /* node 1's pool empty: its huge page is faulted in from another node's pool, then the verify
     * pass migrates it to node 1 (the kernel allocates hugetlb migration targets outside the
     * pool): placed exactly, and the move is reported */
    set_pool(1, 0);
    npl_policy_parse(&p, "cyclic");
    a = npl_alloc_array(&s, p, NPL_F_HUGETLB);
    int where = -1;
    if (a)
        npl_query_pages(a + (2 << 20), 4096, &where, 1);
    CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 1 && info.last.misplaced == 0 &&
              info.last.moved == 512 && where == 1,
          "empty node-1 pool: huge page 1 moved there (moved %zu, misplaced %zu, on node %d)",
          a ? info.last.moved : 0, a ? info.last.misplaced : 0, where);
    npl_free(a);
    /* no pool at all: base pages, reported; STRICT fails */
    for (int node = 0; node < N; node++)
        set_pool(node, 0);
    a = npl_alloc_array(&s, p, NPL_F_HUGETLB);
    CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 0 && info.hugetlb_fallback == 1 &&
              info.last.misplaced == 0,
          "no pool: base pages, fallback reported, placement exact");
    npl_free(a);
    errno = 0;
    CHECK(npl_alloc_array(&s, p, NPL_F_HUGETLB | NPL_F_STRICT) == NULL && errno == ENOMEM,
          "no pool + STRICT: ENOMEM (%s)", npl_last_error());
    npl_policy_free(p);
}

/* replicas on hugetlb pages: every copy from its own node's pool, on its node */
static void test_hugetlb_replicas(void)
{
    for (int node = 0; node < N; node++)
        set_pool(node, 4);
    size_t bytes = 4 << 20;
    unsigned char *master = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        master[i] = (unsigned char)(i * 11 + 5);
    npl_replica *r;
    CHECK(npl_replicate(&r, master, bytes, NULL, 0, NPL_F_HUGETLB) == 0, "hugetlb replicas: %s",
          npl_last_error());
    int ok = 1, pools = 1;
    for (int node = 0; node < N; node++) {
        const unsigned char *c = npl_replica_on(r, node);
        struct npl_array_info ai;
        size_t hh[64], hb[64];
        ok &= c && npl_array_info(c, &ai) == 0 && ai.hugetlb == 1 &&
              npl_histogram_huge(c, bytes, hh, hb, NULL) == 0 && hh[node] == 2 && hb[node] == 0 &&
              memcmp(c, master, bytes) == 0;
        pools &= pool_free(node) == 2;
    }
    CHECK(ok, "each copy: 2 hugetlb pages on its own node, equal to the master");
    CHECK(pools, "each node's pool gave exactly 2 pages");
    master[12345] ^= 1;
    CHECK(npl_replica_sync(r) == 0 && memcmp(npl_replica_on(r, N - 1), master, bytes) == 0,
          "hugetlb copies synced");
    npl_replica_free(r);
    for (int node = 0; node < N; node++)
        set_pool(node, 0);
    free(master);
}

/* transparent huge pages: cyclic and bind_block over 2 MiB units; THP located per node */
static void test_thp(void)
{
    size_t unit = 2 << 20, bytes = (size_t)2 * N * unit;
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    for (int pass = 0; pass < 2; pass++) {
        char str[64];
        if (pass == 0)
            snprintf(str, sizeof str, "cyclic");
        else
            snprintf(str, sizeof str, "bind_block:threads=%d", N * K); /* 2/K units a thread */
        npl_policy *p = pol(str);
        char *a = npl_alloc_array(&s, p, NPL_F_THP);
        size_t bad = 0, n = bytes / PSZ, units_on[64] = {0};
        int *v = malloc(n * sizeof *v);
        for (size_t u = 0; a && u < bytes / unit; u++) {
            int want = pass == 0 ? (int)(u % (size_t)N)
                                 : npl_topo_cpu_node(npl_topo_self(),
                                                     npl_pin_cpu(NULL, "compact", (int)(u * (size_t)K / 2)));
            units_on[want]++;
            npl_query_pages(a + u * unit, unit, v, n);
            for (size_t i = 0; i < unit / PSZ; i++)
                bad += v[i] != want;
        }
        CHECK(a && bad == 0, "THP %s: every 2 MiB unit on its node (%zu pages wrong)", str, bad);
        size_t hh[64], hb[64], habs = 0, huge = 0;
        int rc = a ? npl_histogram_huge(a, bytes, hh, hb, &habs) : -1;
        int spread = rc == 0;
        for (int k = 0; k < N; k++) {
            huge += hh[k];
            spread &= hh[k] * 512 + hb[k] == units_on[k] * 512;
        }
        CHECK(spread && habs == 0, "THP %s: per node, huge + base pages = the units placed there (rc %d)", str, rc);
        printf("THP %s: %zu of %zu units obtained as transparent huge pages\n", str, huge,
               bytes / unit);
        CHECK(huge > 0, "THP %s: some transparent huge pages obtained (%zu)", str, huge);
        free(v);
        npl_free(a);
        npl_policy_free(p);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    if (N < 2 || K < 1) {
        printf("usage: guest_replicate --nodes N (>= 2) --cpus-per-node K\n");
        return 120;
    }
    test_replicas();
    test_hugetlb();
    test_hugetlb_replicas();
    test_thp();
    return check_summary("guest_replicate");
}
