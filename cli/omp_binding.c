/* SPDX-License-Identifier: BSD-3-Clause */
/* omp_binding.c - an OpenMP program's own binding (omp_binding.h).
 *
 * What each runtime does, as measured with GCC 12's libgomp and LLVM 14's libomp:
 *  - OMP_PROC_BIND=false: threads not bound. true/close/spread: each thread on one of the places.
 *    master/primary: every thread on the place of the initial thread, the first one.
 *  - OMP_PLACES or GOMP_CPU_AFFINITY without OMP_PROC_BIND binds as true does; OMP_PROC_BIND
 *    without places uses one place per CPU. OMP_PLACES wins over GOMP_CPU_AFFINITY.
 *  - Places keep only the CPUs the process may use; a place left empty is dropped.
 *  - libomp reads KMP_AFFINITY first: when it is set OMP_PLACES is ignored. none/disabled: not
 *    bound; explicit: the proclist; compact, scatter, balanced...: every allowed CPU.
 * The runtimes' default thread count is the number of CPUs the process may use, whatever the
 * places: run_show.c counts threads that way. */
#define _GNU_SOURCE
#include "omp_binding.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CPU (1 << 20)     /* larger CPU ids: the value is not read */
#define MAX_PLACES (1 << 16)  /* more places: likewise */
#define MAX_WORK (1ull << 24) /* more CPUs in all places together, or bitmap bytes: likewise */

struct places {
    hwloc_bitmap_t *v;
    int n, cap;
    unsigned long long cpus, bytes; /* in all places so far */
};

static void places_free(struct places *p)
{
    for (int i = 0; i < p->n; i++)
        hwloc_bitmap_free(p->v[i]);
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
    p->cpus = p->bytes = 0;
}

/* appends a copy of set; -1 when full or out of memory */
static int places_add(struct places *p, hwloc_const_bitmap_t set)
{
    p->cpus += (unsigned)hwloc_bitmap_weight(set);
    p->bytes += (unsigned)(hwloc_bitmap_last(set) + 1) / 8 + 16;
    if (p->n >= MAX_PLACES || p->cpus > MAX_WORK || p->bytes > MAX_WORK)
        return -1;
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        hwloc_bitmap_t *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    if (!(p->v[p->n] = hwloc_bitmap_dup(set)))
        return -1;
    p->n++;
    return 0;
}

static void skip_blanks(const char **s)
{
    while (**s == ' ' || **s == '\t')
        (*s)++;
}

/* a decimal number (a '-' first when sign), at most MAX_CPU in magnitude; 0 or -1 */
static int read_num(const char **s, int sign, long *v)
{
    skip_blanks(s);
    int neg = sign && **s == '-';
    if (neg || (sign && **s == '+'))
        (*s)++;
    if (!isdigit((unsigned char)**s))
        return -1;
    long x = 0;
    while (isdigit((unsigned char)**s)) {
        x = x * 10 + (**s - '0');
        if (x > MAX_CPU)
            return -1;
        (*s)++;
    }
    *v = neg ? -x : x;
    skip_blanks(s);
    return 0;
}

/* [":" len [":" stride]] after a number or a place: len >= 1, stride signed */
static int read_interval(const char **s, long *len, long *stride)
{
    *len = 1;
    *stride = 1;
    if (**s != ':')
        return 0;
    (*s)++;
    if (read_num(s, 0, len) < 0 || *len < 1)
        return -1;
    if (**s != ':')
        return 0;
    (*s)++;
    return read_num(s, 1, stride);
}

/* one place: "{" res ("," res)* "}", res = ["!"] num [":" len [":" stride]]; *work counts the
 * CPUs named, in all places read */
