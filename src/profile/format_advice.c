/* SPDX-License-Identifier: BSD-3-Clause */
/* format_advice.c - an array's advice in the profile format v1: its reader (on json.c's lexer),
 * its writer and its release. */
#define _GNU_SOURCE
#include "profile/format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* advice.local: {"policy", "first_touch" (or null), "best", optional "err"} */
static int local(struct npl__jr *r, struct npl_prof_advice *a)
{
    static const char *const lnames[] = {"policy", "first_touch", "best", "err", NULL};
    struct npl__jr_members lm = {lnames, 0};
    int f2 = 1, k2 = 0, li = 0, rc;
    char lk[64];
    rc = npl__jr_enter(r, '{', "an object");
    while (rc == 0 && (k2 = npl__jr_obj_next(r, &f2, lk, sizeof lk)) == 1) {
        size_t o2 = npl__jr_push_key(r, lk);
        rc = npl__jr_member(r, &lm, lk, &li);
        if (rc == 0 && li == 1) {
            int nul = npl__jr_is_null(r);
            rc = nul < 0 ? -1 : nul ? 0 : npl__jr_real(r, 0, 1, &a->local_first_touch);
        } else if (rc == 0) {
            rc = npl__jr_real(r, 0, 1, li == 0 ? &a->local_policy
                                       : li == 2 ? &a->local_best : &a->local_err);
        }
        npl__jr_pop(r, o2);
    }
    if (rc == 0 && k2 < 0)
        rc = -1;
    if (rc == 0)
        rc = npl__jr_require(r, &lm, 0x7);
    return rc;
}

/* advice.chunk_nodes: null, or one node (-1: none) per chunk */
static int chunk_nodes(struct npl__jr *r, struct npl_prof_advice *a, int *has_chunk_nodes)
{
    int nul = npl__jr_is_null(r);
    if (nul)
        return nul < 0 ? -1 : 0;
    int64_t *v;
    uint64_t n;
    int rc = npl__jr_int_list(r, -1, NPL_PROF_MAX_NODE_ID, NPL_PROF_MAX_CHUNKS, &v, &n);
    if (rc == 0 && !(a->chunk_nodes = malloc((size_t)(n ? n : 1) * sizeof(int))))
        rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
    for (uint64_t i = 0; rc == 0 && i < n; i++)
        a->chunk_nodes[i] = (int)v[i];
    if (rc == 0) {
        a->nchunk_nodes = n;
        *has_chunk_nodes = 1;
    }
    free(v);
    return rc;
}

/* The format's spellings of the advice kinds without a policy string of their own, and of a
 * map's fallback that is the map scaled. */
#define MAP "explicit"
#define FIRST_TOUCH "first_touch"
#define SCALED "scaled_map"

const char *npl__advice_kind_text(int kind)
{
    return kind == NPL_ADVICE_MAP ? MAP : kind == NPL_ADVICE_FIRST_TOUCH ? FIRST_TOUCH : NULL;
}

void npl__advice_set(struct npl_prof_advice *a, int kind, const char *policy)
{
    const char *text = npl__advice_kind_text(kind);
    a->kind = kind;
    snprintf(a->policy, sizeof a->policy, "%s", text ? text : policy ? policy : FIRST_TOUCH);
}

/* a policy text read: its kind, the string kept (a policy must parse) */
static int advice_text(struct npl__jr *r, const char *s, int *kind, char *out, size_t size)
{
    if (strlen(s) >= size)
        return npl__jr_fail(r, "a policy string longer than %zu bytes", size - 1);
    *kind = !strcmp(s, MAP) ? NPL_ADVICE_MAP : !strcmp(s, FIRST_TOUCH) ? NPL_ADVICE_FIRST_TOUCH
                                                                     : NPL_ADVICE_POLICY;
    if (*kind != NPL_ADVICE_MAP) {
        npl_policy *pol;
        if (npl_policy_parse(&pol, s) < 0)
            return npl__jr_fail(r, "%s", npl_last_error());
        npl_policy_free(pol);
    }
    snprintf(out, size, "%s", s);
    return 0;
}

