/* SPDX-License-Identifier: BSD-3-Clause */
/* measure.c - the NUMA factor measurements (measure.h), MLC-class:
 *
 * For every (CPU node c, memory node m) pair, buffers placed with bind_all:m:
 *   idle latency  one thread on a CPU of c, dependent loads over a random cyclic permutation of
 *                 cache lines (Sattolo) in a buffer 4x the last-level cache, on 2 MiB pages as
 *                 Intel MLC measures (hugetlb when the pool has pages, else THP), and again on
 *                 4 KiB pages (page walks included): ns per load
 *   bandwidth     STREAM triad a[i] = b[i] + s*c[i] on every allowed CPU of c (24 bytes per
 *                 iteration, as STREAM counts): MB/s
 * and, local to the first node with CPUs ("home"): latency against working-set size (the cache
 * steps), triad bandwidth against threads, loaded latency (the chase while the other CPUs
 * stream), and the read-only / 1:1 / 2:1 read:write mixes with every CPU (peak bandwidth);
 * with two nodes or more, the pages a second npl_migrate_range moves between the home node and
 * the next (4 KiB pages, back and forth): the cost the advice weighs next-touch by.
 * Every figure is repeated (reps) and kept whole (stats.h). */
#define _GNU_SOURCE
#include "common.h"
#include "measure.h"
#include "report_parts.h"

#include <numaplace/migrate.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *alloc_on(size_t bytes, int node, unsigned flags)
{
    npl_policy *p;
    if (npl_policy_create(&p, NPL_BIND_ALL, &node, 1) < 0)
        return NULL;
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    void *a = npl_alloc_array(&shape, p, flags);
    npl_policy_free(p);
    return a;
}

static int pin_cpu(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof s, &s);
}

static void measure_progress(const struct measure_opts *o, const char *step, double f)
{
    if (o->progress)
        o->progress(step, f);
}

/* ---- pointer chase ---- */
static void chase_build(char *b, size_t bytes)
{
    const size_t line = 64;
    size_t n = bytes / line;
    size_t *perm = malloc(n * sizeof *perm);
    if (!perm) { /* sequential ring: still a valid chase */
        for (size_t i = 0; i < n; i++)
            *(void **)(b + i * line) = b + ((i + 1) % n) * line;
        return;
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = 0x9E3779B97F4A7C15ull ^ bytes;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every line */
        size_t j = rng(&s) % i;
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(void **)(b + i * line) = b + perm[i] * line;
    free(perm);
}

static void **chase_walk(void **p, size_t loads)
{
    for (size_t i = 0; i < loads; i++)
        p = *p;
    __asm__ volatile("" ::"r"(p));
    return p;
}

int measure_chase(void *buf, size_t bytes, size_t loads, int reps, struct stat3 *s)
{
    if (!buf || bytes / 64 < 2)
        return -1;
    chase_build(buf, bytes);
    size_t lines = bytes / 64;
    void **p = chase_walk(buf, lines < loads ? lines : loads); /* warm the TLB/caches once */
    for (int r = 0; r < reps; r++) {
        double t0 = npl__now();
        p = chase_walk(p, loads);
        stat_add(s, (npl__now() - t0) / (double)loads * 1e9);
    }
    return 0;
}

/* ---- a team of pinned threads running one bandwidth kernel on slices of a, b, c ----
 * The kernels are written out in SSE2 vectors, unrolled four to eight times as likwid-bench's
 * _sse kernels are, so that the compiler can neither shorten nor replace them: read-only sums
 * into eight independent registers (one chain would measure the add latency, not the loads),
 * and copy stays a loop (CMake also builds this file without the loop-to-memcpy rewrite, whose
 * non-temporal stores would skip the write-allocate that likwid-bench's copy and STREAM's pay).
 * Bytes are counted as STREAM and likwid-bench count them: 8, 16, 24 per element. */
/* two doubles, loaded and stored unaligned (movupd): the SSE2 registers of baseline x86-64 */
typedef double vec2 __attribute__((vector_size(16), aligned(8), may_alias));
#define V(p, i) (*(vec2 *)((p) + (i)))

static double kernel_read(const double *restrict b, size_t n)
{
    vec2 s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) { /* eight independent sums: the loads, not the adds, limit */
        s0 += V(b, i), s1 += V(b, i + 2), s2 += V(b, i + 4), s3 += V(b, i + 6);
        s4 += V(b, i + 8), s5 += V(b, i + 10), s6 += V(b, i + 12), s7 += V(b, i + 14);
    }
    vec2 s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    double total = s[0] + s[1];
    for (; i < n; i++)
        total += b[i];
    return total;
}

