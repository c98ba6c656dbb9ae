/* run.c - numaplace run: run an unmodified program under a placement (docs/man/numaplace-run.1).
 *
 *   --policy STR   cyclic and bind_all also become the process-wide kernel policy before exec
 *                  (npl_set_thread_policy: MPOL_INTERLEAVE over the policy's nodes; bind_all: one
 *                  node MPOL_PREFERRED, several MPOL_BIND), so static programs get them too. Any policy
 *                  applies to the large allocations of dynamically linked programs through
 *                  libnumaplace_preload.so (LD_PRELOAD; NUMAPLACE_POLICY, NUMAPLACE_THRESHOLD,
 *                  NUMAPLACE_FIRST, NUMAPLACE_HUGE).
 *   --pin S        dynamic programs: the preload pins the main thread as thread 0 and each new
 *                  thread as thread n in creation order (NUMAPLACE_PIN), and LLVM libomp's
 *                  threads through KMP_AFFINITY=explicit,proclist=[the same order]; static
 *                  programs: only OpenMP threads, through OMP_PLACES/OMP_PROC_BIND. --pin
 *                  overrides the user's OMP_PLACES, OMP_PROC_BIND, GOMP_CPU_AFFINITY and
 *                  KMP_AFFINITY (a warning names each); without --pin they are left alone.
 *   --nodes SET    memory and CPUs restricted to SET: the policy gets "@SET" (no policy: bind_all
 *                  over SET; a policy naming nodes outside SET is refused), the kernel policy
 *                  binds memory to SET, the CPU affinity is narrowed to SET's CPUs (never widened).
 *   --next-touch   the transparent next-touch mode: libnumaplace_preload.so (which is also the
 *                  OMPT tool) + LLVM's libomp.
 * Defaults come from the platform config file ([policy] default, threshold; [threads] pin;
 * [machine] nodes, cpus).
 * Exit status: the program's; 2 bad usage, unknown policy or nodes outside the allowed set (or a
 * policy a static program cannot get); 1 set-up failed (bad config file, preload library missing,
 * system call refused); 126 the program cannot be executed; 127 it does not exist. */
#define _GNU_SOURCE
#include "cli.h"
#include "run_args.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <hwloc.h>
#include <limits.h>
#include <libgen.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
            "  --first N        only the first N (>= 1) large allocations are placed\n"
            "  --next-touch     pages follow the threads that touch them first at each new\n"
            "                   OpenMP parallel region (LLVM libomp is preloaded)\n"
            "  --pin overrides OMP_PLACES, OMP_PROC_BIND, GOMP_CPU_AFFINITY and KMP_AFFINITY\n"
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

/* --nodes: a list like 0-1,3 (hwloc_bitmap_list_sscanf); every node exists, is allowed and has
 * memory. Numbers are checked for overflow before hwloc sees them. */
