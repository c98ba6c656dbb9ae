/* SPDX-License-Identifier: BSD-3-Clause */
/* profile.c - numaplace profile: run an unmodified program under the interposer with the access
 * sampler on, then write its profile (format v1, docs/AUTO.md) with each array's advice, and print
 * the advice table (docs/man/numaplace-profile.1).
 *
 * The program runs as a child: `run`'s set-up (run.c: config, --pin, --nodes, --threshold, the
 * environment, LD_PRELOAD) plus NUMAPLACE_PROFILE_SHM, a nameless file of struct npl_raw (a
 * memfd this process holds, /proc/PID/fd/FD to the program) that the interposer maps and fills
 * from its allocation hooks and its fault handler: no kill leaves a file behind. This process reads it when the child has ended, however it ended (exit, _exit, a
 * signal): nothing has to run at the child's exit. Its exit status is the child's (a child killed
 * by a signal: this process dies of the same signal after writing the profile); its stdout is
 * untouched; our lines go to stderr. Ctrl-C reaches the child (same process group); this process
 * ignores SIGINT and SIGQUIT while it waits, as system() does, and passes SIGTERM and SIGHUP on. */
#define _GNU_SOURCE
#include "cli.h"
#include "advise.h"
#include "common.h"
#include "run_args.h"
#include "sites.h"
#include "preload/env.h"

#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: numaplace profile [--out FILE] [--rate R] [--backend B] [RUN OPTIONS] -- PROG "
            "[ARGS...]\n"
            "  -o, --out FILE   the profile (default PROG.profile.json, PROG's base name, here)\n"
            "  --rate R         samples per second (default %.0f): sampled pages (fault), memory\n"
            "                   accesses in all (perf); the overhead grows with it\n"
            "  --backend B      auto (default: perf where the machine has memory-address samples,\n"
            "                   else fault, saying why), fault (protection faults), perf (those\n"
            "                   samples, or exit status 2)\n"
            "  -c/--pin S, -n/--nodes SET, -t/--threshold B, --huge thp|2M, -v/--verbose: as numaplace run\n"
            "                   (arrays of --threshold bytes or more are profiled; default 1M)\n"
            "  PROG's output and exit status are its own; the advice table goes to stderr, and so\n"
            "  does a progress line every 5 s on a terminal or with --verbose\n"
            "  fault backend: OMP_WAIT_POLICY=passive unless OMP_WAIT_POLICY, GOMP_SPINCOUNT or\n"
            "  KMP_BLOCKTIME is set (spinning threads would leave the sampler no CPU)\n"
            "exit status: PROG's; 2 usage; 1 the profile could not be written\n",
            NPL_SAMPLER_DEFAULT_RATE);
    return rc;
}

/* ---- the raw profile shared with the child ---- */
/* A file with no name, so that no kill of this process or of the program leaves one behind: a
 * memfd, else an O_TMPFILE or an unlinked temporary file in /dev/shm ($TMPDIR, /tmp). This
 * process holds it open until the program has ended; the program (and any program it execs)
 * opens it as /proc/<this pid>/fd/<fd>, the name set in path. */
static int raw_file(void)
{
    int fd = memfd_create("numaplace-profile", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
    const char *tmp = getenv("TMPDIR");
    const char *dirs[] = {"/dev/shm", tmp && *tmp ? tmp : "/tmp", "/tmp"};
    for (size_t i = 0; i < 3 && fd < 0; i++) {
        fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/numaplace-profile-XXXXXX", dirs[i]);
            if ((fd = mkostemp(path, O_CLOEXEC)) >= 0)
                unlink(path);
        }
    }
    return fd;
}

#define MAX_SPARES 15 /* other programs profiled (--out with %p), each its own profile */

