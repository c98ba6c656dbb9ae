/* topo.c - numaplace topo [--json] [--synthetic DESC] */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void print_cpus(const npl_topo *t, int idx)
{
    int cpus[4096];
    int n = npl_topo_node_cpus(t, idx, cpus, 4096);
    for (int i = 0; i < n && i < 4096; i++)
        printf("%s%d", i ? "," : "", cpus[i]);
    if (n == 0)
        printf("-");
}

int cmd_topo(int argc, char **argv)
{
    int json = 0;
    const char *synthetic = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--synthetic") && i + 1 < argc)
            synthetic = argv[++i];
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: numaplace topo [--json] [--synthetic HWLOC_SYNTHETIC_DESC]\n"
                   "Nodes (OS ids), their allowed CPUs, memory, the SLIT distance matrix, and the\n"
                   "CPUs and nodes this process may use (affinity mask, cpuset Mems_allowed).\n");
            return 0;
        } else {
            fprintf(stderr, "numaplace topo: unknown option \"%s\"\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    npl_topo *own;
    const npl_topo *t;
    if (cli_topo(&own, synthetic, &t) < 0)
        return cli_fail("cannot load the topology");
    int nn = npl_topo_node_count(t, 1), usable = npl_topo_node_count(t, 0);
    const struct npl_support *s = npl_get_support();
    if (json) {
        printf("{\n  \"version\": \"%s\",\n  \"synthetic\": %s,\n", npl_version(),
               synthetic ? "true" : "false");
        printf("  \"cpus_allowed\": %d,\n  \"cores_allowed\": %d,\n  \"nodes_usable\": %d,\n",
               npl_topo_cpu_count(t), npl_topo_core_count(t), usable);
        printf("  \"nodes\": [\n");
        for (int i = 0; i < nn; i++) {
            struct npl_node_info ni;
            npl_topo_node_info(t, i, &ni);
            printf("    {\"id\": %d, \"allowed\": %s, \"memory_bytes\": %llu, \"free_bytes\": %llu, "
                   "\"cpus\": [",
                   ni.os_id, ni.allowed ? "true" : "false", (unsigned long long)ni.memory_bytes,
                   (unsigned long long)ni.free_bytes);
            int cpus[4096];
            int n = npl_topo_node_cpus(t, i, cpus, 4096);
            for (int k = 0; k < n && k < 4096; k++)
                printf("%s%d", k ? ", " : "", cpus[k]);
            printf("], \"distances\": [");
            for (int j = 0; j < nn; j++)
                printf("%s%d", j ? ", " : "", npl_topo_distance(t, i, j));
            printf("]}%s\n", i + 1 < nn ? "," : "");
        }
        printf("  ],\n  \"support\": {\"get_mempolicy\": %d, \"set_mempolicy\": %d, \"mbind\": %d, "
               "\"move_pages\": %d, \"preferred_many\": %d, \"populate_write\": %d, \"thp\": %d, "
               "\"hugetlb_2m\": %d}\n}\n",
               s->get_mempolicy, s->set_mempolicy, s->mbind, s->move_pages, s->preferred_many,
               s->populate_write, s->thp, s->hugetlb_2m);
    } else {
        printf("%d NUMA node%s (%d usable by this process), %d CPUs and %d cores allowed%s\n", nn,
               nn == 1 ? "" : "s", usable, npl_topo_cpu_count(t), npl_topo_core_count(t),
               synthetic ? " [synthetic]" : "");
        printf("%-6s %-8s %12s %12s  %s\n", "node", "allowed", "memory MiB", "free MiB", "cpus");
        for (int i = 0; i < nn; i++) {
            struct npl_node_info ni;
            npl_topo_node_info(t, i, &ni);
            printf("%-6d %-8s %12llu %12llu  ", ni.os_id, ni.allowed ? "yes" : "NO",
                   (unsigned long long)(ni.memory_bytes >> 20),
                   (unsigned long long)(ni.free_bytes >> 20));
            print_cpus(t, i);
            printf("\n");
        }
        printf("distances:\n      ");
        for (int j = 0; j < nn; j++)
            printf("%5d", npl_topo_node_id(t, j));
        printf("\n");
        for (int i = 0; i < nn; i++) {
            printf("%5d ", npl_topo_node_id(t, i));
            for (int j = 0; j < nn; j++)
                printf("%5d", npl_topo_distance(t, i, j));
            printf("\n");
        }
        if (!synthetic) {
            printf("kernel support: get_mempolicy=%s set_mempolicy=%s mbind=%s move_pages=%s "
                   "preferred_many=%s populate_write=%s\n",
                   s->get_mempolicy ? "yes" : "NO", s->set_mempolicy ? "yes" : "NO",
                   s->mbind ? "yes" : "NO", s->move_pages ? "yes" : "NO",
                   s->preferred_many ? "yes" : "no", s->populate_write ? "yes" : "no");
            if (!s->mbind || !s->move_pages || !s->set_mempolicy)
                printf("note: NUMA system calls are denied here (ENOSYS/EPERM): placement works "
                       "only where there is one node\n");
            if (usable <= 1)
                printf("note: one usable NUMA node: every policy puts every page on it. Use "
                       "tools/numavm to run on a multi-node guest.\n");
        }
    }
    npl_topo_destroy(own);
    return 0;
}
