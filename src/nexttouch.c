/* nexttouch.c - application-initiated migrate-on-next-touch, in user space.
 *
 * Why mprotect + SIGSEGV and not userfaultfd: userfaultfd reports missing pages and (with
 * write-protect) writes, but a READ of a present page raises nothing, and next-touch must catch
 * the first access of any kind to pages that already exist. PROT_NONE catches every access.
 *
 * The signal handler must be async-signal-safe: it only reads the fixed slot table below (no
 * locks, no malloc), makes raw system calls and uses atomics. A slot's state array is unmapped
 * only after its `users` count (handlers inside it) has drained. */
#define _GNU_SOURCE
#include "internal.h"
#include "numaplace/migrate.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { ARMED = 0, BUSY = 1, DONE = 2 };
#define MAX_CHUNKS (65536 / 4)
#define BATCH 512 /* pages moved per move_pages call inside the handler */

struct slot {
    _Atomic int active;
    _Atomic int users;
    char *base;
    size_t len, chunk, nchunks;
    size_t page; /* the mapping's page size: 4 KiB, or 2 MiB for hugetlb */
    _Atomic unsigned char *state; /* mmap'ed, nchunks entries */
    _Atomic unsigned epoch;       /* changes at every (re-)arm */
};

static struct slot slots[NPL_NEXT_TOUCH_MAX_RANGES];
static pthread_mutex_t arm_lock = PTHREAD_MUTEX_INITIALIZER; /* arm/disarm, not the handler */
static struct sigaction previous;
/* the last address this thread found already resolved: a second fault there is a real one */
static __thread char *last_done __attribute__((tls_model("initial-exec")));
static __thread unsigned last_epoch __attribute__((tls_model("initial-exec")));
static _Atomic unsigned next_epoch;
static _Atomic uint64_t st_faults, st_chunks, st_moved, st_failed, st_waits, st_widened;