static struct npl_raw *raw_create(char *path, size_t size, size_t threshold)
{
    int fd = raw_file();
    if (fd >= 0 && ftruncate(fd, (off_t)sizeof(struct npl_raw)) < 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return NULL;
    snprintf(path, size, "/proc/%d/fd/%d", (int)getpid(), fd);
    struct npl_raw *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    r->version = NPL_RAW_VERSION;
    r->size = sizeof *r;
    r->threshold = threshold;
    r->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    __atomic_store_n(&r->magic, NPL_RAW_MAGIC, __ATOMIC_RELEASE);
    return r;
}

/* ---- what the profile records about pinning ---- */
static void binding_of(const char *pin, int *kind, char *detail, size_t size)
{
    static const char *const vars[] = {"OMP_PLACES", "OMP_PROC_BIND", "GOMP_CPU_AFFINITY",
                                       "KMP_AFFINITY"};
    detail[0] = 0;
    if (pin) {
        *kind = NPL_BIND_PIN;
        snprintf(detail, size, "%s", pin);
        return;
    }
    *kind = NPL_BIND_NONE;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (!v)
            continue;
        size_t used = strlen(detail);
        snprintf(detail + used, size - used, "%s%s=%s", used ? " " : "", vars[i], v);
        *kind = NPL_BIND_OMP;
    }
}

static void human(double bytes, char *buf, size_t size)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;
    while (bytes >= 1024 && k < 4)
        bytes /= 1024, k++;
    snprintf(buf, size, k ? "%.1f %s" : "%.0f %s", bytes, u[k]);
}

static void progress(const struct npl_raw *r, double t)
{
    uint64_t bytes = 0;
    uint32_t n = r->narrays, live = 0;
    for (uint32_t i = 0; i < n && i < NPL_RAW_ARRAYS; i++)
        if (r->arrays[i].state == NPL_RAW_LIVE) {
            bytes += r->arrays[i].bytes;
            live++;
        }
    char b[32];
    human((double)bytes, b, sizeof b);
    fprintf(stderr, "numaplace profile: %.0f s: %u arrays live (%s), %llu samples\n", t, live, b,
            (unsigned long long)r->samples);
}

/* ---- the end: the raw profile becomes the profile, classified, written, shown ---- */
/* 1 when the program's OpenMP threads slept while idle: OMP_WAIT_POLICY=passive (set by
 * job_setup or by the user) and no spin count of libgomp's or libomp's beside it. A thread's
 * CPU time in a parallel region is then work, as in a pthreads program's time window. */
static int omp_idle_sleeps(void)
{
    const char *w = getenv("OMP_WAIT_POLICY");
    return w && !strcasecmp(w, "passive") && !getenv("GOMP_SPINCOUNT") && !getenv("KMP_BLOCKTIME");
}

static int classify_all(struct npl_profile *p, char *err, size_t errsz)
{
    struct npl_prof_advice **adv = calloc(p->narrays ? p->narrays : 1, sizeof *adv);
    if (!adv)
        return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
    for (uint32_t i = 0; i < p->narrays; i++)
        adv[i] = &p->arrays[i].advice;
    int rc = npl__advise_profile(p, adv, NULL, err, errsz);
    for (uint32_t i = 0; rc == 0 && i < p->narrays; i++)
        p->arrays[i].has_advice = 1;
    free(adv);
    return rc;
}

/* The machine's migration rate, pages a second: its platform config's [factors]
 * migrate_pages_s (numaplace measure writes it); 0: not measured (the advice says its default). */
static double machine_migrate_rate(void)
{
    const npl_config *c = npl_config_self();
    const char *v = c ? npl_config_get(c, "factors", "migrate_pages_s") : NULL;
    double d = v ? strtod(v, NULL) : 0;
    return d >= 1 && d <= 1e12 ? d : 0;
}

