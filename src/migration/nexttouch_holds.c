/* SPDX-License-Identifier: BSD-3-Clause */
/* nexttouch_holds.c - the buffers that system calls into registered ranges hold
 * (npl__next_touch_hold, under nexttouch.c's lock): an arm leaves their chunks accessible; holds
 * that found no free entry (while any is left, an arm protects nothing); and the span every range
 * ever registered lies in (a buffer outside it costs two compares). */
#include "migration/nexttouch.h"

static struct { char *lo, *hi; } held[NPL_NT_HELD];
static int held_overflow;
static _Atomic uintptr_t span_lo = UINTPTR_MAX, span_hi;

int npl__nt_holds_add(char *lo, char *hi)
{
    int t = -1;
    for (int i = 0; i < NPL_NT_HELD && t < 0; i++)
        if (!held[i].lo)
            held[i].lo = lo, held[i].hi = hi, t = i;
    if (t < 0)
        held_overflow++, t = NPL_NT_HELD;
    return t;
}

void npl__nt_holds_remove(int token)
{
    if (token == NPL_NT_HELD)
        held_overflow--;
    else
        held[token].lo = held[token].hi = NULL;
}

void npl__nt_holds_forget(void)
{
    for (int i = 0; i < NPL_NT_HELD; i++)
        held[i].lo = held[i].hi = NULL;
    held_overflow = 0;
}

void npl__nt_span_widen(const void *addr, size_t len)
{
    npl__span_widen(&span_lo, &span_hi, (uintptr_t)addr, (uintptr_t)addr + len);
}

int npl__nt_in_span(uintptr_t lo, uintptr_t hi)
{
    return hi > atomic_load(&span_lo) && lo < atomic_load(&span_hi);
}

/* Locked: mark DONE the chunks of s that a held buffer overlaps (all of them while a hold found
 * no entry), first marking every chunk ARMED when `all` (a whole-range arm). 1 if any chunk was
 * left out, 0 (nothing changed) if no buffer is held there. */
int npl__nt_leave_held_out(struct slot *s, int all)
{
    char *end = s->base + s->len;
    int any = held_overflow > 0;
    for (int i = 0; i < NPL_NT_HELD && !any; i++)
        any = held[i].lo && held[i].lo < end && s->base < held[i].hi;
    if (!any)
        return 0;
    for (size_t c = 0; all && c < s->nchunks; c++)
        atomic_store(&s->state[c], ARMED);
    for (int i = 0; i <= NPL_NT_HELD; i++) { /* NPL_NT_HELD: the overflow, the whole range */
        char *lo = i == NPL_NT_HELD ? (held_overflow ? s->base : NULL) : held[i].lo;
        char *hi = i == NPL_NT_HELD ? end : held[i].hi;
        if (!lo || lo >= end || hi <= s->base)
            continue;
        size_t c0 = (size_t)((lo > s->base ? lo : s->base) - s->base) / s->chunk;
        size_t c1 = (size_t)((hi < end ? hi : end) - 1 - s->base) / s->chunk;
        for (size_t c = c0; c <= c1; c++)
            atomic_store(&s->state[c], DONE);
    }
    return 1;
}

