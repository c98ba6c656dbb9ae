/* SPDX-License-Identifier: BSD-3-Clause */
/* place.c - the placement engine: a page->node map becomes a few system calls.
 *
 * For a range, with M nodes in the policy and W worker threads (W <= allowed CPUs):
 *   1. madvise(MADV_NOHUGEPAGE) so a first touch takes 4 KiB, not a 2 MiB THP (unless asked);
 *   2. for a range that may already have a policy: mbind(MPOL_DEFAULT) so task policies rule;
 *   3. each worker, for each node k: set_mempolicy(MPOL_PREFERRED, k), then touches the pages
 *      of its slice that the map puts on k (a fault cannot fail under PREFERRED: a full node
 *      spills instead of waking the OOM killer);
 *   4. one mbind over the range with the policy's nodes (MPOL_PREFERRED_MANY, else MPOL_BIND)
 *      and no MPOL_MF_MOVE: the vma gets a policy, so automatic NUMA balancing no longer scans
 *      it and pages stay where they were put; no mapping is split inside the range;
 *   5. each worker queries its slice with one move_pages(NULL) and moves whatever is not on
 *      its node with one move_pages: pages that were already there, or that spilled.
 * System calls: O(W * M); mappings added: none inside the range. */
#define _GNU_SOURCE
#include "place/place.h"
#include "topology/topology.h"
#include "numaplace/migrate.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HUGE_2M ((size_t)2 << 20)
#define MAX_WORKERS 16
#define WORKER_FAILS 1 /* failed pages each worker remembers for the migration report */
#define PAGES_PER_WORKER_MIN 4096 /* 16 MiB of 4 KiB pages before a second worker helps */

/* Worker scratch memory comes from mmap, not malloc: malloc in a new thread would create a
 * per-thread arena (a 64 MiB reservation that stays in the user's process). */
static void *scratch_alloc(size_t bytes)
{
    void *p = npl__map_nohuge(bytes ? bytes : 1); /* touched on a worker's node */
    return p == MAP_FAILED ? NULL : p;
}

static void scratch_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

struct worker {
    pthread_t th;
    char *base;
    size_t first, last; /* base pages [first, last) */
    size_t psz;
    int shift;          /* map index = page >> shift (THP: one map entry per 2 MiB) */
    const struct npl_map *map;
    const int *explicit_nodes; /* npl__place_explicit: node of each base page, else NULL */
    int fresh;
    /* results */
    struct npl_counter cnt;
    size_t moved, misplaced, absent, already;
    int hugetlb;                       /* psz is a hugetlb page: fault it in with populate */
    int nfail;                         /* first failures, for migration reports */
    void *fail_addr[WORKER_FAILS];
    int fail_errno[WORKER_FAILS];
    int err;
};

static void note_failure(struct worker *w, void *addr, int err)
{
    if (w->nfail < WORKER_FAILS) {
        w->fail_addr[w->nfail] = addr;
        w->fail_errno[w->nfail] = err;
        w->nfail++;
    }
}

/* the node of page pg of the worker's range: the explicit list's, or the map's */
static int page_node(const struct worker *w, size_t pg)
{
    return w->explicit_nodes ? w->explicit_nodes[pg] : npl__map_node(w->map, pg >> w->shift);
}

static void touch_pages(struct worker *w, const int *slice_map, int node)
{
    for (size_t pg = w->first; pg < w->last; pg++) {
        if (slice_map[pg - w->first] != node)
            continue;
        char *p = w->base + pg * w->psz;
        if (w->hugetlb) { /* a store would SIGBUS if no pool can give a page: ask, and hear no */
            if (npl__madvise(&w->cnt, p, w->psz, MADV_POPULATE_WRITE) < 0) {
                w->err = errno;
                return;
            }
        } else if (w->fresh)
            *(volatile char *)p = 0; /* fresh anonymous memory is zero already */
        else
            __atomic_fetch_or(p, (char)0, __ATOMIC_RELAXED); /* keeps concurrent writes */
    }
}

static void *touch_worker(void *arg)
{
    struct worker *w = arg;
    size_t n = w->last - w->first;
    int *slice_map = scratch_alloc(n * sizeof *slice_map);
    if (!slice_map) {
        w->err = ENOMEM;
        return NULL;
    }
    for (size_t pg = w->first; pg < w->last; pg++)
        slice_map[pg - w->first] = page_node(w, pg);
    for (int k = 0; k < w->map->plan->m; k++) {
        int node = w->map->plan->nodes[k];
        if (npl__set_mempolicy(&w->cnt, MPOL_PREFERRED, &node, 1) < 0) {
            w->err = errno;
            break;
        }
        touch_pages(w, slice_map, node);
        if (w->err)
            break;
    }
    npl__set_mempolicy(&w->cnt, MPOL_DEFAULT, NULL, 0);
    scratch_free(slice_map, n * sizeof *slice_map);
    return NULL;
}

