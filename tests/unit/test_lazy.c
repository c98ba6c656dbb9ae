/* SPDX-License-Identifier: BSD-3-Clause */
/* test_lazy - which maps have a lazy form (src/place/place_lazy.c), on synthetic topologies:
 * cyclic over nodes in increasing order or a rotation of it is one interleave, with the residue
 * the array's start must have; other orders, skew_mapp, prime_mapp, random and small blocks need
 * populated pages; bind_all, one node and large blocks are runs, counted exactly; THP, hugetlb
 * and STRICT are never lazy. Then the start addresses: an interleave starting at page index x puts
 * page i on the ((x + i) mod M)-th node of the mask, so a start is good when x mod M is the
 * rotation (checked against that formula for every start of a window). */
#include "check.h"
#include "place/place.h"

#include <unistd.h>

static npl_topo *synth(const char *desc)
{
    npl_topo *t = NULL;
    if (npl_topo_load_synthetic(&t, desc) < 0) {
        printf("FAIL: cannot load synthetic topology %s: %s\n", desc, npl_last_error());
        exit(2);
    }
    return t;
}

static struct npl_lazy lazy(const npl_topo *t, const char *pol, size_t bytes, size_t align,
                            unsigned flags, int threads)
{
    npl_policy *p = NULL;
    npl_plan *pl = NULL;
    struct npl_lazy lz = {-1, 0, 0};
    if (npl_policy_parse(&p, pol) == 0 && npl_plan_create(&pl, p, t, threads) == 0)
        npl__lazy_kind(pl, NULL, bytes, align, flags, &lz);
    npl_plan_free(pl);
    npl_policy_free(p);
    return lz;
}

#define KIND(t, pol, bytes, align, flags, want_kind, want_runs, want_rot)                         \
    do {                                                                                         \
        struct npl_lazy got = lazy(t, pol, bytes, align, flags, 4);                               \
        CHECK(got.kind == (want_kind) && got.runs == (size_t)(want_runs) &&                      \
                  got.rot == (size_t)(want_rot),                                                 \
              "%s, %zu bytes, align %zu, flags 0x%x: kind %d runs %zu rot %zu, want %d %d %d",     \
              pol, (size_t)(bytes), (size_t)(align), (unsigned)(flags), got.kind, got.runs,       \
              got.rot, (int)(want_kind), (int)(want_runs), (int)(want_rot));                      \
    } while (0)

