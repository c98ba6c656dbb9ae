/* SPDX-License-Identifier: BSD-3-Clause */
/* policy.c - MAi's memory policies as values, their one string syntax, and the pure
 * page -> node map. No system call in this file: every function here is unit tested on
 * synthetic topologies. */
#define _GNU_SOURCE
#include "plan/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODE_ID NPL__MAX_ID

/* does p's kind take this parameter (policy_table.c's flags)? */
static int has(const npl_policy *p, unsigned flag)
{
    return (npl__policy_row(p->kind)->flags & flag) != 0;
}

const char *npl_policy_kind_name(npl_policy_kind k)
{
    const struct npl__policy_row *r = npl__policy_row(k);
    return r ? r->name : "invalid";
}

npl_policy_kind npl_policy_get_kind(const npl_policy *p) { return p ? p->kind : NPL_FIRST_TOUCH; }

int npl_policy_wants_pinning(const npl_policy *p)
{
    return p && (npl__policy_row(p->kind)->flags & NPL__POL_PINS) != 0;
}

void npl_policy_free(npl_policy *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->weights);
    free(p->subset);
    free(p);
}

npl_policy *npl_policy_dup(const npl_policy *p)
{
    if (!p) {
        npl__fail(EINVAL, "NULL policy");
        return NULL;
    }
    npl_policy *d = malloc(sizeof *d);
    if (!d) {
        npl__fail(ENOMEM, "out of memory");
        return NULL;
    }
    *d = *p;
    d->nodes = npl__dup_ints(p->nodes, p->nnodes);
    d->weights = npl__dup_ints(p->weights, p->nnodes);
    d->subset = npl__dup_ints(p->subset, p->nsubset);
    if ((p->nnodes && !d->nodes) || (p->weights && !d->weights) || (p->nsubset && !d->subset)) {
        npl_policy_free(d);
        npl__fail(ENOMEM, "out of memory");
        return NULL;
    }
    return d;
}

static int check_nodes(const int *nodes, int n)
{
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] > MAX_NODE_ID)
            return npl__fail(EINVAL, "invalid node id %d", nodes[i]);
        for (int j = 0; j < i; j++)
            if (nodes[j] == nodes[i])
                return npl__fail(EINVAL, "duplicate node id %d", nodes[i]);
    }
    return 0;
}

int npl_policy_create(npl_policy **out, npl_policy_kind kind, const int *nodes, int nnodes)
{
    if (!out)
        return npl__fail(EINVAL, "NULL out");
    *out = NULL;
    const struct npl__policy_row *row = npl__policy_row(kind);
    if (!row)
        return npl__fail(EINVAL, "invalid policy kind %d", (int)kind);
    if (nnodes < 0 || (nnodes > 0 && !nodes))
        return npl__fail(EINVAL, "invalid node list");
    if (check_nodes(nodes, nnodes) < 0)
        return -1;
    npl_policy *p = calloc(1, sizeof *p);
    if (!p)
        return npl__fail(ENOMEM, "out of memory");
    p->kind = kind;
    p->seed = 1;
    if (nnodes > 0) {
        /* bind_all: the nodes to fill in order; others: the subset to spread over */
        int list = (row->flags & NPL__POL_NODE_LIST) != 0;
        int **dst = list ? &p->nodes : &p->subset;
        *dst = npl__dup_ints(nodes, nnodes);
        if (!*dst) {
            free(p);
            return npl__fail(ENOMEM, "out of memory");
        }
        if (list)
            p->nnodes = nnodes;
        else
            p->nsubset = nnodes;
    }
    *out = p;
    return 0;
}

int npl__is_block_kind(npl_policy_kind k)
{
    const struct npl__policy_row *r = npl__policy_row(k);
    return r && (r->flags & NPL__POL_BLOCKS);
}

int npl_policy_set_block_pages(npl_policy *p, size_t pages)
{
    /* at most what a policy string can say: the canonical string must parse again */
    if (!p || !npl__is_block_kind(p->kind) || pages == 0 || (uint64_t)pages > (uint64_t)1 << 40)
        return npl__fail(EINVAL, "block size needs a block policy and a size of 1..2^40");
    p->block_pages = pages;
    p->block_units = 0;
    return 0;
}

int npl_policy_set_block_units(npl_policy *p, size_t units)
{
    if (!p || !npl__is_block_kind(p->kind) || units == 0 || (uint64_t)units > (uint64_t)1 << 40)
        return npl__fail(EINVAL, "block size needs a block policy and a size of 1..2^40");
    p->block_units = units;
    p->block_pages = 0;
    return 0;
}

static int valid_strategy_word(const char *s)
{
    return !s || !*s || !strcmp(s, "compact") || !strcmp(s, "scatter");
}

