/* regions.c - the one OpenMP region-entry hook of libnumaplace_preload.so (preload.h:
 * npl__regions_subscribe). Every parallel region the program starts is reported once, on the
 * encountering thread, before its team starts, with its code address and entry counters; the
 * transparent next-touch mode (rearm.c) and the profiler's phases use it. Two sources, one per
 * runtime ABI, so that the program keeps its own runtime:
 *
 *  - GCC's libgomp has no OMPT. Its region entry points are its ABI, and the interposer exports
 *    them (preload.map): GOMP_parallel and GOMP_parallel_start (GOMP_1.0/4.0), every
 *    GOMP_parallel_loop_* form (static, dynamic, guided, runtime, their nonmonotonic and
 *    maybe_nonmonotonic forms: GOMP_4.0/4.5/5.0; the GOMP_1.0 *_start forms),
 *    GOMP_parallel_sections[_start] and GOMP_parallel_reductions (GOMP_5.0): every entry of
 *    Debian's libgomp 12 that starts a team. Each forwards to the next definition (dlsym
 *    RTLD_NEXT: libgomp, or LLVM's libomp, which exports the same ABI). The code address is the
 *    outlined function the compiler made of the region's body. Not region entries: GOMP_teams_reg
 *    (libgomp runs host teams one after another on the encountering thread; the parallel regions
 *    inside them are reported), GOMP_teams/GOMP_teams4 (limits inside target regions), GOMP_task*,
 *    GOMP_target* (host fallback runs on one thread) and GOACC_* (OpenACC).
 *  - LLVM's libomp: OMPT's parallel_begin (ompt.c), codeptr_ra as the code address. A gcc program
 *    running on libomp enters through the wrappers above; libomp then reports the same region
 *    through OMPT with a return address inside this library, which is dropped here (reported
 *    once, with the outlined function). OMPT leagues (teams) are not reported.
 *
 * The hook never changes what the region does: its arguments go on unchanged, and with no
 * subscriber a wrapper only forwards. */
#define _GNU_SOURCE
#include "base/base.h"

#include "preload.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SUBSCRIBERS 8
#define MAX_CODES 4096 /* distinct code addresses remembered (open addressing); later: index -1 */

static struct {
    npl__region_fn fn;
    void *arg;
} subs[MAX_SUBSCRIBERS];
static _Atomic int nsubs;
static pthread_mutex_t sub_lock = PTHREAD_MUTEX_INITIALIZER;

int npl__regions_subscribe(npl__region_fn fn, void *arg)
{
    int rc = -1;
    pthread_mutex_lock(&sub_lock);
    int n = atomic_load(&nsubs);
    if (fn && n < MAX_SUBSCRIBERS) {
        subs[n].fn = fn;
        subs[n].arg = arg;
        atomic_store(&nsubs, n + 1); /* published after the entry is written */
        rc = 0;
    }
    pthread_mutex_unlock(&sub_lock);
    return rc;
}

int npl__regions_wanted(void) { return atomic_load(&nsubs) > 0; }

/* ---- counters: entries, and per distinct code address ---- */
static struct {
    const void *code;
    uint64_t count;
} codes[MAX_CODES];
static int ncodes;
static uint64_t entries;
static int source_seen; /* bit 1 << NPL__REGION_GOMP / NPL__REGION_OMPT */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

void npl__regions_stats(struct npl__regions_stats *out)
{
    pthread_mutex_lock(&count_lock);
    out->entries = entries;
    out->distinct = (uint64_t)ncodes;
    out->sources = source_seen;
    pthread_mutex_unlock(&count_lock);
}

/* omp_get_max_threads / omp_get_level of whichever runtime is loaded (NULL: none yet) */
static int (*omp_max_threads)(void);
static int (*omp_level)(void);
static void find_omp_api(void)
{
    static int done;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        return;
    omp_max_threads = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    omp_level = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_level");
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

void npl__regions_enter(const void *code, unsigned threads, int source)
{
    int n = atomic_load(&nsubs);
    if (n == 0)
        return;
    npl__preload_enter(); /* the subscribers' allocations are not the program's */
    find_omp_api();
    struct npl__region r = {code, 0, 0, -1, threads, 1, source};
    if (!r.threads && omp_max_threads)
        r.threads = (unsigned)omp_max_threads();
    if (omp_level)
        r.level = omp_level() + 1;
    pthread_mutex_lock(&count_lock);
    r.seq = ++entries;
    source_seen |= 1 << source;
    size_t h = ((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull >> 52; /* 12 bits */
    for (size_t probes = 0; probes < MAX_CODES; probes++, h = (h + 1) % MAX_CODES) {
        if (codes[h].count && codes[h].code != code)
            continue;
        if (!codes[h].count) {
            if (ncodes >= MAX_CODES * 3 / 4)
                break; /* full enough: counted as a new address each time, index -1 */
            codes[h].code = code;
            ncodes++;
        }
        r.count = ++codes[h].count;
        r.index = (int)h;
        break;
    }
    if (r.index < 0)
        r.count = 1;
    pthread_mutex_unlock(&count_lock);
    for (int i = 0; i < n; i++)
        subs[i].fn(&r, subs[i].arg);
    npl__preload_leave();
}

/* ---- is an address inside this library? (libomp's OMPT report of a region that entered
 * through one of the wrappers below carries a return address in here) ---- */
static uintptr_t self_lo, self_hi;
static int self_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t me = (uintptr_t)data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    if (me >= lo && me < hi) {
        self_lo = lo;
        self_hi = hi;
        return 1;
    }
    return 0;
}

int npl__regions_in_self(const void *addr)
{
    static int done;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        dl_iterate_phdr(self_phdr, (void *)(uintptr_t)npl__regions_in_self);
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return (uintptr_t)addr >= self_lo && (uintptr_t)addr < self_hi;
}

/* ---- the libgomp ABI's region entries ---- */

/* the next definition of name: after this library in the global scope, else in a runtime loaded
 * privately (a plugin dlopen'ed with RTLD_LOCAL that links libgomp) */
static void *next_gomp(const char *name)
{
    static const char *const runtimes[] = {"libgomp.so.1", "libomp.so.5", "libomp.so",
                                           "libiomp5.so"};
    npl__preload_enter();
    void *f = dlsym(RTLD_NEXT, name);
    for (size_t i = 0; !f && i < sizeof runtimes / sizeof runtimes[0]; i++) {
        void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, name);
            dlclose(h);
        }
    }
    npl__preload_leave();
    if (!f) { /* called by the program, yet no runtime defines it: cannot go on */
        static const char msg[] = "numaplace preload: no OpenMP runtime defines the region entry "
                                  "point the program called\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            abort();
        abort();
    }
    return f;
}

