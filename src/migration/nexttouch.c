/* SPDX-License-Identifier: BSD-3-Clause */
/* nexttouch.c - application-initiated migrate-on-next-touch, in user space.
 *
 * Why mprotect + SIGSEGV and not userfaultfd: userfaultfd reports missing pages and (with
 * write-protect) writes, but a READ of a present page raises nothing, and next-touch must catch
 * the first access of any kind to pages that already exist. PROT_NONE catches every access.
 *
 * The fault handler (the claimer of src/sys/faults.c, which shares SIGSEGV with the program)
 * must be async-signal-safe: it only reads the fixed slot table below (no locks, no malloc),
 * makes raw system calls and uses atomics. A slot's state array is unmapped
 * only after its `users` count (handlers inside it) has drained.
 *
 * (Re-)arming while other threads touch the range: a slot's `seq` is odd while it is being armed.
 * The armer makes it odd, waits until no handler is inside the slot (`users` drained: every
 * chunk being resolved is DONE), checks that the memory is still the mapping it recorded, then
 * protects the range, marks every chunk ARMED and makes `seq` even again (a value never used
 * before, by any slot). A handler increments `users` before it reads `seq` (and the armer writes
 * `seq` before it reads `users`: both sequentially consistent), so either the armer waits for it
 * or it sees the odd value, leaves the count and sleeps until `seq` changes, then resolves its
 * chunk as usual. Leaving the count before waiting is what lets an arm finish while threads keep
 * touching the range: a handler that retried at once stayed in the count most of the time, and
 * seven writers kept it from ever draining. Such a sleeper is counted in `waiting` and comes back
 * into `users` before it leaves `waiting`; the next arm first waits (at most ~20 ms) for
 * `waiting` to drain, so a thread that slept through one arm resolves its chunk before the next
 * one begins: writers progress even while a thread re-arms in a loop. Nobody spins: waiters
 * sleep on futexes (the odd `seq`, a BUSY chunk's `resolved` generation; the armer on `users`
 * and `waiting`), so the threads they wait for get the CPUs. A fault that finds its chunk DONE
 * retries once per arming (the access raced with the resolution); a second fault at the same
 * address in the same arming is a real one (a write to a range that was read-only before
 * arming).
 *
 * Protection: arming records the protection the range had (one for the whole range, not
 * PROT_NONE) and resolving or disarming restores exactly that one. */
#define _GNU_SOURCE
#include "migration/nexttouch.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4
#endif

#define NPL_NEXT_TOUCH_MAX_RANGES 256 /* npl_next_touch_capacity() */
/* Pages moved per move_pages call inside the handler (each call drains the LRU lists of every
 * CPU: few large calls). The handler may run on the program's alternate signal stack
 * (SA_ONSTACK, often 8 KiB), so the arrays for BATCH pages come from a pool mapped at the first
 * arm; a resolver that finds the pool taken uses SMALL_BATCH on its stack (1 KiB). */
#define BATCH 512
#define SMALL_BATCH 64
#define POOL 32
struct batch {
    void *pages[BATCH];
    int nodes[BATCH], status[BATCH];
};
static struct batch *_Atomic pool;
static _Atomic unsigned char pool_busy[POOL];

static struct slot slots[NPL_NEXT_TOUCH_MAX_RANGES];
static pthread_mutex_t arm_lock = PTHREAD_MUTEX_INITIALIZER; /* arm/disarm, not the handler */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* the last address this thread found already resolved, and in which arming: a second fault
 * there in the same arming is a real one */
static __thread char *last_done __attribute__((tls_model("initial-exec")));
static __thread unsigned last_seq __attribute__((tls_model("initial-exec")));
/* slots retired (disarmed, forgotten) so far, and the count this thread has seen: a fault that
 * finds no slot retries once after a retirement (it may have hit the range before its
 * protection was restored) */
static _Atomic unsigned retired;
static __thread unsigned retired_seen __attribute__((tls_model("initial-exec")));
/* this thread holds arm_lock: a fault of its own inside a range it is arming (the library's own
 * malloc touching a heap page of an armed range) must not wait for that arm to end */
static __thread int arming_thread __attribute__((tls_model("initial-exec")));
static _Atomic unsigned next_seq;
static _Atomic uint64_t next_id; /* registrations so far (a slot's id) */
static _Atomic uint64_t st_faults, st_chunks, st_moved, st_failed, st_waits, st_widened;


/* a new even sequence value, never used before by any slot (never 0) */
static unsigned new_seq(void) { return atomic_fetch_add(&next_seq, 2) + 2; }

/* Sleep while *word == val (a private futex; raw system calls, async-signal-safe): waiting
 * threads must not spin, since the threads they wait for (a resolver moving pages, the armer,
 * the kernel's per-CPU work that a migration needs) need the CPUs. The timeout only bounds the
 * cost of a wake-up that raced with the check: callers loop on their condition. */
static void wait_while(_Atomic unsigned *word, unsigned val)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void wake_all(_Atomic unsigned *word)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* the slot's arming is over: threads waiting for it go on */
static void publish_seq(struct slot *s, unsigned v)
{
    atomic_store(&s->seq, v);
    wake_all(&s->seq);
}

