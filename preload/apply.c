/* SPDX-License-Identifier: BSD-3-Clause */
/* apply.c - `numaplace run --profile FILE` (NUMAPLACE_PROFILE_APPLY): each large block and each
 * static array gets the policy its profile advises, BEFORE its first touch, matched by its site
 * identity (src/profile/site.c), never by its address or its size.
 *
 *  - Heap blocks: the site of the allocation and its ordinal there. When the ordinal is past the
 *    ones the profile saw at that site (a loop that ran longer at another input size), the
 *    profile's last ordinal there decides. A block whose site the profile does not have gets the
 *    default (NUMAPLACE_POLICY, or first touch): the interposer allocates it as usual.
 *  - Static arrays: by the symbol's offset in its object (the profile's "offset"), placed before
 *    main. The rest of the writable segments is left as it is (or under NUMAPLACE_POLICY for
 *    the unmatched symbols of at least the threshold).
 *  - Shapes scale with the size: bind_block, cyclic, cyclic_block:K, bind_all, weighted are
 *    defined for any size; an explicit chunk map at another size takes the fallback stored with
 *    its advice (the best shape that holds at any size, or, for an array that followed its call
 *    site's map, the map scaled): no classifier runs in the program.
 *  - A policy the kernel can hold on an untouched range (bind_all, bind_block, cyclic, long
 *    blocks: place/place_lazy.c) is set lazily: no page is touched, the program's own first
 *    touch allocates each page on the node the policy names (in parallel where the program
 *    initialises in parallel) and a block reserved but partly used stays sparse. The others, an
 *    explicit map, a phase-changing array or any under --next-touch (next-touch moves present
 *    pages) and every block under `numaplace profile --profile` are populated by the engine.
 *  - Phase-changing arrays are registered for next-touch and armed exactly when a parallel
 *    region that the profile recorded among their next-touch phases begins (a subscriber of the
 *    region hook, regions.c: outermost region entries). Under `numaplace profile --profile`
 *    too: the sampler gives its pages there back before each arm and leaves the armed chunks to
 *    next-touch (npl__sampler_lend), so the advised placement is measured with its migrations.
 *  - The profile must be of this program (the command checks it before exec, exit 2); here a
 *    mismatch only stops the profile from being applied, with one line on stderr.
 * Under NUMAPLACE_VERBOSE each matched or unmatched block is one line on stderr, and at the end
 * one line gives how many of the profile's arrays (and bytes) were matched again. */
#define _GNU_SOURCE
#include "defaults/defaults.h"
#include "migration/migration.h"
#include "plan/plan.h"
#include "profile/profile.h"
#include "env.h"
#include "preload.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/migrate.h"

struct entry {
    const struct npl_prof_array *a;
    uint64_t object_hash;
    npl_policy *pol;            /* NULL: explicit map, or left to first touch */
    int explicit_map;
    npl_policy *scaled;         /* explicit map: its stored fallback at another size, the best
                                 * shape that holds at any size (NULL: first touch) */
    int scale_map;              /* ... or the map scaled (npl__advice_elsewhere) */
    uint64_t *nt_chunk;         /* next-touch chunk at each of its next_touch phases (0: the
                                 * default; npl__next_touch_chunk) */
    uint64_t matched_bytes;     /* allocated under it in this run */
    unsigned matched;
    int map_failed;             /* its map could not be applied here, said once */
    int not_here;               /* its policy names a node this machine lacks: the default */
};

