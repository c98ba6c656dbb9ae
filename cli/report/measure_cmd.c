/* SPDX-License-Identifier: BSD-3-Clause */
/* measure_cmd.c - numaplace measure: the subcommand (docs/man/numaplace-measure.1). The
 * measurements are in measure.c, their tables and the config they write in measure_out.c. */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "json.h"
#include "measure.h"
#include "report_parts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void measure_usage(void)
{
    printf("usage: numaplace measure [--quick|--full] [--reps N] [--out FILE] [--no-write] [--json]\n"
           "The NUMA factor matrix, as Intel MLC measures it: idle latency (pointer chase on\n"
           "2 MiB pages, 4 KiB pages beside it) and triad bandwidth with every CPU of the CPU node\n"
           "for every (CPU node, memory node) pair, the local/remote ratios, latency against\n"
           "working-set size, bandwidth against threads, loaded latency and read:write mixes.\n"
           "Each figure is repeated (--reps, default 5): median [min-max]. Progress on stderr,\n"
           "tables on stdout. Cache sizes (the latency buffer is 4x the last-level cache) from\n"
           "hwloc. Writes the [factors] of the platform config FILE (medians), keeping its other\n"
           "sections. Default FILE: the one the library reads, $NUMAPLACE_CONFIG, else\n"
           "~/.config/numaplace/config; with neither HOME nor NUMAPLACE_CONFIG set, --out is\n"
           "required. FILE is checked before measuring: a symbolic link, a file that is not\n"
           "a regular file or not a valid config, or a directory that cannot be written in is\n"
           "refused (exit 1).\n"
           "  --quick     tiny sizes (seconds; the numbers are only indicative)\n"
           "  --full      large sizes and longer chases (real runs)\n"
           "  --reps N    repetitions of every figure (1-%d, default 5)\n"
           "  --no-write  print only\n"
           "  --json      the figures as JSON on stdout (the \"factors\" of the report's\n"
           "              docs/schema/report.schema.json); the tables go to stderr\n"
           "exit status: 0; 1 measurement or writing failed; 2 bad usage\n", STATS_MAX_REPS);
}

static int measure_target(const char *out, char *path, size_t size)
{
    int rc = 0;
    if (out && (!*out || strlen(out) >= size)) { /* never measure for minutes, then fail */
        fprintf(stderr, "numaplace measure: --out: %s file name\n", *out ? "too long a" : "empty");
        return EXIT_USAGE;
    }
    if (out)
        snprintf(path, size, "%s", out);
    else
        rc = measure_default_path(path, size);
    return rc ? rc : measure_check_out("measure", path);
}

static int measure_json(const struct measure_result *r)
{
    static const char *levels[] = {"quick", "default", "full"};
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-measure/1");
    json_add_str(root, "numaplace_version", npl_version());
    json_add_str(root, "level", levels[r->level]);
    json_add_num(root, "reps", r->reps);
    report_json_factors(root, r);
    int rc = json_write(stdout, root);
    json_free(root);
    return rc < 0 ? (fprintf(stderr, "numaplace measure: cannot write the JSON\n"), EXIT_FAILED) : 0;
}

int cmd_measure(int argc, char **argv)
{
    int print_only = 0, json = 0;
    struct measure_opts mo = {1, 5, NULL};
    const char *out = NULL;
    static const struct option opts[] = {
        {"quick", no_argument, NULL, 'q'}, {"full", no_argument, NULL, 'f'},
        {"reps", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'},
        {"no-write", no_argument, NULL, 'n'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if ((c == 'q' && mo.level == 2) || (c == 'f' && mo.level == 0)) {
            fprintf(stderr, "numaplace measure: --quick and --full contradict each other\n");
            return EXIT_USAGE;
        } else if (c == 'q' || c == 'f')
            mo.level = c == 'q' ? 0 : 2;
        else if (c == 'r' && (mo.reps = measure_parse_reps("measure", optarg)) < 0)
            return EXIT_USAGE;
        else if (c == 'o')
            out = optarg;
        else if (c == 'n' || c == 'j')
            *(c == 'n' ? &print_only : &json) = 1;
        else if (c == 'h')
            return measure_usage(), 0;
        else if (c != 'r')
            return cli_bad_option("measure", c, argv);
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace measure: unknown argument \"%s\" (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    char path[4096];
    int rc = print_only ? 0 : measure_target(out, path, sizeof path);
    struct measure_result *r = rc ? NULL : calloc(1, sizeof *r);
    if (rc || !r)
        return rc ? rc : cli_fail("out of memory");
    rc = measure_run(&mo, 1, r);
    if (rc == 0) {
        measure_print(json ? stderr : stdout, r);
        if (json)
            rc = measure_json(r);
        if (rc == 0 && !print_only && (rc = measure_write_config(r, path)) == 0)
            fprintf(json ? stderr : stdout, "\nwrote %s\n", path);
    }
    free(r);
    return rc;
}
