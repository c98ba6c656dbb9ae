/* SPDX-License-Identifier: BSD-3-Clause */
/* cg_bench - a NAS-CG-like conjugate-gradient solver with the three data placement schemes of
 * Nikolopoulos et al. / the geographical-locality paper: SI (serial initialization, first touch
 * puts everything on the initializing thread's node), PI (parallel initialization in the same
 * static schedule as the solver) and SI+MIG (serial initialization, migrate-on-next-touch armed
 * before the first iteration, page-granular chunks).
 *
 * The matrix is a random sparse symmetric positive definite matrix in CSR (K random partners per
 * row, mirrored, diagonally dominant). Rows are split in chunks of 64; thread t owns a contiguous
 * range of chunks (a static schedule computed here, identical in every loop). Dot products are
 * summed per chunk and then in chunk order, so every result (and the checksum) is bit-identical
 * for any thread count and any placement.
 *
 * Printed (one JSON object on stdout): the time of each iteration, and after the iterations listed
 * with --measure the exact remote fraction counted two ways from the pages' real nodes:
 *   own_block: pages of each thread's own rows in every array, remote when the page is not on
 *              the node the owner thread runs on;
 *   accesses:  every element access of one iteration (including the gathers p[col[k]]), weighted
 *              per access, remote as above (accesses to pages not present at that moment, e.g.
 *              being migrated by the kernel, are counted apart as unknown_accesses).
 *
 *   cg_bench [--rows N] [--partners K] [--iters I] [--scheme si|pi|simig] [--measure 1,5,20]
 *            [--pin compact|scatter|none] [--seed S] [--pages 4k|2m]
 * --pages 2m (numaplace variant): the arrays on 2 MiB hugetlb pages, next-touch chunks of one huge
 * page (bench/nt_adaptive compares the first iteration's migration cost with 4 KiB pages).
 * The numaplace variant (BENCH_NPL) pins with npl_omp_pin_team and arms next-touch with
 * npl_next_touch_arm; the plain variant (bench/progs/cg_plain) has neither, scheme simig is
 * refused, and it is meant to run under `numaplace run --next-touch --pin scatter`. */
#include "bench_common.h"

#include <getopt.h>
#include <math.h>
#include <omp.h>
#ifdef BENCH_NPL
#include <numaplace/migrate.h>
#include <numaplace/omp.h>
#endif

#define CHUNK_ROWS 64
#define MAX_MEASURE 16

enum scheme { SI, PI, SIMIG };
static const char *const scheme_names[] = {"si", "pi", "simig"};

struct opts {
    int rows, partners, iters, nmeasure, measure[MAX_MEASURE];
    enum scheme scheme;
    const char *pin;
    uint64_t seed;
};

struct cg {
    int n, nthreads, nchunks;
    long nnz;
    int *rowptr, *col;
    double *val, *z, *r, *p, *q, *partial;
    double rho, alpha, beta;
    int tnode[1024];
};

/* the arrays whose placement is measured, in one table */
struct arr {
    const char *name;
    void *base;
    size_t elem, count;
    int *nodes;
};
enum { A_ROWPTR, A_COL, A_VAL, A_Z, A_R, A_P, A_Q, NARR };

static void rows_of(const struct cg *cg, int t, int *r0, int *r1)
{
    int c0 = (int)((long)t * cg->nchunks / cg->nthreads);
    int c1 = (int)((long)(t + 1) * cg->nchunks / cg->nthreads);
    *r0 = c0 * CHUNK_ROWS;
    *r1 = c1 * CHUNK_ROWS < cg->n ? c1 * CHUNK_ROWS : cg->n;
}

