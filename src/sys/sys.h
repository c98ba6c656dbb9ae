/* sys/sys.h - the library's contact with the kernel (not installed): the NUMA system calls
 * (syscalls.c, counted), the reader of /proc and /sys under one redirectable root (procfs.c),
 * and the library's counters (counters.c).
 *
 * Every NUMA system call of the library is made by a function of this layer and counted by kind
 * (npl_get_stats); only base/ lies below it. */
#ifndef NPL_SYS_H
#define NPL_SYS_H

#include "base/base.h"
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
