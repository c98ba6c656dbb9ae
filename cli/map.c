/* map.c - numaplace map: the pure page->node map of a policy, one node id per page. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static int parse_size(const char *s, size_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end || *s == '-' || !*s)
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

int cmd_map(int argc, char **argv)
{
    const char *policy = NULL, *synthetic = NULL;
    size_t nodes = 0, pages = 0, cores = 1, page_size = 4096, rows = 0;
    static const struct option opts[] = {{"policy", required_argument, NULL, 'p'},
                                         {"synthetic", required_argument, NULL, 's'},
                                         {"nodes", required_argument, NULL, 'n'},
                                         {"pages", required_argument, NULL, 'k'},
                                         {"cores-per-node", required_argument, NULL, 'c'},
                                         {"page-size", required_argument, NULL, 'b'},
                                         {"rows", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c, idx = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
        int bad = 0;
        switch (c) {
        case 'h':
            printf("usage: numaplace map --policy STR (--nodes N | --synthetic DESC) --pages K\n"
                   "                     [--cores-per-node C] [--rows R] [--page-size B]\n"
                   "Prints the node of each of K pages under the policy, whitespace-separated.\n"
                   "Pure: no memory is touched, no system call made. --nodes N uses a synthetic\n"
                   "machine of N nodes with C cores each (node ids 0..N-1). --rows R lays the\n"
                   "pages out as R rows (units for block sizes and thread schedules).\n"
                   "Limits: N <= %d, C <= %d, N x C <= %d (building larger synthetic machines\n"
                   "takes more than about a second); K <= 2^32.\n",
                   MAP_MAX_NODES, MAP_MAX_CORES, MAP_MAX_PUS);
            return 0;
        case 'p':
            policy = optarg;
            break;
        case 's':
            synthetic = optarg;
            break;
        case 'n':
            bad = parse_size(optarg, &nodes) || nodes == 0 || nodes > MAP_MAX_NODES;
            break;
        case 'k':
            bad = parse_size(optarg, &pages) || pages == 0 || pages > (size_t)1 << 32;
            break;
        case 'c':
            bad = parse_size(optarg, &cores) || cores == 0 || cores > MAP_MAX_CORES;
            break;
        case 'b':
            bad = parse_size(optarg, &page_size) || page_size == 0;
            break;
        case 'r':
            bad = parse_size(optarg, &rows) || rows == 0;
            break;
        default:
            return cli_bad_option("map", c, argv);
        }
        if (bad) {
            fprintf(stderr, "numaplace map: bad value \"%s\" for --%s (see --help for the "
                            "limits)\n", optarg, opts[idx].name);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace map: unknown argument \"%s\"\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!synthetic && nodes * cores > MAP_MAX_PUS) {
        fprintf(stderr, "numaplace map: --nodes %zu x --cores-per-node %zu is over the limit of "
                        "%d cores\n", nodes, cores, MAP_MAX_PUS);
        return EXIT_USAGE;
    }
    if (!policy || !pages || (!nodes && !synthetic)) {
        fprintf(stderr, "numaplace map: --policy, --pages and --nodes (or --synthetic) are "
                        "required\n");
        return EXIT_USAGE;
    }
    char desc[128];
    if (!synthetic) {
        snprintf(desc, sizeof desc, "numa:%zu core:%zu pu:1", nodes, cores);
        synthetic = desc;
    }
    size_t bytes;
    if (__builtin_mul_overflow(pages, page_size, &bytes)) {
        fprintf(stderr, "numaplace map: %zu pages of %zu bytes overflow the address space\n", pages,
                page_size);
        return EXIT_USAGE;
    }
    npl_topo *t;
    if (npl_topo_load_synthetic(&t, synthetic) < 0)
        return cli_fail("topology");
    npl_policy *p;
    if (npl_policy_parse(&p, policy) < 0) {
        fprintf(stderr, "numaplace map: %s\n", npl_last_error());
        npl_topo_destroy(t);
        return EXIT_USAGE;
    }
    npl_shape shape = {1, 1, {bytes, 0, 0}, NPL_ROW_MAJOR};
    if (rows) {
        if (bytes % rows) {
            fprintf(stderr, "numaplace map: %zu bytes do not split into %zu rows\n", bytes, rows);
            return EXIT_USAGE;
        }
        shape = (npl_shape){1, 2, {rows, bytes / rows, 0}, NPL_ROW_MAJOR};
    }
    int *out = malloc(pages * sizeof *out);
    int rc = out ? npl_policy_map(p, t, &shape, bytes, page_size, 0, pages, out) : -1;
    if (rc < 0) {
        fprintf(stderr, "numaplace map: %s\n", out ? npl_last_error() : "out of memory");
    } else {
        for (size_t i = 0; i < pages; i++)
            printf("%d%c", out[i], (i + 1) % 32 == 0 || i + 1 == pages ? '\n' : ' ');
    }
    free(out);
    npl_policy_free(p);
    npl_topo_destroy(t);
    return rc < 0 ? EXIT_USAGE : 0;
}
