/* SPDX-License-Identifier: BSD-3-Clause */
/* mai_state.c - libnumaplace_mai: global state, config file, set-up, machine queries, threads
 * and statistics of the MAi-compatible API. */
#define _GNU_SOURCE
#include "mai_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct mai_state mai__st;
pthread_mutex_t mai__lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int last_errno;
static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_go = PTHREAD_COND_INITIALIZER;
static int barrier_arrived;
static unsigned long barrier_round;

int mai__fail(int err)
{
    last_errno = err;
    errno = err;
    return -1;
}

void mai__ok(void)
{
    last_errno = 0;
}

void mai__finish(int rc)
{
    int err = errno;
    pthread_mutex_unlock(&mai__lock);
    if (rc < 0)
        mai__fail(err);
    else
        mai__ok();
}

int mai_last_errno(void)
{
    return last_errno;
}

size_t mai__page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* next integer of a config text: 1 read, 0 end, -1 not a number */
static int next_int(const char **s, int *v)
{
    char *end;
    while (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')
        (*s)++;
    if (!**s)
        return 0;
    errno = 0;
    long x = strtol(*s, &end, 10);
    if (end == *s || errno || x < INT_MIN || x > INT_MAX ||
        (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r'))
        return -1;
    *s = end;
    *v = (int)x;
    return 1;
}

int mai__parse_config(const char *text, struct mai_config *out)
{
    const char *s = text;
    int v;
    if (!text || !out)
        return mai__fail(EINVAL);
    memset(out, 0, sizeof *out);
    if (next_int(&s, &out->nnodes) != 1 || out->nnodes < 1 || out->nnodes > MAXNODES)
        return mai__fail(EINVAL);
    for (int i = 0; i < out->nnodes; i++) {
        if (next_int(&s, &out->nodes[i]) != 1 || out->nodes[i] < 0 || out->nodes[i] >= MAXNODES)
            return mai__fail(EINVAL);
        for (int j = 0; j < i; j++)
            if (out->nodes[j] == out->nodes[i])
                return mai__fail(EINVAL);
    }
    int r = next_int(&s, &out->nthreads);
    if (r == 0) {
        out->nthreads = 0;
        return 0;
    }
    if (r < 0 || out->nthreads < 0 || out->nthreads > MAXTHREADS)
        return mai__fail(EINVAL);
    for (int i = 0; i < out->nthreads; i++)
        if (next_int(&s, &out->cpus[i]) != 1 || out->cpus[i] < 0 || out->cpus[i] >= CPU_SETSIZE)
            return mai__fail(EINVAL);
    if (next_int(&s, &v) != 0) /* trailing garbage */
        return mai__fail(EINVAL);
    return 0;
}

/* the config of a file (NULL/"": automatic), checked against this machine */
static int load_config(const char *filename, struct mai_config *cfg)
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        return mai__fail(errno);
    if (filename && *filename) {
        /* never blocks: a FIFO (or a device) is refused, not waited on */
        int fd = open(filename, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st = {0};
        if (fd < 0)
            return mai__fail(errno);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
            close(fd);
            return mai__fail(e);
        }
        FILE *f = fdopen(fd, "r");
        char buf[65536];
        if (!f) {
            close(fd);
            return mai__fail(ENOMEM);
        }
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        int big = !feof(f);
        fclose(f);
        if (big)
            return mai__fail(EINVAL);
        buf[n] = 0;
        if (mai__parse_config(buf, cfg) < 0)
            return -1;
    } else {
        memset(cfg, 0, sizeof *cfg);
        cfg->nnodes = npl_topo_node_count(t, 0);
        for (int i = 0; i < cfg->nnodes && i < MAXNODES; i++)
            cfg->nodes[i] = npl_topo_node_id(t, i);
        const char *env = getenv("OMP_NUM_THREADS");
        int want = env ? atoi(env) : 0;
        if (want > MAXTHREADS)
            want = MAXTHREADS;
        for (int i = 0; i < want; i++) {
            int c = npl_pin_cpu(t, "compact", i);
            if (c < 0)
                return mai__fail(errno);
            cfg->cpus[cfg->nthreads++] = c;
        }
    }
    for (int i = 0; i < cfg->nnodes; i++) {
        struct npl_node_info info;
        if (npl_topo_node_info(t, cfg->nodes[i], &info) < 0 || !info.allowed)
            return mai__fail(EINVAL);
    }
    for (int i = 0; i < cfg->nthreads; i++)
        if (npl_topo_cpu_node(t, cfg->cpus[i]) < 0)
            return mai__fail(EINVAL);
    return 0;
}

static unsigned long long pages_moved_now(void)
{
    struct npl_stats s;
    struct npl_next_touch_stats nt;
    unsigned long long n = 0;
    if (npl_get_stats(&s) == 0)
        n += s.pages_moved;
    if (npl_next_touch_get_stats(&nt) == 0)
        n += nt.pages_moved;
    return n;
}

static void set_config(const struct mai_config *cfg)
{
    mai__st.cfg = *cfg;
    for (int i = 0; i < cfg->nnodes; i++)
        mai__st.node_masks[i] = cfg->nodes[i] < 64 ? 1UL << cfg->nodes[i] : 0;
    for (int i = 0; i < cfg->nthreads; i++)
        mai__st.cpu_masks[i] = cfg->cpus[i] < 64 ? 1UL << cfg->cpus[i] : 0;
}

void mai_init(const char *filename)
{
    struct mai_config cfg;
    if (mai__st.inited)
        mai_final();
    if (load_config(filename, &cfg) < 0)
        return;
    pthread_mutex_lock(&mai__lock);
    memset(&mai__st, 0, sizeof mai__st);
    set_config(&cfg);
    mai__st.moved_at_init = pages_moved_now();
    mai__st.inited = 1;
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

void mai_change(const char *filename)
{
    struct mai_config cfg;
    if (!mai__st.inited) {
        mai__fail(EPERM);
        return;
    }
    if (load_config(filename, &cfg) < 0)
        return;
    pthread_mutex_lock(&mai__lock);
    set_config(&cfg);
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

void mai_final(void)
{
    pthread_mutex_lock(&mai__lock);
    struct mai_array *a = mai__st.arrays;
    while (a) {
        struct mai_array *next = a->next;
        npl_next_touch_disarm(a->data); /* ENOENT when not armed */
        munmap(a->base, a->map_bytes);
        free(a);
        a = next;
    }
    memset(&mai__st, 0, sizeof mai__st);
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

void mai_barrier(void)
{
    int n = mai__st.cfg.nthreads;
    if (n <= 1)
        return;
    pthread_mutex_lock(&barrier_lock);
    unsigned long round = barrier_round;
    if (++barrier_arrived == n) {
        barrier_arrived = 0;
        barrier_round++;
        pthread_cond_broadcast(&barrier_go);
    } else {
        while (round == barrier_round)
            pthread_cond_wait(&barrier_go, &barrier_lock);
    }
    pthread_mutex_unlock(&barrier_lock);
}

int numa_check(void)
{
    const struct npl_support *s = npl_get_support();
    if (!s->mbind || !s->move_pages)
        return mai__fail(ENOSYS);
    return 0;
}

#define NEED_INIT(ret)                                                                           \
    do {                                                                                         \
        if (!mai__st.inited) {                                                                   \
            mai__fail(EPERM);                                                                    \
            return ret;                                                                          \
        }                                                                                        \
    } while (0)

int mai_get_num_nodes(void)
{
    NEED_INIT(-1);
    return mai__st.cfg.nnodes;
}

int mai_get_num_threads(void)
{
    NEED_INIT(-1);
    return mai__st.cfg.nthreads;
}

int mai_get_num_cpu(void)
{
    NEED_INIT(-1);
    return npl_topo_cpu_count(npl_topo_self());
}

int mai_get_num_cpus(void)
{
    return mai_get_num_cpu();
}

unsigned long *mai_get_nodes_id(void)
{
    NEED_INIT(NULL);
    return mai__st.node_masks;
}

unsigned long *mai_get_cpus_id(void)
{
    NEED_INIT(NULL);
    return mai__st.cfg.nthreads ? mai__st.cpu_masks : NULL;
}

void mai_show_nodes(void)
{
    NEED_INIT();
    printf("\n---Listing nodes----");
    for (int i = 0; i < mai__st.cfg.nnodes; i++)
        printf("\nNODE: %d", mai__st.cfg.nodes[i]);
    printf("\n--------------------\n");
}

void mai_show_cpus(void)
{
    NEED_INIT();
    printf("\n---Listing cpus/cores----\n");
    for (int i = 0; i < mai__st.cfg.nthreads; i++)
        printf("\nCPU/CORE: %d", mai__st.cfg.cpus[i]);
    printf("\n-------------------------\n");
}

int mai_get_maxnodes(void)
{
    return npl_topo_node_count(npl_topo_self(), 0);
}

int mai_get_maxcpus(void)
{
    return npl_topo_cpu_count(npl_topo_self());
}

int mai_get_ncpusnode(void)
{
    const npl_topo *t = npl_topo_self();
    for (int i = 0; i < npl_topo_node_count(t, 0); i++) {
        int n = npl_topo_node_cpus(t, npl_topo_node_id(t, i), NULL, 0);
        if (n > 0)
            return n;
    }
    return mai__fail(ENODEV);
}

int *mai_get_cpusnode(int nodeid)
{
    const npl_topo *t = npl_topo_self();
    int per = mai_get_ncpusnode();
    int n = npl_topo_node_cpus(t, nodeid, NULL, 0);
    if (n < 0 || per < 0) {
        mai__fail(EINVAL);
        return NULL;
    }
    int cap = n > per ? n : per;
    int *ids = calloc((size_t)cap + 1, sizeof *ids);
    if (!ids) {
        mai__fail(ENOMEM);
        return NULL;
    }
    npl_topo_node_cpus(t, nodeid, ids, cap);
    for (int i = 0; i < n; i++)
        ids[i]++;
    return ids;
}

float mai_numafactor(int node1, int node2)
{
    const npl_topo *t = npl_topo_self();
    int d = npl_topo_distance(t, node1 - 1, node2 - 1);
    int local = npl_topo_distance(t, node1 - 1, node1 - 1);
    if (d < 0 || local <= 0)
        return (float)mai__fail(EINVAL);
    return (float)d / (float)local;
}

float mai_bandwidth(int node1, int node2)
{
    enum { MAXF = 64 };
    int nodes[MAXF], a = -1, b = -1;
    static double lat[MAXF * MAXF], bw[MAXF * MAXF];
    const npl_config *c = npl_config_self();
    if (node1 < 1 || node2 < 1)
        return (float)mai__fail(EINVAL);
    pthread_mutex_lock(&mai__lock);
    int n = c ? npl_config_factors(c, nodes, lat, bw, MAXF) : 0;
    for (int i = 0; i < n; i++) {
        if (nodes[i] == node1 - 1)
            a = i;
        if (nodes[i] == node2 - 1)
            b = i;
    }
    double v = (a >= 0 && b >= 0) ? bw[a * n + b] : -1;
    pthread_mutex_unlock(&mai__lock);
    if (v < 0)
        return (float)mai__fail(ENOENT);
    return (float)v;
}

float mai_nodebandwidth(int node)
{
    return mai_bandwidth(node, node);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* pin tid (0: caller) to cpu (OS id) */
static void pin_tid(pid_t tid, int cpu)
{
    cpu_set_t set;
    double t0 = now_s();
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        mai__fail(EINVAL);
        return;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(tid, sizeof set, &set) < 0) {
        mai__fail(errno);
        return;
    }
    mai__st.time_tmig = now_s() - t0;
    mai__ok();
}

void mai_bind_thread(pid_t tid, int cpu)
{
    pin_tid(tid, cpu - 1);
}

void mai_migrate_thread(pid_t tid, unsigned long cpu)
{
    pin_tid(tid, cpu > (unsigned long)CPU_SETSIZE ? -1 : (int)cpu);
}

void mai_set_thread_id_posix(void)
{
    NEED_INIT();
    pthread_mutex_lock(&mai__lock);
    if (mai__st.nthread_ids < MAXTHREADS)
        mai__st.thread_ids[mai__st.nthread_ids++] = (pid_t)syscall(SYS_gettid);
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

void mai_bind_thread_posix(pid_t tid)
{
    NEED_INIT();
    int cpu = -1, k;
    pthread_mutex_lock(&mai__lock);
    for (k = 0; k < mai__st.nthread_ids && mai__st.thread_ids[k] != tid; k++)
        ;
    if (mai__st.cfg.nthreads > 0)
        cpu = mai__st.cfg.cpus[k % mai__st.cfg.nthreads];
    else
        cpu = npl_pin_cpu(NULL, "compact", k);
    pthread_mutex_unlock(&mai__lock);
    pin_tid(tid, cpu);
}

void mai_show_thread_ids(void)
{
    NEED_INIT();
    for (int i = 0; i < mai__st.nthread_ids; i++)
        printf("\nThread id %d", (int)mai__st.thread_ids[i]);
    printf("\n");
}

void mai_print_threadcpus(void)
{
    NEED_INIT();
    for (int i = 0; i < mai__st.nthread_ids; i++)
        printf("\nThread id %d - CPU/CORE %d", (int)mai__st.thread_ids[i],
               mai_get_threadcpu(mai__st.thread_ids[i]));
    printf("\n");
}

void mai_set_number_threads(int nthreads)
{
    NEED_INIT();
    if (nthreads < 0 || nthreads > MAXTHREADS) {
        mai__fail(EINVAL);
        return;
    }
    pthread_mutex_lock(&mai__lock);
    mai__st.cfg.nthreads = nthreads;
    pthread_mutex_unlock(&mai__lock);
    mai__ok();
}

int mai_get_threadcpu(pid_t tid)
{
    char path[64], buf[1024];
    if (tid == 0 || tid == (pid_t)syscall(SYS_gettid)) {
        int cpu;
        if (npl_where_am_i(&cpu, NULL) < 0)
            return mai__fail(errno);
        return cpu;
    }
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return mai__fail(ESRCH);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')'); /* fields after the command name; "processor" is field 39 */
    int field = 2, cpu = -1;
    for (; s && *s; s++)
        if (*s == ' ' && ++field == 39) {
            cpu = atoi(s + 1);
            break;
        }
    return cpu < 0 ? mai__fail(EIO) : cpu;
}

int mai_get_threadnode(pid_t tid)
{
    int cpu = mai_get_threadcpu(tid);
    if (cpu < 0)
        return -1;
    return npl_topo_cpu_node(npl_topo_self(), cpu);
}

void mai_print_pagenodes(unsigned long *pageaddrs, int size)
{
    if (!pageaddrs || size < 0) {
        mai__fail(EINVAL);
        return;
    }
    for (int i = 0; i < size; i++) {
        int node;
        void *pg = (void *)(pageaddrs[i] & ~(unsigned long)(mai__page_size() - 1));
        if (npl_query_pages(pg, 1, &node, 1) != 1 || node < 0)
            printf("  page #%d is not allocated\n", i);
        else
            printf("  page #%d is on node #%d\n", i, node);
    }
}

int mai_number_page_migration(unsigned long *pageaddrs, int size)
{
    (void)pageaddrs;
    NEED_INIT(-1);
    if (size < 0)
        return mai__fail(EINVAL);
    unsigned long long n = pages_moved_now() - mai__st.moved_at_init;
    return n > INT_MAX ? INT_MAX : (int)n;
}

double mai_get_time_pmigration(void)
{
    return mai__st.time_pmig;
}

int mai_number_thread_migration(unsigned int *threads, int size)
{
    (void)threads;
    (void)size;
    return mai__fail(ENOSYS);
}

double mai_get_time_tmigration(void)
{
    return mai__st.time_tmig;
}

void mai_get_log(void)
{
    mai__fail(ENOSYS);
}
