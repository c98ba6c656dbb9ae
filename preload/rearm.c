/* SPDX-License-Identifier: BSD-3-Clause */
/* rearm.c - the transparent next-touch mode's re-arm rule (`numaplace run --next-touch`), a
 * subscriber of the region-entry hook (regions.c). It owns no allocation: alloc.c and statics.c
 * register the program's large blocks and static data for next-touch; this file decides, at
 * parallel region entries, which of the registered ranges to arm, and how. docs/NEXT_TOUCH.md
 * explains the rule; in short, per range:
 *
 *  - Only outermost regions (level 1) count; a region's code address is "new" at its first entry.
 *  - Arming protects only the chunks that have a page in memory: a chunk with none gains nothing
 *    over a first touch under the MPOL_LOCAL policy that every arm sets on the whole range.
 *  - First arm (the first new region at which the range has pages): a full arm when the pages
 *    were put there by a policy (`--policy`), or when a first touch left them on one node (a
 *    serial initialization); otherwise (a parallel first touch spread them, or the process has
 *    one usable memory node, where no page can move, unless NUMAPLACE_NEXT_TOUCH_FULL=1) a
 *    sample arm.
 *  - ACTIVE ranges get a full arm at each new region. After K_OFF full arm(s) in a row that moved
 *    fewer than 1/X_OFF of the pages touched, the range backs off (PROBING).
 *  - PROBING ranges get a sample arm (SAMPLES chunks in one run at a pseudo-random place,
 *    another place each time) at the region entry where they back off (or are first seen), then
 *    2, 8, 32, ... (x GAP_GROWTH, at most MAX_GAP) entries of any region later while samples find
 *    nothing to move. A sample whose touched pages moved at least 1/X_ON (hysteresis: X_ON < X_OFF)
 *    makes the range ACTIVE again, and the region at which it was taken gets a full arm at its
 *    next entry (its owners differ from where the pages are).
 *  - A range with a profile (npl__rearm_set_regions) is armed fully at exactly the entries of its
 *    listed regions that follow an entry of another region, and the online rule leaves it alone.
 * Pages do not ping-pong: outside a profile, a range gets a full arm only at a new region or once
 * after each positive sample, and samples get rarer while they find nothing; a range that
 * follows an A/B alternation is re-armed once, not at every phase. The counters are printed at
 * exit under `run --verbose/--json`. */
#define _GNU_SOURCE
#include "base/base.h"
#include "migration/migration.h"

#include "env.h"
#include "preload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/migrate.h"

#define K_OFF 2       /* full arms in a row that moved little before a range backs off */
#define X_OFF 32      /* "little": fewer than 1/32 of the touched pages moved */
#define X_ON 4        /* a sample re-enables the range when >= 1/4 of its touched pages moved */
#define SAMPLES 8     /* chunks in a sample arm (about) */
#define FIRST_GAP 2   /* region entries between the first two samples of a range, */
#define GAP_GROWTH 4  /* times this after each sample that found nothing, */
#define MAX_GAP 1024  /* at most this */
#define CONCENTRATED 8 /* first arm: >= 7/8 of the present pages on one node = serial init */

enum { NEW = 0, ACTIVE, PROBING };

struct rstate {
    uint64_t id;          /* the library's registration id (0: free entry) */
    int mode, low;
    int judge;            /* our last arm's outcome is still to be judged */
    int local_set;        /* MPOL_LOCAL set while NEW with nothing in memory */
    const void *last_code;  /* region of our last arm of it */
    const void *promote;  /* a positive sample at this region: full arm at its next entry */
    unsigned probes;      /* samples taken (each starts at another chunk) */
    uint64_t gap, due;    /* PROBING: entries between samples; the entry (seq) of the next one */
    uint64_t sampled_at;  /* the entry of the last sample */
    const void **profile; /* run --profile: exactly these regions */
    int nprofile;
};

static struct rstate st[256];
static pthread_mutex_t rule_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int pending;         /* ranges with a promotion or a profile: every entry counts */
static _Atomic uint64_t next_due = UINT64_MAX; /* the first entry at which a range samples */
static uint64_t entry_seq;          /* the entry being decided (reg->seq) */
static const void *last_region;     /* the last outermost region entered */
static int no_move;                 /* one usable memory node (and not NUMAPLACE_NEXT_TOUCH_FULL=1):
                                     * no page can move, a full arm only costs (a fault a chunk) */
static struct {
    uint64_t full, sample, backoffs, reenabled;
} stats;

static struct rstate *state_of(uint64_t id, int create)
{
    struct rstate *free_slot = NULL;
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        if (st[i].id == id)
            return &st[i];
        if (!st[i].id && !free_slot)
            free_slot = &st[i];
    }
    if (!create || !free_slot)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->id = id;
    return free_slot;
}

