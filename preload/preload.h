/* preload.h - what the parts of libnumaplace_preload.so share (all hidden).
 *
 * libnumaplace_preload.so: numaplace policies for unmodified, dynamically linked programs
 * (`numaplace run` puts it in LD_PRELOAD and sets the variables of preload/env.h). The library is
 * linked in (objects, all symbols local but the interposed ones: see preload.map), so a program
 * that links libnumaplace itself keeps its own, separate copy. One file per concern:
 *   init.c      the constructor: the environment `numaplace run` sets (env.h), messages, libomp
 *   alloc.c     malloc & co., the table of placed blocks, the bootstrap buffer, the fork gate
 *   threads.c   pthread_create: thread n of the program on the n-th CPU of NUMAPLACE_PIN
 *   children.c  exec, spawn, system, popen and the fork handlers: children of a pinned process
 *               start on the process's CPUs
 *   statics.c   the executable's writable segments, placed before main
 *   regions.c   the one OpenMP region-entry hook (libgomp's GOMP_parallel* entry points)
 *   ompt.c      its libomp source (the OMPT tool: parallel_begin)
 *   rearm.c     the transparent next-touch mode's re-arm rule (a subscriber of the hook) */
#ifndef NPL_PRELOAD_H
#define NPL_PRELOAD_H
#include <numaplace.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

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

/* ---- messages (init.c): on stderr only while fd 2 is the stderr the program started with ---- */
/* fmt with two string arguments */
void npl__preload_say(const char *fmt, const char *a, const char *b);
/* numaplace run --verbose / --json: one line per large allocation (allocates nothing) */
void npl__preload_tell_alloc(const char *what, const void *p, size_t n, int placed, int nt);

/* ---- allocations (alloc.c) ---- */
/* the calling thread is inside numaplace: its allocations and threads are not intercepted */
void npl__preload_enter(void);
void npl__preload_leave(void);
int npl__preload_inside(void);
/* the next allocator's functions and pthread_create (dlsym RTLD_NEXT; the bootstrap buffer serves
 * dlsym's own allocations meanwhile) */
void npl__preload_resolve(void);
extern int (*npl__real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                       void *);
/* fork: wait until no thread is inside the library through the interposer and hold the table
 * lock (prepare); release both (parent); reset both (child) */
void npl__preload_alloc_fork_prepare(void);
void npl__preload_alloc_fork_parent(void);
void npl__preload_alloc_fork_child(void);

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

/* ---- OpenMP region entries (regions.c, ompt.c): one hook for every user ----
 * npl__regions_subscribe(fn, arg): fn(region, arg) is called at the start of every parallel
 * region the program starts, on the encountering thread, before the team starts, whichever
 * runtime runs it (libgomp: its GOMP_parallel* entry points, interposed; LLVM's libomp: OMPT's
 * parallel_begin). Subscribe from a constructor (before the first region; the OMPT tool is only
 * started when someone subscribed or NUMAPLACE_NEXT_TOUCH is on). Calls may come from several
 * threads at once (nested regions); fn runs inside the interposer (npl__preload_enter: its
 * allocations and threads are not intercepted) and must not start parallel regions. Region ends
 * are not reported. Up to 8 subscribers; 0, or -1 when full or fn is NULL. */
enum { NPL__REGION_GOMP = 1, NPL__REGION_OMPT = 2 }; /* where a region entry was seen */
struct npl__region {
    const void *code;  /* the region's code address: the outlined body (libgomp ABI) or OMPT's
                        * codeptr_ra (libomp); a run-time address: dladdr() gives object+offset */
    uint64_t seq;      /* region entries in the process so far, this one included (1, 2, ...) */
    uint64_t count;    /* entries of this code address so far, this one included (1: new) */
    int index;         /* a small id of the code address (< 4096), -1 past the table */
    unsigned threads;  /* the team size asked (num_threads, else the runtime's default); 0 unknown */
    int level;         /* nesting level of the new region: 1 outermost */
    int source;        /* NPL__REGION_GOMP or NPL__REGION_OMPT */
};
typedef void (*npl__region_fn)(const struct npl__region *region, void *arg);
int npl__regions_subscribe(npl__region_fn fn, void *arg);
/* someone subscribed */
int npl__regions_wanted(void);
/* report one region entry (the GOMP wrappers, ompt.c) */
void npl__regions_enter(const void *code, unsigned threads, int source);
/* addr lies inside libnumaplace_preload.so */
int npl__regions_in_self(const void *addr);
struct npl__regions_stats {
    uint64_t entries, distinct;
    int sources; /* bits 1 << NPL__REGION_GOMP, 1 << NPL__REGION_OMPT */
};
void npl__regions_stats(struct npl__regions_stats *out);

/* ---- the transparent next-touch mode (rearm.c) ---- */
/* subscribe the re-arm rule (constructor, NUMAPLACE_NEXT_TOUCH on) */
void npl__rearm_init(void);
/* a profile's exact rule for one range (run --profile): the range registered at base is re-armed
 * at the entries of these region code addresses that follow an entry of another region, and at no
 * other; the online rule leaves it alone. n = 0 gives it back to the online rule. 0, or -1 (no
 * such registered range yet, or no memory) */
int npl__rearm_set_regions(const void *base, const void *const *codes, int n);

#endif
