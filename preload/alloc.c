/* SPDX-License-Identifier: BSD-3-Clause */
/* alloc.c - the malloc family of libnumaplace_preload.so (preload.h).
 *
 * Allocations of at least NUMAPLACE_THRESHOLD bytes made through malloc, calloc, realloc,
 * reallocarray, posix_memalign, aligned_alloc, memalign, valloc and pvalloc, at any power-of-two
 * alignment, are placed under NUMAPLACE_POLICY (NUMAPLACE_FIRST: only the first N;
 * NUMAPLACE_HUGE: NPL_F_THP/NPL_F_HUGETLB). C++'s operator new in all its forms reaches them
 * through malloc and aligned_alloc (libstdc++), so does its delete through free. How a block is
 * placed (big_alloc):
 *  - lazily when the policy allows it (interleave, bind and the block policies with long runs:
 *    arrays/ and place/place_lazy.c): the kernel's policy on the untouched block, so a program
 *    that reserves much and touches little keeps its footprint;
 *  - else populated page by page by the engine, only when that fits the memory the process may
 *    still use (limits.c: cgroup v1/v2 limits, RLIMIT_AS, MemAvailable); past it, the block is
 *    left to the next allocator and --verbose says so.
 * Placed blocks are library arrays, tracked in a table of their own (page-aligned base -> size):
 * free() of one releases it with npl_free(); any other pointer goes to the real free().
 * When malloc is not the C library's (jemalloc, tcmalloc, mimalloc linked into the program), a
 * block of ours could reach one of its entry points that we do not see (jemalloc's C++ delete
 * frees internally what its aligned new got from our aligned_alloc), so the blocks stay its own:
 * its large blocks are placed where it put them (adopt), and its own paths that bypass malloc
 * & co. are not reached (one line under --verbose).
 * Allocations made by the library itself (placement workers, hwloc) are never intercepted: a
 * thread-local flag marks "inside the library". dlsym may allocate before the real functions
 * are known: a bootstrap buffer serves it. Under `numaplace profile` the large blocks are plain
 * mappings tracked by the sampler (profile.c); under `run --profile` each gets its advised policy
 * (apply.c). */
#define _GNU_SOURCE
#include "sys/sys.h"

#include "preload.h"
#include "profile/profile.h"
#include "defaults/defaults.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

#include "numaplace/migrate.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TLS _Thread_local __attribute__((tls_model("initial-exec")))

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static size_t (*real_usable)(void *);
int (*npl__real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int (*npl__real_pthread_barrier_wait)(pthread_barrier_t *);

static TLS int in_new;   /* > 0: inside the next operator new (its block is placed once, after) */
static int resolving;     /* dlsym in progress: serve from the bootstrap buffer */
static long nlarge;       /* large allocations seen (for NUMAPLACE_FIRST) */

/* ---- bootstrap buffer: dlsym may call calloc/malloc before the real ones are known ---- */
static _Alignas(16) char boot[64 * 1024];
static size_t boot_used;
static int in_boot(const void *p) { return (const char *)p >= boot && (const char *)p < boot + sizeof boot; }
static void *boot_alloc(size_t n)
{
    size_t need = ((n + 15) & ~(size_t)15) + 16;
    size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    if (off + need > sizeof boot)
        return NULL;
    *(size_t *)(boot + off) = n;
    return boot + off + 16; /* zero: static storage, never reused */
}
static size_t boot_size(const void *p) { return *(const size_t *)((const char *)p - 16); }

void npl__preload_resolve(void)
{
    if (real_malloc || resolving)
        return;
    resolving = 1;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    real_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    npl__real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                        void *))dlsym(RTLD_NEXT, "pthread_create");
    npl__real_pthread_barrier_wait =
        (int (*)(pthread_barrier_t *))dlsym(RTLD_NEXT, "pthread_barrier_wait");
    void *m = dlsym(RTLD_NEXT, "malloc");
    __atomic_store_n(&real_malloc, (void *(*)(size_t))m, __ATOMIC_RELEASE);
    resolving = 0;
}

