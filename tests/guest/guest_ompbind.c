/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_ompbind - an OpenMP program's own binding under numaplace run, in a multi-node guest
 * (adapts to --nodes N --cpus-per-node K; C = N*K CPUs):
 *   1. for every binding form (OMP_PLACES: cores, threads, sockets, ll_caches, numa_domains,
 *      explicit lists and intervals, a count; OMP_PROC_BIND: true, close, spread, master,
 *      primary, false, a nested list; GOMP_CPU_AFFINITY; KMP_AFFINITY compact, scatter,
 *      explicit) and both runtimes (gcc/libgomp, clang/libomp; gcc on a preloaded libomp for the
 *      five main forms), the probe (build/progs/omp_probe.c) runs plain and under
 *      `numaplace run --` (the main forms under `numaplace run --policy cyclic --` too; the host's
 *      cli.ompbind runs every form in every mode): each thread's mask, its CPU when the mask is one CPU and
 *      its node when the mask lies in one node must be the plain run's. Before the fix, numaplace's
 *      own libgomp bound numaplace to the first place before main and the program inherited that
 *      one CPU: OMP_PLACES=cores put all threads on node 0.
 *   2. the plain runs bind as the form says (thread t alone on CPU t under cores/close; the threads
 *      on all N nodes), so that a probe that binds nothing cannot pass 1 by accident;
 *   3. run's oversubscription warning fires exactly for the forms that put more threads than CPUs
 *      on the places (cores(2) with 4 threads, master with 2), never for the others;
 *   4. --pin replaces the program's binding: thread t on --pin's CPU t, and one note;
 *   5. the interposer's view of the process's CPUs is the one it started with, not the one CPU
 *      libgomp binds the initial thread to before the interposer's constructor runs:
 *      run --policy cyclic@local under OMP_PLACES=cores OMP_PROC_BIND=close interleaves over all
 *      N nodes (guest_ompbind --child-local MIB counts the pages per node).
 * numaplace, the probes and libomp.so.5 are in /usr/local/bin (tests/guest/run.sh). */
#define _GNU_SOURCE
#include "check.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static int N = 1, K = 1, C = 1;
static const char *dir = "/usr/local/bin";

#define MAXT 64

struct probe {
    int n;                /* threads */
    int cpu[MAXT];
    uint64_t mask[MAXT];  /* CPU ids < 64 */
    char runtime[32];
};

/* runs argv with env (NAME=VALUE strings, NULL-ended) added; stdout and stderr to files */
static int run_env(char *const env[], char *const argv[], const char *out, const char *err)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(125);
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int read_probe(const char *path, struct probe *p)
{
    FILE *f = fopen(path, "r");
    char mask[512];
    int t, cpu;
    p->n = 0;
    while (f && fscanf(f, "thread %d cpu %d mask %511s runtime %31s\n", &t, &cpu, mask,
                       p->runtime) == 4) {
        if (t != p->n || t >= MAXT)
            break;
        p->cpu[t] = cpu;
        p->mask[t] = 0;
        for (char *s = mask, *end; *s; s = *end ? end + 1 : end) {
            long c = strtol(s, &end, 10);
            if (end == s || c < 0 || c >= 64)
                break;
            p->mask[t] |= 1ull << c;
        }
        p->n++;
    }
    if (f)
        fclose(f);
    return p->n;
}

static int node_of(int cpu) { return npl_topo_cpu_node(npl_topo_self(), cpu); }

/* the node of every CPU of mask, or -1 when they are on several nodes */
static int mask_node(uint64_t mask)
{
    int node = -2;
    for (int c = 0; c < 64; c++)
        if (mask >> c & 1) {
            int n = node_of(c);
            node = node == -2 || node == n ? n : -1;
        }
    return node < 0 ? -1 : node;
}

/* thread by thread: the same mask, the same CPU when it is one CPU, the same node when the
 * mask is on one node. Returns the first thread that differs, or -1 */
static int first_difference(const struct probe *a, const struct probe *b)
{
    if (a->n != b->n)
        return a->n < b->n ? a->n : b->n;
    for (int t = 0; t < a->n; t++) {
        int single = __builtin_popcountll(a->mask[t]) == 1;
        int na = node_of(a->cpu[t]), nb = node_of(b->cpu[t]);
        if (a->mask[t] != b->mask[t] || (single && a->cpu[t] != b->cpu[t]) ||
            (mask_node(a->mask[t]) >= 0 && na != nb))
            return t;
    }
    return -1;
}

