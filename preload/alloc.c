/* alloc.c - the malloc family of libnumaplace_preload.so (preload.h).
 *
 * Allocations of at least NUMAPLACE_THRESHOLD bytes made through malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign and valloc become library arrays placed under
 * NUMAPLACE_POLICY (NUMAPLACE_FIRST: only the first N; NUMAPLACE_HUGE: NPL_F_THP/NPL_F_HUGETLB);
 * everything else goes to the next allocator (dlsym RTLD_NEXT). Our allocations are tracked in a
 * table of their own (page-aligned base -> size): free() of one of them releases it with
 * npl_free(); any other pointer goes to the real free(). Allocations made by the library itself
 * (placement workers, hwloc) are never intercepted: a thread-local flag marks "inside the
 * library". dlsym may allocate before the real functions are known: a bootstrap buffer serves
 * it. Under `numaplace profile` the large blocks are plain mappings tracked by the sampler
 * (profile.c); under `run --profile` each gets its advised policy (apply.c). */
#define _GNU_SOURCE
#include "sys/sys.h"

#include "preload.h"
#include "profile/profile.h"

#include <dlfcn.h>

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
static void *(*real_valloc)(size_t);
static size_t (*real_usable)(void *);
int (*npl__real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static TLS int in_lib;   /* > 0: the library (or dlsym) is running on this thread */
void npl__preload_enter(void) { in_lib++; }
void npl__preload_leave(void) { in_lib--; }
int npl__preload_inside(void) { return in_lib > 0; }
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
    real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    real_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    npl__real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                        void *))dlsym(RTLD_NEXT, "pthread_create");
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
 * remove=1 drops it from the table */