/* ---- fork: the child must not inherit the table lock held by another thread ---- */
static int table_lock;
static void lock(void) { while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE)) sched_yield(); }
static void unlock(void) { __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE); }
/* A fork also waits until no thread is inside the library through the interposer (allocating
 * or freeing a placed block): the library's own locks (the array registry, next-touch ranges)
 * are then free too, and the child can allocate and free. New entries wait for the fork. */
static int forking, inside;
static void gate_enter(void)
{
    for (;;) {
        while (__atomic_load_n(&forking, __ATOMIC_ACQUIRE))
            sched_yield();
        __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&forking, __ATOMIC_SEQ_CST))
            return;
        __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    }
}
static void gate_leave(void) { __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST); }
void npl__preload_alloc_fork_prepare(void)
{
    while (__atomic_exchange_n(&forking, 1, __ATOMIC_SEQ_CST)) /* another thread forks */
        sched_yield();
    while (__atomic_load_n(&inside, __ATOMIC_SEQ_CST))
        sched_yield();
    lock();
}
void npl__preload_alloc_fork_parent(void)
{
    unlock();
    __atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}
void npl__preload_alloc_fork_child(void)
{
    unlock();
    __atomic_store_n(&inside, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}

/* ---- our allocations: open addressing, page-aligned base -> size ---- */
#define SLOTS 65536
static struct slot { uintptr_t key; size_t size; } table[SLOTS]; /* key 1 = deleted */
static size_t h(uintptr_t k) { return (size_t)((k >> 12) * 0x9E3779B97F4A7C15ull >> 48) % SLOTS; }
static long table_count;

static int table_put(void *p, size_t n)
{
    uintptr_t k = (uintptr_t)p;
    int ok = 0;
    lock();
    if (table_count < SLOTS / 2) {
        for (size_t i = h(k);; i = (i + 1) % SLOTS)
            if (table[i].key <= 1) {
                table[i].key = k;
                table[i].size = n;
                table_count++;
                ok = 1;
                break;
            }
    }
    unlock();
    return ok;
}

/* size of our allocation at p (0: not ours), NT_BIT set when it is registered for next-touch;
 * remove=1 drops it from the table, TAKE_ADOPTED only when it is an adopted block (ADOPT_BIT) */
#define TAKE_ADOPTED 2
#define NT_BIT ((size_t)1 << (8 * sizeof(size_t) - 1))
/* a block of `numaplace profile`: a plain mapping (profile.c), not a library array */
#define PLAIN_BIT ((size_t)1 << (8 * sizeof(size_t) - 2))
/* the program's allocator's block, profiled or placed by the profile in place (adopt_by_profile):
 * keyed by the pointer that allocator returned, page-aligned or not; the size is its whole
 * pages' */
#define ADOPT_BIT ((size_t)1 << (8 * sizeof(size_t) - 3))
static long adopted_count; /* entries with ADOPT_BIT: a key may then be any address */
static size_t table_get_raw(const void *p, int remove)
{
    uintptr_t k = (uintptr_t)p;
    if (!p || !__atomic_load_n(&table_count, __ATOMIC_RELAXED) ||
        ((k & 4095) && !__atomic_load_n(&adopted_count, __ATOMIC_RELAXED)))
        return 0;
    size_t n = 0;
    lock();
    for (size_t i = h(k), probes = 0; table[i].key && probes < SLOTS; i = (i + 1) % SLOTS, probes++)
        if (table[i].key == k) {
            n = table[i].size;
            if (remove == 1 || (remove == TAKE_ADOPTED && (n & ADOPT_BIT))) {
                table[i].key = 1;
                table_count--;
            }
            break;
        }
    unlock();
    return n;
}
static size_t table_get(const void *p, int remove)
{
    return table_get_raw(p, remove) & ~(NT_BIT | PLAIN_BIT | ADOPT_BIT);
}

/* ---- which allocator is the program's ---- */
static int foreign;       /* malloc is not the C library's: adopt its blocks, never replace them */
static int adopt_profiled; /* ... and profile or apply a profile to them (profile, run --profile) */
static long adopted_maps; /* mappings split off by adopted blocks (never given back: see adopt) */
static size_t page_size;  /* set with the placer, at init */

static void choose_placer(void);

void npl__preload_alloc_init(void)
{
    choose_placer();
    Dl_info self, first, next;
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    void *libc_malloc = libc ? dlsym(libc, "malloc") : NULL;
    void *head = dlsym(RTLD_DEFAULT, "malloc");
    if (libc)
        dlclose(libc);
    if (!dladdr((void *)boot_alloc, &self) || !head || !dladdr(head, &first) ||
        !dladdr((void *)real_malloc, &next))
        return;
    const char *name = NULL;
    if (first.dli_fbase != self.dli_fbase) { /* the program's own malloc comes before ours */
        foreign = 1;
        name = first.dli_fname;
    } else if (libc_malloc && (void *)real_malloc != libc_malloc) {
        foreign = 1;
        name = next.dli_fname;
    }
    if (!foreign || !npl__preload.verbose || !npl__preload.active)
        return;
    const char *base = name && strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (!base || !*base)
        base = "the program";
    if (npl__preload.verbose == 2)
        npl__preload_say("{\"event\": \"allocator\", \"name\": \"%s\", \"placed\": \"%s\"}\n",
                         base, "its large blocks from malloc & co. and operator new, where it "
                         "put them");
    else
        npl__preload_say("numaplace run: malloc is %s's, not the C library's: its large blocks "
                         "from malloc & co. and operator new are placed where it puts them%s\n",
                         base, "; what it allocates by other paths (mallocx, its own use) is not "
                         "reached");
}

/* Does an allocation of n bytes whose allocator returns to ra get placed (the threshold, not
 * libnumaplace.so's own block, NUMAPLACE_FIRST)? *site: its call site, from the same unwind
 * (src/profile/site.c), for the placer. libnumaplace.so's own blocks (a config file's buffer, a
 * page list, hwloc's topology) are neither placed nor profiled: the program's call of
 * npl_alloc_auto once took a tracked block of the config's, and every ordinal of its site
 * shifted by one. */
static int want_place(size_t n, const void *ra, const void **site)
{
    *site = ra;
    if (!npl__preload.active || npl__preload_in_lib || n < npl__preload.threshold)
        return 0;
    gate_enter(); /* a fork waits: the child must not inherit the site table's lock held */
    npl__preload_in_lib++; /* what the unwinding allocates is the real allocator's */
    int own = npl__site_attribute(ra, site);
    npl__preload_in_lib--;
    gate_leave();
    if (own)
        return 0;
    return !npl__preload.first ||
           __atomic_fetch_add(&nlarge, 1, __ATOMIC_RELAXED) < npl__preload.first;
}

/* ---- the placers: how a large block is served, one chosen at init (npl__preload_alloc_init) ---
 * Each returns a placed block (a library array) or NULL: the real allocator serves it. site: the
 * allocation's call site (want_place's, src/profile/site.c). Called by big_alloc,
 * inside the library (npl__preload_in_lib), errno saved around them. */

/* A block placed by a policy or the advice: registered for next-touch (run --next-touch) and
 * entered in the table of placed blocks, or freed (NULL); said (tell: apply.c said it already) */
static void *keep_placed(void *p, size_t n, int how, int tell)
{
    size_t nt = 0;
    if (p && npl__preload.next_touch) {
        if (npl_next_touch_register(p, n, npl__preload.nt_chunk) == 0)
            nt = NT_BIT;
        else
            npl__debug("preload: %p not registered for next-touch: %s", p, npl_last_error());
    }
    if (p && !table_put(p, n | nt)) {
        npl__preload_apply_free(p);
        npl_free(p); /* forgets its next-touch registration too */
        npl__fail(ENOSPC, "the table of placed blocks is full");
        p = NULL;
    }
    if (!p) {
        how = NPL__PLACED_NOT;
        npl__debug("preload: %zu bytes not placed (%s): real allocator", n, npl_last_error());
    } else {
        npl__debug("preload: %zu bytes placed at %p", n, p);
    }
    if (tell && npl__preload.verbose)
        npl__preload_tell_alloc("allocation", p, n, how, nt != 0);
    return p;
}

/* numaplace run: the configured policy (and next-touch) */
static void *place_by_policy(size_t n, size_t align, const void *site)
{
    (void)site;
    int how = NPL__PLACED_NOT;
    gate_enter();
    npl_plan *plan = NULL;
    void *p = NULL;
    if (npl__plan_default(&plan, npl__preload.pol) == 0) {
        /* next-touch moves present pages to their toucher: a lazy block's would fault in under
         * its policy instead, so those are populated */
        p = npl__preload_alloc_block(n, align, plan, npl__preload.flags, !npl__preload.next_touch,
                                     npl__preload.policy, &how);
        npl_plan_free(plan);
    }
    p = keep_placed(p, n, how, 1);
    gate_leave();
    return p;
}

/* numaplace run --profile: as the profile advises its site (apply.c says which policy) */
static void *place_by_advice(size_t n, size_t align, const void *site)
{
    if (align > page_size) { /* the profile's sites are the page-aligned blocks */
        if (npl__preload.verbose)
            npl__preload_tell_alloc("allocation", NULL, n, NPL__PLACED_NOT, 0);
        return NULL;
    }
    int how = NPL__PLACED_NOT;
    gate_enter();
    void *p = npl__preload_apply_alloc(n, site, npl__preload.pol, npl__preload.flags, NULL, &how);
    p = keep_placed(p, n, how, 0);
    gate_leave();
    return p;
}

/* numaplace profile: tracked by the sampler, mapped as the system allocator would map it (a
 * block aligned beyond a page: placed by the policy, first touch, untracked) */
static void *place_tracked(size_t n, size_t align, const void *site)
{
    if (align > page_size)
        return place_by_policy(n, align, site);
    void *q = npl__preload_profile_map(n, site);
    if (q && !table_put(q, n | PLAIN_BIT)) {
        npl__preload_profile_unmap(q, n);
        q = NULL;
    }
    return q;
}

/* numaplace profile --profile: placed as the profile advises, then tracked */
static void *place_advised_tracked(size_t n, size_t align, const void *site)
{
    if (align > page_size)
        return NULL;
    uint32_t ord = 0;
    gate_enter();
    void *q = npl__preload_apply_alloc(n, site, npl__preload.pol, npl__preload.flags, &ord, NULL);
    q = keep_placed(q, n, NPL__PLACED_NOT, 0); /* (profile --profile refuses --next-touch) */
    gate_leave();
    if (q && npl__sampler_track(q, (n + page_size - 1) / page_size * page_size, n,
                                NPL_RAW_KIND_HEAP, site, ord, NULL, 0, 1) < 0)
        npl__debug("profile: %p+%zu not tracked", q, n);
    return q;
}

static void *(*placer)(size_t n, size_t align, const void *site) = place_by_policy;

static void choose_placer(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    int profiling = npl__preload_profiling(), applying = npl__preload_apply_active();
    adopt_profiled = profiling || applying;
    placer = profiling && applying ? place_advised_tracked
             : profiling           ? place_tracked
             : applying            ? place_by_advice
                                   : place_by_policy;
}

/* A placed allocation, or NULL: the caller then uses the real allocator */
static void *big_alloc(size_t n, size_t align, const void *ra)
{
    const void *site;
    if (foreign || !want_place(n, ra, &site))
        return NULL;
    npl__preload_in_lib++;
    int saved = errno;
    void *p = placer(n, align, site);
    errno = saved;
    npl__preload_in_lib--;
    return p;
}

/* The lines of /proc/self/maps (-1 if unreadable) */
static int count_one(const struct npl_maps_entry *e, void *ctx)
{
    (void)e;
    ++*(long *)ctx;
    return 0;
}

/* Room for the two mappings an adopted block splits off (its own madvise and policy inside the
 * allocator's mapping). The allocator frees it by paths we may not see, so they are never given
 * back one by one: when the bound is reached, the real count of mappings decides and restarts
 * the count. */
static int adopt_room(void)
{
    for (int round = 0; round < 2; round++) {
        if (npl__lazy_maps_reserve(2)) {
            __atomic_add_fetch(&adopted_maps, 2, __ATOMIC_RELAXED);
            return 1;
        }
        long maps = 0;
        if (round || npl__maps_foreach(0, count_one, &maps) != 0 ||
            maps + 2 > npl__max_map_count() / 2)
            return 0;
        npl__lazy_maps_release((size_t)__atomic_exchange_n(&adopted_maps, 0, __ATOMIC_RELAXED));
    }
    return 0;
}

/* numaplace profile or run --profile, a block of the program's allocator (not the C library's)
 * whose whole pages are [lo, hi): placed there as the profile advises its site (run --profile),
 * tracked by the sampler (profile), and entered in the table, so that free() lets go of it
 * before that allocator takes it back (adopted_release). NPL__PLACED_IN_PLACE or _NOT. */
static int adopt_by_profile(void *p, uintptr_t lo, uintptr_t hi, const void *site)
{
    size_t len = hi - lo;
    uint32_t ord = 0;
    int how = NPL__PLACED_NOT;
    if (npl__preload_apply_active()) {
        how = npl__preload_apply_in_place((void *)lo, len, site, npl__preload.pol,
                                          npl__preload.flags & ~NPL_F_HUGETLB, &ord);
    } else {
        struct npl_site_key k;
        if (npl__site_resolve(site, &k, NULL) == 0)
            ord = npl__site_next_ordinal(&k);
    }
    if (!table_put(p, len | ADOPT_BIT)) { /* untracked: nothing would let go of it at free */
        if (npl__preload_apply_free((void *)lo))
            npl_next_touch_disarm((void *)lo);
        npl__fail(ENOSPC, "the table of placed blocks is full");
        return how;
    }
    __atomic_add_fetch(&adopted_count, 1, __ATOMIC_RELAXED);
    if (npl__preload_profiling() &&
        npl__sampler_track((void *)lo, len, len, NPL_RAW_KIND_HEAP, site, ord, NULL, 0, 1) < 0)
        npl__debug("profile: %p+%zu of the program's allocator not tracked", (void *)lo, len);
    return how;
}

/* before the program's allocator takes back an adopted block of whole pages from lo */
static void adopted_release(void *p)
{
    size_t psz = page_size;
    void *lo = (void *)(((uintptr_t)p + psz - 1) & ~(uintptr_t)(psz - 1));
    npl__preload_in_lib++;
    gate_enter();
    if (npl__preload_profiling())
        npl__sampler_untrack(lo);
    if (npl__preload_apply_free(lo)) /* registered for next-touch by the advice */
        npl_next_touch_disarm(lo);
    gate_leave();
    __atomic_sub_fetch(&adopted_count, 1, __ATOMIC_RELAXED);
    npl__preload_in_lib--;
}

/* The block [p, p+n) the next allocator returned to ra's caller, placed where it is (a foreign
 * allocator). */
static void *adopt(void *p, size_t n, const void *ra)
{
    const void *site;
    if (!foreign || !p || in_new || !want_place(n, ra, &site))
        return p;
    npl__preload_in_lib++;
    int saved = errno, how = NPL__PLACED_NOT;
    gate_enter();
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + psz - 1) & ~(uintptr_t)(psz - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(psz - 1);
    if (hi <= lo)
        npl__fail(EINVAL, "no whole page inside the block");
    else if (adopt_profiled)
        how = adopt_by_profile(p, lo, hi, site);
    else if (npl_policy_get_kind(npl__preload.pol) == NPL_FIRST_TOUCH)
        npl__fail(EINVAL, "first_touch: nothing to place");
    else if (!npl__preload_fits(hi - lo, npl__preload.policy))
        ; /* the reason is set */
    else if (!adopt_room())
        npl__fail(ENOSPC, "the mappings it would split off would pass half of vm.max_map_count");
    else if (npl_place_range((void *)lo, hi - lo, npl__preload.pol, NULL,
                             npl__preload.flags & ~NPL_F_HUGETLB) == 0)
        how = NPL__PLACED_IN_PLACE;
    if (how == NPL__PLACED_NOT)
        npl__debug("preload: %zu bytes of the allocator not placed: %s", n, npl_last_error());
    if (npl__preload.verbose)
        npl__preload_tell_alloc("allocation", p, n, how, 0);
    errno = saved;
    gate_leave();
    npl__preload_in_lib--;
    return p;
}

static void big_free(void *p, size_t raw)
{
    npl__preload_in_lib++;
    if (raw & PLAIN_BIT) {
        npl__preload_profile_unmap(p, raw & ~(NT_BIT | PLAIN_BIT));
        npl__preload_in_lib--;
        return;
    }
    gate_enter();
    if (npl__preload_profiling()) /* profile --profile: a placed block is tracked too */
        npl__sampler_untrack(p);
    npl__preload_apply_free(p);
    npl_free(p); /* the array's next-touch state goes with it, quietly */
    gate_leave();
    npl__preload_in_lib--;
}

EXPORT void *malloc(size_t n)
{
    if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
        if (resolving)
            return boot_alloc(n);
        npl__preload_resolve();
    }
    void *p = big_alloc(n, 0, __builtin_return_address(0));
    return p ? p : adopt(real_malloc(n), n, __builtin_return_address(0));
}

