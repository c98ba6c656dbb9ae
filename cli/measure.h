/* measure.h - the NUMA factor measurements shared by `numaplace measure` and `numaplace report`. */
#ifndef NPL_CLI_MEASURE_H
#define NPL_CLI_MEASURE_H
#include <stddef.h>
#include <stdio.h>

#define MEASURE_MAX_NODES 64
#define MEASURE_MAX_CPUS 256
#define MEASURE_MAX_SIZES 32

struct measure_result {
    int n;                                      /* usable nodes */
    int nodes[MEASURE_MAX_NODES];               /* their OS ids */
    int ncpus[MEASURE_MAX_NODES], has_cpus[MEASURE_MAX_NODES];
    int cpus[MEASURE_MAX_NODES][MEASURE_MAX_CPUS];
    double lat[MEASURE_MAX_NODES][MEASURE_MAX_NODES]; /* ns/load, [cpu node][mem node]; -1 none */
    double bw[MEASURE_MAX_NODES][MEASURE_MAX_NODES];  /* triad MB/s */
    int nsizes;
    size_t sizes[MEASURE_MAX_SIZES];
    double lat_by_size[MEASURE_MAX_SIZES];
    int bw_node, nthreads;
    double bw_by_threads[MEASURE_MAX_CPUS];
    size_t llc_bytes, lat_bytes, bw_bytes;
    int llc_level;                              /* 0: hwloc knew no cache, llc_bytes assumed */
    size_t cache_bytes[3];                      /* [1] L1d, [2] L2 from hwloc; 0 unknown */
    int quick;
    char note[160];
};

int measure_run(int quick, int verbose, struct measure_result *r);
/* Check an output file before measuring (fail fast): not a symbolic link (refused), a regular
 * file if it exists (and a valid config, kept), its directory writable (test-written). 0, or
 * EXIT_FAILED with the message printed. who: "measure" or "report". */
int measure_check_out(const char *who, const char *path);
/* The config path the library reads (npl_config_load(NULL)) for measure to write: $NUMAPLACE_CONFIG,
 * else ~/.config/numaplace/config (directories created). HOME unset and no NUMAPLACE_CONFIG:
 * EXIT_FAILED with a message naming --out. */
int measure_default_path(char *out, size_t size);
int measure_write_config(const struct measure_result *r, const char *path);
void measure_print(FILE *f, const struct measure_result *r);
double measure_chase(void *buf, size_t bytes, size_t loads);
#endif
