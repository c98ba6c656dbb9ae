/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_alloc_fpages.c - omp_alloc_f.f90's page counter: 1 when every page of [p, p + bytes) is
 * where the partition says (kind 1 blocked, 2 interleaved, 3 nearest: the calling thread's
 * node), over the nodes of the CPUs the process may use (as tests/progs/omp_alloc.c); prints
 * "R of P pages" */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int omp_alloc_pages_right(void *p, size_t bytes, int kind)
{
    int L[64], K = 0;
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    for (int node = 0; node < 64; node++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int has = 0, a, b;
        char sep;
        while (!has && fscanf(f, "%d", &a) == 1) {
            b = a;
            if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d%c", &b, &sep) < 1)
                break;
            for (int c = a; c <= b && !has; c++)
                has = c < CPU_SETSIZE && CPU_ISSET(c, &set);
            if (sep != ',')
                break;
        }
        fclose(f);
        if (has)
            L[K++] = node;
    }
    long ps = sysconf(_SC_PAGESIZE);
    size_t n = (bytes + (size_t)ps - 1) / (size_t)ps, right = 0, B = (n + (size_t)K - 1) / (size_t)(K ? K : 1);
    void **pages = malloc(n * sizeof *pages);
    int *nodes = malloc(n * sizeof *nodes);
    unsigned cpu = 0, here = 0;
    if (!K || !pages || !nodes || syscall(SYS_getcpu, &cpu, &here, NULL) != 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        pages[i] = (char *)p + i * (size_t)ps;
    if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, nodes, 0) != 0)
        n = 0;
    for (size_t i = 0; i < n; i++)
        right += nodes[i] == (kind == 1 ? L[i / B] : kind == 2 ? L[i % (size_t)K] : (int)here);
    printf("omp_alloc_f pages: %zu of %zu pages where the trait says\n", right, n);
    free(pages);
    free(nodes);
    return n && right == n;
}
