/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_omp_alloc - OpenMP's own allocators with the omp_atk_partition trait place memory as the
 * trait says (issue 38), in a guest of N >= 2 nodes, page by page (the programs count their own
 * pages with move_pages: tests/progs/omp_alloc.c, omp_alloc_f.f90):
 *   numaplace run -- omp_alloc_gcc     libgomp, the program's omp_* calls and allocate clause
 *   numaplace run -- omp_alloc_clang   libomp
 *   omp_alloc_lib                      numaplace/omp.h's npl_omp_* called by the program itself
 *   numaplace run -- omp_alloc_f       gfortran: omp_init_allocator, omp_alloc, omp_free
 * each: status 0, every case's pages all where the trait says (blocked, interleaved, aligned,
 * calloc, realloc, nearest on each node's thread, the clause's private copies), contents kept;
 * and an `environment` allocator under the policy cyclic (run --policy, NUMAPLACE_POLICY).
 * The controls, which must come out wrong (the counting can fail): omp_alloc_gcc alone (libgomp
 * ignores the partition: first touch puts every page on the main thread's node) and
 * `numaplace run -- omp_alloc_gcc none` (no partition asked). A program not built is a skip. */
#define _GNU_SOURCE
#include "check.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *progs_dir(void)
{
    return getenv("NPL_PROGS") ? getenv("NPL_PROGS") : "/usr/local/bin"; /* the guest's */
}

/* the output's "N cases, W wrong" line: N, W (-1 when absent) */
static void tally(const char *out, const char *prefix, int *cases, int *wrong)
{
    char key[64];
    snprintf(key, sizeof key, "%s: %%d cases, %%d wrong", prefix);
    const char *p = out;
    *cases = *wrong = -1;
    while (p && (p = strstr(p, prefix))) {
        if (sscanf(p, key, cases, wrong) == 2)
            return;
        p++;
    }
}

/* lines "R of P pages where the trait says" with R == P, and all such lines */
static void pages_lines(const char *out, int *right, int *all)
{
    *right = *all = 0;
    for (const char *p = out; p && (p = strstr(p, " pages where the trait says")); p++) {
        const char *q = p;
        while (q > out && q[-1] != ':')
            q--;
        int r, n;
        if (sscanf(q, " %d of %d", &r, &n) == 2) {
            (*all)++;
            *right += r == n && n > 0;
        }
    }
}

static void one(const char *label, const char *prog, const char *arg, int under_run, int N,
                int control)
{
    int env = arg && !strcmp(arg, "environment"); /* under the policy cyclic */
    char path[512], out[96], err[96];
    snprintf(path, sizeof path, "%s/%s", progs_dir(), prog);
    if (access(path, X_OK) != 0) {
        char key[64];
        snprintf(key, sizeof key, "prog-%s", prog);
        SKIP(key, "%s: %s is not built (gcc, clang-14, gfortran with OpenMP)", label, path);
        return;
    }
    snprintf(out, sizeof out, "/tmp/goa_%s%s_out.txt", prog, control ? "_control" : env ? "_env" : "");
    snprintf(err, sizeof err, "/tmp/goa_%s%s_err.txt", prog, control ? "_control" : env ? "_env" : "");
    char *const run[] = {"numaplace", "run", "--", path, (char *)arg, NULL};
    char *const run_env[] = {"numaplace", "run", "--policy", "cyclic", "--", path, (char *)arg, NULL};
    char *const alone[] = {path, (char *)arg, NULL};
    if (env && !under_run)
        setenv("NUMAPLACE_POLICY", "cyclic", 1);
    int rc = spawn_to(out, err, under_run ? (env ? run_env : run) : alone);
    unsetenv("NUMAPLACE_POLICY");
    char *o = slurp(out), *e = slurp(err);
    int cases, wrong, right, all;
    const char *prefix = strstr(prog, "_f") ? "omp_alloc_f" : "omp_alloc";
    tally(o, prefix, &cases, &wrong);
    pages_lines(o, &right, &all);
    if (control) {
        /* first touch: the blocked and interleaved arrays' pages mostly on one node */
        CHECK(rc == 1 && wrong > 0 && right < all,
              "%s (control): status %d (want 1), %d of %d cases wrong, %d of %d page counts "
              "right: the counting sees pages that are not placed\n%s%s", label, rc, wrong,
              cases, right, all, o ? o : "", e ? e : "");
    } else {
        int want = env ? 1 : strstr(prog, "_f") ? 3 : 5 + N; /* + N clause copies (gcc), + 2 */
        CHECK(rc == 0 && wrong == 0 && cases >= want && right == all && all > 0,
              "%s: status %d, %d of %d cases wrong (want 0 of >= %d), %d of %d page counts all "
              "where the trait says\n%s%s", label, rc, wrong, cases, want, right, all,
              o ? o : "", e ? e : "");
    }
    free(o);
    free(e);
}

int main(int argc, char **argv)
{
    int N = 1, KC = 1;
    guest_args(argc, argv, &N, &KC);
    if (N < 2) {
        SKIP("nodes", "guest_omp_alloc: one node: every placement is node 0 (nothing to tell)");
        return check_summary("guest_omp_alloc");
    }
    one("numaplace run -- omp_alloc_gcc (libgomp)", "omp_alloc_gcc", NULL, 1, N, 0);
    one("numaplace run -- omp_alloc_clang (libomp)", "omp_alloc_clang", NULL, 1, N, 0);
    one("omp_alloc_lib (numaplace/omp.h, linked)", "omp_alloc_lib", NULL, 0, N, 0);
    one("numaplace run -- omp_alloc_f (gfortran)", "omp_alloc_f", NULL, 1, N, 0);
    one("numaplace run --policy cyclic -- omp_alloc_gcc environment", "omp_alloc_gcc",
        "environment", 1, N, 0);
    one("NUMAPLACE_POLICY=cyclic omp_alloc_lib environment", "omp_alloc_lib", "environment", 0, N,
        0);
    one("omp_alloc_gcc alone (libgomp ignores the partition)", "omp_alloc_gcc", NULL, 0, N, 1);
    one("numaplace run -- omp_alloc_gcc none (no partition asked)", "omp_alloc_gcc", "none", 1, N,
        1);
    return check_summary("guest_omp_alloc");
}
