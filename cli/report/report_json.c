/* SPDX-License-Identifier: BSD-3-Clause */
/* report_json.c - DIR/results.json of numaplace report (docs/schema/report.schema.json): host
 * metadata, every repetition of every figure ({median, min, max, reps}), units in key names,
 * node ids as "os_id" values in arrays, booleans as true/false. */
#define _GNU_SOURCE
#include "common.h"
#include "json.h"
#include "report_parts.h"

#include <math.h>
#include <string.h>

static cJSON *add_stat(cJSON *parent, const char *key, const struct stat3 *s)
{
    if (!s->n)
        return json_add(parent, key, cJSON_CreateNull());
    cJSON *o = json_add_obj(parent, key);
    json_add_num(o, "median", s->med);
    json_add_num(o, "min", s->min);
    json_add_num(o, "max", s->max);
    cJSON *r = json_add_arr(o, "reps");
    for (int i = 0; i < s->n; i++)
        json_add_num(r, NULL, s->rep[i]);
    return o;
}

static void add_host(cJSON *root, const struct host_env *h, const struct verdict *v)
{
    cJSON *o = json_add_obj(root, "host");
    json_add_str(o, "hostname", h->hostname);
    json_add_str(o, "cpu_model", h->cpu_model);
    json_add_str(o, "kernel", h->kernel);
    json_add_str(o, "thp_mode", h->thp);
    json_add_num(o, "page_size_bytes", (double)h->page_size);
    json_add_str(o, "compiler", h->compiler);
    json_add_str(o, "compiler_flags", h->cflags);
    json_add_num(o, "openmp_threads", h->omp_threads);
    json_add_bool(o, "hypervisor_flag", h->cpuinfo_hypervisor);
    json_add_str(o, "hypervisor_signature", h->hypervisor);
    json_add_bool(o, "emulated", h->emulated);
    cJSON *t = json_add_obj(root, "trust");
    json_add_str(t, "timings", v->trust);
    cJSON *w = json_add_arr(t, "warnings");
    for (int i = 0; i < v->nwarn; i++)
        json_add_str(w, NULL, v->warn[i]);
    json_add_num_or_null(t, "spread_median_fraction", v->spread_median);
    json_add_num_or_null(t, "spread_max_fraction", v->spread_max);
}

static void add_machine(cJSON *root, const struct measure_result *m)
{
    const npl_topo *t = npl_topo_self();
    cJSON *mach = json_add_obj(root, "machine");
    json_add_num(mach, "node_count", m->n);
    json_add_num(mach, "nnodes", m->n); /* legacy name, kept for existing parsers */
    json_add_num(mach, "cpus_allowed", npl_topo_cpu_count(t));
    json_add_str(mach, "note", m->note);
    cJSON *nodes = json_add_arr(mach, "nodes");
    for (int i = 0; i < m->n; i++) {
        struct npl_node_info info = {0};
        npl_topo_node_info(t, m->nodes[i], &info);
        cJSON *o = json_add_obj(nodes, NULL);
        json_add_num(o, "os_id", m->nodes[i]);
        json_add_num(o, "memory_bytes", (double)info.memory_bytes);
        json_add_ints(o, "cpus", m->cpus[i], m->ncpus[i]);
    }
    cJSON *dist = json_add_arr(mach, "distances");
    for (int i = 0; i < m->n; i++) {
        cJSON *r = json_add_arr(dist, NULL);
        for (int j = 0; j < m->n; j++)
            json_add_num(r, NULL, npl_topo_distance(t, m->nodes[i], m->nodes[j]));
    }
}

static void add_matrix(cJSON *fac, const char *key, const struct measure_result *m,
                       const struct stat3 (*s)[MEASURE_MAX_NODES], int ratio)
{
    cJSON *mat = json_add_arr(fac, key);
    for (int i = 0; i < m->n; i++) {
        cJSON *r = json_add_arr(mat, NULL);
        for (int j = 0; j < m->n; j++)
            if (s)
                add_stat(r, NULL, &s[i][j]);
            else
                json_add_num_or_null(r, NULL, measure_factor(m, ratio, i, j));
    }
}

