/* SPDX-License-Identifier: BSD-3-Clause */
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
 *                  replaces the program's own OMP_PLACES, OMP_PROC_BIND, GOMP_CPU_AFFINITY and
 *                  KMP_AFFINITY (one note names them); without --pin they are left alone, and
 *                  the config's [threads] pin is not applied over them. The CPUs the program
 *                  starts on are the ones run was started on (cli/omp_env.c: numaplace's own
 *                  OpenMP runtime does not read the program's variables), narrowed only by
 *                  --nodes and [machine] cpus.
 *   --nodes SET    memory and CPUs restricted to SET: the policy gets "@SET" (no policy: bind_all
 *                  over SET; a policy naming nodes outside SET is refused), the kernel policy
 *                  binds memory to SET, the CPU affinity is narrowed to SET's CPUs (never widened).
 *   --next-touch   the transparent next-touch mode, in libnumaplace_preload.so: the program keeps
 *                  its own OpenMP runtime (libgomp's region entry points, libomp's OMPT);
 *                  a dynamically linked program, with or without OpenMP.
 * Defaults come from the platform config file ([policy] default, threshold; [threads] pin;
 * [machine] nodes, cpus).
 * Exit status: the program's; 2 bad usage, unknown policy or nodes outside the allowed set (or a
 * policy a static program cannot get); 1 set-up failed (bad config file, preload library missing,
 * system call refused); 126 the program cannot be executed; 127 it does not exist. */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "omp_binding.h"
#include "sites.h"
#include "run_args.h"
#include "run_show.h"
#include "preload/env.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <hwloc.h>
#include <limits.h>
#include <libgen.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: numaplace run [OPTIONS] -- PROG [ARGS...]\n"
            "  -p, --policy STR a numaplace policy (cyclic, bind_all:1, skew_mapp, weighted:0=3,1=1, ...)\n"
            "                   cyclic/bind_all: process-wide kernel policy (static programs too);\n"
            "                   any policy: large allocations of dynamic programs (interposed malloc)\n"
            "  -c, --pin S      compact | scatter | CPU list | likwid-style domains (S0:0-3, M1:0-1,\n"
            "                   N:0-7, C0:0-1, E:N:8:1:2, joined by @): thread n (main = 0, then\n"
            "                   creation order) on the n-th CPU of S, counted inside the cpuset;\n"
            "                   without --pin threads are free\n"
            "  -n, --nodes SET  use only these nodes (memory and CPUs), e.g. 0-1; numactl's all,\n"
            "                   !LIST (all but LIST) and +LIST (positions among the allowed)\n"
            "  --huge thp|2M    large allocations on transparent or 2 MiB hugetlb pages\n"
            "  -t, --threshold B allocations of at least B bytes are placed (default 1M; K/M/G)\n"
            "  --first N        only the first N (>= 1) large allocations are placed\n"
            "  --next-touch     pages follow the threads that touch them first at new OpenMP\n"
            "                   parallel regions, on the program's own runtime (libgomp or libomp)\n"
            "  --profile FILE   each array gets the policy a profile advises for it (numaplace\n"
            "                   profile), matched by its allocation site; others get --policy\n"
            "  -v, --verbose    print what run does on stderr: thread -> CPU -> node, the policy,\n"
            "                   huge pages, and each large allocation as the program makes it\n"
            "  --json           the same as --verbose, as one JSON object on stderr\n"
            "  without --pin the program's own OpenMP binding (OMP_PLACES, OMP_PROC_BIND,\n"
            "  GOMP_CPU_AFFINITY, KMP_AFFINITY) is kept as is; --pin replaces it\n"
            "exit status: PROG's; 2 usage/unknown policy/nodes outside the allowed set;\n"
            "  1 set-up failed; 126 PROG cannot be executed; 127 PROG not found\n");
    return rc;
}

