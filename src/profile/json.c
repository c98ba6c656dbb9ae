/* SPDX-License-Identifier: BSD-3-Clause */
/* json.c - the profile format's own JSON: a strict pull lexer and a growing-buffer writer, with no
 * JSON library (an interposed process links none; hwloc's topology-xml-nolibxml.c beside
 * topology-xml.c is the same choice). The schema that uses them is format.c (the reader),
 * format_write.c and format_advice.c. */
#define _GNU_SOURCE
#include "profile/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== the reader ==== */

int npl__jr_fail(struct npl__jr *r, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->whole)
        return npl__prof_fail(r->err, r->errsz, EINVAL, "profile: %s%s%s", r->plen ? r->path : "",
                              r->plen ? ": " : "", msg);
    return npl__prof_fail(r->err, r->errsz, EINVAL, "profile: %s%s%s (at byte %zu)",
                          r->plen ? r->path : "", r->plen ? ": " : "", msg, r->i);
}

size_t npl__jr_push_key(struct npl__jr *r, const char *key)
{
    size_t old = r->plen;
    int k = snprintf(r->path + r->plen, sizeof r->path - r->plen, "%s%s", r->plen ? "." : "", key);
    if (k > 0)
        r->plen = r->plen + (size_t)k < sizeof r->path ? r->plen + (size_t)k : sizeof r->path - 1;
    return old;
}

size_t npl__jr_push_index(struct npl__jr *r, size_t idx)
{
    size_t old = r->plen;
    int k = snprintf(r->path + r->plen, sizeof r->path - r->plen, "[%zu]", idx);
    if (k > 0)
        r->plen = r->plen + (size_t)k < sizeof r->path ? r->plen + (size_t)k : sizeof r->path - 1;
    return old;
}

void npl__jr_pop(struct npl__jr *r, size_t old)
{
    r->plen = old;
    r->path[old] = 0;
}

static void ws(struct npl__jr *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
        r->i++;
}

int npl__jr_peek(struct npl__jr *r)
{
    ws(r);
    return r->i < r->n ? (unsigned char)r->s[r->i] : -1;
}

/* what the next value is (at r->i, after blanks), for messages */
const char *npl__jr_what_next(const struct npl__jr *r)
{
    int c = r->i < r->n ? (unsigned char)r->s[r->i] : -1;
    size_t left = r->n - r->i;
    switch (c) {
    case -1: return "the end of the text (truncated?)";
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't': return left >= 4 && !memcmp(r->s + r->i, "true", 4) ? "a boolean" : "something that is not JSON";
    case 'f': return left >= 5 && !memcmp(r->s + r->i, "false", 5) ? "a boolean" : "something that is not JSON";
    case 'n': return left >= 4 && !memcmp(r->s + r->i, "null", 4) ? "null" : "something that is not JSON";
    default: return (c == '-' || (c >= '0' && c <= '9')) ? "a number" : "something that is not JSON";
    }
}

static int expect(struct npl__jr *r, char c, const char *what)
{
    int p = npl__jr_peek(r);
    if (p != (unsigned char)c)
        return npl__jr_fail(r, "expected %s, found %s", what, npl__jr_what_next(r));
    r->i++;
    return 0;
}

static int literal(struct npl__jr *r, const char *lit)
{
    size_t k = strlen(lit);
    if (r->n - r->i < k || memcmp(r->s + r->i, lit, k))
        return npl__jr_fail(r, "not JSON (a bad literal)");
    r->i += k;
    return 0;
}

int npl__jr_is_null(struct npl__jr *r)
{
    if (npl__jr_peek(r) != 'n')
        return 0;
    return literal(r, "null") == 0 ? 1 : -1;
}