int npl__policy_follow_pin(npl_policy *p, const char *strategy)
{
    if (!p || !has(p, NPL__POL_THREAD_NODES) || p->threads <= 0 || !strategy || !*strategy)
        return 0;
    if (strlen(strategy) >= sizeof p->pin)
        return npl__fail(EINVAL, "pin strategy \"%.32s...\" is too long for a policy", strategy);
    snprintf(p->pin, sizeof p->pin, "%s", strategy);
    return 1;
}

int npl_policy_set_threads(npl_policy *p, int nthreads, const char *pin)
{
    if (!p || !npl__is_block_kind(p->kind))
        return npl__fail(EINVAL, "threads apply to block policies only");
    if (nthreads < 0 || nthreads > 1 << 20)
        return npl__fail(EINVAL, "invalid thread count %d", nthreads);
    if (!valid_strategy_word(pin))
        return npl__fail(EINVAL, "pin strategy \"%s\": expected compact or scatter", pin);
    p->threads = nthreads;
    snprintf(p->pin, sizeof p->pin, "%s", pin ? pin : "");
    return 0;
}

int npl_policy_set_seed(npl_policy *p, uint64_t seed)
{
    if (!p || !has(p, NPL__POL_SEED))
        return npl__fail(EINVAL, "a seed applies to random and random_block only");
    p->seed = seed;
    return 0;
}

int npl_policy_set_prime(npl_policy *p, int prime)
{
    if (!p || !has(p, NPL__POL_PRIME))
        return npl__fail(EINVAL, "a prime applies to prime_mapp only");
    if (!npl__is_prime(prime) || prime > 1 << 20) /* as a policy string: it must parse again */
        return npl__fail(EINVAL, "prime_mapp: %d is not a prime up to 1048576", prime);
    p->prime = prime;
    return 0;
}

