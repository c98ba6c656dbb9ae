/* SPDX-License-Identifier: BSD-3-Clause */
/* regions.c - the one OpenMP region hook of libnumaplace_preload.so (preload.h:
 * npl__regions_subscribe). Every parallel region the program starts is reported to the
 * subscribers that asked for it: its entry (on the encountering thread, before its team starts,
 * with its code address and entry counters), its end (on the same thread, after the team joined)
 * and each thread of its team with its number in the team. The transparent next-touch mode
 * (rearm.c: entries), the profile's phases (profile.c: entries, ends, thread numbers) and
 * `run --profile` (apply.c: entries) use it. Two sources, one per runtime ABI, so that the
 * program keeps its own runtime:
 *
 *  - GCC's libgomp has no OMPT. Its region entry points are its ABI, and the interposer exports
 *    them (preload.map): GOMP_parallel and GOMP_parallel_start (GOMP_1.0/4.0), every
 *    GOMP_parallel_loop_* form (static, dynamic, guided, runtime, their nonmonotonic and
 *    maybe_nonmonotonic forms: GOMP_4.0/4.5/5.0; the GOMP_1.0 *_start forms),
 *    GOMP_parallel_sections[_start] and GOMP_parallel_reductions (GOMP_5.0): every entry of
 *    Debian's libgomp 12 that starts a team, and GOMP_parallel_end (the end of the *_start forms).
 *    Each forwards to the next definition (dlsym RTLD_NEXT: libgomp, or LLVM's libomp, which
 *    exports the same ABI). The code address is the outlined function the compiler made of the
 *    region's body. When a subscriber wants thread numbers, the team runs the body through a
 *    trampoline that reports omp_get_thread_num() first (the master of a *_start form calls the
 *    body itself and is not reported). Not region entries: GOMP_teams_reg (libgomp runs host
 *    teams one after another on the encountering thread; the parallel regions inside them are
 *    reported), GOMP_teams/GOMP_teams4 (limits inside target regions), GOMP_task*, GOMP_target*
 *    (host fallback runs on one thread) and GOACC_* (OpenACC).
 *  - LLVM's libomp: OMPT's parallel_begin/parallel_end and implicit_task (ompt.c), codeptr_ra as
 *    the code address. A gcc program running on libomp enters through the wrappers above; libomp
 *    then reports the same region through OMPT with a return address inside this library, which
 *    is dropped here, and so is its end (reported once, with the outlined function). OMPT leagues
 *    (teams) are not reported.
 *
 * The hook never changes what the region does: its arguments go on unchanged (the trampoline
 * calls the body with its own argument), and with no subscriber a wrapper only forwards. */
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

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define MAX_SUBSCRIBERS 8
#define MAX_CODES 4096 /* distinct code addresses remembered (open addressing); later: index -1 */
#define MAX_NEST 16    /* regions open on one thread; deeper ones are not reported */

static struct {
    npl__region_fn fn;
    void *arg;
    unsigned events;
} subs[MAX_SUBSCRIBERS];
static _Atomic int nsubs;
static _Atomic unsigned wanted_events; /* the union of the subscribers' events */
static pthread_mutex_t sub_lock = PTHREAD_MUTEX_INITIALIZER;

int npl__regions_subscribe(npl__region_fn fn, void *arg, unsigned events)
{
    int rc = -1;
    pthread_mutex_lock(&sub_lock);
    int n = atomic_load(&nsubs);
    if (fn && events && n < MAX_SUBSCRIBERS) {
        subs[n].fn = fn;
        subs[n].arg = arg;
        subs[n].events = events;
        atomic_store(&nsubs, n + 1); /* published after the entry is written */
        atomic_fetch_or(&wanted_events, events);
        rc = 0;
    }
    pthread_mutex_unlock(&sub_lock);
    return rc;
}

int npl__regions_wanted(void) { return atomic_load(&nsubs) > 0; }

static void tell(const struct npl__region *r)
{
    int n = atomic_load(&nsubs);
    for (int i = 0; i < n; i++)
        if (subs[i].events & (unsigned)r->event)
            subs[i].fn(r, subs[i].arg);
}

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

