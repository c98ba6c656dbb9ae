/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_perf.c - the perf sampling backend (docs/PROFILE.md §8), a row of backends.c's table,
 * run by the command (numaplace profile): memory-address samples of
 * perf_event_open, read by this process (the profiled program's parent) into the raw profile the
 * program shares with it, in the same (array, phase, chunk, thread) rows as the fault sampler's.
 *
 * Events: Intel's mem-loads (reads) and mem-stores (writes) of the cpu or cpu_core PMU, as sysfs
 * describes them (precise, the highest level the PMU takes), else AMD's ibs_op (loads and stores
 * told apart by the sample's data source). One event per CPU and kind, for the child (inherited by
 * its threads, enabled at its exec), each with a ring buffer that this process reads every 10 ms.
 * Each sample's thread id becomes numaplace's thread number through the table the interposer
 * publishes, its address an array and chunk through the array table, its CPU a node, its phase
 * the program's phase when it is read (the drain's lag, at most about 10 ms, blurs phases
 * shorter than that).
 *
 * The test hook NUMAPLACE_PERF_EVENT=page-faults uses the software page-fault event instead
 * (every fault of the program, with its address), which virtual machines have: the pipeline is
 * tested with it; no machine available to this work had the hardware events. */
#define _GNU_SOURCE
#include "profile/profile.h"
#include "sys/sys.h"

#include <numaplace.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PMU_DIR "/sys/bus/event_source/devices"

struct ev {
    char name[128];
    uint32_t type;
    uint64_t config[3];
    int write;      /* 1 stores, 0 loads, -1 told by the data source */
    int hardware;   /* 0: the software stand-in */
    int precise;    /* precise_ip to ask for (lowered until the PMU takes it) */
    int kernel_too; /* the PMU cannot exclude the kernel (IBS on older kernels) */
};

struct ring {
    int fd, write;
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    uint64_t data_size;
    size_t map_len;
};

struct npl__sampling {
    struct ring *rings;
    int nrings;
    int *cpu_node; /* ncpu entries, -1 unknown */
    int ncpu;
    uint64_t sample_type;
    uint64_t read, lost, outside, unknown;
    int rw_known;
};

static int read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static long read_long(const char *path, long dflt)
{
    char b[64];
    return read_line(path, b, sizeof b) == 0 ? strtol(b, NULL, 10) : dflt;
}

/* a term's format of a PMU, from sysfs (for npl__perf_event_parse) */
struct fmt_ctx {
    const char *pmu;
    char buf[128];
};
static const char *pmu_format(const char *term, void *p)
{
    struct fmt_ctx *c = p;
    char path[256];
    if (strchr(term, '/'))
        return NULL;
    snprintf(path, sizeof path, PMU_DIR "/%s/format/%s", c->pmu, term);
    return read_line(path, c->buf, sizeof c->buf) == 0 ? c->buf : NULL;
}

/* a named event of a PMU (its sysfs events/NAME), as an ev: 0, or -1 */
static int pmu_event(const char *pmu, const char *name, int write, struct ev *e)
{
    char path[256], spec[256];
    snprintf(path, sizeof path, PMU_DIR "/%s/events/%s", pmu, name);
    if (read_line(path, spec, sizeof spec) < 0)
        return -1;
    snprintf(path, sizeof path, PMU_DIR "/%s/type", pmu);
    long type = read_long(path, -1);
    struct fmt_ctx c = {pmu, ""};
    memset(e, 0, sizeof *e);
    if (type < 0 || npl__perf_event_parse(spec, pmu_format, &c, e->config) < 0)
        return -1;
    snprintf(e->name, sizeof e->name, "%s/%s", pmu, name);
    e->type = (uint32_t)type;
    e->write = write;
    e->hardware = 1;
    e->precise = 3;
    return 0;
}

/* the events of this machine: how many (1 or 2), or -1 and why */
static int choose(struct ev ev[2], char *why, size_t size)
{
    const char *hook = getenv(NPL_ENV_PERF_EVENT);
    if (hook && *hook) {
        if (strcmp(hook, "page-faults")) {
            snprintf(why, size, NPL_ENV_PERF_EVENT "=%s: the only stand-in event is page-faults",
                     hook);
            return -1;
        }
        memset(&ev[0], 0, sizeof ev[0]);
        snprintf(ev[0].name, sizeof ev[0].name, "page-faults (the " NPL_ENV_PERF_EVENT
                                                " stand-in: no reads and writes)");
        ev[0].type = PERF_TYPE_SOFTWARE;
        ev[0].config[0] = PERF_COUNT_SW_PAGE_FAULTS;
        return 1;
    }
    static const char *const cpus[] = {"cpu", "cpu_core"};
    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++)
        if (pmu_event(cpus[i], "mem-loads", 0, &ev[0]) == 0)
            return 1 + (pmu_event(cpus[i], "mem-stores", 1, &ev[1]) == 0);
    long type = read_long(PMU_DIR "/ibs_op/type", -1);
    if (type >= 0) {
        memset(&ev[0], 0, sizeof ev[0]);
        snprintf(ev[0].name, sizeof ev[0].name, "ibs_op");
        ev[0].type = (uint32_t)type;
        ev[0].write = -1;
        ev[0].hardware = 1;
        return 1;
    }
    snprintf(why, size, "this machine has no memory-address sampling event (no mem-loads, no IBS: "
                        "a virtual machine?)");
    return -1;
}