static int profile_finish(const struct npl_raw *r, const char *out, const char *prog,
                          double seconds, int bind_kind, const char *bind_detail, int verbose)
{
    const npl_topo *t = npl_topo_self();
    int nodes[1024], nn = 0;
    for (int i = 0; t && i < npl_topo_node_count(t, 0) && nn < 1024; i++) {
        int id = npl_topo_node_id(t, i);
        struct npl_node_info info;
        if (npl_topo_node_info(t, id, &info) == 0 && info.allowed && info.memory_bytes)
            nodes[nn++] = id;
    }
    if (!nn)
        nodes[nn++] = 0;
    char bid[160] = "";
    npl__elf_build_id(prog, bid, sizeof bid);
    char real[PATH_MAX];
    /* each CPU's node: a thread no sample saw is placed by the CPU it ran on */
    long conf = sysconf(_SC_NPROCESSORS_CONF); /* CPU ids below it (some offline, or not ours) */
    int ncpu = t && conf > 0 && conf < 65536 ? (int)conf : 0, *cpu_node = NULL;
    if (ncpu > 0 && (cpu_node = malloc((size_t)ncpu * sizeof *cpu_node)) != NULL)
        for (int c = 0; c < ncpu; c++)
            cpu_node[c] = npl_topo_cpu_node(t, c);
    struct npl_collect_info in = {realpath(prog, real) ? real : prog, bid, nodes, nn,
                                  (uint64_t)sysconf(_SC_PAGESIZE), bind_kind, bind_detail,
                                  r->rate, seconds, cpu_node, cpu_node ? ncpu : 0,
                                  omp_idle_sleeps()};
    struct npl_profile *p = NULL;
    char err[1024];
    int collected = npl__profile_from_raw(r, &in, &p, err, sizeof err);
    free(cpu_node);
    if (collected == 0)
        p->migrate_rate = machine_migrate_rate();
    if (collected < 0 || (sites_name(p), classify_all(p, err, sizeof err) < 0)) {
        fprintf(stderr, "numaplace profile: %s\n", err);
        npl__profile_free(p);
        return EXIT_FAILED;
    }
    size_t len = 0;
    char *text = npl__profile_format(p, &len);
    if (!text || cli_write_out("profile", out, text, len)) {
        if (!text)
            fprintf(stderr, "numaplace profile: out of memory\n");
        free(text);
        npl__profile_free(p);
        return EXIT_FAILED;
    }
    free(text);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < p->narrays; i++)
        bytes += p->arrays[i].bytes;
    char b[32];
    human((double)bytes, b, sizeof b);
    uint64_t seen = r->samples + r->idle;
    char idle[64] = "";
    if (r->backend != NPL_BACKEND_PERF)
        snprintf(idle, sizeof idle, " (%.0f%% of the sampled pages idle)",
                 seen ? 100.0 * (double)r->idle / (double)seen : 0.0);
    fprintf(stderr, "numaplace profile: wrote %s: %u array%s (%s), %llu sampled accesses%s, %llu "
                    "first touches, %d thread%s, %u phase%s, %.1f s\n", out, p->narrays,
            p->narrays == 1 ? "" : "s", b, (unsigned long long)r->samples, idle,
            (unsigned long long)r->ft_faults, p->threads, p->threads == 1 ? "" : "s", p->nphases,
            p->nphases == 1 ? "" : "s", seconds);
    if (r->rounds && r->backend != NPL_BACKEND_PERF)
        fprintf(stderr, "numaplace profile: the sampler ran %llu rounds, one every %.0f ms: %.1f "
                        "ms arming %.0f pages in %.0f runs, %.1f ms giving pages back, %.1f ms "
                        "in all\n", (unsigned long long)r->rounds,
                1e3 * seconds / (double)r->rounds, 1e-6 * (double)r->protect_ns / (double)r->rounds,
                (double)r->arm_pages / (double)r->rounds, (double)r->arm_calls / (double)r->rounds,
                1e-6 * (double)r->giveback_ns / (double)r->rounds,
                1e-6 * (double)r->round_ns / (double)r->rounds);
    if (!r->owner_pid)
        fprintf(stderr, "numaplace profile: no array of %llu bytes or more was seen (the "
                        "threshold: --threshold)\n", (unsigned long long)r->threshold);
    if (r->others)
        fprintf(stderr, "numaplace profile: %llu other process%s (forked children, programs they "
                        "ran) not profiled: the profile is of the first one that allocated a "
                        "large array\n", (unsigned long long)r->others, r->others == 1 ? "" : "es");
    if (r->rows_dropped || r->arrays_dropped || r->ft_dropped)
        fprintf(stderr, "numaplace profile: tables full: %llu samples, %llu arrays, %llu "
                        "first-touch maps not recorded\n", (unsigned long long)r->rows_dropped,
                (unsigned long long)r->arrays_dropped, (unsigned long long)r->ft_dropped);
    if (r->widened || r->protect_failed)
        fprintf(stderr, "numaplace profile: vm.max_map_count reached: %llu arrays' first touch "
                        "given up, %llu pages not sampled\n", (unsigned long long)r->widened,
                (unsigned long long)r->protect_failed);
    if (p->narrays)
        advise_table(stderr, out, p, NULL, NULL, verbose);
    uint64_t ml = p->measured[NPL_MEASURED_LOCAL], mr = p->measured[NPL_MEASURED_REMOTE];
    if (ml + mr)
        fprintf(stderr, "numaplace profile: sampled accesses on the accessing thread's node: "
                        "%.1f%% (%llu of %llu samples; %llu unknown)\n",
                100.0 * (double)ml / (double)(ml + mr), (unsigned long long)ml,
                (unsigned long long)(ml + mr),
                (unsigned long long)p->measured[NPL_MEASURED_UNKNOWN]);
    else
        fprintf(stderr, "numaplace profile: sampled accesses on the accessing thread's node: "
                        "n/a (0 of 0 samples; %llu unknown)\n",
                (unsigned long long)p->measured[NPL_MEASURED_UNKNOWN]);
    npl__profile_free(p);
    return 0;
}

