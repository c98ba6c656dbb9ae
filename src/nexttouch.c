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
};

static struct slot slots[NPL_NEXT_TOUCH_MAX_RANGES];
static pthread_mutex_t arm_lock = PTHREAD_MUTEX_INITIALIZER; /* arm/disarm, not the handler */
static struct sigaction previous;
/* the last address this thread found already resolved: a second fault there is a real one */
static __thread char *last_done __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t st_faults, st_chunks, st_moved, st_failed, st_waits;

static size_t psz(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Make the chunk accessible, pull its present pages to this thread's node, fault the rest in
 * here. Raw system calls only. */
static void resolve(struct slot *s, size_t c)
{
    size_t ps = s->page;
    char *start = s->base + c * s->chunk;
    size_t len = s->chunk;
    if (start + len > s->base + s->len)
        len = (size_t)(s->base + s->len - start);
    unsigned cpu = 0, node = 0;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    syscall(SYS_mprotect, start, len, PROT_READ | PROT_WRITE);
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

/* 1: handled (the access can be retried), 0: not ours */
static int touch(char *a)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load(&s->active) || a < s->base || a >= s->base + s->len)
            continue;
        atomic_fetch_add(&s->users, 1);
        int handled = 0;
        if (atomic_load(&s->active) && a >= s->base && a < s->base + s->len) {
            size_t c = (size_t)(a - s->base) / s->chunk;
            unsigned char expect = ARMED;
            if (atomic_compare_exchange_strong(&s->state[c], &expect, BUSY)) {
                resolve(s, c);
                atomic_store(&s->state[c], DONE);
                handled = 1;
            } else if (expect == BUSY) {
                atomic_fetch_add_explicit(&st_waits, 1, memory_order_relaxed);
                while (atomic_load(&s->state[c]) == BUSY)
                    sched_yield();
                handled = 1;
            } else {
                /* DONE: another thread resolved it after our access faulted, so retry once;
                 * faulting again at the same address is a real fault */
                handled = last_done != a;
            }
            last_done = expect == DONE ? a : NULL;
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

int npl_next_touch_arm(void *addr, size_t len, size_t chunk)
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
            void *st = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (st == MAP_FAILED) {
                rc = npl__fail(ENOMEM, "out of memory");
            } else {
                s->base = addr;
                s->len = len;
                s->chunk = chunk;
                s->page = ps;
                s->nchunks = n;
                s->state = st;
                if ((rc = arm_slot(s)) == 0)
                    atomic_store(&s->active, 1);
                else
                    munmap(st, n);
            }
        }
    } else if (rc == 0) {
        rc = arm_slot(s); /* re-arm */
    }
    pthread_mutex_unlock(&arm_lock);
    return rc;
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
    return 0;
}
