/* preload.h - what the parts of libnumaplace_preload.so share (all hidden). */
#ifndef NPL_PRELOAD_H
#define NPL_PRELOAD_H
#include "numaplace.h"

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

/* the calling thread is inside numaplace: its allocations and threads are not intercepted */
void npl__preload_enter(void);
void npl__preload_leave(void);
int npl__preload_inside(void); /* 1 inside: the interposer's own library calls */
/* NUMAPLACE_NEXT_TOUCH is on (large blocks and static data are registered) */
int npl__preload_next_touch(void);
/* the page-aligned inside of the executable's writable segments of at least threshold bytes */
int npl__preload_static_ranges(uintptr_t *lo, uintptr_t *hi, size_t threshold);
/* one line on the program's stderr (while fd 2 is still it): fmt takes one %s */
void npl__preload_say(const char *fmt, const char *a);

/* ---- OpenMP parallel regions (regions.c; ompt.c feeds it under libomp) ---- */
void npl__region_begin(const void *code);
void npl__region_end(void);
void npl__region_thread(int num); /* this thread's number in its team */
void npl__regions_ompt_started(void);
const void *npl__regions_gomp_site(void);
int npl__regions_seen(void);

/* ---- numaplace profile (profile.c) ---- */
int npl__preload_profile_init(size_t threshold); /* 1: profiling */
int npl__preload_profiling(void);
/* a tracked large block for a caller that returns to ra (NULL: none); its release */
void *npl__preload_profile_map(size_t n, const void *ra);
void npl__preload_profile_unmap(void *p, size_t n);
void npl__preload_profile_exec(int failed); /* before an exec (0), after a failed one (1) */

/* ---- numaplace run --profile (apply.c) ---- */
int npl__preload_apply_init(size_t threshold); /* 1: a profile is applied */
int npl__preload_apply_active(void);
/* a block of n bytes for a caller that returns to ra, under the profile's policy for its site
 * (def when the profile has none); NULL: the caller allocates as usual */
void *npl__preload_apply_alloc(size_t n, const void *ra, const npl_policy *def, unsigned flags);
void npl__preload_apply_free(void *p);
void npl__preload_apply_statics(size_t threshold, const npl_policy *def, unsigned flags);
void npl__preload_apply_region(const void *code);

/* ---- system calls into tracked memory (io.c) ---- */
void npl__preload_io_resolve(void);

#endif