/* ---- the child ---- */
static volatile sig_atomic_t child_pid;
static void pass_on(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* wait for the child, with a progress line every 5 s when show, reading the perf samples every
 * 10 ms when ps; its wait status */
static int wait_child(pid_t pid, struct npl_raw *r, const struct npl__sampling_backend *be,
                      struct npl__sampling *ps, int show, double t0)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    double next = t0 + 5;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (ps)
                be->drain(ps, r); /* the rings outlive the child */
            return st;
        }
        if (w < 0 && errno != EINTR)
            return -1;
        struct timespec ts = {0, (ps ? 10 : 200) * 1000 * 1000};
        sigtimedwait(&chld, NULL, &ts);
        if (ps)
            be->drain(ps, r);
        if (show && npl__now() >= next) {
            progress(r, npl__now() - t0);
            next += 5;
        }
    }
}

/* after the profile is written: die as the child did, or exit with its status */
static int mirror(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        fflush(NULL);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        return 128 + sig;
    }
    return EXIT_FAILED;
}

enum { BACKEND_AUTO = -1 }; /* else enum npl_prof_backend */

/* split profile's own options (--out, --rate, --backend, --help) from run's; argv is rewritten
 * in place */
static int own_options(int *argc, char **argv, const char **out, uint64_t *rate, int *backend)
{
    int w = 1, i = 1;
    for (; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) 
            break;
        if (a[0] != '-')
            break; /* the program: options end here, as for run */
        const char *val = NULL;
        int is_out = (!strncmp(a, "--out", 5) && (a[5] == 0 || a[5] == '=')) || !strcmp(a, "-o");
        int is_rate = !strncmp(a, "--rate", 6) && (a[6] == 0 || a[6] == '=');
        int is_backend = !strncmp(a, "--backend", 9) && (a[9] == 0 || a[9] == '=');
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(stdout, 0) - 1; /* -1: done */
        if (!is_out && !is_rate && !is_backend) {
            argv[w++] = argv[i];
            /* run's options with a value: keep the value with it */
            static const char *const valued[] = {"--policy", "--pin", "--nodes", "--huge",
                                                 "--threshold", "--first", "--profile",
                                                 "-p", "-c", "-n", "-t"};
            for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
                if (!strcmp(a, valued[k]) && i + 1 < *argc)
                    argv[w++] = argv[++i];
            continue;
        }
        const char *eq = strchr(a, '=');
        if (eq)
            val = eq + 1;
        else if (i + 1 < *argc)
            val = argv[++i];
        if (!val || !*val) {
            fprintf(stderr, "numaplace profile: %s needs a value\n",
                    is_out ? "--out" : is_rate ? "--rate" : "--backend");
            return EXIT_USAGE;
        }
        if (is_out) {
            *out = val;
        } else if (is_backend) {
            const struct npl__sampling_backend *be = npl__sampling_backend_named(val);
            char names[128];
            npl__sampling_backend_names(names, sizeof names);
            if (!strcmp(val, "auto"))
                *backend = BACKEND_AUTO;
            else if (be)
                *backend = be->id;
            else {
                fprintf(stderr, "numaplace profile: --backend %s: expected auto, %s\n", val, names);
                return EXIT_USAGE;
            }
        } else if (npl_env_parse_rate(val, rate) < 0) {
            fprintf(stderr, "numaplace profile: --rate %s: expected samples per second, a "
                            "count from 1 to %d\n", val, NPL_ENV_PROFILE_RATE_MAX);
            return EXIT_USAGE;
        }
    }
    for (; i < *argc; i++)
        argv[w++] = argv[i];
    argv[w] = NULL;
    *argc = w;
    return 0;
}

