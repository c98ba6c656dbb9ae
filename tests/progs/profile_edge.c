/* SPDX-License-Identifier: BSD-3-Clause */
/* profile_edge.c - programs that `numaplace profile` must not change (tests/cli/test_profile.sh):
 * each mode allocates arrays over the 1 MiB threshold, touches them, and prints what it saw.
 *   fork      the parent and a forked child both allocate and touch arrays
 *   exec      the process replaces itself with `profile_edge touch` (no fork)
 *   touch     allocate, touch, print a checksum
 *   segv      the program's own SIGSEGV handler, installed after its arrays: a real fault on a
 *             PROT_NONE page of its own goes to it (it prints and exits 42)
 *   segv_early the same, installed before the arrays are allocated
 *   io FILE   read(2), pread(2), fread(3) of FILE into large arrays, then write(2) of them to
 *             stdout: the bytes must come back unchanged (no EFAULT from protected pages)
 *   exit N    exit status N after touching; kill: dies of SIGTERM after touching
 *   static    a 4 MiB static array written by the main thread and read back
 *   final     two pthreads each initialise and update their half of an 8 MiB array for 0.4 s,
 *             then the main thread alone reads it all for 0.3 s (a final pass, after the joins)
 *   unsampled the main thread writes an 8 MiB table; pthread 1 reads it for 0.6 s while pthreads
 *             2-4 (created after it) spin on their own stack for as long, touching no array:
 *             prints "unsampled 1" when the sums agree
 *   barriers  two pthreads update their halves of an 8 MiB array in 8 passes of at least 150 ms
 *             (longer than a time window; the fourth 10 ms), each ended by
 *             pthread_barrier_wait, then go on 0.8 s
 *             without a barrier: prints "barriers 8" (the rounds the barrier returned its
 *             serial thread in)
 *   odd       an array of 3 MiB + 1,000 bytes (not a whole number of pages), written and read
 *   sparse    a 256 MiB block of which one byte a MiB is written: prints the resident KiB the
 *             block added before it was touched and after ("sparse untouched U touched T sum S") */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)
static double static_big[MIB / 2]; /* 4 MiB */

static double touch(size_t mib, double seed)
{
    size_t n = mib * MIB / sizeof(double);
    double *a = malloc(n * sizeof *a), s = 0;
    if (!a)
        exit(3);
    for (size_t i = 0; i < n; i++)
        a[i] = seed + (double)(i % 13);
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < n; i += 64)
            s += a[i];
    free(a);
    return s;
}

static char *guard;
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)ctx;
    char msg[128];
    int n = snprintf(msg, sizeof msg, "own handler: fault at guard+%ld\n",
                     (long)((char *)si->si_addr - guard));
    if (write(1, msg, (size_t)n) < 0)
        _exit(1);
    _exit(42);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
}

static int segv(int early)
{
    guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (early)
        install();
    size_t n = 8 * MIB / sizeof(double);
    double *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = (double)i;
    if (!early)
        install();
    double s = 0;
    for (int rep = 0; rep < 50; rep++) /* long enough for the sampler's pages to be hit */
        for (size_t i = 0; i < n; i += 512)
            s += a[i];
    printf("sum %.1f\n", s);
    fflush(stdout);
    return *(volatile char *)(guard + 100); /* the program's own fault */
}

static int io(const char *file)
{
    size_t n = 6 * MIB;
    char *a = malloc(n), *b = malloc(n), *c = malloc(n);
    int fd = open(file, O_RDONLY);
    if (!a || !b || !c || fd < 0)
        return 3;
    ssize_t ra = read(fd, a, n), rb = pread(fd, b, n, 0);
    FILE *f = fopen(file, "rb");
    size_t rc = f ? fread(c, 1, n, f) : 0;
    if (f)
        fclose(f);
    close(fd);
    if (ra < 0 || rb != ra || (ssize_t)rc != ra || memcmp(a, b, (size_t)ra) || memcmp(a, c, rc)) {
        fprintf(stderr, "io: read %zd, pread %zd, fread %zu\n", ra, rb, rc);
        return 4;
    }
    for (ssize_t off = 0; off < ra;) {
        ssize_t w = write(1, a + off, (size_t)(ra - off));
        if (w <= 0)
            return 5;
        off += w;
    }
    return 0;
}

/* final: the workers' slices, then the main thread alone */
static double *fin;
static size_t fin_n;
static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
/* worker t (of 2) updates its half of fin for secs seconds */
static void update_half(size_t t, double secs)
{
    size_t lo = t * fin_n / 2, hi = (t + 1) * fin_n / 2;
    for (double t0 = seconds(); seconds() - t0 < secs;)
        for (size_t i = lo; i < hi; i++)
            fin[i] = fin[i] * 0.5 + 1;
}
/* two pthreads run worker(0) and worker(1), joined: 0, or 3 when one cannot start */
static int two_workers(void *(*worker)(void *))
{
    pthread_t th[2];
    for (size_t t = 0; t < 2; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t))
            return 3;
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    return 0;
}
static void *fin_worker(void *arg)
{
    size_t t = (size_t)(uintptr_t)arg;
    for (size_t i = t * fin_n / 2; i < (t + 1) * fin_n / 2; i++)
        fin[i] = (double)(i % 13);
    update_half(t, 0.4);
    return NULL;
}
static int final_pass(void)
{
    fin_n = 8 * MIB / sizeof(double);
    if (!(fin = malloc(fin_n * sizeof *fin)) || two_workers(fin_worker))
        return 3;
    double sum = 0;
    long passes = 0;
    for (double t0 = seconds(); seconds() - t0 < 0.3; passes++)
        for (size_t i = 0; i < fin_n; i++)
            sum += fin[i];
    printf("final %d\n", passes > 0 && sum > 0);
    free(fin);
    return 0;
}

