/* SPDX-License-Identifier: BSD-3-Clause */
/* mg_bench - a NAS-MG-like multigrid V-cycle with the placement schemes of the
 * geographical-locality paper: SI (serial initialization: first touch puts every grid on the
 * initializing thread's node), PI (parallel initialization in the solver's static schedule) and
 * SI+MIG (serial initialization, migrate-on-next-touch armed before the first iteration).
 *
 * Grids: level l (1 coarsest .. lt finest) holds (n_l + 2)^3 doubles with one ghost layer and
 * periodic boundaries, n_l = n >> (lt - l); u (solution) and r (residual) exist at every level,
 * v (right-hand side) at the finest; each level of u and r is its own allocation (one allocation
 * site per grid, an ordinal per level). Thread t owns a contiguous range of planes (the outermost
 * index) of every level, as NPB's `omp for` over i3. The operators follow NPB MG's mg3P: resid
 * (27-point residual), psinv (smoother), rprj3 (restriction) and interp (trilinear
 * prolongation), with the stencils in one table used both to compute and to count.
 *
 * Every result is computed point by point in a fixed order and summed per plane then in plane
 * order, so the residual norm and the checksum are bit-identical for any thread count and any
 * placement. The exact remote fraction is counted from the pages' real nodes after the listed
 * iterations: every element access of one iteration (stencil reads and writes, ghost copies),
 * remote when its page is not on the node of the accessing thread.
 *
 *   mg_bench [--n N] [--iters I] [--scheme si|pi|simig] [--measure 1,2,4] [--pin compact|scatter|none]
 *            [--pages 4k|2m]   (2m, numaplace variant: 2 MiB hugetlb arrays, one-huge-page chunks)
 * The numaplace variant (BENCH_NPL) pins with npl_omp_pin_team and arms next-touch with
 * npl_next_touch_arm; the plain variant (bench/progs/mg_plain) has neither (scheme simig is
 * refused) and is meant for `numaplace run`/`profile`.
 * A host model of placements (any machine, one node too): MG_BENCH_FAKE_NODES=N counts thread t
 * as on node t mod N, and MG_BENCH_USE=FILE writes, per grid, one line: its name and level, the
 * offset of its start in its page, its pages, N, then every page's accesses from each node (page
 * by page), from which the remote accesses of any page->node map follow. */
#include "bench_common.h"

#include <getopt.h>
#include <math.h>
#include <omp.h>
#ifdef BENCH_NPL
#include <numaplace/migrate.h>
#include <numaplace/omp.h>
#endif

#define MAX_LEVELS 12
#define MAX_MEASURE 16
#define MAX_THREADS 1024

enum scheme { SI, PI, SIMIG };
static const char *const scheme_names[] = {"si", "pi", "simig"};

struct opts {
    int n, iters, nmeasure, measure[MAX_MEASURE];
    enum scheme scheme;
    const char *pin;
};

struct grid {        /* one level of one grid */
    double *a;
    int n, m;        /* interior points per dimension; m = n + 2 with the ghosts */
};

struct mg {
    int lt, nthreads;
    struct grid u[MAX_LEVELS + 1], r[MAX_LEVELS + 1], v;
    double *plane_sum; /* one partial sum per finest interior plane */
    int tnode[MAX_THREADS];
};

static size_t gbytes(const struct grid *g) { return (size_t)g->m * g->m * g->m * sizeof(double); }
static size_t at(const struct grid *g, int i, int j, int k)
{
    return ((size_t)i * (size_t)g->m + (size_t)j) * (size_t)g->m + (size_t)k;
}

/* planes [*i0, *i1) (interior: 1..n) of a level owned by thread t: NPB's static schedule */
static void planes_of(int n, int nthreads, int t, int *i0, int *i1)
{
    *i0 = 1 + (int)((long)t * n / nthreads);
    *i1 = 1 + (int)((long)(t + 1) * n / nthreads);
}

