/* guest_run_progs - numaplace run on programs written in different styles, in a multi-node guest
 * (adapts to --nodes N --cpus-per-node K):
 *   1. every C allocation style (malloc, calloc, realloc growing and shrinking, posix_memalign,
 *      aligned_alloc, valloc, memalign, a block freed by another thread) under run --policy P:
 *      each page on the node P's map gives it (queried page by page), the data kept;
 *   2. children of a --pin run (a shell, system, popen, posix_spawn, vfork, exec) start on every
 *      CPU of the process: an OpenMP child (omp_probe_gcc) has N*K threads, thread t alone on
 *      the CPU --pin gives thread t (before the fix they all shared the parent's one CPU).
 *   guest_run_progs --child STYLE POLICY MIB   the child role (run under numaplace run). */
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

/* the block of STYLE; *pages_of gets the size the block was placed with */
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

static int child(const char *style, const char *polstr, size_t mib)
{
    size_t bytes = mib << 20, placed, npages = bytes / PSZ;
    unsigned char *a = alloc_style(style, bytes, &placed);
    if (!a) {
        printf("child %s: no memory\n", style);
        return 3;
    }
    size_t kept = 0;
    if (!strncmp(style, "realloc", 7))
        for (size_t i = 0; i < bytes / 2; i++)
            kept += a[i] != 0x77;
    memset(a, 0x5a, bytes);
    npl_policy *p = NULL;
    size_t mpages = placed / PSZ, bad = 0;
    int *want = malloc(mpages * sizeof *want), *got = malloc(npages * sizeof *got);
    int rc = npl_policy_parse(&p, polstr) == 0 && want && got
                 ? npl_policy_map(p, NULL, NULL, placed, PSZ, 0, mpages, want) : -1;
    int q = npl_query_pages(a, bytes, got, npages);
    for (size_t i = 0; i < npages && rc >= 0; i++)
        bad += got[i] != want[i];
    int aligned = (uintptr_t)a % PSZ == 0;
    printf("child %s %s: %zu pages, %zu misplaced, %zu bytes lost, aligned %d\n", style, polstr,
           npages, bad, kept, aligned);
    pthread_t t;
    if (!strcmp(style, "thread_free") && pthread_create(&t, NULL, free_it, a) == 0)
        pthread_join(t, NULL);
    else
        free(a);
    free(want);
    free(got);
    npl_policy_free(p);
    return rc >= 0 && q == (int)npages && !bad && !kept && aligned ? 0 : 3;
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
    const char *styles[] = {"malloc", "calloc", "realloc_grow", "realloc_shrink",
                            "posix_memalign", "aligned_alloc", "valloc", "memalign",
                            "thread_free"};
    const char *pols[] = {"cyclic", "skew_mapp"};
    for (size_t p = 0; p < 2; p++)
        for (size_t s = 0; s < sizeof styles / sizeof *styles; s++) {
            int rc = run_to("/tmp/grp_child.txt",
                            (char *const[]){"numaplace", "run", "--policy", (char *)pols[p], "--",
                                            (char *)self, "--child", (char *)styles[s], (char *)pols[p],
                                            "4", NULL});
            FILE *f = fopen("/tmp/grp_child.txt", "r");
            char line[256] = "";
            if (f && !fgets(line, sizeof line, f))
                line[0] = 0;
            if (f)
                fclose(f);
            CHECK(rc == 0, "run --policy %s: %s block placed page by page, data kept (status %d: "
                  "%s)", pols[p], styles[s], rc, line);
        }
}

/* an OpenMP child started by MODE under run --pin scatter: N*K threads, each alone on its CPU */
static void test_children(void)
{
    const char *dir = getenv("NPL_PROGS") ? getenv("NPL_PROGS") : "/usr/local/bin"; /* the guest's */
    char probe[4096], spawner[4096];
    snprintf(probe, sizeof probe, "%s/omp_probe_gcc", dir);
    snprintf(spawner, sizeof spawner, "%s/spawner", dir);
    if (access(probe, X_OK) || access(spawner, X_OK)) {
        printf("SKIP: %s or %s missing\n", probe, spawner);
        return;
    }
    const char *modes[] = {"sh", "system", "popen", "spawn", "vfork", "execv"};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        int rc = !strcmp(modes[m], "sh")
                     ? run_to("/tmp/grp_pin.txt", (char *const[]){"numaplace", "run", "--pin",
                              "scatter", "--", "sh", "-c", probe, NULL})
                     : run_to("/tmp/grp_pin.txt", (char *const[]){"numaplace", "run", "--pin",
                              "scatter", "--", spawner, (char *)modes[m], probe,
                              NULL});
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
        CHECK(rc == 0 && n == N * K && !bad, "run --pin scatter, OpenMP child by %s: %d threads "
              "(want %d), %d not alone on their CPU, status %d", modes[m], n, N * K, bad, rc);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "--child"))
        return child(argv[2], argv[3], (size_t)atol(argv[4]));
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
    }
    FILE *b = fopen("/proc/sys/kernel/numa_balancing", "w"); /* exact placement checks */
    if (b) {
        fputs("0", b);
        fclose(b);
    }
    const npl_topo *t = npl_topo_self();
    if (t && npl_topo_node_count(t, 0) != N) {
        printf("SKIP: this machine has %d usable nodes, not %d\n", npl_topo_node_count(t, 0), N);
        N = npl_topo_node_count(t, 0);
    }
    if (t)
        K = npl_topo_cpu_count(t) / (N > 0 ? N : 1);
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    test_styles(self);
    test_children();
    printf("guest_run_progs: %d passed, %d failed\n", t_pass, t_fail);
    return t_fail ? 1 : 0;
}
