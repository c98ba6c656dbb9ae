/* profile/profile.h - measured access profiles: the run-time side (site identity, the raw
 * profile, the sampler); the format and the classifier come with the merge of h-auto. */
#ifndef NPL_PROFILE_H
#define NPL_PROFILE_H

#include "base/base.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* ==== the run-time side: site identity (site.c) ==== */
#define NPL_SITE_PATH 512
struct npl_site_object {
    uintptr_t bias, lo, hi; /* load bias; [lo, hi) covers its PT_LOAD segments */
    int runtime;            /* the C, C++ or Fortran runtime, or numaplace: walked out of */
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
/* The GNU build-id of an ELF file on disk (its PT_NOTE), lower-case hex: 0, or -1 ("" in out:
 * not an ELF file, or none). */
int npl__elf_build_id(const char *path, char *out, size_t size);


/* ==== the raw profile (sampler.c): one shared file between the profiled process, which
 * writes it from its allocation hooks and its fault handler (atomics, no lock, no malloc), and
 * `numaplace profile`, which reads it after the program ended (however it ended) ==== */
#define NPL_RAW_MAGIC 0x3157415250504c4eull /* "NPLPRAW1" */
#define NPL_RAW_VERSION 1
#define NPL_RAW_OBJECTS 256
#define NPL_RAW_ARRAYS 4096
#define NPL_RAW_THREADS 1024
#define NPL_RAW_NODES 256        /* node ids at or above it are not counted per thread */
#define NPL_RAW_PHASES 4096
#define NPL_RAW_WINDOWS 1024     /* time-window phases at most (the last one then goes on) */
#define NPL_RAW_TRANS 8192
#define NPL_RAW_CHUNKS 65536     /* chunks of one array at most (a chunk grows by powers of 2) */
#define NPL_RAW_UNITS 1024       /* first-touch traps of one array at most */
#define NPL_RAW_FT ((size_t)1 << 22)   /* first-touch entries, all arrays */
#define NPL_RAW_ROWS ((size_t)1 << 20) /* sample rows (array, phase, chunk, thread), dense */
#define NPL_RAW_INDEX ((size_t)1 << 18) /* their hash index: memory grows with the rows used */
#define NPL_RAW_WINDOW_SECONDS 0.1

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
    uint64_t bytes, chunk_bytes, nchunks, unit_chunks;
    uint64_t ft;               /* its first entry in ft[] (nchunks entries); UINT64_MAX: none */
    uintptr_t base;            /* its address in the process that owns the profile */
    int prot;                  /* the protection it had (restored after a trap) */
    _Atomic uint64_t ft_left;  /* first-touch units still protected */
    _Atomic uint64_t samples;
};
struct npl_raw_phase {
    uint32_t kind;             /* NPL_RAW_PHASE_* */
    uint32_t object;           /* a region's code address: object and offset; else NPL_RAW_NONE */
    uint64_t offset;
    uintptr_t code;
    _Atomic uint64_t entries;
};
struct npl_raw_row {
    _Atomic uint64_t key;      /* NPL_RAW_KEY(array, phase, chunk, thread); 0 empty */
    _Atomic uint32_t reads, writes;
};
struct npl_raw_trans {
    _Atomic uint64_t key;      /* 1 + (from << 32 | to) */
    _Atomic uint64_t count;
};
struct npl_raw {
    uint64_t magic, version, size;
    _Atomic int32_t owner_pid;   /* the process image the profile is of (0: none yet) */
    _Atomic uint64_t owner_token;
    _Atomic uint64_t handover;   /* the owner execs having recorded nothing: its token */
    double rate, period;         /* sampled pages per second; seconds between rounds */
    uint64_t threshold, page_size;
    int32_t rw_known;
    double t_start;              /* CLOCK_MONOTONIC of the owner's start */
    char program[NPL_SITE_PATH], program_build_id[129];
    _Atomic uint64_t samples, idle, ft_faults, rows_dropped, arrays_dropped, ft_dropped, others,
        rounds, widened, protect_failed, prepared;
    _Atomic uint32_t nthreads, nphases, nobjects, narrays, ntrans;
    _Atomic uint32_t thread_node[NPL_RAW_THREADS][NPL_RAW_NODES]; /* samples per thread, node */
    struct npl_raw_phase phases[NPL_RAW_PHASES];
    struct npl_raw_trans trans[NPL_RAW_TRANS];
    struct npl_raw_object objects[NPL_RAW_OBJECTS];
    struct npl_raw_array arrays[NPL_RAW_ARRAYS];
    _Atomic uint64_t ft_used;
    _Atomic int32_t ft[NPL_RAW_FT];
    _Atomic uint64_t rows_used;
    _Atomic uint32_t index[NPL_RAW_INDEX]; /* 1 + a row of rows[], 0 empty */
    struct npl_raw_row rows[NPL_RAW_ROWS];
};
#define NPL_RAW_KEY(a, ph, c, t) \
    (1 + ((uint64_t)(a) << 42 | (uint64_t)(ph) << 30 | (uint64_t)(c) << 10 | (uint64_t)(t)))
