/* SPDX-License-Identifier: BSD-3-Clause */
/* sampler_phases.c - the sampler's clock of threads and phases (docs/PROFILE.md §3): each
 * thread's number (the interposer's creation order, or its OpenMP number), and the phase every
 * sample is counted in: an OpenMP region (the hooks of preload/regions.c), the serial stretches
 * between regions, or, in a program without regions, a time window per NPL_RAW_WINDOW_SECONDS
 * (ended at the program's pthread barrier rounds while they come, and counting them), with the
 * main thread alone after its threads ended in a phase of its own. Each phase's
 * duration is summed over its stretches. */
#define _GNU_SOURCE
#include "base/base.h"
#include "profile/profile.h"
#include "profile/sampler_internal.h"
#include "sys/sys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TLS __thread __attribute__((tls_model("initial-exec")))

static _Atomic uint32_t cur_phase, serial_phase = NPL_RAW_NONE, last_region = NPL_RAW_NONE;
static _Atomic int region_depth, regions_seen;
/* pthreads (no region seen): the numbered threads running; the time window now; the phase of the
 * main thread alone after its threads ended (npl__sampler_thread_begin/_end). The main thread is
 * alone from the start too: its serial initialisation stays in the first phase, however long,
 * where windows cut it into several one-thread phases, of which only the first was a one-time
 * pass to the classifier (guest_advice's case c: its stretch of the workers then held 43% of the
 * samples, and the prediction counted the main thread's windows: 0.75 for an exact 0.91) */
static int workers_alive, alone = 1;
static uint32_t window_phase, alone_phase = NPL_RAW_NONE;
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER; /* phase changes */
static _Atomic int next_thread_no = 1;
static TLS int thread_no = -1, omp_no = -1;

/* this thread's number, as my_thread() gives it, published with its kernel id (the perf
 * backend's samples name threads by it) */
static TLS int32_t my_tid;
void npl__sampler_publish_thread(void)
{
    struct npl_raw *R = npl__sampler_raw();
    if (!R)
        return;
    if (!my_tid)
        my_tid = (int32_t)syscall(SYS_gettid);
    npl__raw_set_tid(R, my_tid, omp_no >= 0 ? omp_no : thread_no);
}

uint32_t npl__sampler_my_thread(void)
{
    if (omp_no >= 0)
        return (uint32_t)omp_no;
    if (thread_no < 0) {
        thread_no = atomic_fetch_add(&next_thread_no, 1); /* a thread we did not see created */
        npl__sampler_publish_thread();
    }
    return (uint32_t)thread_no;
}

/* The phase now becomes ph (NPL_RAW_NONE: stays): the time since the last count goes to the
 * phase that was current (each phase's duration, summed over its stretches) */
void npl__sampler_set_phase(uint32_t ph)
{
    struct npl_raw *R = npl__sampler_raw();
    uint32_t was = ph == NPL_RAW_NONE ? atomic_load(&cur_phase) : atomic_exchange(&cur_phase, ph);
    if (!R)
        return;
    if (ph != NPL_RAW_NONE)
        atomic_store(&R->cur_phase, ph);
    uint64_t now = npl__now_ns(), since = atomic_exchange(&R->phase_since, now);
    if (since && now > since && was < NPL_RAW_PHASES)
        atomic_fetch_add_explicit(&R->phases[was].ns, now - since, memory_order_relaxed);
}


uint32_t npl__sampler_phase_now(int *serial)
{
    uint32_t ph = atomic_load_explicit(&cur_phase, memory_order_relaxed);
    *serial = ph == atomic_load_explicit(&serial_phase, memory_order_relaxed);
    return ph;
}

/* Windows cut by the program's own barriers: once pthread_barrier_wait rounds complete, a window
 * ends at a round's end (npl__sampler_barrier_round), never inside a pass, and counts the rounds
 * it holds: at the first round 100 ms after the window began, or at every round where passes
 * took a window's time or more on average (a quick pass between two slow ones, unsampled, made
 * one window of two passes across case e's change of owners). The classifier then weighs
 * windows by rounds, not by samples, which count time and the sampler's own cost (a pass of
 * guest_advice's case e took 0.1 to 4.6 s under the sampler in a TCG guest, 0.02 s without
 * it). The clock cuts again where no round ended for twice the longest time between two rounds,
 * the first counted from the threads' start (a window at least): a stretch without barriers.
 * phase_lock held. */
static double window_began, last_round, longest_round, threads_began, rounds_time;
static unsigned long rounds_seen;
static int paced_by_barriers(double now)
{
    double quiet = 2 * longest_round > NPL_RAW_WINDOW_SECONDS ? 2 * longest_round
                                                              : NPL_RAW_WINDOW_SECONDS;
    return last_round > 0 && now - last_round < quiet;
}

static void new_window(struct npl_raw *R, double now)
{
    window_phase = npl__raw_new_phase(R, NPL_RAW_PHASE_WINDOW, NPL_RAW_NONE, 0, 0);
    npl__sampler_set_phase(window_phase);
    window_began = now;
}

void npl__sampler_phase_round(void)
{
    struct npl_raw *R = npl__sampler_raw();
    npl__sampler_set_phase(NPL_RAW_NONE); /* the phase now counted so far (a killed program
                                           * loses a round) */
    /* time windows while no OpenMP region was ever seen */
    if (atomic_load(&regions_seen))
        return;
    double now = npl__now();
    pthread_mutex_lock(&phase_lock);
    if (!alone && now - window_began >= NPL_RAW_WINDOW_SECONDS && !paced_by_barriers(now) &&
        atomic_load(&R->nphases) < NPL_RAW_WINDOWS) /* alone: its phase stays */
        new_window(R, now);
    pthread_mutex_unlock(&phase_lock);
}

