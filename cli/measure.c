/* measure.c - numaplace measure: the NUMA factor matrix of this machine (docs/man/numaplace-measure.1)
 *
 * For every (CPU node c, memory node m) pair, one thread pinned to a CPU of c and buffers placed
 * with bind_all:m:
 *   latency   dependent loads over a random cyclic permutation of cache lines (Sattolo), buffer
 *             larger than the last-level cache: ns per load
 *   bandwidth STREAM triad a[i] = b[i] + s*c[i] (24 bytes per iteration, as STREAM counts): best MB/s
 * plus the local/remote ratio table (the characterization paper's NUMA factor), latency against
 * working-set size on the first node (the cache steps) and triad bandwidth against threads on the
 * first node (contention). Writes the platform config ([factors]) the library reads. */
#define _GNU_SOURCE
#include "cli.h"
#include "measure.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *alloc_on(size_t bytes, int node)
{
    npl_policy *p;
    if (npl_policy_create(&p, NPL_BIND_ALL, &node, 1) < 0)
        return NULL;
    void *a = npl_alloc(bytes, p);
    npl_policy_free(p);
    return a;
}

/* ns per dependent load over `bytes` of memory already allocated at buf */
double measure_chase(void *buf, size_t bytes, size_t loads)
{
    const size_t line = 64;
    size_t n = bytes / line;
    if (n < 2)
        return -1;
    size_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return -1;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = 0x9E3779B97F4A7C15ull ^ bytes;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every line */
        size_t j = rng(&s) % i;
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    char *b = buf;
    for (size_t i = 0; i < n; i++)
        *(void **)(b + i * line) = b + perm[i] * line;
    free(perm);
    void **p = (void **)b;
    for (size_t i = 0; i < n && i < loads; i++) /* warm the TLB/caches once */
        p = *p;
    double t0 = now();
    for (size_t i = 0; i < loads; i++)
        p = *p;
    double t = now() - t0;
    __asm__ volatile("" ::"r"(p));
    return t / (double)loads * 1e9;
}

/* best triad MB/s over reps, n doubles per array */
/* STREAM's triad, vectorised as STREAM's is: gcc 12 -O2 vectorises STREAM's loop (constant trip
 * count, static arrays) but kept this one scalar (unknown n needs an epilogue, which -O2's
 * very-cheap cost model refuses): 16% below STREAM on one thread. `omp simd` asks for it. */
static void triad_kernel(double *restrict a, const double *restrict b, const double *restrict c,
                         size_t n)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 3.0 * c[i];
}

static double triad(double *a, const double *b, const double *c, size_t n, int reps)
{
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        triad_kernel(a, b, c, n);
        double t = now() - t0;
        __asm__ volatile("" ::"r"(a) : "memory");
        double mbs = t > 0 ? 24.0 * (double)n / t / 1e6 : 0;
        if (mbs > best)
            best = mbs;
    }
    return best;
}

static int pin_cpu(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof s, &s);
}

