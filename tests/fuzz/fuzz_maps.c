/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the /proc/PID/maps parser of src/procfs.c (npl__maps_parse_buffer), which
 * next-touch, the queries and the range check trust. Input: any bytes, as a maps text.
 * Invariants: no crash or read outside the input (it is copied to a buffer of exactly its size);
 * the result is 0 or -1 with EINVAL; every entry has start < end, entries increase and do not
 * overlap, the protection matches the permission letters, the path lies inside its line and
 * holds no '\n' or NUL; parsing stops at the first malformed line and never calls back after it. */
#include "sys/sys.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct ctx {
    const char *text;
    size_t len;
    uintptr_t prev_end;
    int n;
};

static int check_entry(const struct npl_maps_entry *e, void *arg)
{
    struct ctx *c = arg;
    if (e->start >= e->end || e->start < c->prev_end)
        abort();
    c->prev_end = e->end;
    int prot = (e->perms[0] == 'r' ? PROT_READ : 0) | (e->perms[1] == 'w' ? PROT_WRITE : 0) |
               (e->perms[2] == 'x' ? PROT_EXEC : 0);
    if (prot != e->prot || e->shared != (e->perms[3] == 's') || e->perms[4])
        abort();
    if (e->path_len && (e->path < c->text || e->path + e->path_len > c->text + c->len))
        abort();
    if (memchr(e->path, '\n', e->path_len) || memchr(e->path, 0, e->path_len))
        abort();
    if (e->path_len && e->path[0] == ' ')
        abort(); /* the padding is not part of the path */
    c->n++;
    return c->n > 100000; /* a callback may stop the walk: its value comes back */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    struct ctx c = {text, size, 0, 0};
    errno = 0;
    int rc = npl__maps_parse_buffer(text, size, check_entry, &c);
    if (!(rc == 0 || rc == 1 || (rc == -1 && errno == EINVAL)))
        abort();
    /* every single line again, alone: the same verdict as inside the buffer, for the lines the
     * buffer walk accepted */
    size_t pos = 0;
    int lines = 0;
    while (pos < size && rc == 0) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : size - pos;
        struct npl_maps_entry e;
        if (npl__maps_parse_line(text + pos, n, &e) != 0)
            abort(); /* the buffer walk accepted it */
        lines++;
        pos += n + (nl != NULL);
    }
    if (rc == 0 && lines < c.n)
        abort();
    free(text);
    return 0;
}
