/* SPDX-License-Identifier: BSD-3-Clause */
/* sig_api - a program that arms next-touch itself (npl_next_touch_arm) and handles its own
 * SIGSEGV faults (a guard page, recovered with siglongjmp): the library's side of signal
 * chaining. tests/host/test_hostile_signals.sh runs each mode with NPL_SIG_NOARM=1 (nothing
 * armed: the reference), armed without the interposer, and armed under `numaplace run`, and
 * requires the same exit status and stdout; stderr says how many next-touch faults were handled.
 *   before        handler, then arm: numaplace's handler goes first and passes the rest on
 *   after_handle  arm, then a handler that calls npl_fault_handle() first (no interposer needed)
 *   rearm         arm, a handler, arm again: arming puts numaplace's handler first again
 *   after         arm, then a plain handler: needs the interposer (numaplace run)
 * 4 threads touch the armed 4 MiB range between the program's own faults. */
#define _GNU_SOURCE
#include <numaplace.h>
#include <numaplace/migrate.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LEN (4u << 20)
#define THREADS 4
static unsigned char *region;
static char *guard;
static long psz;
static sigjmp_buf jb;
static volatile sig_atomic_t calls;

static void *toucher(void *p)
{
    size_t t = (size_t)(uintptr_t)p, per = LEN / THREADS;
    for (size_t i = t * per; i < (t + 1) * per; i += 64)
        region[i] = (unsigned char)(region[i] + 1);
    return NULL;
}
static void touch_all(void)
{
    pthread_t th[THREADS];
    for (size_t t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, toucher, (void *)(uintptr_t)t))
            exit(6);
    for (size_t t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
}
static void arm(void)
{
    const char *e = getenv("NPL_SIG_NOARM");
    if (!(e && *e) && npl_next_touch_arm(region, LEN, 0) < 0) {
        fprintf(stderr, "sig_api: arm: %s\n", npl_last_error());
        exit(7);
    }
}

static void jump(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si->si_addr != guard && si->si_addr != guard + psz)
        _exit(90); /* a fault the program never caused */
    calls++;
    siglongjmp(jb, 1);
}
static void handle_first(int sig, siginfo_t *si, void *uc)
{
    if (npl_fault_handle(sig, si, uc))
        return; /* numaplace's, resolved */
    jump(sig, si, uc);
}
static void install(void (*h)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}
static int own_faults(int n)
{
    volatile int caught = 0;
    for (volatile int k = 0; k < n; k++) {
        if (sigsetjmp(jb, 1) == 0)
            *(volatile char *)(guard + (k & 1) * psz) = 1;
        else
            caught++;
    }
    return caught;
}
static unsigned long sum(void)
{
    unsigned long s = 0;
    for (size_t i = 0; i < LEN; i++)
        s += region[i];
    return s;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    psz = sysconf(_SC_PAGESIZE);
    region = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    guard = mmap(NULL, 2 * (size_t)psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || guard == MAP_FAILED)
        return 5;
    memset(region, 1, LEN);
    const char *m = argc > 1 ? argv[1] : "";
    int caught = 0;
    if (!strcmp(m, "before")) {
        install(jump);
        arm();
        touch_all();
        caught = own_faults(3);
        arm();
        touch_all();
    } else if (!strcmp(m, "after_handle")) {
        arm();
        install(handle_first);
        touch_all();
        caught = own_faults(3);
        arm();
        touch_all();
    } else if (!strcmp(m, "rearm")) {
        arm();
        install(jump);
        arm();
        touch_all();
        caught = own_faults(3);
    } else if (!strcmp(m, "after")) {
        arm();
        install(jump);
        touch_all();
        caught = own_faults(3);
        arm();
        touch_all();
    } else {
        fprintf(stderr, "usage: sig_api before|after_handle|rearm|after\n");
        return 2;
    }
    printf("%s: caught %d, calls %d, sum %lu\n", m, caught, (int)calls, sum());
    struct npl_next_touch_stats st;
    npl_next_touch_get_stats(&st);
    fprintf(stderr, "sig_api: next-touch faults %llu\n", (unsigned long long)st.faults);
    return 0;
}
