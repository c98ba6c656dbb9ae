/* SPDX-License-Identifier: BSD-3-Clause */
/* demo.c - numaplace demo: place an array under each policy and show where its pages are. */
#include "cli.h"
#include "common.h"
#include "json.h"
#include "base/number.h"

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

/* one policy's array: placed, checked, counted; printed as a row or added to the JSON */
static int demo_one(const char *str, size_t bytes, cJSON *jarr)
{
    const npl_topo *t = npl_topo_self();
    npl_policy *p;
    if (npl_policy_parse(&p, str) < 0) {
        fprintf(stderr, "numaplace demo: %s\n", npl_last_error());
        return EXIT_USAGE;
    }
    char *a = npl_alloc(bytes, p);
    npl_policy_free(p);
    if (!a && (errno == EINVAL || errno == EXDEV)) { /* a node this machine lacks or denies */
        fprintf(stderr, "numaplace demo: policy \"%s\": %s\n", str, npl_last_error());
        return EXIT_USAGE;
    }
    if (!a)
        return cli_fail(str);
    int maps = maps_covering(a, bytes);
    struct npl_array_info info;
    struct npl_check chk;
    npl_array_info(a, &info);
    int nn = npl_topo_node_count(t, 1);
    size_t *counts = calloc((size_t)npl_topo_max_node_id(t) + 1, sizeof *counts), absent = 0;
    if (npl_check(a, &chk) < 0 || !counts || npl_histogram(a, bytes, counts, &absent) < 0) {
        free(counts);
        npl_free(a);
        return cli_fail("check");
    }
    char polstr[256];
    npl_array_policy(a, polstr, sizeof polstr);
    cJSON *o = jarr ? json_add_obj(jarr, NULL) : NULL, *jn = NULL;
    if (o) {
        json_add_str(o, "policy", polstr);
        json_add_num(o, "place_seconds", info.last.seconds);
        json_add_num(o, "syscalls", (double)info.last.syscalls);
        json_add_num(o, "mappings", maps);
        json_add_num(o, "pages", (double)chk.pages);
        json_add_num(o, "placed_pages", (double)chk.placed);
        json_add_num(o, "misplaced_pages", (double)chk.misplaced);
        json_add_num(o, "absent_pages", (double)chk.absent);
        jn = json_add_arr(o, "nodes");
    } else {
        printf("%-28s %8.3f %8zu %4d %9zu/%-7zu %9zu %7zu ", polstr, info.last.seconds,
               info.last.syscalls, maps, chk.placed, chk.pages, chk.misplaced, chk.absent);
    }
    for (int i = 0; i < nn; i++) {
        int id = npl_topo_node_id(t, i);
        if (jn) {
            cJSON *x = json_add_obj(jn, NULL);
            json_add_num(x, "os_id", id);
            json_add_num(x, "pages", (double)counts[id]);
        } else {
            printf(" n%d=%zu", id, counts[id]);
        }
    }
    if (!o)
        printf("\n");
    free(counts);
    npl_free(a);
    return 0;
}

static void demo_usage(void)
{
    printf("usage: numaplace demo [--policy STR] [--mib N] [--json]\n"
           "Allocates an N MiB array (default 64) under each policy (or the one given) and\n"
           "prints, per policy: the time to place it, the NUMA system calls made, the mappings\n"
           "covering the array (1: not split), the pages on the node the policy intended\n"
           "(placed/pages), those elsewhere (misplaced) or not present (absent), and the pages\n"
           "on each node (nN=). --json: the same as JSON (docs/schema/demo.schema.json).\n");
}

static void demo_header(size_t mib, int usable)
{
    printf("numaplace demo: %zu MiB array, %d usable node%s\n", mib, usable, usable == 1 ? "" : "s");
    if (usable <= 1)
        printf("(one node: every page lands on it; run under tools/numavm to see policies spread)\n");
    printf("time: seconds to place the array; syscalls: NUMA system calls; maps: mappings covering "
           "it (1 = not split);\nplaced/pages: pages on the node the policy intended; misplaced: "
           "on another node; absent: not present; nN: pages on node N\n");
    printf("%-28s %8s %8s %4s %17s %9s %7s  %s\n", "policy", "time s", "syscalls", "maps",
           "placed/pages", "misplaced", "absent", "pages per node");
}

/* --mib N: 0 and the value, or EXIT_USAGE */
static int parse_mib(const char *s, size_t *mib)
{
    uint64_t v;
    if (npl__parse_count(s, 1, 1 << 20, &v) == 0) {
        *mib = (size_t)v;
        return 0;
    }
    fprintf(stderr, "numaplace demo: bad --mib \"%s\" (a count from 1 to %d)\n", s, 1 << 20);
    return EXIT_USAGE;
}

static int demo_all(const npl_topo *t, const char *policy, size_t bytes, cJSON *jarr)
{
    if (policy)
        return demo_one(policy, bytes, jarr);
    static const char *all[] = {"first_touch", "bind_all", "bind_block", "cyclic",
                                "cyclic_block:16", "skew_mapp", "prime_mapp", "random:seed=42",
                                "random_block:8,seed=42", NULL};
    int rc = 0;
    for (int i = 0; all[i] && rc == 0; i++)
        rc = demo_one(all[i], bytes, jarr);
    if (rc == 0 && npl_topo_node_count(t, 0) >= 2 && npl_topo_node_id(t, 0) == 0 &&
        npl_topo_node_count(t, 1) > 1)
        rc = demo_one("weighted:0=3,1=1", bytes, jarr);
    return rc;
}

/* a --policy that does not parse or names nodes this machine lacks or denies: one line, exit 2,
 * before the table's header is printed */
static int check_policy(const npl_topo *t, const char *str)
{
    npl_policy *p = NULL;
    npl_plan *plan = NULL;
    int rc = npl_policy_parse(&p, str) < 0 || npl_plan_create(&plan, p, t, 0) < 0 ? -1 : 0;
    if (rc < 0)
        fprintf(stderr, "numaplace demo: policy \"%.200s\": %s\n", str, npl_last_error());
    npl_plan_free(plan);
    npl_policy_free(p);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    const char *policy = NULL;
    size_t mib = 64;
    int json = 0, c;
    static const struct option opts[] = {{"policy", required_argument, NULL, 'p'},
                                         {"mib", required_argument, NULL, 'm'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h')
            return demo_usage(), 0;
        else if (c == 'p')
            policy = optarg;
        else if (c == 'j')
            json = 1;
        else if (c == 'm' && parse_mib(optarg, &mib))
            return EXIT_USAGE;
        else if (c != 'm')
            return cli_bad_option("demo", c, argv);
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace demo: unknown option \"%s\"\n", argv[optind]);
        return EXIT_USAGE;
    }
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    if (policy && check_policy(t, policy) < 0)
        return EXIT_USAGE;
    cJSON *root = json ? json_object() : NULL, *jarr = NULL;
    if (root) {
        json_add_str(root, "schema", "numaplace-demo/1");
        json_add_num(root, "array_bytes", (double)(mib << 20));
        json_add_num(root, "node_count", npl_topo_node_count(t, 0));
        jarr = json_add_arr(root, "arrays");
    } else {
        demo_header(mib, npl_topo_node_count(t, 0));
    }
    int rc = demo_all(t, policy, mib << 20, jarr);
    if (root && rc == 0 && json_write(stdout, root) < 0)
        rc = EXIT_FAILED;
    json_free(root);
    return rc;
}
