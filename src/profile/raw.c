/* SPDX-License-Identifier: BSD-3-Clause */
/* raw.c - the raw profile's tables (struct npl_raw, shared by the program's interposer and the
 * command): the sampled accesses' rows and counters, the thread ids, the arrays by address, the
 * objects, phases and transitions; opening the raw profile files (the first and the spares a
 * launcher's next program claims); each thread's exposure, its CPU clock read every sampler round.
 * The counters are called from a signal handler: no system call,
 * no lock, no allocation there (atomics only); interning an object takes a lock. */
#define _GNU_SOURCE
#include "base/base.h"
#include "profile/profile.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the row of key, made when there is none; NULL: the table is full. Rows are handed
 * out densely (the memory touched grows with the rows used), each pushed on the front of its hash
 * bucket's chain: a small table of heads, so that a small profile touches little memory. A push
 * that loses its race looks again at the rows pushed meanwhile (they may hold its key). */
static struct npl_raw_row *row_of(struct npl_raw *r, uint64_t key)
{
    _Atomic uint32_t *head = &r->buckets[((key * 0x9E3779B97F4A7C15ull) >> 32) % NPL_RAW_BUCKETS];
    uint32_t first = atomic_load_explicit(head, memory_order_acquire), stop = 0;
    uint64_t mine = UINT64_MAX; /* the row this call made, not yet in the chain */
    for (;;) {
        for (uint32_t v = first; v != stop; v = atomic_load_explicit(&r->rows[v - 1].next,
                                                                      memory_order_acquire))
            if (atomic_load_explicit(&r->rows[v - 1].key, memory_order_relaxed) == key) {
                if (mine != UINT64_MAX)
                    atomic_store(&r->rows[mine].key, 0); /* pushed by another thread: unused */
                return &r->rows[v - 1];
            }
        if (mine == UINT64_MAX) {
            mine = atomic_fetch_add(&r->rows_used, 1);
            if (mine >= NPL_RAW_ROWS)
                return NULL;
            atomic_store_explicit(&r->rows[mine].key, key, memory_order_relaxed);
        }
        atomic_store_explicit(&r->rows[mine].next, first, memory_order_relaxed);
        uint32_t seen = first;
        if (atomic_compare_exchange_strong_explicit(head, &seen, (uint32_t)mine + 1,
                                                    memory_order_release, memory_order_acquire))
            return &r->rows[mine];
        stop = first; /* the rows from `seen` down to `first` are new: look at them */
        first = seen;
    }
}

static int in_range(uint32_t array, uint32_t phase, uint64_t chunk, uint32_t thread)
{
    return thread < NPL_RAW_THREADS && chunk < NPL_RAW_CHUNKS && array < NPL_RAW_ARRAYS &&
           phase < NPL_RAW_PHASES;
}