static uint64_t per_event_rate(uint64_t rate, int ncpu)
{
    uint64_t f = rate / (uint64_t)(ncpu > 0 ? ncpu : 1);
    long max = read_long("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
    if (max > 0 && f > (uint64_t)max)
        f = (uint64_t)max;
    return f ? f : 1;
}

/* open e for pid on cpu: the fd, or -1 + errno; lowers e->precise until the PMU takes it */
static int open_ev(struct ev *e, pid_t pid, int cpu, uint64_t freq, uint64_t sample_type)
{
    for (;;) {
        struct perf_event_attr at;
        memset(&at, 0, sizeof at);
        at.size = sizeof at;
        at.type = e->type;
        at.config = e->config[0];
        at.config1 = e->config[1];
        at.config2 = e->config[2];
        at.sample_type = sample_type;
        if (e->hardware) {
            at.freq = 1;
            at.sample_freq = freq;
        } else {
            at.sample_period = 1;
        }
        at.precise_ip = (unsigned)e->precise;
        at.exclude_kernel = !e->kernel_too;
        at.exclude_hv = !e->kernel_too;
        at.use_clockid = 1; /* sample times comparable with the arrays' birth and death */
        at.clockid = CLOCK_MONOTONIC;
        at.disabled = 1;
        if (pid > 0) {
            at.inherit = 1;
            at.enable_on_exec = 1;
        }
        int fd = (int)syscall(SYS_perf_event_open, &at, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
            return fd;
        if ((errno == EINVAL || errno == EOPNOTSUPP) && e->precise > 0) {
            e->precise--;
            continue;
        }
        if ((errno == EINVAL || errno == EOPNOTSUPP) && e->hardware && !e->kernel_too) {
            e->kernel_too = 1; /* IBS cannot exclude the kernel on older kernels */
            e->precise = 0;
            continue;
        }
        return -1;
    }
}

static uint64_t sample_type_of(const struct ev *e)
{
    return PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
           (e->write < 0 ? PERF_SAMPLE_DATA_SRC : 0);
}

static void refusal(char *why, size_t size, const char *what)
{
    char p[32] = "?";
    int e = errno;
    if (read_line("/proc/sys/kernel/perf_event_paranoid", p, sizeof p) < 0)
        snprintf(p, sizeof p, "?");
    snprintf(why, size, "perf_event_open of %s: %s, perf_event_paranoid = %s", what, strerror(e),
             p);
}

static int perf_probe(char *what, size_t wsize, char *why, size_t size)
{
    struct ev ev[2];
    int n = choose(ev, why, size);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int fd = open_ev(&ev[i], 0, -1, 1000, sample_type_of(&ev[i]));
        if (fd < 0) {
            refusal(why, size, ev[i].name);
            return -1;
        }
        close(fd);
    }
    snprintf(what, wsize, "%s%s%s", ev[0].name, n > 1 ? " and " : "", n > 1 ? ev[1].name : "");
    return 0;
}

/* data pages of each ring: a power of 2, 64 at most, fewer on a large machine (16 MiB in all,
 * 8 pages at least), and within the locked-memory allowance of a user without CAP_IPC_LOCK
 * (perf_event_mlock_kb per CPU, for all its events) */
static size_t ring_pages(int nev, int ncpu)
{
    size_t pages = 64, ps = (size_t)sysconf(_SC_PAGESIZE);
    while (pages > 8 && pages * ps * (size_t)nev * (size_t)ncpu > ((size_t)16 << 20))
        pages /= 2;
    if (geteuid() != 0) {
        long kb = read_long("/proc/sys/kernel/perf_event_mlock_kb", 516);
        size_t each = (size_t)(kb > 0 ? kb : 516) * 1024 / (size_t)nev / ps; /* pages + 1 */
        while (pages > 1 && pages + 1 > each)
            pages /= 2;
    }
    return pages;
}

static void perf_close(struct npl__sampling *s);

static struct npl__sampling *perf_open(pid_t pid, uint64_t rate, char *why, size_t size)
{
    struct ev ev[2];
    int nev = choose(ev, why, size);
    if (nev < 0)
        return NULL;
    struct npl__sampling *s = calloc(1, sizeof *s);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (!s || ncpu < 1) {
        snprintf(why, size, "out of memory");
        free(s);
        return NULL;
    }
    s->ncpu = (int)ncpu;
    s->rings = calloc((size_t)ncpu * (size_t)nev, sizeof *s->rings);
    s->cpu_node = calloc((size_t)ncpu, sizeof *s->cpu_node);
    if (!s->rings || !s->cpu_node) {
        snprintf(why, size, "out of memory");
        perf_close(s);
        return NULL;
    }
    const npl_topo *topo = npl_topo_self();
    for (int c = 0; c < s->ncpu; c++)
        s->cpu_node[c] = topo ? npl_topo_cpu_node(topo, c) : -1;
    s->sample_type = sample_type_of(&ev[0]);
    s->rw_known = nev == 2 || ev[0].write < 0;
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), pages = ring_pages(nev, s->ncpu);
    uint64_t freq = per_event_rate(rate, s->ncpu);
    for (int c = 0; c < s->ncpu; c++) {
        for (int k = 0; k < nev; k++) {
            int fd = open_ev(&ev[k], pid, c, freq, s->sample_type);
            if (fd < 0 && errno == ENODEV)
                continue; /* an offline CPU */
            if (fd < 0) {
                refusal(why, size, ev[k].name);
                perf_close(s);
                return NULL;
            }
            struct ring *r = &s->rings[s->nrings++];
            r->fd = fd;
            r->write = ev[k].write;
            r->map_len = (pages + 1) * ps;
            void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) {
                snprintf(why, size, "the ring buffer of %s on CPU %d: %s", ev[k].name, c,
                         strerror(errno));
                r->map_len = 0;
                perf_close(s);
                return NULL;
            }
            r->meta = m;
            r->data = (unsigned char *)m + ps;
            r->data_size = pages * ps;
        }
    }
    if (!s->nrings) {
        snprintf(why, size, "no CPU took the event");
        perf_close(s);
        return NULL;
    }
    return s;
}

