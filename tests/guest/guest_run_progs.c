/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_run_progs - numaplace run on programs written in different styles, in a multi-node guest
 * (adapts to --nodes N --cpus-per-node K):
 *   1. every C allocation style (malloc, calloc, realloc growing and shrinking, posix_memalign,
 *      aligned_alloc, valloc, memalign, a block freed by another thread) under run --policy P:
 *      each page on the node P's map gives it (queried page by page), the data kept;
 *   2. children of a --pin run (a shell, system, popen, posix_spawn, vfork, exec) start on every
 *      CPU of the process: an OpenMP child (omp_probe_gcc) has N*K threads, thread t alone on
 *      the CPU --pin gives thread t (before the fix they all shared the parent's one CPU).
 *   3. every allocation entry point at every power-of-two alignment from 8 B to 2 MiB (C:
 *      align_styles; C++17 aligned, nothrow and array new: cxx_align; the same linked with
 *      jemalloc, tcmalloc and mimalloc) under run --policy P: every page of every block on the
 *      node of P's map (the programs report their pages' nodes with move_pages), each block
 *      aligned and its data checked, as many blocks as in a plain run;
 *   4. memory limits: in a cgroup v2 with memory.max = 200 MiB, exit_styles mallocs 600 MiB and
 *      writes 50 MiB: it must succeed under run --policy cyclic, bind_block and skew_mapp as it
 *      does alone, with a peak resident size under 100 MiB (placement populated all 600 MiB and
 *      the OOM killer ended it before lazy placement); and under RLIMIT_AS = 800 MiB.
 *   guest_run_progs --child POLICY MIB   the child role (run under numaplace run): every style.
 * About twenty numaplace runs in all: seconds each under TCG. */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PSZ 4096
static int N = 1, K = 1;

static void *free_it(void *p)
{
    free(p);
    return NULL;
}

/* the block of STYLE; *placed_bytes gets the size the block was placed with */
static unsigned char *alloc_style(const char *style, size_t bytes, size_t *placed_bytes)
{
    void *p = NULL;
    *placed_bytes = bytes;
    if (!strcmp(style, "malloc") || !strcmp(style, "thread_free"))
        p = malloc(bytes);
    else if (!strcmp(style, "calloc"))
        p = calloc(bytes / 64, 64);
    else if (!strcmp(style, "posix_memalign") && posix_memalign(&p, 64, bytes))
        p = NULL;
    else if (!strcmp(style, "aligned_alloc"))
        p = aligned_alloc(4096, bytes);
    else if (!strcmp(style, "valloc"))
        p = valloc(bytes);
    else if (!strcmp(style, "memalign"))
        p = memalign(256, bytes);
    else if (!strcmp(style, "realloc_grow") && (p = malloc(bytes / 2))) {
        memset(p, 0x77, bytes / 2);
        p = realloc(p, bytes);
    } else if (!strcmp(style, "realloc_shrink") && (p = malloc(bytes * 2))) {
        memset(p, 0x77, bytes);
        p = realloc(p, bytes); /* kept in place: placed with the old size */
        *placed_bytes = bytes * 2;
    }
    return p;
}

static int child_style(const char *style, const npl_policy *p, size_t mib)
{
    size_t bytes = mib << 20, placed, npages = bytes / PSZ;
    unsigned char *a = alloc_style(style, bytes, &placed);
    if (!a) {
        printf("child %s: no memory\n", style);
        return 1;
    }
    size_t kept = 0;
    if (!strncmp(style, "realloc", 7))
        for (size_t i = 0; i < bytes / 2; i++)
            kept += a[i] != 0x77;
    memset(a, 0x5a, bytes);
    size_t mpages = placed / PSZ, bad = 0;
    int *want = malloc(mpages * sizeof *want), *got = malloc(npages * sizeof *got);
    int rc = want && got ? npl_policy_map(p, NULL, NULL, placed, PSZ, 0, mpages, want) : -1;
    int q = rc < 0 ? -1 : npl_query_pages(a, bytes, got, npages);
    for (size_t i = 0; i < npages && rc >= 0; i++)
        bad += got[i] != want[i];
    int aligned = (uintptr_t)a % PSZ == 0;
    printf("child %s: %zu pages, %zu misplaced, %zu bytes lost, aligned %d, map %d, query %d\n",
           style, npages, bad, kept, aligned, rc, q);
    pthread_t t;
    if (!strcmp(style, "thread_free") && pthread_create(&t, NULL, free_it, a) == 0)
        pthread_join(t, NULL);
    else
        free(a);
    free(want);
    free(got);
    return rc >= 0 && q == (int)npages && !bad && !kept && aligned ? 0 : 1;
}

