/* SPDX-License-Identifier: BSD-3-Clause */
/* guest_thp - THP "always" and the arrays' birth (docs/RELIABILITY.md, "THP straddling"):
 *   guest_thp --nodes N --cpus-per-node K
 * Under THP "always", an anonymous read-write mapping that merges with a read-write neighbour
 * can have its pages populated by the neighbour's first touch: the fault takes one 2 MiB page
 * straddling both, on the toucher's node; MADV_NOHUGEPAGE afterwards splits the PMD but keeps
 * the page, and migrating any of its 512 base pages moves them all. Before the fix, an array
 * mapped read-write and only then advised MADV_NOHUGEPAGE was exposed in between (the soak saw
 * runs of a fresh array's pages move, about one run in three).
 *   1. control, raw mappings: the hazard exists on this kernel (checked: else nothing is proved);
 *   2. the library's array: this program interposes mmap, and when the library maps the array
 *      a neighbour is mapped right below it, at the worst place (the 2 MiB page under the
 *      neighbour's first byte extends 1 MiB into the array) and touched before mmap returns.
 *      No page of the array may be present then; placement is exact; and it stays exact when
 *      the neighbour's page is migrated to another node. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define ARRAY_BYTES (8 * MIB)
#define MF_MOVE (1 << 1) /* MPOL_MF_MOVE */
static long PSZ;

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* a 2 MiB-aligned address with `len` free bytes above it (reserved, then released) */
static char *free_aligned(size_t len)
{
    char *res = real_mmap(NULL, len + 2 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (res == MAP_FAILED)
        return NULL;
    munmap(res, len + 2 * MIB);
    return (char *)(((uintptr_t)res + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
}

/* pages of [a, a + n pages) present, and the node of the first one (-1 if absent) */
static int present(const char *a, int n, int *first_node)
{
    void *pg[512];
    int st[512], c = 0;
    for (int i = 0; i < n && i < 512; i++)
        pg[i] = (char *)a + (size_t)i * (size_t)PSZ;
    if (syscall(SYS_move_pages, 0, n, pg, NULL, st, 0) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        c += st[i] >= 0;
    if (first_node)
        *first_node = st[0];
    return c;
}

static int move_page(void *p, int node)
{
    int st = -1;
    long r = syscall(SYS_move_pages, 0, 1, &p, &node, &st, MF_MOVE);
    return r < 0 ? -1 : st;
}

/* ---- the interposer: the library's mmap of ARRAY_BYTES gets a neighbour at the worst place */
static atomic_int hook_armed;
static char *neighbour;         /* [neighbour, neighbour + 1 MiB), touched */
static int populated_early = -1; /* array pages present right after the neighbour's touch */

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    int one = 1;
    if (addr || len != ARRAY_BYTES || !(flags & MAP_ANONYMOUS) ||
        !atomic_compare_exchange_strong(&hook_armed, &one, 0))
        return real_mmap(addr, len, prot, flags, fd, off);
    char *r = free_aligned(len + MIB);
    char *a = r ? real_mmap(r + MIB, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off) : MAP_FAILED;
    if (a != r + MIB) /* lost a race for the address: behave as plain mmap */
        return a == MAP_FAILED ? real_mmap(addr, len, prot, flags, fd, off) : a;
    neighbour = real_mmap(r, MIB, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (neighbour != r) {
        neighbour = NULL;
        return a;
    }
    neighbour[0] = 1; /* the neighbour's first touch */
    populated_early = present(a, (int)(MIB / (size_t)PSZ), NULL);
    return a;
}

static int thp_always(void)
{
    char buf[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
    }
    return strstr(buf, "[always]") != NULL;
}

/* 1. raw mappings: the victim read-write before the neighbour comes */
static int control(void)
{
    char *r = free_aligned(6 * MIB);
    char *victim = r ? real_mmap(r + MIB, 5 * MIB, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                     : MAP_FAILED;
    char *n = r ? real_mmap(r, MIB, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                : MAP_FAILED;
    int c = -1;
    if (victim == r + MIB && n == r) {
        n[0] = 1;
        c = present(victim, (int)(MIB / (size_t)PSZ), NULL);
    }
    if (victim != MAP_FAILED)
        munmap(victim, 5 * MIB);
    if (n != MAP_FAILED)
        munmap(n, MIB);
    return c;
}

/* 3. memory already backed by THPs, placed page by page: a raw range (PMD-mapped THPs and one
 * straddling its start) and an NPL_F_THP array re-placed without NPL_F_THP */
static void test_thp_backed(const npl_policy *cyc)
{
    size_t len = 6 * MIB, npages = len / (size_t)PSZ;
    char *r = free_aligned(8 * MIB);
    char *m = r ? real_mmap(r, 8 * MIB, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                : MAP_FAILED;
    CHECK(m == r && m != NULL, "8 MiB raw mapping at a 2 MiB boundary");
    if (m != r || !m)
        return;
    for (size_t i = 0; i < 8 * MIB; i++)
        m[i] = (char)(i * 13);
    char *range = m + MIB; /* starts inside the first huge page */
    uint64_t sum = checksum((unsigned char *)range, len);
    int huge = present(m, 1, NULL);
    CHECK(npl_place_range(range, len, cyc, NULL, NPL_F_STRICT) == 0,
          "place_range over THP-backed memory: %s", npl_last_error());
    void **pg = malloc(npages * sizeof *pg);
    int *where = malloc(npages * sizeof *where), *want = malloc(npages * sizeof *want);
    size_t right = 0;
    for (size_t i = 0; i < npages; i++)
        pg[i] = range + i * (size_t)PSZ;
    syscall(SYS_move_pages, 0, npages, pg, NULL, where, 0);
    npl_policy_map(cyc, NULL, NULL, len, (size_t)PSZ, 0, npages, want);
    for (size_t i = 0; i < npages; i++)
        right += where[i] == want[i];
    CHECK(right == npages, "THP-backed raw range: %zu of %zu pages on their node", right, npages);
    CHECK(checksum((unsigned char *)range, len) == sum, "raw range: data changed");
    printf("raw range over huge pages (%d): %zu of %zu pages on their node\n", huge, right, npages);
    munmap(m, 8 * MIB);

    npl_shape shape = {1, 1, {len, 0, 0}, NPL_ROW_MAJOR};
    npl_policy *one = pol("bind_all");
    unsigned char *a = npl_alloc_array(&shape, one, NPL_F_THP);
    CHECK(a != NULL, "THP array: %s", npl_last_error());
    if (a) {
        for (size_t i = 0; i < len; i++)
            a[i] = (unsigned char)(i * 5);
        sum = checksum(a, len);
        struct npl_check ck;
        CHECK(npl_apply(a, cyc, NPL_F_STRICT) == 0, "apply cyclic to a THP array: %s",
              npl_last_error());
        CHECK(npl_check(a, &ck) == 0 && ck.placed == npages && ck.misplaced == 0,
              "THP array re-placed page by page: %zu of %zu placed, %zu misplaced", ck.placed,
              npages, ck.misplaced);
        CHECK(checksum(a, len) == sum, "THP array: data changed");
        npl_free(a);
    }
    npl_policy_free(one);
    free(pg);
    free(where);
    free(want);
}

int main(int argc, char **argv)
{
    int N = 0, K = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    PSZ = sysconf(_SC_PAGESIZE);
    guest_args(argc, argv, &N, &K);
    int nodes[64], nn = usable_nodes(nodes, 64);
    if (!thp_always() || nn < 2) {
        SKIP("thp-always", "guest_thp needs THP \"always\" and 2 nodes with memory (THP always %d, "
             "%d nodes)", thp_always(), nn);
        return check_summary("guest_thp");
    }
    int c = control();
    printf("control: a raw read-write mapping had %d of %zu pages populated by its neighbour's "
           "first touch\n",
           c, MIB / (size_t)PSZ);
    /* the hazard must exist here, else the array checks below would prove nothing */
    CHECK(c > 0, "control: a raw mapping's first touch populated pages of its neighbour's 2 MiB "
                 "frame (a straddling THP): %d", c);
    if (c <= 0)
        return check_summary("guest_thp");
    npl_shape shape = {1, 1, {ARRAY_BYTES, 0, 0}, NPL_ROW_MAJOR};
    npl_policy *cyc = pol("cyclic");
    atomic_store(&hook_armed, 1);
    unsigned char *a = npl_alloc_array(&shape, cyc, NPL_F_STRICT);
    CHECK(a != NULL, "npl_alloc_array: %s", npl_last_error());
    CHECK(atomic_load(&hook_armed) == 0 && neighbour && (char *)a == neighbour + MIB,
          "the interposer did not place a neighbour below the array (armed %d, neighbour %p, "
          "array %p)",
          atomic_load(&hook_armed), (void *)neighbour, (void *)a);
    if (!a || !neighbour)
        return check_summary("guest_thp");
    CHECK(populated_early == 0,
          "%d pages of the array were populated by the neighbour's first touch before placement",
          populated_early);
    struct npl_check ck;
    size_t npages = ARRAY_BYTES / (size_t)PSZ;
    CHECK(npl_check(a, &ck) == 0 && ck.placed == npages && ck.misplaced == 0,
          "after placement: %zu of %zu placed, %zu misplaced", ck.placed, npages, ck.misplaced);
    for (size_t i = 0; i < ARRAY_BYTES; i++)
        a[i] = (unsigned char)(i * 7);
    uint64_t sum = checksum(a, ARRAY_BYTES);
    /* the neighbour's page moves: with a straddling THP, 256 array pages would move with it */
    int nnode = -1;
    present(neighbour, 1, &nnode);
    int target = nodes[0] == nnode ? nodes[1] : nodes[0];
    int st = move_page(neighbour, target);
    CHECK(st == target, "the neighbour's page did not move to node %d (status %d)", target, st);
    CHECK(npl_check(a, &ck) == 0 && ck.placed == npages && ck.misplaced == 0,
          "after the neighbour moved to node %d: %zu of %zu placed, %zu misplaced", target,
          ck.placed, npages, ck.misplaced);
    CHECK(checksum(a, ARRAY_BYTES) == sum, "data changed");
    printf("array %p: %zu pages cyclic over %d nodes, %d populated early, neighbour moved %d -> "
           "%d\n",
           (void *)a, npages, nn, populated_early, nnode, target);
    npl_free(a);
    munmap(neighbour, MIB);
    test_thp_backed(cyc);
    npl_policy_free(cyc);
    return check_summary("guest_thp");
}
