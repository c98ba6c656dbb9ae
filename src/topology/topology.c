/* SPDX-License-Identifier: BSD-3-Clause */
/* topology.c - discovery of nodes, CPUs, memory and distances (hwloc), and what this process
 * may use (its CPU affinity at load time, its cpuset's Mems_allowed). The result is a plain
 * struct npl_topo that the pure layers read; a synthetic topology is the same struct. */
#define _GNU_SOURCE
#include "topology/topology.h"
#include "sys/sys.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- CPU affinity snapshot, taken when the library is loaded (before anyone pins) ---- */
static int *initial_cpus;
static int initial_ncpus = -1;

/* The affinity mask at any size: sched_getaffinity fails with EINVAL while the set is smaller
 * than the kernel's; grow it (no fixed cap on CPU ids). */
__attribute__((constructor)) static void snapshot_affinity(void)
{
    for (int n = 1024; n <= (1 << 22); n *= 2) {
        cpu_set_t *set = CPU_ALLOC(n);
        size_t sz = CPU_ALLOC_SIZE(n);
        if (!set)
            return;
        CPU_ZERO_S(sz, set);
        if (sched_getaffinity(0, sz, set) == 0) {
            int cnt = CPU_COUNT_S(sz, set), k = 0;
            int *v = malloc((size_t)(cnt ? cnt : 1) * sizeof *v);
            for (int c = 0; v && c < n && k < cnt; c++)
                if (CPU_ISSET_S(c, sz, set))
                    v[k++] = c;
            CPU_FREE(set);
            if (v) {
                initial_cpus = v;
                initial_ncpus = k;
            }
            return;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            return;
    }
}

int npl__initial_affinity(int *cpus, int max)
{
    if (initial_ncpus < 0)
        snapshot_affinity();
    int n = initial_ncpus < max ? initial_ncpus : max;
    if (n > 0 && cpus)
        memcpy(cpus, initial_cpus, (size_t)n * sizeof *cpus);
    return initial_ncpus;
}

int npl__set_initial_affinity(const int *cpus, int n)
{
    int *v = n > 0 && cpus ? malloc((size_t)n * sizeof *v) : NULL;
    if (!v)
        return npl__fail(n > 0 && cpus ? ENOMEM : EINVAL, "no CPU list");
    memcpy(v, cpus, (size_t)n * sizeof *v);
    free(initial_cpus);
    initial_cpus = v;
    initial_ncpus = n;
    return 0;
}

/* ---- building the struct from hwloc ---- */
static int cmp_node(const void *a, const void *b)
{
    return ((const struct npl_node_entry *)a)->os - ((const struct npl_node_entry *)b)->os;
}

/* Local node of every PU: among NUMA nodes whose cpuset contains it, the one with the smallest
 * cpuset (ties: the lowest OS id). Nodes that are nobody's local node are CPU-less. One pass
 * over the nodes' cpusets (pu_of_os: PU OS id -> index in t->cpus, -1 if none). */
static void local_nodes(hwloc_topology_t h, struct npl_topo *t, const int *pu_of_os, int max_os)
{
    int *bestw = calloc((size_t)(t->ncpus > 0 ? t->ncpus : 1), sizeof *bestw);
    for (int k = 0; k < t->ncpus; k++)
        t->cpus[k].node = -1;
    if (!bestw)
        return;
    for (int i = 0; i < t->nnodes; i++) { /* ascending OS id: ties keep the lowest */
        hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(h, (unsigned)t->nodes[i].os);
        if (!n || !n->cpuset)
            continue;
        int w = hwloc_bitmap_weight(n->cpuset);
        unsigned os;
        hwloc_bitmap_foreach_begin(os, n->cpuset) {
            int k = (int)os <= max_os ? pu_of_os[os] : -1;
            if (k >= 0 && (t->cpus[k].node < 0 || w < bestw[k])) {
                t->cpus[k].node = i;
                bestw[k] = w;
            }
        }
        hwloc_bitmap_foreach_end();
    }
    free(bestw);
}

/* The deepest-level cache above a PU's core: its last-level cache; NULL if none. */
static hwloc_obj_t last_level_cache(hwloc_obj_t pu)
{
    hwloc_obj_t llc = NULL;
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        if (hwloc_obj_type_is_dcache(o->type))
            llc = o; /* the highest one wins */
    return llc;
}

static void describe_pu(hwloc_topology_t h, hwloc_obj_t pu, struct npl_cpu_entry *c)
{
    c->os = (int)pu->os_index;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_CORE, pu);
    c->core = core ? (int)core->logical_index : (int)pu->logical_index;
    c->smt = 0;
    if (core && pu->parent == core) /* the usual case: rank among the core's children */
        c->smt = (int)pu->sibling_rank;
    else if (core)
        for (hwloc_obj_t s = hwloc_get_next_obj_inside_cpuset_by_type(h, core->cpuset,
                                                                   HWLOC_OBJ_PU, NULL);
             s && s != pu;
             s = hwloc_get_next_obj_inside_cpuset_by_type(h, core->cpuset, HWLOC_OBJ_PU, s))
            c->smt++;
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, pu);
    c->package = pkg ? (int)pkg->logical_index : 0;
    hwloc_obj_t llc = last_level_cache(pu);
    c->llc = llc ? (int)llc->logical_index : -1 - c->package; /* made >= 0 in from_hwloc */
    c->allowed = 1;
}

