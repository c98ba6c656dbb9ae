/* SPDX-License-Identifier: BSD-3-Clause */
/* perf.c - the perf backend's pure parts (its system calls: backend_perf.c): decoding a perf
 * ring buffer's records and a sysfs event's terms (docs/PROFILE.md §8). No system call, no lock,
 * no allocation. */
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

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
