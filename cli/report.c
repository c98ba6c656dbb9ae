/* report.c - numaplace report: the characterization report (docs/man/numaplace-report.1).
 *
 * 1. topology; 2. the NUMA factor matrix (measure.c); 3. the characterization run of Ribeiro et
 * al. (section 4.1): STREAM-style kernels read / write / read-write x regular / irregular /
 * random access x static / dynamic OpenMP schedules, under first_touch and every policy, one
 * array placed with the library; 4. a recommendation per access pattern (recommend.h rule).
 * Writes DIR/results.json (docs/report.schema.json) and DIR/index.html; then runs
 * tools/report_plot.py (matplotlib) to add the plots, when python3 and matplotlib are there.
 *
 * Kernels (n doubles, T threads, pass p of R):
 *   regular    element i
 *   irregular  element (i + p*n/T + n/(2T)) mod n: each pass, each thread works on another
 *              thread's block (the paper's "data set may be different" between phases)
 *   random     element hash(i, p) mod n: pages all over the array, shared by threads
 *   read: s += a[j]; write: a[j] = c; read-write: a[j] = a[j]*0.5 + 1
 * first_touch: the master thread initializes the array (the usual serial initialization). */
#define _GNU_SOURCE
#include "cli.h"
#include "measure.h"
#include "recommend.h"

#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *ops[] = {"read", "write", "read-write"};
static const char *accesses[] = {"regular", "irregular", "random"};
static const char *scheds[] = {"static", "dynamic"};
static const char *policies[] = {"first_touch", "bind_all", "bind_block", "cyclic",
                                 "cyclic_block", "skew_mapp", "prime_mapp", "random",
                                 "random_block"};
#define NOPS 3
#define NACC 3
#define NSCH 2
#define NPOL 9

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

static inline size_t idx(int access, size_t i, size_t n, int pass, int nthreads)
{
    if (access == 0)
        return i;
    if (access == 1) {
        size_t j = i + ((size_t)pass * n / (size_t)nthreads + n / (2 * (size_t)nthreads)) % n;
        return j >= n ? j - n : j;
    }
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)pass * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    return (size_t)(h % n);
}

/* one kernel, best time over reps; the schedule (static, or dynamic with 4096-element chunks) is
 * set for the loop's schedule(runtime) */
static double kernel(double *a, size_t n, int op, int access, int dynamic, int reps, int nthreads)
{
    double best = 1e30;
#ifdef _OPENMP
    omp_set_schedule(dynamic ? omp_sched_dynamic : omp_sched_static, dynamic ? 4096 : 0);
#else
    (void)dynamic;
#endif
    for (int r = 0; r < reps; r++) {
        double s = 0, t0 = now();
#pragma omp parallel for schedule(runtime) reduction(+ : s)
        for (size_t i = 0; i < n; i++) {
            size_t j = idx(access, i, n, r, nthreads);
            if (op == 0)
                s += a[j];
            else if (op == 1)
                a[j] = 1.5;
            else
                a[j] = a[j] * 0.5 + 1;
        }
        double t = now() - t0;
        sink = s;
        if (t < best)
            best = t;
    }
    return best;
}

struct charac {
    int nthreads, reps;
    size_t n;
    double sec[NPOL][NOPS][NACC][NSCH];
    char polstr[NPOL][64];
    char placed_ok[NPOL];
};

static int characterize(int quick, const struct measure_result *m, struct charac *c)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    c->nthreads = threads;
    c->n = quick ? ((size_t)4 << 20) / 8 : ((size_t)128 << 20) / 8;
    if (!quick && m->llc_bytes * 2 / 8 > c->n)
        c->n = m->llc_bytes * 2 / 8;
    if (c->n > ((size_t)256 << 20) / 8) /* 10 minutes on 2 cores for the whole report */
        c->n = ((size_t)256 << 20) / 8;
    c->reps = quick ? 2 : 3;
    /* pin the OpenMP threads compactly (MAi's default for a reproducible characterization) */
#ifdef _OPENMP
#pragma omp parallel
    npl_pin_self("compact", omp_get_thread_num());
