/* SPDX-License-Identifier: BSD-3-Clause */
/* plan.c - PURE: a policy resolved once against an explicit topology (struct npl_plan), and the
 * page -> node map of a plan laid over an array's geometry (struct npl_map).
 *
 * A plan holds everything a policy leaves open, decided once: the node list (validated: exists,
 * allowed, has memory), the thread count of block schedules, the node of every thread for
 * bind_block (from the pin order), the prime and the weights. It is immutable and reference
 * counted; an array keeps the plans it was placed with, so npl_check, migration and the CLI read
 * what placement used, whatever the environment says later. No system call and no file or
 * environment read in this file: defaults come in as arguments (defaults/ reads them). */
#define _GNU_SOURCE
#include "plan/plan.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node a policy names must exist, be allowed and have memory. */
static int validate_node(const npl_topo *t, int os, const char *role)
{
    int idx = -1;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].os == os)
            idx = i;
    if (idx < 0)
        return npl__fail(EINVAL, "%s node %d does not exist on this machine", role, os);
    if (t->nodes[idx].mem == 0) /* the real cause first: no cpuset can give it memory */
        return npl__fail(EXDEV, "%s node %d has no memory", role, os);
    if (!t->nodes[idx].allowed)
        return npl__fail(EXDEV, "%s node %d is outside this process's allowed memory nodes "
                                "(cpuset Mems_allowed)", role, os);
    return 0;
}

/* "@local": the usable nodes (allowed, with memory) that hold a CPU this process may use, e.g.
 * the node(s) an MPI launcher bound a rank to; EXDEV if none (a CPU-less memory tier). */
static int local_nodes(const npl_topo *t, int **out, int *cnt)
{
    int *v = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof *v), n = 0;
    if (!v)
        return npl__fail(ENOMEM, "out of memory");
    for (int i = 0; i < t->nnodes; i++)
        if (npl__topo_node_usable(t, i) && t->nodes[i].ncpus_allowed > 0)
            v[n++] = t->nodes[i].os;
    if (!n) {
        free(v);
        return npl__fail(EXDEV, "@local: no node with memory holds a CPU this process may use");
    }
    *out = v;
    *cnt = n;
    return 0;
}

/* The nodes a policy spreads over, validated against the topology: OS ids in policy order. */
static int resolve_nodes(struct npl_plan *pl, const npl_policy *p, const npl_topo *t)
{
    const int *src;
    int cnt;
    int *all = NULL;
    if (p->nnodes) { /* bind_all's list, weighted's nodes */
        src = p->nodes;
        cnt = p->nnodes;
    } else if (p->nsubset) {
        src = p->subset;
        cnt = p->nsubset;
    } else if (p->local) {
        if (local_nodes(t, &all, &cnt) < 0)
            return -1;
        src = all;
    } else {
        all = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof *all);
        if (!all)
            return npl__fail(ENOMEM, "out of memory");
        cnt = npl__topo_usable_nodes(t, all, t->nnodes);
        src = all;
        if (cnt == 0) {
            free(all);
            return npl__fail(EXDEV, "no allowed node with memory");
        }
    }
    for (int i = 0; i < cnt; i++)
        if (validate_node(t, src[i], p->nnodes ? "policy" : "subset") < 0) {
            free(all);
            return -1;
        }
    for (int i = 0; p->nnodes && p->nsubset && i < p->nnodes; i++)
        if (!npl__in_list(p->nodes[i], p->subset, p->nsubset)) {
            free(all);
            return npl__fail(EINVAL, "node %d is outside the policy's subset", p->nodes[i]);
        }
    if (p->nnodes && p->local) { /* bind_all:N@local: N must be one of the local nodes */
        int *loc, nloc, out = -1;
        if (local_nodes(t, &loc, &nloc) < 0)
            return -1;
        for (int i = 0; i < p->nnodes && out < 0; i++)
            if (!npl__in_list(p->nodes[i], loc, nloc))
                out = p->nodes[i];
        free(loc);
        if (out >= 0)
            return npl__fail(EXDEV, "node %d is not local: no CPU this process may use is on it",
                             out);
    }
    pl->nodes = all ? all : npl__dup_ints(src, cnt);
    if (!pl->nodes)
        return npl__fail(ENOMEM, "out of memory");
    pl->m = cnt;
    return 0;
}

/* bind_block: the node of each thread's CPU under the pin order; a node outside the policy's
 * list is replaced by the nearest listed node (SLIT distance; ties: first listed). */
