/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the reading of an OpenMP program's own binding variables by `numaplace run`
 * (cli/omp_binding.c, compiled in here). Input: OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY and
 * KMP_AFFINITY on four lines (an empty line: not set). Machine: a synthetic hwloc topology of
 * 2 packages x 2 cores x 2 PUs, of which the process may use PUs 0-5.
 * Invariants: the count is the weight of the set returned, at least 1, and the set lies inside
 * the allowed CPUs; nothing crashes, hangs or grows without bound (CPU ids and place counts are
 * capped). */
#include "../../cli/omp_binding.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hwloc_topology_t topo;
    static hwloc_bitmap_t allowed;
    if (!topo) {
        if (hwloc_topology_init(&topo) < 0 ||
            hwloc_topology_set_synthetic(topo, "pack:2 numa:1 l3:1 core:2 pu:2") < 0 ||
            hwloc_topology_load(topo) < 0)
            abort();
        allowed = hwloc_bitmap_alloc();
        hwloc_bitmap_set_range(allowed, 0, 5);
    }
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    const char *field[4] = {NULL, NULL, NULL, NULL};
    char *p = s;
    for (int i = 0; i < 4 && p; i++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        field[i] = *p ? p : NULL;
        p = nl ? nl + 1 : NULL;
    }
    struct omp_binding b = {field[0], field[1], field[2], field[3]};
    hwloc_bitmap_t out = hwloc_bitmap_alloc();
    int n = omp_binding_cpus(&b, allowed, topo, out);
    if (n < 1 || n != hwloc_bitmap_weight(out) || !hwloc_bitmap_isincluded(out, allowed))
        abort();
    char desc[64];
    omp_binding_describe(&b, desc, sizeof desc); /* cut to the buffer */
    hwloc_bitmap_free(out);
    free(s);
    return 0;
}
