/* SPDX-License-Identifier: BSD-3-Clause */
/* Hostile input and concurrency on the host (docs/RELIABILITY.md):
 *   - every public function with NULL, invalid, negative, duplicate or out-of-range arguments,
 *     zero and overflowing sizes, unaligned and unmapped ranges, unknown pointers: -1 + the
 *     documented errno, never a crash, nothing leaked (arrays_live, mappings; ASan in the
 *     sanitizer build), nothing half-applied;
 *   - NUMAPLACE_POLICY with a bad value;
 *   - more threads than CPUs;
 *   - failures of every kind give back what they took (mappings, open files, arrays);
 *   - concurrency: re-placements of one array from 4 threads while another thread writes,
 *     npl_free racing with npl_check/npl_apply/npl_array_info (the loser gets ENOENT), two
 *     threads freeing one array, many threads allocating and freeing at once, re-arming an
 *     array for next-touch while 7 threads write to it.
 * Runs in the normal, ASan+UBSan and TSan builds (ctest host.hostile). */
#define _GNU_SOURCE
#include "check.h"
#include "deny_numa.h"
#include "rearm_race.h"
#include <errno.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <numaplace/replicate.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#define PAGE 4096

/* the sanitizers' runtimes map memory of their own meanwhile: mapping counts are only exact
 * in the normal build (arrays_live is checked everywhere, ASan's leak checker at exit) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MAPS_SLACK 1000
#else
#define MAPS_SLACK 0
#endif

static uint64_t live_arrays(void)
{
    struct npl_stats s;
    npl_get_stats(&s);
    return s.arrays_live;
}

/* -1 with errno e (several allowed: e1 or e2) */
#define FAILS(expr, e1, e2) ((expr) == -1 && (errno == (e1) || errno == (e2)))

/* ------------------------------------------------------------------------------------------ */
static void bad_topology(void)
{
    npl_topo *t = NULL;
    CHECK(FAILS(npl_topo_load(NULL), EINVAL, EINVAL), "topo_load(NULL)");
    CHECK(FAILS(npl_topo_load_synthetic(NULL, "numa:2 pu:1"), EINVAL, EINVAL), "synthetic NULL out");
    CHECK(FAILS(npl_topo_load_synthetic(&t, NULL), EINVAL, EINVAL), "synthetic NULL description");
    const char *bad_desc[] = {"", "garbage", "numa:0 pu:1", "numa:-3 pu:1", "numa:2(indexes=0,0) pu:1",
                              "\xff\xfe", NULL};
    for (int i = 0; bad_desc[i]; i++) {
        t = NULL;
        int rc = npl_topo_load_synthetic(&t, bad_desc[i]);
        /* hwloc may accept some of these with a meaning of its own; it must never crash and a
         * success must give a usable topology */
        CHECK(rc == -1 ? errno == EINVAL : (t && npl_topo_node_count(t, 1) >= 1),
              "synthetic '%s': rc %d errno %d", bad_desc[i], rc, errno);
        if (rc == 0)
            npl_topo_destroy(t);
    }
    npl_topo_destroy(NULL); /* no crash */
    CHECK(npl_topo_load_synthetic(&t, "numa:4(indexes=0,2,4,6) core:2 pu:1") == 0, "synthetic");
    if (!t)
        return;
    CHECK(FAILS(npl_topo_node_id(t, -1), EINVAL, EINVAL), "node_id(-1)");
    CHECK(FAILS(npl_topo_node_id(t, 4), EINVAL, EINVAL), "node_id(count)");
    CHECK(FAILS(npl_topo_node_id(t, INT32_MIN), EINVAL, EINVAL), "node_id(INT_MIN)");
    CHECK(FAILS(npl_topo_node_index(t, 1), EINVAL, EINVAL), "node_index of a hole in the ids");
    CHECK(FAILS(npl_topo_node_index(t, -1), EINVAL, EINVAL), "node_index(-1)");
    CHECK(FAILS(npl_topo_node_index(t, 1 << 30), EINVAL, EINVAL), "node_index(huge)");
    struct npl_node_info ni;
    CHECK(FAILS(npl_topo_node_info(t, -1, &ni), EINVAL, EINVAL), "node_info(-1)");
    CHECK(FAILS(npl_topo_node_info(t, 3, &ni), EINVAL, EINVAL), "node_info(a hole in the ids)");
    CHECK(FAILS(npl_topo_node_info(t, 7, &ni), EINVAL, EINVAL), "node_info(max id + 1)");
    CHECK(FAILS(npl_topo_node_info(t, 0, NULL), EINVAL, EINVAL), "node_info NULL out");
    CHECK(FAILS(npl_topo_distance(t, -1, 0), EINVAL, EINVAL), "distance(-1, 0)");
    CHECK(FAILS(npl_topo_distance(t, 0, 3), EINVAL, EINVAL), "distance(0, a hole)");
    CHECK(FAILS(npl_topo_distance(t, 0, 1 << 30), EINVAL, EINVAL), "distance(0, huge)");
    CHECK(FAILS(npl_topo_cpu_node(t, -1), EINVAL, EINVAL), "cpu_node(-1)");
    CHECK(FAILS(npl_topo_cpu_node(t, 1 << 20), EINVAL, EINVAL), "cpu_node(huge)");
    int cpus[16] = {0};
    int rc = npl_topo_node_cpus(t, -1, cpus, 16);
    CHECK(rc == -1 && errno == EINVAL, "node_cpus(-1): %d", rc);
    rc = npl_topo_node_cpus(t, 0, cpus, 0);
    CHECK(rc == 2 || (rc == -1 && errno == EINVAL), "node_cpus max 0 writes nothing: %d", rc);
    rc = npl_topo_node_cpus(t, 0, cpus, -5);
    CHECK(rc == 2 || (rc == -1 && errno == EINVAL), "node_cpus max -5: %d", rc);

    /* distances: wrong size, NULL, zero/negative, asymmetric local */
    int d4[16];
    for (int i = 0; i < 16; i++)
        d4[i] = i / 4 == i % 4 ? 10 : 20;
    CHECK(FAILS(npl_topo_set_distances(t, NULL, 4), EINVAL, EINVAL), "distances NULL");
    CHECK(FAILS(npl_topo_set_distances(t, d4, 3), EINVAL, EINVAL), "distances wrong n");
    CHECK(FAILS(npl_topo_set_distances(t, d4, -4), EINVAL, EINVAL), "distances negative n");
    d4[1] = -7;
    CHECK(FAILS(npl_topo_set_distances(t, d4, 4), EINVAL, EINVAL), "negative distance rejected");
    CHECK(npl_topo_distance(t, 0, 2) == 20, "rejected matrix left nothing half-applied (%d)",
          npl_topo_distance(t, 0, 2));

    /* restrict: bad lists leave the topology as it was */
    const char *bad_lists[] = {"", "abc", "-1", "3-1", "0-", ",", "1,,2", "99999999999999999999",
                               "0-4294967296", NULL};
    for (int i = 0; bad_lists[i]; i++) {
        CHECK(FAILS(npl_topo_restrict(t, NULL, bad_lists[i]), EINVAL, EXDEV),
              "restrict nodes '%s'", bad_lists[i]);
        CHECK(FAILS(npl_topo_restrict(t, bad_lists[i], NULL), EINVAL, EXDEV),
              "restrict cpus '%s'", bad_lists[i]);
    }
    CHECK(FAILS(npl_topo_restrict(t, NULL, "1,3"), EINVAL, EXDEV), "restrict to missing nodes");
    CHECK(FAILS(npl_topo_restrict(t, "100-200", NULL), EINVAL, EXDEV), "restrict to missing CPUs");
    CHECK(FAILS(npl_topo_restrict(NULL, "0", "0"), EINVAL, EINVAL), "restrict NULL topo");
    /* a good CPU list with a bad node list: neither applied (fuzz_lists found the CPUs applied) */
    CHECK(FAILS(npl_topo_restrict(t, "0-3", "5,2"), EINVAL, EINVAL), "restrict good CPUs, bad nodes");
    CHECK(FAILS(npl_topo_restrict(t, "0-3", "0,,2"), EINVAL, EINVAL), "restrict good CPUs, malformed nodes");
    CHECK(npl_topo_node_count(t, 0) == 4 && npl_topo_cpu_count(t) == 8,
          "failed restrictions left nothing half-applied (%d nodes, %d CPUs)",
          npl_topo_node_count(t, 0), npl_topo_cpu_count(t));
    /* duplicates: rejected as a whole, or harmless */
    rc = npl_topo_restrict(t, NULL, "2,2,4,2");
    CHECK((rc == -1 && errno == EINVAL && npl_topo_node_count(t, 0) == 4) ||
              (rc == 0 && npl_topo_node_count(t, 0) == 2),
          "duplicate node ids: rc %d, %d usable nodes", rc, npl_topo_node_count(t, 0));
    CHECK(npl_topo_restrict(t, NULL, "2,4") == 0 && npl_topo_node_count(t, 0) == 2,
          "restrict to nodes 2,4: %d usable", npl_topo_node_count(t, 0));
    /* a policy that names a masked node: EXDEV at map time */
    npl_policy *p = pol("bind_all:0");
    int nodes[4];
    CHECK(FAILS(npl_policy_map(p, t, NULL, 4 * PAGE, PAGE, 0, 4, nodes), EXDEV, EXDEV),
          "bind_all on a masked node: EXDEV");
    npl_policy_free(p);
    p = pol("cyclic@0,6");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 4 * PAGE, PAGE, 0, 4, nodes), EXDEV, EXDEV),
          "@subset naming a masked node: EXDEV");
    npl_policy_free(p);
    npl_topo_destroy(t);
}