/* --policy while sampling: the sampler maps the large blocks itself, so only a policy with a
 * process-wide kernel form (npl_policy_process_wide: run sets it before exec) places them;
 * first touch places nothing */
static int policy_kernel_only(const char *spec)
{
    npl_policy *pol = NULL;
    if (npl_policy_parse(&pol, spec) < 0)
        return 0; /* run's own check says why */
    int wide = npl_policy_get_kind(pol) != NPL_FIRST_TOUCH && npl_policy_process_wide(pol) == 1;
    npl_policy_free(pol);
    if (wide)
        return 0;
    fprintf(stderr, "numaplace profile: --policy %s: only cyclic and bind_all (the process-wide "
                    "kernel policy) place memory while sampling\n", spec);
    return -1;
}

/* One `numaplace profile` command: what it was asked, where the profile goes, the sampling
 * chosen, the raw profiles the program records into */
struct job {
    struct run_args a;
    const char *out;
    char outbuf[PATH_MAX], pattern[PATH_MAX];
    int per_pid, out_kind;            /* %p in --out; cli_out_check's kind */
    uint64_t rate, thr;
    int backend, backend_asked;
    const struct npl__sampling_backend *be;
    char what[256], why[512], said[768]; /* the backend's line, said once the program is checked */
    char shm[PATH_MAX + MAX_SPARES * 48];
    struct npl_raw *r, *spare[MAX_SPARES];
    int nspare;
    char prog[4096];
    char **pargv;
    int argc; /* run's part of the command line (own_options took profile's out of argv) */
    int bind_kind;
    char bind_detail[1024];
};

/* the command line: profile's own options, run's, the output name (%r, %h now; %p at the end).
 * 0, -1 (done: help), or an exit status */
