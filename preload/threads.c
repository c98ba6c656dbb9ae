/* threads.c - NUMAPLACE_PIN=compact|scatter|LIST: every thread the program creates with
 * pthread_create runs as thread n on the n-th CPU of the strategy, n counting creation order from
 * 1 (the main thread, 0, is pinned by the constructor: init.c). Threads the library itself
 * creates are left alone. */
#define _GNU_SOURCE
#include "topology/topology.h"

#include "preload.h"

#include <pthread.h>
#include <stdlib.h>

static int next_thread = 1;

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
    if (!npl__real_pthread_create)
        npl__preload_resolve();
    void *view = npl__preload_signals_wrap(&start, &arg); /* the creator's SIGSEGV/SIGBUS mask */
    int rc;
    if (npl__preload_inside() || !npl__preload.pin) {
        rc = npl__real_pthread_create(th, attr, start, arg);
    } else {
        int n = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
        /* the library's one trampoline (src/topology/threads.c) */
        rc = npl__pthread_create_pinned(npl__real_pthread_create, th, attr, start, arg,
                                        npl__preload.pin, n);
    }
    if (rc && view)
        free(view);
    return rc;
}