/* ---- the stencils: offsets with a weight class (0 centre, 1 face, 2 edge, 3 corner) ---- */
struct off { int di, dj, dk, cls; };
static struct off st27[27];
static void stencil_init(void)
{
    int s = 0;
    for (int di = -1; di <= 1; di++)
        for (int dj = -1; dj <= 1; dj++)
            for (int dk = -1; dk <= 1; dk++)
                st27[s++] = (struct off){di, dj, dk, abs(di) + abs(dj) + abs(dk)};
}
static const double A[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};   /* resid (NPB's a) */
static const double C[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0}; /* psinv (NPB's c, class A) */
static const double P[4] = {0.5, 0.25, 0.125, 0.0625};                 /* rprj3 weights */

/* ---- access counting (a thread's accesses to one grid's elements, page by page) ---- */
struct counts {
    long accesses, remote_accesses, unknown_accesses;
    long own_pages, own_remote, own_absent, boundary;
    long by_node[BENCH_MAX_NODES];
    long grid_acc[2 * MAX_LEVELS + 1], grid_remote[2 * MAX_LEVELS + 1]; /* as grids() lists them */
    long grid_best[2 * MAX_LEVELS + 1]; /* remote with each page on the node using it most */
    long best_remote;
};
struct gnodes { const struct grid *g; int *nodes; int index; long *use; }; /* use: page x node */
static struct gnodes *count_tab;
static int count_ntab, counting_node, count_nn; /* count_nn: nodes in use's rows */
static struct counts *counting;

static const int *nodes_of(const struct grid *g, int *index, long **use)
{
    for (int x = 0; x < count_ntab; x++)
        if (count_tab[x].g == g)
            return *index = count_tab[x].index, *use = count_tab[x].use, count_tab[x].nodes;
    return NULL;
}

/* `times` accesses to each of the elements [e0, e0 + len) of grid g by the counting thread */
static void count_run(const struct grid *g, size_t e0, size_t len, long times)
{
    int gi = 0;
    long *use = NULL;
    const int *nodes = nodes_of(g, &gi, &use);
    size_t off = (uintptr_t)g->a & (BENCH_PAGE - 1);
    size_t b0 = off + e0 * sizeof(double), b1 = b0 + len * sizeof(double);
    for (size_t pg = b0 / BENCH_PAGE; pg <= (b1 - 1) / BENCH_PAGE; pg++) {
        size_t s = pg * BENCH_PAGE > b0 ? pg * BENCH_PAGE : b0;
        size_t e = (pg + 1) * BENCH_PAGE < b1 ? (pg + 1) * BENCH_PAGE : b1;
        long n = (long)((e - s) / sizeof(double)) * times;
        use[pg * (size_t)count_nn + (size_t)counting_node] += n;
        if (nodes[pg] < 0)
            counting->unknown_accesses += n;
        else {
            counting->accesses += n;
            counting->grid_acc[gi] += n;
            if (nodes[pg] != counting_node)
                counting->remote_accesses += n, counting->grid_remote[gi] += n;
        }
    }
}

#define ROW(g, i, j, k0, len, times) count_run((g), at((g), (i), (j), (k0)), (size_t)(len), (times))

/* the reads of the 27-point stencil over the interior row (i, j) of g: one per point and offset */
static void count_stencil(const struct grid *g, int i, int j)
{
    for (int s = 0; s < 27; s++)
        ROW(g, i + st27[s].di, j + st27[s].dj, 1 + st27[s].dk, g->n, 1);
}

/* ---- the operators: compute (count == 0) or count (count == 1) one thread's share ---- */

/* ghost layers of planes [i0, i1) in the j and k directions (periodic), for one grid */
static void comm3_jk(struct grid *g, int i0, int i1, int count)
{
    int n = g->n;
    for (int i = i0; i < i1; i++) {
        if (count) {
            for (int j = 1; j <= n; j++) {
                ROW(g, i, j, n, 1, 1), ROW(g, i, j, 0, 1, 1); /* k ghosts */
                ROW(g, i, j, 1, 1, 1), ROW(g, i, j, n + 1, 1, 1);
            }
            ROW(g, i, n, 0, g->m, 1), ROW(g, i, 0, 0, g->m, 1); /* j ghosts */
            ROW(g, i, 1, 0, g->m, 1), ROW(g, i, n + 1, 0, g->m, 1);
            continue;
        }
        for (int j = 1; j <= n; j++) {
            g->a[at(g, i, j, 0)] = g->a[at(g, i, j, n)];
            g->a[at(g, i, j, n + 1)] = g->a[at(g, i, j, 1)];
        }
        for (int k = 0; k <= n + 1; k++) {
            g->a[at(g, i, 0, k)] = g->a[at(g, i, n, k)];
            g->a[at(g, i, n + 1, k)] = g->a[at(g, i, 1, k)];
        }
    }
}

