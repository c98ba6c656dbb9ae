/* SPDX-License-Identifier: BSD-3-Clause */
/* profile/profile.h - measured access profiles (docs/AUTO.md, docs/PROFILE.md): the profile format
 * v1 (the model's functions: model.c; its schema: format.c reads, format_write.c writes,
 * format_advice.c an array's advice; on its own JSON lexer and writer, json.c: no dependency),
 * the per-array classifier
 * (classify*.c: pure), and the run-time side: site identity (site.c), the sampler and its raw
 * profile (sampler.c), the raw profile made a profile (collect.c), the library's arrays reported
 * under `numaplace profile` (notify.c), the sampling backends (backends.c). Private to the
 * library; the numaplace command's UNSTABLE face: its functions have default visibility and those
 * the command calls are exported from libnumaplace.so at version NUMAPLACE_PRIVATE
 * (src/libnumaplace.map): no stability promised, not installed, compiled once.
 *
 * Errors: -1 with errno (EINVAL bad input, ENOMEM, EFBIG file too large, the errno of open/read)
 * and a message naming the problem in err (errsz bytes, may be NULL); in the library also
 * npl_last_error(). */
#ifndef NPL_PROFILE_H
#define NPL_PROFILE_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(default) /* the command's unstable face (above) */

/* ---- limits of format v1: larger values are rejected as absurd ---- */
#define NPL_PROF_MAX_TEXT ((size_t)256 << 20) /* bytes of a profile file */
#define NPL_PROF_MAX_DEPTH 16                 /* nesting of JSON arrays/objects */
#define NPL_PROF_MAX_STRING 4096              /* bytes of one string */
#define NPL_PROF_MAX_NODES 1024               /* machine nodes; node ids <= 65535 */
#define NPL_PROF_MAX_NODE_ID 65535
#define NPL_PROF_MAX_THREADS 1024
#define NPL_PROF_MAX_PHASES 65536
#define NPL_PROF_MAX_TRANSITIONS (1 << 20)
#define NPL_PROF_MAX_ARRAYS 65536
#define NPL_PROF_MAX_CHUNKS ((uint64_t)1 << 22) /* chunks of one array */
#define NPL_PROF_MAX_SAMPLES ((size_t)1 << 24)  /* sample rows of one array */
#define NPL_PROF_MAX_COUNT ((uint64_t)1 << 40)  /* reads or writes of one sample row */
#define NPL_PROF_MAX_BYTES ((uint64_t)1 << 50)  /* bytes of one array (1 PiB) */

