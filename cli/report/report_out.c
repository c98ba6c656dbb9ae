/* SPDX-License-Identifier: BSD-3-Clause */
/* report_out.c - what numaplace report writes: the verdict on stdout, DIR/results.json
 * (docs/schema/report.schema.json: every repetition, units in the key names) and a plain
 * DIR/index.html that tools/report_plot.py replaces with the one with plots (keeping the per-array
 * advice of --profile). */
#define _GNU_SOURCE
#include "advise.h"
#include "common.h"
#include "html.h"
#include "json.h"
#include "report_parts.h"

#include <stdlib.h>

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

int report_write_html(const char *path, const struct measure_result *m, const struct charac *c,
                      const struct verdict *v, const struct advice_set *advice,
                      const char *profile_path)
{
    FILE *f = cli_open_out("report", path);
    if (!f)
        return EXIT_FAILED;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        report_print_verdict(mem, m, c, v);
        if (fclose(mem) != 0) {
            free(text);
            text = NULL;
        }
    }
    html_page_begin(f, "numaplace report");
    fputs("<p>Timings: <b>", f);
    html_text(f, v->trust);
    fprintf(f, "</b>. %d node(s). ", m->n);
    html_text(f, m->note);
    fputs("</p>\n<pre>", f);
    html_text(f, text);
    fputs("</pre>\n", f);
    if (advice) { /* kept by tools/report_plot.py when it writes the page again */
        fputs(REPORT_ADVICE_BEGIN "\n", f);
        advise_html(f, profile_path, advice);
        fputs(REPORT_ADVICE_END "\n", f);
    }
    fputs("<p>Plots: <code>python3 tools/report_plot.py DIR</code> (matplotlib); data: "
          "<a href=\"results.json\">results.json</a>.</p>\n", f);
    html_page_end(f);
    int bad = !text;
    free(text);
    return cli_close_out("report", f, path, bad);
}
