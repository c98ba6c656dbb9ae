/* SPDX-License-Identifier: BSD-3-Clause */
/* sys/sys.h - the library's contact with the kernel (not installed): the NUMA system calls
 * (syscalls.c, counted), the reader of /proc and /sys under one redirectable root (procfs.c),
 * the library's counters (counters.c), and the one SIGSEGV/SIGBUS handler that numaplace's
 * fault users share with the program (faults.c).
 *
 * Every NUMA system call of the library is made by a function of this layer and counted by kind
 * (npl_get_stats); only base/ lies below it. */
#ifndef NPL_SYS_H
#define NPL_SYS_H

#include "base/base.h"
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- system calls (syscalls.c): raw, counted; return -1+errno ---- */
struct npl_counter { size_t syscalls; };
long npl__mbind(struct npl_counter *c, void *addr, size_t len, int mode, const int *nodes, int n,
                unsigned flags);
long npl__set_mempolicy(struct npl_counter *c, int mode, const int *nodes, int n);
long npl__get_mempolicy_node(struct npl_counter *c, const void *addr, int *node);
long npl__move_pages(struct npl_counter *c, unsigned long count, void **pages, const int *nodes,
                     int *status, int flags);
/* Where the page holding addr is in process pid (0: this one): a move_pages query that moves
 * nothing. 0 and *status (its node, or a negative errno: absent...), or -1 + errno.
 * Async-signal-safe (one system call, an atomic count). */
long npl__page_node(struct npl_counter *c, int pid, const void *addr, int *status);
long npl__migrate_pages(struct npl_counter *c, int pid, const int *from, int nfrom, const int *to,
                        int nto);
int npl__madvise(struct npl_counter *c, void *addr, size_t len, int advice);
/* Private anonymous read-write memory that never holds a transparent huge page (MAP_FAILED +
 * errno on failure). Mapped PROT_NONE, advised MADV_NOHUGEPAGE, then made read-write, so it never
 * merges with a read-write neighbour while it could take THPs: under THP "always" a neighbour's
 * first touch would fault a 2 MiB page straddling both, populating our pages on the toucher's
 * node, and a later migration of either side moves all 512 pages (docs/RELIABILITY.md). */
void *npl__map_nohuge(size_t len);
int npl__mems_allowed(int *nodes, int max); /* get_mempolicy(MPOL_F_MEMS_ALLOWED) */
/* How the kernel picks the node of a page under MPOL_INTERLEAVE: the n-th node of the mask, n =
 * index % nodes, the index being the page's offset in its mapping (for anonymous memory, its
 * address / page size), cut to 32 bits before Linux 6.7 (returns 32), whole from 6.7 on (64);
 * 0 if the release cannot be read. */
int npl__interleave_index_bits(void);
/* vm.max_map_count (read once; 65530 when unreadable) */
long npl__max_map_count(void);

/* ---- counters (counters.c): every number the library counts, one home ---- */
/* system calls by kind; the total also counts madvise */
enum { NPL__SYS_MBIND, NPL__SYS_SET_MEMPOLICY, NPL__SYS_GET_MEMPOLICY, NPL__SYS_MOVE_PAGES,
       NPL__SYS_MIGRATE_PAGES, NPL__SYS_KINDS };
/* one system call of kind (-1: not a NUMA call); async-signal-safe (atomic adds) */
void npl__count_syscall(int kind);
void npl__stats_add(const struct npl_place_stats *st);   /* one placement */
void npl__stats_arrays(long arrays, long bytes);          /* arrays born (+) or freed (-) */
struct npl_migrate_result;
void npl__migrate_stats_add(const struct npl_migrate_result *res, size_t page_size);
/* fork handlers (arrays/): take (1) or release (0) the counters' lock */
void npl__counters_fork_lock(int lock);

/* ---- faults (faults.c): one SIGSEGV/SIGBUS handler, shared with the program ----
 * A fault user (next-touch; a profiling sampler) registers a claimer: called in the handler for
 * every fault the kernel raised (si_code > 0), it returns 1 when the fault is its own and
 * resolved (the access is retried), else 0. It must be async-signal-safe. Faults no claimer
 * takes go to the program's own disposition with the program's flags (faults.c says how). */
