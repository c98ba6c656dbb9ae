/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_nexttouch - migrate-on-next-touch, page-exact, in the multi-node guest:
 *   guest_nexttouch --nodes N --cpus-per-node K
 * An array first placed on node 0 (serial init); T threads pinned round-robin over the nodes
 * each touch their static block once; afterwards every page of block t sits on thread t's node,
 * and every value written survives. Then the same with never-touched memory, a second pass
 * after re-arming with the blocks shifted, and page-sized chunks; a big armed array (mappings
 * counted); faults from several threads on shared chunks while another thread migrates the range. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static int N, K, T;
static long PSZ;

struct job {
    unsigned char *a;
    size_t block, shift;
    int t;
};

static void *toucher(void *arg)
{
    struct job *j = arg;
    npl_pin_self("scatter", j->t); /* thread t on node t mod N */
    size_t b = (size_t)(j->t + j->shift) % (size_t)T;
    unsigned char *p = j->a + b * j->block;
    for (size_t i = 0; i < j->block; i++)
        p[i] = (unsigned char)(p[i] + j->t + 1);
    return NULL;
}

/* returns the number of pages of block b not on the node of the thread that touched it */
static size_t check_blocks(unsigned char *a, size_t block, size_t shift)
{
    size_t pages = block / PSZ, bad = 0;
    int *v = malloc(pages * sizeof *v);
    for (int t = 0; t < T; t++) {
        size_t b = (size_t)(t + shift) % (size_t)T;
        int want = npl_topo_cpu_node(npl_topo_self(), npl_pin_cpu(NULL, "scatter", t));
        npl_query_pages(a + b * block, block, v, pages);
        for (size_t i = 0; i < pages; i++)
            bad += v[i] != want;
    }
    free(v);
    return bad;
}

