/* SPDX-License-Identifier: BSD-3-Clause */
/* test_mai.c - host tests of libnumaplace_mai (the MAi-compatible API): config parsing, MAi's
 * array layouts, the block rules against numaplace's page maps, error paths (bad config,
 * unknown type, overflowing sizes, bad arguments: NULL/-1 + errno, no crash) and placement on
 * this machine's nodes (page by page with npl_query_pages). */
#define _GNU_SOURCE
#include "../../mai/mai_internal.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mai.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static void test_parse(void)
{
    struct mai_config c;
    CHECK(mai__parse_config("2\n0\n1\n2\n1\n2\n", &c) == 0 && c.nnodes == 2 && c.nodes[1] == 1 &&
              c.nthreads == 2 && c.cpus[0] == 1 && c.cpus[1] == 2,
          "conf2 format");
    CHECK(mai__parse_config(" 3 4 5 6 ", &c) == 0 && c.nnodes == 3 && c.nodes[2] == 6 &&
              c.nthreads == 0,
          "nodes only");
    const char *bad[] = {"", "0", "2 0", "2 0 0", "1 x", "1 0 2 5", "1 0 1 3 junk", "1 -1",
                         "1 0 -2", "1 0 1 -3", "99999999999 0", "257 0", "1 0 513"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        errno = 0;
        CHECK(mai__parse_config(bad[i], &c) == -1 && errno == EINVAL, "bad config '%s'", bad[i]);
    }
}

static void test_layout_pure(void)
{
    size_t ptrs, map, pg = 4096;
    long d3[3] = {3, 4, 5}, big[3] = {INT_MAX, INT_MAX, INT_MAX}, zero[2] = {4, 0};
    CHECK(mai__layout(3, d3, 8, DOUBLE, pg, &ptrs, &map) == 0 && ptrs == pg && map == 2 * pg,
          "3D layout: %zu %zu", ptrs, map);
    errno = 0;
    CHECK(mai__layout(3, big, 8, DOUBLE, pg, &ptrs, &map) == -1 && errno == EOVERFLOW, "overflow");
    errno = 0;
    CHECK(mai__layout(1, big, SIZE_MAX / 2, CHAR, pg, &ptrs, &map) == -1 && errno == EOVERFLOW,
          "overflow item");
    errno = 0;
    CHECK(mai__layout(2, zero, 8, DOUBLE, pg, &ptrs, &map) == -1 && errno == EINVAL, "zero dim");
    errno = 0;
    CHECK(mai__layout(1, d3, 8, 9, pg, &ptrs, &map) == -1 && errno == EINVAL, "unknown type");
}

/* the block rules of mai_*_rows/_columns/_3D equal numaplace's page rules on block indexes */
static void test_rules_match_numaplace(void)
{
    for (int M = 1; M <= 8; M++) {
        char desc[64];
        npl_topo *t;
        snprintf(desc, sizeof desc, "numa:%d core:1 pu:1", M);
        if (npl_topo_load_synthetic(&t, desc) < 0) {
            CHECK(0, "synthetic %s: %s", desc, npl_last_error());
            continue;
        }
        npl_policy_kind kinds[3] = {NPL_CYCLIC, NPL_SKEW_MAPP, NPL_PRIME_MAPP};
        enum mai_rule rules[3] = {MAI_RULE_CYCLIC, MAI_RULE_SKEW, MAI_RULE_PRIME};
        int primes[8] = {2, 2, 3, 5, 5, 7, 7, 11}, map[200];
        for (int k = 0; k < 3; k++) {
            npl_policy *pol;
            npl_policy_create(&pol, kinds[k], NULL, 0);
            if (k == 2)
                npl_policy_set_prime(pol, primes[M - 1]);
            int rc = npl_policy_map(pol, t, NULL, 200 * 4096, 4096, 0, 200, map);
            int same = rc == 0;
            for (size_t b = 0; same && b < 200; b++)
                same = map[b] == (int)mai__rule_index(rules[k], b, (size_t)M, (size_t)primes[M - 1]);
            CHECK(same, "rule %d on %d nodes differs from numaplace's map", k, M);
            npl_policy_free(pol);
        }
        npl_topo_destroy(t);
    }
    /* known answers (MAi: skew (b + b/M + 1) mod M; prime P=5 over M=3) */
    size_t skew[6] = {1, 2, 0, 2, 0, 1}, prime[10] = {0, 1, 2, 0, 1, 0, 1, 2, 2, 0};
    for (size_t b = 0; b < 6; b++)
        CHECK(mai__rule_index(MAI_RULE_SKEW, b, 3, 0) == skew[b], "skew b=%zu", b);
    for (size_t b = 0; b < 10; b++)
        CHECK(mai__rule_index(MAI_RULE_PRIME, b, 3, 5) == prime[b], "prime b=%zu", b);
}

