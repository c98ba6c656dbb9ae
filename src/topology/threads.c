/* SPDX-License-Identifier: BSD-3-Clause */
/* threads.c - pin_thread done well: the n-th thread on the n-th allowed CPU of a strategy.
 * The order is pure (topology + strategy); pinning is one sched_setaffinity. */
#define _GNU_SOURCE
#include "topology/topology.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An allowed PU with its sort keys. */
struct pu {
    int os, group, rank, pos; /* group: node index (CPU-less PUs: one extra group after them) */
    int package, llc, node_os;
};

static int cmp_pu(const void *pa, const void *pb)
{
    const struct pu *a = pa, *b = pb;
    int ka[4] = {a->rank, a->group, a->pos, a->os}, kb[4] = {b->rank, b->group, b->pos, b->os};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* The allowed PUs in OS order, each with its rank among the allowed PUs of its core (0 = the
 * first allowed hyperthread). Linear: t->cpus is sorted by OS id. */
static struct pu *allowed_pus(const npl_topo *t, int *n)
{
    size_t cap = (size_t)(t->ncpus > 0 ? t->ncpus : 1);
    struct pu *v = malloc(cap * sizeof *v);
    int *seen = calloc(cap, sizeof *seen);
    if (!v || !seen) {
        free(v);
        free(seen);
        npl__fail(ENOMEM, "out of memory");
        return NULL;
    }
    int m = 0;
    for (int k = 0; k < t->ncpus; k++) {
        const struct npl_cpu_entry *c = &t->cpus[k];
        if (!c->allowed)
            continue;
        int core_ok = c->core >= 0 && c->core < t->ncpus;
        v[m++] = (struct pu){.os = c->os,
                             .group = c->node < 0 ? t->nnodes : c->node,
                             .rank = core_ok ? seen[c->core]++ : 0,
                             .package = c->package,
                             .llc = c->llc,
                             .node_os = c->node < 0 ? -1 : t->nodes[c->node].os};
    }
    free(seen);
    *n = m;
    return v;
}

/* compact: for each SMT level, nodes in order, cores in order (one thread per core first).
 * scatter: for each SMT level, the i-th core of every node in turn. CPUs without a node
 * (should not happen on Linux) count as one extra node after the others. O(n log n). */
static int order_by(const npl_topo *t, int scatter, int *out, int max)
{
    int n;
    struct pu *v = allowed_pus(t, &n);
    if (!v)
        return -1;
    for (int k = 0; k < n; k++)
        v[k].pos = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_pu); /* (rank, group, os): compact */
    if (scatter) { /* pos = index inside its (rank, group); then (rank, pos, group) */
        for (int k = 0; k < n; k++)
            v[k].pos = k && v[k - 1].rank == v[k].rank && v[k - 1].group == v[k].group
                           ? v[k - 1].pos + 1 : 0;
        for (int k = 0; k < n; k++) { /* swap the roles of group and pos in the key */
            int g = v[k].group;
            v[k].group = v[k].pos;
            v[k].pos = g;
        }
        qsort(v, (size_t)n, sizeof *v, cmp_pu);
    }
    for (int k = 0; k < n && k < max; k++)
        out[k] = v[k].os;
    free(v);
    return n;
}

/* ---- likwid-style affinity domains: N (the machine; N0 too), S<k> package, M<k> NUMA node
 * (OS id), C<k> last-level cache; inside a domain the allowed CPUs count physical cores first
 * (SMT rank, then OS id), as likwid-pin does. ---- */

/* The allowed PUs of a domain in domain order: a malloc'ed array and its length, or NULL after
 * npl__fail (EINVAL: no such domain, EXDEV: it has no allowed CPU). */
