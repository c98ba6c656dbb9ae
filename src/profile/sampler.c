/* SPDX-License-Identifier: BSD-3-Clause */
/* sampler.c - the portable access sampler of `numaplace profile`: AutoNUMA's hinting faults in
 * user space (docs/PROFILE.md §3).
 *
 *  - First touch: a tracked array is protected PROT_NONE when it is born, in at most
 *    NPL_RAW_UNITS units; the first fault in a unit records the thread (and its node) for the
 *    unit's chunks and gives the unit its protection back. Nothing is moved.
 *  - Sampling: every NPL_SAMPLER_PERIOD seconds a sampler thread gives back the pages it
 *    protected that nobody touched for 2 s (idle), and protects new random pages of the arrays
 *    whose first touch is over, weighted by size, in runs of adjacent pages (one mprotect, one
 *    TLB flush a run): rate x period a round, at most rate / 2 (and 4,096) protected at a time,
 *    each splitting a mapping in three at most (far below vm.max_map_count). A read fault
 *    records a read and leaves the page PROT_READ for 100 ms, so a write that follows is seen
 *    too; a write fault records a write and gives the page back. Ages are times, not rounds.
 *    Each sampled access also asks the kernel where its page is (move_pages, no move) and counts
 *    it local or remote against the faulting thread's node (first-touch faults are not counted).
 *    Read and write come from the x86 page-fault error code (REG_ERR bit 1); elsewhere every
 *    access counts as a read and the raw profile says rw_known = 0.
 *  - A first-touch unit that cannot be given back (ENOMEM: the map count is reached) gives the
 *    whole array back (its other units: unknown).
 *  - The fault handler is async-signal-safe: it reads fixed tables, adds atomics into the shared
 *    raw profile, makes raw mprotect/getcpu/move_pages calls, never locks, never allocates.
 *  - A fault whose page was given back or taken by another thread between the fault and the
 *    handler is retried; the same thread's next race is the program's own only when nothing of
 *    ours changed in between (page, slot word, round); so is a fault in no table (once per round:
 *    the round counter moves before a page is forgotten).
 *  - fork(): the child gives every protected page back and records nothing (the profile is the
 *    parent's); exec(): an image that recorded nothing hands the profile to the program it
 *    becomes, one that recorded something keeps it (docs/PROFILE.md §5). */
#define _GNU_SOURCE
#include "base/base.h"
#include "profile/profile.h"
#include "profile/sampler_internal.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define MAX_OUT 4096     /* sampled pages protected at a time, at most */
#define MAX_AGE_NS 2000000000u /* a sampled page untouched this long is given back: idle */
#define READ_AGE_NS 100000000u /* a page read stays read-only this long to catch a write */

static struct npl_raw *R;          /* the shared raw profile, NULL when not profiling */
static size_t R_size;
static int recording;              /* this image owns R and records into it */
static int refused;                /* another image owns R: never claim */
static uint64_t my_token;
static size_t page;
static double rate = NPL_SAMPLER_DEFAULT_RATE;
static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER; /* tracking and rounds */
static pthread_t sampler_thread;
static int sampler_running;
static _Atomic int stopping;
static _Atomic unsigned epoch;     /* rounds whose pages were given back */
static _Atomic uintptr_t live_lo = UINTPTR_MAX, live_hi;
static TLS unsigned last_retry_epoch;
static TLS uintptr_t last_raced; /* the page of this thread's last raced fault, */
static TLS uint64_t last_raced_word; /* the slot word it saw (0: none) */
static TLS unsigned last_raced_epoch; /* and the round */
static int (*_Atomic lent_armed)(const void *page); /* next-touch's pages (npl__sampler_lend) */

/* The sampled pages: a fixed table, scanned linearly (at most MAX_OUT entries). Each slot is ONE
 * word: the page, its state in bits 0-2 and a generation in bits 3-11 (a slot reused meanwhile
 * fails the handler's compare-and-swap); array and born are written before the word. */
enum { S_FREE = 0, S_ARMED, S_READ, S_BUSY, S_DONE, S_IDLE };
#define S_STATE(w) ((uint32_t)((w) & 7))
#define S_PAGE(w) ((uintptr_t)(w) & ~(uintptr_t)4095)
#define S_WORD(w, st) (((w) & ~(uint64_t)7) | (st))
static struct slot {
    _Atomic uint64_t word;
    uint32_t array;
    uint64_t born; /* CLOCK_MONOTONIC ns when it was protected (read: when read) */
} slots[MAX_OUT];
static _Atomic uint32_t slots_hi; /* slots in use are below it */

static int xprotect(uintptr_t a, size_t len, int prot)
{
    /* never wider than the program's own protection; never over a page the program protected */
    return prot != PROT_NONE ? npl__give_back(a, len, prot) : npl__arm(a, len);
}

int npl__sampler_active(void) { return R && recording; }
struct npl_raw *npl__sampler_raw(void) { return R; }

