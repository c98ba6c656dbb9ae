/* SPDX-License-Identifier: BSD-3-Clause */
/* printer - prints through stdio without flushing and exits with status argv[1] (default 0);
 * with OMP defined (printer_omp) it runs an OpenMP region first. `numaplace run` must keep both
 * the output and the status (tests/cli/test_run.sh). */
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int main(int argc, char **argv)
{
    int n = 1;
#ifdef _OPENMP
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
#endif
    printf("printer: %d thread(s), buffered line\n", n > 0);
    return argc > 1 ? atoi(argv[1]) : 0;
}
