/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace/migrate.h
 * @brief numaplace/migrate.h - explicit migration: correct a placement after the fact (MAi: "any
 * incorrect memory placement can be corrected with the migration functions").
 *
 * Pages move with move_pages(2), batched and split over several threads for large ranges; data is
 * never touched (the kernel copies each page while holding it). Pages that cannot move stay where
 * they are, readable and intact, and are reported. Errors: -1 with errno (EINVAL bad range or
 * node, EXDEV node outside this process's allowed nodes or memory-less, ENOENT unknown array,
 * ENOSYS no move_pages here). A call that moved some pages and could not move others returns
 * -1 with the errno of the first page that failed (ENOMEM: the node is full; EBUSY: the page is
 * busy or pinned; EFAULT, EACCES): the result is filled either way and says how many. */
/** @defgroup npl_migration Migration
 *  Move pages of ranges and library arrays to a node or to where a policy says (move_pages(2),
 *  batched, several threads for large ranges). Pages that cannot move are counted in struct
 *  npl_migrate_result, and the call then returns -1 with the first failure's errno.
 *  @{ */
#ifndef NUMAPLACE_MIGRATE_H
#define NUMAPLACE_MIGRATE_H

#include <numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** What one migration did (output only: every function fills all of it). Which pages stayed
 *  where: npl_query_pages() on the range. */
struct npl_migrate_result {
    size_t pages;    /**< pages in the request */
    size_t moved;    /**< moved to their target by this call */
    size_t already;  /**< already on their target */
    size_t absent;   /**< not present (never touched): nothing to move */
    size_t failed;   /**< present but left elsewhere (target node full, page busy or pinned) */
    /** system calls made */
    size_t syscalls;
    /** wall time of the call */
    double seconds;
    /** errno of the first page that failed (ENOMEM node full, EBUSY page busy or pinned, EFAULT,
     *  EACCES; 0: none failed) */
    int first_errno;
    /** address of that page (NULL: none failed) */
    void *first_fail_addr;
};

/** Move every present page of [addr, addr+len) (page-aligned start) to node `node` (OS id).
 *  result may be NULL.
 *  @return 0 (read *result: some pages may have failed), or -1 with errno EINVAL (bad range or
 *          node), EXDEV (node outside the allowed nodes or memory-less), EOVERFLOW, ENOMEM,
 *          ENOSYS/EPERM (move_pages(2) denied). */
int npl_migrate_range(void *addr, size_t len, int node, struct npl_migrate_result *result);
/** Move the pages of a range to where `pol` says (its page map counted from addr): the general
 *  form; shape may be NULL. Absent pages stay absent (use npl_place_range to fault them in).
 *  @return 0 (read *result), or -1 with errno EINVAL (NULL policy, bad range, shape or policy),
 *          EXDEV, EOVERFLOW, ENOMEM, ENOSYS/EPERM as npl_migrate_range(). */
int npl_migrate_range_policy(void *addr, size_t len, const npl_policy *pol,
                             const npl_shape *shape, struct npl_migrate_result *result);
/** Move the pages of a range to where a plan says, as npl_migrate_range_policy().
 *  @return 0, or -1 with errno as npl_migrate_range_policy(). */
int npl_migrate_range_planned(void *addr, size_t len, const npl_plan *plan,
                              const npl_shape *shape, struct npl_migrate_result *result);
/** Move units (rows/columns/planes) [first_unit, first_unit+nunits) of a library array to `node`;
 *  the array then records that part as bind_all:node (npl_check agrees). The part's pages are
 *  those of npl_apply_part() (none for units smaller than a page that hold no page start: 0);
 *  a transparent huge page straddling the part is split first, so no page outside it moves.
 *  @return 0 (read *result), or -1 with errno ENOENT (not a library array), EINVAL (units outside
 *          the array, bad node), and the errors of npl_migrate_range(). */
int npl_migrate_units(void *array, size_t first_unit, size_t nunits, int node,
                      struct npl_migrate_result *result);
/** Move a whole library array to `node`.
 *  @return as npl_migrate_units() for all its units. */
int npl_migrate_array(void *array, int node, struct npl_migrate_result *result);

/** @} */

/** @defgroup npl_next_touch Migrate-on-next-touch
 * Migrate-on-next-touch, in user space (Linux has none: MPOL_MF_LAZY is rejected).
 * Arming a range protects it (one mprotect(PROT_NONE)) and gives it the MPOL_LOCAL policy; the
 * first thread that touches a chunk afterwards takes a SIGSEGV that numaplace handles: it
 * unprotects the chunk, moves its present pages to the thread's node (move_pages) and faults
 * the absent ones in there (MADV_POPULATE_WRITE). Other threads touching the same chunk meanwhile
 * wait for it. Every other fault goes to the program's own SIGSEGV/SIGBUS disposition, with the
 * program's flags (signal chaining, see npl_fault_handle(): a real segfault still kills).
 * Under `numaplace run` the interposer keeps numaplace's handler first whatever the program
 * installs, and sigaction(2) returns the program's own handlers to it. Without the interposer,
 * numaplace's handler is put first at each arm, and a handler the program installs after
 * arming must call npl_fault_handle() first. See docs/NEXT_TOUCH.md.
 *
 * System calls that write into an armed range (read(2), recv(2), MPI receives) get EFAULT
 * instead of a signal: call npl_next_touch_prepare() on the buffer first.
 * @{ */

/** Chunk size (bytes) of npl_next_touch_arm() when chunk_bytes is 0. */
#define NPL_NEXT_TOUCH_DEFAULT_CHUNK (64 * 1024)
/** How many ranges can be armed or registered at the same time in this library (one more
 *  fails with ENOSPC); a runtime answer, so the limit can change without an ABI break.
 *  @return the number of ranges (> 0). */
int npl_next_touch_capacity(void);

/** Arm [addr, addr+len) (page-aligned start; len rounded up to pages) with chunks of
 *  chunk_bytes (0: NPL_NEXT_TOUCH_DEFAULT_CHUNK; rounded up to pages; at most the range; raised
 *  so that a range has at most 65536/4 chunks, which bounds the mappings a half-touched range can
 *  need). The range must be mapped with one protection (not PROT_NONE): resolving a chunk and
 *  disarming restore exactly that protection. Arming an armed range again re-arms it, also while
 *  other threads touch it (they wait for the arm). A range whose memory was unmapped or replaced
 *  without a disarm is forgotten, never re-protected.
 *  @return 0, or -1 with errno EINVAL (NULL, empty or unaligned range; mixed protections or
 *          mappings; armed with another length or chunk; overlapping an armed range), EACCES
 *          (PROT_NONE), EFAULT (holes, file pages beyond the end of the file), EOVERFLOW (sizes
 *          that overflow when rounded), ENOSYS (no move_pages(2)), ENOSPC (too many armed
 *          ranges), ENOMEM, or the errno of sigaction(2), mbind(2) or mprotect(2). */
int npl_next_touch_arm(void *addr, size_t len, size_t chunk_bytes);
/** Arm a library array (whole).
 *  @return as npl_next_touch_arm(), or -1 with errno ENOENT (not a library array). */
int npl_next_touch_arm_array(void *array, size_t chunk_bytes);
/** Disarm the range that starts at addr: everything gets back the protection it had when it was
 *  armed, where it is.
 *  @return 0, or -1 with errno ENOENT (addr does not start an armed or registered range), or
 *          mprotect(2)'s errno. */
int npl_next_touch_disarm(void *addr);
/** Resolve (as if the calling thread touched them) the armed chunks overlapping a buffer, before
 *  a system call writes into it. Memory that is not armed is ignored.
 *  @return 0, or -1 with errno EINVAL (NULL or wrapping buffer), or the errno of resolving a
 *          chunk (mprotect(2), move_pages(2)). */
int npl_next_touch_prepare(void *addr, size_t len);
/** Register [addr, addr+len) (same rules as npl_next_touch_arm) without arming it now: the
 *  range stays accessible until npl_next_touch_rearm_all() arms it (the transparent OpenMP mode
 *  does at every parallel region from a new code address). Registering twice changes nothing;
 *  npl_next_touch_disarm() forgets the range.
 *  @return 0, or -1 with errno as npl_next_touch_arm() (ENOSPC: too many ranges). */
int npl_next_touch_register(void *addr, size_t len, size_t chunk_bytes);
/** Register a library array (whole).
 *  @return as npl_next_touch_register(), or -1 with errno ENOENT for a pointer that is not one. */
int npl_next_touch_register_array(void *array, size_t chunk_bytes);
/** Re-arm every armed or registered range (the transparent OpenMP mode calls it at new parallel
 *  regions). Safe while other threads touch those ranges, but placement is only meaningful
 *  between parallel phases. Ranges whose memory is gone or changed are dropped silently.
 *  @return 0, or -1 with the errno of the first range that could not be armed (mbind(2),
 *          mprotect(2)). */
int npl_next_touch_rearm_all(void);

/** Signal chaining for a program's own SIGSEGV/SIGBUS handler: call it first, with the three
 *  arguments the handler got (SA_SIGINFO), and return at once when it returns 1.
 *
 *  numaplace takes faults for itself (an armed next-touch chunk is PROT_NONE until its first
 *  touch). Its own handler passes every other fault on to the handler that was installed before
 *  it, with that handler's flags; but a handler the program installs after arming replaces it in
 *  the kernel, and then receives numaplace's faults too. Such a handler (a JVM's, a crash
 *  reporter's, a runtime's) must start with:
 *  @code
 *  static void on_segv(int sig, siginfo_t *si, void *uc) {
 *      if (npl_fault_handle(sig, si, uc))
 *          return;            // numaplace's fault, resolved: the access is retried
 *      ...                    // the program's own fault
 *  }
 *  @endcode
 *  Under `numaplace run` (the interposer) nothing is needed: numaplace's handler stays first and
 *  the program's handler only ever sees its own faults. Async-signal-safe; errno is kept.
 *  @param sig   the signal (SIGSEGV or SIGBUS; any other: 0)
 *  @param info  the handler's siginfo_t * (void * so that this header needs no POSIX signal.h)
 *  @param uctx  the handler's third argument (may be NULL)
 *  @return 1 when the fault was numaplace's and is resolved (return from the handler: the
 *          access is retried), 0 when it is not numaplace's (a signal sent by kill(2) never is).
 *          Just after a range was disarmed, a fault elsewhere may get 1 once (its access may have
 *          raced with the disarm): retried, a fault of the program's own comes back and gets 0. */
int npl_fault_handle(int sig, void *info, void *uctx);

/** Process-wide next-touch statistics (npl_next_touch_get_stats()). */
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
/** Process-wide next-touch statistics.
 *  @return 0, or -1 with errno EINVAL (out NULL). */
int npl_next_touch_get_stats(struct npl_next_touch_stats *out);

/** Process-wide migration statistics. */
struct npl_migrate_stats {
    /** migration calls (npl_migrate_*, npl_apply re-placements) */
    uint64_t calls;
    /** pages moved */
    uint64_t pages_moved;
    /** bytes of the pages moved */
    uint64_t bytes_moved;
    /** present pages that could not move */
    uint64_t pages_failed;
    /** wall time spent migrating */
    double seconds;
};
/** Process-wide migration statistics.
 *  @return 0, or -1 with errno EINVAL (out NULL). */
int npl_get_migrate_stats(struct npl_migrate_stats *out);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
/** @} */
#ifdef __cplusplus
}
#endif
#endif
