/* SPDX-License-Identifier: BSD-3-Clause */
/* locality.h - exact local-access counting for the locality harness (bench/auto/, docs/RESULTS.md "The locality harness").
 *
 * The programs of bench/auto/ are plain OpenMP programs (nothing of numaplace linked: they are run
 * under `numaplace run --policy P`). Each knows its access pattern and counts EVERY access of its
 * compute phase, not samples: after the initialisation it asks the kernel where each page of each
 * tracked array is (move_pages(2) with no target nodes), each thread knows its node (getcpu(2);
 * threads are pinned by `numaplace run --pin`), and each access adds one to the array's count, and
 * one to its local count when the page's node is the thread's. After the compute phase the pages
 * are located again: a page that moved (automatic NUMA balancing, next-touch) is counted, so a
 * count made on a placement that changed under it is never reported as exact.
 *
 * With AUTO_PROFILE=FILE the program also writes an EXACT access profile (docs/AUTO.md, format 1):
 * every access of the compute phase per (region, page, thread), reads and writes apart, the first
 * toucher of each page (recorded in the initialisation loops) and the order of the regions. It is
 * what a sampler would converge to; `numaplace advise` classifies it (bench/auto/run_auto
 * --exact-profiles). */
#ifndef AUTO_LOCALITY_H
#define AUTO_LOCALITY_H
#include "../bench_common.h"

#include <omp.h>

#define AUTO_MAX_ARRAYS 8
#define AUTO_MAX_THREADS 256
#define AUTO_MAX_REGIONS 4

struct auto_array {
    const char *name, *pattern;
    char *base;              /* the program's pointer */
    uintptr_t first_page;    /* its first page (the array need not be page-aligned) */
    size_t bytes, npages;
    int *node;               /* node of each page after initialisation (< 0: not present) */
    unsigned long long accesses, local;
    long moved, absent;
    /* AUTO_PROFILE: counts[region][thread][page] of reads and writes; first toucher per page */
    unsigned *reads, *writes;
    int *first;
};

static struct auto_array auto_arrays[AUTO_MAX_ARRAYS];
static int auto_narrays;
static int auto_thread_node[AUTO_MAX_THREADS];
static int auto_profiling = -1;     /* AUTO_PROFILE set */
static int auto_region_now;         /* the region being run (auto_region) */
static int auto_region_entries[AUTO_MAX_REGIONS];
static int auto_sequence[4096], auto_nseq; /* the order regions were entered */
static __thread int auto_tid;
static int auto_T; /* threads (the counts' rows) */

static inline int auto_profile_on(void)
{
    if (auto_profiling < 0)
        auto_profiling = getenv("AUTO_PROFILE") && *getenv("AUTO_PROFILE");
    return auto_profiling;
}

/* the next parallel region is region r (0 .. AUTO_MAX_REGIONS-1); call before it, outside */
static inline void auto_region(int r)
{
    auto_region_now = r;
    auto_region_entries[r]++;
    if (auto_nseq < 4096)
        auto_sequence[auto_nseq++] = r;
}

static inline struct auto_array *auto_track(void *base, size_t bytes, const char *name,
                                            const char *pattern)
{
    struct auto_array *a = &auto_arrays[auto_narrays++];
    a->name = name;
    a->pattern = pattern;
    a->base = base;
    a->bytes = bytes;
    a->first_page = (uintptr_t)base & ~(BENCH_PAGE - 1);
    a->npages = bench_pages(base, bytes);
    a->node = malloc(a->npages * sizeof *a->node);
    if (!a->node) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t p = 0; p < a->npages; p++)
        a->node[p] = -1;
    auto_T = omp_get_max_threads();
    if (auto_profile_on()) {
        size_t n = (size_t)AUTO_MAX_REGIONS * auto_T * a->npages;
        a->reads = calloc(n, sizeof *a->reads);
        a->writes = calloc(n, sizeof *a->writes);
        a->first = malloc(a->npages * sizeof *a->first);
        if (!a->reads || !a->writes || !a->first) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        for (size_t p = 0; p < a->npages; p++)
            a->first[p] = -1;
    }
    return a;
}