/* unsampled: one reader, three threads busy on nothing tracked */
static volatile int uns_stop;
static void *uns_reader(void *arg)
{
    double *sum = arg;
    while (!uns_stop)
        for (size_t i = 0; i < fin_n; i += 8)
            *sum += fin[i];
    return NULL;
}
static void *uns_spinner(void *arg)
{
    volatile double x = 1;
    while (!uns_stop)
        x = x * 0.999 + 1;
    *(double *)arg = x;
    return NULL;
}
static int unsampled(void)
{
    fin_n = 8 * MIB / sizeof(double);
    if (!(fin = malloc(fin_n * sizeof *fin)))
        return 3;
    for (size_t i = 0; i < fin_n; i++)
        fin[i] = 1;
    double res[4] = {0, 0, 0, 0};
    pthread_t th[4];
    for (int t = 0; t < 4; t++)
        if (pthread_create(&th[t], NULL, t ? uns_spinner : uns_reader, &res[t]))
            return 3;
    for (double t0 = seconds(); seconds() - t0 < 0.6;)
        usleep(10000);
    uns_stop = 1;
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    /* whole passes of fin_n / 8 ones each, plus a partial one: a whole number */
    printf("unsampled %d\n", res[0] > 0 && res[0] == (double)(long long)res[0]);
    free(fin);
    return 0;
}

/* barriers: passes ended by a pthread barrier, then a stretch without one */
static pthread_barrier_t bar;
static _Atomic int serial_rounds;
static void *bar_worker(void *arg)
{
    size_t t = (size_t)(uintptr_t)arg;
    for (int pass = 0; pass < 8; pass++) {
        update_half(t, pass == 3 ? 0.01 : 0.15);
        if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
            serial_rounds++;
    }
    update_half(t, 0.8);
    return NULL;
}
static int barrier_passes(void)
{
    fin_n = 8 * MIB / sizeof(double);
    if (!(fin = calloc(fin_n, sizeof *fin)) || pthread_barrier_init(&bar, NULL, 2) ||
        two_workers(bar_worker))
        return 3;
    pthread_barrier_destroy(&bar);
    printf("barriers %d\n", serial_rounds);
    free(fin);
    return 0;
}

/* VmRSS of this process in KiB, or -1 */
static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "touch";
    if (!strcmp(mode, "touch")) {
        printf("touch %.1f\n", touch(8, 1));
        return 0;
    }
    if (!strcmp(mode, "final"))
        return final_pass();
    if (!strcmp(mode, "unsampled"))
        return unsampled();
    if (!strcmp(mode, "barriers"))
        return barrier_passes();
    if (!strcmp(mode, "odd")) {
        size_t n = 3 * MIB + 1000;
        unsigned char *a = malloc(n);
        unsigned long s = 0;
        if (!a)
            return 3;
        for (size_t i = 0; i < n; i++)
            a[i] = (unsigned char)(i % 251);
        for (size_t i = 0; i < n; i += 7)
            s += a[i];
        free(a);
        printf("odd %lu\n", s);
        return 0;
    }
    if (!strcmp(mode, "sparse")) {
        size_t n = 256 * MIB;
        long r0 = resident_kib();
        unsigned char *a = malloc(n);
        if (!a)
            return 3;
        long r1 = resident_kib();
        unsigned long s = 0;
        for (size_t i = 0; i < n; i += MIB)
            a[i] = (unsigned char)(i / MIB % 251);
        for (size_t i = 0; i < n; i += MIB)
            s += a[i];
        long r2 = resident_kib();
        printf("sparse untouched %ld touched %ld sum %lu\n", r1 - r0, r2 - r0, s);
        free(a);
        return 0;
    }
    if (!strcmp(mode, "fork")) {
        double s = touch(4, 1);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child %.1f\n", touch(6, 2));
            return 7;
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("parent %.1f %.1f child status %d\n", s, touch(5, 3), WEXITSTATUS(st));
        return 0;
    }
    if (!strcmp(mode, "exec")) {
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "touch", (char *)NULL);
        return 9;
    }
    if (!strcmp(mode, "segv") || !strcmp(mode, "segv_early"))
        return segv(!strcmp(mode, "segv_early"));
    if (!strcmp(mode, "io") && argc > 2)
        return io(argv[2]);
    if (!strcmp(mode, "exit") && argc > 2) {
        printf("touch %.1f\n", touch(4, 1));
        return atoi(argv[2]);
    }
    if (!strcmp(mode, "kill")) {
        printf("touch %.1f\n", touch(4, 1));
        fflush(stdout);
        raise(SIGTERM);
        return 0;
    }
    if (!strcmp(mode, "static")) {
        double s = 0;
        for (size_t i = 0; i < MIB / 2; i++)
            static_big[i] = (double)(i % 5);
        for (size_t i = 0; i < MIB / 2; i += 8)
            s += static_big[i];
        printf("static %.1f\n", s);
        return 0;
    }
    fprintf(stderr, "usage: profile_edge fork|exec|touch|segv|segv_early|io FILE|exit N|kill|static\n");
    return 2;
}
