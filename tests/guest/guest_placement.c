/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_placement - page-exact checks of the placement engine, run INSIDE the multi-node guest
 * (tests/guest/run.sh boots tools/numavm with several shapes and runs this program there).
 *
 *   guest_placement --nodes N --cpus-per-node K [--big-mib M]   placement, pinning, masks
 *   guest_placement --balancing                                 placement survives NUMA balancing
 *
 * Every check compares kernel reality (move_pages, getcpu) with an expectation; the summary
 * line is "guest_placement: N passed, M failed, S skipped" (tests/unit/check.h). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <numaplace.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <numaplace/omp.h>
#endif

static int N, K;
static const npl_topo *T;
static long PSZ;

/* Every page of a[0..bytes) on the node `want` says; returns the number of wrong pages. */
static size_t wrong_pages(const void *a, size_t bytes, const int *want, size_t *first_bad)
{
    size_t n = (bytes + PSZ - 1) / PSZ, bad = 0;
    int *have = malloc(n * sizeof *have);
    if (npl_query_pages(a, bytes, have, n) < 0) {
        printf("query failed: %s\n", npl_last_error());
        free(have);
        return n;
    }
    for (size_t i = 0; i < n; i++)
        if (have[i] != want[i]) {
            if (!bad && first_bad)
                *first_bad = i;
            bad++;
        }
    free(have);
    return bad;
}

static void test_topology(void)
{
    CHECK(npl_topo_node_count(T, 1) == N && npl_topo_node_count(T, 0) == N,
          "the guest has %d nodes (library sees %d)", N, npl_topo_node_count(T, 1));
    for (int i = 0; i < npl_topo_node_count(T, 1); i++) {
        struct npl_node_info ni;
        npl_topo_node_info(T, i, &ni);
        CHECK(ni.os_id == i && ni.ncpus == K && ni.memory_bytes > 0,
              "node %d: %d CPUs (want %d), %llu MiB", ni.os_id, ni.ncpus, K,
              (unsigned long long)(ni.memory_bytes >> 20));
        CHECK(npl_topo_distance(T, i, i) == 10, "node %d local distance 10", i);
        for (int j = 0; j < N; j++)
            if (j != i)
                CHECK(npl_topo_distance(T, i, j) > 10, "distance %d-%d remote (%d)", i, j,
                      npl_topo_distance(T, i, j));
    }
}

