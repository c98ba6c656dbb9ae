/* SPDX-License-Identifier: BSD-3-Clause */
/* json.h - the profile format's own JSON (json.c): a strict pull lexer (npl__jr_) and a
 * growing-buffer writer (npl__jw_), no JSON library. Internal to src/profile/. */
#ifndef NPL_PROFILE_JSON_H
#define NPL_PROFILE_JSON_H

#include "profile/profile.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the lexer: every function returns 0, or -1 with the message naming the path and byte ---- */

struct npl__jr {
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

/* Duplicate and required members: one bit per known member name of an object. */
struct npl__jr_members {
    const char *const *names;
    unsigned seen;
};

__attribute__((format(printf, 2, 3))) int npl__jr_fail(struct npl__jr *r, const char *fmt, ...);
/* the path in messages: push a member's key or an index, pop back to what push returned */
size_t npl__jr_push_key(struct npl__jr *r, const char *key);
size_t npl__jr_push_index(struct npl__jr *r, size_t idx);
void npl__jr_pop(struct npl__jr *r, size_t old);
int npl__jr_peek(struct npl__jr *r); /* the next byte after blanks, -1 at the end */
const char *npl__jr_what_next(const struct npl__jr *r);
int npl__jr_is_null(struct npl__jr *r); /* 1: null read, 0: something else, -1 */
int npl__jr_string(struct npl__jr *r, char **out);
int npl__jr_opt_string(struct npl__jr *r, char **out); /* a string or null (*out NULL) */
int npl__jr_integer(struct npl__jr *r, int64_t min, uint64_t max, int64_t *out);
int npl__jr_u64(struct npl__jr *r, uint64_t max, uint64_t *out);
int npl__jr_real(struct npl__jr *r, double min, double max, double *out);
int npl__jr_boolean(struct npl__jr *r, int *out);
int npl__jr_skip_value(struct npl__jr *r);
/* objects and arrays: enter, then next until it returns 0 (the end) or -1 */
int npl__jr_enter(struct npl__jr *r, char open, const char *what);
int npl__jr_obj_next(struct npl__jr *r, int *first, char *key, size_t ksize);
int npl__jr_arr_next(struct npl__jr *r, int *first);
int npl__jr_member(struct npl__jr *r, struct npl__jr_members *m, const char *key, int *idx);
int npl__jr_require(struct npl__jr *r, const struct npl__jr_members *m, unsigned required);
/* A JSON array of records, each read by one() into a zeroed item of `size` bytes appended to
 * *items; more than max: an error naming what */
typedef int (*npl__jr_item_fn)(struct npl__jr *r, void *item, const void *ctx);
int npl__jr_list_of(struct npl__jr *r, void **items, size_t *n, size_t size, size_t max,
                    const char *what, npl__jr_item_fn one, const void *ctx);
/* An array of integers in [min, max]: *out malloc'ed (NULL when empty; freed on failure) */
int npl__jr_int_list(struct npl__jr *r, int64_t min, uint64_t max, uint64_t maxn,
                     int64_t **out, uint64_t *n);

/* ---- the writer: out of memory sets oom and drops what follows ---- */

struct npl__jw {
    char *p;
    size_t n, cap;
    int oom;
};

void npl__jw_s(struct npl__jw *b, const char *s); /* raw text */
void npl__jw_u(struct npl__jw *b, uint64_t v);
void npl__jw_i(struct npl__jw *b, int64_t v);
void npl__jw_real(struct npl__jw *b, double v); /* at most 6 decimals, without the locale */
void npl__jw_str(struct npl__jw *b, const char *s); /* a JSON string, or null for NULL */
void npl__jw_ints(struct npl__jw *b, const int *v, uint64_t n);

#endif