/* CPUs: core index, SMT rank, package, last-level cache, local node; linear in the PUs. */
static int describe_cpus(hwloc_topology_t h, struct npl_topo *t)
{
    int max_os = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(h));
    int *pu_of_os = malloc((size_t)(max_os >= 0 ? max_os + 1 : 1) * sizeof *pu_of_os);
    if (!pu_of_os)
        return npl__fail(ENOMEM, "out of memory");
    for (int o = 0; o <= max_os; o++)
        pu_of_os[o] = -1;
    int k = 0, nllc = 0;
    for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, NULL); pu && k < t->ncpus;
         pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, pu), k++) {
        describe_pu(h, pu, &t->cpus[k]);
        if ((int)pu->os_index <= max_os)
            pu_of_os[pu->os_index] = k;
        if (t->cpus[k].llc >= nllc)
            nllc = t->cpus[k].llc + 1;
    }
    for (k = 0; k < t->ncpus; k++) /* no cache object: the package is the LLC domain */
        if (t->cpus[k].llc < 0)
            t->cpus[k].llc = nllc + t->cpus[k].package;
    local_nodes(h, t, pu_of_os, max_os);
    free(pu_of_os);
    return 0;
}

static int from_hwloc(hwloc_topology_t h, struct npl_topo *t)
{
    int nn = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    int np = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    if (nn <= 0) /* hwloc always shows at least one node; be safe */
        return npl__fail(EINVAL, "topology has no NUMA node");
    t->nnodes = nn;
    t->nodes = calloc((size_t)nn, sizeof *t->nodes);
    t->dist = calloc((size_t)nn * nn, sizeof *t->dist);
    t->ncpus = np;
    t->cpus = calloc(np > 0 ? (size_t)np : 1, sizeof *t->cpus);
    if (!t->nodes || !t->dist || !t->cpus)
        return npl__fail(ENOMEM, "out of memory");
    int i = 0;
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, NULL); n;
         n = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, n), i++) {
        t->nodes[i].os = (int)n->os_index;
        t->nodes[i].mem = n->attr ? n->attr->numanode.local_memory : 0;
        t->nodes[i].allowed = 1;
    }
    qsort(t->nodes, (size_t)nn, sizeof *t->nodes, cmp_node);

    /* distances: hwloc's latency matrix if any (from SLIT), else 10 local / 20 remote */
    for (int a = 0; a < nn; a++)
        for (int b = 0; b < nn; b++)
            t->dist[a * nn + b] = a == b ? 10 : 20;
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr == 1 && d) {
        for (unsigned a = 0; a < d->nbobjs; a++)
            for (unsigned b = 0; b < d->nbobjs; b++) {
                int ia = npl_topo_node_index(t, (int)d->objs[a]->os_index);
                int ib = npl_topo_node_index(t, (int)d->objs[b]->os_index);
                if (ia >= 0 && ib >= 0)
                    t->dist[ia * nn + ib] = (int)d->values[a * d->nbobjs + b];
            }
        hwloc_distances_release(h, d);
    }
    return describe_cpus(h, t);
}