/* Every policy: each page of an 8 MiB array (+ a partial page) on the node of the pure map. */
static void test_policies(void)
{
    char s[64], last_first[32], many_threads[48];
    snprintf(last_first, sizeof last_first, "bind_all:%d,0", N - 1);
    snprintf(many_threads, sizeof many_threads, "bind_block:threads=%d", 2 * N * K + 1);
    const char *policies[] = {"bind_all", last_first, "bind_block", "bind_block:pin=scatter",
                              many_threads, "cyclic", "cyclic_block:16", "cyclic_block:3",
                              "skew_mapp", "prime_mapp", "random:seed=42", "random_block:5,seed=9",
                              "weighted:0=3,1=1", "cyclic@0,1", NULL};
    size_t bytes = (8 << 20) + 100, npages = (bytes + PSZ - 1) / PSZ;
    int *want = malloc(npages * sizeof *want);
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    for (int i = 0; policies[i]; i++) {
        const char *str = policies[i];
        if (N < 2 && strchr(str, '@'))
            continue;
        npl_policy *p = pol(str);
        unsigned char *a = npl_alloc(bytes, p);
        CHECK(a != NULL, "%s: allocation: %s", str, npl_last_error());
        if (!a) {
            npl_policy_free(p);
            continue;
        }
        npl_policy_map(p, NULL, &shape, bytes, (size_t)PSZ, 0, npages, want);
        size_t first = 0, bad = wrong_pages(a, bytes, want, &first);
        CHECK(bad == 0, "%s: %zu of %zu pages not on their node (first: page %zu)", str, bad,
              npages, first);
        struct npl_check c;
        CHECK(npl_check(a, &c) == 0 && c.placed == npages && c.misplaced == 0,
              "%s: npl_check agrees (%zu placed)", str, c.placed);
        /* re-place the written array under the next policy: pages move, data stays */
        const char *next = policies[i + 1] ? policies[i + 1] : policies[0];
        for (size_t k = 0; k + 8 <= bytes; k += 8) { /* words: bytes cost seconds under TSan */
            uint64_t w = k * 0x9e3779b97f4a7c15ull + 7;
            memcpy(a + k, &w, sizeof w);
        }
        uint64_t before = checksum(a, bytes);
        npl_policy *q = pol(next);
        CHECK(npl_apply(a, q, 0) == 0, "%s -> %s: %s", str, next, npl_last_error());
        npl_policy_map(q, NULL, &shape, bytes, (size_t)PSZ, 0, npages, want);
        bad = wrong_pages(a, bytes, want, &first);
        CHECK(bad == 0 && checksum(a, bytes) == before,
              "%s -> %s: %zu pages not on their node, data %s", str, next, bad,
              checksum(a, bytes) == before ? "intact" : "CHANGED");
        npl_free(a);
        npl_policy_free(p);
        npl_policy_free(q);
    }
    free(want);

    /* independent formulas, not the library's map: cyclic and skew_mapp */
    size_t n = 4096;
    npl_policy *p = pol("skew_mapp");
    unsigned char *a = npl_alloc(n * PSZ, p);
    int *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (int)((i + i / N + 1) % N);
    CHECK(a && wrong_pages(a, n * PSZ, f, NULL) == 0, "skew_mapp = (i + i/M + 1) mod M exactly");
    npl_free(a);
    npl_policy_free(p);
    p = pol("cyclic");
    a = npl_alloc(n * PSZ, p);
    size_t counts[64], absent;
    npl_histogram(a, n * PSZ, counts, &absent);
    int even = absent == 0;
    for (int i = 0; i < N; i++)
        even &= counts[i] == n / N + ((size_t)i < n % N);
    CHECK(even, "cyclic: %zu pages split evenly over %d nodes", n, N);
    npl_free(a);
    npl_policy_free(p);
    free(f);

    /* composed: first half cyclic, second half bind_all on the last node */
    npl_shape s2 = {8, 2, {64, 1024, 0}, NPL_ROW_MAJOR}; /* 64 rows of 8 KiB */
    p = pol("cyclic");
    a = npl_alloc_array(&s2, p, 0);
    npl_policy *b;
    snprintf(s, sizeof s, "bind_all:%d", N - 1);
    b = pol(s);
    CHECK(a && npl_apply_part(a, 32, 32, b, 0) == 0, "apply bind_all to rows 32-63");
    int *w2 = malloc(128 * sizeof *w2);
    for (int i = 0; i < 128; i++)
        w2[i] = i < 64 ? i % N : N - 1;
    CHECK(a && wrong_pages(a, 64 * 8192, w2, NULL) == 0, "composed policy exact per page");
    struct npl_check c;
    CHECK(a && npl_check(a, &c) == 0 && c.misplaced == 0 && c.absent == 0 && c.placed == c.pages,
          "composed: npl_check agrees, every page placed (%zu of %zu, %zu absent)", c.placed,
          c.pages, c.absent);
    free(w2);
    npl_free(a);
    npl_policy_free(p);
    npl_policy_free(b);

    /* a raw range first touched by this thread, then placed: pages move, data stays */
    size_t rb = 2 << 20;
    unsigned char *r = aligned_alloc((size_t)PSZ, rb);
    for (size_t k = 0; k < rb; k++)
        r[k] = (unsigned char)(k ^ 0x5a);
    uint64_t before = checksum(r, rb);
    p = pol("cyclic");
    CHECK(npl_place_range(r, rb, p, NULL, 0) == 0, "place_range on malloc'ed memory");
    int *w3 = malloc(512 * sizeof *w3);
    for (int i = 0; i < 512; i++)
        w3[i] = i % N;
    CHECK(wrong_pages(r, rb, w3, NULL) == 0 && checksum(r, rb) == before,
          "place_range: touched pages moved, data intact");
    free(w3);
    free(r);
    npl_policy_free(p);
}

