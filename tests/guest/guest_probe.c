/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_probe - page-exact probes of the public API INSIDE the multi-node guest:
 *
 *   guest_probe --nodes N --cpus-per-node K
 *
 * Every policy over odd shapes (1 byte, 1 page, sizes that are no page multiple, 2D arrays whose
 * rows are no page multiple or smaller than a page, column-major, 3D), odd node lists (out of
 * order, one node, @local), block sizes in pages, in units and from a thread schedule. For each
 * array the node of *every* page is compared with (a) the library's pure map (npl_policy_map),
 * (b) an independent formula written here from the documentation where one is simple, and
 * against two readings of reality: npl_query_pages and the raw move_pages(2) system call.
 * Then: a policy change on a sub-range while a thread writes, migrations of pages, rows and
 * columns, free and re-allocate, THP arrays (2 MiB units) and hugetlb arrays with full and
 * empty pools. Exact tests: the guest boots with NUMA balancing off (tools/numavm). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define HUGE ((size_t)2 << 20)
#define NO_FORMULA (-2)

static int N, K;
static size_t PSZ;

/* ---- reality, read two ways ---- */

/* Node of each page of [a, a+bytes) by the raw move_pages(2) system call (not the library). */
static int raw_nodes(const void *a, size_t bytes, int *out)
{
    size_t n = (bytes + PSZ - 1) / PSZ;
    void **pages = malloc(n * sizeof *pages);
    for (size_t i = 0; i < n; i++)
        pages[i] = (char *)a + i * PSZ;
    long rc = syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, out, 0);
    free(pages);
    return rc == 0 ? 0 : -1;
}

/* Compare every page with want[]: by the library's query and by the raw call. Returns the pages
 * wrong by either reading; prints the first one. */
static size_t compare(const char *what, const void *a, size_t bytes, const int *want)
{
    size_t n = (bytes + PSZ - 1) / PSZ, bad = 0;
    int *lib = malloc(n * sizeof *lib), *raw = malloc(n * sizeof *raw);
    int q = npl_query_pages(a, bytes, lib, n), r = raw_nodes(a, bytes, raw);
    if (q != (int)n || r != 0) {
        printf("  %s: query %d (%s), raw move_pages %d\n", what, q, npl_last_error(), r);
        bad = n;
    }
    for (size_t i = 0; !bad && i < n; i++)
        if (lib[i] != want[i] || raw[i] != want[i]) {
            if (!bad)
                printf("  %s: page %zu of %zu: want node %d, query says %d, move_pages %d\n",
                       what, i, n, want[i], lib[i], raw[i]);
            bad++;
        }
    free(lib);
    free(raw);
    return bad;
}

/* Base pages of [a, a+bytes) that belong to a transparent huge page, read without the library:
 * /proc/self/pagemap's frame numbers and the THP bit of /proc/kpageflags (root, as in the
 * guest). -1 if they cannot be read. */
static long thp_pages(const void *a, size_t bytes)
{
    int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
    long n = pm < 0 || kf < 0 ? -1 : 0;
    for (size_t off = 0; n >= 0 && off < bytes; off += PSZ) {
        uint64_t e = 0, fl = 0, v = ((uintptr_t)a + off) / PSZ;
        if (pread(pm, &e, 8, (off_t)(v * 8)) != 8)
            n = -1;
        else if (e >> 63) { /* present: bits 0-54 are the frame (0 when hidden: not root) */
            uint64_t pfn = e & ((1ull << 55) - 1);
            if (!pfn || pread(kf, &fl, 8, (off_t)(pfn * 8)) != 8)
                n = -1;
            else
                n += (long)(fl >> 22 & 1); /* KPF_THP */
        }
    }
    if (pm >= 0)
        close(pm);
    if (kf >= 0)
        close(kf);
    return n;
}

static int thp_never(void)
{
    char m[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f && !fgets(m, sizeof m, f))
        m[0] = 0;
    if (f)
        fclose(f);
    return strstr(m, "[never]") != NULL;
}

/* An NPL_F_THP array must have huge pages: at least one 2 MiB page formed (512 base pages) */
static void thp_formed(const char *label, const void *a, size_t bytes)
{
    if (thp_never()) {
        SKIP("thp-never", "%s: no huge page can form, THP is \"never\" in this guest", label);
        return;
    }
    long t = thp_pages(a, bytes);
    printf("  %s: %ld of %zu base pages in transparent huge pages\n", label, t,
           (bytes + PSZ - 1) / PSZ);
    CHECK(t >= 512, "%s: a transparent huge page formed (%ld of its %zu base pages are in THPs)",
          label, t, (bytes + PSZ - 1) / PSZ);
}

/* ---- independent formulas (from include/numaplace.h and docs/DESIGN.md, not the library) ---- */

struct geo {
    size_t nunits, unit_bytes; /* the distribution unit: outer slab (1D npl_alloc: a byte) */
};

static struct geo geo_of(const npl_shape *s, size_t bytes)
{
    struct geo g = {bytes, 1};
    if (s) {
        g.nunits = s->dims[s->order == NPL_ROW_MAJOR ? 0 : s->ndims - 1];
        g.unit_bytes = bytes / g.nunits;
    }
    return g;
}

/* unit holding the first byte of page i */
static size_t unit_of(struct geo g, size_t i, size_t psz)
{
    size_t u = i * psz / g.unit_bytes;
    return u < g.nunits ? u : g.nunits - 1;
}

/* OpenMP static schedule: owner of unit u of n units among T threads */
static size_t owner(size_t u, size_t n, size_t T)
{
    size_t q = n / T, r = n % T;
    if (q == 0)
        return u;
    return u < r * (q + 1) ? u / (q + 1) : r + (u - r * (q + 1)) / q;
}

/* node of thread t pinned compact: CPU t (K per node, nodes in order), wrapping */
static int compact_node(size_t t) { return (int)((t % (size_t)(N * K)) / (size_t)K); }

/* The documented map for the few policies whose formula is short; NO_FORMULA for the others.
 * nodes: the policy's node list (OS ids, order kept); T: threads of bind_block. */
