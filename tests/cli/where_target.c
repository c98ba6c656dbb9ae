/* SPDX-License-Identifier: BSD-3-Clause */
/* where_target.c - processes for tests/cli/test_where.sh to run `numaplace where` on.
 *   where_target many N            N separate mappings of one touched page each, then wait
 *   where_target names DIR NAME... one touched file mapping per name (created in DIR), then wait
 *   where_target churn             after "ready", a new one-page mapping every millisecond
 *   where_target zombie            fork a child that exits at once, never reap it; prints its PID
 * Prints "ready" (zombie: "ready PID") on stdout when set up; waits for SIGTERM/SIGKILL. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int many(long n)
{
    long pg = sysconf(_SC_PAGESIZE);
    /* 2n pages PROT_NONE, every other one made read-write: n mappings that cannot merge */
    char *a = mmap(NULL, (size_t)(2 * n) * (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return -1;
    for (long i = 0; i < n; i++) {
        char *p = a + 2 * i * pg;
        if (mprotect(p, (size_t)pg, PROT_READ | PROT_WRITE) < 0)
            return -1;
        *(volatile char *)p = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "many")) {
        if (many(atol(argv[2])) < 0)
            return perror("many"), 1;
    } else if (argc >= 3 && !strcmp(argv[1], "names")) {
        for (int i = 3; i < argc; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[2], argv[i]);
            int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || ftruncate(fd, 4096) < 0)
                return perror(path), 1;
            char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED)
                return perror("mmap"), 1;
            p[0] = 'x';
            close(fd);
        }
    } else if (argc >= 2 && !strcmp(argv[1], "churn")) {
        if (many(64) < 0)
            return perror("many"), 1;
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < 100000; i++) {
            char *p = mmap(NULL, 4096, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED && i % 2)
                *(volatile char *)p = 1;
            usleep(1000);
        }
        return 0;
    } else if (argc >= 2 && !strcmp(argv[1], "zombie")) {
        pid_t c = fork();
        if (c == 0)
            _exit(0);
        usleep(100000);
        printf("ready %d\n", (int)c);
        fflush(stdout);
        for (;;)
            pause();
    } else {
        fprintf(stderr, "usage: where_target many N | names DIR NAME... | churn | zombie\n");
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
