/* SPDX-License-Identifier: BSD-3-Clause */
/* nt_agent - a shared library that arms next-touch inside a JVM: loaded with LD_PRELOAD, its
 * constructor arms a 4 MiB range before the JVM starts and installs its own SIGSEGV handler
 * (which takes the JVM's implicit null checks, safepoint polls and stack banging); a thread then
 * re-arms and touches the range 20 times while the Java program runs. At exit it prints
 * "nt_agent: rounds R, next-touch faults F, bad bytes B" on stderr
 * (tests/host/test_hostile_signals.sh). It does nothing in a process that is not java. */
#define _GNU_SOURCE
#include <numaplace/migrate.h>
#include <numaplace.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LEN (4u << 20)
static unsigned char *region;
static pthread_t th;
static int started, rounds;
static unsigned long bad;

static void *churn(void *p)
{
    (void)p;
    for (int r = 0; r < 20; r++) {
        if (npl_next_touch_arm(region, LEN, 0) < 0)
            break;
        for (size_t i = 0; i < LEN; i += 512)
            region[i] = (unsigned char)(region[i] + 1);
        rounds++;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < LEN; i += 512)
        bad += region[i] != (unsigned char)(1 + rounds);
    return NULL;
}

__attribute__((constructor)) static void agent_start(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    if (strcmp(base ? base + 1 : exe, "java"))
        return;
    region = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED)
        return;
    memset(region, 1, LEN);
    if (npl_next_touch_arm(region, LEN, 0) < 0) /* before the JVM installs its handlers */
        return;
    started = pthread_create(&th, NULL, churn, NULL) == 0;
}

__attribute__((destructor)) static void agent_stop(void)
{
    if (!started)
        return;
    pthread_join(th, NULL);
    struct npl_next_touch_stats st;
    npl_next_touch_get_stats(&st);
    fprintf(stderr, "nt_agent: rounds %d, next-touch faults %llu, bad bytes %lu\n", rounds,
            (unsigned long long)st.faults, bad);
}
