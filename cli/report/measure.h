/* SPDX-License-Identifier: BSD-3-Clause */
/* measure.h - the NUMA factor measurements shared by `numaplace measure` and `numaplace report`.
 * Every figure is repeated (reps) and kept as a stat3: each repetition, median, min and max. */
#ifndef NPL_CLI_MEASURE_H
#define NPL_CLI_MEASURE_H
#include "stats.h"

#include <stddef.h>
#include <stdio.h>

#define MEASURE_MAX_NODES 16
#define MEASURE_MAX_CPUS 256
#define MEASURE_MAX_SIZES 24
#define MEASURE_MAX_LOADED 16

/* bandwidth mixes, all cores of the home node, bytes counted as STREAM counts them */
enum { MIX_READ, MIX_COPY, MIX_TRIAD, NMIX }; /* read-only, 1:1 read:write, 2:1 read:write */
extern const char *const measure_mix_name[NMIX]; /* those words, for the text */

/* sizes: 0 quick (seconds, indicative), 1 default (minutes), 2 full (real runs) */
struct measure_opts {
    int level;
    int reps;
    void (*progress)(const char *step, double fraction); /* may be NULL */
};

struct measure_result {
    int n;                                      /* usable nodes */
    int nodes[MEASURE_MAX_NODES];               /* their OS ids */
    int ncpus[MEASURE_MAX_NODES], has_cpus[MEASURE_MAX_NODES];
    int cpus[MEASURE_MAX_NODES][MEASURE_MAX_CPUS];
    /* idle latency, ns per dependent load, [cpu node][mem node]: 2 MiB pages (as Intel MLC
     * measures) and 4 KiB pages (page walks included) */
    struct stat3 lat[MEASURE_MAX_NODES][MEASURE_MAX_NODES];
    struct stat3 lat4k[MEASURE_MAX_NODES][MEASURE_MAX_NODES];
    /* triad MB/s with every allowed core of the CPU node */
    struct stat3 bw[MEASURE_MAX_NODES][MEASURE_MAX_NODES];
    char huge_kind[48];  /* "hugetlb", "THP (madvise)" or "4 KiB (no huge page obtained)" */
    double huge_fraction; /* fraction of the latency buffer on 2 MiB pages */
    int nsizes;
    size_t sizes[MEASURE_MAX_SIZES];
    struct stat3 lat_by_size[MEASURE_MAX_SIZES];
    int bw_node, home, nthreads;
    struct stat3 bw_by_threads[MEASURE_MAX_CPUS];
    /* loaded latency: ns per load on the first CPU while k other CPUs of the node stream */
    int nloaded;
    struct stat3 loaded_lat[MEASURE_MAX_LOADED], loaded_bw[MEASURE_MAX_LOADED];
    struct stat3 mix[NMIX];                     /* MB/s, all cores of the home node */
    int peak_mix;     /* the mix of the highest median: the peak bandwidth, a median with its
                       * [min, max] like every headline figure */
    struct stat3 migrate;  /* pages/s npl_migrate_range moves between two nodes; n 0: none */
    size_t llc_bytes, lat_bytes, bw_bytes;
    int llc_level;                              /* 0: hwloc knew no cache, llc_bytes assumed */
    size_t cache_bytes[4];                      /* [1] L1d, [2] L2, [3] L3 from hwloc; 0 unknown */
    int level, reps;
    char note[160];
};

/* ---- measure_out.c ---- */
/* Check an output file before measuring (fail fast): not a symbolic link (refused), a regular
 * file if it exists (and a valid config, kept), its directory writable (test-written). 0, or
 * EXIT_FAILED with the message printed. who: "measure" or "report". */
int measure_check_out(const char *who, const char *path);
/* The config path the library reads (npl_config_load(NULL)) for measure to write: $NUMAPLACE_CONFIG,
 * else ~/.config/numaplace/config (directories created). HOME unset and no NUMAPLACE_CONFIG:
 * EXIT_FAILED with a message naming --out (also when HOME is too long a path). */
int measure_default_path(char *out, size_t size);
/* --reps N: 1..STATS_MAX_REPS, else -1 (message printed); who names the subcommand */
int measure_parse_reps(const char *who, const char *s);
int measure_write_config(const struct measure_result *r, const char *path);
void measure_print(FILE *f, const struct measure_result *r);
/* ---- measure.c ---- */
int measure_run(const struct measure_opts *o, int verbose, struct measure_result *r);
/* ratio remote/local (which 0: latency) or local/remote (1: bandwidth) of medians; -1 none */
double measure_factor(const struct measure_result *r, int which, int i, int j);
/* Pointer chase over `bytes` at buf (a permutation is written there once): ns per dependent
 * load for each of reps repetitions of `loads` loads, added to s. -1 if it could not run. */
int measure_chase(void *buf, size_t bytes, size_t loads, int reps, struct stat3 *s);
#endif