int npl__advice_read(struct npl__jr *r, struct npl_prof_advice *a, int *has_chunk_nodes)
{
    static const char *const names[] = {"pattern", "policy", "confidence", "local", "reason",
                                        "replicate", "next_touch_phases", "samples",
                                        "period_pages", "block_threads", "chunk_nodes",
                                        "fallback", NULL};
    struct npl__jr_members m = {names, 0};
    char key[64];
    int first = 1, k, idx, has_fallback = 0;
    memset(a, 0, sizeof *a);
    a->local_first_touch = -1;
    a->local_err = -1; /* not in profiles written before it: not known */
    if (npl__jr_enter(r, '{', "an object") < 0)
        return -1;
    while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = npl__jr_push_key(r, key);
        int rc = npl__jr_member(r, &m, key, &idx);
        char *s = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = npl__jr_string(r, &s);
                if (rc == 0 && (a->pattern = npl__pattern_parse(s)) < 0)
                    rc = npl__jr_fail(r, "unknown pattern \"%.40s\"", s);
                break;
            case 1:
                rc = npl__jr_string(r, &s);
                if (rc == 0 && strlen(s) >= sizeof a->policy)
                    rc = npl__jr_fail(r, "a policy string longer than %zu bytes", sizeof a->policy - 1);
                if (rc == 0)
                    rc = advice_text(r, s, &a->kind, a->policy, sizeof a->policy);
                break;
            case 2: rc = npl__jr_real(r, 0, 1, &a->confidence); break;
            case 3: rc = local(r, a); break;
            case 4:
                rc = npl__jr_string(r, &s);
                if (rc == 0)
                    snprintf(a->reason, sizeof a->reason, "%s", s);
                break;
            case 5: rc = npl__jr_boolean(r, &a->replicate); break;
            case 6: {
                int64_t *v;
                uint64_t n;
                rc = npl__jr_int_list(r, 0, UINT32_MAX, NPL_PROF_MAX_PHASES, &v, &n);
                if (rc == 0 && n && !(a->next_touch = malloc((size_t)n * sizeof *a->next_touch)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (uint64_t i = 0; rc == 0 && i < n; i++)
                    a->next_touch[i] = (uint32_t)v[i];
                if (rc == 0)
                    a->nnext_touch = (uint32_t)n;
                free(v);
                break;
            }
            case 7: rc = npl__jr_u64(r, UINT64_C(1) << 62, &a->samples); break;
            case 8: {
                int nul = npl__jr_is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : npl__jr_u64(r, UINT64_C(1) << 40, &a->period_pages);
                break;
            }
            case 9: {
                int64_t t = 0;
                int nul = npl__jr_is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : npl__jr_integer(r, 1, NPL_PROF_MAX_THREADS, &t);
                a->block_threads = (int)t;
                break;
            }
            case 10: rc = chunk_nodes(r, a, has_chunk_nodes); break;
            case 11:
                rc = npl__jr_string(r, &s);
                if (rc == 0 && !strcmp(s, SCALED))
                    a->fallback_kind = NPL_ADVICE_MAP;
                else if (rc == 0)
                    rc = advice_text(r, s, &a->fallback_kind, a->fallback, sizeof a->fallback);
                has_fallback = a->has_fallback = rc == 0;
                break;
            }
        }
        free(s);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || npl__jr_require(r, &m, 0xff) < 0)
        return -1;
    if (a->kind == NPL_ADVICE_MAP && !*has_chunk_nodes)
        return npl__jr_fail(r, "policy \"%s\" needs chunk_nodes", MAP);
    if (a->kind != NPL_ADVICE_MAP && *has_chunk_nodes)
        return npl__jr_fail(r, "chunk_nodes belong to policy \"%s\" only", MAP);
    if (a->kind == NPL_ADVICE_MAP && !has_fallback) /* a profile written before "fallback" */
        a->fallback_kind =
            a->samples < NPL_PROF_MIN_SAMPLES ? NPL_ADVICE_MAP : NPL_ADVICE_FIRST_TOUCH;
    return 0;
}

void npl__advice_write(struct npl__jw *b, const struct npl_prof_advice *a,
                       const struct npl_profile *p)
{
    (void)p;
    npl__jw_s(b, ",\n   \"advice\": {\"pattern\": ");
    npl__jw_str(b, npl__pattern_name(a->pattern));
    npl__jw_s(b, ", \"policy\": ");
    npl__jw_str(b, a->policy);
    npl__jw_s(b, ", \"confidence\": ");
    npl__jw_real(b, a->confidence);
    npl__jw_s(b, ",\n    \"local\": {\"policy\": ");
    npl__jw_real(b, a->local_policy);
    npl__jw_s(b, ", \"first_touch\": ");
    if (a->local_first_touch >= 0)
        npl__jw_real(b, a->local_first_touch);
    else
        npl__jw_s(b, "null");
    npl__jw_s(b, ", \"best\": ");
    npl__jw_real(b, a->local_best);
    if (a->local_err >= 0) {
        npl__jw_s(b, ", \"err\": ");
        npl__jw_real(b, a->local_err);
    }
    npl__jw_s(b, "},\n    \"reason\": ");
    npl__jw_str(b, a->reason);
    npl__jw_s(b, ",\n    \"replicate\": ");
    npl__jw_s(b, a->replicate ? "true" : "false");
    npl__jw_s(b, ", \"next_touch_phases\": [");
    for (uint32_t i = 0; i < a->nnext_touch; i++) {
        if (i)
            npl__jw_s(b, ", ");
        npl__jw_u(b, a->next_touch[i]);
    }
    npl__jw_s(b, "], \"samples\": ");
    npl__jw_u(b, a->samples);
    npl__jw_s(b, ", \"period_pages\": ");
    if (a->period_pages)
        npl__jw_u(b, a->period_pages);
    else
        npl__jw_s(b, "null");
    npl__jw_s(b, ", \"block_threads\": ");
    if (a->block_threads)
        npl__jw_i(b, a->block_threads);
    else
        npl__jw_s(b, "null");
    npl__jw_s(b, ", \"chunk_nodes\": ");
    if (a->chunk_nodes)
        npl__jw_ints(b, a->chunk_nodes, a->nchunk_nodes);
    else
        npl__jw_s(b, "null");
    if (a->kind == NPL_ADVICE_MAP && a->has_fallback) {
        npl__jw_s(b, ", \"fallback\": ");
        npl__jw_str(b, a->fallback_kind == NPL_ADVICE_MAP      ? SCALED
                       : a->fallback_kind == NPL_ADVICE_POLICY ? a->fallback
                                                               : FIRST_TOUCH);
    }
    npl__jw_s(b, "}");
}

void npl__advice_clear(struct npl_prof_advice *a)
{
    free(a->chunk_nodes);
    free(a->next_touch);
    a->chunk_nodes = NULL;
    a->next_touch = NULL;
    a->nchunk_nodes = 0;
    a->nnext_touch = 0;
}