static const char *styles[] = {"malloc", "calloc", "realloc_grow", "realloc_shrink",
                               "posix_memalign", "aligned_alloc", "valloc", "memalign",
                               "thread_free"};
#define NSTYLES (sizeof styles / sizeof *styles)

/* every style in this one process (each numaplace run costs seconds under TCG); the exit status
 * is the number of styles misplaced */
static int child(const char *polstr, size_t mib)
{
    npl_policy *p = NULL;
    if (npl_policy_parse(&p, polstr) < 0)
        return 100;
    int bad = 0;
    for (size_t s = 0; s < NSTYLES; s++)
        bad += child_style(styles[s], p, mib);
    npl_policy_free(p);
    return bad;
}

static const char *progs_dir(void)
{
    return getenv("NPL_PROGS") ? getenv("NPL_PROGS") : "/usr/local/bin"; /* the guest's */
}

static int run_to(const char *out, char *const argv[])
{
    return spawn_to(out, NULL, argv);
}

static void test_styles(const char *self)
{
    const char *pols[] = {"cyclic", "skew_mapp"};
    for (size_t p = 0; p < 2; p++) {
        int rc = run_to("/tmp/grp_child.txt",
                        (char *const[]){"numaplace", "run", "--policy", (char *)pols[p], "--",
                                        (char *)self, "--child", (char *)pols[p], "2", NULL});
        FILE *f = fopen("/tmp/grp_child.txt", "r");
        char line[256];
        size_t n = 0;
        while (f && fgets(line, sizeof line, f)) {
            int ok = strstr(line, " 0 misplaced, 0 bytes lost, aligned 1") != NULL;
            n += ok;
            if (!ok)
                printf("  | %s", line);
        }
        if (f)
            fclose(f);
        CHECK(rc == 0 && n == NSTYLES, "run --policy %s: %zu of %zu allocation styles placed page "
              "by page, data kept (status %d)", pols[p], n, NSTYLES, rc);
    }
}

/* an OpenMP child started by MODE under run --pin scatter: N*K threads, each alone on its CPU */
static void test_children(void)
{
    const char *dir = progs_dir();
    char probe[4096], spawner[4096];
    snprintf(probe, sizeof probe, "%s/omp_probe_gcc", dir);
    snprintf(spawner, sizeof spawner, "%s/spawner", dir);
    int there = access(probe, X_OK) == 0 && access(spawner, X_OK) == 0;
    CHECK(there, "%s and %s are in this guest (tests/guest/run.sh adds build/progs)", probe,
          spawner);
    if (!there)
        return;
    /* one run (each costs seconds under TCG): the spawner starts the probe once per mode (not
     * through the guest's sh: it is static busybox, so the spawner would not be pinned) */
    const char *modes = "system,popen,spawn,vfork,fork,execv";
    int rc = run_to("/tmp/grp_pin.txt", (char *const[]){"numaplace", "run", "--pin", "scatter",
                                                        "--", spawner, (char *)modes, probe, NULL});
    FILE *f = fopen("/tmp/grp_pin.txt", "r");
    int t, cpu, n = 0, bad = 0;
    char mask[256], rt[32];
    while (f && fscanf(f, "thread %d cpu %d mask %255s runtime %31s\n", &t, &cpu, mask, rt) == 4) {
        char w[16];
        snprintf(w, sizeof w, "%d", npl_pin_cpu(NULL, "scatter", t));
        bad += atoi(w) != cpu || strcmp(mask, w);
        n++;
    }
    if (f)
        fclose(f);
    CHECK(rc == 0 && n == 6 * N * K && !bad, "run --pin scatter, an OpenMP child by each of %s: "
          "%d threads (want %d), %d not alone on their CPU, status %d", modes, n, 6 * N * K, bad,
          rc);
}

