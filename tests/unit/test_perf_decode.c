/* SPDX-License-Identifier: BSD-3-Clause */
/* The perf backend's pure parts (src/profile/perf.c) on synthetic data: ring buffers of perf
 * records decoded (samples with their fields in the kernel's order, records wrapping around the
 * ring's end, PERF_RECORD_LOST counted, other records skipped, corrupt sizes and unsupported
 * sample fields refused), sysfs event strings made configs, the thread-id table, and addresses
 * found in the raw profile's arrays (the newest live one wins over one freed); each thread's
 * exposure read from its CPU clock, in all and by phase (a thread first seen: its whole clock). */
#include "check.h"
#include "profile/profile.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING 256 /* bytes: small, so that records wrap */

struct ring {
    unsigned char data[RING];
    uint64_t head;
};

static void put(struct ring *r, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        r->data[(r->head + i) % RING] = ((const unsigned char *)p)[i];
    r->head += n;
}

static void put_u64(struct ring *r, uint64_t v) { put(r, &v, 8); }
static void put_u32x2(struct ring *r, uint32_t a, uint32_t b)
{
    put(r, &a, 4);
    put(r, &b, 4);
}

/* a sample of type TID | ADDR | CPU (+ IP, TIME and DATA_SRC when full) */
static void put_sample(struct ring *r, int full, uint32_t pid, uint32_t tid, uint64_t addr,
                       uint32_t cpu, uint64_t src)
{
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(8 + 24 + (full ? 24 : 0))};
    put(r, &h, sizeof h);
    if (full)
        put_u64(r, 0x401000); /* IP */
    put_u32x2(r, pid, tid);
    if (full)
        put_u64(r, 123456789); /* TIME */
    put_u64(r, addr);
    put_u32x2(r, cpu, 0);
    if (full)
        put_u64(r, src);
}

struct got {
    int n;
    struct npl_perf_sample s[64];
};
static void collect(const struct npl_perf_sample *s, void *arg)
{
    struct got *g = arg;
    if (g->n < 64)
        g->s[g->n++] = *s;
}

static const uint64_t BASIC = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU;
static const uint64_t FULL = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                             PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC;

