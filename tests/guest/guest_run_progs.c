/* guest_run_progs - numaplace run on programs written in different styles, in a multi-node guest
 * (adapts to --nodes N --cpus-per-node K):
 *   1. every C allocation style (malloc, calloc, realloc growing and shrinking, posix_memalign,
 *      aligned_alloc, valloc, memalign, a block freed by another thread) under run --policy P:
 *      each page on the node P's map gives it (queried page by page), the data kept;
 *   2. children of a --pin run (a shell, system, popen, posix_spawn, vfork, exec) start on every
 *      CPU of the process: an OpenMP child (omp_probe_gcc) has N*K threads, thread t alone on
 *      the CPU --pin gives thread t (before the fix they all shared the parent's one CPU).
 *   guest_run_progs --child POLICY MIB   the child role (run under numaplace run): every style.
 * Three numaplace runs in all: seconds each under TCG. */
#define _GNU_SOURCE
#include "check.h"

#include <malloc.h>
#include <pthread.h>
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

static int run_to(const char *out, char *const argv[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout))
            _exit(125);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
    const char *dir = getenv("NPL_PROGS") ? getenv("NPL_PROGS") : "/usr/local/bin"; /* the guest's */
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
    return check_summary("guest_run_progs");
}