/* A big skew_mapp array: mappings and system calls stay O(nodes). */
static void test_big(size_t mib)
{
    npl_policy *p = pol("skew_mapp");
    npl_free(npl_alloc(mib << 20, p)); /* warm-up: glibc caches the worker threads' stacks */
    int m0 = count_maps();
    struct npl_stats s0, s1;
    npl_get_stats(&s0);
    size_t bytes = mib << 20, n = bytes / PSZ;
    char *a = npl_alloc(bytes, p);
    int m1 = count_maps();
    npl_get_stats(&s1);
    CHECK(a != NULL, "%zu MiB skew_mapp array: %s", mib, npl_last_error());
    if (a) {
        struct npl_array_info info;
        npl_array_info(a, &info);
        int inside = maps_in(a, bytes);
        CHECK(inside <= 2, "%zu pages placed: %d mapping(s) cover the array (not one per page)", n,
              inside);
        CHECK(m1 - m0 <= 2, "mappings added to the process: %d (the array itself)", m1 - m0);
        CHECK(info.last.syscalls <= (size_t)(8 + 16 * (N + 2)),
              "%zu system calls for %d nodes", info.last.syscalls, N);
        int *f = malloc(n * sizeof *f);
        for (size_t i = 0; i < n; i++)
            f[i] = (int)((i + i / N + 1) % N);
        CHECK(wrong_pages(a, bytes, f, NULL) == 0, "every page of %zu MiB on its skew node", mib);
        printf("  big: %zu MiB, %zu pages, %.2f s, %zu syscalls, +%d maps, %d covering it\n", mib,
               n, info.last.seconds, info.last.syscalls, m1 - m0, inside);
        free(f);
        npl_free(a);
    }
    npl_policy_free(p);
}

/* A node whose memory runs out: pages spill (reported), STRICT fails cleanly, no crash. */
static void test_exhaustion(void)
{
#if defined(__SANITIZE_THREAD__)
    /* TSan's shadow memory grows with every page the test fills: the guest runs out of memory
     * altogether (OOM kill) before the node does. Exhaustion runs in the normal and ASan builds. */
    SKIP("tsan-exhaustion", "exhaustion test under TSan (its shadow memory would exhaust the "
         "whole guest)");
    return;
#endif
    npl_topo *fresh;
    int loaded = npl_topo_load(&fresh) == 0;
    CHECK(loaded, "a fresh topology (free memory per node): %s", npl_last_error());
    if (!loaded)
        return;
    int last = N - 1;
    struct npl_node_info ni;
    npl_topo_node_info(fresh, last, &ni);
    uint64_t others = 0;
    for (int i = 0; i < N - 1; i++) {
        struct npl_node_info o;
        npl_topo_node_info(fresh, i, &o);
        others += o.free_bytes;
    }
    npl_topo_destroy(fresh);
    size_t want = (size_t)(ni.free_bytes + (48 << 20)) & ~(size_t)(PSZ - 1);
    if (others < (uint64_t)want - ni.free_bytes + (96 << 20)) {
        SKIP("exhaustion-room", "exhaustion test: the other nodes have only %llu MiB free",
             (unsigned long long)(others >> 20));
        return;
    }
    char s[32];
    snprintf(s, sizeof s, "bind_all:%d", last);
    npl_policy *p = pol(s);
    size_t n = want / PSZ;
    char *a = npl_alloc(want, p);
    CHECK(a != NULL, "%zu MiB bind_all on node %d with %llu MiB free: allocated (spill reported)",
          want >> 20, last, (unsigned long long)(ni.free_bytes >> 20));
    if (a) {
        struct npl_array_info info;
        struct npl_check c;
        npl_array_info(a, &info);
        npl_check(a, &c);
        printf("  exhaustion: %zu pages, %zu on node %d, %zu elsewhere (reported %zu)\n", n,
               c.placed, last, c.misplaced, info.last.misplaced);
        /* move_pages may finish moving a few pages of a batch it reported as failed (seen: 2 of
         * 13603), so the report may exceed reality by a hair, never fall short of it */
        CHECK(c.misplaced > 0 && c.placed + c.misplaced == n && c.misplaced <= info.last.misplaced &&
                  info.last.misplaced - c.misplaced <= 8 + info.last.misplaced / 1000,
              "spilled pages are reported (%zu now elsewhere, %zu reported)", c.misplaced,
              info.last.misplaced);
        memset(a, 0x11, want); /* the memory is usable */
        CHECK(a[want - 1] == 0x11, "spilled array usable");
        npl_free(a);
    }
    struct npl_stats s0, s1;
    npl_get_stats(&s0);
    errno = 0;
    char *b = npl_alloc_array(&(npl_shape){1, 1, {want, 0, 0}, NPL_ROW_MAJOR}, p, NPL_F_STRICT);
    npl_get_stats(&s1);
    CHECK(b == NULL && errno == ENOMEM && s1.arrays_live == s0.arrays_live,
          "NPL_F_STRICT: ENOMEM, nothing leaked (%s)", npl_last_error());
    npl_free(b);
    npl_policy_free(p);
}

