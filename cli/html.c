/* SPDX-License-Identifier: BSD-3-Clause */
/* html.c - the numaplace command's HTML escaper and page frame (html.h). */
#include "html.h"
#include "common.h"

void html_text(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u && u[i];) {
        size_t k = cli_utf8_len(u + i);
        unsigned char c = u[i];
        if (!k || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            fputs("\xEF\xBF\xBD", f); /* U+FFFD */
        else if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c == '\'')
            fputs("&#39;", f);
        else
            fwrite(u + i, 1, k, f);
        i += k ? k : 1;
    }
}

void html_page_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
    html_text(f, title);
    fputs("</title></head><body>\n<h1>", f);
    html_text(f, title);
    fputs("</h1>\n", f);
}

void html_page_end(FILE *f) { fputs("</body></html>\n", f); }
