/* guest_cli - `numaplace run / where / measure / report` end to end, INSIDE the multi-node guest
 * (also runs on the host: one node, trivial but exact). Two roles in one binary:
 *
 *   guest_cli --nodes N --cpus-per-node K [--big-mib M]    the driver (what tests/guest/run.sh runs)
 *   guest_cli --child-alloc POLICY MIB                      under `numaplace run --policy POLICY`:
 *        mallocs MIB MiB, writes it, checks every page with move_pages against the policy's map,
 *        and checks that `numaplace where --json <its pid>` reports the same per-node counts
 *   guest_cli --child-pin STRATEGY T [CPULIST]              under `numaplace run --pin STRATEGY`:
 *        creates T-1 threads; thread n must be bound to exactly npl_pin_cpu(STRATEGY, n), and
 *        every CPU inside CPULIST (the taskset mask) when given
 *
 * Exit status of a child: 0 exact, 3 mismatch. The driver prints "N passed, M failed". */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PSZ 4096

static int N = 1, K = 1;

/* ---- child: an unmodified program's large array ---- */
static int child_alloc(const char *polstr, size_t mib)
{
    size_t bytes = mib << 20, npages = bytes / PSZ;
    unsigned char *a = malloc(bytes);
    if (!a) {
        printf("child: malloc failed\n");
        return 3;
    }
    memset(a, 0x5a, bytes); /* the program writes its array, as programs do */
    int aligned = ((uintptr_t)a % PSZ) == 0;
    npl_policy *p = pol(polstr);
    int *want = malloc(npages * sizeof *want), *got = malloc(npages * sizeof *got);
    int rc = npl_policy_map(p, NULL, NULL, bytes, PSZ, 0, npages, want);
    int q = npl_query_pages(a, bytes, got, npages);
    size_t bad = 0, per[64] = {0};
    for (size_t i = 0; i < npages; i++) {
        if (got[i] != want[i])
            bad++;
        if (got[i] >= 0 && got[i] < 64)
            per[got[i]]++;
    }
    printf("child %s: %zu pages, %zu misplaced, page-aligned %d (map %d, query %d)\n", polstr,
           npages, bad, aligned, rc, q);
    /* numaplace where on this very process: the mapping that starts at the array */
    char cmd[128], *out = malloc(1 << 20);
    snprintf(cmd, sizeof cmd, "numaplace where --json %d", (int)getpid());
    FILE *f = popen(cmd, "r");
    size_t n = f ? fread(out, 1, (1 << 20) - 1, f) : 0;
    out[n] = 0;
    int st = f ? pclose(f) : -1;
    char key[64];
    snprintf(key, sizeof key, "\"start\": \"0x%lx\"", (unsigned long)(uintptr_t)a);
    char *m = strstr(out, key);
    int where_ok = st == 0 && m;
    for (int k = 0; where_ok && k < 64; k++) {
        if (!per[k])
            continue;
        char w[48];
        snprintf(w, sizeof w, "\"%d\": %zu", k, per[k]);
        char *pages = strstr(m, "\"pages\""), *end = pages ? strchr(pages, '}') : NULL;
        char *hit = pages ? strstr(pages, w) : NULL;
        where_ok = hit && hit < end;
        if (!where_ok)
            printf("child: where does not report %s for the array\n", w);
    }
    printf("child %s: where agrees %d (status %d)\n", polstr, where_ok, st);
    free(out);
    free(want);
    free(got);
    free(a);
    npl_policy_free(p);
    return rc >= 0 && q == (int)npages && bad == 0 && aligned && where_ok ? 0 : 3;
}

/* ---- child: threads as an unmodified pthreads program creates them ---- */
struct slot {
    int cpu_bound; /* the one CPU of the thread's mask, -1 if more than one */
    int inside;    /* every CPU of the mask in the allowed list */
};
static struct slot slots[256];
static int allowed[1024], nallowed;