/* numaplace where on this process reports the array's pages per node exactly */
static void test_where(void)
{
    npl_policy *p = pol("cyclic");
    size_t n = 1024;
    char *a = npl_alloc(n * PSZ, p);
    char cmd[128], line[65536];
    snprintf(cmd, sizeof cmd, "numaplace where --json %d", (int)getpid());
    FILE *f = popen(cmd, "r");
    size_t got = f ? fread(line, 1, sizeof line - 1, f) : 0;
    line[got] = 0;
    int st = f ? pclose(f) : -1;
    char key[64];
    snprintf(key, sizeof key, "\"start\": \"0x%lx\"", (unsigned long)(uintptr_t)a);
    char *m = strstr(line, key);
    int ok = st == 0 && m != NULL;
    for (int k = 0; ok && k < N; k++) {
        char want[32];
        snprintf(want, sizeof want, "\"%d\": %zu", k, n / N + ((size_t)k < n % N));
        char *pages = strstr(m, "\"pages\"");
        char *end = pages ? strchr(pages, '}') : NULL;
        char *hit = pages ? strstr(pages, want) : NULL;
        ok = hit && hit < end;
    }
    CHECK(ok, "numaplace where reports the cyclic array's %zu pages per node exactly (status %d)",
          n, st);
    npl_free(a);
    npl_policy_free(p);
}

/* ---- pinning: thread n on the expected CPU and node ---- */
struct seen {
    int cpu, node;
};
static struct seen seen[256];
static void *record(void *arg)
{
    struct seen *s = arg;
    sched_yield();
    npl_where_am_i(&s->cpu, &s->node);
    return NULL;
}

static void test_pinning(void)
{
    int ncpu = npl_topo_cpu_count(T);
    const char *strategies[] = {"compact", "scatter"};
    for (int si = 0; si < 2; si++) {
        const char *st = strategies[si];
        pid_t pid = fork(); /* pinning the main thread must not leak into later tests */
        if (pid == 0) {
            npl_pthread_reset();
            int c0 = npl_pin_self(st, 0);
            record(&seen[0]);
            pthread_t th[256];
            for (int n = 1; n < ncpu; n++)
                npl_pthread_create(&th[n], NULL, record, &seen[n], st);
            for (int n = 1; n < ncpu; n++)
                pthread_join(th[n], NULL);
            int bad = c0 < 0;
            for (int n = 0; n < ncpu; n++) {
                int want_node = si == 0 ? n / K : n % N;
                int want_cpu = si == 0 ? n : (n % N) * K + n / N;
                if (seen[n].node != want_node || seen[n].cpu != want_cpu) {
                    printf("  %s thread %d on cpu %d node %d, want cpu %d node %d\n", st, n,
                           seen[n].cpu, seen[n].node, want_cpu, want_node);
                    bad++;
                }
            }
            _exit(bad);
        }
        int status;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s: every thread n on its expected CPU and node (%d threads)", st, ncpu);
    }
    if (K >= 2 && N >= 2)
        CHECK(npl_pin_cpu(T, "compact", 1) / K == 0 && npl_pin_cpu(T, "scatter", 1) / K == 1,
              "compact keeps thread 1 on node 0, scatter sends it to node 1");
#ifdef _OPENMP
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        omp_set_num_threads(ncpu);
        if (npl_omp_pin_team("scatter") < 0)
            _exit(100);
#pragma omp parallel reduction(+ : bad)
        {
            int n = omp_get_thread_num(), cpu, node;
            npl_where_am_i(&cpu, &node);
            if (node != n % N)
                bad++;
        }
        _exit(bad);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "OpenMP team pinned scatter: thread n on node n mod %d", N);
