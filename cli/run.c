/* run.c - numaplace run: run an unmodified program under a placement (docs/man/numaplace-run.1).
 *
 *   --policy STR   cyclic and bind_all also become the process-wide kernel policy before exec
 *                  (set_mempolicy: MPOL_INTERLEAVE over the policy's nodes; bind_all: one node
 *                  MPOL_PREFERRED, several MPOL_BIND), so static programs get them too. Any policy
 *                  applies to the large allocations of dynamically linked programs through
 *                  libnumaplace_preload.so (LD_PRELOAD; NUMAPLACE_POLICY, NUMAPLACE_THRESHOLD,
 *                  NUMAPLACE_FIRST, NUMAPLACE_HUGE).
 *   --pin S        dynamic programs: the preload pins the main thread as thread 0 and each new
 *                  thread as thread n in creation order (NUMAPLACE_PIN); static programs: only
 *                  OpenMP threads, through OMP_PLACES/OMP_PROC_BIND.
 *   --nodes SET    memory and CPUs restricted to SET: the policy gets "@SET" (no policy: bind_all
 *                  over SET), the CPU affinity is narrowed to SET's CPUs (never widened).
 *   --next-touch   the transparent next-touch tool (libnumaplace_ompt.so + LLVM's libomp).
 * Defaults come from the platform config file ([policy] default, threshold; [threads] pin;
 * [machine] nodes, cpus).
 * Exit status: the program's; 2 bad usage, unknown policy or nodes outside the allowed set (or a
 * policy a static program cannot get); 1 set-up failed (bad config file, preload library missing,
 * system call refused); 126 the program cannot be executed; 127 it does not exist. */
#define _GNU_SOURCE
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXNODES 1024

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: numaplace run [OPTIONS] -- PROG [ARGS...]\n"
            "  --policy STR     a numaplace policy (cyclic, bind_all:1, skew_mapp, weighted:0=3,1=1, ...)\n"
            "                   cyclic/bind_all: process-wide kernel policy (static programs too);\n"
            "                   any policy: large allocations of dynamic programs (interposed malloc)\n"
            "  --pin S          compact | scatter | CPU list: thread n (main = 0, then creation\n"
            "                   order) on the n-th allowed CPU of S; without --pin threads are free\n"
            "  --nodes SET      use only these nodes (memory and CPUs), e.g. 0-1\n"
            "  --huge thp|2M    large allocations on transparent or 2 MiB hugetlb pages\n"
            "  --threshold B    allocations of at least B bytes are placed (default 1M; K/M/G)\n"
            "  --first N        only the first N large allocations are placed\n"
            "  --next-touch     pages follow the threads that touch them first at each new\n"
            "                   OpenMP parallel region (LLVM libomp is preloaded)\n"
            "exit status: PROG's; 2 usage/unknown policy/nodes outside the allowed set;\n"
            "  1 set-up failed; 126 PROG cannot be executed; 127 PROG not found\n");
    return rc;
}

/* a file next to this executable, else $env */
static int find_beside(const char *env_name, const char *file, char *out, size_t size)
{
    return cli_find_file(env_name, &file, 1, out, size);
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

/* PROG as execvp would find it: 0 and the path, or 127 (not found) / 126 (not executable) */
static int resolve_prog(const char *prog, char *out, size_t size)
{
    struct stat st;
    if (strchr(prog, '/')) {
        snprintf(out, size, "%s", prog);
        if (stat(out, &st) < 0)
            return 127;
        return S_ISREG(st.st_mode) && access(out, X_OK) == 0 ? 0 : 126;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int seen = 0;
    while (*path) {
        size_t l = strcspn(path, ":");
        snprintf(out, size, "%.*s%s%s", (int)l, path, l ? "/" : "", prog);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            seen = 1;
        }
        path += l + (path[l] == ':');
    }
    return seen ? 126 : 127;
}

/* 1 dynamically linked ELF (or a script: its interpreter is), 0 static ELF */
static int is_dynamic(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    Elf64_Ehdr eh;
    int dyn = 1;
    if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64) {
        dyn = 0;
        for (int i = 0; i < eh.e_phnum && i < 256; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) !=
                (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_INTERP)
                dyn = 1;
        }
    }
    close(fd);
    return dyn;
}