static int read_place(const char **s, hwloc_bitmap_t set, unsigned long long *work)
{
    hwloc_bitmap_zero(set);
    if (**s != '{')
        return -1;
    (*s)++;
    for (;;) {
        skip_blanks(s);
        int excl = **s == '!';
        long start, len, stride;
        if (excl)
            (*s)++;
        if (read_num(s, 0, &start) < 0 || read_interval(s, &len, &stride) < 0 ||
            (excl && len != 1) || (*work += (unsigned long long)len) > MAX_WORK)
            return -1;
        for (long i = 0; i < len; i++) {
            long cpu = start + i * stride;
            if (cpu < 0 || cpu > MAX_CPU)
                return -1;
            if (excl)
                hwloc_bitmap_clr(set, (unsigned)cpu);
            else
                hwloc_bitmap_set(set, (unsigned)cpu);
        }
        if (**s == ',') {
            (*s)++;
            continue;
        }
        if (**s != '}')
            return -1;
        (*s)++;
        skip_blanks(s);
        return 0;
    }
}

/* set shifted by d CPUs; -1 if a CPU would fall below 0 or past MAX_CPU */
static int shift(hwloc_const_bitmap_t set, long d, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    unsigned c;
    int bad = 0;
    hwloc_bitmap_foreach_begin(c, set) {
        long x = (long)c + d;
        if (x < 0 || x > MAX_CPU)
            bad = 1;
        else
            hwloc_bitmap_set(out, (unsigned)x);
    }
    hwloc_bitmap_foreach_end();
    return bad ? -1 : 0;
}

/* an explicit OMP_PLACES list: (["!"] place [":" len [":" stride]]) ("," ...)* */
static int explicit_places(const char *s, struct places *out)
{
    hwloc_bitmap_t place = hwloc_bitmap_alloc(), moved = hwloc_bitmap_alloc();
    int rc = place && moved ? 0 : -1;
    unsigned long long work = 0;
    while (rc == 0) {
        skip_blanks(&s);
        int excl = *s == '!';
        long len, stride;
        if (excl)
            s++;
        skip_blanks(&s);
        if (read_place(&s, place, &work) < 0 || read_interval(&s, &len, &stride) < 0 ||
            (excl && len != 1) || len > MAX_PLACES) {
            rc = -1;
            break;
        }
        for (long i = 0; !excl && rc == 0 && i < len; i++)
            rc = shift(place, i * stride, moved) < 0 ? -1 : places_add(out, moved);
        for (int i = 0; excl && i < out->n; i++)
            if (hwloc_bitmap_isequal(out->v[i], place)) {
                hwloc_bitmap_free(out->v[i]);
                memmove(out->v + i, out->v + i + 1, (size_t)(out->n - i - 1) * sizeof *out->v);
                out->n--;
                i--;
            }
        if (rc || !*s)
            break;
        if (*s++ != ',')
            rc = -1;
    }
    hwloc_bitmap_free(place);
    hwloc_bitmap_free(moved);
    return rc;
}

static int by_first_cpu(const void *a, const void *b)
{
    int x = hwloc_bitmap_first(*(const hwloc_const_bitmap_t *)a);
    int y = hwloc_bitmap_first(*(const hwloc_const_bitmap_t *)b);
    return (x > y) - (x < y);
}

/* the objects of one kind as places: their allowed CPUs, ordered by their first CPU */
static int group_places(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_bitmap_t allowed,
                        struct places *out)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = set ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (!o || !o->cpuset)
            continue;
        hwloc_bitmap_and(set, o->cpuset, allowed);
        if (!hwloc_bitmap_iszero(set))
            rc = places_add(out, set);
    }
    hwloc_bitmap_free(set);
    if (rc == 0 && out->n > 1)
        qsort(out->v, (size_t)out->n, sizeof *out->v, by_first_cpu);
    return rc;
}

/* threads, cores, sockets, ll_caches, numa_domains, each with an optional "(n)": the first n.
 * The topology is loaded only when the grouping matters (a count, or only the first place
 * wanted): the places of every core (socket...) together are the allowed CPUs. */