EXPORT void *calloc(size_t a, size_t b)
{
    if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
        if (resolving)
            return b && a > SIZE_MAX / b ? NULL : boot_alloc(a * b);
        npl__preload_resolve();
    }
    if (b && a > SIZE_MAX / b) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = big_alloc(a * b, 0, __builtin_return_address(0)); /* library arrays are zero-filled */
    return p ? p : adopt(real_calloc(a, b), a * b, __builtin_return_address(0));
}

EXPORT void free(void *p)
{
    if (!p || in_boot(p))
        return;
    size_t raw = table_get_raw(p, 1);
    if (raw & ADOPT_BIT)
        adopted_release(p); /* then its allocator's, below */
    else if (raw) {
        big_free(p, raw);
        return;
    }
    if (!real_free)
        npl__preload_resolve();
    real_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!real_malloc) {
        if (resolving)
            return boot_alloc(n);
        npl__preload_resolve();
    }
    if (!p)
        return malloc(n);
    if (!in_boot(p) && (table_get_raw(p, TAKE_ADOPTED) & ADOPT_BIT)) {
        adopted_release(p); /* its allocator reads it whole: given back first */
        return adopt(real_realloc(p, n), n, __builtin_return_address(0));
    }
    size_t old = in_boot(p) ? boot_size(p) : table_get(p, 0);
    if (!old && !in_boot(p) && foreign) /* the allocator's block stays its own */
        return adopt(real_realloc(p, n), n, __builtin_return_address(0));
    if (!old && !(n >= npl__preload.threshold && npl__preload.active && !npl__preload_in_lib))
        return real_realloc(p, n); /* theirs, and stays theirs */
    if (old && n == 0) {
        free(p);
        return NULL;
    }
    if (!old)
        old = real_usable ? real_usable(p) : 0;
    if (old && n <= old && !in_boot(p) && table_get(p, 0)) /* ours, shrinking: keep it */
        return p;
    void *q = malloc(n);
    if (!q)
        return NULL;
    if (!in_boot(p) && (table_get_raw(p, 0) & NT_BIT)) { /* armed: resolve it, not fault on it */
        npl__preload_in_lib++;
        npl_next_touch_prepare(p, old);
        npl__preload_in_lib--;
    }
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
    if (b && a > SIZE_MAX / b) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, a * b);
}

