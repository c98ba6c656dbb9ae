/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_profile - numaplace profile -> run --profile in a multi-node guest (adapts to --nodes N
 * --cpus-per-node K; N*K OpenMP threads pinned compact), on a program of three arrays with known
 * patterns (the child role of this program):
 *   blk  blocked: thread t reads and writes its static share
 *   cyc  cyclic: page p is used by thread (p / 4) mod T
 *   shr  shared, read-mostly: written once by the main thread, read whole by every thread
 *   sta  a static array (.bss, 1 MiB), blocked: placed per symbol before main
 * Checks (exact, balancing off):
 *   1. the profile classifies them blocked, cyclic, shared-read-mostly and blocked;
 *   2. run --profile at another input size (3 MiB against 2) matches all four again (100% of
 *      the profiled bytes, the figure run --verbose prints);
 *   3. there, before any access of the compute phase, every page of blk, cyc and sta is on the
 *      node of the thread that uses it, and every page of each array is where its advised policy's map
 *      puts it (npl_query_pages against npl_policy_map);
 *      The child initialises every array from the main thread (as real codes do); the control,
 *      the same child under run --pin compact without a profile, has exactly 1/N of the pages
 *      of blk, cyc and sta on their user's node (first touch), so only the advice passes 3;
 *   4. the child's checksum is the same under profile, run --profile and a plain run.
 *   guest_profile --child MIB ITERS [POLICY_STA POLICY_BLK POLICY_CYC POLICY_SHR]   the child */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <omp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PSZ 4096
#define K 4 /* pages per cyclic block */
static int N = 1, KC = 1;
#define STA_N ((1u << 20) / sizeof(double))
/* a static array, tracked and placed by its symbol (page-aligned: its pages are all its own) */
double sta[STA_N] __attribute__((aligned(4096)));

static int node_of_cpu(void)
{
    unsigned cpu = 0, node = 0;
    return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int)node : -1;
}

/* pages of a placed on the node of their user; and pages where policy pol's map puts them */
static void report(const char *name, const double *a, size_t n, const int *thread_node, int T,
                   int cyclic, const char *pol)
{
    size_t bytes = n * sizeof *a, npages = bytes / PSZ, per_page = PSZ / sizeof *a, local = 0,
           mapped = 0;
    int *got = malloc(npages * sizeof *got), *want = malloc(npages * sizeof *want);
    npl_policy *p = NULL;
    int q = got && npl_query_pages(a, bytes, got, npages) == (int)npages ? 0 : -1;
    int m = pol && want && npl_policy_parse(&p, pol) == 0 &&
                    npl_policy_map(p, NULL, NULL, bytes, PSZ, 0, npages, want) == 0
                ? 0
                : -1;
    size_t share = n / (size_t)T; /* n is a multiple of T here: the static schedule's parts */
    int per_node[64] = {0};
    for (size_t i = 0; q == 0 && i < npages; i++) {
        int user = cyclic ? (int)((i / K) % (size_t)T) : (int)(i * per_page / share);
        local += got[i] == thread_node[user];
        mapped += m == 0 && got[i] == want[i];
        if (got[i] >= 0 && got[i] < 64)
            per_node[got[i]]++;
    }
    printf("%s: %zu pages, %zu on their user's node, %zu where %s puts them, pages per node", name,
           npages, local, mapped, pol ? pol : "-");
    for (int k = 0; k < 64; k++)
        if (per_node[k])
            printf(" %d:%d", k, per_node[k]);
    printf("\n");
    npl_policy_free(p);
    free(got);
    free(want);
}