static void kernel_copy(double *restrict a, const double *restrict b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vec2 x0 = V(b, i), x1 = V(b, i + 2), x2 = V(b, i + 4), x3 = V(b, i + 6);
        V(a, i) = x0, V(a, i + 2) = x1, V(a, i + 4) = x2, V(a, i + 6) = x3;
    }
    for (; i < n; i++)
        a[i] = b[i];
}

static void kernel_triad(double *restrict a, const double *restrict b, const double *restrict c,
                         size_t n)
{
    const vec2 k = {3.0, 3.0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        V(a, i) = V(b, i) + k * V(c, i), V(a, i + 2) = V(b, i + 2) + k * V(c, i + 2);
        V(a, i + 4) = V(b, i + 4) + k * V(c, i + 4), V(a, i + 6) = V(b, i + 6) + k * V(c, i + 6);
    }
    for (; i < n; i++)
        a[i] = b[i] + 3.0 * c[i];
}
#undef V

static void kernel_run(int mix, double *restrict a, const double *restrict b,
                       const double *restrict c, size_t n, double *sum)
{
    if (mix == MIX_READ)
        *sum += kernel_read(b, n);
    else if (mix == MIX_COPY)
        kernel_copy(a, b, n);
    else /* STREAM's triad */
        kernel_triad(a, b, c, n);
}

static double mix_bytes(int mix) { return mix == MIX_READ ? 8 : mix == MIX_COPY ? 16 : 24; }

struct worker {
    pthread_t th;
    int cpu, mix, reps, inner; /* inner: kernel passes per timed repetition */
    double *a, *b, *c, sum;
    size_t n;
    pthread_barrier_t *bar;
    double t0[STATS_MAX_REPS], t1[STATS_MAX_REPS];
    atomic_int *stop; /* streaming until *stop (loaded latency), else reps */
    double bytes_done, seconds;
    struct gate *gate;
};

/* Workers wait at the gate until every one of them exists, so that a failed pthread_create
 * never leaves the others stuck at a barrier counted for the whole team. */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;  /* 0 wait, 1 go, -1 give up */
    int passed; /* workers that have left gate_pass (the gate lives on team_start's stack) */
};