/* Lines of an align_styles / cxx_align run with --nodes: "STYLE ALIGN ok O aligned A offset OFF
 * nodes S". Each block of `bytes` bytes must be ok and aligned and each of its pages on the node
 * that pol's map gives: our own blocks from their first page (the map over `bytes`), a foreign
 * allocator's (placed where it put them) from their first whole page (the map over the whole
 * pages inside). *blocks gets the number of blocks, the return value the number of bad ones. */
static int check_blocks(const char *file, const npl_policy *pol, size_t bytes, int foreign,
                        int quiet, int *blocks)
{
    FILE *f = fopen(file, "r");
    size_t cap = 1 << 20;
    char *line = malloc(cap), *nodes = malloc(cap);
    int bad = 0, *want = malloc((bytes / PSZ + 2) * sizeof *want);
    *blocks = 0;
    while (f && line && nodes && want && fgets(line, (int)cap, f)) {
        char style[64];
        size_t align, off;
        int ok, aligned;
        if (sscanf(line, "%63s %zu ok %d aligned %d offset %zu nodes %s", style, &align, &ok,
                   &aligned, &off, nodes) != 6)
            continue;
        ++*blocks;
        size_t first = off ? 1 : 0, whole = (bytes - (off ? PSZ - off : 0)) / PSZ;
        size_t count = foreign ? whole : (bytes + PSZ - 1) / PSZ;
        int rc = foreign ? npl_policy_map(pol, NULL, NULL, whole * PSZ, PSZ, 0, count, want)
                         : npl_policy_map(pol, NULL, NULL, bytes, PSZ, 0, count, want);
        size_t wrong = 0;
        for (size_t i = 0; rc == 0 && i < count; i++) {
            char c = first + i < strlen(nodes) ? nodes[first + i] : '?';
            int got = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : -1;
            wrong += got != want[i];
        }
        if (!ok || !aligned || rc || wrong || (!foreign && off)) {
            bad++;
            if (bad <= 3 && !quiet)
                printf("  | %s %zu: ok %d aligned %d offset %zu, %zu of %zu pages off the map\n",
                       style, align, ok, aligned, off, wrong, count);
        }
    }
    if (f)
        fclose(f);
    free(line);
    free(nodes);
    free(want);
    return bad;
}

static void test_align(void)
{
    static const struct { const char *prog, *pol; int foreign; } runs[] = {
        {"align_styles", "cyclic", 0},          {"align_styles", "skew_mapp", 0},
        {"align_styles", "cyclic_block:4", 0},   {"cxx_align", "cyclic", 0},
        {"cxx_align", "skew_mapp", 0},           {"align_styles_jemalloc", "skew_mapp", 1},
        {"cxx_align_jemalloc", "skew_mapp", 1},  {"align_styles_tcmalloc", "skew_mapp", 1},
        {"align_styles_mimalloc", "skew_mapp", 1},
    };
    size_t bytes = (size_t)(1024 + 20) << 10; /* the programs' default block */
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        char prog[4096];
        snprintf(prog, sizeof prog, "%s/%s", progs_dir(), runs[r].prog);
        if (access(prog, X_OK)) {
            SKIP("prog-allocator", "%s missing (its allocator's -dev package: scripts/deps.sh)", prog);
            continue;
        }
        npl_policy *pol = NULL;
        if (npl_policy_parse(&pol, runs[r].pol) < 0)
            continue;
        int rc0 = run_to("/tmp/grp_align0.txt", (char *const[]){prog, "--nodes", NULL});
        int rc = run_to("/tmp/grp_align.txt",
                        (char *const[]){"numaplace", "run", "--policy", (char *)runs[r].pol, "--",
                                        prog, "--nodes", NULL});
        int plain, blocks, bad = check_blocks("/tmp/grp_align.txt", pol, bytes, runs[r].foreign,
                                              0, &blocks);
        int off = check_blocks("/tmp/grp_align0.txt", pol, bytes, runs[r].foreign, 1, &plain);
        printf("run --policy %s -- %s: %d of %d blocks off the map (%d of %d in a plain run)\n",
               runs[r].pol, runs[r].prog, bad, blocks, off, plain);
        CHECK(rc == 0 && rc0 == 0 && blocks == plain && blocks >= 60 && bad == 0,
              "run --policy %s -- %s: %d of %d blocks (every entry point, alignments 8 B..2 MiB) "
              "off their map, misaligned or corrupt (status %d, plain %d)", runs[r].pol,
              runs[r].prog, bad, blocks, rc, rc0);
        npl_policy_free(pol);
    }
}