static int formula(const char *pol, const int *nodes, int m, struct geo g, size_t i, size_t psz)
{
    size_t M = (size_t)m, k;
    if (!strncmp(pol, "cyclic_block:units=", 19)) {
        k = (size_t)atol(pol + 19);
        return nodes[unit_of(g, i, psz) / k % M];
    }
    if (!strncmp(pol, "cyclic_block:pages=", 19))
        return nodes[i / (size_t)atol(pol + 19) % M];
    if (!strncmp(pol, "cyclic_block:threads=", 21)) { /* block = thread of the schedule */
        size_t T = (size_t)atol(pol + 21);
        return nodes[owner(unit_of(g, i, psz), g.nunits, T) % M];
    }
    if (!strncmp(pol, "bind_block:threads=", 19)) {
        size_t T = (size_t)atol(pol + 19);
        return compact_node(owner(unit_of(g, i, psz), g.nunits, T) % T);
    }
    size_t cores = (size_t)(N * K);
    if (!strcmp(pol, "bind_block")) /* default: one thread per allowed core, compact */
        return compact_node(owner(unit_of(g, i, psz), g.nunits, cores));
    if (!strcmp(pol, "bind_block:pin=scatter")) /* scatter: thread t on node t mod N */
        return (int)(owner(unit_of(g, i, psz), g.nunits, cores) % (size_t)N);
    if (!strncmp(pol, "prime_mapp", 10)) {
        size_t P = pol[10] == ':' ? (size_t)atol(pol + 11) : 0, v;
        if (!P) /* the smallest prime above M */
            for (P = M + 1;; P++) {
                size_t d = 2;
                while (d * d <= P && P % d)
                    d++;
                if (d * d > P)
                    break;
            }
        v = i % P;
        return v < M ? nodes[v] : nodes[((i / P) * (P - M) + v - M) % M];
    }
    if (!strncmp(pol, "weighted:", 9)) { /* weighted:A=wa,B=wb: runs of wa pages on A, wb on B */
        int a, wa, b, wb;
        if (sscanf(pol + 9, "%d=%d,%d=%d", &a, &wa, &b, &wb) != 4)
            return NO_FORMULA;
        return i % (size_t)(wa + wb) < (size_t)wa ? a : b;
    }
    if (!strncmp(pol, "cyclic", 6) && (pol[6] == 0 || pol[6] == '@'))
        return nodes[i % M];
    if (!strcmp(pol, "skew_mapp"))
        return nodes[(i + i / M + 1) % M];
    if (!strncmp(pol, "bind_all", 8))
        return nodes[0];
    return NO_FORMULA;
}

/* ---- one array, every page ---- */

/* nodes of a policy string as this guest resolves them (via a plan: the library) */
static int plan_nodes(const npl_policy *p, const npl_topo *t, int *nodes, int max)
{
    npl_plan *pl;
    if (npl_plan_create(&pl, p, t ? t : npl_topo_self(), 0) < 0)
        return -1;
    int m = npl_plan_node_count(pl);
    for (int i = 0; i < m && i < max; i++)
        nodes[i] = npl_plan_node(pl, i);
    npl_plan_free(pl);
    return m;
}

/* Expected nodes of a's pages: the library's map, checked against the formula where there is
 * one. page: the map's page size (2 MiB for THP/hugetlb; every 4 KiB page inside follows). */
static int *expected(const char *label, const char *str, const npl_policy *p,
                     const npl_shape *s, size_t bytes, size_t page)
{
    size_t n = (bytes + PSZ - 1) / PSZ, per = page / PSZ, np = (bytes + page - 1) / page;
    int *map = malloc(np * sizeof *map), *want = malloc(n * sizeof *want), nodes[64];
    int rc = npl_policy_map(p, NULL, s, bytes, page, 0, np, map);
    CHECK(rc == 0, "%s: npl_policy_map: %s", label, npl_last_error());
    int m = plan_nodes(p, NULL, nodes, 64);
    size_t off = 0;
    struct geo g = geo_of(s, bytes);
    for (size_t i = 0; rc == 0 && m > 0 && i < np; i++) {
        int f = formula(str, nodes, m, g, i, page);
        if (f != NO_FORMULA && f != map[i] && !off++)
            printf("  %s: map page %zu: library %d, documented formula %d\n", label, i, map[i], f);
    }
    CHECK(off == 0, "%s: the library's map follows the documented formula (%zu pages differ)",
          label, off);
    for (size_t i = 0; i < n; i++)
        want[i] = rc == 0 ? map[i / per] : -100;
    free(map);
    return want;
}

/* first touch by a thread pinned on the last node's first CPU (an unpinned one can move) */
struct toucher {
    unsigned char *a;
    size_t bytes;
    int node;
};
static void *touch_pinned(void *arg)
{
    struct toucher *t = arg;
    npl_pin_self("compact", (N - 1) * K);
    memset(t->a, 1, t->bytes);
    npl_where_am_i(NULL, &t->node);
    return NULL;
}

/* Allocate under str with shape s (NULL: npl_alloc of bytes), then compare every page. */
static void probe(const char *str, const npl_shape *s, size_t bytes, unsigned flags)
{
    char label[160];
    snprintf(label, sizeof label, "%s on %zu bytes%s%s", str, bytes, s ? " (shaped)" : "",
             flags & NPL_F_THP ? " THP" : "");
    npl_policy *p = pol(str);
    unsigned char *a = s ? npl_alloc_array(s, p, flags) : npl_alloc(bytes, p);
    CHECK(a != NULL, "%s: allocation: %s", label, npl_last_error());
    if (a) {
        size_t n = (bytes + PSZ - 1) / PSZ;
        int *want = expected(label, str, p, s, bytes, flags & NPL_F_THP ? HUGE : PSZ);
        int ft = npl_policy_get_kind(p) == NPL_FIRST_TOUCH;
        if (ft) { /* first touch: nothing faulted in by the library; the writer's node after */
            struct toucher t = {a, bytes, -1};
            pthread_t th;
            pthread_create(&th, NULL, touch_pinned, &t);
            pthread_join(th, NULL);
            for (size_t i = 0; i < n; i++)
                want[i] = t.node;
        }
        CHECK(compare(label, a, bytes, want) == 0, "%s: every one of %zu pages on its node",
              label, n);
        if (flags & NPL_F_THP)
            thp_formed(label, a, bytes);
        size_t counts[64] = {0}, absent = 1, per[64] = {0};
        for (size_t i = 0; i < n; i++)
            per[want[i] >= 0 && want[i] < 64 ? want[i] : 63]++;
        int hist = npl_histogram(a, bytes, counts, &absent) == 0 && absent == 0;
        for (int k = 0; k < N; k++)
            hist &= counts[k] == per[k];
        CHECK(hist, "%s: npl_histogram counts the map's pages per node", label);
        struct npl_array_info info = {0};
        CHECK(ft || (npl_array_info(a, &info) == 0 && info.last.pages == n &&
                     info.last.placed == n && info.last.misplaced == 0),
              "%s: the placement's own report: %zu pages, %zu placed, %zu misplaced", label,
              info.last.pages, info.last.placed, info.last.misplaced);
        struct npl_check c = {0};
        CHECK(npl_check(a, &c) == 0 && c.pages == n && c.placed == n,
              "%s: npl_check: %zu pages, %zu placed, %zu misplaced, %zu absent", label, c.pages,
              c.placed, c.misplaced, c.absent);
        free(want);
    }
    CHECK(npl_free(a) == 0, "%s: npl_free", label);
    npl_policy_free(p);
}

