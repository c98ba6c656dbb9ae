/* SPDX-License-Identifier: BSD-3-Clause */
/* syscalls.c - the only file that makes NUMA system calls. Raw syscall(2) so that the library
 * needs no libnuma at run time; every call is counted (counters.c: statistics, benchmarks). */
#define _GNU_SOURCE
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void count(struct npl_counter *c, int kind)
{
    if (c)
        c->syscalls++;
    npl__count_syscall(kind);
}

#define WORD_BITS (8 * sizeof(unsigned long))
#define MASK_WORDS(bits) (((bits) + WORD_BITS - 1) / WORD_BITS)

/* Bits of the kernel's node masks: MAX_NUMNODES differs between builds and architectures (64 to
 * 1024 on Linux today); the mask we pass must hold at least as many. Probed once, like libnuma:
 * get_mempolicy(MPOL_F_MEMS_ALLOWED) fails with EINVAL while the mask is too small. */
static unsigned long kernel_mask_bits = 1024;
static pthread_once_t mask_once = PTHREAD_ONCE_INIT;

static void probe_mask_bits(void)
{
    for (unsigned long bits = 1024; bits <= (1ul << 16); bits *= 2) {
        unsigned long *w = calloc(MASK_WORDS(bits), sizeof *w);
        if (!w)
            return;
        count(NULL, NPL__SYS_GET_MEMPOLICY);
        long r = syscall(SYS_get_mempolicy, NULL, w, bits, NULL, MPOL_F_MEMS_ALLOWED);
        int e = errno;
        free(w);
        if (r == 0 || e != EINVAL) {
            kernel_mask_bits = bits;
            return;
        }
    }
}

static unsigned long mask_bits(void)
{
    pthread_once(&mask_once, probe_mask_bits);
    return kernel_mask_bits;
}

/* Bits a mask for these node ids needs: the kernel's size, or more for a larger id. */
static unsigned long bits_for(const int *nodes, int n)
{
    unsigned long bits = mask_bits();
    for (int i = 0; i < n; i++)
        if (nodes[i] >= 0 && (unsigned long)nodes[i] >= bits)
            bits = ((unsigned long)nodes[i] / WORD_BITS + 1) * WORD_BITS;
    return bits;
}

/* Fill a nodemask of `bits` bits (in the caller's memory, a VLA on its stack: placement workers
 * must not malloc, a new thread's first malloc creates a 64 MiB arena that stays in the process).
 * Returns 0, or -1 with errno EINVAL for a negative id. */
static int fill_mask(unsigned long *w, unsigned long bits, const int *nodes, int n)
{
    memset(w, 0, MASK_WORDS(bits) * sizeof *w);
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0) {
            errno = EINVAL;
            return -1;
        }
        w[(size_t)nodes[i] / WORD_BITS] |= 1UL << ((size_t)nodes[i] % WORD_BITS);
    }
    return 0;
}

long npl__mbind(struct npl_counter *c, void *addr, size_t len, int mode, const int *nodes, int n,
                unsigned flags)
{
    unsigned long bits = n > 0 ? bits_for(nodes, n) : WORD_BITS;
    unsigned long w[MASK_WORDS(bits)];
    if (n > 0 && fill_mask(w, bits, nodes, n) < 0)
        return -1;
    count(c, NPL__SYS_MBIND);
    return syscall(SYS_mbind, addr, len, mode, n > 0 ? w : NULL, n > 0 ? bits + 1 : 0, flags);
}

long npl__set_mempolicy(struct npl_counter *c, int mode, const int *nodes, int n)
{
    unsigned long bits = n > 0 ? bits_for(nodes, n) : WORD_BITS;
    unsigned long w[MASK_WORDS(bits)];
    if (n > 0 && fill_mask(w, bits, nodes, n) < 0)
        return -1;
    count(c, NPL__SYS_SET_MEMPOLICY);
    return syscall(SYS_set_mempolicy, mode, n > 0 ? w : NULL, n > 0 ? bits + 1 : 0);
}

long npl__get_mempolicy_node(struct npl_counter *c, const void *addr, int *node)
{
    count(c, NPL__SYS_GET_MEMPOLICY);
    return syscall(SYS_get_mempolicy, node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR);
}

long npl__move_pages(struct npl_counter *c, unsigned long cnt, void **pages, const int *nodes,
                     int *status, int flags)
{
    count(c, NPL__SYS_MOVE_PAGES);
    return syscall(SYS_move_pages, 0, cnt, pages, nodes, status, flags);
}

long npl__page_node(struct npl_counter *c, int pid, const void *addr, int *status)
{
    void *pg = (void *)addr;
    count(c, NPL__SYS_MOVE_PAGES);
    return syscall(SYS_move_pages, pid, 1UL, &pg, NULL, status, 0);
}