/* chunk c is no longer BUSY: its waiters go on */
static void set_done(struct slot *s, size_t c)
{
    atomic_store(&s->state[c], DONE);
    atomic_fetch_add(&s->resolved, 1);
    wake_all(&s->resolved);
}

/* Pull chunk c's present pages to `node` and fault the absent ones in there. Raw system calls
 * only. The chunk is already accessible. Where the pages are is asked first: a move_pages that
 * moves makes the kernel drain every CPU's page lists and wait for an RCU grace period
 * (lru_cache_disable), milliseconds on a host and far more on a busy or emulated machine, while
 * a query costs none of it; and a re-armed chunk touched again by the same node moves nothing. */
static void place_chunk(struct slot *s, size_t c, unsigned node)
{
    size_t ps = s->page;
    char *start = s->base + c * s->chunk;
    size_t len = s->chunk;
    if (start + len > s->base + s->len)
        len = (size_t)(s->base + s->len - start);
    void *small_pages[SMALL_BATCH];
    int small_nodes[SMALL_BATCH], small_status[SMALL_BATCH];
    void **pages = small_pages;
    int *nodes = small_nodes, *status = small_status, taken = -1;
    size_t cap = SMALL_BATCH, n = len / ps, absent = 0, moved = 0;
    struct batch *pl = atomic_load(&pool);
    for (int b = 0; pl && b < POOL && n > SMALL_BATCH && taken < 0; b++) {
        unsigned char free_ = 0;
        if (atomic_compare_exchange_strong(&pool_busy[b], &free_, 1)) {
            taken = b;
            pages = pl[b].pages, nodes = pl[b].nodes, status = pl[b].status, cap = BATCH;
        }
    }
    for (size_t off = 0; off < n; off += cap) {
        size_t k = n - off < cap ? n - off : cap, nmv = 0;
        for (size_t i = 0; i < k; i++)
            pages[i] = start + (off + i) * ps;
        /* the counted layer (src/sys/): a raw syscall and an atomic add, async-signal-safe */
        if (npl__move_pages(NULL, k, pages, NULL, status, 0) < 0) {
            for (size_t i = 0; i < k; i++) /* cannot tell: move them all */
                status[i] = -1;
        }
        for (size_t i = 0; i < k; i++) {
            if (status[i] == -ENOENT || status[i] == -EFAULT)
                absent++;
            else if (status[i] != (int)node)
                pages[nmv++] = pages[i]; /* elsewhere: to move */
        }
        if (nmv == 0)
            continue;
        for (size_t i = 0; i < nmv; i++) {
            nodes[i] = (int)node;
            status[i] = -EAGAIN; /* unwritten if the kernel stops early: counted as failed */
        }
        if (npl__move_pages(NULL, nmv, pages, nodes, status, MPOL_MF_MOVE) < 0 && errno != ENOENT &&
            errno != ENOMEM && errno != EBUSY)
            continue;
        for (size_t i = 0; i < nmv; i++) {
            if (status[i] == (int)node)
                moved++;
            else if (status[i] == -ENOENT || status[i] == -EFAULT)
                absent++;
            else
                atomic_fetch_add_explicit(&st_failed, 1, memory_order_relaxed);
        }
    }
    if (taken >= 0)
        atomic_store(&pool_busy[taken], 0);
    /* absent pages: fault them in here, under the range's MPOL_LOCAL policy (read-only, shared
     * and file ranges: read-populated, nothing written, no copy-on-write break) */
    if (absent)
        syscall(SYS_madvise, start, len, s->populate);
    atomic_fetch_add_explicit(&st_moved, moved, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->got_moved, moved, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->got_pages, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&st_chunks, 1, memory_order_relaxed);
}

/* give chunks [lo, hi) back the protection the range had */
static int unprotect(struct slot *s, size_t lo, size_t hi)
{
    char *a = s->base + lo * s->chunk, *b = s->base + hi * s->chunk;
    if (hi >= s->nchunks || b > s->base + s->len)
        b = s->base + s->len;
    return npl__give_back((uintptr_t)a, (size_t)(b - a), s->prot);
}

/* Claim chunks from `from` going in direction dir (-1, +1) until a resolved one (its mapping is
 * RW) or the end of the range: ARMED ones become ours (BUSY, marked in mine), BUSY ones (another
 * thread's) are only covered. Returns the new bound. */
static size_t widen(struct slot *s, size_t from, int dir, uint64_t *mine)
{
    size_t c = from;
    while (dir < 0 ? c > 0 : c < s->nchunks) {
        size_t k = dir < 0 ? c - 1 : c;
        unsigned char expect = ARMED;
        if (atomic_compare_exchange_strong(&s->state[k], &expect, BUSY))
            mine[k / 64] |= 1ull << (k % 64);
        else if (expect == DONE)
            break;
        c = dir < 0 ? c - 1 : c + 1;
    }
    return c;
}

