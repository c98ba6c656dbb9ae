/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_signals - signal chaining in a multi-node guest, where next-touch really moves pages
 * (adapts to --nodes N --cpus-per-node K). The programs of tests/progs with their own SIGSEGV/
 * SIGBUS handling (sig_styles built by gcc and by clang, sig_api linking the library) run alone
 * and under `numaplace run --next-touch --pin scatter`; each run must give the exit status and
 * the stdout of the program alone, the array must have been armed, and every page of each
 * thread's block must end on that thread's node ("placement: L/T pages local", L == T, after the
 * region where each thread touched its own block: next-touch resolved every chunk under the
 * program's own handler). The host runs every mode (tests/host/test_hostile_signals.sh); here a
 * subset, since each run costs seconds under TCG: gcc's build in every mode, clang's in the
 * first three (NPL_FULL=1: every mode). */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <sys/wait.h>
#include <unistd.h>

static int N = 1, K = 1;

/* run argv with stdout and stderr to files; the exit status (128+N for signal N) */
static int run_to(const char *out, const char *err, char *const argv[])
{
    return spawn_to(out, err, argv);
}

static int same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "r"), *g = fopen(b, "r");
    int same = f && g, c, d;
    while (same && ((c = fgetc(f)) != EOF) | ((d = fgetc(g)) != EOF))
        same = c == d;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

/* in the stderr of a run: regions armed, placement lines, and those with every page local */
static void scan(const char *err, int *armed, int *placed, int *local)
{
    FILE *f = fopen(err, "r");
    char line[256];
    *armed = *placed = *local = 0;
    while (f && fgets(line, sizeof line, f)) {
        int l, t;
        *armed += strstr(line, "armed 1") != NULL;
        if (sscanf(line, "placement: %d/%d pages local", &l, &t) == 2) {
            (*placed)++;
            *local += l == t && t > 0;
        }
        if (strstr(line, "next-touch faults") && !strstr(line, "faults 0"))
            (*armed)++;
    }
    if (f)
        fclose(f);
}

static void one(const char *dir, const char *prog, const char *mode, int want_placement)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, prog);
    int there = access(path, X_OK) == 0;
    CHECK(there, "%s is in this guest (tests/guest/run.sh adds build/progs)", path);
    if (!there)
        return;
    int plain = run_to("/tmp/gs_ref.txt", "/tmp/gs_referr.txt",
                       (char *const[]){path, (char *)mode, NULL});
    /* sig_api's reference is the same program with nothing armed */
    if (!strcmp(prog, "sig_api")) {
        setenv("NPL_SIG_NOARM", "1", 1);
        plain = run_to("/tmp/gs_ref.txt", "/tmp/gs_referr.txt",
                       (char *const[]){path, (char *)mode, NULL});
        unsetenv("NPL_SIG_NOARM");
    }
    int rc = run_to("/tmp/gs_got.txt", "/tmp/gs_err.txt",
                    (char *const[]){"numaplace", "run", "--next-touch", "--pin", "scatter", "--",
                                    path, (char *)mode, NULL});
    int armed, placed, local;
    scan("/tmp/gs_err.txt", &armed, &placed, &local);
    int same = same_file("/tmp/gs_ref.txt", "/tmp/gs_got.txt");
    CHECK(rc == plain && same && armed > 0 && placed == local && placed >= want_placement,
          "%s %s under run --next-touch --pin scatter: status %d (alone %d), stdout %s, armed %d, "
          "placement lines %d of which all local %d (want >= %d)", prog, mode, rc, plain,
          same ? "the same" : "DIFFERENT", armed, placed, local, want_placement);
    if (!same || rc != plain) {
        FILE *f = fopen("/tmp/gs_err.txt", "r");
        char line[256];
        for (int i = 0; f && i < 5 && fgets(line, sizeof line, f); i++)
            printf("  | %s", line);
        if (f)
            fclose(f);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            K = atoi(argv[++i]);
    }
    numa_balancing_off(); /* exact placement checks */
    const npl_topo *t = npl_topo_self();
    CHECK(t && npl_topo_node_count(t, 0) == N, "this machine has %d usable nodes, --nodes says %d",
          t ? npl_topo_node_count(t, 0) : -1, N);
    if (t && npl_topo_node_count(t, 0) != N)
        N = npl_topo_node_count(t, 0);
    const char *dir = getenv("NPL_PROGS") ? getenv("NPL_PROGS") : "/usr/local/bin"; /* the guest's */
    /* mode, and how many regions where each thread touched its own block */
    static const struct {
        const char *mode;
        int placement;
    } modes[] = {{"after", 1}, {"plain_after", 1}, {"guard", 1}, {"resethand", 1},
                 {"nodefer", 0}, {"onstack", 0}, {"bus", 1}, {"blocked", 0}, {"dfl", 1},
                 {"blocked_kill", 1}};
    const char *progs[] = {"sig_styles_gcc", "sig_styles_clang"};
    const char *full = getenv("NPL_FULL");
    size_t nmodes = sizeof modes / sizeof *modes;
    for (size_t p = 0; p < 2; p++)
        for (size_t m = 0; m < (p == 0 || (full && !strcmp(full, "1")) ? nmodes : 3); m++)
            one(dir, progs[p], modes[m].mode, modes[m].placement);
    one(dir, "sig_api", "after", 0);
    one(dir, "sig_api", "before", 0);
    return check_summary("guest_signals");
}
