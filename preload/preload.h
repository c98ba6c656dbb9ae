/* SPDX-License-Identifier: BSD-3-Clause */
/* preload.h - what the parts of libnumaplace_preload.so share (all hidden).
 *
 * libnumaplace_preload.so: numaplace policies for unmodified, dynamically linked programs
 * (`numaplace run` puts it in LD_PRELOAD and sets the variables of preload/env.h). The library is
 * linked in (objects, all symbols local but the interposed ones: see preload.map), so a program
 * that links libnumaplace itself keeps its own, separate copy. One file per concern:
 *   init.c      the constructor: the environment `numaplace run` sets (env.h), messages, libomp
 *   alloc.c     malloc & co., the table of placed blocks, the bootstrap buffer, the fork gate
 *   limits.c    how much memory the process may still use (cgroups, RLIMIT_AS, MemAvailable)
 *   threads.c   pthread_create: thread n of the program on the n-th CPU of NUMAPLACE_PIN;
 *               pthread_barrier_wait: under profile, its rounds end the time windows
 *   children.c  exec, spawn, system, popen and the fork handlers: children of a pinned process
 *               start on the process's CPUs
 *   statics.c   the executable's writable segments, placed before main
 *   regions.c   the one OpenMP region hook (libgomp's GOMP_parallel* entry points interposed;
 *               ompt.c under libomp): the profile's phases, next-touch's re-arm, run --profile
 *   ompt.c      its libomp source (the OMPT tool: parallel_begin/end, implicit_task)
 *   rearm.c     the transparent next-touch mode's re-arm rule (a subscriber of the hook)
 *   profile.c   numaplace profile: large blocks and static arrays tracked by the sampler
 *   apply.c     numaplace run --profile: each array under its advised policy
 *   io.c        read/write and relatives: protected pages given back before a system call */
#ifndef NPL_PRELOAD_H
#define NPL_PRELOAD_H
#include <numaplace.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* ==== ground.c: what every file stands on (it calls nothing of preload/ but limits.c) ==== */
/* ---- configuration, read once by the constructor (init.c) ---- */
struct npl__preload_cfg {
    int active;           /* allocations are intercepted */
    npl_policy *pol;
    size_t threshold;
    long first;           /* 0: every large allocation */
    unsigned flags;
    char *pin;            /* NULL = threads left alone */
    int verbose;          /* NUMAPLACE_VERBOSE: 1 text, 2 JSON lines (run --verbose/--json) */
    char policy[256];     /* the policy's text, for those lines */
    int next_touch;       /* NUMAPLACE_NEXT_TOUCH: register large blocks for next-touch */
    size_t nt_chunk;      /* 0: the library's default chunk */
};
extern struct npl__preload_cfg npl__preload;
/* NUMAPLACE_NEXT_TOUCH is on (large blocks and static data are registered) */
int npl__preload_next_touch(void);

/* ---- messages: on stderr only while fd 2 is the stderr the program started with ---- */
void npl__preload_remember_stderr(void); /* the constructor, first: fd 2 as the program had it */
/* fmt with two string arguments */
void npl__preload_say(const char *fmt, const char *a, const char *b);
/* numaplace run --verbose / --json: one line per large allocation (allocates nothing); how:
 * NPL__PLACED_* */
enum { NPL__PLACED_NOT, NPL__PLACED_POPULATED, NPL__PLACED_LAZY, NPL__PLACED_IN_PLACE };
void npl__preload_tell_alloc(const char *what, const void *p, size_t n, int how, int nt);

/* the calling thread is inside numaplace: its allocations and threads are not intercepted
 * (> 0; alloc.c's hot paths read it directly) */
extern _Thread_local __attribute__((tls_model("initial-exec"))) int npl__preload_in_lib;
/* the next definition of name (dlsym RTLD_NEXT), cached in *cache (ground.c) */
void *npl__preload_next(void **cache, const char *name);
void npl__preload_enter(void);
void npl__preload_leave(void);
int npl__preload_inside(void);

/* placing n bytes that must be populated (under the policy named what) fits what the process may
 * still use (limits.c; else 0, the reason in npl_last_error) */