static void show_probe(const char *what, const struct probe *p)
{
    printf("  | %-7s", what);
    for (int t = 0; t < p->n; t++)
        printf(" t%d:cpu%d/node%d/mask%llx", t, p->cpu[t], node_of(p->cpu[t]),
               (unsigned long long)p->mask[t]);
    printf("\n");
}

static int count_in(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return n;
}

struct form {
    char vars[3][640]; /* NAME=VALUE, "" unused */
    int threads;       /* OMP_NUM_THREADS, 0: the runtime's default */
    int warn;          /* run must warn of oversubscription */
    int check;         /* 2.: 1 thread t alone on CPU t, 2 the threads on all N nodes */
    int main;          /* a main form: also under run --policy cyclic, and as gcc on a
                        * preloaded libomp (each run costs seconds under TCG) */
};

static int make_forms(struct form *f)
{
    int n = 0;
    char list[512] = "", rev[512] = "", kmp[600], gomp[512] = "";
    for (int c = C - 1; c >= 0; c--) {
        snprintf(rev + strlen(rev), sizeof rev - strlen(rev), "%s{%d}", c == C - 1 ? "" : ",", c);
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", c == C - 1 ? "" : ",", c);
        snprintf(gomp + strlen(gomp), sizeof gomp - strlen(gomp), "%s%d", c == C - 1 ? "" : " ", c);
    }
    snprintf(kmp, sizeof kmp, "KMP_AFFINITY=granularity=fine,explicit,proclist=[%s]", list);
#define FORM(a, b, th, w, chk)                                                                     \
    do {                                                                                           \
        memset(&f[n], 0, sizeof f[n]);                                                             \
        snprintf(f[n].vars[0], sizeof f[n].vars[0], "%s", a);                                      \
        snprintf(f[n].vars[1], sizeof f[n].vars[1], "%s", b);                                      \
        f[n].threads = th, f[n].warn = w, f[n].check = chk;                                        \
        n++;                                                                                       \
    } while (0)
#define MAIN (f[n - 1].main = 1)
    char v[600];
    FORM("OMP_PLACES=cores", "OMP_PROC_BIND=close", C, 0, 1);
    MAIN;
    FORM("OMP_PLACES=cores", "OMP_PROC_BIND=spread", N, 0, 2);
    FORM("OMP_PLACES=threads", "OMP_PROC_BIND=close", C, 0, 1);
    FORM("OMP_PLACES=sockets", "OMP_PROC_BIND=close", C, 0, 0);
    FORM("OMP_PLACES=ll_caches", "OMP_PROC_BIND=spread", C, 0, 0);
    FORM("OMP_PLACES=numa_domains", "OMP_PROC_BIND=spread", N, 0, 2);
    FORM("OMP_PLACES=cores", "", 0, 0, 1);
    snprintf(v, sizeof v, "OMP_PLACES=%s", rev);
    FORM(v, "OMP_PROC_BIND=close", C, 0, 2);
    snprintf(v, sizeof v, "OMP_PLACES={0:%d}:%d:%d", K, N, K); /* one place per node */
    FORM(v, "OMP_PROC_BIND=spread", N, 0, 2);
    FORM("OMP_PLACES=cores(2)", "OMP_PROC_BIND=close", 4, 1, 0);
    FORM("OMP_PROC_BIND=true", "", C, 0, 1);
    FORM("OMP_PROC_BIND=spread,close", "", N, 0, 2);
    FORM("OMP_PROC_BIND=master", "", 2, 1, 0);
    MAIN;
    FORM("OMP_PROC_BIND=primary", "OMP_PLACES=numa_domains", K, 0, 0);
    FORM("OMP_PROC_BIND=false", "", C, 0, 0);
    snprintf(v, sizeof v, "GOMP_CPU_AFFINITY=%s", gomp);
    FORM(v, "", C, 0, 2);
    MAIN;
    snprintf(v, sizeof v, "GOMP_CPU_AFFINITY=0-%d", C - 1);
    FORM(v, "", 0, 0, 0);
    FORM("KMP_AFFINITY=granularity=fine,compact", "", C, 0, 0);
    FORM("KMP_AFFINITY=granularity=fine,scatter", "", C, 0, 0);
    MAIN;
    FORM(kmp, "", C, 0, 0);
    MAIN;
#undef FORM
#undef MAIN
    return n;
}

/* 2.: the plain run binds as the form says. Not checked for gcc on a preloaded libomp: the
 * program's libgomp still binds the initial thread to the first place before main, and libomp
 * then builds its places inside that one CPU (with or without numaplace). */