static int hex4(struct npl__jr *r, unsigned *v)
{
    if (r->n - r->i < 4)
        return npl__jr_fail(r, "a truncated \\u escape");
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->i++];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return npl__jr_fail(r, "a bad \\u escape");
        *v = *v * 16 + d;
    }
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string into a malloc'ed NUL-terminated buffer (out NULL: skipped). */
int npl__jr_string(struct npl__jr *r, char **out)
{
    if (expect(r, '"', "a string") < 0)
        return -1;
    char *buf = out ? malloc(NPL_PROF_MAX_STRING + 1) : NULL;
    if (out && !buf)
        return npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
    size_t len = 0;
    for (;;) {
        if (r->i >= r->n) {
            free(buf);
            return npl__jr_fail(r, "a string that does not end (truncated?)");
        }
        unsigned char c = (unsigned char)r->s[r->i];
        char tmp[4];
        size_t k;
        if (c == '"') {
            r->i++;
            break;
        }
        if (c < 0x20) {
            free(buf);
            return npl__jr_fail(r, "a control character in a string");
        }
        if (c == '\\') {
            r->i++;
            if (r->i >= r->n) {
                free(buf);
                return npl__jr_fail(r, "a string that does not end (truncated?)");
            }
            char e = r->s[r->i++];
            unsigned cp;
            switch (e) {
            case '"': case '\\': case '/': tmp[0] = e; k = 1; break;
            case 'b': tmp[0] = '\b'; k = 1; break;
            case 'f': tmp[0] = '\f'; k = 1; break;
            case 'n': tmp[0] = '\n'; k = 1; break;
            case 'r': tmp[0] = '\r'; k = 1; break;
            case 't': tmp[0] = '\t'; k = 1; break;
            case 'u':
                if (hex4(r, &cp) < 0) {
                    free(buf);
                    return -1;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
                    unsigned lo;
                    if (r->n - r->i < 2 || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u') {
                        free(buf);
                        return npl__jr_fail(r, "a lone surrogate in a \\u escape");
                    }
                    r->i += 2;
                    if (hex4(r, &lo) < 0) {
                        free(buf);
                        return -1;
                    }
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf);
                        return npl__jr_fail(r, "a lone surrogate in a \\u escape");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(buf);
                    return npl__jr_fail(r, "a lone surrogate in a \\u escape");
                }
                if (cp == 0) {
                    free(buf);
                    return npl__jr_fail(r, "a NUL character (\\u0000) in a string");
                }
                k = put_utf8(tmp, cp);
                break;
            default:
                free(buf);
                return npl__jr_fail(r, "a bad escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
            }
        } else {
            k = npl__utf8_len((const unsigned char *)r->s + r->i, r->n - r->i);
            if (!k) {
                free(buf);
                return npl__jr_fail(r, "invalid UTF-8 in a string");
            }
            memcpy(tmp, r->s + r->i, k);
            r->i += k;
        }
        if (len + k > NPL_PROF_MAX_STRING) {
            free(buf);
            return npl__jr_fail(r, "a string longer than %d bytes", NPL_PROF_MAX_STRING);
        }
        if (buf)
            memcpy(buf + len, tmp, k);
        len += k;
    }
    if (buf) {
        buf[len] = 0;
        char *shrunk = realloc(buf, len + 1);
        *out = shrunk ? shrunk : buf;
    }
    return 0;
}

/* A JSON number, without the locale: *v its value; *integral: written without fraction or
 * exponent (then *u holds it exactly when it fits 2^63, *neg its sign). */