#define NT_BIT ((size_t)1 << (8 * sizeof(size_t) - 1))
/* a block of `numaplace profile`: a plain mapping (profile.c), not a library array */
#define PLAIN_BIT ((size_t)1 << (8 * sizeof(size_t) - 2))
static size_t table_get_raw(const void *p, int remove)
{
    uintptr_t k = (uintptr_t)p;
    if (!p || (k & 4095) || !__atomic_load_n(&table_count, __ATOMIC_RELAXED))
        return 0;
    size_t n = 0;
    lock();
    for (size_t i = h(k), probes = 0; table[i].key && probes < SLOTS; i = (i + 1) % SLOTS, probes++)
        if (table[i].key == k) {
            n = table[i].size;
            if (remove) {
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
    return table_get_raw(p, remove) & ~(NT_BIT | PLAIN_BIT);
}

/* MemAvailable of /proc/meminfo in bytes (read without allocating; under NUMAPLACE_FSROOT, as
 * the library reads /proc), SIZE_MAX if unknown */
static size_t mem_available(void)
{
    char buf[4096];
    int fd = npl__fs_open_fd("/proc/meminfo", O_RDONLY);
    ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[len > 0 ? len : 0] = 0;
    const char *m = strstr(buf, "MemAvailable:");
    unsigned long long kib = m ? strtoull(m + 13, NULL, 10) : 0;
    return kib ? (size_t)kib << 10 : SIZE_MAX;
}

/* A placed block is populated at once (each page faulted on its node), unlike the system
 * allocator's, which only takes the pages the program touches: a program that reserves more than
 * the memory available and uses a little would be killed for memory. Such blocks are not placed. */
#define BIG_CHECK ((size_t)64 << 20)
static int too_big(size_t n) { return n >= BIG_CHECK && n > mem_available(); }

/* A placed allocation, or NULL: the caller then uses the real allocator. */
/* ra: the allocator's return address (the allocation's site, src/profile/site.c) */
static void *big_alloc(size_t n, size_t align, const void *ra)
{
    if (!npl__preload.active || in_lib || n < npl__preload.threshold || align > 4096)
        return NULL;
    if (npl__preload.first &&
        __atomic_fetch_add(&nlarge, 1, __ATOMIC_RELAXED) >= npl__preload.first)
        return NULL;
    in_lib++;
    int saved = errno;
    if (npl__preload_profiling()) { /* tracked, mapped as the system allocator would map it */
        void *q = npl__preload_profile_map(n, ra);
        if (q && !table_put(q, n | PLAIN_BIT)) {
            npl__preload_profile_unmap(q, n);
            q = NULL;
        }
        errno = saved;
        in_lib--;
        return q;
    }
    if (too_big(n)) {
        npl__fail(ENOMEM, "larger than the memory available now: placing populates every page");
        if (npl__preload.verbose)
            npl__preload_tell_alloc("allocation", NULL, n, 0, 0);
        errno = saved;
        in_lib--;
        return NULL;
    }
    gate_enter();
    npl_shape sh = {1, 1, {n, 0, 0}, NPL_ROW_MAJOR};
    void *p = npl__preload_apply_active()
                  ? npl__preload_apply_alloc(n, ra, npl__preload.pol, npl__preload.flags)
                  : npl_alloc_array(&sh, npl__preload.pol, npl__preload.flags);
    size_t nt = 0;
    if (p && npl__preload.next_touch) {
        if (npl_next_touch_register(p, n, npl__preload.nt_chunk) == 0)
            nt = NT_BIT;
        else
            npl__debug("preload: %p not registered for next-touch: %s", p, npl_last_error());
    }
    if (p && !table_put(p, n | nt)) {
        npl_free(p); /* forgets its next-touch registration too */
        p = NULL;
    }
    if (!p)
        npl__debug("preload: %zu bytes not placed (%s): real allocator", n, npl_last_error());
    else
        npl__debug("preload: %zu bytes placed at %p", n, p);
    if (npl__preload.verbose && !npl__preload_apply_active()) /* apply.c says which policy */
        npl__preload_tell_alloc("allocation", p, n, p != NULL, nt != 0);
    errno = saved;
    gate_leave();
    in_lib--;
    return p;
}

static void big_free(void *p, size_t raw)
{
    in_lib++;
    if (raw & PLAIN_BIT) {
        npl__preload_profile_unmap(p, raw & ~(NT_BIT | PLAIN_BIT));
        in_lib--;
        return;
    }
    gate_enter();
    npl__preload_apply_free(p);
    npl_free(p); /* the array's next-touch state goes with it, quietly */
    gate_leave();
    in_lib--;
}

EXPORT void *malloc(size_t n)
{
    if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
        if (resolving)
            return boot_alloc(n);
        npl__preload_resolve();
    }
    void *p = big_alloc(n, 0, __builtin_return_address(0));
    return p ? p : real_malloc(n);
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
    return p ? p : real_calloc(a, b);
}

EXPORT void free(void *p)
{
    if (!p || in_boot(p))
        return;
    size_t raw = table_get_raw(p, 1);
    if (raw) {
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
    size_t old = in_boot(p) ? boot_size(p) : table_get(p, 0);
    if (!old && !(n >= npl__preload.threshold && npl__preload.active && !in_lib))
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
        in_lib++;
        npl_next_touch_prepare(p, old);
        in_lib--;
    }
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = big_alloc(n, align, __builtin_return_address(0));
    if (p) {
        *out = p;
        return 0;
    }
    return real_posix_memalign(out, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    void *p = big_alloc(n, align, __builtin_return_address(0));
    return p ? p : real_aligned_alloc(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    void *p = big_alloc(n, align, __builtin_return_address(0));
    return p ? p : real_memalign(align, n);
}

EXPORT void *valloc(size_t n)
{
    if (!real_malloc)
        npl__preload_resolve();
    void *p = big_alloc(n, 4096, __builtin_return_address(0));
    return p ? p : real_valloc(n);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p || in_boot(p))
        return p ? boot_size(p) : 0;
    size_t n = table_get(p, 0);
    if (n)
        return n;
    if (!real_usable)
        npl__preload_resolve();
    return real_usable ? real_usable(p) : 0;
}