/* ------------------------------------------------------------------------------------------ */
static void bad_policies(void)
{
    npl_policy *p = (npl_policy *)1;
    CHECK(FAILS(npl_policy_parse(NULL, "cyclic"), EINVAL, EINVAL), "parse NULL out");
    CHECK(FAILS(npl_policy_parse(&p, NULL), EINVAL, EINVAL), "parse NULL string");
    const char *bad[] = {"", " ", "cyclic:", "cyclic@", "cyclic@-1", "cyclic@3-1", "cyclic@0,",
                         "bind_all:-1", "bind_all:0,,1", "bind_all:0-", "weighted", "weighted:",
                         "weighted:0=0", "weighted:0=-1", "weighted:0=1,0=2", "weighted:x=1",
                         "weighted:0=99999999999999999999", "prime_mapp:4", "prime_mapp:-7",
                         "prime_mapp:0", "random:seed=", "random:seed=x", "random:bogus=1",
                         "cyclic_block:0", "cyclic_block:-1", "cyclic_block:pages=0",
                         "cyclic_block:99999999999999999999999", "cyclic_block:units=",
                         "bind_block:threads=-1", "bind_block:threads=0", "bind_block:pin=nowhere",
                         "bind_block:threads=99999999999", "cyclik", "CYCLIC", "cyclic cyclic",
                         "cyclic\n", "skew_mapp:3", "first_touch:1", "random_block:0",
                         "cyclic@0@1", "\xff\xfe\xfd", "cyclic:\x01", NULL};
    for (int i = 0; bad[i]; i++) {
        p = (npl_policy *)1;
        errno = 0;
        int rc = npl_policy_parse(&p, bad[i]);
        CHECK(rc == -1 && errno == EINVAL && npl_last_error()[0],
              "parse '%s' rejected with EINVAL and a message (rc %d errno %d '%s')", bad[i], rc,
              errno, npl_last_error());
        if (rc == 0)
            npl_policy_free(p);
    }
    /* a very long string: rejected, no overflow */
    size_t n = 1 << 20;
    char *longs = malloc(n + 1);
    memcpy(longs, "bind_all:", 9);
    for (size_t i = 9; i < n; i++)
        longs[i] = (i % 2) ? ',' : '1';
    longs[n] = 0;
    int rc = npl_policy_parse(&p, longs);
    CHECK(rc == -1 && errno == EINVAL, "1 MiB policy string: EINVAL (rc %d)", rc);
    if (rc == 0)
        npl_policy_free(p);
    memset(longs, 'a', n);
    CHECK(FAILS(npl_policy_parse(&p, longs), EINVAL, EINVAL), "1 MiB name: EINVAL");
    free(longs);
    /* a list of a million nodes: rejected or accepted quickly (fuzz_policy found minutes spent
     * on "cyclic@0-86882": a pairwise duplicate check); duplicates still found */
    rc = npl_policy_parse(&p, "cyclic@0-1048575");
    CHECK(rc == 0 || errno == EINVAL, "cyclic@0-1048575: rc %d", rc);
    if (rc == 0)
        npl_policy_free(p);
    /* the message must say "duplicate node N": the input it echoes holds N too (node ids end
     * at 65535: a longer list was refused as out of range, and "77777" was found in the echo) */
    CHECK(FAILS(npl_policy_parse(&p, "cyclic@0-60000,7777"), EINVAL, EINVAL) &&
              strstr(npl_last_error(), "duplicate node 7777"),
          "a duplicate in a long list is named: '%s'", npl_last_error());

    /* create and setters */
    int dup2[] = {0, 0}, neg[] = {-1};
    CHECK(FAILS(npl_policy_create(NULL, NPL_CYCLIC, NULL, 0), EINVAL, EINVAL), "create NULL out");
    CHECK(FAILS(npl_policy_create(&p, (npl_policy_kind)-1, NULL, 0), EINVAL, EINVAL), "kind -1");
    CHECK(FAILS(npl_policy_create(&p, (npl_policy_kind)(NPL_WEIGHTED + 1), NULL, 0), EINVAL, EINVAL), "kind past the last");
    CHECK(FAILS(npl_policy_create(&p, NPL_CYCLIC, neg, 1), EINVAL, EINVAL), "negative node id");
    CHECK(FAILS(npl_policy_create(&p, NPL_CYCLIC, dup2, 2), EINVAL, EINVAL), "duplicate node ids");
    CHECK(FAILS(npl_policy_create(&p, NPL_CYCLIC, NULL, 3), EINVAL, EINVAL), "nnodes with NULL list");
    CHECK(FAILS(npl_policy_create(&p, NPL_CYCLIC, dup2, -1), EINVAL, EINVAL), "negative nnodes");
    CHECK(npl_policy_create(&p, NPL_CYCLIC_BLOCK, NULL, 0) == 0, "create cyclic_block");
    CHECK(FAILS(npl_policy_set_block_pages(NULL, 4), EINVAL, EINVAL), "block_pages NULL");
    CHECK(FAILS(npl_policy_set_block_pages(p, 0), EINVAL, EINVAL), "block_pages 0");
    CHECK(FAILS(npl_policy_set_block_units(p, 0), EINVAL, EINVAL), "block_units 0");
    CHECK(FAILS(npl_policy_set_threads(p, -1, NULL), EINVAL, EINVAL), "threads -1");
    CHECK(FAILS(npl_policy_set_threads(p, 4, "bogus"), EINVAL, EINVAL), "pin strategy bogus");
    CHECK(FAILS(npl_policy_set_prime(p, 4), EINVAL, EINVAL), "prime 4");
    CHECK(FAILS(npl_policy_set_prime(p, -3), EINVAL, EINVAL), "prime -3");
    int wn[] = {0, 1}, ww[] = {1, 0}, wneg[] = {3, -1};
    CHECK(FAILS(npl_policy_set_weights(p, wn, ww, 2), EINVAL, EINVAL), "weight 0");
    CHECK(FAILS(npl_policy_set_weights(p, wn, wneg, 2), EINVAL, EINVAL), "weight negative");
    CHECK(FAILS(npl_policy_set_weights(p, NULL, ww, 2), EINVAL, EINVAL), "weights NULL nodes");
    CHECK(FAILS(npl_policy_set_weights(p, wn, NULL, 2), EINVAL, EINVAL), "weights NULL weights");
    int wd[] = {2, 2}, w11[] = {1, 1};
    CHECK(FAILS(npl_policy_set_weights(p, wd, w11, 2), EINVAL, EINVAL), "weights duplicate node");
    char buf[256];
    CHECK(npl_policy_format(p, buf, sizeof buf) > 0 && strstr(buf, "cyclic_block"),
          "failed setters left the policy as it was: '%s'", buf);
    /* format: NULL buffer gives the length; a short buffer is truncated and terminated */
    int need = npl_policy_format(p, NULL, 0);
    CHECK(need == (int)strlen(buf), "format(NULL, 0) = needed length (%d, '%s')", need, buf);
    char small[4] = {'x', 'x', 'x', 'x'};
    CHECK(npl_policy_format(p, small, 3) == need && small[2] == 0 && small[3] == 'x',
          "format into 3 bytes: truncated, terminated, nothing past the end");
    CHECK(FAILS(npl_policy_format(NULL, buf, sizeof buf), EINVAL, EINVAL), "format NULL policy");
    npl_policy_free(p);
    npl_policy_free(NULL);
    CHECK(npl_policy_dup(NULL) == NULL && errno == EINVAL, "dup NULL");
    const char *kn = npl_policy_kind_name((npl_policy_kind)-1);
    CHECK(kn == NULL || kn[0], "kind_name(-1) no crash");
    kn = npl_policy_kind_name((npl_policy_kind)1000);
    CHECK(kn == NULL || kn[0], "kind_name(1000) no crash");
    CHECK(npl_policy_wants_pinning(NULL) <= 0, "wants_pinning(NULL)");

    /* shapes */
    size_t b;
    npl_shape s = {8, 2, {10, 10, 0}, NPL_ROW_MAJOR};
    CHECK(FAILS(npl_shape_bytes(NULL, &b), EINVAL, EINVAL), "shape NULL");
    CHECK(FAILS(npl_shape_bytes(&s, NULL), EINVAL, EINVAL), "shape NULL out");
    s.elem_size = 0;
    CHECK(FAILS(npl_shape_bytes(&s, &b), EINVAL, EINVAL), "elem size 0");
    s.elem_size = 8;
    s.ndims = 0;
    CHECK(FAILS(npl_shape_bytes(&s, &b), EINVAL, EINVAL), "ndims 0");
    s.ndims = 4;
    CHECK(FAILS(npl_shape_bytes(&s, &b), EINVAL, EINVAL), "ndims 4");
    s.ndims = -1;
    CHECK(FAILS(npl_shape_bytes(&s, &b), EINVAL, EINVAL), "ndims -1");
    npl_shape s3 = {SIZE_MAX / 2, 3, {1, 1, 3}, NPL_ROW_MAJOR};
    CHECK(FAILS(npl_shape_bytes(&s3, &b), EOVERFLOW, EOVERFLOW), "elem * dims overflow");
    npl_shape s4 = {1, 3, {(size_t)1 << 22, (size_t)1 << 22, (size_t)1 << 22}, NPL_ROW_MAJOR};
    CHECK(FAILS(npl_shape_bytes(&s4, &b), EOVERFLOW, EOVERFLOW), "3D overflow");
    npl_shape s5 = {8, 2, {10, 10, 0}, (npl_order)7};
    CHECK(FAILS(npl_shape_bytes(&s5, &b), EINVAL, EINVAL) || npl_shape_bytes(&s5, &b) == 0,
          "bad order no crash");

    /* the pure map */
    npl_topo *t;
    npl_topo_load_synthetic(&t, "numa:2 core:2 pu:1");
    p = pol("cyclic");
    int nodes[8];
    CHECK(FAILS(npl_policy_map(NULL, t, NULL, 8 * PAGE, PAGE, 0, 8, nodes), EINVAL, EINVAL), "map NULL pol");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, PAGE, 0, 8, NULL), EINVAL, EINVAL), "map NULL out");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, 0, 0, 8, nodes), EINVAL, EINVAL), "page size 0");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, 3000, 0, 8, nodes), EINVAL, EINVAL),
          "page size not a power of 2");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 0, PAGE, 0, 1, nodes), EINVAL, EINVAL), "0 bytes");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, PAGE, 4, 8, nodes), EINVAL, EINVAL),
          "pages past the end");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, PAGE, SIZE_MAX, 2, nodes), EINVAL, EINVAL),
          "first + count wraps");
    CHECK(FAILS(npl_policy_map(p, t, &s3, 8 * PAGE, PAGE, 0, 8, nodes), EOVERFLOW, EINVAL),
          "overflowing shape");
    npl_policy_free(p);
    p = pol("bind_all:5");
    CHECK(FAILS(npl_policy_map(p, t, NULL, 8 * PAGE, PAGE, 0, 8, nodes), EINVAL, EINVAL),
          "node that does not exist: EINVAL");
    npl_policy_free(p);
    npl_topo_destroy(t);
}

