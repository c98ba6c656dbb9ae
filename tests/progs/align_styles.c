/* SPDX-License-Identifier: BSD-3-Clause */
/* align_styles - every C entry point of the allocator at every power-of-two alignment from 8 bytes
 * to 2 MiB, as codes that want SIMD rows, cache lines, pages or huge pages ask for memory:
 * malloc, calloc, realloc (growing a block), reallocarray, valloc, pvalloc, and posix_memalign,
 * aligned_alloc and memalign at each alignment. Each block (1 MiB + 20 KiB by default: above
 * `numaplace run`'s threshold) is written whole, read back and freed; calloc's must be zero,
 * realloc's must keep its old bytes, every block must have its alignment. Prints one line per
 * block ("STYLE ALIGN ok 1 aligned 1") and a checksum: `numaplace run` must change none of them
 * (tests/cli/test_run_progs.sh, with glibc and with jemalloc, tcmalloc and mimalloc linked in).
 *   align_styles [--nodes] [KIB]   --nodes: each line also gets "nodes D..." (the node of each
 *                                  page, one character each: 0-9 then a-z, '-' absent), read by
 *                                  the guest's page-exact check (tests/guest/guest_run_progs.c)
 * Built with -DNPL_NO_GLIBC_ONLY for the other allocators: jemalloc has no pvalloc nor
 * reallocarray, and the C library's then hand its blocks to jemalloc's free (a crash without
 * numaplace too). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PSZ 4096
static int show_nodes;
static uint64_t total = 1469598103934665603ull;

/* the node of each page, by move_pages(2) with no target (the program's own view, no library) */
static void print_nodes(const unsigned char *p, size_t n)
{
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(PSZ - 1);
    size_t np = ((uintptr_t)p + n - lo + PSZ - 1) / PSZ;
    void **pages = malloc(np * sizeof *pages);
    int *st = malloc(np * sizeof *st);
    char *s = malloc(np + 1);
    for (size_t i = 0; i < np; i++)
        pages[i] = (void *)(lo + i * PSZ);
    long rc = syscall(SYS_move_pages, 0, np, pages, NULL, st, 0);
    for (size_t i = 0; i < np; i++)
        s[i] = rc < 0 || st[i] < 0 ? '-' : st[i] < 10 ? (char)('0' + st[i]) : (char)('a' + st[i] - 10);
    s[np] = 0;
    printf(" offset %zu nodes %s", (size_t)((uintptr_t)p - lo), s);
    free(pages);
    free(st);
    free(s);
}

/* write, read back, report and free one block; `kept` bytes must hold the old pattern */
static void check(const char *style, size_t align, unsigned char *p, size_t n, size_t kept, int zero)
{
    int ok = p != NULL, aligned = p && (uintptr_t)p % (align ? align : 1) == 0;
    for (size_t i = 0; ok && zero && i < n; i++)
        ok = p[i] == 0;
    for (size_t i = 0; ok && i < kept; i++)
        ok = p[i] == (unsigned char)(i * 7 + 1);
    for (size_t i = 0; ok && i < n; i++)
        p[i] = (unsigned char)(i * 13 + align);
    uint64_t s = 1469598103934665603ull;
    for (size_t i = 0; ok && i < n; i += 61)
        s = (s ^ p[i]) * 1099511628211ull;
    total = (total ^ s) * 1099511628211ull;
    printf("%s %zu ok %d aligned %d", style, align, ok, aligned);
    if (show_nodes && p)
        print_nodes(p, n);
    printf("\n");
    free(p);
}

static unsigned char *grown(size_t n, int array)
{
    unsigned char *p = malloc(n / 2);
    for (size_t i = 0; p && i < n / 2; i++)
        p[i] = (unsigned char)(i * 7 + 1);
#ifndef NPL_NO_GLIBC_ONLY
    if (array)
        return reallocarray(p, n / 64, 64);
#else
    (void)array;
#endif
    return realloc(p, n);
}

int main(int argc, char **argv)
{
    size_t kib = 1024 + 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            show_nodes = 1;
        else
            kib = (size_t)atol(argv[i]);
    }
    size_t n = kib << 10;
    check("malloc", 0, malloc(n), n, 0, 0);
    check("calloc", 0, calloc(n / 64, 64), n, 0, 1);
    check("realloc", 0, grown(n, 0), n, n / 2, 0);
#ifndef NPL_NO_GLIBC_ONLY
    check("reallocarray", 0, grown(n, 1), n, n / 2, 0);
    check("pvalloc", PSZ, pvalloc(n), n, 0, 0);
#endif
    check("valloc", PSZ, valloc(n), n, 0, 0);
    for (size_t a = 8; a <= (size_t)2 << 20; a *= 2) {
        void *p = NULL;
        if (posix_memalign(&p, a, n))
            p = NULL;
        check("posix_memalign", a, p, n, 0, 0);
        check("aligned_alloc", a, aligned_alloc(a, n), n, 0, 0);
        check("memalign", a, memalign(a, n), n, 0, 0);
    }
    printf("checksum %016llx\n", (unsigned long long)total);
    return 0;
}
