/* advise.c - numaplace advise FILE [--json] [--verbose]: one row per array of a measured access
 * profile (docs/AUTO.md): its site, size, pattern, the advised policy, the predicted local fraction
 * under it and under first touch, and the reason. Arrays whose "advice" the profile already holds
 * are shown as stored; the others are classified here (src/profile/classify.c). A bad profile is
 * one line on stderr and exit status 2. */
#include "cli.h"
#include "advise.h"
#include "common.h"
#include "json.h"
#include "profile/profile.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void advise_usage(FILE *f)
{
    fprintf(f, "usage: numaplace advise FILE [--json] [--verbose] [--write OUT]\n"
               "  one row per array of the profile FILE (numaplace profile writes it): the site,\n"
               "  size, access pattern, the advised policy, the predicted local fraction under it\n"
               "  and under first touch, and the reason; advice stored in FILE is shown as it is\n"
               "  --json      the same as one JSON object (docs/schema/advise.schema.json)\n"
               "  -v, --verbose  also every placement evaluated, with its predicted local fraction\n"
               "  --write OUT the profile again with every array's advice stored in it (OUT may be\n"
               "              FILE; run --profile then applies it without classifying again)\n"
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

/* The profile with the new advice stored (a temporary file renamed over OUT). The profile keeps
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
    char *text = npl__profile_format(p, &len), tmp[4200];
    if (!text) {
        fprintf(stderr, "numaplace advise: out of memory\n");
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(text, 1, len, f) == len;
    ok = f && fclose(f) == 0 && ok;
    if (ok && rename(tmp, out) == 0) {
        free(text);
        return 0;
    }
    fprintf(stderr, "numaplace advise: cannot write %s: %s\n", out, strerror(errno));
    if (f)
        unlink(tmp);
    free(text);
    return -1;
}

/* the advice table (advise.h) */
void advise_table(FILE *f, const char *path, const struct npl_profile *p,
                  const struct npl_prof_advice *adv, const int *stored, int verbose)
{
    fprintf(f, "profile %s: %s, %d thread%s on %d node%s, %u array%s, %llu samples (%s)\n", path,
            p->program_path && *p->program_path ? p->program_path : "?", p->threads,
            p->threads > 1 ? "s" : "", p->nnodes, p->nnodes > 1 ? "s" : "", p->narrays,
            p->narrays != 1 ? "s" : "", (unsigned long long)p->samples,
            p->backend == NPL_BACKEND_PERF ? "perf" : "protection faults");
    fprintf(f, "%-24s %9s  %-18s %-34s %5s %5s %4s  %s\n", "site", "size", "pattern", "policy",
            "local", "ft", "conf", "reason");
    for (uint32_t i = 0; i < p->narrays; i++) {
        const struct npl_prof_advice *d = adv ? &adv[i] : &p->arrays[i].advice;
        char label[4200], size[32], pol[400], l1[16], l2[16];
        npl__site_label(&p->arrays[i].site, label, sizeof label);
        size_text(p->arrays[i].bytes, size, sizeof size);
        policy_text(d, pol, sizeof pol);
        frac_text(d->local_policy, l1, sizeof l1);
        frac_text(d->local_first_touch, l2, sizeof l2);
        fprintf(f, "%-24s %9s  %-18s %-34s %5s %5s %4.2f  %s%s\n", label, size,
                npl__pattern_name(d->pattern), pol, l1, l2, d->confidence,
                (stored && stored[i]) ? "(stored) " : "", d->reason);
        for (int k = 0; verbose && !(stored && stored[i]) && k < d->ncand; k++)
            fprintf(f, "    %-40s %.3f%s\n", d->cand[k].policy, d->cand[k].local,
                    d->cand[k].scalable ? "" : "  (this input size only)");
    }
}

int cmd_advise(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"write", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, verbose = 0, c;
    const char *write_to = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = 1; break;
        case 'v': verbose = 1; break;
        case 'w': write_to = optarg; break;
        case 'h': advise_usage(stdout); return 0;
        default: return cli_bad_option("advise", c, argv);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "numaplace advise: %s (try --help)\n",
                optind >= argc ? "no profile given" : "one profile at a time");
        return EXIT_USAGE;
    }
    const char *path = argv[optind];
    char err[1024];
    struct npl_profile *p = NULL;
    if (npl__profile_load(path, &p, err, sizeof err) < 0) {
        for (char *q = err; *q; q++) /* one line */
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        fprintf(stderr, "numaplace advise: %s\n", err);
        return EXIT_USAGE;
    }
    npl_topo *topo = NULL;
    struct npl_prof_ctx *ctx = NULL;
    if (npl__profile_topo(p, &topo, err, sizeof err) < 0 ||
        npl__classify_ctx(&ctx, topo, p->threads, err, sizeof err) < 0) {
        fprintf(stderr, "numaplace advise: %s: %s\n", path, err);
        npl_topo_destroy(topo);
        npl__profile_free(p);
        return EXIT_FAILED;
    }
    struct npl_prof_advice *adv = calloc(p->narrays ? p->narrays : 1, sizeof *adv);
    int *stored = calloc(p->narrays ? p->narrays : 1, sizeof *stored), rc = 0;
    if (!adv || !stored) {
        fprintf(stderr, "numaplace advise: out of memory\n");
        rc = EXIT_FAILED;
    }
    for (uint32_t i = 0; rc == 0 && i < p->narrays; i++) {
        struct npl_prof_array *a = &p->arrays[i];
        if (a->has_advice) {
            adv[i] = a->advice; /* shown as stored; owned by the profile */
            stored[i] = 1;
            continue;
        }
        struct npl_prof_input in;
        npl__profile_input(p, a, &in);
        if (npl__classify(ctx, &in, &adv[i], err, sizeof err) < 0) {
            fprintf(stderr, "numaplace advise: %s: array %u: %s\n", path, i, err);
            rc = EXIT_FAILED;
        }
    }
    if (rc == 0 && as_json) {
        cJSON *root = json_object();
        json_add_str(root, "schema", "numaplace-advise/1");
        json_add_str(root, "profile", path);
        cJSON *prog = json_add_obj(root, "program");
        json_add_str(prog, "path", p->program_path);
        json_add_str(prog, "build_id", p->program_build_id);
        json_add_num(root, "threads", p->threads);
        json_add_ints(root, "nodes", p->nodes, p->nnodes);
        json_add_str(root, "backend", p->backend == NPL_BACKEND_PERF ? "perf" : "fault");
        cJSON *arr = json_add_arr(root, "arrays");
        for (uint32_t i = 0; i < p->narrays; i++) {
            const struct npl_prof_array *a = &p->arrays[i];
            const struct npl_prof_advice *d = &adv[i];
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
            json_add_bool(o, "stored", stored[i]);
            cJSON *cands = json_add_arr(o, "candidates");
            for (int k = 0; !stored[i] && k < d->ncand; k++) {
                cJSON *co = json_add_obj(cands, NULL);
                json_add_str(co, "policy", d->cand[k].policy);
                json_add_num(co, "local", d->cand[k].local);
                json_add_bool(co, "scalable", d->cand[k].scalable);
            }
        }
        if (json_write(stdout, root) < 0)
            rc = EXIT_FAILED;
        json_free(root);
    } else if (rc == 0) {
        advise_table(stdout, path, p, adv, stored, verbose);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = EXIT_FAILED;
    }
    if (rc == 0 && write_to && write_profile(p, adv, stored, write_to) < 0)
        rc = EXIT_FAILED;
    for (uint32_t i = 0; adv && i < p->narrays; i++)
        if (!stored[i])
            npl__advice_clear(&adv[i]);
    free(adv);
    free(stored);
    npl__classify_ctx_free(ctx);
    npl_topo_destroy(topo);
    npl__profile_free(p);
    return rc;
}
