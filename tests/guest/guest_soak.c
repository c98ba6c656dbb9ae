/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_soak - a bounded soak test inside the multi-node guest (docs/RELIABILITY.md):
 *   guest_soak --nodes N --cpus-per-node K [--big-mib M] [--seconds S (default 6)]
 * T = min(4, CPUs) pinned threads repeat, until the time limit, cycles of
 *   allocate (random size and policy) -> fill -> check placement -> re-place (npl_apply) ->
 *   re-place a part (npl_apply_part) -> migrate the array to a node -> arm next-touch and read it
 *   (pages come to the reader's node) -> query -> place a raw range -> replicate -> free,
 * verifying the data by checksum and the placement page by page after every step. After a
 * warm-up cycle the process's RSS (/proc/self/statm) and mapping count (/proc/self/maps) are
 * taken with every thread parked at a barrier; at the end they must be back near that baseline
 * (a few MiB and mappings of slack for malloc's per-thread arenas), arrays_live must be 0.
 * Between the two, an exhaustion phase (not under TSan, whose shadow memory would exhaust the
 * whole guest first): one node is filled beyond its free memory and kept full (main tops it up),
 * and for --full-seconds (2) the threads allocate strictly (exact, or ENOMEM and nothing leaked),
 * allocate loosely (spilled pages reported as what npl_check finds), migrate to the full node
 * (failures counted page for page) and check the data; then the node is freed. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int N, K, T;
static long PSZ;
static double SECONDS = 6, FULL_SECONDS = 2;
static int usable[64], nusable; /* nodes with memory this process may use */
static pthread_barrier_t bar;
static double deadline, full_deadline;
static int full_node = -1; /* the node filled by the exhaustion phase (-1: no such phase) */
static atomic_long full_spilled, full_strict_enomem, full_migrate_failed, full_cycles;
static atomic_int errors;
static atomic_long cycles_done, pages_checked;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long rss_kib(void)
{
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (PSZ / 1024);
}

#define FAIL(...)                                                                                \
    do {                                                                                         \
        atomic_fetch_add(&errors, 1);                                                            \
        printf("soak thread %d cycle %d: ", id, cyc);                                            \
        printf(__VA_ARGS__);                                                                     \
        printf(" (%s)\n", npl_last_error());                                                     \
    } while (0)

/* every page of [a, a+bytes) on `node` */
static size_t off_node(const void *a, size_t bytes, int node)
{
    size_t n = (bytes + PSZ - 1) / PSZ, bad = 0;
    int *v = malloc(n * sizeof *v);
    if (!v || npl_query_pages(a, bytes, v, n) != (int)n)
        bad = n;
    else
        for (size_t i = 0; i < n; i++)
            bad += v[i] != node;
    free(v);
    atomic_fetch_add(&pages_checked, (long)n);
    return bad;
}

/* the first pages of an array: where they are, where the policy wants them */
static void show(const void *a, const npl_shape *shape, const npl_policy *p)
{
    int have[16], want[16];
    size_t bytes = shape->dims[0] * shape->dims[1] * shape->elem_size;
    if (npl_query_pages(a, 16 * (size_t)PSZ, have, 16) != 16 ||
        npl_policy_map(p, NULL, shape, bytes, (size_t)PSZ, 0, 16, want) < 0)
        return;
    char line[256];
    int off = 0;
    for (int i = 0; i < 16; i++)
        off += snprintf(line + off, sizeof line - (size_t)off, " %d/%d", have[i], want[i]);
    printf("  pages 0-15 have/want:%s\n", line);
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* write a pattern of this thread's into the array; returns its checksum */
static uint64_t fill(unsigned char *a, size_t bytes, int id)
{
    for (size_t i = 0; i < bytes; i += 8)
        *(uint64_t *)(a + i) = i * 0x9E3779B97F4A7C15ULL + (uint64_t)id;
    return checksum(a, bytes);
}

static void cycle(int id, int cyc, uint64_t *seed, int my_node)
{
    char name[2][64];
    int tries = 0;
    for (int k = 0; k < 2; k++) {
        int a = usable[rnd(seed) % (uint64_t)nusable], b = usable[rnd(seed) % (uint64_t)nusable];
        switch (rnd(seed) % 6) {
        case 0: snprintf(name[k], sizeof name[k], "cyclic"); break;
        case 1: snprintf(name[k], sizeof name[k], "skew_mapp"); break;
        case 2: snprintf(name[k], sizeof name[k], "bind_all:%d", a); break;
        case 3: snprintf(name[k], sizeof name[k], "cyclic_block:%d", 1 + (int)(rnd(seed) % 5)); break;
        case 4: snprintf(name[k], sizeof name[k], "random:seed=%d", cyc); break;
        default:
            if (a == b)
                snprintf(name[k], sizeof name[k], "bind_all:%d", a);
            else
                snprintf(name[k], sizeof name[k], "weighted:%d=3,%d=1", a, b);
        }
    }
    size_t rows = 64 + rnd(seed) % 448; /* 256 KiB .. 2 MiB: one page per row */
    npl_shape shape = {1, 2, {rows, (size_t)PSZ, 0}, NPL_ROW_MAJOR};
    size_t bytes = rows * (size_t)PSZ;
    npl_policy *p1 = pol(name[0]), *p2 = pol(name[1]);
    unsigned char *a;
    while (!(a = npl_alloc_array(&shape, p1, NPL_F_STRICT)) && errno == ENOMEM && tries++ < 3)
        usleep(1000); /* another thread's arrays may fill a small node for a moment */
    if (!a) {
        FAIL("alloc %zu rows under %s", rows, name[0]);
        goto out;
    }
    uint64_t sum = fill(a, bytes, id);
    struct npl_check c;
    if (npl_check(a, &c) != 0 || c.placed != rows || c.misplaced || c.absent) {
        FAIL("%s: %zu of %zu placed, %zu misplaced, %zu absent", name[0], c.placed, rows,
             c.misplaced, c.absent);
        show(a, &shape, p1);
    }
    /* re-place the whole array, then the first half under bind_all on this thread's node */
    if (npl_apply(a, p2, 0) != 0 || npl_check(a, &c) != 0 || c.placed != rows)
        FAIL("apply %s -> %s: %zu of %zu placed", name[0], name[1], c.placed, rows);
    char local[32];
    snprintf(local, sizeof local, "bind_all:%d", usable[id % nusable]);
    npl_policy *pl = pol(local);
    if (npl_apply_part(a, 0, rows / 2, pl, 0) != 0 || npl_check(a, &c) != 0 || c.placed != rows)
        FAIL("apply_part %s: %zu of %zu placed", local, c.placed, rows);
    npl_policy_free(pl);
    if (checksum(a, bytes) != sum)
        FAIL("data changed by re-placement");
    /* migrate the whole array to another node */
    int to = usable[(size_t)(id + cyc) % (size_t)nusable];
    struct npl_migrate_result mr;
    if (npl_migrate_array(a, to, &mr) != 0 || mr.failed || mr.moved + mr.already != rows ||
        off_node(a, bytes, to) || npl_check(a, &c) != 0 || c.placed != rows)
        FAIL("migrate to %d: %zu moved %zu already %zu failed", to, mr.moved, mr.already, mr.failed);
    if (checksum(a, bytes) != sum)
        FAIL("data changed by migration");
    /* next-touch: this thread reads every page: they come to its node */
    if (npl_next_touch_arm_array(a, 0) != 0)
        FAIL("arm");
    else {
        uint64_t s2 = checksum(a, bytes);
        if (s2 != sum)
            FAIL("data changed by next-touch");
        if (my_node >= 0 && off_node(a, bytes, my_node))
            FAIL("next-touch: pages not on the reader's node %d", my_node);
        if (npl_next_touch_disarm(a) != 0)
            FAIL("disarm");
    }
    /* a raw range placed, checked, unmapped */
    size_t rb = 32 * (size_t)PSZ;
    unsigned char *r = mmap(NULL, rb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(r, 0x5a, rb);
    if (npl_place_range(r, rb, p1, NULL, 0) != 0)
        FAIL("place_range %s", name[0]);
    for (size_t i = 0; i < rb; i++)
        if (r[i] != 0x5a) {
            FAIL("place_range lost data");
            break;
        }
    munmap(r, rb);
    /* a small replica set now and then */
    if (cyc % 4 == 0) {
        npl_replica *rep;
        if (npl_replicate(&rep, a, 64 * 1024, NULL, 0, 0) != 0)
            FAIL("replicate");
        else {
            const unsigned char *l = npl_replica_local(rep);
            if (!l || memcmp(l, a, 64 * 1024))
                FAIL("replica differs");
            npl_replica_free(rep);
        }
    }
    if (npl_free(a) != 0)
        FAIL("free");
out:
    npl_policy_free(p1);
    npl_policy_free(p2);
    atomic_fetch_add(&cycles_done, 1);
}

/* One cycle while full_node is full: nothing may be lost, every shortfall must be reported. */
static void cycle_full(int id, int cyc, uint64_t *seed)
{
    size_t rows = 64 + rnd(seed) % 448;
    npl_shape shape = {1, 2, {rows, (size_t)PSZ, 0}, NPL_ROW_MAJOR};
    size_t bytes = rows * (size_t)PSZ;
    char on_full[32];
    snprintf(on_full, sizeof on_full, "bind_all:%d", full_node);
    npl_policy *p = pol("cyclic"), *pf = pol(on_full);
    errno = 0; /* strict: over all nodes, or all on the full one (then it must be refused) */
    unsigned char *a = npl_alloc_array(&shape, cyc % 2 ? pf : p, NPL_F_STRICT);
    struct npl_check c;
    if (!a && errno == ENOMEM) {
        atomic_fetch_add(&full_strict_enomem, 1);
    } else if (!a) {
        FAIL("strict alloc on a full node: errno %d, not ENOMEM", errno);
    } else {
        if (npl_check(a, &c) != 0 || c.placed != rows)
            FAIL("strict alloc succeeded but %zu of %zu placed", c.placed, rows);
        npl_free(a);
    }
    /* loose: it succeeds; what spilled is reported (move_pages may report a few pages of a
     * failed batch that did move: the report may exceed reality by a hair, never fall short) */
    a = npl_alloc_array(&shape, p, 0);
    if (!a) {
        FAIL("loose alloc on a full node failed");
        goto out;
    }
    uint64_t sum = fill(a, bytes, id);
    struct npl_array_info info;
    if (npl_array_info(a, &info) != 0 || npl_check(a, &c) != 0 || c.absent ||
        c.placed + c.misplaced != rows || c.misplaced > info.last.misplaced ||
        info.last.misplaced - c.misplaced > 8 + info.last.misplaced / 1000)
        FAIL("loose alloc: %zu placed, %zu misplaced, %zu absent, %zu reported misplaced",
             c.placed, c.misplaced, c.absent, info.last.misplaced);
    atomic_fetch_add(&full_spilled, (long)c.misplaced);
    /* migrate everything to the full node: what could not move is counted, page for page, and
     * makes the call return -1 with the first failure's errno (migrate.h) */
    struct npl_migrate_result mr;
    errno = 0;
    int rc = npl_migrate_array(a, full_node, &mr);
    int err = errno;
    size_t off = off_node(a, bytes, full_node);
    if (mr.failed && (rc != -1 || err != mr.first_errno))
        FAIL("migrate with %zu failed pages: rc %d errno %d (first failure %d)", mr.failed, rc, err,
             mr.first_errno);
    if ((rc != 0 && !mr.failed) || mr.moved + mr.already + mr.failed + mr.absent != rows || mr.absent ||
        off > mr.failed || mr.failed - off > 8 + mr.failed / 1000)
        FAIL("migrate to full node %d: rc %d, %zu moved %zu already %zu failed, %zu off the node",
             full_node, rc, mr.moved, mr.already, mr.failed, off);
    if (mr.failed && mr.first_errno != ENOMEM && mr.first_errno != EBUSY)
        FAIL("migrate: page %p failed with errno %d", mr.first_fail_addr, mr.first_errno);
    atomic_fetch_add(&full_migrate_failed, (long)mr.failed);
    if (checksum(a, bytes) != sum)
        FAIL("data changed on a full node");
    if (npl_free(a) != 0)
        FAIL("free");
out:
    npl_policy_free(p);
    npl_policy_free(pf);
    atomic_fetch_add(&full_cycles, 1);
}

/* MemFree of a node, KiB (-1 if unknown) */
static long node_free_kib(int node)
{
    char path[96], line[160];
    long kib = -1;
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        char *m = strstr(line, "MemFree:");
        if (m)
            kib = atol(m + 8);
    }
    if (f)
        fclose(f);
    return kib;
}

/* The exhaustion phase's hogs: bind_all on full_node, each a little more than the node has free
 * (the rest spills). The first fills the node; main tops it up while the phase runs, because the
 * kernel frees memory there again (kswapd, memory released by earlier programs). */
#define MAX_HOGS 64
static void *hogs[MAX_HOGS];
static int nhogs;

static int add_hog(long extra_kib)
{
    long free_kib = node_free_kib(full_node);
    if (free_kib < 0 || nhogs == MAX_HOGS)
        return -1;
    char s[32];
    snprintf(s, sizeof s, "bind_all:%d", full_node);
    npl_policy *p = pol(s);
    void *h = npl_alloc((size_t)(free_kib + extra_kib) << 10, p);
    npl_policy_free(p);
    if (!h)
        return -1;
    hogs[nhogs++] = h;
    return 0;
}

/* Fill the usable node with the least free memory, 32 MiB beyond it: 0, or -1 (no such phase) */
static int fill_a_node(void)
{
    long least = -1;
    for (int i = 0; i < nusable; i++) {
        long f = node_free_kib(usable[i]);
        if (f >= 0 && (least < 0 || f < least)) {
            least = f;
            full_node = usable[i];
        }
    }
    int rc = least < 0 ? -1 : add_hog(32 << 10);
    CHECK(rc == 0, "exhaustion phase: node %d (%ld MiB free) filled: %s", full_node, least >> 10,
          npl_last_error());
    if (rc == 0)
        printf("soak: node %d filled (%ld MiB were free)\n", full_node, least >> 10);
    return rc;
}

/* /proc/self/maps as text (at most size-1 bytes) */
static void read_maps(char *buf, size_t size)
{
    FILE *f = fopen("/proc/self/maps", "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* the mappings of `now` whose address range is not in `before`: what the soak left behind */
static void print_new_maps(const char *before, char *now)
{
    for (char *line = strtok(now, "\n"); line; line = strtok(NULL, "\n")) {
        char range[64];
        if (sscanf(line, "%63s", range) == 1 && !strstr(before, range))
            printf("  new mapping: %s\n", line);
    }
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, cyc = 0;
    uint64_t seed = 0x1234567ULL + (uint64_t)id * 7919;
    int cpu = npl_pin_self("scatter", id), node = -1;
    npl_where_am_i(NULL, &node);
    struct npl_node_info ni;
    const npl_topo *t = npl_topo_self();
    int idx = npl_topo_node_index(t, node);
    if (cpu < 0 || idx < 0 || npl_topo_node_info(t, idx, &ni) < 0 || !ni.memory_bytes)
        node = -1; /* not pinned, or on a memory-less node: next-touch target is not exact */
    /* warm-up: two cycles (worker threads, arenas, tables, handler), then the baseline */
    for (; cyc < 2; cyc++)
        cycle(id, cyc, &seed, node);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* main took the baseline */
    while (now() < deadline)
        cycle(id, cyc++, &seed, node);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* main filled a node (or not) */
    while (full_node >= 0 && now() < full_deadline)
        cycle_full(id, cyc++, &seed);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* main freed the node and took the final numbers */
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--seconds"))
            SECONDS = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--full-seconds"))
            FULL_SECONDS = atof(argv[i + 1]);
    const npl_topo *t = npl_topo_self();
    if (N < 1 || K < 1 || !t) {
        printf("usage: guest_soak --nodes N --cpus-per-node K [--seconds S]\n");
        return 120;
    }
    nusable = usable_nodes(usable, 64);
    int ncpu = npl_topo_cpu_count(t);
    T = ncpu < 4 ? ncpu : 4;
    if (T < 2)
        T = 2; /* two threads even on one CPU: the races still happen */
    printf("soak: %d usable nodes, %d CPUs, %d threads, %.1f s\n", nusable, ncpu, T, SECONDS);
    pthread_barrier_init(&bar, NULL, (unsigned)T + 1);
    pthread_t th[8];
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    pthread_barrier_wait(&bar); /* warm-up done, every array freed */
    long rss0 = rss_kib();
    int maps0 = count_maps();
    static char maps_text0[256 << 10], maps_text1[256 << 10];
    read_maps(maps_text0, sizeof maps_text0);
    struct npl_stats st;
    npl_get_stats(&st);
    CHECK(st.arrays_live == 0, "after warm-up: no array live (%llu)", (unsigned long long)st.arrays_live);
    long warm = cycles_done;
    double t0 = now();
    deadline = t0 + SECONDS;
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* soak done */
    double secs = now() - t0;
    int filled = -1, topups = 0;
    int tsan = 0;
#if defined(__SANITIZE_THREAD__)
    tsan = 1;
#endif
    if (tsan)
        SKIP("tsan-exhaustion", "exhaustion phase under TSan (its shadow memory would exhaust the "
             "guest)");
    else if (FULL_SECONDS > 0 && nusable >= 2)
        filled = fill_a_node();
    else
        SKIP("soak-no-exhaustion", "exhaustion phase: %d usable node(s), --full-seconds %.1f",
             nusable, FULL_SECONDS);
    if (filled < 0)
        full_node = -1;
    full_deadline = now() + FULL_SECONDS;
    pthread_barrier_wait(&bar);
    while (filled == 0 && now() < full_deadline) { /* keep the node full */
        if (node_free_kib(full_node) > 2048 && add_hog(1024) == 0)
            topups++;
        usleep(20000);
    }
    pthread_barrier_wait(&bar); /* exhaustion phase done */
    if (filled == 0) {
        printf("soak: node %d full for %.1f s (%d top-ups): %ld cycles, %ld strict allocations "
               "refused (ENOMEM), %ld pages spilled and reported, %ld page migrations refused\n",
               full_node, FULL_SECONDS, topups, (long)full_cycles, (long)full_strict_enomem,
               (long)full_spilled, (long)full_migrate_failed);
        CHECK(full_cycles >= T, "exhaustion phase: a cycle per thread (%ld)", (long)full_cycles);
        CHECK(full_strict_enomem + full_spilled + full_migrate_failed > 0,
              "the full node refused something (else the phase proved nothing)");
        int freed = 0;
        for (int i = 0; i < nhogs; i++)
            freed += npl_free(hogs[i]) == 0;
        CHECK(freed == nhogs, "the hogs freed (%d of %d)", freed, nhogs);
    }
    long rss1 = rss_kib();
    int maps1 = count_maps();
    read_maps(maps_text1, sizeof maps_text1);
    npl_get_stats(&st);
    struct npl_next_touch_stats nt;
    npl_next_touch_get_stats(&nt);
    pthread_barrier_wait(&bar);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    long cyc = cycles_done - warm;
    printf("soak: %ld cycles in %.1f s, %ld pages checked, next-touch faults %llu; RSS %ld -> %ld "
           "KiB, mappings %d -> %d\n", cyc, secs, (long)pages_checked,
           (unsigned long long)nt.faults, rss0, rss1, maps0, maps1);
    CHECK(errors == 0, "%d failures in %ld cycles", (int)errors, cyc + warm);
    CHECK(cyc >= T, "at least one cycle per thread after the warm-up (%ld)", cyc);
    CHECK(st.arrays_live == 0 && st.bytes_live == 0, "arrays_live 0 at the end (%llu, %llu bytes)",
          (unsigned long long)st.arrays_live, (unsigned long long)st.bytes_live);
    CHECK(nt.faults > 0, "next-touch faults were taken (%llu)", (unsigned long long)nt.faults);
    /* flat: malloc's per-thread arenas and the sanitizers' shadow may grow a little */
    long slack = 8 * 1024;
    int maps_slack = 8;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    slack = 64 * 1024; /* quarantine, shadow memory and the sanitizer's allocator regions */
    maps_slack = 64;
#endif
    CHECK(rss1 <= rss0 + slack, "RSS flat: %ld -> %ld KiB (slack %ld KiB)", rss0, rss1, slack);
    CHECK(maps1 <= maps0 + maps_slack, "mappings flat: %d -> %d (slack %d)", maps0, maps1, maps_slack);
    if (maps1 > maps0)
        print_new_maps(maps_text0, maps_text1);
    return check_summary("guest_soak");
}