/* the matrix in temporary (malloc'ed) CSR: K random partners per row, mirrored */
static int build_matrix(int n, int k, uint64_t seed, int **rp, int **cl, double **vl, long *nnz)
{
    int *cnt = calloc((size_t)n + 1, sizeof *cnt), *fill = calloc((size_t)n, sizeof *fill);
    double *diag = calloc((size_t)n, sizeof *diag);
    if (!cnt || !fill || !diag)
        return -1;
    for (long e = 0; e < (long)n * k; e++) {
        int i = (int)(e / k), j = (int)(bench_mix(seed ^ (uint64_t)e) % (uint64_t)n);
        if (i != j)
            cnt[i + 1]++, cnt[j + 1]++;
    }
    for (int i = 0; i < n; i++)
        cnt[i + 1] += cnt[i] + 1; /* + the diagonal */
    *nnz = cnt[n];
    *rp = cnt;
    *cl = malloc((size_t)*nnz * sizeof **cl);
    *vl = malloc((size_t)*nnz * sizeof **vl);
    if (!*cl || !*vl)
        return -1;
    for (long e = 0; e < (long)n * k; e++) {
        uint64_t h = bench_mix(seed ^ (uint64_t)e);
        int i = (int)(e / k), j = (int)(h % (uint64_t)n);
        double v = 0.1 + (double)(bench_mix(h) >> 11) * (1.0 / 9007199254740992.0);
        if (i == j)
            continue;
        (*cl)[cnt[i] + fill[i]] = j, (*vl)[cnt[i] + fill[i]++] = -v;
        (*cl)[cnt[j] + fill[j]] = i, (*vl)[cnt[j] + fill[j]++] = -v;
        diag[i] += v, diag[j] += v;
    }
    for (int i = 0; i < n; i++)
        (*cl)[cnt[i] + fill[i]] = i, (*vl)[cnt[i] + fill[i]] = diag[i] + 1.0;
    free(fill);
    free(diag);
    return 0;
}

/* copy rows [r0, r1) of the temporary matrix and set the vectors of those rows (first touch) */
static void init_rows(struct cg *cg, const int *rp, const int *cl, const double *vl, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        cg->rowptr[i] = rp[i];
        for (int k = rp[i]; k < rp[i + 1]; k++)
            cg->col[k] = cl[k], cg->val[k] = vl[k];
        cg->r[i] = 1.0, cg->z[i] = 0.0, cg->p[i] = 0.0, cg->q[i] = 0.0;
    }
    if (r1 == cg->n)
        cg->rowptr[cg->n] = rp[cg->n];
}

static int setup(struct cg *cg, const struct opts *o)
{
    int *rp, *cl;
    double *vl;
    cg->n = o->rows;
    cg->nthreads = omp_get_max_threads();
    cg->nchunks = (cg->n + CHUNK_ROWS - 1) / CHUNK_ROWS;
    if (build_matrix(cg->n, o->partners, o->seed, &rp, &cl, &vl, &cg->nnz) < 0)
        return -1;
    size_t n = (size_t)cg->n;
    cg->rowptr = bench_alloc((n + 1) * sizeof(int));
    cg->col = bench_alloc((size_t)cg->nnz * sizeof(int));
    cg->val = bench_alloc((size_t)cg->nnz * sizeof(double));
    cg->z = bench_alloc(n * sizeof(double)), cg->r = bench_alloc(n * sizeof(double));
    cg->p = bench_alloc(n * sizeof(double)), cg->q = bench_alloc(n * sizeof(double));
    cg->partial = calloc((size_t)cg->nchunks, sizeof(double));
    if (!cg->rowptr || !cg->col || !cg->val || !cg->z || !cg->r || !cg->p || !cg->q || !cg->partial)
        return -1;
    if (o->scheme == PI) {
#pragma omp parallel
        {
            int r0, r1;
            rows_of(cg, omp_get_thread_num(), &r0, &r1);
            init_rows(cg, rp, cl, vl, r0, r1);
        }
    } else {
        init_rows(cg, rp, cl, vl, 0, cg->n);
    }
    free(rp);
    free(cl);
    free(vl);
    cg->rho = (double)cg->n; /* r = b = 1: r.r */
    cg->beta = 0.0;
    return 0;
}