/* ------------------------------------------------------------------------------------------ */
static void bad_arrays(void)
{
    uint64_t live0 = live_arrays();
    int maps0 = count_maps();
    npl_policy *cyc = pol("cyclic");
    errno = 0;
    CHECK(npl_alloc(0, cyc) == NULL && errno == EINVAL, "alloc 0 bytes: EINVAL (errno %d)", errno);
    CHECK(npl_alloc(SIZE_MAX, cyc) == NULL && (errno == EOVERFLOW || errno == ENOMEM),
          "alloc SIZE_MAX: EOVERFLOW/ENOMEM (errno %d)", errno);
    CHECK(npl_alloc(SIZE_MAX - 4095, cyc) == NULL && (errno == EOVERFLOW || errno == ENOMEM),
          "alloc SIZE_MAX-4095 (page rounding overflows)");
    CHECK(npl_alloc_array(NULL, cyc, 0) == NULL && errno == EINVAL, "alloc_array NULL shape");
    npl_shape s = {8, 1, {1000, 0, 0}, NPL_ROW_MAJOR};
    void *a = npl_alloc_array(&s, cyc, 0xf0000000u); /* unknown flag bits */
    CHECK(a != NULL || errno == EINVAL, "unknown flags: ignored or EINVAL");
    npl_free(a);
    npl_policy *bad = pol("bind_all:1000");
    CHECK(npl_alloc(PAGE, bad) == NULL && errno == EINVAL, "alloc on a node that does not exist");
    npl_policy_free(bad);
    CHECK(live_arrays() == live0 && count_maps() <= maps0 + MAPS_SLACK,
          "failed allocations left nothing behind (%llu arrays, %d -> %d mappings)",
          (unsigned long long)live_arrays(), maps0, count_maps());

    /* unknown pointers: ENOENT from every function taking a library array */
    char *arr = npl_alloc(64 * PAGE, cyc);
    CHECK(arr != NULL, "alloc");
    int x;
    void *unknown[] = {&x, arr + PAGE, arr + 1, (void *)16, NULL};
    struct npl_check c;
    struct npl_array_info info;
    struct npl_migrate_result mr;
    for (int i = 0; unknown[i]; i++) {
        void *u = unknown[i];
        CHECK(FAILS(npl_free(u), ENOENT, ENOENT), "free(%p)", u);
        CHECK(FAILS(npl_apply(u, cyc, 0), ENOENT, ENOENT), "apply(%p)", u);
        CHECK(FAILS(npl_apply_part(u, 0, 1, cyc, 0), ENOENT, ENOENT), "apply_part(%p)", u);
        CHECK(FAILS(npl_check(u, &c), ENOENT, ENOENT), "check(%p)", u);
        CHECK(FAILS(npl_array_info(u, &info), ENOENT, ENOENT), "array_info(%p)", u);
        CHECK(FAILS(npl_migrate_array(u, 0, &mr), ENOENT, ENOENT), "migrate_array(%p)", u);
        CHECK(FAILS(npl_migrate_units(u, 0, 1, 0, &mr), ENOENT, ENOENT), "migrate_units(%p)", u);
        CHECK(FAILS(npl_next_touch_arm_array(u, 0), ENOENT, ENOENT), "next_touch_arm_array(%p)", u);
        CHECK(FAILS(npl_next_touch_register_array(u, 0), ENOENT, ENOENT), "register_array(%p)", u);
    }
    CHECK(npl_free(NULL) == 0, "free(NULL) is a no-op");
    CHECK(FAILS(npl_check(arr, NULL), EINVAL, EINVAL), "check NULL out");
    CHECK(FAILS(npl_array_info(arr, NULL), EINVAL, EINVAL), "array_info NULL out");
    CHECK(FAILS(npl_apply(arr, NULL, 0), EINVAL, EINVAL), "apply NULL policy");
    CHECK(FAILS(npl_apply_part(arr, 0, 0, cyc, 0), EINVAL, EINVAL), "apply_part 0 units");
    CHECK(FAILS(npl_apply_part(arr, 1, SIZE_MAX, cyc, 0), EINVAL, EINVAL), "apply_part wraps");
    CHECK(FAILS(npl_apply_part(arr, SIZE_MAX, 1, cyc, 0), EINVAL, EINVAL), "apply_part far");
    CHECK(FAILS(npl_migrate_units(arr, 0, SIZE_MAX, 0, &mr), EINVAL, EINVAL), "migrate_units wraps");
    CHECK(FAILS(npl_migrate_array(arr, -1, &mr), EINVAL, EINVAL), "migrate to node -1");
    CHECK(FAILS(npl_migrate_array(arr, 1 << 20, &mr), EINVAL, EINVAL), "migrate to node 2^20");
    CHECK(FAILS(npl_migrate_array(arr, INT32_MIN, NULL), EINVAL, EINVAL), "migrate INT_MIN, NULL result");
    npl_policy *nowhere = pol("bind_all:1000");
    CHECK(FAILS(npl_apply(arr, nowhere, 0), EINVAL, EINVAL), "apply: node that does not exist");
    npl_policy_free(nowhere);
    char polstr[256] = "";
    CHECK(npl_array_policy(arr, polstr, sizeof polstr) == 6 && strcmp(polstr, "cyclic") == 0,
          "failed calls left the array's policy as it was ('%s')", polstr);
    CHECK(npl_array_policy(arr, polstr, 3) == 6 && strcmp(polstr, "cy") == 0,
          "array policy truncated like snprintf ('%s')", polstr);
    CHECK(FAILS(npl_array_policy(arr, NULL, 8), EINVAL, EINVAL), "array policy NULL buffer");
    CHECK(FAILS(npl_array_policy(polstr, polstr, 8), ENOENT, ENOENT), "array policy of a non-array");
    CHECK(npl_free(arr) == 0, "free");
    CHECK(FAILS(npl_free(arr), ENOENT, ENOENT), "double free: ENOENT");
    CHECK(FAILS(npl_check(arr, &c), ENOENT, ENOENT), "check after free: ENOENT");
    CHECK(live_arrays() == live0, "nothing leaked");
    npl_policy_free(cyc);
}

/* ------------------------------------------------------------------------------------------ */
static void bad_ranges(void)
{
    npl_policy *cyc = pol("cyclic");
    /* a hole: map 8 pages, unmap them */
    char *hole = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(hole, 8 * PAGE);
    errno = 0;
    int rc = npl_place_range(hole, 8 * PAGE, cyc, NULL, 0);
    CHECK(rc == -1 && errno == EFAULT, "place_range on unmapped memory: EFAULT (rc %d errno %d: %s)",
          rc, errno, npl_last_error());
    CHECK(FAILS(npl_place_range(NULL, 8 * PAGE, cyc, NULL, 0), EINVAL, EFAULT), "place_range NULL");
    char *m = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 7, 16 * PAGE);
    CHECK(FAILS(npl_place_range(m, SIZE_MAX & ~(size_t)(PAGE - 1), cyc, NULL, 0), EINVAL, EOVERFLOW) ||
              (errno == ENOMEM || errno == EFAULT),
          "place_range with a length that wraps: an error (errno %d)", errno);
    CHECK(npl_place_range(m, 16 * PAGE, NULL, NULL, 0) == 0 && m[PAGE] == 7,
          "place_range NULL policy: NUMAPLACE_POLICY, else first_touch; data kept");
    npl_shape big = {8, 1, {1 << 20, 0, 0}, NPL_ROW_MAJOR};
    rc = npl_place_range(m, 16 * PAGE, cyc, &big, 0);
    CHECK(rc == 0 || (rc == -1 && errno == EINVAL), "shape larger than the range: ok or EINVAL");
    /* a range that is half mapped: the mapped half's data survives */
    munmap(m + 8 * PAGE, 8 * PAGE);
    rc = npl_place_range(m, 16 * PAGE, cyc, NULL, 0);
    CHECK(rc == -1 && errno == EFAULT, "half-unmapped range: EFAULT (rc %d errno %d)", rc, errno);
    size_t ok = 0;
    for (size_t i = 0; i < 8 * PAGE; i++)
        ok += m[i] == 7;
    CHECK(ok == 8 * PAGE, "the mapped half kept its data");
    /* read-only memory */
    mprotect(m, 8 * PAGE, PROT_READ);
    rc = npl_place_range(m, 8 * PAGE, cyc, NULL, 0);
    CHECK(rc == -1 && errno == EACCES, "read-only range: EACCES (rc %d errno %d)", rc, errno);
    CHECK(m[5] == 7, "read-only data kept");
    munmap(m, 8 * PAGE);

    /* queries on unmapped memory: per-page -EFAULT (or -ENOENT), not a crash */
    int nodes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    rc = npl_query_pages(hole, 8 * PAGE, nodes, 8);
    CHECK((rc == 8 && nodes[0] < 0 && nodes[7] < 0) || rc == -1,
          "query of unmapped pages: negative per page or an error (rc %d, %d)", rc, nodes[0]);
    CHECK(FAILS(npl_query_pages(NULL, PAGE, nodes, 8), EINVAL, EINVAL), "query NULL");
    CHECK(FAILS(npl_query_pages(hole, 0, nodes, 8), EINVAL, EINVAL), "query empty");
    CHECK(FAILS(npl_query_pages(hole, 8 * PAGE, NULL, 8), EINVAL, EINVAL), "query NULL output");
    CHECK(FAILS(npl_query_pages(hole, 8 * PAGE, nodes, 7), EINVAL, EINVAL), "query output too small");
    CHECK(FAILS(npl_query_pages(hole, SIZE_MAX, nodes, 8), EOVERFLOW, EINVAL), "query wraps");
    size_t counts[64], absent;
    rc = npl_histogram(hole, 8 * PAGE, counts, &absent);
    CHECK(rc == 0 || rc == -1, "histogram of unmapped memory: no crash");
    CHECK(FAILS(npl_histogram(hole, SIZE_MAX / 2, counts, &absent), EOVERFLOW, EINVAL) ||
              errno == ENOMEM || errno == EFAULT,
          "histogram of a huge length: an error, not a huge allocation (errno %d)", errno);
    CHECK(FAILS(npl_histogram(hole, 8 * PAGE, NULL, &absent), EINVAL, EINVAL), "histogram NULL");
    size_t hg[64], bs[64];
    rc = npl_histogram_huge(hole, 8 * PAGE, hg, bs, NULL);
    CHECK(rc >= -1 && rc <= 1, "histogram_huge of unmapped memory: no crash");
    CHECK(FAILS(npl_histogram_huge(hole, SIZE_MAX / 2, hg, bs, NULL), EOVERFLOW, EINVAL) ||
              errno == ENOMEM || errno == EFAULT,
          "histogram_huge of a huge length: an error (errno %d)", errno);
    CHECK(FAILS(npl_histogram_huge(hole, 8 * PAGE, NULL, bs, NULL), EINVAL, EINVAL), "histogram_huge NULL");

    /* migration and next-touch on bad ranges */
    struct npl_migrate_result mr;
    rc = npl_migrate_range(hole, 8 * PAGE, 0, &mr);
    CHECK(rc == -1 || (rc == 0 && mr.moved == 0), "migrate unmapped: error or nothing moved");
    CHECK(FAILS(npl_migrate_range(NULL, PAGE, 0, &mr), EINVAL, EFAULT), "migrate NULL");
    CHECK(FAILS(npl_migrate_range(hole, 0, 0, &mr), EINVAL, EINVAL), "migrate empty");
    CHECK(FAILS(npl_migrate_range(hole, SIZE_MAX, 0, &mr), EINVAL, EOVERFLOW), "migrate wraps");
    CHECK(FAILS(npl_migrate_range_policy(hole, 8 * PAGE, NULL, NULL, &mr), EINVAL, EINVAL),
          "migrate_range_policy NULL policy");
    rc = npl_next_touch_arm(hole, 8 * PAGE, 0);
    CHECK(rc == -1, "arming unmapped memory: an error (rc %d errno %d)", rc, errno);
    if (rc == 0)
        npl_next_touch_disarm(hole);
    CHECK(FAILS(npl_next_touch_arm(NULL, PAGE, 0), EINVAL, EFAULT), "arm NULL");
    char *n = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(FAILS(npl_next_touch_arm(n + 1, PAGE, 0), EINVAL, EINVAL), "arm unaligned");
    CHECK(FAILS(npl_next_touch_arm(n, 0, 0), EINVAL, EINVAL), "arm empty");
    CHECK(FAILS(npl_next_touch_arm(n, SIZE_MAX, 0), EINVAL, EOVERFLOW), "arm wraps");
    CHECK(FAILS(npl_next_touch_disarm(n), ENOENT, EINVAL), "disarm a range never armed");
    CHECK(npl_next_touch_prepare(n, 4 * PAGE) == 0, "prepare on memory not armed: nothing to do");
    CHECK(npl_next_touch_arm(n, 4 * PAGE, 0) == 0, "arm");
    CHECK(npl_next_touch_arm(n, 4 * PAGE, 0) == 0, "arm again (re-arm)");
    n[5] = 3; /* the touch resolves the chunk */
    CHECK(npl_next_touch_disarm(n) == 0 && n[5] == 3, "disarm");
    CHECK(FAILS(npl_next_touch_disarm(n), ENOENT, EINVAL), "disarm twice");
    CHECK(FAILS(npl_next_touch_get_stats(NULL), EINVAL, EINVAL), "next_touch stats NULL");
    munmap(n, 4 * PAGE);
    CHECK(FAILS(npl_get_migrate_stats(NULL), EINVAL, EINVAL), "migrate stats NULL");
    CHECK(FAILS(npl_get_stats(NULL), EINVAL, EINVAL), "stats NULL");
    npl_policy_free(cyc);
}