/* The compiler barrier after the call keeps it a call: a tail jump would hand the runtime this
 * wrapper's caller as the return address, and libomp's OMPT report would not be recognised. */
#define AFTER_CALL() __asm__ volatile("" ::: "memory")
#define RESOLVE(name)                                                                            \
    static __typeof__(&name) real;                                                               \
    __typeof__(&name) f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);                              \
    if (!f) {                                                                                    \
        f = (__typeof__(&name))next_gomp(#name);                                                 \
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);                                            \
    }

typedef void (*body_fn)(void *);

EXPORT void GOMP_parallel(body_fn fn, void *data, unsigned nthr, unsigned flags)
{
    RESOLVE(GOMP_parallel);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    f(fn, data, nthr, flags);
    AFTER_CALL();
}

EXPORT unsigned GOMP_parallel_reductions(body_fn fn, void *data, unsigned nthr, unsigned flags)
{
    RESOLVE(GOMP_parallel_reductions);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    unsigned r = f(fn, data, nthr, flags);
    AFTER_CALL();
    return r;
}

/* GOMP_1.0: the caller runs fn itself after this returns, then GOMP_parallel_end */
EXPORT void GOMP_parallel_start(body_fn fn, void *data, unsigned nthr)
{
    RESOLVE(GOMP_parallel_start);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    f(fn, data, nthr);
    AFTER_CALL();
}

EXPORT void GOMP_parallel_sections_start(body_fn fn, void *data, unsigned nthr, unsigned count)
{
    RESOLVE(GOMP_parallel_sections_start);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    f(fn, data, nthr, count);
    AFTER_CALL();
}

EXPORT void GOMP_parallel_sections(body_fn fn, void *data, unsigned nthr, unsigned count,
                                   unsigned flags)
{
    RESOLVE(GOMP_parallel_sections);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    f(fn, data, nthr, count, flags);
    AFTER_CALL();
}

/* loops with a chunk: static, dynamic, guided and their nonmonotonic forms */
#define LOOP_CHUNK(name)                                                                         \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     long chunk, unsigned flags)                                                 \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);                            \
        f(fn, data, nthr, start, end, incr, chunk, flags);                                       \
        AFTER_CALL();                                                                            \
    }
/* schedule(runtime) and its forms: no chunk */
#define LOOP_RUNTIME(name)                                                                       \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     unsigned flags)                                                             \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);                            \
        f(fn, data, nthr, start, end, incr, flags);                                              \
        AFTER_CALL();                                                                            \
    }
/* GOMP_1.0 *_start forms (ended by GOMP_parallel_end) */
#define LOOP_CHUNK_START(name)                                                                   \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     long chunk)                                                                 \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);                            \
        f(fn, data, nthr, start, end, incr, chunk);                                              \
        AFTER_CALL();                                                                            \
    }

LOOP_CHUNK(GOMP_parallel_loop_static)
LOOP_CHUNK(GOMP_parallel_loop_dynamic)
LOOP_CHUNK(GOMP_parallel_loop_guided)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_dynamic)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_guided)
LOOP_RUNTIME(GOMP_parallel_loop_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
LOOP_CHUNK_START(GOMP_parallel_loop_static_start)
LOOP_CHUNK_START(GOMP_parallel_loop_dynamic_start)
LOOP_CHUNK_START(GOMP_parallel_loop_guided_start)

EXPORT void GOMP_parallel_loop_runtime_start(body_fn fn, void *data, unsigned nthr, long start,
                                             long end, long incr)
{
    RESOLVE(GOMP_parallel_loop_runtime_start);
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);
    f(fn, data, nthr, start, end, incr);
    AFTER_CALL();
}