static void test_decode(void)
{
    struct ring r = {{0}, 0};
    struct got g = {0};
    uint64_t lost = 0;
    /* start near the end so that the third record wraps around */
    r.head = RING - 40;
    uint64_t tail = r.head;
    put_sample(&r, 0, 10, 11, 0x7000, 1, 0);
    put_sample(&r, 0, 10, 12, 0x8008, 0, 0); /* wraps: its header in the ring's last 8 bytes */
    struct perf_event_header comm = {PERF_RECORD_COMM, 0, 24}; /* skipped */
    put(&r, &comm, sizeof comm);
    put_u64(&r, 0);
    put_u64(&r, 0);
    struct perf_event_header lh = {PERF_RECORD_LOST, 0, 24};
    put(&r, &lh, sizeof lh);
    put_u64(&r, 77); /* id */
    put_u64(&r, 5);  /* lost */
    put_sample(&r, 0, 10, 13, 0x9010, 3, 0);
    long n = npl__perf_decode(r.data, RING, tail, r.head, BASIC, collect, &g, &lost);
    CHECK(n == 3 && g.n == 3, "decoded %ld samples (%d), want 3", n, g.n);
    CHECK(lost == 5, "lost %llu, want 5", (unsigned long long)lost);
    CHECK(g.s[0].pid == 10 && g.s[0].tid == 11 && g.s[0].addr == 0x7000 && g.s[0].cpu == 1,
          "sample 0: %u %u %llx %u", g.s[0].pid, g.s[0].tid, (unsigned long long)g.s[0].addr,
          g.s[0].cpu);
    CHECK(g.s[1].tid == 12 && g.s[1].addr == 0x8008 && g.s[1].cpu == 0,
          "sample 1 (wrapped): %u %llx %u", g.s[1].tid, (unsigned long long)g.s[1].addr,
          g.s[1].cpu);
    CHECK(g.s[2].tid == 13 && g.s[2].addr == 0x9010 && g.s[2].cpu == 3, "sample 2: %u %llx %u",
          g.s[2].tid, (unsigned long long)g.s[2].addr, g.s[2].cpu);

    /* the full field set: IP, TIME and DATA_SRC read, wrapping inside a field */
    struct ring f = {{0}, RING - 20};
    tail = f.head;
    put_sample(&f, 1, 1, 2, 0xabc000, 7, (uint64_t)PERF_MEM_OP_STORE << PERF_MEM_OP_SHIFT);
    put_sample(&f, 1, 1, 3, 0xdef000, 6, (uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT);
    g.n = 0;
    n = npl__perf_decode(f.data, RING, tail, f.head, FULL, collect, &g, NULL);
    CHECK(n == 2 && g.s[0].addr == 0xabc000 && g.s[0].cpu == 7 && g.s[1].tid == 3 &&
              g.s[1].addr == 0xdef000,
          "full samples: %ld, %llx %u %u %llx", n, (unsigned long long)g.s[0].addr, g.s[0].cpu,
          g.s[1].tid, (unsigned long long)g.s[1].addr);
    CHECK(g.s[0].ip == 0x401000 && g.s[0].time == 123456789 && g.s[1].time == 123456789,
          "ip %llx, time %llu", (unsigned long long)g.s[0].ip, (unsigned long long)g.s[0].time);
    CHECK((g.s[0].data_src >> PERF_MEM_OP_SHIFT & PERF_MEM_OP_STORE) &&
              !(g.s[1].data_src >> PERF_MEM_OP_SHIFT & PERF_MEM_OP_STORE),
          "data sources: %llx %llx", (unsigned long long)g.s[0].data_src,
          (unsigned long long)g.s[1].data_src);

    /* nothing to read */
    CHECK(npl__perf_decode(r.data, RING, 40, 40, BASIC, collect, &g, &lost) == 0, "empty range");
    /* refused: an unsupported field, a size not a power of 2, more than the ring holds, a
     * record whose size runs past head or is below a header, a sample too short for its fields */
    errno = 0;
    CHECK(npl__perf_decode(r.data, RING, 0, 0, BASIC | PERF_SAMPLE_CALLCHAIN, collect, &g, NULL) ==
              -1 && errno == EINVAL, "a callchain is refused");
    CHECK(npl__perf_decode(r.data, 200, 0, 0, BASIC, collect, &g, NULL) == -1, "size 200 refused");
    CHECK(npl__perf_decode(r.data, RING, 0, RING + 8, BASIC, collect, &g, NULL) == -1,
          "a range longer than the ring is refused");
    struct ring b = {{0}, 0};
    struct perf_event_header big = {PERF_RECORD_SAMPLE, 0, 64};
    put(&b, &big, sizeof big);
    put_u64(&b, 0);
    CHECK(npl__perf_decode(b.data, RING, 0, b.head, BASIC, collect, &g, NULL) == -1,
          "a record past head is refused");
    struct ring z = {{0}, 0};
    struct perf_event_header zero = {PERF_RECORD_SAMPLE, 0, 0};
    put(&z, &zero, sizeof zero);
    CHECK(npl__perf_decode(z.data, RING, 0, z.head, BASIC, collect, &g, NULL) == -1,
          "a record of size 0 is refused (no endless loop)");
    struct ring s = {{0}, 0};
    struct perf_event_header shorty = {PERF_RECORD_SAMPLE, 0, 16};
    put(&s, &shorty, sizeof shorty);
    put_u64(&s, 0);
    g.n = 0;
    CHECK(npl__perf_decode(s.data, RING, 0, s.head, BASIC, collect, &g, NULL) == -1 && g.n == 0,
          "a sample shorter than its fields is refused");
}

/* formats of a made-up PMU */
static const char *fmt(const char *term, void *ctx)
{
    (void)ctx;
    if (!strcmp(term, "event"))
        return "config:0-7";
    if (!strcmp(term, "umask"))
        return "config:8-15";
    if (!strcmp(term, "ldlat"))
        return "config1:0-15";
    if (!strcmp(term, "split"))
        return "config2:0-3,8-11";
    if (!strcmp(term, "flag"))
        return "config:21";
    return NULL;
}

static void test_event_parse(void)
{
    uint64_t c[3];
    CHECK(npl__perf_event_parse("event=0xcd,umask=0x1,ldlat=3\n", fmt, NULL, c) == 0 &&
              c[0] == 0x1cd && c[1] == 3 && c[2] == 0,
          "mem-loads: %llx %llx %llx", (unsigned long long)c[0], (unsigned long long)c[1],
          (unsigned long long)c[2]);
    CHECK(npl__perf_event_parse("event=0xd0,umask=0x82", fmt, NULL, c) == 0 && c[0] == 0x82d0,
          "mem-stores: %llx", (unsigned long long)c[0]);
    CHECK(npl__perf_event_parse("split=0xab,flag", fmt, NULL, c) == 0 && c[2] == 0xa0b &&
              c[0] == (1ull << 21),
          "split field and flag: %llx %llx", (unsigned long long)c[2], (unsigned long long)c[0]);
    CHECK(npl__perf_event_parse("event=0x1cd", fmt, NULL, c) == -1, "a value wider than its field");
    CHECK(npl__perf_event_parse("nosuch=1", fmt, NULL, c) == -1, "an unknown term");
    CHECK(npl__perf_event_parse("event=", fmt, NULL, c) == -1, "a missing value");
    CHECK(npl__perf_event_parse("event=1;umask=2", fmt, NULL, c) == -1, "a bad separator");
}

/* a zeroed raw profile of this process, or NULL (a failed check) */
static struct npl_raw *new_raw(void)
{
    struct npl_raw *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                             -1, 0);
    CHECK(r != MAP_FAILED, "a raw profile mapped");
    return r == MAP_FAILED ? NULL : r;
}

