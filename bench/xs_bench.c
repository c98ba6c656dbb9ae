/* SPDX-License-Identifier: BSD-3-Clause */
/* xs_bench - the cross-section lookup proxy (the XSBench algorithm as published by Tramm et al.
 * and studied by Yoshii et al.): per-nuclide energy grids of 5 cross sections, a unionized energy
 * grid with, for every union point, the index of each nuclide's grid point, 12 materials with
 * their nuclide counts and concentrations, and random (energy, material) lookups that sum the
 * macroscopic cross sections of the 5 channels over the material's nuclides.
 *
 * Lookup i draws its energy and material from a generator seeded by i alone, so the
 * verification checksum (a sum over lookups of a hash of the 5 macroscopic cross sections, and
 * XSBench's sum of the index of the largest channel) is the same for any thread count, placement,
 * and for the history- and event-based modes.
 *
 *   xs_bench [--size small|large] [--gridpoints G] [--lookups L] [--method history|event]
 *            [--mode default|interleave|numag|numag+huge|nexttouch] [--pin compact|scatter|none]
 *            [--seed S]
 * Modes (numaplace variant, BENCH_NPL): default = serial initialization, first touch, threads
 * free; interleave = the process's kernel policy interleaves everything (as numactl
 * --interleave=all, through npl_set_thread_policy); numag = the nuclide grids replicated on every
 * node (npl_replicate), the unionized grid cyclic, threads pinned; numag+huge = numag with the
 * replicas in 2 MiB pages (hugetlb, else transparent huge pages; the JSON says which were
 * obtained); nexttouch = the grids armed for migrate-on-next-touch (16 KiB chunks) before the
 * lookups, threads pinned. The plain variant (bench/progs/xs_plain) has only default: numactl, GLIBC_TUNABLES
 * and OMP_PROC_BIND are applied from outside. Prints one JSON object. */
#include "bench_common.h"

#include <getopt.h>
#include <omp.h>
#ifdef BENCH_NPL
#include <numaplace/migrate.h>
#include <numaplace/omp.h>
#include <numaplace/replicate.h>
#endif

#define NMAT 12
#define NT_CHUNK (16 * 1024) /* next-touch chunk of mode nexttouch (NUMAPLACE_NEXT_TOUCH=16384) */
#define HISTORY_LOOKUPS 34 /* lookups per particle history, as XSBench */

struct point {
    double energy, xs[5]; /* total, elastic, absorption, fission, nu-fission */
};

struct xs {
    int niso, gp, method; /* method: 0 history, 1 event */
    long union_n, lookups;
    struct point *grid;       /* niso * gp, one sorted grid per nuclide (the master copy) */
    double *union_e;          /* union_n sorted energies */
    int *index;               /* union_n * niso: each nuclide's grid index at a union point */
    int nnucs[NMAT], *mats;   /* mats[m * niso + j]: j-th nuclide of material m */
    double *conc;             /* conc[m * niso + j] */
    uint64_t seed;
#ifdef BENCH_NPL
    npl_replica *replicas;
#endif
};

#define MAX_THREADS 1024
static int thread_node[MAX_THREADS];                  /* where each thread ran its lookups */
static const struct point *thread_grid[MAX_THREADS]; /* and the nuclide grid copy it read */

static const double mat_dist[NMAT] = {0.140, 0.052, 0.275, 0.134, 0.154, 0.064,
                                      0.066, 0.055, 0.008, 0.015, 0.025, 0.013};

