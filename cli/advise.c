/* SPDX-License-Identifier: BSD-3-Clause */
/* advise.c - numaplace advise FILE [--json] [--verbose] [--html OUT]: one row per array of a
 * measured access profile (docs/AUTO.md): its site, size, pattern, the advised policy, the predicted
 * local fraction under it and under first touch, the measured one (the profiled run's sampled
 * accesses), and the reason; --html adds a per-array bar chart
 * (the same section numaplace report --profile puts in its page). Arrays whose "advice" the profile
 * already holds are shown as stored; the others are classified here (src/profile/classify.c). A
 * bad profile is one line on stderr and exit status 2. */
#include "cli.h"
#include "advise.h"
#include "common.h"
#include "html.h"
#include "json.h"
#include "profile/profile.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void advise_usage(FILE *f)
{
    fprintf(f, "usage: numaplace advise FILE [--json] [--verbose] [--write OUT] [--html OUT]\n"
               "  one row per array of the profile FILE (numaplace profile writes it): the site,\n"
               "  size, access pattern, the advised policy, the predicted local fraction under it\n"
               "  and under first touch, the measured local fraction of the profiled run (meas),\n"
               "  and the reason; advice stored in FILE is shown as it is\n"
               "  --json      the same as one JSON object (docs/schema/advise.schema.json)\n"
               "  -v, --verbose  also every placement evaluated, with its predicted local fraction\n"
               "  --write OUT the profile again with every array's advice stored in it (OUT may be\n"
               "              FILE; run --profile then applies it without classifying again)\n"
               "  --html OUT  also one self-contained HTML page: the profile's header, the table\n"
               "              and a bar chart per array of the predicted local fractions\n"
               "exit status: 0; 2 bad usage or a bad profile (one line on stderr); 1 failure\n");
}

static void size_text(uint64_t b, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    uint64_t whole = b, scale = 1;
    while (whole >= 1024 && u < 5) {
        whole /= 1024;
        scale *= 1024;
        u++;
    }
    if (b % scale == 0 || whole >= 100)
        snprintf(buf, n, "%llu %s", (unsigned long long)whole, unit[u]);
    else /* one decimal, computed in integers (no locale) */
        snprintf(buf, n, "%llu.%llu %s", (unsigned long long)whole,
                 (unsigned long long)((b % scale) * 10 / scale), unit[u]);
}

static void frac_text(double f, char *buf, size_t n)
{
    if (f < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", f);
}

/* the advised policy with what goes with it: next-touch phases, replicas, an explicit map */
static void policy_text(const struct npl_prof_advice *a, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "%s", a->policy);
    for (uint32_t i = 0; i < a->nnext_touch && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? "," : " +next-touch@", a->next_touch[i]);
    if (a->replicate && o < n)
        snprintf(buf + o, n - o, " (replicate)");
}

static cJSON *site_json(const struct npl_prof_site *s)
{
    cJSON *o = json_object();
    json_add_str(o, "object", s->object);
    json_add_str(o, "build_id", s->build_id);
    json_add_num(o, "offset", (double)s->offset);
    json_add_num(o, "ordinal", (double)s->ordinal);
    json_add_str(o, "kind", s->kind == NPL_SITE_STATIC ? "static" : "heap");
    json_add_str(o, "symbol", s->symbol);
    json_add_str(o, "where", s->where);
    return o;
}

/* The profile with the new advice stored (cli_write_out: a regular file renamed over OUT). The profile keeps
 * its copy of each new advice's lists. */
static int write_profile(struct npl_profile *p, struct npl_prof_advice *adv, const int *stored,
                         const char *out)
{
    for (uint32_t i = 0; i < p->narrays; i++)
        if (!stored[i]) {
            p->arrays[i].advice = adv[i];
            p->arrays[i].has_advice = 1;
            adv[i].chunk_nodes = NULL; /* now the profile's */
            adv[i].next_touch = NULL;
            adv[i].nchunk_nodes = 0;
            adv[i].nnext_touch = 0;
        }
    size_t len;
    char *text = npl__profile_format(p, &len);
    if (!text) {
        fprintf(stderr, "numaplace advise: out of memory\n");
        return -1;
    }
    int rc = cli_write_out("advise", out, text, len);
    free(text);
    return rc ? -1 : 0;
}

