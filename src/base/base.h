/* SPDX-License-Identifier: BSD-3-Clause */
/* base/base.h - the ground floor of the library: errors, lists, the clock, the page size, UTF-8
 * (not installed).
 *
 * Every other layer may use it; it uses none of them. */
#ifndef NPL_BASE_H
#define NPL_BASE_H

#include "numaplace.h"
#include "base/number.h" /* the one grammar of sizes and counts */
#include "base/protect.h" /* giving pages back keeps the program's own protections */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#define NPL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (errors.c) ---- */
/* Set errno and the thread's message; always returns -1. */
int npl__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void npl__debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int npl__debug_enabled(void); /* NUMAPLACE_DEBUG is set (and not "0") */
/* As npl__fail for outcomes that are answers, not failures ("not set", "not armed"): errno and
 * the message are set, NUMAPLACE_DEBUG prints nothing. */
int npl__note(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- lists and small maths (lists.c) ---- */
/* The largest CPU or node id a list may name: an input bound (a list like "0-4000000000" must
 * not allocate gigabytes, nor cost seconds), not a set size. Linux's ids are far smaller: at most
 * 8192 CPUs (NR_CPUS) and 1024 nodes (NODES_SHIFT 10). Sets are hwloc bitmaps at the API; ordered
 * lists (policy nodes, pin orders) are int arrays from npl__parse_list. */
#define NPL__MAX_ID 65535
/* Parse "0-3,8,10-11" into a malloc'ed array of ints (order kept, ranges expanded).
 * Rejects negatives, values > max_value, duplicates, empty items. what names the list in errors. */
int npl__parse_list(const char *s, int max_value, const char *what, int **out, int *n);
/* Format an int list compactly ("0-3,8") into buf. */
void npl__format_list(const int *v, int n, char *buf, size_t size);
int npl__in_list(int v, const int *list, int n); /* 1 if v is one of list[0..n) */
int *npl__dup_ints(const int *v, int n);          /* malloc'ed copy; NULL for n <= 0 or no memory */
int npl__is_prime(long n);
int npl__next_prime(long n); /* smallest prime >= n */
#pragma GCC visibility push(default) /* the command calls these (src/libnumaplace.map) */
double npl__now(void);      /* CLOCK_MONOTONIC, seconds */
/* the length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid (utf8.c) */
size_t npl__utf8_len(const unsigned char *s, size_t n);
/* in, with every control character (C0, DEL, C1) and every byte that is no UTF-8 character
 * written \xNN, into out (at most size bytes with the NUL, cut between characters): what a
 * profile or a program names (a site, a reason, a path) reaches a terminal only so (text.c).
 * Returns out. */
const char *npl__term_text(const char *in, char *out, size_t size);
#pragma GCC visibility pop
uint64_t npl__now_ns(void); /* CLOCK_MONOTONIC, nanoseconds; async-signal-safe */
size_t npl__page_size(void); /* the base page size (sysconf) */
/* Widen the span [*lo, *hi) so that it holds [a, b): lock-free, async-signal-safe; a span only
 * grows (start it at UINTPTR_MAX, 0). */
void npl__span_widen(_Atomic uintptr_t *lo, _Atomic uintptr_t *hi, uintptr_t a, uintptr_t b);

#endif