/* entries whose range is gone (freed, dropped) are freed: ids are never reused */
static void forget_gone(const struct npl__nt_range *r, int n)
{
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        if (!st[i].id)
            continue;
        int alive = 0;
        for (int k = 0; k < n && !alive; k++)
            alive = r[k].id == st[i].id;
        if (!alive) {
                if (st[i].promote || st[i].nprofile)
                atomic_fetch_sub(&pending, 1);
            free(st[i].profile);
            memset(&st[i], 0, sizeof st[i]);
        }
    }
}

static void set_promote(struct rstate *s, const void *code)
{
    if (!s->promote && !s->nprofile && code)
        atomic_fetch_add(&pending, 1);
    s->promote = code;
}
static void clear_promote(struct rstate *s)
{
    if (s->promote && !s->nprofile)
        atomic_fetch_sub(&pending, 1);
    s->promote = NULL;
}

/* What our last arm of the range taught, once it was touched. 0, or 1 when that arm is still
 * untouched (the range stays armed as it is: arming it again would only cost). */
static int digest(struct rstate *s, const struct npl__nt_range *r)
{
    if (!s->judge)
        return 0;
    if (r->got_pages == 0)
        return r->armed_pages > 0; /* armed and untouched since */
    s->judge = 0;
    if (r->sampled) {
        if (r->got_moved * X_ON >= r->got_pages) {
            s->mode = ACTIVE;
            s->low = 0;
            set_promote(s, s->last_code);
            stats.reenabled++;
        } else {
            s->gap = s->gap * GAP_GROWTH < MAX_GAP ? s->gap * GAP_GROWTH : MAX_GAP;
            s->due = s->sampled_at + s->gap; /* nothing changed: sample less often */
        }
    } else if (r->got_moved * X_OFF < r->got_pages) {
        if (++s->low >= K_OFF && s->mode == ACTIVE) {
            s->mode = PROBING;
            s->gap = FIRST_GAP;
            s->due = entry_seq;
            stats.backoffs++;
        }
    } else {
        s->low = 0;
    }
    return 0;
}

static void arm(struct rstate *s, const struct npl__nt_range *r, const void *code, int sample)
{
    int rc = npl__next_touch_rearm_range(r->id, 1, sample ? SAMPLES : 0, s->probes++);
    if (rc < 0) {
        npl__debug("next-touch: cannot arm %p+%zu: %s", r->base, r->len, npl_last_error());
        return;
    }
    s->last_code = code;
    s->judge = rc == 0;
    if (sample) {
        s->sampled_at = entry_seq;
        s->due = entry_seq + s->gap;
    }
    if (rc == 0)
        ++*(sample ? &stats.sample : &stats.full);
}

/* a NEW range at a new region: how its pages came to be where they are decides the first arm */
static void first_arm(struct rstate *s, const struct npl__nt_range *r, const void *code)
{
    unsigned present = 0, on_top = 0;
    if (npl__next_touch_where(r->id, 256, &present, &on_top) != 0)
        return;
    if (!present) { /* nothing in memory: MPOL_LOCAL once, and first touch does the rest */
        if (!s->local_set && npl__next_touch_rearm_range(r->id, 1, 0, 0) == 0)
            s->local_set = 1;
        return;
    }
    int placed = npl__preload.pol && npl_policy_get_kind(npl__preload.pol) != NPL_FIRST_TOUCH;
    int serial = on_top * CONCENTRATED >= present * (CONCENTRATED - 1);
    s->mode = (placed || serial) && !no_move ? ACTIVE : PROBING;
    s->gap = FIRST_GAP;
    npl__debug("next-touch: %p+%zu first seen with pages (%u of %u sampled on one node%s%s): %s",
               r->base, r->len, on_top, present, placed ? ", placed by the policy" : "",
               no_move ? ", the only usable node" : "",
               s->mode == ACTIVE ? "full arm" : "sample arm");
    arm(s, r, code, s->mode == PROBING);
}

static int listed(const struct rstate *s, const void *code)
{
    for (int i = 0; i < s->nprofile; i++)
        if (s->profile[i] == code)
            return 1;
    return 0;
}

