/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/omp.h
 * @brief numaplace/omp.h - OpenMP helpers: team pinning (header only: compiled with the caller's
 * OpenMP flags) and OpenMP allocators whose partition trait places memory (in libnumaplace).
 * Call npl_omp_pin_team() before any data is touched; the OpenMP runtime keeps its threads,
 * so later parallel regions of the same size run on the same pinned threads. */
/** @defgroup npl_omp OpenMP helpers
 *  Pin an OpenMP team with the strategies of npl_pin_self().
 *  @{ */
#ifndef NUMAPLACE_OMP_H
#define NUMAPLACE_OMP_H

#include <errno.h>
#include <numaplace.h>
#include <omp.h>

/** Pin every thread of a new team: thread n (omp_get_thread_num()) to entry n of the
 *  strategy's CPU order ("compact", "scatter" or a CPU list). Returns 0, or -1 if any thread
 *  failed (errno of the last failure).
 *  @return 0, or -1 with errno as npl_pin_self() (EINVAL, EXDEV, ENOMEM...). */
static inline int npl_omp_pin_team(const char *strategy)
{
    int failed = 0, err = 0;
#pragma omp parallel reduction(+ : failed)
    {
        if (npl_pin_self(strategy, omp_get_thread_num()) < 0) {
            failed++;
#pragma omp critical(npl_omp_pin_err)
            err = errno;
        }
    }
    if (failed) {
        errno = err;
        return -1;
    }
    return 0;
}

/** @} */

/** @defgroup npl_omp_alloc OpenMP allocators that place
 *  OpenMP's own allocator API with the omp_atk_partition trait honoured (no runtime does:
 *  libgomp ignores `blocked`, `interleaved` and libomp's partitions need memkind). The same
 *  calls as omp_init_allocator() ... omp_free(), with the same arguments; under
 *  `numaplace run` the program's own omp_* calls and `allocate` clauses get this behaviour
 *  without being changed (docs/RUN.md). An allocator made with omp_atk_partition
 *  - `omp_atv_blocked`: equal blocks, block k on the k-th node of the CPUs this process may use
 *    (the team's nodes; `cyclic_block:pages=B@local`),
 *  - `omp_atv_interleaved`: page by page over those nodes (`cyclic@local`),
 *  - `omp_atv_nearest`: on the node of the thread that allocates (`bind_all:NODE`),
 *  - `omp_atv_environment`: numaplace's choice for the call site: the advice of the profile
 *    that `numaplace run --profile` (NUMAPLACE_PROFILE) applies, else NUMAPLACE_POLICY / the
 *    config file's default (npl_alloc_auto()),
 *  in the default, large-capacity or constant memory space, gives page-aligned, zero-filled
 *  memory placed before the call returns. The other traits are the runtime's to validate and are
 *  kept: alignment, pinned (mlock), fallback (default_mem_fb: the runtime's default allocator,
 *  unplaced; null_fb: NULL; abort_fb: abort(); allocator_fb: fb_data's). pool_size is not
 *  enforced for placed memory. OpenMP 6.0's omp_atk_part_size (NPL_OMP_ATK_PART_SIZE where
 *  omp.h lacks it) gives `interleaved` parts of that many bytes, rounded up to whole pages,
 *  round-robin over the nodes (other partitions keep it, validated: a positive size); alone it
 *  implies the default partition, `environment`. OpenMP 6.0's user partitioners
 *  (omp_atk_partitioner, omp_init_mempartitioner) are not provided. Every other allocator, and
 *  every pointer numaplace did not give, goes to the runtime. Thread-safe. The runtime must be
 *  loaded (the program is built with OpenMP); without one, npl_omp_init_allocator() returns
 *  omp_null_allocator with errno ENOSYS.
 *  @{ */

/** OpenMP 6.0's omp_atk_part_size key (its value in the 6.0 specification), for an omp.h that
 *  lacks it: `{(omp_alloctrait_key_t)NPL_OMP_ATK_PART_SIZE, bytes}`. */
#define NPL_OMP_ATK_PART_SIZE 14

#ifdef __cplusplus
extern "C" {
#endif
/** omp_init_allocator(), the partition trait honoured.
 *  @return the allocator, or omp_null_allocator: the runtime refused the traits, errno ENOSYS
 *          (no OpenMP runtime) or ENOMEM (more than 256 placing allocators at once). */
omp_allocator_handle_t npl_omp_init_allocator(omp_memspace_handle_t memspace, int ntraits,
                                              const omp_alloctrait_t traits[]);
/** omp_destroy_allocator(). Arrays still allocated from it stay valid until freed. */
void npl_omp_destroy_allocator(omp_allocator_handle_t allocator);
/** The capability probe: the partition an allocator places by (omp_atv_blocked ...), the
 *  default allocator's for omp_null_allocator.
 *  @return the omp_atv_* value, or -1 with errno ENOENT (an allocator that does not place). */
int npl_omp_allocator_partition(omp_allocator_handle_t allocator);
/** omp_alloc(). @return the memory, or what the fallback trait says (NULL possible). */
void *npl_omp_alloc(size_t size, omp_allocator_handle_t allocator);
/** omp_aligned_alloc() (alignment a power of two). */
void *npl_omp_aligned_alloc(size_t alignment, size_t size, omp_allocator_handle_t allocator);
/** omp_calloc() (NULL with errno EOVERFLOW when nmemb x size overflows). */
void *npl_omp_calloc(size_t nmemb, size_t size, omp_allocator_handle_t allocator);
/** omp_realloc(): a placing allocator's memory is moved into a new placed array (the contents
 *  up to the smaller size kept); on failure NULL and ptr stays valid. */
void *npl_omp_realloc(void *ptr, size_t size, omp_allocator_handle_t allocator,
                      omp_allocator_handle_t free_allocator);
/** omp_free(). */
void npl_omp_free(void *ptr, omp_allocator_handle_t allocator);
#ifdef __cplusplus
}
#endif

/** @} */
#endif
