/* SPDX-License-Identifier: BSD-3-Clause */
/* protect.c - the program's own protections (src/base/protect.h): its mprotect, pkey_mprotect,
 * mmap, mmap64, mremap and munmap are recorded in a table of ranges that are not read-write
 * (what is not in the table is taken as read-write), and npl__prot_restore gives pages back
 * numaplace protected with the program's protection there. So a guard page the program made
 * PROT_NONE, pages it made read-only to see their first write, or a read-only file it mapped
 * MAP_FIXED over part of a tracked block keep faulting into the program while sampled or armed.
 * madvise changes no protection: nothing to record. numaplace's own calls (its return address is
 * in this object) are not the program's and are not recorded. The table is read in the fault
 * path: a spin lock, no allocation. */
#define _GNU_SOURCE
#include "base/base.h"
#include "preload.h"
#include "io.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define RW (PROT_READ | PROT_WRITE)
#define MAX_RANGES 1024

static struct {
    _Atomic uintptr_t lo, hi;
    _Atomic int prot;
} ranges[MAX_RANGES];
static _Atomic int nranges;
static atomic_flag writer = ATOMIC_FLAG_INIT;
static _Atomic int overflowed; /* ranges that found no room: said once under --verbose */

/* a call from numaplace itself (the library inside this object), not the program */
static int ours(const void *ret) { return ret && npl__regions_in_self(ret); }

/* One lock orders the program's calls with the give-backs: a give-back reads the table and
 * protects under it, so a program's mprotect is never undone by a give-back that read the table
 * before it. Holders block signals: a handler of the same thread (the fault path gives back)
 * never waits on the lock it interrupted. */
static void lock(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
    while (atomic_flag_test_and_set_explicit(&writer, memory_order_acquire))
        sched_yield();
}

static void unlock(const sigset_t *old)
{
    atomic_flag_clear_explicit(&writer, memory_order_release);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

static int put(uintptr_t lo, uintptr_t hi, int prot)
{
    int n = atomic_load(&nranges);
    for (int i = 0; i < n; i++)
        if (atomic_load(&ranges[i].lo) == 0) {
            n = i;
            break;
        }
    if (n >= MAX_RANGES)
        return -1;
    atomic_store(&ranges[n].hi, hi);
    atomic_store(&ranges[n].prot, prot);
    atomic_store(&ranges[n].lo, lo);
    if (n == atomic_load(&nranges))
        atomic_store(&nranges, n + 1);
    return 0;
}

/* [lo, hi) has protection prot now (RW: leaves the table); the caller holds the lock */
static void set_locked(uintptr_t lo, uintptr_t hi, int prot)
{
    int n = atomic_load(&nranges);
    for (int i = 0; i < n; i++) {
        uintptr_t a = atomic_load(&ranges[i].lo), b = atomic_load(&ranges[i].hi);
        if (!a || b <= lo || a >= hi)
            continue;
        int p = atomic_load(&ranges[i].prot);
        atomic_store(&ranges[i].lo, 0); /* the parts outside [lo, hi) stay */
        if (a < lo && put(a, lo, p) < 0)
            atomic_fetch_add(&overflowed, 1);
        if (b > hi && put(hi, b, p) < 0)
            atomic_fetch_add(&overflowed, 1);
    }
    if (prot != RW && put(lo, hi, prot) < 0)
        atomic_fetch_add(&overflowed, 1);
}

static uintptr_t end_of(uintptr_t lo, size_t len) { return lo + ((len + 4095) & ~(size_t)4095); }

/* the pieces of the table in [lo, hi), sorted; at most max; -1 when there were more */
struct piece {
    uintptr_t lo, hi;
    int prot;
};
static int pieces(uintptr_t lo, uintptr_t hi, struct piece *out, int max)
{
    int k = 0, n = atomic_load(&nranges);
    for (int i = 0; i < n; i++) {
        uintptr_t a = atomic_load(&ranges[i].lo), b = atomic_load(&ranges[i].hi);
        if (!a || b <= lo || a >= hi)
            continue;
        if (k == max)
            return -1;
        struct piece p = {a < lo ? lo : a, b > hi ? hi : b, atomic_load(&ranges[i].prot)};
        int j = k++;
        for (; j > 0 && out[j - 1].lo > p.lo; j--) /* insertion: a few pieces */
            out[j] = out[j - 1];
        out[j] = p;
    }
    return k;
}

static int sys_mprotect(uintptr_t a, size_t len, int prot)
{
    return len && syscall(SYS_mprotect, (void *)a, len, prot) < 0 ? -1 : 0;
}

static int narrowed(int program, int prot)
{
    return prot & PROT_WRITE ? program : program & ~PROT_WRITE;
}

int npl__prot_restore(uintptr_t a, size_t len, int prot)
{
    if (!atomic_load(&nranges)) /* the program set no protection: nothing to look up */
        return sys_mprotect(a, len, prot);
    struct piece p[32];
    uintptr_t end = a + len;
    sigset_t old;
    int rc = 0;
    lock(&old);
    int n = pieces(a, end, p, 32);
    if (n < 0) { /* many pieces: page by page */
        for (uintptr_t at = a; at < end; at += 4096) {
            struct piece one;
            int k = pieces(at, at + 4096, &one, 1);
            size_t n1 = end - at < 4096 ? end - at : 4096;
            rc |= sys_mprotect(at, n1, k == 1 ? narrowed(one.prot, prot) : prot);
        }
    } else {
        uintptr_t at = a;
        for (int i = 0; i < n; i++) {
            rc |= sys_mprotect(at, p[i].lo - at, prot);
            rc |= sys_mprotect(p[i].lo, p[i].hi - p[i].lo, narrowed(p[i].prot, prot));
            at = p[i].hi;
        }
        rc |= sys_mprotect(at, end - at, prot);
    }
    unlock(&old);
    return rc;
}

int npl__prot_set_by_program(uintptr_t a, size_t len)
{
    if (!atomic_load(&nranges))
        return 0;
    struct piece one;
    sigset_t old;
    lock(&old);
    int k = pieces(a, a + len, &one, 1);
    unlock(&old);
    return k != 0;
}

int npl__prot_arm(uintptr_t a, size_t len)
{
    if (!atomic_load(&nranges))
        return sys_mprotect(a, len, PROT_NONE);
    struct piece one;
    sigset_t old;
    lock(&old);
    int set_by_program = pieces(a, a + len, &one, 1) != 0;
    int rc = set_by_program ? -1 : sys_mprotect(a, len, PROT_NONE);
    unlock(&old);
    if (set_by_program)
        errno = EAGAIN;
    return rc;
}

/* ---- the program's calls ---- */

static void *c_mprotect, *c_pkey_mprotect, *c_mmap, *c_mmap64, *c_munmap, *c_mremap;

void npl__preload_protect_resolve(void)
{
    npl__preload_next(&c_mprotect, "mprotect");
    npl__preload_next(&c_pkey_mprotect, "pkey_mprotect");
    npl__preload_next(&c_mmap, "mmap");
    npl__preload_next(&c_mmap64, "mmap64");
    npl__preload_next(&c_munmap, "munmap");
    npl__preload_next(&c_mremap, "mremap");
    npl__regions_in_self(NULL); /* its range, found now */
}

#define REAL(type, c, name, fail)                                                                  \
    __typeof__((type)0) real = (type)npl__preload_next(&c, name);                                  \
    if (!real) {                                                                                   \
        errno = ENOSYS;                                                                            \
        return fail;                                                                               \
    }

#define PROT_BITS (PROT_READ | PROT_WRITE | PROT_EXEC)

EXPORT int mprotect(void *a, size_t len, int prot)
{
    REAL(int (*)(void *, size_t, int), c_mprotect, "mprotect", -1)
    if (ours(__builtin_return_address(0)))
        return real(a, len, prot);
    sigset_t old;
    lock(&old);
    int r = real(a, len, prot), e = errno;
    if (r == 0)
        set_locked((uintptr_t)a, end_of((uintptr_t)a, len), prot & PROT_BITS);
    unlock(&old);
    errno = e;
    return r;
}

EXPORT int pkey_mprotect(void *a, size_t len, int prot, int key)
{
    REAL(int (*)(void *, size_t, int, int), c_pkey_mprotect, "pkey_mprotect", -1)
    if (ours(__builtin_return_address(0)))
        return real(a, len, prot, key);
    sigset_t old;
    lock(&old);
    int r = real(a, len, prot, key), e = errno;
    if (r == 0)
        set_locked((uintptr_t)a, end_of((uintptr_t)a, len), prot & PROT_BITS);
    unlock(&old);
    errno = e;
    return r;
}

/* a new mapping (MAP_FIXED: over part of a block) has the protection it was mapped with */
static void mapped(void *r, size_t len, int prot, const void *ret)
{
    if (r == MAP_FAILED || ours(ret))
        return;
    int e = errno;
    sigset_t old;
    lock(&old);
    set_locked((uintptr_t)r, end_of((uintptr_t)r, len), prot & PROT_BITS);
    unlock(&old);
    errno = e;
}

EXPORT void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
    REAL(void *(*)(void *, size_t, int, int, int, off_t), c_mmap, "mmap", MAP_FAILED)
    void *r = real(a, len, prot, flags, fd, off);
    mapped(r, len, prot, __builtin_return_address(0));
    return r;
}