/* ghost planes i = 0 and n + 1 (periodic): made by thread 0 after a barrier */
static void comm3_i(struct grid *g, int count)
{
    int n = g->n;
    size_t plane = (size_t)g->m * g->m;
    if (count) {
        count_run(g, at(g, n, 0, 0), plane, 1), count_run(g, at(g, 0, 0, 0), plane, 1);
        count_run(g, at(g, 1, 0, 0), plane, 1), count_run(g, at(g, n + 1, 0, 0), plane, 1);
        return;
    }
    memcpy(g->a + at(g, 0, 0, 0), g->a + at(g, n, 0, 0), plane * sizeof(double));
    memcpy(g->a + at(g, n + 1, 0, 0), g->a + at(g, 1, 0, 0), plane * sizeof(double));
}

/* out = in0 - A * u over planes [i0, i1) (resid: out = v - A u, in place when out == in0) */
static void resid(struct grid *u, struct grid *v, struct grid *r, int i0, int i1, int count)
{
    int n = u->n;
    for (int i = i0; i < i1; i++)
        for (int j = 1; j <= n; j++) {
            if (count) {
                count_stencil(u, i, j);
                ROW(v, i, j, 1, n, 1), ROW(r, i, j, 1, n, 1);
                continue;
            }
            for (int k = 1; k <= n; k++) {
                double s4[4] = {0, 0, 0, 0};
                for (int s = 0; s < 27; s++)
                    s4[st27[s].cls] += u->a[at(u, i + st27[s].di, j + st27[s].dj, k + st27[s].dk)];
                r->a[at(r, i, j, k)] = v->a[at(v, i, j, k)] - (A[0] * s4[0] + A[1] * s4[1] +
                                                               A[2] * s4[2] + A[3] * s4[3]);
            }
        }
}

/* u += C * r over planes [i0, i1) */
static void psinv(struct grid *r, struct grid *u, int i0, int i1, int count)
{
    int n = u->n;
    for (int i = i0; i < i1; i++)
        for (int j = 1; j <= n; j++) {
            if (count) {
                count_stencil(r, i, j);
                ROW(u, i, j, 1, n, 2);
                continue;
            }
            for (int k = 1; k <= n; k++) {
                double s4[4] = {0, 0, 0, 0};
                for (int s = 0; s < 27; s++)
                    s4[st27[s].cls] += r->a[at(r, i + st27[s].di, j + st27[s].dj, k + st27[s].dk)];
                u->a[at(u, i, j, k)] += C[0] * s4[0] + C[1] * s4[1] + C[2] * s4[2];
            }
        }
}

/* coarse(i, j, k) = weighted 27 fine points around (2i, 2j, 2k), coarse planes [i0, i1) */
static void rprj3(struct grid *fine, struct grid *coarse, int i0, int i1, int count)
{
    int n = coarse->n;
    for (int i = i0; i < i1; i++)
        for (int j = 1; j <= n; j++) {
            if (count) {
                for (int q = 0; q < 27; q++)
                    for (int k = 1; k <= n; k++)
                        ROW(fine, 2 * i + st27[q].di, 2 * j + st27[q].dj, 2 * k + st27[q].dk, 1, 1);
                ROW(coarse, i, j, 1, n, 1);
                continue;
            }
            for (int k = 1; k <= n; k++) {
                double s = 0.0;
                for (int q = 0; q < 27; q++)
                    s += P[st27[q].cls] *
                         fine->a[at(fine, 2 * i + st27[q].di, 2 * j + st27[q].dj, 2 * k + st27[q].dk)];
                coarse->a[at(coarse, i, j, k)] = s;
            }
        }
}

