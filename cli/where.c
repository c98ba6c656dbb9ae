/* where.c - numaplace where PID [--json]: pages per node of a running process, per mapping and
 * in total, from /proc/PID/numa_maps (N<node>=<pages>, kernelpagesize_kB) and /proc/PID/smaps
 * (AnonHugePages: transparent huge pages). Exit: 0; 1 the process is gone or unreadable; 2 usage. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 1024

struct mapping {
    unsigned long start, end;
    char policy[64];
    long pages[MAXN];  /* in the mapping's page size */
    long page_kb;
    long thp_kb;       /* AnonHugePages */
    char what[128];    /* file name, heap, stack, anon */
};

static long thp_of(const char *pid, unsigned long start)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%s/smaps", pid);
    FILE *f = fopen(path, "r");
    int in = 0;
    long kb = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = s == start;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    if (f)
        fclose(f);
    return in ? kb : 0;
}

int cmd_where(int argc, char **argv)
{
    const char *pid = NULL;
    int json = 0, all = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--all"))
            all = 1;
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: numaplace where PID [--json] [--all]\n"
                   "Pages per node of a running process, per mapping (those with pages present;\n"
                   "--all: every mapping) and in total; huge pages are counted as such.\n"
                   "Exit status: 0; 1 no such process (or no permission); 2 bad usage.\n");
            return 0;
        } else if (!pid && strspn(argv[i], "0123456789") == strlen(argv[i]) && *argv[i])
            pid = argv[i];
        else {
            fprintf(stderr, "numaplace where: bad argument \"%s\"\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!pid) {
        fprintf(stderr, "numaplace where: which PID?\n");
        return EXIT_USAGE;
    }
    char path[64], line[8192];
    snprintf(path, sizeof path, "/proc/%s/numa_maps", pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "numaplace where: process %s: %s\n", pid,
                errno == ENOENT ? "no such process (gone?)" : strerror(errno));
        return EXIT_FAILED;
    }
    long total_base[MAXN] = {0}, total_huge[MAXN] = {0}, thp_kb = 0;
    int maxnode = -1, first = 1;
    if (json)
        printf("{\n  \"pid\": %s,\n  \"mappings\": [", pid);
    else
        printf("%-18s %-10s %8s  %s\n", "address", "policy", "pagesize", "pages per node");
    struct mapping m;
    while (fgets(line, sizeof line, f)) {
        memset(&m, 0, sizeof m);
        m.page_kb = 4;
        char *save = NULL, *tok = strtok_r(line, " \n", &save);
        if (!tok || sscanf(tok, "%lx", &m.start) != 1)
            continue;
        tok = strtok_r(NULL, " \n", &save);
        snprintf(m.policy, sizeof m.policy, "%s", tok ? tok : "?");
        snprintf(m.what, sizeof m.what, "anon");
        long present = 0;
        while ((tok = strtok_r(NULL, " \n", &save))) {
            int node;
            long v;
            if (sscanf(tok, "N%d=%ld", &node, &v) == 2 && node >= 0 && node < MAXN) {
                m.pages[node] = v;
                present += v;
                if (node > maxnode)
                    maxnode = node;
            } else if (sscanf(tok, "kernelpagesize_kB=%ld", &v) == 1) {
                m.page_kb = v;
            } else if (!strncmp(tok, "file=", 5)) {
                snprintf(m.what, sizeof m.what, "%s", tok + 5);
            } else if (!strcmp(tok, "heap") || !strcmp(tok, "stack") || !strcmp(tok, "huge")) {
                snprintf(m.what, sizeof m.what, "%s", tok);
            }
        }
        if (!present && !all)
            continue;
        m.thp_kb = thp_of(pid, m.start);
        thp_kb += m.thp_kb;
        for (int n = 0; n <= maxnode && n < MAXN; n++) {
            if (m.page_kb > 4)
                total_huge[n] += m.pages[n];
            else
                total_base[n] += m.pages[n];
        }
        if (json) {
            printf("%s\n    {\"start\": \"0x%lx\", \"policy\": \"%s\", \"what\": \"%s\", "
                   "\"page_kb\": %ld, \"thp_kb\": %ld, \"pages\": {",
                   first ? "" : ",", m.start, m.policy, m.what, m.page_kb, m.thp_kb);
            int c = 0;
            for (int n = 0; n <= maxnode && n < MAXN; n++)
                if (m.pages[n])
                    printf("%s\"%d\": %ld", c++ ? ", " : "", n, m.pages[n]);
            printf("}}");
            first = 0;
        } else {
            printf("0x%-16lx %-10.10s %6ldkB ", m.start, m.policy, m.page_kb);
            for (int n = 0; n <= maxnode && n < MAXN; n++)
                if (m.pages[n])
                    printf(" N%d=%ld", n, m.pages[n]);
            if (m.thp_kb)
                printf(" (THP %ld kB)", m.thp_kb);
            printf("  %s\n", m.what);
        }
    }
    fclose(f);
    if (json) {
        printf("\n  ],\n  \"total\": {");
        for (int n = 0; n <= maxnode; n++)
            printf("%s\"%d\": {\"base_pages\": %ld, \"huge_pages\": %ld}", n ? ", " : "", n,
                   total_base[n], total_huge[n]);
        printf("},\n  \"thp_kb\": %ld\n}\n", thp_kb);
    } else {
        printf("total base pages:");
        for (int n = 0; n <= maxnode; n++)
            printf(" N%d=%ld", n, total_base[n]);
        for (int n = 0; n <= maxnode; n++)
            if (total_huge[n])
                printf(" | hugetlb pages N%d=%ld", n, total_huge[n]);
        printf("\n");
        if (thp_kb)
            printf("transparent huge pages: %ld kB\n", thp_kb);
    }
    return 0;
}
