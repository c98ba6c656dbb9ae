/* run.c - numaplace run: run an unmodified program under a placement.
 *
 * What this first version does (docs/numaplace.1 says the same):
 *   --policy STR   process-wide, through the kernel, so static binaries get it too: cyclic
 *                  (interleave over the policy's nodes) and bind_all (preferred first node).
 *                  Other policies need the allocation interposer, which is not built yet: refused.
 *   --pin S        OpenMP programs: OMP_PLACES is set to the strategy's CPU order (one place per
 *                  CPU) with OMP_PROC_BIND=close, so OpenMP thread n runs on entry n.
 *   --next-touch   the transparent next-touch tool (libnumaplace_ompt.so + LLVM's libomp).
 * Exit status: the program's; 2 bad usage or policy; 126 cannot execute; 127 not found. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: numaplace run [--policy STR] [--pin compact|scatter|LIST] [--next-touch] "
               "-- PROG [ARGS...]\n"
               "  --policy cyclic[@NODES] | bind_all[:NODES]   process-wide kernel policy\n"
               "  --pin STRATEGY   OpenMP thread n on entry n of the strategy (OMP_PLACES)\n"
               "  --next-touch     pages follow the threads that touch them first at each new\n"
               "                   OpenMP parallel region (LLVM libomp is preloaded)\n");
    return rc;
}

/* a file next to this executable, else in the build layout, else the environment */
static int find_tool(char *out, size_t size)
{
    const char *env = getenv("NUMAPLACE_OMPT");
    if (env) {
        snprintf(out, size, "%s", env);
        return access(out, R_OK);
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    snprintf(out, size, "%s/libnumaplace_ompt.so", dirname(self));
    return access(out, R_OK);
}

static int find_libomp(char *out, size_t size)
{
    const char *env = getenv("NUMAPLACE_LIBOMP");
    if (env) {
        snprintf(out, size, "%s", env);
        return access(out, R_OK);
    }
    glob_t g;
    int rc = glob("/usr/lib/llvm-*/lib/libomp.so.5", 0, NULL, &g);
    if (rc == 0 && g.gl_pathc > 0)
        snprintf(out, size, "%s", g.gl_pathv[g.gl_pathc - 1]);
    else if (access("/usr/local/bin/libomp.so.5", R_OK) == 0) /* the test guest's layout */
        snprintf(out, size, "/usr/local/bin/libomp.so.5");
    else
        rc = -1;
    if (rc == 0)
        globfree(&g);
    return rc == 0 || access(out, R_OK) == 0 ? 0 : -1;
}

static int set_policy(const char *str)
{
    npl_policy *p;
    if (npl_policy_parse(&p, str) < 0) {
        fprintf(stderr, "numaplace run: %s\n", npl_last_error());
        return EXIT_USAGE;
    }
    npl_policy_kind k = npl_policy_get_kind(p);
    /* the nodes: the pure map of one page per node tells them, validated */
    const npl_topo *t = npl_topo_self();
    int nn = npl_topo_node_count(t, 1), *map = calloc((size_t)nn * 4 + 4, sizeof *map);
    int rc = 0;
    if (k != NPL_CYCLIC && k != NPL_BIND_ALL && k != NPL_FIRST_TOUCH) {
        fprintf(stderr, "numaplace run: --policy %s needs the allocation interposer, which this "
                        "version does not have; use cyclic or bind_all here, or the library\n",
                str);
        rc = EXIT_USAGE;
    } else if (k != NPL_FIRST_TOUCH &&
               npl_policy_map(p, t, NULL, (size_t)nn * 4096, 4096, 0, (size_t)nn, map) < 0) {
        fprintf(stderr, "numaplace run: %s\n", npl_last_error());
        rc = EXIT_USAGE;
    } else if (k != NPL_FIRST_TOUCH) {
        unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
        int cnt = k == NPL_CYCLIC ? nn : 1;
        for (int i = 0; i < cnt; i++)
            mask[map[i] / (8 * sizeof(unsigned long))] |= 1UL << (map[i] % (8 * sizeof(unsigned long)));
        int mode = k == NPL_CYCLIC ? MPOL_INTERLEAVE : MPOL_PREFERRED;
        if (syscall(SYS_set_mempolicy, mode, mask, 1024UL + 1) < 0) {
            fprintf(stderr, "numaplace run: set_mempolicy: %s\n", strerror(errno));
            rc = EXIT_FAILED;
        }
    }
    free(map);
    npl_policy_free(p);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *policy = NULL, *pin = NULL;
    int next_touch = 0, i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else if (!strcmp(argv[i], "--help")) {
            return usage(stdout, 0);
        } else if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
            policy = argv[++i];
        } else if (!strcmp(argv[i], "--pin") && i + 1 < argc) {
            pin = argv[++i];
        } else if (!strcmp(argv[i], "--next-touch")) {
            next_touch = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "numaplace run: unknown option \"%s\"\n", argv[i]);
            return usage(stderr, EXIT_USAGE);
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "numaplace run: no program given\n");
        return usage(stderr, EXIT_USAGE);
    }
    if (pin) {
        int cpus[4096];
        int n = npl_pin_order(NULL, pin, cpus, 4096);
        if (n <= 0) {
            fprintf(stderr, "numaplace run: --pin %s: %s\n", pin, npl_last_error());
            return EXIT_USAGE;
        }
        char *places = malloc((size_t)n * 12 + 64);
        size_t off = 0;
        if (next_touch) {
            /* LLVM libomp preloaded over a gcc build: libgomp still loads and would bind the
             * initial thread before main if OMP_PLACES/OMP_PROC_BIND were set; libomp's own
             * variable places the threads instead */
            off += (size_t)sprintf(places, "granularity=fine,explicit,proclist=[");
            for (int k = 0; k < n && k < 4096; k++)
                off += (size_t)sprintf(places + off, "%s%d", k ? "," : "", cpus[k]);
            sprintf(places + off, "]");
            setenv("KMP_AFFINITY", places, 1);
            unsetenv("OMP_PLACES");
            unsetenv("OMP_PROC_BIND");
        } else {
            for (int k = 0; k < n && k < 4096; k++)
                off += (size_t)sprintf(places + off, "%s{%d}", k ? "," : "", cpus[k]);
            setenv("OMP_PLACES", places, 1);
            setenv("OMP_PROC_BIND", "close", 1);
        }
        free(places);
    }
    if (policy) {
        int rc = set_policy(policy);
        if (rc)
            return rc;
    }
    if (next_touch) {
        char tool[4096], omp[4096], pre[8300];
        if (find_tool(tool, sizeof tool) < 0 || find_libomp(omp, sizeof omp) < 0) {
            fprintf(stderr, "numaplace run: --next-touch needs libnumaplace_ompt.so (next to the "
                            "numaplace binary, or NUMAPLACE_OMPT) and LLVM's libomp.so.5 "
                            "(apt-get install libomp5-14, or NUMAPLACE_LIBOMP)\n");
            return EXIT_FAILED;
        }
        const char *old = getenv("LD_PRELOAD");
        snprintf(pre, sizeof pre, "%s %s%s%s", tool, omp, old ? " " : "", old ? old : "");
        setenv("LD_PRELOAD", pre, 1);
        if (!getenv("NUMAPLACE_NEXT_TOUCH"))
            setenv("NUMAPLACE_NEXT_TOUCH", "1", 1);
    }
    execvp(argv[i], argv + i);
    int e = errno;
    fprintf(stderr, "numaplace run: %s: %s\n", argv[i], strerror(e));
    return e == ENOENT ? 127 : 126;
}