/* omp_get_max_threads / omp_get_level / omp_get_thread_num of whichever runtime is loaded (NULL:
 * none yet) */
static int (*omp_max_threads)(void);
static int (*omp_level)(void);
static int (*omp_thread_num)(void);
static void find_omp_api(void)
{
    static int done;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        return;
    omp_max_threads = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    omp_level = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_level");
    omp_thread_num = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num");
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

/* The regions open on this thread, innermost last: an end pops what its entry pushed (entries and
 * ends pair up on the encountering thread, whichever source reports them) */
static TLS struct open_region {
    struct npl__region r;
    int told; /* its entry was reported: its end will be */
} open_regions[MAX_NEST];
static TLS int nopen;

static void push(const struct npl__region *r, int told)
{
    if (nopen < MAX_NEST) {
        open_regions[nopen].r = *r;
        open_regions[nopen].told = told;
    }
    nopen++;
}

void npl__regions_enter(const void *code, unsigned threads, int source)
{
    struct npl__region r = {.event = NPL__REGION_BEGIN, .code = code, .index = -1,
                            .threads = threads, .level = 1, .source = source, .thread = -1};
    int n = atomic_load(&nsubs);
    if (n == 0 || nopen >= MAX_NEST) {
        push(&r, 0);
        return;
    }
    npl__preload_enter(); /* the subscribers' allocations are not the program's */
    find_omp_api();
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
    push(&r, 1);
    tell(&r);
    npl__preload_leave();
}

void npl__regions_enter_again(void)
{
    struct npl__region r = {0};
    push(&r, 0);
}

void npl__regions_leave(void)
{
    if (nopen <= 0)
        return; /* an end whose entry this thread never saw (the tool started meanwhile) */
    int i = --nopen;
    if (i >= MAX_NEST || !open_regions[i].told)
        return;
    struct npl__region r = open_regions[i].r;
    r.event = NPL__REGION_END;
    npl__preload_enter();
    tell(&r);
    npl__preload_leave();
}

void npl__regions_thread(int num)
{
    if (!(atomic_load(&wanted_events) & NPL__REGION_THREAD))
        return;
    struct npl__region r = {.event = NPL__REGION_THREAD, .index = -1, .thread = num};
    npl__preload_enter();
    tell(&r);
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

typedef void (*body_fn)(void *);
struct body {
    body_fn fn;
    void *data;
};

/* the team's threads run this in place of the body when thread numbers are wanted */
static void run_body(void *p)
{
    const struct body *b = p;
    find_omp_api();
    if (omp_thread_num)
        npl__regions_thread(omp_thread_num());
    b->fn(b->data);
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
/* report the entry; with thread numbers wanted, the team runs the body through run_body (b: a
 * record that lives until the team has joined) */
#define ENTER(b)                                                                                 \
    body_fn use_fn = fn;                                                                         \
    void *use_data = data;                                                                       \
    if (atomic_load(&wanted_events) & NPL__REGION_THREAD) {                                      \
        (b)->fn = fn;                                                                            \
        (b)->data = data;                                                                        \
        use_fn = run_body;                                                                       \
        use_data = (b);                                                                          \
    }                                                                                            \
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);

EXPORT void GOMP_parallel(body_fn fn, void *data, unsigned nthr, unsigned flags)
{
    RESOLVE(GOMP_parallel);
    struct body b;
    ENTER(&b);
    f(use_fn, use_data, nthr, flags);
    AFTER_CALL();
    npl__regions_leave();
}

EXPORT unsigned GOMP_parallel_reductions(body_fn fn, void *data, unsigned nthr, unsigned flags)
{
    RESOLVE(GOMP_parallel_reductions);
    struct body b;
    ENTER(&b);
    unsigned r = f(use_fn, use_data, nthr, flags);
    AFTER_CALL();
    npl__regions_leave();
    return r;
}

EXPORT void GOMP_parallel_sections(body_fn fn, void *data, unsigned nthr, unsigned count,
                                   unsigned flags)
{
    RESOLVE(GOMP_parallel_sections);
    struct body b;
    ENTER(&b);
    f(use_fn, use_data, nthr, count, flags);
    AFTER_CALL();
    npl__regions_leave();
}

/* loops with a chunk: static, dynamic, guided and their nonmonotonic forms */
#define LOOP_CHUNK(name)                                                                         \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     long chunk, unsigned flags)                                                 \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        struct body b;                                                                           \
        ENTER(&b);                                                                               \
        f(use_fn, use_data, nthr, start, end, incr, chunk, flags);                               \
        AFTER_CALL();                                                                            \
        npl__regions_leave();                                                                    \
    }
/* schedule(runtime) and its forms: no chunk */
#define LOOP_RUNTIME(name)                                                                       \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     unsigned flags)                                                             \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        struct body b;                                                                           \
        ENTER(&b);                                                                               \
        f(use_fn, use_data, nthr, start, end, incr, flags);                                      \
        AFTER_CALL();                                                                            \
        npl__regions_leave();                                                                    \
    }

