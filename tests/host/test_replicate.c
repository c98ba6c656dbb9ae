/* SPDX-License-Identifier: BSD-3-Clause */
/* test_replicate - replicas and huge pages on this (one-node) host: error paths, the one-copy
 * degradation, the accessor from many threads, npl_node_master_cpu, the THP advice and the
 * per-node huge/base report (cross-checked with /proc/self/smaps), and the hugetlb fallback. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

/* smaps of the mapping starting at `start`: AnonHugePages (kB) and whether VmFlags has `flag` */
static long smaps_of(const void *start, const char *flag, int *has_flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[1024];
    int in = 0;
    long thp = -1;
    *has_flag = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        long kb;
        char *dash = strchr(line, '-'), *sp = strchr(line, ' ');
        if (dash && sp && dash < sp && sscanf(line, "%lx-%lx ", &s, &e) == 2)
            in = s == (uintptr_t)start;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            thp = kb;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            char pat[8];
            snprintf(pat, sizeof pat, " %s", flag);
            *has_flag = strstr(line, pat) != NULL;
        }
    }
    if (f)
        fclose(f);
    return thp;
}

struct job {
    const npl_replica *r;
    const void *got;
    int cpu;
};
static void *reader(void *arg)
{
    struct job *j = arg;
    if (j->cpu >= 0) {
        cpu_set_t s;
        CPU_ZERO(&s);
        CPU_SET(j->cpu, &s);
        sched_setaffinity(0, sizeof s, &s);
    }
    for (int i = 0; i < 1000; i++) /* a hot loop: same answer every time */
        if (npl_replica_local(j->r) != j->got && i)
            return NULL;
        else
            j->got = npl_replica_local(j->r);
    return NULL;
}