static int power_of_two(size_t a) { return a && !(a & (a - 1)); }

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    if (align < sizeof(void *) || !power_of_two(align))
        return EINVAL;
    void *p = big_alloc(n, align, __builtin_return_address(0));
    if (p) {
        *out = p;
        return 0;
    }
    int rc = real_posix_memalign(out, align, n);
    if (rc == 0)
        *out = adopt(*out, n, __builtin_return_address(0));
    return rc;
}

/* aligned_alloc and memalign: an alignment that is not a power of two is the next allocator's
 * affair (glibc rounds it up, others refuse it) */
EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    void *p = power_of_two(align) ? big_alloc(n, align, __builtin_return_address(0)) : NULL;
    return p ? p : adopt(real_aligned_alloc(align, n), n, __builtin_return_address(0));
}

/* memalign for a caller at ra (valloc and pvalloc name their own caller as the site) */
static void *memalign_at(size_t align, size_t n, const void *ra)
{
    if (!real_malloc)
        npl__preload_resolve();
    void *p = power_of_two(align) ? big_alloc(n, align, ra) : NULL;
    return p ? p : adopt(real_memalign(align, n), n, ra);
}

EXPORT void *memalign(size_t align, size_t n)
{
    return memalign_at(align, n, __builtin_return_address(0));
}

