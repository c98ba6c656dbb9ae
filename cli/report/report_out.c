/* report_out.c - what numaplace report writes: the verdict on stdout, DIR/results.json
 * (docs/schema/report.schema.json: every repetition, units in the key names) and a plain
 * DIR/index.html that tools/report_plot.py replaces with the one with plots. */
#define _GNU_SOURCE
#include "common.h"
#include "json.h"
#include "report_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAT(k) (k) / (NACC * NSCH)][(k) / NSCH % NACC][(k) % NSCH

static void print_rec(FILE *f, int k, const struct rec_result *r)
{
    fprintf(f, "  %-10s %-9s %-7s -> ", report_ops[k / (NACC * NSCH)],
            report_accesses[k / NSCH % NACC], report_scheds[k % NSCH]);
    if (!r->policy)
        fprintf(f, "not measured\n");
    else if (!r->measurable)
        fprintf(f, "%-12s no measurable difference\n", r->policy);
    else if (!r->runner_up)
        fprintf(f, "%-12s ties with the fastest; no policy is clearly slower than it\n", r->policy);
    else
        fprintf(f, "%-12s margin %.0f%% (%s takes that much longer)\n", r->policy,
                r->margin * 100, r->runner_up);
}

/* the exact results: where each policy put the pages, and the remote-access fractions */
static void print_locality(FILE *f, const struct measure_result *m, const struct charac *c)
{
    fprintf(f, "exact locality (page counts, not timings; threads pinned compactly):\n"
            "  %-13s %9s %9s  pages per node\n", "policy", "remote:blk", "remote:all");
    for (int p = 0; p < NPOL; p++) {
        const struct locality *l = &c->loc[p];
        if (!l->ok)
            continue;
        fprintf(f, "  %-13s %9.1f%% %9.1f%% ", report_policies[p], l->remote_static * 100,
                l->remote_shared * 100);
        for (int k = 0; k < m->n; k++)
            fprintf(f, " n%d=%zu", m->nodes[k], l->pages[k]);
        fprintf(f, "\n");
    }
    fprintf(f, "  (remote:blk = accesses to remote pages when each thread works on its own block, "
            "regular static; remote:all = when every thread touches every page, random)\n");
}

void report_print_verdict(FILE *f, const struct measure_result *m, const struct charac *c,
                          const struct verdict *v)
{
    fprintf(f, "\n== verdict (timings: %s)\n", v->trust);
    for (int i = 0; i < v->nwarn; i++)
        fprintf(f, "! %s\n", v->warn[i]);
    if (v->worst_lat_factor < 0)
        fprintf(f, "latency factor: none (one NUMA node: no remote memory)\n");
    else
        fprintf(f, "latency factor (remote/local, 2 MiB pages): worst %.2f, mean %.2f\n"
                "remote-bandwidth penalty: %.0f%% (mean of 1 - remote/local triad bandwidth)\n",
                v->worst_lat_factor, v->mean_lat_factor, v->remote_bw_penalty * 100);
    fprintf(f, "measured spread: median %.1f%%, max %.1f%% ((max-min)/median of %d repetitions); "
            "noise threshold %.0f%%\n", v->spread_median * 100, v->spread_max * 100, c->reps,
            v->tolerance * 100);
    if (v->emulated) {
        fprintf(f, "recommendations: none (emulated times judge no policy); the result is the "
                "exact locality below\n");
        print_locality(f, m, c);
        return;
    }
    int differ = 0;
    for (int k = 0; k < NPAT; k++)
        differ += v->rec[PAT(k)].measurable;
    fprintf(f, "recommendations, %d of %d access patterns with a measurable difference%s\n",
            differ, NPAT, differ ? ":" : ": no measurable difference anywhere, keep first_touch");
    for (int k = 0; k < NPAT; k++)
        if (v->rec[PAT(k)].measurable || !v->rec[PAT(k)].policy)
            print_rec(f, k, &v->rec[PAT(k)]);
    fprintf(f, "rule: %s\n", report_rule_text(m->n));
    print_locality(f, m, c);
}

FILE *report_open_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        errno = EINVAL;
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (!f)
        fprintf(stderr, "numaplace report: cannot write %s: %s\n", path,
                errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, int bad)
{
    bad |= ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "numaplace report: error writing %s: %s\n", path, strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

int report_write_html(const char *path, const struct measure_result *m, const struct charac *c,
                      const struct verdict *v)
{
    FILE *f = report_open_out(path);
    if (!f)
        return EXIT_FAILED;
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>numaplace report"
               "</title></head><body>\n<h1>numaplace report</h1>\n<p>Timings: <b>%s</b>. %d "
               "node(s). %s</p>\n<pre>", v->trust, m->n, m->note);
    report_print_verdict(f, m, c, v); /* plain text: no markup in it */
    fprintf(f, "</pre>\n<p>Plots: <code>python3 tools/report_plot.py DIR</code> (matplotlib); "
               "data: <a href=\"results.json\">results.json</a>.</p>\n</body></html>\n");
    return close_out(f, path, 0);
}
