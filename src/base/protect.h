/* SPDX-License-Identifier: BSD-3-Clause */
/* protect.h - giving pages back never widens a protection the program set. The interposer
 * (preload/protect.c) tracks the program's mprotect, pkey_mprotect, mmap, mremap and munmap and
 * defines npl__prot_restore: a range numaplace protected (a sampled page, a first-touch unit, a
 * next-touch chunk) gets back the program's own protection where the program set one. Without
 * the interposer (libnumaplace in a program) it is a plain mprotect. */
#ifndef NPL_BASE_PROTECT_H
#define NPL_BASE_PROTECT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* give [a, a + len) back prot (PROT_READ: a page sampled for reads; otherwise the range's own),
 * but where the program set a protection, the program's (without PROT_WRITE when prot lacks
 * it); 0 or -1. Async-signal-safe, allocates nothing. */
int npl__prot_restore(uintptr_t a, size_t len, int prot)
    __attribute__((weak, visibility("hidden")));

/* protect [a, a + len) PROT_NONE unless the program set a protection in it (-1, EAGAIN): a
 * sampled page is never one the program protected, whose faults are the program's */
int npl__prot_arm(uintptr_t a, size_t len) __attribute__((weak, visibility("hidden")));

/* 1: the program set a protection on some of [a, a + len) (not sampled, not armed) */
int npl__prot_set_by_program(uintptr_t a, size_t len) __attribute__((weak, visibility("hidden")));

static inline int npl__program_protected(uintptr_t a, size_t len)
{
    return npl__prot_set_by_program ? npl__prot_set_by_program(a, len) : 0;
}

static inline int npl__arm(uintptr_t a, size_t len)
{
    if (npl__prot_arm)
        return npl__prot_arm(a, len);
    return syscall(SYS_mprotect, (void *)a, len, PROT_NONE) < 0 ? -1 : 0;
}

static inline int npl__give_back(uintptr_t a, size_t len, int prot)
{
    if (npl__prot_restore)
        return npl__prot_restore(a, len, prot);
    return syscall(SYS_mprotect, (void *)a, len, prot) < 0 ? -1 : 0;
}
#endif
