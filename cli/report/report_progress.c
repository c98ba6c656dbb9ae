/* SPDX-License-Identifier: BSD-3-Clause */
/* report_progress.c - numaplace report's progress line: step, percentage, ETA; redrawn on a
 * terminal; into a log (--progress, NUMAPLACE_PROGRESS=1) a line every 10 s (report_parts.h). */
#include "common.h"
#include "report_parts.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    int on, shown, log; /* log: stderr is not a terminal: whole lines, seldom */
    double t0, last;
    double measure_share; /* share of the whole run the measurements take */
} prog;

void report_progress_start(int level, int force)
{
    const char *env = getenv("NUMAPLACE_PROGRESS"); /* 0: never (consoles that are ttys); 1: logs too */
    prog.log = !isatty(STDERR_FILENO);
    prog.on = force || (env && !strcmp(env, "1")) || (!prog.log && !(env && !strcmp(env, "0")));
    prog.t0 = npl__now();
    prog.measure_share = level == 0 ? 0.5 : 0.3;
}

void report_progress(const char *step, double fraction)
{
    if (!prog.on)
        return;
    double t = npl__now();
    if (t - prog.last < (prog.log ? 10 : 0.2) && fraction < 1)
        return;
    prog.last = t;
    int charac = !strcmp(step, "characterization");
    static const char *steps[] = {"latency and bandwidth matrix", "latency against working set",
                                  "loaded latency", "bandwidth against threads",
                                  "read:write mixes"};
    int k = 0;
    while (!charac && k < 4 && strcmp(steps[k], step))
        k++;
    double f = charac ? prog.measure_share + (1 - prog.measure_share) * fraction
                      : prog.measure_share * (k + fraction) / 5;
    double el = t - prog.t0, eta = f > 0.02 ? el / f * (1 - f) : -1;
    char etas[32] = "ETA --";
    if (eta >= 0)
        snprintf(etas, sizeof etas, "ETA %dm%02ds", (int)eta / 60, (int)eta % 60);
    fprintf(stderr, "%snumaplace report: %-30s %3.0f%%  %s  (%.0f s)%s", prog.log ? "" : "\r\033[K",
            step, f * 100, etas, el, prog.log ? "\n" : "");
    prog.shown = !prog.log;
}

void report_progress_done(void)
{
    if (prog.on && prog.shown)
        fprintf(stderr, "\r\033[K");
    prog.shown = 0;
}