typedef int (*npl_fault_claimer)(int sig, siginfo_t *si, void *uctx);
/* Add a claimer (adding it again changes nothing; 8 at most: ENOSPC) and make sure the handler
 * is first in line (npl__fault_install). 0, or -1 through npl__fail. Not from a handler. */
int npl__fault_claim(npl_fault_claimer fn);
/* Install the handler for SIGSEGV and SIGBUS: in the interposer once (the program's actions are
 * recorded from then on); in the library, again whenever the kernel has another handler (which
 * becomes the program's); a library copy under the interposer links its claimers to the
 * interposer's dispatcher instead. 0, or -1 through npl__fail. */
int npl__fault_install(void);
/* Register the dispatcher's fork handlers (once): a fault user whose fork handlers take a lock
 * it holds while installing calls this before its own pthread_atfork, so that the dispatcher's
 * lock is taken after the user's at fork. */
void npl__fault_atfork(void);
/* 1 if a claimer took this fault (npl_fault_handle). Async-signal-safe. */
int npl__fault_dispatch(int sig, siginfo_t *si, void *uctx);
/* The interposer's side (preload/signals.c). This copy is the process's dispatcher and uses
 * `real` (libc's sigaction) for the kernel; call before anything installs. */
void npl__fault_interposer(int (*real)(int, const struct sigaction *, struct sigaction *));
/* 1 once the interposer's handler is installed (masks are then kept, see below) */
int npl__fault_installed(void);
/* sigaction(2) for the program: for SIGSEGV/SIGBUS once installed, act is recorded (numaplace's
 * handler stays, with act's mask and flags) and oact gets the program's previous action; any
 * other signal, or before installing, goes to the kernel. 0, or -1 + errno. Async-signal-safe. */
int npl__fault_program_sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
/* The calling thread's view: the program blocks SIGSEGV (bit 0) / SIGBUS (bit 1) where the
 * kernel's mask does not (the interposer keeps them unblocked there while installed). Setting
 * it raises the signals sent while blocked that it unblocks. pending: those waiting. */
unsigned npl__fault_view(void);
void npl__fault_set_view(unsigned view);
unsigned npl__fault_pending(void);

/* ---- the file-system root (procfs.c) ----
 * Every path is absolute ("/proc/self/maps") and is read under $NUMAPLACE_FSROOT when that is
 * set (read once per process, like hwloc's HWLOC_FSROOT): tests replay captured files through a
 * fake root. The /proc/PID/maps parser reads lines of any length and parses each strictly:
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
 * (hex, hex, [r-][w-][x-][ps], hex, hex:hex, decimal); everything after the inode's spaces is the
 * path, whatever it looks like, so a file name cannot fake a mapping. A malformed line makes the
 * whole parse fail (EINVAL): no decision is taken on a half-understood address space. */
/* $NUMAPLACE_FSROOT ("" when unset), read once, thread-safe. */
const char *npl__fs_root(void);
/* fopen(ROOT + path, "re"); NULL + errno. */
FILE *npl__fs_open(const char *path);
/* open(ROOT + path, flags | O_CLOEXEC); -1 + errno. */
int npl__fs_open_fd(const char *path, int flags);
/* the start of a (proc/sys) file as a NUL-terminated string: the bytes read or -1 (buf "") */
ssize_t npl__fs_read_text(const char *path, char *buf, size_t size);
/* access(ROOT + path, mode): 0, or -1 + errno (capability probes of /sys files). */
int npl__fs_access(const char *path, int mode);

/* ---- /proc/PID/maps ---- */
struct npl_maps_entry {
    uintptr_t start, end; /* [start, end), start < end */
    char perms[5];        /* "rw-p" */
    int prot;             /* PROT_READ | PROT_WRITE | PROT_EXEC of perms */
    int shared;           /* 's' */
    uint64_t offset;
    unsigned dev_major, dev_minor;
    uint64_t inode;
    const char *path;     /* the rest of the line ("" if none); valid during the callback only */
    size_t path_len;
    int deleted;          /* the path ends with " (deleted)" */
};
/* A callback returns 0 to go on; any other value stops the walk and is returned. */
typedef int (*npl_maps_cb)(const struct npl_maps_entry *e, void *ctx);

