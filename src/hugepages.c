/* hugepages.c - what a range really got: 2 MiB pages (hugetlb or transparent) or base pages,
 * per node.
 *
 * Nodes come from move_pages (npl_query_pages: any 4 KiB address inside a huge page gives the
 * huge page's node). Page sizes come from /proc/self/smaps (a hugetlb mapping says
 * "KernelPageSize: 2048 kB"; "AnonHugePages" counts a mapping's THP) and, for transparent huge
 * pages, from /proc/self/pagemap (the frame of a page) and /proc/kpageflags (KPF_THP), which need
 * CAP_SYS_ADMIN: without it the frames read as 0, THP cannot be located, and their base pages are
 * counted as base pages (the function then returns 1). */
#define _GNU_SOURCE
#include "internal.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUGE_2M ((uintptr_t)2 << 20)
#define KPF_THP_BIT 22
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)

struct vma {
    uintptr_t start, end;
    int hugetlb;
    long thp_kb;
};

/* Mappings of /proc/self/smaps overlapping [lo, hi). */
static int read_vmas(uintptr_t lo, uintptr_t hi, struct vma **out, int *n)
{
    FILE *f = npl__fs_open("/proc/self/smaps");
    if (!f)
        return npl__fail(errno, "cannot read /proc/self/smaps");
    struct vma *v = NULL, *cur = NULL;
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
            struct vma *nvp = realloc(v, (size_t)(nv + 1) * sizeof *v);
            if (!nvp) {
                free(v);
                fclose(f);
                return npl__fail(ENOMEM, "out of memory");
            }
            v = nvp;
            cur = &v[nv++];
            *cur = (struct vma){s, e, 0, 0};
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

static const struct vma *vma_of(const struct vma *v, int n, uintptr_t a)
{
    for (int i = 0; i < n; i++)
        if (a >= v[i].start && a < v[i].end)
            return &v[i];
    return NULL;
}

/* The page frames of [lo, lo + n pages) from /proc/self/pagemap: 1 if any frame number is
 * readable (CAP_SYS_ADMIN; otherwise the kernel reports them as 0), else 0 (pm zeroed). */
static int read_frames(uintptr_t lo, size_t n, size_t psz, uint64_t *pm)
{
    int have = 0, fd = npl__fs_open_fd("/proc/self/pagemap", O_RDONLY);
    size_t bytes = n * sizeof *pm;
    memset(pm, 0, bytes);
    if (fd >= 0 && pread(fd, pm, bytes, (off_t)(lo / psz * sizeof *pm)) == (ssize_t)bytes)
        for (size_t i = 0; i < n && !have; i++)
            have = (pm[i] & PM_PRESENT) && (pm[i] & PM_PFN_MASK);
    if (fd >= 0)
        close(fd);
    return have;
}

/* Is the 2 MiB unit starting at page i0 one transparent huge page? Its first frame is a THP
 * (kpageflags) and the frames of all its base pages are contiguous and on one node. */
static int is_thp(int kfd, const uint64_t *pm, const int *node, size_t i0, size_t per_huge)
{
    uint64_t fl = 0, pfn = pm[i0] & PM_PFN_MASK;
    if (kfd < 0 || !(pm[i0] & PM_PRESENT) ||
        pread(kfd, &fl, sizeof fl, (off_t)(pfn * sizeof fl)) != (ssize_t)sizeof fl ||
        !((fl >> KPF_THP_BIT) & 1))
        return 0;
    for (size_t k = 1; k < per_huge; k++) /* any break means it was split */
        if (!(pm[i0 + k] & PM_PRESENT) || (pm[i0 + k] & PM_PFN_MASK) != pfn + k ||
            node[i0 + k] != node[i0])
            return 0;
    return 1;
}

struct huge_scan {
    uintptr_t lo, hi;
    size_t psz, npages;
    int *node;       /* node of each base page (or -errno) */
    uint64_t *pm;    /* pagemap entries */
    char *done;      /* base pages counted inside a huge page */
    struct vma *v;
    int nv, have_pfn, max_node;
};

/* 2 MiB units wholly inside the range: hugetlb pages and located THP count as huge. */
static void count_huge(struct huge_scan *h, size_t *huge)
{
    size_t per_huge = HUGE_2M / h->psz;
    int kfd = h->have_pfn ? npl__fs_open_fd("/proc/kpageflags", O_RDONLY) : -1;
    for (uintptr_t u = (h->lo + HUGE_2M - 1) & ~(HUGE_2M - 1); u + HUGE_2M <= h->hi; u += HUGE_2M) {
        size_t i0 = (u - h->lo) / h->psz;
        const struct vma *m = vma_of(h->v, h->nv, u);
        if (!m || h->node[i0] < 0 || h->node[i0] > h->max_node)
            continue;
        if (!m->hugetlb && !(m->thp_kb > 0 && is_thp(kfd, h->pm, h->node, i0, per_huge)))
            continue;
        huge[h->node[i0]]++;
        memset(h->done + i0, 1, per_huge);
    }
    if (kfd >= 0)
        close(kfd);
}

static void count_base(const struct huge_scan *h, size_t *base, size_t *absent)
{
    for (size_t i = 0; i < h->npages; i++) {
        if (h->done[i])
            continue;
        if (h->node[i] < 0) {
            if (absent)
                ++*absent;
        } else if (h->node[i] <= h->max_node) {
            base[h->node[i]]++;
        }
    }
}

int npl_histogram_huge(const void *addr, size_t len, size_t *huge, size_t *base, size_t *absent)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    if (!addr || len == 0 || !huge || !base)
        return npl__fail(EINVAL, "empty range or NULL counts");
    struct huge_scan h = {.psz = (size_t)sysconf(_SC_PAGESIZE), .max_node = npl_topo_max_node_id(t)};
    h.lo = (uintptr_t)addr & ~(uintptr_t)(h.psz - 1);
    if ((uintptr_t)addr + len < (uintptr_t)addr || len / h.psz >= INT32_MAX)
        return npl__fail(EOVERFLOW, "range wraps around the address space or is too large");
    h.hi = ((uintptr_t)addr + len + h.psz - 1) & ~(uintptr_t)(h.psz - 1);
    h.npages = (h.hi - h.lo) / h.psz;
    memset(huge, 0, (size_t)(h.max_node + 1) * sizeof *huge);
    memset(base, 0, (size_t)(h.max_node + 1) * sizeof *base);
    if (absent)
        *absent = 0;
    h.node = malloc(h.npages * sizeof *h.node);
    h.pm = malloc(h.npages * sizeof *h.pm);
    h.done = calloc(h.npages, 1);
    int rc = -1;
    if (!h.node || !h.pm || !h.done)
        npl__fail(ENOMEM, "out of memory");
    else if (npl_query_pages((void *)h.lo, h.hi - h.lo, h.node, h.npages) >= 0 &&
             read_vmas(h.lo, h.hi, &h.v, &h.nv) == 0) {
        h.have_pfn = read_frames(h.lo, h.npages, h.psz, h.pm);
        count_huge(&h, huge);
        count_base(&h, base, absent);
        rc = 0;
    }
    free(h.node);
    free(h.pm);
    free(h.done);
    free(h.v);
    return rc;
}

int npl__can_locate_thp(void)
{
    static char probe[1] = {1};
    uint64_t pm = 0;
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    probe[0] = 1; /* present */
    int ok = read_frames((uintptr_t)probe & ~(uintptr_t)(psz - 1), 1, psz, &pm) &&
             npl__fs_access("/proc/kpageflags", R_OK) == 0;
    return ok;
}
