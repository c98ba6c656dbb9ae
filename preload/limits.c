/* SPDX-License-Identifier: BSD-3-Clause */
/* limits.c - how much more memory this process may use now (preload.h), for the placements that
 * populate every page of a block: the least of MemAvailable, the room under each memory limit of
 * the process's cgroup and its ancestors (v2: memory.max - memory.current; v1:
 * memory.limit_in_bytes - memory.usage_in_bytes) and RLIMIT_AS less the address space in use.
 * The cgroup directories are found once, by the constructor (/proc/self/cgroup and
 * /proc/self/mountinfo); the check itself runs inside malloc and allocates nothing (fixed
 * buffers, open and read). Every file is read under NUMAPLACE_FSROOT, as the library reads them. */
#define _GNU_SOURCE
#include "sys/sys.h"

#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define LEVELS 8
static struct level {
    char dir[512];
    int v1; /* memory.limit_in_bytes / memory.usage_in_bytes instead of memory.max / current */
} levels[LEVELS];
static int nlevels;

/* the file's first number; "max" (no limit) and unreadable files: -1 */
static long long read_number(const char *dir, const char *name)
{
    char path[600], buf[64];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -1;
    if (npl__fs_read_text(path, buf, sizeof buf) <= 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    return strtoll(buf, NULL, 10);
}

/* Field k (0-based, space-separated) of a mountinfo line into out; 0 or -1. */
static int field(const char *line, int k, char *out, size_t size)
{
    const char *s = line;
    for (int i = 0; i < k && s; i++)
        s = (s = strchr(s, ' ')) ? s + 1 : NULL;
    if (!s)
        return -1;
    size_t len = strcspn(s, " \n");
    if (len >= size)
        return -1;
    memcpy(out, s, len);
    out[len] = 0;
    return 0;
}

/* Does the comma-separated list hold word? */
static int has_word(const char *list, const char *word)
{
    size_t w = strlen(word);
    for (const char *s = list; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
        if (!strncmp(s, word, w) && (s[w] == ',' || s[w] == 0 || s[w] == '\n'))
            return 1;
    return 0;
}

/* The mount point of the cgroup hierarchy (v2: cgroup2; v1: the one with the memory controller)
 * and the cgroup root it shows; 0 or -1 */
static int find_mount(int v1, char *point, size_t psize, char *root, size_t rsize)
{
    FILE *f = npl__fs_open("/proc/self/mountinfo");
    char *line = NULL;
    size_t cap = 0;
    int found = -1;
    while (f && found < 0 && getline(&line, &cap, f) > 0) {
        const char *dash = strstr(line, " - ");
        char type[32], opts[512];
        if (!dash || field(dash + 3, 0, type, sizeof type) < 0)
            continue;
        if (v1 ? strcmp(type, "cgroup") || field(dash + 3, 2, opts, sizeof opts) < 0 ||
                     !has_word(opts, "memory")
               : strcmp(type, "cgroup2") != 0)
            continue;
        if (field(line, 3, root, rsize) == 0 && field(line, 4, point, psize) == 0)
            found = 0;
    }
    free(line);
    if (f)
        fclose(f);
    return found;
}

/* The directories from the process's cgroup up to the hierarchy's root that have a limit file. */
static void add_levels(int v1, const char *cgpath)
{
    char point[256], root[256], dir[512];
    if (find_mount(v1, point, sizeof point, root, sizeof root) < 0)
        return;
    size_t rl = strlen(root);
    const char *rel = cgpath;
    if (strcmp(root, "/") && !strncmp(cgpath, root, rl)) /* the mount shows a sub-tree */
        rel = cgpath + rl;
    if (snprintf(dir, sizeof dir, "%s%s", point, strcmp(rel, "/") ? rel : "") >= (int)sizeof dir)
        return;
    size_t plen = strlen(point);
    for (;;) {
        char probe[600]; /* the root cgroup has no limit file */
        snprintf(probe, sizeof probe, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
        if (nlevels < LEVELS && npl__fs_access(probe, R_OK) == 0) {
            snprintf(levels[nlevels].dir, sizeof levels[nlevels].dir, "%s", dir);
            levels[nlevels++].v1 = v1;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < plen)
            break;
        *slash = 0;
    }
}

void npl__preload_limits_init(void)
{
    FILE *f = npl__fs_open("/proc/self/cgroup");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = 0;
        if (!strcmp(line, "0") && c2 == c1 + 1) /* 0::PATH */
            add_levels(0, c2 + 1);
        else if (has_word(c1 + 1, "memory"))
            add_levels(1, c2 + 1);
    }
    free(line);
    if (f)
        fclose(f);
    for (int i = 0; i < nlevels; i++)
        npl__debug("preload: memory limit of %s (cgroup v%d)", levels[i].dir, levels[i].v1 ? 1 : 2);
}

/* MemAvailable of /proc/meminfo in bytes, SIZE_MAX if unknown */
static size_t mem_available(void)
{
    char buf[4096];
    npl__fs_read_text("/proc/meminfo", buf, sizeof buf);
    const char *m = strstr(buf, "MemAvailable:");
    unsigned long long kib = m ? strtoull(m + 13, NULL, 10) : 0;
    return kib ? (size_t)kib << 10 : SIZE_MAX;
}

/* RLIMIT_AS less the address space in use (/proc/self/statm), SIZE_MAX without a limit */
static size_t address_room(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return SIZE_MAX;
    char buf[128];
    if (npl__fs_read_text("/proc/self/statm", buf, sizeof buf) <= 0)
        return SIZE_MAX;
    size_t used = (size_t)strtoull(buf, NULL, 10) * (size_t)sysconf(_SC_PAGESIZE);
    return rl.rlim_cur > used ? (size_t)(rl.rlim_cur - used) : 0;
}

size_t npl__preload_memory_room(const char **source)
{
    size_t room = mem_available();
    *source = "MemAvailable";
    for (int i = 0; i < nlevels; i++) {
        const struct level *l = &levels[i];
        long long max = read_number(l->dir, l->v1 ? "memory.limit_in_bytes" : "memory.max");
        long long cur = read_number(l->dir, l->v1 ? "memory.usage_in_bytes" : "memory.current");
        if (max < 0 || max >= (1ll << 62) || cur < 0) /* no limit ("max", v1's huge value) */
            continue;
        size_t r = max > cur ? (size_t)(max - cur) : 0;
        if (r < room) {
            room = r;
            *source = l->v1 ? "the cgroup's memory.limit_in_bytes" : "the cgroup's memory.max";
        }
    }
    size_t as = address_room();
    if (as < room) {
        room = as;
        *source = "RLIMIT_AS";
    }
    return room;
}
