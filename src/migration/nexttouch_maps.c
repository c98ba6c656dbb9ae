/* SPDX-License-Identifier: BSD-3-Clause */
/* nexttouch_maps.c - what a next-touch range's memory is (/proc/self/maps and smaps, through
 * sys/): its one protection and mapping kind when it is registered, whether it is still that
 * mapping when it is armed again, and its page size (hugetlb: the chunk is whole huge pages). */
#define _GNU_SOURCE
#include "migration/nexttouch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- is the slot's memory still the mapping it recorded? ---- */
struct verify_ctx {
    struct slot *s;
    uintptr_t cur;
};

static int verify_step(uintptr_t lo, uintptr_t hi, const struct npl_maps_entry *m, void *arg)
{
    struct verify_ctx *v = arg;
    struct slot *s = v->s;
    if (lo != v->cur)
        return 1; /* a hole: unmapped */
    v->cur = hi;
    if (m->inode != s->inode || m->dev_major != s->dev_major || m->dev_minor != s->dev_minor ||
        m->shared != s->shared)
        return 1; /* another mapping */
    if (m->inode && m->offset - (uint64_t)(m->start - (uintptr_t)s->base) != s->file_off)
        return 1; /* the same file, other pages */
    if (m->prot != PROT_NONE && m->prot != s->prot)
        return 1; /* mprotect'ed by someone else, or a new mapping */
    size_t c0 = (lo - (uintptr_t)s->base) / s->chunk;
    size_t c1 = (hi - 1 - (uintptr_t)s->base) / s->chunk;
    for (size_t c = c0; c <= c1 && c < s->nchunks; c++) {
        int st = atomic_load(&s->state[c]);
        if (m->prot == PROT_NONE ? st == DONE && s->prot != PROT_NONE : st == ARMED)
            return 1; /* armed but accessible, or resolved but protected: not what we left */
    }
    return 0;
}

/* 1 if the slot's memory is still the mapping we armed (call quiesced: no chunk BUSY) */
int npl__nt_still_ours(struct slot *s)
{
    struct verify_ctx v = {s, (uintptr_t)s->base};
    int rc = npl__maps_ranges((uintptr_t)s->base, (uintptr_t)s->base + s->len, verify_step, &v);
    if (rc < 0)
        return 1; /* cannot tell (no /proc): trust the table, as before */
    return rc == 0 && v.cur == (uintptr_t)s->base + s->len;
}

static size_t mapping_page_size(const void *addr)
{
    size_t ps = npl__page_size();
    FILE *f = npl__fs_open("/proc/self/smaps");
    if (!f)
        return ps;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int in = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        struct npl_maps_entry e;
        unsigned long kb;
        if (line[n - 1] == '\n')
            line[--n] = 0;
        if (npl__maps_parse_line(line, (size_t)n, &e) == 0)
            in = (uintptr_t)addr >= e.start && (uintptr_t)addr < e.end;
        else if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
            if (kb > 0 && kb <= SIZE_MAX / 1024)
                ps = kb * 1024;
            break;
        }
    }
    free(line);
    fclose(f);
    return ps;
}

/* ---- what a new range is: one protection, one mapping kind ---- */
struct probe_ctx {
    uintptr_t cur;
    int n, prot, shared, bad;
    uint64_t inode, file_off;
    unsigned dev_major, dev_minor;
    uintptr_t base;
};

static int probe_step(uintptr_t lo, uintptr_t hi, const struct npl_maps_entry *m, void *arg)
{
    struct probe_ctx *p = arg;
    if (lo != p->cur)
        return 1; /* hole: npl__range_check reported it already; cannot happen here */
    p->cur = hi;
    uint64_t off = m->offset - (uint64_t)(m->start - p->base);
    if (p->n++ == 0) {
        p->prot = m->prot;
        p->shared = m->shared;
        p->inode = m->inode;
        p->dev_major = m->dev_major;
        p->dev_minor = m->dev_minor;
        p->file_off = off;
        return 0;
    }
    if (m->prot != p->prot) {
        p->bad = 1;
        return 2;
    }
    if (m->shared != p->shared || m->inode != p->inode || m->dev_major != p->dev_major ||
        m->dev_minor != p->dev_minor || (m->inode && off != p->file_off)) {
        p->bad = 2;
        return 2;
    }
    return 0;
}

