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

/* ---- migrate-on-next-touch, in user space (Linux has none: MPOL_MF_LAZY is rejected) ----
 * Arming a range protects it (one mprotect(PROT_NONE)) and gives it the MPOL_LOCAL policy; the
 * first thread that touches a chunk afterwards takes a SIGSEGV that numaplace handles: it
 * unprotects the chunk, moves its present pages to the thread's node (move_pages) and faults
 * the absent ones in there (MADV_POPULATE_WRITE). Other threads touching the same chunk meanwhile
 * wait for it. Faults outside armed chunks go to the SIGSEGV handler that was in place when a
 * range was last armed (or the default action: a real segfault still kills); a program that
 * installs its own handler after arming must arm again. See docs/NEXT_TOUCH.md.
 *
 * System calls that write into an armed range (read(2), recv(2), MPI receives) get EFAULT
 * instead of a signal: call npl_next_touch_prepare() on the buffer first. */

#define NPL_NEXT_TOUCH_DEFAULT_CHUNK (64 * 1024)
#define NPL_NEXT_TOUCH_MAX_RANGES 256

/** Arm [addr, addr+len) (page-aligned start; len rounded up to pages) with chunks of
 *  chunk_bytes (0: NPL_NEXT_TOUCH_DEFAULT_CHUNK; rounded up to pages; at most the range; raised
 *  so that a range has at most 65536/4 chunks, which bounds the mappings a half-touched range can
 *  need). The range must be mapped with one protection (not PROT_NONE): resolving a chunk and
 *  disarming restore exactly that protection. Arming an armed range again re-arms it, also while
 *  other threads touch it (they wait for the arm). Errors: EINVAL (unaligned, empty, mixed
 *  protections or mappings), EACCES (PROT_NONE), EFAULT (holes, file pages beyond the end of the
 *  file), EOVERFLOW (sizes that overflow when rounded), ENOSPC (too many armed ranges). A range
 *  whose memory was unmapped or replaced without a disarm is forgotten, never re-protected. */
int npl_next_touch_arm(void *addr, size_t len, size_t chunk_bytes);
/** Arm a library array (whole). */
int npl_next_touch_arm_array(void *array, size_t chunk_bytes);
/** Disarm the range that starts at addr: everything gets back the protection it had when it was
 *  armed, where it is. ENOENT if no range starts there. */
int npl_next_touch_disarm(void *addr);
/** Resolve (as if the calling thread touched them) the armed chunks overlapping a buffer, before
 *  a system call writes into it. Memory that is not armed is ignored. */
int npl_next_touch_prepare(void *addr, size_t len);
/** Register [addr, addr+len) (same rules as npl_next_touch_arm) without arming it now: the
 *  range stays accessible until npl_next_touch_rearm_all() arms it (the transparent OpenMP mode
 *  does at every parallel region from a new code address). Registering twice changes nothing;
 *  npl_next_touch_disarm() forgets the range. ENOSPC: too many ranges. */
int npl_next_touch_register(void *addr, size_t len, size_t chunk_bytes);
/** Register a library array (whole); ENOENT for a pointer that is not one. */
int npl_next_touch_register_array(void *array, size_t chunk_bytes);
/** Re-arm every armed or registered range (the transparent OpenMP mode calls it at new parallel
 *  regions). Safe while other threads touch those ranges, but placement is only meaningful
 *  between parallel phases. Ranges whose memory is gone or changed are dropped silently. */
int npl_next_touch_rearm_all(void);

struct npl_next_touch_stats {
    uint64_t faults;         /**< next-touch faults handled */
    uint64_t chunks;         /**< chunks resolved */
    uint64_t pages_moved;    /**< present pages moved to the toucher's node */
    uint64_t pages_failed;   /**< present pages that could not move */
    uint64_t waits;          /**< faults that waited for another thread's chunk */
    uint64_t widened;        /**< faults where vm.max_map_count was reached and the chunk was
                                  resolved together with its armed neighbours (coarser placement)
                                  so that no mapping had to be added (docs/NEXT_TOUCH.md) */
};
/** Process-wide next-touch statistics. */
int npl_next_touch_get_stats(struct npl_next_touch_stats *out);

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
