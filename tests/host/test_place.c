/* SPDX-License-Identifier: BSD-3-Clause */
/* Host tests of the syscall layer on this (one-node) machine: allocation, queries, errors,
 * system-call and mapping counts, pinning, and a kernel without NUMA system calls (seccomp).
 * Multi-node placement is proven in the guest (tests/guest). */
#define _GNU_SOURCE
#include "check.h"
#include "deny_numa.h"
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <numaplace/replicate.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child: a kernel that says err to every NUMA call. Returns the child's failure count, or
 * NPL_EXIT_SKIPPED when seccomp cannot deny the calls here. */
static int no_numa_child(int err)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (deny_numa_syscalls(err, 0) < 0) {
            printf("seccomp unavailable: %s\n", strerror(errno));
            _exit(NPL_EXIT_SKIPPED);
        }
        const struct npl_support *s = npl_get_support();
        CHECK(!s->mbind && !s->move_pages && !s->set_mempolicy,
              "support probe reports no NUMA syscalls (errno %d)", err);
        const npl_topo *t = npl_topo_self();
        CHECK(t != NULL && npl_topo_node_count(t, 0) == 1, "topology still loads (one node)");
        npl_policy *p = pol("cyclic");
        char *a = npl_alloc(1 << 20, p);
        CHECK(a != NULL, "one node, no syscalls: cyclic array still allocated: %s",
              npl_last_error());
        if (a) {
            struct npl_array_info info;
            npl_array_info(a, &info);
            CHECK(info.last.syscalls == 0 && info.last.placed == 256,
                  "trivially placed without a syscall (%zu syscalls)", info.last.syscalls);
            CHECK(a[12345] == 0, "zeroed");
            struct npl_check c;
            CHECK(npl_check(a, &c) == -1 && errno == ENOSYS, "check says ENOSYS plainly");
            npl_free(a);
        }
        npl_policy_free(p);
        _exit(t_fail > 50 ? 50 : t_fail); /* 77: skipped */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void *thread_fn(void *arg)
{
    int *cpu = arg;
    npl_where_am_i(cpu, NULL);
    return NULL;
}