static void on_region(const struct npl__region *reg, void *arg)
{
    (void)arg;
    if (reg->level != 1)
        return;
    int is_new = reg->count == 1;
    if (!is_new && !atomic_load(&pending) && reg->seq < atomic_load(&next_due)) {
        __atomic_store_n(&last_region, reg->code, __ATOMIC_RELAXED); /* a solver's iteration */
        return;
    }
    static struct npl__nt_range r[256];
    pthread_mutex_lock(&rule_lock);
    const void *prev = last_region;
    last_region = reg->code;
    entry_seq = reg->seq;
    int n = npl__next_touch_ranges(r, 256);
    forget_gone(r, n);
    uint64_t due = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        struct rstate *s = state_of(r[i].id, 1);
        if (!s)
            continue;
        int untouched = digest(s, &r[i]);
        if (s->nprofile) { /* run --profile: exactly its regions, at phase boundaries */
            if (prev != reg->code && listed(s, reg->code))
                arm(s, &r[i], reg->code, 0);
        } else if (s->promote == reg->code) {
            clear_promote(s);
            arm(s, &r[i], reg->code, 0);
        } else if (untouched) { /* still armed as it was: nothing to learn yet */
            if (s->mode == PROBING && s->due <= reg->seq)
                s->due = reg->seq + s->gap;
        } else if (s->mode == NEW && is_new) {
            first_arm(s, &r[i], reg->code);
        } else if (s->mode == ACTIVE && is_new) {
            arm(s, &r[i], reg->code, 0);
        } else if (s->mode == PROBING && reg->seq >= s->due) {
            arm(s, &r[i], reg->code, 1);
        }
        if (s->mode == PROBING && !s->nprofile) { /* the next entry that must decide */
            uint64_t at = s->judge && !untouched ? reg->seq + 1 : s->due; /* a sample's verdict */
            due = at < due ? at : due;
        }
    }
    atomic_store(&next_due, due);
    pthread_mutex_unlock(&rule_lock);
}

int npl__rearm_set_regions(const void *base, const void *const *codes, int n)
{
    static struct npl__nt_range r[256];
    int rc = -1;
    pthread_mutex_lock(&rule_lock);
    int k = npl__next_touch_ranges(r, 256);
    for (int i = 0; i < k && rc < 0; i++) {
        if (r[i].base != base)
            continue;
        struct rstate *s = state_of(r[i].id, 1);
        const void **copy = n > 0 ? malloc((size_t)n * sizeof *copy) : NULL;
        if (!s || (n > 0 && !copy)) {
            free(copy);
            break;
        }
        if (n > 0)
            memcpy(copy, codes, (size_t)n * sizeof *copy);
        int had = s->promote || s->nprofile;
        free(s->profile);
        s->profile = copy;
        s->nprofile = n > 0 ? n : 0;
        s->promote = NULL;
        int has = s->nprofile > 0;
        if (had != has)
            atomic_fetch_add(&pending, has ? 1 : -1);
        rc = 0;
    }
    pthread_mutex_unlock(&rule_lock);
    return rc;
}

void npl__rearm_init(void)
{
    const char *e = getenv(NPL_ENV_NEXT_TOUCH_FULL);
    const npl_topo *t = npl_topo_self(); /* loaded: the interposer is active */
    no_move = !(e && !strcmp(e, "1")) && t && npl_topo_node_count(t, 0) == 1;
    if (npl__regions_subscribe(on_region, NULL, NPL__REGION_BEGIN) < 0)
        npl__debug("next-touch: cannot subscribe to region entries");
}

/* run --verbose / --json: what the rule did, once at exit (allocates nothing) */
__attribute__((destructor)) static void tell_summary(void)
{
    if (!npl__preload_next_touch() || !npl__preload.verbose)
        return;
    struct npl__regions_stats rs;
    struct npl_next_touch_stats nt = {0};
    npl__regions_stats(&rs);
    npl_next_touch_get_stats(&nt);
    const char *src = rs.sources == (1 << NPL__REGION_GOMP) ? "libgomp"
                      : rs.sources == (1 << NPL__REGION_OMPT) ? "ompt"
                      : rs.sources ? "libgomp+ompt" : "none";
    int nranges = 0;
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        nranges += st[i].id != 0;
    char buf[500];
    int len;
    if (npl__preload.verbose == 2)
        len = snprintf(buf, sizeof buf, "{\"event\": \"next_touch\", \"regions\": %llu, "
                       "\"distinct_regions\": %llu, \"region_source\": \"%s\", \"ranges\": %d, "
                       "\"full_arms\": %llu, \"sample_arms\": %llu, \"backoffs\": %llu, "
                       "\"reenabled\": %llu, \"faults\": %llu, \"pages_moved\": %llu}\n",
                       (unsigned long long)rs.entries, (unsigned long long)rs.distinct, src,
                       nranges, (unsigned long long)stats.full, (unsigned long long)stats.sample,
                       (unsigned long long)stats.backoffs, (unsigned long long)stats.reenabled,
                       (unsigned long long)nt.faults, (unsigned long long)nt.pages_moved);
    else
        len = snprintf(buf, sizeof buf, "numaplace run: next-touch: %llu parallel regions "
                       "(%llu distinct, seen through %s), %llu full and %llu sample arms of %d "
                       "ranges, %llu backed off, %llu re-enabled; %llu faults, %llu pages moved\n",
                       (unsigned long long)rs.entries, (unsigned long long)rs.distinct, src,
                       (unsigned long long)stats.full, (unsigned long long)stats.sample, nranges,
                       (unsigned long long)stats.backoffs, (unsigned long long)stats.reenabled,
                       (unsigned long long)nt.faults, (unsigned long long)nt.pages_moved);
    npl__preload_say("%s%s", len > 0 ? buf : "", "");
}