/* more armed ranges than the table holds: ENOSPC, the others still work */
static void too_many_ranges(void)
{
    int n = npl_next_touch_capacity() + 4, armed = 0, nospc = 0;
    char *m = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < n; i++) {
        int rc = npl_next_touch_register(m + (size_t)i * PAGE, PAGE, 0);
        armed += rc == 0;
        nospc += rc == -1 && errno == ENOSPC;
    }
    CHECK(armed <= npl_next_touch_capacity() && nospc == n - armed && nospc >= 4,
          "%d ranges registered, %d ENOSPC", armed, nospc);
    int disarmed = 0;
    for (int i = 0; i < n; i++)
        disarmed += npl_next_touch_disarm(m + (size_t)i * PAGE) == 0;
    CHECK(disarmed == armed, "every registered range forgotten (%d of %d)", disarmed, armed);
    m[0] = 1;
    CHECK(npl_next_touch_register(m, PAGE, 0) == 0 && npl_next_touch_disarm(m) == 0,
          "the table is usable again");
    munmap(m, (size_t)n * PAGE);
}

static void *wrap_noop(void *arg) { return arg; }

static void bad_replicas_and_threads(void)
{
    static char master[3 * PAGE];
    npl_replica *r = NULL;
    int bogus[] = {1 << 20}, neg[] = {-1};
    CHECK(FAILS(npl_replicate(NULL, master, sizeof master, NULL, 0, 0), EINVAL, EINVAL), "replicate NULL out");
    CHECK(FAILS(npl_replicate(&r, master, 0, NULL, 0, 0), EINVAL, EINVAL), "replicate 0 bytes");
    CHECK(FAILS(npl_replicate(&r, master, sizeof master, bogus, 1, 0), EINVAL, EXDEV), "replicate on no node");
    CHECK(FAILS(npl_replicate(&r, master, sizeof master, neg, 1, 0), EINVAL, EXDEV), "replicate node -1");
    CHECK(FAILS(npl_replicate(&r, master, sizeof master, bogus, -1, 0), EINVAL, EINVAL), "nnodes -1");
    CHECK(FAILS(npl_replicate(&r, master, SIZE_MAX, NULL, 0, 0), EOVERFLOW, ENOMEM) || errno == EINVAL,
          "replicate SIZE_MAX bytes (errno %d)", errno);
    CHECK(npl_replicate(&r, master, sizeof master, NULL, 0, 0) == 0, "replicate");
    if (r) {
        CHECK(npl_replica_on(r, 1 << 20) == NULL && errno == EINVAL, "replica_on missing node");
        CHECK(npl_replica_on(r, -1) == NULL && errno == EINVAL, "replica_on -1");
        CHECK(FAILS(npl_replica_info(r, NULL), EINVAL, EINVAL), "replica_info NULL");
        npl_replica_free(r);
    }
    npl_replica_free(NULL);
    CHECK(FAILS(npl_replica_info(NULL, NULL), EINVAL, EINVAL), "replica_info NULL set");
    CHECK(FAILS(npl_node_master_cpu(-1), EINVAL, EINVAL), "master cpu of node -1");
    CHECK(FAILS(npl_node_master_cpu(1 << 20), EINVAL, EINVAL), "master cpu of node 2^20");

    /* pinning: bad strategies and CPU lists */
    int cpus[64];
    const char *bad[] = {"bogus", "-1", "0-", "3-1", "99999", "0,,1", "1 2", "list:", NULL};
    for (int i = 0; bad[i]; i++)
        CHECK(FAILS(npl_pin_order(NULL, bad[i], cpus, 64), EINVAL, EXDEV), "pin order '%s'", bad[i]);
    CHECK(npl_pin_order(NULL, NULL, cpus, 64) == npl_pin_order(NULL, "compact", cpus, 64) &&
              npl_pin_order(NULL, "", cpus, 64) == npl_pin_order(NULL, "compact", cpus, 64),
          "pin order NULL or \"\": the default (compact)");
    CHECK(FAILS(npl_pin_order(NULL, "compact", cpus, -1), EINVAL, EINVAL), "pin order max -1");
    CHECK(FAILS(npl_pin_order(NULL, "compact", NULL, 64), EINVAL, EINVAL) ||
              npl_pin_order(NULL, "compact", NULL, 0) >= 1,
          "pin order NULL output");
    CHECK(FAILS(npl_pin_cpu(NULL, "compact", -1), EINVAL, EINVAL), "pin_cpu thread -1");
    CHECK(FAILS(npl_pin_self("bogus", 0), EINVAL, EINVAL), "pin_self bogus");
    CHECK(FAILS(npl_pin_self("compact", -1), EINVAL, EINVAL), "pin_self -1");
    CHECK(npl_where_am_i(NULL, NULL) == 0, "where_am_i(NULL, NULL)");
    pthread_t th;
    CHECK(npl_pthread_create(&th, NULL, NULL, NULL, "compact") != 0, "pthread_create NULL start");
    CHECK(npl_pthread_create(&th, NULL, wrap_noop, NULL, "bogus") != 0,
          "pthread_create bogus strategy");
}

/* NUMAPLACE_POLICY with a bad value: a clear error, nothing allocated */
static void bad_env(void)
{
    uint64_t live0 = live_arrays();
    int maps0 = count_maps();
    const char *bad[] = {"cyclik", "bind_all:-1", "weighted:0=0", "prime_mapp:4", "@", NULL};
    for (int i = 0; bad[i]; i++) {
        setenv("NUMAPLACE_POLICY", bad[i], 1);
        errno = 0;
        void *a = npl_alloc(4 * PAGE, NULL);
        CHECK(a == NULL && errno == EINVAL && strstr(npl_last_error(), "NUMAPLACE_POLICY"),
              "NUMAPLACE_POLICY=%s: EINVAL naming the variable ('%s')", bad[i], npl_last_error());
        npl_free(a);
    }
    setenv("NUMAPLACE_POLICY", "bind_all:4000", 1);
    CHECK(npl_alloc(4 * PAGE, NULL) == NULL && errno == EINVAL, "NUMAPLACE_POLICY on a missing node");
    CHECK(live_arrays() == live0 && count_maps() <= maps0 + MAPS_SLACK, "nothing allocated (%d -> %d maps)", maps0,
          count_maps());
    setenv("NUMAPLACE_POLICY", "cyclic", 1);
    char *a = npl_alloc(4 * PAGE, NULL);
    char polstr[256] = "";
    CHECK(a && npl_array_policy(a, polstr, sizeof polstr) > 0 && strcmp(polstr, "cyclic") == 0,
          "a good NUMAPLACE_POLICY is used ('%s')", polstr);
    npl_free(a);
    setenv("NUMAPLACE_POLICY", "", 1);
    a = npl_alloc(4 * PAGE, NULL);
    CHECK(a != NULL, "empty NUMAPLACE_POLICY: first touch");
    npl_free(a);
    unsetenv("NUMAPLACE_POLICY");
}

