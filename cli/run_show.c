/* SPDX-License-Identifier: BSD-3-Clause */
/* run_show.c - what `numaplace run` tells before exec (run_show.h). */
#define _GNU_SOURCE
#include "run_show.h"
#include "json.h"
#include "omp_binding.h"
#include "preload/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OMP_NUM_THREADS's first level, else fallback */
static int omp_threads(int fallback)
{
    const char *e = getenv("OMP_NUM_THREADS");
    char *end;
    long v = e ? strtol(e, &end, 10) : 0;
    return e && end != e && (*end == 0 || *end == ',') && v > 0 && v <= 1 << 20 ? (int)v
                                                                                  : fallback;
}

/* the word in brackets of /sys/kernel/mm/transparent_hugepage/enabled, "" if none */
static void thp_mode(char *out, size_t size)
{
    char line[256] = "", path[4096];
    const char *root = getenv("NUMAPLACE_FSROOT"); /* a captured tree, as the library reads */
    snprintf(path, sizeof path, "%s/sys/kernel/mm/transparent_hugepage/enabled", root ? root : "");
    FILE *f = fopen(path, "re");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
    snprintf(out, size, "%.*s", a && b ? (int)(b - a - 1) : 0, a ? a + 1 : "");
}

/* The CPUs the threads will use: the pinned ones, else those of the program's own OpenMP
 * binding, else the allowed ones. */
struct cpu_use {
    int threads, cpus;
    int threads_set;          /* OMP_NUM_THREADS gave the count, not the runtimes' default */
    char binding[512];        /* the program's own binding variables, "" if none (or --pin) */
};

static void count_use(const struct run_shown *r, struct cpu_use *u)
{
    int allowed = r->allowed ? hwloc_bitmap_weight(r->allowed) : npl_topo_cpu_count(r->topo);
    if (allowed < 1)
        allowed = 1;
    struct omp_binding b;
    omp_binding_from_env(&b);
    u->binding[0] = 0;
    u->cpus = allowed;
    if (r->pin) {
        u->cpus = r->norder;
    } else if (omp_binding_describe(&b, u->binding, sizeof u->binding) && r->allowed) {
        hwloc_bitmap_t used = hwloc_bitmap_alloc();
        int n = used ? omp_binding_cpus(&b, r->allowed, NULL, used) : -1;
        u->cpus = n > 0 ? n : allowed;
        hwloc_bitmap_free(used);
    }
    /* the runtimes start one thread per allowed CPU by default, wherever they bind them */
    u->threads = omp_threads(-1);
    u->threads_set = u->threads > 0;
    if (!u->threads_set)
        u->threads = r->pin ? r->norder : allowed;
}

/* The warning every run gets when there are more threads than CPUs to give them. */
static int oversubscribed(const struct run_shown *r, const struct cpu_use *u, char *msg,
                          size_t size)
{
    if (u->threads <= u->cpus)
        return 0;
    const char *count = u->threads_set ? "OMP_NUM_THREADS"
                                       : "the OpenMP default: one per allowed CPU";
    if (r->pin)
        snprintf(msg, size, "%d threads (%s) on %d pinned CPU(s): oversubscribed, thread n shares "
                 "the CPU of thread n mod the CPU count", u->threads, count, u->cpus);
    else if (*u->binding)
        snprintf(msg, size, "%d threads (%s) on %d CPU(s) of the program's own binding (%s): "
                 "oversubscribed, threads share CPUs and times will vary", u->threads, count,
                 u->cpus, u->binding);
    else
        snprintf(msg, size, "%d threads (%s) on %d allowed CPU(s): oversubscribed, threads share "
                 "CPUs and times will vary", u->threads, count, u->cpus);
    return 1;
}

/* Placed arrays lose THP unless --huge thp: say so when the system would have given them. */
static const char *huge_note(const struct run_shown *r, const char *thp)
{
    int placing = r->preloaded && (*r->policy || r->next_touch);
    if (r->huge)
        return !strcmp(r->huge, "thp") ? "large allocations keep transparent huge pages (--huge "
                                         "thp): placement is in 2 MiB units"
                                       : "large allocations on 2 MiB hugetlb pages (--huge 2M) "
                                         "from each node's pool; base pages when a pool is empty";
    if (placing && !strcmp(thp, "always"))
        return "placed allocations use 4 KiB pages: page-exact placement turns transparent huge "
               "pages off on them, although this system's THP mode is always; add --huge thp "
               "to keep 2 MiB pages (placement then in 2 MiB units)";
    return NULL;
}

/* A static program: the interposer cannot reach it; say what still applies (nothing to say when
 * nothing was asked). */
static int static_note(const struct run_shown *r, char *msg, size_t size)
{
    if (r->dynamic || (!*r->policy && !r->pin && !r->threshold && !r->first))
        return 0;
    size_t off = (size_t)snprintf(msg, size, "%s is statically linked: the interposer cannot "
                                  "reach it (its dynamically linked children get it)", r->prog);
    if (*r->policy && off < size)
        off += (size_t)snprintf(msg + off, size - off, r->kernel ? "; %s applies as the "
                                "process-wide kernel policy (every allocation, small ones too)"
                                : "; %s is not applied", r->policy);
    if (r->pin && off < size)
        off += (size_t)snprintf(msg + off, size - off, "; --pin places only its OpenMP threads "
                                "(OMP_PLACES), not its other threads");
    if ((r->threshold || r->first) && off < size)
        snprintf(msg + off, size - off, "; --threshold and --first do not apply");
    return 1;
}