#endif
}

/* ---- masks: a cpuset without node `masked`, and a taskset-like CPU mask ---- */
static int write_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
    close(fd);
    return r;
}

static int masked_child(int masked)
{
    /* runs after exec: the library loaded inside the cgroup and the CPU mask */
    CHECK(npl_topo_node_count(T, 0) == N - 1, "node %d masked: %d usable nodes", masked,
          npl_topo_node_count(T, 0));
    char s[32];
    snprintf(s, sizeof s, "bind_all:%d", masked);
    npl_policy *p = pol(s);
    errno = 0;
    CHECK(npl_alloc(PSZ, p) == NULL && errno == EXDEV, "bind_all on the masked node: EXDEV (%s)",
          npl_last_error());
    npl_policy_free(p);
    const char *all[] = {"cyclic", "skew_mapp", "prime_mapp", "random", "bind_block", NULL};
    for (int i = 0; all[i]; i++) {
        p = pol(all[i]);
        size_t n = 1024, counts[64], absent = 0;
        char *a = npl_alloc(n * PSZ, p);
        CHECK(a && npl_histogram(a, n * PSZ, counts, &absent) == 0 && counts[masked] == 0 &&
                  absent == 0,
              "%s: no page on masked node %d", all[i], masked);
        npl_free(a);
        npl_policy_free(p);
    }
    /* CPU mask (as taskset): only CPUs 0..K-1 allowed -> pin orders stay inside */
    int order[256];
    int cnt = npl_pin_order(T, "scatter", order, 256), inside = cnt > 0;
    for (int i = 0; i < cnt; i++)
        inside &= order[i] < K;
    CHECK(inside && cnt == K, "scatter under a %d-CPU mask uses only those CPUs (%d)", K, cnt);
    /* CPU K is the first CPU of node 1 (N >= 2 here): outside the mask 0..K-1 in every shape */
    char cpu[16];
    cpu_set_t before, after;
    sched_getaffinity(0, sizeof before, &before);
    snprintf(cpu, sizeof cpu, "%d", K);
    errno = 0;
    int r = npl_pin_self(cpu, 0), e = errno;
    sched_getaffinity(0, sizeof after, &after);
    CHECK(!CPU_ISSET(K, &before) && r == -1 && e == EXDEV && CPU_EQUAL(&before, &after),
          "CPU %d, outside the mask 0-%d, is refused: %d, errno %d (EXDEV %d), mask unchanged %d",
          K, K - 1, r, e, EXDEV, CPU_EQUAL(&before, &after));
    snprintf(cpu, sizeof cpu, "%d", K - 1);
    CHECK(npl_pin_self(cpu, 0) == K - 1, "CPU %d, inside the mask, is accepted: %s", K - 1,
          npl_last_error());
    return t_fail;
}

static void test_masks(const char *self)
{
    int masked = N - 1;
    mkdir("/sys/fs/cgroup", 0755);
    if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0)
        system("mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null");
    write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset");
    mkdir("/sys/fs/cgroup/npl_mask", 0755);
    char mems[32];
    snprintf(mems, sizeof mems, "0-%d", N - 2);
    int ok = write_file("/sys/fs/cgroup/npl_mask/cpuset.mems", mems) == 0;
    CHECK(ok, "cgroup cpuset.mems = %s set up", mems);
    if (!ok)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        char me[32];
        snprintf(me, sizeof me, "%d", getpid());
        write_file("/sys/fs/cgroup/npl_mask/cgroup.procs", me);
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int c = 0; c < K; c++)
            CPU_SET(c, &set);
        sched_setaffinity(0, sizeof set, &set);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", masked);
        char nn[16], kk[16];
        snprintf(nn, sizeof nn, "%d", N);
        snprintf(kk, sizeof kk, "%d", K);
        execl(self, self, "--masked-child", arg, "--nodes", nn, "--cpus-per-node", kk, (char *)0);
        _exit(99);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "masked child passed (status %d)",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* ---- automatic NUMA balancing on: protected arrays stay put ---- */