/* the measured local fraction of an array's sampled accesses (local / (local + remote)), or -1:
 * not measured (an older profile, or no sample whose page's node is known) */
static double measured_local(const struct npl_prof_array *a)
{
    uint64_t l = a->measured[NPL_MEASURED_LOCAL], r = a->measured[NPL_MEASURED_REMOTE];
    return a->has_measured && l + r ? (double)l / (double)(l + r) : -1;
}

static void table_head(FILE *f)
{
    fprintf(f, "%-24s %9s  %-18s %-34s %5s %5s %5s %4s  %s\n", "site", "size", "pattern",
            "policy", "local", "ft", "meas", "conf", "reason");
}

/* array i's row (its advice d), which: what it stands for in a merged table ("" in one) */
static void table_row(FILE *f, const struct npl_profile *p, uint32_t i,
                      const struct npl_prof_advice *d, int stored, int verbose, const char *which)
{
    char label[4200], size[32], pol[400], l1[16], l2[16], l3[16];
    char t1[8192], t2[8192], t3[8192];
    npl__site_label(&p->arrays[i].site, label, sizeof label);
    size_text(p->arrays[i].bytes, size, sizeof size);
    policy_text(d, pol, sizeof pol);
    frac_text(d->local_policy, l1, sizeof l1);
    frac_text(d->local_first_touch, l2, sizeof l2);
    frac_text(measured_local(&p->arrays[i]), l3, sizeof l3);
    fprintf(f, "%-24s %9s  %-18s %-34s %5s %5s %5s %4.2f  %s%s%s\n",
            npl__term_text(label, t1, sizeof t1), size, npl__pattern_name(d->pattern),
            npl__term_text(pol, t2, sizeof t2), l1, l2, l3, d->confidence, which,
            stored ? "(stored) " : "", npl__term_text(d->reason, t3, sizeof t3));
    for (int k = 0; verbose && !stored && k < d->ncand; k++)
        fprintf(f, "    %-40s %.3f%s\n", npl__term_text(d->cand[k].policy, t1, sizeof t1),
                d->cand[k].local, d->cand[k].scalable ? "" : "  (this input size only)");
}

/* the advice table (advise.h) */
void advise_table(FILE *f, const char *path, const struct npl_profile *p,
                  const struct npl_prof_advice *adv, const int *stored, int verbose)
{
    char t1[8192], t2[8192];
    fprintf(f, "profile %s: %s, %d thread%s on %d node%s, %u array%s, %llu samples (%s)\n",
            npl__term_text(path, t1, sizeof t1),
            npl__term_text(p->program_path && *p->program_path ? p->program_path : "?", t2,
                           sizeof t2), p->threads,
            p->threads > 1 ? "s" : "", p->nnodes, p->nnodes > 1 ? "s" : "", p->narrays,
            p->narrays != 1 ? "s" : "", (unsigned long long)p->samples,
            p->backend == NPL_BACKEND_PERF ? "perf" : "protection faults");
    char warn[400];
    if (npl__profile_run_warning(p, warn, sizeof warn))
        fprintf(f, "warning: %s\n", warn);
    table_head(f);
    for (uint32_t i = 0; i < p->narrays; i++)
        table_row(f, p, i, adv ? &adv[i] : &p->arrays[i].advice, stored && stored[i], verbose, "");
}

/* ---- several profiles of one program (an MPI job's ranks, p.%r.json): merged by site ---- */
static int same_site(const struct npl_prof_site *a, const struct npl_prof_site *b)
{
    return a->offset == b->offset && a->ordinal == b->ordinal && a->kind == b->kind &&
           !strcmp(a->object ? a->object : "", b->object ? b->object : "");
}

/* array of set k at site s, or -1 */
static int find_site(const struct advice_set *set, const struct npl_prof_site *s)
{
    for (uint32_t i = 0; i < set->p->narrays; i++)
        if (same_site(&set->p->arrays[i].site, s))
            return (int)i;
    return -1;
}