static int number(struct npl__jr *r, double *v, int *integral, uint64_t *u, int *neg)
{
    int c = npl__jr_peek(r);
    if (c != '-' && (c < '0' || c > '9'))
        return npl__jr_fail(r, "expected a number, found %s", npl__jr_what_next(r));
    size_t start = r->i;
    *neg = 0;
    if (r->s[r->i] == '-') {
        *neg = 1;
        r->i++;
    }
    if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9')
        return npl__jr_fail(r, "a bad number");
    uint64_t mant = 0;
    int ndig = 0, dropped = 0, exp10 = 0, big = 0;
    if (r->s[r->i] == '0') {
        r->i++;
        if (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
            return npl__jr_fail(r, "a number with a leading zero");
    } else {
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(r->s[r->i] - '0');
                ndig++;
            } else {
                dropped++;
                big = 1;
            }
            r->i++;
        }
    }
    *integral = 1;
    if (r->i < r->n && r->s[r->i] == '.') {
        *integral = 0;
        r->i++;
        if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9')
            return npl__jr_fail(r, "a bad number (no digit after '.')");
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(r->s[r->i] - '0');
                ndig += mant != 0;
                exp10--;
            }
            r->i++;
        }
    }
    if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        *integral = 0;
        r->i++;
        int eneg = 0, e = 0;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-'))
            eneg = r->s[r->i++] == '-';
        if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9')
            return npl__jr_fail(r, "a bad number (no exponent digits)");
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            if (e < 100000)
                e = e * 10 + (r->s[r->i] - '0');
            r->i++;
        }
        exp10 += eneg ? -e : e;
    }
    if (r->i - start > 64)
        return npl__jr_fail(r, "a number of more than 64 characters");
    exp10 += dropped;
    if (exp10 > 300 || exp10 < -300)
        return npl__jr_fail(r, "an absurd number (exponent %d)", exp10);
    double d = (double)mant;
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int e = exp10;
    while (e > 0) {
        int k = e > 22 ? 22 : e;
        d *= p10[k];
        e -= k;
    }
    while (e < 0) {
        int k = -e > 22 ? 22 : -e;
        d /= p10[k];
        e += k;
    }
    if (!isfinite(d))
        return npl__jr_fail(r, "an absurd number");
    *v = *neg ? -d : d;
    *u = big ? UINT64_MAX : mant;
    return 0;
}

/* An integer in [min, max] (min >= -1). */
int npl__jr_integer(struct npl__jr *r, int64_t min, uint64_t max, int64_t *out)
{
    double d;
    int integral, neg;
    uint64_t u;
    if (number(r, &d, &integral, &u, &neg) < 0)
        return -1;
    if (!integral)
        return npl__jr_fail(r, "expected an integer, found %g", d);
    if (neg) {
        if (u == 0) {
            *out = 0;
            return 0;
        }
        if (min >= 0 || u > (uint64_t)-min)
            return npl__jr_fail(r, "%s%llu is out of range (%lld..%llu)", "-", (unsigned long long)u,
                           (long long)min, (unsigned long long)max);
        *out = -(int64_t)u;
        return 0;
    }
    if (u > max || (min > 0 && u < (uint64_t)min))
        return npl__jr_fail(r, "%s%llu is out of range (%lld..%llu)", u == UINT64_MAX ? ">" : "",
                       (unsigned long long)u, (long long)min, (unsigned long long)max);
    *out = (int64_t)u;
    return 0;
}