#else
    npl_pin_self("compact", 0);
#endif
    int total = NPOL * NOPS * NACC * NSCH, done = 0;
    double t0 = now();
    for (int p = 0; p < NPOL; p++) {
        if (!strcmp(policies[p], "bind_block"))
            snprintf(c->polstr[p], sizeof c->polstr[p], "bind_block:threads=%d", threads);
        else if (!strcmp(policies[p], "bind_all"))
            snprintf(c->polstr[p], sizeof c->polstr[p], "bind_all:%d", m->nodes[0]);
        else if (!strcmp(policies[p], "random") || !strcmp(policies[p], "random_block"))
            snprintf(c->polstr[p], sizeof c->polstr[p], "%s:seed=1", policies[p]);
        else
            snprintf(c->polstr[p], sizeof c->polstr[p], "%s", policies[p]);
        npl_policy *pol;
        double *a = NULL;
        if (npl_policy_parse(&pol, c->polstr[p]) == 0) {
            a = npl_alloc(c->n * sizeof(double), pol);
            npl_policy_free(pol);
        }
        if (!a) {
            fprintf(stderr, "report: %s: %s (skipped)\n", c->polstr[p], npl_last_error());
            for (int o = 0; o < NOPS; o++)
                for (int x = 0; x < NACC; x++)
                    for (int s = 0; s < NSCH; s++)
                        c->sec[p][o][x][s] = -1;
            done += NOPS * NACC * NSCH;
            continue;
        }
        c->placed_ok[p] = 1;
        if (p == 0) { /* first_touch: the master initializes */
            for (size_t i = 0; i < c->n; i++)
                a[i] = 1;
        } else {
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < c->n; i++)
                a[i] = 1;
        }
        for (int o = 0; o < NOPS; o++)
            for (int x = 0; x < NACC; x++)
                for (int s = 0; s < NSCH; s++) {
                    c->sec[p][o][x][s] = kernel(a, c->n, o, x, s, c->reps, threads);
                    done++;
                }
        npl_free(a);
        fprintf(stderr, "report: characterization %3d/%d  policy %-14s (%.1f s)\n", done, total,
                policies[p], now() - t0);
    }
    return 0;
}

/* ---- JSON (cli/json.c) ---- */
static double matrix_value(const struct measure_result *m, int which, int i, int j)
{
    if (!m->has_cpus[i])
        return -1;
    if (which == 0)
        return m->lat[i][j];
    if (which == 1)
        return m->bw[i][j];
    if (which == 2)
        return m->lat[i][i] > 0 && m->lat[i][j] > 0 ? m->lat[i][j] / m->lat[i][i] : -1;
    return m->bw[i][j] > 0 && m->bw[i][i] > 0 ? m->bw[i][i] / m->bw[i][j] : -1;
}

/* Create path for writing: never through a symbolic link, never an existing non-regular file. */
static FILE *open_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        errno = EINVAL;
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (!f)
        fprintf(stderr, "numaplace report: cannot write %s: %s\n", path,
                errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    return f;
}