/* fine += trilinear interpolation of coarse, over the fine interior planes [i0, i1) */
static void interp(struct grid *coarse, struct grid *fine, int i0, int i1, int count)
{
    int n = fine->n;
    for (int i = i0; i < i1; i++)
        for (int j = 1; j <= n; j++) {
            int ci = i / 2, cj = j / 2, ni = i % 2, nj = j % 2;
            if (count) {
                for (int a = 0; a <= ni; a++)
                    for (int b = 0; b <= nj; b++)
                        for (int k = 1; k <= n; k++)
                            for (int c = 0; c <= k % 2; c++)
                                ROW(coarse, ci + a, cj + b, k / 2 + c, 1, 1);
                ROW(fine, i, j, 1, n, 2);
                continue;
            }
            for (int k = 1; k <= n; k++) {
                int ck = k / 2, nk = k % 2;
                double s = 0.0, w = 1.0 / (double)((1 << ni) * (1 << nj) * (1 << nk));
                for (int a = 0; a <= ni; a++)
                    for (int b = 0; b <= nj; b++)
                        for (int c = 0; c <= nk; c++)
                            s += coarse->a[at(coarse, ci + a, cj + b, ck + c)];
                fine->a[at(fine, i, j, k)] += w * s;
            }
        }
}

static void zero3(struct grid *g, int i0, int i1, int count)
{
    size_t plane = (size_t)g->m * g->m;
    if (count) {
        count_run(g, at(g, i0, 0, 0), plane * (size_t)(i1 - i0), 1);
        return;
    }
    memset(g->a + at(g, i0, 0, 0), 0, plane * (size_t)(i1 - i0) * sizeof(double));
}

/* one V-cycle and the finest residual, as NPB's mg3P + resid: thread t's share of each step,
 * barriers between steps (compute), or the accesses of that share (count) */
#define STEP(level_n, call)                                                                      \
    do {                                                                                         \
        int i0_, i1_;                                                                            \
        planes_of((level_n), mg->nthreads, t, &i0_, &i1_);                                      \
        call;                                                                                    \
        if (!count) {                                                                            \
            _Pragma("omp barrier")                                                               \
        }                                                                                        \
    } while (0)
#define EXCHANGE(g)                                                                              \
    do {                                                                                         \
        STEP((g)->n, comm3_jk((g), i0_, i1_, count));                                            \
        if (t == 0)                                                                              \
            comm3_i((g), count);                                                                 \
        if (!count) {                                                                            \
            _Pragma("omp barrier")                                                               \
        }                                                                                        \
    } while (0)

static void vcycle(struct mg *mg, int t, int count)
{
    int lt = mg->lt;
    for (int k = lt; k >= 2; k--) {
        STEP(mg->r[k - 1].n, rprj3(&mg->r[k], &mg->r[k - 1], i0_, i1_, count));
        EXCHANGE(&mg->r[k - 1]);
    }
    STEP(mg->u[1].n, zero3(&mg->u[1], i0_, i1_, count));
    STEP(mg->u[1].n, psinv(&mg->r[1], &mg->u[1], i0_, i1_, count));
    EXCHANGE(&mg->u[1]);
    for (int k = 2; k <= lt; k++) {
        struct grid *vk = k == lt ? &mg->v : &mg->r[k];
        if (k < lt)
            STEP(mg->u[k].n, zero3(&mg->u[k], i0_, i1_, count));
        STEP(mg->u[k].n, interp(&mg->u[k - 1], &mg->u[k], i0_, i1_, count));
        EXCHANGE(&mg->u[k]);
        STEP(mg->u[k].n, resid(&mg->u[k], vk, &mg->r[k], i0_, i1_, count));
        EXCHANGE(&mg->r[k]);
        STEP(mg->u[k].n, psinv(&mg->r[k], &mg->u[k], i0_, i1_, count));
        EXCHANGE(&mg->u[k]);
    }
    STEP(mg->u[lt].n, resid(&mg->u[lt], &mg->v, &mg->r[lt], i0_, i1_, count));
    EXCHANGE(&mg->r[lt]);
}

