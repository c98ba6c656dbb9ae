/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_profile_locality - `numaplace profile` measures the locality it gets (in a guest of >= 2
 * nodes, balancing off): the threads run pinned on node 0's CPUs and read an array again and
 * again (the child role of this program), placed by `--policy bind_all:1` (every page on node 1)
 * and by `--policy bind_all:0` (every page on node 0). Checks, exact:
 *   1. the child finds every page of its array on the policy's node (npl_query_pages; a page
 *      the sampler holds protected has no answer until the child reads it once);
 *   2. profile's last line counts at least MIN_SAMPLES sampled accesses whose page's node is
 *      known, none local under bind_all:1 (0%) and all local under bind_all:0 (100%);
 *   3. the profile's "measured" total is the same as that line;
 *   4. profile --profile of the bind_all:1 run's profile (its advice puts the array with its
 *      threads, on node 0), with --policy bind_all:1 as the default of the blocks the profile
 *      does not name (the control: a run that applied no advice puts the array on node 1):
 *      matched, every page on node 0, all local;
 *   5. a static array under profile --profile is placed as advised too: two threads, one on
 *      node 0 and one on node 1, read the halves of a page-aligned static array that the main
 *      thread wrote first (first touch: all of it on node 0); profiled, then profiled again under
 *      that profile, the second half is on node 1 (the advice: blocked by thread); and so under
 *      run --profile;
 *   6. an explicit per-chunk map (the bind_all:1 run's profile, its advice replaced by a map: the
 *      first half of the chunks on node 1, the second on node 0) under run --profile, at the
 *      profiled size (chunk by chunk) and at twice the size (an array of too few samples: its
 *      map scaled, preload/apply.c): exactly half of the pages on each node; the same through
 *      npl_alloc_auto (an array of 8 MiB + 1,000 bytes, profiled itself): 1,024 of its 2,049
 *      pages on node 1, and scaled at 16 MiB + 1,000 bytes 2,048 of 4,097.
 *   7. a phase-changing array under profile --profile (next-touch armed under the sampler): two
 *      threads, one on node 0 and one on node 1, read a 2 MiB array that the main thread wrote
 *      first, in region A each its half, in region B each the pages of one parity (thread 0 the
 *      odd ones), three times. Profiled: advised phase-changing, next-touch at its regions.
 *      Profiled again under that profile: after the last B, at least 99% of the even pages on
 *      node 1 and of the odd ones on node 0 (next-touch in chunks of a page at B), at least 90%
 *      of the sampled accesses local (first touch: about half), the checksum the same; run
 *      --profile places it the same, and says its chunks: 64 KiB at A, a page at B.
 *   guest_profile_locality --child MIB PASSES [auto]   the child (auto: npl_alloc_auto)
 *   guest_profile_locality --static-child PASSES   the child of 5
 *   guest_profile_locality --phase-child PASSES    the child of 7 */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <numaplace/profile.h>

#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PSZ 4096
#define MIN_SAMPLES 100

static int N = 1, KC = 1;

#define STATIC_PAGES 128
static double sa[STATIC_PAGES * PSZ / sizeof(double)] __attribute__((aligned(PSZ)));

/* each page's node of [base, base + npages pages) (base page-aligned or not); a page the sampler
 * holds protected right now has no answer (move_pages: -EFAULT): reading it once gives it back
 * (PROT_READ for 100 ms, and not sampled again meanwhile), then it is asked again. Returns the
 * query's count (npages when it worked) */
static int where_pages(const double *a, size_t npages, int *nodes)
{
    int q = npl_query_pages(a, npages * PSZ, nodes, npages);
    uintptr_t first = (uintptr_t)a & ~(uintptr_t)(PSZ - 1);
    for (size_t i = 0; q == (int)npages && i < npages; i++)
        for (int tries = 0; nodes[i] < 0 && tries < 10; tries++) {
            const double *in = (const double *)(first + i * PSZ);
            if (in < a)
                in = a;
            volatile double touch = *in;
            (void)touch;
            npl_query_pages(in, sizeof *in, &nodes[i], 1);
        }
    return q;
}

