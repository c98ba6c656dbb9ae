/* preload.h - what the parts of libnumaplace_preload.so share (all hidden). */
#ifndef NPL_PRELOAD_H
#define NPL_PRELOAD_H
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

/* the calling thread is inside numaplace: its allocations and threads are not intercepted */
void npl__preload_enter(void);
void npl__preload_leave(void);
/* NUMAPLACE_NEXT_TOUCH is on (large blocks and static data are registered) */
int npl__preload_next_touch(void);
/* the page-aligned inside of the executable's writable segments of at least threshold bytes */
int npl__preload_static_ranges(uintptr_t *lo, uintptr_t *hi, size_t threshold);

/* signals.c: a thread about to be created inherits its creator's view of SIGSEGV/SIGBUS blocks:
 * start/arg are wrapped when there is one to carry; the returned block is freed by the new thread,
 * or by the caller (free) if the thread is not created. NULL: nothing wrapped. */
void *npl__preload_signals_wrap(void *(**start)(void *), void **arg);

#endif
