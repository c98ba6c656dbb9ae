/* SPDX-License-Identifier: BSD-3-Clause */
/* skip.h - a check that cannot run here is a skip, said with a key and a reason. Outside CI it
 * counts as skipped. Under CI=true it is a failure unless its key is listed in the one file of
 * expected skips (tests/expected-skips.txt; NPL_EXPECTED_SKIPS names another path, as in the
 * guest) for this program (a line's in=PROG,... names the programs a key is expected in: the
 * source file's base name); a listed skip logs "expected skip: REASON". C and C++ (the binding tests use it too). */
#ifndef NPL_SKIP_H
#define NPL_SKIP_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* exit status of a test program whose every check was skipped (ctest's SKIP_RETURN_CODE) */
#define NPL_EXIT_SKIPPED 77

static inline const char *skip_list_path(void)
{
    const char *p = getenv("NPL_EXPECTED_SKIPS");
#ifdef NPL_EXPECTED_SKIPS_FILE
    if (!p || !*p)
        p = NPL_EXPECTED_SKIPS_FILE;
#endif
    return p && *p ? p : "tests/expected-skips.txt";
}

/* the program a source file builds: its base name without the extension */
static inline void skip_program(const char *file, char *prog, size_t size)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    snprintf(prog, size, "%.*s", (int)strcspn(b, "."), b);
}

/* 1 if key has a line "KEY [in=PROG,...] REASON" in the expected skips that lets program prog
 * skip it (no in=: any program; REASON copied to why), else 0 */
static inline int skip_listed(const char *key, const char *prog, char *why, size_t wsz)
{
    FILE *f = fopen(skip_list_path(), "r");
    char line[1024];
    size_t k = strlen(key);
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\t'))
            continue;
        char *r = line + k;
        r += strspn(r, " \t");
        if (!strncmp(r, "in=", 3)) { /* the programs that may skip it */
            size_t n = strcspn(r, " \t");
            char list[512];
            int mine = 0;
            snprintf(list, sizeof list, "%.*s", (int)(n - 3), r + 3);
            for (char *q = list, *c; q && !mine; q = c ? c + 1 : NULL) {
                if ((c = strchr(q, ',')))
                    *c = 0;
                mine = !strcmp(q, prog);
            }
            if (!mine)
                continue;
            r += n;
            r += strspn(r, " \t");
        }
        r[strcspn(r, "\n")] = 0;
        snprintf(why, wsz, "%s", r);
        found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

static inline int skip_ci(void)
{
    const char *ci = getenv("CI");
    return ci && !strcmp(ci, "true");
}

/* Says the skip; 1 if it counts as a skip, 0 if it is a failure (CI=true and key not listed). */
static inline int skip_verdict(const char *key, const char *file, int line, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline int skip_verdict(const char *key, const char *file, int line, const char *fmt, ...)
{
    char why[1024], listed[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int ok = 1;
    char prog[256];
    skip_program(file, prog, sizeof prog);
    if (skip_listed(key, prog, listed, sizeof listed))
        printf("expected skip: %s [%s: %s]\n", why, key, listed);
    else if (skip_ci()) {
        printf("FAIL %s:%d: a skip under CI=true that %s does not list for %s: %s: %s\n", file,
               line, skip_list_path(), prog, key, why);
        ok = 0;
    } else
        printf("SKIP %s: %s\n", key, why);
    fflush(stdout);
    return ok;
}
#endif