static double chunk_sum(const struct cg *cg)
{
    double s = 0.0;
    for (int c = 0; c < cg->nchunks; c++)
        s += cg->partial[c];
    return s;
}

/* one CG iteration, rotated so that each thread first writes its own rows of p:
 * p = r + beta p; q = A p; alpha = rho / p.q; z += alpha p; r -= alpha q; rho' = r.r */
static void iteration(struct cg *cg)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), r0, r1;
        rows_of(cg, t, &r0, &r1);
        cg->tnode[t] = bench_my_node();
        for (int i = r0; i < r1; i++)
            cg->p[i] = cg->r[i] + cg->beta * cg->p[i];
#pragma omp barrier
        for (int c0 = r0; c0 < r1; c0 += CHUNK_ROWS) {
            double s = 0.0;
            for (int i = c0; i < c0 + CHUNK_ROWS && i < r1; i++) {
                double sum = 0.0;
                for (int k = cg->rowptr[i]; k < cg->rowptr[i + 1]; k++)
                    sum += cg->val[k] * cg->p[cg->col[k]];
                cg->q[i] = sum;
                s += cg->p[i] * sum;
            }
            cg->partial[c0 / CHUNK_ROWS] = s;
        }
#pragma omp barrier
#pragma omp single
        cg->alpha = cg->rho / chunk_sum(cg);
        for (int c0 = r0; c0 < r1; c0 += CHUNK_ROWS) {
            double s = 0.0;
            for (int i = c0; i < c0 + CHUNK_ROWS && i < r1; i++) {
                cg->z[i] += cg->alpha * cg->p[i];
                cg->r[i] -= cg->alpha * cg->q[i];
                s += cg->r[i] * cg->r[i];
            }
            cg->partial[c0 / CHUNK_ROWS] = s;
        }
#pragma omp barrier
#pragma omp single
        {
            double rho = chunk_sum(cg);
            cg->beta = rho / cg->rho;
            cg->rho = rho;
        }
    }
}

static void table(struct cg *cg, struct arr *a)
{
    size_t n = (size_t)cg->n;
    struct arr t[NARR] = {{"rowptr", cg->rowptr, sizeof(int), n + 1, NULL},
                          {"col", cg->col, sizeof(int), (size_t)cg->nnz, NULL},
                          {"val", cg->val, sizeof(double), (size_t)cg->nnz, NULL},
                          {"z", cg->z, sizeof(double), n, NULL},
                          {"r", cg->r, sizeof(double), n, NULL},
                          {"p", cg->p, sizeof(double), n, NULL},
                          {"q", cg->q, sizeof(double), n, NULL}};
    memcpy(a, t, sizeof t);
}

struct counts {
    long own_pages, own_remote, own_absent, boundary, accesses, remote_accesses, unknown_accesses;
    long by_node[BENCH_MAX_NODES];
};

/* remote or not: an element access of thread node tn to element idx of array a */
static void access1(const struct arr *a, size_t idx, int tn, long times, struct counts *c)
{
    size_t off = ((uintptr_t)a->base & (BENCH_PAGE - 1)) + idx * a->elem;
    int node = a->nodes[off / BENCH_PAGE];
    if (node < 0) { /* not present now (e.g. a page the kernel is migrating): not counted */
        c->unknown_accesses += times;
        return;
    }
    c->accesses += times;
    if (node != tn)
        c->remote_accesses += times;
}

/* pages of elements [e0, e1) of array a: those wholly inside the range are the thread's own
 * (remote when not on node tn); the partial ones at the ends are shared with a neighbour and
 * only counted as boundary pages */
