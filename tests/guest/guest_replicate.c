/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_replicate - per-node replicas and huge pages, inside the multi-node guest:
 *   guest_replicate --nodes N --cpus-per-node K
 * Replicas: each thread's local copy sits on its own node (move_pages), values equal the master
 * after sync. Huge pages: per-node 2 MiB pools reserved here (the program runs as root in the
 * guest); cyclic and bind_block arrays get hugetlb pages on the expected nodes; an empty node
 * pool spills (reported); no pool at all falls back to base pages (reported), STRICT fails.
 * Advised replicas (issue 37, "a read-mostly table that fits in replicas"): a table the main
 * thread fills and every worker (one per CPU) reads, allocated by npl_alloc_auto; profiled
 * (`numaplace profile`), then run with its profile: the advice is a spread policy with
 * replicas (npl_profile_replicate), the program replicates the table and each worker reads its
 * node's copy. Each worker counts its reads' locality from the pages it reads (move_pages):
 * asserted 1.000 local and no node serving more than half the reads, against the first-touch
 * run's 1/N local with node 0 serving all of them; the same checksum in every run.
 *   guest_replicate --auto-child MODE PASSES --nodes N --cpus-per-node K  (MODE: plain|advised;
 *   advised: the profile in GREP_PROFILE) */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/profile.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
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

/* ---- advised replicas: the child ---- */
#define TABLE_BYTES (2u << 20)
static const double *table_view; /* what the workers read: the table or their copies */
static const npl_replica *table_copies;
static int auto_passes;
struct aw {
    int t, node, local_pages, pages, served[64];
    double sum;
};

static __attribute__((noinline)) double *alloc_table(const npl_profile *p)
{
    npl_shape s = {1, 1, {TABLE_BYTES, 0, 0}, NPL_ROW_MAJOR};
    double *r = npl_alloc_auto(p, &s, 0);
    __asm__ volatile("" ::: "memory"); /* a real call: its return address is the site */
    return r;
}

static void *auto_worker(void *arg)
{
    struct aw *w = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->t, &set); /* worker t on CPU t: node t / K */
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        return (void *)1;
    npl_where_am_i(NULL, &w->node);
    const double *b = table_copies ? npl_replica_local(table_copies) : table_view;
    size_t n = TABLE_BYTES / sizeof(double);
    for (int p = 0; p < auto_passes; p++) /* every element, a stride per worker: all pages */
        for (size_t i = (size_t)(w->t + p) % 8; i < n; i += 8)
            w->sum += b[i];
    /* its reads are spread evenly over the pages: the pages' nodes are its locality */
    int np = (int)(TABLE_BYTES / PSZ), *nodes = malloc((size_t)np * sizeof *nodes);
    if (!nodes || npl_query_pages(b, TABLE_BYTES, nodes, (size_t)np) < 0)
        return (void *)1;
    for (int i = 0; i < np; i++) {
        w->local_pages += nodes[i] == w->node;
        if (nodes[i] >= 0 && nodes[i] < 64)
            w->served[nodes[i]]++;
    }
    w->pages = np;
    free(nodes);
    return NULL;
}

static int auto_child(const char *mode, int passes)
{
    npl_profile *p = NULL;
    if (!strcmp(mode, "advised") && npl_profile_load(&p, getenv("GREP_PROFILE")) < 0) {
        printf("cannot load %s: %s\n", getenv("GREP_PROFILE"), npl_last_error());
        return 2;
    }
    double *t = alloc_table(p);
    if (!t)
        return 2;
    size_t n = TABLE_BYTES / sizeof(double);
    for (size_t i = 0; i < n; i++) /* filled by the main thread, as real codes do */
        t[i] = (double)(i % 1000) * 0.25;
    table_view = t;
    npl_replica *copies = NULL;
    if (p) { /* the call site of alloc_table's npl_alloc_auto: the profile has it */
        int rep = -1;
        char pol[192] = "", pat[64] = "";
        for (uintptr_t a = (uintptr_t)alloc_table; a < (uintptr_t)alloc_table + 200 && rep < 0; a++)
            if (npl_profile_advice(p, (const void *)a, 0, pol, sizeof pol, pat, sizeof pat) == 0)
                rep = npl_profile_replicate(p, (const void *)a, 0);
        printf("advice: %s %s replicate=%d\n", pol, pat, rep);
        if (rep == 1 && npl_replicate(&copies, t, TABLE_BYTES, NULL, 0, 0) < 0) {
            printf("npl_replicate: %s\n", npl_last_error());
            return 2;
        }
        table_copies = copies;
    }
    auto_passes = passes;
    int T = N * K > 64 ? 64 : N * K;
    pthread_t th[64];
    struct aw w[64];
    for (int i = 0; i < T; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].t = i;
        if (pthread_create(&th[i], NULL, auto_worker, &w[i]) != 0)
            return 2;
    }
    int bad = 0, served[64] = {0}, local = 0, all = 0;
    double sum = 0;
    for (int i = 0; i < T; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += r != NULL;
        local += w[i].local_pages;
        all += w[i].pages;
        sum += w[i].sum;
        for (int j = 0; j < 64; j++)
            served[j] += w[i].served[j];
    }
    int top = 0;
    for (int j = 0; j < 64; j++)
        top = served[j] > top ? served[j] : top;
    printf("workers %d, failed %d: local %.3f, top node %.3f, checksum %.6e\n", T, bad,
           all ? (double)local / all : 0, all ? (double)top / all : 0, sum);
    npl_replica_free(copies);
    npl_free(t);
    npl_profile_free(p);
    return bad ? 2 : 0;
}