static int bound_as_said(const struct form *f, const struct probe *p, const char *rt)
{
    if (!strcmp(rt, "gcc+libomp"))
        return 1;
    if (f->check == 1) {
        for (int t = 0; t < p->n; t++)
            if (p->mask[t] != 1ull << t || p->cpu[t] != t)
                return 0;
        return p->n == C;
    }
    if (f->check == 2) {
        uint64_t nodes = 0;
        for (int t = 0; t < p->n; t++)
            if (mask_node(p->mask[t]) >= 0)
                nodes |= 1ull << mask_node(p->mask[t]);
        return __builtin_popcountll(nodes) == N;
    }
    return 1;
}

static void test_forms(void)
{
    static struct form forms[32];
    int nf = make_forms(forms);
    const char *rts[] = {"gcc", "clang", "gcc+libomp"};
    char libomp[300], prog[300], th[32], pre[320];
    snprintf(libomp, sizeof libomp, "%s/libomp.so.5", dir);
    for (int r = 0; r < 3; r++) {
        snprintf(prog, sizeof prog, "%s/omp_probe_%s", dir, r == 1 ? "clang" : "gcc");
        if (access(prog, X_OK)) {
            SKIP(r == 1 ? "prog-omp_probe_clang" : "prog-omp_probe_gcc",
                 "the binding forms under %s: %s is not in this guest", rts[r], prog);
            continue;
        }
        if (r == 2 && access(libomp, R_OK)) {
            SKIP("libomp", "the binding forms under gcc on a preloaded libomp: %s is not in this "
                 "guest (libomp-dev)", libomp);
            continue;
        }
        snprintf(pre, sizeof pre, "LD_PRELOAD=%s", libomp);
        int differ = 0, runs = 0;
        for (int i = 0; i < nf; i++) {
            const struct form *f = &forms[i];
            if (r == 2 && !f->main)
                continue; /* each run costs seconds under TCG */
            char *env[6];
            int e = 0;
            for (int k = 0; k < 3; k++)
                if (f->vars[k][0])
                    env[e++] = (char *)f->vars[k];
            snprintf(th, sizeof th, "OMP_NUM_THREADS=%d", f->threads ? f->threads : C);
            if (f->threads)
                env[e++] = th;
            if (r == 2)
                env[e++] = pre;
            env[e] = NULL;
            struct probe plain, run;
            int rc = run_env(env, (char *const[]){prog, NULL}, "/tmp/gob_plain", "/tmp/gob_err");
            read_probe("/tmp/gob_plain", &plain);
            /* gcc on a preloaded libomp: libomp's default is one thread per CPU of the place
             * libgomp bound it to */
            int want_n = f->threads ? f->threads : r == 2 ? plain.n : C;
            CHECK(rc == 0 && plain.n == want_n && bound_as_said(f, &plain, rts[r]),
                  "%s [%s %s]: the plain run binds as the form says (%d threads, status %d)",
                  rts[r], f->vars[0], f->vars[1], plain.n, rc);
            if (rc || plain.n != want_n || !bound_as_said(f, &plain, rts[r]))
                show_probe("plain", &plain);
            const char *modes[][3] = {{"--", NULL, NULL}, {"--policy", "cyclic", "--"}};
            for (int m = 0; m < (r == 2 || !f->main ? 1 : 2); m++) {
                char *argv[8];
                int a = 0;
                argv[a++] = "numaplace";
                argv[a++] = "run";
                for (int k = 0; k < 3 && modes[m][k]; k++)
                    argv[a++] = (char *)modes[m][k];
                argv[a++] = prog;
                argv[a] = NULL;
                rc = run_env(env, argv, "/tmp/gob_run", "/tmp/gob_err");
                read_probe("/tmp/gob_run", &run);
                int d = first_difference(&plain, &run), warned = count_in("/tmp/gob_err",
                                                                          "oversubscribed");
                runs++;
                differ += d >= 0;
                CHECK(rc == 0 && d < 0,
                      "%s [%s %s] numaplace run %s: thread %d differs from the plain run (status "
                      "%d)", rts[r], f->vars[0], f->vars[1], m ? "--policy cyclic" : "(no flag)",
                      d, rc);
                if (d >= 0) {
                    show_probe("plain", &plain);
                    show_probe("run", &run);
                }
                CHECK(warned == f->warn, "%s [%s %s] numaplace run %s: %d oversubscription "
                                         "warning(s), want %d", rts[r], f->vars[0], f->vars[1],
                      m ? "--policy cyclic" : "(no flag)", warned, f->warn);
            }
        }
        printf("  | %s: %d forms, %d runs under numaplace, %d differ from plain\n", rts[r], nf,
               runs, differ);
        /* 4. --pin scatter over OMP_PLACES=cores OMP_PROC_BIND=close */
        char *env[] = {"OMP_PLACES=cores", "OMP_PROC_BIND=close", th, r == 2 ? pre : NULL, NULL};
        snprintf(th, sizeof th, "OMP_NUM_THREADS=%d", C);
        int rc = run_env(env, (char *const[]){"numaplace", "run", "--pin", "scatter", "--", prog,
                                              NULL}, "/tmp/gob_run", "/tmp/gob_err");
        struct probe run;
        read_probe("/tmp/gob_run", &run);
        int bad = run.n != C;
        for (int t = 0; t < run.n; t++)
            bad += run.mask[t] != 1ull << npl_pin_cpu(NULL, "scatter", t) ||
                   run.cpu[t] != npl_pin_cpu(NULL, "scatter", t);
        CHECK(rc == 0 && !bad, "%s: --pin scatter replaces OMP_PLACES=cores: thread t on scatter's "
                               "CPU t (%d threads, %d wrong, status %d)", rts[r], run.n, bad, rc);
        CHECK(count_in("/tmp/gob_err", "note: --pin scatter replaces the program's own OpenMP "
                                       "binding (OMP_PLACES=cores OMP_PROC_BIND=close)") == 1,
              "%s: --pin over the program's binding: one note", rts[r]);
    }
}

