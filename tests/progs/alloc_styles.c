/* SPDX-License-Identifier: BSD-3-Clause */
/* alloc_styles - every way C code gets memory, with a checksum of the data written through each:
 * malloc, calloc (checked zero), realloc shrinking, growing, to small and from small, posix_memalign,
 * aligned_alloc, valloc, memalign, pvalloc, reallocarray, mmap, open_memstream (the C library
 * reallocating), allocations below any threshold, and a block freed by another thread. Prints
 * "checksum X"; `numaplace run` must not change it (tests/cli/test_run_progs.sh). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static uint64_t sum(const unsigned char *p, size_t n) { uint64_t s = 1469598103934665603ull; for (size_t i = 0; i < n; i += 61) s = (s ^ p[i]) * 1099511628211ull; return s; }
static void fill(unsigned char *p, size_t n, int seed) { for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + seed); }
static void *freer(void *a) { free(a); return NULL; }
int main(void)
{
    size_t M = 1 << 20; uint64_t s = 0;
    unsigned char *a = malloc(8 * M); fill(a, 8 * M, 1); s ^= sum(a, 8 * M);
    unsigned char *b = calloc(3 * M, 3); for (size_t i = 0; i < 9 * M; i++) if (b[i]) return 90; fill(b, 9 * M, 2); s ^= sum(b, 9 * M);
    a = realloc(a, 4 * M); s ^= sum(a, 4 * M);            /* shrink */
    a = realloc(a, 16 * M); s ^= sum(a, 4 * M); fill(a, 16 * M, 3); s ^= sum(a, 16 * M); /* grow */
    a = realloc(a, 100); s ^= sum(a, 100);                  /* to small */
    a = realloc(a, 5 * M); s ^= sum(a, 100);                /* small to large */
    void *c; if (posix_memalign(&c, 64, 3 * M)) return 91; fill(c, 3 * M, 4); s ^= sum(c, 3 * M);
    void *d = aligned_alloc(4096, 2 * M); fill(d, 2 * M, 5); s ^= sum(d, 2 * M);
    void *e = valloc(2 * M); fill(e, 2 * M, 6); s ^= sum(e, 2 * M);
    void *f = memalign(256, 2 * M); fill(f, 2 * M, 7); s ^= sum(f, 2 * M);
    void *g = pvalloc(2 * M); fill(g, 2 * M, 8); s ^= sum(g, 2 * M);
    unsigned char *h = reallocarray(NULL, 2, M); fill(h, 2 * M, 9); h = reallocarray(h, 4, M); s ^= sum(h, 2 * M); fill(h, 4*M, 10); s ^= sum(h, 4*M);
    unsigned char *m = mmap(NULL, 4 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); fill(m, 4 * M, 11); s ^= sum(m, 4 * M); munmap(m, 4 * M);
    char *small = malloc(1000); strcpy(small, "small"); s ^= sum((unsigned char*)small, 6);
    printf("usable ok %d\n", malloc_usable_size(b) >= 9 * M);
    pthread_t t; pthread_create(&t, NULL, freer, b); pthread_join(t, NULL);
    free(a); free(c); free(d); free(e); free(f); free(g); free(h); free(small);
    char *line = NULL; size_t cap = 0; FILE *fm = open_memstream(&line, &cap); for (int i = 0; i < 200000; i++) fprintf(fm, "%d,", i); fclose(fm); s ^= sum((unsigned char*)line, strlen(line)); free(line);
    printf("checksum %016llx\n", (unsigned long long)s);
    return 0;
}