static int abstract_places(const char *s, hwloc_const_bitmap_t allowed, hwloc_topology_t *topo,
                           int first_only, struct places *out)
{
    static const struct { const char *name; hwloc_obj_type_t type; } names[] = {
        {"threads", HWLOC_OBJ_PU},         {"cores", HWLOC_OBJ_CORE},
        {"sockets", HWLOC_OBJ_PACKAGE},    {"ll_caches", HWLOC_OBJ_L3CACHE},
        {"numa_domains", HWLOC_OBJ_NUMANODE}};
    skip_blanks(&s);
    int k = -1;
    size_t l = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && k < 0; i++)
        if (!strncasecmp(s, names[i].name, (l = strlen(names[i].name))))
            k = (int)i;
    if (k < 0)
        return -1;
    s += l;
    skip_blanks(&s);
    long count = -1;
    if (*s == '(') {
        s++;
        if (read_num(&s, 0, &count) < 0 || count < 1 || *s++ != ')')
            return -1;
        skip_blanks(&s);
    }
    if (*s)
        return -1;
    hwloc_obj_type_t type = names[k].type;
    if (type == HWLOC_OBJ_PU || (count < 0 && !first_only)) { /* no topology needed */
        hwloc_bitmap_t one = hwloc_bitmap_alloc();
        unsigned c;
        int rc = one ? 0 : -1;
        if (type != HWLOC_OBJ_PU) {
            rc = places_add(out, allowed);
        } else {
            hwloc_bitmap_foreach_begin(c, allowed) {
                if (rc == 0 && (count < 0 || out->n < count)) {
                    hwloc_bitmap_only(one, c);
                    rc = places_add(out, one);
                }
            }
            hwloc_bitmap_foreach_end();
        }
        hwloc_bitmap_free(one);
        return rc;
    }
    if (!*topo && (hwloc_topology_init(topo) < 0 || hwloc_topology_load(*topo) < 0))
        return -1;
    if (type == HWLOC_OBJ_L3CACHE) { /* the last level the machine has */
        static const hwloc_obj_type_t caches[] = {HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
                                                  HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                                  HWLOC_OBJ_L1CACHE};
        type = HWLOC_OBJ_PU;
        for (size_t i = 0; i < sizeof caches / sizeof caches[0] && type == HWLOC_OBJ_PU; i++)
            if (hwloc_get_nbobjs_by_type(*topo, caches[i]) > 0)
                type = caches[i];
    }
    if (hwloc_get_nbobjs_by_type(*topo, type) <= 0)
        type = HWLOC_OBJ_PU; /* no such objects here: one place per CPU */
    if (group_places(*topo, type, allowed, out) < 0)
        return -1;
    while (count >= 0 && out->n > count)
        hwloc_bitmap_free(out->v[--out->n]);
    return 0;
}

/* GOMP_CPU_AFFINITY: CPUs and ranges a-b[:stride], separated by blanks or commas, one place each */
static int gomp_places(const char *s, struct places *out)
{
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    int rc = one ? 0 : -1;
    while (rc == 0) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        if (!*s)
            break;
        long a, b, st = 1;
        if (read_num(&s, 0, &a) < 0) {
            rc = -1;
            break;
        }
        b = a;
        if (*s == '-') {
            s++;
            if (read_num(&s, 0, &b) < 0 || b < a)
                rc = -1;
            if (rc == 0 && *s == ':') {
                s++;
                if (read_num(&s, 0, &st) < 0 || st < 1)
                    rc = -1;
            }
        }
        for (long c = a; rc == 0 && c <= b; c += st) {
            hwloc_bitmap_only(one, (unsigned)c);
            rc = places_add(out, one);
        }
    }
    hwloc_bitmap_free(one);
    return rc == 0 && out->n ? 0 : -1;
}

