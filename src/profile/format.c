/* format.c - the profile format v1 (docs/AUTO.md, docs/schema/profile.schema.json): a strict
 * reader and a writer, with no JSON library.
 *
 * The reader is a pull parser that fills struct npl_profile directly (a sample row costs 32
 * bytes, not a tree of JSON nodes), in any member order. It accepts exactly the schema: unknown
 * members are errors (except inside "extra", skipped), so is every wrong type, missing member,
 * duplicate member, number that is not an integer where one is needed, value beyond the limits
 * of profile.h, invalid UTF-8, NUL in a string, nesting deeper than NPL_PROF_MAX_DEPTH, and any
 * cross reference that does not hold (a chunk past nchunks, an unknown phase or thread, a node the
 * machine lacks). Each message names the member ("arrays[2].samples[7][1]") and the byte offset.
 * Numbers are read and written without the C library's locale (a program's setlocale must not
 * turn "0.5" into "0,5"). */
#define _GNU_SOURCE
#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
#ifdef NPL_BUILDING
    npl__fail(errnum, "%s", msg);
#endif
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

/* ==== the reader ==== */

struct rd {
    const char *s;
    size_t n, i;
    int depth;
    char path[320];
    size_t plen;
    char *err;
    size_t errsz;
    int failed;
    int whole; /* checking the whole profile: no byte offset to name */
};

__attribute__((format(printf, 2, 3))) static int rd_fail(struct rd *r, const char *fmt, ...)
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

static size_t push_key(struct rd *r, const char *key)
{
    size_t old = r->plen;
    int k = snprintf(r->path + r->plen, sizeof r->path - r->plen, "%s%s", r->plen ? "." : "", key);
    if (k > 0)
        r->plen = r->plen + (size_t)k < sizeof r->path ? r->plen + (size_t)k : sizeof r->path - 1;
    return old;
}

static size_t push_index(struct rd *r, size_t idx)
{
    size_t old = r->plen;
    int k = snprintf(r->path + r->plen, sizeof r->path - r->plen, "[%zu]", idx);
    if (k > 0)
        r->plen = r->plen + (size_t)k < sizeof r->path ? r->plen + (size_t)k : sizeof r->path - 1;
    return old;
}

static void pop(struct rd *r, size_t old)
{
    r->plen = old;
    r->path[old] = 0;
}

static void ws(struct rd *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
        r->i++;
}

static int peek(struct rd *r)
{
    ws(r);
    return r->i < r->n ? (unsigned char)r->s[r->i] : -1;
}

/* what the next value is (at r->i, after blanks), for messages */
static const char *what_next(const struct rd *r)
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

static int expect(struct rd *r, char c, const char *what)
{
    int p = peek(r);
    if (p != (unsigned char)c)
        return rd_fail(r, "expected %s, found %s", what, what_next(r));
    r->i++;
    return 0;
}

static int literal(struct rd *r, const char *lit)
{
    size_t k = strlen(lit);
    if (r->n - r->i < k || memcmp(r->s + r->i, lit, k))
        return rd_fail(r, "not JSON (a bad literal)");
    r->i += k;
    return 0;
}

static int is_null(struct rd *r)
{
    if (peek(r) != 'n')
        return 0;
    return literal(r, "null") == 0 ? 1 : -1;
}

static int hex4(struct rd *r, unsigned *v)
{
    if (r->n - r->i < 4)
        return rd_fail(r, "a truncated \\u escape");
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->i++];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return rd_fail(r, "a bad \\u escape");
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

