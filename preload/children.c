/* SPDX-License-Identifier: BSD-3-Clause */
/* children.c - exec, spawn, system and popen, and the fork handlers of libnumaplace_preload.so:
 * the children of a pinned process start on the process's CPUs; a forked child gets the
 * allocation table and the library's locks free (alloc.c). */
#define _GNU_SOURCE
#include "preload.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* ---- children of a pinned process start on the process's CPUs ----
 * With NUMAPLACE_PIN, a thread runs on one CPU, and a child inherits the mask of the thread that
 * made it: a shell script's programs, system(), popen() or a launcher's exec would all run on
 * that one CPU (and an OpenMP runtime would start one thread). So the calling thread goes back
 * to the CPUs the process was loaded with (never wider) in a forked child, and around exec and
 * spawn (restored if the call returns). The child's own interposer then pins its threads. */
#define MASK_WORDS (2048 / sizeof(unsigned long)) /* 16384 CPUs */
static unsigned long base_cpus[MASK_WORDS];
static int have_base;

void npl__preload_save_base_cpus(void)
{
    have_base = sched_getaffinity(0, sizeof base_cpus, (cpu_set_t *)base_cpus) == 0;
}

/* the calling thread onto the loaded-with CPUs; saved (if not NULL) gets its mask. 1: changed */
static int widen_self(unsigned long *saved)
{
    if (!npl__preload.pin || !have_base)
        return 0;
    int e = errno;
    if (saved && sched_getaffinity(0, sizeof base_cpus, (cpu_set_t *)saved) < 0)
        return 0;
    int changed = sched_setaffinity(0, sizeof base_cpus, (const cpu_set_t *)base_cpus) == 0;
    errno = e;
    return changed;
}

static void narrow_back(const unsigned long *saved, int changed)
{
    int e = errno;
    if (changed)
        sched_setaffinity(0, sizeof base_cpus, (const cpu_set_t *)saved);
    errno = e;
}

/* fork: the child must not inherit the allocation table's lock held by another thread, nor a
 * thread inside the library (alloc.c); a pinned process's child starts on its CPUs */
static void fork_prepare(void) { npl__preload_alloc_fork_prepare(); }
static void fork_parent(void) { npl__preload_alloc_fork_parent(); }
static void fork_child(void)
{
    widen_self(NULL);
    npl__preload_alloc_fork_child();
}

/* ---- exec and spawn: the new program starts on the process's CPUs (see widen_self) ---- */
extern char **environ;
/* resolved in the constructor: a vfork child must not run dlsym (it allocates) */
enum { F_EXECVE, F_EXECVP, F_EXECVPE, F_FEXECVE, F_POSIX_SPAWN, F_POSIX_SPAWNP, F_SYSTEM, F_POPEN,
       F_COUNT };
static const char *const spawn_names[F_COUNT] = {"execve", "execvp", "execvpe", "fexecve",
                                                 "posix_spawn", "posix_spawnp", "system", "popen"};
static void *spawn_fns[F_COUNT];
void npl__preload_children_init(void)
{
    for (int i = 0; i < F_COUNT; i++)
        npl__preload_next(&spawn_fns[i], spawn_names[i]);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
#define cache_execve spawn_fns[F_EXECVE]
#define cache_execvp spawn_fns[F_EXECVP]
#define cache_execvpe spawn_fns[F_EXECVPE]
#define cache_fexecve spawn_fns[F_FEXECVE]
#define cache_posix_spawn spawn_fns[F_POSIX_SPAWN]
#define cache_posix_spawnp spawn_fns[F_POSIX_SPAWNP]
#define cache_system spawn_fns[F_SYSTEM]
#define cache_popen spawn_fns[F_POPEN]
#define NEXT(type, name)                                                                           \
    type real = (type)npl__preload_next(&cache_##name, #name);                                     \
    if (!real) {                                                                                   \
        errno = ENOSYS;                                                                            \
        return fail;                                                                               \
    }
/* run CALL with the calling thread widened, keep its result and errno, narrow back */
#define WIDENED(rtype, call)                                                                       \
    unsigned long saved[MASK_WORDS];                                                               \
    int changed = widen_self(saved);                                                               \
    rtype r = call;                                                                                \
    narrow_back(saved, changed);                                                                   \
    return r;
/* the same for the exec family: a profiling image that recorded nothing hands the profile to the
 * program it becomes (kept if the exec fails) */
#define EXEC_WIDENED(call)                                                                         \
    npl__preload_profile_exec(0);                                                                  \
    unsigned long saved[MASK_WORDS];                                                               \
    int changed = widen_self(saved);                                                               \
    int r = call;                                                                                  \
    narrow_back(saved, changed);                                                                   \
    npl__preload_profile_exec(1);                                                                  \
    return r;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(execve_fn, execve)
    EXEC_WIDENED(real(path, argv, envp))
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(execvpe_fn, execvpe)
    EXEC_WIDENED(real(file, argv, envp))
}

EXPORT int execvp(const char *file, char *const argv[])
{
    const int fail = -1;
    NEXT(execvp_fn, execvp)
    EXEC_WIDENED(real(file, argv))
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    const int fail = -1;
    NEXT(fexecve_fn, fexecve)
    EXEC_WIDENED(real(fd, argv, envp))
}

/* execl, execlp, execle: the arguments into an array on the stack (no malloc: vfork children).
 * count_args: how many there are, arg0 included (0 when arg0 is NULL); take_args fills argv
 * (n + 1 slots) and leaves *ap after the terminating NULL (execle's envp comes next). */
static size_t count_args(const char *arg0, va_list ap)
{
    size_t n = 0;
    if (arg0)
        for (n = 1; va_arg(ap, char *); n++)
            ;
    return n;
}

static void take_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
    argv[0] = (char *)arg0;
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(*ap, char *);
    if (arg0)
        (void)va_arg(*ap, char *);
    argv[n] = NULL;
}

#define ARGV_FROM_VA(arg0)                                                                         \
    va_list ap, cp;                                                                                \
    va_start(ap, arg0);                                                                            \
    va_copy(cp, ap);                                                                               \
    size_t n = count_args(arg0, cp);                                                               \
    va_end(cp);                                                                                    \
    char *argv[n + 1];                                                                             \
    take_args(argv, n, arg0, &ap);

EXPORT int execl(const char *path, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    va_end(ap);
    return execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    va_end(ap);
    return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    ARGV_FROM_VA(arg)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    const int fail = ENOSYS;
    NEXT(spawn_fn, posix_spawn)
    WIDENED(int, real(pid, path, fa, at, argv, envp))
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    const int fail = ENOSYS;
    NEXT(spawn_fn, posix_spawnp)
    WIDENED(int, real(pid, file, fa, at, argv, envp))
}

typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);

/* system and popen spawn inside the C library (no call through exec or posix_spawn above) */
EXPORT int system(const char *cmd)
{
    const int fail = -1;
    NEXT(system_fn, system)
    WIDENED(int, real(cmd))
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
    FILE *const fail = NULL;
    NEXT(popen_fn, popen)
    WIDENED(FILE *, real(cmd, mode))
}
