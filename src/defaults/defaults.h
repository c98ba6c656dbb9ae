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

#include "numaplace/profile.h"

#include <stddef.h>
#include <stdint.h>

int npl__default_policy(npl_policy **out); /* NUMAPLACE_POLICY, [policy] default, first_touch */
int npl__default_threads(void);            /* OMP_NUM_THREADS, or 0 (the topology's cores) */
/* pol (NULL: the default policy) resolved on this process's topology with those defaults */
int npl__plan_default(npl_plan **out, const npl_policy *pol);
/* npl_alloc_array for an allocation made at site (a return address): the site is what
 * `numaplace profile` records for the array */
void *npl__alloc_array_at(const npl_shape *shape, const npl_policy *pol, unsigned flags,
                          const void *site);
/* npl_alloc_auto for an allocation made at site */
void *npl__alloc_auto_at(const npl_profile *p, const npl_shape *shape, unsigned flags,
                         const void *site);


/* OpenMP allocators whose omp_atk_partition places (omp_alloc.c): the public numaplace/omp.h
 * functions as the library defines them. OpenMP's handles are uintptr_t-sized enums in both
 * runtimes and its traits {int key; uintptr_t value;}: the same ABI without the runtime's omp.h
 * (the library is not built with OpenMP). The values are OpenMP 5.x's, the same in libgomp's and
 * libomp's omp.h. */

typedef struct {
    int key;
    uintptr_t value;
} npl_omp_trait;

enum {
    NPL_OMP_ATK_ALIGNMENT = 2, NPL_OMP_ATK_FALLBACK = 5, NPL_OMP_ATK_FB_DATA = 6,
    NPL_OMP_ATK_PINNED = 7, NPL_OMP_ATK_PARTITION = 8, NPL_OMP_ATK_PART_SIZE_KEY = 14,
    NPL_OMP_DEFAULT_MEM_FB = 11, NPL_OMP_NULL_FB = 12, NPL_OMP_ABORT_FB = 13,
    NPL_OMP_ALLOCATOR_FB = 14,
    NPL_OMP_ENVIRONMENT = 15, NPL_OMP_NEAREST = 16, NPL_OMP_BLOCKED = 17, NPL_OMP_INTERLEAVED = 18,
    NPL_OMP_DEFAULT_MEM_ALLOC = 1, NPL_OMP_CONST_MEM_SPACE = 2
};

#pragma GCC visibility push(default) /* the public API (numaplace/omp.h) */
uintptr_t npl_omp_init_allocator(uintptr_t memspace, int ntraits, const npl_omp_trait *traits);
void npl_omp_destroy_allocator(uintptr_t handle);
int npl_omp_allocator_partition(uintptr_t handle);
void *npl_omp_alloc(size_t size, uintptr_t handle);
void *npl_omp_aligned_alloc(size_t align, size_t size, uintptr_t handle);
void *npl_omp_calloc(size_t n, size_t size, uintptr_t handle);
void *npl_omp_realloc(void *ptr, size_t size, uintptr_t handle, uintptr_t free_handle);
void npl_omp_free(void *ptr, uintptr_t handle);
#pragma GCC visibility pop

/* the interposer's entries (preload/omp_alloc.c): the caller's site given */
int npl__omp_partition_of(uintptr_t memspace, int ntraits, const npl_omp_trait *traits);
void *npl__omp_alloc_at(size_t align, size_t size, uintptr_t handle, int zero, const void *site);
void *npl__omp_realloc_at(void *ptr, size_t size, uintptr_t handle, uintptr_t free_handle,
                          const void *site);
void npl__omp_free(void *ptr, uintptr_t handle);

#endif