static void test_raw(void)
{
    struct npl_raw *r = new_raw();
    if (!r)
        return;
    /* thread ids: set, changed, two that collide in the hash, an unknown one */
    npl__raw_set_tid(r, 1000, 0);
    npl__raw_set_tid(r, 1001, 1);
    npl__raw_set_tid(r, 1001 + NPL_RAW_TIDS * 7, 5); /* may share a slot: probed past */
    npl__raw_set_tid(r, 1001, 2);
    CHECK(npl__raw_thread_of(r, 1000) == 0 && npl__raw_thread_of(r, 1001) == 2 &&
              npl__raw_thread_of(r, 1001 + NPL_RAW_TIDS * 7) == 5 &&
              npl__raw_thread_of(r, 999) == -1 && npl__raw_thread_of(r, 0) == -1,
          "tids: %d %d %d %d", npl__raw_thread_of(r, 1000), npl__raw_thread_of(r, 1001),
          npl__raw_thread_of(r, 1001 + NPL_RAW_TIDS * 7), npl__raw_thread_of(r, 999));
    /* arrays: 0 freed at 0x10000, 1 live at the same place, 2 live elsewhere */
    uint64_t bases[3] = {0x10000, 0x10000, 0x40000};
    uint32_t states[3] = {NPL_RAW_GONE, NPL_RAW_LIVE, NPL_RAW_LIVE};
    for (int i = 0; i < 3; i++) {
        r->arrays[i].base = bases[i];
        r->arrays[i].bytes = 0x8000;
        r->arrays[i].chunk_bytes = 0x1000;
        r->arrays[i].nchunks = 8;
        atomic_store(&r->arrays[i].state, states[i]);
    }
    atomic_store(&r->narrays, 3);
    uint32_t a = 99;
    uint64_t c = 99;
    CHECK(npl__raw_find(r, 0x13004, 0, &a, &c) == 0 && a == 1 && c == 3, "live over gone: %u %llu",
          a, (unsigned long long)c);
    CHECK(npl__raw_find(r, 0x47fff, 0, &a, &c) == 0 && a == 2 && c == 7, "last byte: %u %llu", a,
          (unsigned long long)c);
    CHECK(npl__raw_find(r, 0x48000, 0, &a, &c) == -1 && npl__raw_find(r, 0xffff, 0, &a, &c) == -1,
          "outside every array");
    /* by time: array 0 lived from 100 to 200, array 1 from 300 on, array 2 from 50 on */
    uint64_t born[3] = {100, 300, 50}, died[3] = {200, 0, 0};
    for (int i = 0; i < 3; i++) {
        atomic_store(&r->arrays[i].born_ns, born[i]);
        atomic_store(&r->arrays[i].gone_ns, died[i]);
    }
    int a150 = npl__raw_find(r, 0x10000, 150, &a, &c) == 0 ? (int)a : -1;
    int a250 = npl__raw_find(r, 0x10000, 250, &a, &c) == 0 ? (int)a : -1;
    int a300 = npl__raw_find(r, 0x10000, 300, &a, &c) == 0 ? (int)a : -1;
    int a99 = npl__raw_find(r, 0x10000, 99, &a, &c) == 0 ? (int)a : -1;
    int a200 = npl__raw_find(r, 0x10000, 200, &a, &c) == 0 ? (int)a : -1;
    CHECK(a150 == 0 && a250 == -1 && a300 == 1 && a99 == -1 && a200 == -1,
          "by time: at 150 %d (want 0), 250 %d (-1), 300 %d (1), 99 %d (-1), 200 %d (-1)", a150,
          a250, a300, a99, a200);
    CHECK(npl__raw_find(r, 0x40000, 60, &a, &c) == 0 && a == 2 &&
              npl__raw_find(r, 0x40000, 49, &a, &c) == -1,
          "array 2 from 50 on");
    atomic_store(&r->arrays[1].state, NPL_RAW_GONE);
    CHECK(npl__raw_find(r, 0x10000, 0, &a, &c) == 0 && a == 1, "both gone: the newest, %u", a);
    /* rows: the same key adds up, reads and writes apart, counters follow */
    struct npl_raw_row *row0 = npl__raw_add(r, 2, 0, 7, 3, 0);
    CHECK(row0 && npl__raw_add(r, 2, 0, 7, 3, 1) == row0 && npl__raw_add(r, 2, 0, 7, 3, 1) == row0,
          "one key, one row");
    struct npl_raw_row *row1 = npl__raw_add(r, 2, 1, 7, 3, 0);
    CHECK(row1 && row1 != row0, "another phase, another row");
    CHECK(npl__raw_add(r, 2, 0, NPL_RAW_CHUNKS, 3, 0) == NULL && r->rows_dropped == 1,
          "a chunk past the table is dropped");
    uint64_t key = NPL_RAW_KEY(2, 0, 7, 3);
    int rows = 0, found = 0;
    for (uint64_t i = 0; i < r->rows_used; i++) {
        if (!r->rows[i].key)
            continue;
        rows++;
        if (r->rows[i].key == key)
            found = r->rows[i].reads == 1 && r->rows[i].writes == 2;
    }
    CHECK(rows == 2 && found && r->samples == 4 && r->arrays[2].samples == 4,
          "rows %d, found %d, samples %llu", rows, found, (unsigned long long)r->samples);
    /* measured locality: in the array's totals and in the sample's row (an unknown one, or one
     * dropped (no row), in the totals only; never a new row) */
    npl__raw_measured(r, 2, row0, NPL_RAW_LOCAL);
    npl__raw_measured(r, 2, row0, NPL_RAW_LOCAL);
    npl__raw_measured(r, 2, row0, NPL_RAW_REMOTE);
    npl__raw_measured(r, 2, row0, NPL_RAW_UNKNOWN);
    npl__raw_measured(r, 2, row1, NPL_RAW_REMOTE);
    npl__raw_measured(r, 2, NULL, NPL_RAW_LOCAL); /* dropped: no row */
    npl__raw_measured(r, NPL_RAW_ARRAYS, row0, NPL_RAW_LOCAL); /* no such array: ignored */
    uint32_t l0 = 0, r0 = 0, l1 = 0, r1 = 0;
    rows = 0;
    for (uint64_t i = 0; i < r->rows_used; i++) {
        rows += r->rows[i].key != 0;
        if (r->rows[i].key == key)
            l0 = r->rows[i].local, r0 = r->rows[i].remote;
        if (r->rows[i].key == NPL_RAW_KEY(2, 1, 7, 3))
            l1 = r->rows[i].local, r1 = r->rows[i].remote;
    }
    CHECK(rows == 2 && l0 == 2 && r0 == 1 && l1 == 0 && r1 == 1,
          "rows' measured: %d rows, (%u, %u) and (%u, %u)", rows, l0, r0, l1, r1);
    CHECK(r->arrays[2].local == 3 && r->arrays[2].remote == 2 && r->arrays[2].unknown == 1,
          "the array's measured totals: %llu %llu %llu", (unsigned long long)r->arrays[2].local,
          (unsigned long long)r->arrays[2].remote, (unsigned long long)r->arrays[2].unknown);
    npl__raw_count_node(r, 4, 1);
    npl__raw_count_node(r, 4, 1);
    npl__raw_count_node(r, 2, NPL_RAW_NODES); /* past the table: ignored */
    CHECK(r->thread_node[4][1] == 2 && r->nthreads == 5, "nodes: %u, threads %u",
          r->thread_node[4][1], r->nthreads);
    munmap(r, sizeof *r);
}

