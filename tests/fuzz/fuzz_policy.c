/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the policy-string parser, its canonical format (must parse again to the same
 * string), and the pure map of every accepted policy on a synthetic 4-node machine. */
#include <numaplace.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static npl_topo *topo;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!topo && npl_topo_load_synthetic(&topo, "numa:4(indexes=0,2,4,6) core:2 pu:1") < 0)
        abort();
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    npl_policy *p;
    if (npl_policy_parse(&p, s) == 0) {
        char buf[8192], buf2[8192];
        int n = npl_policy_format(p, buf, sizeof buf);
        npl_policy *q;
        if (n < 0 || (size_t)n >= sizeof buf || npl_policy_parse(&q, buf) != 0)
            abort(); /* the canonical string must parse */
        npl_policy_format(q, buf2, sizeof buf2);
        if (strcmp(buf, buf2))
            abort(); /* and be stable */
        int nodes[64];
        npl_shape shape = {8, 2, {16, 512, 0}, NPL_ROW_MAJOR};
        if (npl_policy_map(p, topo, &shape, 16 * 512 * 8, 4096, 0, 16, nodes) == 0) /* may fail */
            for (int i = 0; i < 16; i++)
                if (nodes[i] < -1 || nodes[i] > 6 || (nodes[i] >= 0 && nodes[i] % 2))
                    abort(); /* only the machine's nodes 0,2,4,6 */
        npl_policy_free(q);
        npl_policy_free(p);
    }
    free(s);
    return 0;
}