static size_t psz(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Pull chunk c's present pages to `node` and fault the absent ones in there. Raw system calls
 * only. The chunk is already accessible. */
static void place_chunk(struct slot *s, size_t c, unsigned node)
{
    size_t ps = s->page;
    char *start = s->base + c * s->chunk;
    size_t len = s->chunk;
    if (start + len > s->base + s->len)
        len = (size_t)(s->base + s->len - start);
    void *pages[BATCH];
    int nodes[BATCH], status[BATCH];
    size_t n = len / ps, absent = 0;
    for (size_t off = 0; off < n; off += BATCH) {
        size_t k = n - off < BATCH ? n - off : BATCH;
        for (size_t i = 0; i < k; i++) {
            pages[i] = start + (off + i) * ps;
            nodes[i] = (int)node;
            status[i] = -EAGAIN; /* unwritten if the kernel stops early: counted as failed */
        }
        if (syscall(SYS_move_pages, 0, k, pages, nodes, status, MPOL_MF_MOVE) < 0 && errno != ENOENT &&
            errno != ENOMEM && errno != EBUSY)
            continue;
        for (size_t i = 0; i < k; i++) {
            if (status[i] == (int)node)
                atomic_fetch_add_explicit(&st_moved, 1, memory_order_relaxed);
            else if (status[i] == -ENOENT || status[i] == -EFAULT)
                absent++;
            else
                atomic_fetch_add_explicit(&st_failed, 1, memory_order_relaxed);
        }
    }
    /* absent pages: fault them in here, under the range's MPOL_LOCAL policy */
    if (absent)
        syscall(SYS_madvise, start, len, MADV_POPULATE_WRITE);
    atomic_fetch_add_explicit(&st_chunks, 1, memory_order_relaxed);
}

static int unprotect(struct slot *s, size_t lo, size_t hi)
{
    char *a = s->base + lo * s->chunk, *b = s->base + hi * s->chunk;
    if (b > s->base + s->len)
        b = s->base + s->len;
    return syscall(SYS_mprotect, a, (size_t)(b - a), PROT_READ | PROT_WRITE) < 0 ? -1 : 0;
}

/* Claim chunks from `from` going in direction dir (-1, +1) until a resolved one (its mapping is
 * RW) or the end of the range: ARMED ones become ours (BUSY, marked in mine), BUSY ones (another
 * thread's) are only covered. Returns the new bound. */
static size_t widen(struct slot *s, size_t from, int dir, uint64_t *mine)
{
    size_t c = from;
    while (dir < 0 ? c > 0 : c < s->nchunks) {
        size_t k = dir < 0 ? c - 1 : c;
        unsigned char expect = ARMED;
        if (atomic_compare_exchange_strong(&s->state[k], &expect, BUSY))
            mine[k / 64] |= 1ull << (k % 64);
        else if (expect == DONE)
            break;
        c = dir < 0 ? c - 1 : c + 1;
    }
    return c;
}

/* The slow path of resolve(): mprotect of chunk c failed with ENOMEM (vm.max_map_count reached:
 * unprotecting a chunk inside a PROT_NONE mapping splits it). Widen the unprotected span to the
 * nearest resolved chunk on the left, then also on the right, so that it merges with that RW
 * mapping and needs no new one; the ARMED chunks it covers are claimed and placed here too
 * (placement degrades to coarser chunks; the program keeps running). Last resort: the whole
 * range becomes accessible and its remaining armed chunks stay where they are. */
static __attribute__((noinline)) int resolve_widened(struct slot *s, size_t c, unsigned node)
{
    uint64_t mine[MAX_CHUNKS / 64];
    memset(mine, 0, sizeof mine);
    mine[c / 64] |= 1ull << (c % 64);
    atomic_fetch_add_explicit(&st_widened, 1, memory_order_relaxed);
    size_t lo = widen(s, c, -1, mine), hi = c + 1;
    int ok = unprotect(s, lo, hi) == 0;
    if (!ok) {
        hi = widen(s, c + 1, +1, mine);
        ok = unprotect(s, lo, hi) == 0;
    }
    if (!ok) {
        if (unprotect(s, 0, s->nchunks) < 0)
            return -1;
        for (size_t k = 0; k < s->nchunks; k++) {
            unsigned char expect = ARMED;
            atomic_compare_exchange_strong(&s->state[k], &expect, DONE);
        }
    }
    for (size_t k = lo; k < hi; k++)
        if (mine[k / 64] >> (k % 64) & 1) {
            place_chunk(s, k, node);
            atomic_store(&s->state[k], DONE);
        }
    return 0;
}

/* Resolve chunk c, which this thread owns (BUSY): make it accessible, then place it on this
 * thread's node. Returns 0, or -1 if it could not be made accessible. */
static int resolve(struct slot *s, size_t c)
{
    unsigned cpu = 0, node = 0;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    if (unprotect(s, c, c + 1) == 0) {
        place_chunk(s, c, node);
        atomic_store(&s->state[c], DONE);
        return 0;
    }
    if (errno == ENOMEM && resolve_widened(s, c, node) == 0)
        return 0;
    atomic_store(&s->state[c], DONE); /* waiters retry and fault for real */
    return -1;
}

/* 1: handled (the access can be retried), 0: not ours */
static int touch(char *a)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        /* base/len are read before `users` pins the slot: a disarm + re-arm of this slot by other
         * threads may be writing them now (atomically, below); the check after users++ decides */
        char *base = __atomic_load_n(&s->base, __ATOMIC_RELAXED);
        size_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
        if (!atomic_load(&s->active) || a < base || a >= base + len)
            continue;
        atomic_fetch_add(&s->users, 1);
        int handled = 0;
        if (atomic_load(&s->active) && a >= s->base && a < s->base + s->len) {
            size_t c = (size_t)(a - s->base) / s->chunk;
            unsigned epoch = atomic_load(&s->epoch);
            unsigned char expect = ARMED;
            if (atomic_compare_exchange_strong(&s->state[c], &expect, BUSY)) {
                handled = resolve(s, c) == 0;
            } else if (expect == BUSY) {
                atomic_fetch_add_explicit(&st_waits, 1, memory_order_relaxed);
                while (atomic_load(&s->state[c]) == BUSY)
                    sched_yield();
                handled = 1;
            } else {
                /* DONE: another thread resolved it after our access faulted, so retry once;
                 * faulting again at the same address in the same arming is a real fault */
                handled = !(last_done == a && last_epoch == epoch);
            }
            last_done = expect == DONE ? a : NULL;
            last_epoch = epoch;
        }
        atomic_fetch_sub(&s->users, 1);
        return handled;
    }
    return 0;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    if (si->si_code == SEGV_ACCERR && touch(si->si_addr)) {
        atomic_fetch_add_explicit(&st_faults, 1, memory_order_relaxed);
        errno = saved;
        return;
    }
    /* not ours: the handler that was there before, or the default action */
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(sig, si, ctx);
            errno = saved;
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        errno = saved;
        return;
    }
    signal(SIGSEGV, SIG_DFL); /* returning re-executes the access: it dies as it should */
    errno = saved;
}

