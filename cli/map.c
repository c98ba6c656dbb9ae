/* map.c - numaplace map: the pure page->node map of a policy, one node id per page. */
#include "cli.h"

#include <errno.h>
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

int cmd_map(int argc, char **argv)
{
    const char *policy = NULL, *synthetic = NULL;
    size_t nodes = 0, pages = 0, cores = 1, page_size = 4096, rows = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--help")) {
            printf("usage: numaplace map --policy STR (--nodes N | --synthetic DESC) --pages K\n"
                   "                     [--cores-per-node C] [--rows R] [--page-size B]\n"
                   "Prints the node of each of K pages under the policy, whitespace-separated.\n"
                   "Pure: no memory is touched, no system call made. --nodes N uses a synthetic\n"
                   "machine of N nodes with C cores each (node ids 0..N-1). --rows R lays the\n"
                   "pages out as R rows (units for block sizes and thread schedules).\n");
            return 0;
        }
        if (!v) {
            fprintf(stderr, "numaplace map: option \"%s\" needs a value\n", a);
            return EXIT_USAGE;
        }
        if (!strcmp(a, "--policy"))
            policy = v;
        else if (!strcmp(a, "--synthetic"))
            synthetic = v;
        else if (!strcmp(a, "--nodes"))
            bad = parse_size(v, &nodes) || nodes == 0 || nodes > 1024;
        else if (!strcmp(a, "--pages"))
            bad = parse_size(v, &pages) || pages == 0 || pages > (size_t)1 << 32;
        else if (!strcmp(a, "--cores-per-node"))
            bad = parse_size(v, &cores) || cores == 0 || cores > 1024;
        else if (!strcmp(a, "--page-size"))
            bad = parse_size(v, &page_size) || page_size == 0;
        else if (!strcmp(a, "--rows"))
            bad = parse_size(v, &rows) || rows == 0;
        else {
            fprintf(stderr, "numaplace map: unknown option \"%s\"\n", a);
            return EXIT_USAGE;
        }
        if (bad) {
            fprintf(stderr, "numaplace map: bad value \"%s\" for %s\n", v, a);
            return EXIT_USAGE;
        }
        i++;
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
    npl_topo *t;
    if (npl_topo_load_synthetic(&t, synthetic) < 0)
        return cli_fail("topology");
    npl_policy *p;
    if (npl_policy_parse(&p, policy) < 0) {
        fprintf(stderr, "numaplace map: %s\n", npl_last_error());
        npl_topo_destroy(t);
        return EXIT_USAGE;
    }
    size_t bytes = pages * page_size;
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