/* ---- advised replicas: the parent ---- */
struct auto_run {
    char advice[256];
    double local, top, sum;
    int workers, failed, ok;
};

static void run_auto(const char *self, const char *how, struct auto_run *r)
{
    char nodes[16], cpn[16], out[64];
    snprintf(nodes, sizeof nodes, "%d", N);
    snprintf(cpn, sizeof cpn, "%d", K);
    snprintf(out, sizeof out, "/tmp/grep_auto_%s.txt", how);
    char *prof[] = {"numaplace", "profile", "--backend", "fault", "--rate", "20000", "--out",
                    "/tmp/grep_auto.json", "--", (char *)self, "--auto-child", "plain", "16",
                    "--nodes", nodes, "--cpus-per-node", cpn, NULL};
    char *plain[] = {(char *)self, "--auto-child", (char *)(strcmp(how, "advised") ? "plain" : "advised"),
                     "8", "--nodes", nodes, "--cpus-per-node", cpn, NULL};
    memset(r, 0, sizeof *r);
    if (!strcmp(how, "advised"))
        setenv("GREP_PROFILE", "/tmp/grep_auto.json", 1);
    int rc = spawn_to(out, out, !strcmp(how, "profile") ? prof : plain);
    unsetenv("GREP_PROFILE");
    char *o = slurp(out);
    CHECK(rc == 0, "advised replicas, %s run: status %d: %s", how, rc, o ? o : "?");
    const char *a = o ? strstr(o, "advice: ") : NULL;
    if (a)
        sscanf(a, "advice: %255[^\n]", r->advice);
    const char *l = o ? strstr(o, "workers ") : NULL;
    r->ok = l && sscanf(l, "workers %d, failed %d: local %lf, top node %lf, checksum %lf",
                        &r->workers, &r->failed, &r->local, &r->top, &r->sum) == 5;
    CHECK(r->ok && r->failed == 0 && r->workers == N * K, "advised replicas, %s run: %d workers, "
          "%d failed: %s", how, r->workers, r->failed, o ? o : "?");
    free(o);
}

static void test_advised_replicas(const char *self)
{
    struct auto_run prof, ft, adv;
    run_auto(self, "profile", &prof);
    run_auto(self, "plain", &ft);
    run_auto(self, "advised", &adv);
    printf("advised replicas: first touch local %.3f (top node %.3f); profile's advice: %s; "
           "advised local %.3f (top node %.3f)\n", ft.local, ft.top, adv.advice, adv.local, adv.top);
    /* the control: serial first touch puts the table on node 0, local only to its workers */
    CHECK(ft.ok && ft.local < 1.0 / N + 0.01 && ft.top > 0.99,
          "first touch: %.3f local (1/N = %.3f), node 0 serves %.3f", ft.local, 1.0 / N, ft.top);
    CHECK(strstr(adv.advice, "shared-read-mostly replicate=1") && !strncmp(adv.advice, "cyclic", 6),
          "the advice: a spread with replicas (%s)", adv.advice);
    CHECK(adv.ok && adv.local > 0.999 && adv.top <= 0.5 + 1e-9,
          "advised: each worker reads its node's copy: %.3f local, top node %.3f", adv.local,
          adv.top);
    CHECK(ft.ok && adv.ok && ft.sum == adv.sum, "the same checksum (%.6e, %.6e)", ft.sum, adv.sum);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    if (argc > 3 && !strcmp(argv[1], "--auto-child"))
        return auto_child(argv[2], atoi(argv[3]));
    if (N < 2 || K < 1) {
        printf("usage: guest_replicate --nodes N (>= 2) --cpus-per-node K\n");
        return 120;
    }
    test_replicas();
    test_hugetlb();
    test_hugetlb_replicas();
    test_thp();
    test_advised_replicas(argv[0]);
    return check_summary("guest_replicate");
}
