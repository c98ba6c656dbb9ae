/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_khugepaged - placements stay exact while khugepaged works (every guest shape):
 *   guest_khugepaged --nodes N --cpus-per-node K [--runs R]
 * khugepaged collapses any eligible 2 MiB frame (THP "always", as in the guest, or
 * MADV_HUGEPAGE) into one huge page on one node, whatever the placement was. Here it scans every
 * millisecond (scan_sleep_millisecs and alloc_sleep_millisecs 1; restored at exit) while the
 * program makes THP placements, re-placements and migrations: a base-page array re-placed with
 * NPL_F_THP (its 2 MiB units do not start on 2 MiB frames), a THP array re-placed page by page,
 * rows of a THP array migrated and re-placed in parts that cut frames, a part re-placed with
 * NPL_F_THP, a THP array migrated page by page, ranges of raw memory. Every page is compared with
 * its node (formulas written here, the raw move_pages(2)) right after each operation, then again
 * after khugepaged has finished at least 3 more full scans (bounded wait), with npl_check and
 * the data's checksum. A control proves khugepaged works here: a raw THP-eligible range whose
 * frames hold pages of two nodes must have been collapsed onto one node per frame. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define HUGE ((size_t)2 << 20)
#define KH "/sys/kernel/mm/transparent_hugepage/khugepaged/"
#define SCANS 3
#define WAIT_SECONDS 60

static int N;
static size_t PSZ, PER; /* base page; base pages per 2 MiB */

