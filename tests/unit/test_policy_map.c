/* SPDX-License-Identifier: BSD-3-Clause */
/* Known-answer tests of the pure page->node map. The expected vectors were written by hand
 * from the papers' formulas (MAi; Table 5 of the characterization report) and a prime_mapp
 * example worked by hand, not computed by the library. */
#include "check.h"
#include "plan/plan.h"
#include <errno.h>
#include <numaplace.h>
#include <stdlib.h>

static npl_topo *synth(const char *desc)
{
    npl_topo *t = NULL;
    if (npl_topo_load_synthetic(&t, desc) < 0) {
        printf("cannot load synthetic topology %s: %s\n", desc, npl_last_error());
        exit(2);
    }
    return t;
}

/* map `pages` 4 KiB pages of a 1D byte array */
static void expect_map(npl_topo *t, const char *policy, size_t pages, const char *expected)
{
    npl_policy *p;
    int v[256];
    char got[2048];
    if (npl_policy_parse(&p, policy) < 0) {
        CHECK(0, "parse %s: %s", policy, npl_last_error());
        return;
    }
    int rc = npl_policy_map(p, t, NULL, pages * 4096, 4096, 0, pages, v);
    CHECK(rc == 0 && vec_equals(v, pages, expected, got, sizeof got),
          "%s: got [%s] want [%s] (%s)", policy, rc == 0 ? got : "error", expected,
          rc == 0 ? "" : npl_last_error());
    npl_policy_free(p);
}

static void expect_error(npl_topo *t, const char *policy, int err)
{
    npl_policy *p;
    int v[4];
    int rc = npl_policy_parse(&p, policy);
    if (rc == 0) {
        errno = 0;
        rc = npl_policy_map(p, t, NULL, 4 * 4096, 4096, 0, 4, v);
        npl_policy_free(p);
    }
    CHECK(rc == -1 && errno == err, "%s: want error %d, got rc=%d errno=%d (%s)", policy, err, rc,
          errno, npl_last_error());
}