int npl__preload_fits(size_t n, const char *what);
/* a fresh block of n bytes (align: 0 or a power of two) under plan, the interposer's one way:
 * lazily when lazy_ok and the plan's map has a kernel form, else populated when that fits (what:
 * the policy's name in the reason). *how: NPL__PLACED_LAZY or _POPULATED as tried, _NOT when
 * refused for lack of room. NULL + errno (npl_last_error): the caller uses the real allocator */
void *npl__preload_alloc_block(size_t n, size_t align, const npl_plan *plan, unsigned flags,
                               int lazy_ok, const char *what, int *how);

/* ==== the files that interpose, above the ground ==== */
/* ---- allocations (alloc.c) ---- */
/* the next allocator's functions and pthread_create (dlsym RTLD_NEXT; the bootstrap buffer serves
 * dlsym's own allocations meanwhile) */
void npl__preload_resolve(void);
/* after resolve, from the constructor: is the program's malloc the C library's? (else its blocks
 * are placed where they are: alloc.c's adopt; one line under --verbose) */
void npl__preload_alloc_init(void);
extern int (*npl__real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                       void *);
extern int (*npl__real_pthread_barrier_wait)(pthread_barrier_t *);
/* fork: wait until no thread is inside the library through the interposer and hold the table
 * lock (prepare); release both (parent); reset both (child) */
void npl__preload_alloc_fork_prepare(void);
void npl__preload_alloc_fork_parent(void);
void npl__preload_alloc_fork_child(void);

/* ---- memory limits (limits.c) ---- */
/* find the process's cgroup limit files (constructor) */
void npl__preload_limits_init(void);
/* bytes this process may still use (SIZE_MAX: no limit known), *source naming the tightest
 * limit; allocates nothing */
size_t npl__preload_memory_room(const char **source);

/* ---- children (children.c) ---- */
/* resolve exec/spawn/system/popen (a vfork child must not run dlsym) and install the fork
 * handlers */
void npl__preload_children_init(void);
/* remember the CPUs the process was loaded with (before the main thread is pinned) */
void npl__preload_save_base_cpus(void);

/* ---- static data (statics.c) ---- */
/* the page-aligned inside of the executable's writable segments of at least threshold bytes */
int npl__preload_static_ranges(uintptr_t *lo, uintptr_t *hi, size_t threshold);
/* place them under the policy (and register them for next-touch in that mode) */
void npl__preload_place_static(void);

/* signals.c: a thread about to be created inherits its creator's view of SIGSEGV/SIGBUS blocks:
 * start/arg are wrapped when there is one to carry; the returned block is freed by the new thread,
 * or by the caller (free) if the thread is not created. NULL: nothing wrapped. */
void *npl__preload_signals_wrap(void *(**start)(void *), void **arg);

/* ---- OpenMP parallel regions (regions.c, ompt.c): one hook for every user ----
 * npl__regions_subscribe(fn, arg, events): fn(region, arg) is called for the events asked
 * (a mask), whichever runtime runs the region (libgomp: its GOMP_parallel* entry points,
 * interposed; LLVM's libomp: OMPT):
 *  - NPL__REGION_BEGIN: the start of every parallel region the program starts, on the
 *    encountering thread, before the team starts;
 *  - NPL__REGION_END: its end, on the same thread, after the team joined (the same fields);
 *  - NPL__REGION_THREAD: on each thread of a team as it starts the region: thread is its number
 *    in the team (the other fields are 0, index -1).
 * Subscribe from a constructor (before the first region; the OMPT tool is only started when
 * someone subscribed, or NUMAPLACE_NEXT_TOUCH, NUMAPLACE_PROFILE_SHM or NUMAPLACE_PROFILE_APPLY is
 * set). Calls may come from several threads at once (nested regions); fn runs inside the
 * interposer (npl__preload_enter: its allocations and threads are not intercepted) and must not
 * start parallel regions. Up to 8 subscribers; 0, or -1 when full, fn is NULL or events 0. */