static volatile int stop_reading;
static void *reader(void *arg)
{
    volatile char *a = arg;
    npl_pin_self("compact", 0); /* node 0 */
    long sum = 0;
    while (!stop_reading)
        for (size_t i = 0; i < (32 << 20); i += 64)
            sum += a[i];
    return (void *)sum;
}

static void test_balancing(void)
{
    int fd = open("/proc/sys/kernel/numa_balancing", O_RDONLY);
    char v = '0';
    if (fd >= 0) {
        read(fd, &v, 1);
        close(fd);
    }
    CHECK(v == '1', "automatic NUMA balancing is on in this boot (%c)", v);
    size_t bytes = 32 << 20, n = bytes / PSZ;
    npl_policy *p = pol("cyclic");
    char *prot = npl_alloc(bytes, p);
    char *open_ = npl_alloc_array(&(npl_shape){1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR}, p,
                                  NPL_F_NO_PROTECT);
    int *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i % N);
    CHECK(prot && open_ && wrong_pages(prot, bytes, want, NULL) == 0 &&
              wrong_pages(open_, bytes, want, NULL) == 0,
          "both arrays placed cyclically");
    /* Both arrays are read from node 0 for at least 12 s, and on until the kernel has moved a
     * page of the unprotected control: the proof that balancing was at work, so that the
     * protected array's 0 means something. The wait is a bounded poll on that condition, not a
     * timing: balancing moved 12,288 of 16,384 cyclic pages within 2.4 s (facts.md) and this
     * control lost 6,144 pages in 12 s; 300 s, 25 times the window, is reached only if balancing
     * moves nothing at all (then the control's check fails), never because a guest is slow. */
    pthread_t r1, r2;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_create(&r1, NULL, reader, prot);
    pthread_create(&r2, NULL, reader, open_);
    size_t moved_open = 0;
    double secs = 0;
    while (secs < 300 && (secs < 12 || moved_open == 0)) {
        usleep(500000);
        moved_open = wrong_pages(open_, bytes, want, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
        secs = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
    }
    stop_reading = 1;
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    size_t moved_prot = wrong_pages(prot, bytes, want, NULL);
    moved_open = wrong_pages(open_, bytes, want, NULL);
    printf("  after %.0f s of reads from node 0: protected array %zu pages moved, unprotected "
           "control %zu pages moved\n", secs, moved_prot, moved_open);
    CHECK(moved_open > 0, "unprotected control: NUMA balancing moved some of its %zu pages "
          "(%zu, within 300 s): balancing was at work", n, moved_open);
    CHECK(moved_prot == 0, "protected cyclic array: no page moved by NUMA balancing (%zu)",
          moved_prot);
    npl_free(prot);
    npl_free(open_);
    npl_policy_free(p);
    free(want);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    int balancing = 0, masked = -1;
    size_t big = 64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node") && i + 1 < argc)
            K = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--big-mib") && i + 1 < argc)
            big = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--balancing"))
            balancing = 1;
        else if (!strcmp(argv[i], "--masked-child") && i + 1 < argc)
            masked = atoi(argv[++i]);
    }
    T = npl_topo_self();
    if (!T || N < 1 || K < 1) {
        printf("usage: guest_placement --nodes N --cpus-per-node K [--big-mib M] [--balancing]\n");
        return 120;
    }
    if (masked >= 0)
        return masked_child(masked) ? 1 : 0;
    printf("guest_placement: %d nodes x %d CPUs%s\n", N, K, balancing ? ", balancing on" : "");
    if (balancing) {
        test_balancing();
        return check_summary("guest_placement balancing");
    }
    test_topology();
    test_policies();
    test_big(big);
    test_exhaustion();
    test_where();
    test_pinning();
    if (N >= 2)
        test_masks("/proc/self/exe");
    return check_summary("guest_placement");
}
