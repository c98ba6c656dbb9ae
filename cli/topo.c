/* SPDX-License-Identifier: BSD-3-Clause */
/* topo.c - numaplace topo [--json] [--synthetic DESC] */
#include "cli.h"
#include "common.h"
#include "json.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void print_cpus(const npl_topo *t, int node)
{
    int cpus[4096];
    int n = npl_topo_node_cpus(t, node, cpus, 4096);
    for (int i = 0; i < n && i < 4096; i++)
        printf("%s%d", i ? "," : "", cpus[i]);
    if (n == 0)
        printf("-");
}

static int topo_json(const npl_topo *t, int synthetic)
{
    int nn = npl_topo_node_count(t, 1);
    const struct npl_support *s = npl_get_support();
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-topo/1");
    json_add_str(root, "numaplace_version", npl_version());
    json_add_bool(root, "synthetic", synthetic);
    json_add_num(root, "cpus_allowed", npl_topo_cpu_count(t));
    json_add_num(root, "cores_allowed", npl_topo_core_count(t));
    json_add_num(root, "node_count", npl_topo_node_count(t, 0));
    cJSON *nodes = json_add_arr(root, "nodes");
    int *cpus = malloc(sizeof(int) * 4096), *dist = malloc(sizeof(int) * (size_t)(nn > 0 ? nn : 1));
    for (int i = 0; i < nn && cpus && dist; i++) {
        struct npl_node_info ni;
        npl_topo_node_info(t, npl_topo_node_id(t, i), &ni);
        cJSON *o = json_add_obj(nodes, NULL);
        json_add_num(o, "os_id", ni.os_id);
        json_add_bool(o, "allowed", ni.allowed);
        json_add_num(o, "memory_bytes", (double)ni.memory_bytes);
        json_add_num(o, "free_bytes", (double)ni.free_bytes);
        int n = npl_topo_node_cpus(t, ni.os_id, cpus, 4096);
        json_add_ints(o, "cpus", cpus, n < 4096 ? n : 4096);
        for (int j = 0; j < nn; j++)
            dist[j] = npl_topo_distance(t, ni.os_id, npl_topo_node_id(t, j));
        json_add_ints(o, "distances", dist, nn);
    }
    free(cpus);
    free(dist);
    cJSON *caches = json_add_arr(root, "caches");
    for (int l = 1; l <= 5; l++) {
        uint64_t b;
        if (npl_topo_cache_size(t, l, &b) == 0) {
            cJSON *o = json_add_obj(caches, NULL);
            json_add_num(o, "level", l);
            json_add_num(o, "bytes", (double)b);
        }
    }
    cJSON *sup = json_add_obj(root, "support");
    json_add_bool(sup, "get_mempolicy", s->get_mempolicy);
    json_add_bool(sup, "set_mempolicy", s->set_mempolicy);
    json_add_bool(sup, "mbind", s->mbind);
    json_add_bool(sup, "move_pages", s->move_pages);
    json_add_bool(sup, "preferred_many", s->preferred_many);
    json_add_bool(sup, "populate_write", s->populate_write);
    json_add_bool(sup, "thp", s->thp);
    json_add_bool(sup, "hugetlb_2m", s->hugetlb_2m);
    int rc = json_write(stdout, root);
    json_free(root);
    if (rc < 0) {
        fprintf(stderr, "numaplace topo: cannot write the JSON output\n");
        return EXIT_FAILED;
    }
    return 0;
}

/* the topology as text */
static void topo_text(const npl_topo *t, int synthetic)
{
    int nn = npl_topo_node_count(t, 1), usable = npl_topo_node_count(t, 0);
    const struct npl_support *s = npl_get_support();
    printf("%d NUMA node%s (%d usable by this process), %d CPUs and %d cores allowed%s\n", nn,
           nn == 1 ? "" : "s", usable, npl_topo_cpu_count(t), npl_topo_core_count(t),
           synthetic ? " [synthetic]" : "");
    printf("%-6s %-8s %12s %12s  %s\n", "node", "allowed", "memory MiB", "free MiB", "cpus");
    for (int i = 0; i < nn; i++) {
        struct npl_node_info ni;
        npl_topo_node_info(t, npl_topo_node_id(t, i), &ni);
        printf("%-6d %-8s %12llu %12llu  ", ni.os_id, ni.allowed ? "yes" : "NO",
               (unsigned long long)(ni.memory_bytes >> 20),
               (unsigned long long)(ni.free_bytes >> 20));
        print_cpus(t, ni.os_id);
        printf("\n");
    }
    printf("distances:\n      ");
    for (int j = 0; j < nn; j++)
        printf("%5d", npl_topo_node_id(t, j));
    printf("\n");
    for (int i = 0; i < nn; i++) {
        printf("%5d ", npl_topo_node_id(t, i));
        for (int j = 0; j < nn; j++)
            printf("%5d", npl_topo_distance(t, npl_topo_node_id(t, i), npl_topo_node_id(t, j)));
        printf("\n");
    }
    printf("caches:");
    int any = 0;
    for (int l = 1; l <= 5; l++) {
        uint64_t b;
        if (npl_topo_cache_size(t, l, &b) == 0)
            printf(" L%d %llu KiB", l, (unsigned long long)(b >> 10)), any = 1;
    }
    printf("%s\n", any ? "" : " unknown");
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

int cmd_topo(int argc, char **argv)
{
    int json = 0;
    const char *synthetic = NULL;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"synthetic", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 's')
            synthetic = optarg;
        else if (c == 'h')
            return printf("usage: numaplace topo [--json] [--synthetic HWLOC_SYNTHETIC_DESC]\n"
                          "Nodes (OS ids), their allowed CPUs, memory, the SLIT distance matrix, "
                          "and the\nCPUs and nodes this process may use (affinity mask, cpuset "
                          "Mems_allowed).\n--json: docs/schema/topo.schema.json.\n"), 0;
        else
            return cli_bad_option("topo", c, argv);
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace topo: unknown argument \"%s\"\n", argv[optind]);
        return EXIT_USAGE;
    }
    npl_topo *own;
    const npl_topo *t;
    if (cli_topo(&own, synthetic, &t) < 0)
        return cli_fail("cannot load the topology");
    int rc = 0;
    if (json)
        rc = topo_json(t, synthetic != NULL);
    else
        topo_text(t, synthetic != NULL);
    npl_topo_destroy(own);
    return rc;
}