static void test_units(void)
{
    struct mai_array a = {.ndim = 2, .dims = {4, 2048}, .item = 8, .data_bytes = 4 * 2048 * 8};
    CHECK(mai__unit_count(&a, MAI_ROWS) == 4 && mai__unit_count(&a, MAI_COLUMNS) == 2048 &&
              mai__unit_count(&a, MAI_PLANES) == 0,
          "2D unit counts");
    CHECK(mai__page_unit(&a, MAI_ROWS, 5, 4096) == 1, "page 5 is in row 1");
    CHECK(mai__page_unit(&a, MAI_COLUMNS, 5, 4096) == 512, "page 5 starts at column 512");
    struct mai_array b = {.ndim = 3, .dims = {6, 4, 512}, .item = 8, .data_bytes = 6 * 4 * 512 * 8};
    CHECK(mai__unit_count(&b, MAI_ROWS) == 24 && mai__unit_count(&b, MAI_PLANES) == 6, "3D counts");
    CHECK(mai__page_unit(&b, MAI_PLANES, 9, 4096) == 2 && mai__page_unit(&b, MAI_ROWS, 9, 4096) == 9 &&
              mai__page_unit(&b, MAI_COLUMNS, 9, 4096) == 1,
          "3D page 9: plane 2, row 9, column 1");
}

static void test_errors_before_init(void)
{
    errno = 0;
    CHECK(mai_alloc_1D(10, 8, DOUBLE) == NULL && errno == EPERM, "alloc before init");
    errno = 0;
    CHECK(mai_get_num_nodes() == -1 && errno == EPERM, "nodes before init");
    mai_init("/nonexistent/mai.cf");
    CHECK(mai_last_errno() == ENOENT, "missing config file: %d", mai_last_errno());
    char path[] = "/tmp/test_mai_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "2 0 x\n", 6) == 6, "temp file");
    close(fd);
    mai_init(path);
    CHECK(mai_last_errno() == EINVAL, "bad config content: %d", mai_last_errno());
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "1 200\n", 6) == 6, "temp file");
    close(fd);
    mai_init(path);
    CHECK(mai_last_errno() == EINVAL, "node this machine lacks: %d", mai_last_errno());
    unlink(path);
    CHECK(mai_alloc_2D(4, 4, 8, DOUBLE) == NULL && errno == EPERM, "still uninitialised");
}

static int all_on(const void *p, size_t len, int node)
{
    int nodes[4096];
    int n = npl_query_pages(p, len, nodes, 4096);
    for (int i = 0; i < n; i++)
        if (nodes[i] != node)
            return 0;
    return n > 0;
}

static void test_layouts(void)
{
    int **a = mai_alloc_2D(5, 7, sizeof(int), INT);
    CHECK(a != NULL, "alloc_2D: %s", strerror(errno));
    if (!a)
        return;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            a[i][j] = i * 7 + j;
    int ok = (uintptr_t)a[0] % (uintptr_t)getpagesize() == 0 && mai_get_realpointer(a) == a[0];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            ok = ok && &a[i][j] == a[0] + i * 7 + j && a[0][i * 7 + j] == i * 7 + j;
    CHECK(ok, "2D layout: row pointers into one contiguous block");
    CHECK(mai_getsize(a) == 5 * 7 * sizeof(int), "getsize");
    double ***t = mai_alloc_3D(3, 4, 5, sizeof(double), DOUBLE);
    ok = t != NULL;
    for (int i = 0; ok && i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++)
                ok = ok && &t[i][j][k] == t[0][0] + (i * 4 + j) * 5 + k;
    CHECK(ok, "3D layout");
    mai_stats s = mai_allocinfo();
    CHECK(s.nmmaps == 2, "allocinfo: %zu arrays", s.nmmaps);
    mai_free_array(t);
    errno = 0;
    mai_free_array(t);
    CHECK(errno == ENOENT, "double free: ENOENT");
    errno = 0;
    CHECK(mai_alloc_1D(10, 8, 42) == NULL && errno == EINVAL, "unknown type");
    CHECK(mai_alloc_1D(-1, 8, DOUBLE) == NULL && errno == EINVAL, "negative size");
    CHECK(mai_alloc_3D(INT_MAX, INT_MAX, INT_MAX, 8, DOUBLE) == NULL && errno == EOVERFLOW,
          "overflow");
    mai_free_array(a);
}