/* The slow path of resolve(): mprotect of chunk c failed with ENOMEM (vm.max_map_count reached:
 * unprotecting a chunk inside a PROT_NONE mapping splits it). Widen the unprotected span to the
 * nearest resolved chunk on the left, then also on the right, so that it merges with that RW
 * mapping and needs no new one; the ARMED chunks it covers are claimed and placed here too
 * (placement degrades to coarser chunks; the program keeps running). Last resort: the whole
 * range becomes accessible and its remaining armed chunks stay where they are. */
static __attribute__((noinline)) int resolve_widened(struct slot *s, size_t c, unsigned node)
{
    uint64_t mine[MAX_CHUNKS / 64];
    memset(mine, 0, sizeof mine);
    mine[c / 64] |= 1ull << (c % 64);
    atomic_fetch_add_explicit(&st_widened, 1, memory_order_relaxed);
    size_t lo = widen(s, c, -1, mine), hi = c + 1;
    int ok = unprotect(s, lo, hi) == 0;
    if (!ok) {
        hi = widen(s, c + 1, +1, mine);
        ok = unprotect(s, lo, hi) == 0;
    }
    if (!ok) {
        if (unprotect(s, 0, s->nchunks) < 0)
            return -1;
        for (size_t k = 0; k < s->nchunks; k++) {
            unsigned char expect = ARMED;
            atomic_compare_exchange_strong(&s->state[k], &expect, DONE);
        }
    }
    for (size_t k = lo; k < hi; k++)
        if (mine[k / 64] >> (k % 64) & 1) {
            place_chunk(s, k, node);
            set_done(s, k);
        }
    return 0;
}

/* Resolve chunk c, which this thread owns (BUSY): make it accessible, then place it on this
 * thread's node. Returns 0, or -1 if it could not be made accessible. */
static int resolve(struct slot *s, size_t c)
{
    unsigned cpu = 0, node = 0;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    if (unprotect(s, c, c + 1) == 0) {
        place_chunk(s, c, node);
        set_done(s, c);
        return 0;
    }
    if (errno == ENOMEM && resolve_widened(s, c, node) == 0)
        return 0;
    set_done(s, c); /* waiters retry and fault for real */
    return -1;
}

/* leave a slot's user count; the last one out wakes an armer waiting for it (quiesce) */
static void leave(struct slot *s)
{
    if (atomic_fetch_sub(&s->users, 1) == 1 && (atomic_load(&s->seq) & 1))
        wake_all(&s->users);
}

static int in_slot(const struct slot *s, const char *a)
{
    return atomic_load(&s->active) && a >= s->base && a < s->base + s->len;
}

/* The next active slot, from slot *i on, whose range holds a: entered (its `users` count taken,
 * which pins its state array: the caller leave()s it), or NULL. base/len are read before `users`
 * pins the slot: a disarm + re-arm of it by other threads may be writing them now (atomically,
 * fill_slot); the check after users++ decides (retired or reused meanwhile: another slot may hold
 * a now). Async-signal-safe. */
static struct slot *enter_holding(const char *a, int *i)
{
    for (; *i < NPL_NEXT_TOUCH_MAX_RANGES; (*i)++) {
        struct slot *s = &slots[*i];
        char *base = __atomic_load_n(&s->base, __ATOMIC_RELAXED);
        size_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
        if (!atomic_load(&s->active) || a < base || a >= base + len)
            continue;
        atomic_fetch_add(&s->users, 1);
        if (in_slot(s, a)) {
            (*i)++;
            return s;
        }
        leave(s);
    }
    return NULL;
}

/* 1: handled (the access can be retried), 0: not ours */
static int touch(char *a)
{
    struct slot *s;
    for (int i = 0; (s = enter_holding(a, &i)) != NULL;) {
        unsigned seq = atomic_load(&s->seq); /* read inside the count (see the file's comment) */
        /* Being (re-)armed: wait for the arm to end outside the count (a handler that faulted
         * again at once kept `users` from ever draining while threads kept touching, and the
         * armer waited forever), counted in `waiting`; then come back in before `waiting` drops,
         * so that the next arm, which first lets the threads that waited go (quiesce), cannot
         * start before this one has read the new sequence and resolved its chunk. The arming
         * thread's own faults are resolved: it has not protected the range yet. */
        while ((seq & 1) && !arming_thread) {
            atomic_fetch_add(&s->waiting, 1);
            leave(s);
            while (atomic_load(&s->seq) == seq && atomic_load(&s->active))
                wait_while(&s->seq, seq);
            atomic_fetch_add(&s->users, 1);
            seq = atomic_load(&s->seq);
            if (atomic_fetch_sub(&s->waiting, 1) == 1)
                wake_all(&s->waiting);
            if (!in_slot(s, a)) { /* disarmed or dropped meanwhile: retry the access */
                leave(s);
                return 1;
            }
        }
        int handled;
        size_t c = (size_t)(a - s->base) / s->chunk;
        unsigned char expect = ARMED;
        if (atomic_compare_exchange_strong(&s->state[c], &expect, BUSY)) {
            handled = resolve(s, c) == 0;
        } else if (expect == BUSY) {
            atomic_fetch_add_explicit(&st_waits, 1, memory_order_relaxed);
            for (;;) {
                unsigned gen = atomic_load(&s->resolved);
                if (atomic_load(&s->state[c]) != BUSY)
                    break;
                wait_while(&s->resolved, gen);
            }
            handled = 1;
        } else {
            /* DONE: another thread resolved it after our access faulted, so retry once;
             * faulting again at the same address in the same arming is a real fault */
            handled = !(last_done == a && last_seq == seq);
        }
        last_done = expect == DONE ? a : NULL;
        last_seq = seq;
        leave(s);
        return handled;
    }
    /* no slot holds a: if a range was retired since this thread last looked, the access may have
     * faulted before its protection came back: retry once */
    unsigned ret = atomic_load(&retired); /* read after the slots: a slot found inactive was
                                             * counted (retired++ comes before active = 0) */
    if (ret != retired_seen) {
        retired_seen = ret;
        return 1;
    }
    return 0;
}