static int child(size_t mib, int iters, char **pols)
{
    size_t n = mib << 20 >> 3, per_page = PSZ / sizeof(double);
    /* page-aligned (the pages are counted from the array's first byte: under a plain run
     * malloc's blocks start past a header) */
    double *blk = aligned_alloc(PSZ, n * sizeof *blk), *cyc = aligned_alloc(PSZ, n * sizeof *cyc),
           *shr = aligned_alloc(PSZ, n * sizeof *shr);
    if (!blk || !cyc || !shr)
        return 1;
    int T = omp_get_max_threads(), thread_node[256];
    if (T > 256)
        return 1;
#pragma omp parallel
    thread_node[omp_get_thread_num()] = node_of_cpu();
    /* the main thread initialises every array, as real codes do: first touch alone puts them
     * all on its node (the control of main's check 3) */
    for (size_t i = 0; i < n; i++) {
        shr[i] = (double)(i % 7);
        blk[i] = 1.0;
        cyc[i] = 2.0;
    }
    for (size_t i = 0; i < STA_N; i++)
        sta[i] = 0.5;
    if (pols) { /* where the pages are before the compute phase touches them */
        report("sta", sta, STA_N, thread_node, T, 0, pols[0]);
        report("blk", blk, n, thread_node, T, 0, pols[1]);
        report("cyc", cyc, n, thread_node, T, 1, pols[2]);
        report("shr", shr, n, thread_node, T, 0, pols[3]);
    }
    double sum = 0;
    for (int it = 0; it < iters; it++) {
#pragma omp parallel reduction(+ : sum)
        {
            int t = omp_get_thread_num();
#pragma omp for schedule(static)
            for (size_t i = 0; i < STA_N; i++)
                sta[i] = sta[i] * 0.5 + 1.0;
#pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++)
                blk[i] = blk[i] * 0.5 + shr[(i * 7) % n];
            for (size_t i = 0; i < n; i++)
                if ((i / per_page / K) % (size_t)T == (size_t)t)
                    cyc[i] += 1.0;
            double s = 0;
            for (size_t i = (size_t)t; i < n; i += 61)
                s += shr[i];
            sum += s / T;
        }
    }
    double cs = 0;
    for (size_t i = 0; i < n; i += 17)
        cs += blk[i] + cyc[i];
    for (size_t i = 0; i < STA_N; i += 17)
        cs += sta[i];
    printf("checksum %.6e %.6e\n", cs, sum);
    return 0;
}

static int run_to(const char *out, const char *err, char *const argv[])
{
    return spawn_to(out, err, argv);
}

/* the k-th `"KEY": "VALUE"` of the arrays' advice (the profile lists arrays in allocation order) */
static int advice_field(const char *json, const char *key, int k, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(json, "\"arrays\"");
    for (int i = 0; p && i <= k; i++)
        if ((p = strstr(p, pat)))
            p += strlen(pat);
    const char *e = p ? strchr(p, '"') : NULL;
    if (!e || (size_t)(e - p) >= size)
        return -1;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return 0;
}

static char *line_of(const char *text, const char *prefix, char *buf, size_t size)
{
    const char *p = text ? strstr(text, prefix) : NULL;
    if (!p)
        return NULL;
    size_t l = strcspn(p, "\n");
    snprintf(buf, size, "%.*s", (int)(l < size ? l : size - 1), p);
    return buf;
}

/* An explicit map is for the profiled size only: at another size run --profile applies the best
 * shape that holds at any size and says which (--verbose), on the line before the array's
 * "...: explicit (PATTERN)" line. That shape, or "" when it is not said; first touch is the main
 * thread's writes, all on its node (node 0: pinned compact). */