static void show_text(const struct run_shown *r, const struct cpu_use *u, const char *thp,
                      const char *warn, const char *note)
{
    const char *p = "numaplace run:";
    fprintf(stderr, "%s program   %s (%s)\n", p, r->prog,
            r->dynamic ? "dynamically linked" : "statically linked");
    if (*r->policy)
        fprintf(stderr, "%s policy    %s: %s%s%s%s\n", p, r->policy,
                r->preloaded ? "allocations of at least " : "",
                r->preloaded ? (r->threshold ? r->threshold : "1M") : "",
                r->preloaded ? " bytes, and static data, through the interposer" : "",
                r->kernel ? "; also the process-wide kernel policy" : "");
    else
        fprintf(stderr, "%s policy    none (first touch)\n", p);
    int threads = u->threads;
    if (!r->pin && *u->binding) {
        fprintf(stderr, "%s pin       none: the program's own OpenMP binding is kept (%s): its "
                        "threads on %d CPU(s)\n", p, u->binding, u->cpus);
    } else if (!r->pin) {
        fprintf(stderr, "%s pin       none: the OS schedules the threads\n", p);
    } else {
        fprintf(stderr, "%s pin       %s (%s)\n", p, r->pin,
                r->dynamic ? "pthreads/libgomp: numaplace's trampoline; LLVM libomp: KMP_AFFINITY"
                           : "OpenMP threads: OMP_PLACES");
        fprintf(stderr, "%s +--------+--------+--------+\n", p);
        fprintf(stderr, "%s | thread |    CPU |   node |\n", p);
        fprintf(stderr, "%s +--------+--------+--------+\n", p);
        for (int t = 0; t < threads; t++) {
            int cpu = r->order[t % r->norder], node = npl_topo_cpu_node(r->topo, cpu);
            fprintf(stderr, "%s | %6d | %6d | %6d |\n", p, t, cpu, node);
        }
        fprintf(stderr, "%s +--------+--------+--------+\n", p);
    }
    const char *hnote = huge_note(r, thp);
    fprintf(stderr, "%s huge      %s (system THP mode: %s)\n", p,
            hnote ? hnote : "as the system gives them", *thp ? thp : "unknown");
    if (r->next_touch)
        fprintf(stderr, "%s next-touch pages follow the first thread that touches them at new "
                        "OpenMP parallel regions, on the program's own runtime; what was armed "
                        "and moved is reported at exit\n", p);
    if (r->cfg_pin_skipped)
        fprintf(stderr, "%s note      the config's [threads] pin = %s is not applied: the program "
                        "binds its threads itself (--pin would replace that)\n", p,
                r->cfg_pin_skipped);
    if (warn)
        fprintf(stderr, "%s warning   %s\n", p, warn);
    if (note)
        fprintf(stderr, "%s note      %s\n", p, note);
    if (r->preloaded)
        fprintf(stderr, "%s each large allocation is reported as the program makes it\n", p);
}

static void show_json(const struct run_shown *r, const struct cpu_use *u, const char *thp,
                      const char *warn, const char *note)
{
    cJSON *o = json_object();
    json_add_str(o, "command", "run");
    json_add_str(o, "program", r->prog);
    json_add_bool(o, "dynamic", r->dynamic);
    json_add_str(o, "policy", *r->policy ? r->policy : NULL);
    json_add_bool(o, "kernel_policy", r->kernel);
    uint64_t thr = NPL_ENV_THRESHOLD_DEFAULT;
    if (r->threshold && npl_env_parse_threshold(r->threshold, &thr) < 0)
        thr = 0;
    json_add_num_or_null(o, "threshold_bytes", r->preloaded && thr ? (double)thr : -1);
    json_add_str(o, "pin", r->pin);
    json_add_str(o, "program_binding", *u->binding ? u->binding : NULL);
    json_add_num_or_null(o, "program_binding_cpus", *u->binding ? u->cpus : -1);
    json_add_str(o, "config_pin_not_applied", r->cfg_pin_skipped);
    cJSON *arr = json_add_arr(o, "threads");
    for (int t = 0; r->pin && t < u->threads; t++) {
        cJSON *e = json_add_obj(arr, NULL);
        int cpu = r->order[t % r->norder];
        json_add_num(e, "thread", t);
        json_add_num(e, "cpu_os_id", cpu);
        json_add_num(e, "node_os_id", npl_topo_cpu_node(r->topo, cpu));
    }
    json_add_str(o, "huge_pages", r->huge);
    json_add_str(o, "thp_mode", *thp ? thp : NULL);
    json_add_str(o, "huge_pages_note", huge_note(r, thp));
    json_add_bool(o, "next_touch", r->next_touch);
    json_add_bool(o, "interposer", r->preloaded);
    cJSON *w = json_add_arr(o, "warnings");
    if (warn)
        json_add_str(w, NULL, warn);
    if (note)
        json_add_str(w, NULL, note);
    json_write(stderr, o);
    json_free(o);
}

void run_show(const struct run_shown *r)
{
    struct cpu_use u;
    count_use(r, &u);
    char warn[1024];
    int over = oversubscribed(r, &u, warn, sizeof warn);
    char note[1024];
    int static_prog = static_note(r, note, sizeof note);
    char thp[32];
    thp_mode(thp, sizeof thp);
    if (r->json)
        show_json(r, &u, thp, over ? warn : NULL, static_prog ? note : NULL);
    else if (r->verbose)
        show_text(r, &u, thp, over ? warn : NULL, static_prog ? note : NULL);
    if (!r->json && !r->verbose && over)
        fprintf(stderr, "numaplace run: warning: %s\n", warn);
    if (!r->json && !r->verbose && static_prog)
        fprintf(stderr, "numaplace run: note: %s\n", note);
}