/* ---- recording (async-signal-safe) ---- */
static void count_node(uint32_t t)
{
    unsigned cpu = 0, node = 0;
    if (syscall(SYS_getcpu, &cpu, &node, NULL) == 0)
        npl__raw_count_node(R, t, node);
}

/* A sample in the serial phase: the serial stretch it was taken in, per array. The serial
 * stretches share one phase; the collector tells a one-time serial pass over an array (after the
 * first region, before exit) from serial work done again and again by these counts. */
static void serial_stretch(uint32_t array, uint32_t ph)
{
    struct npl_raw_array *a = &R->arrays[array];
    uint64_t s = atomic_load_explicit(&R->phases[ph].entries, memory_order_relaxed), none = 0;
    if (atomic_exchange_explicit(&a->serial_last, s, memory_order_relaxed) == s)
        return;
    atomic_fetch_add_explicit(&a->serial_stretches, 1, memory_order_relaxed);
    atomic_compare_exchange_strong(&a->serial_first, &none, s);
}

/* one sampled access: its array and the row it was counted in (NULL: dropped) */
struct sampled {
    uint32_t array;
    struct npl_raw_row *row;
};

static struct sampled record(uint32_t array, uint64_t chunk, int write)
{
    uint32_t t = npl__sampler_my_thread();
    int serial = 0;
    uint32_t ph = npl__sampler_phase_now(&serial);
    if (t < NPL_RAW_THREADS && chunk < NPL_RAW_CHUNKS) {
        count_node(t);
        if (serial)
            serial_stretch(array, ph);
    }
    return (struct sampled){array, npl__raw_add(R, array, ph, chunk, t, write)};
}

/* A sampled access's locality: the node of page p (a move_pages query, its protection given
 * back) against the faulting thread's; unknown when the page is absent or the query fails.
 * Counted in the array's totals and the access's row. Async-signal-safe (two system calls). */
static void measure(const struct sampled *s, uintptr_t p)
{
    unsigned cpu = 0, node = 0;
    int st = -1, where = NPL_RAW_UNKNOWN;
    if (syscall(SYS_getcpu, &cpu, &node, NULL) == 0 &&
        npl__page_node(NULL, 0, (void *)p, &st) == 0 && st >= 0)
        where = (unsigned)st == node ? NPL_RAW_LOCAL : NPL_RAW_REMOTE;
    npl__raw_measured(R, s->array, s->row, where);
}

/* a fault on a sampled page: 1 handled, 2 raced (the page was given back meanwhile: retry; *seen
 * is then its slot's word), 0 not one of them */
static int sample_fault(uintptr_t p, int write, uint64_t *seen)
{
    uint32_t hi = atomic_load(&slots_hi);
    for (uint32_t i = 0; i < hi; i++) {
        struct slot *s = &slots[i];
        uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
        if (S_PAGE(w) != p || S_STATE(w) == S_FREE)
            continue;
        uint32_t st = S_STATE(w);
        struct npl_raw_array *a = &R->arrays[s->array];
        if ((st == S_ARMED || (st == S_READ && write)) &&
            atomic_compare_exchange_strong(&s->word, &w, S_WORD(w, S_BUSY))) {
            uint64_t chunk = (p - a->base) / a->chunk_bytes;
            int writable = (a->prot & PROT_WRITE) != 0;
            struct sampled one = record(s->array, chunk, write);
            if (!write && writable && xprotect(p, page, PROT_READ) == 0) {
                measure(&one, p);
                s->born = npl__now_ns(); /* READ_AGE_NS */
                atomic_store(&s->word, S_WORD(w, S_READ)); /* a write later faults again */
                return 1;
            }
            xprotect(p, page, a->prot);
            measure(&one, p);
            atomic_store(&s->word, S_WORD(w, S_DONE));
            return 1;
        }
        /* taken by another thread or the sampler, or given back meanwhile: once it is done with
         * the page, retry the access; *seen tells this race from the next (never BUSY) */
        while (S_STATE(atomic_load(&s->word)) == S_BUSY && S_PAGE(atomic_load(&s->word)) == p)
            sched_yield();
        *seen = atomic_load(&s->word);
        return 2;
    }
    return 0;
}

/* give a whole array back (ENOMEM on a unit, fork, stop): its armed units become unknown */
static void give_back_array(struct npl_raw_array *a)
{
    if (a->ft != UINT64_MAX && atomic_load(&a->ft_left)) {
        xprotect(a->base, a->bytes, a->prot);
        for (uint64_t c = 0; c < a->nchunks; c++) {
            int32_t expect = NPL_RAW_FT_ARMED;
            atomic_compare_exchange_strong(&R->ft[a->ft + c], &expect, -1);
        }
        atomic_store(&a->ft_left, 0);
    }
}

/* a fault on a unit armed for its first touch: 1 handled, 2 raced (resolved by another thread
 * meanwhile), 3 in a tracked array whose unit is resolved (a sampled page, or raced), 0 not in a
 * tracked array */
