/* SPDX-License-Identifier: BSD-3-Clause */
/* advise.h - the advice table of numaplace advise, also printed by numaplace profile. */
#ifndef NPL_CLI_ADVISE_H
#define NPL_CLI_ADVISE_H
#include "profile/profile.h"

#include <stdio.h>

/* One row per array of p: its site, size, pattern, policy, predicted local fractions and reason
 * (adv[i] for p->arrays[i], adv NULL: the advice p holds; stored[i]: the advice was read from the
 * profile; stored may be NULL); verbose: every evaluated placement under its array. path names
 * the profile in the heading. */
void advise_table(FILE *f, const char *path, const struct npl_profile *p,
                  const struct npl_prof_advice *adv, const int *stored, int verbose);

/* A profile with the advice for every array: the one it stores, else the classifier's. */
struct advice_set {
    struct npl_profile *p;
    struct npl_prof_advice *adv; /* adv[i] for p->arrays[i] */
    int *stored;                 /* stored[i]: adv[i] was read from the profile (the profile's) */
};
/* Load the profile at path and advise every array: 0, or the exit status after one line
 * "numaplace CMD: ..." on stderr (EXIT_USAGE: a bad profile; EXIT_FAILED: the rest). */
int advise_load(const char *cmd, const char *path, struct advice_set *s);
void advise_free(struct advice_set *s);
/* The advice as one HTML section: the profile's header, the table and a per-array bar chart
 * (inline SVG) of the predicted local fraction under the advice, under first touch and, where
 * it differs, under the best placement evaluated. Every string from the profile is escaped. */
void advise_html(FILE *f, const char *path, const struct advice_set *s);
#endif