static void own_pages(const struct arr *a, size_t e0, size_t e1, int tn, struct counts *c)
{
    if (e1 <= e0)
        return;
    size_t off = (uintptr_t)a->base & (BENCH_PAGE - 1), b0 = off + e0 * a->elem;
    size_t b1 = off + e1 * a->elem, total = off + a->elem * a->count;
    for (size_t pg = b0 / BENCH_PAGE; pg <= (b1 - 1) / BENCH_PAGE; pg++) {
        size_t ps = pg * BENCH_PAGE, pe = ps + BENCH_PAGE < total ? ps + BENCH_PAGE : total;
        if (ps < b0 && ps >= off) /* the page starts inside the previous element range */
            c->boundary++;
        else if (pe > b1)
            c->boundary++;
        else if (a->nodes[pg] < 0)
            c->own_pages++, c->own_absent++;
        else
            c->own_pages++, c->own_remote += a->nodes[pg] != tn;
    }
}

/* the element accesses of one iteration by thread t (the loops of iteration()) */
static void count_thread(const struct cg *cg, const struct arr *a, int t, struct counts *c)
{
    int r0, r1, tn = cg->tnode[t];
    rows_of(cg, t, &r0, &r1);
    for (int i = r0; i < r1; i++) {
        access1(&a[A_R], (size_t)i, tn, 3 + 1, c); /* p update; r -= ; r.r */
        access1(&a[A_P], (size_t)i, tn, 2 + 1 + 1, c);
        access1(&a[A_ROWPTR], (size_t)i, tn, 2, c);
        for (int k = cg->rowptr[i]; k < cg->rowptr[i + 1]; k++) {
            access1(&a[A_COL], (size_t)k, tn, 1, c);
            access1(&a[A_VAL], (size_t)k, tn, 1, c);
            access1(&a[A_P], (size_t)cg->col[k], tn, 1, c);
        }
        access1(&a[A_Q], (size_t)i, tn, 2, c);
        access1(&a[A_Z], (size_t)i, tn, 2, c);
    }
    for (int x = 0; x < NARR; x++) {
        size_t e0 = (size_t)r0, e1 = (size_t)r1;
        if (x == A_ROWPTR)
            e1 += 1;
        if (x == A_COL || x == A_VAL)
            e0 = (size_t)cg->rowptr[r0], e1 = (size_t)cg->rowptr[r1];
        own_pages(&a[x], e0, e1, tn, c);
    }
}

static int measure(struct cg *cg, struct counts *c)
{
    struct arr a[NARR];
    table(cg, a);
    memset(c, 0, sizeof *c);
    for (int x = 0; x < NARR; x++) {
        size_t bytes = a[x].elem * a[x].count;
        a[x].nodes = malloc(bench_pages(a[x].base, bytes) * sizeof(int));
        if (!a[x].nodes || bench_page_nodes(a[x].base, bytes, a[x].nodes) < 0)
            return -1;
        for (size_t pg = 0; pg < bench_pages(a[x].base, bytes); pg++)
            if (a[x].nodes[pg] >= 0 && a[x].nodes[pg] < BENCH_MAX_NODES)
                c->by_node[a[x].nodes[pg]]++;
    }
    for (int t = 0; t < cg->nthreads; t++)
        count_thread(cg, a, t, c);
    for (int x = 0; x < NARR; x++)
        free(a[x].nodes);
    return 0;
}