LOOP_CHUNK(GOMP_parallel_loop_static)
LOOP_CHUNK(GOMP_parallel_loop_dynamic)
LOOP_CHUNK(GOMP_parallel_loop_guided)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_dynamic)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_guided)
LOOP_RUNTIME(GOMP_parallel_loop_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* The GOMP_1.0 split form (GCC before 4.9): GOMP_parallel*_start(fn, data, ...); fn(data) on the
 * master; GOMP_parallel_end(). The body record lives until the end, one per nesting level. */
static TLS struct body start_bodies[MAX_NEST];
static TLS int nstarts;
static struct body *start_body(void)
{
    int i = nstarts++;
    return i < MAX_NEST ? &start_bodies[i] : NULL;
}
/* past MAX_NEST open *_start forms the team runs the body as it is */
#define ENTER_START()                                                                            \
    struct body *b = start_body();                                                               \
    body_fn use_fn = fn;                                                                         \
    void *use_data = data;                                                                       \
    if (b && (atomic_load(&wanted_events) & NPL__REGION_THREAD)) {                               \
        b->fn = fn;                                                                              \
        b->data = data;                                                                          \
        use_fn = run_body;                                                                       \
        use_data = b;                                                                            \
    }                                                                                            \
    npl__regions_enter((const void *)fn, nthr, NPL__REGION_GOMP);

EXPORT void GOMP_parallel_start(body_fn fn, void *data, unsigned nthr)
{
    RESOLVE(GOMP_parallel_start);
    ENTER_START();
    f(use_fn, use_data, nthr);
    AFTER_CALL();
}

EXPORT void GOMP_parallel_sections_start(body_fn fn, void *data, unsigned nthr, unsigned count)
{
    RESOLVE(GOMP_parallel_sections_start);
    ENTER_START();
    f(use_fn, use_data, nthr, count);
    AFTER_CALL();
}

#define LOOP_CHUNK_START(name)                                                                   \
    EXPORT void name(body_fn fn, void *data, unsigned nthr, long start, long end, long incr,     \
                     long chunk)                                                                 \
    {                                                                                            \
        RESOLVE(name);                                                                           \
        ENTER_START();                                                                           \
        f(use_fn, use_data, nthr, start, end, incr, chunk);                                      \
        AFTER_CALL();                                                                            \
    }
LOOP_CHUNK_START(GOMP_parallel_loop_static_start)
LOOP_CHUNK_START(GOMP_parallel_loop_dynamic_start)
LOOP_CHUNK_START(GOMP_parallel_loop_guided_start)

EXPORT void GOMP_parallel_loop_runtime_start(body_fn fn, void *data, unsigned nthr, long start,
                                             long end, long incr)
{
    RESOLVE(GOMP_parallel_loop_runtime_start);
    ENTER_START();
    f(use_fn, use_data, nthr, start, end, incr);
    AFTER_CALL();
}

EXPORT void GOMP_parallel_end(void)
{
    RESOLVE(GOMP_parallel_end);
    f();
    AFTER_CALL();
    if (nstarts > 0)
        nstarts--;
    npl__regions_leave();
}