static int write_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
    close(fd);
    return r;
}

/* exit_styles sparse 600 50 (under run --policy pol, or alone when pol is NULL) in the cgroup
 * cg (NULL: none) and under RLIMIT_AS = as_mib (0: none); its status and peak resident MiB */
static int sparse_run(const char *cg, size_t as_mib, const char *pol, long *peak)
{
    char prog[4096];
    snprintf(prog, sizeof prog, "%s/exit_styles", progs_dir());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char me[32], procs[256];
        snprintf(me, sizeof me, "%d", getpid());
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cg ? cg : "");
        if (cg && write_file(procs, me) < 0)
            _exit(124);
        struct rlimit rl = {(rlim_t)as_mib << 20, (rlim_t)as_mib << 20};
        if (as_mib && setrlimit(RLIMIT_AS, &rl) < 0)
            _exit(123);
        if (!freopen("/tmp/grp_sparse.txt", "w", stdout))
            _exit(125);
        if (pol)
            execlp("numaplace", "numaplace", "run", "--policy", pol, "--", prog, "sparse", "600",
                   "50", (char *)NULL);
        else
            execl(prog, prog, "sparse", "600", "50", (char *)NULL);
        _exit(127);
    }
    int st = 0, ok = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen("/tmp/grp_sparse.txt", "r");
    char line[256];
    *peak = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "sparse %d peak_mib %ld", &ok, peak) == 2)
            break;
    if (f)
        fclose(f);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return rc == 0 && !ok ? 1 : rc;
}

static void test_memory_limits(void)
{
    const char *cg = "/sys/fs/cgroup/npl_mem";
    mkdir("/sys/fs/cgroup", 0755);
    if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0)
        if (system("mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null")) {
        }
    write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
    mkdir(cg, 0755);
    if (write_file("/sys/fs/cgroup/npl_mem/memory.max", "209715200") < 0) {
        SKIP("cgroup-v2-memory", "no cgroup v2 memory controller here (%s): the memory.max cases",
             strerror(errno));
    } else {
        long peak;
        int rc = sparse_run(cg, 0, NULL, &peak);
        printf("memory.max 200 MiB, alone: status %d, peak %ld MiB\n", rc, peak);
        CHECK(rc == 0 && peak >= 0 && peak < 100, "memory.max 200 MiB, 600 MiB malloc'ed and 50 "
              "written, alone: status %d, peak %ld MiB", rc, peak);
        const char *pols[] = {"cyclic", "bind_block", "skew_mapp", "cyclic_block:4"};
        for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
            rc = sparse_run(cg, 0, pols[i], &peak);
            printf("memory.max 200 MiB, run --policy %s: status %d, peak %ld MiB\n", pols[i], rc,
                   peak);
            CHECK(rc == 0 && peak >= 0 && peak < 100, "memory.max 200 MiB, 600 MiB malloc'ed and "
                  "50 written, under run --policy %s: status %d (137: OOM-killed), peak %ld MiB "
                  "(want < 100)", pols[i], rc, peak);
        }
    }
    const char *as_pols[] = {"cyclic", "skew_mapp"};
    for (size_t i = 0; i < 2; i++) {
        long peak;
        int rc0 = sparse_run(NULL, 800, NULL, &peak);
        int rc = sparse_run(NULL, 800, as_pols[i], &peak);
        CHECK(rc == 0 && rc0 == 0, "RLIMIT_AS 800 MiB, 600 MiB malloc'ed and 50 written, under run "
              "--policy %s: status %d (alone: %d)", as_pols[i], rc, rc0);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child"))
        return child(argv[2], (size_t)atol(argv[3]));
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
    }
    numa_balancing_off(); /* exact placement checks */
    const npl_topo *t = npl_topo_self();
    CHECK(t && npl_topo_node_count(t, 0) == N, "this machine has %d usable nodes, --nodes says %d",
          t ? npl_topo_node_count(t, 0) : -1, N);
    if (t && npl_topo_node_count(t, 0) != N)
        N = npl_topo_node_count(t, 0);
    if (t)
        K = npl_topo_cpu_count(t) / (N > 0 ? N : 1);
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    test_styles(self);
    test_children();
    test_align();
    test_memory_limits();
    return check_summary("guest_run_progs");
}
