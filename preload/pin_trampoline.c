/* pin_trampoline.c - the pinning trampoline (thread n pins itself before its start routine).
 * Meant for src/threads.c (npl_pthread_create would call it with pthread_create); it lives here
 * until then so that the preload and the library share one logic. */
#define _GNU_SOURCE
#include "internal.h"
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct npl__trampoline {
    void *(*start)(void *);
    void *arg;
    int n;
    char strategy[256];
};

static void *npl__pinned_start(void *p)
{
    struct npl__trampoline tr = *(struct npl__trampoline *)p;
    free(p);
    if (npl_pin_self(tr.strategy, tr.n) < 0) /* a failure leaves the thread where the OS puts it */
        npl__debug("thread %d not pinned: %s", tr.n, npl_last_error());
    return tr.start(tr.arg);
}

int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n)
{
    struct npl__trampoline *tr = malloc(sizeof *tr);
    if (!tr)
        return EAGAIN;
    tr->start = start;
    tr->arg = arg;
    tr->n = n;
    snprintf(tr->strategy, sizeof tr->strategy, "%s", strategy ? strategy : "compact");
    int rc = real_create(th, attr, npl__pinned_start, tr);
    if (rc)
        free(tr);
    return rc;
}
