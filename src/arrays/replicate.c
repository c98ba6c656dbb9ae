/* SPDX-License-Identifier: BSD-3-Clause */
/* replicate.c - per-node replicas of read-only data (numag). Each copy is a library array
 * placed with bind_all:<node> and filled by a thread pinned to a CPU of that node. */
#define _GNU_SOURCE
#include "arrays/arrays.h"
#include "numaplace/replicate.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>

struct npl_replica {
    const void *master;
    size_t bytes;
    int ncopies;
    int *node;        /* node of copy i */
    void **copy;
    int *by_node;     /* node OS id -> copy index (nearest copy for nodes without one) */
    int max_node;
    int *filler_cpu;  /* CPU that fills copy i */
    int *by_cpu;      /* CPU OS id -> copy index (-1: unknown CPU, ask getcpu for its node) */
    int max_cpu;
};

/* The CPU the calling thread runs on. glibc (2.35+) registers rseq for every thread, and the
 * kernel keeps rseq.cpu_id current at every return to user space: one load, no system call.
 * Without rseq (older glibc, GLIBC_TUNABLES=glibc.pthread.rseq=0): getcpu through the vDSO. */
static inline int current_cpu(void)
{
#if defined(RSEQ_SIG) && (defined(__x86_64__) || defined(__aarch64__))
    if (__rseq_size > 0) {
        const struct rseq *rs =
            (const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        int c = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
        if (c >= 0)
            return c;
    }
#endif
    unsigned cpu = 0;
    return getcpu(&cpu, NULL) == 0 ? (int)cpu : -1;
}

/* a CPU of node idx, or of the nearest node that has CPUs */
static int filler_for(const npl_topo *t, int idx)
{
    int best = -1, bestd = 0, cpu = -1;
    for (int j = 0; j < t->nnodes; j++) {
        int c;
        if (npl_topo_node_cpus(t, t->nodes[j].os, &c, 1) < 1)
            continue;
        int d = t->dist[idx * t->nnodes + j];
        if (best < 0 || d < bestd) {
            best = j;
            bestd = d;
            cpu = c;
        }
    }
    return cpu;
}

struct fill {
    npl_replica *r;
    int i;
    int err;
};

static void *fill_one(void *arg)
{
    struct fill *f = arg;
    npl_replica *r = f->r;
    if (r->filler_cpu[f->i] >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(r->filler_cpu[f->i], &set);
        sched_setaffinity(0, sizeof set, &set); /* only this helper thread */
    }
    memcpy(r->copy[f->i], r->master, r->bytes);
    return NULL;
}

int npl_replica_sync(npl_replica *r)
{
    if (!r)
        return npl__fail(EINVAL, "NULL replica set");
    int n = r->ncopies > 0 ? r->ncopies : 1;
    pthread_t th[n];
    struct fill f[n];
    int started[n];
    for (int i = 0; i < r->ncopies; i++) {
        f[i] = (struct fill){r, i, 0};
        started[i] = pthread_create(&th[i], NULL, fill_one, &f[i]) == 0;
        if (!started[i])
            fill_one(&f[i]); /* no thread: copy from here (placement is the pages', not ours) */
    }
    for (int i = 0; i < r->ncopies; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    return 0;
}

void npl_replica_free(npl_replica *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->ncopies; i++)
        if (r->copy[i])
            npl_free(r->copy[i]);
    free(r->node);
    free(r->copy);
    free(r->by_node);
    free(r->filler_cpu);
    free(r->by_cpu);
    free(r);
}

/* Lookup tables: every node (with or without a copy) -> its nearest copy; every CPU the
 * topology knows -> the copy of its node. */
static int build_lookup(npl_replica *r, const npl_topo *t)
{
    for (int n = 0; n <= r->max_node; n++)
        r->by_node[n] = 0;
    for (int a = 0; a < t->nnodes; a++) {
        int best = 0, bestd = -1;
        for (int i = 0; i < r->ncopies; i++) {
            int d = npl_topo_distance(t, t->nodes[a].os, r->node[i]);
            if (bestd < 0 || d < bestd) {
                best = i;
                bestd = d;
            }
        }
        r->by_node[t->nodes[a].os] = best;
    }
    for (int i = 0; i < t->ncpus; i++)
        if (t->cpus[i].os > r->max_cpu)
            r->max_cpu = t->cpus[i].os;
    if (!(r->by_cpu = malloc(((size_t)r->max_cpu + 1) * sizeof *r->by_cpu)))
        return npl__fail(ENOMEM, "out of memory");
    for (int c = 0; c <= r->max_cpu; c++)
        r->by_cpu[c] = -1;
    for (int i = 0; i < t->ncpus; i++)
        if (t->cpus[i].node >= 0)
            r->by_cpu[t->cpus[i].os] = r->by_node[t->nodes[t->cpus[i].node].os];
    return 0;
}

int npl_replicate(npl_replica **out, const void *master, size_t bytes, const int *nodes,
                  int nnodes, unsigned flags)
{
    if (!out || !master || bytes == 0 || nnodes < 0 || (nnodes > 0 && !nodes))
        return npl__fail(EINVAL, "npl_replicate: NULL or empty argument");
    *out = NULL;
    if (NPL__CHECK_FLAGS(flags, "npl_replicate") < 0)
        return -1;
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    npl_policy *subset;
    if (npl_policy_create(&subset, NPL_CYCLIC, nodes, nnodes) < 0)
        return -1;
    npl_plan *plan; /* validates the nodes: they exist, are allowed and have memory */
    int rc = npl_plan_create(&plan, subset, t, 0);
    npl_policy_free(subset);
    if (rc < 0)
        return -1;
    int m = plan->m, *list = plan->nodes;
    plan->nodes = NULL; /* the set owns the list now */
    npl_plan_free(plan);
    npl_replica *r = calloc(1, sizeof *r);
    int max_node = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].os > max_node)
            max_node = t->nodes[i].os;
    if (r) {
        r->master = master;
        r->bytes = bytes;
        r->node = list;
        r->copy = calloc((size_t)m, sizeof *r->copy);
        r->filler_cpu = calloc((size_t)m, sizeof *r->filler_cpu);
        r->by_node = calloc((size_t)max_node + 1, sizeof *r->by_node);
        r->max_node = max_node;
    }
    if (!r || !r->copy || !r->filler_cpu || !r->by_node) {
        if (r)
            r->ncopies = 0;
        else
            free(list);
        npl_replica_free(r);
        return npl__fail(ENOMEM, "out of memory");
    }
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    for (int i = 0; i < m; i++, r->ncopies++) {
        npl_plan *p = NULL;
        if (npl__plan_bind(&p, t, &list[i], 1) < 0 ||
            !(r->copy[i] = npl_alloc_planned(&shape, p, flags))) {
            int e = errno;
            char msg[256];
            snprintf(msg, sizeof msg, "%s", npl_last_error());
            int bad_node = list[i]; /* list is r->node: freed with r */
            npl_plan_free(p);
            npl_replica_free(r);
            return npl__fail(e, "replica on node %d: %s", bad_node, msg);
        }
        npl_plan_free(p);
        r->filler_cpu[i] = filler_for(t, npl_topo_node_index(t, list[i]));
    }
    if (build_lookup(r, t) < 0) {
        npl_replica_free(r);
        return -1;
    }
    npl_replica_sync(r);
    *out = r;
    return 0;
}

