/* SPDX-License-Identifier: BSD-3-Clause */
/* report_parts.h - numaplace report's parts: the characterization run (report_charac.c), the host and
 * how far its timings can be trusted (report_env.c), the verdict (report_verdict.c), the JSON
 * and the tables (report_out.c) and the progress line (report_progress.c); the subcommand is
 * report.c. */
#ifndef NPL_CLI_REPORT_PARTS_H
#define NPL_CLI_REPORT_PARTS_H
#include "measure.h"
#include "recommend.h"
#include "stats.h"

#include <stdio.h>

#define NOPS 3
#define NACC 3
#define NSCH 2
#define NPOL 9
#define NPAT (NOPS * NACC * NSCH)

extern const char *const report_ops[NOPS], *const report_accesses[NACC],
    *const report_scheds[NSCH], *const report_policies[NPOL];

/* exact locality of one policy's array (not a timing: also right in an emulated guest) */
struct locality {
    int ok;
    size_t pages[MEASURE_MAX_NODES]; /* pages on measure_result.nodes[i] */
    double remote_static;            /* fraction of accesses to remote pages, regular access,
                                        static schedule (each thread its block) */
    double remote_shared;            /* the same when every thread touches every page (random) */
};

struct charac {
    int nthreads, reps;
    struct locality loc[NPOL];
    size_t n; /* doubles in the array */
    struct stat3 sec[NPOL][NOPS][NACC][NSCH];
    char polstr[NPOL][64];
    char placed_ok[NPOL];
};

/* The machine and the trust in its timings. */
struct host_env {
    char hostname[128], cpu_model[128], kernel[256], thp[32], hypervisor[32];
    char compiler[128], cflags[256], started_utc[32];
    long page_size;
    int cpuinfo_hypervisor; /* the "hypervisor" CPU flag */
    int emulated;           /* TCG (software CPU emulation): times are not measurements */
    int omp_threads;
    double measure_s, charac_s; /* how long the two parts took */
};

/* Warnings about the timings, the trust label and the measured spread. */
#define REPORT_MAX_WARN 8
struct verdict {
    const char *trust; /* "measured", "virtualized" or "emulated" */
    int nwarn;
    char warn[REPORT_MAX_WARN][200];
    double worst_lat_factor, mean_lat_factor; /* -1: one node */
    double remote_bw_penalty;                 /* mean of 1 - remote/local bandwidth; NaN: one node */
    int emulated;                             /* recommendations not judged */
    double spread_median, spread_max;         /* relative spreads of the characterization */
    double tolerance;                         /* the noise threshold the rule used */
    struct rec_result rec[NOPS][NACC][NSCH];
};

/* the progress line (report_progress.c): level as measure_opts.level */
void report_progress_start(int level, int force);
void report_progress(const char *step, double fraction);
void report_progress_done(void);
/* elements one pass of a kernel touches (access 2, random: a quarter of the array) */
size_t report_kernel_elements(int access, size_t n);
int report_characterize(int level, int reps, const struct measure_result *m, struct charac *c);
void report_host(struct host_env *h);
void report_verdict(const struct measure_result *m, const struct charac *c,
                    const struct host_env *h, struct verdict *v);
/* the rule in words, for the text, the HTML and the JSON */
const char *report_rule_text(int nnodes);
void report_print_verdict(FILE *f, const struct measure_result *m, const struct charac *c,
                          const struct verdict *v);
int report_write_json(const char *path, int level, const struct measure_result *m,
                      const struct charac *c, const struct host_env *h, const struct verdict *v);
/* index.html; advice (numaplace report --profile, read from profile_path) as a section between
 * REPORT_ADVICE_BEGIN and REPORT_ADVICE_END, or NULL */
struct advice_set;
#define REPORT_ADVICE_BEGIN "<!-- numaplace-advice -->"
#define REPORT_ADVICE_END "<!-- /numaplace-advice -->"
int report_write_html(const char *path, const struct measure_result *m, const struct charac *c,
                      const struct verdict *v, const struct advice_set *advice,
                      const char *profile_path);
/* "factors" (as in results.json) added to root: also numaplace measure --json */
struct cJSON;
void report_json_factors(struct cJSON *root, const struct measure_result *m);
#endif