static void count_cpus(struct npl_topo *t)
{
    for (int i = 0; i < t->nnodes; i++)
        t->nodes[i].ncpus = t->nodes[i].ncpus_allowed = 0;
    for (int k = 0; k < t->ncpus; k++) {
        int n = t->cpus[k].node;
        if (n < 0)
            continue;
        t->nodes[n].ncpus++;
        if (t->cpus[k].allowed)
            t->nodes[n].ncpus_allowed++;
    }
}

static int cmp_cpu(const void *a, const void *b)
{
    return ((const struct npl_cpu_entry *)a)->os - ((const struct npl_cpu_entry *)b)->os;
}

static void record_caches(hwloc_topology_t h, struct npl_topo *t); /* at the end of the file */

/* Leaves (PUs) of a synthetic description: the product of the level arities ("type:N" or "N"
 * outside parentheses and brackets), capped at cap + 1. hwloc builds any size it is given, and
 * grows faster than linearly: "pack:100000 numa:100000 pu:100000" never finished. */
#define NPL__SYNTHETIC_MAX_PUS 8192
static size_t synthetic_leaves(const char *d, size_t cap)
{
    size_t leaves = 1;
    int depth = 0;
    for (const char *p = d; *p; p++) {
        if (*p == '(' || *p == '[')
            depth++;
        else if ((*p == ')' || *p == ']') && depth > 0)
            depth--;
        int starts = p == d || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':';
        if (depth || !starts || *p < '0' || *p > '9')
            continue;
        size_t n = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            n = n > cap ? n : n * 10 + (size_t)(*p - '0');
        leaves = n > cap || leaves * n > cap ? cap + 1 : leaves * n;
        p--;
    }
    return leaves;
}

static int load(npl_topo **out, const char *synthetic)
{
    *out = NULL;
    struct npl_topo *t = calloc(1, sizeof *t);
    if (!t)
        return npl__fail(ENOMEM, "out of memory");
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) < 0) {
        free(t);
        return npl__fail(errno ? errno : ENOMEM, "hwloc_topology_init failed");
    }
    int rc = 0;
    if (synthetic) {
        if (synthetic_leaves(synthetic, NPL__SYNTHETIC_MAX_PUS) > NPL__SYNTHETIC_MAX_PUS)
            rc = npl__fail(EINVAL, "synthetic topology \"%.200s\": more than %d PUs", synthetic,
                           NPL__SYNTHETIC_MAX_PUS);
        else if (hwloc_topology_set_synthetic(h, synthetic) < 0)
            rc = npl__fail(EINVAL, "bad synthetic topology \"%s\"", synthetic);
        t->synthetic = 1;
    } else {
        /* keep disallowed resources: we mark them ourselves from affinity and Mems_allowed */
        hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    }
    if (rc == 0 && hwloc_topology_load(h) < 0)
        rc = npl__fail(errno ? errno : EINVAL, "hwloc_topology_load failed");
    if (rc == 0)
        rc = from_hwloc(h, t);
    if (rc == 0)
        qsort(t->cpus, (size_t)t->ncpus, sizeof *t->cpus, cmp_cpu);
    if (rc == 0 && !synthetic) {
        /* allowed CPUs: the affinity at load time; allowed nodes: Mems_allowed */
        int want = npl__initial_affinity(NULL, 0);
        int *cpus = want > 0 ? malloc((size_t)want * sizeof *cpus) : NULL;
        int nc = cpus ? npl__initial_affinity(cpus, want) : -1;
        if (nc > 0) {
            for (int k = 0; k < t->ncpus; k++)
                t->cpus[k].allowed = 0;
            for (int j = 0; j < nc && j < want; j++) {
                int k = npl__topo_cpu_index(t, cpus[j]);
                if (k >= 0)
                    t->cpus[k].allowed = 1;
            }
        }
        free(cpus);
        hwloc_const_bitmap_t hc = hwloc_topology_get_allowed_cpuset(h);
        for (int k = 0; k < t->ncpus; k++)
            if (hc && !hwloc_bitmap_isset(hc, (unsigned)t->cpus[k].os))
                t->cpus[k].allowed = 0;
        int nm = npl__mems_allowed(NULL, 0);
        int *mems = nm > 0 ? malloc((size_t)nm * sizeof *mems) : NULL;
        if (nm > 0 && (!mems || npl__mems_allowed(mems, nm) != nm))
            nm = -1;
        if (nm >= 0) {
            for (int i = 0; i < t->nnodes; i++) {
                t->nodes[i].allowed = 0;
                for (int j = 0; j < nm; j++)
                    if (mems[j] == t->nodes[i].os)
                        t->nodes[i].allowed = 1;
            }
        } else { /* no get_mempolicy: hwloc's view of the cgroup */
            hwloc_const_bitmap_t hn = hwloc_topology_get_allowed_nodeset(h);
            for (int i = 0; i < t->nnodes; i++)
                t->nodes[i].allowed = !hn || hwloc_bitmap_isset(hn, (unsigned)t->nodes[i].os);
        }
        free(mems);
    }
    if (rc == 0)
        record_caches(h, t);
    hwloc_topology_destroy(h);
    if (rc < 0) {
        npl_topo_destroy(t);
        return rc;
    }
    count_cpus(t);
    *out = t;
    return 0;
}