/* the pages of n on node 0 and on node 1 by half (by_parity 0: on[0] the first half, on[1] the
 * second) or by parity (1: on[0] the even pages, on[1] the odd ones); *other: elsewhere or
 * unknown */
static void tally(const int *nodes, size_t n, int by_parity, int on[2][2], int *other)
{
    on[0][0] = on[0][1] = on[1][0] = on[1][1] = *other = 0;
    for (size_t i = 0; i < n; i++) {
        if (nodes[i] == 0 || nodes[i] == 1)
            on[by_parity ? i % 2 : i >= n / 2][nodes[i]]++;
        else
            ++*other;
    }
}

/* 5's child: the main thread writes sa, then the team reads it (static schedule); prints how
 * many pages of each half are on node 0 and on node 1 */
static int static_child(int passes)
{
    size_t n = sizeof sa / sizeof *sa;
    for (size_t i = 0; i < n; i++)
        sa[i] = (double)(i % 13);
    double sum = 0;
    for (int p = 0; p < passes; p++) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (size_t i = 0; i < n; i++)
            sum += sa[i];
    }
    int nodes[STATIC_PAGES], q = where_pages(sa, STATIC_PAGES, nodes), on[2][2], other;
    tally(nodes, q == STATIC_PAGES ? STATIC_PAGES : 0, 0, on, &other);
    printf("static pages %d (query %d): first half %d on node 0, %d on node 1; second half %d on "
           "node 0, %d on node 1; elsewhere or unknown %d\n", STATIC_PAGES, q, on[0][0], on[0][1],
           on[1][0], on[1][1], other);
    printf("checksum %.6e\n", sum);
    return 0;
}
/* 7's child: regions A (thread t reads half t) and B (thread t reads the pages of parity 1 - t),
 * PASSES passes each, three times, after a serial init; then where the pages of each parity are */
#define PHASE_BYTES (2u << 20)
static __attribute__((noinline)) double phase_region(const double *a, size_t n, int passes,
                                                     int by_page)
{
    double sum = 0;
    size_t per_page = PSZ / sizeof *a;
    if (!by_page) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
        {
            size_t h = (size_t)omp_get_thread_num();
            for (int p = 0; p < passes; p++)
                for (size_t i = h * (n / 2); i < (h + 1) * (n / 2); i++)
                    sum += a[i];
        }
    } else {
#pragma omp parallel num_threads(2) reduction(+ : sum)
        {
            size_t odd = 1 - (size_t)omp_get_thread_num();
            for (int p = 0; p < passes; p++)
                for (size_t pg = odd; pg < n / per_page; pg += 2)
                    for (size_t i = pg * per_page; i < (pg + 1) * per_page; i++)
                        sum += a[i];
        }
    }
    return sum;
}

static int phase_child(int passes)
{
    size_t n = PHASE_BYTES / sizeof(double), npages = PHASE_BYTES / PSZ;
    double *a = NULL, sum = 0;
    int *nodes = malloc(npages * sizeof *nodes);
    if (posix_memalign((void **)&a, PSZ, PHASE_BYTES) || !nodes)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 17);
    for (int round = 0; round < 3; round++) {
        sum += phase_region(a, n, passes, 0);
        sum += phase_region(a, n, passes, 1);
    }
    int q = where_pages(a, npages, nodes), on[2][2], other;
    tally(nodes, q == (int)npages ? npages : 0, 1, on, &other);
    printf("phase pages %zu (query %d): even pages %d on node 0, %d on node 1; odd pages %d on "
           "node 0, %d on node 1; elsewhere or unknown %d\n", npages, q, on[0][0], on[0][1],
           on[1][0], on[1][1], other);
    printf("checksum %.6e\n", sum);
    free(nodes);
    free(a);
    return 0;
}

/* the child: an array of MIB MiB from malloc, or (use_auto) of MIB MiB + 1,000 bytes (not a
 * whole number of pages) from npl_alloc_auto(NULL: the profile of run --profile) */
