/* SPDX-License-Identifier: BSD-3-Clause */
/* measure_out.c - what becomes of a measurement: the tables, the [factors] of the platform
 * config, the output file's checks before measuring, and --reps (measure.h). Shared by
 * `numaplace measure` (measure_cmd.c) and `numaplace report` (report.c). */
#define _GNU_SOURCE
#include "common.h"
#include "measure.h"
#include "base/number.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void row(char *buf, size_t size, const struct stat3 *v, int n, const char *fmt)
{
    size_t off = 0;
    buf[0] = 0;
    for (int j = 0; j < n && off < size; j++)
        off += (size_t)snprintf(buf + off, size - off, fmt, j ? " " : "",
                                v[j].med < 0 ? 0 : v[j].med);
}

int measure_write_config(const struct measure_result *r, const char *path)
{
    npl_config *c = NULL;
    /* keep what an existing file says about machine, threads and policy */
    if (access(path, R_OK) == 0 && npl_config_load(&c, path) < 0) {
        fprintf(stderr, "numaplace measure: %s exists but is not a valid config (%s): not "
                        "overwritten\n", path, npl_last_error());
        return EXIT_FAILED;
    }
    if (!c && npl_config_new(&c) < 0)
        return cli_fail("config");
    char buf[16384];
    int *nodes = malloc(sizeof(int) * MEASURE_MAX_NODES);
    for (int i = 0; i < r->n; i++)
        nodes[i] = r->nodes[i];
    buf[0] = 0;
    for (int i = 0; i < r->n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", nodes[i]);
    free(nodes);
    int rc = npl_config_set(c, "factors", "nodes", buf);
    for (int i = 0; i < r->n && rc == 0; i++) {
        if (!r->has_cpus[i])
            continue;
        char key[64];
        snprintf(key, sizeof key, "latency_ns.%d", r->nodes[i]);
        row(buf, sizeof buf, r->lat[i], r->n, "%s%.2f");
        rc = npl_config_set(c, "factors", key, buf);
        snprintf(key, sizeof key, "bandwidth_mbs.%d", r->nodes[i]);
        row(buf, sizeof buf, r->bw[i], r->n, "%s%.0f");
        if (rc == 0)
            rc = npl_config_set(c, "factors", key, buf);
    }
    if (rc == 0 && r->migrate.n && r->migrate.med >= 1) { /* else an earlier one is kept */
        snprintf(buf, sizeof buf, "%.0f", r->migrate.med);
        rc = npl_config_set(c, "factors", "migrate_pages_s", buf);
    }
    time_t tt = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&tt));
    snprintf(buf, sizeof buf, "numaplace measure%s on %s, latency buffer %zu KiB, triad arrays "
             "%zu KiB", r->level == 0 ? " --quick" : r->level == 2 ? " --full" : "", when,
             r->lat_bytes >> 10, r->bw_bytes >> 10);
    if (rc == 0)
        rc = npl_config_set(c, "factors", "measured", buf);
    if (rc < 0) {
        npl_config_free(c);
        return cli_fail("config");
    }
    int need = npl_config_format(c, NULL, 0);
    char *text = malloc((size_t)need + 1);
    npl_config_format(c, text, (size_t)need + 1);
    npl_config_free(c);
    rc = cli_write_out("measure", path, text, strlen(text));
    free(text);
    return rc;
}

static void print_matrix(FILE *f, const struct measure_result *r, int w, const char *title)
{
    fprintf(f, "\n%s\n%8s", title, "");
    for (int j = 0; j < r->n; j++)
        fprintf(f, " %*s%-3d", w < 2 ? 17 : 7, "node", r->nodes[j]);
    fprintf(f, "\n");
    for (int i = 0; i < r->n; i++) {
        if (!r->has_cpus[i])
            continue;
        fprintf(f, "node%-4d", r->nodes[i]);
        for (int j = 0; j < r->n; j++) {
            const struct stat3 *s = w == 0 ? &r->lat[i][j] : &r->bw[i][j];
            if (w < 2)
                fprintf(f, w == 0 ? " %6.1f [%5.1f-%5.1f]" : " %6.0f [%5.0f-%5.0f]", s->med,
                        s->min, s->max);
            else
                fprintf(f, " %10.3f", measure_factor(r, w - 2, i, j));
        }
        fprintf(f, "\n");
    }
}