static int fake_nodes; /* MG_BENCH_FAKE_NODES=N: counting as if on N nodes, thread t on t mod N */

static void iteration(struct mg *mg)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        mg->tnode[t] = fake_nodes > 0 ? t % fake_nodes : bench_my_node();
        vcycle(mg, t, 0);
    }
}

/* every level of every grid zeroed (first touch): all of it by the calling thread (serial), or
 * thread t's planes, the ghost planes by the first and the last thread (parallel) */
static void init_planes(struct mg *mg, int serial, int t)
{
    for (int l = 1; l <= mg->lt; l++) {
        struct grid *g[3] = {&mg->u[l], &mg->r[l], l == mg->lt ? &mg->v : NULL};
        int i0 = 0, i1 = mg->u[l].n + 2;
        if (!serial) {
            planes_of(mg->u[l].n, mg->nthreads, t, &i0, &i1);
            if (t == 0)
                i0 = 0;
            if (t == mg->nthreads - 1)
                i1 = mg->u[l].n + 2;
        }
        for (int x = 0; x < 3; x++)
            if (g[x] && i1 > i0)
                memset(g[x]->a + at(g[x], i0, 0, 0), 0,
                       (size_t)(i1 - i0) * g[x]->m * g[x]->m * sizeof(double));
    }
}

/* the right-hand side: +-1 at 20 points chosen by a seeded hash (NPB's zran3 does the same with
 * its own generator), 0 elsewhere */
static void place_rhs(struct mg *mg)
{
    struct grid *v = &mg->v;
    for (int q = 0; q < 20; q++) {
        uint64_t h = bench_mix(0x6d67ULL + (uint64_t)q);
        int i = 1 + (int)(h % (uint64_t)v->n), j = 1 + (int)((h >> 20) % (uint64_t)v->n);
        int k = 1 + (int)((h >> 40) % (uint64_t)v->n);
        v->a[at(v, i, j, k)] = q < 10 ? 1.0 : -1.0;
    }
}

static int setup(struct mg *mg, const struct opts *o)
{
    mg->nthreads = omp_get_max_threads();
    mg->lt = 0;
    while ((1 << mg->lt) < o->n)
        mg->lt++;
    if ((1 << mg->lt) != o->n || mg->lt < 2 || mg->lt > MAX_LEVELS)
        return errno = EINVAL, -1;
    for (int l = 1; l <= mg->lt; l++) { /* finest first, as NPB lays its levels out */
        int ll = mg->lt + 1 - l, n = o->n >> (mg->lt - ll);
        mg->u[ll] = (struct grid){NULL, n, n + 2};
        mg->r[ll] = (struct grid){NULL, n, n + 2};
    }
    mg->v = (struct grid){NULL, o->n, o->n + 2};
    for (int ll = mg->lt; ll >= 1; ll--) /* one site per grid, an ordinal per level */
        if (!(mg->u[ll].a = bench_alloc(gbytes(&mg->u[ll]))))
            return -1;
    for (int ll = mg->lt; ll >= 1; ll--)
        if (!(mg->r[ll].a = bench_alloc(gbytes(&mg->r[ll]))))
            return -1;
    if (!(mg->v.a = bench_alloc(gbytes(&mg->v))))
        return -1;
    mg->plane_sum = calloc((size_t)o->n + 2, sizeof(double));
    if (!mg->plane_sum)
        return -1;
    if (o->scheme == PI) {
#pragma omp parallel
        init_planes(mg, 0, omp_get_thread_num());
    } else {
        init_planes(mg, 1, 0);
    }
    place_rhs(mg);
    /* the first residual r = v - A u (u = 0) in the solver's schedule */
#pragma omp parallel
    {
        int t = omp_get_thread_num(), count = 0;
        STEP(mg->u[mg->lt].n, resid(&mg->u[mg->lt], &mg->v, &mg->r[mg->lt], i0_, i1_, 0));
        EXCHANGE(&mg->r[mg->lt]);
    }
    return 0;
}

