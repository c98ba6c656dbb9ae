/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_check.h - the examples' page-exact check: where each page of a range is (move_pages(2)
 * through libc's syscall(), no numaplace call) against the node a MAi policy should have put it
 * on. Header only; uses libc and the MAi API. */
#ifndef MAI_EXAMPLE_CHECK_H
#define MAI_EXAMPLE_CHECK_H
#define _GNU_SOURCE
#include <mai.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ex_pass, ex_fail;

/* node of page i of a range, from the policy: returns the expected OS node id */
typedef int (*ex_rule)(long page, void *ctx);

/* 1 if every page of [p, p + bytes) is where rule says; prints the first difference */
static int ex_check_pages(const char *what, void *p, size_t bytes, ex_rule rule, void *ctx)
{
    long pg = sysconf(_SC_PAGESIZE), n = (long)((bytes + (size_t)pg - 1) / (size_t)pg);
    void **pages = malloc((size_t)n * sizeof *pages);
    int *status = malloc((size_t)n * sizeof *status), ok = pages && status;
    for (long i = 0; ok && i < n; i++)
        pages[i] = (char *)p + i * pg;
    if (ok && syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) != 0)
        ok = 0;
    for (long i = 0; ok && i < n; i++)
        if (status[i] != rule(i, ctx)) {
            printf("FAIL %s: page %ld on node %d, expected %d\n", what, i, status[i], rule(i, ctx));
            ok = 0;
        }
    free(pages);
    free(status);
    if (ok)
        ex_pass++;
    else
        ex_fail++;
    return ok;
}

static void ex_expect(int cond, const char *what)
{
    if (cond) {
        ex_pass++;
    } else {
        ex_fail++;
        printf("FAIL %s\n", what);
    }
}

/* the summary line of a guest test program: "NAME: N passed, M failed, 0 skipped"; exit status
 * 0 only if a check ran and none failed */
static int ex_summary(const char *name)
{
    printf("%s: %d passed, %d failed, 0 skipped\n", name, ex_pass, ex_fail);
    return ex_fail != 0 || ex_pass == 0;
}

/* the config file every example uses: nodes 0..N-1, T = N threads on the first CPU of each
 * node (found through mai_get_cpusnode, 1-based) */
static int ex_init(int argc, char **argv)
{
    int nodes = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
    if (nodes <= 0)
        nodes = mai_get_maxnodes();
    char path[] = "/tmp/mai_exampleXXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "%d\n", nodes);
    for (int i = 0; i < nodes; i++)
        fprintf(f, "%d\n", i);
    fprintf(f, "%d\n", nodes);
    for (int i = 0; i < nodes; i++) {
        int *cpus = mai_get_cpusnode(i);
        fprintf(f, "%d\n", cpus && cpus[0] > 0 ? cpus[0] - 1 : 0);
        free(cpus);
    }
    fclose(f);
    mai_init(path);
    unlink(path);
    return mai_get_num_nodes() == nodes ? nodes : -1;
}
#endif