static void run(unsigned char *a, size_t block, size_t shift)
{
    pthread_t th[64];
    struct job j[64];
    for (int t = 0; t < T; t++) {
        j[t] = (struct job){a, block, shift, t};
        pthread_create(&th[t], NULL, toucher, &j[t]);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
}

/* --big-mib M (1 GiB in the 4-node shape): an array placed cyclically, armed whole with the
 * default 64 KiB chunks; T pinned threads each touch the first half of their block, wait for the
 * others, then the second half. Mappings of /proc/self/maps are counted after arming, at the
 * half-way point and at the end (they stay a few per thread: adjacent resolved chunks merge);
 * afterwards every page sits on its toucher's node and every written word survives. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
static pthread_barrier_t bar;
struct big_job {
    uint64_t *a;
    size_t words, t;
    int maps_mid, range_mid;
    size_t bytes;
};
static void *big_toucher(void *arg)
{
    struct big_job *j = arg;
    npl_pin_self("scatter", (int)j->t);
    size_t step = (size_t)PSZ / 8, lo = j->t * j->words, mid = lo + j->words / 2,
           hi = lo + j->words;
    for (size_t i = lo; i < mid; i += step)
        j->a[i] += j->t + 1;
    pthread_barrier_wait(&bar);
    if (j->t == 0) {
        j->maps_mid = count_maps();
        j->range_mid = maps_in(j->a, j->bytes);
    }
    pthread_barrier_wait(&bar);
    for (size_t i = mid; i < hi; i += step)
        j->a[i] += j->t + 1;
    return NULL;
}

static void test_big(int argc, char **argv)
{
    size_t mib = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--big-mib"))
            mib = (size_t)atol(argv[i + 1]);
    /* each fault costs TLB shootdowns and an LRU drain on every vCPU: under TCG with many
     * vCPUs on few host cores that is ~20 ms, so the suite uses 32 MiB; NPL_NT_BIG_MIB=1024
     * measures the whole 1 GiB (docs/NEXT_TOUCH.md reports it) */
    const char *e = getenv("NPL_NT_BIG_MIB");
    if (e && *e)
        mib = (size_t)atol(e);
    else if (mib > 32)
        mib = 32;
    if (mib < 16) {
        SKIP("nexttouch-big", "big next-touch range: no --big-mib >= 16 given");
        return;
    }
    /* each thread's block is a whole number of 64 KiB chunks (a chunk straddling two blocks
     * goes to whichever thread touches it first) and its halves are whole pages */
    const size_t chunk_words = (64 << 10) / 8;
    size_t bytes = mib << 20, words = bytes / 8 / (size_t)T / (2 * chunk_words) * (2 * chunk_words);
    npl_policy *p;
    npl_policy_parse(&p, "cyclic");
    uint64_t *a = npl_alloc(bytes, p);
    CHECK(a != NULL, "allocate %zu MiB cyclic: %s", mib, npl_last_error());
    if (!a)
        return;
    size_t step = (size_t)PSZ / 8;
    for (size_t i = 0; i < bytes / 8; i += step)
        a[i] = i;
    int m0 = count_maps(), r0 = maps_in(a, bytes);
    double t0 = now_s();
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "arm %zu MiB: %s", mib, npl_last_error());
    double t_arm = now_s() - t0;
    int m1 = count_maps(), r1 = maps_in(a, bytes);
    pthread_barrier_init(&bar, NULL, (unsigned)T);
    pthread_t th[64];
    struct big_job j[64];
    t0 = now_s();
    for (int t = 0; t < T; t++) {
        j[t] = (struct big_job){a, words, (size_t)t, 0, 0, bytes};
        pthread_create(&th[t], NULL, big_toucher, &j[t]);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    double t_touch = now_s() - t0;
    int m2 = count_maps(), r2 = maps_in(a, bytes);
    printf("  big: %zu MiB armed in %.3f s, touched by %d threads in %.3f s; mappings of the "
           "range: %d before, %d armed, %d half touched, %d all touched; of the process: %d, %d, "
           "%d, %d (vm.max_map_count 65530)\n", mib, t_arm, T, t_touch, r0, r1, j[0].range_mid,
           r2, m0, m1, j[0].maps_mid, m2);
    /* at the end: the touched part is one mapping, the untouched tail past T blocks another */
    CHECK(r1 == r0 && j[0].range_mid <= 2 * T + 1 && r2 <= r0 + 1,
          "mappings of the range stay few: %d before, %d armed, %d half touched (T=%d), %d touched",
          r0, r1, j[0].range_mid, T, r2);
    size_t pages = words * 8 / (size_t)PSZ, wrong = 0, lost = 0;
    int *v = malloc(pages * sizeof *v);
    for (int t = 0; t < T; t++) {
        int want = npl_topo_cpu_node(npl_topo_self(), npl_pin_cpu(NULL, "scatter", t));
        npl_query_pages(a + (size_t)t * words, words * 8, v, pages);
        for (size_t i = 0; i < pages; i++)
            wrong += v[i] != want;
        for (size_t i = (size_t)t * words; i < (size_t)(t + 1) * words; i += step)
            lost += a[i] != i + (size_t)t + 1;
    }
    free(v);
    CHECK(wrong == 0 && lost == 0, "%zu MiB: every page on its toucher's node (%zu wrong), every "
          "word written survives (%zu lost)", mib, wrong, lost);
    npl_next_touch_disarm(a);
    npl_free(a);
    npl_policy_free(p);
}

/* Faults from several threads on the same chunks while another thread migrates the range back
 * and forth between nodes: every word gets exactly one increment per writer thread, nothing is
 * lost or doubled (the writers share every chunk: they all walk the whole array). */