/* --nodes: every node exists, is allowed and has memory; returns its CPUs in *cpus */
static int check_nodes(const char *set, int **list, int *n)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    *list = NULL;
    *n = 0;
    /* parse "0-2,5" */
    const char *p = set;
    int *v = calloc(MAXNODES, sizeof *v), k = 0;
    while (*p && k < MAXNODES) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            break;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                break;
        }
        for (long x = a; x <= b && k < MAXNODES; x++)
            v[k++] = (int)x;
        p = end;
        if (*p == ',')
            p++;
        else
            break;
    }
    if (*p || !k) {
        fprintf(stderr, "numaplace run: --nodes %s: expected a node list like 0-1,3\n", set);
        free(v);
        return EXIT_USAGE;
    }
    for (int i = 0; i < k; i++) {
        int idx = npl_topo_node_index(t, v[i]);
        struct npl_node_info info;
        if (idx < 0 || npl_topo_node_info(t, idx, &info) < 0) {
            fprintf(stderr, "numaplace run: --nodes %s: node %d does not exist on this machine\n",
                    set, v[i]);
            free(v);
            return EXIT_USAGE;
        }
        if (!info.allowed || !info.memory_bytes) {
            fprintf(stderr, "numaplace run: --nodes %s: node %d is outside this process's allowed "
                            "nodes (cpuset) or has no memory\n", set, v[i]);
            free(v);
            return EXIT_USAGE;
        }
    }
    *list = v;
    *n = k;
    return 0;
}