/* ---- khugepaged's knobs ---- */
static long kh_read(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, KH "%s", name);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int kh_write(const char *name, long v)
{
    char path[256];
    snprintf(path, sizeof path, KH "%s", name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fprintf(f, "%ld", v) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static long saved_scan = -1, saved_alloc = -1;
static void kh_restore(void)
{
    if (saved_scan >= 0)
        kh_write("scan_sleep_millisecs", saved_scan);
    if (saved_alloc >= 0)
        kh_write("alloc_sleep_millisecs", saved_alloc);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* wait until khugepaged has finished `scans` more full scans; how many it did (bounded wait) */
static long kh_wait(long scans)
{
    long s0 = kh_read("full_scans"), s = s0;
    double t0 = now();
    while (s - s0 < scans && now() - t0 < WAIT_SECONDS) {
        usleep(20000);
        s = kh_read("full_scans");
    }
    return s - s0;
}

/* ---- the cases: memory, the node of every page, the data's checksum ---- */
#define MAX_CASES 16
struct kcase {
    const char *what;
    unsigned char *a;    /* a library array, or raw memory */
    size_t bytes;
    int *want;           /* node of each base page */
    uint64_t sum;
    int array;           /* npl_check applies: the array's segments say where pages go */
    void *block;         /* raw memory: what to free() */
    int huge_frames;     /* frames from a that must be huge pages on their unit's node (cyclic) */
};
static struct kcase cases[MAX_CASES];
static int ncases;

/* pages of [a, a+bytes) whose node (raw move_pages) is not want[i]; prints the first */
static size_t off_map(const char *what, const unsigned char *a, size_t bytes, const int *want)
{
    size_t n = (bytes + PSZ - 1) / PSZ, bad = 0;
    void **pages = malloc(n * sizeof *pages);
    int *st = malloc(n * sizeof *st);
    for (size_t i = 0; i < n; i++)
        pages[i] = (char *)a + i * PSZ;
    if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, st, 0) != 0) {
        printf("  %s: move_pages: %s\n", what, strerror(errno));
        bad = n;
    }
    for (size_t i = 0; bad < n && i < n; i++)
        if (st[i] != want[i] && !bad++)
            printf("  %s: page %zu of %zu: want node %d, move_pages says %d\n", what, i, n,
                   want[i], st[i]);
    free(pages);
    free(st);
    return bad;
}

static void fill(unsigned char *a, size_t bytes, unsigned seed)
{
    for (size_t i = 0; i < bytes; i++)
        a[i] = (unsigned char)((i * 2654435761u) >> 13 ^ seed);
}

static int *alloc_want(size_t bytes) { return malloc((bytes + PSZ - 1) / PSZ * sizeof(int)); }

static int cyclic(size_t u) { return (int)(u % (size_t)N); }
static int skew(size_t u) { return (int)((u + u / (size_t)N + 1) % (size_t)N); }

/* record a case after its operation: every page must be on its node already */
static size_t placed_bad;
static void keep(const char *what, unsigned char *a, size_t bytes, int *want, uint64_t sum,
                 int array, void *block, int rc)
{
    CHECK(rc == 0, "%s: %s", what, npl_last_error());
    size_t bad = off_map(what, a, bytes, want);
    placed_bad += bad;
    CHECK(bad == 0 && checksum(a, bytes) == sum, "%s: right after: %zu of %zu pages off the map",
          what, bad, (bytes + PSZ - 1) / PSZ);
    if (ncases < MAX_CASES)
        cases[ncases++] = (struct kcase){what, a, bytes, want, sum, array, block, 0};
}

/* base pages [lo, hi) of rows [u0, u0+nu) of ub bytes each (whole pages: ub is a page multiple) */
static void rows(size_t u0, size_t nu, size_t ub, size_t *lo, size_t *hi)
{
    *lo = u0 * ub / PSZ;
    *hi = (u0 + nu) * ub / PSZ;
}

static void make_cases(void)
{
    npl_policy *cyc = pol("cyclic"), *sk = pol("skew_mapp");
    char last[32];
    snprintf(last, sizeof last, "bind_all:%d", N - 1);
    npl_policy *onlast = pol(last);

    /* 1-2. base-page arrays (4 KiB-aligned) re-placed skew_mapp with NPL_F_THP: 2 MiB units from
     * the array's start, which cut the 2 MiB frames */
    size_t sizes[2] = {6 * MIB + 300, 10 * MIB + 37 * 4096};
    for (int c = 0; c < 2; c++) {
        size_t bytes = sizes[c], n = (bytes + PSZ - 1) / PSZ;
        npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
        unsigned char *a = npl_alloc_array(&s, cyc, 0);
        if (!a) {
            CHECK(0, "base-page array: %s", npl_last_error());
            continue;
        }
        fill(a, bytes, (unsigned)c);
        int *want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = skew(i / PER);
        keep(c ? "base-page array (10 MiB + 37 pages) -> skew_mapp NPL_F_THP"
               : "base-page array (6 MiB + 300) -> skew_mapp NPL_F_THP",
             a, bytes, want, checksum(a, bytes), 1, NULL, npl_apply(a, sk, NPL_F_THP));
    }

    /* 3. a fresh THP array, cyclic over 2 MiB units, its last frame partly used */
    size_t bytes = 5 * MIB + 100, n = (bytes + PSZ - 1) / PSZ;
    npl_shape s1 = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    unsigned char *a = npl_alloc_array(&s1, cyc, NPL_F_THP);
    int *want;
    if (a) {
        fill(a, bytes, 3);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = cyclic(i / PER);
        keep("THP array cyclic", a, bytes, want, checksum(a, bytes), 1, NULL, 0);
        cases[ncases - 1].huge_frames = 3; /* one node each: huge (its tail too) */
    }

    /* 4. a THP array re-placed skew_mapp page by page */
    bytes = 6 * MIB + 300, n = (bytes + PSZ - 1) / PSZ;
    npl_shape s2 = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    if ((a = npl_alloc_array(&s2, cyc, NPL_F_THP))) {
        fill(a, bytes, 4);
        uint64_t sum = checksum(a, bytes);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = skew(i);
        keep("THP array -> skew_mapp page by page", a, bytes, want, sum, 1, NULL,
             npl_apply(a, sk, 0));
    }

    /* 5. a 2D THP array (96 rows of 64 KiB): rows 40-59 migrated to the last node, rows 70-79
     * re-placed skew_mapp page by page: both parts cut 2 MiB frames */
    size_t nrows = 96, ub = 64 * 1024, lo, hi;
    bytes = nrows * ub, n = bytes / PSZ;
    npl_shape s3 = {8, 2, {nrows, ub / 8, 0}, NPL_ROW_MAJOR};
    if ((a = npl_alloc_array(&s3, cyc, NPL_F_THP))) {
        fill(a, bytes, 5);
        uint64_t sum = checksum(a, bytes);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = cyclic(i / PER);
        struct npl_migrate_result r;
        int rc = npl_migrate_units(a, 40, 20, N - 1, &r);
        rows(40, 20, ub, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            want[i] = N - 1;
        if (rc == 0)
            rc = npl_apply_part(a, 70, 10, sk, 0);
        rows(70, 10, ub, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            want[i] = skew(i - lo);
        keep("THP array: rows migrated and re-placed page by page", a, bytes, want, sum, 1, NULL,
             rc);
    }

    /* 6. a THP array, rows 40-59 re-placed on the last node with NPL_F_THP */
    if ((a = npl_alloc_array(&s3, cyc, NPL_F_THP))) {
        fill(a, bytes, 6);
        uint64_t sum = checksum(a, bytes);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = cyclic(i / PER);
        int rc = npl_apply_part(a, 40, 20, onlast, NPL_F_THP);
        rows(40, 20, ub, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            want[i] = N - 1;
        keep("THP array: rows re-placed with NPL_F_THP", a, bytes, want, sum, 1, NULL, rc);
    }

    /* 7. a THP array migrated cyclic page by page (the range form: the array's own record still
     * says skew_mapp, so npl_check does not apply) */
    if ((a = npl_alloc_array(&s3, sk, NPL_F_THP))) {
        fill(a, bytes, 7);
        uint64_t sum = checksum(a, bytes);
        struct npl_migrate_result r = {0};
        int rc = npl_migrate_range_policy(a, bytes, cyc, NULL, &r);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = cyclic(i);
        CHECK(rc != 0 || r.failed == 0, "THP array migrated page by page: %zu pages failed",
              r.failed);
        keep("THP array migrated cyclic page by page", a, bytes, want, sum, 0, NULL, rc);
    }

    /* 8. raw memory holding huge pages: pages 300-999 placed cyclic page by page */
    bytes = 8 * MIB, n = bytes / PSZ;
    unsigned char *b = aligned_alloc(HUGE, bytes);
    if (b) {
        madvise(b, bytes, MADV_HUGEPAGE);
        fill(b, bytes, 8);
        uint64_t sum = checksum(b, bytes);
        /* the pages outside stay where the first touch put them (each frame where the writing
         * thread ran then) */
        want = alloc_want(bytes);
        void **pages = malloc(n * sizeof *pages);
        for (size_t i = 0; i < n; i++)
            pages[i] = b + i * PSZ;
        syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, want, 0);
        free(pages);
        for (size_t i = 300; i < 1000; i++)
            want[i] = cyclic(i - 300);
        keep("raw THP memory, pages 300-999 placed cyclic", b, bytes, want, sum, 0, b,
             npl_place_range(b + 300 * PSZ, 700 * PSZ, cyc, NULL, 0));
    }

    /* 9. raw memory 4 KiB past a 2 MiB boundary placed cyclic with NPL_F_THP */
    bytes = 6 * MIB + 5 * PSZ, n = bytes / PSZ;
    unsigned char *c = aligned_alloc(HUGE, bytes + HUGE);
    if (c) {
        unsigned char *r = c + PSZ;
        fill(r, bytes, 9);
        uint64_t sum = checksum(r, bytes);
        want = alloc_want(bytes);
        for (size_t i = 0; i < n; i++)
            want[i] = cyclic(i / PER);
        keep("raw range off the 2 MiB frames, cyclic NPL_F_THP", r, bytes, want, sum, 0, c,
             npl_place_range(r, bytes, cyc, NULL, NPL_F_THP));
    }
    npl_policy_free(cyc);
    npl_policy_free(sk);
    npl_policy_free(onlast);
}

/* The control: raw memory, THP-eligible, whose frames hold base pages of two nodes (odd pages on
 * node 1). khugepaged must collapse them: then each frame's pages are on one node. */
#define CONTROL_FRAMES 2
static unsigned char *control;
static void make_control(void)
{
    size_t bytes = CONTROL_FRAMES * HUGE, n = bytes / PSZ;
    control = aligned_alloc(HUGE, bytes);
    madvise(control, bytes, MADV_NOHUGEPAGE); /* base pages first */
    memset(control, 1, bytes);
    void **pages = malloc(n * sizeof *pages);
    int *to = malloc(n * sizeof *to), *st = malloc(n * sizeof *st);
    for (size_t i = 0; i < n; i++) {
        pages[i] = control + i * PSZ;
        to[i] = (int)(i % 2);
    }
    long rc = syscall(SYS_move_pages, 0, (unsigned long)n, pages, to, st, 1 << 1);
    memset(control, 2, bytes); /* young again after the move */
    madvise(control, bytes, MADV_HUGEPAGE);
    CHECK(rc == 0, "control: pages spread over nodes 0 and 1 (%ld: %s)", rc, strerror(errno));
    free(pages);
    free(to);
    free(st);
}

/* frames of the control whose 512 pages are all on one node */
static int control_collapsed(void)
{
    int whole = 0;
    for (int f = 0; f < CONTROL_FRAMES; f++) {
        int *want = malloc(PER * sizeof *want), first = -1;
        void *p = control + (size_t)f * HUGE;
        syscall(SYS_move_pages, 0, 1UL, &p, NULL, &first, 0);
        for (size_t i = 0; i < PER; i++)
            want[i] = first;
        whole += first >= 0 && off_map("control", control + (size_t)f * HUGE, HUGE, want) == 0;
        free(want);
    }
    return whole;
}

static int one_run(void)
{
    ncases = 0;
    placed_bad = 0;
    long collapsed0 = kh_read("pages_collapsed");
    make_control();
    make_cases();
    long scans = kh_wait(SCANS);
    long collapsed = kh_read("pages_collapsed") - collapsed0;
    CHECK(scans >= SCANS, "khugepaged finished %ld full scans within %d s (want %d)", scans,
          WAIT_SECONDS, SCANS);
    int whole = control_collapsed();
    CHECK(whole == CONTROL_FRAMES && collapsed >= CONTROL_FRAMES,
          "control: khugepaged collapsed %d of %d mixed frames (%ld huge pages made meanwhile)",
          whole, CONTROL_FRAMES, collapsed);
    size_t after_bad = 0, pages = 0;
    for (int i = 0; i < ncases; i++) {
        struct kcase *k = &cases[i];
        size_t n = (k->bytes + PSZ - 1) / PSZ, bad = off_map(k->what, k->a, k->bytes, k->want);
        after_bad += bad;
        pages += n;
        CHECK(bad == 0 && checksum(k->a, k->bytes) == k->sum,
              "%s: after %ld full scans: %zu of %zu pages off the map", k->what, scans, bad, n);
        struct npl_check c = {0};
        int rc = k->array ? npl_check(k->a, &c) : 0;
        if (k->array)
            CHECK(rc == 0 && c.placed == n && c.misplaced == 0,
                  "%s: npl_check after the scans: %zu of %zu placed (%s)", k->what, c.placed, n,
                  rc ? npl_last_error() : "");
    }
    for (int i = 0; i < ncases; i++) {
        struct kcase *k = &cases[i];
        size_t huge[64] = {0}, base[64] = {0}, absent = 0, on = 0, total = 0;
        if (!k->huge_frames)
            continue;
        int rc = npl_histogram_huge(k->a, (size_t)k->huge_frames * HUGE, huge, base, &absent);
        for (int f = 0; f < k->huge_frames; f++)
            on += huge[cyclic((size_t)f)] > 0;
        for (int j = 0; j < N; j++)
            total += huge[j];
        CHECK(rc == 0 && total == (size_t)k->huge_frames && on == (size_t)k->huge_frames,
              "%s: its %d frames of one node each are huge pages on their nodes (%zu huge)",
              k->what, k->huge_frames, total);
    }
    printf("  khugepaged: %ld full scans, %ld huge pages collapsed; pages off the map: %zu right "
           "after placement, %zu after the scans (of %zu in %d cases)\n",
           scans, collapsed, placed_bad, after_bad, pages, ncases);
    for (int i = 0; i < ncases; i++) {
        if (cases[i].block)
            free(cases[i].block);
        else
            npl_free(cases[i].a);
        free(cases[i].want);
    }
    free(control);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int k = 0, runs = 1;
    PSZ = (size_t)sysconf(_SC_PAGESIZE);
    PER = HUGE / PSZ;
    guest_args(argc, argv, &N, &k);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[++i]);
    if (N < 2 || !npl_topo_self() || npl_topo_node_count(npl_topo_self(), 0) != N) {
        printf("usage: guest_khugepaged --nodes N --cpus-per-node K (in a guest of N >= 2 "
               "nodes)\n");
        return 120;
    }
    char mode[64] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    saved_scan = kh_read("scan_sleep_millisecs");
    saved_alloc = kh_read("alloc_sleep_millisecs");
    atexit(kh_restore);
    /* THP must be "always" or "madvise" (the guest's mode is always) and khugepaged's knobs
     * writable: otherwise nothing can be tested, a skip (a failure under CI=true) */
    mode[strcspn(mode, "\n")] = 0;
    if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]")) {
        SKIP("thp-never", "khugepaged's collapses: THP is %s in this guest", mode);
        return check_summary("guest_khugepaged");
    }
    if (kh_write("scan_sleep_millisecs", 1) != 0 || kh_write("alloc_sleep_millisecs", 1) != 0) {
        SKIP("khugepaged-knobs", "khugepaged's collapses: cannot set it to scan every "
             "millisecond: %s", strerror(errno));
        return check_summary("guest_khugepaged");
    }
    numa_balancing_off();
    printf("guest_khugepaged: %d nodes, THP %s\n", N, mode);
    for (int r = 0; r < runs && t_fail == 0; r++)
        one_run();
    return check_summary("guest_khugepaged");
}