static int check_nodes(const char *set, int **list, int *n)
{
    *list = NULL;
    *n = 0;
    if (!*set || strspn(set, "0123456789,-") != strlen(set)) {
        fprintf(stderr, "numaplace run: --nodes %s: expected a node list like 0-1,3\n", set);
        return EXIT_USAGE;
    }
    for (const char *p = set; *p;) { /* every number fits an int node id */
        size_t l = strspn(p, "0123456789");
        if (l) {
            errno = 0;
            unsigned long long v = strtoull(p, NULL, 10);
            if (errno == ERANGE || v >= MAXNODES) {
                fprintf(stderr, "numaplace run: --nodes %s: node number %.*s is out of range "
                                "(0-%d)\n", set, (int)l, p, MAXNODES - 1);
                return EXIT_USAGE;
            }
            p += l;
        } else {
            p++;
        }
    }
    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    if (!bm)
        return EXIT_FAILED;
    if (hwloc_bitmap_list_sscanf(bm, set) < 0 || hwloc_bitmap_iszero(bm) ||
        hwloc_bitmap_weight(bm) < 0 || set[0] == '-' || set[strlen(set) - 1] == '-' ||
        set[strlen(set) - 1] == ',' || strstr(set, ",,") || strstr(set, "--")) {
        fprintf(stderr, "numaplace run: --nodes %s: expected a node list like 0-1,3\n", set);
        hwloc_bitmap_free(bm);
        return EXIT_USAGE;
    }
    const npl_topo *t = npl_topo_self();
    if (!t) {
        hwloc_bitmap_free(bm);
        return cli_fail("topology");
    }
    int k = hwloc_bitmap_weight(bm), i = 0;
    int *v = calloc((size_t)k, sizeof *v);
    unsigned id;
    hwloc_bitmap_foreach_begin(id, bm) v[i++] = (int)id;
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(bm);
    for (i = 0; i < k; i++) {
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

/* The nodes the policy's map uses (validates it too): 0, or EXIT_USAGE with a message. With
 * --nodes, every one of them must be in SET. */
static int check_policy(npl_policy *p, const char *str, const int *nodes, int nn)
{
    const npl_topo *t = npl_topo_self();
    size_t pages = (size_t)npl_topo_node_count(t, 1) * 64 + 64;
    int *map = calloc(pages, sizeof *map), rc = 0;
    if (!map)
        return EXIT_FAILED;
    if (npl_policy_map(p, t, NULL, pages * 4096, 4096, 0, pages, map) < 0) {
        fprintf(stderr, "numaplace run: --policy %s: %s\n", str, npl_last_error());
        rc = EXIT_USAGE;
    }
    for (size_t i = 0; !rc && nn && i < pages; i++) {
        int in = map[i] < 0; /* first touch: no node of its own */
        for (int k = 0; k < nn && !in; k++)
            in = map[i] == nodes[k];
        if (!in) {
            fprintf(stderr, "numaplace run: --policy %s puts memory on node %d, outside --nodes: "
                            "drop one of them\n", str, map[i]);
            rc = EXIT_USAGE;
        }
    }
    free(map);
    return rc;
}

/* the process-wide kernel policy: the policy itself when it has a kernel form (cyclic,
 * bind_all), else bind_all over --nodes, else none. *kernel = 1 when the policy has one. */
static int set_kernel_policy(npl_policy *p, const char *nodes, int *kernel)
{
    npl_policy_kind k = p ? npl_policy_get_kind(p) : NPL_FIRST_TOUCH;
    *kernel = k == NPL_CYCLIC || k == NPL_BIND_ALL || k == NPL_FIRST_TOUCH;
    npl_policy *kp = NULL;
    const npl_policy *use = NULL;
    if (k == NPL_CYCLIC || k == NPL_BIND_ALL) {
        use = p;
    } else if (nodes) {
        char s[300];
        snprintf(s, sizeof s, "bind_all:%s", nodes);
        if (npl_policy_parse(&kp, s) < 0) {
            fprintf(stderr, "numaplace run: --nodes %s: %s\n", nodes, npl_last_error());
            return EXIT_USAGE;
        }
        use = kp;
    }
    int rc = 0;
    if (use && npl_set_thread_policy(NULL, use) < 0) {
        fprintf(stderr, "numaplace run: kernel memory policy: %s\n", npl_last_error());
        rc = errno == EINVAL || errno == EXDEV ? EXIT_USAGE : EXIT_FAILED;
    }
    npl_policy_free(kp);
    return rc;
}

/* the config's value, without a library error message when it is simply not set */
static const char *cfg_get(const npl_config *c, const char *sec, const char *key)
{
    char *dbg = getenv("NUMAPLACE_DEBUG") ? strdup(getenv("NUMAPLACE_DEBUG")) : NULL;
    if (dbg)
        unsetenv("NUMAPLACE_DEBUG");
    const char *v = npl_config_get(c, sec, key);
    if (dbg) {
        setenv("NUMAPLACE_DEBUG", dbg, 1);
        free(dbg);
    }
    return v;
}

/* --pin overrides the OpenMP runtimes' own placement variables */
static void override_env(const char *name, const char *pin)
{
    const char *v = getenv(name);
    if (v) {
        fprintf(stderr, "numaplace run: warning: --pin %s overrides %s=%s\n", pin, name, v);
        unsetenv(name);
    }
}

int cmd_run(int argc, char **argv)
{
    struct run_args a;
    int rc0 = run_parse_args(argc, argv, &a, stderr);
    if (a.help)
        return usage(stdout, 0);
    if (rc0)
        return a.usage ? usage(stderr, rc0) : rc0;
    const char *policy = a.policy, *pin = a.pin, *nodes = a.nodes, *huge = a.huge,
               *threshold = a.threshold, *first = a.first;
    int next_touch = a.next_touch, i = a.prog;
    unsigned long long v;
    /* the platform config: defaults for what the command line leaves out */
    const npl_config *cfg = npl_config_self();
    if (!cfg) {
        fprintf(stderr, "numaplace run: config file: %s\n", npl_last_error());
        return EXIT_FAILED;
    }
    char cfg_nodes[256] = "", cfg_thr[64] = "";
    if (!policy)
        policy = cfg_get(cfg, "policy", "default");
    if (!threshold && cfg_get(cfg, "policy", "threshold")) {
        snprintf(cfg_thr, sizeof cfg_thr, "%s", cfg_get(cfg, "policy", "threshold"));
        threshold = cfg_thr;
        if (run_parse_bytes(threshold, &v) < 0) {
            fprintf(stderr, "numaplace run: config [policy] threshold = %s: expected bytes >= 1 "
                            "(%s)\n", threshold, npl_config_source(cfg));
            return EXIT_FAILED;
        }
    }
    if (!nodes && cfg_get(cfg, "machine", "nodes")) {
        snprintf(cfg_nodes, sizeof cfg_nodes, "%s", cfg_get(cfg, "machine", "nodes"));
        nodes = cfg_nodes;
    }
    /* every value is checked before anything happens (the program never starts on a bad one) */
    int *nlist = NULL, nn = 0;
    if (nodes) {
        int rc = check_nodes(nodes, &nlist, &nn);
        if (rc)
            return rc;
    }
    char prog[4096];
    int found = resolve_prog(argv[i], prog, sizeof prog);
    if (found) {
        fprintf(stderr, "numaplace run: %s: %s\n", argv[i],
                found == 127 ? "command not found" : "cannot execute (permission or not a file)");
        free(nlist);
        return found;
    }
    int dynamic = is_dynamic(prog);

    /* the policy string, restricted to --nodes */
    char polstr[512] = "";
    if (nodes) {
        if (!policy)
            snprintf(polstr, sizeof polstr, "bind_all:%s", nodes);
        else if (strchr(policy, '@') || !strncmp(policy, "bind_all:", 9) ||
                 !strncmp(policy, "weighted:", 9) || !strcmp(policy, "first_touch"))
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
    if (pol) {
        int rc = check_policy(pol, polstr, nlist, nn);
        if (rc) {
            npl_policy_free(pol);
            free(nlist);
            return rc;
        }
    }
    /* pinning: the command line, else the config's rule for this policy */
    char cfg_pin[256];
    if (!pin && cfg_get(cfg, "threads", "pin") &&
        npl_config_pin_for(cfg, pol, cfg_pin, sizeof cfg_pin) == 1)
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
    npl_policy_kind kind = pol ? npl_policy_get_kind(pol) : NPL_FIRST_TOUCH;
    int kernel = kind == NPL_CYCLIC || kind == NPL_BIND_ALL || kind == NPL_FIRST_TOUCH;
    if (!dynamic && (!kernel || huge)) {
        fprintf(stderr, "numaplace run: %s is statically linked: it can get only the process-wide "
                        "kernel policies (cyclic, bind_all), not %s%s\n", prog,
                huge ? "--huge " : polstr, huge ? huge : "");
        npl_policy_free(pol);
        free(nlist);
        return EXIT_USAGE;
    }
    char preload[4096] = "", omp[4096] = "";
    int need_preload = dynamic && (*polstr || pin || huge || next_touch);
    if (need_preload &&
        find_beside("NUMAPLACE_PRELOAD", "libnumaplace_preload.so", preload, sizeof preload) < 0) {
        fprintf(stderr, "numaplace run: %s not found (next to the numaplace binary, or set "
                        "NUMAPLACE_PRELOAD)\n", preload);
        npl_policy_free(pol);
        free(nlist);
        return EXIT_FAILED;
    }
    if (next_touch && (!dynamic || find_libomp(omp, sizeof omp) < 0)) {
        fprintf(stderr, dynamic ? "numaplace run: --next-touch needs LLVM's libomp.so.5 (apt-get "
                                  "install libomp5-14, or NUMAPLACE_LIBOMP)\n"
                                : "numaplace run: --next-touch needs a dynamically linked "
                                  "program\n");
        npl_policy_free(pol);
        free(nlist);
        return dynamic ? EXIT_FAILED : EXIT_USAGE;
    }
    /* from here on the process changes: kernel policy, CPUs, environment */
    int rc = set_kernel_policy(pol, nodes, &kernel);
    npl_policy_free(pol);
    if (rc) {
        free(nlist);
        return rc;
    }
    int ccpus[1024];
    int nc = cfg_get(cfg, "machine", "cpus") ? npl_config_list(cfg, "machine", "cpus", ccpus, 1024) : 0;
    if (nc > 0) { /* [machine] cpus: the affinity narrowed to them (never widened) */
        cpu_set_t cur, want;
        CPU_ZERO(&want);
        sched_getaffinity(0, sizeof cur, &cur);
        for (int k = 0; k < nc && k < 1024; k++)
            if (ccpus[k] < CPU_SETSIZE && CPU_ISSET(ccpus[k], &cur))
                CPU_SET(ccpus[k], &want);
        if (!CPU_COUNT(&want) || sched_setaffinity(0, sizeof want, &want) < 0) {
            fprintf(stderr, "numaplace run: config [machine] cpus = %s: none of them is allowed "
                            "here\n", cfg_get(cfg, "machine", "cpus"));
            free(nlist);
            return EXIT_USAGE;
        }
    }
    if (nn && (rc = narrow_cpus(nlist, nn))) {
        free(nlist);
        return rc;
    }
    free(nlist);
    if (need_preload) {
        if (*polstr)
            setenv("NUMAPLACE_POLICY", polstr, 1);
        if (threshold)
            setenv("NUMAPLACE_THRESHOLD", threshold, 1);
        if (first)
            setenv("NUMAPLACE_FIRST", first, 1);
        if (huge)
            setenv("NUMAPLACE_HUGE", huge, 1);
        if (pin)
            setenv("NUMAPLACE_PIN", pin, 1);
        if (next_touch && !getenv("NUMAPLACE_NEXT_TOUCH"))
            setenv("NUMAPLACE_NEXT_TOUCH", "1", 1);
    }
    if (pin) {
        /* precedence: --pin wins over the runtimes' own variables (a warning each) */
        static const char *const vars[] = {"OMP_PLACES", "OMP_PROC_BIND", "GOMP_CPU_AFFINITY",
                                           "KMP_AFFINITY"};
        for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
            override_env(vars[k], pin);
        int cpus[4096];
        int n = npl_pin_order(NULL, pin, cpus, 4096);
        char *places = malloc((size_t)n * 12 + 64);
        size_t off = 0;
        if (dynamic) {
            /* libgomp threads: the preload's pthread trampoline. LLVM libomp resets its workers
             * to its own places: its explicit proclist in the same order (libgomp ignores it;
             * OMP_PLACES would make libgomp bind the initial thread before libomp starts when
             * libomp is preloaded over a gcc build) */
            off += (size_t)sprintf(places, "granularity=fine,explicit,proclist=[");
            for (int k = 0; k < n && k < 4096; k++)
                off += (size_t)sprintf(places + off, "%s%d", k ? "," : "", cpus[k]);
            sprintf(places + off, "]");
            setenv("KMP_AFFINITY", places, 1);
        } else { /* static program: OpenMP threads only */
            for (int k = 0; k < n && k < 4096; k++)
                off += (size_t)sprintf(places + off, "%s{%d}", k ? "," : "", cpus[k]);
            setenv("OMP_PLACES", places, 1);
            setenv("OMP_PROC_BIND", "close", 1);
        }
        free(places);
    }
    char pre[12800] = "";
    if (*preload) /* one interposer (it is also the OMPT tool), then libomp for --next-touch */
        snprintf(pre, sizeof pre, "%s%s%s", preload, *omp ? " " : "", omp);
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
