/* sys.c - the only file that makes NUMA system calls. Raw syscall(2) so that the library
 * needs no libnuma at run time; every call is counted (statistics, benchmarks). */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

_Atomic uint64_t npl__total_syscalls;

static void count(struct npl_counter *c)
{
    if (c)
        c->syscalls++;
    atomic_fetch_add_explicit(&npl__total_syscalls, 1, memory_order_relaxed);
}

#define MASK_NODES 1024 /* node ids 0..1023: the kernel's MAX_NUMNODES on x86-64 */
#define WORD_BITS (8 * sizeof(unsigned long))
struct node_mask {
    unsigned long w[MASK_NODES / WORD_BITS];
};

/* A nodemask for n node ids, in the caller's memory: placement workers call this and must not
 * malloc (a new thread's first malloc creates a 64 MiB arena that stays in the process). Returns
 * what the kernel wants as maxnode (bits + 1), 0 with errno EINVAL for an id out of range. */
static unsigned long make_mask(struct node_mask *m, const int *nodes, int n)
{
    memset(m, 0, sizeof *m);
    int top = 0;
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] >= MASK_NODES) {
            errno = EINVAL;
            return 0;
        }
        m->w[(size_t)nodes[i] / WORD_BITS] |= 1UL << ((size_t)nodes[i] % WORD_BITS);
        if (nodes[i] > top)
            top = nodes[i];
    }
    return ((size_t)top / WORD_BITS + 1) * WORD_BITS + 1;
}

long npl__mbind(struct npl_counter *c, void *addr, size_t len, int mode, const int *nodes, int n,
                unsigned flags)
{
    struct node_mask m;
    unsigned long maxnode = 0;
    if (n > 0 && !(maxnode = make_mask(&m, nodes, n)))
        return -1;
    count(c);
    return syscall(SYS_mbind, addr, len, mode, n > 0 ? m.w : NULL, maxnode, flags);
}

long npl__set_mempolicy(struct npl_counter *c, int mode, const int *nodes, int n)
{
    struct node_mask m;
    unsigned long maxnode = 0;
    if (n > 0 && !(maxnode = make_mask(&m, nodes, n)))
        return -1;
    count(c);
    return syscall(SYS_set_mempolicy, mode, n > 0 ? m.w : NULL, maxnode);
}

long npl__get_mempolicy_node(struct npl_counter *c, const void *addr, int *node)
{
    count(c);
    return syscall(SYS_get_mempolicy, node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR);
}

long npl__move_pages(struct npl_counter *c, unsigned long cnt, void **pages, const int *nodes,
                     int *status, int flags)
{
    count(c);
    return syscall(SYS_move_pages, 0, cnt, pages, nodes, status, flags);
}

int npl__madvise(struct npl_counter *c, void *addr, size_t len, int advice)
{
    count(c);
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
    enum { WORDS = 1024 / (8 * sizeof(unsigned long)) };
    unsigned long mask[WORDS];
    memset(mask, 0, sizeof mask);
    count(NULL);
    if (syscall(SYS_get_mempolicy, NULL, mask, (unsigned long)WORDS * 8 * sizeof(unsigned long),
                NULL, MPOL_F_MEMS_ALLOWED) < 0)
        return -1;
    int n = 0;
    for (int b = 0; b < (int)(WORDS * 8 * sizeof(unsigned long)); b++)
        if (mask[b / (8 * sizeof(unsigned long))] & (1UL << (b % (8 * sizeof(unsigned long))))) {
            if (n < max)
                nodes[n] = b;
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
    support.get_mempolicy = works(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0));
    /* setting MPOL_DEFAULT on our own thread changes nothing that was not already default;
     * keep any policy the caller had: only probe when get_mempolicy said default */
    if (support.get_mempolicy && mode == MPOL_DEFAULT)
        support.set_mempolicy = works(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0));
    else
        support.set_mempolicy = support.get_mempolicy;
    if (p != MAP_FAILED) {
        p[0] = 1;
        support.mbind = works(syscall(SYS_mbind, p, psz, MPOL_DEFAULT, NULL, 0, 0));
        void *pg = p;
        int st = -1;
        support.move_pages = works(syscall(SYS_move_pages, 0, 1, &pg, NULL, &st, 0));
        if (support.mbind) {
            int self = 0;
            syscall(SYS_get_mempolicy, &self, NULL, 0, p, MPOL_F_NODE | MPOL_F_ADDR);
            struct node_mask m;
            unsigned long maxnode = make_mask(&m, &self, 1);
            if (maxnode)
                support.preferred_many =
                    syscall(SYS_mbind, p, psz, MPOL_PREFERRED_MANY, m.w, maxnode, 0) == 0;
        }
        support.populate_write = madvise(p, (size_t)psz, MADV_POPULATE_WRITE) == 0;
        munmap(p, (size_t)psz);
    }
    support.thp = access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0;
    support.hugetlb_2m = access("/sys/kernel/mm/hugepages/hugepages-2048kB", R_OK) == 0;
}

const struct npl_support *npl_get_support(void)
{
    pthread_once(&support_once, probe);
    return &support;
}
