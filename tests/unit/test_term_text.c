/* SPDX-License-Identifier: BSD-3-Clause */
/* test_term_text.c - npl__term_text (src/base/text.c): what a profile names reaches a terminal
 * with every control character and every byte that is no UTF-8 character written \xNN, valid
 * UTF-8 kept, the result cut between characters, never inside an escape. */
#include "check.h"
#include "base/base.h"

#include <string.h>

static void same(const char *in, size_t size, const char *want)
{
    char out[256];
    npl__term_text(in, out, size);
    CHECK(!strcmp(out, want), "[%s] -> [%s], want [%s]", in, out, want);
}

int main(void)
{
    same("stencil.c:13", 256, "stencil.c:13");
    same("\x1b[2Jx", 256, "\\x1b[2Jx");                     /* ESC (CSI) */
    same("a\x07" "b\x7f" "c", 256, "a\\x07b\\x7fc");         /* BEL, DEL */
    same("tab\tnl\ncr\r", 256, "tab\\x09nl\\x0acr\\x0d");    /* one line */
    same("\xc2\x9b" "31m", 256, "\\xc2\\x9b31m");             /* C1 CSI in UTF-8 */
    same("\xc2\x85", 256, "\\xc2\\x85");                      /* C1 NEL */
    same("caf\xc3\xa9 \xe2\x82\xac", 256, "caf\xc3\xa9 \xe2\x82\xac"); /* é, € kept */
    same("\xff\xfe", 256, "\\xff\\xfe");                      /* no character */
    same("\xe2\x82", 256, "\\xe2\\x82");                      /* cut sequence */
    same("\xed\xa0\x80", 256, "\\xed\\xa0\\x80");             /* a surrogate */
    same("ab\x1b", 6, "ab");      /* the escape does not fit: cut before it */
    same("ab\x1b", 7, "ab\\x1b");
    same("\xc3\xa9\xc3\xa9", 4, "\xc3\xa9"); /* cut between characters */
    same(NULL, 8, "");
    char tiny[1] = {'x'};
    npl__term_text("abc", tiny, 1);
    CHECK(tiny[0] == 0, "size 1: the empty string");
    same("\xf0\x9f\x98\x80", 256, "\xf0\x9f\x98\x80"); /* 4-byte UTF-8 kept */
    same("\xc0\x80", 256, "\\xc0\\x80");                 /* overlong NUL */
    return check_summary("test_term_text");
}
