/* SPDX-License-Identifier: BSD-3-Clause */
/* check.h - minimal test helpers: every CHECK counts, every SKIP (skip.h) too; the summary line
 * is "NAME: N passed, M failed, S skipped". */
#ifndef NPL_CHECK_H
#define NPL_CHECK_H
#include "skip.h"
#include <dirent.h>
#include <stdint.h>
#include <numaplace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_pass, t_fail, t_skip;
#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (cond) {                                                                              \
            t_pass++;                                                                            \
        } else {                                                                                 \
            t_fail++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                          \
            printf(__VA_ARGS__);                                                                 \
            printf("\n");                                                                        \
            fflush(stdout);                                                                      \
        }                                                                                        \
    } while (0)

/* A check that cannot run here: SKIP("key", "why %s", ...) (skip.h: a failure under CI=true
 * unless the key is an expected skip). */
#define SKIP(key, ...)                                                                           \
    do {                                                                                         \
        if (skip_verdict(key, __FILE__, __LINE__, __VA_ARGS__))                                  \
            t_skip++;                                                                            \
        else                                                                                     \
            t_fail++;                                                                            \
    } while (0)

/* Compare an int vector with a space-separated expected string. */
static inline int vec_equals(const int *v, size_t n, const char *expected, char *got, size_t gsz)
{
    size_t off = 0;
    got[0] = 0;
    for (size_t i = 0; i < n && off + 16 < gsz; i++)
        off += (size_t)snprintf(got + off, gsz - off, "%s%d", i ? " " : "", v[i]);
    return strcmp(got, expected) == 0;
}

/* Turn the kernel's automatic NUMA balancing off (guest programs that check exact placement:
 * it would move pages under them); silent where /proc/sys cannot be written. */
static inline void numa_balancing_off(void)
{
    FILE *b = fopen("/proc/sys/kernel/numa_balancing", "w");
    if (b) {
        fputs("0", b);
        fclose(b);
    }
}

/* Mappings of /proc/self/maps that overlap [lo, hi). */
static inline int maps_between(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* The process's mappings. Under TSan, not those of its metainfo region (0x3000'0000'0000 to
 * 0x3400'0000'0000 on x86-64), which the runtime maps lazily as memory gets touched: they are
 * the sanitizer's, and made "mappings added by an allocation" vary from run to run. */
static inline int count_maps(void)
{
    int n = maps_between(0, UINTPTR_MAX);
#if defined(__SANITIZE_THREAD__) && defined(__x86_64__)
    n -= maps_between((uintptr_t)0x300000000000ull, (uintptr_t)0x340000000000ull);
#endif
    return n;
}

/* The process's open file descriptors. */
static inline int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* No free 2 MiB hugetlb page (HugePages_Free: 0): the cases that need an empty pool can run. */
static inline int hugetlb_pool_empty(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long free_pages = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
            break;
    if (f)
        fclose(f);
    return free_pages == 0;
}

/* What a failure must give back: mappings, open files, live arrays (tests of hostile input). */
struct usage {
    int maps, fds;
    uint64_t arrays;
};

/* Mappings of /proc/self/maps that overlap [a, a+len). */
static inline int maps_in(const void *a, size_t len)
{
    return maps_between((uintptr_t)a, (uintptr_t)a + len);
}

static inline npl_policy *pol(const char *s)
{
    npl_policy *p;
    if (npl_policy_parse(&p, s) < 0) {
        printf("parse %s: %s\n", s, npl_last_error());
        exit(120);
    }
    return p;
}

/* FNV-1a's step over a buffer's 8-byte words (then its last bytes): data before/after a move
 * must be identical. Word by word: a byte chain cost seconds a call under TCG and TSan. */
static inline uint64_t checksum(const unsigned char *a, size_t n)
{
    uint64_t h = 1469598103934665603ULL, w;
    size_t i = 0;
    for (; i + sizeof w <= n; i += sizeof w) {
        memcpy(&w, a + i, sizeof w);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29; /* the high bytes of a word reach the low ones */
    }
    for (; i < n; i++)
        h = (h ^ a[i]) * 1099511628211ULL;
    return h;
}

/* The guest runner's arguments: --nodes N --cpus-per-node K (others ignored). */
/* OS ids of the nodes with memory this process may use: how many (at most max) */
static inline int usable_nodes(int *out, int max)
{
    const npl_topo *t = npl_topo_self();
    int n = 0;
    for (int i = 0; t && i < npl_topo_node_count(t, 1) && n < max; i++) {
        struct npl_node_info ni;
        if (npl_topo_node_info(t, i, &ni) == 0 && ni.allowed && ni.memory_bytes)
            out[n++] = ni.os_id;
    }
    return n;
}

static inline void guest_args(int argc, char **argv, int *n, int *k)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            *n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            *k = atoi(argv[++i]);
    }
}

/* The summary line; the exit status: 0 passed, 1 a check failed or none ran at all,
 * NPL_EXIT_SKIPPED (77) every check was skipped (never counted as passed). */
static inline int check_summary(const char *name)
{
    if (t_pass + t_fail + t_skip == 0) {
        printf("FAIL %s: no check ran\n", name);
        t_fail++;
    }
    printf("%s: %d passed, %d failed, %d skipped\n", name, t_pass, t_fail, t_skip);
    fflush(stdout);
    return t_fail ? 1 : t_pass ? 0 : NPL_EXIT_SKIPPED;
}
#endif
