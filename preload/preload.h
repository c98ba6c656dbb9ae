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

/* Create a thread that pins itself as thread n of strategy (npl_pin_self) before start(arg)
 * runs, through real_create (pthread_create, or the next one in an interposer). Returns 0 or a
 * pthread error number. Written to move into src/threads.c as the library's only trampoline:
 * npl_pthread_create() would become
 *     n = atomic_fetch_add(&next_thread, 1);
 *     rc = npl__pthread_create_pinned(pthread_create, th, attr, start, arg, strategy, n);
 *     return rc ? npl__fail(rc, "pthread_create failed") : 0; */
typedef int (*npl__create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n);
#endif