/* Install our handler unless it is the current one; the handler found there (the program's own,
 * installed before or since the last arm) becomes the one faults outside armed chunks go to. */
static int install(void)
{
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_segv)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous) < 0)
        return npl__fail(errno, "cannot install the SIGSEGV handler");
    return 0;
}

static struct slot *find(const void *base)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++)
        if (atomic_load(&slots[i].active) && slots[i].base == base)
            return &slots[i];
    return NULL;
}

/* protect everything, MPOL_LOCAL, all chunks armed */
static int arm_slot(struct slot *s)
{
    struct npl_counter cnt = {0};
    atomic_store(&s->epoch, atomic_fetch_add(&next_epoch, 1) + 1);
    for (size_t c = 0; c < s->nchunks; c++)
        atomic_store(&s->state[c], ARMED);
    /* MPOL_LOCAL: pages faulted in later land on the toucher's node, and the range keeps a
     * policy, so automatic NUMA balancing still leaves it alone (kernels without MPOL_LOCAL in
     * mbind: MPOL_DEFAULT) */
    if (npl__mbind(&cnt, s->base, s->len, MPOL_LOCAL, NULL, 0, 0) < 0 &&
        npl__mbind(&cnt, s->base, s->len, MPOL_DEFAULT, NULL, 0, 0) < 0)
        return npl__fail(errno, "mbind on the armed range failed");
    if (mprotect(s->base, s->len, PROT_NONE) < 0)
        return npl__fail(errno, "mprotect(PROT_NONE) on %p+%zu failed", (void *)s->base, s->len);
    return 0;
}

/* KernelPageSize of the mapping holding addr (smaps), or the base page size */
static size_t mapping_page_size(const void *addr)
{
    size_t ps = psz();
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[256];
    int in = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, kb;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
            ps = kb * 1024;
            break;
        }
    }
    if (f)
        fclose(f);
    return ps;
}

/* mark every chunk resolved: the range is known (registered) but not armed */
static void register_slot(struct slot *s)
{
    for (size_t c = 0; c < s->nchunks; c++)
        atomic_store(&s->state[c], DONE);
}