static int write_json(const char *path, int quick, const struct measure_result *m,
                      const struct charac *c, int recs_only_print)
{
    const npl_topo *t = npl_topo_self();
    time_t tt = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime(&tt));
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-report/1");
    json_add_str(root, "version", npl_version());
    json_add_str(root, "generated", when);
    json_add_bool(root, "quick", quick);
    /* machine */
    cJSON *mach = json_add_obj(root, "machine");
    json_add_num(mach, "nnodes", m->n);
    json_add_num(mach, "cpus_allowed", npl_topo_cpu_count(t));
    json_add_str(mach, "note", m->note);
    cJSON *nodes = json_add_arr(mach, "nodes");
    for (int i = 0; i < m->n; i++) {
        struct npl_node_info info = {0};
        npl_topo_node_info(t, m->nodes[i], &info);
        cJSON *o = json_add_obj(nodes, NULL);
        json_add_num(o, "os_id", m->nodes[i]);
        json_add_num(o, "memory_bytes", (double)info.memory_bytes);
        json_add_ints(o, "cpus", m->cpus[i], m->ncpus[i]);
    }
    cJSON *dist = json_add_arr(mach, "distances");
    for (int i = 0; i < m->n; i++) {
        cJSON *r = json_add_arr(dist, NULL);
        for (int j = 0; j < m->n; j++)
            json_add_num(r, NULL, npl_topo_distance(t, m->nodes[i], m->nodes[j]));
    }
    /* factors */
    cJSON *fac = json_add_obj(root, "factors");
    json_add_ints(fac, "nodes", m->nodes, m->n);
    json_add_num(fac, "latency_buffer_bytes", (double)m->lat_bytes);
    json_add_num(fac, "triad_array_bytes", (double)m->bw_bytes);
    json_add_num(fac, "llc_bytes", (double)m->llc_bytes);
    const char *names[] = {"latency_ns", "bandwidth_mbs", "numa_factor", "bandwidth_ratio"};
    for (int w = 0; w < 4; w++) {
        cJSON *mat = json_add_arr(fac, names[w]);
        for (int i = 0; i < m->n; i++) {
            cJSON *r = json_add_arr(mat, NULL);
            for (int j = 0; j < m->n; j++)
                json_add_num_or_null(r, NULL, matrix_value(m, w, i, j));
        }
    }
    cJSON *lbs = json_add_arr(fac, "latency_by_size");
    for (int k = 0; k < m->nsizes; k++) {
        cJSON *o = json_add_obj(lbs, NULL);
        json_add_num(o, "bytes", (double)m->sizes[k]);
        json_add_num_or_null(o, "ns", m->lat_by_size[k]);
    }
    json_add_num(fac, "bandwidth_node", m->bw_node);
    cJSON *bbt = json_add_arr(fac, "bandwidth_by_threads");
    for (int k = 0; k < m->nthreads; k++) {
        cJSON *o = json_add_obj(bbt, NULL);
        json_add_num(o, "threads", k + 1);
        json_add_num_or_null(o, "mbs", m->bw_by_threads[k]);
    }
    /* characterization */
    cJSON *ch = json_add_obj(root, "characterization");
    json_add_num(ch, "threads", c->nthreads);
    json_add_num(ch, "array_bytes", (double)(c->n * sizeof(double)));
    json_add_num(ch, "reps", c->reps);
    cJSON *pols = json_add_arr(ch, "policies");
    for (int p = 0; p < NPOL; p++)
        json_add_str(pols, NULL, c->polstr[p]);
    cJSON *res = json_add_arr(ch, "results");
    for (int p = 0; p < NPOL; p++)
        for (int o = 0; o < NOPS; o++)
            for (int x = 0; x < NACC; x++)
                for (int s = 0; s < NSCH; s++) {
                    double sec = c->sec[p][o][x][s];
                    cJSON *e = json_add_obj(res, NULL);
                    json_add_str(e, "op", ops[o]);
                    json_add_str(e, "access", accesses[x]);
                    json_add_str(e, "schedule", scheds[s]);
                    json_add_str(e, "policy", policies[p]);
                    json_add_num_or_null(e, "seconds", sec);
                    json_add_num_or_null(e, "mbs", sec > 0 ? (double)(c->n * sizeof(double)) *
                                                                 (o == 2 ? 2 : 1) / sec / 1e6
                                                           : -1);
                }
    /* recommendations */
    json_add_str(root, "rule", "one node: first_touch; else the fastest policy, ties within 5% "
                               "going to the first of first_touch, bind_block, cyclic, "
                               "cyclic_block, skew_mapp, prime_mapp, random_block, random, "
                               "bind_all (cli/recommend.h)");
    cJSON *recs = json_add_arr(root, "recommendations");
    for (int o = 0; o < NOPS; o++)
        for (int x = 0; x < NACC; x++)
            for (int s = 0; s < NSCH; s++) {
                struct rec_entry e[NPOL];
                for (int p = 0; p < NPOL; p++)
                    e[p] = (struct rec_entry){policies[p], c->sec[p][o][x][s]};
                char why[256];
                const char *r = recommend(e, NPOL, m->n, 0.05, why, sizeof why);
                cJSON *j = json_add_obj(recs, NULL);
                json_add_str(j, "op", ops[o]);
                json_add_str(j, "access", accesses[x]);
                json_add_str(j, "schedule", scheds[s]);
                json_add_str(j, "policy", r); /* NULL: null */
                json_add_str(j, "reason", why);
                if (recs_only_print)
                    printf("  %-10s %-9s %-7s -> %-12s %s\n", ops[o], accesses[x], scheds[s],
                           r ? r : "-", why);
            }
    FILE *f = open_out(path);
    if (!f) {
        json_free(root);
        return EXIT_FAILED;
    }
    int bad = json_write(f, root) < 0;
    json_free(root);
    bad |= ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "numaplace report: error writing %s: %s\n", path, strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

