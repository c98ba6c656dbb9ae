/* regions.c - OpenMP parallel regions, seen from the interposer: ONE hook (npl__region_begin /
 * npl__region_end) that the profile's phases and next-touch's re-arming both use.
 *
 * Two sources feed it:
 *  - LLVM's libomp: the OMPT tool in ompt.c (parallel_begin/end, implicit_task for the thread's
 *    number in its team). clang programs call __kmpc_fork_call and are seen only there.
 *  - GCC's libgomp, which has no OMPT: the GOMP_parallel* entry points (libgomp's ABI, what gcc
 *    and gfortran compile `parallel` to) are wrapped here: the hook runs on the encountering
 *    thread before and after the real call, and the region's body runs through a trampoline that
 *    records omp_get_thread_num() of each thread of the team before calling the real body.
 *    libomp exports the same entry points for gcc-built programs; when its OMPT tool has
 *    started, these wrappers only pass through (the tool sees those regions itself).
 * A region is named by its code address: the return address into the program of the call that
 * starts it (OMPT's codeptr_ra is the same address for gcc-built programs on libomp). Only the
 * outermost region of a nest changes the phase. */
#define _GNU_SOURCE
#include "profile/profile.h"
#include "preload.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "numaplace/migrate.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define MAX_REGIONS 1024

static _Atomic int ompt_active;
/* the program's call into a GOMP_* entry point, for libomp's OMPT callbacks that it runs
 * meanwhile: their codeptr_ra is then the return address into this wrapper */
static TLS const void *gomp_site;
const void *npl__regions_gomp_site(void) { return gomp_site; }
void npl__regions_ompt_started(void) { atomic_store(&ompt_active, 1); }
int npl__regions_ompt_is_active(void) { return atomic_load(&ompt_active); }

/* ---- transparent next-touch: re-arm everything at a region from a new code address ---- */
static const void *last_region;
static const void *seen[MAX_REGIONS];
static int nseen;
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;

static void next_touch_region(const void *code)
{
    pthread_mutex_lock(&region_lock);
    int new_region = code != last_region;
    last_region = code;
    for (int i = 0; new_region && i < nseen; i++)
        if (seen[i] == code)
            new_region = 0;
    if (new_region) {
        if (nseen < MAX_REGIONS)
            seen[nseen++] = code;
        npl__preload_enter();
        if (npl_next_touch_rearm_all() < 0)
            npl__debug("regions: cannot re-arm: %s", npl_last_error());
        else
            npl__debug("regions: parallel region %p is new: registered ranges re-armed", code);
        npl__preload_leave();
    }
    pthread_mutex_unlock(&region_lock);
}

static _Atomic int depth, seen_any;
int npl__regions_seen(void) { return atomic_load(&seen_any); }

void npl__region_begin(const void *code)
{
    atomic_store(&seen_any, 1);
    if (atomic_fetch_add(&depth, 1) > 0)
        return; /* a nested region: the outermost one names the phase */
    if (npl__sampler_active())
        npl__sampler_region_begin(code);
    if (npl__preload_apply_active())
        npl__preload_apply_region(code);
    else if (npl__preload_next_touch())
        next_touch_region(code);
}

void npl__region_end(void)
{
    if (atomic_fetch_sub(&depth, 1) != 1)
        return;
    if (npl__sampler_active())
        npl__sampler_region_end();
}

void npl__region_thread(int num) { npl__sampler_set_omp_thread(num); }

/* the hooks are wanted at all (profile, next-touch, run --profile) */
static int wanted(void)
{
    return !atomic_load(&ompt_active) &&
           (npl__preload_profiling() || npl__preload_next_touch() || npl__preload_apply_active());
}

/* ---- libgomp's entry points ---- */
typedef void (*body_fn)(void *);
struct body {
    body_fn fn;
    void *data;
};
static int (*omp_thread_num)(void);

static void *next(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        npl__preload_enter();
        f = dlsym(RTLD_NEXT, name);
        if (!omp_thread_num)
            omp_thread_num = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num");
        npl__preload_leave();
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    if (!f)
        abort(); /* the program calls libgomp, so libgomp is loaded: cannot happen */
    return f;
}

static void run_body(void *p)
{
    struct body *b = p;
    if (omp_thread_num)
        npl__region_thread(omp_thread_num());
    b->fn(b->data);
}