static int first_touch_fault(uintptr_t addr)
{
    if (addr < atomic_load(&live_lo) || addr >= atomic_load(&live_hi))
        return 0;
    uint32_t n = atomic_load(&R->narrays);
    for (uint32_t i = 0; i < n && i < NPL_RAW_ARRAYS; i++) {
        struct npl_raw_array *a = &R->arrays[i];
        if (atomic_load(&a->state) != NPL_RAW_LIVE || addr < a->base || addr >= a->base + a->bytes)
            continue;
        if (a->ft == UINT64_MAX)
            return 3;
        uint64_t c0 = (addr - a->base) / a->chunk_bytes / a->unit_chunks * a->unit_chunks;
        _Atomic int32_t *e = &R->ft[a->ft + c0];
        int32_t expect = NPL_RAW_FT_ARMED;
        if (!atomic_compare_exchange_strong(e, &expect, NPL_RAW_FT_BUSY)) {
            if (expect != NPL_RAW_FT_BUSY)
                return 3; /* resolved: a sampled page, or another thread resolved it */
            while (atomic_load(e) == NPL_RAW_FT_BUSY)
                sched_yield();
            return 2; /* resolved by another thread: retry */
        }
        uint64_t c1 = c0 + a->unit_chunks < a->nchunks ? c0 + a->unit_chunks : a->nchunks;
        uintptr_t lo = a->base + c0 * a->chunk_bytes, hi = a->base + c1 * a->chunk_bytes;
        if (hi > a->base + a->bytes)
            hi = a->base + a->bytes;
        uint32_t t = npl__sampler_my_thread();
        atomic_fetch_add_explicit(&R->ft_faults, 1, memory_order_relaxed);
        if (xprotect(lo, hi - lo, a->prot) < 0) {
            atomic_store(e, NPL_RAW_FT_ARMED);
            atomic_fetch_add_explicit(&R->widened, 1, memory_order_relaxed);
            give_back_array(a); /* the map count is reached: the whole array, unknown */
            return 1;
        }
        count_node(t);
        for (uint64_t c = c0 + 1; c < c1; c++)
            atomic_store_explicit(&R->ft[a->ft + c], (int32_t)t, memory_order_relaxed);
        atomic_store(e, (int32_t)t);
        atomic_fetch_sub(&a->ft_left, 1);
        return 1;
    }
    return 0;
}