/* Rows made by several threads at once: every key gets one row, every count lands in it (the
 * bucket chains' pushes race; the table has fewer buckets than keys, so chains are long). */
#define RACE_THREADS 4
#define RACE_KEYS 40000 /* more than NPL_RAW_BUCKETS: every chain holds several rows */
static struct npl_raw *race_r;
static void *race(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    for (uint32_t pass = 0; pass < 3; pass++)
        for (uint32_t k = 0; k < RACE_KEYS; k++) {
            uint32_t key = (k * 7919u + t * 104729u) % RACE_KEYS; /* each thread its own order */
            npl__raw_add(race_r, key % 64, 0, key / 64, 1, (int)(pass == 1));
        }
    return NULL;
}

static void test_rows_race(void)
{
    if (!(race_r = new_raw()))
        return;
    pthread_t th[RACE_THREADS];
    for (uintptr_t t = 0; t < RACE_THREADS; t++)
        pthread_create(&th[t], NULL, race, (void *)t);
    for (int t = 0; t < RACE_THREADS; t++)
        pthread_join(th[t], NULL);
    uint64_t rows = 0, bad = 0;
    for (uint64_t i = 0; i < race_r->rows_used; i++) {
        if (!race_r->rows[i].key)
            continue; /* made by a push that lost its race: never in a chain */
        rows++;
        bad += race_r->rows[i].reads != 2 * RACE_THREADS || race_r->rows[i].writes != RACE_THREADS;
    }
    uint64_t chained = 0;
    for (size_t b = 0; b < NPL_RAW_BUCKETS; b++)
        for (uint32_t v = race_r->buckets[b]; v; v = race_r->rows[v - 1].next)
            chained++;
    CHECK(rows == RACE_KEYS && chained == RACE_KEYS && bad == 0 &&
              race_r->samples == 3ull * RACE_THREADS * RACE_KEYS && race_r->rows_dropped == 0,
          "raced rows: %llu rows (want %d), %llu chained, %llu with wrong counts, %llu samples",
          (unsigned long long)rows, RACE_KEYS, (unsigned long long)chained,
          (unsigned long long)bad, (unsigned long long)race_r->samples);
    munmap(race_r, sizeof *race_r);
}

