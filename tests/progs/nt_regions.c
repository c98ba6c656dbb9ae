/* SPDX-License-Identifier: BSD-3-Clause */
/* nt_regions - an unmodified OpenMP program that checks what `numaplace run --next-touch` did to
 * it (tests/guest/guest_regions.c runs it). Built by gcc (nt_regions_gcc: libgomp) and by clang
 * (nt_regions_clang: libomp); links nothing of numaplace: pages are asked of the kernel
 * (move_pages(2) without target nodes).
 *
 * One malloc'ed array of T blocks of 512 KiB (T = OpenMP threads), initialized serially by the
 * master (SI: every page on its node), then parallel regions in which each thread adds 1 to every
 * page of one block (its "own" block in that region). After the regions named below, each block's
 * pages are compared with the node its owner ran on in that region.
 *   nt_regions first        one region (thread t owns block t)
 *   nt_regions many N       N (<= 50) distinct regions, same owners (block t to thread t)
 *   nt_regions phase        A, A (block t to thread t), then B, B (block t to thread t-1)
 *   nt_regions phase3       A1, A2, A3 twice (same owners), then B eight times
 *   nt_regions io           A, then system calls on the whole array, each after a region of its
 *                           own that touches none of it (so the array is armed, untouched, when
 *                           the kernel copies): write, pread, fread, readv (into it), fwrite,
 *                           process_vm_readv and _writev with itself as the peer (a copy of the
 *                           array, armed too); the line "io: write W pread R fread F readv V
 *                           fwrite X process_vm_readv Y process_vm_writev Z of S bytes" must give
 *                           S seven times (an armed page made them EFAULT or short)
 * Lines: "runtime libgomp=G libomp=L" (mapped in /proc/self/maps), "after LABEL: B blocks, P
 * pages, W off their owner's node, threads on N nodes" for the checked regions, "writes: ok|LOST". Exit status: 0
 * when every checked page is on its owner's node and every write is there; 3 otherwise; 2
 * usage. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096
#define BLOCK (512 << 10) /* 8 chunks of 64 KiB */
#define PPB (BLOCK / PAGE)
#define MAXT 64

static double *a;
static int T, tnode[MAXT], adds[MAXT]; /* adds[b]: times block b's pages were incremented */
static int wrong;
static volatile int last_region;

static int my_node(void)
{
    unsigned cpu = 0, node = 0;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    return (int)node;
}

/* thread t adds 1 to every page of block b */
static void add_block(int t, int b)
{
    tnode[t] = my_node();
    double *p = a + (size_t)b * (BLOCK / sizeof *a);
    for (int i = 0; i < PPB; i++)
        p[(size_t)i * (PAGE / sizeof *a)] += 1.0;
}

/* block b's owner in a region where thread t owns block (t + shift) % T */
static int owner_of(int b, int shift) { return ((b - shift) % T + T) % T; }

static void check(const char *label, int shift)
{
    static void *pg[PPB];
    static int st[PPB];
    int off = 0;
    for (int b = 0; b < T; b++) {
        for (int i = 0; i < PPB; i++)
            pg[i] = (char *)a + (size_t)b * BLOCK + (size_t)i * PAGE;
        if (syscall(SYS_move_pages, 0, PPB, pg, NULL, st, 0) != 0)
            off += PPB;
        for (int i = 0; i < PPB; i++)
            off += st[i] != tnode[owner_of(b, shift)];
    }
    long nodes = 0;
    for (int t = 0; t < T; t++)
        nodes |= 1L << (tnode[t] & 63);
    printf("after %s: %d blocks, %d pages, %d off their owner's node, threads on %d nodes\n",
           label, T, T * PPB, off, __builtin_popcountl(nodes));
    wrong += off != 0;
}

/* one region per site: REGION(k) is a function with its own parallel construct, so each has its
 * own code address (the outlined body; the call's return address under OMPT); never inlined, so
 * that two calls of one are one region under both compilers */
#define REGION(k)                                                                                \
    static __attribute__((noinline)) void region_##k(int shift)                                  \
    {                                                                                            \
        _Pragma("omp parallel num_threads(T)")                                                   \
        {                                                                                        \
            int t = omp_get_thread_num();                                                        \
            if (t == 0) /* a body of its own: no two regions folded into one */                  \
                last_region = (k);                                                               \
            add_block(t, (t + shift) % T);                                                       \
        }                                                                                        \
        for (int b = 0; b < T; b++)                                                              \
            adds[b]++;                                                                           \
    }