void report_json_factors(cJSON *root, const struct measure_result *m)
{
    cJSON *fac = json_add_obj(root, "factors");
    json_add_ints(fac, "nodes", m->nodes, m->n);
    json_add_num(fac, "latency_buffer_bytes", (double)m->lat_bytes);
    json_add_num(fac, "triad_array_bytes", (double)m->bw_bytes);
    json_add_num(fac, "llc_bytes", (double)m->llc_bytes);
    cJSON *cache = json_add_arr(fac, "cache_bytes");
    for (int l = 1; l <= 3; l++)
        json_add_num(cache, NULL, (double)m->cache_bytes[l]);
    json_add_str(fac, "huge_page_kind", m->huge_kind);
    json_add_num(fac, "huge_page_fraction", m->huge_fraction);
    add_matrix(fac, "latency_ns", m, m->lat, 0);
    add_matrix(fac, "latency_4k_ns", m, m->lat4k, 0);
    add_matrix(fac, "bandwidth_mb_per_s", m, m->bw, 0);
    add_matrix(fac, "numa_factor", m, NULL, 0);
    add_matrix(fac, "bandwidth_ratio", m, NULL, 1);
    cJSON *a = json_add_arr(fac, "latency_by_size");
    for (int k = 0; k < m->nsizes; k++) {
        cJSON *o = json_add_obj(a, NULL);
        json_add_num(o, "bytes", (double)m->sizes[k]);
        add_stat(o, "ns", &m->lat_by_size[k]);
    }
    json_add_num(fac, "bandwidth_node", m->bw_node);
    a = json_add_arr(fac, "bandwidth_by_threads");
    for (int k = 0; k < m->nthreads; k++) {
        cJSON *o = json_add_obj(a, NULL);
        json_add_num(o, "threads", k + 1);
        add_stat(o, "mb_per_s", &m->bw_by_threads[k]);
    }
    a = json_add_arr(fac, "loaded_latency");
    for (int k = 0; k < m->nloaded; k++) {
        cJSON *o = json_add_obj(a, NULL);
        json_add_num(o, "streaming_cpus", k);
        add_stat(o, "ns", &m->loaded_lat[k]);
        add_stat(o, "streamed_mb_per_s", &m->loaded_bw[k]);
    }
    static const char *mix[] = {"read-only", "1:1", "2:1"};
    a = json_add_arr(fac, "mixes");
    for (int k = 0; k < NMIX; k++) {
        cJSON *o = json_add_obj(a, NULL);
        json_add_str(o, "read_write", mix[k]);
        add_stat(o, "mb_per_s", &m->mix[k]);
    }
    json_add_num(fac, "peak_mb_per_s", m->mix[m->peak_mix].med);
    json_add_str(fac, "peak_read_write", mix[m->peak_mix]);
    if (m->migrate.n) /* two nodes or more */
        add_stat(fac, "migrate_pages_per_s", &m->migrate);
}