/* config files: truncated, binary, huge, contradictory, duplicate: errors name the file and line */
static void bad_config(void)
{
    static const struct {
        const char *text, *where; /* where: "file:line" the message must contain ("" = file) */
    } bad[] = {
        {"[machine\nnodes = 0\n", "t.conf:1"},
        {"[machine]\nnodes\n", "t.conf:2"},
        {"[machine]\nnodes = 0-3\nnodes = 1\n", "t.conf:3"},
        {"nodes = 0\n", "t.conf:1"},
        {"[nosuchsection]\nx = 1\n", "t.conf:"}, /* reported at its first key */
        {"[machine]\nbogus = 1\n", "t.conf:2"},
        {"[policy]\ndefault = cyclik\n", "t.conf:2"},
        {"[machine]\nnodes = 3-1\n", "t.conf:2"},
        {"[machine]\n\x01\x02\x03 = 1\n", "t.conf:2"},
        {"[factors]\nnodes = 0,1\nlatency_ns.0 = 80.5\n", "t.conf"},
        {"[machine]\nnodes = 0,1\n[factors]\nnodes = 2,3\n", "t.conf"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        npl_config *c = (npl_config *)1;
        int rc = npl_config_parse(&c, bad[i].text, strlen(bad[i].text), "t.conf");
        CHECK(rc == -1 && errno == EINVAL && strstr(npl_last_error(), bad[i].where),
              "config %zu rejected naming %s: rc %d '%s'", i, bad[i].where, rc, npl_last_error());
        if (rc == 0)
            npl_config_free(c);
    }
    /* binary: NUL bytes */
    static const char elf[] = "\x7f" "ELF\x02\x01\x01\x00\x00\x00";
    npl_config *c;
    CHECK(FAILS(npl_config_parse(&c, elf, sizeof elf, "t.conf"), EINVAL, EINVAL) &&
              strstr(npl_last_error(), "t.conf"), "binary file rejected: '%s'", npl_last_error());
    /* huge: over 1 MiB */
    size_t n = (2u << 20) + 7;
    char *huge = malloc(n);
    for (size_t i = 0; i < n; i++)
        huge[i] = i % 64 == 63 ? '\n' : '#';
    CHECK(FAILS(npl_config_parse(&c, huge, n, "t.conf"), EFBIG, EINVAL), "2 MiB config rejected");
    free(huge);
    CHECK(FAILS(npl_config_parse(NULL, "", 0, "t.conf"), EINVAL, EINVAL), "config NULL out");
    CHECK(FAILS(npl_config_parse(&c, NULL, 5, "t.conf"), EINVAL, EINVAL), "config NULL text");
    /* an empty text is an empty config */
    CHECK(npl_config_parse(&c, "", 0, "t.conf") == 0, "empty config: %s", npl_last_error());
    if (c == NULL || c == (npl_config *)1)
        return;
    CHECK(npl_config_get(c, "machine", "nodes") == NULL && errno == ENOENT, "unset key: ENOENT");
    CHECK(FAILS(npl_config_set(c, "machine", "nodes", "0\n[policy]"), EINVAL, EINVAL),
          "set: a value with a newline");
    CHECK(FAILS(npl_config_set(c, "machine", "nodes", "x"), EINVAL, EINVAL), "set: bad list");
    CHECK(npl_config_get(c, "machine", "nodes") == NULL, "failed sets left nothing");
    npl_config_free(c);
    npl_config_free(NULL);
}

/* ---- more threads than CPUs ---- */
static atomic_int wrap_bad;
static void *wrap_fn(void *arg)
{
    int n = (int)(intptr_t)arg, cpu = -1;
    npl_where_am_i(&cpu, NULL);
    if (cpu != npl_pin_cpu(NULL, "compact", n))
        atomic_fetch_add(&wrap_bad, 1);
    return NULL;
}
static void oversubscribed(void)
{
    int ncpu = npl_topo_cpu_count(npl_topo_self());
    int nt = 4 * ncpu + 3;
    pthread_t th[512];
    if (nt > 512)
        nt = 512;
    npl_pthread_reset();
    int created = 0;
    for (int i = 1; i <= nt; i++)
        created += npl_pthread_create(&th[i - 1], NULL, wrap_fn, (void *)(intptr_t)i, "compact") == 0;
    for (int i = 0; i < created; i++)
        pthread_join(th[i], NULL);
    CHECK(created == nt && wrap_bad == 0, "%d threads on %d CPUs: each on entry n mod count (%d wrong)",
          nt, ncpu, wrap_bad);
    npl_pthread_reset();
    /* a bind_block policy for more threads than CPUs still maps and places */
    npl_policy *p = pol("bind_block:threads=64");
    unsigned char *a = npl_alloc(64 * PAGE, p);
    struct npl_check c;
    CHECK(a && npl_check(a, &c) == 0 && c.placed == 64, "bind_block:threads=64 on %d CPUs placed", ncpu);
    npl_free(a);
    npl_policy_free(p);
}

/* ------------------------------------------------------------------------------------------ */
/* concurrency 1: 4 threads re-place one array under different policies while one writes */
#define RACE_PAGES 256
static unsigned char *race_arr;
static atomic_int race_stop, race_errors;
static void *applier(void *arg)
{
    static const char *names[] = {"cyclic", "skew_mapp", "bind_all", "random:seed=3",
                                  "cyclic_block:5", "prime_mapp"};
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < 12; i++) {
        npl_policy *p = pol(names[(id + i) % 6]);
        if (npl_apply(race_arr, p, 0) != 0)
            atomic_fetch_add(&race_errors, 1);
        if (i % 3 == 0 && npl_apply_part(race_arr, (size_t)id * 16, 16, p, 0) != 0) {
            printf("apply_part: %s\n", npl_last_error());
            atomic_fetch_add(&race_errors, 1);
        }
        npl_policy_free(p);
    }
    return NULL;
}
static void *writer(void *arg)
{
    long *count = arg;
    /* increments one 8-byte counter per page, round after round, until told to stop */
    uint64_t *w = (uint64_t *)race_arr;
    size_t per = PAGE / 8;
    while (!atomic_load(&race_stop)) {
        for (size_t pg = 0; pg < RACE_PAGES; pg++)
            __atomic_fetch_add(&w[pg * per + 1], 1, __ATOMIC_RELAXED);
        (*count)++;
    }
    return NULL;
}
static void concurrent_apply(void)
{
    npl_shape s = {1, 2, {RACE_PAGES, PAGE, 0}, NPL_ROW_MAJOR}; /* a row is a page */
    npl_policy *p = pol("cyclic");
    race_arr = npl_alloc_array(&s, p, 0);
    npl_policy_free(p);
    CHECK(race_arr != NULL, "race array");
    if (!race_arr)
        return;
    for (size_t i = 0; i < RACE_PAGES * PAGE; i++)
        race_arr[i] = (unsigned char)(i * 13 + 1);
    uint64_t *w = (uint64_t *)race_arr;
    for (size_t pg = 0; pg < RACE_PAGES; pg++)
        w[pg * (PAGE / 8) + 1] = 0;
    uint64_t sum0 = checksum(race_arr + 16, PAGE - 16); /* bytes nobody writes: page 0 tail */
    uint64_t sum_rest = checksum(race_arr + PAGE * 8, PAGE * (RACE_PAGES - 8));
    (void)sum_rest;
    pthread_t ap[4], wr;
    long rounds = 0;
    atomic_store(&race_stop, 0);
    pthread_create(&wr, NULL, writer, &rounds);
    for (int i = 0; i < 4; i++)
        pthread_create(&ap[i], NULL, applier, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++)
        pthread_join(ap[i], NULL);
    atomic_store(&race_stop, 1);
    pthread_join(wr, NULL);
    CHECK(race_errors == 0, "48 re-placements from 4 threads: %d failed", race_errors);
    size_t lost = 0;
    for (size_t pg = 0; pg < RACE_PAGES; pg++)
        lost += w[pg * (PAGE / 8) + 1] != (uint64_t)rounds;
    CHECK(lost == 0, "writer's %ld rounds of increments intact on every page (%zu pages differ)",
          rounds, lost);
    /* every byte outside the counters is as written */
    size_t bad = 0;
    for (size_t i = 0; i < RACE_PAGES * PAGE; i++) {
        size_t off = i % PAGE;
        if (off >= 8 && off < 16)
            continue;
        bad += race_arr[i] != (unsigned char)(i * 13 + 1);
    }
    CHECK(bad == 0 && checksum(race_arr + 16, PAGE - 16) == sum0, "data checksummed: %zu bytes differ", bad);
    struct npl_check c;
    char polstr[256] = "";
    CHECK(npl_check(race_arr, &c) == 0 && c.pages == RACE_PAGES && c.absent == 0,
          "array consistent after the race: %zu/%zu placed", c.placed, c.pages);
    CHECK(npl_array_policy(race_arr, polstr, sizeof polstr) > 0, "policy recorded: '%s'", polstr);
    CHECK(npl_free(race_arr) == 0, "free");
}

