/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_probe - where an OpenMP program's threads run: one line per thread,
 *   thread T cpu C mask M runtime R
 * C from sched_getcpu() inside the parallel region, M the thread's affinity mask as a CPU list,
 * R libomp (LLVM) or libgomp (GCC), whichever runs the region. Built twice by tests/CMakeLists.txt:
 * omp_probe_gcc (gcc -fopenmp: libgomp, or libomp when that is preloaded) and omp_probe_clang
 * (clang -fopenmp: libomp). numaplace is not linked: guest_cli reads the lines. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define MAXT 256

int main(void)
{
    static int cpu[MAXT];
    static char mask[MAXT][256];
    int nt = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
#pragma omp single
        nt = omp_get_num_threads();
        if (t < MAXT) {
            volatile double x = 0;
            for (int i = 0; i < 2000000; i++) /* long enough to be scheduled where bound */
                x += i;
            cpu[t] = sched_getcpu();
            cpu_set_t s;
            CPU_ZERO(&s);
            sched_getaffinity(0, sizeof s, &s);
            size_t off = 0;
            for (int c = 0; c < CPU_SETSIZE && off + 8 < sizeof mask[t]; c++)
                if (CPU_ISSET(c, &s))
                    off += (size_t)snprintf(mask[t] + off, sizeof mask[t] - off, "%s%d",
                                            off ? "," : "", c);
        }
    }
    const char *rt = dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? "libomp" : "libgomp";
    for (int t = 0; t < nt && t < MAXT; t++)
        printf("thread %d cpu %d mask %s runtime %s\n", t, cpu[t], mask[t], rt);
    return 0;
}