/* narrow the CPU affinity to the allowed CPUs of the nodes (never widen) */
static int narrow_cpus(const int *nodes, int n)
{
    const npl_topo *t = npl_topo_self();
    cpu_set_t set;
    CPU_ZERO(&set);
    int any = 0, cpus[1024];
    for (int i = 0; i < n; i++) {
        int c = npl_topo_node_cpus(t, npl_topo_node_index(t, nodes[i]), cpus, 1024);
        for (int j = 0; j < c && j < 1024; j++)
            if (cpus[j] < CPU_SETSIZE) {
                CPU_SET(cpus[j], &set);
                any = 1;
            }
    }
    if (!any) /* memory-only nodes: leave the CPUs alone */
        return 0;
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        fprintf(stderr, "numaplace run: cannot restrict CPUs to the nodes: %s\n", strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

/* The process-wide kernel policy for cyclic / bind_all; *kernel = 1 if the policy is one. */
static int set_kernel_policy(npl_policy *p, const char *str, int *kernel)
{
    npl_policy_kind k = npl_policy_get_kind(p);
    *kernel = k == NPL_CYCLIC || k == NPL_BIND_ALL || k == NPL_FIRST_TOUCH;
    const npl_topo *t = npl_topo_self();
    int nn = npl_topo_node_count(t, 1);
    int *map = calloc((size_t)nn * 4 + 4, sizeof *map);
    int rc = 0;
    /* the nodes: the pure map of one page per node (cyclic) validates and lists them */
    if (npl_policy_map(p, t, NULL, (size_t)nn * 4096, 4096, 0, (size_t)nn, map) < 0) {
        fprintf(stderr, "numaplace run: --policy %s: %s\n", str, npl_last_error());
        rc = EXIT_USAGE;
    } else if (k == NPL_CYCLIC || k == NPL_BIND_ALL) {
        unsigned long mask[MAXNODES / (8 * sizeof(unsigned long))] = {0};
        int cnt = 0, mode;
        const size_t bits = 8 * sizeof(unsigned long);
        if (k == NPL_CYCLIC) {
            for (int i = 0; i < nn; i++, cnt++)
                mask[map[i] / bits] |= 1UL << (map[i] % bits);
            mode = MPOL_INTERLEAVE;
        } else {
            /* bind_all's nodes: those its map uses for a large array, in order */
            char s[256];
            npl_policy_format(p, s, sizeof s);
            const char *c = strchr(s, ':');
            if (!c) {
                mask[map[0] / bits] |= 1UL << (map[0] % bits);
                cnt = 1;
            } else {
                for (c++; *c && *c != '@';) {
                    char *end;
                    long a = strtol(c, &end, 10), b = a;
                    if (end == c)
                        break;
                    if (*end == '-')
                        b = strtol(end + 1, &end, 10);
                    for (long x = a; x <= b && x < MAXNODES; x++, cnt++)
                        mask[x / bits] |= 1UL << (x % bits);
                    c = *end == ',' ? end + 1 : end;
                    if (*end != ',')
                        break;
                }
            }
            mode = cnt > 1 ? MPOL_BIND : MPOL_PREFERRED;
        }
        if (syscall(SYS_set_mempolicy, mode, mask, (unsigned long)MAXNODES + 1) < 0) {
            fprintf(stderr, "numaplace run: set_mempolicy: %s\n", strerror(errno));
            rc = EXIT_FAILED;
        }
    }
    free(map);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *policy = NULL, *pin = NULL, *nodes = NULL, *huge = NULL, *threshold = NULL,
               *first = NULL;
    int next_touch = 0, i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            return usage(stdout, 0);
        } else if (!strcmp(a, "--policy") && more) {
            policy = argv[++i];
        } else if (!strcmp(a, "--pin") && more) {
            pin = argv[++i];
        } else if (!strcmp(a, "--nodes") && more) {
            nodes = argv[++i];
        } else if (!strcmp(a, "--huge") && more) {
            huge = argv[++i];
        } else if (!strcmp(a, "--threshold") && more) {
            threshold = argv[++i];
        } else if (!strcmp(a, "--first") && more) {
            first = argv[++i];
        } else if (!strcmp(a, "--next-touch")) {
            next_touch = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "numaplace run: unknown option or missing value \"%s\"\n", a);
            return usage(stderr, EXIT_USAGE);
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "numaplace run: no program given\n");
        return usage(stderr, EXIT_USAGE);
    }
    if (huge && strcmp(huge, "thp") && strcmp(huge, "2M")) {
        fprintf(stderr, "numaplace run: --huge %s: use thp or 2M\n", huge);
        return EXIT_USAGE;
    }
    if (threshold && (strspn(threshold, "0123456789") == 0 ||
                      strspn(threshold + strspn(threshold, "0123456789"), "KMGkmgiB") !=
                          strlen(threshold + strspn(threshold, "0123456789")))) {
        fprintf(stderr, "numaplace run: --threshold %s: expected bytes, e.g. 1048576 or 1M\n",
                threshold);
        return EXIT_USAGE;
    }
    if (first && (!*first || strspn(first, "0123456789") != strlen(first))) {
        fprintf(stderr, "numaplace run: --first %s: expected a count\n", first);
        return EXIT_USAGE;
    }
    /* the platform config: defaults for what the command line leaves out */
    const npl_config *cfg = npl_config_self();
    if (!cfg) {
        fprintf(stderr, "numaplace run: config file: %s\n", npl_last_error());
        return EXIT_FAILED;
    }
    char cfg_nodes[256] = "", cfg_thr[64] = "";
    if (!policy)
        policy = npl_config_get(cfg, "policy", "default");
    if (!threshold && npl_config_get(cfg, "policy", "threshold")) {
        snprintf(cfg_thr, sizeof cfg_thr, "%s", npl_config_get(cfg, "policy", "threshold"));
        threshold = cfg_thr;
    }
    if (!nodes && npl_config_get(cfg, "machine", "nodes")) {
        snprintf(cfg_nodes, sizeof cfg_nodes, "%s", npl_config_get(cfg, "machine", "nodes"));
        nodes = cfg_nodes;
    }
    char prog[4096];
    int found = resolve_prog(argv[i], prog, sizeof prog);
    if (found) {
        fprintf(stderr, "numaplace run: %s: %s\n", argv[i],
                found == 127 ? "command not found" : "cannot execute (permission or not a file)");
        return found;
    }
    int dynamic = is_dynamic(prog);

    /* the policy string, restricted to --nodes */
    char polstr[512] = "";
    int *nlist = NULL, nn = 0;
    if (nodes) {
        int rc = check_nodes(nodes, &nlist, &nn);
        if (rc)
            return rc;
        if (!policy)
            snprintf(polstr, sizeof polstr, "bind_all:%s", nodes);
        else if (strchr(policy, '@') || !strncmp(policy, "bind_all:", 9) ||
                 !strncmp(policy, "weighted:", 9))
            snprintf(polstr, sizeof polstr, "%s", policy); /* its own nodes; checked below */
        else
            snprintf(polstr, sizeof polstr, "%s@%s", policy, nodes);
    } else if (policy) {
        snprintf(polstr, sizeof polstr, "%s", policy);
    }
    npl_policy *pol = NULL;
    if (*polstr && npl_policy_parse(&pol, polstr) < 0) {
        fprintf(stderr, "numaplace run: --policy %s: %s\n", polstr, npl_last_error());
        free(nlist);
        return EXIT_USAGE;
    }
    /* pinning: the command line, else the config's rule for this policy */
    char cfg_pin[256];
    if (!pin && npl_config_get(cfg, "threads", "pin") && npl_config_pin_for(cfg, pol, cfg_pin, sizeof cfg_pin) == 1)
        pin = cfg_pin;
    if (pin) {
        int cpus[1];
        if (npl_pin_order(NULL, pin, cpus, 1) <= 0) {
            fprintf(stderr, "numaplace run: --pin %s: %s\n", pin, npl_last_error());
            npl_policy_free(pol);
            free(nlist);
            return EXIT_USAGE;
        }
    }
    int kernel = 1, rc = 0;
    if (pol) {
        rc = set_kernel_policy(pol, polstr, &kernel);
        if (rc) {
            npl_policy_free(pol);
            free(nlist);
            return rc;
        }
    }
    npl_policy_free(pol);
    int need_preload = dynamic && (*polstr || pin || huge);
    if (!dynamic && (!kernel || huge)) {
        fprintf(stderr, "numaplace run: %s is statically linked: it can get only the process-wide "
                        "kernel policies (cyclic, bind_all), not %s%s\n", prog,
                huge ? "--huge " : polstr, huge ? huge : "");
        free(nlist);
        return EXIT_USAGE;
    }
    int ccpus[1024];
    int nc = npl_config_list(cfg, "machine", "cpus", ccpus, 1024);
    if (nc > 0) { /* [machine] cpus: the affinity narrowed to them (never widened) */
        cpu_set_t cur, want;
        CPU_ZERO(&want);
        sched_getaffinity(0, sizeof cur, &cur);
        for (int k = 0; k < nc && k < 1024; k++)
            if (ccpus[k] < CPU_SETSIZE && CPU_ISSET(ccpus[k], &cur))
                CPU_SET(ccpus[k], &want);
        if (!CPU_COUNT(&want) || sched_setaffinity(0, sizeof want, &want) < 0) {
            fprintf(stderr, "numaplace run: config [machine] cpus = %s: none of them is allowed "
                            "here\n", npl_config_get(cfg, "machine", "cpus"));
            free(nlist);
            return EXIT_USAGE;
        }
    }
    if (nn && (rc = narrow_cpus(nlist, nn))) {
        free(nlist);
        return rc;
    }
    free(nlist);
    char preload[4096] = "";
    if (need_preload &&
        find_beside("NUMAPLACE_PRELOAD", "libnumaplace_preload.so", preload, sizeof preload) < 0) {
        fprintf(stderr, "numaplace run: %s not found (next to the numaplace binary, or set "
                        "NUMAPLACE_PRELOAD)\n", preload);
        return EXIT_FAILED;
    }
    if (need_preload) {
        if (*polstr)
            setenv("NUMAPLACE_POLICY", polstr, 1);
        if (threshold)
            setenv("NUMAPLACE_THRESHOLD", threshold, 1);
        if (first)
            setenv("NUMAPLACE_FIRST", first, 1);
        if (huge)
            setenv("NUMAPLACE_HUGE", huge, 1);
        if (pin && !next_touch)
            setenv("NUMAPLACE_PIN", pin, 1);
    }
    if (pin && (!dynamic || next_touch)) {
        int cpus[4096];
        int n = npl_pin_order(NULL, pin, cpus, 4096);
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
        } else { /* static program: OpenMP threads only */
            for (int k = 0; k < n && k < 4096; k++)
                off += (size_t)sprintf(places + off, "%s{%d}", k ? "," : "", cpus[k]);
            setenv("OMP_PLACES", places, 1);
            setenv("OMP_PROC_BIND", "close", 1);
        }
        free(places);
    }
    char pre[12800] = "";
    if (next_touch) {
        char tool[4096], omp[4096];
        if (find_beside("NUMAPLACE_OMPT", "libnumaplace_ompt.so", tool, sizeof tool) < 0 ||
            find_libomp(omp, sizeof omp) < 0) {
            fprintf(stderr, "numaplace run: --next-touch needs libnumaplace_ompt.so (next to the "
                            "numaplace binary, or NUMAPLACE_OMPT) and LLVM's libomp.so.5 "
                            "(apt-get install libomp5-14, or NUMAPLACE_LIBOMP)\n");
            return EXIT_FAILED;
        }
        snprintf(pre, sizeof pre, "%s %s", tool, omp);
        if (!getenv("NUMAPLACE_NEXT_TOUCH"))
            setenv("NUMAPLACE_NEXT_TOUCH", "1", 1);
    }
    if (*preload) {
        size_t l = strlen(pre);
        snprintf(pre + l, sizeof pre - l, "%s%s", l ? " " : "", preload);
    }
    if (*pre) {
        const char *old = getenv("LD_PRELOAD");
        size_t l = strlen(pre);
        if (old && *old)
            snprintf(pre + l, sizeof pre - l, " %s", old);
        setenv("LD_PRELOAD", pre, 1);
    }
    execv(prog, argv + i);
    int e = errno;
    fprintf(stderr, "numaplace run: %s: %s\n", prog, strerror(e));
    return e == ENOENT ? 127 : 126;
}
