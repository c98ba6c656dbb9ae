/* SPDX-License-Identifier: BSD-3-Clause */
/* procfs.c - the one reader of /proc and /sys, under a root that can be redirected
 * ($NUMAPLACE_FSROOT): a strict /proc/PID/maps parser, the range check, and the page-frame
 * files (pagemap, kpageflags, smaps) that locate huge pages. */
#define _GNU_SOURCE
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- the root ---- */
static char fs_root[PATH_MAX];
static pthread_once_t fs_once = PTHREAD_ONCE_INIT;

static void read_root(void)
{
    const char *r = getenv("NUMAPLACE_FSROOT");
    size_t n = r ? strlen(r) : 0;
    if (n == 0 || n >= sizeof fs_root)
        return; /* unset, empty or absurd: the real root */
    memcpy(fs_root, r, n + 1);
    while (n > 1 && fs_root[n - 1] == '/') /* "/tmp/root/" -> "/tmp/root" */
        fs_root[--n] = 0;
    if (strcmp(fs_root, "/") == 0)
        fs_root[0] = 0;
}

const char *npl__fs_root(void)
{
    pthread_once(&fs_once, read_root);
    return fs_root;
}

/* ROOT + path into buf: 0, or -1 + errno (EINVAL NULL path, ENAMETOOLONG) */
static int full_path(const char *path, char *buf, size_t size)
{
    if (!path) {
        errno = EINVAL;
        return -1;
    }
    int n = snprintf(buf, size, "%s%s", npl__fs_root(), path);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

FILE *npl__fs_open(const char *path)
{
    char p[PATH_MAX];
    return full_path(path, p, sizeof p) < 0 ? NULL : fopen(p, "re");
}

int npl__fs_open_fd(const char *path, int flags)
{
    char p[PATH_MAX];
    return full_path(path, p, sizeof p) < 0 ? -1 : open(p, flags | O_CLOEXEC);
}

ssize_t npl__fs_read_text(const char *path, char *buf, size_t size)
{
    int fd = npl__fs_open_fd(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = 0;
    return n;
}

int npl__fs_access(const char *path, int mode)
{
    char p[PATH_MAX];
    return full_path(path, p, sizeof p) < 0 ? -1 : access(p, mode);
}

/* ---- the maps parser ---- */
static int hexdigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 1 to maxdigits hex digits at *p (< end), no overflow of 64 bits */
static int take_hex(const char **p, const char *end, int maxdigits, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0, d;
    while (*p < end && (d = hexdigit(**p)) >= 0) {
        if (++n > maxdigits)
            return -1;
        v = v << 4 | (uint64_t)d;
        (*p)++;
    }
    *out = v;
    return n ? 0 : -1;
}

static int take_dec(const char **p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    while (*p < end && **p >= '0' && **p <= '9') {
        unsigned d = (unsigned)(**p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        n++;
        (*p)++;
    }
    *out = v;
    return n ? 0 : -1;
}

static int take_char(const char **p, const char *end, char c)
{
    if (*p >= end || **p != c)
        return -1;
    (*p)++;
    return 0;
}

int npl__maps_parse_line(const char *line, size_t len, struct npl_maps_entry *e)
{
    const char *p = line, *end = line + len;
    uint64_t start, stop, off, maj, min, ino;
    memset(e, 0, sizeof *e);
    if (!line || memchr(line, 0, len) || memchr(line, '\n', len))
        goto bad;
    if (take_hex(&p, end, 16, &start) < 0 || take_char(&p, end, '-') < 0 ||
        take_hex(&p, end, 16, &stop) < 0 || take_char(&p, end, ' ') < 0)
        goto bad;
    if (start >= stop || stop > UINTPTR_MAX)
        goto bad;
    if (end - p < 5 || (p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
        (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') || p[4] != ' ')
        goto bad;
    memcpy(e->perms, p, 4);
    e->perms[4] = 0;
    e->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
              (p[2] == 'x' ? PROT_EXEC : 0);
    e->shared = p[3] == 's';
    p += 5;
    if (take_hex(&p, end, 16, &off) < 0 || take_char(&p, end, ' ') < 0 ||
        take_hex(&p, end, 8, &maj) < 0 || take_char(&p, end, ':') < 0 ||
        take_hex(&p, end, 8, &min) < 0 || take_char(&p, end, ' ') < 0 ||
        take_dec(&p, end, &ino) < 0)
        goto bad;
    if (p < end && *p != ' ')
        goto bad; /* "123abc": not a number */
    while (p < end && *p == ' ')
        p++;
    e->start = (uintptr_t)start;
    e->end = (uintptr_t)stop;
    e->offset = off;
    e->dev_major = (unsigned)maj;
    e->dev_minor = (unsigned)min;
    e->inode = ino;
    e->path = p;
    e->path_len = (size_t)(end - p);
    static const char del[] = " (deleted)";
    e->deleted = e->path_len >= sizeof del - 1 &&
                 memcmp(end - (sizeof del - 1), del, sizeof del - 1) == 0;
    return 0;
bad:
    memset(e, 0, sizeof *e);
    e->path = "";
    errno = EINVAL;
    return -1;
}

/* The kernel writes maps in several reads and resumes each at the end address of the last
 * mapping it wrote: a mapping that grew or merged meanwhile can start before that address. Its
 * part already covered is cut off, so that callers see increasing, disjoint mappings. Returns 0
 * when nothing is left of it. */
static int clip_entry(struct npl_maps_entry *e, uintptr_t *prev_end)
{
    if (e->end <= *prev_end)
        return 0;
    if (e->start < *prev_end) {
        e->offset += (uint64_t)(*prev_end - e->start);
        e->start = *prev_end;
    }
    *prev_end = e->end;
    return 1;
}

int npl__maps_parse_buffer(const char *text, size_t len, npl_maps_cb cb, void *ctx)
{
    if (!text && len) {
        errno = EINVAL;
        return -1;
    }
    uintptr_t prev_end = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        struct npl_maps_entry e;
        if (npl__maps_parse_line(text + pos, n, &e) < 0)
            return -1;
        pos += n + (nl != NULL);
        if (!clip_entry(&e, &prev_end))
            continue;
        int rc = cb ? cb(&e, ctx) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int npl__maps_foreach(int pid, npl_maps_cb cb, void *ctx)
{
    char path[64];
    if (pid < 0) {
        errno = EINVAL;
        return -1;
    }
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/maps");
    else
        snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = npl__fs_open(path);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uintptr_t prev_end = 0;
    int rc = 0;
    errno = 0;
    while ((n = getline(&line, &cap, f)) > 0) { /* any length */
        size_t l = (size_t)n;
        if (line[l - 1] == '\n')
            line[--l] = 0;
        struct npl_maps_entry e;
        if (npl__maps_parse_line(line, l, &e) < 0) {
            rc = -1;
            errno = EINVAL;
            break;
        }
        if (!clip_entry(&e, &prev_end))
            continue;
        if ((rc = cb ? cb(&e, ctx) : 0) != 0)
            break;
    }
    int e = errno;
    if (rc == 0 && ferror(f)) {
        rc = -1;
        e = e ? e : EIO;
    }
    free(line);
    fclose(f);
    errno = e;
    return rc;
}

struct ranges_ctx {
    uintptr_t lo, hi;
    npl_range_cb cb;
    void *ctx;
    int past; /* stopped because the walk went past hi */
};

static int ranges_step(const struct npl_maps_entry *e, void *arg)
{
    struct ranges_ctx *r = arg;
    if (e->end <= r->lo)
        return 0;
    if (e->start >= r->hi) {
        r->past = 1;
        return 1;
    }
    uintptr_t s = e->start > r->lo ? e->start : r->lo;
    uintptr_t t = e->end < r->hi ? e->end : r->hi;
    return r->cb(s, t, e, r->ctx);
}

int npl__maps_ranges(uintptr_t lo, uintptr_t hi, npl_range_cb cb, void *ctx)
{
    if (!cb || hi < lo) {
        errno = EINVAL;
        return -1;
    }
    if (hi == lo)
        return 0;
    struct ranges_ctx r = {lo, hi, cb, ctx, 0};
    int rc = npl__maps_foreach(0, ranges_step, &r);
    return r.past && rc == 1 ? 0 : rc;
}

/* ---- the range check ---- */
enum { RC_HOLE = 1, RC_RO, RC_EOF, RC_NOSIZE };

struct check_ctx {
    uintptr_t cur;   /* checked up to here */
    int need_write;
    uintptr_t bad;   /* the address that failed */
    char file[256];  /* RC_EOF, RC_NOSIZE: the file */
    uint64_t fsize;
};

/* The size of the file behind a mapping: 1 (size in *size), 0 (not a regular file: no SIGBUS
 * beyond its end to fear, e.g. a device), -1 (cannot tell). */
static int mapped_file_size(const struct npl_maps_entry *m, uint64_t *size)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "/proc/self/map_files/%lx-%lx", (unsigned long)m->start,
             (unsigned long)m->end);
    char full[PATH_MAX];
    int ok = full_path(p, full, sizeof full) == 0 && stat(full, &st) == 0;
    if (!ok && !m->deleted && m->path_len > 0 && m->path_len < sizeof p && m->path[0] == '/') {
        memcpy(p, m->path, m->path_len);
        p[m->path_len] = 0;
        ok = stat(p, &st) == 0 && (uint64_t)st.st_ino == m->inode &&
             major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor;
    }
    if (!ok)
        return -1;
    if (!S_ISREG(st.st_mode))
        return 0;
    *size = (uint64_t)st.st_size;
    return 1;
}

/* shared anonymous memory and SysV segments: shmem objects exactly as large as the mapping */
static int anon_shmem(const struct npl_maps_entry *m)
{
    return (m->path_len == 19 && memcmp(m->path, "/dev/zero (deleted)", 19) == 0) ||
           (m->path_len >= 5 && memcmp(m->path, "/SYSV", 5) == 0);
}

static int check_step(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *arg)
{
    struct check_ctx *c = arg;
    if (s > c->cur) {
        c->bad = c->cur;
        return RC_HOLE;
    }
    if (c->need_write && !(m->prot & PROT_WRITE)) {
        c->bad = s;
        return RC_RO;
    }
    if (m->inode != 0 && !anon_shmem(m)) {
        size_t n = m->path_len < sizeof c->file - 1 ? m->path_len : sizeof c->file - 1;
        memcpy(c->file, m->path, n);
        c->file[n] = 0;
        uint64_t size = 0;
        int k = mapped_file_size(m, &size);
        if (k < 0) {
            c->bad = s;
            return RC_NOSIZE;
        }
        if (k > 0) {
            uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
            uint64_t avail = size > UINT64_MAX - ps ? UINT64_MAX : (size + ps - 1) / ps * ps;
            /* the file offset just past the last byte of [s, e) that is asked for */
            uint64_t need = m->offset + (uint64_t)(e - m->start);
            if (need < m->offset || need > avail) {
                uint64_t first = avail > m->offset ? avail - m->offset : 0;
                c->bad = m->start + first > s ? m->start + first : s;
                c->fsize = size;
                return RC_EOF;
            }
        }
    }
    c->cur = e;
    return 0;
}

int npl__range_check(const void *addr, size_t len, int need_write)
{
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    if (!addr || len == 0)
        return npl__fail(EINVAL, "empty range %p+%zu", addr, len);
    if (hi < lo)
        return npl__fail(EOVERFLOW, "%p+%zu wraps around the address space", addr, len);
    struct check_ctx c = {.cur = lo, .need_write = need_write};
    int rc = npl__maps_ranges(lo, hi, check_step, &c);
    if (rc < 0)
        return npl__fail(errno, "cannot read /proc/self/maps: %s", strerror(errno));
    if (rc == 0 && c.cur < hi) {
        rc = RC_HOLE;
        c.bad = c.cur;
    }
    switch (rc) {
    case 0:
        return 0;
    case RC_HOLE:
        return npl__fail(EFAULT, "%p+%zu: address %#lx is not mapped", addr, len,
                         (unsigned long)c.bad);
    case RC_RO:
        return npl__fail(EACCES, "%p+%zu: address %#lx is not writable", addr, len,
                         (unsigned long)c.bad);
    case RC_EOF:
        return npl__fail(EFAULT,
                         "%p+%zu: the pages from %#lx are beyond the end of file %s (%llu bytes): "
                         "touching them would raise SIGBUS",
                         addr, len, (unsigned long)c.bad, c.file, (unsigned long long)c.fsize);
    default:
        return npl__fail(EINVAL, "%p+%zu: the size of the file %s mapped at %#lx cannot be "
                                 "established (not touched: pages beyond its end would raise SIGBUS)",
                         addr, len, c.file, (unsigned long)c.bad);
    }
}

/* ---- page frames: pagemap, kpageflags, smaps ---- */
#define KPF_THP_BIT 22

int npl__pagemap_read(uintptr_t lo, size_t n, uint64_t *pm)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE), bytes = n * sizeof *pm;
    int have = 0, fd = npl__fs_open_fd("/proc/self/pagemap", O_RDONLY);
    memset(pm, 0, bytes);
    if (fd >= 0 && pread(fd, pm, bytes, (off_t)(lo / psz * sizeof *pm)) == (ssize_t)bytes)
        for (size_t i = 0; i < n && !have; i++)
            have = (pm[i] & NPL__PM_PRESENT) && (pm[i] & NPL__PM_PFN_MASK);
    if (fd >= 0)
        close(fd);
    return have;
}

int npl__kpageflags_open(void) { return npl__fs_open_fd("/proc/kpageflags", O_RDONLY); }

int npl__kpage_is_thp(int kfd, uint64_t pfn)
{
    uint64_t fl = 0;
    return pread(kfd, &fl, sizeof fl, (off_t)(pfn * sizeof fl)) == (ssize_t)sizeof fl &&
           ((fl >> KPF_THP_BIT) & 1);
}

int npl__can_locate_thp(void)
{
    static char probe[1] = {1};
    uint64_t pm = 0;
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    probe[0] = 1; /* present */
    return npl__pagemap_read((uintptr_t)probe & ~(uintptr_t)(psz - 1), 1, &pm) &&
           npl__fs_access("/proc/kpageflags", R_OK) == 0;
}

int npl__smaps_read(uintptr_t lo, uintptr_t hi, struct npl_smaps_vma **out, int *n)
{
    FILE *f = npl__fs_open("/proc/self/smaps");
    if (!f)
        return npl__fail(errno, "cannot read /proc/self/smaps");
    struct npl_smaps_vma *v = NULL, *cur = NULL;
    int nv = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long s, e;
        long kb;
        char *dash = strchr(line, '-'), *sp = strchr(line, ' ');
        if (dash && sp && dash < sp && sscanf(line, "%lx-%lx ", &s, &e) == 2) {
            cur = NULL;
            if (e <= lo || s >= hi)
                continue;
            struct npl_smaps_vma *nvp = realloc(v, (size_t)(nv + 1) * sizeof *v);
            if (!nvp) {
                free(v);
                fclose(f);
                return npl__fail(ENOMEM, "out of memory");
            }
            v = nvp;
            cur = &v[nv++];
            *cur = (struct npl_smaps_vma){s, e, 0, 0};
        } else if (cur && sscanf(line, "KernelPageSize: %ld kB", &kb) == 1) {
            cur->hugetlb = kb == 2048;
        } else if (cur && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
            cur->thp_kb = kb;
        }
    }
    fclose(f);
    *out = v;
    *n = nv;
    return 0;
}

/* ---- this process, live (never under the root) ---- */
/* fields 3 (the state letter), 20 (the thread count) and 39 (the CPU it last ran on) of
 * /proc/self/task/TID/stat */
static int task_stat(long tid, char *state, long *threads, long *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p || p[1] != ' ')
        return -1;
    *state = p[2];
    *threads = *cpu = -1;
    for (int field = 2; p && field < 39; field++) { /* p: the space before field + 1 */
        p = strchr(p + 1, ' ');
        if (p && field + 1 == 20)
            *threads = strtol(p + 1, NULL, 10);
        if (p && field + 1 == 39)
            *cpu = strtol(p + 1, NULL, 10);
    }
    return 0;
}

int npl__task_cpu(long tid)
{
    char st;
    long n, cpu;
    return task_stat(tid, &st, &n, &cpu) == 0 && cpu >= 0 && cpu <= INT_MAX ? (int)cpu : -1;
}

/* 1 when the calling thread is the only one left alive (a main thread that called pthread_exit stays a
 * zombie, counted, until the whole process ends) */
int npl__proc_alone(void)
{
    char st, lst;
    long n, ln, cpu;
    if (task_stat(syscall(SYS_gettid), &st, &n, &cpu) < 0)
        return 0;
    return n == 1 || (n == 2 && task_stat(getpid(), &lst, &ln, &cpu) == 0 && lst == 'Z');
}
