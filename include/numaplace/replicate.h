/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/replicate.h
 * @brief numaplace/replicate.h - numag's per-node replicas of read-only data.
 *
 * A replica set holds one copy of a buffer on every usable node (or on the nodes of a subset),
 * each placed on its node and filled by a thread running on that node (numag's per-node master;
 * a CPU-less node's copy is filled from the nearest node with CPUs). npl_replica_local() returns
 * the calling thread's local copy in O(1): the CPU from the thread's rseq area (one load; getcpu
 * through the vDSO where glibc has no rseq), then a CPU -> copy table; call it in hot loops.
 * On a machine with one usable node the set degrades to one copy, with no error.
 * Design, fallbacks and tests: docs/REPLICATION_HUGEPAGES.md. */
/** @defgroup npl_replication Replication
 *  Per-node copies of read-only data and the calling thread's local copy in O(1).
 *  @{ */
#ifndef NUMAPLACE_REPLICATE_H
#define NUMAPLACE_REPLICATE_H

#include <numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** A replica set (opaque): from npl_replicate(), freed with npl_replica_free(). */
typedef struct npl_replica npl_replica;

/** Make per-node copies of master[0..bytes). nodes/nnodes: the nodes to replicate on (OS ids;
 *  NULL: every usable node). flags: NPL_F_THP / NPL_F_HUGETLB for the copies. The master buffer
 *  stays the caller's; the copies are read-only by convention (write to the master, then sync).
 *  @return 0 with the set in *out, or -1 with errno EINVAL (NULL argument, bytes 0, bad node
 *          list), EXDEV (a node outside the allowed set or without memory), ENOMEM, and the
 *          errors of npl_alloc_array() for the copies. */
int npl_replicate(npl_replica **out, const void *master, size_t bytes, const int *nodes,
                  int nnodes, unsigned flags);
/** The calling thread's local copy (the nearest copy, by distance, if its node has none).
 *  @return the copy; NULL only for a NULL set (no errno: a hot-path function). */
const void *npl_replica_local(const npl_replica *r);
/** The copy on node `node` (OS id).
 *  @return the copy, or NULL with errno EINVAL (NULL set, no copy on that node). */
const void *npl_replica_on(const npl_replica *r, int node);
/** Copy the master into every copy again (one thread per node, in parallel).
 *  @return 0, or -1 with errno EINVAL (NULL set). */
int npl_replica_sync(npl_replica *r);

/** Totals of a replica set (per-copy facts: npl_replica_node(), npl_replica_filler_cpu()). */
struct npl_replica_info {
    int ncopies;            /**< copies made */
    size_t bytes;           /**< bytes per copy */
    size_t total_bytes;     /**< memory the set uses */
};
/** Describe a replica set.
 *  @return 0, or -1 with errno EINVAL (NULL argument). */
int npl_replica_info(const npl_replica *r, struct npl_replica_info *out);
/** Node (OS id) of copy i (0 <= i < ncopies).
 *  @return the node, or -1 with errno EINVAL (NULL set, i out of range). */
int npl_replica_node(const npl_replica *r, int i);
/** CPU whose thread filled copy i: its node's master, or the nearest node's for a CPU-less node.
 *  @return the CPU, or -1 with errno EINVAL (NULL set, i out of range). */
int npl_replica_filler_cpu(const npl_replica *r, int i);
/** Free a replica set and its copies (NULL: nothing); the master stays the caller's. */
void npl_replica_free(npl_replica *r);

/** numag's per-socket master: the first CPU this process may use on node `node` (OS id), or on
 *  the nearest node with such CPUs when `node` has none (a CPU-less node). -1+EINVAL for an
 *  unknown node, -1+EXDEV when no allowed CPU exists. The node of a CPU: npl_topo_cpu_node().
 *  @return the CPU's OS id, or -1 with errno EINVAL, EXDEV (above), or npl_topo_self()'s. */
int npl_node_master_cpu(int node);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
/** @} */
#ifdef __cplusplus
}
#endif
#endif
