/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_place.c - libnumaplace_mai: MAi's memory policies, migrations and raw placement, over
 * numaplace's npl_place_range() (page policies) and npl_place_pages() (block policies and
 * migrations: a node per page, one call). */
#define _GNU_SOURCE
#include "mai_internal.h"

#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t mai__rule_index(enum mai_rule rule, size_t b, size_t m, size_t prime)
{
    switch (rule) {
    case MAI_RULE_SKEW:
        return (b + b / m + 1) % m;
    case MAI_RULE_PRIME: {
        size_t v = b % prime;
        return v < m ? v : ((b / prime) * (prime - m) + (v - m)) % m;
    }
    default:
        return b % m;
    }
}

size_t mai__unit_count(const struct mai_array *a, enum mai_unit unit)
{
    switch (unit) {
    case MAI_ROWS:
        return a->ndim == 1 ? a->dims[0] : a->data_bytes / (a->dims[a->ndim - 1] * a->item);
    case MAI_COLUMNS:
        return a->ndim == 1 ? a->dims[0] : a->dims[1];
    default:
        return a->ndim == 3 ? a->dims[0] : 0;
    }
}

size_t mai__page_unit(const struct mai_array *a, enum mai_unit unit, size_t pg, size_t page_size)
{
    size_t off = pg * page_size;
    if (unit == MAI_ROWS)
        return off / (a->ndim == 1 ? a->item : a->dims[a->ndim - 1] * a->item);
    if (unit == MAI_PLANES)
        return off / (a->data_bytes / a->dims[0]);
    if (a->ndim == 1)
        return off / a->item;
    size_t slab = a->data_bytes / a->dims[0]; /* a row (2D) or a plane (3D) */
    return (off % slab) / (slab / a->dims[1]);
}


static size_t data_pages(const struct mai_array *a)
{
    size_t page = mai__page_size();
    return (a->data_bytes + page - 1) / page;
}

int mai__node_list(int explicit_n, const int *explicit_nodes, int all, int *out)
{
    const struct mai_config *c = &mai__st.cfg;
    if (explicit_n || explicit_nodes) {
        if (explicit_n <= 0 || explicit_n > MAXNODES || !explicit_nodes)
            return mai__fail(EINVAL);
        for (int i = 0; i < explicit_n; i++) {
            if (explicit_nodes[i] < 0 || explicit_nodes[i] >= MAXNODES)
                return mai__fail(EINVAL);
            out[i] = explicit_nodes[i];
        }
        return explicit_n;
    }
    int m = c->nnodes;
    if (!all && c->nthreads > 0 && c->nthreads < m) /* MAi: as many nodes as threads */
        m = c->nthreads;
    memcpy(out, c->nodes, (size_t)m * sizeof *out);
    return m;
}

/* place [addr, addr+len) on one node: written pages move, the others are faulted in there */
/* a single-node plan (bind_all:node) resolved on this process's topology */
static npl_plan *node_plan(int node)
{
    npl_policy *pol;
    npl_plan *plan = NULL;
    if (npl_policy_create(&pol, NPL_BIND_ALL, &node, 1) < 0)
        return NULL;
    if (npl_plan_create(&plan, pol, npl_topo_self(), 0) < 0)
        plan = NULL;
    npl_policy_free(pol);
    return plan;
}

int mai__place_run(struct mai_array *a, char *addr, size_t len, int node)
{
    npl_plan *plan = node_plan(node);
    if (!plan)
        return -1;
    mai__disarm(a);
    int rc = npl_place_range_planned(addr, len, plan, NULL, 0);
    npl_plan_free(plan);
    return rc;
}

static int rule_node(const struct mai_array *a, const struct mai_page_rule *r, size_t pg, size_t page)
{
    if (r->fixed_node >= 0) {
        size_t u = mai__page_unit(a, r->unit, pg, page);
        if (u < r->lo || u >= r->hi)
            return -1;
        if (r->hi2 > r->lo2) {
            size_t c = mai__page_unit(a, MAI_COLUMNS, pg, page);
            if (c < r->lo2 || c >= r->hi2)
                return -1;
        }
        return r->fixed_node;
    }
    size_t b = mai__page_unit(a, r->unit, pg, page) / r->k;
    return r->nodes[mai__rule_index(r->rule, b, r->m, r->prime)];
}

/* the node of every data page (-1: leave it), placed in one npl_place_pages() pass: one
 * npl_place_range() per run of pages read /proc/self/maps and split the mapping once per run */
