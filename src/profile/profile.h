/* profile.h - measured access profiles (docs/AUTO.md): the profile format v1 (format.c: a strict
 * reader and a writer, no dependency) and the per-array classifier (classify.c: pure). Private to
 * the library and the numaplace command (the command compiles these files itself, without
 * NPL_BUILDING: errors then go only to the caller's buffer, not to npl_last_error()).
 *
 * Errors: -1 with errno (EINVAL bad input, ENOMEM, EFBIG file too large, the errno of open/read)
 * and a message naming the problem in err (errsz bytes, may be NULL); in the library also
 * npl_last_error(). */
#ifndef NPL_PROFILE_H
#define NPL_PROFILE_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>

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

/* ---- classifier thresholds (docs/AUTO.md says where each comes from) ---- */
#define NPL_PROF_MIN_SAMPLES 64        /* fewer sampled accesses: too-few-samples, first touch */
#define NPL_PROF_OWNED 0.80            /* kMAF/anchors: exclusivity >= 0.8 is owned */
#define NPL_PROF_READ_MOSTLY 0.05      /* Carrefour: write ratio <= 5% counts as read-mostly */
#define NPL_PROF_SERIAL 0.90           /* one thread makes >= 90% of the accesses */
#define NPL_PROF_PHASE_MIN 32          /* a phase with fewer samples is not judged alone */
#define NPL_PROF_PHASE_SHARE 0.05      /* ... nor one with less than 5% of the array's samples */
#define NPL_PROF_PHASE_GAIN 0.10       /* next-touch must beat one static placement by this */
#define NPL_PROF_PHASE_SERVE 0.10      /* a placement serves a phase within this of its best */
#define NPL_PROF_MARGIN_ABS 0.02       /* the guard: within max(2 points, 5% of the best) */
#define NPL_PROF_MARGIN_REL 0.05

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
enum npl_prof_backend { NPL_BACKEND_FAULT = 0, NPL_BACKEND_PERF = 1 };
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
};

/* One row of sampled accesses: phase (index into the profile's phases), chunk, thread. */
struct npl_prof_sample {
    uint32_t phase, chunk, thread;
    uint64_t reads, writes;
};

struct npl_prof_phase {
    uint32_t id;
    int kind;                    /* enum npl_prof_phase_kind */
    struct npl_prof_site *site;  /* a region's code address, or NULL */
    uint64_t entries;            /* times the phase was entered */
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

/* The classifier's output for one array (also read back from a profile's "advice"). */
struct npl_prof_advice {
    int pattern;               /* enum npl_prof_pattern */
    char policy[192];          /* a policy string for npl_policy_parse, or "explicit" */
    uint64_t period_pages;     /* cyclic: k, the period of the owners in pages; else 0 */
    int block_threads;         /* blocked and cyclic: threads of the fitted schedule; else 0 */
    int *chunk_nodes;          /* "explicit": node per chunk (-1: left alone); else NULL */
    uint64_t nchunk_nodes;
    int replicate;             /* read-mostly shared data: replicas (library API) would serve it */
    uint32_t *next_touch;      /* phase ids at which next-touch must re-arm (phase-changing) */
    uint32_t nnext_touch;
    double confidence;         /* [0, 1] */
    double local_policy;       /* predicted local fraction under the advice */
    double local_first_touch;  /* under first touch as observed; < 0: not known */
    double local_best;         /* the best any evaluated placement reaches */
    uint64_t samples;          /* sampled accesses it was decided on */
    char reason[640];
    /* evaluated candidates (not stored in the profile), best first */
    struct npl_prof_candidate cand[NPL_PROF_MAX_CANDIDATES];
    int ncand;
};

struct npl_prof_array {
    struct npl_prof_site site;
    uint64_t bytes, chunk_bytes, nchunks;
    int32_t *first_touch;          /* nchunks entries: thread, or -1 unknown */
    struct npl_prof_sample *samples;
    size_t nsamples;
    int has_advice;
    struct npl_prof_advice advice; /* valid when has_advice */
};

struct npl_profile {
    char *program_path, *program_build_id;
    int *nodes;
    int nnodes;
    uint64_t page_size;
    int threads;
    int *thread_nodes;             /* threads entries */
    int *thread_cpus;              /* threads entries, or NULL */
    int binding;                   /* enum npl_prof_binding */
    char *binding_detail;          /* "compact", "OMP_PLACES=cores ..." or NULL */
    int backend;                   /* enum npl_prof_backend */
    double rate, seconds;
    uint64_t samples;
    int rw_known;                  /* reads and writes told apart */
    struct npl_prof_phase *phases; /* in the order of their first entry */
    uint32_t nphases;
    struct npl_prof_transition *transitions;
    uint32_t ntransitions;
    struct npl_prof_array *arrays;
    uint32_t narrays;
};

/* ---- format.c ---- */
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
/* Set errno, the message (and npl_last_error() in the library): returns -1. */
int npl__prof_fail(char *err, size_t errsz, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- classify.c (pure: no system call, no file, no environment) ---- */
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
    const char *pin;                       /* the profile's pin strategy ("compact", "scatter"), or NULL */
    const struct npl_prof_phase *phases;   /* in order of first entry; NULL: one phase */
    uint32_t nphases;
    const struct npl_prof_transition *transitions;
    uint32_t ntransitions;
};

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
/* The input of array a of profile p. */
void npl__profile_input(const struct npl_profile *p, const struct npl_prof_array *a,
                        struct npl_prof_input *in);

#endif
