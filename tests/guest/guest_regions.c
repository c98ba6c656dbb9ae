/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_regions - `numaplace run --next-touch` on each OpenMP runtime, in the multi-node guest:
 * the program keeps its own runtime, its pages follow its threads, and the re-arm rule backs off
 * and comes back. The programs are unmodified (tests/progs/nt_regions.c, built by gcc for
 * libgomp and by clang for libomp: each checks its own pages and writes and says which runtime is
 * mapped); the rule's counters come from the interposer's exit line under --json. Runs with
 * --threshold 1536K: only the program's block array (T/2 MiB, T >= 4 threads) is registered
 * (libomp's own 1 MiB buffer is not), so the counters are those of one range.
 *   1. first: serial init, one region: every page of thread t's block on t's node, every write
 *      kept; gcc's program runs on libgomp and maps no libomp, the regions are seen through
 *      libgomp's entry points (gcc) or OMPT (clang).
 *   2. many 25 and many 50: distinct regions over the same blocks: full arms stop after the
 *      back-off (the same count for 25 and 50 regions), later regions get only samples, spaced
 *      out (at most a few more for 25 more regions).
 *   3. phase: owners change at a new region: pages follow at once (a full arm there).
 *   4. phase3: owners stay for three regions (the range backs off), then change: a sample finds
 *      it, the range is re-enabled, pages follow within the changed region's eight entries.
 *   5. io: system calls (write, pread, fread, readv, fwrite, process_vm_readv/_writev with
 *      itself as the peer) on the whole array, each after a region that touches none of it (the
 *      array armed, untouched): every byte copied, the contents kept.
 *   6. a program without OpenMP (printer) under --next-touch: its output and status kept.
 *   guest_regions --nodes N --cpus-per-node K */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <sys/wait.h>
#include <unistd.h>

static int N = 1, K = 1;

/* argv with stdout to out and stderr to err; the exit status */
static int run(char *const argv[], const char *out, const char *err)
{
    return spawn_to(out, err, argv);
}

static char *text_of(const char *path) /* a static buffer: never NULL */
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

/* the interposer's exit line: {"event": "next_touch", ...} */
struct nt {
    long regions, distinct, full, sample, backoffs, reenabled, moved;
    char source[32];
    int found;
};
static long field(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(line, k);
    return p ? atol(p + strlen(k)) : -1;
}
static struct nt summary(const char *err)
{
    struct nt s = {0};
    const char *line = strstr(text_of(err), "{\"event\": \"next_touch\"");
    if (!line)
        return s;
    s.found = 1;
    s.regions = field(line, "regions");
    s.distinct = field(line, "distinct_regions");
    s.full = field(line, "full_arms");
    s.sample = field(line, "sample_arms");
    s.backoffs = field(line, "backoffs");
    s.reenabled = field(line, "reenabled");
    s.moved = field(line, "pages_moved");
    const char *p = strstr(line, "\"region_source\": \"");
    if (p)
        sscanf(p + 18, "%31[^\"]", s.source);
    return s;
}

static void show(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "{\"event\": \"allocation\"", 22) && line[0] != ' ' && line[0] != '{' &&
            line[0] != '}')
            printf("  | %s", line);
        else if (!strncmp(line, "{\"event\": \"next_touch\"", 22))
            printf("  | %s", line);
    if (f)
        fclose(f);
}

/* numaplace run --next-touch --pin scatter --threshold 1536K --json -- PROG MODE [ARG] */
static int nt_run(const char *prog, const char *mode, const char *arg, struct nt *s)
{
    char *argv[] = {"numaplace", "run", "--next-touch", "--pin", "scatter", "--threshold", "1536K",
                    "--json", "--", (char *)prog, (char *)mode, (char *)arg, NULL};
    int rc = run(argv, "/tmp/gr_out.txt", "/tmp/gr_err.txt");
    printf("%s %s %s: status %d\n", prog, mode, arg ? arg : "", rc);
    show("/tmp/gr_out.txt");
    show("/tmp/gr_err.txt");
    *s = summary("/tmp/gr_err.txt");
    return rc;
}

