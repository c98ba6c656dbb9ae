/* procfs.h - the library's one reader of /proc and /sys (internal, not installed).
 *
 * Every path is absolute ("/proc/self/maps") and is read under $NUMAPLACE_FSROOT when that is
 * set (read once per process, like hwloc's HWLOC_FSROOT): tests replay captured files through a
 * fake root. The /proc/PID/maps parser reads lines of any length and parses each strictly:
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
 * (hex, hex, [r-][w-][x-][ps], hex, hex:hex, decimal); everything after the inode's spaces is the
 * path, whatever it looks like, so a file name cannot fake a mapping. A malformed line makes the
 * whole parse fail (EINVAL): no decision is taken on a half-understood address space. */
#ifndef NPL_PROCFS_H
#define NPL_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the file-system root ---- */
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

#endif
