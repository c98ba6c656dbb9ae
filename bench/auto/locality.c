/* SPDX-License-Identifier: BSD-3-Clause */
/* locality.c - the counting of bench/auto/locality.h for the Fortran program (auto_multi_f.f90),
 * through ISO_C_BINDING: the same code counts C and Fortran accesses. */
#define AUTO_COMPILER "gfortran"
#include "locality.h"

int auto_f_track(void *base, size_t bytes, const char *name, const char *pattern);
void auto_f_locate(void);
void auto_f_recheck(void);
int auto_f_node(void);
int auto_f_rw(int idx, const void *addr, int me, int reads, int writes);
void auto_f_region(int r);
void auto_f_init_touch(int idx, const void *addr);
void auto_f_add(int idx, long long local, long long accesses);
void auto_f_report(const char *program, int iters, double checksum);

int auto_f_track(void *base, size_t bytes, const char *name, const char *pattern)
{
    auto_track(base, bytes, strdup(name), strdup(pattern));
    return auto_narrays - 1;
}

void auto_f_locate(void) { auto_locate(); }
void auto_f_recheck(void) { auto_recheck(); }
int auto_f_node(void) { return auto_my_node(); }

/* reads and writes of addr by the calling thread: how many are local */
int auto_f_rw(int idx, const void *addr, int me, int reads, int writes)
{
    return (int)auto_rw(&auto_arrays[idx], addr, me, (unsigned)reads, (unsigned)writes);
}

void auto_f_region(int r) { auto_region(r); }

void auto_f_init_touch(int idx, const void *addr)
{
    auto_init_touch(&auto_arrays[idx], addr);
    auto_rw(&auto_arrays[idx], addr, -1, 0, 1);
}

void auto_f_add(int idx, long long local, long long accesses)
{
#pragma omp atomic
    auto_arrays[idx].local += (unsigned long long)local;
#pragma omp atomic
    auto_arrays[idx].accesses += (unsigned long long)accesses;
}

void auto_f_report(const char *program, int iters, double checksum)
{
    auto_report(program, iters, checksum);
}
