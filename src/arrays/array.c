/* SPDX-License-Identifier: BSD-3-Clause */
/* array.c - library arrays: mmap'ed, placed, registered by base address so that functions
 * taking an array can tell a library array from any other pointer. A registry lock guards the
 * table; each array has its own lock so that two re-placements of one array serialise. Every
 * function here takes a plan; the shorthands that take a policy are in defaults/. */
#define _GNU_SOURCE
#include "arrays/arrays.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct segment { /* a part placed under its own policy (composed policies) */
    size_t first_page, npages;
    size_t first_unit, nunits;
    npl_plan *plan; /* the plan it was placed with (npl_check reads it) */
    unsigned flags;
};

struct array {
    void *base;
    size_t bytes, mapped;
    npl_shape shape;
    pthread_mutex_t lock;
    int refs;
    int dead;
    struct segment *seg;
    int nseg;
    struct npl_place_stats last;
    int hugetlb, hugetlb_fallback;
    int had_thp; /* NPL_F_THP once: a re-placement must split the huge pages (NPL__F_SPLIT_THP) */
    size_t lazy_maps; /* mappings its lazy runs split off (npl__lazy_maps_reserve) */
    uint64_t mig_calls, mig_pages, mig_failures;
    double mig_seconds;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct array **reg;
static int nreg, capreg;

/* fork() while another thread holds a lock must not leave the child's copy locked forever
 * (npl_free in the child would hang): hold the locks across fork in both processes. One set of
 * handlers takes them in the order the code nests them (the registry, then the counters it
 * updates), so fork() and an allocation never wait for each other (TSan saw the inversion of
 * separate handlers). Priority 101: registered before the
 * interposer's (preload/), whose prepare handler, run first, waits until no thread is inside the
 * library. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&reg_lock);
    npl__counters_fork_lock(1);
}
static void fork_release(void)
{
    npl__counters_fork_lock(0);
    pthread_mutex_unlock(&reg_lock);
}
__attribute__((constructor(101))) static void fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

static struct array *acquire(const void *p)
{
    struct array *a = NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++)
        if (reg[i]->base == p && !reg[i]->dead) {
            a = reg[i];
            a->refs++;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    if (!a)
        npl__fail(ENOENT, "%p is not an array allocated by numaplace", p);
    return a;
}

static void destroy(struct array *a)
{
    npl__next_touch_forget(a->base, a->mapped); /* an armed array's next-touch state goes too */
    munmap(a->base, a->mapped);
    if (a->lazy_maps)
        npl__lazy_maps_release(a->lazy_maps);
    for (int i = 0; i < a->nseg; i++)
        npl_plan_free(a->seg[i].plan);
    free(a->seg);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static void release(struct array *a)
{
    pthread_mutex_lock(&reg_lock);
    int last = --a->refs == 0 && a->dead;
    pthread_mutex_unlock(&reg_lock);
    if (last)
        destroy(a);
}


static size_t outer_extent(const npl_shape *s)
{
    return s->dims[s->order == NPL_ROW_MAJOR ? 0 : s->ndims - 1];
}


/* NPL__F_OWN_TAIL for a placement of bytes [off, off+len) of a: its last 2 MiB frame is the
 * array's to the end when the range ends the array and the mapping ends on 2 MiB (THP arrays) */
static unsigned own_tail(const struct array *a, size_t off, size_t len)
{
    uintptr_t end = (uintptr_t)a->base + a->mapped;
    return off + len >= a->bytes && end % ((size_t)2 << 20) == 0 ? NPL__F_OWN_TAIL : 0;
}

/* Append a segment: where segments overlap, the later one holds the intended placement. */
static int set_segment(struct array *a, struct segment s)
{
    struct segment *v = realloc(a->seg, (size_t)(a->nseg + 1) * sizeof *v);
    if (!v)
        return npl__fail(ENOMEM, "out of memory");
    v[a->nseg++] = s;
    a->seg = v;
    return 0;
}

/* Unmap the parts of [raw, raw+total) outside [base, base+len). */
static void trim(char *raw, size_t total, char *base, size_t len)
{
    if (base > raw)
        munmap(raw, (size_t)(base - raw));
    if (raw + total > base + len)
        munmap(base + len, (size_t)(raw + total - (base + len)));
}

/* The mapping of a new array: hugetlb (NULL+*fallback when no pool can hold it and not STRICT),
 * or base pages born MADV_NOHUGEPAGE, or THP pages 2 MiB-aligned at both ends. Its start is a
 * multiple of align (a power of two; 0: the page), over-mapped and trimmed when that is more
 * than the mmap gives; for a lazy interleave (lz), also at a page index that the kernel's
 * interleave maps to the plan's first node (npl__lazy_base_ok), within plan->m steps of align. */
static char *map_array(size_t bytes, unsigned *flags, size_t align, const struct npl_lazy *lz,
                       const npl_plan *plan, size_t *mapped, int *fallback)
{
    size_t psz = npl__page_size();
    size_t unit = (*flags & (NPL_F_THP | NPL_F_HUGETLB)) ? ((size_t)2 << 20) : psz;
    size_t asked = align;
    if (align < unit)
        align = unit;
    size_t steps = lz && lz->kind == NPL__LAZY_INTERLEAVE ? (size_t)plan->m : 0;
    if (align > SIZE_MAX / 4 / (steps + 2) || bytes > SIZE_MAX - (steps + 2) * align) {
        npl__fail(EOVERFLOW, "size %zu with alignment %zu too large", bytes, align);
        return NULL;
    }
    *mapped = (bytes + unit - 1) / unit * unit;
    char *raw = MAP_FAILED, *base = NULL;
    size_t total = 0;
    if (*flags & NPL_F_HUGETLB) {
        /* the kernel aligns hugetlb mappings itself (2 MiB); the reservation is checked against
         * the global pool only: per-node pools are checked by populating page by page (place.c) */
        total = *mapped + (align - unit) + steps * align;
        raw = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
        if (raw == MAP_FAILED) {
            if (*flags & NPL_F_STRICT) {
                npl__fail(errno == EINVAL ? ENOSYS : ENOMEM,
                          "no 2 MiB hugetlb pages for %zu bytes (pool empty or too small)", bytes);
                return NULL;
            }
            *fallback = 1;
            npl__debug("hugetlb pool cannot hold %zu bytes: base pages instead", bytes);
            *flags &= ~NPL_F_HUGETLB;
            return map_array(bytes, flags, asked, lz, plan, mapped, fallback);
        }
    } else {
        /* a base-page array is born MADV_NOHUGEPAGE: no 2 MiB page of a neighbour's first touch
         * can straddle it (npl__map_nohuge); a THP array is 2 MiB-aligned at both ends */
        total = *mapped + (align - psz) + steps * align;
        raw = (*flags & NPL_F_THP) ? mmap(NULL, total, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                   : npl__map_nohuge(total);
    }
    if (raw == MAP_FAILED) {
        npl__fail(errno, "mmap of %zu bytes failed", *mapped);
        return NULL;
    }
    base = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    for (size_t k = 0; steps && !npl__lazy_base_ok(plan, lz, (uintptr_t)base, bytes); k++) {
        base += align;
        if (k + 1 >= steps) {
            munmap(raw, total);
            npl__fail(EOPNOTSUPP, "no address here gives the kernel's interleave this map");
            return NULL;
        }
    }
    trim(raw, total, base, *mapped);
    if (*flags & NPL_F_THP)
        madvise(base, *mapped, MADV_HUGEPAGE);
    return base;
}

static int register_array(struct array *a)
{
    pthread_mutex_lock(&reg_lock);
    if (nreg == capreg) {
        int nc = capreg ? capreg * 2 : 64;
        struct array **nr = realloc(reg, (size_t)nc * sizeof *nr);
        if (!nr) {
            pthread_mutex_unlock(&reg_lock);
            return npl__fail(ENOMEM, "out of memory");
        }
        reg = nr;
        capreg = nc;
    }
    reg[nreg++] = a;
    npl__stats_arrays(1, (long)a->bytes);
    pthread_mutex_unlock(&reg_lock);
    return 0;
}

void *npl_alloc_planned(const npl_shape *shape, const npl_plan *plan, unsigned flags)
{
    if (NPL__CHECK_FLAGS(flags, "npl_alloc_array") < 0)
        return NULL;
    return npl__alloc_planned_ex(shape, plan, flags, 0);
}

void *npl__alloc_planned_ex(const npl_shape *shape, const npl_plan *plan, unsigned flags,
                            size_t align)
{
    size_t bytes, mapped = 0;
    int fallback = 0;
    if (!plan) {
        npl__fail(EINVAL, "NULL plan");
        return NULL;
    }
    if (npl_shape_bytes(shape, &bytes) < 0 ||
        NPL__CHECK_FLAGS(flags & ~NPL__F_LAZY, "npl_alloc_array") < 0)
        return NULL;
    if (align & (align - 1)) {
        npl__fail(EINVAL, "alignment %zu is not a power of two", align);
        return NULL;
    }
    struct npl_lazy lz = {0};
    size_t lazy_maps = 0;
    if (flags & NPL__F_LAZY) { /* lazily, or not at all (the caller decides what then) */
        if (npl__lazy_kind(plan, shape, bytes, align, flags, &lz) < 0)
            return NULL;
        if (lz.kind == NPL__LAZY_NO) {
            npl__fail(EOPNOTSUPP, "%s needs its pages populated (no kernel policy gives its map)",
                      npl_policy_kind_name(plan->kind));
            return NULL;
        }
        lazy_maps = lz.kind == NPL__LAZY_RUNS && lz.runs > 1 ? lz.runs - 1 : 0;
        if (lazy_maps && !npl__lazy_maps_reserve(lazy_maps)) {
            npl__fail(EOPNOTSUPP, "%zu more mappings would pass a quarter of vm.max_map_count",
                      lazy_maps);
            return NULL;
        }
    }
    char *base = map_array(bytes, &flags, align, (flags & NPL__F_LAZY) ? &lz : NULL, plan,
                           &mapped, &fallback);
    if (!base) {
        if (lazy_maps)
            npl__lazy_maps_release(lazy_maps);
        return NULL;
    }
    struct array *a = calloc(1, sizeof *a);
    if (!a) {
        munmap(base, mapped);
        if (lazy_maps)
            npl__lazy_maps_release(lazy_maps);
        npl__fail(ENOMEM, "out of memory");
        return NULL;
    }
    *a = (struct array){.base = base, .bytes = bytes, .mapped = mapped, .shape = *shape,
                        .hugetlb = (flags & NPL_F_HUGETLB) != 0, .hugetlb_fallback = fallback,
                        .had_thp = (flags & NPL_F_THP) != 0, .lazy_maps = lazy_maps};
    pthread_mutex_init(&a->lock, NULL);
    struct segment s = {0, mapped / npl__page_size(), 0, outer_extent(shape), npl__plan_ref(plan),
                        flags & ~NPL__F_LAZY};
    if (npl__place(base, bytes, plan, shape, flags | own_tail(a, 0, bytes), 1, &a->last) == 0 &&
        set_segment(a, s) == 0 &&
        register_array(a) == 0)
        return base;
    int e = errno;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", npl_last_error());
    int was_huge = a->hugetlb;
    a->nseg = 0;
    npl_plan_free(s.plan);
    destroy(a);
    if (was_huge && !(flags & NPL_F_STRICT) && e != EINVAL && e != EXDEV) {
        /* no pool could serve a page after all: base pages, and say so */
        npl__debug("hugetlb placement failed (%s): base pages instead", msg);
        void *r = npl__alloc_planned_ex(shape, plan, flags & ~NPL_F_HUGETLB, align);
        struct array *b = r ? acquire(r) : NULL;
        if (b) {
            b->hugetlb_fallback = 1;
            release(b);
        }
        return r;
    }
    npl__fail(e, "%s", msg);
    return NULL;
}

/* called with the base of every array about to be freed (src/profile/: the profile's tracker) */
static void (*_Atomic free_hook)(void *);
void npl__array_set_free_hook(void (*hook)(void *)) { atomic_store(&free_hook, hook); }

int npl_free(void *p)
{
    if (!p)
        return 0;
    struct array *a = NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++)
        if (reg[i]->base == p && !reg[i]->dead) {
            a = reg[i];
            reg[i] = reg[--nreg];
            a->dead = 1;
            break;
        }
    int last = a && a->refs == 0;
    if (a)
        npl__stats_arrays(-1, -(long)a->bytes);
    pthread_mutex_unlock(&reg_lock);
    if (!a)
        return npl__fail(ENOENT, "%p is not an array allocated by numaplace", p);
    void (*hook)(void *) = atomic_load(&free_hook);
    if (hook)
        hook(p);
    if (last)
        destroy(a);
    return 0;
}

/* The array's page: 2 MiB for a hugetlb array, else the base page. */
static size_t array_page(const struct array *a)
{
    return a->hugetlb ? (size_t)2 << 20 : npl__page_size();
}

/* Base pages [*lo, *hi) of units [first_unit, first_unit+nunits): a page of the array (2 MiB for
 * hugetlb) belongs to the part holding its first byte; none may (*lo == *hi, *bytes 0: units
 * smaller than a page). *bytes is the part's length in the array; *part its geometry. */
static int part_pages(const struct array *a, size_t first_unit, size_t nunits, size_t *lo,
                      size_t *hi, size_t *bytes, struct npl_part *part)
{
    size_t total = outer_extent(&a->shape), psz = npl__page_size(), apsz = array_page(a);
    size_t unit_bytes = a->bytes / total, per = apsz / psz;
    if (nunits == 0 || first_unit >= total || nunits > total - first_unit)
        return npl__fail(EINVAL, "units %zu..%zu outside the array's %zu units", first_unit,
                         first_unit + nunits, total);
    *lo = (first_unit * unit_bytes + apsz - 1) / apsz * per;
    *hi = first_unit + nunits == total
              ? a->mapped / psz
              : ((first_unit + nunits) * unit_bytes + apsz - 1) / apsz * per;
    if (*hi < *lo)
        *hi = *lo;
    *bytes = (*hi - *lo) * psz;
    if (*bytes && *lo * psz + *bytes > a->bytes)
        *bytes = a->bytes - *lo * psz;
    *part = (struct npl_part){unit_bytes, nunits, *lo * psz - first_unit * unit_bytes};
    return 0;
}

/* Drop every segment (a whole-array placement replaces them all). */
static void clear_segments(struct array *a)
{
    for (int i = 0; i < a->nseg; i++)
        npl_plan_free(a->seg[i].plan);
    a->nseg = 0;
}

/* Place pages [seg.first_page, +seg.npages) of a (bytes of them: the whole array laid out as its
 * shape, or a part) under plan and record the segment; a whole-array segment replaces all older
 * ones. */
static int place_segment(struct array *a, struct segment seg, size_t bytes,
                         const struct npl_part *part, const npl_plan *plan)
{
    int whole = !part;
    /* an array keeps its page size: 2 MiB pages for a hugetlb array whatever the caller's flags,
     * never hugetlb placement (2 MiB units of base pages) for a base-page one */
    if (a->hugetlb)
        seg.flags |= NPL_F_HUGETLB;
    else
        seg.flags &= ~NPL_F_HUGETLB;
    seg.plan = npl__plan_ref(plan);
    seg.flags &= ~NPL__F_SPLIT_THP;
    pthread_mutex_lock(&a->lock);
    struct npl_place_stats st;
    char *start = (char *)a->base + seg.first_page * npl__page_size();
    unsigned fl = seg.flags | (a->had_thp ? NPL__F_SPLIT_THP : 0) |
                  own_tail(a, seg.first_page * npl__page_size(), bytes);
    int rc = part ? npl__place_part(start, bytes, plan, part, fl, &st)
                  : npl__place(start, bytes, plan, &a->shape, fl, 0, &st);
    a->had_thp |= (seg.flags & NPL_F_THP) != 0;
    if (rc == 0) {
        if (whole)
            clear_segments(a);
        if (whole && a->lazy_maps) { /* its mbind(MPOL_DEFAULT) merged the runs again */
            npl__lazy_maps_release(a->lazy_maps);
            a->lazy_maps = 0;
        }
        rc = set_segment(a, seg);
        a->last = st;
        a->mig_calls++;
        a->mig_pages += st.moved;
        a->mig_failures += st.misplaced;
        a->mig_seconds += st.seconds;
    }
    if (rc < 0)
        npl_plan_free(seg.plan);
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int npl_apply_planned(void *p, const npl_plan *plan, unsigned flags)
{
    if (!plan)
        return npl__fail(EINVAL, "NULL plan");
    if (NPL__CHECK_FLAGS(flags, "npl_apply") < 0)
        return -1;
    struct array *a = acquire(p);
    if (!a)
        return -1;
    /* the whole array keeps its shape, so row and thread blocks stay meaningful */
    struct segment seg = {0, a->mapped / npl__page_size(), 0, outer_extent(&a->shape), NULL, flags};
    int rc = place_segment(a, seg, a->bytes, NULL, plan);
    release(a);
    return rc;
}

int npl__apply_part_planned(void *p, size_t first_unit, size_t nunits, const npl_plan *plan,
                            unsigned flags)
{
    if (!plan)
        return npl__fail(EINVAL, "NULL plan");
    if (NPL__CHECK_FLAGS(flags, "npl_apply_part") < 0)
        return -1;
    struct array *a = acquire(p);
    int rc = -1;
    size_t lo, hi, part_bytes;
    struct npl_part part;
    if (!a)
        ;
    else if (first_unit == 0 && nunits == outer_extent(&a->shape))
        rc = npl_apply_planned(p, plan, flags);
    else if (part_pages(a, first_unit, nunits, &lo, &hi, &part_bytes, &part) == 0) {
        struct segment seg = {lo, hi - lo, first_unit, nunits, NULL, flags};
        rc = part_bytes ? place_segment(a, seg, part_bytes, &part, plan) : 0; /* no page: done */
    }
    if (a)
        release(a);
    return rc;
}

/* The part's kernel policy follows a migration: pages faulted in later land on `node`, and
 * automatic NUMA balancing does not pull the moved pages back to the nodes of an earlier
 * MPOL_BIND (it would: it moves pages outside a bind set into it). */
static void bind_part(struct array *a, size_t lo, size_t hi, int node)
{
    struct npl_counter cnt = {0};
    int mode = npl_get_support()->preferred_many ? MPOL_PREFERRED_MANY : MPOL_BIND;
    if (npl__mbind(&cnt, (char *)a->base + lo * npl__page_size(), (hi - lo) * npl__page_size(), mode, &node,
                   1, 0) < 0)
        npl__debug("mbind of the migrated part failed: %s", strerror(errno));
}

int npl_migrate_units(void *p, size_t first_unit, size_t nunits, int node,
                      struct npl_migrate_result *result)
{
    struct npl_migrate_result local = {0};
    npl_plan *plan = NULL;
    if (!result)
        result = &local;
    memset(result, 0, sizeof *result);
    struct array *a = acquire(p);
    if (!a)
        return -1;
    size_t lo, hi, bytes;
    struct npl_part part;
    if (part_pages(a, first_unit, nunits, &lo, &hi, &bytes, &part) < 0 ||
        npl__plan_bind(&plan, npl_topo_self(), &node, 1) < 0) {
        release(a);
        return -1;
    }
    if (bytes == 0) { /* units smaller than a page that hold no page start: nothing to move */
        npl_plan_free(plan);
        release(a);
        return 0;
    }
    pthread_mutex_lock(&a->lock);
    int rc = npl__migrate((char *)a->base + lo * npl__page_size(), bytes, plan, NULL, result);
    if (rc == 0)
        bind_part(a, lo, hi, node);
    a->mig_calls++;
    a->mig_pages += result->moved;
    a->mig_failures += result->failed;
    a->mig_seconds += result->seconds;
    if (rc == 0) { /* from now on this part is meant to be on `node` */
        struct segment seg = {lo, hi - lo, first_unit, nunits, plan, 0};
        if (lo == 0 && hi * npl__page_size() >= a->bytes)
            clear_segments(a);
        rc = set_segment(a, seg);
    }
    if (rc < 0)
        npl_plan_free(plan);
    pthread_mutex_unlock(&a->lock);
    release(a);
    return rc < 0 ? -1 : npl__migrate_verdict(result);
}

int npl_migrate_array(void *p, int node, struct npl_migrate_result *result)
{
    struct array *a = acquire(p);
    if (!a)
        return -1;
    size_t total = outer_extent(&a->shape);
    release(a);
    return npl_migrate_units(p, 0, total, node, result);
}

int npl_array_info(const void *p, struct npl_array_info *o)
{
    if (!o)
        return npl__fail(EINVAL, "NULL output");
    struct array *a = acquire(p);
    if (!a)
        return -1;
    pthread_mutex_lock(&a->lock);
    memset(o, 0, sizeof *o);
    o->base = a->base;
    o->bytes = a->bytes;
    o->page_size = array_page(a);
    o->shape = a->shape;
    o->last = a->last;
    o->hugetlb = a->hugetlb;
    o->migrate_calls = a->mig_calls;
    o->pages_migrated = a->mig_pages;
    o->bytes_migrated = a->mig_pages * npl__page_size();
    o->migrate_failures = a->mig_failures;
    o->migrate_seconds = a->mig_seconds;
    o->hugetlb_fallback = a->hugetlb_fallback;
    pthread_mutex_unlock(&a->lock);
    release(a);
    return 0;
}

int npl_array_policy(const void *p, char *buf, size_t size)
{
    if (!buf && size)
        return npl__fail(EINVAL, "NULL buffer");
    struct array *a = acquire(p);
    if (!a)
        return -1;
    pthread_mutex_lock(&a->lock);
    int n = npl_policy_format(a->seg[0].plan->pol, buf, size);
    pthread_mutex_unlock(&a->lock);
    release(a);
    return n;
}

int npl_array_plan(const void *p, npl_plan **out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    *out = NULL;
    struct array *a = acquire(p);
    if (!a)
        return -1;
    pthread_mutex_lock(&a->lock);
    if (a->nseg)
        *out = npl__plan_ref(a->seg[0].plan);
    pthread_mutex_unlock(&a->lock);
    release(a);
    return *out ? 0 : npl__fail(ENOENT, "%p has no placement plan", p);
}

/* Intended node of every page (later segments win), for npl_check: from the plans the segments
 * were placed with, never from the environment of now. */
static int intended_map(struct array *a, int *want, size_t npages)
{
    size_t psz = npl__page_size();
    for (size_t i = 0; i < npages; i++)
        want[i] = NPL_NODE_ANY;
    for (int s = 0; s < a->nseg; s++) {
        struct segment *g = &a->seg[s];
        int thp = (g->flags & (NPL_F_THP | NPL_F_HUGETLB)) != 0;
        size_t mpsz = thp ? ((size_t)2 << 20) : psz;
        int shift = thp ? __builtin_ctzl(((size_t)2 << 20) / psz) : 0;
        size_t seg_bytes = g->npages * psz, unit_bytes = a->bytes / outer_extent(&a->shape);
        int whole = g->first_page == 0 && g->nunits == outer_extent(&a->shape);
        if (whole)
            seg_bytes = a->bytes;
        else if (g->first_page * psz + seg_bytes > a->bytes)
            seg_bytes = a->bytes - g->first_page * psz;
        struct npl_part part = {unit_bytes, g->nunits,
                                g->first_page * psz - g->first_unit * unit_bytes};
        struct npl_map m;
        if ((whole ? npl__map_init(&m, g->plan, &a->shape, seg_bytes, mpsz)
                   : npl__map_init_part(&m, g->plan, &part, seg_bytes, mpsz)) < 0)
            return -1;
        for (size_t i = 0; i < g->npages && g->first_page + i < npages; i++)
            want[g->first_page + i] = npl__map_node(&m, i >> shift);
    }
    return 0;
}

int npl_check(const void *p, struct npl_check *out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL output");
    struct array *a = acquire(p);
    if (!a)
        return -1;
    size_t psz = npl__page_size(), npages = (a->bytes + psz - 1) / psz;
    int *want = malloc(npages * sizeof *want);
    int rc = -1;
    if (!want) {
        npl__fail(ENOMEM, "out of memory");
    } else {
        pthread_mutex_lock(&a->lock);
        rc = intended_map(a, want, npages);
        pthread_mutex_unlock(&a->lock);
        if (rc == 0)
            rc = npl__check_pages(a->base, a->bytes, want, out);
    }
    free(want);
    release(a);
    return rc;
}

/* ---- the array forms of next-touch (the ranges: migration/nexttouch.c) ---- */
int npl_next_touch_register_array(void *array, size_t chunk)
{
    struct npl_array_info info;
    if (npl_array_info(array, &info) < 0)
        return -1;
    return npl_next_touch_register(info.base, info.bytes, chunk);
}

int npl_next_touch_arm_array(void *array, size_t chunk)
{
    struct npl_array_info info;
    if (npl_array_info(array, &info) < 0)
        return -1;
    return npl_next_touch_arm(info.base, info.bytes, chunk);
}
