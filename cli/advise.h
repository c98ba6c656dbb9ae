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
#endif