/* ---- each thread's exposure (npl__raw_thread_clocks), in all and by phase ---- */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
static void spin(double secs)
{
    double t0 = cpu_now();
    for (volatile unsigned k = 0; cpu_now() - t0 < secs; k++)
        ;
}
static pthread_barrier_t expo_bar;
static struct npl_raw *expo_r;
static void *expo_thread(void *arg)
{
    (void)arg;
    npl__raw_set_tid(expo_r, (int32_t)syscall(SYS_gettid), 1);
    spin(0.03);                       /* 30 ms of CPU before any round saw it */
    pthread_barrier_wait(&expo_bar);  /* the round reads its clock */
    pthread_barrier_wait(&expo_bar);
    return NULL;
}

static void test_exposure(void)
{
    struct npl_raw *r = new_raw();
    if (!r)
        return;
    expo_r = r;
    npl__raw_set_tid(r, (int32_t)syscall(SYS_gettid), 0);
    atomic_store(&r->cur_phase, 2);
    npl__raw_thread_clocks(r, 1); /* the first round: the clocks read, nothing counted */
    CHECK(r->exposure_ns[0] == 0, "first round: no exposure (%llu ns)",
          (unsigned long long)r->exposure_ns[0]);
    pthread_t th;
    pthread_barrier_init(&expo_bar, NULL, 2);
    pthread_create(&th, NULL, expo_thread, NULL);
    spin(0.02);
    pthread_barrier_wait(&expo_bar);
    atomic_store(&r->cur_phase, 3);
    npl__raw_thread_clocks(r, 1); /* thread 1 first seen: its whole clock, in phase 3 */
    pthread_barrier_wait(&expo_bar);
    pthread_join(th, NULL);
    uint64_t in3[2] = {0, 0}, other = 0;
    for (size_t k = 0; k < NPL_RAW_EXPOSURES; k++) {
        uint64_t key = r->exposures[k].key;
        if (key && (key - 1) >> 32 == 3 && ((key - 1) & 0xffffffffu) < 2)
            in3[(key - 1) & 1] += r->exposures[k].count;
        else if (key)
            other += r->exposures[k].count;
    }
    CHECK(r->exposure_ns[0] >= 15000000 && r->exposure_ns[1] >= 25000000,
          "second round: thread 0 %.1f ms (>= 15), thread 1 first seen %.1f ms (>= 25: its whole "
          "clock)", r->exposure_ns[0] / 1e6, r->exposure_ns[1] / 1e6);
    CHECK(in3[0] == r->exposure_ns[0] && in3[1] == r->exposure_ns[1] && other == 0,
          "by phase: all of it in phase 3, the phase at the round (%.1f and %.1f ms, %.1f "
          "elsewhere)", in3[0] / 1e6, in3[1] / 1e6, other / 1e6);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    CHECK(r->thread_cpu[0] >= 1 && r->thread_cpu[0] <= ncpu && r->thread_cpu[1] >= 1 &&
              r->thread_cpu[1] <= ncpu,
          "threads without a sample: the CPU each ran on noted (1 + cpu: %d and %d, of %ld)",
          (int)r->thread_cpu[0], (int)r->thread_cpu[1], ncpu);
    npl__raw_thread_clocks(r, 0); /* nothing armed: nothing counted */
    CHECK(r->exposures_dropped == 0, "no exposure dropped");
    pthread_barrier_destroy(&expo_bar);
    munmap(r, sizeof *r);
}