static void test_shapes(void)
{
    char last_first[64], out_of_order[64], single[64], weighted[64], sched[64], bb[64];
    char bbsub[64];
    int last = N - 1;
    snprintf(last_first, sizeof last_first, "bind_all:%d,0", last);
    snprintf(out_of_order, sizeof out_of_order, "cyclic@%d,0", last);
    snprintf(single, sizeof single, "cyclic@%d", last);
    snprintf(weighted, sizeof weighted, "weighted:%d=2,0=1", last);
    snprintf(sched, sizeof sched, "cyclic_block:threads=%d", N + 1);
    snprintf(bb, sizeof bb, "bind_block:threads=%d", 2 * N + 1);
    snprintf(bbsub, sizeof bbsub, "bind_block@%d,0", N - 1);
    const char *pols[] = {"bind_all", last_first, "bind_block", bb, "bind_block:pin=scatter",
                          "cyclic", "cyclic_block:pages=2", "cyclic_block:units=3", sched,
                          "skew_mapp", "prime_mapp", "prime_mapp:7", "random:seed=5",
                          "random_block:units=2,seed=3", weighted, out_of_order, single,
                          "cyclic@local", "bind_block@local", bbsub, "first_touch", NULL};
    const npl_shape shapes[] = {
        {1, 1, {1, 0, 0}, NPL_ROW_MAJOR},                     /* 1 byte */
        {1, 1, {PSZ, 0, 0}, NPL_ROW_MAJOR},                   /* 1 page */
        {1, 1, {7 * PSZ + 123, 0, 0}, NPL_ROW_MAJOR},         /* not a page multiple */
        {8, 2, {29, 625, 0}, NPL_ROW_MAJOR},                  /* rows of 5000 bytes */
        {8, 2, {100, 24, 0}, NPL_ROW_MAJOR},                  /* rows of 192 bytes */
        {8, 2, {300, 17, 0}, NPL_COL_MAJOR},                  /* 17 columns of 2400 bytes */
        {4, 3, {5, 3, 700}, NPL_ROW_MAJOR},                   /* 5 planes of 8400 bytes */
        {4, 3, {700, 3, 5}, NPL_COL_MAJOR},                   /* the same in Fortran order */
    };
    for (int i = 0; pols[i]; i++) {
        if (N > 7 && !strcmp(pols[i], "prime_mapp:7")) /* P must be >= the nodes */
            continue;
        probe(pols[i], NULL, 5 * PSZ + 1, 0); /* npl_alloc: 1D, 1-byte units */
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            size_t bytes;
            npl_shape_bytes(&shapes[k], &bytes);
            probe(pols[i], &shapes[k], bytes, 0);
        }
    }
}

static void fill(unsigned char *a, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        a[i] = (unsigned char)(i * 131 + 17);
}

/* ---- a sub-range re-placed while a thread writes the array ---- */

struct writer {
    uint64_t *a;
    size_t n, passes, pos;
    volatile int stop;
};

/* a[i]++ over the array, pass after pass: a lost write shows as an element one pass behind */
static void *write_loop(void *arg)
{
    struct writer *w = arg;
    for (w->passes = 0; !w->stop; w->passes++)
        for (w->pos = 0; w->pos < w->n; w->pos++)
            __atomic_store_n(&w->a[w->pos], w->a[w->pos] + 1, __ATOMIC_RELAXED);
    return NULL;
}

/* pages [lo, hi) of units [u0, u0+nu) of units of ub bytes: a page goes with its first byte */
static void part_span(size_t u0, size_t nu, size_t ub, size_t *lo, size_t *hi)
{
    *lo = (u0 * ub + PSZ - 1) / PSZ;
    *hi = ((u0 + nu) * ub + PSZ - 1) / PSZ;
}

