/* SPDX-License-Identifier: BSD-3-Clause */
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
               "  advise FILE [--json] [--html OUT]  the advice table of a profile (--html: with a\n"
               "                             bar chart per array, one self-contained page)\n"
               "  measure [--quick|--full] [--reps N] [--out FILE] [--json]  NUMA factor matrix\n"
               "  report [--quick|--full] [--reps N] [--out DIR] [--json] [--profile FILE]\n"
               "                             verdict + report (+ the advice chart of a profile)\n"
               "  --version                  print the version\n"
               "  help [COMMAND]             this text; with COMMAND, its help (= COMMAND --help)\n"
               "\n"
               "policy strings: NAME[:PARAMS][@NODES], e.g. cyclic, cyclic_block:16, bind_all:0,2,\n"
               "  bind_block:threads=8,pin=scatter, skew_mapp, prime_mapp:7, random:seed=42,\n"
               "  weighted:0=3,1=1, cyclic@0-3\n");
}

/* the commands by name: cli.h's cmd_NAME(argc, argv), argv[0] being the command's name */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"topo", cmd_topo},       {"map", cmd_map},         {"demo", cmd_demo},
    {"run", cmd_run},         {"where", cmd_where},     {"measure", cmd_measure},
    {"report", cmd_report},   {"profile", cmd_profile}, {"advise", cmd_advise},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    fprintf(stderr, "numaplace: unknown command \"%.100s\" (try numaplace --help)\n", name);
    return NULL;
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
    if (!strcmp(cmd, "help") && argc > 2) { /* numaplace help CMD: CMD --help */
        const struct command *c = find_command(argv[2]);
        char help[] = "--help";
        char *help_argv[] = {argv[2], help, NULL};
        return c ? c->run(2, help_argv) : EXIT_USAGE;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    const struct command *c = find_command(cmd);
    return c ? c->run(argc - 1, argv + 1) : EXIT_USAGE;
}