static int child(size_t mib, int passes, int use_auto)
{
    size_t bytes = (mib << 20) + (use_auto ? 1000 : 0), n = bytes >> 3;
    size_t npages = (bytes + PSZ - 1) / PSZ;
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    double *a = use_auto ? npl_alloc_auto(NULL, &shape, 0) : malloc(n * sizeof *a);
    int *nodes = malloc(npages * sizeof *nodes);
    if (!a || !nodes)
        return 1;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 13);
    /* where the pages are (the policy's node, whatever the threads' node) */
    int per_node[64] = {0}, q = where_pages(a, npages, nodes), unknown = 0;
    for (size_t i = 0; q == (int)npages && i < npages; i++) {
        if (nodes[i] >= 0 && nodes[i] < 64)
            per_node[nodes[i]]++;
        else
            unknown++;
    }
    printf("pages %zu (query %d), unknown %d, per node", npages, q, unknown);
    for (int k = 0; k < 64; k++)
        if (per_node[k])
            printf(" %d:%d", k, per_node[k]);
    printf("\n");
    if (q == (int)npages && npages > 0)
        printf("ends: first page on node %d, last on node %d\n", nodes[0], nodes[npages - 1]);
    double sum = 0;
    for (int p = 0; p < passes; p++) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (size_t i = 0; i < n; i++)
            sum += a[i];
    }
    printf("checksum %.6e\n", sum);
    free(nodes);
    if (use_auto)
        npl_free(a);
    else
        free(a);
    return 0;
}

/* "numaplace profile: sampled accesses on the accessing thread's node: P% (L of T samples;
 * U unknown)" -> L, T, U */
static int measured_line(const char *err, unsigned long long *l, unsigned long long *t,
                         unsigned long long *u)
{
    const char *m = err ? strstr(err, "sampled accesses on the accessing thread's node: ") : NULL;
    const char *p = m ? strchr(m, '(') : NULL;
    return p && sscanf(p, "(%llu of %llu samples; %llu unknown)", l, t, u) == 3 ? 0 : -1;
}

/* the profile's sampling.measured total, as written ("measured": {"local": L, ...}) */
static int measured_json(const char *json, unsigned long long *l, unsigned long long *r)
{
    const char *s = json ? strstr(json, "\"sampling\"") : NULL;
    const char *m = s ? strstr(s, "\"measured\": {") : NULL;
    return m && sscanf(m, "\"measured\": {\"local\": %llu, \"remote\": %llu", l, r) == 2 ? 0 : -1;
}

/* profile under --policy bind_all:NODE, or (advised) under --profile of the bind_all:1 run's
 * profile, whose advice puts the array with its threads: on node 0 */