long npl__migrate_pages(struct npl_counter *c, int pid, const int *from, int nfrom, const int *to,
                        int nto)
{
    unsigned long bits = bits_for(from, nfrom), bto = bits_for(to, nto);
    if (bto > bits)
        bits = bto;
    unsigned long wf[MASK_WORDS(bits)], wt[MASK_WORDS(bits)];
    if (fill_mask(wf, bits, from, nfrom) < 0 || fill_mask(wt, bits, to, nto) < 0)
        return -1;
    count(c, NPL__SYS_MIGRATE_PAGES);
    return syscall(SYS_migrate_pages, pid, bits + 1, wf, wt);
}

int npl__madvise(struct npl_counter *c, void *addr, size_t len, int advice)
{
    count(c, -1);
    return madvise(addr, len, advice);
}

void *npl__map_nohuge(size_t len)
{
    char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return p;
    /* EINVAL: a kernel without THP, nothing to advise */
    if ((madvise(p, len, MADV_NOHUGEPAGE) < 0 && errno != EINVAL) ||
        mprotect(p, len, PROT_READ | PROT_WRITE) < 0) {
        int e = errno;
        munmap(p, len);
        errno = e;
        return MAP_FAILED;
    }
    return p;
}

int npl__mems_allowed(int *nodes, int max)
{
    unsigned long bits = mask_bits();
    unsigned long w[MASK_WORDS(bits)];
    memset(w, 0, sizeof w);
    count(NULL, NPL__SYS_GET_MEMPOLICY);
    if (syscall(SYS_get_mempolicy, NULL, w, bits, NULL, MPOL_F_MEMS_ALLOWED) < 0)
        return -1;
    int n = 0;
    for (unsigned long b = 0; b < bits; b++)
        if (w[b / WORD_BITS] & (1UL << (b % WORD_BITS))) {
            if (n < max)
                nodes[n] = (int)b;
            n++;
        }
    return n;
}

/* ---- capability probe: real calls on a scratch page, once per process ---- */
static struct npl_support support;
static pthread_once_t support_once = PTHREAD_ONCE_INIT;

static int works(long r) { return r == 0 || (errno != ENOSYS && errno != EPERM); }

static void probe(void)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = npl__map_nohuge((size_t)psz); /* its touch must not fault a THP into a neighbour */
    int mode = 0;
    count(NULL, NPL__SYS_GET_MEMPOLICY);
    support.get_mempolicy = works(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0));
    /* setting MPOL_DEFAULT on our own thread changes nothing that was not already default;
     * keep any policy the caller had: only probe when get_mempolicy said default */
    if (support.get_mempolicy && mode == MPOL_DEFAULT)
        support.set_mempolicy = works(npl__set_mempolicy(NULL, MPOL_DEFAULT, NULL, 0));
    else
        support.set_mempolicy = support.get_mempolicy;
    if (p != MAP_FAILED) {
        p[0] = 1;
        support.mbind = works(npl__mbind(NULL, p, (size_t)psz, MPOL_DEFAULT, NULL, 0, 0));
        void *pg = p;
        int st = -1;
        support.move_pages = works(npl__move_pages(NULL, 1, &pg, NULL, &st, 0));
        if (support.mbind) {
            int self = 0;
            npl__get_mempolicy_node(NULL, p, &self);
            support.preferred_many =
                npl__mbind(NULL, p, (size_t)psz, MPOL_PREFERRED_MANY, &self, 1, 0) == 0;
        }
        support.populate_write = madvise(p, (size_t)psz, MADV_POPULATE_WRITE) == 0;
        munmap(p, (size_t)psz);
    }
    support.thp = npl__fs_access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0;
    support.hugetlb_2m =
        npl__fs_access("/sys/kernel/mm/hugepages/hugepages-2048kB", R_OK) == 0;
    support.thp_locate = support.thp && npl__can_locate_thp();
}

const struct npl_support *npl_get_support(void)
{
    pthread_once(&support_once, probe);
    return &support;
}

/* Linux before 6.7 computes the node of an interleaved page from the low 32 bits of its index
 * ((unsigned int)n % nodes, mm/mempolicy.c offset_il_node); 6.7 and later from all 64 bits. The
 * two differ only for node counts that are not powers of two. */
static int il_bits;
static pthread_once_t il_once = PTHREAD_ONCE_INIT;
static void probe_il(void)
{
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2)
        il_bits = major > 6 || (major == 6 && minor >= 7) ? 64 : 32;
}
int npl__interleave_index_bits(void)
{
    pthread_once(&il_once, probe_il);
    return il_bits;
}

/* vm.max_map_count, read once (65530 when it cannot be read) */
static long max_maps;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;
static void probe_maps(void)
{
    char buf[32];
    max_maps = npl__fs_read_text("/proc/sys/vm/max_map_count", buf, sizeof buf) > 0
                   ? strtol(buf, NULL, 10) : 0;
    if (max_maps <= 0)
        max_maps = 65530;
}
long npl__max_map_count(void)
{
    pthread_once(&maps_once, probe_maps);
    return max_maps;
}