/* ||r||_2 of the finest level, summed per plane, then in plane order */
static double rnorm(struct mg *mg)
{
    struct grid *r = &mg->r[mg->lt];
#pragma omp parallel for schedule(static)
    for (int i = 1; i <= r->n; i++) {
        double s = 0.0;
        for (int j = 1; j <= r->n; j++)
            for (int k = 1; k <= r->n; k++)
                s += r->a[at(r, i, j, k)] * r->a[at(r, i, j, k)];
        mg->plane_sum[i] = s;
    }
    double s = 0.0;
    for (int i = 1; i <= r->n; i++)
        s += mg->plane_sum[i];
    return sqrt(s / ((double)r->n * r->n * r->n));
}

static uint64_t checksum(const struct mg *mg)
{
    const struct grid *u = &mg->u[mg->lt];
    uint64_t h = 0;
    for (size_t e = 0; e < (size_t)u->m * u->m * u->m; e++) {
        uint64_t bits;
        memcpy(&bits, &u->a[e], sizeof bits);
        h = bench_mix(h ^ bits);
    }
    return h;
}

/* all grids in one list: name, level, grid */
static int grids(struct mg *mg, struct grid **g, const char **name, int *level)
{
    int n = 0;
    for (int l = mg->lt; l >= 1; l--)
        g[n] = &mg->u[l], name[n] = "u", level[n++] = l;
    for (int l = mg->lt; l >= 1; l--)
        g[n] = &mg->r[l], name[n] = "r", level[n++] = l;
    g[n] = &mg->v, name[n] = "v", level[n++] = mg->lt;
    return n;
}

/* pages wholly inside thread t's planes of each grid (own pages), the rest boundary */
static void own_pages(struct mg *mg, struct grid *g, const int *nodes, int t, struct counts *c)
{
    int i0, i1;
    planes_of(g->n, mg->nthreads, t, &i0, &i1);
    size_t off = (uintptr_t)g->a & (BENCH_PAGE - 1);
    size_t b0 = off + at(g, i0, 0, 0) * sizeof(double), b1 = off + at(g, i1, 0, 0) * sizeof(double);
    if (b1 <= b0)
        return;
    for (size_t pg = b0 / BENCH_PAGE; pg <= (b1 - 1) / BENCH_PAGE; pg++) {
        if (pg * BENCH_PAGE < b0 || (pg + 1) * BENCH_PAGE > b1)
            c->boundary++;
        else if (nodes[pg] < 0)
            c->own_pages++, c->own_absent++;
        else
            c->own_pages++, c->own_remote += nodes[pg] != mg->tnode[t];
    }
}