/* KMP_AFFINITY's proclist=[...]: CPUs, ranges a-b and {a,b,...} sets */
static int kmp_proclist(const char *s, hwloc_bitmap_t out)
{
    if (*s++ != '[')
        return -1;
    hwloc_bitmap_zero(out);
    for (;;) {
        skip_blanks(&s);
        int set = *s == '{';
        if (set)
            s++;
        for (;;) {
            long a, b;
            if (read_num(&s, 0, &a) < 0)
                return -1;
            b = a;
            if (*s == '-' && (s++, read_num(&s, 0, &b) < 0 || b < a))
                return -1;
            hwloc_bitmap_set_range(out, (unsigned)a, (int)b);
            if (!set || *s != ',')
                break;
            s++;
        }
        if (set && *s++ != '}')
            return -1;
        skip_blanks(&s);
        if (*s == ']')
            return hwloc_bitmap_iszero(out) ? -1 : 0;
        if (*s++ != ',')
            return -1;
    }
}

/* KMP_AFFINITY: -1 unreadable, 0 not bound, 1 every allowed CPU, 2 the proclist in out */
static int kmp_affinity(const char *s, hwloc_bitmap_t out)
{
    int type = -1, have_list = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        size_t l = strcspn(s, ", \t");
        const char *tok = s;
        if (!strncasecmp(tok, "proclist=", 9)) { /* the list has commas of its own */
            const char *end = strchr(tok, ']');
            if (!end || kmp_proclist(tok + 9, out) < 0)
                return -1;
            have_list = 1;
            l = (size_t)(end + 1 - tok);
        } else if ((l == 4 && !strncasecmp(tok, "none", 4)) ||
                   (l == 8 && !strncasecmp(tok, "disabled", 8))) {
            type = 0;
        } else if (l == 8 && !strncasecmp(tok, "explicit", 8)) {
            type = 2;
        } else if ((l == 7 && !strncasecmp(tok, "compact", 7)) ||
                   (l == 7 && !strncasecmp(tok, "scatter", 7)) ||
                   (l == 8 && !strncasecmp(tok, "balanced", 8)) ||
                   (l == 7 && !strncasecmp(tok, "logical", 7)) ||
                   (l == 8 && !strncasecmp(tok, "physical", 8))) {
            type = 1;
        } /* granularity=, verbose, respect, permute/offset numbers...: no effect on the set */
        s += l;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == ',')
            s++;
    }
    return type == 2 && !have_list ? -1 : type;
}

enum bind { BIND_UNSET, BIND_FALSE, BIND_ALL, BIND_FIRST };