int npl_topo_load(npl_topo **out)
{
    if (!out)
        return npl__fail(EINVAL, "npl_topo_load: NULL out");
    int rc = load(out, NULL);
    if (rc == 0) { /* free memory per node, for reports */
        for (int i = 0; i < (*out)->nnodes; i++) {
            char path[128], line[256];
            snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo",
                     (*out)->nodes[i].os);
            FILE *f = npl__fs_open(path);
            while (f && fgets(line, sizeof line, f)) {
                unsigned long long kb;
                char *p = strstr(line, "MemFree:");
                if (p && sscanf(p, "MemFree: %llu", &kb) == 1)
                    (*out)->nodes[i].free = (uint64_t)kb * 1024;
            }
            if (f)
                fclose(f);
        }
    }
    return rc;
}

int npl_topo_load_synthetic(npl_topo **out, const char *description)
{
    if (!out || !description)
        return npl__fail(EINVAL, "npl_topo_load_synthetic: NULL argument");
    return load(out, description);
}

void npl_topo_destroy(npl_topo *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->dist);
    free(t->cpus);
    free(t);
}

int npl_topo_restrict(npl_topo *t, const char *cpu_list, const char *node_list)
{
    if (!t)
        return npl__fail(EINVAL, "npl_topo_restrict: NULL topology");
    /* both lists are parsed and checked before either is applied: a bad node list must not
     * leave the CPUs restricted (nothing half-applied; found by tests/fuzz/fuzz_lists.c) */
    int *cv = NULL, cn = 0, *nv = NULL, nn = 0;
    if (cpu_list) {
        if (npl__parse_list(cpu_list, NPL__MAX_ID, "CPU", &cv, &cn) < 0)
            return -1;
        for (int j = 0; j < cn; j++)
            if (npl__topo_cpu_index(t, cv[j]) < 0) {
                int bad = cv[j];
                free(cv);
                return npl__fail(EINVAL, "CPU %d does not exist", bad);
            }
    }
    if (node_list) {
        if (npl__parse_list(node_list, NPL__MAX_ID, "node", &nv, &nn) < 0) {
            free(cv);
            return -1;
        }
        for (int j = 0; j < nn; j++)
            if (npl_topo_node_index(t, nv[j]) < 0) {
                int bad = nv[j];
                free(cv);
                free(nv);
                return npl__fail(EINVAL, "node %d does not exist", bad);
            }
    }
    if (cpu_list)
        for (int k = 0; k < t->ncpus; k++)
            t->cpus[k].allowed &= npl__in_list(t->cpus[k].os, cv, cn);
    if (node_list)
        for (int i = 0; i < t->nnodes; i++)
            t->nodes[i].allowed &= npl__in_list(t->nodes[i].os, nv, nn);
    free(cv);
    free(nv);
    count_cpus(t);
    return 0;
}