#define NPL_RAW_KEY_ARRAY(k) ((uint32_t)(((k) - 1) >> 42))
#define NPL_RAW_KEY_PHASE(k) ((uint32_t)((((k) - 1) >> 30) & 0xfff))
#define NPL_RAW_KEY_CHUNK(k) ((uint32_t)((((k) - 1) >> 10) & 0xfffff))
#define NPL_RAW_KEY_THREAD(k) ((uint32_t)(((k) - 1) & 0x3ff))

/* ==== the raw profile becomes a profile (collect.c: also compiled into the command) ==== */
struct npl_collect_info {
    const char *program, *program_build_id; /* when no process image claimed the raw profile */
    const int *nodes;                       /* the machine's usable nodes */
    int nnodes;
    uint64_t page_size;
    int binding;                            /* enum npl_prof_binding */
    const char *binding_detail;
    double rate, seconds;
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
/* Track [base, base + bytes) (page-aligned; heap: fresh, never touched; trap: protect it for its
 * first touch). Claims the profile for this image on the first call. Returns the array's index,
 * or -1 (not recording, table full). */
int npl__sampler_track(void *base, size_t bytes, int kind, const void *site_addr, uint32_t ordinal,
                       const char *symbol, uint64_t symbol_offset, int trap);
/* Before base is freed: no page of it stays protected, nothing more is recorded. */
void npl__sampler_untrack(void *base);
/* The fault handler's part: 1 if the fault was ours (the access can be retried), else 0.
 * Async-signal-safe. */
int npl__sampler_fault(int sig, siginfo_t *si, void *uctx);
/* Install a SIGSEGV handler that calls npl__sampler_fault and passes other faults on. */
int npl__sampler_install(void);
/* A system call is about to read or write [buf, buf + len): its protected pages are given back
 * (they count as touched by this thread) and none is protected until npl__sampler_done(the
 * returned token) after the call. */
int npl__sampler_prepare(const void *buf, size_t len, int write);
void npl__sampler_done(int token);
/* Thread numbers: the creation number (main thread 0), and OpenMP's, which wins when set. */
void npl__sampler_set_thread(int n);
void npl__sampler_set_omp_thread(int n);
int npl__sampler_next_thread(void); /* the next creation number (the interposer's numbering) */
/* Phases: an outermost OpenMP parallel region begins at code / ends. */
void npl__sampler_region_begin(const void *code);
void npl__sampler_region_end(void);
/* exec: an image that recorded nothing hands the profile to the program it becomes (begin);
 * failed: the exec failed, it keeps it */
void npl__sampler_exec(int failed);
/* The stop of the recording (process exit): the sampler thread ends, protections are given back. */
void npl__sampler_stop(void);

#endif