static int measure(struct mg *mg, struct counts *c)
{
    struct grid *g[2 * MAX_LEVELS + 1];
    const char *name[2 * MAX_LEVELS + 1];
    int level[2 * MAX_LEVELS + 1], ng = grids(mg, g, name, level);
    static struct gnodes tab[2 * MAX_LEVELS + 1]; /* read by count_run through count_tab */
    memset(c, 0, sizeof *c);
    count_nn = 1;
    for (int t = 0; t < mg->nthreads; t++)
        if (mg->tnode[t] + 1 > count_nn)
            count_nn = mg->tnode[t] + 1;
    for (int x = 0; x < ng; x++) {
        size_t np = bench_pages(g[x]->a, gbytes(g[x]));
        tab[x] = (struct gnodes){g[x], malloc(np * sizeof(int)), x,
                                 calloc(np * (size_t)count_nn, sizeof(long))};
        if (!tab[x].nodes || !tab[x].use ||
            bench_page_nodes(g[x]->a, gbytes(g[x]), tab[x].nodes) < 0)
            return -1;
        for (size_t pg = 0; pg < np; pg++)
            if (tab[x].nodes[pg] >= 0 && tab[x].nodes[pg] < BENCH_MAX_NODES)
                c->by_node[tab[x].nodes[pg]]++;
    }
    count_tab = tab, count_ntab = ng, counting = c;
    for (int t = 0; t < mg->nthreads; t++) {
        counting_node = mg->tnode[t];
        vcycle(mg, t, 1);
        for (int x = 0; x < ng; x++)
            own_pages(mg, g[x], tab[x].nodes, t, c);
    }
    /* MG_BENCH_USE=FILE: every grid's accesses per page and node (a host model of placements) */
    const char *dump = getenv("MG_BENCH_USE");
    FILE *df = dump ? fopen(dump, "w") : NULL;
    for (int x = 0; df && x < ng; x++) {
        size_t np = bench_pages(g[x]->a, gbytes(g[x]));
        fprintf(df, "%s%d %zu %zu %d", name[x], level[x], (size_t)((uintptr_t)g[x]->a & (BENCH_PAGE - 1)),
                np, count_nn);
        for (size_t i = 0; i < np * (size_t)count_nn; i++)
            fprintf(df, " %ld", tab[x].use[i]);
        fputc('\n', df);
    }
    if (df)
        fclose(df);
    /* the best static placement of these accesses: each page on the node that uses it most */
    for (int x = 0; x < ng; x++) {
        size_t np = bench_pages(g[x]->a, gbytes(g[x]));
        for (size_t pg = 0; pg < np; pg++) {
            long all = 0, most = 0;
            for (int n = 0; n < count_nn; n++) {
                long u = tab[x].use[pg * (size_t)count_nn + (size_t)n];
                all += u;
                most = u > most ? u : most;
            }
            c->grid_best[x] += all - most;
            c->best_remote += all - most;
        }
        free(tab[x].nodes);
        free(tab[x].use);
    }
    count_tab = NULL, count_ntab = 0, counting = NULL;
    return 0;
}

static int arm_all(struct mg *mg)
{
#ifdef BENCH_NPL
    struct grid *g[2 * MAX_LEVELS + 1];
    const char *name[2 * MAX_LEVELS + 1];
    int level[2 * MAX_LEVELS + 1], ng = grids(mg, g, name, level);
    for (int x = 0; x < ng; x++)
        if (npl_next_touch_arm(g[x]->a, bench_round(gbytes(g[x])), BENCH_PAGE) < 0)
            return -1;
    return 0;
#else
    (void)mg;
    errno = ENOTSUP;
    return -1;
#endif
}

