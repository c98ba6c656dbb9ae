/* SPDX-License-Identifier: BSD-3-Clause */
/* format_write.c - the profile format v1's writer: struct npl_profile as the schema's JSON, on
 * json.c's writer (an array's advice: format_advice.c). */
#define _GNU_SOURCE
#include "profile/format.h"

#include <errno.h>
#include <stdlib.h>

static void write_site(struct npl__jw *b, const struct npl_prof_site *s)
{
    npl__jw_s(b, "{\"object\": ");
    npl__jw_str(b, s->object ? s->object : "?");
    npl__jw_s(b, ", \"build_id\": ");
    npl__jw_str(b, s->build_id);
    npl__jw_s(b, ", \"offset\": ");
    npl__jw_u(b, s->offset);
    npl__jw_s(b, ", \"ordinal\": ");
    npl__jw_u(b, s->ordinal);
    npl__jw_s(b, s->kind == NPL_SITE_STATIC ? ", \"kind\": \"static\", \"symbol\": "
                                       : ", \"kind\": \"heap\", \"symbol\": ");
    npl__jw_str(b, s->symbol);
    npl__jw_s(b, ", \"where\": ");
    npl__jw_str(b, s->where);
    if (s->has_line_offset) {
        npl__jw_s(b, ", \"line_offset\": ");
        npl__jw_u(b, s->line_offset);
    }
    npl__jw_s(b, "}");
}

static void write_measured(struct npl__jw *b, const uint64_t m[3])
{
    npl__jw_s(b, ", \"measured\": {\"local\": ");
    npl__jw_u(b, m[NPL_MEASURED_LOCAL]);
    npl__jw_s(b, ", \"remote\": ");
    npl__jw_u(b, m[NPL_MEASURED_REMOTE]);
    npl__jw_s(b, ", \"unknown\": ");
    npl__jw_u(b, m[NPL_MEASURED_UNKNOWN]);
    npl__jw_s(b, "}");
}

/* row i of a list of rows, per_line a line: its separator and bracket */
static void open_row(struct npl__jw *b, size_t i, size_t per_line)
{
    npl__jw_s(b, i ? (i % per_line ? ", [" : ",\n    [") : "[");
}

/* a row's next integer */
static void row_u(struct npl__jw *b, uint64_t v)
{
    npl__jw_s(b, ", ");
    npl__jw_u(b, v);
}

/* run.phase_exposure: [phase id, thread, seconds] rows */
static void phase_exposure(struct npl__jw *b, const struct npl_profile *p)
{
    if (!p->phase_exposure || !p->nphase_exposure || !p->phases)
        return;
    npl__jw_s(b, ",\n  \"phase_exposure\": [");
    for (size_t i = 0; i < p->nphase_exposure; i++) {
        const struct npl_prof_exposure *e = &p->phase_exposure[i];
        open_row(b, i, 6);
        npl__jw_u(b, p->phases[e->phase].id);
        row_u(b, e->thread);
        npl__jw_s(b, ", ");
        npl__jw_real(b, e->seconds);
        npl__jw_s(b, "]");
    }
    npl__jw_s(b, "]");
}

/* arrays[ai] */
static void write_array(struct npl__jw *b, const struct npl_profile *p, uint32_t ai)
{
    const struct npl_prof_array *a = &p->arrays[ai];
    npl__jw_s(b, ai ? ",\n  {\"site\": " : "\n  {\"site\": ");
    write_site(b, &a->site);
    npl__jw_s(b, ",\n   \"bytes\": ");
    npl__jw_u(b, a->bytes);
    npl__jw_s(b, ", \"chunk_bytes\": ");
    npl__jw_u(b, a->chunk_bytes);
    npl__jw_s(b, ", \"nchunks\": ");
    npl__jw_u(b, a->nchunks);
    npl__jw_s(b, ",\n   \"first_touch\": [");
    for (uint64_t c = 0; c < a->nchunks; c++) {
        if (c)
            npl__jw_s(b, c % 32 ? ", " : ",\n    ");
        npl__jw_i(b, a->first_touch[c]);
    }
    npl__jw_s(b, "],\n   \"samples\": [");
    for (size_t s = 0; s < a->nsamples; s++) {
        const struct npl_prof_sample *x = &a->samples[s];
        open_row(b, s, 8);
        npl__jw_u(b, p->phases[x->phase].id);
        row_u(b, x->chunk);
        row_u(b, x->thread);
        row_u(b, x->reads);
        row_u(b, x->writes);
        if (a->has_measured) {
            row_u(b, x->local);
            row_u(b, x->remote);
        }
        npl__jw_s(b, "]");
    }
    npl__jw_s(b, "]");
    if (a->has_measured)
        write_measured(b, a->measured);
    if (a->has_advice)
        npl__advice_write(b, &a->advice, p);
    npl__jw_s(b, "}");
}

