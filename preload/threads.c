/* SPDX-License-Identifier: BSD-3-Clause */
/* threads.c - NUMAPLACE_PIN=compact|scatter|LIST: every thread the program creates with
 * pthread_create runs as thread n on the n-th CPU of the strategy, n counting creation order from
 * 1 (the main thread, 0, is pinned by the constructor: init.c). Threads the library itself
 * creates are left alone. Under `numaplace profile` every thread is numbered that way (pinned or
 * not): the sampler records the number with each access, and each pthread barrier's rounds (its
 * time windows end at them). */
#define _GNU_SOURCE
#include "topology/topology.h"

#include "preload.h"
#include "profile/profile.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static int next_thread = 1;

/* profiling: each thread knows its number (the sampler records it with every access) */
struct numbered {
    void *(*start)(void *);
    void *arg;
    int n;
};
static void thread_ended(void *unused)
{
    (void)unused;
    npl__sampler_thread_end();
}
static void *numbered_start(void *p)
{
    struct numbered c = *(struct numbered *)p;
    free(p);
    npl__sampler_set_thread(c.n);
    npl__sampler_thread_begin();
    void *r;
    pthread_cleanup_push(thread_ended, NULL); /* returned, pthread_exit or cancelled */
    r = c.start(c.arg);
    pthread_cleanup_pop(1);
    return r;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
    if (!npl__real_pthread_create)
        npl__preload_resolve();
    void *view = npl__preload_signals_wrap(&start, &arg); /* the creator's SIGSEGV/SIGBUS mask */
    int profiling = !npl__preload_inside() && npl__preload_profiling();
    int rc;
    if (npl__preload_inside() || (!npl__preload.pin && !profiling)) {
        rc = npl__real_pthread_create(th, attr, start, arg);
    } else {
        /* under numaplace profile the sampler numbers threads (the same numbers pin them) */
        int n = profiling ? npl__sampler_next_thread()
                          : __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
        struct numbered *c = profiling ? malloc(sizeof *c) : NULL;
        if (c) {
            *c = (struct numbered){start, arg, n};
            start = numbered_start;
            arg = c;
        }
        /* the library's one trampoline (src/topology/threads.c) */
        rc = npl__preload.pin ? npl__pthread_create_pinned(npl__real_pthread_create, th, attr,
                                                           start, arg, npl__preload.pin, n)
                              : npl__real_pthread_create(th, attr, start, arg);
        if (rc && c)
            free(c);
    }
    if (rc && view)
        free(view);
    return rc;
}

/* profiling: a round of a pthread barrier ended (reported once, by the thread the barrier made
 * its serial thread): the sampler's time windows end at rounds and count them */
EXPORT int pthread_barrier_wait(pthread_barrier_t *barrier)
{
    if (!npl__real_pthread_barrier_wait)
        npl__preload_resolve();
    if (!npl__real_pthread_barrier_wait)
        return EINVAL;
    int rc = npl__real_pthread_barrier_wait(barrier);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD && !npl__preload_inside() && npl__preload_profiling())
        npl__sampler_barrier_round();
    return rc;
}