#define NOT_DONE (-1000000) /* a status move_pages did not write */
#define MOVE_ROUNDS 4

/* Count where every page ended up (the last query): already there, moved, absent, or left
 * elsewhere with the reason (its query status, the move's status, or the node that was full). */
static void tally(struct worker *w, void **pages, const int *target, const int *where, size_t n,
                  const unsigned char *was_right, const int *last, const int *dropped,
                  int ndropped)
{
    for (size_t j = 0; j < n; j++) {
        if (where[j] == target[j]) {
            if (!was_right || was_right[j])
                w->already++;
            else
                w->moved++;
        } else if (where[j] == -ENOENT || where[j] == -EFAULT) { /* not present (6.1: EFAULT) */
            w->absent++;
        } else {
            w->misplaced++;
            int st = last ? last[j] : NOT_DONE;
            note_failure(w, pages[j], where[j] < 0 ? -where[j]
                                      : st < 0 && st != NOT_DONE ? -st
                                      : npl__in_list(target[j], dropped, ndropped) ? ENOMEM
                                                                                  : EBUSY);
        }
    }
}

/* Pages that could not move only because something held them for a moment: move_pages said
 * EBUSY or EAGAIN, or wrote no status (a positive return: pages of the batch not migrated). */
#define BUSY_PAUSES 6 /* then a pause of 1, 2, 4, ... 32 ms before each extra round */
static int only_busy(const int *last, const size_t *idx, size_t nmv)
{
    for (size_t k = 0; k < nmv; k++) {
        int st = last[idx[k]];
        if (st != -EBUSY && st != -EAGAIN && st != NOT_DONE)
            return 0;
    }
    return 1;
}

static void busy_pause(int i)
{
    struct timespec ts = {0, 1000000L << i};
    nanosleep(&ts, NULL);
}

/* Put pages[j] on target[j], j < n, where[j] being where they are now (a query). move_pages(2)
 * has two failure modes: a positive return (some pages of a batch could not move; then the
 * kernel writes no status for that batch) and -1 (e.g. ENOMEM: a target node is full; the kernel
 * stops there and attempts nothing after it). And a page can be moved, or be right already, and
 * then be dragged away: a base page of a transparent huge page moves with all 512. So each round
 * moves the pages off their node, then queries where *all n* are; a node where the kernel gave
 * up is dropped from later rounds; the counts come from the last query. Rounds go on while they
 * make progress, MOVE_ROUNDS at most, then up to BUSY_PAUSES more after a pause while the pages
 * left were only held (EBUSY is transient: khugepaged or another migration has them). At most
 * 2 * (MOVE_ROUNDS + BUSY_PAUSES) system calls; no scratch memory when every page is right. */
static void move_listed(struct worker *w, void **pages, const int *target, int *where, size_t n)
{
    int dropped[MOVE_ROUNDS];
    int ndropped = 0;
    size_t wrong = 0;
    for (size_t j = 0; j < n; j++)
        wrong += where[j] >= 0 && where[j] != target[j];
    /* this round's pages and list indexes, targets, statuses, last statuses, was-right flags */
    size_t bytes = n * (sizeof(void *) + sizeof(size_t) + 3 * sizeof(int) + 1);
    char *scratch = NULL;
    void **mv = NULL;
    size_t *idx = NULL;
    int *mt = NULL, *status = NULL, *last = NULL;
    unsigned char *was_right = NULL;
    if (wrong) {
        if (!(scratch = scratch_alloc(bytes))) {
            w->err = ENOMEM;
            return;
        }
        mv = (void **)scratch;
        idx = (size_t *)(mv + n);
        mt = (int *)(idx + n);
        status = mt + n;
        last = status + n;
        was_right = (unsigned char *)(last + n);
        for (size_t j = 0; j < n; j++) {
            last[j] = NOT_DONE;
            was_right[j] = where[j] == target[j];
        }
    }
    size_t nmv = 0;
    int pauses = 0;
    for (int round = 0; wrong; round++) {
        size_t before = nmv;
        nmv = 0;
        for (size_t j = 0; j < n; j++) /* absent/unreadable, right, or its node gave up: skip */
            if (where[j] >= 0 && where[j] != target[j] &&
                !npl__in_list(target[j], dropped, ndropped)) {
                mv[nmv] = pages[j];
                mt[nmv] = target[j];
                idx[nmv++] = j;
            }
        if (nmv == 0) /* done */
            break;
        if (round >= MOVE_ROUNDS || (round > 1 && nmv >= before)) { /* no progress */
            if (pauses == BUSY_PAUSES || !only_busy(last, idx, nmv))
                break;
            busy_pause(pauses++); /* pages held for a moment (khugepaged, a migration) */
        }
        for (size_t k = 0; k < nmv; k++)
            status[k] = NOT_DONE;
        int err = npl__move_pages(&w->cnt, nmv, mv, mt, status, MPOL_MF_MOVE) < 0 ? errno : 0;
        if (err && err != ENOMEM && err != EBUSY && err != ENOENT && err != EACCES &&
            err != EFAULT) {
            w->err = err;
            goto out;
        }
        int gave_up = 0;
        for (size_t k = 0; k < nmv; k++) {
            last[idx[k]] = status[k];
            if (err && !gave_up && status[k] == NOT_DONE && ndropped < MOVE_ROUNDS) {
                dropped[ndropped++] = mt[k]; /* the kernel gave up at this page's node */
                gave_up = 1;
            }
        }
        if (npl__move_pages(&w->cnt, n, pages, NULL, where, 0) < 0) {
            w->err = errno;
            goto out;
        }
        npl__debug("move round %d: %zu pages, err %d", round, nmv, err);
    }
    tally(w, pages, target, where, n, wrong ? was_right : NULL, wrong ? last : NULL, dropped,
          ndropped);
out:
    scratch_free(scratch, bytes);
}

