/* perf.c - the raw profile's counters (shared by the fault sampler in the program and the perf
 * backend in the command) and the perf backend's pure parts: decoding a perf ring buffer's records
 * and a sysfs event's terms (docs/PROFILE.md §8). No system call, no lock, no allocation: the
 * counters are called from a signal handler. */
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

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

/* ---- perf ring buffers ---- */
#define SUPPORTED                                                                                \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |               \
     PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |                \
     PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

/* n bytes at position pos of the ring, across its end */
static void ring_copy(void *dst, const unsigned char *data, uint64_t size, uint64_t pos, size_t n)
{
    uint64_t off = pos & (size - 1);
    size_t first = off + n <= size ? n : (size_t)(size - off);
    memcpy(dst, data + off, first);
    if (first < n)
        memcpy((unsigned char *)dst + first, data, n - first);
}

static uint64_t u64_at(const unsigned char *rec, size_t off)
{
    uint64_t v;
    memcpy(&v, rec + off, sizeof v);
    return v;
}

/* the sample in rec (size bytes, header included): 0, or -1 when its fields do not fit */
static int parse_sample(const unsigned char *rec, size_t size, uint64_t type,
                        struct npl_perf_sample *s)
{
    size_t off = sizeof(struct perf_event_header);
    memset(s, 0, sizeof *s);
    /* the fields in the kernel's order (perf_event.h, PERF_RECORD_SAMPLE), 8 bytes each */
    static const uint64_t order[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,
                                     PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
                                     PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
                                     PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        if (!(type & order[k]))
            continue;
        if (off + 8 > size)
            return -1;
        uint64_t v = u64_at(rec, off);
        uint32_t lo, hi;
        memcpy(&lo, rec + off, 4);
        memcpy(&hi, rec + off + 4, 4);
        if (order[k] == PERF_SAMPLE_TID)
            s->pid = lo, s->tid = hi;
        else if (order[k] == PERF_SAMPLE_IP)
            s->ip = v;
        else if (order[k] == PERF_SAMPLE_TIME)
            s->time = v;
        else if (order[k] == PERF_SAMPLE_ADDR)
            s->addr = v;
        else if (order[k] == PERF_SAMPLE_CPU)
            s->cpu = lo;
        else if (order[k] == PERF_SAMPLE_DATA_SRC)
            s->data_src = v;
        off += 8;
    }
    return 0;
}

long npl__perf_decode(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
                      uint64_t sample_type, npl_perf_cb cb, void *ctx, uint64_t *lost)
{
    if (!data || !size || (size & (size - 1)) || (sample_type & ~(uint64_t)SUPPORTED) ||
        head - tail > size) {
        errno = EINVAL;
        return -1;
    }
    unsigned char rec[65536]; /* a record's size is 16 bits */
    long n = 0;
    while (tail != head) {
        struct perf_event_header h;
        if (head - tail < sizeof h) {
            errno = EINVAL;
            return -1;
        }
        ring_copy(&h, data, size, tail, sizeof h);
        if (h.size < sizeof h || h.size > head - tail || h.size % 8) {
            errno = EINVAL;
            return -1;
        }
        ring_copy(rec, data, size, tail, h.size);
        if (h.type == PERF_RECORD_SAMPLE) {
            struct npl_perf_sample s;
            if (parse_sample(rec, h.size, sample_type, &s) < 0) {
                errno = EINVAL;
                return -1;
            }
            if (cb)
                cb(&s, ctx);
            n++;
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16 && lost) {
            *lost += u64_at(rec, sizeof h + 8); /* u64 id, u64 lost */
        }
        tail += h.size;
    }
    return n;
}

/* ---- sysfs events ---- */
/* set value's bits into config[] as fmt says ("config1:0-15,32-35"): 0, or -1 */
static int apply_format(const char *fmt, uint64_t value, uint64_t config[3])
{
    int which;
    const char *p;
    if (!strncmp(fmt, "config2:", 8))
        which = 2, p = fmt + 8;
    else if (!strncmp(fmt, "config1:", 8))
        which = 1, p = fmt + 8;
    else if (!strncmp(fmt, "config:", 7))
        which = 0, p = fmt + 7;
    else
        return -1;
    int used = 0; /* bits of value placed so far */
    while (*p && *p != '\n') {
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (end == p || lo > 63)
            return -1;
        p = end;
        if (*p == '-') {
            hi = strtoul(p + 1, &end, 10);
            if (end == p + 1 || hi > 63 || hi < lo)
                return -1;
            p = end;
        }
        int width = (int)(hi - lo + 1);
        uint64_t mask = width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
        uint64_t part = used >= 64 ? 0 : (value >> used) & mask;
        config[which] = (config[which] & ~(mask << lo)) | part << lo;
        used += width;
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    if (used == 0 || (used < 64 && value >> used))
        return -1; /* the value does not fit its field */
    return 0;
}

int npl__perf_event_parse(const char *spec, const char *(*format)(const char *term, void *ctx),
                          void *ctx, uint64_t config[3])
{
    config[0] = config[1] = config[2] = 0;
    if (!spec || !format)
        goto bad;
    const char *p = spec;
    while (*p && *p != '\n') {
        char term[64];
        size_t n = strcspn(p, "=,\n");
        if (n == 0 || n >= sizeof term)
            goto bad;
        memcpy(term, p, n);
        term[n] = 0;
        p += n;
        uint64_t value = 1; /* a term without a value is a flag */
        if (*p == '=') {
            char *end;
            value = strtoull(p + 1, &end, 0);
            if (end == p + 1)
                goto bad;
            p = end;
        }
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            goto bad;
        const char *fmt = format(term, ctx);
        if (!fmt || apply_format(fmt, value, config) < 0)
            goto bad;
    }
    return 0;
bad:
    errno = EINVAL;
    return -1;
}
