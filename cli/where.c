/* SPDX-License-Identifier: BSD-3-Clause */
/* where.c - numaplace where PID [--json] [--all]: pages per node of a running process, per mapping
 * and in total, from /proc/PID/numa_maps (N<node>=<pages>, kernelpagesize_kB) and /proc/PID/smaps
 * (mapping ends, path names, AnonHugePages: transparent huge pages).
 *
 * One linear pass: each file is read whole into memory first (one scan of the process's mappings
 * per file), then parsed; the two are merged by start address (sorted, binary search). Mappings
 * may change between (or during) the two reads - next-touch splits and merges them - so the sets
 * of ranges are compared ("mappings changed during the scan") and totals are summed by address
 * range, a range that overlaps one already counted being skipped: nothing is counted twice.
 * Exit: 0; 1 the process is gone, unreadable, a zombie, or exited during the scan (partial
 * result, said on stderr and as "partial": true); 2 usage. */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "json.h"
#include "base/number.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN 1024

struct smap {
    unsigned long start, end;
    const char *name; /* path, [heap], [stack], ... or "" (points into the smaps text) */
    long thp_kb;      /* AnonHugePages */
};
struct nmap {
    unsigned long start;
    char policy[64];
    const char *what;        /* heap, stack, huge, anon, or the file= value (points into text) */
    long page_kb, present;
    size_t first, count;     /* its (node, pages) pairs in the pair array */
};
struct pair {
    int node;
    long pages;
};

/* The whole file at dirfd/name into a malloc'ed, NUL-terminated buffer. 0, or -1 + errno. */
static int read_all(int dirfd, const char *name, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - n < 4096 + 1) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (!buf) {
        errno = e;
        return -1;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

/* State letter of /proc/PID/stat (R, S, D, Z, X, ...), or 0 if the process is gone/unreadable. */
static char proc_state(int dirfd)
{
    char *text;
    size_t len;
    if (read_all(dirfd, "stat", &text, &len) < 0)
        return 0;
    char *p = strrchr(text, ')'), st = 0;
    if (p && p[1] == ' ')
        st = p[2];
    free(text);
    return st;
}

static int cmp_smap(const void *a, const void *b)
{
    unsigned long x = ((const struct smap *)a)->start, y = ((const struct smap *)b)->start;
    return x < y ? -1 : x > y;
}

static int cmp_nmap(const void *a, const void *b)
{
    unsigned long x = ((const struct nmap *)a)->start, y = ((const struct nmap *)b)->start;
    return x < y ? -1 : x > y;
}

/* Parse smaps text (modified in place: names NUL-terminated). */
static int parse_smaps(char *text, struct smap **out, size_t *n)
{
    size_t cap = 256, k = 0;
    struct smap *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        unsigned long s, e;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s%n", &s, &e, &off) == 2 && off > 0 &&
            strchr(line, '-') < strchr(line, ' ')) {
            if (k == cap) {
                struct smap *nv = realloc(v, cap * 2 * sizeof *v);
                if (!nv) {
                    free(v);
                    return -1;
                }
                v = nv;
                cap *= 2;
            }
            char *name = line + off;
            while (*name == ' ')
                name++;
            v[k++] = (struct smap){s, e, name, 0};
        } else if (k > 0 && !strncmp(line, "AnonHugePages:", 14)) {
            v[k - 1].thp_kb = strtol(line + 14, NULL, 10);
        }
    }
    qsort(v, k, sizeof *v, cmp_smap);
    *out = v;
    *n = k;
    return 0;
}