static struct npl_profile *P;
static struct entry *E;
static uint32_t nE;
static int active, verbose;
static char profile_path[512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t unmatched_blocks, unmatched_bytes;

/* applied blocks that re-arm next-touch at regions */
#define MAX_LIVE 1024
static struct live {
    void *base;
    size_t len;
    size_t chunk, want; /* its next-touch chunk now, and at the phase being armed */
    const struct entry *e;
} live[MAX_LIVE];
static int nlive;

int npl__preload_apply_active(void) { return active; }

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* one line on stderr, its control characters escaped (a site or an advice names what the
 * profile holds): always (say), under --verbose (tell) */
static void vsay(const char *fmt, va_list ap)
{
    char buf[768], esc[3072];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    int nl = n && buf[n - 1] == '\n';
    buf[n - nl] = 0;
    npl__preload_say("%s%s", npl__term_text(buf, esc, sizeof esc), nl ? "\n" : "");
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

static void tell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tell(const char *fmt, ...)
{
    if (!verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

static void on_region(const struct npl__region *r, void *arg);

/* A thread-block bind_block ("block k with thread k") puts block k on the node of thread k as
 * THIS run pins it: its --pin strategy (a CPU list too, which a policy string cannot spell),
 * not only compact or scatter; a --pin the constructor refused pins nothing and changes nothing */
static void follow_run_pin(npl_policy *pol, const struct npl_prof_array *a)
{
    const char *pin = npl__preload.pin;
    if (!pol || !pin || !*pin)
        return;
    char site[256];
    npl__site_label(&a->site, site, sizeof site);
    int rc = npl__policy_follow_pin(pol, pin);
    if (rc < 0)
        say("numaplace run: profile: %s: %s; its blocks follow the policy's own pin order\n", site,
            npl_last_error());
    else if (rc > 0)
        tell("numaplace run: profile: %s: thread blocks on the nodes of this run's --pin %s\n",
             site, pin);
}

int npl__preload_apply_init(size_t threshold)
{
    (void)threshold;
    const char *path = getenv(NPL_ENV_PROFILE_APPLY);
    const char *v = getenv(NPL_ENV_VERBOSE);
    verbose = v && *v && strcmp(v, "0");
    if (!path || !*path)
        return 0;
    snprintf(profile_path, sizeof profile_path, "%s", path);
    char err[512];
    if (npl__profile_load(path, &P, err, sizeof err) < 0) {
        say("numaplace run: %s: the profile is not applied\n", err);
        return 0;
    }
    struct npl_site_object me;
    if (npl__site_main_object(&me) == 0 && !npl__profile_same_program(P, me.path, me.build_id)) {
        npl__preload_say("numaplace run: %s is a profile of another program: not applied%s\n", path,
                         "");
        npl__profile_free(P);
        P = NULL;
        return 0;
    }
    E = calloc(P->narrays ? P->narrays : 1, sizeof *E);
    if (!E)
        return 0;
    for (uint32_t i = 0; i < P->narrays; i++) {
        const struct npl_prof_array *a = &P->arrays[i];
        struct entry *e = &E[nE++];
        e->a = a;
        e->object_hash = npl__site_hash_object(a->site.object, a->site.build_id);
        if (!a->has_advice)
            continue;
        if (a->advice.kind == NPL_ADVICE_MAP) {
            e->explicit_map = a->advice.chunk_nodes != NULL && a->advice.nchunk_nodes > 0;
            if (e->explicit_map && npl__advice_elsewhere(a, &e->scaled, &e->scale_map) < 0)
                e->scaled = NULL; /* a fallback not usable here: the default at another size */
            follow_run_pin(e->scaled, a);
        }
        else if (a->advice.kind == NPL_ADVICE_POLICY &&
                 npl_policy_parse(&e->pol, a->advice.policy) < 0) {
            char site[256];
            npl__site_label(&a->site, site, sizeof site);
            say("numaplace run: profile: %s: advised policy not usable here (%s), the default "
                "applies\n", site, npl_last_error());
            e->pol = NULL;
        }
        npl_plan *plan = NULL; /* stored advice from a machine with other nodes (bind_all:7) */
        if (e->pol && npl__plan_default(&plan, e->pol) < 0) {
            char site[256];
            npl__site_label(&a->site, site, sizeof site);
            say("numaplace run: profile: %s: its advised policy %s is not applied here (%s): the "
                "default applies\n", site, a->advice.policy, npl_last_error());
            npl_policy_free(e->pol);
            e->pol = NULL;
            e->not_here = 1;
        }
        npl_plan_free(plan);
        follow_run_pin(e->pol, a);
        if (a->advice.nnext_touch &&
            (e->nt_chunk = calloc(a->advice.nnext_touch, sizeof *e->nt_chunk)))
            for (uint32_t m = 0; m < a->advice.nnext_touch; m++)
                e->nt_chunk[m] = npl__next_touch_chunk(P, a, a->advice.next_touch[m],
                                                       NPL_NEXT_TOUCH_DEFAULT_CHUNK);
    }
    active = 1;
    /* profile --profile: the sampler leaves next-touch's armed chunks to it */
    for (uint32_t i = 0; i < nE && npl__preload_profiling(); i++)
        if (E[i].a->has_advice && E[i].a->advice.nnext_touch) {
            npl__sampler_lend(npl__next_touch_armed);
            break;
        }
    if (npl__regions_subscribe(on_region, NULL, NPL__REGION_BEGIN) < 0)
        npl__debug("apply: cannot subscribe to region entries");
    return 1;
}

/* the profile's entry for this site and ordinal (kind: NPL_SITE_HEAP / _STATIC), or NULL */
static struct entry *lookup(uint64_t hash, uint64_t offset, uint64_t ordinal, int kind)
{
    struct entry *last = NULL;
    for (uint32_t i = 0; i < nE; i++) {
        struct entry *e = &E[i];
        if (e->object_hash != hash || e->a->site.offset != offset || e->a->site.kind != kind)
            continue;
        if (e->a->site.ordinal == ordinal)
            return e;
        if (e->a->site.ordinal < ordinal && (!last || e->a->site.ordinal > last->a->site.ordinal))
            last = e;
    }
    return last;
}

static void keep_live(void *base, size_t len, const struct entry *e)
{
    if (!e->a->has_advice || !e->a->advice.nnext_touch)
        return;
    size_t chunk = e->nt_chunk ? e->nt_chunk[0] : 0;
    pthread_mutex_lock(&lock);
    int room = nlive < MAX_LIVE; /* checked again below: another thread may take the last */
    pthread_mutex_unlock(&lock);
    if (!room) {
        tell("numaplace run: profile: %p+%zu not followed for next-touch: more than %d arrays "
             "are\n", base, len, MAX_LIVE);
        return;
    }
    if (npl_next_touch_register(base, len, chunk) < 0) {
        tell("numaplace run: profile: %p+%zu not registered for next-touch: %s\n", base, len,
             npl_last_error());
        return;
    }
    char chunks[160] = "";
    for (uint32_t m = 0; e->nt_chunk && m < e->a->advice.nnext_touch && strlen(chunks) < 120; m++) {
        uint64_t c = e->nt_chunk[m] ? e->nt_chunk[m] : NPL_NEXT_TOUCH_DEFAULT_CHUNK;
        snprintf(chunks + strlen(chunks), sizeof chunks - strlen(chunks), "%s%u: %llu",
                 m ? ", " : "", e->a->advice.next_touch[m], (unsigned long long)c);
    }
    tell("numaplace run: profile: %p+%zu registered for next-touch; its chunk in bytes at each "
         "phase: %s\n", base, len, chunks);
    pthread_mutex_lock(&lock);
    int kept = nlive < MAX_LIVE;
    if (kept)
        live[nlive++] = (struct live){base, len, chunk, chunk, e};
    pthread_mutex_unlock(&lock);
    if (!kept) { /* no room to follow its phases (nor to forget it at free): not registered */
        npl_next_touch_disarm(base);
        tell("numaplace run: profile: %p+%zu not followed for next-touch: more than %d arrays "
             "are\n", base, len, MAX_LIVE);
    }
}

/* place [p, p + len) (fresh, untouched; len: the size asked for) under e's explicit map: chunk
 * by chunk at the profiled number of pages, else scaled (npl__explicit_pages). A map that cannot
 * be applied here (a node this machine lacks) leaves the block under the default policy, said
 * once per array without --verbose too: a mismatch is reported, never fatal */
static int place_explicit(void *p, size_t len, struct entry *e)
{
    size_t ps = page_size();
    int *nodes = npl__explicit_pages(e->a, len, ps);
    int rc = nodes ? npl_place_pages(p, (len + ps - 1) / ps * ps, nodes, 0) : -1;
    free(nodes);
    if (rc < 0 && !__atomic_exchange_n(&e->map_failed, 1, __ATOMIC_RELAXED)) {
        char label[256];
        npl__site_label(&e->a->site, label, sizeof label);
        say("numaplace run: profile: %s: its explicit map is not applied here (%s): the default "
            "applies\n", label, nodes ? npl_last_error() : "out of memory");
    }
    return rc;
}

/* populating n bytes takes them at once: only when that fits what the process may still use
 * (else 0, said under --verbose: the block goes to the next allocator) */
static int fits_populated(size_t n)
{
    if (npl__preload_fits(n, "the advised policy"))
        return 1;
    tell("numaplace run: profile: %zu bytes not placed: %s\n", n, npl_last_error());
    return 0;
}

/* a fresh block of n bytes under pol (npl__preload_alloc_block): lazily where the policy allows
 * it and nothing needs its pages present (lazy_ok), else populated where that fits. *how becomes
 * NPL__PLACED_LAZY only for a policy that places (first touch places nothing) */
static void *alloc_advised(size_t n, const npl_policy *pol, unsigned flags, int lazy_ok, int *how)
{
    npl_plan *plan = NULL;
    if (npl__plan_default(&plan, pol) < 0)
        return NULL;
    int placed = plan->kind != NPL_FIRST_TOUCH, got = NPL__PLACED_NOT;
    void *p = npl__preload_alloc_block(n, 0, plan, flags, lazy_ok, "the advised policy", &got);
    int e = errno;
    npl_plan_free(plan);
    if (p && placed && got == NPL__PLACED_LAZY)
        *how = NPL__PLACED_LAZY;
    if (!p && got == NPL__PLACED_NOT) /* no room to populate it */
        tell("numaplace run: profile: %zu bytes not placed: %s\n", n, npl_last_error());
    errno = e;
    return p;
}

static void count_match(struct entry *e, size_t n)
{
    pthread_mutex_lock(&lock);
    e->matched++;
    e->matched_bytes += n;
    pthread_mutex_unlock(&lock);
}

/* The profile's entry for the next heap block of n bytes at k (its ordinal taken: *ord), or
 * NULL: a block the profile lacks, counted and said (the default applies to it) */
static struct entry *heap_entry(const struct npl_site_key *k, size_t n, uint32_t *ord)
{
    *ord = npl__site_next_ordinal(k);
    struct entry *e = lookup(k->object_hash, k->offset, *ord, NPL_SITE_HEAP);
    if (e)
        return e;
    pthread_mutex_lock(&lock);
    unmatched_blocks++;
    unmatched_bytes += n;
    pthread_mutex_unlock(&lock);
    tell("numaplace run: profile: a block of %zu bytes from +%#llx#%u is not in the profile: the "
         "default applies\n", n, (unsigned long long)k->offset, *ord);
    return NULL;
}

void *npl__preload_apply_alloc(size_t n, const void *site, const npl_policy *def, unsigned flags,
                               uint32_t *ord_out, int *how_out)
{
    int how = NPL__PLACED_POPULATED;
    if (how_out)
        *how_out = how;
    struct npl_site_key k;
    uint32_t ord;
    if (npl__site_resolve(site, &k, NULL) < 0)
        return NULL;
    struct entry *e = heap_entry(&k, n, &ord);
    if (ord_out)
        *ord_out = ord;
    npl_shape sh = {1, 1, {n, 0, 0}, NPL_ROW_MAJOR};
    if (!e) {
        int lazy_ok = !npl__preload_profiling() && !npl__preload.next_touch;
        return alloc_advised(n, def, flags, lazy_ok, how_out ? how_out : &how);
    }
    void *p = NULL;
    int lazy_ok = !npl__preload_profiling() && !npl__preload.next_touch &&
                  !(e->a->has_advice && e->a->advice.nnext_touch);
    if (e->explicit_map && (n + page_size() - 1) / page_size() !=
                               (e->a->bytes + page_size() - 1) / page_size()) {
        /* a map followed from a well-sampled array of its call site (too few samples of its
         * own, so no shape of its own either) is scaled again, as the classifier scaled it */
        int follower = e->scale_map;
        char best[192] = "first touch";
        if (e->scaled)
            npl_policy_format(e->scaled, best, sizeof best);
        else if (follower)
            snprintf(best, sizeof best, "its map, scaled");
        tell("numaplace run: profile: %zu bytes from +%#llx#%u: its explicit map is for %llu "
             "bytes only: the best shape at any size applies (%s)\n", n,
             (unsigned long long)k.offset, ord, (unsigned long long)e->a->bytes, best);
        if (!follower)
            p = alloc_advised(n, e->scaled, flags, lazy_ok, &how);
        else if (fits_populated(n) && (p = npl_alloc_array(&sh, NULL, flags)))
            place_explicit(p, n, e);
    } else if (e->explicit_map) {
        if (fits_populated(n) && (p = npl_alloc_array(&sh, NULL, flags)))
            place_explicit(p, n, e);
    } else {
        p = alloc_advised(n, e->pol ? e->pol : def, flags, lazy_ok, &how);
    }
    if (!p)
        return NULL;
    if (how_out)
        *how_out = how;
    count_match(e, n);
    char label[256];
    npl__site_label(&e->a->site, label, sizeof label);
    tell("numaplace run: profile: %zu bytes from %s: %s%s (%s)%s\n", n, label,
         e->a->has_advice ? e->a->advice.policy : "first_touch",
         e->not_here || e->map_failed ? " not applied here: the default" : "",
         e->a->has_advice ? npl__pattern_name(e->a->advice.pattern) : "no advice",
         how == NPL__PLACED_LAZY ? ", lazily" : "");
    keep_live(p, n, e);
    return p;
}

/* Place the untouched range [lo, lo + len) where it is, as entry e advises: its explicit map at
 * the profiled size, else, with other_sizes, the map scaled or the shape the classifier chose
 * for other sizes (a static array has one size: none), else its policy. 0 placed, 1 a map that
 * failed (said there), -1 failed (errno), 2 nothing applies. */
static int place_entry(void *lo, size_t len, struct entry *e, int other_sizes,
                       unsigned flags)
{
    size_t ps = page_size();
    int same_size = (len + ps - 1) / ps == (e->a->bytes + ps - 1) / ps;
    if (e->explicit_map && (same_size || (other_sizes && e->scale_map)))
        return place_explicit(lo, len, e) < 0 ? 1 : 0;
    if (e->explicit_map && other_sizes && e->scaled)
        return npl_place_range(lo, len, e->scaled, NULL, flags);
    if (!e->explicit_map && e->pol)
        return npl_place_range(lo, len, e->pol, NULL, flags);
    return 2;
}

/* The program's allocator's block (a malloc not the C library's: alloc.c's adopt), its whole
 * pages [lo, lo + len), placed where that allocator put it as the profile advises its site:
 * as a static array is (place_symbol), by mbind of the untouched range. */
int npl__preload_apply_in_place(void *lo, size_t len, const void *site, const npl_policy *def,
                                unsigned flags, uint32_t *ord_out)
{
    struct npl_site_key k;
    *ord_out = 0;
    if (npl__site_resolve(site, &k, NULL) < 0)
        return NPL__PLACED_NOT;
    struct entry *e = heap_entry(&k, len, ord_out);
    if (!e) {
        if (!def || npl_policy_get_kind(def) == NPL_FIRST_TOUCH)
            return NPL__PLACED_NOT;
        return npl_place_range(lo, len, def, NULL, flags) == 0 ? NPL__PLACED_IN_PLACE
                                                               : NPL__PLACED_NOT;
    }
    /* as npl__preload_apply_alloc: other sizes than the profiled one follow the advice too */
    int rc = place_entry(lo, len, e, 1, flags);
    int placed = rc != 2;
    rc = rc == 2 ? 0 : rc;
    count_match(e, len);
    char label[256];
    npl__site_label(&e->a->site, label, sizeof label);
    tell("numaplace run: profile: %zu bytes of the program's allocator from %s: %s%s (%s), in "
         "place\n", len, label, e->a->has_advice ? e->a->advice.policy : "first_touch",
         rc || e->not_here ? " not applied here: the default" : "",
         e->a->has_advice ? npl__pattern_name(e->a->advice.pattern) : "no advice");
    if (rc < 0)
        npl__debug("apply: in place %p+%zu: %s", lo, len, npl_last_error());
    if (rc == 0)
        keep_live(lo, len, e);
    return rc == 0 && placed ? NPL__PLACED_IN_PLACE : NPL__PLACED_NOT;
}

int npl__preload_apply_free(void *p)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nlive && !found; i++)
        if (live[i].base == p) {
            live[i] = live[--nlive];
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* ---- static arrays, before main ---- */
struct statics_ctx {
    uint64_t hash;
    const npl_policy *def;
    unsigned flags;
};

static void place_symbol(const char *symbol, uint64_t offset, uintptr_t addr, size_t bytes,
                         void *arg)
{
    struct statics_ctx *c = arg;
    size_t ps = page_size();
    uintptr_t lo = (addr + ps - 1) / ps * ps, hi = (addr + bytes) / ps * ps;
    if (hi <= lo)
        return;
    struct entry *e = lookup(c->hash, offset, 0, NPL_SITE_STATIC);
    int rc = 0;
    if (e) {
        e->matched++;
        e->matched_bytes += hi - lo;
        rc = place_entry((void *)lo, hi - lo, e, 0, c->flags);
        rc = rc == 2 ? 0 : rc;
        tell("numaplace run: profile: static %s (%zu bytes): %s%s\n", symbol, (size_t)(hi - lo),
             e->a->has_advice ? e->a->advice.policy : "first_touch",
             e->not_here ? " not applied here: the default" : "");
        if (rc == 0)
            keep_live((void *)lo, hi - lo, e);
    } else if (c->def && npl_policy_get_kind(c->def) != NPL_FIRST_TOUCH) {
        rc = npl_place_range((void *)lo, hi - lo, c->def, NULL, c->flags);
    } else {
        tell("numaplace run: profile: static %s is not in the profile: first touch\n", symbol);
    }
    if (rc < 0)
        npl__preload_say("numaplace run: profile: static array not placed: %s%s\n", npl_last_error(),
                         "");
}

void npl__preload_apply_statics(size_t threshold, const npl_policy *def, unsigned flags)
{
    struct npl_site_object me;
    if (!active || npl__site_main_object(&me) < 0)
        return;
    struct statics_ctx c = {npl__site_hash_object(me.path, me.build_id), def, flags};
    npl__site_statics(NULL, threshold, place_symbol, &c);
}

/* ---- regions: arm the phase-changing arrays whose next-touch phases include this one ---- */
/* region code address -> the profile's phase (index), cached */
#define CODE_CACHE 256
static struct { const void *code; int phase; } code_cache[CODE_CACHE];
static int ncode;

static int phase_of(const void *code)
{
    for (int i = 0; i < ncode; i++)
        if (code_cache[i].code == code)
            return code_cache[i].phase;
    int found = -1;
    struct npl_site_key k;
    if (npl__site_resolve(code, &k, NULL) == 0)
        for (uint32_t i = 0; i < P->nphases && found < 0; i++) {
            const struct npl_prof_phase *ph = &P->phases[i];
            if (ph->kind == NPL_PHASE_REGION && ph->site && ph->site->offset == k.offset &&
                npl__site_hash_object(ph->site->object, ph->site->build_id) == k.object_hash)
                found = (int)i;
        }
    if (ncode < CODE_CACHE)
        code_cache[ncode++].code = code, code_cache[ncode - 1].phase = found;
    return found;
}

/* arm l at its chunk for this phase: another chunk than the last arm's is a new range (the old
 * one disarmed: its chunks still armed become accessible, then all are armed again) */
static int arm_live(void *arg)
{
    struct live *l = arg;
    if (l->want != l->chunk) {
        npl_next_touch_disarm(l->base);
        l->chunk = l->want;
    }
    return npl_next_touch_arm(l->base, l->len, l->chunk);
}

static void apply_region(const void *code)
{
    if (!active || !nlive)
        return;
    pthread_mutex_lock(&lock);
    int i = phase_of(code);
    uint32_t id = i >= 0 ? P->phases[i].id : 0;
    for (int j = 0; i >= 0 && j < nlive; j++) {
        const struct npl_prof_advice *adv = &live[j].e->a->advice;
        for (uint32_t m = 0; m < adv->nnext_touch; m++)
            if (adv->next_touch[m] == id) {
                live[j].want = live[j].e->nt_chunk ? live[j].e->nt_chunk[m] : 0;
                npl__preload_enter();
                /* under the profiler: its pages there given back first, none taken meanwhile */
                if (npl__sampler_lend_range(live[j].base, live[j].len, arm_live, &live[j]) < 0)
                    npl__debug("apply: next-touch arm: %s", npl_last_error());
                npl__preload_leave();
                break;
            }
    }
    pthread_mutex_unlock(&lock);
}

static void on_region(const struct npl__region *r, void *arg)
{
    (void)arg;
    if (r->level == 1)
        apply_region(r->code);
}

__attribute__((destructor)) static void apply_report(void)
{
    if (!active || !verbose)
        return;
    uint64_t total = 0, matched = 0;
    unsigned arrays = 0, hit = 0, not_here = 0;
    for (uint32_t i = 0; i < nE; i++) {
        total += E[i].a->bytes;
        arrays++;
        not_here += E[i].not_here || E[i].map_failed;
        if (E[i].matched) {
            matched += E[i].a->bytes;
            hit++;
        }
    }
    char buf[768], share[64];
    if (arrays)
        snprintf(share, sizeof share, "%.1f%% of the profiled bytes",
                 total ? 100.0 * (double)matched / (double)total : 100.0);
    else /* a profile with no array (none reached the threshold): nothing to match */
        snprintf(share, sizeof share, "the profile has no array");
    char lacks[160] = "";
    if (not_here)
        snprintf(lacks, sizeof lacks, "; %u array%s advice not applied here (a node this machine "
                 "lacks: the default applied)", not_here, not_here == 1 ? "'s" : "s'");
    snprintf(buf, sizeof buf, "numaplace run: profile %s: %u of %u arrays matched again (%s); "
             "%llu blocks (%llu bytes) not in the profile%s\n", profile_path, hit, arrays, share,
             (unsigned long long)unmatched_blocks, (unsigned long long)unmatched_bytes, lacks);
    say("%s", buf);
}