void npl__sampler_barrier_round(void)
{
    struct npl_raw *R = npl__sampler_raw();
    if (!npl__sampler_active() || atomic_load(&regions_seen))
        return;
    double now = npl__now();
    pthread_mutex_lock(&phase_lock);
    uint32_t ph = atomic_load(&cur_phase);
    if (!alone && ph < NPL_RAW_PHASES) {
        atomic_fetch_add(&R->phases[ph].barriers, 1);
        double since = now - (last_round > 0 ? last_round : threads_began);
        if (since > longest_round)
            longest_round = since;
        last_round = now;
        rounds_time += since;
        rounds_seen++;
        /* passes a window long or longer (on average): a window each, however quick this one */
        int slow = rounds_time >= NPL_RAW_WINDOW_SECONDS * (double)rounds_seen;
        if ((slow || now - window_began >= NPL_RAW_WINDOW_SECONDS) &&
            atomic_load(&R->nphases) < NPL_RAW_WINDOWS)
            new_window(R, now);
    }
    pthread_mutex_unlock(&phase_lock);
}

void npl__sampler_set_thread(int n)
{
    thread_no = n;
    npl__sampler_publish_thread();
}
int npl__sampler_next_thread(void) { return atomic_fetch_add(&next_thread_no, 1); }
void npl__sampler_set_omp_thread(int n)
{
    if (omp_no == n)
        return;
    omp_no = n;
    npl__sampler_publish_thread();
}

/* A numbered thread begins or ends its start routine. In a program without regions, the main
 * thread alone again after its threads ended (a final pass, a checksum, serial work between
 * fork-joins) records into a phase of its own, not the time window its threads shared: there
 * the exposure weights would multiply its samples by its small exposure (it waited in join),
 * and a pass made once becomes a one-time phase the steady state leaves out. The first thread
 * also starts a new window, so that the main thread's samples before it stay apart. */
void npl__sampler_thread_begin(void)
{
    struct npl_raw *R = npl__sampler_raw();
    pthread_mutex_lock(&phase_lock);
    if (workers_alive++ == 0 && npl__sampler_active() && !atomic_load(&regions_seen) && alone) {
        threads_began = npl__now(); /* a new team: its first round counts from here */
        last_round = 0;
        if (atomic_load(&R->nphases) < NPL_RAW_WINDOWS) /* a window of the threads' own */
            new_window(R, threads_began);
        else
            npl__sampler_set_phase(window_phase);
        alone = 0;
    }
    pthread_mutex_unlock(&phase_lock);
}

void npl__sampler_thread_end(void)
{
    struct npl_raw *R = npl__sampler_raw();
    pthread_mutex_lock(&phase_lock);
    if (--workers_alive == 0 && npl__sampler_active() && !atomic_load(&regions_seen)) {
        if (alone_phase == NPL_RAW_NONE)
            alone_phase = npl__raw_new_phase(R, NPL_RAW_PHASE_WINDOW, NPL_RAW_NONE, 0, 0);
        atomic_fetch_add(&R->phases[alone_phase].entries, 1);
        npl__sampler_set_phase(alone_phase);
        alone = 1;
    }
    pthread_mutex_unlock(&phase_lock);
}

void npl__sampler_region_begin(const void *code)
{
    if (!npl__sampler_active() || atomic_fetch_add(&region_depth, 1) > 0)
        return;
    struct npl_raw *R = npl__sampler_raw();
    pthread_mutex_lock(&phase_lock);
    uint32_t n = atomic_load(&R->nphases), ph = NPL_RAW_NONE;
    for (uint32_t i = 0; i < n; i++)
        if (R->phases[i].kind == NPL_RAW_PHASE_REGION && R->phases[i].code == (uintptr_t)code) {
            ph = i;
            break;
        }
    if (ph == NPL_RAW_NONE) {
        struct npl_site_object o;
        uint32_t obj = NPL_RAW_NONE;
        uint64_t off = 0;
        if (npl__site_object(code, &o) == 0) {
            obj = npl__raw_intern_object(R, &o);
            off = (uint64_t)((uintptr_t)code - o.bias);
        }
        ph = npl__raw_new_phase(R, NPL_RAW_PHASE_REGION, obj, off, (uintptr_t)code);
    }
    atomic_store(&regions_seen, 1);
    atomic_fetch_add(&R->phases[ph].entries, 1);
    npl__raw_transition(R, atomic_exchange(&last_region, ph), ph);
    npl__sampler_set_phase(ph);
    pthread_mutex_unlock(&phase_lock);
}

void npl__sampler_region_end(void)
{
    if (!npl__sampler_active() || atomic_fetch_sub(&region_depth, 1) != 1)
        return;
    struct npl_raw *R = npl__sampler_raw();
    pthread_mutex_lock(&phase_lock);
    if (atomic_load(&serial_phase) == NPL_RAW_NONE)
        atomic_store(&serial_phase, npl__raw_new_phase(R, NPL_RAW_PHASE_SERIAL, NPL_RAW_NONE, 0, 0));
    uint32_t s = atomic_load(&serial_phase);
    atomic_fetch_add(&R->phases[s].entries, 1);
    npl__sampler_set_phase(s);
    pthread_mutex_unlock(&phase_lock);
}