/* a file next to this executable, else $env */
static int find_beside(const char *env_name, const char *file, char *out, size_t size)
{
    return cli_find_file(env_name, &file, 1, out, size);
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

/* 1 when the ELF's dynamic string table names omp_init_allocator (the C or gfortran entry): the
 * program makes OpenMP allocators, whose partition trait only the interposer honours */
static int makes_omp_allocators(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
    Elf64_Ehdr eh;
    if (fd < 0)
        return 0;
    if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr)) {
        for (int i = 0; i < eh.e_shnum && i < 4096 && !found; i++) {
            Elf64_Shdr sh, str;
            if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (size_t)i * sizeof sh)) !=
                    (ssize_t)sizeof sh || sh.sh_type != SHT_DYNSYM ||
                pread(fd, &str, sizeof str, (off_t)(eh.e_shoff + (size_t)sh.sh_link * sizeof str)) !=
                    (ssize_t)sizeof str || str.sh_size > (16u << 20))
                continue;
            char *names = malloc(str.sh_size + 1);
            if (names && pread(fd, names, str.sh_size, (off_t)str.sh_offset) == (ssize_t)str.sh_size) {
                names[str.sh_size] = 0;
                found = memmem(names, str.sh_size, "omp_init_allocator", 18) != NULL;
            }
            free(names);
        }
    }
    close(fd);
    return found;
}

/* Everything run decides before exec: the command line merged with the config file. */
struct run_ctx {
    struct run_args a;
    const npl_config *cfg;
    const npl_topo *topo;
    const char *policy, *pin, *nodes, *threshold;
    char cfg_nodes[256], cfg_thr[64], cfg_pin[256], nodes_buf[1024];
    hwloc_bitmap_t nodeset; /* --nodes, NULL if none */
    char prog[4096];
    int dynamic;
    char polstr[512];
    npl_policy *pol;
    int kernel; /* the policy is (also) the process-wide kernel policy */
    char preload[4096];
    int need_preload;
    int *order, norder; /* --pin's CPU order */
    int profiling;      /* numaplace profile: the interposer is needed whatever the flags */
    const char *cfg_pin_skipped; /* the config's pin, not applied over the program's binding */
};

/* the platform config: defaults for what the command line leaves out */
static int take_defaults(struct run_ctx *c)
{
    c->policy = c->a.policy;
    c->pin = c->a.pin;
    c->nodes = c->a.nodes;
    c->threshold = c->a.threshold;
    if (!(c->cfg = npl_config_self())) {
        fprintf(stderr, "numaplace run: config file: %s\n", npl_last_error());
        return EXIT_FAILED;
    }
    if (!(c->topo = npl_topo_self()))
        return cli_fail("topology");
    if (!c->policy)
        c->policy = npl_config_get(c->cfg, "policy", "default");
    const char *thr = npl_config_get(c->cfg, "policy", "threshold");
    uint64_t v;
    if (!c->threshold && thr) {
        snprintf(c->cfg_thr, sizeof c->cfg_thr, "%s", thr);
        c->threshold = c->cfg_thr;
        if (npl_env_parse_threshold(c->threshold, &v) < 0) {
            fprintf(stderr, "numaplace run: config [policy] threshold = %s: expected bytes >= 1 "
                            "(%s)\n", c->threshold, npl_config_source(c->cfg));
            return EXIT_FAILED;
        }
    }
    const char *nodes = npl_config_get(c->cfg, "machine", "nodes");
    if (!c->nodes && nodes) {
        snprintf(c->cfg_nodes, sizeof c->cfg_nodes, "%s", nodes);
        c->nodes = c->cfg_nodes;
    }
    return 0;
}

/* --nodes SET as a bitmap: the library's list parser (npl_policy_parse of "bind_all:SET":
 * decimal ids, ranges, each id once, bounded) is the one check; hwloc reads only the list the
 * library formats back. 0, or -1 if SET is not a node list. */
static int parse_nodes(const char *set, hwloc_bitmap_t out)
{
    size_t len = strlen(set) + 16;
    char *spec = malloc(len), *canon = NULL;
    npl_policy *p = NULL;
    int rc = -1;
    if (spec && snprintf(spec, len, "bind_all:%s", set) > 0 && npl_policy_parse(&p, spec) == 0) {
        int need = npl_policy_format(p, NULL, 0);
        canon = need > 0 ? malloc((size_t)need + 1) : NULL;
        const char *list = canon && npl_policy_format(p, canon, (size_t)need + 1) == need
                               ? strchr(canon, ':') : NULL;
        rc = list && hwloc_bitmap_list_sscanf(out, list + 1) == 0 && !hwloc_bitmap_iszero(out)
                 ? 0 : -1;
    }
    npl_policy_free(p);
    free(canon);
    free(spec);
    return rc;
}