static int job_parse(struct job *j, int argc, char **argv)
{
    int rc = own_options(&argc, argv, &j->out, &j->rate, &j->backend);
    j->argc = argc;
    if (rc)
        return rc < 0 ? -1 : rc;
    if ((rc = run_parse_args(argc, argv, &j->a, stderr)))
        return j->a.help ? (usage(stdout, 0), -1) : rc;
    if (j->a.help)
        return usage(stdout, 0), -1;
    if (j->a.next_touch || j->a.first || j->a.json) {
        fprintf(stderr, "numaplace profile: %s: a profile observes the program as it places its "
                        "memory itself (first touch)\n",
                j->a.next_touch ? "--next-touch" : j->a.first ? "--first" : "--json");
        return EXIT_USAGE;
    }
    if (j->a.policy && policy_kernel_only(j->a.policy) < 0)
        return EXIT_USAGE;
    if (!j->out) {
        const char *b = strrchr(j->a.prog_argv[0], '/');
        snprintf(j->outbuf, sizeof j->outbuf, "%s.profile.json", b ? b + 1 : j->a.prog_argv[0]);
    } else if ((rc = cli_expand_name("profile", "--out", j->out, -1, j->pattern,
                                     sizeof j->pattern)) ||
               (rc = cli_expand_name("profile", "--out", j->pattern, (int)getpid(), j->outbuf,
                                     sizeof j->outbuf))) {
        return rc;
    }
    j->out = j->outbuf;
    for (const char *c = j->pattern; *c; c++) /* %p: each program exec'd writes its own */
        if (*c == '%')
            j->per_pid |= *++c == 'p';
    /* where the profile goes, checked before a long run, not after it */
    if ((j->out_kind = cli_out_check("profile", j->out)) < 0)
        return EXIT_FAILED;
    j->thr = NPL_ENV_THRESHOLD_DEFAULT;
    if (j->a.threshold && npl_env_parse_threshold(j->a.threshold, &j->thr) < 0)
        return EXIT_USAGE; /* run_parse_args said so already */
    return 0;
}

/* the sampling backend, and its line (said once the arguments and the program are checked) */
static int job_backend(struct job *j)
{
    j->backend_asked = j->backend;
    j->be = npl__sampling_backend_choose(j->backend, j->what, sizeof j->what, j->why,
                                         sizeof j->why);
    if (!j->be) {
        fprintf(stderr, "numaplace profile: --backend %s: %s\n",
                npl__sampling_backend_of(j->backend)->name, j->why);
        return EXIT_USAGE;
    }
    if (j->backend == NPL_BACKEND_FAULT)
        snprintf(j->said, sizeof j->said, "numaplace profile: sampling by protection faults at "
                 "%llu pages/s (--backend fault)\n", (unsigned long long)j->rate);
    else if (j->be->id != NPL_BACKEND_FAULT)
        j->backend = j->be->id;
    else {
        j->backend = NPL_BACKEND_FAULT;
        snprintf(j->said, sizeof j->said, "numaplace profile: hardware sampling not used (%s): "
                 "sampling by protection faults at %llu pages/s\n", j->why,
                 (unsigned long long)j->rate);
    }
    return 0;
}

/* the raw profiles (one, and with %p spares for the other programs the command starts: a
 * script's, a launcher's children), named in the environment the program inherits */
static int job_raw(struct job *j)
{
    if (!(j->r = raw_create(j->shm, PATH_MAX, (size_t)j->thr))) {
        fprintf(stderr, "numaplace profile: cannot create the shared sampling file: %s\n",
                strerror(errno));
        return EXIT_FAILED;
    }
    j->r->backend = j->backend;
    for (; j->per_pid && j->backend == NPL_BACKEND_FAULT && j->nspare < MAX_SPARES; j->nspare++) {
        size_t used = strlen(j->shm);
        j->shm[used] = ',';
        if (!(j->spare[j->nspare] = raw_create(j->shm + used + 1, 48, (size_t)j->thr))) {
            j->shm[used] = 0;
            break;
        }
        j->spare[j->nspare]->backend = j->backend;
    }
    char ratebuf[32];
    snprintf(ratebuf, sizeof ratebuf, "%llu", (unsigned long long)j->rate);
    setenv(NPL_ENV_PROFILE_SHM, j->shm, 1);
    setenv(NPL_ENV_PROFILE_RATE, ratebuf, 1);
    return 0;
}

