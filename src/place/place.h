/* SPDX-License-Identifier: BSD-3-Clause */
/* place/place.h - the placement engine (not installed): a plan's map becomes a few system calls,
 * then every page is verified (place.c); an explicit node per page takes the same path
 * (place_batch.c). Below it: plan/, topology/, sys/, base/. */
#ifndef NPL_PLACE_H
#define NPL_PLACE_H

#include "plan/plan.h"
#include "sys/sys.h"

/* npl__place flag, internal: the range may hold transparent huge pages made before (a raw range,
 * an array that was NPL_F_THP). Page-granular placement splits them first: a base page of a THP
 * moves with all 512, so move_pages would report pages moved that the next move drags away. */
#define NPL__F_SPLIT_THP 0x80000000u
/* npl__place flag, internal: cut no mapping per stretch of the range (no mbind; one
 * MADV_NOHUGEPAGE over the whole range, so that khugepaged cannot collapse what moves): pages
 * that fault in follow the range's policy and then move (npl_place_pages with pages left alone
 * between listed ones: a policy per stretch would split the mapping twice per stretch) */
#define NPL__F_KEEP_VMAS 0x40000000u
/* npl__place flag, internal: the rest of the range's last 2 MiB frame belongs to the range (an
 * array's mapping that ends on 2 MiB): that frame may be huge if its pages go to one node */
#define NPL__F_OWN_TAIL 0x20000000u
/* npl__place flag, internal: lazy placement of a fresh range (place_lazy.c): the kernel's policy
 * is set on the untouched range and no page is touched; pages land on their nodes when first
 * touched. EOPNOTSUPP when the map has no lazy form (npl__lazy_kind says beforehand). */
#define NPL__F_LAZY 0x10000000u
/* The flags a caller may pass: any other bit (NPL__F_SPLIT_THP included) is EINVAL at the public
 * entry points, never silently ignored or taken for an internal flag. */
#define NPL__F_PUBLIC (NPL_F_STRICT | NPL_F_NO_PROTECT | NPL_F_THP | NPL_F_HUGETLB)
#define NPL__CHECK_FLAGS(flags, fn)                                                              \
    ((flags) & ~NPL__F_PUBLIC ? npl__fail(EINVAL, "%s: unknown flag bits 0x%x", (fn),            \
                                          (flags) & ~NPL__F_PUBLIC)                              \
                              : 0)

/* Place [addr, addr+len) under plan laid over shape (NULL: bytes); fresh: the memory is new and
 * untouched (plain stores), else it may be in use (atomic touches, present pages moved). */
int npl__place(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
               unsigned flags, int fresh, struct npl_place_stats *st);
/* npl__place of a part of an array already in use (its map: npl__map_init_part) */
int npl__place_part(void *addr, size_t len, const npl_plan *plan, const struct npl_part *part,
                    unsigned flags, struct npl_place_stats *st);
/* npl__place with the node of each base page given: nodes[i] in plan's node list, or < 0 to
 * leave page i alone (plan: bind_all over the nodes used, for the touch order and the protecting
 * policy, set per stretch of listed pages); base pages only, not fresh (place_batch.c) */
int npl__place_explicit(void *addr, size_t len, const npl_plan *plan, const int *nodes,
                        unsigned flags, struct npl_place_stats *st);
/* Move present pages of a range to the nodes of plan's map (no fault-in, no policy change): the
 * engine's verify-and-move pass alone, for migration/ and arrays/. */
struct npl_migrate_result;
int npl__migrate(void *addr, size_t len, const npl_plan *plan, const npl_shape *shape,
                 struct npl_migrate_result *res);

/* ---- lazy placement (place_lazy.c) ---- */
enum { NPL__LAZY_NO, NPL__LAZY_INTERLEAVE, NPL__LAZY_RUNS };
#define NPL__LAZY_RUNS_MAX 256  /* mbinds (runs of one node) per range */
struct npl_lazy {
    int kind;    /* NPL__LAZY_*: NO = the pages must be populated */
    size_t runs; /* RUNS: runs of pages on one node (each one mbind); INTERLEAVE: 1 */
    size_t rot;  /* INTERLEAVE: the start's page index must be rot modulo the node count */
};
/* How a fresh range of len bytes laid out as shape (NULL: bytes), aligned to align bytes, can be
 * placed under plan lazily (flags: NPL_F_THP, NPL_F_HUGETLB and NPL_F_STRICT mean no). Pure. */
int npl__lazy_kind(const npl_plan *plan, const npl_shape *shape, size_t len, size_t align,
                   unsigned flags, struct npl_lazy *lz);
void npl__lazy_of_map(const struct npl_map *m, size_t align, unsigned flags, struct npl_lazy *lz);
/* 1 if a range starting at base gets the plan's map from the kernel's interleave (always 1 for
 * the other kinds) */
int npl__lazy_base_ok(const npl_plan *plan, const struct npl_lazy *lz, uintptr_t base, size_t len);
/* set the policies of the npages pages at addr (the engine's job) */
int npl__lazy_apply(char *addr, size_t npages, size_t psz, const struct npl_map *m,
                    const struct npl_lazy *lz, struct npl_counter *cnt);
/* n more mappings split off by lazy runs, if they fit the process-wide bound (a quarter of
 * vm.max_map_count): 1 and counted, else 0; release gives them back when the range goes */
int npl__lazy_maps_reserve(size_t n);
void npl__lazy_maps_release(size_t n);

#endif