/* valloc and pvalloc are memalign to the page (pvalloc also rounds the size up to pages), as in
 * glibc; through our memalign they reach the program's allocator, whichever it is (jemalloc has
 * no pvalloc: the C library's would hand its block to jemalloc's free) */
EXPORT void *valloc(size_t n)
{
    return memalign_at((size_t)sysconf(_SC_PAGESIZE), n, __builtin_return_address(0));
}

EXPORT void *pvalloc(size_t n)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - psz) {
        errno = ENOMEM;
        return NULL;
    }
    return memalign_at(psz, (n + psz - 1) & ~(psz - 1), __builtin_return_address(0));
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p || in_boot(p))
        return p ? boot_size(p) : 0;
    size_t raw = table_get_raw(p, 0);
    if (raw && !(raw & ADOPT_BIT)) /* (an adopted block's size is its allocator's) */
        return raw & ~(NT_BIT | PLAIN_BIT);
    if (!real_usable)
        npl__preload_resolve();
    return real_usable ? real_usable(p) : 0;
}

/* ---- C++ operator new, when malloc is not the C library's ----
 * libstdc++'s operators call malloc and aligned_alloc, so with the C library's malloc every form
 * is placed through them. jemalloc, tcmalloc and mimalloc bring operators of their own that
 * allocate internally: ours call the next ones (which throw, or return NULL for nothrow, as they
 * do) and place the block where it is. Delete is the allocator's too, after a block that
 * `profile` tracks or `run --profile` placed is let go of (NEXT_DELETE). */