static atomic_int race_stop;
static atomic_long race_moved, race_calls;
struct race_job {
    uint64_t *a;
    size_t words;
    int t;
};
static void *race_writer(void *arg)
{
    struct race_job *j = arg;
    npl_pin_self("scatter", j->t);
    size_t start = (size_t)j->t * 61 % j->words; /* different starting points, same chunks */
    for (size_t k = 0; k < j->words; k++)
        __atomic_fetch_add(&j->a[(start + k) % j->words], 1, __ATOMIC_RELAXED);
    return NULL;
}
static void *race_migrator(void *arg)
{
    struct race_job *j = arg;
    int nodes[64], n = usable_nodes(nodes, 64);
    for (int r = 0; !atomic_load(&race_stop) && n > 0; r++) {
        struct npl_migrate_result mr;
        npl_migrate_range(j->a, j->words * 8, nodes[r % n], &mr);
        atomic_fetch_add(&race_moved, (long)mr.moved);
        atomic_fetch_add(&race_calls, 1);
    }
    return NULL;
}
static void test_migrate_race(void)
{
    size_t bytes = (size_t)2 << 20, words = bytes / 8;
    uint64_t *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED, "mmap 2 MiB");
    if (a == MAP_FAILED)
        return;
    madvise(a, bytes, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < words; i++)
        a[i] = i;
    int W = T < 2 ? 2 : T;
    if (W > 8)
        W = 8;
    for (int round = 0; round < 3; round++) {
        CHECK(npl_next_touch_arm(a, bytes, (size_t)PSZ * 4) == 0, "arm round %d: %s", round,
              npl_last_error());
        atomic_store(&race_stop, 0);
        pthread_t mig, th[8];
        struct race_job mj = {a, words, 0}, j[8];
        pthread_create(&mig, NULL, race_migrator, &mj);
        for (int t = 0; t < W; t++) {
            j[t] = (struct race_job){a, words, t};
            pthread_create(&th[t], NULL, race_writer, &j[t]);
        }
        for (int t = 0; t < W; t++)
            pthread_join(th[t], NULL);
        atomic_store(&race_stop, 1);
        pthread_join(mig, NULL);
    }
    struct npl_next_touch_stats st;
    npl_next_touch_get_stats(&st);
    printf("  migrate race: %ld migrations moved %ld pages while %d threads faulted (next-touch "
           "chunks so far %llu, waits %llu)\n", (long)race_calls, (long)race_moved, W,
           (unsigned long long)st.chunks, (unsigned long long)st.waits);
    CHECK(N < 2 || race_moved > 0, "the migrating thread moved pages during the race (%ld)",
          (long)race_moved);
    size_t bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += a[i] != i + 3 * (uint64_t)W;
    CHECK(bad == 0, "next-touch faults from %d threads on shared chunks while a thread migrates "
          "the range: every word incremented exactly %d times (%zu wrong)", W, 3 * W, bad);
    npl_next_touch_disarm(a);
    munmap(a, bytes);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    if (N < 2 || K < 1) {
        printf("usage: guest_nexttouch --nodes N (>= 2) --cpus-per-node K\n");
        return 120;
    }
    T = N * K > 16 ? 16 : N * K;
    size_t block = 1 << 20, bytes = block * (size_t)T; /* 1 MiB per thread: 16 chunks */

    /* serial init on node 0, then next-touch */
    npl_policy *p;
    npl_policy_parse(&p, "bind_all:0");
    unsigned char *a = npl_alloc(bytes, p);
    for (size_t i = 0; i < bytes; i++)
        a[i] = (unsigned char)(i * 3);
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "arm %zu MiB: %s", bytes >> 20, npl_last_error());
    run(a, block, 0);
    size_t bad = check_blocks(a, block, 0);
    CHECK(bad == 0, "serial init + next-touch: every page of each block on its toucher's node "
                    "(%zu wrong of %zu)", bad, bytes / PSZ);
    size_t lost = 0;
    for (size_t i = 0; i < bytes; i++)
        lost += a[i] != (unsigned char)(i * 3 + (i / block) + 1);
    CHECK(lost == 0, "every value written survives (%zu wrong)", lost);
    /* the pattern changes: re-arm, blocks shift by one thread */
    CHECK(npl_next_touch_arm_array(a, 0) == 0, "re-arm");
    run(a, block, 1);
    bad = check_blocks(a, block, 1);
    CHECK(bad == 0, "after re-arm, shifted blocks follow their new touchers (%zu wrong)", bad);
    struct npl_next_touch_stats s;
    npl_next_touch_get_stats(&s);
    printf("  next-touch: %llu chunks, %llu pages moved, %llu failed, %llu waits\n",
           (unsigned long long)s.chunks, (unsigned long long)s.pages_moved,
           (unsigned long long)s.pages_failed, (unsigned long long)s.waits);
    npl_next_touch_disarm(a);
    npl_free(a);
    npl_policy_free(p);

    /* never-touched memory, one-page chunks: pages land on the toucher's node */
    unsigned char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(b, bytes, MADV_NOHUGEPAGE);
    CHECK(npl_next_touch_arm(b, bytes, (size_t)PSZ) == 0, "arm untouched memory, 4 KiB chunks");
    run(b, block, 0);
    bad = check_blocks(b, block, 0);
    CHECK(bad == 0, "never-touched pages land on their toucher's node (%zu wrong)", bad);
    npl_next_touch_disarm(b);
    munmap(b, bytes);
    test_big(argc, argv);
    test_migrate_race();
    return check_summary("guest_nexttouch");
}
