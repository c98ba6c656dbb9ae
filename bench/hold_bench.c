/* SPDX-License-Identifier: BSD-3-Clause */
/* hold_bench.c - what the interposer's holds cost a read-heavy program (issue 36): READS read(2)s
 * of SIZE bytes from a file in the page cache into a 64 MiB malloc'ed (tracked) buffer, one place
 * after the other; prints the nanoseconds per read of the loop alone. bench/hold_ratio.sh runs it
 * plain, under `numaplace profile` and under `run --next-touch`, side by side.
 *   hold_bench [READS [SIZE]]      defaults: 200000 reads of 512 bytes */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF (64u << 20)

int main(int argc, char **argv)
{
    long reads = argc > 1 ? atol(argv[1]) : 200000, size = argc > 2 ? atol(argv[2]) : 512;
    char path[] = "/tmp/npl_hold_bench.XXXXXX";
    int fd = mkstemp(path);
    static char chunk[1 << 16];
    memset(chunk, 7, sizeof chunk);
    if (fd < 0 || size <= 0 || size > (long)sizeof chunk || write(fd, chunk, sizeof chunk) < 0)
        return 2;
    unlink(path);
    char *b = malloc(BUF);
    if (!b)
        return 2;
    memset(b, 0, BUF); /* first touch done: the loop measures the holds, not the first faults */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t got = 0;
    for (long i = 0; i < reads; i++) {
        size_t at = (size_t)(i * size) % (BUF - (size_t)size);
        ssize_t r = pread(fd, b + at, (size_t)size, 0);
        got += r > 0 ? (uint64_t)r : 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                (double)reads;
    printf("hold_bench: %ld reads of %ld bytes: %.1f ns per read (%llu bytes)\n", reads, size, ns,
           (unsigned long long)got);
    return got == (uint64_t)reads * (uint64_t)size ? 0 : 1;
}