static void fallback_of(const char *err, const char *pattern, char *out, size_t size)
{
    char tail[320];
    snprintf(tail, sizeof tail, ": explicit (%s)", pattern);
    const char *hit = err ? strstr(err, tail) : NULL;
    out[0] = 0;
    if (!hit)
        return;
    const char *line = hit;
    while (line > err && line[-1] != '\n')
        line--;
    const char *prev = line > err ? line - 1 : err;
    while (prev > err && prev[-1] != '\n')
        prev--;
    const char *key = "the best shape at any size applies (";
    const char *k = strstr(prev, key);
    if (!k || k > line)
        return;
    k += strlen(key);
    const char *e = strchr(k, '\n');
    if (!e || e > line || e - k < 2 || e[-1] != ')')
        return;
    snprintf(out, size, "%.*s", (int)(e - 1 - k), k);
    if (!strcmp(out, "first touch"))
        snprintf(out, size, "bind_all:0");
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child"))
        return child(strtoul(argv[2], NULL, 10), atoi(argv[3]), argc >= 8 ? argv + 4 : NULL);
    guest_args(argc, argv, &N, &KC);
    if (N < 2 || !npl_topo_self() || npl_topo_node_count(npl_topo_self(), 0) != N) {
        printf("usage: guest_profile --nodes N --cpus-per-node K (in a guest of N >= 2 nodes)\n");
        return 120;
    }
    numa_balancing_off();
    char self[512], threads[16];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) {
        printf("FAIL guest_profile: /proc/self/exe cannot be read\n");
        return 1;
    }
    self[l] = 0;
    snprintf(threads, sizeof threads, "%d", N * KC);
    setenv("OMP_NUM_THREADS", threads, 1);

    /* 1. the profile */
    int rc = run_to("/tmp/gp_out1.txt", "/tmp/gp_err1.txt",
                    (char *const[]){"numaplace", "profile", "--pin", "compact", "--rate", "20000",
                                    "--out", "/tmp/gp.json", "--", self, "--child", "2", "8",
                                    NULL});
    CHECK(rc == 0, "numaplace profile: status %d", rc);
    char *json = slurp("/tmp/gp.json"), *err1 = slurp("/tmp/gp_err1.txt");
    CHECK(json != NULL, "no profile written: %s", err1 ? err1 : "?");
    /* the static array is tracked before main: it comes first */
    char pat[4][64] = {"?", "?", "?", "?"}, pol[4][192] = {"", "", "", ""};
    for (int k = 0; json && k < 4; k++) {
        advice_field(json, "pattern", k, pat[k], sizeof pat[k]);
        advice_field(json, "policy", k, pol[k], sizeof pol[k]);
    }
    printf("advised: sta %s (%s), blk %s (%s), cyc %s (%s), shr %s (%s)\n", pat[0], pol[0], pat[1],
           pol[1], pat[2], pol[2], pat[3], pol[3]);
    CHECK(json && strstr(json, "\"symbol\": \"sta\""), "the static array by its symbol");
    CHECK(!strcmp(pat[0], "blocked") && !strcmp(pat[1], "blocked") && !strcmp(pat[2], "cyclic") &&
              !strcmp(pat[3], "shared-read-mostly"),
          "patterns: %s %s %s %s; the table:\n%s", pat[0], pat[1], pat[2], pat[3],
          err1 ? err1 : "?");

    /* 2.-3. run --profile at another size: matched, placed before the first touch */
    rc = run_to("/tmp/gp_out2.txt", "/tmp/gp_err2.txt",
                (char *const[]){"numaplace", "run", "--profile", "/tmp/gp.json", "--pin",
                                "compact", "--verbose", "--", self, "--child", "3", "1", pol[0],
                                pol[1], pol[2], pol[3], NULL});
    CHECK(rc == 0, "run --profile: status %d", rc);
    char *out2 = slurp("/tmp/gp_out2.txt"), *err2 = slurp("/tmp/gp_err2.txt"), buf[512];
    const char *m = line_of(err2, "numaplace run: profile /tmp/gp.json:", buf, sizeof buf);
    printf("%s\n", m ? m : "(no matched line)");
    CHECK(m && strstr(m, ": 4 of 4 arrays matched again (100.0% of the profiled bytes)"),
          "matched: %s", m ? m : err2 ? err2 : "?");
    /* a heap array advised thread blocks gets them lazily (the kernel's policy per block, no
     * page touched): the page checks below then test the program's own first touch under it */
    for (int k = 1; k < 4; k++)
        if (!strncmp(pol[k], "bind_block:threads=", 19)) {
            char want[300];
            snprintf(want, sizeof want, ": %s (%s), lazily", pol[k], pat[k]);
            CHECK(err2 && strstr(err2, want), "%s: not placed lazily (%s): %s", pat[k], want,
                  err2 ? err2 : "?");
        }
    /* an array advised an explicit map is placed by the shape run --profile says it applies at
     * this other size: the child checks the pages against that shape, in a second run */
    int again = 0;
    for (int k = 0; k < 4; k++)
        if (!strcmp(pol[k], "explicit")) {
            char fb[192];
            fallback_of(err2, pat[k], fb, sizeof fb);
            printf("%s: explicit at the profiled size; here: %s\n", pat[k], fb[0] ? fb : "(not said)");
            CHECK(fb[0] != 0, "%s: run --profile does not say what replaces its explicit map: %s",
                  pat[k], err2 ? err2 : "?");
            if (fb[0]) {
                snprintf(pol[k], sizeof pol[k], "%s", fb);
                again = 1;
            }
        }
    if (again) {
        rc = run_to("/tmp/gp_out2.txt", "/tmp/gp_err2b.txt",
                    (char *const[]){"numaplace", "run", "--profile", "/tmp/gp.json", "--pin",
                                    "compact", "--", self, "--child", "3", "1", pol[0], pol[1],
                                    pol[2], pol[3], NULL});
        CHECK(rc == 0, "run --profile, again with the applied shapes: status %d", rc);
        free(out2);
        out2 = slurp("/tmp/gp_out2.txt");
    }
    const char *names[4] = {"sta:", "blk:", "cyc:", "shr:"};
    size_t want_pages[4] = {STA_N * sizeof(double) / PSZ, (3u << 20) / PSZ, (3u << 20) / PSZ,
                            (3u << 20) / PSZ};
    for (int k = 0; k < 4; k++) {
        char line[512];
        size_t pages = 0, local = 0, mapped = 0;
        const char *lk = line_of(out2, names[k], line, sizeof line);
        int ok = lk && sscanf(lk + 4, " %zu pages, %zu on their user's node, %zu where", &pages,
                              &local, &mapped) == 3;
        printf("%s\n", lk ? lk : names[k]);
        CHECK(ok && pages == want_pages[k] && mapped == pages,
              "%s every page where its advised policy puts it: %s", names[k], lk ? lk : "?");
        if (k < 3)
            CHECK(ok && local == pages, "%s every page on its user's node: %s", names[k],
                  lk ? lk : "?");
    }

    /* the control: the same child pinned the same way with no profile (first touch by the
     * main thread, on node 0): sta, blk and cyc each have exactly 1/N of their pages on their
     * user's node, so the advice is what put all of them there */
    rc = run_to("/tmp/gp_out4.txt", "/tmp/gp_err4.txt",
                (char *const[]){"numaplace", "run", "--pin", "compact", "--", self, "--child",
                                "3", "1", pol[0], pol[1], pol[2], pol[3], NULL});
    CHECK(rc == 0, "the control (run --pin compact, no profile): status %d", rc);
    char *out4 = slurp("/tmp/gp_out4.txt");
    for (int k = 0; k < 3; k++) {
        char line[512];
        size_t pages = 0, local = 0, mapped = 0;
        const char *lk = line_of(out4, names[k], line, sizeof line);
        int ok = lk && sscanf(lk + 4, " %zu pages, %zu on their user's node, %zu where", &pages,
                              &local, &mapped) == 3;
        printf("control %s\n", lk ? lk : names[k]);
        CHECK(ok && pages == want_pages[k] && local == pages / (size_t)N,
              "control %s first touch by the main thread: 1/%d of the pages on their user's "
              "node: %s", names[k], N, lk ? lk : "?");
    }
    free(out4);

    /* 4. the same output under profile and run --profile as plain (same size) */
    rc = run_to("/tmp/gp_out3.txt", "/tmp/gp_err3.txt",
                (char *const[]){self, "--child", "2", "8", NULL});
    char *out1 = slurp("/tmp/gp_out1.txt"), *out3 = slurp("/tmp/gp_out3.txt");
    CHECK(rc == 0 && out1 && out3 && !strcmp(out1, out3), "profile changed the output: [%s] [%s]",
          out1 ? out1 : "?", out3 ? out3 : "?");
    free(json);
    free(err1);
    free(out1);
    free(out2);
    free(err2);
    free(out3);
    return check_summary("guest_profile");
}