/* run's setup of the program, then what profile says before it starts */
static int job_setup(struct job *j, char **argv)
{
    int rc = run_setup(j->argc, argv, 1, j->prog, sizeof j->prog, &j->pargv, &j->a);
    if (rc)
        return rc == RUN_HELP ? -1 : rc;
    fputs(j->said, stderr);
    if (j->per_pid && j->nspare)
        fprintf(stderr, "numaplace profile: the profiles will go to %s (%%p: the pid of each "
                        "program it runs that allocates a large array; up to %d)\n", j->pattern,
                j->nspare + 1);
    else
        fprintf(stderr, "numaplace profile: the profile will go to %s%s\n",
                j->per_pid ? j->pattern : j->out,
                j->out_kind == 1 ? " (a device: written in place)" : "");
    /* the fault sampler is a thread of the program: OpenMP threads spinning between regions on
     * every CPU leave it little (MG's 8 threads in an emulated 4-node guest: 23 sampler rounds
     * and 1,539 samples in 4 iterations; 79 and 3,705 with passive waiting). Passive waiting
     * changes when idle threads sleep, never what any thread touches. */
    if (j->backend == NPL_BACKEND_FAULT && !getenv("OMP_WAIT_POLICY") &&
        !getenv("GOMP_SPINCOUNT") && !getenv("KMP_BLOCKTIME")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        fprintf(stderr, "numaplace profile: OMP_WAIT_POLICY=passive while profiling (idle OpenMP "
                        "threads sleep, so the sampler's thread gets a CPU; set OMP_WAIT_POLICY "
                        "to choose)\n");
    }
    binding_of(j->a.pin, &j->bind_kind, j->bind_detail, sizeof j->bind_detail);
    return 0;
}

/* The hardware backend's sampling of the child, which waits on the gate: started, or the
 * fault sampler instead (said); -1 when the backend was asked for and cannot sample this child
 * (the child is killed: the program is not started). The gate is closed: the child execs. */
static int backend_start(struct job *j, pid_t pid, int gate[2], struct npl__sampling **ps)
{
    close(gate[0]);
    *ps = j->be->start(pid, j->rate, j->why, sizeof j->why);
    if (*ps) {
        char per[64];
        if (getenv(NPL_ENV_PERF_EVENT))
            snprintf(per, sizeof per, "every fault");
        else
            snprintf(per, sizeof per, "about %llu samples/s", (unsigned long long)j->rate);
        fprintf(stderr, "numaplace profile: sampling memory addresses with %s: %s, %s\n",
                j->be->name, j->what, per);
    } else if (j->backend_asked == j->be->id) {
        /* the probe passed, the child's events did not open: the program is not started */
        fprintf(stderr, "numaplace profile: --backend %s: %s\n", j->be->name, j->why);
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(gate[1]);
        return -1;
    } else {
        /* the probe passed, the child's events did not open: said, never silent */
        j->r->backend = NPL_BACKEND_FAULT;
        fprintf(stderr, "numaplace profile: hardware sampling not used (%s): sampling by "
                        "protection faults at %llu pages/s\n", j->why,
                (unsigned long long)j->rate);
    }
    close(gate[1]); /* the child execs */
    return 0;
}

/* The hardware backend's counts, said, and its sampling stopped */
static void backend_stop(struct job *j, struct npl__sampling *ps)
{
    uint64_t got, lost, outside, unknown;
    int rw;
    j->be->stats(ps, &got, &lost, &outside, &unknown, &rw);
    j->r->rw_known = rw;
    fprintf(stderr, "numaplace profile: %s: %llu samples read, %llu in no tracked array, "
                    "%llu of threads numaplace did not number, %llu lost\n",
            j->be->name, (unsigned long long)got, (unsigned long long)outside,
            (unsigned long long)unknown, (unsigned long long)lost);
    j->be->stop(ps);
}

