/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_migrate.c - libnumaplace_mai: MAi's migrations, next-touch, node sets and raw placement
 * (mai_nodes/mai_bytes/mai_regularbind/mai_irregularbind) and per-array bookkeeping. */
#define _GNU_SOURCE
#include "mai_internal.h"

#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int valid_node(unsigned long node)
{
    return node < MAXNODES;
}

/* move the selected units (and columns) of p to node, timing it for mai_get_time_pmigration() */
static void migrate_units(void *p, unsigned long node, enum mai_unit unit, long lo, long n,
                          long clo, long cn)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__target(p);
    int rc = -1;
    if (a) {
        size_t units = mai__unit_count(a, unit), cols = mai__unit_count(a, MAI_COLUMNS);
        int node_i = (int)node;
        struct mai_page_rule r = {unit, 1, MAI_RULE_CYCLIC, 0, &node_i, 1, node_i,
                                  (size_t)lo, (size_t)(lo + n), (size_t)clo, (size_t)(clo + cn)};
        if (!valid_node(node) || lo < 0 || n <= 0 || (size_t)lo + (size_t)n > units || clo < 0 ||
            cn < 0 || (size_t)clo + (size_t)cn > cols) {
            errno = EINVAL;
        } else {
            double t0 = now_s();
            rc = mai__place_pages(a, &r);
            mai__st.time_pmig = now_s() - t0;
        }
    }
    mai__finish(rc);
}

void mai_migrate(void *p, unsigned long node, int nr, int startr, int nc, int startc)
{
    if (nc <= 0) {
        mai__fail(EINVAL);
        return;
    }
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(p);
    int nd = a ? a->ndim : 0;
    pthread_mutex_unlock(&mai__lock);
    /* rows of a 2D array, planes of a 3D one; columns: the second index */
    migrate_units(p, node, nd == 3 ? MAI_PLANES : MAI_ROWS, startr, nr, startc, nc);
}

void mai_migrate_rows(void *p, unsigned long node, int nr, int start)
{
    migrate_units(p, node, MAI_ROWS, start, nr, 0, 0);
}

void mai_migrate_columns(void *p, unsigned long node, int nc, int start)
{
    migrate_units(p, node, MAI_COLUMNS, start, nc, 0, 0);
}

void mai_migrate_gather(void *p, unsigned long node)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__target(p);
    int rc = -1;
    if (a && !valid_node(node)) {
        errno = EINVAL;
    } else if (a) {
        double t0 = now_s();
        size_t page = mai__page_size();
        rc = mai__place_run(a, a->data, (a->data_bytes + page - 1) / page * page, (int)node);
        mai__st.time_pmig = now_s() - t0;
        int n = (int)node;
        if (rc == 0)
            mai__record(a, BIND, &n, 1);
    }
    mai__finish(rc);
}

void mai_migrate_scatter(void *p, unsigned long nodes)
{
    int list[64], m = 0;
    for (int i = 0; i < 64; i++)
        if (nodes >> i & 1UL)
            list[m++] = i;
    if (!m) {
        mai__fail(EINVAL);
        return;
    }
    double t0 = now_s();
    mai_cyclic_sn(p, m, list);
    mai__st.time_pmig = now_s() - t0;
}

/* next-touch over the data with chunks of chunk bytes (0: the default) */
static void arm(void *p, size_t chunk, int code)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__target(p);
    int rc = -1;
    if (a) {
        size_t page = mai__page_size(), len = (a->data_bytes + page - 1) / page * page;
        if (chunk) {
            int m = mai__st.cfg.nnodes > 0 ? mai__st.cfg.nnodes : 1;
            chunk = (len / page + (size_t)m - 1) / (size_t)m * page;
        }
        mai__disarm(a); /* re-armed below, maybe with another chunk */
        rc = npl_next_touch_arm(a->data, len, chunk);
        if (rc == 0) {
            a->armed = 1;
            a->policy = code;
        }
    }
    mai__finish(rc);
}

void mai_next_touch(void *p)
{
    arm(p, 0, NEXTOUCH);
}

void mai_bind_rows_mynode(void *p)
{
    arm(p, 1, BIND_B);
}

void mai_bind_columns_mynode(void *p)
{
    arm(p, 1, BIND_B);
}

void mai_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    mai__fail(ENOSYS);
}