int npl__sampler_fault(int sig, siginfo_t *si, void *uctx)
{
    if (!R || sig != SIGSEGV || !si || si->si_code != SEGV_ACCERR)
        return 0;
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr, p = a & ~(uintptr_t)(page - 1);
    int write = 0;
#if defined(__x86_64__) && defined(REG_ERR)
    if (uctx)
        write = (((ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)uctx;
#endif
    int (*armed)(const void *) = atomic_load_explicit(&lent_armed, memory_order_acquire);
    if (armed && armed((const void *)p)) { /* next-touch resolves it */
        errno = saved;
        return 0;
    }
    int handled = first_touch_fault(a);
    uint64_t seen = 0;
    if (handled == 0 || handled == 3) {
        int s = sample_fault(p, write, &seen);
        handled = s ? s : handled == 3 ? 2 : 0; /* in an array, not sampled: raced with a
                                                    * first touch or a give-back */
    }
    if (handled == 2) {
        /* raced: retry, unless this is the thread's last race again, with nothing of ours
         * changed since: the same page, slot word (state, generation) and round: then the
         * protection is not ours. The same page alone is no proof: it may have been given
         * back and sampled again meanwhile, and another thread may have taken that fault
         * first (a retried read then faults on the new protection, whose slot another thread
         * moved on before this handler looked). */
        unsigned ep = atomic_load(&epoch);
        handled = p != last_raced || seen != last_raced_word || ep != last_raced_epoch;
        last_raced = p;
        last_raced_word = seen;
        last_raced_epoch = ep;
    } else if (handled) {
        last_raced = 0;
    }
    if (!handled) {
        /* the sampler may have given the page back after the fault: retry once per round */
        unsigned ep = atomic_load(&epoch);
        if (ep != last_retry_epoch) {
            last_retry_epoch = ep;
            handled = 1;
        }
    }
    errno = saved;
    return handled;
}

/* the claimer of the process's one SIGSEGV/SIGBUS dispatcher (src/sys/faults.c): faults it does
 * not take go to the program's own handler, or kill as they would have */
int npl__sampler_install(void) { return npl__fault_claim(npl__sampler_fault); }

/* ---- the raw profile ---- */
int npl__sampler_init(const struct npl_sampler_cfg *cfg)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    struct npl_raw *r = npl__raw_open(cfg->shm_path);
    if (!r)
        return -1;
    R = r;
    R_size = sizeof *r;
    if (cfg->rate > 0)
        rate = cfg->rate;
    my_token = ((uint64_t)getpid() << 32) ^ (uint64_t)(npl__now() * 1e9) ^ (uintptr_t)&my_token;
    if (!my_token)
        my_token = 1;
    npl__sampler_set_thread(0); /* the thread that loads us is the main thread */
    return 0;
}

static void *sampler_main(void *arg);

/* claim the profile for this image (first tracked array): 1 recording, 0 not */
static int claim(void)
{
    if (recording)
        return 1;
    if (refused || !R)
        return 0;
    int32_t expect = 0;
    uint64_t from = atomic_load(&R->handover);
    if (from && from == atomic_load(&R->owner_token) &&
        atomic_load(&R->owner_pid) == (int32_t)getpid() &&
        atomic_compare_exchange_strong(&R->handover, &from, 0)) {
        /* the image we replaced recorded nothing and handed the profile over: start afresh */
        atomic_store(&R->narrays, 0);
        atomic_store(&R->nobjects, 0);
        atomic_store(&R->nphases, 0);
        atomic_store(&R->ft_used, 0);
        atomic_store(&R->nthreads, 0);
    } else if (!atomic_compare_exchange_strong(&R->owner_pid, &expect, (int32_t)getpid())) {
        struct npl_raw *spare = npl__raw_claim_spare(); /* another program: its own profile */
        if (!spare) {
            refused = 1; /* another process or program image has it */
            atomic_fetch_add(&R->others, 1);
            return 0;
        }
        R = spare; /* the first one stays mapped: a thread may still be publishing into it */
        npl__sampler_publish_thread();
    }
    atomic_store(&R->owner_token, my_token);
    R->page_size = page;
    R->rate = rate;
    R->period = NPL_SAMPLER_PERIOD;
#if defined(__x86_64__) && defined(REG_ERR)
    R->rw_known = 1;
#endif
    R->t_start = npl__now();
    struct npl_site_object o;
    if (npl__site_main_object(&o) == 0) {
        snprintf(R->program, sizeof R->program, "%s", o.path);
        snprintf(R->program_build_id, sizeof R->program_build_id, "%s", o.build_id);
    }
    if (atomic_load(&R->nphases) == 0)
        npl__raw_new_phase(R, NPL_RAW_PHASE_WINDOW, NPL_RAW_NONE, 0, 0);
    atomic_store(&R->phase_since, 0); /* a handed-over profile: its time starts now */
    npl__sampler_set_phase(0);
    recording = 1;
    if (npl__sampler_install() < 0) {
        recording = 0;
        return 0;
    }
    pthread_attr_t at;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals never reach our thread */
    sampler_running = pthread_create(&sampler_thread, &at, sampler_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    return 1;
}

int npl__sampler_track(void *base, size_t bytes, size_t asked, int kind, const void *site_addr,
                       uint32_t ordinal, const char *symbol, uint64_t symbol_offset, int trap)
{
    if (!R || !base || bytes < page)
        return -1;
    pthread_mutex_lock(&track_lock);
    if (!claim()) {
        pthread_mutex_unlock(&track_lock);
        return -1;
    }
    struct npl_site_object o;
    uint32_t obj = NPL_RAW_NONE;
    uint64_t offset = symbol_offset;
    if (npl__site_object(site_addr, &o) == 0) {
        obj = npl__raw_intern_object(R, &o);
        if (!symbol)
            offset = (uint64_t)((uintptr_t)site_addr - o.bias);
    }
    uint32_t i = atomic_load(&R->narrays);
    if (i >= NPL_RAW_ARRAYS || obj == NPL_RAW_NONE) {
        atomic_fetch_add(&R->arrays_dropped, 1);
        pthread_mutex_unlock(&track_lock);
        return -1;
    }
    struct npl_raw_array *a = &R->arrays[i];
    atomic_store(&a->state, NPL_RAW_FILLING);
    a->kind = (uint32_t)kind;
    a->object = obj;
    a->ordinal = ordinal;
    a->offset = offset;
    snprintf(a->symbol, sizeof a->symbol, "%s", symbol ? symbol : "");
    uint64_t npages = (bytes + page - 1) / page, cp = 1, unit = 1;
    while ((npages + cp - 1) / cp > NPL_RAW_CHUNKS)
        cp *= 2;
    a->bytes = bytes;
    a->asked = asked && asked <= bytes && asked > bytes - page ? asked : bytes;
    a->chunk_bytes = cp * page;
    a->nchunks = (npages + cp - 1) / cp;
    while ((a->nchunks + unit - 1) / unit > NPL_RAW_UNITS)
        unit *= 2;
    a->unit_chunks = unit;
    a->base = (uintptr_t)base;
    a->prot = PROT_READ | PROT_WRITE;
    atomic_store(&a->born_ns, npl__now_ns());
    atomic_store(&a->gone_ns, 0);
    a->ft = UINT64_MAX;
    atomic_store(&a->serial_stretches, 0);
    atomic_store(&a->serial_first, 0);
    atomic_store(&a->serial_last, 0);
    uint64_t at = atomic_load(&R->ft_used);
    if (at + a->nchunks <= NPL_RAW_FT) {
        atomic_store(&R->ft_used, at + a->nchunks);
        a->ft = at;
        for (uint64_t c = 0; c < a->nchunks; c++)
            atomic_store_explicit(&R->ft[at + c], trap ? NPL_RAW_FT_ARMED : -1,
                                  memory_order_relaxed);
    } else {
        atomic_fetch_add(&R->ft_dropped, 1);
    }
    atomic_store(&a->ft_left, 0);
    if (trap && a->ft != UINT64_MAX) {
        atomic_store(&a->ft_left, (a->nchunks + unit - 1) / unit);
        npl__span_widen(&live_lo, &live_hi, a->base, a->base + a->bytes);
        atomic_store(&a->state, NPL_RAW_LIVE);
        atomic_store(&R->narrays, i + 1);
        if (xprotect(a->base, bytes, PROT_NONE) < 0) {
            atomic_fetch_add(&R->protect_failed, 1);
            for (uint64_t c = 0; c < a->nchunks; c++)
                atomic_store(&R->ft[a->ft + c], -1);
            atomic_store(&a->ft_left, 0);
        }
    } else {
        npl__span_widen(&live_lo, &live_hi, a->base, a->base + a->bytes);
        atomic_store(&a->state, NPL_RAW_LIVE);
        atomic_store(&R->narrays, i + 1);
    }
    pthread_mutex_unlock(&track_lock);
    return (int)i;
}

/* give back the sampled pages in [lo, hi) protected before `older` ns (read ones: read
 * before `read_older`; all: 0, UINTPTR_MAX, UINT64_MAX, UINT64_MAX), and free the slots of
 * those done; track_lock held */
static void give_back_slots(uintptr_t lo, uintptr_t hi, uint64_t older, uint64_t read_older,
                            int count_idle)
{
    uint32_t top = atomic_load(&slots_hi);
    for (uint32_t i = 0; i < top; i++) {
        struct slot *s = &slots[i];
        for (;;) {
            uint64_t w = atomic_load(&s->word);
            uintptr_t p = S_PAGE(w);
            uint32_t st = S_STATE(w);
            if (st == S_FREE || p < lo || p >= hi)
                break;
            if (st == S_BUSY) { /* a handler is on it */
                sched_yield();
                continue;
            }
            if ((st == S_ARMED && s->born >= older) || (st == S_READ && s->born >= read_older))
                break; /* still young */
            if (!atomic_compare_exchange_strong(&s->word, &w, S_WORD(w, S_BUSY)))
                continue;
            if (st == S_ARMED || st == S_READ)
                xprotect(p, page, R->arrays[s->array].prot);
            if (st == S_ARMED && count_idle)
                atomic_fetch_add_explicit(&R->idle, 1, memory_order_relaxed);
            /* free: the generation is kept, so a handler holding the old word fails its CAS */
            atomic_store(&s->word, (w & 0xff8) | S_FREE);
            break;
        }
    }
}

void npl__sampler_lend(int (*armed)(const void *page))
{
    atomic_store_explicit(&lent_armed, armed, memory_order_release);
}

int npl__sampler_lend_range(void *base, size_t len, int (*fn)(void *), void *arg)
{
    if (!R || !recording)
        return fn(arg);
    uintptr_t lo = (uintptr_t)base, hi = lo + len;
    pthread_mutex_lock(&track_lock); /* no round, no new array protects meanwhile */
    give_back_slots(lo, hi, UINT64_MAX, UINT64_MAX, 0);
    uint32_t n = atomic_load(&R->narrays);
    for (uint32_t i = 0; i < n && i < NPL_RAW_ARRAYS; i++) {
        struct npl_raw_array *a = &R->arrays[i];
        if (atomic_load(&a->state) == NPL_RAW_LIVE && a->base < hi && lo < a->base + a->bytes)
            give_back_array(a);
    }
    int rc = fn(arg);
    pthread_mutex_unlock(&track_lock);
    return rc;
}

void npl__sampler_untrack(void *base)
{
    if (!R || !recording)
        return;
    pthread_mutex_lock(&track_lock);
    uint32_t n = atomic_load(&R->narrays);
    for (uint32_t i = 0; i < n; i++) {
        struct npl_raw_array *a = &R->arrays[i];
        if (atomic_load(&a->state) == NPL_RAW_LIVE && a->base == (uintptr_t)base) {
            give_back_slots(a->base, a->base + a->bytes, UINT64_MAX, UINT64_MAX, 0);
            /* the memory may live on (a foreign allocator's block, handed out again) */
            give_back_array(a); /* its units still armed for their first touch too */
            atomic_store(&a->gone_ns, npl__now_ns());
            atomic_store(&a->state, NPL_RAW_GONE);
            break;
        }
    }
    pthread_mutex_unlock(&track_lock);
}

/* ---- the sampler thread ---- */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* a free slot for page p of array (not already sampled): its index, or -1 */
static int slot_insert(uintptr_t p, uint32_t array)
{
    uint32_t top = atomic_load(&slots_hi), free_slot = UINT32_MAX;
    for (uint32_t i = 0; i < top; i++) {
        uint64_t w = atomic_load(&slots[i].word);
        if (S_STATE(w) != S_FREE && S_PAGE(w) == p)
            return -1; /* sampled already */
        if (S_STATE(w) == S_FREE && free_slot == UINT32_MAX)
            free_slot = i;
    }
    if (free_slot == UINT32_MAX) {
        if (top >= MAX_OUT)
            return -1;
        free_slot = top;
    }
    struct slot *s = &slots[free_slot];
    uint64_t gen = ((atomic_load(&s->word) >> 3) + 1) & 0x1ff;
    s->array = array;
    s->born = npl__now_ns();
    atomic_store_explicit(&s->word, (uint64_t)p | gen << 3 | S_ARMED, memory_order_release);
    if (free_slot == top)
        atomic_store(&slots_hi, top + 1);
    return (int)free_slot;
}

static int in_flight(uintptr_t p);
static int in_flight_range(uintptr_t lo, uintptr_t hi);
static _Atomic uintptr_t protecting; /* the first page of the run the sampler is about to
                                      * protect (RUN pages at most), or 0 */

#define SMALL_WEIGHT 64
static uint64_t weight(const struct npl_raw_array *a)
{
    uint64_t pages = a->bytes / page;
    return pages > SMALL_WEIGHT || pages == 0 ? pages : SMALL_WEIGHT;
}

/* Pages are armed in runs of up to RUN adjacent pages, one mprotect each: making a page
 * inaccessible flushes it from every CPU that runs the program's threads (an IPI to each), and
 * that flush, not the page count, is what a round costs when the threads are busy (in a TCG
 * guest, milliseconds each). Each page of a run keeps its own slot and is sampled alone. */
#define RUN 16

/* arm up to `want` (<= RUN, <= left) pages of array i from page `first`: the pages armed */
static int arm_run(uint32_t i, uint64_t first, uint64_t want, int left)
{
    struct npl_raw_array *a = &R->arrays[i];
    uintptr_t p0 = a->base + first * page;
    int got[RUN], k = 0;
    if (want > (uint64_t)left)
        want = (uint64_t)left;
    /* announced before the in-flight check, cleared after the protection (see prepare) */
    atomic_store(&protecting, p0);
    for (uint64_t j = 0; j < want; j++) {
        uint64_t chunk = (first + j) * page / a->chunk_bytes;
        if (a->ft != UINT64_MAX) { /* not while its first touch is pending */
            int32_t e = atomic_load(&R->ft[a->ft + chunk / a->unit_chunks * a->unit_chunks]);
            if (e == NPL_RAW_FT_ARMED || e == NPL_RAW_FT_BUSY)
                break;
        }
        uintptr_t p = p0 + j * page;
        int (*armed)(const void *) = atomic_load(&lent_armed);
        if ((armed && armed((const void *)p)) || npl__program_protected(p, page))
            break; /* next-touch owns its protection now, or the program does */
        int s = in_flight(p) ? -1 : slot_insert(p, i);
        if (s < 0)
            break; /* the run ends at a page it cannot take */
        got[k++] = s;
    }
    if (!k) {
        atomic_store(&protecting, 0);
        return 0;
    }
    int failed = xprotect(p0, (size_t)k * page, PROT_NONE) < 0;
    atomic_store(&protecting, 0);
    int late = !failed && in_flight_range(p0, p0 + (size_t)k * page);
    for (int j = 0; j < k; j++) {
        struct slot *sl = &slots[got[j]];
        uint64_t w = atomic_load(&sl->word);
        if (failed) {
            atomic_compare_exchange_strong(&sl->word, &w, S_WORD(w, S_DONE));
        } else if (late && S_STATE(w) == S_ARMED && in_flight(S_PAGE(w))) {
            /* a system call is about to touch it: give it back */
            if (atomic_compare_exchange_strong(&sl->word, &w, S_WORD(w, S_BUSY))) {
                xprotect(S_PAGE(w), page, a->prot);
                atomic_store(&sl->word, S_WORD(w, S_IDLE));
            }
        }
    }
    atomic_fetch_add_explicit(&R->arm_calls, 1, memory_order_relaxed);
    if (failed)
        atomic_fetch_add(&R->protect_failed, 1);
    else
        atomic_fetch_add_explicit(&R->arm_pages, (uint64_t)k, memory_order_relaxed);
    return failed ? 0 : k;
}

static void round_once(void)
{
    /* pages armed since the last round (or the perf backend, always sampling): the threads'
     * CPU time since then is their exposure */
    int armed = npl__sampling_backend_of(R->backend)->start != NULL;
    for (uint32_t k = 0, top = atomic_load(&slots_hi); k < top && !armed; k++) {
        uint32_t st = S_STATE(atomic_load(&slots[k].word));
        armed = st == S_ARMED || st == S_READ || st == S_BUSY || st == S_DONE;
    }
    npl__raw_thread_clocks(R, armed);
    /* pages untouched for MAX_AGE_NS are given back (idle), read ones after READ_AGE_NS; done
     * ones freed. Ages are in time, not rounds: a round is late when the threads are busy */
    atomic_fetch_add(&epoch, 1); /* before any page is forgotten: late faults retry */
    uint64_t t = npl__now_ns();
    give_back_slots(0, UINTPTR_MAX, t > MAX_AGE_NS ? t - MAX_AGE_NS : 0,
                    t > READ_AGE_NS ? t - READ_AGE_NS : 0, 1);
    atomic_fetch_add_explicit(&R->giveback_ns, npl__now_ns() - t, memory_order_relaxed);
    atomic_fetch_add(&R->rounds, 1);
    npl__sampler_phase_round();
    /* the pages of this round: weighted by the arrays' sizes, each weighing at least
     * SMALL_WEIGHT pages, so that a small array heavily used (a CG vector beside its matrix)
     * gathers enough samples to be classified rather than left to first touch */
    if (npl__sampling_backend_of(R->backend)->start)
        return; /* the command samples (perf's hardware samples): no page is protected */
    uint32_t n = atomic_load(&R->narrays);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load(&R->arrays[i].state) == NPL_RAW_LIVE)
            total += weight(&R->arrays[i]);
    if (!total)
        return;
    /* rate pages a second, at most rate / 2 protected at a time */
    int budget = (int)(rate * NPL_SAMPLER_PERIOD + 0.5), cap = (int)(rate / 2);
    if (budget < 1)
        budget = 1;
    if (cap < 64)
        cap = 64;
    if (cap > MAX_OUT)
        cap = MAX_OUT;
    int out = 0;
    for (uint32_t k = 0, top = atomic_load(&slots_hi); k < top; k++) {
        uint32_t st = S_STATE(atomic_load(&slots[k].word));
        out += st == S_ARMED || st == S_READ || st == S_BUSY;
    }
    if (budget > cap - out)
        budget = cap - out;
    uint64_t t0 = npl__now_ns();
    for (int k = 0, tries = 0; k < budget && tries < 4 * budget; tries++) {
        uint64_t r = rnd() % total;
        uint32_t i = 0;
        for (; i < n; i++) {
            struct npl_raw_array *a = &R->arrays[i];
            if (atomic_load(&a->state) != NPL_RAW_LIVE)
                continue;
            if (r < weight(a))
                break;
            r -= weight(a);
        }
        if (i >= n)
            continue;
        struct npl_raw_array *a = &R->arrays[i];
        /* a run ending at a drawn page of [0, npages + RUN - 1), clipped to the array: every
         * page is in RUN of the draws (a small array's pages are drawn more often) */
        uint64_t npages = a->bytes / page, end = r % (npages + RUN - 1) + 1;
        uint64_t first = end > RUN ? end - RUN : 0;
        if (end > npages)
            end = npages;
        k += arm_run(i, first, end - first, budget - k);
    }
    atomic_fetch_add_explicit(&R->protect_ns, npl__now_ns() - t0, memory_order_relaxed);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    rng_state = (uint64_t)(npl__now() * 1e9) | 1;
    struct timespec ts = {0, (long)(NPL_SAMPLER_PERIOD * 1e9)};
    while (!atomic_load(&stopping)) {
        nanosleep(&ts, NULL);
        /* the program's last thread has ended (its main thread called pthread_exit): the
         * process would end now, as exit(0) would make it; this thread must not keep it alive */
        if (npl__proc_alone())
            exit(0);
        pthread_mutex_lock(&track_lock);
        uint64_t t0 = npl__now_ns();
        if (recording && !atomic_load(&stopping))
            round_once();
        atomic_fetch_add_explicit(&R->round_ns, npl__now_ns() - t0, memory_order_relaxed);
        pthread_mutex_unlock(&track_lock);
    }
    return NULL;
}

/* ---- system calls into protected pages ----
 * A range a system call reads or writes is "in flight" from npl__sampler_prepare to
 * npl__sampler_done: its protected pages are given back first, and the sampler protects none of
 * it meanwhile. The sampler announces the page it is about to protect (protecting), then checks
 * the in-flight table, protects, and clears the announcement; prepare registers its range, then
 * waits while an announced page lies in it, then gives back the protected pages. With
 * sequentially consistent atomics either the sampler sees the range (and protects nothing in it)
 * or prepare sees the announcement (and finds the page protected once it is cleared): no page is
 * protected while the kernel copies into the range (a read(2) into it got EFAULT or a short
 * count). The sampler's thread blocks every signal, so the wait always ends. */
#define INFLIGHT 256
static struct {
    _Atomic uintptr_t lo, hi;
} inflight[INFLIGHT];
static _Atomic int inflight_full; /* ranges that found no slot: no page is sampled meanwhile */

static int in_flight_range(uintptr_t a, uintptr_t b)
{
    if (atomic_load(&inflight_full))
        return 1;
    for (int i = 0; i < INFLIGHT; i++) {
        uintptr_t lo = atomic_load(&inflight[i].lo);
        if (lo && b > lo && a < atomic_load(&inflight[i].hi))
            return 1;
    }
    return 0;
}

static int in_flight(uintptr_t p) { return in_flight_range(p, p + page); }

int npl__sampler_prepare(const void *buf, size_t len, int write)
{
    uintptr_t lo = (uintptr_t)buf, hi = lo + len;
    if (!npl__sampler_active() || !len || hi < lo || hi <= atomic_load(&live_lo) ||
        lo >= atomic_load(&live_hi))
        return -1;
    int saved = errno, slot = -1;
    for (int i = 0; i < INFLIGHT && slot < 0; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&inflight[i].lo, &expect, lo ? lo : 1)) {
            atomic_store(&inflight[i].hi, hi);
            slot = i;
        }
    }
    if (slot < 0)
        atomic_fetch_add(&inflight_full, 1);
    for (uintptr_t q; (q = atomic_load(&protecting)) != 0 && q + RUN * page > lo && q < hi;)
        sched_yield();
    uint32_t n = atomic_load(&R->narrays);
    for (uint32_t i = 0; i < n; i++) {
        struct npl_raw_array *a = &R->arrays[i];
        if (atomic_load(&a->state) != NPL_RAW_LIVE || hi <= a->base || lo >= a->base + a->bytes)
            continue;
        atomic_fetch_add(&R->prepared, 1);
        uintptr_t s = lo > a->base ? lo : a->base;
        uintptr_t e = hi < a->base + a->bytes ? hi : a->base + a->bytes;
        /* first-touch units: resolved by this thread, as a touch would */
        if (a->ft != UINT64_MAX && atomic_load(&a->ft_left))
            for (uintptr_t p = s & ~(uintptr_t)(page - 1); p < e; p += page)
                first_touch_fault(p);
        /* sampled pages: the access is recorded and the page given back */
        for (uintptr_t p = s & ~(uintptr_t)(page - 1); p < e; p += page) {
            uint64_t seen;
            sample_fault(p, write, &seen);
        }
    }
    errno = saved;
    return slot < 0 ? INFLIGHT : slot;
}