/* ---- classifier thresholds (docs/PROFILE.md §7 says where each comes from) ---- */
#define NPL_PROF_MIN_SAMPLES 64        /* fewer sampled accesses: too-few-samples, first touch */
#define NPL_PROF_OWNED 0.80            /* kMAF/anchors: exclusivity >= 0.8 is owned */
#define NPL_PROF_READ_MOSTLY 0.05      /* Carrefour: write ratio <= 5% counts as read-mostly */
#define NPL_PROF_SERIAL 0.90           /* one thread makes >= 90% of the accesses */
#define NPL_PROF_PHASE_MIN 32          /* a phase with fewer samples is not judged alone */
#define NPL_PROF_PHASE_SHARE 0.05      /* ... nor one with less than 5% of the array's samples */
#define NPL_PROF_PHASE_GAIN 0.10       /* next-touch must beat one static placement by this */
#define NPL_PROF_MIGRATE_RATE 262144.0 /* pages/s moved by next-touch when the machine's rate is
                                        * not given (1 GiB/s of 4 KiB pages; bench/migrate_bench
                                        * measures a machine's) */
#define NPL_PROF_REMOTE_PENALTY 0.5   /* a phase's time saved per point of locality gained */
#define NPL_PROF_PHASE_SERVE 0.10      /* a placement serves a phase within this of its best */
#define NPL_PROF_STEADY_MIN 0.5        /* a steady state holds at least half of the accesses */
#define NPL_PROF_STEADY_MIN_WINDOWS 0.6 /* ... 60%, cut by time windows alone */
/* A prediction over the whole run of a placement fitted on one stretch of time windows weighs the
 * stretch and the rest by their samples, which count sampled time, not the program's passes: the
 * two halves of an array mirrored half-way (equal passes) held 0.44-0.56 of the samples in 8 of 10
 * guest profiles. That much of the difference between the two parts' local fractions is added to
 * the +/- */
#define NPL_PROF_PART_SHARE_ERR 0.10
#define NPL_PROF_MARGIN_ABS 0.02       /* the guard: within max(2 points, 5% of the best) */
#define NPL_PROF_MARGIN_REL 0.05
#define NPL_PROF_EXPLICIT_GAIN 0.02    /* an explicit map beats a shape by more: the map */
#define NPL_PROF_SPAN_BINS 8         /* a node's fault samples read a read-mostly array "across
                                      * its length" in half the parts of 8 sampled at all */
#define NPL_PROF_CHUNK_GAIN 0.10     /* a shared array's per-chunk map must beat its top node's
                                      * share by this for its skew to count as per-chunk owners;
                                      * less: a global skew (classify_cost.c) */
#define NPL_PROF_EXPLICIT_MIN_GAIN 0.005 /* or by this much at least, when that is half of the
                                          * shape's misses: the map */

enum npl_prof_pattern {
    NPL_PAT_TOO_FEW = 0,
    NPL_PAT_SERIAL,
    NPL_PAT_BLOCKED,
    NPL_PAT_CYCLIC,
    NPL_PAT_SHARED_READ,
    NPL_PAT_SHARED_WRITTEN,
    NPL_PAT_PHASE_CHANGING,
    NPL_PAT_IRREGULAR,
    NPL_PAT_COUNT
};
/* "too-few-samples", "serial", "blocked", "cyclic", "shared-read-mostly", "shared-written",
 * "phase-changing", "irregular"; NULL outside the enum */
const char *npl__pattern_name(int pattern);
int npl__pattern_parse(const char *name); /* -1 if unknown */

enum npl_prof_site_kind { NPL_SITE_HEAP = 0, NPL_SITE_STATIC = 1 };
enum npl_prof_binding { NPL_BIND_NONE = 0, NPL_BIND_PIN = 1, NPL_BIND_OMP = 2 };
enum npl_prof_backend { NPL_BACKEND_FAULT = 0, NPL_BACKEND_PERF = 1, NPL_BACKEND_COUNT };
enum npl_prof_phase_kind { NPL_PHASE_REGION = 0, NPL_PHASE_WINDOW = 1 };

/* Where an array comes from, the same on the next run (never an address). */
struct npl_prof_site {
    char *object;   /* the ELF object holding the call site (or the static array) */
    char *build_id; /* its GNU build-id, lower-case hex, or NULL */
    uint64_t offset;  /* call site (return address) or static array, from the object's base */
    uint64_t ordinal; /* k-th allocation made at that site (0 first) */
    int kind;         /* enum npl_prof_site_kind */
    char *symbol;     /* a static array's symbol, or the calling function's, or NULL */
    char *where;      /* "file.c:42" from debug information, or NULL */
    uint64_t line_offset; /* the return address's bytes past the start of where's code, when */
    int has_line_offset;  /* known (matches the site again in a rebuilt binary: cli/sites.c) */
};

/* One row of sampled accesses: phase (index into the profile's phases), chunk, thread; of them,
 * local and remote: those whose page was on the thread's node, on another (the measured locality;
 * the rest unknown; both 0 in a profile without it). */
struct npl_prof_sample {
    uint32_t phase, chunk, thread;
    uint64_t reads, writes;
    uint64_t local, remote;
};

/* The CPU time one thread ran in one phase while pages were armed (its exposure there): phase
 * an index into the phases (as a sample row's), seconds >= 0. */
struct npl_prof_exposure {
    uint32_t phase, thread;
    double seconds;
};

/* qsort order of exposures: by phase, then thread */
int npl__prof_exposure_cmp(const void *x, const void *y);

/* The sampled accesses one thread made in one phase, over every array of the profile (the rate
 * at which the sampler saw it at all: npl__masked_readers). */
struct npl_prof_tally {
    uint32_t phase, thread;
    double accesses;
};
int npl__prof_tally_cmp(const void *x, const void *y); /* the same order */

struct npl_prof_phase {
    uint32_t id;
    int kind;                    /* enum npl_prof_phase_kind */
    struct npl_prof_site *site;  /* a region's code address, or NULL */
    uint64_t entries;            /* times the phase was entered */
    int has_seconds;             /* its duration was recorded (optional: older profiles lack it) */
    double seconds;              /* wall time it was the current phase, summed over its stretches */
    uint64_t barriers;           /* pthread barrier rounds completed in it (a time window; 0: none
                                  * or not recorded) */
};

/* Phase "from" was followed by phase "to" count times (indexes into the phases). */
struct npl_prof_transition {
    uint32_t from, to;
    uint64_t count;
};

#define NPL_PROF_MAX_CANDIDATES 48
/* One placement the classifier evaluated, with its predicted local fraction. */
struct npl_prof_candidate {
    char policy[160];
    double local;
    int scalable; /* holds at another input size (every shape; not an explicit chunk map) */
};

/* What an advice (or its fallback at another size) is: a value, never a sentinel string. */
enum npl_prof_advice_kind {
    NPL_ADVICE_FIRST_TOUCH = 0, /* the default: nothing placed */
    NPL_ADVICE_POLICY,          /* a policy (its string in policy / fallback) */
    NPL_ADVICE_MAP              /* a node per chunk (chunk_nodes); as a fallback: the map scaled */
};

/* The classifier's output for one array (also read back from a profile's "advice"). */
struct npl_prof_advice {
    int pattern;               /* enum npl_prof_pattern */
    int kind;                  /* enum npl_prof_advice_kind (npl__advice_set) */
    char policy[192];          /* its text: the policy string, "first_touch", or the map's name */
    uint64_t period_pages;     /* cyclic: k, the period of the owners in pages; else 0 */
    int block_threads;         /* blocked and cyclic: threads of the fitted schedule; else 0 */
    int *chunk_nodes;          /* NPL_ADVICE_MAP: node per chunk (-1: left alone); else NULL */
    int fallback_kind;         /* MAP at another number of pages: FIRST_TOUCH, POLICY (fallback)
                                * or MAP (the map scaled); decided when classified, stored */
    char fallback[192];        /* its policy string (fallback_kind POLICY) */
    int has_fallback;          /* decided by the classifier or read: written with the advice (a
                                * profile written before the field keeps it derived, unwritten) */
    uint64_t nchunk_nodes;
    int replicate;             /* read-mostly shared data: replicas (library API) would serve it */
    uint32_t *next_touch;      /* phase ids at which next-touch must re-arm (phase-changing) */
    uint32_t nnext_touch;
    double confidence;         /* [0, 1] */
    double local_policy;       /* predicted local fraction under the advice */
    double local_err;          /* its uncertainty (+/-; advice.local.err; -1 not known: read
                                * from a profile written before it) */
    double local_run;          /* predicted over every sampled access, one-time phases too (not
                                * stored: the profile's local.policy is the steady state's) */
    double local_first_touch;  /* under first touch as observed; < 0: not known */
    double local_best;         /* the best any evaluated placement reaches */
    uint64_t samples;          /* sampled accesses it was decided on */
    char reason[4096];         /* the schema's maxLength: statements never cut */
    /* evaluated candidates (not stored in the profile), best first */
    struct npl_prof_candidate cand[NPL_PROF_MAX_CANDIDATES];
    int ncand;
};

/* The measured locality of sampled accesses (the sampled page's node against the accessing
 * thread's, asked when the access was sampled): indexes of measured[]. */
enum { NPL_MEASURED_LOCAL = 0, NPL_MEASURED_REMOTE = 1, NPL_MEASURED_UNKNOWN = 2 };

struct npl_prof_array {
    struct npl_prof_site site;
    uint64_t bytes, chunk_bytes, nchunks;
    int32_t *first_touch;          /* nchunks entries: thread, or -1 unknown */
    struct npl_prof_sample *samples;
    size_t nsamples;
    int has_advice;
    struct npl_prof_advice advice; /* valid when has_advice */
    int has_measured;              /* "measured": the sampled pages' nodes were asked */
    uint64_t measured[3];          /* NPL_MEASURED_*: samples on the thread's node, not, unknown */
};

struct npl_profile {
    char *program_path, *program_build_id;
    int *nodes;
    int nnodes;
    uint64_t page_size;
    double migrate_rate;           /* machine.migrate_pages_s: pages a second the machine
                                    * migrates (its config's, from numaplace measure); 0: not
                                    * known */
    int threads;
    int *thread_nodes;             /* threads entries */
    int *thread_cpus;              /* threads entries, or NULL */
    double *thread_exposure;       /* threads entries: CPU seconds each ran while pages were
                                    * armed (its exposure to the sampler), or NULL */
    struct npl_prof_exposure *phase_exposure; /* the same split by phase (sorted by phase, then
                                               * thread; none zero), or NULL */
    size_t nphase_exposure;
    int binding;                   /* enum npl_prof_binding */
    char *binding_detail;          /* "compact", "OMP_PLACES=cores ..." or NULL */
    int backend;                   /* enum npl_prof_backend */
    double rate, seconds;
    uint64_t samples;
    int rw_known;                  /* reads and writes told apart */
    int has_measured;              /* sampling.measured: the sum over the arrays */
    uint64_t measured[3];          /* NPL_MEASURED_* */
    int has_concurrency;           /* sampling.concurrency (optional): */
    uint64_t rounds_crowded;       /* rounds (pages armed) in which two threads or more ran */
    uint64_t rounds_together;      /* of them, rounds in which they ran together */
    int idle_sleep;                /* sampling.omp_wait "passive": the OpenMP runtime's idle
                                    * threads slept (OMP_WAIT_POLICY=passive, no spin count set),
                                    * so a thread's CPU time in a region is work; 0: they may
                                    * have spun (or not known) */
    struct npl_prof_phase *phases; /* in the order of their first entry */
    uint32_t nphases;
    struct npl_prof_transition *transitions;
    uint32_t ntransitions;
    struct npl_prof_array *arrays;
    uint32_t narrays;
};

/* ---- format.c, format_write.c, model.c ---- */
/* Parse profile text (len bytes, no NUL needed). *out: a new profile (npl__profile_free). */
int npl__profile_parse(const char *text, size_t len, struct npl_profile **out, char *err,
                       size_t errsz);
/* Read and parse a file (EFBIG over NPL_PROF_MAX_TEXT; a FIFO or device is EINVAL). */
int npl__profile_load(const char *path, struct npl_profile **out, char *err, size_t errsz);
/* The profile as JSON text (malloc'ed, NUL-terminated; *len its length), the advice of arrays
 * that have one included. NULL + errno on failure. Parses again to the same profile. */
char *npl__profile_format(const struct npl_profile *p, size_t *len);
void npl__profile_free(struct npl_profile *p);
/* A synthetic topology of the profile's machine (its node ids, one CPU each) for the classifier. */
int npl__profile_topo(const struct npl_profile *p, npl_topo **out, char *err, size_t errsz);
/* "file.c:42" if set, else "OBJECT+0xOFFSET[#ORDINAL]" (basename of the object). */
void npl__site_label(const struct npl_prof_site *s, char *buf, size_t size);
void npl__advice_clear(struct npl_prof_advice *a); /* frees chunk_nodes / next_touch */
/* a's kind and its text: policy (POLICY; NULL otherwise: "first_touch" or the map's name) */
void npl__advice_set(struct npl_prof_advice *a, int kind, const char *policy);
/* the text of a kind without a string of its own: "first_touch", the map's name; NULL: POLICY */
const char *npl__advice_kind_text(int kind);
/* Set errno, the message (and npl_last_error() in the library): returns -1. */
int npl__prof_fail(char *err, size_t errsz, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- classify*.c, the advice layer (pure: no system call, no file, no environment) ---- */
/* What the classifier needs of one array. Thread t is numbered as numaplace pins threads
 * (OpenMP: the main thread 0, then creation order). */
struct npl_prof_input {
    uint64_t bytes, chunk_bytes, page_size, nchunks;
    const int32_t *first_touch;            /* nchunks: thread or -1; NULL: unknown */
    const struct npl_prof_sample *samples; /* phase = index into phases */
    size_t nsamples;
    int nthreads;
    const int *thread_nodes;               /* node OS id of each thread */
    int rw_known;
    int fault_samples;                     /* the fault sampler's: a sample names the first
                                            * thread to touch an armed page, not its top user */
    const char *pin;                       /* the profile's pin strategy ("compact", "scatter"), or NULL */
    const struct npl_prof_phase *phases;   /* in order of first entry; NULL: one phase */
    uint32_t nphases;
    const struct npl_prof_transition *transitions;
    uint32_t ntransitions;
    const double *phase_seconds;           /* nphases: seconds spent in each; NULL: each phase's
                                            * own (phases[p].seconds where has_seconds), else
                                            * not known */
    double migrate_rate;                   /* pages a second the machine migrates; 0: the
                                            * default NPL_PROF_MIGRATE_RATE */
    const double *thread_exposure;         /* nthreads: each thread's exposure (seconds it ran
                                            * while pages were armed); NULL: not known */
    const struct npl_prof_exposure *phase_exposure; /* the same by phase, sorted (a profile's
                                                     * are); NULL: not known (thread_exposure
                                                     * then weighs) */
    size_t nphase_exposure;
    const struct npl_prof_tally *phase_tally; /* every array's sampled accesses by phase and
                                               * thread, sorted; NULL: this array's alone */
    size_t nphase_tally;
    int idle_sleep;                        /* OpenMP's idle threads slept (npl_profile's): CPU
                                            * time in a region is work, as in a time window */
    const struct npl_prof_exposure *turns; /* the threads took turns (npl__profile_took_turns):
                                            * every array's sampled accesses by phase and
                                            * thread, sorted, as the samples' weights' exposures
                                            * (each thread weighed alike in a phase); NULL: they
                                            * ran together */
    size_t nturns;
};

/* Each thread's weight (nthreads entries) that normalises its sampled accesses by its exposure:
 * a thread that ran half as long while pages were armed, at the same rate of accesses, has half
 * the samples and weighs twice. Weights are the mean exposure over the thread's (threads with
 * none recorded: 1), capped to [1/NPL_PROF_EXPOSURE_CAP, NPL_PROF_EXPOSURE_CAP], then scaled so
 * that the samples' weighted total is their raw total (the classifier's sample thresholds and
 * uncertainties keep their meaning). Returns 1 when some weight differs from 1, else 0 (all 1:
 * no exposure, or all equal). Pure. */
#define NPL_PROF_EXPOSURE_CAP 8.0
/* A round in which k threads ran (each at least 1/10 of it) counts as "together" when their CPU
 * time sums to at least NPL_PROF_TOGETHER x k rounds' time: a thread alone on its CPU runs the
 * whole round unless it waits; two threads to a CPU run half of it each */
#define NPL_PROF_TOGETHER 0.6
#define NPL_PROF_CROWDED_MIN 5 /* rounds of two threads or more before a warning is given */
/* One line (no newline) when the profile's threads did not run together: in most rounds in
 * which two threads or more ran (at least NPL_PROF_CROWDED_MIN), they shared CPUs (an
 * oversubscribed machine, a guest's virtual CPUs); or the exposures of the threads that were
 * sampled differ by more than NPL_PROF_EXPOSURE_CAP (beyond it the weights cannot correct them).
 * Returns 1 (buf: the warning), else 0. Pure. */
int npl__profile_run_warning(const struct npl_profile *p, char *buf, size_t size);
/* 1 when the profile's threads took turns: in most sampler rounds in which two threads or more
 * ran (at least NPL_PROF_CROWDED_MIN), they shared CPUs. Pure. */
int npl__profile_took_turns(const struct npl_profile *p);
/* Each thread's weight (mean exposure / its own, capped to [1/CAP, CAP]), scaled so that the
 * weighted samples of the phases phase_weighed marks (NULL: every phase) keep their total; a
 * phase one thread had alone keeps its counts (its thread competed with nobody for the armed
 * pages). Returns 1 when some weight is not 1, else 0 (every weight 1). Pure. */
int npl__exposure_weights(const double *exposure, int nthreads,
                          const struct npl_prof_sample *samples, size_t nsamples,
                          const unsigned char *phase_weighed, double *weight);
/* The same, phase by phase, from the exposures by phase: in each phase phase_weighed marks (NULL:
 * every phase) where every sampled thread has an exposure, each sample's weight is the phase's
 * mean exposure over its thread's (capped likewise), scaled so that the phase's weighted samples
 * keep its raw total (phases keep their shares); elsewhere 1. Whole-run exposures misjudged a
 * main thread that also ran the serial parts: its samples of a parallel phase weighed 0.5, the
 * others' 1.4, and a phase-changing array looked owned (contract_calls, 4 profiles of 14).
 * weight: nsamples entries. Returns 1 when some weight is not 1, 0 when none, -1 out of memory. */
int npl__exposure_weights_by_phase(const struct npl_prof_exposure *exposure, size_t nexposure,
                                   const struct npl_prof_sample *samples, size_t nsamples,
                                   const unsigned char *phase_weighed, double *weight);
/* Readers the first toucher hid: in a time window (a program without regions, where no OpenMP
 * runtime spins), or an OpenMP region where idle threads slept (in->idle_sleep), of a read-mostly
 * array, a thread sampled on it that ran at least half as long
 * as the array's top thread there, but was seen over every array (tally) at less than a
 * NPL_PROF_MASKED-th of the top thread's rate a second, reached the shared pages after it: its
 * samples of the window weigh rate_top / rate_its (capped at NPL_PROF_EXPOSURE_CAP), the window
 * keeping its total. A thread that touched little there but was seen elsewhere keeps its weight.
 * weight: nsamples entries, multiplied in place. Returns the threads boosted (0: none), -1 out
 * of memory. Pure. */
#define NPL_PROF_MASKED 4.0
int npl__masked_readers(const struct npl_prof_input *in, const unsigned char *phase_weighed,
                        double *weight);
/* every array's sampled accesses of p by phase and thread (sorted); NULL with *n 0 when none or
 * out of memory (the classifier then judges each array alone) */
struct npl_prof_tally *npl__profile_tally(const struct npl_profile *p, size_t *n);

/* A classifier context: the machine's nodes and the thread count (it builds the helper
 * topologies once). topo: the machine (a synthetic one from npl__profile_topo() or any npl_topo
 * whose usable nodes are the machine's). */
struct npl_prof_ctx;
int npl__classify_ctx(struct npl_prof_ctx **out, const npl_topo *topo, int nthreads, char *err,
                      size_t errsz);
void npl__classify_ctx_free(struct npl_prof_ctx *c);
/* Classify one array: fills *out (npl__advice_clear frees what it holds). */
int npl__classify(struct npl_prof_ctx *c, const struct npl_prof_input *in,
                  struct npl_prof_advice *out, char *err, size_t errsz);
/* After every array of p is classified (adv[i]: array i's advice, or NULL): an array with too
 * few samples takes the blocked or cyclic advice of the best-sampled array of its call site.
 * final (NULL: none): final[i] != 0 marks advice that is a source only, never changed (stored in
 * the profile, where these rules already ran; its map is the profile's). */
void npl__advice_siblings(const struct npl_profile *p, struct npl_prof_advice *const *adv,
                          const int *final);
/* Array `from`'s explicit per-chunk map (nmap chunks) scaled onto n units of another array of
 * `bytes` bytes asked for (unit: a unit's bytes; 0, 0: sizes unknown, scale by counts): each unit
 * takes the node that holds the most of the same relative range of the program's data (the
 * lowest node on a tie; -1 where that range is left alone). The classifier's call-site siblings
 * and `run --profile` at another size both scale by it. malloc'd; NULL: out of memory. */
int *npl__scaled_map(const struct npl_prof_array *from, const int *map, uint64_t nmap,
                     uint64_t bytes, uint64_t unit, uint64_t n);
/* The node of each page (`page` bytes) of a fresh array of `bytes` bytes asked for, under array
 * a's explicit map: chunk by chunk at the profiled number of pages, else the map scaled
 * (npl__scaled_map). malloc'd; NULL: out of memory. */
int *npl__explicit_pages(const struct npl_prof_array *a, uint64_t bytes, uint64_t page);
/* Array a, advised a map, allocated at another number of pages (a map holds at the profiled size
 * only): its stored fallback, decided when it was classified (no classifier runs in the program):
 * *pol the policy (NULL: first touch, the default), or *scale = 1: the map scaled
 * (npl__explicit_pages). 0, or -1 + errno (a fallback that does not parse, out of memory). */
int npl__advice_elsewhere(const struct npl_prof_array *a, npl_policy **pol, int *scale);
/* Classify every array of p (one entry for numaplace profile and advise): adv[i] receives array
 * i's advice, except where stored[i] != 0 (stored is NULL or narrays flags: adv[i] already holds
 * the profile's stored advice, a source for its call-site siblings only); then the siblings'
 * rules (npl__advice_siblings). The machine is the profile's (npl__profile_topo). */
int npl__advise_profile(const struct npl_profile *p, struct npl_prof_advice *const *adv,
                        const int *stored, char *err, size_t errsz);
/* The next-touch chunk (bytes) for array a when it is armed at the phase of id `phase` (one of
 * its advice's next_touch phases; NPL_RAW_NONE: all of them together): the largest power-of-two
 * multiple of its profile chunk, at most max_bytes, whose aligned groups keep the nodes of that
 * phase's owners (a group moves as one, to its first toucher's node): the sampled accesses that
 * each group's top node makes lose at most 2% of all of them against one chunk per group. 0 (the
 * caller's default) when a's chunk is max_bytes or more or the phase has no sample. Pure. */
uint64_t npl__next_touch_chunk(const struct npl_profile *p, const struct npl_prof_array *a,
                               uint32_t phase, uint64_t max_bytes);
/* The input of array a of profile p. */
void npl__profile_input(const struct npl_profile *p, const struct npl_prof_array *a,
                        struct npl_prof_input *in);

#include <signal.h>

/* ==== the run-time side: site identity (site.c) ==== */
#define NPL_SITE_PATH 512
struct npl_site_object {
    uintptr_t bias, lo, hi; /* load bias; [lo, hi) covers its PT_LOAD segments */
    int runtime;            /* the C, C++ or Fortran runtime, or numaplace: walked out of */
    int openmp;             /* an OpenMP runtime (its blocks are its caller's) */
    int own;                /* libnumaplace.so (its blocks are its own: npl__site_attribute) */
    int tool;               /* a sanitizer's runtime: what it allocates itself is its own */
    int main;               /* the program itself */
    char path[NPL_SITE_PATH];
    char build_id[129];     /* lower-case hex, "" when the object has none */
};
/* A site as the run-time tables key it: the object (a hash of its build-id, else its path) and
 * the offset from its load bias. */
struct npl_site_key {
    uint64_t object_hash, offset;
};
/* The loaded object holding addr: 0 and a copy, or -1. Not async-signal-safe (dl_iterate_phdr);
 * safe inside malloc. */
int npl__site_object(const void *addr, struct npl_site_object *out);
int npl__site_main_object(struct npl_site_object *out);
const char *npl__site_exe_path(void); /* /proc/self/exe, read once */
/* The call site of an allocation whose allocator returns to ra: ra, or when ra lies in a runtime
 * object, the first frame of the stack outside them. */
const void *npl__site_caller(const void *ra);
/* Both answers of one unwind, for the interposer's large blocks: 1 when the block whose
 * allocator returns to ra is libnumaplace.so's own (directly, or through a C runtime function
 * or hwloc): no array of the program; else 0 and *site its call site (npl__site_caller's).
 * Safe inside malloc. */
int npl__site_attribute(const void *ra, const void **site);
/* Load the unwinder and the object table now (call once before the first large allocation). */
void npl__site_warm(void);
/* ra -> key (and its object): 0, or -1 when no loaded object holds ra */
int npl__site_resolve(const void *ra, struct npl_site_key *key, struct npl_site_object *obj);
uint64_t npl__site_hash_object(const char *path, const char *build_id);
/* The next ordinal at that site (0 first), per process; UINT32_MAX when the table is full. */
uint32_t npl__site_next_ordinal(const struct npl_site_key *k);
void npl__site_reset_ordinals(void);
/* The static arrays of a loaded object (path as the loader names it; NULL: the program): each
 * OBJECT symbol of at least threshold bytes in a writable segment (RELRO excluded), from .symtab,
 * else .dynsym, else one per writable segment. cb(symbol, offset in the object, address, bytes).
 * Returns how many. */
typedef void (*npl_static_cb)(const char *symbol, uint64_t offset, uintptr_t addr, size_t bytes,
                              void *ctx);
int npl__site_statics(const char *path, size_t threshold, npl_static_cb cb, void *ctx);
/* 1 when path (as the loader names it) is a runtime's: the C/C++/Fortran/OpenMP runtimes,
 * hwloc, numaplace, a malloc replacement, a sanitizer. Their static data is theirs: neither
 * profiled nor placed (TSan's 42 MiB context, armed, killed its background thread). */
int npl__site_runtime_path(const char *path);
/* The GNU build-id of an ELF file on disk (its PT_NOTE), lower-case hex: 0, or -1 ("" in out:
 * not an ELF file, or none). */
int npl__elf_build_id(const char *path, char *out, size_t size);


/* ==== the raw profile (sampler.c): one shared file between the profiled process, which
 * writes it from its allocation hooks and its fault handler (atomics, no lock, no malloc), and
 * `numaplace profile`, which reads it after the program ended (however it ended) ==== */
#define NPL_RAW_MAGIC 0x3157415250504c4eull /* "NPLPRAW1" */
#define NPL_RAW_VERSION 12
#define NPL_RAW_OBJECTS 256
#define NPL_RAW_ARRAYS 4096
#define NPL_RAW_THREADS 1024
#define NPL_RAW_TIDS 4096        /* kernel thread ids -> thread numbers (the perf backend) */
#define NPL_RAW_NODES 256        /* node ids at or above it are not counted per thread */
#define NPL_RAW_PHASES 4096
#define NPL_RAW_WINDOWS 1024     /* time-window phases at most (the last one then goes on) */
#define NPL_RAW_TRANS 8192
#define NPL_RAW_CHUNKS 65536     /* chunks of one array at most (a chunk grows by powers of 2) */
#define NPL_RAW_UNITS 1024       /* first-touch traps of one array at most */
#define NPL_RAW_FT ((size_t)1 << 22)   /* first-touch entries, all arrays */
#define NPL_RAW_ROWS ((size_t)1 << 20) /* sample rows (array, phase, chunk, thread), dense */
#define NPL_RAW_BUCKETS ((size_t)1 << 14) /* their hash chains' heads: 64 KiB, all touched */
#define NPL_RAW_WINDOW_SECONDS 0.1
#define NPL_RAW_EXPOSURES 16384 /* (phase, thread) exposures, open addressing: 256 KiB */

enum { NPL_RAW_FREE = 0, NPL_RAW_FILLING = 1, NPL_RAW_LIVE = 2, NPL_RAW_GONE = 3 };
enum { NPL_RAW_KIND_HEAP = 0, NPL_RAW_KIND_STATIC = 1, NPL_RAW_KIND_LIBRARY = 2 };
enum { NPL_RAW_PHASE_WINDOW = 0, NPL_RAW_PHASE_REGION = 1, NPL_RAW_PHASE_SERIAL = 2 };
#define NPL_RAW_FT_ARMED (-2) /* first-touch entry: protected, not touched yet */
#define NPL_RAW_FT_BUSY (-3)  /* being resolved by a fault handler */
#define NPL_RAW_NONE UINT32_MAX

struct npl_raw_object {
    char path[NPL_SITE_PATH];
    char build_id[129];
};
struct npl_raw_array {
    _Atomic uint32_t state;
    uint32_t kind;             /* NPL_RAW_KIND_* */
    uint32_t object, ordinal;  /* object: index into objects */
    uint64_t offset;           /* site offset in the object */
    char symbol[128];          /* a static array's symbol */
    uint64_t bytes, chunk_bytes, nchunks, unit_chunks; /* bytes: mapped, whole pages */
    uint64_t asked;            /* the size the program asked for (<= bytes; the profile's "bytes") */
    uint64_t ft;               /* its first entry in ft[] (nchunks entries); UINT64_MAX: none */
    uintptr_t base;            /* its address in the process that owns the profile */
    int prot;                  /* the protection it had (restored after a trap) */
    _Atomic uint64_t ft_left;  /* first-touch units still protected */
    _Atomic uint64_t samples;
    _Atomic uint64_t born_ns, gone_ns; /* CLOCK_MONOTONIC when tracked, untracked (0: not yet):
                                        * a perf sample read later finds the array of its time */
    _Atomic uint64_t local, remote, unknown; /* sampled accesses whose page was on the thread's
                                              * node, on another, not known (move_pages query) */
    /* the serial stretches (a region's end to the next region) in which it was sampled: how
     * many, the first and the last (numbered from 1, as the serial phase's entries) */
    _Atomic uint64_t serial_stretches, serial_first, serial_last;
};
struct npl_raw_phase {
    uint32_t kind;             /* NPL_RAW_PHASE_* */
    uint32_t object;           /* a region's code address: object and offset; else NPL_RAW_NONE */
    uint64_t offset;
    uintptr_t code;
    _Atomic uint64_t entries;
    _Atomic uint64_t ns;       /* CLOCK_MONOTONIC ns it was the current phase, all stretches */
    _Atomic uint64_t barriers; /* pthread barrier rounds completed in it (a window) */
};
struct npl_raw_row {
    _Atomic uint64_t key;      /* NPL_RAW_KEY(array, phase, chunk, thread); 0 empty */
    _Atomic uint32_t reads, writes;
    _Atomic uint32_t local, remote; /* of them: the page on the thread's node, on another */
    _Atomic uint32_t next;     /* 1 + the next row of its hash bucket's chain, 0 the last */
};
struct npl_raw_pair {          /* an open-addressed table's entry (npl__raw_pair_add) */
    _Atomic uint64_t key;      /* 1 + (a << 32 | b); 0 empty */
    _Atomic uint64_t count;
};
struct npl_raw_tid {
    _Atomic int32_t tid;       /* 0: empty */
    _Atomic int32_t thread;    /* its thread number (OpenMP's when set) */
};
struct npl_raw {
    uint64_t magic, version, size;
    _Atomic int32_t owner_pid;   /* the process image the profile is of (0: none yet) */
    _Atomic uint64_t owner_token;
    _Atomic uint64_t handover;   /* the owner execs having recorded nothing: its token */
    double rate, period;         /* sampled pages per second; seconds between rounds */
    uint64_t threshold, page_size;
    int32_t rw_known;
    int32_t backend;             /* enum npl_prof_backend, set by the command before exec; perf:
                                  * the command reads the samples, the sampler protects no page
                                  * (first touch is still trapped) */
    double t_start;              /* CLOCK_MONOTONIC of the owner's start */
    char program[NPL_SITE_PATH], program_build_id[129];
    _Atomic uint64_t samples, idle, ft_faults, rows_dropped, arrays_dropped, ft_dropped, others,
        rounds, widened, protect_failed, prepared,
        round_ns, protect_ns, giveback_ns, /* ns in the sampler's rounds; arming; giving back */
        arm_calls, arm_pages;    /* the mprotect calls that armed pages, the pages armed */
    _Atomic uint32_t nthreads, nphases, nobjects, narrays, ntrans;
    _Atomic uint32_t cur_phase;  /* the phase now (the perf backend's samples take it) */
    _Atomic uint64_t phase_since; /* CLOCK_MONOTONIC ns from which the phase now is not yet
                                   * counted in its ns (the sampler's rounds count it) */
    _Atomic uint32_t thread_node[NPL_RAW_THREADS][NPL_RAW_NODES]; /* samples per thread, node */
    _Atomic uint64_t exposure_ns[NPL_RAW_THREADS]; /* CPU ns each thread ran in the sampler's
                                                    * rounds while pages were armed */
    _Atomic int32_t thread_cpu[NPL_RAW_THREADS]; /* 1 + the CPU a round last saw a thread with
                                                  * an exposure and no sample on; 0: none (its
                                                  * node, where no sample names it) */
    _Atomic uint64_t rounds_crowded, rounds_together; /* rounds (pages armed) in which two
                                                       * threads or more ran; of them, those in
                                                       * which they ran together (concurrency) */
    _Atomic uint64_t exposures_dropped; /* exposures the table had no room for (then none is
                                         * written: the whole-run ones weigh) */
    struct npl_raw_pair exposures[NPL_RAW_EXPOSURES]; /* exposure_ns split by the phase
                                                       * current at each round: (phase,
                                                       * thread) -> CPU ns */
    struct npl_raw_tid tids[NPL_RAW_TIDS]; /* each numbered thread's kernel id */
    struct npl_raw_phase phases[NPL_RAW_PHASES];
    struct npl_raw_pair trans[NPL_RAW_TRANS];    /* (from, to) -> times */
    struct npl_raw_object objects[NPL_RAW_OBJECTS];
    struct npl_raw_array arrays[NPL_RAW_ARRAYS];
    _Atomic uint64_t ft_used;
    _Atomic int32_t ft[NPL_RAW_FT];
    _Atomic uint64_t rows_used;
    _Atomic uint32_t buckets[NPL_RAW_BUCKETS]; /* 1 + the first row of a chain, 0 empty */
    struct npl_raw_row rows[NPL_RAW_ROWS];
};
#define NPL_RAW_KEY(a, ph, c, t) \
    (1 + ((uint64_t)(a) << 42 | (uint64_t)(ph) << 30 | (uint64_t)(c) << 10 | (uint64_t)(t)))
#define NPL_RAW_KEY_ARRAY(k) ((uint32_t)(((k) - 1) >> 42))
#define NPL_RAW_KEY_PHASE(k) ((uint32_t)((((k) - 1) >> 30) & 0xfff))
#define NPL_RAW_KEY_CHUNK(k) ((uint32_t)((((k) - 1) >> 10) & 0xfffff))
#define NPL_RAW_KEY_THREAD(k) ((uint32_t)(((k) - 1) & 0x3ff))

/* ==== the raw profile's tables (raw.c: the counters async-signal-safe, atomics only) ==== */
/* One sampled access of thread (its number) to chunk of array in phase: the row it is counted
 * in, or NULL (dropped: the tables are full, counted in rows_dropped). */
struct npl_raw_row *npl__raw_add(struct npl_raw *r, uint32_t array, uint32_t phase, uint64_t chunk,
                                 uint32_t thread, int write);
/* The measured locality of a sample npl__raw_add counted: where = NPL_RAW_LOCAL, _REMOTE or
 * _UNKNOWN (its page's node against its thread's), counted in the array's totals and in the row
 * npl__raw_add gave (NULL: the totals only; an unknown one: the totals only). */
enum { NPL_RAW_UNKNOWN = -1, NPL_RAW_REMOTE = 0, NPL_RAW_LOCAL = 1 };
void npl__raw_measured(struct npl_raw *r, uint32_t array, struct npl_raw_row *row, int where);
/* One sample of thread taken on node (the profile's thread nodes); nthreads grows to cover it. */
void npl__raw_count_node(struct npl_raw *r, uint32_t thread, unsigned node);
/* The kernel thread tid has thread number `thread` from now on (the table full: not recorded). */
void npl__raw_set_tid(struct npl_raw *r, int32_t tid, int32_t thread);
/* the raw profile named first in list (NUMAPLACE_PROFILE_SHM: comma-separated, the spares after
 * it), mapped read-write; NULL with npl_last_error() */
struct npl_raw *npl__raw_open(const char *list);
/* a spare raw profile no image owns yet, now owned by this process (a launcher's next program:
 * its own profile), or NULL */
struct npl_raw *npl__raw_claim_spare(void);
/* the sampler thread, each round: each numbered thread's CPU time since the last round added to
 * its exposure when pages were armed meanwhile (armed), and the rounds in which two threads or
 * more ran, together or taking turns */
void npl__raw_thread_clocks(struct npl_raw *r, int armed);
/* The thread number of tid, or -1 (a thread never numbered: another process's, or unseen). */
int npl__raw_thread_of(const struct npl_raw *r, int32_t tid);
/* The tracked array that held addr at time t_ns (CLOCK_MONOTONIC: tracked at or before it, not
 * untracked before it; the newest such), and the chunk: 0, or -1 (in no array then). t_ns = 0:
 * the time is not known: the newest array live there, else the newest one gone. */
int npl__raw_find(const struct npl_raw *r, uint64_t addr, uint64_t t_ns, uint32_t *array,
                  uint64_t *chunk);
/* The object's index in r's table, added when new (NPL_RAW_NONE: the table is full); locks. */
uint32_t npl__raw_intern_object(struct npl_raw *r, const struct npl_site_object *o);
/* A new phase (its index reserved atomically; past the table, the last one). */
uint32_t npl__raw_new_phase(struct npl_raw *r, uint32_t kind, uint32_t object, uint64_t offset,
                            uintptr_t code);
/* One transition from phase `from` to `to` counted (from NPL_RAW_NONE: none). */
void npl__raw_transition(struct npl_raw *r, uint32_t from, uint32_t to);

/* ==== sampling backends (backends.c: the table; Linux mm/damon's struct damon_operations) ====
 * A backend samples the program's accesses into the raw profile, from inside the program (the
 * fault sampler: sampler.c in the interposer; start is NULL) or from the command that runs it
 * (perf: backend_perf.c). Adding one: its own file, its row in the table, its name in the schema
 * (enum npl_prof_backend, docs/schema/profile.schema.json). */
struct npl__sampling; /* a started backend's state */
struct npl__sampling_backend {
    const char *name; /* the profile's sampling.backend and --backend NAME */
    int id;           /* enum npl_prof_backend: the raw profile's backend */
    /* 0 when it can sample on this machine (what: how, one line), else -1 and why (one line) */
    int (*probe)(char *what, size_t wsize, char *why, size_t size);
    /* The command's side (NULL: the program samples itself). Open for the child pid, stopped
     * before its exec (sampling starts at the exec and follows its threads and children), rate
     * samples per second in all; NULL and why on failure. */
    struct npl__sampling *(*start)(pid_t pid, uint64_t rate, char *why, size_t size);
    void (*drain)(struct npl__sampling *s, struct npl_raw *r); /* what waits, read into r */
    /* samples read, lost, outside every tracked array, of threads numaplace did not number;
     * whether reads and writes are told apart */
    void (*stats)(const struct npl__sampling *s, uint64_t *read, uint64_t *lost,
                  uint64_t *outside, uint64_t *unknown, int *rw_known);
    void (*stop)(struct npl__sampling *s);
};
/* The table's rows by id (0 .. NPL_BACKEND_COUNT - 1; an unknown id: row 0) and by name (or
 * NULL). --backend auto tries them from the last to the first: row 0, the fault sampler, can
 * always sample. */
const struct npl__sampling_backend *npl__sampling_backend_of(int id);
const struct npl__sampling_backend *npl__sampling_backend_named(const char *name);
/* The backend to sample with: asked (an id), or -1 (auto): the table's last row whose probe
 * passes, else row 0 (why: the last refusal). what: how it samples. A backend asked for that
 * cannot sample here: NULL and why. */
const struct npl__sampling_backend *npl__sampling_backend_choose(int asked, char *what,
                                                                 size_t wsize, char *why,
                                                                 size_t size);
/* "fault or perf": the names, for messages (size > 0) */
void npl__sampling_backend_names(char *buf, size_t size);
/* The perf backend's test hook: NUMAPLACE_PERF_EVENT=page-faults samples the software page-fault
 * event instead of the memory-address events (every fault, with its address; no read/write). */
#define NPL_ENV_PERF_EVENT "NUMAPLACE_PERF_EVENT"

/* ==== the perf backend's pure parts (perf.c) ==== */

/* One PERF_RECORD_SAMPLE of a ring buffer (fields its sample_type lacks are 0). */
struct npl_perf_sample {
    uint32_t pid, tid, cpu;
    uint64_t ip, time, addr, data_src;
};
typedef void (*npl_perf_cb)(const struct npl_perf_sample *s, void *ctx);
/* The records in [tail, head) of a perf ring buffer's data area (size bytes, a power of 2; a
 * record may wrap around its end): cb for each sample, *lost += the samples PERF_RECORD_LOST
 * says were lost, other records skipped. sample_type may hold IDENTIFIER, IP, TID, TIME, ADDR, ID,
 * STREAM_ID, CPU, PERIOD, WEIGHT and DATA_SRC only. Returns the samples decoded, or -1 + EINVAL
 * (another sample field, or a record that does not fit: the rest is not read). Pure. */
long npl__perf_decode(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
                      uint64_t sample_type, npl_perf_cb cb, void *ctx, uint64_t *lost);
/* A sysfs event ("event=0xcd,umask=0x1,ldlat=3") -> config, config1, config2, given each term's
 * format ("config:0-7", "config1:0-15", "config:0-7,32-35"; format(term) returns NULL for a term
 * the PMU lacks). 0, or -1 + EINVAL. Pure. */
int npl__perf_event_parse(const char *spec, const char *(*format)(const char *term, void *ctx),
                          void *ctx, uint64_t config[3]);

/* ==== the raw profile becomes a profile (collect.c: also compiled into the command) ==== */
struct npl_collect_info {
    const char *program, *program_build_id; /* when no process image claimed the raw profile */
    const int *nodes;                       /* the machine's usable nodes */
    int nnodes;
    uint64_t page_size;
    int binding;                            /* enum npl_prof_binding */
    const char *binding_detail;
    double rate, seconds;
    const int *cpu_node;                    /* each CPU's node (ncpu entries; -1: unknown), for
                                             * the threads no sample named a node of; or NULL */
    int ncpu;
    int idle_sleep;                         /* the program ran with OMP_WAIT_POLICY=passive */
};
int npl__profile_from_raw(const struct npl_raw *r, const struct npl_collect_info *in,
                          struct npl_profile **out, char *err, size_t errsz);
/* p is a profile of the program at path with that build-id: the same build-id when both have
 * one, else the same path (after realpath) */
int npl__profile_same_program(const struct npl_profile *p, const char *path, const char *build_id);
/* The array of p allocated at (object, offset) with that ordinal and kind (enum
 * npl_prof_site_kind); past the ordinals p has there, its last one there; NULL if none. */
const struct npl_prof_array *npl__profile_match(const struct npl_profile *p, uint64_t object_hash,
                                                uint64_t offset, uint64_t ordinal, int kind);

/* ==== the library's own arrays under `numaplace profile` (notify.c) ====
 * base..base+bytes was allocated at site (a return address; walked out of the runtimes); trap:
 * it is untouched (first touch is to be recorded). Nothing happens without the interposer. */
void npl__profile_notify(void *base, size_t bytes, const void *site, int trap);

/* ==== the portable sampler (sampler.c) ====
 * Tracked arrays are trapped at their first touch (PROT_NONE by units; the first fault of a
 * unit records its thread and unprotects it, nothing moves), then a sampler thread protects a
 * budget of random pages every period; a fault on one records (phase, chunk, thread, read or
 * write, the thread's node) and gives the page back. */
struct npl_sampler_cfg {
    const char *shm_path;  /* the raw profile file (NUMAPLACE_PROFILE_SHM) */
    double rate;           /* sampled pages per second (0: the default) */
    size_t threshold;
};
#define NPL_SAMPLER_DEFAULT_RATE 2000.0
#define NPL_SAMPLER_PERIOD 0.02
/* Map the raw profile: 0, or -1 (not a raw profile file, or it cannot be mapped). */
int npl__sampler_init(const struct npl_sampler_cfg *cfg);
/* 1 while this process image records (it owns the profile; not a forked child) */
int npl__sampler_active(void);
/* Track [base, base + bytes) (page-aligned, whole pages; heap: fresh, never touched; trap: protect
 * it for its first touch), an array of `asked` bytes (its size as the program asked, <= bytes; 0:
 * bytes): the profile's size, so that a map scales by where the program's data ends. Claims the
 * profile for this image on the first call. Returns the array's index, or -1 (not recording,
 * table full). */
int npl__sampler_track(void *base, size_t bytes, size_t asked, int kind, const void *site_addr,
                       uint32_t ordinal, const char *symbol, uint64_t symbol_offset, int trap);
/* Before base is freed: no page of it stays protected, nothing more is recorded. */
void npl__sampler_untrack(void *base);
/* The fault handler's part: 1 if the fault was ours (the access can be retried), else 0.
 * Async-signal-safe. */
int npl__sampler_fault(int sig, siginfo_t *si, void *uctx);
/* Claim faults for npl__sampler_fault in the process's SIGSEGV/SIGBUS dispatcher (src/sys/); the
 * others go to the program's own handler. 0, or -1. */
int npl__sampler_install(void);
/* A system call is about to read or write [buf, buf + len): its protected pages are given back
 * (they count as touched by this thread) and none is protected until npl__sampler_done(the
 * returned token) after the call. */
int npl__sampler_prepare(const void *buf, size_t len, int write);
void npl__sampler_done(int token);
/* Next-touch under the profiler (`profile --profile` of a phase-changing array): the pages whose
 * protection next-touch owns now are told by `armed` (async-signal-safe; set once, before any such
 * range is armed): the sampler protects none of them and passes their faults on. An arm of
 * [base, base+len) runs as fn(arg) inside npl__sampler_lend_range, which first gives back every
 * page the sampler protects there (sampled pages, first-touch units of the arrays there: their
 * first touch becomes unknown) and keeps the sampler from protecting any meanwhile. Returns
 * fn(arg). */
void npl__sampler_lend(int (*armed)(const void *page));
int npl__sampler_lend_range(void *base, size_t len, int (*fn)(void *), void *arg);
/* Thread numbers: the creation number (main thread 0), and OpenMP's, which wins when set. */
void npl__sampler_set_thread(int n);
void npl__sampler_set_omp_thread(int n);
int npl__sampler_next_thread(void); /* the next creation number (the interposer's numbering) */
/* a numbered thread begins / ends its start routine (the main thread alone again: its own phase) */
void npl__sampler_thread_begin(void);
void npl__sampler_thread_end(void);
/* a pthread barrier's round completed (the interposer's pthread_barrier_wait, in the thread it
 * returned PTHREAD_BARRIER_SERIAL_THREAD to): counted in the window; cuts it when one is due */
void npl__sampler_barrier_round(void);
/* Phases: an outermost OpenMP parallel region begins at code / ends. */
void npl__sampler_region_begin(const void *code);
void npl__sampler_region_end(void);
/* exec: an image that recorded nothing hands the profile to the program it becomes (begin);
 * failed: the exec failed, it keeps it */
void npl__sampler_exec(int failed);
/* The stop of the recording (process exit): the sampler thread ends, protections are given back. */
void npl__sampler_stop(void);

#pragma GCC visibility pop

#endif