static int merged_table(char **paths, int n, struct advice_set *sets, int verbose)
{
    const struct npl_profile *p0 = sets[0].p;
    char t1[8192];
    printf("%d profiles of %s, merged by site:", n,
           npl__term_text(p0->program_path ? p0->program_path : "?", t1, sizeof t1));
    for (int k = 0; k < n; k++)
        printf(" %s", npl__term_text(paths[k], t1, sizeof t1));
    printf("\n");
    table_head(stdout);
    unsigned sites = 0, one = 0, differ = 0, partial = 0;
    for (int k = 0; k < n; k++)
        for (uint32_t i = 0; i < sets[k].p->narrays; i++) {
            const struct npl_prof_site *s = &sets[k].p->arrays[i].site;
            int earlier = 0;
            for (int j = 0; j < k && !earlier; j++)
                earlier = find_site(&sets[j], s) >= 0;
            if (earlier)
                continue; /* shown with the first profile that has it */
            sites++;
            int in_all = 1, agree = 1;
            char first[400], pol[400];
            policy_text(&sets[k].adv[i], first, sizeof first);
            for (int j = 0; j < n; j++) {
                int at = find_site(&sets[j], s);
                if (at < 0) {
                    in_all = 0;
                    continue;
                }
                policy_text(&sets[j].adv[at], pol, sizeof pol);
                agree &= !strcmp(pol, first);
            }
            if (in_all && agree) {
                char which[64];
                snprintf(which, sizeof which, "[all %d profiles] ", n);
                table_row(stdout, sets[k].p, i, &sets[k].adv[i], sets[k].stored[i], verbose, which);
                one++;
                continue;
            }
            differ += in_all;
            partial += !in_all;
            for (int j = k; j < n; j++) { /* one row per profile that has it, said which */
                int at = find_site(&sets[j], s);
                if (at < 0)
                    continue;
                char which[4200 + 8];
                snprintf(which, sizeof which, "[%s] ", npl__term_text(paths[j], t1, 4200));
                table_row(stdout, sets[j].p, (uint32_t)at, &sets[j].adv[at], sets[j].stored[at],
                          verbose, which);
            }
        }
    printf("%u site%s: %u with one advice for all %d profiles, %u advised differently (a row per "
           "profile), %u not in every profile\n", sites, sites == 1 ? "" : "s", one, n, differ,
           partial);
    return fflush(stdout) != 0 || ferror(stdout) ? EXIT_FAILED : 0;
}

static int same_program(const struct npl_profile *a, const struct npl_profile *b)
{
    if (a->program_build_id && b->program_build_id)
        return !strcmp(a->program_build_id, b->program_build_id);
    return !strcmp(a->program_path ? a->program_path : "", b->program_path ? b->program_path : "");
}

/* several profiles: grouped by program (a launcher's or a script's children, each its own
 * profile), each program's profiles merged by site, a program with one profile as its table */
static int several(char **paths, int n, struct advice_set *sets, int verbose)
{
    int *done = calloc((size_t)n, sizeof *done), rc = 0, groups = 0;
    char **gp = calloc((size_t)n, sizeof *gp);
    struct advice_set *gs = calloc((size_t)n, sizeof *gs);
    if (!done || !gp || !gs)
        rc = EXIT_FAILED;
    for (int k = 0; rc == 0 && k < n; k++) {
        if (done[k])
            continue;
        int m = 0;
        for (int j = k; j < n; j++)
            if (!done[j] && same_program(sets[k].p, sets[j].p)) {
                done[j] = 1;
                gp[m] = paths[j];
                gs[m++] = sets[j];
            }
        if (groups++)
            printf("\n");
        if (m == 1) {
            advise_table(stdout, gp[0], gs[0].p, gs[0].adv, gs[0].stored, verbose);
            rc = fflush(stdout) != 0 || ferror(stdout) ? EXIT_FAILED : 0;
        } else {
            rc = merged_table(gp, m, gs, verbose);
        }
    }
    if (rc == 0 && groups > 1)
        printf("%d profiles of %d programs: each program's profiles merged, the program named "
               "above its rows\n", n, groups);
    free(done);
    free(gp);
    free(gs);
    return rc;
}

