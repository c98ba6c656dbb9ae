/* SPDX-License-Identifier: BSD-3-Clause */
/* text.c - text from a profile or a program on its way to a terminal (base.h). */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

/* a C1 control (U+0080..U+009F) in UTF-8 */
static int c1_control(const unsigned char *s) { return s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F; }

const char *npl__term_text(const char *in, char *out, size_t size)
{
    const unsigned char *u = (const unsigned char *)(in ? in : "");
    size_t o = 0;
    if (!size)
        return out;
    for (size_t i = 0; u[i];) {
        size_t k = u[i] >= 0x20 && u[i] < 0x7f ? 1
                   : u[i] >= 0x80 && !c1_control(u + i)
                       ? npl__utf8_len(u + i, strnlen((const char *)u + i, 4)) : 0;
        char esc[8];
        const char *piece = (const char *)u + i;
        size_t len = k;
        if (!k) { /* a control character or a byte that is no character: \xNN */
            snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            piece = esc;
            len = 4;
        }
        if (o + len >= size)
            break; /* cut between characters, never inside an escape */
        memcpy(out + o, piece, len);
        o += len;
        i += k ? k : 1;
    }
    out[o] = 0;
    return out;
}
