/* SPDX-License-Identifier: BSD-3-Clause */
/* defaults/defaults.h - the ONE outer layer of the library (not installed): the environment
 * (NUMAPLACE_POLICY, OMP_NUM_THREADS) and the platform config file (config.c) become plans
 * (defaults.c), and every public function that takes a policy instead of a plan lives here as a
 * shorthand: the policy resolved on this process's topology with the defaults read at that
 * moment, then the *_planned function of the layer below. Nothing below reads the environment
 * or the config file. */
#ifndef NPL_DEFAULTS_H
#define NPL_DEFAULTS_H

#include "arrays/arrays.h"
#include "profile/profile.h"

int npl__default_policy(npl_policy **out); /* NUMAPLACE_POLICY, [policy] default, first_touch */
int npl__default_threads(void);            /* OMP_NUM_THREADS, or 0 (the topology's cores) */
/* pol (NULL: the default policy) resolved on this process's topology with those defaults */
int npl__plan_default(npl_plan **out, const npl_policy *pol);
/* npl_alloc_array for an allocation made at site (a return address): the site is what
 * `numaplace profile` records for the array */
void *npl__alloc_array_at(const npl_shape *shape, const npl_policy *pol, unsigned flags,
                          const void *site);

#endif
