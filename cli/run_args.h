/* SPDX-License-Identifier: BSD-3-Clause */
/* run_args.h - `numaplace run`'s command line, parsed and checked before anything happens
 * (pure: no system call; fuzzed by tests/fuzz/fuzz_run_args.c). */
#ifndef NPL_RUN_ARGS_H
#define NPL_RUN_ARGS_H
#include <stdio.h>

struct run_args {
    const char *policy, *pin, *nodes, *huge, *threshold, *first;
    const char *profile; /* --profile FILE: the per-array policies of a profile */
    int next_touch;
    int verbose;   /* --verbose: print what run does (thread -> CPU -> node, policy, pages) */
    int json;      /* --json: the same as one JSON object on stderr */
    int help;      /* --help: print the usage, exit 0 */
    int usage;     /* the error was the command line's shape: show the usage too */
    int prog;      /* argv index of the program */
    char **prog_argv; /* argv + prog */
};

/* Parse argv (options end at the program's name). Returns 0, or an exit status (2: usage) after
 * a message on err. Every value is checked as the interposer reads it (preload/env.h): --huge
 * thp|2M, --threshold a size from 1 byte with K/M/G, --first a count from 1 (never wrapped). */
int run_parse_args(int argc, char **argv, struct run_args *a, FILE *err);
/* run.c: everything run does before exec; profiling: `numaplace profile` (the interposer is
 * loaded whatever the flags). 0 with the program and its argv, RUN_HELP after --help's text, or
 * an exit status after a message. args (may be NULL) gets the parsed command line. */
#define RUN_HELP (-1)
int run_setup(int argc, char **argv, int profiling, char *prog, size_t size, char ***prog_argv,
              struct run_args *args);
/* run_profile.c: --profile FILE is a profile of prog (exit 2 after a message if not); a warning
 * when pin differs from the pinning it was taken under */
int run_check_profile(const char *file, const char *prog, const char *pin);
#endif
