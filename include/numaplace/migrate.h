/* numaplace/migrate.h - explicit migration: correct a placement after the fact (MAi: "any
 * incorrect memory placement can be corrected with the migration functions").
 *
 * Pages move with move_pages(2), batched and split over several threads for large ranges; data is
 * never touched (the kernel copies each page while holding it). Pages that cannot move stay where
 * they are, readable and intact, and are reported. Errors: -1 with errno (EINVAL bad range or
 * node, EXDEV node outside this process's allowed nodes or memory-less, ENOENT unknown array,
 * ENOSYS no move_pages here). A call that moved some pages and could not move others returns 0:
 * read the result. */
#ifndef NUMAPLACE_MIGRATE_H
#define NUMAPLACE_MIGRATE_H

#include <numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define NPL_MIGRATE_FAIL_ADDRS 8

/** What one migration did. */
struct npl_migrate_result {
    size_t pages;    /**< pages in the request */
    size_t moved;    /**< moved to their target by this call */
    size_t already;  /**< already on their target */
    size_t absent;   /**< not present (never touched): nothing to move */
    size_t failed;   /**< present but left elsewhere (target node full, page busy or pinned) */
    int nfail;       /**< entries used in fail_addr/fail_errno (the first failures) */
    void *fail_addr[NPL_MIGRATE_FAIL_ADDRS];
    int fail_errno[NPL_MIGRATE_FAIL_ADDRS]; /**< ENOMEM, EBUSY, EFAULT, EACCES... */
    size_t syscalls;
    double seconds;
};

/** Move every present page of [addr, addr+len) (page-aligned start) to node `node`. */
int npl_migrate_range(void *addr, size_t len, int node, struct npl_migrate_result *result);
/** Move the pages of a range to where `pol` says (its page map counted from addr): the general
 *  form; shape may be NULL. Absent pages stay absent (use npl_place_range to fault them in). */
int npl_migrate_range_policy(void *addr, size_t len, const npl_policy *pol,
                             const npl_shape *shape, struct npl_migrate_result *result);
/** Move units (rows/columns/planes) [first_unit, first_unit+nunits) of a library array to `node`;
 *  the array then records that part as bind_all:node (npl_check agrees). */
int npl_migrate_units(void *array, size_t first_unit, size_t nunits, int node,
                      struct npl_migrate_result *result);
/** Move a whole library array to `node`. */
int npl_migrate_array(void *array, int node, struct npl_migrate_result *result);

/** Process-wide migration statistics. */
struct npl_migrate_stats {
    uint64_t calls;
    uint64_t pages_moved;
    uint64_t bytes_moved;
    uint64_t pages_failed;
    double seconds;
};
int npl_get_migrate_stats(struct npl_migrate_stats *out);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
