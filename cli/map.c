/* SPDX-License-Identifier: BSD-3-Clause */
/* map.c - numaplace map: the pure page->node map of a policy, one node id per page. */
#include "cli.h"
#include "common.h"
#include "json.h"
#include "base/number.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* a count (is_size 0) or a size with K/M/G (1) from 1 to max (base/number.h): 0, or -1 */
static int parse_value(int is_size, const char *s, uint64_t max, size_t *v)
{
    uint64_t x;
    if ((is_size ? npl__parse_size : npl__parse_count)(s, 1, max, &x) < 0)
        return -1;
    *v = (size_t)x;
    return 0;
}

/* Limits of the synthetic machine of --nodes/--cores-per-node: the library's topology build is
 * linear (one pass over PUs and node cpusets, sorted pin orders), but hwloc's synthetic build
 * grows faster than linearly with siblings (16 x 1024 PUs: 24 s; 1024 x 4 and 4 x 1024: about
 * 3 s on 2 busy cores); at these limits it takes at most a few seconds. */
#define MAP_MAX_NODES 1024
#define MAP_MAX_CORES 1024
#define MAP_MAX_PUS 4096

struct map_args {
    const char *policy, *synthetic;
    size_t nodes, pages, cores, page_size, rows;
    int json;
};

static void map_usage(void)
{
    printf("usage: numaplace map --policy STR (--nodes N | --synthetic DESC) --pages K\n"
           "                     [--cores-per-node C] [--rows R] [--page-size B] [--json]\n"
           "Prints the node of each of K pages under the policy, whitespace-separated (--json:\n"
           "docs/schema/map.schema.json, with the pages per node).\n"
           "Pure: no memory is touched, no system call made. --nodes N uses a synthetic\n"
           "machine of N nodes with C cores each (node ids 0..N-1). --rows R lays the\n"
           "pages out as R rows (units for block sizes and thread schedules).\n"
           "Limits: N <= %d, C <= %d, N x C <= %d (building larger synthetic machines\n"
           "takes more than about a second); K <= 2^32. B may end in K, M or G (4K, 2M).\n",
           MAP_MAX_NODES, MAP_MAX_CORES, MAP_MAX_PUS);
}

/* one option's value into a; 1 if it is out of range */
static int map_option(int c, const char *v, struct map_args *a)
{
    switch (c) {
    case 'p':
        return a->policy = v, 0;
    case 's':
        return a->synthetic = v, 0;
    case 'n':
        return parse_value(0, v, MAP_MAX_NODES, &a->nodes);
    case 'k':
        return parse_value(0, v, (uint64_t)1 << 32, &a->pages);
    case 'c':
        return parse_value(0, v, MAP_MAX_CORES, &a->cores);
    case 'b':
        return parse_value(1, v, NPL__SIZE_MAX, &a->page_size);
    default:
        return parse_value(0, v, NPL__SIZE_MAX, &a->rows);
    }
}