/* an initialisation write by the calling thread: the page's first toucher (AUTO_PROFILE) */
static inline void auto_init_touch(struct auto_array *a, const void *p)
{
    if (!a->first)
        return;
    size_t pg = ((uintptr_t)p - a->first_page) / BENCH_PAGE;
    int expect = -1;
    __atomic_compare_exchange_n(&a->first[pg], &expect, omp_get_thread_num(), 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

/* where every page is now (after initialisation) */
static inline void auto_locate(void)
{
    for (int i = 0; i < auto_narrays; i++) {
        struct auto_array *a = &auto_arrays[i];
        if (bench_page_nodes(a->base, a->bytes, a->node) < 0) {
            perror("move_pages");
            exit(1);
        }
        a->absent = 0;
        for (size_t p = 0; p < a->npages; p++)
            a->absent += a->node[p] < 0;
    }
}

/* the calling thread's node, recorded per thread; call inside each parallel region */
static inline int auto_my_node(void)
{
    int n = bench_my_node(), t = omp_get_thread_num();
    if (t < AUTO_MAX_THREADS)
        auto_thread_node[t] = n;
    auto_tid = t;
    return n;
}

/* r reads and w writes of address p of array a by the calling thread, on node `me`: the number
 * of them that are local (all or none) */
static inline unsigned auto_rw(struct auto_array *a, const void *p, int me, unsigned r, unsigned w)
{
    size_t pg = ((uintptr_t)p - a->first_page) / BENCH_PAGE;
    if (a->reads) {
        size_t i = ((size_t)auto_region_now * auto_T + auto_tid) * a->npages + pg;
        a->reads[i] += r;
        a->writes[i] += w;
    }
    return a->node[pg] == me ? r + w : 0;
}

/* after the compute phase: pages that are no longer where they were counted */
static inline void auto_recheck(void)
{
    for (int i = 0; i < auto_narrays; i++) {
        struct auto_array *a = &auto_arrays[i];
        int *now = malloc(a->npages * sizeof *now);
        if (!now || bench_page_nodes(a->base, a->bytes, now) < 0) {
            perror("move_pages");
            exit(1);
        }
        a->moved = 0;
        for (size_t p = 0; p < a->npages; p++)
            a->moved += now[p] != a->node[p];
        free(now);
    }
}

/* the exact profile (format 1) of the tracked arrays to FILE */
static inline void auto_write_profile(const char *file, const char *program)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        perror(file);
        exit(1);
    }
    int T = omp_get_max_threads(), maxn = 0;
    for (int t = 0; t < T && t < AUTO_MAX_THREADS; t++)
        maxn = auto_thread_node[t] > maxn ? auto_thread_node[t] : maxn;
    char exe[4096] = "";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
    const char *pin = getenv("AUTO_PIN") ? getenv("AUTO_PIN") : "compact";
    fprintf(f, "{\"format\": \"numaplace-profile\", \"version\": 1,\n"
               " \"program\": {\"path\": \"%s\", \"build_id\": null},\n \"machine\": {\"nodes\": [",
            exe);
    FILE *on = fopen("/sys/devices/system/node/online", "r");
    int lo = 0, hi = maxn;
    if (on) { /* "0-3" or "0" */
        if (fscanf(on, "%d-%d", &lo, &hi) == 1)
            hi = lo;
        fclose(on);
    }
    for (int n = lo; n <= hi; n++)
        fprintf(f, "%s%d", n > lo ? ", " : "", n);
    fprintf(f, "], \"page_size\": %lu},\n \"run\": {\"threads\": %d, \"thread_nodes\": [",
            BENCH_PAGE, T);
    for (int t = 0; t < T; t++)
        fprintf(f, "%s%d", t ? ", " : "", auto_thread_node[t]);
    fprintf(f, "], \"thread_cpus\": null, \"binding\": {\"source\": \"pin\", \"detail\": \"%s\"}},\n"
               " \"sampling\": {\"backend\": \"fault\", \"rate\": 0, \"samples\": 0, \"seconds\": 0, "
               "\"rw_known\": true},\n \"phases\": [", pin);
    int nreg = 0;
    for (int r = 0; r < AUTO_MAX_REGIONS; r++)
        if (auto_region_entries[r])
            fprintf(f, "%s{\"id\": %d, \"kind\": \"region\", \"site\": null, \"entries\": %d}",
                    nreg++ ? ", " : "", r, auto_region_entries[r]);
    fprintf(f, "],\n \"transitions\": [");
    long tr[AUTO_MAX_REGIONS][AUTO_MAX_REGIONS] = {{0}};
    for (int i = 1; i < auto_nseq; i++)
        tr[auto_sequence[i - 1]][auto_sequence[i]]++;
    int ntr = 0;
    for (int x = 0; x < AUTO_MAX_REGIONS; x++)
        for (int y = 0; y < AUTO_MAX_REGIONS; y++)
            if (tr[x][y])
                fprintf(f, "%s[%d, %d, %ld]", ntr++ ? ", " : "", x, y, tr[x][y]);
    fprintf(f, "],\n \"arrays\": [");
    for (int i = 0; i < auto_narrays; i++) {
        struct auto_array *a = &auto_arrays[i];
        fprintf(f, "%s\n  {\"site\": {\"object\": \"%s\", \"build_id\": null, \"offset\": %d, "
                   "\"ordinal\": 0, \"kind\": \"heap\", \"symbol\": null, \"where\": \"%s:%s\"},\n"
                   "   \"bytes\": %zu, \"chunk_bytes\": %lu, \"nchunks\": %zu,\n   \"first_touch\": [",
                i ? "," : "", exe, i + 1, program, a->name, a->npages * BENCH_PAGE, BENCH_PAGE, a->npages);
        for (size_t p = 0; p < a->npages; p++)
            fprintf(f, "%s%d", p ? ", " : "", a->first ? a->first[p] : -1);
        fprintf(f, "],\n   \"samples\": [");
        int rows = 0;
        for (int r = 0; r < AUTO_MAX_REGIONS; r++)
            for (int t = 0; t < T; t++)
                for (size_t p = 0; p < a->npages; p++) {
                    size_t x = ((size_t)r * T + t) * a->npages + p;
                    if (a->reads[x] + a->writes[x])
                        fprintf(f, "%s[%d, %zu, %d, %u, %u]", rows++ ? ", " : "", r, p, t, a->reads[x],
                                a->writes[x]);
                }
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
        perror(file);
        exit(1);
    }
}

