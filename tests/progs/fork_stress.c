/* SPDX-License-Identifier: BSD-3-Clause */
/* fork_stress - fork safety of libnumaplace_preload.so (run under LD_PRELOAD with a policy and a
 * small NUMAPLACE_THRESHOLD): 4 threads malloc/touch/free large blocks without pause while the
 * main thread forks 400 children; each child mallocs and frees a large block and _exit(0)s.
 * Every child must exit within 10 s (a child that inherited a lock held by another thread at
 * fork time hangs forever). Prints "fork_stress: N children, H hung, F failed". */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG (2u << 20)
static volatile int stop;

static void *churn(void *arg)
{
    (void)arg;
    while (!stop) {
        char *p = malloc(BIG);
        if (p) {
            p[0] = 1;
            p[BIG - 1] = 2;
        }
        free(p);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 400, hung = 0, failed = 0;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, churn, NULL);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char *p = malloc(BIG);
            if (p)
                memset(p, 1, 4096);
            free(p);
            _exit(p ? 0 : 1);
        }
        if (pid < 0) {
            failed++;
            continue;
        }
        int st = 0;
        double t0 = now();
        pid_t r;
        while ((r = waitpid(pid, &st, WNOHANG)) == 0 && now() - t0 < 10)
            usleep(1000);
        if (r == 0) {
            hung++;
            if (argc > 2) { /* debugging: leave it for a debugger a while */
                printf("hung child %d\n", (int)pid);
                fflush(stdout);
                sleep((unsigned)atoi(argv[2]));
            }
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
        }
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    printf("fork_stress: %d children, %d hung, %d failed\n", n, hung, failed);
    return hung || failed ? 1 : 0;
}
