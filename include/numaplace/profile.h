/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/profile.h
 * @brief numaplace/profile.h - "auto" placement: each array gets the policy a measured access
 *        profile advises for it.
 *
 * `numaplace profile -- PROG` runs a program, samples which thread touches which part of each
 * large array, and writes a profile (docs/AUTO.md) with an advice per array: a policy, its
 * access pattern, the predicted local fraction and a reason. An array is named in the profile by
 * its site: the object file (path and GNU build-id), the offset of the call that allocated it in
 * that object, and the ordinal of the allocation at that call. A program that calls
 * npl_alloc_auto() gets, on its next runs, the advised policy of the array allocated by that
 * call, at any input size (every advised shape scales with the size), whatever the address
 * randomisation does.
 *
 * Under `numaplace profile` the arrays npl_alloc_auto() (and every npl_alloc_array()) returns
 * are profiled too. Without a profile npl_alloc_auto() is npl_alloc_array() with the default
 * policy. */
/** @defgroup npl_profile Profiles
 *  Per-array policies from a measured access profile (numaplace profile, docs/AUTO.md).
 *  @{ */
#ifndef NUMAPLACE_PROFILE_H
#define NUMAPLACE_PROFILE_H

#include <numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** A loaded profile (opaque): from npl_profile_load(), freed with npl_profile_free(). */
typedef struct npl_profile npl_profile;

/** Load a profile written by `numaplace profile` (format v1, checked strictly: a truncated,
 *  corrupt or foreign file is refused, never half read). It must be a profile of the calling
 *  program: the same GNU build-id when both have one, else the same path.
 *  @return 0 with the profile in *out, or -1 with errno EINVAL (NULL argument; not a profile, a
 *          corrupt or truncated one, or a profile of another program: npl_last_error() says
 *          which and where), EFBIG (larger than 256 MiB), ENOMEM, or the errno of open(2)/read(2)
 *          (ENOENT, EACCES, ...). */
int npl_profile_load(npl_profile **out, const char *path);

/** Free a profile from npl_profile_load() (NULL: nothing). Arrays allocated with it stay. */
void npl_profile_free(npl_profile *p);

/** Allocate an array like npl_alloc_array(), under the policy that profile p advises for the
 *  array allocated by this call: the calling site (the return address of this call, as an offset
 *  in its object) and the ordinal of this call among the calls made there so far. When p has no
 *  array at this site, or p is NULL and the program does not run under
 *  `numaplace run --profile FILE` (whose profile p = NULL stands for), the array gets the default
 *  policy (NUMAPLACE_POLICY, the config file, else first touch). A call made more often than in
 *  the profiled run gets the advice of the last ordinal the profile has there. An explicit
 *  per-chunk map (advice "explicit") holds only at the profiled number of pages; at another, the
 *  array gets the best shape of the array's classification that holds at any size (the default
 *  policy when first touch is best), or, when the array had too few samples of its own and its
 *  map was its call site's, that map scaled to the array's pages (as `numaplace run --profile`). Arrays the profile advises next-touch for are registered for it (npl_next_touch_register()); the program re-arms
 *  them at its phase changes (npl_next_touch_arm()), or `numaplace run --profile` does at the
 *  recorded OpenMP regions. Free with npl_free().
 *  @return the array, or NULL with errno as npl_alloc_array() (EINVAL also when p holds an
 *          advised policy or an explicit map this machine cannot use, e.g. a node it lacks;
 *          nothing is left allocated). */
void *npl_alloc_auto(const npl_profile *p, const npl_shape *shape, unsigned flags);

/** The advice p holds for the array the next npl_alloc_auto() call from `site` would allocate
 *  (site: a return address in the program, as __builtin_return_address(0) gives; ordinal: the
 *  ordinal of that allocation at its site, 0 for the first). policy gets the advised policy
 *  string ("first_touch" when the profile says to leave the array to first touch, "explicit" for
 *  a per-chunk node map), pattern its access pattern ("blocked", "cyclic", "serial",
 *  "shared-read-mostly", "shared-written", "phase-changing", "irregular", "too-few-samples").
 *  Either buffer may be NULL.
 *  @return 0, or -1 with errno EINVAL (NULL profile) or ENOENT (no array of p at that site). */
int npl_profile_advice(const npl_profile *p, const void *site, unsigned long ordinal,
                       char *policy, size_t policy_size, char *pattern, size_t pattern_size);

/** Does p advise replicas for that array (site, ordinal as npl_profile_advice())? A read-mostly
 *  array that several nodes' threads read is advised a spread policy (what npl_alloc_auto() and
 *  `numaplace run --profile` apply) and replicas where the program can hold one copy per node:
 *  npl_replicate() of the array once it is filled, each thread reading npl_replica_local().
 *  @return 1 (replicate), 0 (not), or -1 with errno EINVAL (NULL profile) or ENOENT (no array
 *          of p at that site). */
int npl_profile_replicate(const npl_profile *p, const void *site, unsigned long ordinal);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
/** @} */