int advise_load(const char *cmd, const char *path, struct advice_set *s)
{
    char err[1024];
    *s = (struct advice_set){NULL, NULL, NULL};
    if (npl__profile_load(path, &s->p, err, sizeof err) < 0) {
        for (char *q = err; *q; q++) /* one line */
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        fprintf(stderr, "numaplace %s: %s\n", cmd, err);
        return EXIT_USAGE;
    }
    struct npl_profile *p = s->p;
    s->adv = calloc(p->narrays ? p->narrays : 1, sizeof *s->adv);
    s->stored = calloc(p->narrays ? p->narrays : 1, sizeof *s->stored);
    struct npl_prof_advice **each = calloc(p->narrays ? p->narrays : 1, sizeof *each);
    int rc = 0;
    if (!s->adv || !s->stored || !each) {
        fprintf(stderr, "numaplace %s: out of memory\n", cmd);
        rc = EXIT_FAILED;
    }
    for (uint32_t i = 0; rc == 0 && i < p->narrays; i++) {
        each[i] = &s->adv[i];
        if (p->arrays[i].has_advice) {
            s->adv[i] = p->arrays[i].advice; /* shown as stored; owned by the profile */
            s->stored[i] = 1;
        }
    }
    /* as numaplace profile does before it writes the advice; stored advice had it */
    if (rc == 0 && npl__advise_profile(p, each, s->stored, err, sizeof err) < 0) {
        fprintf(stderr, "numaplace %s: %s: %s\n", cmd, path, err);
        rc = EXIT_FAILED;
    }
    free(each);
    if (rc)
        advise_free(s);
    return rc;
}

void advise_free(struct advice_set *s)
{
    for (uint32_t i = 0; s->adv && s->stored && i < s->p->narrays; i++)
        if (!s->stored[i])
            npl__advice_clear(&s->adv[i]);
    free(s->adv);
    free(s->stored);
    npl__profile_free(s->p);
    *s = (struct advice_set){NULL, NULL, NULL};
}

/* ---- the HTML section ---- */

#define CHART_LABEL_W 230 /* the site labels' column */
#define CHART_BAR_W 360   /* a local fraction of 1 */
#define CHART_BAR_H 14
#define CHART_VALUE_W 330 /* the value and the placement after a bar */

static const struct chart_bar {
    const char *cls, *name, *fill;
} chart_bars[3] = {{"bar-policy", "advised", "#2f6db5"},
                   {"bar-first-touch", "first touch", "#9aa5b1"},
                   {"bar-best", "best evaluated", "#e08a1e"}};

/* the best placement is shown only when it differs at the precision shown */
static int best_differs(const struct npl_prof_advice *d)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%.3f", d->local_policy);
    snprintf(b, sizeof b, "%.3f", d->local_best);
    return strcmp(a, b) != 0;
}

/* at most max characters of s (UTF-8 aware), "..." after a cut one */
static void html_short(FILE *f, const char *s, int max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    for (int n = 0; u[i] && n < max; n++) {
        size_t k = cli_utf8_len(u + i);
        i += k ? k : 1;
    }
    char *cut = strndup(s, i);
    html_text(f, cut ? cut : "?");
    free(cut);
    if (u[i])
        fputs("...", f);
}

/* one bar: its rectangle (width: the fraction), its value and the placement (what, may be "")
 * after it */
static void chart_bar(FILE *f, int kind, double frac, const char *what, int y)
{
    const struct chart_bar *b = &chart_bars[kind];
    fprintf(f, "<rect class=\"bar %s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
               "<title>%s%s", b->cls, CHART_LABEL_W, y, frac * CHART_BAR_W, CHART_BAR_H, b->fill,
            b->name, *what ? " " : "");
    html_text(f, what);
    fprintf(f, ": %.3f</title></rect>\n<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.3f ",
            frac, CHART_LABEL_W + frac * CHART_BAR_W + 4, y + CHART_BAR_H - 3, frac);
    html_short(f, what, 48);
    fputs("</text>\n", f);
}