#define NEXT_NEW(sym, args, call)                                                                \
    EXPORT void *sym args                                                                        \
    {                                                                                            \
        static void *(*next) args;                                                               \
        if (!next)                                                                               \
            next = (void *(*) args)next_operator(#sym, (void *)sym);                             \
        int guard __attribute__((cleanup(leave_new))) = ++in_new; /* also when next throws */   \
        (void)guard;                                                                             \
        void *p = next call;                                                                     \
        in_new--;                                                                                \
        guard = 0;                                                                               \
        return foreign ? adopt(p, n, __builtin_return_address(0)) : p;                          \
    }

/* The names of the loaded objects (dl_iterate_phdr; nothing is opened inside its callback) */
#define MAX_OBJECTS 256
static char object_names[MAX_OBJECTS][256];
static int collect_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    int *n = ctx;
    if (*n < MAX_OBJECTS && info->dlpi_name && info->dlpi_name[0])
        snprintf(object_names[(*n)++], sizeof object_names[0], "%s", info->dlpi_name);
    return 0;
}

/* sym in the loaded object h (not ours), or NULL */
static void *symbol_in(void *h, const char *sym, void *ours)
{
    void *f = h ? dlsym(h, sym) : NULL;
    if (h)
        dlclose(h);
    return f == ours ? NULL : f;
}