static int resolve_thread_nodes(struct npl_plan *pl, const npl_policy *p, const npl_topo *t)
{
    int T = pl->nthreads;
    int *order = malloc((size_t)(t->ncpus ? t->ncpus : 1) * sizeof *order);
    pl->thread_node = malloc((size_t)T * sizeof *pl->thread_node);
    if (!order || !pl->thread_node) {
        free(order);
        return npl__fail(ENOMEM, "out of memory");
    }
    int P = npl_pin_order(t, p->pin[0] ? p->pin : "compact", order, t->ncpus);
    if (P <= 0) {
        free(order);
        return P < 0 ? -1 : npl__fail(EXDEV, "bind_block: no allowed CPU to run threads on");
    }
    for (int th = 0; th < T; th++) {
        int ci = npl__topo_cpu_index(t, order[th % P]);
        int home = ci >= 0 ? t->cpus[ci].node : -1;
        int best = pl->nodes[0], bestd = -1;
        for (int j = 0; j < pl->m; j++) {
            int nj = npl_topo_node_index(t, pl->nodes[j]);
            int d = home < 0 ? 0 : t->dist[home * t->nnodes + nj];
            if (bestd < 0 || d < bestd) {
                best = pl->nodes[j];
                bestd = d;
            }
        }
        pl->thread_node[th] = best;
    }
    free(order);
    return 0;
}

static int resolve_weights(struct npl_plan *pl, const npl_policy *p)
{
    pl->wprefix = malloc((size_t)(pl->m + 1) * sizeof *pl->wprefix);
    if (!pl->wprefix)
        return npl__fail(ENOMEM, "out of memory");
    pl->wprefix[0] = 0;
    for (int i = 0; i < pl->m; i++)
        pl->wprefix[i + 1] = pl->wprefix[i] + p->weights[i];
    pl->wtotal = pl->wprefix[pl->m];
    return 0;
}

static int resolve(struct npl_plan *pl, const npl_policy *p, const npl_topo *t, int threads)
{
    if (!(pl->pol = npl_policy_dup(p)))
        return -1;
    pl->kind = p->kind;
    pl->block_pages = p->block_pages;
    pl->block_units = p->block_units;
    pl->seed = p->seed;
    pl->usable_nodes = npl_topo_node_count(t, 0);
    if (npl__is_block_kind(p->kind)) {
        int cores = npl_topo_core_count(t);
        pl->nthreads = p->threads ? p->threads : threads > 0 ? threads : cores > 0 ? cores : 1;
    }
    const struct npl__policy_row *row = npl__policy_row(p->kind);
    if (row->kernel == NPL__KERNEL_DEFAULT) /* first touch: no nodes */
        return 0;
    if (resolve_nodes(pl, p, t) < 0)
        return -1;
    if (row->flags & NPL__POL_PRIME) {
        pl->prime = p->prime ? p->prime : npl__next_prime(pl->m + 1);
        if (pl->prime < pl->m)
            return npl__fail(EINVAL, "prime_mapp: P=%d is smaller than the %d nodes", pl->prime,
                             pl->m);
    }
    if ((row->flags & NPL__POL_WEIGHTS) && resolve_weights(pl, p) < 0)
        return -1;
    if ((row->flags & NPL__POL_THREAD_NODES) && resolve_thread_nodes(pl, p, t) < 0)
        return -1;
    return 0;
}

int npl_plan_create(npl_plan **out, const npl_policy *pol, const npl_topo *topo, int threads)
{
    if (!out)
        return npl__fail(EINVAL, "NULL out");
    *out = NULL;
    if (!pol || !topo)
        return npl__fail(EINVAL, "npl_plan_create: NULL %s", pol ? "topology" : "policy");
    if (threads < 0 || threads > 1 << 20)
        return npl__fail(EINVAL, "invalid default thread count %d", threads);
    struct npl_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return npl__fail(ENOMEM, "out of memory");
    atomic_init(&pl->refs, 1);
    if (resolve(pl, pol, topo, threads) < 0) {
        int e = errno;
        npl_plan_free(pl);
        errno = e;
        return -1;
    }
    *out = pl;
    return 0;
}