#define R10(d)                                                                                   \
    REGION(d##0) REGION(d##1) REGION(d##2) REGION(d##3) REGION(d##4) REGION(d##5)             \
    REGION(d##6) REGION(d##7) REGION(d##8) REGION(d##9)
R10(1) R10(2) R10(3) R10(4) R10(5)
#define L10(d)                                                                                   \
    region_##d##0, region_##d##1, region_##d##2, region_##d##3, region_##d##4, region_##d##5,   \
        region_##d##6, region_##d##7, region_##d##8, region_##d##9
static void (*const regions[50])(int) = {L10(1), L10(2), L10(3), L10(4), L10(5)};

/* regions of their own that touch nothing of the array: their entries arm it */
static volatile int quiet_sink;
#define QUIET(k)                                                                                 \
    static __attribute__((noinline)) void quiet_##k(void)                                        \
    {                                                                                            \
        _Pragma("omp parallel num_threads(T)") if (omp_get_thread_num() == 0) quiet_sink = (k); \
    }
QUIET(1) QUIET(2) QUIET(3) QUIET(4) QUIET(5) QUIET(6) QUIET(7)

/* the io mode's system calls, each on the whole array right after a region armed it */
static int io_calls(void)
{
    size_t n = (size_t)T * BLOCK;
    char path[] = "/tmp/nt_regions_io.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 2;
    unlink(path);
    quiet_1();
    ssize_t w = write(fd, a, n);
    quiet_2();
    ssize_t r = pread(fd, a, n, 0);
    quiet_3();
    FILE *f = fdopen(dup(fd), "r+");
    size_t fr = 0, fw = 0;
    if (f && fseek(f, 0, SEEK_SET) == 0)
        fr = fread(a, 1, n, f);
    quiet_4();
    struct iovec iov[2] = {{a, n / 2}, {(char *)a + n / 2, n - n / 2}};
    ssize_t v = lseek(fd, 0, SEEK_SET) == 0 ? readv(fd, iov, 2) : -1;
    quiet_5();
    if (f && fseek(f, 0, SEEK_SET) == 0)
        fw = fwrite(a, 1, n, f);
    if (f)
        fclose(f);
    close(fd);
    /* an MPI library's single copy, this process as its own peer: a copy of the array (large:
     * registered too, and armed with it once filled) copied into the array, then back */
    char *copy = malloc(n);
    ssize_t pr = -1, pw = -1;
    if (copy) {
        memcpy(copy, a, n);
        quiet_6();
        struct iovec arr = {a, n}, cp = {copy, n};
        pr = process_vm_readv(getpid(), &arr, 1, &cp, 1, 0);
        quiet_7();
        pw = process_vm_writev(getpid(), &cp, 1, &arr, 1, 0);
        free(copy);
    }
    printf("io: write %zd pread %zd fread %zu readv %zd fwrite %zu process_vm_readv %zd "
           "process_vm_writev %zd of %zu bytes\n", w, r, fr, v, fw, pr, pw, n);
    return w == (ssize_t)n && r == (ssize_t)n && fr == n && v == (ssize_t)n && fw == n &&
                   pr == (ssize_t)n && pw == (ssize_t)n
               ? 0
               : 1;
}

static void runtime_line(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int gomp = 0, omp = 0;
    while (f && fgets(line, sizeof line, f)) {
        gomp += strstr(line, "/libgomp.so") != NULL;
        omp += strstr(line, "/libomp.so") != NULL;
    }
    if (f)
        fclose(f);
    printf("runtime libgomp=%d libomp=%d\n", gomp > 0, omp > 0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    T = omp_get_max_threads();
    if (T > MAXT)
        T = MAXT;
    a = malloc((size_t)T * BLOCK); /* T >= 4: >= 2 MiB, the interposer places and registers it */
    if (!a)
        return 2;
    for (size_t i = 0; i < (size_t)T * BLOCK / sizeof *a; i++) /* SI */
        a[i] = 1.0;
    runtime_line();
    if (!strcmp(mode, "first")) {
        regions[0](0);
        check("region 1", 0);
    } else if (!strcmp(mode, "many") && argc > 2 && atoi(argv[2]) >= 1 && atoi(argv[2]) <= 50) {
        int n = atoi(argv[2]);
        for (int k = 0; k < n; k++)
            regions[k](0);
        check("the last region", 0);
    } else if (!strcmp(mode, "phase")) {
        regions[0](0), regions[0](0);
        check("A", 0);
        regions[1](1);
        check("B", 1);
        regions[1](1);
        check("B again", 1);
    } else if (!strcmp(mode, "phase3")) {
        for (int it = 0; it < 2; it++)
            regions[0](0), regions[1](0), regions[2](0);
        check("A1 A2 A3 twice", 0);
        for (int it = 0; it < 8; it++) /* the first ones may only sample, then it is re-armed */
            regions[3](1);
        check("B eight times", 1);
    } else if (!strcmp(mode, "io")) {
        regions[0](0);
        check("A", 0);
        wrong += io_calls() != 0; /* the array's contents are compared below */
    } else {
        fprintf(stderr, "usage: nt_regions first | many N (1..50) | phase | phase3 | io\n");
        return 2;
    }
    int lost = 0; /* every page of block b holds 1 + adds[b] */
    for (int b = 0; b < T; b++)
        for (int i = 0; i < BLOCK / (int)sizeof *a; i++) {
            double want = 1.0 + (i % (PAGE / (int)sizeof *a) == 0 ? adds[b] : 0);
            lost += a[(size_t)b * (BLOCK / sizeof *a) + (size_t)i] != want;
        }
    printf("writes: %s\n", lost ? "LOST" : "ok");
    free(a);
    return wrong || lost ? 3 : 0;
}