/* The operator new that ours stands in front of: the next definition after ours in the global
 * scope (RTLD_NEXT); a C++ library dlopen'ed with RTLD_LOCAL (a Python extension module) binds
 * to ours but its runtime is outside that scope: then the C++ runtimes by name, then every
 * loaded object. Never NULL for a caller (its runtime is loaded); abort otherwise. */
static void *next_operator(const char *sym, void *ours)
{
    void *f = dlsym(RTLD_NEXT, sym);
    static const char *const runtimes[] = {"libstdc++.so.6", "libc++.so.1"};
    for (size_t i = 0; !f && i < sizeof runtimes / sizeof *runtimes; i++)
        f = symbol_in(dlopen(runtimes[i], RTLD_NOLOAD | RTLD_LAZY), sym, ours);
    if (!f) {
        static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&names_lock);
        int n = 0;
        dl_iterate_phdr(collect_object, &n);
        for (int i = 0; !f && i < n; i++)
            f = symbol_in(dlopen(object_names[i], RTLD_NOLOAD | RTLD_LAZY), sym, ours);
        pthread_mutex_unlock(&names_lock);
    }
    if (!f)
        abort();
    return f;
}

static void leave_new(int *guard)
{
    if (*guard) /* unwinding: the next operator threw */
        in_new--;
}
typedef struct nothrow_t nothrow_t;
NEXT_NEW(_Znwm, (size_t n), (n))
NEXT_NEW(_Znam, (size_t n), (n))
NEXT_NEW(_ZnwmRKSt9nothrow_t, (size_t n, const nothrow_t *t), (n, t))
NEXT_NEW(_ZnamRKSt9nothrow_t, (size_t n, const nothrow_t *t), (n, t))
NEXT_NEW(_ZnwmSt11align_val_t, (size_t n, size_t a), (n, a))
NEXT_NEW(_ZnamSt11align_val_t, (size_t n, size_t a), (n, a))
NEXT_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), (n, a, t))
NEXT_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), (n, a, t))