static int cmp_point(const void *a, const void *b)
{
    double x = ((const struct point *)a)->energy, y = ((const struct point *)b)->energy;
    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void make_grids(struct xs *x)
{
    uint64_t s = x->seed;
    for (long i = 0; i < (long)x->niso * x->gp; i++) {
        x->grid[i].energy = bench_unit(&s);
        for (int k = 0; k < 5; k++)
            x->grid[i].xs[k] = bench_unit(&s);
    }
    for (int n = 0; n < x->niso; n++)
        qsort(x->grid + (long)n * x->gp, (size_t)x->gp, sizeof *x->grid, cmp_point);
}

/* union energies (serial, first touch by the caller's thread unless placed beforehand) and
 * each nuclide's index at each union point */
static void make_union(struct xs *x)
{
    long n = x->union_n;
    int *at = calloc((size_t)x->niso, sizeof *at);
    for (long i = 0; i < n; i++)
        x->union_e[i] = x->grid[i].energy;
    qsort(x->union_e, (size_t)n, sizeof *x->union_e, cmp_double);
    for (long u = 0; u < n; u++) {
        for (int nuc = 0; nuc < x->niso; nuc++) {
            const struct point *g = x->grid + (long)nuc * x->gp;
            while (at[nuc] < x->gp - 1 && g[at[nuc] + 1].energy <= x->union_e[u])
                at[nuc]++;
            x->index[u * x->niso + nuc] = at[nuc];
        }
    }
    free(at);
}

/* the Hoogenboom-Martin reactor's 12 materials as XSBench models them: fuel (34 nuclides, 321 in
 * the large size, whose extra nuclides are in the fuel only), cladding (5), two borated waters
 * sharing one 4-nuclide coolant set, the pressure vessel (27 structural nuclides), five
 * reflectors/plates/nozzles (coolant + 17 structural = 21) and two fuel-assembly ends (coolant +
 * cladding = 9). Nuclide ids: a seeded permutation of the first 68 (the large size adds 68..354). */
static void make_materials(struct xs *x, int large)
{
    static const int counts[NMAT] = {34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9};
    int perm[68];
    uint64_t s = x->seed ^ 0x5eedULL;
    for (int i = 0; i < 68; i++)
        perm[i] = i;
    for (int i = 67; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(bench_mix(s + (uint64_t)i) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    /* pools in perm: fuel 0..33, coolant 34..37, cladding 38..42, structure 43..67 + 0..1 */
    for (int m = 0; m < NMAT; m++) {
        x->nnucs[m] = m == 0 && large ? 321 : counts[m];
        for (int j = 0; j < x->nnucs[m]; j++) {
            int k = j; /* position in the material's pool sequence */
            if (m == 0)
                k = j < 34 ? perm[j] : 68 + (j - 34);
            else if (m == 1)
                k = perm[38 + j];
            else if (m == 2 || m == 3)
                k = perm[34 + j];
            else if (m == 4)
                k = perm[(43 + j) % 68];
            else if (m <= 9)
                k = j < 4 ? perm[34 + j] : perm[(43 + j - 4) % 68];
            else
                k = j < 4 ? perm[34 + j] : perm[38 + j - 4];
            x->mats[m * x->niso + j] = k < x->niso ? k : k % x->niso;
            x->conc[m * x->niso + j] = bench_unit(&s);
        }
    }
}

static void sample(uint64_t seed, long i, double *energy, int *mat)
{
    uint64_t s = bench_mix(seed ^ ((uint64_t)i * 0x9e3779b97f4a7c15ULL));
    *energy = bench_unit(&s);
    double r = bench_unit(&s), acc = 0.0;
    *mat = NMAT - 1;
    for (int m = 0; m < NMAT; m++) {
        acc += mat_dist[m];
        if (r < acc) {
            *mat = m;
            break;
        }
    }
}

/* one macroscopic lookup; returns its contribution to the checksum, *vmax XSBench's verification */
static uint64_t lookup(const struct xs *x, const struct point *grid, double e, int mat, int *vmax)
{
    long lo = 0, hi = x->union_n - 1;
    /* largest union point with energy <= e; a branch, not a conditional move: the CPU then
     * speculates down the likely half and overlaps the cache misses of successive steps, which
     * gcc's branch-free form serializes (measured: 40% of the proxy's time, 1.3x slower lookups) */
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (x->union_e[mid] > e) {
            __asm__ volatile(""); /* keeps this a branch: gcc would otherwise if-convert it */
            hi = mid;
        } else {
            lo = mid;
        }
    }
    double macro[5] = {0, 0, 0, 0, 0};
    const int *idx = x->index + lo * x->niso;
    for (int j = 0; j < x->nnucs[mat]; j++) {
        int nuc = x->mats[mat * x->niso + j], gi = idx[nuc];
        if (gi == x->gp - 1)
            gi--;
        const struct point *l = grid + (long)nuc * x->gp + gi, *h = l + 1;
        double f = (h->energy - e) / (h->energy - l->energy), c = x->conc[mat * x->niso + j];
        for (int k = 0; k < 5; k++)
            macro[k] += (h->xs[k] - f * (h->xs[k] - l->xs[k])) * c;
    }
    uint64_t hsh = 0;
    *vmax = 0;
    for (int k = 0; k < 5; k++) {
        uint64_t bits;
        memcpy(&bits, &macro[k], sizeof bits);
        hsh = bench_mix(hsh ^ bits);
        if (macro[k] > macro[*vmax])
            *vmax = k;
    }
    return hsh;
}

struct opts {
    int large, gp, method, pin_given;
    long lookups;
    const char *mode, *pin;
    uint64_t seed;
};

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"size", 1, 0, 's'}, {"gridpoints", 1, 0, 'g'}, {"lookups", 1, 0, 'l'}, {"method", 1, 0, 'M'},
        {"mode", 1, 0, 'm'}, {"pin", 1, 0, 'p'}, {"seed", 1, 0, 'S'}, {0, 0, 0, 0}};
    *o = (struct opts){0, 11303, 0, 0, 1000000, "default", "none", 7};
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (ch == 's' && (!strcmp(optarg, "small") || !strcmp(optarg, "large")))
            o->large = !strcmp(optarg, "large");
        else if (ch == 'g')
            o->gp = atoi(optarg);
        else if (ch == 'l')
            o->lookups = atol(optarg);
        else if (ch == 'M' && (!strcmp(optarg, "history") || !strcmp(optarg, "event")))
            o->method = !strcmp(optarg, "event");
        else if (ch == 'm')
            o->mode = optarg;
        else if (ch == 'p')
            o->pin = optarg, o->pin_given = 1;
        else if (ch == 'S')
            o->seed = strtoull(optarg, NULL, 0);
        else
            return -1;
    }
    static const char *const modes[] = {"default", "interleave", "numag", "numag+huge", "nexttouch"};
    int known = 0;
    for (int m = 0; m < 5; m++)
        known |= !strcmp(o->mode, modes[m]);
