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
    FILE *f = fopen("/proc/self/smaps", "re");
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

int npl_histogram_huge(const void *addr, size_t len, size_t *huge, size_t *base, size_t *absent)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return -1;
    if (!addr || len == 0 || !huge || !base)
        return npl__fail(EINVAL, "empty range or NULL counts");
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(psz - 1);
    if ((uintptr_t)addr + len < (uintptr_t)addr || len / psz >= INT32_MAX)
        return npl__fail(EOVERFLOW, "range wraps around the address space or is too large");
    uintptr_t hi = ((uintptr_t)addr + len + psz - 1) & ~(uintptr_t)(psz - 1);
    size_t npages = (hi - lo) / psz, per_huge = HUGE_2M / psz;
    int nn = npl_topo_node_count(t, 1);
    memset(huge, 0, (size_t)nn * sizeof *huge);
    memset(base, 0, (size_t)nn * sizeof *base);
    if (absent)
        *absent = 0;
    int *node = malloc(npages * sizeof *node);
    uint64_t *pm = malloc(npages * sizeof *pm);
    char *done = calloc(npages, 1);
    struct vma *v = NULL;
    int nv = 0, rc = -1, unknown = 0;
    if (!node || !pm || !done) {
        npl__fail(ENOMEM, "out of memory");
        goto out;
    }
    if (npl_query_pages((void *)lo, hi - lo, node, npages) < 0 || read_vmas(lo, hi, &v, &nv) < 0)
        goto out;
    /* page frames: all zero without CAP_SYS_ADMIN */
    int pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    int kfd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
    int have_pfn = 0;
    size_t pm_bytes = npages * sizeof *pm;
    memset(pm, 0, pm_bytes);
    if (pfd >= 0 && pread(pfd, pm, pm_bytes, (off_t)(lo / psz * sizeof *pm)) == (ssize_t)pm_bytes)
        for (size_t i = 0; i < npages && !have_pfn; i++)
            have_pfn = (pm[i] & PM_PRESENT) && (pm[i] & PM_PFN_MASK);
    if (pfd >= 0)
        close(pfd);
    /* 2 MiB units wholly inside the range */
    uintptr_t first = (lo + HUGE_2M - 1) & ~(HUGE_2M - 1);
    for (uintptr_t u = first; u + HUGE_2M <= hi; u += HUGE_2M) {
        size_t i0 = (u - lo) / psz;
        const struct vma *m = vma_of(v, nv, u);
        if (!m || node[i0] < 0)
            continue;
        int is_huge = m->hugetlb;
        if (!is_huge && m->thp_kb > 0 && have_pfn && kfd >= 0 && (pm[i0] & PM_PRESENT)) {
            uint64_t fl = 0, pfn = pm[i0] & PM_PFN_MASK;
            if (pread(kfd, &fl, sizeof fl, (off_t)(pfn * sizeof fl)) == (ssize_t)sizeof fl &&
                (fl >> KPF_THP_BIT) & 1) {
                /* a THP: its frames are contiguous; any break means it was split */
                is_huge = 1;
                for (size_t k = 1; k < per_huge && is_huge; k++)
                    is_huge = (pm[i0 + k] & PM_PRESENT) &&
                              (pm[i0 + k] & PM_PFN_MASK) == pfn + k && node[i0 + k] == node[i0];
            }
        }
        if (!is_huge)
            continue;
        int idx = npl_topo_node_index(t, node[i0]);
        if (idx >= 0)
            huge[idx]++;
        memset(done + i0, 1, per_huge);
    }
    for (size_t i = 0; i < npages; i++) {
        if (done[i])
            continue;
        const struct vma *m = vma_of(v, nv, lo + i * psz);
        if (m && m->thp_kb > 0 && !have_pfn)
            unknown = 1;
        if (node[i] < 0) {
            if (absent)
                ++*absent;
            continue;
        }
        int idx = npl_topo_node_index(t, node[i]);
        if (idx >= 0)
            base[idx]++;
    }
    rc = unknown;
    if (kfd >= 0)
        close(kfd);
out:
    free(node);
    free(pm);
    free(done);
    free(v);
    return rc;
}
