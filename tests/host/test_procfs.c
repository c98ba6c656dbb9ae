/* SPDX-License-Identifier: BSD-3-Clause */
/* Host tests of src/procfs.c: the /proc reader under a redirected root (NUMAPLACE_FSROOT), the
 * strict maps parser on hostile lines (paths with spaces, very long lines, a path whose tail looks
 * like a mapping, deleted files, malformed fields), the range check (holes, read-only, pages
 * beyond the end of a file) and queries whose cost follows the mapped pages, not the range. */
#define _GNU_SOURCE
#include "check.h"
#include "sys/sys.h"
#include <errno.h>
#include <fcntl.h>
#include <numaplace.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PS 4096

/* ---- collecting entries ---- */
struct got {
    int n;
    struct {
        uintptr_t start, end;
        int prot, shared, deleted;
        uint64_t inode, offset;
        char path[16384];
    } e[16];
};
static int collect(const struct npl_maps_entry *m, void *arg)
{
    struct got *g = arg;
    if (g->n < 16) {
        g->e[g->n].start = m->start;
        g->e[g->n].end = m->end;
        g->e[g->n].prot = m->prot;
        g->e[g->n].shared = m->shared;
        g->e[g->n].deleted = m->deleted;
        g->e[g->n].inode = m->inode;
        g->e[g->n].offset = m->offset;
        size_t k = m->path_len < 16383 ? m->path_len : 16383;
        memcpy(g->e[g->n].path, m->path, k);
        g->e[g->n].path[k] = 0;
    }
    g->n++;
    return 0;
}

struct pieces {
    int n;
    uintptr_t s[8], e[8];
    char path[8][64];
};
static int piece(uintptr_t s, uintptr_t e, const struct npl_maps_entry *m, void *arg)
{
    struct pieces *p = arg;
    if (p->n < 8) {
        p->s[p->n] = s;
        p->e[p->n] = e;
        snprintf(p->path[p->n], sizeof p->path[0], "%.*s", (int)(m->path_len < 63 ? m->path_len : 63),
                 m->path);
    }
    p->n++;
    return 0;
}

/* a path of `len` characters (directories of 200) ending with `tail`, created under dir */
static char *long_path(const char *dir, size_t len, const char *tail)
{
    char *p = malloc(len + 512);
    size_t n = (size_t)sprintf(p, "%s", dir);
    while (n + 201 + strlen(tail) < len) {
        p[n++] = '/';
        memset(p + n, 'd', 199);
        n += 199;
        p[n] = 0;
        mkdir(p, 0700);
    }
    sprintf(p + n, "/%s", tail);
    return p;
}

static const char HOSTILE_TAIL[] = "x 7f0000000000-7f0000100000 rw-p 00000000 00:00 0";