int npl_topo_set_distances(npl_topo *t, const int *m, int n)
{
    if (!t || !m || n != t->nnodes)
        return npl__fail(EINVAL, "distance matrix must be %d x %d", t ? t->nnodes : 0,
                         t ? t->nnodes : 0);
    for (int i = 0; i < n * n; i++)
        if (m[i] <= 0)
            return npl__fail(EINVAL, "distances must be positive");
    memcpy(t->dist, m, (size_t)n * n * sizeof *m);
    return 0;
}

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static npl_topo *self_topo;
static int self_errno;
static char self_msg[256];

static void load_self(void)
{
    if (npl_topo_load(&self_topo) < 0) {
        self_errno = errno;
        snprintf(self_msg, sizeof self_msg, "%s", npl_last_error());
    }
}

const npl_topo *npl_topo_self(void)
{
    pthread_once(&self_once, load_self);
    if (!self_topo)
        npl__fail(self_errno ? self_errno : ENODEV, "cannot load this machine's topology: %s",
                  self_msg);
    return self_topo;
}

int npl_topo_node_count(const npl_topo *t, int all)
{
    if (!t)
        return npl__fail(EINVAL, "NULL topology");
    if (all)
        return t->nnodes;
    int n = 0;
    for (int i = 0; i < t->nnodes; i++)
        n += npl__topo_node_usable(t, i);
    return n;
}

int npl__topo_node_usable(const npl_topo *t, int i)
{
    return t->nodes[i].allowed && t->nodes[i].mem > 0;
}

int npl__topo_usable_nodes(const npl_topo *t, int *out, int max)
{
    int n = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (npl__topo_node_usable(t, i)) {
            if (n < max)
                out[n] = t->nodes[i].os;
            n++;
        }
    return n;
}

int npl_topo_node_id(const npl_topo *t, int idx)
{
    if (!t || idx < 0 || idx >= t->nnodes)
        return npl__fail(EINVAL, "node index %d out of range", idx);
    return t->nodes[idx].os;
}

int npl_topo_node_index(const npl_topo *t, int os_id)
{
    if (t)
        for (int i = 0; i < t->nnodes; i++)
            if (t->nodes[i].os == os_id)
                return i;
    return npl__fail(EINVAL, "node %d does not exist", os_id);
}

/* index of node OS id `os`, or -1 (no message) */
static int node_idx(const npl_topo *t, int os)
{
    for (int i = 0; t && i < t->nnodes; i++)
        if (t->nodes[i].os == os)
            return i;
    return -1;
}

int npl_topo_max_node_id(const npl_topo *t)
{
    if (!t)
        return npl__fail(EINVAL, "NULL topology");
    return t->nodes[t->nnodes - 1].os; /* ascending OS ids */
}

int npl_topo_node_info(const npl_topo *t, int node, struct npl_node_info *o)
{
    int idx = node_idx(t, node);
    if (!o || idx < 0)
        return npl__fail(EINVAL, o ? "node %d does not exist" : "NULL output", node);
    const struct npl_node_entry *n = &t->nodes[idx];
    o->os_id = n->os;
    o->allowed = n->allowed;
    o->ncpus = n->ncpus;
    o->ncpus_allowed = n->ncpus_allowed;
    o->memory_bytes = n->mem;
    o->free_bytes = n->free;
    return 0;
}

int npl_topo_distance(const npl_topo *t, int a, int b)
{
    int ia = node_idx(t, a), ib = node_idx(t, b);
    if (ia < 0 || ib < 0)
        return npl__fail(EINVAL, "node %d does not exist", ia < 0 ? a : b);
    return t->dist[ia * t->nnodes + ib];
}

