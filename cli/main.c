/* main.c - numaplace: see where memory goes on NUMA machines. Dispatches to the subcommands. */
#include "cli.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: numaplace COMMAND [OPTIONS]\n"
               "\n"
               "commands:\n"
               "  topo [--json]              nodes, CPUs, memory, distances, what may be used\n"
               "  map --policy STR ...       print the page->node map of a policy (no memory touched)\n"
               "  demo [--policy STR] [--mib N] [--json]  place arrays under policies; where pages are\n"
               "  run [--policy STR] [--pin S] [--nodes SET] ... -- PROG ARGS   run a program placed\n"
               "  where PID [--json]         pages per node of a running process\n"
               "  profile [--out FILE] [RUN OPTIONS] -- PROG ARGS   measure each array's accesses,\n"
               "                             write a profile with a policy advised per array\n"
               "  advise FILE [--json]       the advice table of a profile\n"
               "  measure [--quick|--full] [--reps N] [--out FILE] [--json]  NUMA factor matrix\n"
               "  report [--quick|--full] [--reps N] [--out DIR] [--json]  verdict + report\n"
               "  --version                  print the version\n"
               "  help                       this text; COMMAND --help for each command\n"
               "\n"
               "policy strings: NAME[:PARAMS][@NODES], e.g. cyclic, cyclic_block:16, bind_all:0,2,\n"
               "  bind_block:threads=8,pin=scatter, skew_mapp, prime_mapp:7, random:seed=42,\n"
               "  weighted:0=3,1=1, cyclic@0-3\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) { /* usage errors: one line on stderr, the usage text with --help */
        fprintf(stderr, "numaplace: no command given (try numaplace --help)\n");
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("numaplace %s\n", npl_version());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "topo"))
        return cmd_topo(argc - 1, argv + 1);
    if (!strcmp(cmd, "map"))
        return cmd_map(argc - 1, argv + 1);
    if (!strcmp(cmd, "demo"))
        return cmd_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "where"))
        return cmd_where(argc - 1, argv + 1);
    if (!strcmp(cmd, "measure"))
        return cmd_measure(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "profile"))
        return cmd_profile(argc - 1, argv + 1);
    if (!strcmp(cmd, "advise"))
        return cmd_advise(argc - 1, argv + 1);
    fprintf(stderr, "numaplace: unknown command \"%.100s\" (try numaplace --help)\n", cmd);
    return EXIT_USAGE;
}