/* The program run and waited for: the child gets the signal dispositions and mask this process
 * had; perf's child waits at a gate until its events are open (they start at its exec). The
 * wait status (st), the seconds; 0 or an exit status. */
static int job_run(struct job *j, int *st, double *seconds)
{
    struct sigaction ign, old_int, old_quit, fwd, old_term, old_hup;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    memset(&fwd, 0, sizeof fwd);
    fwd.sa_handler = pass_on;
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int gate[2] = {-1, -1};
    if (j->be->start && pipe2(gate, O_CLOEXEC) < 0) {
        fprintf(stderr, "numaplace profile: pipe: %s\n", strerror(errno));
        return EXIT_FAILED;
    }
    fflush(NULL);
    double t0 = npl__now();
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        if (gate[0] >= 0) {
            char c;
            close(gate[1]);
            while (read(gate[0], &c, 1) < 0 && errno == EINTR)
                ;
        }
        execv(j->prog, j->pargv);
        int e = errno;
        fprintf(stderr, "numaplace profile: %s: %s\n", j->prog, strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    if (pid < 0) {
        fprintf(stderr, "numaplace profile: fork: %s\n", strerror(errno));
        return EXIT_FAILED;
    }
    struct npl__sampling *ps = NULL;
    if (gate[0] >= 0 && backend_start(j, pid, gate, &ps) < 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        munmap(j->r, sizeof *j->r);
        return EXIT_USAGE;
    }
    child_pid = pid;
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    *st = wait_child(pid, j->r, j->be, ps, isatty(2) || j->a.verbose, t0);
    *seconds = npl__now() - t0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (*st == -1) {
        fprintf(stderr, "numaplace profile: waitpid: %s\n", strerror(errno));
        return EXIT_FAILED;
    }
    if (ps)
        backend_stop(j, ps);
    if (j->per_pid)
        return cli_expand_name("profile", "--out", j->pattern,
                               j->r->owner_pid ? (int)j->r->owner_pid : (int)pid, j->outbuf,
                               sizeof j->outbuf);
    return 0;
}

/* the profiles written: the program's, and each other program's (its own, named by its pid) */
static int job_write(struct job *j, double seconds)
{
    int written = profile_finish(j->r, j->out, j->prog, seconds, j->bind_kind, j->bind_detail,
                                 j->a.verbose);
    munmap(j->r, sizeof *j->r);
    for (int k = 0; k < j->nspare; k++) {
        if (j->spare[k]->owner_pid &&
            cli_expand_name("profile", "--out", j->pattern, (int)j->spare[k]->owner_pid,
                            j->outbuf, sizeof j->outbuf) == 0) {
            char sprog[sizeof j->spare[k]->program + 1];
            snprintf(sprog, sizeof sprog, "%s", j->spare[k]->program);
            int w = profile_finish(j->spare[k], j->out, sprog, seconds, j->bind_kind,
                                   j->bind_detail, j->a.verbose);
            written = written ? written : w;
        }
        munmap(j->spare[k], sizeof *j->spare[k]);
    }
    return written;
}

int cmd_profile(int argc, char **argv)
{
    static struct job j; /* large: not on the stack */
    memset(&j, 0, sizeof j);
    j.rate = (uint64_t)NPL_SAMPLER_DEFAULT_RATE;
    j.backend = BACKEND_AUTO;
    int rc, st = 0;
    double seconds = 0;
    if ((rc = job_parse(&j, argc, argv)) || (rc = job_backend(&j)) || (rc = job_raw(&j)) ||
        (rc = job_setup(&j, argv)) || (rc = job_run(&j, &st, &seconds)))
        return rc < 0 ? 0 : cli_own_status(rc);
    int written = job_write(&j, seconds);
    int status = mirror(st);
    return status ? status : cli_own_status(written);
}
