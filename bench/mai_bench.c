/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_bench.c - the MAi column/row policies: one npl_place_range() per run of pages (how
 * libnumaplace_mai placed them before npl_place_pages) against one npl_place_pages() call, side
 * by side on the same array and the same runs, then the MAi calls themselves.
 *
 *   mai_bench [rows [cols [virtual_nodes [reps]]]]   (default 4096 4096 4 3: 128 MiB of doubles;
 *                                                     virtual_nodes 0: the MAi calls only)
 *
 * The runs are those of a machine with `virtual_nodes` nodes (node v of the layout is the real
 * allowed node v mod N), so a one-node host pays the per-run cost a multi-node machine pays.
 * /proc/self/maps reads are counted by interposing fopen(). Prints seconds, maps reads, ratios. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <numaplace.h>
#include <numaplace/mai.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long maps_reads;

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    size_t n = path ? strlen(path) : 0;
    if (n >= 5 && strcmp(path + n - 5, "/maps") == 0)
        maps_reads++;
    return real(path, mode);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the old way: one npl_place_range_planned() per run of equal virtual nodes */
static int per_run(char *data, size_t npages, size_t psz, const int *virt, const int *real,
                   npl_plan **plans)
{
    size_t start = 0;
    for (size_t pg = 1; pg <= npages; pg++) {
        if (pg < npages && virt[pg] == virt[start])
            continue;
        if (npl_place_range_planned(data + start * psz, (pg - start) * psz, plans[virt[start]],
                                    NULL, 0) < 0)
            return -1;
        (void)real;
        start = pg;
    }
    return 0;
}

struct layout {
    const char *name;
    size_t (*virt_of)(size_t pg, size_t rows, size_t row_pages, size_t v);
};

/* column blocks of one page each, cyclic (mai_cyclic_columns(p, page/item)) */
static size_t cyclic_cols(size_t pg, size_t rows, size_t rp, size_t v)
{
    (void)rows;
    return (pg % rp) % v;
}
/* v contiguous column blocks in every row (mai_bind_columns) */
static size_t bind_cols(size_t pg, size_t rows, size_t rp, size_t v)
{
    (void)rows;
    return (pg % rp) * v / rp;
}
/* rows, cyclic (mai_cyclic_rows(p, 1)) */
static size_t cyclic_rows(size_t pg, size_t rows, size_t rp, size_t v)
{
    (void)rows;
    return (pg / rp) % v;
}

static int compare(char *data, size_t npages, size_t psz, size_t rows, size_t rp, size_t v,
                   const int *allowed, int nallowed, int reps)
{
    static const struct layout layouts[] = {
        {"cyclic_columns(page)", cyclic_cols}, {"bind_columns", bind_cols},
        {"cyclic_rows(1)", cyclic_rows}};
    int *virt = malloc(npages * sizeof *virt), *real = malloc(npages * sizeof *real);
    npl_plan **plans = calloc(v, sizeof *plans);
    if (!virt || !real || !plans)
        return -1;
    for (size_t k = 0; k < v; k++) {
        npl_policy *pol;
        int node = allowed[k % (size_t)nallowed];
        if (npl_policy_create(&pol, NPL_BIND_ALL, &node, 1) < 0 ||
            npl_plan_create(&plans[k], pol, npl_topo_self(), 0) < 0)
            return -1;
        npl_policy_free(pol);
    }
    printf("%-22s %6s %10s %8s %10s %8s %8s\n", "layout", "runs", "per-run s", "maps", "batch s",
           "maps", "ratio");
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        size_t runs = 0;
        for (size_t pg = 0; pg < npages; pg++) {
            virt[pg] = (int)layouts[l].virt_of(pg, rows, rp, v);
            real[pg] = allowed[virt[pg] % nallowed];
            runs += pg == 0 || virt[pg] != virt[pg - 1];
        }
        double told = 1e30, tnew = 1e30;
        long mold = 0, mnew = 0;
        for (int r = 0; r < reps; r++) {
            long m0 = maps_reads;
            double t0 = now();
            if (per_run(data, npages, psz, virt, real, plans) < 0)
                return -1;
            double t1 = now();
            long m1 = maps_reads;
            if (npl_place_pages(data, npages * psz, real, 0) < 0)
                return -1;
            double t2 = now();
            told = t1 - t0 < told ? t1 - t0 : told;
            tnew = t2 - t1 < tnew ? t2 - t1 : tnew;
            mold = m1 - m0;
            mnew = maps_reads - m1;
        }
        printf("%-22s %6zu %10.4f %8ld %10.4f %8ld %7.1fx\n", layouts[l].name, runs, told, mold,
               tnew, mnew, told / tnew);
    }
    for (size_t k = 0; k < v; k++)
        npl_plan_free(plans[k]);
    free(plans);
    free(virt);
    free(real);
    return 0;
}

/* the MAi calls themselves (on this machine's nodes) */
static void mai_calls(double **a, size_t cols, int reps)
{
    int nc = (int)(sysconf(_SC_PAGESIZE) / sizeof(double));
    const char *names[] = {"mai_cyclic_columns", "mai_bind_columns", "mai_cyclic_rows",
                           "mai_bind_rows", "mai_migrate_columns"};
    for (int c = 0; c < 5; c++) {
        double best = 1e30;
        long m0 = maps_reads;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            switch (c) {
            case 0: mai_cyclic_columns(a, nc); break;
            case 1: mai_bind_columns(a); break;
            case 2: mai_cyclic_rows(a, 1); break;
            case 3: mai_bind_rows(a); break;
            default: mai_migrate_columns(a, 0, (int)cols / 2, 0); break;
            }
            double t = now() - t0;
            best = t < best ? t : best;
            if (mai_last_errno())
                printf("%s failed: %s\n", names[c], strerror(mai_last_errno()));
        }
        printf("%-22s %10.4f s  %ld maps reads per call\n", names[c], best,
               (maps_reads - m0) / reps);
    }
}

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
    size_t cols = argc > 2 ? strtoul(argv[2], NULL, 10) : 4096;
    size_t v = argc > 3 ? strtoul(argv[3], NULL, 10) : 4;
    int reps = argc > 4 ? atoi(argv[4]) : 3;
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!rows || !cols || v > 256 || reps < 1 || (cols * sizeof(double)) % psz) {
        fprintf(stderr, "usage: mai_bench [rows [cols (rows of whole pages) [nodes [reps]]]]\n");
        return 2;
    }
    mai_init(NULL);
    double **a = mai_alloc_2D((int)rows, (int)cols, sizeof(double), DOUBLE);
    if (!a) {
        perror("mai_alloc_2D");
        return 1;
    }
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            a[i][j] = (double)(i * cols + j);
    int allowed[256];
    int nallowed = npl_topo_node_count(npl_topo_self(), 0);
    for (int i = 0; i < nallowed && i < 256; i++)
        allowed[i] = npl_topo_node_id(npl_topo_self(), i);
    size_t rp = cols * sizeof(double) / psz, npages = rows * rp;
    printf("%zu x %zu doubles (%zu MiB), %zu pages; runs of a %zu-node layout on %d real node(s)\n",
           rows, cols, npages * psz >> 20, npages, v, nallowed);
    if (v && compare(mai_get_realpointer(a), npages, psz, rows, rp, v, allowed, nallowed, reps) < 0) {
        perror("placement");
        return 1;
    }
    mai_calls(a, cols, reps);
    double sum = 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            sum += a[i][j] - (double)(i * cols + j);
    printf("data kept: %s\n", sum == 0 ? "yes" : "NO");
    mai_free_array(a);
    mai_final();
    return sum == 0 ? 0 : 1;
}
