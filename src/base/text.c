/* text.c - text from a profile or a program on its way to a terminal (base.h). */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

/* length of the valid UTF-8 sequence at s that is no C1 control, else 0 */
static size_t printable_utf8(const unsigned char *s)
{
    size_t n;
    unsigned cp;
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, cp = s[0] & 0x1Fu;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, cp = s[0] & 0x0Fu;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, cp = s[0] & 0x07u;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F))
        return 0;
    return n;
}

const char *npl__term_text(const char *in, char *out, size_t size)
{
    const unsigned char *u = (const unsigned char *)(in ? in : "");
    size_t o = 0;
    if (!size)
        return out;
    for (size_t i = 0; u[i];) {
        size_t k = u[i] >= 0x20 && u[i] < 0x7f ? 1 : u[i] >= 0x80 ? printable_utf8(u + i) : 0;
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
