/* SPDX-License-Identifier: BSD-3-Clause */
/* report.c - numaplace report: the characterization report (docs/man/numaplace-report.1).
 *
 * 1. the host and how far its timings can be trusted (report_env.c); 2. the NUMA factor
 * matrix, MLC-class (measure.c); 3. the characterization run (report_charac.c); 4. the verdict:
 * factors, spread, a recommendation per access pattern with its margin (report_verdict.c).
 * Writes DIR/results.json (docs/schema/report.schema.json) and DIR/index.html (report_out.c);
 * then runs tools/report_plot.py (matplotlib) for the plots, when python3 and matplotlib are
 * there. Every figure is repeated (--reps): median, min, max and every repetition. */
#define _GNU_SOURCE
#include "cli.h"
#include "advise.h"
#include "common.h"
#include "report_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* tools/report_plot.py: $NUMAPLACE_PLOT, next to the binary, or ../tools from a build dir */
static int find_plot(char *out, size_t size)
{
    static const char *const rel[] = {"report_plot.py", "../tools/report_plot.py",
                                      "../share/numaplace/report_plot.py"};
    int rc = cli_find_file("NUMAPLACE_PLOT", rel, 3, out, size);
    const char *env = getenv("NUMAPLACE_PLOT");
    if (rc == 0 || (env && *env))
        return rc; /* an explicit path is not second-guessed */
#ifdef NPL_SOURCE_DIR
    snprintf(out, size, "%s/tools/report_plot.py", NPL_SOURCE_DIR);
    return access(out, R_OK);
#else
    return -1;
#endif
}

/* The output directory, before minutes of measuring: created (with its parents), a directory,
 * and writable (a test file written, flushed and removed). 0, or -1 with the message printed. */
static int check_dir(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) { /* mkdir -p */
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "numaplace report: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "numaplace report: --out %s is not a directory\n", dir);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s/.numaplace-check.%d", dir, (int)getpid());
    int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    char block[4096];
    memset(block, '\n', sizeof block);
    int ok = fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block;
    int e = errno;
    if (fd >= 0) {
        if ((fsync(fd) < 0 || close(fd) < 0) && ok)
            ok = 0, e = errno;
        unlink(buf);
    }
    if (!ok) {
        fprintf(stderr, "numaplace report: cannot write in %s: %s\n", dir, strerror(e));
        return -1;
    }
    return 0;
}

static void usage(void)
{
    printf("usage: numaplace report [--quick|--full] [--reps N] [--out DIR] [--no-plots] [--json]\n"
           "                        [--progress] [--profile FILE]\n"
           "                        [--profile FILE]\n"
           "A verdict first (how far the timings can be trusted, worst and mean latency factor,\n"
           "remote-bandwidth penalty, measured spread, a recommended policy per access pattern\n"
           "with its margin, or \"no measurable difference\"), then the NUMA factor matrix as\n"
           "Intel MLC measures it and the characterization run (read/write/read-write x\n"
           "regular/irregular/random x static/dynamic schedules under first_touch and every\n"
           "policy). Every figure is repeated: median [min-max], every repetition in the JSON.\n"
           "Writes DIR/results.json (docs/schema/report.schema.json) and DIR/index.html, with\n"
           "matplotlib plots from tools/report_plot.py when python3-matplotlib is installed.\n"
           "DIR is created and test-written before measuring: a DIR that is not a\n"
           "directory, or cannot be written in, fails at once (exit 1); files are never\n"
           "written through symbolic links. A progress line (step, percentage, ETA) is shown\n"
           "on a terminal (NUMAPLACE_PROGRESS=0: never); --progress or NUMAPLACE_PROGRESS=1\n"
           "also writes it into a log (stderr not a terminal): a line every 10 s or so.\n"
           "  --progress   progress lines on stderr even when it is not a terminal\n"
           "  --out DIR    default ./report\n"
           "  --quick      tiny sizes (seconds; numbers indicative only)\n"
           "  --full       large sizes for real runs (the default takes under 3 minutes on 2 cores)\n"
           "  --reps N     repetitions of every figure (1-%d, default 5)\n"
           "  --no-plots   do not run the plotting script\n"
           "  --json       print results.json on stdout (the verdict goes to stderr)\n"
           "  --profile FILE  also the per-array advice for the profile FILE (numaplace profile):\n"
           "               its table after the measurements and, in index.html, the table with a\n"
           "               bar chart per array, as numaplace advise --html draws it (read and\n"
           "               classified before measuring: a bad profile is exit 2 at once)\n"
           "Threads: OMP_NUM_THREADS (default all allowed CPUs), pinned compactly.\n"
           "exit status: 0; 1 a measurement or writing failed (or the plots, when asked\n"
           "for and python3/matplotlib are present but fail); 2 bad usage\n", STATS_MAX_REPS);
}

struct report_opts {
    int level, reps, plots, json, progress;
    const char *dir, *profile;
};