static void test_replicas(void)
{
    const npl_topo *t = npl_topo_self();
    int nn = npl_topo_node_count(t, 0), node0 = npl_topo_node_id(t, 0);
    size_t bytes = (1 << 20) + 123; /* not a page multiple */
    unsigned char *master = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        master[i] = (unsigned char)(i * 13 + 1);
    npl_replica *r = (npl_replica *)1;
    int bad = 99, neg = -1, two[2] = {node0, node0};

    /* error paths */
    errno = 0;
    CHECK(npl_replicate(NULL, master, bytes, NULL, 0, 0) == -1 && errno == EINVAL, "NULL out");
    CHECK(npl_replicate(&r, NULL, bytes, NULL, 0, 0) == -1 && errno == EINVAL, "NULL master");
    CHECK(npl_replicate(&r, master, 0, NULL, 0, 0) == -1 && errno == EINVAL, "0 bytes");
    CHECK(npl_replicate(&r, master, bytes, NULL, 1, 0) == -1 && errno == EINVAL, "NULL node list");
    CHECK(npl_replicate(&r, master, bytes, two, -1, 0) == -1 && errno == EINVAL, "negative count");
    CHECK(npl_replicate(&r, master, bytes, &bad, 1, 0) == -1 && errno == EINVAL && r == NULL,
          "node 99: EINVAL (%s)", npl_last_error());
    CHECK(npl_replicate(&r, master, bytes, &neg, 1, 0) == -1 && errno == EINVAL, "node -1: EINVAL");
    CHECK(npl_replica_sync(NULL) == -1 && errno == EINVAL, "sync(NULL)");
    struct npl_replica_info ri;
    CHECK(npl_replica_info(NULL, &ri) == -1 && errno == EINVAL, "info(NULL)");
    CHECK(npl_replica_local(NULL) == NULL, "local(NULL)");
    npl_replica_free(NULL);

    /* one node: one copy, no error */
    CHECK(npl_replicate(&r, master, bytes, NULL, 0, 0) == 0, "replicate: %s", npl_last_error());
    CHECK(npl_replica_info(r, &ri) == 0 && ri.ncopies == nn && ri.bytes == bytes &&
              ri.total_bytes == bytes * (size_t)nn && npl_replica_node(r, 0) == node0,
          "%d copy of %zu bytes, %zu in all, on node %d", ri.ncopies, ri.bytes, ri.total_bytes,
          npl_replica_node(r, 0));
    int master_cpu = npl_node_master_cpu(node0), first_cpu = -1;
    npl_topo_node_cpus(t, 0, &first_cpu, 1);
    CHECK(master_cpu == first_cpu && npl_replica_filler_cpu(r, 0) == first_cpu,
          "node %d's master is its first allowed CPU %d (got %d, filler %d)", node0, first_cpu,
          master_cpu, npl_replica_filler_cpu(r, 0));
    CHECK(npl_node_master_cpu(99) == -1 && errno == EINVAL, "no master for node 99");
    const unsigned char *c = npl_replica_local(r);
    CHECK(c && c == npl_replica_on(r, node0) && c != master && memcmp(c, master, bytes) == 0,
          "the local copy is the node's copy, separate from the master, equal to it");
    CHECK(npl_replica_on(r, 99) == NULL && errno == EINVAL, "no copy on node 99");
    struct npl_array_info ai;
    CHECK(npl_array_info(c, &ai) == 0 && ai.bytes == bytes, "a copy is a library array");
    struct npl_check ck;
    CHECK(npl_check(c, &ck) == 0 && ck.placed == ck.pages && ck.absent == 0, "copy placed");
    /* every thread, on every CPU, gets the same copy (from rseq, or getcpu) */
    int ncpu = npl_topo_cpu_count(t), wrong = 0;
    for (int i = 0; i < ncpu && i < 8; i++) {
        pthread_t th;
        struct job j = {r, NULL, npl_pin_cpu(t, "compact", i)};
        pthread_create(&th, NULL, reader, &j);
        pthread_join(th, NULL);
        wrong += j.got != c;
    }
    CHECK(wrong == 0, "every thread's accessor returns the node's copy (%d did not)", wrong);
    for (size_t i = 0; i < bytes; i += 7)
        master[i] ^= 0xa5;
    CHECK(memcmp(c, master, bytes) != 0, "the copy does not follow the master by itself");
    CHECK(npl_replica_sync(r) == 0 && memcmp(c, master, bytes) == 0, "sync: copy equals master");
    npl_replica_free(r);

    CHECK(npl_replicate(&r, master, bytes, two, 2, 0) == -1 && errno == EINVAL,
          "a node listed twice: EINVAL (%s)", npl_last_error());
    /* a node subset of one node: one copy */
    CHECK(npl_replicate(&r, master, bytes, two, 1, NPL_F_THP) == 0 && npl_replica_info(r, &ri) == 0 &&
              ri.ncopies == 1 && memcmp(npl_replica_local(r), master, bytes) == 0,
          "subset {node %d}, THP copies: one copy, equal", node0);
    npl_replica_free(r);
    free(master);
}