EXPORT void *mmap64(void *a, size_t len, int prot, int flags, int fd, off64_t off)
{
    REAL(void *(*)(void *, size_t, int, int, int, off64_t), c_mmap64, "mmap64", MAP_FAILED)
    void *r = real(a, len, prot, flags, fd, off);
    mapped(r, len, prot, __builtin_return_address(0));
    return r;
}

EXPORT int munmap(void *a, size_t len)
{
    REAL(int (*)(void *, size_t), c_munmap, "munmap", -1)
    int r = real(a, len);
    if (r == 0)
        mapped(a, len, RW, NULL);
    return r;
}

/* the program's protections move with the pages; the old place is unmapped (or, with
 * MREMAP_DONTUNMAP, new anonymous memory: read-write as far as the table goes) */
EXPORT void *mremap(void *from, size_t olen, size_t nlen, int flags, ...)
{
    REAL(void *(*)(void *, size_t, size_t, int, ...), c_mremap, "mremap", MAP_FAILED)
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *r = real(from, olen, nlen, flags, want);
    if (r == MAP_FAILED || ours(__builtin_return_address(0)))
        return r;
    int e = errno;
    struct piece p[32];
    uintptr_t o = (uintptr_t)from, n = (uintptr_t)r;
    sigset_t old;
    lock(&old);
    int k = pieces(o, end_of(o, olen < nlen ? olen : nlen), p, 32);
    set_locked(o, end_of(o, olen), RW);
    set_locked(n, end_of(n, nlen), RW);
    for (int i = 0; i < k; i++)
        set_locked(p[i].lo - o + n, p[i].hi - o + n, p[i].prot);
    if (k > 0 && nlen > olen && p[k - 1].hi == end_of(o, olen)) /* grown: as its last page */
        set_locked(end_of(n, olen), end_of(n, nlen), p[k - 1].prot);
    unlock(&old);
    errno = e;
    return r;
}