/* concurrency 2: npl_free racing with check/apply/info from other threads */
static void *volatile free_target;
static atomic_int free_started, free_bad, free_enoent;
static void *prober(void *arg)
{
    int kind = (int)(intptr_t)arg;
    npl_policy *p = pol(kind == 1 ? "skew_mapp" : "cyclic");
    atomic_fetch_add(&free_started, 1);
    for (;;) { /* until the free is seen (a fixed count ran out first on a busy machine) */
        void *a = free_target;
        int rc;
        struct npl_check c;
        struct npl_array_info info;
        if (kind == 0)
            rc = npl_check(a, &c);
        else if (kind == 1)
            rc = npl_apply(a, p, 0);
        else
            rc = npl_array_info(a, &info);
        if (rc == -1) {
            if (errno == ENOENT)
                atomic_fetch_add(&free_enoent, 1);
            else
                atomic_fetch_add(&free_bad, 1);
            break;
        }
    }
    npl_policy_free(p);
    return NULL;
}
struct double_free {
    void *a;
    atomic_int *go;
    int rc, err;
};
static void *freer(void *arg)
{
    struct double_free *d = arg;
    while (!atomic_load(d->go))
        ;
    d->rc = npl_free(d->a);
    d->err = errno;
    return NULL;
}
static void concurrent_free(void)
{
    uint64_t live0 = live_arrays();
    npl_policy *p = pol("cyclic");
    int rounds = 20, all_enoent = 1;
    for (int r = 0; r < rounds; r++) {
        free_target = npl_alloc(32 * PAGE, p);
        memset(free_target, r, 32 * PAGE);
        atomic_store(&free_started, 0);
        atomic_store(&free_enoent, 0);
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            pthread_create(&th[i], NULL, prober, (void *)(intptr_t)i);
        while (atomic_load(&free_started) < 3)
            sched_yield();
        if (r % 2)
            usleep(200);
        CHECK(npl_free(free_target) == 0, "free while others use the array");
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
        all_enoent &= free_enoent == 3;
    }
    CHECK(free_bad == 0 && all_enoent, "free racing with check/apply/info: %d wrong errors; every "
                                       "loser got ENOENT", free_bad);
    /* two threads free one array: exactly one wins */
    int wins = 0, enoent = 0;
    for (int r = 0; r < 50; r++) {
        atomic_int go = 0;
        struct double_free d[2] = {{npl_alloc(PAGE, p), &go, 0, 0}, {NULL, &go, 0, 0}};
        d[1].a = d[0].a;
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, freer, &d[i]);
        atomic_store(&go, 1);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < 2; i++) {
            wins += d[i].rc == 0;
            enoent += d[i].rc == -1 && d[i].err == ENOENT;
        }
    }
    CHECK(wins == 50 && enoent == 50, "50 double frees from 2 threads: %d wins, %d ENOENT", wins, enoent);
    npl_policy_free(p);
    CHECK(live_arrays() == live0, "nothing leaked (%llu live)", (unsigned long long)live_arrays());
}

/* concurrency 3: many threads allocating, placing, checking and freeing at once */
static atomic_int churn_bad;
static void *churner(void *arg)
{
    int id = (int)(intptr_t)arg;
    static const char *names[] = {"cyclic", "bind_all", "skew_mapp", "random_block:2,seed=9",
                                  "first_touch", "cyclic_block:3"};
    uint64_t seed = (uint64_t)id * 2654435761u + 1;
    for (int i = 0; i < 40; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t bytes = 1 + (seed >> 33) % (256 * 1024);
        npl_policy *p = pol(names[(id + i) % 6]);
        unsigned char *a = npl_alloc(bytes, p);
        if (!a) {
            atomic_fetch_add(&churn_bad, 1);
            npl_policy_free(p);
            continue;
        }
        for (size_t k = 0; k < bytes; k += 97)
            a[k] = (unsigned char)(k + (size_t)id);
        struct npl_check c;
        if (npl_check(a, &c) != 0 || c.misplaced != 0)
            atomic_fetch_add(&churn_bad, 1);
        if (i % 4 == 0) {
            npl_policy *q = pol(names[(id + i + 1) % 6]);
            if (npl_apply(a, q, 0) != 0)
                atomic_fetch_add(&churn_bad, 1);
            npl_policy_free(q);
        }
        for (size_t k = 0; k < bytes; k += 97)
            if (a[k] != (unsigned char)(k + (size_t)id))
                atomic_fetch_add(&churn_bad, 1);
        if (npl_free(a) != 0)
            atomic_fetch_add(&churn_bad, 1);
        npl_policy_free(p);
    }
    return NULL;
}
static void concurrent_churn(void)
{
    uint64_t live0 = live_arrays();
    int maps0 = count_maps();
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, churner, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    struct npl_stats s;
    npl_get_stats(&s);
    CHECK(churn_bad == 0, "8 threads x 40 alloc/place/check/apply/free cycles: %d failures", churn_bad);
    CHECK(s.arrays_live == live0 && (live0 || s.bytes_live == 0),
          "arrays_live back to %llu (%llu), bytes_live %llu", (unsigned long long)live0,
          (unsigned long long)s.arrays_live, (unsigned long long)s.bytes_live);
    int maps1 = count_maps();
    CHECK(maps1 <= maps0 + 24 + MAPS_SLACK, "mappings back near the start: %d -> %d (thread stacks may stay)",
          maps0, maps1);
}

/* npl_last_error is per thread */
static void *err_thread(void *arg)
{
    npl_policy *p;
    npl_policy_parse(&p, "nonsense_b");
    *(int *)arg = strstr(npl_last_error(), "nonsense_b") != NULL;
    return NULL;
}
static void thread_local_errors(void)
{
    npl_policy *p;
    npl_policy_parse(&p, "nonsense_a");
    pthread_t th;
    int ok = 0;
    pthread_create(&th, NULL, err_thread, &ok);
    pthread_join(th, NULL);
    CHECK(ok && strstr(npl_last_error(), "nonsense_a"), "errors are per thread ('%s')", npl_last_error());
}

/* ------------------------------------------------------------------------------------------ */
/* round 3: flags with unknown bits (the internal split flag 0x80000000 among them) were taken
 * silently; npl_config_list wrote through a NULL buffer and returned 0 for a NULL config;
 * a synthetic topology of 10^15 PUs never finished loading */
static void round3(void)
{
    npl_policy *p = pol("cyclic");
    const unsigned bad_flags[] = {0x10u, 0x100u, 0x40000000u, 0x80000000u, 0xfffffff0u};
    npl_shape sh = {1, 1, {16 * PAGE, 0, 0}, NPL_ROW_MAJOR};
    unsigned char *a = npl_alloc(16 * PAGE, p);
    CHECK(a != NULL, "alloc");
    if (!a)
        return;
    memset(a, 0x5a, 16 * PAGE);
    char before[64] = "", after[64] = "";
    npl_array_policy(a, before, sizeof before);
    uint64_t live = live_arrays();
    void *raw = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    npl_replica *r = NULL;
    for (size_t i = 0; i < sizeof bad_flags / sizeof *bad_flags; i++) {
        unsigned f = bad_flags[i];
        errno = 0;
        CHECK(npl_alloc_array(&sh, p, f) == NULL && errno == EINVAL, "alloc flags 0x%x: EINVAL", f);
        CHECK(FAILS(npl_apply(a, p, f), EINVAL, EINVAL), "apply flags 0x%x: EINVAL", f);
        CHECK(FAILS(npl_apply_part(a, 0, PAGE, p, f), EINVAL, EINVAL), "apply_part 0x%x", f);
        CHECK(FAILS(npl_place_range(raw, 4 * PAGE, p, NULL, f), EINVAL, EINVAL),
              "place_range flags 0x%x: EINVAL", f);
        CHECK(FAILS(npl_replicate(&r, a, PAGE, NULL, 0, f), EINVAL, EINVAL) && r == NULL,
              "replicate flags 0x%x: EINVAL", f);
        CHECK(strstr(npl_last_error(), "unknown flag") != NULL, "message says why: %s",
              npl_last_error());
    }
    CHECK(live_arrays() == live, "no array left by the refused allocations");
    unsigned char c[4];
    CHECK(mincore(raw, 4 * PAGE, c) == 0 && !(c[0] & 1) && !(c[3] & 1),
          "refused place_range touched nothing");
    npl_array_policy(a, after, sizeof after);
    size_t sum = 0;
    for (size_t i = 0; i < 16 * PAGE; i++)
        sum += a[i];
    CHECK(sum == (size_t)0x5a * 16 * PAGE && !strcmp(before, after), "array kept (%s)", after);
    CHECK(npl_apply(a, p, NPL_F_STRICT | NPL_F_NO_PROTECT) == 0, "known flags still work: %s",
          npl_last_error());
    npl_free(a);
    munmap(raw, 4 * PAGE);
    npl_policy_free(p);

    npl_config *cfg;
    int out[4] = {-7, -7, -7, -7};
    npl_config_new(&cfg);
    npl_config_set(cfg, "machine", "nodes", "0-3");
    CHECK(FAILS(npl_config_list(NULL, "machine", "nodes", out, 4), EINVAL, EINVAL), "NULL config");
    CHECK(FAILS(npl_config_list(cfg, NULL, "nodes", out, 4), EINVAL, EINVAL), "NULL section");
    CHECK(FAILS(npl_config_list(cfg, "machine", "nodes", NULL, 4), EINVAL, EINVAL),
          "NULL buffer with max 4: EINVAL (was a write through NULL)");
    CHECK(FAILS(npl_config_list(cfg, "machine", "nodes", out, -1), EINVAL, EINVAL), "max -1");
    CHECK(npl_config_list(cfg, "machine", "nodes", NULL, 0) == 4, "NULL, 0: the count");
    CHECK(npl_config_list(cfg, "machine", "nodes", out, 2) == 4 && out[1] == 1 && out[2] == -7,
          "max 2: two written, count 4");
    npl_config_free(cfg);

    const char *huge[] = {"pack:100000 numa:100000 pu:100000", "numa:99999999999999999999 pu:1",
                          "numa:2 core:4097 pu:2", "8193"};
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        npl_topo *t = (npl_topo *)&huge; /* must be reset to NULL */
        errno = 0;
        CHECK(FAILS(npl_topo_load_synthetic(&t, huge[i]), EINVAL, EINVAL) && t == NULL,
              "synthetic \"%s\": EINVAL at once", huge[i]);
    }
    /* a parameter given twice was taken silently, the last one winning */
    const char *twice[] = {"bind_block:threads=2,threads=3", "cyclic_block:pages=1,units=1",
                           "cyclic_block:4,5", "random:seed=1,seed=2", "prime_mapp:5,p=7",
                           "bind_block:pin=compact,pin=scatter", "random_block:8,rows=2,seed=1"};
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        npl_policy *q = (npl_policy *)&twice;
        errno = 0;
        CHECK(FAILS(npl_policy_parse(&q, twice[i]), EINVAL, EINVAL) && q == NULL &&
                  strstr(npl_last_error(), "twice") != NULL,
              "\"%s\": EINVAL (%s)", twice[i], npl_last_error());
    }
    const char *once[] = {"random_block:8,seed=42", "bind_block:threads=4,pin=scatter",
                          "cyclic_block:units=2", "prime_mapp:7"};
    for (size_t i = 0; i < sizeof once / sizeof *once; i++) {
        npl_policy *q = NULL;
        CHECK(npl_policy_parse(&q, once[i]) == 0, "\"%s\" parses: %s", once[i], npl_last_error());
        npl_policy_free(q);
    }
    /* setters took values no policy string can say: the canonical string did not parse again */
    npl_policy *cb = pol("cyclic_block"), *pm = pol("prime_mapp");
    CHECK(FAILS(npl_policy_set_block_pages(cb, SIZE_MAX), EINVAL, EINVAL), "block_pages SIZE_MAX");
    CHECK(FAILS(npl_policy_set_block_units(cb, ((size_t)1 << 40) + 1), EINVAL, EINVAL),
          "block_units 2^40+1");
    CHECK(FAILS(npl_policy_set_prime(pm, 2147483647), EINVAL, EINVAL), "prime 2^31-1");
    CHECK(npl_policy_set_block_units(cb, (size_t)1 << 40) == 0 && npl_policy_set_prime(pm, 1048573)
              == 0, "the largest values still set");
    npl_policy *both[2] = {cb, pm};
    for (int i = 0; i < 2; i++) {
        char s1[128] = "", s2[128] = "";
        npl_policy *back = NULL;
        npl_policy_format(both[i], s1, sizeof s1);
        CHECK(npl_policy_parse(&back, s1) == 0 && npl_policy_format(back, s2, sizeof s2) > 0 &&
                  !strcmp(s1, s2), "\"%s\" parses again to itself: %s", s1, npl_last_error());
        npl_policy_free(back);
        npl_policy_free(both[i]);
    }
    npl_topo *t = NULL;
    CHECK(npl_topo_load_synthetic(&t, "pack:2 [numa(memory=1GB)] [numa(memory=512MB)] core:2 pu:1")
              == 0, "attached memory in brackets still loads: %s", npl_last_error());
    npl_topo_destroy(t);
}

