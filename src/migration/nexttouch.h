/* SPDX-License-Identifier: BSD-3-Clause */
/* migration/nexttouch.h - next-touch's own parts (not the layer's face, migration.h): a registered
 * range's slot, shared by nexttouch.c (arming and the fault path), nexttouch_maps.c (what a range's
 * mapping is) and nexttouch_holds.c (the buffers system calls hold). */
#ifndef NPL_MIGRATION_NEXTTOUCH_H
#define NPL_MIGRATION_NEXTTOUCH_H

#include "migration/migration.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* a slot's populate advice (Linux 5.14; older headers lack the names) */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { ARMED = 0, BUSY = 1, DONE = 2 };
#define MAX_CHUNKS (65536 / 4)

struct slot {
    _Atomic int active;
    _Atomic unsigned users;
    _Atomic unsigned seq; /* odd while the slot is being (re-)armed; even values never reused */
    _Atomic unsigned resolved; /* bumped when a chunk stops being BUSY (futex of its waiters) */
    _Atomic unsigned waiting;  /* handlers sleeping until an arm of the slot is over */
    char *base;
    size_t len, chunk, nchunks;
    size_t page; /* the mapping's page size: 4 KiB, or 2 MiB for hugetlb */
    int prot;    /* the protection found when the range was first armed/registered */
    int populate; /* MADV_POPULATE_WRITE (private anonymous writable) or _READ */
    /* the mapping it was: for file mappings, the file and the offset at base */
    int shared;
    uint64_t inode, file_off;
    unsigned dev_major, dev_minor;
    _Atomic unsigned char *state; /* mmap'ed, nchunks entries */
    /* for the transparent mode's re-arm rule (npl__next_touch_ranges): the registration's id,
     * its arms, and since the last arm the pages of the chunks resolved and those that changed
     * node */
    uint64_t id, arms, armed_pages;
    _Atomic uint64_t got_pages, got_moved;
    int last_sample; /* the last arm was a sample */
};


/* ---- nexttouch_maps.c: the mapping a range lies in ---- */
/* 1 if the slot's memory is still the mapping we armed (call quiesced: no chunk BUSY) */
int npl__nt_still_ours(struct slot *s);
/* fill s's protection and identity from the maps; 0 or -1 (error set) */
int npl__nt_probe(struct slot *s, void *addr, size_t len);
/* a new range's length, chunk and page size made whole (pages, hugetlb pages, at most
 * MAX_CHUNKS chunks): 0, or -1 through npl__fail */
int npl__nt_normalize_range(void *addr, size_t *len, size_t *chunk, size_t *page);

/* ---- nexttouch_holds.c: the buffers of system calls in flight (under nexttouch's lock) ---- */
#define NPL_NT_HELD 64 /* entries; the token NPL_NT_HELD: an overflow, the whole of every range */
int npl__nt_holds_add(char *lo, char *hi); /* the token */
void npl__nt_holds_remove(int token);
void npl__nt_holds_forget(void); /* a fork's child: the holds were other threads' */
/* Locked: mark DONE the chunks of s that a held buffer overlaps (all ARMED first when all): 1
 * when some were left out, 0 if no buffer is held there */
int npl__nt_leave_held_out(struct slot *s, int all);
/* the span every registered range lies in: widened by a registration, asked by a hold */
void npl__nt_span_widen(const void *addr, size_t len);
int npl__nt_in_span(uintptr_t lo, uintptr_t hi);

#endif