/* Query the slice; move what is not on its node; count where every page ends up. */
static void *verify_worker(void *arg)
{
    struct worker *w = arg;
    size_t n = w->last - w->first;
    size_t bytes = n * (sizeof(void *) + 2 * sizeof(int));
    char *scratch = scratch_alloc(bytes); /* pages, targets, where they are */
    void **pages = (void **)scratch;
    int *target = (int *)(pages + n), *where = target + n;
    if (!scratch) {
        w->err = ENOMEM;
        return NULL;
    }
    size_t k = 0; /* pages with a node (an explicit list may leave some alone) */
    for (size_t i = 0; i < n; i++) {
        int node = page_node(w, w->first + i);
        if (w->explicit_nodes && node < 0)
            continue;
        pages[k] = w->base + (w->first + i) * w->psz;
        target[k++] = node;
    }
    n = k;
    if (n == 0) {
        scratch_free(scratch, bytes);
        return NULL;
    }
    if (npl__move_pages(&w->cnt, n, pages, NULL, where, 0) < 0)
        w->err = errno;
    else
        move_listed(w, pages, target, where, n);
    scratch_free(scratch, bytes);
    return NULL;
}

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
/* Split the transparent huge pages of [addr, addr+len) into base pages, data kept. MADV_NOHUGEPAGE
 * only stops new ones. MADV_COLD on one base page of a 2 MiB region splits the huge page there
 * (a PMD-mapped one covered in part, a PTE-mapped one mapped once; Linux >= 5.4) and only
 * deactivates that one page. One call per 2 MiB; errors (old kernel, mlocked range) ignored:
 * verification then reports what could not move. */
static void split_thps(struct npl_counter *cnt, char *addr, size_t len, size_t psz)
{
    uintptr_t end = (uintptr_t)addr + len;
    for (uintptr_t r = (uintptr_t)addr & ~(uintptr_t)(HUGE_2M - 1); r < end; r += HUGE_2M) {
        uintptr_t p = r < (uintptr_t)addr ? (uintptr_t)addr : r;
        if (npl__madvise(cnt, (void *)p, psz, MADV_COLD) < 0) {
            npl__debug("madvise(MADV_COLD) to split huge pages failed: %s", strerror(errno));
            return;
        }
    }
}

/* Which 2 MiB frames of [s, e) may hold a huge page (inside the range at base whose map is `map`,
 * map index = page >> shift). A huge page's 512 base pages live on one node, and khugepaged
 * (THP "always", or MADV_HUGEPAGE) collapses any eligible frame onto one node whatever the
 * placement was. So a frame may be huge only if it lies whole in the range (or in its tail,
 * tail_end: the rest of an array's 2 MiB-aligned mapping, same map unit) and the map sends all its
 * pages to one node. Every other frame is advised MADV_NOHUGEPAGE, clipped to the range (a frame
 * cut by a mapping boundary is never collapsed), and, where it may hold a huge page already
 * (split), split after the advice, so that khugepaged cannot collapse it again in between: a base
 * page of a THP moves with all 512 and would drag the pages around it along. want_huge
 * (NPL_F_THP): the one-node frames are advised MADV_HUGEPAGE, else their advice is left alone.
 * One madvise per run of frames with the same advice, one per frame split. */
struct frame_advice {
    struct npl_counter *cnt;
    uintptr_t run_start, run_end;
    int run_advice; /* 0: none pending */
};

