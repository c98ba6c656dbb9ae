/* SPDX-License-Identifier: BSD-3-Clause */
/* json.c - the numaplace command's JSON writer (json.h), on cJSON. */
#include "json.h"
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cJSON *json_object(void) { return cJSON_CreateObject(); }
cJSON *json_array(void) { return cJSON_CreateArray(); }

cJSON *json_add(cJSON *parent, const char *key, cJSON *item)
{
    if (!parent || !item) {
        cJSON_Delete(item);
        return NULL;
    }
    if (key ? !cJSON_AddItemToObject(parent, key, item) : !cJSON_AddItemToArray(parent, item)) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

cJSON *json_string(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), bad = 0;
    for (size_t i = 0; i < len;) {
        size_t k = cli_utf8_len(u + i);
        bad += !k;
        i += k ? k : 1;
    }
    if (!bad)
        return cJSON_CreateString(s);
    char *clean = malloc(len + 2 * bad + 1), *o = clean;
    if (!clean)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t k = cli_utf8_len(u + i);
        if (k) {
            memcpy(o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3); /* U+FFFD */
            o += 3;
            i++;
        }
    }
    *o = 0;
    cJSON *item = cJSON_CreateString(clean);
    free(clean);
    return item;
}

cJSON *json_add_str(cJSON *parent, const char *key, const char *s)
{
    return json_add(parent, key, s ? json_string(s) : cJSON_CreateNull());
}

cJSON *json_add_num(cJSON *parent, const char *key, double v)
{
    return json_add(parent, key, cJSON_CreateNumber(v));
}

cJSON *json_add_num_or_null(cJSON *parent, const char *key, double v)
{
    return json_add(parent, key, v < 0 || isnan(v) || isinf(v) ? cJSON_CreateNull()
                                                               : cJSON_CreateNumber(v));
}

cJSON *json_add_bool(cJSON *parent, const char *key, int v)
{
    return json_add(parent, key, cJSON_CreateBool(v != 0));
}

cJSON *json_add_obj(cJSON *parent, const char *key) { return json_add(parent, key, json_object()); }
cJSON *json_add_arr(cJSON *parent, const char *key) { return json_add(parent, key, json_array()); }

cJSON *json_add_ints(cJSON *parent, const char *key, const int *v, int n)
{
    cJSON *a = json_add_arr(parent, key);
    for (int i = 0; a && i < n; i++)
        json_add_num(a, NULL, v[i]);
    return a;
}

/* cJSON's compact text laid out for people and for line-oriented tools: ": " and ", " between
 * items, the members of the top object and the elements of the arrays and objects inside it (depth
 * <= 2) one per line, deeper containers on one line ({"start": "0x...", "pages": {"0": 12}}). Only
 * whitespace outside strings is added, so the text is still exactly cJSON's JSON. */
static int layout(FILE *f, const char *t)
{
    int depth = 0, in_str = 0;
    for (const char *p = t; *p; p++) {
        char ch = *p;
        if (in_str) {
            if (fputc(ch, f) == EOF)
                return -1;
            if (ch == '\\' && p[1])
                fputc(*++p, f);
            else if (ch == '"')
                in_str = 0;
            continue;
        }
        switch (ch) {
        case '"':
            in_str = 1;
            fputc(ch, f);
            break;
        case '{':
        case '[':
            fputc(ch, f);
            depth++;
            if (depth <= 2 && p[1] != '}' && p[1] != ']')
                fprintf(f, "\n%*s", 2 * depth, "");
            break;
        case '}':
        case ']':
            if (depth <= 2 && p[-1] != '{' && p[-1] != '[')
                fprintf(f, "\n%*s", 2 * (depth - 1), "");
            depth--;
            fputc(ch, f);
            break;
        case ',':
            if (depth <= 2)
                fprintf(f, ",\n%*s", 2 * depth, "");
            else
                fputs(", ", f);
            break;
        case ':':
            fputs(": ", f);
            break;
        default:
            fputc(ch, f);
        }
    }
    return fputc('\n', f) == EOF || ferror(f) ? -1 : 0;
}

int json_write(FILE *f, const cJSON *root)
{
    if (!root)
        return -1;
    char *text = cJSON_PrintUnformatted(root);
    if (!text)
        return -1;
    int rc = layout(f, text);
    cJSON_free(text);
    return rc;
}

void json_free(cJSON *root) { cJSON_Delete(root); }