int npl__next_touch_armed(const void *page)
{
    const char *a = page;
    struct slot *s;
    for (int i = 0; (s = enter_holding(a, &i)) != NULL;) {
        int armed = atomic_load(&s->seq) & 1 ||
                    atomic_load(&s->state[(size_t)(a - s->base) / s->chunk]) != DONE;
        leave(s);
        if (armed)
            return 1;
    }
    return 0;
}

/* the claimer of the shared fault handler (src/sys/faults.c): 1 when the fault was an armed
 * chunk's (resolved: the access is retried); everything else goes on to the program */
static int claim_fault(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    if (sig != SIGSEGV || si->si_code != SEGV_ACCERR || !touch(si->si_addr))
        return 0;
    atomic_fetch_add_explicit(&st_faults, 1, memory_order_relaxed);
    return 1;
}

/* the claimer is registered and the handler first in line (a program that replaced it without
 * the interposer is put behind it again, and gets every fault that is not ours) */
static int install(void) { return npl__fault_claim(claim_fault); }

/* ---- fork: the child must not inherit a held arm_lock, handlers that no longer run, or chunks
 * whose resolving thread does not exist there ---- */
static void fork_prepare(void) { pthread_mutex_lock(&arm_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&arm_lock); }
static void fork_child(void)
{
    for (int b = 0; b < POOL; b++) /* their resolvers were other threads */
        atomic_store(&pool_busy[b], 0);
    npl__nt_holds_forget(); /* their system calls were other threads' */
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        atomic_store(&s->users, 0);
        atomic_store(&s->waiting, 0);
        if (!atomic_load(&s->active))
            continue;
        for (size_t c = 0; c < s->nchunks; c++)
            if (atomic_load(&s->state[c]) == BUSY) { /* its resolver was another thread */
                char *a = s->base + c * s->chunk;
                size_t n = c + 1 == s->nchunks ? (size_t)(s->base + s->len - a) : s->chunk;
                mprotect(a, n, PROT_NONE);
                atomic_store(&s->state[c], ARMED);
            }
    }
    pthread_mutex_unlock(&arm_lock); /* taken by fork_prepare in the thread that forked */
}
static void register_atfork(void)
{
    npl__fault_atfork(); /* before ours: at fork, arm_lock is taken before the dispatcher's lock */
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
/* priority 101: before the interposer's handlers (see src/array.c), so at fork() this lock is
 * taken after the interposer has waited for the threads inside the library */
__attribute__((constructor(101))) static void atfork_early(void)
{
    pthread_once(&atfork_once, register_atfork);
}
static void lock(void)
{
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&arm_lock);
    arming_thread = 1;
}
static void unlock(void)
{
    arming_thread = 0;
    pthread_mutex_unlock(&arm_lock);
}

static struct slot *find(const void *base)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++)
        if (atomic_load(&slots[i].active) && slots[i].base == base)
            return &slots[i];
    return NULL;
}

/* Make the slot's seq odd and wait until no handler is inside it: afterwards nothing but the
 * caller (holding arm_lock) changes its chunks. Returns the odd value. */
static unsigned quiesce(struct slot *s)
{
    /* the threads that slept through the last arm go first (they come back into the count before
     * they leave `waiting`); bounded, in case one of them is stopped */
    unsigned w, q = new_seq() - 1, u;
    for (int i = 0; i < 2 && (w = atomic_load(&s->waiting)) > 0; i++)
        wait_while(&s->waiting, w);
    atomic_store(&s->seq, q);
    while ((u = atomic_load(&s->users)) > 0)
        wait_while(&s->users, u);
    return q;
}

/* drop a quiesced slot (its memory is not ours any more, or is going away): nothing is changed
 * in the memory; handlers of late faults there retry once and then see a real fault */
static void drop(struct slot *s)
{
    atomic_fetch_add(&retired, 1);
    atomic_store(&s->active, 0);
    wake_all(&s->seq); /* threads waiting for an arm of this slot: it is gone */
    unsigned u;
    while ((u = atomic_load(&s->users)) > 0)
        wait_while(&s->users, u);
    munmap((void *)s->state, s->nchunks);
    s->state = NULL;
    npl__debug("next-touch: forgot %p+%zu", (void *)s->base, s->len);
}