/* numactl's node syntax: "all" (the allowed nodes with memory), "!LIST" (those but LIST),
 * "+LIST" (positions among them, as numactl's cpuset-relative form): rewritten to a plain list
 * in buf. 0 (c->nodes is the plain list), or EXIT_USAGE with a message. */
static int numactl_nodes(struct run_ctx *c, char *buf, size_t size)
{
    const char *set = c->nodes;
    if (strcmp(set, "all") && set[0] != '!' && set[0] != '+')
        return 0;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), named = hwloc_bitmap_alloc(),
                   out = hwloc_bitmap_alloc();
    int rc = allowed && named && out && npl_topo_nodeset(c->topo, allowed) == 0 ? 0 : EXIT_FAILED;
    if (!rc && strcmp(set, "all") && parse_nodes(set + 1, named) < 0) {
        fprintf(stderr, "numaplace run: --nodes %s: expected all, !LIST or +LIST with a node "
                        "list like 0-1,3 after the sign\n", set);
        rc = EXIT_USAGE;
    }
    if (!rc && !strcmp(set, "all")) {
        hwloc_bitmap_copy(out, allowed);
    } else if (!rc && set[0] == '!') {
        hwloc_bitmap_andnot(out, allowed, named);
    } else if (!rc) { /* +LIST: the k-th allowed node for each k */
        unsigned k;
        hwloc_bitmap_foreach_begin(k, named) {
            int id = hwloc_bitmap_first(allowed);
            for (unsigned i = 0; i < k && id >= 0; i++)
                id = hwloc_bitmap_next(allowed, id);
            if (id < 0) {
                fprintf(stderr, "numaplace run: --nodes %s: position %u is past this process's "
                                "%d allowed nodes with memory\n", set, k,
                        hwloc_bitmap_weight(allowed));
                rc = EXIT_USAGE;
                break;
            }
            hwloc_bitmap_set(out, (unsigned)id);
        }
        hwloc_bitmap_foreach_end();
    }
    if (!rc && hwloc_bitmap_iszero(out)) {
        fprintf(stderr, "numaplace run: --nodes %s: no allowed node with memory left\n", set);
        rc = EXIT_USAGE;
    }
    if (!rc && hwloc_bitmap_list_snprintf(buf, size, out) >= (int)size)
        rc = EXIT_FAILED;
    if (!rc)
        c->nodes = buf;
    hwloc_bitmap_free(allowed);
    hwloc_bitmap_free(named);
    hwloc_bitmap_free(out);
    return rc;
}

/* --nodes: a list like 0-1,3 (or numactl's all, !LIST, +LIST); every node exists, is allowed
 * and has memory */
static int check_nodes(struct run_ctx *c)
{
    int rc = numactl_nodes(c, c->nodes_buf, sizeof c->nodes_buf);
    if (rc)
        return rc;
    const char *set = c->nodes;
    if (!(c->nodeset = hwloc_bitmap_alloc()))
        return EXIT_FAILED;
    if (parse_nodes(set, c->nodeset) < 0) {
        fprintf(stderr, "numaplace run: --nodes %s: expected a node list like 0-1,3 (ids from 0 "
                        "to %d on this machine, each once)\n", set,
                npl_topo_max_node_id(c->topo));
        return EXIT_USAGE;
    }
    unsigned id;
    hwloc_bitmap_foreach_begin(id, c->nodeset) {
        int idx = npl_topo_node_index(c->topo, (int)id);
        struct npl_node_info info;
        if (idx < 0 || npl_topo_node_info(c->topo, (int)id, &info) < 0) {
            fprintf(stderr, "numaplace run: --nodes %s: node %u does not exist on this machine "
                            "(largest id %d)\n", set, id, npl_topo_max_node_id(c->topo));
            return EXIT_USAGE;
        }
        if (!info.allowed || !info.memory_bytes) {
            fprintf(stderr, "numaplace run: --nodes %s: node %u is outside this process's allowed "
                            "nodes (cpuset) or has no memory\n", set, id);
            return EXIT_USAGE;
        }
    }
    hwloc_bitmap_foreach_end();
    return 0;
}

/* The nodes the policy's map uses (validates it too): 0, or EXIT_USAGE with a message. With
 * --nodes, every one of them must be in the set. */
