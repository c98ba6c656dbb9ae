/* SPDX-License-Identifier: BSD-3-Clause */
/* sampler_internal.h - what the sampler's two files share: sampler.c (the pages, the faults,
 * the rounds) asks sampler_phases.c (the threads' numbers and the phase clock) which thread and
 * which phase a sample belongs to. Internal to src/profile/. */
#ifndef NPL_SAMPLER_INTERNAL_H
#define NPL_SAMPLER_INTERNAL_H

#include "profile/profile.h"

#include <stdint.h>

struct npl_raw *npl__sampler_raw(void);   /* the shared raw profile, NULL when not profiling */
void npl__sampler_publish_thread(void);   /* this thread's number with its kernel id */
uint32_t npl__sampler_my_thread(void);    /* this thread's number (async-signal-safe) */
/* the phase now, and whether it is the serial phase (async-signal-safe) */
uint32_t npl__sampler_phase_now(int *serial);
/* the phase becomes ph (NPL_RAW_NONE: stays); the time since the last count goes to the phase
 * that was current */
void npl__sampler_set_phase(uint32_t ph);
/* a sampler round: the phase's time counted so far, and a new time window when one is due */
void npl__sampler_phase_round(void);

#endif