enum { NPL__REGION_GOMP = 1, NPL__REGION_OMPT = 2 }; /* where a region entry was seen */
enum { NPL__REGION_BEGIN = 1, NPL__REGION_END = 2, NPL__REGION_THREAD = 4 }; /* events (bits) */
struct npl__region {
    int event;         /* NPL__REGION_BEGIN, _END or _THREAD */
    const void *code;  /* the region's code address: the outlined body (libgomp ABI) or OMPT's
                        * codeptr_ra (libomp); a run-time address: dladdr() gives object+offset */
    uint64_t seq;      /* region entries in the process so far, this one included (1, 2, ...) */
    uint64_t count;    /* entries of this code address so far, this one included (1: new) */
    int index;         /* a small id of the code address (< 4096), -1 past the table */
    unsigned threads;  /* the team size asked (num_threads, else the runtime's default); 0 unknown */
    int level;         /* nesting level of the region: 1 outermost */
    int source;        /* NPL__REGION_GOMP or NPL__REGION_OMPT */
    int thread;        /* NPL__REGION_THREAD: the thread's number in its team; else -1 */
};
typedef void (*npl__region_fn)(const struct npl__region *region, void *arg);
int npl__regions_subscribe(npl__region_fn fn, void *arg, unsigned events);
/* someone subscribed */
int npl__regions_wanted(void);
/* the sources (the GOMP wrappers, ompt.c): a region entry; a second report of a region already
 * reported (its end is not reported again either); the end of the innermost region this thread
 * entered; this thread's number in the team it starts */
void npl__regions_enter(const void *code, unsigned threads, int source);
void npl__regions_enter_again(void);
void npl__regions_leave(void);
void npl__regions_thread(int num);
/* addr lies inside libnumaplace_preload.so */
int npl__regions_in_self(const void *addr);
struct npl__regions_stats {
    uint64_t entries, distinct;
    int sources; /* bits 1 << NPL__REGION_GOMP, 1 << NPL__REGION_OMPT */
};
void npl__regions_stats(struct npl__regions_stats *out);

/* ---- the transparent next-touch mode (rearm.c) ---- */
/* subscribe the re-arm rule (constructor, NUMAPLACE_NEXT_TOUCH on, no profile applied) */
void npl__rearm_init(void);
/* a profile's exact rule for one range: the range registered at base is re-armed at the entries
 * of these region code addresses that follow an entry of another region, and at no other; the
 * online rule leaves it alone. n = 0 gives it back to the online rule. 0, or -1 (no such
 * registered range yet, or no memory) */
int npl__rearm_set_regions(const void *base, const void *const *codes, int n);

/* ---- numaplace profile (profile.c): subscribes the sampler's phases to the region hook ---- */
int npl__preload_profile_init(size_t threshold); /* 1: profiling */
int npl__preload_profiling(void);
void npl__preload_profile_track_statics(void); /* the static arrays, once placed */
/* a tracked large block allocated at site (npl__site_attribute's; NULL: none); its release */
void *npl__preload_profile_map(size_t n, const void *site);
void npl__preload_profile_unmap(void *p, size_t n);
void npl__preload_profile_exec(int failed); /* before an exec (0), after a failed one (1) */

/* ---- numaplace run --profile (apply.c): arms its phase-changing arrays at region entries ---- */
int npl__preload_apply_init(size_t threshold); /* 1: a profile is applied */
int npl__preload_apply_active(void);
/* a block of n bytes allocated at site (npl__site_attribute's), under the profile's policy for
 * that site (def when the profile has none); NULL: the caller allocates as usual. ord (may be
 * NULL): the ordinal it was matched by (numaplace profile --profile tracks the block by site and
 * ordinal); how (may be NULL): NPL__PLACED_LAZY or NPL__PLACED_POPULATED */
void *npl__preload_apply_alloc(size_t n, const void *site, const npl_policy *def, unsigned flags,
                               uint32_t *ord, int *how);
int npl__preload_apply_free(void *p); /* 1: p was registered for next-touch by the advice */
/* the program's allocator's block, its whole pages [lo, lo + len) allocated at site: placed in
 * place as the profile advises (def when the profile has none); *ord: its ordinal. Returns
 * NPL__PLACED_IN_PLACE or NPL__PLACED_NOT. A block registered for next-touch is forgotten by
 * npl_next_touch_disarm(lo) where npl__preload_apply_free(lo) says it was. */
int npl__preload_apply_in_place(void *lo, size_t len, const void *site, const npl_policy *def,
                                unsigned flags, uint32_t *ord);
void npl__preload_apply_statics(size_t threshold, const npl_policy *def, unsigned flags);

/* ---- system calls into tracked memory (io.c) ---- */
void npl__preload_io_resolve(void);

#endif