/* 0 to go on, else the exit status (-1: --help printed, exit 0); the directory is checked later */
static int parse(int argc, char **argv, struct report_opts *o)
{
    static const struct option opts[] = {
        {"quick", no_argument, NULL, 'q'}, {"full", no_argument, NULL, 'f'},
        {"reps", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'},
        {"no-plots", no_argument, NULL, 'n'}, {"json", no_argument, NULL, 'j'},
        {"profile", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {"progress", no_argument, NULL, 'P'}, {NULL, 0, NULL, 0}};
    *o = (struct report_opts){1, 5, 1, 0, 0, "report", NULL};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if ((c == 'q' && o->level == 2) || (c == 'f' && o->level == 0)) {
            fprintf(stderr, "numaplace report: --quick and --full contradict each other\n");
            return EXIT_USAGE;
        } else if (c == 'q' || c == 'f')
            o->level = c == 'q' ? 0 : 2;
        else if (c == 'r' && (o->reps = measure_parse_reps("report", optarg)) < 0)
            return EXIT_USAGE;
        else if (c == 'o' || c == 'p')
            *(c == 'o' ? &o->dir : &o->profile) = optarg;
        else if (c == 'n' || c == 'j')
            *(c == 'n' ? &o->plots : &o->json) = c == 'j';
        else if (c == 'P')
            o->progress = 1;
        else if (c == 'h')
            return usage(), -1;
        else if (c != 'r')
            return cli_bad_option("report", c, argv);
    }
    if (optind < argc) {
        fprintf(stderr, "numaplace report: unknown argument \"%s\" (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!*o->dir || strlen(o->dir) >= 4000) { /* check_dir's copy: neither empty nor cut */
        fprintf(stderr, "numaplace report: --out: %s directory name\n",
                *o->dir ? "too long a" : "empty");
        return EXIT_USAGE;
    }
    return 0;
}

static int run_plots(const char *dir, FILE *out)
{
    char script[4096];
    if (find_plot(script, sizeof script) < 0) {
        fprintf(out, "plots: tools/report_plot.py not found (set NUMAPLACE_PLOT): tables only\n");
        return 0;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (out == stderr)
            dup2(STDERR_FILENO, STDOUT_FILENO);
        execlp("python3", "python3", script, dir, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (code == 127 || code == 3)
        fprintf(out, "plots: python3 or matplotlib missing (apt-get install python3-matplotlib): "
                "tables only\n");
    else if (code != 0)
        return fprintf(stderr, "numaplace report: %s failed (status %d)\n", script, code),
               EXIT_FAILED;
    return 0;
}

static int copy_file(const char *path, FILE *to)
{
    FILE *f = fopen(path, "r");
    char buf[65536];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, to);
    return f ? fclose(f) : EXIT_FAILED;
}

/* measure, characterize, decide, write: 0 or the exit status */
static int measure_all(const struct report_opts *o, const struct advice_set *advice,
                       struct measure_result *m, struct charac *c, struct host_env *h,
                       struct verdict *v, FILE *out)
{
    struct measure_opts mo = {o->level, o->reps, report_progress};
    report_progress_start(o->level, o->progress);
    double t0 = npl__now();
    int rc = measure_run(&mo, 0, m);
    h->measure_s = npl__now() - t0;
    if (rc == 0)
        rc = report_characterize(o->level, o->reps, m, c);
    h->charac_s = npl__now() - t0 - h->measure_s;
    report_progress_done();
    if (rc)
        return rc;
    report_verdict(m, c, h, v);
    report_print_verdict(out, m, c, v);
    fprintf(out, "\n== measurements\n");
    measure_print(out, m);
    if (advice) {
        fprintf(out, "\n== per-array advice\n");
        advise_table(out, o->profile, advice->p, advice->adv, advice->stored, 0);
    }
    char json[4096], html[4096];
    snprintf(json, sizeof json, "%s/results.json", o->dir);
    snprintf(html, sizeof html, "%s/index.html", o->dir);
    rc = report_write_json(json, o->level, m, c, h, v);
    return rc ? rc : report_write_html(html, m, c, v, advice, o->profile);
}

int cmd_report(int argc, char **argv)
{
    struct report_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    double t0 = npl__now();
    const npl_topo *t = npl_topo_self();
    if (!t)
        return cli_fail("topology");
    /* the profile first (a bad one is bad usage), then the output directory */
    struct advice_set advice = {NULL, NULL, NULL};
    if (o.profile && (rc = advise_load("report", o.profile, &advice)) != 0)
        return rc;
    if (check_dir(o.dir) < 0) {
        if (o.profile)
            advise_free(&advice);
        return EXIT_FAILED;
    }
    FILE *out = o.json ? stderr : stdout;
    struct host_env h;
    report_host(&h);
    fprintf(out, "numaplace report%s: %d node(s), %d CPU(s) allowed, %d repetitions; %s, %s\n",
            o.level == 0 ? " --quick" : o.level == 2 ? " --full" : "", npl_topo_node_count(t, 0),
            npl_topo_cpu_count(t), o.reps, h.cpu_model, h.kernel);
    if (npl_topo_node_count(t, 0) == 1)
        fprintf(out, "this machine has ONE usable NUMA node: placement cannot differ (no remote "
                "memory); the policies are compared as first-touch variants only\n");
    fflush(out);
    struct measure_result *m = calloc(1, sizeof *m);
    struct charac *c = calloc(1, sizeof *c);
    struct verdict *v = calloc(1, sizeof *v);
    rc = m && c && v ? measure_all(&o, o.profile ? &advice : NULL, m, c, &h, v, out)
                     : cli_fail("out of memory");
    if (o.profile)
        advise_free(&advice);
    free(m);
    free(c);
    free(v);
    if (rc == 0 && o.plots)
        rc = run_plots(o.dir, out);
    char json[4096];
    snprintf(json, sizeof json, "%s/results.json", o.dir);
    if (rc == 0 && o.json)
        rc = copy_file(json, stdout);
    fprintf(out, "wrote %s and %s/index.html (%.1f s)\n", json, o.dir, npl__now() - t0);
    return rc;
}