static void teardown(struct mg *mg)
{
    struct grid *g[2 * MAX_LEVELS + 1];
    const char *name[2 * MAX_LEVELS + 1];
    int level[2 * MAX_LEVELS + 1], ng = grids(mg, g, name, level);
    for (int x = 0; x < ng; x++) {
#ifdef BENCH_NPL
        npl_next_touch_disarm(g[x]->a); /* ENOENT when not armed: nothing to do */
#endif
        bench_free(g[x]->a, gbytes(g[x]));
    }
    free(mg->plane_sum);
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {{"n", 1, 0, 'n'},       {"iters", 1, 0, 'i'},
                                              {"scheme", 1, 0, 's'},  {"measure", 1, 0, 'm'},
                                              {"pin", 1, 0, 'P'},     {"pages", 1, 0, 'G'},
                                              {0, 0, 0, 0}};
    *o = (struct opts){64, 4, 3, {1, 2, 4}, SI, "scatter"};
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (ch == 'n' || ch == 'i') {
            *(ch == 'n' ? &o->n : &o->iters) = atoi(optarg);
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
        } else if (ch == 'G') {
            if (bench_set_pages(optarg) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return o->n >= 4 && o->n <= 1024 && o->iters >= 1 ? 0 : -1;
}

static int wanted(const struct opts *o, int it)
{
    for (int m = 0; m < o->nmeasure; m++)
        if (o->measure[m] == it)
            return 1;
    return 0;
}

static void print_counts(struct mg *mg, const struct counts *c, int it, int first)
{
    struct grid *g[2 * MAX_LEVELS + 1];
    const char *name[2 * MAX_LEVELS + 1];
    int level[2 * MAX_LEVELS + 1], ng = grids(mg, g, name, level);
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
    long all = c->accesses + c->unknown_accesses;
    printf("], \"best_static_remote_frac\": %.6f,\n     \"by_grid\": {",
           all ? (double)c->best_remote / (double)all : 0.0);
    /* each grid level: accesses and remote ones (pages whose node is known), and remote ones
     * under the best static placement (every access) */
    for (int x = 0; x < ng; x++)
        printf("%s\"%s%d\": [%ld, %ld, %ld]", x ? ", " : "", name[x], level[x], c->grid_acc[x],
               c->grid_remote[x], c->grid_best[x]);
    printf("}}");
}

int main(int argc, char **argv)
{
    struct opts o;
    static struct mg mg;
    if (parse(argc, argv, &o) < 0 || omp_get_max_threads() > MAX_THREADS) {
        fprintf(stderr, "usage: mg_bench [--n N (a power of 2, 4..1024)] [--iters I] "
                        "[--scheme si|pi|simig] [--measure 1,2,4] [--pin compact|scatter|none] "
                        "[--pages 4k|2m]\n");
        return 2;
    }
    stencil_init();
    const char *fake = getenv("MG_BENCH_FAKE_NODES");
    fake_nodes = fake ? atoi(fake) : 0;
#ifdef BENCH_NPL
    if (strcmp(o.pin, "none") != 0 && npl_omp_pin_team(o.pin) < 0) {
        fprintf(stderr, "mg_bench: pin %s: %s\n", o.pin, strerror(errno));
        return 1;
    }
#else
    if (o.scheme == SIMIG) {
        fprintf(stderr, "mg_bench: the plain variant has no next-touch (use numaplace run --next-touch)\n");
        return 2;
    }
    o.pin = getenv("NUMAPLACE_PIN") ? getenv("NUMAPLACE_PIN") : "none";
#pragma omp parallel /* the runtime binds its threads (the master too) before the serial init */
    (void)bench_my_node();
#endif
    long long mig0 = bench_vmstat("numa_pages_migrated"), hint0 = bench_vmstat("numa_hint_faults");
    double t0 = bench_now();
    if (setup(&mg, &o) < 0) {
        fprintf(stderr, "mg_bench: setup: %s\n", strerror(errno));
        return 1;
    }
    if (o.scheme == SIMIG && arm_all(&mg) < 0) {
        fprintf(stderr, "mg_bench: next-touch: %s\n", strerror(errno));
        return 1;
    }
    double init_s = bench_now() - t0, *secs = calloc((size_t)o.iters, sizeof(double));
    struct counts c[MAX_MEASURE];
    int done[MAX_MEASURE], nm = 0;
    double norm = 0.0;
    for (int it = 1; it <= o.iters; it++) {
        double t = bench_now();
        iteration(&mg);
        secs[it - 1] = bench_now() - t;
        if (wanted(&o, it) && nm < MAX_MEASURE) {
            if (measure(&mg, &c[nm]) < 0) {
                fprintf(stderr, "mg_bench: page query: %s\n", strerror(errno));
                return 1;
            }
            done[nm++] = it;
        }
    }
    norm = rnorm(&mg);
    long long mig1 = bench_vmstat("numa_pages_migrated"), hint1 = bench_vmstat("numa_hint_faults");
    printf("{\"program\": \"mg\", \"variant\": \"%s\", \"scheme\": \"%s\", \"n\": %d, \"levels\": %d, "
           "\"threads\": %d, \"pin\": \"%s\", \"pages\": \"%s\", \"init_seconds\": %.6f,\n "
           "\"thread_nodes\": [",
#ifdef BENCH_NPL
           "api",
#else
           "plain",
#endif
           scheme_names[o.scheme], o.n, mg.lt, mg.nthreads, o.pin, bench_huge ? "2m" : "4k",
           init_s);
    for (int t = 0; t < mg.nthreads; t++)
        printf("%s%d", t ? ", " : "", mg.tnode[t]);
    printf("],\n \"locality\": [");
    for (int m = 0; m < nm; m++)
        print_counts(&mg, &c[m], done[m], m == 0);
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
    printf(" \"residual\": %.17g, \"checksum\": \"%016llx\"}\n", norm,
           (unsigned long long)checksum(&mg));
    free(secs);
    teardown(&mg);
    return 0;
}
