/* SPDX-License-Identifier: BSD-3-Clause */
/* spawner - starts PROG ARGS the way real programs do and exits with its status:
 *   spawner MODE[,MODE...] PROG [ARGS...]   MODE: system | popen | spawn | spawnp | vfork |
 *       fork | execl | execlp | execv | execvp | execve | execle (one after the other; an exec
 *       mode replaces the spawner, so it comes last)
 * Under `numaplace run --pin` each child must start on the CPUs the process was started with,
 * not on the one CPU of the pinned thread that made it (tests/cli/test_run_progs.sh: an OpenMP
 * child started this way must still default to one thread per CPU). */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int status_of(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

static int by_shell(const char *mode, char **argv)
{
    char cmd[4096] = "";
    for (int i = 0; argv[i]; i++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s'%s'", i ? " " : "", argv[i]);
    if (!strcmp(mode, "system"))
        return status_of(system(cmd));
    FILE *f = popen(cmd, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        fputs(line, stdout);
    return f ? status_of(pclose(f)) : 1;
}

static int by_exec(const char *mode, char **argv)
{
    fflush(stdout);
    if (!strcmp(mode, "execl") || !strcmp(mode, "execlp") || !strcmp(mode, "execle")) {
        char *a[4] = {argv[0], argv[1], argv[1] ? argv[2] : NULL, NULL}; /* 2 arguments at most */
        if (!strcmp(mode, "execl"))
            execl(a[0], a[0], a[1], a[2], (char *)NULL);
        else if (!strcmp(mode, "execlp"))
            execlp(a[0], a[0], a[1], a[2], (char *)NULL);
        else
            execle(a[0], a[0], a[1], a[2], (char *)NULL, environ);
    } else if (!strcmp(mode, "execv")) {
        execv(argv[0], argv);
    } else if (!strcmp(mode, "execvp")) {
        execvp(argv[0], argv);
    } else {
        execve(argv[0], argv, environ);
    }
    perror("exec");
    return 127;
}

static int run_mode(const char *mode, char **child)
{
    if (!strcmp(mode, "system") || !strcmp(mode, "popen"))
        return by_shell(mode, child);
    if (!strncmp(mode, "exec", 4))
        return by_exec(mode, child);
    fflush(stdout);
    pid_t pid = -1;
    if (!strcmp(mode, "spawn") || !strcmp(mode, "spawnp")) {
        int rc = (mode[5] ? posix_spawnp : posix_spawn)(&pid, child[0], NULL, NULL, child, environ);
        if (rc) {
            fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
            return 127;
        }
    } else {
        pid = !strcmp(mode, "vfork") ? vfork() : fork();
        if (pid == 0) {
            execv(child[0], child);
            _exit(127);
        }
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return 1;
    return status_of(st);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: spawner MODE[,MODE...] PROG [ARGS...]\n");
        return 2;
    }
    char modes[256];
    snprintf(modes, sizeof modes, "%s", argv[1]);
    int rc = 0;
    for (char *save = NULL, *m = strtok_r(modes, ",", &save); m && !rc; m = strtok_r(NULL, ",", &save))
        rc = run_mode(m, argv + 2);
    return rc;
}