int npl__topo_cpu_index(const npl_topo *t, int os_cpu)
{
    int lo = 0, hi = t->ncpus - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (t->cpus[mid].os == os_cpu)
            return mid;
        if (t->cpus[mid].os < os_cpu)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int npl_topo_cpu_count(const npl_topo *t)
{
    if (!t)
        return npl__fail(EINVAL, "NULL topology");
    int n = 0;
    for (int k = 0; k < t->ncpus; k++)
        n += t->cpus[k].allowed;
    return n;
}

int npl_topo_core_count(const npl_topo *t)
{
    if (!t)
        return npl__fail(EINVAL, "NULL topology");
    unsigned char *seen = calloc((size_t)(t->ncpus > 0 ? t->ncpus : 1), 1);
    if (!seen)
        return npl__fail(ENOMEM, "out of memory");
    int n = 0;
    for (int k = 0; k < t->ncpus; k++) { /* core logical indexes are < the PU count */
        int c = t->cpus[k].core;
        if (t->cpus[k].allowed && c >= 0 && c < t->ncpus && !seen[c]) {
            seen[c] = 1;
            n++;
        }
    }
    free(seen);
    return n;
}

int npl_topo_cpu_node(const npl_topo *t, int cpu)
{
    int k = t ? npl__topo_cpu_index(t, cpu) : -1;
    if (k < 0)
        return npl__fail(EINVAL, "CPU %d does not exist", cpu);
    int n = t->cpus[k].node;
    return n < 0 ? npl__fail(EINVAL, "CPU %d has no node", cpu) : t->nodes[n].os;
}

int npl_topo_node_cpus(const npl_topo *t, int node, int *cpus, int max)
{
    int idx = node_idx(t, node);
    if (idx < 0 || max < 0 || (max > 0 && !cpus))
        return npl__fail(EINVAL, idx < 0 ? "node %d does not exist" : "bad output buffer", node);
    int n = 0;
    for (int k = 0; k < t->ncpus; k++)
        if (t->cpus[k].node == idx && t->cpus[k].allowed) {
            if (n < max)
                cpus[n] = t->cpus[k].os;
            n++;
        }
    return n;
}

int npl_topo_cpuset(const npl_topo *t, int node, struct hwloc_bitmap_s *set)
{
    int idx = node < 0 ? -1 : node_idx(t, node);
    if (!t || !set || node < -1 || (node >= 0 && idx < 0))
        return npl__fail(EINVAL, "npl_topo_cpuset: NULL argument or no node %d", node);
    hwloc_bitmap_zero(set);
    for (int k = 0; k < t->ncpus; k++)
        if (t->cpus[k].allowed && (idx < 0 || t->cpus[k].node == idx) &&
            hwloc_bitmap_set(set, (unsigned)t->cpus[k].os) < 0)
            return npl__fail(ENOMEM, "out of memory");
    return 0;
}

int npl_topo_nodeset(const npl_topo *t, struct hwloc_bitmap_s *set)
{
    if (!t || !set)
        return npl__fail(EINVAL, "npl_topo_nodeset: NULL argument");
    hwloc_bitmap_zero(set);
    for (int i = 0; i < t->nnodes; i++)
        if (npl__topo_node_usable(t, i) && hwloc_bitmap_set(set, (unsigned)t->nodes[i].os) < 0)
            return npl__fail(ENOMEM, "out of memory");
    return 0;
}

/* ---- cache sizes (npl_topo_cache_size): recorded while hwloc's topology is still loaded ---- */
static void record_caches(hwloc_topology_t h, struct npl_topo *t)
{
    memset(t->cache_bytes, 0, sizeof t->cache_bytes);
    int k = 0;
    while (k < t->ncpus && !t->cpus[k].allowed)
        k++;
    hwloc_obj_t pu = k < t->ncpus ? hwloc_get_pu_obj_by_os_index(h, (unsigned)t->cpus[k].os) : NULL;
    for (hwloc_obj_t o = pu ? pu->parent : NULL; o; o = o->parent) {
        if (!hwloc_obj_type_is_cache(o->type) || !o->attr)
            continue;
        if (o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
            continue;
        unsigned lvl = o->attr->cache.depth;
        if (lvl >= 1 && lvl <= 5 && !t->cache_bytes[lvl])
            t->cache_bytes[lvl] = o->attr->cache.size;
    }
}

int npl_topo_cache_size(const npl_topo *topo, int level, uint64_t *bytes)
{
    if (level < 1 || level > 5 || !bytes)
        return npl__fail(EINVAL, "npl_topo_cache_size: bad level %d or NULL bytes", level);
    const npl_topo *t = topo ? topo : npl_topo_self();
    if (!t)
        return -1;
    if (!t->cache_bytes[level])
        return npl__fail(ENOENT, "no level-%d data cache", level);
    *bytes = t->cache_bytes[level];
    return 0;
}