void npl__sampler_done(int token)
{
    if (token < 0)
        return;
    if (token >= INFLIGHT)
        atomic_fetch_sub(&inflight_full, 1);
    else
        atomic_store(&inflight[token].lo, 0);
}

/* ---- fork and the end ---- */
static void fork_prepare(void) { pthread_mutex_lock(&track_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&track_lock); }
static void fork_child(void)
{
    /* the profile is the parent's: give back every protected page, record nothing */
    if (R && recording) {
        atomic_fetch_add(&R->others, 1);
        uint32_t n = atomic_load(&R->narrays);
        for (uint32_t i = 0; i < n; i++) {
            struct npl_raw_array *a = &R->arrays[i];
            if (atomic_load(&a->state) == NPL_RAW_LIVE)
                xprotect(a->base, a->bytes, a->prot);
        }
        for (uint32_t i = 0; i < MAX_OUT; i++)
            atomic_store(&slots[i].word, 0);
        atomic_store(&slots_hi, 0);
        atomic_store(&live_lo, UINTPTR_MAX);
        atomic_store(&live_hi, 0);
        munmap(R, R_size); /* nothing of the parent's profile is reachable from here */
    }
    R = NULL;
    recording = 0;
    refused = 1;
    sampler_running = 0;
    pthread_mutex_unlock(&track_lock);
}
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void)
{
    npl__fault_atfork(); /* before ours: at fork, track_lock is taken before the dispatcher's */
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
/* before the interposer's handlers (priority 101): at fork() this lock is taken after the
 * interposer has waited for the threads inside the library (which may be untracking) */
__attribute__((constructor(101))) static void atfork_early(void)
{
    pthread_once(&atfork_once, register_atfork);
}

void npl__sampler_exec(int failed)
{
    if (!R || !recording || atomic_load(&R->owner_pid) != (int32_t)getpid())
        return; /* not the owner (a vfork child shares our memory but not our pid) */
    if (failed)
        atomic_store(&R->handover, 0);
    else if (!atomic_load(&R->ft_faults) && !atomic_load(&R->samples))
        atomic_store(&R->handover, my_token);
}

void npl__sampler_stop(void)
{
    if (!R || !recording)
        return;
    atomic_store(&stopping, 1);
    npl__sampler_set_phase(NPL_RAW_NONE);
    pthread_mutex_lock(&track_lock);
    give_back_slots(0, UINTPTR_MAX, UINT64_MAX, UINT64_MAX, 0);
    pthread_mutex_unlock(&track_lock);
}
