/* SPDX-License-Identifier: BSD-3-Clause */
/* migration/migration.h - moving pages after placement (not installed): explicit migration of
 * ranges (migrate.c; the moving is the engine's pass, place/) and user-space
 * migrate-on-next-touch (nexttouch.c; its own parts in nexttouch.h: nexttouch_maps.c,
 * nexttouch_holds.c). Below it: query/, place/, plan/, topology/, sys/, base/. The array forms live in
 * arrays/. */
#ifndef NPL_MIGRATION_H
#define NPL_MIGRATION_H

#include "place/place.h"
#include "numaplace/migrate.h"

/* Partial work is an error: 0, or -1 with the errno of the first page that could not move. */
int npl__migrate_verdict(const struct npl_migrate_result *res);

/* Forget every next-touch range overlapping [addr, addr+len) without touching the memory's
 * protection: for memory about to be unmapped (npl_free). Never fails, never sets an error. */
void npl__next_touch_forget(void *addr, size_t len);
/* Disarm the range that starts at addr if there is one: 1 if it was armed or registered (its
 * protection restored), 0 if not. No error message, errno unchanged: for frees. */
int npl__next_touch_disarm_quiet(void *addr);

/* ---- system calls into registered ranges (the interposer's preload/io.c) ----
 * The kernel does not fault on PROT_NONE user memory: read(2) into an armed chunk returns EFAULT
 * or a short count, write(2) from one writes less. npl__next_touch_hold resolves the armed chunks
 * of a buffer a system call is about to use (the calling thread touches them, so they come to its
 * node) and keeps every arm from protecting them until npl__next_touch_release(its token). A
 * buffer that no registered range can overlap costs two compares. Returns a token, or -1 when
 * nothing was held (nothing to release); errno unchanged. */
int npl__next_touch_hold(const void *buf, size_t len);
void npl__next_touch_release(int token);
/* 1 when the page at `page` lies in a chunk armed (or being armed, or being resolved) for
 * next-touch: its protection is next-touch's. Async-signal-safe (the profiler's sampler asks it,
 * src/profile/sampler.c, given it by the interposer). */
int npl__next_touch_armed(const void *page);

/* ---- for the transparent next-touch mode's re-arm rule (preload/rearm.c) ---- */
/* A registered or armed range as the rule sees it. */
struct npl__nt_range {
    void *base;
    size_t len, chunk;
    uint64_t id;          /* new at each registration (a range freed and registered again is
                           * another) */
    uint64_t arms;        /* arms so far */
    int sampled;          /* the last arm protected a sample of its chunks */
    uint64_t armed_pages; /* pages of the chunks the last arm protected */
    uint64_t got_pages;   /* since the last arm: pages of the chunks resolved by a touch */
    uint64_t got_moved;   /*   of them, the pages that changed node */
};
/* the active ranges, at most max, into out; returns how many */
int npl__next_touch_ranges(struct npl__nt_range *out, int max);
/* Re-arm the range registered as id, MPOL_LOCAL over all of it but protecting only: with
 * present, the chunks that have a page in memory (private anonymous base-page ranges; other
 * chunks are left to a first touch under MPOL_LOCAL, which gives the same placement); with
 * sample > 0, about `sample` chunks in a few runs at pseudo-random places that `seed` varies.
 * 0, 1 (no range has that id any more: freed, or dropped because its memory changed) or -1
 * (error set). */
int npl__next_touch_rearm_range(uint64_t id, int present, size_t sample, unsigned seed);
/* Of `samples` pages (at most 256) spread evenly over range id: how many are in memory
 * (*present) and how many of those are on the node that holds the most (*on_top). 0, 1 (no such
 * range) or -1 (error set). */
int npl__next_touch_where(uint64_t id, unsigned samples, unsigned *present, unsigned *on_top);

#endif
