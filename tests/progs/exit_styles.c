/* SPDX-License-Identifier: BSD-3-Clause */
/* exit_styles - ways a program ends or treats its process state, for `numaplace run`:
 *   exit_styles MODE [FILE]   MODE: none | thread (exit(42) from a thread) | abort | segv |
 *   nullwrite (a write to address 8: a fault, SIGSEGV code SEGV_MAPERR) |
 *   term (SIGTERM to itself) | mainexit (pthread_exit in main, another thread ends it) |
 *   quick (_exit(7)) | clearenv (then exec sh) | unsetenv (LD_PRELOAD, then system) |
 *   closefds (closes every fd, opens 3 files: the last, fd 2, is FILE; then large mallocs) |
 *   affinity (moves itself to its last allowed CPU, then a thread) |
 *   interleaved (prints 1 if /proc/self/numa_maps shows an interleave policy, else 0) |
 *   reserve MIB (mallocs MIB MiB and touches one byte of each MiB, as sparse tables do) |
 *   sparse MIB TOUCH (mallocs MIB MiB, writes its first TOUCH MiB, as worst-case buffers are
 *   used; prints its peak resident size, VmHWM, in MiB: tests/guest/guest_run_progs.c)
 * It makes one large allocation first. The exit status and the output must be the same with and
 * without numaplace run (tests/cli/test_run_progs.sh). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *exit_42(void *a) { printf("thread exits %s\n", (const char *)a); exit(42); }
static void *late(void *a) { (void)a; usleep(200000); printf("late thread done\n"); return NULL; }

static int close_all(const char *file)
{
    for (int fd = 0; fd < 1024; fd++)
        close(fd);
    FILE *f = fopen("/dev/null", "w"), *g = fopen("/dev/null", "w"), *h = fopen(file, "w");
    if (!f || !g || !h)
        return 1;
    for (int i = 0; i < 3; i++) {
        char *volatile p = malloc(8 << 20);
        p[0] = 1;
        free(p);
    }
    fprintf(h, "only this line\n");
    return fclose(h) != 0;
}

static int last_cpu(void)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    int last = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s))
            last = c;
    CPU_ZERO(&s);
    CPU_SET(last, &s);
    return sched_setaffinity(0, sizeof s, &s) ? -1 : last;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "none";
    char *volatile big = malloc(4 << 20);
    memset(big, 1, 4 << 20);
    printf("mode %s\n", m);
    pthread_t t;
    if (!strcmp(m, "thread") && !pthread_create(&t, NULL, exit_42, "now"))
        pause();
    if (!strcmp(m, "abort"))
        abort();
    if (!strcmp(m, "segv"))
        raise(SIGSEGV);
    if (!strcmp(m, "nullwrite")) {
        fflush(stdout);
        volatile int *volatile bad = (volatile int *)(uintptr_t)8;
        *bad = 1;
    }
    if (!strcmp(m, "term"))
        kill(getpid(), SIGTERM);
    if (!strcmp(m, "mainexit") && !pthread_create(&t, NULL, late, NULL))
        pthread_exit(NULL);
    if (!strcmp(m, "quick"))
        _exit(7);
    if (!strcmp(m, "clearenv")) {
        clearenv();
        setenv("X", "1", 1);
        fflush(stdout);
        execlp("sh", "sh", "-c", "echo child LD_PRELOAD=[$LD_PRELOAD] X=$X", (char *)NULL);
        return 127;
    }
    if (!strcmp(m, "unsetenv")) {
        unsetenv("LD_PRELOAD");
        setenv("FOO", "bar", 1);
        fflush(stdout);
        return system("echo child FOO=$FOO LD_PRELOAD=[$LD_PRELOAD]; exit 3") >> 8;
    }
    if (!strcmp(m, "interleaved")) {
        FILE *f = fopen("/proc/self/numa_maps", "r");
        char line[1024];
        int n = 0;
        while (f && fgets(line, sizeof line, f))
            n += strstr(line, " interleave") != NULL;
        printf("interleaved %d\n", n > 0);
    }
    if (!strcmp(m, "reserve")) {
        size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 64;
        char *volatile r = malloc(mib << 20);
        for (size_t i = 0; r && i < mib; i++)
            r[i << 20] = 1;
        printf("reserved %d\n", r != NULL);
        free(r);
    }
    if (!strcmp(m, "sparse") && argc > 3) {
        size_t mib = (size_t)atol(argv[2]), touch = (size_t)atol(argv[3]);
        char *r = malloc(mib << 20);
        if (r)
            memset(r, 1, (touch < mib ? touch : mib) << 20);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long hwm = -1;
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6))
                hwm = atol(line + 6) >> 10;
        if (f)
            fclose(f);
        printf("sparse %d peak_mib %ld\n", r != NULL, hwm);
        free(r);
    }
    if (!strcmp(m, "closefds"))
        return close_all(argc > 2 ? argv[2] : "/dev/null");
    if (!strcmp(m, "affinity")) {
        int cpu = last_cpu();
        if (pthread_create(&t, NULL, late, NULL) == 0)
            pthread_join(t, NULL);
        printf("main still on its CPU: %d\n", cpu >= 0 && sched_getcpu() == cpu);
    }
    free(big);
    return 0;
}