/* one JSON object on stdout */
static inline void auto_report(const char *program, int iterations, double checksum)
{
#ifndef AUTO_COMPILER
#define AUTO_COMPILER "unknown"
#endif
    int T = omp_get_max_threads();
    unsigned long long acc = 0, loc = 0;
    printf("{\"program\": \"%s\", \"compiler\": \"%s\", \"threads\": %d, \"iterations\": %d, "
           "\"checksum\": %.17g,\n \"thread_nodes\": [", program, AUTO_COMPILER, T, iterations,
           checksum);
    for (int t = 0; t < T && t < AUTO_MAX_THREADS; t++)
        printf("%s%d", t ? ", " : "", auto_thread_node[t]);
    printf("],\n \"arrays\": [");
    for (int i = 0; i < auto_narrays; i++) {
        struct auto_array *a = &auto_arrays[i];
        long per[BENCH_MAX_NODES] = {0};
        int maxn = -1;
        for (size_t p = 0; p < a->npages; p++)
            if (a->node[p] >= 0 && a->node[p] < BENCH_MAX_NODES) {
                per[a->node[p]]++;
                maxn = a->node[p] > maxn ? a->node[p] : maxn;
            }
        printf("%s\n  {\"name\": \"%s\", \"pattern\": \"%s\", \"bytes\": %zu, \"pages\": %zu, "
               "\"accesses\": %llu, \"local\": %llu, \"local_fraction\": %.6f, \"absent_pages\": %ld, "
               "\"moved_pages\": %ld, \"pages_per_node\": [", i ? "," : "", a->name, a->pattern,
               a->bytes, a->npages, a->accesses, a->local,
               a->accesses ? (double)a->local / (double)a->accesses : 0.0, a->absent, a->moved);
        for (int n = 0; n <= maxn; n++)
            printf("%s%ld", n ? ", " : "", per[n]);
        printf("]}");
        acc += a->accesses;
        loc += a->local;
    }
    printf("],\n \"accesses\": %llu, \"local\": %llu, \"local_fraction\": %.6f}\n", acc, loc,
           acc ? (double)loc / (double)acc : 0.0);
    if (auto_profile_on())
        auto_write_profile(getenv("AUTO_PROFILE"), program);
}
#endif