static void test_build(const char *build)
{
    char prog[256];
    snprintf(prog, sizeof prog, "/usr/local/bin/nt_regions_%s", build);
    if (access(prog, X_OK)) {
        SKIP("nt-regions-prog", "%s is not in the guest (built only when its compiler is there)", prog);
        return;
    }
    if (N * K < 4) {
        SKIP("small-guest", "%d CPUs: the block array (512 KiB a thread) would be under the "
             "threshold", N * K);
        return;
    }
    int gcc = !strcmp(build, "gcc"), multi = N > 1;
    const char *src = gcc ? "libgomp" : "ompt";
    struct nt s, s25, s50;
    /* 1. one region after a serial init */
    int rc = nt_run(prog, "first", NULL, &s);
    const char *out = text_of("/tmp/gr_out.txt");
    CHECK(rc == 0 && strstr(out, "writes: ok"), "%s first: every page of each block on its "
          "owner's node after the region, every write kept (status %d)", build, rc);
    CHECK(strstr(out, gcc ? "runtime libgomp=1 libomp=0" : "runtime libgomp=0 libomp=1") != NULL,
          "%s: the program runs on its own runtime (%s), nothing else mapped", build,
          gcc ? "libgomp" : "libomp");
    CHECK(!multi || strstr(out, "threads on 1 nodes") == NULL,
          "%s first: the threads ran on several nodes (the check means something)", build);
    CHECK(s.found && !strcmp(s.source, src) && s.regions == 1 && s.distinct == 1,
          "%s first: one region seen through %s (found %d, source %s, %ld regions)", build, src,
          s.found, s.source, s.regions);
    CHECK(!multi || (s.full == 1 && s.moved > 0), "%s first: one full arm that moved pages (%ld "
          "full arms, %ld pages moved)", build, s.full, s.moved);
    /* 2. many distinct regions, the same owners: the back-off */
    rc = nt_run(prog, "many", "25", &s25);
    int rc50 = nt_run(prog, "many", "50", &s50);
    CHECK(rc == 0 && rc50 == 0, "%s many 25 / 50: pages on their owners' nodes, writes kept "
          "(status %d, %d)", build, rc, rc50);
    CHECK(s25.distinct == 25 && s50.distinct == 50, "%s many: 25 and 50 distinct regions seen "
          "(%ld, %ld)", build, s25.distinct, s50.distinct);
    CHECK(!multi || (s25.full == s50.full && s50.full >= 1 && s50.full <= 3 && s25.backoffs == 1 &&
                     s50.backoffs == 1),
          "%s many: full arms stop after the back-off (%ld after 25 regions, %ld after 50; "
          "backed off %ld, %ld times)", build, s25.full, s50.full, s25.backoffs, s50.backoffs);
    CHECK(!multi || (s25.sample >= 1 && s50.sample >= s25.sample && s50.sample <= s25.sample + 2 &&
                     s50.reenabled == 0),
          "%s many: later regions only sample, spaced out (%ld samples after 25 regions, %ld "
          "after 50; re-enabled %ld)", build, s25.sample, s50.sample, s50.reenabled);
    /* 3. owners change at a new region */
    rc = nt_run(prog, "phase", NULL, &s);
    CHECK(rc == 0, "%s phase: pages follow the new owners at the new region (status %d)", build,
          rc);
    CHECK(s.distinct == 2 && (!multi || (s.full == 2 && s.backoffs == 0)),
          "%s phase: two regions, a full arm at each (%ld regions, %ld full arms, backed off %ld)",
          build, s.distinct, s.full, s.backoffs);
    /* 4. owners change after the range backed off */
    rc = nt_run(prog, "phase3", NULL, &s);
    CHECK(rc == 0, "%s phase3: pages follow the new owners within the changed region's eight "
          "entries (status %d)", build, rc);
    CHECK(!multi || (s.backoffs >= 1 && s.reenabled >= 1 && s.sample >= 1),
          "%s phase3: backed off, then a sample re-enabled it (backed off %ld, re-enabled %ld, "
          "%ld samples)", build, s.backoffs, s.reenabled, s.sample);
    /* 5. system calls on the array while regions that touch none of it keep arming it */
    rc = nt_run(prog, "io", NULL, &s);
    out = text_of("/tmp/gr_out.txt");
    const char *io = strstr(out, "io: write ");
    long w = -1, r = -1, fr = -1, v = -1, fw = -1, pr = -1, pw = -1, n = -2;
    int got = io ? sscanf(io, "io: write %ld pread %ld fread %ld readv %ld fwrite %ld "
                              "process_vm_readv %ld process_vm_writev %ld of %ld bytes",
                          &w, &r, &fr, &v, &fw, &pr, &pw, &n)
                 : 0;
    CHECK(rc == 0 && got == 8 && w == n && r == n && fr == n && v == n && fw == n && pr == n &&
              pw == n && strstr(out, "writes: ok"),
          "%s io: write, pread, fread, readv, fwrite, process_vm_readv and _writev of the armed "
          "array copy all %ld bytes (%ld %ld %ld %ld %ld %ld %ld), contents kept (status %d)",
          build, n, w, r, fr, v, fw, pr, pw, rc);
    /* the rule may back off (a quiet region moves nothing itself): at least A's full arm and two
     * quiet ones', so that two of the calls met the whole array armed */
    CHECK(s.distinct == 8 && (!multi || s.full >= 3),
          "%s io: eight regions; the whole array armed at A and at two quiet ones at least (%ld "
          "regions, %ld full arms, %ld samples)", build, s.distinct, s.full, s.sample);
}

int main(int argc, char **argv)
{
    guest_args(argc, argv, &N, &K);
    numa_balancing_off(); /* exact page checks */
    const npl_topo *t = npl_topo_self();
    if (t && npl_topo_node_count(t, 0) != N) {
        SKIP("guest-shape", "this machine has %d usable nodes, not %d", npl_topo_node_count(t, 0),
             N);
        N = npl_topo_node_count(t, 0);
    }
    int have = system("numaplace --version >/dev/null 2>&1") == 0;
    CHECK(have, "numaplace is on PATH (as in every guest)");
    if (!have)
        return check_summary("guest_regions");
    char th[16];
    snprintf(th, sizeof th, "%d", N * K);
    setenv("OMP_NUM_THREADS", th, 1);
    test_build("gcc");
    test_build("clang");
    /* 6. no OpenMP at all */
    char *argv5[] = {"numaplace", "run", "--next-touch", "--json", "--", "printer", "3", NULL};
    int rc = run(argv5, "/tmp/gr_out.txt", "/tmp/gr_err.txt");
    struct nt s = summary("/tmp/gr_err.txt");
    CHECK(rc == 3 && strstr(text_of("/tmp/gr_out.txt"), "buffered line") && s.found &&
              s.regions == 0 && !strcmp(s.source, "none"),
          "a program without OpenMP under --next-touch: runs, status 3 and its output kept, no "
          "region (status %d, regions %ld, source %s)", rc, s.regions, s.source);
    return check_summary("guest_regions");
}