static struct pu *domain_pus(const npl_topo *t, const char *dom, size_t len, int *count)
{
    char letter = dom[0], digits[24];
    uint64_t num = 0;
    long id = 0;
    if (len > 1) {
        snprintf(digits, sizeof digits, "%.*s", (int)(len - 1), dom + 1);
        if (len - 1 >= sizeof digits || npl__parse_count(digits, 0, NPL__MAX_ID, &num) < 0)
            letter = '?';
        id = (long)num;
    }
    if (!len || !strchr("NSMC", letter) || (letter == 'N' && id != 0) ||
        (letter != 'N' && len == 1)) {
        npl__fail(EINVAL, "unknown affinity domain \"%.*s\" (N, S<k>, M<k>, C<k>)", (int)len, dom);
        return NULL;
    }
    int exists = letter == 'N';
    for (int k = 0; k < t->ncpus && !exists; k++) {
        const struct npl_cpu_entry *c = &t->cpus[k];
        exists = (letter == 'S' && c->package == id) || (letter == 'C' && c->llc == id) ||
                 (letter == 'M' && c->node >= 0 && t->nodes[c->node].os == id);
    }
    int n, m = 0;
    struct pu *v = exists ? allowed_pus(t, &n) : NULL;
    if (!exists)
        npl__fail(EINVAL, "affinity domain %.*s does not exist", (int)len, dom);
    for (int k = 0; v && k < n; k++)
        if (letter == 'N' || (letter == 'S' && v[k].package == id) ||
            (letter == 'C' && v[k].llc == id) || (letter == 'M' && v[k].node_os == id)) {
            v[m] = v[k];
            v[m].group = v[m].pos = 0;
            m++;
        }
    if (v && !m) {
        free(v);
        npl__fail(EXDEV, "affinity domain %.*s has no CPU this process may use", (int)len, dom);
        return NULL;
    }
    if (v)
        qsort(v, (size_t)m, sizeof *v, cmp_pu); /* (rank, os): physical cores first */
    *count = m;
    return v;
}

/* The order being written: at most max entries kept, w counted; seen[os] refuses duplicates. */
struct order_out {
    int *cpus, max, w;
    unsigned char *seen;
};

static int push_cpu(int cpu, struct order_out *o)
{
    if (o->seen[cpu]++)
        return npl__fail(EINVAL, "CPU %d is named twice in the pin expression", cpu);
    if (o->w < o->max)
        o->cpus[o->w] = cpu;
    o->w++;
    return 0;
}

/* E:DOMAIN:COUNT[:CHUNK:STRIDE]: COUNT CPUs of the domain, CHUNK in a row, then a jump to the
 * next multiple of STRIDE (likwid's expression syntax). */
static int domain_expression(const npl_topo *t, const char *e, size_t len, struct order_out *o)
{
    char buf[128];
    if (len >= sizeof buf)
        return npl__fail(EINVAL, "pin expression too long");
    memcpy(buf, e, len);
    buf[len] = 0;
    char *f[5] = {0};
    int nf = 0;
    for (char *p = buf, *save = NULL, *tok; nf < 5 && (tok = strtok_r(p, ":", &save)); p = NULL)
        f[nf++] = tok;
    long num[3] = {0, 1, 1};
    for (int i = 2; i < nf; i++) {
        uint64_t v;
        if (npl__parse_count(f[i], 1, 1 << 20, &v) < 0)
            nf = -1;
        else
            num[i - 2] = (long)v;
    }
    if (nf != 3 && nf != 5)
        return npl__fail(EINVAL, "bad pin expression \"%s\" (E:DOMAIN:COUNT[:CHUNK:STRIDE], "
                                 "numbers >= 1)", buf);
    int n;
    struct pu *v = domain_pus(t, f[1], strlen(f[1]), &n);
    if (!v)
        return -1;
    int rc = 0, got = 0;
    for (long base = 0; !rc && got < num[0]; base += num[2]) {
        if (base >= n) {
            rc = npl__fail(EINVAL, "pin expression %s asks for %ld CPUs; domain %s gives %d",
                           buf, num[0], f[1], got);
            break;
        }
        for (long c = 0; !rc && c < num[1] && got < num[0] && base + c < n; c++, got++)
            rc = push_cpu(v[base + c].os, o);
    }
    free(v);
    return rc;
}