const void *npl_replica_local(const npl_replica *r)
{
    if (!r)
        return NULL;
    int cpu = current_cpu();
    if (cpu >= 0 && cpu <= r->max_cpu && r->by_cpu[cpu] >= 0)
        return r->copy[r->by_cpu[cpu]];
    unsigned ucpu = 0, node = 0; /* a CPU the topology does not know: ask the kernel its node */
    if (getcpu(&ucpu, &node) < 0 || (int)node > r->max_node)
        return r->copy[0];
    return r->copy[r->by_node[node]];
}

const void *npl_replica_on(const npl_replica *r, int node)
{
    for (int i = 0; r && i < r->ncopies; i++)
        if (r->node[i] == node)
            return r->copy[i];
    npl__fail(EINVAL, "no copy on node %d", node);
    return NULL;
}

int npl_replica_info(const npl_replica *r, struct npl_replica_info *o)
{
    if (!r || !o)
        return npl__fail(EINVAL, "NULL argument");
    memset(o, 0, sizeof *o);
    o->ncopies = r->ncopies;
    o->bytes = r->bytes;
    o->total_bytes = r->bytes * (size_t)r->ncopies;
    return 0;
}

int npl_replica_node(const npl_replica *r, int i)
{
    if (!r || i < 0 || i >= r->ncopies)
        return npl__fail(EINVAL, "copy %d out of range", i);
    return r->node[i];
}

int npl_replica_filler_cpu(const npl_replica *r, int i)
{
    if (!r || i < 0 || i >= r->ncopies)
        return npl__fail(EINVAL, "copy %d out of range", i);
    return r->filler_cpu[i];
}

int npl_node_master_cpu(int node)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    int idx = npl_topo_node_index(t, node);
    if (idx < 0)
        return -1;
    int cpu = filler_for(t, idx);
    return cpu >= 0 ? cpu : npl__fail(EXDEV, "no CPU this process may use near node %d", node);
}
