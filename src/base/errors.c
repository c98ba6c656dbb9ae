/* SPDX-License-Identifier: BSD-3-Clause */
/* errors.c - the library's errors: errno + a thread-local message (npl_last_error), traced to
 * stderr only under NUMAPLACE_DEBUG. */
#define _GNU_SOURCE
#include "base/base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char last_error[512];

const char *npl_last_error(void) { return last_error; }
const char *npl_version(void) { return NPL_VERSION; }

int npl__debug_enabled(void)
{
    const char *d = getenv("NUMAPLACE_DEBUG");
    return d && *d && strcmp(d, "0") != 0;
}

void npl__debug(const char *fmt, ...)
{
    if (!npl__debug_enabled())
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("numaplace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int npl__note(int err, const char *fmt, ...)
{
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    errno = err;
    return -1;
}

int npl__fail(int err, const char *fmt, ...)
{
    char msg[sizeof last_error]; /* the arguments may point into last_error */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    if (npl__debug_enabled())
        fprintf(stderr, "numaplace: error: %s (%s)\n", last_error, strerror(err));
    errno = err;
    return -1;
}