/* the chart: a group of bars per array, with the exact fractions as data attributes */
static void advise_chart(FILE *f, const struct advice_set *s)
{
    const struct npl_profile *p = s->p;
    int rows = 0;
    for (uint32_t i = 0; i < p->narrays; i++)
        rows += 2 + best_differs(&s->adv[i]);
    int top = 40, w = CHART_LABEL_W + CHART_BAR_W + CHART_VALUE_W;
    int h = top + rows * (CHART_BAR_H + 2) + (int)p->narrays * 12 + 10;
    fprintf(f, "<svg class=\"npl-advice-chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" aria-label=\"predicted local-access fraction per array\" "
               "font-family=\"sans-serif\">\n", w, h, w, h);
    for (int k = 0; k < 3; k++) /* the legend */
        fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"14\" font-size=\"12\">%s</text>\n",
                CHART_LABEL_W + k * 130, chart_bars[k].fill, CHART_LABEL_W + k * 130 + 16,
                chart_bars[k].name);
    for (int t = 0; t <= 4; t++) { /* the axis: 0, 0.25, ... 1 */
        double x = CHART_LABEL_W + t * CHART_BAR_W / 4.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>"
                   "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%.2f</text>\n",
                x, top - 6, x, h - 4, x, top - 9, t / 4.0);
    }
    int y = top;
    for (uint32_t i = 0; i < p->narrays; i++) {
        const struct npl_prof_advice *d = &s->adv[i];
        char label[4200];
        npl__site_label(&p->arrays[i].site, label, sizeof label);
        fprintf(f, "<g class=\"npl-array\" data-index=\"%u\" data-site=\"", i);
        html_text(f, label);
        fprintf(f, "\" data-local-policy=\"%.17g\"", d->local_policy);
        if (d->local_first_touch >= 0)
            fprintf(f, " data-local-first-touch=\"%.17g\"", d->local_first_touch);
        fprintf(f, " data-local-best=\"%.17g\">\n<title>", d->local_best);
        html_text(f, label);
        fputs("</title>\n<text x=\"0\" y=\"", f);
        fprintf(f, "%d\" font-size=\"12\">", y + CHART_BAR_H - 3);
        html_short(f, label, 32);
        fputs("</text>\n", f);
        char pol[400];
        policy_text(d, pol, sizeof pol);
        chart_bar(f, 0, d->local_policy, pol, y);
        y += CHART_BAR_H + 2;
        if (d->local_first_touch >= 0)
            chart_bar(f, 1, d->local_first_touch, "", y);
        else
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">first touch: not known</text>\n",
                    CHART_LABEL_W + 4, y + CHART_BAR_H - 3);
        y += CHART_BAR_H + 2;
        if (best_differs(d)) {
            /* the candidates come best first; stored advice keeps none */
            int named = d->ncand > 0 && d->cand[0].local == d->local_best;
            chart_bar(f, 2, d->local_best, named ? d->cand[0].policy : "", y);
            y += CHART_BAR_H + 2;
        }
        fputs("</g>\n", f);
        y += 12;
    }
    fputs("</svg>\n", f);
}

static void html_cell(FILE *f, const char *s)
{
    fputs("<td>", f);
    html_text(f, s);
    fputs("</td>", f);
}