int main(void)
{
    npl_topo *t4 = synth("numa:4 core:2 pu:1"), *t3 = synth("numa:3 core:2 pu:1");
    size_t MiB = 1 << 20, psz = (size_t)sysconf(_SC_PAGESIZE);
    enum { NO = NPL__LAZY_NO, IL = NPL__LAZY_INTERLEAVE, RUNS = NPL__LAZY_RUNS };
    KIND(t4, "cyclic", 8 * MiB, 0, 0, IL, 1, 0);
    KIND(t4, "cyclic@2,3,0,1", 8 * MiB, 0, 0, IL, 1, 2);
    KIND(t4, "cyclic@3,0,1,2", 8 * MiB, 0, 0, IL, 1, 3);
    KIND(t4, "cyclic@1,0,2,3", 8 * MiB, 0, 0, NO, 0, 0);   /* not a rotation */
    KIND(t4, "cyclic@1,2,3,0", 8 * MiB, 8192, 0, NO, 0, 0); /* rot 1: no 2-page multiple */
    KIND(t4, "cyclic@2,3,0,1", 8 * MiB, 8192, 0, IL, 1, 2);
    KIND(t4, "cyclic@2", 8 * MiB, 0, 0, RUNS, 1, 0);        /* one node */
    KIND(t3, "cyclic", 8 * MiB, 2 * MiB, 0, IL, 1, 0);
    KIND(t4, "bind_all", 8 * MiB, 0, 0, RUNS, 1, 0);
    KIND(t4, "cyclic_block:16", 8 * MiB, 0, 0, RUNS, 128, 0); /* 2048 pages / 16 */
    KIND(t4, "cyclic_block:4", 8 * MiB, 0, 0, NO, 0, 0);     /* 512 runs > 256 */
    KIND(t4, "cyclic_block:8", 8 * MiB, 0, 0, RUNS, 256, 0); /* the bound */
    KIND(t4, "skew_mapp", 8 * MiB, 0, 0, NO, 0, 0);
    KIND(t4, "prime_mapp", 8 * MiB, 0, 0, NO, 0, 0);
    KIND(t4, "random", 8 * MiB, 0, 0, NO, 0, 0);
    KIND(t4, "weighted:0=3,1=1", 8 * MiB, 0, 0, NO, 0, 0);
    KIND(t4, "first_touch", 8 * MiB, 0, 0, RUNS, 0, 0);
    KIND(t4, "cyclic", 8 * MiB, 0, NPL_F_THP, NO, 0, 0);
    KIND(t4, "bind_all", 8 * MiB, 0, NPL_F_HUGETLB, NO, 0, 0);
    KIND(t4, "cyclic", 8 * MiB, 0, NPL_F_STRICT, NO, 0, 0);
    /* bind_block (4 threads: nodes 0 0 1 1 in compact order) and random_block: the count is the
     * number of node changes of the map + 1 */
    const char *counted[] = {"bind_block", "bind_block:pin=scatter", "random_block:512"};
    for (int k = 0; k < 3; k++) {
        npl_policy *p;
        npl_plan *pl;
        int nodes[2048];
        npl_policy_parse(&p, counted[k]);
        npl_plan_create(&pl, p, t4, 4);
        npl_plan_map(pl, NULL, 8 * MiB, psz, 0, 2048, nodes);
        size_t runs = 1;
        for (int i = 1; i < 2048; i++)
            runs += nodes[i] != nodes[i - 1];
        struct npl_lazy lz;
        npl__lazy_kind(pl, NULL, 8 * MiB, 0, 0, &lz);
        CHECK(lz.kind == NPL__LAZY_RUNS && lz.runs == runs && runs >= 2 && runs <= 4,
              "%s: %zu runs, the map has %zu", counted[k], lz.runs, runs);
        npl_plan_free(pl);
        npl_policy_free(p);
    }
    /* blocks reserved far beyond what is used (a terabyte, 2^62 bytes): counted by runs, not page
     * by page (the first version walked 2^50 pages of a one-node cyclic map: a hang) */
    npl_topo *t1 = synth("numa:1 core:2 pu:1");
    size_t TiB = (size_t)1 << 40, huge = (size_t)1 << 62;
    KIND(t1, "cyclic", huge, 0, 0, RUNS, 1, 0);
    KIND(t4, "bind_all", huge, 0, 0, RUNS, 1, 0);
    KIND(t4, "cyclic_block:1", TiB, 0, 0, NO, 0, 0);
    KIND(t4, "cyclic_block", TiB, 0, 0, RUNS, 4, 0); /* 4 threads' blocks, one per node */
    KIND(t4, "skew_mapp", huge, 0, 0, NO, 0, 0);
    {
        struct npl_lazy big = lazy(t4, "bind_block", TiB, 0, 0, 4);
        struct npl_lazy small = lazy(t4, "bind_block", 8 * MiB, 0, 0, 4);
        CHECK(big.kind == NPL__LAZY_RUNS && big.runs == small.runs,
              "bind_block over 1 TiB: %zu runs, as over 8 MiB (%zu)", big.runs, small.runs);
    }
    npl_topo_destroy(t1);
    /* starts: page index x is good iff x mod M == rot (the index cut to 32 bits before 6.7) */
    for (int M = 3; M <= 4; M++) {
        npl_policy *p;
        npl_plan *pl;
        npl_policy_parse(&p, M == 4 ? "cyclic@1,2,3,0" : "cyclic@2,0,1");
        npl_plan_create(&pl, p, M == 4 ? t4 : t3, 0);
        struct npl_lazy lz;
        npl__lazy_kind(pl, NULL, 8 * MiB, 0, 0, &lz);
        int bits = npl__interleave_index_bits(), wrong = 0, good = 0;
        for (uint64_t x = 0x7f0000000ull; x < 0x7f0000000ull + 64; x++) {
            uint64_t idx = bits == 64 || !(M & (M - 1)) ? x : (uint32_t)x;
            int want = idx % (uint64_t)M == lz.rot;
            int got = npl__lazy_base_ok(pl, &lz, (uintptr_t)(x * psz), 8 * MiB);
            wrong += got != want;
            good += got;
        }
        CHECK(lz.kind == NPL__LAZY_INTERLEAVE && wrong == 0 && good > 0,
              "%d nodes (kernel index bits %d): %d of 64 starts judged wrong, %d good", M, bits,
              wrong, good);
        npl_plan_free(pl);
        npl_policy_free(p);
    }
    npl_topo_destroy(t4);
    npl_topo_destroy(t3);
    return check_summary("test_lazy");
}