struct npl_raw_row *npl__raw_add(struct npl_raw *r, uint32_t array, uint32_t phase, uint64_t chunk,
                                 uint32_t thread, int write)
{
    struct npl_raw_row *row = in_range(array, phase, chunk, thread)
                                  ? row_of(r, NPL_RAW_KEY(array, phase, chunk, thread))
                                  : NULL;
    if (!row) {
        atomic_fetch_add_explicit(&r->rows_dropped, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(write ? &row->writes : &row->reads, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->samples, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->arrays[array].samples, 1, memory_order_relaxed);
    return row;
}

void npl__raw_measured(struct npl_raw *r, uint32_t array, struct npl_raw_row *row, int where)
{
    if (array >= NPL_RAW_ARRAYS)
        return;
    struct npl_raw_array *a = &r->arrays[array];
    atomic_fetch_add_explicit(where == NPL_RAW_LOCAL    ? &a->local
                              : where == NPL_RAW_REMOTE ? &a->remote
                                                        : &a->unknown,
                              1, memory_order_relaxed);
    if (row && where != NPL_RAW_UNKNOWN)
        atomic_fetch_add_explicit(where == NPL_RAW_LOCAL ? &row->local : &row->remote, 1,
                                  memory_order_relaxed);
}

void npl__raw_count_node(struct npl_raw *r, uint32_t thread, unsigned node)
{
    if (node >= NPL_RAW_NODES || thread >= NPL_RAW_THREADS)
        return;
    atomic_fetch_add_explicit(&r->thread_node[thread][node], 1, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&r->nthreads, memory_order_relaxed);
    while (thread + 1 > n && !atomic_compare_exchange_weak(&r->nthreads, &n, thread + 1))
        ;
}

static size_t tid_slot(int32_t tid) { return (size_t)((uint32_t)tid * 2654435761u) % NPL_RAW_TIDS; }

void npl__raw_set_tid(struct npl_raw *r, int32_t tid, int32_t thread)
{
    if (tid <= 0)
        return;
    for (size_t i = tid_slot(tid), probes = 0; probes < NPL_RAW_TIDS;
         i = (i + 1) % NPL_RAW_TIDS, probes++) {
        int32_t t = atomic_load(&r->tids[i].tid);
        if (t == 0) {
            /* the number first: a reader that finds the tid finds its number */
            int32_t expect = 0;
            atomic_store(&r->tids[i].thread, thread);
            if (!atomic_compare_exchange_strong(&r->tids[i].tid, &expect, tid))
                t = expect;
            else
                return;
        }
        if (t == tid) {
            atomic_store(&r->tids[i].thread, thread);
            return;
        }
    }
}

int npl__raw_thread_of(const struct npl_raw *r, int32_t tid)
{
    if (tid <= 0)
        return -1;
    for (size_t i = tid_slot(tid), probes = 0; probes < NPL_RAW_TIDS;
         i = (i + 1) % NPL_RAW_TIDS, probes++) {
        int32_t t = atomic_load(&r->tids[i].tid);
        if (t == 0)
            return -1;
        if (t == tid)
            return atomic_load(&r->tids[i].thread);
    }
    return -1;
}

int npl__raw_find(const struct npl_raw *r, uint64_t addr, uint64_t t_ns, uint32_t *array,
                  uint64_t *chunk)
{
    uint32_t n = atomic_load(&r->narrays);
    if (n > NPL_RAW_ARRAYS)
        n = NPL_RAW_ARRAYS;
    int64_t gone = -1;
    for (uint32_t i = n; i-- > 0;) {
        const struct npl_raw_array *a = &r->arrays[i];
        uint32_t st = atomic_load(&a->state);
        if ((st != NPL_RAW_LIVE && st != NPL_RAW_GONE) || addr < a->base ||
            addr - a->base >= a->bytes || !a->chunk_bytes)
            continue;
        if (t_ns) {
            uint64_t born = atomic_load(&a->born_ns), died = atomic_load(&a->gone_ns);
            if (t_ns < born || (died && t_ns >= died))
                continue; /* another array's time at that address (or none's) */
        } else if (st != NPL_RAW_LIVE) {
            if (gone < 0)
                gone = i;
            continue;
        }
        *array = i;
        *chunk = (addr - a->base) / a->chunk_bytes;
        return 0;
    }
    if (gone < 0)
        return -1;
    *array = (uint32_t)gone;
    *chunk = (addr - r->arrays[gone].base) / r->arrays[gone].chunk_bytes;
    return 0;
}

/* ---- objects, phases, transitions (the interposer's sampler) ---- */
static pthread_mutex_t object_lock = PTHREAD_MUTEX_INITIALIZER; /* objects interned */

static uint32_t intern_object_locked(struct npl_raw *r, const struct npl_site_object *o)
{
    uint32_t n = atomic_load(&r->nobjects);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(r->objects[i].path, o->path) && !strcmp(r->objects[i].build_id, o->build_id))
            return i;
    if (n >= NPL_RAW_OBJECTS)
        return NPL_RAW_NONE;
    snprintf(r->objects[n].path, sizeof r->objects[n].path, "%s", o->path);
    snprintf(r->objects[n].build_id, sizeof r->objects[n].build_id, "%s", o->build_id);
    atomic_store(&r->nobjects, n + 1);
    return n;
}

uint32_t npl__raw_intern_object(struct npl_raw *r, const struct npl_site_object *o)
{
    pthread_mutex_lock(&object_lock);
    uint32_t n = intern_object_locked(r, o);
    pthread_mutex_unlock(&object_lock);
    return n;
}

/* a new phase (the sampler thread's windows and the regions' phases may race: the index is
 * reserved atomically); past the table, the last one */
uint32_t npl__raw_new_phase(struct npl_raw *r, uint32_t kind, uint32_t object, uint64_t offset,
                            uintptr_t code)
{
    uint32_t n = atomic_load(&r->nphases);
    do {
        if (n >= NPL_RAW_PHASES)
            return NPL_RAW_PHASES - 1;
    } while (!atomic_compare_exchange_weak(&r->nphases, &n, n + 1));
    r->phases[n].kind = kind;
    r->phases[n].object = object;
    r->phases[n].offset = offset;
    r->phases[n].code = code;
    atomic_store(&r->phases[n].ns, 0);
    atomic_store(&r->phases[n].barriers, 0);
    return n;
}

/* add to the entry (a, b) of an open-addressed table of n entries (a power of 2), probed from a
 * hash of its key: 1 when the entry is new, 0 when it was there, -1 when the table is full */
static int pair_add(struct npl_raw_pair *t, size_t n, uint32_t a, uint32_t b, uint64_t add)
{
    uint64_t key = 1 + ((uint64_t)a << 32 | b);
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40);
    for (size_t probes = 0; probes < n; probes++) {
        struct npl_raw_pair *e = &t[(h + probes) & (n - 1)];
        uint64_t k = atomic_load(&e->key);
        int fresh = !k && atomic_compare_exchange_strong(&e->key, &k, key);
        if (fresh || k == key) {
            atomic_fetch_add_explicit(&e->count, add, memory_order_relaxed);
            return fresh;
        }
    }
    return -1;
}