/* ------------------------------------------------------------------------------------------ */
/* Re-arming an array for next-touch while 7 threads write to it finishes, and every write
 * survives (rearm_race.h; the multi-node case, where chunks move between nodes, is in
 * tests/guest/guest_hostile.c): 2 races per chunk size, each under a watchdog (60 s; 300 s under
 * a sanitizer, which makes a race 5-10 times slower). */
static void rearm_while_writing(void)
{
    const size_t chunks[2] = {4096, 64 * 1024};
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 2; i++) {
            int st = rearm_race(64, chunks[c], 7, 100, 20, 0, MAPS_SLACK ? 300 : 60);
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "re-arm while 7 threads write, %zu-byte chunks: finished, every write kept "
                  "(status %#x)", chunks[c], st);
        }
}

/* ------------------------------------------------------------------------------------------ */
/* Failures give back what they took. Each kind of failure is made REPEAT times; the process's
 * mappings, open files and live arrays must not grow after the first time (the first call may
 * load what a library loads once: hwloc's plugins bring libxml2, ICU and libstdc++, which stays
 * loaded; that is not a leak, growth with every failure is). A kind that cannot fail here (a
 * hugetlb pool exists) is skipped, saying why. */
#define REPEAT 5
static struct usage usage_now(void)
{
    return (struct usage){count_maps(), count_fds(), live_arrays()};
}

static npl_policy *leak_cyc, *leak_nowhere;
static unsigned char *leak_arr; /* a library array that failed calls must leave as it was */
static npl_plan *leak_foreign;  /* a plan made for another machine: node 1 of a synthetic one */

static int f_too_large(void)
{
    return npl_alloc((size_t)1 << 62, leak_cyc) == NULL && errno == ENOMEM;
}
static int f_size_max(void)
{
    return npl_alloc(SIZE_MAX, leak_cyc) == NULL && (errno == EOVERFLOW || errno == ENOMEM);
}
static int f_shape_overflow(void)
{
    npl_shape s = {8, 3, {(size_t)1 << 30, (size_t)1 << 30, (size_t)1 << 10}, NPL_ROW_MAJOR};
    return npl_alloc_array(&s, leak_cyc, 0) == NULL && errno == EOVERFLOW;
}
static int f_hugetlb_strict(void)
{
    npl_shape s = {1, 1, {4 << 20, 0, 0}, NPL_ROW_MAJOR};
    return npl_alloc_array(&s, leak_cyc, NPL_F_HUGETLB | NPL_F_STRICT) == NULL &&
           (errno == ENOMEM || errno == ENOSYS);
}
static int f_hugetlb_fallback(void) /* not a failure: base pages instead, reported; then freed */
{
    npl_shape s = {1, 1, {4 << 20, 0, 0}, NPL_ROW_MAJOR};
    void *a = npl_alloc_array(&s, leak_cyc, NPL_F_HUGETLB);
    struct npl_array_info info = {0};
    int ok = a && npl_array_info(a, &info) == 0 && info.hugetlb_fallback == 1;
    return npl_free(a) == 0 && ok;
}
static int f_bad_node(void)
{
    return npl_alloc(64 * PAGE, leak_nowhere) == NULL && errno == EINVAL;
}
static int f_foreign_plan(void) /* the kernel refuses node 1 once the workers run */
{
    npl_shape s = {1, 1, {64 * PAGE, 0, 0}, NPL_ROW_MAJOR};
    return npl_alloc_planned(&s, leak_foreign, 0) == NULL && (errno == EINVAL || errno == EXDEV);
}
static int f_apply(void)
{
    return FAILS(npl_apply(leak_arr, leak_nowhere, 0), EINVAL, EINVAL) &&
           FAILS(npl_apply(leak_arr, leak_cyc, 0x100), EINVAL, EINVAL) &&
           FAILS(npl_apply_planned(leak_arr, leak_foreign, 0), EINVAL, EXDEV) &&
           FAILS(npl_apply_part(leak_arr, 1, SIZE_MAX, leak_cyc, 0), EINVAL, EINVAL) &&
           FAILS(npl_apply_part(leak_arr, 0, 8, leak_nowhere, 0), EINVAL, EINVAL);
}
static int f_replicate(void)
{
    npl_replica *r = NULL;
    struct npl_node_info ni = {0};
    npl_topo_node_info(npl_topo_self(), 0, &ni);
    int node = ni.os_id;
    /* the hugetlb case fails only with an empty pool; the copy is the source's size, never more
     * (a larger one reads past its end) */
    return FAILS(npl_replicate(&r, leak_arr, (size_t)1 << 62, NULL, 0, 0), ENOMEM, EOVERFLOW) &&
           (!hugetlb_pool_empty() ||
            FAILS(npl_replicate(&r, leak_arr, 64 * PAGE, &node, 1, NPL_F_HUGETLB | NPL_F_STRICT),
                  ENOMEM, ENOSYS)) &&
           r == NULL;
}
static int f_next_touch_arm(void)
{
    char *m = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    mprotect(m + 4 * PAGE, 4 * PAGE, PROT_READ);
    int ok = FAILS(npl_next_touch_arm(m, 8 * PAGE, 0), EINVAL, EINVAL); /* mixed protections */
    mprotect(m, 8 * PAGE, PROT_NONE);
    ok &= FAILS(npl_next_touch_arm(m, 8 * PAGE, 0), EACCES, EACCES);
    munmap(m + 2 * PAGE, 2 * PAGE);
    ok &= FAILS(npl_next_touch_arm(m, 8 * PAGE, 0), EFAULT, EFAULT); /* a hole */
    munmap(m, 8 * PAGE);
    /* every slot taken: the extra range fails (ENOSPC), then all are disarmed */
    int cap = npl_next_touch_capacity();
    char *many = mmap(NULL, (size_t)(cap + 1) * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (many == MAP_FAILED)
        return 0;
    for (int i = 0; i < cap; i++)
        ok &= npl_next_touch_arm(many + (size_t)i * PAGE, PAGE, 0) == 0;
    ok &= FAILS(npl_next_touch_arm(many + (size_t)cap * PAGE, PAGE, 0), ENOSPC, ENOSPC);
    for (int i = 0; i < cap; i++)
        ok &= npl_next_touch_disarm(many + (size_t)i * PAGE) == 0;
    munmap(many, (size_t)(cap + 1) * PAGE);
    /* a library array armed twice with another chunk: EINVAL, then disarmed */
    ok &= npl_next_touch_arm_array(leak_arr, PAGE) == 0 &&
          FAILS(npl_next_touch_arm_array(leak_arr, 2 * PAGE), EINVAL, EINVAL) &&
          npl_next_touch_disarm(leak_arr) == 0;
    return ok;
}

static int no_growth(const char *what, int (*fail)(void))
{
    struct usage u0 = usage_now();
    int ok = fail();
    struct usage u1 = usage_now();
    for (int i = 1; i < REPEAT; i++)
        ok &= fail();
    struct usage u2 = usage_now();
    printf("  %s: mappings %d -> %d -> %d, open files %d -> %d -> %d (before, after 1, after %d)\n",
           what, u0.maps, u1.maps, u2.maps, u0.fds, u1.fds, u2.fds, REPEAT);
    CHECK(ok, "%s: failed as documented, %d times (%s)", what, REPEAT, npl_last_error());
    CHECK(u2.maps <= u1.maps + MAPS_SLACK && u2.fds == u1.fds && u2.arrays == u0.arrays,
          "%s: nothing kept: mappings %d, %d after the first, %d after %d; open files %d, %d, %d; "
          "arrays %llu, %llu", what, u0.maps, u1.maps, u2.maps, REPEAT, u0.fds, u1.fds, u2.fds,
          (unsigned long long)u0.arrays, (unsigned long long)u2.arrays);
    return u2.maps - u0.maps;
}

/* The failure of the issue, in a fresh process: npl_alloc of 2^62 bytes six times. The first
 * call loads the topology (hwloc and the libraries its plugins bring: some stay loaded); no
 * later failure may add a mapping or an open file. */
static int fresh_too_large(void)
{
    npl_policy *cyc;
    if (npl_policy_parse(&cyc, "cyclic") < 0)
        return 2;
    struct usage u[7];
    u[0] = usage_now();
    int ok = 1;
    for (int i = 1; i < 7; i++) {
        ok &= npl_alloc((size_t)1 << 62, cyc) == NULL && errno == ENOMEM;
        u[i] = usage_now();
    }
    printf("  fresh process, npl_alloc(2^62) x 6: mappings %d -> %d %d %d %d %d %d, open files "
           "%d -> %d .. %d\n", u[0].maps, u[1].maps, u[2].maps, u[3].maps, u[4].maps, u[5].maps,
           u[6].maps, u[0].fds, u[1].fds, u[6].fds);
    npl_policy_free(cyc);
    fflush(stdout);
    return !ok ? 3 : u[6].maps > u[1].maps + MAPS_SLACK || u[6].fds != u[1].fds ? 4 : 0;
}

static void fresh_first_failure(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fresh_too_large());
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "fresh process: failed allocations add nothing after the first (status %#x)", st);
}

