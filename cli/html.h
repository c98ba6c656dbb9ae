/* SPDX-License-Identifier: BSD-3-Clause */
/* html.h - the HTML the numaplace command writes (advise --html, report's index.html): one
 * escaper for every string that goes into a page, and the frame of a self-contained page (no
 * script, no style sheet, nothing fetched). */
#ifndef NPL_CLI_HTML_H
#define NPL_CLI_HTML_H
#include <stdio.h>

/* s as HTML text or attribute value: & < > " ' as references, invalid UTF-8 and control
 * characters (but tab and newline) as U+FFFD. NULL writes nothing. */
void html_text(FILE *f, const char *s);
/* "<!DOCTYPE html>...<body>" with title (escaped) as the title and the first heading */
void html_page_begin(FILE *f, const char *title);
void html_page_end(FILE *f);
#endif