static int write_html(const char *path, const struct measure_result *m, const struct charac *c)
{
    FILE *f = open_out(path);
    if (!f)
        return EXIT_FAILED;
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>numaplace report"
               "</title></head><body>\n<h1>numaplace report</h1>\n<p>%d node(s). %s</p>\n"
               "<p>Plots: run <code>python3 tools/report_plot.py DIR</code> (matplotlib); "
               "data: <a href=\"results.json\">results.json</a>.</p>\n<h2>Latency (ns), row = CPU "
               "node, column = memory node</h2>\n<table border=1>", m->n, m->note);
    for (int i = 0; i < m->n; i++) {
        fprintf(f, "<tr><th>node %d</th>", m->nodes[i]);
        for (int j = 0; j < m->n; j++)
            fprintf(f, "<td>%.1f</td>", m->lat[i][j]);
        fprintf(f, "</tr>");
    }
    fprintf(f, "</table>\n<h2>Characterization (seconds, best of %d)</h2>\n<table border=1><tr>"
               "<th>op</th><th>access</th><th>schedule</th>", c->reps);
    for (int p = 0; p < NPOL; p++)
        fprintf(f, "<th>%s</th>", policies[p]);
    fprintf(f, "</tr>\n");
    for (int o = 0; o < NOPS; o++)
        for (int x = 0; x < NACC; x++)
            for (int s = 0; s < NSCH; s++) {
                fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s</td>", ops[o], accesses[x], scheds[s]);
                for (int p = 0; p < NPOL; p++)
                    fprintf(f, "<td>%.4g</td>", c->sec[p][o][x][s]);
                fprintf(f, "</tr>\n");
            }
    fprintf(f, "</table>\n</body></html>\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "numaplace report: error writing %s: %s\n", path, strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

/* tools/report_plot.py: $NUMAPLACE_PLOT, next to the binary, or ../tools from a build dir */
static int find_plot(char *out, size_t size)
{
    static const char *const rel[] = {"report_plot.py", "../tools/report_plot.py",
                                      "../share/numaplace/report_plot.py"};
    int rc = cli_find_file("NUMAPLACE_PLOT", rel, 3, out, size);
    const char *env = getenv("NUMAPLACE_PLOT");
    if (rc == 0 || (env && *env))
        return rc; /* an explicit path is not second-guessed */
#ifdef NPL_SOURCE_DIR
    snprintf(out, size, "%s/tools/report_plot.py", NPL_SOURCE_DIR);
    return access(out, R_OK);
#else
    return -1;
#endif
}

/* The output directory, before minutes of measuring: created (with its parents), a directory,
 * and writable (a test file written, flushed and removed). 0, or -1 with the message printed. */
static int check_dir(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) { /* mkdir -p */
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "numaplace report: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "numaplace report: --out %s is not a directory\n", dir);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s/.numaplace-check.%d", dir, (int)getpid());
    int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    char block[4096];
    memset(block, '\n', sizeof block);
    int ok = fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block;
    int e = errno;
    if (fd >= 0) {
        if ((fsync(fd) < 0 || close(fd) < 0) && ok)
            ok = 0, e = errno;
        unlink(buf);
    }
    if (!ok) {
        fprintf(stderr, "numaplace report: cannot write in %s: %s\n", dir, strerror(e));
        return -1;
    }
    return 0;
}

