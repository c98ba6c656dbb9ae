/* demo.c - numaplace demo: place an array under each policy and show where its pages are. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* mappings of /proc/self/maps that cover [a, a+len): 1 unless the placement split the array */
static int maps_covering(const void *a, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    uintptr_t lo = (uintptr_t)a, hi = lo + len;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

static int demo_one(const char *str, size_t bytes)
{
    const npl_topo *t = npl_topo_self();
    npl_policy *p;
    if (npl_policy_parse(&p, str) < 0) {
        fprintf(stderr, "numaplace demo: %s\n", npl_last_error());
        return EXIT_USAGE;
    }
    char *a = npl_alloc(bytes, p);
    npl_policy_free(p);
    if (!a)
        return cli_fail(str);
    int maps = maps_covering(a, bytes);
    struct npl_array_info info;
    struct npl_check chk;
    npl_array_info(a, &info);
    if (npl_check(a, &chk) < 0) {
        npl_free(a);
        return cli_fail("check");
    }
    int nn = npl_topo_node_count(t, 1);
    size_t *counts = calloc((size_t)npl_topo_max_node_id(t) + 1, sizeof *counts), absent = 0;
    if (!counts || npl_histogram(a, bytes, counts, &absent) < 0) {
        free(counts);
        npl_free(a);
        return cli_fail("histogram");
    }
    char polstr[256];
    npl_array_policy(a, polstr, sizeof polstr);
    printf("%-28s %7.3f s %4zu syscalls %3d map%s placed %zu/%zu misplaced %zu absent %zu  pages:",
           polstr, info.last.seconds, info.last.syscalls, maps, maps == 1 ? " " : "s", chk.placed,
           chk.pages, chk.misplaced, chk.absent);
    for (int i = 0; i < nn; i++)
        printf(" n%d=%zu", npl_topo_node_id(t, i), counts[npl_topo_node_id(t, i)]);
    printf("\n");
    free(counts);
    npl_free(a);
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    const char *policy = NULL;
    size_t mib = 64;
    static const struct option opts[] = {{"policy", required_argument, NULL, 'p'},
                                         {"mib", required_argument, NULL, 'm'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: numaplace demo [--policy STR] [--mib N]\n"
                   "Allocates an N MiB array (default 64) under each policy (or the one given),\n"
                   "and prints the time, system calls, mappings covering the array (1: not split),\n"
                   "intended-vs-actual pages\n"
                   "and the pages per node.\n");
            return 0;
        case 'p':
            policy = optarg;
            break;
        case 'm': {
            char *end;
            errno = 0;
            mib = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || *optarg == '-' || mib == 0 || mib > (1 << 20)) {
                fprintf(stderr, "numaplace demo: bad --mib \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        default:
            return cli_bad_option("demo", c, argv);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace demo: unknown option \"%s\"\n", argv[optind]);
        return EXIT_USAGE;
    }
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    int usable = npl_topo_node_count(t, 0);
    printf("numaplace demo: %zu MiB array, %d usable node%s\n", mib, usable, usable == 1 ? "" : "s");
    if (usable <= 1)
        printf("(one node: every page lands on it; run under tools/numavm to see policies spread)\n");
    if (policy)
        return demo_one(policy, mib << 20);
    static const char *all[] = {"first_touch", "bind_all", "bind_block", "cyclic",
                                "cyclic_block:16", "skew_mapp", "prime_mapp", "random:seed=42",
                                "random_block:8,seed=42", NULL};
    int rc = 0;
    for (int i = 0; all[i] && rc == 0; i++)
        rc = demo_one(all[i], mib << 20);
    if (rc == 0 && usable >= 2) {
        const char *w = npl_topo_node_id(t, 0) == 0 && npl_topo_node_count(t, 1) > 1
                            ? "weighted:0=3,1=1" : NULL;
        if (w)
            rc = demo_one(w, mib << 20);
    }
    return rc;
}
