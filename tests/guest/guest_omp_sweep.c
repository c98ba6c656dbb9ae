/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_omp_sweep - the papers' locality experiment, exact and hardware-independent:
 * for a sweep where each OpenMP thread reads/writes its static block every iteration, the
 * fraction of each thread's block pages that are remote to it, under
 *   si       serial init (first touch by the master)                  expected (M-1)/M
 *   pi       parallel init (first touch by the owner)                 expected 0
 *   si-nt    serial init + explicit next-touch (npl_next_touch_arm)   expected <= 2%
 *   gomp     serial init + transparent next-touch on GCC's libgomp    expected <= 2%
 *            (the interposer sees its GOMP_parallel* entries: no OMPT needed)
 *   si-ompt  the same gcc build on a preloaded LLVM libomp            expected <= 2%
 *            (its regions enter through the interposer's GOMP_* wrappers; libomp's OMPT
 *            report of each is recognised and not counted twice)
 * Run as `guest_omp_sweep --nodes N --cpus-per-node K`: it runs itself once per mode (with the
 * environment each needs) and checks the numbers. The sweep itself uses no numaplace call
 * except in si-nt. gomp and si-ompt preload the interposer from where `numaplace run
 * --next-touch` finds it: numaplace runs this program (mode "env"), which reports its LD_PRELOAD
 * (the interposer alone: the program keeps its own OpenMP runtime). They always run: without
 * numaplace or the interposer those checks fail. si-ompt also needs libomp.so.5 (tests/guest/run.sh
 * adds it as /usr/local/bin/libomp.so.5), else it is skipped (key libomp). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK (1 << 20)

static int thread_nodes; /* bit mask of the nodes the sweep's threads ran on */

static double remote_fraction(double *a, size_t per, long *pages_out)
{
    long remote = 0, pages = 0;
    int mask = 0;
#pragma omp parallel reduction(+ : remote, pages) reduction(| : mask)
    {
        int t = omp_get_thread_num();
        unsigned cpu, node;
        syscall(SYS_getcpu, &cpu, &node, NULL);
        mask |= 1 << (node & 31);
        char *b = (char *)(a + (size_t)t * per);
        int n = BLOCK / 4096, st[BLOCK / 4096];
        /* read the block first: this region is new to the OMPT tool, which re-arms next-touch at
         * new regions; reading (as the sweep's owner of this block) resolves it like the sweep */
        for (int i = 0; i < n; i++)
            (void)((volatile char *)b)[(size_t)i * 4096];
        void *pg[BLOCK / 4096];
        for (int i = 0; i < n; i++)
            pg[i] = b + (size_t)i * 4096;
        syscall(SYS_move_pages, 0, n, pg, NULL, st, 0);
        for (int i = 0; i < n; i++)
            remote += st[i] != (int)node;
        pages += n;
    }
    *pages_out = pages;
    thread_nodes = mask;
    return (double)remote / (double)pages;
}

/* mode "count": allocate and touch 1024 pages serially; report the spread of pages over nodes */
static int count_pages(void)
{
    int n = 1024, st[1024], per[64] = {0};
    char *a = aligned_alloc(4096, (size_t)n * 4096);
    void *pg[1024];
    for (int i = 0; i < n; i++) {
        a[(size_t)i * 4096] = 1;
        pg[i] = a + (size_t)i * 4096;
    }
    syscall(SYS_move_pages, 0, n, pg, NULL, st, 0);
    int lo = n, hi = 0, nodes = 0;
    for (int i = 0; i < n; i++)
        if (st[i] >= 0 && st[i] < 64)
            per[st[i]]++;
    for (int k = 0; k < 64; k++)
        if (per[k]) {
            nodes++;
            lo = per[k] < lo ? per[k] : lo;
            hi = per[k] > hi ? per[k] : hi;
        }
    printf("RESULT count nodes=%d spread=%d remote_after_iter1=%d remote_final=%d on_node1=%d\n",
           nodes, hi - lo, nodes, hi - lo, per[1]);
    return 0;
}

static int sweep(const char *mode)
{
    if (!strcmp(mode, "count"))
        return count_pages();
    if (!strcmp(mode, "env")) { /* what numaplace run preloads */
        const char *pre = getenv("LD_PRELOAD");
        printf("PRELOAD %s\n", pre ? pre : "");
        return 0;
    }
    int T = omp_get_max_threads();
    size_t per = BLOCK / sizeof(double), n = per * (size_t)T;
    double *a = aligned_alloc(4096, n * sizeof *a);
    if (!strcmp(mode, "pi")) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = (double)i;
    } else {
        for (size_t i = 0; i < n; i++)
            a[i] = (double)i;
    }
    if (!strcmp(mode, "si-nt") && npl_next_touch_arm(a, n * sizeof *a, 0) < 0) {
        printf("arm: %s\n", npl_last_error());
        return 2;
    }
    double first = -1;
    long pages = 0;
    for (int it = 0; it < 3; it++) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = a[i] * 0.5 + 1.0;
        if (it == 0)
            first = remote_fraction(a, per, &pages);
    }
    double last = remote_fraction(a, per, &pages);
    printf("RESULT %s threads=%d nodes=%d pages=%ld remote_after_iter1=%.4f remote_final=%.4f\n",
           mode, T, __builtin_popcount(thread_nodes), pages, first, last);
    return 0;
}