int cmd_report(int argc, char **argv)
{
    int quick = 0, plots = 1;
    const char *dir = "report";
    static const struct option opts[] = {{"quick", no_argument, NULL, 'q'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"no-plots", no_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (opt) {
        case 'q':
            quick = 1;
            break;
        case 'o':
            dir = optarg;
            break;
        case 'n':
            plots = 0;
            break;
        case 'h':
            printf("usage: numaplace report [--quick] [--out DIR] [--no-plots]\n"
                   "Topology, the NUMA factor matrix and the characterization run (read/write/\n"
                   "read-write x regular/irregular/random x static/dynamic schedules under\n"
                   "first_touch and every policy), with a recommendation per access pattern.\n"
                   "Writes DIR/results.json (docs/report.schema.json) and DIR/index.html, with\n"
                   "matplotlib plots from tools/report_plot.py when python3-matplotlib is installed.\n"
                   "DIR is created and test-written before measuring: a DIR that is not a\n"
                   "directory, or cannot be written in, fails at once (exit 1); files are never\n"
                   "written through symbolic links.\n"
                   "  --out DIR    default ./report\n"
                   "  --quick      tiny sizes (under 2 minutes on 2 cores; numbers indicative only)\n"
                   "  --no-plots   do not run the plotting script\n"
                   "Threads: OMP_NUM_THREADS (default all allowed CPUs), pinned compactly.\n"
                   "exit status: 0; 1 a measurement or writing failed (or the plots, when asked\n"
                   "for and python3/matplotlib are present but fail); 2 bad usage\n");
            return 0;
        default:
            return cli_bad_option("report", opt, argv);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace report: unknown argument \"%s\" (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (check_dir(dir) < 0)
        return EXIT_FAILED;
    double t0 = now();
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    printf("numaplace report%s: %d node(s), %d CPU(s) allowed\n", quick ? " --quick" : "",
           npl_topo_node_count(t, 0), npl_topo_cpu_count(t));
    if (npl_topo_node_count(t, 0) == 1)
        printf("this machine has ONE usable NUMA node: no remote memory; the factor matrix is "
               "1x1 and all policies place the same way, but latency, bandwidth and the kernels "
               "are still measured\n");
    fflush(stdout);
    struct measure_result *m = calloc(1, sizeof *m);
    struct charac *c = calloc(1, sizeof *c);
    int rc = measure_run(quick, 1, m);
    if (rc == 0) {
        measure_print(stdout, m);
        fflush(stdout);
        rc = characterize(quick, m, c);
    }
    char json[4096], html[4096];
    snprintf(json, sizeof json, "%s/results.json", dir);
    snprintf(html, sizeof html, "%s/index.html", dir);
    if (rc == 0) {
        printf("\nrecommendations (rule: cli/recommend.h):\n");
        rc = write_json(json, quick, m, c, 1);
    }
    if (rc == 0)
        rc = write_html(html, m, c);
    free(m);
    free(c);
    if (rc)
        return rc;
    if (plots) {
        char script[4096];
        if (find_plot(script, sizeof script) < 0) {
            printf("plots: tools/report_plot.py not found (set NUMAPLACE_PLOT): tables only\n");
        } else {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                execlp("python3", "python3", script, dir, (char *)NULL);
                _exit(127);
            }
            int st = 0;
            waitpid(pid, &st, 0);
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
            if (code == 127 || code == 3)
                printf("plots: python3 or matplotlib missing (apt-get install python3-matplotlib): "
                       "tables only\n");
            else if (code != 0) {
                fprintf(stderr, "numaplace report: %s failed (status %d)\n", script, code);
                rc = EXIT_FAILED;
            }
        }
    }
    printf("wrote %s and %s (%.1f s)\n", json, html, now() - t0);
    return rc;
}
