/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/omp.h
 * @brief numaplace/omp.h - OpenMP helpers (header only: compiled with the caller's OpenMP flags).
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
#endif