static void one(const char *self, const char *cpus, int node, int advised)
{
    char pol[64], out[64], err[64], json[64];
    if (advised)
        snprintf(pol, sizeof pol, "--profile /tmp/gpl1.json");
    else
        snprintf(pol, sizeof pol, "bind_all:%d", node);
    snprintf(out, sizeof out, "/tmp/gpl_out%d%s.txt", node, advised ? "a" : "");
    snprintf(err, sizeof err, "/tmp/gpl_err%d%s.txt", node, advised ? "a" : "");
    snprintf(json, sizeof json, "/tmp/gpl%d%s.json", node, advised ? "a" : "");
    char *const by_policy[] = {"numaplace", "profile", "--backend", "fault", "--pin", (char *)cpus,
                               "--policy", pol, "--rate", "2000", "--out", json, "--",
                               (char *)self, "--child", "8", "60", NULL};
    /* the control: --policy bind_all:1, the default of the blocks the profile does not name,
     * puts the array on node 1 unless the advice (node 0) is applied to it; the threads' first
     * touch would put it on node 0 without either */
    char *const by_profile[] = {"numaplace", "profile", "-v", "--backend", "fault", "--pin",
                                (char *)cpus, "--profile", "/tmp/gpl1.json", "--policy",
                                "bind_all:1", "--rate", "2000", "--out", json, "--", (char *)self,
                                "--child", "8", "60", NULL};
    int rc = spawn_to(out, err, advised ? by_profile : by_policy);
    char *o = slurp(out), *e = slurp(err), *j = slurp(json);
    CHECK(rc == 0, "%s: numaplace profile: status %d: %s", pol, rc, e ? e : "?");
    /* 1. placed as the policy says */
    int pages = 0, query = -1, unknown = -1, on = -1;
    const char *pl = o ? strstr(o, "pages ") : NULL;
    char want[32];
    snprintf(want, sizeof want, " %d:", node);
    const char *pn = pl ? strstr(pl, want) : NULL;
    int ok = pl && sscanf(pl, "pages %d (query %d), unknown %d", &pages, &query, &unknown) == 3 &&
             pn && sscanf(pn + strlen(want), "%d", &on) == 1;
    CHECK(ok && pages == 2048 && query == pages && on == pages && unknown == 0,
          "%s: every page on node %d: %s", pol,
          node, o ? o : "?");
    /* 2. the measured line */
    unsigned long long l = 0, t = 0, u = 0, jl = 0, jr = 0;
    ok = measured_line(e, &l, &t, &u) == 0;
    printf("%s, threads on node 0: %llu of %llu sampled accesses local, %llu unknown\n", pol, l,
           t, u);
    CHECK(ok && t >= MIN_SAMPLES, "%s: at least %d samples of a known node: %s", pol, MIN_SAMPLES,
          e ? e : "?");
    CHECK(ok && l == (node == 0 ? t : 0), "%s: measured %llu of %llu local, expected %s", pol, l,
          t, node == 0 ? "all" : "none");
    /* 3. the profile says the same */
    CHECK(measured_json(j, &jl, &jr) == 0 && jl == l && jl + jr == t,
          "%s: the profile's measured total (%llu local, %llu remote) is the line's", pol, jl, jr);
    if (advised)
        CHECK(e && strstr(e, ": 1 of 1 arrays matched again (100.0% of the profiled bytes)"),
              "%s: the array matched again: %s", pol, e ? e : "?");
    free(o);
    free(e);
    free(j);
}

/* "PREFIX...: PART0 A on node 0, B on node 1; PART1 C on node 0, D on node 1; elsewhere or
 * unknown E" (a child's tally) -> h[0..4] */
static int tally_line(const char *out, const char *prefix, const char *part0, const char *part1,
                      int h[5])
{
    char fmt[160];
    snprintf(fmt, sizeof fmt, "%s %%d on node 0, %%d on node 1; %s %%d on node 0, %%d on node 1; "
                              "elsewhere or unknown %%d", part0, part1);
    const char *s = out ? strstr(out, prefix) : NULL;
    const char *f = s ? strstr(s, part0) : NULL;
    return f && sscanf(f, fmt, &h[0], &h[1], &h[2], &h[3], &h[4]) == 5 ? 0 : -1;
}

static int static_line(const char *out, int h[5])
{
    return tally_line(out, "static pages ", "first half", "second half", h);
}

