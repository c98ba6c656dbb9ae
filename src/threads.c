/* threads.c - pin_thread done well: the n-th thread on the n-th allowed CPU of a strategy.
 * The order is pure (topology + strategy); pinning is one sched_setaffinity. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Allowed PUs with their node/core/smt, in OS order. */
static int allowed_cpus(const npl_topo *t, const struct npl_cpu_entry **v)
{
    int n = 0;
    for (int k = 0; k < t->ncpus; k++)
        if (t->cpus[k].allowed)
            v[n++] = &t->cpus[k];
    return n;
}

/* Rank of a PU among the allowed PUs of its core (0 = first allowed hyperthread). */
static int smt_rank(const npl_topo *t, const struct npl_cpu_entry *c)
{
    int r = 0;
    for (int k = 0; k < t->ncpus; k++)
        if (t->cpus[k].allowed && t->cpus[k].core == c->core && t->cpus[k].os < c->os)
            r++;
    return r;
}

/* compact: for each SMT level, nodes in order, cores in order (one thread per core first).
 * scatter: for each SMT level, the i-th core of every node in turn. CPUs without a node
 * (should not happen on Linux) count as one extra node after the others. */
static int order_by(const npl_topo *t, int scatter, int *out, int max)
{
    const struct npl_cpu_entry **v = malloc((size_t)(t->ncpus ? t->ncpus : 1) * sizeof *v);
    int *rank = malloc((size_t)(t->ncpus ? t->ncpus : 1) * sizeof *rank);
    if (!v || !rank) {
        free(v);
        free(rank);
        return npl__fail(ENOMEM, "out of memory");
    }
    int n = allowed_cpus(t, v), maxsmt = 0, w = 0;
    for (int k = 0; k < n; k++) {
        rank[k] = smt_rank(t, v[k]);
        if (rank[k] > maxsmt)
            maxsmt = rank[k];
    }
    int groups = t->nnodes + 1;
    for (int s = 0; s <= maxsmt; s++) {
        if (!scatter) {
            for (int g = 0; g < groups; g++)
                for (int k = 0; k < n; k++) {
                    int node = v[k]->node < 0 ? t->nnodes : v[k]->node;
                    if (rank[k] == s && node == g) {
                        if (w < max)
                            out[w] = v[k]->os;
                        w++;
                    }
                }
        } else {
            /* i-th PU of rank s within each group, round robin over groups */
            for (int i = 0;; i++) {
                int any = 0;
                for (int g = 0; g < groups; g++) {
                    int seen = 0;
                    for (int k = 0; k < n; k++) {
                        int node = v[k]->node < 0 ? t->nnodes : v[k]->node;
                        if (rank[k] != s || node != g)
                            continue;
                        if (seen++ == i) {
                            if (w < max)
                                out[w] = v[k]->os;
                            w++;
                            any = 1;
                            break;
                        }
                    }
                }
                if (!any)
                    break;
            }
        }
    }
    free(v);
    free(rank);
    return w;
}

int npl_pin_order(const npl_topo *t, const char *strategy, int *cpus, int max)
{
    if (!t && !(t = npl_topo_self()))
        return -1;
    if (max < 0 || (max > 0 && !cpus))
        return npl__fail(EINVAL, "bad output buffer");
    if (!strategy || !*strategy || !strcmp(strategy, "compact"))
        return order_by(t, 0, cpus, max);
    if (!strcmp(strategy, "scatter"))
        return order_by(t, 1, cpus, max);
    const char *list = strncmp(strategy, "list:", 5) == 0 ? strategy + 5 : strategy;
    if (*list < '0' || *list > '9')
        return npl__fail(EINVAL, "unknown pin strategy \"%s\" (compact, scatter or a CPU list)",
                         strategy);
    int *v, n;
    if (npl__parse_list(list, 1 << 20, "CPU", &v, &n) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int k = npl__topo_cpu_index(t, v[i]);
        if (k < 0 || !t->cpus[k].allowed) {
            int c = v[i];
            free(v);
            return npl__fail(k < 0 ? EINVAL : EXDEV,
                             k < 0 ? "CPU %d does not exist"
                                   : "CPU %d is outside this process's allowed CPUs",
                             c);
        }
        if (i < max)
            cpus[i] = v[i];
    }
    free(v);
    return n;
}