/* run this program in `mode` with extra environment; capture its RESULT line */
static int last_nodes;    /* nodes the last run's threads ran on */
static int last_on_node1; /* mode count: pages on node 1 (-1: not said) */
static int run_mode_via(const char *const *prefix, const char *self, const char *mode,
                        const char *preload, int threads, double *first, double *last, int *status);
static int run_mode(const char *self, const char *mode, const char *preload, int threads,
                    double *first, double *last, int *status)
{
    return run_mode_via(NULL, self, mode, preload, threads, first, last, status);
}

static int run_mode_via(const char *const *prefix, const char *self, const char *mode,
                        const char *preload, int threads, double *first, double *last, int *status)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        char th[16];
        snprintf(th, sizeof th, "%d", threads);
        setenv("OMP_NUM_THREADS", th, 1);
        if (preload && strstr(preload, "libomp")) {
            /* libomp preloaded over a gcc build: libgomp still loads and, if OMP_PROC_BIND or
             * OMP_PLACES is set, binds the initial thread before main; libomp's own variable
             * spreads the threads instead (numaplace run --pin sets it the same way) */
            setenv("KMP_AFFINITY", "granularity=fine,scatter", 1);
        } else if (!prefix) { /* libgomp's own binding (run --pin pins through the interposer) */
            setenv("OMP_PROC_BIND", "spread", 1);
            setenv("OMP_PLACES", "cores", 1);
        }
        setenv("NPL_SWEEP_MODE", mode, 1);
        if (preload) {
            setenv("LD_PRELOAD", preload, 1);
            setenv("NUMAPLACE_NEXT_TOUCH", "1", 1);
        }
        if (prefix) { /* e.g. numaplace run --next-touch -- SELF */
            const char *argv2[16];
            int k = 0;
            while (prefix[k] && k < 14) {
                argv2[k] = prefix[k];
                k++;
            }
            argv2[k++] = self;
            argv2[k] = NULL;
            execvp(argv2[0], (char *const *)argv2);
            _exit(98);
        }
        execl(self, self, (char *)0);
        _exit(99);
    }
    close(fd[1]);
    char buf[4096];
    ssize_t got = 0, r;
    while ((r = read(fd[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += r;
    buf[got] = 0;
    close(fd[0]);
    waitpid(pid, status, 0);
    char *res = strstr(buf, "RESULT");
    *first = *last = -1;
    last_nodes = 0;
    last_on_node1 = -1;
    if (res && strstr(res, " on_node1="))
        sscanf(strstr(res, " on_node1="), " on_node1=%d", &last_on_node1);
    if (res && strstr(res, " nodes="))
        sscanf(strstr(res, " nodes="), " nodes=%d", &last_nodes);
    if (res)
        sscanf(strstr(res, "remote_after_iter1="), "remote_after_iter1=%lf remote_final=%lf", first,
               last);
    printf("  %-8s %s", mode, res ? res : "(no result)\n");
    return 0;
}

/* The interposer that `numaplace run --next-touch` preloads, asked of numaplace itself: it runs
 * this program in mode "env". 1 when LD_PRELOAD is that interposer alone (no OpenMP runtime
 * preloaded) and readable, else 0. */
static int find_preload(const char *self, char *tool, size_t size)
{
    int fd[2];
    char rest[256] = "";
    tool[0] = 0;
    if (pipe(fd) < 0)
        return 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        setenv("NPL_SWEEP_MODE", "env", 1);
        execlp("numaplace", "numaplace", "run", "--next-touch", "--", self, (char *)0);
        _exit(127);
    }
    close(fd[1]);
    char buf[8192];
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof buf - 1 &&
           (r = read(fd[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += r;
    buf[got] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    char *line = strstr(buf, "PRELOAD ");
    if (line && strchr(line, '\n'))
        *strchr(line, '\n') = 0; /* that line only */
    char fmt[32];
    snprintf(fmt, sizeof fmt, "PRELOAD %%%zus %%255s", size - 1);
    int n = line ? sscanf(line, fmt, tool, rest) : 0;
    const char *base = strrchr(tool, '/');
    printf("  numaplace run --next-touch preloads: %s %s (exit %d)\n", tool, rest,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && n == 1 && base &&
           !strcmp(base, "/libnumaplace_preload.so") && access(tool, R_OK) == 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = getenv("NPL_SWEEP_MODE");
    if (mode)
        return sweep(mode);
    int N = 0, K = 1;
    guest_args(argc, argv, &N, &K);
    if (N < 1) {
        printf("usage: guest_omp_sweep --nodes N --cpus-per-node K\n");
        return 120;
    }
    int T = N * K > 16 ? 16 : N * K;
    /* THP: servers run it in `madvise` mode (facts.md); the guest kernel's `always` would put
     * 2 MiB of a 1 MiB-per-thread array on one node at first touch. Match the servers. */
    char thp[64] = "";
    FILE *f0 = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r+");
    if (f0) {
        if (fgets(thp, sizeof thp, f0) && strstr(thp, "[always]")) {
            rewind(f0);
            fputs("madvise", f0);
        } else {
            thp[0] = 0;
        }
        fclose(f0);
    }
    const char *self = "/proc/self/exe";
    char exe[4096];
    ssize_t l = readlink(self, exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = 0;
    double f, g, want = (double)(N - 1) / N;
    int st;
    run_mode(exe, "si", NULL, T, &f, &g, &st);
    CHECK(f >= want - 0.01 && f <= want + 0.01 && last_nodes == N,
          "serial init: remote fraction %.4f = (M-1)/M %.4f, threads on %d nodes", f, want, last_nodes);
    run_mode(exe, "pi", NULL, T, &f, &g, &st);
    CHECK(f == 0 && g == 0, "parallel init: remote fraction %.4f (0 by construction)", f);
    run_mode(exe, "si-nt", NULL, T, &f, &g, &st);
    CHECK(f >= 0 && f <= 0.02 && g <= 0.02 && last_nodes == N,
          "serial init + explicit next-touch: %.4f after the first iteration (<= 2%%), threads on "
          "%d nodes", f, last_nodes);
    /* the transparent mode, preloaded by hand as docs/NEXT_TOUCH.md shows, from the place
     * numaplace itself uses (numaplace must be on PATH, as in the guest: else these fail) */
    char tool[4096], pre[8200];
    int found = find_preload(exe, tool, sizeof tool);
    CHECK(found, "numaplace run --next-touch preloads the interposer (libnumaplace_preload.so) "
                 "alone, readable: \"%s\"", tool);
    run_mode(exe, "gomp", tool, T, &f, &g, &st);
    CHECK(found && WIFEXITED(st) && WEXITSTATUS(st) == 0 && f >= 0 && f <= 0.02 && g <= 0.02 &&
              last_nodes == N,
          "serial init + transparent next-touch on libgomp: %.4f after iteration 1, %.4f at the "
          "end (<= 2%%), threads on %d nodes (exit %d)", f, g, last_nodes,
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    const char *omp = getenv("NPL_LIBOMP") ? getenv("NPL_LIBOMP") : "/usr/local/bin/libomp.so.5";
    if (access(omp, R_OK)) {
        SKIP("libomp", "a gcc build on a preloaded libomp: %s missing", omp);
    } else {
        snprintf(pre, sizeof pre, "%s %s", tool, omp);
        run_mode(exe, "si-ompt", pre, T, &f, &g, &st);
        CHECK(found && WIFEXITED(st) && WEXITSTATUS(st) == 0 && f >= 0 && f <= 0.02 &&
                  last_nodes == N,
              "serial init + transparent next-touch, gcc build on a preloaded libomp: %.4f "
              "(<= 2%%), threads on %d nodes (exit %d)", f, last_nodes,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    /* the same through the command line: numaplace run */
    const char *nt[] = {"numaplace", "run", "--next-touch", "--pin", "scatter", "--", NULL};
    run_mode_via(nt, exe, "si", NULL, T, &f, &g, &st);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && f >= 0 && f <= 0.02 && last_nodes == N,
          "numaplace run --next-touch --pin scatter (libgomp, nothing preloaded but the "
          "interposer): serial init %.4f remote (<= 2%%), threads on %d nodes (exit %d)", f,
          last_nodes, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    const char *cyc[] = {"numaplace", "run", "--policy", "cyclic", "--", NULL};
    run_mode_via(cyc, exe, "count", NULL, T, &f, &g, &st);
    CHECK(f == N && g <= 1, "numaplace run --policy cyclic: pages on %.0f nodes, spread %.0f", f,
          g);
    const char *bind[] = {"numaplace", "run", "--policy", "bind_all:1", "--", NULL};
    run_mode_via(bind, exe, "count", NULL, T, &f, &g, &st);
    CHECK(f == 1 && last_on_node1 == 1024, "numaplace run --policy bind_all:1: all 1024 pages on "
          "node 1 (pages on %.0f node, %d on node 1)", f, last_on_node1);
    if (thp[0]) { /* restore */
        FILE *f1 = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "w");
        if (f1) {
            fputs("always", f1);
            fclose(f1);
        }
    }
    return check_summary("guest_omp_sweep");
}