/* 5: cpus "A,B", A on node 0, B on node 1 */
static void static_case(const char *self, const char *cpus)
{
    char *const first[] = {"numaplace", "profile", "--backend", "fault", "--pin", (char *)cpus,
                           "--threshold", "256K", "--rate", "20000", "--out", "/tmp/gpls.json",
                           "--", (char *)self, "--static-child", "300", NULL};
    char *const again[] = {"numaplace", "profile", "-v", "--backend", "fault", "--pin",
                           (char *)cpus, "--threshold", "256K", "--profile", "/tmp/gpls.json",
                           "--rate", "20000", "--out", "/tmp/gpls2.json", "--", (char *)self,
                           "--static-child", "300", NULL};
    int h[5] = {-1, -1, -1, -1, -1}, half = STATIC_PAGES / 2;
    int rc = spawn_to("/tmp/gpls_out.txt", "/tmp/gpls_err.txt", first);
    char *o = slurp("/tmp/gpls_out.txt"), *e = slurp("/tmp/gpls_err.txt");
    CHECK(rc == 0, "static: numaplace profile: status %d: %s", rc, e ? e : "?");
    /* first touch: the main thread wrote all of it, on node 0 (what the advice must undo) */
    CHECK(static_line(o, h) == 0 && h[0] == half && h[2] == half,
          "static, first touch: every page on node 0: %s", o ? o : "?");
    printf("static, first touch: %s", o && strstr(o, "static pages") ? strstr(o, "static pages")
                                                                     : "?\n");
    free(o);
    free(e);
    rc = spawn_to("/tmp/gpls_out2.txt", "/tmp/gpls_err2.txt", again);
    o = slurp("/tmp/gpls_out2.txt"), e = slurp("/tmp/gpls_err2.txt");
    CHECK(rc == 0, "static: numaplace profile --profile: status %d: %s", rc, e ? e : "?");
    CHECK(e && strstr(e, "profile: static sa (524288 bytes): "),
          "static: sa placed as its profile advises: %s", e ? e : "?");
    CHECK(e && strstr(e, "matched again (100.0% of the profiled bytes)"),
          "static: sa matched again: %s", e ? e : "?");
    /* the advice: each half with the thread that reads it (a block boundary may miss by a
     * page) */
    int ok = static_line(o, h) == 0;
    CHECK(ok && h[0] >= half - 1 && h[3] >= half - 1 && h[0] + h[1] + h[2] + h[3] == 2 * half,
          "static, advised: the first half on node 0, the second on node 1: %s\n%s",
          o ? o : "?", e ? e : "?");
    printf("static, advised: %s", o && strstr(o, "static pages") ? strstr(o, "static pages")
                                                                 : "?\n");
    free(o);
    free(e);
    /* and run --profile, not profiling: placed the same */
    char *const run[] = {"numaplace", "run", "-v", "--pin", (char *)cpus, "--threshold", "256K",
                         "--profile", "/tmp/gpls.json", "--", (char *)self, "--static-child", "3",
                         NULL};
    rc = spawn_to("/tmp/gpls_out3.txt", "/tmp/gpls_err3.txt", run);
    o = slurp("/tmp/gpls_out3.txt"), e = slurp("/tmp/gpls_err3.txt");
    ok = rc == 0 && static_line(o, h) == 0;
    CHECK(ok && h[0] >= half - 1 && h[3] >= half - 1 && h[0] + h[1] + h[2] + h[3] == 2 * half,
          "static, run --profile: the first half on node 0, the second on node 1 (status %d): "
          "%s\n%s", rc, o ? o : "?", e ? e : "?");
    free(o);
    free(e);
}

static int phase_line(const char *out, int h[5])
{
    return tally_line(out, "phase pages ", "even pages", "odd pages", h);
}

/* after the last B: the even pages (thread 1's) on node 1, the odd ones on node 0, at least 99%
 * of each (64 KiB chunks would put every chunk's 16 pages on one node: about half) */
static int phase_placed(const int h[5], int half)
{
    return h[1] * 100 >= half * 99 && h[2] * 100 >= half * 99 &&
           h[0] + h[1] + h[2] + h[3] == 2 * half;
}

