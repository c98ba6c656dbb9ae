/* SPDX-License-Identifier: BSD-3-Clause */
/* policy_test.c - MAi-style policy test: applies MAi's policies to a 3D array one after the
 * other (pages already written move, the data stays) and checks each page's node against the
 * policy's definition (move_pages); prints a page map with mai_print_pagenodes on request.
 * Uses only the MAi API and libc. Usage: policy_test [--nodes N] [--show] */
#include "mai_check.h"

#define X 8
#define Y 4
#define Z 1024 /* a row of Z doubles is 2 pages; a plane (Y rows) 8 pages; 64 pages in all */

static int nn, P;
static int rows2(long p) { return (int)(p / 2); }  /* the row (i, j) of page p */
static int plane(long p) { return (int)(p / 8); }

static int r_cyclic(long p, void *c) { (void)c; return (int)(p % nn); }
static int r_skew(long p, void *c) { (void)c; return (int)((p + p / nn + 1) % nn); }
static int r_prime(long p, void *c)
{
    (void)c;
    long v = p % P;
    return (int)(v < nn ? v : ((p / P) * (P - nn) + (v - nn)) % nn);
}
static int r_rows3(long p, void *c) { (void)c; return (rows2(p) / 3) % nn; }
static int r_bind3d(long p, void *c) { (void)c; return plane(p) / ((X + nn - 1) / nn); }
static int r_skew3d(long p, void *c) { (void)c; return (plane(p) + plane(p) / nn + 1) % nn; }
static int r_last(long p, void *c) { (void)c; (void)p; return nn - 1; }

static int sum_ok(double ***t)
{
    for (int i = 0; i < X; i++)
        for (int j = 0; j < Y; j++)
            for (int k = 0; k < Z; k += 31)
                if (t[i][j][k] != i * 1e6 + j * 1e3 + k)
                    return 0;
    return 1;
}

int main(int argc, char **argv)
{
    int show = argc > 1 && !strcmp(argv[argc - 1], "--show");
    nn = ex_init(argc, argv);
    if (nn < 1)
        return 1;
    for (P = nn < 2 ? 2 : nn;; P++) { /* the smallest prime >= nn */
        int d = 2;
        while (d * d <= P && P % d)
            d++;
        if (d * d > P)
            break;
    }
    double ***t = mai_alloc_3D(X, Y, Z, sizeof(double), DOUBLE);
    if (!t)
        return 1;
    for (int i = 0; i < X; i++)
        for (int j = 0; j < Y; j++)
            for (int k = 0; k < Z; k++)
                t[i][j][k] = i * 1e6 + j * 1e3 + k;
    size_t bytes = mai_getsize(t);
    void *data = mai_get_realpointer(t);
    struct { const char *name; ex_rule rule; } steps[] = {
        {"cyclic", r_cyclic}, {"skew_mapp", r_skew}, {"prime_mapp", r_prime},
        {"cyclic_rows(3)", r_rows3}, {"bind_3D", r_bind3d}, {"skew_mapp_3D(1)", r_skew3d},
        {"migrate_gather", r_last}};
    for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
        switch (s) {
        case 0: mai_cyclic(t); break;
        case 1: mai_skew_mapp(t); break;
        case 2: mai_prime_mapp(t, P); break;
        case 3: mai_cyclic_rows(t, 3); break;
        case 4: mai_bind_3D(t); break;
        case 5: mai_skew_mapp_3D(t, 1); break;
        default: mai_migrate_gather(t, (unsigned long)(nn - 1)); break;
        }
        ex_expect(mai_last_errno() == 0, steps[s].name);
        ex_check_pages(steps[s].name, data, bytes, steps[s].rule, NULL);
        ex_expect(sum_ok(t), "data intact");
    }
    if (show) {
        unsigned long pages[64];
        for (int i = 0; i < 64; i++)
            pages[i] = (unsigned long)data + (unsigned long)i * 4096;
        mai_print_pagenodes(pages, 64);
    }
    mai_mempol(t);
    mai_final();
    return ex_summary("mai_policy_test");
}
