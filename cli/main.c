/* main.c - numaplace: see where memory goes on NUMA machines. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int cli_fail(const char *what)
{
    fprintf(stderr, "numaplace: %s: %s (%s)\n", what, npl_last_error(), strerror(errno));
    return EXIT_FAILED;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        fprintf(stderr, "numaplace %s: option \"%s\" needs a value\n", cmd, arg);
    else
        fprintf(stderr, "numaplace %s: unknown option \"%s\" (try --help)\n", cmd, arg);
    return EXIT_USAGE;
}

#ifndef NPL_INSTALL_LIBDIR
#define NPL_INSTALL_LIBDIR "lib"
#endif

/* dir/rel, and for a bare file name also dir/../lib/numaplace/rel and dir/../LIBDIR/numaplace/rel
 * (an installed tree: P/bin/numaplace, P/LIBDIR/numaplace/); each tried is added to tried */
static int find_in(const char *dir, const char *rel, char *out, size_t size, char *tried, size_t tsize)
{
    static const char *const sub[] = {"", "../lib/numaplace/", "../" NPL_INSTALL_LIBDIR "/numaplace/"};
    int n = strchr(rel, '/') ? 1 : 3;
    if (n == 3 && !strcmp(NPL_INSTALL_LIBDIR, "lib"))
        n = 2;
    for (int i = 0; i < n; i++) {
        snprintf(out, size, "%s/%s%s", dir, sub[i], rel);
        if (access(out, R_OK) == 0)
            return 0;
        size_t used = strlen(tried);
        snprintf(tried + used, tsize - used, "%s%s", used ? ", " : "", out);
    }
    return -1;
}

int cli_find_file(const char *env_name, const char *const *rel, int n, char *out, size_t size)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return access(out, R_OK);
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        snprintf(out, size, "%s (/proc/self/exe unreadable; set %s)", n > 0 ? rel[0] : "?", env_name);
        return -1;
    }
    self[len] = 0;
    const char *dir = dirname(self);
    char tried[8192] = "";
    for (int i = 0; i < n; i++)
        if (find_in(dir, rel[i], out, size, tried, sizeof tried) == 0)
            return 0;
    /* the message names every place looked at, and the variable that overrides them */
    snprintf(out, size, "%s (looked for %s; %s unset)", n > 0 ? rel[0] : "?", tried, env_name);
    return -1;
}

int cli_topo(npl_topo **out, const char *synthetic, const npl_topo **use)
{
    *out = NULL;
    if (synthetic) {
        if (npl_topo_load_synthetic(out, synthetic) < 0)
            return -1;
        *use = *out;
        return 0;
    }
    *use = npl_topo_self();
    return *use ? 0 : -1;
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