void advise_html(FILE *f, const char *path, const struct advice_set *s)
{
    const struct npl_profile *p = s->p;
    fputs("<section class=\"npl-advice\">\n<h2>Per-array advice: ", f);
    html_text(f, path);
    fputs("</h2>\n<table border=1 cellpadding=3>\n<tr><th>program</th>", f);
    html_cell(f, p->program_path && *p->program_path ? p->program_path : "?");
    fprintf(f, "</tr>\n<tr><th>threads</th><td>%d</td></tr>\n<tr><th>nodes</th><td>", p->threads);
    for (int k = 0; k < p->nnodes; k++)
        fprintf(f, "%s%d", k ? ", " : "", p->nodes[k]);
    fprintf(f, "</td></tr>\n<tr><th>backend</th><td>%s</td></tr>\n<tr><th>samples</th>"
               "<td>%llu</td></tr>\n</table>\n",
            p->backend == NPL_BACKEND_PERF ? "perf" : "protection faults",
            (unsigned long long)p->samples);
    fputs("<h3>Predicted local-access fraction</h3>\n", f);
    advise_chart(f, s);
    fputs("<h3>Arrays</h3>\n<table border=1 cellpadding=3>\n<tr><th>site</th><th>size</th>"
          "<th>pattern</th><th>policy</th><th>local</th><th>first touch</th><th>best</th>"
          "<th>confidence</th><th>reason</th></tr>\n", f);
    for (uint32_t i = 0; i < p->narrays; i++) {
        const struct npl_prof_advice *d = &s->adv[i];
        char label[4200], size[32], pol[400], l1[16], l2[16], l3[16], conf[16];
        npl__site_label(&p->arrays[i].site, label, sizeof label);
        size_text(p->arrays[i].bytes, size, sizeof size);
        policy_text(d, pol, sizeof pol);
        frac_text(d->local_policy, l1, sizeof l1);
        frac_text(d->local_first_touch, l2, sizeof l2);
        frac_text(d->local_best, l3, sizeof l3);
        snprintf(conf, sizeof conf, "%.2f", d->confidence);
        fputs("<tr>", f);
        html_cell(f, label);
        html_cell(f, size);
        html_cell(f, npl__pattern_name(d->pattern));
        html_cell(f, pol);
        html_cell(f, l1);
        html_cell(f, l2);
        html_cell(f, l3);
        html_cell(f, conf);
        fputs("<td>", f);
        html_text(f, s->stored[i] ? "(stored) " : "");
        html_text(f, d->reason);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</section>\n", f);
}

/* advise --html OUT: the section as one page */
static int write_html(const char *out, const char *path, const struct advice_set *s)
{
    FILE *f = cli_open_out("advise", out);
    if (!f)
        return EXIT_FAILED;
    html_page_begin(f, "numaplace advise");
    advise_html(f, path, s);
    html_page_end(f);
    return cli_close_out("advise", f, out, 0);
}

/* advise FILE FILE...: several profiles of one program, merged by site */
static int advise_files(char **paths, int n, int verbose)
{
    struct advice_set *sets = calloc((size_t)n, sizeof *sets);
    int rc = sets ? 0 : EXIT_FAILED, loaded = 0;
    for (; rc == 0 && loaded < n; loaded++)
        if ((rc = advise_load("advise", paths[loaded], &sets[loaded])))
            break;
    if (rc == 0)
        rc = several(paths, n, sets, verbose);
    for (int k = 0; sets && k < loaded; k++)
        advise_free(&sets[k]);
    free(sets);
    return rc;
}

/* advise --json: "measured" (the sampled accesses on the accessing thread's node, not, unknown;
 * the local fraction of the known ones), or null where the profile has none */
static void measured_json(cJSON *o, int has, const uint64_t m[3])
{
    if (!has) {
        json_add(o, "measured", cJSON_CreateNull());
        return;
    }
    cJSON *j = json_add_obj(o, "measured");
    uint64_t l = m[NPL_MEASURED_LOCAL], r = m[NPL_MEASURED_REMOTE];
    json_add_num(j, "local", (double)l);
    json_add_num(j, "remote", (double)r);
    json_add_num(j, "unknown", (double)m[NPL_MEASURED_UNKNOWN]);
    json_add_num_or_null(j, "local_fraction", l + r ? (double)l / (double)(l + r) : -1);
}

/* advise --json: one array's object */
static void array_json(cJSON *arr, const struct npl_prof_array *a,
                       const struct npl_prof_advice *d, int stored)
{
        char label[4200];
    npl__site_label(&a->site, label, sizeof label);
    cJSON *o = json_add_obj(arr, NULL);
    json_add(o, "site", site_json(&a->site));
    json_add_str(o, "label", label);
    json_add_num(o, "bytes", (double)a->bytes);
    json_add_str(o, "pattern", npl__pattern_name(d->pattern));
    json_add_str(o, "policy", d->policy);
    cJSON *nt = json_add_arr(o, "next_touch_phases");
    for (uint32_t k = 0; k < d->nnext_touch; k++)
        json_add_num(nt, NULL, d->next_touch[k]);
    json_add_bool(o, "replicate", d->replicate);
    json_add_num(o, "local_policy", d->local_policy);
    json_add_num_or_null(o, "local_first_touch", d->local_first_touch);
    json_add_num(o, "local_best", d->local_best);
    json_add_num_or_null(o, "local_err", d->local_err);
    measured_json(o, a->has_measured, a->measured);
    json_add_num(o, "confidence", d->confidence);
    json_add_num(o, "samples", (double)d->samples);
    if (d->period_pages)
        json_add_num(o, "period_pages", (double)d->period_pages);
    else
        json_add(o, "period_pages", cJSON_CreateNull());
    if (d->block_threads)
        json_add_num(o, "block_threads", d->block_threads);
    else
        json_add(o, "block_threads", cJSON_CreateNull());
    if (d->chunk_nodes)
        json_add_ints(o, "chunk_nodes", d->chunk_nodes, (int)d->nchunk_nodes);
    else
        json_add(o, "chunk_nodes", cJSON_CreateNull());
    json_add_str(o, "reason", d->reason);
    json_add_bool(o, "stored", stored);
    cJSON *cands = json_add_arr(o, "candidates");
    for (int k = 0; !stored && k < d->ncand; k++) {
        cJSON *co = json_add_obj(cands, NULL);
        json_add_str(co, "policy", d->cand[k].policy);
        json_add_num(co, "local", d->cand[k].local);
        json_add_bool(co, "scalable", d->cand[k].scalable);
    }
}

/* advise --json: the whole profile's object on stdout */
static int advise_json(const char *path, const struct advice_set *s)
{
    const struct npl_profile *p = s->p;
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-advise/1");
    json_add_str(root, "profile", path);
    cJSON *prog = json_add_obj(root, "program");
    json_add_str(prog, "path", p->program_path);
    json_add_str(prog, "build_id", p->program_build_id);
    json_add_num(root, "threads", p->threads);
    json_add_ints(root, "nodes", p->nodes, p->nnodes);
    json_add_str(root, "backend", p->backend == NPL_BACKEND_PERF ? "perf" : "fault");
    measured_json(root, p->has_measured, p->measured);
    cJSON *arr = json_add_arr(root, "arrays");
    for (uint32_t i = 0; i < p->narrays; i++)
        array_json(arr, &p->arrays[i], &s->adv[i], s->stored[i]);
    int rc = json_write(stdout, root) < 0 ? EXIT_FAILED : 0;
    json_free(root);
    return rc;
}

int cmd_advise(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"write", required_argument, NULL, 'w'},
                                         {"html", required_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, verbose = 0, c;
    const char *write_to = NULL, *html_to = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = 1; break;
        case 'v': verbose = 1; break;
        case 'w': write_to = optarg; break;
        case 'H': html_to = optarg; break;
        case 'h': advise_usage(stdout); return 0;
        default: return cli_bad_option("advise", c, argv);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "numaplace advise: no profile given (try --help)\n");
        return EXIT_USAGE;
    }
    if (optind < argc - 1 && (as_json || write_to || html_to)) {
        fprintf(stderr, "numaplace advise: --json, --write and --html take one profile at a time "
                        "(several are merged into the table only)\n");
        return EXIT_USAGE;
    }
    if (optind < argc - 1) /* several profiles of one program: merged by site */
        return advise_files(argv + optind, argc - optind, verbose);
    const char *path = argv[optind];
    struct advice_set s;
    int rc = advise_load("advise", path, &s);
    if (rc)
        return rc;
    if (as_json) {
        rc = advise_json(path, &s);
    } else {
        advise_table(stdout, path, s.p, s.adv, s.stored, verbose);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = EXIT_FAILED;
    }
    if (rc == 0 && html_to) /* before --write takes the new advice's lists */
        rc = write_html(html_to, path, &s);
    if (rc == 0 && write_to && write_profile(s.p, s.adv, s.stored, write_to) < 0)
        rc = EXIT_FAILED;
    advise_free(&s);
    return rc;
}