static enum bind proc_bind(const char *v)
{
    if (!v)
        return BIND_UNSET;
    while (*v == ' ')
        v++;
    size_t l = strcspn(v, ", ");
    static const struct { const char *w; enum bind b; } words[] = {
        {"false", BIND_FALSE}, {"true", BIND_ALL},     {"close", BIND_ALL},
        {"spread", BIND_ALL},  {"master", BIND_FIRST}, {"primary", BIND_FIRST}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (l == strlen(words[i].w) && !strncasecmp(v, words[i].w, l))
            return words[i].b;
    return BIND_UNSET; /* the runtimes reject it with a message */
}

/* OMP_PLACES, else GOMP_CPU_AFFINITY, as a place list inside allowed; 0 (none given or unread)
 * or 1 */
static int read_places(const struct omp_binding *b, hwloc_const_bitmap_t allowed,
                       hwloc_topology_t *topo, int first_only, struct places *pl)
{
    int got = 0;
    if (b->places) {
        const char *s = b->places;
        while (*s == ' ')
            s++;
        got = (*s == '{' || *s == '!' ? explicit_places(s, pl)
                                      : abstract_places(s, allowed, topo, first_only, pl)) == 0;
        if (!got)
            places_free(pl);
    }
    if (!got && b->gomp_cpu_affinity) {
        got = gomp_places(b->gomp_cpu_affinity, pl) == 0;
        if (!got)
            places_free(pl);
    }
    int w = 0; /* inside allowed; empty places dropped */
    for (int i = 0; i < pl->n; i++) {
        hwloc_bitmap_and(pl->v[i], pl->v[i], allowed);
        if (hwloc_bitmap_iszero(pl->v[i]))
            hwloc_bitmap_free(pl->v[i]);
        else
            pl->v[w++] = pl->v[i];
    }
    pl->n = w;
    return got && w > 0;
}

/* libgomp's reading (libomp's too when KMP_AFFINITY is not set) */
static int gomp_reading(const struct omp_binding *b, hwloc_const_bitmap_t allowed,
                        hwloc_topology_t *topo, hwloc_bitmap_t out)
{
    enum bind bind = proc_bind(b->proc_bind);
    struct places pl = {0};
    if (hwloc_bitmap_iszero(allowed))
        return hwloc_bitmap_copy(out, allowed);
    int have = bind != BIND_FALSE && read_places(b, allowed, topo, bind == BIND_FIRST, &pl);
    if (bind == BIND_FALSE || (bind == BIND_UNSET && !have)) {
        places_free(&pl);
        return hwloc_bitmap_copy(out, allowed);
    }
    hwloc_bitmap_zero(out);
    if (!have) /* one place per allowed CPU */
        hwloc_bitmap_copy(out, allowed);
    if (!have && bind == BIND_FIRST)
        hwloc_bitmap_only(out, (unsigned)hwloc_bitmap_first(allowed));
    for (int i = 0; i < pl.n && (bind != BIND_FIRST || i == 0); i++)
        hwloc_bitmap_or(out, out, pl.v[i]);
    places_free(&pl);
    return 0;
}

/* libomp's reading: KMP_AFFINITY when it is set and readable */
static int kmp_reading(const struct omp_binding *b, hwloc_const_bitmap_t allowed,
                       hwloc_topology_t *topo, hwloc_bitmap_t out)
{
    int k = b->kmp_affinity ? kmp_affinity(b->kmp_affinity, out) : -1;
    if (k < 0)
        return gomp_reading(b, allowed, topo, out);
    if (k == 2)
        hwloc_bitmap_and(out, out, allowed);
    if (k < 2 || hwloc_bitmap_iszero(out))
        hwloc_bitmap_copy(out, allowed);
    return 0;
}

int omp_binding_cpus(const struct omp_binding *b, hwloc_const_bitmap_t allowed,
                     hwloc_topology_t topo, hwloc_bitmap_t out)
{
    hwloc_topology_t own = NULL, *t = topo ? &topo : &own;
    hwloc_bitmap_t other = hwloc_bitmap_alloc();
    int rc = -1;
    if (other && gomp_reading(b, allowed, t, out) == 0 && kmp_reading(b, allowed, t, other) == 0) {
        if (hwloc_bitmap_weight(other) > hwloc_bitmap_weight(out))
            hwloc_bitmap_copy(out, other);
        rc = hwloc_bitmap_weight(out);
    }
    hwloc_bitmap_free(other);
    if (own)
        hwloc_topology_destroy(own);
    return rc;
}

void omp_binding_from_env(struct omp_binding *b)
{
    b->proc_bind = getenv("OMP_PROC_BIND");
    b->places = getenv("OMP_PLACES");
    b->gomp_cpu_affinity = getenv("GOMP_CPU_AFFINITY");
    b->kmp_affinity = getenv("KMP_AFFINITY");
}

int omp_binding_describe(const struct omp_binding *b, char *out, size_t size)
{
    const char *names[] = {"OMP_PLACES", "OMP_PROC_BIND", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"};
    const char *values[] = {b->places, b->proc_bind, b->gomp_cpu_affinity, b->kmp_affinity};
    int n = 0;
    size_t off = 0;
    if (size)
        out[0] = 0;
    for (int i = 0; i < 4; i++)
        if (values[i]) {
            if (size && off < size)
                off += (size_t)snprintf(out + off, size - off, "%s%s=%s", n ? " " : "", names[i],
                                        values[i]);
            n++;
        }
    return n;
}