static int gate_pass(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (g->state == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    int go = g->state > 0;
    g->passed++;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void gate_open(struct gate *g, int state)
{
    pthread_mutex_lock(&g->mu);
    g->state = state;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void *worker_main(void *arg);

/* starts t workers through one gate: 0, or -1 (none left running) when one could not start */
static int team_start(struct worker *w, int t)
{
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    int started = 0;
    while (started < t) {
        w[started].gate = &g;
        if (pthread_create(&w[started].th, NULL, worker_main, &w[started]) != 0)
            break;
        started++;
    }
    gate_open(&g, started == t ? 1 : -1);
    pthread_mutex_lock(&g.mu);
    while (g.passed < started)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    if (started < t)
        for (int i = 0; i < started; i++)
            pthread_join(w[i].th, NULL);
    return started == t ? 0 : -1;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    if (!gate_pass(w->gate))
        return NULL;
    pin_cpu(w->cpu);
    if (w->stop) {
        pthread_barrier_wait(w->bar);
        double t0 = npl__now();
        while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
            kernel_run(w->mix, w->a, w->b, w->c, w->n, &w->sum);
            w->bytes_done += mix_bytes(w->mix) * (double)w->n;
        }
        w->seconds = npl__now() - t0;
        return NULL;
    }
    for (int r = 0; r < w->reps; r++) {
        pthread_barrier_wait(w->bar);
        w->t0[r] = npl__now();
        for (int i = 0; i < w->inner; i++)
            kernel_run(w->mix, w->a, w->b, w->c, w->n, &w->sum);
        w->t1[r] = npl__now();
    }
    return NULL;
}

/* Runs `mix` on t threads pinned to cpus, each on its slice of per doubles of a, b, c, reps
 * times `inner` passes; rate[r] gets the MB/s of repetition r (all bytes over first start to
 * last end). Returns 0, or -1 when a thread could not be started. */
static int team_run(const int *cpus, int t, double *a, double *b, double *c, size_t per,
                    int mix, int reps, int inner, double *rate)
{
    struct worker *w = calloc((size_t)t, sizeof *w);
    pthread_barrier_t bar;
    if (!w)
        return -1;
    pthread_barrier_init(&bar, NULL, (unsigned)t);
    for (int i = 0; i < t; i++)
        w[i] = (struct worker){.cpu = cpus[i], .mix = mix, .reps = reps, .inner = inner,
                               .a = a + per * (size_t)i, .b = b + per * (size_t)i,
                               .c = c + per * (size_t)i, .n = per, .bar = &bar};
    if (team_start(w, t) < 0) {
        pthread_barrier_destroy(&bar);
        free(w);
        return -1;
    }
    for (int i = 0; i < t; i++)
        pthread_join(w[i].th, NULL);
    pthread_barrier_destroy(&bar);
    for (int r = 0; r < reps; r++) {
        double t0 = w[0].t0[r], t1 = w[0].t1[r];
        for (int i = 1; i < t; i++) {
            t0 = w[i].t0[r] < t0 ? w[i].t0[r] : t0;
            t1 = w[i].t1[r] > t1 ? w[i].t1[r] : t1;
        }
        rate[r] = t1 > t0 ? mix_bytes(mix) * (double)(per * (size_t)t) * inner / (t1 - t0) / 1e6
                          : 0;
    }
    free(w);
    return 0;
}

/* MB/s of `mix` on t threads pinned to cpus, arrays of total_n doubles on node, one figure
 * per repetition added to s. A repetition lasts about rep_s seconds, as likwid-bench's runs
 * are timed: untimed trial runs measure the pass time and set the number of passes. */
static void team_bw(const int *cpus, int t, int node, size_t total_n, int mix, int reps,
                    double rep_s, struct stat3 *s)
{
    double *a = alloc_on(total_n * 8, node, 0), *b = alloc_on(total_n * 8, node, 0),
           *c = alloc_on(total_n * 8, node, 0);
    if (a && b && c) {
        for (size_t i = 0; i < total_n; i++)
            a[i] = 0, b[i] = 1, c[i] = 2;
        size_t per = total_n / (size_t)t;
        double rate[STATS_MAX_REPS], bytes = mix_bytes(mix) * (double)(per * (size_t)t);
        /* passes per repetition: grown 4x until a trial lasts rep_s/8 (one pass of a small
         * array is too short to time), then scaled to rep_s */
        int inner = 1, ok;
        double secs = 0;
        while ((ok = team_run(cpus, t, a, b, c, per, mix, 1, inner, rate) == 0 && rate[0] > 0) &&
               (secs = bytes * inner / (rate[0] * 1e6)) < rep_s / 8 && inner < 1000000)
            inner *= 4;
        if (ok) {
            double passes = inner * rep_s / secs;
            inner = passes < 1 ? 1 : passes > 1e7 ? 10000000 : (int)passes + 1;
        }
        if (ok && team_run(cpus, t, a, b, c, per, mix, reps, inner, rate) == 0)
            for (int r = 0; r < reps; r++)
                if (rate[r] > 0)
                    stat_add(s, rate[r]);
    }
    npl_free(a);
    npl_free(b);
    npl_free(c);
}

/* A latency buffer on 2 MiB pages on node: hugetlb from the pool if it has pages, else THP
 * (madvise); *kind says which, *fraction how much of it really is on 2 MiB pages. */
static void *alloc_huge(size_t bytes, int node, char *kind, size_t ksize, double *fraction)
{
    void *buf = alloc_on(bytes, node, NPL_F_HUGETLB | NPL_F_STRICT);
    int tlb = buf != NULL;
    if (!buf)
        buf = alloc_on(bytes, node, NPL_F_THP);
    if (!buf)
        return NULL;
    memset(buf, 1, bytes); /* fault it in, so that the huge pages can be counted */
    int max = npl_topo_max_node_id(npl_topo_self()) + 1;
    size_t *huge = calloc((size_t)max, sizeof *huge), *base = calloc((size_t)max, sizeof *base);
    double h = 0, all = 0;
    if (huge && base && npl_histogram_huge(buf, bytes, huge, base, NULL) == 0)
        for (int i = 0; i < max; i++)
            h += (double)huge[i] * 512, all += (double)huge[i] * 512 + (double)base[i];
    free(huge);
    free(base);
    *fraction = tlb ? 1 : all > 0 ? h / all : 0;
    snprintf(kind, ksize, "%s", tlb ? "hugetlb" : *fraction > 0.5 ? "THP (madvise)"
                                                : "4 KiB (no huge page obtained)");
    return buf;
}

struct sizes {
    size_t lat_bytes, loads, bw_n, curve_top, curve_loads, curve_step;
    double rep_s; /* seconds per bandwidth repetition */
};

static size_t clampz(size_t v, size_t lo, size_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static struct sizes sizes_for(int level, size_t llc)
{
    const size_t M = (size_t)1 << 20;
    struct sizes z;
    if (level == 0) {
        z = (struct sizes){8 * M, 50000, (2 * M) / 8, 8 * M, 20000, 4, 0.1};
    } else if (level == 1) {
        z.lat_bytes = clampz(4 * llc, 64 * M, 256 * M);
        z = (struct sizes){z.lat_bytes, 400000, clampz(4 * llc, 64 * M, 256 * M) / 8, z.lat_bytes,
                           200000, 2, 0.2};
    } else {
        z.lat_bytes = clampz(4 * llc, 256 * M, 1024 * M);
        z = (struct sizes){z.lat_bytes, 4000000, clampz(4 * llc, 256 * M, 1024 * M) / 8,
                           z.lat_bytes, 2000000, 2, 0.5};
    }
    return z;
}

/* usable nodes and their CPUs, cache sizes from hwloc (sysconf's can be wrong) */
static int discover(struct measure_result *r)
{
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
            r->has_cpus[r->n] = r->ncpus[r->n] > 0;
            r->n++;
        }
    }
    if (r->n == 0) {
        fprintf(stderr, "numaplace measure: no usable node\n");
        return EXIT_FAILED;
    }
    uint64_t cb;
    for (int l = 5; l >= 1; l--)
        if (npl_topo_cache_size(t, l, &cb) == 0) {
            if (!r->llc_bytes)
                r->llc_bytes = (size_t)cb, r->llc_level = l;
            if (l <= 3)
                r->cache_bytes[l] = (size_t)cb;
        }
    if (!r->llc_bytes) /* hwloc knows no cache here (some VMs): assume 8 MiB */
        r->llc_bytes = (size_t)8 << 20;
    r->home = 0;
    while (r->home < r->n && !r->has_cpus[r->home])
        r->home++;
    return r->home < r->n ? 0 : (fprintf(stderr, "numaplace measure: no node with CPUs\n"),
                                 EXIT_FAILED);
}

/* idle latency (2 MiB and 4 KiB pages) and all-core triad for every (CPU node, memory node) */
static void idle_matrix(const struct measure_opts *o, const struct sizes *z, int verbose,
                        struct measure_result *r)
{
    int done = 0, total = r->n * r->n;
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < r->n; j++, done++) {
            stat_clear(&r->lat[i][j]);
            stat_clear(&r->lat4k[i][j]);
            stat_clear(&r->bw[i][j]);
            if (!r->has_cpus[i])
                continue;
            measure_progress(o, "latency and bandwidth matrix", (double)done / total);
            pin_cpu(r->cpus[i][0]);
            char kind[48];
            double frac = 0;
            void *buf = alloc_huge(z->lat_bytes, r->nodes[j], kind, sizeof kind, &frac);
            measure_chase(buf, z->lat_bytes, z->loads, o->reps, &r->lat[i][j]);
            npl_free(buf);
            if (!r->huge_kind[0])
                snprintf(r->huge_kind, sizeof r->huge_kind, "%s", kind), r->huge_fraction = frac;
            buf = alloc_on(z->lat_bytes, r->nodes[j], 0);
            measure_chase(buf, z->lat_bytes, z->loads, o->reps, &r->lat4k[i][j]);
            npl_free(buf);
            team_bw(r->cpus[i], r->ncpus[i], r->nodes[j], z->bw_n, MIX_TRIAD, o->reps, z->rep_s,
                    &r->bw[i][j]);
            if (verbose)
                fprintf(stderr, "measure: CPU node %d -> memory node %d: %.1f ns/load (2 MiB "
                        "pages), %.1f ns/load (4 KiB), %.0f MB/s (%d CPUs)\n", r->nodes[i],
                        r->nodes[j], r->lat[i][j].med, r->lat4k[i][j].med, r->bw[i][j].med,
                        r->ncpus[i]);
        }
}

