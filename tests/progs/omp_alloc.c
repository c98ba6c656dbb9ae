/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_alloc.c - a program that uses OpenMP's own allocators with the omp_atk_partition trait and
 * counts, page by page (move_pages), whether its memory is where the trait says. Built with gcc
 * (libgomp) and clang (libomp): run under `numaplace run` (the omp_* calls interposed); built
 * with -DNPL_LIB it calls numaplace/omp.h's npl_omp_* itself. The nodes: those of the CPUs the
 * process may use, in ascending order (L[0..K-1]). Cases, each an array of 4 MiB + 100 bytes:
 *   blocked      omp_alloc: page i on L[i / ceil(pages / K)]
 *   interleaved  omp_alloc: page i on L[i % K]
 *   aligned      omp_aligned_alloc(64) of the blocked allocator: aligned, blocked
 *   calloc       omp_calloc of the interleaved allocator: zero, interleaved
 *   part_size    interleaved with OpenMP 6.0's omp_atk_part_size (key 14: neither GCC 12's nor
 *                clang 14's omp.h has it, and their runtimes refuse it) of 3 pages + 1 byte:
 *                parts of 4 pages, page i on L[(i / 4) % K]
 *   realloc      a blocked half array filled, grown by omp_realloc: contents kept, blocked
 *   nearest      thread t of a team of K, bound to L[t]'s first CPU (OMP_PLACES, set and the
 *                program run again when unset), allocates: every page on L[t]
 *   clause       `allocate(nearest: buf)` on a private 1 MiB array of each thread: on L[t]
 *                (the pages wholly inside it; not built by clang 14, see below)
 *   big-align    omp_aligned_alloc(1 MiB) of the blocked allocator: aligned (contents only)
 *   default      omp_default_mem_alloc: works (first touch: not counted)
 * `omp_alloc environment`, run under the policy cyclic (numaplace run --policy, or
 * NUMAPLACE_POLICY for the linked build): one array of an environment allocator, interleaved.
 * Prints "omp_alloc CASE: R of P pages where the trait says" per case and a last line
 * "omp_alloc: N cases, W wrong"; exit 0 when every page and every content check is right, 1
 * otherwise, 2 when it cannot run. `omp_alloc none` prints the same counts without asking for a
 * partition (the control: first touch puts the pages elsewhere, and the counts must show it). */
#define _GNU_SOURCE
#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef NPL_LIB
#include <numaplace/omp.h>
#define omp_init_allocator npl_omp_init_allocator
#define omp_destroy_allocator npl_omp_destroy_allocator
#define omp_alloc npl_omp_alloc
#define omp_aligned_alloc npl_omp_aligned_alloc
#define omp_calloc npl_omp_calloc
#define omp_realloc npl_omp_realloc
#define omp_free npl_omp_free
#endif

#define SIZE ((4u << 20) + 100)
#define MAXN 64

static int L[MAXN], K, first_cpu[MAXN], cases, wrong;
static long PS;

static void local_nodes(void)
{
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    for (int n = 0; n < MAXN; n++) {
        char path[96], buf[4096];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", n);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        int first = -1;
        for (char *p = buf; *p && *p != '\n';) { /* "0-3,8,10-11" */
            int a = (int)strtol(p, &p, 10), b = a;
            if (*p == '-')
                b = (int)strtol(p + 1, &p, 10);
            for (int c = a; c <= b && first < 0; c++)
                if (c < CPU_SETSIZE && CPU_ISSET(c, &set))
                    first = c;
            if (*p == ',')
                p++;
        }
        if (first >= 0) {
            first_cpu[K] = first;
            L[K++] = n;
        }
    }
}

/* each page's node (-errno when the kernel has none) */
static int nodes_of(const void *p, size_t bytes, int *nodes)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PS - 1);
    size_t n = ((uintptr_t)p + bytes - a + (size_t)PS - 1) / (size_t)PS;
    void **pages = malloc(n * sizeof *pages);
    if (!pages)
        return -1;
    for (size_t i = 0; i < n; i++)
        pages[i] = (char *)a + i * (size_t)PS;
    long rc = syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, nodes, 0);
    free(pages);
    return rc == 0 ? (int)n : -1;
}

/* the pages of [p, p + bytes) against want(page index); ok: the content checks */
static void count(const char *name, const void *p, size_t bytes, int (*want)(size_t, size_t),
                  int ok)
{
    int nodes[(SIZE + (1u << 20)) / 4096 + 2];
    int n = p ? nodes_of(p, bytes, nodes) : -1, right = 0;
    for (int i = 0; i < n; i++)
        right += nodes[i] == want((size_t)i, (size_t)n);
    cases++;
    wrong += n <= 0 || right != n || !ok;
    printf("omp_alloc %s: %d of %d pages where the trait says%s\n", name, right, n,
           ok ? "" : " (CONTENTS WRONG)");
}

static int blocked(size_t i, size_t n) { return L[i / ((n + (size_t)K - 1) / (size_t)K)]; }
static int interleaved(size_t i, size_t n) { (void)n; return L[i % (size_t)K]; }
static int parts_of_4(size_t i, size_t n) { (void)n; return L[i / 4 % (size_t)K]; }

