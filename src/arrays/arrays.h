/* SPDX-License-Identifier: BSD-3-Clause */
/* arrays/arrays.h - the library's arrays (not installed): the registry of arrays allocated by
 * numaplace, each with the plans its parts were placed with (array.c), and numag's per-node
 * replicas (replicate.c). Below it: migration/, query/, place/, plan/, topology/, sys/, base/. */
#ifndef NPL_ARRAYS_H
#define NPL_ARRAYS_H

#include "migration/migration.h"
#include "query/query.h"

/* npl_apply_part with a plan: units [first_unit, first_unit+nunits) of array p placed under
 * plan (the whole array: npl_apply_planned) */
int npl__apply_part_planned(void *p, size_t first_unit, size_t nunits, const npl_plan *plan,
                            unsigned flags);

/* hook(base) runs before every npl_free of an array (the profile's tracker, src/profile/) */
void npl__array_set_free_hook(void (*hook)(void *));
/* npl_alloc_planned with the start aligned to align bytes (a power of two; 0: the page) and the
 * internal flag NPL__F_LAZY allowed: then the array is placed lazily (place/place_lazy.c), or not
 * at all (NULL, EOPNOTSUPP: its map needs populated pages, or its runs would add too many
 * mappings), and the caller decides what then */
void *npl__alloc_planned_ex(const npl_shape *shape, const npl_plan *plan, unsigned flags,
                            size_t align);

#endif