void mai_nodes(unsigned long nnodes, int *nodes)
{
    if (!nodes || nnodes == 0 || nnodes > MAXNODES) {
        mai__fail(EINVAL);
        return;
    }
    for (unsigned long i = 0; i < nnodes; i++)
        if (nodes[i] < 1 || nodes[i] > MAXNODES) {
            mai__fail(EINVAL);
            return;
        }
    pthread_mutex_lock(&mai__lock);
    for (unsigned long i = 0; i < nnodes; i++)
        mai__st.own_nodes[i] = nodes[i] - 1; /* MAi: 1-based */
    mai__st.nown = (int)nnodes;
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

void mai_bytes(void *p, size_t bytes)
{
    size_t page = mai__page_size();
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(p);
    int rc = -1;
    if (!a)
        errno = ENOENT;
    else if (!bytes || bytes > SIZE_MAX - page)
        errno = EINVAL;
    else {
        a->block_pages = (bytes + page - 1) / page;
        rc = 0;
    }
    mai__finish(rc);
}

void mai_subarray(void *p, int dim[])
{
    (void)p;
    (void)dim;
    mai__fail(ENOSYS);
}

int mai_regularbind(void *p)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__target(p);
    int rc = -1;
    if (a && (!a->block_pages || !mai__st.nown)) {
        errno = EINVAL;
    } else if (a) {
        size_t page = mai__page_size();
        /* blocks of block_pages pages: the byte unit makes the page rule "page / k" */
        struct mai_array bytes_view = *a;
        bytes_view.ndim = 1;
        bytes_view.item = page;
        bytes_view.dims[0] = (a->data_bytes + page - 1) / page;
        struct mai_page_rule r = {MAI_ROWS, a->block_pages, MAI_RULE_CYCLIC, 0, mai__st.own_nodes,
                                  (size_t)mai__st.nown, -1, 0, 0, 0, 0};
        rc = mai__place_pages(&bytes_view, &r);
        a->armed = bytes_view.armed; /* disarmed there once the nodes were checked */
        if (rc == 0)
            mai__record(a, OWN, mai__st.own_nodes, mai__st.nown);
    }
    mai__finish(rc);
    return rc;
}

int mai_irregularbind(void *p, size_t bytes, int node)
{
    size_t page = mai__page_size();
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__st.inited ? mai__find_inside(p) : NULL;
    int rc = -1;
    if (!a) {
        errno = mai__st.inited ? ENOENT : EPERM;
    } else if ((uintptr_t)p % page || node < 1 || node > MAXNODES || !bytes ||
               bytes > (size_t)(a->base + a->map_bytes - (char *)p)) {
        errno = EINVAL;
    } else {
        size_t len = (bytes + page - 1) / page * page;
        rc = mai__place_run(a, p, len, node - 1);
        if (rc == 0)
            a->policy = OWN;
    }
    mai__finish(rc);
    return rc;
}

int mai_get_mempol(void *ph)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(ph);
    int code = a ? a->policy : -1;
    pthread_mutex_unlock(&mai__lock);
    if (!a)
        mai__fail(ENOENT);
    return code;
}

int *mai_get_arraynodes(void *ph)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(ph);
    pthread_mutex_unlock(&mai__lock);
    if (!a)
        mai__fail(ENOENT);
    return a ? a->nodes1 : NULL;
}

void mai_set_arraynodes(void *ph, int nnodes, int nodes[])
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__find(ph);
    int rc = -1;
    if (!a)
        errno = ENOENT;
    else if (nnodes < 0 || nnodes > MAXNODES || (nnodes && !nodes))
        errno = EINVAL;
    else { /* 1-based as mai_get_arraynodes gives them back (MAi stores and returns them as is) */
        int os[MAXNODES];
        rc = 0;
        for (int i = 0; i < nnodes && rc == 0; i++) {
            os[i] = nodes[i] - 1;
            if (nodes[i] < 1 || nodes[i] > MAXNODES)
                rc = -1, errno = EINVAL;
        }
        if (rc == 0)
            mai__record(a, a->policy, os, nnodes);
    }
    mai__finish(rc);
}

void mai_mempol(void *ph)
{
    static const char *names[] = {"CYCLIC", "CYCLIC_BLOCK", "SKEW_MAPP", "SKEW_MAPP_BLOCK",
                                  "PRIME_MAPP", "PRIME_MAPP_BLOCK", "BIND", "BIND_BLOCK",
                                  "RANDOM", "RANDOM_BLOCK", "OWN", "NEXT_TOUCH", "NEXT_TOUCH_N"};
    int code = mai_get_mempol(ph);
    printf("%s\n", code >= 0 && code <= NEXTOUCHN ? names[code] : "NO MEM POLICY");
}

void mai_arraynodes(void *ph)
{
    int *n = mai_get_arraynodes(ph);
    if (!n)
        return;
    printf("\n");
    for (int i = 0; n[i] >= 0; i++)
        printf("Node #%d ", n[i] - 1);
    printf("\n");
}