static int arm_or_register(void *addr, size_t len, size_t chunk, int arm)
{
    size_t ps = psz();
    if (!addr || len == 0 || (uintptr_t)addr % ps)
        return npl__fail(EINVAL, "next-touch range %p+%zu: empty or not page-aligned", addr, len);
    if ((uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    size_t page = mapping_page_size(addr); /* hugetlb: the chunk is (a multiple of) the huge page */
    if (page > ps) {
        if ((uintptr_t)addr % page)
            return npl__fail(EINVAL, "%p is not aligned to its %zu-byte pages", addr, page);
        ps = page;
    }
    len = (len + ps - 1) / ps * ps;
    if (chunk == 0)
        chunk = NPL_NEXT_TOUCH_DEFAULT_CHUNK;
    chunk = (chunk + ps - 1) / ps * ps;
    while (len / chunk + (len % chunk != 0) > MAX_CHUNKS)
        chunk *= 2;
    pthread_mutex_lock(&arm_lock);
    int rc = install();
    struct slot *s = rc == 0 ? find(addr) : NULL;
    if (rc == 0 && s && (s->len != len || s->chunk != chunk)) {
        rc = npl__fail(EINVAL, "%p is armed with another length or chunk: disarm it first", addr);
    } else if (rc == 0 && !s) {
        for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES && !s; i++)
            if (!atomic_load(&slots[i].active) && atomic_load(&slots[i].users) == 0)
                s = &slots[i];
        for (int i = 0; s && i < NPL_NEXT_TOUCH_MAX_RANGES; i++) { /* no overlap */
            struct slot *o = &slots[i];
            if (atomic_load(&o->active) && (char *)addr < o->base + o->len &&
                o->base < (char *)addr + len) {
                s = NULL;
                rc = npl__fail(EINVAL, "%p+%zu overlaps an armed range", addr, len);
            }
        }
        if (!s && rc == 0)
            rc = npl__fail(ENOSPC, "%d ranges are armed already", NPL_NEXT_TOUCH_MAX_RANGES);
        if (s) {
            size_t n = len / chunk + (len % chunk != 0);
            void *st = npl__map_nohuge(n);
            if (st == MAP_FAILED) {
                rc = npl__fail(ENOMEM, "out of memory");
            } else {
                __atomic_store_n(&s->base, (char *)addr, __ATOMIC_RELAXED); /* touch() reads them */
                __atomic_store_n(&s->len, len, __ATOMIC_RELAXED);          /* without the lock */
                s->chunk = chunk;
                s->page = ps;
                s->nchunks = n;
                s->state = st;
                if (!arm)
                    register_slot(s);
                if (!arm || (rc = arm_slot(s)) == 0)
                    atomic_store(&s->active, 1);
                else
                    munmap(st, n);
            }
        }
    } else if (rc == 0) {
        rc = arm ? arm_slot(s) : 0; /* re-arm; registering again changes nothing */
    }
    pthread_mutex_unlock(&arm_lock);
    return rc;
}

int npl_next_touch_arm(void *addr, size_t len, size_t chunk)
{
    return arm_or_register(addr, len, chunk, 1);
}

int npl_next_touch_register(void *addr, size_t len, size_t chunk)
{
    return arm_or_register(addr, len, chunk, 0);
}

int npl_next_touch_register_array(void *array, size_t chunk)
{
    struct npl_array_info info;
    if (npl_array_info(array, &info) < 0)
        return -1;
    return npl_next_touch_register(info.base, info.bytes, chunk);
}

int npl_next_touch_arm_array(void *array, size_t chunk)
{
    struct npl_array_info info;
    if (npl_array_info(array, &info) < 0)
        return -1;
    return npl_next_touch_arm(info.base, info.bytes, chunk);
}

int npl_next_touch_disarm(void *addr)
{
    pthread_mutex_lock(&arm_lock);
    struct slot *s = find(addr);
    if (!s) {
        pthread_mutex_unlock(&arm_lock);
        return npl__fail(ENOENT, "%p is not the start of an armed range", addr);
    }
    int rc = mprotect(s->base, s->len, PROT_READ | PROT_WRITE) < 0
                 ? npl__fail(errno, "mprotect on disarm failed") : 0;
    atomic_store(&s->active, 0);
    while (atomic_load(&s->users) > 0) /* handlers still inside this slot */
        sched_yield();
    munmap((void *)s->state, s->nchunks);
    s->state = NULL;
    pthread_mutex_unlock(&arm_lock);
    return rc;
}

int npl_next_touch_prepare(void *addr, size_t len)
{
    if (!addr || (uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EINVAL, "bad buffer");
    char *lo = addr, *hi = lo + len;
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load(&s->active) || hi <= s->base || lo >= s->base + s->len)
            continue;
        char *a = lo > s->base ? lo : s->base;
        char *b = hi < s->base + s->len ? hi : s->base + s->len;
        for (char *p = s->base + (size_t)(a - s->base) / s->chunk * s->chunk; p < b; p += s->chunk)
            touch(p);
    }
    return 0;
}

int npl_next_touch_rearm_all(void)
{
    int rc = 0;
    pthread_mutex_lock(&arm_lock);
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++)
        if (atomic_load(&slots[i].active) && arm_slot(&slots[i]) < 0)
            rc = -1;
    pthread_mutex_unlock(&arm_lock);
    return rc;
}

int npl_next_touch_get_stats(struct npl_next_touch_stats *o)
{
    if (!o)
        return npl__fail(EINVAL, "NULL output");
    o->faults = atomic_load(&st_faults);
    o->chunks = atomic_load(&st_chunks);
    o->pages_moved = atomic_load(&st_moved);
    o->pages_failed = atomic_load(&st_failed);
    o->waits = atomic_load(&st_waits);
    o->widened = atomic_load(&st_widened);
    return 0;
}