/* latency against working-set size, local to the home node, on 2 MiB pages */
static void size_curve(const struct measure_opts *o, const struct sizes *z, int verbose,
                       struct measure_result *r)
{
    int h = r->home;
    pin_cpu(r->cpus[h][0]);
    for (size_t s = 16 << 10; s <= z->curve_top && r->nsizes < MEASURE_MAX_SIZES;
         s *= z->curve_step) {
        measure_progress(o, "latency against working set", (double)s / (double)z->curve_top);
        char kind[48];
        double frac;
        void *buf = alloc_huge(s, r->nodes[h], kind, sizeof kind, &frac);
        struct stat3 *st = &r->lat_by_size[r->nsizes];
        stat_clear(st);
        r->sizes[r->nsizes++] = s;
        measure_chase(buf, s, z->curve_loads, o->reps, st);
        npl_free(buf);
        if (verbose)
            fprintf(stderr, "measure: working set %zu KiB: %.2f ns/load\n", s >> 10, st->med);
    }
}

/* the chase on the home node's first CPU while k of its other CPUs stream (triad) */
static void loaded_latency(const struct measure_opts *o, const struct sizes *z, int verbose,
                           struct measure_result *r)
{
    int h = r->home, node = r->nodes[h];
    char kind[48];
    double frac;
    void *buf = alloc_huge(z->lat_bytes, node, kind, sizeof kind, &frac);
    size_t n = z->bw_n;
    double *a = alloc_on(n * 8, node, 0), *b = alloc_on(n * 8, node, 0), *c = alloc_on(n * 8,
                                                                                     node, 0);
    r->nloaded = 0;
    for (int k = 0; buf && a && b && c && k < r->ncpus[h] && k < MEASURE_MAX_LOADED; k++) {
        measure_progress(o, "loaded latency", (double)k / r->ncpus[h]);
        atomic_int stop = 0;
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)k + 1);
        struct worker w[MEASURE_MAX_LOADED];
        size_t per = k ? n / (size_t)k : 0;
        for (int i = 0; i < k; i++) {
            size_t off = per * (size_t)i;
            w[i] = (struct worker){.cpu = r->cpus[h][i + 1], .mix = MIX_TRIAD, .a = a + off,
                                   .b = b + off, .c = c + off, .n = per, .bar = &bar,
                                   .stop = &stop};
        }
        if (team_start(w, k) < 0) {
            pthread_barrier_destroy(&bar);
            break;
        }
        pin_cpu(r->cpus[h][0]);
        pthread_barrier_wait(&bar);
        stat_clear(&r->loaded_lat[k]);
        stat_clear(&r->loaded_bw[k]);
        measure_chase(buf, z->lat_bytes, z->loads, o->reps, &r->loaded_lat[k]);
        atomic_store(&stop, 1);
        double mbs = 0;
        for (int i = 0; i < k; i++) {
            pthread_join(w[i].th, NULL);
            mbs += w[i].seconds > 0 ? w[i].bytes_done / w[i].seconds / 1e6 : 0;
        }
        pthread_barrier_destroy(&bar);
        stat_add(&r->loaded_bw[k], mbs);
        r->nloaded = k + 1;
        if (verbose)
            fprintf(stderr, "measure: loaded latency, %d streaming CPU(s): %.1f ns/load, %.0f "
                    "MB/s streamed\n", k, r->loaded_lat[k].med, mbs);
    }
    npl_free(buf);
    npl_free(a);
    npl_free(b);
    npl_free(c);
}