/* Parse one line (without its '\n'; len bytes, need not be NUL-terminated): 0, or -1 (EINVAL). */
int npl__maps_parse_line(const char *line, size_t len, struct npl_maps_entry *e);
/* Parse a whole maps text (lines separated by '\n', the last one may lack it; NUL bytes are
 * malformed). Returns 0, the callback's non-zero value, or -1 + errno (EINVAL: a malformed line)
 * without calling npl__fail. The callback sees increasing, disjoint mappings: the kernel writes
 * maps in several reads, and a mapping that grew meanwhile can overlap the one before it; the
 * overlapping part is cut off (a mapping entirely covered already is skipped). */
int npl__maps_parse_buffer(const char *text, size_t len, npl_maps_cb cb, void *ctx);
/* Walk /proc/PID/maps (pid 0: self), under the fs root. Same returns; ENOENT etc. when it cannot
 * be read. Does not call npl__fail. */
int npl__maps_foreach(int pid, npl_maps_cb cb, void *ctx);

/* Call cb(s, e, entry, ctx) for each mapped piece [s, e) of [lo, hi) (clipped), in address order;
 * unmapped parts are skipped. Returns 0, cb's non-zero value, or -1 + errno (maps unreadable or
 * malformed) without npl__fail. Costs are proportional to the mappings, not to hi - lo. */
typedef int (*npl_range_cb)(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *ctx);
int npl__maps_ranges(uintptr_t lo, uintptr_t hi, npl_range_cb cb, void *ctx);

/* Is [addr, addr+len) entirely mapped and safe to touch? 0, or -1 through npl__fail:
 *   EINVAL    NULL, empty, wrapping; or a file-backed piece whose file size cannot be established
 *   EFAULT    a hole ("address X is not mapped"), or file-backed pages beyond the end of the file
 *             (touching them is SIGBUS: "... beyond the end of file PATH")
 *   EACCES    need_write and a piece is not writable (need_write 0: any protection, PROT_NONE too)
 *   errno of the maps reader when /proc/self/maps cannot be read. */
int npl__range_check(const void *addr, size_t len, int need_write);

/* 1 when the calling thread is the only one of this process left alive (a main thread that
 * called pthread_exit counts as gone): /proc/self/task, read live, never under the root. */
int npl__proc_alone(void);
/* the CPU that thread tid of this process last ran on (/proc/self/task/TID/stat), or -1 */
int npl__task_cpu(long tid);

/* ---- page frames (procfs.c): /proc/self/pagemap, /proc/kpageflags, /proc/self/smaps ---- */
#define NPL__PM_PRESENT (1ull << 63)
#define NPL__PM_PFN_MASK ((1ull << 55) - 1)
/* The pagemap entries of the n base pages from lo (page-aligned): 1 if any frame number is
 * readable (CAP_SYS_ADMIN; otherwise the kernel reports them as 0), else 0 (pm zeroed). */
int npl__pagemap_read(uintptr_t lo, size_t n, uint64_t *pm);
/* /proc/kpageflags opened for npl__kpage_is_thp (-1 + errno when it cannot be) */
int npl__kpageflags_open(void);
/* 1 if the frame pfn is (part of) a transparent huge page, by kpageflags' KPF_THP */
int npl__kpage_is_thp(int kfd, uint64_t pfn);
/* pagemap frames and kpageflags are both readable: THP can be located */
int npl__can_locate_thp(void);
/* A mapping of /proc/self/smaps: hugetlb (KernelPageSize 2048 kB) and its AnonHugePages. */
struct npl_smaps_vma {
    uintptr_t start, end;
    int hugetlb;
    long thp_kb;
};
/* The mappings of /proc/self/smaps overlapping [lo, hi) into a malloc'ed array: 0, or -1 through
 * npl__fail. */
int npl__smaps_read(uintptr_t lo, uintptr_t hi, struct npl_smaps_vma **out, int *n);

#endif