#ifndef BENCH_NPL
    known = !strcmp(o->mode, "default");
#endif
    return known && o->gp >= 2 && o->lookups >= 1 ? 0 : -1;
}

#ifdef BENCH_NPL
/* numag: replicas of the nuclide grids on every node; 2 MiB pages for numag+huge (hugetlb,
 * else THP). *kind says what the copies got. */
static int replicate_grids(struct xs *x, int huge, const char **kind, size_t *huge_pages)
{
    size_t bytes = (size_t)x->niso * (size_t)x->gp * sizeof(struct point);
    static const unsigned tries[] = {NPL_F_HUGETLB, NPL_F_THP, 0};
    static const char *const names[] = {"hugetlb", "thp", "none"};
    size_t hp[BENCH_MAX_NODES + 1], base[BENCH_MAX_NODES + 1];
    for (int t = huge ? 0 : 2; t < 3; t++) {
        if (npl_replicate(&x->replicas, x->grid, bytes, NULL, 0, tries[t]) < 0)
            return -1;
        *kind = names[t], *huge_pages = 0;
        if (t == 2 || npl_topo_max_node_id(npl_topo_self()) >= BENCH_MAX_NODES)
            return 0;
        const void *c0 = npl_replica_on(x->replicas, npl_replica_node(x->replicas, 0));
        if (npl_histogram_huge(c0, bytes, hp, base, NULL) == 0)
            for (int n = 0; n <= npl_topo_max_node_id(npl_topo_self()); n++)
                *huge_pages += hp[n];
        if (*huge_pages > 0)
            return 0;
        npl_replica_free(x->replicas);
        x->replicas = NULL;
    }
    return 0;
}

static void *alloc_cyclic(size_t bytes)
{
    npl_policy *pol;
    if (npl_policy_parse(&pol, "cyclic") < 0)
        return NULL;
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    void *p = npl_alloc_array(&shape, pol, 0);
    npl_policy_free(pol);
    return p;
}
#endif