static void test_hugepages(void)
{
    const npl_topo *t = npl_topo_self();
    int nn = npl_topo_node_count(t, 1);
    size_t huge[64], base[64], absent = 0, psz = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = 8 << 20, npages = bytes / psz;
    npl_policy *cy = pol("cyclic");
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};

    CHECK(npl_histogram_huge(NULL, 10, huge, base, NULL) == -1 && errno == EINVAL, "NULL range");
    CHECK(npl_histogram_huge(&absent, 10, NULL, base, NULL) == -1 && errno == EINVAL, "NULL counts");

    /* base pages */
    char *a = npl_alloc_array(&s, cy, 0);
    int rc = a ? npl_histogram_huge(a, bytes, huge, base, &absent) : -1;
    size_t sh = 0, sb = 0;
    for (int i = 0; i < nn; i++)
        sh += huge[i], sb += base[i];
    int has;
    long thp = a ? smaps_of(a, "hg", &has) : -1;
    CHECK(rc >= 0 && sh * 512 + sb + absent == npages && sh * 2048 == (size_t)thp,
          "base-page array: %zu huge + %zu base + %zu absent = %zu pages; AnonHugePages %ld kB",
          sh, sb, absent, npages, thp);
    npl_free(a);

    /* THP: the range is MADV_HUGEPAGE'd, 2 MiB-aligned; the report agrees with smaps */
    a = npl_alloc_array(&s, cy, NPL_F_THP);
    thp = a ? smaps_of(a, "hg", &has) : -1;
    CHECK(a && ((uintptr_t)a & ((2 << 20) - 1)) == 0 && has, "THP array: 2 MiB-aligned, VmFlags hg");
    rc = a ? npl_histogram_huge(a, bytes, huge, base, &absent) : -1;
    sh = sb = 0;
    for (int i = 0; i < nn; i++)
        sh += huge[i], sb += base[i];
    int locate = npl_get_support()->thp_locate;
    if (!locate)
        printf("note: THP cannot be located without CAP_SYS_ADMIN: counted as base pages\n");
    CHECK(rc == 0 && sh * 512 + sb + absent == npages && (!locate || sh * 2048 == (size_t)thp),
          "THP array: %zu huge + %zu base + %zu absent = %zu pages; AnonHugePages %ld kB (rc %d)",
          sh, sb, absent, npages, thp, rc);
    printf("THP array of 8 MiB: %zu transparent huge pages obtained\n", sh);
    npl_free(a);

    /* a raw range with NPL_F_THP gets the advice too */
    size_t rl = 4 << 20;
    char *raw = mmap(NULL, rl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(raw != MAP_FAILED && npl_place_range(raw, rl, cy, NULL, NPL_F_THP) == 0 &&
              (smaps_of(raw, "hg", &has), has),
          "npl_place_range(THP): VmFlags hg");
    munmap(raw, rl);

    /* hugetlb: with no pool here, base pages and a reported fallback; STRICT fails with ENOMEM.
     * (The pool is global state shared with other users: this test never changes it.) */
    FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
    int freehp = -1;
    if (f) {
        if (fscanf(f, "%d", &freehp) != 1)
            freehp = -1;
        fclose(f);
    }
    if (freehp == 0) {
        struct npl_array_info info;
        a = npl_alloc_array(&s, cy, NPL_F_HUGETLB);
        CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 0 && info.hugetlb_fallback == 1 &&
                  info.last.misplaced == 0,
              "empty pool: base pages, fallback reported");
        rc = a ? npl_histogram_huge(a, bytes, huge, base, &absent) : -1;
        CHECK(rc >= 0 && base[0] + absent + huge[0] * 512 == npages, "fallback array: report adds up");
        npl_free(a);
        errno = 0;
        CHECK(npl_alloc_array(&s, cy, NPL_F_HUGETLB | NPL_F_STRICT) == NULL && errno == ENOMEM,
              "empty pool + STRICT: ENOMEM (%s)", npl_last_error());
    } else if (freehp > 4) {
        struct npl_array_info info;
        a = npl_alloc_array(&s, cy, NPL_F_HUGETLB);
        rc = a ? npl_histogram_huge(a, bytes, huge, base, &absent) : -1;
        CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 1 && rc >= 0 &&
                  huge[0] == bytes >> 21 && base[0] == 0,
              "hugetlb array from the pool: %zu huge pages reported", huge[0]);
        npl_free(a);
    } else {
        SKIP("hugetlb-pool", "hugetlb arrays: the pool has %d free pages (neither empty nor > 4)",
             freehp);
    }
    npl_policy_free(cy);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(npl_topo_self() != NULL, "this machine's topology loads: %s", npl_last_error());
    if (!npl_topo_self())
        return check_summary("test_replicate");
    test_replicas();
    test_hugepages();
    return check_summary("test_replicate");
}