static void test_part_while_writing(void)
{
    const size_t rows = 64, cols = 750, ub = cols * 8, bytes = rows * ub;
    const size_t n = (bytes + PSZ - 1) / PSZ;
    npl_shape s = {8, 2, {rows, cols, 0}, NPL_ROW_MAJOR};
    npl_policy *cyc = pol("cyclic"), *blk = pol("cyclic_block:units=2");
    char str[32];
    snprintf(str, sizeof str, "bind_all:%d", N - 1);
    npl_policy *last = pol(str);
    struct writer w = {.a = npl_alloc_array(&s, cyc, 0), .n = rows * cols};
    CHECK(w.a != NULL, "2D array for the part test: %s", npl_last_error());
    if (!w.a)
        goto out;
    pthread_t th;
    pthread_create(&th, NULL, write_loop, &w);
    while (__atomic_load_n(&w.passes, __ATOMIC_RELAXED) < 1)
        sched_yield();
    int r1 = npl_apply_part(w.a, 10, 23, blk, 0);
    int r2 = npl_apply_part(w.a, 40, 5, last, 0);
    w.stop = 1;
    pthread_join(th, NULL);
    CHECK(r1 == 0 && r2 == 0, "apply_part rows 10-32 cyclic_block:units=2, rows 40-44 %s while "
          "a thread writes: %d %d (%s)", str, r1, r2, npl_last_error());
    size_t lost = 0; /* the writer ends after a whole pass */
    for (size_t i = 0; i < w.n; i++)
        lost += w.a[i] != w.passes;
    CHECK(lost == 0, "no write lost while the parts moved (%zu elements behind)", lost);
    int *want = malloc(n * sizeof *want);
    size_t lo1, hi1, lo2, hi2;
    part_span(10, 23, ub, &lo1, &hi1);
    part_span(40, 5, ub, &lo2, &hi2);
    for (size_t i = 0; i < n; i++) { /* the part's map counts from its first page and row */
        want[i] = (int)(i % (size_t)N);
        if (i >= lo1 && i < hi1)
            want[i] = (int)(((i * PSZ / ub) - 10) / 2 % (size_t)N);
        if (i >= lo2 && i < hi2)
            want[i] = N - 1;
    }
    CHECK(compare("parts", w.a, bytes, want) == 0, "composed parts: every page on its node");
    struct npl_check c = {0};
    CHECK(npl_check(w.a, &c) == 0 && c.placed == n, "composed parts: npl_check %zu of %zu placed",
          c.placed, n);
    /* the whole array re-placed while the thread writes again */
    npl_policy *skew = pol("skew_mapp");
    w.stop = 0;
    uint64_t before = w.passes;
    pthread_create(&th, NULL, write_loop, &w);
    while (__atomic_load_n(&w.passes, __ATOMIC_RELAXED) < 1)
        sched_yield();
    r1 = npl_apply(w.a, skew, 0);
    w.stop = 1;
    pthread_join(th, NULL);
    lost = 0;
    for (size_t i = 0; i < w.n; i++)
        lost += w.a[i] != before + w.passes;
    free(want);
    want = expected("whole while writing", "skew_mapp", skew, &s, bytes, PSZ);
    CHECK(r1 == 0 && lost == 0 && compare("whole while writing", w.a, bytes, want) == 0,
          "npl_apply skew_mapp while a thread writes: rc %d, %zu elements behind, pages exact",
          r1, lost);
    npl_policy_free(skew);
    free(want);
    npl_free(w.a);
out:
    npl_policy_free(cyc);
    npl_policy_free(blk);
    npl_policy_free(last);
}

/* A part that holds no page start (rows smaller than a page) is a valid part with nothing to
 * place; a bind_block part is scheduled over the part's own rows. */
static void test_part_edges(void)
{
    npl_shape s = {8, 2, {100, 24, 0}, NPL_ROW_MAJOR}; /* rows of 192 bytes */
    size_t bytes = 100 * 192, n = (bytes + PSZ - 1) / PSZ;
    npl_policy *cyc = pol("cyclic"), *last;
    char str[64];
    snprintf(str, sizeof str, "bind_all:%d", N - 1);
    last = pol(str);
    unsigned char *a = npl_alloc_array(&s, cyc, 0);
    CHECK(a && npl_apply_part(a, 3, 1, last, 0) == 0,
          "apply_part of one 192-byte row that holds no page start: 0 (%s)", npl_last_error());
    int *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i % (size_t)N);
    CHECK(a && compare("empty part", a, bytes, want) == 0, "empty part: nothing moved");
    struct npl_migrate_result r;
    CHECK(a && npl_migrate_units(a, 3, 1, N - 1, &r) == 0 && r.moved == 0,
          "migrate_units of a row that holds no page start: 0, nothing moved (%s)",
          npl_last_error());
    npl_free(a);
    /* bind_block over rows 7..56 of 64 rows of 6000 bytes: threads=2 get 25 rows each */
    npl_shape s2 = {8, 2, {64, 750, 0}, NPL_ROW_MAJOR};
    bytes = 64 * 6000;
    n = (bytes + PSZ - 1) / PSZ;
    npl_policy *bb = pol("bind_block:threads=2");
    a = npl_alloc_array(&s2, cyc, 0);
    CHECK(a && npl_apply_part(a, 7, 50, bb, 0) == 0, "bind_block:threads=2 on rows 7-56: %s",
          npl_last_error());
    want = realloc(want, n * sizeof *want);
    size_t lo, hi;
    part_span(7, 50, 6000, &lo, &hi);
    for (size_t i = 0; i < n; i++)
        want[i] = i >= lo && i < hi ? compact_node((i * PSZ / 6000 - 7) / 25)
                                    : (int)(i % (size_t)N);
    CHECK(a && compare("bind_block part", a, bytes, want) == 0,
          "bind_block part: rows 7-31 on thread 0's node, 32-56 on thread 1's");
    struct npl_check c = {0};
    CHECK(a && npl_check(a, &c) == 0 && c.placed == n, "bind_block part: npl_check %zu/%zu",
          c.placed, n);
    npl_free(a);
    /* columns 3..14 of a column-major array (17 columns of 2400 bytes), 2 columns a block */
    npl_shape s3 = {8, 2, {300, 17, 0}, NPL_COL_MAJOR};
    bytes = 17 * 2400;
    n = (bytes + PSZ - 1) / PSZ;
    npl_policy *blk = pol("cyclic_block:units=2");
    a = npl_alloc_array(&s3, cyc, 0);
    CHECK(a && npl_apply_part(a, 3, 12, blk, 0) == 0, "cyclic_block:units=2 on columns 3-14: %s",
          npl_last_error());
    part_span(3, 12, 2400, &lo, &hi);
    for (size_t i = 0; i < n; i++)
        want[i] = i >= lo && i < hi ? (int)((i * PSZ / 2400 - 3) / 2 % (size_t)N)
                                    : (int)(i % (size_t)N);
    CHECK(a && compare("column part", a, bytes, want) == 0,
          "column part: blocks of 2 columns counted from column 3");
    CHECK(a && npl_check(a, &c) == 0 && c.placed == n, "column part: npl_check %zu/%zu", c.placed,
          n);
    npl_free(a);
    npl_policy_free(blk);
    free(want);
    npl_policy_free(bb);
    npl_policy_free(cyc);
    npl_policy_free(last);
}

/* Re-placements that change the unit: a THP array re-placed page by page, a base-page array
 * re-placed with NPL_F_THP or NPL_F_HUGETLB; a raw malloc'ed range with a shape. */