/* A thread that ran while pages were armed but took no sample, numbered after the last sampled
 * one, is in the profile (it was left out: nothing said it ran) when it ran at least half as
 * long as the most exposed sampled thread, on the node of the CPU it was seen on; one that ran
 * less (a runtime's helper) is not. */
static void test_unsampled_threads(void)
{
    struct npl_raw *r = new_raw();
    if (!r)
        return;
    npl__raw_count_node(r, 0, 0); /* thread 0: a sample on node 0; nthreads 1 */
    r->page_size = 4096;
    r->exposure_ns[0] = 5000000;
    r->exposure_ns[3] = 4000000; /* thread 3: ran, no sample, seen on CPU 5 */
    r->thread_cpu[3] = 1 + 5;
    r->exposure_ns[2] = 3000000; /* thread 2: ran, no sample, its CPU unknown */
    r->exposure_ns[4] = 2000000; /* thread 4: ran less than half as long as thread 0: left out */
    static const int nodes[2] = {0, 2}, cpu_node[8] = {0, 0, 0, 0, 2, 2, 2, 2};
    struct npl_collect_info in = {"/bin/prog", NULL, nodes, 2, 4096, 0, NULL, 1000, 1.0,
                                  cpu_node, 8, 1};
    struct npl_profile *p = NULL;
    char err[256] = "";
    int rc = npl__profile_from_raw(r, &in, &p, err, sizeof err);
    CHECK(rc == 0 && p, "collected: %s", err);
    if (p) {
        CHECK(p->idle_sleep == 1, "the run's passive OpenMP waiting carried: %d", p->idle_sleep);
        CHECK(p->threads == 4, "threads 0-3 (3 ran unsampled as long; 4 a moment): %d",
              p->threads);
        CHECK(p->threads == 4 && p->thread_nodes[3] == 2 && p->thread_nodes[2] == 0 &&
                  p->thread_nodes[1] == 0,
              "thread 3 on its CPU's node 2, 2 and 1 where thread 0 is: %d %d %d",
              p->threads == 4 ? p->thread_nodes[3] : -1, p->thread_nodes[2], p->thread_nodes[1]);
        CHECK(p->thread_exposure && p->thread_exposure[3] > 0.0039 &&
                  p->thread_exposure[3] < 0.0041,
              "thread 3's exposure kept: %g s", p->thread_exposure ? p->thread_exposure[3] : -1);
        npl__profile_free(p);
    }
    munmap(r, sizeof *r);
}

int main(void)
{
    test_unsampled_threads();
    test_decode();
    test_exposure();
    test_event_parse();
    test_raw();
    test_rows_race();
    return check_summary("test_perf_decode");
}
