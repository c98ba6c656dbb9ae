/* SPDX-License-Identifier: BSD-3-Clause */
/* migrate_bench - migration throughput, side by side in one run: numaplace's threaded
 * npl_migrate_range vs one libnuma numa_move_pages call over the same pages vs memcpy of the
 * same bytes. Pages go back and forth between the first and the last usable node.
 *   migrate_bench [MiB] [repetitions]    (default 256 MiB, 3; medians). Needs >= 2 nodes
 *   (e.g. tools/numavm --nodes 4 --add build/bench/migrate_bench -- migrate_bench 128). */
#define _GNU_SOURCE
#include <numa.h>
#include <numaif.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const npl_topo *t = npl_topo_self();
    int nodes[64], m = npl_topo_node_count(t, 0);
    if (m < 2 || reps < 1 || reps > 20 || mib == 0) {
        printf("migrate_bench: needs >= 2 usable nodes (this machine has %d); run it in "
               "tools/numavm\n", m);
        return m < 2 ? 0 : 2;
    }
    for (int i = 0, k = 0; i < npl_topo_node_count(t, 1) && k < 64; i++) {
        struct npl_node_info ni;
        npl_topo_node_info(t, i, &ni);
        if (ni.allowed && ni.memory_bytes)
            nodes[k++] = ni.os_id;
    }
    int a_node = nodes[0], b_node = nodes[m - 1];
    size_t bytes = mib << 20, psz = (size_t)sysconf(_SC_PAGESIZE), n = bytes / psz;
    char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(a, bytes, MADV_NOHUGEPAGE);
    memset(a, 1, bytes);
    memset(c, 2, bytes);
    void **pages = malloc(n * sizeof *pages);
    int *to = malloc(n * sizeof *to), *st = malloc(n * sizeof *st);
    for (size_t i = 0; i < n; i++)
        pages[i] = a + i * psz;
    double tn[20], tl[20], tc[20], tt[20];
    int cpu_b = -1, cpu_a = -1;
    { /* a CPU of each node, to run the next-touch toucher there */
        int cpus[256];
        if (npl_topo_node_cpus(t, npl_topo_node_index(t, b_node), cpus, 256) > 0)
            cpu_b = cpus[0];
        if (npl_topo_node_cpus(t, npl_topo_node_index(t, a_node), cpus, 256) > 0)
            cpu_a = cpus[0];
    }
    npl_migrate_range(a, bytes, a_node, NULL);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        npl_migrate_range(a, bytes, b_node, NULL);
        tn[r] = now() - t0;
        for (size_t i = 0; i < n; i++)
            to[i] = a_node;
        t0 = now();
        numa_move_pages(0, n, pages, to, st, MPOL_MF_MOVE);
        tl[r] = now() - t0;
        t0 = now();
        memcpy(c, a, bytes);
        tc[r] = now() - t0;
        /* next-touch: a thread on node b touches one byte per chunk; pages follow it */
        char list[32];
        snprintf(list, sizeof list, "%d", cpu_b >= 0 ? cpu_b : 0);
        npl_pin_self(list, 0);
        t0 = now();
        npl_next_touch_arm(a, bytes, 0);
        for (size_t i = 0; i < bytes; i += NPL_NEXT_TOUCH_DEFAULT_CHUNK)
            ((volatile char *)a)[i]++;
        tt[r] = now() - t0;
        npl_next_touch_disarm(a);
        snprintf(list, sizeof list, "%d", cpu_a >= 0 ? cpu_a : 0);
        npl_pin_self(list, 0);
        npl_migrate_range(a, bytes, a_node, NULL); /* back for the next repetition */
    }
    qsort(tn, (size_t)reps, sizeof *tn, cmp);
    qsort(tl, (size_t)reps, sizeof *tl, cmp);
    qsort(tc, (size_t)reps, sizeof *tc, cmp);
    qsort(tt, (size_t)reps, sizeof *tt, cmp);
    double mn = tn[reps / 2], ml = tl[reps / 2], mc = tc[reps / 2], mt = tt[reps / 2];
    printf("migrate_bench: %zu MiB, node %d <-> %d, %d threads max, median of %d\n", mib, a_node,
           b_node, npl_topo_cpu_count(t), reps);
    printf("%-28s %9s %10s %12s\n", "method", "seconds", "GiB/s", "vs_numaplace");
    printf("%-28s %9.4f %10.2f %12.2f\n", "npl_migrate_range", mn, mib / 1024.0 / mn, 1.0);
    printf("%-28s %9.4f %10.2f %12.2f\n", "numa_move_pages (1 call)", ml, mib / 1024.0 / ml, ml / mn);
    printf("%-28s %9.4f %10.2f %12.2f\n", "memcpy same bytes", mc, mib / 1024.0 / mc, mc / mn);
    printf("%-28s %9.4f %10.2f %12.2f\n", "next-touch (1 toucher)", mt, mib / 1024.0 / mt, mt / mn);
    printf("next-touch cost per MiB: %.3f ms; explicit migration: %.3f ms\n", mt * 1e3 / mib,
           mn * 1e3 / mib);
    /* the same with 2 MiB hugetlb pages, when the pools allow (tools/numavm --hugepages) */
    npl_policy *p0;
    char s0[32];
    snprintf(s0, sizeof s0, "bind_all:%d", a_node);
    npl_policy_parse(&p0, s0);
    npl_shape sh = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    char *h = npl_alloc_array(&sh, p0, NPL_F_HUGETLB | NPL_F_STRICT);
    if (!h) {
        printf("hugetlb: no 2 MiB pool large enough (%s): skipped\n", npl_last_error());
        return 0;
    }
    double hm[20], ht[20];
    char list[32];
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        npl_migrate_range(h, bytes, b_node, NULL);
        hm[r] = now() - t0;
        npl_migrate_range(h, bytes, a_node, NULL);
        snprintf(list, sizeof list, "%d", cpu_b >= 0 ? cpu_b : 0);
        npl_pin_self(list, 0);
        t0 = now();
        npl_next_touch_arm(h, bytes, 0); /* the chunk becomes the 2 MiB page */
        for (size_t i = 0; i < bytes; i += 2 << 20)
            ((volatile char *)h)[i]++;
        ht[r] = now() - t0;
        npl_next_touch_disarm(h);
        snprintf(list, sizeof list, "%d", cpu_a >= 0 ? cpu_a : 0);
        npl_pin_self(list, 0);
        npl_migrate_range(h, bytes, a_node, NULL);
    }
    qsort(hm, (size_t)reps, sizeof *hm, cmp);
    qsort(ht, (size_t)reps, sizeof *ht, cmp);
    printf("%-28s %9.4f %10.2f %12.2f\n", "npl_migrate_range, hugetlb", hm[reps / 2],
           mib / 1024.0 / hm[reps / 2], hm[reps / 2] / mn);
    printf("%-28s %9.4f %10.2f %12.2f\n", "next-touch, hugetlb 2 MiB", ht[reps / 2],
           mib / 1024.0 / ht[reps / 2], ht[reps / 2] / mn);
    printf("next-touch with 2 MiB pages is %.2fx cheaper than with 4 KiB pages (64 KiB chunks)\n",
           mt / ht[reps / 2]);
    npl_free(h);
    npl_policy_free(p0);
    return 0;
}
