/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_alloc.c - the program's OpenMP allocators under `numaplace run`: omp_init_allocator with
 * an omp_atk_partition trait gives an allocator whose memory numaplace places as the trait says
 * (src/defaults/omp_alloc.c). Interposed: the omp_* API (C, and gfortran's omp_init_allocator_
 * and omp_destroy_allocator_, whose omp_alloc and omp_free are the C ones), the allocate
 * clause's entries (libgomp's GOMP_alloc / GOMP_free, libomp's __kmpc_*). Every call that
 * names another allocator, or a pointer numaplace did not give, goes to the runtime's own
 * function (the next definition: the runtime's). An allocation's site is its caller in the
 * program, as for malloc. */
#define _GNU_SOURCE
#include "defaults/defaults.h"

#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

#define SITE __builtin_return_address(0)
#define REAL(type, name) ((type)dlsym(RTLD_NEXT, name))

/* a call numaplace serves: the allocator places, or (ptr != NULL) ptr is one of its arrays */
static int ours(uintptr_t handle)
{
    int saved = errno, r = npl_omp_allocator_partition(handle) > 0;
    errno = saved;
    return r;
}

EXPORT uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const npl_omp_trait *traits)
{
    return npl_omp_init_allocator(memspace, ntraits, traits);
}

/* gfortran's: arguments by reference (libgomp's fortran.c), the 8-byte-integer form too */
EXPORT uintptr_t omp_init_allocator_(const uintptr_t *memspace, const int32_t *ntraits,
                                     const npl_omp_trait *traits)
{
    return npl_omp_init_allocator(*memspace, (int)*ntraits, traits);
}

EXPORT uintptr_t omp_init_allocator_8_(const uintptr_t *memspace, const int64_t *ntraits,
                                       const npl_omp_trait *traits)
{
    return npl_omp_init_allocator(*memspace, (int)*ntraits, traits);
}

EXPORT void omp_destroy_allocator(uintptr_t handle) { npl_omp_destroy_allocator(handle); }

EXPORT void omp_destroy_allocator_(const uintptr_t *handle) { npl_omp_destroy_allocator(*handle); }

EXPORT void *omp_alloc(size_t size, uintptr_t handle)
{
    return npl__omp_alloc_at(1, size, handle, 0, SITE);
}

EXPORT void *omp_aligned_alloc(size_t align, size_t size, uintptr_t handle)
{
    return npl__omp_alloc_at(align, size, handle, 0, SITE);
}

EXPORT void *omp_calloc(size_t n, size_t size, uintptr_t handle)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return npl__omp_alloc_at(1, n * size, handle, 1, SITE);
}

EXPORT void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t handle)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (!ours(handle)) {
        void *(*real)(size_t, size_t, size_t, uintptr_t) =
            REAL(void *(*)(size_t, size_t, size_t, uintptr_t), "omp_aligned_calloc");
        return real ? real(align, n, size, handle) : NULL;
    }
    return npl__omp_alloc_at(align, n * size, handle, 1, SITE);
}

EXPORT void *omp_realloc(void *ptr, size_t size, uintptr_t handle, uintptr_t free_handle)
{
    return npl__omp_realloc_at(ptr, size, handle, free_handle, SITE);
}

EXPORT void omp_free(void *ptr, uintptr_t handle) { npl__omp_free(ptr, handle); }

/* the allocate clause: libgomp's entries (libomp has them too) */
EXPORT void *GOMP_alloc(size_t align, size_t size, uintptr_t handle)
{
    if (!ours(handle)) {
        void *(*real)(size_t, size_t, uintptr_t) =
            REAL(void *(*)(size_t, size_t, uintptr_t), "GOMP_alloc");
        return real ? real(align, size, handle) : NULL;
    }
    return npl__omp_alloc_at(align, size, handle, 0, SITE);
}

EXPORT void GOMP_free(void *ptr, uintptr_t handle) { npl__omp_free(ptr, handle); }

/* ... and libomp's (the global thread id first) */
EXPORT void *__kmpc_alloc(int gtid, size_t size, uintptr_t handle)
{
    if (!ours(handle)) {
        void *(*real)(int, size_t, uintptr_t) = REAL(void *(*)(int, size_t, uintptr_t),
                                                     "__kmpc_alloc");
        return real ? real(gtid, size, handle) : NULL;
    }
    return npl__omp_alloc_at(1, size, handle, 0, SITE);
}

EXPORT void *__kmpc_aligned_alloc(int gtid, size_t align, size_t size, uintptr_t handle)
{
    if (!ours(handle)) {
        void *(*real)(int, size_t, size_t, uintptr_t) =
            REAL(void *(*)(int, size_t, size_t, uintptr_t), "__kmpc_aligned_alloc");
        return real ? real(gtid, align, size, handle) : NULL;
    }
    return npl__omp_alloc_at(align, size, handle, 0, SITE);
}

EXPORT void __kmpc_free(int gtid, void *ptr, uintptr_t handle)
{
    (void)gtid;
    npl__omp_free(ptr, handle);
}