int npl_policy_set_weights(npl_policy *p, const int *nodes, const int *weights, int n)
{
    if (!p || !has(p, NPL__POL_WEIGHTS))
        return npl__fail(EINVAL, "weights apply to weighted only");
    if (n <= 0 || !nodes || !weights)
        return npl__fail(EINVAL, "weighted: empty weight list");
    if (check_nodes(nodes, n) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (weights[i] <= 0 || weights[i] > 1 << 16)
            return npl__fail(EINVAL, "weighted: weight %d of node %d must be 1..65536",
                             weights[i], nodes[i]);
    int *nn = npl__dup_ints(nodes, n), *ww = npl__dup_ints(weights, n);
    if (!nn || !ww) {
        free(nn);
        free(ww);
        return npl__fail(ENOMEM, "out of memory");
    }
    free(p->nodes);
    free(p->weights);
    p->nodes = nn;
    p->weights = ww;
    p->nnodes = n;
    return 0;
}

/* ---- the string syntax ---- */

static int parse_size_value(const char *item, const char *val, size_t *out)
{
    uint64_t v;
    if (npl__parse_count(val, 1, (uint64_t)1 << 40, &v) < 0)
        return npl__fail(EINVAL, "\"%s\": expected a positive integer", item);
    *out = (size_t)v;
    return 0;
}

/* weighted:0=3,1=1 */
static int parse_weights(npl_policy *p, char *params, const char *whole)
{
    int cap = 0, n = 0, *nodes = NULL, *weights = NULL;
    for (char *save = NULL, *it = strtok_r(params, ",", &save); it;
         it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        uint64_t node, w;
        if (eq)
            *eq = 0;
        if (!eq || npl__parse_count(it, 0, MAX_NODE_ID, &node) < 0 ||
            npl__parse_count(eq + 1, 0, 1 << 16, &w) < 0) {
            if (eq)
                *eq = '=';
            npl__fail(EINVAL, "policy \"%s\": weight \"%s\" is not NODE=WEIGHT", whole, it);
            free(nodes);
            free(weights);
            return -1;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            int *a = realloc(nodes, (size_t)cap * sizeof *a);
            int *b = a ? realloc(weights, (size_t)cap * sizeof *b) : NULL;
            if (a)
                nodes = a;
            if (b)
                weights = b;
            if (!a || !b) {
                free(nodes);
                free(weights);
                return npl__fail(ENOMEM, "out of memory");
            }
        }
        nodes[n] = (int)node;
        weights[n] = (int)w;
        n++;
    }
    int rc = npl_policy_set_weights(p, nodes, weights, n);
    free(nodes);
    free(weights);
    if (rc < 0)
        return npl__fail(errno, "policy \"%s\": %s", whole, npl_last_error());
    return 0;
}

static int parse_params(npl_policy *p, char *params, const char *whole)
{
    if (has(p, NPL__POL_NODE_LIST)) { /* bind_all:0,2 - the nodes, in fill order */
        free(p->nodes);
        p->nodes = NULL;
        return npl__parse_list(params, MAX_NODE_ID, "node", &p->nodes, &p->nnodes);
    }
    if (has(p, NPL__POL_WEIGHTS))
        return parse_weights(p, params, whole);
    unsigned seen = 0; /* a parameter given twice (threads=2,threads=3; pages=1,units=1) */
    for (char *save = NULL, *it = strtok_r(params, ",", &save); it;
         it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        const char *key = it, *val = eq ? eq + 1 : NULL;
        if (eq)
            *eq = 0;
        int ok = 0;
        unsigned bit = 0;
        if (!val || !strcmp(key, "pages") || !strcmp(key, "units") || !strcmp(key, "rows") ||
            !strcmp(key, "cols") || !strcmp(key, "planes") || !strcmp(key, "p"))
            bit = 1u; /* the block size (or prime_mapp's P) */
        else if (!strcmp(key, "threads"))
            bit = 2u;
        else if (!strcmp(key, "pin"))
            bit = 4u;
        else if (!strcmp(key, "seed"))
            bit = 8u;
        if (seen & bit)
            return npl__fail(EINVAL, "policy \"%s\": \"%s\" given twice (one block size, "
                                     "threads, pin, seed or prime at most)", whole, !val ? it : key);
        seen |= bit;
        if (!val) { /* positional */
            if (has(p, NPL__POL_POSITIONAL_PAGES)) {
                key = "pages";
                val = it;
            } else if (has(p, NPL__POL_PRIME)) {
                key = "p";
                val = it;
            } else {
                return npl__fail(EINVAL, "policy \"%s\": unexpected parameter \"%s\"", whole, it);
            }
        }
        int blocks = has(p, NPL__POL_BLOCKS);
        if (blocks && !strcmp(key, "pages")) {
            ok = parse_size_value(val, val, &p->block_pages) == 0;
            p->block_units = 0;
        } else if (blocks &&
                   (!strcmp(key, "units") || !strcmp(key, "rows") || !strcmp(key, "cols") ||
                    !strcmp(key, "planes"))) {
            ok = parse_size_value(val, val, &p->block_units) == 0;
            p->block_pages = 0;
        } else if (blocks && !strcmp(key, "threads")) {
            uint64_t t;
            ok = npl__parse_count(val, 1, 1 << 20, &t) == 0;
            if (ok)
                p->threads = (int)t;
        } else if (blocks && !strcmp(key, "pin")) {
            ok = valid_strategy_word(val) && *val;
            if (ok)
                snprintf(p->pin, sizeof p->pin, "%s", val);
        } else if (has(p, NPL__POL_SEED) && !strcmp(key, "seed")) {
            ok = npl__parse_count(val, 0, UINT64_MAX, &p->seed) == 0;
        } else if (has(p, NPL__POL_PRIME) && !strcmp(key, "p")) {
            uint64_t v;
            if (npl__parse_count(val, 0, 1 << 20, &v) < 0)
                return npl__fail(EINVAL, "policy \"%s\": prime \"%s\" is not a number up to 1048576",
                                 whole, val);
            if (!npl__is_prime((long)v))
                return npl__fail(EINVAL, "policy \"%s\": prime_mapp P=%s is not prime", whole, val);
            p->prime = (int)v;
            ok = 1;
        } else {
            return npl__fail(EINVAL, "policy \"%s\": unknown parameter \"%s\" for %s", whole, key,
                             npl_policy_kind_name(p->kind));
        }
        if (!ok)
            return npl__fail(EINVAL, "policy \"%s\": bad value \"%s\" for %s", whole,
                             val ? val : "", key);
    }
    return 0;
}

int npl_policy_parse(npl_policy **out, const char *str)
{
    if (!out)
        return npl__fail(EINVAL, "NULL out");
    *out = NULL;
    if (!str)
        return npl__fail(EINVAL, "NULL policy string");
    size_t len = strlen(str);
    if (len == 0)
        return npl__fail(EINVAL, "empty policy string");
    if (len > 4096)
        return npl__fail(EINVAL, "policy string longer than 4096 characters");
    char *s = strdup(str);
    if (!s)
        return npl__fail(ENOMEM, "out of memory");
    char *at = strchr(s, '@');
    char *colon = strchr(s, ':');
    if (at)
        *at = 0;
    if (colon && (!at || colon < at))
        *colon = 0;
    else
        colon = NULL;
    int kind = npl__policy_kind_of(s);
    if (!strcmp(s, "interleave")) /* numactl's word */
        kind = NPL_CYCLIC;
    npl_policy *p = NULL;
    int rc;
    if (kind < 0) {
        char known[256] = "";
        for (int k = 0; k < NPL_POLICY_KIND_COUNT; k++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? " " : "",
                     npl_policy_kind_name((npl_policy_kind)k));
        rc = npl__fail(EINVAL, "unknown policy \"%s\" (known: %s)", s, known);
        goto done;
    }
    if ((rc = npl_policy_create(&p, (npl_policy_kind)kind, NULL, 0)) < 0)
        goto done;
    if (colon) {
        if (!colon[1]) {
            rc = npl__fail(EINVAL, "policy \"%s\": empty parameter list after ':'", str);
            goto done;
        }
        if ((rc = parse_params(p, colon + 1, str)) < 0) {
            if (has(p, NPL__POL_NODE_LIST))
                npl__fail(errno, "policy \"%s\": %s", str, npl_last_error());
            goto done;
        }
    }
    if (has(p, NPL__POL_WEIGHTS) && p->nnodes == 0) {
        rc = npl__fail(EINVAL, "policy \"%s\": weighted needs NODE=WEIGHT pairs", str);
        goto done;
    }
    if (at && !strcmp(at + 1, "local")) {
        p->local = 1; /* resolved against a topology by the plan */
    } else if (at &&
               (rc = npl__parse_list(at + 1, MAX_NODE_ID, "node", &p->subset, &p->nsubset)) < 0) {
        npl__fail(errno, "policy \"%s\": node subset: %s", str, npl_last_error());
        goto done;
    }
    if (at && p->nnodes && !p->local) /* explicit nodes must lie in the subset */
        for (int i = 0; i < p->nnodes; i++) {
            if (!npl__in_list(p->nodes[i], p->subset, p->nsubset)) {
                rc = npl__fail(EINVAL, "policy \"%s\": node %d is outside the subset @%s", str,
                               p->nodes[i], at + 1);
                goto done;
            }
        }
done:
    free(s);
    if (rc < 0) {
        npl_policy_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int npl_policy_format(const npl_policy *p, char *buf, size_t size)
{
    if (!p || (!buf && size))
        return npl__fail(EINVAL, "NULL argument");
    char tmp[8192], list[4096];
    size_t off = 0;
#define PUT(...) off += (size_t)snprintf(tmp + off, off < sizeof tmp ? sizeof tmp - off : 0, __VA_ARGS__)
    PUT("%s", npl_policy_kind_name(p->kind));
    char sep = ':';
    if (has(p, NPL__POL_NODE_LIST) && p->nnodes) {
        npl__format_list(p->nodes, p->nnodes, list, sizeof list);
        PUT(":%s", list);
    }
    if (has(p, NPL__POL_WEIGHTS))
        for (int i = 0; i < p->nnodes; i++, sep = ',')
            PUT("%c%d=%d", sep, p->nodes[i], p->weights[i]);
    if (p->block_pages) {
        PUT("%cpages=%zu", sep, p->block_pages);
        sep = ',';
    }
    if (p->block_units) {
        PUT("%cunits=%zu", sep, p->block_units);
        sep = ',';
    }
    if (p->threads) {
        PUT("%cthreads=%d", sep, p->threads);
        sep = ',';
    }
    if (p->pin[0]) {
        PUT("%cpin=%s", sep, p->pin);
        sep = ',';
    }
    if (has(p, NPL__POL_SEED)) {
        PUT("%cseed=%llu", sep, (unsigned long long)p->seed);
        sep = ',';
    }
    if (has(p, NPL__POL_PRIME) && p->prime)
        PUT("%c%d", sep, p->prime);
    if (p->nsubset) {
        npl__format_list(p->subset, p->nsubset, list, sizeof list);
        PUT("@%s", list);
    } else if (p->local) {
        PUT("@%s", "local");
    }
#undef PUT
    if (size)
        snprintf(buf, size, "%s", tmp);
    return (int)off;
}

int npl_shape_bytes(const npl_shape *s, size_t *bytes)
{
    if (!s || !bytes)
        return npl__fail(EINVAL, "NULL shape");
    if (s->ndims < 1 || s->ndims > 3)
        return npl__fail(EINVAL, "shape: %d dimensions (1 to 3 supported)", s->ndims);
    if (s->order != NPL_ROW_MAJOR && s->order != NPL_COL_MAJOR)
        return npl__fail(EINVAL, "shape: invalid storage order");
    if (s->elem_size == 0)
        return npl__fail(EINVAL, "shape: element size 0");
    size_t b = s->elem_size;
    for (int d = 0; d < s->ndims; d++) {
        if (s->dims[d] == 0)
            return npl__fail(EINVAL, "shape: dimension %d is 0", d);
        if (__builtin_mul_overflow(b, s->dims[d], &b))
            return npl__fail(EOVERFLOW, "shape: size overflows (elements x %zu bytes)",
                             s->elem_size);
    }
    *bytes = b;
    return 0;
}