static int build(struct xs *x, const struct opts *o, const char **huge_kind, size_t *huge_pages)
{
    int numag = !strncmp(o->mode, "numag", 5);
    x->niso = o->large ? 355 : 68, x->gp = o->gp, x->method = o->method;
    x->union_n = (long)x->niso * x->gp, x->lookups = o->lookups, x->seed = o->seed;
    *huge_kind = "none", *huge_pages = 0;
#ifdef BENCH_NPL
    if (!strcmp(o->mode, "interleave")) { /* process-wide, as numactl --interleave=all */
        npl_policy *pol;
        if (npl_policy_parse(&pol, "cyclic") < 0 || npl_set_thread_policy(NULL, pol) < 0)
            return -1;
        npl_policy_free(pol);
    }
#endif
    size_t ub = (size_t)x->union_n * sizeof(double), ib = (size_t)x->union_n * x->niso * sizeof(int);
    x->grid = bench_alloc((size_t)x->union_n * sizeof(struct point));
#ifdef BENCH_NPL
    x->union_e = numag ? alloc_cyclic(ub) : bench_alloc(ub);
    x->index = numag ? alloc_cyclic(ib) : bench_alloc(ib);
#else
    (void)numag;
    x->union_e = bench_alloc(ub), x->index = bench_alloc(ib);
#endif
    x->mats = calloc(NMAT * (size_t)x->niso, sizeof(int));
    x->conc = calloc(NMAT * (size_t)x->niso, sizeof(double));
    if (!x->grid || !x->union_e || !x->index || !x->mats || !x->conc)
        return -1;
    make_grids(x);
    make_union(x);
    make_materials(x, o->large);
#ifdef BENCH_NPL
    if (!strcmp(o->mode, "nexttouch")) { /* pages follow the first lookup that touches them */
        size_t gb = (size_t)x->union_n * sizeof(struct point);
        if (npl_next_touch_arm(x->grid, bench_round(gb), NT_CHUNK) < 0 ||
            npl_next_touch_arm(x->union_e, bench_round(ub), NT_CHUNK) < 0 ||
            npl_next_touch_arm(x->index, bench_round(ib), NT_CHUNK) < 0)
            return -1;
    }
    if (numag && replicate_grids(x, !strcmp(o->mode, "numag+huge"), huge_kind, huge_pages) < 0)
        return -1;
#endif
    return 0;
}

static void teardown(struct xs *x, const struct opts *o)
{
    size_t ub = (size_t)x->union_n * sizeof(double), ib = (size_t)x->union_n * x->niso * sizeof(int);
#ifdef BENCH_NPL
    if (!strcmp(o->mode, "nexttouch")) {
        npl_next_touch_disarm(x->grid);
        npl_next_touch_disarm(x->union_e);
        npl_next_touch_disarm(x->index);
    }
    npl_replica_free(x->replicas);
    if (!strncmp(o->mode, "numag", 5)) { /* library arrays (alloc_cyclic) */
        npl_free(x->union_e), npl_free(x->index);
        x->union_e = NULL, x->index = NULL;
    }
#else
    (void)o;
#endif
    bench_free(x->grid, (size_t)x->union_n * sizeof(struct point));
    bench_free(x->union_e, ub);
    bench_free(x->index, ib);
    free(x->mats);
    free(x->conc);
}

static const struct point *my_grid(const struct xs *x)
{
#ifdef BENCH_NPL
    if (x->replicas)
        return npl_replica_local(x->replicas);
#endif
    return x->grid;
}

/* the timed part: all lookups, history- or event-based; returns the seconds */
static double run(const struct xs *x, uint64_t *sum, long *vsum)
{
    long L = x->lookups, particles = (L + HISTORY_LOOKUPS - 1) / HISTORY_LOOKUPS;
    double *es = x->method ? bench_alloc((size_t)L * sizeof(double)) : NULL;
    int *ms = x->method ? bench_alloc((size_t)L * sizeof(int)) : NULL;
    uint64_t s = 0;
    long v = 0;
    if (x->method) { /* event-based: sample every lookup first, then one flat loop */
#pragma omp parallel for schedule(static)
        for (long i = 0; i < L; i++)
            sample(x->seed, i, &es[i], &ms[i]);
    }
    double t0 = bench_now();
#pragma omp parallel reduction(+ : s, v)
    {
        const struct point *g = my_grid(x);
        if (omp_get_thread_num() < MAX_THREADS) {
            thread_node[omp_get_thread_num()] = bench_my_node();
            thread_grid[omp_get_thread_num()] = g;
        }
        int vmax;
        if (x->method) {
#pragma omp for schedule(static)
            for (long i = 0; i < L; i++)
                s += lookup(x, g, es[i], ms[i], &vmax), v += vmax + 1;
        } else {
#pragma omp for schedule(dynamic, 100) /* as the reference XSBench */
            for (long p = 0; p < particles; p++)
                for (long i = p * HISTORY_LOOKUPS; i < (p + 1) * HISTORY_LOOKUPS && i < L; i++) {
                    double e;
                    int m;
                    sample(x->seed, i, &e, &m);
                    s += lookup(x, g, e, m, &vmax), v += vmax + 1;
                }
        }
    }
    double t = bench_now() - t0;
    bench_free(es, (size_t)L * sizeof(double));
    bench_free(ms, (size_t)L * sizeof(int));
    *sum = s, *vsum = v;
    return t;
}