/* ---- the parser on single lines ---- */
static void test_lines(void)
{
    struct npl_maps_entry e;
    const char *l = "7f12a000-7f12b000 r-xs 0001f000 08:01 1234567   /usr/lib/a b  c.so";
    CHECK(npl__maps_parse_line(l, strlen(l), &e) == 0 && e.start == 0x7f12a000 &&
              e.end == 0x7f12b000 && e.prot == (PROT_READ | PROT_EXEC) && e.shared &&
              e.offset == 0x1f000 && e.dev_major == 8 && e.dev_minor == 1 &&
              e.inode == 1234567 && e.path_len == strlen("/usr/lib/a b  c.so") &&
              memcmp(e.path, "/usr/lib/a b  c.so", e.path_len) == 0 && !e.deleted,
          "a full line, a path with spaces");
    l = "00400000-00401000 rw-p 00000000 00:00 0";
    CHECK(npl__maps_parse_line(l, strlen(l), &e) == 0 && e.path_len == 0 && e.inode == 0 &&
              e.prot == (PROT_READ | PROT_WRITE) && !e.shared,
          "anonymous, no path");
    l = "00400000-00401000 ---p 00000000 00:00 0                          ";
    CHECK(npl__maps_parse_line(l, strlen(l), &e) == 0 && e.path_len == 0 && e.prot == 0,
          "padding without a path");
    l = "7f00-7f01 rw-s 00000000 00:05 77 /memfd:x (deleted)";
    CHECK(npl__maps_parse_line(l, strlen(l), &e) == 0 && e.deleted, "a deleted file");
    l = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]";
    CHECK(npl__maps_parse_line(l, strlen(l), &e) == 0 && e.start == 0xffffffffff600000ull,
          "the top of the address space");
    static const char *bad[] = {
        "",
        "7f00-7f00 rw-p 00000000 00:00 0",            /* empty */
        "7f01-7f00 rw-p 00000000 00:00 0",            /* reversed */
        "7f00 7f01 rw-p 00000000 00:00 0",            /* no dash */
        "7g00-7f01 rw-p 00000000 00:00 0",            /* not hex */
        "7f00-7f01 rwxq 00000000 00:00 0",            /* bad perms */
        "7f00-7f01 rw-p 0000z000 00:00 0",
        "7f00-7f01 rw-p 00000000 0000 0",             /* no colon */
        "7f00-7f01 rw-p 00000000 00:00 12a /x",       /* inode not decimal */
        "7f00-7f01 rw-p 00000000 00:00",              /* no inode */
        "7f00-7f01 rw-p 00000000 00:00 99999999999999999999999 /x", /* inode overflows */
        "10000000000000000-10000000000000001 rw-p 0 00:00 0",        /* 17 hex digits */
        " 7f00-7f01 rw-p 00000000 00:00 0",           /* leading space */
        "7f00-7f01  rw-p 00000000 00:00 0",
        "-7f01 rw-p 00000000 00:00 0",
    };
    int nbad = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        if (npl__maps_parse_line(bad[i], strlen(bad[i]), &e) == 0 || errno != EINVAL) {
            printf("accepted: \"%s\"\n", bad[i]);
            nbad++;
        }
    }
    CHECK(nbad == 0, "%d malformed lines accepted", nbad);
    const char nul[] = "7f00-7f01 rw-p 00000000 00:00 0 /a\0b";
    CHECK(npl__maps_parse_line(nul, sizeof nul - 1, &e) == -1, "a NUL byte in a line: malformed");

    /* a whole buffer: a path whose tail is a maps line, on a very long line */
    size_t big = 20000;
    char *text = malloc(big + 1024);
    int n = sprintf(text, "1000-2000 r--p 00000000 08:01 42 /");
    memset(text + n, 'p', big);
    n += (int)big;
    n += sprintf(text + n, "%s\n3000-4000 rw-p 00000000 00:00 0\n5000-6000 r--s 00000000 08:01 7 "
                           "/tmp/f (deleted)",
                 HOSTILE_TAIL);
    struct got *g = calloc(1, sizeof *g);
    CHECK(npl__maps_parse_buffer(text, (size_t)n, collect, g) == 0 && g->n == 3,
          "a 20 KB line and a line without '\\n': 3 entries (%d)", g->n);
    CHECK(g->e[0].prot == PROT_READ && strlen(g->e[0].path) == 16383 && g->e[1].start == 0x3000 &&
              g->e[2].deleted && g->e[2].shared,
          "the long path is one path; the fake range in it is no entry");
    memset(g, 0, sizeof *g);
    const char over[] = "1000-5000 rw-p 00000000 00:00 0\n2000-3000 rw-p 00000000 00:00 0\n"
                        "3000-6000 r--p 00000000 08:01 9 /f\n";
    CHECK(npl__maps_parse_buffer(over, sizeof over - 1, collect, g) == 0 && g->n == 2 &&
              g->e[1].start == 0x5000 && g->e[1].offset == 0x2000,
          "overlapping lines (a mapping that grew during the read) are cut: %d", g->n);
    const char broken[] = "1000-2000 rw-p 00000000 00:00 0\ngarbage\n";
    CHECK(npl__maps_parse_buffer(broken, sizeof broken - 1, collect, g) == -1 && errno == EINVAL,
          "one malformed line fails the parse");
    free(g);
    free(text);
}