/* length of a valid UTF-8 sequence at s (n bytes left), 0 if invalid */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { k = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { k = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 4; cp = c & 0x07; }
    else return 0;
    if (n < k)
        return 0;
    for (size_t j = 1; j < k; j++) {
        if ((s[j] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[j] & 0x3F);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return k;
}

/* A string into a malloc'ed NUL-terminated buffer (out NULL: skipped). */
static int string(struct rd *r, char **out)
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
            return rd_fail(r, "a string that does not end (truncated?)");
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
            return rd_fail(r, "a control character in a string");
        }
        if (c == '\\') {
            r->i++;
            if (r->i >= r->n) {
                free(buf);
                return rd_fail(r, "a string that does not end (truncated?)");
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
                        return rd_fail(r, "a lone surrogate in a \\u escape");
                    }
                    r->i += 2;
                    if (hex4(r, &lo) < 0) {
                        free(buf);
                        return -1;
                    }
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf);
                        return rd_fail(r, "a lone surrogate in a \\u escape");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(buf);
                    return rd_fail(r, "a lone surrogate in a \\u escape");
                }
                if (cp == 0) {
                    free(buf);
                    return rd_fail(r, "a NUL character (\\u0000) in a string");
                }
                k = put_utf8(tmp, cp);
                break;
            default:
                free(buf);
                return rd_fail(r, "a bad escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
            }
        } else {
            k = utf8_len((const unsigned char *)r->s + r->i, r->n - r->i);
            if (!k) {
                free(buf);
                return rd_fail(r, "invalid UTF-8 in a string");
            }
            memcpy(tmp, r->s + r->i, k);
            r->i += k;
        }
        if (len + k > NPL_PROF_MAX_STRING) {
            free(buf);
            return rd_fail(r, "a string longer than %d bytes", NPL_PROF_MAX_STRING);
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
static int number(struct rd *r, double *v, int *integral, uint64_t *u, int *neg)
{
    int c = peek(r);
    if (c != '-' && (c < '0' || c > '9'))
        return rd_fail(r, "expected a number, found %s", what_next(r));
    size_t start = r->i;
    *neg = 0;
    if (r->s[r->i] == '-') {
        *neg = 1;
        r->i++;
    }
    if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9')
        return rd_fail(r, "a bad number");
    uint64_t mant = 0;
    int ndig = 0, dropped = 0, exp10 = 0, big = 0;
    if (r->s[r->i] == '0') {
        r->i++;
        if (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
            return rd_fail(r, "a number with a leading zero");
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
            return rd_fail(r, "a bad number (no digit after '.')");
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
            return rd_fail(r, "a bad number (no exponent digits)");
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            if (e < 100000)
                e = e * 10 + (r->s[r->i] - '0');
            r->i++;
        }
        exp10 += eneg ? -e : e;
    }
    if (r->i - start > 64)
        return rd_fail(r, "a number of more than 64 characters");
    exp10 += dropped;
    if (exp10 > 300 || exp10 < -300)
        return rd_fail(r, "an absurd number (exponent %d)", exp10);
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
        return rd_fail(r, "an absurd number");
    *v = *neg ? -d : d;
    *u = big ? UINT64_MAX : mant;
    return 0;
}

/* An integer in [min, max] (min >= -1). */
static int integer(struct rd *r, int64_t min, uint64_t max, int64_t *out)
{
    double d;
    int integral, neg;
    uint64_t u;
    if (number(r, &d, &integral, &u, &neg) < 0)
        return -1;
    if (!integral)
        return rd_fail(r, "expected an integer, found %g", d);
    if (neg) {
        if (u == 0) {
            *out = 0;
            return 0;
        }
        if (min >= 0 || u > (uint64_t)-min)
            return rd_fail(r, "%s%llu is out of range (%lld..%llu)", "-", (unsigned long long)u,
                           (long long)min, (unsigned long long)max);
        *out = -(int64_t)u;
        return 0;
    }
    if (u > max || (min > 0 && u < (uint64_t)min))
        return rd_fail(r, "%s%llu is out of range (%lld..%llu)", u == UINT64_MAX ? ">" : "",
                       (unsigned long long)u, (long long)min, (unsigned long long)max);
    *out = (int64_t)u;
    return 0;
}

static int u64(struct rd *r, uint64_t max, uint64_t *out)
{
    int64_t v;
    if (integer(r, 0, max, &v) < 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int real(struct rd *r, double min, double max, double *out)
{
    int integral, neg;
    uint64_t u;
    if (number(r, out, &integral, &u, &neg) < 0)
        return -1;
    if (*out < min || *out > max)
        return rd_fail(r, "%g is out of range (%g..%g)", *out, min, max);
    return 0;
}

static int boolean(struct rd *r, int *out)
{
    int c = peek(r);
    if (c == 't') {
        *out = 1;
        return literal(r, "true");
    }
    if (c == 'f') {
        *out = 0;
        return literal(r, "false");
    }
    return rd_fail(r, "expected true or false, found %s", what_next(r));
}

static int skip_value(struct rd *r);

static int enter(struct rd *r, char open, const char *what)
{
    if (expect(r, open, what) < 0)
        return -1;
    if (++r->depth > NPL_PROF_MAX_DEPTH)
        return rd_fail(r, "nesting deeper than %d levels", NPL_PROF_MAX_DEPTH);
    return 0;
}

/* Members of an object: 1 and the key (keys longer than ksize are reported), 0 at its end. */
static int obj_next(struct rd *r, int *first, char *key, size_t ksize)
{
    int c = peek(r);
    if (c == '}') {
        r->i++;
        r->depth--;
        return 0;
    }
    if (!*first && expect(r, ',', "',' or '}'") < 0)
        return -1;
    if (*first && c != '"')
        return rd_fail(r, "expected a member name or '}', found %s", what_next(r));
    *first = 0;
    char *k = NULL;
    if (string(r, &k) < 0)
        return -1;
    snprintf(key, ksize, "%s", k);
    int toolong = strlen(k) >= ksize;
    free(k);
    if (toolong)
        return rd_fail(r, "unknown member (a name of more than %zu bytes)", ksize - 1);
    if (expect(r, ':', "':'") < 0)
        return -1;
    return 1;
}

/* Elements of an array: 1 when another one follows, 0 at its end. */
static int arr_next(struct rd *r, int *first)
{
    int c = peek(r);
    if (c == ']') {
        r->i++;
        r->depth--;
        return 0;
    }
    if (!*first && expect(r, ',', "',' or ']'") < 0)
        return -1;
    if (*first && c == -1)
        return rd_fail(r, "an array that does not end (truncated?)");
    *first = 0;
    return 1;
}

static int skip_value(struct rd *r)
{
    int c = peek(r), first = 1, k;
    char key[64];
    switch (c) {
    case '{':
        if (enter(r, '{', "an object") < 0)
            return -1;
        while ((k = obj_next(r, &first, key, sizeof key)) == 1)
            if (skip_value(r) < 0)
                return -1;
        return k;
    case '[':
        if (enter(r, '[', "an array") < 0)
            return -1;
        while ((k = arr_next(r, &first)) == 1)
            if (skip_value(r) < 0)
                return -1;
        return k;
    case '"':
        return string(r, NULL);
    case 't': case 'f': {
        int b;
        return boolean(r, &b);
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

/* Duplicate and required members: one bit per known member name of an object. */
struct members {
    const char *const *names;
    unsigned seen;
};

static int member(struct rd *r, struct members *m, const char *key, int *idx)
{
    *idx = -1;
    for (int i = 0; m->names[i]; i++)
        if (!strcmp(key, m->names[i])) {
            if (m->seen & (1u << i))
                return rd_fail(r, "member \"%s\" given twice", key);
            m->seen |= 1u << i;
            *idx = i;
            return 0;
        }
    return rd_fail(r, "unknown member \"%.64s\"", key);
}

static int require(struct rd *r, const struct members *m, unsigned required)
{
    for (int i = 0; m->names[i]; i++)
        if ((required & (1u << i)) && !(m->seen & (1u << i)))
            return rd_fail(r, "member \"%s\" is missing", m->names[i]);
    return 0;
}

/* A string or null. */
static int opt_string(struct rd *r, char **out)
{
    int nul = is_null(r);
    if (nul)
        return nul < 0 ? -1 : 0;
    return string(r, out);
}

static int hex_string(struct rd *r, char **out)
{
    if (opt_string(r, out) < 0)
        return -1;
    if (!*out)
        return 0;
    size_t n = strlen(*out);
    if (n == 0 || n > 128 || n % 2)
        return rd_fail(r, "a build-id is 2 to 128 hexadecimal digits, an even number");
    for (size_t i = 0; i < n; i++)
        if (!((*out)[i] >= '0' && (*out)[i] <= '9') && !((*out)[i] >= 'a' && (*out)[i] <= 'f'))
            return rd_fail(r, "a build-id is lower-case hexadecimal");
    return 0;
}

/* A JSON array of records: each read by one(r, item, ctx) into a zeroed item of `size` bytes,
 * appended to *items (grown by doubling) and counted in *n before it is read (so that what a
 * failed record already holds is freed with the others); more than max: an error naming what. */
typedef int (*item_fn)(struct rd *r, void *item, const void *ctx);
static int list_of(struct rd *r, void **items, size_t *n, size_t size, size_t max,
                   const char *what, item_fn one, const void *ctx)
{
    if (enter(r, '[', "an array") < 0)
        return -1;
    size_t cap = *n;
    int first = 1, k;
    while ((k = arr_next(r, &first)) == 1) {
        if (*n >= max)
            return rd_fail(r, "more than %zu %s", max, what);
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            void *g = realloc(*items, cap * size);
            if (!g)
                return npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
            *items = g;
        }
        void *item = (char *)*items + *n * size;
        memset(item, 0, size);
        size_t old = push_index(r, *n);
        (*n)++;
        int rc = one(r, item, ctx);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k;
}

/* An array of integers in [min, max]: *out malloc'ed (NULL when empty), *n entries. */
static int int_list_(struct rd *r, int64_t min, uint64_t max, uint64_t maxn, int64_t **out,
                     uint64_t *n);
/* (on failure *out is freed and NULL) */
static int int_list(struct rd *r, int64_t min, uint64_t max, uint64_t maxn, int64_t **out,
                    uint64_t *n)
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
static int int_item(struct rd *r, void *item, const void *ctx)
{
    const struct int_range *g = ctx;
    return integer(r, g->min, g->max, item);
}

static int int_list_(struct rd *r, int64_t min, uint64_t max, uint64_t maxn, int64_t **out,
                     uint64_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cnt = 0;
    void *items = NULL;
    struct int_range g = {min, max};
    int k = list_of(r, &items, &cnt, sizeof **out, (size_t)maxn, "entries", int_item, &g);
    *out = items;
    *n = cnt;
    return k;
}

static int site(struct rd *r, struct npl_prof_site *s)
{
    static const char *const names[] = {"object", "build_id", "offset", "ordinal", "kind",
                                        "symbol", "where", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object (a site)") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        char *kind = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = string(r, &s->object);
                if (rc == 0 && !s->object[0])
                    rc = rd_fail(r, "an empty object name");
                break;
            case 1: rc = hex_string(r, &s->build_id); break;
            case 2: rc = u64(r, UINT64_C(1) << 62, &s->offset); break;
            case 3: rc = u64(r, UINT64_C(1) << 40, &s->ordinal); break;
            case 4:
                rc = string(r, &kind);
                if (rc == 0) {
                    if (!strcmp(kind, "heap"))
                        s->kind = NPL_SITE_HEAP;
                    else if (!strcmp(kind, "static"))
                        s->kind = NPL_SITE_STATIC;
                    else
                        rc = rd_fail(r, "\"%.32s\" is not heap or static", kind);
                }
                break;
            case 5: rc = opt_string(r, &s->symbol); break;
            case 6: rc = opt_string(r, &s->where); break;
            }
        }
        free(kind);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0)
        return -1;
    return require(r, &m, 0x1f); /* symbol and where may be absent */
}

static int program(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"path", "build_id", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        if (rc == 0)
            rc = idx == 0 ? string(r, &p->program_path) : hex_string(r, &p->program_build_id);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0x3);
}

static int machine(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"nodes", "page_size", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        if (rc == 0 && idx == 0) {
            int64_t *v;
            uint64_t n;
            rc = int_list(r, 0, NPL_PROF_MAX_NODE_ID, NPL_PROF_MAX_NODES, &v, &n);
            if (rc == 0 && n == 0)
                rc = rd_fail(r, "no node");
            for (uint64_t i = 1; rc == 0 && i < n; i++)
                if (v[i] <= v[i - 1])
                    rc = rd_fail(r, "node ids must be distinct and ascending");
            if (rc == 0 && !(p->nodes = malloc((size_t)n * sizeof *p->nodes)))
                rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
            for (uint64_t i = 0; rc == 0 && i < n; i++)
                p->nodes[i] = (int)v[i];
            if (rc == 0)
                p->nnodes = (int)n;
            free(v);
        } else if (rc == 0) {
            rc = u64(r, UINT64_C(1) << 30, &p->page_size);
            if (rc == 0 && (p->page_size < 4096 || (p->page_size & (p->page_size - 1))))
                rc = rd_fail(r, "page size %llu is not a power of two of at least 4096",
                             (unsigned long long)p->page_size);
        }
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0x3);
}

static int int_vector(struct rd *r, int64_t min, uint64_t max, int **out, int *n)
{
    int64_t *v;
    uint64_t cnt;
    if (int_list(r, min, max, NPL_PROF_MAX_THREADS, &v, &cnt) < 0)
        return -1;
    *out = malloc((size_t)(cnt ? cnt : 1) * sizeof **out);
    if (!*out) {
        free(v);
        return npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
    }
    for (uint64_t i = 0; i < cnt; i++)
        (*out)[i] = (int)v[i];
    *n = (int)cnt;
    free(v);
    return 0;
}

static int binding(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"source", "detail", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        char *src = NULL;
        if (rc == 0 && idx == 0) {
            rc = string(r, &src);
            if (rc == 0) {
                if (!strcmp(src, "pin"))
                    p->binding = NPL_BIND_PIN;
                else if (!strcmp(src, "omp"))
                    p->binding = NPL_BIND_OMP;
                else if (!strcmp(src, "none"))
                    p->binding = NPL_BIND_NONE;
                else
                    rc = rd_fail(r, "\"%.32s\" is not pin, omp or none", src);
            }
        } else if (rc == 0) {
            rc = opt_string(r, &p->binding_detail);
        }
        free(src);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0x1);
}

static int run(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"threads", "thread_nodes", "thread_cpus", "binding", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx, nn = -1, nc = -1;
    int64_t threads = 0;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        if (rc == 0) {
            switch (idx) {
            case 0: rc = integer(r, 1, NPL_PROF_MAX_THREADS, &threads); break;
            case 1: rc = int_vector(r, 0, NPL_PROF_MAX_NODE_ID, &p->thread_nodes, &nn); break;
            case 2: {
                int nul = is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : int_vector(r, 0, 1 << 22, &p->thread_cpus, &nc);
                break;
            }
            case 3: rc = binding(r, p); break;
            }
        }
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || require(r, &m, 0xb) < 0)
        return -1;
    p->threads = (int)threads;
    if (nn != p->threads)
        return rd_fail(r, "thread_nodes has %d entries for %d threads", nn, p->threads);
    if (p->thread_cpus && nc != p->threads)
        return rd_fail(r, "thread_cpus has %d entries for %d threads", nc, p->threads);
    return 0;
}