/* ---- bandwidth against threads: T pinned threads, each a triad on its own slice ---- */
struct bw_worker {
    pthread_t th;
    int cpu;
    double *a, *b, *c;
    size_t n;
    int reps;
    pthread_barrier_t *bar;
    double seconds;
};
static void *bw_main(void *arg)
{
    struct bw_worker *w = arg;
    pin_cpu(w->cpu);
    double best = 1e30;
    for (int r = 0; r < w->reps; r++) {
        pthread_barrier_wait(w->bar);
        double t0 = now();
        triad_kernel(w->a, w->b, w->c, w->n);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    w->seconds = best;
    return NULL;
}

static double bw_threads(const int *cpus, int t, int node, size_t n_per, int reps)
{
    size_t total = n_per * (size_t)t;
    double *a = alloc_on(total * 8, node), *b = alloc_on(total * 8, node),
           *c = alloc_on(total * 8, node);
    double mbs = -1;
    struct bw_worker *w = calloc((size_t)t, sizeof *w);
    pthread_barrier_t bar;
    if (a && b && c && w) {
        for (size_t i = 0; i < total; i++)
            b[i] = 1, c[i] = 2;
        pthread_barrier_init(&bar, NULL, (unsigned)t);
        for (int i = 0; i < t; i++) {
            w[i] = (struct bw_worker){0, cpus[i], a + n_per * (size_t)i, b + n_per * (size_t)i,
                                      c + n_per * (size_t)i, n_per, reps, &bar, 0};
            pthread_create(&w[i].th, NULL, bw_main, &w[i]);
        }
        double slowest = 0;
        for (int i = 0; i < t; i++) {
            pthread_join(w[i].th, NULL);
            if (w[i].seconds > slowest)
                slowest = w[i].seconds;
        }
        pthread_barrier_destroy(&bar);
        mbs = slowest > 0 ? 24.0 * (double)total / slowest / 1e6 : -1;
    }
    free(w);
    npl_free(a);
    npl_free(b);
    npl_free(c);
    return mbs;
}

int measure_run(int quick, int verbose, struct measure_result *r)
{
    memset(r, 0, sizeof *r);
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    int all = npl_topo_node_count(t, 1);
    for (int i = 0; i < all && r->n < MEASURE_MAX_NODES; i++) {
        struct npl_node_info info;
        if (npl_topo_node_info(t, npl_topo_node_id(t, i), &info) == 0 && info.allowed &&
            info.memory_bytes) {
            r->nodes[r->n] = info.os_id;
            r->ncpus[r->n] = npl_topo_node_cpus(t, info.os_id, r->cpus[r->n], MEASURE_MAX_CPUS);
            r->n++;
        }
    }
    if (r->n == 0) {
        fprintf(stderr, "numaplace measure: no usable node\n");
        return EXIT_FAILED;
    }
    /* cache sizes from hwloc (sysconf's can be wrong: 320 MiB LLC said on a 32 MiB machine) */
    uint64_t cb;
    for (int l = 5; l >= 1; l--)
        if (npl_topo_cache_size(t, l, &cb) == 0) {
            if (!r->llc_bytes)
                r->llc_bytes = (size_t)cb, r->llc_level = l;
            if (l <= 2)
                r->cache_bytes[l] = (size_t)cb;
        }
    if (!r->llc_bytes) /* hwloc knows no cache here (some VMs): assume 8 MiB */
        r->llc_bytes = (size_t)8 << 20;
    long llc = (long)r->llc_bytes;
    size_t lat_bytes = quick ? (size_t)2 << 20 : (size_t)llc * 2;
    if (!quick && lat_bytes < ((size_t)64 << 20))
        lat_bytes = (size_t)64 << 20;
    if (lat_bytes > ((size_t)1 << 30))
        lat_bytes = (size_t)1 << 30;
    size_t loads = quick ? 100000 : 4000000;
    size_t bw_n = quick ? (1u << 17) : (size_t)(lat_bytes / 8 / 2); /* doubles per array */
    int reps = quick ? 2 : 5;
    r->quick = quick;
    r->lat_bytes = lat_bytes;
    r->bw_bytes = bw_n * 8;
    snprintf(r->note, sizeof r->note, "%s", r->n == 1 ? "one NUMA node: the matrix is 1x1, "
             "there is no remote memory to compare with" : "");
    if (verbose)
        fprintf(stderr, "measure: %d node(s), L1 %zu KiB, L2 %zu KiB, LLC (L%d) %ld KiB%s, "
                        "latency buffer %zu KiB, triad arrays 3 x %zu KiB%s\n", r->n,
                r->cache_bytes[1] >> 10, r->cache_bytes[2] >> 10, r->llc_level, llc >> 10,
                r->llc_level ? "" : " (unknown: assumed)", lat_bytes >> 10, (bw_n * 8) >> 10,
                quick ? " (quick)" : "");
    cpu_set_t saved;
    sched_getaffinity(0, sizeof saved, &saved);
    for (int i = 0; i < r->n; i++) {
        r->has_cpus[i] = r->ncpus[i] > 0;
        for (int j = 0; j < r->n; j++) {
            r->lat[i][j] = r->bw[i][j] = -1;
            if (!r->has_cpus[i])
                continue;
            pin_cpu(r->cpus[i][0]);
            void *buf = alloc_on(lat_bytes, r->nodes[j]);
            double *a = alloc_on(bw_n * 8, r->nodes[j]), *b = alloc_on(bw_n * 8, r->nodes[j]),
                   *c = alloc_on(bw_n * 8, r->nodes[j]);
            if (buf)
                r->lat[i][j] = measure_chase(buf, lat_bytes, loads);
            if (a && b && c) {
                for (size_t k = 0; k < bw_n; k++)
                    b[k] = 1, c[k] = 2;
                r->bw[i][j] = triad(a, b, c, bw_n, reps);
            }
            npl_free(buf);
            npl_free(a);
            npl_free(b);
            npl_free(c);
            if (verbose)
                fprintf(stderr, "measure: CPU node %d -> memory node %d: %.1f ns/load, %.0f MB/s\n",
                        r->nodes[i], r->nodes[j], r->lat[i][j], r->bw[i][j]);
        }
    }
    /* latency against working-set size, local to the first node with CPUs */
    int home = 0;
    while (home < r->n && !r->has_cpus[home])
        home++;
    if (home < r->n) {
        pin_cpu(r->cpus[home][0]);
        size_t top = quick ? ((size_t)8 << 20) : lat_bytes;
        for (size_t s = 16 << 10; s <= top && r->nsizes < MEASURE_MAX_SIZES; s *= quick ? 4 : 2) {
            void *buf = alloc_on(s, r->nodes[home]);
            r->sizes[r->nsizes] = s;
            r->lat_by_size[r->nsizes] = buf ? measure_chase(buf, s, quick ? 50000 : 2000000) : -1;
            if (verbose)
                fprintf(stderr, "measure: working set %zu KiB: %.2f ns/load\n", s >> 10,
                        r->lat_by_size[r->nsizes]);
            r->nsizes++;
            npl_free(buf);
        }
        sched_setaffinity(0, sizeof saved, &saved);
        /* bandwidth against threads on the home node's CPUs */
        r->bw_node = r->nodes[home];
        for (int k = 1; k <= r->ncpus[home] && k <= MEASURE_MAX_CPUS; k++) {
            r->bw_by_threads[k - 1] = bw_threads(r->cpus[home], k, r->nodes[home],
                                                 quick ? (1u << 16) : bw_n / 2, reps);
            r->nthreads = k;
            if (verbose)
                fprintf(stderr, "measure: %d thread(s) on node %d: %.0f MB/s\n", k, r->bw_node,
                        r->bw_by_threads[k - 1]);
        }
    }
    sched_setaffinity(0, sizeof saved, &saved);
    return 0;
}

static void row(char *buf, size_t size, const double *v, int n, const char *fmt)
{
    size_t off = 0;
    buf[0] = 0;
    for (int j = 0; j < n && off < size; j++)
        off += (size_t)snprintf(buf + off, size - off, fmt, j ? " " : "", v[j] < 0 ? 0 : v[j]);
}

int measure_write_config(const struct measure_result *r, const char *path)
{
    npl_config *c = NULL;
    /* keep what an existing file says about machine, threads and policy */
    if (access(path, R_OK) == 0 && npl_config_load(&c, path) < 0) {
        fprintf(stderr, "numaplace measure: %s exists but is not a valid config (%s): not "
                        "overwritten\n", path, npl_last_error());
        return EXIT_FAILED;
    }
    if (!c && npl_config_new(&c) < 0)
        return cli_fail("config");
    char buf[16384];
    int *nodes = malloc(sizeof(int) * MEASURE_MAX_NODES);
    for (int i = 0; i < r->n; i++)
        nodes[i] = r->nodes[i];
    buf[0] = 0;
    for (int i = 0; i < r->n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", nodes[i]);
    free(nodes);
    int rc = npl_config_set(c, "factors", "nodes", buf);
    for (int i = 0; i < r->n && rc == 0; i++) {
        if (!r->has_cpus[i])
            continue;
        char key[64];
        snprintf(key, sizeof key, "latency_ns.%d", r->nodes[i]);
        row(buf, sizeof buf, r->lat[i], r->n, "%s%.2f");
        rc = npl_config_set(c, "factors", key, buf);
        snprintf(key, sizeof key, "bandwidth_mbs.%d", r->nodes[i]);
        row(buf, sizeof buf, r->bw[i], r->n, "%s%.0f");
        if (rc == 0)
            rc = npl_config_set(c, "factors", key, buf);
    }
    time_t tt = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&tt));
    snprintf(buf, sizeof buf, "numaplace measure%s on %s, latency buffer %zu KiB, triad arrays "
             "%zu KiB", r->quick ? " --quick" : "", when, r->lat_bytes >> 10, r->bw_bytes >> 10);
    if (rc == 0)
        rc = npl_config_set(c, "factors", "measured", buf);
    if (rc < 0) {
        npl_config_free(c);
        return cli_fail("config");
    }
    int need = npl_config_format(c, NULL, 0);
    char *text = malloc((size_t)need + 1);
    npl_config_format(c, text, (size_t)need + 1);
    npl_config_free(c);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) { /* appeared while measuring */
        free(text);
        fprintf(stderr, "numaplace measure: %s is a symbolic link: not written (give the file it "
                        "points to)\n", path);
        return EXIT_FAILED;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    free(text);
    if (!ok || rename(tmp, path) < 0) {
        fprintf(stderr, "numaplace measure: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return EXIT_FAILED;
    }
    return 0;
}

void measure_print(FILE *f, const struct measure_result *r)
{
    if (*r->note)
        fprintf(f, "note: %s\n", r->note);
    const char *titles[] = {"latency (ns per dependent load), row = CPU node, column = memory node",
                            "triad bandwidth (MB/s)", "NUMA factor (remote/local latency)",
                            "bandwidth ratio (local/remote)"};
    for (int w = 0; w < 4; w++) {
        fprintf(f, "\n%s\n%8s", titles[w], "");
        for (int j = 0; j < r->n; j++)
            fprintf(f, " %9s%d", "node", r->nodes[j]);
        fprintf(f, "\n");
        for (int i = 0; i < r->n; i++) {
            if (!r->has_cpus[i])
                continue;
            fprintf(f, "node%-4d", r->nodes[i]);
            for (int j = 0; j < r->n; j++) {
                double v = w == 0 ? r->lat[i][j] : w == 1 ? r->bw[i][j]
                         : w == 2 ? (r->lat[i][i] > 0 ? r->lat[i][j] / r->lat[i][i] : -1)
                                  : (r->bw[i][j] > 0 ? r->bw[i][i] / r->bw[i][j] : -1);
                fprintf(f, w == 1 ? " %10.0f" : w == 0 ? " %10.1f" : " %10.3f", v);
            }
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\nlatency against working-set size (node %d):\n", r->bw_node);
    for (int k = 0; k < r->nsizes; k++)
        fprintf(f, "  %8zu KiB  %7.2f ns\n", r->sizes[k] >> 10, r->lat_by_size[k]);
    fprintf(f, "triad bandwidth against threads (node %d):\n", r->bw_node);
    for (int k = 0; k < r->nthreads; k++)
        fprintf(f, "  %3d thread(s)  %8.0f MB/s\n", k + 1, r->bw_by_threads[k]);
}

/* mkdir -p of the directory part of path (not of path itself) */
static int mkdir_parents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int measure_default_path(char *out, size_t size)
{
    const char *env = getenv("NUMAPLACE_CONFIG"), *home = getenv("HOME");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return 0;
    }
    if (!home || !*home) {
        fprintf(stderr, "numaplace measure: HOME is not set (nor NUMAPLACE_CONFIG): there is no "
                        "config file the library would read; say where to write with --out FILE "
                        "(and point NUMAPLACE_CONFIG at it), or use --no-write\n");
        return EXIT_FAILED;
    }
    snprintf(out, size, "%s/.config/numaplace/config", home);
    if (mkdir_parents(out) < 0) {
        fprintf(stderr, "numaplace measure: cannot create the directory of %s: %s\n", out,
                strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

int measure_check_out(const char *who, const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            fprintf(stderr, "numaplace %s: %s is a symbolic link: refused (give the file it points "
                            "to)\n", who, path);
            return EXIT_FAILED;
        }
        if (!S_ISREG(sb.st_mode)) {
            fprintf(stderr, "numaplace %s: %s is not a regular file: refused\n", who, path);
            return EXIT_FAILED;
        }
        /* an existing file must open without following links and be a config to keep */
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "numaplace %s: cannot read %s: %s\n", who, path, strerror(errno));
            return EXIT_FAILED;
        }
        close(fd);
        npl_config *c = NULL;
        if (npl_config_load(&c, path) < 0) {
            fprintf(stderr, "numaplace %s: %s exists but is not a valid config (%s): not "
                            "overwritten\n", who, path, npl_last_error());
            return EXIT_FAILED;
        }
        npl_config_free(c);
    } else if (errno != ENOENT) {
        fprintf(stderr, "numaplace %s: %s: %s\n", who, path, strerror(errno));
        return EXIT_FAILED;
    }
    /* test-write the directory the file will be renamed into */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.check.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int ok = fd >= 0 && write(fd, "\n", 1) == 1;
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && ok)
        ok = 0, e = errno;
    if (fd >= 0)
        unlink(tmp);
    if (!ok) {
        fprintf(stderr, "numaplace %s: cannot write next to %s: %s\n", who, path, strerror(e));
        return EXIT_FAILED;
    }
    return 0;
}