int npl_pin_cpu(const npl_topo *t, const char *strategy, int n)
{
    if (n < 0)
        return npl__fail(EINVAL, "thread number %d < 0", n);
    if (!t && !(t = npl_topo_self()))
        return -1;
    int *order = malloc((size_t)(t->ncpus ? t->ncpus : 1) * sizeof *order);
    if (!order)
        return npl__fail(ENOMEM, "out of memory");
    int cnt = npl_pin_order(t, strategy, order, t->ncpus);
    int cpu = cnt > 0 ? order[n % cnt] : -1;
    free(order);
    if (cnt == 0)
        return npl__fail(EXDEV, "no allowed CPU");
    return cpu;
}

int npl_pin_self(const char *strategy, int n) { return npl_pin_thread(NULL, strategy, n); }

int npl_pin_thread(const npl_topo *t, const char *strategy, int n)
{
    if (!t && !(t = npl_topo_self())) /* loads before we change any affinity */
        return -1;
    if (t->synthetic)
        return npl__fail(EINVAL, "cannot pin a thread on a synthetic topology");
    int cpu = npl_pin_cpu(t, strategy, n);
    if (cpu < 0)
        return -1;
    cpu_set_t *set = CPU_ALLOC(cpu + 1);
    size_t sz = CPU_ALLOC_SIZE(cpu + 1);
    if (!set)
        return npl__fail(ENOMEM, "out of memory");
    CPU_ZERO_S(sz, set);
    CPU_SET_S(cpu, sz, set);
    int rc = sched_setaffinity(0, sz, set);
    int err = errno;
    CPU_FREE(set);
    if (rc < 0)
        return npl__fail(err, "cannot pin thread %d to CPU %d", n, cpu);
    return cpu;
}

int npl_where_am_i(int *cpu, int *node)
{
    unsigned c = 0, nd = 0;
    if (getcpu(&c, &nd) < 0)
        return npl__fail(errno, "getcpu failed");
    if (cpu)
        *cpu = (int)c;
    if (node)
        *node = (int)nd;
    return 0;
}

/* ---- pthreads: number threads in creation order, pin before start() runs ---- */
static _Atomic int next_thread = 1;

/* The one pinning trampoline (npl_pthread_create and the interposer's pthread_create). */
struct trampoline {
    void *(*start)(void *);
    void *arg;
    int n;
    char strategy[256];
};

static void *pinned_start(void *p)
{
    struct trampoline tr = *(struct trampoline *)p;
    free(p);
    if (npl_pin_self(tr.strategy, tr.n) < 0) /* a failure leaves the thread where the OS puts it */
        npl__debug("thread %d not pinned: %s", tr.n, npl_last_error());
    return tr.start(tr.arg);
}

int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n)
{
    struct trampoline *tr = malloc(sizeof *tr);
    if (!tr)
        return EAGAIN;
    tr->start = start;
    tr->arg = arg;
    tr->n = n;
    snprintf(tr->strategy, sizeof tr->strategy, "%s", strategy ? strategy : "compact");
    int rc = real_create(th, attr, pinned_start, tr);
    if (rc)
        free(tr);
    return rc;
}

int npl_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
                       void *arg, const char *strategy)
{
    if (!th || !start)
        return npl__fail(EINVAL, "NULL thread or start routine");
    if (!npl_topo_self())
        return -1;
    if (npl_pin_cpu(NULL, strategy, 0) < 0) /* validate the strategy now */
        return -1;
    int rc = npl__pthread_create_pinned(pthread_create, th, attr, start, arg, strategy,
                                        atomic_fetch_add(&next_thread, 1));
    return rc ? npl__fail(rc, "pthread_create failed") : 0;
}

void npl_pthread_reset(void) { atomic_store(&next_thread, 1); }