/* DOMAIN:LIST: the listed positions (0-3,5) among the domain's allowed CPUs. */
static int domain_list(const npl_topo *t, const char *e, size_t len, struct order_out *o)
{
    const char *colon = memchr(e, ':', len);
    char list[256];
    if (!colon || (size_t)(e + len - colon - 1) >= sizeof list)
        return npl__fail(EINVAL, "bad pin domain \"%.*s\" (DOMAIN:LIST, e.g. S0:0-3)", (int)len, e);
    snprintf(list, sizeof list, "%.*s", (int)(e + len - colon - 1), colon + 1);
    int n, *idx, ni;
    struct pu *v = domain_pus(t, e, (size_t)(colon - e), &n);
    if (!v)
        return -1;
    int rc = npl__parse_list(list, NPL__MAX_ID, "domain position", &idx, &ni);
    for (int i = 0; rc == 0 && i < ni; i++)
        rc = idx[i] < n ? push_cpu(v[idx[i]].os, o)
                        : npl__fail(EINVAL, "position %d of domain %.*s is out of range: it has "
                                            "%d allowed CPU(s)", idx[i], (int)(colon - e), e, n);
    free(idx); /* NULL when the list did not parse */
    free(v);
    return rc;
}

/* One or more domain terms joined by '@' (S0:0-1@S1:0-1, E:N:8:1:2). */
static int order_domains(const npl_topo *t, const char *s, int *cpus, int max)
{
    int maxos = t->ncpus ? t->cpus[t->ncpus - 1].os : 0; /* t->cpus ascend by OS id */
    struct order_out o = {cpus, max, 0, calloc((size_t)maxos + 1, 1)};
    if (!o.seen)
        return npl__fail(ENOMEM, "out of memory");
    int rc = 0;
    for (const char *p = s; rc == 0;) {
        size_t len = strcspn(p, "@");
        rc = !strncmp(p, "E:", 2) ? domain_expression(t, p, len, &o) : domain_list(t, p, len, &o);
        if (!p[len])
            break;
        p += len + 1;
    }
    free(o.seen);
    return rc < 0 ? -1 : o.w;
}

/* an explicit CPU list: every CPU exists and is allowed */
static int order_list(const npl_topo *t, const char *list, int *cpus, int max)
{
    int *v, n;
    if (npl__parse_list(list, NPL__MAX_ID, "CPU", &v, &n) < 0)
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
    if (strchr("NSMCE", strategy[0]) && strchr(strategy, ':'))
        return order_domains(t, strategy, cpus, max);
    const char *list = strncmp(strategy, "list:", 5) == 0 ? strategy + 5 : strategy;
    if (*list < '0' || *list > '9')
        return npl__fail(EINVAL, "unknown pin strategy \"%s\" (compact, scatter, a CPU list or "
                                 "likwid-style domains like S0:0-3, M1:0-1, E:N:8:1:2)", strategy);
    return order_list(t, list, cpus, max);
}

int npl_pin_cpu(const npl_topo *t, const char *strategy, int n)
{
    if (n < 0)
        return npl__fail(EINVAL, "thread number %d < 0", n);
    if (!t && !(t = npl_topo_self()))
        return -1;
    int *order = malloc((size_t)(t->ncpus > 0 ? t->ncpus : 1) * sizeof *order);
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
    char strategy[]; /* any length: a long explicit CPU list is not cut */
};

static void *pinned_start(void *p)
{
    struct trampoline *tr = p;
    void *(*start)(void *) = tr->start, *arg = tr->arg;
    if (npl_pin_self(tr->strategy, tr->n) < 0) /* a failure leaves the thread where the OS puts it */
        npl__debug("thread %d not pinned: %s", tr->n, npl_last_error());
    free(tr);
    return start(arg);
}

int npl__pthread_create_pinned(npl__create_fn real_create, pthread_t *th,
                               const pthread_attr_t *attr, void *(*start)(void *), void *arg,
                               const char *strategy, int n)
{
    const char *strat = strategy ? strategy : "compact";
    struct trampoline *tr = malloc(sizeof *tr + strlen(strat) + 1);
    if (!tr)
        return EAGAIN;
    tr->start = start;
    tr->arg = arg;
    tr->n = n;
    strcpy(tr->strategy, strat);
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
