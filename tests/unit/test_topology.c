/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology on synthetic machines of several shapes: node ids, CPU-less nodes, restriction
 * (cpuset masks), distances, shapes that overflow. */
#include "check.h"
#include <errno.h>
#include <hwloc.h>
#include <numaplace.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    npl_topo *t;
    CHECK(npl_topo_load_synthetic(&t, "pack:2 numa:2 core:2 pu:2") == 0, "load 2x2x2x2");
    CHECK(npl_topo_node_count(t, 1) == 4 && npl_topo_node_count(t, 0) == 4, "4 nodes");
    CHECK(npl_topo_cpu_count(t) == 16 && npl_topo_core_count(t) == 8, "16 PUs, 8 cores (%d, %d)",
          npl_topo_cpu_count(t), npl_topo_core_count(t));
    int cpus[16];
    CHECK(npl_topo_node_cpus(t, 1, cpus, 16) == 4 && cpus[0] == 4 && cpus[3] == 7,
          "node 1 has CPUs 4-7");
    CHECK(npl_topo_cpu_node(t, 9) == 2, "CPU 9 on node 2");
    CHECK(npl_topo_distance(t, 0, 0) == 10 && npl_topo_distance(t, 0, 3) == 20,
          "default distances 10/20");
    int d[16];
    for (int i = 0; i < 16; i++)
        d[i] = i / 4 == i % 4 ? 10 : 10 + 5 * abs(i / 4 - i % 4);
    CHECK(npl_topo_set_distances(t, d, 4) == 0 && npl_topo_distance(t, 1, 3) == 20 &&
              npl_topo_distance(t, 0, 1) == 15,
          "distances set");
    CHECK(npl_topo_set_distances(t, d, 3) == -1 && errno == EINVAL, "wrong matrix size");
    CHECK(npl_topo_distance(t, 0, 4) == -1 && errno == EINVAL, "distance out of range");
    /* restrict as a cpuset would */
    CHECK(npl_topo_restrict(t, "0-5", "0,1") == 0, "restrict");
    CHECK(npl_topo_cpu_count(t) == 6 && npl_topo_node_count(t, 0) == 2, "6 CPUs, 2 nodes usable");
    struct npl_node_info ni;
    npl_topo_node_info(t, 1, &ni);
    CHECK(ni.ncpus == 4 && ni.ncpus_allowed == 2 && ni.allowed, "node 1: 4 CPUs, 2 allowed");
    npl_topo_node_info(t, 3, &ni);
    CHECK(!ni.allowed && ni.ncpus_allowed == 0, "node 3 masked");
    CHECK(npl_topo_restrict(t, "99", NULL) == -1 && errno == EINVAL, "unknown CPU rejected");
    CHECK(npl_topo_restrict(t, NULL, "7") == -1 && errno == EINVAL, "unknown node rejected");
    npl_topo_destroy(t);

    /* non-contiguous node ids */
    CHECK(npl_topo_load_synthetic(&t, "numa:4(indexes=0,2,4,6) core:1 pu:1") == 0, "sparse ids");
    CHECK(npl_topo_node_id(t, 2) == 4 && npl_topo_node_index(t, 6) == 3 &&
              npl_topo_node_index(t, 1) == -1 && errno == EINVAL,
          "ids 0,2,4,6");
    /* one numbering: every call takes OS ids, indexes only iterate */
    CHECK(npl_topo_max_node_id(t) == 6, "max node id 6 (%d)", npl_topo_max_node_id(t));
    CHECK(npl_topo_node_info(t, 4, &ni) == 0 && ni.os_id == 4, "node_info takes the OS id 4");
    CHECK(npl_topo_node_info(t, 3, &ni) == -1 && errno == EINVAL, "node 3 does not exist");
    CHECK(npl_topo_node_cpus(t, 6, cpus, 16) == 1 && cpus[0] == 3, "node 6 has CPU 3 (%d)",
          cpus[0]);
    CHECK(npl_topo_distance(t, 2, 6) == 20 && npl_topo_distance(t, 6, 6) == 10 &&
              npl_topo_distance(t, 1, 2) == -1,
          "distances by OS id");
    CHECK(npl_topo_cpu_node(t, 2) == 4, "CPU 2 on node 4");
    /* plans: resolved on this topology, threads given explicitly (no environment) */
    npl_policy *p;
    npl_plan *pl;
    npl_policy_parse(&p, "cyclic_block");
    CHECK(npl_plan_create(&pl, p, t, 3) == 0 && npl_plan_threads(pl) == 3 &&
              npl_plan_node_count(pl) == 4 && npl_plan_node(pl, 3) == 6,
          "plan: 3 threads, nodes 0,2,4,6");
    int map[6];
    CHECK(npl_plan_map(pl, NULL, 6 * 4096, 4096, 0, 6, map) == 0 && map[0] == 0 && map[1] == 0 &&
              map[2] == 2 && map[3] == 2 && map[4] == 4 && map[5] == 4,
          "3 thread blocks of 2 pages on nodes 0, 2, 4");
    npl_plan_free(pl);
    CHECK(npl_plan_create(&pl, p, t, 0) == 0 && npl_plan_threads(pl) == 4,
          "threads 0: the topology's 4 cores (%d)", npl_plan_threads(pl));
    npl_plan_free(pl);
    npl_policy_free(p);
    npl_policy_parse(&p, "bind_all:4");
    CHECK(npl_topo_restrict(t, NULL, "0,2") == 0, "restrict to nodes 0,2");
    CHECK(npl_plan_create(&pl, p, t, 0) == -1 && errno == EXDEV,
          "a plan naming a node outside the restricted set fails with EXDEV");
    npl_policy_free(p);
    npl_policy_parse(&p, "cyclic");
    CHECK(npl_plan_create(&pl, p, t, 0) == 0 && npl_plan_node_count(pl) == 2 &&
              npl_plan_node(pl, 1) == 2,
          "cyclic on the restricted topology: nodes 0,2");
    char buf[128];
    CHECK(npl_plan_format(pl, buf, sizeof buf) > 0 && !strcmp(buf, "cyclic nodes=0,2"),
          "plan format \"%s\"", buf);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char sbuf[64];
    CHECK(npl_plan_nodeset(pl, set) == 0 && hwloc_bitmap_list_snprintf(sbuf, sizeof sbuf, set) > 0 &&
              !strcmp(sbuf, "0,2"),
          "plan nodeset 0,2 (%s)", sbuf);
    CHECK(npl_topo_nodeset(t, set) == 0 && hwloc_bitmap_list_snprintf(sbuf, sizeof sbuf, set) > 0 &&
              !strcmp(sbuf, "0,2"),
          "usable nodeset of the restricted topology 0,2 (%s)", sbuf);
    CHECK(npl_topo_cpuset(t, 4, set) == 0 && hwloc_bitmap_list_snprintf(sbuf, sizeof sbuf, set) > 0 &&
              !strcmp(sbuf, "2"),
          "cpuset of node 4: CPU 2 (%s)", sbuf);
    CHECK(npl_topo_cpuset(t, -1, set) == 0 && hwloc_bitmap_weight(set) == 4, "all allowed CPUs");
    CHECK(npl_topo_cpuset(t, 3, set) == -1 && errno == EINVAL, "cpuset of a hole: EINVAL");
    hwloc_bitmap_free(set);
    npl_plan_free(pl);
    npl_policy_free(p);
    npl_topo_destroy(t);

    /* two memory nodes sharing one package: the second is CPU-less (a CXL-like tier) */
    CHECK(npl_topo_load_synthetic(&t, "pack:2 [numa(memory=1GB)] [numa(memory=512MB)] core:2 pu:1") == 0,
          "CPU-less nodes");
    CHECK(npl_topo_node_count(t, 1) == 4, "4 nodes");
    npl_topo_node_info(t, 0, &ni);
    int c0 = ni.ncpus;
    npl_topo_node_info(t, 1, &ni);
    CHECK(c0 == 2 && ni.ncpus == 0 && ni.memory_bytes > 0, "node 0 has 2 CPUs, node 1 none (%d, %d)",
          c0, ni.ncpus);
    npl_topo_destroy(t);

    /* "@local": the nodes of the CPUs this process may use (an MPI rank bound to nodes 1-2 of a
     * 4-node machine whose memory nodes are all allowed) */
    CHECK(npl_topo_load_synthetic(&t, "numa:4 core:2 pu:1") == 0, "4 nodes x 2 CPUs");
    CHECK(npl_topo_restrict(t, "2-5", NULL) == 0, "CPUs of nodes 1 and 2 only");
    npl_policy_parse(&p, "cyclic@local");
    CHECK(npl_policy_format(p, buf, sizeof buf) > 0 && !strcmp(buf, "cyclic@local"),
          "cyclic@local formats back (%s)", buf);
    CHECK(npl_plan_create(&pl, p, t, 0) == 0 && npl_plan_node_count(pl) == 2 &&
              npl_plan_node(pl, 0) == 1 && npl_plan_node(pl, 1) == 2,
          "cyclic@local: nodes 1, 2");
    CHECK(npl_plan_map(pl, NULL, 4 * 4096, 4096, 0, 4, map) == 0 && map[0] == 1 && map[1] == 2 &&
              map[2] == 1 && map[3] == 2,
          "cyclic@local: pages alternate 1, 2");
    npl_plan_free(pl);
    npl_policy_free(p);
    npl_policy_parse(&p, "bind_all:3@local");
    CHECK(npl_plan_create(&pl, p, t, 0) == -1 && errno == EXDEV, "bind_all:3@local: not local");
    npl_policy_free(p);
    npl_policy_parse(&p, "bind_all:2@local");
    CHECK(npl_plan_create(&pl, p, t, 0) == 0 && npl_plan_node(pl, 0) == 2, "bind_all:2@local");
    npl_plan_free(pl);
    npl_policy_free(p);
    npl_topo_destroy(t);
    CHECK(npl_topo_load_synthetic(&t, "pack:2 [numa(memory=1GB)] [numa(memory=512MB)] core:2 pu:1") == 0,
          "CPU-less nodes");
    CHECK(npl_topo_restrict(t, NULL, "1,3") == 0, "only the CPU-less nodes' memory");
    npl_policy_parse(&p, "skew_mapp@local");
    CHECK(npl_plan_create(&pl, p, t, 0) == -1 && errno == EXDEV,
          "@local with memory only on CPU-less nodes: EXDEV");
    npl_policy_free(p);
    npl_topo_destroy(t);

    CHECK(npl_topo_load_synthetic(&t, "this is not a topology") == -1 && errno == EINVAL,
          "bad synthetic string");

    /* shapes */
    size_t b;
    npl_shape s = {8, 2, {1000, 1000, 0}, NPL_ROW_MAJOR};
    CHECK(npl_shape_bytes(&s, &b) == 0 && b == 8000000, "8e6 bytes");
    s = (npl_shape){8, 3, {SIZE_MAX / 4, 2, 2}, NPL_ROW_MAJOR};
    CHECK(npl_shape_bytes(&s, &b) == -1 && errno == EOVERFLOW, "rows*cols*elem overflow");
    s = (npl_shape){0, 1, {10, 0, 0}, NPL_ROW_MAJOR};
    CHECK(npl_shape_bytes(&s, &b) == -1 && errno == EINVAL, "element size 0");
    s = (npl_shape){4, 2, {10, 0, 0}, NPL_ROW_MAJOR};
    CHECK(npl_shape_bytes(&s, &b) == -1 && errno == EINVAL, "dimension 0");
    s = (npl_shape){4, 4, {1, 1, 1}, NPL_ROW_MAJOR};
    CHECK(npl_shape_bytes(&s, &b) == -1 && errno == EINVAL, "4 dimensions");
    return check_summary("test_topology");
}
