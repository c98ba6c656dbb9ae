/* SPDX-License-Identifier: BSD-3-Clause */
/* replicate_bench - XSBench-style random lookups into a read-only table (numag's case), side by
 * side in one run, under:
 *   serial      first touch by one thread (every page on the initialising thread's node)
 *   cyclic      interleaved page by page over the nodes (numaplace cyclic)
 *   replicated  one copy per node (npl_replicate), each thread reads its local copy; once with the
 *               accessor hoisted out of the loop, once calling it on every lookup
 *   +THP        replicas with transparent huge pages (NPL_F_THP)
 *   +hugetlb    replicas on 2 MiB hugetlb pages (NPL_F_HUGETLB; reported fallback if no pool)
 * Each lookup draws a random energy, binary-searches the sorted grid and interpolates between two
 * grid points (about log2(N) dependent random reads). Prints lookups/s, the ratio to serial, and
 * the fraction of table pages that are remote to the reading thread (exact, from move_pages: the
 * only meaningful column in an emulated guest, where remote memory costs the same as local).
 * All variants use the same seeds: their checksums must be equal.
 *   replicate_bench [--mib M] [--lookups L] [--threads T] [--hugepages-per-node P]
 * (defaults 128 MiB, 1,000,000 lookups in all, every allowed CPU; --hugepages-per-node writes
 * each node's 2 MiB pool, as root, and restores it at the end) */
#define _GNU_SOURCE
#include <numaplace.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NXS 7
struct point {
    double energy;
    double xs[NXS];
}; /* 64 bytes, as an XSBench nuclide grid point with its cross sections */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t npoints;
static long lookups_per_thread;

enum mode { DIRECT, ACCESSOR_EACH };
struct job {
    const struct point *table;  /* DIRECT: the table to read */
    const npl_replica *rep;     /* replicas: the set */
    enum mode mode;
    int t;
    double sum, t0, t1;
    int node;
    const struct point *used;
    pthread_barrier_t *bar;
};

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static inline double lookup(const struct point *g, double e)
{
    size_t lo = 0, hi = npoints - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].energy > e)
            hi = mid;
        else
            lo = mid;
    }
    double f = (e - g[lo].energy) / (g[hi].energy - g[lo].energy), s = 0;
    for (int k = 0; k < NXS; k++)
        s += g[lo].xs[k] + f * (g[hi].xs[k] - g[lo].xs[k]);
    return s;
}

static void *worker(void *arg)
{
    struct job *j = arg;
    npl_where_am_i(NULL, &j->node);
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(j->t + 1);
    double sum = 0;
    j->used = j->rep ? npl_replica_local(j->rep) : j->table;
    pthread_barrier_wait(j->bar);
    j->t0 = now();
    if (j->mode == DIRECT) {
        const struct point *g = j->used;
        for (long i = 0; i < lookups_per_thread; i++)
            sum += lookup(g, (double)(xorshift(&seed) >> 11) * 0x1.0p-53);
    } else {
        for (long i = 0; i < lookups_per_thread; i++)
            sum += lookup(npl_replica_local(j->rep), (double)(xorshift(&seed) >> 11) * 0x1.0p-53);
    }
    j->t1 = now();
    j->sum = sum;
    return NULL;
}

/* fraction of the table's pages that are on another node than the reading thread's */
static double remote_fraction(const struct point *g, size_t bytes, int node)
{
    const npl_topo *t = npl_topo_self();
    int nn = npl_topo_node_count(t, 1), idx = npl_topo_node_index(t, node);
    size_t counts[nn], absent = 0, all = 0;
    if (npl_histogram(g, bytes, counts, &absent) < 0 || idx < 0)
        return -1;
    for (int i = 0; i < nn; i++)
        all += counts[i];
    return all ? 1.0 - (double)counts[idx] / (double)all : -1;
}

struct result {
    double rate, remote, sum;
};

static struct result run(const char *name, const struct point *table, const npl_replica *rep,
                         enum mode mode, int nthreads, size_t bytes, double base_rate)
{
    pthread_t th[nthreads];
    struct job j[nthreads];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    npl_pthread_reset();
    for (int t = 0; t < nthreads; t++) {
        j[t] = (struct job){table, rep, mode, t, 0, 0, 0, -1, NULL, &bar};
        if (npl_pthread_create(&th[t], NULL, worker, &j[t], "scatter") != 0) {
            fprintf(stderr, "cannot start thread %d: %s\n", t, npl_last_error());
            exit(1);
        }
    }
    double t0 = 1e300, t1 = 0, sum = 0, remote = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        t0 = j[t].t0 < t0 ? j[t].t0 : t0;
        t1 = j[t].t1 > t1 ? j[t].t1 : t1;
        sum += j[t].sum;
        remote += remote_fraction(j[t].used, bytes, j[t].node);
    }
    pthread_barrier_destroy(&bar);
    struct result r = {(double)lookups_per_thread * nthreads / (t1 - t0), remote / nthreads, sum};
    printf("%-36s %12.0f %8.2fx %9.1f%%\n", name, r.rate, base_rate > 0 ? r.rate / base_rate : 1.0,
           100 * r.remote);
    return r;
}

static const char *pool_path(int node, const char *what)
{
    static char p[160];
    snprintf(p, sizeof p, "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/%s", node, what);
    return p;
}