/* 5. the child: MIB MiB under the policy numaplace run gave, touched; pages per node on stdout */
static int child_local(size_t mib)
{
    size_t bytes = mib << 20, pages = bytes / 4096;
    unsigned char *a = malloc(bytes);
    int *nodes = malloc(pages * sizeof *nodes);
    if (!a || !nodes)
        return 2;
#ifdef _OPENMP /* an OpenMP program: libgomp is loaded and binds the initial thread first */
#pragma omp parallel for schedule(static)
#endif
    for (size_t i = 0; i < bytes; i += 4096)
        a[i] = 1;
    if (npl_query_pages(a, bytes, nodes, pages) < 0)
        return 3;
    int count[64] = {0};
    for (size_t i = 0; i < pages; i++)
        if (nodes[i] >= 0 && nodes[i] < 64)
            count[nodes[i]]++;
    for (int n = 0; n < N; n++)
        printf("node %d pages %d\n", n, count[n]);
    return 0;
}

static void test_local(const char *self)
{
    char nn[16];
    snprintf(nn, sizeof nn, "%d", N);
    char *env[] = {"OMP_PLACES=cores", "OMP_PROC_BIND=close", NULL};
    int rc = run_env(env, (char *const[]){"numaplace", "run", "--policy", "cyclic@local", "--",
                                          (char *)self, "--nodes", nn, "--child-local", "16", NULL},
                     "/tmp/gob_run", "/tmp/gob_err");
    FILE *f = fopen("/tmp/gob_run", "r");
    int node, pages, with = 0, total = 0;
    while (f && fscanf(f, "node %d pages %d\n", &node, &pages) == 2) {
        with += pages > 0;
        total += pages;
    }
    if (f)
        fclose(f);
    CHECK(rc == 0 && with == N && total == 4096,
          "run --policy cyclic@local under OMP_PLACES=cores OMP_PROC_BIND=close: the 16 MiB array "
          "on all %d nodes of the process's CPUs (on %d, %d pages, status %d)", N, with, total, rc);
}

int main(int argc, char **argv)
{
    size_t child_mib = 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--child-local"))
            child_mib = (size_t)atol(argv[++i]);
    }
    if (child_mib)
        return child_local(child_mib);
    if (getenv("NPL_PROGS"))
        dir = getenv("NPL_PROGS");
    numa_balancing_off(); /* 5. counts pages where the policy put them */
    const npl_topo *t = npl_topo_self();
    if (N < 2 || !t || npl_topo_node_count(t, 0) != N) {
        printf("usage: guest_ompbind --nodes N --cpus-per-node K (in a guest of N >= 2 nodes; "
               "this one has %d)\n", t ? npl_topo_node_count(t, 0) : -1);
        return 120;
    }
    K = npl_topo_cpu_count(t) / N;
    C = N * K;
    if (C < 2 || C > 64) {
        SKIP("ompbind-cpus", "the binding forms: %d CPUs here, the probe's masks need 2 to 64", C);
        return check_summary("guest_ompbind");
    }
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    test_local(self);
    test_forms();
    return check_summary("guest_ompbind");
}