/* 0, -1 (--help printed), or an exit status */
static int map_parse(int argc, char **argv, struct map_args *a)
{
    static const struct option opts[] = {
        {"policy", required_argument, NULL, 'p'}, {"synthetic", required_argument, NULL, 's'},
        {"nodes", required_argument, NULL, 'n'}, {"pages", required_argument, NULL, 'k'},
        {"cores-per-node", required_argument, NULL, 'c'},
        {"page-size", required_argument, NULL, 'b'}, {"rows", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (struct map_args){NULL, NULL, 0, 0, 1, 4096, 0, 0};
    int c, idx = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
        if (c == 'h')
            return map_usage(), -1;
        if (c == 'j') {
            a->json = 1;
            continue;
        }
        if (!strchr("psnkcbr", c) || c == ':' || c == '?')
            return cli_bad_option("map", c, argv);
        if (map_option(c, optarg, a)) {
            fprintf(stderr, "numaplace map: bad value \"%s\" for --%s (see --help for the "
                            "limits)\n", optarg, opts[idx].name);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace map: unknown argument \"%s\"\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!a->synthetic && a->nodes * a->cores > MAP_MAX_PUS) {
        fprintf(stderr, "numaplace map: --nodes %zu x --cores-per-node %zu is over the limit of "
                        "%d cores\n", a->nodes, a->cores, MAP_MAX_PUS);
        return EXIT_USAGE;
    }
    if (!a->policy || !a->pages || (!a->nodes && !a->synthetic)) {
        fprintf(stderr, "numaplace map: --policy, --pages and --nodes (or --synthetic) are "
                        "required\n");
        return EXIT_USAGE;
    }
    return 0;
}

static int map_print_json(const struct map_args *a, const npl_topo *t, const int *out)
{
    int nn = npl_topo_node_count(t, 1);
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-map/1");
    json_add_str(root, "policy", a->policy);
    json_add_str(root, "synthetic", a->synthetic);
    json_add_num(root, "page_size_bytes", (double)a->page_size);
    json_add_num(root, "page_count", (double)a->pages);
    cJSON *pages = json_add_arr(root, "pages");
    for (size_t i = 0; i < a->pages; i++)
        json_add_num(pages, NULL, out[i]);
    cJSON *nodes = json_add_arr(root, "nodes");
    for (int k = 0; k < nn; k++) {
        int id = npl_topo_node_id(t, k);
        size_t count = 0;
        for (size_t i = 0; i < a->pages; i++)
            count += out[i] == id;
        cJSON *o = json_add_obj(nodes, NULL);
        json_add_num(o, "os_id", id);
        json_add_num(o, "pages", (double)count);
    }
    int rc = json_write(stdout, root);
    json_free(root);
    return rc < 0 ? (fprintf(stderr, "numaplace map: cannot write the JSON output\n"), EXIT_FAILED)
                  : 0;
}

static int map_shape(const struct map_args *a, size_t bytes, npl_shape *shape)
{
    *shape = (npl_shape){1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    if (!a->rows)
        return 0;
    if (bytes % a->rows) {
        fprintf(stderr, "numaplace map: %zu bytes do not split into %zu rows\n", bytes, a->rows);
        return EXIT_USAGE;
    }
    *shape = (npl_shape){1, 2, {a->rows, bytes / a->rows, 0}, NPL_ROW_MAJOR};
    return 0;
}

int cmd_map(int argc, char **argv)
{
    struct map_args a;
    int rc = map_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char desc[128];
    if (!a.synthetic) {
        snprintf(desc, sizeof desc, "numa:%zu core:%zu pu:1", a.nodes, a.cores);
        a.synthetic = desc;
    }
    size_t bytes;
    if (__builtin_mul_overflow(a.pages, a.page_size, &bytes)) {
        fprintf(stderr, "numaplace map: %zu pages of %zu bytes overflow the address space\n",
                a.pages, a.page_size);
        return EXIT_USAGE;
    }
    npl_shape shape;
    if ((rc = map_shape(&a, bytes, &shape)) != 0)
        return rc;
    npl_topo *t;
    if (npl_topo_load_synthetic(&t, a.synthetic) < 0) { /* a bad --synthetic: a usage error */
        if (errno != EINVAL)
            return cli_fail("topology");
        fprintf(stderr, "numaplace map: --synthetic: %s\n", npl_last_error());
        return EXIT_USAGE;
    }
    npl_policy *p;
    if (npl_policy_parse(&p, a.policy) < 0) {
        fprintf(stderr, "numaplace map: %s\n", npl_last_error());
        npl_topo_destroy(t);
        return EXIT_USAGE;
    }
    int *out = malloc(a.pages * sizeof *out);
    rc = out ? npl_policy_map(p, t, &shape, bytes, a.page_size, 0, a.pages, out) : -1;
    if (rc < 0)
        fprintf(stderr, "numaplace map: %s\n", out ? npl_last_error() : "out of memory");
    else if (a.json)
        rc = map_print_json(&a, t, out) ? -2 : 0;
    else
        for (size_t i = 0; i < a.pages; i++)
            printf("%d%c", out[i], (i + 1) % 32 == 0 || i + 1 == a.pages ? '\n' : ' ');
    free(out);
    npl_policy_free(p);
    npl_topo_destroy(t);
    return rc == -1 ? EXIT_USAGE : rc == -2 ? EXIT_FAILED : 0;
}