static int read_int(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void write_int(const char *path, int v)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d", v);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    size_t mib = 128;
    long total = 1000000;
    int nthreads = 0, pool = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib"))
            mib = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--lookups"))
            total = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--threads"))
            nthreads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hugepages-per-node"))
            pool = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: replicate_bench [--mib M] [--lookups L] [--threads T] "
                            "[--hugepages-per-node P]\n");
            return 2;
        }
    }
    const npl_topo *topo = npl_topo_self();
    if (!topo || mib < 1 || total < 1) {
        fprintf(stderr, "replicate_bench: %s\n", topo ? "bad arguments" : npl_last_error());
        return 2;
    }
    if (nthreads <= 0)
        nthreads = npl_topo_cpu_count(topo);
    int nn = npl_topo_node_count(topo, 0);
    lookups_per_thread = total / nthreads > 0 ? total / nthreads : 1;
    size_t bytes = mib << 20;
    npoints = bytes / sizeof(struct point);
    int saved[64];
    for (int k = 0; pool >= 0 && k < nn && k < 64; k++) {
        int node = npl_topo_node_id(topo, k);
        saved[k] = read_int(pool_path(node, "nr_hugepages"));
        write_int(pool_path(node, "nr_hugepages"), pool);
    }

    /* the master table: first touch by this thread (serial initialisation) */
    npl_pin_self("scatter", 0);
    struct point *master = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (master == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    madvise(master, bytes, MADV_NOHUGEPAGE); /* base pages, like the other base-page variants */
    for (size_t i = 0; i < npoints; i++) {
        master[i].energy = ((double)i + 0.5) / (double)npoints;
        for (int k = 0; k < NXS; k++)
            master[i].xs[k] = (double)((i * 2654435761u + (size_t)k * 40503u) % 100000) * 1e-5;
    }
    printf("replicate_bench: %zu MiB table (%zu points), %d threads (scatter), %ld lookups each, "
           "%d node(s)\n", mib, npoints, nthreads, lookups_per_thread, nn);
    printf("%-36s %12s %9s %10s\n", "variant", "lookups/s", "vs serial", "remote");
    struct result base = run("serial first touch", master, NULL, DIRECT, nthreads, bytes, 0);
    int same = 1;

    npl_policy *cyc;
    npl_policy_parse(&cyc, "cyclic");
    npl_shape s = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    struct point *inter = npl_alloc_array(&s, cyc, 0);
    if (inter) {
        memcpy(inter, master, bytes);
        same &= run("cyclic (interleave)", inter, NULL, DIRECT, nthreads, bytes, base.rate).sum == base.sum;
        npl_free(inter);
    } else {
        printf("%-36s failed: %s\n", "cyclic (interleave)", npl_last_error());
    }
    npl_policy_free(cyc);

    struct {
        const char *name;
        unsigned flags;
    } rv[] = {{"replicated", 0}, {"replicated + THP", NPL_F_THP}, {"replicated + hugetlb", NPL_F_HUGETLB}};
    for (size_t v = 0; v < sizeof rv / sizeof rv[0]; v++) {
        npl_replica *rep;
        double t0 = now();
        if (npl_replicate(&rep, master, bytes, NULL, 0, rv[v].flags) < 0) {
            printf("%-36s failed: %s\n", rv[v].name, npl_last_error());
            continue;
        }
        double made = now() - t0;
        struct npl_replica_info ri;
        npl_replica_info(rep, &ri);
        char name[64];
        snprintf(name, sizeof name, "%s", rv[v].name);
        if (rv[v].flags & NPL_F_HUGETLB) { /* what was obtained */
            struct npl_array_info ai;
            int huge = 1, fb = 0;
            for (int c = 0; c < ri.ncopies; c++)
                if (npl_array_info(npl_replica_on(rep, npl_replica_node(rep, c)), &ai) == 0) {
                    huge &= ai.hugetlb;
                    fb |= ai.hugetlb_fallback;
                }
            if (!huge)
                snprintf(name, sizeof name, "%s%s", rv[v].name, fb ? " (fell back)" : " (partly)");
        }
        if (rv[v].flags & NPL_F_THP) {
            const npl_topo *t = npl_topo_self();
            int n1 = npl_topo_max_node_id(t) + 1;
            size_t huge[n1], basep[n1], got = 0;
            for (int c = 0; c < ri.ncopies; c++)
                if (npl_histogram_huge(npl_replica_on(rep, npl_replica_node(rep, c)), bytes, huge, basep, NULL) == 0)
                    for (int k = 0; k < n1; k++)
                        got += huge[k];
            snprintf(name, sizeof name, "%s (%zu%% huge)", rv[v].name,
                     (size_t)(100.0 * (double)got * 2 / (double)(mib * (size_t)ri.ncopies)));
        }
        same &= run(name, NULL, rep, DIRECT, nthreads, bytes, base.rate).sum == base.sum;
        if (v == 0)
            same &= run("replicated, accessor/lookup", NULL, rep, ACCESSOR_EACH, nthreads, bytes,
                        base.rate).sum == base.sum;
        if (v == 0) {
            t0 = now();
            npl_replica_sync(rep);
            printf("  replicas: %d x %zu MiB = %zu MiB; made in %.3f s, sync %.3f s (%.0f MiB/s)\n",
                   ri.ncopies, mib, ri.total_bytes >> 20, made, now() - t0,
                   (double)(ri.total_bytes >> 20) / (now() - t0));
        }
        npl_replica_free(rep);
    }
    printf("checksums of all variants equal: %s\n", same ? "yes" : "NO");
    munmap(master, bytes);
    for (int k = 0; pool >= 0 && k < nn && k < 64; k++)
        if (saved[k] >= 0)
            write_int(pool_path(npl_topo_node_id(topo, k), "nr_hugepages"), saved[k]);
    return same ? 0 : 1;
}