/* Parse numa_maps text (modified in place). */
static int parse_numa_maps(char *text, struct nmap **out, size_t *n, struct pair **pairs_out,
                           size_t *npairs, int *maxnode)
{
    size_t cap = 256, k = 0, pcap = 1024, np = 0;
    struct nmap *v = malloc(cap * sizeof *v);
    struct pair *pairs = malloc(pcap * sizeof *pairs);
    if (!v || !pairs)
        goto oom;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        unsigned long start;
        if (!tok || sscanf(tok, "%lx", &start) != 1)
            continue;
        if (k == cap) {
            struct nmap *nv = realloc(v, cap * 2 * sizeof *v);
            if (!nv)
                goto oom;
            v = nv;
            cap *= 2;
        }
        struct nmap *m = &v[k++];
        memset(m, 0, sizeof *m);
        m->start = start;
        m->page_kb = 4;
        m->what = "anon";
        m->first = np;
        tok = strtok_r(NULL, " ", &save);
        snprintf(m->policy, sizeof m->policy, "%s", tok ? tok : "?");
        while ((tok = strtok_r(NULL, " ", &save))) {
            int node;
            long val;
            if (sscanf(tok, "N%d=%ld", &node, &val) == 2 && node >= 0 && node < MAXN) {
                if (np == pcap) {
                    struct pair *npv = realloc(pairs, pcap * 2 * sizeof *pairs);
                    if (!npv)
                        goto oom;
                    pairs = npv;
                    pcap *= 2;
                }
                pairs[np++] = (struct pair){node, val};
                m->count++;
                m->present += val;
                if (node > *maxnode)
                    *maxnode = node;
            } else if (sscanf(tok, "kernelpagesize_kB=%ld", &val) == 1) {
                m->page_kb = val;
            } else if (!strncmp(tok, "file=", 5)) {
                m->what = tok + 5;
            } else if (!strcmp(tok, "heap") || !strcmp(tok, "stack") || !strcmp(tok, "huge")) {
                m->what = tok;
            }
        }
    }
    qsort(v, k, sizeof *v, cmp_nmap);
    *out = v;
    *n = k;
    *pairs_out = pairs;
    *npairs = np;
    return 0;
oom:
    free(v);
    free(pairs);
    return -1;
}

static const struct smap *find_smap(const struct smap *v, size_t n, unsigned long start)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].start == start ? &v[lo] : NULL;
}

