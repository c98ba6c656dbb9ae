/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the CPU/node list parser behind npl_topo_restrict() and npl_pin_order()
 * ("0-3,8", "list:...", "compact", "scatter"). Input: CPU list, a newline, node list.
 * Invariants: a failure leaves the topology as it was; a success only removes CPUs/nodes; a pin
 * order names only allowed CPUs of the machine. */
#include <numaplace.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DESC "numa:4(indexes=0,2,4,6) core:2 pu:1" /* CPUs 0..7, nodes 0,2,4,6 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npl_topo *t;
    if (npl_topo_load_synthetic(&t, DESC) < 0)
        abort();
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    char *nl = strchr(s, '\n');
    const char *cpus = s, *nodes = NULL;
    if (nl) {
        *nl = 0;
        nodes = nl + 1;
    }
    int order[64];
    int n = npl_pin_order(t, s, order, 64);
    if (n > 64 && strncmp(s, "list:", 5) && (s[0] < '0' || s[0] > '9'))
        abort(); /* compact/scatter: at most the 8 CPUs */
    for (int i = 0; i < n && i < 64; i++)
        if (order[i] < 0 || order[i] > 7)
            abort();
    int c0 = npl_topo_cpu_count(t), n0 = npl_topo_node_count(t, 0);
    int rc = npl_topo_restrict(t, cpus[0] ? cpus : NULL, nodes);
    int c1 = npl_topo_cpu_count(t), n1 = npl_topo_node_count(t, 0);
    if (rc < 0 ? (c1 != c0 || n1 != n0) : (c1 > c0 || n1 > n0))
        abort();
    npl_topo_destroy(t);
    free(s);
    return 0;
}
