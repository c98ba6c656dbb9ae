/* SPDX-License-Identifier: BSD-3-Clause */
/* notify.c - under `numaplace profile`, the library tells the interposer about its own arrays
 * (npl_alloc_array, npl_alloc_auto): the interposer exports numaplace_preload_track and
 * numaplace_preload_untrack (preload/profile.c); without it they are not found and nothing
 * happens. The interposer's own copy of the library finds them too, and they ignore its calls. */
#define _GNU_SOURCE
#include "arrays/arrays.h"
#include "profile/profile.h"

#include <dlfcn.h>
#include <pthread.h>

typedef void (*track_fn)(void *base, size_t bytes, const void *site, int trap);
typedef void (*untrack_fn)(void *base);
static track_fn tracker;
static untrack_fn untracker;
static pthread_once_t looked = PTHREAD_ONCE_INIT;

static void untrack_hook(void *base)
{
    if (untracker)
        untracker(base);
}

/* once per process: the interposer's entry points, if it is there */
static void look(void)
{
    track_fn t = (track_fn)dlsym(RTLD_DEFAULT, "numaplace_preload_track");
    untrack_fn u = (untrack_fn)dlsym(RTLD_DEFAULT, "numaplace_preload_untrack");
    untracker = u;
    if (t && u)
        npl__array_set_free_hook(untrack_hook);
    tracker = t && u ? t : NULL;
}

void npl__profile_notify(void *base, size_t bytes, const void *site, int trap)
{
    pthread_once(&looked, look); /* threads allocating at once all see it done */
    if (tracker)
        tracker(base, bytes, npl__site_caller(site), trap);
}