int mai__place_pages(struct mai_array *a, const struct mai_page_rule *r)
{
    size_t page = mai__page_size(), n = data_pages(a);
    /* every node of the list is checked before any page moves: a bad one (missing, not allowed)
     * fails the call with the array as it was, also when no page would go there */
    for (size_t i = 0; i < (r->fixed_node >= 0 ? 1 : r->m); i++) {
        int node = r->fixed_node >= 0 ? r->fixed_node : r->nodes[i];
        npl_plan *plan = node < 0 || node >= MAXNODES ? NULL : node_plan(node);
        if (!plan)
            return node < 0 || node >= MAXNODES ? mai__fail(EINVAL) : -1;
        npl_plan_free(plan);
    }
    if (n == 0)
        return 0;
    int *nodes = malloc(n * sizeof *nodes);
    if (!nodes)
        return mai__fail(ENOMEM);
    for (size_t pg = 0; pg < n; pg++)
        nodes[pg] = rule_node(a, r, pg, page);
    mai__disarm(a);
    int rc = npl_place_pages(a->data, n * page, nodes, 0);
    int err = errno;
    free(nodes);
    errno = err;
    return rc;
}

/* one whole-array page policy of numaplace over the data */
static int place_policy(struct mai_array *a, npl_policy_kind kind, const int *nodes, int m,
                        int prime)
{
    npl_policy *pol;
    if (npl_policy_create(&pol, kind, nodes, m) < 0)
        return -1;
    npl_plan *plan = NULL;
    int rc = prime ? npl_policy_set_prime(pol, prime) : 0;
    if (rc == 0)
        rc = npl_plan_create(&plan, pol, npl_topo_self(), 0);
    if (rc == 0) {
        mai__disarm(a);
        rc = npl_place_range_planned(a->data, data_pages(a) * mai__page_size(), plan, NULL, 0);
    }
    int err = errno;
    npl_plan_free(plan);
    npl_policy_free(pol);
    errno = err;
    return rc;
}

void mai__record(struct mai_array *a, int code, const int *nodes, int m)
{
    a->policy = code;
    a->nnodes = m;
    for (int i = 0; i < m; i++) {
        a->nodes[i] = nodes[i];
        a->nodes1[i] = nodes[i] + 1;
    }
    a->nodes1[m] = -1;
}

/* the array of p (next-touch left armed: mai__disarm); caller holds mai__lock */
struct mai_array *mai__target(void *p)
{
    if (!mai__st.inited) {
        mai__fail(EPERM);
        return NULL;
    }
    struct mai_array *a = mai__find(p);
    if (!a) {
        mai__fail(ENOENT);
        return NULL;
    }
    return a; /* still armed: a call that fails must leave next-touch as it was */
}

/* before the first page of a placement moves (its arguments and nodes all checked) */
void mai__disarm(struct mai_array *a)
{
    if (a->armed) {
        npl_next_touch_disarm(a->data);
        a->armed = 0;
    }
}

/* A policy request: kind of placement, rule, unit and block size. */
struct request {
    int code;              /* MAi policy code */
    int page_kind;         /* >= 0: a numaplace page policy (npl_policy_kind) */
    enum mai_unit unit;
    enum mai_rule rule;
    size_t k;              /* units per block; 0: ceil(units / m) (bind blocks) */
    int prime;
    int all;               /* all config nodes (mai_cyclic) */
};

