/* SPDX-License-Identifier: BSD-3-Clause */
/* bench_common.h - small helpers shared by the benchmark programs (header only).
 * Built in two variants: with BENCH_NPL the program links libnumaplace and asks it where pages
 * are (npl_query_pages); without it (bench/progs/) the program links nothing of numaplace and asks
 * the kernel directly (move_pages(2) with no target nodes), so it can run unmodified under
 * `numaplace run`. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef BENCH_NPL
#include <numaplace.h>
#endif

#define BENCH_PAGE 4096UL
#define BENCH_MAX_NODES 64

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* node of the calling thread's current CPU (getcpu(2)); 0 when unknown */
static inline int bench_my_node(void)
{
    unsigned cpu = 0, node = 0;
    if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0)
        return 0;
    return (int)node;
}

/* splitmix64: seeded, reproducible, the same on every machine */
static inline uint64_t bench_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline double bench_unit(uint64_t *state) /* uniform in [0, 1) */
{
    *state = bench_mix(*state);
    return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

static inline size_t bench_pages(const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, first = a / BENCH_PAGE, last = (a + len - 1) / BENCH_PAGE;
    return len ? (size_t)(last - first + 1) : 0;
}

/* node of each page overlapping [addr, addr+len) into nodes (negative: not present).
 * Returns the page count, or -1 with errno. */
static inline long bench_page_nodes(const void *addr, size_t len, int *nodes)
{
    size_t n = bench_pages(addr, len);
#ifdef BENCH_NPL
    return npl_query_pages(addr, len, nodes, n);
#else
    uintptr_t base = (uintptr_t)addr & ~(BENCH_PAGE - 1);
    enum { BATCH = 4096 };
    void *pages[BATCH];
    for (size_t done = 0; done < n; done += BATCH) {
        size_t k = n - done < BATCH ? n - done : BATCH;
        for (size_t i = 0; i < k; i++)
            pages[i] = (void *)(base + (done + i) * BENCH_PAGE);
        if (syscall(SYS_move_pages, 0, (unsigned long)k, pages, NULL, nodes + done, 0) != 0)
            return -1;
    }
    return (long)n;
#endif
}

/* one counter from /proc/vmstat (-1 when absent) */
static inline long long bench_vmstat(const char *name)
{
    FILE *f = fopen("/proc/vmstat", "r");
    char key[128];
    long long v, found = -1;
    if (!f)
        return -1;
    while (fscanf(f, "%127s %lld", key, &v) == 2)
        if (strcmp(key, name) == 0)
            found = v;
    fclose(f);
    return found;
}

/* The numaplace variant's page size (--pages 4k|2m): 0, base pages; else 2 MiB hugetlb pages
 * (MAP_HUGETLB: reserve them first, e.g. tools/numavm --hugepages). The plain variant mallocs:
 * `numaplace run --huge 2M` gives it huge pages. */
static size_t bench_huge;

/* "4k" (0) or "2m"; -1 for anything else (the plain variant takes 4k only) */
static inline int bench_set_pages(const char *s)
{
    if (!strcmp(s, "4k"))
        bench_huge = 0;
#ifdef BENCH_NPL
    else if (!strcmp(s, "2m"))
        bench_huge = (size_t)2 << 20;
#endif
    else
        return -1;
    return 0;
}

/* page-aligned, untouched memory (first touch decides where it goes): its own mapping in the
 * numaplace variant (next-touch arms whole pages), malloc'ed in the plain variant so that
 * `numaplace run`'s interposer sees it */
static inline size_t bench_round(size_t bytes)
{
    size_t pg = bench_huge ? bench_huge : BENCH_PAGE;
    return bytes ? (bytes + pg - 1) & ~(pg - 1) : pg;
}

static inline void *bench_alloc(size_t bytes)
{
#ifdef BENCH_NPL
    void *p = mmap(NULL, bench_round(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (bench_huge ? MAP_HUGETLB : 0), -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    /* the plain programs ask for their arrays' own sizes, as a program does (NPB: n doubles),
     * page-aligned so that their pages are counted alike in every run */
    void *p = NULL;
    return posix_memalign(&p, BENCH_PAGE, bytes ? bytes : 1) == 0 ? p : NULL;
#endif
}

static inline void bench_free(void *p, size_t bytes)
{
#ifdef BENCH_NPL
    if (p)
        munmap(p, bench_round(bytes));
#else
    (void)bytes;
    free(p);
#endif
}

#endif
