/* SPDX-License-Identifier: BSD-3-Clause */
/* query/query.h - where pages really are (not installed): page nodes and histograms
 * (query.c), huge pages per node (hugepages.c), intended against actual (check.c). Below it:
 * topology/, sys/, base/; it never places anything. */
#ifndef NPL_QUERY_H
#define NPL_QUERY_H

#include "sys/sys.h"
#include "topology/topology.h"

/* The pages of [base, base+bytes) against want[i], the intended node of base page i
 * (NPL_NODE_ANY: any node): one query of the kernel, then counts of placed, misplaced and absent
 * pages into out (npl_check's verdict; want has one entry per base page). */
int npl__check_pages(const void *base, size_t bytes, const int *want, struct npl_check *out);

#endif