static int fill_check(double *a, size_t n, double seed, int check)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (check)
            ok &= a[i] == seed + (double)i;
        else
            a[i] = seed + (double)i;
    }
    return ok;
}

static omp_allocator_handle_t make(int partition)
{
    omp_alloctrait_t t[1] = {{omp_atk_partition, (omp_uintptr_t)partition}};
    return omp_init_allocator(omp_default_mem_space, partition ? 1 : 0, t);
}

static int node_now(void)
{
    unsigned cpu = 0, node = 0;
    return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int)node : -1;
}

int main(int argc, char **argv)
{
    int none = argc > 1 && !strcmp(argv[1], "none"); /* the control: no partition asked */
    PS = sysconf(_SC_PAGESIZE);
    const char *known = getenv("OMP_ALLOC_NODES");
    if (known) { /* the nodes found before the runtime bound this thread to its first place */
        for (char *p = (char *)known; *p && K < MAXN; p += *p == ',')
            L[K++] = (int)strtol(p, &p, 10);
    } else {
        local_nodes();
    }
    if (!K)
        return 2;
    if (!getenv("OMP_PLACES")) { /* thread t bound to L[t]'s first CPU, from the start */
        char places[MAXN * 8] = "", nodes[MAXN * 4] = "", one[16];
        for (int t = 0; t < K; t++) {
            snprintf(one, sizeof one, "%s{%d}", t ? "," : "", first_cpu[t]);
            strcat(places, one);
            snprintf(one, sizeof one, "%s%d", t ? "," : "", L[t]);
            strcat(nodes, one);
        }
        setenv("OMP_PLACES", places, 1);
        setenv("OMP_PROC_BIND", "true", 1);
        setenv("OMP_ALLOC_NODES", nodes, 1);
        execv("/proc/self/exe", argv);
        return 2;
    }
    if (argc > 1 && !strcmp(argv[1], "environment")) { /* run under a cyclic policy */
        omp_allocator_handle_t env = make(omp_atv_environment);
        double *e = env ? omp_alloc(SIZE, env) : NULL;
        int fine = e && fill_check(e, SIZE / sizeof(double), 9, 0) == 1 &&
                   fill_check(e, SIZE / sizeof(double), 9, 1);
        count("environment (cyclic)", e, SIZE, interleaved, fine);
        omp_free(e, env);
        omp_destroy_allocator(env);
        printf("omp_alloc: %d cases, %d wrong\n", cases, wrong);
        return wrong ? 1 : 0;
    }
    omp_allocator_handle_t blk = make(none ? 0 : omp_atv_blocked);
    omp_allocator_handle_t ilv = make(none ? 0 : omp_atv_interleaved);
    omp_allocator_handle_t near = make(none ? 0 : omp_atv_nearest);
    if (!blk || !ilv || !near) {
        printf("omp_alloc: omp_init_allocator refused a partition\n");
        return 2;
    }
#ifdef NPL_LIB
    printf("omp_alloc: partitions %d %d %d, omp_default_mem_alloc %d\n",
           npl_omp_allocator_partition(blk), npl_omp_allocator_partition(ilv),
           npl_omp_allocator_partition(near), npl_omp_allocator_partition(omp_default_mem_alloc));
    { /* part_size 0 is no size; part_size alone is the default partition, environment */
        omp_alloctrait_t zero[2] = {{omp_atk_partition, omp_atv_interleaved},
                                    {(omp_alloctrait_key_t)NPL_OMP_ATK_PART_SIZE, 0}};
        errno = 0;
        omp_allocator_handle_t z = omp_init_allocator(omp_default_mem_space, 2, zero);
        int zerr = errno;
        omp_alloctrait_t only[1] = {{(omp_alloctrait_key_t)NPL_OMP_ATK_PART_SIZE, 8192}};
        omp_allocator_handle_t alone = omp_init_allocator(omp_default_mem_space, 1, only);
        printf("omp_alloc: part_size 0 %s, part_size alone partition %d\n",
               !z && zerr == EINVAL ? "refused EINVAL" : "ACCEPTED", npl_omp_allocator_partition(alone));
        omp_destroy_allocator(alone);
    }
#endif
    size_t n = SIZE / sizeof(double);
    double *a = omp_alloc(SIZE, blk);
    int ok = a && fill_check(a, n, 1, 0) == 1 && fill_check(a, n, 1, 1);
    count("blocked", a, SIZE, blocked, ok);
    omp_free(a, blk);

    a = omp_alloc(SIZE, ilv);
    ok = a && fill_check(a, n, 2, 0) == 1 && fill_check(a, n, 2, 1);
    count("interleaved", a, SIZE, interleaved, ok);
    omp_free(a, ilv);

    a = omp_aligned_alloc(64, SIZE, blk);
    ok = a && (uintptr_t)a % 64 == 0 && fill_check(a, n, 3, 0) == 1 && fill_check(a, n, 3, 1);
    count("aligned", a, SIZE, blocked, ok);
    omp_free(a, blk);

    a = omp_calloc(n, sizeof(double), ilv);
    ok = a != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = a[i] == 0;
    if (a)
        fill_check(a, n, 4, 0);
    count("calloc", a, SIZE, interleaved, ok);
    omp_free(a, ilv);

    omp_alloctrait_t ps_traits[2] = {{omp_atk_partition, omp_atv_interleaved},
                                     {(omp_alloctrait_key_t)14, (omp_uintptr_t)(3 * PS + 1)}};
    omp_allocator_handle_t parts = none ? 0 : omp_init_allocator(omp_default_mem_space, 2, ps_traits);
    a = parts ? omp_alloc(SIZE, parts) : NULL; /* none, or a runtime alone: not counted right */
    ok = a && fill_check(a, n, 10, 0) == 1 && fill_check(a, n, 10, 1);
    count("part_size", a, SIZE, parts_of_4, ok);
    if (parts) {
        omp_free(a, parts);
        omp_destroy_allocator(parts);
    }

    a = omp_alloc(SIZE / 2, blk);
    if (a)
        fill_check(a, n / 2, 5, 0);
    double *b = a ? omp_realloc(a, SIZE, blk, blk) : NULL;
    ok = b && fill_check(b, n / 2, 5, 1);
    if (b)
        fill_check(b, n, 6, 0);
    count("realloc", b, SIZE, blocked, ok);
    omp_free(b, blk);

    /* nearest: each thread of a team of K allocates on its own node */
    int near_right[MAXN] = {0}, near_n[MAXN] = {0}, near_ok[MAXN] = {0}, near_node[MAXN];
#pragma omp parallel num_threads(K)
    {
        int t = omp_get_thread_num(), nodes[SIZE / 4096 + 2];
        near_node[t] = node_now();
        double *x = omp_alloc(SIZE, near);
        near_ok[t] = x && fill_check(x, n, t, 0) == 1 && fill_check(x, n, t, 1);
        near_n[t] = x ? nodes_of(x, SIZE, nodes) : -1;
        for (int i = 0; i < near_n[t]; i++)
            near_right[t] += nodes[i] == L[t];
        omp_free(x, near);
    }
    for (int t = 0; t < K; t++) {
        char name[48];
        snprintf(name, sizeof name, "nearest (thread %d on node %d)", t, near_node[t]);
        cases++;
        wrong += near_n[t] <= 0 || near_right[t] != near_n[t] || !near_ok[t] || near_node[t] != L[t];
        printf("omp_alloc %s: %d of %d pages where the trait says%s\n", name, near_right[t],
               near_n[t], near_ok[t] && near_node[t] == L[t] ? "" : " (CONTENTS OR THREAD WRONG)");
    }

/* the allocate clause: the runtime's entry (GOMP_alloc). clang 14 passes an allocator that is
 * not a predefined one to __kmpc_alloc cut to 32 bits (libomp alone crashes on it): not there */
#if !defined(NPL_LIB) && !(defined(__clang__) && __clang_major__ < 15)
    int cl_right[MAXN] = {0}, cl_n[MAXN] = {0};
    double buf[(1u << 20) / sizeof(double)];
#pragma omp parallel num_threads(K) private(buf) allocate(near : buf)
    {
        int t = omp_get_thread_num(), nodes[(1u << 20) / 4096 + 2];
        for (size_t i = 0; i < sizeof buf / sizeof *buf; i++)
            buf[i] = (double)i;
        cl_n[t] = nodes_of(buf, sizeof buf, nodes);
        /* the pages wholly inside the copy (the runtime may not page-align it) */
        int first = (uintptr_t)buf % (uintptr_t)PS != 0, last = cl_n[t] - 1;
        last -= ((uintptr_t)buf + sizeof buf) % (uintptr_t)PS != 0;
        cl_n[t] = last - first + 1;
        for (int i = first; i <= last; i++)
            cl_right[t] += nodes[i] == L[t];
    }
    for (int t = 0; t < K; t++) {
        cases++;
        wrong += cl_n[t] <= 0 || cl_right[t] != cl_n[t];
        printf("omp_alloc clause (thread %d): %d of %d pages where the trait says\n", t,
               cl_right[t], cl_n[t]);
    }
#endif

    a = omp_aligned_alloc(1u << 20, SIZE, blk);
    ok = a && (uintptr_t)a % (1u << 20) == 0 && fill_check(a, n, 7, 0) == 1 &&
         fill_check(a, n, 7, 1);
    cases++;
    wrong += !ok;
    printf("omp_alloc big-align: %s\n", ok ? "aligned, contents kept" : "WRONG");
    omp_free(a, blk);

    a = omp_alloc(SIZE, omp_default_mem_alloc);
    ok = a && fill_check(a, n, 8, 0) == 1 && fill_check(a, n, 8, 1);
    cases++;
    wrong += !ok;
    printf("omp_alloc default: %s\n", ok ? "contents kept" : "WRONG");
    omp_free(a, omp_default_mem_alloc);

    omp_destroy_allocator(blk);
    omp_destroy_allocator(ilv);
    omp_destroy_allocator(near);
    printf("omp_alloc: %d cases, %d wrong\n", cases, wrong);
    return wrong ? 1 : 0;
}
