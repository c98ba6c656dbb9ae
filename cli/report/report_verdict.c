/* SPDX-License-Identifier: BSD-3-Clause */
/* report_verdict.c - the report's headline: how far the timings can be trusted, the worst and
 * mean latency factor, the remote-bandwidth penalty, the measured spread, and per access
 * pattern the recommended policy with its margin, or "no measurable difference". */
#include "common.h"
#include "report_parts.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SPREAD_NOISY 0.10 /* a median run-to-run spread above this: the run is noisy */
#define TOLERANCE 0.05    /* medians within 5% tie even when the intervals separate */

static void warn(struct verdict *v, const char *fmt, ...)
{
    if (v->nwarn >= REPORT_MAX_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->warn[v->nwarn++], sizeof v->warn[0], fmt, ap);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* latency factors and bandwidth penalty over the remote pairs; remote faster than local noted */
static void factors(const struct measure_result *m, struct verdict *v)
{
    double sum = 0, bsum = 0;
    int n = 0, nb = 0, fi = -1, fj = -1;
    v->worst_lat_factor = v->mean_lat_factor = -1;
    v->remote_bw_penalty = NAN; /* negative when remote memory is faster */
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            double f = measure_factor(m, 0, i, j), b = measure_factor(m, 1, i, j);
            if (i == j || f < 0)
                continue;
            sum += f, n++;
            if (f > v->worst_lat_factor)
                v->worst_lat_factor = f;
            if (b > 0)
                bsum += 1 - 1 / b, nb++;
            if (m->lat[i][j].max < m->lat[i][i].min && fi < 0)
                fi = i, fj = j;
        }
    if (n)
        v->mean_lat_factor = sum / n;
    if (nb)
        v->remote_bw_penalty = bsum / nb;
    if (fi >= 0)
        warn(v, "remote memory measured FASTER than local (CPU node %d -> memory node %d: "
             "factor %.3f): these timings do not come from NUMA hardware", m->nodes[fi],
             m->nodes[fj], measure_factor(m, 0, fi, fj));
}

/* A read-only stream slower than a mix that also writes: streams that only read are the fastest
 * on every memory system (no write-back, no read-for-ownership), so an inversion beyond the
 * run's noise says the bandwidth figures are not the memory's (emulation, a CPU that changed
 * frequency, another load on the machine) */
static void inversions(const struct measure_result *m, struct verdict *v)
{
    const struct stat3 *ro = &m->mix[MIX_READ];
    for (int k = MIX_READ + 1; k < NMIX; k++) {
        const struct stat3 *rw = &m->mix[k];
        if (ro->med > 0 && rw->med > ro->med * (1 + TOLERANCE) && rw->min > ro->max)
            warn(v, "inversion: %s bandwidth %.0f MB/s [%.0f-%.0f] below the %s mix's %.0f "
                 "[%.0f-%.0f]: a read-only stream is the fastest on real memory, so these "
                 "bandwidth figures are not the memory's (emulation, CPU frequency, other load)",
                 measure_mix_name[MIX_READ], ro->med, ro->min, ro->max, measure_mix_name[k],
                 rw->med, rw->min, rw->max);
    }
}

static void spreads(const struct charac *c, struct verdict *v)
{
    double s[NPOL * NPAT];
    int n = 0;
    for (int p = 0; p < NPOL; p++)
        for (int k = 0; k < NPAT; k++) {
            double x = stat_spread(&c->sec[p][k / (NACC * NSCH)][k / NSCH % NACC][k % NSCH]);
            if (x >= 0)
                s[n++] = x;
        }
    qsort(s, (size_t)n, sizeof s[0], cmp_double);
    v->spread_median = n ? s[n / 2] : -1;
    v->spread_max = n ? s[n - 1] : -1;
}

void report_verdict(const struct measure_result *m, const struct charac *c,
                    const struct host_env *h, struct verdict *v)
{
    memset(v, 0, sizeof *v);
    int vm = h->cpuinfo_hypervisor || h->hypervisor[0];
    v->trust = h->emulated ? "emulated" : vm ? "virtualized" : "measured";
    v->emulated = h->emulated;
    if (h->emulated)
        warn(v, "EMULATED timings (QEMU TCG: a software CPU): times are not measurements of any "
             "hardware; the results are the exact page locations and remote-access fractions");
    else if (vm)
        warn(v, "virtual machine (hypervisor %s): timings include virtualization, and the NUMA "
             "layout is the one the hypervisor shows", h->hypervisor[0] ? h->hypervisor : "flag");
    factors(m, v);
    inversions(m, v);
    spreads(c, v);
    if (v->spread_median > SPREAD_NOISY)
        warn(v, "noisy run: run-to-run spread %.0f%% (median), up to %.0f%%: differences smaller "
             "than that are noise", v->spread_median * 100, v->spread_max * 100);
    if (m->level == 0)
        warn(v, "--quick: arrays too small for conclusions (use the default or --full)");
    if (m->huge_fraction < 0.5)
        warn(v, "idle latency on 4 KiB pages (no 2 MiB page obtained): page walks included");
    /* a difference must exceed the run's own noise: its median spread, at least 5% */
    double tol = v->spread_median > TOLERANCE ? v->spread_median : TOLERANCE;
    v->tolerance = tol;
    for (int k = 0; k < NPAT; k++) {
        int o = k / (NACC * NSCH), x = k / NSCH % NACC, s = k % NSCH;
        struct rec_stat_entry e[NPOL];
        for (int p = 0; p < NPOL; p++)
            e[p] = (struct rec_stat_entry){report_policies[p], &c->sec[p][o][x][s]};
        recommend_stats(e, NPOL, tol, &v->rec[o][x][s]);
        if (h->emulated) /* emulated times judge nothing: no pick, no margin */
            v->rec[o][x][s] = (struct rec_result){NULL, NULL, -1, 0};
    }
}

const char *report_rule_text(int nnodes)
{
    if (nnodes <= 1)
        return "One NUMA node: every policy puts every page on the same node, so placement "
               "cannot differ. The policies run here differ only in how the array is first "
               "touched (first_touch: the master thread initializes it; the others: all threads "
               "do), so they are compared as first-touch variants. first_touch is recommended "
               "unless another variant is faster with a [min, max] range that does not overlap "
               "first_touch's and a median lower by more than the noise threshold (5%, or the "
               "run's median spread when that is larger).";
    return "Each policy's time is the median of the repetitions, with its [min, max] range. "
           "Policies whose range overlaps the fastest's, or whose median is within the noise "
           "threshold of it (5%, or the run's median spread when that is larger), tie with "
           "it; a tie goes to the simplest, most local policy, in the order "
           "first_touch, bind_block, cyclic, cyclic_block, skew_mapp, prime_mapp, random_block, "
           "random, bind_all (no placement is better than one that does not pay). When every "
           "policy ties, there is no measurable difference and first_touch stays. The margin "
           "is how much longer the fastest policy that does not tie takes.";
}