int npl__jr_u64(struct npl__jr *r, uint64_t max, uint64_t *out)
{
    int64_t v = 0;
    if (npl__jr_integer(r, 0, max, &v) < 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int npl__jr_real(struct npl__jr *r, double min, double max, double *out)
{
    int integral, neg;
    uint64_t u;
    if (number(r, out, &integral, &u, &neg) < 0)
        return -1;
    if (*out < min || *out > max)
        return npl__jr_fail(r, "%g is out of range (%g..%g)", *out, min, max);
    return 0;
}

int npl__jr_boolean(struct npl__jr *r, int *out)
{
    int c = npl__jr_peek(r);
    if (c == 't') {
        *out = 1;
        return literal(r, "true");
    }
    if (c == 'f') {
        *out = 0;
        return literal(r, "false");
    }
    return npl__jr_fail(r, "expected true or false, found %s", npl__jr_what_next(r));
}

int npl__jr_enter(struct npl__jr *r, char open, const char *what)
{
    if (expect(r, open, what) < 0)
        return -1;
    if (++r->depth > NPL_PROF_MAX_DEPTH)
        return npl__jr_fail(r, "nesting deeper than %d levels", NPL_PROF_MAX_DEPTH);
    return 0;
}

/* Members of an object: 1 and the key (keys longer than ksize are reported), 0 at its end. */
int npl__jr_obj_next(struct npl__jr *r, int *first, char *key, size_t ksize)
{
    int c = npl__jr_peek(r);
    if (c == '}') {
        r->i++;
        r->depth--;
        return 0;
    }
    if (!*first && expect(r, ',', "',' or '}'") < 0)
        return -1;
    if (*first && c != '"')
        return npl__jr_fail(r, "expected a member name or '}', found %s", npl__jr_what_next(r));
    *first = 0;
    char *k = NULL;
    if (npl__jr_string(r, &k) < 0)
        return -1;
    snprintf(key, ksize, "%s", k);
    int toolong = strlen(k) >= ksize;
    free(k);
    if (toolong)
        return npl__jr_fail(r, "unknown member (a name of more than %zu bytes)", ksize - 1);
    if (expect(r, ':', "':'") < 0)
        return -1;
    return 1;
}

/* Elements of an array: 1 when another one follows, 0 at its end. */
int npl__jr_arr_next(struct npl__jr *r, int *first)
{
    int c = npl__jr_peek(r);
    if (c == ']') {
        r->i++;
        r->depth--;
        return 0;
    }
    if (!*first && expect(r, ',', "',' or ']'") < 0)
        return -1;
    if (*first && c == -1)
        return npl__jr_fail(r, "an array that does not end (truncated?)");
    *first = 0;
    return 1;
}

int npl__jr_skip_value(struct npl__jr *r)
{
    int c = npl__jr_peek(r), first = 1, k;
    char key[64];
    switch (c) {
    case '{':
        if (npl__jr_enter(r, '{', "an object") < 0)
            return -1;
        while ((k = npl__jr_obj_next(r, &first, key, sizeof key)) == 1)
            if (npl__jr_skip_value(r) < 0)
                return -1;
        return k;
    case '[':
        if (npl__jr_enter(r, '[', "an array") < 0)
            return -1;
        while ((k = npl__jr_arr_next(r, &first)) == 1)
            if (npl__jr_skip_value(r) < 0)
                return -1;
        return k;
    case '"':
        return npl__jr_string(r, NULL);
    case 't': case 'f': {
        int b;
        return npl__jr_boolean(r, &b);
    }
    case 'n':
        return literal(r, "null");
    default: {
        double d;
        int integral, neg;
        uint64_t u;
        return number(r, &d, &integral, &u, &neg);
    }
    }
}

int npl__jr_member(struct npl__jr *r, struct npl__jr_members *m, const char *key, int *idx)
{
    *idx = -1;
    for (int i = 0; m->names[i]; i++)
        if (!strcmp(key, m->names[i])) {
            if (m->seen & (1u << i))
                return npl__jr_fail(r, "member \"%s\" given twice", key);
            m->seen |= 1u << i;
            *idx = i;
            return 0;
        }
    return npl__jr_fail(r, "unknown member \"%.64s\"", key);
}

int npl__jr_require(struct npl__jr *r, const struct npl__jr_members *m, unsigned required)
{
    for (int i = 0; m->names[i]; i++)
        if ((required & (1u << i)) && !(m->seen & (1u << i)))
            return npl__jr_fail(r, "member \"%s\" is missing", m->names[i]);
    return 0;
}

/* A string or null. */
int npl__jr_opt_string(struct npl__jr *r, char **out)
{
    int nul = npl__jr_is_null(r);
    if (nul)
        return nul < 0 ? -1 : 0;
    return npl__jr_string(r, out);
}

/* A JSON array of records: each read by one(r, item, ctx) into a zeroed item of `size` bytes,
 * appended to *items (grown by doubling) and counted in *n before it is read (so that what a
 * failed record already holds is freed with the others); more than max: an error naming what. */
int npl__jr_list_of(struct npl__jr *r, void **items, size_t *n, size_t size, size_t max,
                    const char *what, npl__jr_item_fn one, const void *ctx)
{
    if (npl__jr_enter(r, '[', "an array") < 0)
        return -1;
    size_t cap = *n;
    int first = 1, k;
    while ((k = npl__jr_arr_next(r, &first)) == 1) {
        if (*n >= max)
            return npl__jr_fail(r, "more than %zu %s", max, what);
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            void *g = realloc(*items, cap * size);
            if (!g)
                return npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
            *items = g;
        }
        void *item = (char *)*items + *n * size;
        memset(item, 0, size);
        size_t old = npl__jr_push_index(r, *n);
        (*n)++;
        int rc = one(r, item, ctx);
        npl__jr_pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k;
}

/* An array of integers in [min, max]: *out malloc'ed (NULL when empty), *n entries. */
static int int_list_(struct npl__jr *r, int64_t min, uint64_t max, uint64_t maxn, int64_t **out,
                     uint64_t *n);
/* (on failure *out is freed and NULL) */
int npl__jr_int_list(struct npl__jr *r, int64_t min, uint64_t max, uint64_t maxn,
                     int64_t **out, uint64_t *n)
{
    int rc = int_list_(r, min, max, maxn, out, n);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

struct int_range {
    int64_t min;
    uint64_t max;
};
static int int_item(struct npl__jr *r, void *item, const void *ctx)
{
    const struct int_range *g = ctx;
    return npl__jr_integer(r, g->min, g->max, item);
}

static int int_list_(struct npl__jr *r, int64_t min, uint64_t max, uint64_t maxn, int64_t **out,
                     uint64_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cnt = 0;
    void *items = NULL;
    struct int_range g = {min, max};
    int k = npl__jr_list_of(r, &items, &cnt, sizeof **out, (size_t)maxn, "entries", int_item, &g);
    *out = items;
    *n = cnt;
    return k;
}

/* ==== the writer ==== */

static void sb_put(struct npl__jw *b, const char *s, size_t k)
{
    if (b->oom)
        return;
    if (b->n + k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + k + 1)
            cap *= 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
}

void npl__jw_s(struct npl__jw *b, const char *s) { sb_put(b, s, strlen(s)); }

void npl__jw_u(struct npl__jw *b, uint64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    sb_put(b, t, (size_t)k);
}

void npl__jw_i(struct npl__jw *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%lld", (long long)v);
    sb_put(b, t, (size_t)k);
}

/* A non-negative number with at most 6 decimals, without the locale. */
void npl__jw_real(struct npl__jw *b, double v)
{
    if (!(v >= 0) || v > 1e12)
        v = 0;
    uint64_t scaled = (uint64_t)(v * 1e6 + 0.5), ip = scaled / 1000000, fp = scaled % 1000000;
    npl__jw_u(b, ip);
    if (fp) {
        char t[8];
        snprintf(t, sizeof t, "%06llu", (unsigned long long)fp);
        size_t k = 6;
        while (k > 0 && t[k - 1] == '0')
            k--;
        npl__jw_s(b, ".");
        sb_put(b, t, k);
    }
}

/* A JSON string; invalid UTF-8 becomes U+FFFD, so the output always parses. */
void npl__jw_str(struct npl__jw *b, const char *s)
{
    if (!s) {
        npl__jw_s(b, "null");
        return;
    }
    npl__jw_s(b, "\"");
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char t[2] = {'\\', (char)c};
            sb_put(b, t, 2);
            i++;
        } else if (c < 0x20) {
            char t[8];
            snprintf(t, sizeof t, "\\u%04x", c);
            npl__jw_s(b, t);
            i++;
        } else {
            size_t k = npl__utf8_len((const unsigned char *)s + i, n - i);
            if (k) {
                sb_put(b, s + i, k);
                i += k;
            } else {
                npl__jw_s(b, "\xEF\xBF\xBD");
                i++;
            }
        }
    }
    npl__jw_s(b, "\"");
}

void npl__jw_ints(struct npl__jw *b, const int *v, uint64_t n)
{
    npl__jw_s(b, "[");
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            npl__jw_s(b, i % 32 ? ", " : ",\n    ");
        npl__jw_i(b, v[i]);
    }
    npl__jw_s(b, "]");
}