static void advise_flush(struct frame_advice *fa)
{
    if (fa->run_advice && npl__madvise(fa->cnt, (void *)fa->run_start,
                                       fa->run_end - fa->run_start, fa->run_advice) < 0)
        npl__debug("madvise(%s) failed: %s", fa->run_advice == MADV_HUGEPAGE ? "MADV_HUGEPAGE"
                                                                              : "MADV_NOHUGEPAGE",
                   strerror(errno));
    fa->run_advice = 0;
}

static void advise_run(struct frame_advice *fa, uintptr_t lo, uintptr_t hi, int advice)
{
    if (fa->run_advice == advice && fa->run_end == lo) {
        fa->run_end = hi;
        return;
    }
    advise_flush(fa);
    *fa = (struct frame_advice){fa->cnt, lo, hi, advice};
}

/* Frame [r, r+2 MiB) cut to [*lo, *hi) by [s, e): may it be huge (see advise_frames)? */
static int frame_whole(char *base, uintptr_t r, uintptr_t s, uintptr_t e, uintptr_t tail_end,
                       const struct npl_map *map, int shift, size_t psz, uintptr_t *lo,
                       uintptr_t *hi)
{
    *lo = r < s ? s : r;
    *hi = r + HUGE_2M > e ? e : r + HUGE_2M;
    size_t p0 = (*lo - (uintptr_t)base) / psz, p1 = (*hi - (uintptr_t)base) / psz;
    size_t last = (e - (uintptr_t)base) / psz - 1; /* the range's last page */
    /* the tail belongs to the range when it is in the last page's map unit (THP maps) */
    int whole = *lo == r && (*hi == r + HUGE_2M ||
                             (shift && r + HUGE_2M <= tail_end &&
                              ((p0 + HUGE_2M / psz - 1) >> shift) == (last >> shift)));
    int node = npl__map_node(map, p0 >> shift);
    for (size_t p = p0 + 1; whole && p < p1; p++)
        whole = npl__map_node(map, p >> shift) == node;
    return whole;
}

static void advise_frames(struct npl_counter *cnt, char *base, uintptr_t s, uintptr_t e,
                          uintptr_t tail_end, const struct npl_map *map, int shift, size_t psz,
                          int want_huge, int split)
{
    struct frame_advice fa = {cnt, 0, 0, 0};
    uintptr_t first = s & ~(uintptr_t)(HUGE_2M - 1), lo, hi;
    for (uintptr_t r = first; r < e; r += HUGE_2M) {
        if (!frame_whole(base, r, s, e, tail_end, map, shift, psz, &lo, &hi))
            advise_run(&fa, lo, hi, MADV_NOHUGEPAGE);
        else if (want_huge)
            advise_run(&fa, lo, hi, MADV_HUGEPAGE);
        else
            advise_flush(&fa);
    }
    advise_flush(&fa);
    /* then split: after the advice, so that khugepaged cannot collapse a frame again */
    for (uintptr_t r = first; split && r < e; r += HUGE_2M)
        if (!frame_whole(base, r, s, e, tail_end, map, shift, psz, &lo, &hi) &&
            npl__madvise(cnt, (void *)lo, psz, MADV_COLD) < 0)
            break; /* an old kernel, a hugetlb or locked mapping: verification reports */
}

/* Workers 0..nw-1 share pages [0, npages) of the range at base in equal slices. */
static void slice(struct worker *w, int nw, char *base, size_t npages, size_t psz,
                  const struct npl_map *map)
{
    for (int i = 0; i < nw; i++) {
        w[i].base = base;
        w[i].first = npages * (size_t)i / (size_t)nw;
        w[i].last = npages * (size_t)(i + 1) / (size_t)nw;
        w[i].psz = psz;
        w[i].map = map;
    }
}