const char *const measure_mix_name[NMIX] = {"read-only", "1:1 read:write", "2:1 read:write"};

static void home_bandwidth(const struct measure_opts *o, const struct sizes *z, int verbose,
                           struct measure_result *r)
{
    int h = r->home;
    r->bw_node = r->nodes[h];
    for (int k = 1; k <= r->ncpus[h] && k <= MEASURE_MAX_CPUS; k++) {
        measure_progress(o, "bandwidth against threads", (double)k / r->ncpus[h]);
        stat_clear(&r->bw_by_threads[k - 1]);
        team_bw(r->cpus[h], k, r->bw_node, z->bw_n, MIX_TRIAD, o->reps, z->rep_s, &r->bw_by_threads[k - 1]);
        r->nthreads = k;
        if (verbose)
            fprintf(stderr, "measure: %d thread(s) on node %d: %.0f MB/s\n", k, r->bw_node,
                    r->bw_by_threads[k - 1].med);
    }
    static const char *names[] = {"read-only", "1:1 read:write (copy)", "2:1 read:write (triad)"};
    r->peak_mix = 0;
    for (int m = 0; m < NMIX; m++) {
        measure_progress(o, "read:write mixes", (double)m / NMIX);
        stat_clear(&r->mix[m]);
        team_bw(r->cpus[h], r->ncpus[h], r->bw_node, z->bw_n, m, o->reps, z->rep_s, &r->mix[m]);
        if (r->mix[m].med > r->mix[r->peak_mix].med)
            r->peak_mix = m;
        if (verbose)
            fprintf(stderr, "measure: %s, %d CPUs: %.0f MB/s\n", names[m], r->ncpus[h],
                    r->mix[m].med);
    }
}

