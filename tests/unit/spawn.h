/* SPDX-License-Identifier: BSD-3-Clause */
/* spawn.h - run a program as a child with its output in files (guest and host tests). */
#ifndef NPL_SPAWN_H
#define NPL_SPAWN_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* argv (argv[0] searched in PATH) with stdout to the file out and stderr to err (NULL: left as it
 * is; err the same path as out: both into out). Returns the exit status, 128 + N for signal N,
 * 125 when a file could not be opened, 127 when argv[0] could not run, -1 when fork or waitpid
 * failed. */
static inline int spawn_to(const char *out, const char *err, char *const argv[])
{
    fflush(stdout);
    fflush(stderr);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen(out, "w", stdout))
            _exit(125);
        if (err && !strcmp(err, out) ? dup2(1, 2) < 0 : err && !freopen(err, "w", stderr))
            _exit(125);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    /* a child of 5 s or more says so: where a test's time goes (the guest's budget) */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (secs >= 5) {
        printf("[%.0f s:", secs);
        for (int i = 0; argv[i] && i < 12; i++)
            printf(" %s", argv[i]);
        printf("]\n");
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* a file's whole text, malloc'd (an empty file: ""; NULL: no file, or no memory) */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    if (getdelim(&text, &cap, 0, f) < 0) {
        free(text);
        text = calloc(1, 1);
    }
    fclose(f);
    return text;
}
#endif
