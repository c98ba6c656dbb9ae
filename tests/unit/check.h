/* check.h - minimal test helpers: every CHECK counts; the summary line is "N passed, M failed". */
#ifndef NPL_CHECK_H
#define NPL_CHECK_H
#include <stdint.h>
#include <numaplace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_pass, t_fail;
#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (cond) {                                                                              \
            t_pass++;                                                                            \
        } else {                                                                                 \
            t_fail++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                          \
            printf(__VA_ARGS__);                                                                 \
            printf("\n");                                                                        \
            fflush(stdout);                                                                      \
        }                                                                                        \
    } while (0)

/* Compare an int vector with a space-separated expected string. */
static inline int vec_equals(const int *v, size_t n, const char *expected, char *got, size_t gsz)
{
    size_t off = 0;
    got[0] = 0;
    for (size_t i = 0; i < n && off + 16 < gsz; i++)
        off += (size_t)snprintf(got + off, gsz - off, "%s%d", i ? " " : "", v[i]);
    return strcmp(got, expected) == 0;
}

/* Lines of /proc/self/maps: the process's mappings. */
static inline int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* Mappings of /proc/self/maps that overlap [a, a+len). */
static inline int maps_in(const void *a, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    uintptr_t lo = (uintptr_t)a, hi = lo + len;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* A parsed policy, or exit(120): a test's own policy strings must parse. */
static inline npl_policy *pol(const char *s)
{
    npl_policy *p;
    if (npl_policy_parse(&p, s) < 0) {
        printf("parse %s: %s\n", s, npl_last_error());
        exit(120);
    }
    return p;
}

/* FNV-1a over a buffer: data before/after a move must be identical. */
static inline uint64_t checksum(const unsigned char *a, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ a[i]) * 1099511628211ULL;
    return h;
}

/* The guest runner's arguments: --nodes N --cpus-per-node K (others ignored). */
static inline void guest_args(int argc, char **argv, int *n, int *k)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--nodes"))
            *n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus-per-node"))
            *k = atoi(argv[++i]);
    }
}

static inline int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
    return t_fail ? 1 : 0;
}
#endif