/* which chunks an arm protects: every one (the public calls), or for the transparent mode's
 * rule only those with a page in memory (arming a chunk that has none gains nothing over a first
 * touch under MPOL_LOCAL) and/or a sample: runs of up to SAMPLE_RUN chunks at pseudo-random
 * places (few runs: protecting each costs a TLB shootdown, 0.1-0.3 s in a busy 8-vCPU emulated
 * guest; random: a fixed stride can fall in step with a program's blocks and see only their
 * edges) */
struct arm_how {
    int present;
    size_t sample;  /* chunks in the sample; 0: every chunk */
    unsigned seed;
};
#define MAX_RUNS 128  /* more separate runs to protect than this: protect the whole range */
#define SAMPLE_RUN 8

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Mark ARMED the chunks `how` selects (the others DONE): those of the sample that, with
 * how->present, have a page in memory. Private anonymous base-page ranges ask mincore(2); in
 * others (files, shared, hugetlb) every chunk counts as present. */
static void select_chunks(struct slot *s, const struct arm_how *how)
{
    size_t ps = npl__page_size(), n = s->nchunks;
    int ask = how->present && s->populate == MADV_POPULATE_WRITE && s->page == ps;
    if (how->sample && how->sample < n) {
        for (size_t c = 0; c < n; c++)
            atomic_store(&s->state[c], DONE);
        size_t runs = (how->sample + SAMPLE_RUN - 1) / SAMPLE_RUN;
        for (size_t r = 0; r < runs; r++) { /* run r starts in the r-th part of the range */
            size_t part = n / runs, len = SAMPLE_RUN < part ? SAMPLE_RUN : part;
            size_t c0 = r * part + mix64(((uint64_t)how->seed << 32) ^ (s->id << 8) ^ r) %
                                       (part - len + 1);
            for (size_t c = c0; c < c0 + len; c++)
                atomic_store(&s->state[c], ARMED);
        }
    } else {
        for (size_t c = 0; c < n; c++)
            atomic_store(&s->state[c], ARMED);
    }
    if (!ask)
        return;
    unsigned char vec[4096];
    size_t np = s->len / ps;
    for (size_t p0 = 0; p0 < np; p0 += sizeof vec) { /* selected chunks with nothing in memory */
        size_t k = np - p0 < sizeof vec ? np - p0 : sizeof vec;
        if (mincore(s->base + p0 * ps, k * ps, vec) < 0)
            continue; /* cannot tell: armed */
        for (size_t i = 0; i < k; i++) /* bit 1: a page of the chunk is in memory */
            if (vec[i] & 1) {
                size_t c = (p0 + i) * ps / s->chunk;
                if (atomic_load(&s->state[c]) == ARMED)
                    atomic_store(&s->state[c], 3); /* ARMED, seen present (temporary) */
            }
    }
    for (size_t c = 0; c < n; c++) { /* 3 -> ARMED; ARMED never seen present -> DONE */
        unsigned char v = atomic_load(&s->state[c]);
        atomic_store(&s->state[c], v == 3 ? ARMED : DONE);
    }
}

/* protect the chunks marked ARMED in s->state (runs of them), the others keep s->prot; 0 or -1 */
static int protect_selected(struct slot *s)
{
    for (size_t c = 0; c < s->nchunks;) {
        if (atomic_load(&s->state[c]) != ARMED) {
            c++;
            continue;
        }
        size_t e = c;
        while (e < s->nchunks && atomic_load(&s->state[e]) == ARMED)
            e++;
        char *a = s->base + c * s->chunk, *b = e >= s->nchunks ? s->base + s->len
                                                                : s->base + e * s->chunk;
        if (mprotect(a, (size_t)(b - a), PROT_NONE) < 0)
            return -1;
        c = e;
    }
    return 0;
}

/* the chunks marked ARMED: how many, in how many runs, and their pages */
static void count_selected(struct slot *s, size_t *sel, size_t *runs, size_t *pages)
{
    int prev = 0;
    *sel = *runs = *pages = 0;
    for (size_t c = 0; c < s->nchunks; c++) {
        int on = atomic_load(&s->state[c]) == ARMED;
        *sel += (size_t)on;
        *runs += (size_t)(on && !prev);
        prev = on;
        if (on)
            *pages += (c + 1 == s->nchunks ? s->len - c * s->chunk : s->chunk) / s->page;
    }
}

/* Protect (the chunks `how` selects: all when how is NULL), MPOL_LOCAL over the whole range.
 * The slot must be quiesced (odd seq, no handler inside); seq becomes even again on return,
 * whatever happens. Returns 0, -1 (error set) or 1: the memory is not the recorded mapping any
 * more (nothing done; the caller drops it). */
