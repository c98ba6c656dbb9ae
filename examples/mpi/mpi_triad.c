/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_triad - the "one rank per node, threads pinned inside it, data local" recipe (docs/MPI.md).
 *
 *   mpirun --map-by numa --bind-to numa -np NODES mpi_triad [MiB per array per rank]
 *
 * Each rank: numaplace sees only the CPUs the launcher bound it to (npl_topo_self() snapshots the
 * affinity at load); it runs one OpenMP thread per such CPU, pins them compact inside the rank,
 * and allocates with bind_block for that many threads, so each thread's block of the arrays is on
 * its own node. The triad's checksum is summed over the ranks; each rank reports where its pages
 * are and whether any left its nodes. Exits 1 on a wrong result or a page off the rank's nodes.
 *
 * Build: mpicc -fopenmp mpi_triad.c -lnumaplace */
#include <mpi.h>
#include <numaplace.h>
#include <numaplace/omp.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* Pages of [a, a+bytes) on a node where the rank has no CPU (or not present). */
static size_t pages_off_rank(const void *a, size_t bytes, char *nodes_txt, size_t size)
{
    const npl_topo *t = npl_topo_self();
    int maxid = npl_topo_max_node_id(t), len = 0;
    size_t *counts = calloc((size_t)maxid + 1, sizeof *counts), absent = 0, off = 0;
    npl_histogram(a, bytes, counts, &absent);
    nodes_txt[0] = 0;
    for (int node = 0; node <= maxid; node++) {
        struct npl_node_info info;
        if (!counts[node])
            continue;
        if (npl_topo_node_info(t, node, &info) < 0 || info.ncpus_allowed == 0)
            off += counts[node];
        if (len >= 0 && (size_t)len < size)
            len += snprintf(nodes_txt + len, size - (size_t)len, " %d:%zu", node, counts[node]);
    }
    free(counts);
    return off + absent;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (argc > 1 ? strtoul(argv[1], NULL, 10) : 16) << 20 >> 3;
    int threads = npl_topo_cpu_count(npl_topo_self()); /* the rank's CPUs only */
    omp_set_num_threads(threads > 0 ? threads : 1);
    int pinned = npl_omp_pin_team("compact") == 0;

    npl_policy *pol;
    npl_policy_create(&pol, NPL_BIND_BLOCK, NULL, 0);
    npl_policy_set_threads(pol, threads, "compact");
    npl_shape shape = {sizeof(double), 1, {n, 0, 0}, NPL_ROW_MAJOR};
    double *a = npl_alloc_array(&shape, pol, 0), *b = npl_alloc_array(&shape, pol, 0);
    if (!a || !b) {
        fprintf(stderr, "rank %d: allocation: %s\n", rank, npl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        b[i] = (double)(i % 1000);
    double t = MPI_Wtime();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 3.0 * 2.0;
    t = MPI_Wtime() - t;
    double sum = 0, total = 0, want = 0;
    for (size_t i = 0; i < n; i++) {
        sum += a[i];
        want += (double)(i % 1000) + 6.0;
    }
    MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    char where[256];
    size_t off = pages_off_rank(a, n * sizeof(double), where, sizeof where);
    printf("rank %d/%d: %d threads%s, %.2f GB/s, pages of a per node:%s%s\n", rank, size, threads,
           pinned ? " pinned" : " (not pinned)", 2.0 * n * sizeof(double) / t / 1e9, where,
           off ? "  SOME OFF THE RANK'S NODES" : "");
    int bad = off != 0 || total != want * size, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_triad: checksum %s over %d ranks\n", total == want * size ? "exact" : "WRONG", size);
    npl_free(a);
    npl_free(b);
    npl_policy_free(pol);
    MPI_Finalize();
    return anybad;
}