#define REAL(type, name)                                                                           \
    static void *cache_##name;                                                                     \
    type real = (type)next(&cache_##name, #name)

/* run CALL (which passes `fn, data` on as `use_fn, use_data`) between the hooks */
#define AROUND(call)                                                                               \
    body_fn use_fn = fn;                                                                           \
    void *use_data = data;                                                                         \
    struct body b = {fn, data};                                                                    \
    int hooked = wanted();                                                                         \
    const void *outer_site = gomp_site;                                                            \
    gomp_site = __builtin_return_address(0);                                                       \
    if (hooked) {                                                                                  \
        use_fn = run_body;                                                                         \
        use_data = &b;                                                                             \
        npl__region_begin(__builtin_return_address(0));                                            \
    }                                                                                              \
    call;                                                                                          \
    gomp_site = outer_site;                                                                        \
    if (hooked)                                                                                    \
        npl__region_end();

typedef void (*par_fn)(body_fn, void *, unsigned, unsigned);
EXPORT void GOMP_parallel(body_fn fn, void *data, unsigned n, unsigned flags)
{
    REAL(par_fn, GOMP_parallel);
    AROUND(real(use_fn, use_data, n, flags))
}

typedef unsigned (*red_fn)(body_fn, void *, unsigned, unsigned);
EXPORT unsigned GOMP_parallel_reductions(body_fn fn, void *data, unsigned n, unsigned flags)
{
    REAL(red_fn, GOMP_parallel_reductions);
    unsigned r;
    AROUND(r = real(use_fn, use_data, n, flags))
    return r;
}

typedef void (*loop_fn)(body_fn, void *, unsigned, long, long, long, long, unsigned);
#define LOOP(name)                                                                                 \
    EXPORT void name(body_fn fn, void *data, unsigned n, long start, long end, long incr,          \
                     long chunk, unsigned flags)                                                   \
    {                                                                                              \
        REAL(loop_fn, name);                                                                       \
        AROUND(real(use_fn, use_data, n, start, end, incr, chunk, flags))                          \
    }
LOOP(GOMP_parallel_loop_static)
LOOP(GOMP_parallel_loop_dynamic)
LOOP(GOMP_parallel_loop_guided)
LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
LOOP(GOMP_parallel_loop_nonmonotonic_guided)

typedef void (*rloop_fn)(body_fn, void *, unsigned, long, long, long, unsigned);
#define RLOOP(name)                                                                                \
    EXPORT void name(body_fn fn, void *data, unsigned n, long start, long end, long incr,          \
                     unsigned flags)                                                               \
    {                                                                                              \
        REAL(rloop_fn, name);                                                                      \
        AROUND(real(use_fn, use_data, n, start, end, incr, flags))                                 \
    }
RLOOP(GOMP_parallel_loop_runtime)
RLOOP(GOMP_parallel_loop_nonmonotonic_runtime)
RLOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

typedef void (*sec_fn)(body_fn, void *, unsigned, unsigned, unsigned);
EXPORT void GOMP_parallel_sections(body_fn fn, void *data, unsigned n, unsigned count,
                                   unsigned flags)
{
    REAL(sec_fn, GOMP_parallel_sections);
    AROUND(real(use_fn, use_data, n, count, flags))
}

/* The old split form (GCC before 4.9): GOMP_parallel*_start(fn, data, ...); fn(data) on the
 * master; GOMP_parallel_end(). The body record lives until the end, one per nesting level. */
#define START_DEPTH 8
static TLS struct body starts[START_DEPTH];
static TLS int nstarts, starts_hooked[START_DEPTH];

#define START(call)                                                                                \
    body_fn use_fn = fn;                                                                           \
    void *use_data = data;                                                                         \
    int level = nstarts++, hooked = level < START_DEPTH && wanted();                               \
    if (level < START_DEPTH)                                                                       \
        starts_hooked[level] = hooked;                                                             \
    if (hooked) {                                                                                  \
        starts[level] = (struct body){fn, data};                                                   \
        use_fn = run_body;                                                                         \
        use_data = &starts[level];                                                                 \
        npl__region_begin(__builtin_return_address(0));                                            \
    }                                                                                              \
    const void *outer_site = gomp_site;                                                            \
    gomp_site = __builtin_return_address(0);                                                       \
    call;                                                                                          \
    gomp_site = outer_site;

typedef void (*pstart_fn)(body_fn, void *, unsigned);
EXPORT void GOMP_parallel_start(body_fn fn, void *data, unsigned n)
{
    REAL(pstart_fn, GOMP_parallel_start);
    START(real(use_fn, use_data, n))
}

typedef void (*lstart_fn)(body_fn, void *, unsigned, long, long, long, long);
#define LSTART(name)                                                                               \
    EXPORT void name(body_fn fn, void *data, unsigned n, long start, long end, long incr,          \
                     long chunk)                                                                   \
    {                                                                                              \
        REAL(lstart_fn, name);                                                                     \
        START(real(use_fn, use_data, n, start, end, incr, chunk))                                  \
    }
LSTART(GOMP_parallel_loop_static_start)
LSTART(GOMP_parallel_loop_dynamic_start)
LSTART(GOMP_parallel_loop_guided_start)

typedef void (*rstart_fn)(body_fn, void *, unsigned, long, long, long);
EXPORT void GOMP_parallel_loop_runtime_start(body_fn fn, void *data, unsigned n, long start,
                                             long end, long incr)
{
    REAL(rstart_fn, GOMP_parallel_loop_runtime_start);
    START(real(use_fn, use_data, n, start, end, incr))
}

typedef void (*sstart_fn)(body_fn, void *, unsigned, unsigned);
EXPORT void GOMP_parallel_sections_start(body_fn fn, void *data, unsigned n, unsigned count)
{
    REAL(sstart_fn, GOMP_parallel_sections_start);
    START(real(use_fn, use_data, n, count))
}

typedef void (*end_fn)(void);
EXPORT void GOMP_parallel_end(void)
{
    REAL(end_fn, GOMP_parallel_end);
    real();
    if (nstarts > 0) {
        int level = --nstarts;
        if (level < START_DEPTH && starts_hooked[level])
            npl__region_end();
    }
}