static void teardown(struct cg *cg)
{
    size_t n = (size_t)cg->n;
#ifdef BENCH_NPL
    struct arr a[NARR];
    table(cg, a);
    for (int x = 0; x < NARR; x++)
        npl_next_touch_disarm(a[x].base); /* ENOENT when not armed: nothing to do */
#endif
    bench_free(cg->rowptr, (n + 1) * sizeof(int));
    bench_free(cg->col, (size_t)cg->nnz * sizeof(int));
    bench_free(cg->val, (size_t)cg->nnz * sizeof(double));
    bench_free(cg->z, n * sizeof(double)), bench_free(cg->r, n * sizeof(double));
    bench_free(cg->p, n * sizeof(double)), bench_free(cg->q, n * sizeof(double));
    free(cg->partial);
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"rows", 1, 0, 'n'}, {"partners", 1, 0, 'k'}, {"iters", 1, 0, 'i'}, {"scheme", 1, 0, 's'},
        {"measure", 1, 0, 'm'}, {"pin", 1, 0, 'P'}, {"seed", 1, 0, 'S'}, {"pages", 1, 0, 'G'},
        {0, 0, 0, 0}};
    *o = (struct opts){75000, 10, 20, 3, {1, 5, 20}, SI, "scatter", 42};
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (ch == 'n' || ch == 'k' || ch == 'i') {
            int v = atoi(optarg);
            *(ch == 'n' ? &o->rows : ch == 'k' ? &o->partners : &o->iters) = v;
        } else if (ch == 's') {
            o->scheme = !strcmp(optarg, "pi") ? PI : !strcmp(optarg, "simig") ? SIMIG : SI;
            if (strcmp(optarg, scheme_names[o->scheme]) != 0)
                return -1;
        } else if (ch == 'm') {
            o->nmeasure = 0;
            for (char *s = optarg; *s && o->nmeasure < MAX_MEASURE; s += *s == ',')
                o->measure[o->nmeasure++] = (int)strtol(s, &s, 10);
        } else if (ch == 'P') {
            o->pin = optarg;
        } else if (ch == 'S') {
            o->seed = strtoull(optarg, NULL, 0);
        } else if (ch == 'G') {
            if (bench_set_pages(optarg) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return o->rows >= CHUNK_ROWS && o->partners >= 1 && o->iters >= 1 ? 0 : -1;
}

static int wanted(const struct opts *o, int it)
{
    for (int m = 0; m < o->nmeasure; m++)
        if (o->measure[m] == it)
            return 1;
    return 0;
}

static void print_counts(const struct counts *c, int it, int first)
{
    printf("%s\n    {\"after_iter\": %d, \"own_pages\": %ld, \"own_remote\": %ld, \"own_absent\": %ld, "
           "\"own_remote_frac\": %.6f, \"boundary_pages\": %ld, \"accesses\": %ld, \"remote_accesses\": %ld, "
           "\"access_remote_frac\": %.6f, \"unknown_accesses\": %ld, \"pages_by_node\": [",
           first ? "" : ",", it, c->own_pages, c->own_remote, c->own_absent,
           c->own_pages ? (double)c->own_remote / (double)c->own_pages : 0.0, c->boundary, c->accesses,
           c->remote_accesses, c->accesses ? (double)c->remote_accesses / (double)c->accesses : 0.0,
           c->unknown_accesses);
    int last = 0;
    for (int n = 0; n < BENCH_MAX_NODES; n++)
        if (c->by_node[n])
            last = n;
    for (int n = 0; n <= last; n++)
        printf("%s%ld", n ? ", " : "", c->by_node[n]);
    printf("]}");
}

/* a hash of z's bits and the final residual: identical for any thread count and placement */
static uint64_t checksum(const struct cg *cg)
{
    uint64_t h = 0;
    for (int i = 0; i < cg->n; i++) {
        uint64_t bits;
        memcpy(&bits, &cg->z[i], sizeof bits);
        h = bench_mix(h ^ bits);
    }
    return h;
}

static int arm_all(struct cg *cg)
{
#ifdef BENCH_NPL
    struct arr a[NARR];
    table(cg, a);
    for (int x = 0; x < NARR; x++)
        if (npl_next_touch_arm(a[x].base, bench_round(a[x].elem * a[x].count), BENCH_PAGE) < 0)
            return -1;
    return 0;
#else
    (void)cg;
    errno = ENOTSUP;
    return -1;
#endif
}

static void print_header(const struct cg *cg, const struct opts *o, double init_s)
{
    printf("{\"program\": \"cg\", \"variant\": \"%s\", \"scheme\": \"%s\", \"rows\": %d, "
           "\"partners\": %d, \"nnz\": %ld, \"threads\": %d, \"pin\": \"%s\", \"pages\": \"%s\", "
           "\"init_seconds\": %.6f,\n"
           " \"thread_nodes\": [",
#ifdef BENCH_NPL
           "api",
#else
           "plain",
#endif
           scheme_names[o->scheme], cg->n, o->partners, cg->nnz, cg->nthreads, o->pin,
           bench_huge ? "2m" : "4k", init_s);
    for (int t = 0; t < cg->nthreads; t++)
        printf("%s%d", t ? ", " : "", cg->tnode[t]);
    printf("],\n \"locality\": [");
}

int main(int argc, char **argv)
{
    struct opts o;
    static struct cg cg;
    if (parse(argc, argv, &o) < 0 || omp_get_max_threads() > 1024) {
        fprintf(stderr, "usage: cg_bench [--rows N>=64] [--partners K] [--iters I] "
                        "[--scheme si|pi|simig] [--measure 1,5,20] [--pin compact|scatter|none] "
                        "[--pages 4k|2m]\n");
        return 2;
    }
#ifdef BENCH_NPL
    if (strcmp(o.pin, "none") != 0 && npl_omp_pin_team(o.pin) < 0) {
        fprintf(stderr, "cg_bench: pin %s: %s\n", o.pin, strerror(errno));
        return 1;
    }
#else
    o.pin = getenv("NUMAPLACE_PIN") ? getenv("NUMAPLACE_PIN") : "none";
#pragma omp parallel /* the runtime binds its threads (the master too) before the serial init */
    (void)bench_my_node();
#endif
    long long mig0 = bench_vmstat("numa_pages_migrated"), hint0 = bench_vmstat("numa_hint_faults");
    double t0 = bench_now();
    if (setup(&cg, &o) < 0) {
        fprintf(stderr, "cg_bench: setup: %s\n", strerror(errno));
        return 1;
    }
    if (o.scheme == SIMIG && arm_all(&cg) < 0) {
        fprintf(stderr, "cg_bench: next-touch: %s\n", strerror(errno));
        return 1;
    }
    double init_s = bench_now() - t0, *secs = calloc((size_t)o.iters, sizeof(double));
    struct counts c[MAX_MEASURE];
    int done[MAX_MEASURE], nm = 0;
    for (int it = 1; it <= o.iters; it++) {
        double t = bench_now();
        iteration(&cg);
        secs[it - 1] = bench_now() - t;
        if (wanted(&o, it) && nm < MAX_MEASURE) {
            if (measure(&cg, &c[nm]) < 0) {
                fprintf(stderr, "cg_bench: page query: %s\n", strerror(errno));
                return 1;
            }
            done[nm++] = it;
        }
    }
    long long mig1 = bench_vmstat("numa_pages_migrated"), hint1 = bench_vmstat("numa_hint_faults");
    print_header(&cg, &o, init_s);
    for (int m = 0; m < nm; m++)
        print_counts(&c[m], done[m], m == 0);
    printf("],\n \"iter_seconds\": [");
    for (int it = 0; it < o.iters; it++)
        printf("%s%.6f", it ? ", " : "", secs[it]);
    printf("],\n \"kernel_pages_migrated\": %lld, \"kernel_hint_faults\": %lld,\n",
           mig0 < 0 ? -1 : mig1 - mig0, hint0 < 0 ? -1 : hint1 - hint0);
#ifdef BENCH_NPL
    struct npl_next_touch_stats nt;
    npl_next_touch_get_stats(&nt);
    printf(" \"next_touch\": {\"faults\": %llu, \"pages_moved\": %llu, \"pages_failed\": %llu},\n",
           (unsigned long long)nt.faults, (unsigned long long)nt.pages_moved,
           (unsigned long long)nt.pages_failed);
#endif
    printf(" \"residual\": %.17g, \"checksum\": \"%016llx\"}\n", sqrt(cg.rho),
           (unsigned long long)checksum(&cg));
    free(secs);
    teardown(&cg);
    return 0;
}
