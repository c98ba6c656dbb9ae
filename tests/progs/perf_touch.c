/* SPDX-License-Identifier: BSD-3-Clause */
/* perf_touch.c - known first touches for the perf backend's test (tests/cli/test_profile_perf.sh):
 * three arrays of PAGES pages each, malloc'ed by the main thread (thread 0); thread 1 (the first
 * created) writes every page of the first, thread 2 every page of the second (after thread 1 has
 * ended), the main thread every page of the third. Each page is written once, in order: the
 * software page-fault event then sees each page's faults from one known thread. The arrays are
 * kept off transparent huge pages (one fault per 4 KiB page). Prints the sum of every page's first
 * byte, and the pages: "touched N". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static long pages = 512;
static size_t ps;

static void touch(unsigned char *a, unsigned char v)
{
    for (long i = 0; i < pages; i++)
        a[(size_t)i * ps] = v;
}

static void *worker(void *arg)
{
    touch(arg, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        pages = atol(argv[1]);
    ps = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *a[3];
    for (int k = 0; k < 3; k++) {
        a[k] = malloc((size_t)pages * ps);
        if (!a[k])
            return 1;
        madvise((void *)((uintptr_t)a[k] & ~(uintptr_t)(ps - 1)), (size_t)pages * ps,
                MADV_NOHUGEPAGE);
    }
    for (int k = 0; k < 2; k++) { /* one after the other: thread numbers 1 and 2 */
        pthread_t t;
        if (pthread_create(&t, NULL, worker, a[k]) || pthread_join(t, NULL))
            return 1;
    }
    touch(a[2], 1);
    long sum = 0;
    for (int k = 0; k < 3; k++)
        for (long i = 0; i < pages; i++)
            sum += a[k][(size_t)i * ps];
    printf("touched %ld\n", sum);
    return 0;
}