static int arm_slot_how(struct slot *s, const struct arm_how *how)
{
    struct npl_counter cnt = {0};
    int rc = 0;
    if (!npl__nt_still_ours(s))
        return 1;
    size_t sel = s->nchunks, runs = 1, pages = s->len / s->page;
    int was_armed = 0;
    for (size_t c = 0; c < s->nchunks && !was_armed; c++)
        was_armed = atomic_load(&s->state[c]) == ARMED;
    if (how && (how->present || how->sample)) { /* which chunks: marked ARMED for now */
        select_chunks(s, how);
        count_selected(s, &sel, &runs, &pages);
        if (runs > MAX_RUNS) /* too many mappings: every chunk, as the public arm does */
            sel = s->nchunks, pages = s->len / s->page;
    }
    if (npl__nt_leave_held_out(s, sel == s->nchunks)) /* a system call uses some: accessible */
        count_selected(s, &sel, &runs, &pages);
    /* chunks still armed from the last arm that this one leaves out: accessible again */
    if (was_armed && sel < s->nchunks && npl__give_back((uintptr_t)s->base, s->len, s->prot) < 0)
        rc = npl__fail(errno, "mprotect on %p+%zu failed", (void *)s->base, s->len);
    /* MPOL_LOCAL: pages faulted in later land on the toucher's node, and the range keeps a
     * policy, so automatic NUMA balancing still leaves it alone (kernels without MPOL_LOCAL in
     * mbind: MPOL_DEFAULT) */
    if (rc == 0 && npl__mbind(&cnt, s->base, s->len, MPOL_LOCAL, NULL, 0, 0) < 0 &&
        npl__mbind(&cnt, s->base, s->len, MPOL_DEFAULT, NULL, 0, 0) < 0) {
        rc = npl__fail(errno, "mbind on the armed range failed");
    } else if (rc == 0 && sel == s->nchunks && mprotect(s->base, s->len, PROT_NONE) < 0) {
        rc = npl__fail(errno, "mprotect(PROT_NONE) on %p+%zu failed", (void *)s->base, s->len);
    } else if (rc == 0 && sel < s->nchunks && sel && protect_selected(s) < 0) {
        rc = npl__fail(errno, "mprotect(PROT_NONE) on %p+%zu failed", (void *)s->base, s->len);
    } else if (rc == 0 && sel == s->nchunks) {
        for (size_t c = 0; c < s->nchunks; c++)
            atomic_store(&s->state[c], ARMED);
    }
    if (rc < 0) {
        npl__give_back((uintptr_t)s->base, s->len, s->prot); /* it may have been applied in part */
        for (size_t c = 0; c < s->nchunks; c++)
            atomic_store(&s->state[c], DONE);
    }
    s->arms++;
    s->armed_pages = rc == 0 ? pages : 0;
    s->last_sample = how && how->sample;
    atomic_store(&s->got_pages, 0);
    atomic_store(&s->got_moved, 0);
    publish_seq(s, new_seq());
    return rc;
}

static int arm_slot(struct slot *s) { return arm_slot_how(s, NULL); }

/* KernelPageSize of the mapping holding addr (smaps), or the base page size */
/* Slots overlapping [lo, hi) whose memory is gone or changed are dropped (locked). */
static void drop_stale_overlapping(char *lo, char *hi)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *o = &slots[i];
        if (!atomic_load(&o->active) || lo >= o->base + o->len || o->base >= hi)
            continue;
        unsigned q = quiesce(o);
        if (!npl__nt_still_ours(o))
            drop(o);
        else
            publish_seq(o, q + 1);
    }
}

/* Check a range and round it and its chunk to its page size (hugetlb: the huge page); the
 * chunk grows until the range has at most MAX_CHUNKS of them. 0, or -1 through npl__fail. */
/* A free slot for [addr, addr+len) that overlaps no armed range, probed; NULL and *rc = -1
 * through npl__fail (EINVAL overlap, ENOSPC full, probe()'s errors). Under the lock. */
static struct slot *claim_slot(void *addr, size_t len, int *rc)
{
    struct slot *s = NULL;
    drop_stale_overlapping(addr, (char *)addr + len);
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES && !s; i++)
        if (!atomic_load(&slots[i].active) && atomic_load(&slots[i].users) == 0)
            s = &slots[i];
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) { /* no overlap */
        struct slot *o = &slots[i];
        if (atomic_load(&o->active) && (char *)addr < o->base + o->len &&
            o->base < (char *)addr + len) {
            *rc = npl__fail(EINVAL, "%p+%zu overlaps an armed range", addr, len);
            return NULL;
        }
    }
    if (!s)
        *rc = npl__fail(ENOSPC, "%d ranges are armed already", NPL_NEXT_TOUCH_MAX_RANGES);
    else if (npl__nt_probe(s, addr, len) < 0)
        *rc = -1, s = NULL;
    return s;
}

/* Fill a claimed slot (every chunk resolved) and arm it if asked. 0, or -1 through npl__fail
 * (the slot is released again). Under the lock. */