/* Delete: the next operator's, after an adopted block (profile, run --profile) is let go of:
 * an allocator with operators of its own frees without our free(). */
#define NEXT_DELETE(sym, args, call)                                                             \
    EXPORT void sym args                                                                         \
    {                                                                                            \
        static void (*next) args;                                                                \
        if (!next)                                                                               \
            next = (void (*) args)next_operator(#sym, (void *)sym);                              \
        if (p && __atomic_load_n(&adopted_count, __ATOMIC_RELAXED) &&                            \
            (table_get_raw(p, TAKE_ADOPTED) & ADOPT_BIT))                                       \
            adopted_release(p);                                                                  \
        next call;                                                                               \
    }
NEXT_DELETE(_ZdlPv, (void *p), (p))
NEXT_DELETE(_ZdaPv, (void *p), (p))
NEXT_DELETE(_ZdlPvm, (void *p, size_t n), (p, n))
NEXT_DELETE(_ZdaPvm, (void *p, size_t n), (p, n))
NEXT_DELETE(_ZdlPvRKSt9nothrow_t, (void *p, const nothrow_t *t), (p, t))
NEXT_DELETE(_ZdaPvRKSt9nothrow_t, (void *p, const nothrow_t *t), (p, t))
NEXT_DELETE(_ZdlPvSt11align_val_t, (void *p, size_t a), (p, a))
NEXT_DELETE(_ZdaPvSt11align_val_t, (void *p, size_t a), (p, a))
NEXT_DELETE(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t a), (p, n, a))
NEXT_DELETE(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t a), (p, n, a))
NEXT_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const nothrow_t *t),
            (p, a, t))
NEXT_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const nothrow_t *t),
            (p, a, t))