static int run_workers(struct worker *w, int nw, void *(*fn)(void *))
{
    int started = 0, err = 0;
    for (int i = 0; i < nw; i++) {
        int rc = pthread_create(&w[i].th, NULL, fn, &w[i]);
        if (rc) {
            err = rc;
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(w[i].th, NULL);
    if (err)
        return npl__fail(err, "cannot start placement threads");
    for (int i = 0; i < nw; i++)
        if (w[i].err)
            return npl__fail(w[i].err, "placement system call failed: %s", strerror(w[i].err));
    return 0;
}

static int worker_count_per(size_t pages, size_t per_worker);
static int worker_count(size_t pages) { return worker_count_per(pages, PAGES_PER_WORKER_MIN); }

/* Migration is bound by the kernel's per-mm work (page-table locks, TLB shootdowns to every CPU
 * running the process), not by faults: a second thread helps only for large ranges. */
#define MIGRATE_PAGES_PER_WORKER (256 * 1024)

static int worker_count_per(size_t pages, size_t per_worker)
{
    int cpus[MAX_WORKERS];
    int n = npl__initial_affinity(cpus, MAX_WORKERS);
    if (n < 1)
        n = 1;
    if (n > MAX_WORKERS)
        n = MAX_WORKERS;
    size_t by_size = pages / per_worker;
    if (by_size < (size_t)n)
        n = by_size ? (int)by_size : 1;
    return n;
}

/* Without NUMA system calls only a one-node machine can honour a policy (trivially). */
static int check_support(const struct npl_plan *pl)
{
    const struct npl_support *s = npl_get_support();
    if (s->set_mempolicy && s->mbind && s->move_pages)
        return 1;
    if (pl->usable_nodes <= 1 && pl->m <= 1)
        return 0; /* nothing to place: everything is on the one node */
    return npl__fail(ENOSYS, "NUMA system calls are not available here (kernel without NUMA, or "
                             "a container/seccomp filter returns ENOSYS/EPERM)");
}

/* One placement: the range, its page sizes and what has been done so far. */
struct job {
    char *addr;
    size_t len, psz, npages, scale; /* scale: base pages per placement page (hugetlb) */
    int shift;                      /* map index = page >> shift (THP: per 2 MiB) */
    int huge, thp, fresh;
    uintptr_t tail_end; /* NPL__F_OWN_TAIL: the end of the range's last 2 MiB frame, else 0 */
    unsigned flags;
    const int *explicit_nodes; /* npl__place_explicit */
    struct npl_map map;
    struct npl_counter cnt;
};

/* Check the range and work out the page sizes (hugetlb: the unit is the 2 MiB page). */
static int job_init(struct job *j, void *addr, size_t len, const npl_plan *plan,
                    const npl_shape *shape, const struct npl_part *part, unsigned flags, int fresh)
{
    memset(j, 0, sizeof *j);
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!plan)
        return npl__fail(EINVAL, "NULL plan");
    if (!addr || len == 0)
        return npl__fail(EINVAL, "empty range");
    if ((uintptr_t)addr % psz)
        return npl__fail(EINVAL, "range start %p is not page-aligned (%zu bytes)", addr, psz);
    if ((uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    j->addr = addr;
    j->len = len;
    j->flags = flags;
    j->fresh = fresh;
    j->huge = (flags & NPL_F_HUGETLB) != 0;
    j->thp = !j->huge && (flags & NPL_F_THP) != 0;
    j->scale = 1;
    if (j->huge) {
        if ((uintptr_t)addr % HUGE_2M)
            return npl__fail(EINVAL, "hugetlb range %p is not 2 MiB-aligned", addr);
        if (!npl_get_support()->populate_write)
            return npl__fail(ENOSYS, "hugetlb placement needs MADV_POPULATE_WRITE (Linux 5.14)");
        j->scale = HUGE_2M / psz;
        psz = HUGE_2M;
    }
    j->psz = psz;
    j->shift = j->thp ? __builtin_ctzl(HUGE_2M / psz) : 0;
    j->npages = len / psz + (len % psz != 0);
    if (flags & NPL__F_OWN_TAIL)
        j->tail_end = ((uintptr_t)addr + j->npages * psz + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1);
    if (part)
        return npl__map_init_part(&j->map, plan, part, len, j->thp ? HUGE_2M : psz);
    return npl__map_init(&j->map, plan, shape, len, j->thp ? HUGE_2M : psz);
}

/* first_touch, or one node and no NUMA system calls: the kernel decides (drop any policy set
 * before); a policy on the one node is honoured by populating the range. */
static int place_trivially(struct job *j, int populate, struct npl_place_stats *st)
{
    size_t bytes = j->npages * j->psz;
    if (!j->fresh && npl_get_support()->mbind)
        npl__mbind(&j->cnt, j->addr, bytes, MPOL_DEFAULT, NULL, 0, 0);
    if (!populate)
        return 0;
    if (j->huge && npl__madvise(&j->cnt, j->addr, bytes, MADV_POPULATE_WRITE) < 0)
        return npl__fail(errno, "no huge page to populate %p+%zu", (void *)j->addr, j->len);
    for (size_t pg = 0; !j->huge && pg < j->npages; pg++)
        if (!j->explicit_nodes || j->explicit_nodes[pg] >= 0)
            __atomic_fetch_or(j->addr + pg * j->psz, (char)0, __ATOMIC_RELAXED);
    st->placed = j->npages;
    return 0;
}

/* The next stretch [*first, *end) of pages to place after page *pg: the whole range once, or
 * with an explicit list each run of pages that have a node (the others are left alone: their
 * mapping flags and kernel policy too). 0 when none is left. */
static int next_stretch(const struct job *j, size_t *pg, size_t *first, size_t *end)
{
    size_t p = *pg;
    if (!j->explicit_nodes) {
        *first = 0;
        *end = *pg = j->npages;
        return p == 0;
    }
    while (p < j->npages && j->explicit_nodes[p] < 0)
        p++;
    *first = p;
    while (p < j->npages && j->explicit_nodes[p] >= 0)
        p++;
    *end = *pg = p;
    return *end > *first;
}

/* Steps 1-2: huge pages only where a frame goes to one node (NPL_F_THP), else none (page-granular
 * placement; existing ones split), no old range policy. */
static int prepare_range(struct job *j)
{
    int keep = (j->flags & NPL__F_KEEP_VMAS) != 0;
    int may_hold_thp = !j->fresh && (j->flags & NPL__F_SPLIT_THP);
    char *end_addr = j->addr + j->npages * j->psz;
    if (j->thp) /* 2 MiB units: a frame whose pages go to several nodes must never be huge */
        advise_frames(&j->cnt, j->addr, (uintptr_t)j->addr, (uintptr_t)end_addr, j->tail_end,
                      &j->map, j->shift, j->psz, 1, may_hold_thp);
    else if (keep && !j->huge && /* one call over the hull: no mapping cut per stretch */
             npl__madvise(&j->cnt, j->addr, (size_t)(end_addr - j->addr), MADV_NOHUGEPAGE) < 0)
        npl__debug("madvise(MADV_NOHUGEPAGE) failed: %s", strerror(errno));
    size_t pg = 0, first, end;
    while (next_stretch(j, &pg, &first, &end)) {
        char *addr = j->addr + first * j->psz;
        size_t bytes = (end - first) * j->psz;
        if (!keep && !j->thp && !j->huge &&
            npl__madvise(&j->cnt, addr, bytes, MADV_NOHUGEPAGE) < 0)
            npl__debug("madvise(MADV_NOHUGEPAGE) failed: %s", strerror(errno));
        if (!j->thp && !j->huge && may_hold_thp)
            split_thps(&j->cnt, addr, bytes, j->psz);
        if (!keep && !j->fresh && npl__mbind(&j->cnt, addr, bytes, MPOL_DEFAULT, NULL, 0, 0) < 0)
            return npl__fail(errno, "mbind(MPOL_DEFAULT) on %p+%zu failed: %s", (void *)addr,
                             bytes, strerror(errno));
    }
    return 0;
}

/* Step 4: one kernel policy over the plan's nodes, per stretch (see next_stretch) */
static int protect_range(struct job *j)
{
    const struct npl_plan *pl = j->map.plan;
    int mode = npl_get_support()->preferred_many ? MPOL_PREFERRED_MANY : MPOL_BIND;
    size_t pg = 0, first, end;
    while (next_stretch(j, &pg, &first, &end)) {
        char *addr = j->addr + first * j->psz;
        size_t bytes = (end - first) * j->psz;
        if (npl__mbind(&j->cnt, addr, bytes, mode, pl->nodes, pl->m, 0) < 0)
            return npl__fail(errno, "mbind(protect) on %p+%zu failed: %s", (void *)addr, bytes,
                             strerror(errno));
    }
    return 0;
}

/* Steps 3-5: touch per node, protect with one mbind, verify and move. */
static int place_with_workers(struct job *j, struct npl_place_stats *st)
{
    int nw = worker_count(j->npages), rc;
    struct worker w[MAX_WORKERS];
    memset(w, 0, sizeof w);
    slice(w, nw, j->addr, j->npages, j->psz, &j->map);
    for (int i = 0; i < nw; i++) {
        w[i].shift = j->shift;
        w[i].fresh = j->fresh;
        w[i].hugetlb = j->huge;
        w[i].explicit_nodes = j->explicit_nodes;
    }
    if ((rc = run_workers(w, nw, touch_worker)) < 0)
        goto collect;
    if (!(j->flags & (NPL_F_NO_PROTECT | NPL__F_KEEP_VMAS)) && (rc = protect_range(j)) < 0)
        goto collect;
    int nverify = nw;
    if (!j->fresh) { /* pages already present move here: fewer threads (MIGRATE_PAGES_PER_WORKER) */
        nverify = worker_count_per(j->npages, MIGRATE_PAGES_PER_WORKER);
        if (nverify > nw)
            nverify = nw;
        slice(w, nverify, j->addr, j->npages, j->psz, &j->map);
    }
    rc = run_workers(w, nverify, verify_worker);
collect:
    for (int i = 0; i < nw; i++) {
        j->cnt.syscalls += w[i].cnt.syscalls;
        st->moved += w[i].moved;
        st->misplaced += w[i].misplaced + w[i].absent;
    }
    st->placed = j->npages - st->misplaced;
    return rc;
}

/* Lazy placement (place_lazy.c): the policies set on the untouched range, no page touched; no
 * page is present yet, so none is counted placed or misplaced. */
static int place_lazy(struct job *j, struct npl_place_stats *st)
{
    struct npl_lazy lz;
    npl__lazy_of_map(&j->map, 0, j->flags, &lz);
    (void)st;
    if (!j->fresh || j->explicit_nodes || lz.kind == NPL__LAZY_NO ||
        !npl__lazy_base_ok(j->map.plan, &lz, (uintptr_t)j->addr, j->len))
        return npl__fail(EOPNOTSUPP, "this placement needs its pages populated");
    return npl__lazy_apply(j->addr, j->npages, j->psz, &j->map, &lz, &j->cnt);
}

static void finish_stats(const struct job *j, struct npl_place_stats *st, double t0)
{
    st->pages *= j->scale;
    st->placed *= j->scale;
    st->misplaced *= j->scale;
    st->moved *= j->scale;
    st->syscalls = j->cnt.syscalls;
    st->seconds = npl__now() - t0;
    npl__stats_add(st);
    npl__debug("placed %zu pages: %zu on their node, %zu moved, %zu elsewhere, %zu syscalls, "
               "%.3f s", st->pages, st->placed, st->moved, st->misplaced, st->syscalls,
               st->seconds);
}

static int place_job(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
                     const struct npl_part *part, unsigned flags, int fresh,
                     const int *explicit_nodes, struct npl_place_stats *st)
{
    double t0 = npl__now();
    struct npl_place_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    struct job j;
    if (job_init(&j, addr, len, plan, shape, part, flags, fresh) < 0)
        return -1;
    j.explicit_nodes = explicit_nodes;
    st->pages = j.npages;
    int first_touch = plan->kind == NPL_FIRST_TOUCH;
    int sup = first_touch ? 0 : check_support(plan);
    /* THP asked and the kernel decides, or one node: any frame may be huge (a raw range or a
     * re-placement may still carry an earlier MADV_NOHUGEPAGE); several nodes: prepare_range */
    if (j.thp && sup == 0 && npl__madvise(&j.cnt, addr, j.npages * j.psz, MADV_HUGEPAGE) < 0)
        npl__debug("madvise(MADV_HUGEPAGE) failed: %s", strerror(errno));
    int rc;
    if (sup < 0)
        rc = -1;
    else if (sup == 0)
        rc = place_trivially(&j, !first_touch && !(flags & NPL__F_LAZY), st);
    else if (flags & NPL__F_LAZY)
        rc = place_lazy(&j, st);
    else if ((rc = prepare_range(&j)) == 0)
        rc = place_with_workers(&j, st);
    if (rc == 0 && (flags & NPL_F_STRICT) && st->misplaced)
        rc = npl__fail(ENOMEM, "%zu of %zu pages could not be put on their nodes (node full?)",
                       st->misplaced, j.npages);
    if (sup >= 0)
        finish_stats(&j, st, t0);
    return rc < 0 ? -1 : 0;
}

int npl__place(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
               unsigned flags, int fresh, struct npl_place_stats *st)
{
    return place_job(addr, len, plan, shape, NULL, flags, fresh, NULL, st);
}

int npl__place_explicit(void *addr, size_t len, const npl_plan *plan, const int *nodes,
                        unsigned flags, struct npl_place_stats *st)
{
    if (flags & (NPL_F_THP | NPL_F_HUGETLB))
        return npl__fail(EINVAL, "an explicit page list places base pages only");
    return place_job(addr, len, plan, NULL, NULL, flags, 0, nodes, st);
}

int npl__place_part(void *addr, size_t len, const npl_plan *plan, const struct npl_part *part,
                    unsigned flags, struct npl_place_stats *st)
{
    return place_job(addr, len, plan, NULL, part, flags, 0, NULL, st);
}

struct migrate_walk {
    char *base;
    size_t psz, mapped;
    const struct npl_map *map;
    struct npl_migrate_result *res;
    int err;
};

/* Verify-and-move the pages of one mapped piece [s, e) of a migration. */
static int migrate_piece(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *ctx)
{
    (void)m;
    struct migrate_walk *mw = ctx;
    struct npl_counter split = {0};
    advise_frames(&split, mw->base, s, e, 0, mw->map, 0, mw->psz, 0, 1);
    size_t p0 = (s - (uintptr_t)mw->base) / mw->psz, p1 = (e - (uintptr_t)mw->base) / mw->psz;
    int nw = worker_count_per(p1 - p0, MIGRATE_PAGES_PER_WORKER);
    struct worker w[MAX_WORKERS];
    memset(w, 0, sizeof w);
    slice(w, nw, mw->base, p1 - p0, mw->psz, mw->map);
    for (int i = 0; i < nw; i++) {
        w[i].first += p0;
        w[i].last += p0;
    }
    int rc = run_workers(w, nw, verify_worker);
    struct npl_migrate_result *res = mw->res;
    mw->mapped += p1 - p0;
    res->syscalls += split.syscalls;
    for (int i = 0; i < nw; i++) {
        res->moved += w[i].moved;
        res->already += w[i].already;
        res->absent += w[i].absent;
        res->failed += w[i].misplaced;
        res->syscalls += w[i].cnt.syscalls;
        if (w[i].nfail && !res->first_errno) { /* pieces and slices are in address order */
            res->first_errno = w[i].fail_errno[0];
            res->first_fail_addr = w[i].fail_addr[0];
        }
    }
    if (rc < 0)
        mw->err = errno ? errno : EIO;
    return rc < 0 ? 1 : 0;
}

int npl__migrate(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
                 struct npl_migrate_result *res)
{
    double t0 = npl__now();
    memset(res, 0, sizeof *res);
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (!addr || len == 0 || (uintptr_t)addr % psz)
        return npl__fail(EINVAL, "range %p+%zu: empty or not page-aligned", addr, len);
    if ((uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    if (plan->kind == NPL_FIRST_TOUCH)
        return npl__fail(EINVAL, "first_touch names no node to migrate to");
    struct npl_map map;
    if (npl__map_init(&map, plan, shape, len, psz) < 0)
        return -1;
    size_t npages = len / psz + (len % psz != 0);
    struct migrate_walk mw = {.base = addr, .psz = psz, .map = &map, .res = res};
    /* only the mapped pieces: the cost follows the mapped pages, not the length of the range */
    int rc = npl__maps_ranges((uintptr_t)addr, (uintptr_t)addr + npages * psz, migrate_piece, &mw);
    if (rc < 0 && !mw.err && mw.mapped == 0) /* maps unreadable (no /proc): the whole range */
        rc = migrate_piece((uintptr_t)addr, (uintptr_t)addr + npages * psz, NULL, &mw);
    if (mw.err)
        rc = npl__fail(mw.err, "migration failed: %s", strerror(mw.err));
    else if (rc < 0)
        rc = npl__fail(errno, "cannot read this process's mappings");
    res->pages = npages;
    res->absent += npages - mw.mapped; /* holes: nothing there to move */
    res->seconds = npl__now() - t0;
    npl__migrate_stats_add(res, psz);
    npl__debug("migrated %zu pages: %zu moved, %zu already there, %zu absent, %zu failed, %.3f s",
               res->pages, res->moved, res->already, res->absent, res->failed, res->seconds);
    return rc;
}

int npl_place_range_planned(void *addr, size_t len, const npl_plan *plan,
                            const npl_shape *shape, unsigned flags)
{
    if (!plan)
        return npl__fail(EINVAL, "NULL plan");
    if (NPL__CHECK_FLAGS(flags, "npl_place_range") < 0)
        return -1;
    /* a raw range is the caller's: placing touches its pages, so a hole, a read-only part or
     * file pages past the end of their file would crash the process (nothing is touched then) */
    if (npl__range_check(addr, len, 1) < 0)
        return -1;
    return npl__place(addr, len, plan, shape, flags | NPL__F_SPLIT_THP, 0, NULL);
}

/* The calling thread's kernel policy (what its later faults get; inherited by threads it creates
 * and across exec): cyclic -> MPOL_INTERLEAVE over the policy's nodes, bind_all -> one node
 * MPOL_PREFERRED, several MPOL_BIND, first_touch -> MPOL_DEFAULT. */
int npl_set_thread_policy(const npl_topo *t, const npl_policy *pol)
{
    if (!pol)
        return npl__fail(EINVAL, "NULL policy");
    npl_policy_kind k = npl_policy_get_kind(pol);
    enum npl__kernel_form form = npl__policy_row(k)->kernel;
    if (form == NPL__KERNEL_NONE)
        return npl__fail(EINVAL, "%s has no kernel equivalent (cyclic, bind_all, first_touch)",
                         npl_policy_kind_name(k));
    if (!t && !(t = npl_topo_self()))
        return -1;
    npl_plan *pl;
    if (npl_plan_create(&pl, pol, t, 0) < 0)
        return -1;
    struct npl_counter cnt = {0};
    int mode = form == NPL__KERNEL_DEFAULT    ? MPOL_DEFAULT
             : form == NPL__KERNEL_INTERLEAVE ? MPOL_INTERLEAVE
             : pl->m > 1                      ? MPOL_BIND
                                              : MPOL_PREFERRED;
    int rc = 0;
    if (npl__set_mempolicy(&cnt, mode, pl->nodes, pl->m) < 0)
        rc = npl__fail(errno, "set_mempolicy failed: %s", strerror(errno));
    npl_plan_free(pl);
    return rc;
}
