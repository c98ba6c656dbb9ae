/* SPDX-License-Identifier: BSD-3-Clause */
/* run_args.c - `numaplace run`'s option parser (see run_args.h). */
#define _GNU_SOURCE
#include "run_args.h"
#include "preload/env.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static int check_values(const struct run_args *a, FILE *err)
{
    uint64_t v;
    if (a->huge && strcmp(a->huge, "thp") && strcmp(a->huge, "2M")) {
        fprintf(err, "numaplace run: --huge %s: use thp or 2M\n", a->huge);
        return 2;
    }
    if (a->threshold && npl_env_parse_threshold(a->threshold, &v) < 0) {
        fprintf(err, "numaplace run: --threshold %s: expected bytes >= 1, e.g. 1048576 or 1M "
                     "(at most %" PRIu64 ")\n", a->threshold, NPL__SIZE_MAX);
        return 2;
    }
    if (a->first && npl__parse_count(a->first, 0, 0, &v) == 0) {
        fprintf(err, "numaplace run: --first 0 would place nothing: leave out --policy "
                     "(or --first, to place every large allocation)\n");
        return 2;
    }
    if (a->first && npl_env_parse_first(a->first, &v) < 0) {
        fprintf(err, "numaplace run: --first %s: expected a count from 1 to %" PRIu64 "\n",
                a->first, NPL_ENV_FIRST_MAX);
        return 2;
    }
    return 0;
}

int run_parse_args(int argc, char **argv, struct run_args *a, FILE *err)
{
    static const struct option opts[] = {
        {"policy", required_argument, NULL, 'p'},   {"pin", required_argument, NULL, 'P'},
        {"nodes", required_argument, NULL, 'n'},    {"huge", required_argument, NULL, 'H'},
        {"threshold", required_argument, NULL, 't'}, {"first", required_argument, NULL, 'f'},
        {"next-touch", no_argument, NULL, 'N'},     {"help", no_argument, NULL, 'h'},
        {"verbose", no_argument, NULL, 'v'},        {"json", no_argument, NULL, 'j'},
        {"profile", required_argument, NULL, 'F'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    optind = 0; /* a full re-initialisation of getopt: the parser may run more than once */
    opterr = 0;
    int c;
    /* "+": options end at the program's name (its own options are its own) */
    /* short forms of the common flags: -p policy, -c pin (likwid-pin's -c), -n nodes,
     * -t threshold */
    while ((c = getopt_long(argc, argv, "+hvp:c:n:t:", opts, NULL)) != -1) {
        switch (c) {
        case 'p': a->policy = optarg; break;
        case 'c':
        case 'P': a->pin = optarg; break;
        case 'n': a->nodes = optarg; break;
        case 'H': a->huge = optarg; break;
        case 't': a->threshold = optarg; break;
        case 'f': a->first = optarg; break;
        case 'N': a->next_touch = 1; break;
        case 'F': a->profile = optarg; break;
        case 'v': a->verbose = 1; break;
        case 'j': a->json = 1; break;
        case 'h': a->help = 1; return 0;
        default:
            fprintf(err, "numaplace run: unknown option or missing value \"%s\"\n",
                    optind > 0 && optind - 1 < argc ? argv[optind - 1] : "?");
            a->usage = 1;
            return 2;
        }
    }
    a->prog = optind;
    a->prog_argv = argv + optind;
    if (a->prog >= argc) {
        fprintf(err, "numaplace run: no program given\n");
        a->usage = 1;
        return 2;
    }
    return check_values(a, err);
}