static void test_policies_here(void)
{
    int node0 = npl_topo_node_id(npl_topo_self(), 0);
    double **a = mai_alloc_2D(16, 1024, sizeof(double), DOUBLE);
    size_t len = 16 * 1024 * sizeof(double);
    void (*page_pols[])(void *) = {mai_cyclic, mai_skew_mapp, mai_bind_all, mai_bind_rows,
                                   mai_bind_columns, mai_bind_all_mynode};
    for (size_t i = 0; i < sizeof page_pols / sizeof *page_pols; i++) {
        page_pols[i](a);
        CHECK(mai_last_errno() == 0 && all_on(a[0], len, node0), "policy %zu: %d", i,
              mai_last_errno());
    }
    mai_cyclic_rows(a, 3);
    CHECK(mai_last_errno() == 0 && all_on(a[0], len, node0) && mai_get_mempol(a) == CYCLIC_B,
          "cyclic_rows");
    mai_prime_mapp(a, 4);
    CHECK(mai_last_errno() == EINVAL, "prime 4 is not a prime");
    mai_prime_mapp_rows(a, 4, 1);
    CHECK(mai_last_errno() == EINVAL, "prime_mapp_rows: 4 is not a prime");
    mai_prime_mapp_rows(a, 2, 1);
    CHECK(mai_last_errno() == 0 && all_on(a[0], len, node0), "prime_mapp_rows(2, 1)");
    mai_cyclic_3D(a, 1);
    CHECK(mai_last_errno() == EINVAL, "planes of a 2D array");
    mai_cyclic_sn(a, 1, NULL);
    CHECK(mai_last_errno() == EINVAL, "_sn with NULL nodes");
    mai_migrate_rows(a, (unsigned long)node0, 4, 14);
    CHECK(mai_last_errno() == EINVAL, "rows outside the array");
    mai_migrate_rows(a, (unsigned long)node0, 4, 2);
    CHECK(mai_last_errno() == 0, "migrate_rows");
    mai_migrate_columns(a, (unsigned long)node0, 512, 512);
    CHECK(mai_last_errno() == 0 && all_on(a[0], len, node0), "migrate_columns");
    int x;
    mai_cyclic(&x);
    CHECK(mai_last_errno() == ENOENT, "not a MAi array");
    int one = node0 + 1;
    mai_nodes(1, &one);
    CHECK(mai_regularbind(a) == -1 && errno == EINVAL, "regularbind without mai_bytes");
    mai_bytes(a, 3 * 4096);
    CHECK(mai_regularbind(a) == 0 && all_on(a[0], len, node0), "regularbind");
    CHECK(mai_irregularbind((char *)a[0] + 8, 4096, one) == -1 && errno == EINVAL, "unaligned");
    CHECK(mai_irregularbind(a[0], 4096, one) == 0, "irregularbind");
    int *nodes1 = mai_get_arraynodes(a);
    CHECK(nodes1 && nodes1[0] == one && nodes1[1] == -1, "arraynodes 1-based");
    mai_set_arraynodes(a, 2, (int[]){3, 1}); /* MAi: get gives back what set stored */
    nodes1 = mai_get_arraynodes(a);
    CHECK(mai_last_errno() == 0 && nodes1 && nodes1[0] == 3 && nodes1[1] == 1 && nodes1[2] == -1,
          "set_arraynodes then get_arraynodes: the same ids (%d %d)", nodes1 ? nodes1[0] : -9,
          nodes1 ? nodes1[1] : -9);
    mai_set_arraynodes(a, 1, (int[]){0});
    CHECK(mai_last_errno() == EINVAL, "set_arraynodes: node 0 is not a 1-based id");
    mai_next_touch(a);
    CHECK(mai_last_errno() == 0, "next_touch: %d", mai_last_errno());
    a[3][5] = 1.5;
    CHECK(a[3][5] == 1.5 && all_on(a[0], len, node0), "next-touch resolved");
    CHECK(mai_number_page_migration(NULL, 0) >= 0 && mai_number_thread_migration(NULL, 0) == -1 &&
              errno == ENOSYS,
          "statistics");
    CHECK(mai_numafactor(one, one) == 1.0f, "numafactor");
    CHECK(mai_mv_pointer_cols(a[0], 1) == NULL && errno == ENOSYS, "uncovered call: ENOSYS");
}