static void failures_give_back(void)
{
    leak_cyc = pol("cyclic");
    leak_nowhere = pol("bind_all:1000");
    npl_topo *other = NULL;
    npl_policy *one = pol("bind_all:1");
    CHECK(npl_topo_load_synthetic(&other, "numa:2 pu:1") == 0 &&
              npl_plan_create(&leak_foreign, one, other, 0) == 0,
          "a plan for a 2-node machine: %s", npl_last_error());
    leak_arr = npl_alloc(64 * PAGE, leak_cyc);
    CHECK(leak_arr != NULL, "array: %s", npl_last_error());
    if (!leak_arr || !leak_foreign)
        return;
    memset(leak_arr, 0x5a, 64 * PAGE);
    no_growth("npl_alloc of 2^62 bytes (ENOMEM)", f_too_large);
    no_growth("npl_alloc of SIZE_MAX bytes (EOVERFLOW)", f_size_max);
    no_growth("a shape whose size overflows (EOVERFLOW)", f_shape_overflow);
    if (hugetlb_pool_empty()) {
        no_growth("NPL_F_HUGETLB | NPL_F_STRICT, empty pool (ENOMEM)", f_hugetlb_strict);
        no_growth("NPL_F_HUGETLB, empty pool: base pages, then freed", f_hugetlb_fallback);
    } else {
        SKIP("hugetlb-pool-free", "the empty hugetlb pool cases: this machine has free 2 MiB "
             "pages");
    }
    no_growth("a node that does not exist (EINVAL)", f_bad_node);
    if (npl_topo_node_count(npl_topo_self(), 0) == 1)
        no_growth("a plan naming a node the kernel refuses, in the workers (EINVAL)",
                  f_foreign_plan);
    else
        SKIP("multinode-host", "the foreign-plan case needs a one-node machine (node 1 exists "
             "here)");
    no_growth("failed npl_apply / npl_apply_part (EINVAL)", f_apply);
    no_growth("failed npl_replicate (ENOMEM)", f_replicate);
    no_growth("failed next-touch arms (EINVAL, EACCES, EFAULT, ENOSPC)", f_next_touch_arm);
    size_t bad = 0;
    for (size_t i = 0; i < 64 * PAGE; i++)
        bad += leak_arr[i] != 0x5a;
    char polstr[64] = "";
    npl_array_policy(leak_arr, polstr, sizeof polstr);
    CHECK(bad == 0 && strcmp(polstr, "cyclic") == 0,
          "the array the failed calls were given is as it was (%zu bytes differ, policy %s)", bad,
          polstr);
    npl_free(leak_arr);
    npl_plan_free(leak_foreign);
    npl_topo_destroy(other);
    npl_policy_free(one);
    npl_policy_free(leak_cyc);
    npl_policy_free(leak_nowhere);
}

/* ------------------------------------------------------------------------------------------ */
/* A kernel or container without the NUMA system calls (seccomp: ENOSYS or EPERM for mbind,
 * set/get_mempolicy, move_pages, migrate_pages), extending test_place.c's child to the rest of
 * the API: every call that needs one of them fails with ENOSYS/EPERM, never a crash; placements
 * on this one node still succeed; every byte stays as written. */

#define DENIED(expr) FAILS(expr, ENOSYS, EPERM)
static unsigned char *denied_arr, *denied_raw;
static size_t denied_len;
static int f_denied(void)
{
    int nodes[64];
    size_t counts[64], absent;
    struct npl_check chk;
    struct npl_migrate_result r;
    return DENIED(npl_query_pages(denied_arr, denied_len, nodes, 64)) &&
           DENIED(npl_histogram(denied_arr, denied_len, counts, &absent)) &&
           DENIED(npl_check(denied_arr, &chk)) &&
           DENIED(npl_migrate_array(denied_arr, 0, &r)) &&
           DENIED(npl_migrate_range_policy(denied_raw, denied_len, leak_cyc, NULL, &r)) &&
           DENIED(npl_next_touch_arm(denied_raw, denied_len, 0)) &&
           DENIED(npl_set_thread_policy(NULL, leak_cyc));
}
static void no_numa_calls(int err)
{
    if (deny_numa_syscalls(err, 1) < 0) {
        printf("seccomp unavailable: %s\n", strerror(errno));
        _exit(NPL_EXIT_SKIPPED);
    }
    if (npl_topo_node_count(npl_topo_self(), 0) != 1) {
        printf("this host has %d nodes\n", npl_topo_node_count(npl_topo_self(), 0));
        _exit(NPL_EXIT_SKIPPED + 1);
    }
    npl_policy *cyc = pol("cyclic"), *bind = pol("bind_all");
    leak_cyc = cyc;
    size_t len = 64 * PAGE, counts[64] = {0}, absent, huge[64], base[64];
    unsigned char *a = npl_alloc(len, cyc), *raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != NULL && raw != MAP_FAILED, "one node: allocation still works: %s", npl_last_error());
    if (!a || raw == MAP_FAILED)
        return;
    memset(a, 0x33, len);
    memset(raw, 0x44, len);
    int nodes[64];
    struct npl_migrate_result r;
    struct npl_check chk;
    npl_replica *rep = NULL;
    CHECK(DENIED(npl_query_pages(a, len, nodes, 64)), "query_pages: ENOSYS/EPERM");
    CHECK(DENIED(npl_histogram(a, len, counts, &absent)), "histogram");
    CHECK(DENIED(npl_histogram_huge(a, len, huge, base, &absent)), "histogram_huge");
    CHECK(DENIED(npl_check(a, &chk)), "check");
    CHECK(DENIED(npl_migrate_range(a, len, 0, &r)), "migrate_range");
    CHECK(DENIED(npl_migrate_array(a, 0, &r)), "migrate_array");
    CHECK(DENIED(npl_migrate_units(a, 0, PAGE, 0, &r)), "migrate_units");
    CHECK(DENIED(npl_migrate_range_policy(raw, len, cyc, NULL, &r)), "migrate_range_policy");
    CHECK(DENIED(npl_set_thread_policy(NULL, cyc)), "set_thread_policy cyclic");
    CHECK(DENIED(npl_set_thread_policy(NULL, bind)), "set_thread_policy bind_all");
    CHECK(DENIED(npl_next_touch_arm(raw, len, 0)), "next_touch_arm");
    CHECK(DENIED(npl_next_touch_register(raw, len, 0)), "next_touch_register");
    CHECK(npl_apply(a, bind, NPL_F_STRICT) == 0 && npl_apply_part(a, 0, PAGE, cyc, 0) == 0,
          "one node: re-placement trivially exact: %s", npl_last_error());
    CHECK(npl_place_range(raw, len, cyc, NULL, NPL_F_STRICT) == 0, "one node: place_range");
    CHECK(npl_replicate(&rep, a, len, NULL, 0, 0) == 0 && rep &&
              ((const unsigned char *)npl_replica_local(rep))[len - 1] == 0x33,
          "replicas: one copy, filled");
    npl_replica_free(rep);
    denied_arr = a;
    denied_raw = raw;
    denied_len = len;
    no_growth("calls refused by seccomp (ENOSYS/EPERM)", f_denied);
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += (a[i] != 0x33) + (raw[i] != 0x44);
    CHECK(bad == 0, "every byte as written (%zu differ)", bad);
    CHECK(npl_free(a) == 0 && live_arrays() == 0, "freed, nothing left");
    munmap(raw, len);
    npl_policy_free(cyc);
    npl_policy_free(bind);
}

static void no_numa(void)
{
    const int errs[] = {ENOSYS, EPERM};
    for (int i = 0; i < 2; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            t_pass = t_fail = 0;
            no_numa_calls(errs[i]);
            fflush(stdout);
            _exit(t_fail > 50 ? 50 : t_fail); /* 77, 78: skipped */
        }
        int st = 0;
        waitpid(pid, &st, 0);
        const char *e = errs[i] == ENOSYS ? "ENOSYS" : "EPERM";
        if (WIFEXITED(st) && WEXITSTATUS(st) == NPL_EXIT_SKIPPED)
            SKIP("seccomp", "no NUMA syscalls (%s): seccomp cannot deny them here", e);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == NPL_EXIT_SKIPPED + 1)
            SKIP("multinode-host", "no NUMA syscalls (%s): the checks assume one node "
                 "(placement is trivial there)", e);
        else
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "no NUMA syscalls (%s): child status 0x%x",
                  e, st);
    }
}

int main(void)
{
    fresh_first_failure(); /* first: a process that has not loaded the topology yet */
    no_numa(); /* first: the children must probe the kernel's support themselves */
    CHECK(npl_topo_self() != NULL, "this machine's topology loads: %s", npl_last_error());
    if (!npl_topo_self())
        return check_summary("test_hostile_api");
    /* warm up: the first placement starts worker threads whose stacks glibc maps once */
    npl_policy *w = pol("cyclic");
    npl_free(npl_alloc(16 << 20, w));
    npl_policy_free(w);
    unsetenv("NUMAPLACE_POLICY");
    bad_topology();
    bad_policies();
    bad_arrays();
    bad_ranges();
    too_many_ranges();
    bad_replicas_and_threads();
    bad_env();
    bad_config();
    oversubscribed();
    thread_local_errors();
    round3();
    failures_give_back();
    rearm_while_writing();
    concurrent_apply();
    concurrent_free();
    concurrent_churn();
    CHECK(live_arrays() == 0, "no array left at the end (%llu)", (unsigned long long)live_arrays());
    return check_summary("test_hostile_api");
}