static int is_prime(int n)
{
    if (n < 2)
        return 0;
    for (int d = 2; d <= n / d; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

static void apply(void *p, const struct request *q, int nn, const int *nodes_in)
{
    int nodes[MAXNODES];
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__target(p);
    int m = a ? mai__node_list(nn, nodes_in, q->all, nodes) : -1;
    int rc = -1;
    if (m > 0 && q->page_kind >= 0) {
        rc = place_policy(a, (npl_policy_kind)q->page_kind, nodes, m, q->prime);
    } else if (m > 0) {
        size_t units = mai__unit_count(a, q->unit);
        struct mai_page_rule r = {q->unit, q->k, q->rule, (size_t)q->prime, nodes, (size_t)m, -1,
                              0, 0, 0, 0};
        if (!r.k)
            r.k = (units + (size_t)m - 1) / (size_t)m;
        if (!units || !r.k || (q->rule == MAI_RULE_PRIME && (q->prime < m || !is_prime(q->prime))))
            rc = mai__fail(EINVAL);
        else
            rc = mai__place_pages(a, &r);
    }
    if (rc == 0)
        mai__record(a, q->code, nodes, m);
    mai__finish(rc);
}

static void blocks(void *p, int code, enum mai_unit unit, enum mai_rule rule, int k, int prime,
                   int nn, int *nodes)
{
    if (k <= 0) {
        mai__fail(EINVAL);
        return;
    }
    struct request q = {code, -1, unit, rule, (size_t)k, prime, 0};
    apply(p, &q, nn, nodes);
}

static void page_policy(void *p, int code, npl_policy_kind kind, int prime, int all, int nn,
                        int *nodes)
{
    struct request q = {code, (int)kind, MAI_ROWS, MAI_RULE_CYCLIC, 0, prime, all};
    apply(p, &q, nn, nodes);
}

static void bind_blocks(void *p, enum mai_unit unit, int nn, int *nodes)
{
    struct request q = {BIND_B, -1, unit, MAI_RULE_CYCLIC, 0, 0, 0};
    apply(p, &q, nn, nodes);
}

void mai_cyclic(void *p) { page_policy(p, CYCLIC, NPL_CYCLIC, 0, 1, 0, NULL); }
void mai_skew_mapp(void *p) { page_policy(p, SKEW, NPL_SKEW_MAPP, 0, 0, 0, NULL); }
void mai_bind_all(void *p) { page_policy(p, BIND, NPL_BIND_ALL, 0, 0, 0, NULL); }
void mai_cyclic_sn(void *p, int nn, int *nodes) { page_policy(p, CYCLIC, NPL_CYCLIC, 0, 1, nn, nodes); }
void mai_skew_mapp_sn(void *p, int nn, int *nodes) { page_policy(p, SKEW, NPL_SKEW_MAPP, 0, 0, nn, nodes); }
void mai_bind_all_sn(void *p, int nn, int *nodes) { page_policy(p, BIND, NPL_BIND_ALL, 0, 0, nn, nodes); }

void mai_prime_mapp(void *p, int prime)
{
    page_policy(p, PRIME, NPL_PRIME_MAPP, prime > 0 ? prime : -1, 0, 0, NULL);
}

void mai_prime_mapp_sn(void *p, int prime, int nn, int *nodes)
{
    page_policy(p, PRIME, NPL_PRIME_MAPP, prime > 0 ? prime : -1, 0, nn, nodes);
}

void mai_cyclic_possible(void *p)
{
    int nodes[MAXNODES], m = 0;
    pthread_mutex_lock(&mai__lock);
    const struct mai_config *c = &mai__st.cfg;
    for (int i = 0; i < c->nnodes; i++)
        for (int t = 0; t < c->nthreads; t++)
            if (npl_topo_cpu_node(npl_topo_self(), c->cpus[t]) == c->nodes[i]) {
                nodes[m++] = c->nodes[i];
                break;
            }
    pthread_mutex_unlock(&mai__lock);
    if (!m) /* no CPU in the config: all its nodes */
        page_policy(p, CYCLIC, NPL_CYCLIC, 0, 1, 0, NULL);
    else
        page_policy(p, CYCLIC, NPL_CYCLIC, 0, 1, m, nodes);
}

void mai_bind_all_mynode(void *p)
{
    int node;
    if (npl_where_am_i(NULL, &node) < 0) {
        mai__fail(errno);
        return;
    }
    page_policy(p, BIND, NPL_BIND_ALL, 0, 0, 1, &node);
}

void mai_cyclic_rows(void *p, int nr) { blocks(p, CYCLIC_B, MAI_ROWS, MAI_RULE_CYCLIC, nr, 0, 0, NULL); }
void mai_skew_mapp_rows(void *p, int nr) { blocks(p, SKEW_B, MAI_ROWS, MAI_RULE_SKEW, nr, 0, 0, NULL); }
void mai_prime_mapp_rows(void *p, int prime, int nr) { blocks(p, PRIME_B, MAI_ROWS, MAI_RULE_PRIME, nr, prime, 0, NULL); }
void mai_cyclic_columns(void *p, int nc) { blocks(p, CYCLIC_B, MAI_COLUMNS, MAI_RULE_CYCLIC, nc, 0, 0, NULL); }
void mai_skew_mapp_columns(void *p, int nc) { blocks(p, SKEW_B, MAI_COLUMNS, MAI_RULE_SKEW, nc, 0, 0, NULL); }
void mai_prime_mapp_columns(void *p, int prime, int nc) { blocks(p, PRIME_B, MAI_COLUMNS, MAI_RULE_PRIME, nc, prime, 0, NULL); }
void mai_cyclic_3D(void *p, int n3d) { blocks(p, CYCLIC_B, MAI_PLANES, MAI_RULE_CYCLIC, n3d, 0, 0, NULL); }
void mai_skew_mapp_3D(void *p, int n3d) { blocks(p, SKEW_B, MAI_PLANES, MAI_RULE_SKEW, n3d, 0, 0, NULL); }
void mai_prime_mapp_3D(void *p, int prime, int n3d) { blocks(p, PRIME_B, MAI_PLANES, MAI_RULE_PRIME, n3d, prime, 0, NULL); }
void mai_ibind_rows(void *p, int nr) { blocks(p, BIND_B, MAI_ROWS, MAI_RULE_CYCLIC, nr, 0, 0, NULL); }
void mai_ibind_columns(void *p, int nc) { blocks(p, BIND_B, MAI_COLUMNS, MAI_RULE_CYCLIC, nc, 0, 0, NULL); }
void mai_ibind_3D(void *p, int n3d) { blocks(p, BIND_B, MAI_PLANES, MAI_RULE_CYCLIC, n3d, 0, 0, NULL); }

void mai_cyclic_rows_sn(void *p, int nr, int nn, int *nodes) { blocks(p, CYCLIC_B, MAI_ROWS, MAI_RULE_CYCLIC, nr, 0, nn, nodes); }
void mai_skew_mapp_rows_sn(void *p, int nr, int nn, int *nodes) { blocks(p, SKEW_B, MAI_ROWS, MAI_RULE_SKEW, nr, 0, nn, nodes); }
void mai_prime_mapp_rows_sn(void *p, int prime, int nr, int nn, int *nodes) { blocks(p, PRIME_B, MAI_ROWS, MAI_RULE_PRIME, nr, prime, nn, nodes); }
void mai_cyclic_columns_sn(void *p, int nc, int nn, int *nodes) { blocks(p, CYCLIC_B, MAI_COLUMNS, MAI_RULE_CYCLIC, nc, 0, nn, nodes); }
void mai_skew_mapp_columns_sn(void *p, int nc, int nn, int *nodes) { blocks(p, SKEW_B, MAI_COLUMNS, MAI_RULE_SKEW, nc, 0, nn, nodes); }
void mai_prime_mapp_columns_sn(void *p, int prime, int nc, int nn, int *nodes) { blocks(p, PRIME_B, MAI_COLUMNS, MAI_RULE_PRIME, nc, prime, nn, nodes); }
void mai_cyclic_3D_sn(void *p, int n3d, int nn, int *nodes) { blocks(p, CYCLIC_B, MAI_PLANES, MAI_RULE_CYCLIC, n3d, 0, nn, nodes); }
void mai_skew_mapp_3D_sn(void *p, int n3d, int nn, int *nodes) { blocks(p, SKEW_B, MAI_PLANES, MAI_RULE_SKEW, n3d, 0, nn, nodes); }
void mai_prime_mapp_3D_sn(void *p, int prime, int n3d, int nn, int *nodes) { blocks(p, PRIME_B, MAI_PLANES, MAI_RULE_PRIME, n3d, prime, nn, nodes); }
void mai_ibind_rows_sn(void *p, int nr, int nn, int *nodes) { blocks(p, BIND_B, MAI_ROWS, MAI_RULE_CYCLIC, nr, 0, nn, nodes); }
void mai_ibind_columns_sn(void *p, int nc, int nn, int *nodes) { blocks(p, BIND_B, MAI_COLUMNS, MAI_RULE_CYCLIC, nc, 0, nn, nodes); }
void mai_ibind_3D_sn(void *p, int n3d, int nn, int *nodes) { blocks(p, BIND_B, MAI_PLANES, MAI_RULE_CYCLIC, n3d, 0, nn, nodes); }

void mai_bind_rows(void *p) { bind_blocks(p, MAI_ROWS, 0, NULL); }
void mai_bind_columns(void *p) { bind_blocks(p, MAI_COLUMNS, 0, NULL); }
void mai_bind_3D(void *p) { bind_blocks(p, MAI_PLANES, 0, NULL); }
void mai_bind_rows_sn(void *p, int nn, int *nodes) { bind_blocks(p, MAI_ROWS, nn, nodes); }
void mai_bind_columns_sn(void *p, int nn, int *nodes) { bind_blocks(p, MAI_COLUMNS, nn, nodes); }
void mai_bind_3D_sn(void *p, int nn, int *nodes) { bind_blocks(p, MAI_PLANES, nn, nodes); }
