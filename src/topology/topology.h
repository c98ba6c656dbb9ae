/* SPDX-License-Identifier: BSD-3-Clause */
/* topology/topology.h - the machine (not installed): hwloc -> struct npl_topo (topology.c) and
 * threads on it (threads.c: pin orders, pure; pinning, one sched_setaffinity). Below it: sys/,
 * base/. */
#ifndef NPL_TOPOLOGY_H
#define NPL_TOPOLOGY_H

#include "base/base.h"
#include <pthread.h>

/* ---- topology (topology.c) ---- */
struct npl_cpu_entry {
    int os;       /* PU OS id */
    int core;     /* core logical index (machine-wide) */
    int smt;      /* rank of this PU inside its core (0 = first hyperthread) */
    int node;     /* node index of its local node, -1 if none */
    int package;  /* package (socket) logical index, 0 if hwloc shows none */
    int llc;      /* last-level cache logical index, the package's if hwloc shows no cache */
    int allowed;
};
struct npl_node_entry {
    int os;
    int allowed;
    uint64_t mem, free;
    int ncpus, ncpus_allowed;
};
struct npl_topo {
    int nnodes;
    struct npl_node_entry *nodes; /* ascending OS id */
    int *dist;                    /* nnodes*nnodes */
    int ncpus;
    struct npl_cpu_entry *cpus;   /* ascending OS id */
    int synthetic;
    /* data/unified cache sizes above the first allowed PU, [level] for levels 1..5 (0: none),
     * recorded from hwloc while building (npl_topo_cache_size) */
    uint64_t cache_bytes[6];
};
/* Usable node OS ids (allowed, with memory), ascending; returns count. */
int npl__topo_usable_nodes(const npl_topo *t, int *out, int max);
int npl__topo_node_usable(const npl_topo *t, int idx);
int npl__topo_cpu_index(const npl_topo *t, int os_cpu);
/* CPU affinity snapshot taken when the library was loaded (before any pinning). */
int npl__initial_affinity(int *cpus, int max);
/* Replace that snapshot with the CPUs the process really started on, when the caller knows them
 * better (the interposer: an OpenMP runtime's constructor may bind the initial thread before the
 * library's runs). Before any thread is started and before the topology is loaded. 0 or -1. */
int npl__set_initial_affinity(const int *cpus, int n);

/* ---- threads (threads.c) ---- */
/* Create a thread that pins itself as thread n of strategy before start(arg) runs, through
 * real_create (pthread_create, or the next one in the interposer): the one trampoline of the
 * library and of preload/. Returns 0 or a pthread error number. */
typedef int (*npl__create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n);

#endif
