/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_plugin - an OpenMP library that a program without OpenMP loads with dlopen(RTLD_LOCAL), as
 * Python loads an extension module: libgomp is then outside the global scope, where the
 * interposer's GOMP_parallel* wrappers look for the next definition first. Built twice from this
 * file by tests/cli/test_run_progs.sh: with -DPLUGIN -fopenmp -shared (the library), and without
 * (the program: dl_host LIBRARY). Prints "sum S" (the same under numaplace run as without). */
#ifdef PLUGIN
long plugin_sum(long n)
{
    long s = 0;
#pragma omp parallel for reduction(+ : s)
    for (long i = 0; i < n; i++)
        s += i % 7;
    return s;
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    long (*sum)(long) = h ? (long (*)(long))dlsym(h, "plugin_sum") : NULL;
    if (!sum) {
        fprintf(stderr, "dl_host: %s\n", dlerror());
        return 2;
    }
    printf("sum %ld\n", sum(100000));
    return 0;
}
#endif