struct drain_ctx {
    struct npl__sampling *s;
    struct npl_raw *r;
    int write;
};

/* the sample's locality, asked now (the rings are read every 10 ms): the node of its page in the
 * sampled process (move_pages, no move) against its CPU's; unknown when either is not known or
 * the array is gone (its address may hold something else) */
static void measure(struct drain_ctx *d, uint32_t array, struct npl_raw_row *row,
                    const struct npl_perf_sample *p)
{
    struct npl_raw_array *a = &d->r->arrays[array];
    int node = (int)p->cpu < d->s->ncpu ? d->s->cpu_node[p->cpu] : -1;
    uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
    void *page = (void *)(uintptr_t)(p->addr / ps * ps);
    int st = -1, where = NPL_RAW_UNKNOWN;
    if (node >= 0 && p->pid && !atomic_load(&a->gone_ns) &&
        npl__page_node(NULL, (int)p->pid, page, &st) == 0 && st >= 0)
        where = st == node ? NPL_RAW_LOCAL : NPL_RAW_REMOTE;
    npl__raw_measured(d->r, array, row, where);
}

static void one_sample(const struct npl_perf_sample *p, void *arg)
{
    struct drain_ctx *d = arg;
    d->s->read++;
    uint32_t array;
    uint64_t chunk;
    if (npl__raw_find(d->r, p->addr, p->time, &array, &chunk) < 0) {
        d->s->outside++;
        return;
    }
    int t = npl__raw_thread_of(d->r, (int32_t)p->tid);
    if (t < 0) {
        d->s->unknown++;
        return;
    }
    int write = d->write;
    if (write < 0) /* told by the data source: mem_op's store bit */
        write = (p->data_src >> PERF_MEM_OP_SHIFT & PERF_MEM_OP_STORE) != 0;
    uint32_t phase = atomic_load(&d->r->cur_phase);
    if ((int)p->cpu < d->s->ncpu && d->s->cpu_node[p->cpu] >= 0)
        npl__raw_count_node(d->r, (uint32_t)t, (unsigned)d->s->cpu_node[p->cpu]);
    measure(d, array, npl__raw_add(d->r, array, phase, chunk, (uint32_t)t, write), p);
}

static void perf_drain(struct npl__sampling *s, struct npl_raw *r)
{
    for (int i = 0; s && i < s->nrings; i++) {
        struct ring *g = &s->rings[i];
        uint64_t head = __atomic_load_n(&g->meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = g->meta->data_tail;
        if (head == tail)
            continue;
        struct drain_ctx d = {s, r, g->write};
        if (npl__perf_decode(g->data, g->data_size, tail, head, s->sample_type, one_sample, &d,
                             &s->lost) < 0)
            s->lost++; /* a record that made no sense: the rest of this read is skipped */
        __atomic_store_n(&g->meta->data_tail, head, __ATOMIC_RELEASE);
    }
}

static void perf_stats(const struct npl__sampling *s, uint64_t *read, uint64_t *lost, uint64_t *outside,
                uint64_t *unknown, int *rw_known)
{
    *read = s->read;
    *lost = s->lost;
    *outside = s->outside;
    *unknown = s->unknown;
    *rw_known = s->rw_known;
}

static void perf_close(struct npl__sampling *s)
{
    if (!s)
        return;
    for (int i = 0; s->rings && i < s->nrings; i++) {
        if (s->rings[i].map_len)
            munmap(s->rings[i].meta, s->rings[i].map_len);
        close(s->rings[i].fd);
    }
    free(s->rings);
    free(s->cpu_node);
    free(s);
}

const struct npl__sampling_backend npl__backend_perf = {
    .name = "perf",
    .id = NPL_BACKEND_PERF,
    .probe = perf_probe,
    .start = perf_open,
    .drain = perf_drain,
    .stats = perf_stats,
    .stop = perf_close,
};