/* ---- a fake root (in a child: the root is read once per process) ---- */
static int fake_root_child(const char *root)
{
    setenv("NUMAPLACE_FSROOT", root, 1);
    int ok = 1;
    if (strcmp(npl__fs_root(), root) != 0)
        return 10;
    struct got *g = calloc(1, sizeof *g);
    if (npl__maps_foreach(0, collect, g) != 0 || g->n != 5)
        return 11;
    ok &= g->e[0].start == 0x10000 && strcmp(g->e[0].path, "/usr/bin/with space") == 0;
    ok &= strlen(g->e[1].path) > 9000 && g->e[1].prot == PROT_READ;
    ok &= g->e[2].deleted && g->e[3].inode == 0 && strcmp(g->e[4].path, "[stack]") == 0;
    if (!ok)
        return 12;
    /* the fake writable range inside the long path is a hole */
    struct pieces p = {0};
    if (npl__maps_ranges(0x7f0000000000, 0x7f0000100000, piece, &p) != 0 || p.n != 0)
        return 13;
    p.n = 0;
    if (npl__maps_ranges(0x10000, 0x50000, piece, &p) != 0 || p.n != 3 || p.s[0] != 0x10000 ||
        p.e[2] != 0x50000)
        return 14;
    errno = 0;
    if (npl__range_check((void *)0x7f0000000000, 4096, 1) != -1 || errno != EFAULT)
        return 15;
    int fd = npl__fs_open_fd("/proc/self/maps", O_RDONLY);
    char c;
    if (fd < 0 || read(fd, &c, 1) != 1 || c != '1')
        return 16;
    close(fd);
    /* the queries follow the fake maps: a real array the fake maps do not list is all absent */
    char *a = mmap(NULL, 4 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(a, 1, 4 * PS);
    size_t counts[64], absent = 0;
    if (npl_histogram(a, 4 * PS, counts, &absent) != 0 || absent != 4)
        return 17;
    free(g);
    return 0;
}

static void test_fake_root(void)
{
    char root[] = "/tmp/npl_fsroot_XXXXXX";
    if (!mkdtemp(root)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char d[256];
    snprintf(d, sizeof d, "%s/proc", root);
    mkdir(d, 0700);
    snprintf(d, sizeof d, "%s/proc/self", root); /* a real directory, not a link */
    mkdir(d, 0700);
    snprintf(d, sizeof d, "%s/proc/self/maps", root);
    FILE *f = fopen(d, "w");
    fprintf(f, "10000-20000 r-xp 00000000 08:01 11 /usr/bin/with space\n");
    fprintf(f, "20000-30000 r--p 00000000 08:01 12 /");
    for (int i = 0; i < 9000; i++)
        fputc('q', f);
    fprintf(f, "%s\n", HOSTILE_TAIL);
    fprintf(f, "40000-50000 rw-s 00000000 00:05 13 /dev/shm/x (deleted)\n");
    fprintf(f, "60000-70000 rw-p 00000000 00:00 0 \n");
    fprintf(f, "7ffff000-80000000 rw-p 00000000 00:00 0                          [stack]\n");
    fclose(f);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fake_root_child(root));
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "NUMAPLACE_FSROOT: fake maps read, hostile lines parsed, queries follow them (exit %d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    /* a malformed fake maps: every reader fails (EINVAL), none guesses */
    f = fopen(d, "w");
    fprintf(f, "10000-20000 r-xp 00000000 08:01 11 /x\nnot a maps line\n");
    fclose(f);
    pid = fork();
    if (pid == 0) {
        setenv("NUMAPLACE_FSROOT", root, 1);
        errno = 0;
        _exit(npl__maps_foreach(0, NULL, NULL) == -1 && errno == EINVAL &&
                      npl__range_check((void *)0x10000, 4096, 0) == -1
                  ? 0
                  : 1);
    }
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a malformed maps file: EINVAL, no guess");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0, "clean up");
}

/* ---- the range check on this process's real mappings ---- */
static void test_range_check(void)
{
    char *a = mmap(NULL, 8 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(a + 3 * PS, PS);
    mprotect(a + 6 * PS, 2 * PS, PROT_READ);
    CHECK(npl__range_check(a, 3 * PS, 1) == 0, "a writable range: 0");
    CHECK(npl__range_check(a, 5 * PS, 1) == -1 && errno == EFAULT, "a hole: EFAULT (%s)",
          npl_last_error());
    CHECK(npl__range_check(a + 4 * PS, 4 * PS, 1) == -1 && errno == EACCES,
          "read-only part: EACCES (%s)", npl_last_error());
    CHECK(npl__range_check(a + 4 * PS, 4 * PS, 0) == 0, "read-only part, need_write 0: 0");
    CHECK(npl__range_check(a, SIZE_MAX, 0) == -1 && errno == EOVERFLOW, "wrapping: EOVERFLOW");
    CHECK(npl__range_check(NULL, PS, 0) == -1 && errno == EINVAL, "NULL: EINVAL");
    struct pieces p = {0};
    CHECK(npl__maps_ranges((uintptr_t)a, (uintptr_t)a + 8 * PS, piece, &p) == 0 && p.n == 3 &&
              p.s[0] == (uintptr_t)a && p.e[0] == (uintptr_t)a + 3 * PS &&
              p.s[1] == (uintptr_t)a + 4 * PS && p.e[2] == (uintptr_t)a + 8 * PS,
          "mapped pieces of a range with a hole: %d", p.n);
    munmap(a, 8 * PS);

    /* a writable MAP_SHARED mapping of 64 pages over a 1-page file (was SIGBUS in placement) */
    char path[] = "/tmp/npl_procfs_XXXXXX";
    int fd = mkstemp(path);
    CHECK(ftruncate(fd, PS) == 0, "a 1-page file");
    char *m = mmap(NULL, 64 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(npl__range_check(m, PS, 1) == 0, "its first page: 0 (%s)", npl_last_error());
    CHECK(npl__range_check(m, 64 * PS, 1) == -1 && errno == EFAULT &&
              strstr(npl_last_error(), "beyond the end of file"),
          "64 pages over a 1-page shared file: EFAULT (%s)", npl_last_error());
    CHECK(npl__range_check(m + 10 * PS, PS, 0) == -1 && errno == EFAULT,
          "a page past the end alone: EFAULT");
    char *pm = mmap(NULL, 8 * PS, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(npl__range_check(pm, 8 * PS, 0) == -1 && errno == EFAULT,
          "private file mapping past the end: EFAULT (%s)", npl_last_error());
    CHECK(ftruncate(fd, 64 * PS) == 0 && npl__range_check(m, 64 * PS, 1) == 0,
          "the file grown to 64 pages: 0");
    munmap(pm, 8 * PS);
    munmap(m, 64 * PS);
    close(fd);
    unlink(path);

    /* a real file whose 2,300-character path ends like a writable maps entry, mapped read-only */
    char dir[] = "/tmp/npl_longpath_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char *lp = long_path(dir, 2300, HOSTILE_TAIL);
    fd = open(lp, O_RDWR | O_CREAT, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 4 * PS) == 0, "create %zu-char path", strlen(lp));
    char *r = mmap(NULL, 4 * PS, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(npl__range_check(r, 4 * PS, 0) == 0 && npl__range_check(r, 4 * PS, 1) == -1 &&
              errno == EACCES,
          "mapped read-only through a long hostile path: readable, not writable");
    CHECK(npl__range_check((void *)0x7f0000000000, PS, 1) == -1 && errno == EFAULT,
          "the range named in the path is not mapped");
    munmap(r, 4 * PS);
    close(fd);
    free(lp);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "clean up");
}

/* ---- queries: costs follow the mapped pages ---- */

/* The mappings of /proc/self/maps that overlap [lo, hi), and their pages inside it */
static int mapped_pieces(uintptr_t lo, uintptr_t hi, size_t *pages)
{
    FILE *f = fopen("/proc/self/maps", "r");
    static char line[8192];
    int n = 0, at_start = 1;
    *pages = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        int first = at_start; /* a long path is read in pieces: only a line's start is parsed */
        at_start = strchr(line, '\n') != NULL;
        if (!first || sscanf(line, "%lx-%lx", &s, &e) != 2 || s >= hi || e <= lo)
            continue;
        n++;
        *pages += ((e < hi ? e : hi) - (s > lo ? s : lo)) / PS;
    }
    if (f)
        fclose(f);
    return n;
}

static void test_queries(void)
{
    npl_policy *p;
    npl_policy_parse(&p, "first_touch");
    char *a = npl_alloc(2 * PS, p);
    memset(a, 1, 2 * PS);
    size_t counts[64], absent = 0;
    size_t tib = (size_t)1 << 40, mpages = 0;
    struct npl_stats s0, s1;
    npl_get_support(); /* its one-time probe (a move_pages call) is not the query's */
    npl_get_stats(&s0);
    int rc = npl_histogram(a, tib, counts, &absent);
    npl_get_stats(&s1);
    int pieces = mapped_pieces((uintptr_t)a, (uintptr_t)a + tib, &mpages);
    size_t present = 0;
    for (int i = 0; i < npl_topo_node_count(npl_topo_self(), 0); i++)
        present += counts[i];
    CHECK(rc == 0 && present >= 2 && present + absent == tib / PS,
          "histogram of 1 TiB from a 2-page array: %zu present, %zu absent", present, absent);
    /* the cost, counted: one move_pages call per mapped piece of the range (and per 65,536 of
     * its pages, query.c's batch), +1 for a mapping made meanwhile; a walk of the whole range
     * would take 2^28 pages / 65,536 = 4,096 calls */
    uint64_t calls = s1.move_pages - s0.move_pages, most = (uint64_t)pieces + mpages / 65536 + 1;
    printf("  histogram of 1 TiB: %llu move_pages calls, %d mapped pieces of %zu pages\n",
           (unsigned long long)calls, pieces, mpages);
    CHECK(calls >= 1 && calls <= most,
          "histogram of 1 TiB: %llu move_pages calls for %d mapped pieces of %zu pages (at most "
          "%llu)", (unsigned long long)calls, pieces, mpages, (unsigned long long)most);
    int nodes[16];
    char *h = mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(h, 1, 16 * PS);
    munmap(h + 4 * PS, 8 * PS);
    rc = npl_query_pages(h, 16 * PS, nodes, 16);
    CHECK(rc == 16 && nodes[0] >= 0 && nodes[3] >= 0 && nodes[4] == -EFAULT &&
              nodes[11] == -EFAULT && nodes[12] >= 0 && nodes[15] >= 0,
          "query over a hole: -EFAULT there, nodes elsewhere (rc %d: %d %d %d)", rc, nodes[0],
          nodes[4], nodes[12]);
    munmap(h, 4 * PS);
    munmap(h + 12 * PS, 4 * PS);
    errno = 0;
    CHECK(npl_query_pages(a, ((size_t)INT32_MAX + 1) * PS, nodes, SIZE_MAX) == -1 &&
              errno == EOVERFLOW,
          "query of more pages than an int counts: EOVERFLOW (%d), not capped", errno);
    CHECK(npl_histogram(a, SIZE_MAX / 2, counts, &absent) == -1 && errno == EFAULT,
          "histogram beyond the user address space: EFAULT");
    npl_free(a);
    npl_policy_free(p);
}

int main(void)
{
    test_fake_root(); /* first: its children must not inherit a root already read */
    test_lines();
    test_range_check();
    test_queries();
    return check_summary("test_procfs");
}
