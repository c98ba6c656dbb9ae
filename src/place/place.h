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

#endif