/* fill s's protection and identity from the maps; 0 or -1 (error set) */
int npl__nt_probe(struct slot *s, void *addr, size_t len)
{
    struct probe_ctx p = {.cur = (uintptr_t)addr, .base = (uintptr_t)addr};
    int rc = npl__maps_ranges((uintptr_t)addr, (uintptr_t)addr + len, probe_step, &p);
    if (rc < 0) { /* no /proc here: private read-write memory assumed, as before */
        npl__debug("next-touch: /proc/self/maps unreadable (%s): %p+%zu taken as rw-p",
                   strerror(errno), addr, len);
        s->shared = 0;
        s->prot = PROT_READ | PROT_WRITE;
        s->inode = s->file_off = 0;
        s->dev_major = s->dev_minor = 0;
        s->populate = MADV_POPULATE_WRITE;
        return 0;
    }
    if (npl__range_check(addr, len, 0) < 0) /* holes, pages beyond the end of a file */
        return -1;
    if (rc == 1 || p.n == 0 || p.cur != (uintptr_t)addr + len)
        return npl__fail(EFAULT, "%p+%zu is not entirely mapped", addr, len);
    if (p.bad == 1)
        return npl__fail(EINVAL, "%p+%zu has mixed protections: next-touch restores one "
                                 "protection, arm each part separately", addr, len);
    if (p.bad == 2)
        return npl__fail(EINVAL, "%p+%zu spans several mappings of different kinds or files: "
                                 "arm each separately", addr, len);
    if (p.prot == PROT_NONE)
        return npl__fail(EACCES, "%p+%zu is PROT_NONE: nothing can touch it", addr, len);
    s->prot = p.prot;
    s->shared = p.shared;
    s->inode = p.inode;
    s->dev_major = p.dev_major;
    s->dev_minor = p.dev_minor;
    s->file_off = p.file_off;
    s->populate = !p.shared && !p.inode && (p.prot & PROT_WRITE) ? MADV_POPULATE_WRITE
                                                                : MADV_POPULATE_READ;
    return 0;
}

int npl__nt_normalize_range(void *addr, size_t *len, size_t *chunk, size_t *page)
{
    size_t ps = npl__page_size();
    if (!addr || *len == 0 || (uintptr_t)addr % ps)
        return npl__fail(EINVAL, "next-touch range %p+%zu: empty or not page-aligned", addr, *len);
    if ((uintptr_t)addr + *len < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "range wraps around the address space");
    if (!npl_get_support()->move_pages)
        return npl__fail(ENOSYS, "move_pages(2) is not available (ENOSYS/EPERM)");
    size_t mp = mapping_page_size(addr); /* hugetlb: the chunk is (a multiple of) the huge page */
    if (mp > ps) {
        if ((mp & (mp - 1)) || (uintptr_t)addr % mp)
            return npl__fail(EINVAL, "%p is not aligned to its %zu-byte pages", addr, mp);
        ps = mp;
    }
    if (*len > SIZE_MAX - (ps - 1) || (uintptr_t)addr + (*len + ps - 1) / ps * ps < (uintptr_t)addr)
        return npl__fail(EOVERFLOW, "next-touch range %p+%zu: rounded to pages, it wraps around",
                         addr, *len);
    *len = (*len + ps - 1) / ps * ps;
    size_t c = *chunk ? *chunk : NPL_NEXT_TOUCH_DEFAULT_CHUNK;
    if (c > SIZE_MAX - (ps - 1))
        return npl__fail(EOVERFLOW, "chunk of %zu bytes: rounded to pages, it overflows", c);
    c = (c + ps - 1) / ps * ps;
    if (c > *len)
        c = *len; /* one chunk: the whole range */
    while (*len / c + (*len % c != 0) > MAX_CHUNKS) {
        if (c > SIZE_MAX / 2)
            return npl__fail(EOVERFLOW, "chunk size overflows"); /* cannot happen: len < 2^64 */
        c *= 2;
    }
    *chunk = c;
    *page = ps;
    return 0;
}