static int check_policy(struct run_ctx *c)
{
    size_t pages = (size_t)npl_topo_node_count(c->topo, 1) * 64 + 64;
    int *map = calloc(pages, sizeof *map), rc = 0;
    if (!map)
        return EXIT_FAILED;
    if (npl_policy_map(c->pol, c->topo, NULL, pages * 4096, 4096, 0, pages, map) < 0) {
        fprintf(stderr, "numaplace run: --policy %s: %s\n", c->polstr, npl_last_error());
        rc = EXIT_USAGE;
    }
    for (size_t i = 0; !rc && c->nodeset && i < pages; i++)
        if (map[i] >= 0 && !hwloc_bitmap_isset(c->nodeset, (unsigned)map[i])) {
            fprintf(stderr, "numaplace run: --policy %s puts memory on node %d, outside --nodes: "
                            "drop one of them\n", c->polstr, map[i]);
            rc = EXIT_USAGE;
        } /* map[i] < 0: first touch, no node of its own */
    free(map);
    return rc;
}

/* the policy string (restricted to --nodes), parsed and checked */
static int make_policy(struct run_ctx *c)
{
    const char *pol = c->policy, *nodes = c->nodes;
    if (nodes && !pol)
        snprintf(c->polstr, sizeof c->polstr, "bind_all:%s", nodes);
    else if (nodes && !strchr(pol, '@') && strncmp(pol, "bind_all:", 9) &&
             strncmp(pol, "weighted:", 9) && strcmp(pol, "first_touch"))
        snprintf(c->polstr, sizeof c->polstr, "%s@%s", pol, nodes);
    else if (pol) /* with --nodes: its own nodes, checked below */
        snprintf(c->polstr, sizeof c->polstr, "%s", pol);
    if (*c->polstr && npl_policy_parse(&c->pol, c->polstr) < 0) {
        fprintf(stderr, "numaplace run: --policy %s: %s\n", c->polstr, npl_last_error());
        return EXIT_USAGE;
    }
    return c->pol ? check_policy(c) : 0;
}

/* pinning: the command line, else the config's rule for this policy unless the program binds
 * its OpenMP threads itself (a variable the user set wins over a site default); the CPU order */
static int make_pin_order(struct run_ctx *c)
{
    struct omp_binding own;
    omp_binding_from_env(&own);
    if (!c->pin && npl_config_get(c->cfg, "threads", "pin") &&
        npl_config_pin_for(c->cfg, c->pol, c->cfg_pin, sizeof c->cfg_pin) == 1) {
        if (omp_binding_describe(&own, NULL, 0))
            c->cfg_pin_skipped = c->cfg_pin;
        else
            c->pin = c->cfg_pin;
    }
    if (!c->pin)
        return 0;
    int n = npl_pin_order(NULL, c->pin, NULL, 0);
    if (n > 0 && (c->order = malloc((size_t)n * sizeof *c->order)))
        c->norder = npl_pin_order(NULL, c->pin, c->order, n);
    if (n <= 0 || c->norder != n) {
        fprintf(stderr, "numaplace run: --pin %s: %s\n", c->pin,
                n == 0 ? "no CPU" : npl_last_error());
        return n < 0 || n == 0 ? EXIT_USAGE : EXIT_FAILED;
    }
    return 0;
}

/* the program, what a static one cannot get, and the helper libraries it needs */
static int check_program(struct run_ctx *c)
{
    const char *arg0 = c->a.prog_argv[0];
    int found = resolve_prog(arg0, c->prog, sizeof c->prog);
    if (found) {
        fprintf(stderr, "numaplace run: %s: %s\n", arg0,
                found == 127 ? "command not found" : "cannot execute (permission or not a file)");
        return found;
    }
    c->dynamic = is_dynamic(c->prog);
    int kernel = !c->pol || npl_policy_process_wide(c->pol) == 1; /* all a static program gets */
    const char *huge = c->a.huge;
    if (!c->dynamic && (c->profiling || c->a.profile)) {
        fprintf(stderr, "numaplace %s: %s is statically linked: the interposer that %s cannot "
                        "load into it\n", c->profiling ? "profile" : "run", c->prog,
                c->profiling ? "samples its accesses" : "applies a profile");
        return EXIT_USAGE;
    }
    if (!c->dynamic && (!kernel || huge)) {
        fprintf(stderr, "numaplace run: %s is statically linked: it can get only the process-wide "
                        "kernel policies (cyclic, bind_all), not %s%s\n", c->prog,
                huge ? "--huge " : c->polstr, huge ? huge : "");
        return EXIT_USAGE;
    }
    return 0;
}