/* "measured": {"local": N, "remote": N, "unknown": N}, all three required */
static int measured(struct rd *r, uint64_t out[3])
{
    static const char *const names[] = {"local", "remote", "unknown", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        if (rc == 0)
            rc = u64(r, UINT64_C(1) << 62, &out[idx]);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0x7);
}

static int sampling(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"backend", "rate", "samples", "seconds", "rw_known",
                                        "measured", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        char *b = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = string(r, &b);
                if (rc == 0) {
                    if (!strcmp(b, "fault"))
                        p->backend = NPL_BACKEND_FAULT;
                    else if (!strcmp(b, "perf"))
                        p->backend = NPL_BACKEND_PERF;
                    else
                        rc = rd_fail(r, "\"%.32s\" is not fault or perf", b);
                }
                break;
            case 1: rc = real(r, 0, 1e12, &p->rate); break;
            case 2: rc = u64(r, UINT64_C(1) << 62, &p->samples); break;
            case 3: rc = real(r, 0, 1e9, &p->seconds); break;
            case 4: rc = boolean(r, &p->rw_known); break;
            case 5:
                rc = measured(r, p->measured);
                p->has_measured = rc == 0;
                break;
            }
        }
        free(b);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0x1f);
}

static int phase(struct rd *r, struct npl_prof_phase *ph)
{
    static const char *const names[] = {"id", "kind", "site", "entries", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (enter(r, '{', "an object (a phase)") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        char *kind = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0: {
                uint64_t id = 0;
                rc = u64(r, UINT32_MAX, &id);
                ph->id = (uint32_t)id;
                break;
            }
            case 1:
                rc = string(r, &kind);
                if (rc == 0) {
                    if (!strcmp(kind, "region"))
                        ph->kind = NPL_PHASE_REGION;
                    else if (!strcmp(kind, "window"))
                        ph->kind = NPL_PHASE_WINDOW;
                    else
                        rc = rd_fail(r, "\"%.32s\" is not region or window", kind);
                }
                break;
            case 2: {
                int nul = is_null(r);
                if (nul)
                    rc = nul < 0 ? -1 : 0;
                else if (!(ph->site = calloc(1, sizeof *ph->site)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                else
                    rc = site(r, ph->site);
                break;
            }
            case 3: rc = u64(r, UINT64_C(1) << 62, &ph->entries); break;
            }
        }
        free(kind);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    return k < 0 ? -1 : require(r, &m, 0xf);
}

static int phase_item(struct rd *r, void *item, const void *ctx)
{
    (void)ctx;
    return phase(r, item);
}

/* list_of into a record array (itemsp: the address of its pointer) counted in a uint32_t */
static int list_u32(struct rd *r, void *itemsp, uint32_t *count, size_t size, size_t max,
                    const char *what, item_fn one)
{
    void *items;
    memcpy(&items, itemsp, sizeof items);
    size_t n = *count;
    int k = list_of(r, &items, &n, size, max, what, one, NULL);
    memcpy(itemsp, &items, sizeof items);
    *count = (uint32_t)n;
    return k;
}

static int phases(struct rd *r, struct npl_profile *p)
{
    return list_u32(r, &p->phases, &p->nphases, sizeof *p->phases, NPL_PROF_MAX_PHASES, "phases",
                    phase_item);
}

/* Rows of n integers: [[a, b, ...], ...], each value <= max[j]. */
static int rows_(struct rd *r, int nmin, int n, const uint64_t *max, size_t maxrows,
                 uint64_t **out, size_t *nrows, int *width);
/* rows of n integers each (row i at (*out)[i * n]), or all of nmin (<= n; the rest 0): *width */
static int rows(struct rd *r, int nmin, int n, const uint64_t *max, size_t maxrows, uint64_t **out,
                size_t *nrows, int *width)
{
    int rc = rows_(r, nmin, n, max, maxrows, out, nrows, width);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* one row: up to n integers, each <= max[j], the rest 0; the first row sets the width (nmin or
 * n), every later row must have it */
struct row_shape {
    int nmin, n;
    const uint64_t *max;
    int *width;
    const size_t *nrows; /* rows counted so far, this one included */
};
static int row_item(struct rd *r, void *item, const void *ctx)
{
    const struct row_shape *g = ctx;
    uint64_t *row = item;
    if (enter(r, '[', "an array of integers") < 0)
        return -1;
    int f2 = 1, j = 0, k2;
    while ((k2 = arr_next(r, &f2)) == 1) {
        if (j >= g->n)
            return rd_fail(r, "more than %d values in a row", g->n);
        size_t o2 = push_index(r, (size_t)j);
        int rc = u64(r, g->max[j], &row[j]);
        pop(r, o2);
        if (rc < 0)
            return -1;
        j++;
    }
    if (k2 < 0)
        return -1;
    int first_row = *g->nrows == 1;
    if (first_row && j == g->nmin)
        *g->width = g->nmin;
    if (j != *g->width)
        return g->nmin < g->n && first_row
                   ? rd_fail(r, "%d values in a row, not %d or %d", j, g->nmin, g->n)
                   : rd_fail(r, "%d values in a row, not %d (as in the first row)", j, *g->width);
    return 0;
}

static int rows_(struct rd *r, int nmin, int n, const uint64_t *max, size_t maxrows,
                 uint64_t **out, size_t *nrows, int *width)
{
    *out = NULL;
    *nrows = 0;
    *width = n;
    void *items = NULL;
    struct row_shape g = {nmin, n, max, width, nrows};
    int k = list_of(r, &items, nrows, (size_t)n * sizeof **out, maxrows, "rows", row_item, &g);
    *out = items;
    return k;
}

static int advice(struct rd *r, struct npl_prof_advice *a, int *has_chunk_nodes)
{
    static const char *const names[] = {"pattern", "policy", "confidence", "local", "reason",
                                        "replicate", "next_touch_phases", "samples",
                                        "period_pages", "block_threads", "chunk_nodes", NULL};
    static const char *const lnames[] = {"policy", "first_touch", "best", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    memset(a, 0, sizeof *a);
    a->local_first_touch = -1;
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        char *s = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = string(r, &s);
                if (rc == 0 && (a->pattern = npl__pattern_parse(s)) < 0)
                    rc = rd_fail(r, "unknown pattern \"%.40s\"", s);
                break;
            case 1:
                rc = string(r, &s);
                if (rc == 0 && strlen(s) >= sizeof a->policy)
                    rc = rd_fail(r, "a policy string longer than %zu bytes", sizeof a->policy - 1);
                if (rc == 0 && strcmp(s, "explicit")) {
                    npl_policy *pol;
                    if (npl_policy_parse(&pol, s) < 0)
                        rc = rd_fail(r, "%s", npl_last_error());
                    else
                        npl_policy_free(pol);
                }
                if (rc == 0)
                    snprintf(a->policy, sizeof a->policy, "%s", s);
                break;
            case 2: rc = real(r, 0, 1, &a->confidence); break;
            case 3: {
                struct members lm = {lnames, 0};
                int f2 = 1, k2 = 0, li = 0;
                char lk[64];
                rc = enter(r, '{', "an object");
                while (rc == 0 && (k2 = obj_next(r, &f2, lk, sizeof lk)) == 1) {
                    size_t o2 = push_key(r, lk);
                    rc = member(r, &lm, lk, &li);
                    if (rc == 0 && li == 1) {
                        int nul = is_null(r);
                        rc = nul < 0 ? -1 : nul ? 0 : real(r, 0, 1, &a->local_first_touch);
                    } else if (rc == 0) {
                        rc = real(r, 0, 1, li == 0 ? &a->local_policy : &a->local_best);
                    }
                    pop(r, o2);
                }
                if (rc == 0 && k2 < 0)
                    rc = -1;
                if (rc == 0)
                    rc = require(r, &lm, 0x7);
                break;
            }
            case 4:
                rc = string(r, &s);
                if (rc == 0)
                    snprintf(a->reason, sizeof a->reason, "%s", s);
                break;
            case 5: rc = boolean(r, &a->replicate); break;
            case 6: {
                int64_t *v;
                uint64_t n;
                rc = int_list(r, 0, UINT32_MAX, NPL_PROF_MAX_PHASES, &v, &n);
                if (rc == 0 && n && !(a->next_touch = malloc((size_t)n * sizeof *a->next_touch)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (uint64_t i = 0; rc == 0 && i < n; i++)
                    a->next_touch[i] = (uint32_t)v[i];
                if (rc == 0)
                    a->nnext_touch = (uint32_t)n;
                free(v);
                break;
            }
            case 7: rc = u64(r, UINT64_C(1) << 62, &a->samples); break;
            case 8: {
                int nul = is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : u64(r, UINT64_C(1) << 40, &a->period_pages);
                break;
            }
            case 9: {
                int64_t t = 0;
                int nul = is_null(r);
                rc = nul < 0 ? -1 : nul ? 0 : integer(r, 1, NPL_PROF_MAX_THREADS, &t);
                a->block_threads = (int)t;
                break;
            }
            case 10: {
                int nul = is_null(r);
                if (nul) {
                    rc = nul < 0 ? -1 : 0;
                    break;
                }
                int64_t *v;
                uint64_t n;
                rc = int_list(r, -1, NPL_PROF_MAX_NODE_ID, NPL_PROF_MAX_CHUNKS, &v, &n);
                if (rc == 0 && !(a->chunk_nodes = malloc((size_t)(n ? n : 1) * sizeof(int))))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (uint64_t i = 0; rc == 0 && i < n; i++)
                    a->chunk_nodes[i] = (int)v[i];
                if (rc == 0) {
                    a->nchunk_nodes = n;
                    *has_chunk_nodes = 1;
                }
                free(v);
                break;
            }
            }
        }
        free(s);
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || require(r, &m, 0xff) < 0)
        return -1;
    if (!strcmp(a->policy, "explicit") && !*has_chunk_nodes)
        return rd_fail(r, "policy \"explicit\" needs chunk_nodes");
    if (strcmp(a->policy, "explicit") && *has_chunk_nodes)
        return rd_fail(r, "chunk_nodes belong to policy \"explicit\" only");
    return 0;
}

static int array(struct rd *r, struct npl_prof_array *a)
{
    static const char *const names[] = {"site", "bytes", "chunk_bytes", "nchunks", "first_touch",
                                        "samples", "advice", "measured", NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx, has_cn = 0, row_width = 5;
    uint64_t nft = 0;
    if (enter(r, '{', "an object (an array)") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = member(r, &m, key, &idx);
        if (rc == 0) {
            switch (idx) {
            case 0: rc = site(r, &a->site); break;
            case 1: rc = u64(r, NPL_PROF_MAX_BYTES, &a->bytes); break;
            case 2: rc = u64(r, NPL_PROF_MAX_BYTES, &a->chunk_bytes); break;
            case 3: rc = u64(r, NPL_PROF_MAX_CHUNKS, &a->nchunks); break;
            case 4: {
                int64_t *v;
                rc = int_list(r, -1, NPL_PROF_MAX_THREADS - 1, NPL_PROF_MAX_CHUNKS, &v, &nft);
                if (rc == 0 && !(a->first_touch = malloc((size_t)(nft ? nft : 1) * sizeof(int32_t))))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (uint64_t i = 0; rc == 0 && i < nft; i++)
                    a->first_touch[i] = (int32_t)v[i];
                free(v);
                break;
            }
            case 5: { /* [phase, chunk, thread, reads, writes] or [..., local, remote] */
                static const uint64_t max[7] = {UINT32_MAX, NPL_PROF_MAX_CHUNKS - 1,
                                                NPL_PROF_MAX_THREADS - 1, NPL_PROF_MAX_COUNT,
                                                NPL_PROF_MAX_COUNT, NPL_PROF_MAX_COUNT,
                                                NPL_PROF_MAX_COUNT};
                uint64_t *v;
                size_t n;
                rc = rows(r, 5, 7, max, NPL_PROF_MAX_SAMPLES, &v, &n, &row_width);
                if (rc == 0 && !(a->samples = malloc((n ? n : 1) * sizeof *a->samples)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (size_t i = 0; rc == 0 && i < n; i++) {
                    const uint64_t *x = &v[7 * i];
                    a->samples[i] = (struct npl_prof_sample){(uint32_t)x[0], (uint32_t)x[1],
                                                             (uint32_t)x[2], x[3], x[4], x[5], x[6]};
                }
                if (rc == 0)
                    a->nsamples = n;
                free(v);
                break;
            }
            case 6:
                rc = advice(r, &a->advice, &has_cn);
                a->has_advice = rc == 0;
                break;
            case 7:
                rc = measured(r, a->measured);
                a->has_measured = rc == 0;
                break;
            }
        }
        pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || require(r, &m, 0x3f) < 0)
        return -1;
    if (a->bytes == 0)
        return rd_fail(r, "bytes is 0");
    if (a->chunk_bytes == 0)
        return rd_fail(r, "chunk_bytes is 0");
    uint64_t want = a->bytes / a->chunk_bytes + (a->bytes % a->chunk_bytes != 0);
    if (a->nchunks != want)
        return rd_fail(r, "nchunks is %llu; %llu bytes in chunks of %llu make %llu",
                       (unsigned long long)a->nchunks, (unsigned long long)a->bytes,
                       (unsigned long long)a->chunk_bytes, (unsigned long long)want);
    if (nft != a->nchunks)
        return rd_fail(r, "first_touch has %llu entries for %llu chunks", (unsigned long long)nft,
                       (unsigned long long)a->nchunks);
    if (has_cn && a->advice.nchunk_nodes != a->nchunks)
        return rd_fail(r, "advice.chunk_nodes has %llu entries for %llu chunks",
                       (unsigned long long)a->advice.nchunk_nodes, (unsigned long long)a->nchunks);
    /* a row's local and remote: some of its accesses; over the rows, some of the array's (a
     * sample whose row was dropped is counted in the array's total only) */
    uint64_t sum[2] = {0, 0};
    for (size_t s = 0; s < a->nsamples; s++) {
        const struct npl_prof_sample *x = &a->samples[s];
        if (x->local + x->remote > x->reads + x->writes)
            return rd_fail(r, "samples[%zu]: local + remote (%llu) exceed its accesses (%llu)", s,
                           (unsigned long long)(x->local + x->remote),
                           (unsigned long long)(x->reads + x->writes));
        sum[0] += x->local;
        sum[1] += x->remote;
    }
    if (row_width == 7 && !a->has_measured)
        return rd_fail(r, "samples count local and remote accesses, but measured is missing");
    if (a->has_measured && (sum[0] > a->measured[NPL_MEASURED_LOCAL] ||
                            sum[1] > a->measured[NPL_MEASURED_REMOTE]))
        return rd_fail(r, "the samples count %llu local and %llu remote accesses, more than "
                          "measured (%llu, %llu)", (unsigned long long)sum[0],
                       (unsigned long long)sum[1],
                       (unsigned long long)a->measured[NPL_MEASURED_LOCAL],
                       (unsigned long long)a->measured[NPL_MEASURED_REMOTE]);
    return 0;
}

static int array_item(struct rd *r, void *item, const void *ctx)
{
    (void)ctx;
    return array(r, item);
}

static int arrays(struct rd *r, struct npl_profile *p)
{
    return list_u32(r, &p->arrays, &p->narrays, sizeof *p->arrays, NPL_PROF_MAX_ARRAYS, "arrays",
                    array_item);
}

static int node_known(const struct npl_profile *p, int node)
{
    for (int i = 0; i < p->nnodes; i++)
        if (p->nodes[i] == node)
            return 1;
    return 0;
}

static int phase_index(const struct npl_profile *p, uint32_t id)
{
    for (uint32_t i = 0; i < p->nphases; i++)
        if (p->phases[i].id == id)
            return (int)i;
    return -1;
}

/* Cross references, once every member is read (members come in any order). */
static int check_refs(struct rd *r, struct npl_profile *p)
{
    r->whole = 1;
    for (int t = 0; t < p->threads; t++)
        if (!node_known(p, p->thread_nodes[t])) {
            size_t o = push_key(r, "run.thread_nodes");
            push_index(r, (size_t)t);
            rd_fail(r, "node %d is not one of machine.nodes", p->thread_nodes[t]);
            pop(r, o);
            return -1;
        }
    for (uint32_t i = 0; i < p->nphases; i++)
        for (uint32_t j = 0; j < i; j++)
            if (p->phases[i].id == p->phases[j].id) {
                size_t o = push_key(r, "phases");
                push_index(r, i);
                rd_fail(r, "phase id %u given twice", p->phases[i].id);
                pop(r, o);
                return -1;
            }
    for (uint32_t i = 0; i < p->ntransitions; i++) {
        /* transitions were read as ids: turn them into indexes */
        int f = phase_index(p, p->transitions[i].from), t = phase_index(p, p->transitions[i].to);
        if (f < 0 || t < 0) {
            size_t o = push_key(r, "transitions");
            push_index(r, i);
            rd_fail(r, "phase %u is not in phases", f < 0 ? p->transitions[i].from : p->transitions[i].to);
            pop(r, o);
            return -1;
        }
        p->transitions[i].from = (uint32_t)f;
        p->transitions[i].to = (uint32_t)t;
    }
    for (uint32_t ai = 0; ai < p->narrays; ai++) {
        struct npl_prof_array *a = &p->arrays[ai];
        size_t o = push_key(r, "arrays");
        push_index(r, ai);
        int rc = 0;
        if (a->chunk_bytes % p->page_size)
            rc = rd_fail(r, "chunk_bytes %llu is not a multiple of the page size %llu",
                         (unsigned long long)a->chunk_bytes, (unsigned long long)p->page_size);
        for (uint64_t c = 0; rc == 0 && c < a->nchunks; c++)
            if (a->first_touch[c] >= p->threads) {
                push_key(r, "first_touch");
                push_index(r, c);
                rc = rd_fail(r, "thread %d is not one of the run's %d threads", a->first_touch[c],
                             p->threads);
            }
        for (size_t s = 0; rc == 0 && s < a->nsamples; s++) {
            struct npl_prof_sample *x = &a->samples[s];
            int ph = phase_index(p, x->phase);
            const char *bad = ph < 0 ? "its phase is not in phases"
                              : x->chunk >= a->nchunks ? "its chunk is past nchunks"
                              : x->thread >= (uint32_t)p->threads ? "its thread is not one of the run's"
                              : x->reads + x->writes == 0 ? "it counts no access" : NULL;
            if (bad) {
                push_key(r, "samples");
                push_index(r, s);
                rc = rd_fail(r, "%s", bad);
            }
            x->phase = (uint32_t)ph;
        }
        if (rc == 0 && a->has_advice) {
            push_key(r, "advice");
            for (uint32_t i = 0; rc == 0 && i < a->advice.nnext_touch; i++)
                if (phase_index(p, a->advice.next_touch[i]) < 0)
                    rc = rd_fail(r, "next_touch_phases: phase %u is not in phases",
                                 a->advice.next_touch[i]);
            for (uint64_t c = 0; rc == 0 && c < a->advice.nchunk_nodes; c++)
                if (a->advice.chunk_nodes[c] >= 0 && !node_known(p, a->advice.chunk_nodes[c]))
                    rc = rd_fail(r, "chunk_nodes: node %d is not one of machine.nodes",
                                 a->advice.chunk_nodes[c]);
        }
        pop(r, o);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int top(struct rd *r, struct npl_profile *p)
{
    static const char *const names[] = {"format", "version", "program", "machine", "run",
                                        "sampling", "phases", "transitions", "arrays", "extra",
                                        NULL};
    struct members m = {names, 0};
    char key[64];
    int first = 1, k, idx;
    if (peek(r) != '{')
        return rd_fail(r, "not a numaplace profile: expected a JSON object, found %s",
                       what_next(r));
    if (enter(r, '{', "an object") < 0)
        return -1;
    while ((k = obj_next(r, &first, key, sizeof key)) == 1) {
        size_t old = push_key(r, key);
        int rc = 0;
        for (idx = 0; names[idx] && strcmp(names[idx], key); idx++)
            ;
        if (!names[idx]) {
            pop(r, old);
            return rd_fail(r, "not a numaplace profile: unknown member \"%.64s\"", key);
        }
        rc = member(r, &m, key, &idx);
        char *s = NULL;
        if (rc == 0) {
            switch (idx) {
            case 0:
                rc = string(r, &s);
                if (rc == 0 && strcmp(s, "numaplace-profile")) {
                    pop(r, old);
                    rc = rd_fail(r, "not a numaplace profile: format \"%.64s\"", s);
                }
                break;
            case 1: {
                int64_t v;
                rc = integer(r, 0, 1u << 30, &v);
                if (rc == 0 && v != 1)
                    rc = rd_fail(r, "profile version %lld is not supported (this numaplace reads "
                                    "version 1)", (long long)v);
                break;
            }
            case 2: rc = program(r, p); break;
            case 3: rc = machine(r, p); break;
            case 4: rc = run(r, p); break;
            case 5: rc = sampling(r, p); break;
            case 6: rc = phases(r, p); break;
            case 7: {
                static const uint64_t max[3] = {UINT32_MAX, UINT32_MAX, UINT64_C(1) << 62};
                uint64_t *v;
                size_t n;
                int width;
                rc = rows(r, 3, 3, max, NPL_PROF_MAX_TRANSITIONS, &v, &n, &width);
                if (rc == 0 && !(p->transitions = malloc((n ? n : 1) * sizeof *p->transitions)))
                    rc = npl__prof_fail(r->err, r->errsz, ENOMEM, "profile: out of memory");
                for (size_t i = 0; rc == 0 && i < n; i++)
                    p->transitions[i] = (struct npl_prof_transition){(uint32_t)v[3 * i],
                                                                     (uint32_t)v[3 * i + 1], v[3 * i + 2]};
                if (rc == 0)
                    p->ntransitions = (uint32_t)n;
                free(v);
                break;
            }
            case 8: rc = arrays(r, p); break;
            case 9:
                if (peek(r) != '{')
                    rc = rd_fail(r, "expected an object, found %s", what_next(r));
                else
                    rc = skip_value(r);
                break;
            }
        }
        free(s);
        if (r->plen > old)
            pop(r, old);
        if (rc < 0)
            return -1;
    }
    if (k < 0 || require(r, &m, 0x17f) < 0)
        return -1;
    if (peek(r) != -1)
        return rd_fail(r, "text after the profile's object");
    return check_refs(r, p);
}

int npl__profile_parse(const char *text, size_t len, struct npl_profile **out, char *err,
                       size_t errsz)
{
    if (!out || (!text && len))
        return npl__prof_fail(err, errsz, EINVAL, "profile: NULL argument");
    *out = NULL;
    if (len > NPL_PROF_MAX_TEXT)
        return npl__prof_fail(err, errsz, EINVAL, "profile: %zu bytes, more than the %zu MiB a "
                              "profile may have", len, NPL_PROF_MAX_TEXT >> 20);
    struct npl_profile *p = calloc(1, sizeof *p);
    if (!p)
        return npl__prof_fail(err, errsz, ENOMEM, "profile: out of memory");
    struct rd r = {.s = text ? text : "", .n = len, .err = err, .errsz = errsz};
    if (len == 0) {
        free(p);
        return npl__prof_fail(err, errsz, EINVAL, "profile: empty");
    }
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        r.i = 3; /* a UTF-8 byte order mark */
    if (top(&r, p) < 0) {
        int e = errno;
        npl__profile_free(p);
        errno = e;
        return -1;
    }
    *out = p;
    return 0;
}

int npl__profile_load(const char *path, struct npl_profile **out, char *err, size_t errsz)
{
    if (!path || !out)
        return npl__prof_fail(err, errsz, EINVAL, "profile: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return npl__prof_fail(err, errsz, errno, "profile %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        close(fd);
        return npl__prof_fail(err, errsz, e, "profile %s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > NPL_PROF_MAX_TEXT) {
        close(fd);
        return npl__prof_fail(err, errsz, EFBIG, "profile %s: %lld bytes, more than %zu MiB", path,
                              (long long)st.st_size, NPL_PROF_MAX_TEXT >> 20);
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return npl__prof_fail(err, errsz, ENOMEM, "profile %s: out of memory", path);
    }
    for (;;) {
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return npl__prof_fail(err, errsz, e, "profile %s: %s", path, strerror(e));
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (n == cap) { /* the file grew */
            free(buf);
            close(fd);
            return npl__prof_fail(err, errsz, EINVAL, "profile %s: changed while read", path);
        }
    }
    close(fd);
    char msg[640];
    int rc = npl__profile_parse(buf, n, out, msg, sizeof msg);
    int e = errno;
    free(buf);
    if (rc < 0)
        return npl__prof_fail(err, errsz, e, "%s: %s", path, msg);
    return 0;
}

static void site_free(struct npl_prof_site *s)
{
    free(s->object);
    free(s->build_id);
    free(s->symbol);
    free(s->where);
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

void npl__profile_free(struct npl_profile *p)
{
    if (!p)
        return;
    free(p->program_path);
    free(p->program_build_id);
    free(p->nodes);
    free(p->thread_nodes);
    free(p->thread_cpus);
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

/* ==== the writer ==== */

struct sb {
    char *p;
    size_t n, cap;
    int oom;
};

static void sb_put(struct sb *b, const char *s, size_t k)
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

static void sb_s(struct sb *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_u(struct sb *b, uint64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    sb_put(b, t, (size_t)k);
}

static void sb_i(struct sb *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%lld", (long long)v);
    sb_put(b, t, (size_t)k);
}

/* A non-negative number with at most 6 decimals, without the locale. */
static void sb_real(struct sb *b, double v)
{
    if (!(v >= 0) || v > 1e12)
        v = 0;
    uint64_t scaled = (uint64_t)(v * 1e6 + 0.5), ip = scaled / 1000000, fp = scaled % 1000000;
    sb_u(b, ip);
    if (fp) {
        char t[8];
        snprintf(t, sizeof t, "%06llu", (unsigned long long)fp);
        size_t k = 6;
        while (k > 0 && t[k - 1] == '0')
            k--;
        sb_s(b, ".");
        sb_put(b, t, k);
    }
}

/* A JSON string; invalid UTF-8 becomes U+FFFD, so the output always parses. */
static void sb_str(struct sb *b, const char *s)
{
    if (!s) {
        sb_s(b, "null");
        return;
    }
    sb_s(b, "\"");
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
            sb_s(b, t);
            i++;
        } else {
            size_t k = utf8_len((const unsigned char *)s + i, n - i);
            if (k) {
                sb_put(b, s + i, k);
                i += k;
            } else {
                sb_s(b, "\xEF\xBF\xBD");
                i++;
            }
        }
    }
    sb_s(b, "\"");
}

static void sb_site(struct sb *b, const struct npl_prof_site *s)
{
    sb_s(b, "{\"object\": ");
    sb_str(b, s->object ? s->object : "?");
    sb_s(b, ", \"build_id\": ");
    sb_str(b, s->build_id);
    sb_s(b, ", \"offset\": ");
    sb_u(b, s->offset);
    sb_s(b, ", \"ordinal\": ");
    sb_u(b, s->ordinal);
    sb_s(b, s->kind == NPL_SITE_STATIC ? ", \"kind\": \"static\", \"symbol\": "
                                       : ", \"kind\": \"heap\", \"symbol\": ");
    sb_str(b, s->symbol);
    sb_s(b, ", \"where\": ");
    sb_str(b, s->where);
    sb_s(b, "}");
}

static void sb_ints(struct sb *b, const int *v, uint64_t n)
{
    sb_s(b, "[");
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            sb_s(b, i % 32 ? ", " : ",\n    ");
        sb_i(b, v[i]);
    }
    sb_s(b, "]");
}

static void sb_advice(struct sb *b, const struct npl_prof_advice *a, const struct npl_profile *p)
{
    (void)p;
    sb_s(b, ",\n   \"advice\": {\"pattern\": ");
    sb_str(b, npl__pattern_name(a->pattern));
    sb_s(b, ", \"policy\": ");
    sb_str(b, a->policy);
    sb_s(b, ", \"confidence\": ");
    sb_real(b, a->confidence);
    sb_s(b, ",\n    \"local\": {\"policy\": ");
    sb_real(b, a->local_policy);
    sb_s(b, ", \"first_touch\": ");
    if (a->local_first_touch >= 0)
        sb_real(b, a->local_first_touch);
    else
        sb_s(b, "null");
    sb_s(b, ", \"best\": ");
    sb_real(b, a->local_best);
    sb_s(b, "},\n    \"reason\": ");
    sb_str(b, a->reason);
    sb_s(b, ",\n    \"replicate\": ");
    sb_s(b, a->replicate ? "true" : "false");
    sb_s(b, ", \"next_touch_phases\": [");
    for (uint32_t i = 0; i < a->nnext_touch; i++) {
        if (i)
            sb_s(b, ", ");
        sb_u(b, a->next_touch[i]);
    }
    sb_s(b, "], \"samples\": ");
    sb_u(b, a->samples);
    sb_s(b, ", \"period_pages\": ");
    if (a->period_pages)
        sb_u(b, a->period_pages);
    else
        sb_s(b, "null");
    sb_s(b, ", \"block_threads\": ");
    if (a->block_threads)
        sb_i(b, a->block_threads);
    else
        sb_s(b, "null");
    sb_s(b, ", \"chunk_nodes\": ");
    if (a->chunk_nodes)
        sb_ints(b, a->chunk_nodes, a->nchunk_nodes);
    else
        sb_s(b, "null");
    sb_s(b, "}");
}

static void sb_measured(struct sb *b, const uint64_t m[3])
{
    sb_s(b, ", \"measured\": {\"local\": ");
    sb_u(b, m[NPL_MEASURED_LOCAL]);
    sb_s(b, ", \"remote\": ");
    sb_u(b, m[NPL_MEASURED_REMOTE]);
    sb_s(b, ", \"unknown\": ");
    sb_u(b, m[NPL_MEASURED_UNKNOWN]);
    sb_s(b, "}");
}

char *npl__profile_format(const struct npl_profile *p, size_t *len)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    static const char *const bind[] = {"none", "pin", "omp"};
    struct sb b = {0};
    sb_s(&b, "{\n \"format\": \"numaplace-profile\",\n \"version\": 1,\n \"program\": {\"path\": ");
    sb_str(&b, p->program_path ? p->program_path : "");
    sb_s(&b, ", \"build_id\": ");
    sb_str(&b, p->program_build_id);
    sb_s(&b, "},\n \"machine\": {\"nodes\": ");
    sb_ints(&b, p->nodes, (uint64_t)p->nnodes);
    sb_s(&b, ", \"page_size\": ");
    sb_u(&b, p->page_size);
    sb_s(&b, "},\n \"run\": {\"threads\": ");
    sb_i(&b, p->threads);
    sb_s(&b, ", \"thread_nodes\": ");
    sb_ints(&b, p->thread_nodes, (uint64_t)p->threads);
    sb_s(&b, ", \"thread_cpus\": ");
    if (p->thread_cpus)
        sb_ints(&b, p->thread_cpus, (uint64_t)p->threads);
    else
        sb_s(&b, "null");
    sb_s(&b, ",\n  \"binding\": {\"source\": ");
    sb_str(&b, bind[p->binding >= 0 && p->binding <= 2 ? p->binding : 0]);
    sb_s(&b, ", \"detail\": ");
    sb_str(&b, p->binding_detail);
    sb_s(&b, "}},\n \"sampling\": {\"backend\": ");
    sb_str(&b, p->backend == NPL_BACKEND_PERF ? "perf" : "fault");
    sb_s(&b, ", \"rate\": ");
    sb_real(&b, p->rate);
    sb_s(&b, ", \"samples\": ");
    sb_u(&b, p->samples);
    sb_s(&b, ", \"seconds\": ");
    sb_real(&b, p->seconds);
    sb_s(&b, ", \"rw_known\": ");
    sb_s(&b, p->rw_known ? "true" : "false");
    if (p->has_measured)
        sb_measured(&b, p->measured);
    sb_s(&b, "},\n \"phases\": [");
    for (uint32_t i = 0; i < p->nphases; i++) {
        const struct npl_prof_phase *ph = &p->phases[i];
        sb_s(&b, i ? ",\n  {\"id\": " : "\n  {\"id\": ");
        sb_u(&b, ph->id);
        sb_s(&b, ph->kind == NPL_PHASE_WINDOW ? ", \"kind\": \"window\", \"site\": "
                                              : ", \"kind\": \"region\", \"site\": ");
        if (ph->site)
            sb_site(&b, ph->site);
        else
            sb_s(&b, "null");
        sb_s(&b, ", \"entries\": ");
        sb_u(&b, ph->entries);
        sb_s(&b, "}");
    }
    sb_s(&b, "],\n \"transitions\": [");
    for (uint32_t i = 0; i < p->ntransitions; i++) {
        sb_s(&b, i ? ", [" : "[");
        sb_u(&b, p->phases[p->transitions[i].from].id);
        sb_s(&b, ", ");
        sb_u(&b, p->phases[p->transitions[i].to].id);
        sb_s(&b, ", ");
        sb_u(&b, p->transitions[i].count);
        sb_s(&b, "]");
    }
    sb_s(&b, "],\n \"arrays\": [");
    for (uint32_t ai = 0; ai < p->narrays; ai++) {
        const struct npl_prof_array *a = &p->arrays[ai];
        sb_s(&b, ai ? ",\n  {\"site\": " : "\n  {\"site\": ");
        sb_site(&b, &a->site);
        sb_s(&b, ",\n   \"bytes\": ");
        sb_u(&b, a->bytes);
        sb_s(&b, ", \"chunk_bytes\": ");
        sb_u(&b, a->chunk_bytes);
        sb_s(&b, ", \"nchunks\": ");
        sb_u(&b, a->nchunks);
        sb_s(&b, ",\n   \"first_touch\": [");
        for (uint64_t c = 0; c < a->nchunks; c++) {
            if (c)
                sb_s(&b, c % 32 ? ", " : ",\n    ");
            sb_i(&b, a->first_touch[c]);
        }
        sb_s(&b, "],\n   \"samples\": [");
        for (size_t s = 0; s < a->nsamples; s++) {
            const struct npl_prof_sample *x = &a->samples[s];
            sb_s(&b, s ? (s % 8 ? ", [" : ",\n    [") : "[");
            sb_u(&b, p->phases[x->phase].id);
            sb_s(&b, ", ");
            sb_u(&b, x->chunk);
            sb_s(&b, ", ");
            sb_u(&b, x->thread);
            sb_s(&b, ", ");
            sb_u(&b, x->reads);
            sb_s(&b, ", ");
            sb_u(&b, x->writes);
            if (a->has_measured) {
                sb_s(&b, ", ");
                sb_u(&b, x->local);
                sb_s(&b, ", ");
                sb_u(&b, x->remote);
            }
            sb_s(&b, "]");
        }
        sb_s(&b, "]");
        if (a->has_measured)
            sb_measured(&b, a->measured);
        if (a->has_advice)
            sb_advice(&b, &a->advice, p);
        sb_s(&b, "}");
    }
    sb_s(&b, "]\n}\n");
    if (b.oom) {
        free(b.p);
        errno = ENOMEM;
        return NULL;
    }
    if (len)
        *len = b.n;
    return b.p;
}