static void add_charac(cJSON *root, const struct measure_result *m, const struct charac *c)
{
    cJSON *ch = json_add_obj(root, "characterization");
    json_add_num(ch, "threads", c->nthreads);
    json_add_num(ch, "array_bytes", (double)(c->n * sizeof(double)));
    json_add_num(ch, "reps", c->reps);
    cJSON *pols = json_add_arr(ch, "policies");
    for (int p = 0; p < NPOL; p++)
        json_add_str(pols, NULL, c->polstr[p]);
    cJSON *loc = json_add_arr(ch, "locality");
    for (int p = 0; p < NPOL; p++) {
        const struct locality *l = &c->loc[p];
        cJSON *e = json_add_obj(loc, NULL);
        json_add_str(e, "policy", report_policies[p]);
        cJSON *pn = json_add_arr(e, "nodes");
        for (int k = 0; k < m->n; k++) {
            cJSON *o = json_add_obj(pn, NULL);
            json_add_num(o, "os_id", m->nodes[k]);
            json_add_num(o, "pages", l->ok ? (double)l->pages[k] : 0);
        }
        json_add_num_or_null(e, "remote_fraction_static", l->ok ? l->remote_static : -1);
        json_add_num_or_null(e, "remote_fraction_shared", l->ok ? l->remote_shared : -1);
    }
    cJSON *res = json_add_arr(ch, "results");
    for (int p = 0; p < NPOL; p++)
        for (int k = 0; k < NPAT; k++) {
            int o = k / (NACC * NSCH), x = k / NSCH % NACC, s = k % NSCH;
            const struct stat3 *st = &c->sec[p][o][x][s];
            cJSON *e = json_add_obj(res, NULL);
            json_add_str(e, "op", report_ops[o]);
            json_add_str(e, "access", report_accesses[x]);
            json_add_str(e, "schedule", report_scheds[s]);
            json_add_str(e, "policy", report_policies[p]);
            add_stat(e, "seconds", st);
            double bytes = (double)(report_kernel_elements(x, c->n) * sizeof(double)) *
                           (o == 2 ? 2 : 1);
            json_add_num_or_null(e, "mb_per_s", st->n ? bytes / st->med / 1e6 : -1);
        }
}

static void add_verdict(cJSON *root, const struct measure_result *m, const struct verdict *v)
{
    cJSON *o = json_add_obj(root, "verdict");
    json_add_num_or_null(o, "worst_latency_factor", v->worst_lat_factor);
    json_add_num_or_null(o, "mean_latency_factor", v->mean_lat_factor);
    if (isnan(v->remote_bw_penalty)) /* one node */
        json_add(o, "remote_bandwidth_penalty_fraction", cJSON_CreateNull());
    else
        json_add_num(o, "remote_bandwidth_penalty_fraction", v->remote_bw_penalty);
    json_add_num(o, "noise_threshold_fraction", v->tolerance);
    json_add_str(o, "rule", report_rule_text(m->n));
    cJSON *recs = json_add_arr(root, "recommendations");
    for (int k = 0; k < NPAT; k++) {
        int op = k / (NACC * NSCH), x = k / NSCH % NACC, s = k % NSCH;
        const struct rec_result *r = &v->rec[op][x][s];
        cJSON *j = json_add_obj(recs, NULL);
        json_add_str(j, "op", report_ops[op]);
        json_add_str(j, "access", report_accesses[x]);
        json_add_str(j, "schedule", report_scheds[s]);
        json_add_str(j, "policy", r->policy); /* NULL: null */
        json_add_bool(j, "measurable", r->measurable);
        json_add_str(j, "basis", v->emulated ? "none: emulated timings" : "timings");
        json_add_num_or_null(j, "margin_fraction", r->margin);
        json_add_str(j, "compared_with", r->runner_up);
    }
}

int report_write_json(const char *path, int level, const struct measure_result *m,
                      const struct charac *c, const struct host_env *h, const struct verdict *v)
{
    static const char *levels[] = {"quick", "default", "full"};
    cJSON *root = json_object();
    json_add_str(root, "schema", "numaplace-report/2");
    json_add_str(root, "numaplace_version", npl_version());
    json_add_str(root, "generated_utc", h->started_utc);
    json_add_str(root, "level", levels[level]);
    json_add_bool(root, "quick", level == 0);
    json_add_num(root, "reps", c->reps);
    cJSON *took = json_add_obj(root, "run_seconds");
    json_add_num(took, "measurements", h->measure_s);
    json_add_num(took, "characterization", h->charac_s);
    add_host(root, h, v);
    add_machine(root, m);
    report_json_factors(root, m);
    add_charac(root, m, c);
    add_verdict(root, m, v);
    FILE *f = cli_open_out("report", path);
    if (!f) {
        json_free(root);
        return EXIT_FAILED;
    }
    int bad = json_write(f, root) < 0;
    json_free(root);
    return cli_close_out("report", f, path, bad);
}