int main(void)
{
    npl_topo *t4 = synth("numa:4 core:2 pu:1");
    npl_topo *t2 = synth("numa:2 core:2 pu:1");
    npl_topo *t3 = synth("numa:3 core:1 pu:1");
    npl_topo *sparse = synth("numa:4(indexes=0,2,4,6) core:1 pu:1");

    expect_map(t4, "first_touch", 4, "-1 -1 -1 -1");
    expect_map(t4, "cyclic", 10, "0 1 2 3 0 1 2 3 0 1");
    expect_map(t4, "interleave", 5, "0 1 2 3 0");
    expect_map(sparse, "cyclic", 6, "0 2 4 6 0 2");
    /* skew_mapp: node (i + floor(i/M) + 1) mod M, M = 4 */
    expect_map(t4, "skew_mapp", 13, "1 2 3 0 2 3 0 1 3 0 1 2 0");
    /* M = 3 */
    expect_map(t3, "skew_mapp", 10, "1 2 0 2 0 1 0 1 2 1");
    /* prime_mapp P=5, M=4: the known answer worked by hand */
    expect_map(t4, "prime_mapp:5", 25,
               "0 1 2 3 0 0 1 2 3 1 0 1 2 3 2 0 1 2 3 3 0 1 2 3 0");
    /* default P for M=4 is 5 (smallest prime > M) */
    expect_map(t4, "prime_mapp", 10, "0 1 2 3 0 0 1 2 3 1");
    /* P=7, M=3: v<3 -> v; else o=floor(n/7)*4+(v-3), node o mod 3 */
    expect_map(t3, "prime_mapp:7", 14, "0 1 2 0 1 2 0 0 1 2 1 2 0 1");
    expect_map(sparse, "prime_mapp:5", 10, "0 2 4 6 0 0 2 4 6 2");
    expect_map(t3, "cyclic_block:2", 8, "0 0 1 1 2 2 0 0");
    expect_map(t4, "cyclic_block:pages=3", 8, "0 0 0 1 1 1 2 2");
    expect_map(t4, "bind_all", 3, "0 0 0");
    expect_map(t4, "bind_all:2,0", 3, "2 2 2");
    expect_map(t4, "bind_all:3@1-3", 2, "3 3");
    expect_map(t4, "cyclic@1,3", 4, "1 3 1 3");
    expect_map(t2, "weighted:0=3,1=1", 8, "0 0 0 1 0 0 0 1");
    expect_map(t4, "weighted:2=1,0=2", 6, "2 0 0 2 0 0");
    /* bind_block: static schedule of 4 threads over 8 pages; compact = node0,node0,node1,node1 */
    expect_map(t2, "bind_block:threads=4", 8, "0 0 0 0 1 1 1 1");
    expect_map(t2, "bind_block:threads=4,pin=scatter", 8, "0 0 1 1 0 0 1 1");
    /* 10 pages / 4 threads = 10240 bytes each: page p -> owner of byte 4096p */
    expect_map(t2, "bind_block:threads=4", 10, "0 0 0 0 0 1 1 1 1 1");
    /* T=8 > 4 CPUs: thread t runs on CPU t mod 4 (wrap-around); page p is thread 2p's */
    expect_map(t2, "bind_block:threads=8", 4, "0 1 0 1");
    /* explicit blocks with bind_block: block b on the node of thread b mod T */
    expect_map(t2, "bind_block:pages=1,threads=4", 6, "0 0 1 1 0 0");
    /* subset excludes the thread's node: nearest allowed node (here the only one) */
    expect_map(t2, "bind_block:threads=4@1", 4, "1 1 1 1");
    /* a thread-block bind_block follows any pin strategy (npl__policy_follow_pin: run --profile
     * under --pin CPU-LIST): on t2 (CPUs 0,1 node 0; 2,3 node 1) the list "2,0,3,1" puts
     * threads 0..3 on nodes 1,0,1,0 */
    {
        npl_policy *p = NULL;
        int v[8];
        char got[256];
        npl_policy_parse(&p, "bind_block:threads=4");
        CHECK(npl__policy_follow_pin(p, "2,0,3,1") == 1, "follow a CPU list");
        int rc = npl_policy_map(p, t2, NULL, 8 * 4096, 4096, 0, 8, v);
        CHECK(rc == 0 && vec_equals(v, 8, "1 1 0 0 1 1 0 0", got, sizeof got),
              "bind_block:threads=4 under pin 2,0,3,1: got [%s] (%s)", got,
              rc == 0 ? "" : npl_last_error());
        char longer[80];
        memset(longer, '1', sizeof longer - 1);
        longer[sizeof longer - 1] = 0;
        errno = 0;
        CHECK(npl__policy_follow_pin(p, longer) == -1 && errno == EINVAL,
              "a strategy too long to hold: EINVAL");
        npl_policy_free(p);
        /* no explicit thread count, or another kind: unchanged */
        npl_policy_parse(&p, "bind_block");
        CHECK(npl__policy_follow_pin(p, "2,0") == 0, "bind_block without threads: unchanged");
        npl_policy_free(p);
        npl_policy_parse(&p, "cyclic_block:threads=4");
        CHECK(npl__policy_follow_pin(p, "2,0") == 0, "cyclic_block: unchanged");
        npl_policy_free(p);
    }
    /* cyclic_block derived from 4 threads: static blocks cycle over nodes */
    expect_map(t3, "cyclic_block:threads=4", 8, "0 0 1 1 2 2 0 0");

    /* rows: 4 rows of 2.5 pages, blocks of 1 row -> page belongs to the row of its first byte */
    {
        npl_policy *p;
        npl_policy_parse(&p, "cyclic_block:rows=1");
        npl_shape s = {8, 2, {4, 1280, 0}, NPL_ROW_MAJOR}; /* 4 x 10240 bytes */
        int v[10];
        char got[256];
        int rc = npl_policy_map(p, t4, &s, 40960, 4096, 0, 10, v);
        CHECK(rc == 0 && vec_equals(v, 10, "0 0 0 1 1 2 2 2 3 3", got, sizeof got),
              "cyclic_block rows: got [%s]", got);
        /* column-major: the unit is a column (last dimension) */
        npl_shape c = {8, 2, {1280, 4, 0}, NPL_COL_MAJOR};
        rc = npl_policy_map(p, t4, &c, 40960, 4096, 0, 10, v);
        CHECK(rc == 0 && vec_equals(v, 10, "0 0 0 1 1 2 2 2 3 3", got, sizeof got),
              "cyclic_block columns: got [%s]", got);
        /* a shape whose bytes do not match the range */
        errno = 0;
        CHECK(npl_policy_map(p, t4, &s, 4096, 4096, 0, 1, v) == -1 && errno == EINVAL,
              "shape/bytes mismatch rejected");
        /* partial ranges: pages 5..9 equal the tail of the full map */
        rc = npl_policy_map(p, t4, &s, 40960, 4096, 5, 5, v);
        CHECK(rc == 0 && vec_equals(v, 5, "2 2 2 3 3", got, sizeof got), "partial map [%s]", got);
        CHECK(npl_policy_map(p, t4, &s, 40960, 4096, 8, 5, v) == -1 && errno == EINVAL,
              "range past the end rejected");
        npl_policy_free(p);
    }

    /* 3D, row-major: the unit is a plane of dims[1]*dims[2] elements; 3D column-major: the
     * last index is the slowest, so the unit is a plane of dims[0]*dims[1] elements */
    {
        npl_policy *p;
        npl_policy_parse(&p, "bind_block:threads=2");
        npl_shape s3 = {8, 3, {4, 64, 32}, NPL_ROW_MAJOR}; /* 4 planes of 16 KiB = 4 pages each */
        int v[16];
        char got[256];
        int rc = npl_policy_map(p, t2, &s3, 65536, 4096, 0, 16, v);
        CHECK(rc == 0 && vec_equals(v, 16, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", got, sizeof got),
              "3D bind_block, 2 threads on node 0 (compact): [%s]", got);
        npl_policy_free(p);
        npl_policy_parse(&p, "cyclic_block:planes=1");
        npl_shape c3 = {8, 3, {32, 64, 4}, NPL_COL_MAJOR};
        rc = npl_policy_map(p, t2, &c3, 65536, 4096, 0, 16, v);
        CHECK(rc == 0 && vec_equals(v, 16, "0 0 0 0 1 1 1 1 0 0 0 0 1 1 1 1", got, sizeof got),
              "3D column-major planes cycle: [%s]", got);
        npl_policy_free(p);
    }

    /* prime_mapp is correct (0 <= node < M, never negative) for every P >= M, M = 1..16 */
    {
        int bad = 0, checked = 0;
        int *v = malloc(4096 * sizeof *v);
        for (int M = 1; M <= 16; M++) {
            char desc[64];
            snprintf(desc, sizeof desc, "numa:%d core:1 pu:1", M);
            npl_topo *t = synth(desc);
            for (int P = M; P <= 61; P++) {
                int prime = P >= 2;
                for (int d = 2; d * d <= P; d++)
                    prime &= P % d != 0;
                if (!prime)
                    continue;
                char ps[32];
                snprintf(ps, sizeof ps, "prime_mapp:%d", P);
                npl_policy *p;
                npl_policy_parse(&p, ps);
                if (npl_policy_map(p, t, NULL, 4096 * 4096, 4096, 0, 4096, v) < 0) {
                    bad++;
                    npl_policy_free(p);
                    continue;
                }
                for (int n = 0; n < 4096; n++) {
                    int vv = n % P;
                    int want = vv < M ? vv : ((n / P) * (P - M) + (vv - M)) % M;
                    if (v[n] != want || v[n] < 0 || v[n] >= M)
                        bad++;
                }
                checked++;
                npl_policy_free(p);
            }
            npl_topo_destroy(t);
        }
        free(v);
        CHECK(bad == 0 && checked > 100, "prime_mapp valid for all (P,M): %d bad of %d pairs", bad,
              checked);
    }

    /* random: reproducible, seed-dependent, uniform, only listed nodes */
    {
        enum { N = 100000 };
        int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
        npl_policy *p1, *p2, *p3;
        npl_policy_parse(&p1, "random:seed=42");
        npl_policy_parse(&p2, "random:seed=42");
        npl_policy_parse(&p3, "random:seed=43@0,2");
        npl_policy_map(p1, t4, NULL, (size_t)N * 4096, 4096, 0, N, a);
        npl_policy_map(p2, t4, NULL, (size_t)N * 4096, 4096, 0, N, b);
        npl_policy_map(p3, t4, NULL, (size_t)N * 4096, 4096, 0, N, c);
        int same = 1, diff = 0, hist[4] = {0}, only02 = 1;
        for (int i = 0; i < N; i++) {
            same &= a[i] == b[i];
            diff += a[i] != c[i];
            if (a[i] >= 0 && a[i] < 4)
                hist[a[i]]++;
            only02 &= c[i] == 0 || c[i] == 2;
        }
        CHECK(same, "same seed gives the same map");
        CHECK(diff > N / 4, "another seed gives another map (%d differ)", diff);
        for (int k = 0; k < 4; k++)
            CHECK(hist[k] > N / 4 * 95 / 100 && hist[k] < N / 4 * 105 / 100,
                  "random uniform: node %d has %d of %d", k, hist[k], N);
        CHECK(only02, "random@0,2 uses only nodes 0 and 2");
        /* random_block: every block of 8 pages on one node */
        npl_policy *pb;
        npl_policy_parse(&pb, "random_block:8,seed=7");
        npl_policy_map(pb, t4, NULL, 800 * 4096, 4096, 0, 800, a);
        int blocks_ok = 1;
        for (int i = 0; i < 800; i++)
            blocks_ok &= a[i] == a[i / 8 * 8];
        CHECK(blocks_ok, "random_block keeps blocks of 8 pages together");
        npl_policy_free(pb);
        npl_policy_free(p1);
        npl_policy_free(p2);
        npl_policy_free(p3);
        free(a);
        free(b);
        free(c);
    }

    /* errors resolved against the topology */
    expect_error(t4, "prime_mapp:3", EINVAL);   /* P < M */
    expect_error(t4, "bind_all:9", EINVAL);     /* no node 9 */
    expect_error(sparse, "cyclic@1", EINVAL);   /* node ids are 0,2,4,6 */
    npl_topo_restrict(t4, NULL, "0-2");         /* as if the cpuset masked node 3 */
    expect_error(t4, "bind_all:3", EXDEV);
    expect_map(t4, "cyclic", 4, "0 1 2 0");     /* masked node never used */

    npl_topo_destroy(t4);
    npl_topo_destroy(t2);
    npl_topo_destroy(t3);
    npl_topo_destroy(sparse);
    return check_summary("test_policy_map");
}