npl_plan *npl__plan_ref(const npl_plan *pl)
{
    npl_plan *p = (npl_plan *)pl;
    if (p)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

int npl__plan_bind(npl_plan **out, const npl_topo *t, const int *nodes, int n)
{
    npl_policy *p;
    *out = NULL;
    if (!t) /* npl_topo_self() failed: its error stands */
        return -1;
    for (int i = 0; i < n; i++)
        if (nodes[i] < 0)
            return npl__fail(EINVAL, "invalid node %d", nodes[i]);
    if (npl_policy_create(&p, NPL_BIND_ALL, nodes, n) < 0)
        return -1;
    int rc = npl_plan_create(out, p, t, 0);
    npl_policy_free(p);
    return rc;
}

void npl_plan_free(npl_plan *pl)
{
    if (!pl || atomic_fetch_sub(&pl->refs, 1) != 1)
        return;
    npl_policy_free(pl->pol);
    free(pl->nodes);
    free(pl->thread_node);
    free(pl->wprefix);
    free(pl);
}

const npl_policy *npl_plan_policy(const npl_plan *pl) { return pl ? pl->pol : NULL; }

int npl_plan_node_count(const npl_plan *pl)
{
    return pl ? pl->m : npl__fail(EINVAL, "NULL plan");
}

int npl_plan_node(const npl_plan *pl, int i)
{
    if (!pl || i < 0 || i >= pl->m)
        return npl__fail(EINVAL, "node %d of the plan out of range", i);
    return pl->nodes[i];
}

int npl_plan_threads(const npl_plan *pl)
{
    return pl ? pl->nthreads : npl__fail(EINVAL, "NULL plan");
}

int npl_plan_nodeset(const npl_plan *pl, struct hwloc_bitmap_s *set)
{
    if (!pl || !set)
        return npl__fail(EINVAL, "npl_plan_nodeset: NULL argument");
    hwloc_bitmap_zero(set);
    for (int i = 0; i < pl->m; i++)
        if (hwloc_bitmap_set(set, (unsigned)pl->nodes[i]) < 0)
            return npl__fail(ENOMEM, "out of memory");
    return 0;
}

int npl_plan_format(const npl_plan *pl, char *buf, size_t size)
{
    if (!pl || (!buf && size))
        return npl__fail(EINVAL, "NULL argument");
    char pol[4096], list[4096];
    npl_policy_format(pl->pol, pol, sizeof pol);
    npl__format_list(pl->nodes, pl->m, list, sizeof list);
    int n = snprintf(buf, size, "%s nodes=%s", pol, pl->m ? list : "any");
    if (n >= 0 && pl->nthreads && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " threads=%d", pl->nthreads);
    else if (pl->nthreads)
        n += snprintf(NULL, 0, " threads=%d", pl->nthreads);
    return n;
}

/* ---- the map: a plan over an array's geometry ---- */

int npl__map_init(struct npl_map *m, const npl_plan *pl, const npl_shape *shape, size_t bytes,
                  size_t page_size)
{
    memset(m, 0, sizeof *m);
    if (!pl)
        return npl__fail(EINVAL, "NULL plan");
    if (bytes == 0)
        return npl__fail(EINVAL, "size 0");
    if (page_size == 0 || (page_size & (page_size - 1)))
        return npl__fail(EINVAL, "page size %zu is not a power of two", page_size);
    m->plan = pl;
    m->page_size = page_size;
    m->npages = bytes / page_size + (bytes % page_size != 0);
    if (shape) {
        size_t sb;
        if (npl_shape_bytes(shape, &sb) < 0)
            return -1;
        if (sb != bytes)
            return npl__fail(EINVAL, "shape holds %zu bytes, range has %zu", sb, bytes);
        int outer = shape->order == NPL_ROW_MAJOR ? 0 : shape->ndims - 1;
        m->nunits = shape->dims[outer];
        m->unit_bytes = bytes / m->nunits;
    } else {
        m->nunits = bytes;
        m->unit_bytes = 1;
    }
    return 0;
}

int npl__map_init_part(struct npl_map *m, const npl_plan *pl, const struct npl_part *part,
                       size_t bytes, size_t page_size)
{
    if (npl__map_init(m, pl, NULL, bytes, page_size) < 0)
        return -1;
    if (part) {
        if (part->unit_bytes == 0 || part->nunits == 0)
            return npl__fail(EINVAL, "a part of no units");
        m->unit_bytes = part->unit_bytes;
        m->nunits = part->nunits;
        m->origin = part->origin;
    }
    return 0;
}

/* Block of a page: by explicit pages, by explicit units, or the thread owning the page's first
 * unit under OpenMP's static schedule (first nunits % T threads get one unit more). */
static size_t block_of(const struct npl_map *m, size_t page)
{
    const struct npl_plan *pl = m->plan;
    if (pl->block_pages)
        return page / pl->block_pages;
    size_t u = (size_t)(((unsigned __int128)page * m->page_size + m->origin) / m->unit_bytes);
    if (u >= m->nunits)
        u = m->nunits - 1;
    if (pl->block_units)
        return u / pl->block_units;
    size_t T = (size_t)pl->nthreads, q = m->nunits / T, r = m->nunits % T;
    if (q == 0) /* fewer units than threads: unit u belongs to thread u */
        return u;
    if (u < r * (q + 1))
        return u / (q + 1);
    return r + (u - r * (q + 1)) / q;
}

size_t npl__map_block(const struct npl_map *m, size_t page) { return block_of(m, page); }

int npl__map_node(const struct npl_map *m, size_t i)
{
    const struct npl__policy_row *row = npl__policy_row(m->plan->kind);
    return row ? row->node_of(m, i) : NPL_NODE_ANY;
}

int npl_plan_map(const npl_plan *pl, const npl_shape *shape, size_t bytes, size_t page_size,
                 size_t first, size_t count, int *nodes)
{
    if (!nodes && count)
        return npl__fail(EINVAL, "NULL output");
    struct npl_map m;
    if (npl__map_init(&m, pl, shape, bytes, page_size) < 0)
        return -1;
    if (first > m.npages || count > m.npages - first)
        return npl__fail(EINVAL, "pages %zu..%zu outside the array's %zu pages of %zu bytes",
                         first, first + count - (count > 0), m.npages, page_size);
    for (size_t k = 0; k < count; k++)
        nodes[k] = npl__map_node(&m, first + k);
    return 0;
}