void measure_print(FILE *f, const struct measure_result *r)
{
    if (*r->note)
        fprintf(f, "note: %s\n", r->note);
    fprintf(f, "median [min-max] of %d repetitions; latency buffer %zu MiB on %s (%.0f%% on 2 MiB "
            "pages)\n", r->reps, r->lat_bytes >> 20, r->huge_kind, r->huge_fraction * 100);
    print_matrix(f, r, 0, "idle latency, ns per dependent load (2 MiB pages), row = CPU node, "
                 "column = memory node");
    print_matrix(f, r, 1, "triad bandwidth, MB/s, every CPU of the CPU node");
    print_matrix(f, r, 2, "NUMA factor (remote/local latency)");
    print_matrix(f, r, 3, "bandwidth ratio (local/remote)");
    fprintf(f, "\nidle latency, 2 MiB pages against 4 KiB pages (page walks), CPU node %d:\n",
            r->bw_node);
    for (int j = 0; j < r->n; j++)
        fprintf(f, "  memory node %-3d %7.1f ns   %7.1f ns\n", r->nodes[j], r->lat[r->home][j].med,
                r->lat4k[r->home][j].med);
    fprintf(f, "\nlatency against working-set size (node %d, 2 MiB pages):\n", r->bw_node);
    for (int k = 0; k < r->nsizes; k++)
        fprintf(f, "  %8zu KiB  %7.2f ns [%.2f-%.2f]\n", r->sizes[k] >> 10, r->lat_by_size[k].med,
                r->lat_by_size[k].min, r->lat_by_size[k].max);
    fprintf(f, "triad bandwidth against threads (node %d):\n", r->bw_node);
    for (int k = 0; k < r->nthreads; k++)
        fprintf(f, "  %3d thread(s)  %8.0f MB/s [%.0f-%.0f]\n", k + 1, r->bw_by_threads[k].med,
                r->bw_by_threads[k].min, r->bw_by_threads[k].max);
    fprintf(f, "loaded latency (node %d: the chase on CPU %d while other CPUs stream):\n",
            r->bw_node, r->cpus[r->home][0]);
    for (int k = 0; k < r->nloaded; k++)
        fprintf(f, "  %3d streaming  %7.1f ns [%.1f-%.1f]  %8.0f MB/s streamed\n", k,
                r->loaded_lat[k].med, r->loaded_lat[k].min, r->loaded_lat[k].max,
                r->loaded_bw[k].med);
    fprintf(f, "bandwidth mixes (node %d, all %d CPUs):\n", r->bw_node, r->ncpus[r->home]);
    for (int m = 0; m < NMIX; m++)
        fprintf(f, "  %-15s %8.0f MB/s [%.0f-%.0f]\n", measure_mix_name[m], r->mix[m].med,
                r->mix[m].min, r->mix[m].max);
    fprintf(f, "peak bandwidth %.0f MB/s [%.0f-%.0f] (%s: the mix of the highest median)\n",
            r->mix[r->peak_mix].med, r->mix[r->peak_mix].min, r->mix[r->peak_mix].max,
            measure_mix_name[r->peak_mix]);
    if (r->migrate.n)
        fprintf(f, "migration (npl_migrate_range, 4 KiB pages, nodes %d and %d): %.0f pages/s "
                "[%.0f-%.0f]\n", r->nodes[r->home], r->nodes[r->home + 1 < r->n ? r->home + 1 :
                r->home - 1], r->migrate.med, r->migrate.min, r->migrate.max);
    else
        fprintf(f, "migration: not measured (%s)\n", r->n < 2 ? "one node" :
                "npl_migrate_range moved no page");
}

/* mkdir -p of the directory part of path (not of path itself) */
static int mkdir_parents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int measure_default_path(char *out, size_t size)
{
    const char *env = getenv("NUMAPLACE_CONFIG"), *home = getenv("HOME");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return 0;
    }
    if (!home || !*home) {
        fprintf(stderr, "numaplace measure: HOME is not set (nor NUMAPLACE_CONFIG): there is no "
                        "config file the library would read; say where to write with --out FILE "
                        "(and point NUMAPLACE_CONFIG at it), or use --no-write\n");
        return EXIT_FAILED;
    }
    if ((size_t)snprintf(out, size, "%s/.config/numaplace/config", home) >= size) {
        fprintf(stderr, "numaplace measure: HOME is too long a path for the config file; say "
                        "where to write with --out FILE, or use --no-write\n");
        return EXIT_FAILED;
    }
    if (mkdir_parents(out) < 0) {
        fprintf(stderr, "numaplace measure: cannot create the directory of %s: %s\n", out,
                strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

int measure_check_out(const char *who, const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            fprintf(stderr, "numaplace %s: %s is a symbolic link: refused (give the file it points "
                            "to)\n", who, path);
            return EXIT_FAILED;
        }
        if (!S_ISREG(sb.st_mode)) {
            fprintf(stderr, "numaplace %s: %s is not a regular file: refused\n", who, path);
            return EXIT_FAILED;
        }
        /* an existing file must open without following links and be a config to keep */
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "numaplace %s: cannot read %s: %s\n", who, path, strerror(errno));
            return EXIT_FAILED;
        }
        close(fd);
        npl_config *c = NULL;
        if (npl_config_load(&c, path) < 0) {
            fprintf(stderr, "numaplace %s: %s exists but is not a valid config (%s): not "
                            "overwritten\n", who, path, npl_last_error());
            return EXIT_FAILED;
        }
        npl_config_free(c);
    } else if (errno != ENOENT) {
        fprintf(stderr, "numaplace %s: %s: %s\n", who, path, strerror(errno));
        return EXIT_FAILED;
    }
    /* test-write the directory the file will be renamed into */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.check.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int ok = fd >= 0 && write(fd, "\n", 1) == 1;
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && ok)
        ok = 0, e = errno;
    if (fd >= 0)
        unlink(tmp);
    if (!ok) {
        fprintf(stderr, "numaplace %s: cannot write next to %s: %s\n", who, path, strerror(e));
        return EXIT_FAILED;
    }
    return 0;
}

/* --reps N: 1..STATS_MAX_REPS, else -1 (message printed) */
int measure_parse_reps(const char *who, const char *s)
{
    uint64_t v;
    if (npl__parse_count(s, 1, STATS_MAX_REPS, &v) == 0)
        return (int)v;
    fprintf(stderr, "numaplace %s: --reps %s: give a whole number from 1 to %d\n", who, s,
            STATS_MAX_REPS);
    return -1;
}