static int fill_slot(struct slot *s, void *addr, size_t len, size_t chunk, size_t ps, int arm)
{
    size_t n = len / chunk + (len % chunk != 0);
    void *st = npl__map_nohuge(n);
    if (st == MAP_FAILED)
        return npl__fail(ENOMEM, "out of memory");
    __atomic_store_n(&s->base, (char *)addr, __ATOMIC_RELAXED); /* touch() reads them */
    __atomic_store_n(&s->len, len, __ATOMIC_RELAXED);          /* without the lock */
    npl__nt_span_widen(addr, len);
    s->chunk = chunk;
    s->page = ps;
    s->nchunks = n;
    s->state = st;
    s->id = atomic_fetch_add(&next_id, 1) + 1;
    s->arms = s->armed_pages = 0;
    s->last_sample = 0;
    atomic_store(&s->got_pages, 0);
    atomic_store(&s->got_moved, 0);
    for (size_t c = 0; c < n; c++) /* registered: known, all resolved */
        atomic_store(&s->state[c], DONE);
    atomic_store(&s->seq, new_seq() - 1); /* odd: being armed */
    atomic_store(&s->active, 1);
    if (!arm) {
        publish_seq(s, new_seq());
        return 0;
    }
    int rc = arm_slot(s);
    if (rc == 0)
        return 0;
    if (rc > 0) /* changed under us since probe(): say what it is now */
        rc = npl__fail(EINVAL, "%p+%zu changed while it was armed", addr, len);
    atomic_fetch_add(&retired, 1);
    atomic_store(&s->active, 0);
    wake_all(&s->seq);
    unsigned u;
    while ((u = atomic_load(&s->users)) > 0)
        wait_while(&s->users, u);
    munmap(st, n);
    s->state = NULL;
    return rc;
}

static int arm_or_register(void *addr, size_t len, size_t chunk, int arm)
{
    size_t ps = 0;
    if (npl__nt_normalize_range(addr, &len, &chunk, &ps) < 0)
        return -1;
    lock();
    int rc = install();
    if (rc == 0 && !atomic_load(&pool)) {
        void *p = npl__map_nohuge(POOL * sizeof(struct batch));
        if (p != MAP_FAILED)
            atomic_store(&pool, (struct batch *)p); /* else: small batches on the stack */
    }
    /* the pool may have been mapped where a range the caller had already unmapped was: that
     * range is not the program's memory (arming it would protect the handler's own arrays) */
    uintptr_t pl = (uintptr_t)atomic_load(&pool), a0 = (uintptr_t)addr;
    if (rc == 0 && pl && a0 < pl + POOL * sizeof(struct batch) && pl < a0 + len)
        rc = npl__fail(EFAULT, "%p+%zu is not mapped by the program", addr, len);
    struct slot *s = rc == 0 ? find(addr) : NULL;
    if (s) { /* known: quiesced once, and every branch ends with an even seq or the slot dropped */
        unsigned q = quiesce(s);
        int r = s->len != len || s->chunk != chunk ? 2 : arm ? arm_slot(s) : !npl__nt_still_ours(s);
        if (r == 2 && npl__nt_still_ours(s)) {
            publish_seq(s, q + 1);
            rc = npl__fail(EINVAL, "%p is armed with another length or chunk: disarm it first",
                           addr);
        } else if (r == 0 && !arm) {
            publish_seq(s, q + 1); /* registering again changes nothing */
        } else if (r != 0 && r != -1) {
            drop(s); /* its memory is not the range it was: a new range */
            s = NULL;
        } else {
            rc = r; /* re-armed, or arm_slot failed (seq even again) */
        }
    }
    if (rc == 0 && !s) {
        s = claim_slot(addr, len, &rc);
        if (s)
            rc = fill_slot(s, addr, len, chunk, ps, arm);
    }
    unlock();
    return rc;
}

int npl_next_touch_capacity(void) { return NPL_NEXT_TOUCH_MAX_RANGES; }

int npl_next_touch_arm(void *addr, size_t len, size_t chunk)
{
    return arm_or_register(addr, len, chunk, 1);
}

int npl_next_touch_register(void *addr, size_t len, size_t chunk)
{
    return arm_or_register(addr, len, chunk, 0);
}

/* locked: disarm s (restore its protection if the memory is still ours), free its slot */
static int disarm_slot(struct slot *s, int quiet)
{
    int rc = 0;
    quiesce(s);
    if (npl__nt_still_ours(s) && npl__give_back((uintptr_t)s->base, s->len, s->prot) < 0)
        rc = quiet ? -1 : npl__fail(errno, "mprotect on disarm failed");
    drop(s);
    return rc;
}

int npl_next_touch_disarm(void *addr)
{
    lock();
    struct slot *s = find(addr);
    int rc = s ? disarm_slot(s, 0) : npl__fail(ENOENT, "%p is not the start of an armed range", addr);
    unlock();
    return rc;
}

int npl__next_touch_disarm_quiet(void *addr)
{
    int e = errno;
    lock();
    struct slot *s = find(addr);
    if (s)
        disarm_slot(s, 1);
    unlock();
    errno = e;
    return s != NULL;
}

