/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: `numaplace run`'s option parser (cli/run_args.c, compiled in here: the fuzz
 * build links only the library). Input: arguments separated by newlines ("--first\n0\nprog").
 * Invariants: 0 means a program index inside argv and values that re-check as valid; any other
 * result is the usage status 2; nothing crashes, hangs or reads outside argv. */
#include "../../cli/run_args.c"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "run";
    for (char *save = NULL, *tok = strtok_r(s, "\n", &save); tok && argc < MAX_ARGS;
         tok = strtok_r(NULL, "\n", &save))
        argv[argc++] = tok;
    argv[argc] = NULL;
    FILE *err = fopen("/dev/null", "w");
    struct run_args a;
    int rc = run_parse_args(argc, argv, &a, err ? err : stderr);
    if (err)
        fclose(err);
    uint64_t v;
    if (rc != 0 && rc != 2)
        abort();
    if (rc == 0 && !a.help) {
        if (a.prog < 1 || a.prog >= argc)
            abort(); /* the program must be inside argv */
        if (a.threshold && npl_env_parse_threshold(a.threshold, &v) < 0)
            abort(); /* a threshold the interposer would refuse */
        if (a.first && npl_env_parse_first(a.first, &v) < 0)
            abort(); /* --first 0, 2^64 - 1, -1 are refused */
        if (a.huge && strcmp(a.huge, "thp") && strcmp(a.huge, "2M"))
            abort();
    }
    free(s);
    return 0;
}