/* 7: cpus "A,B", A on node 0, B on node 1 */
static void phase_case(const char *self, const char *cpus)
{
    char *const first[] = {"numaplace", "profile", "--backend", "fault", "--pin", (char *)cpus,
                           "--rate", "20000", "--out", "/tmp/gplp.json", "--", (char *)self,
                           "--phase-child", "20", NULL};
    char *const again[] = {"numaplace", "profile", "-v", "--backend", "fault", "--pin",
                           (char *)cpus, "--profile", "/tmp/gplp.json", "--rate", "20000", "--out",
                           "/tmp/gplp2.json", "--", (char *)self, "--phase-child", "20", NULL};
    char *const run[] = {"numaplace", "run", "-v", "--pin", (char *)cpus, "--profile",
                         "/tmp/gplp.json", "--", (char *)self, "--phase-child", "2", NULL};
    int h[5] = {-1, -1, -1, -1, -1}, half = PHASE_BYTES / PSZ / 2;
    unsigned long long l0 = 0, t0 = 0, u0 = 0, l = 0, t = 0, u = 0;
    int rc = spawn_to("/tmp/gplp_out.txt", "/tmp/gplp_err.txt", first);
    char *o = slurp("/tmp/gplp_out.txt"), *e = slurp("/tmp/gplp_err.txt");
    char *j = slurp("/tmp/gplp.json");
    CHECK(rc == 0 && measured_line(e, &l0, &t0, &u0) == 0,
          "phase: numaplace profile: status %d: %s", rc, e ? e : "?");
    const char *adv = j ? strstr(j, "\"advice\": {\"pattern\": \"phase-changing\"") : NULL;
    const char *ph = adv ? strstr(adv, "\"next_touch_phases\": [") : NULL;
    CHECK(adv && ph && ph[strlen("\"next_touch_phases\": [")] != ']',
          "phase: the array is advised phase-changing, with next-touch phases: %s", e ? e : "?");
    printf("phase, first touch: %llu of %llu sampled accesses local; %s", l0, t0,
           o && strstr(o, "phase pages") ? strstr(o, "phase pages") : "?\n");
    const char *sum0 = o ? strstr(o, "checksum ") : NULL;
    char want_sum[64] = "?";
    if (sum0)
        snprintf(want_sum, sizeof want_sum, "%.*s", (int)strcspn(sum0, "\n"), sum0);
    free(o);
    free(e);
    free(j);
    if (!adv || !ph)
        return;
    rc = spawn_to("/tmp/gplp_out2.txt", "/tmp/gplp_err2.txt", again);
    o = slurp("/tmp/gplp_out2.txt"), e = slurp("/tmp/gplp_err2.txt");
    CHECK(rc == 0 && e && strstr(e, "matched again (100.0% of the profiled bytes)"),
          "phase, profile --profile: status %d, the array matched again: %s", rc, e ? e : "?");
    int ok = phase_line(o, h) == 0;
    CHECK(ok && phase_placed(h, half),
          "phase, profile --profile: after the last B the even pages on node 1, the odd ones on "
          "node 0 (next-touch armed under the sampler, in chunks of a page at B): %s\n%s",
          o ? o : "?", e ? e : "?");
    ok = measured_line(e, &l, &t, &u) == 0;
    printf("phase, profile --profile: %llu of %llu sampled accesses local (%llu unknown); %s", l,
           t, u, o && strstr(o, "phase pages") ? strstr(o, "phase pages") : "?\n");
    CHECK(ok && t >= MIN_SAMPLES && 10 * l >= 9 * t,
          "phase, profile --profile: at least 90%% of at least %d sampled accesses local "
          "(%llu of %llu; first touch: %llu of %llu)", MIN_SAMPLES, l, t, l0, t0);
    CHECK(o && strstr(o, want_sum), "phase, profile --profile: the same %s", want_sum);
    free(o);
    free(e);
    rc = spawn_to("/tmp/gplp_out3.txt", "/tmp/gplp_err3.txt", run);
    o = slurp("/tmp/gplp_out3.txt"), e = slurp("/tmp/gplp_err3.txt");
    ok = rc == 0 && phase_line(o, h) == 0;
    CHECK(ok && phase_placed(h, half),
          "phase, run --profile: after the last B the even pages on node 1, the odd ones on node 0 "
          "(status %d): %s\n%s", rc, o ? o : "?", e ? e : "?");
    /* "... registered for next-touch; its chunk in bytes at each phase: ID: BYTES, ID: BYTES" */
    const char *key = "registered for next-touch; its chunk in bytes at each phase: ";
    const char *nt = e ? strstr(e, key) : NULL;
    unsigned id[2];
    unsigned long long b[2] = {0, 0};
    int got = nt ? sscanf(nt + strlen(key), "%u: %llu, %u: %llu", &id[0], &b[0], &id[1], &b[1])
                 : 0;
    CHECK(got == 4 && b[0] + b[1] == 65536 + 4096 && (b[0] == 4096 || b[1] == 4096),
          "phase, run --profile: next-touch in chunks of 64 KiB at A, of a page at B: %s",
          e ? e : "?");
    free(o);
    free(e);
}

/* 6: the bind_all:1 run's profile (one 8 MiB array) with its advice replaced by an explicit map,
 * half node 1, half node 0, and too few samples to have a shape of its own; run at MIB. use_auto:
 * the same with the profile of the child's npl_alloc_auto array of 8 MiB + 1,000 bytes (2,049
 * chunks: 1,024 on node 1), run at MIB MiB + 1,000 bytes */
