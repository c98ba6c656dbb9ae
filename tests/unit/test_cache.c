/* SPDX-License-Identifier: BSD-3-Clause */
/* npl_topo_cache_size: cache sizes recorded from hwloc (synthetic caches, errors, this machine). */
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <stdint.h>

int main(void)
{
    npl_topo *t;
    uint64_t b = 0;
    CHECK(npl_topo_load_synthetic(&t, "pack:1 l3:1(size=33554432) l2:2(size=1048576) "
                                      "l1d:2(size=49152) "
                                      "core:2 pu:1") == 0,
          "load a synthetic topology with caches");
    CHECK(npl_topo_cache_size(t, 3, &b) == 0 && b == (uint64_t)32 << 20, "L3 32 MiB (%llu)",
          (unsigned long long)b);
    CHECK(npl_topo_cache_size(t, 2, &b) == 0 && b == (uint64_t)1 << 20, "L2 1 MiB (%llu)",
          (unsigned long long)b);
    CHECK(npl_topo_cache_size(t, 1, &b) == 0 && b == (uint64_t)48 << 10, "L1 48 KiB (%llu)",
          (unsigned long long)b);
    errno = 0;
    CHECK(npl_topo_cache_size(t, 4, &b) == -1 && errno == ENOENT, "no L4: ENOENT");
    errno = 0;
    CHECK(npl_topo_cache_size(t, 0, &b) == -1 && errno == EINVAL, "level 0: EINVAL");
    errno = 0;
    CHECK(npl_topo_cache_size(t, 6, &b) == -1 && errno == EINVAL, "level 6: EINVAL");
    errno = 0;
    CHECK(npl_topo_cache_size(t, 3, NULL) == -1 && errno == EINVAL, "NULL bytes: EINVAL");
    npl_topo_destroy(t);
    CHECK(npl_topo_load_synthetic(&t, "numa:2 core:2 pu:1") == 0, "load without caches");
    errno = 0;
    CHECK(npl_topo_cache_size(t, 1, &b) == -1 && errno == ENOENT, "no caches: ENOENT");
    npl_topo_destroy(t);
    /* this machine: whatever hwloc says, the call must answer consistently */
    int rc = npl_topo_cache_size(NULL, 1, &b);
    CHECK(rc == 0 ? b > 0 : errno == ENOENT, "this machine's L1: %d", rc);
    return check_summary("test_cache");
}