/* numa_maps escapes ' ', '\t', '\n' and '=' in file names as \ooo: undo it (in place). */
static void unescape_octal(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

static int usage_where(FILE *f)
{
    fprintf(f, "usage: numaplace where PID [--json] [--all]\n"
               "Pages per node of a running process, per mapping (those with pages present;\n"
               "--all: every mapping) and in total; huge pages are counted as such.\n"
               "Reads /proc/PID/numa_maps and /proc/PID/smaps once each. When the mappings\n"
               "change during the scan (the process maps, unmaps, or next-touch splits them) it\n"
               "says so; totals are summed by address range, never counting a range twice.\n"
               "Exit status: 0; 1 no such process (or no permission), a zombie, or the process\n"
               "exited during the scan (partial result, \"partial\": true); 2 bad usage.\n");
    return 0;
}

/* one scan of a process: what was read, and what is being summed */
struct where_scan {
    const char *pid; /* pidbuf: the PID in canonical digits */
    char pidbuf[24];
    int json, all, partial, changed, maxnode;
    char *ntext, *stext;
    struct smap *sm;
    struct nmap *nm;
    struct pair *pairs;
    size_t nsm, nnm, npairs, skipped;
    long total_base[MAXN], total_huge[MAXN], thp_kb;
    unsigned long covered;
    cJSON *root, *jmaps;
};

/* 0, or an exit status; -1: --help printed */
static int where_args(int argc, char **argv, struct where_scan *w)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"all", no_argument, NULL, 'a'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j' || c == 'a')
            *(c == 'j' ? &w->json : &w->all) = 1;
        else if (c == 'h')
            return usage_where(stdout), -1;
        else
            return cli_bad_option("where", c, argv);
    }
    for (int i = optind; i < argc; i++) {
        uint64_t pid;
        if (!w->pid && npl__parse_count(argv[i], 1, INT_MAX, &pid) == 0) {
            snprintf(w->pidbuf, sizeof w->pidbuf, "%" PRIu64, pid);
            w->pid = w->pidbuf;
        } else {
            fprintf(stderr, "numaplace where: bad argument \"%s\"\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!w->pid) {
        fprintf(stderr, "numaplace where: which PID?\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* /proc/PID: its state, then numa_maps and smaps read whole. 0 or EXIT_FAILED (said). */
static int where_read(struct where_scan *w)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s", w->pid);
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char st = dirfd >= 0 ? proc_state(dirfd) : 0;
    if (dirfd < 0 || !st) {
        fprintf(stderr, "numaplace where: process %s: %s\n", w->pid,
                dirfd < 0 && errno != ENOENT ? strerror(errno) : "no such process (gone?)");
        if (dirfd >= 0)
            close(dirfd);
        return EXIT_FAILED;
    }
    if (st == 'Z' || st == 'X') {
        fprintf(stderr, "numaplace where: process %s is a zombie (exited, not reaped)\n", w->pid);
        close(dirfd);
        return EXIT_FAILED;
    }
    size_t nlen, slen;
    if (read_all(dirfd, "numa_maps", &w->ntext, &nlen) < 0) {
        int e = errno;
        fprintf(stderr, "numaplace where: process %s: %s\n", w->pid,
                e == ENOENT || e == ESRCH ? "no such process (gone?)" : strerror(e));
        close(dirfd);
        return EXIT_FAILED;
    }
    const char *stop = getenv("NUMAPLACE_WHERE_TEST_STOP"); /* tests: a change mid-scan */
    if (stop && !strcmp(stop, "1"))
        raise(SIGSTOP); /* the test changes the target, then sends SIGCONT */
    int smaps_ok = read_all(dirfd, "smaps", &w->stext, &slen) == 0;
    char st2 = proc_state(dirfd);
    close(dirfd);
    w->partial = !smaps_ok || !st2 || st2 == 'Z' || st2 == 'X';
    w->maxnode = -1;
    if ((w->stext && parse_smaps(w->stext, &w->sm, &w->nsm) < 0) ||
        parse_numa_maps(w->ntext, &w->nm, &w->nnm, &w->pairs, &w->npairs, &w->maxnode) < 0) {
        fprintf(stderr, "numaplace where: out of memory\n");
        return EXIT_FAILED;
    }
    /* did the mappings change between (or during) the reads? compare the sets of ranges */
    for (size_t i = 1; i < w->nsm; i++)
        if (w->sm[i].start < w->sm[i - 1].end)
            w->changed = 1; /* smaps itself overlaps: split or merged while being read */
    return 0;
}

/* one mapping as JSON: "pages" keyed by node id (kept for existing parsers) and "nodes", the
 * vocabulary of the other subcommands (os_id values) */
static void where_mapping_json(struct where_scan *w, const struct nmap *m, const struct smap *s,
                               const char *what, long thp)
{
    cJSON *o = json_add_obj(w->jmaps, NULL);
    char addr[32];
    snprintf(addr, sizeof addr, "0x%lx", m->start);
    json_add_str(o, "start", addr);
    if (s) {
        snprintf(addr, sizeof addr, "0x%lx", s->end);
        json_add_str(o, "end", addr);
    }
    json_add_str(o, "policy", m->policy);
    json_add_str(o, "what", what);
    json_add_num(o, "page_kb", (double)m->page_kb);
    json_add_num(o, "thp_kb", (double)thp);
    cJSON *pg = json_add_obj(o, "pages"), *nodes = json_add_arr(o, "nodes");
    for (size_t k = m->first; k < m->first + m->count; k++) {
        if (!w->pairs[k].pages)
            continue;
        char key[16];
        snprintf(key, sizeof key, "%d", w->pairs[k].node);
        json_add_num(pg, key, (double)w->pairs[k].pages);
        cJSON *n = json_add_obj(nodes, NULL);
        json_add_num(n, "os_id", w->pairs[k].node);
        json_add_num(n, "pages", (double)w->pairs[k].pages);
    }
}

static void where_mapping(struct where_scan *w, size_t i)
{
    struct nmap *m = &w->nm[i];
    const struct smap *s = find_smap(w->sm, w->nsm, m->start);
    if (!s && !w->partial)
        w->changed = 1;
    unsigned long end = s ? s->end : i + 1 < w->nnm ? w->nm[i + 1].start : m->start + 1;
    if (m->start < w->covered) { /* overlaps a range already counted */
        w->changed = 1;
        w->skipped++;
        return;
    }
    if (end > w->covered)
        w->covered = end;
    const char *what = m->what;
    if (s && s->name[0] == '/')
        what = s->name; /* smaps escapes only '\n' in path names: take them from there */
    else if (what[0] == '/')
        unescape_octal((char *)what); /* points into the numa_maps text */
    if (!m->present && !w->all)
        return;
    long thp = s ? s->thp_kb : 0;
    w->thp_kb += thp;
    for (size_t k = m->first; k < m->first + m->count; k++)
        (m->page_kb > 4 ? w->total_huge : w->total_base)[w->pairs[k].node] += w->pairs[k].pages;
    if (w->json) {
        where_mapping_json(w, m, s, what, thp);
        return;
    }
    printf("0x%-16lx %-10.10s %6ldkB ", m->start, m->policy, m->page_kb);
    for (size_t k = m->first; k < m->first + m->count; k++)
        if (w->pairs[k].pages)
            printf(" N%d=%ld", w->pairs[k].node, w->pairs[k].pages);
    if (thp)
        printf(" (THP %ld kB)", thp);
    printf("  %s\n", what);
}

/* smaps ranges that numa_maps did not list: the mappings changed */
static void where_unlisted(struct where_scan *w)
{
    for (size_t i = 0; i < w->nsm && !w->changed; i++) {
        size_t lo = 0, hi = w->nnm;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (w->nm[mid].start < w->sm[i].start)
                lo = mid + 1;
            else
                hi = mid;
        }
        if ((lo == w->nnm || w->nm[lo].start != w->sm[i].start) &&
            strcmp(w->sm[i].name, "[vsyscall]"))
            w->changed = 1; /* numa_maps never lists the vsyscall page */
    }
}

/* the totals: "total" keyed by node id (kept for existing parsers) and "nodes" (os_id values) */
static int where_totals(struct where_scan *w)
{
    if (!w->json) {
        printf("total base pages:");
        for (int n = 0; n <= w->maxnode; n++)
            printf(" N%d=%ld", n, w->total_base[n]);
        for (int n = 0; n <= w->maxnode; n++)
            if (w->total_huge[n])
                printf(" | hugetlb pages N%d=%ld", n, w->total_huge[n]);
        printf("\n");
        if (w->thp_kb)
            printf("transparent huge pages: %ld kB\n", w->thp_kb);
        return 0;
    }
    cJSON *tot = json_add_obj(w->root, "total"), *nodes = json_add_arr(w->root, "nodes");
    for (int n = 0; n <= w->maxnode; n++) {
        char key[16];
        snprintf(key, sizeof key, "%d", n);
        cJSON *o = json_add_obj(tot, key), *x = json_add_obj(nodes, NULL);
        json_add_num(o, "base_pages", (double)w->total_base[n]);
        json_add_num(o, "huge_pages", (double)w->total_huge[n]);
        json_add_num(x, "os_id", n);
        json_add_num(x, "base_pages", (double)w->total_base[n]);
        json_add_num(x, "huge_pages", (double)w->total_huge[n]);
    }
    json_add_num(w->root, "thp_kb", (double)w->thp_kb);
    json_add_bool(w->root, "partial", w->partial);
    json_add_bool(w->root, "mappings_changed", w->changed);
    if (json_write(stdout, w->root) < 0) {
        fprintf(stderr, "numaplace where: cannot write the JSON output\n");
        return EXIT_FAILED;
    }
    return 0;
}

int cmd_where(int argc, char **argv)
{
    struct where_scan *w = calloc(1, sizeof *w);
    if (!w)
        return cli_fail("out of memory");
    int rc = where_args(argc, argv, w);
    if (rc == 0)
        rc = where_read(w);
    if (rc == 0) {
        if (w->json) {
            w->root = json_object();
            json_add_str(w->root, "schema", "numaplace-where/1");
            json_add_num(w->root, "pid", atof(w->pid));
            w->jmaps = json_add_arr(w->root, "mappings");
        } else {
            printf("%-18s %-10s %8s  %s\n", "address", "policy", "pagesize", "pages per node");
        }
        for (size_t i = 0; i < w->nnm; i++)
            where_mapping(w, i);
        if (!w->partial && !w->changed)
            where_unlisted(w);
        rc = where_totals(w);
        fflush(stdout);
        if (w->changed)
            fprintf(stderr, "numaplace where: process %s: mappings changed during the scan (%zu "
                    "overlapping range%s not counted again): the result is approximate\n",
                    w->pid, w->skipped, w->skipped == 1 ? "" : "s");
        if (w->partial) {
            fprintf(stderr, "numaplace where: process %s exited during the scan: partial "
                    "result\n", w->pid);
            rc = EXIT_FAILED;
        }
    }
    json_free(w->root);
    free(w->ntext);
    free(w->stext);
    free(w->sm);
    free(w->nm);
    free(w->pairs);
    free(w);
    return rc < 0 ? 0 : rc;
}