int cmd_measure(int argc, char **argv)
{
    int quick = 0, print_only = 0;
    const char *out = NULL;
    static const struct option opts[] = {{"quick", no_argument, NULL, 'q'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"no-write", no_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            quick = 1;
            break;
        case 'o':
            out = optarg;
            break;
        case 'n':
            print_only = 1;
            break;
        case 'h':
            printf("usage: numaplace measure [--quick] [--out FILE] [--no-write]\n"
                   "The NUMA factor matrix: latency (pointer chase) and triad bandwidth for every\n"
                   "(CPU node, memory node) pair, the local/remote ratios, latency against working-set\n"
                   "size and bandwidth against threads. Progress on stderr, tables on stdout.\n"
                   "Cache sizes (the latency buffer is larger than the last-level cache) from hwloc.\n"
                   "Writes the [factors] of the platform config FILE, keeping its other sections.\n"
                   "Default FILE: the one the library reads, $NUMAPLACE_CONFIG, else\n"
                   "~/.config/numaplace/config; with neither HOME nor NUMAPLACE_CONFIG set, --out is\n"
                   "required. FILE is checked before measuring: a symbolic link, a file that is not\n"
                   "a regular file or not a valid config, or a directory that cannot be written in is\n"
                   "refused (exit 1).\n"
                   "  --quick     tiny sizes (seconds; the numbers are only indicative)\n"
                   "  --no-write  print only\n"
                   "exit status: 0; 1 measurement or writing failed; 2 bad usage\n");
            return 0;
        default:
            return cli_bad_option("measure", c, argv);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace measure: unknown argument \"%s\" (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    char path[4096];
    if (!print_only) { /* where the result goes, checked before minutes of measuring */
        int rc = 0;
        if (out)
            snprintf(path, sizeof path, "%s", out);
        else
            rc = measure_default_path(path, sizeof path);
        if (rc == 0)
            rc = measure_check_out("measure", path);
        if (rc)
            return rc;
    }
    struct measure_result *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail("out of memory");
    int rc = measure_run(quick, 1, r);
    if (rc == 0) {
        measure_print(stdout, r);
        if (!print_only) {
            rc = measure_write_config(r, path);
            if (rc == 0)
                printf("\nwrote %s\n", path);
        }
    }
    free(r);
    return rc;
}
