/* SPDX-License-Identifier: BSD-3-Clause */
/* run_show.h - what `numaplace run` tells before exec: the oversubscription warning (threads
 * against the CPUs they will use: pinned, bound by the program's own OpenMP variables, or
 * allowed) and, for a statically linked program, what of the placement reaches it, always;
 * with --verbose a likwid-pin-style table (thread -> CPU -> node), the policy, huge pages and
 * next-touch; with --json the same as one JSON object. All on stderr (stdout is the program's). */
#ifndef NPL_RUN_SHOW_H
#define NPL_RUN_SHOW_H
#include <numaplace.h>

struct run_shown {
    const char *prog;
    int dynamic;
    const char *policy;    /* "" none */
    int kernel;            /* the policy is also the process-wide kernel policy */
    const char *threshold; /* NULL: the preload's default, 1 MiB */
    const char *first;     /* --first N, NULL if not given */
    const char *pin;       /* NULL: not pinned */
    const int *order;      /* the pin order, norder CPUs */
    int norder;
    const char *huge;      /* NULL, "thp", "2M" */
    int next_touch;
    int preloaded;         /* the interposer is loaded */
    const npl_topo *topo;
    const struct hwloc_bitmap_s *allowed; /* the CPUs the program starts with */
    const char *cfg_pin_skipped; /* the config's [threads] pin, not applied over the program's own
                                  * OpenMP binding; NULL if none */
    int verbose, json;
};
void run_show(const struct run_shown *r);
#endif