/* the phases (each one's duration and barrier rounds where recorded) and the transitions */
static void write_phases(struct npl__jw *b, const struct npl_profile *p)
{
    for (uint32_t i = 0; i < p->nphases; i++) {
        const struct npl_prof_phase *ph = &p->phases[i];
        npl__jw_s(b, i ? ",\n  {\"id\": " : "\n  {\"id\": ");
        npl__jw_u(b, ph->id);
        npl__jw_s(b, ph->kind == NPL_PHASE_WINDOW ? ", \"kind\": \"window\", \"site\": "
                                             : ", \"kind\": \"region\", \"site\": ");
        if (ph->site)
            write_site(b, ph->site);
        else
            npl__jw_s(b, "null");
        npl__jw_s(b, ", \"entries\": ");
        npl__jw_u(b, ph->entries);
        if (ph->has_seconds) {
            npl__jw_s(b, ", \"seconds\": ");
            npl__jw_real(b, ph->seconds);
        }
        if (ph->barriers) {
            npl__jw_s(b, ", \"barriers\": ");
            npl__jw_u(b, ph->barriers);
        }
        npl__jw_s(b, "}");
    }
    npl__jw_s(b, "],\n \"transitions\": [");
    for (uint32_t i = 0; i < p->ntransitions; i++) {
        npl__jw_s(b, i ? ", [" : "[");
        npl__jw_u(b, p->phases[p->transitions[i].from].id);
        npl__jw_s(b, ", ");
        npl__jw_u(b, p->phases[p->transitions[i].to].id);
        npl__jw_s(b, ", ");
        npl__jw_u(b, p->transitions[i].count);
        npl__jw_s(b, "]");
    }
}

char *npl__profile_format(const struct npl_profile *p, size_t *len)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    static const char *const bind[] = {"none", "pin", "omp"};
    struct npl__jw b = {0};
    npl__jw_s(&b, "{\n \"format\": \"numaplace-profile\",\n \"version\": 1,\n \"program\": {\"path\": ");
    npl__jw_str(&b, p->program_path ? p->program_path : "");
    npl__jw_s(&b, ", \"build_id\": ");
    npl__jw_str(&b, p->program_build_id);
    npl__jw_s(&b, "},\n \"machine\": {\"nodes\": ");
    npl__jw_ints(&b, p->nodes, (uint64_t)p->nnodes);
    npl__jw_s(&b, ", \"page_size\": ");
    npl__jw_u(&b, p->page_size);
    if (p->migrate_rate > 0) {
        npl__jw_s(&b, ", \"migrate_pages_s\": ");
        npl__jw_real(&b, p->migrate_rate);
    }
    npl__jw_s(&b, "},\n \"run\": {\"threads\": ");
    npl__jw_i(&b, p->threads);
    npl__jw_s(&b, ", \"thread_nodes\": ");
    npl__jw_ints(&b, p->thread_nodes, (uint64_t)p->threads);
    npl__jw_s(&b, ", \"thread_cpus\": ");
    if (p->thread_cpus)
        npl__jw_ints(&b, p->thread_cpus, (uint64_t)p->threads);
    else
        npl__jw_s(&b, "null");
    if (p->thread_exposure) {
        npl__jw_s(&b, ",\n  \"thread_exposure\": [");
        for (int t = 0; t < p->threads; t++) {
            npl__jw_s(&b, t ? ", " : "");
            npl__jw_real(&b, p->thread_exposure[t]);
        }
        npl__jw_s(&b, "]");
    }
    phase_exposure(&b, p);
    npl__jw_s(&b, ",\n  \"binding\": {\"source\": ");
    npl__jw_str(&b, bind[p->binding >= 0 && p->binding <= 2 ? p->binding : 0]);
    npl__jw_s(&b, ", \"detail\": ");
    npl__jw_str(&b, p->binding_detail);
    npl__jw_s(&b, "}},\n \"sampling\": {\"backend\": ");
    npl__jw_str(&b, npl__sampling_backend_of(p->backend)->name);
    npl__jw_s(&b, ", \"rate\": ");
    npl__jw_real(&b, p->rate);
    npl__jw_s(&b, ", \"samples\": ");
    npl__jw_u(&b, p->samples);
    npl__jw_s(&b, ", \"seconds\": ");
    npl__jw_real(&b, p->seconds);
    npl__jw_s(&b, ", \"rw_known\": ");
    npl__jw_s(&b, p->rw_known ? "true" : "false");
    if (p->has_measured)
        write_measured(&b, p->measured);
    if (p->has_concurrency) {
        npl__jw_s(&b, ", \"concurrency\": {\"rounds\": ");
        npl__jw_u(&b, p->rounds_crowded);
        npl__jw_s(&b, ", \"together\": ");
        npl__jw_u(&b, p->rounds_together);
        npl__jw_s(&b, "}");
    }
    if (p->idle_sleep)
        npl__jw_s(&b, ", \"omp_wait\": \"passive\"");
    npl__jw_s(&b, "},\n \"phases\": [");
    write_phases(&b, p);
    npl__jw_s(&b, "],\n \"arrays\": [");
    for (uint32_t ai = 0; ai < p->narrays; ai++)
        write_array(&b, p, ai);
    npl__jw_s(&b, "]\n}\n");
    if (b.oom) {
        free(b.p);
        errno = ENOMEM;
        return NULL;
    }
    if (len)
        *len = b.n;
    return b.p;
}
