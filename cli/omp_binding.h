/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_binding.h - an OpenMP program's own binding, read from the variables its runtime reads
 * (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY, KMP_AFFINITY): which of them are set, and the
 * CPUs its threads will use. `numaplace run` leaves this binding alone unless --pin is given, and
 * counts these CPUs in its oversubscription warning. */
#ifndef NPL_CLI_OMP_BINDING_H
#define NPL_CLI_OMP_BINDING_H
#include <hwloc.h>
#include <stddef.h>

/* The variables, each NAME=VALUE; NULL for one that is not set. */
struct omp_binding {
    const char *proc_bind, *places, *gomp_cpu_affinity, *kmp_affinity;
};

/* The binding variables of this process's environment (getenv). */
void omp_binding_from_env(struct omp_binding *b);
/* "NAME=VALUE NAME=VALUE" of those set, in the order above, into out (cut to size); returns the
 * number set (0: the program does not bind its threads itself). */
int omp_binding_describe(const struct omp_binding *b, char *out, size_t size);
/* The CPUs a program started on `allowed` runs its OpenMP threads on: the union of its places, or
 * the one place all threads share under OMP_PROC_BIND=master/primary, inside allowed. GCC's libgomp
 * and LLVM's libomp read the variables differently (KMP_AFFINITY wins over OMP_PLACES in libomp
 * only); the larger of the two readings is taken, so that no runtime is counted short. A value
 * the runtime would reject counts as unset. topo: for the abstract place names (cores, sockets,
 * ll_caches, numa_domains); NULL loads this machine's when one is needed. Returns the number of
 * CPUs in out (the allowed ones when the threads are not bound), or -1 if out of memory. */
int omp_binding_cpus(const struct omp_binding *b, hwloc_const_bitmap_t allowed,
                     hwloc_topology_t topo, hwloc_bitmap_t out);
#endif
