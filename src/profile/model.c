/* SPDX-License-Identifier: BSD-3-Clause */
/* model.c - the profile model's own functions (profile.h): errors, pattern names, release, the
 * profile's machine as a synthetic topology, a site's label. */
#define _GNU_SOURCE
#include "profile/profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npl__prof_fail(char *err, size_t errsz, int errnum, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *q = msg; *q; q++) /* one line: names read from a file may hold anything */
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = '?';
    if (err && errsz)
        snprintf(err, errsz, "%s", msg);
    npl__fail(errnum, "%s", msg);
    errno = errnum;
    return -1;
}

static const char *const pattern_names[NPL_PAT_COUNT] = {
    "too-few-samples", "serial", "blocked", "cyclic", "shared-read-mostly", "shared-written",
    "phase-changing", "irregular"};

const char *npl__pattern_name(int p)
{
    return p >= 0 && p < NPL_PAT_COUNT ? pattern_names[p] : NULL;
}

int npl__pattern_parse(const char *name)
{
    for (int i = 0; i < NPL_PAT_COUNT; i++)
        if (!strcmp(name, pattern_names[i]))
            return i;
    return -1;
}

static void site_free(struct npl_prof_site *s)
{
    free(s->object);
    free(s->build_id);
    free(s->symbol);
    free(s->where);
}

void npl__profile_free(struct npl_profile *p)
{
    if (!p)
        return;
    free(p->program_path);
    free(p->program_build_id);
    free(p->nodes);
    free(p->thread_nodes);
    free(p->thread_cpus);
    free(p->thread_exposure);
    free(p->phase_exposure);
    free(p->binding_detail);
    for (uint32_t i = 0; i < p->nphases; i++) {
        if (p->phases[i].site)
            site_free(p->phases[i].site);
        free(p->phases[i].site);
    }
    free(p->phases);
    free(p->transitions);
    for (uint32_t i = 0; i < p->narrays; i++) {
        site_free(&p->arrays[i].site);
        free(p->arrays[i].first_touch);
        free(p->arrays[i].samples);
        npl__advice_clear(&p->arrays[i].advice);
    }
    free(p->arrays);
    free(p);
}

int npl__profile_topo(const struct npl_profile *p, npl_topo **out, char *err, size_t errsz)
{
    size_t need = 64 + (size_t)p->nnodes * 8;
    char *desc = malloc(need);
    if (!desc)
        return npl__prof_fail(err, errsz, ENOMEM, "out of memory");
    int k = snprintf(desc, need, "numa:%d(indexes=", p->nnodes);
    for (int i = 0; i < p->nnodes; i++)
        k += snprintf(desc + k, need - (size_t)k, "%s%d", i ? "," : "", p->nodes[i]);
    snprintf(desc + k, need - (size_t)k, ") core:1 pu:1");
    int rc = npl_topo_load_synthetic(out, desc);
    free(desc);
    if (rc < 0)
        return npl__prof_fail(err, errsz, errno, "the profile's machine: %s", npl_last_error());
    return 0;
}

void npl__site_label(const struct npl_prof_site *s, char *buf, size_t size)
{
    if (s->where) {
        snprintf(buf, size, "%s", s->where);
        return;
    }
    const char *obj = s->object ? s->object : "?", *slash = strrchr(obj, '/');
    int n = snprintf(buf, size, "%s+0x%llx", slash ? slash + 1 : obj, (unsigned long long)s->offset);
    if (s->ordinal && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "#%llu", (unsigned long long)s->ordinal);
}

static int by_phase_thread(uint32_t p1, uint32_t t1, uint32_t p2, uint32_t t2)
{
    if (p1 != p2)
        return p1 < p2 ? -1 : 1;
    return t1 < t2 ? -1 : t1 > t2;
}

int npl__prof_exposure_cmp(const void *x, const void *y)
{
    const struct npl_prof_exposure *a = x, *b = y;
    return by_phase_thread(a->phase, a->thread, b->phase, b->thread);
}

int npl__prof_tally_cmp(const void *x, const void *y)
{
    const struct npl_prof_tally *a = x, *b = y;
    return by_phase_thread(a->phase, a->thread, b->phase, b->thread);
}