static void record(int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    slots[n].cpu_bound = -1;
    slots[n].inside = 1;
    if (CPU_COUNT(&s) == 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &s))
                slots[n].cpu_bound = c;
    for (int c = 0; c < CPU_SETSIZE && nallowed; c++) {
        int ok = 0;
        for (int k = 0; k < nallowed; k++)
            ok |= allowed[k] == c;
        if (CPU_ISSET(c, &s) && !ok)
            slots[n].inside = 0;
    }
}

static pthread_barrier_t bar;
static void *thread_main(void *arg)
{
    record((int)(intptr_t)arg);
    pthread_barrier_wait(&bar);
    return NULL;
}

static int child_pin(const char *strategy, int t, const char *mask)
{
    if (mask) {
        char *s = strdup(mask), *save = NULL;
        for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            allowed[nallowed++] = atoi(tok);
        free(s);
    }
    if (t > 256)
        t = 256;
    record(0);
    pthread_barrier_init(&bar, NULL, (unsigned)t);
    pthread_t th[256];
    for (int i = 1; i < t; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    pthread_barrier_wait(&bar);
    for (int i = 1; i < t; i++)
        pthread_join(th[i], NULL);
    int bad = 0;
    for (int i = 0; i < t; i++) {
        int want = npl_pin_cpu(NULL, strategy, i);
        int node = npl_topo_cpu_node(npl_topo_self(), slots[i].cpu_bound);
        printf("child pin %s: thread %d on CPU %d (node %d), expected CPU %d%s\n", strategy, i,
               slots[i].cpu_bound, node, want, slots[i].inside ? "" : " OUTSIDE the mask");
        bad += slots[i].cpu_bound != want || !slots[i].inside;
    }
    return bad ? 3 : 0;
}

/* ---- driver ---- */
/* run argv (NULL-terminated), optionally with a CPU mask; returns the exit status */
static int run(const int *cpus, int ncpus, char *const argv[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (ncpus) {
            cpu_set_t s;
            CPU_ZERO(&s);
            for (int i = 0; i < ncpus; i++)
                CPU_SET(cpus[i], &s);
            if (sched_setaffinity(0, sizeof s, &s) < 0)
                _exit(124);
        }
        execvp(argv[0], argv);
        _exit(errno == ENOENT ? 127 : 126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#define RUN(...) run(NULL, 0, (char *const[]){__VA_ARGS__, NULL})

static void test_policies(const char *self, size_t mib)
{
    char w[64];
    snprintf(w, sizeof w, "weighted:0=3,%d=1", N - 1);
    char ba[32];
    snprintf(ba, sizeof ba, "bind_all:%d", N - 1);
    const char *pols[] = {"cyclic", ba, "skew_mapp", N > 1 ? w : "weighted:0=1", "prime_mapp",
                          "cyclic_block:3"};
    char sz[32];
    snprintf(sz, sizeof sz, "%zu", mib);
    for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
        int rc = RUN("numaplace", "run", "--policy", (char *)pols[i], "--", (char *)self,
                     "--child-alloc", (char *)pols[i], sz);
        CHECK(rc == 0, "numaplace run --policy %s: the program's malloc'ed %zu MiB array is "
                       "placed exactly and where agrees (status %d)", pols[i], mib, rc);
    }
    /* --threshold above the array: not intercepted, so not page-exact for skew_mapp on >1 node */
    if (N > 1) {
        int rc = RUN("numaplace", "run", "--policy", "skew_mapp", "--threshold", "1G", "--",
                     (char *)self, "--child-alloc", "skew_mapp", sz);
        CHECK(rc == 3, "--threshold 1G leaves a %zu MiB array to the real allocator (status %d)",
              mib, rc);
    }
}

static void test_pin(const char *self)
{
    char t[16];
    snprintf(t, sizeof t, "%d", N * K + 1); /* more threads than CPUs: wraps around */
    int rc = RUN("numaplace", "run", "--pin", "scatter", "--", (char *)self, "--child-pin",
                 "scatter", t);
    CHECK(rc == 0, "numaplace run --pin scatter: thread n bound to the n-th scatter CPU (%s "
                   "threads, status %d)", t, rc);
    rc = RUN("numaplace", "run", "--pin", "compact", "--", (char *)self, "--child-pin", "compact", t);
    CHECK(rc == 0, "numaplace run --pin compact (status %d)", rc);
    /* taskset: the CPUs of the last node plus CPU 0: pins stay inside */
    int cpus[64], n = 0;
    cpus[n++] = 0;
    for (int k = 0; k < K && N > 1; k++)
        cpus[n++] = (N - 1) * K + k;
    char mask[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(mask + strlen(mask), sizeof mask - strlen(mask), "%s%d", i ? "," : "", cpus[i]);
    rc = run(cpus, n, (char *const[]){"numaplace", "run", "--pin", "scatter", "--", (char *)self,
                                      "--child-pin", "scatter", t, mask, NULL});
    CHECK(rc == 0, "taskset mask %s respected by --pin scatter (status %d)", mask, rc);
}

static void test_errors(void)
{
    CHECK(RUN("numaplace", "run", "--policy", "cyclik", "--", "true") == 2, "unknown policy: 2");
    CHECK(RUN("numaplace", "run", "--nodes", "77", "--", "true") == 2, "node outside: 2");
    CHECK(RUN("numaplace", "run", "--", "/no/such/prog") == 127, "program not found: 127");
    CHECK(RUN("numaplace", "where", "999999999") == 1, "where on a gone PID: 1");
}

static int file_has(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return strstr(buf, what) != NULL;
}

static void test_measure_report(void)
{
    const char *conf = "/tmp/guest_cli_measure.conf";
    int rc = RUN("numaplace", "measure", "--quick", "--out", (char *)conf);
    npl_config *c = NULL;
    int nodes[64];
    double lat[64 * 64], bw[64 * 64];
    int lr = rc == 0 ? npl_config_load(&c, conf) : -1;
    int n = c ? npl_config_factors(c, nodes, lat, bw, 64) : -1;
    int pos = n > 0;
    for (int i = 0; i < n * n && pos; i++)
        pos = lat[i] > 0 && bw[i] > 0;
    CHECK(rc == 0 && lr == 0 && n == N && pos,
          "measure --quick: a config with an %dx%d factor matrix, all measured (status %d, load "
          "%d: %s, n %d)", N, N, rc, lr, lr ? npl_last_error() : "", n);
    npl_config_free(c);
    rc = RUN("numaplace", "report", "--quick", "--no-plots", "--out", "/tmp/guest_cli_report");
    char key[64];
    snprintf(key, sizeof key, "\"nnodes\": %d", N);
    CHECK(rc == 0 && file_has("/tmp/guest_cli_report/results.json", key) &&
              file_has("/tmp/guest_cli_report/results.json", "\"recommendations\"") &&
              file_has("/tmp/guest_cli_report/index.html", "<html"),
          "report --quick: results.json (%d nodes, recommendations) and index.html (status %d)",
          N, rc);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child-alloc"))
        return child_alloc(argv[2], (size_t)atol(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "--child-pin"))
        return child_pin(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
    size_t mib = 16;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
    }
    /* exact placement checks: automatic NUMA balancing would move pages under us */
    FILE *b = fopen("/proc/sys/kernel/numa_balancing", "w");
    if (b) {
        fputs("0", b);
        fclose(b);
    }
    const npl_topo *t = npl_topo_self();
    if (t && npl_topo_node_count(t, 0) != N) {
        printf("SKIP: this machine has %d usable nodes, not %d\n", npl_topo_node_count(t, 0), N);
        N = npl_topo_node_count(t, 0);
    }
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    test_errors();
    test_policies(self, mib);
    test_pin(self);
    test_measure_report();
    printf("guest_cli: %d passed, %d failed\n", t_pass, t_fail);
    return t_fail ? 1 : 0;
}