void npl__raw_transition(struct npl_raw *r, uint32_t from, uint32_t to)
{
    if (from != NPL_RAW_NONE && pair_add(r->trans, NPL_RAW_TRANS, from, to, 1) == 1)
        atomic_fetch_add(&r->ntrans, 1);
}

/* ---- the raw profile's files ---- */
/* NUMAPLACE_PROFILE_SHM: the raw profile, then (comma-separated) spare ones that a program the
 * first one's owner did not become may claim instead (each exec'd child its own profile) */
#define MAX_SPARES 32
static char spare_paths[MAX_SPARES][48];
static int nspares;

static struct npl_raw *map_raw(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return npl__fail(errno, "%s: cannot open the raw profile", path), NULL;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size != sizeof(struct npl_raw)) {
        close(fd);
        return npl__fail(EINVAL, "%s: not a raw profile of this numaplace", path), NULL;
    }
    void *m = mmap(NULL, sizeof(struct npl_raw), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return npl__fail(errno, "%s: cannot map the raw profile", path), NULL;
    struct npl_raw *r = m;
    if (r->magic != NPL_RAW_MAGIC || r->version != NPL_RAW_VERSION || r->size != sizeof *r) {
        munmap(m, sizeof *r);
        return npl__fail(EINVAL, "%s: not a raw profile of this numaplace", path), NULL;
    }
    return r;
}

/* a spare raw profile no image owns yet, now owned by this process, or NULL */
struct npl_raw *npl__raw_claim_spare(void)
{
    for (int i = 0; i < nspares; i++) {
        struct npl_raw *s = map_raw(spare_paths[i]);
        int32_t expect = 0;
        if (s && atomic_compare_exchange_strong(&s->owner_pid, &expect, (int32_t)getpid()))
            return s;
        if (s)
            munmap(s, sizeof *s);
    }
    return NULL;
}

/* the raw profile named first in list (NUMAPLACE_PROFILE_SHM's value), mapped; the spare ones
 * after it remembered for npl__raw_claim_spare; NULL with npl_last_error() */
struct npl_raw *npl__raw_open(const char *list)
{
    char first[PATH_MAX];
    const char *comma = strchr(list, ',');
    snprintf(first, sizeof first, "%.*s", comma ? (int)(comma - list) : PATH_MAX - 1, list);
    for (nspares = 0; comma && nspares < MAX_SPARES; nspares++) {
        const char *p = comma + 1;
        comma = strchr(p, ',');
        snprintf(spare_paths[nspares], sizeof spare_paths[0], "%.*s",
                 comma ? (int)(comma - p) : (int)sizeof spare_paths[0] - 1, p);
    }
    return map_raw(first);
}