static void test_replace_units(void)
{
    size_t bytes = 6 * MIB + 300, n = (bytes + PSZ - 1) / PSZ;
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    npl_policy *cyc = pol("cyclic"), *skew = pol("skew_mapp");
    unsigned char *a = npl_alloc_array(&s, cyc, NPL_F_THP);
    fill(a, bytes);
    uint64_t sum = checksum(a, bytes);
    CHECK(a && npl_apply(a, skew, 0) == 0, "THP array re-placed page by page: %s",
          npl_last_error());
    int *want = expected("THP->4K", "skew_mapp", skew, &s, bytes, PSZ);
    CHECK(a && compare("THP->4K", a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "THP array re-placed skew_mapp: every 4 KiB page exact, data intact");
    free(want);
    npl_free(a);
    const unsigned flags[] = {NPL_F_THP, NPL_F_HUGETLB};
    for (int f = 0; f < 2; f++) {
        a = npl_alloc_array(&s, cyc, 0);
        fill(a, bytes);
        int rc = a ? npl_apply(a, skew, flags[f]) : -1;
        struct npl_array_info info = {0};
        npl_array_info(a, &info);
        CHECK(rc == 0 && info.hugetlb == 0, "base-page array re-placed with %s: %d (%s)",
              f ? "NPL_F_HUGETLB" : "NPL_F_THP", rc, npl_last_error());
        want = expected("re-placed", "skew_mapp", skew, &s, bytes, f ? PSZ : HUGE);
        if (rc == 0) {
            size_t bad = compare(f ? "4K+HUGETLB flag" : "4K+THP flag", a, bytes, want);
            struct npl_check c = {0};
            CHECK(bad == 0 && checksum(a, bytes) == sum, "%s: %zu of %zu pages off the map",
                  f ? "NPL_F_HUGETLB on base pages (kept 4 KiB)" : "NPL_F_THP re-placement",
                  bad, n);
            CHECK(npl_check(a, &c) == 0 && c.placed == n, "and npl_check agrees (%zu/%zu)",
                  c.placed, n);
        }
        free(want);
        npl_free(a);
    }
    /* a raw range (malloc'ed, written), a shape with rows of 5000 bytes, 3 row blocks */
    npl_shape rs = {8, 2, {40, 625, 0}, NPL_ROW_MAJOR};
    size_t rb = 40 * 5000;
    unsigned char *r = aligned_alloc(PSZ, (rb + PSZ - 1) / PSZ * PSZ);
    fill(r, rb);
    npl_policy *blk = pol("cyclic_block:units=3");
    CHECK(npl_place_range(r, rb, blk, &rs, 0) == 0, "place_range with a shape: %s",
          npl_last_error());
    want = expected("raw range", "cyclic_block:units=3", blk, &rs, rb, PSZ);
    CHECK(compare("raw range", r, rb, want) == 0, "raw range: every page on its row block's node");
    free(want);
    free(r);
    npl_policy_free(blk);
    npl_policy_free(cyc);
    npl_policy_free(skew);
}

/* ---- migrations: pages, rows, columns, a whole array ---- */

/* migrate units [u0, u0+nu) of an array of shape s (placed under str) to node `to`; check */
static void migrate_units_case(const char *str, npl_shape s, size_t u0, size_t nu, int to)
{
    size_t bytes;
    npl_shape_bytes(&s, &bytes);
    size_t n = (bytes + PSZ - 1) / PSZ;
    size_t ub = bytes / s.dims[s.order == NPL_ROW_MAJOR ? 0 : s.ndims - 1];
    npl_policy *p = pol(str);
    unsigned char *a = npl_alloc_array(&s, p, 0);
    int *want = expected(str, str, p, &s, bytes, PSZ);
    fill(a, bytes);
    uint64_t sum = checksum(a, bytes);
    struct npl_migrate_result r;
    int rc = npl_migrate_units(a, u0, nu, to, &r);
    size_t lo, hi;
    part_span(u0, nu, ub, &lo, &hi);
    size_t expect_moved = 0;
    for (size_t i = lo; i < hi && i < n; i++) {
        expect_moved += want[i] != to;
        want[i] = to;
    }
    CHECK(rc == 0 && r.moved == expect_moved && r.failed == 0,
          "%s: units %zu-%zu to node %d: rc %d, moved %zu (want %zu), failed %zu (%s)", str, u0,
          u0 + nu - 1, to, rc, r.moved, expect_moved, r.failed, npl_last_error());
    CHECK(compare(str, a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "%s: after migrating units %zu-%zu every page on its node, data intact", str, u0,
          u0 + nu - 1);
    struct npl_check c = {0};
    CHECK(npl_check(a, &c) == 0 && c.placed == n, "%s: npl_check after the migration: %zu/%zu",
          str, c.placed, n);
    CHECK(npl_migrate_array(a, 0, &r) == 0 && r.failed == 0, "%s: whole array to node 0", str);
    for (size_t i = 0; i < n; i++)
        want[i] = 0;
    CHECK(compare(str, a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "%s: whole array on node 0, data intact", str);
    free(want);
    npl_free(a);
    npl_policy_free(p);
}

static void test_migrations(void)
{
    /* pages of a raw part of an array */
    size_t n = 16, bytes = n * PSZ;
    npl_policy *p = pol("cyclic");
    unsigned char *a = npl_alloc(bytes, p);
    fill(a, bytes);
    uint64_t sum = checksum(a, bytes);
    struct npl_migrate_result r;
    int want[16];
    size_t expect_moved = 0;
    for (size_t i = 0; i < n; i++) {
        want[i] = (int)(i % (size_t)N);
        if (i >= 4 && i < 9) {
            expect_moved += want[i] != N - 1;
            want[i] = N - 1;
        }
    }
    CHECK(npl_migrate_range(a + 4 * PSZ, 5 * PSZ, N - 1, &r) == 0 && r.moved == expect_moved,
          "migrate pages 4-8 to node %d: moved %zu (want %zu)", N - 1, r.moved, expect_moved);
    CHECK(compare("pages", a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "pages 4-8 moved, the others stay, data intact");
    npl_free(a);
    npl_policy_free(p);
    /* the general form: a written range moved to where a policy with a shape says */
    npl_shape rs = {8, 2, {30, 625, 0}, NPL_ROW_MAJOR};
    size_t rb = 30 * 5000, rn = (rb + PSZ - 1) / PSZ;
    p = pol("cyclic");
    a = npl_alloc(rb, p);
    fill(a, rb);
    sum = checksum(a, rb);
    npl_policy *blk = pol("cyclic_block:units=4");
    int *w2 = expected("migrate policy", "cyclic_block:units=4", blk, &rs, rb, PSZ);
    size_t moved = 0;
    for (size_t i = 0; i < rn; i++)
        moved += w2[i] != (int)(i % (size_t)N);
    CHECK(npl_migrate_range_policy(a, rb, blk, &rs, &r) == 0 && r.moved == moved && r.failed == 0,
          "migrate_range_policy cyclic_block:units=4 over rows: moved %zu (want %zu)", r.moved,
          moved);
    CHECK(compare("migrate policy", a, rb, w2) == 0 && checksum(a, rb) == sum,
          "migrate_range_policy: every page on its row block's node, data intact");
    free(w2);
    npl_free(a);
    npl_policy_free(p);
    npl_policy_free(blk);
    migrate_units_case("skew_mapp", (npl_shape){8, 2, {20, 625, 0}, NPL_ROW_MAJOR}, 3, 6, 0);
    migrate_units_case("cyclic", (npl_shape){8, 2, {300, 17, 0}, NPL_COL_MAJOR}, 5, 4, N - 1);
    migrate_units_case("cyclic", (npl_shape){8, 2, {100, 24, 0}, NPL_ROW_MAJOR}, 30, 40, N - 1);
}

/* ---- free, re-allocate ---- */

static void test_free_realloc(void)
{
    npl_policy *p = pol("bind_all");
    for (int r = 0; r < 4; r++) {
        size_t bytes = (size_t)(r + 3) * PSZ + 7;
        unsigned char *a = npl_alloc(bytes, p);
        memset(a, 0x5a, bytes);
        CHECK(npl_free(a) == 0, "free %zu bytes", bytes);
        errno = 0;
        CHECK(npl_free(a) == -1 && errno == ENOENT, "a second free: ENOENT");
        probe(r % 2 ? "skew_mapp" : "cyclic", NULL, bytes, 0); /* likely the same address */
    }
    npl_policy_free(p);
}

/* ---- THP and hugetlb arrays ---- */

static int pool(int node, const char *file, int set)
{
    char path[160];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/%s",
             node, file);
    FILE *f = fopen(path, set >= 0 ? "w" : "r");
    int v = -1;
    if (f && set >= 0)
        v = fprintf(f, "%d", set) > 0 ? set : -1;
    else if (f && fscanf(f, "%d", &v) != 1)
        v = -1;
    if (f)
        fclose(f);
    return v;
}

/* a hugetlb array: every 4 KiB page on the node of its 2 MiB page's map entry */
static void probe_huge(const char *str, npl_shape s)
{
    size_t bytes;
    npl_shape_bytes(&s, &bytes);
    npl_policy *p = pol(str);
    char label[96];
    snprintf(label, sizeof label, "%s hugetlb %zu bytes", str, bytes);
    unsigned char *a = npl_alloc_array(&s, p, NPL_F_HUGETLB | NPL_F_STRICT);
    struct npl_array_info info = {0};
    CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 1,
          "%s: on hugetlb pages: %s", label, npl_last_error());
    if (a) {
        size_t n = (bytes + PSZ - 1) / PSZ;
        int *want = expected(label, str, p, &s, bytes, HUGE);
        CHECK(compare(label, a, bytes, want) == 0, "%s: every page on its node", label);
        struct npl_check c = {0};
        CHECK(npl_check(a, &c) == 0 && c.placed == n, "%s: npl_check %zu/%zu", label, c.placed, n);
        free(want);
        fill(a, bytes);
        uint64_t sum = checksum(a, bytes);
        npl_policy *q = pol("skew_mapp");
        CHECK(npl_apply(a, q, 0) == 0, "%s: re-placed skew_mapp: %s", label, npl_last_error());
        want = expected(label, "skew_mapp", q, &s, bytes, HUGE);
        CHECK(compare(label, a, bytes, want) == 0 && checksum(a, bytes) == sum,
              "%s -> skew_mapp: every page on its node, data intact", label);
        free(want);
        npl_policy_free(q);
        CHECK(info.page_size == HUGE, "%s: npl_array_info says 2 MiB pages (%zu)", label,
              info.page_size);
    }
    npl_free(a);
    npl_policy_free(p);
}

/* Rows of 1 MiB in 2 MiB pages: parts and migrations go by the array's 2 MiB pages (a page
 * goes with the row holding its first byte). */
static void huge_parts(void)
{
    size_t rows = 2 * (size_t)N + 2, bytes = rows * MIB, n = bytes / PSZ; /* N+1 huge pages */
    npl_shape s = {8, 2, {rows, MIB / 8, 0}, NPL_ROW_MAJOR};
    npl_policy *p = pol("cyclic"), *last;
    char str[64];
    snprintf(str, sizeof str, "bind_all:%d", N - 1);
    last = pol(str);
    unsigned char *a = npl_alloc_array(&s, p, NPL_F_HUGETLB | NPL_F_STRICT);
    CHECK(a != NULL, "hugetlb 2D array: %s", npl_last_error());
    if (!a)
        goto out;
    fill(a, bytes);
    uint64_t sum = checksum(a, bytes);
    int *want = malloc(n * sizeof *want);
    /* rows 1-2 hold the first byte of huge page 1 (row 2) only */
    int rc = npl_apply_part(a, 1, 2, last, 0);
    for (size_t i = 0; i < n; i++)
        want[i] = i / 512 == 1 ? N - 1 : (int)(i / 512 % (size_t)N);
    CHECK(rc == 0 && compare("huge part", a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "hugetlb rows 1-2 to node %d: huge page 1 moved, data intact (%d: %s)", N - 1, rc,
          npl_last_error());
    struct npl_migrate_result r;
    rc = npl_migrate_units(a, 4, 2, 0, &r); /* rows 4-5: huge page 2 */
    for (size_t i = 0; i < n; i++)
        if (i / 512 == 2)
            want[i] = 0;
    CHECK(rc == 0 && r.failed == 0 && compare("huge migrate", a, bytes, want) == 0 &&
              checksum(a, bytes) == sum,
          "hugetlb rows 4-5 migrated to node 0: rc %d, moved %zu, failed %zu (%s)", rc, r.moved,
          r.failed, npl_last_error());
    struct npl_check c = {0};
    CHECK(npl_check(a, &c) == 0 && c.placed == n, "hugetlb parts: npl_check %zu/%zu", c.placed, n);
    free(want);
    npl_free(a);
out:
    npl_policy_free(p);
    npl_policy_free(last);
}

static void test_huge(void)
{
    probe("cyclic", &(npl_shape){1, 1, {5 * MIB + 100, 0, 0}, NPL_ROW_MAJOR}, 5 * MIB + 100,
          NPL_F_THP);
    probe("bind_block", &(npl_shape){8, 2, {48, 16384, 0}, NPL_ROW_MAJOR}, 6 * MIB, NPL_F_THP);
    int saved[64];
    for (int k = 0; k < N; k++) {
        saved[k] = pool(k, "nr_hugepages", -1);
        pool(k, "nr_hugepages", 2);
    }
    if (pool(0, "free_hugepages", -1) < 2) {
        SKIP("hugetlb-pool", "hugetlb arrays: no 2 MiB pool could be reserved");
    } else {
        probe_huge("cyclic", (npl_shape){1, 1, {(size_t)N * HUGE + 100, 0, 0}, NPL_ROW_MAJOR});
        probe_huge("bind_block", (npl_shape){8, 2, {(size_t)N, HUGE / 8, 0}, NPL_ROW_MAJOR});
        huge_parts();
    }
    for (int k = 0; k < N; k++) /* empty pools: fallback (documented), or ENOMEM with STRICT */
        pool(k, "nr_hugepages", 0);
    npl_shape s = {1, 1, {3 * HUGE + 5, 0, 0}, NPL_ROW_MAJOR};
    npl_policy *p = pol("cyclic");
    struct npl_array_info info = {0};
    unsigned char *a = npl_alloc_array(&s, p, NPL_F_HUGETLB);
    CHECK(a && npl_array_info(a, &info) == 0 && info.hugetlb == 0 && info.hugetlb_fallback == 1,
          "empty pools: base pages, fallback reported (%s)", npl_last_error());
    int *want = expected("fallback", "cyclic", p, &s, 3 * HUGE + 5, PSZ);
    CHECK(a && compare("fallback", a, 3 * HUGE + 5, want) == 0, "fallback: every base page exact");
    free(want);
    npl_free(a);
    errno = 0;
    CHECK(npl_alloc_array(&s, p, NPL_F_HUGETLB | NPL_F_STRICT) == NULL && errno == ENOMEM,
          "empty pools + STRICT: ENOMEM (%s)", npl_last_error());
    npl_policy_free(p);
    for (int k = 0; k < N; k++)
        pool(k, "nr_hugepages", saved[k] > 0 ? saved[k] : 0);
}

/* A THP array (2 MiB units, huge pages formed) whose rows are moved or re-placed in parts that
 * do not end on 2 MiB: only the part's pages may move, never the rest of a huge page. */
static void test_thp_parts(void)
{
    size_t rows = 96, ub = 64 * 1024, bytes = rows * ub, n = bytes / PSZ, per = HUGE / PSZ;
    npl_shape s = {8, 2, {rows, ub / 8, 0}, NPL_ROW_MAJOR};
    npl_policy *cyc = pol("cyclic"), *skew = pol("skew_mapp");
    unsigned char *a = npl_alloc_array(&s, cyc, NPL_F_THP);
    CHECK(a != NULL, "THP 2D array: %s", npl_last_error());
    if (!a)
        goto out;
    fill(a, bytes);
    uint64_t sum = checksum(a, bytes);
    size_t huge[64] = {0}, base[64], absent = 0, nh = 0;
    npl_histogram_huge(a, bytes, huge, base, &absent);
    for (int k = 0; k < N; k++)
        nh += huge[k];
    printf("  THP array: %zu of %zu 2 MiB pages are huge\n", nh, bytes / HUGE);
    thp_formed("THP 2D array", a, bytes);
    int *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i / per % (size_t)N);
    struct npl_migrate_result r;
    int rc = npl_migrate_units(a, 40, 20, N - 1, &r); /* bytes 2.5 MiB .. 3.75 MiB */
    size_t lo, hi;
    part_span(40, 20, ub, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        want[i] = N - 1;
    CHECK(rc == 0 && compare("THP migrate part", a, bytes, want) == 0 &&
              checksum(a, bytes) == sum,
          "THP array rows 40-59 to node %d: those pages only, data intact (%d: %s)", N - 1, rc,
          npl_last_error());
    rc = npl_apply_part(a, 70, 10, skew, 0); /* bytes 4.375 MiB .. 5 MiB, page by page */
    part_span(70, 10, ub, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        want[i] = (int)(((i - lo) + (i - lo) / (size_t)N + 1) % (size_t)N);
    CHECK(rc == 0 && compare("THP apply part", a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "THP array rows 70-79 re-placed skew_mapp page by page: those pages only (%d: %s)", rc,
          npl_last_error());
    struct npl_check c = {0};
    CHECK(npl_check(a, &c) == 0 && c.placed == n, "THP parts: npl_check %zu/%zu", c.placed, n);
    free(want);
    npl_free(a);
    /* a fresh THP array, a part re-placed with NPL_F_THP on one node */
    char str[64];
    snprintf(str, sizeof str, "bind_all:%d", N - 1);
    npl_policy *last = pol(str);
    a = npl_alloc_array(&s, cyc, NPL_F_THP);
    fill(a, bytes);
    want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i / per % (size_t)N);
    rc = npl_apply_part(a, 40, 20, last, NPL_F_THP); /* 2.5 MiB .. 3.75 MiB */
    part_span(40, 20, ub, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        want[i] = N - 1;
    CHECK(rc == 0 && compare("THP part THP", a, bytes, want) == 0 && checksum(a, bytes) == sum,
          "THP array rows 40-59 to %s with NPL_F_THP: those pages only (%d: %s)", str, rc,
          npl_last_error());
    CHECK(npl_check(a, &c) == 0 && c.placed == n, "THP part with NPL_F_THP: npl_check %zu/%zu",
          c.placed, n);
    npl_policy_free(last);
    free(want);
    npl_free(a);
    /* a fresh THP array moved page by page (cyclic over 4 KiB pages) */
    a = npl_alloc_array(&s, skew, NPL_F_THP);
    fill(a, bytes);
    rc = npl_migrate_range_policy(a, bytes, cyc, NULL, &r);
    want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i % (size_t)N);
    CHECK(rc == 0 && r.failed == 0 && compare("THP migrate cyclic", a, bytes, want) == 0 &&
              checksum(a, bytes) == sum,
          "THP array migrated cyclic page by page: every 4 KiB page exact (%d: %s)", rc,
          npl_last_error());
    free(want);
    npl_free(a);
out:
    npl_policy_free(cyc);
    npl_policy_free(skew);
}

/* A raw range inside memory that already holds transparent huge pages: only the range moves. */
static void test_thp_raw_range(void)
{
    size_t bytes = 8 * MIB, n = bytes / PSZ, first = 300, count = 700;
    unsigned char *b = aligned_alloc(HUGE, bytes);
    madvise(b, bytes, MADV_HUGEPAGE);
    fill(b, bytes);
    uint64_t sum = checksum(b, bytes);
    /* the pages outside stay where the first touch put them: each frame on the node the writing
     * thread ran on then (an unpinned thread can move between frames) */
    int *want = malloc(n * sizeof *want);
    CHECK(raw_nodes(b, bytes, want) == 0, "THP raw range: nodes before");
    for (size_t i = first; i < first + count; i++)
        want[i] = (int)((i - first) % (size_t)N);
    npl_policy *cyc = pol("cyclic");
    int rc = npl_place_range(b + first * PSZ, count * PSZ, cyc, NULL, 0);
    size_t bad = rc == 0 ? compare("THP raw range", b, bytes, want) : n;
    CHECK(rc == 0 && bad == 0 && checksum(b, bytes) == sum,
          "place_range of pages %zu-%zu inside THP memory: those pages cyclic, the rest stay "
          "where they were, data intact (%d: %s; %zu pages off)", first, first + count - 1, rc,
          rc ? npl_last_error() : "", bad);
    npl_policy_free(cyc);
    free(want);
    free(b);
}

/* Queries over holes and untouched pages: the documented codes, equal to the raw call's, and the
 * histogram counts them as absent. */
static void test_query_holes(void)
{
    char *m = mmap(NULL, 5 * PSZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m[0] = m[PSZ] = m[4 * PSZ] = 1; /* page 2 never touched, page 3 unmapped */
    munmap(m + 3 * PSZ, PSZ);
    int lib[5] = {0}, raw[5] = {0}, node = -1;
    npl_where_am_i(NULL, &node);
    int q = npl_query_pages(m, 5 * PSZ, lib, 5);
    void *pages[5];
    for (int i = 0; i < 5; i++)
        pages[i] = m + (size_t)i * PSZ;
    syscall(SYS_move_pages, 0, 5UL, pages, NULL, raw, 0);
    int ok = q == 5 && (lib[2] == -ENOENT || lib[2] == -EFAULT) && lib[3] == -EFAULT;
    for (int i = 0; i < 5; i++)
        ok &= i == 3 || lib[i] == raw[i]; /* the library does not ask the kernel about holes */
    ok &= lib[0] >= 0 && lib[1] >= 0 && lib[4] >= 0;
    CHECK(ok, "query over a hole and an untouched page: %d %d %d %d %d (raw %d %d %d %d %d)",
          lib[0], lib[1], lib[2], lib[3], lib[4], raw[0], raw[1], raw[2], raw[3], raw[4]);
    size_t counts[64] = {0}, absent = 0, present = 0;
    CHECK(npl_histogram(m, 5 * PSZ, counts, &absent) == 0, "histogram over a hole: %s",
          npl_last_error());
    for (int k = 0; k < N; k++)
        present += counts[k];
    CHECK(present == 3 && absent == 2, "histogram: 3 present, 2 absent (%zu, %zu)", present,
          absent);
    munmap(m, 3 * PSZ);
    munmap(m + 4 * PSZ, PSZ);
}

/* ---- @local under a CPU mask: a child exec'ed with node (N-1)'s CPUs only ---- */

static int local_child(void)
{
    int nodes[64];
    npl_policy *p = pol("cyclic@local");
    int m = plan_nodes(p, NULL, nodes, 64);
    CHECK(m == 1 && nodes[0] == N - 1, "@local under node %d's CPUs: %d node(s), first %d", N - 1,
          m, m > 0 ? nodes[0] : -1);
    npl_policy_free(p);
    probe("cyclic@local", NULL, 6 * PSZ + 5, 0);
    probe("bind_block@local", &(npl_shape){8, 2, {29, 625, 0}, NPL_ROW_MAJOR}, 29 * 5000, 0);
    return check_summary("guest_probe local child");
}

static void test_local(void)
{
    if (N < 2)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int c = 0; c < K; c++)
            CPU_SET((N - 1) * K + c, &set);
        sched_setaffinity(0, sizeof set, &set);
        char nn[16], kk[16];
        snprintf(nn, sizeof nn, "%d", N);
        snprintf(kk, sizeof kk, "%d", K);
        execl("/proc/self/exe", "guest_probe", "--local-child", "--nodes", nn, "--cpus-per-node",
              kk, (char *)0);
        _exit(99);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "@local child passed (status %d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = (size_t)sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    if (N < 1 || K < 1 || !npl_topo_self() || npl_topo_node_count(npl_topo_self(), 0) != N) {
        printf("usage: guest_probe --nodes N --cpus-per-node K (in a guest of N nodes)\n");
        return 120;
    }
    unsetenv("OMP_NUM_THREADS"); /* bind_block's default schedule: the allowed cores */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--local-child"))
            return local_child();
    printf("guest_probe: %d nodes x %d CPUs\n", N, K);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    void (*tests[])(void) = {test_shapes, test_part_while_writing, test_part_edges,
                             test_replace_units, test_migrations, test_free_realloc, test_huge,
                             test_thp_parts, test_thp_raw_range, test_query_holes, test_local};
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        tests[i]();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("  [test %zu done at %.1f s]\n", i,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("guest_probe: %.1f s\n",
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return check_summary("guest_probe");
}