/* npl_place_pages (what the block policies and migrations place through): arguments, holes,
 * pages left alone stay absent, listed pages land on their node with their data */
static void test_place_pages(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    int node0 = npl_topo_node_id(npl_topo_self(), 0), nodes[4] = {node0, -1, node0, NPL_NODE_ANY};
    char *m = mmap(NULL, 6 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    m[0] = 5;
    int bad_node[4] = {node0, 1 << 30, node0, node0}, absent[4] = {-1, 4000, -1, -1};
    CHECK(npl_place_pages(m, 4 * pg, NULL, 0) == -1 && errno == EINVAL, "NULL list");
    CHECK(npl_place_pages(m + 1, 4 * pg, nodes, 0) == -1 && errno == EINVAL, "unaligned");
    CHECK(npl_place_pages(m, 0, nodes, 0) == -1 && errno == EINVAL, "empty");
    CHECK(npl_place_pages(m, 4 * pg, nodes, NPL_F_THP) == -1 && errno == EINVAL, "THP flag");
    CHECK(npl_place_pages(m, 4 * pg, bad_node, 0) == -1 && errno == EINVAL, "node 2^30");
    CHECK(npl_place_pages(m, 4 * pg, absent, 0) == -1 && errno == EINVAL, "node 4000 does not exist: %d", errno);
    CHECK(npl_place_pages((void *)(uintptr_t)pg, pg, nodes, 0) == -1 && errno == EFAULT, "hole");
    CHECK(npl_place_pages((void *)(UINTPTR_MAX & ~(uintptr_t)(pg - 1)), 2 * pg, nodes, 0) == -1 &&
          errno == EOVERFLOW, "wraps");
    int none[4] = {-1, -1, -1, -1};
    CHECK(npl_place_pages(m, 4 * pg, none, 0) == 0, "nothing listed");
    CHECK(npl_place_pages(m, 4 * pg, nodes, NPL_F_STRICT) == 0, "place: %s", npl_last_error());
    int got[4];
    CHECK(npl_query_pages(m, 4 * pg, got, 4) == 4 && got[0] == node0 && got[2] == node0 &&
              got[1] < 0 && got[3] < 0 && m[0] == 5,
          "listed pages on node %d, the others untouched: %d %d %d %d", node0, got[0], got[1],
          got[2], got[3]);
    munmap(m + 4 * pg, 2 * pg);
    CHECK(npl_place_pages(m, 5 * pg, (int[5]){node0, -1, -1, -1, node0}, 0) == -1 &&
          errno == EFAULT, "listed page unmapped");
    mprotect(m, pg, PROT_READ);
    CHECK(npl_place_pages(m, pg, nodes, 0) == -1 && errno == EACCES, "read-only");
    munmap(m, 4 * pg);
}

int main(void)
{
    test_parse();
    test_layout_pure();
    test_rules_match_numaplace();
    test_units();
    test_errors_before_init();
    mai_init(NULL);
    CHECK(mai_last_errno() == 0 && mai_get_num_nodes() == mai_get_maxnodes(), "automatic init");
    test_layouts();
    test_policies_here();
    test_place_pages();
    mai_final();
    CHECK(mai_allocinfo().nmmaps == 0 && mai_get_num_nodes() == -1, "final releases everything");
    return check_summary("test_mai");
}