static int find_helpers(struct run_ctx *c)
{
    int nt = c->a.next_touch;
    /* a static program ignores LD_PRELOAD, but its dynamically linked children (a static shell's
     * commands) get the interposer: when the library is missing there, nothing is lost */
    /* OpenMP allocators: their partition trait is honoured by the interposer alone */
    c->need_preload = *c->polstr || c->pin || c->a.huge || nt || c->profiling || c->a.profile ||
                      (c->dynamic && makes_omp_allocators(c->prog));
    int found = c->need_preload && find_beside(NPL_ENV_PRELOAD, "libnumaplace_preload.so",
                                               c->preload, sizeof c->preload) == 0;
    if (c->need_preload && !found && c->dynamic) {
        fprintf(stderr, "numaplace run: %s not found (next to the numaplace binary, or set "
                        NPL_ENV_PRELOAD ")\n", c->preload);
        return EXIT_FAILED;
    }
    if (!found) {
        c->preload[0] = 0;
        c->need_preload = 0;
    }
    if (nt && !c->dynamic) {
        fprintf(stderr, "numaplace run: --next-touch needs a dynamically linked program\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* the process-wide kernel policy: the policy itself when it has a process-wide kernel form
 * (npl_policy_process_wide; first touch, the kernel's default, sets nothing), else bind_all
 * over --nodes, else none. */
static int set_kernel_policy(struct run_ctx *c)
{
    npl_policy *kp = NULL;
    const npl_policy *use = NULL;
    if (c->pol && npl_policy_get_kind(c->pol) != NPL_FIRST_TOUCH &&
        npl_policy_process_wide(c->pol) == 1) {
        use = c->pol;
        c->kernel = 1;
    } else if (c->nodes) {
        char s[300];
        snprintf(s, sizeof s, "bind_all:%s", c->nodes);
        if (npl_policy_parse(&kp, s) < 0) {
            fprintf(stderr, "numaplace run: --nodes %s: %s\n", c->nodes, npl_last_error());
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

/* this process's CPU affinity as a bitmap (any number of CPUs) */
static int get_affinity(hwloc_bitmap_t out)
{
    for (int n = 1024; n <= 1 << 22; n *= 2) {
        cpu_set_t *s = CPU_ALLOC(n);
        size_t sz = CPU_ALLOC_SIZE(n);
        if (!s)
            return -1;
        int rc = sched_getaffinity(0, sz, s), e = errno;
        hwloc_bitmap_zero(out);
        for (int i = 0; rc == 0 && i < n; i++)
            if (CPU_ISSET_S(i, sz, s))
                hwloc_bitmap_set(out, (unsigned)i);
        CPU_FREE(s);
        if (rc == 0 || e != EINVAL)
            return rc;
    }
    return -1;
}

static int set_affinity(hwloc_const_bitmap_t set)
{
    int last = hwloc_bitmap_last(set);
    cpu_set_t *s = last >= 0 ? CPU_ALLOC(last + 1) : NULL;
    if (!s)
        return -1;
    size_t sz = CPU_ALLOC_SIZE(last + 1);
    CPU_ZERO_S(sz, s);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set) CPU_SET_S(i, sz, s);
    hwloc_bitmap_foreach_end();
    int rc = sched_setaffinity(0, sz, s);
    CPU_FREE(s);
    return rc;
}

/* [machine] cpus and --nodes narrow the CPU affinity (never widen it) */
static int narrow_cpus(struct run_ctx *c)
{
    const char *ccpus = npl_config_get(c->cfg, "machine", "cpus");
    hwloc_bitmap_t cur = hwloc_bitmap_alloc(), want = hwloc_bitmap_alloc();
    int rc = !cur || !want || get_affinity(cur) < 0 ? EXIT_FAILED : 0;
    if (!rc && ccpus) {
        if (hwloc_bitmap_list_sscanf(want, ccpus) < 0 || hwloc_bitmap_and(want, want, cur) < 0 ||
            hwloc_bitmap_iszero(want) || set_affinity(want) < 0) {
            fprintf(stderr, "numaplace run: config [machine] cpus = %s: none of them is allowed "
                            "here\n", ccpus);
            rc = EXIT_USAGE;
        }
        hwloc_bitmap_copy(cur, want);
    }
    hwloc_bitmap_t node = hwloc_bitmap_alloc();
    hwloc_bitmap_zero(want);
    unsigned id;
    if (!rc && c->nodeset && node) {
        hwloc_bitmap_foreach_begin(id, c->nodeset)
            if (npl_topo_cpuset(c->topo, (int)id, node) == 0)
                hwloc_bitmap_or(want, want, node);
        hwloc_bitmap_foreach_end();
        hwloc_bitmap_and(want, want, cur);
        if (!hwloc_bitmap_iszero(want) && set_affinity(want) < 0) { /* CPU-less nodes: as is */
            fprintf(stderr, "numaplace run: cannot restrict CPUs to the nodes: %s\n",
                    strerror(errno));
            rc = EXIT_FAILED;
        }
    }
    hwloc_bitmap_free(node);
    hwloc_bitmap_free(cur);
    hwloc_bitmap_free(want);
    return rc;
}

/* --pin: libgomp threads through the preload's pthread trampoline; LLVM libomp resets its
 * workers to its own places: its explicit proclist in the same order (libgomp ignores it;
 * OMP_PLACES would make libgomp bind the initial thread before libomp starts when libomp is
 * preloaded over a gcc build). Static programs: OpenMP threads only, through OMP_PLACES.
 * --pin is explicit, so it replaces the program's own binding variables, with one note. */
static int export_pin_env(const struct run_ctx *c)
{
    struct omp_binding own;
    char was[1024];
    omp_binding_from_env(&own);
    if (omp_binding_describe(&own, was, sizeof was))
        fprintf(stderr, "numaplace run: note: --pin %s replaces the program's own OpenMP binding "
                        "(%s)\n", c->pin, was);
    static const char *const vars[] = {"OMP_PLACES", "OMP_PROC_BIND", "GOMP_CPU_AFFINITY",
                                       "KMP_AFFINITY"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        unsetenv(vars[k]);
    char *places = malloc((size_t)c->norder * 14 + 64);
    if (!places)
        return EXIT_FAILED;
    size_t off = 0;
    if (c->dynamic) {
        off += (size_t)sprintf(places, "granularity=fine,explicit,proclist=[");
        for (int k = 0; k < c->norder; k++)
            off += (size_t)sprintf(places + off, "%s%d", k ? "," : "", c->order[k]);
        sprintf(places + off, "]");
        setenv("KMP_AFFINITY", places, 1);
    } else {
        for (int k = 0; k < c->norder; k++)
            off += (size_t)sprintf(places + off, "%s{%d}", k ? "," : "", c->order[k]);
        setenv("OMP_PLACES", places, 1);
        setenv("OMP_PROC_BIND", "close", 1);
    }
    free(places);
    return 0;
}

/* NUMAPLACE_START_CPUS: the program's file and the CPUs it starts on (preload/env.h) */
static void export_start_cpus(const struct run_ctx *c)
{
    struct stat st;
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    char *list = NULL;
    if (now && stat(c->prog, &st) == 0 && get_affinity(now) == 0 &&
        hwloc_bitmap_list_asprintf(&list, now) > 0) {
        size_t l = strlen(list) + 64;
        char *v = malloc(l);
        if (v) {
            snprintf(v, l, "%llu:%llu:%s", (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, list);
            setenv(NPL_ENV_START_CPUS, v, 1);
        }
        free(v);
    }
    free(list);
    hwloc_bitmap_free(now);
}

/* the environment the preload and the OpenMP runtimes read */
static int export_env(const struct run_ctx *c)
{
    if (c->need_preload) {
        export_start_cpus(c);
        if (*c->polstr)
            setenv(NPL_ENV_POLICY, c->polstr, 1);
        if (c->threshold)
            setenv(NPL_ENV_THRESHOLD, c->threshold, 1);
        if (c->a.first)
            setenv(NPL_ENV_FIRST, c->a.first, 1);
        if (c->a.huge)
            setenv(NPL_ENV_HUGE, c->a.huge, 1);
        if (c->pin)
            setenv(NPL_ENV_PIN, c->pin, 1);
        if (c->a.next_touch && !getenv(NPL_ENV_NEXT_TOUCH))
            setenv(NPL_ENV_NEXT_TOUCH, "1", 1);
        if (c->a.verbose || c->a.json)
            setenv(NPL_ENV_VERBOSE, c->a.json ? "json" : "1", 1);
        if (c->a.profile) {
            char abs[PATH_MAX];
            const char *rebuilt = run_profile_apply_path(); /* run_profile.c */
            setenv(NPL_ENV_PROFILE_APPLY,
                   rebuilt ? rebuilt : realpath(c->a.profile, abs) ? abs : c->a.profile, 1);
        }
    }
    if (c->pin && export_pin_env(c))
        return EXIT_FAILED;
    char pre[12800] = "";
    if (*c->preload) /* one interposer; the program's own OpenMP runtime is left as it is */
        snprintf(pre, sizeof pre, "%s", c->preload);
    if (*pre) {
        const char *old = getenv("LD_PRELOAD");
        size_t l = strlen(pre);
        if (old && *old)
            snprintf(pre + l, sizeof pre - l, " %s", old);
        setenv("LD_PRELOAD", pre, 1);
    }
    return 0;
}

static void run_ctx_free(struct run_ctx *c)
{
    npl_policy_free(c->pol);
    if (c->nodeset)
        hwloc_bitmap_free(c->nodeset);
    free(c->order);
}

/* Everything run does before exec (also `numaplace profile`'s set-up: profiling = 1 loads the
 * interposer whatever the flags). 0 with the program in prog and its argv in *prog_argv, or an
 * exit status after a message. */
int run_setup(int argc, char **argv, int profiling, char *prog, size_t size, char ***prog_argv,
              struct run_args *args)
{
    struct run_ctx c = {0};
    int rc = run_parse_args(argc, argv, &c.a, stderr);
    c.profiling = profiling;
    if (c.a.help) {
        usage(stdout, 0);
        return RUN_HELP;
    }
    if (rc)
        return rc; /* its one line said why; the usage text is --help's */
    if (!(rc = take_defaults(&c)) && !(rc = c.nodes ? check_nodes(&c) : 0) &&
        !(rc = make_policy(&c)) && !(rc = make_pin_order(&c)) && !(rc = check_program(&c)) &&
        !(rc = c.a.profile ? run_check_profile(c.a.profile, c.prog, c.pin) : 0) &&
        !(rc = find_helpers(&c)) && !(rc = set_kernel_policy(&c)) && !(rc = narrow_cpus(&c)))
        rc = export_env(&c);
    hwloc_bitmap_t allowed = rc ? NULL : hwloc_bitmap_alloc(); /* what the program starts with */
    if (allowed && get_affinity(allowed) < 0) {
        hwloc_bitmap_free(allowed);
        allowed = NULL;
    }
    if (!rc)
        run_show(&(struct run_shown){.prog = c.prog, .dynamic = c.dynamic, .policy = c.polstr,
                                     .kernel = c.kernel, .threshold = c.threshold, .first = c.a.first,
                                     .pin = c.pin, .order = c.order, .norder = c.norder,
                                     .huge = c.a.huge, .next_touch = c.a.next_touch,
                                     .preloaded = c.need_preload && c.dynamic, .topo = c.topo,
                                     .allowed = allowed, .cfg_pin_skipped = c.cfg_pin_skipped,
                                     .verbose = c.a.verbose, .json = c.a.json});
    if (allowed)
        hwloc_bitmap_free(allowed);
    run_ctx_free(&c);
    if (rc)
        return rc;
    snprintf(prog, size, "%s", c.prog);
    *prog_argv = argv + c.a.prog;
    if (args)
        *args = c.a;
    return 0;
}

/* every value is checked before anything happens (the program never starts on a bad one);
 * then the process changes: kernel policy, CPUs, environment; then exec */
int cmd_run(int argc, char **argv)
{
    char prog[4096];
    char **pargv;
    int rc = run_setup(argc, argv, 0, prog, sizeof prog, &pargv, NULL);
    if (rc)
        return rc == RUN_HELP ? 0 : cli_own_status(rc);
    execv(prog, pargv);
    int e = errno;
    fprintf(stderr, "numaplace run: %s: %s\n", prog, strerror(e));
    return e == ENOENT ? 127 : 126;
}