/* mean over threads of the fraction of the nuclide grid pages it read that are on its node */
static double nuclide_local(const struct xs *x)
{
    size_t bytes = (size_t)x->union_n * sizeof(struct point);
    long n = (long)bench_pages(x->grid, bytes), local = 0, total = 0;
    int *nodes = malloc((size_t)n * sizeof(int));
    for (int t = 0; nodes && t < omp_get_max_threads() && t < MAX_THREADS; t++) {
        if (bench_page_nodes(thread_grid[t], bytes, nodes) != n)
            break;
        for (long i = 0; i < n; i++)
            local += nodes[i] == thread_node[t];
        total += n;
    }
    free(nodes);
    return total ? (double)local / (double)total : -1.0;
}

static void print_nodes(const char *name, const void *addr, size_t len)
{
    long by[BENCH_MAX_NODES] = {0}, absent = 0, n = (long)bench_pages(addr, len);
    int *nodes = malloc((size_t)n * sizeof(int)), last = 0;
    if (nodes && bench_page_nodes(addr, len, nodes) == n)
        for (long i = 0; i < n; i++) {
            if (nodes[i] >= 0 && nodes[i] < BENCH_MAX_NODES)
                by[nodes[i]]++, last = nodes[i] > last ? nodes[i] : last;
            else
                absent++;
        }
    free(nodes);
    printf(", \"%s_pages_by_node\": [", name);
    for (int i = 0; i <= last; i++)
        printf("%s%ld", i ? ", " : "", by[i]);
    printf("], \"%s_pages_absent\": %ld", name, absent);
}

int main(int argc, char **argv)
{
    struct opts o;
    static struct xs x;
    if (parse(argc, argv, &o) < 0) {
        fprintf(stderr, "usage: xs_bench [--size small|large] [--gridpoints G] [--lookups L] "
                        "[--method history|event] [--mode default|interleave|numag|numag+huge|"
                        "nexttouch] "
                        "[--pin compact|scatter|none]\n");
        return 2;
    }
#ifdef BENCH_NPL
    if (!o.pin_given && (!strncmp(o.mode, "numag", 5) || !strcmp(o.mode, "nexttouch")))
        o.pin = "scatter"; /* numag pins its threads */
    if (strcmp(o.pin, "none") != 0 && npl_omp_pin_team(o.pin) < 0) {
        fprintf(stderr, "xs_bench: pin %s: %s\n", o.pin, strerror(errno));
        return 1;
    }
#else
    o.pin = getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "none";
    o.pin = getenv("NUMAPLACE_PIN") ? getenv("NUMAPLACE_PIN") : o.pin; /* numaplace run --pin */
#endif
    const char *huge_kind;
    size_t huge_pages;
    double t0 = bench_now();
    if (build(&x, &o, &huge_kind, &huge_pages) < 0) {
        fprintf(stderr, "xs_bench: set-up (%s): %s\n", o.mode, strerror(errno));
        return 1;
    }
    double init_s = bench_now() - t0;
    uint64_t sum;
    long vsum;
    double t = run(&x, &sum, &vsum);
    printf("{\"program\": \"xs\", \"variant\": \"%s\", \"mode\": \"%s\", \"method\": \"%s\", "
           "\"size\": \"%s\", \"isotopes\": %d, \"gridpoints\": %d, \"union_points\": %ld, "
           "\"lookups\": %ld, \"threads\": %d, \"pin\": \"%s\", \"init_seconds\": %.4f, "
           "\"lookup_seconds\": %.6f, \"lookups_per_s\": %.1f, \"checksum\": \"%016llx\", "
           "\"verification\": %ld, \"huge_kind\": \"%s\", \"huge_pages\": %zu",
#ifdef BENCH_NPL
           "api",
#else
           "plain",
#endif
           o.mode, o.method ? "event" : "history", o.large ? "large" : "small", x.niso, x.gp,
           x.union_n, x.lookups, omp_get_max_threads(), o.pin, init_s, t, (double)x.lookups / t,
           (unsigned long long)sum, vsum, huge_kind, huge_pages);
    print_nodes("nuclide", x.grid, (size_t)x.union_n * sizeof(struct point));
    print_nodes("index", x.index, (size_t)x.union_n * x.niso * sizeof(int));
    printf(", \"nuclide_local_frac\": %.6f", nuclide_local(&x));
    printf("}\n");
    teardown(&x, &o);
    return 0;
}