/* ---- each thread's exposure ---- */
/* Each numbered thread's CPU clock read every round (a thread's clock of the same process:
 * clock id (~tid << 3) | 6, as glibc's pthread_getcpuclockid makes it): the CPU time it ran since
 * the last round counts as its exposure when pages were armed meanwhile (armed), in all and in
 * the phase current at the round (a round spans a phase change at most once in a while: the
 * split is the rounds', 20 ms) */
static int32_t clock_tid[NPL_RAW_TIDS]; /* the tid whose clock clock_ns[i] is, 0: none */
static uint64_t clock_ns[NPL_RAW_TIDS];
static uint64_t clock_round; /* when the clocks were last read (CLOCK_MONOTONIC ns) */
static unsigned char node_sampled[NPL_RAW_THREADS]; /* a sample named the thread's node */
static unsigned rounds_read; /* the rounds that read the clocks */

/* A thread that ran with no sample yet: the CPU it is on (read once, then every 16th round), so
 * that the profile can name its node (a thread no sample saw used to be left out of the profile
 * altogether when numbered last: a table one worker took every sample of then had no other
 * reader at all) */
static void note_cpu(struct npl_raw *r, int32_t tid, int32_t t)
{
    for (int j = 0; !node_sampled[t] && j < NPL_RAW_NODES; j++)
        node_sampled[t] = atomic_load_explicit(&r->thread_node[t][j], memory_order_relaxed) != 0;
    if (node_sampled[t] || (atomic_load_explicit(&r->thread_cpu[t], memory_order_relaxed) &&
                            (rounds_read + (unsigned)t) % 16))
        return;
    int cpu = npl__task_cpu(tid);
    if (cpu >= 0 && cpu < INT32_MAX)
        atomic_store_explicit(&r->thread_cpu[t], cpu + 1, memory_order_relaxed);
}

void npl__raw_thread_clocks(struct npl_raw *r, int armed)
{
    rounds_read++;
    /* the threads that ran at least a tenth of the round: how many, their CPU time together */
    uint64_t now = npl__now_ns(), span = clock_round && now > clock_round ? now - clock_round : 0;
    uint64_t ran = 0, busy = 0;
    uint32_t ph = atomic_load_explicit(&r->cur_phase, memory_order_relaxed);
    int had_round = clock_round != 0;
    clock_round = now;
    for (size_t i = 0; i < NPL_RAW_TIDS; i++) {
        int32_t tid = atomic_load_explicit(&r->tids[i].tid, memory_order_relaxed);
        struct timespec ts;
        if (!tid || clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts) != 0) {
            clock_tid[i] = 0; /* ended (or none) */
            continue;
        }
        uint64_t c = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        int32_t t = atomic_load_explicit(&r->tids[i].thread, memory_order_relaxed);
        /* a thread first seen since the last round ran its whole clock since then (it began
         * after it: its clock starts at 0); counted from the next round only, a window that
         * a round ended right after the threads began got none of their time (the window's
         * samples then weighed against no exposure) */
        uint64_t last = clock_tid[i] == tid ? clock_ns[i] : had_round ? 0 : c;
        if (armed && c > last && t >= 0 && t < NPL_RAW_THREADS) {
            atomic_fetch_add_explicit(&r->exposure_ns[t], c - last, memory_order_relaxed);
            if (ph < NPL_RAW_PHASES &&
                pair_add(r->exposures, NPL_RAW_EXPOSURES, ph, (uint32_t)t, c - last) < 0)
                atomic_fetch_add_explicit(&r->exposures_dropped, 1, memory_order_relaxed);
            note_cpu(r, tid, t);
            if (span && c - last >= span / 10) {
                ran++;
                busy += c - last;
            }
        }
        clock_tid[i] = tid;
        clock_ns[i] = c;
    }
    if (ran >= 2) { /* NPL_PROF_TOGETHER: did they run at once, or take turns on fewer CPUs? */
        atomic_fetch_add_explicit(&r->rounds_crowded, 1, memory_order_relaxed);
        if ((double)busy >= NPL_PROF_TOGETHER * (double)ran * (double)span)
            atomic_fetch_add_explicit(&r->rounds_together, 1, memory_order_relaxed);
    }
}
