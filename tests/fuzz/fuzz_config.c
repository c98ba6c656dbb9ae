/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the platform config-file parser (npl_config_parse, src/config.c).
 * Any bytes: no crash, no sanitizer report; a rejection is EINVAL/EFBIG/ENOMEM with a message
 * naming the file; an accepted config formats to text that parses again to the same text, and
 * its accessors (get, list, factors, pin_for) run on it. */
#include <errno.h>
#include <numaplace.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npl_config *c = NULL;
    if (npl_config_parse(&c, (const char *)data, size, "fuzz.conf") < 0) {
        if (errno != EINVAL && errno != EFBIG && errno != ENOMEM)
            abort(); /* an undocumented errno */
        if (!strstr(npl_last_error(), "fuzz.conf"))
            abort(); /* errors name the file */
        return 0;
    }
    int need = npl_config_format(c, NULL, 0);
    if (need < 0)
        abort();
    char *t1 = malloc((size_t)need + 1), *t2 = malloc((size_t)need + 1);
    if (npl_config_format(c, t1, (size_t)need + 1) != need)
        abort();
    npl_config *d = NULL;
    if (npl_config_parse(&d, t1, (size_t)need, "formatted") < 0)
        abort(); /* the formatted text must parse again */
    if (npl_config_format(d, t2, (size_t)need + 1) != need || memcmp(t1, t2, (size_t)need))
        abort(); /* and be stable */
    int list[64], nodes[64];
    static double lat[64 * 64], bw[64 * 64];
    npl_config_list(c, "machine", "nodes", list, 64);
    npl_config_list(c, "machine", "cpus", list, 64);
    npl_config_factors(c, nodes, lat, bw, 64);
    const char *dflt = npl_config_get(c, "policy", "default");
    npl_policy *p = NULL;
    if (dflt && npl_policy_parse(&p, dflt) < 0)
        abort(); /* validated when parsed */
    char strat[64];
    npl_config_pin_for(c, p, strat, sizeof strat);
    npl_policy_free(p);
    npl_config_free(d);
    npl_config_free(c);
    free(t1);
    free(t2);
    return 0;
}
