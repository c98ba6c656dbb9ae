/* SPDX-License-Identifier: BSD-3-Clause */
/* json.h - the one JSON writer of the numaplace command, on cJSON (Debian libcjson-dev): every
 * string is escaped by cJSON (quotes, backslashes, control characters) after invalid UTF-8 is
 * replaced by U+FFFD, so any output parses. Build a tree with these helpers, then json_write(). */
#ifndef NPL_CLI_JSON_H
#define NPL_CLI_JSON_H
#include <cJSON.h>
#include <stdio.h>

cJSON *json_object(void);
cJSON *json_array(void);
/* Add to an object (key != NULL) or append to an array (key == NULL); return the added item. */
cJSON *json_add(cJSON *parent, const char *key, cJSON *item);
cJSON *json_add_str(cJSON *parent, const char *key, const char *s); /* NULL s: null */
cJSON *json_add_num(cJSON *parent, const char *key, double v);
cJSON *json_add_num_or_null(cJSON *parent, const char *key, double v); /* v < 0 or NaN: null */
cJSON *json_add_bool(cJSON *parent, const char *key, int v);
cJSON *json_add_obj(cJSON *parent, const char *key);
cJSON *json_add_arr(cJSON *parent, const char *key);
cJSON *json_add_ints(cJSON *parent, const char *key, const int *v, int n);
/* A string item from arbitrary bytes (invalid UTF-8 -> U+FFFD). */
cJSON *json_string(const char *s);
/* Print the tree (formatted, newline-terminated) to f: 0, or -1 (out of memory, write error). */
int json_write(FILE *f, const cJSON *root);
void json_free(cJSON *root);
#endif
