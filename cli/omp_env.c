/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_env.c - the numaplace binary links an OpenMP runtime (report's kernels, cli/report/), and
 * GCC's libgomp reads the OpenMP environment in its constructor, before main. With OMP_PROC_BIND,
 * OMP_PLACES or GOMP_CPU_AFFINITY set it binds the initial thread to the first place: `numaplace
 * run` would then exec the program on that one CPU (its OpenMP threads bound inside it, all on
 * one CPU or one node) and every subcommand would see one allowed CPU; OMP_DISPLAY_ENV would print
 * numaplace's own runtime. These variables are meant for the program, so they are hidden from the
 * runtime while the shared libraries initialise and given back before main. Only `report` keeps
 * them: its kernels are OpenMP and honour OMP_NUM_THREADS.
 *
 * The hiding runs from .preinit_array, which the dynamic loader calls before the constructor of
 * every shared library; the restoring runs as this executable's constructor, which the C library
 * calls after all of them. No allocation: the environment array is reordered in place. */
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* variables of the OpenMP (and OpenACC) runtimes: GCC's libgomp, LLVM's libomp */
static int runtime_var(const char *e)
{
    static const char *const prefix[] = {"OMP_", "GOMP_", "KMP_", "ACC_"};
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (!strncmp(e, prefix[i], strlen(prefix[i])))
            return 1;
    return 0;
}

static char **hidden_array; /* the environment array while they are hidden */
static char **hidden_at;    /* its NULL that cuts them off */
static char *hidden_first;  /* the entry that NULL replaced */

/* Moves the runtime's variables behind the others (each group keeps its order, so getenv finds
 * the same entry afterwards) and ends the array before them. */
static void hide_openmp_env(int argc, char **argv, char **envp)
{
    if (argc > 1 && argv[1] && !strcmp(argv[1], "report"))
        return;
    if (!envp)
        return;
    size_t kept = 0, n = 0;
    for (; envp[n]; n++) {
        if (runtime_var(envp[n]))
            continue;
        char *e = envp[n];
        memmove(envp + kept + 1, envp + kept, (n - kept) * sizeof *envp);
        envp[kept++] = e;
    }
    if (kept == n)
        return;
    hidden_array = envp;
    hidden_at = envp + kept;
    hidden_first = *hidden_at;
    *hidden_at = NULL;
}

__attribute__((section(".preinit_array"), used)) static void (*const hide_before_libraries)(
    int, char **, char **) = hide_openmp_env;

__attribute__((constructor)) static void restore_openmp_env(void)
{
    if (!hidden_at)
        return;
    *hidden_at = hidden_first;
    /* a library's constructor replaced the array (setenv): put them into the new one */
    for (char **e = hidden_at; environ != hidden_array && *e; e++)
        putenv(*e);
    hidden_at = NULL;
}