void npl__next_touch_forget(void *addr, size_t len)
{
    char *lo = addr, *hi = lo + len;
    if (!addr || len == 0)
        return;
    if (hi < lo)
        hi = (char *)UINTPTR_MAX;
    int e = errno;
    lock();
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        if (atomic_load(&s->active) && lo < s->base + s->len && s->base < hi) {
            quiesce(s);
            drop(s);
        }
    }
    unlock();
    errno = e;
}

/* locked (no arming meanwhile): every armed chunk of [lo, hi) is resolved by this thread */
static void resolve_buffer(char *lo, char *hi)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load(&s->active) || hi <= s->base || lo >= s->base + s->len)
            continue;
        char *a = lo > s->base ? lo : s->base;
        char *b = hi < s->base + s->len ? hi : s->base + s->len;
        for (char *p = s->base + (size_t)(a - s->base) / s->chunk * s->chunk; p < b; p += s->chunk)
            touch(p);
    }
}

int npl_next_touch_prepare(void *addr, size_t len)
{
    if (!addr || (uintptr_t)addr + len < (uintptr_t)addr)
        return npl__fail(EINVAL, "bad buffer");
    lock();
    resolve_buffer(addr, (char *)addr + len);
    unlock();
    return 0;
}

int npl__next_touch_hold(const void *buf, size_t len)
{
    uintptr_t lo = (uintptr_t)buf, hi = lo + len;
    if (!buf || !len || hi < lo || !npl__nt_in_span(lo, hi) ||
        arming_thread) /* a signal handler's call inside our own arm: it holds the lock */
        return -1;
    int e = errno;
    lock();
    int t = npl__nt_holds_add((char *)lo, (char *)hi);
    resolve_buffer((char *)lo, (char *)hi);
    unlock();
    errno = e;
    return t;
}

void npl__next_touch_release(int token)
{
    if (token < 0 || token > NPL_NT_HELD)
        return;
    int e = errno;
    lock();
    npl__nt_holds_remove(token);
    unlock();
    errno = e;
}

int npl_next_touch_rearm_all(void)
{
    int rc = 0;
    lock();
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load(&s->active))
            continue;
        quiesce(s);
        int r = arm_slot(s);
        if (r > 0)
            drop(s); /* its memory was unmapped or replaced: not ours to protect */
        else if (r < 0)
            rc = -1;
    }
    unlock();
    return rc;
}

int npl_next_touch_get_stats(struct npl_next_touch_stats *o)
{
    if (!o)
        return npl__fail(EINVAL, "NULL output");
    o->faults = atomic_load(&st_faults);
    o->chunks = atomic_load(&st_chunks);
    o->pages_moved = atomic_load(&st_moved);
    o->pages_failed = atomic_load(&st_failed);
    o->waits = atomic_load(&st_waits);
    o->widened = atomic_load(&st_widened);
    return 0;
}

/* ---- the transparent mode's re-arm rule (preload/rearm.c) ---- */
int npl__next_touch_ranges(struct npl__nt_range *out, int max)
{
    int n = 0;
    lock();
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES && n < max; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load(&s->active))
            continue;
        out[n++] = (struct npl__nt_range){s->base, s->len, s->chunk, s->id, s->arms,
                                          s->last_sample, s->armed_pages,
                                          atomic_load(&s->got_pages), atomic_load(&s->got_moved)};
    }
    unlock();
    return n;
}

static struct slot *find_id(uint64_t id)
{
    for (int i = 0; i < NPL_NEXT_TOUCH_MAX_RANGES; i++)
        if (atomic_load(&slots[i].active) && slots[i].id == id)
            return &slots[i];
    return NULL;
}

int npl__next_touch_rearm_range(uint64_t id, int present, size_t sample, unsigned seed)
{
    struct arm_how how = {present, sample, seed};
    lock();
    struct slot *s = find_id(id);
    int rc = 1;
    if (s) {
        quiesce(s);
        rc = arm_slot_how(s, &how);
        if (rc > 0)
            drop(s); /* its memory was unmapped or replaced: not ours to protect */
    }
    unlock();
    return rc;
}

int npl__next_touch_where(uint64_t id, unsigned samples, unsigned *present, unsigned *on_top)
{
    enum { MAXS = 256 };
    void *pages[MAXS];
    int status[MAXS], per[64] = {0};
    *present = *on_top = 0;
    lock();
    struct slot *s = find_id(id);
    size_t np = s ? s->len / s->page : 0, k = samples < MAXS ? samples : MAXS;
    if (k > np)
        k = np;
    for (size_t i = 0; i < k; i++) /* evenly over the range */
        pages[i] = s->base + (size_t)((double)i * (double)np / (double)k) * s->page;
    int rc = s ? 0 : 1;
    if (k && npl__move_pages(NULL, k, pages, NULL, status, 0) < 0)
        rc = npl__fail(errno, "move_pages query of %p+%zu failed", (void *)s->base, s->len);
    unlock();
    for (size_t i = 0; rc == 0 && i < k; i++)
        if (status[i] >= 0 && status[i] < 64) {
            ++*present;
            per[status[i]]++;
        }
    for (int n = 0; n < 64; n++)
        if ((unsigned)per[n] > *on_top)
            *on_top = (unsigned)per[n];
    return rc;
}
