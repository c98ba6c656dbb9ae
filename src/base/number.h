/* SPDX-License-Identifier: BSD-3-Clause */
/* base/number.h - the one grammar of sizes and counts: every numeric option of the numaplace
 * command, every numeric NUMAPLACE_* variable of the interposer and every numeric key of the
 * config file is read with it (not installed).
 *
 *   count  one or more ASCII decimal digits and nothing else: no sign, blank, "0x" or exponent
 *          ("12", "007"; not "+1", " 1", "1e3", "0x10", "")
 *   size   a count, then optionally K, M or G (either case: 2^10, 2^20, 2^30), then optionally
 *          "i", then optionally "B" after a suffix ("4096", "64K", "64KiB", "2M", "1GB"; not "1B",
 *          "1T", "1KK")
 *
 * The value must lie in [min, max]. Nothing wraps: digits past 2^64 - 1, and a suffix that carries
 * the value past max, are out of range. NPL__SIZE_MAX, the largest byte count one allocation or
 * mapping can have (SSIZE_MAX), is the usual max of a size.
 *
 * Pure (no allocation, no locale, no message): in the library and the interposer; the numaplace
 * command calls the library's (exported at NUMAPLACE_PRIVATE, src/libnumaplace.map). Each words
 * its own message. */
#ifndef NPL_BASE_NUMBER_H
#define NPL_BASE_NUMBER_H
#include <limits.h>
#include <stdint.h>

#define NPL__SIZE_MAX ((uint64_t)SSIZE_MAX)

/* 0 and *out, or -1 with errno EINVAL (not of the grammar; NULL s) or ERANGE (of the grammar but
 * outside [min, max]); *out is left alone on error. */
#pragma GCC visibility push(default) /* the command's unstable face */
int npl__parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int npl__parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
#pragma GCC visibility pop
#endif