static void explicit_case(const char *self, const char *cpus, int mib, int use_auto)
{
    const char *src = use_auto ? "/tmp/gpla.json" : "/tmp/gpl1.json";
    static int auto_profiled;
    if (use_auto && !auto_profiled++) { /* the npl_alloc_auto child profiled, once: its array's
                                         * site, size and chunks */
        char *const prof[] = {"numaplace", "profile", "--backend", "fault", "--pin", (char *)cpus,
                              "--rate", "2000", "--out", (char *)src, "--", (char *)self,
                              "--child", "8", "1", "auto", NULL};
        int rc = spawn_to("/tmp/gpla_out.txt", "/tmp/gpla_err.txt", prof);
        char *e = slurp("/tmp/gpla_err.txt");
        CHECK(rc == 0, "npl_alloc_auto child profiled: status %d: %s", rc, e ? e : "?");
        free(e);
    }
    char *j = slurp(src);
    const char *cut = j ? strstr(j, ",\n   \"advice\": {") : NULL;
    const char *nc = j ? strstr(j, "\"nchunks\": ") : NULL;
    long n = nc ? strtol(nc + strlen("\"nchunks\": "), NULL, 10) : 0;
    CHECK(cut && n > 1 && n <= 65536, "explicit: the bind_all:1 profile has its advice and "
          "nchunks (%ld)", n);
    if (!cut || n <= 1 || n > 65536) {
        free(j);
        return;
    }
    FILE *f = fopen("/tmp/gpl_explicit.json", "w");
    if (!f) {
        CHECK(0, "explicit: /tmp/gpl_explicit.json cannot be written");
        free(j);
        return;
    }
    fprintf(f, "%.*s,\n   \"advice\": {\"pattern\": \"irregular\", \"policy\": \"explicit\", "
               "\"confidence\": 0.5, \"local\": {\"policy\": 1, \"first_touch\": null, "
               "\"best\": 1}, \"reason\": \"a test's map\", \"replicate\": false, "
               "\"next_touch_phases\": [], \"samples\": 10, \"period_pages\": null, "
               "\"block_threads\": null, \"chunk_nodes\": [", (int)(cut - j), j);
    for (long c = 0; c < n; c++)
        fprintf(f, "%s%d", c ? "," : "", c < n / 2 ? 1 : 0);
    fprintf(f, "]}}]\n}\n");
    fclose(f);
    free(j);
    char size[16], out[64], err[64];
    const char *how = use_auto ? "npl_alloc_auto" : "malloc";
    snprintf(size, sizeof size, "%d", mib);
    snprintf(out, sizeof out, "/tmp/gpl_x%d%s_out.txt", mib, use_auto ? "a" : "");
    snprintf(err, sizeof err, "/tmp/gpl_x%d%s_err.txt", mib, use_auto ? "a" : "");
    char *const run[] = {"numaplace", "run", "-v", "--pin", (char *)cpus, "--profile",
                         "/tmp/gpl_explicit.json", "--", (char *)self, "--child", size, "1",
                         use_auto ? "auto" : NULL, NULL};
    int rc = spawn_to(out, err, run);
    char *o = slurp(out), *e = slurp(err);
    int pages = 0, query = -1, unknown = -1, on0 = -1, on1 = -1;
    const char *pl = o ? strstr(o, "pages ") : NULL;
    const char *p0 = pl ? strstr(pl, " 0:") : NULL, *p1 = pl ? strstr(pl, " 1:") : NULL;
    int ok = rc == 0 && pl &&
             sscanf(pl, "pages %d (query %d), unknown %d", &pages, &query, &unknown) == 3 && p0 &&
             p1 && sscanf(p0, " 0:%d", &on0) == 1 && sscanf(p1, " 1:%d", &on1) == 1;
    /* malloc: half the pages on each node. npl_alloc_auto: at 8 MiB + 1,000 bytes chunk by chunk
     * (1,024 of 2,049 pages on node 1); at 16 MiB + 1,000 (4,097 pages) the map scaled: page k
     * takes the node holding most of its data's relative range, node 1's ending at 4,194,304 of
     * 8,389,608 bytes, i.e. at 8,388,108.6 of 16,778,216: pages 0-2,047 (page 2,047: 3,597 of
     * its bytes) */
    int want = use_auto ? ((mib << 20) + 1000 + PSZ - 1) / PSZ : (mib << 20) / PSZ;
    int want1 = use_auto ? (mib == 8 ? 1024 : 2048) : want / 2, first = -1, last = -1;
    const char *ends = o ? strstr(o, "ends: ") : NULL;
    ok = ok && ends &&
         sscanf(ends, "ends: first page on node %d, last on node %d", &first, &last) == 2;
    CHECK(ok && pages == want && unknown == 0 && on1 == want1 && on0 == want - want1 &&
              first == 1 && last == 0,
          "%s, explicit map at %d MiB: the first %d of %d pages on node 1, the rest on node 0 "
          "(status %d): %s\n%s",
          how, mib, want1, want, rc, o ? o : "?", e ? e : "?");
    if (mib != 8 && !use_auto) /* the library says nothing; the interposer under -v does */
        CHECK(e && strstr(e, "its explicit map is for 8388608 bytes only: the best shape at any "
                             "size applies (its map, scaled)"),
              "explicit map at %d MiB: scaled, as run -v says: %s", mib, e ? e : "?");
    printf("%s, explicit map at %d MiB: %s", how, mib, pl ? pl : "?\n");
    free(o);
    free(e);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child"))
        return child(strtoul(argv[2], NULL, 10), atoi(argv[3]), argc >= 5 && !strcmp(argv[4], "auto"));
    if (argc >= 3 && !strcmp(argv[1], "--static-child"))
        return static_child(atoi(argv[2]));
    if (argc >= 3 && !strcmp(argv[1], "--phase-child"))
        return phase_child(atoi(argv[2]));
    guest_args(argc, argv, &N, &KC);
    const npl_topo *topo = npl_topo_self();
    if (N < 2 || !topo || npl_topo_node_count(topo, 0) != N) {
        printf("usage: guest_profile_locality --nodes N --cpus-per-node K (in a guest of N >= 2 "
               "nodes)\n");
        return 120;
    }
    numa_balancing_off();
    char self[512];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        printf("FAIL guest_profile_locality: /proc/self/exe cannot be read\n");
        return 1;
    }
    self[sl] = 0;
    /* node 0's CPUs, as a --pin CPU list; one thread on each */
    int cpus[256], nc = npl_topo_node_cpus(topo, 0, cpus, 256);
    char list[1024] = "", threads[16];
    size_t off = 0;
    for (int k = 0; k < nc && off + 16 < sizeof list; k++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%d", k ? "," : "", cpus[k]);
    CHECK(nc >= 1, "node 0 has CPUs (%d)", nc);
    snprintf(threads, sizeof threads, "%d", nc > 0 ? nc : 1);
    setenv("OMP_NUM_THREADS", threads, 1);
    printf("threads pinned on node 0's CPUs %s\n", list);
    if (nc >= 1) {
        one(self, list, 1, 0);
        one(self, list, 0, 0);
        one(self, list, 0, 1);
        explicit_case(self, list, 8, 0);  /* the profiled size: chunk by chunk */
        explicit_case(self, list, 16, 0); /* twice: the map scaled */
        explicit_case(self, list, 8, 1);  /* the same through npl_alloc_auto */
        explicit_case(self, list, 16, 1);
    }
    /* 5: one thread on node 0's first CPU, one on node 1's */
    int c1[256], n1 = npl_topo_node_cpus(topo, 1, c1, 256);
    char two[64];
    if (nc >= 1 && n1 >= 1) {
        snprintf(two, sizeof two, "%d,%d", cpus[0], c1[0]);
        setenv("OMP_NUM_THREADS", "2", 1);
        static_case(self, two);
        phase_case(self, two);
    } else {
        CHECK(0, "nodes 0 and 1 have CPUs (%d, %d)", nc, n1);
    }
    return check_summary("guest_profile_locality");
}