/* Pages a second moved by npl_migrate_range between the home node and the next one, each
 * direction a repetition (4, 64 or 256 MiB of 4 KiB pages by level). Needs two nodes. */
static void migration_rate(const struct measure_opts *o, int verbose, struct measure_result *r)
{
    stat_clear(&r->migrate);
    int h = r->home, other = h + 1 < r->n ? h + 1 : h - 1;
    size_t bytes = (size_t)(o->level == 0 ? 4 : o->level == 1 ? 64 : 256) << 20;
    if (r->n < 2)
        return;
    measure_progress(o, "migration rate", 0);
    pin_cpu(r->cpus[h][0]);
    char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return;
    madvise(buf, bytes, MADV_NOHUGEPAGE); /* 4 KiB pages, as next-touch moves them */
    memset(buf, 1, bytes);
    struct npl_migrate_result res;
    int to[2] = {r->nodes[other], r->nodes[h]};
    if (npl_migrate_range(buf, bytes, r->nodes[h], NULL) == 0)
        for (int k = 0; k < o->reps; k++)
            if (npl_migrate_range(buf, bytes, to[k % 2], &res) == 0 && res.moved &&
                res.seconds > 0)
                stat_add(&r->migrate, (double)res.moved / res.seconds);
    munmap(buf, bytes);
    if (verbose && r->migrate.n)
        fprintf(stderr, "measure: migration between nodes %d and %d: %.0f pages/s\n",
                r->nodes[h], r->nodes[other], r->migrate.med);
}

int measure_run(const struct measure_opts *o, int verbose, struct measure_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = discover(r);
    if (rc)
        return rc;
    struct sizes z = sizes_for(o->level, r->llc_bytes);
    struct host_env host;
    report_host(&host);
    if (host.emulated) /* emulated times mean nothing: one short repetition is enough */
        z.rep_s = 0.01;
    r->level = o->level;
    r->reps = o->reps;
    r->lat_bytes = z.lat_bytes;
    r->bw_bytes = z.bw_n * 8;
    snprintf(r->note, sizeof r->note, "%s", r->n == 1 ? "one NUMA node: the matrix is 1x1, "
             "there is no remote memory to compare with" : "");
    if (verbose)
        fprintf(stderr, "measure: %d node(s), L1 %zu KiB, L2 %zu KiB, LLC (L%d) %zu KiB%s, "
                        "latency buffer %zu KiB, triad arrays 3 x %zu KiB, %d repetitions\n",
                r->n, r->cache_bytes[1] >> 10, r->cache_bytes[2] >> 10, r->llc_level,
                r->llc_bytes >> 10, r->llc_level ? "" : " (unknown: assumed)",
                z.lat_bytes >> 10, (z.bw_n * 8) >> 10, o->reps);
    cpu_set_t saved;
    sched_getaffinity(0, sizeof saved, &saved);
    idle_matrix(o, &z, verbose, r);
    size_curve(o, &z, verbose, r);
    loaded_latency(o, &z, verbose, r);
    sched_setaffinity(0, sizeof saved, &saved);
    home_bandwidth(o, &z, verbose, r);
    migration_rate(o, verbose, r);
    sched_setaffinity(0, sizeof saved, &saved);
    return 0;
}

double measure_factor(const struct measure_result *r, int which, int i, int j)
{
    if (which == 0)
        return r->lat[i][i].med > 0 && r->lat[i][j].med > 0 ? r->lat[i][j].med / r->lat[i][i].med
                                                            : -1;
    return r->bw[i][j].med > 0 && r->bw[i][i].med > 0 ? r->bw[i][i].med / r->bw[i][j].med : -1;
}
