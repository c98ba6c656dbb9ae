/* SPDX-License-Identifier: BSD-3-Clause */
/* utf8.c - the one UTF-8 check: the length of a valid sequence (no overlong form, no surrogate,
 * nothing past U+10FFFF), for the profile format's JSON and the command's JSON and HTML. Pure. */
#include "base/base.h"

size_t npl__utf8_len(const unsigned char *s, size_t n)
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