int main(void)
{
    /* first, before this process probes anything: kernels/containers without NUMA syscalls */
    for (int i = 0; i < 2; i++) {
        int err = i ? EPERM : ENOSYS, r = no_numa_child(err);
        if (r == NPL_EXIT_SKIPPED)
            SKIP("seccomp", "no NUMA system calls (%s): seccomp cannot deny them here",
                 i ? "EPERM" : "ENOSYS");
        else
            CHECK(r == 0, "%s kernel handled (child: %d failed)", i ? "EPERM" : "ENOSYS", r);
    }

    const npl_topo *t = npl_topo_self();
    CHECK(t != NULL, "topology loads: %s", npl_last_error());
    if (!t)
        return check_summary("test_place");
    int node0 = npl_topo_node_id(t, 0);
    printf("host: %d node(s), %d CPUs allowed\n", npl_topo_node_count(t, 0), npl_topo_cpu_count(t));

    /* warm up: the first placement starts worker threads, whose stacks glibc maps once */
    npl_policy *warm = pol("cyclic");
    npl_free(npl_alloc(64 << 20, warm));
    npl_policy_free(warm);
    /* every policy on this machine: every page placed, all on the (only) node(s) */
    const char *policies[] = {"bind_all", "bind_block", "cyclic", "cyclic_block:4", "skew_mapp",
                              "prime_mapp", "random:seed=5", "random_block:3,seed=5", NULL};
    for (int i = 0; policies[i]; i++) {
        npl_policy *p = pol(policies[i]);
        int m0 = count_maps();
        size_t bytes = (8 << 20) + 123; /* not a page multiple */
        unsigned char *a = npl_alloc(bytes, p);
        int m1 = count_maps();
        CHECK(a != NULL, "%s: alloc: %s", policies[i], npl_last_error());
        if (!a) {
            npl_policy_free(p);
            continue;
        }
        struct npl_check c;
        CHECK(npl_check(a, &c) == 0 && c.pages == 2049 && c.placed == 2049 && c.misplaced == 0 &&
                  c.absent == 0,
              "%s: intended vs actual %zu/%zu misplaced %zu absent %zu", policies[i], c.placed,
              c.pages, c.misplaced, c.absent);
        struct npl_array_info info;
        npl_array_info(a, &info);
        CHECK(info.last.syscalls <= 4 + 16 * (size_t)(npl_topo_node_count(t, 0) + 3),
              "%s: O(nodes) syscalls (%zu)", policies[i], info.last.syscalls);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        m1 = m0; /* the sanitizer runtime maps memory of its own meanwhile */
#endif
        CHECK(maps_in(a, bytes) == 1 && m1 - m0 <= 2,
              "%s: one mapping covers the array (%d), %d added to the process", policies[i],
              maps_in(a, bytes), m1 - m0);
        size_t sum = 0, ok = 1;
        for (size_t k = 0; k < bytes; k++)
            ok &= a[k] == 0;
        CHECK(ok, "%s: memory is zero", policies[i]);
        for (size_t k = 0; k < bytes; k++)
            a[k] = (unsigned char)(k * 7);
        /* re-place under another policy: data kept */
        npl_policy *q = pol("skew_mapp");
        CHECK(npl_apply(a, q, 0) == 0, "%s -> skew_mapp: %s", policies[i], npl_last_error());
        for (size_t k = 0; k < bytes; k++)
            sum += a[k] == (unsigned char)(k * 7);
        CHECK(sum == bytes, "%s: data intact after re-placement", policies[i]);
        npl_policy_free(q);
        CHECK(npl_free(a) == 0, "free");
        npl_policy_free(p);
    }

    /* queries */
    char *raw = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    raw[0] = 1;
    raw[5 * 4096] = 1;
    int nodes[16];
    CHECK(npl_query_pages(raw, 16 * 4096, nodes, 16) == 16 && nodes[0] == node0 &&
              nodes[5] == node0 && nodes[1] == -ENOENT,
          "query: touched pages on node %d, untouched -ENOENT (%d %d %d)", node0, nodes[0],
          nodes[5], nodes[1]);
    size_t counts[64], absent = 0;
    CHECK(npl_histogram(raw, 16 * 4096, counts, &absent) == 0 && counts[0] == 2 && absent == 14,
          "histogram 2 present, 14 absent");
    struct npl_migrate_result mr;
    CHECK(npl_migrate_range(raw, 16 * 4096, node0, &mr) == 0 && mr.already == 2 && mr.absent == 14 &&
              mr.moved == 0 && mr.failed == 0,
          "migrate: 2 already on node %d, 14 absent (%zu %zu)", node0, mr.already, mr.absent);
    /* a 1 TiB request over a 16-page mapping: the cost follows the mapped pages (it took 14-43 s
     * and 4 GiB when every page of the range was queried); holes count as absent */
    size_t tib = (size_t)1 << 40;
    if ((uintptr_t)raw + tib > (uintptr_t)raw)
        CHECK(npl_migrate_range(raw, tib, node0, &mr) == 0 && mr.pages == tib / 4096 &&
                  mr.already >= 2 && mr.failed == 0 &&
                  mr.already + mr.moved + mr.absent == tib / 4096,
              "migrate 1 TiB from 16 mapped pages on: %zu pages, %zu already, %zu absent",
              mr.pages, mr.already, mr.absent);
    CHECK(npl_migrate_range(raw + 1, 4096, node0, &mr) == -1 && errno == EINVAL, "migrate unaligned");
    CHECK(npl_migrate_range(raw, 4096, 4096, &mr) == -1 && errno == EINVAL, "migrate to no node");
    int xx;
    CHECK(npl_migrate_units(&xx, 0, 1, node0, &mr) == -1 && errno == ENOENT, "migrate unknown array");
    npl_policy *cyc = pol("cyclic");
    CHECK(npl_place_range(raw, 16 * 4096, cyc, NULL, 0) == 0 && raw[0] == 1 && raw[5 * 4096] == 1,
          "place_range keeps data: %s", npl_last_error());
    CHECK(npl_histogram(raw, 16 * 4096, counts, &absent) == 0 && absent == 0, "all pages present");
    CHECK(npl_place_range(raw + 1, 4096, cyc, NULL, 0) == -1 && errno == EINVAL,
          "unaligned range rejected");
    CHECK(npl_place_range(raw, 0, cyc, NULL, 0) == -1 && errno == EINVAL, "empty range rejected");
    munmap(raw, 16 * 4096);

    /* bad input */
    int x;
    CHECK(npl_free(&x) == -1 && errno == ENOENT, "free of an unknown pointer: ENOENT");
    CHECK(npl_apply(&x, cyc, 0) == -1 && errno == ENOENT, "apply to an unknown pointer: ENOENT");
    struct npl_check c;
    CHECK(npl_check(&x, &c) == -1 && errno == ENOENT, "check of an unknown pointer: ENOENT");
    npl_policy *bad = pol("bind_all:63");
    CHECK(npl_alloc(4096, bad) == NULL && errno == EINVAL, "node that does not exist: EINVAL (%s)",
          npl_last_error());
    npl_policy_free(bad);
    npl_shape huge = {8, 2, {(size_t)1 << 40, (size_t)1 << 30, 0}, NPL_ROW_MAJOR};
    CHECK(npl_alloc_array(&huge, cyc, 0) == NULL && errno == EOVERFLOW, "overflowing shape");
    npl_shape zero = {8, 2, {0, 10, 0}, NPL_ROW_MAJOR};
    CHECK(npl_alloc_array(&zero, cyc, 0) == NULL && errno == EINVAL, "zero dimension");
    CHECK(npl_alloc((size_t)1 << 62, cyc) == NULL && errno == ENOMEM, "impossible size: ENOMEM");
    struct npl_stats st;
    npl_get_stats(&st);
    CHECK(st.arrays_live == 0 && st.bytes_live == 0, "nothing leaked (%llu arrays live)",
          (unsigned long long)st.arrays_live);

    /* 2D array, apply to parts (composed policies) */
    npl_shape s2 = {8, 2, {512, 1024, 0}, NPL_ROW_MAJOR}; /* 4 MiB, 2 pages per row */
    double *m = npl_alloc_array(&s2, cyc, 0);
    CHECK(m != NULL, "2D array");
    if (m) {
        npl_policy *b = pol("bind_all");
        CHECK(npl_apply_part(m, 0, 256, b, 0) == 0, "apply bind_all to rows 0-255");
        CHECK(npl_apply_part(m, 256, 257, b, 0) == -1 && errno == EINVAL, "rows past the end");
        CHECK(npl_check(m, &c) == 0 && c.placed == c.pages, "composed: all placed");
        npl_policy_free(b);
        npl_free(m);
    }
    npl_policy_free(cyc);

    /* replication degrades to one copy on a one-node machine, with no error */
    {
        static unsigned char master[1 << 20];
        for (size_t i = 0; i < sizeof master; i++)
            master[i] = (unsigned char)(i * 3);
        npl_replica *r;
        struct npl_replica_info ri;
        CHECK(npl_replicate(&r, master, sizeof master, NULL, 0, 0) == 0 &&
                  npl_replica_info(r, &ri) == 0 && ri.ncopies == npl_topo_node_count(t, 0) &&
                  npl_replica_local(r) == npl_replica_on(r, node0) &&
                  memcmp(npl_replica_local(r), master, sizeof master) == 0,
              "replica set here: %d copy, local copy equals the master", ri.ncopies);
        master[5] = 99;
        CHECK(npl_replica_sync(r) == 0 && ((const unsigned char *)npl_replica_local(r))[5] == 99,
              "sync copies the changed master");
        npl_replica_free(r);
        CHECK(npl_replicate(&r, NULL, 10, NULL, 0, 0) == -1 && errno == EINVAL, "NULL master");
        /* hugetlb with no pool here: base pages, reported; STRICT: ENOMEM */
        npl_shape hs = {1, 1, {4 << 20, 0, 0}, NPL_ROW_MAJOR};
        npl_policy *cy = pol("cyclic");
        char *h = npl_alloc_array(&hs, cy, NPL_F_HUGETLB);
        struct npl_array_info hi;
        CHECK(h && npl_array_info(h, &hi) == 0 && (hi.hugetlb || hi.hugetlb_fallback),
              "hugetlb array: huge pages or a reported fallback (huge=%d fallback=%d)", hi.hugetlb,
              hi.hugetlb_fallback);
        npl_free(h);
        npl_policy_free(cy);
    }

    /* pinning */
    int cpu = npl_pin_self("compact", 0), now = -1;
    int first = npl_pin_cpu(NULL, "compact", 0);
    npl_where_am_i(&now, NULL);
    CHECK(cpu == first && now == first, "main thread pinned to CPU %d (now on %d)", first, now);
    pthread_t th;
    int child_cpu = -1;
    npl_pthread_reset();
    CHECK(npl_pthread_create(&th, NULL, thread_fn, &child_cpu, "compact") == 0, "pthread pinned");
    pthread_join(th, NULL);
    CHECK(child_cpu == npl_pin_cpu(NULL, "compact", 1), "thread 1 on CPU %d (want %d)", child_cpu,
          npl_pin_cpu(NULL, "compact", 1));
    CHECK(npl_pin_self("4096", 0) == -1 && (errno == EINVAL || errno == EXDEV),
          "pin to a CPU outside the machine");
    return check_summary("test_place");
}
